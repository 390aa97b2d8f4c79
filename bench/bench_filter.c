/*
 * bench_filter.c - the shared workload of the dynamic filters (see
 * bench_filter.h): key sets, the five timed passes and the common figures.
 */
#include "bench_filter.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>

#define BENCH_FILTER_BATCH 1024

typedef struct filter_state {
    const bench_filter_ops *ops;
    double fpr; /* the variant's target rate */
    void *filter;
    bench_keyset present, absent;
    const void **pointers; /* the present keys, for the batch phase */
    size_t *lens;
    uint8_t *results;
    uint64_t present_hits, absent_hits, batch_hits;
    uint64_t remove_misses; /* present keys the last delete pass found nothing for */
    bool batch_ran, delete_ran;
} filter_state;

void bench_filter_teardown(void *state)
{
    filter_state *s = state;
    if (s->filter)
        s->ops->destroy(s->filter);
    bench_keyset_free(&s->present);
    bench_keyset_free(&s->absent);
    free(s->pointers);
    free(s->lens);
    free(s->results);
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
    status = bench_keys_binary(&s->present, config->keys, BENCH_FILTER_KEY_LEN, config->seed,
                               BENCH_KEYS_PRESENT);
    if (status == AMQ_OK)
        status = bench_keys_binary(&s->absent, config->keys, BENCH_FILTER_KEY_LEN, config->seed,
                                   BENCH_KEYS_ABSENT);
    if (status == AMQ_OK) {
        s->pointers = malloc(config->keys * sizeof *s->pointers);
        s->lens = malloc(config->keys * sizeof *s->lens);
        s->results = malloc(config->keys);
        if (!s->pointers || !s->lens || !s->results)
            status = AMQ_ENOMEM;
    }
    if (status != AMQ_OK) {
        bench_filter_teardown(s);
        return amq__fail(diag, status, "setting up %zu keys: %s", config->keys,
                         amq_strerror(status));
    }
    for (size_t i = 0; i < config->keys; i++) {
        s->pointers[i] = bench_key(&s->present, i);
        s->lens[i] = bench_key_len(&s->present, i);
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
    for (size_t i = 0; i < s->present.count; i++)
        s->ops->add(s->filter, bench_key(&s->present, i), bench_key_len(&s->present, i));
    return s->present.count;
}

/* Empty the filter and add the present keys again: what the delete phase
 * removes, and what the report describes after it. */
static void filter_refill(void *state)
{
    filter_empty(state);
    filter_insert(state);
}

static uint64_t count_hits(const filter_state *s, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += s->ops->contains(s->filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}

static uint64_t filter_query_present(void *state)
{
    filter_state *s = state;
    s->present_hits = count_hits(s, &s->present);
    return s->present.count;
}

static uint64_t filter_query_absent(void *state)
{
    filter_state *s = state;
    s->absent_hits = count_hits(s, &s->absent);
    return s->absent.count;
}

static uint64_t filter_query_batch(void *state)
{
    filter_state *s = state;
    size_t n = s->present.count;
    for (size_t start = 0; start < n; start += BENCH_FILTER_BATCH) {
        size_t count = n - start < BENCH_FILTER_BATCH ? n - start : BENCH_FILTER_BATCH;
        s->ops->contains_many(s->filter, s->pointers + start, s->lens + start, count,
                              s->results + start);
    }
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += s->results[i];
    s->batch_hits = hits;
    s->batch_ran = true;
    return n;
}

static uint64_t filter_delete(void *state)
{
    filter_state *s = state;
    uint64_t misses = 0;
    for (size_t i = 0; i < s->present.count; i++)
        misses +=
            !s->ops->remove(s->filter, bench_key(&s->present, i), bench_key_len(&s->present, i));
    s->remove_misses = misses;
    s->delete_ran = true;
    return s->present.count;
}

double bench_filter_measured_fpr(const void *state)
{
    const filter_state *s = state;
    return (double)s->absent_hits / (double)s->present.count;
}

void bench_filter_report(void *state, bench_figures *out)
{
    filter_state *s = state;
    double n = (double)s->present.count;
    double fpr = s->fpr;
    if (s->delete_ran)
        filter_refill(s);
    s->ops->report(s->filter, s->present.count, out);
    bench_figures_add(out, "bound_bits_per_key", -log2(fpr));
    bench_figures_add(out, "target_fpr", fpr);
    bench_figures_add(out, "fpr", bench_filter_measured_fpr(s));
    double misses = n - (double)s->present_hits + (double)s->remove_misses;
    if (s->batch_ran)
        misses += n - (double)s->batch_hits;
    bench_figures_add(out, "false_negatives", misses);
}

const bench_phase bench_filter_phases[] = {
    { .name = "insert", .prepare = filter_empty, .run = filter_insert },
    { .name = "query-present", .run = filter_query_present },
    { .name = "query-absent", .run = filter_query_absent },
    { .name = "query-batch", .run = filter_query_batch },
    { .name = NULL },
};

const bench_phase bench_filter_phases_delete[] = {
    { .name = "insert", .prepare = filter_empty, .run = filter_insert },
    { .name = "query-present", .run = filter_query_present },
    { .name = "query-absent", .run = filter_query_absent },
    { .name = "query-batch", .run = filter_query_batch },
    { .name = "delete", .prepare = filter_refill, .run = filter_delete },
    { .name = NULL },
};

const bench_phase bench_filter_phases_no_batch[] = {
    { .name = "insert", .prepare = filter_empty, .run = filter_insert },
    { .name = "query-present", .run = filter_query_present },
    { .name = "query-absent", .run = filter_query_absent },
    { .name = NULL },
};
