/*
 * bench_libbloom.c - the peer for the Bloom family: jvirkki/libbloom as
 * Debian ships it (libbloom-dev 1.6), a classic Bloom filter sized by
 * bloom_init(entries, error) with
 *
 *     bits per entry  b = -ln(p) / ln(2)^2      (9.585 for p = 0.01)
 *     hashes          k = ceil(b * ln 2)        (7 for p = 0.01)
 *
 * and its k bit positions at (h1 + i * h2) mod bits, i = 0 .. k-1, from two
 * 32-bit MurmurHash2 values h1, h2 of the key; a query stops at the first
 * zero bit. (Version 2 of libbloom renamed the call bloom_init2; Debian's 1.6 has
 * bloom_init.)
 *
 * peer/libbloom runs the shared filter workload (bench_filter.h: insert,
 * query-present, query-absent over 16-byte keys, p = 0.01) without the
 * batch phase, which libbloom lacks; it reports bytes, bits_per_key and
 * hashes besides the shared figures (fpr, false_negatives, and
 * bound_bits_per_key = log2(1/p), the fewest bits per key any filter with
 * false-positive rate p can use - Carter et al., 1978; a Bloom filter needs
 * 1.44 times that). The Bloom workloads name "peer/libbloom" as their peer,
 * so the report prints their ratios to it.
 * libbloom takes the entry count as an int, needs at least 1000 entries and
 * computes its bit count in an int, so n is limited to [1000, 2^31 / 10].
 */
#ifdef AMQ_BENCH_HAVE_LIBBLOOM

#include "bench_filter.h"
#include "core/util.h"

#include <bloom.h>
#include <stdlib.h>

#define LIBBLOOM_MIN_ENTRIES 1000
#define LIBBLOOM_MAX_ENTRIES (INT32_MAX / 10)

static int libbloom_create(void **filter, size_t keys, uint64_t seed, const void *options,
                           amq_diag *diag)
{
    (void)options;
    (void)seed; /* libbloom's hashes take no seed */
    if (keys < LIBBLOOM_MIN_ENTRIES || keys > LIBBLOOM_MAX_ENTRIES)
        return amq__fail(diag, AMQ_ERANGE, "libbloom takes %d to %d entries, not %zu",
                         LIBBLOOM_MIN_ENTRIES, LIBBLOOM_MAX_ENTRIES, keys);
    struct bloom *b = calloc(1, sizeof *b);
    if (!b)
        return AMQ_ENOMEM;
    if (bloom_init(b, (int)keys, BENCH_FILTER_FPR) != 0) {
        free(b);
        return amq__fail(diag, AMQ_ENOMEM, "bloom_init(%zu, %g) failed", keys, BENCH_FILTER_FPR);
    }
    *filter = b;
    return AMQ_OK;
}

static void libbloom_clear(void *filter)
{
    bloom_reset(filter);
}

static void libbloom_add(void *filter, const void *key, size_t len)
{
    bloom_add(filter, key, (int)len);
}

static bool libbloom_contains(const void *filter, const void *key, size_t len)
{
    /* bloom_check takes a non-const filter but only reads it. */
    return bloom_check((struct bloom *)(uintptr_t)filter, key, (int)len) == 1;
}

static void libbloom_report(const void *filter, size_t keys, bench_figures *out)
{
    const struct bloom *b = filter;
    bench_figures_add(out, "bytes", b->bytes);
    bench_figures_add(out, "bits_per_key", b->bytes * 8.0 / (double)keys);
    bench_figures_add(out, "hashes", b->hashes);
}

static void libbloom_destroy(void *filter)
{
    bloom_free(filter);
    free(filter);
}

static const bench_filter_ops libbloom_ops = {
    .create = libbloom_create,
    .clear = libbloom_clear,
    .add = libbloom_add,
    .contains = libbloom_contains,
    .report = libbloom_report,
    .destroy = libbloom_destroy,
};

static const bench_filter_variant libbloom_variant = { .ops = &libbloom_ops };

const bench_workload bench_libbloom = {
    .name = "peer/libbloom",
    .group = "peer",
    .description = "jvirkki/libbloom 1.6 (Debian libbloom-dev), p = 0.01, 16-byte keys",
    .arg = &libbloom_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases_no_batch,
    .report = bench_filter_report,
    .teardown = bench_filter_teardown,
};

#endif /* AMQ_BENCH_HAVE_LIBBLOOM */
