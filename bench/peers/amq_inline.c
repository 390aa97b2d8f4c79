/*
 * amq_inline.c - amq's queries compiled into the caller's loop
 * (amq/inline.h), for the vs/ pairs' inline phases: what a user who takes a
 * view and queries it in a loop of their own gets. Built with the peer
 * adapters' flags (-O3 -march=native), as a user's program built for its
 * machine would be; the loops are here and not in bench_peers.c for that.
 */
#include "bench_peers_inline.h"

#include "amq/inline.h"

uint64_t bench_inline_fuse_count(const void *filter, const uint64_t *hashes, size_t n)
{
    amq_fuse_view view;
    if (amq_fuse_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL) != AMQ_OK)
        return UINT64_MAX;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_fuse_view_contains_hash(&view, hashes[i]);
    return hits;
}

uint64_t bench_inline_split_block_count(const void *filter, const uint64_t *hashes, size_t n)
{
    amq_split_block_view view;
    if (amq_split_block_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL) != AMQ_OK)
        return UINT64_MAX;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_split_block_view_contains_hash(&view, hashes[i]);
    return hits;
}

uint64_t bench_inline_cuckoo_count(const void *filter, const uint64_t *hashes, size_t n)
{
    amq_cuckoo_view view;
    if (amq_cuckoo_view_get(&view, filter, AMQ_INLINE_LAYOUT, NULL) != AMQ_OK)
        return UINT64_MAX;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_cuckoo_view_contains_hash(&view, hashes[i]);
    return hits;
}
