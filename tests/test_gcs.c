/*
 * Tests for the Golomb-coded set (src/gcs/gcs.c, gcs_query.c, gcs_file.c).
 *
 * What they establish, each by something that could fail:
 *   - the article's worked example: the MD5 value of each of the 26 words
 *     (digest bytes 12..15 big-endian mod 26·64) is the article's, and the
 *     stream is its 197-bit string, bit for bit (tests/data/gcs);
 *   - BIP158: for each of the ten vectors the filter built from the
 *     elements with the block's key serializes to filter_hex exactly, every
 *     element matches (single queries and batch matching), and filter_hex
 *     decoded with amq_gcs_from_bip158 matches every element too; the empty
 *     vector is the byte 00; the generic handle's spec and export agree;
 *   - keys are a set: duplicates count once; colliding values are both kept
 *     (a zero gap in the stream), in a constructed case and at M = 2;
 *     hashes sharing their top 40 bits are sorted right too;
 *   - Rice, Golomb and the best divisors round-trip; the best divisor is
 *     the brute-force minimum of the expected size; the fast decoding
 *     cursor of bits.h decodes every stream as the checked reader does,
 *     long codes and wide divisors included;
 *   - the seek index changes no answer (100,000 present and 100,000 absent
 *     keys, several sizes of index); batch matching answers as single
 *     queries do; match-any;
 *   - unions of 100,000 + 100,000 keys keep every key, hold the sum of the
 *     parts and have the FPR of the parts together; incompatible unions are
 *     refused naming what differs; the segment limit;
 *   - save and load (read and mmap) answer as the built filter; files are
 *     saved again byte for byte; every flipped byte and truncation, and
 *     crafted files with a correct checksum (truncated or altered stream,
 *     altered index, N too large, nonzero padding, bad fields) are refused;
 *   - spec and parameter errors name the option and the value;
 *   - no false negative among 1,000,000 keys; the FPR at M = 2^10 and 2^20
 *     is within 4 binomial standard deviations of d / (N·M), d the distinct
 *     values counted here from the keys' own hashes;
 *   - the stream's bits per key are within 0.1 of the expectation for the
 *     code, computed here by summing over the gap distribution.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/gcs.h"
#include "core/bits.h"
#include "core/format.h"
#include "gcs/gcs_internal.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

/* ---- helpers ------------------------------------------------------------------ */

static amq_gcs *build_hashes(const amq_gcs_params *params, const uint64_t *hashes, size_t count)
{
    amq_gcs *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_gcs_build_hash(&f, params, hashes, count, &diag);
    if (status != AMQ_OK)
        fail_msg("amq_gcs_build_hash(%zu): %s: %s", count, amq_strerror(status), diag.message);
    diag.message[0] = 0;
    if (amq__gcs_check(f, &diag) != AMQ_OK)
        fail_msg("built filter fails its check: %s", diag.message);
    return f;
}

static amq_gcs_params params_with(uint64_t range, amq_gcs_code code, uint64_t divisor_or_bits,
                                  uint64_t index_entries)
{
    amq_gcs_params p;
    amq_gcs_params_init(&p);
    amq_hasher_xxh3(&p.hasher, seed);
    p.range = range;
    p.code = code;
    if (code == AMQ_GCS_CODE_RICE)
        p.rice_bits = (uint32_t)divisor_or_bits;
    if (code == AMQ_GCS_CODE_GOLOMB)
        p.divisor = divisor_or_bits;
    p.index_entries = index_entries;
    return p;
}

/* Hashes of keys 0 .. n-1 of set `set` under the test seed (xxh3 with the
 * test seed, as params_with's hasher). */
static uint64_t *key_hashes(uint64_t set, uint64_t first, size_t n)
{
    amq_hasher h;
    amq_hasher_xxh3(&h, seed);
    uint64_t *hashes = malloc(n * sizeof *hashes);
    assert_non_null(hashes);
    for (size_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, set, first + i);
        hashes[i] = amq_hash64(&h, &key, sizeof key);
    }
    return hashes;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct values of n distinct hashes in a universe of n·M
 * (multiply-high), counted here independently of the library. */
static uint64_t distinct_values(const uint64_t *hashes, size_t n, uint64_t range)
{
    uint64_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint64_t)(((unsigned __int128)hashes[i] * ((unsigned __int128)n * range)) >> 64);
    qsort(v, n, sizeof *v, compare_u64);
    uint64_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += i == 0 || v[i] != v[i - 1];
    free(v);
    return d;
}

/* The string value of "key" at or after from in a JSON text, copied into
 * out; returns a pointer past it, or NULL. */
static const char *json_string(const char *from, const char *key, char *out, size_t size)
{
    char pattern[64];
    if (strlen(key) > 60)
        fail_msg("JSON key %s is too long", key);
    snprintf(pattern, sizeof pattern, "\"%.60s\"", key);
    const char *p = strstr(from, pattern);
    if (!p)
        return NULL;
    p = strchr(p + strlen(pattern), '"');
    if (!p)
        return NULL;
    const char *end = strchr(p + 1, '"');
    size_t len = (size_t)(end - p - 1);
    if (len >= size)
        fail_msg("JSON string for %s is longer than %zu", key, size);
    memcpy(out, p + 1, len);
    out[len] = 0;
    return end + 1;
}

/* The number after "key": at or after from. */
static uint64_t json_number(const char *from, const char *key)
{
    char pattern[64];
    if (strlen(key) > 60)
        fail_msg("JSON key %s is too long", key);
    snprintf(pattern, sizeof pattern, "\"%.60s\"", key);
    const char *p = strstr(from, pattern);
    if (!p)
        fail_msg("JSON has no %s", key);
    p = strchr(p + strlen(pattern), ':');
    return strtoull(p + 1, NULL, 10);
}

static void hex_of(char *out, const uint8_t *bytes, size_t len)
{
    amq_test_hex(out, bytes, len);
}

/* ---- the article's worked example --------------------------------------------------- */

static void test_article_example(void **state)
{
    (void)state;
    char *json = amq_test_read_data("gcs/gcs-seed-example.json", NULL);
    enum { WORDS = 26 };
    char words[WORDS][16];
    const void *keys[WORDS];
    size_t lens[WORDS];
    const char *p = strstr(json, "\"words\"");
    assert_non_null(p);
    for (int i = 0; i < WORDS; i++) {
        p = strchr(p + (i ? 1 : strlen("\"words\"")), '"');
        const char *end = strchr(p + 1, '"');
        memcpy(words[i], p + 1, (size_t)(end - p - 1));
        words[i][end - p - 1] = 0;
        keys[i] = words[i];
        lens[i] = strlen(words[i]);
        p = end;
    }
    assert_string_equal(words[0], "alpha");
    assert_string_equal(words[25], "zulu");
    assert_int_equal(json_number(json, "N"), WORDS);
    uint64_t range = json_number(json, "P"); /* the article calls M "P" */
    assert_int_equal(range, 64);

    /* Each word's value, by the article's rule, from the digest computed
     * here and through amq_hash64's MD5 convention. */
    const char *hashes = strstr(json, "\"hashes\"");
    amq_hasher md5;
    amq_hasher_md5(&md5);
    for (int i = 0; i < WORDS; i++) {
        uint8_t digest[16];
        amq_md5(digest, words[i], lens[i]);
        uint32_t low = (uint32_t)digest[12] << 24 | (uint32_t)digest[13] << 16 |
                       (uint32_t)digest[14] << 8 | digest[15];
        uint64_t expected = json_number(hashes, words[i]);
        assert_int_equal(low % (WORDS * range), expected);
        assert_int_equal((amq_hash64(&md5, words[i], lens[i]) & 0xffffffffu) % (WORDS * range),
                         expected);
    }

    amq_gcs_params params;
    amq_gcs_params_init(&params);
    amq_hasher_md5(&params.hasher);
    params.range = range;
    amq_gcs *f = NULL;
    assert_int_equal(amq_gcs_build(&f, &params, keys, lens, WORDS, NULL), AMQ_OK);
    assert_int_equal(amq_gcs_rice_bits(f), 6);
    assert_int_equal(amq_gcs_keys(f), WORDS);
    assert_int_equal(amq_gcs_universe(f), WORDS * range);
    const uint8_t *stream;
    uint64_t bits;
    amq_gcs_stream(&stream, &bits, f);
    assert_int_equal(bits, json_number(json, "bit_length"));
    char expected_bits[256], actual_bits[256];
    assert_non_null(json_string(json, "bits", expected_bits, sizeof expected_bits));
    for (uint64_t i = 0; i < bits; i++)
        actual_bits[i] = (char)('0' + ((stream[i / 8] >> (7 - i % 8)) & 1));
    actual_bits[bits] = 0;
    assert_string_equal(actual_bits, expected_bits);
    char expected_hex[128], actual_hex[128];
    assert_non_null(json_string(json, "padded_bytes_hex", expected_hex, sizeof expected_hex));
    hex_of(actual_hex, stream, (size_t)amq_gcs_stream_bytes(f));
    assert_string_equal(actual_hex, expected_hex);
    for (int i = 0; i < WORDS; i++)
        assert_true(amq_gcs_contains(f, words[i], lens[i]));
    amq_gcs_free(f);

    /* The same through the generic handle, exported raw. */
    amq_filter *g = NULL;
    amq_diag diag = { .message = "" };
    if (amq_build(&g, "gcs hash=md5 range=64", keys, lens, WORDS, &diag) != AMQ_OK)
        fail_msg("build: %s", diag.message);
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    assert_int_equal(amq_export(&raw, &raw_len, g, "raw", &diag), AMQ_OK);
    hex_of(actual_hex, raw, raw_len);
    assert_string_equal(actual_hex, expected_hex);
    free(raw);
    for (int i = 0; i < WORDS; i++)
        assert_int_equal(amq_contains(g, words[i], lens[i]), 1);
    amq_free(g);
    free(json);
}

/* ---- BIP158 ----------------------------------------------------------------------- */

typedef struct bip158_vector {
    uint64_t height, n;
    uint8_t key[16];
    char filter_hex[4096];
    size_t count;       /* elements */
    uint8_t **elements; /* decoded */
    size_t *lens;
} bip158_vector;

/* Parse one line of bip158-elements.jsonl. */
static void parse_vector(bip158_vector *v, const char *line)
{
    char text[4096];
    v->height = json_number(line, "height");
    v->n = json_number(line, "n");
    assert_non_null(json_string(line, "siphash_key_hex", text, sizeof text));
    assert_int_equal(amq_test_unhex(v->key, sizeof v->key, text), 16);
    assert_non_null(json_string(line, "filter_hex", v->filter_hex, sizeof v->filter_hex));
    const char *p = strstr(line, "\"elements_hex\"");
    assert_non_null(p);
    p = strchr(p, '[');
    const char *close = strchr(p, ']');
    v->count = 0;
    v->elements = NULL;
    v->lens = NULL;
    for (const char *q = strchr(p, '"'); q && q < close; q = strchr(q + 1, '"')) {
        const char *end = strchr(q + 1, '"');
        size_t digits = (size_t)(end - q - 1);
        v->elements = realloc(v->elements, (v->count + 1) * sizeof *v->elements);
        v->lens = realloc(v->lens, (v->count + 1) * sizeof *v->lens);
        assert_true(digits < sizeof text);
        memcpy(text, q + 1, digits);
        text[digits] = 0;
        v->elements[v->count] = malloc(digits / 2 + 1);
        long len = amq_test_unhex(v->elements[v->count], digits / 2 + 1, text);
        assert_true(len >= 0);
        v->lens[v->count++] = (size_t)len;
        q = end;
    }
}

static void free_vector(bip158_vector *v)
{
    for (size_t i = 0; i < v->count; i++)
        free(v->elements[i]);
    free(v->elements);
    free(v->lens);
}

/* Every element matches f, one by one and as a batch; match-any too. */
static void expect_elements_match(const amq_gcs *f, const bip158_vector *v, const char *what)
{
    for (size_t i = 0; i < v->count; i++)
        if (!amq_gcs_contains(f, v->elements[i], v->lens[i]))
            fail_msg("height %llu (%s): element %zu does not match", (unsigned long long)v->height,
                     what, i);
    uint8_t *results = calloc(v->count + 1, sizeof *results);
    assert_int_equal(
        amq_gcs_contains_many(results, f, (const void *const *)v->elements, v->lens, v->count),
        AMQ_OK);
    for (size_t i = 0; i < v->count; i++)
        if (!results[i])
            fail_msg("height %llu (%s): element %zu not matched in a batch",
                     (unsigned long long)v->height, what, i);
    assert_int_equal(amq_gcs_contains_any(f, (const void *const *)v->elements, v->lens, v->count),
                     v->count > 0);
    free(results);
}

static void test_bip158_vectors(void **state)
{
    (void)state;
    char *text = amq_test_read_data("gcs/bip158-elements.jsonl", NULL);
    int vectors = 0, empty = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        bip158_vector v;
        parse_vector(&v, line);
        assert_int_equal(v.count, v.n);
        amq_gcs_params params;
        amq_gcs_params_bip158(&params, v.key);
        amq_gcs *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_gcs_build(&f, &params, (const void *const *)v.elements, v.lens, v.count, &diag) !=
            AMQ_OK)
            fail_msg("height %llu: %s", (unsigned long long)v.height, diag.message);
        assert_int_equal(amq_gcs_keys(f), v.n);
        uint8_t *bytes = NULL;
        size_t len = 0;
        assert_int_equal(amq_gcs_bip158_serialize(&bytes, &len, f, NULL), AMQ_OK);
        char *hex = malloc(2 * len + 1);
        hex_of(hex, bytes, len);
        if (strcmp(hex, v.filter_hex) != 0)
            fail_msg("height %llu: built %s, expected %s", (unsigned long long)v.height, hex,
                     v.filter_hex);
        expect_elements_match(f, &v, "built");
        amq_gcs_free(f);

        /* filter_hex itself, decoded. */
        uint8_t *filter = malloc(strlen(v.filter_hex) / 2 + 1);
        long filter_len = amq_test_unhex(filter, strlen(v.filter_hex) / 2 + 1, v.filter_hex);
        assert_true(filter_len > 0);
        if (amq_gcs_from_bip158(&f, v.key, filter, (size_t)filter_len, &diag) != AMQ_OK)
            fail_msg("height %llu: from_bip158: %s", (unsigned long long)v.height, diag.message);
        assert_int_equal(amq_gcs_keys(f), v.n);
        assert_int_equal(amq_gcs_range(f), AMQ_GCS_BIP158_RANGE);
        assert_int_equal(amq_gcs_rice_bits(f), AMQ_GCS_BIP158_RICE_BITS);
        expect_elements_match(f, &v, "decoded");
        assert_int_equal(amq__gcs_check(f, &diag), AMQ_OK);
        amq_gcs_free(f);

        /* The generic handle: the spec's bip158-key and the bip158 export. */
        char spec[128], key_hex[33];
        hex_of(key_hex, v.key, 16);
        snprintf(spec, sizeof spec, "gcs bip158-key=%s", key_hex);
        amq_filter *g = NULL;
        if (amq_build(&g, spec, (const void *const *)v.elements, v.lens, v.count, &diag) != AMQ_OK)
            fail_msg("height %llu: %s: %s", (unsigned long long)v.height, spec, diag.message);
        uint8_t *exported = NULL;
        size_t exported_len = 0;
        assert_int_equal(amq_export(&exported, &exported_len, g, "bip158", &diag), AMQ_OK);
        assert_int_equal(exported_len, len);
        assert_memory_equal(exported, bytes, len);
        free(exported);
        amq_free(g);

        if (v.n == 0) {
            assert_string_equal(hex, "00");
            empty++;
        }
        free(hex);
        free(bytes);
        free(filter);
        free_vector(&v);
        vectors++;
    }
    assert_int_equal(vectors, 10);
    assert_int_equal(empty, 1);
    free(text);
}

/* BIP158 input that is not a filter is refused. */
static void test_bip158_refusals(void **state)
{
    (void)state;
    uint8_t key[16] = { 0 };
    amq_gcs *f = (amq_gcs *)&f;
    amq_diag diag = { .message = "" };
    static const struct {
        const char *hex;
        const char *fragment;
    } cases[] = {
        { "", "CompactSize" },           { "fd0100", "shortest form" }, /* 1 as three bytes */
        { "fd", "CompactSize" },                                        /* cut off */
        { "01", "cannot hold" },                                        /* one value, no stream */
        { "0074a170", "past its" },                                     /* no values but a stream */
        { "0174a17000", "past its" },                                   /* a byte too many */
        { "0174a171", "padding" },                                      /* a padding bit set */
        { "05ff", "cut off" },                                          /* a unary run to the end */
        { "ff0000000001000000", "" },                                   /* 2^32 codes in no bytes */
        { "fe00000100", "cannot hold" }, /* 65536 codes in no bytes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t bytes[32];
        long len = amq_test_unhex(bytes, sizeof bytes, cases[i].hex);
        assert_true(len >= 0);
        f = (amq_gcs *)&f;
        int status = amq_gcs_from_bip158(&f, key, bytes, (size_t)len, &diag);
        if (status != AMQ_ECORRUPT || !strstr(diag.message, cases[i].fragment))
            fail_msg("%s: status %d '%s', expected AMQ_ECORRUPT with '%s'", cases[i].hex, status,
                     diag.message, cases[i].fragment);
        assert_null(f);
    }
    /* The real block 2 filter, which decodes. */
    uint8_t good[4];
    assert_int_equal(amq_test_unhex(good, sizeof good, "0174a170"), 4);
    assert_int_equal(amq_gcs_from_bip158(&f, key, good, 4, &diag), AMQ_OK);
    assert_int_equal(amq_gcs_keys(f), 1);
    amq_gcs_free(f);
}

/* ---- keys are a set; collisions -------------------------------------------------- */

static void test_duplicates_count_once(void **state)
{
    (void)state;
    enum { N = 5000 };
    /* Keys 0 .. N-1, each given three times, in a shuffled order. */
    amq_test_key *keys = malloc(3 * N * sizeof *keys);
    const void **pointers = malloc(3 * N * sizeof *pointers);
    size_t *lens = malloc(3 * N * sizeof *lens);
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed);
    for (size_t i = 0; i < 3 * N; i++)
        keys[i] = amq_test_make_key(seed, 0, i % N);
    for (size_t i = 3 * N - 1; i > 0; i--) {
        size_t j = (size_t)amq_test_below(&rng, i + 1);
        amq_test_key t = keys[i];
        keys[i] = keys[j];
        keys[j] = t;
    }
    for (size_t i = 0; i < 3 * N; i++) {
        pointers[i] = &keys[i];
        lens[i] = sizeof keys[i];
    }
    amq_gcs_params params = params_with(1024, AMQ_GCS_CODE_AUTO, 0, 0);
    amq_gcs *f = NULL;
    assert_int_equal(amq_gcs_build(&f, &params, pointers, lens, 3 * N, NULL), AMQ_OK);
    assert_int_equal(amq_gcs_keys(f), N);
    assert_int_equal(amq_gcs_universe(f), (uint64_t)N * 1024);
    for (size_t i = 0; i < 3 * N; i++)
        assert_true(amq_gcs_contains(f, &keys[i], sizeof keys[i]));
    /* The same keys once each make the same stream. */
    uint64_t *hashes = key_hashes(0, 0, N);
    amq_gcs *once = build_hashes(&params, hashes, N);
    const uint8_t *a, *b;
    uint64_t a_bits, b_bits;
    amq_gcs_stream(&a, &a_bits, f);
    amq_gcs_stream(&b, &b_bits, once);
    assert_int_equal(a_bits, b_bits);
    assert_memory_equal(a, b, (size_t)amq_gcs_stream_bytes(f));
    amq_gcs_free(once);
    amq_gcs_free(f);
    free(hashes);
    free(keys);
    free(pointers);
    free(lens);
}

static void test_colliding_values_are_kept(void **state)
{
    (void)state;
    /* Two distinct hashes, both reduced to value 0 in [0, 2·2): a zero
     * gap. Rice with P = 1: value 0 is "0 0", twice: 4 bits, all zero. */
    uint64_t hashes[] = { 1, 2 };
    amq_gcs_params params = params_with(2, AMQ_GCS_CODE_AUTO, 0, AMQ_GCS_NO_INDEX);
    amq_gcs *f = build_hashes(&params, hashes, 2);
    assert_int_equal(amq_gcs_keys(f), 2);
    assert_int_equal(amq_gcs_distinct_values(f), 1);
    assert_int_equal(amq_gcs_stream_bits(f), 4);
    const uint8_t *stream;
    amq_gcs_stream(&stream, NULL, f);
    assert_int_equal(stream[0], 0);
    assert_true(amq_gcs_contains_hash(f, 1));
    assert_true(amq_gcs_contains_hash(f, 2));
    assert_true(amq_gcs_contains_hash(f, 3));           /* value 0 too: a false positive */
    assert_false(amq_gcs_contains_hash(f, UINT64_MAX)); /* value 3 */
    assert_true(amq_gcs_expected_fpr(f) == 0.25);
    amq_gcs_free(f);

    /* At M = 2 about N/4 of the values collide; every key stays found and
     * the distinct count is the one computed here. */
    enum { N = 20000 };
    uint64_t *many = key_hashes(0, 0, N);
    params.index_entries = 0;
    f = build_hashes(&params, many, N);
    uint64_t d = distinct_values(many, N, 2);
    assert_int_equal(amq_gcs_distinct_values(f), d);
    assert_true(d < N - N / 8);
    for (size_t i = 0; i < N; i++)
        assert_true(amq_gcs_contains_hash(f, many[i]));
    amq_gcs_free(f);
    free(many);
}

/* Hashes that share their top 40 bits (crafted, or from a poor hash): the
 * sort's insertion-sort finish gives up on them and sorts them fully;
 * the filter is the same as from any order of them. */
static void test_hashes_sharing_top_bits(void **state)
{
    (void)state;
    enum { N = 6000 };
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed);
    uint64_t *hashes = malloc(2 * N * sizeof *hashes);
    for (size_t i = 0; i < N; i++)
        hashes[i] = 0xabcdef0123ull << 24 | (amq_test_next(&rng) >> 40);
    memcpy(hashes + N, hashes, N * sizeof *hashes); /* each twice */
    uint64_t *sorted = malloc(2 * N * sizeof *sorted);
    memcpy(sorted, hashes, 2 * N * sizeof *hashes);
    qsort(sorted, 2 * N, sizeof *sorted, compare_u64);
    size_t distinct = 0;
    for (size_t i = 0; i < 2 * N; i++)
        distinct += i == 0 || sorted[i] != sorted[i - 1];
    amq_gcs_params params = params_with(1 << 20, AMQ_GCS_CODE_AUTO, 0, 0);
    amq_gcs *f = build_hashes(&params, hashes, 2 * N);
    amq_gcs *g = build_hashes(&params, sorted, 2 * N);
    assert_int_equal(amq_gcs_keys(f), distinct);
    assert_int_equal(amq_gcs_stream_bits(f), amq_gcs_stream_bits(g));
    const uint8_t *a, *b;
    amq_gcs_stream(&a, NULL, f);
    amq_gcs_stream(&b, NULL, g);
    assert_memory_equal(a, b, (size_t)amq_gcs_stream_bytes(f));
    uint8_t *results = malloc(2 * N * sizeof *results);
    assert_int_equal(amq_gcs_contains_many_hash(results, f, hashes, 2 * N), AMQ_OK);
    for (size_t i = 0; i < 2 * N; i++)
        assert_true(results[i] && amq_gcs_contains_hash(f, hashes[i]));
    free(results);
    amq_gcs_free(f);
    amq_gcs_free(g);
    free(hashes);
    free(sorted);
}

/* ---- codes ------------------------------------------------------------------------ */

/* The expected bits of one code for divisor D when gaps are geometric
 * with P(gap = g) = (1 - t) t^g, t = exp(-1/M): summed here term by term. */
static double summed_code_bits(uint64_t range, uint64_t divisor)
{
    double t = exp(-1.0 / (double)range), p = 1 - t, bits = 0, mass = 0;
    unsigned b = 0;
    while (((uint64_t)1 << b) < divisor)
        b++;
    uint64_t u = ((uint64_t)1 << b) - divisor;
    for (uint64_t g = 0; mass < 1 - 1e-12; g++) {
        uint64_t r = g % divisor;
        double length = (double)(g / divisor) + 1 + (double)b - (r < u ? 1 : 0);
        bits += p * length;
        mass += p;
        p *= t;
    }
    return bits;
}

static void test_best_divisors(void **state)
{
    (void)state;
    static const uint64_t ranges[] = { 2, 3, 5, 10, 64, 100, 256, 1000, 1024 };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        uint64_t m = ranges[i];
        uint64_t best = 1;
        double best_bits = summed_code_bits(m, 1);
        for (uint64_t d = 2; d <= 2 * m; d++) {
            double bits = summed_code_bits(m, d);
            if (bits < best_bits - 1e-9) {
                best_bits = bits;
                best = d;
            }
        }
        uint64_t chosen = amq_gcs_best_divisor(m);
        double chosen_bits = summed_code_bits(m, chosen);
        print_message("M = %llu: best divisor %llu (%.4f bits), brute force %llu (%.4f)\n",
                      (unsigned long long)m, (unsigned long long)chosen, chosen_bits,
                      (unsigned long long)best, best_bits);
        /* The two gap models differ slightly; the sizes must agree. */
        assert_true(chosen_bits <= best_bits + 0.002);
        uint32_t p = amq_gcs_best_rice_bits(m);
        for (uint32_t q = 0; q < 16; q++)
            assert_true(summed_code_bits(m, (uint64_t)1 << p) <=
                        summed_code_bits(m, (uint64_t)1 << q) + 0.002);
        assert_true(fabs(amq_gcs_expected_code_bits(m, chosen) - chosen_bits) < 0.01);
    }
    /* The known optimum for Rice: 2^P near M / 1.5. */
    assert_int_equal(amq_gcs_best_rice_bits(256), 7);
    assert_int_equal(amq_gcs_best_rice_bits(1024), 9);
    assert_int_equal(amq_gcs_best_rice_bits(AMQ_GCS_BIP158_RANGE), 19);
    uint64_t big = amq_gcs_best_divisor((uint64_t)1 << 40);
    assert_true(fabs((double)big / 0x1p40 - log(2)) < 1e-6);
    assert_int_equal(amq_gcs_best_divisor(1), 0);
    assert_true(amq_gcs_expected_code_bits(1, 1) == 0);
}

/* Batch matching answers as single queries do; match-any. */
static void expect_batch_agrees(const amq_gcs *f, const uint64_t *present, size_t n)
{
    enum { Q = 30000 };
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0xba7c4);
    uint64_t *queries = malloc(Q * sizeof *queries);
    uint8_t *results = malloc(Q * sizeof *results);
    for (size_t i = 0; i < Q; i++)
        queries[i] = i % 3 == 0 ? present[amq_test_below(&rng, n)] : amq_test_next(&rng);
    queries[Q - 1] = queries[0]; /* a repeated query */
    assert_int_equal(amq_gcs_contains_many_hash(results, f, queries, Q), AMQ_OK);
    size_t hits = 0;
    /* Every single query, or every 100th when each decodes much of it. */
    size_t step = amq_gcs_index_entries(f) >= n / 1000 ? 1 : 100;
    for (size_t i = 0; i < Q; i++) {
        if (i % step == 0 && results[i] != amq_gcs_contains_hash(f, queries[i]))
            fail_msg("query %zu: batch %d, single %d", i, results[i], !results[i]);
        hits += results[i];
    }
    assert_true(hits >= Q / 3);
    assert_int_equal(amq_gcs_contains_any_hash(f, queries, Q), 1);
    /* The absent queries that answer no, alone: match-any says none. */
    size_t misses = 0;
    for (size_t i = 0; i < Q; i++)
        if (!results[i])
            queries[misses++] = queries[i];
    assert_int_equal(amq_gcs_contains_any_hash(f, queries, misses), 0);
    assert_int_equal(amq_gcs_contains_any_hash(f, queries, 0), 0);
    assert_int_equal(amq_gcs_contains_many_hash(results, f, queries, 0), AMQ_OK);
    free(queries);
    free(results);
}

/* The continuous stream of f's values: f's own, or converted from the
 * bucketed layout (as the exports do); *owned is what to free. */
static const uint8_t *continuous_stream(const amq_gcs *f, size_t *len, uint8_t **owned)
{
    const uint8_t *stream;
    uint64_t bits;
    *owned = NULL;
    if (f->bucketed) {
        assert_int_equal(amq__gcs_continuous_stream(f, owned, &bits), AMQ_OK);
        stream = *owned;
    } else {
        amq_gcs_stream(&stream, &bits, f);
    }
    *len = (size_t)(bits / 8 + (bits % 8 != 0));
    return stream;
}

static void expect_round_trip_in(size_t N, amq_gcs_code code, uint64_t range, uint64_t arg,
                                 uint64_t expected_divisor, amq_gcs_layout layout)
{
    uint64_t *hashes = key_hashes(0, 0, N);
    uint64_t *absent = key_hashes(1, 0, N);
    amq_gcs_params params = params_with(range, code, arg, 0);
    params.layout = layout;
    amq_gcs *f = build_hashes(&params, hashes, N);
    /* The automatic layout buckets a Rice code, and its automatic code is
     * the best Rice code for M. */
    uint64_t divisor = expected_divisor;
    if (layout == AMQ_GCS_LAYOUT_AUTO && code == AMQ_GCS_CODE_AUTO)
        divisor = (uint64_t)1 << amq_gcs_best_rice_bits(range);
    bool rice = (divisor & (divisor - 1)) == 0 && divisor <= ((uint64_t)1 << 56);
    assert_int_equal(f->bucketed, layout == AMQ_GCS_LAYOUT_AUTO && rice);
    assert_int_equal(amq_gcs_divisor(f), divisor);
    params.code = AMQ_GCS_CODE_GOLOMB;
    params.divisor = divisor;
    for (size_t i = 0; i < N; i++)
        if (!amq_gcs_contains_hash(f, hashes[i]))
            fail_msg("code %d, M = %llu, D = %llu: key %zu lost", code, (unsigned long long)range,
                     (unsigned long long)expected_divisor, i);
    uint64_t positives = 0;
    for (size_t i = 0; i < N; i++)
        positives += amq_gcs_contains_hash(f, absent[i]);
    double expected = N * amq_gcs_expected_fpr(f);
    assert_true(fabs((double)positives - expected) <= 4 * sqrt(expected) + 1);
    /* A decoded copy of the (continuous) stream answers the same. */
    size_t len;
    uint8_t *owned;
    const uint8_t *stream = continuous_stream(f, &len, &owned);
    amq_gcs *copy = NULL;
    amq_diag diag = { .message = "" };
    if (amq_gcs_from_stream(&copy, &params, N, stream, len, &diag) != AMQ_OK)
        fail_msg("from_stream: %s", diag.message);
    free(owned);
    for (size_t i = 0; i < N; i++) {
        assert_true(amq_gcs_contains_hash(copy, hashes[i]));
        assert_int_equal(amq_gcs_contains_hash(copy, absent[i]),
                         amq_gcs_contains_hash(f, absent[i]));
    }
    amq_gcs_free(copy);
    /* Batches too: with M = 2^40 a value and a query number do not fit one
     * word together, and the sort carries the numbers apart. */
    expect_batch_agrees(f, hashes, N);
    amq_gcs_free(f);
    free(hashes);
    free(absent);
}

/* In both layouts: the continuous one, and the automatic one (bucketed
 * for a Rice code). */
static void expect_round_trip_of(size_t N, amq_gcs_code code, uint64_t range, uint64_t arg,
                                 uint64_t expected_divisor)
{
    expect_round_trip_in(N, code, range, arg, expected_divisor, AMQ_GCS_LAYOUT_CONTINUOUS);
    expect_round_trip_in(N, code, range, arg, expected_divisor, AMQ_GCS_LAYOUT_AUTO);
}

static void expect_round_trip(amq_gcs_code code, uint64_t range, uint64_t arg,
                              uint64_t expected_divisor)
{
    expect_round_trip_of(10000, code, range, arg, expected_divisor);
}

static void test_codes_round_trip(void **state)
{
    (void)state;
    expect_round_trip(AMQ_GCS_CODE_AUTO, 1024, 0, 1024);
    expect_round_trip(AMQ_GCS_CODE_AUTO, 1000, 0, 1000); /* Golomb D = M */
    expect_round_trip(AMQ_GCS_CODE_RICE, 1024, 7, 128);
    expect_round_trip(AMQ_GCS_CODE_RICE, 64, 0, 1); /* unary only */
    expect_round_trip(AMQ_GCS_CODE_RICE, 64, 20, (uint64_t)1 << 20);
    expect_round_trip(AMQ_GCS_CODE_GOLOMB, 256, 3, 3);
    expect_round_trip(AMQ_GCS_CODE_GOLOMB, 256, 177, 177);
    expect_round_trip(AMQ_GCS_CODE_GOLOMB, 300, 301, 301);
    expect_round_trip(AMQ_GCS_CODE_BEST_GOLOMB, 256, 0, 177);
    expect_round_trip(AMQ_GCS_CODE_BEST_RICE, 256, 0, 128);
    expect_round_trip(AMQ_GCS_CODE_BEST_GOLOMB, AMQ_GCS_BIP158_RANGE, 0,
                      amq_gcs_best_divisor(AMQ_GCS_BIP158_RANGE));
    /* Divisors past the fast cursor's 56 remainder bits: every code
     * through the checked reader (fewer keys: slower). */
    expect_round_trip_of(1000, AMQ_GCS_CODE_GOLOMB, (uint64_t)1 << 40, ((uint64_t)1 << 57) + 3,
                         ((uint64_t)1 << 57) + 3);
}

/* The fast cursor of bits.h decodes what the checked reader decodes. */
static void test_fast_cursor_matches_reader(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed);
    static const uint64_t divisors[] = {
        1,
        2,
        3,
        5,
        64,
        177,
        1000,
        784931,
        (uint64_t)1 << 56,
        ((uint64_t)1 << 56) + 1,
        ((uint64_t)1 << 63) + 12345,
    };
    enum { VALUES = 3000 };
    uint64_t values[VALUES];
    for (size_t k = 0; k < sizeof divisors / sizeof divisors[0]; k++) {
        uint64_t d = divisors[k];
        amq__bitwriter w;
        amq__bitwriter_init(&w);
        for (size_t i = 0; i < VALUES; i++) {
            /* Mostly quotients 0..3; some of 40..200 (unary runs longer
             * than a window). */
            uint64_t q = amq_test_below(&rng, 10) == 0 ? 40 + amq_test_below(&rng, 160)
                                                       : amq_test_below(&rng, 4);
            if (d > ((uint64_t)1 << 56))
                q = d > ((uint64_t)1 << 62) ? 0 : amq_test_below(&rng, 2);
            values[i] = q * d + amq_test_below(&rng, d);
            amq__bitwriter_put_golomb(&w, values[i], d);
        }
        uint8_t *bytes;
        size_t len;
        uint64_t bits;
        assert_int_equal(amq__bitwriter_finish(&w, &bytes, &len, &bits), AMQ_OK);
        uint8_t *padded = calloc(len + AMQ__GOLOMB_SLACK, 1);
        memcpy(padded, bytes, len);
        amq__golomb_code code;
        amq__golomb_code_init(&code, d);
        for (int rice = 0; rice <= ((d & (d - 1)) == 0); rice++) {
            amq__golomb_cursor c;
            amq__golomb_cursor_init(&c, padded, bits, 0);
            amq__bitreader r;
            amq__bitreader_init(&r, bytes, bits);
            for (size_t i = 0; i < VALUES; i++) {
                uint64_t fast = 0, checked = 0;
                assert_int_equal(amq__golomb_cursor_next(&c, &code, rice, &fast), AMQ_OK);
                assert_int_equal(amq__bitreader_get_golomb(&r, d, &checked), AMQ_OK);
                if (fast != checked || fast != values[i] || c.position != r.position)
                    fail_msg("D = %llu, value %zu: cursor %llu at bit %llu, reader %llu at %llu",
                             (unsigned long long)d, i, (unsigned long long)fast,
                             (unsigned long long)c.position, (unsigned long long)checked,
                             (unsigned long long)r.position);
            }
            assert_int_equal(c.position, bits);
            /* A cursor placed mid-stream decodes on from there. */
            amq__golomb_cursor_seek(&c, 0);
            uint64_t skipped;
            for (size_t i = 0; i < VALUES / 2; i++)
                amq__golomb_cursor_next(&c, &code, rice, &skipped);
            uint64_t middle = c.position, next;
            amq__golomb_cursor_init(&c, padded, bits, middle);
            assert_int_equal(amq__golomb_cursor_next(&c, &code, rice, &next), AMQ_OK);
            assert_int_equal(next, values[VALUES / 2]);
        }
        /* A stream cut short: the checked path reports it. */
        amq__golomb_cursor c;
        amq__golomb_cursor_init(&c, padded, 3, 0);
        uint64_t v = 0;
        if (d > ((uint64_t)1 << 56))
            assert_int_equal(amq__golomb_cursor_next(&c, &code, false, &v), AMQ_ECORRUPT);
        free(padded);
        free(bytes);
    }
}

/* ---- the index, batch matching ------------------------------------------------------ */

/* Every present key answers yes and every absent key as expected says,
 * by one batch and by single queries: all of them, or every step-th for
 * filters whose single queries decode much of the stream. */
static void expect_answers(const amq_gcs *f, const uint64_t *present, const uint64_t *absent,
                           const bool *expected, size_t n, size_t step)
{
    uint64_t s = amq_gcs_index_entries(f);
    uint8_t *results = malloc(n * sizeof *results);
    assert_int_equal(amq_gcs_contains_many_hash(results, f, present, n), AMQ_OK);
    for (size_t i = 0; i < n; i++)
        if (!results[i])
            fail_msg("S = %llu: key %zu not matched in a batch", (unsigned long long)s, i);
    assert_int_equal(amq_gcs_contains_many_hash(results, f, absent, n), AMQ_OK);
    for (size_t i = 0; i < n; i++)
        if (results[i] != expected[i])
            fail_msg("S = %llu: absent key %zu answers %d in a batch", (unsigned long long)s, i,
                     results[i]);
    for (size_t i = 0; i < n; i += step) {
        if (!amq_gcs_contains_hash(f, present[i]))
            fail_msg("S = %llu: key %zu lost", (unsigned long long)s, i);
        if (amq_gcs_contains_hash(f, absent[i]) != expected[i])
            fail_msg("S = %llu: absent key %zu answers otherwise", (unsigned long long)s, i);
    }
    free(results);
}

static void test_index_changes_no_answer(void **state)
{
    (void)state;
    enum { N = 100000 };
    uint64_t *present = key_hashes(0, 0, N);
    uint64_t *absent = key_hashes(1, 0, N);
    static const uint64_t sizes[] = { AMQ_GCS_NO_INDEX, 0, 1, 32, N / 64, N / 16, N, 10 * N };
    amq_gcs_params params = params_with(256, AMQ_GCS_CODE_AUTO, 0, AMQ_GCS_NO_INDEX);
    params.layout = AMQ_GCS_LAYOUT_CONTINUOUS;
    /* What every filter must answer for the absent keys: whether their
     * values are among the stored ones, found here by a binary search. */
    uint64_t universe = (uint64_t)N * 256;
    uint64_t *stored = malloc(N * sizeof *stored);
    for (size_t i = 0; i < N; i++)
        stored[i] = (uint64_t)(((unsigned __int128)present[i] * universe) >> 64);
    qsort(stored, N, sizeof *stored, compare_u64);
    bool *expected = malloc(N * sizeof *expected);
    size_t positives = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t v = (uint64_t)(((unsigned __int128)absent[i] * universe) >> 64);
        expected[i] = bsearch(&v, stored, N, sizeof *stored, compare_u64) != NULL;
        positives += expected[i];
    }
    assert_true(positives > 0);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        params.index_entries = sizes[k];
        amq_gcs *f = build_hashes(&params, present, N);
        uint64_t s = amq_gcs_index_entries(f);
        uint64_t want = sizes[k] == AMQ_GCS_NO_INDEX ? 0
                        : sizes[k] == 0              ? N / 128
                        : sizes[k] > N               ? N
                                                     : sizes[k];
        assert_int_equal(s, want);
        if (s == 0)
            assert_int_equal(amq_gcs_index_bytes(f), 0);
        print_message("S = %llu: index %.3f bits/key\n", (unsigned long long)s,
                      (double)amq_gcs_index_bytes(f) * 8 / N);
        expect_answers(f, present, absent, expected, N, s >= N / 1000 ? 1 : s >= 32 ? 50 : 1000);
        /* The default index costs a small fraction of a bit per key. */
        if (sizes[k] == 0)
            assert_true((double)amq_gcs_index_bytes(f) * 8 / N < 0.3);
        amq_gcs_free(f);
    }
    free(stored);
    free(expected);
    free(present);
    free(absent);
}

static void test_batch_matching(void **state)
{
    (void)state;
    enum { N = 50000 };
    uint64_t *present = key_hashes(0, 0, N);
    static const uint64_t sizes[] = { AMQ_GCS_NO_INDEX, 0, N / 4 };
    for (size_t k = 0; k < 3; k++) {
        amq_gcs_params params = params_with(64, AMQ_GCS_CODE_AUTO, 0, sizes[k]);
        amq_gcs *f = build_hashes(&params, present, N);
        expect_batch_agrees(f, present, N);
        amq_gcs_free(f);
    }
    amq_gcs_params params = params_with(100, AMQ_GCS_CODE_BEST_GOLOMB, 0, 0);
    amq_gcs *f = build_hashes(&params, present, N);
    expect_batch_agrees(f, present, N);
    /* Keys, not hashes. */
    amq_test_key keys[300];
    const void *pointers[300];
    size_t lens[300];
    uint8_t results[300];
    amq_test_batch_keys(keys, pointers, lens, 300, seed, 1);
    assert_int_equal(amq_gcs_contains_many(results, f, pointers, lens, 300), AMQ_OK);
    for (size_t i = 0; i < 300; i++) {
        assert_int_equal(results[i], amq_gcs_contains(f, pointers[i], lens[i]));
        if (i % 3)
            assert_true(results[i]);
    }
    assert_int_equal(amq_gcs_contains_any(f, pointers, lens, 300), 1);
    amq_gcs_free(f);
    free(present);
}

/* ---- unions ----------------------------------------------------------------------- */

static void union_in(amq_gcs_layout layout)
{
    enum { N = 100000, Q = 200000 };
    uint64_t *a_keys = key_hashes(0, 0, N);
    uint64_t *b_keys = key_hashes(0, N, N);
    uint64_t *absent = key_hashes(1, 0, Q);
    amq_gcs_params params = params_with(1024, AMQ_GCS_CODE_AUTO, 0, 0);
    params.layout = layout;
    amq_gcs *a = build_hashes(&params, a_keys, N);
    amq_gcs *b = build_hashes(&params, b_keys, N);
    amq_gcs *u = build_hashes(&params, a_keys, N); /* a copy of a, merged with b */
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_gcs_merge(u, b, &diag), AMQ_OK);
    assert_int_equal(amq__gcs_check(u, &diag), AMQ_OK);
    assert_int_equal(amq_gcs_segments(u), 2);
    assert_int_equal(amq_gcs_keys(u), 2 * N);
    assert_int_equal(amq_gcs_universe(u), 2 * (uint64_t)N * 1024);
    uint64_t parts = amq_gcs_stream_bits(a) + amq_gcs_stream_bits(b);
    if (layout == AMQ_GCS_LAYOUT_CONTINUOUS) {
        /* The same codes, but for b's first gap, which now starts from a's
         * last value. */
        assert_true(amq_gcs_stream_bits(u) >= parts);
        assert_true(amq_gcs_stream_bits(u) <= parts + 64);
        assert_int_equal(amq_gcs_index_entries(u),
                         amq_gcs_index_entries(a) + amq_gcs_index_entries(b));
    } else {
        /* b's values fall into buckets that begin elsewhere: about the
         * same size. */
        assert_true(u->bucketed);
        assert_true(fabs((double)amq_gcs_stream_bits(u) - (double)parts) < 0.01 * (double)parts);
    }
    assert_int_equal(amq_gcs_distinct_values(u),
                     amq_gcs_distinct_values(a) + amq_gcs_distinct_values(b));
    for (size_t i = 0; i < N; i++) {
        if (!amq_gcs_contains_hash(u, a_keys[i]) || !amq_gcs_contains_hash(u, b_keys[i]))
            fail_msg("key %zu of a or b lost in the union", i);
    }
    uint8_t *results = malloc(Q * sizeof *results);
    assert_int_equal(amq_gcs_contains_many_hash(results, u, a_keys, N), AMQ_OK);
    for (size_t i = 0; i < N; i++)
        assert_true(results[i]);
    /* The union's FPR is the parts' together: measured on Q absent keys. */
    uint64_t positives = 0;
    assert_int_equal(amq_gcs_contains_many_hash(results, u, absent, Q), AMQ_OK);
    for (size_t i = 0; i < Q; i++) {
        positives += results[i];
        assert_int_equal(results[i], amq_gcs_contains_hash(a, absent[i]) ||
                                         amq_gcs_contains_hash(b, absent[i]));
    }
    double fpr = amq_gcs_expected_fpr(u);
    double fa = amq_gcs_expected_fpr(a), fb = amq_gcs_expected_fpr(b);
    assert_true(fabs(fpr - (1 - (1 - fa) * (1 - fb))) < 1e-12);
    double expected = Q * fpr;
    print_message("union of 2 x %d keys: %llu false positives of %d, expected %.1f\n", N,
                  (unsigned long long)positives, Q, expected);
    assert_true(fabs((double)positives - expected) <= 4 * sqrt(expected * (1 - fpr)));

    /* A union of a union; with an empty filter; with itself. */
    amq_gcs *c = build_hashes(&params, absent, 1000);
    amq_gcs *uc = build_hashes(&params, a_keys, N);
    assert_int_equal(amq_gcs_merge(uc, b, &diag), AMQ_OK);
    assert_int_equal(amq_gcs_merge(uc, c, &diag), AMQ_OK);
    assert_int_equal(amq_gcs_segments(uc), 3);
    for (size_t i = 0; i < N; i += 97)
        assert_true(amq_gcs_contains_hash(uc, a_keys[i]) && amq_gcs_contains_hash(uc, b_keys[i]));
    for (size_t i = 0; i < 1000; i++)
        assert_true(amq_gcs_contains_hash(uc, absent[i]));
    expect_batch_agrees(uc, b_keys, N);
    amq_gcs *empty = build_hashes(&params, NULL, 0);
    amq_gcs *ue = build_hashes(&params, NULL, 0);
    assert_int_equal(amq_gcs_merge(ue, c, &diag), AMQ_OK);
    assert_int_equal(amq_gcs_segments(ue), 1);
    assert_int_equal(amq_gcs_stream_bits(ue), amq_gcs_stream_bits(c));
    amq_gcs_free(ue);
    ue = build_hashes(&params, absent, 1000);
    assert_int_equal(amq_gcs_merge(ue, ue, &diag), AMQ_OK);
    assert_int_equal(amq_gcs_keys(ue), 2000);
    for (size_t i = 0; i < 1000; i++)
        assert_true(amq_gcs_contains_hash(ue, absent[i]));
    /* No BIP158 form for a union. */
    uint8_t *bytes = (uint8_t *)&bytes;
    size_t len = 1;
    assert_int_equal(amq_gcs_bip158_serialize(&bytes, &len, ue, NULL), AMQ_EUNSUPPORTED);
    assert_null(bytes);
    amq_gcs_free(ue);

    /* The segment limit. */
    amq_gcs *chain = build_hashes(&params, absent, 1000);
    while (amq_gcs_segments(chain) < AMQ_GCS_MAX_SEGMENTS)
        assert_int_equal(amq_gcs_merge(chain, c, &diag), AMQ_OK);
    uint64_t chain_bits = amq_gcs_stream_bits(chain);
    assert_int_equal(amq_gcs_merge(chain, c, &diag), AMQ_ERANGE);
    assert_non_null(strstr(diag.message, "segments"));
    /* A refused merge leaves into as it was. */
    assert_int_equal(amq_gcs_segments(chain), AMQ_GCS_MAX_SEGMENTS);
    assert_int_equal(amq_gcs_stream_bits(chain), chain_bits);
    assert_true(amq_gcs_contains_hash(chain, absent[999]));
    amq_gcs_free(chain);

    /* Incompatible parameters are refused, naming what differs. */
    amq_gcs_params other = params_with(512, AMQ_GCS_CODE_AUTO, 0, 0);
    amq_gcs *x = build_hashes(&other, a_keys, 100);
    assert_int_equal(amq_gcs_merge(a, x, &diag), AMQ_EINCOMPATIBLE);
    assert_non_null(strstr(diag.message, "range M"));
    amq_gcs_free(x);
    other = params_with(1024, AMQ_GCS_CODE_RICE, 8, 0);
    x = build_hashes(&other, a_keys, 100);
    assert_int_equal(amq_gcs_merge(a, x, &diag), AMQ_EINCOMPATIBLE);
    assert_non_null(strstr(diag.message, "divisor"));
    amq_gcs_free(x);
    other = params_with(1024, AMQ_GCS_CODE_AUTO, 0, 0);
    other.layout = layout;
    amq_hasher_xxh3(&other.hasher, seed + 1);
    x = build_hashes(&other, a_keys, 100);
    assert_int_equal(amq_gcs_merge(a, x, &diag), AMQ_EINCOMPATIBLE);
    assert_non_null(strstr(diag.message, "hash"));
    amq_gcs_free(x);

    free(results);
    amq_gcs_free(empty);
    amq_gcs_free(uc);
    amq_gcs_free(c);
    amq_gcs_free(u);
    amq_gcs_free(a);
    amq_gcs_free(b);
    free(a_keys);
    free(b_keys);
    free(absent);
}

/* A file of the continuous layout, saved before the bucketed one existed
 * (tests/data/gcs/gcs-v1.amq): it loads, answers the recorded false
 * positives and every key, and saves back the same bytes. */
static void test_old_layout_file(void **state)
{
    (void)state;
    char *path = amq_test_data_path("gcs/gcs-v1.amq");
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (amq_load(&f, path, AMQ_LOAD_MMAP, &diag) != AMQ_OK)
        fail_msg("%s: %s", path, diag.message);
    amq_gcs *g = amq_gcs_unwrap(f);
    assert_false(g->bucketed);
    assert_int_equal(amq_gcs_keys(g), 1000);
    char key[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "golden-%d", i);
        assert_true(amq_contains(f, key, strlen(key)) == 1);
    }
    size_t recorded_len;
    char *recorded = (char *)amq_test_read_data("gcs/gcs-v1.positives", &recorded_len);
    size_t positives = 0, lines = 0;
    for (size_t i = 0; i < recorded_len; i++)
        lines += recorded[i] == '\n';
    for (int i = 1000; i < 101000; i++) {
        snprintf(key, sizeof key, "golden-%d", i);
        if (amq_contains(f, key, strlen(key)) == 1) {
            positives++;
            char line[40];
            snprintf(line, sizeof line, "%s\n", key);
            assert_non_null(strstr(recorded, line));
        }
    }
    assert_int_equal(positives, lines);
    uint8_t *saved = NULL;
    size_t saved_len = 0, file_len = 0;
    assert_int_equal(amq_save_to_memory(&saved, &saved_len, f, NULL), AMQ_OK);
    uint8_t *file = (uint8_t *)amq_test_read_data("gcs/gcs-v1.amq", &file_len);
    assert_int_equal(saved_len, file_len);
    assert_memory_equal(saved, file, file_len);
    free(saved);
    free(file);
    free(recorded);
    amq_free(f);
    free(path);
}

/* A damaged bucketed stream or index is refused by the check a load
 * makes, never read out of bounds: every byte of a small filter's block,
 * flipped in turn (under the sanitizers, any stray read shows). */
static void test_bucketed_damage(void **state)
{
    (void)state;
    enum { N = 3000 };
    uint64_t *hashes = key_hashes(0, 0, N);
    amq_gcs_params params = params_with(256, AMQ_GCS_CODE_AUTO, 0, 0);
    params.bucket_keys = 8;
    params.block_buckets = 4;
    amq_gcs *f = build_hashes(&params, hashes, N);
    assert_true(f->bucketed);
    uint64_t bytes = amq__gcs_payload_bytes(f), refused = 0;
    uint64_t distinct[AMQ_GCS_MAX_SEGMENTS];
    for (uint64_t i = 0; i < bytes; i++) {
        for (unsigned bit = 0; bit < 8; bit += 3) {
            f->owned[i] ^= (uint8_t)(1u << bit);
            int status = amq__gcs_verify_buckets(f, distinct, NULL);
            /* A flip the check lets through makes another valid
             * filter (a code's bits, or a boundary the codes fill
             * exactly either way), which the file's checksum refuses. */
            if (status != AMQ_OK) {
                assert_int_equal(status, AMQ_ECORRUPT);
                refused++;
            }
            f->owned[i] ^= (uint8_t)(1u << bit);
        }
    }
    print_message("bucketed: %llu of %llu flips refused\n", (unsigned long long)refused,
                  (unsigned long long)(3 * bytes));
    assert_true(refused > bytes);
    assert_int_equal(amq__gcs_check(f, NULL), AMQ_OK);
    amq_gcs_free(f);
    free(hashes);
}

static void test_union(void **state)
{
    (void)state;
    union_in(AMQ_GCS_LAYOUT_CONTINUOUS);
    union_in(AMQ_GCS_LAYOUT_AUTO);
}

/* amq_merge of a filter of other_spec (built from three keys) into into
 * answers AMQ_EINCOMPATIBLE with a message holding fragment. */
static void expect_merge_refused(amq_filter *into, const char *other_spec, const char *fragment)
{
    const void *keys[] = { "a", "b", "c" };
    size_t lens[] = { 1, 1, 1 };
    amq_filter *other = NULL;
    assert_int_equal(amq_build(&other, other_spec, keys, lens, 3, NULL), AMQ_OK);
    amq_diag diag = { .message = "" };
    int status = amq_merge(into, other, &diag);
    if (status != AMQ_EINCOMPATIBLE || !strstr(diag.message, fragment))
        fail_msg("merging '%s': status %d '%s', expected AMQ_EINCOMPATIBLE mentioning '%s'",
                 other_spec, status, diag.message, fragment);
    amq_free(other);
}

/* Unions through the generic handle: amq_merge, saved and loaded. */
static void test_generic_merge(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "u.amq");
    enum { N = 3000 };
    amq_test_keys key_set;
    amq_test_keys_make(&key_set, seed, 0, 2 * N);
    amq_filter *a = NULL, *b = NULL;
    assert_int_equal(amq_build(&a, "gcs range=512", key_set.pointers, key_set.lens, N, NULL),
                     AMQ_OK);
    assert_int_equal(
        amq_build(&b, "gcs range=512", key_set.pointers + N, key_set.lens + N, N, NULL), AMQ_OK);
    assert_int_equal(amq_save(b, path, NULL), AMQ_OK);
    amq_free(b);
    assert_int_equal(amq_load(&b, path, AMQ_LOAD_MMAP, NULL), AMQ_OK);
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_merge(a, b, &diag), AMQ_OK);
    amq_free(b);
    for (size_t i = 0; i < 2 * N; i++)
        assert_int_equal(amq_contains(a, &key_set.keys[i], sizeof key_set.keys[i]), 1);
    amq_info info;
    amq_info_get(&info, a);
    assert_int_equal(info.keys, 2 * N);
    assert_int_equal(amq_save(a, path, NULL), AMQ_OK);
    amq_filter *loaded = NULL;
    assert_int_equal(amq_load(&loaded, path, AMQ_LOAD_MMAP, &diag), AMQ_OK);
    amq_test_expect_same_answers(a, loaded, seed, 4 * N);
    /* Merging a merged, mapped filter into itself. */
    assert_int_equal(amq_merge(loaded, loaded, &diag), AMQ_OK);
    for (size_t i = 0; i < 2 * N; i++)
        assert_int_equal(amq_contains(loaded, &key_set.keys[i], sizeof key_set.keys[i]), 1);
    uint8_t *out = NULL;
    size_t len = 0;
    assert_int_equal(amq_export(&out, &len, loaded, "bip158", &diag), AMQ_EUNSUPPORTED);
    assert_non_null(strstr(diag.message, "segments"));
    assert_int_equal(amq_export(&out, &len, loaded, "json", &diag), AMQ_EUNSUPPORTED);
    assert_non_null(strstr(diag.message, "'json'"));
    amq_free(loaded);
    expect_merge_refused(a, "gcs range=256", "range M");
    expect_merge_refused(a, "gcs range=512 divisor=300", "divisor");
    expect_merge_refused(a, "gcs range=512 seed=7", "hash");
    amq_free(a);
    /* A family without exports says so. */
    amq_filter *bloom = NULL;
    assert_int_equal(amq_new(&bloom, "bloom n=10", NULL), AMQ_OK);
    assert_int_equal(amq_export(&out, &len, bloom, "raw", &diag), AMQ_EUNSUPPORTED);
    assert_non_null(strstr(diag.message, "bloom"));
    amq_free(bloom);
    amq_test_keys_free(&key_set);
}

/* ---- save and load ------------------------------------------------------------------ */

static void test_save_and_load(void **state)
{
    char path[AMQ_TEST_PATH_MAX], again[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(again, state, "again.amq");
    static const char *const specs[] = {
        "gcs",
        "gcs range=100 index=200",
        "gcs p=0.001 divisor=best index=700",
        "gcs hash=md5 rice-bits=best",
        "gcs hash=siphash key=000102030405060708090a0b0c0d0e0f",
    };
    enum { N = 20000 };
    amq_test_keys key_set;
    amq_test_keys_make(&key_set, seed, 0, N);
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        amq_filter *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_build(&f, specs[k], key_set.pointers, key_set.lens, N, &diag) != AMQ_OK)
            fail_msg("%s: %s", specs[k], diag.message);
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
        for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
            amq_filter *g = NULL;
            if (amq_load(&g, path, flags, &diag) != AMQ_OK)
                fail_msg("%s: load: %s", specs[k], diag.message);
            assert_string_equal(amq_filter_family(g), "gcs");
            amq_info a, b;
            amq_info_get(&a, f);
            amq_info_get(&b, g);
            assert_int_equal(b.keys, N);
            assert_int_equal(b.memory_bytes, a.memory_bytes);
            assert_true(b.expected_fpr == a.expected_fpr);
            assert_memory_equal(&b.hasher, &a.hasher, sizeof a.hasher);
            assert_int_equal(b.detail_count, a.detail_count);
            assert_memory_equal(b.details, a.details, a.detail_count * sizeof a.details[0]);
            for (size_t i = 0; i < N; i++)
                assert_int_equal(amq_contains(g, &key_set.keys[i], sizeof key_set.keys[i]), 1);
            amq_test_expect_same_answers(f, g, seed, 2 * N);
            assert_int_equal(amq_save(g, again, NULL), AMQ_OK);
            assert_true(amq_test_same_file(path, again));
            amq_free(g);
        }
        amq_free(f);
    }
    /* An empty filter, loaded (its answers and round trip:
     * test_conformance.c), exports an empty set. */
    amq_filter *f = NULL;
    assert_int_equal(amq_build(&f, "gcs", NULL, NULL, 0, NULL), AMQ_OK);
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
    amq_free(f);
    assert_int_equal(amq_load(&f, path, AMQ_LOAD_MMAP, NULL), AMQ_OK);
    uint8_t *bytes = NULL;
    size_t len = 0;
    assert_int_equal(amq_export(&bytes, &len, f, "bip158", NULL), AMQ_OK);
    assert_int_equal(len, 1);
    assert_int_equal(bytes[0], 0);
    free(bytes);
    assert_int_equal(amq_export(&bytes, &len, f, "raw", NULL), AMQ_OK);
    assert_int_equal(len, 0);
    free(bytes);
    amq_free(f);
    amq_test_keys_free(&key_set);
}

/* ---- damaged files ------------------------------------------------------------------ */

/* A saved file and its container's parts. */
typedef struct saved_file {
    uint8_t *bytes;
    size_t len;
    amq__container c;
} saved_file;

static void save_spec(saved_file *s, const char *path, const char *spec, size_t n)
{
    amq_test_keys key_set;
    amq_test_keys_make(&key_set, seed, 0, n);
    amq_filter *f = NULL;
    assert_int_equal(amq_build(&f, spec, key_set.pointers, key_set.lens, n, NULL), AMQ_OK);
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
    amq_free(f);
    amq_test_keys_free(&key_set);
    s->bytes = (uint8_t *)amq_test_read_file(path, &s->len);
    assert_non_null(s->bytes);
    assert_int_equal(amq__format_parse(&s->c, s->bytes, s->len, NULL), AMQ_OK);
}

/* Write path with the saved file's hasher, the given parameter block and
 * payload, and a correct checksum; then it must be refused (by read and by
 * mmap) with a message holding fragment. */
static void expect_crafted_refused(const char *path, const saved_file *s, const uint8_t *params,
                                   uint32_t params_len, const uint8_t *payload,
                                   uint64_t payload_len, const char *fragment, const char *what)
{
    amq_test_write_container(path, AMQ__FAMILY_GCS, &s->c.hasher, params, params_len, payload,
                             payload_len);
    amq_test_expect_load(path, fragment, "%s", what);
    amq_filter *f = (amq_filter *)&f;
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_load(&f, path, AMQ_LOAD_MMAP, &diag), AMQ_ECORRUPT);
    assert_null(f);
}

/* Offsets in the gcs parameter block (src/gcs/gcs_file.c). */
enum {
    P_RANGE = 0,
    P_DIVISOR = 8,
    P_STREAM_BITS = 16,
    P_ENTRIES = 24,
    P_BASE = 32,
    P_POSITION_BITS = 40,
    P_LAG_BITS = 44,
    P_SEGMENTS = 48,
    P_COUNTS = 52,
};

static void test_damaged_files(void **state)
{
    char path[AMQ_TEST_PATH_MAX], crafted[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(crafted, state, "crafted.amq");

    /* Every flipped byte and every truncation of a small file. */
    saved_file small;
    save_spec(&small, path, "gcs range=64 index=4", 40);
    amq_test_expect_damage_refused(path, small.bytes, small.len);

    saved_file s;
    save_spec(&s, path, "gcs range=256 index=50", 2000);
    amq_test_expect_load(path, NULL, "the saved file");
    uint32_t plen = s.c.params_len;
    uint64_t len = s.c.payload_len;
    uint8_t params[4096], *payload = malloc(len + 64);
    uint64_t stream_bits = amq__load_u64le(s.c.params + P_STREAM_BITS);
    uint64_t stream_bytes = (stream_bits + 7) / 8;
    assert_int_equal(amq__load_u64le(s.c.params + P_ENTRIES), 50);
    assert_int_equal(amq__load_u32le(s.c.params + P_SEGMENTS), 1);
    assert_int_equal(amq__load_u64le(s.c.params + P_COUNTS), 2000);

#define RESET()                                                                                    \
    do {                                                                                           \
        memcpy(params, s.c.params, plen);                                                          \
        memcpy(payload, s.c.payload, (size_t)len);                                                 \
    } while (0)

    /* Unchanged, it loads. */
    RESET();
    amq_test_write_container(crafted, AMQ__FAMILY_GCS, &s.c.hasher, params, plen, payload, len);
    amq_test_expect_load(crafted, NULL, "unchanged");

    /* A stream bit flipped: some code changes, and with it the count of
     * codes, a value, or an index entry. Every bit of the first 64 bytes. */
    for (uint64_t bit = 0; bit < 512; bit++) {
        RESET();
        payload[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
        char what[64];
        snprintf(what, sizeof what, "stream bit %llu flipped", (unsigned long long)bit);
        expect_crafted_refused(crafted, &s, params, plen, payload, len, "", what);
    }
    /* The stream truncated: a byte less, with the parameters saying so. */
    RESET();
    amq__store_u64le(params + P_STREAM_BITS, stream_bits - 8);
    memmove(payload + stream_bytes - 1, payload + stream_bytes, (size_t)(len - stream_bytes));
    expect_crafted_refused(crafted, &s, params, plen, payload, len - 1, "", "stream truncated");
    /* The stream's last code cut (stream bits one less, in the same last
     * byte). */
    if (stream_bits % 8 != 1) {
        RESET();
        amq__store_u64le(params + P_STREAM_BITS, stream_bits - 1);
        expect_crafted_refused(crafted, &s, params, plen, payload, len, "gcs stream",
                               "last code cut");
    }
    /* A padding bit set, a slack byte set. */
    RESET();
    if (stream_bits % 8) {
        payload[stream_bytes - 1] |= 1;
        expect_crafted_refused(crafted, &s, params, plen, payload, len, "padding", "padding bit");
    }
    RESET();
    payload[stream_bytes + 3] = 1;
    expect_crafted_refused(crafted, &s, params, plen, payload, len, "nonzero", "stream slack");
    RESET();
    payload[len - 1] = 1;
    expect_crafted_refused(crafted, &s, params, plen, payload, len, "nonzero", "index slack");
    /* An index entry altered: every bit of the index. */
    uint64_t index_at = stream_bytes + AMQ__GCS_STREAM_SLACK;
    uint64_t index_bytes = len - index_at - AMQ__GCS_INDEX_SLACK;
    for (uint64_t bit = 0; bit < index_bytes * 8; bit++) {
        RESET();
        payload[index_at + bit / 8] ^= (uint8_t)(1u << (bit % 8));
        char what[64];
        snprintf(what, sizeof what, "index bit %llu flipped", (unsigned long long)bit);
        expect_crafted_refused(crafted, &s, params, plen, payload, len, "gcs index", what);
    }
    /* Parameter fields, each changed alone: the index's base, its widths
     * (wider is not canonical) and S; N too large for the stream, larger by
     * one, smaller by one, 0; the segments: more than 64, a count missing;
     * M and D; the stream bits claimed past the payload. */
    const struct {
        const char *what;
        unsigned offset, width; /* width 4 or 8 bytes */
        uint64_t value;
        const char *refusal;
    } fields[] = {
        { "index base", P_BASE, 8, amq__load_u64le(s.c.params + P_BASE) - 1, "gcs index" },
        { "position bits 65", P_POSITION_BITS, 4, 65, "widths" },
        { "S > N", P_ENTRIES, 8, 2001, "entries" },
        { "S - 1", P_ENTRIES, 8, 49, "payload" },
        { "N > bits", P_COUNTS, 8, stream_bits + 1, "cannot hold" },
        { "N + 1", P_COUNTS, 8, 2001, "gcs" },
        { "N - 1", P_COUNTS, 8, 1999, "gcs" },
        { "N = 0", P_COUNTS, 8, 0, "no values" },
        { "65 segments", P_SEGMENTS, 4, 65, "segments" },
        { "2 segments", P_SEGMENTS, 4, 2, "inside segment" },
        { "M = 1", P_RANGE, 8, 1, "range" },
        { "N·M overflows", P_RANGE, 8, UINT64_MAX / 1000, "2^64" },
        { "D = 0", P_DIVISOR, 8, 0, "divisor" },
        { "D = 255", P_DIVISOR, 8, 255, "" },
        { "huge stream", P_STREAM_BITS, 8, 8 * len + 8, "longer than" },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        RESET();
        if (fields[i].width == 4)
            amq__store_u32le(params + fields[i].offset, (uint32_t)fields[i].value);
        else
            amq__store_u64le(params + fields[i].offset, fields[i].value);
        expect_crafted_refused(crafted, &s, params, plen, payload, len, fields[i].refusal,
                               fields[i].what);
    }
    /* Trailing bytes, a block cut short. */
    RESET();
    params[plen] = 0;
    expect_crafted_refused(crafted, &s, params, plen + 1, payload, len, "trailing", "trailing");
    expect_crafted_refused(crafted, &s, params, P_SEGMENTS, payload, len, "too short", "short");
    /* A payload one byte longer or shorter. */
    RESET();
    expect_crafted_refused(crafted, &s, params, plen, payload, len + 1, "payload", "longer");
    expect_crafted_refused(crafted, &s, params, plen, payload, len - 1, "payload", "shorter");
#undef RESET
    free(payload);
    free(s.bytes);
    free(small.bytes);
}

/* ---- spec and parameter errors --------------------------------------------------- */

static void expect_build_refused(const char *spec, int status, const char *fragment)
{
    amq_filter *f = (amq_filter *)&f;
    amq_diag diag = { .message = "" };
    const void *keys[] = { "a" };
    size_t lens[] = { 1 };
    int got = amq_build(&f, spec, keys, lens, 1, &diag);
    if (got != status || !strstr(diag.message, fragment))
        fail_msg("%s: status %d '%s', expected %d with '%s'", spec, got, diag.message, status,
                 fragment);
    assert_null(f);
}

static void test_spec_errors(void **state)
{
    (void)state;
    static const amq_test_spec_case cases[] = {
        { "gcs layout=split", AMQ_EINVAL, "unknown option 'layout' for gcs" },
        { "gcs range=1", AMQ_EINVAL, "range" },
        { "gcs rice-bits=64", AMQ_EINVAL, "rice-bits" },
        { "gcs divisor=0", AMQ_EINVAL, "divisor" },
        { "gcs divisor=bestx", AMQ_EINVAL, "'bestx'" },
        { "gcs rice-bits=worst", AMQ_EINVAL, "rice-bits" },
        { "gcs bip158-key=00", AMQ_EINVAL, "bip158-key" },
        { "gcs p=2", AMQ_EINVAL, "fpr" },
        { "gcs index=x", AMQ_EINVAL, "index" },
        { "gcs", AMQ_EINVAL, "static" },
    };
    amq_test_expect_spec_errors(cases, sizeof cases / sizeof cases[0]);

    const char *key = "000102030405060708090a0b0c0d0e0f";
    char spec[200];
    expect_build_refused("gcs rice-bits=3 divisor=5", AMQ_EINVAL, "exclude each other");
    expect_build_refused("gcs hash=siphash", AMQ_EINVAL, "key");
    expect_build_refused("gcs hash=md5 seed=3", AMQ_EINVAL, "seed");
    expect_build_refused("gcs p=1e-30", AMQ_ERANGE, "fpr");
    snprintf(spec, sizeof spec, "gcs bip158-key=%s range=1024", key);
    expect_build_refused(spec, AMQ_EINVAL, "option 'range': 1024 contradicts bip158-key");
    snprintf(spec, sizeof spec, "gcs bip158-key=%s rice-bits=18", key);
    expect_build_refused(spec, AMQ_EINVAL, "option 'rice-bits': 18");
    snprintf(spec, sizeof spec, "gcs bip158-key=%s rice-bits=best", key);
    expect_build_refused(spec, AMQ_EINVAL, "option 'rice-bits': best");
    snprintf(spec, sizeof spec, "gcs bip158-key=%s divisor=best", key);
    expect_build_refused(spec, AMQ_EINVAL, "option 'divisor': best");
    snprintf(spec, sizeof spec, "gcs bip158-key=%s hash=xxh3", key);
    expect_build_refused(spec, AMQ_EINVAL, "option 'hash': xxh3");
    snprintf(spec, sizeof spec, "gcs bip158-key=%s seed=1", key);
    expect_build_refused(spec, AMQ_EINVAL, "seed");
    snprintf(spec, sizeof spec, "gcs bip158-key=%s p=0.01", key);
    expect_build_refused(spec, AMQ_EINVAL, "fpr");
    snprintf(spec, sizeof spec, "gcs bip158-key=%s key=0f0e0d0c0b0a09080706050403020100", key);
    expect_build_refused(spec, AMQ_EINVAL, "key");

    /* Repeating what bip158-key sets is accepted, and so are the rest. */
    static const char *const accepted[] = {
        ("gcs bip158-key=000102030405060708090a0b0c0d0e0f range=784931 rice-bits=19 hash=siphash "
         "key=000102030405060708090a0b0c0d0e0f index=3"),
        "gcs bip158-key=000102030405060708090a0b0c0d0e0f divisor=524288",
        "gcs n=5 p=0.01 seed=9",
        "gcs range=3 divisor=best",
        "gcs range=3 rice-bits=best index=0",
        "gcs hash=md5 range=1000",
        "gcs range=18446744073709551615",
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        amq_filter *f = NULL;
        amq_diag diag = { .message = "" };
        const void *keys[] = { "a" };
        size_t lens[] = { 1 };
        if (amq_build(&f, accepted[i], keys, lens, 1, &diag) != AMQ_OK)
            fail_msg("%s: %s", accepted[i], diag.message);
        assert_int_equal(amq_contains(f, "a", 1), 1);
        amq_free(f);
    }
    /* The universe must fit 64 bits. */
    amq_filter *f = (amq_filter *)&f;
    amq_diag diag = { .message = "" };
    const void *two[] = { "a", "b" };
    size_t two_lens[] = { 1, 1 };
    assert_int_equal(amq_build(&f, "gcs range=18446744073709551615", two, two_lens, 2, &diag),
                     AMQ_ERANGE);
    assert_non_null(strstr(diag.message, "N·M"));
    assert_null(f);
    assert_int_equal(amq_family_is_static("gcs"), 1);
}

static void test_parameter_errors(void **state)
{
    (void)state;
    amq_gcs *f = (amq_gcs *)&f;
    amq_diag diag = { .message = "" };
    uint64_t hashes[] = { 1, 2, 3 };
    amq_gcs_params p = params_with(1, AMQ_GCS_CODE_AUTO, 0, 0);
    assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "M = 1"));
    assert_null(f);
    p = params_with(0, AMQ_GCS_CODE_AUTO, 0, 0);
    p.fpr = 1.5;
    assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, &diag), AMQ_EINVAL);
    p = params_with(64, AMQ_GCS_CODE_RICE, 64, 0);
    assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "rice bits 64"));
    p = params_with(64, AMQ_GCS_CODE_GOLOMB, 0, 0);
    assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, &diag), AMQ_EINVAL);
    p = params_with(64, (amq_gcs_code)9, 0, 0);
    assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, &diag), AMQ_EINVAL);
    p = params_with((uint64_t)1 << 63, AMQ_GCS_CODE_AUTO, 0, 0);
    assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, &diag), AMQ_ERANGE);
    p.hasher.kind = (amq_hash_kind)7;
    assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, &diag), AMQ_EINVAL);
    assert_null(f);

    /* Defaults: a zeroed struct and NULL are M = 1024, the bucketed layout
     * with the best Rice code for M (P = 9), XXH3 seed 0, no seek index. */
    amq_gcs_params zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(amq_gcs_build_hash(&f, &zero, hashes, 3, NULL), AMQ_OK);
    assert_int_equal(amq_gcs_range(f), 1024);
    assert_int_equal(amq_gcs_rice_bits(f), 9);
    assert_true(f->bucketed);
    assert_int_equal(amq_gcs_hasher(f)->kind, AMQ_HASH_XXH3);
    assert_int_equal(amq_gcs_index_entries(f), 0);
    amq_gcs_free(f);
    assert_int_equal(amq_gcs_build_hash(&f, NULL, hashes, 3, NULL), AMQ_OK);
    assert_int_equal(amq_gcs_range(f), 1024);
    amq_gcs_free(f);
    /* M from p, rounded to a power of two in log scale. */
    static const struct {
        double fpr;
        uint64_t range;
    } fprs[] = { { 0.01, 128 }, { 0.001, 1024 }, { 1e-6, 1 << 20 }, { 0.4, 2 }, { 0.9, 2 } };
    for (size_t i = 0; i < sizeof fprs / sizeof fprs[0]; i++) {
        p = params_with(0, AMQ_GCS_CODE_AUTO, 0, 0);
        p.fpr = fprs[i].fpr;
        assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, NULL), AMQ_OK);
        assert_int_equal(amq_gcs_range(f), fprs[i].range);
        amq_gcs_free(f);
    }
    /* Non-power-of-two M, continuous: Golomb with D = M. */
    p = params_with(1000, AMQ_GCS_CODE_AUTO, 0, 0);
    p.layout = AMQ_GCS_LAYOUT_CONTINUOUS;
    assert_int_equal(amq_gcs_build_hash(&f, &p, hashes, 3, NULL), AMQ_OK);
    assert_int_equal(amq_gcs_divisor(f), 1000);
    assert_int_equal(amq_gcs_rice_bits(f), -1);
    amq_gcs_free(f);
}

/* ---- statistics ------------------------------------------------------------------ */

static void test_empty_filter(void **state)
{
    (void)state;
    amq_gcs *f = build_hashes(NULL, NULL, 0);
    assert_int_equal(amq_gcs_keys(f), 0);
    assert_int_equal(amq_gcs_segments(f), 0);
    assert_int_equal(amq_gcs_stream_bits(f), 0);
    assert_int_equal(amq_gcs_memory_bytes(f), 0);
    assert_int_equal(amq_gcs_index_entries(f), 0);
    assert_true(amq_gcs_expected_fpr(f) == 0);
    assert_false(amq_gcs_contains(f, "x", 1));
    uint64_t h = 5;
    uint8_t result = 1;
    assert_int_equal(amq_gcs_contains_many_hash(&result, f, &h, 1), AMQ_OK);
    assert_false(result);
    assert_int_equal(amq_gcs_contains_any_hash(f, &h, 1), 0);
    uint8_t *bytes;
    size_t len;
    assert_int_equal(amq_gcs_bip158_serialize(&bytes, &len, f, NULL), AMQ_OK);
    assert_int_equal(len, 1);
    assert_int_equal(bytes[0], 0);
    free(bytes);
    amq_gcs_free(f);
    amq_gcs_free(NULL);
}

/* No false negative among a million keys (default parameters). */
static void test_million_keys(void **state)
{
    (void)state;
    enum { N = 1000000 };
    amq_test_keys key_set;
    amq_test_keys_make(&key_set, seed, 0, N);
    amq_gcs *f = NULL;
    assert_int_equal(amq_gcs_build(&f, NULL, key_set.pointers, key_set.lens, N, NULL), AMQ_OK);
    assert_int_equal(amq_gcs_keys(f), N);
    for (size_t i = 0; i < N; i++)
        if (!amq_gcs_contains(f, &key_set.keys[i], sizeof key_set.keys[i]))
            fail_msg("key %zu of a million is absent", i);
    uint8_t *results = malloc(N * sizeof *results);
    assert_int_equal(amq_gcs_contains_many(results, f, key_set.pointers, key_set.lens, N), AMQ_OK);
    for (size_t i = 0; i < N; i++)
        if (!results[i])
            fail_msg("key %zu of a million not matched in a batch", i);
    free(results);
    amq_gcs_free(f);
    amq_test_keys_free(&key_set);
}

/* The FPR of n keys at M, on q absent keys (batches of a million through
 * match), within 4 binomial standard deviations of q·d/(n·M). The absent
 * keys are keys of set 1, hashed; or, with random_hashes, uniform random
 * 64-bit hashes (faster: what a uniform hash gives an absent key). */
static void check_fpr(uint64_t range, size_t n, uint64_t q, bool random_hashes)
{
    uint64_t *hashes = key_hashes(0, 0, n);
    amq_gcs_params params = params_with(range, AMQ_GCS_CODE_AUTO, 0, 0);
    amq_gcs *f = build_hashes(&params, hashes, n);
    uint64_t d = distinct_values(hashes, n, range);
    assert_int_equal(amq_gcs_distinct_values(f), d);
    double p = (double)d / ((double)n * (double)range);
    assert_true(fabs(amq_gcs_expected_fpr(f) - p) < 1e-12);
    enum { BATCH = 1000000 };
    uint64_t *absent = malloc(BATCH * sizeof *absent);
    uint8_t *results = malloc(BATCH * sizeof *results);
    amq_hasher h;
    amq_hasher_xxh3(&h, seed);
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0xabcdef);
    uint64_t positives = 0;
    for (uint64_t done = 0; done < q; done += BATCH) {
        for (size_t i = 0; i < BATCH; i++) {
            amq_test_key key = amq_test_make_key(seed, 1, done + i);
            absent[i] = random_hashes ? amq_test_next(&rng) : amq_hash64(&h, &key, sizeof key);
        }
        assert_int_equal(amq_gcs_contains_many_hash(results, f, absent, BATCH), AMQ_OK);
        for (size_t i = 0; i < BATCH; i++)
            positives += results[i];
        if (done == 0) /* single queries agree on the first batch's first keys */
            for (size_t i = 0; i < 20000; i++)
                assert_int_equal(results[i], amq_gcs_contains_hash(f, absent[i]));
    }
    double expected = (double)q * p, sigma = sqrt((double)q * p * (1 - p));
    print_message("M = 2^%d, N = %zu, %llu absent keys: %llu false positives, expected %.1f "
                  "(d/(N·M) = %.4g, 1/M = %.4g), 4 sigma = %.1f\n",
                  __builtin_ctzll(range), n, (unsigned long long)q, (unsigned long long)positives,
                  expected, p, 1.0 / (double)range, 4 * sigma);
    assert_true(fabs((double)positives - expected) <= 4 * sigma);
    free(absent);
    free(results);
    amq_gcs_free(f);
    free(hashes);
}

static void test_fpr_m_2_10(void **state)
{
    (void)state;
    check_fpr(1 << 10, 1000000, AMQ_TEST_SANITIZED ? 2000000 : 10000000, false);
}

static void test_fpr_m_2_20(void **state)
{
    (void)state;
    check_fpr(1 << 20, 100000, AMQ_TEST_SANITIZED ? 5000000 : 100000000, true);
}

/* Bits per key of the stream against the expectation for the code, at a
 * million keys (a quarter of that in the slower sanitizer build). */
static void check_size(uint64_t range, amq_gcs_code code, uint64_t arg)
{
    enum { N = AMQ_TEST_SANITIZED ? 250000 : 1000000 };
    uint64_t *hashes = key_hashes(0, 0, N);
    amq_gcs_params params = params_with(range, code, arg, 0);
    amq_gcs *f = build_hashes(&params, hashes, N);
    double per_key = (double)amq_gcs_stream_bits(f) / N;
    double expected = summed_code_bits(range, amq_gcs_divisor(f));
    double with_index = (double)amq_gcs_memory_bytes(f) * 8 / N;
    print_message("M = 2^%d, D = %llu: %.4f bits/key in the stream, expected %.4f; "
                  "%.4f with the index; log2 M = %d (+%.3f)\n",
                  __builtin_ctzll(range), (unsigned long long)amq_gcs_divisor(f), per_key, expected,
                  with_index, __builtin_ctzll(range), with_index - __builtin_ctzll(range));
    assert_true(fabs(per_key - expected) < 0.1);
    assert_true(fabs(amq_gcs_expected_code_bits(range, amq_gcs_divisor(f)) - expected) < 0.01);
    amq_gcs_free(f);
    free(hashes);
}

static void test_size(void **state)
{
    (void)state;
    check_size(1 << 10, AMQ_GCS_CODE_AUTO, 0);
    check_size(1 << 10, AMQ_GCS_CODE_BEST_GOLOMB, 0);
    check_size(1 << 10, AMQ_GCS_CODE_BEST_RICE, 0);
    check_size(1 << 8, AMQ_GCS_CODE_AUTO, 0);
    check_size(1 << 8, AMQ_GCS_CODE_BEST_GOLOMB, 0);
}

static void test_info(void **state)
{
    (void)state;
    enum { N = 1000 };
    amq_test_keys key_set;
    amq_test_keys_make(&key_set, seed, 0, N);
    amq_filter *f = NULL;
    assert_int_equal(
        amq_build(&f, "gcs range=300 index=10", key_set.pointers, key_set.lens, N, NULL), AMQ_OK);
    /* Family, capacity, keys and bits per key: test_conformance.c. */
    amq_info info;
    amq_info_get(&info, f);
    assert_true(info.target_fpr == 1.0 / 300);
    assert_true(info.expected_fpr > 0.9 / 300 && info.expected_fpr <= 1.0 / 300);
    assert_true(amq_test_find_detail(&info, "range")->value == 300);
    assert_true(amq_test_find_detail(&info, "universe")->value == 300 * N);
    assert_string_equal(amq_test_find_detail(&info, "code")->text, "golomb");
    assert_true(amq_test_find_detail(&info, "divisor")->value == 300);
    assert_true(amq_test_find_detail(&info, "index_entries")->value == 10);
    assert_true(amq_test_find_detail(&info, "segments")->value == 1);
    double stream_bits = amq_test_find_detail(&info, "stream_bits")->value;
    double index_bytes = amq_test_find_detail(&info, "index_bytes")->value;
    assert_true(info.memory_bytes == (uint64_t)ceil(stream_bits / 8) + (uint64_t)index_bytes);
    amq_free(f);
    assert_int_equal(amq_build(&f, "gcs", key_set.pointers, key_set.lens, N, NULL), AMQ_OK);
    amq_info_get(&info, f);
    assert_string_equal(amq_test_find_detail(&info, "code")->text, "rice");
    assert_true(amq_test_find_detail(&info, "rice_bits")->value == 9);
    assert_string_equal(amq_test_find_detail(&info, "layout")->text, "bucketed");
    assert_true(amq_test_find_detail(&info, "bucket_keys")->value == AMQ_GCS_DEFAULT_BUCKET_KEYS);
    amq_free(f);
    amq_test_keys_free(&key_set);
}

/* ---- the rate at small n and low p ------------------------------------------------- */

/* gcs p=1e-6 of 1000 keys: 1000 keys, 2 * 10^7 absent ones, about 20 false
 * positives; as many as amq_info's expected_fpr predicts (within 5 standard
 * deviations), and that at most the target. */
static void test_fpr_small_n_low_p(void **state)
{
    (void)state;
    amq_test_expect_low_rate("gcs p=1e-6", seed, AMQ_TEST_BUILD, 1000, 20000000, 1);
}

int main(void)
{
    seed = amq_test_seed(20261209);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_article_example),
        cmocka_unit_test(test_bip158_vectors),
        cmocka_unit_test(test_bip158_refusals),
        cmocka_unit_test(test_duplicates_count_once),
        cmocka_unit_test(test_colliding_values_are_kept),
        cmocka_unit_test(test_hashes_sharing_top_bits),
        cmocka_unit_test(test_best_divisors),
        cmocka_unit_test(test_codes_round_trip),
        cmocka_unit_test(test_fast_cursor_matches_reader),
        cmocka_unit_test(test_index_changes_no_answer),
        cmocka_unit_test(test_batch_matching),
        cmocka_unit_test(test_union),
        cmocka_unit_test(test_old_layout_file),
        cmocka_unit_test(test_bucketed_damage),
        AMQ_TEST_WITH_SCRATCH(test_generic_merge),
        AMQ_TEST_WITH_SCRATCH(test_save_and_load),
        AMQ_TEST_WITH_SCRATCH(test_damaged_files),
        cmocka_unit_test(test_spec_errors),
        cmocka_unit_test(test_parameter_errors),
        cmocka_unit_test(test_empty_filter),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_million_keys),
        cmocka_unit_test(test_fpr_m_2_10),
        cmocka_unit_test(test_fpr_m_2_20),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_fpr_small_n_low_p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
