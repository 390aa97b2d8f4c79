/*
 * hash.h - the library's one hashing entry point, for internal callers.
 *
 * XXH3 is used header-inline (XXH_INLINE_ALL) so that a family's hot path
 * inlines it; the public amq_hash64/amq_hash128 dispatch on the hasher kind.
 * Internal users that need XXH3 itself, with no hasher, call amq__xxh3_64
 * here rather than including xxhash.h again.
 */
#ifndef AMQ_HASH_H
#define AMQ_HASH_H

#include "amq/amq.h"
#include "core/util.h"

#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Keys of at most 16 bytes (integer IDs, UUIDs, short strings) are the
 * common case, and xxhash's public entry points keep their dispatch on the
 * length out of line, behind a call that saves registers for the long-key
 * paths. For such keys the hot path calls the header's own short-key
 * functions (the ones those entry points call for len <= 16; same values),
 * so that the hash inlines into the query, which saves a call on every
 * short key (CHANGELOG.md's performance history has the figures). They are
 * internal to xxhash, named so throughout 0.8.x; another version takes the
 * public entry point for every length. */
#if XXH_VERSION_NUMBER >= 800 && XXH_VERSION_NUMBER < 900
#define AMQ__XXH3_SHORT_KEYS 1
#else
#define AMQ__XXH3_SHORT_KEYS 0
#endif
#define AMQ__XXH3_SHORT_KEY_BYTES 16

/* XXH3-64 and XXH3-128 of key with seed, by the short-key path when it
 * applies: the one place the library calls XXH3 on a key, for the hot
 * paths below and for the public amq_hash64 / amq_hash128 alike. */
static inline uint64_t amq__xxh3_64(const void *key, size_t len, uint64_t seed)
{
#if AMQ__XXH3_SHORT_KEYS
    if (len <= AMQ__XXH3_SHORT_KEY_BYTES)
        return XXH3_len_0to16_64b((const xxh_u8 *)key, len, XXH3_kSecret, seed);
#endif
    return XXH3_64bits_withSeed(key, len, seed);
}

static inline amq_u128 amq__xxh3_128(const void *key, size_t len, uint64_t seed)
{
    XXH128_hash_t h;
#if AMQ__XXH3_SHORT_KEYS
    if (len <= AMQ__XXH3_SHORT_KEY_BYTES)
        h = XXH3_len_0to16_128b((const xxh_u8 *)key, len, XXH3_kSecret, seed);
    else
#endif
        h = XXH3_128bits_withSeed(key, len, seed);
    amq_u128 out = { h.low64, h.high64 };
    return out;
}

/* amq_hash128 for a family's hot path: XXH3, the default, inlined; the
 * other kinds through the library's entry point. Same results. */
static inline amq_u128 amq__hash128(const amq_hasher *hasher, const void *key, size_t len)
{
    if (hasher->kind == AMQ_HASH_XXH3)
        return amq__xxh3_128(key, len, amq__load_u64le(hasher->key));
    return amq_hash128(hasher, key, len);
}

/* amq_hash64 for a family's hot path, as amq__hash128 is for amq_hash128. */
static inline uint64_t amq__hash64(const amq_hasher *hasher, const void *key, size_t len)
{
    if (hasher->kind == AMQ_HASH_XXH3)
        return amq__xxh3_64(key, len, amq__load_u64le(hasher->key));
    return amq_hash64(hasher, key, len);
}

/* The hasher a filter keeps for the one its parameters give: an all-zero
 * hasher means XXH3 with seed 0. AMQ_EINVAL ("invalid hasher") if it is not
 * a valid hasher; *out is then unspecified. */
int amq__hasher_resolve(amq_hasher *out, const amq_hasher *given, amq_diag *diag);

/* AMQ_OK if two filters hash keys alike (kind and seed or key), else
 * AMQ_EINCOMPATIBLE saying so: the check every union makes. */
int amq__hasher_compare(const amq_hasher *a, const amq_hasher *b, amq_diag *diag);

/* Streaming XXH3-64 with seed 0, for checksums over data written in pieces.
 * The state is opaque storage large enough for XXH3_state_t (aligned). */
typedef struct amq__checksum {
    _Alignas(64) unsigned char state[640];
} amq__checksum;

void amq__checksum_init(amq__checksum *c);
void amq__checksum_update(amq__checksum *c, const void *data, size_t len);
uint64_t amq__checksum_final(const amq__checksum *c);

#endif /* AMQ_HASH_H */
