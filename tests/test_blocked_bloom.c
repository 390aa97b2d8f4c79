/*
 * Tests for the blocked Bloom filters (src/bloom/blocked_bloom.c), both layouts:
 * the split-block bits against values computed from Parquet's definition,
 * the AVX2 and portable paths setting the same bits, sizing by the
 * Poisson-mix formula (and the formula against measurement), no false
 * negatives, the FPR at or below the target, the count estimate, union and
 * intersection, batch queries, save/load and damaged parameters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bloom.h"
#include "bloom/bloom_internal.h"
#include "core/format.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

static amq_blocked_bloom *new_filter(amq_blocked_layout layout, uint64_t capacity, double fpr)
{
    amq_blocked_bloom_params params = { .capacity = capacity, .fpr = fpr, .layout = layout };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_blocked_bloom *f = NULL;
    assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
    return f;
}

static uint64_t word_count(const amq_blocked_bloom *f)
{
    return amq_blocked_bloom_bits(f) / 32;
}

/* ---- the split-block layout is Parquet's ------------------------------------------ */

static void test_split_block_bits_are_parquets(void **state)
{
    (void)state;
    /* Four 256-bit blocks and four hashes; the expected words were computed
     * from the Parquet specification's definition (block index
     * ((h >> 32) * blocks) >> 32; in word i, bit ((uint32)h * salt[i]) >> 27)
     * by a separate script. Blocks 0 and 3 get two keys each. */
    static const uint32_t expected[32] = {
        0x00840000, 0x00880000, 0x40004000, 0x00800800, 0x00020010, 0x04010000, 0x00001000,
        0x01100000, 0,          0,          0,          0,          0,          0,
        0,          0,          0,          0,          0,          0,          0,
        0,          0,          0,          0x00000110, 0x00000110, 0x00030000, 0x00100000,
        0x00006000, 0x00000420, 0x80080000, 0x08000800,
    };
    static const uint64_t hashes[4] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL,
                                        0x00000000ffffffffULL, 0xdeadbeef00000001ULL };
    for (int portable = 0; portable <= 1; portable++) {
        amq_blocked_bloom_params params = { .bits = 1024 };
        amq_blocked_bloom *f = NULL;
        assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
        assert_int_equal(amq_blocked_bloom_blocks(f), 4);
        assert_int_equal(amq_blocked_bloom_hashes(f), 8);
        if (portable)
            amq__blocked_bloom_use_portable(f);
        for (int i = 0; i < 4; i++)
            amq_blocked_bloom_add_hash(f, hashes[i]);
        assert_memory_equal(amq_blocked_bloom_words(f), expected, sizeof expected);
        for (int i = 0; i < 4; i++)
            assert_true(amq_blocked_bloom_contains_hash(f, hashes[i]));
        /* Two keys of a block may pick the same bit of a word: 30 of 32. */
        assert_int_equal(amq_blocked_bloom_bits_set(f), 30);
        amq_blocked_bloom_free(f);
    }
}

/* Two filters of one shape, one on the AVX2 paths (where the CPU has them)
 * and one on the portable ones, get the same keys: the same bits, the same
 * answers, for present and absent keys alike. k = 12 and 16 take the block
 * layout's AVX2 query through its second round of eight positions. */
static void paths_agree(amq_blocked_layout layout, uint32_t hashes)
{
    amq_blocked_bloom_params params = {
        .capacity = 100000, .fpr = 0.01, .layout = layout, .hashes = hashes
    };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_blocked_bloom *fast = NULL, *portable = NULL;
    assert_int_equal(amq_blocked_bloom_new(&fast, &params, NULL), AMQ_OK);
    assert_int_equal(amq_blocked_bloom_new(&portable, &params, NULL), AMQ_OK);
    amq__blocked_bloom_use_portable(portable);
    assert_false(amq__blocked_bloom_uses_avx2(portable));
    for (uint64_t i = 0; i < 100000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        amq_blocked_bloom_add(fast, &key, sizeof key);
        amq_blocked_bloom_add(portable, &key, sizeof key);
    }
    assert_memory_equal(amq_blocked_bloom_words(fast), amq_blocked_bloom_words(portable),
                        word_count(fast) * 4);
    uint64_t fast_hits = 0;
    for (uint64_t i = 0; i < 200000; i++) {
        amq_test_key key = amq_test_make_key(seed, i & 1, i);
        bool answer = amq_blocked_bloom_contains(fast, &key, sizeof key);
        assert_int_equal(answer, amq_blocked_bloom_contains(portable, &key, sizeof key));
        uint64_t hash = amq_hash64(amq_blocked_bloom_hasher(fast), &key, sizeof key);
        assert_int_equal(amq_blocked_bloom_contains_hash(fast, hash), answer);
        assert_int_equal(amq_blocked_bloom_contains_hash(portable, hash), answer);
        fast_hits += answer;
    }
    /* The 50,000 present keys (even i below 100,000) and a few percent at
     * most of the absent ones (sized for 1%): the test saw both answers. */
    assert_true(fast_hits > 50000 && fast_hits < 50000 + 150000 / 20);
    amq_blocked_bloom_free(fast);
    amq_blocked_bloom_free(portable);
}

static void test_avx2_and_portable_paths_agree(void **state)
{
    (void)state;
    amq_blocked_bloom *probe = new_filter(AMQ_BLOCKED_SPLIT, 1000, 0.01);
    print_message("this CPU %s the AVX2 paths\n",
                  amq__blocked_bloom_uses_avx2(probe) ? "takes" : "does not take");
    amq_blocked_bloom_free(probe);
    paths_agree(AMQ_BLOCKED_SPLIT, 8);
    paths_agree(AMQ_BLOCKED_BLOCK, 0); /* k = 6 at 1% */
    for (uint32_t hashes = 1; hashes <= AMQ_BLOCKED_BLOOM_MAX_HASHES; hashes++)
        paths_agree(AMQ_BLOCKED_BLOCK, hashes);
}

static void test_block_layout_keeps_a_key_in_one_block(void **state)
{
    (void)state;
    amq_blocked_bloom_params params = { .bits = 512 * 64,
                                        .hashes = 9,
                                        .layout = AMQ_BLOCKED_BLOCK };
    amq_blocked_bloom *f = NULL;
    assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
    assert_int_equal(amq_blocked_bloom_blocks(f), 64);
    /* Block b takes hashes whose high half is in [b, b + 1) * 2^32 / 64. */
    uint64_t hash = ((uint64_t)37 << 26 | 5) << 32 | 0x9e3779b9U;
    amq_blocked_bloom_add_hash(f, hash);
    const uint32_t *words = amq_blocked_bloom_words(f);
    uint64_t set = 0;
    for (uint64_t i = 0; i < word_count(f); i++) {
        if (words[i] != 0 && i / 16 != 37)
            fail_msg("word %llu outside block 37 is set", (unsigned long long)i);
        set += (uint64_t)__builtin_popcount(words[i]);
    }
    assert_true(set >= 7 && set <= 9); /* 9 positions, rarely two coincide */
    assert_true(amq_blocked_bloom_contains_hash(f, hash));
    amq_blocked_bloom_free(f);
}

/* ---- sizing ------------------------------------------------------------------ */

static void test_sizing_is_the_fewest_blocks_meeting_p(void **state)
{
    (void)state;
    const double rates[] = { 0.1, 0.01, 0.001, 0.0001 };
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        for (int layout = AMQ_BLOCKED_SPLIT; layout <= AMQ_BLOCKED_BLOCK; layout++) {
            double p = rates[i];
            amq_blocked_bloom *f = new_filter((amq_blocked_layout)layout, 1000000, p);
            uint64_t m = amq_blocked_bloom_bits(f), block = layout ? 512 : 256;
            uint32_t k = amq_blocked_bloom_hashes(f);
            assert_int_equal(m % block, 0);
            double fpr = amq_blocked_bloom_formula_fpr((amq_blocked_layout)layout, 1000000, m, k);
            double fewer =
                amq_blocked_bloom_formula_fpr((amq_blocked_layout)layout, 1000000, m - block, k);
            assert_true(fpr <= p);
            assert_true(fewer > p);
            /* Any other k needs at least as many blocks. */
            for (uint32_t other = 1; layout && other <= AMQ_BLOCKED_BLOOM_MAX_HASHES; other++)
                assert_true(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_BLOCK, 1000000, m - block,
                                                          other) > p);
            /* Blocking costs bits: more than the classic filter's, but at
             * these rates less than 1.5 times as many. */
            double classic = -log(p) / (log(2) * log(2)), per_key = (double)m / 1e6;
            print_message("p=%g %s: %.2f bits/key (classic %.2f), k=%u\n", p,
                          layout ? "block" : "split", per_key, classic, k);
            assert_true(per_key > classic && per_key < 1.5 * classic);
            amq_blocked_bloom_free(f);
        }
    }
    /* The formula itself: more keys, higher FPR; invalid shapes give NaN. */
    assert_true(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_SPLIT, 1000, 1 << 16, 8) <
                amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_SPLIT, 2000, 1 << 16, 8));
    assert_true(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_SPLIT, 0, 1 << 16, 8) == 0);
    assert_true(isnan(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_SPLIT, 10, 1 << 16, 7)));
    assert_true(isnan(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_BLOCK, 10, 1000, 4)));
    assert_true(isnan(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_BLOCK, 10, 1 << 16, 17)));
    /* A billion keys per block: the FPR is 1, computed without a long sum. */
    assert_true(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_SPLIT, 1000000000000ULL, 256, 8) > 0.99);
}

static void test_sizing_by_bits_and_errors(void **state)
{
    (void)state;
    amq_blocked_bloom *f = (amq_blocked_bloom *)&f;
    amq_blocked_bloom_params params = { .bits = 1000000, .fpr = 0.01, .layout = AMQ_BLOCKED_BLOCK };
    assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
    /* Rounded up to whole 512-bit blocks; the capacity is what they hold. */
    assert_int_equal(amq_blocked_bloom_bits(f), 1000448);
    uint64_t n = amq_blocked_bloom_capacity(f);
    uint32_t k = amq_blocked_bloom_hashes(f);
    assert_true(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_BLOCK, n, 1000448, k) <= 0.01);
    assert_true(amq_blocked_bloom_formula_fpr(AMQ_BLOCKED_BLOCK, n + n / 100, 1000448, k) > 0.01);
    amq_blocked_bloom_free(f);

    struct {
        amq_blocked_bloom_params params;
        int status;
    } cases[] = {
        { { .fpr = 0.01 }, AMQ_EINVAL },
        { { .capacity = 10, .fpr = 1 }, AMQ_EINVAL },
        { { .capacity = 10, .hashes = 4 }, AMQ_EINVAL }, /* split is k = 8 */
        { { .capacity = 10, .layout = (amq_blocked_layout)2 }, AMQ_EINVAL },
        { { .capacity = 10, .hashes = 17, .layout = AMQ_BLOCKED_BLOCK }, AMQ_ERANGE },
        { { .capacity = 1000000000000000ULL, .fpr = 0.01 }, AMQ_ERANGE },
        { { .bits = (uint64_t)1 << 50 }, AMQ_ERANGE },
        { { .capacity = 10, .hasher = { .kind = (amq_hash_kind)7 } }, AMQ_EINVAL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        f = (amq_blocked_bloom *)&f;
        int status = amq_blocked_bloom_new(&f, &cases[i].params, NULL);
        if (status != cases[i].status)
            fail_msg("case %zu: status %d, expected %d", i, status, cases[i].status);
        assert_null(f);
    }
    /* Sized from the capacity, a filter takes at most 256 bits per key (or
     * the allowance, for a few keys); a lower rate than the blocks reach
     * within that is refused, and the rate just above it is made. */
    const struct {
        amq_blocked_layout layout;
        double made, refused;
    } ceilings[] = { { AMQ_BLOCKED_SPLIT, 1e-8, 1e-9 }, { AMQ_BLOCKED_BLOCK, 1e-12, 1e-13 } };
    for (size_t i = 0; i < 2; i++) {
        params = (amq_blocked_bloom_params){ .capacity = 100000,
                                             .fpr = ceilings[i].made,
                                             .layout = ceilings[i].layout };
        assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
        assert_true(amq_blocked_bloom_bits(f) <= 100000 * AMQ_BLOCKED_BLOOM_MAX_BITS_PER_KEY);
        amq_blocked_bloom_free(f);
        params.fpr = ceilings[i].refused;
        assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_ERANGE);
        assert_null(f);
        /* Given its bits, the filter takes them as asked. */
        params = (amq_blocked_bloom_params){ .bits = 100000 * 400,
                                             .fpr = ceilings[i].refused,
                                             .layout = ceilings[i].layout };
        assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
        amq_blocked_bloom_free(f);
    }
    /* A few keys get the allowance: one key at 1e-11 in split blocks. */
    params = (amq_blocked_bloom_params){ .capacity = 1, .fpr = 1e-11 };
    assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
    assert_true(amq_blocked_bloom_bits(f) <= AMQ_BLOCKED_BLOOM_ALLOWANCE_BITS);
    amq_blocked_bloom_free(f);
    /* One key at p = 0.5 still gets a block. */
    params = (amq_blocked_bloom_params){ .capacity = 1, .fpr = 0.5 };
    assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
    assert_int_equal(amq_blocked_bloom_blocks(f), 1);
    amq_blocked_bloom_free(f);
    amq_blocked_bloom_free(NULL);
}

/* ---- correct to the statistics ------------------------------------------------- */

/* n keys, none missing; the FPR over 2n absent keys is at most p + 4 sigma
 * and within 4 sigma of the formula for the actual filter. */
static void check_fpr(amq_blocked_layout layout, uint64_t n, double p)
{
    amq_blocked_bloom *f = new_filter(layout, n, p);
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        amq_blocked_bloom_add(f, &key, sizeof key);
    }
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        if (!amq_blocked_bloom_contains(f, &key, sizeof key))
            fail_msg("false negative: key %llu of %llu", (unsigned long long)i,
                     (unsigned long long)n);
    }
    uint64_t trials = 2 * n, positives = 0;
    for (uint64_t i = 0; i < trials; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        positives += amq_blocked_bloom_contains(f, &key, sizeof key);
    }
    double formula = amq_blocked_bloom_formula_fpr(layout, n, amq_blocked_bloom_bits(f),
                                                   amq_blocked_bloom_hashes(f));
    double measured = (double)positives / (double)trials;
    double sigma = sqrt(p * (1 - p) / (double)trials);
    double formula_sigma = sqrt(formula * (1 - formula) / (double)trials);
    print_message("%s n=%llu p=%g k=%u %.2f bits/key: FPR %.6f, formula %.6f, p + 4 sigma %.6f\n",
                  layout ? "block" : "split", (unsigned long long)n, p, amq_blocked_bloom_hashes(f),
                  (double)amq_blocked_bloom_bits(f) / (double)n, measured, formula, p + 4 * sigma);
    if (measured > p + 4 * sigma)
        fail_msg("FPR %.6f is above p + 4 sigma = %.6f", measured, p + 4 * sigma);
    if (fabs(measured - formula) > 4 * formula_sigma)
        fail_msg("FPR %.6f is more than 4 sigma from the formula's %.6f", measured, formula);
    /* The fill-based figure agrees, and the count estimate is within 2%. */
    assert_true(fabs(amq_blocked_bloom_expected_fpr(f) - formula) < 4 * formula_sigma);
    double estimate = amq_blocked_bloom_estimated_keys(f);
    if (fabs(estimate / (double)n - 1) > 0.02)
        fail_msg("estimated %.0f keys, added %llu", estimate, (unsigned long long)n);
    amq_blocked_bloom_free(f);
}

static void test_split_fpr_10_percent(void **state)
{
    (void)state;
    check_fpr(AMQ_BLOCKED_SPLIT, 1000000, 0.1);
}

static void test_split_fpr_1_percent(void **state)
{
    (void)state;
    check_fpr(AMQ_BLOCKED_SPLIT, 1000000, 0.01);
}

static void test_split_fpr_tenth_percent(void **state)
{
    (void)state;
    check_fpr(AMQ_BLOCKED_SPLIT, 1000000, 0.001);
}

static void test_block_fpr_10_percent(void **state)
{
    (void)state;
    check_fpr(AMQ_BLOCKED_BLOCK, 1000000, 0.1);
}

static void test_block_fpr_1_percent(void **state)
{
    (void)state;
    check_fpr(AMQ_BLOCKED_BLOCK, 1000000, 0.01);
}

static void test_block_fpr_tenth_percent(void **state)
{
    (void)state;
    check_fpr(AMQ_BLOCKED_BLOCK, 1000000, 0.001);
}

static void test_union_equals_filter_of_union(void **state)
{
    (void)state;
    for (int layout = AMQ_BLOCKED_SPLIT; layout <= AMQ_BLOCKED_BLOCK; layout++) {
        amq_blocked_layout l = (amq_blocked_layout)layout;
        amq_blocked_bloom *a = new_filter(l, 200000, 0.01), *b = new_filter(l, 200000, 0.01);
        amq_blocked_bloom *both = new_filter(l, 200000, 0.01);
        for (uint64_t i = 0; i < 150000; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            if (i < 100000)
                amq_blocked_bloom_add(a, &key, sizeof key);
            if (i >= 50000)
                amq_blocked_bloom_add(b, &key, sizeof key);
            amq_blocked_bloom_add(both, &key, sizeof key);
        }
        amq_blocked_bloom *intersection = new_filter(l, 200000, 0.01);
        assert_int_equal(amq_blocked_bloom_merge(intersection, a, NULL), AMQ_OK);
        assert_int_equal(amq_blocked_bloom_intersect(intersection, b, NULL), AMQ_OK);
        for (uint64_t i = 50000; i < 100000; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            assert_true(amq_blocked_bloom_contains(intersection, &key, sizeof key));
        }
        assert_true(amq_blocked_bloom_bits_set(intersection) < amq_blocked_bloom_bits_set(a));

        assert_int_equal(amq_blocked_bloom_merge(a, b, NULL), AMQ_OK);
        assert_memory_equal(amq_blocked_bloom_words(a), amq_blocked_bloom_words(both),
                            word_count(a) * 4);
        amq_blocked_bloom_free(a);
        amq_blocked_bloom_free(b);
        amq_blocked_bloom_free(both);
        amq_blocked_bloom_free(intersection);
    }
}

static void test_incompatible_filters_refused(void **state)
{
    (void)state;
    amq_blocked_bloom *a = new_filter(AMQ_BLOCKED_SPLIT, 10000, 0.01);
    amq_blocked_bloom *bigger = new_filter(AMQ_BLOCKED_SPLIT, 20000, 0.01);
    amq_blocked_bloom_params params = { .bits = amq_blocked_bloom_bits(a),
                                        .layout = AMQ_BLOCKED_BLOCK };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_blocked_bloom *block = NULL;
    assert_int_equal(amq_blocked_bloom_new(&block, &params, NULL), AMQ_OK);
    params = (amq_blocked_bloom_params){ .bits = amq_blocked_bloom_bits(a) };
    amq_hasher_xxh3(&params.hasher, seed + 1);
    amq_blocked_bloom *other_seed = NULL;
    assert_int_equal(amq_blocked_bloom_new(&other_seed, &params, NULL), AMQ_OK);
    assert_int_equal(amq_blocked_bloom_merge(a, bigger, NULL), AMQ_EINCOMPATIBLE);
    assert_int_equal(amq_blocked_bloom_merge(a, block, NULL), AMQ_EINCOMPATIBLE);
    assert_int_equal(amq_blocked_bloom_merge(a, other_seed, NULL), AMQ_EINCOMPATIBLE);
    assert_int_equal(amq_blocked_bloom_intersect(a, other_seed, NULL), AMQ_EINCOMPATIBLE);
    amq_blocked_bloom_free(a);
    amq_blocked_bloom_free(bigger);
    amq_blocked_bloom_free(block);
    amq_blocked_bloom_free(other_seed);
}

static void test_batch_and_hash_forms_agree(void **state)
{
    (void)state;
    /* Each layout on each path (AVX2 where the CPU has it, and portable). */
    for (int run = 0; run < 4; run++) {
        amq_blocked_layout layout = run % 2 ? AMQ_BLOCKED_BLOCK : AMQ_BLOCKED_SPLIT;
        amq_blocked_bloom *f = new_filter(layout, 50000, 0.05);
        if (run >= 2)
            amq__blocked_bloom_use_portable(f);
        for (uint64_t i = 0; i < 50000; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            if (i % 2)
                amq_blocked_bloom_add(f, &key, sizeof key);
            else
                amq_blocked_bloom_add_hash(
                    f, amq_hash64(amq_blocked_bloom_hasher(f), &key, sizeof key));
        }
        enum { COUNT = 1003 };
        static amq_test_key keys[COUNT];
        const void *pointers[COUNT];
        size_t lens[COUNT];
        uint64_t hashes[COUNT];
        uint8_t results[COUNT], hash_results[COUNT];
        amq_test_batch_keys(keys, pointers, lens, COUNT, seed, 37);
        for (uint64_t i = 0; i < COUNT; i++)
            hashes[i] = amq_hash64(amq_blocked_bloom_hasher(f), &keys[i], sizeof keys[i]);
        amq_blocked_bloom_contains_many(results, f, pointers, lens, COUNT);
        amq_blocked_bloom_contains_many_hash(hash_results, f, hashes, COUNT);
        uint64_t maybes = 0;
        for (uint64_t i = 0; i < COUNT; i++) {
            assert_int_equal(results[i], amq_blocked_bloom_contains(f, &keys[i], sizeof keys[i]));
            assert_int_equal(hash_results[i], results[i]);
            maybes += results[i];
        }
        assert_true(maybes >= COUNT * 2 / 3 - 1);
        /* Calls shorter than the prefetch distance: only the pipeline's start. */
        for (size_t count = 1; count < 40; count += 7) {
            memset(results, 0xff, sizeof results);
            memset(hash_results, 0xff, sizeof hash_results);
            amq_blocked_bloom_contains_many(results, f, pointers + 100, lens + 100, count);
            amq_blocked_bloom_contains_many_hash(hash_results, f, hashes + 100, count);
            for (size_t i = 0; i < count; i++) {
                assert_int_equal(results[i],
                                 amq_blocked_bloom_contains(f, &keys[100 + i], sizeof keys[i]));
                assert_int_equal(hash_results[i], results[i]);
            }
            assert_int_equal(results[count], 0xff);
            assert_int_equal(hash_results[count], 0xff);
        }
        amq_blocked_bloom_contains_many(results, f, pointers, lens, 0);
        amq_blocked_bloom_clear(f);
        assert_int_equal(amq_blocked_bloom_bits_set(f), 0);
        assert_true(amq_blocked_bloom_expected_fpr(f) == 0);
        amq_blocked_bloom_free(f);
    }
}

/* ---- through the generic handle ------------------------------------------------ */

static void test_generic_round_trip(void **state)
{
    char path[AMQ_TEST_PATH_MAX], spec[128];
    amq_test_scratch_path(path, state, "f.amq");
    const char *layouts[] = { "split", "block" };
    for (int layout = 0; layout < 2; layout++) {
        snprintf(spec, sizeof spec, "blocked-bloom n=20000 p=0.02 layout=%s seed=%llu",
                 layouts[layout], (unsigned long long)seed);
        amq_filter *f = NULL;
        assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
        for (uint64_t i = 0; i < 20000; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            assert_int_equal(amq_add(f, &key, sizeof key), AMQ_OK);
        }
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
        amq_filter *g = NULL;
        amq_diag diag = { .message = "" };
        assert_int_equal(amq_load(&g, path, 0, &diag), AMQ_OK);
        amq_info a, b;
        assert_int_equal(amq_info_get(&a, f), AMQ_OK);
        assert_int_equal(amq_info_get(&b, g), AMQ_OK);
        assert_int_equal(b.capacity, 20000);
        assert_int_equal(b.memory_bytes, a.memory_bytes);
        assert_true(b.expected_fpr == a.expected_fpr && b.expected_fpr > 0.005);
        assert_true(b.target_fpr == 0.02);
        assert_true(fabs(b.estimated_keys / 20000 - 1) < 0.05);
        amq_test_expect_same_answers(f, g, seed, 40000);
        assert_int_equal(amq_merge(g, f, &diag), AMQ_OK);
        amq_free(g);
        amq_free(f);
    }
    /* Layouts do not merge. */
    amq_filter *split = NULL;
    assert_int_equal(amq_new(&split, "blocked-bloom m=65536", NULL), AMQ_OK);
    amq_test_expect_merge_refused(split, "blocked-bloom m=65536 layout=block", "layout");
    amq_free(split);
}

static void test_generic_spec_errors(void **state)
{
    (void)state;
    const amq_test_spec_case cases[] = {
        { "blocked-bloom", AMQ_EINVAL, "capacity" },
        { "blocked-bloom n=1000 layout=sideways", AMQ_EINVAL, "layout" },
        { "blocked-bloom n=1000 k=4", AMQ_EINVAL, "split" },
        { "blocked-bloom n=1000 layout=block k=17", AMQ_EINVAL, "hashes" },
        { "blocked-bloom n=1e15", AMQ_ERANGE, "blocks" },
        { "blocked-bloom n=1e5 p=1e-16", AMQ_ERANGE, "more than the 256 a blocked filter takes" },
        { "blocked-bloom n=1e5 p=1e-9", AMQ_ERANGE, "layout=block" },
        { "blocked-bloom n=1e5 p=1e-13 layout=block", AMQ_ERANGE, "bits per key in 512-bit" },
        { "blocked-bloom n=1000 growth=2", AMQ_EINVAL, "growth" },
    };
    amq_test_expect_spec_errors(cases, sizeof cases / sizeof cases[0]);
}

/* Files with a valid checksum whose parameters are impossible are refused
 * by the loader, with a message naming the field. */
static void test_damaged_parameters(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    static uint8_t payload[512];
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, 0);
    struct {
        uint32_t layout, k;
        uint64_t blocks;
        double fpr;
        uint64_t payload_len;
        const char *message;
    } cases[] = {
        { 0, 8, 16, 0.01, 512, NULL }, /* the good one */
        { 2, 8, 16, 0.01, 512, "layout" },
        { 0, 7, 16, 0.01, 512, "bits per key" },
        { 1, 0, 8, 0.01, 512, "bits per key" },
        { 1, 17, 8, 0.01, 512, "bits per key" },
        { 0, 8, 0, 0.01, 0, "block count" },
        { 0, 8, (uint64_t)1 << 33, 0.01, 512, "block count" },
        { 0, 8, 16, 1.5, 512, "fpr" },
        { 0, 8, 15, 0.01, 512, "payload" },
        { 1, 8, 16, 0.01, 512, "payload" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amq__params_writer params;
        amq__params_init(&params);
        amq__params_put_u32(&params, cases[i].layout);
        amq__params_put_u32(&params, cases[i].k);
        amq__params_put_u64(&params, cases[i].blocks);
        amq__params_put_u64(&params, 1000);
        amq__params_put_f64(&params, cases[i].fpr);
        amq_test_write_container(path, AMQ__FAMILY_BLOCKED_BLOOM, &hasher, params.bytes, params.len,
                                 payload, cases[i].payload_len);
        amq_test_expect_load(path, cases[i].message, "case %zu", i);
    }
}

/* ---- the rate at small n and low p ------------------------------------------------- */

/* blocked-bloom n=1000 p=1e-6: 1000 keys, 2 * 10^7 absent ones, about 20 false
 * positives; as many as amq_info's expected_fpr predicts (within 5 standard
 * deviations), and that within twice the target (its sizing aims at p). */
static void test_fpr_small_n_low_p(void **state)
{
    (void)state;
    amq_test_expect_low_rate("blocked-bloom n=1000 p=1e-6", seed, AMQ_TEST_ADD, 1000, 20000000, 2);
}

int main(void)
{
    seed = amq_test_seed(20261122);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_block_bits_are_parquets),
        cmocka_unit_test(test_avx2_and_portable_paths_agree),
        cmocka_unit_test(test_block_layout_keeps_a_key_in_one_block),
        cmocka_unit_test(test_sizing_is_the_fewest_blocks_meeting_p),
        cmocka_unit_test(test_sizing_by_bits_and_errors),
        cmocka_unit_test(test_split_fpr_10_percent),
        cmocka_unit_test(test_split_fpr_1_percent),
        cmocka_unit_test(test_split_fpr_tenth_percent),
        cmocka_unit_test(test_block_fpr_10_percent),
        cmocka_unit_test(test_block_fpr_1_percent),
        cmocka_unit_test(test_block_fpr_tenth_percent),
        cmocka_unit_test(test_union_equals_filter_of_union),
        cmocka_unit_test(test_incompatible_filters_refused),
        cmocka_unit_test(test_batch_and_hash_forms_agree),
        AMQ_TEST_WITH_SCRATCH(test_generic_round_trip),
        cmocka_unit_test(test_generic_spec_errors),
        AMQ_TEST_WITH_SCRATCH(test_damaged_parameters),
        cmocka_unit_test(test_fpr_small_n_low_p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
