/*
 * bench_peers.h - the public peers timed beside amq in one process
 * (bench_peers.c), when the build is pointed at their sources with
 * -DAMQ_PEERS_DIR (bench/CMakeLists.txt; bench/README.md, "The peers").
 *
 * Each peer is reached through one small adapter written here
 * (ff_*.cpp: FastFilter/fastfilter_cpp; xor_singleheader.c:
 * FastFilter/xor_singleheader; efficient_cuckoo.cpp: efficient/cuckoofilter)
 * that gives it 64-bit integer keys, its own interface, through the calls
 * below. The loops over the keys are in the adapter, and each key's add or
 * query is a call to a function the compiler may not inline (as the
 * peers' own benchmark, fastfilter_cpp's filterapi.h, does), so a peer
 * pays one direct call per key, as amq's library calls do.
 *
 * Nothing here throws: an adapter catches what its peer throws and answers
 * NULL or a failure count.
 */
#ifndef AMQ_BENCH_PEERS_H
#define AMQ_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_peer_ops {
    const char *name; /* "fastfilter_cpp SimdBlockFilterFixed" */
    /* A dynamic filter: an empty one for n keys, or NULL. */
    void *(*create)(size_t n);
    /* Add keys[0..n) one by one; returns the adds the filter refused. */
    uint64_t (*add_all)(void *filter, const uint64_t *keys, size_t n);
    /* A static filter: built from keys[0..n) (distinct; not modified), or
     * NULL. */
    void *(*build)(const uint64_t *keys, size_t n);
    /* How many of keys[0..n) the filter answers "maybe" for, one query per
     * key. */
    uint64_t (*count)(const void *filter, const uint64_t *keys, size_t n);
    /* Remove keys[0..n) one by one (NULL: the peer cannot); returns the
     * removals that found nothing. */
    uint64_t (*remove_all)(void *filter, const uint64_t *keys, size_t n);
    size_t (*bytes)(const void *filter);
    void (*destroy)(void *filter);
} bench_peer_ops;

/* The adapters. */
extern const bench_peer_ops bench_peer_ff_split_block;
extern const bench_peer_ops bench_peer_ff_bloom10;
extern const bench_peer_ops bench_peer_ff_counting10;
extern const bench_peer_ops bench_peer_ff_cuckoo12;
extern const bench_peer_ops bench_peer_ff_gcs;
extern const bench_peer_ops bench_peer_xor_fuse8;
extern const bench_peer_ops bench_peer_xor_fuse16;
extern const bench_peer_ops bench_peer_efficient_cuckoo12;

#ifdef __cplusplus
}
#else
#include "bench.h"

/* The workloads, listed in bench_main.c's peers[]. */
extern const bench_workload bench_vs_ff_split_block;
extern const bench_workload bench_vs_ff_bloom10;
extern const bench_workload bench_vs_ff_counting;
extern const bench_workload bench_vs_ff_counting_delete;
extern const bench_workload bench_vs_ff_cuckoo12;
extern const bench_workload bench_vs_efficient_cuckoo12;
extern const bench_workload bench_vs_ff_gcs;
extern const bench_workload bench_vs_xor_fuse8;
extern const bench_workload bench_vs_xor_fuse16;
#endif

#endif /* AMQ_BENCH_PEERS_H */
