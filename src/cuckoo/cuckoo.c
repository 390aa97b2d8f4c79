/*
 * cuckoo.c - the cuckoo filter (B. Fan, D. G. Andersen, M. Kaminsky,
 * M. Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT
 * 2014).
 *
 * The table is an array of buckets, each of b slots (b = 2, 4 or 8), each
 * slot holding an f-bit fingerprint or 0 for "empty". A key is hashed once,
 * to 64 bits h, which give
 *
 *     fp = 1 + floor(lo32(h) * (2^f - 1) / 2^32)      in 1 .. 2^f - 1
 *     i1 = floor(hi32(h) * buckets / 2^32)            in 0 .. buckets - 1
 *
 * and the key may live in bucket i1 or in its alternate bucket
 *
 *     i2 = alternate(i1, fp) = (t(fp) - i1) mod buckets,
 *     t(fp) = floor(hi32(fp * 0x9E3779B97F4A7C15) * buckets / 2^32).
 *
 * That is partial-key cuckoo hashing: the alternate depends only on the
 * bucket a fingerprint sits in and the fingerprint itself, so a stored
 * fingerprint can be moved to its other bucket without the key. The paper
 * uses i2 = i1 xor hash(fp), which needs a power-of-two bucket count (and so
 * wastes up to half the table when n is just above a power of two); the
 * subtraction is its own inverse for ANY bucket count -
 * alternate(alternate(i, fp), fp) = t - (t - i) = i (mod buckets) - so the
 * table is sized to n exactly. Fingerprints are never 0, so 0 can mark an
 * empty slot; mapping lo32(h) onto 1 .. 2^f - 1 by multiplication keeps them
 * uniform instead of doubling the weight of one value.
 *
 * Operations, on one table:
 *
 *   contains  fp is in bucket i1, or in bucket i2, or in the stash (below)
 *             with bucket i1 or i2.
 *   add       put fp in a free slot of i1 or i2. If both are full, a random
 *             walk: take one of the two buckets at random, swap fp with a
 *             random slot's fingerprint (the victim), move to the victim's
 *             alternate bucket and try to place it there; repeat, at most
 *             max_kicks times (default 500). If the walk ends with a
 *             fingerprint still homeless, it goes into the stash.
 *   remove    clear one slot holding fp in i1 or i2 (or empty the stash if it
 *             holds fp for those buckets); AMQ_ENOTFOUND if none does.
 *   count     the slots holding fp in i1 and i2 (once if i1 = i2), plus the
 *             stash.
 *
 * The stash. A walk that runs out of kicks has displaced a chain of
 * fingerprints and holds one that fits nowhere; dropping it would lose a key
 * that was added earlier. It is kept instead in a one-entry stash (the
 * "victim" of the paper's implementation) with the bucket it was evicted
 * towards, and every query and removal also looks there. The add succeeds:
 * every key added is in the table or the stash. From then on the table is
 * full: with the stash occupied an add answers AMQ_EFULL without touching
 * anything. A removal that frees a slot gives the stashed fingerprint a new
 * chance: it is inserted again (by the same walk), and the table accepts
 * keys once more if that succeeds.
 *
 * Load. With b = 4 the random walk (with the look-ahead below) fills about
 * 97% of the slots before it first fails (b = 2: about 88%, b = 8: about
 * 99%). A filter asked for n keys gets
 *
 *     buckets = max(ceil(n / (b * design_load) + 3 sqrt(n / b)), pile-up floor)
 *
 * with design_load 0.95 (b = 4), 0.85 (b = 2) and 0.98 (b = 8): the first
 * term keeps n below the load where inserts start failing, the second is a
 * margin for the spread of that load, wide for small tables and negligible
 * for large ones (0.6% at a million keys, b = 4). Small tables can also fail
 * for a reason no walk can fix: b + 1 keys whose two choices are both the
 * same bucket. The floor makes that rarer than 10^-9 - C(n, b+1) B^-(2b+1),
 * by the union bound, is at most 10^-9 - which decides the size below
 * about 300 keys for b = 4 and 30,000 for b = 2 (use b = 2 for large
 * tables only). The bucket count is saved with the filter, never
 * recomputed.
 *
 * The walk looks one step ahead: before evicting a random victim from a
 * full bucket it checks whether any of the bucket's fingerprints has a free
 * slot in its own alternate bucket and, if so, moves that one instead. That
 * shortens walks near full load and raises the load at first failure from
 * about 96% to 97% (b = 4).
 *
 * FPR. An absent key is compared with the fingerprints of its two buckets;
 * each matches with chance 1 / (2^f - 1), so at load L the FPR is
 * 1 - (1 - 1/(2^f - 1))^(2bL), about 2bL / 2^f: 0.19% at f = 12, b = 4,
 * L = 0.95. The space is f / L bits per key, about (log2(1/p) + 3) / L, so
 * the cuckoo filter beats a Bloom filter's 1.44 log2(1/p) once p is below
 * about 0.4% (f >= 11 at L = 0.945).
 *
 * Duplicates. add stores another copy of a key's fingerprint each time; a
 * key's two buckets hold at most 2b copies, and adding it again after that
 * fills the stash and then makes the table full. add_unique adds only keys
 * that are not maybe-present.
 *
 * Growth. With growth g > 0 (a power of two, 2^s), a full filter (its
 * newest table's stash occupied) chains a new table with g times the newest
 * table's buckets and adds there; queries, counts and removals ask every
 * table. The FPRs of the tables add up, so a grown filter's FPR exceeds the
 * first table's.
 *
 * Removal from a chain needs care. Two keys with the same fingerprint and
 * the same bucket pair in one table are indistinguishable there, and a
 * removal may take the other key's copy. In one table that is harmless:
 * whichever copy remains is in both keys' buckets. Across tables it is not
 * when the tables map keys independently: key A's removal could take B's
 * copy in a table where their pairs coincide, leaving A's copy in a table
 * where B cannot reach it - a false negative for B. So the tables are
 * nested. Table j has B * 2^(s*j) buckets; a key's bucket there is
 * floor(hi32(h) * buckets / 2^32), whose top bits are its bucket in every
 * earlier table; and the alternate of bucket x in table j is the first
 * table's alternate of x's top part, followed by x's low s*j bits xor the
 * top s*j bits of fp * 0xD6E8FEB86659FD93. Dropping low bits commutes with
 * both, so two keys that share a fingerprint and a pair in a later table
 * share their pair in every earlier one. Removal searches the newest table
 * first: the copy it takes, if it is another key's, leaves that key able to
 * reach the removed key's own copy, which sits in the same or an earlier
 * table. A key is never lost.
 *
 * Memory layout: slot s of bucket i is the f-bit field number i*b + s of a
 * packed array (bits.h, least significant bits first), so a 12-bit
 * fingerprint takes 12 bits. When a bucket's b*f bits can be read with one
 * unaligned 64-bit load (b*f <= 57, or exactly 64 and then byte-aligned) a
 * bucket is searched for a value with the zero-lane test of SWAR
 * arithmetic: x = bucket xor (value * ones), where ones has bit 0 of every
 * lane set, has a zero lane iff (x - ones) & ~x & highs != 0 (highs: bit
 * f - 1 of every lane), and the lowest bit set in that expression marks the
 * first zero lane. Otherwise the slots are read one by one.
 *
 * Semi-sorting (the paper's section 5.2). In a bucket of four slots the
 * order of the fingerprints carries no information, and that can be turned
 * into space. Split each f-bit fingerprint into its top 4 bits (the prefix)
 * and the other f - 4 (the suffix), and keep the bucket's four fingerprints
 * in ascending order, so that its prefixes are a sorted sequence
 * a <= b <= c <= d. There are only C(16 + 4 - 1, 4) = 3876 such sequences
 * (multisets of four values out of 16), so the four prefixes fit in a
 * 12-bit code instead of 16 bits, and a bucket takes 12 + 4(f - 4) = 4f - 4
 * bits: one bit per slot less, at the same FPR. An empty slot is the
 * fingerprint 0, prefix and suffix 0, and sorts first.
 *
 * The code of a sorted sequence is its rank in the combinatorial number
 * system: a <= b <= c <= d maps to the strictly increasing a < b + 1 <
 * c + 2 < d + 3, whose rank among 4-subsets of 0..18 is
 *
 *     code = C(a, 1) + C(b + 1, 2) + C(c + 2, 3) + C(d + 3, 4)    in 0 .. 3875.
 *
 * Decoding goes through a table of the 3876 sequences (built once, 31 KiB:
 * each the four prefixes already in the top 4 bits of four 16-bit lanes):
 * listing them with d outermost and a innermost, each in ascending order,
 * visits the codes 0, 1, 2, ... in turn. A semi-sorted bucket is 12 bits
 * of code, then the four suffixes of f - 4 bits, slot 0 first:
 *
 *     bit 0          12          12 + w      12 + 2w     12 + 3w     12 + 4w
 *         | code     | suffix 0  | suffix 1  | suffix 2  | suffix 3  |
 *                                                             (w = f - 4)
 *
 * A lookup first compares the key's suffix with the four stored ones where
 * they lie (the zero-lane test on lanes of w bits): for an absent key that
 * settles most buckets - neither of its two holds its suffix with chance
 * about 1 - 8 / 2^w, 97% for f = 12 - without the table. Otherwise it
 * builds the bucket's four fingerprints in 16-bit lanes, prefix << 12 |
 * suffix, from the table's entry and the suffixes spread into the lanes'
 * low bits, and compares all four at once. The spreading is one BMI2 pdep
 * where the CPU has a fast one (chosen at run time; Intel since Haswell,
 * AMD since Zen 3), else four shifts and masks; both give the same lanes.
 * Insertions and removals decode a bucket into the plain layout's word of
 * four f-bit lanes, change it as a plain bucket, sort the four
 * fingerprints and encode them again. The lanes must fit one 64-bit word,
 * so semi-sorting takes f <= 16 (and f >= 5: a suffix of at least one
 * bit).
 */
#include "amq/cuckoo.h"
#include "core/bits.h"
#include "core/family.h"
#include "core/hash.h"
#include "core/util.h"
#include "cuckoo/cuckoo_internal.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CUCKOO_HAVE_BMI2 1
#include <immintrin.h>
#else
#define CUCKOO_HAVE_BMI2 0
#endif

/* Multiplier spreading a fingerprint into the alternate bucket's offset
 * (2^64 divided by the golden ratio, an odd constant with well-mixed high
 * bits). */
#define FINGERPRINT_SPREAD 0x9E3779B97F4A7C15ULL
/* Another odd multiplier, for the low bucket bits of a grown table. */
#define FINGERPRINT_FLIP 0xD6E8FEB86659FD93ULL

/* The most slots a bucket has. */
#define MAX_BUCKET_SIZE 8

/* How many keys the batch query hashes and prefetches before it reads their
 * buckets, and the table size from which it does so (smaller ones are read
 * straight through: measured at 10^5 to 10^6 keys on a 2 MiB L2 cache, the
 * prefetching pays from about 800 KB on and costs below). */
#define LOOKUP_CHUNK           32
#define PREFETCHED_TABLE_BYTES ((uint64_t)1 << 20)

/* Semi-sorted buckets: 4 slots, 4-bit prefixes, and the number and width
 * of the codes of their sorted sequences. */
#define SEMI_SORT_SLOTS       4
#define SEMI_SORT_PREFIX_BITS 4
#define SEMI_SORT_CODES       3876
#define SEMI_SORT_CODE_BITS   12
#define SEMI_SORT_CODE_MASK   0xfff

/* A semi-sorted bucket is examined in 16-bit lanes, lane i holding slot
 * i's fingerprint as prefix << 12 | suffix (suffixes have at most 12 bits). */
#define WIDE_LANE_BITS  16
#define WIDE_LANE_ONES  0x0001000100010001ULL
#define WIDE_LANE_HIGHS 0x8000800080008000ULL

typedef struct cuckoo_table {
    uint8_t *slots;             /* buckets * b fields of f bits, + padding */
    uint64_t buckets;           /* base_buckets << shift */
    unsigned shift;             /* log2 of the growth since the first table */
    uint64_t stored;            /* fingerprints in the slots and the stash */
    uint64_t stash_bucket;      /* the bucket the stashed fingerprint was evicted towards */
    uint32_t stash_fingerprint; /* 0: the stash is empty */
} cuckoo_table;

struct amq_cuckoo {
    cuckoo_table tables[AMQ_CUCKOO_MAX_TABLES];
    size_t table_count;
    uint32_t fingerprint_bits; /* f */
    uint32_t bucket_size;      /* b */
    uint32_t max_kicks;
    uint32_t growth;
    uint64_t base_buckets;      /* the first table's */
    uint32_t fingerprint_range; /* 2^f - 1: fingerprints are 1 .. range */
    bool semi_sorted;           /* buckets are coded prefixes + suffixes */
    uint32_t bucket_bits;       /* a bucket's bits in the table: b*f, or 4f - 4 */
    uint32_t suffix_bits;       /* semi-sorted: f - 4 */
    uint32_t suffix_mask;       /* semi-sorted: the low f - 4 bits */
    uint64_t suffix_lanes;      /* semi-sorted: suffix_mask in each 16-bit lane */
    uint64_t suffix_ones;       /* semi-sorted: bit 0 of each of the 4 suffixes as stored */
    uint64_t suffix_highs;      /* semi-sorted: bit f - 5 of each */
    bool use_bmi2;              /* semi-sorted: spread suffixes with pdep */
    bool bucket_in_word;        /* a bucket's lanes fit one 64-bit word */
    uint64_t bucket_mask;       /* the low b*f bits */
    uint64_t lane_ones;         /* bit 0 of each of the b lanes of f bits */
    uint64_t lane_highs;        /* bit f - 1 of each lane */
    uint32_t slot_reciprocal;   /* ceil(2^16 / f): bit i < 64 is in slot (i * this) >> 16 */
    uint64_t capacity;
    double target_fpr;
    amq_hasher hasher;
    uint64_t random_state; /* the walk's victim choices (splitmix64) */
};

/* ---- sizing -------------------------------------------------------------------- */

static double design_load(uint32_t bucket_size)
{
    switch (bucket_size) {
    case 2:
        return 0.85;
    case 8:
        return 0.98;
    default:
        return 0.95;
    }
}

/* The fewest buckets at which b + 1 of n keys hit one bucket as both their
 * choices - which no placement can survive - with a chance below 10^-9: by
 * the union bound, C(n, b+1) B^-(2b+1) <= 10^-9. Only small tables need
 * this; for large ones the design load asks for more. */
static double buckets_against_pileup(uint64_t capacity, uint32_t bucket_size)
{
    if (capacity <= bucket_size)
        return 1;
    double combinations = 1;
    for (uint32_t i = 0; i <= bucket_size; i++)
        combinations *= (double)(capacity - i) / (i + 1);
    return pow(combinations * 1e9, 1.0 / (2 * bucket_size + 1));
}

/* Buckets for n keys (see the top of the file); 0 when more than the most. */
static uint64_t buckets_for(uint64_t capacity, uint32_t bucket_size)
{
    double n = (double)capacity;
    double buckets = ceil(n / (bucket_size * design_load(bucket_size)) + 3 * sqrt(n / bucket_size));
    buckets = fmax(buckets, ceil(buckets_against_pileup(capacity, bucket_size)));
    if (!(buckets <= (double)AMQ_CUCKOO_MAX_BUCKETS))
        return 0;
    return buckets < 1 ? 1 : (uint64_t)buckets;
}

static uint64_t table_bits(const amq_cuckoo *f, uint64_t buckets)
{
    return buckets * f->bucket_bits;
}

/* Bytes of a table's slots as saved: its bits rounded up to whole bytes. */
static uint64_t table_bytes(const amq_cuckoo *f, uint64_t buckets)
{
    return (table_bits(f, buckets) + 7) / 8;
}

/* Whether the CPU has BMI2's pdep, and not the microcoded one of AMD's
 * Zen 1 and 2 (hundreds of cycles, slower than the portable spread). */
static bool cpu_has_fast_pdep(void)
{
#if CUCKOO_HAVE_BMI2
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("znver1") &&
           !__builtin_cpu_is("znver2");
#else
    return false;
#endif
}

/* Set f, b, the layout and the constants derived from them. */
static void set_shape(amq_cuckoo *f, uint32_t fingerprint_bits, uint32_t bucket_size,
                      bool semi_sorted)
{
    f->fingerprint_bits = fingerprint_bits;
    f->bucket_size = bucket_size;
    f->fingerprint_range = (uint32_t)(((uint64_t)1 << fingerprint_bits) - 1);
    f->semi_sorted = semi_sorted;
    f->suffix_bits = semi_sorted ? fingerprint_bits - SEMI_SORT_PREFIX_BITS : 0;
    uint32_t lane_bits = fingerprint_bits * bucket_size;
    f->bucket_bits =
        semi_sorted ? SEMI_SORT_CODE_BITS + SEMI_SORT_SLOTS * f->suffix_bits : lane_bits;
    f->bucket_in_word = semi_sorted || lane_bits <= 57 || lane_bits == 64;
    f->bucket_mask = lane_bits >= 64 ? UINT64_MAX : ((uint64_t)1 << lane_bits) - 1;
    f->lane_ones = 0;
    for (uint32_t lane = 0; lane < bucket_size && lane * fingerprint_bits < 64; lane++)
        f->lane_ones |= (uint64_t)1 << (lane * fingerprint_bits);
    f->lane_highs = f->lane_ones << (fingerprint_bits - 1);
    f->slot_reciprocal = ((1u << 16) + fingerprint_bits - 1) / fingerprint_bits;
    f->suffix_mask = ((uint32_t)1 << f->suffix_bits) - 1;
    f->suffix_lanes = f->suffix_mask * WIDE_LANE_ONES;
    f->suffix_ones = 0;
    for (uint32_t slot = 0; semi_sorted && slot < SEMI_SORT_SLOTS; slot++)
        f->suffix_ones |= (uint64_t)1 << (slot * f->suffix_bits);
    f->suffix_highs = semi_sorted ? f->suffix_ones << (f->suffix_bits - 1) : 0;
    f->use_bmi2 = semi_sorted && cpu_has_fast_pdep();
}

static bool bucket_size_valid(uint32_t bucket_size)
{
    return bucket_size == 2 || bucket_size == 4 || bucket_size == 8;
}

static bool semi_sort_valid(uint32_t fingerprint_bits, uint32_t bucket_size)
{
    return bucket_size == SEMI_SORT_SLOTS &&
           fingerprint_bits >= AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS &&
           fingerprint_bits <= AMQ_CUCKOO_SEMI_SORT_MAX_FINGERPRINT_BITS;
}

/* The smallest f whose completely full table, 2b / (2^f - 1), is within p;
 * 0 if even 32 bits are not enough. */
static uint32_t fingerprint_bits_for(double fpr, uint32_t bucket_size)
{
    for (uint32_t bits = AMQ_CUCKOO_MIN_FINGERPRINT_BITS; bits <= AMQ_CUCKOO_MAX_FINGERPRINT_BITS;
         bits++)
        if (2.0 * bucket_size / (double)(((uint64_t)1 << bits) - 1) <= fpr)
            return bits;
    return 0;
}

/* ---- hashing and slots -------------------------------------------------------------- */

/* A hash's fingerprint, in 1 .. range (range = 2^f - 1). */
static inline uint32_t fingerprint_in(uint64_t hash, uint64_t range)
{
    return 1 + (uint32_t)(((hash & 0xffffffffu) * range) >> 32);
}

static inline uint32_t fingerprint_of(const amq_cuckoo *f, uint64_t hash)
{
    return fingerprint_in(hash, f->fingerprint_range);
}

static inline uint64_t index_of(uint64_t hash, uint64_t buckets)
{
    return ((hash >> 32) * buckets) >> 32;
}

/* The other bucket of a fingerprint in bucket of the first table, which
 * has buckets buckets: (t(fp) - bucket) mod buckets. */
static inline uint64_t first_alternate(uint64_t bucket, uint32_t fingerprint, uint64_t buckets)
{
    uint64_t offset = ((fingerprint * FINGERPRINT_SPREAD) >> 32) * buckets >> 32;
    /* offset - bucket, plus buckets where that wraps: a mask, not a
     * condition, since the wrap is a coin toss a branch would mispredict
     * half the time (and compilers may turn either form of ?: into one). */
    return offset - bucket + (buckets & (0 - (uint64_t)(offset < bucket)));
}

/* The other bucket of a fingerprint in bucket of table t: in the first
 * table first_alternate; in a table grown 2^shift times larger, that of the
 * bucket's top part, with the low shift bits flipped by bits of the
 * fingerprint (see "Growth" at the top of the file). */
static inline uint64_t alternate(const amq_cuckoo *f, const cuckoo_table *t, uint64_t bucket,
                                 uint32_t fingerprint)
{
    uint64_t other = first_alternate(bucket >> t->shift, fingerprint, f->base_buckets);
    if (t->shift == 0)
        return other;
    uint64_t flip = (fingerprint * FINGERPRINT_FLIP) >> (64 - t->shift);
    return (other << t->shift) | ((bucket ^ flip) & ((((uint64_t)1) << t->shift) - 1));
}

/* The zero-lane test of SWAR arithmetic (see the top of the file) on lanes
 * of one width: ones has bit 0 of every lane set, highs its top bit. The
 * result is non-zero iff some lane of x is zero, and then its lowest set
 * bit is the top bit of the first zero lane; a lane's borrow only reaches
 * the lanes above a zero one, and lanes outside ones and highs are never
 * looked at. */
static inline uint64_t zero_lanes(uint64_t x, uint64_t ones, uint64_t highs)
{
    return (x - ones) & ~x & highs;
}

/* ---- semi-sorted buckets (see the top of the file) ----------------------------------- */

/* The sorted prefix sequences by code, each prefix in the top 4 bits of its
 * 16-bit lane. */
static uint64_t prefix_sequences[SEMI_SORT_CODES];
static pthread_once_t prefix_sequences_once = PTHREAD_ONCE_INIT;

static void list_prefix_sequences(void)
{
    unsigned code = 0;
    for (uint64_t d = 0; d < 16; d++)
        for (uint64_t c = 0; c <= d; c++)
            for (uint64_t b = 0; b <= c; b++)
                for (uint64_t a = 0; a <= b; a++)
                    prefix_sequences[code++] = a << 12 | b << 28 | c << 44 | d << 60;
    assert(code == SEMI_SORT_CODES);
}

/* The code of the sorted prefixes a <= b <= c <= d. */
static inline uint32_t prefix_code(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    return a + (b + 1) * b / 2 + (c + 2) * (c + 1) * c / 6 + (d + 3) * (d + 2) * (d + 1) * d / 24;
}

static inline uint64_t bucket_bit(const amq_cuckoo *f, uint64_t bucket)
{
    return bucket * f->bucket_bits;
}

/* A fingerprint in every 16-bit lane. */
static inline uint64_t wide_lanes(const amq_cuckoo *f, uint32_t fingerprint)
{
    return ((uint64_t)(fingerprint >> f->suffix_bits) << 12 | (fingerprint & f->suffix_mask)) *
           WIDE_LANE_ONES;
}

/* A semi-sorted bucket's suffixes, slot 0's in the low f - 4 bits (the
 * bits above the four are not defined), and its prefix code in *code. */
static inline uint64_t semi_sorted_read(const amq_cuckoo *f, const cuckoo_table *t, uint64_t bucket,
                                        uint64_t *code)
{
    uint64_t bit = bucket_bit(f, bucket);
    uint64_t window = amq__packed_window(t->slots, bit);
    *code = window & SEMI_SORT_CODE_MASK;
    return f->bucket_bits <= 57 ? window >> SEMI_SORT_CODE_BITS
                                : amq__packed_window(t->slots, bit + SEMI_SORT_CODE_BITS);
}

/* The suffixes of a bucket, each moved to the low bits of its 16-bit lane. */
static inline uint64_t spread_suffixes(const amq_cuckoo *f, uint64_t suffixes)
{
    unsigned w = f->suffix_bits;
    return (suffixes & f->suffix_mask) | (suffixes >> w & f->suffix_mask) << WIDE_LANE_BITS |
           (suffixes >> 2 * w & f->suffix_mask) << 2 * WIDE_LANE_BITS |
           (suffixes >> 3 * w & f->suffix_mask) << 3 * WIDE_LANE_BITS;
}

/* A semi-sorted bucket in 16-bit lanes, from its code and suffixes as
 * semi_sorted_read gives them: the prefixes from the table, the suffixes
 * spread out beneath them. */
static inline uint64_t semi_sorted_lanes(const amq_cuckoo *f, uint64_t code, uint64_t suffixes)
{
    return prefix_sequences[code] | spread_suffixes(f, suffixes);
}

/* Non-zero iff some 16-bit lane of lanes equals that of target (whose
 * lanes are all alike). */
static inline uint64_t wide_lanes_match(uint64_t lanes, uint64_t target)
{
    return zero_lanes(lanes ^ target, WIDE_LANE_ONES, WIDE_LANE_HIGHS);
}

/* Non-zero iff one of the four (f - 4)-bit suffixes in suffixes (as
 * semi_sorted_read gives them) equals that of target, which is a suffix in
 * every one of the four lanes. */
static inline uint64_t suffixes_match(const amq_cuckoo *f, uint64_t suffixes, uint64_t target)
{
    return zero_lanes(suffixes ^ target, f->suffix_ones, f->suffix_highs);
}

#if CUCKOO_HAVE_BMI2
/* Whether bucket 1 or 2, given by their prefix codes and suffixes, holds
 * the fingerprint whose wide_lanes are target: the suffixes spread into
 * their lanes by one pdep each. */
__attribute__((target("bmi2"))) static bool
semi_sorted_pair_matches_bmi2(const amq_cuckoo *f, uint64_t code1, uint64_t suffixes1,
                              uint64_t code2, uint64_t suffixes2, uint64_t target)
{
    uint64_t lanes1 = prefix_sequences[code1] | _pdep_u64(suffixes1, f->suffix_lanes);
    uint64_t lanes2 = prefix_sequences[code2] | _pdep_u64(suffixes2, f->suffix_lanes);
    return (wide_lanes_match(lanes1, target) | wide_lanes_match(lanes2, target)) != 0;
}
#endif

/* Whether semi-sorted bucket i1 or i2 holds fingerprint. The suffixes are
 * compared first, where they lie, which needs neither the prefix table nor
 * the spreading: an absent key's suffix is in neither bucket with chance
 * about 1 - 8 / 2^(f - 4) (97% for f = 12), and that answers it. Only when
 * a suffix matches are the whole fingerprints compared. */
static inline bool semi_sorted_pair_holds(const amq_cuckoo *f, const cuckoo_table *t, uint64_t i1,
                                          uint64_t i2, uint32_t fingerprint)
{
    uint64_t code1, code2;
    uint64_t suffixes1 = semi_sorted_read(f, t, i1, &code1);
    uint64_t suffixes2 = semi_sorted_read(f, t, i2, &code2);
    uint64_t suffix = (fingerprint & f->suffix_mask) * f->suffix_ones;
    if (!(suffixes_match(f, suffixes1, suffix) | suffixes_match(f, suffixes2, suffix)))
        return false;
    uint64_t target = wide_lanes(f, fingerprint);
#if CUCKOO_HAVE_BMI2
    if (f->use_bmi2)
        return semi_sorted_pair_matches_bmi2(f, code1, suffixes1, code2, suffixes2, target);
#endif
    return (wide_lanes_match(semi_sorted_lanes(f, code1, suffixes1), target) |
            wide_lanes_match(semi_sorted_lanes(f, code2, suffixes2), target)) != 0;
}

/* A semi-sorted bucket, given by its code and suffixes, decoded into four
 * f-bit lanes, as a plain bucket word. */
static inline uint64_t semi_sorted_word(const amq_cuckoo *f, uint64_t code, uint64_t suffixes)
{
    uint64_t lanes = semi_sorted_lanes(f, code, suffixes), word = 0;
    for (uint32_t slot = 0; slot < SEMI_SORT_SLOTS; slot++) {
        uint64_t lane = lanes >> (WIDE_LANE_BITS * slot);
        uint64_t fingerprint = (lane >> 12 & 15) << f->suffix_bits | (lane & f->suffix_mask);
        word |= fingerprint << (f->fingerprint_bits * slot);
    }
    return word;
}

static inline void order(uint32_t *low, uint32_t *high)
{
    uint32_t a = *low, b = *high;
    *low = a < b ? a : b;
    *high = a < b ? b : a;
}

/* Store four f-bit lanes as a semi-sorted bucket. */
static void semi_sorted_store(const amq_cuckoo *f, cuckoo_table *t, uint64_t bucket, uint64_t word)
{
    uint32_t fingerprints[SEMI_SORT_SLOTS];
    for (uint32_t slot = 0; slot < SEMI_SORT_SLOTS; slot++)
        fingerprints[slot] =
            (uint32_t)(word >> (f->fingerprint_bits * slot)) & f->fingerprint_range;
    order(&fingerprints[0], &fingerprints[1]);
    order(&fingerprints[2], &fingerprints[3]);
    order(&fingerprints[0], &fingerprints[2]);
    order(&fingerprints[1], &fingerprints[3]);
    order(&fingerprints[1], &fingerprints[2]);
    uint32_t prefix[SEMI_SORT_SLOTS];
    uint64_t suffixes = 0;
    uint32_t suffix_mask = ((uint32_t)1 << f->suffix_bits) - 1;
    for (uint32_t slot = 0; slot < SEMI_SORT_SLOTS; slot++) {
        prefix[slot] = fingerprints[slot] >> f->suffix_bits;
        suffixes |= (uint64_t)(fingerprints[slot] & suffix_mask) << (f->suffix_bits * slot);
    }
    uint64_t bit = bucket_bit(f, bucket);
    uint64_t code = prefix_code(prefix[0], prefix[1], prefix[2], prefix[3]);
    if (f->bucket_bits <= 57) {
        amq__packed_set(t->slots, bit, f->bucket_bits, code | suffixes << SEMI_SORT_CODE_BITS);
        return;
    }
    amq__packed_set(t->slots, bit, SEMI_SORT_CODE_BITS, code);
    amq__packed_set(t->slots, bit + SEMI_SORT_CODE_BITS, SEMI_SORT_SLOTS * f->suffix_bits,
                    suffixes);
}

/* ---- slots ------------------------------------------------------------------------ */

static inline uint64_t slot_bit(const amq_cuckoo *f, uint64_t bucket, uint32_t slot)
{
    return bucket_bit(f, bucket) + slot * f->fingerprint_bits;
}

/* The bucket's b lanes of f bits, when bucket_in_word. */
static inline uint64_t bucket_word(const amq_cuckoo *f, const cuckoo_table *t, uint64_t bucket)
{
    if (f->semi_sorted) {
        uint64_t code;
        uint64_t suffixes = semi_sorted_read(f, t, bucket, &code);
        return semi_sorted_word(f, code, suffixes);
    }
    return amq__packed_window(t->slots, bucket_bit(f, bucket)) & f->bucket_mask;
}

static inline uint32_t slot_get(const amq_cuckoo *f, const cuckoo_table *t, uint64_t bucket,
                                uint32_t slot)
{
    if (f->semi_sorted)
        return (uint32_t)(bucket_word(f, t, bucket) >> (slot * f->fingerprint_bits)) &
               f->fingerprint_range;
    return (uint32_t)amq__packed_get(t->slots, slot_bit(f, bucket, slot), f->fingerprint_bits);
}

/* Store value in a slot. A semi-sorted bucket is sorted again, which may
 * move its other fingerprints to other slots. */
static inline void slot_set(const amq_cuckoo *f, cuckoo_table *t, uint64_t bucket, uint32_t slot,
                            uint32_t value)
{
    if (f->semi_sorted) {
        unsigned shift = slot * f->fingerprint_bits;
        uint64_t word = bucket_word(f, t, bucket) & ~((uint64_t)f->fingerprint_range << shift);
        semi_sorted_store(f, t, bucket, word | (uint64_t)value << shift);
        return;
    }
    amq__packed_set(t->slots, slot_bit(f, bucket, slot), f->fingerprint_bits, value);
}

/* For a bucket word: non-zero iff some lane holds value, and then its
 * lowest set bit is bit f - 1 of the first such lane. Bits of word above
 * the b lanes may be anything (zero_lanes does not look at them). */
static inline uint64_t lanes_equal(const amq_cuckoo *f, uint64_t word, uint32_t value)
{
    return zero_lanes(word ^ (value * f->lane_ones), f->lane_ones, f->lane_highs);
}

/* The first slot of the bucket holding value (0: the first free slot), or
 * -1 if none does. */
static inline int bucket_find(const amq_cuckoo *f, const cuckoo_table *t, uint64_t bucket,
                              uint32_t value)
{
    if (f->bucket_in_word) {
        uint64_t lanes = lanes_equal(f, bucket_word(f, t, bucket), value);
        return lanes ? (int)(((unsigned)__builtin_ctzll(lanes) * f->slot_reciprocal) >> 16) : -1;
    }
    for (uint32_t slot = 0; slot < f->bucket_size; slot++)
        if (slot_get(f, t, bucket, slot) == value)
            return (int)slot;
    return -1;
}

static uint32_t bucket_count(const amq_cuckoo *f, const cuckoo_table *t, uint64_t bucket,
                             uint32_t fingerprint)
{
    uint32_t copies = 0;
    for (uint32_t slot = 0; slot < f->bucket_size; slot++)
        copies += slot_get(f, t, bucket, slot) == fingerprint;
    return copies;
}

/* Put fingerprint in a free slot of a plain bucket that fits a word;
 * false if it has none. One load and one store: the first free lane's top
 * bit, bit f - 1 of it, is the lowest one lanes_equal sets, and the lane is
 * all zero, so the fingerprint is or-ed into place. */
static inline bool plain_put(const amq_cuckoo *f, cuckoo_table *t, uint64_t bucket,
                             uint32_t fingerprint)
{
    uint64_t bit = bucket_bit(f, bucket);
    uint8_t *at = t->slots + (bit >> 3);
    unsigned shift = (unsigned)(bit & 7);
    uint64_t word = amq__load_u64le(at);
    uint64_t free_lanes = lanes_equal(f, word >> shift, 0);
    if (!free_lanes)
        return false;
    unsigned lane_start = (unsigned)__builtin_ctzll(free_lanes) - (f->fingerprint_bits - 1);
    amq__store_u64le(at, word | (uint64_t)fingerprint << (shift + lane_start));
    return true;
}

/* Put fingerprint in a free slot of the bucket; false if it has none. */
static inline bool bucket_put(const amq_cuckoo *f, cuckoo_table *t, uint64_t bucket,
                              uint32_t fingerprint)
{
    if (f->semi_sorted) {
        /* Empty slots hold 0 and sort first: a bucket with room has it in
         * slot 0, whose prefix is the lowest in the code's sequence and
         * whose suffix comes first. A full bucket is told by those alone;
         * one with room is decoded once and encoded once. */
        uint64_t code;
        uint64_t suffixes = semi_sorted_read(f, t, bucket, &code);
        if ((prefix_sequences[code] & 0xffff) | (suffixes & f->suffix_mask))
            return false;
        semi_sorted_store(f, t, bucket, semi_sorted_word(f, code, suffixes) | fingerprint);
        return true;
    }
    if (!f->bucket_in_word) {
        int slot = bucket_find(f, t, bucket, 0);
        if (slot < 0)
            return false;
        slot_set(f, t, bucket, (uint32_t)slot, fingerprint);
        return true;
    }
    return plain_put(f, t, bucket, fingerprint);
}

static bool stash_holds(const cuckoo_table *t, uint32_t fingerprint, uint64_t i1, uint64_t i2)
{
    return t->stash_fingerprint == fingerprint && (t->stash_bucket == i1 || t->stash_bucket == i2);
}

/* The walk's next random number: the splitmix64 sequence. */
static uint64_t next_random(amq_cuckoo *f)
{
    return amq__mix64(f->random_state += 0x9E3779B97F4A7C15ULL);
}

/* ---- one table ------------------------------------------------------------------ */

/* Where a bucket's first byte is, to prefetch. */
static inline const uint8_t *bucket_start(const amq_cuckoo *f, const cuckoo_table *t,
                                          uint64_t bucket)
{
    return t->slots + (bucket_bit(f, bucket) >> 3);
}

/* The 64 bits from the start of a plain bucket on: where buckets are whole
 * bytes (b f a multiple of 8, as for b = 4 and even f), read from its first
 * byte with no shift. */
static inline uint64_t plain_window(const amq_cuckoo *f, const cuckoo_table *t, uint64_t bucket)
{
    if (f->bucket_bits % 8 == 0)
        return amq__load_u64le(t->slots + bucket * (f->bucket_bits / 8));
    return amq__packed_window(t->slots, bucket_bit(f, bucket));
}

/* Whether table t's buckets are plain and each fit a word, and its
 * alternate needs no shift: the shape of nearly every filter's first table.
 * The insert below is written once with a parameter plain, and compiled
 * twice: with plain true for this shape, each helper then reduced to its
 * plain case with no test of the shape left in it, and with plain false
 * for any table. Both place every fingerprint in the same slot. */
static inline bool plain_shape(const amq_cuckoo *f, const cuckoo_table *t)
{
    return !f->semi_sorted && f->bucket_in_word && t->shift == 0;
}

static AMQ__ALWAYS_INLINE uint64_t shaped_alternate(const amq_cuckoo *f, const cuckoo_table *t,
                                                    uint64_t bucket, uint32_t fingerprint,
                                                    bool plain)
{
    return plain ? first_alternate(bucket, fingerprint, f->base_buckets)
                 : alternate(f, t, bucket, fingerprint);
}

static AMQ__ALWAYS_INLINE bool shaped_put(const amq_cuckoo *f, cuckoo_table *t, uint64_t bucket,
                                          uint32_t fingerprint, bool plain)
{
    return plain ? plain_put(f, t, bucket, fingerprint) : bucket_put(f, t, bucket, fingerprint);
}

static AMQ__ALWAYS_INLINE void shaped_slot_set(const amq_cuckoo *f, cuckoo_table *t,
                                               uint64_t bucket, uint32_t slot, uint32_t value,
                                               bool plain)
{
    if (plain)
        amq__packed_set(t->slots, slot_bit(f, bucket, slot), f->fingerprint_bits, value);
    else
        slot_set(f, t, bucket, slot, value);
}

/* The rest of the insert, for a fingerprint (counted in t->stored already)
 * whose buckets, bucket and other, are both full: the random walk, and
 * finally the stash. Each step looks one move ahead first: if a resident
 * of the full bucket has a free slot in its alternate, it moves there and
 * the fingerprint takes its place. Otherwise a random resident is kicked
 * out for the fingerprint and carried to its alternate, which the look
 * ahead has just found full, and the step repeats from there. */
static AMQ__ALWAYS_INLINE void shaped_walk(amq_cuckoo *f, cuckoo_table *t, uint32_t fingerprint,
                                           uint64_t bucket, uint64_t other, bool plain)
{
    const bool in_word = plain || f->bucket_in_word;
    uint64_t random = next_random(f);
    uint64_t current = random & 1 ? other : bucket;
    for (uint32_t kick = 0; kick < f->max_kicks; kick++) {
        /* A bucket that fits a word is read once, not once per slot (a
         * semi-sorted one would be decoded four times). */
        uint64_t word = plain     ? plain_window(f, t, current)
                        : in_word ? bucket_word(f, t, current)
                                  : 0;
        uint32_t residents[MAX_BUCKET_SIZE];
        uint64_t alternates[MAX_BUCKET_SIZE];
        for (uint32_t slot = 0; slot < f->bucket_size; slot++) {
            residents[slot] =
                in_word ? (uint32_t)(word >> (slot * f->fingerprint_bits)) & f->fingerprint_range
                        : slot_get(f, t, current, slot);
            alternates[slot] = shaped_alternate(f, t, current, residents[slot], plain);
            __builtin_prefetch(bucket_start(f, t, alternates[slot]), 1);
        }
        for (uint32_t slot = 0; slot < f->bucket_size; slot++) {
            if (shaped_put(f, t, alternates[slot], residents[slot], plain)) {
                shaped_slot_set(f, t, current, slot, fingerprint, plain);
                return;
            }
        }
        if (kick % 16 == 0)
            random = next_random(f);
        uint32_t victim = (uint32_t)(random >> (4 * (kick % 16))) & (f->bucket_size - 1);
        shaped_slot_set(f, t, current, victim, fingerprint, plain);
        fingerprint = residents[victim];
        current = alternates[victim];
    }
    t->stash_fingerprint = fingerprint;
    t->stash_bucket = current;
}

/* The walks, out of line: most inserts never get here. */
static AMQ__NOINLINE void plain_walk(amq_cuckoo *f, cuckoo_table *t, uint32_t fingerprint,
                                     uint64_t bucket, uint64_t other)
{
    shaped_walk(f, t, fingerprint, bucket, other, true);
}

static AMQ__NOINLINE void any_shape_walk(amq_cuckoo *f, cuckoo_table *t, uint32_t fingerprint,
                                         uint64_t bucket, uint64_t other)
{
    shaped_walk(f, t, fingerprint, bucket, other, false);
}

/* Store fingerprint, which belongs in bucket or its alternate, in a table
 * whose stash is empty: in a free slot, by the random walk, or finally in
 * the stash. */
static AMQ__ALWAYS_INLINE void shaped_insert(amq_cuckoo *f, cuckoo_table *t, uint32_t fingerprint,
                                             uint64_t bucket, bool plain)
{
    uint64_t other = shaped_alternate(f, t, bucket, fingerprint, plain);
    __builtin_prefetch(bucket_start(f, t, other), 1);
    t->stored++;
    if (shaped_put(f, t, bucket, fingerprint, plain) || shaped_put(f, t, other, fingerprint, plain))
        return;
    if (plain)
        plain_walk(f, t, fingerprint, bucket, other);
    else
        any_shape_walk(f, t, fingerprint, bucket, other);
}

static AMQ__NOINLINE void any_shape_insert(amq_cuckoo *f, cuckoo_table *t, uint32_t fingerprint,
                                           uint64_t bucket)
{
    shaped_insert(f, t, fingerprint, bucket, false);
}

static inline void table_insert(amq_cuckoo *f, cuckoo_table *t, uint32_t fingerprint,
                                uint64_t bucket)
{
    if (AMQ__LIKELY(plain_shape(f, t)))
        shaped_insert(f, t, fingerprint, bucket, true);
    else
        any_shape_insert(f, t, fingerprint, bucket);
}

/* Whether plain buckets i1 or i2, each fitting a word, hold fingerprint:
 * lanes_equal on the two words as they are read. */
static inline bool plain_pair_holds(const amq_cuckoo *f, const cuckoo_table *t, uint64_t i1,
                                    uint64_t i2, uint32_t fingerprint)
{
    return (lanes_equal(f, plain_window(f, t, i1), fingerprint) |
            lanes_equal(f, plain_window(f, t, i2), fingerprint)) != 0;
}

/* Whether the filter is one table of plain buckets that each fit a 64-bit
 * word: the shape lookups take plain_contains for. */
static inline bool plain_single_table(const amq_cuckoo *filter)
{
    return filter->table_count == 1 && plain_shape(filter, &filter->tables[0]);
}

/* Whether buckets i1 and i2 of table t (a key's two), or the stash for
 * them, hold fingerprint, in a bucket of any shape. */
static inline bool table_holds(const amq_cuckoo *f, const cuckoo_table *t, uint64_t i1, uint64_t i2,
                               uint32_t fingerprint)
{
    if (f->semi_sorted) {
        if (semi_sorted_pair_holds(f, t, i1, i2, fingerprint))
            return true;
    } else if (AMQ__LIKELY(f->bucket_in_word)) {
        if (plain_pair_holds(f, t, i1, i2, fingerprint))
            return true;
    } else if (bucket_find(f, t, i1, fingerprint) >= 0 || bucket_find(f, t, i2, fingerprint) >= 0) {
        return true;
    }
    return stash_holds(t, fingerprint, i1, i2);
}

static inline bool table_contains(const amq_cuckoo *f, const cuckoo_table *t, uint64_t hash,
                                  uint32_t fingerprint)
{
    uint64_t i1 = index_of(hash, t->buckets);
    return table_holds(f, t, i1, alternate(f, t, i1, fingerprint), fingerprint);
}

/* Empty the stash into the table again (a slot was just freed). */
static void table_unstash(amq_cuckoo *f, cuckoo_table *t)
{
    uint32_t fingerprint = t->stash_fingerprint;
    if (!fingerprint)
        return;
    t->stash_fingerprint = 0;
    t->stored--;
    table_insert(f, t, fingerprint, t->stash_bucket);
    if (!t->stash_fingerprint)
        t->stash_bucket = 0;
}

static bool table_remove(amq_cuckoo *f, cuckoo_table *t, uint64_t hash, uint32_t fingerprint)
{
    uint64_t i1 = index_of(hash, t->buckets);
    uint64_t i2 = alternate(f, t, i1, fingerprint);
    uint64_t bucket = i1;
    int slot = bucket_find(f, t, i1, fingerprint);
    if (slot < 0) {
        bucket = i2;
        slot = bucket_find(f, t, i2, fingerprint);
    }
    if (slot >= 0) {
        slot_set(f, t, bucket, (uint32_t)slot, 0);
        t->stored--;
        table_unstash(f, t);
        return true;
    }
    if (stash_holds(t, fingerprint, i1, i2)) {
        t->stash_fingerprint = 0;
        t->stash_bucket = 0;
        t->stored--;
        return true;
    }
    return false;
}

static uint64_t table_count(const amq_cuckoo *f, const cuckoo_table *t, uint64_t hash,
                            uint32_t fingerprint)
{
    uint64_t i1 = index_of(hash, t->buckets);
    uint64_t i2 = alternate(f, t, i1, fingerprint);
    uint64_t copies = bucket_count(f, t, i1, fingerprint);
    if (i2 != i1)
        copies += bucket_count(f, t, i2, fingerprint);
    return copies + stash_holds(t, fingerprint, i1, i2);
}

/* Allocate the next table, base_buckets << shift buckets, zeroed. */
static int table_open(amq_cuckoo *f, unsigned shift)
{
    cuckoo_table *t = &f->tables[f->table_count];
    uint64_t buckets = f->base_buckets << shift;
    uint64_t bytes = table_bytes(f, buckets) + AMQ__PACKED_PADDING;
    if (bytes > SIZE_MAX)
        return AMQ_ENOMEM;
    t->slots = amq__alloc_table(bytes, true);
    if (!t->slots)
        return AMQ_ENOMEM;
    t->buckets = buckets;
    t->shift = shift;
    t->stored = 0;
    t->stash_fingerprint = 0;
    t->stash_bucket = 0;
    f->table_count++;
    return AMQ_OK;
}

static unsigned growth_shift(uint32_t growth)
{
    return (unsigned)__builtin_ctz(growth);
}

/* Chain a new table after a full newest one: AMQ_EFULL when the filter may
 * not grow, has AMQ_CUCKOO_MAX_TABLES tables, or the next one would exceed
 * AMQ_CUCKOO_MAX_BUCKETS. */
static int grow(amq_cuckoo *f)
{
    if (f->growth == 0 || f->table_count == AMQ_CUCKOO_MAX_TABLES)
        return AMQ_EFULL;
    unsigned shift = f->tables[f->table_count - 1].shift + growth_shift(f->growth);
    if (shift >= 32 || (f->base_buckets << shift) > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_EFULL;
    return table_open(f, shift);
}

static bool growth_valid(uint32_t growth)
{
    return growth <= AMQ_CUCKOO_MAX_GROWTH && (growth & (growth - 1)) == 0;
}

/* ---- the filter ---------------------------------------------------------------- */

static int cuckoo_new(amq_cuckoo **out, const amq_cuckoo_params *params, amq_diag *diag)
{
    *out = NULL;
    if (!params)
        return amq__fail(diag, AMQ_EINVAL, "no parameters");
    if (params->capacity == 0)
        return amq__fail(diag, AMQ_EINVAL, "cuckoo needs a capacity of at least 1 key (n=...)");
    uint32_t bucket_size = params->bucket_size ? params->bucket_size : 4;
    if (!bucket_size_valid(bucket_size))
        return amq__fail(diag, AMQ_EINVAL, "cuckoo bucket size %u is not 2, 4 or 8",
                         params->bucket_size);
    double fpr = params->fpr == 0 ? 0.01 : params->fpr;
    if (!(fpr > 0 && fpr < 1))
        return amq__fail(diag, AMQ_EINVAL, "cuckoo fpr %g is not in (0, 1)", params->fpr);
    uint32_t fingerprint_bits = params->fingerprint_bits;
    if (fingerprint_bits == 0) {
        fingerprint_bits = fingerprint_bits_for(fpr, bucket_size);
        if (fingerprint_bits == 0)
            return amq__fail(diag, AMQ_ERANGE,
                             "cuckoo fpr %g needs fingerprints longer than %d bits", fpr,
                             AMQ_CUCKOO_MAX_FINGERPRINT_BITS);
    } else if (fingerprint_bits < AMQ_CUCKOO_MIN_FINGERPRINT_BITS ||
               fingerprint_bits > AMQ_CUCKOO_MAX_FINGERPRINT_BITS) {
        return amq__fail(diag, AMQ_EINVAL, "cuckoo fingerprint bits %u is not in %d..%d",
                         fingerprint_bits, AMQ_CUCKOO_MIN_FINGERPRINT_BITS,
                         AMQ_CUCKOO_MAX_FINGERPRINT_BITS);
    }
    if (params->semi_sort) {
        if (bucket_size != SEMI_SORT_SLOTS)
            return amq__fail(diag, AMQ_EINVAL, "cuckoo semi-sort needs a bucket size of 4, not %u",
                             bucket_size);
        if (params->fingerprint_bits == 0 &&
            fingerprint_bits < AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS)
            fingerprint_bits = AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS;
        if (!semi_sort_valid(fingerprint_bits, bucket_size))
            return amq__fail(diag, AMQ_EINVAL,
                             "cuckoo semi-sort needs fingerprint bits in %d..%d, not %u",
                             AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS,
                             AMQ_CUCKOO_SEMI_SORT_MAX_FINGERPRINT_BITS, fingerprint_bits);
        pthread_once(&prefix_sequences_once, list_prefix_sequences);
    }
    double full_fpr = 2.0 * bucket_size / (double)(((uint64_t)1 << fingerprint_bits) - 1);
    if (params->fingerprint_bits && params->fpr != 0 && full_fpr > fpr)
        return amq__fail(diag, AMQ_EINVAL,
                         "cuckoo fingerprint bits %u give an FPR up to %.3g, above fpr %g",
                         fingerprint_bits, full_fpr, fpr);
    if (params->max_kicks > AMQ_CUCKOO_MAX_KICKS)
        return amq__fail(diag, AMQ_EINVAL, "cuckoo max kicks %u is above %d", params->max_kicks,
                         AMQ_CUCKOO_MAX_KICKS);
    if (!growth_valid(params->growth))
        return amq__fail(diag, AMQ_EINVAL, "cuckoo growth %u is not 0, 1, 2, 4, 8 or 16",
                         params->growth);
    uint64_t buckets = buckets_for(params->capacity, bucket_size);
    if (buckets == 0)
        return amq__fail(diag, AMQ_ERANGE,
                         "cuckoo capacity %llu needs more than 2^32 buckets of %u slots",
                         (unsigned long long)params->capacity, bucket_size);
    amq_cuckoo *f = calloc(1, sizeof *f);
    if (!f)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    int status = amq__hasher_resolve(&f->hasher, &params->hasher, diag);
    if (status != AMQ_OK) {
        free(f);
        return status;
    }
    set_shape(f, fingerprint_bits, bucket_size, params->semi_sort);
    f->max_kicks = params->max_kicks ? params->max_kicks : AMQ_CUCKOO_DEFAULT_MAX_KICKS;
    f->growth = params->growth;
    f->capacity = params->capacity;
    f->target_fpr = params->fingerprint_bits && params->fpr == 0 ? full_fpr : fpr;
    f->random_state = amq__load_u64le(f->hasher.key) ^ params->capacity;
    uint64_t bytes = table_bytes(f, buckets);
    f->base_buckets = buckets;
    status = table_open(f, 0);
    if (status != AMQ_OK) {
        free(f);
        return amq__fail(diag, status, "cannot allocate %llu bytes for the cuckoo table",
                         (unsigned long long)bytes);
    }
    *out = f;
    return AMQ_OK;
}

void amq_cuckoo_params_init(amq_cuckoo_params *params)
{
    assert(params);
    memset(params, 0, sizeof *params);
    amq_hasher_xxh3(&params->hasher, 0);
}

int amq_cuckoo_new(amq_cuckoo **out, const amq_cuckoo_params *params, amq_diag *diag)
{
    assert(out);
    return cuckoo_new(out, params, diag);
}

void amq_cuckoo_free(amq_cuckoo *filter)
{
    if (!filter)
        return;
    for (size_t i = 0; i < filter->table_count; i++)
        free(filter->tables[i].slots);
    free(filter);
}

void amq_cuckoo_clear(amq_cuckoo *filter)
{
    for (size_t i = 1; i < filter->table_count; i++)
        free(filter->tables[i].slots);
    filter->table_count = 1;
    cuckoo_table *t = &filter->tables[0];
    memset(t->slots, 0, (size_t)table_bytes(filter, t->buckets));
    t->stored = 0;
    t->stash_fingerprint = 0;
    t->stash_bucket = 0;
}

int amq_cuckoo_add_hash(amq_cuckoo *filter, uint64_t hash)
{
    cuckoo_table *t = &filter->tables[filter->table_count - 1];
    if (t->stash_fingerprint) {
        int status = grow(filter);
        if (status != AMQ_OK)
            return status;
        t++;
    }
    table_insert(filter, t, fingerprint_of(filter, hash), index_of(hash, t->buckets));
    return AMQ_OK;
}

int amq_cuckoo_add(amq_cuckoo *filter, const void *key, size_t len)
{
    return amq_cuckoo_add_hash(filter, amq__hash64(&filter->hasher, key, len));
}

int amq_cuckoo_add_unique_hash(amq_cuckoo *filter, uint64_t hash)
{
    if (amq_cuckoo_contains_hash(filter, hash))
        return 0;
    int status = amq_cuckoo_add_hash(filter, hash);
    return status == AMQ_OK ? 1 : status;
}

int amq_cuckoo_add_unique(amq_cuckoo *filter, const void *key, size_t len)
{
    return amq_cuckoo_add_unique_hash(filter, amq__hash64(&filter->hasher, key, len));
}

/* table_contains for a filter of plain_single_table's shape, with nothing
 * else around it: the first table's alternate bucket needs no shift. */
static inline bool plain_contains(const amq_cuckoo *f, uint64_t hash)
{
    const cuckoo_table *t = &f->tables[0];
    uint32_t fingerprint = fingerprint_of(f, hash);
    uint64_t i1 = index_of(hash, t->buckets);
    uint64_t i2 = first_alternate(i1, fingerprint, t->buckets);
    return plain_pair_holds(f, t, i1, i2, fingerprint) || stash_holds(t, fingerprint, i1, i2);
}

/* Any other shape: each table in turn. Kept out of line, so that the
 * common case does not pay for its registers. */
static AMQ__NOINLINE bool contains_any_table(const amq_cuckoo *filter, uint64_t hash)
{
    uint32_t fingerprint = fingerprint_of(filter, hash);
    for (size_t i = 0; i < filter->table_count; i++)
        if (table_contains(filter, &filter->tables[i], hash, fingerprint))
            return true;
    return false;
}

static inline bool contains_hash(const amq_cuckoo *filter, uint64_t hash)
{
    if (AMQ__LIKELY(plain_single_table(filter)))
        return plain_contains(filter, hash);
    return contains_any_table(filter, hash);
}

bool amq_cuckoo_contains_hash(const amq_cuckoo *filter, uint64_t hash)
{
    return contains_hash(filter, hash);
}

bool amq_cuckoo_contains(const amq_cuckoo *filter, const void *key, size_t len)
{
    return contains_hash(filter, amq__hash64(&filter->hasher, key, len));
}

/* What the batch query of a filter of plain_single_table's shape reads,
 * copied out of the filter: results is a byte array, and every store to it
 * could otherwise change the filter's fields as far as the compiler knows,
 * so they would be loaded again after each key. Where a bucket starts is
 * counted in bytes (bucket_bits a multiple of 8) or else in bits; the
 * stash is compared by where its bucket starts, which tells buckets apart
 * as well as their numbers do. */
typedef struct plain_batch {
    const uint8_t *slots;
    uint64_t buckets;
    uint64_t bucket_step; /* bucket_bits / 8 when byte_aligned, else bucket_bits */
    uint64_t lane_ones, lane_highs;
    uint64_t fingerprint_range;
    uint64_t stash_start;
    uint32_t stash_fingerprint;
    bool byte_aligned;
} plain_batch;

/* Where a key's two buckets start, and its fingerprint. */
static AMQ__ALWAYS_INLINE void plain_batch_locate(const plain_batch *view, uint64_t hash,
                                                  uint64_t *first, uint64_t *second,
                                                  uint32_t *fingerprint)
{
    uint32_t fp = fingerprint_in(hash, view->fingerprint_range);
    uint64_t i1 = index_of(hash, view->buckets);
    *first = i1 * view->bucket_step;
    *second = first_alternate(i1, fp, view->buckets) * view->bucket_step;
    *fingerprint = fp;
}

/* The bucket word that starts at start. */
static AMQ__ALWAYS_INLINE uint64_t plain_batch_word(const plain_batch *view, uint64_t start)
{
    return view->byte_aligned ? amq__load_u64le(view->slots + start)
                              : amq__packed_window(view->slots, start);
}

/* Whether the buckets that start at first and second, or the stash for
 * them, hold fingerprint. */
static AMQ__ALWAYS_INLINE bool plain_batch_holds(const plain_batch *view, uint64_t first,
                                                 uint64_t second, uint32_t fingerprint)
{
    uint64_t lanes = fingerprint * view->lane_ones;
    uint64_t matches =
        zero_lanes(plain_batch_word(view, first) ^ lanes, view->lane_ones, view->lane_highs) |
        zero_lanes(plain_batch_word(view, second) ^ lanes, view->lane_ones, view->lane_highs);
    bool stashed = view->stash_fingerprint == fingerprint &&
                   (view->stash_start == first || view->stash_start == second);
    return (matches != 0) | stashed;
}

/* The batch query by 64-bit hashes of a filter of plain_single_table's
 * shape. With two_pass the hashes go in chunks of LOOKUP_CHUNK: the first
 * pass works out where each key's two buckets start and prefetches them,
 * the second reads and tests them, by then in the cache or on their way.
 * Without, each key is tested as it comes: for a table the cache holds,
 * the processor overlaps the reads of neighbouring keys by itself, and the
 * prefetches and the positions kept between the passes only cost. */
static AMQ__ALWAYS_INLINE void plain_batch_run(const plain_batch *view, const uint64_t *hashes,
                                               size_t count, uint8_t *results, bool two_pass)
{
    uint64_t first_starts[LOOKUP_CHUNK];
    uint64_t second_starts[LOOKUP_CHUNK];
    uint32_t fingerprints[LOOKUP_CHUNK];
    if (!two_pass) {
        for (size_t i = 0; i < count; i++) {
            uint64_t first, second;
            uint32_t fingerprint;
            plain_batch_locate(view, hashes[i], &first, &second, &fingerprint);
            results[i] = plain_batch_holds(view, first, second, fingerprint);
        }
        return;
    }
    for (size_t start = 0; start < count; start += LOOKUP_CHUNK) {
        size_t chunk = count - start < LOOKUP_CHUNK ? count - start : LOOKUP_CHUNK;
        for (size_t j = 0; j < chunk; j++) {
            plain_batch_locate(view, hashes[start + j], &first_starts[j], &second_starts[j],
                               &fingerprints[j]);
            uint64_t first = first_starts[j], second = second_starts[j];
            __builtin_prefetch(view->slots + (view->byte_aligned ? first : first >> 3));
            __builtin_prefetch(view->slots + (view->byte_aligned ? second : second >> 3));
        }
        for (size_t j = 0; j < chunk; j++)
            results[start + j] =
                plain_batch_holds(view, first_starts[j], second_starts[j], fingerprints[j]);
    }
}

/* The view of a filter of plain_single_table's shape; byte_aligned is
 * whether its buckets are whole bytes, passed as a constant so that the
 * copy of plain_batch_run it is inlined into reads them without a shift. */
static AMQ__ALWAYS_INLINE plain_batch plain_batch_of(const amq_cuckoo *f, bool byte_aligned)
{
    const cuckoo_table *t = &f->tables[0];
    uint64_t step = byte_aligned ? f->bucket_bits / 8 : f->bucket_bits;
    return (plain_batch){ .slots = t->slots,
                          .buckets = t->buckets,
                          .bucket_step = step,
                          .lane_ones = f->lane_ones,
                          .lane_highs = f->lane_highs,
                          .fingerprint_range = f->fingerprint_range,
                          .stash_start = t->stash_bucket * step,
                          .stash_fingerprint = t->stash_fingerprint,
                          .byte_aligned = byte_aligned };
}

/* plain_batch_run over the view with byte_aligned a constant, in two
 * passes for a table larger than PREFETCHED_TABLE_BYTES. */
static AMQ__ALWAYS_INLINE void plain_batch_aligned(const amq_cuckoo *f, const uint64_t *hashes,
                                                   size_t count, uint8_t *results,
                                                   bool byte_aligned)
{
    plain_batch view = plain_batch_of(f, byte_aligned);
    if (table_bytes(f, f->tables[0].buckets) > PREFETCHED_TABLE_BYTES)
        plain_batch_run(&view, hashes, count, results, true);
    else
        plain_batch_run(&view, hashes, count, results, false);
}

/* plain_batch_run in the form that suits the filter: byte offsets where
 * buckets are whole bytes, two passes for a large table. Each form is a
 * copy with its choices constant. */
static void plain_contains_many(const amq_cuckoo *f, const uint64_t *hashes, size_t count,
                                uint8_t *results)
{
    if (f->bucket_bits % 8 == 0)
        plain_batch_aligned(f, hashes, count, results, true);
    else
        plain_batch_aligned(f, hashes, count, results, false);
}

/* The batch query by hashes of any other filter. One table is asked a
 * chunk of LOOKUP_CHUNK keys at a time: their buckets are worked out
 * first, and prefetched when the table is larger than
 * PREFETCHED_TABLE_BYTES, then tested. A grown filter's keys are asked one
 * by one. */
static void other_contains_many(const amq_cuckoo *f, const uint64_t *hashes, size_t count,
                                uint8_t *results)
{
    if (f->table_count > 1) {
        for (size_t i = 0; i < count; i++)
            results[i] = contains_any_table(f, hashes[i]);
        return;
    }
    const cuckoo_table *t = &f->tables[0];
    bool prefetch = table_bytes(f, t->buckets) > PREFETCHED_TABLE_BYTES;
    uint64_t firsts[LOOKUP_CHUNK], seconds[LOOKUP_CHUNK];
    uint32_t fingerprints[LOOKUP_CHUNK];
    for (size_t start = 0; start < count; start += LOOKUP_CHUNK) {
        size_t chunk = count - start < LOOKUP_CHUNK ? count - start : LOOKUP_CHUNK;
        for (size_t j = 0; j < chunk; j++) {
            uint64_t hash = hashes[start + j];
            fingerprints[j] = fingerprint_of(f, hash);
            firsts[j] = index_of(hash, t->buckets);
            seconds[j] = alternate(f, t, firsts[j], fingerprints[j]);
            if (prefetch) {
                __builtin_prefetch(bucket_start(f, t, firsts[j]));
                __builtin_prefetch(bucket_start(f, t, seconds[j]));
            }
        }
        for (size_t j = 0; j < chunk; j++)
            results[start + j] = table_holds(f, t, firsts[j], seconds[j], fingerprints[j]);
    }
}

static void contains_many_of_hashes(const amq_cuckoo *filter, const uint64_t *hashes, size_t count,
                                    uint8_t *results)
{
    if (plain_single_table(filter))
        plain_contains_many(filter, hashes, count, results);
    else
        other_contains_many(filter, hashes, count, results);
}

void amq_cuckoo_contains_many(uint8_t *results, const amq_cuckoo *filter, const void *const *keys,
                              const size_t *lens, size_t count)
{
    uint64_t chunk_hashes[LOOKUP_CHUNK];
    for (size_t start = 0; start < count; start += LOOKUP_CHUNK) {
        size_t chunk = count - start < LOOKUP_CHUNK ? count - start : LOOKUP_CHUNK;
        for (size_t j = 0; j < chunk; j++)
            chunk_hashes[j] = amq__hash64(&filter->hasher, keys[start + j], lens[start + j]);
        contains_many_of_hashes(filter, chunk_hashes, chunk, results + start);
    }
}

void amq_cuckoo_contains_many_hash(uint8_t *results, const amq_cuckoo *filter,
                                   const uint64_t *hashes, size_t count)
{
    contains_many_of_hashes(filter, hashes, count, results);
}

int amq_cuckoo_remove_hash(amq_cuckoo *filter, uint64_t hash)
{
    uint32_t fingerprint = fingerprint_of(filter, hash);
    for (size_t i = filter->table_count; i-- > 0;)
        if (table_remove(filter, &filter->tables[i], hash, fingerprint))
            return AMQ_OK;
    return AMQ_ENOTFOUND;
}

int amq_cuckoo_remove(amq_cuckoo *filter, const void *key, size_t len)
{
    return amq_cuckoo_remove_hash(filter, amq__hash64(&filter->hasher, key, len));
}

uint64_t amq_cuckoo_count_hash(const amq_cuckoo *filter, uint64_t hash)
{
    uint32_t fingerprint = fingerprint_of(filter, hash);
    uint64_t copies = 0;
    for (size_t i = 0; i < filter->table_count; i++)
        copies += table_count(filter, &filter->tables[i], hash, fingerprint);
    return copies;
}

uint64_t amq_cuckoo_count(const amq_cuckoo *filter, const void *key, size_t len)
{
    return amq_cuckoo_count_hash(filter, amq__hash64(&filter->hasher, key, len));
}

/* ---- statistics ---------------------------------------------------------------- */

uint64_t amq_cuckoo_keys(const amq_cuckoo *filter)
{
    uint64_t stored = 0;
    for (size_t i = 0; i < filter->table_count; i++)
        stored += filter->tables[i].stored;
    return stored;
}

uint64_t amq_cuckoo_capacity(const amq_cuckoo *filter)
{
    return filter->capacity;
}

uint64_t amq_cuckoo_slots(const amq_cuckoo *filter)
{
    uint64_t slots = 0;
    for (size_t i = 0; i < filter->table_count; i++)
        slots += filter->tables[i].buckets * filter->bucket_size;
    return slots;
}

double amq_cuckoo_load(const amq_cuckoo *filter)
{
    return (double)amq_cuckoo_keys(filter) / (double)amq_cuckoo_slots(filter);
}

uint64_t amq_cuckoo_memory_bytes(const amq_cuckoo *filter)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < filter->table_count; i++)
        bytes += table_bytes(filter, filter->tables[i].buckets);
    return bytes;
}

uint32_t amq_cuckoo_fingerprint_bits(const amq_cuckoo *filter)
{
    return filter->fingerprint_bits;
}

uint32_t amq_cuckoo_bucket_size(const amq_cuckoo *filter)
{
    return filter->bucket_size;
}

uint32_t amq_cuckoo_max_kicks(const amq_cuckoo *filter)
{
    return filter->max_kicks;
}

uint32_t amq_cuckoo_growth(const amq_cuckoo *filter)
{
    return filter->growth;
}

bool amq_cuckoo_semi_sorted(const amq_cuckoo *filter)
{
    return filter->semi_sorted;
}

size_t amq_cuckoo_tables(const amq_cuckoo *filter)
{
    return filter->table_count;
}

uint64_t amq_cuckoo_table_buckets(const amq_cuckoo *filter, size_t i)
{
    return i < filter->table_count ? filter->tables[i].buckets : 0;
}

bool amq_cuckoo_full(const amq_cuckoo *filter)
{
    return filter->tables[filter->table_count - 1].stash_fingerprint != 0;
}

double amq_cuckoo_expected_fpr(const amq_cuckoo *filter)
{
    double miss_everywhere = 1;
    double per_fingerprint = log1p(-1.0 / filter->fingerprint_range);
    for (size_t i = 0; i < filter->table_count; i++) {
        const cuckoo_table *t = &filter->tables[i];
        double load = (double)t->stored / (double)(t->buckets * filter->bucket_size);
        miss_everywhere *= exp(2.0 * filter->bucket_size * load * per_fingerprint);
    }
    return 1 - miss_everywhere;
}

const amq_hasher *amq_cuckoo_hasher(const amq_cuckoo *filter)
{
    return &filter->hasher;
}

void amq__cuckoo_use_portable(amq_cuckoo *filter)
{
    filter->use_bmi2 = false;
}

bool amq__cuckoo_uses_bmi2(const amq_cuckoo *filter)
{
    return filter->use_bmi2;
}

/* ---- the generic handle's view ------------------------------------------------- */

static const amq__option option_fingerprint_bits = {
    .name = "fingerprint-bits",
    .type = AMQ__OPTION_COUNT,
    .count_min = AMQ_CUCKOO_MIN_FINGERPRINT_BITS,
    .count_max = AMQ_CUCKOO_MAX_FINGERPRINT_BITS,
};
static const char *const bucket_size_names[] = { "2", "4", "8", NULL };
static const uint32_t bucket_size_values[] = { 2, 4, 8 };
static const amq__option option_bucket_size = {
    .name = "bucket-size",
    .type = AMQ__OPTION_CHOICE,
    .choices = bucket_size_names,
};
static const amq__option option_max_kicks = {
    .name = "max-kicks",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = AMQ_CUCKOO_MAX_KICKS,
};
static const amq__option option_growth = {
    .name = "growth",
    .type = AMQ__OPTION_COUNT,
    .count_min = 0,
    .count_max = AMQ_CUCKOO_MAX_GROWTH,
};
static const amq__option option_semi_sort = {
    .name = "semi-sort",
    .type = AMQ__OPTION_FLAG,
};

static const amq__option *const cuckoo_options[] = {
    &amq__option_capacity,
    &amq__option_fpr,
    &option_fingerprint_bits,
    &option_bucket_size,
    &option_max_kicks,
    &option_growth,
    &option_semi_sort,
    &amq__option_seed,
    &amq__option_hash,
    &amq__option_key,
    NULL,
};

static int family_create(void **state, const amq__spec *spec, amq_diag *diag)
{
    amq_cuckoo_params params = {
        .capacity = amq__spec_count(spec, &amq__option_capacity, 0),
        .fpr = amq__spec_real(spec, &amq__option_fpr, 0),
        .fingerprint_bits = (uint32_t)amq__spec_count(spec, &option_fingerprint_bits, 0),
        .bucket_size = bucket_size_values[amq__spec_choice(spec, &option_bucket_size, 1)],
        .max_kicks = (uint32_t)amq__spec_count(spec, &option_max_kicks, 0),
        .growth = (uint32_t)amq__spec_count(spec, &option_growth, 0),
        .semi_sort = amq__spec_flag(spec, &option_semi_sort),
    };
    int status = amq__spec_hasher(spec, &params.hasher, 0, diag);
    if (status != AMQ_OK)
        return status;
    amq_cuckoo *f;
    status = cuckoo_new(&f, &params, diag);
    *state = f;
    return status;
}

static int family_add(void *state, const void *key, size_t len)
{
    return amq_cuckoo_add(state, key, len);
}

static int family_add_unique(void *state, const void *key, size_t len)
{
    return amq_cuckoo_add_unique(state, key, len);
}

static int family_remove(void *state, const void *key, size_t len)
{
    return amq_cuckoo_remove(state, key, len);
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_cuckoo_contains(state, key, len);
}

static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    amq_cuckoo_contains_many(results, state, keys, lens, count);
    return AMQ_OK;
}

/* Saved: f, b, the layout (0 plain, 1 semi-sorted), max_kicks, growth, capacity, target fpr, the
 * walk's random state and the table count; then per table its buckets, stored count, stash bucket
 * and stash fingerprint. The payload is the tables' packed slots, each rounded up to whole bytes,
 * one after the other. */
static int family_save(const void *state, amq__saved *out)
{
    const amq_cuckoo *f = state;
    out->hasher = f->hasher;
    amq__params_put_u32(&out->params, f->fingerprint_bits);
    amq__params_put_u32(&out->params, f->bucket_size);
    amq__params_put_u32(&out->params, f->semi_sorted);
    amq__params_put_u32(&out->params, f->max_kicks);
    amq__params_put_u32(&out->params, f->growth);
    amq__params_put_u64(&out->params, f->capacity);
    amq__params_put_f64(&out->params, f->target_fpr);
    amq__params_put_u64(&out->params, f->random_state);
    amq__params_put_u32(&out->params, (uint32_t)f->table_count);
    for (size_t i = 0; i < f->table_count; i++) {
        const cuckoo_table *t = &f->tables[i];
        amq__params_put_u64(&out->params, t->buckets);
        amq__params_put_u64(&out->params, t->stored);
        amq__params_put_u64(&out->params, t->stash_bucket);
        amq__params_put_u32(&out->params, t->stash_fingerprint);
        out->pieces[i].data = t->slots;
        out->pieces[i].len = table_bytes(f, t->buckets);
    }
    out->piece_count = f->table_count;
    return AMQ_OK;
}

/* Check a loaded table against its saved header fields: the bits past the
 * last slot are zero and the stored count is the occupied slots plus the
 * stash. */
static int check_table(const amq_cuckoo *f, const cuckoo_table *t, size_t index, amq_diag *diag)
{
    uint64_t bits = table_bits(f, t->buckets);
    if (bits % 8 && (t->slots[bits / 8] >> (bits % 8)) != 0)
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo table %zu has bits set past its last slot",
                         index);
    uint64_t occupied = 0;
    for (uint64_t bucket = 0; bucket < t->buckets; bucket++) {
        if (f->semi_sorted && amq__packed_get(t->slots, bucket_bit(f, bucket),
                                              SEMI_SORT_CODE_BITS) >= SEMI_SORT_CODES)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "cuckoo table %zu bucket %llu has prefix code %llu, not below %d",
                             index, (unsigned long long)bucket,
                             (unsigned long long)amq__packed_get(t->slots, bucket_bit(f, bucket),
                                                                 SEMI_SORT_CODE_BITS),
                             SEMI_SORT_CODES);
        for (uint32_t slot = 0; slot < f->bucket_size; slot++)
            occupied += slot_get(f, t, bucket, slot) != 0;
    }
    occupied += t->stash_fingerprint != 0;
    if (occupied != t->stored)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo table %zu holds %llu fingerprints, its header says %llu", index,
                         (unsigned long long)occupied, (unsigned long long)t->stored);
    return AMQ_OK;
}

static int load_table(amq_cuckoo *f, amq__params_reader *r, const amq__container *c,
                      uint64_t *offset, amq_diag *diag)
{
    size_t index = f->table_count;
    uint64_t buckets = 0, stored = 0, stash_bucket = 0;
    uint32_t stash_fingerprint = 0;
    if (amq__params_get_u64(r, &buckets) || amq__params_get_u64(r, &stored) ||
        amq__params_get_u64(r, &stash_bucket) || amq__params_get_u32(r, &stash_fingerprint))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo parameters end inside table %zu", index);
    unsigned shift = 0;
    if (index == 0) {
        if (buckets < 1 || buckets > AMQ_CUCKOO_MAX_BUCKETS)
            return amq__fail(diag, AMQ_ECORRUPT, "cuckoo table 0 has %llu buckets",
                             (unsigned long long)buckets);
        if (f->capacity > buckets * f->bucket_size)
            return amq__fail(
                diag, AMQ_ECORRUPT, "cuckoo capacity %llu is more than table 0's %llu slots",
                (unsigned long long)f->capacity, (unsigned long long)(buckets * f->bucket_size));
        f->base_buckets = buckets;
    } else {
        shift = f->tables[index - 1].shift + growth_shift(f->growth);
        if (shift >= 32 || buckets != f->base_buckets << shift || buckets > AMQ_CUCKOO_MAX_BUCKETS)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "cuckoo table %zu has %llu buckets, not %u times table %zu's", index,
                             (unsigned long long)buckets, f->growth, index - 1);
    }
    if (stash_fingerprint > f->fingerprint_range ||
        (stash_fingerprint ? stash_bucket >= buckets : stash_bucket != 0))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo table %zu has an invalid stash", index);
    uint64_t bytes = table_bytes(f, buckets);
    if (c->payload_len - *offset < bytes)
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo payload ends inside table %zu", index);
    int status = table_open(f, shift);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "cannot allocate cuckoo table %zu", index);
    cuckoo_table *t = &f->tables[index];
    memcpy(t->slots, c->payload + *offset, (size_t)bytes);
    *offset += bytes;
    t->stored = stored;
    t->stash_bucket = stash_bucket;
    t->stash_fingerprint = stash_fingerprint;
    return check_table(f, t, index, diag);
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    *borrows_image = false;
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    uint32_t fingerprint_bits = 0, bucket_size = 0, layout = 0, max_kicks = 0, growth = 0,
             tables = 0;
    uint64_t capacity = 0, random_state = 0;
    double target_fpr = 0;
    if (amq__params_get_u32(&r, &fingerprint_bits) || amq__params_get_u32(&r, &bucket_size) ||
        amq__params_get_u32(&r, &layout) || amq__params_get_u32(&r, &max_kicks) ||
        amq__params_get_u32(&r, &growth) || amq__params_get_u64(&r, &capacity) ||
        amq__params_get_f64(&r, &target_fpr) || amq__params_get_u64(&r, &random_state) ||
        amq__params_get_u32(&r, &tables))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo parameters are %u bytes, too short",
                         c->params_len);
    if (fingerprint_bits < AMQ_CUCKOO_MIN_FINGERPRINT_BITS ||
        fingerprint_bits > AMQ_CUCKOO_MAX_FINGERPRINT_BITS)
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo fingerprint bits %u is out of range",
                         fingerprint_bits);
    if (!bucket_size_valid(bucket_size))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo bucket size %u is not 2, 4 or 8", bucket_size);
    if (layout > 1 || (layout == 1 && !semi_sort_valid(fingerprint_bits, bucket_size)))
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo layout %u does not fit %u-bit fingerprints in buckets of %u",
                         layout, fingerprint_bits, bucket_size);
    if (layout == 1)
        pthread_once(&prefix_sequences_once, list_prefix_sequences);
    if (max_kicks < 1 || max_kicks > AMQ_CUCKOO_MAX_KICKS || !growth_valid(growth) ||
        capacity < 1 || !(target_fpr > 0 && target_fpr < 1))
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo max kicks, growth, capacity or target fpr is out of range");
    if (tables < 1 || tables > AMQ_CUCKOO_MAX_TABLES || (tables > 1 && growth == 0))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo table count %u is invalid", tables);
    amq_cuckoo *f = calloc(1, sizeof *f);
    if (!f)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    set_shape(f, fingerprint_bits, bucket_size, layout == 1);
    f->max_kicks = max_kicks;
    f->growth = growth;
    f->capacity = capacity;
    f->target_fpr = target_fpr;
    f->random_state = random_state;
    f->hasher = c->hasher;
    uint64_t offset = 0;
    int status = AMQ_OK;
    for (uint32_t i = 0; i < tables && status == AMQ_OK; i++)
        status = load_table(f, &r, c, &offset, diag);
    if (status == AMQ_OK && amq__params_end(&r))
        status = amq__fail(diag, AMQ_ECORRUPT, "cuckoo parameters have trailing bytes");
    if (status == AMQ_OK && offset != c->payload_len)
        status = amq__fail(diag, AMQ_ECORRUPT, "cuckoo payload has %llu bytes past its tables",
                           (unsigned long long)(c->payload_len - offset));
    if (status != AMQ_OK) {
        amq_cuckoo_free(f);
        return status;
    }
    *state = f;
    return AMQ_OK;
}

static void family_info(const void *state, amq_info *out)
{
    const amq_cuckoo *f = state;
    uint64_t first_slots = f->base_buckets * f->bucket_size;
    out->capacity =
        (uint64_t)((double)f->capacity * (double)amq_cuckoo_slots(f) / (double)first_slots);
    out->keys = amq_cuckoo_keys(f);
    out->estimated_keys = (double)out->keys;
    out->memory_bytes = amq_cuckoo_memory_bytes(f);
    out->bits_per_key = (double)out->memory_bytes * 8 / (double)out->capacity;
    out->target_fpr = f->target_fpr;
    out->expected_fpr = amq_cuckoo_expected_fpr(f);
    out->hasher = f->hasher;
    amq__info_number(out, "fingerprint_bits", f->fingerprint_bits);
    amq__info_number(out, "bucket_size", f->bucket_size);
    amq__info_text(out, "layout", f->semi_sorted ? "semi-sorted" : "plain");
    amq__info_number(out, "buckets", (double)f->tables[0].buckets);
    amq__info_number(out, "tables", (double)f->table_count);
    amq__info_number(out, "load", amq_cuckoo_load(f));
    amq__info_number(out, "max_kicks", f->max_kicks);
    amq__info_number(out, "growth", f->growth);
    amq__info_text(out, "stash", amq_cuckoo_full(f) ? "occupied" : "empty");
}

static void family_destroy(void *state)
{
    amq_cuckoo_free(state);
}

const amq__family amq__cuckoo_family = {
    .name = "cuckoo",
    .id = AMQ__FAMILY_CUCKOO,
    .options = cuckoo_options,
    .grows = true,
    .create = family_create,
    .add = family_add,
    .add_unique = family_add_unique,
    .remove = family_remove,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .save = family_save,
    .load = family_load,
    .info = family_info,
    .destroy = family_destroy,
};
