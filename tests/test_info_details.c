/*
 * The details amq_info_get reports are a contract: each family's public
 * header lists them ("amq_info details of a FAMILY filter"), with the kind
 * of each (number or word) and its meaning. This test reads those lists
 * from the installed headers' sources and holds every family to its own:
 *
 *   - every detail a filter reports is listed for its family, with the
 *     kind it has (a word has text, a number has none);
 *   - a family reports its details in the listed order;
 *   - every listed detail is reported by one of the filters made here
 *     (the configurations cover the optional ones: rice and golomb codes,
 *     both gcs layouts, raw and md5 hfb IDs, non-random IDs);
 *   - every family the library has is listed in some header.
 *
 * A name with an I in it (bankI_fill) stands for a bank's number.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRIES 64

typedef struct listed_detail {
    char name[32];
    bool word;
    bool seen;
} listed_detail;

typedef struct family_list {
    char families[2][32];
    listed_detail entries[MAX_ENTRIES];
    size_t count;
} family_list;

static family_list lists[16];
static size_t list_count;

static const char *const headers[] = { "bloom.h", "cuckoo.h", "gcs.h", "hfb.h", "fuse.h" };

/* Read the "amq_info details of a(n) F[ or G] filter" blocks of a header. */
static void read_header(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/../../include/amq/%s", AMQ_TEST_DATA_DIR, name);
    FILE *file = fopen(path, "r");
    if (!file)
        fail_msg("cannot open %s", path);
    char line[512];
    family_list *current = NULL;
    while (fgets(line, sizeof line, file)) {
        const char *heading = strstr(line, " * amq_info details of a");
        if (heading) {
            assert_true(list_count < sizeof lists / sizeof *lists);
            current = &lists[list_count++];
            memset(current, 0, sizeof *current);
            const char *at = heading + strlen(" * amq_info details of a");
            if (*at == 'n')
                at++;
            int got = sscanf(at, " %31[a-z0-9-] or %31[a-z0-9-] filter", current->families[0],
                             current->families[1]);
            if (got < 2 || strcmp(current->families[1], "filter") == 0)
                current->families[1][0] = '\0';
            assert_true(got >= 1);
            continue;
        }
        if (!current)
            continue;
        if (strncmp(line, " */", 3) == 0) {
            current = NULL;
            continue;
        }
        /* " *   name   number|word  meaning"; continuation lines have no
         * kind after the first word */
        char entry[64], kind[16];
        if (strncmp(line, " *   ", 5) == 0 && isalpha((unsigned char)line[5]) &&
            sscanf(line + 5, "%63s %15s", entry, kind) == 2 &&
            (strcmp(kind, "number") == 0 || strcmp(kind, "word") == 0)) {
            assert_true(current->count < MAX_ENTRIES);
            assert_true(strlen(entry) < sizeof current->entries[0].name);
            listed_detail *d = &current->entries[current->count++];
            strcpy(d->name, entry);
            d->word = strcmp(kind, "word") == 0;
        }
    }
    fclose(file);
}

static family_list *list_of(const char *family)
{
    for (size_t i = 0; i < list_count; i++)
        if (strcmp(lists[i].families[0], family) == 0 || strcmp(lists[i].families[1], family) == 0)
            return &lists[i];
    return NULL;
}

/* Whether a reported name is the listed one, an I standing for digits. */
static bool name_matches(const char *listed, const char *reported)
{
    while (*listed) {
        if (*listed == 'I') {
            if (!isdigit((unsigned char)*reported))
                return false;
            while (isdigit((unsigned char)*reported))
                reported++;
            listed++;
            continue;
        }
        if (*listed++ != *reported++)
            return false;
    }
    return *reported == '\0';
}

static void check_filter(amq_filter *f, const char *what)
{
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    family_list *list = list_of(info.family);
    if (!list)
        fail_msg("%s: no header lists the amq_info details of %s", what, info.family);
    size_t at = 0; /* the listed order: entries only move forward */
    for (size_t i = 0; i < info.detail_count; i++) {
        const amq_info_detail *d = &info.details[i];
        size_t j = at;
        while (j < list->count && !name_matches(list->entries[j].name, d->name))
            j++;
        /* the group of numbered details (bankI_...) repeats, bank by bank */
        if (j == list->count && strchr(list->entries[at].name, 'I')) {
            j = at;
            while (j > 0 && strchr(list->entries[j - 1].name, 'I'))
                j--;
            while (j < list->count && !name_matches(list->entries[j].name, d->name))
                j++;
        }
        if (j == list->count) {
            bool anywhere = false;
            for (size_t k = 0; k < list->count; k++)
                anywhere |= name_matches(list->entries[k].name, d->name);
            fail_msg("%s: detail %s is %s", what, d->name,
                     anywhere ? "out of the listed order" : "not listed in the header");
        }
        bool word = d->text[0] != '\0';
        if (word != list->entries[j].word)
            fail_msg("%s: detail %s is a %s, listed as a %s", what, d->name,
                     word ? "word" : "number", list->entries[j].word ? "word" : "number");
        list->entries[j].seen = true;
        at = j;
    }
}

/* count keys of width bytes (0: decimal strings), random or counting up
 * (IDs that look non-random to hfb). */
typedef struct key_set {
    uint8_t *bytes;
    const void **pointers;
    size_t *lens;
} key_set;

static void keys_make(key_set *keys, size_t count, size_t width, bool sequential)
{
    size_t stride = width ? width : 24;
    keys->bytes = calloc(count, stride);
    keys->pointers = calloc(count, sizeof *keys->pointers);
    keys->lens = calloc(count, sizeof *keys->lens);
    assert_true(keys->bytes && keys->pointers && keys->lens);
    uint64_t x = 20261207;
    for (size_t i = 0; i < count; i++) {
        uint8_t *key = keys->bytes + i * stride;
        if (width == 0) {
            keys->lens[i] = (size_t)snprintf((char *)key, stride, "key-%zu", i);
        } else {
            for (size_t b = 0; b < width; b++) {
                if (sequential) {
                    key[width - 1 - b] = b < 8 ? (uint8_t)((uint64_t)i >> (8 * b)) : 0;
                } else {
                    x ^= x << 13; /* xorshift64 */
                    x ^= x >> 7;
                    x ^= x << 17;
                    key[b] = (uint8_t)x;
                }
            }
            keys->lens[i] = width;
        }
        keys->pointers[i] = key;
    }
}

static void keys_free(key_set *keys)
{
    free(keys->bytes);
    free(keys->pointers);
    free(keys->lens);
}

static void build_and_check(const char *spec, size_t count, size_t width, bool sequential)
{
    key_set keys;
    keys_make(&keys, count, width, sequential);
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_build(&f, spec, keys.pointers, keys.lens, count, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: %s", spec, diag.message);
    check_filter(f, spec);
    amq_free(f);
    keys_free(&keys);
}

static void test_details_are_listed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof headers / sizeof *headers; i++)
        read_header(headers[i]);
    for (size_t i = 0; amq_family_at(i); i++)
        if (!list_of(amq_family_at(i)))
            fail_msg("no header lists the amq_info details of %s", amq_family_at(i));

    build_and_check("bloom n=1000 p=0.01", 1000, 0, false);
    build_and_check("blocked-bloom n=1000 p=0.01", 1000, 0, false);
    build_and_check("blocked-bloom n=1000 p=0.001 layout=block", 1000, 0, false);
    build_and_check("counting-bloom n=1000 p=0.01", 1000, 0, false);
    build_and_check("scalable-bloom n=100 p=0.01", 3000, 0, false);
    build_and_check("scalable-bloom n=100 p=0.01 stages=split-block", 3000, 0, false);
    build_and_check("cuckoo n=1000 p=0.01", 900, 0, false);
    build_and_check("cuckoo n=100 p=0.01 growth=2", 3000, 0, false);
    build_and_check("gcs p=0.001", 5000, 0, false);
    build_and_check("gcs p=0.001 stream=continuous", 5000, 0, false);
    build_and_check("gcs range=1000 divisor=700 stream=continuous", 5000, 0, false);
    build_and_check("hfb p=0.01", 20000, 16, false);
    build_and_check("hfb p=0.01", 20000, 16, true);
    build_and_check("hfb p=0.01 hash=md5", 20000, 0, false);
    build_and_check("fuse8", 5000, 0, false);
    build_and_check("fuse16", 5000, 0, false);

    for (size_t i = 0; i < list_count; i++)
        for (size_t j = 0; j < lists[i].count; j++)
            if (!lists[i].entries[j].seen)
                fail_msg("%s: listed detail %s was never reported", lists[i].families[0],
                         lists[i].entries[j].name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_details_are_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
