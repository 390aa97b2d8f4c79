/*
 * bench_gcs.c - Golomb-coded sets (src/gcs/gcs.c) at M = 2^8 and 2^16 (Rice
 * codes with P = 8 and 16, FPR about 1/M), each with five seek indexes, on
 * the static workload (bench_static.h) beside the split-block Bloom filter:
 *
 *   gcs/M<M>-S0      no index: a query decodes from the start of the stream,
 *                    half of it on average - O(n), about a millisecond per
 *                    query at 10^6 keys - so the one-by-one phases ask only
 *                    the first 200 keys
 *   gcs/M<M>-S32     32 entries: n/64 codes decoded per query; the one-by-one
 *                    phases ask the first 2,000 keys
 *   gcs/M<M>-N64     n/64 entries: about 32 codes per query
 *   gcs/M<M>-N16     n/16 entries: about 8 codes per query
 *   gcs/M<M>         the default index, n/128 entries
 *
 * The phases:
 *
 *   build          amq_gcs_build from the n present keys: hash, reduce to
 *                  [0, nM), radix sort, code the gaps, build the index
 *   query-present  amq_gcs_contains, one by one (limited as above; ns per
 *                  key asked)
 *   query-absent   the same for absent keys; with the queries limited the
 *                  fpr figure is taken from an untimed amq_gcs_contains_many of all
 *                  n absent keys
 *   query-batch    amq_gcs_contains_many of all n present keys in one call: sorted
 *                  and merged with the stream in one pass; ns per key
 *   query-hashed   amq_gcs_contains_hash of the absent keys' hashes (limited
 *                  as the other one-by-one phases)
 *
 * Figures: bytes and bits_per_key (stream and index: the filter's data),
 * stream_bits_per_key and index_bits_per_key separately, index_entries (S),
 * range (M), expected_fpr (d / nM), and target_bits_per_key = log2 M + 1.6,
 * the size bound the filter is meant to stay under with its index.
 */
#include "bench_static.h"

#include "amq/gcs.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* One-by-one queries asked of a set without an index, and with 32 entries. */
#define GCS_QUERIES_NO_INDEX 200
#define GCS_QUERIES_S32      2000

/* A variant's build options: M, and the continuous layout's index as
 * entries or as keys per entry (S = n / keys_per_entry) when
 * keys_per_entry is not 0 (either asks for the continuous layout), or the
 * bucketed layout's keys per bucket when bucket_keys is not 0. */
typedef struct gcs_shape {
    uint64_t range;
    uint64_t index_entries;
    uint64_t keys_per_entry;
    uint32_t bucket_keys;
} gcs_shape;

static int gcs_build(void **filter, const void *const *keys, const size_t *lens, size_t count,
                     uint64_t seed, const void *options, amq_diag *diag)
{
    const gcs_shape *shape = options;
    amq_gcs_params params = { .range = shape->range,
                              .index_entries = shape->index_entries,
                              .bucket_keys = shape->bucket_keys };
    if (shape->keys_per_entry > 0)
        params.index_entries = count / shape->keys_per_entry;
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_gcs_build((amq_gcs **)filter, &params, keys, lens, count, diag);
}

static bool gcs_contains(const void *filter, const void *key, size_t len)
{
    return amq_gcs_contains(filter, key, len);
}

static void gcs_match(const void *filter, const void *const *keys, const size_t *lens, size_t count,
                      uint8_t *results)
{
    /* A match that cannot allocate answers nothing: every present key then
     * counts as a false negative. */
    if (amq_gcs_contains_many(results, filter, keys, lens, count) != AMQ_OK)
        memset(results, 0, count);
}

static uint64_t gcs_hash(const void *filter, const void *key, size_t len)
{
    return amq_hash64(amq_gcs_hasher(filter), key, len);
}

static bool gcs_contains_hash(const void *filter, uint64_t hash)
{
    return amq_gcs_contains_hash(filter, hash);
}

static void gcs_report(const void *filter, size_t keys, bench_figures *out)
{
    double n = (double)keys;
    double bytes = (double)amq_gcs_memory_bytes(filter);
    bench_figures_add(out, "bytes", bytes);
    bench_figures_add(out, "bits_per_key", bytes * 8 / n);
    bench_figures_add(out, "stream_bits_per_key", (double)amq_gcs_stream_bits(filter) / n);
    bench_figures_add(out, "index_bits_per_key", (double)amq_gcs_index_bytes(filter) * 8 / n);
    bench_figures_add(out, "index_entries", (double)amq_gcs_index_entries(filter));
    bench_figures_add(out, "range", (double)amq_gcs_range(filter));
    bench_figures_add(out, "expected_fpr", amq_gcs_expected_fpr(filter));
    bench_figures_add(out, "target_bits_per_key", log2((double)amq_gcs_range(filter)) + 1.6);
}

static void gcs_destroy(void *filter)
{
    amq_gcs_free(filter);
}

static const bench_static_ops gcs_ops = {
    .build = gcs_build,
    .contains = gcs_contains,
    .contains_many = gcs_match,
    .hash = gcs_hash,
    .contains_hash = gcs_contains_hash,
    .report = gcs_report,
    .destroy = gcs_destroy,
};

#define GCS_M256   256
#define GCS_M65536 65536

static const gcs_shape m256_s0 = { GCS_M256, AMQ_GCS_NO_INDEX, 0, 0 },
                       m256_s32 = { GCS_M256, 32, 0, 0 }, m256_n64 = { GCS_M256, 0, 64, 0 },
                       m256_n16 = { GCS_M256, 0, 16, 0 }, m256_n128 = { GCS_M256, 0, 128, 0 },
                       m256_default = { GCS_M256, 0, 0, 0 }, m256_b16 = { GCS_M256, 0, 0, 16 },
                       m256_b32 = { GCS_M256, 0, 0, 32 },
                       m65536_s0 = { GCS_M65536, AMQ_GCS_NO_INDEX, 0, 0 },
                       m65536_s32 = { GCS_M65536, 32, 0, 0 }, m65536_n64 = { GCS_M65536, 0, 64, 0 },
                       m65536_n16 = { GCS_M65536, 0, 16, 0 },
                       m65536_n128 = { GCS_M65536, 0, 128, 0 };

/* ops, options, fpr = 1/M, query_limit, batch: every key in one match. */
static const bench_static_variant
    m256_s0_variant = { &gcs_ops, &m256_s0, 1.0 / GCS_M256, GCS_QUERIES_NO_INDEX, SIZE_MAX },
    m256_s32_variant = { &gcs_ops, &m256_s32, 1.0 / GCS_M256, GCS_QUERIES_S32, SIZE_MAX },
    m256_n64_variant = { &gcs_ops, &m256_n64, 1.0 / GCS_M256, 0, SIZE_MAX },
    m256_n16_variant = { &gcs_ops, &m256_n16, 1.0 / GCS_M256, 0, SIZE_MAX },
    m256_default_variant = { &gcs_ops, &m256_default, 1.0 / GCS_M256, 0, SIZE_MAX },
    m256_n128_variant = { &gcs_ops, &m256_n128, 1.0 / GCS_M256, 0, SIZE_MAX },
    m256_b16_variant = { &gcs_ops, &m256_b16, 1.0 / GCS_M256, 0, SIZE_MAX },
    m256_b32_variant = { &gcs_ops, &m256_b32, 1.0 / GCS_M256, 0, SIZE_MAX },
    m65536_s0_variant = { &gcs_ops, &m65536_s0, 1.0 / GCS_M65536, GCS_QUERIES_NO_INDEX, SIZE_MAX },
    m65536_s32_variant = { &gcs_ops, &m65536_s32, 1.0 / GCS_M65536, GCS_QUERIES_S32, SIZE_MAX },
    m65536_n64_variant = { &gcs_ops, &m65536_n64, 1.0 / GCS_M65536, 0, SIZE_MAX },
    m65536_n16_variant = { &gcs_ops, &m65536_n16, 1.0 / GCS_M65536, 0, SIZE_MAX },
    m65536_n128_variant = { &gcs_ops, &m65536_n128, 1.0 / GCS_M65536, 0, SIZE_MAX };

/* name, group, peer, description, arg, setup, phases, report, teardown */
const bench_workload
    bench_gcs_m256_s0 = { "gcs/M256-S0",
                          "gcs",
                          "bloom/split-block",
                          "Golomb-coded set, M = 256, no index; one-by-one queries of the first "
                          "200 keys; batch = one amq_gcs_contains_many of all keys",
                          &m256_s0_variant,
                          bench_static_setup,
                          bench_static_phases_hashed,
                          bench_static_report,
                          bench_static_teardown,
                          .family = "gcs" },
    bench_gcs_m256_s32 = { "gcs/M256-S32",
                           "gcs",
                           "bloom/split-block",
                           "Golomb-coded set, M = 256, 32 index entries; one-by-one queries of "
                           "the first 2000 keys; batch = one amq_gcs_contains_many of all keys",
                           &m256_s32_variant,
                           bench_static_setup,
                           bench_static_phases_hashed,
                           bench_static_report,
                           bench_static_teardown,
                           .family = "gcs" },
    bench_gcs_m256_n64 = { "gcs/M256-N64",
                           "gcs",
                           "bloom/split-block",
                           "Golomb-coded set, M = 256, n/64 index entries; batch = one "
                           "amq_gcs_contains_many of all keys",
                           &m256_n64_variant,
                           bench_static_setup,
                           bench_static_phases_hashed,
                           bench_static_report,
                           bench_static_teardown,
                           .family = "gcs" },
    bench_gcs_m256_n16 = { "gcs/M256-N16",
                           "gcs",
                           "bloom/split-block",
                           "Golomb-coded set, M = 256, n/16 index entries; batch = one "
                           "amq_gcs_contains_many of all keys",
                           &m256_n16_variant,
                           bench_static_setup,
                           bench_static_phases_hashed,
                           bench_static_report,
                           bench_static_teardown,
                           .family = "gcs" },
    bench_gcs_m256_b16 = { "gcs/M256-B16",
                           "gcs",
                           "bloom/split-block",
                           "Golomb-coded set, M = 256, bucketed, 16 keys a bucket; batch = one "
                           "amq_gcs_contains_many of all keys",
                           &m256_b16_variant,
                           bench_static_setup,
                           bench_static_phases_hashed,
                           bench_static_report,
                           bench_static_teardown,
                           .family = "gcs" },
    bench_gcs_m256_b32 = { "gcs/M256-B32",
                           "gcs",
                           "bloom/split-block",
                           "Golomb-coded set, M = 256, bucketed, 32 keys a bucket; batch = one "
                           "amq_gcs_contains_many of all keys",
                           &m256_b32_variant,
                           bench_static_setup,
                           bench_static_phases_hashed,
                           bench_static_report,
                           bench_static_teardown,
                           .family = "gcs" },
    bench_gcs_m256_b24 = { "gcs/M256-B24",
                           "gcs",
                           "bloom/split-block",
                           "Golomb-coded set, M = 256, the defaults (bucketed, 24 keys a bucket); "
                           "batch = one amq_gcs_contains_many of all keys",
                           &m256_default_variant,
                           bench_static_setup,
                           bench_static_phases_hashed,
                           bench_static_report,
                           bench_static_teardown,
                           .family = "gcs" },
    bench_gcs_m256 = { "gcs/M256",
                       "gcs",
                       "bloom/split-block",
                       "Golomb-coded set, M = 256, continuous, n/128 index entries; batch = one "
                       "amq_gcs_contains_many of all keys",
                       &m256_n128_variant,
                       bench_static_setup,
                       bench_static_phases_hashed,
                       bench_static_report,
                       bench_static_teardown,
                       .family = "gcs" },
    bench_gcs_m65536_s0 = { "gcs/M65536-S0",
                            "gcs",
                            "bloom/split-block",
                            "Golomb-coded set, M = 65536, no index; one-by-one queries of the "
                            "first 200 keys; batch = one amq_gcs_contains_many of all keys",
                            &m65536_s0_variant,
                            bench_static_setup,
                            bench_static_phases_hashed,
                            bench_static_report,
                            bench_static_teardown,
                            .family = "gcs" },
    bench_gcs_m65536_s32 = { "gcs/M65536-S32",
                             "gcs",
                             "bloom/split-block",
                             "Golomb-coded set, M = 65536, 32 index entries; one-by-one queries "
                             "of the first 2000 keys; batch = one amq_gcs_contains_many of all "
                             "keys",
                             &m65536_s32_variant,
                             bench_static_setup,
                             bench_static_phases_hashed,
                             bench_static_report,
                             bench_static_teardown,
                             .family = "gcs" },
    bench_gcs_m65536_n64 = { "gcs/M65536-N64",
                             "gcs",
                             "bloom/split-block",
                             "Golomb-coded set, M = 65536, n/64 index entries; batch = one "
                             "amq_gcs_contains_many of all keys",
                             &m65536_n64_variant,
                             bench_static_setup,
                             bench_static_phases_hashed,
                             bench_static_report,
                             bench_static_teardown,
                             .family = "gcs" },
    bench_gcs_m65536_n16 = { "gcs/M65536-N16",
                             "gcs",
                             "bloom/split-block",
                             "Golomb-coded set, M = 65536, n/16 index entries; batch = one "
                             "amq_gcs_contains_many of all keys",
                             &m65536_n16_variant,
                             bench_static_setup,
                             bench_static_phases_hashed,
                             bench_static_report,
                             bench_static_teardown,
                             .family = "gcs" },
    bench_gcs_m65536 = { "gcs/M65536",
                         "gcs",
                         "bloom/split-block",
                         "Golomb-coded set, M = 65536, continuous, n/128 index entries; batch = "
                         "one amq_gcs_contains_many of all keys",
                         &m65536_n128_variant,
                         bench_static_setup,
                         bench_static_phases_hashed,
                         bench_static_report,
                         bench_static_teardown,
                         .family = "gcs" };
