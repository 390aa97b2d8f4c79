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
 * 2. Trigrams. Each file is read in 1 MiB chunks through a three-byte
 *    window (so no trigram is lost at a chunk's edge); a table of all 2^24
 *    trigrams remembers the last document that held each, so a file's
 *    distinct trigrams are kept once each, in one array for all files. A
 *    file that cannot be read is reported and left out.
 *
 *    The lists are then made by a counting sort of that array (write_index):
 *    4 bytes a posting twice and the 64 MiB table, no per-list allocation.
 *
 * 3. Save (index_write.c): the lists in trigram order, each exactly, as
 *    Rice-coded gaps or a bitmap (postings.c), written atomically. An
 *    existing file at the output path is replaced only when it is itself an
 *    index, so a slip of the -o argument cannot overwrite a source file.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE */

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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (1u << 20)
#define TRIGRAMS   (1u << 24)

/* The paths the walk found, indexed after sorting. */
typedef struct path_list {
    char **path;
    size_t count, capacity;
} path_list;

typedef struct index_builder {
    path_list found;
    /* per trigram: while reading, 1 + the last document that held it;
     * then where its list ends in the documents array */
    uint32_t *seen;
    /* each document's distinct trigrams, document after document */
    uint32_t *emitted;
    size_t emitted_len, emitted_capacity;
    size_t *document_end; /* where each document's trigrams end in emitted */
    size_t document_capacity;
    char *paths; /* NUL-ended paths, back to back */
    size_t paths_len, paths_capacity;
    uint32_t documents, used;
    uint64_t bytes_read, postings;
    uint8_t *chunk;
    bool failed; /* out of memory, or too many documents */
} index_builder;

/* A zeroed table of every trigram, on huge pages where the system has
 * them: one random access a byte read is the build's main cost. */
static uint32_t *trigram_table(void)
{
    size_t bytes = (size_t)TRIGRAMS * sizeof(uint32_t);
    void *table = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (table == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(table, bytes, MADV_HUGEPAGE);
#endif
    return table;
}

/* Room for more emitted trigrams. */
static bool reserve_emitted(index_builder *b, size_t more)
{
    if (b->emitted_len + more <= b->emitted_capacity)
        return true;
    size_t capacity = b->emitted_capacity ? b->emitted_capacity : (size_t)1 << 20;
    while (capacity < b->emitted_len + more)
        capacity *= 2;
    uint32_t *grown = realloc(b->emitted, capacity * sizeof *grown);
    if (!grown)
        return false;
    b->emitted = grown;
    b->emitted_capacity = capacity;
    return true;
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

/* Read one file's distinct trigrams as the next document. */
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
    if (b->documents == b->document_capacity) {
        size_t capacity = b->document_capacity ? 2 * b->document_capacity : 1024;
        size_t *grown = realloc(b->document_end, capacity * sizeof *grown);
        if (!grown) {
            b->failed = true;
            close(fd);
            return;
        }
        b->document_end = grown;
        b->document_capacity = capacity;
    }
    uint32_t mark = b->documents + 1; /* in seen: this document holds it */
    uint32_t *seen = b->seen;
    uint32_t window = 0; /* the last bytes read, the newest lowest */
    uint64_t read_so_far = 0;
    for (;;) {
        ssize_t got = read(fd, b->chunk, READ_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            codesearch_error("%s: %s (indexed up to the error)", path, strerror(errno));
            break;
        }
        if (got == 0)
            break;
        if (!reserve_emitted(b, (size_t)got)) {
            b->failed = true;
            break;
        }
        uint32_t *out = b->emitted + b->emitted_len;
        size_t n = 0, i = 0;
        /* a file's first two bytes end no trigram */
        for (; i < (size_t)got && read_so_far + i < 2; i++)
            window = window << 8 | b->chunk[i];
        for (; i < (size_t)got; i++) {
            window = window << 8 | b->chunk[i];
            uint32_t t = window & (TRIGRAMS - 1);
            if (seen[t] != mark) {
                seen[t] = mark;
                out[n++] = t;
            }
        }
        b->emitted_len += n;
        read_so_far += (uint64_t)got;
    }
    b->bytes_read += read_so_far;
    b->document_end[b->documents++] = b->emitted_len;
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

/* Write the documents and every trigram's list, in trigram order, to path.
 * The lists come from the documents' trigrams by a counting sort: count
 * each trigram's documents, place each list after the ones before it, then
 * scatter the documents in order, so every list comes out increasing. */
static int write_index(index_builder *b, const char *path)
{
    if (b->emitted_len >= UINT32_MAX) {
        codesearch_error("%llu postings: more than this index holds",
                         (unsigned long long)b->emitted_len);
        return 2;
    }
    uint32_t *seen = b->seen;
    memset(seen, 0, (size_t)TRIGRAMS * sizeof *seen);
    for (size_t i = 0; i < b->emitted_len; i++)
        b->used += seen[b->emitted[i]]++ == 0;
    uint32_t start = 0;
    for (uint32_t t = 0; t < TRIGRAMS; t++) {
        uint32_t count = seen[t];
        seen[t] = start;
        start += count;
    }
    uint32_t *documents_of = malloc((b->emitted_len + 1) * sizeof *documents_of);
    index_list *lists = malloc(((size_t)b->used + 1) * sizeof *lists);
    if (!documents_of || !lists) {
        codesearch_error("out of memory");
        free(documents_of);
        free(lists);
        return 2;
    }
    size_t from = 0;
    for (uint32_t d = 0; d < b->documents; d++) {
        for (size_t i = from; i < b->document_end[d]; i++)
            documents_of[seen[b->emitted[i]]++] = d;
        from = b->document_end[d];
    }
    b->postings = b->emitted_len;
    free(b->emitted); /* the lists hold it all now */
    b->emitted = NULL;
    size_t n = 0;
    uint32_t end = 0;
    for (uint32_t t = 0; t < TRIGRAMS; t++)
        if (seen[t] != end) {
            lists[n++] = (index_list){ t, documents_of + end, seen[t] - end };
            end = seen[t];
        }
    index_sizes sizes;
    int status = index_write(path, b->paths, b->paths_len, b->documents, lists, n, &sizes);
    free(lists);
    free(documents_of);
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
    if (b->seen)
        munmap(b->seen, (size_t)TRIGRAMS * sizeof *b->seen);
    free(b->emitted);
    free(b->document_end);
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
    b.chunk = malloc(READ_CHUNK);
    b.seen = trigram_table();
    if (!b.chunk || !b.seen) {
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
