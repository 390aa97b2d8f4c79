/*
 * bench_bloom.c - the classic Bloom filter (src/bloom.c) beside its peer,
 * libbloom, on the same workload: n 16-byte keys at p = 0.01 (see
 * bench_libbloom.c for the phases and figures they share).
 *
 * Phases: insert the n present keys (the filter is cleared before each
 * pass, untimed); query them one by one; query n absent keys one by one
 * (every hit is a false positive); query the present keys again through
 * amq_bloom_contains_many in groups of 1024, which hashes and prefetches
 * ahead - its ratio to query-present is what batching buys on this filter.
 * Figures: as libbloom's, plus formula_bits_per_key = -ln p / (ln 2)^2, the
 * classic filter's size from the formula.
 */
#include "bench.h"
#include "util.h"

#include "amq/bloom.h"

#include <math.h>
#include <stdlib.h>

#define BLOOM_BENCH_FPR     0.01
#define BLOOM_BENCH_KEY_LEN 16
#define BLOOM_BENCH_BATCH   1024

typedef struct bloom_state {
    amq_bloom *filter;
    bench_keyset present, absent;
    const void **pointers; /* the present keys, for the batch phase */
    size_t *lens;
    uint8_t *results;
    uint64_t present_hits, absent_hits, batch_hits;
} bloom_state;

static void bloom_teardown(void *state)
{
    bloom_state *s = state;
    amq_bloom_free(s->filter);
    bench_keyset_free(&s->present);
    bench_keyset_free(&s->absent);
    free(s->pointers);
    free(s->lens);
    free(s->results);
    free(s);
}

static int bloom_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    (void)arg;
    bloom_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    amq_bloom_params params = { .capacity = config->keys, .fpr = BLOOM_BENCH_FPR };
    amq_hasher_xxh3(&params.hasher, config->seed);
    int status = amq_bloom_new(&s->filter, &params);
    if (status == AMQ_OK)
        status = bench_keys_binary(&s->present, config->keys, BLOOM_BENCH_KEY_LEN, config->seed,
                                   BENCH_KEYS_PRESENT);
    if (status == AMQ_OK)
        status = bench_keys_binary(&s->absent, config->keys, BLOOM_BENCH_KEY_LEN, config->seed,
                                   BENCH_KEYS_ABSENT);
    if (status == AMQ_OK) {
        s->pointers = malloc(config->keys * sizeof *s->pointers);
        s->lens = malloc(config->keys * sizeof *s->lens);
        s->results = malloc(config->keys);
        if (!s->pointers || !s->lens || !s->results)
            status = AMQ_ENOMEM;
    }
    if (status != AMQ_OK) {
        bloom_teardown(s);
        return amq__fail(diag, status, "setting up %zu keys: %s", config->keys,
                         amq_strerror(status));
    }
    for (size_t i = 0; i < config->keys; i++) {
        s->pointers[i] = bench_key(&s->present, i);
        s->lens[i] = bench_key_len(&s->present, i);
    }
    *state = s;
    return AMQ_OK;
}

static void bloom_empty(void *state)
{
    bloom_state *s = state;
    amq_bloom_clear(s->filter);
}

static uint64_t bloom_insert(void *state)
{
    bloom_state *s = state;
    for (size_t i = 0; i < s->present.count; i++)
        amq_bloom_add(s->filter, bench_key(&s->present, i), bench_key_len(&s->present, i));
    return s->present.count;
}

static uint64_t count_hits(const bloom_state *s, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += amq_bloom_contains(s->filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}

static uint64_t bloom_query_present(void *state)
{
    bloom_state *s = state;
    s->present_hits = count_hits(s, &s->present);
    return s->present.count;
}

static uint64_t bloom_query_absent(void *state)
{
    bloom_state *s = state;
    s->absent_hits = count_hits(s, &s->absent);
    return s->absent.count;
}

static uint64_t bloom_query_batch(void *state)
{
    bloom_state *s = state;
    size_t n = s->present.count;
    for (size_t start = 0; start < n; start += BLOOM_BENCH_BATCH) {
        size_t count = n - start < BLOOM_BENCH_BATCH ? n - start : BLOOM_BENCH_BATCH;
        amq_bloom_contains_many(s->filter, s->pointers + start, s->lens + start, count,
                                s->results + start);
    }
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += s->results[i];
    s->batch_hits = hits;
    return n;
}

static void bloom_report(void *state, bench_figures *out)
{
    bloom_state *s = state;
    double n = (double)s->present.count;
    double bits = (double)amq_bloom_bits(s->filter);
    bench_figures_add(out, "bytes", ceil(bits / 64) * 8);
    bench_figures_add(out, "bits_per_key", bits / n);
    bench_figures_add(out, "formula_bits_per_key", -log(BLOOM_BENCH_FPR) / (log(2.0) * log(2.0)));
    bench_figures_add(out, "bound_bits_per_key", -log2(BLOOM_BENCH_FPR));
    bench_figures_add(out, "hashes", amq_bloom_hashes(s->filter));
    bench_figures_add(out, "target_fpr", BLOOM_BENCH_FPR);
    bench_figures_add(out, "fpr", (double)s->absent_hits / n);
    bench_figures_add(out, "false_negatives",
                      2 * n - (double)s->present_hits - (double)s->batch_hits);
}

static const bench_phase bloom_phases[] = {
    { .name = "insert", .prepare = bloom_empty, .run = bloom_insert },
    { .name = "query-present", .run = bloom_query_present },
    { .name = "query-absent", .run = bloom_query_absent },
    { .name = "query-batch", .run = bloom_query_batch },
    { .name = NULL },
};

const bench_workload bench_bloom_classic = {
    .name = "bloom/classic",
    .group = "bloom",
    .peer = "peer/libbloom",
    .description = "classic Bloom filter, p = 0.01, 16-byte keys; batch = contains_many",
    .setup = bloom_setup,
    .phases = bloom_phases,
    .report = bloom_report,
    .teardown = bloom_teardown,
};
