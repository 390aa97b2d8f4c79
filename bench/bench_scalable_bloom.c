/*
 * bench_scalable_bloom.c - the scalable Bloom filter (src/bloom/scalable_bloom.c)
 * beside its peer, libbloom, on the shared filter workload (bench_filter.h):
 * n 16-byte keys at p = 0.01.
 *
 * libbloom and the classic filter are told n; the scalable filter is not:
 * it starts at n/64 keys with the default growth (2) and tightening, which
 * is what a user who does not know n gets. At n keys it has seven stages
 * (n/64 * (1 + 2 + ... + 32) = 63n/64 keys in the first six), the seventh
 * just opened, so bits_per_key is near its worst: the newest stage, sized
 * for n keys, is almost empty. Each insert pass starts from
 * amq_scalable_bloom_clear, one empty stage, and grows it again: growing is
 * part of what is timed. The batch phase is amq_scalable_bloom_contains_many.
 *
 * Figures: bytes, bits_per_key, stages, and expected_fpr (the compound rate
 * the stages' fills predict, 1 - prod(1 - fill_i^k_i)).
 */
#include "bench_filter.h"
#include "core/util.h"

#include "amq/bloom.h"

/* The scalable filter starts at n / SCALABLE_START_DIVISOR keys. */
#define SCALABLE_START_DIVISOR 64

static int scalable_create(void **filter, size_t keys, uint64_t seed, const void *options,
                           amq_diag *diag)
{
    (void)options;
    amq_scalable_bloom_params params = {
        .capacity = keys / SCALABLE_START_DIVISOR ? keys / SCALABLE_START_DIVISOR : 1,
        .fpr = BENCH_FILTER_FPR,
    };
    amq_hasher_xxh3(&params.hasher, seed);
    int status = amq_scalable_bloom_new((amq_scalable_bloom **)filter, &params, NULL);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "a scalable filter starting at %llu keys: %s",
                         (unsigned long long)params.capacity, amq_strerror(status));
    return AMQ_OK;
}

static void scalable_clear(void *filter)
{
    amq_scalable_bloom_clear(filter);
}

static void scalable_add(void *filter, const void *key, size_t len)
{
    /* 0 (maybe present already) is a false positive, which the fpr figure
     * counts on the absent keys; errors (a 65th stage, memory) cannot occur
     * at seven stages short of memory, which the false_negatives figure
     * would show. */
    (void)amq_scalable_bloom_add(filter, key, len);
}

static bool scalable_contains(const void *filter, const void *key, size_t len)
{
    return amq_scalable_bloom_contains(filter, key, len);
}

static void scalable_contains_many(const void *filter, const void *const *keys, const size_t *lens,
                                   size_t count, uint8_t *results)
{
    amq_scalable_bloom_contains_many(results, filter, keys, lens, count);
}

static void scalable_report(const void *filter, size_t keys, bench_figures *out)
{
    double bytes = (double)amq_scalable_bloom_memory_bytes(filter);
    bench_figures_add(out, "bytes", bytes);
    bench_figures_add(out, "bits_per_key", bytes * 8 / (double)keys);
    bench_figures_add(out, "stages", (double)amq_scalable_bloom_stages(filter));
    bench_figures_add(out, "expected_fpr", amq_scalable_bloom_expected_fpr(filter));
}

static void scalable_destroy(void *filter)
{
    amq_scalable_bloom_free(filter);
}

static amq_u128 scalable_hash(const void *filter, const void *key, size_t len)
{
    return amq_hash128(amq_scalable_bloom_hasher(filter), key, len);
}

static bool scalable_contains_hash(const void *filter, amq_u128 hash)
{
    return amq_scalable_bloom_contains_hash(filter, hash);
}

static const bench_filter_ops scalable_ops = {
    .create = scalable_create,
    .clear = scalable_clear,
    .add = scalable_add,
    .contains = scalable_contains,
    .contains_many = scalable_contains_many,
    .hash = scalable_hash,
    .contains_hash = scalable_contains_hash,
    .report = scalable_report,
    .destroy = scalable_destroy,
};

static const bench_filter_variant scalable_variant = { .ops = &scalable_ops };

const bench_workload bench_bloom_scalable = {
    .name = "bloom/scalable",
    .group = "bloom",
    .peer = "peer/libbloom",
    .description = "scalable Bloom filter started at n/64, p = 0.01, 16-byte keys; batch = "
                   "contains_many",
    .arg = &scalable_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases,
    .report = bench_filter_report,
    .teardown = bench_filter_teardown,
    .family = "scalable-bloom",
};
