/*
 * index_write.h - write an index file (format.h) from the documents'
 * paths and each trigram's documents.
 */
#ifndef CODESEARCH_INDEX_WRITE_H
#define CODESEARCH_INDEX_WRITE_H

#include <stddef.h>
#include <stdint.h>

typedef struct index_list {
    uint32_t trigram;
    const uint32_t *documents; /* increasing */
    uint32_t count;
} index_list;

/* What the file holds, for the summary. */
typedef struct index_sizes {
    uint64_t paths, directory, postings, file;
    uint64_t bitmaps; /* lists stored as bitmaps */
} index_sizes;

/* Write the index of documents (their paths NUL-ended back to back, paths_len
 * bytes in all, sorted) and lists (sorted by trigram) to path, atomically.
 * 0, or 2 after printing what went wrong. */
int index_write(const char *path, const char *paths, size_t paths_len, uint32_t documents,
                const index_list *lists, size_t count, index_sizes *sizes);

/* Whether the file at path starts as an index does (its magic). */
int index_is_index(const char *path);

#endif /* CODESEARCH_INDEX_WRITE_H */
