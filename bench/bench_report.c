/*
 * bench_report.c - how amq_bench shows its results: a table for people,
 * printed workload by workload as they finish, or one JSON document for
 * scripts and plots, printed at the end.
 *
 * Both start with what is needed to read the figures later: the CPU model
 * (the "model name" line of /proc/cpuinfo), the number of online CPUs, the
 * kernel, the compiler and whether the build was optimized or sanitized, the
 * amq version, the date (UTC), and n, R and the seed.
 *
 * The table, one row per phase:
 *
 *   workload       phase          ns/op    min      max    Mops/s  vs peer
 *   peer/libbloom  insert         81.20    79.95    90.11   12.32
 *                  query-present  ...
 *     bytes=1198133  bits_per_key=9.585  fpr=0.01003 ...
 *
 * ns/op is the median over the runs, min and max its spread, Mops/s is
 * 1000 / median, "vs peer" is the median divided by the peer's median for the
 * phase of the same name; a workload without a peer that names a baseline
 * phase of its own shows the ratio to it there instead, "0.55x vs insert".
 * A figure the peer also reports is followed by its ratio,
 * "bits_per_key=9.6 (1.00x)".
 *
 * The JSON document:
 *
 *   { "machine": { "cpu", "cpus", "kernel", "compiler", "optimized",
 *                  "sanitized", "amq_version", "date" },
 *     "config": { "keys", "runs", "seed", "filter" },
 *     "workloads": [ { "name", "group", "family", "peer", "baseline", "n",
 *                      "runs", "status", "error" (when status is not "ok"),
 *                      "phases": [ { "name", "ops", "median_ns_per_op",
 *                                    "min_ns_per_op", "max_ns_per_op",
 *                                    "mops_per_s", "ratio_to_peer",
 *                                    "ratio_to_baseline" } ],
 *                      "figures": { name: value },
 *                      "figure_ratios_to_peer": { name: ratio } } ] }
 *
 * "family" is the amq type a workload exercises ("cuckoo", "fuse8"), null
 * for the hashes and the peers; "baseline" the phase of its own a workload
 * compares its others with (bench_threads.c: "insert"), else null. Ratios
 * without a peer result or a baseline are null (phases) or left out
 * (figures).
 */
#include "bench.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define COMPILER __VERSION__
#elif defined(__GNUC__)
#define COMPILER "gcc " __VERSION__
#else
#define COMPILER "unknown"
#endif

#if defined(__OPTIMIZE__)
#define OPTIMIZED true
#else
#define OPTIMIZED false
#endif

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED true
#endif
#endif
#ifndef SANITIZED
#define SANITIZED false
#endif

typedef struct machine_info {
    char cpu[128];
    long cpus;
    char kernel[256];
    char date[32];
} machine_info;

static void read_machine_info(machine_info *m)
{
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (cpuinfo) {
        char line[512];
        while (fgets(line, sizeof line, cpuinfo)) {
            const char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon) {
                snprintf(m->cpu, sizeof m->cpu, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
                break;
            }
        }
        fclose(cpuinfo);
    }
    m->cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof m->kernel, "%.60s %.60s %.30s", u.sysname, u.release, u.machine);
    else
        snprintf(m->kernel, sizeof m->kernel, "unknown");
    time_t now = time(NULL);
    struct tm utc;
    if (!gmtime_r(&now, &utc) || !strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &utc))
        snprintf(m->date, sizeof m->date, "unknown");
}

/* Integers (sizes, counts) in full, everything else to 4 significant digits. */
static void print_figure_value(FILE *out, double value)
{
    if (value == floor(value) && fabs(value) < 1e15)
        fprintf(out, "%.0f", value);
    else
        fprintf(out, "%.4g", value);
}

/* ---- the table ---------------------------------------------------------------- */

#define NAME_WIDTH  16
#define PHASE_WIDTH 17

void bench_table_begin(const bench_run_info *info)
{
    machine_info m;
    read_machine_info(&m);
    printf("%s %s: n = %zu keys, %zu runs per phase after a warm-up, seed %llu%s%s\n",
           info->program, amq_version(), info->keys, info->runs, (unsigned long long)info->seed,
           info->filter ? ", filter " : "", info->filter ? info->filter : "");
    printf("%s (%ld CPUs), %s, %s, %s\n", m.cpu, m.cpus, m.kernel, COMPILER, m.date);
    if (!OPTIMIZED || SANITIZED)
        printf("warning: an unoptimized or sanitized build; these figures say little\n");
    printf("ns/op: median of the runs (min, max); vs peer: median / the peer's median\n\n");
    printf("%-*s %-*s %9s %9s %9s %9s %8s\n", NAME_WIDTH, "workload", PHASE_WIDTH, "phase", "ns/op",
           "min", "max", "Mops/s", "vs peer");
    fflush(stdout);
}

void bench_table_row(const bench_result *result)
{
    const char *name = result->workload->name;
    if (result->status != AMQ_OK) {
        printf("%-*s skipped: %s\n", NAME_WIDTH, name, result->message);
        fflush(stdout);
        return;
    }
    for (size_t p = 0; p < result->phase_count; p++) {
        const bench_phase_result *phase = &result->phases[p];
        printf("%-*s %-*s %9.2f %9.2f %9.2f %9.2f", NAME_WIDTH, p == 0 ? name : "", PHASE_WIDTH,
               phase->name, phase->median_ns, phase->min_ns, phase->max_ns,
               1000.0 / phase->median_ns);
        if (!isnan(phase->peer_ratio))
            printf(" %7.2fx", phase->peer_ratio);
        else if (!isnan(phase->baseline_ratio))
            printf(" %7.2fx vs %s", phase->baseline_ratio, result->workload->baseline);
        printf("\n");
    }
    if (result->figures.count > 0) {
        printf("   ");
        for (size_t f = 0; f < result->figures.count; f++) {
            printf(" %s=", result->figures.items[f].name);
            print_figure_value(stdout, result->figures.items[f].value);
            if (!isnan(result->figure_peer_ratios[f]))
                printf(" (%.2fx)", result->figure_peer_ratios[f]);
        }
        printf("\n");
    }
    fflush(stdout);
}

/* ---- JSON ---------------------------------------------------------------------- */

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* A finite number, or null (JSON has no NaN). */
static void json_number(double value)
{
    if (isfinite(value))
        printf("%.10g", value);
    else
        printf("null");
}

static void json_workload(const bench_result *r)
{
    printf("    {\"name\": ");
    json_string(r->workload->name);
    printf(", \"group\": ");
    json_string(r->workload->group);
    printf(", \"family\": ");
    if (r->workload->family)
        json_string(r->workload->family);
    else
        printf("null");
    printf(", \"peer\": ");
    if (r->workload->peer)
        json_string(r->workload->peer);
    else
        printf("null");
    printf(", \"baseline\": ");
    if (r->workload->baseline)
        json_string(r->workload->baseline);
    else
        printf("null");
    printf(", \"n\": %zu, \"runs\": %zu, \"status\": ", r->keys, r->runs);
    json_string(r->status == AMQ_OK ? "ok" : amq_strerror(r->status));
    if (r->status != AMQ_OK) {
        printf(", \"error\": ");
        json_string(r->message);
    }
    printf(",\n     \"phases\": [");
    for (size_t p = 0; p < r->phase_count; p++) {
        const bench_phase_result *phase = &r->phases[p];
        printf("%s\n       {\"name\": ", p ? "," : "");
        json_string(phase->name);
        printf(", \"ops\": %llu, \"median_ns_per_op\": %.3f, \"min_ns_per_op\": %.3f, "
               "\"max_ns_per_op\": %.3f, \"mops_per_s\": %.3f, \"ratio_to_peer\": ",
               (unsigned long long)phase->ops, phase->median_ns, phase->min_ns, phase->max_ns,
               1000.0 / phase->median_ns);
        json_number(phase->peer_ratio);
        printf(", \"ratio_to_baseline\": ");
        json_number(phase->baseline_ratio);
        printf("}");
    }
    printf("],\n     \"figures\": {");
    for (size_t f = 0; f < r->figures.count; f++) {
        printf("%s", f ? ", " : "");
        json_string(r->figures.items[f].name);
        printf(": ");
        json_number(r->figures.items[f].value);
    }
    printf("},\n     \"figure_ratios_to_peer\": {");
    bool first = true;
    for (size_t f = 0; f < r->figures.count; f++) {
        if (isnan(r->figure_peer_ratios[f]))
            continue;
        printf("%s", first ? "" : ", ");
        first = false;
        json_string(r->figures.items[f].name);
        printf(": ");
        json_number(r->figure_peer_ratios[f]);
    }
    printf("}}");
}

void bench_json_print(const bench_run_info *info, const bench_result *results, size_t count)
{
    machine_info m;
    read_machine_info(&m);
    printf("{\n  \"machine\": {\"cpu\": ");
    json_string(m.cpu);
    printf(", \"cpus\": %ld, \"kernel\": ", m.cpus);
    json_string(m.kernel);
    printf(", \"compiler\": ");
    json_string(COMPILER);
    printf(", \"optimized\": %s, \"sanitized\": %s, \"amq_version\": ",
           OPTIMIZED ? "true" : "false", SANITIZED ? "true" : "false");
    json_string(amq_version());
    printf(", \"date\": ");
    json_string(m.date);
    printf("},\n  \"config\": {\"keys\": %zu, \"runs\": %zu, \"seed\": %llu, \"filter\": ",
           info->keys, info->runs, (unsigned long long)info->seed);
    if (info->filter)
        json_string(info->filter);
    else
        printf("null");
    printf("},\n  \"workloads\": [\n");
    for (size_t i = 0; i < count; i++) {
        json_workload(&results[i]);
        printf("%s\n", i + 1 < count ? "," : "");
    }
    printf("  ]\n}\n");
}
