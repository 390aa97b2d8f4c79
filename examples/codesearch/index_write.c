/*
 * index_write.c - the index file written (format.h): the directory and the
 * postings built in memory, then header, paths, directory and postings
 * written to a temporary file beside the target, synced, and renamed over
 * it, so a crash leaves the old index whole.
 */
#include "index_write.h"

#include "codesearch.h"
#include "format.h"
#include "postings.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct buffer {
    uint8_t *bytes;
    size_t len, capacity;
} buffer;

/* Room for more bytes at the end; NULL when out of memory. */
static uint8_t *reserve(buffer *b, size_t more)
{
    if (b->len + more > b->capacity || !b->bytes) {
        size_t capacity = b->capacity ? b->capacity : 65536;
        while (capacity < b->len + more)
            capacity *= 2;
        uint8_t *grown = realloc(b->bytes, capacity);
        if (!grown)
            return NULL;
        b->bytes = grown;
        b->capacity = capacity;
    }
    return b->bytes + b->len;
}

static bool write_all(FILE *f, const void *bytes, size_t len)
{
    return len == 0 || fwrite(bytes, 1, len, f) == len;
}

int index_write(const char *path, const char *paths, size_t paths_len, uint32_t documents,
                const index_list *lists, size_t count, index_sizes *sizes)
{
    buffer blocks = { 0 }, entries = { 0 }, postings = { 0 };
    uint64_t bitmaps = 0;
    uint32_t block_count = (uint32_t)((count + DIRECTORY_BLOCK - 1) / DIRECTORY_BLOCK);
    bool ok = reserve(&blocks, 4 + (size_t)block_count * BLOCK_BYTES) != NULL;
    if (ok) {
        put_u32(blocks.bytes, block_count);
        blocks.len = 4;
    }
    size_t block_start = 0;
    uint32_t previous = 0;
    for (size_t i = 0; i < count && ok; i++) {
        const index_list *l = &lists[i];
        if (i % DIRECTORY_BLOCK == 0) {
            if (i > 0) /* the previous block's postings checksum */
                put_u64(blocks.bytes + blocks.len - 8,
                        XXH3_64bits(postings.bytes + block_start, postings.len - block_start));
            uint8_t *b = blocks.bytes + blocks.len;
            put_u32(b, l->trigram);
            put_u32(b + 4, (uint32_t)entries.len);
            put_u64(b + 8, postings.len);
            put_u64(b + 16, 0);
            blocks.len += BLOCK_BYTES;
            block_start = postings.len;
            previous = l->trigram;
        }
        size_t rice = postings_size(l->documents, l->count, documents, POSTINGS_RICE);
        size_t bitmap = postings_size(l->documents, l->count, documents, POSTINGS_BITMAP);
        unsigned kind = bitmap < rice ? POSTINGS_BITMAP : POSTINGS_RICE;
        size_t len = kind == POSTINGS_BITMAP ? bitmap : rice;
        bitmaps += kind == POSTINGS_BITMAP;
        uint8_t *e = reserve(&entries, 30);
        uint8_t *p = reserve(&postings, len);
        if (!e || !p) {
            ok = false;
            break;
        }
        size_t n = put_varint(e, l->trigram - previous);
        n += put_varint(e + n, (uint64_t)l->count << 1 | kind);
        n += put_varint(e + n, len);
        entries.len += n;
        postings_encode(p, l->documents, l->count, documents, kind);
        postings.len += len;
        previous = l->trigram;
    }
    if (ok && count > 0)
        put_u64(blocks.bytes + blocks.len - 8,
                XXH3_64bits(postings.bytes + block_start, postings.len - block_start));
    /* the directory section: the blocks, then the entries */
    ok = ok && reserve(&blocks, entries.len) != NULL;
    if (ok && entries.len) {
        memcpy(blocks.bytes + blocks.len, entries.bytes, entries.len);
        blocks.len += entries.len;
    }
    if (!ok) {
        codesearch_error("%s: out of memory", path);
        free(blocks.bytes);
        free(entries.bytes);
        free(postings.bytes);
        return 2;
    }

    uint8_t header[FORMAT_HEADER_BYTES];
    memset(header, 0, sizeof header);
    memcpy(header, FORMAT_MAGIC, 8);
    put_u32(header + 8, FORMAT_VERSION);
    put_u32(header + 12, documents);
    put_u64(header + 16, count);
    const void *section[FORMAT_SECTIONS] = { paths, blocks.bytes, postings.bytes };
    size_t length[FORMAT_SECTIONS] = { paths_len, blocks.len, postings.len };
    uint64_t offset = FORMAT_HEADER_BYTES;
    for (int s = 0; s < FORMAT_SECTIONS; s++) {
        put_u64(header + 24 + 24 * s, offset);
        put_u64(header + 32 + 24 * s, length[s]);
        put_u64(header + 40 + 24 * s, XXH3_64bits(section[s], length[s]));
        offset += length[s];
    }
    put_u64(header + 96, XXH3_64bits(header, 96));

    size_t path_len = strlen(path);
    char *temporary = malloc(path_len + 16);
    int status = 2;
    if (temporary) {
        snprintf(temporary, path_len + 16, "%s.tmp.XXXXXX", path);
        int fd = mkstemp(temporary);
        mode_t mask = umask(0); /* mkstemp makes 0600: give the usual mode */
        umask(mask);
        if (fd >= 0 && fchmod(fd, 0666 & ~mask) != 0) {
            close(fd);
            unlink(temporary);
            fd = -1;
        }
        FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
        if (!f) {
            codesearch_error("%s: %s", temporary, strerror(errno));
            if (fd >= 0)
                close(fd);
        } else {
            bool written = write_all(f, header, sizeof header);
            for (int s = 0; s < FORMAT_SECTIONS; s++)
                written = written && write_all(f, section[s], length[s]);
            written = fflush(f) == 0 && written && fsync(fileno(f)) == 0;
            int saved = errno;
            written = fclose(f) == 0 && written;
            if (written && rename(temporary, path) == 0) {
                status = 0;
            } else {
                codesearch_error("%s: %s", path, strerror(written ? errno : saved));
                unlink(temporary);
            }
        }
    } else {
        codesearch_error("%s: out of memory", path);
    }
    free(temporary);
    *sizes = (index_sizes){ paths_len, blocks.len, postings.len, offset, bitmaps };
    free(blocks.bytes);
    free(entries.bytes);
    free(postings.bytes);
    return status;
}

int index_is_index(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char magic[8];
    int is = fread(magic, 1, 8, f) == 8 && memcmp(magic, FORMAT_MAGIC, 8) == 0;
    fclose(f);
    return is;
}
