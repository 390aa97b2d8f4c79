/*
 * bench_blocked_bloom.c - the blocked Bloom filters (src/bloom/blocked_bloom.c),
 * both layouts, beside libbloom on the shared filter workload
 * (bench_filter.h): n 16-byte keys at p = 0.01, sized by the blocked
 * formula. bloom/split-block runs the AVX2 path where the CPU has it.
 * Figures: bytes, bits_per_key, hashes, and classic_bits_per_key =
 * -ln p / (ln 2)^2, what a classic filter needs at the same p (the extra is
 * the price of one cache line per key).
 */
#include "bench_filter.h"

#include "amq/bloom.h"

#include <math.h>

/* options: the amq_blocked_layout. */
static int blocked_create(void **filter, size_t keys, uint64_t seed, const void *options,
                          amq_diag *diag)
{
    (void)diag;
    amq_blocked_bloom_params params = { .capacity = keys,
                                        .fpr = BENCH_FILTER_FPR,
                                        .layout = *(const amq_blocked_layout *)options };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_blocked_bloom_new((amq_blocked_bloom **)filter, &params, NULL);
}

static void blocked_clear(void *filter)
{
    amq_blocked_bloom_clear(filter);
}

static void blocked_add(void *filter, const void *key, size_t len)
{
    amq_blocked_bloom_add(filter, key, len);
}

static bool blocked_contains(const void *filter, const void *key, size_t len)
{
    return amq_blocked_bloom_contains(filter, key, len);
}

static void blocked_contains_many(const void *filter, const void *const *keys, const size_t *lens,
                                  size_t count, uint8_t *results)
{
    amq_blocked_bloom_contains_many(results, filter, keys, lens, count);
}

static amq_u128 blocked_hash(const void *filter, const void *key, size_t len)
{
    return (amq_u128){ .low = amq_hash64(amq_blocked_bloom_hasher(filter), key, len) };
}

static bool blocked_contains_hash(const void *filter, amq_u128 hash)
{
    return amq_blocked_bloom_contains_hash(filter, hash.low);
}

static void blocked_report(const void *filter, size_t keys, bench_figures *out)
{
    double bits = (double)amq_blocked_bloom_bits(filter);
    bench_figures_add(out, "bytes", bits / 8);
    bench_figures_add(out, "bits_per_key", bits / (double)keys);
    bench_figures_add(out, "classic_bits_per_key", -log(BENCH_FILTER_FPR) / (log(2.0) * log(2.0)));
    bench_figures_add(out, "hashes", amq_blocked_bloom_hashes(filter));
}

static void blocked_destroy(void *filter)
{
    amq_blocked_bloom_free(filter);
}

static void blocked_contains_many_hash(const void *filter, const uint64_t *hashes, size_t count,
                                       uint8_t *results)
{
    amq_blocked_bloom_contains_many_hash(results, filter, hashes, count);
}

static const bench_filter_ops blocked_ops = {
    .create = blocked_create,
    .clear = blocked_clear,
    .add = blocked_add,
    .contains = blocked_contains,
    .contains_many = blocked_contains_many,
    .hash = blocked_hash,
    .contains_hash = blocked_contains_hash,
    .contains_many_hash = blocked_contains_many_hash,
    .report = blocked_report,
    .destroy = blocked_destroy,
};

static const amq_blocked_layout split_layout = AMQ_BLOCKED_SPLIT, block_layout = AMQ_BLOCKED_BLOCK;
static const bench_filter_variant split_variant = { .ops = &blocked_ops, .options = &split_layout };
static const bench_filter_variant block_variant = { .ops = &blocked_ops, .options = &block_layout };

const bench_workload bench_bloom_split_block = {
    .name = "bloom/split-block",
    .group = "bloom",
    .peer = "peer/libbloom",
    .description = "split-block Bloom filter (256-bit blocks, k = 8), p = 0.01, 16-byte keys",
    .arg = &split_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases,
    .report = bench_filter_report,
    .teardown = bench_filter_teardown,
    .family = "blocked-bloom",
};

const bench_workload bench_bloom_blocked = {
    .name = "bloom/blocked",
    .group = "bloom",
    .peer = "peer/libbloom",
    .description = "blocked Bloom filter (512-bit blocks, best k), p = 0.01, 16-byte keys",
    .arg = &block_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases,
    .report = bench_filter_report,
    .teardown = bench_filter_teardown,
    .family = "blocked-bloom",
};
