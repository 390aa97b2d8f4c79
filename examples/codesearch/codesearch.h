/*
 * codesearch.h - a trigram index of a source tree whose posting lists are
 * filters: what the example's two commands (index.c, search.c) share.
 *
 * The index is one amq bundle (amq/bundle.h):
 *
 *   "documents"        plain bytes: the indexed files' paths, each ended by
 *                      a NUL byte, in the order they were found. Document
 *                      i's ID is the MD5 digest of path i (without the NUL):
 *                      uniformly random 128-bit IDs, as the hash-free Bloom
 *                      banks want.
 *   3 bytes t          the filter of the IDs of the documents whose content
 *                      holds trigram t (three consecutive bytes): an hfb
 *                      filter of the raw IDs, or a gcs filter of them when
 *                      that is smaller.
 *
 * No trigram is left out, so a document missing one of a query's trigrams
 * is certainly not a match: the filters only ever add false candidates,
 * which reading the candidates removes.
 */
#ifndef CODESEARCH_H
#define CODESEARCH_H

#include <stddef.h>
#include <stdint.h>

#define CODESEARCH_DOCUMENTS "documents"
#define CODESEARCH_ID_BYTES  16

/* The trigram starting at p, as a number below 2^24 (byte 0 the high). */
static inline uint32_t codesearch_trigram(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* The trigram's member name in the index (3 bytes). */
static inline void codesearch_trigram_name(uint8_t name[3], uint32_t trigram)
{
    name[0] = (uint8_t)(trigram >> 16);
    name[1] = (uint8_t)(trigram >> 8);
    name[2] = (uint8_t)trigram;
}

/* `codesearch index`: argv after the command. Returns the exit status. */
int codesearch_index(int argc, char **argv);
/* `codesearch search`: argv after the command. Returns the exit status:
 * 0 matches printed, 1 none, 2 an error. */
int codesearch_search(int argc, char **argv);

/* The name the program was run as (argv[0] without its directory): the
 * build's codesearch, or the installed amq-codesearch. */
extern const char *codesearch_program;

/* Print the program's name, ": " and the message to stderr. */
void codesearch_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif /* CODESEARCH_H */
