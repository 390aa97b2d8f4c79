/*
 * Tests for the structs that carry their size (docs/CONVENTIONS.md,
 * "Growth"): callers compiled against an older, shorter layout and a
 * newer, longer one, as a program built against another version of the
 * headers would be.
 *
 * The "older" layouts below are prefixes of today's structs, declared here
 * as an earlier header would have declared them; the "newer" ones are
 * today's structs with a field appended. Each is handed to the library
 * with struct_size set to its own sizeof.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bundle.h"
#include "amq/cuckoo.h"
#include "amq/frontier.h"
#include "amq/fuse.h"
#include "amq/gcs.h"
#include "amq/hfb.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GUARD 0xA5

/* amq_cuckoo_params as a header that ended at fingerprint_bits declared
 * it. */
typedef struct older_cuckoo_params {
    size_t struct_size;
    uint64_t capacity;
    double fpr;
    uint32_t fingerprint_bits;
} older_cuckoo_params;

/* amq_cuckoo_params with a field a later header might add. */
typedef struct newer_cuckoo_params {
    amq_cuckoo_params today;
    uint64_t later_field;
} newer_cuckoo_params;

/* amq_info as a header that ended at keys declared it. */
typedef struct older_info {
    size_t struct_size;
    const char *family;
    uint64_t capacity;
    uint64_t keys;
} older_info;

typedef struct newer_info {
    amq_info today;
    uint64_t later_field[4];
} newer_info;

static amq_filter *wrap_cuckoo(amq_cuckoo *typed)
{
    amq_filter *f = NULL;
    assert_int_equal(amq_cuckoo_wrap(&f, typed, NULL), AMQ_OK);
    return f;
}

static void test_older_params_take_the_defaults(void **state)
{
    (void)state;
    /* The older struct sits in a larger buffer whose tail is a guard: the
     * library must neither write nor act on anything past its layout. */
    unsigned char buffer[sizeof(amq_cuckoo_params) + 64];
    memset(buffer, GUARD, sizeof buffer);
    older_cuckoo_params *older = (older_cuckoo_params *)(void *)buffer;
    amq_cuckoo_params_init_sized((amq_cuckoo_params *)(void *)older, sizeof *older);
    assert_int_equal(older->struct_size, sizeof *older);
    assert_int_equal(older->capacity, 0);
    for (size_t i = sizeof *older; i < sizeof buffer; i++)
        assert_int_equal(buffer[i], GUARD);
    older->capacity = 5000;
    older->fingerprint_bits = 12;

    amq_cuckoo *from_older = NULL;
    assert_int_equal(
        amq_cuckoo_new(&from_older, (const amq_cuckoo_params *)(const void *)older, NULL), AMQ_OK);

    amq_cuckoo_params today;
    amq_cuckoo_params_init(&today);
    assert_int_equal(today.struct_size, sizeof today);
    today.capacity = 5000;
    today.fingerprint_bits = 12;
    amq_cuckoo *from_today = NULL;
    assert_int_equal(amq_cuckoo_new(&from_today, &today, NULL), AMQ_OK);

    amq_filter *a = wrap_cuckoo(from_older), *b = wrap_cuckoo(from_today);
    assert_int_equal(amq_add(a, "key", 3), AMQ_OK);
    assert_int_equal(amq_add(b, "key", 3), AMQ_OK);
    amq_test_assert_same_image(a, b);
    amq_free(a);
    amq_free(b);
}

static void test_zeroed_params_are_the_first_layout(void **state)
{
    (void)state;
    amq_cuckoo_params zeroed = { .capacity = 1000 };
    assert_int_equal(zeroed.struct_size, 0);
    amq_cuckoo *f = NULL;
    assert_int_equal(amq_cuckoo_new(&f, &zeroed, NULL), AMQ_OK);
    assert_int_equal(amq_cuckoo_capacity(f), 1000);
    amq_cuckoo_free(f);

    amq_fuse_params fuse = { .fingerprint_bits = 16 };
    const void *keys[1] = { "k" };
    size_t lens[1] = { 1 };
    amq_fuse *fuse_filter = NULL;
    assert_int_equal(amq_fuse_build(&fuse_filter, &fuse, keys, lens, 1, NULL), AMQ_OK);
    assert_int_equal(amq_fuse_fingerprint_bits(fuse_filter), 16);
    amq_fuse_free(fuse_filter);
}

static void test_newer_params_refuse_unknown_fields(void **state)
{
    (void)state;
    newer_cuckoo_params newer;
    amq_cuckoo_params_init_sized(&newer.today, sizeof newer);
    assert_int_equal(newer.today.struct_size, sizeof newer);
    assert_int_equal(newer.later_field, 0);
    newer.today.capacity = 1000;

    /* Left unset, the field this library lacks asks for nothing. */
    amq_cuckoo *f = NULL;
    assert_int_equal(amq_cuckoo_new(&f, &newer.today, NULL), AMQ_OK);
    amq_cuckoo_free(f);

    /* Set, it is refused, not ignored. */
    newer.later_field = 7;
    amq_diag diag;
    f = NULL;
    assert_int_equal(amq_cuckoo_new(&f, &newer.today, &diag), AMQ_EUNSUPPORTED);
    assert_null(f);
    assert_non_null(strstr(diag.message, "amq_cuckoo_params"));
    assert_non_null(strstr(diag.message, "does not have"));

    /* A struct_size smaller than the field itself is no layout at all. */
    amq_cuckoo_params broken;
    amq_cuckoo_params_init(&broken);
    broken.capacity = 1000;
    broken.struct_size = 3;
    assert_int_equal(amq_cuckoo_new(&f, &broken, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "struct_size 3"));
}

/* Every other params struct and the frontier's options take the same
 * path: a newer caller's unknown field is refused for each. */
static void test_every_params_struct_reads_its_size(void **state)
{
    (void)state;
    const void *keys[2] = { "a", "0123456789abcdef" };
    size_t lens[2] = { 1, 16 };
    amq_diag diag;
    struct {
        amq_fuse_params today;
        uint64_t later;
    } fuse;
    amq_fuse_params_init_sized(&fuse.today, sizeof fuse);
    fuse.later = 1;
    amq_fuse *fuse_filter = NULL;
    assert_int_equal(amq_fuse_build(&fuse_filter, &fuse.today, keys, lens, 1, &diag),
                     AMQ_EUNSUPPORTED);
    assert_non_null(strstr(diag.message, "amq_fuse_params"));
    fuse.later = 0;
    assert_int_equal(amq_fuse_build(&fuse_filter, &fuse.today, keys, lens, 1, NULL), AMQ_OK);
    amq_fuse_free(fuse_filter);

    struct {
        amq_gcs_params today;
        uint64_t later;
    } gcs;
    amq_gcs_params_init_sized(&gcs.today, sizeof gcs);
    gcs.later = 1;
    amq_gcs *gcs_filter = NULL;
    assert_int_equal(amq_gcs_build(&gcs_filter, &gcs.today, keys, lens, 1, &diag),
                     AMQ_EUNSUPPORTED);
    assert_non_null(strstr(diag.message, "amq_gcs_params"));
    gcs.later = 0;
    assert_int_equal(amq_gcs_build(&gcs_filter, &gcs.today, keys, lens, 1, NULL), AMQ_OK);
    amq_gcs_free(gcs_filter);

    struct {
        amq_hfb_params today;
        uint64_t later;
    } hfb;
    amq_hfb_params_init_sized(&hfb.today, sizeof hfb);
    hfb.later = 1;
    amq_hfb *hfb_filter = NULL;
    assert_int_equal(amq_hfb_build(&hfb_filter, &hfb.today, keys + 1, lens + 1, 1, &diag),
                     AMQ_EUNSUPPORTED);
    assert_non_null(strstr(diag.message, "amq_hfb_params"));
    hfb.later = 0;
    assert_int_equal(amq_hfb_build(&hfb_filter, &hfb.today, keys + 1, lens + 1, 1, NULL), AMQ_OK);
    amq_hfb_free(hfb_filter);

    struct {
        amq_frontier_options today;
        uint64_t later;
    } options;
    amq_frontier_options_init_sized(&options.today, sizeof options);
    options.later = 1;
    char dir[] = "/tmp/amq-struct-size-XXXXXX";
    assert_non_null(mkdtemp(dir));
    amq_frontier *frontier = NULL;
    assert_int_equal(amq_frontier_open(&frontier, dir, &options.today, &diag), AMQ_EUNSUPPORTED);
    assert_non_null(strstr(diag.message, "amq_frontier_options"));
    assert_null(frontier);
    /* Refused before it touched the directory. */
    assert_int_equal(rmdir(dir), 0);
}

static void test_older_info_gets_its_fields_only(void **state)
{
    (void)state;
    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, "cuckoo n=1000", NULL), AMQ_OK);
    assert_int_equal(amq_add(f, "x", 1), AMQ_OK);
    amq_info today;
    assert_int_equal(amq_info_get(&today, f), AMQ_OK);
    assert_int_equal(today.struct_size, sizeof today);

    unsigned char buffer[sizeof(amq_info) + 64];
    memset(buffer, GUARD, sizeof buffer);
    older_info *older = (older_info *)(void *)buffer;
    assert_int_equal(amq_info_get_sized((amq_info *)(void *)older, sizeof *older, f), AMQ_OK);
    assert_int_equal(older->struct_size, sizeof *older);
    assert_string_equal(older->family, "cuckoo");
    assert_int_equal(older->capacity, today.capacity);
    assert_int_equal(older->keys, 1);
    for (size_t i = sizeof *older; i < sizeof buffer; i++)
        assert_int_equal(buffer[i], GUARD);

    newer_info newer;
    memset(&newer, GUARD, sizeof newer);
    assert_int_equal(amq_info_get_sized(&newer.today, sizeof newer, f), AMQ_OK);
    assert_int_equal(newer.today.struct_size, sizeof newer);
    assert_int_equal(newer.today.keys, 1);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(newer.later_field[i], 0);

    assert_int_equal(amq_info_get_sized(&today, 3, f), AMQ_EINVAL);

    /* The option descriptions and a bundle's members take the same rule. */
    struct {
        size_t struct_size;
        const char *name;
    } older_option;
    memset(&older_option, GUARD, sizeof older_option);
    assert_int_equal(amq_family_option_sized((amq_option_info *)(void *)&older_option,
                                             sizeof older_option, "cuckoo", 0),
                     AMQ_OK);
    assert_int_equal(older_option.struct_size, sizeof older_option);
    amq_option_info option;
    assert_int_equal(amq_family_option(&option, "cuckoo", 0), AMQ_OK);
    assert_string_equal(older_option.name, option.name);
    amq_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_older_params_take_the_defaults),
        cmocka_unit_test(test_zeroed_params_are_the_first_layout),
        cmocka_unit_test(test_newer_params_refuse_unknown_fields),
        cmocka_unit_test(test_every_params_struct_reads_its_size),
        cmocka_unit_test(test_older_info_gets_its_fields_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
