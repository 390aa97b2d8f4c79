/* Tests for the version and the status codes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "test_util.h"

#include <stdio.h>
#include <string.h>

static void test_version(void **state)
{
    (void)state;
    assert_string_equal(amq_version(), AMQ_VERSION_STRING);
    assert_int_equal(amq_version_number(), AMQ_VERSION_NUMBER);
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", AMQ_VERSION_MAJOR, AMQ_VERSION_MINOR,
             AMQ_VERSION_PATCH);
    assert_string_equal(amq_version(), expected);
}

/* CMake's project version (from which the SONAME and the package files take
 * theirs) is the header's and the library's. */
static void test_version_is_the_projects(void **state)
{
    (void)state;
    assert_string_equal(AMQ_TEST_PROJECT_VERSION, AMQ_VERSION_STRING);
    assert_string_equal(amq_version(), AMQ_TEST_PROJECT_VERSION);
}

static void test_codes_are_pinned(void **state)
{
    (void)state;
    /* Pinned values: callers and other languages rely on them. */
    assert_int_equal(AMQ_OK, 0);
    assert_int_equal(AMQ_ENOMEM, -1);
    assert_int_equal(AMQ_EINVAL, -2);
    assert_int_equal(AMQ_EFULL, -3);
    assert_int_equal(AMQ_ENOTFOUND, -4);
    assert_int_equal(AMQ_ECORRUPT, -5);
    assert_int_equal(AMQ_EFORMAT, -6);
    assert_int_equal(AMQ_EVERSION, -7);
    assert_int_equal(AMQ_EIO, -8);
    assert_int_equal(AMQ_EUNSUPPORTED, -9);
    assert_int_equal(AMQ_ERANGE, -10);
    assert_int_equal(AMQ_EINCOMPATIBLE, -11);
}

static void test_strerror_distinct_and_never_null(void **state)
{
    (void)state;
    const char *unknown = amq_strerror(-12345);
    assert_non_null(unknown);
    assert_non_null(amq_strerror(1));
    for (int a = 0; a >= AMQ_EINCOMPATIBLE; a--) {
        const char *text = amq_strerror(a);
        assert_non_null(text);
        assert_true(strlen(text) > 0);
        assert_string_not_equal(text, unknown);
        for (int b = a - 1; b >= AMQ_EINCOMPATIBLE; b--)
            assert_string_not_equal(text, amq_strerror(b));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_version_is_the_projects),
        cmocka_unit_test(test_codes_are_pinned),
        cmocka_unit_test(test_strerror_distinct_and_never_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
