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
 * peer/libbloom builds a filter for n entries at p = 0.01 and runs three
 * phases over 16-byte keys (bench_keys.c): insert the n present keys (the
 * filter is emptied with bloom_reset before each pass, untimed), query those
 * n keys, query n absent keys, which share no key with the present set, so
 * every hit among them is a false positive. It reports
 *
 *     bytes, bits_per_key = bytes * 8 / n, hashes,
 *     target_fpr = p, fpr = hits on the absent keys / n,
 *     bound_bits_per_key = log2(1/p), the fewest bits per key any filter
 *         with false-positive rate p can use (Carter et al., 1978);
 *         a Bloom filter needs 1.44 times that,
 *     false_negatives, present keys reported absent (0, or libbloom is broken).
 *
 * Bloom workloads name "peer/libbloom" as their peer and use the same n, p,
 * key length, seed and phase names, so the report prints their ratios to it.
 * libbloom takes the entry count as an int, needs at least 1000 entries and
 * computes its bit count in an int, so n is limited to [1000, 2^31 / 10].
 */
#ifdef AMQ_BENCH_HAVE_LIBBLOOM

#include "bench.h"
#include "util.h"

#include <bloom.h>
#include <math.h>
#include <stdlib.h>

#define LIBBLOOM_FPR         0.01
#define LIBBLOOM_KEY_LEN     16
#define LIBBLOOM_MIN_ENTRIES 1000
#define LIBBLOOM_MAX_ENTRIES (INT32_MAX / 10)

typedef struct libbloom_state {
    struct bloom filter;
    bench_keyset present, absent;
    uint64_t present_hits, absent_hits;
} libbloom_state;

static void libbloom_teardown(void *state)
{
    libbloom_state *s = state;
    bloom_free(&s->filter);
    bench_keyset_free(&s->present);
    bench_keyset_free(&s->absent);
    free(s);
}

static int libbloom_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    (void)arg;
    if (config->keys < LIBBLOOM_MIN_ENTRIES || config->keys > LIBBLOOM_MAX_ENTRIES)
        return amq__fail(diag, AMQ_ERANGE, "libbloom takes %d to %d entries, not %zu",
                         LIBBLOOM_MIN_ENTRIES, LIBBLOOM_MAX_ENTRIES, config->keys);
    libbloom_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    if (bloom_init(&s->filter, (int)config->keys, LIBBLOOM_FPR) != 0) {
        free(s);
        return amq__fail(diag, AMQ_ENOMEM, "bloom_init(%zu, %g) failed", config->keys,
                         LIBBLOOM_FPR);
    }
    int status = bench_keys_binary(&s->present, config->keys, LIBBLOOM_KEY_LEN, config->seed,
                                   BENCH_KEYS_PRESENT);
    if (status == AMQ_OK)
        status = bench_keys_binary(&s->absent, config->keys, LIBBLOOM_KEY_LEN, config->seed,
                                   BENCH_KEYS_ABSENT);
    if (status != AMQ_OK) {
        libbloom_teardown(s);
        return amq__fail(diag, status, "generating %zu keys: %s", config->keys,
                         amq_strerror(status));
    }
    *state = s;
    return AMQ_OK;
}

static void libbloom_empty(void *state)
{
    libbloom_state *s = state;
    bloom_reset(&s->filter);
}

static uint64_t libbloom_insert(void *state)
{
    libbloom_state *s = state;
    for (size_t i = 0; i < s->present.count; i++)
        bloom_add(&s->filter, bench_key(&s->present, i), (int)bench_key_len(&s->present, i));
    return s->present.count;
}

static uint64_t count_hits(libbloom_state *s, const bench_keyset *keys)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < keys->count; i++)
        hits += bloom_check(&s->filter, bench_key(keys, i), (int)bench_key_len(keys, i)) == 1;
    return hits;
}

static uint64_t libbloom_query_present(void *state)
{
    libbloom_state *s = state;
    s->present_hits = count_hits(s, &s->present);
    return s->present.count;
}

static uint64_t libbloom_query_absent(void *state)
{
    libbloom_state *s = state;
    s->absent_hits = count_hits(s, &s->absent);
    return s->absent.count;
}

static void libbloom_report(void *state, bench_figures *out)
{
    libbloom_state *s = state;
    double n = (double)s->present.count;
    bench_figures_add(out, "bytes", s->filter.bytes);
    bench_figures_add(out, "bits_per_key", s->filter.bytes * 8.0 / n);
    bench_figures_add(out, "bound_bits_per_key", -log2(LIBBLOOM_FPR));
    bench_figures_add(out, "hashes", s->filter.hashes);
    bench_figures_add(out, "target_fpr", LIBBLOOM_FPR);
    bench_figures_add(out, "fpr", (double)s->absent_hits / n);
    bench_figures_add(out, "false_negatives", n - (double)s->present_hits);
}

static const bench_phase libbloom_phases[] = {
    { .name = "insert", .prepare = libbloom_empty, .run = libbloom_insert },
    { .name = "query-present", .run = libbloom_query_present },
    { .name = "query-absent", .run = libbloom_query_absent },
    { .name = NULL },
};

const bench_workload bench_libbloom = {
    .name = "peer/libbloom",
    .group = "peer",
    .description = "jvirkki/libbloom 1.6 (Debian libbloom-dev), p = 0.01, 16-byte keys",
    .setup = libbloom_setup,
    .phases = libbloom_phases,
    .report = libbloom_report,
    .teardown = libbloom_teardown,
};

#endif /* AMQ_BENCH_HAVE_LIBBLOOM */
