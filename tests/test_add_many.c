/*
 * Tests for the batch adds (amq_bloom_add_many, amq_scalable_bloom_add_many,
 * amq_cuckoo_add_many, amq_cuckoo_add_unique_many, and the generic
 * amq_add_many, amq_add_unique_many, amq_remove_many over every dynamic
 * family): a batch gives exactly
 * what the single add gives key by key, in order, on two filters made
 * alike:
 *
 *   - the same per-key answers (new or not, the status), with keys that
 *     repeat inside one batch and across batches;
 *   - the same filter afterwards, byte for byte in amq's file format
 *     (positions, counts, stages, chained tables, the stash);
 *   - batches cut at every awkward length (1, one short of a group, a
 *     group, one past it, many groups);
 *   - the cuckoo batch stops after the key that fills the filter, and goes
 *     on when called again where growth is allowed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/fuse.h"
#include "amq/hfb.h"
#include "test_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

/* The keys a test adds: distinct keys, then the same keys again, with every
 * third position taking an earlier key of the same batch. */
typedef struct key_stream {
    amq_test_keys distinct;
    const void **pointers;
    size_t *lens;
    size_t count;
} key_stream;

static void stream_make(key_stream *out, size_t distinct)
{
    amq_test_keys_make(&out->distinct, seed, 0, distinct);
    out->count = 2 * distinct;
    out->pointers = malloc(out->count * sizeof *out->pointers);
    out->lens = malloc(out->count * sizeof *out->lens);
    assert_non_null(out->pointers);
    assert_non_null(out->lens);
    for (size_t i = 0; i < out->count; i++) {
        size_t key = i < distinct ? i : i - distinct;
        if (i % 3 == 2)
            key = key / 2;
        out->pointers[i] = out->distinct.pointers[key];
        out->lens[i] = out->distinct.lens[key];
    }
}

static void stream_free(key_stream *s)
{
    free(s->pointers);
    free(s->lens);
    amq_test_keys_free(&s->distinct);
}

/* The batch lengths tried, in turn, until the stream ends. */
static const size_t batch_lengths[] = { 1, 15, 16, 17, 31, 32, 33, 1000, 4093 };

static amq_bloom *new_bloom(void)
{
    amq_bloom_params params;
    amq_bloom_params_init(&params);
    params.capacity = 100000;
    params.fpr = 0.01;
    amq_hasher_xxh3(&params.hasher, seed);
    amq_bloom *f = NULL;
    assert_int_equal(amq_bloom_new(&f, &params, NULL), AMQ_OK);
    return f;
}

static void test_bloom(void **state)
{
    (void)state;
    key_stream s;
    stream_make(&s, 120000);
    amq_bloom *one_by_one = new_bloom(), *batched = new_bloom();
    uint8_t *expected = malloc(s.count), *added = malloc(s.count);
    assert_non_null(expected);
    assert_non_null(added);
    for (size_t i = 0; i < s.count; i++) {
        expected[i] = !amq_bloom_contains(one_by_one, s.pointers[i], s.lens[i]);
        amq_bloom_add(one_by_one, s.pointers[i], s.lens[i]);
    }
    size_t done = 0;
    for (size_t b = 0; done < s.count; b++) {
        size_t n = batch_lengths[b % 9] < s.count - done ? batch_lengths[b % 9] : s.count - done;
        /* Every other batch without answers: the filter must not differ. */
        amq_bloom_add_many(b % 2 ? added + done : NULL, batched, s.pointers + done, s.lens + done,
                           n);
        if (!(b % 2))
            memcpy(added + done, expected + done, n);
        done += n;
    }
    assert_memory_equal(expected, added, s.count);
    amq_filter *a = NULL, *c = NULL;
    assert_int_equal(amq_bloom_wrap(&a, one_by_one, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_wrap(&c, batched, NULL), AMQ_OK);
    amq_test_assert_same_image(a, c);
    amq_free(a);
    amq_free(c);
    free(expected);
    free(added);
    stream_free(&s);
}

static amq_scalable_bloom *new_scalable(void)
{
    amq_scalable_bloom_params params;
    amq_scalable_bloom_params_init(&params);
    params.capacity = 1000;
    params.fpr = 0.01;
    params.growth = 2;
    amq_hasher_xxh3(&params.hasher, seed);
    amq_scalable_bloom *f = NULL;
    assert_int_equal(amq_scalable_bloom_new(&f, &params, NULL), AMQ_OK);
    return f;
}

/* Small first stage: the batch opens stages midway, as the single add does. */
static void test_scalable_bloom(void **state)
{
    (void)state;
    key_stream s;
    stream_make(&s, 100000);
    amq_scalable_bloom *one_by_one = new_scalable(), *batched = new_scalable();
    int *expected = malloc(s.count * sizeof *expected),
        *results = malloc(s.count * sizeof *results);
    assert_non_null(expected);
    assert_non_null(results);
    for (size_t i = 0; i < s.count; i++)
        expected[i] = amq_scalable_bloom_add(one_by_one, s.pointers[i], s.lens[i]);
    size_t done = 0;
    for (size_t b = 0; done < s.count; b++) {
        size_t n = batch_lengths[b % 9] < s.count - done ? batch_lengths[b % 9] : s.count - done;
        assert_int_equal(amq_scalable_bloom_add_many(results + done, batched, s.pointers + done,
                                                     s.lens + done, n),
                         n);
        done += n;
    }
    assert_memory_equal(expected, results, s.count * sizeof *expected);
    assert_true(amq_scalable_bloom_stages(batched) >= 6);
    amq_filter *a = NULL, *c = NULL;
    assert_int_equal(amq_scalable_bloom_wrap(&a, one_by_one, NULL), AMQ_OK);
    assert_int_equal(amq_scalable_bloom_wrap(&c, batched, NULL), AMQ_OK);
    amq_test_assert_same_image(a, c);
    amq_free(a);
    amq_free(c);
    free(expected);
    free(results);
    stream_free(&s);
}

static amq_cuckoo *new_cuckoo(uint64_t capacity, uint32_t bucket_size, uint32_t growth)
{
    amq_cuckoo_params params;
    amq_cuckoo_params_init(&params);
    params.capacity = capacity;
    params.fingerprint_bits = 12;
    params.bucket_size = bucket_size;
    params.growth = growth;
    amq_hasher_xxh3(&params.hasher, seed);
    amq_cuckoo *f = NULL;
    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_OK);
    return f;
}

/* One cuckoo case: keys one by one into a filter until an add fails, and in
 * batches of varied lengths into another until the same failure; then the
 * same answers and the same file. */
static void check_cuckoo(uint64_t capacity, uint32_t bucket_size, uint32_t growth, bool unique,
                         size_t distinct)
{
    key_stream s;
    stream_make(&s, distinct);
    amq_cuckoo *one_by_one = new_cuckoo(capacity, bucket_size, growth);
    amq_cuckoo *batched = new_cuckoo(capacity, bucket_size, growth);
    int *expected = malloc(s.count * sizeof *expected),
        *results = malloc(s.count * sizeof *results);
    assert_non_null(expected);
    assert_non_null(results);
    size_t handled = 0;
    while (handled < s.count) {
        const void *key = s.pointers[handled];
        size_t len = s.lens[handled];
        int status = unique ? amq_cuckoo_add_unique(one_by_one, key, len)
                            : amq_cuckoo_add(one_by_one, key, len);
        expected[handled++] = status;
        if (status < 0)
            break;
    }
    size_t done = 0;
    for (size_t b = 0; done < handled; b++) {
        size_t want = batch_lengths[b % 9] < s.count - done ? batch_lengths[b % 9] : s.count - done;
        size_t added = SIZE_MAX;
        int status = unique ? amq_cuckoo_add_unique_many(results + done, &added, batched,
                                                         s.pointers + done, s.lens + done, want)
                            : amq_cuckoo_add_many(results + done, &added, batched,
                                                  s.pointers + done, s.lens + done, want);
        if (status < 0) {
            /* It stops at the failed key, which it answers, and adds the
             * keys before it. */
            assert_true(added < want);
            assert_int_equal(results[done + added], status);
            done += added + 1;
            break;
        }
        assert_int_equal(status, AMQ_OK);
        assert_int_equal(added, want);
        done += want;
    }
    assert_int_equal(done, handled);
    assert_memory_equal(expected, results, handled * sizeof *expected);
    if (growth > 0)
        assert_true(amq_cuckoo_tables(batched) > 1);
    else
        assert_int_equal(results[handled - 1], AMQ_EFULL);
    amq_filter *a = NULL, *c = NULL;
    assert_int_equal(amq_cuckoo_wrap(&a, one_by_one, NULL), AMQ_OK);
    assert_int_equal(amq_cuckoo_wrap(&c, batched, NULL), AMQ_OK);
    amq_test_assert_same_image(a, c);
    amq_free(a);
    amq_free(c);
    free(expected);
    free(results);
    stream_free(&s);
}

/* Growing from a small table: the batch stops at each table's stash. */
static void test_cuckoo_growing(void **state)
{
    (void)state;
    check_cuckoo(5000, 4, 2, false, 60000);
    check_cuckoo(5000, 2, 1, true, 60000);
}

/* A fixed table, filled until it refuses. The plain add stores a copy per
 * repeat, so the stream's repeats fill buckets as well. */
static void test_cuckoo_until_full(void **state)
{
    (void)state;
    check_cuckoo(20000, 4, 0, false, 40000);
    check_cuckoo(20000, 8, 0, true, 40000);
}

/* A table larger than the prefetch threshold (1 MiB). */
static void test_cuckoo_large_table(void **state)
{
    (void)state;
    check_cuckoo(1000000, 4, 0, false, 600000);
}

/* The generic batches against the generic single calls, per family. */
enum verb { VERB_ADD, VERB_ADD_UNIQUE, VERB_REMOVE };

static int one_call(enum verb verb, amq_filter *f, const void *key, size_t len)
{
    return verb == VERB_ADD          ? amq_add(f, key, len)
           : verb == VERB_ADD_UNIQUE ? amq_add_unique(f, key, len)
                                     : amq_remove(f, key, len);
}

static int many_call(enum verb verb, int *results, amq_filter *f, const void *const *keys,
                     const size_t *lens, size_t count, size_t *handled)
{
    return verb == VERB_ADD          ? amq_add_many(results, handled, f, keys, lens, count)
           : verb == VERB_ADD_UNIQUE ? amq_add_unique_many(results, handled, f, keys, lens, count)
                                     : amq_remove_many(results, handled, f, keys, lens, count);
}

/* Run verb over the stream on two filters of spec, key by key and in
 * batches of every awkward length (every other batch without results),
 * and check the answers, where each stops, and the files. A removal runs
 * after the stream was added to both. Returns whether an error stopped
 * them. */
static bool check_generic(const char *spec, enum verb verb, size_t distinct)
{
    char full_spec[256];
    snprintf(full_spec, sizeof full_spec, "%s seed=%llu", spec, (unsigned long long)seed);
    key_stream s;
    stream_make(&s, distinct);
    amq_filter *single = NULL, *batched = NULL;
    assert_int_equal(amq_new(&single, full_spec, NULL), AMQ_OK);
    assert_int_equal(amq_new(&batched, full_spec, NULL), AMQ_OK);
    if (verb == VERB_REMOVE) {
        assert_int_equal(amq_add_many(NULL, NULL, single, s.pointers, s.lens, s.count), AMQ_OK);
        assert_int_equal(amq_add_many(NULL, NULL, batched, s.pointers, s.lens, s.count), AMQ_OK);
        /* and removed once more than added: the last copies answer
         * AMQ_ENOTFOUND, which a removal goes on past */
    }
    size_t rounds = verb == VERB_REMOVE ? 2 : 1, total = rounds * s.count;
    int *expected = malloc(total * sizeof *expected), *answers = malloc(total * sizeof *answers);
    assert_non_null(expected);
    assert_non_null(answers);
    size_t stop = total;
    for (size_t i = 0; i < total && stop == total; i++) {
        expected[i] = one_call(verb, single, s.pointers[i % s.count], s.lens[i % s.count]);
        if (expected[i] < 0 && !(verb == VERB_REMOVE && expected[i] == AMQ_ENOTFOUND))
            stop = i;
    }
    size_t done = 0;
    for (size_t b = 0; done < total; b++) {
        size_t at = done % s.count;
        size_t n = batch_lengths[b % 9];
        if (n > s.count - at)
            n = s.count - at;
        size_t handled = (size_t)-1;
        int status = many_call(verb, b % 2 ? answers + done : NULL, batched, s.pointers + at,
                               s.lens + at, n, &handled);
        if (stop < done + n) {
            /* the key the single calls stopped at stops the batch */
            assert_int_equal(status, expected[stop]);
            assert_int_equal(handled, stop - done);
            if (b % 2)
                assert_int_equal(answers[stop], expected[stop]);
            else
                memcpy(answers + done, expected + done, (stop - done + 1) * sizeof *answers);
            done = stop + 1;
            break;
        }
        assert_int_equal(status, AMQ_OK);
        assert_int_equal(handled, n);
        if (!(b % 2))
            memcpy(answers + done, expected + done, n * sizeof *answers);
        done += n;
    }
    size_t checked = stop < total ? stop + 1 : total;
    assert_int_equal(done, checked);
    assert_memory_equal(expected, answers, checked * sizeof *answers);
    amq_test_assert_same_image(single, batched);
    amq_free(single);
    amq_free(batched);
    free(expected);
    free(answers);
    stream_free(&s);
    return stop < total;
}

static const char *const dynamic_specs[] = {
    "bloom n=100000 p=0.01",          "blocked-bloom n=100000 p=0.01",
    "counting-bloom n=100000 p=0.01", "scalable-bloom n=1000 p=0.01",
    "cuckoo n=300000 p=0.001",        "cuckoo n=1000 p=0.01 growth=2",
};

static void test_generic_batches(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof dynamic_specs / sizeof *dynamic_specs; i++) {
        assert_false(check_generic(dynamic_specs[i], VERB_ADD, 60000));
        assert_false(check_generic(dynamic_specs[i], VERB_ADD_UNIQUE, 60000));
    }
    assert_false(check_generic("counting-bloom n=100000 p=0.01", VERB_REMOVE, 30000));
    assert_false(check_generic("cuckoo n=200000 p=0.001", VERB_REMOVE, 30000));
}

/* A cuckoo filter that cannot grow: the batch stops at the key that finds
 * it full, as the single add does, with the keys before it added. */
static void test_generic_batch_until_full(void **state)
{
    (void)state;
    assert_true(check_generic("cuckoo n=1000 p=0.01", VERB_ADD, 5000));
    assert_true(check_generic("cuckoo n=1000 p=0.01", VERB_ADD_UNIQUE, 5000));
}

static void test_generic_batch_refusals(void **state)
{
    (void)state;
    amq_filter *bloom = NULL;
    assert_int_equal(amq_new(&bloom, "bloom n=1000 p=0.01", NULL), AMQ_OK);
    const void *keys[2] = { "a", NULL };
    size_t lens[2] = { 1, 3 }, handled = 7;
    /* a NULL key of three bytes: nothing added */
    assert_int_equal(amq_add_many(NULL, &handled, bloom, keys, lens, 2), AMQ_EINVAL);
    assert_int_equal(handled, 0);
    assert_int_equal(amq_contains(bloom, "a", 1), 0);
    lens[1] = 0;
    assert_int_equal(amq_add_many(NULL, &handled, bloom, keys, lens, 2), AMQ_OK);
    assert_int_equal(handled, 2);
    assert_int_equal(amq_contains(bloom, "a", 1), 1);
    assert_int_equal(amq_contains(bloom, NULL, 0), 1);
    assert_int_equal(amq_remove_many(NULL, &handled, bloom, keys, lens, 2), AMQ_EUNSUPPORTED);
    assert_int_equal(amq_add_many(NULL, NULL, NULL, keys, lens, 2), AMQ_EINVAL);
    assert_int_equal(amq_add_many(NULL, &handled, bloom, NULL, NULL, 0), AMQ_OK);
    assert_int_equal(handled, 0);
    amq_free(bloom);

    amq_filter *fuse = NULL;
    assert_int_equal(amq_build(&fuse, "fuse8", keys, lens, 2, NULL), AMQ_OK);
    assert_int_equal(amq_add_many(NULL, NULL, fuse, keys, lens, 2), AMQ_EUNSUPPORTED);
    amq_free(fuse);

    /* an add-once filter refuses removals, in a batch too */
    amq_filter *counting = NULL;
    assert_int_equal(amq_new(&counting, "counting-bloom n=1000 p=0.01", NULL), AMQ_OK);
    assert_int_equal(amq_mark_add_once(counting, NULL), AMQ_OK);
    assert_int_equal(amq_add_unique_many(NULL, NULL, counting, keys, lens, 2), AMQ_OK);
    assert_int_equal(amq_remove_many(NULL, NULL, counting, keys, lens, 2), AMQ_EUNSUPPORTED);
    assert_int_equal(amq_contains(counting, "a", 1), 1);
    amq_free(counting);
}

/* The typed batch calls of the cuckoo, fuse and hfb families share one
 * shape: an int status, AMQ_EINVAL for a missing argument (nothing done),
 * AMQ_OK for an empty batch, the answers of the single calls otherwise. */
static void test_typed_batch_shape(void **state)
{
    (void)state;
    const void *keys[3] = { "a", "bb", "0123456789abcdef" };
    size_t lens[3] = { 1, 2, 16 };
    uint8_t results[3] = { 9, 9, 9 };
    int answers[3] = { 9, 9, 9 };
    size_t handled = 7;

    amq_cuckoo *cuckoo = new_cuckoo(1000, 4, 0);
    assert_int_equal(amq_cuckoo_add_many(answers, &handled, NULL, keys, lens, 3), AMQ_EINVAL);
    assert_int_equal(handled, 0);
    assert_int_equal(amq_cuckoo_add_many(answers, &handled, cuckoo, NULL, lens, 3), AMQ_EINVAL);
    const void *null_key[1] = { NULL };
    assert_int_equal(amq_cuckoo_add_unique_many(NULL, NULL, cuckoo, null_key, lens, 1), AMQ_EINVAL);
    assert_int_equal(amq_cuckoo_keys(cuckoo), 0);
    assert_int_equal(amq_cuckoo_add_many(NULL, &handled, cuckoo, NULL, NULL, 0), AMQ_OK);
    assert_int_equal(handled, 0);
    assert_int_equal(amq_cuckoo_add_many(answers, &handled, cuckoo, keys, lens, 2), AMQ_OK);
    assert_int_equal(handled, 2);
    assert_int_equal(answers[0], AMQ_OK);
    assert_int_equal(answers[1], AMQ_OK);
    assert_int_equal(amq_cuckoo_add_unique_many(answers, &handled, cuckoo, keys, lens, 2), AMQ_OK);
    assert_int_equal(answers[0], 0);
    assert_int_equal(amq_cuckoo_contains_many(results, NULL, keys, lens, 3), AMQ_EINVAL);
    assert_int_equal(amq_cuckoo_contains_many(NULL, cuckoo, keys, lens, 3), AMQ_EINVAL);
    assert_int_equal(amq_cuckoo_contains_many(NULL, cuckoo, NULL, NULL, 0), AMQ_OK);
    assert_int_equal(amq_cuckoo_contains_many(results, cuckoo, keys, lens, 2), AMQ_OK);
    assert_int_equal(results[0], 1);
    assert_int_equal(results[1], 1);
    assert_int_equal(amq_cuckoo_contains_many_hash(results, cuckoo, NULL, 1), AMQ_EINVAL);
    amq_cuckoo_free(cuckoo);

    amq_filter *fuse = NULL;
    assert_int_equal(amq_build(&fuse, "fuse8", keys, lens, 2, NULL), AMQ_OK);
    amq_fuse *typed_fuse = amq_fuse_unwrap(fuse);
    assert_int_equal(amq_fuse_contains_many(results, NULL, keys, lens, 2), AMQ_EINVAL);
    assert_int_equal(amq_fuse_contains_many(results, typed_fuse, NULL, lens, 2), AMQ_EINVAL);
    assert_int_equal(amq_fuse_contains_many_hash(NULL, typed_fuse, NULL, 0), AMQ_OK);
    assert_int_equal(amq_fuse_contains_many(results, typed_fuse, keys, lens, 2), AMQ_OK);
    assert_int_equal(results[0], 1);
    assert_int_equal(results[1], 1);
    amq_free(fuse);

    amq_filter *hfb = NULL;
    assert_int_equal(amq_build(&hfb, "hfb", keys + 2, lens + 2, 1, NULL), AMQ_OK);
    amq_hfb *typed_hfb = amq_hfb_unwrap(hfb);
    assert_int_equal(amq_hfb_contains_many_hash(results, typed_hfb, NULL, 1), AMQ_EINVAL);
    assert_int_equal(amq_hfb_contains_many_hash(NULL, NULL, NULL, 0), AMQ_OK);
    assert_int_equal(amq_hfb_contains_many_hash(results, typed_hfb, keys[2], 1), AMQ_OK);
    assert_int_equal(results[0], 1);
    assert_int_equal(amq_hfb_contains_many(results, typed_hfb, keys, lens, 1), AMQ_EINVAL);
    assert_int_equal(amq_hfb_contains_many(results, NULL, keys + 2, lens + 2, 1), AMQ_EINVAL);
    amq_free(hfb);
}

int main(void)
{
    seed = amq_test_seed(20261126);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bloom),
        cmocka_unit_test(test_scalable_bloom),
        cmocka_unit_test(test_cuckoo_growing),
        cmocka_unit_test(test_cuckoo_until_full),
        cmocka_unit_test(test_cuckoo_large_table),
        cmocka_unit_test(test_generic_batches),
        cmocka_unit_test(test_generic_batch_until_full),
        cmocka_unit_test(test_generic_batch_refusals),
        cmocka_unit_test(test_typed_batch_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
