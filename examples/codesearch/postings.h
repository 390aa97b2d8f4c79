/*
 * postings.h - one trigram's documents, stored exactly: the gaps between
 * its sorted document numbers Rice-coded (a Golomb-coded set whose values
 * need no hashing, as document numbers are already dense, so there are no
 * false positives), or, for a trigram in a large share of the documents,
 * a bitmap of all of them - whichever is smaller.
 */
#ifndef CODESEARCH_POSTINGS_H
#define CODESEARCH_POSTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POSTINGS_RICE   0u
#define POSTINGS_BITMAP 1u

/* The bytes the list of count documents (of documents in all) takes as
 * kind. */
size_t postings_size(const uint32_t *list, uint32_t count, uint32_t documents, unsigned kind);

/* Encode the sorted list into out (postings_size bytes, zeroed first). */
void postings_encode(uint8_t *out, const uint32_t *list, uint32_t count, uint32_t documents,
                     unsigned kind);

/* Set the list's documents in bitmap (document d at bit d % 64 of word
 * d / 64). false when the bytes are not a valid list of count documents
 * below documents (a damaged index). */
bool postings_decode(uint64_t *bitmap, const uint8_t *in, size_t len, uint32_t count,
                     uint32_t documents, unsigned kind);

#endif /* CODESEARCH_POSTINGS_H */
