/*
 * index.c - `codesearch index [-o INDEX] PATH...`: build the trigram index
 * of the files under each PATH (format.h describes the file).
 *
 * 1. Walk. Directories are read recursively, as `grep -r` reads them:
 *    symbolic links met inside a directory are not followed, devices,
 *    FIFOs and sockets are skipped, a PATH named on the command line is
 *    followed. No file is left out for its name or its bytes (dot-files,
 *    binary files, long lines are all indexed). The paths are sorted, and
 *    document d is the d-th path: the order output comes in.
 *
 * 2. Postings. Each file is read in 1 MiB chunks (two bytes carried over,
 *    so no trigram is lost at a chunk's edge) and each trigram at each
 *    offset is looked up in an open-addressing table keyed by the trigram.
 *    A table slot remembers the last document that added to its list, so a
 *    trigram that repeats in a file costs a comparison, and each list gets
 *    each document once, in increasing order. A file that cannot be read
 *    is reported and left out.
 *
 * 3. Save (index_write.c): the lists in trigram order, each exactly, as
 *    Rice-coded gaps or a bitmap (postings.c), written atomically. An
 *    existing file at the output path is replaced only when it is itself an
 *    index, so a slip of the -o argument cannot overwrite a source file.
 */
#include "../common/options.h"
#include "codesearch.h"
#include "index_write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (1u << 20)

/* One trigram's documents, in increasing order. */
typedef struct posting_list {
    uint32_t *documents;
    uint32_t count, capacity;
} posting_list;

/* A slot of the trigram table: key 0 is empty, else trigram + 1. */
typedef struct trigram_slot {
    uint32_t key;
    uint32_t list;
    uint32_t last_document; /* UINT32_MAX: none yet */
} trigram_slot;

/* The paths the walk found, indexed after sorting. */
typedef struct path_list {
    char **path;
    size_t count, capacity;
} path_list;

typedef struct index_builder {
    path_list found;
    trigram_slot *slots;
    uint32_t slot_mask, used;
    posting_list *lists;
    char *paths; /* NUL-ended paths, back to back */
    size_t paths_len, paths_capacity;
    uint32_t documents;
    uint64_t bytes_read, postings;
    uint8_t *chunk;
    bool failed; /* out of memory, or too many documents */
} index_builder;

static bool table_init(index_builder *b, uint32_t slots)
{
    b->slots = malloc(slots * sizeof *b->slots);
    b->lists = malloc((slots / 2) * sizeof *b->lists);
    if (!b->slots || !b->lists)
        return false;
    memset(b->slots, 0, slots * sizeof *b->slots);
    b->slot_mask = slots - 1;
    return true;
}

static uint32_t slot_of(const index_builder *b, uint32_t key)
{
    uint32_t at = (key * 0x9E3779B1u) >> 8 & b->slot_mask;
    while (b->slots[at].key != 0 && b->slots[at].key != key)
        at = (at + 1) & b->slot_mask;
    return at;
}

/* Double the table when it is half full. */
static bool table_grow(index_builder *b)
{
    index_builder bigger = *b;
    uint32_t slots = (b->slot_mask + 1) * 2;
    bigger.slots = calloc(slots, sizeof *bigger.slots);
    posting_list *lists = realloc(b->lists, (slots / 2) * sizeof *lists);
    if (!bigger.slots || !lists) {
        free(bigger.slots);
        if (lists)
            b->lists = lists;
        return false;
    }
    bigger.slot_mask = slots - 1;
    for (uint32_t i = 0; i <= b->slot_mask; i++)
        if (b->slots[i].key)
            bigger.slots[slot_of(&bigger, b->slots[i].key)] = b->slots[i];
    free(b->slots);
    b->slots = bigger.slots;
    b->slot_mask = bigger.slot_mask;
    b->lists = lists;
    return true;
}

static void add_posting(index_builder *b, uint32_t trigram, uint32_t document)
{
    uint32_t key = trigram + 1;
    trigram_slot *slot = &b->slots[slot_of(b, key)];
    if (slot->key == 0) {
        if (b->used + 1 > (b->slot_mask + 1) / 2) {
            if (!table_grow(b)) {
                b->failed = true;
                return;
            }
            slot = &b->slots[slot_of(b, key)];
        }
        *slot = (trigram_slot){ key, b->used, UINT32_MAX };
        b->lists[b->used++] = (posting_list){ NULL, 0, 0 };
    }
    if (slot->last_document == document)
        return;
    slot->last_document = document;
    posting_list *list = &b->lists[slot->list];
    if (list->count == list->capacity) {
        uint32_t capacity = list->capacity ? list->capacity * 2 : 4;
        uint32_t *grown = realloc(list->documents, capacity * sizeof *grown);
        if (!grown) {
            b->failed = true;
            return;
        }
        list->documents = grown;
        list->capacity = capacity;
    }
    list->documents[list->count++] = document;
    b->postings++;
}

static bool remember_path(index_builder *b, const char *path)
{
    size_t len = strlen(path) + 1;
    if (b->paths_len + len > b->paths_capacity) {
        size_t capacity = b->paths_capacity ? b->paths_capacity * 2 : 65536;
        while (capacity < b->paths_len + len)
            capacity *= 2;
        char *grown = realloc(b->paths, capacity);
        if (!grown)
            return false;
        b->paths = grown;
        b->paths_capacity = capacity;
    }
    memcpy(b->paths + b->paths_len, path, len);
    b->paths_len += len;
    return true;
}

/* Read one file's trigrams into the postings as the next document. */
static void index_file(index_builder *b, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        codesearch_error("%s: %s (left out)", path, strerror(errno));
        return;
    }
    if (b->documents == UINT32_MAX - 1 || !remember_path(b, path)) {
        b->failed = true;
        close(fd);
        return;
    }
    uint32_t document = b->documents++;
    size_t carried = 0; /* bytes kept from the previous chunk */
    for (;;) {
        ssize_t got = read(fd, b->chunk + carried, READ_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            codesearch_error("%s: %s (indexed up to the error)", path, strerror(errno));
            break;
        }
        if (got == 0)
            break;
        b->bytes_read += (uint64_t)got;
        size_t have = carried + (size_t)got;
        for (size_t i = 0; i + 2 < have && !b->failed; i++)
            add_posting(b, codesearch_trigram(b->chunk + i), document);
        carried = have < 2 ? have : 2;
        memmove(b->chunk, b->chunk + have - carried, carried);
    }
    close(fd);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Find path's files: a directory's entries recursively, a regular file as itself.
 * top: named on the command line (followed when a link). */
static void walk(index_builder *b, const char *path, bool top)
{
    struct stat st;
    if ((top ? stat(path, &st) : lstat(path, &st)) != 0) {
        codesearch_error("%s: %s", path, strerror(errno));
        return;
    }
    if (S_ISREG(st.st_mode)) {
        path_list *f = &b->found;
        if (f->count == f->capacity) {
            size_t capacity = f->capacity ? 2 * f->capacity : 1024;
            char **grown = realloc(f->path, capacity * sizeof *grown);
            if (!grown) {
                b->failed = true;
                return;
            }
            f->path = grown;
            f->capacity = capacity;
        }
        if ((f->path[f->count] = strdup(path)) == NULL)
            b->failed = true;
        else
            f->count++;
        return;
    }
    if (!S_ISDIR(st.st_mode))
        return;
    DIR *dir = opendir(path);
    if (!dir) {
        codesearch_error("%s: %s (left out)", path, strerror(errno));
        return;
    }
    size_t base = strlen(path);
    bool slash = base > 0 && path[base - 1] == '/';
    struct dirent *entry;
    while (!b->failed && (entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        size_t len = base + 1 + strlen(entry->d_name) + 1;
        char *child = malloc(len);
        if (!child) {
            b->failed = true;
            break;
        }
        snprintf(child, len, "%s%s%s", path, slash ? "" : "/", entry->d_name);
        walk(b, child, false);
        free(child);
    }
    closedir(dir);
}

static int by_trigram(const void *a, const void *b)
{
    const index_list *x = a, *y = b;
    return (x->trigram > y->trigram) - (x->trigram < y->trigram);
}

/* Write the documents and every trigram's list, in trigram order, to path. */
static int write_index(index_builder *b, const char *path)
{
    index_list *lists = malloc(((size_t)b->used + 1) * sizeof *lists);
    if (!lists) {
        codesearch_error("out of memory");
        return 2;
    }
    size_t n = 0;
    for (uint32_t i = 0; i <= b->slot_mask; i++)
        if (b->slots[i].key) {
            const posting_list *l = &b->lists[b->slots[i].list];
            lists[n++] = (index_list){ b->slots[i].key - 1, l->documents, l->count };
        }
    qsort(lists, n, sizeof *lists, by_trigram);
    index_sizes sizes;
    int status = index_write(path, b->paths, b->paths_len, b->documents, lists, n, &sizes);
    free(lists);
    if (status != 0)
        return status;
    fprintf(stderr,
            "indexed %u files, %llu bytes: %u trigrams, %llu postings\n"
            "%s: %llu bytes, %.2f bits per posting (paths %llu, directory %llu, postings %llu;"
            " %llu lists as bitmaps)\n",
            b->documents, (unsigned long long)b->bytes_read, b->used,
            (unsigned long long)b->postings, path, (unsigned long long)sizes.file,
            b->postings ? 8.0 * (double)sizes.file / (double)b->postings : 0.0,
            (unsigned long long)sizes.paths, (unsigned long long)sizes.directory,
            (unsigned long long)sizes.postings, (unsigned long long)sizes.bitmaps);
    return 0;
}

static void free_builder(index_builder *b)
{
    for (size_t i = 0; i < b->found.count; i++)
        free(b->found.path[i]);
    free(b->found.path);
    for (uint32_t t = 0; b->lists && t < b->used; t++)
        free(b->lists[t].documents);
    free(b->lists);
    free(b->slots);
    free(b->paths);
    free(b->chunk);
}

static void index_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s index [-o INDEX] PATH...\n"
            "Index the files under each PATH (directories recursively, as grep -r reads them).\n"
            "\n"
            "  -o, --output INDEX  the index file (default codesearch.idx); an existing file is\n"
            "                      replaced only when it is an index\n",
            codesearch_program);
}

/* An existing file at path that is not an index must not be replaced. */
static bool may_write(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT;
    if (!index_is_index(path)) {
        codesearch_error("%s exists and is not an index: not replaced", path);
        return false;
    }
    return true;
}

int codesearch_index(int argc, char **argv)
{
    static const struct option options[] = {
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *output = "codesearch.idx";
    example_options o;
    example_options_init(&o, argc, argv, ":o:h", options);
    int c;
    while ((c = example_options_next(&o)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'h':
            index_usage(stdout);
            return 0;
        default: {
            char message[256];
            example_options_error(message, sizeof message, &o, c);
            codesearch_error("index: %s", message);
            index_usage(stderr);
            return 2;
        }
        }
    }
    if (optind == argc) {
        codesearch_error("index: no PATH given");
        index_usage(stderr);
        return 2;
    }
    if (!may_write(output))
        return 2;
    index_builder b = { 0 };
    b.chunk = malloc(READ_CHUNK + 2);
    if (!b.chunk || !table_init(&b, 1u << 16)) {
        codesearch_error("out of memory");
        free_builder(&b);
        return 2;
    }
    for (int i = optind; i < argc && !b.failed; i++)
        walk(&b, argv[i], true);
    /* sorted by path, so the output is in a known order */
    if (b.found.count)
        qsort(b.found.path, b.found.count, sizeof *b.found.path, by_path);
    for (size_t i = 0; i < b.found.count && !b.failed; i++)
        index_file(&b, b.found.path[i]);
    int status = 2;
    if (b.failed)
        codesearch_error("out of memory after %u files", b.documents);
    else
        status = write_index(&b, output);
    free_builder(&b);
    return status;
}
