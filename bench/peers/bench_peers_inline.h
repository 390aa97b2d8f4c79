/*
 * bench_peers_inline.h - amq's inline queries for the vs/ pairs
 * (amq_inline.c): how many of hashes[0..n) a filter answers "maybe" for,
 * through a view taken once (amq/inline.h); UINT64_MAX when the library
 * refuses the view.
 */
#ifndef AMQ_BENCH_PEERS_INLINE_H
#define AMQ_BENCH_PEERS_INLINE_H

#include <stddef.h>
#include <stdint.h>

/* filter: an amq_fuse. */
uint64_t bench_inline_fuse_count(const void *filter, const uint64_t *hashes, size_t n);
/* filter: an amq_blocked_bloom of the split layout. */
uint64_t bench_inline_split_block_count(const void *filter, const uint64_t *hashes, size_t n);
/* filter: an amq_cuckoo of 12-bit fingerprints in buckets of 4, one table. */
uint64_t bench_inline_cuckoo_count(const void *filter, const uint64_t *hashes, size_t n);

#endif /* AMQ_BENCH_PEERS_INLINE_H */
