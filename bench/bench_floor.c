/*
 * bench_floor.c - what this machine allows a query at best: the memory
 * reads of a filter's query with nothing else around them, as reference
 * points for the filter workloads (and for figures quoted from other
 * machines).
 *
 *   floor/cache-line   one bit of one random 32-byte block of an array as
 *                      large as a split-block Bloom filter for n keys at 1%
 *                      (10.53 bits/key): the one cache miss of
 *                      bloom/split-block's query-hashed pass, without its
 *                      eight tests or the function calls.
 *   floor/three-bytes  three random bytes of an array of 9.04 bits/key,
 *                      xored and compared with a byte: fuse/8's query-hashed
 *                      pass without the function calls.
 *   floor/seven-bits   seven random bits of an array of 9.585 bits/key, all
 *                      read and and-ed: the classic filter's query for a
 *                      present key (k = 7 at 1%), without the probe
 *                      sequence's arithmetic, the early exit or the call.
 *
 * Each pass reads n precomputed random 64-bit values in order (as the
 * hashed passes read their hashes) and does the reads inline, in one loop
 * the compiler sees whole; the count of matches keeps the work from being
 * optimized away. The array holds random bits, so about as many tests
 * succeed as in a filter half full.
 *
 * Two more floors start from the keys instead, the 16-byte keys the filter
 * workloads query, hashed by XXH3 through the library's hash entry point
 * (amq__hash64, amq__hash128), as every filter hashes them:
 *
 *   floor/cache-line-key   XXH3-64 of the key, then floor/cache-line's read:
 *                          what any blocked Bloom query of a key costs at
 *                          least (phases query-present, query-absent).
 *   floor/seven-bits-key   XXH3-128 of the key, then floor/seven-bits'
 *                          reads: the least a classic query of a present key
 *                          costs (phase query-present).
 *   floor/probe-seven-key  XXH3-128 of the key, then the classic filter's
 *                          own seven positions (the probe sequence a new
 *                          filter uses, AMQ__BLOOM_PROBE_LATEST: the rehash
 *                          chain, amq__bloom_probe in src/bloom/bloom_internal.h)
 *                          read and and-ed with no branch: the least the
 *                          classic query of a present key costs with that
 *                          probe sequence (phase query-present).
 *
 * Their peer is libbloom, which hashes its keys too, so that the "vs peer"
 * column is the best ratio to libbloom a filter query could reach in that
 * run: a target ratio below it is below what the machine allows.
 */
#include "bench.h"
#include "bloom/bloom_internal.h"
#include "core/hash.h"
#include "core/util.h"

#include <stdlib.h>

/* The keyed floors' keys, as long as the filter workloads'. They hash with
 * this length a constant, which lets XXH3's short-key path inline. */
#define FLOOR_KEY_BYTES 16

typedef struct floor_state floor_state;

/* A workload's reads (see the top of the file): the array's size per key,
 * and one pass over the values. */
typedef struct floor_kind {
    double bits_per_key;
    uint64_t (*read)(floor_state *state);
    /* For the floors that start from keys: one pass over a key set. */
    uint64_t (*read_keys)(floor_state *state, const bench_keyset *keys);
} floor_kind;

struct floor_state {
    const floor_kind *kind;
    uint8_t *array;
    uint64_t array_bytes; /* a multiple of 32 */
    uint64_t *values;
    size_t count;
    uint64_t matches;
    amq_hasher hasher;            /* XXH3, seeded: the keyed floors' hash */
    bench_keyset present, absent; /* their keys; empty for the others */
};

static void floor_teardown(void *state)
{
    floor_state *s = state;
    free(s->array);
    free(s->values);
    bench_keyset_free(&s->present);
    bench_keyset_free(&s->absent);
    free(s);
}

static int floor_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    floor_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    s->kind = arg;
    s->count = config->keys;
    s->array_bytes = (uint64_t)((double)config->keys * s->kind->bits_per_key / 8) / 32 * 32 + 32;
    s->array = aligned_alloc(64, (size_t)((s->array_bytes + 63) / 64 * 64));
    if (s->kind->read)
        s->values = malloc(s->count * sizeof *s->values);
    if (!s->array || (s->kind->read && !s->values)) {
        floor_teardown(s);
        return amq__fail(diag, AMQ_ENOMEM, "no memory for the floor workload");
    }
    if (s->kind->read_keys) {
        amq_hasher_xxh3(&s->hasher, config->seed);
        int status = bench_keys_binary(&s->present, s->count, FLOOR_KEY_BYTES, config->seed,
                                       BENCH_KEYS_PRESENT);
        if (status == AMQ_OK)
            status = bench_keys_binary(&s->absent, s->count, FLOOR_KEY_BYTES, config->seed,
                                       BENCH_KEYS_ABSENT);
        if (status != AMQ_OK) {
            floor_teardown(s);
            return amq__fail(diag, status, "generating %zu keys: %s", config->keys,
                             amq_strerror(status));
        }
    }
    uint64_t stream = config->seed;
    for (uint64_t i = 0; i < s->array_bytes; i += 8) {
        uint64_t word = bench_splitmix64(&stream);
        for (unsigned j = 0; j < 8 && i + j < s->array_bytes; j++)
            s->array[i + j] = (uint8_t)(word >> (8 * j));
    }
    for (size_t i = 0; s->values && i < s->count; i++)
        s->values[i] = bench_splitmix64(&stream);
    *state = s;
    return AMQ_OK;
}

/* floor/cache-line's read for one value: 1 if the bit is set. */
static inline uint64_t cache_line_match(const floor_state *s, uint64_t value)
{
    const uint32_t *words = (const uint32_t *)(const void *)s->array;
    uint64_t blocks = s->array_bytes / 32;
    const uint32_t *block = words + ((value >> 32) * blocks >> 32) * 8;
    return (block[value & 7] >> ((value >> 3) & 31)) & 1;
}

static uint64_t floor_cache_line(floor_state *s)
{
    uint64_t matches = 0;
    for (size_t i = 0; i < s->count; i++)
        matches += cache_line_match(s, s->values[i]);
    s->matches = matches;
    return s->count;
}

static uint64_t floor_three_bytes(floor_state *s)
{
    uint64_t third = s->array_bytes / 3, matches = 0;
    const uint8_t *bytes = s->array;
    for (size_t i = 0; i < s->count; i++) {
        uint64_t value = s->values[i];
        uint64_t a = (uint64_t)(((unsigned __int128)value * third) >> 64);
        uint64_t b = third + ((value >> 21) & 0xffffffffULL) * third / 0x100000000ULL;
        uint64_t c = 2 * third + ((value >> 11) & 0xffffffffULL) * third / 0x100000000ULL;
        matches += (uint8_t)(bytes[a] ^ bytes[b] ^ bytes[c]) == (uint8_t)(value >> 56);
    }
    s->matches = matches;
    return s->count;
}

/* Bit j of a value's seven is at (value + j * step) scaled to the array's
 * bits, step odd and drawn from the value: independent positions that need
 * no conditional subtraction between them. 1 if all seven are set. */
static inline uint64_t seven_bits_match(const floor_state *s, uint64_t position_hash, uint64_t step)
{
    const uint64_t *words = (const uint64_t *)(const void *)s->array;
    uint64_t bits = s->array_bytes / 8 * 64, all = 1;
    for (unsigned j = 0; j < 7; j++) {
        uint64_t bit = (uint64_t)(((unsigned __int128)position_hash * bits) >> 64);
        all &= words[bit >> 6] >> (bit & 63);
        position_hash += step;
    }
    return all & 1;
}

static uint64_t floor_seven_bits(floor_state *s)
{
    uint64_t matches = 0;
    for (size_t i = 0; i < s->count; i++)
        matches += seven_bits_match(s, s->values[i], s->values[i] * 0x9e3779b97f4a7c15ULL | 1);
    s->matches = matches;
    return s->count;
}

static uint64_t floor_cache_line_keys(floor_state *s, const bench_keyset *keys)
{
    uint64_t matches = 0;
    for (size_t i = 0; i < keys->count; i++)
        matches +=
            cache_line_match(s, amq__hash64(&s->hasher, bench_key(keys, i), FLOOR_KEY_BYTES));
    s->matches = matches;
    return keys->count;
}

/* A new classic filter's seven positions for hash among the array's bits,
 * as amq_bloom_contains_hash finds them: 1 if all seven are set. */
static inline uint64_t probe_seven_match(const floor_state *s, amq_u128 hash)
{
    const uint64_t *words = (const uint64_t *)(const void *)s->array;
    amq__bloom_probe probe =
        amq__bloom_probe_start(hash, s->array_bytes / 8 * 64, AMQ__BLOOM_PROBE_LATEST);
    uint64_t all = 1;
    for (uint32_t j = 0; j < 7; j++) {
        all &= words[probe.position >> 6] >> (probe.position & 63);
        amq__bloom_probe_next(&probe, j);
    }
    return all & 1;
}

/* The seven reads of each key's XXH3-128: at independent positions
 * (floor/seven-bits-key) or at the classic filter's (floor/probe-seven-key).
 * Written once and inlined into each with own_probe a constant. */
static AMQ__ALWAYS_INLINE uint64_t seven_bits_keys(floor_state *s, const bench_keyset *keys,
                                                   bool own_probe)
{
    uint64_t matches = 0;
    for (size_t i = 0; i < keys->count; i++) {
        amq_u128 hash = amq__hash128(&s->hasher, bench_key(keys, i), FLOOR_KEY_BYTES);
        matches +=
            own_probe ? probe_seven_match(s, hash) : seven_bits_match(s, hash.low, hash.high | 1);
    }
    s->matches = matches;
    return keys->count;
}

static uint64_t floor_seven_bits_keys(floor_state *s, const bench_keyset *keys)
{
    return seven_bits_keys(s, keys, false);
}

static uint64_t floor_probe_seven_keys(floor_state *s, const bench_keyset *keys)
{
    return seven_bits_keys(s, keys, true);
}

static void floor_report(void *state, bench_figures *out)
{
    floor_state *s = state;
    bench_figures_add(out, "bytes", (double)s->array_bytes);
    bench_figures_add(out, "bits_per_key", (double)s->array_bytes * 8 / (double)s->count);
    bench_figures_add(out, "matches", (double)s->matches);
}

static uint64_t floor_read(void *state)
{
    floor_state *s = state;
    return s->kind->read(s);
}

static uint64_t floor_read_present(void *state)
{
    floor_state *s = state;
    return s->kind->read_keys(s, &s->present);
}

static uint64_t floor_read_absent(void *state)
{
    floor_state *s = state;
    return s->kind->read_keys(s, &s->absent);
}

static const bench_phase floor_phases[] = {
    { .name = "read-hashed", .run = floor_read },
    { .name = NULL },
};
/* Named as the filter workloads' and libbloom's phases, for the ratio. */
static const bench_phase floor_key_phases[] = {
    { .name = "query-present", .run = floor_read_present },
    { .name = "query-absent", .run = floor_read_absent },
    { .name = NULL },
};
static const bench_phase floor_present_key_phases[] = {
    { .name = "query-present", .run = floor_read_present },
    { .name = NULL },
};
static const floor_kind cache_line_kind = { 10.53, floor_cache_line, NULL },
                        three_bytes_kind = { 9.04, floor_three_bytes, NULL },
                        seven_bits_kind = { 9.585, floor_seven_bits, NULL },
                        cache_line_key_kind = { 10.53, NULL, floor_cache_line_keys },
                        seven_bits_key_kind = { 9.585, NULL, floor_seven_bits_keys },
                        probe_seven_key_kind = { 9.585, NULL, floor_probe_seven_keys };

const bench_workload bench_floor_cache_line = {
    .name = "floor/cache-line",
    .group = "floor",
    .description = "the machine's floor for bloom/split-block's query-hashed: one bit of one "
                   "random 32-byte block of a 10.53 bits/key array, inline, no call",
    .arg = &cache_line_kind,
    .setup = floor_setup,
    .phases = floor_phases,
    .report = floor_report,
    .teardown = floor_teardown,
};

const bench_workload bench_floor_three_bytes = {
    .name = "floor/three-bytes",
    .group = "floor",
    .description = "the machine's floor for fuse/8's query-hashed: three random bytes of a "
                   "9.04 bits/key array xored and compared inline, no call",
    .arg = &three_bytes_kind,
    .setup = floor_setup,
    .phases = floor_phases,
    .report = floor_report,
    .teardown = floor_teardown,
};

const bench_workload bench_floor_seven_bits = {
    .name = "floor/seven-bits",
    .group = "floor",
    .description = "the machine's floor for bloom/classic's present-key query: seven random "
                   "bits of a 9.585 bits/key array read and and-ed inline, no call",
    .arg = &seven_bits_kind,
    .setup = floor_setup,
    .phases = floor_phases,
    .report = floor_report,
    .teardown = floor_teardown,
};

const bench_workload bench_floor_cache_line_key = {
    .name = "floor/cache-line-key",
    .group = "floor",
    .peer = "peer/libbloom",
    .description = "the machine's floor for a blocked Bloom query of a key: XXH3-64 of the "
                   "16-byte key, then floor/cache-line's read, inline, no call",
    .arg = &cache_line_key_kind,
    .setup = floor_setup,
    .phases = floor_key_phases,
    .report = floor_report,
    .teardown = floor_teardown,
};

const bench_workload bench_floor_seven_bits_key = {
    .name = "floor/seven-bits-key",
    .group = "floor",
    .peer = "peer/libbloom",
    .description = "the machine's floor for a classic Bloom query of a present key: XXH3-128 "
                   "of the 16-byte key, then floor/seven-bits' reads, inline, no call",
    .arg = &seven_bits_key_kind,
    .setup = floor_setup,
    .phases = floor_present_key_phases,
    .report = floor_report,
    .teardown = floor_teardown,
};

const bench_workload bench_floor_probe_seven_key = {
    .name = "floor/probe-seven-key",
    .group = "floor",
    .peer = "peer/libbloom",
    .description = "the machine's floor for a classic Bloom query of a present key with the "
                   "filter's probe sequence: XXH3-128 of the 16-byte key, then the seven "
                   "positions by enhanced double hashing mod m, read and and-ed inline, no "
                   "call, no branch",
    .arg = &probe_seven_key_kind,
    .setup = floor_setup,
    .phases = floor_present_key_phases,
    .report = floor_report,
    .teardown = floor_teardown,
};
