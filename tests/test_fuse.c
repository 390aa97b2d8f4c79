/*
 * Tests for binary fuse filters (src/fuse/fuse.c, src/fuse/fuse_build.c).
 *
 * What they establish, each by something that could fail:
 *   - no false negatives at 10,000,000 keys for f = 8 and f = 16 (1,000,000
 *     in the sanitizer build, where 10^7 would not fit the time budget),
 *     and there at most 9.1 and 18.2 bits per key; arity 4 at a million
 *     keys, below 8.7 bits per key;
 *   - the FPR within 4 binomial standard deviations of 2^-8 (2,000,000
 *     absent keys) and of 2^-16 (20,000,000 absent hashes, expected about
 *     305 hits, sigma 17.5; 5,000,000 in the sanitizer build), and of 2^-8
 *     for arity 4;
 *   - the array's shape follows the paper's formulas, recomputed here;
 *   - duplicates never make construction fail: every key three times, all
 *     keys equal, equal hashes through the hash form; 0, 1 and 2 keys; every
 *     n from 1 to 1000 builds, for each width and arity;
 *   - construction retries with new seeds, and a build that cannot succeed
 *     stops after the attempt bound with AMQ_EFULL naming the keys and
 *     attempts; filters that needed retries answer correctly;
 *   - batch queries answer as single ones, on small filters and on large
 *     ones (where they prefetch); the hash form builds the same filter as
 *     the key form;
 *   - filters saved by an earlier amq answer exactly as they did then;
 *   - parameter and spec errors are named; save/load, read and mapped,
 *     gives the same answers and the same bytes again; every flipped byte
 *     and truncation of a file is refused, and crafted parameter blocks
 *     (segment length, counts, array length, payload length...) are refused
 *     by name; a file with a damaged array loads and answers without
 *     reading outside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/fuse.h"
#include "core/format.h"
#include "fuse/fuse_internal.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sanitizer build tests the largest sets at a tenth of the size. */
static const uint64_t large_n = AMQ_TEST_SANITIZED ? 1000000 : 10000000;

static uint64_t seed;

static amq_fuse_params params_of(uint32_t fingerprint_bits, uint32_t arity)
{
    amq_fuse_params params = { .fingerprint_bits = fingerprint_bits, .arity = arity };
    amq_hasher_xxh3(&params.hasher, seed);
    return params;
}

/* The hashes of keys 0 .. n-1 of set 0 under the run's seed; malloc'd. */
static uint64_t *key_hashes(const amq_fuse_params *params, uint64_t n)
{
    uint64_t *hashes = malloc((n ? n : 1) * sizeof *hashes);
    assert_non_null(hashes);
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        hashes[i] = amq_hash64(&params->hasher, &key, sizeof key);
    }
    return hashes;
}

static amq_fuse *build_hashes(const amq_fuse_params *params, const uint64_t *hashes, uint64_t n)
{
    amq_fuse *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_fuse_build_hash(&f, params, hashes, n, &diag);
    if (status != AMQ_OK)
        fail_msg("building f = %u, arity %u from %llu hashes: %s (%s)", params->fingerprint_bits,
                 params->arity, (unsigned long long)n, amq_strerror(status), diag.message);
    assert_int_equal(amq__fuse_check(f, NULL), AMQ_OK);
    return f;
}

/* A filter of keys 0 .. n-1 of set 0, built from the keys. */
static amq_fuse *build_keys(const amq_fuse_params *params, uint64_t n)
{
    amq_test_keys key_set;
    amq_test_keys_make(&key_set, seed, 0, n);
    amq_fuse *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_fuse_build(&f, params, key_set.pointers, key_set.lens, n, &diag);
    if (status != AMQ_OK)
        fail_msg("building f = %u, arity %u from %llu keys: %s (%s)", params->fingerprint_bits,
                 params->arity, (unsigned long long)n, amq_strerror(status), diag.message);
    assert_int_equal(amq__fuse_check(f, NULL), AMQ_OK);
    amq_test_keys_free(&key_set);
    return f;
}

/* Keys 0 .. n-1 of set 0 are all found. */
static void assert_all_found(const amq_fuse *f, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        if (!amq_fuse_contains(f, &key, sizeof key))
            fail_msg("false negative: key %llu of %llu (f = %u, arity %u, %llu distinct)",
                     (unsigned long long)i, (unsigned long long)n, amq_fuse_fingerprint_bits(f),
                     amq_fuse_arity(f), (unsigned long long)amq_fuse_keys(f));
    }
}

/* hits of trials within 4 binomial standard deviations of trials x p. */
static void expect_rate(uint64_t hits, uint64_t trials, double p, const char *what)
{
    double mean = (double)trials * p, sigma = sqrt((double)trials * p * (1 - p));
    if (fabs((double)hits - mean) > 4 * sigma)
        fail_msg("%s: %llu of %llu, expected %.1f +- %.1f (4 sigma)", what,
                 (unsigned long long)hits, (unsigned long long)trials, mean, 4 * sigma);
    print_message("%s: %llu of %llu (expected %.1f, sigma %.1f)\n", what, (unsigned long long)hits,
                  (unsigned long long)trials, mean, sigma);
}

/* Absent keys (set 1, 0 .. trials-1) that are maybe present. */
static uint64_t absent_key_hits(const amq_fuse *f, uint64_t trials)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < trials; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        hits += amq_fuse_contains(f, &key, sizeof key);
    }
    return hits;
}

/* The batch forms answer as single queries over a large filter (one whose
 * batch queries prefetch: over 2 MiB): n hashes, those of the present keys
 * alternating with random ones, and 3000 keys spread over the set, a third
 * of them absent. */
static void assert_batch_agrees(const amq_fuse *f, const uint64_t *hashes, uint64_t n)
{
    enum { CHUNK = 4096, KEYS = 3000 };
    static uint64_t mixed[CHUNK];
    static uint8_t results[CHUNK];
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0x7777);
    for (uint64_t start = 0; start < n; start += CHUNK) {
        size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
        for (size_t i = 0; i < count; i++)
            mixed[i] = i % 2 ? hashes[start + i] : amq_test_next(&rng);
        amq_fuse_contains_many_hash(results, f, mixed, count);
        for (size_t i = 0; i < count; i++)
            if (results[i] != amq_fuse_contains_hash(f, mixed[i]) || (i % 2 && !results[i]))
                fail_msg("hash %llu: batch %d, alone %d", (unsigned long long)(start + i),
                         results[i], amq_fuse_contains_hash(f, mixed[i]));
    }
    static amq_test_key keys[KEYS];
    static const void *pointers[KEYS];
    static size_t lens[KEYS];
    amq_test_batch_keys(keys, pointers, lens, KEYS, seed, n / KEYS);
    amq_fuse_contains_many(results, f, pointers, lens, KEYS);
    for (size_t i = 0; i < KEYS; i++)
        if (results[i] != amq_fuse_contains(f, pointers[i], lens[i]) || (i % 3 && !results[i]))
            fail_msg("key %zu: batch %d, alone %d", i, results[i],
                     amq_fuse_contains(f, pointers[i], lens[i]));
}

/* ---- large sets, size and FPR ----------------------------------------------------- */

static void test_large_set_8_bits(void **state)
{
    (void)state;
    amq_fuse_params params = params_of(8, 3);
    uint64_t *hashes = key_hashes(&params, large_n);
    amq_fuse *f = build_hashes(&params, hashes, large_n);
    assert_batch_agrees(f, hashes, large_n);
    free(hashes);
    assert_int_equal(amq_fuse_keys(f), large_n);
    print_message("n = %llu: %.3f bits/key, %u attempt(s)\n", (unsigned long long)large_n,
                  amq_fuse_bits_per_key(f), amq_fuse_attempts(f));
    assert_true(amq_fuse_bits_per_key(f) <= 9.1);
    assert_true(amq_fuse_memory_bytes(f) * 8 >= large_n * 8);
    assert_all_found(f, large_n);
    expect_rate(absent_key_hits(f, 2000000), 2000000, 1.0 / 256, "fuse8 FPR");
    assert_true(amq_fuse_expected_fpr(f) == 1.0 / 256);
    amq_fuse_free(f);
}

static void test_large_set_16_bits(void **state)
{
    (void)state;
    amq_fuse_params params = params_of(16, 3);
    uint64_t *hashes = key_hashes(&params, large_n);
    amq_fuse *f = build_hashes(&params, hashes, large_n);
    assert_true(amq_fuse_memory_bytes(f) > 2 << 20);
    assert_batch_agrees(f, hashes, large_n);
    free(hashes);
    print_message("n = %llu: %.3f bits/key, %u attempt(s)\n", (unsigned long long)large_n,
                  amq_fuse_bits_per_key(f), amq_fuse_attempts(f));
    assert_true(amq_fuse_bits_per_key(f) <= 18.2);
    assert_all_found(f, large_n);
    /* Random 64-bit values stand for absent keys' hashes: one equal to a
     * present key's has chance 10^7 / 2^64. 20,000,000 of them expect 305
     * hits, sigma 17.5; the sanitizer build asks 5,000,000 (76, sigma
     * 8.7). */
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0x5555);
    const uint64_t trials = AMQ_TEST_SANITIZED ? 5000000 : 20000000;
    uint64_t hits = 0;
    for (uint64_t i = 0; i < trials; i++)
        hits += amq_fuse_contains_hash(f, amq_test_next(&rng));
    expect_rate(hits, trials, 1.0 / 65536, "fuse16 FPR");
    assert_true(amq_fuse_expected_fpr(f) == 1.0 / 65536);
    amq_fuse_free(f);
}

static void test_arity_4(void **state)
{
    (void)state;
    const uint64_t n = 1000000;
    amq_fuse_params params = params_of(8, 4);
    uint64_t *hashes = key_hashes(&params, n);
    amq_fuse *f = build_hashes(&params, hashes, n);
    assert_int_equal(amq_fuse_arity(f), 4);
    print_message("arity 4, n = %llu: %.3f bits/key\n", (unsigned long long)n,
                  amq_fuse_bits_per_key(f));
    assert_true(amq_fuse_bits_per_key(f) <= 8.7);
    assert_all_found(f, n);
    expect_rate(absent_key_hits(f, 2000000), 2000000, 1.0 / 256, "fuse8 arity 4 FPR");
    amq_fuse_free(f);

    params.fingerprint_bits = 16;
    f = build_hashes(&params, hashes, n);
    assert_true(amq_fuse_bits_per_key(f) <= 17.4);
    assert_all_found(f, n);
    amq_fuse_free(f);
    free(hashes);
}

/* The paper's segment length and size factor, evaluated here. */
static void paper_shape(uint64_t n, uint32_t arity, uint64_t *segment_length, double *capacity)
{
    double x = (double)n;
    double exponent =
        arity == 3 ? floor(log(x) / log(3.33) + 2.25) : floor(log(x) / log(2.91) - 0.5);
    if (n < 2 || exponent < 2)
        exponent = 2;
    if (exponent > 18)
        exponent = 18;
    *segment_length = (uint64_t)1 << (int)exponent;
    double factor = arity == 3 ? fmax(1.125, 0.875 + 0.25 * log(1e6) / log(x))
                               : fmax(1.075, 0.77 + 0.305 * log(600000.0) / log(x));
    *capacity = n < 2 ? 0 : ceil(x * factor);
}

static void test_shape(void **state)
{
    (void)state;
    const uint64_t sizes[] = { 0,    1,     2,       3,        10,        100,
                               1000, 12345, 1000000, 10000000, 100000000, (uint64_t)1 << 32 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (uint32_t arity = 3; arity <= 4; arity++) {
            amq__fuse_shape shape;
            assert_true(amq__fuse_shape_for(&shape, sizes[i], arity, 8, 0));
            uint64_t length;
            double capacity;
            paper_shape(sizes[i], arity, &length, &capacity);
            uint64_t blocks = (uint64_t)ceil(capacity / (double)length);
            uint64_t expected = blocks < arity ? arity * length : blocks * length;
            if (shape.segment_length != length || shape.array_length != expected)
                fail_msg("n = %llu, arity %u: L = %llu, %llu slots; expected L = %llu, %llu slots",
                         (unsigned long long)sizes[i], arity,
                         (unsigned long long)shape.segment_length,
                         (unsigned long long)shape.array_length, (unsigned long long)length,
                         (unsigned long long)expected);
            assert_int_equal(shape.array_length,
                             (shape.segment_count + arity - 1) * shape.segment_length);
            assert_int_equal(shape.segment_count_length,
                             shape.segment_count * shape.segment_length);
            assert_true(shape.array_length >= sizes[i]);
        }
    }
    /* 10^7 keys: the bits per key the documentation gives. */
    amq__fuse_shape shape;
    assert_true(amq__fuse_shape_for(&shape, 10000000, 3, 8, 0));
    assert_int_equal(shape.segment_length, 1 << 15);
    assert_true(fabs((double)shape.array_length * 8 / 1e7 - 9.02) < 0.005);
    assert_true(amq__fuse_shape_for(&shape, 10000000, 4, 8, 0));
    assert_true(fabs((double)shape.array_length * 8 / 1e7 - 8.61) < 0.005);
}

/* ---- duplicates, tiny and small sets ------------------------------------------------ */

static void test_duplicates(void **state)
{
    (void)state;
    enum { DISTINCT = 30000 };
    amq_fuse_params params = params_of(8, 3);
    /* Every key three times, interleaved. */
    amq_test_key *keys = malloc(3 * DISTINCT * sizeof *keys);
    const void **pointers = malloc(3 * DISTINCT * sizeof *pointers);
    size_t *lens = malloc(3 * DISTINCT * sizeof *lens);
    assert_true(keys && pointers && lens);
    for (size_t i = 0; i < 3 * DISTINCT; i++) {
        keys[i] = amq_test_make_key(seed, 0, i % DISTINCT);
        pointers[i] = &keys[i];
        lens[i] = sizeof keys[i];
    }
    for (uint32_t bits = 8; bits <= 16; bits += 8) {
        params.fingerprint_bits = bits;
        amq_fuse *f = NULL;
        assert_int_equal(amq_fuse_build(&f, &params, pointers, lens, 3 * DISTINCT, NULL), AMQ_OK);
        assert_int_equal(amq_fuse_keys(f), DISTINCT);
        /* Duplicates cannot peel: the first attempt fails, the next one
         * works on the distinct keys. */
        assert_true(amq_fuse_attempts(f) >= 2);
        amq__fuse_shape distinct_shape;
        assert_true(amq__fuse_shape_for(&distinct_shape, DISTINCT, 3, bits, 0));
        assert_int_equal(amq_fuse_array_length(f), distinct_shape.array_length);
        assert_all_found(f, DISTINCT);
        amq_fuse_free(f);
    }
    /* All keys equal. */
    for (size_t i = 0; i < 3 * DISTINCT; i++)
        pointers[i] = &keys[0];
    amq_fuse *f = NULL;
    assert_int_equal(amq_fuse_build(&f, &params, pointers, lens, 3 * DISTINCT, NULL), AMQ_OK);
    assert_int_equal(amq_fuse_keys(f), 1);
    assert_true(amq_fuse_contains(f, &keys[0], sizeof keys[0]));
    amq_fuse_free(f);
    /* Equal hashes through the hash form; the caller's array is left as
     * it was. */
    uint64_t *hashes = key_hashes(&params, DISTINCT);
    uint64_t *repeated = malloc(2 * DISTINCT * sizeof *repeated);
    assert_non_null(repeated);
    for (size_t i = 0; i < 2 * DISTINCT; i++)
        repeated[i] = hashes[(i * 7919) % DISTINCT];
    uint64_t *before = malloc(2 * DISTINCT * sizeof *before);
    assert_non_null(before);
    memcpy(before, repeated, 2 * DISTINCT * sizeof *before);
    f = build_hashes(&params, repeated, 2 * DISTINCT);
    assert_memory_equal(repeated, before, 2 * DISTINCT * sizeof *before);
    assert_int_equal(amq_fuse_keys(f), DISTINCT);
    assert_all_found(f, DISTINCT);
    amq_fuse_free(f);
    free(before);
    free(repeated);
    free(hashes);
    free(keys);
    free(pointers);
    free(lens);
}

static void test_tiny_sets(void **state)
{
    (void)state;
    for (uint32_t bits = 8; bits <= 16; bits += 8) {
        for (uint32_t arity = 3; arity <= 4; arity++) {
            amq_fuse_params params = params_of(bits, arity);
            /* No keys: every slot is zero, which is one key in 2^f's
             * fingerprint, yet the filter answers "no" to every key, one by
             * one and in a batch. */
            amq_fuse *f = build_keys(&params, 0);
            assert_int_equal(amq_fuse_keys(f), 0);
            assert_int_equal(amq_fuse_segment_count(f), 1);
            assert_int_equal(amq_fuse_array_length(f), arity * AMQ__FUSE_MIN_SEGMENT_LENGTH);
            assert_true(amq_fuse_bits_per_key(f) == (double)amq_fuse_memory_bytes(f) * 8);
            assert_int_equal(absent_key_hits(f, 200000), 0);
            uint64_t batch_hashes[64];
            uint8_t batch_results[64];
            for (size_t i = 0; i < 64; i++)
                batch_hashes[i] = i * 0x9E3779B97F4A7C15ULL;
            memset(batch_results, 1, sizeof batch_results);
            amq_fuse_contains_many_hash(batch_results, f, batch_hashes, 64);
            for (size_t i = 0; i < 64; i++)
                assert_int_equal(batch_results[i], 0);
            amq_fuse_free(f);
            assert_int_equal(amq_fuse_build_hash(&f, &params, NULL, 0, NULL), AMQ_OK);
            assert_int_equal(amq_fuse_keys(f), 0);
            amq_fuse_free(f);
            for (uint64_t n = 1; n <= 3; n++) {
                f = build_keys(&params, n);
                assert_int_equal(amq_fuse_keys(f), n);
                assert_all_found(f, n);
                amq_fuse_free(f);
            }
        }
    }
}

/* Every n from 1 to 1000 builds, for each width and arity, holds its keys,
 * and (over all n) rarely needs a retry. Each n hashes its keys with a seed
 * of its own: were the sets prefixes of one set, a key that makes the
 * first attempt fail at some n would make it fail at many n after it. */
static void test_small_sets(void **state)
{
    (void)state;
    for (uint32_t bits = 8; bits <= 16; bits += 8) {
        for (uint32_t arity = 3; arity <= 4; arity++) {
            amq_fuse_params params = params_of(bits, arity);
            uint64_t retried = 0, most = 0;
            for (uint64_t n = 1; n <= 1000; n++) {
                amq_hasher_xxh3(&params.hasher, seed + n * 0x9E3779B97F4A7C15ULL);
                uint64_t *hashes = key_hashes(&params, n);
                amq_fuse *f = build_hashes(&params, hashes, n);
                assert_int_equal(amq_fuse_keys(f), n);
                for (uint64_t i = 0; i < n; i++)
                    if (!amq_fuse_contains_hash(f, hashes[i]))
                        fail_msg("n = %llu, f = %u, arity %u: key %llu not found",
                                 (unsigned long long)n, bits, arity, (unsigned long long)i);
                retried += amq_fuse_attempts(f) > 1;
                most = amq_fuse_attempts(f) > most ? amq_fuse_attempts(f) : most;
                amq_fuse_free(f);
                free(hashes);
            }
            print_message("f = %u, arity %u, n = 1..1000: %llu needed a retry, at most %llu "
                          "attempts\n",
                          bits, arity, (unsigned long long)retried, (unsigned long long)most);
            assert_true(retried < 200);
        }
    }
}

/* ---- retries ------------------------------------------------------------------------ */

static void test_attempt_bound(void **state)
{
    (void)state;
    amq_fuse_params params = params_of(8, 3);
    uint64_t *hashes = key_hashes(&params, 1000);
    /* Fewer slots than keys: no peeling can succeed. */
    amq__fuse_build_options options = { .max_attempts = 5, .size_factor = 0.5 };
    amq_fuse *f = (amq_fuse *)&f;
    amq_diag diag = { .message = "" };
    assert_int_equal(amq__fuse_build_hashes_with(&f, &params, hashes, 1000, &options, &diag),
                     AMQ_EFULL);
    assert_null(f);
    assert_non_null(strstr(diag.message, "1000 distinct keys"));
    assert_non_null(strstr(diag.message, "5 attempts"));
    /* The default bound. */
    options.max_attempts = 0;
    f = (amq_fuse *)&f;
    assert_int_equal(amq__fuse_build_hashes_with(&f, &params, hashes, 1000, &options, &diag),
                     AMQ_EFULL);
    assert_null(f);
    char expected[64];
    snprintf(expected, sizeof expected, "%d attempts", AMQ_FUSE_MAX_ATTEMPTS);
    assert_non_null(strstr(diag.message, expected));
    /* With duplicates the message counts the distinct keys. */
    uint64_t *doubled = malloc(2000 * sizeof *doubled);
    assert_non_null(doubled);
    for (size_t i = 0; i < 2000; i++)
        doubled[i] = hashes[i / 2];
    options.max_attempts = 3;
    assert_int_equal(amq__fuse_build_hashes_with(&f, &params, doubled, 2000, &options, &diag),
                     AMQ_EFULL);
    assert_non_null(strstr(diag.message, "1000 distinct keys"));
    free(doubled);
    free(hashes);
}

/* Near the threshold of peelability builds need more attempts: at 50,000
 * keys and 1.19 slots per key (L = 2048; the paper's sizing would give
 * 1.27) about half of them. The filters that succeed after retries hold
 * every key. */
static void test_retries_hold_every_key(void **state)
{
    (void)state;
    amq_fuse_params params = params_of(8, 3);
    enum { N = 50000, BUILDS = 20 };
    uint64_t *hashes = key_hashes(&params, N * BUILDS);
    amq__fuse_build_options options = { .size_factor = 1.16 };
    uint64_t retried = 0, total = 0;
    for (size_t b = 0; b < BUILDS; b++) {
        amq_fuse *f = NULL;
        amq_diag diag = { .message = "" };
        int status = amq__fuse_build_hashes_with(&f, &params, hashes + b * N, N, &options, &diag);
        if (status != AMQ_OK)
            fail_msg("build %zu: %s", b, diag.message);
        retried += amq_fuse_attempts(f) > 1;
        total += amq_fuse_attempts(f);
        for (size_t i = 0; i < N; i++)
            if (!amq_fuse_contains_hash(f, hashes[b * N + i]))
                fail_msg("build %zu (%u attempts): key %zu not found", b, amq_fuse_attempts(f), i);
        amq_fuse_free(f);
    }
    print_message("1.19 slots per key: %llu of %d builds retried, %llu attempts in all\n",
                  (unsigned long long)retried, BUILDS, (unsigned long long)total);
    assert_true(retried >= 2);
    free(hashes);
}

/* ---- forms of the same query ------------------------------------------------------- */

static void test_batch_and_hash_forms_agree(void **state)
{
    (void)state;
    enum { N = 50000, QUERIES = 3000 };
    for (uint32_t bits = 8; bits <= 16; bits += 8) {
        for (uint32_t arity = 3; arity <= 4; arity++) {
            amq_fuse_params params = params_of(bits, arity);
            amq_fuse *from_keys = build_keys(&params, N);
            uint64_t *hashes = key_hashes(&params, N);
            amq_fuse *from_hashes = build_hashes(&params, hashes, N);
            free(hashes);
            /* The same filter, slot for slot. */
            assert_int_equal(amq_fuse_seed(from_keys), amq_fuse_seed(from_hashes));
            assert_int_equal(amq_fuse_array_length(from_keys), amq_fuse_array_length(from_hashes));
            assert_memory_equal(from_keys->fingerprints, from_hashes->fingerprints,
                                (size_t)amq_fuse_memory_bytes(from_keys));
            amq_fuse_free(from_hashes);

            static amq_test_key keys[QUERIES];
            static const void *pointers[QUERIES];
            static size_t lens[QUERIES];
            static uint64_t query_hashes[QUERIES];
            static uint8_t batch[QUERIES], batch_hash[QUERIES];
            /* Every third key absent (and maybe a false positive); the
             * stride spreads the keys over the whole set. */
            amq_test_batch_keys(keys, pointers, lens, QUERIES, seed, N / QUERIES);
            for (size_t i = 0; i < QUERIES; i++)
                query_hashes[i] = amq_hash64(&params.hasher, pointers[i], lens[i]);
            const size_t counts[] = { 0, 1, 15, 16, 17, 33, QUERIES };
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                size_t count = counts[c];
                memset(batch, 0xee, sizeof batch);
                memset(batch_hash, 0xee, sizeof batch_hash);
                amq_fuse_contains_many(batch, from_keys, pointers, lens, count);
                amq_fuse_contains_many_hash(batch_hash, from_keys, query_hashes, count);
                for (size_t i = 0; i < count; i++) {
                    bool one = amq_fuse_contains(from_keys, pointers[i], lens[i]);
                    assert_int_equal(amq_fuse_contains_hash(from_keys, query_hashes[i]), one);
                    if (batch[i] != one || batch_hash[i] != one)
                        fail_msg("f = %u, arity %u, batch of %zu: key %zu answered %d / %d, "
                                 "alone %d",
                                 bits, arity, count, i, batch[i], batch_hash[i], one);
                    if (i % 3 != 0)
                        assert_true(one);
                }
                if (count < QUERIES)
                    assert_int_equal(batch[count], 0xee);
            }
            amq_fuse_free(from_keys);
        }
    }
}

static void test_parameter_errors(void **state)
{
    (void)state;
    amq_fuse *f = (amq_fuse *)&f;
    amq_diag diag = { .message = "" };
    uint64_t hash = 1;
    amq_fuse_params params = { .fingerprint_bits = 12 };
    assert_int_equal(amq_fuse_build_hash(&f, &params, &hash, 1, &diag), AMQ_EINVAL);
    assert_null(f);
    assert_non_null(strstr(diag.message, "fingerprint bits must be 8 or 16"));
    params = (amq_fuse_params){ .arity = 5 };
    assert_int_equal(amq_fuse_build(&f, &params, NULL, NULL, 0, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "arity must be 3 or 4"));
    params = (amq_fuse_params){ .hasher = { .kind = (amq_hash_kind)9 } };
    assert_int_equal(amq_fuse_build_hash(&f, &params, &hash, 1, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "hasher"));
    /* Defaults: 8 bits, arity 3, XXH3 with seed 0. */
    params = (amq_fuse_params){ .fingerprint_bits = 0 };
    assert_int_equal(
        amq_fuse_build(&f, &params, (const void *const[]){ "k" }, (size_t[]){ 1 }, 1, NULL),
        AMQ_OK);
    assert_int_equal(amq_fuse_fingerprint_bits(f), 8);
    assert_int_equal(amq_fuse_arity(f), 3);
    assert_int_equal(amq_fuse_hasher(f)->kind, AMQ_HASH_XXH3);
    amq_hasher zero;
    amq_hasher_xxh3(&zero, 0);
    assert_true(amq_fuse_contains_hash(f, amq_hash64(&zero, "k", 1)));
    assert_int_equal(amq_fuse_attempts(f), 1);
    amq_fuse_free(f);
    amq_fuse_free(NULL);
}

/* ---- the generic handle ----------------------------------------------------------- */

/* A filter of keys 0 .. n-1 of set 0 through amq_build. */
static amq_filter *generic_build(const char *spec, uint64_t n)
{
    amq_test_keys key_set;
    amq_test_keys_make(&key_set, seed, 0, n);
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (amq_build(&f, spec, key_set.pointers, key_set.lens, n, &diag) != AMQ_OK)
        fail_msg("'%s' refused: %s", spec, diag.message);
    amq_test_keys_free(&key_set);
    return f;
}

static void test_generic_round_trip(void **state)
{
    char path[AMQ_TEST_PATH_MAX], again[AMQ_TEST_PATH_MAX], spec[200];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(again, state, "again.amq");
    enum { N = 20000 };
    const char *const types[] = { "fuse8 arity=3", "fuse16 arity=4", "fuse8 p=0.01 n=5" };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        snprintf(spec, sizeof spec, "%s seed=%llu", types[t], (unsigned long long)seed);
        amq_filter *f = generic_build(spec, N);
        bool wide = strncmp(types[t], "fuse16", 6) == 0;
        amq_info info;
        assert_int_equal(amq_info_get(&info, f), AMQ_OK);
        assert_int_equal(info.capacity, N);
        assert_int_equal(info.keys, N);
        assert_true(info.expected_fpr == (wide ? 1.0 / 65536 : 1.0 / 256));
        assert_true(info.target_fpr == (t == 2 ? 0.01 : info.expected_fpr));
        assert_int_equal(amq_test_find_detail(&info, "fingerprint_bits")->value, wide ? 16 : 8);
        assert_int_equal(amq_test_find_detail(&info, "arity")->value, wide ? 4 : 3);
        double length = amq_test_find_detail(&info, "segment_length")->value;
        double segments = amq_test_find_detail(&info, "segment_count")->value;
        double slots = amq_test_find_detail(&info, "array_length")->value;
        assert_true(slots == (segments + (wide ? 3 : 2)) * length);
        assert_true(info.memory_bytes == slots * (wide ? 2 : 1));
        assert_true(amq_test_find_detail(&info, "attempts")->value >= 1);
        assert_int_equal(strlen(amq_test_find_detail(&info, "seed")->text), 16);
        assert_int_equal(info.hasher.kind, AMQ_HASH_XXH3);
        /* That nothing is added, removed or merged: test_conformance.c. */
        amq_diag diag = { .message = "" };
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);

        for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
            amq_filter *g = NULL;
            if (amq_load(&g, path, flags, &diag) != AMQ_OK)
                fail_msg("load: %s", diag.message);
            amq_info loaded;
            assert_int_equal(amq_info_get(&loaded, g), AMQ_OK);
            assert_string_equal(loaded.family, info.family);
            assert_int_equal(loaded.keys, info.keys);
            assert_int_equal(loaded.memory_bytes, info.memory_bytes);
            assert_true(loaded.target_fpr == info.target_fpr);
            assert_true(loaded.expected_fpr == info.expected_fpr);
            assert_memory_equal(&loaded.hasher, &info.hasher, sizeof info.hasher);
            assert_int_equal(loaded.detail_count, info.detail_count);
            assert_memory_equal(loaded.details, info.details,
                                info.detail_count * sizeof info.details[0]);
            assert_true(loaded.file_checksum != 0);
            amq_test_expect_same_answers(f, g, seed, 2 * N);
            for (uint64_t i = 0; i < N; i++) {
                amq_test_key key = amq_test_make_key(seed, 0, i);
                if (amq_contains(g, &key, sizeof key) != 1)
                    fail_msg("%s loaded with flags %u: key %llu lost", types[t], flags,
                             (unsigned long long)i);
            }
            assert_int_equal(amq_save(g, again, NULL), AMQ_OK);
            assert_true(amq_test_same_file(path, again));
            amq_free(g);
        }
        amq_free(f);
    }
}

static void test_generic_specs(void **state)
{
    (void)state;
    const amq_test_spec_case cases[] = {
        { "fuse8 n=1000", AMQ_EINVAL, "fuse8 is a static filter" },
        { "fuse16", AMQ_EINVAL, "static filter" },
        { "fuse8 arity=5", AMQ_EINVAL, "option 'arity'" },
        { "fuse8 arity=2", AMQ_EINVAL, "option 'arity'" },
        { "fuse8 fingerprint-bits=16", AMQ_EINVAL, "unknown option 'fingerprint-bits' for fuse8" },
        { "fuse16 layout=split", AMQ_EINVAL, "unknown option 'layout' for fuse16" },
        { "fuse8 k=3", AMQ_EINVAL, "unknown option 'k' for fuse8" },
        { "fuse8 bucket-size=4", AMQ_EINVAL, "unknown option 'bucket-size'" },
        { "fuse8 p=2", AMQ_EINVAL, "option 'fpr'" },
        { "fuse8 n=0", AMQ_EINVAL, "option 'capacity'" },
    };
    amq_test_expect_spec_errors(cases, sizeof cases / sizeof cases[0]);

    /* What only building can check: p against the fixed rate. */
    const struct {
        const char *spec;
        const char *message;
    } refused[] = {
        { "fuse8 p=0.001", "fuse8's false-positive rate is fixed at 2^-8" },
        { "fuse8 p=0.0039", "fuse16's is 2^-16" },
        { "fuse16 p=1e-5", "fuse16's false-positive rate is fixed at 2^-16" },
        { "fuse16 hash=siphash", "key=HEX" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        amq_filter *f = (amq_filter *)&f;
        amq_diag diag = { .message = "" };
        int status =
            amq_build(&f, refused[i].spec, (const void *const[]){ "k" }, (size_t[]){ 1 }, 1, &diag);
        if (status != AMQ_EINVAL || !strstr(diag.message, refused[i].message))
            fail_msg("'%s': status %d '%s', expected AMQ_EINVAL mentioning '%s'", refused[i].spec,
                     status, diag.message, refused[i].message);
        assert_null(f);
    }
    const char *const accepted[] = {
        "fuse8 p=0.00390625", "fuse8 p=0.5",
        "fuse16 p=0.0001",    "fuse8 n=1e9",
        "fuse16 hash=md5",    "fuse8 hash=siphash key=000102030405060708090a0b0c0d0e0f",
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        amq_filter *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_build(&f, accepted[i], (const void *const[]){ "k", "l" }, (size_t[]){ 1, 1 }, 2,
                      &diag) != AMQ_OK)
            fail_msg("'%s' refused: %s", accepted[i], diag.message);
        assert_int_equal(amq_contains(f, "k", 1), 1);
        assert_int_equal(amq_contains(f, "l", 1), 1);
        amq_free(f);
    }
    assert_int_equal(amq_test_expect_sized_by_keys("fuse8"), 3);
    assert_int_equal(amq_test_expect_sized_by_keys("fuse16 arity=4"), 3);
}

/* ---- damaged files ------------------------------------------------------------------ */

static uint8_t *saved_file(const char *path, const char *spec, uint64_t count, size_t *len)
{
    amq_filter *f = generic_build(spec, count);
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
    amq_free(f);
    uint8_t *bytes = (uint8_t *)amq_test_read_file(path, len);
    assert_non_null(bytes);
    return bytes;
}

/* Filters saved by an earlier amq (tests/data/fuse/README.md) load, read
 * and mapped, and answer as they did then: every key of their set, and the
 * recorded false positives among 100,000 other keys, no more, no fewer.
 * Pins the file format and the map from a key to its slots and
 * fingerprint. */
static void test_saved_filters_answer_as_before(void **state)
{
    (void)state;
    static const char *const names[] = { "fuse/fuse8", "fuse/fuse16-arity4" };
    enum { PRESENT = 1000, ABSENT = 100000 };
    static uint8_t recorded[PRESENT + ABSENT];
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        char name[64];
        snprintf(name, sizeof name, "%s.positives", names[n]);
        char *text = amq_test_read_data(name, NULL);
        memset(recorded, 0, sizeof recorded);
        size_t positives = 0;
        for (char *line = text; *line;) {
            char *end = NULL;
            assert_int_equal(strncmp(line, "golden-", 7), 0);
            unsigned long i = strtoul(line + 7, &end, 10);
            assert_true(*end == '\n' && i >= PRESENT && i < PRESENT + ABSENT);
            recorded[i] = 1;
            positives++;
            line = end + 1;
        }
        free(text);
        assert_true(positives > 0);
        snprintf(name, sizeof name, "%s.amq", names[n]);
        char *path = amq_test_data_path(name);
        for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
            amq_filter *f = NULL;
            amq_diag diag = { .message = "" };
            if (amq_load(&f, path, flags, &diag) != AMQ_OK)
                fail_msg("load %s: %s", path, diag.message);
            static char keys[PRESENT + ABSENT][16];
            static const void *pointers[PRESENT + ABSENT];
            static size_t lens[PRESENT + ABSENT];
            static uint8_t batch[PRESENT + ABSENT];
            for (size_t i = 0; i < PRESENT + ABSENT; i++) {
                int written = snprintf(keys[i], sizeof keys[i], "golden-%zu", i);
                pointers[i] = keys[i];
                lens[i] = (size_t)written;
            }
            assert_int_equal(amq_contains_many(batch, f, pointers, lens, PRESENT + ABSENT), AMQ_OK);
            for (size_t i = 0; i < PRESENT + ABSENT; i++) {
                int expected = i < PRESENT || recorded[i];
                int answer = amq_contains(f, pointers[i], lens[i]);
                if (answer != expected || batch[i] != expected)
                    fail_msg("%s, %s: %s answered %d (batch %d), recorded %d", path,
                             flags ? "mapped" : "read", keys[i], answer, batch[i], expected);
            }
            amq_free(f);
        }
        free(path);
    }
}

static void test_flipped_and_truncated_files(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    const char *const specs[] = { "fuse8 seed=5", "fuse16 arity=4 seed=5" };
    for (size_t i = 0; i < 2; i++) {
        size_t len = 0;
        uint8_t *good = saved_file(path, specs[i], 60, &len);
        amq_test_expect_damage_refused(path, good, len);
        free(good);
    }
}

/* The fuse parameter block, field by field (src/fuse/fuse.c): u32 fingerprint
 * bits, u32 arity, u64 seed, u64 segment length, u64 segment count, u64
 * array length, u64 keys, u32 attempts, f64 target fpr. */
typedef struct fuse_fields {
    uint32_t fingerprint_bits, arity;
    uint64_t seed, segment_length, segment_count, array_length, count;
    uint32_t attempts;
    double target_fpr;
    int extra_bytes; /* appended (> 0) or dropped (< 0) */
} fuse_fields;

static void read_fields(fuse_fields *out, const amq__container *c)
{
    memset(out, 0, sizeof *out);
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    assert_int_equal(amq__params_get_u32(&r, &out->fingerprint_bits), AMQ_OK);
    assert_int_equal(amq__params_get_u32(&r, &out->arity), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &out->seed), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &out->segment_length), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &out->segment_count), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &out->array_length), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &out->count), AMQ_OK);
    assert_int_equal(amq__params_get_u32(&r, &out->attempts), AMQ_OK);
    assert_int_equal(amq__params_get_f64(&r, &out->target_fpr), AMQ_OK);
    assert_int_equal(amq__params_end(&r), AMQ_OK);
}

static void write_fields(amq__params_writer *w, const fuse_fields *in)
{
    amq__params_init(w);
    amq__params_put_u32(w, in->fingerprint_bits);
    amq__params_put_u32(w, in->arity);
    amq__params_put_u64(w, in->seed);
    amq__params_put_u64(w, in->segment_length);
    amq__params_put_u64(w, in->segment_count);
    amq__params_put_u64(w, in->array_length);
    amq__params_put_u64(w, in->count);
    amq__params_put_u32(w, in->attempts);
    amq__params_put_f64(w, in->target_fpr);
    for (int i = 0; i < in->extra_bytes; i++)
        amq__params_put_u8(w, 0);
    if (in->extra_bytes < 0)
        w->len -= (uint32_t)-in->extra_bytes;
    assert_false(w->overflow);
}

/* Load a crafted file: AMQ_OK or AMQ_ECORRUPT only; what loads answers
 * queries for many keys (under the sanitizers, any read outside the array
 * would stop the test). Returns the status. */
static int load_crafted(const char *path, unsigned flags)
{
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_load(&f, path, flags, &diag);
    if (status != AMQ_OK) {
        assert_null(f);
        if (status != AMQ_ECORRUPT)
            fail_msg("status %d '%s', expected AMQ_OK or AMQ_ECORRUPT", status, diag.message);
        return status;
    }
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    for (uint64_t i = 0; i < 2000; i++) {
        amq_test_key key = amq_test_make_key(seed, i % 2, i);
        int answer = amq_contains(f, &key, sizeof key);
        assert_true(answer == 0 || answer == 1);
    }
    amq_free(f);
    return status;
}

static void test_damaged_parameters(void **state)
{
    char path[AMQ_TEST_PATH_MAX], crafted[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(crafted, state, "crafted.amq");
    enum { KEYS = 3000 };
    size_t len = 0;
    uint8_t *file = saved_file(path, "fuse16 seed=9", KEYS, &len);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, file, len, NULL), AMQ_OK);
    assert_int_equal(c.family, AMQ__FAMILY_FUSE16);
    fuse_fields good;
    read_fields(&good, &c);
    amq__params_writer w;
    write_fields(&w, &good);
    assert_int_equal(w.len, c.params_len);
    assert_memory_equal(w.bytes, c.params, c.params_len);
    assert_int_equal(good.fingerprint_bits, 16);
    assert_int_equal(good.arity, 3);
    assert_int_equal(good.count, KEYS);
    assert_int_equal(good.array_length, (good.segment_count + 2) * good.segment_length);
    assert_int_equal(c.payload_len, good.array_length * 2);
    /* Rewritten as it was, it loads and holds every key, read and mapped. */
    amq_test_write_container(crafted, c.family, &c.hasher, w.bytes, w.len, c.payload,
                             c.payload_len);
    assert_true(amq_test_same_file(crafted, path));
    for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
        amq_filter *f = NULL;
        assert_int_equal(amq_load(&f, crafted, flags, NULL), AMQ_OK);
        for (uint64_t i = 0; i < KEYS; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            assert_int_equal(amq_contains(f, &key, sizeof key), 1);
        }
        amq_free(f);
    }

    struct {
        const char *what;
        fuse_fields f;
        const char *message;
    } cases[] = {
        { "8-bit fingerprints in a fuse16 file", good, "fuse16 file with 8-bit fingerprints" },
        { "12-bit fingerprints", good, "12-bit" },
        { "arity 2", good, "arity 2" },
        { "arity 4 with arity 3's array", good, "array length" },
        { "segment length 0", good, "segment length 0 is not" },
        { "segment length 2", good, "segment length 2 is not" },
        { "segment length not a power of two", good, "is not a power of two" },
        { "segment length 2^19", good, "segment length 524288" },
        { "segment length doubled", good, "array length" },
        { "no segments", good, "segment count 0" },
        { "segment count 2^62", good, "segment count" },
        { "a segment more", good, "array length" },
        { "a slot more", good, "array length" },
        { "array length overflowing", good, "" },
        { "more keys than slots", good, "more than the" },
        { "no attempts", good, "attempts 0" },
        { "101 attempts", good, "attempts 101" },
        { "target fpr below 2^-16", good, "target fpr" },
        { "target fpr 1", good, "target fpr" },
        { "target fpr NaN", good, "target fpr" },
        { "a byte more", good, "trailing" },
        { "four bytes fewer", good, "too short" },
    };
    cases[0].f.fingerprint_bits = 8;
    cases[1].f.fingerprint_bits = 12;
    cases[2].f.arity = 2;
    cases[3].f.arity = 4;
    cases[4].f.segment_length = 0;
    cases[5].f.segment_length = 2;
    cases[6].f.segment_length = good.segment_length + 1;
    cases[7].f.segment_length = (uint64_t)1 << 19;
    cases[8].f.segment_length = good.segment_length * 2;
    cases[9].f.segment_count = 0;
    cases[10].f.segment_count = (uint64_t)1 << 62;
    cases[11].f.segment_count = good.segment_count + 1;
    cases[12].f.array_length = good.array_length + 1;
    cases[13].f.segment_count = UINT64_MAX - 1;
    cases[13].f.array_length = 0;
    cases[14].f.count = good.array_length + 1;
    cases[15].f.attempts = 0;
    cases[16].f.attempts = AMQ_FUSE_MAX_ATTEMPTS + 1;
    cases[17].f.target_fpr = ldexp(1, -17);
    cases[18].f.target_fpr = 1;
    cases[19].f.target_fpr = NAN;
    cases[20].f.extra_bytes = 1;
    cases[21].f.extra_bytes = -4;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_fields(&w, &cases[i].f);
        amq_test_write_container(crafted, c.family, &c.hasher, w.bytes, w.len, c.payload,
                                 c.payload_len);
        amq_test_expect_load(crafted, cases[i].message, "%s", cases[i].what);
    }

    /* The payload a byte or a slot short or long. */
    uint8_t *payload = calloc(1, (size_t)c.payload_len + 2);
    assert_non_null(payload);
    memcpy(payload, c.payload, (size_t)c.payload_len);
    const int64_t deltas[] = { -2, -1, 1, 2 };
    for (size_t i = 0; i < 4; i++) {
        amq_test_write_container(crafted, c.family, &c.hasher, c.params, c.params_len, payload,
                                 (uint64_t)((int64_t)c.payload_len + deltas[i]));
        amq_test_expect_load(crafted, "payload", "the payload %+lld bytes", (long long)deltas[i]);
    }
    /* The same shape in a fuse8 file: its payload is twice too long. */
    amq_test_write_container(crafted, AMQ__FAMILY_FUSE8, &c.hasher, c.params, c.params_len,
                             c.payload, c.payload_len);
    amq_test_expect_load(crafted, "fuse8 file with 16-bit", "a fuse16 block in a fuse8 file");

    /* A damaged array is no damage the loader can see: the file loads and
     * answers, it only answers wrongly. */
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed);
    for (size_t i = 0; i < c.payload_len; i++)
        payload[i] = (uint8_t)amq_test_next(&rng);
    amq_test_write_container(crafted, c.family, &c.hasher, c.params, c.params_len, payload,
                             c.payload_len);
    assert_int_equal(load_crafted(crafted, 0), AMQ_OK);
    assert_int_equal(load_crafted(crafted, AMQ_LOAD_MMAP), AMQ_OK);
    free(payload);

    /* Every byte of the block changed five ways: each file is refused or
     * loads and answers queries, mapped, never reading outside the array.
     * Only the seed, the target rate's low bits and the key count's low
     * bits may change unnoticed. */
    uint8_t params[AMQ__FORMAT_PARAMS_MAX];
    const uint8_t changes[] = { 0x01, 0x02, 0x10, 0x80, 0xff };
    uint64_t refused = 0, loaded = 0;
    for (uint32_t i = 0; i < c.params_len; i++) {
        for (size_t j = 0; j < sizeof changes; j++) {
            memcpy(params, c.params, c.params_len);
            params[i] ^= changes[j];
            amq_test_write_container(crafted, c.family, &c.hasher, params, c.params_len, c.payload,
                                     c.payload_len);
            int status = load_crafted(crafted, AMQ_LOAD_MMAP);
            refused += status == AMQ_ECORRUPT;
            loaded += status == AMQ_OK;
        }
    }
    print_message("%u parameter bytes changed 5 ways: %llu refused, %llu loaded\n", c.params_len,
                  (unsigned long long)refused, (unsigned long long)loaded);
    assert_true(refused > loaded);
    free(file);
}

/* ---- the rate at small n and low p ------------------------------------------------- */

/* Each fuse filter at its own smallest rate, of 1000 keys: fuse16 (2^-16)
 * over 2 * 10^7 absent keys (305 expected), fuse8 (2^-8) over 2 * 10^5
 * (781): as many as amq_info's expected_fpr, which is the fixed rate. */
static void test_fpr_small_n_low_p(void **state)
{
    (void)state;
    const struct {
        const char *spec;
        double rate;
        uint64_t trials;
    } cases[] = { { "fuse16", 1.0 / 65536, 20000000 }, { "fuse8", 1.0 / 256, 200000 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double expected =
            amq_test_expect_low_rate(cases[i].spec, seed, AMQ_TEST_BUILD, 1000, cases[i].trials, 0);
        assert_true(expected == cases[i].rate);
    }
}

int main(void)
{
    seed = amq_test_seed(20260301);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_set_8_bits),
        cmocka_unit_test(test_large_set_16_bits),
        cmocka_unit_test(test_arity_4),
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_tiny_sets),
        cmocka_unit_test(test_small_sets),
        cmocka_unit_test(test_attempt_bound),
        cmocka_unit_test(test_retries_hold_every_key),
        cmocka_unit_test(test_batch_and_hash_forms_agree),
        cmocka_unit_test(test_saved_filters_answer_as_before),
        cmocka_unit_test(test_parameter_errors),
        AMQ_TEST_WITH_SCRATCH(test_generic_round_trip),
        cmocka_unit_test(test_generic_specs),
        AMQ_TEST_WITH_SCRATCH(test_flipped_and_truncated_files),
        AMQ_TEST_WITH_SCRATCH(test_damaged_parameters),
        cmocka_unit_test(test_fpr_small_n_low_p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
