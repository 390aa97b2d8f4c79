/*
 * bench_filter.h - the one workload shape every dynamic filter shares:
 * n present and n absent 16-byte keys (bench_keys.c), and up to seven phases
 *
 *   insert         add the n present keys to an emptied filter
 *   query-present  ask for them one by one
 *   query-absent   ask for the n absent keys one by one (hits are false positives)
 *   query-batch    ask for the present keys through the family's batch call,
 *                  1024 at a time (omitted when the family has none)
 *   query-hashed   ask for the absent keys one by one by their hashes,
 *                  computed before the pass: the filter's own time, without
 *                  hashing the key (skipped when the family has no _hash
 *                  query)
 *   hashed-batch   the same hashes through the family's batch call by
 *                  64-bit hashes, 1024 per call (skipped when it has none):
 *                  the figure to set beside implementations timed on
 *                  integer keys with the query inlined in the loop
 *   delete         remove the n present keys one by one from a filter refilled
 *                  (untimed) before each pass (only for families that remove)
 *
 * and the figures fpr, false_negatives, target_fpr and bound_bits_per_key
 * (log2(1/p)), plus what the family reports itself (bytes, bits_per_key,
 * hashes, ...). A present key that a query denies, or whose removal finds
 * nothing to remove, counts as a false negative. The family's report always
 * sees the filter holding the n present keys: after a delete phase the
 * filter is refilled first.
 *
 * A family gives one bench_filter_ops - how to create, empty, add to,
 * query, remove from and describe its filter - and each workload a
 * bench_filter_variant: those ops, the options its create takes (a layout,
 * a fingerprint width) and the rate it is built for. The bench_workload's
 * .arg is the variant; its setup, phases, report and teardown are the ones
 * below.
 */
#ifndef AMQ_BENCH_FILTER_H
#define AMQ_BENCH_FILTER_H

#include "bench.h"

#include <stdbool.h>

#define BENCH_FILTER_KEY_LEN 16
#define BENCH_FILTER_FPR     0.01
#define BENCH_FILTER_BATCH   1024 /* keys per batch call in query-batch */

typedef struct bench_filter_ops {
    /* An empty filter for n keys at the variant's rate, hashing with seed;
     * options are the variant's (NULL for a family without variants). */
    int (*create)(void **filter, size_t keys, uint64_t seed, const void *options, amq_diag *diag);
    void (*clear)(void *filter);
    void (*add)(void *filter, const void *key, size_t len);
    bool (*contains)(const void *filter, const void *key, size_t len);
    /* NULL when the family has no batch query. */
    void (*contains_many)(const void *filter, const void *const *keys, const size_t *lens,
                          size_t count, uint8_t *results);
    /* The pre-hashed query (both NULL when the family has none): the hash the filter's own query
     * takes for a key (a 64-bit one in .lo), and that query. */
    amq_u128 (*hash)(const void *filter, const void *key, size_t len);
    bool (*contains_hash)(const void *filter, amq_u128 hash);
    /* The batch query by 64-bit hashes (.low of hash's), NULL when the
     * family has none. */
    void (*contains_many_hash)(const void *filter, const uint64_t *hashes, size_t count,
                               uint8_t *results);
    /* Remove one copy of a key; false when the filter found none. NULL when
     * the family cannot remove. */
    bool (*remove)(void *filter, const void *key, size_t len);
    /* The family's own figures: at least bytes and bits_per_key. */
    void (*report)(const void *filter, size_t keys, bench_figures *out);
    void (*destroy)(void *filter);
} bench_filter_ops;

/* One workload of a family. */
typedef struct bench_filter_variant {
    const bench_filter_ops *ops;
    const void *options; /* passed to ops->create */
    /* The false-positive rate the filter is built for, reported as
     * target_fpr and behind bound_bits_per_key; 0 means BENCH_FILTER_FPR.
     * A variant whose parameters fix its rate (a cuckoo filter's fingerprint
     * width) states it here. */
    double fpr;
} bench_filter_variant;

/* ---- pieces the static workload (bench_static.h) shares ---------------- */

typedef bool (*bench_contains_fn)(const void *filter, const void *key, size_t len);
typedef void (*bench_contains_many_fn)(const void *filter, const void *const *keys,
                                       const size_t *lens, size_t count, uint8_t *results);
typedef void (*bench_contains_many_hash_fn)(const void *filter, const uint64_t *hashes,
                                            size_t count, uint8_t *results);

/* n present and n absent keys of one length, with the pointer and length
 * arrays that batch calls take, and n result bytes for them. */
typedef struct bench_key_sets {
    bench_keyset present, absent;
    const void **present_keys, **absent_keys;
    size_t *lens; /* n entries: the length of key i of either set */
    uint8_t *results;
} bench_key_sets;

/* Returns AMQ_OK, or a status with a message in diag; on failure the sets
 * are freed. */
int bench_key_sets_init(bench_key_sets *sets, size_t count, size_t len, uint64_t seed,
                        amq_diag *diag);
/* Free the sets; accepts zeroed ones. */
void bench_key_sets_free(bench_key_sets *sets);
/* How many of the first count keys contains accepts. */
uint64_t bench_count_hits(bench_contains_fn contains, const void *filter, const bench_keyset *keys,
                          size_t count);
/* Ask for count keys through contains_many, batch keys per call (the last
 * call takes the rest); returns how many it accepted. results: count bytes. */
uint64_t bench_batch_hits(bench_contains_many_fn contains_many, const void *filter,
                          const void *const *keys, const size_t *lens, size_t count, size_t batch,
                          uint8_t *results);
/* The same by 64-bit hashes, through contains_many_hash. */
uint64_t bench_batch_hash_hits(bench_contains_many_hash_fn contains_many_hash, const void *filter,
                               const uint64_t *hashes, size_t count, size_t batch,
                               uint8_t *results);
/* The figures every filter workload reports: bound_bits_per_key
 * (log2(1/target_fpr)), target_fpr, fpr and false_negatives. */
void bench_rate_figures(bench_figures *out, double target_fpr, double fpr, double false_negatives);

/* arg: a bench_filter_variant. */
int bench_filter_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag);
void bench_filter_report(void *state, bench_figures *out);
void bench_filter_teardown(void *state);
/* insert, query-present, query-absent, query-batch, query-hashed,
 * hashed-batch. */
extern const bench_phase bench_filter_phases[];
/* insert, query-present, query-absent. */
extern const bench_phase bench_filter_phases_no_batch[];
/* insert, query-present, query-absent, query-batch, query-hashed,
 * hashed-batch, delete (the ops need contains_many and remove). */
extern const bench_phase bench_filter_phases_delete[];

/* The false-positive rate measured by the last query-absent pass. */
double bench_filter_measured_fpr(const void *state);

#endif /* AMQ_BENCH_FILTER_H */
