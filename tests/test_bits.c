/* Tests for the bit vector and the Golomb/Rice bit writer and reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "core/bits.h"
#include "test_util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SEED 0xb175b175ULL

static uint64_t pow2(unsigned p)
{
    return (uint64_t)1 << p;
}

/* A modest quotient: mostly below 16, sometimes up to a few thousand. */
static uint64_t modest_quotient(amq_test_rng *rng)
{
    return amq_test_below(rng, 8) == 0 ? amq_test_below(rng, 3000) : amq_test_below(rng, 16);
}

/* ---- a bit-at-a-time reference packer, independent of bits.c ------------- */

typedef struct ref_stream {
    uint8_t *bytes;
    size_t capacity;
    uint64_t bit_count;
} ref_stream;

static void ref_put(ref_stream *s, uint64_t value, unsigned n)
{
    for (unsigned k = n; k-- > 0;) {
        if (s->bit_count / 8 >= s->capacity) {
            size_t capacity = s->capacity ? s->capacity * 2 : 64;
            s->bytes = realloc(s->bytes, capacity);
            assert_non_null(s->bytes);
            memset(s->bytes + s->capacity, 0, capacity - s->capacity);
            s->capacity = capacity;
        }
        if ((value >> k) & 1)
            s->bytes[s->bit_count / 8] |= (uint8_t)(0x80u >> (s->bit_count % 8));
        s->bit_count++;
    }
}

static void ref_put_unary(ref_stream *s, uint64_t q)
{
    for (uint64_t i = 0; i < q; i++)
        ref_put(s, 1, 1);
    ref_put(s, 0, 1);
}

static void finish(amq__bitwriter *w, uint8_t **bytes, size_t *byte_count, uint64_t *bit_count)
{
    assert_int_equal(amq__bitwriter_finish(w, bytes, byte_count, bit_count), AMQ_OK);
    assert_int_equal(*byte_count, *bit_count / 8 + (*bit_count % 8 != 0));
}

static void assert_bytes_equal(const uint8_t *got, size_t got_count, const uint8_t *want,
                               size_t want_count)
{
    assert_int_equal(got_count, want_count);
    for (size_t i = 0; i < want_count; i++) {
        if (got[i] != want[i])
            fail_msg("byte %zu: got 0x%02x, want 0x%02x", i, got[i], want[i]);
    }
}

/* ---- bit vector ----------------------------------------------------------- */

static void test_bitvec_operations(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED));
    const uint64_t n = 1000;
    bool model[1000] = { false };
    amq__bitvec v;
    assert_int_equal(amq__bitvec_init(&v, n), AMQ_OK);
    assert_int_equal(v.bit_count, n);
    assert_int_equal(amq__bitvec_popcount(&v), 0);
    for (int step = 0; step < 20000; step++) {
        uint64_t i = amq_test_below(&rng, n);
        switch (amq_test_below(&rng, 3)) {
        case 0:
            amq__bitvec_set(&v, i);
            model[i] = true;
            break;
        case 1:
            amq__bitvec_clear(&v, i);
            model[i] = false;
            break;
        default:
            assert_int_equal(amq__bitvec_test_and_set(&v, i), model[i]);
            model[i] = true;
            break;
        }
        uint64_t probe = amq_test_below(&rng, n);
        assert_int_equal(amq__bitvec_get(&v, probe), model[probe]);
    }
    uint64_t expected = 0;
    for (uint64_t i = 0; i < n; i++) {
        assert_int_equal(amq__bitvec_get(&v, i), model[i]);
        expected += model[i];
    }
    assert_int_equal(amq__bitvec_popcount(&v), expected);
    /* Bits past bit_count stay zero in the last word. */
    assert_int_equal(v.words[n / 64] >> (n % 64), 0);
    amq__bitvec_free(&v);
    assert_null(v.words);
    assert_int_equal(v.bit_count, 0);
    amq__bitvec_free(&v);
}

static void test_bitvec_word_boundaries(void **state)
{
    (void)state;
    amq__bitvec v;
    assert_int_equal(amq__bitvec_init(&v, 130), AMQ_OK);
    const uint64_t positions[] = { 0, 63, 64, 127, 128, 129 };
    for (size_t k = 0; k < sizeof positions / sizeof positions[0]; k++) {
        assert_false(amq__bitvec_test_and_set(&v, positions[k]));
        assert_true(amq__bitvec_test_and_set(&v, positions[k]));
        assert_int_equal(amq__bitvec_popcount(&v), k + 1);
    }
    assert_int_equal(v.words[0], 0x8000000000000001ULL);
    assert_int_equal(v.words[1], 0x8000000000000001ULL);
    assert_int_equal(v.words[2], 3);
    amq__bitvec_clear(&v, 63);
    assert_false(amq__bitvec_get(&v, 63));
    assert_true(amq__bitvec_get(&v, 64));
    assert_int_equal(amq__bitvec_popcount(&v), 5);
    amq__bitvec_free(&v);
}

static void test_bitvec_empty(void **state)
{
    (void)state;
    amq__bitvec v;
    assert_int_equal(amq__bitvec_init(&v, 0), AMQ_OK);
    assert_int_equal(v.bit_count, 0);
    assert_int_equal(amq__bitvec_popcount(&v), 0);
    amq__bitvec_free(&v);
    assert_int_equal(amq__bitvec_words_for(0), 0);
    assert_int_equal(amq__bitvec_words_for(1), 1);
    assert_int_equal(amq__bitvec_words_for(64), 1);
    assert_int_equal(amq__bitvec_words_for(65), 2);
    assert_int_equal(amq__bitvec_words_for(UINT64_MAX), pow2(58));
}

static void test_bitvec_too_large(void **state)
{
    (void)state;
    amq__bitvec v;
    v.words = (uint64_t *)&v; /* init must reset it, not free it */
    assert_int_equal(amq__bitvec_init(&v, UINT64_MAX), AMQ_ERANGE);
    assert_null(v.words);
    assert_int_equal(v.bit_count, 0);
    amq__bitvec_free(&v);
    assert_int_equal(amq__bitvec_init(&v, AMQ__BITVEC_MAX_BITS + 1), AMQ_ERANGE);
    assert_null(v.words);
}

/* Bits above 2^32 must not alias the low ones (a 32-bit index would). */
static void test_bitvec_past_4g(void **state)
{
    (void)state;
    const uint64_t base = pow2(32);
    amq__bitvec v;
    assert_int_equal(amq__bitvec_init(&v, base + 130), AMQ_OK);
    amq__bitvec_set(&v, base);
    amq__bitvec_set(&v, base + 1);
    assert_false(amq__bitvec_test_and_set(&v, base + 64 + 1));
    assert_false(amq__bitvec_get(&v, 0));
    assert_false(amq__bitvec_get(&v, 1));
    assert_false(amq__bitvec_get(&v, 65));
    assert_true(amq__bitvec_get(&v, base));
    assert_true(amq__bitvec_get(&v, base + 1));
    assert_true(amq__bitvec_get(&v, base + 65));
    assert_false(amq__bitvec_get(&v, base + 129));
    assert_int_equal(amq__bitvec_popcount(&v), 3);
    amq__bitvec_set(&v, base + 129);
    amq__bitvec_clear(&v, base + 1);
    assert_false(amq__bitvec_get(&v, base + 1));
    assert_int_equal(amq__bitvec_popcount(&v), 3);
    amq__bitvec_free(&v);
}

/* Saved words are little-endian, so bit i is bit i % 8 of byte i / 8. */
static void test_bitvec_save_load(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED) ^ 7);
    const uint64_t n = 1000;
    amq__bitvec v, loaded;
    assert_int_equal(amq__bitvec_init(&v, n), AMQ_OK);
    for (int i = 0; i < 300; i++)
        amq__bitvec_set(&v, amq_test_below(&rng, n));
    amq__piece piece = amq__bitvec_piece(&v);
    size_t len = (size_t)amq__bitvec_words_for(n) * 8;
    assert_int_equal(piece.len, len);
    assert_int_equal(len, 128);
    /* An exact-size copy, so ASan sees any read past the saved bytes. */
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    amq__piece_copy(copy, &piece);
    for (uint64_t i = 0; i < len * 8; i++)
        assert_int_equal((copy[i / 8] >> (i % 8)) & 1, i < n && amq__bitvec_get(&v, i));

    assert_int_equal(amq__bitvec_load_words(&loaded, n, copy, len, NULL), AMQ_OK);
    assert_int_equal(loaded.bit_count, n);
    assert_memory_equal(loaded.words, v.words, len);
    amq__bitvec_free(&loaded);

    amq_diag diag = { .message = "" };
    const uint64_t bad_lengths[] = { 0, len - 1, len - 8, len + 8 };
    for (size_t k = 0; k < 4; k++) {
        diag.message[0] = 0;
        assert_int_equal(amq__bitvec_load_words(&loaded, n, copy, bad_lengths[k], &diag),
                         AMQ_ECORRUPT);
        assert_null(loaded.words);
        assert_int_equal(loaded.bit_count, 0);
        assert_true(strlen(diag.message) > 0);
    }
    /* A stray bit past the end (bit n = 1000 lives in byte 125). */
    copy[n / 8] |= (uint8_t)(1u << (n % 8));
    diag.message[0] = 0;
    assert_int_equal(amq__bitvec_load_words(&loaded, n, copy, len, &diag), AMQ_ECORRUPT);
    assert_null(loaded.words);
    assert_true(strlen(diag.message) > 0);
    /* Bit 1023, the last of the last word, is just as foreign. */
    copy[n / 8] &= (uint8_t) ~(1u << (n % 8));
    copy[len - 1] |= 0x80;
    assert_int_equal(amq__bitvec_load_words(&loaded, n, copy, len, NULL), AMQ_ECORRUPT);
    /* With 1024 bits the same bytes are a valid vector. */
    assert_int_equal(amq__bitvec_load_words(&loaded, 1024, copy, len, NULL), AMQ_OK);
    assert_true(amq__bitvec_get(&loaded, 1023));
    amq__bitvec_free(&loaded);
    free(copy);
    amq__bitvec_free(&v);

    /* The empty vector saves as a piece of zero bytes. */
    amq__bitvec empty;
    assert_int_equal(amq__bitvec_init(&empty, 0), AMQ_OK);
    assert_int_equal(amq__bitvec_piece(&empty).len, 0);
    assert_int_equal(amq__bitvec_load_words(&loaded, 0, NULL, 0, NULL), AMQ_OK);
    assert_int_equal(loaded.bit_count, 0);
    amq__bitvec_free(&loaded);
    assert_int_equal(amq__bitvec_load_words(&loaded, UINT64_MAX, NULL, 0, NULL), AMQ_ECORRUPT);
}

/* ---- writer: exact bit patterns ------------------------------------------- */

static void test_put_exact_bytes(void **state)
{
    (void)state;
    amq__bitwriter w;
    uint8_t *bytes;
    size_t byte_count;
    uint64_t bit_count;

    amq__bitwriter_init(&w);
    amq__bitwriter_put(&w, 5, 3); /* 0b101 */
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 3);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0xA0 }, 1);
    free(bytes);

    /* Only the low bits of the value count; 0-bit puts write nothing. */
    amq__bitwriter_init(&w);
    amq__bitwriter_put(&w, 0xFFFFFFFFFFFFFFF9ULL, 3);
    amq__bitwriter_put(&w, UINT64_MAX, 0);
    amq__bitwriter_put(&w, 0x0123456789ABCDEFULL, 64);
    amq__bitwriter_put(&w, 0x2, 2);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 69);
    /* 001 + 0x0123456789ABCDEF + 10, in 9 bytes: the 64-bit value shifted
     * right by 3 behind 001, then 10 at bits 67..68. */
    const uint8_t want[] = { 0x20, 0x24, 0x68, 0xAC, 0xF1, 0x35, 0x79, 0xBD, 0xF0 };
    assert_bytes_equal(bytes, byte_count, want, sizeof want);
    free(bytes);

    amq__bitwriter_init(&w);
    amq__bitwriter_put(&w, 1, 1);
    amq__bitwriter_put(&w, 0, 7);
    amq__bitwriter_put(&w, 0xFF, 8);
    amq__bitwriter_put_unary(&w, 9);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 26);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0x80, 0xFF, 0xFF, 0x80 }, 4);
    free(bytes);
}

/* Random mixes of every put, byte-compared with the reference packer and read
 * back in the same order. */
static void test_put_get_random(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED) ^ 1);
    enum { OPS = 20000 };
    static unsigned kinds[OPS], widths[OPS];
    static uint64_t values[OPS];
    for (int round = 0; round < 4; round++) {
        amq__bitwriter w;
        amq__bitwriter_init(&w);
        ref_stream ref = { NULL, 0, 0 };
        for (int i = 0; i < OPS; i++) {
            kinds[i] = (unsigned)amq_test_below(&rng, 3);
            widths[i] = (unsigned)amq_test_below(&rng, 65);
            values[i] = amq_test_next(&rng);
            if (kinds[i] == 0) {
                values[i] &= widths[i] == 64 ? UINT64_MAX : pow2(widths[i]) - 1;
                amq__bitwriter_put(&w, values[i], widths[i]);
                ref_put(&ref, values[i], widths[i]);
            } else if (kinds[i] == 1) {
                values[i] %= 200;
                amq__bitwriter_put_unary(&w, values[i]);
                ref_put_unary(&ref, values[i]);
            } else {
                widths[i] %= 64;
                values[i] =
                    modest_quotient(&rng) << widths[i] | (values[i] & (pow2(widths[i]) - 1));
                amq__bitwriter_put_rice(&w, values[i], widths[i]);
                ref_put_unary(&ref, values[i] >> widths[i]);
                ref_put(&ref, values[i], widths[i]);
            }
            assert_int_equal(w.bit_count, ref.bit_count);
        }
        uint8_t *bytes;
        size_t byte_count;
        uint64_t bit_count;
        finish(&w, &bytes, &byte_count, &bit_count);
        assert_int_equal(bit_count, ref.bit_count);
        assert_bytes_equal(bytes, byte_count, ref.bytes, (size_t)((ref.bit_count + 7) / 8));

        amq__bitreader r;
        amq__bitreader_init(&r, bytes, bit_count);
        for (int i = 0; i < OPS; i++) {
            uint64_t got = ~values[i];
            int status;
            if (kinds[i] == 0)
                status = amq__bitreader_get(&r, widths[i], &got);
            else if (kinds[i] == 1)
                status = amq__bitreader_get_unary(&r, &got);
            else
                status = amq__bitreader_get_rice(&r, widths[i], &got);
            assert_int_equal(status, AMQ_OK);
            assert_int_equal(got, values[i]);
        }
        assert_int_equal(r.position, bit_count);
        free(bytes);
        free(ref.bytes);
    }
}

/* ---- Rice ------------------------------------------------------------------ */

static void test_rice_known_answers(void **state)
{
    (void)state;
    amq__bitwriter w;
    uint8_t *bytes;
    size_t byte_count;
    uint64_t bit_count;

    /* P = 2: 0 -> 0 00, 5 -> 10 01, 9 -> 110 01: 0001 0011 1001 (0000). */
    amq__bitwriter_init(&w);
    amq__bitwriter_put_rice(&w, 0, 2);
    amq__bitwriter_put_rice(&w, 5, 2);
    amq__bitwriter_put_rice(&w, 9, 2);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 12);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0x13, 0x90 }, 2);
    amq__bitreader r;
    amq__bitreader_init(&r, bytes, bit_count);
    uint64_t v;
    assert_int_equal(amq__bitreader_get_rice(&r, 2, &v), AMQ_OK);
    assert_int_equal(v, 0);
    assert_int_equal(amq__bitreader_get_rice(&r, 2, &v), AMQ_OK);
    assert_int_equal(v, 5);
    assert_int_equal(amq__bitreader_get_rice(&r, 2, &v), AMQ_OK);
    assert_int_equal(v, 9);
    assert_int_equal(amq__bitreader_get_rice(&r, 2, &v), AMQ_ECORRUPT);
    assert_int_equal(r.position, 12);
    free(bytes);

    /* P = 0 is plain unary: 0, 1, 2 -> 0 10 110. */
    amq__bitwriter_init(&w);
    for (uint64_t x = 0; x < 3; x++)
        amq__bitwriter_put_rice(&w, x, 0);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 6);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0x58 }, 1);
    free(bytes);

    /* P = 63: UINT64_MAX -> 10 then 63 1-bits. */
    amq__bitwriter_init(&w);
    amq__bitwriter_put_rice(&w, UINT64_MAX, 63);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 65);
    const uint8_t want[] = { 0xBF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x80 };
    assert_bytes_equal(bytes, byte_count, want, sizeof want);
    amq__bitreader_init(&r, bytes, bit_count);
    assert_int_equal(amq__bitreader_get_rice(&r, 63, &v), AMQ_OK);
    assert_int_equal(v, UINT64_MAX);
    free(bytes);
}

static void test_rice_round_trip(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED) ^ 2);
    enum { COUNT = 3000 };
    static uint64_t values[COUNT];
    const uint64_t cap = pow2(40);
    for (unsigned p = 0; p <= 40; p++) {
        amq__bitwriter w;
        amq__bitwriter_init(&w);
        uint64_t expected_bits = 0;
        for (int i = 0; i < COUNT; i++) {
            uint64_t q = modest_quotient(&rng) % ((cap >> p) + 1);
            uint64_t v = q << p | amq_test_below(&rng, pow2(p));
            if (i == 0 && (cap >> p) < 3000)
                v = cap; /* the largest value, where its quotient is modest */
            if (v > cap)
                v = cap;
            values[i] = v;
            expected_bits += (v >> p) + 1 + p;
            amq__bitwriter_put_rice(&w, v, p);
        }
        uint8_t *bytes;
        size_t byte_count;
        uint64_t bit_count;
        finish(&w, &bytes, &byte_count, &bit_count);
        assert_int_equal(bit_count, expected_bits);
        amq__bitreader r;
        amq__bitreader_init(&r, bytes, bit_count);
        for (int i = 0; i < COUNT; i++) {
            uint64_t got;
            assert_int_equal(amq__bitreader_get_rice(&r, p, &got), AMQ_OK);
            if (got != values[i])
                fail_msg("P=%u value %d: got %llu, want %llu", p, i, (unsigned long long)got,
                         (unsigned long long)values[i]);
        }
        assert_int_equal(r.position, bit_count);
        free(bytes);
    }
}

/* ---- Golomb ---------------------------------------------------------------- */

static void test_golomb_known_answers(void **state)
{
    (void)state;
    amq__bitwriter w;
    uint8_t *bytes;
    size_t byte_count;
    uint64_t bit_count;

    /* M = 5: b = 3, u = 3. Remainders 0, 1, 2 -> 00, 01, 10; 3 -> 110; 4 ->
     * 111. With q = 0: 000 001 010 0110 0111 = 0000 0101 0011 0011 1. */
    amq__bitwriter_init(&w);
    for (uint64_t x = 0; x < 5; x++)
        amq__bitwriter_put_golomb(&w, x, 5);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 17);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0x05, 0x33, 0x80 }, 3);
    free(bytes);

    /* M = 5, values 3, 7, 14 -> 0 110 | 10 10 | 110 111. */
    amq__bitwriter_init(&w);
    amq__bitwriter_put_golomb(&w, 3, 5);
    amq__bitwriter_put_golomb(&w, 7, 5);
    amq__bitwriter_put_golomb(&w, 14, 5);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 14);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0x6A, 0xDC }, 2);
    amq__bitreader r;
    amq__bitreader_init(&r, bytes, bit_count);
    const uint64_t want[] = { 3, 7, 14 };
    for (int i = 0; i < 3; i++) {
        uint64_t v;
        assert_int_equal(amq__bitreader_get_golomb(&r, 5, &v), AMQ_OK);
        assert_int_equal(v, want[i]);
    }
    free(bytes);

    /* M = 3: b = 2, u = 1: 0 -> 0, 1 -> 10, 2 -> 11. */
    amq__bitwriter_init(&w);
    for (uint64_t x = 0; x < 3; x++)
        amq__bitwriter_put_golomb(&w, x, 3);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 8);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0x13 }, 1);
    free(bytes);

    /* M = 1: unary only. */
    amq__bitwriter_init(&w);
    amq__bitwriter_put_golomb(&w, 3, 1);
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, 4);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0xE0 }, 1);
    free(bytes);
}

static void golomb_round_trip(amq_test_rng *rng, uint64_t divisor, int count)
{
    const uint64_t cap = pow2(40);
    unsigned b = 0;
    while (b < 64 && pow2(b) < divisor)
        b++;
    uint64_t u = b == 64 ? 0 - divisor : pow2(b) - divisor;
    uint64_t *values = malloc((size_t)count * sizeof *values);
    assert_non_null(values);
    amq__bitwriter w;
    amq__bitwriter_init(&w);
    uint64_t expected_bits = 0;
    for (int i = 0; i < count; i++) {
        uint64_t q = modest_quotient(rng);
        if (q > cap / divisor)
            q = cap / divisor;
        uint64_t v = q * divisor + amq_test_below(rng, divisor);
        if (v > cap)
            v = cap;
        values[i] = v;
        expected_bits += v / divisor + 1 + (v % divisor < u ? b - 1 : b);
        amq__bitwriter_put_golomb(&w, v, divisor);
    }
    uint8_t *bytes;
    size_t byte_count;
    uint64_t bit_count;
    finish(&w, &bytes, &byte_count, &bit_count);
    assert_int_equal(bit_count, expected_bits);
    amq__bitreader r;
    amq__bitreader_init(&r, bytes, bit_count);
    for (int i = 0; i < count; i++) {
        uint64_t got;
        assert_int_equal(amq__bitreader_get_golomb(&r, divisor, &got), AMQ_OK);
        if (got != values[i])
            fail_msg("M=%llu value %d: got %llu, want %llu", (unsigned long long)divisor, i,
                     (unsigned long long)got, (unsigned long long)values[i]);
    }
    assert_int_equal(r.position, bit_count);
    free(bytes);
    free(values);
}

static void test_golomb_round_trip(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED) ^ 3);
    const uint64_t divisors[] = { 1, 2, 3, 5, 7, 10, 784931, pow2(19), pow2(40) - 1, pow2(40) };
    for (size_t k = 0; k < sizeof divisors / sizeof divisors[0]; k++)
        golomb_round_trip(&rng, divisors[k], 3000);
    for (int k = 0; k < 40; k++)
        golomb_round_trip(&rng, 1 + amq_test_below(&rng, pow2(1 + (unsigned)k)), 1000);
}

/* Divisors past 2^63 have b = 64 and u = 2^64 - M: the widest codes. */
static void test_golomb_widest_divisor(void **state)
{
    (void)state;
    const uint64_t m = pow2(63) + 5;
    const uint64_t u = pow2(63) - 5;
    /* r = u - 1 is the last short remainder, r = u the first long one. */
    const uint64_t values[] = { 0, 1, u - 1, u, m - 1, m, UINT64_MAX };
    const uint64_t lengths[] = { 1 + 63, 1 + 63, 1 + 63, 1 + 64, 1 + 64, 2 + 63, 2 + 63 };
    amq__bitwriter w;
    amq__bitwriter_init(&w);
    uint64_t expected_bits = 0;
    for (int i = 0; i < 7; i++) {
        amq__bitwriter_put_golomb(&w, values[i], m);
        expected_bits += lengths[i];
        assert_int_equal(w.bit_count, expected_bits);
    }
    uint8_t *bytes;
    size_t byte_count;
    uint64_t bit_count;
    finish(&w, &bytes, &byte_count, &bit_count);
    amq__bitreader r;
    amq__bitreader_init(&r, bytes, bit_count);
    for (int i = 0; i < 7; i++) {
        uint64_t got;
        assert_int_equal(amq__bitreader_get_golomb(&r, m, &got), AMQ_OK);
        assert_int_equal(got, values[i]);
    }
    free(bytes);
}

static void test_golomb_power_of_two_is_rice(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED) ^ 4);
    for (unsigned p = 0; p <= 63; p++) {
        amq__bitwriter rice, golomb;
        amq__bitwriter_init(&rice);
        amq__bitwriter_init(&golomb);
        for (int i = 0; i < 500; i++) {
            uint64_t q = modest_quotient(&rng);
            if (p > 0 && q >> (64 - p) != 0)
                q = amq_test_below(&rng, pow2(64 - p));
            uint64_t v = q << p | (amq_test_next(&rng) & (pow2(p) - 1));
            amq__bitwriter_put_rice(&rice, v, p);
            amq__bitwriter_put_golomb(&golomb, v, pow2(p));
        }
        uint8_t *rice_bytes, *golomb_bytes;
        size_t rice_count, golomb_count;
        uint64_t rice_bits, golomb_bits;
        finish(&rice, &rice_bytes, &rice_count, &rice_bits);
        finish(&golomb, &golomb_bytes, &golomb_count, &golomb_bits);
        assert_int_equal(rice_bits, golomb_bits);
        assert_bytes_equal(golomb_bytes, golomb_count, rice_bytes, rice_count);
        free(rice_bytes);
        free(golomb_bytes);
    }
}

/* ---- values that do not fit 64 bits ------------------------------------- */

static void expect_corrupt_at_start(const uint8_t *bytes, uint64_t bit_count, bool rice,
                                    uint64_t parameter)
{
    amq__bitreader r;
    amq__bitreader_init(&r, bytes, bit_count);
    uint64_t v = 42;
    int status = rice ? amq__bitreader_get_rice(&r, (unsigned)parameter, &v)
                      : amq__bitreader_get_golomb(&r, parameter, &v);
    assert_int_equal(status, AMQ_ECORRUPT);
    assert_int_equal(r.position, 0);
    assert_int_equal(v, 42);
}

static void test_overflowing_quotient(void **state)
{
    (void)state;
    amq__bitwriter w;
    uint8_t *bytes;
    size_t byte_count;
    uint64_t bit_count;
    amq__bitreader r;
    uint64_t v;

    /* Rice P = 60: q = 15 fits (15 << 60), q = 16 does not. */
    amq__bitwriter_init(&w);
    amq__bitwriter_put_unary(&w, 15);
    amq__bitwriter_put(&w, 7, 60);
    finish(&w, &bytes, &byte_count, &bit_count);
    amq__bitreader_init(&r, bytes, bit_count);
    assert_int_equal(amq__bitreader_get_rice(&r, 60, &v), AMQ_OK);
    assert_int_equal(v, 15 * pow2(60) + 7);
    free(bytes);
    amq__bitwriter_init(&w);
    amq__bitwriter_put_unary(&w, 16);
    amq__bitwriter_put(&w, 0, 60);
    finish(&w, &bytes, &byte_count, &bit_count);
    expect_corrupt_at_start(bytes, bit_count, true, 60);
    free(bytes);

    /* Rice P = 63: q = 2 overflows. */
    amq__bitwriter_init(&w);
    amq__bitwriter_put_unary(&w, 2);
    amq__bitwriter_put(&w, 0, 63);
    finish(&w, &bytes, &byte_count, &bit_count);
    expect_corrupt_at_start(bytes, bit_count, true, 63);
    free(bytes);

    /* Golomb M = 2^63 + 5 (u = 2^63 - 5): q = 1 with r = u - 1 is exactly
     * UINT64_MAX; r = u (written as 2u in 64 bits) overflows the sum; q = 2
     * overflows the product. */
    const uint64_t m = pow2(63) + 5, u = pow2(63) - 5;
    amq__bitwriter_init(&w);
    amq__bitwriter_put_unary(&w, 1);
    amq__bitwriter_put(&w, u - 1, 63);
    finish(&w, &bytes, &byte_count, &bit_count);
    amq__bitreader_init(&r, bytes, bit_count);
    assert_int_equal(amq__bitreader_get_golomb(&r, m, &v), AMQ_OK);
    assert_int_equal(v, UINT64_MAX);
    free(bytes);
    amq__bitwriter_init(&w);
    amq__bitwriter_put_unary(&w, 1);
    amq__bitwriter_put(&w, 2 * u, 64);
    finish(&w, &bytes, &byte_count, &bit_count);
    expect_corrupt_at_start(bytes, bit_count, false, m);
    free(bytes);
    amq__bitwriter_init(&w);
    amq__bitwriter_put_unary(&w, 2);
    amq__bitwriter_put(&w, 0, 63);
    finish(&w, &bytes, &byte_count, &bit_count);
    expect_corrupt_at_start(bytes, bit_count, false, m);
    free(bytes);

    /* Golomb M = 3 * 2^40: a quotient of 2^23 + 2^22 overflows (product
     * 2^64 + ...), one of 2^22 does not. Long unary runs cross many windows. */
    const uint64_t m40 = 3 * pow2(40);
    amq__bitwriter_init(&w);
    amq__bitwriter_put_unary(&w, pow2(22));
    amq__bitwriter_put(&w, 0, 41);
    amq__bitwriter_put_unary(&w, pow2(23) + pow2(22));
    amq__bitwriter_put(&w, 0, 41);
    finish(&w, &bytes, &byte_count, &bit_count);
    amq__bitreader_init(&r, bytes, bit_count);
    assert_int_equal(amq__bitreader_get_golomb(&r, m40, &v), AMQ_OK);
    assert_int_equal(v, pow2(22) * m40);
    uint64_t second = r.position;
    assert_int_equal(amq__bitreader_get_golomb(&r, m40, &v), AMQ_ECORRUPT);
    assert_int_equal(r.position, second);
    free(bytes);
}

/* ---- truncated streams ------------------------------------------------------ */

typedef struct code {
    bool rice;
    uint64_t parameter; /* rice bits or divisor */
} code;

static void put_code(amq__bitwriter *w, code c, uint64_t v)
{
    if (c.rice)
        amq__bitwriter_put_rice(w, v, (unsigned)c.parameter);
    else
        amq__bitwriter_put_golomb(w, v, c.parameter);
}

static int get_code(amq__bitreader *r, code c, uint64_t *v)
{
    return c.rice ? amq__bitreader_get_rice(r, (unsigned)c.parameter, v)
                  : amq__bitreader_get_golomb(r, c.parameter, v);
}

/* Decode a stream cut to `length` bits, held in an exact-size buffer: every
 * value that ends within the cut must decode right, the first that does not
 * must fail with the position unchanged. */
static void decode_truncated(const uint8_t *full, uint64_t length, bool ones_after_end, code c,
                             const uint64_t *values, const uint64_t *ends, int count)
{
    size_t byte_count = (size_t)(length / 8 + (length % 8 != 0));
    uint8_t *cut = malloc(byte_count ? byte_count : 1);
    assert_non_null(cut);
    memcpy(cut, full, byte_count);
    if (ones_after_end && length % 8 != 0)
        cut[byte_count - 1] |= (uint8_t)(0xFFu >> (length % 8));
    amq__bitreader r;
    amq__bitreader_init(&r, byte_count ? cut : NULL, length);
    int i = 0;
    for (;; i++) {
        uint64_t before = r.position, v = 0xDEAD;
        int status = get_code(&r, c, &v);
        if (status != AMQ_OK) {
            assert_int_equal(status, AMQ_ECORRUPT);
            assert_int_equal(r.position, before);
            assert_int_equal(v, 0xDEAD);
            break;
        }
        assert_true(i < count);
        assert_true(ends[i] <= length);
        assert_int_equal(v, values[i]);
        assert_int_equal(r.position, ends[i]);
    }
    /* Decoding stopped exactly at the first value that does not fit. */
    assert_true(i == count || ends[i] > length);
    free(cut);
}

static void test_truncated_streams(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED) ^ 5);
    const code codes[] = { { true, 0 },   { true, 5 },       { true, 33 },
                           { false, 10 }, { false, 784931 }, { false, pow2(40) + 3 } };
    enum { COUNT = 200 };
    uint64_t values[COUNT], ends[COUNT];
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++) {
        code c = codes[k];
        uint64_t divisor = c.rice ? pow2((unsigned)c.parameter) : c.parameter;
        amq__bitwriter w;
        amq__bitwriter_init(&w);
        for (int i = 0; i < COUNT; i++) {
            uint64_t q =
                amq_test_below(&rng, 10) == 0 ? amq_test_below(&rng, 150) : amq_test_below(&rng, 4);
            values[i] = q * divisor + amq_test_below(&rng, divisor);
            put_code(&w, c, values[i]);
            ends[i] = w.bit_count;
        }
        uint8_t *bytes;
        size_t byte_count;
        uint64_t bit_count;
        finish(&w, &bytes, &byte_count, &bit_count);
        /* Exact-size copy of the whole stream, so ASan sees any overread. */
        uint8_t *full = malloc(byte_count);
        assert_non_null(full);
        memcpy(full, bytes, byte_count);
        free(bytes);
        for (uint64_t length = 0; length <= bit_count; length++) {
            decode_truncated(full, length, false, c, values, ends, COUNT);
            decode_truncated(full, length, true, c, values, ends, COUNT);
        }
        free(full);
    }
}

/* ---- reader positions and edges -------------------------------------------- */

static void test_reader_seek(void **state)
{
    (void)state;
    /* 19 bits: 1010 1100 | 0011 0101 | 111 */
    const uint8_t stream[] = { 0xAC, 0x35, 0xE0 };
    uint8_t *bytes = malloc(sizeof stream);
    assert_non_null(bytes);
    memcpy(bytes, stream, sizeof stream);
    amq__bitreader r;
    amq__bitreader_init(&r, bytes, 19);
    uint64_t v;
    assert_int_equal(amq__bitreader_seek(&r, 4), AMQ_OK);
    assert_int_equal(amq__bitreader_get(&r, 8, &v), AMQ_OK);
    assert_int_equal(v, 0xC3);
    assert_int_equal(amq__bitreader_seek(&r, 14), AMQ_OK);
    assert_int_equal(amq__bitreader_get_unary(&r, &v), AMQ_OK); /* 0 */
    assert_int_equal(v, 0);
    assert_int_equal(amq__bitreader_get(&r, 4, &v), AMQ_OK);
    assert_int_equal(v, 0xF);
    assert_int_equal(r.position, 19);
    assert_int_equal(amq__bitreader_seek(&r, 19), AMQ_OK);
    assert_int_equal(amq__bitreader_get(&r, 0, &v), AMQ_OK);
    assert_int_equal(v, 0);
    assert_int_equal(amq__bitreader_get(&r, 1, &v), AMQ_ECORRUPT);
    assert_int_equal(amq__bitreader_seek(&r, 20), AMQ_ECORRUPT);
    assert_int_equal(r.position, 19);
    assert_int_equal(amq__bitreader_seek(&r, UINT64_MAX), AMQ_ECORRUPT);
    assert_int_equal(r.position, 19);
    /* The last three bits are all 1: no 0-bit ends the run inside the stream. */
    assert_int_equal(amq__bitreader_seek(&r, 16), AMQ_OK);
    assert_int_equal(amq__bitreader_get_unary(&r, &v), AMQ_ECORRUPT);
    assert_int_equal(r.position, 16);
    assert_int_equal(amq__bitreader_get(&r, 4, &v), AMQ_ECORRUPT);
    assert_int_equal(r.position, 16);
    assert_int_equal(amq__bitreader_seek(&r, 0), AMQ_OK);
    assert_int_equal(amq__bitreader_get_unary(&r, &v), AMQ_OK);
    assert_int_equal(v, 1);
    assert_int_equal(r.position, 2);
    free(bytes);
}

static void test_reader_empty(void **state)
{
    (void)state;
    amq__bitreader r;
    amq__bitreader_init(&r, NULL, 0);
    uint64_t v;
    assert_int_equal(amq__bitreader_get(&r, 0, &v), AMQ_OK);
    assert_int_equal(amq__bitreader_get(&r, 1, &v), AMQ_ECORRUPT);
    assert_int_equal(amq__bitreader_get_unary(&r, &v), AMQ_ECORRUPT);
    assert_int_equal(amq__bitreader_get_rice(&r, 0, &v), AMQ_ECORRUPT);
    assert_int_equal(amq__bitreader_get_golomb(&r, 1, &v), AMQ_ECORRUPT);
    assert_int_equal(amq__bitreader_seek(&r, 0), AMQ_OK);
    assert_int_equal(amq__bitreader_seek(&r, 1), AMQ_ECORRUPT);
    assert_int_equal(r.position, 0);
}

static void test_reader_bad_parameters(void **state)
{
    (void)state;
    const uint8_t byte = 0x00;
    amq__bitreader r;
    amq__bitreader_init(&r, &byte, 8);
    uint64_t v = 7;
    assert_int_equal(amq__bitreader_get(&r, 65, &v), AMQ_EINVAL);
    assert_int_equal(amq__bitreader_get_rice(&r, 64, &v), AMQ_EINVAL);
    assert_int_equal(amq__bitreader_get_golomb(&r, 0, &v), AMQ_EINVAL);
    assert_int_equal(v, 7);
    assert_int_equal(r.position, 0);
}

/* Every width at every offset near the end of an exact-size buffer: the
 * byte-by-byte path, checked against the reference packer's bits. */
static void test_reader_tail_widths(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED) ^ 6);
    enum { BYTES = 24 };
    uint8_t *bytes = malloc(BYTES);
    assert_non_null(bytes);
    for (int i = 0; i < BYTES; i++)
        bytes[i] = (uint8_t)amq_test_next(&rng);
    for (uint64_t length = BYTES * 8 - 15; length <= BYTES * 8; length++) {
        amq__bitreader r;
        amq__bitreader_init(&r, bytes, length);
        for (uint64_t pos = 0; pos <= length; pos++) {
            for (unsigned n = 0; n <= 64; n++) {
                assert_int_equal(amq__bitreader_seek(&r, pos), AMQ_OK);
                uint64_t v = 0;
                int status = amq__bitreader_get(&r, n, &v);
                if (n > length - pos) {
                    assert_int_equal(status, AMQ_ECORRUPT);
                    assert_int_equal(r.position, pos);
                    continue;
                }
                assert_int_equal(status, AMQ_OK);
                uint64_t want = 0;
                for (unsigned k = 0; k < n; k++) {
                    uint64_t bit = pos + k;
                    want = want << 1 | ((bytes[bit / 8] >> (7 - bit % 8)) & 1u);
                }
                assert_int_equal(v, want);
                assert_int_equal(r.position, pos + n);
            }
        }
    }
    free(bytes);
}

/* ---- writer lifecycle and sticky status ----------------------------------- */

static void test_writer_lifecycle(void **state)
{
    (void)state;
    amq__bitwriter w;
    uint8_t *bytes = (uint8_t *)&w;
    size_t byte_count = 99;
    uint64_t bit_count = 99;

    amq__bitwriter_init(&w);
    assert_int_equal(amq__bitwriter_finish(&w, &bytes, &byte_count, &bit_count), AMQ_OK);
    assert_null(bytes);
    assert_int_equal(byte_count, 0);
    assert_int_equal(bit_count, 0);

    /* Reserved but empty: still nothing handed over (and nothing leaked). */
    amq__bitwriter_reserve(&w, 100000);
    assert_int_equal(amq__bitwriter_finish(&w, &bytes, &byte_count, NULL), AMQ_OK);
    assert_null(bytes);

    /* Used, then discarded. */
    for (int i = 0; i < 10000; i++)
        amq__bitwriter_put_golomb(&w, (uint64_t)i * 7919, 784931);
    amq__bitwriter_free(&w);
    assert_null(w.bytes);
    assert_int_equal(w.bit_count, 0);
    amq__bitwriter_free(&w);

    /* Reused after finish. */
    amq__bitwriter_put(&w, 1, 1);
    assert_int_equal(amq__bitwriter_finish(&w, &bytes, &byte_count, NULL), AMQ_OK);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0x80 }, 1);
    free(bytes);
    amq__bitwriter_put(&w, 3, 2);
    assert_int_equal(amq__bitwriter_finish(&w, &bytes, &byte_count, &bit_count), AMQ_OK);
    assert_int_equal(bit_count, 2);
    assert_bytes_equal(bytes, byte_count, (const uint8_t[]){ 0xC0 }, 1);
    free(bytes);
}

/* A stream that would pass 2^64 bits fails with AMQ_ERANGE, and the failure
 * sticks: later puts do nothing and finish reports it and frees the buffer.
 * (The bit count is set directly: writing 2^64 bits is not an option.) */
static void test_writer_sticky_error(void **state)
{
    (void)state;
    amq__bitwriter w;
    amq__bitwriter_init(&w);
    amq__bitwriter_put(&w, 0xABCD, 16);
    w.bit_count = UINT64_MAX - 10;
    amq__bitwriter_put_unary(&w, 20);
    assert_int_equal(w.status, AMQ_ERANGE);
    assert_int_equal(w.bit_count, UINT64_MAX - 10);
    w.bit_count = 16;
    amq__bitwriter_put(&w, 1, 1);
    amq__bitwriter_put_rice(&w, 5, 2);
    assert_int_equal(w.bit_count, 16);
    uint8_t *bytes = (uint8_t *)&w;
    size_t byte_count = 99;
    assert_int_equal(amq__bitwriter_finish(&w, &bytes, &byte_count, NULL), AMQ_ERANGE);
    assert_null(bytes);
    assert_int_equal(byte_count, 0);
    assert_int_equal(w.status, AMQ_OK);
    assert_null(w.bytes);
}

/* ---- bit sink --------------------------------------------------------------- */

/* Where a sink's bytes go: appended to a buffer, each handing checked
 * against the sink's bound; stop_after: refuse the handing after that
 * many (-1: never). */
typedef struct collected {
    uint8_t *bytes;
    size_t len, cap;
    size_t handings;
    long stop_after;
} collected;

static int collect(void *context, const void *data, size_t len)
{
    collected *c = context;
    assert_true(len > 0 && len <= AMQ__BITSINK_BYTES + 8);
    if (c->stop_after >= 0 && (long)c->handings >= c->stop_after)
        return 7;
    c->handings++;
    assert_true(c->len + len <= c->cap);
    memcpy(c->bytes + c->len, data, len);
    c->len += len;
    return 0;
}

/* The sink writes the writer's stream, byte for byte, through its bounded
 * buffer: random values of every width, Rice codes and long unary runs
 * (past the buffer several times over), and a stream that ends on a byte
 * boundary; a refusal from emit stops it and finish returns it. */
static void test_bitsink_matches_writer(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(TEST_SEED) ^ 0x51c);
    for (int round = 0; round < 4; round++) {
        amq__bitwriter w;
        amq__bitwriter_init(&w);
        static amq__bitsink sink;
        collected c = { .cap = 1 << 20, .stop_after = -1 };
        c.bytes = malloc(c.cap);
        assert_non_null(c.bytes);
        amq__bitsink_init(&sink, collect, &c);
        for (int i = 0; i < 20000; i++) {
            uint64_t value = amq_test_next(&rng);
            switch (amq_test_below(&rng, 4)) {
            case 0: {
                unsigned bits = (unsigned)amq_test_below(&rng, 65);
                amq__bitwriter_put(&w, value, bits);
                amq__bitsink_put(&sink, value, bits);
                break;
            }
            case 1: {
                unsigned p = (unsigned)amq_test_below(&rng, 20);
                uint64_t v = (modest_quotient(&rng) << p) | (value & (pow2(p) - 1));
                amq__bitwriter_put_rice(&w, v, p);
                amq__bitsink_put_rice(&sink, v, p);
                break;
            }
            case 2: {
                uint64_t q = amq_test_below(&rng, 50) == 0 ? amq_test_below(&rng, 40000)
                                                           : amq_test_below(&rng, 70);
                amq__bitwriter_put_unary(&w, q);
                amq__bitsink_put_unary(&sink, q);
                break;
            }
            default:
                amq__bitwriter_put(&w, value, 8);
                amq__bitsink_put(&sink, value, 8);
                break;
            }
        }
        if (round == 1) { /* end on a byte boundary */
            unsigned pad = (unsigned)((8 - w.bit_count % 8) % 8);
            amq__bitwriter_put(&w, 0, pad);
            amq__bitsink_put(&sink, 0, pad);
        }
        assert_int_equal(amq__bitsink_finish(&sink), 0);
        uint8_t *bytes = NULL;
        size_t byte_count = 0;
        assert_int_equal(amq__bitwriter_finish(&w, &bytes, &byte_count, NULL), AMQ_OK);
        assert_int_equal(c.len, byte_count);
        assert_memory_equal(c.bytes, bytes, byte_count);
        assert_true(c.handings > 2);
        free(bytes);

        /* Refused at the second handing: nothing more is handed over. */
        collected stopped = { .bytes = c.bytes, .cap = c.cap, .stop_after = 1 };
        amq__bitsink_init(&sink, collect, &stopped);
        for (int i = 0; i < 5000; i++)
            amq__bitsink_put(&sink, amq_test_next(&rng), 64);
        assert_int_equal(amq__bitsink_finish(&sink), 7);
        assert_int_equal(stopped.handings, 1);
        assert_int_equal(stopped.len, AMQ__BITSINK_BYTES);
        free(c.bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitvec_operations),
        cmocka_unit_test(test_bitvec_word_boundaries),
        cmocka_unit_test(test_bitvec_empty),
        cmocka_unit_test(test_bitvec_too_large),
        cmocka_unit_test(test_bitvec_past_4g),
        cmocka_unit_test(test_bitvec_save_load),
        cmocka_unit_test(test_put_exact_bytes),
        cmocka_unit_test(test_put_get_random),
        cmocka_unit_test(test_rice_known_answers),
        cmocka_unit_test(test_rice_round_trip),
        cmocka_unit_test(test_golomb_known_answers),
        cmocka_unit_test(test_golomb_round_trip),
        cmocka_unit_test(test_golomb_widest_divisor),
        cmocka_unit_test(test_golomb_power_of_two_is_rice),
        cmocka_unit_test(test_overflowing_quotient),
        cmocka_unit_test(test_truncated_streams),
        cmocka_unit_test(test_reader_seek),
        cmocka_unit_test(test_reader_empty),
        cmocka_unit_test(test_reader_bad_parameters),
        cmocka_unit_test(test_reader_tail_widths),
        cmocka_unit_test(test_writer_lifecycle),
        cmocka_unit_test(test_writer_sticky_error),
        cmocka_unit_test(test_bitsink_matches_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
