/*
 * bench_filter.c - the shared workload of the dynamic filters (see
 * bench_filter.h): key sets, the five timed passes and the common figures,
 * and the pieces of them the static workload (bench_static.c) uses too.
 */
#include "bench_filter.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>

typedef struct filter_state {
    const bench_filter_ops *ops;
    double fpr; /* the variant's target rate */
    void *filter;
    bench_key_sets keys;
    amq_u128 *absent_hashes;   /* NULL when the family has no pre-hashed query */
    uint64_t *absent_hashes64; /* their .low, when the family has a batch query by them */
    uint64_t present_hits, absent_hits, batch_hits, hashed_hits, hashed_batch_hits;
    uint64_t remove_misses; /* present keys the last delete pass found nothing for */
    bool batch_ran, delete_ran, hashed_ran, hashed_batch_ran;
} filter_state;

void bench_key_sets_free(bench_key_sets *sets)
{
    bench_keyset_free(&sets->present);
    bench_keyset_free(&sets->absent);
    free(sets->present_keys);
    free(sets->absent_keys);
    free(sets->lens);
    free(sets->results);
    *sets = (bench_key_sets){ 0 };
}

int bench_key_sets_init(bench_key_sets *sets, size_t count, size_t len, uint64_t seed,
                        amq_diag *diag)
{
    *sets = (bench_key_sets){ 0 };
    int status = bench_keys_binary(&sets->present, count, len, seed, BENCH_KEYS_PRESENT);
    if (status == AMQ_OK)
        status = bench_keys_binary(&sets->absent, count, len, seed, BENCH_KEYS_ABSENT);
    if (status == AMQ_OK) {
        sets->present_keys = malloc(count * sizeof *sets->present_keys);
        sets->absent_keys = malloc(count * sizeof *sets->absent_keys);
        sets->lens = malloc(count * sizeof *sets->lens);
        sets->results = malloc(count);
        if (!sets->present_keys || !sets->absent_keys || !sets->lens || !sets->results)
            status = AMQ_ENOMEM;
    }
    if (status != AMQ_OK) {
        bench_key_sets_free(sets);
        return amq__fail(diag, status, "setting up %zu keys: %s", count, amq_strerror(status));
    }
    for (size_t i = 0; i < count; i++) {
        sets->present_keys[i] = bench_key(&sets->present, i);
        sets->absent_keys[i] = bench_key(&sets->absent, i);
        sets->lens[i] = len;
    }
    return AMQ_OK;
}

uint64_t bench_count_hits(bench_contains_fn contains, const void *filter, const bench_keyset *keys,
                          size_t count)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < count; i++)
        hits += contains(filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}

/* How many of a batch's count results say "maybe present". */
static uint64_t results_hits(const uint8_t *results, size_t count)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < count; i++)
        hits += results[i];
    return hits;
}

uint64_t bench_batch_hits(bench_contains_many_fn contains_many, const void *filter,
                          const void *const *keys, const size_t *lens, size_t count, size_t batch,
                          uint8_t *results)
{
    for (size_t start = 0; start < count; start += batch) {
        size_t todo = count - start < batch ? count - start : batch;
        contains_many(filter, keys + start, lens + start, todo, results + start);
    }
    return results_hits(results, count);
}

uint64_t bench_batch_hash_hits(bench_contains_many_hash_fn contains_many_hash, const void *filter,
                               const uint64_t *hashes, size_t count, size_t batch, uint8_t *results)
{
    for (size_t start = 0; start < count; start += batch) {
        size_t todo = count - start < batch ? count - start : batch;
        contains_many_hash(filter, hashes + start, todo, results + start);
    }
    return results_hits(results, count);
}

void bench_rate_figures(bench_figures *out, double target_fpr, double fpr, double false_negatives)
{
    bench_figures_add(out, "bound_bits_per_key", -log2(target_fpr));
    bench_figures_add(out, "target_fpr", target_fpr);
    bench_figures_add(out, "fpr", fpr);
    bench_figures_add(out, "false_negatives", false_negatives);
}

void bench_filter_teardown(void *state)
{
    filter_state *s = state;
    if (s->filter)
        s->ops->destroy(s->filter);
    bench_key_sets_free(&s->keys);
    free(s->absent_hashes);
    free(s->absent_hashes64);
    free(s);
}

int bench_filter_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    const bench_filter_variant *variant = arg;
    filter_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    s->ops = variant->ops;
    s->fpr = variant->fpr > 0 ? variant->fpr : BENCH_FILTER_FPR;
    int status = s->ops->create(&s->filter, config->keys, config->seed, variant->options, diag);
    if (status != AMQ_OK) {
        s->filter = NULL;
        bench_filter_teardown(s);
        return status;
    }
    status = bench_key_sets_init(&s->keys, config->keys, BENCH_FILTER_KEY_LEN, config->seed, diag);
    if (status == AMQ_OK && s->ops->hash) {
        const bench_keyset *absent = &s->keys.absent;
        s->absent_hashes = malloc(absent->count * sizeof *s->absent_hashes);
        if (!s->absent_hashes)
            status = amq__fail(diag, AMQ_ENOMEM, "no memory for %zu hashes", absent->count);
        for (size_t i = 0; s->absent_hashes && i < absent->count; i++)
            s->absent_hashes[i] =
                s->ops->hash(s->filter, bench_key(absent, i), bench_key_len(absent, i));
    }
    if (status == AMQ_OK && s->ops->contains_many_hash && s->absent_hashes) {
        size_t count = s->keys.absent.count;
        s->absent_hashes64 = malloc(count * sizeof *s->absent_hashes64);
        if (!s->absent_hashes64)
            status = amq__fail(diag, AMQ_ENOMEM, "no memory for %zu hashes", count);
        for (size_t i = 0; s->absent_hashes64 && i < count; i++)
            s->absent_hashes64[i] = s->absent_hashes[i].low;
    }
    if (status != AMQ_OK) {
        bench_filter_teardown(s);
        return status;
    }
    *state = s;
    return AMQ_OK;
}

static void filter_empty(void *state)
{
    filter_state *s = state;
    s->ops->clear(s->filter);
}

static uint64_t filter_insert(void *state)
{
    filter_state *s = state;
    const bench_keyset *present = &s->keys.present;
    for (size_t i = 0; i < present->count; i++)
        s->ops->add(s->filter, bench_key(present, i), bench_key_len(present, i));
    return present->count;
}

/* Empty the filter and add the present keys again: what the delete phase
 * removes, and what the report describes after it. */
static void filter_refill(void *state)
{
    filter_empty(state);
    filter_insert(state);
}

static uint64_t filter_query_present(void *state)
{
    filter_state *s = state;
    s->present_hits =
        bench_count_hits(s->ops->contains, s->filter, &s->keys.present, s->keys.present.count);
    return s->keys.present.count;
}

static uint64_t filter_query_absent(void *state)
{
    filter_state *s = state;
    s->absent_hits =
        bench_count_hits(s->ops->contains, s->filter, &s->keys.absent, s->keys.absent.count);
    return s->keys.absent.count;
}

static uint64_t filter_query_batch(void *state)
{
    filter_state *s = state;
    size_t n = s->keys.present.count;
    s->batch_hits = bench_batch_hits(s->ops->contains_many, s->filter, s->keys.present_keys,
                                     s->keys.lens, n, BENCH_FILTER_BATCH, s->keys.results);
    s->batch_ran = true;
    return n;
}

/* Skipped (0 operations) for a family without a pre-hashed query. */
static uint64_t filter_query_hashed(void *state)
{
    filter_state *s = state;
    if (!s->absent_hashes)
        return 0;
    uint64_t hits = 0;
    for (size_t i = 0; i < s->keys.absent.count; i++)
        hits += s->ops->contains_hash(s->filter, s->absent_hashes[i]);
    s->hashed_hits = hits;
    s->hashed_ran = true;
    return s->keys.absent.count;
}

/* Skipped (0 operations) for a family without a batch query by hashes. */
static uint64_t filter_hashed_batch(void *state)
{
    filter_state *s = state;
    if (!s->absent_hashes64)
        return 0;
    size_t n = s->keys.absent.count;
    s->hashed_batch_hits =
        bench_batch_hash_hits(s->ops->contains_many_hash, s->filter, s->absent_hashes64, n,
                              BENCH_FILTER_BATCH, s->keys.results);
    s->hashed_batch_ran = true;
    return n;
}

static uint64_t filter_delete(void *state)
{
    filter_state *s = state;
    uint64_t misses = 0;
    const bench_keyset *present = &s->keys.present;
    for (size_t i = 0; i < present->count; i++)
        misses += !s->ops->remove(s->filter, bench_key(present, i), bench_key_len(present, i));
    s->remove_misses = misses;
    s->delete_ran = true;
    return present->count;
}

double bench_filter_measured_fpr(const void *state)
{
    const filter_state *s = state;
    return (double)s->absent_hits / (double)s->keys.absent.count;
}

void bench_filter_report(void *state, bench_figures *out)
{
    filter_state *s = state;
    double n = (double)s->keys.present.count;
    if (s->delete_ran)
        filter_refill(s);
    s->ops->report(s->filter, s->keys.present.count, out);
    double misses = n - (double)s->present_hits + (double)s->remove_misses;
    if (s->batch_ran)
        misses += n - (double)s->batch_hits;
    bench_rate_figures(out, s->fpr, bench_filter_measured_fpr(s), misses);
    if (s->hashed_ran)
        bench_figures_add(out, "hashed_fpr", (double)s->hashed_hits / (double)s->keys.absent.count);
    if (s->hashed_batch_ran)
        bench_figures_add(out, "hashed_batch_fpr",
                          (double)s->hashed_batch_hits / (double)s->keys.absent.count);
}

const bench_phase bench_filter_phases[] = {
    { .name = "insert", .prepare = filter_empty, .run = filter_insert },
    { .name = "query-present", .run = filter_query_present },
    { .name = "query-absent", .run = filter_query_absent },
    { .name = "query-batch", .run = filter_query_batch },
    { .name = "query-hashed", .run = filter_query_hashed },
    { .name = "hashed-batch", .run = filter_hashed_batch },
    { .name = NULL },
};

const bench_phase bench_filter_phases_delete[] = {
    { .name = "insert", .prepare = filter_empty, .run = filter_insert },
    { .name = "query-present", .run = filter_query_present },
    { .name = "query-absent", .run = filter_query_absent },
    { .name = "query-batch", .run = filter_query_batch },
    { .name = "query-hashed", .run = filter_query_hashed },
    { .name = "hashed-batch", .run = filter_hashed_batch },
    { .name = "delete", .prepare = filter_refill, .run = filter_delete },
    { .name = NULL },
};

const bench_phase bench_filter_phases_no_batch[] = {
    { .name = "insert", .prepare = filter_empty, .run = filter_insert },
    { .name = "query-present", .run = filter_query_present },
    { .name = "query-absent", .run = filter_query_absent },
    { .name = NULL },
};
