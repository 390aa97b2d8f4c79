/*
 * Tests for amq_family_option, the families' spec options as the public API
 * lists them (and as the command-line tool takes them): every option of
 * every type is described (a name, a kind, help), what it lists is what the
 * spec parser takes (every option, and its alias, with a value of its kind
 * builds a filter; the parser's own list of a type's options names the
 * same), and the errors come as documented (AMQ_ERANGE past the last,
 * AMQ_EINVAL for an unknown type or a NULL).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KEYS = 1000, MAX_OPTIONS = 64, MAX_VALUES = 8 };

static const char *const kinds[] = { "count", "probability", "real", "choice", "hex", "flag" };

/* Options a type lists only to refuse them with a reason: hfb's keys are
 * IDs, hashed by no seed and no key (hfb_family.c). */
static const struct {
    const char *family, *option;
} refused[] = { { "hfb", "seed" }, { "hfb", "key" } };

static bool is_refused(const char *family, const char *option)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (strcmp(refused[i].family, family) == 0 && strcmp(refused[i].option, option) == 0)
            return true;
    return false;
}

/* The number of options family lists (walking until AMQ_ERANGE). */
static size_t option_count(const char *family)
{
    amq_option_info info;
    size_t count = 0;
    int status;
    while ((status = amq_family_option(&info, family, count)) == AMQ_OK) {
        count++;
        assert_true(count <= MAX_OPTIONS);
    }
    assert_int_equal(status, AMQ_ERANGE);
    return count;
}

static void test_every_option_is_described(void **state)
{
    (void)state;
    assert_non_null(amq_family_at(0));
    for (size_t t = 0; amq_family_at(t); t++) {
        const char *family = amq_family_at(t);
        size_t count = option_count(family);
        assert_true(count > 0);
        for (size_t i = 0; i < count; i++) {
            amq_option_info o;
            assert_int_equal(amq_family_option(&o, family, i), AMQ_OK);
            assert_non_null(o.name);
            assert_true(o.name[0] != '\0');
            assert_non_null(o.help);
            if (o.help[0] == '\0')
                fail_msg("%s: option '%s' has no help", family, o.name);
            assert_null(strchr(o.help, '\n'));
            assert_non_null(o.kind);
            bool known = false;
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
                known = known || strcmp(o.kind, kinds[k]) == 0;
            if (!known)
                fail_msg("%s: option '%s' has kind '%s'", family, o.name, o.kind);
            bool flag = strcmp(o.kind, "flag") == 0;
            assert_true(flag == (o.value_name == NULL));
            assert_true((strcmp(o.kind, "choice") == 0) == (o.choices != NULL));
            if (o.choices)
                assert_non_null(o.choices[0]);
            if (strcmp(o.kind, "count") == 0)
                assert_true(o.min <= o.max);
            else if (strcmp(o.kind, "hex") != 0)
                assert_null(o.word); /* a word stands for a number or hex digits only */
            if (strcmp(o.kind, "real") == 0)
                assert_true(o.real_min < o.real_max);
            assert_true((strcmp(o.kind, "hex") == 0) == (o.hex_bytes > 0));
            if (o.alias)
                assert_true(o.alias[0] != '\0');
            /* Names and aliases are unique within a type. */
            for (size_t j = 0; j < i; j++) {
                amq_option_info other;
                assert_int_equal(amq_family_option(&other, family, j), AMQ_OK);
                assert_string_not_equal(other.name, o.name);
                if (o.alias && other.alias)
                    assert_string_not_equal(other.alias, o.alias);
            }
        }
    }
}

static void test_errors_are_as_documented(void **state)
{
    (void)state;
    amq_option_info info, untouched;
    memset(&untouched, 0x5a, sizeof untouched);
    for (size_t t = 0; amq_family_at(t); t++) {
        const char *family = amq_family_at(t);
        size_t count = option_count(family);
        info = untouched;
        assert_int_equal(amq_family_option(&info, family, count), AMQ_ERANGE);
        assert_int_equal(amq_family_option(&info, family, count + 1000), AMQ_ERANGE);
        assert_int_equal(amq_family_option(&info, family, (size_t)-1), AMQ_ERANGE);
        assert_memory_equal(&info, &untouched, sizeof info);
        assert_int_equal(amq_family_option(NULL, family, 0), AMQ_EINVAL);
    }
    info = untouched;
    assert_int_equal(amq_family_option(&info, "no-such-type", 0), AMQ_EINVAL);
    assert_int_equal(amq_family_option(&info, "", 0), AMQ_EINVAL);
    assert_int_equal(amq_family_option(&info, "Bloom", 0), AMQ_EINVAL);
    assert_int_equal(amq_family_option(&info, NULL, 0), AMQ_EINVAL);
    assert_memory_equal(&info, &untouched, sizeof info);
    assert_int_equal(amq_family_option(NULL, NULL, 0), AMQ_EINVAL);
}

/* Values of o's kind the parser takes, as text, into values; returns how
 * many. A count tries a few sizes within its range (a type may refuse some:
 * blocked-bloom's split layout takes 8 hashes only, hfb refuses one-bit
 * banks), a real its ends and middle, a choice each word; a count or hex
 * value also its word (best, random). */
static size_t candidate_values(char values[MAX_VALUES][80], const amq_option_info *o)
{
    size_t n = 0;
    if (strcmp(o->kind, "count") == 0) {
        /* Not the top of a large range: bits=2^48 would try to allocate it. */
        const uint64_t sizes[] = { 8, 16, 1000, o->min, o->max <= 1u << 20 ? o->max : o->min };
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            uint64_t v = sizes[i] < o->min ? o->min : sizes[i] > o->max ? o->max : sizes[i];
            snprintf(values[n++], 80, "%llu", (unsigned long long)v);
        }
        if (o->word)
            snprintf(values[n++], 80, "%s", o->word);
    } else if (strcmp(o->kind, "probability") == 0) {
        snprintf(values[n++], 80, "0.01");
        snprintf(values[n++], 80, "1/8192");
    } else if (strcmp(o->kind, "real") == 0) {
        snprintf(values[n++], 80, "%.17g", (o->real_min + o->real_max) / 2);
        snprintf(values[n++], 80, "%.17g", o->real_min);
        snprintf(values[n++], 80, "%.17g", o->real_max);
    } else if (strcmp(o->kind, "choice") == 0) {
        for (size_t i = 0; o->choices[i] && n < MAX_VALUES; i++)
            snprintf(values[n++], 80, "%s", o->choices[i]);
    } else if (strcmp(o->kind, "hex") == 0) {
        for (size_t i = 0; i < o->hex_bytes && 2 * i + 2 < 80; i++)
            snprintf(values[0] + 2 * i, 3, "%02x", (unsigned)(0x11 * (i % 15) + 1));
        n = 1;
        if (o->word)
            snprintf(values[n++], 80, "%s", o->word);
    } else {
        values[n++][0] = '\0'; /* a flag: the bare key */
    }
    return n;
}

/* "family key=value", with what the option needs beside it when
 * with_companion (a SipHash key for hash=siphash and the other way round). */
static void make_spec(char *out, size_t cap, const char *family, const char *key, const char *value,
                      bool with_companion)
{
    const char *companion = "";
    if (with_companion && strcmp(key, "key") == 0)
        companion = " hash=siphash";
    else if (with_companion && strcmp(key, "hash") == 0 && strcmp(value, "siphash") == 0)
        companion = " key=00112233445566778899aabbccddeeff";
    int n = snprintf(out, cap, "%s %s%s%s%s", family, key, value[0] ? "=" : "", value, companion);
    assert_true(n > 0 && (size_t)n < cap);
}

static void test_every_option_is_accepted(void **state)
{
    (void)state;
    uint64_t seed = amq_test_seed(24);
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, KEYS);
    for (size_t t = 0; amq_family_at(t); t++) {
        const char *family = amq_family_at(t);
        bool dynamic = amq_family_is_static(family) == 0;
        for (size_t i = 0; i < option_count(family); i++) {
            amq_option_info o;
            assert_int_equal(amq_family_option(&o, family, i), AMQ_OK);
            char values[MAX_VALUES][80];
            size_t n = candidate_values(values, &o);
            size_t accepted = 0;
            bool refusal = is_refused(family, o.name);
            char last[AMQ_DIAG_MESSAGE_MAX + 512] = "";
            char reason[AMQ_DIAG_MESSAGE_MAX] = "";
            /* By its name, then by its alias. */
            for (int by_alias = 0; by_alias <= (o.alias != NULL); by_alias++) {
                const char *key = by_alias ? o.alias : o.name;
                for (size_t v = 0; v < n; v++) {
                    char spec[256];
                    make_spec(spec, sizeof spec, family, key, values[v], !refusal);
                    amq_diag diag = { .message = "" };
                    amq_filter *f = NULL;
                    int status = amq_build(&f, spec, keys.pointers, keys.lens, keys.count, &diag);
                    amq_free(f);
                    if (status == AMQ_OK && dynamic) {
                        /* amq_new takes it too (with a capacity, unless it is one). */
                        char sized[300];
                        snprintf(sized, sizeof sized, "%s%s", spec,
                                 strcmp(o.name, "capacity") == 0 ? "" : " n=1000");
                        status = amq_new(&f, sized, &diag);
                        amq_free(f);
                    }
                    if (status == AMQ_OK) {
                        accepted++;
                        continue;
                    }
                    /* A value may be too large to build (AMQ_ERANGE, AMQ_ENOMEM) or
                     * refused with the rest of the spec (AMQ_EINVAL). */
                    assert_true(status < 0);
                    snprintf(last, sizeof last, "%s: %s", spec, diag.message);
                    memcpy(reason, diag.message, sizeof reason);
                    if (getenv("AMQ_TEST_VERBOSE"))
                        fprintf(stderr, "refused (%s): %s\n", amq_strerror(status), last);
                    /* Whatever the type refuses, the parser took the option. */
                    if (strstr(diag.message, "unknown option") ||
                        strstr(diag.message, "is not one of") ||
                        strstr(diag.message, "needs a value") ||
                        strstr(diag.message, "takes no value"))
                        fail_msg("the parser refuses a listed option: %s", last);
                }
            }
            if (refusal) {
                if (accepted)
                    fail_msg("%s: option '%s' is listed as refused but was accepted", family,
                             o.name);
                if (!strstr(reason, o.name))
                    fail_msg("%s: the refusal does not name '%s': %s", family, o.name, last);
            } else if (accepted == 0) {
                fail_msg("%s: option '%s' accepts none of the values of its kind: %s", family,
                         o.name, last);
            }
        }
    }
    amq_test_keys_free(&keys);
}

/* The parser's own list of what a type takes (its message for an unknown
 * option) names every option amq_family_option lists. */
static void test_parser_lists_the_same_options(void **state)
{
    (void)state;
    for (size_t t = 0; amq_family_at(t); t++) {
        const char *family = amq_family_at(t);
        char spec[128];
        snprintf(spec, sizeof spec, "%s no-such-option=1", family);
        amq_diag diag = { .message = "" };
        amq_filter *f = NULL;
        assert_int_equal(amq_build(&f, spec, NULL, NULL, 0, &diag), AMQ_EINVAL);
        assert_null(f);
        const char *takes = strstr(diag.message, "it takes: ");
        assert_non_null(takes);
        size_t listed = 0;
        for (size_t i = 0; i < option_count(family); i++) {
            amq_option_info o;
            assert_int_equal(amq_family_option(&o, family, i), AMQ_OK);
            char name[96];
            if (o.alias)
                snprintf(name, sizeof name, "%s (%s)", o.name, o.alias);
            else
                snprintf(name, sizeof name, "%s", o.name);
            if (!strstr(takes, name))
                fail_msg("%s: the parser's list lacks '%s': %s", family, name, diag.message);
            listed++;
        }
        /* And nothing more: as many names as commas plus one. */
        size_t commas = 0;
        for (const char *p = takes; *p; p++)
            commas += *p == ',';
        assert_int_equal(commas + 1, listed);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_option_is_described),
        cmocka_unit_test(test_errors_are_as_documented),
        cmocka_unit_test(test_every_option_is_accepted),
        cmocka_unit_test(test_parser_lists_the_same_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
