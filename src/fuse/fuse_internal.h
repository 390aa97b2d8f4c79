/*
 * fuse_internal.h - what the binary fuse filter's files share (fuse.c:
 * queries and accessors; fuse_build.c: construction; fuse_family.c:
 * saving, loading and the generic handle's view) and
 * what the tests reach beyond the public API: the filter's layout, the map
 * from a key's hash to its slots, and construction with a cap on attempts
 * and a chosen array size, so a test can make construction fail on purpose.
 *
 * The algorithm and the names used here are explained at the top of fuse.c.
 */
#ifndef AMQ_FUSE_INTERNAL_H
#define AMQ_FUSE_INTERNAL_H

#include "amq/fuse.h"
#include "amq/inline.h"
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

/* A key's hash mixed with the filter's seed: amq_inline_mix64(hash + seed),
 * a bijection of the hash for a given seed. Everything about a key's place
 * in the filter is taken from this value. The arithmetic of a query is
 * amq/inline.h's, which callers may compile into their own loops; these
 * wrappers give it the library's shapes. */
static inline uint64_t amq__fuse_mix(uint64_t hash, uint64_t seed)
{
    return amq_inline_mix64(hash + seed);
}

/* A key's arity slots, from its mixed hash m (amq_fuse_view_slots). */
static AMQ__ALWAYS_INLINE void amq__fuse_slots(const amq__fuse_shape *s, uint64_t m, uint32_t arity,
                                               uint64_t slots[4])
{
    amq_fuse_view view = { .segment_length = s->segment_length,
                           .segment_mask = s->segment_mask,
                           .segment_count_length = s->segment_count_length,
                           .arity = arity };
    amq_fuse_view_slots(slots, &view, m);
}

/* A key's fingerprint: the low f bits of m xor m >> 32. */
static inline uint32_t amq__fuse_fingerprint(uint64_t m, uint32_t fingerprint_bits)
{
    return amq_fuse_view_fingerprint(m, fingerprint_bits);
}

/* Slot i of a fingerprint array. */
static AMQ__ALWAYS_INLINE uint32_t amq__fuse_get(const uint8_t *fingerprints, uint64_t i,
                                                 uint32_t fingerprint_bits)
{
    amq_fuse_view view = { .fingerprints = fingerprints, .fingerprint_bits = fingerprint_bits };
    return amq_fuse_view_slot(&view, i);
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
