/* Tests for the Bloom filter parameter calculator: the published example,
 * the relations checked against an independent long-double evaluation of
 * the false-positive formula, the solve sets, and the error cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/calc.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* (1 - e^(-kn/m))^k in long double (64-bit significand): the reference the
 * library's double computations are checked against. */
static long double reference_rate(long double n, long double m, long double k)
{
    return powl(-expm1l(-k * n / m), k);
}

static void assert_calc_equal(const amq_calc *a, const amq_calc *b)
{
    assert_true(a->n == b->n);
    assert_true(a->m == b->m);
    assert_true(a->k == b->k);
    assert_true(memcmp(&a->p, &b->p, sizeof a->p) == 0);
    assert_true(memcmp(&a->actual_p, &b->actual_p, sizeof a->actual_p) == 0);
}

static void test_published_example(void **state)
{
    (void)state;
    uint32_t k = 0;
    assert_int_equal(amq_calc_optimal_k(&k, 20000, 2000, NULL), AMQ_OK);
    assert_int_equal(k, 7);
    uint64_t m = 0;
    assert_int_equal(amq_calc_optimal_m(&m, 2000, 0.01, NULL), AMQ_OK);
    assert_int_equal(m, 19171);
    uint64_t n = 0;
    assert_int_equal(amq_calc_capacity(&n, 20000, 5, 0.01, NULL), AMQ_OK);
    assert_int_equal(n, 2031);

    double p = 0.0;
    assert_int_equal(amq_calc_fpr(&p, 2000, 20000, 5, NULL), AMQ_OK);
    /* The published figure, to the last digit. */
    assert_true(p == 0.009430929226122474);
    char printed[32];
    snprintf(printed, sizeof printed, "%.16g", p);
    assert_string_equal(printed, "0.009430929226122474");
    /* The exact value, (1 - e^-0.5)^5 = 0.00943092922612247290390411941...
     * (40 digits with mpmath), lies within one ulp of it. */
    double exact = 0.00943092922612247290390411941384340302716;
    assert_true(p == exact || nextafter(exact, 1.0) == p || nextafter(exact, 0.0) == p);
}

static void test_published_example_through_solve(void **state)
{
    (void)state;
    amq_calc c = { .n = 2000, .m = 20000 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_M, NULL), AMQ_OK);
    assert_int_equal(c.k, 7);
    assert_true(c.p == c.actual_p);
    assert_true(fabsl(c.p - reference_rate(2000, 20000, 7)) < 1e-15L * c.p);

    c = (amq_calc){ .n = 2000, .p = 0.01 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_P, NULL), AMQ_OK);
    assert_int_equal(c.m, 19171);
    assert_int_equal(c.k, 7);
    assert_true(c.p == 0.01);
    assert_true(fabsl(c.actual_p - reference_rate(2000, 19171, 7)) < 1e-15L * c.actual_p);

    c = (amq_calc){ .m = 20000, .k = 5, .p = 0.01 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_M | AMQ_CALC_K | AMQ_CALC_P, NULL), AMQ_OK);
    assert_int_equal(c.n, 2031);
    assert_int_equal(c.k, 5);
    assert_int_equal(c.m, 20000);

    c = (amq_calc){ .n = 2000, .m = 20000, .k = 5 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_K, NULL), AMQ_OK);
    assert_true(c.p == 0.009430929226122474);
    assert_true(c.actual_p == c.p);
}

/* The figures of the article the calculator is checked against: a billion
 * keys at 1e-4 need about 19.17 Gbit (2.23 GiB) and 13 hash functions;
 * 100000 keys at 1/8192 about 1.87-1.88 Mbit (229 KiB). */
static void test_article_figures(void **state)
{
    (void)state;
    amq_calc c = { .n = 1000000000, .p = 1e-4 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_P, NULL), AMQ_OK);
    assert_true(c.m > 19160000000ULL && c.m < 19180000000ULL);
    double gib = (double)c.m / 8 / (1024.0 * 1024 * 1024);
    assert_true(gib >= 2.225 && gib < 2.235);
    assert_int_equal(c.k, 13);
    assert_true(c.actual_p > 0.99e-4 && c.actual_p < 1.01e-4);

    c = (amq_calc){ .n = 100000, .p = 1.0 / 8192 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_P, NULL), AMQ_OK);
    assert_true(c.m >= 1870000 && c.m <= 1880000);
    double kib = (double)c.m / 8 / 1024;
    assert_true(kib >= 228.5 && kib < 229.5);
    assert_int_equal(c.k, 13);
}

/* Random filters: each relation is the inverse it claims to be, judged by
 * the reference rate with a relative slack of 1e-9 for rounding. */
static void test_relations_consistent(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(0x63616c63));
    const long double slack = 1e-9L;
    for (int i = 0; i < 5000; i++) {
        uint64_t m = 64 + (amq_test_next(&rng) >> (24 + amq_test_below(&rng, 32)));
        uint32_t k = 1 + (uint32_t)amq_test_below(&rng, 24);
        double p = pow(10.0, -0.3 - 11.7 * (double)amq_test_below(&rng, 1u << 20) / (1u << 20));

        /* n from m, k, p rounds up: the rate reaches p at n, not at n - 1. */
        uint64_t n = 0;
        assert_int_equal(amq_calc_capacity(&n, m, k, p, NULL), AMQ_OK);
        assert_true(n >= 1);
        assert_true(reference_rate(n, m, k) >= p * (1 - slack));
        if (n > 1 && reference_rate(n - 1, m, k) > p * (1 + slack))
            fail_msg("m=%llu k=%u p=%g: n=%llu but n-1 already exceeds p", (unsigned long long)m, k,
                     p, (unsigned long long)n);

        /* fpr agrees with the reference. */
        double rate = 0.0;
        assert_int_equal(amq_calc_fpr(&rate, n, m, k, NULL), AMQ_OK);
        assert_true(fabsl(rate - reference_rate(n, m, k)) <= 1e-12L * rate);

        /* m for n, p and this k is the fewest bits keeping the rate <= p. */
        amq_calc c = { .n = n, .k = k, .p = p };
        assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_K | AMQ_CALC_P, NULL), AMQ_OK);
        assert_true(reference_rate(n, c.m, k) <= p * (1 + slack));
        assert_true(c.m == 1 || reference_rate(n, c.m - 1, k) >= p * (1 - slack));
        assert_true(fabsl(c.actual_p - reference_rate(n, c.m, k)) <= 1e-12L * c.actual_p);

        /* Optimal m: with the real-valued optimal k = m/n ln 2 the rate is
         * at most p, and one bit fewer is not enough. */
        uint64_t best_m = 0;
        assert_int_equal(amq_calc_optimal_m(&best_m, n, p, NULL), AMQ_OK);
        long double real_k = (long double)best_m / n * logl(2.0L);
        assert_true(reference_rate(n, best_m, real_k) <= p * (1 + slack));
        long double fewer_k = (long double)(best_m - 1) / n * logl(2.0L);
        assert_true(best_m == 1 || reference_rate(n, best_m - 1, fewer_k) >= p * (1 - slack));

        /* Optimal k is within one of the integer that minimises the rate. */
        uint32_t best_k = 0;
        if (amq_calc_optimal_k(&best_k, m, n, NULL) == AMQ_OK) {
            uint32_t argmin = 1;
            for (uint32_t j = 2; j <= best_k + 2 && j <= AMQ_CALC_MAX_K; j++)
                if (reference_rate(n, m, j) < reference_rate(n, m, argmin))
                    argmin = j;
            assert_true(best_k + 1 >= argmin && best_k <= argmin + 1);
        }

        /* m, p -> n rounds down: the real-valued optimum still meets p at
         * that n and no longer at n + 1. */
        c = (amq_calc){ .m = m, .p = p };
        if (amq_calc_solve(&c, AMQ_CALC_M | AMQ_CALC_P, NULL) == AMQ_OK) {
            long double ln2 = logl(2.0L);
            assert_true(reference_rate(c.n, m, (long double)m / c.n * ln2) <= p * (1 + slack));
            assert_true(reference_rate(c.n + 1, m, (long double)m / (c.n + 1) * ln2) >=
                        p * (1 - slack));
        } else {
            /* Refused only when not even one key fits. */
            assert_true(reference_rate(1, m, (long double)m * logl(2.0L)) > p * (1 - slack));
        }
    }
}

/* Where the plain formulas cancel, the library must not. */
static void test_accuracy_at_extremes(void **state)
{
    (void)state;
    /* A nearly empty filter: 1 - e^(-1e-15) is 1e-15 - 5e-31; computing
     * 1 - exp() in doubles would be off by about 10%. */
    double p = 0.0;
    assert_int_equal(amq_calc_fpr(&p, 1, 1000000000000000ULL, 1, NULL), AMQ_OK);
    assert_true(fabs(p - 1e-15) < 1e-26);

    /* k = 1, p = 1e-20: ln(1 - p) is -1e-20, which log(1 - p) loses
     * entirely (1 - 1e-20 == 1). m = 2^64 - 1 bits then hold
     * ceil(0.18) = 1 key, not 0. */
    uint64_t n = 0;
    assert_int_equal(amq_calc_capacity(&n, UINT64_MAX, 1, 1e-20, NULL), AMQ_OK);
    assert_int_equal(n, 1);
    assert_int_equal(amq_calc_capacity(&n, 1000000000000000ULL, 1, 1e-10, NULL), AMQ_OK);
    assert_int_equal(n, 100001); /* ceil(1e15 * (1e-10 + 5e-21)) */

    /* Large k: p^(1/k) is close to 1, so 1 - p^(1/k) needs expm1. */
    assert_int_equal(amq_calc_capacity(&n, 1000000000, 1000, 0.5, NULL), AMQ_OK);
    long double exact = -1000000000.0L / 1000 * logl(-expm1l(logl(0.5L) / 1000));
    assert_int_equal(n, (uint64_t)ceill(exact));

    /* n = 0 keys: nothing is set, nothing is a false positive. */
    assert_int_equal(amq_calc_fpr(&p, 0, 100, 3, NULL), AMQ_OK);
    assert_true(p == 0.0);
}

static void test_solve_sets(void **state)
{
    (void)state;
    /* n, p, k: m for that k, at least as large as the optimal m. */
    amq_calc c = { .n = 1000000, .p = 0.001, .k = 4 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_P | AMQ_CALC_K, NULL), AMQ_OK);
    assert_int_equal(c.k, 4);
    uint64_t optimal = 0;
    assert_int_equal(amq_calc_optimal_m(&optimal, 1000000, 0.001, NULL), AMQ_OK);
    assert_true(c.m > optimal);
    assert_true(c.actual_p <= 0.001 * (1 + 1e-12));
    assert_true(c.p == 0.001);

    /* n, m, p: k optimal for m, n; p kept as the target. */
    c = (amq_calc){ .n = 2000, .m = 20000, .p = 0.001 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_P, NULL), AMQ_OK);
    assert_int_equal(c.k, 7);
    assert_true(c.p == 0.001);
    assert_true(c.actual_p > 0.001); /* 10 bits per key cannot reach 0.1% */

    /* n, m, k, p: only actual_p. */
    c = (amq_calc){ .n = 2000, .m = 20000, .k = 5, .p = 0.5 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_K | AMQ_CALC_P, NULL),
                     AMQ_OK);
    assert_true(c.n == 2000 && c.m == 20000 && c.k == 5 && c.p == 0.5);
    assert_true(c.actual_p == 0.009430929226122474);

    /* m, p: the inverse of n, p (up to the rounding of m). */
    c = (amq_calc){ .m = 19171, .p = 0.01 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_M | AMQ_CALC_P, NULL), AMQ_OK);
    assert_int_equal(c.n, 2000);
    assert_int_equal(c.k, 7);

    /* Fields that are not given are ignored on input. */
    c = (amq_calc){ .n = 2000, .m = 0, .k = 0, .p = 0.01, .actual_p = -1 };
    amq_calc d = { .n = 2000, .m = 777, .k = 9999, .p = 0.01, .actual_p = 3 };
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_P, NULL), AMQ_OK);
    assert_int_equal(amq_calc_solve(&d, AMQ_CALC_N | AMQ_CALC_P, NULL), AMQ_OK);
    assert_calc_equal(&c, &d);
}

/* Every set that is not accepted fails, leaves *io alone and names what to
 * add. */
static void test_unsupported_sets(void **state)
{
    (void)state;
    static const struct {
        unsigned known;
        const char *needle; /* a substring the message must contain */
    } cases[] = {
        { 0, "give n and p" },
        { AMQ_CALC_N, "also give p, or m" },
        { AMQ_CALC_M, "also give n, or p" },
        { AMQ_CALC_K, "also give n and p, or n and m, or m and p" },
        { AMQ_CALC_P, "also give n, or m" },
        { AMQ_CALC_N | AMQ_CALC_K, "also give p, or m" },
        { AMQ_CALC_M | AMQ_CALC_K, "also give n, or p" },
        { AMQ_CALC_K | AMQ_CALC_P, "also give n, or m" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amq_calc c = { .n = 10, .m = 100, .k = 3, .p = 0.1, .actual_p = 0.5 };
        amq_calc before = c;
        amq_diag diag = { .message = "" };
        assert_int_equal(amq_calc_solve(&c, cases[i].known, &diag), AMQ_EINVAL);
        assert_calc_equal(&c, &before);
        if (!strstr(diag.message, cases[i].needle))
            fail_msg("set 0x%x: message '%s' lacks '%s'", cases[i].known, diag.message,
                     cases[i].needle);
        assert_int_equal(amq_calc_solve(&c, cases[i].known, NULL), AMQ_EINVAL);
    }
    amq_calc c = { .n = 10, .p = 0.1 };
    amq_diag diag;
    assert_int_equal(amq_calc_solve(&c, AMQ_CALC_N | AMQ_CALC_P | 16, &diag), AMQ_EINVAL);
}

/* Solve with known fields and expect status and a message naming what. */
static void expect_solve_error(amq_calc c, unsigned known, int status, const char *needle)
{
    amq_calc before = c;
    amq_diag diag = { .message = "" };
    int got = amq_calc_solve(&c, known, &diag);
    if (got != status)
        fail_msg("expected status %d, got %d (%s)", status, got, diag.message);
    assert_calc_equal(&c, &before);
    if (!strstr(diag.message, needle))
        fail_msg("message '%s' lacks '%s'", diag.message, needle);
}

static void test_errors(void **state)
{
    (void)state;
    const unsigned np = AMQ_CALC_N | AMQ_CALC_P;
    const unsigned nmk = AMQ_CALC_N | AMQ_CALC_M | AMQ_CALC_K;
    expect_solve_error((amq_calc){ .n = 0, .p = 0.01 }, np, AMQ_EINVAL, "n (keys)");
    expect_solve_error((amq_calc){ .n = 10, .p = 0 }, np, AMQ_EINVAL, "p (false-positive rate)");
    expect_solve_error((amq_calc){ .n = 10, .p = 1 }, np, AMQ_EINVAL, "p (false-positive rate)");
    expect_solve_error((amq_calc){ .n = 10, .p = -0.5 }, np, AMQ_EINVAL, "p (");
    expect_solve_error((amq_calc){ .n = 10, .p = NAN }, np, AMQ_EINVAL, "p (");
    expect_solve_error((amq_calc){ .n = 10, .p = INFINITY }, np, AMQ_EINVAL, "p (");
    expect_solve_error((amq_calc){ .n = 10, .m = 0, .k = 3 }, nmk, AMQ_EINVAL, "m (bits)");
    expect_solve_error((amq_calc){ .n = 10, .m = 100, .k = 0 }, nmk, AMQ_EINVAL, "k (hash");
    expect_solve_error((amq_calc){ .n = 10, .m = 100, .k = AMQ_CALC_MAX_K + 1 }, nmk, AMQ_ERANGE,
                       "k (hash");
    /* m past 2^64 - 1: 10^19 keys at 1e-300 need about 1.4e22 bits. */
    expect_solve_error((amq_calc){ .n = 10000000000000000000ULL, .p = 1e-300 }, np, AMQ_ERANGE,
                       "2^64");
    expect_solve_error((amq_calc){ .n = 10000000000000000000ULL, .p = 0.1, .k = 1 },
                       np | AMQ_CALC_K, AMQ_ERANGE, "2^64");
    /* k past the maximum: few keys in many bits. */
    expect_solve_error((amq_calc){ .n = 1, .m = 1000000 }, AMQ_CALC_N | AMQ_CALC_M, AMQ_ERANGE,
                       "optimal k");
    expect_solve_error((amq_calc){ .n = 1, .p = 4.9e-324 }, np, AMQ_ERANGE, "optimal k");
    /* n past 2^64 - 1. */
    expect_solve_error((amq_calc){ .m = UINT64_MAX, .k = 1, .p = 0.999 },
                       AMQ_CALC_M | AMQ_CALC_K | AMQ_CALC_P, AMQ_ERANGE, "2^64");
    /* Too few bits for even one key. */
    expect_solve_error((amq_calc){ .m = 3, .p = 0.001 }, AMQ_CALC_M | AMQ_CALC_P, AMQ_EINVAL,
                       "one key");

    uint64_t m = 0, n = 0;
    uint32_t k = 0;
    double p = 0;
    assert_int_equal(amq_calc_optimal_m(&m, 0, 0.01, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_optimal_m(&m, 10, 0, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_optimal_m(&m, 10, 1, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_optimal_m(&m, 10, NAN, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_optimal_m(&m, 10000000000000000000ULL, 1e-300, NULL), AMQ_ERANGE);
    assert_int_equal(amq_calc_optimal_m(&m, UINT64_MAX, 0.5, NULL), AMQ_ERANGE);
    assert_int_equal(amq_calc_optimal_k(&k, 0, 10, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_optimal_k(&k, 10, 0, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_optimal_k(&k, UINT64_MAX, 1, NULL), AMQ_ERANGE);
    assert_int_equal(amq_calc_optimal_k(&k, 1, UINT64_MAX, NULL), AMQ_OK);
    assert_int_equal(k, 1);
    assert_int_equal(amq_calc_capacity(&n, 0, 3, 0.01, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_capacity(&n, 100, 0, 0.01, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_capacity(&n, 100, 3, 0, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_capacity(&n, 100, 3, NAN, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_capacity(&n, 100, AMQ_CALC_MAX_K + 1, 0.5, NULL), AMQ_ERANGE);
    assert_int_equal(amq_calc_capacity(&n, UINT64_MAX, 1, 0.999, NULL), AMQ_ERANGE);
    assert_int_equal(amq_calc_fpr(&p, 10, 0, 3, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_fpr(&p, 10, 100, 0, NULL), AMQ_EINVAL);
    assert_int_equal(amq_calc_fpr(&p, 10, 100, AMQ_CALC_MAX_K + 1, NULL), AMQ_ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_example),
        cmocka_unit_test(test_published_example_through_solve),
        cmocka_unit_test(test_article_figures),
        cmocka_unit_test(test_relations_consistent),
        cmocka_unit_test(test_accuracy_at_extremes),
        cmocka_unit_test(test_solve_sets),
        cmocka_unit_test(test_unsupported_sets),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
