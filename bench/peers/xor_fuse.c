/*
 * xor_fuse.c - the adapter for FastFilter/xor_singleheader's binary fuse
 * filters (bench_peers.h): binary_fuse8_t and binary_fuse16_t, 3-wise,
 * built by binary_fuse{8,16}_allocate and _populate from all the keys (which
 * it mixes with its own seed: murmur64(key + seed)), queried by _contain.
 * Its header is included as a system header; each query is a call to a
 * function kept out of line, as for the other peers.
 */
#include "bench_peers.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "binaryfusefilter.h"

#define PEER_NOINLINE __attribute__((noinline))

/* The keys are distinct, so _populate never reaches the step that sorts
 * them in place (it does so only to remove duplicates): the cast keeps the
 * bench's keys as they are. */
#define DEFINE_FUSE(W)                                                                             \
    static void *fuse##W##_build(const uint64_t *keys, size_t n)                                   \
    {                                                                                              \
        if (n > UINT32_MAX)                                                                        \
            return NULL;                                                                           \
        binary_fuse##W##_t *f = malloc(sizeof *f);                                                 \
        if (!f)                                                                                    \
            return NULL;                                                                           \
        if (!binary_fuse##W##_allocate((uint32_t)n, f)) {                                          \
            free(f);                                                                               \
            return NULL;                                                                           \
        }                                                                                          \
        if (!binary_fuse##W##_populate((uint64_t *)(uintptr_t)keys, (uint32_t)n, f)) {             \
            binary_fuse##W##_free(f);                                                              \
            free(f);                                                                               \
            return NULL;                                                                           \
        }                                                                                          \
        return f;                                                                                  \
    }                                                                                              \
    static PEER_NOINLINE bool fuse##W##_contains_one(const binary_fuse##W##_t *f, uint64_t key)    \
    {                                                                                              \
        return binary_fuse##W##_contain(key, f);                                                   \
    }                                                                                              \
    static uint64_t fuse##W##_count(const void *filter, const uint64_t *keys, size_t n)            \
    {                                                                                              \
        uint64_t hits = 0;                                                                         \
        for (size_t i = 0; i < n; i++)                                                             \
            hits += fuse##W##_contains_one(filter, keys[i]);                                       \
        return hits;                                                                               \
    }                                                                                              \
    static size_t fuse##W##_bytes(const void *filter)                                              \
    {                                                                                              \
        return binary_fuse##W##_size_in_bytes(filter);                                             \
    }                                                                                              \
    static void fuse##W##_destroy(void *filter)                                                    \
    {                                                                                              \
        binary_fuse##W##_free(filter);                                                             \
        free(filter);                                                                              \
    }                                                                                              \
    const bench_peer_ops bench_peer_xor_fuse##W = {                                                \
        .name = "xor_singleheader binary_fuse" #W,                                                 \
        .build = fuse##W##_build,                                                                  \
        .count = fuse##W##_count,                                                                  \
        .bytes = fuse##W##_bytes,                                                                  \
        .destroy = fuse##W##_destroy,                                                              \
    };

DEFINE_FUSE(8)
DEFINE_FUSE(16)
