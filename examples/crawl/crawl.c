/*
 * crawl.c - a web crawl simulated over a synthetic link graph, run twice:
 * once with amq's crawl frontier (a scalable Bloom filter and a queue that
 * spills to disk past a memory cap) and once with an exact frontier (a
 * hash set of every URL seen and an in-memory queue). It prints what each
 * visited, the duplicate links each avoided, the pages the filter's false
 * positives cost, and the memory each took.
 *
 *   crawl [--pages N] [--seed S] [--fpr P] [--memory BYTES] [--dir DIR]
 *
 * (`make install` installs it as amq-crawl.)
 *
 * The graph is made on the fly from the seed, so neither crawl stores it:
 * page i is "https://site<i mod 5000>.example/page/<i>", and its links come
 * from a generator seeded by (seed, i), the same whenever the page is
 * visited. Out-degrees follow a power law (Pareto, exponent 2.5, at least
 * 2, at most 1000: mean about 6, a few pages with hundreds of links), and
 * targets are skewed the way real links are: half go to "popular" pages
 * (page N u^3 for uniform u, so low numbers are linked again and again), a
 * third to a near neighbour, the rest anywhere. So most links repeat, and
 * the frontier's job is mostly saying no. One link in eight is written in
 * another spelling of the same URL (upper-case scheme and host, the default
 * port, a fragment); both crawls pass links through
 * amq_frontier_canonical_url, which maps them back.
 *
 * Both crawls are breadth-first from page 0. A false positive of the
 * filter skips a page the crawl has not seen; that page, and whatever only
 * it linked to, is then not visited: the "pages missed" line counts them
 * (pages the exact crawl visits that the frontier's does not). The
 * frontier crawl also keeps bitmaps of the pages it enqueued and visited,
 * only to count its false-positive skips exactly and to check what the
 * frontier promises: no page is visited twice, and none the exact crawl
 * does not reach (the program exits with 1 if either happens).
 */
#include "../common/options.h"
#include "amq/amq.h"
#include "amq/frontier.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SITES        5000
#define MIN_DEGREE   2.0
#define MAX_DEGREE   1000
#define DEGREE_POWER 2.5 /* P(degree > d) ~ d^-(power - 1) */
#define URL_MAX      128

/* The name the program was run as, for messages: crawl in the build,
 * amq-crawl installed. */
static const char *program = "crawl";

/* ---- the synthetic web -------------------------------------------------------- */

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t next(rng *r)
{
    r->state += 0x9E3779B97F4A7C15ULL;
    return mix(r->state);
}

/* Uniform in (0, 1]. */
static double uniform(rng *r)
{
    return (double)((next(r) >> 11) + 1) * 0x1p-53;
}

typedef struct web {
    uint64_t pages;
    uint64_t seed;
} web;

/* The generator of page's links: the same every time it is visited. */
static rng page_links(const web *w, uint64_t page, uint32_t *degree)
{
    rng r = { mix(w->seed ^ mix(page)) };
    double d = MIN_DEGREE * pow(uniform(&r), -1.0 / (DEGREE_POWER - 1));
    *degree = d > MAX_DEGREE ? MAX_DEGREE : (uint32_t)d;
    return r;
}

/* The next link of a page, written into url (one in eight in another
 * spelling of the same URL); returns its length. */
static size_t next_link(const web *w, rng *r, uint64_t page, char url[URL_MAX])
{
    double u = uniform(r);
    uint64_t target;
    if (u < 0.5)
        target = (uint64_t)((double)(w->pages - 1) * pow(uniform(r), 3));
    else if (u < 0.83)
        target = (page + 1 + next(r) % 50) % w->pages;
    else
        target = next(r) % w->pages;
    int len;
    if (next(r) % 8 == 0)
        len = snprintf(url, URL_MAX, "HTTPS://Site%" PRIu64 ".Example:443/page/%" PRIu64 "#s%u",
                       target % SITES, target, (unsigned)(next(r) % 10));
    else
        len = snprintf(url, URL_MAX, "https://site%" PRIu64 ".example/page/%" PRIu64,
                       target % SITES, target);
    return (size_t)len;
}

/* The page a canonical URL names. */
static uint64_t page_of(const char *url)
{
    const char *at = strstr(url, "/page/");
    return at ? strtoull(at + 6, NULL, 10) : 0;
}

static size_t page_url(char url[URL_MAX], uint64_t page)
{
    return (size_t)snprintf(url, URL_MAX, "https://site%" PRIu64 ".example/page/%" PRIu64,
                            page % SITES, page);
}

/* What a crawl did. duplicates: links to pages already enqueued;
 * false_positives: pages skipped as seen when they were not (each counted
 * once, though every later link to one is skipped too). */
typedef struct result {
    uint64_t visited, pushed, duplicates, false_positives;
    uint64_t memory, filter, disk; /* peak bytes */
    double seconds;
    uint8_t *visited_pages; /* bitmap, pages bits */
} result;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *allocate(size_t size)
{
    void *p = calloc(1, size);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", program);
        exit(1);
    }
    return p;
}

static bool bit(const uint8_t *bits, uint64_t i)
{
    return bits[i / 8] >> (i % 8) & 1;
}

static void set_bit(uint8_t *bits, uint64_t i)
{
    bits[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* ---- the crawl with amq's frontier ----------------------------------------------- */

static void fail(const char *what, int status, const amq_diag *diag)
{
    fprintf(stderr, "%s: %s: %s%s%s\n", program, what, amq_strerror(status),
            diag->message[0] ? ": " : "", diag->message);
    exit(1);
}

static void crawl_frontier(const web *w, const char *dir, const amq_frontier_options *opt,
                           result *out)
{
    amq_diag diag = { .message = "" };
    amq_frontier *f;
    int status = amq_frontier_open(&f, dir, opt, &diag);
    if (status != AMQ_OK)
        fail("opening the frontier", status, &diag);
    uint8_t *enqueued = allocate(w->pages / 8 + 1);
    uint8_t *false_positive = allocate(w->pages / 8 + 1);
    out->visited_pages = allocate(w->pages / 8 + 1);
    double start = now();
    char url[URL_MAX], popped[AMQ_FRONTIER_MAX_URL + 1];
    size_t len = page_url(url, 0);
    amq_frontier_push(f, url, len, NULL);
    set_bit(enqueued, 0);
    while ((status = amq_frontier_pop(popped, sizeof popped, &len, f, &diag)) == 1) {
        uint64_t page = page_of(popped);
        if (bit(out->visited_pages, page)) {
            fprintf(stderr, "%s: %s was visited twice\n", program, popped);
            exit(1);
        }
        set_bit(out->visited_pages, page);
        out->visited++;
        uint32_t degree;
        rng links = page_links(w, page, &degree);
        for (uint32_t i = 0; i < degree; i++) {
            len = next_link(w, &links, page, url);
            status = amq_frontier_push(f, url, len, &diag);
            if (status < 0)
                fail("pushing", status, &diag);
            out->pushed++;
            /* The page the link names, for counting false positives only. */
            char canonical[URL_MAX + 1];
            size_t canonical_len;
            amq_frontier_canonical_url(canonical, URL_MAX, &canonical_len, url, len, NULL);
            canonical[canonical_len] = '\0';
            uint64_t target = page_of(canonical);
            if (status == 1) {
                set_bit(enqueued, target);
            } else if (bit(enqueued, target)) {
                out->duplicates++;
            } else if (!bit(false_positive, target)) {
                set_bit(false_positive, target); /* its later links are skipped too */
                out->false_positives++;
            }
        }
        if (out->visited % 4096 == 0) {
            amq_frontier_stats st;
            amq_frontier_stats_get(&st, f);
            out->memory = st.memory_bytes > out->memory ? st.memory_bytes : out->memory;
            out->disk = st.disk_bytes > out->disk ? st.disk_bytes : out->disk;
        }
    }
    if (status < 0)
        fail("popping", status, &diag);
    out->seconds = now() - start;
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    out->filter = st.filter_bytes;
    amq_frontier_close(f);
    free(enqueued);
    free(false_positive);
}

/* ---- the crawl with an exact frontier ------------------------------------------- */

/* Every URL seen, in an arena; a hash table of arena offsets; the queue,
 * a FIFO of offsets. */
typedef struct exact_frontier {
    char *arena;
    size_t arena_used, arena_capacity;
    uint64_t *slots; /* offset + 1; 0 = empty */
    size_t slot_count, used;
    uint64_t *queue;
    size_t head, tail, queue_capacity;
    amq_hasher hasher;
} exact_frontier;

static void *grow(void *p, size_t *capacity, size_t item, size_t first)
{
    *capacity = *capacity ? *capacity * 2 : first;
    void *bigger = realloc(p, *capacity * item);
    if (!bigger) {
        fprintf(stderr, "%s: out of memory\n", program);
        exit(1);
    }
    return bigger;
}

static const char *exact_url(const exact_frontier *e, uint64_t offset, size_t *len)
{
    memcpy(len, e->arena + offset, sizeof *len);
    return e->arena + offset + sizeof *len;
}

static void exact_rehash(exact_frontier *e)
{
    size_t old_count = e->slot_count;
    uint64_t *old = e->slots;
    e->slot_count = old_count ? old_count * 2 : 1024;
    e->slots = allocate(e->slot_count * sizeof *e->slots);
    for (size_t i = 0; i < old_count; i++) {
        if (!old[i])
            continue;
        size_t len;
        const char *url = exact_url(e, old[i] - 1, &len);
        size_t slot = amq_hash64(&e->hasher, url, len) & (e->slot_count - 1);
        while (e->slots[slot])
            slot = (slot + 1) & (e->slot_count - 1);
        e->slots[slot] = old[i];
    }
    free(old);
}

/* 1: new, enqueued; 0: seen before. */
static int exact_push(exact_frontier *e, const char *url, size_t len)
{
    if (2 * (e->used + 1) > e->slot_count)
        exact_rehash(e);
    size_t slot = amq_hash64(&e->hasher, url, len) & (e->slot_count - 1);
    for (; e->slots[slot]; slot = (slot + 1) & (e->slot_count - 1)) {
        size_t seen_len;
        const char *seen = exact_url(e, e->slots[slot] - 1, &seen_len);
        if (seen_len == len && memcmp(seen, url, len) == 0)
            return 0;
    }
    while (e->arena_used + sizeof len + len > e->arena_capacity)
        e->arena = grow(e->arena, &e->arena_capacity, 1, 1 << 20);
    uint64_t offset = e->arena_used;
    memcpy(e->arena + offset, &len, sizeof len);
    memcpy(e->arena + offset + sizeof len, url, len);
    e->arena_used += sizeof len + len;
    e->slots[slot] = offset + 1;
    e->used++;
    if (e->tail == e->queue_capacity)
        e->queue = grow(e->queue, &e->queue_capacity, sizeof *e->queue, 1024);
    e->queue[e->tail++] = offset;
    return 1;
}

static uint64_t exact_memory(const exact_frontier *e)
{
    return e->arena_capacity + e->slot_count * sizeof *e->slots +
           e->queue_capacity * sizeof *e->queue;
}

static void crawl_exact(const web *w, result *out)
{
    exact_frontier e;
    memset(&e, 0, sizeof e);
    amq_hasher_xxh3(&e.hasher, w->seed);
    out->visited_pages = allocate(w->pages / 8 + 1);
    double start = now();
    char url[URL_MAX], canonical[URL_MAX + 1];
    size_t len = page_url(url, 0);
    exact_push(&e, url, len);
    while (e.head < e.tail) {
        const char *popped = exact_url(&e, e.queue[e.head++], &len);
        memcpy(canonical, popped, len);
        canonical[len] = '\0';
        uint64_t page = page_of(canonical);
        set_bit(out->visited_pages, page);
        out->visited++;
        uint32_t degree;
        rng links = page_links(w, page, &degree);
        for (uint32_t i = 0; i < degree; i++) {
            len = next_link(w, &links, page, url);
            size_t canonical_len;
            amq_frontier_canonical_url(canonical, URL_MAX, &canonical_len, url, len, NULL);
            out->pushed++;
            out->duplicates += exact_push(&e, canonical, canonical_len) == 0;
        }
    }
    out->seconds = now() - start;
    out->memory = exact_memory(&e);
    free(e.arena);
    free(e.slots);
    free(e.queue);
}

/* ---- main ------------------------------------------------------------------------- */

static double mib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [--pages N] [--seed S] [--fpr P] [--memory BYTES] [--dir DIR]\n"
            "Crawl a synthetic web with amq's frontier and with an exact hash set, and compare.\n"
            "\n"
            "  --pages N       pages in the synthetic web (default 300000)\n"
            "  --seed S        the web's seed (default 1)\n"
            "  --fpr P         the frontier's false-positive bound (default 0.01)\n"
            "  --memory BYTES  the frontier queue's memory cap (default 1048576)\n"
            "  --dir DIR       the frontier's directory (default: a temporary one)\n"
            "Exit status: 0 done, 1 the frontier broke a promise or failed, 2 a usage error.\n",
            program);
}

/* Remove what the frontier left in a directory this program made. */
static void remove_frontier_dir(const char *dir)
{
    char path[4096 + sizeof "/frontier.amq"];
    snprintf(path, sizeof path, "%s/frontier.amq", dir);
    unlink(path);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    web w = { .pages = 300000, .seed = 1 };
    amq_frontier_options opt;
    amq_frontier_options_init(&opt);
    opt.memory_bytes = 1 << 20;
    opt.initial_capacity = 1 << 14;
    opt.canonicalize = amq_frontier_canonical_url;
    const char *dir = NULL;
    if (argc > 0 && argv[0][0]) {
        const char *slash = strrchr(argv[0], '/');
        program = slash ? slash + 1 : argv[0];
    }
    enum { PAGES = 256, SEED, FPR, MEMORY, DIR_OPTION };
    static const struct option options[] = {
        { "pages", required_argument, NULL, PAGES },
        { "seed", required_argument, NULL, SEED },
        { "fpr", required_argument, NULL, FPR },
        { "memory", required_argument, NULL, MEMORY },
        { "dir", required_argument, NULL, DIR_OPTION },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    example_options o;
    example_options_init(&o, argc, argv, ":h", options);
    int c;
    while ((c = example_options_next(&o)) != -1) {
        amq_diag diag = { .message = "" };
        int status = AMQ_OK;
        switch (c) {
        case PAGES:
            status = amq_parse_count(&w.pages, optarg, 1, (uint64_t)1 << 40, &diag);
            break;
        case SEED:
            status = amq_parse_count(&w.seed, optarg, 0, UINT64_MAX, &diag);
            break;
        case FPR:
            status = amq_parse_probability(&opt.fpr, optarg, &diag);
            break;
        case MEMORY:
            status = amq_parse_count(&opt.memory_bytes, optarg, AMQ_FRONTIER_MIN_MEMORY, UINT64_MAX,
                                     &diag);
            break;
        case DIR_OPTION:
            dir = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default: {
            char message[256];
            example_options_error(message, sizeof message, &o, c);
            fprintf(stderr, "%s: %s\n", program, message);
            usage(stderr);
            return 2;
        }
        }
        if (status != AMQ_OK) {
            fprintf(stderr, "%s: --%s %s: %s\n", program, options[c - PAGES].name, optarg,
                    diag.message);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", program, argv[optind]);
        usage(stderr);
        return 2;
    }
    opt.seed = w.seed;
    char temporary[4096];
    if (!dir) {
        const char *tmp = getenv("TMPDIR");
        snprintf(temporary, sizeof temporary, "%s/amq-crawl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(temporary)) {
            fprintf(stderr, "%s: cannot make a temporary directory: %s\n", program,
                    strerror(errno));
            return 1;
        }
    }

    result frontier = { 0 }, exact = { 0 };
    crawl_frontier(&w, dir ? dir : temporary, &opt, &frontier);
    if (!dir)
        remove_frontier_dir(temporary);
    crawl_exact(&w, &exact);
    uint64_t missed = 0;
    for (uint64_t page = 0; page < w.pages; page++) {
        missed += bit(exact.visited_pages, page) && !bit(frontier.visited_pages, page);
        if (bit(frontier.visited_pages, page) && !bit(exact.visited_pages, page)) {
            fprintf(stderr, "%s: page %" PRIu64 " was visited only by the frontier crawl\n",
                    program, page);
            return 1;
        }
    }

    printf("synthetic web: %" PRIu64 " pages, seed %" PRIu64
           "; power-law out-degrees, skewed link targets\n\n",
           w.pages, w.seed);
    printf("%-24s %22s %22s\n", "", "amq frontier", "exact hash set");
    printf("%-24s %22" PRIu64 " %22" PRIu64 "\n", "pages visited", frontier.visited, exact.visited);
    printf("%-24s %22" PRIu64 " %22" PRIu64 "\n", "links pushed", frontier.pushed, exact.pushed);
    printf("%-24s %22" PRIu64 " %22" PRIu64 "\n", "duplicates avoided", frontier.duplicates,
           exact.duplicates);
    printf("%-24s %22" PRIu64 " %22d\n", "false-positive skips", frontier.false_positives, 0);
    printf("%-24s %22" PRIu64 " %22d\n", "pages missed", missed, 0);
    printf("%-24s %18.2f MiB %18.2f MiB\n", "memory: URL set", mib(frontier.filter),
           mib(exact.memory));
    printf("%-24s %18.2f MiB %22s\n", "memory: queue (peak)", mib(frontier.memory), "(in the set)");
    printf("%-24s %18.2f MiB %22s\n", "disk: spilled (peak)", mib(frontier.disk), "-");
    printf("%-24s %20.2f s %20.2f s\n", "time", frontier.seconds, exact.seconds);
    printf("\nfalse-positive skips: %.3f%% of the new pages the frontier met (bound: fpr %g)\n",
           100.0 * (double)frontier.false_positives /
               (double)(frontier.visited + frontier.false_positives),
           opt.fpr);
    free(frontier.visited_pages);
    free(exact.visited_pages);
    return 0;
}
