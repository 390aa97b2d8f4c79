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
 * All calls on one filter may run concurrently if none of them modifies it
 * (add, union, intersect); modifying calls need exclusive access.
 */
#ifndef AMQ_BLOOM_H
#define AMQ_BLOOM_H

#include "amq/amq.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

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
 * Create an empty classic Bloom filter.
 *
 * With capacity and fpr: m = ceil(-n ln p / (ln 2)^2), k = round(m/n ln 2)
 * (the relations of calc.h). With bits: that m; k given, or optimal for the
 * capacity (when given), or for the capacity that m holds at fpr.
 *
 * @param out receives the filter; not NULL.
 * @param params the sizing; not NULL.
 * @return AMQ_OK; AMQ_EINVAL (neither capacity nor bits; fpr outside (0, 1);
 *   an invalid hasher); AMQ_ERANGE (m outside [AMQ_BLOOM_MIN_BITS,
 *   AMQ_BLOOM_MAX_BITS] or k above AMQ_BLOOM_MAX_HASHES); AMQ_ENOMEM.
 * Allocates: ceil(m/64) 64-bit words, zeroed.
 */
AMQ_API int amq_bloom_new(amq_bloom **out, const amq_bloom_params *params);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_bloom_free(amq_bloom *filter);

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
 * Ask whether a key may be in the filter.
 * @return true: maybe present; false: certainly absent.
 * Allocates: never. Complexity: one hash, at most k bit reads (stops at the
 * first clear bit).
 */
AMQ_API bool amq_bloom_contains(const amq_bloom *filter, const void *key, size_t len);

/** As amq_bloom_contains, by the key's 128-bit hash. */
AMQ_API bool amq_bloom_contains_hash(const amq_bloom *filter, amq_u128 hash);

/**
 * Ask about many keys at once, faster than one by one on large filters: the
 * keys are hashed in groups and their bits prefetched before they are read,
 * so the memory accesses of a group overlap.
 * @param results receives count bytes: 1 maybe present, 0 certainly absent.
 * Allocates: never.
 */
AMQ_API void amq_bloom_contains_many(const amq_bloom *filter, const void *const *keys,
                                     const size_t *lens, size_t count, uint8_t *results);

/**
 * Estimate the number of distinct keys added from the number of set bits X:
 * n = -(m/k) ln(1 - X/m) (Swamidass and Baldi, 2007). O(1): X is kept as
 * keys are added.
 * @return the estimate; infinity when every bit is set.
 */
AMQ_API double amq_bloom_estimated_count(const amq_bloom *filter);

/**
 * The false-positive rate to expect now, from the fill: (X/m)^k.
 */
AMQ_API double amq_bloom_expected_fpr(const amq_bloom *filter);

/**
 * Make into the union of into and other (bitwise OR): it then answers
 * "maybe" for every key either filter answered "maybe" for, and equals the
 * filter built from both key sets.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE if m, k or the hasher differ.
 */
AMQ_API int amq_bloom_union(amq_bloom *into, const amq_bloom *other);

/**
 * Make into the intersection of into and other (bitwise AND). Every key in
 * both sets stays "maybe"; the result's FPR is at most either input's, and
 * its estimated count overstates the true intersection.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE if m, k or the hasher differ.
 */
AMQ_API int amq_bloom_intersect(amq_bloom *into, const amq_bloom *other);

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

#ifdef __cplusplus
}
#endif

#endif /* AMQ_BLOOM_H */
