/*
 * gcs_internal.h - the Golomb-coded set's state, shared by its files:
 * gcs.c (parameters, building, unions), gcs_stream.c (checking a stream,
 * the seek index), gcs_query.c (decoding for single queries and batch
 * matching), gcs_bucket.c (the bucketed layout), gcs_family.c (the generic
 * handle's view: specs, saving, loading, exports) and gcs_file.c (BIP158
 * serialization). The algorithm, the layout and
 * the invariants are described at the top of gcs.c.
 */
#ifndef AMQ_GCS_INTERNAL_H
#define AMQ_GCS_INTERNAL_H

#include "amq/gcs.h"
#include "core/bits.h"
#include "core/reduce.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Zero bytes kept after the stream, so that a 64-bit window may be loaded
 * at the byte of any stream bit (bits.h's Golomb cursor). */
#define AMQ__GCS_STREAM_SLACK AMQ__GOLOMB_SLACK
/* Zero bytes kept after the index's packed entries (a packed field is read
 * with an 8-byte load at the byte holding its first bit). */
#define AMQ__GCS_INDEX_SLACK 8

/* Part of the values: a built filter is one segment, a union several. */
typedef struct amq__gcs_segment {
    uint64_t count;    /* N_j, the values coded for it */
    uint64_t universe; /* N_j·M: its values are base + [0, N_j·M) */
    uint64_t base;     /* the sum of the universes of the segments before it */
    uint64_t distinct; /* its distinct values */
} amq__gcs_segment;

/* The seek index: S entries; entry j for the values from j·width. */
typedef struct amq__gcs_index {
    uint64_t entries;       /* S */
    uint64_t width;         /* floor(universe / S); the last entry also covers the rest */
    uint64_t reciprocal;    /* floor((2^64 - 1) / width): j without a division */
    uint64_t position_step; /* floor(stream_bits / S) */
    uint64_t position_base; /* min over j of position_j - j·step, two's complement */
    unsigned position_bits; /* width of the field position_j - j·step - base */
    unsigned lag_bits;      /* width of the field j·width - previous_j */
    const uint8_t *fields;  /* S entries of position_bits + lag_bits bits, then slack */
    uint64_t bytes;         /* ceil(S·(position_bits + lag_bits) / 8) */
} amq__gcs_index;

/* The bucketed layout's buckets and their offset index (gcs.c, "The
 * bucketed layout"): bucket b holds the values v with
 * floor(v·reciprocal / 2^64) = b, as offsets v - b·width below 2·width,
 * and begins at stream bit
 *
 *     start_b = b·step + base + header[b >> block_shift] + delta[b]
 *
 * for b = 0 .. count (start_count is the stream's end). */
typedef struct amq__gcs_buckets {
    uint64_t width;         /* W, about bucket keys · M */
    uint64_t reciprocal;    /* floor((2^64 - 1) / W) */
    unsigned block_shift;   /* log2 of the buckets per header */
    unsigned header_bits;   /* width of a header field */
    unsigned delta_bits;    /* width of a delta field */
    uint64_t count;         /* buckets: that of the last value + 1, 0 when empty */
    uint64_t step;          /* floor(stream_bits / count) */
    uint64_t base;          /* least start_b - b·step, two's complement */
    const uint8_t *headers; /* (count >> block_shift) + 1 fields, then slack */
    const uint8_t *deltas;  /* count + 1 fields, then slack */
    uint64_t header_bytes;
    uint64_t delta_bytes;
} amq__gcs_buckets;

/* Where decoding towards a value may start: the bit where a code begins and
 * the value before that code (0 before the first). */
typedef struct amq__gcs_entry {
    uint64_t position;
    uint64_t previous;
} amq__gcs_entry;

struct amq_gcs {
    amq_hasher hasher;
    uint64_t range;        /* M */
    uint64_t divisor;      /* D */
    amq__golomb_code code; /* D's constants, for decoding */
    uint64_t count;        /* N, over all segments */
    uint64_t universe;     /* the sum of the segments' universes */
    uint64_t distinct;     /* distinct values, over all segments */
    amq__gcs_segment segments[AMQ_GCS_MAX_SEGMENTS];
    size_t segment_count;
    const uint8_t *stream; /* stream_bytes, then AMQ__GCS_STREAM_SLACK zero bytes */
    uint64_t stream_bits;
    uint64_t stream_bytes;
    amq__gcs_index index; /* the continuous layout's seek index */
    bool bucketed;        /* the layout: bucketed, or continuous */
    bool use_bmi2;        /* the CPU has BMI1 and BMI2: the bucketed query's
                             compiled variant for them */
    amq__gcs_buckets buckets;
    uint8_t *owned;   /* the stream and index when not borrowed from a file image */
    bool owned_table; /* owned is an aligned block (the bucketed layout's table,
                         core/alloc.h), else a plain one */
};

/* Free f's owned stream and index, by the kind of block they are. */
void amq__gcs_free_owned(amq_gcs *f);

/* A new empty filter (no segments, no stream) hashing with hasher, with
 * range M and divisor D; NULL when out of memory. */
amq_gcs *amq__gcs_new(const amq_hasher *hasher, uint64_t range, uint64_t divisor);

/* Append a segment of count >= 1 values. AMQ_ERANGE when count·M, or the
 * universe with it, does not fit 64 bits, or AMQ_GCS_MAX_SEGMENTS are
 * there already. */
int amq__gcs_add_segment(amq_gcs *f, uint64_t count, amq_diag *diag);

/* Give f (segments set, no stream yet) its stream: bytes is a plain block
 * (core/alloc.h) of the stream's stream_bits bits, which f takes over (and
 * frees on failure). Checks every code (AMQ_ECORRUPT), counts the distinct values and
 * builds a seek index of index_entries entries (at most N). Also
 * AMQ_ENOMEM. */
int amq__gcs_adopt_stream(amq_gcs *f, uint8_t *bytes, uint64_t stream_bits, uint64_t index_entries,
                          amq_diag *diag);

/* Decode every code of the stream at bytes (followed by
 * AMQ__GCS_STREAM_SLACK readable bytes), reading at most limit_bits bits,
 * for f's segments: each code well formed, each segment's values inside its
 * universe, f->count codes. *end receives the bit after the last code and
 * distinct[j] segment j's distinct values. AMQ_ECORRUPT with a message
 * otherwise. */
int amq__gcs_decode_all(const amq_gcs *f, const uint8_t *bytes, uint64_t limit_bits, uint64_t *end,
                        uint64_t distinct[AMQ_GCS_MAX_SEGMENTS], amq_diag *diag);

/* Check everything the invariants (gcs.c, I1-I6) say about a filter whose
 * fields, stream and index are in place: the codes, the padding and slack,
 * and every index entry against the stream. distinct receives each
 * segment's distinct values. AMQ_ECORRUPT with a message otherwise. */
int amq__gcs_verify(const amq_gcs *f, uint64_t distinct[AMQ_GCS_MAX_SEGMENTS], amq_diag *diag);

/* amq__gcs_verify, and the distinct counts f holds are the stream's: the
 * debug check tests call after building, loading and unions. */
int amq__gcs_check(const amq_gcs *f, amq_diag *diag);

/* The index's entry count, value width and reciprocal for S entries over
 * f's universe (the rest of the shape comes from the entries). */
void amq__gcs_index_frame(amq__gcs_index *index, const amq_gcs *f, uint64_t entries);

/* The bytes a saved filter's payload holds: the stream, its slack, the
 * index and its slack (no index, no index slack). */
uint64_t amq__gcs_payload_bytes(const amq_gcs *f);

/* ---- the bucketed layout (gcs_bucket.c) ---- */

/* Whether the bucketed query has a variant compiled for BMI1 and BMI2. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AMQ__GCS_HAVE_BMI2 1
#else
#define AMQ__GCS_HAVE_BMI2 0
#endif

/* The most remainder bits the bucketed layout takes (a remainder is read
 * with one packed load). */
#define AMQ__GCS_BUCKET_MAX_RICE 56

/* The bucket of value v: floor(v / W) or one less (never more), from a
 * multiply; monotone in v. */
static inline uint64_t amq__gcs_bucket_of(const amq__gcs_buckets *x, uint64_t v)
{
    return amq__reduce(v, x->reciprocal);
}

/* The buckets of a universe: the last value's bucket + 1 (0 when empty). */
static inline uint64_t amq__gcs_bucket_count(const amq__gcs_buckets *x, uint64_t universe)
{
    return universe == 0 ? 0 : amq__gcs_bucket_of(x, universe - 1) + 1;
}

/* The bucket width W for M and keys per bucket: keys·M, at most 2^62. */
uint64_t amq__gcs_bucket_width(uint64_t range, uint64_t keys);

/* Code f's values (count of them, sorted, the segments already set, f's
 * divisor 2^P with P <= AMQ__GCS_BUCKET_MAX_RICE) in the bucketed layout
 * with buckets of width (>= 1) and 2^block_shift buckets per header, and
 * give f the stream and index (f->owned), checked as a loaded one is, with
 * the distinct counts set. AMQ_ENOMEM, AMQ_ERANGE. */
int amq__gcs_encode_buckets(amq_gcs *f, const uint64_t *values, uint64_t width,
                            unsigned block_shift, amq_diag *diag);

/* The bytes of the bucketed index: headers, slack, deltas, slack (0 when
 * there are no buckets). */
uint64_t amq__gcs_bucket_index_bytes(const amq__gcs_buckets *x);

/* Set x's field sizes (reciprocal, count, header and delta bytes) from W,
 * the block shift, the widths and f's universe; false when they overflow. */
bool amq__gcs_bucket_frame(amq__gcs_buckets *x, uint64_t universe);

/* Check a bucketed filter whose fields, stream and index are in place
 * (the bucketed invariants B1-B5 of gcs.c); distinct receives each
 * segment's distinct values. AMQ_ECORRUPT with a message otherwise. */
int amq__gcs_verify_buckets(const amq_gcs *f, uint64_t distinct[AMQ_GCS_MAX_SEGMENTS],
                            amq_diag *diag);

/* Every value of f, in order, into out (f->count of them), either layout. */
void amq__gcs_values(const amq_gcs *f, uint64_t *out);

/* The continuous stream of f's values (for exports of a bucketed filter):
 * a plain block (core/alloc.h) of ceil(*bits / 8) bytes. AMQ_ENOMEM. */
int amq__gcs_continuous_stream(const amq_gcs *f, uint8_t **bytes, uint64_t *bits);

/* A packed field of 0..64 bits at bit offset bit (bits.h's packed fields
 * hold up to 57 bits; wider ones are read as 32 + the rest). */
static inline uint64_t amq__gcs_field_get(const uint8_t *bytes, uint64_t bit, unsigned width)
{
    if (width <= 57)
        return amq__packed_get(bytes, bit, width);
    return amq__packed_get(bytes, bit, 32) | amq__packed_get(bytes, bit + 32, width - 32) << 32;
}

/* Write a packed field of 0..64 bits, as amq__gcs_field_get reads it. */
static inline void amq__gcs_field_put(uint8_t *bytes, uint64_t bit, unsigned width, uint64_t value)
{
    if (width > 57) {
        amq__packed_set(bytes, bit, 32, value & 0xffffffffu);
        bit += 32;
        width -= 32;
        value >>= 32;
    }
    amq__packed_set(bytes, bit, width, value);
}

/* The least stream bit bucket b can begin at, from its block's header
 * alone: b·step + base + header[b >> block_shift]. It begins delta[b] bits
 * later, below 2^delta_bits. */
static inline uint64_t amq__gcs_bucket_floor(const amq__gcs_buckets *x, uint64_t b)
{
    return b * x->step + x->base +
           amq__gcs_field_get(x->headers, (b >> x->block_shift) * x->header_bits, x->header_bits);
}

/* Where bucket b (0 .. count) begins in the stream. */
static inline uint64_t amq__gcs_bucket_start(const amq__gcs_buckets *x, uint64_t b)
{
    return amq__gcs_bucket_floor(x, b) +
           amq__gcs_field_get(x->deltas, b * x->delta_bits, x->delta_bits);
}

/* A segment's value for a hash: multiply-high, or for MD5 the low 32 bits
 * modulo the segment's universe; then shifted by the segment's base. */
static inline uint64_t amq__gcs_value(const amq_gcs *f, const amq__gcs_segment *s, uint64_t hash)
{
    if (f->hasher.kind == AMQ_HASH_MD5)
        return s->base + (hash & 0xffffffffu) % s->universe;
    return s->base + amq__reduce(hash, s->universe);
}

/* Index entry j, from the packed fields. */
static inline amq__gcs_entry amq__gcs_entry_at(const amq__gcs_index *index, uint64_t j)
{
    uint64_t bit = j * (index->position_bits + index->lag_bits);
    amq__gcs_entry e;
    e.position = j * index->position_step + index->position_base +
                 amq__gcs_field_get(index->fields, bit, index->position_bits);
    e.previous = j * index->width -
                 amq__gcs_field_get(index->fields, bit + index->position_bits, index->lag_bits);
    return e;
}

/* The index entry to start decoding from for a value v < universe: the
 * last j with j·width <= v (found from a multiply-high estimate, at most 2
 * below). S must be > 0. */
static inline uint64_t amq__gcs_entry_for(const amq__gcs_index *index, uint64_t v)
{
    uint64_t j = amq__reduce(v, index->reciprocal);
    if (j >= index->entries)
        j = index->entries - 1;
    while (j + 1 < index->entries && (j + 1) * index->width <= v)
        j++;
    return j;
}

#endif /* AMQ_GCS_INTERNAL_H */
