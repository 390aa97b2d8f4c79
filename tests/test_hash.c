/*
 * Tests for src/core/hash.c and src/core/reduce.h: the key hash functions, the range
 * reduction and the streaming file checksum.
 *
 * Every function is pinned by answers that do not come from amq itself:
 *
 *   SipHash-2-4   the 64 reference vectors (key 00..0f, message 00 01 ..
 *                 of length 0..63) read from tests/data/siphash24-vectors.json,
 *                 the value the SipHash paper prints for the 15-byte message,
 *                 two rows of the reference code's 128-bit table, and OpenSSL
 *                 3's EVP_MAC "SIPHASH" (8- and 16-byte output) for every
 *                 length 0..200 under the reference key and random keys.
 *   MD5           the RFC 1321 appendix A.5 test suite, and the Golomb-coded
 *                 set article's worked example for the integer view of the
 *                 digest (md5("alpha") hex characters 24..31 mod 26*64 = 1017).
 *   XXH3          libxxhash itself (XXH3_64bits_withSeed, XXH3_128bits_withSeed)
 *                 for lengths 0..300 and several seeds, plus the values the
 *                 xxHash project publishes for the empty input and "a", so the
 *                 comparison is not only the library against its own copy.
 *   amq__reduce   (src/core/reduce.h) the 128-bit product computed here from
 *                 32-bit halves, exact powers of two, and a chi-square test
 *                 of uniformity.
 *
 * OpenSSL's SipHash writes its output words little-endian, the first word
 * first: 8-byte output is the 64-bit result serialized LE, and 16-byte output
 * is the first word (amq_u128.low) LE in bytes 0..7, then the second word
 * (amq_u128.high) LE in bytes 8..15. test_siphash128_matches_openssl checks
 * exactly that mapping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "core/hash.h"
#include "core/reduce.h"
#include "test_util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t run_seed;

static const uint8_t reference_key[16] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                           0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };

static void check_u64(uint64_t got, uint64_t expected, const char *what, size_t len)
{
    if (got != expected)
        fail_msg("%s, length %zu: got 0x%016" PRIx64 ", expected 0x%016" PRIx64, what, len, got,
                 expected);
}

static uint64_t load_le(const uint8_t *bytes)
{
    uint64_t value = 0;
    for (int i = 7; i >= 0; i--)
        value = (value << 8) | bytes[i];
    return value;
}

static uint64_t load_be(const uint8_t *bytes)
{
    uint64_t value = 0;
    for (int i = 0; i < 8; i++)
        value = (value << 8) | bytes[i];
    return value;
}

static void fill_random(amq_test_rng *rng, uint8_t *bytes, size_t len)
{
    for (size_t i = 0; i < len; i++)
        bytes[i] = (uint8_t)amq_test_next(rng);
}

/* ---- SipHash-2-4, 64-bit: the reference vectors --------------------------- */

/* Find `"name": "<value>"` in text[0, end) and copy the value into out. */
static void json_string_field(const char *text, const char *end, const char *name, char *out,
                              size_t cap)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", name);
    const char *at = strstr(text, quoted);
    if (!at || at >= end)
        fail_msg("field %s missing from a vector", name);
    const char *open = strchr(at + strlen(quoted), '"');
    assert_non_null(open);
    const char *close = strchr(open + 1, '"');
    assert_non_null(close);
    size_t len = (size_t)(close - open - 1);
    assert_true(len < cap);
    memcpy(out, open + 1, len);
    out[len] = 0;
}

static void test_siphash64_reference_vectors(void **state)
{
    (void)state;
    char *text = amq_test_read_data("siphash24-vectors.json", NULL);

    uint8_t msg[64];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)i;
    amq_hasher hasher;
    amq_hasher_siphash(&hasher, reference_key);

    uint64_t lengths_seen = 0;
    int vectors = 0;
    const char *cursor = text;
    while ((cursor = strstr(cursor, "\"msg_len\"")) != NULL) {
        const char *object_end = strchr(cursor, '}');
        assert_non_null(object_end);
        const char *colon = strchr(cursor, ':');
        assert_true(colon && colon < object_end);
        char *after;
        unsigned long len = strtoul(colon + 1, &after, 10);
        assert_true(after > colon + 1 && len < 64);
        assert_false(lengths_seen >> len & 1);
        lengths_seen |= UINT64_C(1) << len;

        char hex[40];
        json_string_field(cursor, object_end, "output_u64_hex", hex, sizeof hex);
        assert_int_equal(strlen(hex), 16);
        char *hex_end;
        uint64_t expected = strtoull(hex, &hex_end, 16);
        assert_true(*hex_end == 0);

        check_u64(amq_siphash24(reference_key, msg, len), expected, "amq_siphash24", len);
        check_u64(amq_hash64(&hasher, msg, len), expected, "amq_hash64 siphash", len);

        /* The reference code's table holds the same integer as LE bytes. */
        json_string_field(cursor, object_end, "output_bytes_le_hex", hex, sizeof hex);
        uint8_t le_bytes[8];
        assert_int_equal(amq_test_unhex(le_bytes, sizeof le_bytes, hex), 8);
        check_u64(load_le(le_bytes), expected, "output_bytes_le_hex", len);

        vectors++;
        cursor = object_end;
    }
    free(text);
    if (vectors < 64)
        fail_msg("read only %d SipHash vectors, expected 64", vectors);
    assert_true(lengths_seen == UINT64_MAX);

    /* Independent of the data file: the SipHash paper's example, the 15-byte
     * message 00..0e under key 00..0f. */
    check_u64(amq_siphash24(reference_key, msg, 15), UINT64_C(0xa129ca6149be45e5),
              "SipHash paper example", 15);
    check_u64(amq_siphash24(reference_key, NULL, 0), amq_siphash24(reference_key, msg, 0),
              "NULL message", 0);
}

/* ---- SipHash-2-4 against OpenSSL ------------------------------------------ */

static void openssl_siphash(uint8_t *out, size_t out_len, EVP_MAC *mac, const uint8_t key[16],
                            const uint8_t *msg, size_t len)
{
    EVP_MAC_CTX *context = EVP_MAC_CTX_new(mac);
    assert_non_null(context);
    size_t size = out_len;
    OSSL_PARAM params[] = { OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
                            OSSL_PARAM_construct_end() };
    assert_int_equal(EVP_MAC_init(context, key, 16, params), 1);
    assert_int_equal(EVP_MAC_CTX_get_mac_size(context), out_len);
    assert_int_equal(EVP_MAC_update(context, msg, len), 1);
    size_t written = 0;
    assert_int_equal(EVP_MAC_final(context, out, &written, out_len), 1);
    assert_int_equal(written, out_len);
    EVP_MAC_CTX_free(context);
}

/* Compare both output widths with OpenSSL for every prefix of msg. */
static void compare_with_openssl(EVP_MAC *mac, const uint8_t key[16], const uint8_t *msg,
                                 size_t max_len)
{
    amq_hasher hasher;
    amq_hasher_siphash(&hasher, key);
    for (size_t len = 0; len <= max_len; len++) {
        uint8_t tag[16];
        openssl_siphash(tag, 8, mac, key, msg, len);
        uint64_t expected64 = load_le(tag);
        check_u64(amq_siphash24(key, msg, len), expected64, "amq_siphash24 vs OpenSSL", len);
        check_u64(amq_hash64(&hasher, msg, len), expected64, "amq_hash64 vs OpenSSL", len);

        openssl_siphash(tag, 16, mac, key, msg, len);
        amq_u128 wide = amq_siphash24_128(key, msg, len);
        check_u64(wide.low, load_le(tag), "amq_siphash24_128 low vs OpenSSL bytes 0..7", len);
        check_u64(wide.high, load_le(tag + 8), "amq_siphash24_128 high vs OpenSSL bytes 8..15",
                  len);
        amq_u128 via_hasher = amq_hash128(&hasher, msg, len);
        check_u64(via_hasher.low, wide.low, "amq_hash128 siphash low", len);
        check_u64(via_hasher.high, wide.high, "amq_hash128 siphash high", len);
    }
}

static void test_siphash128_matches_openssl(void **state)
{
    (void)state;
    enum { max_len = 200 };
    uint8_t pattern[max_len];
    for (size_t i = 0; i < max_len; i++)
        pattern[i] = (uint8_t)i;

    /* Rows 0 and 15 of the SipHash reference code's 128-bit table
     * (veorq/SipHash, vectors.h, vectors_sip128): key 00..0f, message
     * 00 01 .., as the 16 output bytes. */
    static const struct {
        size_t len;
        const char *tag_hex;
    } published[] = {
        { 0, "a3817f04ba25a8e66df67214c7550293" },
        { 15, "5493e99933b0a8117e08ec0f97cfc3d9" },
    };
    for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
        size_t len = published[i].len;
        uint8_t tag[16];
        assert_int_equal(amq_test_unhex(tag, sizeof tag, published[i].tag_hex), 16);
        amq_u128 wide = amq_siphash24_128(reference_key, pattern, len);
        check_u64(wide.low, load_le(tag), "reference 128-bit vector, low", len);
        check_u64(wide.high, load_le(tag + 8), "reference 128-bit vector, high", len);
    }

    EVP_MAC *mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
    assert_non_null(mac);
    compare_with_openssl(mac, reference_key, pattern, max_len);

    amq_test_rng rng;
    amq_test_rng_init(&rng, run_seed ^ 0x5195a5);
    for (int round = 0; round < 4; round++) {
        uint8_t key[16], msg[max_len];
        fill_random(&rng, key, sizeof key);
        fill_random(&rng, msg, sizeof msg);
        compare_with_openssl(mac, key, msg, max_len);
    }
    EVP_MAC_free(mac);
}

/* ---- MD5 ------------------------------------------------------------------ */

static void test_md5_rfc1321_suite(void **state)
{
    (void)state;
    /* RFC 1321, appendix A.5. */
    static const char *const suite[][2] = {
        { "", "d41d8cd98f00b204e9800998ecf8427e" },
        { "a", "0cc175b9c0f1b6a831c399e269772661" },
        { "abc", "900150983cd24fb0d6963f7d28e17f72" },
        { "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
        { "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
        { "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
          "d174ab98d277d9f5a5611c2c9f419d9f" },
        { "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
          "57edf4a22be3c955ac49da2e2107b67a" },
    };
    amq_hasher hasher;
    amq_hasher_md5(&hasher);
    for (size_t i = 0; i < sizeof suite / sizeof suite[0]; i++) {
        const char *msg = suite[i][0];
        size_t len = strlen(msg);
        uint8_t digest[16];
        char hex[33];
        amq_md5(digest, msg, len);
        amq_test_hex(hex, digest, sizeof digest);
        assert_string_equal(hex, suite[i][1]);

        uint8_t expected[16];
        assert_int_equal(amq_test_unhex(expected, sizeof expected, suite[i][1]), 16);
        amq_u128 wide = amq_hash128(&hasher, msg, len);
        check_u64(wide.high, load_be(expected), "amq_hash128 md5 high = digest bytes 0..7 BE", len);
        check_u64(wide.low, load_be(expected + 8), "amq_hash128 md5 low = digest bytes 8..15 BE",
                  len);
        check_u64(amq_hash64(&hasher, msg, len), wide.low, "amq_hash64 md5 = low", len);
    }
    uint8_t digest_of_null[16], digest_of_empty[16];
    amq_md5(digest_of_null, NULL, 0);
    amq_md5(digest_of_empty, "", 0);
    assert_memory_equal(digest_of_null, digest_of_empty, 16);
}

static void test_md5_golomb_coded_set_example(void **state)
{
    (void)state;
    /* The Golomb-coded-set article hashes a word as the integer spelled by
     * hex digits 24..31 of its MD5 digest, modulo N*P = 26*64; for "alpha"
     * that is 1017. Those digits are digest bytes 12..15, big-endian. */
    uint8_t digest[16];
    char hex[33];
    amq_md5(digest, "alpha", 5);
    amq_test_hex(hex, digest, sizeof digest);
    uint64_t from_hex = strtoull(hex + 24, NULL, 16);
    assert_int_equal(from_hex % (26 * 64), 1017);

    amq_hasher hasher;
    amq_hasher_md5(&hasher);
    amq_u128 wide = amq_hash128(&hasher, "alpha", 5);
    check_u64(wide.low & 0xffffffffu, from_hex, "md5 low word vs hex digits 24..31", 5);
    check_u64(amq_hash64(&hasher, "alpha", 5) & 0xffffffffu, from_hex, "amq_hash64 md5", 5);
}

/* ---- XXH3 ----------------------------------------------------------------- */

static void test_xxh3_matches_libxxhash(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, run_seed ^ 0x7883);
    enum { max_len = 300 };
    uint8_t buffer[max_len + 1];
    fill_random(&rng, buffer, sizeof buffer);

    const uint64_t seeds[] = { 0, 1, UINT64_C(0x9e3779b97f4a7c15), UINT64_MAX,
                               amq_test_next(&rng) };
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        amq_hasher hasher;
        amq_hasher_xxh3(&hasher, seeds[s]);
        /* Offset 1 too: keys need not be aligned. */
        for (size_t offset = 0; offset < 2; offset++) {
            const uint8_t *key = buffer + offset;
            for (size_t len = 0; len <= max_len; len++) {
                uint64_t expected = XXH3_64bits_withSeed(key, len, seeds[s]);
                check_u64(amq_hash64(&hasher, key, len), expected, "amq_hash64 xxh3", len);
                check_u64(amq__xxh3_64(key, len, seeds[s]), expected, "amq__xxh3_64", len);
                XXH128_hash_t wide = XXH3_128bits_withSeed(key, len, seeds[s]);
                amq_u128 got = amq_hash128(&hasher, key, len);
                check_u64(got.low, wide.low64, "amq_hash128 xxh3 low", len);
                check_u64(got.high, wide.high64, "amq_hash128 xxh3 high", len);
                /* The families' inline path, short-key functions and all. */
                check_u64(amq__hash64(&hasher, key, len), expected, "amq__hash64 xxh3", len);
                amq_u128 inline_wide = amq__hash128(&hasher, key, len);
                check_u64(inline_wide.low, wide.low64, "amq__hash128 xxh3 low", len);
                check_u64(inline_wide.high, wide.high64, "amq__hash128 xxh3 high", len);
            }
        }
    }

    /* Values the xxHash project publishes (seed 0). */
    amq_hasher seed_zero;
    amq_hasher_xxh3(&seed_zero, 0);
    check_u64(amq_hash64(&seed_zero, NULL, 0), UINT64_C(0x2D06800538D394C2), "XXH3 empty", 0);
    check_u64(amq_hash64(&seed_zero, "a", 1), UINT64_C(0xE6C632B61E964E1F), "XXH3 \"a\"", 1);
    amq_u128 empty = amq_hash128(&seed_zero, NULL, 0);
    check_u64(empty.low, UINT64_C(0x6001C324468D497F), "XXH128 empty, low", 0);
    check_u64(empty.high, UINT64_C(0x99AA06D3014798D8), "XXH128 empty, high", 0);
}

static void test_xxh3_seed_changes_hash(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, run_seed ^ 0x5eed);
    for (int round = 0; round < 100; round++) {
        uint64_t seed_a = amq_test_next(&rng), seed_b = seed_a ^ (UINT64_C(1) << (round % 64));
        amq_hasher a, b;
        amq_hasher_xxh3(&a, seed_a);
        amq_hasher_xxh3(&b, seed_b);
        uint8_t key[40];
        size_t len = (size_t)amq_test_below(&rng, sizeof key + 1);
        fill_random(&rng, key, len);
        /* Equal by chance with probability 2^-64 (2^-128 for both halves). */
        assert_int_not_equal(amq_hash64(&a, key, len), amq_hash64(&b, key, len));
        amq_u128 wide_a = amq_hash128(&a, key, len), wide_b = amq_hash128(&b, key, len);
        assert_false(wide_a.low == wide_b.low && wide_a.high == wide_b.high);
    }
}

/* ---- amq__reduce ----------------------------------------------------------- */

/* The high word of the 128-bit product a*b, from 32-bit halves. */
static uint64_t mul_high(uint64_t a, uint64_t b)
{
    uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
    uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
    uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
    /* Cannot overflow: (2^32 - 1) + (2^32 - 1) + (2^32 - 1)^2 = 2^64 - 1. */
    uint64_t middle = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
    return hi_hi + (hi_lo >> 32) + (middle >> 32);
}

static void test_reduce_range_and_product(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, run_seed ^ 0x2ed);
    const uint64_t fixed_ranges[] = {
        1, 2, 3, UINT64_C(1) << 32, UINT64_C(1) << 63, UINT64_MAX - 1, UINT64_MAX
    };
    const size_t fixed_count = sizeof fixed_ranges / sizeof fixed_ranges[0];
    for (int i = 0; i < 200000; i++) {
        uint64_t hash = amq_test_next(&rng);
        if (i < 4)
            hash = i < 2 ? (uint64_t)i : UINT64_MAX - (uint64_t)(i - 2);
        uint64_t range = amq_test_next(&rng) >> amq_test_below(&rng, 64);
        if ((size_t)i % 8 < fixed_count)
            range = fixed_ranges[(size_t)i % 8];
        if (range == 0)
            range = 1;
        uint64_t reduced = amq__reduce(hash, range);
        if (reduced >= range)
            fail_msg("amq__reduce(0x%" PRIx64 ", 0x%" PRIx64 ") = 0x%" PRIx64 ", not below range",
                     hash, range, reduced);
        assert_int_equal(reduced, mul_high(hash, range));
        assert_int_equal(amq__reduce(hash, 0), 0);
        assert_int_equal(amq__reduce(hash, 1), 0);
        assert_int_equal(amq__reduce(hash, 2), hash >> 63);
        assert_int_equal(amq__reduce(hash, UINT64_C(1) << 63), hash >> 1);
        unsigned bits = (unsigned)amq_test_below(&rng, 63) + 1;
        assert_int_equal(amq__reduce(hash, UINT64_C(1) << bits), hash >> (64 - bits));
    }
    assert_int_equal(amq__reduce(UINT64_MAX, UINT64_MAX), UINT64_MAX - 1);
    assert_int_equal(amq__reduce(0, UINT64_MAX), 0);
}

static void test_reduce_uniform(void **state)
{
    (void)state;
    /* Reduce random hashes onto [0, 16k) and count them in 16 buckets of k
     * values each. For uniform output the statistic sum (O - E)^2 / E follows
     * chi-square with 15 degrees of freedom; 56.49 is its 1 - 1e-6 quantile,
     * so a correct reduction fails once in a million runs per range. */
    enum { buckets = 16, per_bucket = 10000 };
    const double critical = 56.49;
    amq_test_rng rng;
    amq_test_rng_init(&rng, run_seed ^ 0xc41);
    const uint64_t widths[] = { 1, 3, 1000003, (UINT64_C(1) << 59) + 12345,
                                amq_test_below(&rng, UINT64_C(1) << 60) + 1 };
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        uint64_t width = widths[w], range = buckets * width;
        uint64_t counts[buckets] = { 0 };
        for (int i = 0; i < buckets * per_bucket; i++)
            counts[amq__reduce(amq_test_next(&rng), range) / width]++;
        double chi_square = 0;
        for (int b = 0; b < buckets; b++) {
            double deviation = (double)counts[b] - per_bucket;
            chi_square += deviation * deviation / per_bucket;
        }
        if (chi_square >= critical)
            fail_msg("range 16*%" PRIu64 ": chi-square %.2f >= %.2f", width, chi_square, critical);
    }
}

/* ---- hashers -------------------------------------------------------------- */

static void test_hasher_check(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, run_seed ^ 0xcec);
    amq_hasher hasher;

    const uint64_t seeds[] = { 0, 1, UINT64_C(0x0123456789abcdef), UINT64_MAX,
                               amq_test_next(&rng) };
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        amq_hasher_xxh3(&hasher, seeds[s]);
        assert_int_equal(hasher.kind, AMQ_HASH_XXH3);
        for (unsigned i = 0; i < 8; i++)
            assert_int_equal(hasher.key[i], (seeds[s] >> (8 * i)) & 0xff);
        assert_int_equal(amq_hasher_check(&hasher, NULL), AMQ_OK);
        for (size_t i = 8; i < 16; i++) {
            amq_hasher damaged = hasher;
            assert_int_equal(damaged.key[i], 0);
            damaged.key[i] = (uint8_t)(1u << (i % 8));
            assert_int_equal(amq_hasher_check(&damaged, NULL), AMQ_EINVAL);
        }
    }

    uint8_t key[16];
    memset(key, 0xff, sizeof key);
    amq_hasher_siphash(&hasher, key);
    assert_int_equal(hasher.kind, AMQ_HASH_SIPHASH);
    assert_memory_equal(hasher.key, key, 16);
    assert_int_equal(amq_hasher_check(&hasher, NULL), AMQ_OK);
    fill_random(&rng, key, sizeof key);
    amq_hasher_siphash(&hasher, key);
    assert_memory_equal(hasher.key, key, 16);
    assert_int_equal(amq_hasher_check(&hasher, NULL), AMQ_OK);

    amq_hasher_md5(&hasher);
    assert_int_equal(hasher.kind, AMQ_HASH_MD5);
    assert_int_equal(amq_hasher_check(&hasher, NULL), AMQ_OK);
    for (size_t i = 0; i < 16; i++) {
        amq_hasher damaged = hasher;
        damaged.key[i] = 0x80;
        assert_int_equal(amq_hasher_check(&damaged, NULL), AMQ_EINVAL);
    }

    const int unknown_kinds[] = { 0, 4, 5, 255, -1, 0x7fffffff };
    for (size_t i = 0; i < sizeof unknown_kinds / sizeof unknown_kinds[0]; i++) {
        amq_hasher_xxh3(&hasher, 0);
        hasher.kind = (amq_hash_kind)unknown_kinds[i];
        assert_int_equal(amq_hasher_check(&hasher, NULL), AMQ_EINVAL);
    }
}

/* ---- the streaming checksum ------------------------------------------------ */

static void test_checksum_over_pieces(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, run_seed ^ 0xc5c5);
    enum { max_len = 5000 };
    uint8_t *data = malloc(max_len);
    assert_non_null(data);

    for (int round = 0; round < 300; round++) {
        size_t len = round < 3 ? (size_t)round : (size_t)amq_test_below(&rng, max_len + 1);
        fill_random(&rng, data, len);
        uint64_t expected = amq__xxh3_64(data, len, 0);
        check_u64(expected, XXH3_64bits(data, len), "amq__xxh3_64 seed 0 vs XXH3_64bits", len);

        amq__checksum checksum;
        amq__checksum_init(&checksum);
        size_t done = 0;
        while (done < len) {
            /* Mostly short pieces, sometimes empty, sometimes long. */
            size_t piece = (size_t)amq_test_below(&rng, 4) == 0
                               ? (size_t)amq_test_below(&rng, len - done + 1)
                               : (size_t)amq_test_below(&rng, 70);
            if (piece > len - done)
                piece = len - done;
            amq__checksum_update(&checksum, data + done, piece);
            done += piece;
        }
        check_u64(amq__checksum_final(&checksum), expected, "checksum over pieces", len);
        /* Finalizing does not consume the state. */
        check_u64(amq__checksum_final(&checksum), expected, "checksum finalized twice", len);
    }
    free(data);
}

int main(void)
{
    run_seed = amq_test_seed(20240601);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siphash64_reference_vectors),
        cmocka_unit_test(test_siphash128_matches_openssl),
        cmocka_unit_test(test_md5_rfc1321_suite),
        cmocka_unit_test(test_md5_golomb_coded_set_example),
        cmocka_unit_test(test_xxh3_matches_libxxhash),
        cmocka_unit_test(test_xxh3_seed_changes_hash),
        cmocka_unit_test(test_reduce_range_and_product),
        cmocka_unit_test(test_reduce_uniform),
        cmocka_unit_test(test_hasher_check),
        cmocka_unit_test(test_checksum_over_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
