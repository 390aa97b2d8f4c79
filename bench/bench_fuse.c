/*
 * bench_fuse.c - binary fuse filters (src/fuse/fuse.c) with 8- and 16-bit
 * fingerprints, 3-wise (fuse/8, fuse/16) and 4-wise (fuse/8-4wise), on the
 * static workload (bench_static.h) beside the split-block Bloom filter:
 *
 *   build          amq_fuse_build from the n present keys: hash, sort into
 *                  segments, peel, assign; ns per key
 *   query-present  amq_fuse_contains: one hash, three (four) slot reads
 *   query-absent   the same for the absent keys: fpr
 *   query-batch    amq_fuse_contains_many, 1024 keys per call: hashes and
 *                  prefetches ahead
 *   query-hashed   amq_fuse_contains_hash of the absent keys' 64-bit hashes,
 *                  one call per hash: the query without the XXH3 hash of
 *                  the 16-byte key
 *   hashed-batch   amq_fuse_contains_many_hash of the same hashes,
 *                  1024 per call: the typed API's fastest path, and the
 *                  figure comparable to reference implementations that
 *                  time a loop of inlined queries of 64-bit keys
 *
 * The rate is 2^-f whatever n (target_fpr 0.39% and 0.0015%); the split-block
 * peer stays at p = 0.01, so the ratios of bits_per_key compare filters of
 * different rates. Figures: bytes, bits_per_key (f x slots / n; about 1.13 f
 * 3-wise, 1.08 f 4-wise at 10^6 and above), fingerprint_bits, arity,
 * attempts (constructions tried: 1 unless a peeling failed), expected_fpr.
 */
#include "bench_static.h"

#include "amq/fuse.h"

/* A variant's build options. */
typedef struct fuse_shape {
    uint32_t fingerprint_bits, arity;
} fuse_shape;

static int fuse_build(void **filter, const void *const *keys, const size_t *lens, size_t count,
                      uint64_t seed, const void *options, amq_diag *diag)
{
    const fuse_shape *shape = options;
    amq_fuse_params params = { .fingerprint_bits = shape->fingerprint_bits, .arity = shape->arity };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_fuse_build((amq_fuse **)filter, &params, keys, lens, count, diag);
}

static bool fuse_contains(const void *filter, const void *key, size_t len)
{
    return amq_fuse_contains(filter, key, len);
}

static void fuse_contains_many(const void *filter, const void *const *keys, const size_t *lens,
                               size_t count, uint8_t *results)
{
    amq_fuse_contains_many(results, filter, keys, lens, count);
}

static uint64_t fuse_hash(const void *filter, const void *key, size_t len)
{
    return amq_hash64(amq_fuse_hasher(filter), key, len);
}

static bool fuse_contains_hash(const void *filter, uint64_t hash)
{
    return amq_fuse_contains_hash(filter, hash);
}

static void fuse_contains_many_hash(const void *filter, const uint64_t *hashes, size_t count,
                                    uint8_t *results)
{
    amq_fuse_contains_many_hash(results, filter, hashes, count);
}

static void fuse_report(const void *filter, size_t keys, bench_figures *out)
{
    double bytes = (double)amq_fuse_memory_bytes(filter);
    bench_figures_add(out, "bytes", bytes);
    bench_figures_add(out, "bits_per_key", bytes * 8 / (double)keys);
    bench_figures_add(out, "fingerprint_bits", amq_fuse_fingerprint_bits(filter));
    bench_figures_add(out, "arity", amq_fuse_arity(filter));
    bench_figures_add(out, "attempts", amq_fuse_attempts(filter));
    bench_figures_add(out, "expected_fpr", amq_fuse_expected_fpr(filter));
}

static void fuse_destroy(void *filter)
{
    amq_fuse_free(filter);
}

static const bench_static_ops fuse_ops = {
    .build = fuse_build,
    .contains = fuse_contains,
    .contains_many = fuse_contains_many,
    .hash = fuse_hash,
    .contains_hash = fuse_contains_hash,
    .contains_many_hash = fuse_contains_many_hash,
    .report = fuse_report,
    .destroy = fuse_destroy,
};

static const bench_phase fuse_phases[] = {
    { .name = "build", .prepare = bench_static_drop, .run = bench_static_build },
    { .name = "query-present", .run = bench_static_query_present },
    { .name = "query-absent", .run = bench_static_query_absent },
    { .name = "query-batch", .run = bench_static_query_batch },
    { .name = "query-hashed", .run = bench_static_query_hashed },
    { .name = "hashed-batch", .run = bench_static_query_hashed_batch },
    { .name = NULL },
};

static const fuse_shape f8 = { 8, 3 }, f16 = { 16, 3 }, f8_4wise = { 8, 4 };

static const bench_static_variant fuse8_variant = { .ops = &fuse_ops,
                                                    .options = &f8,
                                                    .fpr = 1.0 / 256 };
static const bench_static_variant fuse16_variant = { .ops = &fuse_ops,
                                                     .options = &f16,
                                                     .fpr = 1.0 / 65536 };
static const bench_static_variant fuse8_4wise_variant = { .ops = &fuse_ops,
                                                          .options = &f8_4wise,
                                                          .fpr = 1.0 / 256 };

const bench_workload bench_fuse8 = {
    .name = "fuse/8",
    .group = "fuse",
    .peer = "bloom/split-block",
    .description = "binary fuse filter, 8-bit fingerprints, 3-wise, 16-byte keys; "
                   "batch = contains_many; hashed = contains_hash, contains_many_hash",
    .arg = &fuse8_variant,
    .setup = bench_static_setup,
    .phases = fuse_phases,
    .report = bench_static_report,
    .teardown = bench_static_teardown,
    .family = "fuse8",
};

const bench_workload bench_fuse16 = {
    .name = "fuse/16",
    .group = "fuse",
    .peer = "bloom/split-block",
    .description = "binary fuse filter, 16-bit fingerprints, 3-wise, 16-byte keys; "
                   "batch = contains_many; hashed = contains_hash, contains_many_hash",
    .arg = &fuse16_variant,
    .setup = bench_static_setup,
    .phases = fuse_phases,
    .report = bench_static_report,
    .teardown = bench_static_teardown,
    .family = "fuse16",
};

const bench_workload bench_fuse8_4wise = {
    .name = "fuse/8-4wise",
    .group = "fuse",
    .peer = "bloom/split-block",
    .description = "binary fuse filter, 8-bit fingerprints, 4-wise, 16-byte keys; "
                   "batch = contains_many; hashed = contains_hash, contains_many_hash",
    .arg = &fuse8_4wise_variant,
    .setup = bench_static_setup,
    .phases = fuse_phases,
    .report = bench_static_report,
    .teardown = bench_static_teardown,
    .family = "fuse8",
};
