/*
 * Tests for amq/inline.h: queries compiled into the caller.
 *
 * This file is compiled with AMQ_INLINE_NO_INT128, so the header's
 * multiply-high takes its portable path, the one a 32-bit or MSVC caller
 * compiles; the library's own queries take the 128-bit one. It is built
 * twice (tests/CMakeLists.txt): as test_inline, with the split-block query's
 * portable form, and as test_inline_avx2 with -mavx2, with its AVX2 form
 * (skipped on a CPU without AVX2). What is
 * established, each by something that could fail:
 *   - the portable multiply-high equals the library's 128-bit one on edge
 *     values and on 10^6 random pairs;
 *   - a view answers as amq_fuse_contains_hash for every present and absent
 *     hash, for f = 8 and 16, arity 3 and 4, at sizes from one key to a
 *     million, and for a filter loaded from a saved image;
 *   - an empty filter's view answers 0 for every hash;
 *   - a layout the library does not compute is refused with AMQ_EVERSION
 *     and a zeroed view; NULL arguments with AMQ_EINVAL;
 *   - a split-block view answers as amq_blocked_bloom_contains_hash for
 *     present and absent hashes from one block to a million keys, sees
 *     adds made after it was taken, and is refused for 512-bit blocks;
 *   - a cuckoo view (f = 12, b = 4) answers as amq_cuckoo_contains_hash
 *     for present and absent hashes from one key to 300,000, with the
 *     stash occupied and after a removal empties it, and for a filter
 *     loaded from a saved image (copied and borrowed); it is refused with
 *     AMQ_EUNSUPPORTED for other fingerprint widths, bucket sizes,
 *     semi-sorted buckets and a filter that grew a second table, with
 *     AMQ_EVERSION for another layout, and with AMQ_EINVAL for NULLs.
 */
#define AMQ_INLINE_NO_INT128 1

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/fuse.h"
#include "amq/inline.h"
#include "core/reduce.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

static uint64_t next_random(uint64_t *state)
{
    *state += 0x9E3779B97F4A7C15ULL;
    return amq_inline_mix64(*state);
}

static void test_portable_mulhi(void **state)
{
    (void)state;
    const uint64_t edges[] = { 0,
                               1,
                               2,
                               0xFFFFFFFFULL,
                               0x100000000ULL,
                               0xFFFFFFFFFFFFFFFFULL,
                               0x8000000000000000ULL,
                               0x7FFFFFFFFFFFFFFFULL,
                               0xFFFFFFFF00000000ULL };
    size_t n = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            assert_true(amq_inline_mulhi(edges[i], edges[j]) ==
                        (uint64_t)(((amq__uint128)edges[i] * edges[j]) >> 64));
    uint64_t random_state = seed;
    for (int i = 0; i < 1000000; i++) {
        uint64_t a = next_random(&random_state), b = next_random(&random_state) >> (i % 64);
        if (amq_inline_mulhi(a, b) != (uint64_t)(((amq__uint128)a * b) >> 64))
            fail_msg("mulhi(%llx, %llx) differs", (unsigned long long)a, (unsigned long long)b);
    }
}

/* Every hash of present and of absent keys: the view and the call agree. */
static void check_agrees(const amq_fuse *filter, const uint64_t *present, size_t count,
                         uint64_t absent_seed)
{
    amq_fuse_view view;
    assert_int_equal(amq_fuse_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_OK);
    assert_int_equal(view.layout, AMQ_INLINE_LAYOUT);
    for (size_t i = 0; i < count; i++)
        assert_true(amq_fuse_view_contains_hash(&view, present[i]));
    uint64_t random_state = absent_seed;
    size_t maybe = 0;
    for (size_t i = 0; i < 4 * count + 1000; i++) {
        uint64_t hash = next_random(&random_state);
        bool expected = amq_fuse_contains_hash(filter, hash);
        if (amq_fuse_view_contains_hash(&view, hash) != expected)
            fail_msg("hash %llx: the view answers %d, the call %d", (unsigned long long)hash,
                     !expected, expected);
        maybe += expected;
    }
    /* The absent hashes were not all answered "maybe" (nor all "no" with
     * more than a few thousand of them at f = 8). */
    assert_true(maybe < 4 * count + 1000);
}

static void test_view_answers_as_the_call(void **state)
{
    (void)state;
    const size_t sizes[] = { 1, 2, 100, 10000, 1000000 };
    uint32_t widths[] = { 8, 16 }, arities[] = { 3, 4 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t count = sizes[s];
        uint64_t *hashes = malloc(count * sizeof *hashes);
        assert_non_null(hashes);
        uint64_t random_state = seed + s;
        for (size_t i = 0; i < count; i++)
            hashes[i] = next_random(&random_state);
        for (size_t w = 0; w < 2; w++)
            for (size_t a = 0; a < 2; a++) {
                amq_fuse_params params;
                amq_fuse_params_init(&params);
                params.fingerprint_bits = widths[w];
                params.arity = arities[a];
                amq_fuse *filter = NULL;
                assert_int_equal(amq_fuse_build_hash(&filter, &params, hashes, count, NULL),
                                 AMQ_OK);
                check_agrees(filter, hashes, count, seed ^ 0xABCDEF);
                amq_fuse_free(filter);
            }
        free(hashes);
    }
}

/* A filter loaded from memory (copied, and borrowing the image) gives views
 * that answer as the one it was saved from. */
static void test_view_of_a_loaded_filter(void **state)
{
    (void)state;
    enum { COUNT = 50000 };
    uint64_t *hashes = malloc(COUNT * sizeof *hashes);
    assert_non_null(hashes);
    uint64_t random_state = seed;
    for (size_t i = 0; i < COUNT; i++)
        hashes[i] = next_random(&random_state);
    amq_fuse_params params;
    amq_fuse_params_init(&params);
    params.fingerprint_bits = 16;
    amq_fuse *built = NULL;
    assert_int_equal(amq_fuse_build_hash(&built, &params, hashes, COUNT, NULL), AMQ_OK);
    amq_filter *wrapped = NULL;
    assert_int_equal(amq_fuse_wrap(&wrapped, built, NULL), AMQ_OK);
    uint8_t *image = NULL;
    size_t image_len = 0;
    assert_int_equal(amq_save_to_memory(&image, &image_len, wrapped, NULL), AMQ_OK);
    const int flags[] = { 0, AMQ_LOAD_BORROW };
    for (size_t i = 0; i < 2; i++) {
        amq_filter *loaded = NULL;
        assert_int_equal(amq_load_from_memory(&loaded, image, image_len, flags[i], NULL), AMQ_OK);
        amq_fuse *filter = amq_fuse_unwrap(loaded);
        assert_non_null(filter);
        check_agrees(filter, hashes, COUNT, seed + 7);
        amq_free(loaded);
    }
    free(image);
    amq_free(wrapped);
    free(hashes);
}

static void test_empty_filter_and_errors(void **state)
{
    (void)state;
    amq_fuse_params params;
    amq_fuse_params_init(&params);
    amq_fuse *filter = NULL;
    assert_int_equal(amq_fuse_build_hash(&filter, &params, NULL, 0, NULL), AMQ_OK);
    amq_fuse_view view;
    assert_int_equal(amq_fuse_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_OK);
    assert_int_equal(view.empty, 1);
    uint64_t random_state = seed;
    for (int i = 0; i < 100000; i++)
        assert_false(amq_fuse_view_contains_hash(&view, next_random(&random_state)));

    memset(&view, 0xA5, sizeof view);
    assert_int_equal(amq_fuse_view_get(&view, filter, AMQ_INLINE_LAYOUT + 1, NULL), AMQ_EVERSION);
    amq_fuse_view zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&view, &zero, sizeof view);
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_fuse_view_get(&view, filter, 0, &diag), AMQ_EVERSION);
    assert_non_null(strstr(diag.message, "layout 0 was asked for"));
    assert_int_equal(amq_fuse_view_get(NULL, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_EINVAL);
    assert_int_equal(amq_fuse_view_get(&view, NULL, AMQ_INLINE_LAYOUT, NULL), AMQ_EINVAL);
    amq_fuse_free(filter);
}

static void test_split_block_view(void **state)
{
    (void)state;
    const uint64_t capacities[] = { 1, 1000, 1000000 };
    for (size_t c = 0; c < 3; c++) {
        amq_blocked_bloom_params params;
        amq_blocked_bloom_params_init(&params);
        params.capacity = capacities[c];
        params.fpr = 0.01;
        amq_blocked_bloom *filter = NULL;
        assert_int_equal(amq_blocked_bloom_new(&filter, &params, NULL), AMQ_OK);
        amq_split_block_view view;
        assert_int_equal(amq_split_block_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_OK);
        assert_int_equal(view.blocks, amq_blocked_bloom_blocks(filter));
        uint64_t random_state = seed + c;
        for (uint64_t i = 0; i < capacities[c]; i++) {
            uint64_t hash = next_random(&random_state);
            amq_blocked_bloom_add_hash(filter, hash);
            /* The view shares the words: it sees the add at once. */
            assert_true(amq_split_block_view_contains_hash(&view, hash));
        }
        size_t absent = 4 * (size_t)capacities[c] + 10000, maybe = 0;
        for (size_t i = 0; i < absent; i++) {
            uint64_t hash = next_random(&random_state);
            bool expected = amq_blocked_bloom_contains_hash(filter, hash);
            if (amq_split_block_view_contains_hash(&view, hash) != expected)
                fail_msg("hash %llx: the view answers %d, the call %d", (unsigned long long)hash,
                         !expected, expected);
            maybe += expected;
        }
        assert_true(maybe < absent / 10);
        amq_blocked_bloom_free(filter);
    }

    amq_blocked_bloom_params params;
    amq_blocked_bloom_params_init(&params);
    params.capacity = 1000;
    params.layout = AMQ_BLOCKED_BLOCK;
    amq_blocked_bloom *filter = NULL;
    assert_int_equal(amq_blocked_bloom_new(&filter, &params, NULL), AMQ_OK);
    amq_split_block_view view;
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_split_block_view_get(&view, filter, AMQ_INLINE_LAYOUT, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "512-bit blocks"));
    assert_null(view.words);
    amq_blocked_bloom_free(filter);
    params.layout = AMQ_BLOCKED_SPLIT;
    assert_int_equal(amq_blocked_bloom_new(&filter, &params, NULL), AMQ_OK);
    assert_int_equal(amq_split_block_view_get(&view, filter, AMQ_INLINE_LAYOUT + 1, NULL),
                     AMQ_EVERSION);
    assert_int_equal(amq_split_block_view_get(NULL, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_EINVAL);
    assert_int_equal(amq_split_block_view_get(&view, NULL, AMQ_INLINE_LAYOUT, NULL), AMQ_EINVAL);
    amq_blocked_bloom_free(filter);
}

/* A cuckoo filter of the view's shape, hashing with seed 0. */
static amq_cuckoo *new_cuckoo(uint64_t capacity, uint32_t fingerprint_bits, uint32_t bucket_size,
                              bool semi_sort, uint32_t growth)
{
    amq_cuckoo_params params;
    amq_cuckoo_params_init(&params);
    params.capacity = capacity;
    params.fingerprint_bits = fingerprint_bits;
    params.bucket_size = bucket_size;
    params.semi_sort = semi_sort;
    params.growth = growth;
    amq_cuckoo *filter = NULL;
    assert_int_equal(amq_cuckoo_new(&filter, &params, NULL), AMQ_OK);
    return filter;
}

/* A fresh view of filter answers as amq_cuckoo_contains_hash for present[0
 * .. count) (all maybe-present) and for absent random hashes; returns how
 * many of those the filter answers maybe for. */
static size_t check_cuckoo_agrees(const amq_cuckoo *filter, const uint64_t *present, size_t count,
                                  size_t absent, uint64_t random_state)
{
    amq_cuckoo_view view;
    assert_int_equal(amq_cuckoo_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_OK);
    assert_int_equal(view.layout, AMQ_INLINE_LAYOUT);
    assert_int_equal(view.bucket_count, amq_cuckoo_table_buckets(filter, 0));
    assert_int_equal(view.fingerprint_range, 4095);
    assert_int_equal(view.lane_ones, AMQ_CUCKOO_VIEW_LANE_ONES);
    for (size_t i = 0; i < count; i++)
        if (!amq_cuckoo_view_contains_hash(&view, present[i]) ||
            !amq_cuckoo_contains_hash(filter, present[i]))
            fail_msg("present hash %llx: the view answers %d, the call %d",
                     (unsigned long long)present[i],
                     amq_cuckoo_view_contains_hash(&view, present[i]),
                     amq_cuckoo_contains_hash(filter, present[i]));
    size_t maybe = 0;
    for (size_t i = 0; i < absent; i++) {
        uint64_t hash = next_random(&random_state);
        bool expected = amq_cuckoo_contains_hash(filter, hash);
        if (amq_cuckoo_view_contains_hash(&view, hash) != expected)
            fail_msg("hash %llx: the view answers %d, the call %d", (unsigned long long)hash,
                     !expected, expected);
        maybe += expected;
    }
    return maybe;
}

static void test_cuckoo_view(void **state)
{
    (void)state;
    const uint64_t capacities[] = { 1, 100, 10000, 300000 };
    for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
        size_t count = (size_t)capacities[c];
        uint64_t *hashes = malloc(count * sizeof *hashes);
        assert_non_null(hashes);
        uint64_t random_state = seed + c;
        amq_cuckoo *filter = new_cuckoo(count, 12, 4, false, 0);
        for (size_t i = 0; i < count; i++) {
            hashes[i] = next_random(&random_state);
            assert_int_equal(amq_cuckoo_add_hash(filter, hashes[i]), AMQ_OK);
        }
        size_t absent = 4 * count + 10000;
        size_t maybe = check_cuckoo_agrees(filter, hashes, count, absent, random_state);
        /* 2b / 4095 at most: 0.2% */
        assert_true(maybe < absent / 100);
        if (count >= 10000)
            assert_true(maybe > 0);
        amq_cuckoo_free(filter);
        free(hashes);
    }
}

/* Fill a small filter until its stash is occupied: the view copies the
 * stash and answers for the stashed key; a removal that empties the stash
 * back into the table is seen by a view taken after it. */
static void test_cuckoo_view_with_the_stash(void **state)
{
    (void)state;
    enum { MOST = 4000 };
    uint64_t hashes[MOST];
    uint64_t random_state = seed ^ 0x5A5A;
    amq_cuckoo *filter = new_cuckoo(1000, 12, 4, false, 0);
    size_t count = 0;
    while (!amq_cuckoo_full(filter)) {
        assert_true(count < MOST);
        hashes[count] = next_random(&random_state);
        assert_int_equal(amq_cuckoo_add_hash(filter, hashes[count]), AMQ_OK);
        count++;
    }
    amq_cuckoo_view view;
    assert_int_equal(amq_cuckoo_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_OK);
    assert_int_not_equal(view.stash_fingerprint, 0);
    check_cuckoo_agrees(filter, hashes, count, 200000, random_state);
    /* The stashed fingerprint is the last one the walk carried, not
     * necessarily the last key's: some key has it and the stash's bucket
     * as one of its two. */
    size_t stashed = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t fingerprint = amq_cuckoo_view_fingerprint(&view, hashes[i]);
        uint64_t i1 = amq_cuckoo_view_index(hashes[i], view.bucket_count);
        uint64_t i2 = amq_cuckoo_view_alternate(i1, fingerprint, view.bucket_count);
        assert_int_equal(amq_cuckoo_view_alternate(i2, fingerprint, view.bucket_count), i1);
        stashed += fingerprint == view.stash_fingerprint &&
                   (view.stash_bucket == i1 || view.stash_bucket == i2);
    }
    assert_true(stashed >= 1);

    /* Removals free slots; the stash goes back into the table. */
    size_t removed = 0;
    while (amq_cuckoo_full(filter)) {
        assert_true(removed < count);
        assert_int_equal(amq_cuckoo_remove_hash(filter, hashes[removed]), AMQ_OK);
        removed++;
    }
    assert_int_equal(amq_cuckoo_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_OK);
    assert_int_equal(view.stash_fingerprint, 0);
    check_cuckoo_agrees(filter, hashes + removed, count - removed, 200000, random_state + 1);
    amq_cuckoo_free(filter);
}

/* A loaded filter, copied and borrowing its image, gives views that answer
 * as the one it was saved from. */
static void test_cuckoo_view_of_a_loaded_filter(void **state)
{
    (void)state;
    enum { COUNT = 50000 };
    uint64_t *hashes = malloc(COUNT * sizeof *hashes);
    assert_non_null(hashes);
    uint64_t random_state = seed + 11;
    amq_cuckoo *made = new_cuckoo(COUNT, 12, 4, false, 0);
    for (size_t i = 0; i < COUNT; i++) {
        hashes[i] = next_random(&random_state);
        assert_int_equal(amq_cuckoo_add_hash(made, hashes[i]), AMQ_OK);
    }
    amq_filter *wrapped = NULL;
    assert_int_equal(amq_cuckoo_wrap(&wrapped, made, NULL), AMQ_OK);
    uint8_t *image = NULL;
    size_t image_len = 0;
    assert_int_equal(amq_save_to_memory(&image, &image_len, wrapped, NULL), AMQ_OK);
    const int flags[] = { 0, AMQ_LOAD_BORROW };
    for (size_t i = 0; i < 2; i++) {
        amq_filter *loaded = NULL;
        assert_int_equal(amq_load_from_memory(&loaded, image, image_len, flags[i], NULL), AMQ_OK);
        amq_cuckoo *filter = amq_cuckoo_unwrap(loaded);
        assert_non_null(filter);
        check_cuckoo_agrees(filter, hashes, COUNT, 100000, random_state);
        amq_free(loaded);
    }
    free(image);
    amq_free(wrapped);
    free(hashes);
}

static void test_cuckoo_view_refusals(void **state)
{
    (void)state;
    const struct {
        uint32_t fingerprint_bits, bucket_size;
        bool semi_sort;
    } shapes[] = {
        { 16, 4, false }, { 8, 4, false }, { 12, 2, false }, { 12, 8, false }, { 12, 4, true }
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        amq_cuckoo *filter = new_cuckoo(1000, shapes[i].fingerprint_bits, shapes[i].bucket_size,
                                        shapes[i].semi_sort, 0);
        amq_cuckoo_view view;
        memset(&view, 0xA5, sizeof view);
        amq_diag diag = { .message = "" };
        assert_int_equal(amq_cuckoo_view_get(&view, filter, AMQ_INLINE_LAYOUT, &diag),
                         AMQ_EUNSUPPORTED);
        assert_non_null(strstr(diag.message, "four 12-bit slots"));
        assert_null(view.buckets);
        amq_cuckoo_free(filter);
    }

    /* A growing filter has a view until it chains a second table. */
    amq_cuckoo *filter = new_cuckoo(1000, 12, 4, false, 2);
    amq_cuckoo_view view;
    assert_int_equal(amq_cuckoo_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_OK);
    uint64_t random_state = seed + 3;
    while (amq_cuckoo_tables(filter) == 1)
        assert_int_equal(amq_cuckoo_add_hash(filter, next_random(&random_state)), AMQ_OK);
    assert_int_equal(amq_cuckoo_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_EUNSUPPORTED);
    amq_cuckoo_free(filter);

    filter = new_cuckoo(1000, 12, 4, false, 0);
    memset(&view, 0xA5, sizeof view);
    assert_int_equal(amq_cuckoo_view_get(&view, filter, AMQ_INLINE_LAYOUT + 1, NULL), AMQ_EVERSION);
    amq_cuckoo_view zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&view, &zero, sizeof view);
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_cuckoo_view_get(&view, filter, 0, &diag), AMQ_EVERSION);
    assert_non_null(strstr(diag.message, "layout 0 was asked for"));
    assert_int_equal(amq_cuckoo_view_get(NULL, filter, AMQ_INLINE_LAYOUT, NULL), AMQ_EINVAL);
    assert_int_equal(amq_cuckoo_view_get(&view, NULL, AMQ_INLINE_LAYOUT, NULL), AMQ_EINVAL);
    amq_cuckoo_free(filter);
}

int main(void)
{
#if defined(__AVX2__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) {
        puts("this CPU has no AVX2: the AVX2 form is not tested here");
        return 77;
    }
#endif
    seed = amq_test_seed(20261126);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_portable_mulhi),
        cmocka_unit_test(test_view_answers_as_the_call),
        cmocka_unit_test(test_view_of_a_loaded_filter),
        cmocka_unit_test(test_empty_filter_and_errors),
        cmocka_unit_test(test_split_block_view),
        cmocka_unit_test(test_cuckoo_view),
        cmocka_unit_test(test_cuckoo_view_with_the_stash),
        cmocka_unit_test(test_cuckoo_view_of_a_loaded_filter),
        cmocka_unit_test(test_cuckoo_view_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
