/*
 * fuse_internal.h - what the binary fuse filter's two files share (fuse.c:
 * queries, accessors, saving and loading; fuse_build.c: construction) and
 * what the tests reach beyond the public API: the filter's layout, the map
 * from a key's hash to its slots, and construction with a cap on attempts
 * and a chosen array size, so a test can make construction fail on purpose.
 *
 * The algorithm and the names used here are explained at the top of fuse.c.
 */
#ifndef AMQ_FUSE_INTERNAL_H
#define AMQ_FUSE_INTERNAL_H

#include "amq/fuse.h"
#include "core/reduce.h"
#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

/* The shortest segment, in slots (tiny sets would get 1 or 2). */
#define AMQ__FUSE_MIN_SEGMENT_LENGTH 4

/* The array: arity - 1 + segment_count segments of segment_length slots. A
 * key's first slot is in [0, segment_count_length), its k-th in the k-th
 * segment after the first one's. */
typedef struct amq__fuse_shape {
    uint32_t arity;                /* 3 or 4 */
    uint64_t segment_length;       /* L, a power of two */
    uint64_t segment_mask;         /* L - 1 */
    uint64_t segment_count;        /* >= 1 */
    uint64_t segment_count_length; /* segment_count * L */
    uint64_t array_length;         /* (segment_count + arity - 1) * L */
} amq__fuse_shape;

struct amq_fuse {
    amq__fuse_shape shape;
    /* array_length fingerprints of f bits: byte i (f = 8) or the
     * little-endian u16 at byte 2i (f = 16) is slot i. Points into owned, or
     * into a loaded file's image. */
    const uint8_t *fingerprints;
    uint8_t *owned; /* NULL when the fingerprints are borrowed */
    uint32_t fingerprint_bits;
    uint32_t attempts; /* the attempt that succeeded, 1-based */
    uint64_t seed;     /* mixed into every key hash (amq__fuse_mix) */
    uint64_t count;    /* distinct keys */
    double target_fpr; /* the rate asked for: 2^-f unless a spec gave a larger p */
    amq_hasher hasher;
};

/* Fill in a shape from its arity, segment length and segment count. false
 * when the array length overflows 64 bits or the bytes of its fingerprints
 * (f bits each) a size_t. */
bool amq__fuse_shape_make(amq__fuse_shape *out, uint32_t arity, uint64_t segment_length,
                          uint64_t segment_count, uint32_t fingerprint_bits);

/* The shape for count distinct keys (fuse_build.c). size_factor 0: the
 * paper's slots per key for count and arity; otherwise that many. false when
 * it is too large to address. */
bool amq__fuse_shape_for(amq__fuse_shape *out, uint64_t count, uint32_t arity,
                         uint32_t fingerprint_bits, double size_factor);

/* A key's hash mixed with the filter's seed: amq__mix64(hash + seed), a
 * bijection of the hash for a given seed. Everything about a key's place in
 * the filter is taken from this value. */
static inline uint64_t amq__fuse_mix(uint64_t hash, uint64_t seed)
{
    return amq__mix64(hash + seed);
}

/* Odd multiplier whose product with a mixed hash gives the fourth slot's
 * offset from bits the other slots do not use. */
#define AMQ__FUSE_FOURTH_SPREAD 0x9E3779B97F4A7C15ULL

/* A key's arity slots, from its mixed hash m: the first by multiply-high
 * into [0, segment_count_length); each next one a segment further, at an
 * offset within its segment flipped by bits 18..35 (second slot), 0..17
 * (third) and, for arity 4, the top 18 bits of m times an odd constant. */
static AMQ__ALWAYS_INLINE void amq__fuse_slots(const amq__fuse_shape *s, uint64_t m, uint32_t arity,
                                               uint64_t slots[4])
{
    uint64_t first = amq__reduce(m, s->segment_count_length);
    slots[0] = first;
    slots[1] = (first + s->segment_length) ^ ((m >> 18) & s->segment_mask);
    slots[2] = (first + 2 * s->segment_length) ^ (m & s->segment_mask);
    if (arity == 4)
        slots[3] = (first + 3 * s->segment_length) ^
                   (((m * AMQ__FUSE_FOURTH_SPREAD) >> 46) & s->segment_mask);
}

/* A key's fingerprint: the low f bits of m xor m >> 32. */
static inline uint32_t amq__fuse_fingerprint(uint64_t m, uint32_t fingerprint_bits)
{
    uint64_t folded = m ^ (m >> 32);
    return fingerprint_bits == 8 ? (uint8_t)folded : (uint16_t)folded;
}

/* Slot i of a fingerprint array. */
static AMQ__ALWAYS_INLINE uint32_t amq__fuse_get(const uint8_t *fingerprints, uint64_t i,
                                                 uint32_t fingerprint_bits)
{
    if (fingerprint_bits == 8)
        return fingerprints[i];
    return amq__load_u16le(fingerprints + 2 * i);
}

/* How construction may be bounded differently than by default. */
typedef struct amq__fuse_build_options {
    uint32_t max_attempts; /* 0: AMQ_FUSE_MAX_ATTEMPTS */
    double size_factor;    /* slots per key; 0: the paper's */
} amq__fuse_build_options;

/* amq_fuse_build_hash with options (NULL: the defaults). */
int amq__fuse_build_hashes_with(amq_fuse **out, const amq_fuse_params *params,
                                const uint64_t *hashes, size_t count,
                                const amq__fuse_build_options *options, amq_diag *diag);

/* The filter's invariants (listed at the top of fuse.c): AMQ_OK, or
 * AMQ_ECORRUPT saying which fails. The loader's check of a file's fields,
 * and the tests' of every built filter. */
int amq__fuse_check(const amq_fuse *filter, amq_diag *diag);

#endif /* AMQ_FUSE_INTERNAL_H */
