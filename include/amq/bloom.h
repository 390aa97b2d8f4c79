/*
 * bloom.h - Bloom filters.
 *
 * A Bloom filter holds a set in m bits. Adding a key sets k bits chosen by
 * hashing it; a query answers "maybe present" when all k of the key's bits
 * are set and "absent" otherwise. It never answers "absent" for a key that
 * was added (no false negatives); it answers "maybe" for a key that was not
 * added with probability about (1 - e^(-kn/m))^k after n keys, the false-
 * positive rate (FPR). Sized for n keys at rate p it takes
 * m = -n ln p / (ln 2)^2 bits (about 9.6 bits per key at 1%, 1.44 times the
 * information-theoretic minimum of log2(1/p) bits per key) and
 * k = (m/n) ln 2 hash functions.
 *
 * Choose the classic Bloom filter when you want the textbook behaviour, exact
 * control over m and k, union and intersection of filters, and an estimate
 * of how many keys it holds. It cannot remove keys. It keeps answering past
 * its capacity, but its FPR climbs as it fills: check amq_bloom_expected_fpr.
 *
 * Thread safety, for the four filters of this header (classic, blocked,
 * counting, scalable): any number of threads may make the calls that take a
 * const filter - the queries, the statistics and accessors, saving it - on
 * one filter at once; none of them changes anything in it (no table built
 * on first use, no counter of queries). A call that takes a non-const filter
 * (add, add_many, remove, clear, merge, intersect, wrap) changes it and
 * needs exclusive access: no other call on that filter may run during it.
 * Distinct filters are independent.
 *
 * The exception is the concurrent add of the classic and blocked filters,
 * amq_bloom_add_concurrent and amq_blocked_bloom_add_concurrent: any number
 * of threads may add to one filter at once with it, beside each other and
 * beside the matching queries amq_bloom_contains_concurrent and
 * amq_blocked_bloom_contains_concurrent (and, on a classic filter,
 * amq_bloom_bits_set, amq_bloom_estimated_keys, amq_bloom_expected_fpr and
 * the accessors of its shape). No add is lost, and the filter ends up with
 * exactly the bits (and the count of them) that adding the same keys on one
 * thread gives, in any order. Every other call - the plain add and query,
 * contains_many, saving, merging - must not overlap a concurrent add: they
 * read and write the bits without atomics, for their speed; call them after
 * the adding threads have been joined.
 */
#ifndef AMQ_BLOOM_H
#define AMQ_BLOOM_H

#include "amq/amq.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * amq_info details of a bloom filter (amq_info_get), in this order:
 *   bits             number  m, the bits of the table
 *   hashes           number  k, the bits each key sets
 *   probe_version    number  how the k positions are derived: 1 enhanced
 *                            double hashing (files of early versions), 2 a
 *                            multiplicative rehash chain (every new filter)
 *   fpr_at_capacity  number  the rate to expect once capacity keys are in
 */
/** A classic Bloom filter; opaque. */
typedef struct amq_bloom amq_bloom;

/** Largest number of hash functions a classic filter takes. */
#define AMQ_BLOOM_MAX_HASHES 64
/** Smallest number of bits a classic filter has. */
#define AMQ_BLOOM_MIN_BITS 64
/** Largest number of bits a classic filter has (2^48: 32 TiB). */
#define AMQ_BLOOM_MAX_BITS ((uint64_t)1 << 48)

/**
 * How to size a classic Bloom filter: either capacity and fpr (m and k are
 * then the optimal ones), or bits (and optionally hashes). Fields left 0 are
 * derived; give both pairs only if they agree with each other's purpose.
 */
typedef struct amq_bloom_params {
    uint64_t capacity; /**< n: keys to hold at fpr (0 with bits given: m*ln2^2/-ln p) */
    double fpr;        /**< p: target false-positive rate in (0, 1); 0 = 0.01 */
    uint64_t bits;     /**< m: bits (0: optimal for capacity and fpr) */
    uint32_t hashes;   /**< k: hash functions (0: optimal for m and capacity) */
    amq_hasher hasher; /**< key hash; all-zero = XXH3 with seed 0 */
} amq_bloom_params;

/**
 * Fill params with every default: all fields 0 (each field's comment says
 * what 0 means), the hasher XXH3 with seed 0. A zeroed struct means the same; this call
 * keeps meaning it when fields are added.
 * @param params the struct to fill; not NULL.
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_bloom_params_init(amq_bloom_params *params);

/**
 * Create an empty classic Bloom filter.
 *
 * With capacity and fpr: m = ceil(-n ln p / (ln 2)^2), k = round(m/n ln 2)
 * (the relations of calc.h). With bits: that m; k given, or optimal for the
 * capacity (when given), or for the capacity that m holds at fpr.
 *
 * @param out receives the filter; not NULL.
 * @param params the sizing; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (neither capacity nor bits; fpr outside (0, 1);
 *   an invalid hasher); AMQ_ERANGE (m outside [AMQ_BLOOM_MIN_BITS,
 *   AMQ_BLOOM_MAX_BITS] or k above AMQ_BLOOM_MAX_HASHES); AMQ_ENOMEM.
 * Allocates: ceil(m/64) 64-bit words, zeroed.
 */
AMQ_API int amq_bloom_new(amq_bloom **out, const amq_bloom_params *params, amq_diag *diag);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_bloom_free(amq_bloom *filter);

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
AMQ_API int amq_bloom_wrap(amq_filter **out, amq_bloom *filter, amq_diag *diag);

/**
 * The typed filter inside a generic handle (one made by amq_new,
 * amq_build, amq_load, amq_load_from_memory or amq_bloom_wrap), for the
 * typed calls' speed on a filter that was loaded. Nothing is copied.
 * @param f a handle; may be NULL.
 * @return the filter, owned by f and valid until amq_free(f); NULL when f
 *   is NULL or not of this family. A filter of a mapped file or a
 *   borrowed buffer (AMQ_LOAD_MMAP, AMQ_LOAD_BORROW) reads that memory.
 */
AMQ_API amq_bloom *amq_bloom_unwrap(amq_filter *f);

/**
 * Empty a filter: every bit cleared, as when it was created.
 * Complexity: O(m).
 */
AMQ_API void amq_bloom_clear(amq_bloom *filter);

/**
 * Add a key.
 * @param key the key's bytes; may be NULL when len is 0.
 * Allocates: never. Complexity: one hash, k bit writes.
 */
AMQ_API void amq_bloom_add(amq_bloom *filter, const void *key, size_t len);

/**
 * Add a key by its 128-bit hash, computed with the filter's hasher
 * (amq_hash128(amq_bloom_hasher(filter), key, len)).
 */
AMQ_API void amq_bloom_add_hash(amq_bloom *filter, amq_u128 hash);

/**
 * Add count keys, in order: the same filter as amq_bloom_add of each in
 * turn, faster for many keys on a large filter (the keys are hashed 16 at a
 * time and their first bits prefetched).
 * @param added NULL, or receives count bytes: 1 when the key was certainly
 *   absent before its add (it set a bit), 0 when it was maybe present
 *   (nothing changed). A key repeated in the batch is new only once.
 * Allocates: never. Complexity: one hash and k bit writes per key.
 */
AMQ_API void amq_bloom_add_many(uint8_t *added, amq_bloom *filter, const void *const *keys,
                                const size_t *lens, size_t count);

/**
 * Ask whether a key may be in the filter.
 * @return true: maybe present; false: certainly absent.
 * Allocates: never. Complexity: one hash, at most k bit reads (two at a
 * time; stops after the first pair with a clear bit).
 */
AMQ_API bool amq_bloom_contains(const amq_bloom *filter, const void *key, size_t len);

/** As amq_bloom_contains, by the key's 128-bit hash. */
AMQ_API bool amq_bloom_contains_hash(const amq_bloom *filter, amq_u128 hash);

/**
 * Ask about many keys at once, faster than one by one on large filters: the
 * keys are hashed in groups and their bits prefetched before they are read,
 * so the memory accesses of a group overlap.
 * @param results receives count bytes: 1 maybe present, 0 certainly absent.
 * Allocates: never; uses 8 KiB of stack for the bit positions of a group.
 */
AMQ_API void amq_bloom_contains_many(uint8_t *results, const amq_bloom *filter,
                                     const void *const *keys, const size_t *lens, size_t count);

/**
 * As amq_bloom_contains_many, by the keys' 128-bit hashes under the
 * filter's hasher (amq_hash128(amq_bloom_hasher(filter), key, len)):
 * results[i] is amq_bloom_contains_hash(filter, hashes[i]).
 * @param results receives count bytes: 1 maybe present, 0 certainly absent.
 * @param filter the filter; not NULL.
 * @param hashes count hashes; not NULL unless count is 0.
 * @param count how many there are.
 * Allocates: never; uses 8 KiB of stack, as amq_bloom_contains_many.
 */
AMQ_API void amq_bloom_contains_many_hash(uint8_t *results, const amq_bloom *filter,
                                          const amq_u128 *hashes, size_t count);

/**
 * Make into the union of into and other (bitwise OR): it then answers
 * "maybe" for every key either filter answered "maybe" for, and equals the
 * filter built from both key sets.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE if m, k or the hasher differ.
 */
AMQ_API int amq_bloom_merge(amq_bloom *into, const amq_bloom *other, amq_diag *diag);

/* ==== Blocked Bloom filters =================================================
 *
 * A blocked Bloom filter puts all of a key's bits in one block that fits a
 * cache line, chosen by the key's hash: a query costs one memory access
 * where the classic filter's costs up to k. The price is a higher FPR at
 * the same size, because blocks receive unequal numbers of keys (a Poisson
 * spread around the mean); the filter is sized for it, from
 *
 *     FPR = sum over j >= 0 of Poisson(j; lambda) * FPR_block(j)
 *
 * where lambda is the mean number of keys per block and FPR_block(j) the
 * FPR of one block that holds j keys, so it takes some more bits per key
 * than a classic filter at the same p (docs/BLOOM.md has the table). Two
 * layouts:
 *
 *   AMQ_BLOCKED_SPLIT  256-bit blocks of eight 32-bit words; a key sets one
 *                      bit in each word (k = 8), the bit chosen by
 *                      multiplying the key's hash with one odd constant per
 *                      word. This is the split-block Bloom filter Apache
 *                      Parquet specifies, bit for bit when given the hashes
 *                      Parquet uses (XXH64 of the value, through
 *                      amq_blocked_bloom_add_hash), and the fastest layout:
 *                      a query is a few vector instructions (AVX2, chosen at
 *                      run time on CPUs that have it; otherwise a portable
 *                      path that sets exactly the same bits). The default.
 *   AMQ_BLOCKED_BLOCK  512-bit blocks (one 64-byte cache line); a key sets k
 *                      bits anywhere in its block, k chosen for the smallest
 *                      filter. Smaller than split at low FPRs (p < 0.5%).
 */

/*
 * amq_info details of a blocked-bloom filter (amq_info_get), in this order:
 *   layout   word    "split" (eight words, a bit in each) or "block" (k
 *                    bits anywhere in the 512-bit block)
 *   blocks   number  the 64-byte blocks of the table
 *   hashes   number  k, the bits each key sets in its block
 *   simd     word    the kernel this process runs: "avx2" or "portable"
 */
/** A blocked Bloom filter; opaque. */
typedef struct amq_blocked_bloom amq_blocked_bloom;

/** The block layouts. */
typedef enum amq_blocked_layout {
    AMQ_BLOCKED_SPLIT = 0, /**< 256-bit split blocks, k = 8 (Parquet's) */
    AMQ_BLOCKED_BLOCK = 1  /**< 512-bit blocks, k bits anywhere in the block */
} amq_blocked_layout;

/** Largest k of the 512-bit layout. */
#define AMQ_BLOCKED_BLOOM_MAX_HASHES 16
/** Largest number of blocks (2^32: 128 GiB of split blocks). */
#define AMQ_BLOCKED_BLOOM_MAX_BLOCKS ((uint64_t)1 << 32)
/** The memory ceiling of a filter sized from its capacity: at most this many
 *  bits per key, or AMQ_BLOCKED_BLOOM_ALLOWANCE_BITS if that is more. Blocks
 *  bound the rate a key alone in its block gives (split: 32^-8), so below
 *  about 1e-12 the blocks must stay nearly empty (100,000 keys at 1e-16 would
 *  take 29 GB); such a request is refused with AMQ_ERANGE: a classic Bloom
 *  filter serves it in -log2(p) / ln 2 bits per key. A filter given its bits
 *  (m) takes them as asked. */
#define AMQ_BLOCKED_BLOOM_MAX_BITS_PER_KEY 256
#define AMQ_BLOCKED_BLOOM_ALLOWANCE_BITS   ((uint64_t)1 << 24)

/** How to size a blocked Bloom filter. Fields left 0 are derived. */
typedef struct amq_blocked_bloom_params {
    uint64_t capacity;         /**< n: keys to hold at fpr */
    double fpr;                /**< p: target false-positive rate in (0, 1); 0 = 0.01 */
    uint64_t bits;             /**< m: bits, rounded up to whole blocks (0: the fewest
                                    whose FPR, by the formula above, is at most p) */
    uint32_t hashes;           /**< k: 8 for split (0 or 8); 1..16 for block (0:
                                    the k that needs the fewest bits) */
    amq_blocked_layout layout; /**< AMQ_BLOCKED_SPLIT (0) or AMQ_BLOCKED_BLOCK */
    amq_hasher hasher;         /**< key hash; all-zero = XXH3 with seed 0 */
} amq_blocked_bloom_params;

/**
 * Fill params with every default: all fields 0 (each field's comment says
 * what 0 means), the hasher XXH3 with seed 0. A zeroed struct means the same; this call
 * keeps meaning it when fields are added.
 * @param params the struct to fill; not NULL.
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_blocked_bloom_params_init(amq_blocked_bloom_params *params);

/**
 * Create an empty blocked Bloom filter.
 *
 * With capacity and fpr: the fewest blocks (and for the block layout the k)
 * for which amq_blocked_bloom_formula_fpr is at most p. With bits: that
 * many bits rounded up to whole blocks; the capacity, when not given, is the
 * most keys they hold at p.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (neither capacity nor bits; fpr outside (0, 1);
 *   an unknown layout; k other than 8 for split; an invalid hasher);
 *   AMQ_ERANGE (more than AMQ_BLOCKED_BLOOM_MAX_BLOCKS blocks; sized from
 *   the capacity, more than AMQ_BLOCKED_BLOOM_MAX_BITS_PER_KEY bits per key;
 *   k above AMQ_BLOCKED_BLOOM_MAX_HASHES); AMQ_ENOMEM.
 * Allocates: the blocks, 64-byte aligned, zeroed.
 */
AMQ_API int amq_blocked_bloom_new(amq_blocked_bloom **out, const amq_blocked_bloom_params *params,
                                  amq_diag *diag);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_blocked_bloom_free(amq_blocked_bloom *filter);

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
AMQ_API int amq_blocked_bloom_wrap(amq_filter **out, amq_blocked_bloom *filter, amq_diag *diag);

/**
 * The typed filter inside a generic handle (one made by amq_new,
 * amq_build, amq_load, amq_load_from_memory or amq_blocked_bloom_wrap), for the
 * typed calls' speed on a filter that was loaded. Nothing is copied.
 * @param f a handle; may be NULL.
 * @return the filter, owned by f and valid until amq_free(f); NULL when f
 *   is NULL or not of this family. A filter of a mapped file or a
 *   borrowed buffer (AMQ_LOAD_MMAP, AMQ_LOAD_BORROW) reads that memory.
 */
AMQ_API amq_blocked_bloom *amq_blocked_bloom_unwrap(amq_filter *f);

/** Clear every bit. Complexity: O(m). */
AMQ_API void amq_blocked_bloom_clear(amq_blocked_bloom *filter);

/** Add a key. Allocates: never. Complexity: one hash, one block. */
AMQ_API void amq_blocked_bloom_add(amq_blocked_bloom *filter, const void *key, size_t len);

/**
 * Add a key by its 64-bit hash, computed with the filter's hasher
 * (amq_hash64(amq_blocked_bloom_hasher(filter), key, len)), or any 64-bit
 * hash the caller uses consistently (for a Parquet-compatible split-block
 * filter: XXH64 with seed 0 of the value's plain encoding). The block is
 * chosen by the high 32 bits, the bits within it by the low 32.
 * The hash is used as given, never mixed again (every _hash call of this
 * filter), so it must be a full 64-bit hash: raw integers such as 1, 2, 3
 * all fall in block 0, which fills, and the filter then answers "maybe" for
 * every small integer, with no error to say so.
 */
AMQ_API void amq_blocked_bloom_add_hash(amq_blocked_bloom *filter, uint64_t hash);

/** Ask whether a key may be in the filter. true: maybe; false: certainly
 *  absent. Allocates: never. */
AMQ_API bool amq_blocked_bloom_contains(const amq_blocked_bloom *filter, const void *key,
                                        size_t len);

/** As amq_blocked_bloom_contains, by the key's 64-bit hash. */
AMQ_API bool amq_blocked_bloom_contains_hash(const amq_blocked_bloom *filter, uint64_t hash);

/**
 * Ask about many keys at once: the keys are hashed in groups and their
 * blocks prefetched before they are read, so the cache misses of a group
 * overlap. results: 1 maybe present, 0 certainly absent.
 */
AMQ_API void amq_blocked_bloom_contains_many(uint8_t *results, const amq_blocked_bloom *filter,
                                             const void *const *keys, const size_t *lens,
                                             size_t count);

/** As amq_blocked_bloom_contains_many, by 64-bit hashes. */
AMQ_API void amq_blocked_bloom_contains_many_hash(uint8_t *results, const amq_blocked_bloom *filter,
                                                  const uint64_t *hashes, size_t count);

/**
 * Union (bitwise OR) of into and other; equals the filter built from both
 * key sets.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE if layout, blocks, k or hasher differ.
 */
AMQ_API int amq_blocked_bloom_merge(amq_blocked_bloom *into, const amq_blocked_bloom *other,
                                    amq_diag *diag);

/* ==== Counting Bloom filter ==================================================
 *
 * A classic Bloom filter whose m bits are m small counters (4 bits by
 * default, or 8): adding a key increments its k counters, removing it
 * decrements them, and a query asks whether all k are non-zero. It takes 4
 * (or 8) times the memory of a classic filter at the same FPR, in exchange
 * for removal.
 *
 * A counter that reaches its maximum (15 or 255) saturates: it is never
 * incremented further nor decremented again, since its true value is no
 * longer known. A saturated counter can only cause false positives, never
 * false negatives; amq_counting_bloom_saturated tells how many there are.
 * With 4-bit counters at the optimal k a counter saturates with probability
 * about 1e-15 per counter at capacity, so saturation signals heavy overfill
 * or one key added many times.
 */

/*
 * amq_info details of a counting-bloom filter (amq_info_get), in this order:
 *   counters         number  m, the counters of the table
 *   counter_bits     number  the width of a counter: 4 or 8
 *   hashes           number  k, the counters each key increments
 *   nonzero          number  counters above zero
 *   saturated        number  counters stuck at their maximum (a key
 *                            removed there may leave a trace)
 *   probe_version    number  as bloom's: 1 double hashing, 2 rehash chain
 *   fpr_at_capacity  number  the rate to expect once capacity keys are in
 */
/** A counting Bloom filter; opaque. */
typedef struct amq_counting_bloom amq_counting_bloom;

/** How to size a counting Bloom filter; as amq_bloom_params, with counters
 *  in place of bits. */
typedef struct amq_counting_bloom_params {
    uint64_t capacity;     /**< n: keys to hold at fpr */
    double fpr;            /**< p: target false-positive rate in (0, 1); 0 = 0.01 */
    uint64_t counters;     /**< m: counters (0: optimal for capacity and fpr) */
    uint32_t hashes;       /**< k: counters per key (0: optimal) */
    uint32_t counter_bits; /**< 4 or 8; 0 = 4 */
    amq_hasher hasher;     /**< key hash; all-zero = XXH3 with seed 0 */
} amq_counting_bloom_params;

/**
 * Fill params with every default: all fields 0 (each field's comment says
 * what 0 means), the hasher XXH3 with seed 0. A zeroed struct means the same; this call
 * keeps meaning it when fields are added.
 * @param params the struct to fill; not NULL.
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_counting_bloom_params_init(amq_counting_bloom_params *params);

/**
 * Create an empty counting Bloom filter, sized as amq_bloom_new sizes a
 * classic one (m counters, k hashes).
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (no capacity or counters, fpr outside (0, 1),
 *   counter_bits not 4 or 8, an invalid hasher); AMQ_ERANGE (m or k out of
 *   the classic filter's ranges); AMQ_ENOMEM.
 * Allocates: m * counter_bits / 8 bytes, zeroed.
 */
AMQ_API int amq_counting_bloom_new(amq_counting_bloom **out,
                                   const amq_counting_bloom_params *params, amq_diag *diag);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_counting_bloom_free(amq_counting_bloom *filter);

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
AMQ_API int amq_counting_bloom_wrap(amq_filter **out, amq_counting_bloom *filter, amq_diag *diag);

/**
 * The typed filter inside a generic handle (one made by amq_new,
 * amq_build, amq_load, amq_load_from_memory or amq_counting_bloom_wrap), for the
 * typed calls' speed on a filter that was loaded. Nothing is copied.
 * @param f a handle; may be NULL.
 * @return the filter, owned by f and valid until amq_free(f); NULL when f
 *   is NULL or not of this family. A filter of a mapped file or a
 *   borrowed buffer (AMQ_LOAD_MMAP, AMQ_LOAD_BORROW) reads that memory.
 */
AMQ_API amq_counting_bloom *amq_counting_bloom_unwrap(amq_filter *f);

/** Set every counter to 0. Complexity: O(m). */
AMQ_API void amq_counting_bloom_clear(amq_counting_bloom *filter);

/**
 * Add a key: increment its k counters (a saturated counter stays as it is).
 * A key added twice must be removed twice.
 * Allocates: never. Complexity: one hash, k counter increments.
 */
AMQ_API void amq_counting_bloom_add(amq_counting_bloom *filter, const void *key, size_t len);

/** As amq_counting_bloom_add, by the key's 128-bit hash under the filter's
 *  hasher. */
AMQ_API void amq_counting_bloom_add_hash(amq_counting_bloom *filter, amq_u128 hash);

/**
 * Add count keys, in order: the same filter as amq_counting_bloom_add of
 * each in turn, faster for many keys on a large filter (the keys are hashed
 * 16 at a time and their counters' cache lines prefetched). The contract is
 * amq_add_many's: an add cannot fail (a saturated counter stays as it is),
 * so every key is added.
 * @param results NULL, or count ints: results[i] becomes AMQ_OK, the
 *   answer of amq_add for keys[i].
 * @param handled NULL, or receives how many keys were added: count.
 * @param filter the filter; not NULL.
 * @param keys count key pointers, each of which may be NULL when its length
 *   is 0; not NULL unless count is 0 (nor is lens).
 * @param lens count key lengths.
 * @return AMQ_OK.
 * Allocates: never. Complexity: one hash and k counter increments per key.
 * Thread safety: needs exclusive access to filter, as every add.
 */
AMQ_API int amq_counting_bloom_add_many(int *results, size_t *handled, amq_counting_bloom *filter,
                                        const void *const *keys, const size_t *lens, size_t count);

/**
 * Remove a key: decrement its k counters (saturated ones stay).
 *
 * A key added k times and removed at most k times still answers "maybe";
 * the only way to make a key answer "no" is to remove a key that was never
 * added (or more times than it was added).
 *
 * Remove only keys that were added. If some counter of the key is 0 (or is
 * lower than the number of the key's k positions that fall on it, which
 * adding the key would have put there) the key is certainly absent: nothing
 * changes and the call answers AMQ_ENOTFOUND. Removing a key that was added
 * undoes exactly what adding it did, unless one of its counters saturated.
 *
 * But a key that was never added and is a false positive (all its counters
 * are non-zero because of other keys) is "removed" from those other keys'
 * counters, and a later query for one of them can answer "absent" - a false
 * negative. Removing keys you did not add is how a counting filter loses
 * keys: at capacity, each such removal loses about k ln 2 of them.
 * @return AMQ_OK; AMQ_ENOTFOUND (certainly absent, nothing changed).
 * Allocates: never. Complexity: one hash, at most 2k counter reads and k
 * writes.
 */
AMQ_API int amq_counting_bloom_remove(amq_counting_bloom *filter, const void *key, size_t len);

/** As amq_counting_bloom_remove, by the key's 128-bit hash. */
AMQ_API int amq_counting_bloom_remove_hash(amq_counting_bloom *filter, amq_u128 hash);

/** Ask whether a key may be in the filter (all its counters non-zero). */
AMQ_API bool amq_counting_bloom_contains(const amq_counting_bloom *filter, const void *key,
                                         size_t len);

/** As amq_counting_bloom_contains, by the key's 128-bit hash. */
AMQ_API bool amq_counting_bloom_contains_hash(const amq_counting_bloom *filter, amq_u128 hash);

/** Ask about many keys at once, hashing ahead and prefetching as
 *  amq_bloom_contains_many does. results: 1 maybe present, 0 absent. */
AMQ_API void amq_counting_bloom_contains_many(uint8_t *results, const amq_counting_bloom *filter,
                                              const void *const *keys, const size_t *lens,
                                              size_t count);

/**
 * As amq_counting_bloom_contains_many, by the keys' 128-bit hashes under
 * the filter's hasher (amq_hash128(amq_counting_bloom_hasher(filter), key,
 * len)): results[i] is amq_counting_bloom_contains_hash(filter, hashes[i]).
 * @param results receives count bytes: 1 maybe present, 0 certainly absent.
 * @param filter the filter; not NULL.
 * @param hashes count hashes; not NULL unless count is 0.
 * @param count how many there are.
 * Allocates: never; uses 8 KiB of stack, as amq_bloom_contains_many.
 */
AMQ_API void amq_counting_bloom_contains_many_hash(uint8_t *results,
                                                   const amq_counting_bloom *filter,
                                                   const amq_u128 *hashes, size_t count);

/**
 * How many times the key may have been added: the smallest of its k
 * counters. As long as only added keys were removed, that is at least the
 * number of times the key was added, up to the counter maximum (15 or 255,
 * when that counter is saturated); 0 for a key certainly absent.
 */
AMQ_API uint32_t amq_counting_bloom_count(const amq_counting_bloom *filter, const void *key,
                                          size_t len);

/**
 * Add other's counters to into's, saturating (a union that can still
 * remove keys of either).
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE if m, k, the counter width or the
 *   hasher differ.
 */
AMQ_API int amq_counting_bloom_merge(amq_counting_bloom *into, const amq_counting_bloom *other,
                                     amq_diag *diag);

/* ==== Scalable Bloom filter ==================================================
 *
 * A Bloom filter that needs no capacity up front (P. S. Almeida, C. Baquero,
 * N. Preguica, D. Hutchison, "Scalable Bloom Filters", IPL 101(6), 2007). It
 * is a chain of classic filters, stages 0, 1, 2, ...: stage i holds
 * capacity * growth^i keys at error p * (1 - r) * r^i, where r is the
 * tightening ratio. Keys go into the newest stage; when it is full a new
 * stage is added. A query asks every stage, and the compound FPR stays below
 * p * (1 - r) * (1 + r + r^2 + ...) = p however many keys arrive. Memory
 * pays for it: bits per key grow slowly with the number of stages (about
 * 15 to 18 at p = 1% for 100 to a million times the initial capacity, where
 * a classic filter sized for the final count takes 9.6), and just after a
 * stage opens the filter holds about s times the memory its keys need.
 *
 * An add first asks all stages: a key that may already be present is not
 * added again (so re-adding a key does not use up capacity, and the count
 * of keys added is exact up to false positives).
 *
 * Stage i probes with the key's 128-bit hash h as its own view of it: both
 * halves of h multiplied by 1 + 2 * i * 0x9e3779b97f4a7c15 (mod 2^64), so
 * that stages do not place a key at the same relative positions; to ask
 * stage i directly (amq_scalable_bloom_stage), pass that view to
 * amq_bloom_contains_hash.
 *
 * The stages may instead be blocked (params.stage_layout): each stage a blocked
 * filter that puts all of a key's bits in one 256-bit (split-block) or
 * 512-bit block, so a query costs one cache line per stage, not k. They
 * take more bits per key at low rates (docs/BLOOM.md compares them), and
 * amq_scalable_bloom_stage has no classic filter to lend for them.
 */

/*
 * amq_info details of a scalable-bloom filter (amq_info_get), in this order:
 *   stages            number  the stages chained so far
 *   initial_capacity  number  the keys the first stage was sized for
 *   growth            number  s, each stage's capacity over the one before
 *   tightening        number  r, each stage's rate over the one before
 *   stage_layout      word    "split-block" or "block" (only for blocked
 *                             stages; classic stages report none)
 */
/** A scalable Bloom filter; opaque. */
typedef struct amq_scalable_bloom amq_scalable_bloom;

/** The most stages a scalable filter grows to; adding past that fails. */
#define AMQ_SCALABLE_BLOOM_MAX_STAGES 64

/** The memory ceiling of a stage: at most this many bits per key of its
 *  capacity, or AMQ_SCALABLE_BLOOM_STAGE_ALLOWANCE_BITS if that is more.
 *  A stage past it (a tiny capacity at a very low error, where double
 *  hashing's floor needs about sqrt(c / p_i) bits) is refused with
 *  AMQ_ERANGE, so a whole filter takes at most 256 bits per key of its
 *  capacity plus 64 allowances (128 MiB). */
#define AMQ_SCALABLE_BLOOM_MAX_BITS_PER_KEY     256
#define AMQ_SCALABLE_BLOOM_STAGE_ALLOWANCE_BITS ((uint64_t)1 << 24)

/** What each stage of a scalable Bloom filter is. */
typedef enum amq_scalable_bloom_layout {
    AMQ_SCALABLE_STAGES_CLASSIC = 0,     /**< classic filters: k cache lines per stage */
    AMQ_SCALABLE_STAGES_SPLIT_BLOCK = 1, /**< split-block: one bit in each 32-bit word of a
                                              256-bit block, 8 per key */
    AMQ_SCALABLE_STAGES_BLOCK = 2,       /**< k bits (up to 16) anywhere in a 512-bit block:
                                              fewer bits per key than split-block, by
                                              half at rates near 1e-7 */
} amq_scalable_bloom_layout;

/** How a scalable Bloom filter starts and grows. Fields left 0 take the
 *  defaults. */
typedef struct amq_scalable_bloom_params {
    uint64_t capacity; /**< keys in the first stage; 0 = 1024 */
    double fpr;        /**< p: the bound on the compound FPR, in (0, 1); 0 = 0.01 */
    double growth;     /**< s: each stage holds s times the keys of the one before, in
                            [1, 32768] (1: equal stages); 0 = 2 */
    double tightening; /**< r: each stage's error is r times the one before, in
                            [0.5, 0.95]; 0 = the default, 0.9 (docs/BLOOM.md says why) */
    amq_hasher hasher; /**< key hash; all-zero = XXH3 with seed 0 */
    amq_scalable_bloom_layout stage_layout; /**< what each stage is; 0 = classic */
} amq_scalable_bloom_params;

/**
 * Fill params with every default: all fields 0 (each field's comment says
 * what 0 means), the hasher XXH3 with seed 0. A zeroed struct means the same; this call
 * keeps meaning it when fields are added.
 * @param params the struct to fill; not NULL.
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_scalable_bloom_params_init(amq_scalable_bloom_params *params);

/**
 * Create an empty scalable Bloom filter with its first stage.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (a parameter out of its range, an invalid
 *   hasher); AMQ_ERANGE (the first stage alone would need more than
 *   AMQ_BLOOM_MAX_BITS bits or AMQ_BLOOM_MAX_HASHES hash functions: a huge
 *   capacity or a tiny fpr); AMQ_ENOMEM.
 * Allocates: the first stage.
 */
AMQ_API int amq_scalable_bloom_new(amq_scalable_bloom **out,
                                   const amq_scalable_bloom_params *params, amq_diag *diag);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_scalable_bloom_free(amq_scalable_bloom *filter);

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
AMQ_API int amq_scalable_bloom_wrap(amq_filter **out, amq_scalable_bloom *filter, amq_diag *diag);

/**
 * The typed filter inside a generic handle (one made by amq_new,
 * amq_build, amq_load, amq_load_from_memory or amq_scalable_bloom_wrap), for the
 * typed calls' speed on a filter that was loaded. Nothing is copied.
 * @param f a handle; may be NULL.
 * @return the filter, owned by f and valid until amq_free(f); NULL when f
 *   is NULL or not of this family. A filter of a mapped file or a
 *   borrowed buffer (AMQ_LOAD_MMAP, AMQ_LOAD_BORROW) reads that memory.
 */
AMQ_API amq_scalable_bloom *amq_scalable_bloom_unwrap(amq_filter *f);

/** Drop every stage but the first and empty it. */
AMQ_API void amq_scalable_bloom_clear(amq_scalable_bloom *filter);

/**
 * Add a key unless it may already be present.
 * @return 1: added; 0: maybe present already, nothing changed;
 *   AMQ_ERANGE: the newest stage is full and a new one would exceed
 *   AMQ_SCALABLE_BLOOM_MAX_STAGES or the largest classic filter, nothing
 *   changed; AMQ_ENOMEM: a new stage could not be allocated, nothing changed.
 * Allocates: a new stage when the newest is full.
 */
AMQ_API int amq_scalable_bloom_add(amq_scalable_bloom *filter, const void *key, size_t len);

/** As amq_scalable_bloom_add, by the key's 128-bit hash under the filter's
 *  hasher. */
AMQ_API int amq_scalable_bloom_add_hash(amq_scalable_bloom *filter, amq_u128 hash);

/**
 * Add keys in order: results[i] is what amq_scalable_bloom_add of keys[i]
 * returns at its turn (1 added, 0 maybe present, or the error). It stops
 * after the first key that fails (which changed nothing). Faster for many
 * keys: they are hashed 16 at a time and their first bits in the newest
 * stage prefetched.
 * @return how many keys it handled (results[0..n-1] are set); count when
 *   none failed.
 * Allocates: a new stage when the newest fills.
 */
AMQ_API size_t amq_scalable_bloom_add_many(int *results, amq_scalable_bloom *filter,
                                           const void *const *keys, const size_t *lens,
                                           size_t count);

/** Ask whether a key may be in the filter (in any stage). */
AMQ_API bool amq_scalable_bloom_contains(const amq_scalable_bloom *filter, const void *key,
                                         size_t len);

/** As amq_scalable_bloom_contains, by the key's 128-bit hash. */
AMQ_API bool amq_scalable_bloom_contains_hash(const amq_scalable_bloom *filter, amq_u128 hash);

/** Ask about many keys at once, hashing ahead and prefetching. results: 1
 *  maybe present, 0 absent. */
AMQ_API void amq_scalable_bloom_contains_many(uint8_t *results, const amq_scalable_bloom *filter,
                                              const void *const *keys, const size_t *lens,
                                              size_t count);

/**
 * Make into the union of into and other: stage by stage OR of two filters
 * with the same parameters and hasher (into grows empty stages to match
 * other's count first). The union is refused, and into left unchanged, if
 * the result's expected FPR (from the stages' fill) would exceed p: two
 * filters whose stages are both near full cannot be merged, since each
 * merged stage would hold up to twice its capacity. A merged stage's count
 * is into's plus the keys other adds to it, estimated from the set bits.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE (different parameters or hasher, or
 *   the union would break the FPR bound); AMQ_ENOMEM.
 * Allocates: the stages into lacks. Complexity: O(total bits).
 */
AMQ_API int amq_scalable_bloom_merge(amq_scalable_bloom *into, const amq_scalable_bloom *other,
                                     amq_diag *diag);

/* ------------------------------------------------------------------------ */
/* Experimental tier (docs/CONVENTIONS.md, "Tiers"): declared only when    */
/* AMQ_EXPERIMENTAL is defined before the include, exported, and free to   */
/* change or go in any release.                                            */
/* ------------------------------------------------------------------------ */
#ifdef AMQ_EXPERIMENTAL

/**
 * Add a key as amq_bloom_add does, safely beside other threads adding to the
 * same filter with this call and querying it with
 * amq_bloom_contains_concurrent (see the top of this header): each of the
 * key's k bits is set with an atomic OR on its 64-bit word (relaxed order),
 * skipped when the bit is set already, and the bits it set are added to the
 * set-bit count X atomically, so amq_bloom_bits_set and the estimates stay
 * exact while adds run. After the adding threads are joined the filter is
 * bit for bit the one amq_bloom_add of the same keys makes, in any order.
 * A query on another thread is certain to find the key once the add
 * happens-before it (the threads were joined, or synchronized otherwise);
 * a query racing the add may answer either way.
 * @param filter the filter; not NULL.
 * @param key the key's bytes; may be NULL when len is 0.
 * @param len the key's length in bytes.
 * Allocates: never. Complexity: one hash, k bit reads and at most k atomic
 * read-modify-writes and one atomic add; slower than amq_bloom_add on one
 * thread (docs/PERFORMANCE.md has both). Thread safety: may run
 * concurrently with itself and amq_bloom_contains_concurrent on the same
 * filter; no other call that reads or changes the bits may overlap it.
 */
AMQ_API void amq_bloom_add_concurrent(amq_bloom *filter, const void *key, size_t len);

/**
 * Ask as amq_bloom_contains does, safely beside threads adding to the filter
 * with amq_bloom_add_concurrent: the words are read with atomic loads
 * (relaxed order). The answer is amq_bloom_contains's for the bits set at
 * the moment of each read; a key whose add happens-before the query is
 * found.
 * @param filter the filter; not NULL.
 * @param key the key's bytes; may be NULL when len is 0.
 * @param len the key's length in bytes.
 * @return true: maybe present; false: certainly absent (at the time of the
 *   reads).
 * Allocates: never. Complexity: as amq_bloom_contains. Thread safety: may
 * run concurrently with amq_bloom_add_concurrent and with any query.
 */
AMQ_API bool amq_bloom_contains_concurrent(const amq_bloom *filter, const void *key, size_t len);

/**
 * Make into the intersection of into and other (bitwise AND). Every key in
 * both sets stays "maybe"; the result's FPR is at most either input's, and
 * its estimated count overstates the true intersection.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE if m, k or the hasher differ.
 */
AMQ_API int amq_bloom_intersect(amq_bloom *into, const amq_bloom *other, amq_diag *diag);

/**
 * Estimate the number of distinct keys added from the number of set bits X:
 * n = -(m/k) ln(1 - X/m) (Swamidass and Baldi, 2007). O(1): X is kept as
 * keys are added.
 * @return the estimate; infinity when every bit is set.
 */
AMQ_API double amq_bloom_estimated_keys(const amq_bloom *filter);

/**
 * The false-positive rate to expect now, from the fill: (X/m)^k.
 */
AMQ_API double amq_bloom_expected_fpr(const amq_bloom *filter);

/** m, the number of bits. */
AMQ_API uint64_t amq_bloom_bits(const amq_bloom *filter);

/** k, the number of bits set per key. */
AMQ_API uint32_t amq_bloom_hashes(const amq_bloom *filter);

/** X, the number of bits set. */
AMQ_API uint64_t amq_bloom_bits_set(const amq_bloom *filter);

/** The capacity the filter was sized for (0 if sized by bits alone). */
AMQ_API uint64_t amq_bloom_capacity(const amq_bloom *filter);

/** The key hash; valid as long as the filter. */
AMQ_API const amq_hasher *amq_bloom_hasher(const amq_bloom *filter);

/**
 * The FPR of a blocked filter of the given layout, bits (whole blocks) and
 * k after n distinct keys, by the Poisson-mix formula above. This is what
 * amq_blocked_bloom_new sizes by.
 * @return the FPR in [0, 1]; NAN if layout, bits or k is invalid.
 */
AMQ_API double amq_blocked_bloom_formula_fpr(amq_blocked_layout layout, uint64_t n, uint64_t bits,
                                             uint32_t k);

/**
 * Add a key as amq_blocked_bloom_add does, safely beside other threads
 * adding to the same filter with this call and querying it with
 * amq_blocked_bloom_contains_concurrent (see the top of this header): each
 * 64-bit lane (two of the block's words) that holds some of the key's bits
 * gets them with one atomic OR (relaxed order), skipped when they are set
 * already. After the adding threads are joined the filter is bit for bit
 * the one amq_blocked_bloom_add of the same keys makes, in any order. A query on another thread is
 * certain to find the key once the add happens-before it; a query racing the add may answer either
 * way.
 * @param filter the filter; not NULL.
 * @param key the key's bytes; may be NULL when len is 0.
 * @param len the key's length in bytes.
 * Allocates: never. Complexity: one hash, one block: at most 4 (split) or
 * min(k, 8) (block) lane reads and atomic ORs, without AVX2; slower than
 * amq_blocked_bloom_add on one thread (docs/PERFORMANCE.md has both).
 * Thread safety: may run concurrently with itself and
 * amq_blocked_bloom_contains_concurrent on the same filter; no other call
 * that reads or changes the bits (the statistics included: they count
 * them) may overlap it.
 */
AMQ_API void amq_blocked_bloom_add_concurrent(amq_blocked_bloom *filter, const void *key,
                                              size_t len);

/**
 * Ask as amq_blocked_bloom_contains does, safely beside threads adding to
 * the filter with amq_blocked_bloom_add_concurrent: the block's 64-bit
 * lanes are read with atomic loads (relaxed order), without AVX2. A key whose add
 * happens-before the query is found.
 * @param filter the filter; not NULL.
 * @param key the key's bytes; may be NULL when len is 0.
 * @param len the key's length in bytes.
 * @return true: maybe present; false: certainly absent (at the time of the
 *   reads).
 * Allocates: never. Complexity: one hash, at most 8 lane reads in one block.
 * Thread safety: may run concurrently with amq_blocked_bloom_add_concurrent
 * and with any query.
 */
AMQ_API bool amq_blocked_bloom_contains_concurrent(const amq_blocked_bloom *filter, const void *key,
                                                   size_t len);

/** Intersection (bitwise AND) of into and other, as amq_bloom_intersect.
 *  @return AMQ_OK; AMQ_EINCOMPATIBLE as for the union.
 * @param diag on failure, what was wrong; may be NULL.
 */
AMQ_API int amq_blocked_bloom_intersect(amq_blocked_bloom *into, const amq_blocked_bloom *other,
                                        amq_diag *diag);

/**
 * Estimate the number of distinct keys added from the set bits X:
 * n = -blocks * ln(1 - X/m) / (1 - (1 - 1/w)^b), where a key sets b bits
 * in a unit of w bits (split: b = 1 per 32-bit word; block: b = k per
 * 512-bit block). Complexity: O(m) (counts the set bits).
 */
AMQ_API double amq_blocked_bloom_estimated_keys(const amq_blocked_bloom *filter);

/**
 * The FPR to expect now, from the actual fill of every block: the mean over
 * blocks of the chance that a random key's bits in that block are all set.
 * Complexity: O(m).
 */
AMQ_API double amq_blocked_bloom_expected_fpr(const amq_blocked_bloom *filter);

/** m, the number of bits (blocks * block bits). */
AMQ_API uint64_t amq_blocked_bloom_bits(const amq_blocked_bloom *filter);

/** The number of blocks. */
AMQ_API uint64_t amq_blocked_bloom_blocks(const amq_blocked_bloom *filter);

/** k, the bits set per key. */
AMQ_API uint32_t amq_blocked_bloom_hashes(const amq_blocked_bloom *filter);

/** The layout. */
AMQ_API amq_blocked_layout amq_blocked_bloom_layout(const amq_blocked_bloom *filter);

/** X, the number of set bits. Complexity: O(m). */
AMQ_API uint64_t amq_blocked_bloom_bits_set(const amq_blocked_bloom *filter);

/** The capacity the filter was sized for. */
AMQ_API uint64_t amq_blocked_bloom_capacity(const amq_blocked_bloom *filter);

/** The key hash; valid as long as the filter. */
AMQ_API const amq_hasher *amq_blocked_bloom_hasher(const amq_blocked_bloom *filter);

/** The block words, 32-bit, blocks * (block bits / 32) of them: the
 *  filter's bits as Parquet stores a split-block filter (little-endian on
 *  disk). Valid as long as the filter; do not modify. */
AMQ_API const uint32_t *amq_blocked_bloom_words(const amq_blocked_bloom *filter);

/** Estimated distinct keys held, from the non-zero counters as
 *  amq_bloom_estimated_keys does from set bits. O(1). */
AMQ_API double amq_counting_bloom_estimated_keys(const amq_counting_bloom *filter);

/** The FPR to expect now: (non-zero counters / m)^k. O(1). */
AMQ_API double amq_counting_bloom_expected_fpr(const amq_counting_bloom *filter);

/** m, the number of counters. */
AMQ_API uint64_t amq_counting_bloom_counters(const amq_counting_bloom *filter);

/** k, the counters per key. */
AMQ_API uint32_t amq_counting_bloom_hashes(const amq_counting_bloom *filter);

/** 4 or 8. */
AMQ_API uint32_t amq_counting_bloom_counter_bits(const amq_counting_bloom *filter);

/** The counters that are not 0. */
AMQ_API uint64_t amq_counting_bloom_nonzero(const amq_counting_bloom *filter);

/** The counters that are saturated. */
AMQ_API uint64_t amq_counting_bloom_saturated(const amq_counting_bloom *filter);

/** The capacity the filter was sized for. */
AMQ_API uint64_t amq_counting_bloom_capacity(const amq_counting_bloom *filter);

/** The key hash; valid as long as the filter. */
AMQ_API const amq_hasher *amq_counting_bloom_hasher(const amq_counting_bloom *filter);

/** Keys added (adds that answered 1); after a union, partly estimated (see
 *  amq_scalable_bloom_merge). */
AMQ_API uint64_t amq_scalable_bloom_keys(const amq_scalable_bloom *filter);

/** The number of stages. */
AMQ_API size_t amq_scalable_bloom_stages(const amq_scalable_bloom *filter);

/** Stage i (i < amq_scalable_bloom_stages), a classic filter owned by the
 *  scalable one: read it, never modify or free it. NULL when the stages are
 *  blocked (amq_scalable_bloom_params.stage_layout). */
AMQ_API const amq_bloom *amq_scalable_bloom_stage(const amq_scalable_bloom *filter, size_t i);

/** Keys the filter holds before it adds its next stage. */
AMQ_API uint64_t amq_scalable_bloom_capacity(const amq_scalable_bloom *filter);

/** Bytes of all stages' bits. */
AMQ_API uint64_t amq_scalable_bloom_memory_bytes(const amq_scalable_bloom *filter);

/** The FPR to expect now: 1 - prod(1 - f_i), where stage i's rate f_i is
 *  its fill to the power k_i, plus its keys / m_i^2 for the keys whose hash
 *  halves both coincide with a stored key's (which matters only in small
 *  stages); for blocked stages, the blocked formula at the stage's keys
 *  (amq_blocked_bloom_formula_fpr). */
AMQ_API double amq_scalable_bloom_expected_fpr(const amq_scalable_bloom *filter);

/** p, the bound on the compound false-positive rate, as used (the default
 *  filled in). */
AMQ_API double amq_scalable_bloom_fpr(const amq_scalable_bloom *filter);

/** s, the growth of each stage's capacity over the one before, as used. */
AMQ_API double amq_scalable_bloom_growth(const amq_scalable_bloom *filter);

/** r, the tightening of each stage's rate over the one before, as used. */
AMQ_API double amq_scalable_bloom_tightening(const amq_scalable_bloom *filter);

/** The key hash; valid as long as the filter. */
AMQ_API const amq_hasher *amq_scalable_bloom_hasher(const amq_scalable_bloom *filter);

#endif /* AMQ_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif /* AMQ_BLOOM_H */
