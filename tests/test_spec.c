/*
 * Tests for the spec parser (src/core/spec.c) against a family list made up for
 * the test, and for the generic handle's answers to specs and files that
 * name no family this build has.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "core/family.h"
#include "core/spec.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const layout_choices[] = { "block", "split", NULL };
static const amq__option option_layout = {
    .name = "layout",
    .type = AMQ__OPTION_CHOICE,
    .choices = layout_choices,
};
static const amq__option option_growth = {
    .name = "growth",
    .type = AMQ__OPTION_REAL,
    .real_min = 1.5,
    .real_max = 16,
};
static const amq__option option_fingerprint_bits = {
    .name = "fingerprint-bits",
    .type = AMQ__OPTION_COUNT,
    .count_min = 4,
    .count_max = 32,
};
static const amq__option option_semi_sort = { .name = "semi-sort", .type = AMQ__OPTION_FLAG };

static const amq__option *const alpha_options[] = {
    &amq__option_capacity,    &amq__option_fpr,
    &amq__option_seed,        &amq__option_hash,
    &amq__option_key,         &option_layout,
    &option_fingerprint_bits, &option_semi_sort,
    &option_growth,           NULL,
};
static const amq__option *const beta_options[] = { &amq__option_capacity, NULL };

static const amq__family alpha = { .name = "alpha", .id = 60, .options = alpha_options };
static const amq__family beta = { .name = "beta-filter", .id = 61, .options = beta_options };
static const amq__family *const test_families[] = { &alpha, &beta, NULL };

static int parse(amq__spec *spec, const char *text, amq_diag *diag)
{
    memset(diag, 0, sizeof *diag);
    return amq__spec_parse(spec, text, test_families, diag);
}

/* The spec fails with AMQ_EINVAL and a message containing every fragment. */
static void expect_error(const char *text, const char *fragment1, const char *fragment2)
{
    amq__spec spec;
    amq_diag diag;
    int status = parse(&spec, text, &diag);
    if (status != AMQ_EINVAL || strstr(diag.message, fragment1) == NULL ||
        (fragment2 && strstr(diag.message, fragment2) == NULL))
        fail_msg("spec '%s': status %d, message '%s'; expected AMQ_EINVAL mentioning '%s'%s%s",
                 text, status, diag.message, fragment1, fragment2 ? " and " : "",
                 fragment2 ? fragment2 : "");
}

static void test_every_option_type(void **state)
{
    (void)state;
    amq__spec spec;
    amq_diag diag;
    assert_int_equal(parse(&spec,
                           "alpha n=1e6 p=1/8192 seed=18446744073709551615 layout=split "
                           "fingerprint-bits=12 semi-sort growth=2.5 hash=xxh3",
                           &diag),
                     AMQ_OK);
    assert_ptr_equal(spec.family, &alpha);
    assert_int_equal(amq__spec_count(&spec, &amq__option_capacity, 0), 1000000);
    assert_true(fabs(amq__spec_real(&spec, &amq__option_fpr, 0) - 1.0 / 8192) < 1e-18);
    assert_true(amq__spec_count(&spec, &amq__option_seed, 0) == UINT64_MAX);
    assert_int_equal(amq__spec_choice(&spec, &option_layout, 0), 1);
    assert_int_equal(amq__spec_count(&spec, &option_fingerprint_bits, 0), 12);
    assert_true(amq__spec_flag(&spec, &option_semi_sort));
    assert_true(amq__spec_real(&spec, &option_growth, 0) == 2.5);
}

static void test_defaults_and_aliases(void **state)
{
    (void)state;
    amq__spec spec;
    amq_diag diag;
    assert_int_equal(parse(&spec, "  alpha\tcapacity=500   fpr=0.01%\n", &diag), AMQ_OK);
    assert_int_equal(amq__spec_count(&spec, &amq__option_capacity, 0), 500);
    assert_true(fabs(amq__spec_real(&spec, &amq__option_fpr, 0) - 1e-4) < 1e-18);
    assert_null(amq__spec_get(&spec, &option_layout));
    assert_int_equal(amq__spec_choice(&spec, &option_layout, 7), 7);
    assert_false(amq__spec_flag(&spec, &option_semi_sort));
    /* An option of another family is not visible through this spec. */
    assert_int_equal(amq__spec_count(&spec, &option_fingerprint_bits, 99), 99);

    assert_int_equal(parse(&spec, "beta-filter", &diag), AMQ_OK);
    assert_ptr_equal(spec.family, &beta);
}

static void test_unknown_family(void **state)
{
    (void)state;
    expect_error("gamma n=5", "unknown filter type 'gamma'", "alpha, beta-filter");
    expect_error("Alpha", "unknown filter type 'Alpha'", NULL);
    expect_error("", "empty spec", NULL);
    expect_error("   \t ", "empty spec", NULL);
}

static void test_unknown_option(void **state)
{
    (void)state;
    expect_error("alpha bogus=1", "unknown option 'bogus' for alpha", "fingerprint-bits");
    /* An option another family takes is still unknown here. */
    expect_error("beta-filter layout=split", "unknown option 'layout' for beta-filter",
                 "capacity (n)");
}

static void test_malformed_numbers(void **state)
{
    (void)state;
    expect_error("alpha n=abc", "option 'capacity'", "abc");
    expect_error("alpha n=1.5", "option 'capacity'", NULL);
    expect_error("alpha n=-3", "option 'capacity'", NULL);
    expect_error("alpha p=zero", "option 'fpr'", "zero");
    expect_error("alpha growth=2x", "option 'growth'", "2x");
    expect_error("alpha seed=0x", "option 'seed'", NULL);
    expect_error("alpha seed=Random", "option 'seed'", NULL);
}

static void test_out_of_range(void **state)
{
    (void)state;
    expect_error("alpha n=0", "option 'capacity'", NULL);
    expect_error("alpha n=1e20", "option 'capacity'", NULL);
    expect_error("alpha p=1.5", "option 'fpr'", NULL);
    expect_error("alpha p=0", "option 'fpr'", NULL);
    expect_error("alpha p=100%", "option 'fpr'", NULL);
    expect_error("alpha fingerprint-bits=3", "option 'fingerprint-bits'", NULL);
    expect_error("alpha fingerprint-bits=33", "option 'fingerprint-bits'", NULL);
    expect_error("alpha growth=1", "option 'growth'", NULL);
    expect_error("alpha growth=17", "option 'growth'", NULL);
}

static void test_shape_errors(void **state)
{
    (void)state;
    expect_error("alpha n=5 n=6", "option 'capacity' is given twice", NULL);
    expect_error("alpha n=5 capacity=6", "option 'capacity' is given twice", NULL);
    expect_error("alpha n", "option 'capacity' needs a value", NULL);
    expect_error("alpha n=", "option 'capacity' needs a value", NULL);
    expect_error("alpha semi-sort=1", "option 'semi-sort' takes no value", NULL);
    expect_error("alpha layout=diagonal", "'diagonal' is not one of block|split", NULL);
    expect_error("alpha key=0011", "expected 32 hex digits", NULL);
    expect_error("alpha key=zz0102030405060708090a0b0c0d0e0f", "not hexadecimal", NULL);
    expect_error("alpha key=randomly", "expected 32 hex digits", NULL);

    char long_spec[600];
    memset(long_spec, 'x', sizeof long_spec - 1);
    long_spec[sizeof long_spec - 1] = 0;
    memcpy(long_spec, "alpha n=", 8);
    expect_error(long_spec, "longer than", NULL);
}

static void test_error_offset_points_at_option(void **state)
{
    (void)state;
    amq__spec spec;
    amq_diag diag;
    const char *text = "alpha n=10 p=2";
    assert_int_equal(parse(&spec, text, &diag), AMQ_EINVAL);
    assert_int_equal(diag.offset, strlen(text));
}

static void test_hasher_from_spec(void **state)
{
    (void)state;
    amq__spec spec;
    amq_diag diag;
    amq_hasher hasher, expected;

    assert_int_equal(parse(&spec, "alpha", &diag), AMQ_OK);
    assert_int_equal(amq__spec_hasher(&spec, &hasher, 42, &diag), AMQ_OK);
    amq_hasher_xxh3(&expected, 42);
    assert_memory_equal(&hasher, &expected, sizeof hasher);

    assert_int_equal(parse(&spec, "alpha seed=7", &diag), AMQ_OK);
    assert_int_equal(amq__spec_hasher(&spec, &hasher, 42, &diag), AMQ_OK);
    amq_hasher_xxh3(&expected, 7);
    assert_memory_equal(&hasher, &expected, sizeof hasher);

    assert_int_equal(parse(&spec, "alpha hash=siphash key=000102030405060708090a0b0c0d0e0f", &diag),
                     AMQ_OK);
    assert_int_equal(amq__spec_hasher(&spec, &hasher, 42, &diag), AMQ_OK);
    assert_int_equal(hasher.kind, AMQ_HASH_SIPHASH);
    for (int i = 0; i < 16; i++)
        assert_int_equal(hasher.key[i], i);

    assert_int_equal(parse(&spec, "alpha hash=md5", &diag), AMQ_OK);
    assert_int_equal(amq__spec_hasher(&spec, &hasher, 42, &diag), AMQ_OK);
    assert_int_equal(hasher.kind, AMQ_HASH_MD5);

    /* seed=random and key=random: the word, then a secret from the OS, a
     * new one each time (equal by chance with odds 2^-64 and 2^-128). */
    amq_hasher again;
    assert_int_equal(parse(&spec, "alpha seed=random", &diag), AMQ_OK);
    assert_true(amq__spec_get(&spec, &amq__option_seed)->word);
    assert_int_equal(amq__spec_hasher(&spec, &hasher, 42, &diag), AMQ_OK);
    assert_int_equal(amq__spec_hasher(&spec, &again, 42, &diag), AMQ_OK);
    assert_int_equal(hasher.kind, AMQ_HASH_XXH3);
    assert_int_equal(amq_hasher_check(&hasher, NULL), AMQ_OK);
    assert_memory_not_equal(&hasher, &again, sizeof hasher);
    assert_int_equal(parse(&spec, "alpha hash=siphash key=random", &diag), AMQ_OK);
    assert_int_equal(amq__spec_hasher(&spec, &hasher, 42, &diag), AMQ_OK);
    assert_int_equal(amq__spec_hasher(&spec, &again, 42, &diag), AMQ_OK);
    assert_int_equal(hasher.kind, AMQ_HASH_SIPHASH);
    assert_memory_not_equal(&hasher, &again, sizeof hasher);

    const char *bad[][2] = {
        { "alpha hash=siphash", "needs key" },
        { "alpha hash=siphash seed=1 key=000102030405060708090a0b0c0d0e0f", "not 'seed'" },
        { "alpha key=000102030405060708090a0b0c0d0e0f", "siphash only" },
        { "alpha hash=md5 seed=3", "takes no seed" },
        { "alpha hash=siphash seed=random", "key=random" },
        { "alpha hash=md5 seed=random", "takes no seed" },
        { "alpha key=random", "siphash only" },
        { "alpha hash=md5 key=random", "siphash only" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(&spec, bad[i][0], &diag), AMQ_OK);
        memset(&diag, 0, sizeof diag);
        assert_int_equal(amq__spec_hasher(&spec, &hasher, 42, &diag), AMQ_EINVAL);
        if (!strstr(diag.message, bad[i][1]))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i][0], diag.message, bad[i][1]);
    }
}

static void test_generic_handle_refuses_unknown(void **state)
{
    (void)state;
    amq_filter *f = (amq_filter *)&f; /* must be reset to NULL on failure */
    amq_diag diag;
    memset(&diag, 0, sizeof diag);
    assert_int_equal(amq_new(&f, "no-such-filter n=10", &diag), AMQ_EINVAL);
    assert_null(f);
    assert_non_null(strstr(diag.message, "unknown filter type 'no-such-filter'"));
    assert_int_equal(amq_new(&f, "", NULL), AMQ_EINVAL);

    /* Every family the build lists has a unique name. */
    for (size_t i = 0; amq_family_at(i); i++)
        for (size_t j = i + 1; amq_family_at(j); j++)
            assert_string_not_equal(amq_family_at(i), amq_family_at(j));
}

static void test_load_errors_name_the_file(void **state)
{
    (void)state;
    char *dir = amq_test_scratch_dir();
    assert_non_null(dir);
    char path[512];
    amq_filter *f = NULL;
    amq_diag diag;

    snprintf(path, sizeof path, "%s/missing.amq", dir);
    memset(&diag, 0, sizeof diag);
    assert_int_equal(amq_load(&f, path, 0, &diag), AMQ_EIO);
    assert_null(f);
    assert_non_null(strstr(diag.message, "missing.amq"));

    snprintf(path, sizeof path, "%s/text.amq", dir);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs("this is a text file, long enough to hold a header if it were one, and some more "
          "words so it is longer than sixty-four bytes.\n",
          out);
    fclose(out);
    assert_int_equal(amq_load(&f, path, 0, &diag), AMQ_EFORMAT);
    assert_int_equal(amq_load(&f, path, AMQ_LOAD_MMAP, &diag), AMQ_EFORMAT);

    snprintf(path, sizeof path, "%s/empty.amq", dir);
    out = fopen(path, "w");
    assert_non_null(out);
    fclose(out);
    assert_int_equal(amq_load(&f, path, 0, &diag), AMQ_ECORRUPT);
    assert_int_equal(amq_load(&f, path, AMQ_LOAD_MMAP, &diag), AMQ_ECORRUPT);
    assert_int_equal(amq_load(&f, path, 0x80, &diag), AMQ_EINVAL);
    assert_null(f);

    amq_test_remove_tree(dir);
    free(dir);
}

int main(void)
{
    amq_test_seed(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_option_type),
        cmocka_unit_test(test_defaults_and_aliases),
        cmocka_unit_test(test_unknown_family),
        cmocka_unit_test(test_unknown_option),
        cmocka_unit_test(test_malformed_numbers),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_error_offset_points_at_option),
        cmocka_unit_test(test_hasher_from_spec),
        cmocka_unit_test(test_generic_handle_refuses_unknown),
        cmocka_unit_test(test_load_errors_name_the_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
