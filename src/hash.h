/*
 * hash.h - the library's one hashing entry point, for internal callers.
 *
 * XXH3 is used header-inline (XXH_INLINE_ALL) so that a family's hot path
 * inlines it; the public amq_hash64/amq_hash128 dispatch on the hasher kind.
 * Internal users that need XXH3 itself (the file checksum) call
 * amq__xxh3_64 here rather than including xxhash.h again.
 */
#ifndef AMQ_HASH_H
#define AMQ_HASH_H

#include "amq/amq.h"

#include <stdint.h>

/* XXH3-64 of a buffer with a seed. */
uint64_t amq__xxh3_64(const void *data, size_t len, uint64_t seed);

/* Streaming XXH3-64 with seed 0, for checksums over data written in pieces.
 * The state is opaque storage large enough for XXH3_state_t (aligned). */
typedef struct amq__checksum {
    _Alignas(64) unsigned char state[640];
} amq__checksum;

void amq__checksum_init(amq__checksum *c);
void amq__checksum_update(amq__checksum *c, const void *data, size_t len);
uint64_t amq__checksum_final(const amq__checksum *c);

#endif /* AMQ_HASH_H */
