/*
 * bench_threads.c - the concurrent add of the classic and blocked Bloom
 * filters (amq_bloom_add_concurrent, amq_blocked_bloom_add_concurrent)
 * beside their plain add, and the concurrent query beside the plain one:
 * n 16-byte keys at p = 0.01, as bench_bloom.c and bench_blocked_bloom.c
 * have them.
 *
 * Phases, alternating (each round times every phase once, in this order, so
 * that a busy moment of the machine falls on all of them alike):
 *
 *   insert            the plain add on one thread (the baseline)
 *   insert-concurrent the concurrent add on one thread: what the atomics
 *                     cost
 *   insert-2-threads  the concurrent add on 2 threads, each adding half of
 *                     the keys (the first half and the second); wall time
 *                     per key, so a perfect speed-up halves it
 *   query-present     the plain query of the n keys, the filter full
 *   query-concurrent  the concurrent query of the same keys, on one thread
 *
 * Each insert pass starts from an empty filter (cleared, untimed); the
 * threads are created and joined inside the timed pass (tens of
 * microseconds against the tens of milliseconds a pass takes). The runner
 * gives each phase its ratio to insert (query-concurrent's to
 * query-present is in the docs). Figures: threads (2) and lost_keys, the
 * present keys the concurrent query missed after the last pass: must be 0.
 */
#include "bench.h"
#include "core/util.h"

#include "amq/bloom.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#define THREADS_KEY_LEN 16
#define THREADS_FPR     0.01
#define THREADS_MAX     2

typedef enum threads_kind { KIND_CLASSIC, KIND_SPLIT, KIND_BLOCK } threads_kind;

typedef struct threads_state {
    threads_kind kind;
    amq_bloom *classic;
    amq_blocked_bloom *blocked;
    bench_keyset keys;
    uint64_t hits;
} threads_state;

/* One thread's share of a pass: keys [first, end). */
typedef struct share {
    threads_state *s;
    size_t first, end;
} share;

static int threads_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    threads_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    s->kind = *(const threads_kind *)arg;
    int status;
    if (s->kind == KIND_CLASSIC) {
        amq_bloom_params params = { .capacity = config->keys, .fpr = THREADS_FPR };
        amq_hasher_xxh3(&params.hasher, config->seed);
        status = amq_bloom_new(&s->classic, &params, diag);
    } else {
        amq_blocked_bloom_params params = {
            .capacity = config->keys,
            .fpr = THREADS_FPR,
            .layout = s->kind == KIND_SPLIT ? AMQ_BLOCKED_SPLIT : AMQ_BLOCKED_BLOCK,
        };
        amq_hasher_xxh3(&params.hasher, config->seed);
        status = amq_blocked_bloom_new(&s->blocked, &params, diag);
    }
    if (status == AMQ_OK)
        status = bench_keys_binary(&s->keys, config->keys, THREADS_KEY_LEN, config->seed,
                                   BENCH_KEYS_PRESENT);
    if (status != AMQ_OK) {
        amq_bloom_free(s->classic);
        amq_blocked_bloom_free(s->blocked);
        bench_keyset_free(&s->keys);
        free(s);
        return amq__fail(diag, status, "setting up %zu keys: %s", config->keys,
                         amq_strerror(status));
    }
    *state = s;
    return AMQ_OK;
}

static void threads_empty(void *state)
{
    threads_state *s = state;
    if (s->classic)
        amq_bloom_clear(s->classic);
    else
        amq_blocked_bloom_clear(s->blocked);
}

static uint64_t threads_insert(void *state)
{
    threads_state *s = state;
    const bench_keyset *keys = &s->keys;
    if (s->classic)
        for (size_t i = 0; i < keys->count; i++)
            amq_bloom_add(s->classic, bench_key(keys, i), bench_key_len(keys, i));
    else
        for (size_t i = 0; i < keys->count; i++)
            amq_blocked_bloom_add(s->blocked, bench_key(keys, i), bench_key_len(keys, i));
    return keys->count;
}

static void *add_share(void *arg)
{
    const share *part = arg;
    threads_state *s = part->s;
    const bench_keyset *keys = &s->keys;
    if (s->classic)
        for (size_t i = part->first; i < part->end; i++)
            amq_bloom_add_concurrent(s->classic, bench_key(keys, i), bench_key_len(keys, i));
    else
        for (size_t i = part->first; i < part->end; i++)
            amq_blocked_bloom_add_concurrent(s->blocked, bench_key(keys, i),
                                             bench_key_len(keys, i));
    return NULL;
}

/* The concurrent add of every key on threads threads (1: the calling one);
 * 0 operations if a thread cannot be created. */
static uint64_t insert_on(threads_state *s, int threads)
{
    share parts[THREADS_MAX];
    pthread_t ids[THREADS_MAX];
    size_t n = s->keys.count;
    for (int t = 0; t < threads; t++)
        parts[t] =
            (share){ s, n * (size_t)t / (size_t)threads, n * (size_t)(t + 1) / (size_t)threads };
    if (threads == 1) {
        add_share(&parts[0]);
        return n;
    }
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&ids[started], NULL, add_share, &parts[started]) != 0)
            break;
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
    return started == threads ? n : 0;
}

static uint64_t threads_insert_concurrent(void *state)
{
    return insert_on(state, 1);
}

static uint64_t threads_insert_2(void *state)
{
    return insert_on(state, 2);
}

static uint64_t threads_query(void *state, bool concurrent)
{
    threads_state *s = state;
    const bench_keyset *keys = &s->keys;
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++) {
        const uint8_t *key = bench_key(keys, i);
        size_t len = bench_key_len(keys, i);
        if (s->classic)
            hits += concurrent ? amq_bloom_contains_concurrent(s->classic, key, len)
                               : amq_bloom_contains(s->classic, key, len);
        else
            hits += concurrent ? amq_blocked_bloom_contains_concurrent(s->blocked, key, len)
                               : amq_blocked_bloom_contains(s->blocked, key, len);
    }
    s->hits = hits;
    return keys->count;
}

static uint64_t threads_query_present(void *state)
{
    return threads_query(state, false);
}

static uint64_t threads_query_concurrent(void *state)
{
    return threads_query(state, true);
}

static void threads_report(void *state, bench_figures *out)
{
    threads_state *s = state;
    /* The last pass was query-concurrent, over a filter the last
     * insert-2-threads pass filled. */
    bench_figures_add(out, "threads", THREADS_MAX);
    bench_figures_add(out, "lost_keys", (double)(s->keys.count - s->hits));
}

static void threads_teardown(void *state)
{
    threads_state *s = state;
    amq_bloom_free(s->classic);
    amq_blocked_bloom_free(s->blocked);
    bench_keyset_free(&s->keys);
    free(s);
}

static const bench_phase threads_phases[] = {
    { .name = "insert", .prepare = threads_empty, .run = threads_insert },
    { .name = "insert-concurrent", .prepare = threads_empty, .run = threads_insert_concurrent },
    { .name = "insert-2-threads", .prepare = threads_empty, .run = threads_insert_2 },
    { .name = "query-present", .run = threads_query_present },
    { .name = "query-concurrent", .run = threads_query_concurrent },
    { .name = NULL },
};

static const threads_kind kind_classic = KIND_CLASSIC, kind_split = KIND_SPLIT,
                          kind_block = KIND_BLOCK;

const bench_workload bench_threads_classic = {
    .name = "threads/classic",
    .group = "threads",
    .description = "amq_bloom_add_concurrent on 1 and 2 threads beside amq_bloom_add, p = 0.01",
    .arg = &kind_classic,
    .setup = threads_setup,
    .phases = threads_phases,
    .report = threads_report,
    .teardown = threads_teardown,
    .alternate = true,
    .baseline = "insert",
};

const bench_workload bench_threads_split_block = {
    .name = "threads/split-block",
    .group = "threads",
    .description = "amq_blocked_bloom_add_concurrent (split) on 1 and 2 threads beside the add",
    .arg = &kind_split,
    .setup = threads_setup,
    .phases = threads_phases,
    .report = threads_report,
    .teardown = threads_teardown,
    .alternate = true,
    .baseline = "insert",
};

const bench_workload bench_threads_blocked = {
    .name = "threads/blocked",
    .group = "threads",
    .description = "amq_blocked_bloom_add_concurrent (512-bit blocks) on 1 and 2 threads",
    .arg = &kind_block,
    .setup = threads_setup,
    .phases = threads_phases,
    .report = threads_report,
    .teardown = threads_teardown,
    .alternate = true,
    .baseline = "insert",
};
