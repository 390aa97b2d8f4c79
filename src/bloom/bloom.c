/*
 * bloom.c - the classic Bloom filter (B. H. Bloom, "Space/time trade-offs in
 * hash coding with allowable errors", CACM 13(7), 1970).
 *
 * The filter is m bits, all 0 at first. A key is hashed once, to 128 bits
 * with the filter's hasher, and the 128 bits h = (h.low, h.high) give k bit
 * positions by the filter's probe sequence, of which there are two. A new
 * filter uses version 2; a file names its version (a file without the
 * field, as every file before it was, is version 1), and a loaded filter
 * keeps it, so that a saved filter answers every key exactly as it did.
 *
 * Version 2, a multiplicative rehash chain. A 64-bit state starts at h.low
 * and steps by an LCG whose increment is the other half,
 *
 *     s(0) = h.low,   s(i+1) = s(i) * C + (h.high | 1)   (mod 2^64)
 *     position i = reduce(s(i), m) = floor(s(i) * m / 2^64)  (multiply-high)
 *
 * with C = 0xd1342543de82ef95, a multiplier with good spectral scores in
 * dimensions 2 to 8 (Steele and Vigna, 2022). The pair (s(0), s(1)) is a
 * bijection of (h.low, h.high | 1), so the states carry all 127 bits, and
 * each position is the top bits of a fresh state: two keys whose first
 * positions agree have states that differ by d(0), d(1) below 2^64 / m,
 * and d(i) = a_i d(0) + b_i d(1) (mod 2^64) for large, unrelated a_i, b_i,
 * so the later positions agree only by chance, about 1/m each. Two keys
 * share all k positions with a chance near (1/m)^k, as independent
 * positions would, which the fill's (X/m)^k below already counts; what is
 * left is the chance that an absent key's 127 hash bits are a stored
 * key's, n / 2^127: with m <= 2^48 and n <= m (ln 2)^2 / ln(1/p), that is
 * below p / 10^6 for every p down to 5e-20, where the clamp of k below
 * stops the filter from reaching p anyway. It costs
 * a 64-bit multiply-add per position in the chain and the multiply-high of
 * the reduction beside it, where version 1 adds and subtracts; but no
 * position waits on a comparison with m, so a query is no slower than
 * version 1's (CHANGELOG.md's performance history has the measurement).
 *
 * Version 1, enhanced double hashing (P. C. Dillinger and P. Manolios,
 * "Bloom Filters in Probabilistic Verification", FMCAD 2004): with
 *
 *     x = reduce(h.low, m),   y = reduce(h.high, m)
 *
 * position i is g(i) = x + i*y + (i^3 - i)/6 (mod m), computed without
 * division or multiplication as
 *
 *     g = x;  for i = 0 .. k-1:  use g;  g = (g + y) mod m;  y = (y + i + 1) mod m
 *
 * where each "mod m" is one conditional subtraction (both terms are below
 * m, and i + 1 <= k <= 64 <= m). The cubic term keeps a key's positions
 * apart when y = 0, where plain double hashing (g = x + i*y) puts all k on
 * x. But every position is fixed by the pair (x, y), which takes only m^2
 * values: an absent key whose pair is one of the n stored keys' shares all
 * of that key's positions, whatever k. That puts a floor under the rate,
 *
 *     P(pair shared) = 1 - (1 - 1/m^2)^n  ~  n / m^2,
 *
 * which is nothing at p = 1% (m = 9.6 n: 1 / (92 n)) but passes p as p
 * falls, since m grows only with ln(1/p): at n = 1000, p = 1e-9 (m = 43133)
 * it is 5.4e-7, 540 times p (measured: 13 false positives in 2 * 10^7
 * absent keys where 0.02 were due), and at n = 10, p = 1e-15 (m = 719,
 * k = 50) it is 1.9e-5. No sequence that draws its positions from a
 * bounded number of values in [0, m) can do better at small n and tiny p;
 * each position needs fresh hash bits, which version 2 gives them. A
 * version-1 filter keeps answering as it did; its expected rate
 * (amq_bloom_expected_fpr, amq info) is the floor F plus the fill's rate
 * for the other keys, F + (1 - F) (X/m)^k, with n estimated from X as
 * below, so that it says what the filter really delivers.
 *
 * Adding sets the k bits; a query reads them two at a time and stops at the
 * first pair with a clear bit. In a filter at capacity each bit is set with
 * probability 1/2, so an absent key is rejected by its first pair three
 * times in four. Testing bit by bit reads fewer words (two on average) but
 * puts an unpredictable branch after each read, and each mispredicted exit
 * costs more than the read it saves; reading all k bits before one branch
 * is no faster for present keys and reads k words for every absent one
 * (CHANGELOG.md's performance history has the figures). The filter counts its set bits X as they
 * change (an add knows whether each bit was already set), which gives in
 * O(1):
 *
 *     estimated distinct keys   n = -(m/k) ln(1 - X/m)     (Swamidass-Baldi)
 *     FPR to expect now         (X/m)^k   (version 1: with the floor above)
 *
 * Sizing, from capacity n and rate p (see calc.h for the relations):
 *
 *     m = ceil(-n ln p / (ln 2)^2),   k = round((m/n) ln 2)
 *
 * clamped to m >= 64 (so version 1's mod-m step stays a single subtraction)
 * and k in [1, 64]. At p = 1% that is 9.59 bits per key and k = 7. Where
 * the optimal k would pass 64 (p below about 2^-64, 5e-20), k is 64 and m
 * is the size that reaches p with 64 hashes, m = -64 n / ln(1 - p^(1/64)).
 * A p below twice the probe floor n 2^-127 cannot be had at any size: the
 * filter is sized for twice the floor, and amq info shows the rate it has
 * at capacity (fpr_at_capacity) beside the target.
 *
 * Layout in memory and on disk: ceil(m/64) 64-bit words; bit i is bit
 * (i mod 64) of word i/64; bits past m in the last word are 0. The file
 * payload is those words little-endian; the parameter block holds m, k, the
 * capacity, the target p, X and the probe version, which version 1 leaves
 * out (so that it saves the bytes it was loaded from, which any amq reads):
 *
 *     params:  u64 m | u32 k | u64 capacity | f64 target p | u64 X      (36 bytes: version 1)
 *              ... | u32 probe version (2)                             (40 bytes)
 *
 * bloom_family.c writes and reads them, as the generic handle's view.
 *
 * Invariants, checked by amq__bloom_check() (tests call it after mutations
 * and loads):
 *   I1  64 <= m <= AMQ_BLOOM_MAX_BITS, 1 <= k <= AMQ_BLOOM_MAX_HASHES,
 *       and the probe version is 1 or 2;
 *   I2  the bits past m in the last word are 0;
 *   I3  X equals the number of set bits.
 *
 * Concurrent adds (amq_bloom_add_concurrent) set each bit with a relaxed
 * atomic fetch-or on its 64-bit word, skipped when a relaxed load finds the
 * bit set already; the bits a call set (from the fetch-or's old value) go
 * into X with one atomic add, kept on a cache line of its own, so X, the
 * estimate and I3 stay exact whatever the interleaving. OR is
 * order-independent: the words after any set of adds, concurrent or not,
 * are the same. A query that may run beside them reads the words with
 * relaxed atomic loads (amq_bloom_contains_concurrent); the plain add and
 * query keep their plain accesses and their speed.
 *
 * Only new, load, union/intersection set-up and save allocate; add and
 * contains never do. Nothing here fails on a query: the typed queries
 * return bool.
 */
#include "bloom/bloom_internal.h"
#include "core/alloc.h"

#include "amq/calc.h"
#include "core/bits.h"
#include "core/hash.h"
#include "core/util.h"

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const double LN2 = 0.69314718055994530942;

/* ---- sizing ---------------------------------------------------------------- */

int amq__bloom_size(uint64_t *bits, uint32_t *hashes, uint64_t *capacity,
                    const amq_bloom_params *params, amq_diag *diag)
{
    double p = params->fpr == 0 ? 0.01 : params->fpr;
    if (!(p > 0 && p < 1))
        return amq__fail(diag, AMQ_EINVAL, "fpr %g is not between 0 and 1", p);
    uint64_t m = params->bits, n = params->capacity;
    int status;
    if (m == 0) {
        if (n == 0)
            return amq__fail(diag, AMQ_EINVAL, "give a capacity (n) or a number of bits (m)");
        /* No size takes the rate under the probe's floor: aim at the floor
         * instead of spending bits on a rate that cannot be had. */
        double floor = amq__bloom_probe_floor(AMQ__BLOOM_PROBE_LATEST, 0, (double)n);
        double aim = p < 2 * floor ? 2 * floor : p;
        status = amq_calc_optimal_m(&m, n, aim, NULL);
        if (status == AMQ_OK && params->hashes == 0 &&
            round((double)m / (double)n * LN2) > AMQ_BLOOM_MAX_HASHES) {
            /* Past 64 hashes, more bits instead: the m that reaches the
             * rate with k = 64. */
            amq_calc at_most = { .n = n, .k = AMQ_BLOOM_MAX_HASHES, .p = aim };
            status = amq_calc_solve(&at_most, AMQ_CALC_N | AMQ_CALC_K | AMQ_CALC_P, NULL);
            m = at_most.m;
        }
        if (status != AMQ_OK)
            return amq__fail(diag, status, "%llu keys at fpr %g need more than 2^64 bits",
                             (unsigned long long)n, p);
        if (m < AMQ_BLOOM_MIN_BITS)
            m = AMQ_BLOOM_MIN_BITS;
    } else if (n == 0) {
        /* The keys m bits hold at p with the optimal k. */
        double held = -(double)m * LN2 * LN2 / log(p);
        n = held < 1 ? 1 : held >= (double)m ? m : (uint64_t)held; /* p near 1: a key a bit */
    }
    if (m < AMQ_BLOOM_MIN_BITS || m > AMQ_BLOOM_MAX_BITS)
        return amq__fail(diag, AMQ_ERANGE, "%llu bits is outside [%d, 2^48]", (unsigned long long)m,
                         AMQ_BLOOM_MIN_BITS);
    uint32_t k = params->hashes;
    if (k == 0) {
        double optimal = round((double)m / (double)n * LN2);
        k = optimal < 1                      ? 1
            : optimal > AMQ_BLOOM_MAX_HASHES ? AMQ_BLOOM_MAX_HASHES
                                             : (uint32_t)optimal;
    }
    if (k > AMQ_BLOOM_MAX_HASHES)
        return amq__fail(diag, AMQ_ERANGE, "%u hash functions is more than %d", k,
                         AMQ_BLOOM_MAX_HASHES);
    *bits = m;
    *hashes = k;
    *capacity = n;
    return AMQ_OK;
}

int amq__bloom_new(amq_bloom **out, const amq_bloom_params *params, unsigned version,
                   amq_diag *diag)
{
    *out = NULL;
    amq_hasher hasher;
    int status = amq__hasher_resolve(&hasher, &params->hasher, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t m = 0, n = 0;
    uint32_t k = 0;
    status = amq__bloom_size(&m, &k, &n, params, diag);
    if (status != AMQ_OK)
        return status;
    amq_bloom *f = amq__calloc(1, sizeof *f);
    if (!f)
        return AMQ_ENOMEM;
    status = amq__bitvec_init(&f->bits, m);
    if (status != AMQ_OK) {
        amq__free(f);
        return amq__fail(diag, status, "cannot allocate %llu bits", (unsigned long long)m);
    }
    f->hashes = k;
    f->capacity = n;
    f->target_fpr = params->fpr == 0 ? 0.01 : params->fpr;
    f->probe_version = version;
    f->hasher = hasher;
    *out = f;
    return AMQ_OK;
}

void amq_bloom_params_init(amq_bloom_params *params)
{
    assert(params);
    memset(params, 0, sizeof *params);
    amq_hasher_xxh3(&params->hasher, 0);
}

int amq_bloom_new(amq_bloom **out, const amq_bloom_params *params, amq_diag *diag)
{
    assert(out && params);
    return amq__bloom_new(out, params, AMQ__BLOOM_PROBE_LATEST, diag);
}

void amq_bloom_free(amq_bloom *filter)
{
    if (!filter)
        return;
    amq__bitvec_free(&filter->bits);
    amq__free(filter);
}

void amq_bloom_clear(amq_bloom *f)
{
    memset(f->bits.words, 0, amq__bitvec_words_for(f->bits.bit_count) * 8);
    f->bits_set = 0;
}

/* ---- add and query ----------------------------------------------------------- */

uint32_t amq__bloom_add_hash_new_bits(amq_bloom *f, amq_u128 hash)
{
    uint32_t new_bits = 0;
    amq__bloom_probe p = amq__bloom_probe_start(hash, f->bits.bit_count, f->probe_version);
    for (uint32_t i = 0; i < f->hashes; i++) {
        new_bits += !amq__bitvec_test_and_set(&f->bits, p.position);
        amq__bloom_probe_next(&p, i);
    }
    f->bits_set += new_bits;
    return new_bits;
}

void amq_bloom_add_hash(amq_bloom *f, amq_u128 hash)
{
    amq__bloom_add_hash_new_bits(f, hash);
}

void amq_bloom_add(amq_bloom *f, const void *key, size_t len)
{
    amq_bloom_add_hash(f, amq__hash128(&f->hasher, key, len));
}

void amq_bloom_add_concurrent(amq_bloom *f, const void *key, size_t len)
{
    amq_u128 hash = amq__hash128(&f->hasher, key, len);
    uint64_t positions[AMQ_BLOOM_MAX_HASHES];
    amq__bloom_probe p = amq__bloom_probe_start(hash, f->bits.bit_count, f->probe_version);
    /* Every line fetched, for writing, before the first locked write: on
     * x86 a locked instruction waits for the loads before it, so misses
     * taken one by one between them would not overlap. */
    for (uint32_t i = 0; i < f->hashes; i++) {
        positions[i] = p.position;
        __builtin_prefetch(&f->bits.words[p.position >> 6], 1);
        amq__bloom_probe_next(&p, i);
    }
    uint32_t new_bits = 0;
    for (uint32_t i = 0; i < f->hashes; i++)
        new_bits += !amq__bitvec_test_and_set_atomic(&f->bits, positions[i]);
    /* Each bit is counted by the one fetch-or that set it, so X stays exact. */
    if (new_bits)
        atomic_fetch_add_explicit((_Atomic uint64_t *)&f->bits_set, new_bits, memory_order_relaxed);
}

void amq_bloom_add_many(uint8_t *added, amq_bloom *f, const void *const *keys, const size_t *lens,
                        size_t count)
{
    const amq__bloom_table table = { (const uint8_t *)f->bits.words, 0, f->bits.bit_count,
                                     f->hashes, f->probe_version };
    amq_u128 hashes[AMQ__BLOOM_ADD_GROUP];
    for (size_t start = 0; start < count; start += AMQ__BLOOM_ADD_GROUP) {
        size_t group = count - start < AMQ__BLOOM_ADD_GROUP ? count - start : AMQ__BLOOM_ADD_GROUP;
        /* The first bit of each key prefetched (amq_bloom_add_many's doc). */
        amq__bloom_hash_group(hashes, &table, 1, &f->hasher, keys + start, lens + start, group);
        for (size_t j = 0; j < group; j++) {
            uint32_t new_bits = amq__bloom_add_hash_new_bits(f, hashes[j]);
            if (added)
                added[start + j] = new_bits > 0;
        }
    }
}

static bool bit_set(const void *f, uint64_t position)
{
    return amq__bitvec_get(&((const amq_bloom *)f)->bits, position);
}

bool amq_bloom_contains_hash(const amq_bloom *f, amq_u128 hash)
{
    return amq__bloom_all_set(f, bit_set, hash, f->bits.bit_count, f->hashes, f->probe_version);
}

bool amq_bloom_contains(const amq_bloom *f, const void *key, size_t len)
{
    return amq_bloom_contains_hash(f, amq__hash128(&f->hasher, key, len));
}

static bool bit_set_atomic(const void *f, uint64_t position)
{
    return amq__bitvec_get_atomic(&((const amq_bloom *)f)->bits, position);
}

bool amq_bloom_contains_concurrent(const amq_bloom *f, const void *key, size_t len)
{
    return amq__bloom_all_set(f, bit_set_atomic, amq__hash128(&f->hasher, key, len),
                              f->bits.bit_count, f->hashes, f->probe_version);
}

/* The batch queries' pointers are restrict: results is a byte array, and
 * without the promise that it overlaps nothing else each store to it could
 * change the filter's words pointer or size as far as the compiler knows,
 * which the loop would then load again for every slot. */
void amq_bloom_contains_many(uint8_t *restrict results, const amq_bloom *restrict f,
                             const void *const *restrict keys, const size_t *restrict lens,
                             size_t count)
{
    amq__bloom_table table = { (const uint8_t *)f->bits.words, 0, f->bits.bit_count, f->hashes,
                               f->probe_version };
    amq__bloom_contains_many(f, bit_set, &table, &f->hasher, keys, lens, NULL, count, results,
                             false);
}

void amq_bloom_contains_many_hash(uint8_t *restrict results, const amq_bloom *restrict f,
                                  const amq_u128 *restrict hashes, size_t count)
{
    amq__bloom_table table = { (const uint8_t *)f->bits.words, 0, f->bits.bit_count, f->hashes,
                               f->probe_version };
    amq__bloom_contains_many(f, bit_set, &table, NULL, NULL, NULL, hashes, count, results, true);
}

/* ---- what the filter knows about itself ----------------------------------------- */

/* X, read atomically: concurrent adds may be counting into it. */
static uint64_t bits_set_now(const amq_bloom *f)
{
    return amq__atomic_load_u64(&f->bits_set);
}

double amq_bloom_estimated_keys(const amq_bloom *f)
{
    uint64_t set = bits_set_now(f);
    double m = (double)f->bits.bit_count, x = (double)set;
    if (set >= f->bits.bit_count)
        return INFINITY;
    return -(m / f->hashes) * log1p(-x / m);
}

double amq_bloom_expected_fpr(const amq_bloom *f)
{
    return amq__bloom_expected_fpr(f->probe_version, f->bits.bit_count, f->hashes, bits_set_now(f),
                                   amq_bloom_estimated_keys(f));
}

uint64_t amq_bloom_bits(const amq_bloom *f)
{
    return f->bits.bit_count;
}

uint32_t amq_bloom_hashes(const amq_bloom *f)
{
    return f->hashes;
}

uint64_t amq_bloom_bits_set(const amq_bloom *f)
{
    return bits_set_now(f);
}

uint64_t amq_bloom_capacity(const amq_bloom *f)
{
    return f->capacity;
}

const amq_hasher *amq_bloom_hasher(const amq_bloom *f)
{
    return &f->hasher;
}

unsigned amq__bloom_probe_version(const amq_bloom *f)
{
    return f->probe_version;
}

/* ---- union and intersection ---------------------------------------------------- */

static int check_compatible(const amq_bloom *a, const amq_bloom *b, amq_diag *diag)
{
    if (a->bits.bit_count != b->bits.bit_count)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters have %llu and %llu bits",
                         (unsigned long long)a->bits.bit_count,
                         (unsigned long long)b->bits.bit_count);
    if (a->hashes != b->hashes)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters use %u and %u hash functions",
                         a->hashes, b->hashes);
    if (a->probe_version != b->probe_version)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters use probe versions %u and %u",
                         a->probe_version, b->probe_version);
    return amq__hasher_compare(&a->hasher, &b->hasher, diag);
}

static int combine(amq_bloom *into, const amq_bloom *other, bool intersect, amq_diag *diag)
{
    int status = check_compatible(into, other, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t words = amq__bitvec_words_for(into->bits.bit_count);
    for (uint64_t i = 0; i < words; i++) {
        if (intersect)
            into->bits.words[i] &= other->bits.words[i];
        else
            into->bits.words[i] |= other->bits.words[i];
    }
    into->bits_set = amq__bitvec_popcount(&into->bits);
    return AMQ_OK;
}

int amq_bloom_merge(amq_bloom *into, const amq_bloom *other, amq_diag *diag)
{
    assert(into && other);
    return combine(into, other, false, diag);
}

int amq_bloom_intersect(amq_bloom *into, const amq_bloom *other, amq_diag *diag)
{
    assert(into && other);
    return combine(into, other, true, diag);
}

/* ---- invariants -------------------------------------------------------------- */

int amq__bloom_check(const amq_bloom *f)
{
    uint64_t m = f->bits.bit_count;
    if (m < AMQ_BLOOM_MIN_BITS || m > AMQ_BLOOM_MAX_BITS || f->hashes < 1 ||
        f->hashes > AMQ_BLOOM_MAX_HASHES ||
        (f->probe_version != AMQ__BLOOM_PROBE_DOUBLE &&
         f->probe_version != AMQ__BLOOM_PROBE_REHASH))
        return AMQ_ECORRUPT; /* I1 */
    if (m % 64 != 0 && (f->bits.words[m / 64] >> (m % 64)) != 0)
        return AMQ_ECORRUPT; /* I2 */
    if (amq__bitvec_popcount(&f->bits) != f->bits_set)
        return AMQ_ECORRUPT; /* I3 */
    return AMQ_OK;
}

const uint64_t *amq__bloom_words(const amq_bloom *f)
{
    return f->bits.words;
}

/* ---- saved words, for the scalable filter's stages ------------------------------ */

amq__piece amq__bloom_piece(const amq_bloom *f)
{
    return amq__bitvec_piece(&f->bits);
}

int amq__bloom_from_words(amq_bloom **out, const amq_bloom_params *params, unsigned version,
                          uint64_t bits_set, const uint8_t *words, uint64_t len, amq_diag *diag)
{
    *out = NULL;
    uint64_t m = params->bits;
    if (m < AMQ_BLOOM_MIN_BITS || m > AMQ_BLOOM_MAX_BITS)
        return amq__fail(diag, AMQ_ECORRUPT, "bloom bit count %llu is out of range",
                         (unsigned long long)m);
    if (params->hashes < 1 || params->hashes > AMQ_BLOOM_MAX_HASHES)
        return amq__fail(diag, AMQ_ECORRUPT, "bloom hash count %u is out of range", params->hashes);
    if (!(params->fpr > 0 && params->fpr < 1))
        return amq__fail(diag, AMQ_ECORRUPT, "bloom target fpr is not in (0, 1)");
    if (version != AMQ__BLOOM_PROBE_DOUBLE && version != AMQ__BLOOM_PROBE_REHASH)
        return amq__fail(diag, AMQ_ECORRUPT, "bloom probe version %u is unknown", version);
    amq_bloom *f = amq__calloc(1, sizeof *f);
    if (!f)
        return AMQ_ENOMEM;
    int status = amq__bitvec_load_words(&f->bits, m, words, len, diag);
    if (status != AMQ_OK) {
        amq__free(f);
        return status;
    }
    f->hashes = params->hashes;
    f->capacity = params->capacity;
    f->target_fpr = params->fpr;
    f->probe_version = version;
    f->hasher = params->hasher;
    f->bits_set = bits_set;
    if (amq__bloom_check(f) != AMQ_OK) {
        amq_bloom_free(f);
        return amq__fail(diag, AMQ_ECORRUPT,
                         "bloom payload disagrees with its parameters (set-bit count)");
    }
    *out = f;
    return AMQ_OK;
}
