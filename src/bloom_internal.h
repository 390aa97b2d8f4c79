/*
 * bloom_internal.h - what the Bloom family's files share inside the
 * library: sizing from (n, p) or (m, k), and the invariant checks tests call.
 */
#ifndef AMQ_BLOOM_INTERNAL_H
#define AMQ_BLOOM_INTERNAL_H

#include "amq/bloom.h"
#include "hash.h"
#include "util.h"

#include <stdint.h>

/* amq_bloom_new with a diagnostic. */
int amq__bloom_new(amq_bloom **out, const amq_bloom_params *params, amq_diag *diag);

/* m, k and the capacity for params (see amq_bloom_new). */
int amq__bloom_size(uint64_t *bits, uint32_t *hashes, uint64_t *capacity,
                    const amq_bloom_params *params, amq_diag *diag);

/* A key's k positions among m by enhanced double hashing (see bloom.c),
 * g(i) = x + i*y + (i^3 - i)/6 mod m, one at a time:
 *
 *     amq__bloom_probe p = amq__bloom_probe_start(hash, m);
 *     for (i = 0; i < k; i++) { use p.position; amq__bloom_probe_next(&p, i); }
 *
 * m must be at least 64 (so that each "mod m" is one subtraction). */
typedef struct amq__bloom_probe {
    uint64_t position, step, bits;
} amq__bloom_probe;

static inline amq__bloom_probe amq__bloom_probe_start(amq_u128 hash, uint64_t bits)
{
    amq__bloom_probe p = { amq_reduce(hash.low, bits), amq_reduce(hash.high, bits), bits };
    return p;
}

/* Move to the position after the i-th (i counts from 0). */
static inline void amq__bloom_probe_next(amq__bloom_probe *p, uint32_t i)
{
    p->position += p->step;
    p->position -= p->position >= p->bits ? p->bits : 0;
    p->step += i + 1;
    p->step -= p->step >= p->bits ? p->bits : 0;
}

/* The query of the classic and counting filters: whether the k slots of
 * amq__bloom_probe are all non-zero (slot_set(filter, position) says
 * whether one is). The slots are read two at a time, both before the branch
 * that leaves at a zero one (see bloom.c). Inlined with slot_set and k
 * constants. */
static AMQ__ALWAYS_INLINE bool amq__bloom_all_set_k(const void *filter,
                                                    bool (*slot_set)(const void *, uint64_t),
                                                    amq_u128 hash, uint64_t slots, uint32_t k)
{
    amq__bloom_probe p = amq__bloom_probe_start(hash, slots);
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

/* amq__bloom_all_set_k for a filter of k hashes. The hash counts that
 * sizing from the usual rates gives (p = 10%, 5%, 1%, 0.1%, 0.01%: k = 3,
 * 4, 7, 10, 13) each get the loop with k a constant, which the compiler
 * unrolls; other counts share the loop. Unrolled, a present key's query
 * took 0.88-0.93 of the loop's time at k = 7 and 10, n = 10^6 and 10^7
 * (docs/PERFORMANCE.md). */
static AMQ__ALWAYS_INLINE bool amq__bloom_all_set(const void *filter,
                                                  bool (*slot_set)(const void *, uint64_t),
                                                  amq_u128 hash, uint64_t slots, uint32_t k)
{
    switch (k) {
    case 3:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 3);
    case 4:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 4);
    case 7:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 7);
    case 10:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 10);
    case 13:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, 13);
    default:
        return amq__bloom_all_set_k(filter, slot_set, hash, slots, k);
    }
}

/* The batch query of the classic and counting filters, whose tables are
 * slots of 2^slot_bits_log2 bits (1: the classic filter's bits; 4 or 8:
 * counters) at the k positions of amq__bloom_probe. */
typedef struct amq__bloom_table {
    const uint8_t *bytes;    /* the slots, slot i at bit i << slot_bits_log2 */
    unsigned slot_bits_log2; /* 0, 2 or 3 */
    uint64_t slots;          /* m */
    uint32_t hashes;         /* k */
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

/* Start fetching the cache line of the slot at position. */
static inline void amq__bloom_prefetch(const amq__bloom_table *table, uint64_t position)
{
    __builtin_prefetch(table->bytes + ((position << table->slot_bits_log2) >> 3));
}

/* results[i] = whether key i's k slots are all set (slot_set, as in
 * amq__bloom_all_set), in chunks of keys, each in two passes:
 *
 *   1. hash every key of the chunk and write its k positions down;
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
static AMQ__ALWAYS_INLINE void
amq__bloom_contains_many_k(const void *filter, bool (*slot_set)(const void *, uint64_t),
                           const amq__bloom_table *table, const amq_hasher *hasher,
                           const void *const *keys, const size_t *lens, size_t count,
                           uint8_t *results, uint32_t k)
{
    uint64_t positions[AMQ__BLOOM_BATCH_POSITIONS];
    const size_t chunk = AMQ__BLOOM_BATCH_POSITIONS / k; /* k <= AMQ_BLOOM_MAX_HASHES */
    for (size_t first = 0; first < count; first += chunk) {
        const size_t chunk_keys = count - first < chunk ? count - first : chunk;
        const size_t chunk_positions = chunk_keys * k;
        for (size_t i = 0; i < chunk_keys; i++) {
            amq_u128 hash = amq__hash128(hasher, keys[first + i], lens[first + i]);
            amq__bloom_probe p = amq__bloom_probe_start(hash, table->slots);
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
 * for the usual counts, as amq__bloom_all_set has it (at 10^6 keys and
 * k = 7, the loop with k a variable took 1.18 times as long). */
static AMQ__ALWAYS_INLINE void amq__bloom_contains_many(const void *filter,
                                                        bool (*slot_set)(const void *, uint64_t),
                                                        const amq__bloom_table *table,
                                                        const amq_hasher *hasher,
                                                        const void *const *keys, const size_t *lens,
                                                        size_t count, uint8_t *results)
{
    switch (table->hashes) {
    case 3:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, count, results, 3);
        return;
    case 4:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, count, results, 4);
        return;
    case 7:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, count, results, 7);
        return;
    case 10:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, count, results, 10);
        return;
    case 13:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, count, results, 13);
        return;
    default:
        amq__bloom_contains_many_k(filter, slot_set, table, hasher, keys, lens, count, results,
                                   table->hashes);
    }
}

/* AMQ_OK if the filter's invariants hold, else AMQ_ECORRUPT. O(m). */
int amq__bloom_check(const amq_bloom *filter);

/* The filter's words (for tests comparing filters bit for bit). */
const uint64_t *amq__bloom_words(const amq_bloom *filter);

/* Blocked filters (blocked_bloom.c), for tests: make the filter use the
 * portable split-block path even on a CPU with AVX2; whether it uses AVX2. */
void amq__blocked_bloom_use_portable(amq_blocked_bloom *filter);
bool amq__blocked_bloom_uses_avx2(const amq_blocked_bloom *filter);

/* Counting filters (counting_bloom.c): AMQ_OK if the invariants hold, else
 * AMQ_ECORRUPT naming the broken one in *diag (may be NULL). O(m). */
int amq__counting_bloom_check(const amq_counting_bloom *filter, amq_diag *diag);

/* Counter i (i < m) of a counting filter (for tests comparing filters). */
uint32_t amq__counting_bloom_counter(const amq_counting_bloom *filter, uint64_t i);

/* A classic filter's words as saved (see amq__bitvec_le_words): *len bytes,
 * little-endian; a copy in *scratch (the caller frees it) only on a
 * big-endian host. NULL when that copy cannot be allocated. */
const void *amq__bloom_le_words(const amq_bloom *filter, uint64_t *len, void **scratch);

/* A classic filter rebuilt from saved words, validated as a loaded file is:
 * params->bits and ->hashes in range, ->fpr in (0, 1), len matching m, the
 * bits past m clear, bits_set equal to the set bits (else AMQ_ECORRUPT with
 * a message in *diag); ->capacity and ->hasher are taken as they are.
 * Also AMQ_ENOMEM. */
int amq__bloom_from_words(amq_bloom **out, const amq_bloom_params *params, uint64_t bits_set,
                          const uint8_t *words, uint64_t len, amq_diag *diag);

/* Scalable filters (scalable_bloom.c): AMQ_OK if the invariants hold, else
 * AMQ_ECORRUPT naming the broken one in *diag (may be NULL). O(total m). */
int amq__scalable_bloom_check(const amq_scalable_bloom *filter, amq_diag *diag);

#endif /* AMQ_BLOOM_INTERNAL_H */
