/*
 * endian.c - the file format is the same whatever the host's byte order.
 *
 * Built natively and for a big-endian target (s390x) by
 * scripts/big-endian-test.sh, which runs the second under qemu-user:
 *
 *   amq_endian golden DATA   load each filter file under DATA (tests/data),
 *                            saved on x86-64, read and mapped: it answers
 *                            every recorded key as recorded and saves back
 *                            the same bytes (cuckoo: the same keys added
 *                            here save them too)
 *   amq_endian save DIR      build a filter of every family (and of their
 *                            variants: layouts, widths, hashes) from fixed
 *                            keys and seeds; write DIR/NAME.amq and, in
 *                            DIR/NAME.maybe, which absent keys it answers
 *                            "maybe" for
 *   amq_endian check DIR     for the files another host saved: build the
 *                            same filter here, which must save exactly the
 *                            bytes of DIR/NAME.amq; load that file, read and
 *                            mapped, which must answer every key as
 *                            DIR/NAME.maybe and the filter built here do
 *
 * Each prints a line per file and ends with "N passed, N failed"; the exit
 * status is 0 when none failed.
 */
#include "amq/amq.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PRESENT = 3000, ABSENT = 30000, KEY_MAX = 32 };

/* The filters `save` and `check` build: every family, and the options that
 * change what the payload holds or how its words are laid out. */
typedef struct variant {
    const char *name;
    const char *spec;
} variant;

static const variant variants[] = {
    { "bloom", "bloom p=0.01 seed=11" },
    { "bloom-k3", "bloom n=3000 m=30011 k=3 seed=12" },
    { "bloom-siphash", "bloom p=0.01 hash=siphash key=000102030405060708090a0b0c0d0e0f" },
    { "bloom-md5", "bloom p=0.02 hash=md5" },
    { "blocked-bloom", "blocked-bloom p=0.01 seed=13" },
    { "blocked-bloom-split", "blocked-bloom p=0.01 layout=split seed=14" },
    { "counting-bloom", "counting-bloom p=0.01 seed=15" },
    { "counting-bloom-8", "counting-bloom p=0.01 counter-bits=8 seed=16" },
    { "scalable-bloom", "scalable-bloom n=200 p=0.01 seed=17" },
    { "cuckoo-f8", "cuckoo n=4000 fingerprint-bits=8 seed=18" },
    { "cuckoo-f12", "cuckoo n=4000 fingerprint-bits=12 seed=19" },
    { "cuckoo-f16", "cuckoo n=4000 fingerprint-bits=16 seed=20" },
    { "cuckoo-semi-f13", "cuckoo n=4000 fingerprint-bits=13 semi-sort seed=21" },
    { "cuckoo-growth", "cuckoo n=500 fingerprint-bits=12 growth=2 seed=27" },
    { "gcs", "gcs p=0.01 seed=22" },
    { "gcs-golomb-siphash",
      "gcs range=784931 divisor=best hash=siphash key=0f0e0d0c0b0a09080706050403020100" },
    { "gcs-rice-index", "gcs p=0.001 rice-bits=best index=7 seed=28" },
    { "hfb", "hfb hash=md5" },
    { "hfb-bank-12", "hfb hash=md5 bank-bits=12" },
    { "fuse8", "fuse8 seed=24" },
    { "fuse16", "fuse16 seed=25" },
    { "fuse16-arity4", "fuse16 arity=4 seed=26" },
};
enum { VARIANTS = sizeof variants / sizeof variants[0] };

static unsigned passed, failed;

/* The keys: PRESENT keys "endian-<i>" then ABSENT keys "absent-<i>". */
static char keys[PRESENT + ABSENT][KEY_MAX];
static const void *pointers[PRESENT + ABSENT];
static size_t lens[PRESENT + ABSENT];

static void make_keys(void)
{
    for (size_t i = 0; i < PRESENT + ABSENT; i++) {
        int len = i < PRESENT ? snprintf(keys[i], KEY_MAX, "endian-%zu", i)
                              : snprintf(keys[i], KEY_MAX, "absent-%zu", i - PRESENT);
        pointers[i] = keys[i];
        lens[i] = (size_t)len;
    }
}

/* Report a failure of the file at hand; false, for `return fail(...)`. */
static bool fail(const char *name, const char *format, ...) __attribute__((format(printf, 2, 3)));
static bool fail(const char *name, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "FAIL %s: ", name);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    return false;
}

static void count(const char *name, bool ok, const char *what)
{
    if (ok) {
        passed++;
        printf("ok   %s: %s\n", name, what);
    } else {
        failed++;
    }
}

static char *join(const char *dir, const char *name, const char *suffix)
{
    size_t len = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *path = malloc(len);
    if (!path) {
        perror("malloc");
        exit(2);
    }
    snprintf(path, len, "%s/%s%s", dir, name, suffix);
    return path;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, used = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        used += fread(buf + used, 1, cap - used, f);
        if (used < cap)
            break;
        cap *= 2;
        uint8_t *bigger = realloc(buf, cap);
        if (!bigger)
            free(buf);
        buf = bigger;
    }
    fclose(f);
    *len = used;
    return buf;
}

/* The answers of f for keys [0, count): amq_contains and amq_contains_many
 * must agree; NULL (reported) when they do not or a call fails. */
static uint8_t *answers(const char *name, const amq_filter *f, size_t count)
{
    uint8_t *batch = malloc(count);
    if (!batch || amq_contains_many(batch, f, pointers, lens, count) != AMQ_OK) {
        fail(name, "amq_contains_many failed");
        free(batch);
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        int one = amq_contains(f, pointers[i], lens[i]);
        if (one != batch[i]) {
            fail(name, "%s: amq_contains %d, amq_contains_many %d", keys[i], one, batch[i]);
            free(batch);
            return NULL;
        }
    }
    return batch;
}

/* The file at path loads, read and mapped, and answers keys [0, count) as
 * expected says. */
static bool loads_and_answers(const char *name, const char *path, const uint8_t *expected,
                              size_t count)
{
    for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
        amq_filter *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_load(&f, path, flags, &diag) != AMQ_OK)
            return fail(name, "load %s (%s): %s", path, flags ? "mapped" : "read", diag.message);
        uint8_t *got = answers(name, f, count);
        amq_free(f);
        if (!got)
            return false;
        for (size_t i = 0; i < count; i++) {
            if (got[i] != expected[i]) {
                fail(name, "%s (%s): %s answered %d, expected %d", path, flags ? "mapped" : "read",
                     keys[i], got[i], expected[i]);
                free(got);
                return false;
            }
        }
        free(got);
    }
    return true;
}

/* The filter f saves exactly the bytes of the file at path. */
static bool saves_as(const char *name, const amq_filter *f, const char *path)
{
    size_t file_len = 0, len = 0;
    uint8_t *file = read_file(path, &file_len), *bytes = NULL;
    if (!file)
        return fail(name, "cannot read %s", path);
    amq_diag diag = { .message = "" };
    if (amq_save_to_memory(&bytes, &len, f, &diag) != AMQ_OK) {
        free(file);
        return fail(name, "amq_save_to_memory: %s", diag.message);
    }
    size_t at = 0;
    while (at < len && at < file_len && bytes[at] == file[at])
        at++;
    bool same = len == file_len && at == len;
    if (!same)
        fail(name, "saves %zu bytes, %s has %zu; the first difference at byte %zu", len, path,
             file_len, at);
    free(file);
    free(bytes);
    return same;
}

static amq_filter *build(const variant *v)
{
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (amq_build(&f, v->spec, pointers, lens, PRESENT, &diag) != AMQ_OK) {
        fail(v->name, "amq_build \"%s\": %s", v->spec, diag.message);
        return NULL;
    }
    return f;
}

/* ---- save and check --------------------------------------------------------- */

static bool save_one(const variant *v, const char *dir)
{
    amq_filter *f = build(v);
    if (!f)
        return false;
    uint8_t *maybe = answers(v->name, f, PRESENT + ABSENT);
    char *path = join(dir, v->name, ".amq"), *list = join(dir, v->name, ".maybe");
    amq_diag diag = { .message = "" };
    bool ok = maybe != NULL;
    if (ok && amq_save(f, path, &diag) != AMQ_OK)
        ok = fail(v->name, "save %s: %s", path, diag.message);
    for (size_t i = 0; ok && i < PRESENT; i++)
        if (!maybe[i])
            ok = fail(v->name, "%s was added and is not found", keys[i]);
    ok = ok && saves_as(v->name, f, path) &&
         loads_and_answers(v->name, path, maybe, PRESENT + ABSENT);
    FILE *out = ok ? fopen(list, "w") : NULL;
    if (ok && !out)
        ok = fail(v->name, "cannot write %s", list);
    for (size_t i = PRESENT; out && i < PRESENT + ABSENT; i++)
        if (maybe[i])
            fprintf(out, "%zu\n", i - PRESENT);
    if (out && fclose(out) != 0)
        ok = fail(v->name, "cannot write %s", list);
    free(maybe);
    free(path);
    free(list);
    amq_free(f);
    return ok;
}

static bool check_one(const variant *v, const char *dir)
{
    amq_filter *f = build(v);
    if (!f)
        return false;
    char *path = join(dir, v->name, ".amq"), *list = join(dir, v->name, ".maybe");
    uint8_t *here = answers(v->name, f, PRESENT + ABSENT);
    bool ok = here != NULL && saves_as(v->name, f, path);
    /* The other host's answers, as it recorded them, against this one's. */
    size_t text_len = 0;
    char *text = ok ? (char *)read_file(list, &text_len) : NULL;
    if (ok && !text)
        ok = fail(v->name, "cannot read %s", list);
    uint8_t *there = calloc(PRESENT + ABSENT, 1);
    if (ok && there) {
        memset(there, 1, PRESENT);
        for (size_t at = 0; ok && at < text_len;) {
            char *end = NULL;
            unsigned long i = strtoul(text + at, &end, 10);
            if (end == text + at || end >= text + text_len || *end != '\n' || i >= ABSENT)
                ok = fail(v->name, "%s: malformed at byte %zu", list, at);
            else
                there[PRESENT + i] = 1;
            at = (size_t)(end - text) + 1;
        }
        for (size_t i = 0; ok && i < PRESENT + ABSENT; i++)
            if (here[i] != there[i])
                ok = fail(v->name, "%s: %d here, %d where %s was saved", keys[i], here[i], there[i],
                          path);
    }
    ok = ok && there && loads_and_answers(v->name, path, there, PRESENT + ABSENT);
    free(text);
    free(there);
    free(here);
    free(path);
    free(list);
    amq_free(f);
    return ok;
}

/* ---- golden: files saved on x86-64 ------------------------------------------ */

typedef struct golden {
    const char *file;      /* under the data directory */
    const char *present;   /* its keys: present-0 .. present-(present_count - 1) */
    size_t present_count;  /* */
    const char *absent;    /* other keys: absent-first .. */
    size_t absent_first;   /* */
    size_t absent_count;   /* */
    const char *positives; /* the absent keys it answered "maybe" for, one a line */
    size_t absent_hits;    /* without a positives file: how many there were */
    const char *rebuild;   /* a spec whose filter of the keys saves the same bytes */
} golden;

static const golden goldens[] = {
    { "bloom/bloom-v1.amq", "golden", 1000, "golden", 1000, 100000, "bloom/bloom-v1.positives", 0,
      NULL },
    { "bloom/counting-v1.amq", "golden", 1000, "golden", 1000, 100000, "bloom/bloom-v1.positives",
      0, NULL },
    { "cuckoo/plain-f12.amq", "key", 2250, "absent", 0, 20000, NULL, 26,
      "cuckoo n=2000 seed=7 fingerprint-bits=12" },
    { "cuckoo/semi-f8.amq", "key", 2250, "absent", 0, 20000, NULL, 499,
      "cuckoo n=2000 seed=7 fingerprint-bits=8 semi-sort" },
    { "cuckoo/semi-f12.amq", "key", 2250, "absent", 0, 20000, NULL, 26,
      "cuckoo n=2000 seed=7 fingerprint-bits=12 semi-sort" },
    { "cuckoo/semi-f16.amq", "key", 2250, "absent", 0, 20000, NULL, 3,
      "cuckoo n=2000 seed=7 fingerprint-bits=16 semi-sort" },
    { "fuse/fuse8.amq", "golden", 1000, "golden", 1000, 100000, "fuse/fuse8.positives", 0, NULL },
    { "fuse/fuse16-arity4.amq", "golden", 1000, "golden", 1000, 100000,
      "fuse/fuse16-arity4.positives", 0, NULL },
};

enum { GOLDEN_KEYS_MAX = 1000 + 100000 };
static char golden_keys[GOLDEN_KEYS_MAX][KEY_MAX];
static const void *golden_pointers[GOLDEN_KEYS_MAX];
static size_t golden_lens[GOLDEN_KEYS_MAX];

static bool golden_one(const golden *g, const char *data)
{
    size_t total = g->present_count + g->absent_count;
    for (size_t i = 0; i < total; i++) {
        int len = i < g->present_count ? snprintf(golden_keys[i], KEY_MAX, "%s-%zu", g->present, i)
                                       : snprintf(golden_keys[i], KEY_MAX, "%s-%zu", g->absent,
                                                  g->absent_first + i - g->present_count);
        golden_pointers[i] = golden_keys[i];
        golden_lens[i] = (size_t)len;
    }
    uint8_t *expected = calloc(total, 1);
    if (!expected)
        return fail(g->file, "out of memory");
    memset(expected, 1, g->present_count);
    bool ok = true;
    if (g->positives) {
        char *list = join(data, g->positives, "");
        size_t text_len = 0;
        char *text = (char *)read_file(list, &text_len);
        size_t prefix = strlen(g->absent);
        if (!text)
            ok = fail(g->file, "cannot read %s", list);
        for (size_t at = 0; ok && at < text_len;) {
            char *end = NULL;
            unsigned long i = strncmp(text + at, g->absent, prefix) == 0
                                  ? strtoul(text + at + prefix + 1, &end, 10)
                                  : 0;
            if (!end || end >= text + text_len || *end != '\n' || i < g->absent_first ||
                i - g->absent_first >= g->absent_count)
                ok = fail(g->file, "%s: malformed at byte %zu", list, at);
            else
                expected[g->present_count + i - g->absent_first] = 1;
            at = end ? (size_t)(end - text) + 1 : text_len;
        }
        free(text);
        free(list);
    }
    char *path = join(data, g->file, "");
    for (unsigned flags = 0; ok && flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
        const char *how = flags ? "mapped" : "read";
        amq_filter *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_load(&f, path, flags, &diag) != AMQ_OK) {
            ok = fail(g->file, "load (%s): %s", how, diag.message);
            break;
        }
        uint8_t *batch = malloc(total);
        if (!batch || amq_contains_many(batch, f, golden_pointers, golden_lens, total) != AMQ_OK)
            ok = fail(g->file, "amq_contains_many failed");
        size_t hits = 0;
        for (size_t i = 0; ok && i < total; i++) {
            int answer = amq_contains(f, golden_pointers[i], golden_lens[i]);
            if (answer != batch[i])
                ok = fail(g->file, "%s: amq_contains %d, amq_contains_many %d", golden_keys[i],
                          answer, batch[i]);
            else if (i < g->present_count || g->positives ? answer != expected[i] : false)
                ok = fail(g->file, "(%s) %s answered %d, recorded %d", how, golden_keys[i], answer,
                          expected[i]);
            hits += i >= g->present_count && answer == 1;
        }
        if (ok && !g->positives && hits != g->absent_hits)
            ok = fail(g->file, "(%s) %zu absent keys answered maybe, %zu when it was saved", how,
                      hits, g->absent_hits);
        ok = ok && saves_as(g->file, f, path);
        free(batch);
        amq_free(f);
    }
    if (ok && g->rebuild) {
        amq_filter *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_new(&f, g->rebuild, &diag) != AMQ_OK)
            ok = fail(g->file, "amq_new \"%s\": %s", g->rebuild, diag.message);
        for (size_t i = 0; ok && i < g->present_count; i++)
            if (amq_add(f, golden_pointers[i], golden_lens[i]) != AMQ_OK)
                ok = fail(g->file, "amq_add %s failed", golden_keys[i]);
        ok = ok && saves_as(g->file, f, path);
        amq_free(f);
    }
    free(path);
    free(expected);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "golden") != 0 && strcmp(argv[1], "save") != 0 &&
                      strcmp(argv[1], "check") != 0)) {
        fprintf(stderr, "usage: amq_endian golden DATA_DIR | save DIR | check DIR\n");
        return 2;
    }
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    printf("amq_endian %s on a %s-endian host\n", argv[1], first ? "little" : "big");
    if (strcmp(argv[1], "golden") == 0) {
        for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++)
            count(goldens[i].file, golden_one(&goldens[i], argv[2]),
                  "answers as recorded, read and mapped, and saves the same bytes");
    } else {
        make_keys();
        bool save = strcmp(argv[1], "save") == 0;
        for (size_t i = 0; i < VARIANTS; i++) {
            if (save)
                count(variants[i].name, save_one(&variants[i], argv[2]), "saved");
            else
                count(variants[i].name, check_one(&variants[i], argv[2]),
                      "same bytes built here, same answers loaded here");
        }
    }
    printf("%u passed, %u failed\n", passed, failed);
    return failed ? 1 : 0;
}
