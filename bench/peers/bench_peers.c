/*
 * bench_peers.c - amq's filters and the public peers, timed in turn in one
 * process on the same keys (bench_peers.h has the peers' adapters;
 * bench/README.md, "The peers", says how to build them in).
 *
 * One workload per pair, `vs/<peer>`: setup takes the bench's n present
 * and n absent 16-byte keys (bench_key_sets_init, as every amq workload),
 * hashes them once with the amq filter's own hasher (XXH3 seeded with
 * --seed: 64 bits, or 128 for the classic and counting filters), and the
 * 64-bit hashes (the low half of the 128-bit ones) are the integer keys the
 * peer gets: the same keys amq's query-hashed phase asks. The phases run
 * alternating (bench_workload.alternate): every phase's warm-up, then R
 * rounds of one run of each, so that amq's run and the peer's of one phase
 * are next to each other and a busy moment of the machine hits both:
 *
 *   insert          amq's pre-hashed add of the n present hashes into an
 *                   emptied filter, one call per key (build: one
 *                   amq_*_build_hash of them, for fuse and gcs)
 *   peer-insert     the peer's add of the same n integer keys into a new
 *                   empty filter (made untimed), one call per key
 *                   (peer-build: one build from them)
 *   present-hashed  amq's pre-hashed query of the n present hashes
 *   peer-present    the peer's query of the same keys
 *   query-hashed    amq's pre-hashed query of the n absent hashes
 *   peer-absent     the peer's query of the same keys
 *   hashed-batch    amq's batch pre-hashed query of the absent hashes,
 *                   1024 per call (gcs: all n in one merged pass; the
 *                   classic and counting filters: their 128-bit hashes)
 *   query-absent    amq's query of the n absent keys by their 16 bytes
 *                   (the hash taken in the query)
 *
 * and, for the counting filters, a workload of its own (`...-delete`, the
 * runner has room for 8 phases): `delete` and `peer-delete`, each filter
 * refilled untimed before each pass, then every present key removed.
 * scripts/perf-tables.py takes the ratios amq / peer within each
 * invocation: insert / peer-insert, present-hashed / peer-present,
 * query-hashed, hashed-batch and query-absent / peer-absent, delete /
 * peer-delete.
 *
 * Figures: amq's bits_per_key, fpr (query-hashed's hits), target_fpr,
 * bound_bits_per_key, false_negatives, insert_failures; the peer's
 * peer_bits_per_key, peer_fpr, peer_false_negatives,
 * peer_insert_failures; after a delete, remove_misses and
 * peer_remove_misses (must all be 0 but the cuckoo filters' failures).
 */
#include "bench_peers.h"
#include "bench_peers_inline.h"

#include "bench_filter.h"
#include "core/util.h"

#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/fuse.h"
#include "amq/gcs.h"

#include <stdlib.h>
#include <string.h>

/* ---- amq's side, one set of loops per family ---------------------------- */

/* The hashes of one key set: 128-bit ones for a family that takes them
 * (wide), and the 64-bit ones (their low half otherwise) for the others
 * and for the peer. */
typedef struct pair_hashes {
    amq_u128 *wide; /* NULL unless the family takes 128-bit hashes */
    uint64_t *low;
} pair_hashes;

typedef struct amq_side {
    bool wide;
    /* A dynamic filter: an empty one for n keys, hashing with seed. */
    int (*create)(void **filter, size_t n, uint64_t seed, const void *options, amq_diag *diag);
    void (*clear)(void *filter);
    /* Add n hashes one by one; returns the adds refused. */
    uint64_t (*add_all)(void *filter, const pair_hashes *h, size_t n);
    /* Remove them one by one; returns the removals that found nothing. */
    uint64_t (*remove_all)(void *filter, const pair_hashes *h, size_t n);
    /* A static filter: built from n 64-bit hashes. */
    int (*build)(void **filter, const uint64_t *hashes, size_t n, uint64_t seed,
                 const void *options, amq_diag *diag);
    /* Hits of the pre-hashed query, one call per hash. */
    uint64_t (*count_hashed)(const void *filter, const pair_hashes *h, size_t n);
    /* Hits of the same query compiled into the loop (amq/inline.h), by the
     * 64-bit hashes; NULL: the family has no view. */
    uint64_t (*count_inline)(const void *filter, const uint64_t *hashes, size_t n);
    /* The batch pre-hashed query of n hashes into results; NULL: none. */
    void (*batch_hashed)(const void *filter, const pair_hashes *h, size_t n, uint8_t *results);
    /* Hits of the query by key bytes, one call per key. */
    uint64_t (*count_keys)(const void *filter, const bench_keyset *keys);
    double (*bytes)(const void *filter);
    void (*destroy)(void *filter);
} amq_side;

/* Each family's loops over hashes and keys, and its batch by hashes (the
 * classic and counting filters' by their 128-bit ones), follow its create or
 * build function: one call per key, or per BENCH_FILTER_BATCH hashes. A
 * loop reads the hashes through a local pointer, as the peers' loops read
 * their keys: read through h, each key would also reload h->low, which the
 * compiler must assume the call may have changed. */

/* -- blocked-bloom, split layout */

static int blocked_create(void **filter, size_t n, uint64_t seed, const void *options,
                          amq_diag *diag)
{
    (void)options;
    amq_blocked_bloom_params params = { .capacity = n,
                                        .fpr = BENCH_FILTER_FPR,
                                        .layout = AMQ_BLOCKED_SPLIT };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_blocked_bloom_new((amq_blocked_bloom **)filter, &params, diag);
}

static void blocked_clear(void *filter)
{
    amq_blocked_bloom_clear(filter);
}

static uint64_t blocked_add_all(void *filter, const pair_hashes *h, size_t n)
{
    const uint64_t *hashes = h->low;
    for (size_t i = 0; i < n; i++)
        amq_blocked_bloom_add_hash(filter, hashes[i]);
    return 0;
}

static uint64_t blocked_bloom_count_hashed(const void *filter, const pair_hashes *h, size_t n)
{
    const uint64_t *hashes = h->low;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_blocked_bloom_contains_hash(filter, hashes[i]);
    return hits;
}

static uint64_t blocked_bloom_count_keys(const void *filter, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += amq_blocked_bloom_contains(filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}
static void blocked_bloom_batch_hashed(const void *filter, const pair_hashes *h, size_t n,
                                       uint8_t *results)
{
    for (size_t start = 0; start < n; start += BENCH_FILTER_BATCH) {
        size_t todo = n - start < BENCH_FILTER_BATCH ? n - start : BENCH_FILTER_BATCH;
        amq_blocked_bloom_contains_many_hash(results + start, filter, h->low + start, todo);
    }
}

static double blocked_bytes(const void *filter)
{
    return (double)amq_blocked_bloom_bits(filter) / 8;
}

static void blocked_destroy(void *filter)
{
    amq_blocked_bloom_free(filter);
}

static const amq_side side_split_block = {
    .create = blocked_create,
    .clear = blocked_clear,
    .add_all = blocked_add_all,
    .count_hashed = blocked_bloom_count_hashed,
    .count_inline = bench_inline_split_block_count,
    .batch_hashed = blocked_bloom_batch_hashed,
    .count_keys = blocked_bloom_count_keys,
    .bytes = blocked_bytes,
    .destroy = blocked_destroy,
};

/* -- bloom: the peer's shape, 10 bits per key and k = 7 */

#define SHAPE_BITS_PER_KEY 10
#define SHAPE_HASHES       7

static int bloom_create(void **filter, size_t n, uint64_t seed, const void *options, amq_diag *diag)
{
    (void)options;
    amq_bloom_params params = { .capacity = n,
                                .bits = (uint64_t)n * SHAPE_BITS_PER_KEY,
                                .hashes = SHAPE_HASHES };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_bloom_new((amq_bloom **)filter, &params, diag);
}

static void bloom_clear(void *filter)
{
    amq_bloom_clear(filter);
}

static uint64_t bloom_add_all(void *filter, const pair_hashes *h, size_t n)
{
    const amq_u128 *hashes = h->wide;
    for (size_t i = 0; i < n; i++)
        amq_bloom_add_hash(filter, hashes[i]);
    return 0;
}

static uint64_t bloom_count_hashed(const void *filter, const pair_hashes *h, size_t n)
{
    const amq_u128 *hashes = h->wide;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_bloom_contains_hash(filter, hashes[i]);
    return hits;
}

static uint64_t bloom_count_keys(const void *filter, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += amq_bloom_contains(filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}

static void bloom_batch_hashed(const void *filter, const pair_hashes *h, size_t n, uint8_t *results)
{
    for (size_t start = 0; start < n; start += BENCH_FILTER_BATCH) {
        size_t todo = n - start < BENCH_FILTER_BATCH ? n - start : BENCH_FILTER_BATCH;
        amq_bloom_contains_many_hash(results + start, filter, h->wide + start, todo);
    }
}

static double bloom_bytes(const void *filter)
{
    return (double)amq_bloom_bits(filter) / 8;
}

static void bloom_destroy(void *filter)
{
    amq_bloom_free(filter);
}

static const amq_side side_classic = {
    .wide = true,
    .create = bloom_create,
    .clear = bloom_clear,
    .add_all = bloom_add_all,
    .count_hashed = bloom_count_hashed,
    .batch_hashed = bloom_batch_hashed,
    .count_keys = bloom_count_keys,
    .bytes = bloom_bytes,
    .destroy = bloom_destroy,
};

/* -- counting-bloom: the peer's shape, 10 four-bit counters per key, k = 7 */

static int counting_create(void **filter, size_t n, uint64_t seed, const void *options,
                           amq_diag *diag)
{
    (void)options;
    amq_counting_bloom_params params = { .capacity = n,
                                         .counters = (uint64_t)n * SHAPE_BITS_PER_KEY,
                                         .hashes = SHAPE_HASHES,
                                         .counter_bits = 4 };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_counting_bloom_new((amq_counting_bloom **)filter, &params, diag);
}

static void counting_clear(void *filter)
{
    amq_counting_bloom_clear(filter);
}

static uint64_t counting_add_all(void *filter, const pair_hashes *h, size_t n)
{
    const amq_u128 *hashes = h->wide;
    for (size_t i = 0; i < n; i++)
        amq_counting_bloom_add_hash(filter, hashes[i]);
    return 0;
}

static uint64_t counting_remove_all(void *filter, const pair_hashes *h, size_t n)
{
    const amq_u128 *hashes = h->wide;
    uint64_t misses = 0;
    for (size_t i = 0; i < n; i++)
        misses += amq_counting_bloom_remove_hash(filter, hashes[i]) != AMQ_OK;
    return misses;
}

static uint64_t counting_bloom_count_hashed(const void *filter, const pair_hashes *h, size_t n)
{
    const amq_u128 *hashes = h->wide;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_counting_bloom_contains_hash(filter, hashes[i]);
    return hits;
}

static uint64_t counting_bloom_count_keys(const void *filter, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += amq_counting_bloom_contains(filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}

static void counting_batch_hashed(const void *filter, const pair_hashes *h, size_t n,
                                  uint8_t *results)
{
    for (size_t start = 0; start < n; start += BENCH_FILTER_BATCH) {
        size_t todo = n - start < BENCH_FILTER_BATCH ? n - start : BENCH_FILTER_BATCH;
        amq_counting_bloom_contains_many_hash(results + start, filter, h->wide + start, todo);
    }
}

static double counting_bytes(const void *filter)
{
    return (double)amq_counting_bloom_counters(filter) * amq_counting_bloom_counter_bits(filter) /
           8;
}

static void counting_destroy(void *filter)
{
    amq_counting_bloom_free(filter);
}

static const amq_side side_counting = {
    .wide = true,
    .create = counting_create,
    .clear = counting_clear,
    .add_all = counting_add_all,
    .remove_all = counting_remove_all,
    .count_hashed = counting_bloom_count_hashed,
    .batch_hashed = counting_batch_hashed,
    .count_keys = counting_bloom_count_keys,
    .bytes = counting_bytes,
    .destroy = counting_destroy,
};

/* -- cuckoo: f = 12, b = 4, created for n keys */

static int cuckoo_create(void **filter, size_t n, uint64_t seed, const void *options,
                         amq_diag *diag)
{
    (void)options;
    amq_cuckoo_params params = { .capacity = n, .fingerprint_bits = 12, .bucket_size = 4 };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_cuckoo_new((amq_cuckoo **)filter, &params, diag);
}

static void cuckoo_clear(void *filter)
{
    amq_cuckoo_clear(filter);
}

static uint64_t cuckoo_add_all(void *filter, const pair_hashes *h, size_t n)
{
    const uint64_t *hashes = h->low;
    uint64_t refused = 0;
    for (size_t i = 0; i < n; i++)
        refused += amq_cuckoo_add_hash(filter, hashes[i]) != AMQ_OK;
    return refused;
}

static uint64_t cuckoo_remove_all(void *filter, const pair_hashes *h, size_t n)
{
    const uint64_t *hashes = h->low;
    uint64_t misses = 0;
    for (size_t i = 0; i < n; i++)
        misses += amq_cuckoo_remove_hash(filter, hashes[i]) != AMQ_OK;
    return misses;
}

static uint64_t cuckoo_count_hashed(const void *filter, const pair_hashes *h, size_t n)
{
    const uint64_t *hashes = h->low;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_cuckoo_contains_hash(filter, hashes[i]);
    return hits;
}

static uint64_t cuckoo_count_keys(const void *filter, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += amq_cuckoo_contains(filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}
static void cuckoo_batch_hashed(const void *filter, const pair_hashes *h, size_t n,
                                uint8_t *results)
{
    for (size_t start = 0; start < n; start += BENCH_FILTER_BATCH) {
        size_t todo = n - start < BENCH_FILTER_BATCH ? n - start : BENCH_FILTER_BATCH;
        amq_cuckoo_contains_many_hash(results + start, filter, h->low + start, todo);
    }
}

static double cuckoo_bytes(const void *filter)
{
    return (double)amq_cuckoo_memory_bytes(filter);
}

static void cuckoo_destroy(void *filter)
{
    amq_cuckoo_free(filter);
}

static const amq_side side_cuckoo12 = {
    .create = cuckoo_create,
    .clear = cuckoo_clear,
    .add_all = cuckoo_add_all,
    .remove_all = cuckoo_remove_all,
    .count_hashed = cuckoo_count_hashed,
    .count_inline = bench_inline_cuckoo_count,
    .batch_hashed = cuckoo_batch_hashed,
    .count_keys = cuckoo_count_keys,
    .bytes = cuckoo_bytes,
    .destroy = cuckoo_destroy,
};

/* -- fuse: 3-wise, f = 8 or 16 (options: a uint32_t) */

static int fuse_build(void **filter, const uint64_t *hashes, size_t n, uint64_t seed,
                      const void *options, amq_diag *diag)
{
    amq_fuse_params params = { .fingerprint_bits = *(const uint32_t *)options, .arity = 3 };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_fuse_build_hash((amq_fuse **)filter, &params, hashes, n, diag);
}

static uint64_t fuse_count_hashed(const void *filter, const pair_hashes *h, size_t n)
{
    const uint64_t *hashes = h->low;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_fuse_contains_hash(filter, hashes[i]);
    return hits;
}

static uint64_t fuse_count_keys(const void *filter, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += amq_fuse_contains(filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}
static void fuse_batch_hashed(const void *filter, const pair_hashes *h, size_t n, uint8_t *results)
{
    for (size_t start = 0; start < n; start += BENCH_FILTER_BATCH) {
        size_t todo = n - start < BENCH_FILTER_BATCH ? n - start : BENCH_FILTER_BATCH;
        amq_fuse_contains_many_hash(results + start, filter, h->low + start, todo);
    }
}

static double fuse_bytes(const void *filter)
{
    return (double)amq_fuse_memory_bytes(filter);
}

static void fuse_destroy(void *filter)
{
    amq_fuse_free(filter);
}

static const amq_side side_fuse = {
    .build = fuse_build,
    .count_hashed = fuse_count_hashed,
    .count_inline = bench_inline_fuse_count,
    .batch_hashed = fuse_batch_hashed,
    .count_keys = fuse_count_keys,
    .bytes = fuse_bytes,
    .destroy = fuse_destroy,
};

/* -- gcs: M = 2^8, the default index (n / 128 entries) */

static int gcs_build(void **filter, const uint64_t *hashes, size_t n, uint64_t seed,
                     const void *options, amq_diag *diag)
{
    (void)options;
    amq_gcs_params params = { .range = 256 };
    amq_hasher_xxh3(&params.hasher, seed);
    return amq_gcs_build_hash((amq_gcs **)filter, &params, hashes, n, diag);
}

static uint64_t gcs_count_hashed(const void *filter, const pair_hashes *h, size_t n)
{
    const uint64_t *hashes = h->low;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += amq_gcs_contains_hash(filter, hashes[i]);
    return hits;
}

/* One merged pass of the stream over all n hashes in one call, as
 * bench_gcs.c's batch phase (a call per 1024 hashes would walk the stream
 * once per call). A match that cannot allocate answers nothing. */
static void gcs_batch_hashed(const void *filter, const pair_hashes *h, size_t n, uint8_t *results)
{
    if (amq_gcs_contains_many_hash(results, filter, h->low, n) != AMQ_OK)
        memset(results, 0, n);
}

static uint64_t gcs_count_keys(const void *filter, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += amq_gcs_contains(filter, bench_key(keys, i), bench_key_len(keys, i));
    return hits;
}

static double gcs_bytes(const void *filter)
{
    return (double)amq_gcs_memory_bytes(filter);
}

static void gcs_destroy(void *filter)
{
    amq_gcs_free(filter);
}

static const amq_side side_gcs = {
    .build = gcs_build,
    .count_hashed = gcs_count_hashed,
    .batch_hashed = gcs_batch_hashed,
    .count_keys = gcs_count_keys,
    .bytes = gcs_bytes,
    .destroy = gcs_destroy,
};

/* ---- the pair workload ---------------------------------------------------- */

typedef struct pair_variant {
    const amq_side *amq;
    const void *options; /* the amq side's */
    const bench_peer_ops *peer;
    double fpr; /* amq's target rate */
} pair_variant;

typedef struct pair_state {
    const pair_variant *v;
    uint64_t seed;
    size_t n;
    void *amq, *peer;
    bench_key_sets keys;
    pair_hashes present, absent;
    uint64_t present_hits, absent_hits, batch_hits, key_hits;
    uint64_t inline_present_hits, inline_absent_hits;
    uint64_t peer_present_hits, peer_absent_hits;
    uint64_t insert_failures, peer_insert_failures;
    uint64_t remove_misses, peer_remove_misses;
    bool batch_ran, keys_ran, delete_ran;
} pair_state;

static void pair_free_hashes(pair_hashes *h)
{
    free(h->wide);
    free(h->low);
}

static void pair_teardown(void *state)
{
    pair_state *s = state;
    if (s->amq)
        s->v->amq->destroy(s->amq);
    if (s->peer)
        s->v->peer->destroy(s->peer);
    bench_key_sets_free(&s->keys);
    pair_free_hashes(&s->present);
    pair_free_hashes(&s->absent);
    free(s);
}

/* The hashes of keys under XXH3 seeded with seed: the hasher every amq
 * filter here is created with. */
static int pair_hash_keys(pair_hashes *out, const bench_keyset *keys, bool wide, uint64_t seed)
{
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, seed);
    out->low = malloc(keys->count * sizeof *out->low);
    out->wide = wide ? malloc(keys->count * sizeof *out->wide) : NULL;
    if (!out->low || (wide && !out->wide))
        return AMQ_ENOMEM;
    for (size_t i = 0; i < keys->count; i++) {
        const void *key = bench_key(keys, i);
        size_t len = bench_key_len(keys, i);
        if (wide) {
            out->wide[i] = amq_hash128(&hasher, key, len);
            out->low[i] = out->wide[i].low;
        } else {
            out->low[i] = amq_hash64(&hasher, key, len);
        }
    }
    return AMQ_OK;
}

/* Make (dynamic) or build (static) both filters, untimed. */
static int pair_make(pair_state *s, amq_diag *diag)
{
    const pair_variant *v = s->v;
    int status = v->amq->create
                     ? v->amq->create(&s->amq, s->n, s->seed, v->options, diag)
                     : v->amq->build(&s->amq, s->present.low, s->n, s->seed, v->options, diag);
    if (status != AMQ_OK) {
        s->amq = NULL;
        return status;
    }
    s->peer = v->peer->create ? v->peer->create(s->n) : v->peer->build(s->present.low, s->n);
    if (!s->peer)
        return amq__fail(diag, AMQ_ENOMEM, "%s: no filter for %zu keys", v->peer->name, s->n);
    return AMQ_OK;
}

static int pair_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    const pair_variant *v = arg;
    pair_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    s->v = v;
    s->seed = config->seed;
    s->n = config->keys;
    int status = bench_key_sets_init(&s->keys, s->n, BENCH_FILTER_KEY_LEN, s->seed, diag);
    if (status == AMQ_OK) {
        status = pair_hash_keys(&s->present, &s->keys.present, v->amq->wide, s->seed);
        if (status == AMQ_OK)
            status = pair_hash_keys(&s->absent, &s->keys.absent, v->amq->wide, s->seed);
        if (status != AMQ_OK)
            amq__fail(diag, status, "no memory for the hashes of %zu keys", s->n);
    }
    if (status == AMQ_OK)
        status = pair_make(s, diag);
    if (status != AMQ_OK) {
        pair_teardown(s);
        return status;
    }
    *state = s;
    return AMQ_OK;
}

/* -- insert and build */

static void own_empty(void *state)
{
    pair_state *s = state;
    s->v->amq->clear(s->amq);
}

static uint64_t own_insert(void *state)
{
    pair_state *s = state;
    s->insert_failures = s->v->amq->add_all(s->amq, &s->present, s->n);
    return s->n;
}

/* The peers have no clear: a new empty filter (its memory written by its
 * constructor, so the pass takes no page faults amq's does not). */
static void peer_empty(void *state)
{
    pair_state *s = state;
    s->v->peer->destroy(s->peer);
    s->peer = s->v->peer->create(s->n);
}

static uint64_t peer_insert(void *state)
{
    pair_state *s = state;
    if (!s->peer)
        return 0;
    s->peer_insert_failures = s->v->peer->add_all(s->peer, s->present.low, s->n);
    return s->n;
}

static void own_drop(void *state)
{
    pair_state *s = state;
    s->v->amq->destroy(s->amq);
    s->amq = NULL;
}

static uint64_t own_build(void *state)
{
    pair_state *s = state;
    const pair_variant *v = s->v;
    if (v->amq->build(&s->amq, s->present.low, s->n, s->seed, v->options, NULL) != AMQ_OK) {
        s->amq = NULL;
        return 0;
    }
    return s->n;
}

static void peer_drop(void *state)
{
    pair_state *s = state;
    s->v->peer->destroy(s->peer);
    s->peer = NULL;
}

static uint64_t peer_build(void *state)
{
    pair_state *s = state;
    s->peer = s->v->peer->build(s->present.low, s->n);
    return s->peer ? s->n : 0;
}

/* -- queries (none when a build failed: the phase is then left out) */

static uint64_t own_present(void *state)
{
    pair_state *s = state;
    if (!s->amq)
        return 0;
    s->present_hits = s->v->amq->count_hashed(s->amq, &s->present, s->n);
    return s->n;
}

static uint64_t peer_present(void *state)
{
    pair_state *s = state;
    if (!s->peer)
        return 0;
    s->peer_present_hits = s->v->peer->count(s->peer, s->present.low, s->n);
    return s->n;
}

static uint64_t own_absent(void *state)
{
    pair_state *s = state;
    if (!s->amq)
        return 0;
    s->absent_hits = s->v->amq->count_hashed(s->amq, &s->absent, s->n);
    return s->n;
}

static uint64_t peer_absent(void *state)
{
    pair_state *s = state;
    if (!s->peer)
        return 0;
    s->peer_absent_hits = s->v->peer->count(s->peer, s->absent.low, s->n);
    return s->n;
}

/* The inline phases: none for a family without a view. */
static uint64_t own_inline_present(void *state)
{
    pair_state *s = state;
    if (!s->amq || !s->v->amq->count_inline)
        return 0;
    s->inline_present_hits = s->v->amq->count_inline(s->amq, s->present.low, s->n);
    return s->n;
}

static uint64_t own_inline_absent(void *state)
{
    pair_state *s = state;
    if (!s->amq || !s->v->amq->count_inline)
        return 0;
    s->inline_absent_hits = s->v->amq->count_inline(s->amq, s->absent.low, s->n);
    return s->n;
}

static uint64_t own_batch(void *state)
{
    pair_state *s = state;
    if (!s->amq || !s->v->amq->batch_hashed)
        return 0;
    s->v->amq->batch_hashed(s->amq, &s->absent, s->n, s->keys.results);
    uint64_t hits = 0;
    for (size_t i = 0; i < s->n; i++)
        hits += s->keys.results[i];
    s->batch_hits = hits;
    s->batch_ran = true;
    return s->n;
}

static uint64_t own_keys(void *state)
{
    pair_state *s = state;
    if (!s->amq)
        return 0;
    s->key_hits = s->v->amq->count_keys(s->amq, &s->keys.absent);
    s->keys_ran = true;
    return s->n;
}

/* -- delete */

static void own_refill(void *state)
{
    own_empty(state);
    own_insert(state);
}

static uint64_t own_delete(void *state)
{
    pair_state *s = state;
    s->remove_misses = s->v->amq->remove_all(s->amq, &s->present, s->n);
    s->delete_ran = true;
    return s->n;
}

static void peer_refill(void *state)
{
    peer_empty(state);
    peer_insert(state);
}

static uint64_t peer_delete(void *state)
{
    pair_state *s = state;
    if (!s->peer)
        return 0;
    s->peer_remove_misses = s->v->peer->remove_all(s->peer, s->present.low, s->n);
    return s->n;
}

/* -- figures */

static void pair_report(void *state, bench_figures *out)
{
    pair_state *s = state;
    double n = (double)s->n;
    if (s->delete_ran) {
        own_refill(s);
        peer_refill(s);
    }
    if (!s->amq || !s->peer)
        return;
    bench_figures_add(out, "bits_per_key", s->v->amq->bytes(s->amq) * 8 / n);
    bench_figures_add(out, "peer_bits_per_key", (double)s->v->peer->bytes(s->peer) * 8 / n);
    if (s->delete_ran) {
        bench_figures_add(out, "remove_misses", (double)s->remove_misses);
        bench_figures_add(out, "peer_remove_misses", (double)s->peer_remove_misses);
        return;
    }
    bench_rate_figures(out, s->v->fpr, (double)s->absent_hits / n, n - (double)s->present_hits);
    bench_figures_add(out, "peer_fpr", (double)s->peer_absent_hits / n);
    bench_figures_add(out, "peer_false_negatives", n - (double)s->peer_present_hits);
    if (s->batch_ran)
        bench_figures_add(out, "hashed_batch_fpr", (double)s->batch_hits / n);
    if (s->keys_ran)
        bench_figures_add(out, "key_fpr", (double)s->key_hits / n);
    if (s->v->amq->create) {
        bench_figures_add(out, "insert_failures", (double)s->insert_failures);
        bench_figures_add(out, "peer_insert_failures", (double)s->peer_insert_failures);
    }
}

static const bench_phase pair_phases_dynamic[] = {
    { .name = "insert", .prepare = own_empty, .run = own_insert },
    { .name = "peer-insert", .prepare = peer_empty, .run = peer_insert },
    { .name = "present-hashed", .run = own_present },
    { .name = "peer-present", .run = peer_present },
    { .name = "query-hashed", .run = own_absent },
    { .name = "peer-absent", .run = peer_absent },
    { .name = "hashed-batch", .run = own_batch },
    { .name = "query-absent", .run = own_keys },
    { .name = "present-inline", .run = own_inline_present },
    { .name = "absent-inline", .run = own_inline_absent },
    { .name = NULL },
};

static const bench_phase pair_phases_static[] = {
    { .name = "build", .prepare = own_drop, .run = own_build },
    { .name = "peer-build", .prepare = peer_drop, .run = peer_build },
    { .name = "present-hashed", .run = own_present },
    { .name = "peer-present", .run = peer_present },
    { .name = "query-hashed", .run = own_absent },
    { .name = "peer-absent", .run = peer_absent },
    { .name = "hashed-batch", .run = own_batch },
    { .name = "query-absent", .run = own_keys },
    { .name = "present-inline", .run = own_inline_present },
    { .name = "absent-inline", .run = own_inline_absent },
    { .name = NULL },
};

static const bench_phase pair_phases_delete[] = {
    { .name = "delete", .prepare = own_refill, .run = own_delete },
    { .name = "peer-delete", .prepare = peer_refill, .run = peer_delete },
    { .name = NULL },
};

/* ---- the workloads ------------------------------------------------------------ */

static const uint32_t fuse_f8 = 8, fuse_f16 = 16;

static const pair_variant vs_split_block = { &side_split_block, NULL, &bench_peer_ff_split_block,
                                             BENCH_FILTER_FPR };
static const pair_variant vs_bloom10 = { &side_classic, NULL, &bench_peer_ff_bloom10,
                                         0.00819 /* 10 bits, k = 7 */ };
static const pair_variant vs_counting = { &side_counting, NULL, &bench_peer_ff_counting10,
                                          0.00819 };
static const pair_variant vs_ff_cuckoo = { &side_cuckoo12, NULL, &bench_peer_ff_cuckoo12,
                                           8.0 / 4095 };
static const pair_variant vs_efficient_cuckoo = { &side_cuckoo12, NULL,
                                                  &bench_peer_efficient_cuckoo12, 8.0 / 4095 };
static const pair_variant vs_gcs = { &side_gcs, NULL, &bench_peer_ff_gcs, 1.0 / 256 };
static const pair_variant vs_fuse8 = { &side_fuse, &fuse_f8, &bench_peer_xor_fuse8, 1.0 / 256 };
static const pair_variant vs_fuse16 = { &side_fuse, &fuse_f16, &bench_peer_xor_fuse16,
                                        1.0 / 65536 };

#define PAIR_WORKLOAD(NAME, VARIANT, PHASES, TEXT)                                                 \
    {                                                                                              \
        .name = NAME, .group = "vs", .description = TEXT, .arg = &VARIANT, .setup = pair_setup,    \
        .phases = PHASES, .report = pair_report, .teardown = pair_teardown, .alternate = true,     \
    }

const bench_workload bench_vs_ff_split_block =
    PAIR_WORKLOAD("vs/fastfilter-split-block", vs_split_block, pair_phases_dynamic,
                  "amq split-block (p = 0.01) beside fastfilter_cpp SimdBlockFilterFixed");
const bench_workload bench_vs_ff_bloom10 =
    PAIR_WORKLOAD("vs/fastfilter-bloom10", vs_bloom10, pair_phases_dynamic,
                  "amq classic (10 bits/key, k = 7) beside fastfilter_cpp Bloom10 (branchless)");
const bench_workload bench_vs_ff_counting =
    PAIR_WORKLOAD("vs/fastfilter-counting10", vs_counting, pair_phases_dynamic,
                  "amq counting (10 4-bit counters/key, k = 7) beside fastfilter_cpp "
                  "CountingBloom10");
const bench_workload bench_vs_ff_counting_delete =
    PAIR_WORKLOAD("vs/fastfilter-counting10-delete", vs_counting, pair_phases_delete,
                  "the same pair: remove every key, one by one");
const bench_workload bench_vs_ff_cuckoo12 =
    PAIR_WORKLOAD("vs/fastfilter-cuckoo12", vs_ff_cuckoo, pair_phases_dynamic,
                  "amq cuckoo (f = 12, b = 4) beside fastfilter_cpp Cuckoo12");
const bench_workload bench_vs_efficient_cuckoo12 =
    PAIR_WORKLOAD("vs/efficient-cuckoo12", vs_efficient_cuckoo, pair_phases_dynamic,
                  "amq cuckoo (f = 12, b = 4) beside efficient/cuckoofilter CuckooFilter<12>");
const bench_workload bench_vs_ff_gcs =
    PAIR_WORKLOAD("vs/fastfilter-gcs", vs_gcs, pair_phases_static,
                  "amq gcs (M = 256, the defaults: bucketed) beside fastfilter_cpp GCS");
const bench_workload bench_vs_xor_fuse8 =
    PAIR_WORKLOAD("vs/xor-binary-fuse8", vs_fuse8, pair_phases_static,
                  "amq fuse/8 beside xor_singleheader binary_fuse8");
const bench_workload bench_vs_xor_fuse16 =
    PAIR_WORKLOAD("vs/xor-binary-fuse16", vs_fuse16, pair_phases_static,
                  "amq fuse/16 beside xor_singleheader binary_fuse16");
