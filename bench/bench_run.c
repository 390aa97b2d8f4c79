/*
 * bench_run.c - amq_bench's runner (which `amq bench` runs): amq's
 * workloads, the command line, the selection and the timing loop.
 * bench_main.c adds the peer libraries.
 *
 * For each selected workload (see bench.h for what a workload is), peers
 * first and otherwise in the order of the table below:
 *
 *   setup(n, seed)                                  not timed
 *   for each phase:
 *       prepare; run                                warm-up, not recorded
 *       R times: prepare; t0; ops = run; t1         ns/op = (t1 - t0) / ops
 *       record the median, minimum and maximum ns/op of the R runs
 *   report (extra figures); teardown
 *
 * A workload that asks for it (bench_workload.alternate: contenders timed
 * against each other) has its phases' runs alternate instead: every
 * phase's warm-up, then R rounds of one run of each phase in order.
 *
 * Time is CLOCK_MONOTONIC around the run call only. Nothing is pinned: the
 * figures are meant for a shared, noisy machine, where the median of R runs
 * is far steadier than the mean or the minimum alone; min and max show the
 * spread.
 *
 * A workload that names a peer (a Bloom filter naming "peer/libbloom") gets
 * the peer run first, even when --filter did not select it, and each of its
 * phases gets the ratio of its median to the peer's phase of the same name:
 * below 1 is faster than the peer. Figures reported under the same name by
 * both get the same ratio. A peer the build does not have (libbloom not
 * installed) leaves the ratios out.
 *
 * A workload that names a baseline phase of its own (bench_threads.c:
 * insert) gets each phase's ratio to it, within the invocation, as it
 * would to a peer's.
 *
 * Exit status: 0 when every selected workload ran, 1 when one could not be
 * set up (it is reported and the others still run), 2 for a bad command line.
 */
#include "bench.h"
#include "core/util.h"

#include <assert.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* amq's own workloads: every filter family and the key hashes. */
/* clang-format off */
static const bench_workload *const own_workloads[] = {
    &bench_bloom_classic,
    &bench_bloom_split_block,
    &bench_bloom_blocked,
    &bench_bloom_counting,
    &bench_bloom_scalable,
    &bench_cuckoo_f8,
    &bench_cuckoo_f12,
    &bench_cuckoo_f16,
    &bench_cuckoo_f12_semi,
    &bench_hfb_p1,
    &bench_hfb_p01,
    &bench_hfb_p1_bank22,
    &bench_fuse8,
    &bench_fuse16,
    &bench_fuse8_4wise,
    &bench_gcs_m256_s0,
    &bench_gcs_m256_s32,
    &bench_gcs_m256_n64,
    &bench_gcs_m256_n16,
    &bench_gcs_m256_b16,
    &bench_gcs_m256_b24,
    &bench_gcs_m256_b32,
    &bench_gcs_m256,
    &bench_gcs_m65536_s0,
    &bench_gcs_m65536_s32,
    &bench_gcs_m65536_n64,
    &bench_gcs_m65536_n16,
    &bench_gcs_m65536,
    &bench_floor_cache_line,
    &bench_floor_three_bytes,
    &bench_floor_seven_bits,
    &bench_floor_cache_line_key,
    &bench_floor_seven_bits_key,
    &bench_floor_probe_seven_key,
    &bench_threads_classic,
    &bench_threads_split_block,
    &bench_threads_blocked,
    &bench_hash_xxh3_64,
    &bench_hash_xxh3_128,
    &bench_hash_siphash,
    &bench_hash_md5,
};
/* clang-format on */

#define OWN_COUNT     (sizeof own_workloads / sizeof own_workloads[0])
#define MAX_WORKLOADS 64 /* own and peers */

#define DEFAULT_KEYS 1000000
#define DEFAULT_RUNS 5
#define DEFAULT_SEED 0x5eed
#define MAX_KEYS     10000000000ULL
#define MAX_RUNS     1000

typedef struct options {
    bench_config config;
    size_t runs;
    const char *filter;
    bool list, json;
} options;

void bench_figures_add(bench_figures *figures, const char *name, double value)
{
    assert(figures->count < BENCH_MAX_FIGURES);
    figures->items[figures->count].name = name;
    figures->items[figures->count].value = value;
    figures->count++;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One untimed prepare and one timed pass of a phase: its operations (0:
 * none), and in *sample the ns per operation. */
static uint64_t time_pass(const bench_phase *phase, void *state, double *sample)
{
    if (phase->prepare)
        phase->prepare(state);
    uint64_t start = now_ns();
    uint64_t ops = phase->run(state);
    uint64_t elapsed = now_ns() - start;
    if (ops > 0)
        *sample = (double)elapsed / (double)ops;
    return ops;
}

/* The median, minimum and maximum of a phase's runs samples (sorted here)
 * into *out. */
static void summarize(const bench_phase *phase, uint64_t ops, double *samples, size_t runs,
                      bench_phase_result *out)
{
    qsort(samples, runs, sizeof *samples, compare_doubles);
    out->name = phase->name;
    out->ops = ops;
    out->min_ns = samples[0];
    out->max_ns = samples[runs - 1];
    out->median_ns = runs % 2 ? samples[runs / 2] : (samples[runs / 2 - 1] + samples[runs / 2]) / 2;
    out->peer_ratio = NAN;
    out->baseline_ratio = NAN;
}

/* Warm up, then time `runs` passes of one phase into *out. samples has room
 * for runs values. Returns false when the phase did no operations. */
static bool time_phase(const bench_phase *phase, void *state, size_t runs, double *samples,
                       bench_phase_result *out)
{
    double warm_up;
    uint64_t ops = time_pass(phase, state, &warm_up);
    for (size_t r = 0; r < runs && ops > 0; r++)
        ops = time_pass(phase, state, &samples[r]);
    if (ops == 0)
        return false;
    summarize(phase, ops, samples, runs, out);
    return true;
}

/* Time a workload's phases alternating (bench_workload.alternate): each
 * phase's warm-up in order, then `runs` rounds of one pass of each phase in
 * order. samples has room for runs values per phase. A phase that did no
 * operations in a pass is left out from then on. Returns the phases timed
 * into out (in order). */
static size_t time_alternating(const bench_phase *phases, void *state, size_t runs, double *samples,
                               bench_phase_result *out)
{
    size_t count = 0;
    uint64_t ops[BENCH_MAX_PHASES];
    while (phases[count].name) {
        assert(count < BENCH_MAX_PHASES);
        count++;
    }
    for (size_t p = 0; p < count; p++) {
        double warm_up;
        ops[p] = time_pass(&phases[p], state, &warm_up);
    }
    for (size_t r = 0; r < runs; r++)
        for (size_t p = 0; p < count; p++)
            if (ops[p] > 0)
                ops[p] = time_pass(&phases[p], state, &samples[p * runs + r]);
    size_t timed = 0;
    for (size_t p = 0; p < count; p++)
        if (ops[p] > 0)
            summarize(&phases[p], ops[p], samples + p * runs, runs, &out[timed++]);
    return timed;
}

/* Each phase's ratio to the workload's baseline phase, when it names one
 * that ran. */
static void compare_with_baseline(bench_result *result)
{
    const char *baseline = result->workload->baseline;
    const bench_phase_result *base = NULL;
    for (size_t p = 0; baseline && p < result->phase_count; p++)
        if (strcmp(result->phases[p].name, baseline) == 0)
            base = &result->phases[p];
    for (size_t p = 0; base && p < result->phase_count; p++)
        result->phases[p].baseline_ratio = result->phases[p].median_ns / base->median_ns;
}

/* Fill the ratios of result to its peer's result (NULL: none ran). */
static void compare_with_peer(bench_result *result, const bench_result *peer)
{
    for (size_t f = 0; f < result->figures.count; f++)
        result->figure_peer_ratios[f] = NAN;
    if (!peer || peer->status != AMQ_OK)
        return;
    for (size_t p = 0; p < result->phase_count; p++)
        for (size_t q = 0; q < peer->phase_count; q++)
            if (strcmp(result->phases[p].name, peer->phases[q].name) == 0)
                result->phases[p].peer_ratio =
                    result->phases[p].median_ns / peer->phases[q].median_ns;
    for (size_t f = 0; f < result->figures.count; f++)
        for (size_t g = 0; g < peer->figures.count; g++)
            if (strcmp(result->figures.items[f].name, peer->figures.items[g].name) == 0)
                result->figure_peer_ratios[f] =
                    result->figures.items[f].value / peer->figures.items[g].value;
}

static void run_workload(const bench_workload *workload, const options *opts,
                         const bench_result *peer, bench_result *result)
{
    memset(result, 0, sizeof *result);
    result->workload = workload;
    result->keys = opts->config.keys;
    result->runs = opts->runs;

    void *state = NULL;
    amq_diag diag = { .message = "" };
    result->status = workload->setup(&state, &opts->config, workload->arg, &diag);
    if (result->status != AMQ_OK) {
        snprintf(result->message, sizeof result->message, "%s",
                 diag.message[0] ? diag.message : amq_strerror(result->status));
        return;
    }
    double *samples = malloc(BENCH_MAX_PHASES * opts->runs * sizeof *samples);
    if (!samples) {
        result->status = AMQ_ENOMEM;
        snprintf(result->message, sizeof result->message, "%s", amq_strerror(AMQ_ENOMEM));
        workload->teardown(state);
        return;
    }
    if (workload->alternate)
        result->phase_count =
            time_alternating(workload->phases, state, opts->runs, samples, result->phases);
    for (const bench_phase *phase = workload->phases; !workload->alternate && phase->name;
         phase++) {
        assert(result->phase_count < BENCH_MAX_PHASES);
        bench_phase_result *out = &result->phases[result->phase_count];
        /* A phase with nothing to do for this workload (query-hashed of a
         * family without a pre-hashed query) is left out of the result. */
        if (time_phase(phase, state, opts->runs, samples, out))
            result->phase_count++;
    }
    free(samples);
    compare_with_baseline(result);
    if (result->phase_count == 0) {
        result->status = AMQ_EINVAL;
        snprintf(result->message, sizeof result->message, "no phase did any operations");
    }
    if (result->status == AMQ_OK && workload->report)
        workload->report(state, &result->figures);
    workload->teardown(state);
    compare_with_peer(result, peer);
}

/* The workloads one program runs: its peers, then amq's own. */
typedef struct registry {
    const bench_workload *items[MAX_WORKLOADS];
    size_t count;
} registry;

/* The index of the workload called name, or r->count. */
static size_t find_workload(const registry *r, const char *name)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->items[i]->name, name) == 0)
            return i;
    return r->count;
}

/* Whether workload i is the peer of a selected workload. */
static bool is_selected_peer(const registry *r, size_t i, const bool *selected)
{
    for (size_t j = 0; j < r->count; j++)
        if (selected[j] && r->items[j]->peer && strcmp(r->items[j]->peer, r->items[i]->name) == 0)
            return true;
    return false;
}

/* Whether name contains the first len bytes of part. */
static bool contains_part(const char *name, const char *part, size_t len)
{
    for (const char *at = name;; at++) {
        if (strncmp(at, part, len) == 0)
            return true;
        if (*at == '\0')
            return false;
    }
}

/* Whether name contains one of filter's comma-separated parts. */
static bool matches_filter(const char *name, const char *filter)
{
    for (const char *part = filter;; part++) {
        size_t len = strcspn(part, ",");
        if (contains_part(name, part, len))
            return true;
        part += len;
        if (*part == '\0')
            return false;
    }
}

static void usage(FILE *out, const char *program, bool has_peers)
{
    fprintf(out,
            "Usage: %s [--filter PATTERN] [--keys N] [--runs R] [--seed S] [--json] [--list]\n"
            "Time amq's standard workloads%s: every filter type's insert and query\n"
            "passes and the key hashes. Print a table, or JSON with --json.\n"
            "\n"
            "  --keys N           keys per pass (default %d; 1e7 is accepted)\n"
            "  --runs R           timed runs per phase, after one warm-up (default %d);\n"
            "                     the median, minimum and maximum are reported\n"
            "  --seed S           seed for the keys and hash seeds (default %d)\n"
            "  --filter PATTERN   run only the workloads whose name contains PATTERN\n"
            "                     (and the peers they are compared with); PATTERN,PATTERN...\n"
            "                     selects the workloads that match any of them\n"
            "  --list             list the workloads and exit\n"
            "  --json             print one JSON document instead of the table\n"
            "  --help             print this help and exit\n"
            "Exit status: 0 every workload ran, 1 one could not be set up, 2 a bad\n"
            "command line.\n",
            program, has_peers ? " beside their peers" : "", DEFAULT_KEYS, DEFAULT_RUNS,
            DEFAULT_SEED);
}

static int bad_usage(const char *program, const char *format, ...) AMQ__PRINTF(2, 3);

/* Complain about the command line on stderr; returns the exit code 2. */
static int bad_usage(const char *program, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s: ", program);
    vfprintf(stderr, format, args);
    fprintf(stderr, "\nTry '%s --help'.\n", program);
    va_end(args);
    return 2;
}

/* Parse the command line into *opts. Returns -1 to go on, else the exit code. */
static int parse_options(options *opts, int argc, char **argv, const char *program, bool has_peers)
{
    enum { OPT_KEYS = 256, OPT_RUNS, OPT_SEED, OPT_FILTER, OPT_LIST, OPT_JSON, OPT_HELP };
    static const struct option longopts[] = {
        { "keys", required_argument, NULL, OPT_KEYS },
        { "runs", required_argument, NULL, OPT_RUNS },
        { "seed", required_argument, NULL, OPT_SEED },
        { "filter", required_argument, NULL, OPT_FILTER },
        { "list", no_argument, NULL, OPT_LIST },
        { "json", no_argument, NULL, OPT_JSON },
        { "help", no_argument, NULL, OPT_HELP },
        { NULL, 0, NULL, 0 },
    };
    memset(opts, 0, sizeof *opts);
    opts->config.keys = DEFAULT_KEYS;
    opts->config.seed = DEFAULT_SEED;
    opts->runs = DEFAULT_RUNS;

    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        uint64_t value;
        amq_diag diag;
        switch (c) {
        case OPT_KEYS:
            if (amq_parse_count(&value, optarg, 1, MAX_KEYS, &diag) != AMQ_OK)
                return bad_usage(program, "--keys: %s", diag.message);
            opts->config.keys = (size_t)value;
            break;
        case OPT_RUNS:
            if (amq_parse_count(&value, optarg, 1, MAX_RUNS, &diag) != AMQ_OK)
                return bad_usage(program, "--runs: %s", diag.message);
            opts->runs = (size_t)value;
            break;
        case OPT_SEED:
            if (amq_parse_count(&value, optarg, 0, UINT64_MAX, &diag) != AMQ_OK)
                return bad_usage(program, "--seed: %s", diag.message);
            opts->config.seed = value;
            break;
        case OPT_FILTER:
            opts->filter = optarg;
            break;
        case OPT_LIST:
            opts->list = true;
            break;
        case OPT_JSON:
            opts->json = true;
            break;
        case 'h':
        case OPT_HELP:
            usage(stdout, program, has_peers);
            return 0;
        case ':':
            return bad_usage(program, "option '%s' needs a value", argv[optind - 1]);
        default:
            /* Only -h is short: another letter is one the user typed, in
             * optopt (argv[optind - 1] may be the word before a bundle). */
            if (optopt > 0 && optopt < 256)
                return bad_usage(program, "unknown option '-%c'", optopt);
            return bad_usage(program,
                             optopt ? "option '%.*s' takes no value" : "unknown option '%.*s'",
                             (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
        }
    }
    if (optind < argc)
        return bad_usage(program, "unexpected argument '%s'", argv[optind]);
    return -1;
}

static void list_workloads(const registry *r)
{
    for (size_t i = 0; i < r->count; i++) {
        const bench_workload *w = r->items[i];
        printf("%-22s %-14s %s%s%s\n", w->name, w->family ? w->family : w->group, w->description,
               w->peer ? "; compared with " : "", w->peer ? w->peer : "");
    }
}

int bench_main(int argc, char **argv, const char *program, const bench_workload *const *peers,
               size_t peer_count)
{
    assert(peer_count + OWN_COUNT <= MAX_WORKLOADS);
    registry r = { .count = 0 };
    for (size_t i = 0; i < peer_count; i++)
        r.items[r.count++] = peers[i];
    for (size_t i = 0; i < OWN_COUNT; i++)
        r.items[r.count++] = own_workloads[i];

    options opts;
    int code = parse_options(&opts, argc, argv, program, peer_count > 0);
    if (code >= 0)
        return code;
    if (opts.list) {
        list_workloads(&r);
        return 0;
    }

    /* Select by --filter, then add the peers of the selected. */
    bool selected[MAX_WORKLOADS];
    bool any = false;
    for (size_t i = 0; i < r.count; i++) {
        selected[i] = !opts.filter || matches_filter(r.items[i]->name, opts.filter);
        any |= selected[i];
    }
    if (!any)
        return bad_usage(program, "no workload matches '%s' (see --list)", opts.filter);
    for (size_t i = 0; i < r.count; i++) {
        size_t peer = r.items[i]->peer ? find_workload(&r, r.items[i]->peer) : r.count;
        if (selected[i] && peer < r.count)
            selected[peer] = true;
    }

    bench_run_info info = { program, opts.config.keys, opts.runs, opts.config.seed, opts.filter };
    if (!opts.json)
        bench_table_begin(&info);
    bool show_progress = opts.json && isatty(STDERR_FILENO);

    /* Peers run first, so that the workloads compared with them find their
     * results. */
    size_t order[MAX_WORKLOADS], order_count = 0;
    for (int peers_pass = 1; peers_pass >= 0; peers_pass--)
        for (size_t i = 0; i < r.count; i++)
            if (selected[i] && is_selected_peer(&r, i, selected) == (bool)peers_pass)
                order[order_count++] = i;

    static bench_result results[MAX_WORKLOADS];
    size_t result_of[MAX_WORKLOADS]; /* index in results, or r.count: not run */
    size_t done = 0;
    int status = 0;
    for (size_t i = 0; i < r.count; i++)
        result_of[i] = r.count;
    for (size_t o = 0; o < order_count; o++) {
        size_t i = order[o];
        size_t peer = r.items[i]->peer ? find_workload(&r, r.items[i]->peer) : r.count;
        const bench_result *peer_result =
            peer < r.count && result_of[peer] < done ? &results[result_of[peer]] : NULL;
        if (show_progress)
            fprintf(stderr, "%s: %s\n", program, r.items[i]->name);
        run_workload(r.items[i], &opts, peer_result, &results[done]);
        if (results[done].status != AMQ_OK)
            status = 1;
        if (!opts.json)
            bench_table_row(&results[done]);
        result_of[i] = done++;
    }
    if (opts.json)
        bench_json_print(&info, results, done);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write to standard output\n", program);
        return 2;
    }
    return status;
}
