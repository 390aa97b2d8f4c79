/* Tests for amq_image_peek: an image's length and family from its header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER 64

/* A saved filter of family (a few keys in it), in memory. */
static uint8_t *saved_image(size_t *len, const char *family)
{
    /* 16 bytes each: an hfb filter takes IDs, and every family keys. */
    static const char *const words[] = { "alpha...........", "beta............", "gamma...........",
                                         "delta...........", "epsilon........." };
    const void *keys[5];
    size_t lens[5];
    for (size_t i = 0; i < 5; i++) {
        keys[i] = words[i];
        lens[i] = strlen(words[i]);
    }
    char spec[64];
    amq_filter *f = NULL;
    amq_diag diag = { "", 0 };
    if (amq_family_is_static(family)) {
        snprintf(spec, sizeof spec, "%s", family);
        if (amq_build(&f, spec, keys, lens, 5, &diag) != AMQ_OK)
            fail_msg("building %s: %s", family, diag.message);
    } else {
        snprintf(spec, sizeof spec, "%s n=100", family);
        if (amq_new(&f, spec, &diag) != AMQ_OK)
            fail_msg("making %s: %s", spec, diag.message);
        for (size_t i = 0; i < 5; i++)
            assert_true(amq_add(f, keys[i], lens[i]) >= 0);
    }
    uint8_t *image = NULL;
    assert_int_equal(amq_save_to_memory(&image, len, f, &diag), AMQ_OK);
    amq_free(f);
    return image;
}

static void store_u32le(uint8_t *at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        at[i] = (uint8_t)(v >> (8 * i));
}

/* Every family: the whole image, and every prefix holding the header,
 * give the image's length and the name amq_filter_family gives. */
static void test_every_family(void **state)
{
    (void)state;
    size_t families = 0;
    for (const char *family; (family = amq_family_at(families)) != NULL; families++) {
        size_t len = 0;
        uint8_t *image = saved_image(&len, family);
        for (size_t head = HEADER; head <= len; head += head < 2 * HEADER ? 1 : 97) {
            uint64_t bytes = 0;
            const char *name = NULL;
            amq_diag diag = { "", 0 };
            int status = amq_image_peek(&bytes, &name, image, head, &diag);
            if (status != AMQ_OK)
                fail_msg("%s, %zu of %zu bytes: %s (%s)", family, head, len, amq_strerror(status),
                         diag.message);
            assert_int_equal(bytes, len);
            assert_non_null(name);
            assert_string_equal(name, family);
        }
        uint64_t bytes = 0;
        assert_int_equal(amq_image_peek(&bytes, NULL, image, len, NULL), AMQ_OK);
        assert_int_equal(bytes, len);
        amq_buffer_free(image);
    }
    assert_true(families >= 9);
}

/* Fewer than 64 bytes that begin the magic ask for the rest; ones that
 * do not are no amq file, however few. */
static void test_short_heads(void **state)
{
    (void)state;
    size_t len = 0;
    uint8_t *image = saved_image(&len, "bloom");
    for (size_t head = 0; head < HEADER; head++) {
        uint64_t bytes = 7;
        const char *name = "unchanged";
        amq_diag diag = { "", 0 };
        assert_int_equal(amq_image_peek(&bytes, &name, image, head, &diag), AMQ_ERANGE);
        assert_int_equal(bytes, HEADER);
        assert_null(name);
        assert_non_null(strstr(diag.message, "64-byte header"));
    }
    uint64_t bytes = 7;
    assert_int_equal(amq_image_peek(&bytes, NULL, NULL, 0, NULL), AMQ_ERANGE);
    assert_int_equal(bytes, HEADER);

    uint8_t other[HEADER];
    memcpy(other, image, HEADER);
    other[0] = 'P';
    for (size_t head = 1; head <= HEADER; head++) {
        amq_diag diag = { "", 0 };
        assert_int_equal(amq_image_peek(&bytes, NULL, other, head, &diag), AMQ_EFORMAT);
        assert_int_equal(bytes, 0);
        assert_non_null(strstr(diag.message, "not an amq file"));
    }
    /* Line endings converted: a text-mode transfer, said as amq_load says it. */
    memcpy(other, image, HEADER);
    other[4] = '\n';
    amq_diag diag = { "", 0 };
    assert_int_equal(amq_image_peek(&bytes, NULL, other, 6, &diag), AMQ_EFORMAT);
    assert_non_null(strstr(diag.message, "text mode"));
    amq_buffer_free(image);
}

/* A damaged header answers what amq_load_from_memory answers of the whole
 * image, with the same message; the payload and checksum are not read. */
static void test_damaged_headers(void **state)
{
    (void)state;
    size_t len = 0;
    uint8_t *image = saved_image(&len, "cuckoo");
    struct {
        size_t offset;
        uint32_t value;
        int status;
    } cases[] = {
        { 8, 0, AMQ_ECORRUPT },            /* version 0 */
        { 8, 3, AMQ_EVERSION },            /* a newer version */
        { 12, 0, AMQ_ECORRUPT },           /* family 0 */
        { 12, 64, AMQ_ECORRUPT },          /* family past 63 */
        { 16, 9, AMQ_ECORRUPT },           /* hash kind */
        { 20, 1, AMQ_ECORRUPT },           /* flags in version 1 */
        { 40, 5000, AMQ_ECORRUPT },        /* parameter block past its cap */
        { 48, 1, AMQ_ECORRUPT },           /* a reserved byte */
        { 60, 0xc0000000u, AMQ_ECORRUPT }, /* payload length past 2^63 */
    };
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(copy, image, len);
        store_u32le(copy + cases[i].offset, cases[i].value);
        uint64_t bytes = 7;
        const char *name = "unchanged";
        amq_diag peek = { "", 0 }, load = { "", 0 };
        int status = amq_image_peek(&bytes, &name, copy, HEADER, &peek);
        if (status != cases[i].status)
            fail_msg("offset %zu = %u: %s (%s)", cases[i].offset, cases[i].value,
                     amq_strerror(status), peek.message);
        assert_int_equal(bytes, 0);
        assert_null(name);
        amq_filter *f = NULL;
        assert_int_equal(amq_load_from_memory(&f, copy, len, 0, &load), cases[i].status);
        assert_string_equal(peek.message, load.message);
        assert_int_equal(peek.offset, load.offset);
    }
    /* A damaged payload is no concern of the header's. */
    memcpy(copy, image, len);
    copy[len - 1] ^= 1;
    uint64_t bytes = 0;
    assert_int_equal(amq_image_peek(&bytes, NULL, copy, len, NULL), AMQ_OK);
    assert_int_equal(bytes, len);
    free(copy);
    amq_buffer_free(image);
}

/* The containers that are not filters have their own names; an id this
 * build does not know has none, and its length is still told. */
static void test_other_families(void **state)
{
    (void)state;
    size_t len = 0;
    uint8_t *image = saved_image(&len, "bloom");
    struct {
        uint32_t id;
        const char *name;
    } cases[] = { { 10, "bundle" }, { 11, "frontier" }, { 12, NULL }, { 63, NULL } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        store_u32le(image + 12, cases[i].id);
        uint64_t bytes = 0;
        const char *name = "unchanged";
        assert_int_equal(amq_image_peek(&bytes, &name, image, HEADER, NULL), AMQ_OK);
        assert_int_equal(bytes, len);
        if (cases[i].name)
            assert_string_equal(name, cases[i].name);
        else
            assert_null(name);
    }
    amq_buffer_free(image);
}

static void test_null_arguments(void **state)
{
    (void)state;
    size_t len = 0;
    uint8_t *image = saved_image(&len, "bloom");
    const char *name = "unchanged";
    assert_int_equal(amq_image_peek(NULL, &name, image, len, NULL), AMQ_EINVAL);
    assert_null(name);
    uint64_t bytes = 7;
    amq_diag diag = { "", 0 };
    assert_int_equal(amq_image_peek(&bytes, NULL, NULL, 1, &diag), AMQ_EINVAL);
    assert_int_equal(bytes, 0);
    assert_non_null(strstr(diag.message, "head"));
    amq_buffer_free(image);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_family),    cmocka_unit_test(test_short_heads),
        cmocka_unit_test(test_damaged_headers), cmocka_unit_test(test_other_families),
        cmocka_unit_test(test_null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
