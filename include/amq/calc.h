/*
 * calc.h - the Bloom filter parameter calculator.
 *
 * A classic Bloom filter is described by four numbers: n keys, m bits, k hash
 * functions, and the false-positive rate p it then has. Any three determine
 * the fourth; n and p alone determine the optimal m and k. The relations,
 * with ln the natural logarithm:
 *
 *   k = round(m / n * ln 2)                   the optimal k for m and n
 *   m = ceil(-n * ln p / (ln 2)^2)            the optimal m for n and p
 *   n = ceil(-m / k * ln(1 - e^(ln p / k)))   keys m bits and k hashes hold at p
 *   p = (1 - e^(-k * n / m))^k                the rate at n, m, k
 *
 * For k = 5, m = 20000, n = 2000, p = 0.01 they give 7, 19171, 2031 and
 * 0.009430929226122474 (the k-th power is taken by repeated squaring, as in
 * the calculator these relations are published with; the exact value is
 * 0.0094309292261224729..., within one unit in the last place).
 * These are the classic filter's figures; blocked variants need more bits
 * for the same p (see bloom.h).
 *
 * The functions are pure computations: they never allocate and are safe
 * to call from any thread.
 */
#ifndef AMQ_CALC_H
#define AMQ_CALC_H

#include "amq/amq.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which of the four numbers are given (bit flags). */
enum amq_calc_known {
    AMQ_CALC_N = 1, /**< n, the number of keys, is given */
    AMQ_CALC_M = 2, /**< m, the number of bits, is given */
    AMQ_CALC_K = 4, /**< k, the number of hash functions, is given */
    AMQ_CALC_P = 8  /**< p, the false-positive rate, is given */
};

/** The four numbers of a classic Bloom filter. */
typedef struct amq_calc {
    uint64_t n; /**< keys (>= 1) */
    uint64_t m; /**< bits (>= 1) */
    uint32_t k; /**< hash functions (1..AMQ_CALC_MAX_K) */
    double p;   /**< false-positive rate: given, in (0, 1); or computed, when it
                     may round to 0 (a nearly empty filter) or 1 (a saturated one) */
    /** The false-positive rate the filter actually has at the final n, m, k
     *  (differs from p when p was a target and m, k were rounded). */
    double actual_p;
} amq_calc;

/** Largest k the calculator accepts or produces. */
#define AMQ_CALC_MAX_K 1024

/**
 * Optimal number of hash functions: k = round(m / n * ln 2), at least 1.
 * @param k receives k; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (m or n is 0); AMQ_ERANGE (k > AMQ_CALC_MAX_K).
 */
AMQ_API int amq_calc_optimal_k(uint32_t *k, uint64_t m, uint64_t n, amq_diag *diag);

/**
 * Optimal number of bits for n keys at rate p: m = ceil(-n ln p / (ln 2)^2).
 * @param m receives m; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (n = 0, p not in (0, 1)); AMQ_ERANGE (m would
 *   not fit 64 bits).
 */
AMQ_API int amq_calc_optimal_m(uint64_t *m, uint64_t n, double p, amq_diag *diag);

/**
 * Number of keys m bits and k hash functions hold at rate p:
 * n = ceil(-m / k * ln(1 - e^(ln p / k))).
 *
 * Rounding up follows the published relation: at the returned n the rate is
 * p or slightly above it, and at n - 1 it is below p.
 * @param n receives n (at least 1); not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (m = 0, k = 0, p not in (0, 1)); AMQ_ERANGE
 *   (k > AMQ_CALC_MAX_K, or n would not fit 64 bits).
 */
AMQ_API int amq_calc_capacity(uint64_t *n, uint64_t m, uint32_t k, double p, amq_diag *diag);

/**
 * False-positive rate of n keys in m bits with k hash functions:
 * p = (1 - e^(-k n / m))^k.
 * @param p receives p; not NULL. n = 0 gives 0; results may round to 0 or 1.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (m = 0 or k = 0); AMQ_ERANGE (k > AMQ_CALC_MAX_K).
 */
AMQ_API int amq_calc_fpr(double *p, uint64_t n, uint64_t m, uint32_t k, amq_diag *diag);

/**
 * Fill in the numbers that are not given.
 *
 * known says which fields of *io are given (AMQ_CALC_* flags). Accepted sets:
 *   n, p          -> m optimal, k optimal for that m, actual_p;
 *   n, p, k       -> m = ceil(-k n / ln(1 - p^(1/k))), actual_p;
 *   n, m          -> k optimal, p;
 *   n, m, k       -> p;
 *   m, k, p       -> n;
 *   m, p          -> n for the optimal k: n = floor(-m (ln 2)^2 / ln p), k;
 *   n, m, p       -> k optimal for m, n (actual_p may exceed p: compare);
 *   n, m, k, p    -> only actual_p is computed.
 * Any other set is AMQ_EINVAL with a message saying what is missing, e.g.
 * "only n and k given; also give p, or m". A given field that is out of
 * range fails with a message naming it; for m and p, m bits that cannot
 * hold a single key at p are AMQ_EINVAL. On failure *io is unchanged.
 *
 * @param io given fields in, all fields out; not NULL.
 * @param known AMQ_CALC_* flags.
 * @param diag receives a message on failure; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (p <= 0, p >= 1, n = 0, m = 0, k = 0, an
 *   unsupported set); AMQ_ERANGE (m past 2^64 - 1, k > AMQ_CALC_MAX_K).
 * Thread safety: safe.
 */
AMQ_API int amq_calc_solve(amq_calc *io, unsigned known, amq_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* AMQ_CALC_H */
