/*
 * index_read.c - the index file (format.h) opened for searching.
 *
 * The file is mapped, not read: a query touches the header, the paths, the
 * directory and the few posting blocks its trigrams name. Opening checks
 * the header, then the paths' and the directory's checksums and shapes
 * (block table in order and in bounds); a block of postings is checked
 * against its checksum when a query first reads from it. Every offset and
 * length is checked against what holds it before use, so a damaged file
 * gets an error naming what is wrong, never a read out of bounds.
 */
#include "index_read.h"

#include "codesearch.h"
#include "format.h"
#include "postings.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct cs_index {
    const char *path;
    const uint8_t *map;
    size_t size;
    uint32_t documents;
    uint64_t trigrams;
    const char **paths;
    const uint8_t *section[FORMAT_SECTIONS];
    uint64_t length[FORMAT_SECTIONS];
    uint32_t blocks;
    const uint8_t *block_table, *entries;
    uint64_t entries_len;
    uint8_t *block_checked; /* per block: postings checksum verified */
};

static int damaged(const cs_index *x, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int damaged(const cs_index *x, const char *format, ...)
{
    char what[200];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    codesearch_error("%s: damaged index: %s", x->path, what);
    return 2;
}

static int check_header(cs_index *x)
{
    const uint8_t *h = x->map;
    if (x->size < 8 || memcmp(h, FORMAT_MAGIC, 8) != 0) {
        codesearch_error("%s is not a codesearch index (index it again with '%s index')", x->path,
                         codesearch_program);
        return 2;
    }
    if (x->size < FORMAT_HEADER_BYTES)
        return damaged(x, "the header is cut short");
    if (get_u32(h + 8) != FORMAT_VERSION) {
        codesearch_error("%s: index format version %u, this program reads %u", x->path,
                         get_u32(h + 8), FORMAT_VERSION);
        return 2;
    }
    if (XXH3_64bits(h, 96) != get_u64(h + 96))
        return damaged(x, "the header's checksum does not match");
    x->documents = get_u32(h + 12);
    x->trigrams = get_u64(h + 16);
    uint64_t at = FORMAT_HEADER_BYTES;
    for (int s = 0; s < FORMAT_SECTIONS; s++) {
        uint64_t offset = get_u64(h + 24 + 24 * s), length = get_u64(h + 32 + 24 * s);
        if (offset != at || length > x->size - offset)
            return damaged(x, "section %d lies outside the file", s);
        x->section[s] = x->map + offset;
        x->length[s] = length;
        at = offset + length;
    }
    if (at != x->size)
        return damaged(x, "%llu bytes past the last section", (unsigned long long)(x->size - at));
    return 0;
}

static bool section_intact(const cs_index *x, int s)
{
    return XXH3_64bits(x->section[s], (size_t)x->length[s]) == get_u64(x->map + 40 + 24 * s);
}

static int read_paths(cs_index *x)
{
    if (!section_intact(x, SECTION_PATHS))
        return damaged(x, "the paths' checksum does not match");
    const char *p = (const char *)x->section[SECTION_PATHS];
    uint64_t len = x->length[SECTION_PATHS];
    if (len > 0 && p[len - 1] != '\0')
        return damaged(x, "the last path is not ended");
    /* Each path takes at least its NUL: a count beyond the section's bytes
     * is refused before the table of paths is allocated for it. */
    if (x->documents > len)
        return damaged(x, "%u documents but %llu bytes of paths", x->documents,
                       (unsigned long long)len);
    x->paths = malloc(((size_t)x->documents + 1) * sizeof *x->paths);
    if (!x->paths) {
        codesearch_error("out of memory");
        return 2;
    }
    uint64_t at = 0;
    for (uint32_t d = 0; d < x->documents; d++) {
        if (at >= len)
            return damaged(x, "%u paths for %u documents", d, x->documents);
        x->paths[d] = p + at;
        at += strlen(p + at) + 1;
    }
    if (at != len)
        return damaged(x, "more paths than the %u documents", x->documents);
    return 0;
}

static int read_directory(cs_index *x)
{
    if (!section_intact(x, SECTION_DIRECTORY))
        return damaged(x, "the directory's checksum does not match");
    const uint8_t *d = x->section[SECTION_DIRECTORY];
    uint64_t len = x->length[SECTION_DIRECTORY];
    if (len < 4)
        return damaged(x, "the directory is cut short");
    x->blocks = get_u32(d);
    if (((uint64_t)x->blocks * BLOCK_BYTES) > len - 4 ||
        x->blocks != (x->trigrams + DIRECTORY_BLOCK - 1) / DIRECTORY_BLOCK)
        return damaged(x, "%u directory blocks for %llu trigrams", x->blocks,
                       (unsigned long long)x->trigrams);
    x->block_table = d + 4;
    x->entries = x->block_table + (size_t)x->blocks * BLOCK_BYTES;
    x->entries_len = len - 4 - (uint64_t)x->blocks * BLOCK_BYTES;
    for (uint32_t b = 0; b < x->blocks; b++) {
        const uint8_t *e = x->block_table + (size_t)b * BLOCK_BYTES;
        bool first = b == 0;
        const uint8_t *prev = e - BLOCK_BYTES;
        if (get_u32(e) >= 1u << 24 || get_u32(e + 4) > x->entries_len ||
            get_u64(e + 8) > x->length[SECTION_POSTINGS] ||
            (first ? get_u32(e + 4) != 0 || get_u64(e + 8) != 0
                   : get_u32(e) <= get_u32(prev) || get_u32(e + 4) < get_u32(prev + 4) ||
                         get_u64(e + 8) < get_u64(prev + 8)))
            return damaged(x, "directory block %u is out of order or bounds", b);
    }
    x->block_checked = calloc((size_t)x->blocks + 1, 1);
    if (!x->block_checked) {
        codesearch_error("out of memory");
        return 2;
    }
    return 0;
}

int cs_index_open(cs_index **out, const char *path)
{
    *out = NULL;
    cs_index *x = calloc(1, sizeof *x);
    if (!x) {
        codesearch_error("out of memory");
        return 2;
    }
    x->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        codesearch_error("%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(x);
        return 2;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        codesearch_error("%s is not a codesearch index (%s)", path,
                         S_ISREG(st.st_mode) ? "empty" : "not a regular file");
        close(fd);
        free(x);
        return 2;
    }
    x->size = (size_t)st.st_size;
    void *map = mmap(NULL, x->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        codesearch_error("%s: %s", path, strerror(errno));
        free(x);
        return 2;
    }
    x->map = map;
    if (check_header(x) != 0 || read_paths(x) != 0 || read_directory(x) != 0) {
        cs_index_close(x);
        return 2;
    }
    *out = x;
    return 0;
}

void cs_index_close(cs_index *x)
{
    if (!x)
        return;
    if (x->map)
        munmap((void *)x->map, x->size);
    free(x->paths);
    free(x->block_checked);
    free(x);
}

uint32_t cs_index_documents(const cs_index *x)
{
    return x->documents;
}

const char *cs_index_path(const cs_index *x, uint32_t document)
{
    return x->paths[document];
}

/* The block whose range may hold t: the last whose first trigram <= t. */
static bool find_block(const cs_index *x, uint32_t t, uint32_t *block)
{
    uint32_t low = 0, high = x->blocks; /* answer in [low, high) */
    if (high == 0 || get_u32(x->block_table) > t)
        return false;
    while (high - low > 1) {
        uint32_t mid = low + (high - low) / 2;
        if (get_u32(x->block_table + (size_t)mid * BLOCK_BYTES) <= t)
            low = mid;
        else
            high = mid;
    }
    *block = low;
    return true;
}

int cs_index_trigram(cs_index *x, uint32_t t, uint64_t *bitmap)
{
    uint32_t b;
    if (!find_block(x, t, &b))
        return 0;
    const uint8_t *e = x->block_table + (size_t)b * BLOCK_BYTES;
    bool last = b + 1 == x->blocks;
    const uint8_t *p = x->entries + get_u32(e + 4);
    const uint8_t *end =
        last ? x->entries + x->entries_len : x->entries + get_u32(e + 4 + BLOCK_BYTES);
    uint64_t post = get_u64(e + 8);
    uint64_t post_end = last ? x->length[SECTION_POSTINGS] : get_u64(e + 8 + BLOCK_BYTES);
    if (!x->block_checked[b]) {
        const uint8_t *bytes = x->section[SECTION_POSTINGS] + post;
        if (XXH3_64bits(bytes, (size_t)(post_end - post)) != get_u64(e + 16))
            return damaged(x, "the postings of directory block %u do not match their checksum", b);
        x->block_checked[b] = 1;
    }
    uint64_t trigram = get_u32(e);
    uint64_t entries_in_block =
        last ? x->trigrams - (uint64_t)b * DIRECTORY_BLOCK : DIRECTORY_BLOCK;
    for (uint64_t i = 0; i < entries_in_block; i++) {
        uint64_t delta, word, len;
        if (get_varint(&p, end, &delta) || get_varint(&p, end, &word) ||
            get_varint(&p, end, &len) || (i > 0 && delta == 0) || delta >= 1u << 24 ||
            len > post_end - post || (word >> 1) > x->documents || (word >> 1) == 0)
            return damaged(x, "directory block %u has a bad entry", b);
        trigram += delta;
        if (trigram > t)
            return 0;
        if (trigram == t) {
            if (!postings_decode(bitmap, x->section[SECTION_POSTINGS] + post, (size_t)len,
                                 (uint32_t)(word >> 1), x->documents, (unsigned)(word & 1)))
                return damaged(x, "the documents of a trigram do not decode");
            return 0;
        }
        post += len;
    }
    return 0;
}
