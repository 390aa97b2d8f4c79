/*
 * bench_hfb.c - hash-free Bloom banks (src/hfb/hfb.c) at p = 1% (hfb/p1%) and
 * 0.1% (hfb/p0.1%) with the default len (the smallest stored filter within
 * 1.5 times that in memory: three or five banks of 2^22 bits at a million
 * keys), and at p = 1% with banks of 2^22 bits given (hfb/p1%-bank22: the
 * default at a million keys, fixed whatever --keys), beside the split-block
 * Bloom filter on the same keys.
 *
 * The static workload's keys (bench_static.h: bench_keys_binary, 16 bytes)
 * are random 16-byte strings: exactly what hfb takes as IDs, unhashed, while
 * the split-block filter hashes each one. They lie back to back in one
 * buffer, so the pointer to the first of a run of them is the run of IDs
 * that amq_hfb_build_hash and amq_hfb_contains_many_hash take. The phases are the
 * static workload's and one of hfb's own:
 *
 *   build          amq_hfb_build_hash from the n present IDs (the previous
 *                  filter freed, untimed): copy, sort, measure every slice,
 *                  fill and code the kept banks. ns per ID.
 *   query-present  amq_hfb_contains_hash of the n present IDs: every kept bank
 *   query-absent   the n absent IDs: most stop at the first bank; the hits
 *                  give fpr
 *   query-batch    amq_hfb_contains_many_hash of the present IDs, 1024 per call
 *   filter-absent  amq_hfb_select_hash of the absent IDs, 1024 per call: the
 *                  candidate filter of a search engine, where most
 *                  candidates are rejected (this file's phase)
 *
 * The peer is bloom/split-block (p = 1%), so the phase ratios compare the
 * query paths; the split-block filter's insert is the nearest thing to a
 * build. Figures:
 *
 *   bytes, bits_per_key          the banks in memory (2^len bits each)
 *   stored_bits_per_key          the banks as saved: Golomb-Rice or raw
 *   bank_bits, banks             len and the banks kept
 *   expected_fpr                 the banks' product of fills
 *   target_fpr, fpr, false_negatives, bound_bits_per_key   as every
 *                                static workload
 *   classic_bits_per_key_at_fpr  log2(1/fpr) log2(e): a classic Bloom
 *                                filter at the measured rate
 *   gcs_bits_per_key_at_fpr      log2(1/fpr) + 1.58: a Golomb-coded set at
 *                                the measured rate, from its formula (Rice
 *                                code, P = log2 M), not measured here
 */
#include "bench_static.h"

#include "amq/hfb.h"

#include <math.h>

/* A workload's build options. */
typedef struct hfb_shape {
    double fpr;
    uint32_t bank_bits; /* 0: the default */
} hfb_shape;

/* keys[0] starts the count contiguous 16-byte IDs (see above); the seed is
 * unused, the IDs are not hashed. */
static int hfb_build(void **filter, const void *const *keys, const size_t *lens, size_t count,
                     uint64_t seed, const void *options, amq_diag *diag)
{
    (void)lens;
    (void)seed;
    const hfb_shape *shape = options;
    amq_hfb_params params = { .fpr = shape->fpr, .bank_bits = shape->bank_bits };
    return amq_hfb_build_hash((amq_hfb **)filter, &params, keys[0], count, diag);
}

static bool hfb_contains(const void *filter, const void *key, size_t len)
{
    (void)len;
    return amq_hfb_contains_hash(filter, key);
}

static void hfb_contains_many(const void *filter, const void *const *keys, const size_t *lens,
                              size_t count, uint8_t *results)
{
    (void)lens;
    amq_hfb_contains_many_hash(results, filter, keys[0], count);
}

static void hfb_family_report(const void *filter, size_t keys, bench_figures *out)
{
    double n = (double)keys;
    bench_figures_add(out, "bytes", (double)amq_hfb_memory_bytes(filter));
    bench_figures_add(out, "bits_per_key", (double)amq_hfb_memory_bytes(filter) * 8 / n);
    bench_figures_add(out, "stored_bits_per_key", (double)amq_hfb_stored_bytes(filter) * 8 / n);
    bench_figures_add(out, "bank_bits", amq_hfb_bank_bits(filter));
    bench_figures_add(out, "banks", (double)amq_hfb_bank_count(filter));
    bench_figures_add(out, "expected_fpr", amq_hfb_expected_fpr(filter));
}

static void hfb_destroy(void *filter)
{
    amq_hfb_free(filter);
}

static uint64_t hfb_filter_absent(void *state)
{
    const amq_hfb *filter = bench_static_filter(state);
    const bench_keyset *absent = &bench_static_keys(state)->absent;
    uint8_t kept[BENCH_FILTER_BATCH * AMQ_HFB_ID_BYTES];
    size_t n = absent->count;
    for (size_t start = 0; start < n; start += BENCH_FILTER_BATCH) {
        size_t count = n - start < BENCH_FILTER_BATCH ? n - start : BENCH_FILTER_BATCH;
        amq_hfb_select_hash(kept, filter, bench_key(absent, start), count);
    }
    return n;
}

/* The shared figures, and the sizes other families need at the rate
 * measured. */
static void hfb_report(void *state, bench_figures *out)
{
    bench_static_report(state, out);
    double fpr = bench_static_measured_fpr(state);
    if (fpr > 0) {
        bench_figures_add(out, "classic_bits_per_key_at_fpr", -log2(fpr) / log(2.0));
        bench_figures_add(out, "gcs_bits_per_key_at_fpr", -log2(fpr) + 1.58);
    }
}

static const bench_static_ops hfb_ops = {
    .build = hfb_build,
    .contains = hfb_contains,
    .contains_many = hfb_contains_many,
    .report = hfb_family_report,
    .destroy = hfb_destroy,
};

static const bench_phase hfb_phases[] = {
    { .name = "build", .prepare = bench_static_drop, .run = bench_static_build },
    { .name = "query-present", .run = bench_static_query_present },
    { .name = "query-absent", .run = bench_static_query_absent },
    { .name = "query-batch", .run = bench_static_query_batch },
    { .name = "filter-absent", .run = hfb_filter_absent },
    { .name = NULL },
};

static const hfb_shape p1 = { 0.01, 0 }, p01 = { 0.001, 0 }, p1_bank22 = { 0.01, 22 };

static const bench_static_variant p1_variant = { .ops = &hfb_ops, .options = &p1, .fpr = 0.01 },
                                  p01_variant = { .ops = &hfb_ops, .options = &p01, .fpr = 0.001 },
                                  p1_bank22_variant = { .ops = &hfb_ops,
                                                        .options = &p1_bank22,
                                                        .fpr = 0.01 };

const bench_workload bench_hfb_p1 = {
    .name = "hfb/p1%",
    .group = "hfb",
    .peer = "bloom/split-block",
    .description = "hash-free Bloom banks, p = 1%, 16-byte random keys as IDs (unhashed); "
                   "build; batch = contains_many; filter-absent = filter_ids",
    .arg = &p1_variant,
    .setup = bench_static_setup,
    .phases = hfb_phases,
    .report = hfb_report,
    .teardown = bench_static_teardown,
    .family = "hfb",
};

const bench_workload bench_hfb_p01 = {
    .name = "hfb/p0.1%",
    .group = "hfb",
    .peer = "bloom/split-block",
    .description = "hash-free Bloom banks, p = 0.1%, 16-byte random keys as IDs (unhashed); "
                   "build; batch = contains_many; filter-absent = filter_ids",
    .arg = &p01_variant,
    .setup = bench_static_setup,
    .phases = hfb_phases,
    .report = hfb_report,
    .teardown = bench_static_teardown,
    .family = "hfb",
};

const bench_workload bench_hfb_p1_bank22 = {
    .name = "hfb/p1%-bank22",
    .group = "hfb",
    .peer = "bloom/split-block",
    .description = "hash-free Bloom banks, p = 1%, banks of 2^22 bits, 16-byte random keys as "
                   "IDs (unhashed); build; batch = contains_many; filter-absent = filter_ids",
    .arg = &p1_bank22_variant,
    .setup = bench_static_setup,
    .phases = hfb_phases,
    .report = hfb_report,
    .teardown = bench_static_teardown,
    .family = "hfb",
};
