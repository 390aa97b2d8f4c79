/*
 * Tests of what the headers promise about threads (bloom.h, cuckoo.h,
 * fuse.h, gcs.h, hfb.h, amq.h): many threads reading one filter, and many
 * threads adding to one classic or blocked Bloom filter with the concurrent
 * add. Run under ThreadSanitizer as well (`make test-tsan`), which reports
 * any data race the calls make; here the answers are checked.
 *
 *   concurrent readers: 8 threads ask one filter of every family the same
 *     keys, present and absent, through amq_contains, amq_contains_many,
 *     the typed contains and contains_many, and amq_info_get, at once; each
 *     answer equals the one a single thread got before.
 *   concurrent adds: 2, 4 and 8 threads add disjoint shares of the keys,
 *     plus a set every thread adds, to one classic filter and one of each
 *     blocked layout with the concurrent add, while a ninth thread asks with
 *     the concurrent query; each thread finds each key it added right after
 *     adding it; afterwards every key is present, and the filter saves to
 *     the same bytes as one filled by the plain add on one thread (the bits
 *     and, for the classic filter, the set-bit count, which its invariant
 *     check also compares with the bits).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/fuse.h"
#include "amq/gcs.h"
#include "amq/hfb.h"
#include "bloom/bloom_internal.h"
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

#define READERS 8

/* ---- concurrent readers ---------------------------------------------------------- */

/* Keys held and keys asked for: n of set 0 are in the filter; the queries
 * are those n and n of set 1, alternately. */
typedef struct reader_case {
    const amq_filter *f;
    amq_test_keys queries;
    uint8_t *expected; /* a single thread's answers */
    pthread_barrier_t *start;
    int reader;
    uint64_t mismatches; /* this reader's, read after the join */
} reader_case;

/* Whether the typed calls of f's family answer as expected: contains one by
 * one, then contains_many. Counts mismatches. */
static uint64_t typed_mismatches(const reader_case *c, uint8_t *results)
{
    amq_filter *f = (amq_filter *)c->f; /* unwrap lends the typed filter; nothing changes */
    const amq_test_keys *q = &c->queries;
    const char *family = amq_filter_family(f);
    uint64_t wrong = 0;
    for (size_t i = 0; i < q->count; i++) {
        const void *key = q->pointers[i];
        size_t len = q->lens[i];
        int answer = -1;
        if (strcmp(family, "bloom") == 0)
            answer = amq_bloom_contains(amq_bloom_unwrap(f), key, len);
        else if (strcmp(family, "blocked-bloom") == 0)
            answer = amq_blocked_bloom_contains(amq_blocked_bloom_unwrap(f), key, len);
        else if (strcmp(family, "counting-bloom") == 0)
            answer = amq_counting_bloom_contains(amq_counting_bloom_unwrap(f), key, len) &&
                     amq_counting_bloom_count(amq_counting_bloom_unwrap(f), key, len) > 0;
        else if (strcmp(family, "scalable-bloom") == 0)
            answer = amq_scalable_bloom_contains(amq_scalable_bloom_unwrap(f), key, len);
        else if (strcmp(family, "cuckoo") == 0)
            answer = amq_cuckoo_contains(amq_cuckoo_unwrap(f), key, len) &&
                     amq_cuckoo_count(amq_cuckoo_unwrap(f), key, len) > 0;
        else if (strcmp(family, "fuse8") == 0 || strcmp(family, "fuse16") == 0)
            answer = amq_fuse_contains(amq_fuse_unwrap(f), key, len);
        else if (strcmp(family, "gcs") == 0)
            answer = amq_gcs_contains(amq_gcs_unwrap(f), key, len);
        else if (strcmp(family, "hfb") == 0)
            answer = amq_hfb_contains(amq_hfb_unwrap(f), key, len);
        wrong += answer != c->expected[i];
    }
    memset(results, 0xff, q->count);
    const void *const *keys = q->pointers;
    int status = AMQ_OK;
    if (strcmp(family, "bloom") == 0)
        amq_bloom_contains_many(results, amq_bloom_unwrap(f), keys, q->lens, q->count);
    else if (strcmp(family, "blocked-bloom") == 0)
        amq_blocked_bloom_contains_many(results, amq_blocked_bloom_unwrap(f), keys, q->lens,
                                        q->count);
    else if (strcmp(family, "counting-bloom") == 0)
        amq_counting_bloom_contains_many(results, amq_counting_bloom_unwrap(f), keys, q->lens,
                                         q->count);
    else if (strcmp(family, "scalable-bloom") == 0)
        amq_scalable_bloom_contains_many(results, amq_scalable_bloom_unwrap(f), keys, q->lens,
                                         q->count);
    else if (strcmp(family, "cuckoo") == 0)
        amq_cuckoo_contains_many(results, amq_cuckoo_unwrap(f), keys, q->lens, q->count);
    else if (strcmp(family, "fuse8") == 0 || strcmp(family, "fuse16") == 0)
        amq_fuse_contains_many(results, amq_fuse_unwrap(f), keys, q->lens, q->count);
    else if (strcmp(family, "gcs") == 0)
        status = amq_gcs_contains_many(results, amq_gcs_unwrap(f), keys, q->lens, q->count);
    else if (strcmp(family, "hfb") == 0)
        status = amq_hfb_contains_many(results, amq_hfb_unwrap(f), keys, q->lens, q->count);
    else
        return wrong + 1; /* a family this test does not know */
    if (status != AMQ_OK)
        return wrong + q->count;
    for (size_t i = 0; i < q->count; i++)
        wrong += results[i] != c->expected[i];
    return wrong;
}

static void *reader(void *arg)
{
    reader_case *c = arg;
    const amq_test_keys *q = &c->queries;
    uint8_t *results = malloc(q->count);
    if (!results) {
        c->mismatches = UINT64_MAX;
        return NULL;
    }
    pthread_barrier_wait(c->start);
    uint64_t wrong = 0;
    /* Each reader starts at its own offset, so that the threads ask
     * different keys at the same moment as well as the same ones. */
    for (size_t j = 0; j < q->count; j++) {
        size_t i = (j + (size_t)c->reader * q->count / READERS) % q->count;
        wrong += amq_contains(c->f, q->pointers[i], q->lens[i]) != c->expected[i];
    }
    memset(results, 0xff, q->count);
    if (amq_contains_many(results, c->f, q->pointers, q->lens, q->count) != AMQ_OK)
        wrong++;
    for (size_t i = 0; i < q->count; i++)
        wrong += results[i] != c->expected[i];
    wrong += typed_mismatches(c, results);
    amq_info info;
    if (amq_info_get(&info, c->f) != AMQ_OK)
        wrong++;
    free(results);
    c->mismatches = wrong;
    return NULL;
}

static void expect_concurrent_readers_agree(const char *spec, size_t n)
{
    amq_test_keys held;
    amq_test_keys_make(&held, seed, 0, n);
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_build(&f, spec, held.pointers, held.lens, n, &diag);
    if (status != AMQ_OK)
        fail_msg("amq_build(\"%s\"): %s", spec, diag.message);

    reader_case cases[READERS];
    pthread_t threads[READERS];
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, READERS), 0);
    amq_test_keys queries;
    queries.count = 2 * n;
    queries.keys = calloc(queries.count, sizeof *queries.keys);
    queries.pointers = calloc(queries.count, sizeof *queries.pointers);
    queries.lens = calloc(queries.count, sizeof *queries.lens);
    uint8_t *expected = malloc(queries.count);
    assert_non_null(queries.keys);
    assert_non_null(queries.pointers);
    assert_non_null(queries.lens);
    assert_non_null(expected);
    uint64_t present = 0;
    for (size_t i = 0; i < queries.count; i++) {
        queries.keys[i] = amq_test_make_key(seed, i % 2, i / 2);
        queries.pointers[i] = &queries.keys[i];
        queries.lens[i] = sizeof queries.keys[i];
        int answer = amq_contains(f, queries.pointers[i], queries.lens[i]);
        assert_true(answer == 0 || answer == 1);
        expected[i] = (uint8_t)answer;
        if (i % 2 == 0 && !answer)
            fail_msg("%s: key %zu of the filter is absent", spec, i / 2);
        present += (uint64_t)answer;
    }
    for (int t = 0; t < READERS; t++) {
        cases[t] = (reader_case){
            .f = f, .queries = queries, .expected = expected, .start = &start, .reader = t
        };
        assert_int_equal(pthread_create(&threads[t], NULL, reader, &cases[t]), 0);
    }
    for (int t = 0; t < READERS; t++) {
        assert_int_equal(pthread_join(threads[t], NULL), 0);
        if (cases[t].mismatches != 0)
            fail_msg("%s: reader %d got %llu answers other than a single thread's", spec, t,
                     (unsigned long long)cases[t].mismatches);
    }
    /* The absent keys were not all "maybe": the answers compared mean
     * something. */
    assert_true(present < queries.count);
    pthread_barrier_destroy(&start);
    free(expected);
    amq_test_keys_free(&queries);
    amq_test_keys_free(&held);
    amq_free(f);
}

static void test_concurrent_readers_agree_with_one_thread(void **state)
{
    (void)state;
    static const char *const specs[] = {
        "bloom p=0.01",
        "blocked-bloom p=0.01",
        "blocked-bloom p=0.01 layout=block",
        "counting-bloom p=0.01",
        "scalable-bloom n=256 p=0.01", /* grows to several stages */
        "cuckoo",
        "cuckoo n=256 growth=2", /* chains tables */
        "cuckoo semi-sort",
        "fuse8",
        "fuse16",
        "gcs",
        "gcs index=0",
        "hfb hash=md5",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        expect_concurrent_readers_agree(specs[i], 6000);
}

/* ---- concurrent adds -------------------------------------------------------------- */

#define MAX_WRITERS 8

typedef enum filter_kind { CLASSIC, SPLIT, BLOCK } filter_kind;

typedef struct add_case {
    filter_kind kind;
    amq_bloom *classic;
    amq_blocked_bloom *blocked;
    const amq_test_keys *keys; /* every key added */
    size_t shared;             /* keys [0, shared) are added by every writer */
    int writer, writers;
    pthread_barrier_t *start;
    atomic_bool *done;      /* the writers have finished (the querier stops) */
    uint64_t lost;          /* keys this writer added and then did not find */
    uint64_t queries, hits; /* the querier's */
} add_case;

static void add_concurrent(const add_case *c, size_t i)
{
    const void *key = c->keys->pointers[i];
    size_t len = c->keys->lens[i];
    if (c->kind == CLASSIC)
        amq_bloom_add_concurrent(c->classic, key, len);
    else
        amq_blocked_bloom_add_concurrent(c->blocked, key, len);
}

static bool contains_concurrent(const add_case *c, size_t i)
{
    const void *key = c->keys->pointers[i];
    size_t len = c->keys->lens[i];
    if (c->kind == CLASSIC)
        return amq_bloom_contains_concurrent(c->classic, key, len);
    return amq_blocked_bloom_contains_concurrent(c->blocked, key, len);
}

/* Add the shared keys, then every writers-th key of the others from this
 * writer's own; after each add the key must be found (the same thread). */
static void *writer(void *arg)
{
    add_case *c = arg;
    pthread_barrier_wait(c->start);
    uint64_t lost = 0;
    for (size_t i = 0; i < c->shared; i++) {
        add_concurrent(c, i);
        lost += !contains_concurrent(c, i);
    }
    for (size_t i = c->shared + (size_t)c->writer; i < c->keys->count; i += (size_t)c->writers) {
        add_concurrent(c, i);
        lost += !contains_concurrent(c, i);
    }
    c->lost = lost;
    return NULL;
}

/* Ask the concurrent query and the classic filter's statistics while the
 * writers add, until they are done: TSan sees the reads beside the writes. */
static void *querier(void *arg)
{
    add_case *c = arg;
    pthread_barrier_wait(c->start);
    uint64_t queries = 0, hits = 0;
    double estimate = 0;
    for (size_t i = 0; !atomic_load(c->done); i = (i + 7919) % c->keys->count) {
        hits += contains_concurrent(c, i);
        queries++;
        if (c->kind == CLASSIC && queries % 64 == 0)
            estimate += amq_bloom_estimated_keys(c->classic) + amq_bloom_expected_fpr(c->classic) +
                        (double)amq_bloom_bits_set(c->classic);
    }
    c->queries = queries;
    c->hits = hits + (estimate < 0); /* keep the statistics' calls */
    return NULL;
}

/* The saved bytes of a filter, through a handle that is freed again
 * without freeing the filter: save a wrapped copy's view. */
static uint8_t *saved_bytes(size_t *len, filter_kind kind, amq_bloom *classic,
                            amq_blocked_bloom *blocked)
{
    amq_filter *f = NULL;
    if (kind == CLASSIC)
        assert_int_equal(amq_bloom_wrap(&f, classic, NULL), AMQ_OK);
    else
        assert_int_equal(amq_blocked_bloom_wrap(&f, blocked, NULL), AMQ_OK);
    uint8_t *bytes = NULL;
    assert_int_equal(amq_save_to_memory(&bytes, len, f, NULL), AMQ_OK);
    amq_free(f); /* frees the filter too */
    return bytes;
}

static void expect_no_lost_add(filter_kind kind, int writers, size_t n, size_t shared)
{
    static const char *const names[] = { "classic", "split", "block" };
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, n);
    amq_bloom *classic[2] = { NULL, NULL };         /* concurrent, one thread */
    amq_blocked_bloom *blocked[2] = { NULL, NULL }; /* the same */
    for (int j = 0; j < 2; j++) {
        if (kind == CLASSIC) {
            amq_bloom_params params = { .capacity = n, .fpr = 0.01 };
            amq_hasher_xxh3(&params.hasher, seed);
            assert_int_equal(amq_bloom_new(&classic[j], &params, NULL), AMQ_OK);
        } else {
            amq_blocked_bloom_params params = { .capacity = n,
                                                .fpr = 0.01,
                                                .layout = kind == SPLIT ? AMQ_BLOCKED_SPLIT
                                                                        : AMQ_BLOCKED_BLOCK };
            amq_hasher_xxh3(&params.hasher, seed);
            assert_int_equal(amq_blocked_bloom_new(&blocked[j], &params, NULL), AMQ_OK);
        }
    }

    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, (unsigned)writers + 1), 0);
    atomic_bool done = false;
    add_case cases[MAX_WRITERS + 1];
    pthread_t threads[MAX_WRITERS + 1];
    for (int t = 0; t <= writers; t++) {
        cases[t] = (add_case){ .kind = kind,
                               .classic = classic[0],
                               .blocked = blocked[0],
                               .keys = &keys,
                               .shared = shared,
                               .writer = t,
                               .writers = writers,
                               .start = &start,
                               .done = &done };
        assert_int_equal(
            pthread_create(&threads[t], NULL, t < writers ? writer : querier, &cases[t]), 0);
    }
    for (int t = 0; t < writers; t++) {
        assert_int_equal(pthread_join(threads[t], NULL), 0);
        if (cases[t].lost != 0)
            fail_msg("%s, %d writers: writer %d did not find %llu keys it had added", names[kind],
                     writers, t, (unsigned long long)cases[t].lost);
    }
    atomic_store(&done, true);
    assert_int_equal(pthread_join(threads[writers], NULL), 0);
    assert_true(cases[writers].hits <= cases[writers].queries + 1);
    pthread_barrier_destroy(&start);

    /* Every key is present, by either query. */
    for (size_t i = 0; i < n; i++) {
        bool found = kind == CLASSIC
                         ? amq_bloom_contains(classic[0], keys.pointers[i], keys.lens[i])
                         : amq_blocked_bloom_contains(blocked[0], keys.pointers[i], keys.lens[i]);
        if (!found || !contains_concurrent(&cases[0], i))
            fail_msg("%s, %d writers: key %zu was lost", names[kind], writers, i);
    }
    /* The bits are a single thread's, in another order. */
    for (size_t i = n; i-- > 0;) {
        if (kind == CLASSIC)
            amq_bloom_add(classic[1], keys.pointers[i], keys.lens[i]);
        else
            amq_blocked_bloom_add(blocked[1], keys.pointers[i], keys.lens[i]);
    }
    if (kind == CLASSIC) {
        assert_int_equal(amq__bloom_check(classic[0]), AMQ_OK);
        assert_int_equal(amq_bloom_bits_set(classic[0]), amq_bloom_bits_set(classic[1]));
    } else {
        assert_int_equal(amq_blocked_bloom_bits_set(blocked[0]),
                         amq_blocked_bloom_bits_set(blocked[1]));
    }
    size_t len[2];
    uint8_t *bytes[2];
    for (int j = 0; j < 2; j++)
        bytes[j] = saved_bytes(&len[j], kind, classic[j], blocked[j]);
    assert_int_equal(len[0], len[1]);
    if (memcmp(bytes[0], bytes[1], len[0]) != 0)
        fail_msg("%s, %d writers: the filter differs from one thread's", names[kind], writers);
    free(bytes[0]);
    free(bytes[1]);
    amq_test_keys_free(&keys);
}

static void test_concurrent_adds_lose_nothing(void **state)
{
    (void)state;
    static const int writer_counts[] = { 2, 4, 8 };
    for (int w = 0; w < 3; w++)
        for (filter_kind k = CLASSIC; k <= BLOCK; k++)
            expect_no_lost_add(k, writer_counts[w], 40000, 2000);
}

/* A small filter: every writer's adds land on the same few words, so
 * fetch-ors on one word meet often. */
static void test_concurrent_adds_to_few_words(void **state)
{
    (void)state;
    for (filter_kind k = CLASSIC; k <= BLOCK; k++)
        expect_no_lost_add(k, 8, 300, 100);
}

/* The concurrent add sets the plain add's bits and counts them as it does,
 * and the concurrent query answers as the plain one, on one thread. */
static void test_concurrent_calls_match_plain_ones(void **state)
{
    (void)state;
    const size_t n = 5000;
    amq_test_keys keys, absent;
    amq_test_keys_make(&keys, seed, 0, n);
    amq_test_keys_make(&absent, seed, 1, n);
    amq_bloom_params params = { .capacity = n, .fpr = 0.01 };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_bloom *plain = NULL, *concurrent = NULL;
    assert_int_equal(amq_bloom_new(&plain, &params, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_new(&concurrent, &params, NULL), AMQ_OK);
    for (size_t i = 0; i < n; i++) {
        amq_bloom_add(plain, keys.pointers[i], keys.lens[i]);
        amq_bloom_add_concurrent(concurrent, keys.pointers[i], keys.lens[i]);
        assert_int_equal(amq_bloom_bits_set(plain), amq_bloom_bits_set(concurrent));
    }
    assert_memory_equal(amq__bloom_words(plain), amq__bloom_words(concurrent),
                        (amq_bloom_bits(plain) + 63) / 64 * 8);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(amq_bloom_contains(plain, absent.pointers[i], absent.lens[i]),
                         amq_bloom_contains_concurrent(plain, absent.pointers[i], absent.lens[i]));
    amq_bloom_free(plain);
    amq_bloom_free(concurrent);

    for (amq_blocked_layout layout = AMQ_BLOCKED_SPLIT; layout <= AMQ_BLOCKED_BLOCK; layout++) {
        amq_blocked_bloom_params bparams = { .capacity = n, .fpr = 0.01, .layout = layout };
        amq_hasher_xxh3(&bparams.hasher, seed);
        amq_blocked_bloom *a = NULL, *b = NULL;
        assert_int_equal(amq_blocked_bloom_new(&a, &bparams, NULL), AMQ_OK);
        assert_int_equal(amq_blocked_bloom_new(&b, &bparams, NULL), AMQ_OK);
        for (size_t i = 0; i < n; i++) {
            amq_blocked_bloom_add(a, keys.pointers[i], keys.lens[i]);
            amq_blocked_bloom_add_concurrent(b, keys.pointers[i], keys.lens[i]);
        }
        assert_memory_equal(amq_blocked_bloom_words(a), amq_blocked_bloom_words(b),
                            amq_blocked_bloom_bits(a) / 8);
        for (size_t i = 0; i < n; i++) {
            assert_true(amq_blocked_bloom_contains_concurrent(a, keys.pointers[i], keys.lens[i]));
            assert_int_equal(
                amq_blocked_bloom_contains(a, absent.pointers[i], absent.lens[i]),
                amq_blocked_bloom_contains_concurrent(a, absent.pointers[i], absent.lens[i]));
        }
        amq_blocked_bloom_free(a);
        amq_blocked_bloom_free(b);
    }
    amq_test_keys_free(&keys);
    amq_test_keys_free(&absent);
}

int main(void)
{
    seed = amq_test_seed(0x7468726561647321ULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_calls_match_plain_ones),
        cmocka_unit_test(test_concurrent_readers_agree_with_one_thread),
        cmocka_unit_test(test_concurrent_adds_lose_nothing),
        cmocka_unit_test(test_concurrent_adds_to_few_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
