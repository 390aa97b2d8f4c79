/*
 * amq/cuckoo.h - the cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher,
 * "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014).
 *
 * A cuckoo filter stores an f-bit fingerprint of each key in one of two
 * buckets of b slots. It answers "maybe present" / "certainly absent" like a
 * Bloom filter, and it can also delete a key and count a key's copies. Below
 * about 0.4% FPR it is smaller than a Bloom filter of the same FPR (see
 * docs/CUCKOO.md).
 *
 *   FPR     about 2·b·load / (2^f - 1): a query compares the key's
 *           fingerprint with up to 2b stored ones. f = 12, b = 4 at 95% load:
 *           0.19%; each extra fingerprint bit halves it.
 *   size    f / load bits per key. A filter created for n keys holds them at
 *           a load of about 94% (b = 4): 12.7 bits/key with f = 12 at a
 *           million keys (small filters are sized more loosely).
 *           Semi-sorted buckets (b = 4, f = 5..16) store each slot in one bit
 *           less, (f - 1) / load bits per key, at the same FPR, for slower
 *           operations.
 *   full    inserting relocates fingerprints along a random walk of at most
 *           max_kicks steps. When the walk ends without a free slot, the
 *           fingerprint left over is kept in a one-entry victim stash: the
 *           insertion succeeds, no key is lost, and from then on the filter
 *           is full - every add answers AMQ_EFULL and changes nothing - until
 *           a removal makes room. With growth set, a full filter instead
 *           chains a new, larger table and goes on; queries ask every table.
 *
 * No false negatives: a key added k times and removed at most k times
 * answers "maybe", at every parameter; only removing a key that was never
 * added (or more times than it was added) can make another key answer "no".
 *
 * Duplicates: each add stores one more copy of the key. A key's two buckets
 * store at most b / 2 copies of its fingerprint; copies past those are counted
 * exactly beside the table (its overflow: a few bytes per such key,
 * whatever the number of copies), so one key added any number of times
 * never fills the filter nor blocks other keys. amq_cuckoo_add_unique adds
 * only keys that are not maybe-present (and, like any Bloom filter, skips a
 * new key that is a false positive: such a key was not added, and removing
 * the key it collides with makes it answer "no").
 *
 * Thread-safety: a filter is not synchronized. Any number of threads may
 * make the calls that take a const filter on one filter at once (contains,
 * count, the batch and hash forms, the statistics, saving it): none of them
 * changes anything, in the filter or elsewhere. The calls that take a
 * non-const filter (add, add_unique, remove, clear, their batch forms,
 * merging, wrap) need exclusive access: no other call on that filter may run
 * during them. A semi-sorted filter's decoding table is one per process,
 * filled once when the first such filter is created or loaded
 * (pthread_once): creating and loading are safe from any thread. There is no
 * concurrent add: a cuckoo insert moves fingerprints between buckets, which
 * atomics on one word cannot make safe.
 */
#ifndef AMQ_CUCKOO_H
#define AMQ_CUCKOO_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * amq_info details of a cuckoo filter (amq_info_get), in this order:
 *   fingerprint_bits  number  f, the bits of a fingerprint
 *   bucket_size       number  b, the slots of a bucket
 *   layout            word    "plain" or "semi-sorted"
 *   buckets           number  the buckets of the first table
 *   tables            number  the tables chained so far (1 without growth)
 *   load              number  the slots used over the slots there are
 *   max_kicks         number  the relocations an insert may make
 *   growth            number  each chained table's size over the one
 *                             before (0: a fixed size)
 *   stash             word    "occupied" (the filter is full: the next
 *                             add chains a table or is refused) or "empty"
 *   counted_copies    number  the copies of keys held beyond a bucket
 *                             pair's slots, counted on the side
 */
/** A cuckoo filter; opaque. */
typedef struct amq_cuckoo amq_cuckoo;

/** Fingerprint widths accepted (bits). */
#define AMQ_CUCKOO_MIN_FINGERPRINT_BITS 4
#define AMQ_CUCKOO_MAX_FINGERPRINT_BITS 32
/** Most buckets in one table (the bucket index is taken from 32 hash bits). */
#define AMQ_CUCKOO_MAX_BUCKETS ((uint64_t)1 << 32)
/** Most tables a growing filter chains. */
#define AMQ_CUCKOO_MAX_TABLES 32
/** Relocations an insertion tries before it gives up, unless told. */
#define AMQ_CUCKOO_DEFAULT_MAX_KICKS 500
/** The most relocations an insertion may be allowed. */
#define AMQ_CUCKOO_MAX_KICKS 1000000
/** Largest growth factor. */
#define AMQ_CUCKOO_MAX_GROWTH 16
/** Fingerprint widths a semi-sorted filter accepts (bits). */
#define AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS 5
#define AMQ_CUCKOO_SEMI_SORT_MAX_FINGERPRINT_BITS 16

/** How to make a cuckoo filter. Fields left 0 take the default named. */
typedef struct amq_cuckoo_params {
    size_t struct_size;        /**< the size of the layout the caller was built
                                    against: set by amq_cuckoo_params_init; 0 = the first
                                    layout (docs/CONVENTIONS.md, "Growth") */
    uint64_t capacity;         /**< n (required): keys the filter always accepts
                                    without growing (a growing filter's first
                                    table has no floor against pile-ups, so
                                    small ones chain a table early, rarely) */
    double fpr;                /**< p: picks f when fingerprint_bits is 0: the
                                    smallest f with 2b / (2^f - 1) <= p, the FPR
                                    of a completely full table; 0 = 0.01. With
                                    fingerprint_bits, f must meet p. */
    uint32_t fingerprint_bits; /**< f: 4..32 (0: from fpr) */
    uint32_t bucket_size;      /**< b: 2, 4 or 8 slots per bucket (0 = 4) */
    uint32_t max_kicks;        /**< relocations per insertion (0 = 500; at most
                                    AMQ_CUCKOO_MAX_KICKS); below 500 the table
                                    is sized for the lower load short walks
                                    reach */
    uint32_t growth;           /**< 0: a full filter answers AMQ_EFULL; 1, 2, 4,
                                    8 or 16: it chains a new table growth times
                                    as many buckets as the newest one */
    bool semi_sort;            /**< semi-sorted buckets: each bucket's four
                                    fingerprints kept in order of their top 4
                                    bits, which are coded together in 12 bits
                                    instead of 16, so a bucket takes 4f - 4
                                    bits. Needs b = 4 (0 means 4) and f in
                                    5..16; the FPR is that of f bits. */
    amq_hasher hasher;         /**< key hash; all-zero = XXH3 with seed 0 */
} amq_cuckoo_params;

/**
 * amq_cuckoo_params_init for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): the defaults in as much of it as
 * that layout holds, zeros beyond, and struct_size set.
 * @param params the struct to fill, struct_size bytes; not NULL.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_cuckoo_params_init_sized(amq_cuckoo_params *params, size_t struct_size);

/**
 * Fill params with every default: all fields 0 (each field's comment says
 * what 0 means), the hasher XXH3 with seed 0. A zeroed struct means the same; this call
 * keeps meaning it when fields are added.
 * @param params the struct to fill; not NULL.
 * It sets struct_size to the caller's sizeof, so the library reads the
 *   layout the caller was built against.
 * Allocates: never. Thread safety: safe.
 */
static inline void amq_cuckoo_params_init(amq_cuckoo_params *params)
{
    amq_cuckoo_params_init_sized(params, sizeof *params);
}

/**
 * Create an empty cuckoo filter.
 *
 * The table gets the fewest buckets at which n keys fill about 95% of the
 * slots (b = 4; 85% for b = 2, 98% for b = 8), plus a margin of
 * 3 sqrt(n / b) buckets: below the load at which insertions start to fail
 * (about 97% for b = 4), so n keys always fit. Small tables get more room
 * (see src/cuckoo/cuckoo.c). The bucket count is not rounded to a power of two.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (capacity 0; fpr outside (0, 1); a bucket size
 *   other than 2, 4, 8; fingerprint_bits outside 4..32, or too few for a
 *   given fpr; semi_sort with a bucket size other than 4 or f outside
 *   5..16; max_kicks above AMQ_CUCKOO_MAX_KICKS; growth not 0 or a power
 *   of two up to 16; an invalid hasher); AMQ_ERANGE (more than AMQ_CUCKOO_MAX_BUCKETS buckets,
 *   or an fpr no 32-bit fingerprint reaches); AMQ_ENOMEM.
 * Allocates: the table, zeroed.
 */
AMQ_API int amq_cuckoo_new(amq_cuckoo **out, const amq_cuckoo_params *params, amq_diag *diag);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_cuckoo_free(amq_cuckoo *filter);

/**
 * Wrap a filter in a generic handle, to save it (amq_save,
 * amq_save_to_memory), merge it or pass it wherever an amq_filter is
 * taken. The handle takes the filter over: amq_free frees both, and the
 * filter must not be freed on its own; the typed calls still work on it
 * while the handle lives. Nothing is copied.
 * @param out receives the handle; NULL on failure; not NULL.
 * @param filter the filter; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (a NULL argument); AMQ_ENOMEM (the filter
 *   is then still the caller's).
 * Allocates: the handle. Thread safety: needs exclusive access to filter.
 */
AMQ_API int amq_cuckoo_wrap(amq_filter **out, amq_cuckoo *filter, amq_diag *diag);

/**
 * The typed filter inside a generic handle (one made by amq_new,
 * amq_build, amq_load, amq_load_from_memory or amq_cuckoo_wrap), for the
 * typed calls' speed on a filter that was loaded. Nothing is copied.
 * @param f a handle; may be NULL.
 * @return the filter, owned by f and valid until amq_free(f); NULL when f
 *   is NULL or not of this family. A filter of a mapped file or a
 *   borrowed buffer (AMQ_LOAD_MMAP, AMQ_LOAD_BORROW) reads that memory.
 */
AMQ_API amq_cuckoo *amq_cuckoo_unwrap(amq_filter *f);

/** Empty the filter: drop every chained table but the first, clear it and
 *  its stash. */
AMQ_API void amq_cuckoo_clear(amq_cuckoo *filter);

/**
 * Add a key (one more copy of its fingerprint).
 * @return AMQ_OK: stored (in a bucket, as the victim of a relocation walk
 *   that ran out of kicks in the stash, or counted when its two buckets
 *   store b / 2 copies already); AMQ_EFULL: the filter is full, nothing changed:
 *   its newest table's stash is occupied and it does not grow (growth 0),
 *   or it has AMQ_CUCKOO_MAX_TABLES tables, or its next table would have
 *   more than AMQ_CUCKOO_MAX_BUCKETS buckets (amq_cuckoo_tables and
 *   amq_cuckoo_table_buckets tell which); AMQ_ENOMEM: a new table or the
 *   overflow's map could not be allocated, nothing changed.
 * Allocates: a new chained table, when growing; the overflow's map, for a
 *   key whose buckets store b / 2 copies already.
 * Complexity: O(1) expected; at most max_kicks relocations.
 */
AMQ_API int amq_cuckoo_add(amq_cuckoo *filter, const void *key, size_t len);

/** As amq_cuckoo_add, by the key's 64-bit hash under the filter's hasher
 *  (amq_hash64). The hash is used as given, never mixed again (every _hash
 *  call of this filter: the high 32 bits pick the bucket, the low 32 the
 *  fingerprint), so it must be a full 64-bit hash: raw integers such as 1,
 *  2, 3 all get bucket 0 and one fingerprint, so the filter takes 2b of
 *  them (and one in its stash), then answers AMQ_EFULL, and says "maybe"
 *  for every small integer. */
AMQ_API int amq_cuckoo_add_hash(amq_cuckoo *filter, uint64_t hash);

/**
 * Add a key unless it may already be present.
 * @return 1: added; 0: maybe present already, nothing changed; AMQ_EFULL or
 *   AMQ_ENOMEM as amq_cuckoo_add.
 */
AMQ_API int amq_cuckoo_add_unique(amq_cuckoo *filter, const void *key, size_t len);

/** As amq_cuckoo_add_unique, by the key's 64-bit hash. */
AMQ_API int amq_cuckoo_add_unique_hash(amq_cuckoo *filter, uint64_t hash);

/**
 * Add keys in order, as amq_cuckoo_add of each in turn, faster for many
 * keys on a large table (they are hashed 32 at a time and their first
 * buckets prefetched). The contract is amq_add_many's: it stops at the
 * first key whose add fails (AMQ_EFULL: that key changed nothing), and
 * the keys before it are added.
 * @param results NULL, or count ints: results[i] becomes amq_cuckoo_add's
 *   answer for keys[i], for every key handled (the failed one included).
 * @param handled NULL, or receives how many keys were added: count on
 *   AMQ_OK; on an error, the index of the key that failed.
 * @param filter the filter; not NULL.
 * @param keys count key pointers, each of which may be NULL when its length
 *   is 0; not NULL unless count is 0 (nor is lens).
 * @param lens count key lengths.
 * @return AMQ_OK; the first failing key's error; AMQ_EINVAL (a NULL
 *   argument or a NULL key of non-zero length: nothing added).
 * Allocates: only a new chained table, when growing.
 * Thread safety: needs exclusive access to filter.
 */
AMQ_API int amq_cuckoo_add_many(int *results, size_t *handled, amq_cuckoo *filter,
                                const void *const *keys, const size_t *lens, size_t count);

/**
 * As amq_cuckoo_add_many with amq_cuckoo_add_unique: results[i] is 1 added,
 * 0 maybe present already (a key repeated in the batch is added once), or
 * the error that stopped it.
 */
AMQ_API int amq_cuckoo_add_unique_many(int *results, size_t *handled, amq_cuckoo *filter,
                                       const void *const *keys, const size_t *lens, size_t count);

/**
 * Is the key maybe present? false: certainly never added (or removed as often
 * as added); true: added, or a false positive.
 * Allocates: never. Complexity: one hash and two buckets per table.
 */
AMQ_API bool amq_cuckoo_contains(const amq_cuckoo *filter, const void *key, size_t len);

/** As amq_cuckoo_contains, by the key's 64-bit hash. */
AMQ_API bool amq_cuckoo_contains_hash(const amq_cuckoo *filter, uint64_t hash);

/**
 * Query count keys; results[i] is 1 when keys[i] (lens[i] bytes) is maybe
 * present, else 0. Same answers as amq_cuckoo_contains, faster for many keys:
 * the keys are hashed 32 at a time and, in a table larger than 1 MiB, their
 * buckets prefetched before they are read, so that the cache misses
 * overlap.
 * @param results receives count bytes.
 * @param filter the filter; not NULL.
 * @param keys count key pointers (each may be NULL when its length is 0);
 *   not NULL unless count is 0 (nor is lens).
 * @param lens count key lengths.
 * @return AMQ_OK; AMQ_EINVAL (a NULL argument with count > 0).
 * Allocates: never; uses about 1 KiB of stack.
 * Thread safety: safe with other readers.
 */
AMQ_API int amq_cuckoo_contains_many(uint8_t *results, const amq_cuckoo *filter,
                                     const void *const *keys, const size_t *lens, size_t count);

/** As amq_cuckoo_contains_many, by the keys' 64-bit hashes under the
 *  filter's hasher (amq_hash64): hashes[i] for key i. Returns AMQ_OK, or
 *  AMQ_EINVAL for a NULL argument with count > 0. */
AMQ_API int amq_cuckoo_contains_many_hash(uint8_t *results, const amq_cuckoo *filter,
                                          const uint64_t *hashes, size_t count);

/**
 * Remove one copy of the key's fingerprint from either of its buckets or the
 * stash.
 *
 * A key added k times and removed at most k times still answers "maybe";
 * removing a key that was never added (or more times than it was added)
 * is the only way to make another key answer "no". Such a key, when its
 * fingerprint matches one stored in its buckets (a false positive), takes
 * that copy - another key's - away. This is the caller's risk;
 * amq_cuckoo_contains first does not protect against it. A counted copy
 * (see "Duplicates" above) is taken before a stored one.
 *
 * When the stash is occupied, the freed slot lets its fingerprint back into
 * the table, and the filter accepts keys again.
 * @return AMQ_OK; AMQ_ENOTFOUND (no matching fingerprint: the key is
 *   certainly absent, nothing changed).
 * Allocates: never. Complexity: two buckets per table, plus at most
 *   max_kicks relocations to empty the stash.
 * Thread safety: needs exclusive access to filter.
 */
AMQ_API int amq_cuckoo_remove(amq_cuckoo *filter, const void *key, size_t len);

/** As amq_cuckoo_remove, by the key's 64-bit hash. */
AMQ_API int amq_cuckoo_remove_hash(amq_cuckoo *filter, uint64_t hash);

/**
 * Copies of the key's fingerprint where the key could be (its two buckets,
 * the stash and the counted copies of that pair, in every table): at least
 * the number of times the key was added and not removed, plus any other
 * keys' matching fingerprints.
 */
AMQ_API uint64_t amq_cuckoo_count(const amq_cuckoo *filter, const void *key, size_t len);

/** As amq_cuckoo_count, by the key's 64-bit hash. */
AMQ_API uint64_t amq_cuckoo_count_hash(const amq_cuckoo *filter, uint64_t hash);

/** True when the newest table's stash is occupied: the filter is full
 *  unless it may grow. */
AMQ_API bool amq_cuckoo_full(const amq_cuckoo *filter);

/** Why an add finds a cuckoo filter full: amq_cuckoo_why_full's answer,
 *  with AMQ_CUCKOO_FULL_SHORT_FINGERPRINTS or'ed in when it applies. */
typedef enum amq_cuckoo_full_reason {
    AMQ_CUCKOO_NOT_FULL = 0,            /**< an add stores the key (after chaining
                                             a table, in a filter that grows) */
    AMQ_CUCKOO_FULL_NO_FREE_SLOT = 1,   /**< growth 0: a walk of max_kicks
                                             relocations found no free slot, and
                                             its homeless fingerprint fills the
                                             stash */
    AMQ_CUCKOO_FULL_MOST_TABLES = 2,    /**< the newest table is full and the
                                             filter chains AMQ_CUCKOO_MAX_TABLES,
                                             the most it may */
    AMQ_CUCKOO_FULL_TABLE_TOO_LARGE = 3 /**< the newest table is full and the next
                                             would have more than
                                             AMQ_CUCKOO_MAX_BUCKETS buckets */
} amq_cuckoo_full_reason;

/** Or'ed into a reason when fingerprints are shorter than 8 bits: a key's
 *  alternate bucket, taken from its fingerprint, has few choices, so
 *  tables fill below the load they were sized for. */
#define AMQ_CUCKOO_FULL_SHORT_FINGERPRINTS 0x100

/**
 * Say why an add finds the filter full (the add is refused as full), for a
 * message that names the cause and the remedy: a fixed-size filter's walk
 * found no free slot (build it larger, or growing), a growing filter has
 * the most tables (larger, or a larger growth) or its next table would be
 * too large (a smaller growth).
 * @param filter the filter; not NULL.
 * @return one amq_cuckoo_full_reason, AMQ_CUCKOO_NOT_FULL when an add would
 *   store its key; a full one with AMQ_CUCKOO_FULL_SHORT_FINGERPRINTS
 *   or'ed in when fingerprints are under 8 bits (take the reason with
 *   "& 0xff").
 * Allocates: never. Thread safety: as the other const calls (any number
 *   of threads at once).
 */
AMQ_API int amq_cuckoo_why_full(const amq_cuckoo *filter);
/** The hasher keys are hashed with. */
AMQ_API const amq_hasher *amq_cuckoo_hasher(const amq_cuckoo *filter);

/* ------------------------------------------------------------------------ */
/* Experimental tier (docs/CONVENTIONS.md, "Tiers"): declared only when    */
/* AMQ_EXPERIMENTAL is defined before the include, exported, and free to   */
/* change or go in any release.                                            */
/* ------------------------------------------------------------------------ */
#ifdef AMQ_EXPERIMENTAL

/* The figures amq_info reports, one call each. */

/** Copies held (keys added and not removed, each copy once), over all
 *  tables: the stored fingerprints and the counted copies. */
AMQ_API uint64_t amq_cuckoo_keys(const amq_cuckoo *filter);
/** Copies counted beside the tables rather than stored in a slot: those
 *  of keys whose two buckets store b / 2 copies already (part of
 *  amq_cuckoo_keys). */
AMQ_API uint64_t amq_cuckoo_counted_copies(const amq_cuckoo *filter);
/** The capacity asked for when the filter was made. */
AMQ_API uint64_t amq_cuckoo_capacity(const amq_cuckoo *filter);
/** Slots over all tables (buckets times bucket size). */
AMQ_API uint64_t amq_cuckoo_slots(const amq_cuckoo *filter);
/** Fraction of the slots in use: stored fingerprints / slots (counted
 *  copies take no slot). */
AMQ_API double amq_cuckoo_load_factor(const amq_cuckoo *filter);
/** Bytes of the tables' packed fingerprints (buckets of b·f bits, or
 *  4f - 4 when semi-sorted), plus the 16-byte entries of their counted
 *  copies, one per key whose two buckets store b / 2 copies (at most one
 *  per b / 2 slots; none while no key reaches that). The entries' map
 *  allocates up to four times their bytes. */
AMQ_API uint64_t amq_cuckoo_memory_bytes(const amq_cuckoo *filter);
/** f, the bits of a fingerprint, as made. */
AMQ_API uint32_t amq_cuckoo_fingerprint_bits(const amq_cuckoo *filter);
/** b, the slots of a bucket, as made. */
AMQ_API uint32_t amq_cuckoo_bucket_size(const amq_cuckoo *filter);
/** The relocations an insertion may make before the table counts as full. */
AMQ_API uint32_t amq_cuckoo_max_kicks(const amq_cuckoo *filter);
/** How many times the buckets of the newest table the next one gets (0:
 *  the filter does not grow). */
AMQ_API uint32_t amq_cuckoo_growth(const amq_cuckoo *filter);
/** True when the buckets are semi-sorted (amq_cuckoo_params.semi_sort). */
AMQ_API bool amq_cuckoo_semi_sorted(const amq_cuckoo *filter);
/** Tables chained so far (1 for a filter that never grew). */
AMQ_API size_t amq_cuckoo_tables(const amq_cuckoo *filter);
/** Buckets of table i (0 = the first; i < amq_cuckoo_tables). */
AMQ_API uint64_t amq_cuckoo_table_buckets(const amq_cuckoo *filter, size_t i);
/**
 * The FPR to expect at the current loads: for each table
 * 1 - (1 - 1/(2^f - 1))^(2·b·load), combined over the tables as independent
 * chances.
 */
AMQ_API double amq_cuckoo_expected_fpr(const amq_cuckoo *filter);

#endif /* AMQ_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif /* AMQ_CUCKOO_H */
