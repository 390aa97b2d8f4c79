/*
 * amq/inline.h - queries compiled into the caller: a filter's query state
 * in a struct of documented layout, and a static inline function that
 * answers from it. For binary fuse filters (amq_fuse_view), split-block
 * Bloom filters (amq_split_block_view) and cuckoo filters of 12-bit
 * fingerprints in buckets of 4 (amq_cuckoo_view).
 *
 * A query of a binary fuse filter is a few multiplications and three or four
 * loads, one of a split-block filter eight multiplications and one cache
 * line. Through amq_fuse_contains_hash it is also a call into the library,
 * which stops the compiler from interleaving the loads of consecutive queries
 * in the caller's loop and costs as much as the query itself when the filter
 * is in the cache. A caller that queries in a loop can take the filter's
 * query state once (amq_fuse_view_get) and ask amq_fuse_view_contains_hash,
 * which compiles into its loop. The answers are those of
 * amq_fuse_contains_hash, bit for bit; the library's own query is made of
 * the same functions.
 *
 * Versioning. The struct's layout and the functions' arithmetic are part of
 * the interface: AMQ_INLINE_LAYOUT numbers them. A program passes the number
 * it was compiled with to amq_fuse_view_get, and a library that no longer
 * computes queries that way refuses with AMQ_EVERSION instead of letting the
 * program answer wrongly. The number changes only with amq's major version.
 *
 * The same holds for a split-block filter's view and
 * amq_blocked_bloom_contains_hash, and a cuckoo filter's and
 * amq_cuckoo_contains_hash.
 *
 * Thread-safety: a view is a copy of the filter's query state and holds a
 * pointer to its array; it is valid while the filter is (until it is freed)
 * and holds the keys the filter held when the view was taken, or more: a
 * split-block filter's adds are seen by its views (the words are shared),
 * but not safely while they run (bloom.h says which calls may overlap). A
 * cuckoo filter's view copies its stash, which adds and removals change:
 * it is valid until the filter is next changed.
 * Any number of threads may query one view at once.
 */
#ifndef AMQ_INLINE_H
#define AMQ_INLINE_H

/* The views are the experimental tier (docs/CONVENTIONS.md, "Tiers"): their
 * layout is numbered (AMQ_INLINE_LAYOUT), not promised. */
#ifndef AMQ_EXPERIMENTAL
#error "amq/inline.h is amq's experimental tier: define AMQ_EXPERIMENTAL before including it"
#endif
#ifdef AMQ_EXPERIMENTAL

#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/fuse.h"
#include "amq/split_block.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The layout of the views and the arithmetic of their queries (2: with
 *  amq_cuckoo_view). */
#define AMQ_INLINE_LAYOUT 2

/**
 * A binary fuse filter's query state (layout AMQ_INLINE_LAYOUT). Filled by
 * amq_fuse_view_get; read by amq_fuse_view_contains_hash. A key's slots
 * come from m = amq_inline_mix64(hash + seed): the first is
 * amq_inline_mulhi(m, segment_count_length), the second and third lie one
 * and two segments further, at offsets within their segments xored with
 * bits 18..35 and 0..17 of m, and a fourth (arity 4) three segments
 * further, xored with the top 18 bits of m times 0x9E3779B97F4A7C15. The
 * key's fingerprint is the low f bits of m ^ (m >> 32); it passes when the
 * xor of its slots equals it.
 */
typedef struct amq_fuse_view {
    const uint8_t *fingerprints;   /**< f-bit slots: a byte each (f = 8), or a
                                        little-endian 16-bit word each */
    uint64_t seed;                 /**< added to every key hash before mixing */
    uint64_t segment_length;       /**< L, a power of two */
    uint64_t segment_mask;         /**< L - 1 */
    uint64_t segment_count_length; /**< the first slot's range: segments x L */
    uint32_t fingerprint_bits;     /**< f: 8 or 16 */
    uint32_t arity;                /**< slots per key: 3 or 4 */
    uint32_t empty;                /**< 1 when the filter holds no key: every query
                                        answers 0 (its slots are all zero) */
    uint32_t layout;               /**< AMQ_INLINE_LAYOUT */
} amq_fuse_view;

/**
 * Take a filter's query state for amq_fuse_view_contains_hash.
 * @param out the view to fill; not NULL.
 * @param filter the filter; not NULL. The view points into it: it is valid
 *   until amq_fuse_free(filter).
 * @param layout AMQ_INLINE_LAYOUT, as the caller was compiled with.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EVERSION if this library does not compute queries the
 *   way layout says (out is then zeroed); AMQ_EINVAL if out or filter is
 *   NULL.
 * Allocates: never. Thread safety: safe on a filter others query.
 */
AMQ_API int amq_fuse_view_get(amq_fuse_view *out, const amq_fuse *filter, uint32_t layout,
                              amq_diag *diag);

/** The splitmix64 finalizer, the mix of amq_fuse_view's key hashes. */
static inline uint64_t amq_inline_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/**
 * The high 64 bits of a * b: maps a uniform a onto [0, b). One instruction
 * where the compiler has 128-bit integers; four 32-bit products otherwise
 * (or when AMQ_INLINE_NO_INT128 is defined), with the same result.
 */
static inline uint64_t amq_inline_mulhi(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__) && !defined(AMQ_INLINE_NO_INT128)
    __extension__ typedef unsigned __int128 amq_inline_u128;
    return (uint64_t)(((amq_inline_u128)a * b) >> 64);
#else
    uint64_t a_low = (uint32_t)a, a_high = a >> 32, b_low = (uint32_t)b, b_high = b >> 32;
    uint64_t low_low = a_low * b_low, high_low = a_high * b_low, low_high = a_low * b_high;
    uint64_t middle = (low_low >> 32) + (uint32_t)high_low + (uint32_t)low_high;
    return a_high * b_high + (high_low >> 32) + (low_high >> 32) + (middle >> 32);
#endif
}

/** The slots of a key whose mixed hash is mixed (see amq_fuse_view). */
static inline void amq_fuse_view_slots(uint64_t slots[4], const amq_fuse_view *view, uint64_t mixed)
{
    uint64_t first = amq_inline_mulhi(mixed, view->segment_count_length);
    slots[0] = first;
    slots[1] = (first + view->segment_length) ^ ((mixed >> 18) & view->segment_mask);
    slots[2] = (first + 2 * view->segment_length) ^ (mixed & view->segment_mask);
    slots[3] = view->arity == 4 ? (first + 3 * view->segment_length) ^
                                      (((mixed * 0x9E3779B97F4A7C15ULL) >> 46) & view->segment_mask)
                                : 0;
}

/** The fingerprint of a key whose mixed hash is mixed: f bits of m ^ m >> 32. */
static inline uint32_t amq_fuse_view_fingerprint(uint64_t mixed, uint32_t fingerprint_bits)
{
    uint64_t folded = mixed ^ (mixed >> 32);
    return fingerprint_bits == 8 ? (uint32_t)(uint8_t)folded : (uint32_t)(uint16_t)folded;
}

/** Slot i of the view's fingerprints. */
static inline uint32_t amq_fuse_view_slot(const amq_fuse_view *view, uint64_t i)
{
    if (view->fingerprint_bits == 8)
        return view->fingerprints[i];
    const uint8_t *p = view->fingerprints + 2 * i;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

/**
 * Whether the key whose 64-bit hash is hash may be in the filter: the answer
 * of amq_fuse_contains_hash, compiled into the caller.
 * @param view a view amq_fuse_view_get filled; its filter not yet freed.
 * @param hash the key's hash, as amq_fuse_contains_hash takes it.
 * @return true: maybe present; false: certainly absent.
 * Allocates: never. Thread safety: safe.
 */
static inline bool amq_fuse_view_contains_hash(const amq_fuse_view *view, uint64_t hash)
{
    uint64_t mixed = amq_inline_mix64(hash + view->seed);
    uint64_t slots[4];
    amq_fuse_view_slots(slots, view, mixed);
    uint32_t x = amq_fuse_view_fingerprint(mixed, view->fingerprint_bits) ^
                 amq_fuse_view_slot(view, slots[0]) ^ amq_fuse_view_slot(view, slots[1]) ^
                 amq_fuse_view_slot(view, slots[2]);
    if (view->arity == 4)
        x ^= amq_fuse_view_slot(view, slots[3]);
    return x == 0 && !view->empty;
}

/**
 * A split-block Bloom filter's query state (layout AMQ_INLINE_LAYOUT):
 * 256-bit blocks of eight 32-bit words. A key's block is
 * amq_split_block_index(hash, blocks), (hash >> 32) * blocks >> 32, and it
 * sets, in word i of the block, bit (key32 * amq_split_block_salt(i)) >> 27
 * of the 32, key32 being the low half of the hash (the layout of Parquet's
 * split-block filters; the kernel is amq/split_block.h's).
 */
typedef struct amq_split_block_view {
    const uint32_t *words; /**< blocks x 8 words, in the host's byte order */
    uint64_t blocks;       /**< at least 1, at most 2^32 */
    uint32_t layout;       /**< AMQ_INLINE_LAYOUT */
    uint32_t reserved;     /**< 0 */
} amq_split_block_view;

/**
 * Take a split-block filter's query state for
 * amq_split_block_view_contains_hash.
 * @param out the view to fill; not NULL.
 * @param filter a blocked Bloom filter of the split layout
 *   (AMQ_BLOCKED_SPLIT); not NULL. The view points into it: it is valid
 *   until amq_blocked_bloom_free(filter).
 * @param layout AMQ_INLINE_LAYOUT, as the caller was compiled with.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EVERSION if this library does not compute queries the
 *   way layout says; AMQ_EINVAL if out or filter is NULL or the filter has
 *   512-bit blocks (out is then zeroed).
 * Allocates: never. Thread safety: safe on a filter others query.
 */
AMQ_API int amq_split_block_view_get(amq_split_block_view *out, const amq_blocked_bloom *filter,
                                     uint32_t layout, amq_diag *diag);

/** The first of the eight words of the block of a key whose hash is hash. */
static inline const uint32_t *amq_split_block_view_block(const amq_split_block_view *view,
                                                         uint64_t hash)
{
    return view->words + AMQ_SPLIT_BLOCK_WORDS * amq_split_block_index(hash, view->blocks);
}

/**
 * Whether the key whose 64-bit hash is hash may be in the filter: the answer
 * of amq_blocked_bloom_contains_hash, compiled into the caller. Compiled
 * for AVX2 (-mavx2, -march=native on a CPU that has it) it is one 256-bit
 * test of the block against the key's eight bits; otherwise it tests the
 * eight words without a branch (defining AMQ_INLINE_PORTABLE keeps that
 * form everywhere). Both answer alike.
 * @param view a view amq_split_block_view_get filled; its filter not yet
 *   freed.
 * @param hash the key's hash, as amq_blocked_bloom_contains_hash takes it.
 * @return true: maybe present; false: certainly absent.
 * Allocates: never. Thread safety: safe (see above for adds).
 */
static inline bool amq_split_block_view_contains_hash(const amq_split_block_view *view,
                                                      uint64_t hash)
{
    const uint32_t *block = amq_split_block_view_block(view, hash);
#if defined(__AVX2__) && !defined(AMQ_INLINE_PORTABLE)
    return amq_split_block_test_avx2(block, (uint32_t)hash);
#else
    return amq_split_block_test(block, (uint32_t)hash);
#endif
}

/**
 * A cuckoo filter's query state (layout AMQ_INLINE_LAYOUT), for the shape
 * most filters have: one table (the filter never grew) of plain buckets of
 * b = 4 slots of f = 12 bits, 6 bytes a bucket. Bucket i is bytes 6i to
 * 6i + 5 of buckets, slot s in bits 12s to 12s + 11 of their little-endian
 * value, 0 in an empty slot. Of a key's 64-bit hash h,
 *
 *     fingerprint  fp = 1 + (lo32(h) * 4095 >> 32)            in 1 .. 4095
 *     first bucket i1 = hi32(h) * B >> 32
 *     alternate    i2 = (t - i1) mod B,
 *                  t  = hi32(fp * 0x9E3779B97F4A7C15) * B >> 32
 *
 * for B buckets; the key may be present when bucket i1 or i2 holds fp, or
 * the stash holds fp for one of them. Two constants of the shape are
 * fields, fingerprint_range and lane_ones, and the query multiplies by
 * them: a product by a constant may be compiled as a chain of shifts and
 * adds, several instructions where the field's product is one, and a loop
 * of queries goes as fast as the instructions of the queries in flight
 * allow.
 */
typedef struct amq_cuckoo_view {
    const uint8_t *buckets;     /**< bucket_count x 6 bytes, then 2 that are
                                     read with the last bucket and ignored */
    uint64_t bucket_count;      /**< B: at least 1, at most 2^32 */
    uint64_t stash_bucket;      /**< the bucket the stashed fingerprint was
                                     evicted towards (one of its two) */
    uint64_t lane_ones;         /**< AMQ_CUCKOO_VIEW_LANE_ONES (see below) */
    uint32_t fingerprint_range; /**< 4095, 2^12 - 1 (see below) */
    uint32_t stash_fingerprint; /**< the fingerprint in the stash; 0: empty */
    uint32_t layout;            /**< AMQ_INLINE_LAYOUT */
    uint32_t reserved;          /**< 0 */
} amq_cuckoo_view;

/**
 * Take a cuckoo filter's query state for amq_cuckoo_view_contains_hash.
 * @param out the view to fill; not NULL.
 * @param filter the filter; not NULL. The view points into its table and
 *   copies its stash: it answers for the filter as it is now, and is valid
 *   until the filter is next changed (an add, remove or clear may move
 *   fingerprints into the stash, or grow the filter) or freed. Take it
 *   again after a change.
 * @param layout AMQ_INLINE_LAYOUT, as the caller was compiled with.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EVERSION if this library does not compute queries the
 *   way layout says; AMQ_EUNSUPPORTED if the filter is of another shape
 *   (fingerprints of other than 12 bits, buckets of other than 4 slots,
 *   semi-sorted buckets, or more than one table: ask
 *   amq_cuckoo_contains_hash then); AMQ_EINVAL if out or filter is NULL
 *   (out is then zeroed).
 * Allocates: never. Thread safety: safe on a filter others query.
 */
AMQ_API int amq_cuckoo_view_get(amq_cuckoo_view *out, const amq_cuckoo *filter, uint32_t layout,
                                amq_diag *diag);

/** The fingerprint of a hash in a view's filter, in 1 .. 4095. */
static inline uint32_t amq_cuckoo_view_fingerprint(const amq_cuckoo_view *view, uint64_t hash)
{
    return 1 + (uint32_t)(((hash & 0xFFFFFFFFU) * view->fingerprint_range) >> 32);
}

/** A hash's first bucket among bucket_count (at most 2^32). */
static inline uint64_t amq_cuckoo_view_index(uint64_t hash, uint64_t bucket_count)
{
    return ((hash >> 32) * bucket_count) >> 32;
}

/**
 * The other bucket of fingerprint in bucket, among bucket_count:
 * (t - bucket) mod bucket_count (see amq_cuckoo_view). Its own inverse.
 */
static inline uint64_t amq_cuckoo_view_alternate(uint64_t bucket, uint32_t fingerprint,
                                                 uint64_t bucket_count)
{
    /* the multiplier, 2^64 over the golden ratio, is odd and has well-mixed
     * high bits: it spreads fingerprints over the offsets */
    uint64_t t = ((fingerprint * 0x9E3779B97F4A7C15ULL) >> 32) * bucket_count >> 32;
    /* plus bucket_count where t - bucket wraps, by a mask: the wrap is a
     * coin toss, which a branch would mispredict half the time */
    return t - bucket + (bucket_count & (0 - (uint64_t)(t < bucket)));
}

/**
 * The zero-lane test of SWAR arithmetic: ones has bit 0 of each lane of x
 * set, highs the top bit. Non-zero iff some lane of x is zero; its lowest
 * set bit is then the top bit of the first zero lane (lanes above a zero
 * one may be marked too: a borrow runs up from it). Lanes outside ones and
 * highs are ignored.
 */
static inline uint64_t amq_inline_zero_lanes(uint64_t x, uint64_t ones, uint64_t highs)
{
    return (x - ones) & ~x & highs;
}

/** Bit 0, and bit 11, of each of a view's bucket's four 12-bit lanes. */
#define AMQ_CUCKOO_VIEW_LANE_ONES  0x0000001001001001ULL
#define AMQ_CUCKOO_VIEW_LANE_HIGHS 0x0000800800800800ULL

/** A fingerprint in each of a bucket's four 12-bit lanes. */
static inline uint64_t amq_cuckoo_view_lanes(const amq_cuckoo_view *view, uint32_t fingerprint)
{
    return fingerprint * view->lane_ones;
}

/**
 * Non-zero iff the bucket at bucket (its 6 bytes, and 2 more read and
 * ignored) holds the fingerprint whose lanes are lanes
 * (amq_cuckoo_view_lanes): one 64-bit little-endian load, one zero-lane
 * test of its four lanes.
 */
static inline uint64_t amq_cuckoo_view_bucket_match(const uint8_t *bucket, uint64_t lanes)
{
    uint64_t word = (uint64_t)bucket[0] | (uint64_t)bucket[1] << 8 | (uint64_t)bucket[2] << 16 |
                    (uint64_t)bucket[3] << 24 | (uint64_t)bucket[4] << 32 |
                    (uint64_t)bucket[5] << 40 | (uint64_t)bucket[6] << 48 |
                    (uint64_t)bucket[7] << 56;
    return amq_inline_zero_lanes(word ^ lanes, AMQ_CUCKOO_VIEW_LANE_ONES,
                                 AMQ_CUCKOO_VIEW_LANE_HIGHS);
}

/**
 * Whether the key whose 64-bit hash is hash may be in the filter: the answer
 * of amq_cuckoo_contains_hash, compiled into the caller. Both buckets are
 * read and tested with no branch between them; the stash is compared only
 * when it is occupied (a test that goes the same way for every key, so it
 * is predicted, and costs fewer instructions than the comparison).
 * @param view a view amq_cuckoo_view_get filled; its filter not changed
 *   or freed since.
 * @param hash the key's hash, as amq_cuckoo_contains_hash takes it.
 * @return true: maybe present; false: certainly absent.
 * Allocates: never. Thread safety: safe.
 */
static inline bool amq_cuckoo_view_contains_hash(const amq_cuckoo_view *view, uint64_t hash)
{
    uint32_t fingerprint = amq_cuckoo_view_fingerprint(view, hash);
    uint64_t i1 = amq_cuckoo_view_index(hash, view->bucket_count);
    uint64_t i2 = amq_cuckoo_view_alternate(i1, fingerprint, view->bucket_count);
    uint64_t lanes = amq_cuckoo_view_lanes(view, fingerprint);
    bool held = (amq_cuckoo_view_bucket_match(view->buckets + 6 * i1, lanes) |
                 amq_cuckoo_view_bucket_match(view->buckets + 6 * i2, lanes)) != 0;
    if (view->stash_fingerprint != 0)
        held |= view->stash_fingerprint == fingerprint &&
                (view->stash_bucket == i1 || view->stash_bucket == i2);
    return held;
}

#ifdef __cplusplus
}
#endif

#endif /* AMQ_EXPERIMENTAL */

#endif /* AMQ_INLINE_H */
