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
 *   remove    take one counted copy of fp for the pair (below), or else
 *             clear one slot holding fp in i1 or i2 (or empty the stash if
 *             it holds fp for those buckets); AMQ_ENOTFOUND if none does.
 *   count     the slots holding fp in i1 and i2 (once if i1 = i2), plus the
 *             stash, plus the pair's counted copies.
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
 * with design_load 0.95 (b = 4), 0.85 (b = 2) and 0.98 (b = 8) for walks
 * of 500 kicks, less for shorter walks (design_load): the first
 * term keeps n below the load where inserts start failing, the second is a
 * margin for the spread of that load, wide for small tables and negligible
 * for large ones (0.6% at a million keys, b = 4). Small tables can also fail
 * for a reason no walk can fix: b + 1 keys whose two choices are both the
 * same bucket. The floor makes that rarer than 10^-9 - C(n, b+1) B^-(2b+1),
 * by the union bound, is at most 10^-9 - which decides the size below
 * about 300 keys for b = 4 and 30,000 for b = 2 (use b = 2 for large
 * tables only). A growing filter has no floor: a pile-up there only
 * chains the next table early, so its first table is sized by the load
 * alone (at 1,000 keys and b = 2, 655 buckets instead of 2,781). The
 * bucket count is saved with the filter, never recomputed.
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
 * No false negatives. A key added k times and removed at most k times
 * answers "maybe": every add leaves one more copy of fp where the key's
 * queries look (its pair's slots, the stash, or the pair's count), moves
 * keep a copy inside its pair, and a removal takes one copy of the pair. A
 * removal of a key never added is the only way to take another key's copy.
 *
 * Duplicates. add stores another copy of a key's fingerprint each time, up
 * to b / 2 copies in its pair; beyond that, the copies are counted exactly
 * in the table's overflow (cuckoo_overflow.c says why and how), so a key
 * added any number of times takes b / 2 slots and a count, and never fills
 * or blocks the table. The test costs the insert one look at both buckets, the
 * query's, which finds no copy for nearly every new key. add_unique adds
 * only keys that are not maybe-present.
 *
 * Growth. With growth g > 0 (a power of two, 2^s; 1 chains tables of one
 * size), a full filter (its newest table's stash occupied) chains a new
 * table with g times the newest table's buckets and adds there; queries,
 * counts and removals ask every table. The FPRs of the tables add up, so a
 * grown filter's FPR exceeds the first table's. A table fills only when a
 * walk fails, which copies of one key cannot make happen (they are counted
 * past b), so a chained table is one the keys needed; the limits are
 * AMQ_CUCKOO_MAX_TABLES tables and AMQ_CUCKOO_MAX_BUCKETS buckets a table.
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
 * fingerprint takes 12 bits. A bucket is read as words of whole lanes: all
 * b at once where one unaligned 64-bit load holds them (b*f <= 57, or
 * exactly 64 and then byte-aligned), else in groups of b/2 or fewer. A word
 * is searched for a value with the zero-lane test of SWAR arithmetic:
 * x = word xor (value * ones), where ones has bit 0 of every lane set, has
 * a zero lane iff (x - ones) & ~x & highs != 0 (highs: bit f - 1 of every
 * lane), and the lowest bit set in that expression marks the first zero
 * lane (a lane above it holding 1 may be marked too, so a count clears the
 * lane found and tests again). That one test serves queries, insertions (a
 * free slot holds 0), removals and counts of plain buckets, and of
 * semi-sorted ones once decoded into the same word.
 *
 * The common shape, f = 12 and b = 4 plain in one table, has a query of
 * its own: amq/inline.h's amq_cuckoo_view, which callers may also compile
 * into their loops. With the shape fixed a bucket is 6 bytes at 6 times
 * its index, read with one load whatever its place, and the query has no
 * test of the shape and no loop: both buckets are loaded and tested with
 * no branch between them. The filter keeps a flag that holds while it is
 * of that shape with an empty stash (view_query), so the query tests one
 * byte and leaves the stash out; any other filter takes the general path.
 * Fewer instructions matter here more than in most code: consecutive
 * queries wait for memory side by side, as many as fit in the processor's
 * window of instructions in flight.
 *
 * Semi-sorting (the paper's section 5.2, coded in cuckoo_semisort.c). In a
 * bucket of four slots the order of the fingerprints carries no
 * information: a bucket keeps them sorted and stores their four 4-bit
 * prefixes as one 12-bit code (3876 sorted sequences), then the four
 * (f - 4)-bit suffixes, 4f - 4 bits in all - one bit per slot less at the
 * same FPR. Queries compare the suffixes where they lie before decoding
 * anything; insertions and removals decode a bucket into the plain
 * layout's word, change it as a plain bucket, and encode it again. It
 * takes b = 4 and 5 <= f <= 16.
 *
 * Files: this one sizes the filter, owns its tables, inserts (the walk),
 * removes, counts, and answers the single-key calls; cuckoo_overflow.c
 * counts the copies past b; cuckoo_semisort.c
 * codes semi-sorted buckets; cuckoo_batch.c answers many keys at once;
 * cuckoo_family.c is the generic handle's view (specs, save, load, info).
 * What they share, with the membership test of each bucket shape that all
 * queries use, is in cuckoo_internal.h.
 */
#include "amq/cuckoo.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/hash.h"
#include "core/struct_size.h"
#include "core/util.h"
#include "cuckoo/cuckoo_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- sizing -------------------------------------------------------------------- */

/* The load a table is sized for: below where walks of max_kicks steps
 * start failing (the top of the file). Short walks fail sooner: with 20
 * kicks the first failure comes at about 72% (b = 2), 90% (b = 4) and
 * 96.5% (b = 8); with 100, at 83%, 95% and 98.4%. */
static double design_load(uint32_t bucket_size, uint32_t max_kicks)
{
    bool short_walks = max_kicks < 100, medium_walks = max_kicks < 500;
    switch (bucket_size) {
    case 2:
        return short_walks ? 0.66 : medium_walks ? 0.80 : 0.85;
    case 8:
        return short_walks ? 0.94 : medium_walks ? 0.97 : 0.98;
    default:
        return short_walks ? 0.86 : medium_walks ? 0.93 : 0.95;
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

/* Buckets for n keys (see the top of the file); 0 when more than the most.
 * A growing filter skips the pile-up floor: for it a pile-up costs one
 * more table, not a failed add. */
static uint64_t buckets_for(uint64_t capacity, uint32_t bucket_size, uint32_t max_kicks,
                            bool growing)
{
    double n = (double)capacity;
    double load = design_load(bucket_size, max_kicks);
    double buckets = ceil(n / (bucket_size * load) + 3 * sqrt(n / bucket_size));
    if (!growing)
        buckets = fmax(buckets, ceil(buckets_against_pileup(capacity, bucket_size)));
    if (!(buckets <= (double)AMQ_CUCKOO_MAX_BUCKETS))
        return 0;
    return buckets < 1 ? 1 : (uint64_t)buckets;
}

void amq__cuckoo_set_shape(amq_cuckoo *f, uint32_t fingerprint_bits, uint32_t bucket_size,
                           bool semi_sorted)
{
    f->fingerprint_bits = fingerprint_bits;
    f->bucket_size = bucket_size;
    f->fingerprint_range = (uint32_t)(((uint64_t)1 << fingerprint_bits) - 1);
    f->semi_sorted = semi_sorted;
    f->suffix_bits = semi_sorted ? fingerprint_bits - AMQ__CUCKOO_SEMI_SORT_PREFIX_BITS : 0;
    uint32_t lane_bits = fingerprint_bits * bucket_size;
    f->bucket_bits =
        semi_sorted ? AMQ__CUCKOO_SEMI_SORT_CODE_BITS + AMQ__CUCKOO_SEMI_SORT_SLOTS * f->suffix_bits
                    : lane_bits;
    f->whole_bytes = f->bucket_bits % 8 == 0;
    f->bucket_step = f->whole_bytes ? f->bucket_bits / 8 : f->bucket_bits;
    /* A plain bucket is read in groups of lanes, as many as one 64-bit load
     * gives whole (57 bits from any bit, 64 from a byte); a semi-sorted one
     * is decoded into one word of its four lanes. */
    uint32_t group_lanes = bucket_size;
    while (!semi_sorted && group_lanes * fingerprint_bits > 57 &&
           group_lanes * fingerprint_bits != 64)
        group_lanes /= 2;
    f->group_lanes = group_lanes;
    f->group_bits = group_lanes * fingerprint_bits;
    f->groups = bucket_size / group_lanes;
    f->bucket_in_word = f->groups == 1;
    f->lane_ones = 0;
    for (uint32_t lane = 0; lane < group_lanes; lane++)
        f->lane_ones |= (uint64_t)1 << (lane * fingerprint_bits);
    f->lane_highs = f->lane_ones << (fingerprint_bits - 1);
    f->slot_reciprocal = ((1u << 16) + fingerprint_bits - 1) / fingerprint_bits;
    f->suffix_mask = ((uint32_t)1 << f->suffix_bits) - 1;
    f->suffix_lanes = f->suffix_mask * AMQ__CUCKOO_WIDE_LANE_ONES;
    f->suffix_ones = 0;
    for (uint32_t slot = 0; semi_sorted && slot < AMQ__CUCKOO_SEMI_SORT_SLOTS; slot++)
        f->suffix_ones |= (uint64_t)1 << (slot * f->suffix_bits);
    f->suffix_highs = semi_sorted ? f->suffix_ones << (f->suffix_bits - 1) : 0;
    f->use_bmi2 = semi_sorted && amq__cuckoo_fast_pdep();
    f->shape_12x4 = !semi_sorted && fingerprint_bits == 12 && bucket_size == 4;
}

bool amq__cuckoo_bucket_size_valid(uint32_t bucket_size)
{
    return bucket_size == 2 || bucket_size == 4 || bucket_size == 8;
}

bool amq__cuckoo_semi_sort_valid(uint32_t fingerprint_bits, uint32_t bucket_size)
{
    return bucket_size == AMQ__CUCKOO_SEMI_SORT_SLOTS &&
           fingerprint_bits >= AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS &&
           fingerprint_bits <= AMQ_CUCKOO_SEMI_SORT_MAX_FINGERPRINT_BITS;
}

bool amq__cuckoo_growth_valid(uint32_t growth)
{
    return growth <= AMQ_CUCKOO_MAX_GROWTH && (growth & (growth - 1)) == 0;
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

/* ---- the tables ---------------------------------------------------------------- */

int amq__cuckoo_table_open(amq_cuckoo *f, unsigned shift)
{
    amq__cuckoo_table *t = &f->tables[f->table_count];
    uint64_t buckets = f->base_buckets << shift;
    uint64_t bytes = amq__cuckoo_table_bytes(f, buckets) + AMQ__PACKED_PADDING;
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
    amq__cuckoo_note_change(f);
    return AMQ_OK;
}

/* Why a filter whose newest table is full cannot chain another (0: it
 * can), as amq_cuckoo_why_full tells it; the shift of the next table into
 * *shift when it can. */
static amq_cuckoo_full_reason growth_limit(const amq_cuckoo *f, unsigned *shift)
{
    if (f->growth == 0)
        return AMQ_CUCKOO_FULL_NO_FREE_SLOT;
    if (f->table_count == AMQ_CUCKOO_MAX_TABLES)
        return AMQ_CUCKOO_FULL_MOST_TABLES;
    *shift = f->tables[f->table_count - 1].shift + amq__cuckoo_growth_shift(f->growth);
    if (*shift >= 32 || (f->base_buckets << *shift) > AMQ_CUCKOO_MAX_BUCKETS)
        return AMQ_CUCKOO_FULL_TABLE_TOO_LARGE;
    return AMQ_CUCKOO_NOT_FULL;
}

/* Chain a new table after a full newest one: AMQ_EFULL when the filter may
 * not grow, has AMQ_CUCKOO_MAX_TABLES tables, or the next one would exceed
 * AMQ_CUCKOO_MAX_BUCKETS. */
static int grow(amq_cuckoo *f)
{
    unsigned shift = 0;
    if (growth_limit(f, &shift) != AMQ_CUCKOO_NOT_FULL)
        return AMQ_EFULL;
    return amq__cuckoo_table_open(f, shift);
}

/* ---- changing buckets ---------------------------------------------------------- */

/* Group group of a bucket as a word of f-bit lanes: a plain bucket's as
 * stored, a semi-sorted bucket (one group) decoded. */
static inline uint64_t group_word(const amq_cuckoo *f, const amq__cuckoo_table *t, uint64_t bucket,
                                  uint32_t group)
{
    if (f->semi_sorted) {
        uint64_t code;
        uint64_t suffixes =
            amq__cuckoo_semisort_read(f, t, amq__cuckoo_bucket_at(f, bucket), &code);
        return amq__cuckoo_semisort_decode(f, code, suffixes);
    }
    if (f->bucket_in_word)
        return amq__cuckoo_window(f, t, amq__cuckoo_bucket_at(f, bucket));
    return amq__packed_window(t->slots, amq__cuckoo_bucket_bit(f, bucket) + group * f->group_bits);
}

/* The first slot of the bucket holding value (0: the first free slot), or
 * -1 if none does. */
static AMQ__ALWAYS_INLINE int bucket_find(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                          uint64_t bucket, uint32_t value)
{
    uint32_t group = 0;
    do {
        uint64_t match = amq__cuckoo_plain_match(f, group_word(f, t, bucket, group), value);
        if (match)
            return (int)(group * f->group_lanes + amq__cuckoo_lane(f, match));
    } while (++group < f->groups);
    return -1;
}

uint32_t amq__cuckoo_bucket_count(const amq_cuckoo *f, const amq__cuckoo_table *t, uint64_t bucket,
                                  uint32_t value)
{
    uint32_t copies = 0;
    for (uint32_t group = 0; group < f->groups; group++) {
        uint64_t word = group_word(f, t, bucket, group);
        /* Only a match's lowest bit is sure: count that lane, make it
         * differ from value, and test again. */
        for (uint64_t match; (match = amq__cuckoo_plain_match(f, word, value)) != 0; copies++)
            word ^= (uint64_t)1 << (amq__cuckoo_lane(f, match) * f->fingerprint_bits);
    }
    return copies;
}

/* Store value in a slot. A semi-sorted bucket is sorted again, which may
 * move its other fingerprints to other slots. */
static AMQ__ALWAYS_INLINE void slot_set(const amq_cuckoo *f, amq__cuckoo_table *t, uint64_t bucket,
                                        uint32_t slot, uint32_t value, bool plain)
{
    unsigned shift = slot * f->fingerprint_bits;
    if (!plain && f->semi_sorted) {
        uint64_t word = group_word(f, t, bucket, 0) & ~((uint64_t)f->fingerprint_range << shift);
        amq__cuckoo_semisort_store(f, t, bucket, word | (uint64_t)value << shift);
        return;
    }
    amq__packed_set(t->slots, amq__cuckoo_bucket_bit(f, bucket) + shift, f->fingerprint_bits,
                    value);
}

/* Put fingerprint in a free slot of the bucket; false if it has none. A
 * plain bucket that fits a word takes one load and one store: the first
 * free lane's top bit is the lowest of the match of 0, and the lane is all
 * zero, so the fingerprint is or-ed into place (kept for speed: through
 * bucket_find and slot_set inserts were 24% slower, f = 12). A semi-sorted
 * bucket is told full by its suffixes when none is 0, else decoded once
 * and encoded once. */
static AMQ__ALWAYS_INLINE bool bucket_put(const amq_cuckoo *f, amq__cuckoo_table *t,
                                          uint64_t bucket, uint32_t fingerprint, bool plain)
{
    uint64_t bit = amq__cuckoo_bucket_bit(f, bucket);
    if (plain || (!f->semi_sorted && f->bucket_in_word)) {
        uint8_t *byte = t->slots + (bit >> 3);
        unsigned shift = (unsigned)(bit & 7);
        uint64_t word = amq__load_u64le(byte);
        uint64_t free_lanes = amq__cuckoo_plain_match(f, word >> shift, 0);
        if (!free_lanes)
            return false;
        unsigned lane_start = (unsigned)__builtin_ctzll(free_lanes) - (f->fingerprint_bits - 1);
        amq__store_u64le(byte, word | (uint64_t)fingerprint << (shift + lane_start));
        return true;
    }
    if (f->semi_sorted) {
        uint64_t code;
        uint64_t suffixes =
            amq__cuckoo_semisort_read(f, t, amq__cuckoo_bucket_at(f, bucket), &code);
        if (!amq__cuckoo_suffixes_match(f, suffixes, 0))
            return false;
        uint64_t word = amq__cuckoo_semisort_decode(f, code, suffixes);
        if (!amq__cuckoo_plain_match(f, word, 0))
            return false;
        amq__cuckoo_semisort_store(f, t, bucket, word | fingerprint);
        return true;
    }
    int slot = bucket_find(f, t, bucket, 0);
    if (slot < 0)
        return false;
    slot_set(f, t, bucket, (uint32_t)slot, fingerprint, false);
    return true;
}

/* ---- insert: the walk ---------------------------------------------------------- */

/* The walk's next random number: the splitmix64 sequence. */
static uint64_t next_random(amq_cuckoo *f)
{
    return amq__mix64(f->random_state += 0x9E3779B97F4A7C15ULL);
}

/* The rest of the insert, for a fingerprint (counted in t->stored already)
 * whose buckets, bucket and other, are both full: the random walk, and
 * finally the stash. Each step looks one move ahead first: if a resident
 * of the full bucket has a free slot in its alternate, it moves there and
 * the fingerprint takes its place. Otherwise a random resident is kicked
 * out for the fingerprint and carried to its alternate, which the look
 * ahead has just found full, and the step repeats from there. */
static AMQ__ALWAYS_INLINE void walk(amq_cuckoo *f, amq__cuckoo_table *t, uint32_t fingerprint,
                                    uint64_t bucket, uint64_t other, bool plain)
{
    const bool in_word = plain || f->bucket_in_word;
    uint64_t random = next_random(f);
    uint64_t current = random & 1 ? other : bucket;
    for (uint32_t kick = 0; kick < f->max_kicks; kick++) {
        /* A bucket that fits a word is read once, not once per slot (a
         * semi-sorted one would be decoded four times). */
        uint64_t word = plain     ? amq__cuckoo_window(f, t, amq__cuckoo_bucket_at(f, current))
                        : in_word ? group_word(f, t, current, 0)
                                  : 0;
        uint32_t residents[AMQ__CUCKOO_MAX_BUCKET_SIZE];
        uint64_t alternates[AMQ__CUCKOO_MAX_BUCKET_SIZE];
        for (uint32_t slot = 0; slot < f->bucket_size; slot++) {
            residents[slot] =
                in_word
                    ? (uint32_t)(word >> (slot * f->fingerprint_bits)) & f->fingerprint_range
                    : (uint32_t)amq__packed_get(
                          t->slots, amq__cuckoo_bucket_bit(f, current) + slot * f->fingerprint_bits,
                          f->fingerprint_bits);
            alternates[slot] = amq__cuckoo_alternate(f, t, current, residents[slot], plain);
            __builtin_prefetch(
                amq__cuckoo_bucket_start(f, t, amq__cuckoo_bucket_at(f, alternates[slot])), 1);
        }
        for (uint32_t slot = 0; slot < f->bucket_size; slot++) {
            if (bucket_put(f, t, alternates[slot], residents[slot], plain)) {
                slot_set(f, t, current, slot, fingerprint, plain);
                return;
            }
        }
        if (kick % 16 == 0)
            random = next_random(f);
        uint32_t victim = (uint32_t)(random >> (4 * (kick % 16))) & (f->bucket_size - 1);
        slot_set(f, t, current, victim, fingerprint, plain);
        fingerprint = residents[victim];
        current = alternates[victim];
    }
    t->stash_fingerprint = fingerprint;
    t->stash_bucket = current;
    amq__cuckoo_note_change(f);
}

/* The walks, out of line: most inserts never get here. */
static AMQ__NOINLINE void plain_walk(amq_cuckoo *f, amq__cuckoo_table *t, uint32_t fingerprint,
                                     uint64_t bucket, uint64_t other)
{
    walk(f, t, fingerprint, bucket, other, true);
}

static AMQ__NOINLINE void any_shape_walk(amq_cuckoo *f, amq__cuckoo_table *t, uint32_t fingerprint,
                                         uint64_t bucket, uint64_t other)
{
    walk(f, t, fingerprint, bucket, other, false);
}

/* Store fingerprint, which belongs in bucket or its alternate, in a table
 * whose stash is empty: in a free slot, by the random walk, or finally in
 * the stash; true. With unless_held, first the query's look at both
 * buckets and the stash: if they hold the fingerprint already, nothing is
 * stored and the answer is false (the caller decides whether this copy is
 * stored or counted, cuckoo_overflow.c). Done here, where the buckets are
 * read anyway, the look costs a new key a few instructions. */
static AMQ__ALWAYS_INLINE bool insert(amq_cuckoo *f, amq__cuckoo_table *t, uint32_t fingerprint,
                                      uint64_t bucket, bool plain, bool unless_held)
{
    uint64_t other = amq__cuckoo_alternate(f, t, bucket, fingerprint, plain);
    __builtin_prefetch(amq__cuckoo_bucket_start(f, t, amq__cuckoo_bucket_at(f, other)), 1);
    /* The buckets alone: a copy in the stash is left out, as it may be
     * (add_to_held_pair counts it when a bucket holds one too). */
    if (unless_held &&
        AMQ__UNLIKELY(!plain && f->semi_sorted
                          ? amq__cuckoo_semisort_holds(f, t, amq__cuckoo_bucket_at(f, bucket),
                                                       amq__cuckoo_bucket_at(f, other), fingerprint)
                          : ((int)amq__cuckoo_plain_holds(f, t, amq__cuckoo_bucket_at(f, bucket),
                                                          fingerprint, plain) |
                             (int)amq__cuckoo_plain_holds(f, t, amq__cuckoo_bucket_at(f, other),
                                                          fingerprint, plain)) != 0))
        return false;
    t->stored++;
    if (bucket_put(f, t, bucket, fingerprint, plain) || bucket_put(f, t, other, fingerprint, plain))
        return true;
    if (plain)
        plain_walk(f, t, fingerprint, bucket, other);
    else
        any_shape_walk(f, t, fingerprint, bucket, other);
    return true;
}

static AMQ__NOINLINE bool any_shape_insert(amq_cuckoo *f, amq__cuckoo_table *t,
                                           uint32_t fingerprint, uint64_t bucket, bool unless_held)
{
    return insert(f, t, fingerprint, bucket, false, unless_held);
}

/* The insert compiled for the plain shape, and for any. */
static AMQ__ALWAYS_INLINE bool table_insert(amq_cuckoo *f, amq__cuckoo_table *t,
                                            uint32_t fingerprint, uint64_t bucket, bool unless_held)
{
    if (AMQ__LIKELY(amq__cuckoo_plain_shape(f, t)))
        return unless_held ? insert(f, t, fingerprint, bucket, true, true)
                           : insert(f, t, fingerprint, bucket, true, false);
    return any_shape_insert(f, t, fingerprint, bucket, unless_held);
}

/* ---- remove, count ------------------------------------------------------------- */

/* Empty the stash into the table again (a slot was just freed). */
static void table_unstash(amq_cuckoo *f, amq__cuckoo_table *t)
{
    uint32_t fingerprint = t->stash_fingerprint;
    if (!fingerprint)
        return;
    t->stash_fingerprint = 0;
    t->stored--;
    table_insert(f, t, fingerprint, t->stash_bucket, false);
    if (!t->stash_fingerprint)
        t->stash_bucket = 0;
    amq__cuckoo_note_change(f);
}

/* Take one copy of fingerprint from the pair of i1 in table t: a counted
 * one first (the overflow's invariant O), else a stored one. */
static bool table_remove(amq_cuckoo *f, amq__cuckoo_table *t, uint64_t hash, uint32_t fingerprint)
{
    uint64_t i1 = amq__cuckoo_index(hash, t->buckets);
    uint64_t i2 = amq__cuckoo_alternate(f, t, i1, fingerprint, false);
    if (AMQ__UNLIKELY(t->overflow.used) &&
        amq__cuckoo_overflow_take(&t->overflow, (uint32_t)(i1 < i2 ? i1 : i2), fingerprint))
        return true;
    uint64_t bucket = i1;
    int slot = bucket_find(f, t, i1, fingerprint);
    if (slot < 0) {
        bucket = i2;
        slot = bucket_find(f, t, i2, fingerprint);
    }
    if (slot >= 0) {
        slot_set(f, t, bucket, (uint32_t)slot, 0, false);
        t->stored--;
        table_unstash(f, t);
        return true;
    }
    if (amq__cuckoo_stash_holds(f, t, fingerprint, amq__cuckoo_bucket_at(f, i1),
                                amq__cuckoo_bucket_at(f, i2))) {
        t->stash_fingerprint = 0;
        t->stash_bucket = 0;
        t->stored--;
        amq__cuckoo_note_change(f);
        return true;
    }
    return false;
}

uint64_t amq__cuckoo_pair_stored(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                 uint32_t fingerprint, uint64_t i1, uint64_t i2)
{
    uint64_t copies = amq__cuckoo_bucket_count(f, t, i1, fingerprint);
    if (i2 != i1)
        copies += amq__cuckoo_bucket_count(f, t, i2, fingerprint);
    return copies + amq__cuckoo_stash_holds(f, t, fingerprint, amq__cuckoo_bucket_at(f, i1),
                                            amq__cuckoo_bucket_at(f, i2));
}

static uint64_t table_count(const amq_cuckoo *f, const amq__cuckoo_table *t, uint64_t hash,
                            uint32_t fingerprint)
{
    uint64_t i1 = amq__cuckoo_index(hash, t->buckets);
    uint64_t i2 = amq__cuckoo_alternate(f, t, i1, fingerprint, false);
    return amq__cuckoo_pair_stored(f, t, fingerprint, i1, i2) +
           amq__cuckoo_overflow_copies(&t->overflow, (uint32_t)(i1 < i2 ? i1 : i2), fingerprint);
}

/* ---- the filter ---------------------------------------------------------------- */

void amq_cuckoo_params_init_sized(amq_cuckoo_params *params, size_t struct_size)
{
    assert(params && struct_size >= sizeof(size_t));
    amq_cuckoo_params defaults;
    memset(&defaults, 0, sizeof defaults);
    amq_hasher_xxh3(&defaults.hasher, 0);
    amq__struct_write(params, struct_size, &defaults, sizeof defaults);
}

int amq_cuckoo_new(amq_cuckoo **out, const amq_cuckoo_params *caller_params, amq_diag *diag)
{
    assert(out);
    *out = NULL;
    if (!caller_params)
        return amq__fail(diag, AMQ_EINVAL, "no parameters");
    amq_cuckoo_params read;
    amq_cuckoo_params_init(&read);
    int read_status =
        amq__struct_read(&read, sizeof read, caller_params, sizeof read, "amq_cuckoo_params", diag);
    if (read_status != AMQ_OK)
        return read_status;
    const amq_cuckoo_params *params = &read;
    if (params->capacity == 0)
        return amq__fail(diag, AMQ_EINVAL, "cuckoo needs a capacity of at least 1 key (n=...)");
    uint32_t bucket_size = params->bucket_size ? params->bucket_size : 4;
    if (!amq__cuckoo_bucket_size_valid(bucket_size))
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
        if (bucket_size != AMQ__CUCKOO_SEMI_SORT_SLOTS)
            return amq__fail(diag, AMQ_EINVAL, "cuckoo semi-sort needs a bucket size of 4, not %u",
                             bucket_size);
        if (params->fingerprint_bits == 0 &&
            fingerprint_bits < AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS)
            fingerprint_bits = AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS;
        if (!amq__cuckoo_semi_sort_valid(fingerprint_bits, bucket_size))
            return amq__fail(diag, AMQ_EINVAL,
                             "cuckoo semi-sort needs fingerprint bits in %d..%d, not %u",
                             AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS,
                             AMQ_CUCKOO_SEMI_SORT_MAX_FINGERPRINT_BITS, fingerprint_bits);
        amq__cuckoo_semisort_init();
    }
    double full_fpr = amq__cuckoo_full_fpr(fingerprint_bits, bucket_size);
    if (params->fingerprint_bits && params->fpr != 0 && full_fpr > fpr)
        return amq__fail(diag, AMQ_EINVAL,
                         "cuckoo fingerprint bits %u give an FPR up to %.3g, above fpr %g",
                         fingerprint_bits, full_fpr, fpr);
    if (params->max_kicks > AMQ_CUCKOO_MAX_KICKS)
        return amq__fail(diag, AMQ_EINVAL, "cuckoo max kicks %u is above %d", params->max_kicks,
                         AMQ_CUCKOO_MAX_KICKS);
    if (!amq__cuckoo_growth_valid(params->growth))
        return amq__fail(diag, AMQ_EINVAL, "cuckoo growth %u is not 0, 1, 2, 4, 8 or 16",
                         params->growth);
    uint32_t max_kicks = params->max_kicks ? params->max_kicks : AMQ_CUCKOO_DEFAULT_MAX_KICKS;
    uint64_t buckets = buckets_for(params->capacity, bucket_size, max_kicks, params->growth > 0);
    if (buckets == 0) {
        /* What it would need, in bytes, so the refusal says how far off it is. */
        double needed =
            (double)params->capacity / design_load(bucket_size, max_kicks) * fingerprint_bits / 8;
        return amq__fail(diag, AMQ_ERANGE,
                         "cuckoo capacity %llu would need about %.3g bytes: more than 2^32 "
                         "buckets of %u slots (at most %.3g keys at this bucket size)",
                         (unsigned long long)params->capacity, needed, bucket_size,
                         (double)AMQ_CUCKOO_MAX_BUCKETS * bucket_size *
                             design_load(bucket_size, max_kicks));
    }
    amq_cuckoo *f = amq__calloc(1, sizeof *f);
    if (!f)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    int status = amq__hasher_resolve(&f->hasher, &params->hasher, diag);
    if (status != AMQ_OK) {
        amq__free(f);
        return status;
    }
    amq__cuckoo_set_shape(f, fingerprint_bits, bucket_size, params->semi_sort);
    f->max_kicks = max_kicks;
    f->growth = params->growth;
    f->capacity = params->capacity;
    f->target_fpr = params->fingerprint_bits && params->fpr == 0 ? full_fpr : fpr;
    f->random_state = amq__load_u64le(f->hasher.key) ^ params->capacity;
    uint64_t bytes = amq__cuckoo_table_bytes(f, buckets);
    f->base_buckets = buckets;
    status = amq__cuckoo_table_open(f, 0);
    if (status != AMQ_OK) {
        amq__free(f);
        return amq__fail(diag, status, "cannot allocate %llu bytes for the cuckoo table",
                         (unsigned long long)bytes);
    }
    *out = f;
    return AMQ_OK;
}

void amq_cuckoo_free(amq_cuckoo *filter)
{
    if (!filter)
        return;
    for (size_t i = 0; i < filter->table_count; i++) {
        amq__aligned_free(filter->tables[i].slots);
        amq__cuckoo_overflow_free(&filter->tables[i].overflow);
    }
    amq__free(filter);
}

void amq_cuckoo_clear(amq_cuckoo *filter)
{
    for (size_t i = 0; i < filter->table_count; i++)
        amq__cuckoo_overflow_free(&filter->tables[i].overflow);
    for (size_t i = 1; i < filter->table_count; i++)
        amq__aligned_free(filter->tables[i].slots);
    filter->table_count = 1;
    amq__cuckoo_table *t = &filter->tables[0];
    memset(t->slots, 0, (size_t)amq__cuckoo_table_bytes(filter, t->buckets));
    t->stored = 0;
    t->stash_fingerprint = 0;
    t->stash_bucket = 0;
    amq__cuckoo_note_change(filter);
}

/* Whether table t holds a key of hash and fingerprint. */
static AMQ__ALWAYS_INLINE bool table_contains(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                              uint64_t hash, uint32_t fingerprint, bool plain)
{
    uint64_t i1 = amq__cuckoo_index(hash, t->buckets);
    uint64_t i2 = amq__cuckoo_alternate(f, t, i1, fingerprint, plain);
    return amq__cuckoo_table_holds(f, t, amq__cuckoo_bucket_at(f, i1), amq__cuckoo_bucket_at(f, i2),
                                   fingerprint, plain);
}

/* A copy of fingerprint for bucket i1 of table t, whose pair holds one
 * already: counted in the overflow (AMQ_OK, or AMQ_ENOMEM / AMQ_ERANGE with
 * nothing changed) when the pair stores b / 2 copies, else 1: to be stored. */
static AMQ__NOINLINE int add_to_held_pair(amq_cuckoo *f, amq__cuckoo_table *t, uint32_t fingerprint,
                                          uint64_t i1)
{
    uint64_t i2 = amq__cuckoo_alternate(f, t, i1, fingerprint, false);
    if (amq__cuckoo_pair_stored(f, t, fingerprint, i1, i2) < amq__cuckoo_pair_copies_max(f))
        return 1;
    return amq__cuckoo_overflow_add(&t->overflow, (uint32_t)(i1 < i2 ? i1 : i2), fingerprint, 1);
}

int amq_cuckoo_add_hash(amq_cuckoo *filter, uint64_t hash)
{
    amq__cuckoo_table *t = &filter->tables[filter->table_count - 1];
    if (t->stash_fingerprint) {
        int status = grow(filter);
        if (status != AMQ_OK)
            return status;
        t++;
    }
    uint32_t fingerprint = amq__cuckoo_fingerprint(filter, hash);
    uint64_t bucket = amq__cuckoo_index(hash, t->buckets);
    if (AMQ__LIKELY(table_insert(filter, t, fingerprint, bucket, true)))
        return AMQ_OK;
    /* The pair holds a copy already: one that stores b / 2 counts the next
     * one (cuckoo_overflow.c). */
    int counted = add_to_held_pair(filter, t, fingerprint, bucket);
    if (counted <= 0)
        return counted;
    table_insert(filter, t, fingerprint, bucket, false);
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

/* Any shape but one plain table: each table in turn. Kept out of line, so
 * that the common case does not pay for its registers. */
static AMQ__NOINLINE bool contains_any_table(const amq_cuckoo *filter, uint64_t hash)
{
    uint32_t fingerprint = amq__cuckoo_fingerprint(filter, hash);
    for (size_t i = 0; i < filter->table_count; i++)
        if (table_contains(filter, &filter->tables[i], hash, fingerprint, false))
            return true;
    return false;
}

/* The query state of the first table, for the shape of amq_cuckoo_view. */
static inline amq_cuckoo_view view_of(const amq_cuckoo *filter)
{
    const amq__cuckoo_table *t = &filter->tables[0];
    return (amq_cuckoo_view){ .buckets = t->slots,
                              .bucket_count = t->buckets,
                              .stash_bucket = t->stash_bucket,
                              .lane_ones = filter->lane_ones,
                              .fingerprint_range = filter->fingerprint_range,
                              .stash_fingerprint = t->stash_fingerprint,
                              .layout = AMQ_INLINE_LAYOUT };
}

int amq_cuckoo_view_get(amq_cuckoo_view *out, const amq_cuckoo *filter, uint32_t layout,
                        amq_diag *diag)
{
    if (!out || !filter)
        return amq__fail(diag, AMQ_EINVAL, "amq_cuckoo_view_get: %s is NULL",
                         !out ? "out" : "filter");
    memset(out, 0, sizeof *out);
    if (layout != AMQ_INLINE_LAYOUT)
        return amq__fail(diag, AMQ_EVERSION,
                         "a cuckoo view of layout %u was asked for; this library computes "
                         "layout %d",
                         layout, AMQ_INLINE_LAYOUT);
    if (!filter->shape_12x4 || filter->table_count != 1)
        return amq__fail(diag, AMQ_EUNSUPPORTED,
                         "a cuckoo view of a filter of %u-bit fingerprints in buckets of %u%s, "
                         "%zu table(s): views are of plain buckets of four 12-bit slots, one "
                         "table",
                         filter->fingerprint_bits, filter->bucket_size,
                         filter->semi_sorted ? " (semi-sorted)" : "", filter->table_count);
    *out = view_of(filter);
    return AMQ_OK;
}

bool amq_cuckoo_contains_hash(const amq_cuckoo *filter, uint64_t hash)
{
    if (AMQ__LIKELY(filter->view_query)) {
        /* the stash is empty: the view's query without its test */
        amq_cuckoo_view view = view_of(filter);
        view.stash_fingerprint = 0;
        return amq_cuckoo_view_contains_hash(&view, hash);
    }
    if (AMQ__LIKELY(amq__cuckoo_plain_single_table(filter)))
        return table_contains(filter, &filter->tables[0], hash,
                              amq__cuckoo_fingerprint(filter, hash), true);
    return contains_any_table(filter, hash);
}

bool amq_cuckoo_contains(const amq_cuckoo *filter, const void *key, size_t len)
{
    return amq_cuckoo_contains_hash(filter, amq__hash64(&filter->hasher, key, len));
}

int amq_cuckoo_remove_hash(amq_cuckoo *filter, uint64_t hash)
{
    uint32_t fingerprint = amq__cuckoo_fingerprint(filter, hash);
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
    uint32_t fingerprint = amq__cuckoo_fingerprint(filter, hash);
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
    uint64_t copies = 0;
    for (size_t i = 0; i < filter->table_count; i++)
        copies += filter->tables[i].stored + filter->tables[i].overflow.copies;
    return copies;
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

double amq_cuckoo_load_factor(const amq_cuckoo *filter)
{
    uint64_t stored = 0;
    for (size_t i = 0; i < filter->table_count; i++)
        stored += filter->tables[i].stored;
    return (double)stored / (double)amq_cuckoo_slots(filter);
}

uint64_t amq_cuckoo_memory_bytes(const amq_cuckoo *filter)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < filter->table_count; i++)
        bytes += amq__cuckoo_table_bytes(filter, filter->tables[i].buckets) +
                 amq__cuckoo_overflow_memory_bytes(&filter->tables[i].overflow);
    return bytes;
}

uint64_t amq_cuckoo_counted_copies(const amq_cuckoo *filter)
{
    uint64_t copies = 0;
    for (size_t i = 0; i < filter->table_count; i++)
        copies += filter->tables[i].overflow.copies;
    return copies;
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

int amq_cuckoo_why_full(const amq_cuckoo *filter)
{
    if (!amq_cuckoo_full(filter))
        return AMQ_CUCKOO_NOT_FULL;
    unsigned shift = 0;
    int reason = (int)growth_limit(filter, &shift);
    /* Below 8 bits a fingerprint leaves few alternate buckets (the
     * alternate is taken from it), so walks fail early. */
    if (reason != AMQ_CUCKOO_NOT_FULL && filter->fingerprint_bits < 8)
        reason |= AMQ_CUCKOO_FULL_SHORT_FINGERPRINTS;
    return reason;
}

double amq_cuckoo_expected_fpr(const amq_cuckoo *filter)
{
    double miss_everywhere = 1;
    double per_fingerprint = log1p(-1.0 / filter->fingerprint_range);
    for (size_t i = 0; i < filter->table_count; i++) {
        const amq__cuckoo_table *t = &filter->tables[i];
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
