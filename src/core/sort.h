/*
 * sort.h - the one sort of 64-bit keys (sort.c explains the algorithm).
 */
#ifndef AMQ_SORT_H
#define AMQ_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Words of scratch amq__sort_u64 needs beyond the keys' copies: the radix
 * passes' counters (six passes of 2048). */
#define AMQ__SORT_COUNTS (6 * 2048)

/* Sort n keys ascending, carrying values[i] along with keys[i] when values
 * is not NULL. scratch holds n words, n more when values is not NULL, then
 * AMQ__SORT_COUNTS words. Never allocates. */
void amq__sort_u64(uint64_t *keys, uint64_t *values, size_t n, uint64_t *scratch);

/* Sort n keys and drop repeats; returns how many distinct keys remain, at
 * the front of keys. scratch as for amq__sort_u64 without values. */
size_t amq__sort_unique_u64(uint64_t *keys, size_t n, uint64_t *scratch);

#endif /* AMQ_SORT_H */
