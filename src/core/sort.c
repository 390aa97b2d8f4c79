/*
 * sort.c - sorting 64-bit keys (hashes, values derived from them), with an
 * optional 64-bit value carried along, for the static filters' builds and
 * batch queries.
 *
 * An LSD radix sort on 11-bit digits - a pass's 2048 counters stay in the
 * L1 cache, and a pass where every key has the same digit is skipped - over
 * the keys' top 33 significant bits only, then an insertion sort for the
 * keys that share those. The keys are hashes or uniform values, so keys
 * sharing their top 33 bits are rare neighbours, and three passes do the
 * work of six. Should they share them more than 2n times over (crafted
 * hashes), the insertion sort stops and the low digits get their radix
 * passes too, so a sort is never worse than linear by much.
 */
#include "core/sort.h"
#include "core/util.h"

#include <stdbool.h>
#include <string.h>

#define RADIX_BITS     11
#define RADIX_SIZE     (1u << RADIX_BITS)
#define RADIX_TOP_BITS (3 * RADIX_BITS)

/* LSD radix passes over the 11-bit digits of bits [low, top) of the keys,
 * lowest digit first; a pass where every key has the same digit is
 * skipped. */
static void radix_passes(uint64_t *keys, uint64_t *values, size_t n, uint64_t *scratch,
                         unsigned low, unsigned top)
{
    unsigned passes = (top - low + RADIX_BITS - 1) / RADIX_BITS;
    uint64_t(*counts)[RADIX_SIZE] = (uint64_t(*)[RADIX_SIZE])(scratch + (values ? 2 * n : n));
    memset(counts, 0, passes * sizeof counts[0]);
    for (size_t i = 0; i < n; i++)
        for (unsigned d = 0; d < passes; d++)
            counts[d][(keys[i] >> (low + RADIX_BITS * d)) & (RADIX_SIZE - 1)]++;
    uint64_t *from_keys = keys, *to_keys = scratch;
    uint64_t *from_values = values, *to_values = values ? scratch + n : NULL;
    for (unsigned d = 0; d < passes; d++) {
        uint64_t *count = counts[d];
        unsigned shift = low + RADIX_BITS * d;
        if (count[(keys[0] >> shift) & (RADIX_SIZE - 1)] == n)
            continue;
        uint64_t offset = 0;
        for (unsigned b = 0; b < RADIX_SIZE; b++) {
            uint64_t c = count[b];
            count[b] = offset;
            offset += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t to = count[(from_keys[i] >> shift) & (RADIX_SIZE - 1)]++;
            to_keys[to] = from_keys[i];
            if (values)
                to_values[to] = from_values[i];
        }
        uint64_t *t = from_keys;
        from_keys = to_keys;
        to_keys = t;
        t = from_values;
        from_values = to_values;
        to_values = t;
    }
    if (from_keys != keys) {
        memcpy(keys, from_keys, n * sizeof *keys);
        if (values)
            memcpy(values, from_values, n * sizeof *values);
    }
}

/* Insertion sort of keys already in order but for a few neighbours; false
 * (leaving a permutation) once more than budget keys would move. */
static bool insertion_finish(uint64_t *keys, uint64_t *values, size_t n, size_t budget)
{
    size_t moves = 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t key = keys[i], value = values ? values[i] : 0;
        size_t j = i;
        for (; j > 0 && keys[j - 1] > key; j--) {
            if (++moves > budget)
                return false;
            keys[j] = keys[j - 1];
            if (values)
                values[j] = values[j - 1];
        }
        keys[j] = key;
        if (values)
            values[j] = value;
    }
    return true;
}

void amq__sort_u64(uint64_t *keys, uint64_t *values, size_t n, uint64_t *scratch)
{
    if (n < 2)
        return;
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++)
        any |= keys[i];
    unsigned top = amq__bit_width(any);
    unsigned low = top > RADIX_TOP_BITS ? top - RADIX_TOP_BITS : 0;
    radix_passes(keys, values, n, scratch, low, top);
    if (low > 0 && !insertion_finish(keys, values, n, 2 * n))
        radix_passes(keys, values, n, scratch, 0, top);
}

size_t amq__sort_unique_u64(uint64_t *keys, size_t n, uint64_t *scratch)
{
    amq__sort_u64(keys, NULL, n, scratch);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || keys[i] != keys[kept - 1])
            keys[kept++] = keys[i];
    return kept;
}
