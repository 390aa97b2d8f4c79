/*
 * index_read.h - an opened index, as the search reads it: the documents'
 * paths, and for a trigram the documents that may hold it.
 */
#ifndef CODESEARCH_INDEX_READ_H
#define CODESEARCH_INDEX_READ_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_index cs_index;

/* Open the index at path. 0, or 2 after printing what is wrong. */
int cs_index_open(cs_index **out, const char *path);
void cs_index_close(cs_index *index);

uint32_t cs_index_documents(const cs_index *index);
const char *cs_index_path(const cs_index *index, uint32_t document);

/* Set in bitmap (one bit a document, document d at bit d % 64 of word
 * d / 64) the documents that may hold trigram t. 0, or 2 after printing
 * what is wrong. */
int cs_index_trigram(cs_index *index, uint32_t trigram, uint64_t *bitmap);

#endif /* CODESEARCH_INDEX_READ_H */
