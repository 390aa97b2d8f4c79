/*
 * bench_frontier.c - the crawl frontier at scale: N URL pushes (10^8 by
 * default), a quarter of them repeats, through a frontier whose queue may
 * hold 256 MiB in memory; then one checkpoint; then every queued URL
 * popped back. Not a workload of amq_bench: it is one long run, measured
 * once.
 *
 *   amq_bench_frontier [--urls N] [--memory BYTES] [--fpr P] [--repeats F]
 *                      [--seed S] [--dir DIR]
 *
 * Push i is, with probability F (0.25), a repeat of a URL pushed before
 * (uniform among them), else the next new URL, "https://host<k>.example/
 * path/<id>" with ids 0, 1, 2, ... and k a hash of the id mod 100,000. The
 * program knows which pushes are new, so it counts false-positive skips
 * exactly (a new URL answered 0) and checks that no repeat is enqueued;
 * and since new ids rise, it checks FIFO order on the way out (each popped
 * id above the last).
 *
 * Printed: ns per push and per pop (the push figure includes making the URL,
 * about 20 ns, measured alone first), peak resident memory (getrusage), the
 * queue's peak memory and disk use, the filter's size and bits per URL, the
 * false-positive skips against the bound, and the checkpoint's time.
 */
#include "amq/amq.h"
#include "amq/frontier.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define HOSTS   100000
#define URL_MAX 80

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Append the decimal digits of v at out; returns the end. */
static char *put_decimal(char *out, uint64_t v)
{
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *out++ = digits[--n];
    return out;
}

static size_t make_url(char out[URL_MAX], uint64_t id, uint64_t seed)
{
    char *p = out;
    memcpy(p, "https://host", 12);
    p = put_decimal(p + 12, mix(id ^ seed) % HOSTS);
    memcpy(p, ".example/path/", 14);
    p = put_decimal(p + 14, id);
    return (size_t)(p - out);
}

static uint64_t id_of(const char *url, size_t len)
{
    uint64_t id = 0, scale = 1;
    for (size_t i = len; i > 0 && url[i - 1] != '/'; i--, scale *= 10)
        id += (uint64_t)(url[i - 1] - '0') * scale;
    return id;
}

static void check(int status, const char *what, const amq_diag *diag)
{
    if (status >= 0)
        return;
    fprintf(stderr, "amq_bench_frontier: %s: %s: %s\n", what, amq_strerror(status), diag->message);
    exit(1);
}

static double mib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

/* Remove the directory this program made, and the frontier's files in it. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *entry;
    char path[4096 + 256];
    while ((entry = readdir(d)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void usage(void)
{
    fprintf(stderr, "usage: amq_bench_frontier [--urls N] [--memory BYTES] [--fpr P] "
                    "[--repeats F] [--seed S] [--dir DIR]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t urls = 100000000, seed = 1;
    double repeats = 0.25;
    const char *dir = NULL;
    amq_frontier_options opt;
    amq_frontier_options_init(&opt);
    opt.memory_bytes = (uint64_t)256 << 20;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 == argc)
            usage();
        amq_diag diag = { .message = "" };
        int status = AMQ_OK;
        if (strcmp(argv[i], "--urls") == 0)
            status = amq_parse_count(&urls, argv[i + 1], 1, (uint64_t)1 << 40, &diag);
        else if (strcmp(argv[i], "--memory") == 0)
            status = amq_parse_count(&opt.memory_bytes, argv[i + 1], AMQ_FRONTIER_MIN_MEMORY,
                                     UINT64_MAX, &diag);
        else if (strcmp(argv[i], "--fpr") == 0)
            status = amq_parse_probability(&opt.fpr, argv[i + 1], &diag);
        else if (strcmp(argv[i], "--repeats") == 0)
            repeats = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            status = amq_parse_count(&seed, argv[i + 1], 0, UINT64_MAX, &diag);
        else if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
        else
            usage();
        check(status, argv[i], &diag);
        if (!(repeats >= 0 && repeats < 1))
            usage();
    }
    opt.seed = seed;
    char temporary[4096];
    if (!dir) {
        const char *tmp = getenv("TMPDIR");
        snprintf(temporary, sizeof temporary, "%s/amq-bench-frontier-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(temporary)) {
            fprintf(stderr, "amq_bench_frontier: mkdtemp: %s\n", strerror(errno));
            return 1;
        }
        dir = temporary;
    }

    /* Making the URLs alone, to know what the push figure includes. */
    char url[URL_MAX];
    volatile size_t sink = 0;
    uint64_t calibration = urls < 10000000 ? urls : 10000000;
    double start = now();
    for (uint64_t i = 0; i < calibration; i++)
        sink += make_url(url, i, seed);
    double make_ns = (now() - start) * 1e9 / (double)calibration;
    (void)sink; /* written only so the loop is not optimized away */

    amq_diag diag = { .message = "" };
    amq_frontier *f;
    check(amq_frontier_open(&f, dir, &opt, &diag), "open", &diag);
    const uint64_t repeat_threshold = (uint64_t)(repeats * 18446744073709551616.0);
    uint64_t new_ids = 0, false_positives = 0, repeats_enqueued = 0, peak_memory = 0, peak_disk = 0;
    amq_frontier_stats st;
    start = now();
    for (uint64_t i = 0; i < urls; i++) {
        uint64_t r = mix(seed + i * 0x9E3779B97F4A7C15ULL);
        bool repeat = new_ids > 0 && r < repeat_threshold;
        uint64_t id = repeat ? mix(r) % new_ids : new_ids++;
        size_t len = make_url(url, id, seed);
        int status = amq_frontier_push(f, url, len, &diag);
        check(status, "push", &diag);
        if (repeat)
            repeats_enqueued += (uint64_t)status;
        else
            false_positives += (uint64_t)(status == 0);
        if ((i & 0xfffff) == 0) {
            amq_frontier_stats_get(&st, f);
            peak_memory = st.memory_bytes > peak_memory ? st.memory_bytes : peak_memory;
            peak_disk = st.disk_bytes > peak_disk ? st.disk_bytes : peak_disk;
        }
    }
    double push_seconds = now() - start;
    amq_frontier_stats_get(&st, f);
    peak_memory = st.memory_bytes > peak_memory ? st.memory_bytes : peak_memory;
    peak_disk = st.disk_bytes > peak_disk ? st.disk_bytes : peak_disk;
    amq_frontier_stats pushed = st;

    start = now();
    check(amq_frontier_save(f, &diag), "save", &diag);
    double save_seconds = now() - start;
    amq_frontier_stats_get(&st, f);
    peak_disk = st.disk_bytes > peak_disk ? st.disk_bytes : peak_disk;

    char popped[AMQ_FRONTIER_MAX_URL + 1];
    size_t len;
    uint64_t pops = 0, last = 0, out_of_order = 0;
    int status;
    start = now();
    while ((status = amq_frontier_pop(popped, sizeof popped, &len, f, &diag)) == 1) {
        uint64_t id = id_of(popped, len);
        out_of_order += pops > 0 && id <= last;
        last = id;
        pops++;
    }
    check(status, "pop", &diag);
    double pop_seconds = now() - start;
    amq_frontier_stats_get(&st, f);
    peak_memory = st.memory_bytes > peak_memory ? st.memory_bytes : peak_memory;
    amq_frontier_close(f);
    if (dir == temporary)
        remove_dir(temporary);

    struct rusage usage_now;
    getrusage(RUSAGE_SELF, &usage_now);
    printf("amq crawl frontier: %" PRIu64 " pushes (%" PRIu64 " new URLs, %.0f%% repeats), "
           "queue memory cap %.0f MiB, fpr %g\n",
           urls, new_ids, repeats * 100, mib(opt.memory_bytes), opt.fpr);
    printf("  push        %8.1f ns/push   (%.1f s; making each URL alone: %.1f ns)\n",
           push_seconds * 1e9 / (double)urls, push_seconds, make_ns);
    printf("  checkpoint  %8.1f s         (%.0f MiB of filter written, spill synced)\n",
           save_seconds, mib(pushed.filter_bytes));
    printf("  pop         %8.1f ns/pop    (%.1f s, %" PRIu64 " URLs)\n",
           pop_seconds * 1e9 / (double)(pops ? pops : 1), pop_seconds, pops);
    printf("  peak RSS    %8.1f MiB\n", (double)usage_now.ru_maxrss / 1024.0);
    printf("  queue       %8.1f MiB in memory at most, %.1f MiB on disk at most\n",
           mib(peak_memory), mib(peak_disk));
    printf("  filter      %8.1f MiB, %.2f bits per enqueued URL, expected FPR now %.3g\n",
           mib(pushed.filter_bytes), (double)pushed.filter_bytes * 8 / (double)pushed.enqueued,
           pushed.expected_fpr);
    printf("  false-positive skips %" PRIu64 " of %" PRIu64 " new URLs: %.4f%% (bound %g%%)\n",
           false_positives, new_ids, 100.0 * (double)false_positives / (double)new_ids,
           100 * opt.fpr);
    printf("  checks      %" PRIu64 " repeats enqueued, %" PRIu64
           " URLs out of FIFO order, %" PRIu64 " popped of %" PRIu64 " enqueued\n",
           repeats_enqueued, out_of_order, pops, pushed.enqueued);
    return repeats_enqueued || out_of_order || pops != pushed.enqueued ? 1 : 0;
}
