/*
 * calc.c - the classic Bloom filter's parameter calculator.
 *
 * A classic Bloom filter of m bits with k hash functions, after n distinct
 * keys, has each bit still clear with probability (1 - 1/m)^(kn), which is
 * e^(-kn/m) to within O(1/m). A query for an absent key meets k set bits
 * with probability
 *
 *   p = (1 - e^(-kn/m))^k                                    (1)
 *
 * Solving (1) for each of the other quantities gives the calculator:
 *
 *   k = round(m / n * ln 2)              minimises (1) over k for fixed m, n
 *   m = ceil(-n ln p / (ln 2)^2)         the fewest bits reaching p, with
 *                                        k at its optimum (then p = 2^-k)
 *   n = ceil(-m / k * ln(1 - p^(1/k)))   (1) solved for n
 *   m = ceil(-k n / ln(1 - p^(1/k)))     (1) solved for m, k fixed
 *   n = floor(-m (ln 2)^2 / ln p)        the optimal-m relation solved for n
 *
 * Worked example (the one calc.h quotes): m = 20000, n = 2000 gives
 * k = round(6.93) = 7; n = 2000, p = 0.01 gives m = ceil(19170.12) = 19171;
 * m = 20000, k = 5, p = 0.01 gives n = ceil(2030.70) = 2031; n = 2000,
 * m = 20000, k = 5 gives p = (1 - e^-0.5)^5 = 0.009430929226122474.
 *
 * k is an integer, so the k-th power in (1) is taken by repeated squaring
 * (at most 2 log2 k multiplications, each correctly rounded: a relative
 * error of a few ulps). That is how the published calculator these
 * relations come from computes it (Go's math.Pow squares for integral
 * exponents), and it reproduces its figures to the last digit: the example
 * prints 0.009430929226122474, where pow() would give the adjacent double
 * ...473 (the exact value is 0.00943092922612247290...).
 *
 * Numerics. The naive forms lose accuracy where a filter is sparse or k is
 * large, so:
 *   - 1 - e^(-x) is computed as -expm1(-x): for small kn/m (a lightly
 *     loaded filter) 1 - e^(-x) cancels to a few correct digits;
 *   - ln(1 - p^(1/k)) = ln(1 - e^a) with a = ln(p)/k is "log1mexp":
 *     ln(-expm1(a)) when a > -ln 2 (e^a near 1, large k or p near 1) and
 *     log1p(-e^a) otherwise (e^a small, k = 1 with tiny p), the split
 *     recommended by Maechler, "Accurately computing log(1 - exp(-|a|))"
 *     (2012), accurate to a few ulps over the whole range;
 *   - (ln 2)^2 is a correctly rounded constant, not a product of two
 *     rounded logarithms.
 * n and m pass through doubles, so beyond 2^53 they carry the double's
 * relative error (about 1e-16); a result that would reach 2^64 is
 * AMQ_ERANGE rather than a wrapped integer.
 *
 * Limits and errors: n, m, k must be at least 1 and p strictly between 0
 * and 1 (a NaN is not) - AMQ_EINVAL otherwise; k above AMQ_CALC_MAX_K and
 * counts past 2^64 - 1 are AMQ_ERANGE. amq_calc_solve says which field was
 * wrong, or which fields are missing, in its amq_diag.
 */
#include "amq/calc.h"
#include "core/util.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

static const double ln2 = 0.693147180559945309417232121458176568;
static const double ln2_squared = 0.480453013918201424667102526326664972;
/* The smallest double that no longer fits uint64_t. */
static const double two_to_64 = 18446744073709551616.0;

static const unsigned all_known = AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_K | AMQ_CALC_P;

/* ln(1 - e^a) for a < 0, accurate on both sides of a = -ln 2. */
static double log1mexp(double a)
{
    return a > -ln2 ? log(-expm1(a)) : log1p(-exp(a));
}

/* Convert an integral, nonnegative double to uint64_t when it fits. */
static bool fits_u64(double x, uint64_t *out)
{
    if (!(x >= 0.0 && x < two_to_64))
        return false;
    *out = (uint64_t)x;
    return true;
}

static int check_n(uint64_t n, amq_diag *diag)
{
    if (n == 0)
        return amq__fail(diag, AMQ_EINVAL, "n (keys) is 0; it must be at least 1");
    return AMQ_OK;
}

static int check_m(uint64_t m, amq_diag *diag)
{
    if (m == 0)
        return amq__fail(diag, AMQ_EINVAL, "m (bits) is 0; it must be at least 1");
    return AMQ_OK;
}

static int check_k(uint32_t k, amq_diag *diag)
{
    if (k == 0)
        return amq__fail(diag, AMQ_EINVAL, "k (hash functions) is 0; it must be at least 1");
    if (k > AMQ_CALC_MAX_K)
        return amq__fail(diag, AMQ_ERANGE, "k (hash functions) = %lu is above the maximum, %d",
                         (unsigned long)k, AMQ_CALC_MAX_K);
    return AMQ_OK;
}

static int check_p(double p, amq_diag *diag)
{
    if (!(p > 0.0 && p < 1.0))
        return amq__fail(diag, AMQ_EINVAL,
                         "p (false-positive rate) = %g is not between 0 and 1 (exclusive)", p);
    return AMQ_OK;
}

/* base^k by repeated squaring. */
static double integer_power(double base, uint32_t k)
{
    double result = 1.0;
    while (k) {
        if (k & 1)
            result *= base;
        base *= base;
        k >>= 1;
    }
    return result;
}

/* (1): the rate n keys give in m bits with k hashes. */
static double rate(uint64_t n, uint64_t m, uint32_t k)
{
    double x = (double)k * (double)n / (double)m;
    return integer_power(-expm1(-x), k);
}

static int solve_k(uint32_t *k, uint64_t m, uint64_t n, amq_diag *diag)
{
    double exact = (double)m / (double)n * ln2;
    double rounded = round(exact);
    if (rounded > AMQ_CALC_MAX_K)
        return amq__fail(diag, AMQ_ERANGE,
                         "the optimal k for m = %llu bits and n = %llu keys is %.0f, above the "
                         "maximum, %d",
                         (unsigned long long)m, (unsigned long long)n, rounded, AMQ_CALC_MAX_K);
    *k = rounded < 1.0 ? 1 : (uint32_t)rounded;
    return AMQ_OK;
}

static int solve_m(uint64_t *m, uint64_t n, double p, amq_diag *diag)
{
    double bits = ceil(-(double)n * log(p) / ln2_squared);
    if (!fits_u64(bits, m))
        return amq__fail(diag, AMQ_ERANGE,
                         "n = %llu keys at p = %g need %.4g bits, past the maximum 2^64 - 1",
                         (unsigned long long)n, p, bits);
    return AMQ_OK;
}

static int solve_m_for_k(uint64_t *m, uint64_t n, uint32_t k, double p, amq_diag *diag)
{
    double bits = ceil(-(double)k * (double)n / log1mexp(log(p) / k));
    if (!fits_u64(bits, m))
        return amq__fail(diag, AMQ_ERANGE,
                         "n = %llu keys at p = %g with k = %lu need %.4g bits, past the maximum "
                         "2^64 - 1",
                         (unsigned long long)n, p, (unsigned long)k, bits);
    return AMQ_OK;
}

static int solve_n(uint64_t *n, uint64_t m, uint32_t k, double p, amq_diag *diag)
{
    double keys = ceil((double)m / k * -log1mexp(log(p) / k));
    if (!fits_u64(keys, n))
        return amq__fail(diag, AMQ_ERANGE,
                         "m = %llu bits with k = %lu hold %.4g keys at p = %g, past the maximum "
                         "2^64 - 1",
                         (unsigned long long)m, (unsigned long)k, keys, p);
    return AMQ_OK;
}

static int solve_n_for_optimal_k(uint64_t *n, uint64_t m, double p, amq_diag *diag)
{
    double keys = floor(-(double)m * ln2_squared / log(p));
    if (keys < 1.0)
        return amq__fail(diag, AMQ_EINVAL,
                         "m = %llu bits cannot hold even one key at p = %g (one key needs %.0f)",
                         (unsigned long long)m, p, ceil(-log(p) / ln2_squared));
    if (!fits_u64(keys, n))
        return amq__fail(diag, AMQ_ERANGE,
                         "m = %llu bits hold %.4g keys at p = %g, past the maximum 2^64 - 1",
                         (unsigned long long)m, keys, p);
    return AMQ_OK;
}

int amq_calc_optimal_k(uint32_t *k, uint64_t m, uint64_t n, amq_diag *diag)
{
    assert(k);
    int status = check_m(m, diag);
    if (status == AMQ_OK)
        status = check_n(n, diag);
    if (status == AMQ_OK)
        status = solve_k(k, m, n, diag);
    return status;
}

int amq_calc_optimal_m(uint64_t *m, uint64_t n, double p, amq_diag *diag)
{
    assert(m);
    int status = check_n(n, diag);
    if (status == AMQ_OK)
        status = check_p(p, diag);
    if (status == AMQ_OK)
        status = solve_m(m, n, p, diag);
    return status;
}

int amq_calc_capacity(uint64_t *n, uint64_t m, uint32_t k, double p, amq_diag *diag)
{
    assert(n);
    int status = check_m(m, diag);
    if (status == AMQ_OK)
        status = check_k(k, diag);
    if (status == AMQ_OK)
        status = check_p(p, diag);
    if (status == AMQ_OK)
        status = solve_n(n, m, k, p, diag);
    return status;
}

int amq_calc_fpr(double *p, uint64_t n, uint64_t m, uint32_t k, amq_diag *diag)
{
    assert(p);
    int status = check_m(m, diag);
    if (status == AMQ_OK)
        status = check_k(k, diag);
    if (status == AMQ_OK)
        *p = rate(n, m, k);
    return status;
}

/* The sets of given fields amq_calc_solve accepts, in the order its
 * messages suggest them. */
static const unsigned accepted_sets[] = {
    AMQ_CALC_N | AMQ_CALC_P,
    AMQ_CALC_N | AMQ_CALC_M,
    AMQ_CALC_M | AMQ_CALC_P,
    AMQ_CALC_N | AMQ_CALC_K | AMQ_CALC_P,
    AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_K,
    AMQ_CALC_M | AMQ_CALC_K | AMQ_CALC_P,
    AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_P,
    AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_K | AMQ_CALC_P,
};

/* Append the names of the fields in set to buffer as "n", "n and p" or
 * "n, m and p". */
static void append_fields(char *buffer, size_t size, unsigned set)
{
    static const struct {
        unsigned flag;
        const char *name;
    } fields[] = {
        { AMQ_CALC_N, "n" }, { AMQ_CALC_M, "m" }, { AMQ_CALC_K, "k" }, { AMQ_CALC_P, "p" }
    };
    int total = __builtin_popcount(set), written = 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!(set & fields[i].flag))
            continue;
        const char *separator = written == 0 ? "" : written == total - 1 ? " and " : ", ";
        size_t used = strlen(buffer);
        snprintf(buffer + used, size - used, "%s%s", separator, fields[i].name);
        written++;
    }
}

/* Explain an unsupported set of given fields: what was given, and the
 * smallest additions that would make an accepted set. */
static int fail_missing(unsigned known, amq_diag *diag)
{
    if (known == 0)
        return amq__fail(diag, AMQ_EINVAL,
                         "nothing given: give n and p, n and m, m and p, or any three of n, m, k, "
                         "p");
    size_t set_count = sizeof accepted_sets / sizeof accepted_sets[0];
    int fewest = 4;
    for (size_t i = 0; i < set_count; i++)
        if ((accepted_sets[i] & known) == known &&
            __builtin_popcount(accepted_sets[i] & ~known) < fewest)
            fewest = __builtin_popcount(accepted_sets[i] & ~known);

    char message[sizeof diag->message] = "only ";
    append_fields(message, sizeof message, known);
    const char *lead = " given; also give ";
    for (size_t i = 0; i < set_count; i++) {
        unsigned missing = accepted_sets[i] & ~known;
        if ((accepted_sets[i] & known) != known || __builtin_popcount(missing) != fewest)
            continue;
        size_t used = strlen(message);
        snprintf(message + used, sizeof message - used, "%s", lead);
        append_fields(message, sizeof message, missing);
        lead = ", or ";
    }
    return amq__fail(diag, AMQ_EINVAL, "%s", message);
}

int amq_calc_solve(amq_calc *io, unsigned known, amq_diag *diag)
{
    assert(io);
    if (known & ~all_known)
        return amq__fail(diag, AMQ_EINVAL, "unknown AMQ_CALC_* flags 0x%x", known & ~all_known);

    amq_calc r = *io;
    int status = AMQ_OK;
    if (status == AMQ_OK && (known & AMQ_CALC_N))
        status = check_n(r.n, diag);
    if (status == AMQ_OK && (known & AMQ_CALC_M))
        status = check_m(r.m, diag);
    if (status == AMQ_OK && (known & AMQ_CALC_K))
        status = check_k(r.k, diag);
    if (status == AMQ_OK && (known & AMQ_CALC_P))
        status = check_p(r.p, diag);
    if (status != AMQ_OK)
        return status;

    switch (known) {
    case AMQ_CALC_N | AMQ_CALC_P:
        status = solve_m(&r.m, r.n, r.p, diag);
        if (status == AMQ_OK)
            status = solve_k(&r.k, r.m, r.n, diag);
        break;
    case AMQ_CALC_N | AMQ_CALC_K | AMQ_CALC_P:
        status = solve_m_for_k(&r.m, r.n, r.k, r.p, diag);
        break;
    case AMQ_CALC_N | AMQ_CALC_M:
    case AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_P:
        status = solve_k(&r.k, r.m, r.n, diag);
        break;
    case AMQ_CALC_M | AMQ_CALC_K | AMQ_CALC_P:
        status = solve_n(&r.n, r.m, r.k, r.p, diag);
        break;
    case AMQ_CALC_M | AMQ_CALC_P:
        status = solve_n_for_optimal_k(&r.n, r.m, r.p, diag);
        if (status == AMQ_OK)
            status = solve_k(&r.k, r.m, r.n, diag);
        break;
    case AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_K:
    case AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_K | AMQ_CALC_P:
        break;
    default:
        return fail_missing(known, diag);
    }
    if (status != AMQ_OK)
        return status;

    r.actual_p = rate(r.n, r.m, r.k);
    if (!(known & AMQ_CALC_P))
        r.p = r.actual_p;
    *io = r;
    return AMQ_OK;
}
