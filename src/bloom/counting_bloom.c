/*
 * counting_bloom.c - the counting Bloom filter (L. Fan, P. Cao, J. Almeida,
 * A. Z. Broder, "Summary Cache: A Scalable Wide-Area Web Cache Sharing
 * Protocol", IEEE/ACM Transactions on Networking 8(3), 2000).
 *
 * A classic Bloom filter (bloom.c) whose m bits are m small counters, so
 * that keys can be removed. A key is hashed once, to 128 bits, and those
 * give its k positions by the classic filter's probe sequence
 * (amq__bloom_probe_*: version 2, the rehash chain, for a new filter;
 * version 1, enhanced double hashing, for a file saved without the version
 * field; bloom.c says why there are two). Then
 *
 *     add       increments the key's k counters,
 *     remove    decrements them,
 *     contains  answers "maybe" when all k are non-zero.
 *
 * Sizing is the classic filter's (amq__bloom_size), with counters in place
 * of bits: from capacity n and rate p, m = ceil(-n ln p / (ln 2)^2) and
 * k = round((m/n) ln 2), or m and k given. A counting filter and a classic
 * one with the same parameters, hasher and probe version therefore probe
 * the same positions, and the counting filter's non-zero counters are
 * exactly the classic filter's set bits: the FPR, (X/m)^k with X non-zero
 * counters (plus version 1's pair floor, about n/m^2), and the count
 * estimate n = -(m/k) ln(1 - X/m) are the classic formulas. The
 * price is memory: w = 4 bits per counter (or 8), so 4 (or 8) times the
 * classic filter's size at the same FPR.
 *
 * Saturation. A w-bit counter holds 0 .. 2^w - 1. One that reaches the
 * maximum (15 or 255) is saturated: its true count is no longer known, so
 * add leaves it at the maximum and remove never decrements it. A saturated
 * counter can only cause false positives, never false negatives. With
 * 4-bit counters at the optimal k each counter holds a Poisson(ln 2) count
 * at capacity, and reaches 15 with probability 1.6e-15 (Fan et al. bound
 * the chance that any of m counters reaches 16 by 1.37e-15 m): saturation
 * means heavy overfill, or one key added many times. The filter keeps the number of saturated
 * counters.
 *
 * Removal and its two caveats.
 *   - A key with a zero counter is certainly absent: remove first reads all
 *     k counters and, if one is 0, changes nothing and answers
 *     AMQ_ENOTFOUND. A key's k positions can repeat (two probes landing on
 *     one counter, as version 1's do when the hash's step is 0, and either
 *     version's do by chance); add then
 *     increments that counter twice and remove decrements it twice. If the
 *     second decrement meets a 0, the counter was lower than the key's
 *     multiplicity on it, so the key was never added: the decrements done
 *     so far are undone (by incrementing the same first positions again,
 *     which restores every counter exactly since none of them was
 *     saturated) and the answer is AMQ_ENOTFOUND. So removing a key always
 *     undoes exactly what adding it did, unless a counter saturated.
 *   - A key that was never added but is a false positive has all k
 *     counters non-zero, and removing it decrements counters that belong to
 *     other keys. A counter that falls to 0 turns every key on it into a
 *     false negative. At capacity a non-zero counter is 1 with probability
 *     ln 2 (about 0.69), so one such removal costs about 0.69 k keys (4.9
 *     at p = 1%); the benchmark measures it. Remove only keys you added.
 *
 * Layout in memory and on disk: the counters packed in bytes, counter i at
 * bit offset i*w of the array, least significant bits first. With w = 4,
 * counter 2j is the low nibble of byte j and counter 2j+1 the high nibble:
 *
 *     byte:      0           1           2
 *            +-----+-----+-----+-----+-----+-----+--
 *            | c1  | c0  | c3  | c2  | c5  | c4  |  ...
 *            +-----+-----+-----+-----+-----+-----+--
 *             7..4  3..0  7..4  3..0
 *
 * With w = 8, counter i is byte i. Both are ceil(m*w/8) bytes, which are
 * the file payload as they are, on any host (no counter crosses a byte).
 * In memory the array comes from amq__alloc_table, as the classic filter's
 * bits do (cache-line aligned; from 2 MiB up, on 2 MiB pages where the
 * kernel grants them), zero past the counters up to a multiple of 8 bytes
 * at least, so the invariant check can read it in 64-bit words. The
 * parameter block:
 *
 *     params:  u64 m | u32 k | u32 w | u64 capacity | f64 target p
 *            | u64 non-zero counters | u64 saturated counters     (48 bytes: version 1)
 *            | u32 probe version (2)                              (52 bytes)
 *
 * Version 1 leaves the last field out, so that a filter loaded from a file
 * of an earlier amq saves the same bytes, which that amq still reads.
 * counting_bloom_family.c writes and reads them, as the generic handle's
 * view.
 *
 * Invariants, checked by amq__counting_bloom_check() (tests call it after
 * mutations; the loader refuses a file that breaks one):
 *   I1  64 <= m <= AMQ_BLOOM_MAX_BITS, 1 <= k <= AMQ_BLOOM_MAX_HASHES,
 *       w is 4 or 8, the probe version is 1 or 2;
 *   I2  every bit of the array past the last counter is 0;
 *   I3  the non-zero count equals the number of counters that are not 0;
 *   I4  the saturated count equals the number of counters at 2^w - 1.
 * Add and remove keep I3 and I4 in O(k), from the values they change; the
 * check recounts in O(m), 16 (or 8) counters per 64-bit word.
 *
 * Merge is the saturating sum of two filters' counters (of the same m, k,
 * w, hasher and probe version): the result holds
 * both key multisets and can still remove keys of either.
 *
 * Only new and load allocate; add, remove, contains and save never do. Queries cannot fail; remove
 * fails only with AMQ_ENOTFOUND.
 */
#include "bloom/bloom_internal.h"
#include "core/alloc.h"

#include "core/bits.h"
#include "core/hash.h"
#include "core/util.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned counter_width(const amq_counting_bloom *f)
{
    return 1u << f->width_log2;
}

/* The largest value a counter holds: 15 or 255. */
static unsigned counter_max(const amq_counting_bloom *f)
{
    return (1u << counter_width(f)) - 1;
}

/* Counter i's value; bit is i * w, its offset in the array. */
static inline unsigned counter_at(const uint8_t *counters, uint64_t bit, unsigned max)
{
    return (unsigned)(counters[bit >> 3] >> (bit & 7)) & max;
}

/* The bytes of amq__counting_bloom_stored_bytes rounded up to whole 64-bit
 * words, for the in-memory array. */
static uint64_t allocated_bytes_for(uint64_t stored_bytes)
{
    return (stored_bytes + 7) / 8 * 8;
}

/* ---- creating ------------------------------------------------------------------ */

int amq__counting_bloom_allocate(amq_counting_bloom **out, uint64_t m, unsigned width_log2,
                                 amq_diag *diag)
{
    uint64_t stored = amq__counting_bloom_stored_bytes(m, width_log2);
    uint64_t allocated = allocated_bytes_for(stored);
    if (allocated > SIZE_MAX)
        return amq__fail(diag, AMQ_ERANGE, "%llu counters do not fit this machine's memory",
                         (unsigned long long)m);
    amq_counting_bloom *f = amq__calloc(1, sizeof *f);
    if (!f)
        return AMQ_ENOMEM;
    f->counters = amq__alloc_table(allocated, true);
    if (!f->counters) {
        amq__free(f);
        return amq__fail(diag, AMQ_ENOMEM, "cannot allocate %llu counters (%llu bytes)",
                         (unsigned long long)m, (unsigned long long)allocated);
    }
    f->counter_count = m;
    f->stored_bytes = stored;
    f->width_log2 = width_log2;
    *out = f;
    return AMQ_OK;
}

int amq__counting_bloom_new(amq_counting_bloom **out, const amq_counting_bloom_params *params,
                            unsigned version, amq_diag *diag)
{
    *out = NULL;
    uint32_t bits = params->counter_bits == 0 ? 4 : params->counter_bits;
    if (bits != 4 && bits != 8)
        return amq__fail(diag, AMQ_EINVAL, "counters are 4 or 8 bits wide, not %u", bits);
    amq_bloom_params sizing = {
        .capacity = params->capacity,
        .fpr = params->fpr,
        .bits = params->counters,
        .hashes = params->hashes,
        .hasher = params->hasher,
    };
    int status = amq__hasher_resolve(&sizing.hasher, &params->hasher, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t m = 0, n = 0;
    uint32_t k = 0;
    status = amq__bloom_size(&m, &k, &n, &sizing, diag);
    if (status != AMQ_OK)
        return status;
    amq_counting_bloom *f = NULL;
    status = amq__counting_bloom_allocate(&f, m, bits == 8 ? 3 : 2, diag);
    if (status != AMQ_OK)
        return status;
    f->hashes = k;
    f->capacity = n;
    f->target_fpr = params->fpr == 0 ? 0.01 : params->fpr;
    f->probe_version = version;
    f->hasher = sizing.hasher;
    *out = f;
    return AMQ_OK;
}

void amq_counting_bloom_params_init(amq_counting_bloom_params *params)
{
    assert(params);
    memset(params, 0, sizeof *params);
    amq_hasher_xxh3(&params->hasher, 0);
}

int amq_counting_bloom_new(amq_counting_bloom **out, const amq_counting_bloom_params *params,
                           amq_diag *diag)
{
    assert(out && params);
    return amq__counting_bloom_new(out, params, AMQ__BLOOM_PROBE_LATEST, diag);
}

void amq_counting_bloom_free(amq_counting_bloom *filter)
{
    if (!filter)
        return;
    amq__aligned_free(filter->counters);
    amq__free(filter);
}

void amq_counting_bloom_clear(amq_counting_bloom *f)
{
    memset(f->counters, 0, (size_t)allocated_bytes_for(f->stored_bytes));
    f->nonzero = 0;
    f->saturated = 0;
}

/* ---- add, remove and query ------------------------------------------------------ */

/* Increment the counters at the first `count` of the key's k positions,
 * leaving saturated ones alone. Add runs it over all k; remove runs it over
 * the positions it had decremented, to undo them. Everything is read into
 * locals first: the counter bytes may alias any field of f. */
static void increment_first(amq_counting_bloom *f, amq_u128 hash, uint32_t count)
{
    uint8_t *counters = f->counters;
    const unsigned width_log2 = f->width_log2, max = counter_max(f);
    uint64_t became_nonzero = 0, became_saturated = 0;
    amq__bloom_probe p = amq__bloom_probe_start(hash, f->counter_count, f->probe_version);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t bit = p.position << width_log2;
        unsigned shift = (unsigned)(bit & 7);
        uint8_t *byte = counters + (bit >> 3);
        unsigned value = (unsigned)(*byte >> shift) & max;
        if (AMQ__LIKELY(value != max)) {
            *byte = (uint8_t)(*byte + (1u << shift));
            became_nonzero += value == 0;
            became_saturated += value + 1 == max;
        }
        amq__bloom_probe_next(&p, i);
    }
    f->nonzero += became_nonzero;
    f->saturated += became_saturated;
}

void amq_counting_bloom_add_hash(amq_counting_bloom *f, amq_u128 hash)
{
    increment_first(f, hash, f->hashes);
}

void amq_counting_bloom_add(amq_counting_bloom *f, const void *key, size_t len)
{
    increment_first(f, amq__hash128(&f->hasher, key, len), f->hashes);
}

/* A batch add into a table the caches hold adds its keys as they come, as
 * the single add does: the group's hashes and prefetches would only cost
 * (at 10^5 keys, 35 ns a key against 25 key by key). A larger one hashes
 * a group of keys and prefetches all k counters of each before it adds
 * them, where the classic filter's batch prefetches the first bit only:
 * the counters take 4 or 8 times the bits, so each key's k counters are k
 * lines fetched from memory, which the single add waits for one after the
 * other. */
int amq_counting_bloom_add_many(int *results, size_t *handled, amq_counting_bloom *f,
                                const void *const *keys, const size_t *lens, size_t count)
{
    const amq__bloom_table table = { f->counters, f->width_log2, f->counter_count, f->hashes,
                                     f->probe_version };
    const bool cached = f->stored_bytes <= AMQ__BLOOM_PREFETCHED_TABLE_BYTES;
    amq_u128 hashes[AMQ__BLOOM_ADD_GROUP];
    for (size_t start = 0; start < count; start += AMQ__BLOOM_ADD_GROUP) {
        size_t group = count - start < AMQ__BLOOM_ADD_GROUP ? count - start : AMQ__BLOOM_ADD_GROUP;
        if (!cached)
            amq__bloom_hash_group(hashes, &table, f->hashes, &f->hasher, keys + start, lens + start,
                                  group);
        for (size_t j = 0; j < group; j++) {
            amq_u128 hash =
                cached ? amq__hash128(&f->hasher, keys[start + j], lens[start + j]) : hashes[j];
            increment_first(f, hash, f->hashes);
            if (results)
                results[start + j] = AMQ_OK;
        }
    }
    /* An add cannot fail: a saturated counter stays as it is. */
    if (handled)
        *handled = count;
    return AMQ_OK;
}

static bool counter_set(const void *filter, uint64_t position)
{
    const amq_counting_bloom *f = filter;
    return counter_at(f->counters, position << f->width_log2, counter_max(f)) != 0;
}

bool amq_counting_bloom_contains_hash(const amq_counting_bloom *f, amq_u128 hash)
{
    return amq__bloom_all_set(f, counter_set, hash, f->counter_count, f->hashes, f->probe_version);
}

bool amq_counting_bloom_contains(const amq_counting_bloom *f, const void *key, size_t len)
{
    return amq_counting_bloom_contains_hash(f, amq__hash128(&f->hasher, key, len));
}

int amq_counting_bloom_remove_hash(amq_counting_bloom *f, amq_u128 hash)
{
    /* A zero counter: certainly absent, and nothing is written. */
    if (!amq_counting_bloom_contains_hash(f, hash))
        return AMQ_ENOTFOUND;
    uint8_t *counters = f->counters;
    const unsigned width_log2 = f->width_log2, max = counter_max(f);
    const uint32_t k = f->hashes;
    uint64_t emptied = 0;
    amq__bloom_probe p = amq__bloom_probe_start(hash, f->counter_count, f->probe_version);
    for (uint32_t i = 0; i < k; i++) {
        uint64_t bit = p.position << width_log2;
        unsigned shift = (unsigned)(bit & 7);
        uint8_t *byte = counters + (bit >> 3);
        unsigned value = (unsigned)(*byte >> shift) & max;
        if (AMQ__UNLIKELY(value == 0)) {
            /* Only an earlier position of this key can have emptied it: the
             * key uses this counter more often than its count, so it was
             * never added. Put back what was taken. */
            f->nonzero -= emptied;
            increment_first(f, hash, i);
            return AMQ_ENOTFOUND;
        }
        if (AMQ__LIKELY(value != max)) {
            *byte = (uint8_t)(*byte - (1u << shift));
            emptied += value == 1;
        }
        amq__bloom_probe_next(&p, i);
    }
    f->nonzero -= emptied;
    return AMQ_OK;
}

int amq_counting_bloom_remove(amq_counting_bloom *f, const void *key, size_t len)
{
    return amq_counting_bloom_remove_hash(f, amq__hash128(&f->hasher, key, len));
}

/* The batch queries' pointers are restrict: results is a byte array, and
 * without the promise that it overlaps nothing else each store to it could
 * change the filter's counters pointer or counter width as far as the
 * compiler knows, which the loop would then load again for every counter. */
void amq_counting_bloom_contains_many(uint8_t *restrict results,
                                      const amq_counting_bloom *restrict f,
                                      const void *const *restrict keys, const size_t *restrict lens,
                                      size_t count)
{
    amq__bloom_table table = { f->counters, f->width_log2, f->counter_count, f->hashes,
                               f->probe_version };
    amq__bloom_contains_many(f, counter_set, &table, &f->hasher, keys, lens, NULL, count, results,
                             false);
}

void amq_counting_bloom_contains_many_hash(uint8_t *restrict results,
                                           const amq_counting_bloom *restrict f,
                                           const amq_u128 *restrict hashes, size_t count)
{
    amq__bloom_table table = { f->counters, f->width_log2, f->counter_count, f->hashes,
                               f->probe_version };
    amq__bloom_contains_many(f, counter_set, &table, NULL, NULL, NULL, hashes, count, results,
                             true);
}

uint32_t amq_counting_bloom_count(const amq_counting_bloom *f, const void *key, size_t len)
{
    const unsigned width_log2 = f->width_log2, max = counter_max(f);
    unsigned smallest = max;
    amq__bloom_probe p = amq__bloom_probe_start(amq__hash128(&f->hasher, key, len),
                                                f->counter_count, f->probe_version);
    for (uint32_t i = 0; i < f->hashes && smallest != 0; i++) {
        unsigned value = counter_at(f->counters, p.position << width_log2, max);
        smallest = value < smallest ? value : smallest;
        amq__bloom_probe_next(&p, i);
    }
    return smallest;
}

/* ---- what the filter knows about itself ----------------------------------------- */

double amq_counting_bloom_estimated_keys(const amq_counting_bloom *f)
{
    double m = (double)f->counter_count, x = (double)f->nonzero;
    if (f->nonzero >= f->counter_count)
        return INFINITY;
    return -(m / f->hashes) * log1p(-x / m);
}

double amq_counting_bloom_expected_fpr(const amq_counting_bloom *f)
{
    return amq__bloom_expected_fpr(f->probe_version, f->counter_count, f->hashes, f->nonzero,
                                   amq_counting_bloom_estimated_keys(f));
}

uint64_t amq_counting_bloom_counters(const amq_counting_bloom *f)
{
    return f->counter_count;
}

uint32_t amq_counting_bloom_hashes(const amq_counting_bloom *f)
{
    return f->hashes;
}

uint32_t amq_counting_bloom_counter_bits(const amq_counting_bloom *f)
{
    return counter_width(f);
}

uint64_t amq_counting_bloom_nonzero(const amq_counting_bloom *f)
{
    return f->nonzero;
}

uint64_t amq_counting_bloom_saturated(const amq_counting_bloom *f)
{
    return f->saturated;
}

uint64_t amq_counting_bloom_capacity(const amq_counting_bloom *f)
{
    return f->capacity;
}

const amq_hasher *amq_counting_bloom_hasher(const amq_counting_bloom *f)
{
    return &f->hasher;
}

uint32_t amq__counting_bloom_counter(const amq_counting_bloom *f, uint64_t i)
{
    assert(i < f->counter_count);
    return counter_at(f->counters, i << f->width_log2, counter_max(f));
}

unsigned amq__counting_bloom_probe_version(const amq_counting_bloom *f)
{
    return f->probe_version;
}

/* ---- merge ---------------------------------------------------------------------- */

static int check_compatible(const amq_counting_bloom *a, const amq_counting_bloom *b,
                            amq_diag *diag)
{
    if (a->counter_count != b->counter_count)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters have %llu and %llu counters",
                         (unsigned long long)a->counter_count,
                         (unsigned long long)b->counter_count);
    if (a->hashes != b->hashes)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters use %u and %u hash functions",
                         a->hashes, b->hashes);
    if (a->width_log2 != b->width_log2)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters have %u-bit and %u-bit counters",
                         counter_width(a), counter_width(b));
    if (a->probe_version != b->probe_version)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters use probe versions %u and %u",
                         a->probe_version, b->probe_version);
    return amq__hasher_compare(&a->hasher, &b->hasher, diag);
}

static int merge(amq_counting_bloom *into, const amq_counting_bloom *other, amq_diag *diag)
{
    int status = check_compatible(into, other, diag);
    if (status != AMQ_OK)
        return status;
    const unsigned width_log2 = into->width_log2, max = counter_max(into);
    uint64_t nonzero = 0, saturated = 0;
    for (uint64_t i = 0; i < into->counter_count; i++) {
        uint64_t bit = i << width_log2;
        unsigned shift = (unsigned)(bit & 7);
        unsigned sum = counter_at(into->counters, bit, max) + counter_at(other->counters, bit, max);
        unsigned value = sum < max ? sum : max;
        uint8_t *byte = into->counters + (bit >> 3);
        *byte = (uint8_t)((*byte & ~(max << shift)) | (value << shift));
        nonzero += value != 0;
        saturated += value == max;
    }
    into->nonzero = nonzero;
    into->saturated = saturated;
    return AMQ_OK;
}

int amq_counting_bloom_merge(amq_counting_bloom *into, const amq_counting_bloom *other,
                             amq_diag *diag)
{
    assert(into && other);
    return merge(into, other, diag);
}

/* ---- invariants -------------------------------------------------------------- */

/* The lanes of a 64-bit word: counters of w = 2^width_log2 bits. Folding a
 * word onto itself by shifts of 1, 2, ..., w/2 gathers each lane's w bits
 * into its lowest bit (by OR: is it non-zero; by AND: is it all ones) and
 * never reaches into the next lane, since the shifts add up to w - 1. */
static uint64_t lanes_nonzero(uint64_t word, unsigned width, uint64_t low_bits)
{
    for (unsigned shift = 1; shift < width; shift <<= 1)
        word |= word >> shift;
    return (uint64_t)__builtin_popcountll(word & low_bits);
}

static uint64_t lanes_saturated(uint64_t word, unsigned width, uint64_t low_bits)
{
    for (unsigned shift = 1; shift < width; shift <<= 1)
        word &= word >> shift;
    return (uint64_t)__builtin_popcountll(word & low_bits);
}

int amq__counting_bloom_check(const amq_counting_bloom *f, amq_diag *diag)
{
    uint64_t m = f->counter_count;
    if (m < AMQ_BLOOM_MIN_BITS || m > AMQ_BLOOM_MAX_BITS || f->hashes < 1 ||
        f->hashes > AMQ_BLOOM_MAX_HASHES || (f->width_log2 != 2 && f->width_log2 != 3) ||
        (f->probe_version != AMQ__BLOOM_PROBE_DOUBLE &&
         f->probe_version != AMQ__BLOOM_PROBE_REHASH))
        return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom size out of range (I1)");
    uint64_t used_bits = m << f->width_log2;
    uint64_t allocated = allocated_bytes_for(f->stored_bytes);
    if (f->stored_bytes != amq__counting_bloom_stored_bytes(m, f->width_log2))
        return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom array size disagrees with m (I1)");
    if (used_bits % 8 != 0 && f->counters[used_bits / 8] >> (used_bits % 8) != 0)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "counting-bloom bits past the last counter are not zero (I2)");
    for (uint64_t i = f->stored_bytes; i < allocated; i++)
        if (f->counters[i] != 0)
            return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom padding is not zero (I2)");
    unsigned width = counter_width(f);
    uint64_t low_bits = UINT64_MAX / counter_max(f);
    uint64_t nonzero = 0, saturated = 0;
    for (uint64_t i = 0; i < allocated; i += 8) {
        uint64_t word = amq__load_u64le(f->counters + i);
        nonzero += lanes_nonzero(word, width, low_bits);
        saturated += lanes_saturated(word, width, low_bits);
    }
    if (nonzero != f->nonzero)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "counting-bloom counts %llu non-zero counters but holds %llu (I3)",
                         (unsigned long long)f->nonzero, (unsigned long long)nonzero);
    if (saturated != f->saturated)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "counting-bloom counts %llu saturated counters but holds %llu (I4)",
                         (unsigned long long)f->saturated, (unsigned long long)saturated);
    return AMQ_OK;
}
