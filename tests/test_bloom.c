/*
 * Tests for the classic Bloom filter (src/bloom/bloom.c): sizing, no false
 * negatives, the false-positive rate against the formula within a binomial
 * tolerance, the count estimate, union and intersection, batch queries,
 * save/load through the generic handle, and damaged files.
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

static amq_bloom *new_filter(uint64_t capacity, double fpr)
{
    amq_bloom_params params = { .capacity = capacity, .fpr = fpr };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_bloom *f = NULL;
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_OK);
    return f;
}

static void test_sizing_follows_the_formulas(void **state)
{
    (void)state;
    amq_bloom *f = new_filter(1000000, 0.01);
    uint64_t m = 0;
    uint32_t k = 0;
    assert_int_equal(amq_calc_optimal_m(&m, 1000000, 0.01, NULL), AMQ_OK);
    assert_int_equal(amq_calc_optimal_k(&k, m, 1000000, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_bits(f), m);
    assert_int_equal(amq_bloom_hashes(f), k);
    assert_int_equal(k, 7);
    /* Bits per key within 1% of -ln p / (ln 2)^2. */
    double formula = -log(0.01) / (log(2) * log(2));
    double per_key = (double)amq_bloom_bits(f) / 1e6;
    assert_true(fabs(per_key / formula - 1) < 0.01);
    assert_int_equal(amq_bloom_capacity(f), 1000000);
    amq_bloom_free(f);

    /* Sized by m and k directly. */
    amq_bloom_params params = { .bits = 1 << 20, .hashes = 3 };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_bits(f), 1 << 20);
    assert_int_equal(amq_bloom_hashes(f), 3);
    assert_int_equal(amq_bloom_hasher(f)->kind, AMQ_HASH_XXH3);
    amq_bloom_free(f);
}

static void test_sizing_errors(void **state)
{
    (void)state;
    amq_bloom *f = (amq_bloom *)&f;
    amq_bloom_params params = { 0 };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_EINVAL);
    assert_null(f);
    params = (amq_bloom_params){ .capacity = 1000, .fpr = 1.5 };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_EINVAL);
    params = (amq_bloom_params){ .capacity = 1000, .fpr = -0.1 };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_EINVAL);
    params = (amq_bloom_params){ .capacity = 1000000000000000ULL, .fpr = 0.01 };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_ERANGE);
    params = (amq_bloom_params){ .bits = 1000, .hashes = AMQ_BLOOM_MAX_HASHES + 1 };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_ERANGE);
    params = (amq_bloom_params){ .bits = 10 };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_ERANGE);
    params = (amq_bloom_params){ .capacity = 10, .hasher = { .kind = (amq_hash_kind)9 } };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_EINVAL);
    assert_null(f);
    /* A tiny capacity still gets the minimum size, not an error. */
    params = (amq_bloom_params){ .capacity = 1, .fpr = 0.5 };
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_bits(f), AMQ_BLOOM_MIN_BITS);
    amq_bloom_free(f);
    amq_bloom_free(NULL);
}

/* n keys added; none missing; then the FPR over 2n absent keys is within 4
 * binomial standard deviations of (1 - e^(-kn/m))^k for the actual m, k. */
static void check_fpr(uint64_t n, double p)
{
    amq_bloom *f = new_filter(n, p);
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        amq_bloom_add(f, &key, sizeof key);
    }
    assert_int_equal(amq__bloom_check(f), AMQ_OK);
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        if (!amq_bloom_contains(f, &key, sizeof key))
            fail_msg("false negative: key %llu of %llu (p = %g)", (unsigned long long)i,
                     (unsigned long long)n, p);
    }
    uint64_t trials = 2 * n, positives = 0;
    for (uint64_t i = 0; i < trials; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        positives += amq_bloom_contains(f, &key, sizeof key);
    }
    double expected = 0;
    assert_int_equal(amq_calc_fpr(&expected, n, amq_bloom_bits(f), amq_bloom_hashes(f), NULL),
                     AMQ_OK);
    double measured = (double)positives / (double)trials;
    double sigma = sqrt(expected * (1 - expected) / (double)trials);
    print_message("n=%llu p=%g m=%llu k=%u: measured FPR %.6f, expected %.6f (4 sigma %.6f)\n",
                  (unsigned long long)n, p, (unsigned long long)amq_bloom_bits(f),
                  amq_bloom_hashes(f), measured, expected, 4 * sigma);
    if (fabs(measured - expected) > 4 * sigma)
        fail_msg("FPR %.6f is more than 4 sigma (%.6f) from %.6f", measured, 4 * sigma, expected);
    /* The fill-based estimate agrees with the formula too. */
    assert_true(fabs(amq_bloom_expected_fpr(f) - expected) < 4 * sigma);
    amq_bloom_free(f);
}

static void test_fpr_10_percent(void **state)
{
    (void)state;
    check_fpr(1000000, 0.1);
}

static void test_fpr_1_percent(void **state)
{
    (void)state;
    check_fpr(1000000, 0.01);
}

static void test_fpr_tenth_percent(void **state)
{
    (void)state;
    check_fpr(1000000, 0.001);
}

static void test_estimated_count(void **state)
{
    (void)state;
    /* Sized for 1M at 1%: 100k .. 1M keys fill it from 7% to 50%, and the
     * estimate stays within 2% all the way. */
    amq_bloom *f = new_filter(1000000, 0.01);
    uint64_t added = 0;
    for (uint64_t step = 1; step <= 10; step++) {
        for (; added < step * 100000; added++) {
            amq_test_key key = amq_test_make_key(seed, 0, added);
            amq_bloom_add(f, &key, sizeof key);
        }
        double fill = (double)amq_bloom_bits_set(f) / (double)amq_bloom_bits(f);
        double estimate = amq_bloom_estimated_keys(f);
        if (fabs(estimate / (double)added - 1) > 0.02)
            fail_msg("after %llu keys (fill %.3f) the estimate is %.0f", (unsigned long long)added,
                     fill, estimate);
    }
    /* At capacity an optimal filter is half full. */
    double fill = (double)amq_bloom_bits_set(f) / (double)amq_bloom_bits(f);
    assert_true(fill > 0.48 && fill < 0.52);
    /* Adding the same keys again changes nothing. */
    uint64_t bits_set = amq_bloom_bits_set(f);
    for (uint64_t i = 0; i < 1000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        amq_bloom_add(f, &key, sizeof key);
    }
    assert_int_equal(amq_bloom_bits_set(f), bits_set);
    amq_bloom_free(f);
}

static void test_union_equals_filter_of_union(void **state)
{
    (void)state;
    amq_bloom *a = new_filter(200000, 0.01), *b = new_filter(200000, 0.01);
    amq_bloom *both = new_filter(200000, 0.01), *common = new_filter(200000, 0.01);
    /* A holds keys 0..99999, B holds 50000..149999. */
    for (uint64_t i = 0; i < 150000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        if (i < 100000)
            amq_bloom_add(a, &key, sizeof key);
        if (i >= 50000)
            amq_bloom_add(b, &key, sizeof key);
        amq_bloom_add(both, &key, sizeof key);
        if (i >= 50000 && i < 100000)
            amq_bloom_add(common, &key, sizeof key);
    }
    amq_bloom *intersection = new_filter(200000, 0.01);
    assert_int_equal(amq_bloom_merge(intersection, a, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_intersect(intersection, b, NULL), AMQ_OK);
    assert_int_equal(amq__bloom_check(intersection), AMQ_OK);

    assert_int_equal(amq_bloom_merge(a, b, NULL), AMQ_OK);
    assert_int_equal(amq__bloom_check(a), AMQ_OK);
    assert_int_equal(amq_bloom_bits_set(a), amq_bloom_bits_set(both));
    /* Bit-identical, and so the same answer to every probe. */
    assert_memory_equal(amq__bloom_words(a), amq__bloom_words(both),
                        (amq_bloom_bits(a) + 63) / 64 * 8);
    for (uint64_t i = 0; i < 300000; i++) {
        amq_test_key key = amq_test_make_key(seed, i & 1, i);
        assert_int_equal(amq_bloom_contains(a, &key, sizeof key),
                         amq_bloom_contains(both, &key, sizeof key));
    }
    /* The intersection holds every common key and is a superset of the
     * filter of the common keys. */
    assert_true(amq_bloom_bits_set(intersection) >= amq_bloom_bits_set(common));
    for (uint64_t i = 50000; i < 100000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_true(amq_bloom_contains(intersection, &key, sizeof key));
    }
    amq_bloom_free(a);
    amq_bloom_free(b);
    amq_bloom_free(both);
    amq_bloom_free(common);
    amq_bloom_free(intersection);
}

static void test_incompatible_filters_refused(void **state)
{
    (void)state;
    amq_bloom *a = new_filter(1000, 0.01);
    amq_bloom *other_size = new_filter(2000, 0.01);
    amq_bloom_params params = { .bits = amq_bloom_bits(a), .hashes = amq_bloom_hashes(a) + 1 };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_bloom *other_k = NULL;
    assert_int_equal(amq_bloom_new(&other_k, &params, NULL), AMQ_OK);
    params.hashes = amq_bloom_hashes(a);
    amq_hasher_xxh3(&params.hasher, seed + 1);
    amq_bloom *other_seed = NULL;
    assert_int_equal(amq_bloom_new(&other_seed, &params, NULL), AMQ_OK);

    assert_int_equal(amq_bloom_merge(a, other_size, NULL), AMQ_EINCOMPATIBLE);
    assert_int_equal(amq_bloom_merge(a, other_k, NULL), AMQ_EINCOMPATIBLE);
    assert_int_equal(amq_bloom_merge(a, other_seed, NULL), AMQ_EINCOMPATIBLE);
    assert_int_equal(amq_bloom_intersect(a, other_seed, NULL), AMQ_EINCOMPATIBLE);
    amq_bloom_free(a);
    amq_bloom_free(other_size);
    amq_bloom_free(other_k);
    amq_bloom_free(other_seed);
}

static void test_batch_and_hash_forms_agree(void **state)
{
    (void)state;
    amq_bloom *f = new_filter(50000, 0.05);
    for (uint64_t i = 0; i < 50000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        if (i % 2)
            amq_bloom_add(f, &key, sizeof key);
        else
            amq_bloom_add_hash(f, amq_hash128(amq_bloom_hasher(f), &key, sizeof key));
    }
    enum { COUNT = 1003 };
    static amq_test_key keys[COUNT];
    const void *pointers[COUNT];
    size_t lens[COUNT];
    uint8_t results[COUNT];
    amq_test_batch_keys(keys, pointers, lens, COUNT, seed, 37);
    amq_bloom_contains_many(results, f, pointers, lens, COUNT);
    uint64_t maybes = 0;
    for (uint64_t i = 0; i < COUNT; i++) {
        assert_int_equal(results[i], amq_bloom_contains(f, &keys[i], sizeof keys[i]));
        assert_int_equal(
            results[i],
            amq_bloom_contains_hash(f, amq_hash128(amq_bloom_hasher(f), &keys[i], sizeof keys[i])));
        maybes += results[i];
    }
    assert_true(maybes >= COUNT * 2 / 3 - 1); /* every present key at least */
    amq_bloom_contains_many(results, f, pointers, lens, 0);
    amq_bloom_free(f);
}

/* The batch by hashes gives each hash the answer amq_bloom_contains_hash
 * gives, for each probe version and for k unrolled (4, 7) and not (5), in
 * calls shorter than the prefetch distance as well as long ones. */
static void test_batch_by_hashes_agrees(void **state)
{
    (void)state;
    const struct {
        unsigned version;
        amq_bloom_params params;
    } cases[] = {
        { AMQ__BLOOM_PROBE_REHASH, { .capacity = 20000, .fpr = 0.05 } },
        { AMQ__BLOOM_PROBE_REHASH, { .capacity = 20000, .fpr = 0.01 } },
        { AMQ__BLOOM_PROBE_REHASH, { .bits = 150000, .hashes = 5 } },
        { AMQ__BLOOM_PROBE_DOUBLE, { .capacity = 20000, .fpr = 0.01 } },
    };
    enum { COUNT = 1003 };
    static amq_u128 hashes[COUNT];
    static uint8_t results[COUNT];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        amq_bloom_params params = cases[c].params;
        amq_hasher_xxh3(&params.hasher, seed);
        amq_bloom *f = NULL;
        assert_int_equal(amq__bloom_new(&f, &params, cases[c].version, NULL), AMQ_OK);
        for (uint64_t i = 0; i < 20000; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            amq_bloom_add(f, &key, sizeof key);
        }
        /* Every other hash is of an added key: both answers occur. */
        for (uint64_t i = 0; i < COUNT; i++) {
            amq_test_key key = amq_test_make_key(seed, i % 2, i);
            hashes[i] = amq_hash128(amq_bloom_hasher(f), &key, sizeof key);
        }
        const size_t lengths[] = { COUNT, 5, 1 };
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            memset(results, 0xff, sizeof results);
            amq_bloom_contains_many_hash(results, f, hashes, lengths[l]);
            uint64_t maybes = 0, absent = 0;
            for (uint64_t i = 0; i < lengths[l]; i++) {
                assert_int_equal(results[i], amq_bloom_contains_hash(f, hashes[i]));
                maybes += results[i];
                absent += results[i] == 0;
            }
            assert_true(maybes >= (lengths[l] + 1) / 2); /* the added keys at least */
            if (lengths[l] == COUNT)
                assert_true(absent > 0);
            for (uint64_t i = lengths[l]; i < COUNT; i++)
                assert_int_equal(results[i], 0xff); /* nothing past count written */
        }
        amq_bloom_contains_many_hash(results, f, NULL, 0);
        amq_bloom_free(f);
    }
}

static void test_zero_step_hash_still_spreads(void **state)
{
    (void)state;
    amq_bloom_params params = { .bits = 1 << 16, .hashes = 8 };
    amq_bloom *f = NULL;
    assert_int_equal(amq__bloom_new(&f, &params, AMQ__BLOOM_PROBE_DOUBLE, NULL), AMQ_OK);
    amq_u128 hash = { .low = 0x123456789abcdef0ULL, .high = 0 };
    amq_bloom_add_hash(f, hash);
    /* Version 1, g(i) = x + (i^3 - i)/6: 0, 0, 1, 4, 10, ... - only the
     * first two coincide. */
    assert_int_equal(amq_bloom_bits_set(f), 7);
    assert_true(amq_bloom_contains_hash(f, hash));
    amq_bloom_free(f);
    /* Version 2 adds h.high | 1 = 1 at each step of the chain, and the
     * multiplication spreads the states: eight distinct positions. */
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_OK);
    assert_int_equal(amq__bloom_probe_version(f), AMQ__BLOOM_PROBE_REHASH);
    amq_bloom_add_hash(f, hash);
    assert_int_equal(amq_bloom_bits_set(f), 8);
    assert_true(amq_bloom_contains_hash(f, hash));
    amq_bloom_free(f);
}

/* The query has a copy per usual hash count and a shared loop for the
 * others: at every k, its answer must be "all k bits at the key's positions
 * are set", read here one bit at a time from the filter's words. Each
 * filter gets 1.6 m / k keys, which sets about 80% of its bits, so that
 * both answers occur often (at k <= 16, at least one in 40 trials is maybe
 * present). */
static void test_every_hash_count_answers_by_its_bits(void **state)
{
    (void)state;
    enum { bits = 4096, most_keys = 1 + bits * 16 / 10 };
    static amq_u128 added[most_keys];
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0xb175);
    for (uint32_t t = 0; t < 2 * AMQ_BLOOM_MAX_HASHES; t++) {
        uint32_t k = 1 + t / 2;
        unsigned version = t % 2 ? AMQ__BLOOM_PROBE_REHASH : AMQ__BLOOM_PROBE_DOUBLE;
        amq_bloom_params params = { .bits = bits, .hashes = k };
        amq_bloom *f = NULL;
        assert_int_equal(amq__bloom_new(&f, &params, version, NULL), AMQ_OK);
        size_t keys = 1 + bits * 16 / 10 / k;
        for (size_t i = 0; i < keys; i++) {
            added[i] = (amq_u128){ amq_test_next(&rng), amq_test_next(&rng) };
            amq_bloom_add_hash(f, added[i]);
        }
        for (size_t i = 0; i < keys; i++)
            assert_true(amq_bloom_contains_hash(f, added[i]));
        const uint64_t *words = amq__bloom_words(f);
        unsigned answers[2] = { 0, 0 };
        for (size_t trial = 0; trial < 4000; trial++) {
            amq_u128 hash = { amq_test_next(&rng), amq_test_next(&rng) };
            amq__bloom_probe p = amq__bloom_probe_start(hash, amq_bloom_bits(f), version);
            bool all_set = true;
            for (uint32_t i = 0; i < k; i++) {
                all_set = all_set && (words[p.position / 64] >> (p.position % 64) & 1);
                amq__bloom_probe_next(&p, i);
            }
            if (amq_bloom_contains_hash(f, hash) != all_set)
                fail_msg("k = %u, probe version %u: answered %d where the bits say %d", k, version,
                         !all_set, all_set);
            answers[all_set]++;
        }
        assert_true(answers[0] > 0);
        if (k <= 16)
            assert_true(answers[1] > 0);
        amq_bloom_free(f);
    }
}

static void test_past_2_to_the_32_bits(void **state)
{
    (void)state;
    uint64_t m = ((uint64_t)1 << 32) + 4096;
    amq_bloom_params params = { .bits = m, .hashes = 4 };
    for (unsigned version = AMQ__BLOOM_PROBE_DOUBLE; version <= AMQ__BLOOM_PROBE_REHASH;
         version++) {
        amq_bloom *f = NULL;
        assert_int_equal(amq__bloom_new(&f, &params, version, NULL), AMQ_OK);
        assert_int_equal(amq_bloom_bits(f), m);
        /* Keys whose bits land past 2^32: the position is not truncated. */
        amq_u128 high = { .low = UINT64_MAX - 1000, .high = 1 };
        amq_bloom_add_hash(f, high);
        assert_true(amq_bloom_contains_hash(f, high));
        amq_u128 low = { .low = 1000, .high = 1 };
        assert_false(amq_bloom_contains_hash(f, low));
        for (uint64_t i = 0; i < 1000; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            amq_bloom_add(f, &key, sizeof key);
        }
        for (uint64_t i = 0; i < 1000; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            assert_true(amq_bloom_contains(f, &key, sizeof key));
        }
        /* 4004 positions among 2^32 bits: a collision is a one-in-500 event. */
        assert_true(amq_bloom_bits_set(f) >= 4002 && amq_bloom_bits_set(f) <= 4004);
        amq_bloom_free(f);
    }
}

/* ---- through the generic handle ------------------------------------------------ */

/* The round trip itself (answers, amq_info, the bytes saved again) is
 * test_conformance.c's; here a loaded filter keeps working. */
static void test_generic_loaded_filters_keep_working(void **state)
{
    char path[AMQ_TEST_PATH_MAX], spec[128];
    amq_test_scratch_path(path, state, "f.amq");
    snprintf(spec, sizeof spec, "bloom n=20000 p=0.02 seed=%llu", (unsigned long long)seed);

    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
    for (uint64_t i = 0; i < 20000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_add(f, &key, sizeof key), AMQ_OK);
    }
    amq_info a;
    assert_int_equal(amq_info_get(&a, f), AMQ_OK);
    assert_int_equal(a.capacity, 20000);
    assert_true(fabs(a.estimated_keys / 20000 - 1) < 0.02);
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);

    for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
        amq_filter *g = NULL;
        amq_diag diag = { .message = "" };
        assert_int_equal(amq_load(&g, path, flags, &diag), AMQ_OK);
        /* Loaded filters keep working: add, merge. */
        assert_int_equal(amq_add(g, "new key", 7), AMQ_OK);
        assert_int_equal(amq_contains(g, "new key", 7), 1);
        assert_int_equal(amq_merge(g, f, &diag), AMQ_OK);
        amq_free(g);
    }

    /* Merging a filter of a different size names the difference. */
    amq_test_expect_merge_refused(f, "bloom n=1000", "bits");
    amq_free(f);
}

static void test_generic_spec_errors(void **state)
{
    (void)state;
    const amq_test_spec_case cases[] = {
        { "bloom", AMQ_EINVAL, "capacity" },
        { "bloom n=0", AMQ_EINVAL, "capacity" },
        { "bloom n=1e15", AMQ_ERANGE, "bits" },
        { "bloom n=1000 k=65", AMQ_EINVAL, "hashes" },
        { "bloom n=1000 layout=split", AMQ_EINVAL, "unknown option 'layout' for bloom" },
        { "bloom n=1000 p=2", AMQ_EINVAL, "fpr" },
        { "bloom n=1000 m=abc", AMQ_EINVAL, "bits" },
        { "bloom n=1000 hash=siphash", AMQ_EINVAL, "key" },
    };
    amq_test_expect_spec_errors(cases, sizeof cases / sizeof cases[0]);
    /* m and k directly; siphash and md5 hashers. */
    const char *const good[] = {
        "bloom m=100000 k=5",
        "bloom n=1000 hash=siphash key=000102030405060708090a0b0c0d0e0f",
        "bloom n=1000 hash=md5",
    };
    amq_test_expect_specs_accepted(good, sizeof good / sizeof good[0], false);
    /* amq_build sizes a dynamic filter by its keys when no n is given. */
    amq_test_expect_sized_by_keys("bloom p=0.01");
}

/* Every single-byte change and every truncation of a saved file is
 * refused. */
static void test_damaged_files(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, "bloom m=1000 k=3", NULL), AMQ_OK);
    for (int i = 0; i < 50; i++)
        amq_add(f, &i, sizeof i);
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
    amq_free(f);
    size_t len = 0;
    uint8_t *good = (uint8_t *)amq_test_read_file(path, &len);
    assert_non_null(good);
    amq_test_expect_damage_refused(path, good, len);
    free(good);
}

/* ---- the probe sequence and its version ------------------------------------------ */

/* The pair floor. Version 1 gave every key whose pair (x, y) matched a
 * stored key's all of its positions: at n = 1000, p = 1e-9 (m = 43133) that
 * is n / m^2 = 5.4e-7, about 11 of 2 * 10^7 absent keys. Version 2 must
 * deliver the filter's own rate, 1e-9: 0.02 expected. More than 3 fails;
 * a filter that delivers 1e-9 does that with a chance of 7e-9 (Poisson
 * 0.02: P(X >= 4) = 0.02^4 / 24), a version-1 filter passes with a chance
 * of 0.6% (Poisson 10.8: P(X <= 3)). */
static void test_no_pair_floor_at_1e_9(void **state)
{
    (void)state;
    amq_test_expect_at_most_false_positives("bloom n=1000 p=1e-9", seed, 1000, 20000000, 3);
}

/* At n = 1000 and p = 1e-6, 2 * 10^7 absent keys: about 20 false
 * positives, as many as the filter's fill predicts (amq_info's
 * expected_fpr), and that at most twice the target (the fill of 1000 keys
 * in 28756 bits varies: the rate is within 1.5 times p for 3 standard
 * deviations of the fill). */
static void test_fpr_1e_6_small_n(void **state)
{
    (void)state;
    amq_test_expect_low_rate("bloom n=1000 p=1e-6", seed, AMQ_TEST_ADD, 1000, 20000000, 2);
}

/* tests/data/bloom/bloom-v1.amq, saved before the probe version field
 * (tests/data/README.md): it loads as version 1, answers every key as it
 * did then, reports the pair floor in its expected rate, and saves back to
 * the same bytes (the version kept, the field left out). */
static void test_saved_version_1_file(void **state)
{
    char saved[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(saved, state, "saved.amq");
    for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
        amq_filter *f = amq_test_load_golden_version_1("bloom-v1.amq", flags, saved);
        /* An added key keeps the version. */
        assert_int_equal(amq_add(f, "golden-x", 8), AMQ_OK);
        assert_int_equal(amq_save(f, saved, NULL), AMQ_OK);
        amq_filter *g = NULL;
        assert_int_equal(amq_load(&g, saved, 0, NULL), AMQ_OK);
        assert_true(amq_test_detail_value(g, "probe_version") == 1);
        assert_int_equal(amq_contains(g, "golden-x", 8), 1);
        amq_free(g);
        amq_free(f);
    }
}

/* A version-1 filter's amq_bloom_expected_fpr counts the pair floor: at
 * capacity with p = 1e-9 it is near n / m^2, not p; a version-2 filter's
 * is the fill's alone. */
static void test_version_1_expected_fpr_has_the_floor(void **state)
{
    (void)state;
    amq_bloom_params params = { .capacity = 1000, .fpr = 1e-9 };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_bloom *old = NULL, *latest = NULL;
    assert_int_equal(amq__bloom_new(&old, &params, AMQ__BLOOM_PROBE_DOUBLE, NULL), AMQ_OK);
    assert_int_equal(amq__bloom_new(&latest, &params, AMQ__BLOOM_PROBE_REHASH, NULL), AMQ_OK);
    for (uint64_t i = 0; i < 1000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        amq_bloom_add(old, &key, sizeof key);
        amq_bloom_add(latest, &key, sizeof key);
    }
    double m = (double)amq_bloom_bits(old);
    double fill = pow((double)amq_bloom_bits_set(latest) / m, amq_bloom_hashes(latest));
    assert_true(amq_bloom_expected_fpr(latest) == fill);
    assert_true(fill < 3e-9);
    double floor = 1000 / (m * m);
    assert_true(fabs(amq_bloom_expected_fpr(old) / (floor + fill) - 1) < 0.05);
    amq_bloom_free(old);
    amq_bloom_free(latest);
}

/* The parameter block: 36 bytes is version 1, 40 bytes ends in the probe
 * version, which must then be 2; anything else is refused. A version-1
 * filter and a version-2 one of the same size do not merge. */
static void test_version_field(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "crafted.amq");
    uint8_t words[16] = { 0x05 }; /* bits 0 and 2 of m = 128 */
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, 3);
    struct {
        uint32_t version; /* 0: no field */
        int extra;        /* bytes appended after it */
        const char *refusal;
        int loaded_version;
    } cases[] = {
        { 0, 0, NULL, 1 },
        { 2, 0, NULL, 2 },
        { 1, 0, "probe version 1 is not 2", 0 },
        { 3, 0, "probe version 3 is not 2", 0 },
        { 0, 1, "parameters are 37 bytes", 0 },
        { 2, 1, "parameters are 41 bytes", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amq__params_writer w;
        amq__params_init(&w);
        amq__params_put_u64(&w, 128);
        amq__params_put_u32(&w, 2);
        amq__params_put_u64(&w, 10);
        amq__params_put_f64(&w, 0.01);
        amq__params_put_u64(&w, 2);
        if (cases[i].version)
            amq__params_put_u32(&w, cases[i].version);
        for (int j = 0; j < cases[i].extra; j++)
            amq__params_put_u8(&w, 0);
        amq_test_write_container(path, AMQ__FAMILY_BLOOM, &hasher, w.bytes, w.len, words,
                                 sizeof words);
        amq_test_expect_load(path, cases[i].refusal, "case %zu", i);
        if (!cases[i].refusal) {
            amq_filter *f = NULL;
            assert_int_equal(amq_load(&f, path, 0, NULL), AMQ_OK);
            assert_true(amq_test_detail_value(f, "probe_version") == cases[i].loaded_version);
            amq_filter *latest = NULL;
            assert_int_equal(amq_new(&latest, "bloom m=128 k=2 seed=3", NULL), AMQ_OK);
            amq_diag diag = { .message = "" };
            if (cases[i].loaded_version == 1) {
                assert_int_equal(amq_merge(f, latest, &diag), AMQ_EINCOMPATIBLE);
                assert_non_null(strstr(diag.message, "probe versions 1 and 2"));
            } else {
                assert_int_equal(amq_merge(f, latest, &diag), AMQ_OK);
            }
            amq_free(latest);
            amq_free(f);
        }
    }
}

/* A saturated filter (every bit set) expects a false-positive rate of 1:
 * its estimate of the keys is infinite, which must not turn the rate into
 * NaN. */
static void test_saturated_filter_expects_every_key(void **state)
{
    (void)state;
    amq_bloom *f = new_filter(100, 0.01);
    for (uint64_t i = 0; i < 20000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        amq_bloom_add(f, &key, sizeof key);
    }
    assert_true(isinf(amq_bloom_estimated_keys(f)));
    assert_true(amq_bloom_expected_fpr(f) == 1.0);
    amq_bloom_free(f);
}

int main(void)
{
    seed = amq_test_seed(20261122);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizing_follows_the_formulas),
        cmocka_unit_test(test_sizing_errors),
        cmocka_unit_test(test_fpr_10_percent),
        cmocka_unit_test(test_fpr_1_percent),
        cmocka_unit_test(test_fpr_tenth_percent),
        cmocka_unit_test(test_estimated_count),
        cmocka_unit_test(test_union_equals_filter_of_union),
        cmocka_unit_test(test_incompatible_filters_refused),
        cmocka_unit_test(test_batch_and_hash_forms_agree),
        cmocka_unit_test(test_batch_by_hashes_agrees),
        cmocka_unit_test(test_zero_step_hash_still_spreads),
        cmocka_unit_test(test_every_hash_count_answers_by_its_bits),
        cmocka_unit_test(test_past_2_to_the_32_bits),
        AMQ_TEST_WITH_SCRATCH(test_generic_loaded_filters_keep_working),
        cmocka_unit_test(test_generic_spec_errors),
        AMQ_TEST_WITH_SCRATCH(test_damaged_files),
        cmocka_unit_test(test_no_pair_floor_at_1e_9),
        cmocka_unit_test(test_fpr_1e_6_small_n),
        AMQ_TEST_WITH_SCRATCH(test_saved_version_1_file),
        cmocka_unit_test(test_version_1_expected_fpr_has_the_floor),
        cmocka_unit_test(test_saturated_filter_expects_every_key),
        AMQ_TEST_WITH_SCRATCH(test_version_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
