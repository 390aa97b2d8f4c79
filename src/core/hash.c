/*
 * hash.c - the one place keys are hashed.
 *
 * Three functions, chosen per filter and stored in its file:
 *
 *   XXH3 (default)  64- or 128-bit XXH3 with a 64-bit seed, from libxxhash
 *                   used header-inline. About 20-30 GB/s on long keys and a
 *                   few nanoseconds on short ones; passes SMHasher.
 *   SipHash-2-4     keyed with 128 bits (Aumasson and Bernstein, 2012). Slower,
 *                   but what BIP158 compact block filters specify. Written
 *                   here: OpenSSL offers it only as a MAC object that
 *                   allocates per call. Checked against the reference vectors
 *                   and OpenSSL's output in tests/test_hash.c.
 *   MD5             through OpenSSL's libcrypto, for the Golomb-coded-set
 *                   article's worked example. Slow; compatibility only.
 *
 * SipHash, for reference: the state is four 64-bit words initialised from
 * the key (k0, k1) and constants; each 8-byte little-endian message word m
 * is absorbed as v3 ^= m, two SipRounds, v0 ^= m. The last word holds the
 * final 0-7 bytes and the message length mod 256 in its top byte. Then
 * v2 ^= 0xff (0xee for 128-bit output), four SipRounds, and the output is
 * v0 ^ v1 ^ v2 ^ v3. The 128-bit variant starts with v1 ^= 0xee and produces
 * a second word by v1 ^= 0xdd and four more rounds.
 */
#include "core/hash.h"
#include "core/util.h"

/* The low-level MD5 calls are deprecated in OpenSSL 3 in favour of EVP, but
 * EVP_Digest allocates a context per call; these do not, and MD5 itself is
 * fixed forever. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/md5.h>

#include <assert.h>
#include <string.h>

_Static_assert(sizeof(XXH3_state_t) <= sizeof(((amq__checksum *)0)->state),
               "amq__checksum too small for XXH3_state_t");

void amq__checksum_init(amq__checksum *c)
{
    XXH3_64bits_reset((XXH3_state_t *)(void *)c->state);
}

void amq__checksum_update(amq__checksum *c, const void *data, size_t len)
{
    XXH3_64bits_update((XXH3_state_t *)(void *)c->state, data, len);
}

uint64_t amq__checksum_final(const amq__checksum *c)
{
    return XXH3_64bits_digest((const XXH3_state_t *)(const void *)c->state);
}

/* ---- hashers -------------------------------------------------------------- */

void amq_hasher_xxh3(amq_hasher *out, uint64_t seed)
{
    memset(out, 0, sizeof *out);
    out->kind = AMQ_HASH_XXH3;
    amq__store_u64le(out->key, seed);
}

void amq_hasher_siphash(amq_hasher *out, const uint8_t key[16])
{
    memset(out, 0, sizeof *out);
    out->kind = AMQ_HASH_SIPHASH;
    memcpy(out->key, key, 16);
}

void amq_hasher_md5(amq_hasher *out)
{
    memset(out, 0, sizeof *out);
    out->kind = AMQ_HASH_MD5;
}

static bool all_zero(const uint8_t *bytes, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (bytes[i])
            return false;
    return true;
}

int amq_hasher_check(const amq_hasher *hasher, amq_diag *diag)
{
    switch (hasher->kind) {
    case AMQ_HASH_XXH3:
        if (!all_zero(hasher->key + 8, 8))
            return amq__fail(
                diag, AMQ_EINVAL,
                "an xxh3 hasher's key bytes 8..15 must be zero (its seed is bytes 0..7)");
        return AMQ_OK;
    case AMQ_HASH_SIPHASH:
        return AMQ_OK;
    case AMQ_HASH_MD5:
        if (!all_zero(hasher->key, 16))
            return amq__fail(diag, AMQ_EINVAL, "an md5 hasher's key bytes must be zero");
        return AMQ_OK;
    default:
        return amq__fail(diag, AMQ_EINVAL, "unknown hash kind %d", (int)hasher->kind);
    }
}

int amq__hasher_resolve(amq_hasher *out, const amq_hasher *given, amq_diag *diag)
{
    static const amq_hasher unset;
    if (memcmp(given, &unset, sizeof unset) == 0)
        amq_hasher_xxh3(out, 0);
    else
        *out = *given;
    if (amq_hasher_check(out, NULL) != AMQ_OK)
        return amq__fail(diag, AMQ_EINVAL, "invalid hasher");
    return AMQ_OK;
}

int amq__hasher_compare(const amq_hasher *a, const amq_hasher *b, amq_diag *diag)
{
    if (memcmp(a, b, sizeof *a) != 0)
        return amq__fail(diag, AMQ_EINCOMPATIBLE,
                         "the filters hash keys differently (seed or hash function)");
    return AMQ_OK;
}

/* ---- SipHash-2-4 ------------------------------------------------------------ */

static inline uint64_t rotl64(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64 - b));
}

typedef struct sip_state {
    uint64_t v0, v1, v2, v3;
} sip_state;

static inline void sip_round(sip_state *s)
{
    s->v0 += s->v1;
    s->v1 = rotl64(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl64(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl64(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl64(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl64(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl64(s->v2, 32);
}

/* Absorb the whole message; `wide` selects the 128-bit variant's constants. */
static void sip_absorb(sip_state *s, const uint8_t key[16], const uint8_t *msg, size_t len,
                       bool wide)
{
    uint64_t k0 = amq__load_u64le(key), k1 = amq__load_u64le(key + 8);
    s->v0 = k0 ^ 0x736f6d6570736575ULL;
    s->v1 = k1 ^ 0x646f72616e646f6dULL;
    s->v2 = k0 ^ 0x6c7967656e657261ULL;
    s->v3 = k1 ^ 0x7465646279746573ULL;
    if (wide)
        s->v1 ^= 0xee;

    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = amq__load_u64le(msg + i);
        s->v3 ^= m;
        sip_round(s);
        sip_round(s);
        s->v0 ^= m;
    }
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    for (size_t i = 0; i < len % 8; i++)
        last |= (uint64_t)msg[whole + i] << (8 * i);
    s->v3 ^= last;
    sip_round(s);
    sip_round(s);
    s->v0 ^= last;
}

static uint64_t sip_finish_word(sip_state *s, uint64_t marker)
{
    s->v2 ^= marker;
    for (int i = 0; i < 4; i++)
        sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t amq_siphash24(const uint8_t key[16], const void *msg, size_t len)
{
    sip_state s;
    sip_absorb(&s, key, msg, len, false);
    return sip_finish_word(&s, 0xff);
}

amq_u128 amq_siphash24_128(const uint8_t key[16], const void *msg, size_t len)
{
    sip_state s;
    sip_absorb(&s, key, msg, len, true);
    amq_u128 out;
    out.low = sip_finish_word(&s, 0xee);
    s.v1 ^= 0xdd;
    for (int i = 0; i < 4; i++)
        sip_round(&s);
    out.high = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
    return out;
}

/* ---- MD5 ------------------------------------------------------------------ */

void amq_md5(uint8_t digest[16], const void *msg, size_t len)
{
    MD5_CTX context;
    MD5_Init(&context);
    MD5_Update(&context, msg, len);
    MD5_Final(digest, &context);
}

static uint64_t load_u64be(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

/* ---- the entry points ------------------------------------------------------ */

uint64_t amq_hash64(const amq_hasher *hasher, const void *key, size_t len)
{
    assert(hasher);
    switch (hasher->kind) {
    case AMQ_HASH_SIPHASH:
        return amq_siphash24(hasher->key, key, len);
    case AMQ_HASH_MD5: {
        uint8_t digest[16];
        amq_md5(digest, key, len);
        return load_u64be(digest + 8);
    }
    case AMQ_HASH_XXH3:
    default:
        return amq__xxh3_64(key, len, amq__load_u64le(hasher->key));
    }
}

amq_u128 amq_hash128(const amq_hasher *hasher, const void *key, size_t len)
{
    assert(hasher);
    amq_u128 out;
    switch (hasher->kind) {
    case AMQ_HASH_SIPHASH:
        return amq_siphash24_128(hasher->key, key, len);
    case AMQ_HASH_MD5: {
        uint8_t digest[16];
        amq_md5(digest, key, len);
        out.high = load_u64be(digest);
        out.low = load_u64be(digest + 8);
        return out;
    }
    case AMQ_HASH_XXH3:
    default:
        return amq__xxh3_128(key, len, amq__load_u64le(hasher->key));
    }
}
