/* Shared helpers for the test programs; see test_util.h. The damaged-file
 * helpers write containers through the library's own encoder (src/core/format.h),
 * so a crafted file differs from a saved one only where a test changed it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "core/format.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t amq_test_seed(uint64_t default_seed)
{
    static int printed;
    uint64_t seed = default_seed;
    const char *env = getenv("AMQ_TEST_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 0);
    if (!printed) {
        fprintf(stderr, "seed: %" PRIu64 " (set AMQ_TEST_SEED to replay)\n", seed);
        printed = 1;
    }
    return seed;
}

void amq_test_rng_init(amq_test_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

uint64_t amq_test_next(amq_test_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t amq_test_below(amq_test_rng *rng, uint64_t bound)
{
    return (uint64_t)(((unsigned __int128)amq_test_next(rng) * bound) >> 64);
}

char *amq_test_data_path(const char *name)
{
    const char *dir = getenv("AMQ_TEST_DATA_DIR");
    if (!dir || !*dir)
        dir = AMQ_TEST_DATA_DIR;
    size_t len = strlen(dir) + 1 + strlen(name) + 1;
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%s/%s", dir, name);
    return path;
}

char *amq_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + used, 1, cap - used, f);
        used += got;
        if (used < cap)
            break;
        cap *= 2;
        char *bigger = realloc(buf, cap + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
        }
        buf = bigger;
    }
    fclose(f);
    if (buf) {
        buf[used] = 0;
        if (len)
            *len = used;
    }
    return buf;
}

char *amq_test_read_data(const char *name, size_t *len)
{
    char *path = amq_test_data_path(name);
    assert_non_null(path);
    char *text = amq_test_read_file(path, len);
    if (!text)
        fail_msg("cannot read %s", path);
    free(path);
    return text;
}

bool amq_test_same_file(const char *a, const char *b)
{
    size_t len_a = 0, len_b = 0;
    char *x = amq_test_read_file(a, &len_a), *y = amq_test_read_file(b, &len_b);
    if (!x || !y)
        fail_msg("cannot read %s", x ? b : a);
    bool same = len_a == len_b && memcmp(x, y, len_a) == 0;
    free(x);
    free(y);
    return same;
}

void amq_test_assert_same_image(const amq_filter *a, const amq_filter *b)
{
    uint8_t *a_bytes = NULL, *b_bytes = NULL;
    size_t a_len = 0, b_len = 0;
    assert_int_equal(amq_save_to_memory(&a_bytes, &a_len, a, NULL), AMQ_OK);
    assert_int_equal(amq_save_to_memory(&b_bytes, &b_len, b, NULL), AMQ_OK);
    assert_int_equal(a_len, b_len);
    assert_memory_equal(a_bytes, b_bytes, a_len);
    amq_buffer_free(a_bytes);
    amq_buffer_free(b_bytes);
}

void amq_test_write_file(const char *path, const void *bytes, size_t len)
{
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, len, out), len);
    assert_int_equal(fclose(out), 0);
}

char *amq_test_scratch_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    size_t len = strlen(tmp) + sizeof("/amq-test-XXXXXX");
    char *path = malloc(len);
    if (!path)
        return NULL;
    snprintf(path, len, "%s/amq-test-XXXXXX", tmp);
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

void amq_test_remove_tree(const char *path)
{
    DIR *dir = opendir(path);
    if (dir) {
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                continue;
            size_t len = strlen(path) + 1 + strlen(entry->d_name) + 1;
            char *child = malloc(len);
            if (!child)
                continue;
            snprintf(child, len, "%s/%s", path, entry->d_name);
            struct stat st;
            if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
                amq_test_remove_tree(child);
            else
                unlink(child);
            free(child);
        }
        closedir(dir);
    }
    rmdir(path);
}

long amq_test_unhex(uint8_t *out, size_t cap, const char *hex)
{
    size_t len = strlen(hex);
    if (len / 2 > cap || amq_parse_hex(out, hex, len, NULL) != AMQ_OK)
        return -1;
    return (long)(len / 2);
}

void amq_test_hex(char *out, const uint8_t *bytes, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * len] = 0;
}

amq_test_key amq_test_make_key(uint64_t seed, uint64_t set, uint64_t i)
{
    amq_test_key key = { .tag = seed * 2 + set, .index = i * 0x9e3779b97f4a7c15ULL + seed };
    return key;
}

void amq_test_keys_make(amq_test_keys *out, uint64_t seed, uint64_t set, size_t count)
{
    size_t room = count ? count : 1;
    out->keys = malloc(room * sizeof *out->keys);
    out->pointers = malloc(room * sizeof *out->pointers);
    out->lens = malloc(room * sizeof *out->lens);
    out->count = count;
    if (!out->keys || !out->pointers || !out->lens)
        fail_msg("out of memory for %zu keys", count);
    for (size_t i = 0; i < count; i++) {
        out->keys[i] = amq_test_make_key(seed, set, i);
        out->pointers[i] = &out->keys[i];
        out->lens[i] = sizeof out->keys[i];
    }
}

void amq_test_keys_free(amq_test_keys *keys)
{
    free(keys->keys);
    free(keys->pointers);
    free(keys->lens);
}

void amq_test_batch_keys(amq_test_key *keys, const void **pointers, size_t *lens, size_t count,
                         uint64_t seed, uint64_t stride)
{
    for (size_t i = 0; i < count; i++) {
        keys[i] = amq_test_make_key(seed, i % 3 == 0, i * stride);
        pointers[i] = &keys[i];
        lens[i] = sizeof keys[i];
    }
}

int amq_test_scratch_setup(void **state)
{
    *state = amq_test_scratch_dir();
    return *state ? 0 : -1;
}

int amq_test_scratch_teardown(void **state)
{
    amq_test_remove_tree(*state);
    free(*state);
    return 0;
}

void amq_test_scratch_path(char *out, void **state, const char *name)
{
    int len = snprintf(out, AMQ_TEST_PATH_MAX, "%s/%s", (const char *)*state, name);
    assert_true(len > 0 && len < AMQ_TEST_PATH_MAX);
}

void amq_test_expect_spec_errors(const amq_test_spec_case *cases, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        amq_filter *f = (amq_filter *)&f;
        amq_diag diag = { .message = "" };
        int status = amq_new(&f, cases[i].spec, &diag);
        if (status != cases[i].status || !strstr(diag.message, cases[i].message))
            fail_msg("'%s': status %d '%s', expected %d mentioning '%s'", cases[i].spec, status,
                     diag.message, cases[i].status, cases[i].message);
        if (f)
            fail_msg("'%s': refused, but the filter is not set to NULL", cases[i].spec);
    }
}

void amq_test_expect_specs_accepted(const char *const *specs, size_t count, bool deletable)
{
    for (size_t i = 0; i < count; i++) {
        amq_filter *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_new(&f, specs[i], &diag) != AMQ_OK)
            fail_msg("'%s' refused: %s", specs[i], diag.message);
        assert_int_equal(amq_add(f, "k", 1), AMQ_OK);
        assert_int_equal(amq_contains(f, "k", 1), 1);
        if (deletable) {
            assert_int_equal(amq_remove(f, "k", 1), AMQ_OK);
            assert_int_equal(amq_contains(f, "k", 1), 0);
            assert_int_equal(amq_remove(f, "k", 1), AMQ_ENOTFOUND);
        } else {
            assert_int_equal(amq_remove(f, "k", 1), AMQ_EUNSUPPORTED);
        }
        amq_free(f);
    }
}

uint64_t amq_test_expect_sized_by_keys(const char *spec)
{
    const void *keys[3] = { "a", "b", "c" };
    size_t lens[3] = { 1, 1, 1 };
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (amq_build(&f, spec, keys, lens, 3, &diag) != AMQ_OK)
        fail_msg("'%s' refused: %s", spec, diag.message);
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    assert_int_equal(info.capacity, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(amq_contains(f, keys[i], 1), 1);
    amq_free(f);
    return info.keys;
}

uint64_t amq_test_add_then_remove_quarter(amq_filter *f, uint64_t seed, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_add(f, &key, sizeof key), AMQ_OK);
    }
    for (uint64_t i = 0; i < n; i += 4) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_remove(f, &key, sizeof key), AMQ_OK);
    }
    uint64_t absent = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        if (amq_contains(f, &key, sizeof key) == 0) {
            assert_int_equal(amq_remove(f, &key, sizeof key), AMQ_ENOTFOUND);
            absent++;
        }
    }
    return absent;
}

void amq_test_expect_merge_refused(amq_filter *into, const char *other_spec, const char *fragment)
{
    amq_filter *other = NULL;
    amq_diag diag = { .message = "" };
    if (amq_new(&other, other_spec, &diag) != AMQ_OK)
        fail_msg("'%s' refused: %s", other_spec, diag.message);
    int status = amq_merge(into, other, &diag);
    if (status != AMQ_EINCOMPATIBLE || !strstr(diag.message, fragment))
        fail_msg("merging '%s': status %d '%s', expected AMQ_EINCOMPATIBLE mentioning '%s'",
                 other_spec, status, diag.message, fragment);
    amq_free(other);
}

void amq_test_expect_same_answers(const amq_filter *expected, const amq_filter *actual,
                                  uint64_t seed, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        amq_test_key key = amq_test_make_key(seed, i % 2, i / 2);
        int want = amq_contains(expected, &key, sizeof key);
        int got = amq_contains(actual, &key, sizeof key);
        if (got != want)
            fail_msg("key %llu of set %llu: answered %d, expected %d", (unsigned long long)(i / 2),
                     (unsigned long long)(i % 2), got, want);
    }
}

void amq_test_expect_damage_refused(const char *path, const uint8_t *file, size_t len)
{
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, file, len);
    for (size_t i = 0; i < len; i++) {
        copy[i] ^= 0x10;
        amq_test_write_file(path, copy, len);
        copy[i] ^= 0x10;
        amq_filter *f = (amq_filter *)&f;
        if (amq_load(&f, path, 0, NULL) == AMQ_OK)
            fail_msg("a change at byte %zu of %zu was not detected", i, len);
        assert_null(f);
    }
    for (size_t cut = 0; cut < len; cut++) {
        amq_test_write_file(path, copy, cut);
        amq_filter *f = (amq_filter *)&f;
        int status = amq_load(&f, path, 0, NULL);
        if (status != AMQ_ECORRUPT && !(status == AMQ_EFORMAT && cut < 8))
            fail_msg("a file cut to %zu of %zu bytes: status %d", cut, len, status);
        assert_null(f);
    }
    free(copy);
}

void amq_test_write_container(const char *path, uint32_t family, const amq_hasher *hasher,
                              const uint8_t *params, uint32_t params_len, const uint8_t *payload,
                              uint64_t payload_len)
{
    amq__container c = {
        .family = family, .hasher = *hasher, .params = params, .params_len = params_len
    };
    amq__piece piece = { .data = payload, .len = payload_len };
    uint8_t *bytes = NULL;
    size_t len = 0;
    assert_int_equal(amq__format_encode(&bytes, &len, &c, &piece, 1, NULL), AMQ_OK);
    amq_test_write_file(path, bytes, len);
    free(bytes);
}

void amq_test_expect_payload_resize_refused(const char *path, const amq__container *c,
                                            const char *short_refusal, const char *long_refusal)
{
    uint8_t *payload = calloc(1, (size_t)c->payload_len + 1);
    assert_non_null(payload);
    memcpy(payload, c->payload, (size_t)c->payload_len);
    amq_test_write_container(path, c->family, &c->hasher, c->params, c->params_len, payload,
                             c->payload_len - 1);
    amq_test_expect_load(path, short_refusal, "the payload a byte short");
    amq_test_write_container(path, c->family, &c->hasher, c->params, c->params_len, payload,
                             c->payload_len + 1);
    amq_test_expect_load(path, long_refusal, "the payload a byte long");
    free(payload);
}

void amq_test_expect_load(const char *path, const char *refusal, const char *what_format, ...)
{
    char what[256];
    va_list args;
    va_start(args, what_format);
    vsnprintf(what, sizeof what, what_format, args);
    va_end(args);
    amq_filter *f = (amq_filter *)&f;
    amq_diag diag = { .message = "" };
    int status = amq_load(&f, path, 0, &diag);
    if (!refusal) {
        if (status != AMQ_OK)
            fail_msg("%s: status %d '%s', expected it to load", what, status, diag.message);
        assert_true(amq_contains(f, "x", 1) >= 0);
        amq_free(f);
        return;
    }
    if (status != AMQ_ECORRUPT || !strstr(diag.message, refusal))
        fail_msg("%s: status %d '%s', expected AMQ_ECORRUPT mentioning '%s'", what, status,
                 diag.message, refusal);
    assert_null(f);
}

/* ---- false-positive rates at low p ------------------------------------------------ */

void amq_test_add_keys(amq_filter *f, uint64_t seed, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_add(f, &key, sizeof key), AMQ_OK);
    }
}

amq_filter *amq_test_build_keys(const char *spec, uint64_t seed, uint64_t count)
{
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, (size_t)count);
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_build(&f, spec, keys.pointers, keys.lens, keys.count, &diag);
    amq_test_keys_free(&keys);
    if (status != AMQ_OK)
        fail_msg("amq_build '%s': %s (%d)", spec, diag.message, status);
    return f;
}

uint64_t amq_test_count_false_positives(const amq_filter *f, uint64_t seed, uint64_t count)
{
    uint64_t positives = 0;
    for (uint64_t i = 0; i < count; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        int answer = amq_contains(f, &key, sizeof key);
        assert_true(answer == 0 || answer == 1);
        positives += (uint64_t)answer;
    }
    return positives;
}

void amq_test_expect_fpr(const char *what, uint64_t positives, uint64_t trials, double rate)
{
    double expected = (double)trials * rate;
    double tolerance = 5 * sqrt(expected * (1 - rate)) + 5;
    print_message("%s: %" PRIu64 " false positives in %" PRIu64 " (%.3g), expected %.3g (%.3g)\n",
                  what, positives, trials, (double)positives / (double)trials, expected, rate);
    if (fabs((double)positives - expected) > tolerance)
        fail_msg("%s: %" PRIu64 " false positives in %" PRIu64 ", expected %.3g +- %.3g", what,
                 positives, trials, expected, tolerance);
}

/* A filter of spec with " seed=<seed>" appended (written to seeded, 256
 * bytes) holding keys 0 .. count-1 of set 0, filled as fill says, and its
 * amq_info; fails the test, naming the spec, when it cannot be made. */
static amq_filter *filter_of_keys(char *seeded, amq_info *info, const char *spec, uint64_t seed,
                                  amq_test_fill fill, uint64_t count)
{
    int len = snprintf(seeded, 256, "%s seed=%" PRIu64, spec, seed);
    assert_true(len > 0 && len < 256);
    amq_filter *f = NULL;
    if (fill == AMQ_TEST_BUILD) {
        f = amq_test_build_keys(seeded, seed, count);
    } else {
        amq_diag diag = { .message = "" };
        int status = amq_new(&f, seeded, &diag);
        if (status != AMQ_OK)
            fail_msg("amq_new '%s': %s (%d)", seeded, diag.message, status);
        amq_test_add_keys(f, seed, count);
    }
    assert_int_equal(amq_info_get(info, f), AMQ_OK);
    return f;
}

double amq_test_expect_low_rate(const char *spec, uint64_t seed, amq_test_fill fill, uint64_t keys,
                                uint64_t trials, double max_over_target)
{
    char seeded[256];
    amq_info info;
    amq_filter *f = filter_of_keys(seeded, &info, spec, seed, fill, keys);
    if (max_over_target > 0 && !(info.expected_fpr <= max_over_target * info.target_fpr))
        fail_msg("%s: expected_fpr %.3g is more than %g times the target %.3g", seeded,
                 info.expected_fpr, max_over_target, info.target_fpr);
    amq_test_expect_fpr(seeded, amq_test_count_false_positives(f, seed, trials), trials,
                        info.expected_fpr);
    amq_free(f);
    return info.expected_fpr;
}

void amq_test_expect_at_most_false_positives(const char *spec, uint64_t seed, uint64_t keys,
                                             uint64_t trials, uint64_t most)
{
    char seeded[256];
    amq_info info;
    amq_filter *f = filter_of_keys(seeded, &info, spec, seed, AMQ_TEST_ADD, keys);
    uint64_t positives = amq_test_count_false_positives(f, seed, trials);
    print_message("%s: %" PRIu64 " false positives in %" PRIu64 "\n", seeded, positives, trials);
    if (positives > most)
        fail_msg("%s: %" PRIu64 " false positives in %" PRIu64 " keys, more than %" PRIu64
                 " (%.3g expected)",
                 seeded, positives, trials, most, (double)trials * info.target_fpr);
    amq_free(f);
}

void amq_test_expect_recorded_answers(const amq_filter *f, const char *positives,
                                      const char *prefix, size_t present, size_t absent)
{
    size_t total = present + absent, prefix_len = strlen(prefix);
    uint8_t *recorded = calloc(total, 1);
    char(*keys)[32] = malloc(total * sizeof *keys);
    const void **pointers = malloc(total * sizeof *pointers);
    size_t *lens = malloc(total * sizeof *lens);
    uint8_t *batch = malloc(total);
    assert_true(recorded && keys && pointers && lens && batch);
    char *text = amq_test_read_data(positives, NULL);
    size_t count = 0;
    for (char *line = text; *line;) {
        char *end = NULL;
        assert_true(strncmp(line, prefix, prefix_len) == 0 && line[prefix_len] == '-');
        unsigned long i = strtoul(line + prefix_len + 1, &end, 10);
        assert_true(*end == '\n' && i >= present && i < total);
        recorded[i] = 1;
        count++;
        line = end + 1;
    }
    free(text);
    assert_true(count > 0);
    for (size_t i = 0; i < total; i++) {
        int written = snprintf(keys[i], sizeof keys[i], "%s-%zu", prefix, i);
        pointers[i] = keys[i];
        lens[i] = (size_t)written;
    }
    assert_int_equal(amq_contains_many(batch, f, pointers, lens, total), AMQ_OK);
    for (size_t i = 0; i < total; i++) {
        int expected = i < present || recorded[i];
        int answer = amq_contains(f, pointers[i], lens[i]);
        if (answer != expected || batch[i] != expected)
            fail_msg("%s answered %d (batch %d), recorded %d", keys[i], answer, batch[i], expected);
    }
    free(recorded);
    free(keys);
    free(pointers);
    free(lens);
    free(batch);
}

const amq_info_detail *amq_test_detail(const amq_info *info, const char *name)
{
    for (size_t i = 0; i < info->detail_count; i++)
        if (strcmp(info->details[i].name, name) == 0)
            return &info->details[i];
    return NULL;
}

const amq_info_detail *amq_test_find_detail(const amq_info *info, const char *name)
{
    const amq_info_detail *detail = amq_test_detail(info, name);
    if (!detail)
        fail_msg("amq_info of a %s filter has no detail '%s'", info->family, name);
    return detail;
}

double amq_test_detail_value(const amq_filter *f, const char *name)
{
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    const amq_info_detail *detail = amq_test_detail(&info, name);
    return detail ? detail->value : -1;
}

amq_filter *amq_test_load_golden_version_1(const char *name, unsigned flags, const char *saved)
{
    char relative[64];
    snprintf(relative, sizeof relative, "bloom/%s", name);
    char *path = amq_test_data_path(relative);
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (amq_load(&f, path, flags, &diag) != AMQ_OK)
        fail_msg("load %s: %s", path, diag.message);
    assert_true(amq_test_detail_value(f, "probe_version") == 1);
    amq_test_expect_recorded_answers(f, "bloom/bloom-v1.positives", "golden", 1000, 100000);
    /* The fill's rate, (4969 / 9586)^7 = 0.01006, plus the chance of a
     * stored key's pair, about 1000 / 9586^2 = 1.09e-5. */
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    double keys = info.estimated_keys, m = 9586;
    double floor = -expm1(keys * log1p(-1 / (m * m)));
    assert_true(floor > 1.08e-5 && floor < 1.1e-5);
    assert_true(fabs(info.expected_fpr - (floor + (1 - floor) * pow(4969.0 / m, 7))) < 1e-15);
    assert_int_equal(amq_save(f, saved, NULL), AMQ_OK);
    assert_true(amq_test_same_file(saved, path));
    free(path);
    return f;
}
