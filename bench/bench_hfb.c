/*
 * bench_hfb.c - hash-free Bloom banks (src/hfb.c) at p = 1% (hfb/p1%) and
 * 0.1% (hfb/p0.1%) with the default len (the smallest stored filter: one
 * bank of 2^27 or 2^30 bits at a million keys), and at p = 1% with banks of
 * 2^22 bits (hfb/p1%-bank22: three banks, a tenth of the memory, for 1.1
 * more stored bits per ID), beside the split-block Bloom filter on the same
 * keys.
 *
 * The shared workload's keys (bench_keys_binary, 16 bytes) are random
 * 16-byte strings: exactly what hfb takes as IDs, unhashed, while the
 * split-block filter hashes each one. A static filter has no insert, so the
 * workload is its own (bench_filter.h's phases add keys one by one), with
 * the shared key sets and phase names where they mean the same:
 *
 *   build          amq_hfb_build from the n present IDs (the previous
 *                  filter freed, untimed): copy, sort, measure every slice,
 *                  fill and code the kept banks. ns per ID.
 *   query-present  amq_hfb_contains of the n present IDs: every kept bank
 *   query-absent   the n absent IDs: most stop at the first bank; the hits
 *                  give fpr
 *   query-batch    amq_hfb_contains_many of the present IDs, 1024 per call
 *   filter-absent  amq_hfb_filter_ids of the absent IDs, 1024 per call: the
 *                  candidate filter of a search engine, where most
 *                  candidates are rejected
 *
 * The peer is bloom/split-block (p = 1%), so the phase ratios compare the
 * query paths; the split-block filter's insert is the nearest thing to a
 * build. Figures:
 *
 *   bytes, bits_per_key          the banks in memory (2^len bits each)
 *   stored_bits_per_key          the banks as saved: Golomb-Rice or raw
 *   bank_bits, banks             len and the banks kept
 *   target_fpr, expected_fpr     p, and the banks' product of fills
 *   fpr, false_negatives         measured
 *   classic_bits_per_key_at_fpr  log2(1/fpr) log2(e): a classic Bloom
 *                                filter at the measured rate
 *   gcs_bits_per_key_at_fpr      log2(1/fpr) + 1.58: a Golomb-coded set at
 *                                the measured rate, from its formula (Rice
 *                                code, P = log2 M), not measured here
 */
#include "bench.h"
#include "util.h"

#include "amq/hfb.h"

#include <math.h>
#include <stdlib.h>

#define HFB_BATCH 1024

/* A workload's build parameters. */
typedef struct hfb_variant {
    double fpr;
    uint32_t bank_bits; /* 0: the default */
} hfb_variant;

typedef struct hfb_state {
    hfb_variant variant;
    amq_hfb *filter;
    bench_keyset present, absent;
    uint8_t *results, *kept;
    uint64_t present_hits, absent_hits, batch_hits, filter_hits; /* filter_hits: kept */
} hfb_state;

static void hfb_teardown(void *state)
{
    hfb_state *s = state;
    amq_hfb_free(s->filter);
    bench_keyset_free(&s->present);
    bench_keyset_free(&s->absent);
    free(s->results);
    free(s->kept);
    free(s);
}

static int hfb_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    hfb_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    s->variant = *(const hfb_variant *)arg;
    int status = bench_keys_binary(&s->present, config->keys, AMQ_HFB_ID_BYTES, config->seed,
                                   BENCH_KEYS_PRESENT);
    if (status == AMQ_OK)
        status = bench_keys_binary(&s->absent, config->keys, AMQ_HFB_ID_BYTES, config->seed,
                                   BENCH_KEYS_ABSENT);
    if (status == AMQ_OK) {
        s->results = malloc(config->keys);
        s->kept = malloc(HFB_BATCH * AMQ_HFB_ID_BYTES);
        if (!s->results || !s->kept)
            status = AMQ_ENOMEM;
    }
    if (status != AMQ_OK) {
        hfb_teardown(s);
        return amq__fail(diag, status, "setting up %zu keys: %s", config->keys,
                         amq_strerror(status));
    }
    *state = s;
    return AMQ_OK;
}

static void hfb_drop(void *state)
{
    hfb_state *s = state;
    amq_hfb_free(s->filter);
    s->filter = NULL;
}

static uint64_t hfb_build(void *state)
{
    hfb_state *s = state;
    amq_hfb_params params = { .fpr = s->variant.fpr, .bank_bits = s->variant.bank_bits };
    if (amq_hfb_build(&s->filter, &params, s->present.bytes, s->present.count, NULL) != AMQ_OK)
        return 0; /* the runner reports a phase without operations */
    return s->present.count;
}

static uint64_t count_hits(const hfb_state *s, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += amq_hfb_contains(s->filter, bench_key(keys, i));
    return hits;
}

static uint64_t hfb_query_present(void *state)
{
    hfb_state *s = state;
    s->present_hits = count_hits(s, &s->present);
    return s->present.count;
}

static uint64_t hfb_query_absent(void *state)
{
    hfb_state *s = state;
    s->absent_hits = count_hits(s, &s->absent);
    return s->absent.count;
}

static uint64_t hfb_query_batch(void *state)
{
    hfb_state *s = state;
    size_t n = s->present.count;
    for (size_t start = 0; start < n; start += HFB_BATCH) {
        size_t count = n - start < HFB_BATCH ? n - start : HFB_BATCH;
        amq_hfb_contains_many(s->filter, bench_key(&s->present, start), count, s->results + start);
    }
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += s->results[i];
    s->batch_hits = hits;
    return n;
}

static uint64_t hfb_filter_absent(void *state)
{
    hfb_state *s = state;
    size_t n = s->absent.count;
    uint64_t kept = 0;
    for (size_t start = 0; start < n; start += HFB_BATCH) {
        size_t count = n - start < HFB_BATCH ? n - start : HFB_BATCH;
        kept += amq_hfb_filter_ids(s->filter, bench_key(&s->absent, start), count, s->kept);
    }
    s->filter_hits = kept;
    return n;
}

static void hfb_report(void *state, bench_figures *out)
{
    hfb_state *s = state;
    double n = (double)s->present.count;
    double fpr = (double)s->absent_hits / n;
    bench_figures_add(out, "bytes", (double)amq_hfb_table_bytes(s->filter));
    bench_figures_add(out, "bits_per_key", (double)amq_hfb_table_bytes(s->filter) * 8 / n);
    bench_figures_add(out, "stored_bits_per_key", (double)amq_hfb_stored_bytes(s->filter) * 8 / n);
    bench_figures_add(out, "bank_bits", amq_hfb_bank_bits(s->filter));
    bench_figures_add(out, "banks", (double)amq_hfb_bank_count(s->filter));
    bench_figures_add(out, "target_fpr", s->variant.fpr);
    bench_figures_add(out, "expected_fpr", amq_hfb_expected_fpr(s->filter));
    bench_figures_add(out, "fpr", fpr);
    /* Present IDs denied, one by one or in a batch. */
    bench_figures_add(out, "false_negatives",
                      2 * n - (double)s->present_hits - (double)s->batch_hits);
    if (fpr > 0) {
        bench_figures_add(out, "classic_bits_per_key_at_fpr", -log2(fpr) / log(2.0));
        bench_figures_add(out, "gcs_bits_per_key_at_fpr", -log2(fpr) + 1.58);
    }
}

static const bench_phase hfb_phases[] = {
    { .name = "build", .prepare = hfb_drop, .run = hfb_build },
    { .name = "query-present", .run = hfb_query_present },
    { .name = "query-absent", .run = hfb_query_absent },
    { .name = "query-batch", .run = hfb_query_batch },
    { .name = "filter-absent", .run = hfb_filter_absent },
    { .name = NULL },
};

static const hfb_variant p1 = { 0.01, 0 }, p01 = { 0.001, 0 }, p1_bank22 = { 0.01, 22 };

const bench_workload bench_hfb_p1 = {
    .name = "hfb/p1%",
    .group = "hfb",
    .peer = "bloom/split-block",
    .description = "hash-free Bloom banks, p = 1%, 16-byte random keys as IDs (unhashed); "
                   "build; batch = contains_many; filter-absent = filter_ids",
    .arg = &p1,
    .setup = hfb_setup,
    .phases = hfb_phases,
    .report = hfb_report,
    .teardown = hfb_teardown,
};

const bench_workload bench_hfb_p01 = {
    .name = "hfb/p0.1%",
    .group = "hfb",
    .peer = "bloom/split-block",
    .description = "hash-free Bloom banks, p = 0.1%, 16-byte random keys as IDs (unhashed); "
                   "build; batch = contains_many; filter-absent = filter_ids",
    .arg = &p01,
    .setup = hfb_setup,
    .phases = hfb_phases,
    .report = hfb_report,
    .teardown = hfb_teardown,
};

const bench_workload bench_hfb_p1_bank22 = {
    .name = "hfb/p1%-bank22",
    .group = "hfb",
    .peer = "bloom/split-block",
    .description = "hash-free Bloom banks, p = 1%, banks of 2^22 bits, 16-byte random keys as "
                   "IDs (unhashed); build; batch = contains_many; filter-absent = filter_ids",
    .arg = &p1_bank22,
    .setup = hfb_setup,
    .phases = hfb_phases,
    .report = hfb_report,
    .teardown = hfb_teardown,
};
