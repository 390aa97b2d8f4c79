/*
 * bench_bloom.c - the classic Bloom filter (src/bloom/bloom.c) beside its peer,
 * libbloom, on the shared filter workload (bench_filter.h): n 16-byte keys at
 * p = 0.01. The batch phase is amq_bloom_contains_many, which hashes and
 * prefetches ahead; its ratio to query-present is what batching buys.
 * Figures: bytes, bits_per_key, hashes, and formula_bits_per_key =
 * -ln p / (ln 2)^2, the classic filter's size by the formula.
 */
#include "bench_filter.h"

#include "amq/bloom.h"

#include <math.h>

static int classic_create(void **filter, size_t keys, uint64_t seed, const void *options,
                          amq_diag *diag)
{
    (void)options;
    (void)diag;
    amq_bloom_params params = { .capacity = keys, .fpr = BENCH_FILTER_FPR };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_bloom_new((amq_bloom **)filter, &params, NULL);
}

static void classic_clear(void *filter)
{
    amq_bloom_clear(filter);
}

static void classic_add(void *filter, const void *key, size_t len)
{
    amq_bloom_add(filter, key, len);
}

static bool classic_contains(const void *filter, const void *key, size_t len)
{
    return amq_bloom_contains(filter, key, len);
}

static void classic_contains_many(const void *filter, const void *const *keys, const size_t *lens,
                                  size_t count, uint8_t *results)
{
    amq_bloom_contains_many(results, filter, keys, lens, count);
}

static amq_u128 classic_hash(const void *filter, const void *key, size_t len)
{
    return amq_hash128(amq_bloom_hasher(filter), key, len);
}

static bool classic_contains_hash(const void *filter, amq_u128 hash)
{
    return amq_bloom_contains_hash(filter, hash);
}

static void classic_report(const void *filter, size_t keys, bench_figures *out)
{
    double bits = (double)amq_bloom_bits(filter);
    bench_figures_add(out, "bytes", ceil(bits / 64) * 8);
    bench_figures_add(out, "bits_per_key", bits / (double)keys);
    bench_figures_add(out, "formula_bits_per_key", -log(BENCH_FILTER_FPR) / (log(2.0) * log(2.0)));
    bench_figures_add(out, "hashes", amq_bloom_hashes(filter));
}

static void classic_destroy(void *filter)
{
    amq_bloom_free(filter);
}

static const bench_filter_ops classic_ops = {
    .create = classic_create,
    .clear = classic_clear,
    .add = classic_add,
    .contains = classic_contains,
    .contains_many = classic_contains_many,
    .hash = classic_hash,
    .contains_hash = classic_contains_hash,
    .report = classic_report,
    .destroy = classic_destroy,
};

static const bench_filter_variant classic_variant = { .ops = &classic_ops };

const bench_workload bench_bloom_classic = {
    .name = "bloom/classic",
    .group = "bloom",
    .peer = "peer/libbloom",
    .description = "classic Bloom filter, p = 0.01, 16-byte keys; batch = contains_many",
    .arg = &classic_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases,
    .report = bench_filter_report,
    .teardown = bench_filter_teardown,
    .family = "bloom",
};
