/*
 * bench_counting_bloom.c - the counting Bloom filter (src/bloom/counting_bloom.c,
 * 4-bit counters) beside its peer, libbloom, on the shared filter workload
 * (bench_filter.h): n 16-byte keys at p = 0.01, the same phases as
 * bloom/classic, so the two can be compared in one run. The batch phase is
 * amq_counting_bloom_contains_many.
 *
 * Figures: bytes, bits_per_key (memory: 4 bits per counter), hashes,
 * saturated_counters, and what removal costs when it is misused. After the
 * timed phases the filter holds the n present keys, and about p*n of the n
 * absent keys are false positives. Each of those is removed (the filter
 * cannot refuse: all its counters are non-zero) and the present keys are
 * asked for again:
 *
 *     fp_removals                      false positives removed
 *     false_negatives_per_fp_removal   present keys lost, per removal
 *     present_lost_fraction            present keys lost, of n
 *
 * At capacity a non-zero counter is 1 with probability about ln 2, so one
 * such removal empties about k ln 2 counters (4.9 at k = 7), each the only
 * trace of one present key. The shared workload keeps its key sets to
 * itself, so this step generates them again from the seed (the same keys).
 */
#include "bench_filter.h"
#include "core/util.h"

#include "amq/bloom.h"

#include <math.h>
#include <stdlib.h>

typedef struct counting_filter {
    amq_counting_bloom *filter;
    uint64_t seed; /* of the key sets, to generate them again for the removals */
} counting_filter;

static void counting_destroy(void *filter)
{
    counting_filter *c = filter;
    amq_counting_bloom_free(c->filter);
    free(c);
}

static int counting_create(void **filter, size_t keys, uint64_t seed, const void *options,
                           amq_diag *diag)
{
    (void)options;
    counting_filter *c = calloc(1, sizeof *c);
    if (!c)
        return AMQ_ENOMEM;
    amq_counting_bloom_params params = { .capacity = keys, .fpr = BENCH_FILTER_FPR };
    amq_hasher_xxh3(&params.hasher, seed);
    int status = amq_counting_bloom_new(&c->filter, &params, NULL);
    if (status != AMQ_OK) {
        free(c);
        return amq__fail(diag, status, "a counting filter for %zu keys: %s", keys,
                         amq_strerror(status));
    }
    c->seed = seed;
    *filter = c;
    return AMQ_OK;
}

static void counting_clear(void *filter)
{
    counting_filter *c = filter;
    amq_counting_bloom_clear(c->filter);
}

static void counting_add(void *filter, const void *key, size_t len)
{
    counting_filter *c = filter;
    amq_counting_bloom_add(c->filter, key, len);
}

static bool counting_contains(const void *filter, const void *key, size_t len)
{
    const counting_filter *c = filter;
    return amq_counting_bloom_contains(c->filter, key, len);
}

static void counting_contains_many(const void *filter, const void *const *keys, const size_t *lens,
                                   size_t count, uint8_t *results)
{
    const counting_filter *c = filter;
    amq_counting_bloom_contains_many(results, c->filter, keys, lens, count);
}

/* Remove the absent keys that are false positives; report how many present
 * keys that loses. Runs once, after the timed phases; it spoils the filter,
 * which is only freed afterwards. */
static void measure_fp_removals(amq_counting_bloom *f, size_t keys, uint64_t seed,
                                bench_figures *out)
{
    bench_keyset present = { 0 }, absent = { 0 };
    if (bench_keys_binary(&present, keys, BENCH_FILTER_KEY_LEN, seed, BENCH_KEYS_PRESENT) ||
        bench_keys_binary(&absent, keys, BENCH_FILTER_KEY_LEN, seed, BENCH_KEYS_ABSENT)) {
        bench_keyset_free(&present);
        bench_keyset_free(&absent);
        return;
    }
    uint64_t removed = 0, lost = 0;
    for (size_t i = 0; i < absent.count; i++)
        removed += amq_counting_bloom_remove(f, bench_key(&absent, i), bench_key_len(&absent, i)) ==
                   AMQ_OK;
    for (size_t i = 0; i < present.count; i++)
        lost += !amq_counting_bloom_contains(f, bench_key(&present, i), bench_key_len(&present, i));
    bench_figures_add(out, "fp_removals", (double)removed);
    bench_figures_add(out, "false_negatives_per_fp_removal",
                      removed ? (double)lost / (double)removed : 0);
    bench_figures_add(out, "present_lost_fraction", (double)lost / (double)keys);
    bench_keyset_free(&present);
    bench_keyset_free(&absent);
}

static void counting_report(const void *filter, size_t keys, bench_figures *out)
{
    const counting_filter *c = filter;
    const amq_counting_bloom *f = c->filter;
    double counters = (double)amq_counting_bloom_counters(f);
    double bytes = ceil(counters * amq_counting_bloom_counter_bits(f) / 8);
    bench_figures_add(out, "bytes", bytes);
    bench_figures_add(out, "bits_per_key", bytes * 8 / (double)keys);
    bench_figures_add(out, "hashes", amq_counting_bloom_hashes(f));
    bench_figures_add(out, "saturated_counters", (double)amq_counting_bloom_saturated(f));
    measure_fp_removals(c->filter, keys, c->seed, out);
}

static amq_u128 counting_hash(const void *filter, const void *key, size_t len)
{
    const counting_filter *c = filter;
    return amq_hash128(amq_counting_bloom_hasher(c->filter), key, len);
}

static bool counting_contains_hash(const void *filter, amq_u128 hash)
{
    const counting_filter *c = filter;
    return amq_counting_bloom_contains_hash(c->filter, hash);
}

static const bench_filter_ops counting_ops = {
    .create = counting_create,
    .clear = counting_clear,
    .add = counting_add,
    .contains = counting_contains,
    .contains_many = counting_contains_many,
    .hash = counting_hash,
    .contains_hash = counting_contains_hash,
    .report = counting_report,
    .destroy = counting_destroy,
};

static const bench_filter_variant counting_variant = { .ops = &counting_ops };

const bench_workload bench_bloom_counting = {
    .name = "bloom/counting",
    .group = "bloom",
    .peer = "peer/libbloom",
    .description = "counting Bloom filter, 4-bit counters, p = 0.01, 16-byte keys; batch = "
                   "contains_many; then the cost of removing false positives",
    .arg = &counting_variant,
    .setup = bench_filter_setup,
    .phases = bench_filter_phases,
    .report = bench_filter_report,
    .teardown = bench_filter_teardown,
    .family = "counting-bloom",
};
