/*
 * Tests for the counting Bloom filter (src/bloom/counting_bloom.c): sizing and
 * probing identical to the classic filter's (its non-zero counters are the
 * classic filter's set bits), no false negatives, the FPR within a binomial
 * tolerance, removal back to all-zero counters, removal of certainly absent
 * keys changing nothing, keys whose positions repeat, saturation, a
 * randomized model against an exact multiset, merge as a saturating sum,
 * the batch add against the single one, save/load through the generic
 * handle, and damaged files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/calc.h"
#include "bloom/bloom_internal.h"
#include "core/format.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

static amq_counting_bloom *new_filter(uint64_t capacity, double fpr, uint32_t counter_bits)
{
    amq_counting_bloom_params params = { .capacity = capacity,
                                         .fpr = fpr,
                                         .counter_bits = counter_bits };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_counting_bloom *f = NULL;
    assert_int_equal(amq_counting_bloom_new(&f, &params, NULL), AMQ_OK);
    return f;
}

static void add_keys(amq_counting_bloom *f, uint64_t set, uint64_t first, uint64_t end)
{
    for (uint64_t i = first; i < end; i++) {
        amq_test_key key = amq_test_make_key(seed, set, i);
        amq_counting_bloom_add(f, &key, sizeof key);
    }
}

static void assert_valid(const amq_counting_bloom *f)
{
    amq_diag diag = { .message = "" };
    if (amq__counting_bloom_check(f, &diag) != AMQ_OK)
        fail_msg("invariant broken: %s", diag.message);
}

/* Both filters have the same counters, counter for counter. */
static void assert_same_counters(const amq_counting_bloom *a, const amq_counting_bloom *b)
{
    assert_int_equal(amq_counting_bloom_counters(a), amq_counting_bloom_counters(b));
    for (uint64_t i = 0; i < amq_counting_bloom_counters(a); i++) {
        uint32_t x = amq__counting_bloom_counter(a, i), y = amq__counting_bloom_counter(b, i);
        if (x != y)
            fail_msg("counter %llu is %u in one filter and %u in the other", (unsigned long long)i,
                     x, y);
    }
    assert_int_equal(amq_counting_bloom_nonzero(a), amq_counting_bloom_nonzero(b));
    assert_int_equal(amq_counting_bloom_saturated(a), amq_counting_bloom_saturated(b));
}

/* ---- sizing --------------------------------------------------------------------- */

static void test_sizing_is_the_classic_filters(void **state)
{
    (void)state;
    struct {
        uint64_t capacity, counters;
        double fpr;
        uint32_t hashes;
    } cases[] = {
        { 1000000, 0, 0.01, 0 }, { 1000000, 0, 0.001, 0 }, { 12345, 0, 0.2, 0 },
        { 0, 1 << 20, 0.01, 3 }, { 0, 100000, 0.05, 0 },   { 1, 0, 0.5, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amq_bloom_params classic_params = { .capacity = cases[i].capacity,
                                            .fpr = cases[i].fpr,
                                            .bits = cases[i].counters,
                                            .hashes = cases[i].hashes };
        amq_counting_bloom_params params = { .capacity = cases[i].capacity,
                                             .fpr = cases[i].fpr,
                                             .counters = cases[i].counters,
                                             .hashes = cases[i].hashes };
        amq_bloom *classic = NULL;
        amq_counting_bloom *f = NULL;
        assert_int_equal(amq_bloom_new(&classic, &classic_params, NULL), AMQ_OK);
        assert_int_equal(amq_counting_bloom_new(&f, &params, NULL), AMQ_OK);
        assert_int_equal(amq_counting_bloom_counters(f), amq_bloom_bits(classic));
        assert_int_equal(amq_counting_bloom_hashes(f), amq_bloom_hashes(classic));
        assert_int_equal(amq_counting_bloom_capacity(f), amq_bloom_capacity(classic));
        assert_int_equal(amq_counting_bloom_counter_bits(f), 4);
        assert_int_equal(amq_counting_bloom_hasher(f)->kind, AMQ_HASH_XXH3);
        assert_int_equal(amq_counting_bloom_nonzero(f), 0);
        assert_int_equal(amq_counting_bloom_saturated(f), 0);
        assert_true(amq_counting_bloom_expected_fpr(f) == 0);
        assert_true(amq_counting_bloom_estimated_keys(f) == 0);
        assert_valid(f);
        amq_bloom_free(classic);
        amq_counting_bloom_free(f);
    }
    /* At 1% the optimal filter has k = 7 and 9.59 counters per key. */
    amq_counting_bloom *f = new_filter(1000000, 0.01, 8);
    uint64_t m = 0;
    assert_int_equal(amq_calc_optimal_m(&m, 1000000, 0.01, NULL), AMQ_OK);
    assert_int_equal(amq_counting_bloom_counters(f), m);
    assert_int_equal(amq_counting_bloom_hashes(f), 7);
    assert_int_equal(amq_counting_bloom_counter_bits(f), 8);
    amq_counting_bloom_free(f);
}

static void test_sizing_errors(void **state)
{
    (void)state;
    amq_counting_bloom *f = (amq_counting_bloom *)&f;
    struct {
        amq_counting_bloom_params params;
        int status;
    } cases[] = {
        { { .capacity = 0 }, AMQ_EINVAL },
        { { .capacity = 1000, .fpr = 1.5 }, AMQ_EINVAL },
        { { .capacity = 1000, .fpr = -0.1 }, AMQ_EINVAL },
        { { .capacity = 1000, .counter_bits = 5 }, AMQ_EINVAL },
        { { .capacity = 1000, .counter_bits = 16 }, AMQ_EINVAL },
        { { .capacity = 1000000000000000ULL, .fpr = 0.01 }, AMQ_ERANGE },
        { { .counters = 1000, .hashes = AMQ_BLOOM_MAX_HASHES + 1 }, AMQ_ERANGE },
        { { .counters = 10 }, AMQ_ERANGE },
        { { .capacity = 10, .hasher = { .kind = (amq_hash_kind)9 } }, AMQ_EINVAL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int status = amq_counting_bloom_new(&f, &cases[i].params, NULL);
        if (status != cases[i].status)
            fail_msg("case %zu: status %d, expected %d", i, status, cases[i].status);
        assert_null(f);
    }
    amq_counting_bloom_free(NULL);
}

/* ---- the same positions as the classic filter ------------------------------------ */

/* A counting filter and a classic filter with the same parameters and
 * hasher: the non-zero counters are exactly the set bits, and so every
 * figure derived from them agrees. */
static void check_matches_classic(const amq_counting_bloom *f, const amq_bloom *classic)
{
    const uint64_t *words = amq__bloom_words(classic);
    assert_int_equal(amq_counting_bloom_counters(f), amq_bloom_bits(classic));
    for (uint64_t i = 0; i < amq_bloom_bits(classic); i++) {
        bool bit = (words[i >> 6] >> (i & 63)) & 1;
        if ((amq__counting_bloom_counter(f, i) != 0) != bit)
            fail_msg("counter %llu is %u, the classic filter's bit is %d", (unsigned long long)i,
                     amq__counting_bloom_counter(f, i), bit);
    }
    assert_int_equal(amq_counting_bloom_nonzero(f), amq_bloom_bits_set(classic));
    assert_true(amq_counting_bloom_expected_fpr(f) == amq_bloom_expected_fpr(classic));
    assert_true(amq_counting_bloom_estimated_keys(f) == amq_bloom_estimated_keys(classic));
}

static void test_nonzero_counters_are_the_classic_bits(void **state)
{
    (void)state;
    enum { N = 100000 };
    for (uint32_t t = 0; t < 4; t++) {
        uint32_t bits = t < 2 ? 4 : 8;
        unsigned version = t % 2 ? AMQ__BLOOM_PROBE_REHASH : AMQ__BLOOM_PROBE_DOUBLE;
        amq_counting_bloom_params counting = { .capacity = N, .fpr = 0.01, .counter_bits = bits };
        amq_hasher_xxh3(&counting.hasher, seed);
        amq_counting_bloom *f = NULL;
        assert_int_equal(amq__counting_bloom_new(&f, &counting, version, NULL), AMQ_OK);
        amq_bloom_params params = { .capacity = N, .fpr = 0.01 };
        amq_hasher_xxh3(&params.hasher, seed);
        amq_bloom *all = NULL, *even = NULL;
        assert_int_equal(amq__bloom_new(&all, &params, version, NULL), AMQ_OK);
        assert_int_equal(amq__bloom_new(&even, &params, version, NULL), AMQ_OK);
        for (uint64_t i = 0; i < N; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            amq_counting_bloom_add(f, &key, sizeof key);
            amq_bloom_add(all, &key, sizeof key);
            if (i % 2 == 0)
                amq_bloom_add(even, &key, sizeof key);
        }
        assert_valid(f);
        assert_int_equal(amq_counting_bloom_saturated(f), 0);
        check_matches_classic(f, all);
        /* Without the odd keys it is the classic filter of the even ones. */
        for (uint64_t i = 1; i < N; i += 2) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            assert_int_equal(amq_counting_bloom_remove(f, &key, sizeof key), AMQ_OK);
        }
        assert_valid(f);
        check_matches_classic(f, even);
        amq_bloom_free(all);
        amq_bloom_free(even);
        amq_counting_bloom_free(f);
    }
}

/* The query shares the classic filter's loop, unrolled for the usual hash
 * counts: at every k and both counter widths, its answer must be whether
 * the key's k counters are all non-zero, read here one at a time. Each
 * filter gets 1.6 m / k keys, which leaves about 80% of its counters
 * non-zero, so that both answers occur often. */
static void test_every_hash_count_answers_by_its_counters(void **state)
{
    (void)state;
    enum { counters = 4096 };
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0xc075);
    for (uint32_t bits = 4; bits <= 8; bits += 4) {
        for (uint32_t t = 0; t < 2 * AMQ_BLOOM_MAX_HASHES; t++) {
            uint32_t k = 1 + t / 2;
            unsigned version = t % 2 ? AMQ__BLOOM_PROBE_REHASH : AMQ__BLOOM_PROBE_DOUBLE;
            amq_counting_bloom_params params = { .counters = counters,
                                                 .hashes = k,
                                                 .counter_bits = bits };
            amq_counting_bloom *f = NULL;
            assert_int_equal(amq__counting_bloom_new(&f, &params, version, NULL), AMQ_OK);
            for (size_t i = 0; i < 1 + counters * 16 / 10 / k; i++)
                amq_counting_bloom_add_hash(f,
                                            (amq_u128){ amq_test_next(&rng), amq_test_next(&rng) });
            unsigned answers[2] = { 0, 0 };
            for (size_t trial = 0; trial < 4000; trial++) {
                amq_u128 hash = { amq_test_next(&rng), amq_test_next(&rng) };
                amq__bloom_probe p = amq__bloom_probe_start(hash, counters, version);
                bool all_set = true;
                for (uint32_t i = 0; i < k; i++) {
                    all_set = all_set && amq__counting_bloom_counter(f, p.position) != 0;
                    amq__bloom_probe_next(&p, i);
                }
                if (amq_counting_bloom_contains_hash(f, hash) != all_set)
                    fail_msg("%u-bit counters, k = %u: answered %d where the counters say %d", bits,
                             k, !all_set, all_set);
                answers[all_set]++;
            }
            assert_true(answers[0] > 0);
            if (k <= 16)
                assert_true(answers[1] > 0);
            amq_counting_bloom_free(f);
        }
    }
}

/* ---- false negatives and false positives ----------------------------------------- */

/* n keys added; none missing; then the FPR over 2n absent keys is within 4
 * binomial standard deviations of (1 - e^(-kn/m))^k for the actual m, k.
 * Returns the filter, holding keys 0 .. n-1. */
static amq_counting_bloom *check_fpr(uint64_t n, double p)
{
    amq_counting_bloom *f = new_filter(n, p, 4);
    add_keys(f, 0, 0, n);
    assert_valid(f);
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        if (!amq_counting_bloom_contains(f, &key, sizeof key))
            fail_msg("false negative: key %llu of %llu (p = %g)", (unsigned long long)i,
                     (unsigned long long)n, p);
    }
    uint64_t trials = 2 * n, positives = 0;
    for (uint64_t i = 0; i < trials; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        positives += amq_counting_bloom_contains(f, &key, sizeof key);
    }
    uint64_t m = amq_counting_bloom_counters(f);
    uint32_t k = amq_counting_bloom_hashes(f);
    double expected = 0;
    assert_int_equal(amq_calc_fpr(&expected, n, m, k, NULL), AMQ_OK);
    double measured = (double)positives / (double)trials;
    double sigma = sqrt(expected * (1 - expected) / (double)trials);
    print_message("n=%llu p=%g m=%llu k=%u: measured FPR %.6f, expected %.6f (4 sigma %.6f)\n",
                  (unsigned long long)n, p, (unsigned long long)m, k, measured, expected,
                  4 * sigma);
    if (fabs(measured - expected) > 4 * sigma)
        fail_msg("FPR %.6f is more than 4 sigma (%.6f) from %.6f", measured, 4 * sigma, expected);
    assert_true(fabs(amq_counting_bloom_expected_fpr(f) - expected) < 4 * sigma);
    assert_true(fabs(amq_counting_bloom_estimated_keys(f) / (double)n - 1) < 0.02);
    return f;
}

static void test_fpr_10_percent(void **state)
{
    (void)state;
    amq_counting_bloom_free(check_fpr(1000000, 0.1));
}

static void test_fpr_tenth_percent(void **state)
{
    (void)state;
    amq_counting_bloom_free(check_fpr(1000000, 0.001));
}

/* ---- removal ----------------------------------------------------------------------- */

/* f holds keys 0 .. n-1: remove them all, and every counter is 0 again. */
static void check_remove_all(amq_counting_bloom *f, uint64_t n)
{
    assert_valid(f);
    assert_int_equal(amq_counting_bloom_saturated(f), 0);
    assert_true(amq_counting_bloom_nonzero(f) > amq_counting_bloom_counters(f) / 3);
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        int status = amq_counting_bloom_remove(f, &key, sizeof key);
        if (status != AMQ_OK)
            fail_msg("removing added key %llu of %llu: %d", (unsigned long long)i,
                     (unsigned long long)n, status);
        /* Keys not yet removed are all still there. */
        if (i % 1000 == 0 && i + 1 < n) {
            amq_test_key later = amq_test_make_key(seed, 0, i + 1 + i * 7919 % (n - i - 1));
            assert_true(amq_counting_bloom_contains(f, &later, sizeof later));
        }
    }
    assert_valid(f);
    assert_int_equal(amq_counting_bloom_nonzero(f), 0);
    for (uint64_t i = 0; i < amq_counting_bloom_counters(f); i++)
        if (amq__counting_bloom_counter(f, i) != 0)
            fail_msg("counter %llu is %u after every key was removed", (unsigned long long)i,
                     amq__counting_bloom_counter(f, i));
    /* Nothing is left to remove, and nothing is found. */
    amq_test_key key = amq_test_make_key(seed, 0, 0);
    assert_int_equal(amq_counting_bloom_remove(f, &key, sizeof key), AMQ_ENOTFOUND);
    assert_false(amq_counting_bloom_contains(f, &key, sizeof key));
}

/* The 1% filter of the FPR tests, then emptied key by key. */
static void test_fpr_1_percent_then_remove_every_key(void **state)
{
    (void)state;
    amq_counting_bloom *f = check_fpr(1000000, 0.01);
    check_remove_all(f, 1000000);
    amq_counting_bloom_free(f);
}

static void test_remove_every_key_8_bit(void **state)
{
    (void)state;
    amq_counting_bloom *f = new_filter(100000, 0.01, 8);
    add_keys(f, 0, 0, 100000);
    check_remove_all(f, 100000);
    amq_counting_bloom_free(f);
}

/* Removing keys that are certainly absent (a zero counter) answers
 * AMQ_ENOTFOUND and leaves every counter as it was. */
static void test_removing_absent_keys_changes_nothing(void **state)
{
    (void)state;
    enum { N = 50000 };
    amq_counting_bloom *f = new_filter(N, 0.01, 4), *twin = new_filter(N, 0.01, 4);
    add_keys(f, 0, 0, N);
    add_keys(twin, 0, 0, N);
    uint64_t refused = 0;
    for (uint64_t i = 0; i < 4 * N; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        if (amq_counting_bloom_contains(f, &key, sizeof key))
            continue; /* a false positive: removing it would take from others */
        assert_int_equal(amq_counting_bloom_remove(f, &key, sizeof key), AMQ_ENOTFOUND);
        assert_int_equal(amq_counting_bloom_count(f, &key, sizeof key), 0);
        refused++;
    }
    assert_true(refused > 3 * N);
    assert_valid(f);
    assert_same_counters(f, twin);
    /* An empty filter refuses every removal too. */
    amq_counting_bloom_clear(f);
    assert_valid(f);
    assert_int_equal(amq_counting_bloom_nonzero(f), 0);
    amq_test_key key = amq_test_make_key(seed, 0, 1);
    assert_int_equal(amq_counting_bloom_remove(f, &key, sizeof key), AMQ_ENOTFOUND);
    assert_int_equal(amq_counting_bloom_nonzero(f), 0);
    amq_counting_bloom_free(f);
    amq_counting_bloom_free(twin);
}

/* A hash whose positions in a filter of 64 counters start at x with step
 * `step` (multiply-high by 64 keeps the top 6 bits). With step 0 the first
 * two positions are the same counter. */
static amq_u128 hash_at(uint64_t x, uint64_t step)
{
    amq_u128 hash = { .low = x << 58, .high = step << 58 };
    return hash;
}

static void test_repeated_positions(void **state)
{
    (void)state;
    amq_counting_bloom_params params = { .counters = 64, .hashes = 2 };
    amq_counting_bloom *f = NULL;
    assert_int_equal(amq__counting_bloom_new(&f, &params, AMQ__BLOOM_PROBE_DOUBLE, NULL), AMQ_OK);

    /* Probe version 1. Positions 10, 10: one counter incremented twice. */
    amq_u128 twice = hash_at(10, 0);
    amq_counting_bloom_add_hash(f, twice);
    assert_valid(f);
    assert_int_equal(amq__counting_bloom_counter(f, 10), 2);
    assert_int_equal(amq_counting_bloom_nonzero(f), 1);
    assert_true(amq_counting_bloom_contains_hash(f, twice));
    assert_int_equal(amq_counting_bloom_remove_hash(f, twice), AMQ_OK);
    assert_int_equal(amq__counting_bloom_counter(f, 10), 0);
    assert_int_equal(amq_counting_bloom_nonzero(f), 0);
    assert_valid(f);

    /* A key on 10 and 15 puts 1 in counter 10. The key on 10, 10 looks
     * present (counter 10 is not 0) but would need 2 there: it was never
     * added, and removing it changes nothing. */
    amq_u128 once = hash_at(10, 5);
    amq_counting_bloom_add_hash(f, once);
    assert_int_equal(amq__counting_bloom_counter(f, 10), 1);
    assert_int_equal(amq__counting_bloom_counter(f, 15), 1);
    assert_true(amq_counting_bloom_contains_hash(f, twice));
    assert_int_equal(amq_counting_bloom_remove_hash(f, twice), AMQ_ENOTFOUND);
    assert_int_equal(amq__counting_bloom_counter(f, 10), 1);
    assert_int_equal(amq__counting_bloom_counter(f, 15), 1);
    assert_int_equal(amq_counting_bloom_nonzero(f), 2);
    assert_valid(f);
    assert_int_equal(amq_counting_bloom_remove_hash(f, once), AMQ_OK);
    assert_int_equal(amq_counting_bloom_nonzero(f), 0);
    amq_counting_bloom_free(f);

    /* k = 4 from x = 60, step 0: 60, 60, 61, 0 (wrapping). Removing it
     * stops at its second 60 and puts the first back; 61 and 0 are never
     * touched. */
    params.hashes = 4;
    assert_int_equal(amq__counting_bloom_new(&f, &params, AMQ__BLOOM_PROBE_DOUBLE, NULL), AMQ_OK);
    amq_u128 wrapping = hash_at(60, 0);
    amq_counting_bloom_add_hash(f, hash_at(60, 1)); /* 60, 61, 63, 3 */
    amq_counting_bloom_add_hash(f, hash_at(0, 1));  /* 0, 1, 3, 7 */
    assert_true(amq_counting_bloom_contains_hash(f, wrapping));
    amq_counting_bloom *twin = NULL;
    assert_int_equal(amq__counting_bloom_new(&twin, &params, AMQ__BLOOM_PROBE_DOUBLE, NULL),
                     AMQ_OK);
    amq_counting_bloom_add_hash(twin, hash_at(60, 1));
    amq_counting_bloom_add_hash(twin, hash_at(0, 1));
    assert_int_equal(amq_counting_bloom_remove_hash(f, wrapping), AMQ_ENOTFOUND);
    assert_valid(f);
    assert_same_counters(f, twin);
    /* Added, it puts 2 in counter 60; removed, everything is as before. */
    amq_counting_bloom_add_hash(f, wrapping);
    assert_int_equal(amq__counting_bloom_counter(f, 60), 3);
    assert_int_equal(amq_counting_bloom_remove_hash(f, wrapping), AMQ_OK);
    assert_same_counters(f, twin);
    amq_counting_bloom_free(f);
    amq_counting_bloom_free(twin);

    /* Probe version 2: with h.high = L (1 - C) for the chain's multiplier C,
     * the second state is L C + L (1 - C) + 1 = L + 1, so a key with
     * h.low = L = 10 * 2^58 sits twice on counter 10 of 64 (the third state
     * moves far off). It counts 2 there, and a key that was never added
     * but shares counter 10 once cannot be removed. */
    params.hashes = 2;
    assert_int_equal(amq_counting_bloom_new(&f, &params, NULL), AMQ_OK);
    const uint64_t low = (uint64_t)10 << 58;
    amq_u128 repeated = { low, low * (1 - AMQ__BLOOM_REHASH_MULTIPLIER) };
    amq_counting_bloom_add_hash(f, repeated);
    assert_valid(f);
    assert_int_equal(amq__counting_bloom_counter(f, 10), 2);
    assert_int_equal(amq_counting_bloom_nonzero(f), 1);
    assert_int_equal(amq_counting_bloom_remove_hash(f, repeated), AMQ_OK);
    assert_int_equal(amq_counting_bloom_nonzero(f), 0);
    amq_u128 single = { low, 0 }; /* 10, then the state 10 * 2^58 C + 1 */
    amq_counting_bloom_add_hash(f, single);
    assert_int_equal(amq__counting_bloom_counter(f, 10), 1);
    assert_int_equal(amq_counting_bloom_nonzero(f), 2);
    assert_true(amq_counting_bloom_contains_hash(f, repeated));
    assert_int_equal(amq_counting_bloom_remove_hash(f, repeated), AMQ_ENOTFOUND);
    assert_int_equal(amq__counting_bloom_counter(f, 10), 1);
    assert_int_equal(amq_counting_bloom_nonzero(f), 2);
    assert_valid(f);
    amq_counting_bloom_free(f);
}

static void test_saturated_counters_stay(void **state)
{
    (void)state;
    for (uint32_t bits = 4; bits <= 8; bits += 4) {
        uint32_t max = (1u << bits) - 1;
        amq_counting_bloom_params params = { .counters = 1 << 16,
                                             .hashes = 5,
                                             .counter_bits = bits };
        amq_counting_bloom *f = NULL;
        assert_int_equal(amq_counting_bloom_new(&f, &params, NULL), AMQ_OK);
        const char *key = "hot key", *other = "cold key";
        amq_counting_bloom_add(f, other, strlen(other));
        for (uint32_t i = 0; i < max + 10; i++) {
            amq_counting_bloom_add(f, key, strlen(key));
            assert_true(amq_counting_bloom_count(f, key, strlen(key)) ==
                        (i + 1 < max ? i + 1 : max));
        }
        assert_valid(f);
        /* The hot key's five counters (distinct among 2^16 for this key). */
        uint64_t saturated = amq_counting_bloom_saturated(f);
        assert_int_equal(saturated, 5);
        assert_int_equal(amq_counting_bloom_nonzero(f), 10);
        /* Removed as often as it was added: saturated counters are never
         * decremented, so it stays "maybe" and keeps its count. */
        for (uint32_t i = 0; i < max + 10; i++)
            assert_int_equal(amq_counting_bloom_remove(f, key, strlen(key)), AMQ_OK);
        assert_valid(f);
        assert_int_equal(amq_counting_bloom_saturated(f), saturated);
        assert_int_equal(amq_counting_bloom_count(f, key, strlen(key)), max);
        assert_true(amq_counting_bloom_contains(f, key, strlen(key)));
        /* The other key is unaffected and removes normally. */
        assert_int_equal(amq_counting_bloom_count(f, other, strlen(other)), 1);
        assert_int_equal(amq_counting_bloom_remove(f, other, strlen(other)), AMQ_OK);
        assert_int_equal(amq_counting_bloom_nonzero(f), 5);
        assert_valid(f);
        amq_counting_bloom_free(f);
    }
}

static void test_count_is_the_smallest_counter(void **state)
{
    (void)state;
    amq_counting_bloom *f = new_filter(100000, 0.01, 8);
    amq_test_key key = amq_test_make_key(seed, 0, 7);
    assert_int_equal(amq_counting_bloom_count(f, &key, sizeof key), 0);
    for (uint32_t i = 1; i <= 3; i++) {
        amq_counting_bloom_add(f, &key, sizeof key);
        assert_int_equal(amq_counting_bloom_count(f, &key, sizeof key), i);
    }
    /* Other keys can only raise a key's counters: never below the truth. */
    add_keys(f, 0, 100, 100100);
    assert_true(amq_counting_bloom_count(f, &key, sizeof key) >= 3);
    for (uint64_t i = 100; i < 2100; i++) {
        amq_test_key other = amq_test_make_key(seed, 0, i);
        assert_true(amq_counting_bloom_count(f, &other, sizeof other) >= 1);
    }
    amq_counting_bloom_free(f);
}

/* Random adds and removes of added keys (some of whose positions repeat)
 * against an exact multiset: at the end the filter equals, counter for
 * counter, one built from the multiset alone. */
static void check_model(uint32_t bits, uint64_t capacity, uint32_t max_multiplicity)
{
    enum { UNIVERSE = 2000, OPERATIONS = 200000 };
    static amq_u128 hashes[UNIVERSE];
    static amq_test_key keys[UNIVERSE];
    static uint32_t multiplicity[UNIVERSE];
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ bits);
    amq_counting_bloom *f = new_filter(capacity, 0.01, bits);
    for (uint64_t i = 0; i < UNIVERSE; i++) {
        keys[i] = amq_test_make_key(seed, 0, i);
        hashes[i] = amq_hash128(amq_counting_bloom_hasher(f), &keys[i], sizeof keys[i]);
        /* One in eight has step 0: its first two positions coincide. */
        if (i % 8 == 0)
            hashes[i].high = 0;
        multiplicity[i] = 0;
    }
    uint64_t adds = 0, removes = 0;
    for (uint64_t op = 0; op < OPERATIONS; op++) {
        uint64_t i = amq_test_below(&rng, UNIVERSE);
        bool by_key = i % 8 != 0 && amq_test_below(&rng, 2) == 0;
        bool add = multiplicity[i] == 0 ||
                   (multiplicity[i] < max_multiplicity && amq_test_below(&rng, 2) == 0);
        if (add) {
            if (by_key)
                amq_counting_bloom_add(f, &keys[i], sizeof keys[i]);
            else
                amq_counting_bloom_add_hash(f, hashes[i]);
            multiplicity[i]++;
            adds++;
        } else {
            int status = by_key ? amq_counting_bloom_remove(f, &keys[i], sizeof keys[i])
                                : amq_counting_bloom_remove_hash(f, hashes[i]);
            if (status != AMQ_OK)
                fail_msg("operation %llu: removing key %llu (held %u times): %d",
                         (unsigned long long)op, (unsigned long long)i, multiplicity[i], status);
            multiplicity[i]--;
            removes++;
        }
        if (op % 20000 == 0)
            assert_valid(f);
    }
    assert_valid(f);
    assert_int_equal(amq_counting_bloom_saturated(f), 0);
    amq_counting_bloom *rebuilt = new_filter(capacity, 0.01, bits);
    uint64_t held = 0;
    for (uint64_t i = 0; i < UNIVERSE; i++) {
        for (uint32_t j = 0; j < multiplicity[i]; j++)
            amq_counting_bloom_add_hash(rebuilt, hashes[i]);
        if (multiplicity[i]) {
            held++;
            assert_true(amq_counting_bloom_contains_hash(f, hashes[i]));
        }
    }
    print_message("%u-bit: %llu adds, %llu removes, %llu keys held\n", bits,
                  (unsigned long long)adds, (unsigned long long)removes, (unsigned long long)held);
    assert_true(removes > OPERATIONS / 4 && held > UNIVERSE / 4);
    assert_same_counters(f, rebuilt);
    amq_counting_bloom_free(f);
    amq_counting_bloom_free(rebuilt);
}

static void test_model_4_bit(void **state)
{
    (void)state;
    /* Up to 2 copies of a key, 4 times the room: a counter reaches 15 only
     * if 8 keys share it (a few in a million over the whole filter). */
    check_model(4, 8000, 2);
}

static void test_model_8_bit(void **state)
{
    (void)state;
    check_model(8, 2000, 6);
}

/* ---- merge ----------------------------------------------------------------------- */

static void test_merge_is_the_saturating_sum(void **state)
{
    (void)state;
    enum { N = 100000 };
    amq_counting_bloom *a = new_filter(2 * N, 0.01, 4), *b = new_filter(2 * N, 0.01, 4);
    amq_counting_bloom *both = new_filter(2 * N, 0.01, 4), *only_a = new_filter(2 * N, 0.01, 4);
    /* A holds keys 0 .. N-1, B holds N/2 .. 3N/2 - 1: the middle is in both. */
    add_keys(a, 0, 0, N);
    add_keys(only_a, 0, 0, N);
    add_keys(b, 0, N / 2, 3 * N / 2);
    add_keys(both, 0, 0, N);
    add_keys(both, 0, N / 2, 3 * N / 2);
    assert_int_equal(amq_counting_bloom_merge(a, b, NULL), AMQ_OK);
    assert_valid(a);
    assert_int_equal(amq_counting_bloom_saturated(a), 0);
    assert_same_counters(a, both);
    /* The merged filter can still remove B's keys, and is then A again. */
    for (uint64_t i = N / 2; i < 3 * N / 2; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_counting_bloom_remove(a, &key, sizeof key), AMQ_OK);
    }
    assert_same_counters(a, only_a);

    /* Sums past the maximum saturate. */
    amq_counting_bloom_params params = { .counters = 1 << 12, .hashes = 3 };
    amq_counting_bloom *x = NULL, *y = NULL;
    assert_int_equal(amq_counting_bloom_new(&x, &params, NULL), AMQ_OK);
    assert_int_equal(amq_counting_bloom_new(&y, &params, NULL), AMQ_OK);
    for (int i = 0; i < 10; i++) {
        amq_counting_bloom_add(x, "k", 1);
        amq_counting_bloom_add(y, "k", 1);
    }
    amq_counting_bloom_add(y, "j", 1);
    assert_int_equal(amq_counting_bloom_saturated(x), 0);
    assert_int_equal(amq_counting_bloom_merge(x, y, NULL), AMQ_OK);
    assert_valid(x);
    assert_int_equal(amq_counting_bloom_count(x, "k", 1), 15);
    assert_int_equal(amq_counting_bloom_count(x, "j", 1), 1);
    assert_int_equal(amq_counting_bloom_saturated(x), 3);

    /* Filters that differ in m, k, counter width or hasher are refused. */
    amq_counting_bloom *other = NULL;
    amq_counting_bloom_params variants[] = {
        { .counters = (1 << 12) + 1, .hashes = 3 },
        { .counters = 1 << 12, .hashes = 4 },
        { .counters = 1 << 12, .hashes = 3, .counter_bits = 8 },
        { .counters = 1 << 12, .hashes = 3, .hasher = { .kind = AMQ_HASH_MD5 } },
    };
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        assert_int_equal(amq_counting_bloom_new(&other, &variants[i], NULL), AMQ_OK);
        assert_int_equal(amq_counting_bloom_merge(x, other, NULL), AMQ_EINCOMPATIBLE);
        amq_counting_bloom_free(other);
    }
    assert_valid(x);
    amq_counting_bloom_free(a);
    amq_counting_bloom_free(b);
    amq_counting_bloom_free(both);
    amq_counting_bloom_free(only_a);
    amq_counting_bloom_free(x);
    amq_counting_bloom_free(y);
}

/* ---- other forms of the calls ---------------------------------------------------- */

static void test_batch_and_hash_forms_agree(void **state)
{
    (void)state;
    amq_counting_bloom *f = new_filter(50000, 0.05, 4);
    for (uint64_t i = 0; i < 50000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        if (i % 2)
            amq_counting_bloom_add(f, &key, sizeof key);
        else
            amq_counting_bloom_add_hash(
                f, amq_hash128(amq_counting_bloom_hasher(f), &key, sizeof key));
    }
    enum { COUNT = 1003 };
    static amq_test_key keys[COUNT];
    const void *pointers[COUNT];
    size_t lens[COUNT];
    uint8_t results[COUNT];
    amq_test_batch_keys(keys, pointers, lens, COUNT, seed, 37);
    amq_counting_bloom_contains_many(results, f, pointers, lens, COUNT);
    uint64_t maybes = 0;
    for (uint64_t i = 0; i < COUNT; i++) {
        assert_int_equal(results[i], amq_counting_bloom_contains(f, &keys[i], sizeof keys[i]));
        amq_u128 hash = amq_hash128(amq_counting_bloom_hasher(f), &keys[i], sizeof keys[i]);
        assert_int_equal(results[i], amq_counting_bloom_contains_hash(f, hash));
        maybes += results[i];
    }
    assert_true(maybes >= COUNT * 2 / 3 - 1); /* every present key at least */
    amq_counting_bloom_contains_many(results, f, pointers, lens, 0);
    amq_counting_bloom_free(f);
}

/* The batch by hashes gives each hash the answer
 * amq_counting_bloom_contains_hash gives, for 4- and 8-bit counters, each
 * probe version, and calls shorter than the prefetch distance. */
static void test_batch_by_hashes_agrees(void **state)
{
    (void)state;
    const struct {
        unsigned version, counter_bits;
        double fpr;
    } cases[] = {
        { AMQ__BLOOM_PROBE_REHASH, 4, 0.05 },
        { AMQ__BLOOM_PROBE_REHASH, 8, 0.01 },
        { AMQ__BLOOM_PROBE_DOUBLE, 4, 0.01 },
    };
    enum { COUNT = 1003 };
    static amq_u128 hashes[COUNT];
    static uint8_t results[COUNT];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        amq_counting_bloom_params params = { .capacity = 20000,
                                             .fpr = cases[c].fpr,
                                             .counter_bits = cases[c].counter_bits };
        amq_hasher_xxh3(&params.hasher, seed);
        amq_counting_bloom *f = NULL;
        assert_int_equal(amq__counting_bloom_new(&f, &params, cases[c].version, NULL), AMQ_OK);
        for (uint64_t i = 0; i < 20000; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            amq_counting_bloom_add(f, &key, sizeof key);
        }
        for (uint64_t i = 0; i < COUNT; i++) {
            amq_test_key key = amq_test_make_key(seed, i % 2, i);
            hashes[i] = amq_hash128(amq_counting_bloom_hasher(f), &key, sizeof key);
        }
        const size_t lengths[] = { COUNT, 5, 1 };
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            memset(results, 0xff, sizeof results);
            amq_counting_bloom_contains_many_hash(results, f, hashes, lengths[l]);
            uint64_t maybes = 0, absent = 0;
            for (uint64_t i = 0; i < lengths[l]; i++) {
                assert_int_equal(results[i], amq_counting_bloom_contains_hash(f, hashes[i]));
                maybes += results[i];
                absent += results[i] == 0;
            }
            assert_true(maybes >= (lengths[l] + 1) / 2);
            if (lengths[l] == COUNT)
                assert_true(absent > 0);
            for (uint64_t i = lengths[l]; i < COUNT; i++)
                assert_int_equal(results[i], 0xff);
        }
        amq_counting_bloom_contains_many_hash(results, f, NULL, 0);
        amq_counting_bloom_free(f);
    }
}

/* The bytes amq_save_to_memory gives for a handle. */
static uint8_t *saved_bytes(size_t *len, const amq_filter *f)
{
    uint8_t *bytes = NULL;
    assert_int_equal(amq_save_to_memory(&bytes, len, f, NULL), AMQ_OK);
    return bytes;
}

/* Keys of lengths 0 to 40 (the one of length 0 NULL), some repeated, for
 * the batch adds. */
enum { ADD_MANY_KEYS = 4093 };
static char add_many_bytes[ADD_MANY_KEYS][40];
static const void *add_many_keys[ADD_MANY_KEYS];
static size_t add_many_lens[ADD_MANY_KEYS];

static void make_add_many_keys(void)
{
    for (size_t i = 0; i < ADD_MANY_KEYS; i++) {
        size_t n = i % 7 == 3 ? i / 2 : i; /* every 7th a key seen before */
        int len = snprintf(add_many_bytes[i], sizeof add_many_bytes[i], "add-many %llu %zu",
                           (unsigned long long)seed, n);
        add_many_lens[i] = (size_t)len - n % 9; /* 0 to 8 bytes cut off */
        add_many_keys[i] = add_many_bytes[i];
    }
    add_many_keys[5] = NULL; /* a NULL key of length 0 */
    add_many_lens[5] = 0;
}

/* amq_counting_bloom_add_many against amq_counting_bloom_add of each key in
 * turn, for a batch of count keys: the same answers (AMQ_OK
 * each, every key handled), the same counters and the same saved bytes. */
static void check_add_many(const amq_counting_bloom_params *params, unsigned version,
                           const void *const *keys, const size_t *lens, size_t count)
{
    amq_counting_bloom *one = NULL, *many = NULL;
    assert_int_equal(amq__counting_bloom_new(&one, params, version, NULL), AMQ_OK);
    assert_int_equal(amq__counting_bloom_new(&many, params, version, NULL), AMQ_OK);
    static int results[ADD_MANY_KEYS + 1];
    for (size_t i = 0; i <= count; i++)
        results[i] = 0x5a5a;
    size_t handled = 12345;
    for (size_t i = 0; i < count; i++)
        amq_counting_bloom_add(one, keys[i], lens[i]);
    assert_int_equal(amq_counting_bloom_add_many(results, &handled, many, keys, lens, count),
                     AMQ_OK);
    assert_int_equal(handled, count);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(results[i], AMQ_OK);
    assert_int_equal(results[count], 0x5a5a); /* nothing past the batch */
    assert_valid(many);
    assert_same_counters(one, many);
    amq_filter *f_one = NULL, *f_many = NULL;
    assert_int_equal(amq_counting_bloom_wrap(&f_one, one, NULL), AMQ_OK);
    assert_int_equal(amq_counting_bloom_wrap(&f_many, many, NULL), AMQ_OK);
    size_t len_one = 0, len_many = 0;
    uint8_t *bytes_one = saved_bytes(&len_one, f_one), *bytes_many = saved_bytes(&len_many, f_many);
    assert_int_equal(len_one, len_many);
    assert_memory_equal(bytes_one, bytes_many, len_one);
    amq_buffer_free(bytes_one);
    amq_buffer_free(bytes_many);
    amq_free(f_one);
    amq_free(f_many);
}

/* The batch add is the single add of each key in turn, for 4- and 8-bit
 * counters, each probe version, a table the caches hold and one they do
 * not, and batches shorter than, as long as and longer than a group of
 * hashed keys (16). */
static void test_add_many_is_add_one_by_one(void **state)
{
    (void)state;
    make_add_many_keys();
    const struct {
        unsigned version, counter_bits;
        uint64_t capacity;
        double fpr;
    } cases[] = {
        { AMQ__BLOOM_PROBE_REHASH, 4, 2000, 0.01 },
        { AMQ__BLOOM_PROBE_REHASH, 8, 2000, 0.05 },
        { AMQ__BLOOM_PROBE_DOUBLE, 4, 2000, 0.01 },
        { AMQ__BLOOM_PROBE_REHASH, 4, 1000000, 0.01 },
    };
    const size_t counts[] = { 1, 15, 16, 17, 1000, ADD_MANY_KEYS };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        amq_counting_bloom_params params = { .capacity = cases[c].capacity,
                                             .fpr = cases[c].fpr,
                                             .counter_bits = cases[c].counter_bits };
        amq_hasher_xxh3(&params.hasher, seed);
        for (size_t n = 0; n < sizeof counts / sizeof counts[0]; n++)
            check_add_many(&params, cases[c].version, add_many_keys, add_many_lens, counts[n]);
    }
    /* No keys; no results or handled asked for. */
    amq_counting_bloom *f = new_filter(1000, 0.01, 4);
    size_t handled = 7;
    assert_int_equal(amq_counting_bloom_add_many(NULL, &handled, f, NULL, NULL, 0), AMQ_OK);
    assert_int_equal(handled, 0);
    assert_int_equal(amq_counting_bloom_nonzero(f), 0);
    assert_int_equal(amq_counting_bloom_add_many(NULL, NULL, f, add_many_keys, add_many_lens, 1000),
                     AMQ_OK);
    for (size_t i = 0; i < 1000; i++)
        assert_true(amq_counting_bloom_contains(f, add_many_keys[i], add_many_lens[i]));
    assert_valid(f);
    amq_counting_bloom_free(f);
}

/* A counter that saturates inside a batch is no error: the batch goes on,
 * every key answers AMQ_OK, and the counters, the saturated count and the
 * saved bytes are those of the keys added one by one. */
static void test_add_many_saturating_mid_batch(void **state)
{
    (void)state;
    enum { COUNT = 600 };
    static const void *keys[COUNT];
    static size_t lens[COUNT];
    static char cold[COUNT][24];
    const char *hot = "hot key";
    for (size_t i = 0; i < COUNT; i++) {
        /* One key in two is the hot one: 4-bit counters saturate at its 15th
         * add, 8-bit ones at its 255th, both inside the batch. */
        if (i % 2) {
            keys[i] = hot;
            lens[i] = strlen(hot);
        } else {
            lens[i] = (size_t)snprintf(cold[i], sizeof cold[i], "cold key %zu", i);
            keys[i] = cold[i];
        }
    }
    /* 2^16 counters are added key by key, 2^22 (2 MiB at 4 bits) by
     * groups of prefetched keys. */
    for (uint32_t c = 0; c < 4; c++) {
        uint32_t bits = c % 2 ? 8 : 4;
        amq_counting_bloom_params params = { .counters = c < 2 ? 1 << 16 : 1 << 22,
                                             .hashes = 5,
                                             .counter_bits = bits };
        check_add_many(&params, AMQ__BLOOM_PROBE_LATEST, keys, lens, COUNT);
        amq_counting_bloom *f = NULL;
        assert_int_equal(amq_counting_bloom_new(&f, &params, NULL), AMQ_OK);
        size_t handled = 0;
        assert_int_equal(amq_counting_bloom_add_many(NULL, &handled, f, keys, lens, COUNT), AMQ_OK);
        assert_int_equal(handled, COUNT);
        assert_true(amq_counting_bloom_saturated(f) >= 5);
        assert_int_equal(amq_counting_bloom_count(f, hot, strlen(hot)), (1u << bits) - 1);
        assert_valid(f);
        amq_counting_bloom_free(f);
    }
}

/* amq_add_many through the generic handle (the family's batch path) leaves
 * the bytes amq_add of each key leaves. */
static void test_generic_add_many_is_add_one_by_one(void **state)
{
    (void)state;
    make_add_many_keys();
    amq_filter *one = NULL, *many = NULL;
    assert_int_equal(amq_new(&one, "counting-bloom n=100000 p=0.01", NULL), AMQ_OK);
    assert_int_equal(amq_new(&many, "counting-bloom n=100000 p=0.01", NULL), AMQ_OK);
    for (size_t i = 0; i < ADD_MANY_KEYS; i++)
        assert_int_equal(amq_add(one, add_many_keys[i], add_many_lens[i]), AMQ_OK);
    static int results[ADD_MANY_KEYS];
    size_t handled = 0;
    assert_int_equal(
        amq_add_many(results, &handled, many, add_many_keys, add_many_lens, ADD_MANY_KEYS), AMQ_OK);
    assert_int_equal(handled, ADD_MANY_KEYS);
    for (size_t i = 0; i < ADD_MANY_KEYS; i++)
        assert_int_equal(results[i], AMQ_OK);
    size_t len_one = 0, len_many = 0;
    uint8_t *bytes_one = saved_bytes(&len_one, one), *bytes_many = saved_bytes(&len_many, many);
    assert_int_equal(len_one, len_many);
    assert_memory_equal(bytes_one, bytes_many, len_one);
    amq_buffer_free(bytes_one);
    amq_buffer_free(bytes_many);
    amq_free(one);
    amq_free(many);
}

static void test_past_2_to_the_32_counters(void **state)
{
    (void)state;
    uint64_t m = ((uint64_t)1 << 32) + 4097; /* odd: the last byte is half used */
    amq_counting_bloom_params params = { .counters = m, .hashes = 4 };
    amq_counting_bloom *f = NULL;
    assert_int_equal(amq_counting_bloom_new(&f, &params, NULL), AMQ_OK);
    assert_int_equal(amq_counting_bloom_counters(f), m);
    /* A key whose first counter is the last one, past 2^32: the position
     * is not truncated. */
    amq_u128 high = { .low = UINT64_MAX - 1000, .high = UINT64_MAX / 3 };
    amq_counting_bloom_add_hash(f, high);
    assert_true(amq_counting_bloom_contains_hash(f, high));
    amq_u128 low = { .low = 1000, .high = UINT64_MAX / 3 };
    assert_false(amq_counting_bloom_contains_hash(f, low));
    assert_int_equal(amq__counting_bloom_counter(f, m - 1), 1);
    add_keys(f, 0, 0, 1000);
    for (uint64_t i = 0; i < 1000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_true(amq_counting_bloom_contains(f, &key, sizeof key));
    }
    assert_true(amq_counting_bloom_nonzero(f) >= 4002 && amq_counting_bloom_nonzero(f) <= 4004);
    assert_int_equal(amq_counting_bloom_remove_hash(f, high), AMQ_OK);
    assert_int_equal(amq__counting_bloom_counter(f, m - 1), 0);
    amq_counting_bloom_free(f);
}

/* ---- through the generic handle ------------------------------------------------ */

static uint8_t *read_all(const char *path, size_t *len)
{
    uint8_t *bytes = (uint8_t *)amq_test_read_file(path, len);
    assert_non_null(bytes);
    return bytes;
}

static void test_generic_round_trip(void **state)
{
    char path[AMQ_TEST_PATH_MAX], again[AMQ_TEST_PATH_MAX], spec[160];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(again, state, "again.amq");
    for (uint32_t bits = 4; bits <= 8; bits += 4) {
        snprintf(spec, sizeof spec, "counting-bloom n=20001 p=0.02 counter-bits=%u seed=%llu", bits,
                 (unsigned long long)seed);
        amq_filter *f = NULL;
        assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
        assert_true(amq_test_add_then_remove_quarter(f, seed, 20000) > 900);
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);

        for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
            amq_filter *g = NULL;
            amq_diag diag = { .message = "" };
            assert_int_equal(amq_load(&g, path, flags, &diag), AMQ_OK);
            amq_info a, b;
            assert_int_equal(amq_info_get(&a, f), AMQ_OK);
            assert_int_equal(amq_info_get(&b, g), AMQ_OK);
            assert_string_equal(b.family, "counting-bloom");
            assert_int_equal(a.capacity, 20001);
            assert_int_equal(b.capacity, a.capacity);
            assert_true(b.estimated_keys == a.estimated_keys);
            assert_true(fabs(a.estimated_keys / 15000 - 1) < 0.03);
            assert_int_equal(b.keys, a.keys);
            assert_true(b.expected_fpr == a.expected_fpr);
            assert_true(b.target_fpr == 0.02);
            uint64_t m = 0;
            assert_int_equal(amq_calc_optimal_m(&m, 20001, 0.02, NULL), AMQ_OK);
            assert_int_equal(a.memory_bytes, (m * bits + 7) / 8);
            assert_int_equal(b.memory_bytes, a.memory_bytes);
            assert_true(fabs(b.bits_per_key - (double)a.memory_bytes * 8 / 20001) < 1e-9);
            assert_memory_equal(&b.hasher, &a.hasher, sizeof a.hasher);
            assert_true(b.file_checksum != 0);
            amq_test_expect_same_answers(f, g, seed, 40000);
            /* Saved again, the file is the same bytes. */
            assert_int_equal(amq_save(g, again, NULL), AMQ_OK);
            size_t len1, len2;
            uint8_t *first = read_all(path, &len1), *second = read_all(again, &len2);
            assert_int_equal(len1, len2);
            assert_memory_equal(first, second, len1);
            free(first);
            free(second);
            /* A loaded filter keeps working: add, remove, merge. */
            assert_int_equal(amq_add(g, "new key", 7), AMQ_OK);
            assert_int_equal(amq_contains(g, "new key", 7), 1);
            assert_int_equal(amq_remove(g, "new key", 7), AMQ_OK);
            amq_test_key key = amq_test_make_key(seed, 0, 1);
            assert_int_equal(amq_remove(g, &key, sizeof key), AMQ_OK);
            assert_int_equal(amq_merge(g, f, &diag), AMQ_OK);
            assert_int_equal(amq_contains(g, &key, sizeof key), 1);
            amq_free(g);
        }

        /* Merging filters of another size or counter width names it. */
        const char *others[] = { "counting-bloom n=1000", "counting-bloom n=20001 p=0.02" };
        const char *words[] = { "counters", "8-bit" };
        for (size_t i = 0; i < 2; i++) {
            char other_spec[160];
            snprintf(other_spec, sizeof other_spec, "%s counter-bits=%u seed=%llu", others[i],
                     i == 0 ? bits : 12 - bits, (unsigned long long)seed);
            amq_test_expect_merge_refused(f, other_spec, words[i]);
        }
        amq_free(f);
    }
}

static void test_generic_spec_errors(void **state)
{
    (void)state;
    const amq_test_spec_case cases[] = {
        { "counting-bloom", AMQ_EINVAL, "capacity" },
        { "counting-bloom n=1000 counter-bits=5", AMQ_EINVAL, "counter-bits" },
        { "counting-bloom n=1000 counter-bits=16", AMQ_EINVAL, "4|8" },
        { "counting-bloom n=1e15", AMQ_ERANGE, "bits" },
        { "counting-bloom n=1000 k=65", AMQ_EINVAL, "hashes" },
        { "counting-bloom n=1000 layout=split", AMQ_EINVAL,
          "unknown option 'layout' for counting-bloom" },
        { "counting-bloom n=1000 p=2", AMQ_EINVAL, "fpr" },
        { "counting-bloom n=1000 hash=siphash", AMQ_EINVAL, "key" },
    };
    amq_test_expect_spec_errors(cases, sizeof cases / sizeof cases[0]);
    const char *const good[] = {
        "counting-bloom m=100000 k=5 counter-bits=8",
        "counting-bloom capacity=1000 fpr=0.001 hashes=3 bits=50000",
        "counting-bloom n=1000 hash=siphash key=000102030405060708090a0b0c0d0e0f",
        "counting-bloom n=1000 hash=md5 counter-bits=4",
    };
    amq_test_expect_specs_accepted(good, sizeof good / sizeof good[0], true);
    /* amq_build sizes a dynamic filter by its keys when no n is given. */
    amq_test_expect_sized_by_keys("counting-bloom p=0.01");
}

/* ---- damaged files -------------------------------------------------------------- */

/* An empty counting filter of m counters, k hashes and w-bit counters
 * probing with version 1, through the generic handle: a file as amq wrote
 * it before the probe version field (a 48-byte parameter block), loaded. */
static amq_filter *empty_version_1(const char *path, uint64_t m, uint32_t k, uint32_t w,
                                   uint64_t hash_seed)
{
    amq__params_writer params;
    amq__params_init(&params);
    amq__params_put_u64(&params, m);
    amq__params_put_u32(&params, k);
    amq__params_put_u32(&params, w);
    amq__params_put_u64(&params, 1);
    amq__params_put_f64(&params, 0.01);
    amq__params_put_u64(&params, 0);
    amq__params_put_u64(&params, 0);
    uint64_t payload_len = (m * w + 7) / 8;
    uint8_t *zeros = calloc(1, (size_t)payload_len);
    assert_non_null(zeros);
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, hash_seed);
    amq_test_write_container(path, AMQ__FAMILY_COUNTING_BLOOM, &hasher, params.bytes, params.len,
                             zeros, payload_len);
    free(zeros);
    amq_filter *f = NULL;
    assert_int_equal(amq_load(&f, path, 0, NULL), AMQ_OK);
    return f;
}

/* The saved file holds what src/bloom/counting_bloom.c's opening comment says:
 * the parameter block, then the counters packed least significant first
 * (4-bit: counter 2j in the low nibble of byte j), at the positions of the
 * filter's probe version. Expected bytes are computed here from the keys'
 * positions alone. Version 1 (a filter loaded from a file without the
 * field) saves the 48-byte block, version 2 the 52-byte one. */
static void test_file_layout(void **state)
{
    char path[AMQ_TEST_PATH_MAX], spec[128];
    amq_test_scratch_path(path, state, "f.amq");
    enum { M = 101, K = 3, KEYS = 40 };
    for (uint32_t t = 0; t < 4; t++) {
        uint32_t bits = t < 2 ? 4 : 8;
        unsigned version = t % 2 ? AMQ__BLOOM_PROBE_REHASH : AMQ__BLOOM_PROBE_DOUBLE;
        snprintf(spec, sizeof spec, "counting-bloom m=%d k=%d counter-bits=%u seed=7", M, K, bits);
        amq_filter *f = NULL;
        if (version == AMQ__BLOOM_PROBE_DOUBLE)
            f = empty_version_1(path, M, K, bits, 7);
        else
            assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
        amq_hasher hasher;
        amq_hasher_xxh3(&hasher, 7);
        uint32_t expected[M] = { 0 };
        for (uint64_t i = 0; i < KEYS; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i % 30); /* keys 0..9 twice */
            assert_int_equal(amq_add(f, &key, sizeof key), AMQ_OK);
            amq__bloom_probe p =
                amq__bloom_probe_start(amq_hash128(&hasher, &key, sizeof key), M, version);
            for (uint32_t j = 0; j < K; j++) {
                expected[p.position]++;
                amq__bloom_probe_next(&p, j);
            }
        }
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
        amq_free(f);

        size_t len = 0;
        uint8_t *file = read_all(path, &len);
        amq__container c;
        assert_int_equal(amq__format_parse(&c, file, len, NULL), AMQ_OK);
        assert_int_equal(c.family, AMQ__FAMILY_COUNTING_BLOOM);
        assert_memory_equal(&c.hasher, &hasher, sizeof hasher);
        uint8_t packed[M] = { 0 };
        uint64_t nonzero = 0;
        for (uint32_t i = 0; i < M; i++) {
            nonzero += expected[i] != 0;
            if (bits == 8)
                packed[i] = (uint8_t)expected[i];
            else
                packed[i / 2] |= (uint8_t)(expected[i] << (i % 2 * 4));
        }
        size_t payload_len = bits == 8 ? M : (M + 1) / 2;
        assert_int_equal(c.payload_len, payload_len);
        assert_memory_equal(c.payload, packed, payload_len);

        assert_int_equal(c.params_len, version == AMQ__BLOOM_PROBE_DOUBLE ? 48 : 52);
        amq__params_reader r;
        amq__params_reader_init(&r, c.params, c.params_len);
        uint64_t m, capacity, nonzero_saved, saturated;
        uint32_t k, width;
        double fpr;
        assert_int_equal(amq__params_get_u64(&r, &m), AMQ_OK);
        assert_int_equal(amq__params_get_u32(&r, &k), AMQ_OK);
        assert_int_equal(amq__params_get_u32(&r, &width), AMQ_OK);
        assert_int_equal(amq__params_get_u64(&r, &capacity), AMQ_OK);
        assert_int_equal(amq__params_get_f64(&r, &fpr), AMQ_OK);
        assert_int_equal(amq__params_get_u64(&r, &nonzero_saved), AMQ_OK);
        assert_int_equal(amq__params_get_u64(&r, &saturated), AMQ_OK);
        if (version == AMQ__BLOOM_PROBE_REHASH) {
            uint32_t saved_version = 0;
            assert_int_equal(amq__params_get_u32(&r, &saved_version), AMQ_OK);
            assert_int_equal(saved_version, 2);
        }
        assert_int_equal(amq__params_end(&r), AMQ_OK);
        assert_int_equal(m, M);
        assert_int_equal(k, K);
        assert_int_equal(width, bits);
        assert_true(capacity >= 1);
        assert_true(fpr == 0.01);
        assert_int_equal(nonzero_saved, nonzero);
        assert_int_equal(saturated, 0);
        free(file);
    }
}

/* Every single-byte change and every truncation of a saved file is refused
 * (the checksum). */
static void test_flipped_bytes_refused(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, "counting-bloom m=1001 k=3", NULL), AMQ_OK);
    for (int i = 0; i < 50; i++)
        amq_add(f, &i, sizeof i);
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
    amq_free(f);
    size_t len = 0;
    uint8_t *good = read_all(path, &len);
    amq_test_expect_damage_refused(path, good, len);
    free(good);
}

/* What a test file holds: the parameter fields and the counter bytes. */
typedef struct crafted {
    uint64_t m;
    uint32_t k, width;
    uint64_t capacity;
    double fpr;
    uint64_t nonzero, saturated;
    uint32_t version; /* the probe version field; 0: left out */
    int params_delta; /* bytes to drop (<0) or append (>0) after the fields */
    uint8_t payload[64];
    size_t payload_len;
} crafted;

/* Write c as a valid container (right checksum). */
static void write_crafted(const char *path, const crafted *c)
{
    amq__params_writer w;
    amq__params_init(&w);
    amq__params_put_u64(&w, c->m);
    amq__params_put_u32(&w, c->k);
    amq__params_put_u32(&w, c->width);
    amq__params_put_u64(&w, c->capacity);
    amq__params_put_f64(&w, c->fpr);
    amq__params_put_u64(&w, c->nonzero);
    amq__params_put_u64(&w, c->saturated);
    if (c->version != 0)
        amq__params_put_u32(&w, c->version);
    for (int i = 0; i < c->params_delta; i++)
        amq__params_put_u8(&w, 0);
    if (c->params_delta < 0)
        w.len -= (uint32_t)-c->params_delta;
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, 5);
    amq_test_write_container(path, AMQ__FAMILY_COUNTING_BLOOM, &hasher, w.bytes, w.len, c->payload,
                             c->payload_len);
}

static void test_damaged_parameters(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "crafted.amq");

    /* 65 counters of 4 bits in 33 bytes: counters 0 = 1, 1 = 15, 64 = 2. */
    crafted good = { .m = 65,
                     .k = 3,
                     .width = 4,
                     .capacity = 7,
                     .fpr = 0.01,
                     .nonzero = 3,
                     .saturated = 1,
                     .payload_len = 33 };
    good.payload[0] = 0xf1;
    good.payload[32] = 0x02;
    write_crafted(path, &good);
    amq_test_expect_load(path, NULL, "the well-formed file");
    /* The same counters as 8-bit ones: 65 bytes do not fit our buffer, so
     * 64 counters. */
    crafted wide = good;
    wide.m = 64;
    wide.width = 8;
    wide.payload_len = 64;
    memset(wide.payload, 0, sizeof wide.payload);
    wide.payload[0] = 1;
    wide.payload[1] = 255;
    wide.payload[63] = 2;
    write_crafted(path, &wide);
    amq_test_expect_load(path, NULL, "the well-formed 8-bit file");
    /* The block with the probe version field: 52 bytes, version 2. */
    crafted versioned = good;
    versioned.version = 2;
    write_crafted(path, &versioned);
    amq_test_expect_load(path, NULL, "the well-formed file of probe version 2");

    struct {
        const char *what;
        crafted c;
        const char *message;
    } cases[] = {
        { "short parameters", good, "parameters are 40 bytes" },
        { "long parameters", good, "parameters are 49 bytes" },
        { "a version field of 1", good, "probe version 1 is not 2" },
        { "a version field of 3", good, "probe version 3 is not 2" },
        { "a version field of 0", good, "probe version 0 is not 2" },
        { "past the version field", good, "parameters are 53 bytes" },
        { "m below 64", good, "counter count" },
        { "m past 2^48", good, "counter count" },
        { "k = 0", good, "hash count" },
        { "k = 65", good, "hash count" },
        { "5-bit counters", good, "not 4 or 8" },
        { "capacity 0", good, "capacity" },
        { "fpr 0", good, "fpr" },
        { "fpr NaN", good, "fpr" },
        { "payload a byte short", good, "payload is 32 bytes" },
        { "payload a byte long", good, "payload is 34 bytes" },
        { "8-bit counters in a 4-bit payload", good, "payload" },
        { "a counter past m", good, "past the last counter" },
        { "non-zero count too high", good, "non-zero" },
        { "non-zero count too low", good, "non-zero" },
        { "saturated count wrong", good, "saturated" },
        { "a counter changed to saturated", good, "saturated" },
    };
    cases[0].c.params_delta = -8;
    cases[1].c.params_delta = 1;
    cases[2].c.version = 1;
    cases[3].c.version = 3;
    cases[4].c.params_delta = 4;
    cases[5].c.version = 2;
    cases[5].c.params_delta = 1;
    cases[6].c.m = 63;
    cases[7].c.m = AMQ_BLOOM_MAX_BITS + 1;
    cases[8].c.k = 0;
    cases[9].c.k = AMQ_BLOOM_MAX_HASHES + 1;
    cases[10].c.width = 5;
    cases[11].c.capacity = 0;
    cases[12].c.fpr = 0;
    cases[13].c.fpr = NAN;
    cases[14].c.payload_len = 32;
    cases[15].c.payload_len = 34;
    cases[16].c.width = 8;
    cases[17].c.payload[32] = 0x12;
    cases[18].c.nonzero = 4;
    cases[19].c.nonzero = 2;
    cases[20].c.saturated = 0;
    cases[21].c.payload[32] = 0x0f;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_crafted(path, &cases[i].c);
        amq_test_expect_load(path, cases[i].message, "%s", cases[i].what);
    }
}

/* ---- the probe sequence and its version ------------------------------------------ */

/* The pair floor, as for the classic filter (tests/test_bloom.c): 2 * 10^7
 * absent keys at n = 1000, p = 1e-9 give 0.02 false positives expected;
 * more than 3 fails, which a filter delivering 1e-9 does with a chance of
 * 7e-9, and the version-1 sequence (n / m^2 = 5.4e-7: 10.8 expected)
 * passes with a chance of 0.6%. */
static void test_no_pair_floor_at_1e_9(void **state)
{
    (void)state;
    amq_test_expect_at_most_false_positives("counting-bloom n=1000 p=1e-9", seed, 1000, 20000000,
                                            3);
}

/* n = 1000, p = 1e-6, 2 * 10^7 absent keys: about 20 false positives, as
 * the fill predicts, the prediction at most twice the target. */
static void test_fpr_1e_6_small_n(void **state)
{
    (void)state;
    amq_test_expect_low_rate("counting-bloom n=1000 p=1e-6", seed, AMQ_TEST_ADD, 1000, 20000000, 2);
}

/* tests/data/bloom/counting-v1.amq, saved before the probe version field
 * (tests/data/README.md), from the keys and with the parameters of
 * bloom-v1.amq: its non-zero counters are that filter's bits, so it
 * answers as recorded for that one. It loads as version 1, reports the
 * pair floor, saves back to the same bytes, and removes keys as before. */
static void test_saved_version_1_file(void **state)
{
    char saved[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(saved, state, "saved.amq");
    for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
        amq_filter *f = amq_test_load_golden_version_1("counting-v1.amq", flags, saved);
        amq_info info;
        /* Removing every key empties it: the same positions as they were
         * added with. */
        for (int i = 0; i < 1000; i++) {
            char key[32];
            int len = snprintf(key, sizeof key, "golden-%d", i);
            assert_int_equal(amq_remove(f, key, (size_t)len), AMQ_OK);
        }
        assert_int_equal(amq_info_get(&info, f), AMQ_OK);
        assert_true(info.estimated_keys == 0);
        amq_free(f);
    }
}

/* A version-1 filter's expected rate counts the pair floor, a version-2
 * one's is the fill's alone; each is the classic filter's of its version. */
static void test_version_1_expected_fpr_has_the_floor(void **state)
{
    (void)state;
    amq_counting_bloom_params params = { .capacity = 1000, .fpr = 1e-9 };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_counting_bloom *old = NULL, *latest = NULL;
    assert_int_equal(amq__counting_bloom_new(&old, &params, AMQ__BLOOM_PROBE_DOUBLE, NULL), AMQ_OK);
    assert_int_equal(amq_counting_bloom_new(&latest, &params, NULL), AMQ_OK);
    assert_int_equal(amq__counting_bloom_probe_version(latest), AMQ__BLOOM_PROBE_REHASH);
    add_keys(old, 0, 0, 1000);
    add_keys(latest, 0, 0, 1000);
    double m = (double)amq_counting_bloom_counters(old);
    double fill = pow((double)amq_counting_bloom_nonzero(latest) / m, 30);
    assert_int_equal(amq_counting_bloom_hashes(latest), 30);
    assert_true(amq_counting_bloom_expected_fpr(latest) == fill);
    double floor = 1000 / (m * m);
    assert_true(fabs(amq_counting_bloom_expected_fpr(old) / (floor + fill) - 1) < 0.05);
    amq_counting_bloom_free(old);
    amq_counting_bloom_free(latest);
}

/* Filters of the two versions do not merge. */
static void test_versions_do_not_merge(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "v1.amq");
    amq_filter *old = empty_version_1(path, 101, 3, 4, 7);
    amq_filter *latest = NULL;
    assert_int_equal(amq_new(&latest, "counting-bloom m=101 k=3 seed=7", NULL), AMQ_OK);
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_merge(old, latest, &diag), AMQ_EINCOMPATIBLE);
    assert_non_null(strstr(diag.message, "probe versions 1 and 2"));
    assert_int_equal(amq_merge(latest, old, &diag), AMQ_EINCOMPATIBLE);
    amq_free(old);
    amq_free(latest);
}

int main(void)
{
    seed = amq_test_seed(20261123);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizing_is_the_classic_filters),
        cmocka_unit_test(test_sizing_errors),
        cmocka_unit_test(test_nonzero_counters_are_the_classic_bits),
        cmocka_unit_test(test_every_hash_count_answers_by_its_counters),
        cmocka_unit_test(test_fpr_10_percent),
        cmocka_unit_test(test_fpr_1_percent_then_remove_every_key),
        cmocka_unit_test(test_fpr_tenth_percent),
        cmocka_unit_test(test_remove_every_key_8_bit),
        cmocka_unit_test(test_removing_absent_keys_changes_nothing),
        cmocka_unit_test(test_repeated_positions),
        cmocka_unit_test(test_saturated_counters_stay),
        cmocka_unit_test(test_count_is_the_smallest_counter),
        cmocka_unit_test(test_model_4_bit),
        cmocka_unit_test(test_model_8_bit),
        cmocka_unit_test(test_merge_is_the_saturating_sum),
        cmocka_unit_test(test_batch_and_hash_forms_agree),
        cmocka_unit_test(test_batch_by_hashes_agrees),
        cmocka_unit_test(test_add_many_is_add_one_by_one),
        cmocka_unit_test(test_add_many_saturating_mid_batch),
        cmocka_unit_test(test_generic_add_many_is_add_one_by_one),
        cmocka_unit_test(test_past_2_to_the_32_counters),
        AMQ_TEST_WITH_SCRATCH(test_generic_round_trip),
        cmocka_unit_test(test_generic_spec_errors),
        AMQ_TEST_WITH_SCRATCH(test_file_layout),
        AMQ_TEST_WITH_SCRATCH(test_flipped_bytes_refused),
        AMQ_TEST_WITH_SCRATCH(test_damaged_parameters),
        cmocka_unit_test(test_no_pair_floor_at_1e_9),
        cmocka_unit_test(test_fpr_1e_6_small_n),
        AMQ_TEST_WITH_SCRATCH(test_saved_version_1_file),
        cmocka_unit_test(test_version_1_expected_fpr_has_the_floor),
        AMQ_TEST_WITH_SCRATCH(test_versions_do_not_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
