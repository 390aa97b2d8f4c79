/*
 * fuse.c - binary fuse filters (T. M. Graf, D. Lemire, "Binary Fuse
 * Filters: Fast and Smaller Than Xor Filters", ACM Journal of Experimental
 * Algorithmics 27, 2022; arXiv 2201.01174): queries and what a filter
 * reports. Construction is in fuse_build.c; saving, loading and the
 * generic handle's view (fuse8, fuse16) in fuse_family.c.
 *
 * The idea. Give every key of the set a few slots - three, or four - in an
 * array of f-bit values, and fill the array so that for every key of the
 * set the xor of the values in its slots equals the key's f-bit fingerprint.
 * A query computes the key's slots and fingerprint and compares. A key of
 * the set always passes. For any other key the xor of its slots is an f-bit
 * value unrelated to its fingerprint, equal to it with chance 2^-f: the
 * filter's false-positive rate, whatever the number of keys.
 *
 * Why such an array exists, and how to fill it. Think of the slots as the
 * vertices and the keys as edges joining arity vertices (a hypergraph). If
 * some slot belongs to exactly one key, that key can be dealt with last:
 * whatever the other slots end up holding, giving that slot the value
 * fingerprint xor (the others) makes the key pass, and no other key looks at
 * the slot. So take such a key away, remember it with its slot, and repeat
 * on what is left ("peeling"). If every key goes, assigning the slots in the
 * reverse of the order they were taken away satisfies every key. Finding a
 * slot with one key needs no list of keys per slot: keep per slot the number
 * of keys and the xor of their hashes; when the number is 1, the xor is that
 * one key's hash.
 *
 * Peeling succeeds with high probability only if there are enough slots.
 * With each key's slots spread uniformly over the array (xor filters) that
 * takes 1.23 slots per key. Binary fuse filters cut the array into segments
 * of L slots and give each key consecutive segments: its first slot falls
 * anywhere in the first segment_count segments, its second slot in the
 * segment after that, and so on. Keys near the start and end of the array
 * share fewer segments and peel easily, and the peeling then travels inward
 * from both ends like a burning fuse; it succeeds with 1.125 slots per key
 * (3-wise) or 1.075 (4-wise) once the set has a million keys. "Binary": L is
 * a power of two, so a slot's place within its segment can be scrambled by
 * xoring bits of the hash into it without leaving the segment.
 *
 *     slot 0          L          2L         3L        (c-1)L       cL      (c+2)L
 *          +----------+----------+----------+-- ... --+----------+-- ... --+
 *          | segment 0| segment 1| segment 2|         | seg. c-1 | c, c+1  |
 *          +----------+----------+----------+-- ... --+----------+-- ... --+
 *          |<------ a key's first slot: segment_count = c segments ->|
 *          a key whose first slot lies in segment s has its second in
 *          s + 1 and its third in s + 2 (its fourth in s + 3)
 *
 * A key's place. A key's 64-bit hash (amq_hash64 under the filter's hasher)
 * is mixed with the filter's seed, m = splitmix64-finalizer(hash + seed),
 * and then (fuse_internal.h)
 *
 *     first       = floor(m x segment_count x L / 2^64)
 *     slot 1      = (first + L)  xor (bits 18..35 of m  and  L - 1)
 *     slot 2      = (first + 2L) xor (bits  0..17 of m  and  L - 1)
 *     slot 3      = (first + 3L) xor (top 18 bits of m x 0x9E3779B97F4A7C15,
 *                                     and L - 1)                    arity 4
 *     fingerprint = the low f bits of m xor (m >> 32)
 *
 * The offsets come from bits the first slot barely depends on (it is set by
 * the top bits of m); the fourth slot's from a product, because 64 bits do
 * not hold the first slot's bits and three disjoint 18-bit offsets. The seed
 * exists so that a construction that fails can be retried with other slots
 * for the same hashes.
 *
 * Sizes: see fuse_build.c for the segment length and the slots per key as
 * functions of n. At 10^7 keys, 3-wise: L = 2^15, 11,272,192 slots, 9.02
 * bits per key for f = 8 (18.04 for f = 16); 4-wise: 8.61 (17.22).
 *
 * Layout. The fingerprints are one array of array_length slots, one byte
 * each (f = 8) or a little-endian 16-bit word each (f = 16), in memory and
 * on disk alike, so a file opened with AMQ_LOAD_MMAP is queried where it
 * lies (the payload starts 64-byte aligned in the file). The filter borrows
 * the array of a loaded file image in both load modes and copies nothing.
 *
 * Invariants (amq__fuse_check in fuse_shape.c; a loaded file must satisfy them, and they
 * are what makes a damaged file harmless):
 *
 *   I1  fingerprint_bits is 8 or 16; arity is 3 or 4.
 *   I2  L is a power of two in [4, 2^18]; segment_mask = L - 1.
 *   I3  segment_count >= 1, segment_count_length = segment_count x L,
 *       array_length = (segment_count + arity - 1) x L, and the array's
 *       bytes fit a size_t. Then every slot a query computes is below
 *       array_length, whatever the hash: first < segment_count x L, so slot
 *       k lies in segment floor(first / L) + k <= segment_count + arity - 2,
 *       and xoring with a value below L keeps it in that segment. No query
 *       reads outside the array, whatever the file's fingerprints say; a
 *       damaged array can only give wrong answers.
 *   I4  count <= array_length: each key was alone in its own slot.
 *   I5  1 <= attempts <= AMQ_FUSE_MAX_ATTEMPTS; 2^-f <= target_fpr < 1.
 *
 * What is hot. A query is one hash (none for the _hash forms), the mix,
 * one multiply-high, arity loads, xors and one comparison, with no branch
 * on the data; the width and arity are branched on once per query (the
 * same way every time, so predicted) and the code for each is inlined
 * with constants. The batch calls copy the filter's fields into locals
 * once; over an array the cache holds (CACHED_ARRAY_BYTES) they query key
 * after key, which the processor overlaps by itself, and over a larger one
 * they compute each key's slots PIPELINE_DEPTH keys before testing it and
 * prefetch them then, so that the cache misses of that many keys overlap.
 * A built filter's array is in 2 MiB pages where the system gives them
 * (fuse_build.c). Nothing in a query allocates.
 *
 * Failures: construction as in fuse_build.c (AMQ_EINVAL, AMQ_ERANGE,
 * AMQ_EFULL, AMQ_ENOMEM); loading answers AMQ_ECORRUPT naming the field.
 */
#include "amq/fuse.h"
#include "core/alloc.h"
#include "core/hash.h"
#include "core/util.h"
#include "fuse/fuse_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How many keys contains_many computes ahead of the one it tests (a power
 * of two). */
#define PIPELINE_DEPTH 16
/* The largest fingerprint array the batch query takes to be in the cache
 * (the project's test machine has 2 MiB of L2 cache per core): one that is
 * is queried without prefetching. */
#define CACHED_ARRAY_BYTES ((uint64_t)2 << 20)

void amq_fuse_free(amq_fuse *filter)
{
    if (!filter)
        return;
    amq__aligned_free(filter->owned);
    amq__free(filter);
}

/* ---- queries --------------------------------------------------------------- */

/* What a query reads of a filter, copied out of it into locals: the batch
 * loops store results through a byte pointer, which may alias anything, so
 * fields read through the filter's pointer would be reloaded after every
 * store; copies whose address never escapes cannot be. */
typedef struct query_view {
    amq__fuse_shape shape;
    const uint8_t *fingerprints;
    uint64_t seed;
} query_view;

static AMQ__ALWAYS_INLINE query_view view_of(const amq_fuse *f)
{
    query_view v = { .shape = f->shape, .fingerprints = f->fingerprints, .seed = f->seed };
    return v;
}

/* A key's place in the filter: its slots and its fingerprint. */
typedef struct key_place {
    uint64_t slots[4];
    uint32_t fingerprint;
} key_place;

/* The test proper: the key's fingerprint xor its slots is 0. */
static AMQ__ALWAYS_INLINE bool place_matches(const uint8_t *fingerprints, const key_place *key,
                                             uint32_t fingerprint_bits, uint32_t arity)
{
    uint32_t x = key->fingerprint;
    for (uint32_t k = 0; k < arity; k++)
        x ^= amq__fuse_get(fingerprints, key->slots[k], fingerprint_bits);
    return x == 0;
}

/* The place of the key whose hash is hash. */
static AMQ__ALWAYS_INLINE void place_of(const query_view *v, uint64_t hash,
                                        uint32_t fingerprint_bits, uint32_t arity, key_place *out)
{
    uint64_t m = amq__fuse_mix(hash, v->seed);
    amq__fuse_slots(&v->shape, m, arity, out->slots);
    out->fingerprint = amq__fuse_fingerprint(m, fingerprint_bits);
}

static AMQ__ALWAYS_INLINE bool query(const query_view *v, uint64_t hash, uint32_t fingerprint_bits,
                                     uint32_t arity)
{
    key_place key;
    place_of(v, hash, fingerprint_bits, arity, &key);
    return place_matches(v->fingerprints, &key, fingerprint_bits, arity);
}

bool amq_fuse_contains_hash(const amq_fuse *filter, uint64_t hash)
{
    /* An empty filter's slots are all zero, which is the fingerprint of one
     * key in 2^f: it must answer "no" without asking them. */
    if (filter->count == 0)
        return false;
    query_view v = view_of(filter);
    if (filter->fingerprint_bits == 8)
        return v.shape.arity == 3 ? query(&v, hash, 8, 3) : query(&v, hash, 8, 4);
    return v.shape.arity == 3 ? query(&v, hash, 16, 3) : query(&v, hash, 16, 4);
}

int amq_fuse_view_get(amq_fuse_view *out, const amq_fuse *filter, uint32_t layout, amq_diag *diag)
{
    if (!out || !filter)
        return amq__fail(diag, AMQ_EINVAL, "amq_fuse_view_get: %s is NULL",
                         !out ? "out" : "filter");
    memset(out, 0, sizeof *out);
    if (layout != AMQ_INLINE_LAYOUT)
        return amq__fail(diag, AMQ_EVERSION,
                         "a fuse view of layout %u was asked for; this library computes layout %d",
                         layout, AMQ_INLINE_LAYOUT);
    *out = (amq_fuse_view){ .fingerprints = filter->fingerprints,
                            .seed = filter->seed,
                            .segment_length = filter->shape.segment_length,
                            .segment_mask = filter->shape.segment_mask,
                            .segment_count_length = filter->shape.segment_count_length,
                            .fingerprint_bits = filter->fingerprint_bits,
                            .arity = filter->shape.arity,
                            .empty = filter->count == 0,
                            .layout = AMQ_INLINE_LAYOUT };
    return AMQ_OK;
}

bool amq_fuse_contains(const amq_fuse *filter, const void *key, size_t len)
{
    return amq_fuse_contains_hash(filter, amq__hash64(&filter->hasher, key, len));
}

/* Key i's hash in a batch: hashes[i], or keys[i] (lens[i] bytes) hashed
 * when by_hash is false. */
static AMQ__ALWAYS_INLINE uint64_t batch_hash(const amq_hasher *hasher, const void *const *keys,
                                              const size_t *lens, const uint64_t *hashes, size_t i,
                                              bool by_hash)
{
    return by_hash ? hashes[i] : amq__hash64(hasher, keys[i], lens[i]);
}

/* The first half of a batch query: key i's place into *out, and its slots
 * prefetched. hashes, or keys and lens: as in batch_hash. */
static AMQ__ALWAYS_INLINE void stage(const query_view *v, const amq_hasher *hasher,
                                     const void *const *keys, const size_t *lens,
                                     const uint64_t *hashes, size_t i, bool by_hash, key_place *out,
                                     uint32_t fingerprint_bits, uint32_t arity)
{
    key_place key;
    place_of(v, batch_hash(hasher, keys, lens, hashes, i, by_hash), fingerprint_bits, arity, &key);
    for (uint32_t k = 0; k < arity; k++)
        __builtin_prefetch(v->fingerprints + key.slots[k] * (fingerprint_bits / 8));
    *out = key;
}

/* The batch query for an array the cache holds: the keys one after the
 * other. Their loads are independent, so the processor already overlaps
 * those of many keys, and they hit the cache: prefetching would only add
 * work. hashes, or keys and lens: as in batch_hash. */
static AMQ__ALWAYS_INLINE void direct(const amq_fuse *f, const void *const *keys,
                                      const size_t *lens, const uint64_t *hashes, size_t count,
                                      uint8_t *results, bool by_hash, uint32_t fingerprint_bits,
                                      uint32_t arity)
{
    const query_view v = view_of(f);
    const amq_hasher hasher = f->hasher;
    for (size_t i = 0; i < count; i++)
        results[i] =
            query(&v, batch_hash(&hasher, keys, lens, hashes, i, by_hash), fingerprint_bits, arity);
}

/* The batch query for a larger array: a pipeline PIPELINE_DEPTH keys deep.
 * Key i is staged (hashed, its slots computed and prefetched) into ring
 * entry i mod PIPELINE_DEPTH, and tested PIPELINE_DEPTH keys later, when
 * its slots are in the cache: the cache misses of that many keys overlap,
 * and no key's slots are computed twice. */
static AMQ__ALWAYS_INLINE void pipeline(const amq_fuse *f, const void *const *keys,
                                        const size_t *lens, const uint64_t *hashes, size_t count,
                                        uint8_t *results, bool by_hash, uint32_t fingerprint_bits,
                                        uint32_t arity)
{
    const query_view v = view_of(f);
    const amq_hasher hasher = f->hasher;
    key_place ring[PIPELINE_DEPTH];
    size_t ahead = count < PIPELINE_DEPTH ? count : PIPELINE_DEPTH, i = 0;
    for (size_t j = 0; j < ahead; j++)
        stage(&v, &hasher, keys, lens, hashes, j, by_hash, &ring[j], fingerprint_bits, arity);
    for (; i + PIPELINE_DEPTH < count; i++) {
        key_place *key = &ring[i % PIPELINE_DEPTH];
        results[i] = place_matches(v.fingerprints, key, fingerprint_bits, arity);
        stage(&v, &hasher, keys, lens, hashes, i + PIPELINE_DEPTH, by_hash, key, fingerprint_bits,
              arity);
    }
    for (; i < count; i++) {
        const key_place *key = &ring[i % PIPELINE_DEPTH];
        results[i] = place_matches(v.fingerprints, key, fingerprint_bits, arity);
    }
}

static AMQ__ALWAYS_INLINE void batch(const amq_fuse *f, const void *const *keys, const size_t *lens,
                                     const uint64_t *hashes, size_t count, uint8_t *results,
                                     bool by_hash, uint32_t fingerprint_bits, uint32_t arity)
{
    if (amq_fuse_memory_bytes(f) <= CACHED_ARRAY_BYTES)
        direct(f, keys, lens, hashes, count, results, by_hash, fingerprint_bits, arity);
    else
        pipeline(f, keys, lens, hashes, count, results, by_hash, fingerprint_bits, arity);
}

static AMQ__ALWAYS_INLINE void contains_many(const amq_fuse *f, const void *const *keys,
                                             const size_t *lens, const uint64_t *hashes,
                                             size_t count, uint8_t *results, bool by_hash)
{
    if (f->count == 0)
        memset(results, 0, count);
    else if (f->fingerprint_bits == 8 && f->shape.arity == 3)
        batch(f, keys, lens, hashes, count, results, by_hash, 8, 3);
    else if (f->fingerprint_bits == 8)
        batch(f, keys, lens, hashes, count, results, by_hash, 8, 4);
    else if (f->shape.arity == 3)
        batch(f, keys, lens, hashes, count, results, by_hash, 16, 3);
    else
        batch(f, keys, lens, hashes, count, results, by_hash, 16, 4);
}

int amq_fuse_contains_many(uint8_t *results, const amq_fuse *filter, const void *const *keys,
                           const size_t *lens, size_t count)
{
    if (count == 0)
        return AMQ_OK;
    if (!results || !filter || !keys || !lens)
        return AMQ_EINVAL;
    contains_many(filter, keys, lens, NULL, count, results, false);
    return AMQ_OK;
}

int amq_fuse_contains_many_hash(uint8_t *results, const amq_fuse *filter, const uint64_t *hashes,
                                size_t count)
{
    if (count == 0)
        return AMQ_OK;
    if (!results || !filter || !hashes)
        return AMQ_EINVAL;
    contains_many(filter, NULL, NULL, hashes, count, results, true);
    return AMQ_OK;
}

/* ---- what a filter is ------------------------------------------------------ */

uint64_t amq_fuse_keys(const amq_fuse *filter)
{
    return filter->count;
}

uint32_t amq_fuse_fingerprint_bits(const amq_fuse *filter)
{
    return filter->fingerprint_bits;
}

uint32_t amq_fuse_arity(const amq_fuse *filter)
{
    return filter->shape.arity;
}

uint64_t amq_fuse_segment_length(const amq_fuse *filter)
{
    return filter->shape.segment_length;
}

uint64_t amq_fuse_segment_count(const amq_fuse *filter)
{
    return filter->shape.segment_count;
}

uint64_t amq_fuse_array_length(const amq_fuse *filter)
{
    return filter->shape.array_length;
}

uint64_t amq_fuse_memory_bytes(const amq_fuse *filter)
{
    return filter->shape.array_length * (filter->fingerprint_bits / 8);
}

double amq_fuse_bits_per_key(const amq_fuse *filter)
{
    double keys = filter->count ? (double)filter->count : 1;
    return (double)amq_fuse_memory_bytes(filter) * 8 / keys;
}

double amq_fuse_expected_fpr(const amq_fuse *filter)
{
    if (filter->count == 0)
        return 0; /* answers "no" to every key */
    return ldexp(1, -(int)filter->fingerprint_bits);
}

uint64_t amq_fuse_seed(const amq_fuse *filter)
{
    return filter->seed;
}

uint32_t amq_fuse_attempts(const amq_fuse *filter)
{
    return filter->attempts;
}

const amq_hasher *amq_fuse_hasher(const amq_fuse *filter)
{
    return &filter->hasher;
}
