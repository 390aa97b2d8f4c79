/*
 * bench_static.c - the shared workload of the static filters (see
 * bench_static.h): one build from all the keys, then the query passes, over
 * the key sets, hit counting, batching and rate figures of bench_filter.c.
 *
 * Setup builds the filter once, untimed: the query phases can then run
 * whatever phases a family lists before them, and the absent keys' hashes
 * for query-hashed are taken with the built filter's hasher (the same seed
 * every build, so they stay valid across the build passes).
 */
#include "bench_static.h"
#include "core/util.h"

#include <stdlib.h>

typedef struct static_state {
    const bench_static_ops *ops;
    const bench_static_variant *variant;
    uint64_t seed;
    void *filter;
    bench_key_sets keys;
    uint64_t *absent_hashes; /* NULL when the family has no pre-hashed path */
    size_t queries;          /* keys asked one by one */
    uint64_t present_hits, absent_hits, batch_hits, hashed_hits, hashed_batch_hits;
    bool batch_ran, hashed_ran, hashed_batch_ran;
} static_state;

void bench_static_teardown(void *state)
{
    static_state *s = state;
    if (s->filter)
        s->ops->destroy(s->filter);
    bench_key_sets_free(&s->keys);
    free(s->absent_hashes);
    free(s);
}

void bench_static_drop(void *state)
{
    static_state *s = state;
    if (s->filter)
        s->ops->destroy(s->filter);
    s->filter = NULL;
}

static int static_build(static_state *s, amq_diag *diag)
{
    int status = s->ops->build(&s->filter, s->keys.present_keys, s->keys.lens,
                               s->keys.present.count, s->seed, s->variant->options, diag);
    if (status != AMQ_OK)
        s->filter = NULL;
    return status;
}

int bench_static_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    const bench_static_variant *variant = arg;
    static_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    s->ops = variant->ops;
    s->variant = variant;
    s->seed = config->seed;
    size_t n = config->keys;
    s->queries = variant->query_limit > 0 && variant->query_limit < n ? variant->query_limit : n;
    int status = bench_key_sets_init(&s->keys, n, BENCH_FILTER_KEY_LEN, config->seed, diag);
    if (status == AMQ_OK)
        status = static_build(s, diag);
    if (status == AMQ_OK && s->ops->hash) {
        s->absent_hashes = malloc(n * sizeof *s->absent_hashes);
        if (!s->absent_hashes)
            status = amq__fail(diag, AMQ_ENOMEM, "hashes of %zu keys", n);
    }
    if (status != AMQ_OK) {
        bench_static_teardown(s);
        return status;
    }
    for (size_t i = 0; s->absent_hashes && i < n; i++)
        s->absent_hashes[i] = s->ops->hash(s->filter, s->keys.absent_keys[i], s->keys.lens[i]);
    *state = s;
    return AMQ_OK;
}

uint64_t bench_static_build(void *state)
{
    static_state *s = state;
    if (static_build(s, NULL) != AMQ_OK)
        return 0; /* the runner reports a phase without operations */
    return s->keys.present.count;
}

uint64_t bench_static_query_present(void *state)
{
    static_state *s = state;
    s->present_hits = bench_count_hits(s->ops->contains, s->filter, &s->keys.present, s->queries);
    return s->queries;
}

uint64_t bench_static_query_absent(void *state)
{
    static_state *s = state;
    s->absent_hits = bench_count_hits(s->ops->contains, s->filter, &s->keys.absent, s->queries);
    return s->queries;
}

static size_t static_batch(const static_state *s)
{
    return s->variant->batch > 0 ? s->variant->batch : BENCH_FILTER_BATCH;
}

uint64_t bench_static_query_batch(void *state)
{
    static_state *s = state;
    size_t n = s->keys.present.count;
    s->batch_hits = bench_batch_hits(s->ops->contains_many, s->filter, s->keys.present_keys,
                                     s->keys.lens, n, static_batch(s), s->keys.results);
    s->batch_ran = true;
    return n;
}

uint64_t bench_static_query_hashed(void *state)
{
    static_state *s = state;
    uint64_t hits = 0;
    for (size_t i = 0; i < s->queries; i++)
        hits += s->ops->contains_hash(s->filter, s->absent_hashes[i]);
    s->hashed_hits = hits;
    s->hashed_ran = true;
    return s->queries;
}

uint64_t bench_static_query_hashed_batch(void *state)
{
    static_state *s = state;
    size_t n = s->keys.present.count;
    s->hashed_batch_hits =
        bench_batch_hash_hits(s->ops->contains_many_hash, s->filter, s->absent_hashes, n,
                              static_batch(s), s->keys.results);
    s->hashed_batch_ran = true;
    return n;
}

const void *bench_static_filter(const void *state)
{
    const static_state *s = state;
    return s->filter;
}

const bench_key_sets *bench_static_keys(const void *state)
{
    const static_state *s = state;
    return &s->keys;
}

double bench_static_measured_fpr(const void *state)
{
    const static_state *s = state;
    return (double)s->absent_hits / (double)s->queries;
}

void bench_static_report(void *state, bench_figures *out)
{
    static_state *s = state;
    size_t n = s->keys.present.count;
    s->ops->report(s->filter, n, out);
    double misses = (double)s->queries - (double)s->present_hits;
    if (s->batch_ran)
        misses += (double)n - (double)s->batch_hits;
    double hashed_fpr = (double)s->hashed_hits / (double)s->queries;
    /* With the one-by-one queries limited, the rate over all n absent keys
     * comes from the batch call, untimed. */
    if (s->queries < n && s->ops->contains_many) {
        s->absent_hits = bench_batch_hits(s->ops->contains_many, s->filter, s->keys.absent_keys,
                                          s->keys.lens, n, static_batch(s), s->keys.results);
        s->queries = n;
    }
    bench_rate_figures(out, s->variant->fpr, bench_static_measured_fpr(s), misses);
    if (s->hashed_ran)
        bench_figures_add(out, "hashed_fpr", hashed_fpr);
    if (s->hashed_batch_ran)
        bench_figures_add(out, "hashed_batch_fpr", (double)s->hashed_batch_hits / (double)n);
}

const bench_phase bench_static_phases[] = {
    { .name = "build", .prepare = bench_static_drop, .run = bench_static_build },
    { .name = "query-present", .run = bench_static_query_present },
    { .name = "query-absent", .run = bench_static_query_absent },
    { .name = "query-batch", .run = bench_static_query_batch },
    { .name = NULL },
};

const bench_phase bench_static_phases_hashed[] = {
    { .name = "build", .prepare = bench_static_drop, .run = bench_static_build },
    { .name = "query-present", .run = bench_static_query_present },
    { .name = "query-absent", .run = bench_static_query_absent },
    { .name = "query-batch", .run = bench_static_query_batch },
    { .name = "query-hashed", .run = bench_static_query_hashed },
    { .name = NULL },
};
