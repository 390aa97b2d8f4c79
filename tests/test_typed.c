/*
 * Tests for the meeting of typed and generic handles (amq_<family>_wrap,
 * amq_<family>_unwrap), for every family:
 *
 *   - a typed filter made with the family's own constructor, wrapped, saves
 *     to memory and to a file; the bytes load back as a generic filter
 *     that answers every key put in, and as the typed original for keys
 *     never put in;
 *   - the loaded handle hands out its typed object, which answers as the
 *     handle does, and a dynamic one takes further keys through the typed
 *     calls that the handle then sees;
 *   - unwrap answers NULL for a handle of another family and for NULL;
 *     wrap refuses NULL arguments with AMQ_EINVAL and a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/fuse.h"
#include "amq/gcs.h"
#include "amq/hfb.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { KEYS = 20000, ABSENT = 50000 };

static char key_text[KEYS + ABSENT][24];
static const void *key_ptr[KEYS + ABSENT];
static size_t key_len[KEYS + ABSENT];

static int setup_keys(void **state)
{
    (void)state;
    for (size_t i = 0; i < KEYS + ABSENT; i++) {
        int n = snprintf(key_text[i], sizeof key_text[i], "%s-%zu", i < KEYS ? "in" : "out", i);
        key_ptr[i] = key_text[i];
        key_len[i] = (size_t)n;
    }
    return 0;
}

/* Save h to memory, load it back and return the loaded handle; the saved
 * bytes must equal what amq_save writes to a file. */
static amq_filter *round_trip(const amq_filter *h)
{
    amq_diag diag = { .message = "" };
    uint8_t *bytes = NULL;
    size_t len = 0;
    assert_int_equal(amq_save_to_memory(&bytes, &len, h, &diag), AMQ_OK);
    char path[] = "/tmp/amq_test_typed_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(amq_save(h, path, &diag), AMQ_OK);
    size_t file_len = 0;
    char *file = amq_test_read_file(path, &file_len);
    unlink(path);
    assert_int_equal(file_len, len);
    assert_memory_equal(file, bytes, len);
    free(file);
    amq_filter *loaded = NULL;
    assert_int_equal(amq_load_from_memory(&loaded, bytes, len, 0, &diag), AMQ_OK);
    free(bytes);
    return loaded;
}

/* Every key put in is "maybe" through the loaded handle; every absent key
 * gets the answer the typed original gave. */
static void expect_same_answers(const amq_filter *loaded, const uint8_t *original_absent)
{
    for (size_t i = 0; i < KEYS; i++)
        assert_int_equal(amq_contains(loaded, key_ptr[i], key_len[i]), 1);
    for (size_t i = 0; i < ABSENT; i++)
        assert_int_equal(amq_contains(loaded, key_ptr[KEYS + i], key_len[KEYS + i]),
                         original_absent[i]);
}

static void test_bloom_family(void **state)
{
    (void)state;
    amq_bloom_params params;
    amq_bloom_params_init(&params);
    params.capacity = KEYS;
    params.fpr = 0.01;
    amq_bloom *typed = NULL;
    assert_int_equal(amq_bloom_new(&typed, &params, NULL), AMQ_OK);
    for (size_t i = 0; i < KEYS; i++)
        amq_bloom_add(typed, key_ptr[i], key_len[i]);
    uint8_t *absent = malloc(ABSENT);
    amq_bloom_contains_many(absent, typed, key_ptr + KEYS, key_len + KEYS, ABSENT);

    amq_filter *h = NULL;
    assert_int_equal(amq_bloom_wrap(&h, typed, NULL), AMQ_OK);
    assert_ptr_equal(amq_bloom_unwrap(h), typed);
    assert_null(amq_cuckoo_unwrap(h));
    assert_null(amq_blocked_bloom_unwrap(h));
    amq_filter *loaded = round_trip(h);
    expect_same_answers(loaded, absent);
    amq_bloom *inner = amq_bloom_unwrap(loaded);
    assert_non_null(inner);
    assert_int_equal(amq_bloom_bits(inner), amq_bloom_bits(typed));
    /* A key added through the typed object is seen by the handle. */
    assert_int_equal(amq_contains(loaded, "added later", 11),
                     amq_bloom_contains(inner, "added later", 11));
    amq_bloom_add(inner, "added later", 11);
    assert_int_equal(amq_contains(loaded, "added later", 11), 1);
    amq_free(loaded);
    amq_free(h); /* frees typed */
    free(absent);
}

static void test_blocked_and_counting_and_scalable(void **state)
{
    (void)state;
    uint8_t *absent = malloc(ABSENT);

    amq_blocked_bloom_params bp;
    amq_blocked_bloom_params_init(&bp);
    bp.capacity = KEYS;
    amq_blocked_bloom *blocked = NULL;
    assert_int_equal(amq_blocked_bloom_new(&blocked, &bp, NULL), AMQ_OK);
    for (size_t i = 0; i < KEYS; i++)
        amq_blocked_bloom_add(blocked, key_ptr[i], key_len[i]);
    amq_blocked_bloom_contains_many(absent, blocked, key_ptr + KEYS, key_len + KEYS, ABSENT);
    amq_filter *h = NULL;
    assert_int_equal(amq_blocked_bloom_wrap(&h, blocked, NULL), AMQ_OK);
    amq_filter *loaded = round_trip(h);
    expect_same_answers(loaded, absent);
    assert_non_null(amq_blocked_bloom_unwrap(loaded));
    assert_null(amq_bloom_unwrap(loaded));
    amq_free(loaded);
    amq_free(h);

    amq_counting_bloom_params cp;
    amq_counting_bloom_params_init(&cp);
    cp.capacity = KEYS;
    amq_counting_bloom *counting = NULL;
    assert_int_equal(amq_counting_bloom_new(&counting, &cp, NULL), AMQ_OK);
    for (size_t i = 0; i < KEYS; i++)
        amq_counting_bloom_add(counting, key_ptr[i], key_len[i]);
    amq_counting_bloom_contains_many(absent, counting, key_ptr + KEYS, key_len + KEYS, ABSENT);
    assert_int_equal(amq_counting_bloom_wrap(&h, counting, NULL), AMQ_OK);
    loaded = round_trip(h);
    expect_same_answers(loaded, absent);
    amq_counting_bloom *inner = amq_counting_bloom_unwrap(loaded);
    assert_non_null(inner);
    /* A removal through the typed object is seen by the handle. */
    uint32_t copies = amq_counting_bloom_count(inner, key_ptr[0], key_len[0]);
    assert_true(copies >= 1);
    assert_int_equal(amq_counting_bloom_remove(inner, key_ptr[0], key_len[0]), AMQ_OK);
    assert_int_equal(amq_counting_bloom_count(inner, key_ptr[0], key_len[0]), copies - 1);
    assert_int_equal(amq_contains(loaded, key_ptr[0], key_len[0]),
                     amq_counting_bloom_contains(inner, key_ptr[0], key_len[0]));
    amq_free(loaded);
    amq_free(h);

    amq_scalable_bloom_params sp;
    amq_scalable_bloom_params_init(&sp);
    sp.capacity = 1000;
    amq_scalable_bloom *scalable = NULL;
    assert_int_equal(amq_scalable_bloom_new(&scalable, &sp, NULL), AMQ_OK);
    for (size_t i = 0; i < KEYS; i++)
        assert_true(amq_scalable_bloom_add(scalable, key_ptr[i], key_len[i]) >= 0);
    amq_scalable_bloom_contains_many(absent, scalable, key_ptr + KEYS, key_len + KEYS, ABSENT);
    assert_int_equal(amq_scalable_bloom_wrap(&h, scalable, NULL), AMQ_OK);
    loaded = round_trip(h);
    expect_same_answers(loaded, absent);
    assert_int_equal(amq_scalable_bloom_stages(amq_scalable_bloom_unwrap(loaded)),
                     amq_scalable_bloom_stages(scalable));
    amq_free(loaded);
    amq_free(h);
    free(absent);
}

static void test_cuckoo_family(void **state)
{
    (void)state;
    amq_cuckoo_params params;
    amq_cuckoo_params_init(&params);
    params.capacity = KEYS;
    amq_cuckoo *typed = NULL;
    assert_int_equal(amq_cuckoo_new(&typed, &params, NULL), AMQ_OK);
    for (size_t i = 0; i < KEYS; i++)
        assert_int_equal(amq_cuckoo_add(typed, key_ptr[i], key_len[i]), AMQ_OK);
    uint8_t *absent = malloc(ABSENT);
    amq_cuckoo_contains_many(absent, typed, key_ptr + KEYS, key_len + KEYS, ABSENT);
    amq_filter *h = NULL;
    assert_int_equal(amq_cuckoo_wrap(&h, typed, NULL), AMQ_OK);
    amq_filter *loaded = round_trip(h);
    expect_same_answers(loaded, absent);
    amq_cuckoo *inner = amq_cuckoo_unwrap(loaded);
    assert_non_null(inner);
    assert_int_equal(amq_cuckoo_keys(inner), KEYS);
    assert_int_equal(amq_cuckoo_remove(inner, key_ptr[1], key_len[1]), AMQ_OK);
    assert_int_equal(amq_cuckoo_keys(inner), KEYS - 1);
    amq_free(loaded);
    amq_free(h);
    free(absent);
}

static void test_static_families(void **state)
{
    (void)state;
    uint8_t *absent = malloc(ABSENT);
    amq_diag diag = { .message = "" };

    amq_fuse_params fp;
    amq_fuse_params_init(&fp);
    for (uint32_t bits = 8; bits <= 16; bits += 8) {
        fp.fingerprint_bits = bits;
        amq_fuse *fuse = NULL;
        assert_int_equal(amq_fuse_build(&fuse, &fp, key_ptr, key_len, KEYS, &diag), AMQ_OK);
        amq_fuse_contains_many(absent, fuse, key_ptr + KEYS, key_len + KEYS, ABSENT);
        amq_filter *h = NULL;
        assert_int_equal(amq_fuse_wrap(&h, fuse, NULL), AMQ_OK);
        assert_string_equal(amq_filter_family(h), bits == 8 ? "fuse8" : "fuse16");
        amq_filter *loaded = round_trip(h);
        expect_same_answers(loaded, absent);
        assert_int_equal(amq_fuse_fingerprint_bits(amq_fuse_unwrap(loaded)), bits);
        amq_free(loaded);
        amq_free(h);
    }

    amq_gcs_params gp;
    amq_gcs_params_init(&gp);
    amq_gcs *gcs = NULL;
    assert_int_equal(amq_gcs_build(&gcs, &gp, key_ptr, key_len, KEYS, &diag), AMQ_OK);
    assert_int_equal(amq_gcs_contains_many(absent, gcs, key_ptr + KEYS, key_len + KEYS, ABSENT),
                     AMQ_OK);
    amq_filter *h = NULL;
    assert_int_equal(amq_gcs_wrap(&h, gcs, NULL), AMQ_OK);
    amq_filter *loaded = round_trip(h);
    expect_same_answers(loaded, absent);
    assert_int_equal(amq_gcs_keys(amq_gcs_unwrap(loaded)), KEYS);
    amq_free(loaded);
    amq_free(h);

    amq_hfb_params hp;
    amq_hfb_params_init(&hp);
    hp.ids = AMQ_HFB_IDS_MD5;
    amq_hfb *hfb = NULL;
    assert_int_equal(amq_hfb_build(&hfb, &hp, key_ptr, key_len, KEYS, &diag), AMQ_OK);
    for (size_t i = 0; i < ABSENT; i++)
        absent[i] = (uint8_t)amq_hfb_contains(hfb, key_ptr[KEYS + i], key_len[KEYS + i]);
    assert_int_equal(amq_hfb_wrap(&h, hfb, NULL), AMQ_OK);
    loaded = round_trip(h);
    expect_same_answers(loaded, absent);
    assert_int_equal(amq_hfb_keys(amq_hfb_unwrap(loaded)), KEYS);
    amq_free(loaded);
    amq_free(h);
    free(absent);
}

static void test_refusals(void **state)
{
    (void)state;
    amq_diag diag = { .message = "" };
    amq_filter *h = (amq_filter *)&h;
    assert_int_equal(amq_bloom_wrap(&h, NULL, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "amq_bloom_wrap"));
    assert_null(h);
    amq_bloom_params params;
    amq_bloom_params_init(&params);
    params.capacity = 10;
    amq_bloom *typed = NULL;
    assert_int_equal(amq_bloom_new(&typed, &params, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_wrap(NULL, typed, &diag), AMQ_EINVAL);
    amq_bloom_free(typed);
    assert_null(amq_bloom_unwrap(NULL));
    assert_null(amq_fuse_unwrap(NULL));
    /* The typed constructors say what was wrong, as the spec parser does. */
    params.capacity = 0;
    params.bits = 0;
    diag.message[0] = '\0';
    assert_int_equal(amq_bloom_new(&typed, &params, &diag), AMQ_EINVAL);
    assert_true(strlen(diag.message) > 0);
    amq_cuckoo_params cuckoo;
    amq_cuckoo_params_init(&cuckoo);
    cuckoo.capacity = 100;
    cuckoo.fingerprint_bits = 40;
    amq_cuckoo *c = NULL;
    diag.message[0] = '\0';
    assert_int_equal(amq_cuckoo_new(&c, &cuckoo, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "40"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bloom_family),
        cmocka_unit_test(test_blocked_and_counting_and_scalable),
        cmocka_unit_test(test_cuckoo_family),
        cmocka_unit_test(test_static_families),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup_keys, NULL);
}
