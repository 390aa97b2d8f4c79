/*
 * bench_static.h - the one workload shape every static filter shares: a
 * filter built from all its keys at once, then only queried. The keys are
 * the dynamic families' (bench_filter.h: n present and n absent 16-byte
 * keys), and so are the phase names where they mean the same:
 *
 *   build          the previous filter destroyed (untimed), then one build
 *                  from the n present keys; ns per key
 *   query-present  ask for the present keys one by one
 *   query-absent   the same for the absent keys: the hits give fpr
 *   query-batch    the present keys through the family's batch call,
 *                  batch keys per call (a variant may ask for the whole set
 *                  in one call); only where the family has one
 *   query-hashed   the absent keys' 64-bit hashes, computed once in setup
 *                  (untimed), through the family's pre-hashed query: the
 *                  cost of a query without hashing the key - the figure
 *                  comparable to implementations that query 64-bit keys;
 *                  only where the family has one
 *   hashed-batch   the same hashes through the family's batch
 *                  pre-hashed call, batch hashes per call; only where the
 *                  family has one and lists the phase
 *
 * A variant may limit the one-by-one queries to the first query_limit keys
 * (a query that decodes O(n) bits would otherwise take hours); the runner
 * divides by the keys asked, so ns/op stays per query. fpr is then taken,
 * untimed, from the batch call over all n absent keys where there is one.
 *
 * Figures: fpr, false_negatives (present keys denied by any query phase),
 * target_fpr and bound_bits_per_key, plus the family's own (bytes,
 * bits_per_key, ...).
 *
 * A family gives one bench_static_ops, each workload a bench_static_variant
 * as .arg, with .setup = bench_static_setup, .report = bench_static_report,
 * .teardown = bench_static_teardown and one of the phase lists below. A
 * family with a phase of its own lists the bench_static_* phase functions
 * it keeps and adds its phase, which reaches the filter and keys through
 * bench_static_filter and bench_static_keys (bench_hfb.c).
 */
#ifndef AMQ_BENCH_STATIC_H
#define AMQ_BENCH_STATIC_H

#include "bench_filter.h"

typedef struct bench_static_ops {
    /* Build a filter from count keys, hashing with seed; options are the
     * variant's. */
    int (*build)(void **filter, const void *const *keys, const size_t *lens, size_t count,
                 uint64_t seed, const void *options, amq_diag *diag);
    bench_contains_fn contains;
    bench_contains_many_fn contains_many; /* NULL: no batch query */
    /* The pre-hashed path: the key's hash under the filter's hasher, and
     * the query by it. Both NULL when the family has none. */
    uint64_t (*hash)(const void *filter, const void *key, size_t len);
    bool (*contains_hash)(const void *filter, uint64_t hash);
    /* The batch pre-hashed query: results[i] = 1 when hashes[i] may be in
     * the set, else 0. NULL when the family has none. */
    void (*contains_many_hash)(const void *filter, const uint64_t *hashes, size_t count,
                               uint8_t *results);
    /* The family's own figures: at least bytes and bits_per_key. */
    void (*report)(const void *filter, size_t keys, bench_figures *out);
    void (*destroy)(void *filter);
} bench_static_ops;

/* One workload of a family. */
typedef struct bench_static_variant {
    const bench_static_ops *ops;
    const void *options; /* passed to ops->build */
    double fpr;          /* the rate it is built for: target_fpr */
    size_t query_limit;  /* one-by-one queries ask the first this many keys; 0: all */
    size_t batch;        /* keys per batch call; 0: BENCH_FILTER_BATCH */
} bench_static_variant;

/* arg: a bench_static_variant. Builds the filter once, untimed, so that the
 * phases after build find one and the keys' hashes can be taken. */
int bench_static_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag);
void bench_static_report(void *state, bench_figures *out);
void bench_static_teardown(void *state);

/* The phases, to list in a family's own phase array. */
void bench_static_drop(void *state); /* the prepare of build */
uint64_t bench_static_build(void *state);
uint64_t bench_static_query_present(void *state);
uint64_t bench_static_query_absent(void *state);
uint64_t bench_static_query_batch(void *state);
uint64_t bench_static_query_hashed(void *state);
uint64_t bench_static_query_hashed_batch(void *state); /* needs ops->contains_many_hash */

/* build, query-present, query-absent, query-batch. */
extern const bench_phase bench_static_phases[];
/* The same and query-hashed. */
extern const bench_phase bench_static_phases_hashed[];

/* For a family's own phases and report: the filter built, the keys, the
 * rate the query-absent pass measured. */
const void *bench_static_filter(const void *state);
const bench_key_sets *bench_static_keys(const void *state);
double bench_static_measured_fpr(const void *state);

#endif /* AMQ_BENCH_STATIC_H */
