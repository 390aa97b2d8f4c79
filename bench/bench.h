/*
 * bench.h - what the benchmark runner (amq_bench, and `amq bench` in the
 * amq tool) shares with its workloads.
 *
 * A workload is one thing worth timing - a hash function, a filter family, a
 * peer library - described by a bench_workload: a name ("hash/xxh3-64",
 * "peer/libbloom"), a group, optionally the name of the peer workload it is
 * compared with, and four functions:
 *
 *   setup     given the key count and the seed, build everything the passes
 *             need (keys, an empty filter); not timed.
 *   phases    up to BENCH_MAX_PHASES named timed passes ("insert",
 *             "query-present", ...), run in order. Each phase runs once to
 *             warm up, then --runs times; an optional prepare function runs
 *             untimed before every pass (an insert phase empties its filter
 *             there). A pass returns the number of operations it did; a
 *             phase that does none (nothing to do for this workload) is
 *             left out of the result.
 *   report    after all phases: extra figures (bits/key, measured FPR, size).
 *   teardown  free the state.
 *
 * Adding a workload is one file defining a `const bench_workload`, its
 * declaration below and one line in the table in bench_run.c (a peer: in
 * bench_main.c instead; see bench/README.md).
 *
 * Keys come from bench_keys.c: n distinct keys, stored back to back in one
 * buffer with an offset array, and an "absent" set of the same shape that is
 * guaranteed disjoint from the "present" one, for measuring false positives.
 */
#ifndef AMQ_BENCH_H
#define AMQ_BENCH_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- keys ------------------------------------------------------------------ */

/* n keys stored contiguously: key i is bytes[offsets[i] .. offsets[i + 1]). */
typedef struct bench_keyset {
    uint8_t *bytes;
    size_t *offsets; /* count + 1 entries */
    size_t count;
} bench_keyset;

/* Which of two disjoint sets a generator produces: the keys put into a filter
 * and the keys that are certainly not in it. */
typedef enum bench_key_role { BENCH_KEYS_PRESENT = 0, BENCH_KEYS_ABSENT = 1 } bench_key_role;

/* The shortest binary key bench_keys_binary accepts: its first 8 bytes are
 * what makes keys distinct. */
#define BENCH_MIN_BINARY_KEY 8

/* Fill *out with count distinct random-looking keys of len bytes each
 * (len >= BENCH_MIN_BINARY_KEY). The same seed and role give the same keys;
 * the two roles of one seed never share a key.
 * Returns AMQ_OK, AMQ_EINVAL (len too short), AMQ_ERANGE or AMQ_ENOMEM. */
int bench_keys_binary(bench_keyset *out, size_t count, size_t len, uint64_t seed,
                      bench_key_role role);

/* Fill *out with count distinct URL-like text keys of varying length,
 * "https://host<number>.example/<path>" with one to three random path
 * segments. Same guarantees as bench_keys_binary. */
int bench_keys_urls(bench_keyset *out, size_t count, uint64_t seed, bench_key_role role);

/* Free a key set's storage and zero it; accepts a zeroed set. */
void bench_keyset_free(bench_keyset *keys);

static inline const uint8_t *bench_key(const bench_keyset *keys, size_t i)
{
    return keys->bytes + keys->offsets[i];
}

/* The next value of the splitmix64 stream at *state (the generator behind
 * the key sets, for workloads that need random values of their own). */
uint64_t bench_splitmix64(uint64_t *state);

static inline size_t bench_key_len(const bench_keyset *keys, size_t i)
{
    return keys->offsets[i + 1] - keys->offsets[i];
}

/* ---- workloads -------------------------------------------------------------- */

/* What every workload of one run is given. */
typedef struct bench_config {
    size_t keys;   /* n: keys to insert or hash per pass (--keys) */
    uint64_t seed; /* seed for key generation and hash seeds (--seed) */
} bench_config;

#define BENCH_MAX_FIGURES 16

/* One extra figure a workload reports, e.g. { "bits_per_key", 9.585 }. Names
 * are snake_case identifiers (they become JSON keys); a workload and its peer
 * that report the same name get the ratio between the two printed. */
typedef struct bench_figure {
    const char *name; /* a static string */
    double value;
} bench_figure;

typedef struct bench_figures {
    bench_figure items[BENCH_MAX_FIGURES];
    size_t count;
} bench_figures;

/* Append a figure; figures past BENCH_MAX_FIGURES are a programming error. */
void bench_figures_add(bench_figures *figures, const char *name, double value);

#define BENCH_MAX_PHASES 10

/* One timed pass of a workload. */
typedef struct bench_phase {
    const char *name;             /* "insert", "query-absent", "16B"; NULL ends the list */
    void (*prepare)(void *state); /* untimed, before each pass; may be NULL */
    uint64_t (*run)(void *state); /* one pass; returns the operations done (> 0) */
} bench_phase;

typedef struct bench_workload {
    const char *name;        /* "<group>/<what>", unique, e.g. "peer/libbloom" */
    const char *group;       /* "hash", "peer", "bloom", ... */
    const char *peer;        /* name of the workload to compare with, or NULL */
    const char *description; /* one line for --list */
    const void *arg;         /* passed to setup: lets one file define variants */
    /* Build the state for n = config->keys keys. Returns AMQ_OK or a status
     * code, with a message in *diag (never NULL) when there is more to say
     * than the code; on failure *state is not used and teardown is not
     * called. */
    int (*setup)(void **state, const bench_config *config, const void *arg, amq_diag *diag);
    /* The timed passes, in the order they run, ended by one with a NULL
     * name; at most BENCH_MAX_PHASES. */
    const bench_phase *phases;
    /* Extra figures, after every phase has run; may be NULL. */
    void (*report)(void *state, bench_figures *out);
    void (*teardown)(void *state);
    /* The amq filter type it exercises, as `amq --help` names it
     * ("counting-bloom", "fuse8"), or NULL (hashes, peers). */
    const char *family;
    /* Time the phases' runs alternating: after every phase's warm-up, round
     * r runs each phase once, in order, so that a busy moment of the
     * machine falls on all of them alike (contenders compared with each
     * other, bench_threads.c). false: each phase's runs one after the
     * other. */
    bool alternate;
    /* The name of one of its phases the others are compared with, as a
     * peer's would be (each phase gets median / that phase's median), or
     * NULL. */
    const char *baseline;
} bench_workload;

/* The workloads, defined one per file and listed in bench_run.c (the peers
 * in bench_main.c). */
extern const bench_workload bench_hash_xxh3_64;
extern const bench_workload bench_hash_xxh3_128;
extern const bench_workload bench_hash_siphash;
extern const bench_workload bench_hash_md5;
extern const bench_workload bench_libbloom;
extern const bench_workload bench_bloom_classic;
extern const bench_workload bench_bloom_split_block;
extern const bench_workload bench_bloom_blocked;
extern const bench_workload bench_bloom_counting;
extern const bench_workload bench_bloom_scalable;
extern const bench_workload bench_cuckoo_f8;
extern const bench_workload bench_cuckoo_f12;
extern const bench_workload bench_cuckoo_f16;
extern const bench_workload bench_cuckoo_f12_semi;
extern const bench_workload bench_hfb_p1;
extern const bench_workload bench_hfb_p01;
extern const bench_workload bench_hfb_p1_bank22;
extern const bench_workload bench_fuse8;
extern const bench_workload bench_fuse16;
extern const bench_workload bench_fuse8_4wise;
extern const bench_workload bench_gcs_m256_s0;
extern const bench_workload bench_gcs_m256_s32;
extern const bench_workload bench_gcs_m256_n64;
extern const bench_workload bench_gcs_m256_n16;
extern const bench_workload bench_gcs_m256_b16;
extern const bench_workload bench_gcs_m256_b24;
extern const bench_workload bench_gcs_m256_b32;
extern const bench_workload bench_gcs_m256;
extern const bench_workload bench_gcs_m65536_s0;
extern const bench_workload bench_gcs_m65536_s32;
extern const bench_workload bench_gcs_m65536_n64;
extern const bench_workload bench_gcs_m65536_n16;
extern const bench_workload bench_gcs_m65536;
extern const bench_workload bench_floor_cache_line;
extern const bench_workload bench_floor_three_bytes;
extern const bench_workload bench_floor_seven_bits;
extern const bench_workload bench_floor_cache_line_key;
extern const bench_workload bench_floor_seven_bits_key;
extern const bench_workload bench_floor_probe_seven_key;
extern const bench_workload bench_threads_classic;
extern const bench_workload bench_threads_split_block;
extern const bench_workload bench_threads_blocked;

/* ---- results (the runner's) -------------------------------------------------- */

typedef struct bench_phase_result {
    const char *name;
    uint64_t ops;          /* operations per pass */
    double median_ns;      /* ns per operation: median over the runs */
    double min_ns, max_ns; /* ... fastest and slowest run */
    double peer_ratio;     /* median_ns / the peer's same-named phase; NAN if none */
    double baseline_ratio; /* median_ns / the workload's baseline phase's; NAN if none */
} bench_phase_result;

typedef struct bench_result {
    const bench_workload *workload;
    int status;                         /* AMQ_OK, or why setup failed ... */
    char message[AMQ_DIAG_MESSAGE_MAX]; /* ... in words */
    size_t keys, runs;                  /* n and R */
    bench_phase_result phases[BENCH_MAX_PHASES];
    size_t phase_count;
    bench_figures figures;
    double figure_peer_ratios[BENCH_MAX_FIGURES]; /* NAN where the peer has no such figure */
} bench_result;

/* What the reports print about the run. */
typedef struct bench_run_info {
    const char *program; /* "amq_bench", "amq bench" */
    size_t keys, runs;
    uint64_t seed;
    const char *filter; /* NULL when every workload ran */
} bench_run_info;

/* bench_report.c: the human-readable table, printed as results arrive, and
 * the one JSON document printed at the end. */
void bench_table_begin(const bench_run_info *info);
void bench_table_row(const bench_result *result);
void bench_json_print(const bench_run_info *info, const bench_result *results, size_t count);

/* ---- the runner (bench_run.c) --------------------------------------------------- */

/* Run the benchmark command line: parse argv (argv[0] is the command's own
 * name and is skipped; see bench_run.c and bench/README.md for the
 * options), run the selected workloads - peers[0..peer_count), then amq's
 * own - and print the table or the JSON document. program names the
 * command in its usage and messages ("amq_bench", "amq bench").
 * Returns the exit status: 0 every selected workload ran, 1 one could not be
 * set up, 2 a bad command line. */
int bench_main(int argc, char **argv, const char *program, const bench_workload *const *peers,
               size_t peer_count);

#endif /* AMQ_BENCH_H */
