/*
 * bench_cuckoo.c - the cuckoo filter (src/cuckoo/cuckoo.c) with b = 4 slots per
 * bucket and f = 8, 12 or 16 fingerprint bits (cuckoo/f8, cuckoo/f12,
 * cuckoo/f16), and f = 12 in semi-sorted buckets (cuckoo/f12-semi: the
 * same answers as cuckoo/f12 in 11 bits a slot; what it costs in time is
 * the difference), beside libbloom on the shared filter workload
 * (bench_filter.h): the same n 16-byte keys and the phases
 *
 *   insert         n adds into an emptied filter created for n keys, so the
 *                  pass ends at the filter's design load (about 94.5% of
 *                  the slots for b = 4): the last adds are the ones whose
 *                  relocation walks are long
 *   query-present  amq_cuckoo_contains of the n keys
 *   query-absent   the same for n keys never added: its hits give fpr
 *   query-batch    amq_cuckoo_contains_many of the n keys, 1024 per call
 *   query-hashed   amq_cuckoo_contains_hash of the absent keys' hashes,
 *                  computed untimed in setup: the bucket work alone
 *   hashed-batch   amq_cuckoo_contains_many_hash of the same hashes, 1024
 *                  per call
 *   delete         amq_cuckoo_remove of every key, from a filter refilled
 *                  untimed before each pass; a removal that finds nothing
 *                  counts as a false negative
 *
 * A cuckoo filter's rate is set by f, not by p: a query compares the key's
 * fingerprint with the 2b stored in its two buckets, so at load a
 *
 *     FPR = 1 - (1 - 1/(2^f - 1))^(2 b a)  ~  2 b a / (2^f - 1)
 *
 * and target_fpr is that of a completely full table, 2b / (2^f - 1)
 * (3.1%, 0.20% and 0.012% for f = 8, 12, 16). libbloom stays at p = 0.01,
 * so the ratios of bits_per_key and fpr to it compare filters of different
 * rates; the figure to read instead is classic_bits_per_key_at_fpr.
 *
 * Figures, taken with the n keys in the filter:
 *
 *   bytes, bits_per_key          the packed table; bits_per_key = f / a
 *   load                         a, the fraction of slots in use
 *   fingerprint_bits, bucket_size
 *   expected_fpr                 the formula above at the load reached
 *                                (amq_cuckoo_expected_fpr)
 *   insert_failures              adds of the last fill that were refused
 *                                (n - the fingerprints stored): must be 0,
 *                                a filter created for n keys accepts them
 *   classic_bits_per_key_at_fpr  log2(1/fpr) log2(e), fpr as measured: what
 *                                a classic Bloom filter with the best k
 *                                needs for the same rate. The cuckoo filter
 *                                is the smaller where bits_per_key is below
 *                                it: f / a < 1.44 (f - log2(2 b a)), which
 *                                at a = 0.945, b = 4 holds from f = 12 on.
 */
#include "bench_filter.h"
#include "core/util.h"

#include "amq/cuckoo.h"

#include <math.h>

#define CUCKOO_BUCKET_SIZE 4

/* A variant's create options. */
typedef struct cuckoo_shape {
    uint32_t fingerprint_bits;
    bool semi_sort;
} cuckoo_shape;

static int cuckoo_create(void **filter, size_t keys, uint64_t seed, const void *options,
                         amq_diag *diag)
{
    const cuckoo_shape *shape = options;
    amq_cuckoo_params params = { .capacity = keys,
                                 .fingerprint_bits = shape->fingerprint_bits,
                                 .bucket_size = CUCKOO_BUCKET_SIZE,
                                 .semi_sort = shape->semi_sort };
    amq_hasher_xxh3(&params.hasher, seed);
    int status = amq_cuckoo_new((amq_cuckoo **)filter, &params, NULL);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "a cuckoo filter for %zu keys, f = %u: %s", keys,
                         shape->fingerprint_bits, amq_strerror(status));
    return AMQ_OK;
}

static void cuckoo_clear(void *filter)
{
    amq_cuckoo_clear(filter);
}

static void cuckoo_add(void *filter, const void *key, size_t len)
{
    /* A refused add (AMQ_EFULL) stores nothing: the report counts it as an
     * insert failure, and its key as a false negative. */
    (void)amq_cuckoo_add(filter, key, len);
}

static bool cuckoo_contains(const void *filter, const void *key, size_t len)
{
    return amq_cuckoo_contains(filter, key, len);
}

static void cuckoo_contains_many(const void *filter, const void *const *keys, const size_t *lens,
                                 size_t count, uint8_t *results)
{
    amq_cuckoo_contains_many(results, filter, keys, lens, count);
}

static bool cuckoo_remove(void *filter, const void *key, size_t len)
{
    return amq_cuckoo_remove(filter, key, len) == AMQ_OK;
}

static void cuckoo_report(const void *filter, size_t keys, bench_figures *out)
{
    double bytes = (double)amq_cuckoo_memory_bytes(filter);
    bench_figures_add(out, "bytes", bytes);
    bench_figures_add(out, "bits_per_key", bytes * 8 / (double)keys);
    bench_figures_add(out, "load", amq_cuckoo_load_factor(filter));
    bench_figures_add(out, "fingerprint_bits", amq_cuckoo_fingerprint_bits(filter));
    bench_figures_add(out, "bucket_size", amq_cuckoo_bucket_size(filter));
    bench_figures_add(out, "expected_fpr", amq_cuckoo_expected_fpr(filter));
    bench_figures_add(out, "insert_failures", (double)(keys - amq_cuckoo_keys(filter)));
}

static void cuckoo_destroy(void *filter)
{
    amq_cuckoo_free(filter);
}

/* The shared figures, then the classic Bloom filter's size at the measured
 * rate (none when no absent key was a false positive). */
static void cuckoo_workload_report(void *state, bench_figures *out)
{
    bench_filter_report(state, out);
    double fpr = bench_filter_measured_fpr(state);
    if (fpr > 0)
        bench_figures_add(out, "classic_bits_per_key_at_fpr", -log2(fpr) / log(2.0));
}

static amq_u128 cuckoo_hash(const void *filter, const void *key, size_t len)
{
    return (amq_u128){ .low = amq_hash64(amq_cuckoo_hasher(filter), key, len) };
}

static bool cuckoo_contains_hash(const void *filter, amq_u128 hash)
{
    return amq_cuckoo_contains_hash(filter, hash.low);
}

static void cuckoo_contains_many_hash(const void *filter, const uint64_t *hashes, size_t count,
                                      uint8_t *results)
{
    amq_cuckoo_contains_many_hash(results, filter, hashes, count);
}

static const bench_filter_ops cuckoo_ops = {
    .create = cuckoo_create,
    .clear = cuckoo_clear,
    .add = cuckoo_add,
    .contains = cuckoo_contains,
    .contains_many = cuckoo_contains_many,
    .hash = cuckoo_hash,
    .contains_hash = cuckoo_contains_hash,
    .contains_many_hash = cuckoo_contains_many_hash,
    .remove = cuckoo_remove,
    .report = cuckoo_report,
    .destroy = cuckoo_destroy,
};

/* Each variant's rate is a full table's, 2b / (2^f - 1). */
static const cuckoo_shape f8 = { 8, false }, f12 = { 12, false }, f16 = { 16, false },
                          f12_semi = { 12, true };
static const bench_filter_variant f8_variant = { .ops = &cuckoo_ops,
                                                 .options = &f8,
                                                 .fpr = 2.0 * CUCKOO_BUCKET_SIZE / 255 };
static const bench_filter_variant f12_variant = { .ops = &cuckoo_ops,
                                                  .options = &f12,
                                                  .fpr = 2.0 * CUCKOO_BUCKET_SIZE / 4095 };
static const bench_filter_variant f16_variant = { .ops = &cuckoo_ops,
                                                  .options = &f16,
                                                  .fpr = 2.0 * CUCKOO_BUCKET_SIZE / 65535 };
static const bench_filter_variant f12_semi_variant = { .ops = &cuckoo_ops,
                                                       .options = &f12_semi,
                                                       .fpr = 2.0 * CUCKOO_BUCKET_SIZE / 4095 };

const bench_workload bench_cuckoo_f8 = {
    .name = "cuckoo/f8",
    .group = "cuckoo",
    .peer = "peer/libbloom",
    .description = "cuckoo filter, f = 8, b = 4, n keys to its design load, 16-byte keys; "
                   "batch = contains_many; delete = remove every key",
    .arg = &f8_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases_delete,
    .report = cuckoo_workload_report,
    .teardown = bench_filter_teardown,
    .family = "cuckoo",
};

const bench_workload bench_cuckoo_f12 = {
    .name = "cuckoo/f12",
    .group = "cuckoo",
    .peer = "peer/libbloom",
    .description = "cuckoo filter, f = 12, b = 4, n keys to its design load, 16-byte keys; "
                   "batch = contains_many; delete = remove every key",
    .arg = &f12_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases_delete,
    .report = cuckoo_workload_report,
    .teardown = bench_filter_teardown,
    .family = "cuckoo",
};

const bench_workload bench_cuckoo_f16 = {
    .name = "cuckoo/f16",
    .group = "cuckoo",
    .peer = "peer/libbloom",
    .description = "cuckoo filter, f = 16, b = 4, n keys to its design load, 16-byte keys; "
                   "batch = contains_many; delete = remove every key",
    .arg = &f16_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases_delete,
    .report = cuckoo_workload_report,
    .teardown = bench_filter_teardown,
    .family = "cuckoo",
};

const bench_workload bench_cuckoo_f12_semi = {
    .name = "cuckoo/f12-semi",
    .group = "cuckoo",
    .peer = "peer/libbloom",
    .description = "cuckoo filter, f = 12 in semi-sorted buckets of 4, n keys to its design load, "
                   "16-byte keys; batch = contains_many; delete = remove every key",
    .arg = &f12_semi_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases_delete,
    .report = cuckoo_workload_report,
    .teardown = bench_filter_teardown,
    .family = "cuckoo",
};
