/*
 * cuckoo_internal.h - what the cuckoo filter's four files share, and what
 * the tests reach inside it. The filter, its layout and its invariants are
 * explained at the top of cuckoo.c; the files are
 *
 *   cuckoo.c           sizing, the tables, insert (the kick walk), remove,
 *                      count, and the public single-key calls;
 *   cuckoo_overflow.c  the exact counts of the copies a pair stores past b;
 *   cuckoo_semisort.c  the semi-sorted bucket coding: the prefix table,
 *                      decoding a bucket into plain lanes and encoding it back;
 *   cuckoo_batch.c     the batch queries, contains_many and contains_many_hash;
 *   cuckoo_family.c    the generic handle's view: spec options, save, load, info.
 *
 * They depend one way: cuckoo_family.c and cuckoo_batch.c on cuckoo.c,
 * cuckoo.c on cuckoo_semisort.c and cuckoo_overflow.c, and all of them on
 * this header, which holds what a query runs - the hashing of a key to its buckets and the one
 * membership test of each bucket shape - inline, so that every caller
 * compiles it into its own loop.
 */
#ifndef AMQ_CUCKOO_INTERNAL_H
#define AMQ_CUCKOO_INTERNAL_H

#include "amq/cuckoo.h"
#include "amq/inline.h"
#include "core/bits.h"
#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

/* An odd multiplier for the low bucket bits of a grown table (the first
 * table's alternate, amq_cuckoo_view_alternate, has another). */
#define AMQ__CUCKOO_FINGERPRINT_FLIP 0xD6E8FEB86659FD93ULL

/* The most slots a bucket has. */
#define AMQ__CUCKOO_MAX_BUCKET_SIZE 8

/* Semi-sorted buckets: 4 slots, 4-bit prefixes, and the number and width
 * of the codes of their sorted sequences. */
#define AMQ__CUCKOO_SEMI_SORT_SLOTS       4
#define AMQ__CUCKOO_SEMI_SORT_PREFIX_BITS 4
#define AMQ__CUCKOO_SEMI_SORT_CODES       3876
#define AMQ__CUCKOO_SEMI_SORT_CODE_BITS   12
#define AMQ__CUCKOO_SEMI_SORT_CODE_MASK   0xfff

/* A semi-sorted bucket is examined in 16-bit lanes, lane i holding slot
 * i's fingerprint as prefix << 12 | suffix (suffixes have at most 12 bits). */
#define AMQ__CUCKOO_WIDE_LANE_BITS  16
#define AMQ__CUCKOO_WIDE_LANE_ONES  0x0001000100010001ULL
#define AMQ__CUCKOO_WIDE_LANE_HIGHS 0x8000800080008000ULL

/* A table's overflow (cuckoo_overflow.c): exact counts of the copies of a
 * fingerprint beyond the b / 2 that its pair of buckets stores, by the
 * pair's lower bucket and the fingerprint. An ordered open-addressing map:
 * a power-of-two number of home slots, at most 3/4 of them used, and the
 * used entries in increasing order of their rank from the first slot to
 * the last, which is the order they are saved in. */
typedef struct amq__cuckoo_overflow_entry {
    uint64_t copies;      /* 0: the entry is free */
    uint32_t bucket;      /* the lower bucket of the pair (buckets are below 2^32) */
    uint32_t fingerprint; /* 1 .. 2^f - 1 */
} amq__cuckoo_overflow_entry;

typedef struct amq__cuckoo_overflow {
    amq__cuckoo_overflow_entry *entries; /* NULL until the first copy */
    uint64_t capacity;                   /* home slots: 0 or a power of two */
    uint64_t length;                     /* entries allocated: the home slots, and past
                                            them the end of the last run */
    unsigned shift;                      /* a rank's home slot is rank >> shift */
    uint64_t used;                       /* entries with copies */
    uint64_t copies;                     /* the sum of their copies */
} amq__cuckoo_overflow;

/* The order of the overflow's entries, in memory and in a file: the
 * splitmix64 finalizer of bucket * 2^32 + fingerprint, a bijection, so no
 * two entries share a rank. */
static inline uint64_t amq__cuckoo_overflow_rank(uint32_t bucket, uint32_t fingerprint)
{
    return amq__mix64((uint64_t)bucket << 32 | fingerprint);
}

typedef struct amq__cuckoo_table {
    uint8_t *slots;             /* buckets * b fields of f bits, + padding */
    uint64_t buckets;           /* base_buckets << shift */
    unsigned shift;             /* log2 of the growth since the first table */
    uint64_t stored;            /* fingerprints in the slots and the stash */
    uint64_t stash_bucket;      /* the bucket the stashed fingerprint was evicted towards */
    uint32_t stash_fingerprint; /* 0: the stash is empty */
    amq__cuckoo_overflow overflow;
} amq__cuckoo_table;

struct amq_cuckoo {
    /* One table of amq_cuckoo_view's shape (shape_12x4, table_count 1)
     * whose stash is empty: amq_cuckoo_contains_hash then asks the view's
     * buckets alone. Kept by amq__cuckoo_note_change; the first field, in
     * the cache line of the first table's, so that the query tests one
     * byte before it reads the table. */
    bool view_query;
    amq__cuckoo_table tables[AMQ_CUCKOO_MAX_TABLES];
    size_t table_count;
    uint32_t fingerprint_bits; /* f */
    uint32_t bucket_size;      /* b */
    uint32_t max_kicks;
    uint32_t growth;
    uint64_t base_buckets;      /* the first table's */
    uint32_t fingerprint_range; /* 2^f - 1: fingerprints are 1 .. range */
    bool semi_sorted;           /* buckets are coded prefixes + suffixes */
    uint32_t bucket_bits;       /* a bucket's bits in the table: b*f, or 4f - 4 */
    bool whole_bytes;           /* bucket_bits is a multiple of 8 */
    uint32_t bucket_step;       /* bucket_bits / 8 if whole_bytes, else bucket_bits */
    uint32_t suffix_bits;       /* semi-sorted: f - 4 */
    uint32_t suffix_mask;       /* semi-sorted: the low f - 4 bits */
    uint64_t suffix_lanes;      /* semi-sorted: suffix_mask in each 16-bit lane */
    uint64_t suffix_ones;       /* semi-sorted: bit 0 of each of the 4 suffixes as stored */
    uint64_t suffix_highs;      /* semi-sorted: bit f - 5 of each */
    bool use_bmi2;              /* semi-sorted: spread suffixes with pdep */
    bool bucket_in_word;        /* a bucket's lanes fit one 64-bit word: groups is 1 */
    bool shape_12x4;            /* plain buckets of 4 slots of 12 bits: amq_cuckoo_view's */
    uint32_t groups;            /* plain: a bucket's groups of lanes, each read as a word */
    uint32_t group_lanes;       /* the lanes (slots) of a group: b / groups */
    uint32_t group_bits;        /* group_lanes * f */
    uint64_t lane_ones;         /* bit 0 of each lane of a group */
    uint64_t lane_highs;        /* bit f - 1 of each */
    uint32_t slot_reciprocal;   /* ceil(2^16 / f): bit i < 64 is in lane (i * this) >> 16 */
    uint64_t capacity;
    double target_fpr;
    amq_hasher hasher;
    uint64_t random_state; /* the walk's victim choices (splitmix64) */
};

/* ---- the shape and the tables (cuckoo.c) --------------------------------------- */

bool amq__cuckoo_bucket_size_valid(uint32_t bucket_size);
bool amq__cuckoo_semi_sort_valid(uint32_t fingerprint_bits, uint32_t bucket_size);
bool amq__cuckoo_growth_valid(uint32_t growth);

/* The FPR bound of a full table of this shape, 2b / (2^f - 1): the target
 * FPR a filter made from fingerprint bits alone records. Above 1 for
 * 4-bit fingerprints in buckets of 8 (16/15), which loading accepts. */
static inline double amq__cuckoo_full_fpr(uint32_t fingerprint_bits, uint32_t bucket_size)
{
    return 2.0 * bucket_size / (double)(((uint64_t)1 << fingerprint_bits) - 1);
}

/* log2 of a valid growth: how much larger each table's shift is than the
 * one before. */
static inline unsigned amq__cuckoo_growth_shift(uint32_t growth)
{
    return (unsigned)__builtin_ctz(growth);
}

/* Set f, b, the layout and the constants derived from them (for a
 * semi-sorted layout, after amq__cuckoo_semisort_init). */
void amq__cuckoo_set_shape(amq_cuckoo *f, uint32_t fingerprint_bits, uint32_t bucket_size,
                           bool semi_sorted);

/* Allocate the next table, base_buckets << shift buckets, zeroed:
 * AMQ_OK or AMQ_ENOMEM. */
int amq__cuckoo_table_open(amq_cuckoo *f, unsigned shift);

/* Recompute view_query: to be called whenever a table is added or a stash
 * is filled or emptied. */
static inline void amq__cuckoo_note_change(amq_cuckoo *f)
{
    f->view_query = f->shape_12x4 && f->table_count == 1 && f->tables[0].stash_fingerprint == 0;
}

/* How many slots of bucket bucket of table t hold value (0: are empty). */
uint32_t amq__cuckoo_bucket_count(const amq_cuckoo *f, const amq__cuckoo_table *t, uint64_t bucket,
                                  uint32_t value);

/* ---- the overflow (cuckoo_overflow.c) ----------------------------------------- */

/* The most copies of one fingerprint a pair of buckets stores, b / 2; the
 * overflow counts the rest (cuckoo_overflow.c says why b / 2). */
static inline uint32_t amq__cuckoo_pair_copies_max(const amq_cuckoo *f)
{
    return f->bucket_size / 2;
}

/* The copies of fingerprint that the pair i1, i2 (i2 the alternate of i1)
 * of table t stores: in its slots and its stash (cuckoo.c). */
uint64_t amq__cuckoo_pair_stored(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                 uint32_t fingerprint, uint64_t i1, uint64_t i2);

/* The copies counted for fingerprint in the pair whose lower bucket is
 * bucket (0: none). */
uint64_t amq__cuckoo_overflow_copies(const amq__cuckoo_overflow *o, uint32_t bucket,
                                     uint32_t fingerprint);

/* Count copies more copies of fingerprint for the pair whose lower bucket
 * is bucket: AMQ_OK, or AMQ_ENOMEM (nothing changed) when the map cannot
 * grow, or AMQ_ERANGE (nothing changed) when the count would pass 2^64 - 1. */
int amq__cuckoo_overflow_add(amq__cuckoo_overflow *o, uint32_t bucket, uint32_t fingerprint,
                             uint64_t copies);

/* Take one counted copy of fingerprint for the pair; false if none is. */
bool amq__cuckoo_overflow_take(amq__cuckoo_overflow *o, uint32_t bucket, uint32_t fingerprint);

/* Drop every count and the map's memory. */
void amq__cuckoo_overflow_free(amq__cuckoo_overflow *o);

/* The bytes of the map's used entries: its data, as a file holds it. The
 * allocation is up to about four times that, and depends on the map's
 * history, which two filters of the same contents need not share. */
uint64_t amq__cuckoo_overflow_memory_bytes(const amq__cuckoo_overflow *o);

/* The used entries are those of entries[0 .. length) with copies, in
 * increasing rank: the order they are saved in, read where they lie. */

/* ---- the semi-sorted coding (cuckoo_semisort.c) -------------------------------- */

/* The sorted prefix sequences by code, each prefix in the top 4 bits of its
 * 16-bit lane; filled by amq__cuckoo_semisort_init. */
extern uint64_t amq__cuckoo_prefix_sequences[AMQ__CUCKOO_SEMI_SORT_CODES];

/* Fill the prefix table, once for the process (any thread may call it). */
void amq__cuckoo_semisort_init(void);

/* Whether the CPU has BMI2's pdep, and a fast one. */
bool amq__cuckoo_fast_pdep(void);

/* A semi-sorted bucket, given by its prefix code and suffixes (as
 * amq__cuckoo_semisort_read gives them), as a plain bucket's word: its four
 * fingerprints in f-bit lanes, slot 0 in the low bits. */
uint64_t amq__cuckoo_semisort_decode(const amq_cuckoo *f, uint64_t code, uint64_t suffixes);

/* Store four f-bit lanes as a semi-sorted bucket: sorted, then coded. */
void amq__cuckoo_semisort_store(const amq_cuckoo *f, amq__cuckoo_table *t, uint64_t bucket,
                                uint64_t word);

/* The second step of amq__cuckoo_semisort_holds with the suffixes spread
 * by BMI2's pdep, for a CPU that has a fast one (amq__cuckoo_fast_pdep). */
bool amq__cuckoo_semisort_lanes_hold_pdep(const amq_cuckoo *f, uint64_t code1, uint64_t suffixes1,
                                          uint64_t code2, uint64_t suffixes2, uint64_t target);

/* ---- hashing a key to its buckets ---------------------------------------------- */

/* A hash's fingerprint, in 1 .. range (range = 2^f - 1). */
static inline uint32_t amq__cuckoo_fingerprint(const amq_cuckoo *f, uint64_t hash)
{
    return 1 + (uint32_t)(((hash & 0xffffffffu) * f->fingerprint_range) >> 32);
}

/* A hash's first bucket in a table of buckets buckets. */
static inline uint64_t amq__cuckoo_index(uint64_t hash, uint64_t buckets)
{
    return amq_cuckoo_view_index(hash, buckets);
}

/* The other bucket of a fingerprint in bucket of the first table, which
 * has buckets buckets: (t(fp) - bucket) mod buckets. */
static inline uint64_t amq__cuckoo_first_alternate(uint64_t bucket, uint32_t fingerprint,
                                                   uint64_t buckets)
{
    return amq_cuckoo_view_alternate(bucket, fingerprint, buckets);
}

/* Whether table t's buckets are plain and each fit a word, and its
 * alternate needs no shift: the shape of nearly every filter's first
 * table. The functions that take a parameter plain are written once and
 * compiled twice: with plain true, which promises this shape and leaves no
 * test of the shape in them, and with plain false, for any table. Both give
 * the same answers. Kept for speed: one copy for any table made queries
 * 15-40% slower and inserts 5% (f = 12, 10^6 keys). */
static inline bool amq__cuckoo_plain_shape(const amq_cuckoo *f, const amq__cuckoo_table *t)
{
    return !f->semi_sorted && f->bucket_in_word && t->shift == 0;
}

/* Whether the filter is one table of amq__cuckoo_plain_shape. */
static inline bool amq__cuckoo_plain_single_table(const amq_cuckoo *f)
{
    return f->table_count == 1 && amq__cuckoo_plain_shape(f, &f->tables[0]);
}

/* The other bucket of a fingerprint in bucket of table t: in the first
 * table first_alternate; in a table grown 2^shift times larger, that of the
 * bucket's top part, with the low shift bits flipped by bits of the
 * fingerprint (see "Growth" at the top of cuckoo.c). */
static AMQ__ALWAYS_INLINE uint64_t amq__cuckoo_alternate(const amq_cuckoo *f,
                                                         const amq__cuckoo_table *t,
                                                         uint64_t bucket, uint32_t fingerprint,
                                                         bool plain)
{
    if (plain) /* t is the first table: its buckets are base_buckets */
        return amq__cuckoo_first_alternate(bucket, fingerprint, t->buckets);
    uint64_t other = amq__cuckoo_first_alternate(bucket >> t->shift, fingerprint, f->base_buckets);
    if (t->shift == 0)
        return other;
    uint64_t flip = (fingerprint * AMQ__CUCKOO_FINGERPRINT_FLIP) >> (64 - t->shift);
    return (other << t->shift) | ((bucket ^ flip) & ((((uint64_t)1) << t->shift) - 1));
}

/* ---- reading buckets ----------------------------------------------------------- */

/* Where a bucket starts: its first bit in the table's slots. */
static inline uint64_t amq__cuckoo_bucket_bit(const amq_cuckoo *f, uint64_t bucket)
{
    return bucket * f->bucket_bits;
}

/* Where a bucket starts, as the functions that test a bucket take it (at):
 * its first byte where buckets are whole bytes (b f a multiple of 8, as for
 * b = 4 and even f), read then with no shift, else its first bit. The batch
 * works it out once, to prefetch and then to read. Kept in bytes for speed:
 * bits throughout made queries by hash 12% slower and their batch 18%. */
static inline uint64_t amq__cuckoo_bucket_at(const amq_cuckoo *f, uint64_t bucket)
{
    return bucket * f->bucket_step;
}

/* The first bit of the bucket at at. */
static inline uint64_t amq__cuckoo_at_bit(const amq_cuckoo *f, uint64_t at)
{
    return f->whole_bytes ? at << 3 : at;
}

/* Bytes of a table's slots as saved: its bits rounded up to whole bytes. */
static inline uint64_t amq__cuckoo_table_bytes(const amq_cuckoo *f, uint64_t buckets)
{
    return (buckets * f->bucket_bits + 7) / 8;
}

/* The byte holding the first bit of the bucket at at, to prefetch. */
static inline const uint8_t *amq__cuckoo_bucket_start(const amq_cuckoo *f,
                                                      const amq__cuckoo_table *t, uint64_t at)
{
    return t->slots + (f->whole_bytes ? at : at >> 3);
}

/* The 64 bits of the slots from the bucket at at on. */
static inline uint64_t amq__cuckoo_window(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                          uint64_t at)
{
    if (f->whole_bytes)
        return amq__load_u64le(t->slots + at);
    return amq__packed_window(t->slots, at);
}

/* The suffixes of the semi-sorted bucket at at, slot 0's in the low f - 4
 * bits (the bits above the four are not defined), and its prefix code in
 * *code. */
static inline uint64_t amq__cuckoo_semisort_read(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                                 uint64_t at, uint64_t *code)
{
    uint64_t bit = amq__cuckoo_at_bit(f, at);
    uint64_t window = amq__packed_window(t->slots, bit);
    *code = window & AMQ__CUCKOO_SEMI_SORT_CODE_MASK;
    return f->bucket_bits <= 57
               ? window >> AMQ__CUCKOO_SEMI_SORT_CODE_BITS
               : amq__packed_window(t->slots, bit + AMQ__CUCKOO_SEMI_SORT_CODE_BITS);
}

/* The suffixes of a semi-sorted bucket, each moved to the low bits of its
 * 16-bit lane: four shifts and masks (where the CPU has a fast pdep, the
 * membership test spreads them with that instead). */
static inline uint64_t amq__cuckoo_spread(const amq_cuckoo *f, uint64_t suffixes)
{
    unsigned w = f->suffix_bits;
    return (suffixes & f->suffix_mask) |
           (suffixes >> w & f->suffix_mask) << AMQ__CUCKOO_WIDE_LANE_BITS |
           (suffixes >> 2 * w & f->suffix_mask) << 2 * AMQ__CUCKOO_WIDE_LANE_BITS |
           (suffixes >> 3 * w & f->suffix_mask) << 3 * AMQ__CUCKOO_WIDE_LANE_BITS;
}

/* ---- the membership test, one per bucket shape --------------------------------- */

/* The zero-lane test of SWAR arithmetic (see the top of cuckoo.c) on lanes
 * of one width: ones has bit 0 of every lane set, highs its top bit. The
 * result is non-zero iff some lane of x is zero, and then its lowest set
 * bit is the top bit of the first zero lane; a lane's borrow only reaches
 * the lanes above a zero one (which may be marked too, so only the lowest
 * bit is exact), and lanes outside ones and highs are never looked at. */
static inline uint64_t amq__cuckoo_zero_lanes(uint64_t x, uint64_t ones, uint64_t highs)
{
    return amq_inline_zero_lanes(x, ones, highs);
}

/* A plain bucket's membership test, on one of its groups of lanes read as
 * a word (bits above the group's lanes may be anything): non-zero iff some
 * lane holds value, and then its lowest set bit is in the first such lane
 * (amq__cuckoo_lane). A semi-sorted bucket decoded into a plain word is
 * tested the same way. */
static inline uint64_t amq__cuckoo_plain_match(const amq_cuckoo *f, uint64_t word, uint32_t value)
{
    return amq__cuckoo_zero_lanes(word ^ (value * f->lane_ones), f->lane_ones, f->lane_highs);
}

/* The lane of a plain match's lowest bit: its first lane holding the value. */
static inline uint32_t amq__cuckoo_lane(const amq_cuckoo *f, uint64_t match)
{
    return ((uint32_t)__builtin_ctzll(match) * f->slot_reciprocal) >> 16;
}

/* The first step of the semi-sorted test: non-zero if one of a bucket's
 * suffixes, as amq__cuckoo_semisort_read gives them, is that of value (and
 * then the bucket may hold value); zero if none is (and then it does not). */
static inline uint64_t amq__cuckoo_suffixes_match(const amq_cuckoo *f, uint64_t suffixes,
                                                  uint32_t value)
{
    return amq__cuckoo_zero_lanes(suffixes ^ (value & f->suffix_mask) * f->suffix_ones,
                                  f->suffix_ones, f->suffix_highs);
}

/* The second step of the semi-sorted test: whether one of two buckets, as
 * 16-bit lanes of prefix << 12 | suffix, holds the fingerprint whose lanes
 * are target, comparing all four lanes of each at once. */
static inline bool amq__cuckoo_wide_lanes_hold(uint64_t lanes1, uint64_t lanes2, uint64_t target)
{
    return (amq__cuckoo_zero_lanes(lanes1 ^ target, AMQ__CUCKOO_WIDE_LANE_ONES,
                                   AMQ__CUCKOO_WIDE_LANE_HIGHS) |
            amq__cuckoo_zero_lanes(lanes2 ^ target, AMQ__CUCKOO_WIDE_LANE_ONES,
                                   AMQ__CUCKOO_WIDE_LANE_HIGHS)) != 0;
}

/* The semi-sorted buckets' membership test: whether the bucket at at1 or
 * the one at at2 (a key's two; the same twice to ask one) holds value (0:
 * has an empty slot). The suffixes are compared first, where they lie,
 * which needs neither the prefix table nor the spreading: an absent key's
 * suffix is in neither of its buckets with chance about 1 - 8 / 2^(f - 4)
 * (97% for f = 12), and that answers it. Only when a suffix matches are the
 * whole fingerprints compared. Both buckets go through each step together,
 * so that a present key passes the first step whichever bucket holds it,
 * and the branch on it is predictable. */
static inline bool amq__cuckoo_semisort_holds(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                              uint64_t at1, uint64_t at2, uint32_t value)
{
    uint64_t code1, code2;
    uint64_t suffixes1 = amq__cuckoo_semisort_read(f, t, at1, &code1);
    uint64_t suffixes2 = amq__cuckoo_semisort_read(f, t, at2, &code2);
    if (!(amq__cuckoo_suffixes_match(f, suffixes1, value) |
          amq__cuckoo_suffixes_match(f, suffixes2, value)))
        return false;
    uint64_t target = ((uint64_t)(value >> f->suffix_bits) << 12 | (value & f->suffix_mask)) *
                      AMQ__CUCKOO_WIDE_LANE_ONES;
    /* pdep, where fast: the portable spread made present keys' queries and
     * batches 15% slower (f = 12, 10^6 keys). */
    if (f->use_bmi2)
        return amq__cuckoo_semisort_lanes_hold_pdep(f, code1, suffixes1, code2, suffixes2, target);
    return amq__cuckoo_wide_lanes_hold(
        amq__cuckoo_prefix_sequences[code1] | amq__cuckoo_spread(f, suffixes1),
        amq__cuckoo_prefix_sequences[code2] | amq__cuckoo_spread(f, suffixes2), target);
}

/* The plain buckets' membership test on a whole bucket: whether the one at
 * at holds value. */
static AMQ__ALWAYS_INLINE bool amq__cuckoo_plain_holds(const amq_cuckoo *f,
                                                       const amq__cuckoo_table *t, uint64_t at,
                                                       uint32_t value, bool plain)
{
    if (plain || AMQ__LIKELY(f->bucket_in_word))
        return amq__cuckoo_plain_match(f, amq__cuckoo_window(f, t, at), value) != 0;
    uint64_t match = 0;
    for (uint32_t group = 0; group < f->groups; group++)
        match |= amq__cuckoo_plain_match(
            f, amq__packed_window(t->slots, amq__cuckoo_at_bit(f, at) + group * f->group_bits),
            value);
    return match != 0;
}

/* Whether table t's stash holds fingerprint for the bucket at at1 or at2. */
static inline bool amq__cuckoo_stash_holds(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                           uint32_t fingerprint, uint64_t at1, uint64_t at2)
{
    uint64_t stash_at = amq__cuckoo_bucket_at(f, t->stash_bucket);
    return t->stash_fingerprint == fingerprint && (stash_at == at1 || stash_at == at2);
}

/* Whether the buckets at at1 and at2 of table t (a key's two), or the
 * stash for them, hold fingerprint. */
static AMQ__ALWAYS_INLINE bool amq__cuckoo_table_holds(const amq_cuckoo *f,
                                                       const amq__cuckoo_table *t, uint64_t at1,
                                                       uint64_t at2, uint32_t fingerprint,
                                                       bool plain)
{
    bool held = !plain && f->semi_sorted
                    ? amq__cuckoo_semisort_holds(f, t, at1, at2, fingerprint)
                    /* | not ||: both buckets are read, with no branch between */
                    : ((int)amq__cuckoo_plain_holds(f, t, at1, fingerprint, plain) |
                       (int)amq__cuckoo_plain_holds(f, t, at2, fingerprint, plain)) != 0;
    return held || amq__cuckoo_stash_holds(f, t, fingerprint, at1, at2);
}

/* Add keys in order as the single adds do, until a key's add fails or
 * leaves the filter full (amq_cuckoo_full), so that the generic batch call
 * can check its growth limits between tables: results[i] gets each
 * handled key's answer; returns how many keys it handled (at least one
 * when count > 0). unique: amq_cuckoo_add_unique's answers. */
size_t amq__cuckoo_add_many_until_full(int *results, amq_cuckoo *f, const void *const *keys,
                                       const size_t *lens, size_t count, bool unique);

/* ---- what the tests reach ------------------------------------------------------ */

/* Make a semi-sorted filter spread its suffixes without BMI2's pdep, as on
 * a CPU that lacks it. */
void amq__cuckoo_use_portable(amq_cuckoo *filter);

/* Whether the filter spreads its suffixes with pdep (only ever for a
 * semi-sorted filter on a CPU with a fast pdep). */
bool amq__cuckoo_uses_bmi2(const amq_cuckoo *filter);

#endif
