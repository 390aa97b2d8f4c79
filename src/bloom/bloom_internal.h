/*
 * bloom_internal.h - what the Bloom family's files share inside the
 * library: sizing from (n, p) or (m, k), the probe sequences and the
 * queries built on them, and the invariant checks tests call.
 */
#ifndef AMQ_BLOOM_INTERNAL_H
#define AMQ_BLOOM_INTERNAL_H

#include "amq/bloom.h"
#include "core/bits.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/reduce.h"
#include "core/util.h"

#include <math.h>
#include <stdint.h>

/* The probe sequences, which turn a key's 128-bit hash into its k
 * positions among m (see bloom.c for both and why there are two). A filter
 * keeps the one it was made with; its file names it (docs/FORMAT.md), a file
 * that names none using version 1. */
enum {
    AMQ__BLOOM_PROBE_DOUBLE = 1, /* enhanced double hashing mod m */
    AMQ__BLOOM_PROBE_REHASH = 2, /* a multiplicative rehash chain: new filters */
};
#define AMQ__BLOOM_PROBE_LATEST AMQ__BLOOM_PROBE_REHASH

/* The rehash chain's multiplier: a 64-bit LCG multiplier with good spectral
 * scores in dimensions 2 to 8 (G. L. Steele and S. Vigna, "Computationally
 * easy, spectrally good multipliers for congruential pseudorandom number
 * generators", Software: Practice and Experience 52(2), 2022). */
#define AMQ__BLOOM_REHASH_MULTIPLIER 0xd1342543de82ef95ULL

/* A classic filter (bloom.c, and its generic handle's view in
 * bloom_family.c). */
struct amq_bloom {
    /* What every add and query reads, ... */
    amq__bitvec bits;       /* m bits */
    uint32_t hashes;        /* k */
    unsigned probe_version; /* AMQ__BLOOM_PROBE_*: the sequence of positions */
    amq_hasher hasher;
    /* ... a cache line apart from X, which concurrent adds write (atomically),
     * so that their writes do not take the line the others read from every
     * core. */
    char apart[64];
    uint64_t bits_set; /* X */
    uint64_t capacity; /* n it was sized for (0: sized by m alone) */
    double target_fpr; /* p it was sized for */
};

/* amq_bloom_new with a diagnostic, for a filter probing with version (one
 * of the enum above). */
int amq__bloom_new(amq_bloom **out, const amq_bloom_params *params, unsigned version,
                   amq_diag *diag);

/* m, k and the capacity for params (see amq_bloom_new). */
int amq__bloom_size(uint64_t *bits, uint32_t *hashes, uint64_t *capacity,
                    const amq_bloom_params *params, amq_diag *diag);

/* The probe sequence of a filter (its version: AMQ__BLOOM_PROBE_*). */
unsigned amq__bloom_probe_version(const amq_bloom *filter);

/* Set the key's k bits; the number of them that were 0 (none: the key was
 * maybe present already, and nothing changed). */
uint32_t amq__bloom_add_hash_new_bits(amq_bloom *filter, amq_u128 hash);

/* A key's k positions among m, one at a time, by the given version's
 * sequence (see bloom.c):
 *
 *     amq__bloom_probe p = amq__bloom_probe_start(hash, m, version);
 *     for (i = 0; i < k; i++) { use p.position; amq__bloom_probe_next(&p, i); }
 *
 * Version 1, enhanced double hashing: g(i) = x + i*y + (i^3 - i)/6 mod m
 * with x = reduce(h.low, m), y = reduce(h.high, m). Version 2, the rehash
 * chain: s(0) = h.low, s(i+1) = s(i) * AMQ__BLOOM_REHASH_MULTIPLIER +
 * (h.high | 1) mod 2^64, position i = reduce(s(i), m). m must be at least
 * 64 (so that each "mod m" of version 1 is one subtraction). Inlined with
 * version a constant, the test of it folds away. */
typedef struct amq__bloom_probe {
    uint64_t position;
    uint64_t state;     /* version 1: the step y; version 2: s(i) */
    uint64_t increment; /* version 2: h.high | 1 */
    uint64_t bits;      /* m */
    unsigned version;
} amq__bloom_probe;

static AMQ__ALWAYS_INLINE amq__bloom_probe amq__bloom_probe_start(amq_u128 hash, uint64_t bits,
                                                                  unsigned version)
{
    amq__bloom_probe p = { amq__reduce(hash.low, bits), 0, 0, bits, version };
    if (version == AMQ__BLOOM_PROBE_DOUBLE) {
        p.state = amq__reduce(hash.high, bits);
    } else {
        p.state = hash.low;
        p.increment = hash.high | 1;
    }
    return p;
}

/* Move to the position after the i-th (i counts from 0). */
static AMQ__ALWAYS_INLINE void amq__bloom_probe_next(amq__bloom_probe *p, uint32_t i)
{
    if (p->version == AMQ__BLOOM_PROBE_DOUBLE) {
        p->position += p->state;
        p->position -= p->position >= p->bits ? p->bits : 0;
        p->state += i + 1;
        p->state -= p->state >= p->bits ? p->bits : 0;
    } else {
        p->state = p->state * AMQ__BLOOM_REHASH_MULTIPLIER + p->increment;
        p->position = amq__reduce(p->state, p->bits);
    }
}

/* The chance that an absent key's k positions are exactly those of one of
 * `keys` stored keys because its probe sequence is theirs, beyond what the
 * fill (X/m)^k already counts. Version 1: its pair (x, y) is one of the
 * stored keys' pairs, each uniform over m^2, so 1 - (1 - 1/m^2)^keys (about
 * keys / m^2). Version 2: the sequence is a function of 127 bits of the
 * key's hash (h.high | 1 drops one), so only a key whose hash matches a
 * stored key's in those bits shares it: keys * 2^-127, far below any rate
 * but those the sizing is told to aim under it (amq__bloom_size). */
static inline double amq__bloom_probe_floor(unsigned version, uint64_t bits, double keys)
{
    if (!(keys > 0))
        return 0;
    /* At most 1: a saturated filter's estimate of its keys is infinite. */
    if (version != AMQ__BLOOM_PROBE_DOUBLE)
        return fmin(1, keys * 0x1p-127);
    double m = (double)bits;
    return -expm1(keys * log1p(-1 / (m * m)));
}

/* The rate a filter of m slots and k hashes has once it holds `keys` keys:
 * the probe floor F, then (1 - e^(-k keys/m))^k for the others. What it
 * delivers at its capacity, beside the target it was made for. */
static inline double amq__bloom_rate_at(unsigned version, uint64_t bits, uint32_t hashes,
                                        double keys)
{
    double floor = amq__bloom_probe_floor(version, bits, keys);
    double fill = -expm1(-(double)hashes * keys / (double)bits);
    return floor + (1 - floor) * pow(fill, hashes);
}

/* The rate to expect from a filter of m slots, k hashes and X set ones
 * holding about `keys` keys (estimated from X): the probe floor F, then the
 * fill's (X/m)^k for the other absent keys: F + (1 - F) (X/m)^k. */
static inline double amq__bloom_expected_fpr(unsigned version, uint64_t bits, uint32_t hashes,
                                             uint64_t set, double keys)
{
    double floor = amq__bloom_probe_floor(version, bits, keys);
    return floor + (1 - floor) * pow((double)set / (double)bits, hashes);
}

/* The query of the classic and counting filters: whether the k slots of
 * amq__bloom_probe are all non-zero (slot_set(filter, position) says
 * whether one is). The slots are read two at a time, both before the branch
 * that leaves at a zero one (see bloom.c). Inlined with slot_set, k and the
 * version constants. */
static AMQ__ALWAYS_INLINE bool amq__bloom_all_set_k(const void *filter,
                                                    bool (*slot_set)(const void *, uint64_t),
                                                    amq_u128 hash, uint64_t slots, uint32_t k,
                                                    unsigned version)
{
    amq__bloom_probe p = amq__bloom_probe_start(hash, slots, version);
    uint32_t i = 0;
    for (; i + 1 < k; i += 2) {
        bool first = slot_set(filter, p.position);
        amq__bloom_probe_next(&p, i);
        bool second = slot_set(filter, p.position);
        amq__bloom_probe_next(&p, i + 1);
        if (!(first & second))
            return false;
    }
    return i == k || slot_set(filter, p.position);
}

/* amq__bloom_all_set_k for a filter of k hashes and the given version.
 * The hash counts that sizing from the usual rates gives (p = 10%, 5%, 1%,
 * 0.1%, 0.01%: k = 3, 4, 7, 10, 13) each get the loop with k a constant,
 * which the compiler unrolls; other counts share the loop. Unrolled, a
 * present key's query is measurably faster than the loop's (CHANGELOG.md's
 * performance history). Each version gets its own copies,
 * so that neither tests the version inside the loop. */
static AMQ__ALWAYS_INLINE bool amq__bloom_all_set_version(const void *filter,
                                                          bool (*slot_set)(const void *, uint64_t),
                                                          amq_u128 hash, uint64_t slots, uint32_t k,
                                                          unsigned version)
{
    switch (k) {
    case 3:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 3, version);
    case 4:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 4, version);
    case 7:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 7, version);
    case 10:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 10, version);
    case 13:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 13, version);
    default:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, k, version);
    }
}

static AMQ__ALWAYS_INLINE bool amq__bloom_all_set(const void *filter,
                                                  bool (*slot_set)(const void *, uint64_t),
                                                  amq_u128 hash, uint64_t slots, uint32_t k,
                                                  unsigned version)
{
    if (AMQ__LIKELY(version == AMQ__BLOOM_PROBE_REHASH))
        return amq__bloom_all_set_version(filter, slot_set, hash, slots, k,
                                          AMQ__BLOOM_PROBE_REHASH);
    return amq__bloom_all_set_version(filter, slot_set, hash, slots, k, AMQ__BLOOM_PROBE_DOUBLE);
}

/* The batch query of the classic and counting filters, whose tables are
 * slots of 2^slot_bits_log2 bits (1: the classic filter's bits; 4 or 8:
 * counters) at the k positions of amq__bloom_probe. */
typedef struct amq__bloom_table {
    const uint8_t *bytes;    /* the slots, slot i at bit i << slot_bits_log2 */
    unsigned slot_bits_log2; /* 0, 2 or 3 */
    uint64_t slots;          /* m */
    uint32_t hashes;         /* k */
    unsigned probe_version;  /* AMQ__BLOOM_PROBE_* */
} amq__bloom_table;

/* How many positions amq__bloom_contains_many holds (8 bytes each, on the
 * stack): the positions of a chunk of keys, AMQ__BLOOM_BATCH_POSITIONS / k
 * of them. */
#define AMQ__BLOOM_BATCH_POSITIONS 1024
_Static_assert(AMQ__BLOOM_BATCH_POSITIONS >= AMQ_BLOOM_MAX_HASHES,
               "a chunk of the batch query holds at least one key's positions");

/* How many positions ahead of the one tested amq__bloom_contains_many
 * prefetches: eight keys' worth at k = 7, more cache lines than a core's
 * fill buffers hold (16 on recent x86), so that none sits idle. */
#define AMQ__BLOOM_PREFETCH_POSITIONS 56

/* The table size up to which amq__bloom_contains_many tests keys as they
 * come, as the single query does: a table the caches hold answers without
 * waiting on memory, and the positions written down and prefetched would
 * only cost: with them, a batch over a table of 10^5 keys was slower than
 * asking its keys one by one. */
#define AMQ__BLOOM_PREFETCHED_TABLE_BYTES ((uint64_t)1 << 20)

/* Start fetching the cache line of the slot at position. */
static inline void amq__bloom_prefetch(const amq__bloom_table *table, uint64_t position)
{
    __builtin_prefetch(table->bytes + ((position << table->slot_bits_log2) >> 3));
}

/* How many keys the batch adds of the classic and counting filters
 * (amq_bloom_add_many, amq_counting_bloom_add_many) hash ahead of the
 * first one they add. */
#define AMQ__BLOOM_ADD_GROUP 16

/* The first half of a batch add, for a group of count keys (count <=
 * AMQ__BLOOM_ADD_GROUP): hash each into hashes[] and start fetching, for
 * writing, the cache lines of its first `prefetched` slots (1 <= prefetched
 * <= k). The adds that follow find their slots on the way or there, where
 * one by one each would wait for its own. */
static AMQ__ALWAYS_INLINE void amq__bloom_hash_group(amq_u128 *hashes,
                                                     const amq__bloom_table *table,
                                                     uint32_t prefetched, const amq_hasher *hasher,
                                                     const void *const *keys, const size_t *lens,
                                                     size_t count)
{
    for (size_t j = 0; j < count; j++) {
        hashes[j] = amq__hash128(hasher, keys[j], lens[j]);
        amq__bloom_probe p = amq__bloom_probe_start(hashes[j], table->slots, table->probe_version);
        for (uint32_t i = 0;;) {
            __builtin_prefetch(table->bytes + ((p.position << table->slot_bits_log2) >> 3), 1);
            if (++i == prefetched)
                break;
            amq__bloom_probe_next(&p, i - 1);
        }
    }
}

/* results[i] = whether key i's k slots are all set (slot_set, as in
 * amq__bloom_all_set). A table of at most AMQ__BLOOM_PREFETCHED_TABLE_BYTES
 * is asked key by key with the single query inlined; a larger one in chunks
 * of keys, each in two passes:
 *
 *   1. hash every key of the chunk (by_hash: take its hash from hashes[])
 *      and write its k positions down;
 *   2. read the slots, key after key, with the position
 *      AMQ__BLOOM_PREFETCH_POSITIONS further on prefetched before each read.
 *
 * Pass 1 is all arithmetic and pass 2 all memory: kept apart, the hashing
 * does not take the reorder buffer's room from the reads in flight, and the
 * positions are computed once (the prefetch and the read both take them
 * from the array). Pass 2 reads all k slots of a key without a branch: its
 * slots are in flight already, and a branch on each would mispredict on
 * absent keys. Inlined into each family's contains_many with slot_set a
 * constant. */
static AMQ__ALWAYS_INLINE void amq__bloom_contains_many_k(
    const void *filter, bool (*slot_set)(const void *, uint64_t), const amq__bloom_table *table,
    const amq_hasher *hasher, const void *const *keys, const size_t *lens, const amq_u128 *hashes,
    size_t count, uint8_t *results, uint32_t k, unsigned version, bool by_hash)
{
    if ((table->slots << table->slot_bits_log2) / 8 <= AMQ__BLOOM_PREFETCHED_TABLE_BYTES) {
        for (size_t i = 0; i < count; i++) {
            amq_u128 hash = by_hash ? hashes[i] : amq__hash128(hasher, keys[i], lens[i]);
            results[i] = amq__bloom_all_set_k(filter, slot_set, hash, table->slots, k, version);
        }
        return;
    }
    uint64_t positions[AMQ__BLOOM_BATCH_POSITIONS];
    const size_t chunk = AMQ__BLOOM_BATCH_POSITIONS / k; /* k <= AMQ_BLOOM_MAX_HASHES */
    for (size_t first = 0; first < count; first += chunk) {
        const size_t chunk_keys = count - first < chunk ? count - first : chunk;
        const size_t chunk_positions = chunk_keys * k;
        for (size_t i = 0; i < chunk_keys; i++) {
            amq_u128 hash = by_hash ? hashes[first + i]
                                    : amq__hash128(hasher, keys[first + i], lens[first + i]);
            amq__bloom_probe p = amq__bloom_probe_start(hash, table->slots, version);
            uint64_t *key_positions = positions + i * k;
            for (uint32_t j = 0; j < k; j++) {
                key_positions[j] = p.position;
                amq__bloom_probe_next(&p, j);
            }
        }
        for (size_t q = 0; q < chunk_positions && q < AMQ__BLOOM_PREFETCH_POSITIONS; q++)
            amq__bloom_prefetch(table, positions[q]);
        for (size_t i = 0; i < chunk_keys; i++) {
            const uint64_t *key_positions = positions + i * k;
            bool all_set = true;
            for (uint32_t j = 0; j < k; j++) {
                size_t ahead = i * k + j + AMQ__BLOOM_PREFETCH_POSITIONS;
                if (ahead < chunk_positions)
                    amq__bloom_prefetch(table, positions[ahead]);
                all_set &= slot_set(filter, key_positions[j]);
            }
            results[first + i] = all_set;
        }
    }
}

/* amq__bloom_contains_many_k for a filter of k hashes, with k a constant
 * for the usual counts, as amq__bloom_all_set has it (the loop with k a
 * variable is measurably slower), and the version a constant. */
static AMQ__ALWAYS_INLINE void amq__bloom_contains_many_version(
    const void *filter, bool (*slot_set)(const void *, uint64_t), const amq__bloom_table *table,
    const amq_hasher *hasher, const void *const *keys, const size_t *lens, const amq_u128 *hashes,
    size_t count, uint8_t *results, unsigned version, bool by_hash)
{
    switch (table->hashes) {
    case 3:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, hashes, count,
                                   results, 3, version, by_hash);
        return;
    case 4:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, hashes, count,
                                   results, 4, version, by_hash);
        return;
    case 7:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, hashes, count,
                                   results, 7, version, by_hash);
        return;
    case 10:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, hashes, count,
                                   results, 10, version, by_hash);
        return;
    case 13:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, hashes, count,
                                   results, 13, version, by_hash);
        return;
    default:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, hashes, count,
                                   results, table->hashes, version, by_hash);
    }
}

/* By keys (by_hash false: hasher, keys and lens; hashes NULL) or by their
 * 128-bit hashes (by_hash true: hashes; hasher, keys and lens NULL); by_hash
 * a constant at each call, so each form is compiled without the other. */
static AMQ__ALWAYS_INLINE void
amq__bloom_contains_many(const void *filter, bool (*slot_set)(const void *, uint64_t),
                         const amq__bloom_table *table, const amq_hasher *hasher,
                         const void *const *keys, const size_t *lens, const amq_u128 *hashes,
                         size_t count, uint8_t *results, bool by_hash)
{
    if (AMQ__LIKELY(table->probe_version == AMQ__BLOOM_PROBE_REHASH))
        amq__bloom_contains_many_version(filter, slot_set, table, hasher, keys, lens, hashes, count,
                                         results, AMQ__BLOOM_PROBE_REHASH, by_hash);
    else
        amq__bloom_contains_many_version(filter, slot_set, table, hasher, keys, lens, hashes, count,
                                         results, AMQ__BLOOM_PROBE_DOUBLE, by_hash);
}

/* AMQ_OK if the filter's invariants hold, else AMQ_ECORRUPT. O(m). */
int amq__bloom_check(const amq_bloom *filter);

/* The filter's words (for tests comparing filters bit for bit). */
const uint64_t *amq__bloom_words(const amq_bloom *filter);

/* Blocked filters (blocked_bloom.c), for tests: make the filter use the
 * portable split-block path even on a CPU with AVX2; whether it uses AVX2. */
void amq__blocked_bloom_use_portable(amq_blocked_bloom *filter);
bool amq__blocked_bloom_uses_avx2(const amq_blocked_bloom *filter);

/* A counting filter (counting_bloom.c, and its generic handle's view in
 * counting_bloom_family.c). */
struct amq_counting_bloom {
    uint8_t *counters;      /* m packed counters, then zero padding to 8 bytes */
    uint64_t counter_count; /* m */
    uint64_t stored_bytes;  /* ceil(m * w / 8): the bytes that hold counters */
    uint32_t hashes;        /* k */
    unsigned width_log2;    /* w = 2^width_log2 bits per counter: 2 or 3 */
    uint64_t nonzero;       /* counters that are not 0 (I3) */
    uint64_t saturated;     /* counters at their maximum (I4) */
    uint64_t capacity;      /* n it was sized for */
    double target_fpr;      /* p it was sized for */
    unsigned probe_version; /* AMQ__BLOOM_PROBE_*: the sequence of positions */
    amq_hasher hasher;
};

/* Bytes holding m counters of 2^width_log2 bits: the saved payload. */
static inline uint64_t amq__counting_bloom_stored_bytes(uint64_t m, unsigned width_log2)
{
    return ((m << width_log2) + 7) / 8;
}

/* An empty counting filter of m counters of 2^width_log2 bits, its array
 * zeroed; the caller sets the rest. AMQ_ERANGE or AMQ_ENOMEM with a
 * message in *diag (may be NULL). */
int amq__counting_bloom_allocate(amq_counting_bloom **out, uint64_t m, unsigned width_log2,
                                 amq_diag *diag);

/* amq_counting_bloom_new with a diagnostic, for a filter probing with
 * version (AMQ__BLOOM_PROBE_*). */
int amq__counting_bloom_new(amq_counting_bloom **out, const amq_counting_bloom_params *params,
                            unsigned version, amq_diag *diag);

/* The probe sequence of a counting filter (AMQ__BLOOM_PROBE_*). */
unsigned amq__counting_bloom_probe_version(const amq_counting_bloom *filter);

/* Counting filters (counting_bloom.c): AMQ_OK if the invariants hold, else
 * AMQ_ECORRUPT naming the broken one in *diag (may be NULL). O(m). */
int amq__counting_bloom_check(const amq_counting_bloom *filter, amq_diag *diag);

/* Counter i (i < m) of a counting filter (for tests comparing filters). */
uint32_t amq__counting_bloom_counter(const amq_counting_bloom *filter, uint64_t i);

/* A classic filter's words as saved, little-endian: a payload piece
 * (amq__bitvec_piece), which allocates nothing. */
amq__piece amq__bloom_piece(const amq_bloom *filter);

/* A classic filter rebuilt from saved words, validated as a loaded file is:
 * params->bits and ->hashes in range, ->fpr in (0, 1), version a known
 * probe version, len matching m, the bits past m clear, bits_set equal to
 * the set bits (else AMQ_ECORRUPT with a message in *diag); ->capacity and
 * ->hasher are taken as they are. Also AMQ_ENOMEM. */
int amq__bloom_from_words(amq_bloom **out, const amq_bloom_params *params, unsigned version,
                          uint64_t bits_set, const uint8_t *words, uint64_t len, amq_diag *diag);

/* Scalable filters (scalable_bloom.c): AMQ_OK if the invariants hold, else
 * AMQ_ECORRUPT naming the broken one in *diag (may be NULL). O(total m). */
int amq__scalable_bloom_check(const amq_scalable_bloom *filter, amq_diag *diag);

#endif /* AMQ_BLOOM_INTERNAL_H */
