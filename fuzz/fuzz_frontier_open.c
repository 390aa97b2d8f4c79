/*
 * fuzz_frontier_open.c - amq_frontier_open (src/frontier/frontier.c,
 * src/frontier/frontier_segments.c) on a whole frontier directory made from
 * arbitrary bytes, then, when it opens, every queued URL popped, a few
 * pushed, a checkpoint saved and the directory reopened.
 *
 * The input is the directory's files, each with a kind that gives its name:
 *
 *     byte 0        fix-ups (below)
 *     then up to 8 files, each
 *         u8      kind, taken mod 5:
 *                   0  frontier.amq                  the manifest
 *                   1  filter-<number>.amq           a checkpoint's filter
 *                   2  segment-<number>.seg          a spill file
 *                   3  .frontier.amq.tmp (number 0),  an interrupted
 *                      .filter-<number>.amq.tmp (other)  save's temporary file
 *                   4  notes-<number>.txt            a file not the frontier's
 *         u64 LE  number (16 hex digits in the name)
 *         u32 LE  length, capped at the bytes left
 *         length bytes
 *
 * A file whose name an earlier one took is left out. The manifest and the
 * filter files are containers whose checksums a mutation almost always
 * breaks, and segment records carry checks of their own, so the fix-up bits
 * repair what a mutation broke by accident, to reach the checks behind:
 *
 *     bit 0  reseal: the last 8 bytes of the manifest and of every filter
 *            file (of 72 bytes or more) become XXH3-64 of the bytes before
 *            them (docs/FORMAT.md, the trailer);
 *     bit 1  link: the manifest's filter checksum (params offset 68) becomes
 *            the trailer of filter-<the manifest's generation>.amq;
 *     bit 2  recheck: every whole record of every segment file, from offset
 *            24 on, gets its check recomputed.
 *
 * applied in the order recheck, filters resealed, link, manifest resealed.
 * The files are written into a scratch directory made once per process
 * ($TMPDIR or /tmp) and emptied before every input; the frontier's directory
 * is its subdirectory "frontier".
 *
 * A manifest of generation 0 has no filter file: the filter is made anew,
 * at the first-stage capacity the manifest holds, as large as the options
 * that created the frontier asked. One that asks for more than 2^16 URLs,
 * or an fpr below 10^-9, is not opened, so that an input cannot ask for
 * gigabytes: the first stage's bits grow with the capacity, and as the
 * square root of 1/fpr at tiny rates (an fpr of 6.6 x 10^-19 takes 52 GB
 * for 11,529 URLs). The scalable filter's own bound on a stage, 2^48 bits,
 * is tested in tests/test_scalable_bloom.c.
 *
 * What must hold, or the target aborts with a message on stderr (so
 * libFuzzer keeps the input):
 *   - open answers AMQ_OK or a negative code with a message, never a crash,
 *     a leak, an out-of-bounds read; on failure the manifest, the filter
 *     files and the other files are as written, and every segment file is
 *     still there, a prefix of what was written (cutting a segment back to
 *     its listed length is allowed, removing one is not);
 *   - once open, amq__frontier_check passes after every step; the stats
 *     say queued = enqueued - popped - lost; a pop into a 1-byte buffer either
 *     pops an empty URL or answers AMQ_ERANGE with the length the next pop
 *     then delivers; pops deliver URLs that fit the buffer, NUL-terminated,
 *     never more than the queue held at open, and answer 0 (empty) only once
 *     all of those were popped or counted lost; after an error every later
 *     pop answers the same error;
 *   - a save that answers AMQ_OK is reopened with the same counters (lost
 *     included) and the
 *     next generation;
 *   - files not the frontier's are never touched, nothing appears in the
 *     scratch directory beside "frontier", and no file descriptor is left
 *     open.
 * fuzz/make_frontier_corpus.c writes the seeds in fuzz/corpus/frontier_open/
 * from frontiers the library made; the regression-* inputs there each broke
 * one of these once.
 */
#include "amq/frontier.h"
#include "core/hash.h"
#include "core/util.h"
#include "frontier/frontier_internal.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILES_MAX 8
#define NAME_SIZE 64
#define POPS_MAX  ((uint64_t)1 << 16)

#define FIX_RESEAL             1u
#define FIX_LINK               2u
#define FIX_RECHECK            4u
#define CONTAINER_MIN          72 /* header and trailer */
#define TRAILER_SIZE           8
#define MANIFEST_GENERATION_AT 68 /* 64 + u32 version */
#define MANIFEST_CAPACITY_AT   76
#define MANIFEST_FPR_AT        84
#define FRESH_CAPACITY_MAX     ((uint64_t)1 << 16)
#define FRESH_FPR_MIN          1e-9
#define MANIFEST_CHECKSUM_AT   132

typedef enum file_kind {
    KIND_MANIFEST,
    KIND_FILTER,
    KIND_SEGMENT,
    KIND_TEMPORARY,
    KIND_OTHER,
    KIND_COUNT
} file_kind;

typedef struct input_file {
    file_kind kind;
    char name[NAME_SIZE];
    uint8_t *bytes; /* as written, after the fix-ups */
    size_t len;
} input_file;

static char scratch[4096];   /* made once per process */
static char directory[4200]; /* scratch/frontier */

static void violation(const char *what)
{
    fprintf(stderr, "fuzz_frontier_open: %s\n", what);
    abort();
}

static void remove_scratch(void)
{
    DIR *dir = opendir(directory);
    struct dirent *entry;
    char path[8400];
    while (dir && (entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
        if (unlink(path) != 0)
            violation("cannot empty the scratch directory");
    }
    if (dir)
        closedir(dir);
}

static void remove_scratch_at_exit(void)
{
    remove_scratch();
    rmdir(directory);
    rmdir(scratch);
}

/* Make the scratch directory once, and empty the frontier's every run. */
static void prepare_scratch(void)
{
    if (scratch[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch, sizeof scratch, "%s/fuzz_frontier_open.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(scratch))
            violation("cannot make the scratch directory");
        snprintf(directory, sizeof directory, "%s/frontier", scratch);
        if (mkdir(directory, 0777) != 0)
            violation("cannot make the frontier's directory");
        atexit(remove_scratch_at_exit);
    }
    remove_scratch();
}

/* Nothing but "frontier" in the scratch directory. */
static void check_scratch_holds_only_the_frontier(void)
{
    DIR *dir = opendir(scratch);
    if (!dir)
        violation("cannot list the scratch directory");
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0 &&
            strcmp(entry->d_name, "frontier") != 0)
            violation("a file was written beside the frontier's directory");
    closedir(dir);
}

/* Open file descriptors, from /proc/self/fd; 0 where there is no /proc. */
static size_t open_descriptors(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return 0;
    size_t count = 0;
    while (readdir(dir) != NULL)
        count++;
    closedir(dir);
    return count;
}

/* ---- the input ------------------------------------------------------------------ */

static void name_file(input_file *file, uint64_t number)
{
    switch (file->kind) {
    case KIND_MANIFEST:
        snprintf(file->name, NAME_SIZE, "frontier.amq");
        break;
    case KIND_FILTER:
        snprintf(file->name, NAME_SIZE, "filter-%016" PRIx64 ".amq", number);
        break;
    case KIND_SEGMENT:
        snprintf(file->name, NAME_SIZE, "segment-%016" PRIx64 ".seg", number);
        break;
    case KIND_TEMPORARY:
        if (number == 0)
            snprintf(file->name, NAME_SIZE, ".frontier.amq.tmp");
        else
            snprintf(file->name, NAME_SIZE, ".filter-%016" PRIx64 ".amq.tmp", number);
        break;
    default:
        snprintf(file->name, NAME_SIZE, "notes-%016" PRIx64 ".txt", number);
        break;
    }
}

/* Split the input into files; returns how many. */
static size_t split_input(input_file files[FILES_MAX], const uint8_t *data, size_t size)
{
    size_t count = 0, at = 1;
    while (count < FILES_MAX && size - at >= 13) {
        input_file *file = &files[count];
        file->kind = (file_kind)(data[at] % KIND_COUNT);
        name_file(file, amq__load_u64le(data + at + 1));
        size_t len = amq__load_u32le(data + at + 9);
        at += 13;
        if (len > size - at)
            len = size - at;
        bool taken = false;
        for (size_t i = 0; i < count; i++)
            taken |= strcmp(files[i].name, file->name) == 0;
        if (!taken) {
            file->bytes = malloc(len ? len : 1);
            if (!file->bytes)
                violation("out of memory splitting the input");
            memcpy(file->bytes, data + at, len);
            file->len = len;
            count++;
        }
        at += len;
    }
    return count;
}

static void free_files(input_file *files, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(files[i].bytes);
}

static void reseal(input_file *file)
{
    if (file->len >= CONTAINER_MIN)
        amq__store_u64le(file->bytes + file->len - TRAILER_SIZE,
                         XXH3_64bits(file->bytes, file->len - TRAILER_SIZE));
}

static void recheck_records(input_file *file)
{
    size_t at = AMQ__SEGMENT_HEADER;
    while (at <= file->len && file->len - at >= AMQ__RECORD_OVERHEAD) {
        size_t url_len = amq__load_u32le(file->bytes + at);
        if (url_len > file->len - at - AMQ__RECORD_OVERHEAD)
            break;
        amq__store_u32le(file->bytes + at + 4 + url_len,
                         (uint32_t)XXH3_64bits(file->bytes + at, 4 + url_len));
        at += amq__record_size(url_len);
    }
}

static input_file *find_kind(input_file *files, size_t count, file_kind kind)
{
    for (size_t i = 0; i < count; i++)
        if (files[i].kind == kind)
            return &files[i];
    return NULL;
}

static void apply_fixups(input_file *files, size_t count, unsigned fixups)
{
    input_file *manifest = find_kind(files, count, KIND_MANIFEST);
    for (size_t i = 0; i < count; i++) {
        if ((fixups & FIX_RECHECK) && files[i].kind == KIND_SEGMENT)
            recheck_records(&files[i]);
        if ((fixups & FIX_RESEAL) && files[i].kind == KIND_FILTER)
            reseal(&files[i]);
    }
    if ((fixups & FIX_LINK) && manifest && manifest->len >= MANIFEST_CHECKSUM_AT + 8) {
        char name[NAME_SIZE];
        snprintf(name, sizeof name, "filter-%016" PRIx64 ".amq",
                 amq__load_u64le(manifest->bytes + MANIFEST_GENERATION_AT));
        for (size_t i = 0; i < count; i++)
            if (strcmp(files[i].name, name) == 0 && files[i].len >= TRAILER_SIZE)
                memcpy(manifest->bytes + MANIFEST_CHECKSUM_AT,
                       files[i].bytes + files[i].len - TRAILER_SIZE, TRAILER_SIZE);
    }
    if ((fixups & FIX_RESEAL) && manifest)
        reseal(manifest);
}

/* The manifest is of generation 0 and asks for a first stage too large to
 * make for every input. */
static bool asks_for_a_large_filter(input_file *files, size_t count)
{
    const input_file *manifest = find_kind(files, count, KIND_MANIFEST);
    if (!manifest || manifest->len < MANIFEST_FPR_AT + 8 ||
        amq__load_u64le(manifest->bytes + MANIFEST_GENERATION_AT) != 0)
        return false;
    uint64_t fpr_bits = amq__load_u64le(manifest->bytes + MANIFEST_FPR_AT);
    double fpr;
    memcpy(&fpr, &fpr_bits, sizeof fpr);
    return amq__load_u64le(manifest->bytes + MANIFEST_CAPACITY_AT) > FRESH_CAPACITY_MAX ||
           fpr < FRESH_FPR_MIN;
}

static void write_files(const input_file *files, size_t count)
{
    char path[8400];
    for (size_t i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/%s", directory, files[i].name);
        FILE *out = fopen(path, "wb");
        if (!out || fwrite(files[i].bytes, 1, files[i].len, out) != files[i].len ||
            fclose(out) != 0)
            violation("cannot write an input file");
    }
}

/* The file's bytes are, at least as a prefix (prefix) or exactly, what
 * was written. */
static bool file_holds(const input_file *file, bool prefix)
{
    char path[8400];
    snprintf(path, sizeof path, "%s/%s", directory, file->name);
    FILE *in = fopen(path, "rb");
    if (!in)
        return false;
    uint8_t *bytes = malloc(file->len + 1);
    size_t got = bytes ? fread(bytes, 1, file->len + 1, in) : 0;
    fclose(in);
    bool holds = bytes && got <= file->len && (prefix || got == file->len) &&
                 memcmp(bytes, file->bytes, got) == 0;
    free(bytes);
    return holds;
}

/* Files not the frontier's: untouched, whatever happened. After a failed
 * open: the saved state too. */
static void check_files_kept(const input_file *files, size_t count, bool open_failed)
{
    for (size_t i = 0; i < count; i++) {
        const input_file *file = &files[i];
        if (file->kind == KIND_OTHER && !file_holds(file, false))
            violation("a file that is not the frontier's was changed");
        if (!open_failed)
            continue;
        if ((file->kind == KIND_MANIFEST || file->kind == KIND_FILTER) && !file_holds(file, false))
            violation("a failed open changed the manifest or a filter file");
        if (file->kind == KIND_SEGMENT && !file_holds(file, true))
            violation("a failed open removed a segment file or changed its bytes");
    }
}

/* ---- the frontier ----------------------------------------------------------------- */

static void fuzz_options(amq_frontier_options *opt)
{
    amq_frontier_options_init(opt);
    opt->initial_capacity = 64;
    opt->memory_bytes = AMQ_FRONTIER_MIN_MEMORY;
    opt->memory_urls = 4;
    opt->segment_bytes = AMQ_FRONTIER_MIN_SEGMENT;
}

static void check_frontier(const amq_frontier *f, const char *after)
{
    amq_diag diag = { .message = "" };
    if (amq__frontier_check(f, &diag) != AMQ_OK) {
        fprintf(stderr, "fuzz_frontier_open: after %s: %s\n", after, diag.message);
        abort();
    }
    amq_frontier_stats stats;
    amq_frontier_stats_get(&stats, f);
    if (stats.popped > stats.enqueued || stats.lost > stats.enqueued - stats.popped ||
        stats.queued != stats.enqueued - stats.popped - stats.lost ||
        stats.enqueued > stats.pushed || stats.skipped != stats.pushed - stats.enqueued ||
        stats.queued != stats.queued_in_memory + stats.queued_on_disk)
        violation("the stats do not add up");
}

static char url[AMQ_FRONTIER_MAX_URL + 1];

/* Pop everything the queue held at open, and once more. */
static void pop_all(amq_frontier *f)
{
    amq_frontier_stats at_open;
    amq_frontier_stats_get(&at_open, f);
    size_t len = 0;
    int status = amq_frontier_pop(url, 1, &len, f, NULL);
    if (status == AMQ_ERANGE) {
        size_t needed = len;
        if (needed == 0 || amq_frontier_pop(url, sizeof url, &len, f, NULL) != 1 || len != needed)
            violation("a URL refused for a 1-byte buffer did not come next at its length");
        status = 1;
    }
    uint64_t popped = 0;
    while (status == 1) {
        if (len >= sizeof url || url[len] != '\0')
            violation("a popped URL overruns the buffer or lacks its NUL");
        if (++popped > at_open.queued)
            violation("popped more URLs than the queue held at open");
        if (popped >= POPS_MAX)
            return;
        status = amq_frontier_pop(url, sizeof url, &len, f, NULL);
    }
    amq_frontier_stats at_end;
    amq_frontier_stats_get(&at_end, f);
    if (status == 0 && popped + (at_end.lost - at_open.lost) != at_open.queued)
        violation("the queue said empty before every URL it held was popped");
    if (status < 0 && amq_frontier_pop(url, sizeof url, &len, f, NULL) != status)
        violation("a failed pop was not answered the same by the next");
    check_frontier(f, "popping");
}

static void push_some(amq_frontier *f)
{
    for (int i = 0; i < 3; i++) {
        int len = snprintf(url, sizeof url, "https://fuzz.example/pushed/%d", i);
        amq_frontier_stats before, after;
        amq_frontier_stats_get(&before, f);
        int status = amq_frontier_push(f, url, (size_t)len, NULL);
        amq_frontier_stats_get(&after, f);
        if (status > 1 || (status >= 0 && after.enqueued != before.enqueued + (uint64_t)status))
            violation("a push's answer and the enqueued count disagree");
    }
    check_frontier(f, "pushing");
}

/* Save; if that worked, close and reopen, which must give back the same
 * counters at the next generation. */
static void save_and_reopen(amq_frontier *f, const amq_frontier_options *opt)
{
    amq_frontier_stats before;
    amq_frontier_stats_get(&before, f);
    amq_diag diag = { .message = "" };
    int status = amq_frontier_save(f, &diag);
    if (status != AMQ_OK && (status >= 0 || diag.message[0] == '\0'))
        violation("a failed save without an error and a message");
    amq_frontier_stats saved;
    amq_frontier_stats_get(&saved, f);
    amq_frontier_close(f);
    if (status != AMQ_OK)
        return;
    if (saved.generation != before.generation + 1)
        violation("a save did not make the next generation");
    amq_frontier *again = NULL;
    status = amq_frontier_open(&again, directory, opt, &diag);
    if (status != AMQ_OK) {
        fprintf(stderr, "fuzz_frontier_open: a saved frontier does not reopen: %s\n", diag.message);
        abort();
    }
    check_frontier(again, "reopening");
    amq_frontier_stats reopened;
    amq_frontier_stats_get(&reopened, again);
    if (reopened.pushed != saved.pushed || reopened.enqueued != saved.enqueued ||
        reopened.popped != saved.popped || reopened.lost != saved.lost ||
        reopened.generation != saved.generation)
        violation("the reopened frontier's counters are not the saved ones");
    amq_frontier_close(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t descriptors = open_descriptors();
    prepare_scratch();
    input_file files[FILES_MAX];
    size_t count = split_input(files, data, size);
    apply_fixups(files, count, data[0]);
    if (asks_for_a_large_filter(files, count)) {
        free_files(files, count);
        return 0;
    }
    write_files(files, count);

    amq_frontier_options opt;
    fuzz_options(&opt);
    amq_frontier *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_frontier_open(&f, directory, &opt, &diag);
    if (status != AMQ_OK) {
        if (status >= 0 || f || diag.message[0] == '\0')
            violation("open failed without an error, a message, or with a frontier");
        check_files_kept(files, count, true);
    } else {
        check_frontier(f, "opening");
        pop_all(f);
        push_some(f);
        save_and_reopen(f, &opt);
        check_files_kept(files, count, false);
    }
    check_scratch_holds_only_the_frontier();
    if (open_descriptors() != descriptors)
        violation("a file descriptor was left open");
    free_files(files, count);
    return 0;
}
