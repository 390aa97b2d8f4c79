/*
 * The byte order of the helpers every saved field goes through: the
 * little-endian loads and stores of src/core/util.h, the big-endian load of
 * the Golomb decoder, the packed fields and the saved words of a bit vector
 * (src/core/bits.h). Each is checked against bytes written out by hand, so
 * the test means the same on any host; scripts/big-endian-test.sh also runs
 * it on s390x.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "core/bits.h"
#include "core/util.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SEED 0xb1e0b1e0ULL
#define SENTINEL  0xa5

/* The n bytes at p as a little-endian number, one byte at a time. */
static uint64_t reference_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static const uint8_t counting[8] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
static const uint8_t high[8] = { 0xf8, 0x80, 0xff, 0x90, 0xfe, 0xa0, 0xfd, 0xb0 };

static void test_loads_known_answers(void **state)
{
    (void)state;
    assert_int_equal(amq__load_u16le(counting), 0x0201);
    assert_int_equal(amq__load_u32le(counting), 0x04030201);
    assert_true(amq__load_u64le(counting) == 0x0807060504030201ULL);
    assert_true(amq__load_u64be(counting) == 0x0102030405060708ULL);
    /* Bytes with the high bit set: no sign extension into the next byte. */
    assert_int_equal(amq__load_u16le(high), 0x80f8);
    assert_true(amq__load_u32le(high) == 0x90ff80f8UL);
    assert_true(amq__load_u64le(high) == 0xb0fda0fe90ff80f8ULL);
    assert_true(amq__load_u64be(high) == 0xf880ff90fea0fdb0ULL);
}

static void test_stores_known_answers(void **state)
{
    (void)state;
    uint8_t b[8];
    amq__store_u16le(b, 0x0201);
    assert_memory_equal(b, counting, 2);
    amq__store_u32le(b, 0x04030201);
    assert_memory_equal(b, counting, 4);
    amq__store_u64le(b, 0x0807060504030201ULL);
    assert_memory_equal(b, counting, 8);
    amq__store_u64le(b, 0xb0fda0fe90ff80f8ULL);
    assert_memory_equal(b, high, 8);
}

/* At every offset (aligned or not), a store writes exactly its bytes,
 * least significant first, and a load reads them back; both agree with the
 * byte-at-a-time reference. */
static void test_unaligned_round_trips(void **state)
{
    (void)state;
    amq_test_rng rng = { TEST_SEED };
    uint8_t buf[24];
    for (unsigned trial = 0; trial < 2000; trial++) {
        uint64_t v = amq_test_next(&rng);
        unsigned width = 2u << (trial % 3); /* 2, 4, 8 bytes */
        size_t at = (size_t)amq_test_below(&rng, sizeof buf - width + 1);
        memset(buf, SENTINEL, sizeof buf);
        if (width == 2)
            amq__store_u16le(buf + at, (uint16_t)v);
        else if (width == 4)
            amq__store_u32le(buf + at, (uint32_t)v);
        else
            amq__store_u64le(buf + at, v);
        for (unsigned i = 0; i < width; i++)
            assert_int_equal(buf[at + i], (uint8_t)(v >> (8 * i)));
        for (size_t i = 0; i < sizeof buf; i++)
            if (i < at || i >= at + width)
                assert_int_equal(buf[i], SENTINEL);
        uint64_t mask = width == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * width)) - 1;
        assert_true(reference_le(buf + at, width) == (v & mask));
        uint64_t back = width == 2   ? amq__load_u16le(buf + at)
                        : width == 4 ? amq__load_u32le(buf + at)
                                     : amq__load_u64le(buf + at);
        assert_true(back == (v & mask));
        if (width == 8) {
            uint64_t be = 0;
            for (unsigned i = 0; i < 8; i++)
                be = be << 8 | buf[at + i];
            assert_true(amq__load_u64be(buf + at) == be);
        }
    }
}

/* Packed fields: field i of width w is bits i*w .. i*w + w - 1 of the
 * array, bit j being bit j % 8 of byte j / 8. */
static void test_packed_fields_layout(void **state)
{
    (void)state;
    uint8_t b[3 + AMQ__PACKED_PADDING];
    memset(b, 0, sizeof b);
    amq__packed_set(b, 0, 12, 0xabc);
    amq__packed_set(b, 12, 12, 0x123);
    static const uint8_t expected[3] = { 0xbc, 0x3a, 0x12 };
    assert_memory_equal(b, expected, 3);
    for (size_t i = 3; i < sizeof b; i++)
        assert_int_equal(b[i], 0);
    assert_int_equal(amq__packed_get(b, 0, 12), 0xabc);
    assert_int_equal(amq__packed_get(b, 12, 12), 0x123);
    assert_int_equal(amq__packed_get(b, 4, 8), 0xab);

    /* Random fields of every width at every bit offset, against a
     * bit-at-a-time reading of the bytes. */
    amq_test_rng rng = { TEST_SEED + 1 };
    uint8_t wide[32 + AMQ__PACKED_PADDING];
    for (unsigned width = 1; width <= 57; width++) {
        for (uint64_t bit = 0; bit < 64; bit += 7) {
            memset(wide, 0, sizeof wide);
            uint64_t v = amq_test_next(&rng) & (((uint64_t)1 << width) - 1);
            amq__packed_set(wide, bit, width, v);
            uint64_t read = 0;
            for (unsigned k = 0; k < width; k++) {
                uint64_t j = bit + k;
                read |= (uint64_t)((wide[j / 8] >> (j % 8)) & 1) << k;
            }
            assert_true(read == v);
            assert_true(amq__packed_get(wide, bit, width) == v);
        }
    }
}

/* A bit vector saves its words little-endian: bit i is bit i % 8 of byte
 * i / 8, whatever the host; loading those bytes gives the same bits. */
static void test_bitvec_saved_words(void **state)
{
    (void)state;
    amq__bitvec v;
    assert_int_equal(amq__bitvec_init(&v, 200), AMQ_OK);
    static const uint64_t bits[] = { 0, 9, 63, 64, 127, 130, 199 };
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        amq__bitvec_set(&v, bits[i]);
    amq__piece piece = amq__bitvec_piece(&v);
    assert_int_equal(piece.len, 32);
    uint8_t words[32];
    amq__piece_copy(words, &piece);
    uint8_t expected[32] = { 0 };
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        expected[bits[i] / 8] |= (uint8_t)(1u << (bits[i] % 8));
    assert_memory_equal(words, expected, sizeof expected);
    assert_int_equal(expected[0], 0x01);
    assert_int_equal(expected[1], 0x02);
    assert_int_equal(expected[7], 0x80);
    assert_int_equal(expected[24], 0x80);

    amq__bitvec back;
    assert_int_equal(amq__bitvec_load_words(&back, 200, expected, sizeof expected, NULL), AMQ_OK);
    for (uint64_t i = 0; i < 200; i++)
        assert_int_equal(amq__bitvec_get(&back, i), amq__bitvec_get(&v, i));
    assert_true(amq__bitvec_get(&back, 130));
    amq__bitvec_free(&back);
    amq__bitvec_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_known_answers),   cmocka_unit_test(test_stores_known_answers),
        cmocka_unit_test(test_unaligned_round_trips), cmocka_unit_test(test_packed_fields_layout),
        cmocka_unit_test(test_bitvec_saved_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
