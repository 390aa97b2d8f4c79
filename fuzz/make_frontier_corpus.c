/*
 * make_frontier_corpus.c - remake the seed corpus of
 * fuzz/fuzz_frontier_open.c: frontier directories the library makes,
 * packed in that target's input format (its opening comment):
 *
 *     u8 fix-ups | per file: u8 kind | u64 LE number | u32 LE length | bytes
 *
 * with every fix-up bit set (they change nothing in files the library
 * wrote), the files in name order.
 *
 * Usage: make_frontier_corpus DIR   (e.g. fuzz/corpus/frontier_open)
 *
 * The seeds:
 *   empty      no file at all: the open creates a frontier;
 *   fresh      a new frontier's first checkpoint: a manifest alone;
 *   small      five URLs pushed and saved: a manifest, a filter, a segment;
 *   spilled    URLs past two segment files, saved, with a 4-URL memory cap;
 *   popped     spilled, then most of the first segment popped and saved:
 *              a read position inside a segment;
 *   leftovers  popped, then pushes spilled after the save and the frontier
 *              closed without saving (bytes past a listed segment length),
 *              plus what a crash and a user leave: a copy of the filter as
 *              the next generation's, a save's temporary file and a file
 *              that is not the frontier's.
 * The frontiers are made in DIR/.work, removed at the end.
 */
#include "amq/frontier.h"
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

#define ALL_FIXUPS 7
#define PATH_SIZE  4096
#define FILES_MAX  8

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "make_frontier_corpus: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    exit(1);
}

static void check(int status, const amq_diag *diag, const char *what)
{
    if (status < 0)
        fail(what, diag->message);
}

/* URL i: of 40 to 540 bytes, so that a few hundred fill two 64 KiB segments. */
static size_t make_url(char *out, size_t size, uint64_t i)
{
    int len = snprintf(out, size, "https://host%" PRIu64 ".example/page/%" PRIu64 "/", i % 7, i);
    size_t total = 40 + (size_t)(i * 37 % 500);
    for (size_t at = (size_t)len; at < total; at++)
        out[at] = (char)('a' + at % 26);
    return total;
}

static void push_urls(amq_frontier *f, uint64_t first, uint64_t count)
{
    char url[600];
    amq_diag diag;
    for (uint64_t i = first; i < first + count; i++)
        check(amq_frontier_push(f, url, make_url(url, sizeof url, i), &diag), &diag, "push");
}

static void pop_urls(amq_frontier *f, uint64_t count)
{
    char url[AMQ_FRONTIER_MAX_URL + 1];
    size_t len;
    amq_diag diag;
    for (uint64_t i = 0; i < count; i++)
        if (amq_frontier_pop(url, sizeof url, &len, f, &diag) != 1)
            fail("pop", diag.message);
}

static void empty_directory(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *entry;
    char path[PATH_SIZE];
    while (d && (entry = readdir(d)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        if (unlink(path) != 0)
            fail("cannot remove", path);
    }
    if (d)
        closedir(d);
}

static void write_file(const char *dir, const char *name, const void *bytes, size_t len)
{
    char path[PATH_SIZE];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(bytes, 1, len, out) != len || fclose(out) != 0)
        fail("cannot write", path);
}

static uint8_t *read_file(const char *dir, const char *name, size_t *len)
{
    char path[PATH_SIZE];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *in = fopen(path, "rb");
    struct stat st;
    if (!in || fstat(fileno(in), &st) != 0)
        fail("cannot read", path);
    *len = (size_t)st.st_size;
    uint8_t *bytes = malloc(*len ? *len : 1);
    if (!bytes || fread(bytes, 1, *len, in) != *len)
        fail("cannot read", path);
    fclose(in);
    return bytes;
}

/* The fuzz target's kind and number for a file name. */
static uint8_t kind_of(const char *name, uint64_t *number)
{
    *number = 0;
    if (strcmp(name, "frontier.amq") == 0)
        return 0;
    if (amq__frontier_numbered_name_parse(name, "filter-", ".amq", number))
        return 1;
    if (amq__segment_name_parse(name, number))
        return 2;
    if (strcmp(name, ".frontier.amq.tmp") == 0)
        return 3;
    if (name[0] == '.' &&
        amq__frontier_numbered_name_parse(name + 1, "filter-", ".amq.tmp", number))
        return 3;
    if (sscanf(name, "notes-%16" SCNx64 ".txt", number) == 1)
        return 4;
    fail("a file the fuzz target cannot name", name);
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Write the files of dir as the seed out/name. */
static void pack(const char *dir, const char *out, const char *name)
{
    char *names[FILES_MAX];
    size_t count = 0;
    DIR *d = opendir(dir);
    struct dirent *entry;
    while (d && (entry = readdir(d)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        if (count == FILES_MAX)
            fail("more files than the fuzz target takes", dir);
        names[count] = strdup(entry->d_name);
        if (!names[count++])
            fail("out of memory", NULL);
    }
    if (!d)
        fail("cannot list", dir);
    closedir(d);
    qsort(names, count, sizeof *names, compare_names);

    char path[PATH_SIZE];
    snprintf(path, sizeof path, "%s/%s", out, name);
    FILE *seed = fopen(path, "wb");
    if (!seed || fputc(ALL_FIXUPS, seed) == EOF)
        fail("cannot write", path);
    for (size_t i = 0; i < count; i++) {
        size_t len;
        uint8_t *bytes = read_file(dir, names[i], &len);
        uint8_t head[13];
        uint64_t number;
        head[0] = kind_of(names[i], &number);
        amq__store_u64le(head + 1, number);
        amq__store_u32le(head + 9, (uint32_t)len);
        if (fwrite(head, 1, sizeof head, seed) != sizeof head || fwrite(bytes, 1, len, seed) != len)
            fail("cannot write", path);
        free(bytes);
        free(names[i]);
    }
    if (fclose(seed) != 0)
        fail("cannot write", path);
}

static amq_frontier *open_frontier(const char *dir)
{
    amq_frontier_options opt;
    amq_frontier_options_init(&opt);
    opt.initial_capacity = 64;
    opt.memory_bytes = AMQ_FRONTIER_MIN_MEMORY;
    opt.memory_urls = 4;
    opt.segment_bytes = AMQ_FRONTIER_MIN_SEGMENT;
    amq_frontier *f;
    amq_diag diag;
    check(amq_frontier_open(&f, dir, &opt, &diag), &diag, "open");
    return f;
}

static void save(amq_frontier *f)
{
    amq_diag diag;
    check(amq_frontier_save(f, &diag), &diag, "save");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const char *out = argv[1];
    char dir[PATH_SIZE];
    snprintf(dir, sizeof dir, "%s/.work", out);
    if (mkdir(out, 0777) != 0 && access(out, W_OK) != 0)
        fail("cannot make", out);
    if (mkdir(dir, 0777) != 0 && access(dir, W_OK) != 0)
        fail("cannot make", dir);
    empty_directory(dir);
    pack(dir, out, "empty");

    amq_frontier *f = open_frontier(dir);
    amq_frontier_close(f);
    pack(dir, out, "fresh");

    f = open_frontier(dir);
    push_urls(f, 0, 5);
    save(f);
    amq_frontier_close(f);
    pack(dir, out, "small");

    empty_directory(dir);
    f = open_frontier(dir);
    push_urls(f, 0, 250);
    save(f);
    amq_frontier_close(f);
    pack(dir, out, "spilled");

    f = open_frontier(dir);
    pop_urls(f, 150);
    save(f);
    amq_frontier_close(f);
    pack(dir, out, "popped");

    f = open_frontier(dir);
    amq_frontier_stats stats;
    amq_frontier_stats_get(&stats, f);
    push_urls(f, 1000, 10);
    amq_frontier_close(f);
    size_t len;
    char name[64];
    snprintf(name, sizeof name, "filter-%016" PRIx64 ".amq", stats.generation);
    uint8_t *filter = read_file(dir, name, &len);
    snprintf(name, sizeof name, "filter-%016" PRIx64 ".amq", stats.generation + 1);
    write_file(dir, name, filter, len);
    write_file(dir, ".frontier.amq.tmp", filter, len / 2);
    free(filter);
    write_file(dir, "notes-0000000000000001.txt", "not the frontier's\n", 19);
    pack(dir, out, "leftovers");

    empty_directory(dir);
    if (rmdir(dir) != 0)
        fail("cannot remove", dir);
    return 0;
}
