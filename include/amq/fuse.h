/*
 * amq/fuse.h - binary fuse filters (T. M. Graf, D. Lemire, "Binary Fuse
 * Filters: Fast and Smaller Than Xor Filters", ACM Journal of Experimental
 * Algorithmics 27, 2022).
 *
 * A binary fuse filter holds a fixed set of keys: it is built once from all
 * of them and then only answers queries - no key can be added or removed
 * afterwards. In exchange it is the smallest and fastest filter amq has: an
 * f-bit fingerprint per array slot, about 1.13 slots per key (3-wise; 1.08
 * with arity 4), and a query reads three (four) bytes or 16-bit words and
 * compares their xor with the key's fingerprint.
 *
 *   FPR     2^-f, whatever the number of keys: 2^-8 (0.39%) with 8-bit
 *           fingerprints, 2^-16 (0.0015%) with 16-bit ones. An absent key's
 *           xor of slots is a random f-bit value; it matches its fingerprint
 *           with chance 2^-f.
 *   size    f x array length bits: about 9.0 bits/key (f = 8, 3-wise) or
 *           8.6 (4-wise) at a million keys and above; small sets take more
 *           per key (docs/FUSE.md has the table).
 *   build   from the keys' 64-bit hashes; a few tens of nanoseconds and
 *           about 28 temporary bytes per key (src/fuse/fuse_build.c). Duplicate
 *           keys are allowed and stored once.
 *
 * Choose it for a set that is known in full before the first query and
 * changes rarely (rebuild it then): the filter of a sorted run, a blocklist,
 * a dictionary shipped with a program. A saved filter can be queried straight
 * from the file with amq_load(..., AMQ_LOAD_MMAP, ...).
 *
 * Thread-safety: a built filter is never modified (there is no add, remove
 * or merge, and no query changes anything), so any number of threads may
 * make any call on it at once but amq_fuse_free and amq_fuse_wrap, which
 * need every other call on it to have returned.
 */
#ifndef AMQ_FUSE_H
#define AMQ_FUSE_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * amq_info details of a fuse8 or fuse16 filter (amq_info_get), in order:
 *   fingerprint_bits  number  f: 8 or 16
 *   arity             number  slots per key: 3 or 4
 *   segment_length    number  slots per segment
 *   segment_count     number  segments a key's first slot may fall in
 *   array_length      number  the slots of the array
 *   attempts          number  the constructions tried (1 unless a peeling
 *                             failed)
 *   seed              word    the seed of the successful attempt, 16 hex
 *                             digits
 */
/** A binary fuse filter; opaque. */
typedef struct amq_fuse amq_fuse;

/** Construction attempts (peelings with a new seed) before a build gives up. */
#define AMQ_FUSE_MAX_ATTEMPTS 100
/** The longest segment, in slots. */
#define AMQ_FUSE_MAX_SEGMENT_LENGTH ((uint64_t)1 << 18)

/** How to build a binary fuse filter. Fields left 0 take the default named. */
typedef struct amq_fuse_params {
    size_t struct_size;        /**< the size of the layout the caller was built
                                    against: set by amq_fuse_params_init; 0 = the first
                                    layout (docs/CONVENTIONS.md, "Growth") */
    uint32_t fingerprint_bits; /**< f: 8 or 16 (0 = 8); the FPR is 2^-f */
    uint32_t arity;            /**< slots per key: 3 or 4 (0 = 3). 4 is about 4%
                                    smaller and a little slower to build and query */
    amq_hasher hasher;         /**< key hash; all-zero = XXH3 with seed 0 */
} amq_fuse_params;

/**
 * amq_fuse_params_init for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): the defaults in as much of it as
 * that layout holds, zeros beyond, and struct_size set.
 * @param params the struct to fill, struct_size bytes; not NULL.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_fuse_params_init_sized(amq_fuse_params *params, size_t struct_size);

/**
 * Fill params with every default: all fields 0 (each field's comment says
 * what 0 means), the hasher XXH3 with seed 0. A zeroed struct means the same; this call
 * keeps meaning it when fields are added.
 * @param params the struct to fill; not NULL.
 * It sets struct_size to the caller's sizeof, so the library reads the
 *   layout the caller was built against.
 * Allocates: never. Thread safety: safe.
 */
static inline void amq_fuse_params_init(amq_fuse_params *params)
{
    amq_fuse_params_init_sized(params, sizeof *params);
}

/**
 * Build a filter holding a set of keys.
 *
 * Each key is hashed once to 64 bits with params->hasher; then
 * amq_fuse_build_hash. Keys that are equal (or whose hashes are) are
 * stored once.
 *
 * @param out receives the filter on success, NULL on failure; not NULL.
 * @param params fingerprint width, arity and hasher; not NULL.
 * @param keys count key pointers (each may be NULL if its length is 0); may
 *   be NULL when count is 0. Not kept.
 * @param lens count key lengths; may be NULL when count is 0.
 * @param count the number of keys; 0 gives an empty filter (which answers
 *   "maybe" with chance 2^-f, like any other).
 * @param diag on failure, what went wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (fingerprint bits not 8 or 16, arity not 3 or
 *   4, an invalid hasher); AMQ_ERANGE (too many keys to address);
 *   AMQ_EFULL (no attempt of AMQ_FUSE_MAX_ATTEMPTS succeeded: the message
 *   names the keys and attempts; practically never happens); AMQ_ENOMEM.
 * Allocates: the filter (array length x f/8 bytes), and while building
 *   about 28 bytes per key that are freed before it returns.
 * Complexity: O(count) expected.
 */
AMQ_API int amq_fuse_build(amq_fuse **out, const amq_fuse_params *params, const void *const *keys,
                           const size_t *lens, size_t count, amq_diag *diag);

/**
 * Build a filter from the keys' 64-bit hashes: amq_hash64 under
 * params->hasher for keys to be queried with amq_fuse_contains, or any
 * 64-bit values to be queried with amq_fuse_contains_hash (they are mixed
 * with a seed first, so even consecutive integers are spread well). Equal
 * values are stored once.
 * @param hashes count values; not modified, not kept; may be NULL when
 *   count is 0.
 * @param diag on failure, what was wrong; may be NULL.
 * @return as amq_fuse_build.
 * Allocates: the filter; while building, about 20 bytes per key (28 when
 *   the hashes hold duplicates).
 */
AMQ_API int amq_fuse_build_hash(amq_fuse **out, const amq_fuse_params *params,
                                const uint64_t *hashes, size_t count, amq_diag *diag);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_fuse_free(amq_fuse *filter);

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
AMQ_API int amq_fuse_wrap(amq_filter **out, amq_fuse *filter, amq_diag *diag);

/**
 * The typed filter inside a generic handle (one made by amq_new,
 * amq_build, amq_load, amq_load_from_memory or amq_fuse_wrap), for the
 * typed calls' speed on a filter that was loaded. Nothing is copied.
 * @param f a handle; may be NULL.
 * @return the filter, owned by f and valid until amq_free(f); NULL when f
 *   is NULL or not of this family. A filter of a mapped file or a
 *   borrowed buffer (AMQ_LOAD_MMAP, AMQ_LOAD_BORROW) reads that memory.
 */
AMQ_API amq_fuse *amq_fuse_unwrap(amq_filter *f);

/**
 * Is the key maybe in the set? false: certainly not; true: it is, or it is a
 * false positive (chance 2^-f for a key not in the set).
 * Allocates: never. Complexity: one hash, three (four) memory reads.
 */
AMQ_API bool amq_fuse_contains(const amq_fuse *filter, const void *key, size_t len);

/** As amq_fuse_contains, by the key's 64-bit hash (as given to
 *  amq_fuse_build_hash, or amq_hash64 under the filter's hasher). */
AMQ_API bool amq_fuse_contains_hash(const amq_fuse *filter, uint64_t hash);

/**
 * Query count keys: results[i] is 1 when keys[i] (lens[i] bytes) is maybe in
 * the set, else 0. The same answers as amq_fuse_contains, faster for many
 * keys: no call per key, and over an array larger than 2 MiB each key is
 * hashed and its slots computed and prefetched 16 keys ahead of its test,
 * so that the cache misses of that many keys overlap.
 * @param results count bytes; not NULL unless count is 0.
 * @param filter the filter; not NULL.
 * @param keys count key pointers (each may be NULL when its length is 0);
 *   not NULL unless count is 0 (nor is lens).
 * @param lens count key lengths.
 * @return AMQ_OK; AMQ_EINVAL for a NULL argument with count > 0.
 * Allocates: never. Thread safety: safe with other readers.
 */
AMQ_API int amq_fuse_contains_many(uint8_t *results, const amq_fuse *filter,
                                   const void *const *keys, const size_t *lens, size_t count);

/** As amq_fuse_contains_many, by the keys' 64-bit hashes: the fastest way
 *  to ask many keys. Returns AMQ_OK, or AMQ_EINVAL for a NULL argument with
 *  count > 0. */
AMQ_API int amq_fuse_contains_many_hash(uint8_t *results, const amq_fuse *filter,
                                        const uint64_t *hashes, size_t count);

/* ------------------------------------------------------------------------ */
/* Experimental tier (docs/CONVENTIONS.md, "Tiers"): declared only when    */
/* AMQ_EXPERIMENTAL is defined before the include, exported, and free to   */
/* change or go in any release.                                            */
/* ------------------------------------------------------------------------ */
#ifdef AMQ_EXPERIMENTAL

/** Distinct keys (hashes) in the set: the keys given less duplicates. */
AMQ_API uint64_t amq_fuse_keys(const amq_fuse *filter);

/** f: 8 or 16. */
AMQ_API uint32_t amq_fuse_fingerprint_bits(const amq_fuse *filter);

/** Slots per key: 3 or 4. */
AMQ_API uint32_t amq_fuse_arity(const amq_fuse *filter);

/** Slots per segment (a power of two, at most AMQ_FUSE_MAX_SEGMENT_LENGTH). */
AMQ_API uint64_t amq_fuse_segment_length(const amq_fuse *filter);

/** Segments a key's first slot may fall in; the array has arity - 1 more. */
AMQ_API uint64_t amq_fuse_segment_count(const amq_fuse *filter);

/** Slots: (segment count + arity - 1) x segment length. */
AMQ_API uint64_t amq_fuse_array_length(const amq_fuse *filter);

/** Bytes of the fingerprint array: array length x f / 8. */
AMQ_API uint64_t amq_fuse_memory_bytes(const amq_fuse *filter);

/** Size in bits over the distinct keys (over 1 for an empty filter). */
AMQ_API double amq_fuse_bits_per_key(const amq_fuse *filter);

/** The false-positive rate: 2^-f (0 for an empty filter, which answers "no" to
 *  every key). */
AMQ_API double amq_fuse_expected_fpr(const amq_fuse *filter);

/** The seed the keys' hashes were mixed with in the attempt that succeeded. */
AMQ_API uint64_t amq_fuse_seed(const amq_fuse *filter);

/** Attempts the construction took (1 unless a peeling failed). */
AMQ_API uint32_t amq_fuse_attempts(const amq_fuse *filter);

/** The hasher keys are hashed with. */
AMQ_API const amq_hasher *amq_fuse_hasher(const amq_fuse *filter);

#endif /* AMQ_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif /* AMQ_FUSE_H */
