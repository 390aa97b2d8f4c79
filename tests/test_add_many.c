/*
 * Tests for the batch adds (amq_bloom_add_many, amq_scalable_bloom_add_many,
 * amq_cuckoo_add_many, amq_cuckoo_add_unique_many): a batch gives exactly
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
#include "test_util.h"

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

/* Both filters, wrapped, save to the same bytes. */
static void assert_same_file(amq_filter *one, amq_filter *other)
{
    uint8_t *one_bytes = NULL, *other_bytes = NULL;
    size_t one_len = 0, other_len = 0;
    assert_int_equal(amq_save_to_memory(&one_bytes, &one_len, one, NULL), AMQ_OK);
    assert_int_equal(amq_save_to_memory(&other_bytes, &other_len, other, NULL), AMQ_OK);
    assert_int_equal(one_len, other_len);
    assert_memory_equal(one_bytes, other_bytes, one_len);
    free(one_bytes);
    free(other_bytes);
}

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
    assert_same_file(a, c);
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
    assert_same_file(a, c);
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
 * batches into another, calling again after every stop until the same
 * failure; then the same answers and the same file. */
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
    size_t done = 0, stops = 0;
    for (size_t b = 0; done < handled; b++) {
        size_t want = batch_lengths[b % 9] < s.count - done ? batch_lengths[b % 9] : s.count - done;
        size_t n = unique ? amq_cuckoo_add_unique_many(results + done, batched, s.pointers + done,
                                                       s.lens + done, want)
                          : amq_cuckoo_add_many(results + done, batched, s.pointers + done,
                                                s.lens + done, want);
        assert_true(n >= 1 && n <= want);
        if (n < want) {
            stops++;
            assert_true(results[done + n - 1] < 0 || amq_cuckoo_full(batched));
        }
        done += n;
        if (results[done - 1] < 0)
            break;
    }
    assert_int_equal(done, handled);
    assert_memory_equal(expected, results, handled * sizeof *expected);
    if (growth > 0)
        assert_true(stops > 0 && amq_cuckoo_tables(batched) > 1);
    else
        assert_int_equal(results[handled - 1], AMQ_EFULL);
    amq_filter *a = NULL, *c = NULL;
    assert_int_equal(amq_cuckoo_wrap(&a, one_by_one, NULL), AMQ_OK);
    assert_int_equal(amq_cuckoo_wrap(&c, batched, NULL), AMQ_OK);
    assert_same_file(a, c);
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

int main(void)
{
    seed = amq_test_seed(20261126);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bloom),
        cmocka_unit_test(test_scalable_bloom),
        cmocka_unit_test(test_cuckoo_growing),
        cmocka_unit_test(test_cuckoo_until_full),
        cmocka_unit_test(test_cuckoo_large_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
