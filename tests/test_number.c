/* Tests for the number parsers: counts, probabilities and plain reals, as
 * spec strings and the command line give them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "core/number.h"
#include "test_util.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Expect text to fail with status, leaving *out alone and writing a message
 * that quotes the text. */
static void expect_count_error(const char *text, uint64_t min, uint64_t max, int status)
{
    amq_diag diag = { .message = "" };
    uint64_t value = 12345;
    int got = amq_parse_count(&value, text, min, max, &diag);
    if (got != status)
        fail_msg("count '%s': status %d, expected %d (%s)", text, got, status, diag.message);
    assert_int_equal(value, 12345);
    assert_true(strlen(diag.message) > 0);
    if (strlen(text) < 40 && !strstr(diag.message, text))
        fail_msg("message for '%s' does not quote it: %s", text, diag.message);
    assert_int_equal(amq_parse_count(&value, text, min, max, NULL), status);
}

static uint64_t count_of(const char *text)
{
    uint64_t value = 0;
    amq_diag diag = { .message = "" };
    int status = amq_parse_count(&value, text, 0, UINT64_MAX, &diag);
    if (status != AMQ_OK)
        fail_msg("count '%s' rejected: %s", text, diag.message);
    return value;
}

static void test_count_accepts(void **state)
{
    (void)state;
    assert_int_equal(count_of("0"), 0);
    assert_int_equal(count_of("1"), 1);
    assert_int_equal(count_of("1000000"), 1000000);
    assert_int_equal(count_of("007"), 7);
    assert_int_equal(count_of("1e6"), 1000000);
    assert_int_equal(count_of("1E6"), 1000000);
    assert_int_equal(count_of("1e+6"), 1000000);
    assert_int_equal(count_of("2.5e3"), 2500);
    assert_int_equal(count_of("1.000"), 1);
    assert_int_equal(count_of("12.50e1"), 125);
    assert_int_equal(count_of("0.001e3"), 1);
    assert_int_equal(count_of("1000e-3"), 1);
    assert_int_equal(count_of("0e-999999999999"), 0);
    assert_int_equal(count_of("4294967296"), 4294967296ULL);
    /* Near 2^64 every digit matters: no rounding through a double. */
    assert_true(count_of("18446744073709551615") == UINT64_MAX);
    assert_true(count_of("18446744073709551614") == UINT64_MAX - 1);
    assert_true(count_of("9007199254740993") == 9007199254740993ULL); /* 2^53 + 1 */
    assert_true(count_of("1.8446744073709551615e19") == UINT64_MAX);
    assert_true(count_of("00018446744073709551615") == UINT64_MAX);
    assert_true(count_of("1e19") == 10000000000000000000ULL);
}

static void test_count_range(void **state)
{
    (void)state;
    uint64_t value = 0;
    assert_int_equal(amq_parse_count(&value, "5", 5, 5, NULL), AMQ_OK);
    assert_int_equal(value, 5);
    assert_int_equal(amq_parse_count(&value, "1024", 1, 1024, NULL), AMQ_OK);
    assert_int_equal(value, 1024);
    expect_count_error("1025", 1, 1024, AMQ_ERANGE);
    expect_count_error("0", 1, 10, AMQ_ERANGE);
    expect_count_error("1e3", 1, 999, AMQ_ERANGE);
    expect_count_error("18446744073709551616", 0, UINT64_MAX, AMQ_ERANGE);
    expect_count_error("18446744073709551617", 0, UINT64_MAX, AMQ_ERANGE);
    expect_count_error("99999999999999999999", 0, UINT64_MAX, AMQ_ERANGE);
    expect_count_error("1e20", 0, UINT64_MAX, AMQ_ERANGE);
    expect_count_error("1.8446744073709551616e19", 0, UINT64_MAX, AMQ_ERANGE);
    expect_count_error("1e99999999999999999999", 0, UINT64_MAX, AMQ_ERANGE);
    expect_count_error("-1", 0, UINT64_MAX, AMQ_ERANGE);
    expect_count_error("-18446744073709551617", 0, UINT64_MAX, AMQ_ERANGE);

    /* The message says which bound was crossed, even for huge values and
     * a minimum above 0. */
    amq_diag diag;
    uint64_t value_left = 9;
    assert_int_equal(amq_parse_count(&value_left, "1e20", 1, UINT64_MAX, &diag), AMQ_ERANGE);
    assert_non_null(strstr(diag.message, "above the maximum, 18446744073709551615"));
    assert_int_equal(amq_parse_count(&value_left, "1e30", 5, 10, &diag), AMQ_ERANGE);
    assert_non_null(strstr(diag.message, "above the maximum, 10"));
    assert_int_equal(amq_parse_count(&value_left, "4", 5, 10, &diag), AMQ_ERANGE);
    assert_non_null(strstr(diag.message, "below the minimum, 5"));
    assert_int_equal(value_left, 9);
}

static void test_count_rejects(void **state)
{
    (void)state;
    static const char *const malformed[] = {
        "",    " 5", "5 ",  "5x", "0x10", "nan",  "inf",   "-inf", "+5",  "1.5", "1e-3",
        "0.1", "1e", "1e+", "e5", ".",    "1..2", "1,000", "5%",   "1/2", "--1", "١",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
        expect_count_error(malformed[i], 0, UINT64_MAX, AMQ_EINVAL);

    amq_diag diag;
    uint64_t value;
    assert_int_equal(amq_parse_count(&value, "1.5", 0, 10, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "whole number"));

    /* A very long text is refused, not overflowing anything. */
    char long_text[512];
    memset(long_text, '1', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    assert_int_equal(amq_parse_count(&value, long_text, 0, UINT64_MAX, &diag), AMQ_EINVAL);
    assert_true(strlen(diag.message) > 0);
}

static double probability_of(const char *text)
{
    double value = 0.0;
    amq_diag diag = { .message = "" };
    int status = amq_parse_probability(&value, text, &diag);
    if (status != AMQ_OK)
        fail_msg("probability '%s' rejected: %s", text, diag.message);
    return value;
}

static void test_probability_accepts(void **state)
{
    (void)state;
    /* Each form must give the double a C compiler gives the literal. */
    assert_true(probability_of("0.0001") == 0.0001);
    assert_true(probability_of("1e-4") == 1e-4);
    assert_true(probability_of("0.01%") == 1e-4);
    assert_true(probability_of("1%") == 0.01);
    assert_true(probability_of("50%") == 0.5);
    assert_true(probability_of("99.9%") == 0.999);
    assert_true(probability_of("1/8192") == 1.0 / 8192);
    assert_true(probability_of("1/3") == 1.0 / 3);
    assert_true(probability_of("1e0/1e4") == 1e-4);
    assert_true(probability_of("2.5/10") == 0.25);
    assert_true(probability_of(".5") == 0.5);
    assert_true(probability_of("0.5") == 0.5);
    assert_true(probability_of("5e-1") == 0.5);
    assert_true(probability_of("0.1") == 0.1);
    assert_true(probability_of("0.3") == 0.3);
    assert_true(probability_of("0.99999999999999994") == 0.99999999999999994);
    assert_true(probability_of("1e-300") == 1e-300);
    assert_true(probability_of("4.9e-324") == 4.9e-324);
    assert_true(probability_of("0.000000000000000000000000000001") == 1e-30);
    assert_true(probability_of("123456789012345678901234567890e-30") ==
                0.123456789012345678901234567890);
}

static void expect_probability_error(const char *text)
{
    amq_diag diag = { .message = "" };
    double value = 0.25;
    int got = amq_parse_probability(&value, text, &diag);
    if (got != AMQ_EINVAL)
        fail_msg("probability '%s': status %d, expected AMQ_EINVAL", text, got);
    assert_true(value == 0.25);
    assert_true(strlen(diag.message) > 0);
    if (strlen(text) < 40 && !strstr(diag.message, text))
        fail_msg("message for '%s' does not quote it: %s", text, diag.message);
    assert_int_equal(amq_parse_probability(&value, text, NULL), AMQ_EINVAL);
}

static void test_probability_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",       "0",    "1",    "1.5", "-0.5",  "0.0",   "-0",   "100%",   "0%",      "150%",
        "1/1",    "2/1",  "0/5",  "1/0", "1/0.0", "nan",   "inf",  "abc",    " 0.1",    "0.1 ",
        "0.1x",   "0,1",  "1/",   "/2",  "1//2",  "1/2/3", "%",    "1e-400", "1e400",   "+0.1",
        "0x1p-3", "1/-2", "-1/2", "1%%", "1 %",   "1/ 2",  "0.5e", "1e-4/0", "1/1e400",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_probability_error(bad[i]);

    amq_diag diag;
    double value;
    assert_int_equal(amq_parse_probability(&value, "1.5", &diag), AMQ_EINVAL);
    assert_string_equal(diag.message, "'1.5' is not between 0 and 1 (exclusive)");
}

static double real_of(const char *text, double min, double max)
{
    double value = 0.0;
    amq_diag diag = { .message = "" };
    int status = amq__parse_real(&value, text, min, max, &diag);
    if (status != AMQ_OK)
        fail_msg("real '%s' rejected: %s", text, diag.message);
    return value;
}

static void test_real(void **state)
{
    (void)state;
    assert_true(real_of("2", 1, 100) == 2.0);
    assert_true(real_of("0.85", 0, 1) == 0.85);
    assert_true(real_of("1e3", 0, 1e3) == 1000.0);
    assert_true(real_of("-2.5", -10, 10) == -2.5);
    assert_true(real_of("0", 0, 1) == 0.0);
    assert_true(real_of("1", 0, 1) == 1.0);
    assert_true(real_of("1.7976931348623157e308", 0, INFINITY) == 1.7976931348623157e308);

    static const struct {
        const char *text;
        int status;
    } bad[] = {
        { "", AMQ_EINVAL },      { "nan", AMQ_EINVAL },    { "inf", AMQ_EINVAL },
        { "1e999", AMQ_ERANGE }, { "1e-999", AMQ_ERANGE }, { " 1", AMQ_EINVAL },
        { "1 ", AMQ_EINVAL },    { "1/2", AMQ_EINVAL },    { "50%", AMQ_EINVAL },
        { "+1", AMQ_EINVAL },    { "0x10", AMQ_EINVAL },   { "1.0.0", AMQ_EINVAL },
        { "1.01", AMQ_ERANGE },  { "-0.5", AMQ_ERANGE },   { "--1", AMQ_EINVAL },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        amq_diag diag = { .message = "" };
        double value = 7.0;
        int status = amq__parse_real(&value, bad[i].text, 0, 1, &diag);
        if (status != bad[i].status)
            fail_msg("real '%s': status %d, expected %d", bad[i].text, status, bad[i].status);
        assert_true(value == 7.0);
        assert_true(strlen(diag.message) > 0);
        if (!strstr(diag.message, bad[i].text))
            fail_msg("message for '%s' does not quote it: %s", bad[i].text, diag.message);
    }
}

/* Under a locale whose decimal separator is a comma, strtod("0.5") would
 * stop at the point; the parsers must not care. Skipped (passing) when no
 * such locale is installed. */
static void test_locale_independent(void **state)
{
    (void)state;
    static const char *const comma_locales[] = { "de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", "fr_FR",
                                                 "ru_RU.UTF-8" };
    const char *chosen = NULL;
    for (size_t i = 0; i < sizeof comma_locales / sizeof comma_locales[0] && !chosen; i++)
        if (setlocale(LC_NUMERIC, comma_locales[i]))
            chosen = comma_locales[i];
    if (!chosen) {
        fprintf(stderr, "no decimal-comma locale installed; locale test skipped\n");
        return;
    }
    double value = 0.0;
    int status = amq_parse_probability(&value, "0.0125", NULL);
    double real = 0.0;
    int real_status = amq__parse_real(&real, "2.5", 0, 10, NULL);
    setlocale(LC_NUMERIC, "C");
    assert_int_equal(status, AMQ_OK);
    assert_true(value == 0.0125);
    assert_int_equal(real_status, AMQ_OK);
    assert_true(real == 2.5);
}

/* Random decimal texts agree with the C library's reading of them in the C
 * locale, and counts printed then parsed come back unchanged. */
static void test_random_round_trips(void **state)
{
    (void)state;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(0x6e756d62));
    char text[64];
    for (int i = 0; i < 20000; i++) {
        uint64_t count = amq_test_next(&rng) >> amq_test_below(&rng, 64);
        snprintf(text, sizeof text, "%llu", (unsigned long long)count);
        assert_true(count_of(text) == count);

        double p = (double)(amq_test_next(&rng) >> 11) * 0x1p-53;
        if (p == 0.0)
            continue;
        p = ldexp(p, -(int)amq_test_below(&rng, 60));
        snprintf(text, sizeof text, "%.*g", 1 + (int)amq_test_below(&rng, 17), p);
        double expected = strtod(text, NULL);
        if (!(expected > 0.0 && expected < 1.0))
            continue;
        if (probability_of(text) != expected)
            fail_msg("'%s' parsed as %.17g, strtod says %.17g", text, probability_of(text),
                     expected);
        snprintf(text, sizeof text, "%.*e", (int)amq_test_below(&rng, 17), p);
        expected = strtod(text, NULL);
        if (expected > 0.0 && expected < 1.0 && probability_of(text) != expected)
            fail_msg("'%s' parsed as %.17g, strtod says %.17g", text, probability_of(text),
                     expected);
    }
}

static void test_hex(void **state)
{
    (void)state;
    uint8_t out[8] = { 0 };
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_parse_hex(out, "00fFa9", 6, &diag), AMQ_OK);
    assert_int_equal(out[0], 0x00);
    assert_int_equal(out[1], 0xff);
    assert_int_equal(out[2], 0xa9);
    /* Only text_len digits are read: the text need not end there. */
    assert_int_equal(amq_parse_hex(out, "0102zz", 4, &diag), AMQ_OK);
    assert_int_equal(out[1], 0x02);
    assert_int_equal(amq_parse_hex(NULL, "", 0, &diag), AMQ_OK);

    assert_int_equal(amq_parse_hex(out, "abc", 3, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "odd number of hex digits (3)"));
    assert_int_equal(amq_parse_hex(out, "0g", 2, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "character 2"));
    assert_int_equal(diag.offset, 1);
    assert_int_equal(amq_parse_hex(out, "12 4", 4, &diag), AMQ_EINVAL);
    assert_int_equal(diag.offset, 2);
    assert_int_equal(amq_parse_hex(out, "x0", 2, NULL), AMQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_accepts),
        cmocka_unit_test(test_count_range),
        cmocka_unit_test(test_count_rejects),
        cmocka_unit_test(test_probability_accepts),
        cmocka_unit_test(test_probability_rejects),
        cmocka_unit_test(test_real),
        cmocka_unit_test(test_locale_independent),
        cmocka_unit_test(test_random_round_trips),
        cmocka_unit_test(test_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
