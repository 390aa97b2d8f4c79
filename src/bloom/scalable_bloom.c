/*
 * scalable_bloom.c - the scalable Bloom filter (P. S. Almeida, C. Baquero,
 * N. Preguica, D. Hutchison, "Scalable Bloom Filters", Information
 * Processing Letters 101(6), 2007): a Bloom filter that needs no capacity up
 * front and still keeps its false-positive rate below a bound p.
 *
 * It is a chain of classic Bloom filters (bloom.c), the stages. Stage i holds
 *
 *     c_i = ceil(c_0 * s^i) keys   at error   p_i = p * (1 - r) * r^i
 *
 * for the initial capacity c_0, the growth s (default 2) and the tightening
 * r (default 0.9; docs/BLOOM.md tabulates bits per key against r and says
 * why 0.9). A key is "maybe present" if any stage says so, so the compound
 * rate is at most the sum of the stages' rates,
 *
 *     P(fp) <= sum p_i = p (1 - r) (1 + r + ... + r^(L-1)) = p (1 - r^L) < p
 *
 * for any number of stages L: the union bound needs no independence between
 * stages. The price is memory: stage i takes -ln(p_i) / (ln 2)^2 bits per
 * key, which grows by -ln(r) / (ln 2)^2 (0.22 bits at r = 0.9) per stage, so
 * bits per key grow with the logarithm of how far the filter has grown.
 *
 * Add: the key is hashed once; if any stage may hold it, nothing changes
 * (answer 0). Otherwise it goes into the newest stage (answer 1); when that
 * stage already holds c_i keys, stage i+1 is opened first. So a stage's count
 * is the number of distinct keys put into it, it never passes c_i, and a
 * stage is only opened by a key that needs it.
 *
 * Sizing a stage: k_i = round((m / c_i) ln 2) for the classic filter's
 * m = ceil(-c_i ln p_i / (ln 2)^2), and m_i the fewest bits, from that m up,
 * at which
 *
 *     (1 - e^(-k c / m))^k + c / m^2 <= p_i.
 *
 * The first term is the textbook rate, which a rounded k misses at the
 * formula's m by up to 11.5% (k = 1; 3% at k = 2, under 1% from k = 6): small,
 * but summed over unboundedly many stages it would break the bound. The
 * second is a floor of double hashing: a key's k positions are fixed by the
 * pair (reduce(h.low, m), reduce(h.high, m)), so an absent key whose pair
 * equals one of the c stored keys' shares all its positions. It is nothing
 * for a large stage, but a filter started at a tiny capacity has tiny first
 * stages: c = 2 keys at p_i = 1e-7 would get 68 bits and a real rate of
 * 2/68^2 = 4e-4 (measured: a filter started at 2 keys with p = 1e-6 had a
 * rate near 9e-4 after 300 keys). With the floor in the sum such a stage
 * gets about sqrt(c / p_i) bits. The floor governs stages of fewer than
 * about 1 / (p_i b^2) keys, b the bits per key: a few thousand at p_i =
 * 1e-7, but millions at 1e-10, so very small bounds cost more memory than
 * the textbook formula says. The stages keep that sequence, the classic
 * filter's probe version 1 (bloom.c), since their sizing accounts for its
 * floor and the file has no field to name another: a saved filter's
 * stages are recomputed from c_0, p, s and r and must probe as they did.
 * A stage that would need more
 * than 2^48 bits or 64 hash functions, or a 65th stage
 * (AMQ_SCALABLE_BLOOM_MAX_STAGES), is AMQ_ERANGE: the add changes nothing.
 * s^i and r^i are computed by repeated multiplication (exact IEEE steps), so
 * a loaded file's stage sizes are recomputed identically and checked.
 *
 * Hashing: a key is hashed once, to 128 bits with the filter's hasher; stage
 * i probes with both halves multiplied by the odd constant 1 + 2 i *
 * 0x9e3779b97f4a7c15 (stage 0 uses the hash itself). Why not the same hash
 * everywhere: positions come from multiply-high, reduce(h, m) = h m / 2^64,
 * so one hash puts a key at the same relative place h / 2^64 in every
 * stage. The stages hold different keys, so that alone would not matter,
 * but adds do select: a key enters stage j only if it is absent from the
 * older stages. A key whose stage-j bit sits where an absent key q's bit
 * sits also shares q's relative position in stage i, and if q is a false
 * positive of stage i that position is set there, which makes the key more
 * likely to be rejected as present. So the keys that would set q's bits in
 * stage j are thinned out, and false positives of different stages are
 * negatively correlated: with p = 0.3, r = 0.5 (stage rates 15%, 7.5%, ...)
 * the absent keys that were false positives of both stages 0 and 1 came to
 * 11455 where independence predicts 12929 (-11%, 13 standard deviations).
 * The bound above still holds, but the rate the fills predict,
 * 1 - prod(1 - fill_i^k_i), no longer does. Multiplying by an odd constant
 * is a bijection (every stage still sees uniform hashes) and sends keys that
 * are close under one multiplier far apart under another, so the stages'
 * positions are unrelated; the same measurement then agrees with
 * independence (tests/test_scalable_bloom.c checks every pair of stages).
 * It costs two multiplications per stage visited.
 *
 * Query order: newest (largest) stage first. A present key stops at the
 * stage that holds it, and most keys are in the newest full stages (half of
 * them in the last full stage when s = 2); an absent key visits every stage
 * whatever the order. Oldest-first would find its small, cached stages
 * cheap, but visits more stages for most present keys, which costs more
 * than the cache saves (measured at 10 million keys in seven stages; the
 * figures are in the commit that chose the order). The batch query
 * (contains_many) takes 16 keys stage by stage, newest first: it prefetches
 * the first position of every key still pending, reads it, and prefetches the
 * other k - 1 positions only for keys whose first bit is set, so a stage
 * that rejects a key at its first bit (at least half of them) costs one
 * overlapped memory access; prefetching all k positions of every stage up
 * front was slower than not batching at all.
 *
 * Union: stage-wise OR of two filters with the same c_0, p, s, r and hasher
 * (so every stage i has the same m_i and k_i); into first grows empty stages
 * to other's count. The OR of two stages holds more keys than either, so the
 * union is refused (AMQ_EINCOMPATIBLE, nothing changed) if the rate the
 * merged fills predict, 1 - prod(1 - (X_i / m_i)^k_i), exceeds p. A merged
 * stage's count is into's count plus the keys other brings, estimated from
 * the set bits X as -(m/k) ln(1 - X/m) of the OR minus that of into's stage,
 * kept between the larger of the two counts and their sum; it may then pass
 * c_i, which only means the next new key opens a stage.
 *
 * Blocked stages (params.stage_layout: split-block or block). Every stage
 * may instead be a blocked filter (Putze, Sanders, Singler, WEA 2007; see
 * blocked_bloom.c), all of a key's bits in one block, so a query of a stage
 * reads one cache line instead of k. Stage i's view of the hash is
 * stage_hash's: the top 32 bits of its high half pick the block by
 * multiply-high, the top 32 bits of its low half (key32) the bits inside
 * it, by the same kernel as blocked_bloom.c (bloom/block_kernel.h):
 * split-block sets bit (key32 * amq_split_block_salt(w)) >> 27 of each of
 * the eight 32-bit words of a 256-bit block; block sets bit
 * (key32 * amq__block_salts()[t]) >> 23 of a 512-bit block for t < k.
 * A stage is the fewest blocks (and for 512-bit blocks the k in [1, 16]
 * needing fewest) at which the blocked filter's formula
 * (amq_blocked_bloom_formula_fpr: keys fall into blocks by a Poisson law)
 * plus c / (blocks 2^32) is at most p_i; the second term is the absent keys
 * whose block and key32 both equal a stored key's, which then share all its
 * bits (it matters only to stages refused by the ceiling anyway, below
 * about 1e-10). Capacities, rates and the ceiling are the classic stages';
 * blocked stages need more bits than classic ones at every p_i below 1%
 * (docs/BLOOM.md), so they are an option, not the default. A blocked stage
 * counts its set bits as it sets them (for the file and the expected rate,
 * which for a blocked stage is the formula at its count: the fill alone
 * understates uneven blocks). The batch calls hash 16 keys, prefetch their
 * block in every stage, then add or test them in order.
 *
 * Layout in memory: an array of up to 64 stages, oldest first, each a classic
 * filter (or the words of a blocked one) with its capacity and count, plus
 * c_0, p, s, r, the stage layout, the hasher and the total count. On disk
 * (little-endian, docs/FORMAT.md's container):
 *
 *     params:   u64 c_0 | f64 p | f64 s | f64 r | u64 count | u32 L      (44 bytes)
 *               then per stage: u64 m | u32 k | u64 c_i | u64 count_i | u64 X_i
 *                                                                    (36 bytes each)
 *               then, for blocked stages only: u32 layout (1 split-block, 2 block)
 *     payload:  stage 0's words | stage 1's words | ... (classic: ceil(m_i/64)
 *               u64 each, as the classic filter saves them; blocked: m_i/32 u32
 *               words, block b at word b * 8 or b * 16, as blocked-bloom saves them)
 *
 * A classic filter writes no layout field, so its file is the one earlier
 * versions wrote and read; a block of 4 more bytes names blocked stages, and
 * an earlier amq refuses it by its length.
 * At most 44 + 64 * 36 + 4 = 2352 bytes of parameters, under the container's
 * 4096. Loading checks every field, recomputes each stage's size from c_0,
 * p, s and r, checks the payload length against the stages before
 * allocating anything, and then each stage's words as a classic file's are
 * checked (bits past m clear, X equal to the set bits).
 *
 * Invariants, checked by amq__scalable_bloom_check() (tests call it after
 * mutations and loads):
 *   I1  1 <= L <= 64, and stage i's c_i, m_i and k_i are what c_0, p, s,
 *       r and the stage layout make them;
 *   I2  every classic stage is a sound classic filter hashing with the
 *       filter's hasher; a blocked stage's kept count of set bits is its
 *       words' popcount;
 *   I3  every stage count is at most 2^56 (adds stop at c_i <= 2^56; a union
 *       keeps it at most the larger input or its estimate, which is below
 *       2^54 for m <= 2^48), and the filter's count is their sum;
 *   I4  a stage has at most k_i * count_i bits set.
 *
 * Allocation: new, load, an add that opens a stage, a union that grows; queries
 * never allocate. Errors: AMQ_EINVAL (parameters out of range), AMQ_ERANGE (a
 * stage past the bounds above), AMQ_ENOMEM, AMQ_EINCOMPATIBLE (union),
 * AMQ_ECORRUPT (load).
 */
#include "bloom/block_kernel.h"
#include "bloom/bloom_internal.h"
#include "core/alloc.h"

#include "amq/calc.h"
#include "core/bits.h"
#include "core/family.h"
#include "core/hash.h"
#include "core/util.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct stage {
    amq_bloom *bloom;  /* a classic stage; NULL in a filter of blocked stages */
    uint32_t *words;   /* a blocked stage: blocks * words_per_block, 64-byte aligned */
    uint64_t blocks;   /* a blocked stage: its blocks (at most 2^32) */
    uint64_t bits_set; /* a blocked stage: its set bits, kept by add and merge */
    uint32_t hashes;   /* a blocked stage: k (8 for split-block) */
    uint64_t capacity; /* keys it takes before the next stage opens */
    uint64_t count;    /* keys added to it */
} stage;

struct amq_scalable_bloom {
    stage stages[AMQ_SCALABLE_BLOOM_MAX_STAGES]; /* oldest (smallest) first */
    size_t stage_count;
    uint64_t count; /* sum of the stages' counts */
    uint64_t initial_capacity;
    double fpr, growth, tightening; /* p, s, r */
    amq_hasher hasher;
    amq_scalable_bloom_layout layout; /* every stage's */
};

#define DEFAULT_CAPACITY   1024
#define DEFAULT_FPR        0.01
#define DEFAULT_GROWTH     2.0
#define DEFAULT_TIGHTENING 0.9     /* docs/BLOOM.md: bits per key against r */
#define MIN_GROWTH         1.0     /* equal stages (RedisBloom's EXPANSION 1) */
#define MAX_GROWTH         32768.0 /* RedisBloom's largest EXPANSION; stages stay capped */
#define MIN_TIGHTENING     0.5
#define MAX_TIGHTENING     0.95
/* The largest stage capacity (the spec's largest n), and the largest count
 * a stage may reach (adds stop at the capacity; see union_into for unions). */
#define MAX_STAGE_CAPACITY ((uint64_t)1 << 56)
#define MAX_STAGE_COUNT    MAX_STAGE_CAPACITY

/* Keys hashed per group in amq_scalable_bloom_contains_many and _add_many
 * (at most 32: a group's pending keys are the bits of a uint32_t). */
#define SCALABLE_BATCH 16

/* 2^64 / the golden ratio: stage multipliers 1 + 2 i GOLDEN are odd and far
 * apart (see stage_hash). */
#define GOLDEN 0x9e3779b97f4a7c15ULL

/* Blocked stages: their bits are blocked_bloom.c's, by the kernel both
 * take from bloom/block_kernel.h (the split one is amq/split_block.h's). */
#define MAX_STAGE_BLOCKS ((uint64_t)1 << 32) /* the block index is 32 bits times blocks */

static const char *const stage_layout_names[] = { "classic", "split-block", "block", NULL };

static bool blocked(const amq_scalable_bloom *f)
{
    return f->layout != AMQ_SCALABLE_STAGES_CLASSIC;
}

static uint32_t words_per_block(amq_scalable_bloom_layout layout)
{
    return layout == AMQ_SCALABLE_STAGES_SPLIT_BLOCK ? AMQ_SPLIT_BLOCK_WORDS : AMQ__BLOCK_WORDS;
}

static amq_blocked_layout blocked_layout(amq_scalable_bloom_layout layout)
{
    return layout == AMQ_SCALABLE_STAGES_SPLIT_BLOCK ? AMQ_BLOCKED_SPLIT : AMQ_BLOCKED_BLOCK;
}

/* A stage's bits: m of a classic stage, blocks * words per block * 32 of a
 * blocked one. */
static uint64_t stage_bits(const amq_scalable_bloom *f, const stage *st)
{
    return blocked(f) ? st->blocks * words_per_block(f->layout) * 32 : amq_bloom_bits(st->bloom);
}

static uint32_t stage_hashes(const amq_scalable_bloom *f, const stage *st)
{
    return blocked(f) ? st->hashes : amq_bloom_hashes(st->bloom);
}

static uint64_t stage_bits_set(const amq_scalable_bloom *f, const stage *st)
{
    return blocked(f) ? st->bits_set : amq_bloom_bits_set(st->bloom);
}

/* ---- sizing ----------------------------------------------------------------- */

/* The false-positive rate of n keys in m bits with k probes: the textbook
 * (1 - e^(-kn/m))^k, plus n / m^2 for the absent keys whose two hash halves
 * both land where a stored key's do, which then share all its positions. */
static double stage_rate(uint64_t n, uint64_t m, uint32_t k)
{
    double keys = (double)n, bits = (double)m;
    return pow(-expm1(-(double)k * keys / bits), k) + keys / (bits * bits);
}

/* Stage i's capacity c_i and error p_i. */
static int stage_target(uint64_t *n, double *p_i, const amq_scalable_bloom *f, size_t i,
                        amq_diag *diag)
{
    if (i >= AMQ_SCALABLE_BLOOM_MAX_STAGES)
        return amq__fail(diag, AMQ_ERANGE, "a scalable filter has at most %d stages",
                         AMQ_SCALABLE_BLOOM_MAX_STAGES);
    /* s^i and r^i by repeated multiplication: exact IEEE arithmetic, so a
     * file's stage sizes are recomputed identically on any host. */
    double scale = 1, tighten = 1;
    for (size_t j = 0; j < i; j++) {
        scale *= f->growth;
        tighten *= f->tightening;
    }
    double capacity = ceil((double)f->initial_capacity * scale);
    double p = f->fpr * (1 - f->tightening) * tighten;
    if (capacity > (double)MAX_STAGE_CAPACITY)
        return amq__fail(diag, AMQ_ERANGE, "stage %zu would hold %.3g keys, more than 2^56", i,
                         capacity);
    *n = (uint64_t)capacity;
    *p_i = p;
    return AMQ_OK;
}

/* The most bits a stage of n keys may take (AMQ_SCALABLE_BLOOM_MAX_BITS_PER_KEY). */
static uint64_t stage_ceiling(uint64_t n)
{
    return n > AMQ_SCALABLE_BLOOM_STAGE_ALLOWANCE_BITS / AMQ_SCALABLE_BLOOM_MAX_BITS_PER_KEY
               ? n * AMQ_SCALABLE_BLOOM_MAX_BITS_PER_KEY
               : AMQ_SCALABLE_BLOOM_STAGE_ALLOWANCE_BITS;
}

/* What stage i is, as the classic filter's parameters: its capacity, its
 * error p_i, the bits and hash functions that meet p_i, the filter's hasher. */
static int size_stage(amq_bloom_params *out, const amq_scalable_bloom *f, size_t i, amq_diag *diag)
{
    uint64_t n = 0, m = 0;
    uint32_t k = 0;
    double p = 0;
    int status = stage_target(&n, &p, f, i, diag);
    if (status != AMQ_OK)
        return status;
    if (amq_calc_optimal_m(&m, n, p, NULL) != AMQ_OK || m > AMQ_BLOOM_MAX_BITS)
        return amq__fail(diag, AMQ_ERANGE,
                         "stage %zu (%llu keys at error %.3g) would need about %.3g bytes, more "
                         "than 2^48 bits",
                         i, (unsigned long long)n, p, (double)n * -log(p) / (log(2) * log(2)) / 8);
    if (amq_calc_optimal_k(&k, m, n, NULL) != AMQ_OK || k > AMQ_BLOOM_MAX_HASHES)
        return amq__fail(diag, AMQ_ERANGE,
                         "stage %zu (error %.3g) would need more than %d hash functions", i, p,
                         AMQ_BLOOM_MAX_HASHES);
    /* The fewest bits, from the formula's up, at which the stage meets p_i
     * with k hash functions (see the opening comment): double the bit count
     * until it does, then bisect. */
    m = m < AMQ_BLOOM_MIN_BITS ? AMQ_BLOOM_MIN_BITS : m;
    uint64_t fails = m - 1, meets = m;
    while (stage_rate(n, meets, k) > p) {
        fails = meets;
        if (meets > AMQ_BLOOM_MAX_BITS / 2)
            return amq__fail(diag, AMQ_ERANGE,
                             "stage %zu (%llu keys at error %.3g) would need more than 2^48 bits",
                             i, (unsigned long long)n, p);
        meets *= 2;
    }
    while (meets - fails > 1) {
        uint64_t middle = fails + (meets - fails) / 2;
        if (stage_rate(n, middle, k) > p)
            fails = middle;
        else
            meets = middle;
    }
    m = meets;
    if (m > stage_ceiling(n))
        return amq__fail(diag, AMQ_ERANGE,
                         "stage %zu (%llu keys at error %.3g) would need %llu bits, over the "
                         "ceiling of %d bits per key: start with a larger capacity, a higher "
                         "error or a tightening nearer 1",
                         i, (unsigned long long)n, p, (unsigned long long)m,
                         AMQ_SCALABLE_BLOOM_MAX_BITS_PER_KEY);
    *out =
        (amq_bloom_params){ .capacity = n, .fpr = p, .bits = m, .hashes = k, .hasher = f->hasher };
    return AMQ_OK;
}

/* A blocked stage's size: c_i, p_i, its blocks and k. */
typedef struct blocked_shape {
    uint64_t capacity, blocks;
    uint32_t hashes;
} blocked_shape;

/* The rate of n keys in a blocked stage of the given blocks and k: the
 * blocked filter's formula, plus n / (blocks 2^32) for the absent keys whose
 * block and 32-bit in-block hash both equal a stored key's, which then set
 * the same bits (see the opening comment). */
static double blocked_rate(amq_scalable_bloom_layout layout, double n, uint64_t blocks, uint32_t k)
{
    uint64_t bits = blocks * words_per_block(layout) * 32;
    return amq_blocked_bloom_formula_fpr(blocked_layout(layout), (uint64_t)n, bits, k) +
           n / ((double)blocks * 0x1p32);
}

/* The fewest blocks, at most max_blocks, at which n keys with k bits meet
 * p; 0 if there are none. The rate falls as blocks grow. */
static uint64_t fewest_blocks(amq_scalable_bloom_layout layout, uint64_t n, uint32_t k, double p,
                              uint64_t max_blocks)
{
    if (blocked_rate(layout, (double)n, max_blocks, k) > p)
        return 0;
    uint64_t low = 1, high = max_blocks;
    while (low < high) {
        uint64_t middle = low + (high - low) / 2;
        if (blocked_rate(layout, (double)n, middle, k) <= p)
            high = middle;
        else
            low = middle + 1;
    }
    return low;
}

/* What blocked stage i is: the fewest blocks (and, for 512-bit blocks, the
 * k that needs fewest) at which c_i keys meet p_i, within the ceiling. */
static int size_blocked(blocked_shape *out, const amq_scalable_bloom *f, size_t i, amq_diag *diag)
{
    uint64_t n = 0;
    double p = 0;
    int status = stage_target(&n, &p, f, i, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t block_bits = words_per_block(f->layout) * 32;
    uint64_t max_blocks = stage_ceiling(n) / block_bits;
    max_blocks = max_blocks > MAX_STAGE_BLOCKS ? MAX_STAGE_BLOCKS : max_blocks;
    uint32_t first = 8, last = 8;
    if (f->layout == AMQ_SCALABLE_STAGES_BLOCK) {
        first = 1;
        last = AMQ__BLOCK_MAX_HASHES;
    }
    uint64_t best = 0;
    uint32_t best_k = 0;
    for (uint32_t k = first; k <= last; k++) {
        uint64_t blocks = fewest_blocks(f->layout, n, k, p, best ? best : max_blocks);
        if (blocks != 0 && (best == 0 || blocks < best)) {
            best = blocks;
            best_k = k;
        }
    }
    if (best == 0)
        return amq__fail(diag, AMQ_ERANGE,
                         "stage %zu (%llu keys at error %.3g) would need more than %d bits per "
                         "key in %s blocks: start with a larger capacity, a higher error, a "
                         "tightening nearer 1 or classic stages",
                         i, (unsigned long long)n, p, AMQ_SCALABLE_BLOOM_MAX_BITS_PER_KEY,
                         stage_layout_names[f->layout]);
    *out = (blocked_shape){ .capacity = n, .blocks = best, .hashes = best_k };
    return AMQ_OK;
}

/* Make a new empty stage the newest: AMQ_OK, or AMQ_ERANGE / AMQ_ENOMEM with
 * nothing changed. */
static int open_stage(amq_scalable_bloom *f, amq_diag *diag)
{
    if (blocked(f)) {
        blocked_shape shape;
        int status = size_blocked(&shape, f, f->stage_count, diag);
        if (status != AMQ_OK)
            return status;
        uint64_t bytes = shape.blocks * words_per_block(f->layout) * 4;
        uint32_t *words = amq__alloc_table(bytes, true);
        if (!words)
            return amq__fail(diag, AMQ_ENOMEM, "cannot allocate %llu bytes for stage %zu",
                             (unsigned long long)bytes, f->stage_count);
        f->stages[f->stage_count++] = (stage){ .words = words,
                                               .blocks = shape.blocks,
                                               .hashes = shape.hashes,
                                               .capacity = shape.capacity };
        return AMQ_OK;
    }
    amq_bloom_params size;
    int status = size_stage(&size, f, f->stage_count, diag);
    if (status != AMQ_OK)
        return status;
    amq_bloom *bloom;
    status = amq__bloom_new(&bloom, &size, AMQ__BLOOM_PROBE_DOUBLE, diag);
    if (status != AMQ_OK)
        return status;
    f->stages[f->stage_count++] = (stage){ .bloom = bloom, .capacity = size.capacity };
    return AMQ_OK;
}

static int new_filter(amq_scalable_bloom **out, const amq_scalable_bloom_params *params,
                      amq_diag *diag)
{
    *out = NULL;
    double p = params->fpr == 0 ? DEFAULT_FPR : params->fpr;
    double s = params->growth == 0 ? DEFAULT_GROWTH : params->growth;
    double r = params->tightening == 0 ? DEFAULT_TIGHTENING : params->tightening;
    if (!(p > 0 && p < 1))
        return amq__fail(diag, AMQ_EINVAL, "fpr %g is not between 0 and 1", p);
    if (!(s >= MIN_GROWTH && s <= MAX_GROWTH))
        return amq__fail(diag, AMQ_EINVAL, "growth %g is not between %g and %g", s, MIN_GROWTH,
                         MAX_GROWTH);
    if (!(r >= MIN_TIGHTENING && r <= MAX_TIGHTENING))
        return amq__fail(diag, AMQ_EINVAL, "tightening %g is not between %g and %g", r,
                         MIN_TIGHTENING, MAX_TIGHTENING);
    if ((unsigned)params->stage_layout > AMQ_SCALABLE_STAGES_BLOCK)
        return amq__fail(diag, AMQ_EINVAL, "unknown stage layout %d", (int)params->stage_layout);
    amq_hasher hasher;
    int status = amq__hasher_resolve(&hasher, &params->hasher, diag);
    if (status != AMQ_OK)
        return status;
    amq_scalable_bloom *f = amq__calloc(1, sizeof *f);
    if (!f)
        return AMQ_ENOMEM;
    f->initial_capacity = params->capacity == 0 ? DEFAULT_CAPACITY : params->capacity;
    f->fpr = p;
    f->growth = s;
    f->tightening = r;
    f->hasher = hasher;
    f->layout = params->stage_layout;
    status = open_stage(f, diag);
    if (status != AMQ_OK) {
        amq__free(f);
        return status;
    }
    *out = f;
    return AMQ_OK;
}

void amq_scalable_bloom_params_init(amq_scalable_bloom_params *params)
{
    assert(params);
    memset(params, 0, sizeof *params);
    amq_hasher_xxh3(&params->hasher, 0);
}

int amq_scalable_bloom_new(amq_scalable_bloom **out, const amq_scalable_bloom_params *params,
                           amq_diag *diag)
{
    assert(out && params);
    return new_filter(out, params, diag);
}

static void free_stage(stage *st)
{
    amq_bloom_free(st->bloom);
    amq__aligned_free(st->words);
}

void amq_scalable_bloom_free(amq_scalable_bloom *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->stage_count; i++)
        free_stage(&f->stages[i]);
    amq__free(f);
}

void amq_scalable_bloom_clear(amq_scalable_bloom *f)
{
    for (size_t i = 1; i < f->stage_count; i++)
        free_stage(&f->stages[i]);
    f->stage_count = 1;
    stage *first = &f->stages[0];
    if (first->bloom)
        amq_bloom_clear(first->bloom);
    else
        memset(first->words, 0, (size_t)(first->blocks * words_per_block(f->layout) * 4));
    first->bits_set = 0;
    first->count = 0;
    f->count = 0;
}

/* ---- add and query ---------------------------------------------------------- */

/* Stage i's view of a key's hash: both halves times the odd constant
 * 1 + 2 i GOLDEN (stage 0 sees the hash itself). A bijection, so each
 * stage still sees uniform hashes; see the opening comment for why stages
 * must not all see the same one. */
static inline amq_u128 stage_hash(amq_u128 hash, size_t i)
{
    uint64_t multiplier = 1 + 2 * (uint64_t)i * GOLDEN;
    amq_u128 mixed = { hash.low * multiplier, hash.high * multiplier };
    return mixed;
}

/* A blocked stage's view of a key: the top 32 bits of each half of
 * stage_hash, the high half's picking the block and the low half's (key32)
 * the bits inside it, as a blocked filter's 64-bit hash does. */
typedef struct block_view {
    uint64_t block;
    uint32_t key32;
} block_view;

static inline block_view blocked_view(amq_u128 hash, size_t i, uint64_t blocks)
{
    amq_u128 mixed = stage_hash(hash, i);
    block_view v = { amq_split_block_index(mixed.high, blocks), (uint32_t)(mixed.low >> 32) };
    return v;
}

static inline const uint32_t *block_at(const amq_scalable_bloom *f, const stage *st, uint64_t block)
{
    return st->words + block * words_per_block(f->layout);
}

static inline bool stage_contains(const amq_scalable_bloom *f, size_t i, amq_u128 hash)
{
    const stage *st = &f->stages[i];
    if (!blocked(f))
        return amq_bloom_contains_hash(st->bloom, stage_hash(hash, i));
    block_view v = blocked_view(hash, i, st->blocks);
    const uint32_t *block = block_at(f, st, v.block);
    return f->layout == AMQ_SCALABLE_STAGES_SPLIT_BLOCK
               ? amq_split_block_test(block, v.key32)
               : amq__block_test(block, v.key32, st->hashes);
}

/* Set a key's bits in stage i, counting the ones it newly sets. */
static void stage_add(amq_scalable_bloom *f, size_t i, amq_u128 hash)
{
    stage *st = &f->stages[i];
    if (!blocked(f)) {
        amq_bloom_add_hash(st->bloom, stage_hash(hash, i));
        return;
    }
    block_view v = blocked_view(hash, i, st->blocks);
    uint32_t *block = st->words + v.block * words_per_block(f->layout);
    st->bits_set += f->layout == AMQ_SCALABLE_STAGES_SPLIT_BLOCK
                        ? amq_split_block_add(block, v.key32)
                        : amq__block_add(block, v.key32, st->hashes);
}

bool amq_scalable_bloom_contains_hash(const amq_scalable_bloom *f, amq_u128 hash)
{
    for (size_t i = f->stage_count; i-- > 0;)
        if (stage_contains(f, i, hash))
            return true;
    return false;
}

bool amq_scalable_bloom_contains(const amq_scalable_bloom *f, const void *key, size_t len)
{
    return amq_scalable_bloom_contains_hash(f, amq__hash128(&f->hasher, key, len));
}

static int add_hash(amq_scalable_bloom *f, amq_u128 hash, amq_diag *diag)
{
    if (amq_scalable_bloom_contains_hash(f, hash))
        return 0;
    stage *newest = &f->stages[f->stage_count - 1];
    if (newest->count >= newest->capacity) {
        int status = open_stage(f, diag);
        if (status != AMQ_OK)
            return status;
        newest++;
    }
    stage_add(f, f->stage_count - 1, hash);
    newest->count++;
    f->count++;
    return 1;
}

int amq_scalable_bloom_add_hash(amq_scalable_bloom *f, amq_u128 hash)
{
    return add_hash(f, hash, NULL);
}

int amq_scalable_bloom_add(amq_scalable_bloom *f, const void *key, size_t len)
{
    return add_hash(f, amq__hash128(&f->hasher, key, len), NULL);
}

/* Hash a group of keys and start fetching each one's block in every
 * blocked stage: an add or a query then finds them all cached, and the
 * misses overlap instead of following one another. Hashing and prefetching
 * are one function on purpose: a function that only prefetches has no
 * effect a compiler must keep, and GCC drops its calls. */
static void hash_and_prefetch(const amq_scalable_bloom *f, const void *const *keys,
                              const size_t *lens, amq_u128 *hashes, size_t group)
{
    for (size_t j = 0; j < group; j++)
        hashes[j] = amq__hash128(&f->hasher, keys[j], lens[j]);
    for (size_t i = f->stage_count; i-- > 0;) {
        const stage *st = &f->stages[i];
        for (size_t j = 0; j < group; j++)
            __builtin_prefetch(block_at(f, st, blocked_view(hashes[j], i, st->blocks).block));
    }
}

/* amq_scalable_bloom_add_many for blocked stages, one group ahead: the
 * next group's keys are hashed and their blocks prefetched before this
 * group's are added, so each block has a group's adds to arrive in. */
static size_t add_many_blocked(int *results, amq_scalable_bloom *f, const void *const *keys,
                               const size_t *lens, size_t count)
{
    amq_u128 hashes[2][SCALABLE_BATCH];
    size_t group = count < SCALABLE_BATCH ? count : SCALABLE_BATCH;
    hash_and_prefetch(f, keys, lens, hashes[0], group);
    for (size_t start = 0, turn = 0; start < count; start += SCALABLE_BATCH, turn ^= 1) {
        group = count - start < SCALABLE_BATCH ? count - start : SCALABLE_BATCH;
        size_t next = start + SCALABLE_BATCH;
        if (next < count) {
            size_t ahead = count - next < SCALABLE_BATCH ? count - next : SCALABLE_BATCH;
            hash_and_prefetch(f, keys + next, lens + next, hashes[turn ^ 1], ahead);
        }
        for (size_t j = 0; j < group; j++) {
            results[start + j] = add_hash(f, hashes[turn][j], NULL);
            if (results[start + j] < 0)
                return start + j + 1;
        }
    }
    return count;
}

size_t amq_scalable_bloom_add_many(int *results, amq_scalable_bloom *f, const void *const *keys,
                                   const size_t *lens, size_t count)
{
    if (blocked(f))
        return add_many_blocked(results, f, keys, lens, count);
    amq_u128 hashes[SCALABLE_BATCH];
    for (size_t start = 0; start < count; start += SCALABLE_BATCH) {
        size_t group = count - start < SCALABLE_BATCH ? count - start : SCALABLE_BATCH;
        size_t newest = f->stage_count - 1;
        const amq_bloom *bloom = f->stages[newest].bloom;
        const uint64_t *words = amq__bloom_words(bloom);
        for (size_t j = 0; j < group; j++) {
            hashes[j] = amq__hash128(&f->hasher, keys[start + j], lens[start + j]);
            amq__bloom_probe p = amq__bloom_probe_start(
                stage_hash(hashes[j], newest), amq_bloom_bits(bloom), AMQ__BLOOM_PROBE_DOUBLE);
            __builtin_prefetch(&words[p.position >> 6]);
        }
        for (size_t j = 0; j < group; j++) {
            results[start + j] = add_hash(f, hashes[j], NULL);
            if (results[start + j] < 0)
                return start + j + 1;
        }
    }
    return count;
}

/* One stage's turn in a batch query: of the keys still pending (bit j of
 * pending), mark those the stage holds as present and return the rest. The
 * first position of every pending key is prefetched and read; only keys whose
 * first bit is set - at most half, in a stage at capacity - get their other
 * k - 1 positions prefetched before the full test. */
static uint32_t batch_stage(const amq_bloom *bloom, size_t i, const amq_u128 *hashes, size_t group,
                            uint32_t pending, uint8_t *results)
{
    const uint64_t *words = amq__bloom_words(bloom);
    uint64_t m = amq_bloom_bits(bloom);
    uint32_t k = amq_bloom_hashes(bloom);
    amq_u128 views[SCALABLE_BATCH];
    amq__bloom_probe probes[SCALABLE_BATCH];
    for (size_t j = 0; j < group; j++) {
        if (pending >> j & 1) {
            views[j] = stage_hash(hashes[j], i);
            probes[j] = amq__bloom_probe_start(views[j], m, AMQ__BLOOM_PROBE_DOUBLE);
            __builtin_prefetch(&words[probes[j].position >> 6]);
        }
    }
    uint32_t candidates = 0;
    for (size_t j = 0; j < group; j++) {
        if (!(pending >> j & 1) ||
            !(words[probes[j].position >> 6] >> (probes[j].position & 63) & 1))
            continue;
        candidates |= 1u << j;
        for (uint32_t t = 0; t + 1 < k; t++) {
            amq__bloom_probe_next(&probes[j], t);
            __builtin_prefetch(&words[probes[j].position >> 6]);
        }
    }
    for (size_t j = 0; j < group; j++) {
        if ((candidates >> j & 1) && amq_bloom_contains_hash(bloom, views[j])) {
            results[j] = 1;
            pending &= ~(1u << j);
        }
    }
    return pending;
}

void amq_scalable_bloom_contains_many(uint8_t *results, const amq_scalable_bloom *f,
                                      const void *const *keys, const size_t *lens, size_t count)
{
    amq_u128 hashes[SCALABLE_BATCH];
    for (size_t start = 0; start < count; start += SCALABLE_BATCH) {
        size_t group = count - start < SCALABLE_BATCH ? count - start : SCALABLE_BATCH;
        if (blocked(f)) {
            hash_and_prefetch(f, keys + start, lens + start, hashes, group);
            for (size_t j = 0; j < group; j++)
                results[start + j] = amq_scalable_bloom_contains_hash(f, hashes[j]);
            continue;
        }
        uint32_t pending = 0;
        for (size_t j = 0; j < group; j++) {
            hashes[j] = amq__hash128(&f->hasher, keys[start + j], lens[start + j]);
            results[start + j] = 0;
            pending |= 1u << j;
        }
        /* Stage by stage, newest first, as a single query goes. */
        for (size_t i = f->stage_count; i-- > 0 && pending;)
            pending = batch_stage(f->stages[i].bloom, i, hashes, group, pending, results + start);
    }
}

/* ---- what the filter knows about itself --------------------------------------- */

uint64_t amq_scalable_bloom_keys(const amq_scalable_bloom *f)
{
    return f->count;
}

size_t amq_scalable_bloom_stages(const amq_scalable_bloom *f)
{
    return f->stage_count;
}

const amq_bloom *amq_scalable_bloom_stage(const amq_scalable_bloom *f, size_t i)
{
    assert(i < f->stage_count);
    return f->stages[i].bloom;
}

uint64_t amq_scalable_bloom_capacity(const amq_scalable_bloom *f)
{
    uint64_t capacity = 0;
    for (size_t i = 0; i < f->stage_count; i++)
        capacity += f->stages[i].capacity;
    return capacity;
}

uint64_t amq_scalable_bloom_memory_bytes(const amq_scalable_bloom *f)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < f->stage_count; i++)
        bytes += (stage_bits(f, &f->stages[i]) + 63) / 64 * 8;
    return bytes;
}

/* The rate to expect from a stage of m bits, k probes, X bits set and
 * count keys: (X/m)^k, plus the double-hashing floor count/m^2 (see
 * stage_rate). */
static double fill_rate(uint64_t bits_set, uint64_t count, uint64_t m, uint32_t k)
{
    double bits = (double)m;
    return pow((double)bits_set / bits, k) + (double)count / (bits * bits);
}

/* 1 - prod(1 - f_i) for stage rates f_i, without losing rates far below
 * 1 to rounding. */
static double compound_fpr(const double *stage_fprs, size_t count)
{
    double log_none = 0;
    for (size_t i = 0; i < count; i++)
        log_none += log1p(-fmin(stage_fprs[i], 1));
    return -expm1(log_none);
}

/* The rate to expect from stage i (of blocks or bits as st says) when it
 * holds count keys and bits_set set bits: fill_rate for a classic stage;
 * for a blocked one the formula at its count, since keys fall into blocks
 * unevenly and the fill alone would understate it. */
static double stage_expected_rate(const amq_scalable_bloom *f, const stage *st, uint64_t bits_set,
                                  uint64_t count)
{
    if (!blocked(f))
        return fill_rate(bits_set, count, amq_bloom_bits(st->bloom), amq_bloom_hashes(st->bloom));
    return blocked_rate(f->layout, (double)count, st->blocks, st->hashes);
}

/* The keys a blocked stage holds, estimated from its set bits: a key leaves
 * a given bit of its block clear with chance q (31/32 for split-block,
 * (511/512)^k for 512-bit blocks), so the expected fraction set with lambda
 * keys per block is 1 - e^(-lambda (1 - q)). */
static double blocked_keys(const amq_scalable_bloom *f, const stage *st, uint64_t bits_set)
{
    double bits = (double)stage_bits(f, st), x = (double)bits_set;
    if (x >= bits)
        return INFINITY;
    double q =
        f->layout == AMQ_SCALABLE_STAGES_SPLIT_BLOCK ? 31.0 / 32 : pow(511.0 / 512, st->hashes);
    return -(double)st->blocks * log1p(-x / bits) / (1 - q);
}

double amq_scalable_bloom_expected_fpr(const amq_scalable_bloom *f)
{
    double fprs[AMQ_SCALABLE_BLOOM_MAX_STAGES];
    for (size_t i = 0; i < f->stage_count; i++) {
        const stage *st = &f->stages[i];
        fprs[i] = stage_expected_rate(f, st, stage_bits_set(f, st), st->count);
    }
    return compound_fpr(fprs, f->stage_count);
}

static double estimated_count(const amq_scalable_bloom *f)
{
    double keys = 0;
    for (size_t i = 0; i < f->stage_count; i++) {
        const stage *st = &f->stages[i];
        keys +=
            blocked(f) ? blocked_keys(f, st, st->bits_set) : amq_bloom_estimated_keys(st->bloom);
    }
    return keys;
}

double amq_scalable_bloom_fpr(const amq_scalable_bloom *f)
{
    return f->fpr;
}

double amq_scalable_bloom_growth(const amq_scalable_bloom *f)
{
    return f->growth;
}

double amq_scalable_bloom_tightening(const amq_scalable_bloom *f)
{
    return f->tightening;
}

const amq_hasher *amq_scalable_bloom_hasher(const amq_scalable_bloom *f)
{
    return &f->hasher;
}

/* ---- union ------------------------------------------------------------------ */

static int check_compatible(const amq_scalable_bloom *a, const amq_scalable_bloom *b,
                            amq_diag *diag)
{
    if (a->initial_capacity != b->initial_capacity)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters start at %llu and %llu keys",
                         (unsigned long long)a->initial_capacity,
                         (unsigned long long)b->initial_capacity);
    if (a->fpr != b->fpr || a->growth != b->growth || a->tightening != b->tightening)
        return amq__fail(diag, AMQ_EINCOMPATIBLE,
                         "the filters differ in fpr, growth or tightening (%g, %g, %g and %g, "
                         "%g, %g)",
                         a->fpr, a->growth, a->tightening, b->fpr, b->growth, b->tightening);
    if (a->layout != b->layout)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters' stages are %s and %s",
                         stage_layout_names[a->layout], stage_layout_names[b->layout]);
    return amq__hasher_compare(&a->hasher, &b->hasher, diag);
}

/* Set bits of the OR of two stages of the same size (either may be NULL:
 * an empty stage). */
static uint64_t union_bits_set(const amq_scalable_bloom *f, const stage *a, const stage *b)
{
    if (!a || !b)
        return stage_bits_set(f, a ? a : b);
    uint64_t set = 0;
    if (blocked(f)) {
        uint64_t words = a->blocks * words_per_block(f->layout);
        for (uint64_t i = 0; i < words; i++)
            set += (uint64_t)__builtin_popcount(a->words[i] | b->words[i]);
        return set;
    }
    const uint64_t *x = amq__bloom_words(a->bloom), *y = amq__bloom_words(b->bloom);
    uint64_t words = (amq_bloom_bits(a->bloom) + 63) / 64;
    for (uint64_t i = 0; i < words; i++)
        set += (uint64_t)__builtin_popcountll(x[i] | y[i]);
    return set;
}

/* The keys a stage of st's size holds when bits_set of its bits are set,
 * estimated as amq_bloom_estimated_keys estimates them (blocked_keys for
 * blocked stages). */
static double keys_from_bits(const amq_scalable_bloom *f, const stage *st, uint64_t bits_set)
{
    if (blocked(f))
        return blocked_keys(f, st, bits_set);
    double m = (double)amq_bloom_bits(st->bloom), k = amq_bloom_hashes(st->bloom);
    double x = (double)bits_set;
    return x >= m ? INFINITY : -(m / k) * log1p(-x / m);
}

/* OR stage b into stage a (the same size). */
static void merge_stage(const amq_scalable_bloom *f, stage *a, const stage *b)
{
    if (!blocked(f)) {
        int status = amq_bloom_merge(a->bloom, b->bloom, NULL);
        assert(status == AMQ_OK);
        (void)status;
        return;
    }
    uint64_t words = a->blocks * words_per_block(f->layout), set = 0;
    for (uint64_t i = 0; i < words; i++) {
        a->words[i] |= b->words[i];
        set += (uint64_t)__builtin_popcount(a->words[i]);
    }
    a->bits_set = set;
}

static int union_into(amq_scalable_bloom *into, const amq_scalable_bloom *other, amq_diag *diag)
{
    int status = check_compatible(into, other, diag);
    if (status != AMQ_OK)
        return status;
    size_t stages = into->stage_count > other->stage_count ? into->stage_count : other->stage_count;
    /* What every stage of the union would hold, before anything changes. */
    double fprs[AMQ_SCALABLE_BLOOM_MAX_STAGES];
    uint64_t counts[AMQ_SCALABLE_BLOOM_MAX_STAGES];
    for (size_t i = 0; i < stages; i++) {
        const stage *a = i < into->stage_count ? &into->stages[i] : NULL;
        const stage *b = i < other->stage_count ? &other->stages[i] : NULL;
        uint64_t ca = a ? a->count : 0, cb = b ? b->count : 0;
        const stage *any = a ? a : b;
        uint64_t set = union_bits_set(into, a, b);
        /* The keys other brings that into lacks, estimated from how much
         * the OR fills the stage (as amq_bloom_estimated_keys estimates
         * keys from set bits), added to into's count; the result is kept
         * between what the larger side holds and what both hold together. */
        double brought = keys_from_bits(into, any, set) -
                         (a ? keys_from_bits(into, any, stage_bits_set(into, a)) : 0);
        double estimate = (double)ca + brought;
        uint64_t low = ca > cb ? ca : cb, high = ca + cb;
        counts[i] = estimate >= (double)high  ? high
                    : estimate <= (double)low ? low
                                              : (uint64_t)llround(estimate);
        fprs[i] = stage_expected_rate(into, any, set, counts[i]);
    }
    double fpr = compound_fpr(fprs, stages);
    if (fpr > into->fpr)
        return amq__fail(diag, AMQ_EINCOMPATIBLE,
                         "the union's expected false-positive rate %.3g would exceed the "
                         "filters' bound %g",
                         fpr, into->fpr);
    size_t old_count = into->stage_count;
    while (into->stage_count < stages) {
        status = open_stage(into, diag);
        if (status != AMQ_OK) {
            while (into->stage_count > old_count)
                free_stage(&into->stages[--into->stage_count]);
            return status;
        }
    }
    into->count = 0;
    for (size_t i = 0; i < stages; i++) {
        if (i < other->stage_count)
            merge_stage(into, &into->stages[i], &other->stages[i]);
        into->stages[i].count = counts[i];
        into->count += counts[i];
    }
    return AMQ_OK;
}

int amq_scalable_bloom_merge(amq_scalable_bloom *into, const amq_scalable_bloom *other,
                             amq_diag *diag)
{
    assert(into && other);
    return union_into(into, other, diag);
}

/* ---- invariants ------------------------------------------------------------- */

/* Stage i against what the filter's parameters make it; a message on failure. */
/* A blocked stage's part of check_stage: I1 and its set-bit count (I2). */
static int check_blocked_stage(const amq_scalable_bloom *f, size_t i, amq_diag *diag)
{
    const stage *st = &f->stages[i];
    blocked_shape shape;
    if (size_blocked(&shape, f, i, NULL) != AMQ_OK || st->capacity != shape.capacity ||
        st->blocks != shape.blocks || st->hashes != shape.hashes || st->bloom || !st->words)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "stage %zu is not sized as the parameters make it (I1)", i);
    uint64_t words = st->blocks * words_per_block(f->layout), set = 0;
    for (uint64_t w = 0; w < words; w++)
        set += (uint64_t)__builtin_popcount(st->words[w]);
    if (set != st->bits_set)
        return amq__fail(diag, AMQ_ECORRUPT, "stage %zu has %llu bits set, not the %llu kept (I2)",
                         i, (unsigned long long)set, (unsigned long long)st->bits_set);
    return AMQ_OK;
}

static int check_stage(const amq_scalable_bloom *f, size_t i, amq_diag *diag)
{
    const stage *st = &f->stages[i];
    if (blocked(f)) {
        int status = check_blocked_stage(f, i, diag);
        if (status != AMQ_OK)
            return status;
        if (st->count > MAX_STAGE_COUNT)
            return amq__fail(diag, AMQ_ECORRUPT, "stage %zu count %llu is more than 2^56 (I3)", i,
                             (unsigned long long)st->count);
        if (st->bits_set > st->count * st->hashes)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "stage %zu has more bits set than its %llu keys can set (I4)", i,
                             (unsigned long long)st->count);
        return AMQ_OK;
    }
    amq_bloom_params size;
    if (size_stage(&size, f, i, NULL) != AMQ_OK || st->capacity != size.capacity ||
        amq_bloom_bits(st->bloom) != size.bits || amq_bloom_hashes(st->bloom) != size.hashes)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "stage %zu is not sized as the parameters make it (I1)", i);
    if (amq__bloom_check(st->bloom) != AMQ_OK ||
        memcmp(amq_bloom_hasher(st->bloom), &f->hasher, sizeof f->hasher) != 0)
        return amq__fail(diag, AMQ_ECORRUPT, "stage %zu is not a sound classic filter (I2)", i);
    if (st->count > MAX_STAGE_COUNT)
        return amq__fail(diag, AMQ_ECORRUPT, "stage %zu count %llu is more than 2^56 (I3)", i,
                         (unsigned long long)st->count);
    if (amq_bloom_bits_set(st->bloom) > st->count * size.hashes)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "stage %zu has more bits set than its %llu keys can set (I4)", i,
                         (unsigned long long)st->count);
    return AMQ_OK;
}

int amq__scalable_bloom_check(const amq_scalable_bloom *f, amq_diag *diag)
{
    if (f->stage_count < 1 || f->stage_count > AMQ_SCALABLE_BLOOM_MAX_STAGES)
        return amq__fail(diag, AMQ_ECORRUPT, "%zu stages (I1)", f->stage_count);
    uint64_t count = 0;
    for (size_t i = 0; i < f->stage_count; i++) {
        int status = check_stage(f, i, diag);
        if (status != AMQ_OK)
            return status;
        count += f->stages[i].count;
    }
    if (count != f->count)
        return amq__fail(diag, AMQ_ECORRUPT, "the count %llu is not the stages' sum %llu (I3)",
                         (unsigned long long)f->count, (unsigned long long)count);
    return AMQ_OK;
}

/* ---- the generic handle's view ---------------------------------------------- */

static const amq__option option_growth = {
    .name = "growth",
    .type = AMQ__OPTION_REAL,
    .real_min = MIN_GROWTH,
    .real_max = MAX_GROWTH,
    .value_name = "S",
    .help = "how many times larger each new stage is, 1 to 32768 (default 2)",
};
static const amq__option option_tightening = {
    .name = "tightening",
    .type = AMQ__OPTION_REAL,
    .real_min = MIN_TIGHTENING,
    .real_max = MAX_TIGHTENING,
    .help = "the factor each new stage's rate is tightened by, 0.5 to 0.95 (default 0.9)",
};

static const amq__option option_stages = {
    .name = "stages",
    .type = AMQ__OPTION_CHOICE,
    .choices = stage_layout_names, /* indexed by amq_scalable_bloom_layout */
    .help = "classic: k bits anywhere in each stage (default); split-block: one cache line per "
            "stage, one bit in each word of a 256-bit block; block: one cache line per stage, "
            "up to 16 bits in a 512-bit block (smaller below about 0.1% per stage)",
};

static const amq__option *const scalable_options[] = {
    &amq__option_capacity, &amq__option_fpr, &option_growth,
    &option_tightening,    &option_stages,   &amq__option_seed,
    &amq__option_hash,     &amq__option_key, NULL,
};

static int family_create(void **state, const amq__spec *spec, amq_diag *diag)
{
    amq_scalable_bloom_params params = {
        .capacity = amq__spec_count(spec, &amq__option_capacity, DEFAULT_CAPACITY),
        .fpr = amq__spec_real(spec, &amq__option_fpr, DEFAULT_FPR),
        .growth = amq__spec_real(spec, &option_growth, DEFAULT_GROWTH),
        .tightening = amq__spec_real(spec, &option_tightening, DEFAULT_TIGHTENING),
        .stage_layout = (amq_scalable_bloom_layout)amq__spec_choice(spec, &option_stages,
                                                                    AMQ_SCALABLE_STAGES_CLASSIC),
    };
    int status = amq__spec_hasher(spec, &params.hasher, 0, diag);
    if (status != AMQ_OK)
        return status;
    amq_scalable_bloom *f;
    status = new_filter(&f, &params, diag);
    *state = f;
    return status;
}

static int family_add(void *state, const void *key, size_t len)
{
    amq_scalable_bloom *f = state;
    int status = add_hash(f, amq__hash128(&f->hasher, key, len), NULL);
    return status < 0 ? status : AMQ_OK;
}

static int family_add_unique(void *state, const void *key, size_t len)
{
    amq_scalable_bloom *f = state;
    return add_hash(f, amq__hash128(&f->hasher, key, len), NULL);
}

static size_t family_add_many(void *state, const void *const *keys, const size_t *lens,
                              size_t count, int *results)
{
    size_t handled = amq_scalable_bloom_add_many(results, state, keys, lens, count);
    /* amq_add answers AMQ_OK where the typed batch says new or maybe held */
    for (size_t i = 0; i < handled; i++)
        if (results[i] > 0)
            results[i] = AMQ_OK;
    return handled;
}

static size_t family_add_unique_many(void *state, const void *const *keys, const size_t *lens,
                                     size_t count, int *results)
{
    return amq_scalable_bloom_add_many(results, state, keys, lens, count);
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_scalable_bloom_contains(state, key, len);
}

static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    amq_scalable_bloom_contains_many(results, state, keys, lens, count);
    return AMQ_OK;
}

static int family_merge(void *state, const void *other, amq_diag *diag)
{
    return union_into(state, other, diag);
}

/* Parameter block: the filter, then one record per stage, then for
 * blocked stages only, their layout (a block without it is classic). */
#define PARAMS_HEAD_BYTES   44 /* u64 c0 | f64 p | f64 s | f64 r | u64 count | u32 stages */
#define PARAMS_STAGE_BYTES  36 /* u64 m | u32 k | u64 capacity | u64 count | u64 set bits */
#define PARAMS_LAYOUT_BYTES 4  /* u32 stage layout: 1 split-block, 2 block */

static int family_save(const void *state, amq__saved *out)
{
    const amq_scalable_bloom *f = state;
    out->hasher = f->hasher;
    amq__params_put_u64(&out->params, f->initial_capacity);
    amq__params_put_f64(&out->params, f->fpr);
    amq__params_put_f64(&out->params, f->growth);
    amq__params_put_f64(&out->params, f->tightening);
    amq__params_put_u64(&out->params, f->count);
    amq__params_put_u32(&out->params, (uint32_t)f->stage_count);
    for (size_t i = 0; i < f->stage_count; i++) {
        const stage *st = &f->stages[i];
        amq__params_put_u64(&out->params, stage_bits(f, st));
        amq__params_put_u32(&out->params, stage_hashes(f, st));
        amq__params_put_u64(&out->params, st->capacity);
        amq__params_put_u64(&out->params, st->count);
        amq__params_put_u64(&out->params, stage_bits_set(f, st));
        /* Each stage's words little-endian, as a piece of its own: on a
         * big-endian host converted while they are written. */
        out->pieces[i] = blocked(f) ? amq__piece_le_u32(st->words, stage_bits(f, st) / 32)
                                    : amq__bloom_piece(st->bloom);
    }
    if (blocked(f))
        amq__params_put_u32(&out->params, (uint32_t)f->layout);
    out->piece_count = f->stage_count;
    return AMQ_OK;
}

/* One stage's record in the parameter block. */
typedef struct stage_record {
    uint64_t bits, capacity, count, bits_set;
    uint32_t hashes;
} stage_record;

/* The filter's own parameters from a file, validated; no stages yet. */
static int load_head(amq_scalable_bloom *f, uint32_t *stages, amq__params_reader *r, amq_diag *diag)
{
    if (amq__params_get_u64(r, &f->initial_capacity) || amq__params_get_f64(r, &f->fpr) ||
        amq__params_get_f64(r, &f->growth) || amq__params_get_f64(r, &f->tightening) ||
        amq__params_get_u64(r, &f->count) || amq__params_get_u32(r, stages))
        return amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom parameters are %u bytes, too short",
                         r->len);
    if (f->initial_capacity < 1 || f->initial_capacity > MAX_STAGE_CAPACITY)
        return amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom initial capacity %llu is out of range",
                         (unsigned long long)f->initial_capacity);
    if (!(f->fpr > 0 && f->fpr < 1))
        return amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom fpr is not in (0, 1)");
    if (!(f->growth >= MIN_GROWTH && f->growth <= MAX_GROWTH))
        return amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom growth is not in [%g, %g]", MIN_GROWTH,
                         MAX_GROWTH);
    if (!(f->tightening >= MIN_TIGHTENING && f->tightening <= MAX_TIGHTENING))
        return amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom tightening is not in [%g, %g]",
                         MIN_TIGHTENING, MAX_TIGHTENING);
    if (*stages < 1 || *stages > AMQ_SCALABLE_BLOOM_MAX_STAGES)
        return amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom stage count %u is not in [1, %d]",
                         *stages, AMQ_SCALABLE_BLOOM_MAX_STAGES);
    uint32_t expected = PARAMS_HEAD_BYTES + *stages * PARAMS_STAGE_BYTES;
    f->layout = AMQ_SCALABLE_STAGES_CLASSIC;
    if (r->len == expected + PARAMS_LAYOUT_BYTES) {
        /* Blocked stages: the layout follows the records, and is needed to
         * check them. A classic filter never writes the field. */
        uint32_t layout = amq__load_u32le(r->bytes + expected);
        if (layout != AMQ_SCALABLE_STAGES_SPLIT_BLOCK && layout != AMQ_SCALABLE_STAGES_BLOCK)
            return amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom stage layout %u is unknown",
                             layout);
        f->layout = (amq_scalable_bloom_layout)layout;
    } else if (r->len != expected) {
        return amq__fail(diag, AMQ_ECORRUPT,
                         "scalable-bloom parameters are %u bytes, expected %u for %u stages (%u "
                         "with blocked stages)",
                         r->len, expected, *stages, expected + PARAMS_LAYOUT_BYTES);
    }
    return AMQ_OK;
}

/* Every stage record, checked against the parameters and the payload length
 * before anything is allocated for the stages. */
static int load_records(stage_record *records, uint32_t stages, const amq_scalable_bloom *f,
                        amq__params_reader *r, uint64_t payload_len, amq_diag *diag)
{
    uint64_t count = 0, bytes = 0;
    for (uint32_t i = 0; i < stages; i++) {
        stage_record *rec = &records[i];
        if (amq__params_get_u64(r, &rec->bits) || amq__params_get_u32(r, &rec->hashes) ||
            amq__params_get_u64(r, &rec->capacity) || amq__params_get_u64(r, &rec->count) ||
            amq__params_get_u64(r, &rec->bits_set))
            return amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom stage %u record is short", i);
        bool sized;
        if (blocked(f)) {
            blocked_shape shape;
            sized = size_blocked(&shape, f, i, NULL) == AMQ_OK &&
                    rec->bits == shape.blocks * words_per_block(f->layout) * 32 &&
                    rec->hashes == shape.hashes && rec->capacity == shape.capacity;
        } else {
            amq_bloom_params size;
            sized = size_stage(&size, f, i, NULL) == AMQ_OK && rec->bits == size.bits &&
                    rec->hashes == size.hashes && rec->capacity == size.capacity;
        }
        if (!sized)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "scalable-bloom stage %u is not sized as the parameters make it", i);
        if (rec->count > MAX_STAGE_COUNT)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "scalable-bloom stage %u count %llu is more than 2^56", i,
                             (unsigned long long)rec->count);
        if (rec->bits_set > rec->count * rec->hashes)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "scalable-bloom stage %u has more bits set than its %llu keys set", i,
                             (unsigned long long)rec->count);
        count += rec->count;                /* at most 64 * 2^56 */
        bytes += (rec->bits + 63) / 64 * 8; /* at most 64 stages of 2^45 bytes */
    }
    if (count != f->count)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "scalable-bloom count %llu is not the sum of its stages' %llu",
                         (unsigned long long)f->count, (unsigned long long)count);
    if (bytes != payload_len)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "scalable-bloom payload is %llu bytes, its stages need %llu",
                         (unsigned long long)payload_len, (unsigned long long)bytes);
    uint32_t layout;
    if (blocked(f))
        amq__params_get_u32(r, &layout); /* checked by load_head */
    return amq__params_end(r) == AMQ_OK
               ? AMQ_OK
               : amq__fail(diag, AMQ_ECORRUPT, "scalable-bloom parameters have trailing bytes");
}

/* Blocked stage i from its record (checked by load_records) and its saved
 * words: AMQ_ECORRUPT unless the words hold exactly the recorded set bits. */
static int load_blocked_stage(amq_scalable_bloom *f, uint32_t i, const stage_record *rec,
                              const uint8_t *payload, amq_diag *diag)
{
    blocked_shape shape;
    size_blocked(&shape, f, i, NULL);
    uint64_t words = shape.blocks * words_per_block(f->layout), set = 0;
    uint32_t *table = amq__alloc_table(words * 4, false);
    if (!table)
        return amq__fail(diag, AMQ_ENOMEM, "cannot allocate %llu bytes for stage %u",
                         (unsigned long long)(words * 4), i);
    for (uint64_t w = 0; w < words; w++) {
        table[w] = amq__load_u32le(payload + w * 4);
        set += (uint64_t)__builtin_popcount(table[w]);
    }
    if (set != rec->bits_set) {
        amq__aligned_free(table);
        return amq__fail(diag, AMQ_ECORRUPT,
                         "scalable-bloom stage %u has %llu bits set, its record says %llu", i,
                         (unsigned long long)set, (unsigned long long)rec->bits_set);
    }
    f->stages[i] = (stage){ .words = table,
                            .blocks = shape.blocks,
                            .bits_set = set,
                            .hashes = shape.hashes,
                            .capacity = shape.capacity,
                            .count = rec->count };
    f->stage_count = i + 1;
    return AMQ_OK;
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    *borrows_image = false;
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    amq_scalable_bloom *f = amq__calloc(1, sizeof *f);
    if (!f)
        return AMQ_ENOMEM;
    f->hasher = c->hasher;
    uint32_t stages = 0;
    stage_record records[AMQ_SCALABLE_BLOOM_MAX_STAGES];
    int status = load_head(f, &stages, &r, diag);
    if (status == AMQ_OK)
        status = load_records(records, stages, f, &r, c->payload_len, diag);
    uint64_t offset = 0;
    for (uint32_t i = 0; status == AMQ_OK && blocked(f) && i < stages; i++) {
        status = load_blocked_stage(f, i, &records[i], c->payload + offset, diag);
        offset += records[i].bits / 8;
    }
    for (uint32_t i = 0; status == AMQ_OK && !blocked(f) && i < stages; i++) {
        amq_bloom_params size;
        size_stage(&size, f, i, NULL);
        uint64_t len = (size.bits + 63) / 64 * 8;
        amq_diag inner = { .message = "" };
        status = amq__bloom_from_words(&f->stages[i].bloom, &size, AMQ__BLOOM_PROBE_DOUBLE,
                                       records[i].bits_set, c->payload + offset, len, &inner);
        if (status != AMQ_OK) {
            amq__fail(diag, status, "scalable-bloom stage %u: %s", i, inner.message);
            break;
        }
        f->stages[i].capacity = size.capacity;
        f->stages[i].count = records[i].count;
        f->stage_count = i + 1;
        offset += len;
    }
    if (status != AMQ_OK) {
        amq_scalable_bloom_free(f);
        return status;
    }
    *state = f;
    return AMQ_OK;
}

static void family_info(const void *state, amq_info *out)
{
    const amq_scalable_bloom *f = state;
    out->capacity = amq_scalable_bloom_capacity(f);
    out->keys = f->count;
    out->estimated_keys = estimated_count(f);
    out->memory_bytes = amq_scalable_bloom_memory_bytes(f);
    out->bits_per_key = (double)out->memory_bytes * 8 / (double)(f->count ? f->count : 1);
    out->target_fpr = f->fpr;
    out->expected_fpr = amq_scalable_bloom_expected_fpr(f);
    out->hasher = f->hasher;
    amq__info_number(out, "stages", (double)f->stage_count);
    amq__info_number(out, "initial_capacity", (double)f->initial_capacity);
    amq__info_number(out, "growth", f->growth);
    amq__info_number(out, "tightening", f->tightening);
    if (blocked(f))
        amq__info_text(out, "stage_layout", stage_layout_names[f->layout]);
}

static void family_destroy(void *state)
{
    amq_scalable_bloom_free(state);
}

const amq__family amq__scalable_bloom_family = {
    .name = "scalable-bloom",
    .id = AMQ__FAMILY_SCALABLE_BLOOM,
    .options = scalable_options,
    .grows = true,
    .create = family_create,
    .add = family_add,
    .add_unique = family_add_unique,
    .add_many = family_add_many,
    .add_unique_many = family_add_unique_many,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .merge = family_merge,
    .save = family_save,
    .load = family_load,
    .info = family_info,
    .destroy = family_destroy,
};
