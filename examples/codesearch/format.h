/*
 * format.h - the index file: a header, then three sections, each with its
 * own checksum so that opening checks only what a query reads.
 *
 *   header (104 bytes, little-endian):
 *     0  magic "AMQCSIX" 0x01
 *     8  u32 format version (1)
 *    12  u32 documents
 *    16  u64 distinct trigrams
 *    24  3 x { u64 offset, u64 length, u64 XXH3-64 of the section }:
 *        paths, directory, postings
 *    96  u64 XXH3-64 of bytes 0-95
 *
 *   paths: each document's path ended by a NUL byte, sorted (strcmp);
 *     document d is the d-th.
 *
 *   directory: the trigrams in increasing order, in blocks of
 *     DIRECTORY_BLOCK:
 *       u32 block count, then per block { u32 first trigram, u32 offset
 *       of its entries (from the entries' start), u64 offset of its
 *       postings (in the postings section), u64 XXH3-64 of its postings }
 *       then the entries, per trigram three varints (7 bits a byte, low
 *       first): the trigram minus the previous one in the block (0 for the
 *       first), count << 1 | kind, and the byte length of its postings.
 *     A lookup is a binary search over the blocks' first trigrams and a
 *     walk of at most DIRECTORY_BLOCK entries; a list's offset is its
 *     block's plus the lengths before it.
 *
 *   postings: each trigram's documents, exactly (postings.h): Rice-coded
 *     gaps, or a bitmap of all documents when that is smaller.
 *
 * The paths and the directory are checked whole when the index opens
 * (they are read by every query); a block's postings are checked the
 * first time a query reads one of its lists.
 */
#ifndef CODESEARCH_FORMAT_H
#define CODESEARCH_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define FORMAT_MAGIC        "AMQCSIX\x01"
#define FORMAT_VERSION      1u
#define FORMAT_HEADER_BYTES 104u
#define FORMAT_SECTIONS     3
#define SECTION_PATHS       0
#define SECTION_DIRECTORY   1
#define SECTION_POSTINGS    2
#define DIRECTORY_BLOCK     64u
#define BLOCK_BYTES         24u

static inline void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* Write v as a varint at p (at most 10 bytes); returns the bytes written. */
static inline size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Read a varint from [*p, end): 0 and *p advanced, or -1 if it runs past
 * end or past 64 bits. */
static inline int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

#endif /* CODESEARCH_FORMAT_H */
