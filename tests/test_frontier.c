/*
 * Tests for the crawl frontier (src/frontier/frontier.c, frontier_segments.c,
 * frontier_url.c) against an exact model: a FIFO of URL ids, the set of ids
 * ever enqueued, and a replica scalable Bloom filter made with the
 * frontier's parameters, which predicts each push's answer exactly (the
 * frontier's filter sees the same adds in the same order), false positives
 * included. Covered: FIFO order and no URL enqueued twice over hundreds of
 * thousands of pushes with a small memory cap (so the queue spills to
 * segment files and reads them back), the false-positive skips against the
 * bound, save and reopen, a child killed with SIGKILL at random points and
 * the directory reopened at the checkpoint it had reported, damaged and
 * missing files, option and URL-length errors, the canonicalization
 * hook on tricky URLs, and which paths name a frontier's filter file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/frontier.h"
#include "core/util.h"
#include "frontier/frontier_internal.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t seed;

/* ---- URLs and the model ------------------------------------------------------------ */

#define URL_SIZE 96

/* URL number id: a thousand hosts, one path per id. */
static size_t make_url(char out[URL_SIZE], uint64_t id)
{
    int len =
        snprintf(out, URL_SIZE, "https://host%" PRIu64 ".example/path/%" PRIu64, id % 1000, id);
    return (size_t)len;
}

typedef struct model {
    amq_scalable_bloom *replica;
    uint64_t *queue; /* ids, queue[head .. tail) */
    size_t head, tail, capacity;
    uint8_t *seen; /* seen[id]: id was enqueued */
    size_t universe;
    uint64_t pushed, enqueued, popped;
    uint64_t false_positives; /* never-enqueued ids the filter skipped */
} model;

static void options_for_test(amq_frontier_options *opt, uint64_t memory, uint64_t segment)
{
    amq_frontier_options_init(opt);
    opt->initial_capacity = 1000;
    opt->seed = seed;
    opt->memory_bytes = memory;
    opt->segment_bytes = segment;
}

/* The scratch directory "frontier" and options with the smallest memory
 * cap and segments, which make every test spill. */
static void smallest_frontier(void **state, char *dir, amq_frontier_options *opt)
{
    amq_test_scratch_path(dir, state, "frontier");
    options_for_test(opt, AMQ_FRONTIER_MIN_MEMORY, AMQ_FRONTIER_MIN_SEGMENT);
}

static void model_init(model *m, const amq_frontier_options *opt)
{
    memset(m, 0, sizeof *m);
    amq_scalable_bloom_params params = { .capacity = opt->initial_capacity,
                                         .fpr = opt->fpr,
                                         .growth = opt->growth,
                                         .tightening = opt->tightening };
    amq_hasher_xxh3(&params.hasher, opt->seed);
    assert_int_equal(amq_scalable_bloom_new(&m->replica, &params, NULL), AMQ_OK);
}

static void model_free(model *m)
{
    amq_scalable_bloom_free(m->replica);
    free(m->queue);
    free(m->seen);
}

/* The answer the frontier must give to pushing id, and the model's change. */
static int model_push(model *m, uint64_t id)
{
    char url[URL_SIZE];
    size_t len = make_url(url, id);
    if (id >= m->universe) {
        size_t bigger = (size_t)id * 2 + 1024;
        m->seen = realloc(m->seen, bigger);
        assert_non_null(m->seen);
        memset(m->seen + m->universe, 0, bigger - m->universe);
        m->universe = bigger;
    }
    int added = amq_scalable_bloom_add(m->replica, url, len);
    assert_true(added == 0 || added == 1);
    m->pushed++;
    if (!added) {
        m->false_positives += !m->seen[id];
        return 0;
    }
    if (m->seen[id])
        fail_msg("the replica filter took id %" PRIu64 " twice", id);
    m->seen[id] = 1;
    if (m->tail == m->capacity && m->head > 0) {
        memmove(m->queue, m->queue + m->head, (m->tail - m->head) * sizeof *m->queue);
        m->tail -= m->head;
        m->head = 0;
    }
    if (m->tail == m->capacity) {
        m->capacity = m->capacity ? m->capacity * 2 : 1024;
        m->queue = realloc(m->queue, m->capacity * sizeof *m->queue);
        assert_non_null(m->queue);
    }
    m->queue[m->tail++] = id;
    m->enqueued++;
    return 1;
}

static uint64_t model_queued(const model *m)
{
    return m->tail - m->head;
}

/* Pop from the model; false when it is empty. */
static bool model_pop(model *m, uint64_t *id)
{
    if (m->head == m->tail)
        return false;
    *id = m->queue[m->head++];
    m->popped++;
    return true;
}

static void check_invariants(const amq_frontier *f)
{
    amq_diag diag = { .message = "" };
    if (amq__frontier_check(f, &diag) != AMQ_OK)
        fail_msg("invariant broken: %s", diag.message);
}

/* Push id to both; their answers must agree. */
static void push_both(amq_frontier *f, model *m, uint64_t id)
{
    char url[URL_SIZE];
    size_t len = make_url(url, id);
    amq_diag diag = { .message = "" };
    int got = amq_frontier_push(f, url, len, &diag);
    int expected = model_push(m, id);
    if (got != expected)
        fail_msg("push of %s answered %d (%s), the model %d", url, got, diag.message, expected);
}

/* Pop from both; the URLs must agree. */
static void pop_both(amq_frontier *f, model *m)
{
    char buffer[AMQ_FRONTIER_MAX_URL + 1];
    size_t len = 99;
    amq_diag diag = { .message = "" };
    int got = amq_frontier_pop(buffer, sizeof buffer, &len, f, &diag);
    uint64_t id = 0;
    bool expected = model_pop(m, &id);
    if (got != (int)expected)
        fail_msg("pop answered %d (%s), the model %d with %" PRIu64 " queued", got, diag.message,
                 expected, model_queued(m));
    if (!expected) {
        assert_int_equal(len, 0);
        return;
    }
    char url[URL_SIZE];
    size_t url_len = make_url(url, id);
    if (len != url_len || memcmp(buffer, url, len) != 0 || buffer[len] != '\0')
        fail_msg("popped '%.*s', the model '%s'", (int)len, buffer, url);
}

/* Every figure the model knows agrees, and memory stays under the cap. */
static void check_stats(const amq_frontier *f, const model *m, uint64_t memory_cap)
{
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_int_equal(st.pushed, m->pushed);
    assert_int_equal(st.enqueued, m->enqueued);
    assert_int_equal(st.skipped, m->pushed - m->enqueued);
    assert_int_equal(st.popped, m->popped);
    assert_int_equal(st.queued, model_queued(m));
    assert_int_equal(st.queued_in_memory + st.queued_on_disk, st.queued);
    if (st.memory_bytes > memory_cap)
        fail_msg("%" PRIu64 " bytes of buffers under a cap of %" PRIu64, st.memory_bytes,
                 memory_cap);
    assert_true(st.expected_fpr <= st.fpr);
}

/* Pop everything from both, comparing; then every id ever enqueued is
 * refused when pushed again (which changes only the push count). */
static void drain_and_check_seen(amq_frontier *f, model *m)
{
    while (model_queued(m) > 0)
        pop_both(f, m);
    pop_both(f, m); /* both empty */
    for (uint64_t id = 0; id < m->universe; id++) {
        if (!m->seen[id])
            continue;
        char url[URL_SIZE];
        size_t len = make_url(url, id);
        int status = amq_frontier_push(f, url, len, NULL);
        if (status != 0)
            fail_msg("%s, enqueued before, was pushed again with answer %d", url, status);
        m->pushed++;
    }
}

/* ---- directory helpers ------------------------------------------------------------- */

/* Files in dir whose names begin with prefix. */
static size_t count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL)
        count += strncmp(entry->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return count;
}

/* The name of the first (lowest) segment file in dir, into out. */
static void first_segment(char out[AMQ_TEST_PATH_MAX], const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    uint64_t lowest = UINT64_MAX, id;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL)
        if (amq__segment_name_parse(entry->d_name, &id) && id < lowest)
            lowest = id;
    closedir(d);
    assert_true(lowest != UINT64_MAX);
    int len = snprintf(out, AMQ_TEST_PATH_MAX, "%s/segment-%016" PRIx64 ".seg", dir, lowest);
    assert_true(len > 0 && len < AMQ_TEST_PATH_MAX);
}

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* Give path its owner's write bit (a frontier's filter files are
 * read-only), so that a test can change it as an outside writer would. */
static void make_writable(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(chmod(path, st.st_mode | S_IWUSR), 0);
}

static void flip_byte(const char *path, off_t at)
{
    make_writable(path);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t byte;
    assert_int_equal(pread(fd, &byte, 1, at), 1);
    byte ^= 0x10;
    assert_int_equal(pwrite(fd, &byte, 1, at), 1);
    close(fd);
}

static void open_ok(amq_frontier **f, const char *dir, const amq_frontier_options *opt)
{
    amq_diag diag = { .message = "" };
    int status = amq_frontier_open(f, dir, opt, &diag);
    if (status != AMQ_OK)
        fail_msg("opening %s: %s (%s)", dir, amq_strerror(status), diag.message);
}

/* Opening must fail with status and a message holding fragment. */
static void expect_open_error(const char *dir, const amq_frontier_options *opt, int status,
                              const char *fragment)
{
    amq_frontier *f = (amq_frontier *)&f;
    amq_diag diag = { .message = "" };
    int got = amq_frontier_open(&f, dir, opt, &diag);
    if (got != status || !strstr(diag.message, fragment))
        fail_msg("opening %s answered %s (%s); expected %s with '%s'", dir, amq_strerror(got),
                 diag.message, amq_strerror(status), fragment);
    assert_null(f);
}

/* ---- FIFO order and duplicates ----------------------------------------------------- */

/* ops operations on both, pushing with probability push_percent, ids drawn
 * from [0, universe + i / 4). */
static void run_ops(amq_frontier *f, model *m, amq_test_rng *rng, uint64_t ops,
                    unsigned push_percent, uint64_t universe, uint64_t memory_cap)
{
    for (uint64_t i = 0; i < ops; i++) {
        if (amq_test_below(rng, 100) < push_percent)
            push_both(f, m, amq_test_below(rng, universe + i / 4));
        else
            pop_both(f, m);
        if (i % 4999 == 0) {
            check_invariants(f);
            check_stats(f, m, memory_cap);
        }
    }
    check_invariants(f);
    check_stats(f, m, memory_cap);
}

static void fifo_against_model(void **state, uint64_t memory, uint64_t memory_urls)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(dir, state, "frontier");
    amq_frontier_options opt;
    options_for_test(&opt, memory, AMQ_FRONTIER_MIN_SEGMENT);
    opt.memory_urls = memory_urls;
    model m;
    model_init(&m, &opt);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed);
    uint64_t scale = AMQ_TEST_SANITIZED ? 1 : 3;
    /* grow (spilling), drain (reading back, then from the tail), mix */
    run_ops(f, &m, &rng, 60000 * scale, 75, 40000 * scale, memory);
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_true(st.queued_on_disk > 0);
    assert_true(st.segments > 1);
    run_ops(f, &m, &rng, 60000 * scale, 30, 40000 * scale, memory);
    run_ops(f, &m, &rng, 60000 * scale, 50, 60000 * scale, memory);
    /* Many pushes were duplicates, and none was enqueued twice. */
    assert_true(m.pushed - m.enqueued > m.pushed / 4);
    drain_and_check_seen(f, &m);
    check_invariants(f);
    amq_frontier_stats_get(&st, f);
    assert_int_equal(st.queued, 0);
    /* Read to the end, the spill files are gone (none was ever saved). */
    assert_int_equal(st.disk_bytes, 0);
    assert_int_equal(count_files(dir, "segment-"), 0);
    amq_frontier_close(f);
    model_free(&m);
}

static void test_fifo_small_memory(void **state)
{
    fifo_against_model(state, AMQ_FRONTIER_MIN_MEMORY, UINT64_MAX);
}

static void test_fifo_url_cap(void **state)
{
    fifo_against_model(state, (uint64_t)64 << 20, 300);
}

/* ---- false positives --------------------------------------------------------------- */

static void test_false_positive_skips(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(dir, state, "frontier");
    amq_frontier_options opt;
    options_for_test(&opt, (uint64_t)8 << 20, AMQ_FRONTIER_MIN_SEGMENT);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    /* Distinct URLs only: every skip is a false positive. 1000 URLs in the
     * first stage, so the filter grows through 8 stages. */
    const uint64_t n = 200000;
    uint64_t skipped = 0;
    for (uint64_t i = 0; i < n; i++) {
        char url[URL_SIZE];
        size_t len = make_url(url, amq__mix64(seed ^ i));
        int status = amq_frontier_push(f, url, len, NULL);
        assert_true(status == 0 || status == 1);
        skipped += (uint64_t)(status == 0);
    }
    /* Each push is skipped with probability below p: the count is below a
     * binomial(n, p) one, within 4 standard deviations of n p. */
    double mean = (double)n * opt.fpr;
    double bound = mean + 4 * sqrt(mean * (1 - opt.fpr));
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    fprintf(stderr,
            "false-positive skips: %" PRIu64 " of %" PRIu64 " new URLs (bound %.0f), "
            "filter %.1f bits/URL\n",
            skipped, n, bound, (double)st.filter_bytes * 8 / (double)st.enqueued);
    if ((double)skipped > bound)
        fail_msg("%" PRIu64 " skips of new URLs; p = %g allows %.0f", skipped, opt.fpr, bound);
    assert_int_equal(st.skipped, skipped);
    assert_true(st.expected_fpr < opt.fpr);
    amq_frontier_close(f);
}

/* ---- save and reopen --------------------------------------------------------------- */

static void test_save_reopen(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    model m;
    model_init(&m, &opt);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed + 1);

    /* Queue enough to spill, pop a few so the head holds part of segment 1,
     * and save there. */
    for (uint64_t i = 0; i < 20000; i++)
        push_both(f, &m, amq_test_below(&rng, 30000));
    for (int i = 0; i < 10; i++)
        pop_both(f, &m);
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_true(st.queued_on_disk > 0);
    assert_int_equal(st.generation, 0);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_stats_get(&st, f);
    assert_int_equal(st.generation, 1);
    assert_int_equal(count_files(dir, "filter-"), 1);

    /* Work after the save is discarded by a close without saving. */
    for (uint64_t i = 0; i < 5000; i++) {
        char url[URL_SIZE];
        size_t len = make_url(url, 1000000 + i);
        assert_true(amq_frontier_push(f, url, len, NULL) >= 0);
    }
    char buffer[URL_SIZE];
    size_t popped_len;
    for (int i = 0; i < 500; i++)
        assert_int_equal(amq_frontier_pop(buffer, sizeof buffer, &popped_len, f, NULL), 1);
    amq_frontier_close(f);

    /* Reopened with other queue options: the state of the save. */
    opt.memory_bytes = (uint64_t)1 << 20;
    opt.fpr = 0.5; /* ignored: the directory keeps its filter */
    open_ok(&f, dir, &opt);
    check_invariants(f);
    check_stats(f, &m, opt.memory_bytes);
    amq_frontier_stats_get(&st, f);
    assert_int_equal(st.generation, 1);
    assert_true(st.fpr == 0.01);
    /* Pop half, push more, save again: the old filter file and the
     * segments read to the end are removed once the new checkpoint lands. */
    for (uint64_t i = 0; i < model_queued(&m) / 2; i++)
        pop_both(f, &m);
    for (uint64_t i = 0; i < 3000; i++)
        push_both(f, &m, amq_test_below(&rng, 40000));
    size_t segments_before = count_files(dir, "segment-");
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_stats_get(&st, f);
    assert_int_equal(count_files(dir, "filter-"), 1);
    assert_int_equal(count_files(dir, "segment-"), st.segments);
    assert_true(st.segments < segments_before);
    amq_frontier_close(f);

    open_ok(&f, dir, &opt);
    check_stats(f, &m, opt.memory_bytes);
    drain_and_check_seen(f, &m);
    /* An empty queue saved and reopened. */
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    assert_int_equal(count_files(dir, "segment-"), 0);
    amq_frontier_close(f);
    open_ok(&f, dir, &opt);
    check_stats(f, &m, opt.memory_bytes);
    pop_both(f, &m);
    amq_frontier_close(f);
    model_free(&m);
}

/* ---- kill -9 ----------------------------------------------------------------------- */

/* What a child reports through its pipe. */
typedef struct report {
    char kind;           /* 'B' before a save, 'S' after it, 'F' failure, 'E' end */
    uint64_t generation; /* the save's */
    uint64_t ops;        /* operations done before it */
} report;

static uint64_t op_value(uint64_t i)
{
    return amq__mix64(seed * 0x9e3779b97f4a7c15ULL + i);
}

/* Whether operation i is a push, and of which id; else it is a pop. */
static bool op_is_push(uint64_t i, uint64_t *id)
{
    uint64_t r = op_value(i);
    *id = (r >> 8) % (500 + i / 3);
    return r % 100 < 62;
}

static void model_apply(model *m, uint64_t i)
{
    uint64_t id;
    if (op_is_push(i, &id))
        model_push(m, id);
    else
        model_pop(m, &id);
}

/* Operation i on a frontier and its model (in a child, where a failed
 * check must not reach the test runner): whether they agreed. */
static bool child_apply(amq_frontier *f, model *m, uint64_t i)
{
    char url[URL_SIZE];
    uint64_t id;
    if (op_is_push(i, &id)) {
        size_t len = make_url(url, id);
        return amq_frontier_push(f, url, len, NULL) == model_push(m, id);
    }
    char buffer[URL_SIZE];
    size_t len = 0;
    int got = amq_frontier_pop(buffer, sizeof buffer, &len, f, NULL);
    if (!model_pop(m, &id))
        return got == 0;
    return got == 1 && len == make_url(url, id) && memcmp(buffer, url, len) == 0;
}

static void send_report(int fd, char kind, uint64_t generation, uint64_t ops)
{
    report r = { kind, generation, ops };
    if (write(fd, &r, sizeof r) != (ssize_t)sizeof r)
        _exit(3);
}

/* The child: reopen, then operations from ops on, checked against its copy
 * of the model, with saves at pseudo-random points, until killed. */
static void child_run(const char *dir, const amq_frontier_options *opt, model *m, uint64_t ops,
                      int fd)
{
    amq_frontier *f;
    if (amq_frontier_open(&f, dir, opt, NULL) != AMQ_OK) {
        send_report(fd, 'F', 0, ops);
        _exit(1);
    }
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    uint64_t generation = st.generation;
    for (uint64_t i = ops; i < ops + 3000000; i++) {
        if (!child_apply(f, m, i)) {
            send_report(fd, 'F', generation, i);
            _exit(1);
        }
        if (op_value(i) >> 50 < 40) { /* about one operation in 400 */
            send_report(fd, 'B', generation + 1, i + 1);
            if (amq_frontier_save(f, NULL) != AMQ_OK) {
                send_report(fd, 'F', generation + 1, i + 1);
                _exit(1);
            }
            generation++;
            send_report(fd, 'S', generation, i + 1);
        }
    }
    send_report(fd, 'E', generation, ops + 3000000);
    _exit(0);
}

static void sleep_ms(uint64_t ms)
{
    struct timespec t = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static void test_kill_minus_nine(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    model m;
    model_init(&m, &opt);
    amq_frontier *f;
    open_ok(&f, dir, &opt); /* generation 0, empty */
    amq_frontier_close(f);

    amq_test_rng rng;
    amq_test_rng_init(&rng, seed + 2);
    uint64_t ops = 0, generation = 0;
    unsigned from_pending = 0;
    for (int round = 0; round < 6; round++) {
        int pipe_fds[2];
        assert_int_equal(pipe(pipe_fds), 0);
        fflush(NULL);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            close(pipe_fds[0]);
            child_run(dir, &opt, &m, ops, pipe_fds[1]);
        }
        close(pipe_fds[1]);
        sleep_ms(30 + amq_test_below(&rng, 150));
        kill(child, SIGKILL);
        int wstatus;
        assert_int_equal(waitpid(child, &wstatus, 0), child);

        /* The last completed save, and a save begun after it, if any. */
        report r, saved = { 'S', generation, ops }, pending = { 0, 0, 0 };
        while (read(pipe_fds[0], &r, sizeof r) == (ssize_t)sizeof r) {
            if (r.kind == 'F')
                fail_msg("the child failed at operation %" PRIu64, r.ops);
            if (r.kind == 'B')
                pending = r;
            if (r.kind == 'S') {
                saved = r;
                pending.kind = 0;
            }
        }
        close(pipe_fds[0]);

        open_ok(&f, dir, &opt);
        check_invariants(f);
        amq_frontier_stats st;
        amq_frontier_stats_get(&st, f);
        const report *at = st.generation == saved.generation                     ? &saved
                           : pending.kind && st.generation == pending.generation ? &pending
                                                                                 : NULL;
        if (!at)
            fail_msg("round %d: reopened at generation %" PRIu64
                     ", but the child completed %" PRIu64 " and began %" PRIu64,
                     round, st.generation, saved.generation, pending.generation);
        from_pending += at == &pending;
        /* The model at that checkpoint; the frontier must be exactly it. */
        for (; ops < at->ops; ops++)
            model_apply(&m, ops);
        generation = at->generation;
        check_stats(f, &m, opt.memory_bytes);
        /* Compare every queued URL, then close without saving, which
         * leaves the directory at the checkpoint for the next child; the
         * model's pops only moved its head. */
        size_t head = m.head;
        uint64_t popped = m.popped, pushed = m.pushed;
        drain_and_check_seen(f, &m);
        amq_frontier_close(f);
        m.head = head;
        m.popped = popped;
        m.pushed = pushed;
    }
    fprintf(stderr,
            "kill -9: %" PRIu64 " operations over 6 children, %u reopened at a save "
            "in progress\n",
            ops, from_pending);
    assert_true(generation > 0);
    model_free(&m);
}

/* ---- damaged files ----------------------------------------------------------------- */

/* A saved frontier with several segments, its first one partly popped
 * before the save; the model as saved. */
static void make_saved(const char *dir, const amq_frontier_options *opt, model *m)
{
    model_init(m, opt);
    amq_frontier *f;
    open_ok(&f, dir, opt);
    for (uint64_t id = 0; id < 6000; id++)
        push_both(f, m, id);
    for (int i = 0; i < 100; i++)
        pop_both(f, m);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);
}

/* Reopen dir: what the model has queued comes out, and nothing it has seen
 * is enqueued again. */
static void reopen_and_check_seen(const char *dir, const amq_frontier_options *opt, model *m)
{
    amq_frontier *f;
    open_ok(&f, dir, opt);
    drain_and_check_seen(f, m);
    amq_frontier_close(f);
}

/* The records of a segment file: their offsets and the ids of their URLs;
 * returns how many (at most max). */
static size_t segment_records(const char *path, off_t *offsets, uint64_t *ids, size_t max)
{
    size_t len;
    char *bytes = amq_test_read_file(path, &len);
    assert_non_null(bytes);
    size_t count = 0;
    for (size_t at = AMQ__SEGMENT_HEADER; at + 8 <= len && count < max;) {
        size_t url_len = amq__load_u32le((const uint8_t *)bytes + at);
        assert_true(at + url_len + 8 <= len);
        char url[URL_SIZE];
        assert_true(url_len < sizeof url);
        memcpy(url, bytes + at + 4, url_len);
        url[url_len] = '\0';
        offsets[count] = (off_t)at;
        ids[count] = strtoull(strrchr(url, '/') + 1, NULL, 10);
        count++;
        at += url_len + 8;
    }
    free(bytes);
    return count;
}

/* The paths of dir's segment files, lowest id first; returns how many. */
static size_t segment_paths(char (*out)[AMQ_TEST_PATH_MAX], size_t max, const char *dir)
{
    uint64_t ids[64];
    size_t count = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *entry;
    uint64_t id;
    while ((entry = readdir(d)) != NULL)
        if (amq__segment_name_parse(entry->d_name, &id) && count < 64)
            ids[count++] = id;
    closedir(d);
    for (size_t i = 1; i < count; i++)
        for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            uint64_t t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    assert_true(count <= max);
    for (size_t i = 0; i < count; i++)
        snprintf(out[i], AMQ_TEST_PATH_MAX, "%s/segment-%016" PRIx64 ".seg", dir, ids[i]);
    return count;
}

/* Pop everything: the model's queue comes out in order, less the n ids of
 * lost, which are skipped; then the queue is empty and the stats count
 * lost_before + n lost. */
static void drain_expecting_lost(amq_frontier *f, model *m, const uint64_t *lost, size_t n,
                                 uint64_t lost_before)
{
    char buffer[AMQ_FRONTIER_MAX_URL + 1];
    size_t len, skipped = 0;
    uint64_t id;
    while (model_pop(m, &id)) {
        bool is_lost = false;
        for (size_t i = 0; i < n; i++)
            is_lost |= lost[i] == id;
        if (is_lost) {
            skipped++;
            continue;
        }
        amq_diag diag = { .message = "" };
        int status = amq_frontier_pop(buffer, sizeof buffer, &len, f, &diag);
        if (status != 1)
            fail_msg("pop answered %d (%s) where URL %" PRIu64 " was due", status, diag.message,
                     id);
        char url[URL_SIZE];
        size_t url_len = make_url(url, id);
        if (len != url_len || memcmp(buffer, url, len) != 0)
            fail_msg("popped '%.*s', expected '%s'", (int)len, buffer, url);
        if (skipped % 97 == 0)
            check_invariants(f);
    }
    assert_int_equal(amq_frontier_pop(buffer, sizeof buffer, &len, f, NULL), 0);
    assert_int_equal(skipped, n);
    check_invariants(f);
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_int_equal(st.lost, lost_before + n);
    assert_int_equal(st.queued, 0);
    assert_int_equal(st.popped + st.lost, st.enqueued);
}

static void test_damaged_segments(void **state)
{
    char dir[AMQ_TEST_PATH_MAX], segment[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(dir, state, "frontier");
    amq_frontier_options opt;
    options_for_test(&opt, AMQ_FRONTIER_MIN_MEMORY, AMQ_FRONTIER_MIN_SEGMENT);
    model m;
    make_saved(dir, &opt, &m);
    first_segment(segment, dir);
    off_t size = file_size(segment);

    /* Bytes after the checkpoint (a crash mid-append) are cut off. */
    int fd = open(segment, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "torn record", 11), 11);
    close(fd);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    assert_int_equal(file_size(segment), size);
    amq_frontier_close(f);

    /* A damaged record, the last of the first segment: skipped and counted,
     * and the URLs behind it still come out. Then the same with the file
     * cut short inside that record. */
    off_t offsets[4096];
    uint64_t ids[4096];
    size_t records = segment_records(segment, offsets, ids, 4096);
    assert_true(records > 2 && offsets[records - 1] < size - 20);
    size_t original_len;
    char *original = amq_test_read_file(segment, &original_len);
    assert_non_null(original);
    model copy = m;
    copy.queue = malloc(m.capacity * sizeof *m.queue);
    assert_non_null(copy.queue);
    for (int round = 0; round < 2; round++) {
        if (round == 0)
            flip_byte(segment, size - 20);
        else
            assert_int_equal(truncate(segment, size - 1), 0);
        memcpy(copy.queue, m.queue, m.capacity * sizeof *m.queue);
        copy.head = m.head;
        copy.tail = m.tail;
        open_ok(&f, dir, &opt);
        drain_expecting_lost(f, &copy, &ids[records - 1], 1, 0);
        amq_frontier_close(f);
        amq_test_write_file(segment, original, original_len);
    }
    free(copy.queue);
    free(original);

    /* A damaged header, a missing file: refused at open. */
    flip_byte(segment, 3);
    expect_open_error(dir, &opt, AMQ_ECORRUPT, "segment magic");
    flip_byte(segment, 3);
    flip_byte(segment, 16);
    expect_open_error(dir, &opt, AMQ_ECORRUPT, "says it is segment");
    flip_byte(segment, 16);
    /* A symbolic link in a segment's place is not followed: the file it
     * names, outside the directory, is neither read nor changed. */
    char outside[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(outside, state, "outside.seg");
    assert_int_equal(rename(segment, outside), 0);
    assert_int_equal(symlink(outside, segment), 0);
    expect_open_error(dir, &opt, AMQ_EIO, "cannot open segment file");
    assert_int_equal(file_size(outside), size);
    assert_int_equal(unlink(segment), 0);
    assert_int_equal(rename(outside, segment), 0);
    assert_int_equal(unlink(segment), 0);
    expect_open_error(dir, &opt, AMQ_ECORRUPT, "is missing");
    model_free(&m);
}

static void test_damaged_manifest_and_filter(void **state)
{
    char dir[AMQ_TEST_PATH_MAX], manifest[AMQ_TEST_PATH_MAX], filter[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(dir, state, "frontier");
    amq_test_scratch_path(manifest, state, "frontier/frontier.amq");
    amq_test_scratch_path(filter, state, "frontier/filter-0000000000000001.amq");
    amq_frontier_options opt;
    options_for_test(&opt, AMQ_FRONTIER_MIN_MEMORY, AMQ_FRONTIER_MIN_SEGMENT);
    model m;
    make_saved(dir, &opt, &m);

    /* The manifest is a container, but not a filter: amq_load says what it
     * is and how to open it. */
    amq_filter *not_a_filter = NULL;
    amq_diag load_diag = { .message = "" };
    assert_int_equal(amq_load(&not_a_filter, manifest, 0, &load_diag), AMQ_EUNSUPPORTED);
    assert_null(not_a_filter);
    assert_non_null(strstr(load_diag.message, "crawl frontier's manifest"));
    assert_non_null(strstr(load_diag.message, "amq_frontier_open"));

    /* Every single-byte change of the manifest, and every prefix, is
     * refused; nothing is removed meanwhile. */
    size_t len;
    char *original = amq_test_read_file(manifest, &len);
    assert_non_null(original);
    size_t segments = count_files(dir, "segment-");
    for (size_t i = 0; i <= len; i++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, original, len);
        size_t copy_len = len;
        if (i < len)
            copy[i] ^= 0x10;
        else
            copy_len = len / 2;
        amq_test_write_file(manifest, copy, copy_len);
        free(copy);
        amq_frontier *f = (amq_frontier *)&f;
        amq_diag diag = { .message = "" };
        int status = amq_frontier_open(&f, dir, &opt, &diag);
        if (status != AMQ_ECORRUPT && status != AMQ_EFORMAT && status != AMQ_EVERSION)
            fail_msg("manifest with byte %zu changed: %s (%s)", i, amq_strerror(status),
                     diag.message);
        assert_null(f);
        assert_non_null(strstr(diag.message, "frontier.amq"));
    }
    assert_int_equal(count_files(dir, "segment-"), segments);
    amq_test_write_file(manifest, original, len);

    /* The filter: damaged, from another checkpoint, missing. */
    char *filter_bytes = amq_test_read_file(filter, &len);
    assert_non_null(filter_bytes);
    flip_byte(filter, (off_t)len / 2);
    expect_open_error(dir, &opt, AMQ_ECORRUPT, "filter-0000000000000001.amq");
    make_writable(filter);
    amq_test_write_file(filter, filter_bytes, len);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    assert_int_equal(amq_frontier_push(f, "https://one.more/", 17, NULL), 1);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);
    char second[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(second, state, "frontier/filter-0000000000000002.amq");
    amq_test_write_file(second, filter_bytes, len); /* generation 1's filter */
    expect_open_error(dir, &opt, AMQ_ECORRUPT, "another checkpoint");
    assert_int_equal(unlink(second), 0);
    expect_open_error(dir, &opt, AMQ_ECORRUPT, "is missing");

    /* No manifest, but frontier files: damage, not a new frontier. */
    assert_int_equal(unlink(manifest), 0);
    expect_open_error(dir, &opt, AMQ_ECORRUPT, "manifest is missing");
    free(filter_bytes);
    free(original);
    model_free(&m);
}

/* Offsets of the u64 (and f64) fields of a manifest's parameter block;
 * the version is the u32 at 0. */
enum manifest_field {
    GENERATION = 4,
    FPR = 20,
    PUSHED = 44,
    ENQUEUED = 52,
    POPPED = 60,
    CHECKSUM = 68,
    NEXT_SEGMENT = 76,
    READ_OFFSET = 84,
    READ_RECORDS = 92,
    SEGMENTS = 100,
    LOST = 108,
    RETIRED = 116
};

/* The size of a manifest's parameter block: version 2; version 1 ends
 * before LOST. */
#define MANIFEST_PARAMS 124

/* Rewrite the manifest at path, a well-formed container still, with one
 * u64 field of its parameter block set to value. */
static void set_manifest_field(const char *path, enum manifest_field field, uint64_t value)
{
    size_t len;
    char *file = amq_test_read_file(path, &len);
    assert_non_null(file);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, (const uint8_t *)file, len, NULL), AMQ_OK);
    uint8_t params[MANIFEST_PARAMS];
    assert_int_equal(c.params_len, sizeof params);
    memcpy(params, c.params, sizeof params);
    amq__store_u64le(params + field, value);
    amq_test_write_container(path, AMQ__FAMILY_FRONTIER, &c.hasher, params, sizeof params,
                             c.payload, c.payload_len);
    free(file);
}

/* make_saved on the smallest frontier, then one counter of its manifest set
 * to 2^64 - 1: well-formed, though only damage gets there. */
static void make_saved_at_limit(void **state, char *dir, amq_frontier_options *opt, model *m,
                                enum manifest_field field)
{
    char manifest[AMQ_TEST_PATH_MAX];
    smallest_frontier(state, dir, opt);
    amq_test_scratch_path(manifest, state, "frontier/frontier.amq");
    make_saved(dir, opt, m);
    set_manifest_field(manifest, field, UINT64_MAX);
}

/* The checkpoint of generation in dir: its filter file is an ordinary
 * scalable-bloom file, which amq_load opens with the frontier's enqueued
 * URLs, and its trailer, amq_info's file_checksum, is the checksum the
 * manifest recorded. */
static void check_filter_file(const char *dir, uint64_t generation, uint64_t enqueued)
{
    char manifest[AMQ_TEST_PATH_MAX], filter[AMQ_TEST_PATH_MAX];
    snprintf(manifest, sizeof manifest, "%s/frontier.amq", dir);
    snprintf(filter, sizeof filter, "%s/filter-%016" PRIx64 ".amq", dir, generation);
    size_t len;
    char *bytes = amq_test_read_file(manifest, &len);
    assert_non_null(bytes);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, (const uint8_t *)bytes, len, NULL), AMQ_OK);
    assert_int_equal(amq__load_u64le(c.params + GENERATION), generation);
    uint64_t recorded = amq__load_u64le(c.params + CHECKSUM);
    free(bytes);
    bytes = amq_test_read_file(filter, &len);
    assert_non_null(bytes);
    assert_true(len >= AMQ__FORMAT_TRAILER_SIZE);
    assert_true(amq__load_u64le((const uint8_t *)bytes + len - AMQ__FORMAT_TRAILER_SIZE) ==
                recorded);
    free(bytes);
    amq_filter *loaded = NULL;
    amq_diag diag = { .message = "" };
    if (amq_load(&loaded, filter, 0, &diag) != AMQ_OK)
        fail_msg("%s does not load: %s", filter, diag.message);
    assert_string_equal(amq_filter_family(loaded), "scalable-bloom");
    amq_info info;
    assert_int_equal(amq_info_get(&info, loaded), AMQ_OK);
    assert_true(info.file_checksum == recorded);
    assert_int_equal(info.keys, enqueued);
    amq_free(loaded);
}

/* A save records the checksum its filter file's save reported (the
 * frontier reads no file back to learn it): checkpoint after checkpoint,
 * the manifest's checksum is the filter file's trailer, and the reopened
 * frontier finds it so. */
static void test_recorded_checksum(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    model m;
    make_saved(dir, &opt, &m);
    amq_frontier *f;
    amq_frontier_stats st;
    for (uint64_t generation = 1; generation <= 3; generation++) {
        open_ok(&f, dir, &opt);
        amq_frontier_stats_get(&st, f);
        assert_int_equal(st.generation, generation);
        check_filter_file(dir, generation, st.enqueued);
        for (uint64_t id = 0; id < 2000; id++)
            push_both(f, &m, 10000 * generation + id);
        pop_both(f, &m);
        assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
        amq_frontier_stats_get(&st, f);
        check_filter_file(dir, generation + 1, st.enqueued);
        amq_frontier_close(f);
    }
    reopen_and_check_seen(dir, &opt, &m);
    model_free(&m);
}

/* Write the manifest with the given parameter block and segment table
 * (a correct container: damage only the frontier can find), then expect
 * opening to fail with status and a message holding fragment. */
static void expect_manifest_refused(const char *dir, const char *path, const amq__container *c,
                                    uint32_t family, const uint8_t *params, uint32_t params_len,
                                    const uint8_t *table, uint64_t table_len, int status,
                                    const char *fragment)
{
    amq_test_write_container(path, family, &c->hasher, params, params_len, table, table_len);
    expect_open_error(dir, NULL, status, fragment);
}

static void test_crafted_manifests(void **state)
{
    char dir[AMQ_TEST_PATH_MAX], path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(dir, state, "frontier");
    amq_test_scratch_path(path, state, "frontier/frontier.amq");
    amq_frontier_options opt;
    options_for_test(&opt, AMQ_FRONTIER_MIN_MEMORY, AMQ_FRONTIER_MIN_SEGMENT);
    model m;
    make_saved(dir, &opt, &m);
    size_t len;
    char *file = amq_test_read_file(path, &len);
    assert_non_null(file);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, (const uint8_t *)file, len, NULL), AMQ_OK);
    assert_int_equal(c.params_len, MANIFEST_PARAMS);
    assert_true(c.payload_len >= 2 * AMQ__SPILL_ENTRY_SIZE);

    /* Fields of the parameter block, each set to a value the loader must
     * refuse. */
    const uint8_t *p = c.params;
    double bad_fpr = 1.5;
    uint64_t bad_fpr_bits;
    memcpy(&bad_fpr_bits, &bad_fpr, sizeof bad_fpr_bits);
    const uint64_t first_length = amq__load_u64le(c.payload + 8);
    struct {
        size_t offset;
        uint64_t value;
        int status;
        const char *fragment;
    } fields[] = {
        { FPR, bad_fpr_bits, AMQ_ECORRUPT, "out of range" },
        { ENQUEUED, amq__load_u64le(p + PUSHED) + 1, AMQ_ECORRUPT, "inconsistent" },
        { POPPED, amq__load_u64le(p + ENQUEUED) + 1, AMQ_ECORRUPT, "inconsistent" },
        { POPPED, amq__load_u64le(p + POPPED) + 1, AMQ_ECORRUPT, "unread URLs" },
        { PUSHED, amq__load_u64le(p + PUSHED) + 1, AMQ_OK, "" }, /* harmless */
        { NEXT_SEGMENT, 0, AMQ_ECORRUPT, "next segment id is 0" },
        { NEXT_SEGMENT, 2, AMQ_ECORRUPT, "has id" },
        { GENERATION, 0, AMQ_ECORRUPT, "generation 0" },
        { GENERATION, 2, AMQ_ECORRUPT, "is missing" }, /* no filter-...2.amq */
        { CHECKSUM, amq__load_u64le(p + CHECKSUM) ^ 1, AMQ_ECORRUPT, "another checkpoint" },
        { READ_OFFSET, first_length + 1, AMQ_ECORRUPT, "read position" },
        { READ_OFFSET, AMQ__SEGMENT_HEADER, AMQ_ECORRUPT, "read position" },
        { READ_RECORDS, 0, AMQ_ECORRUPT, "read position" },
        { LOST, amq__load_u64le(p + ENQUEUED) - amq__load_u64le(p + POPPED) + 1, AMQ_ECORRUPT,
          "inconsistent" },
        { LOST, 1, AMQ_ECORRUPT, "unread URLs" },
        { RETIRED, 1, AMQ_ECORRUPT, "segment table" },
    };
    uint8_t params[MANIFEST_PARAMS];
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        memcpy(params, c.params, sizeof params);
        amq__store_u64le(params + fields[i].offset, fields[i].value);
        if (fields[i].status == AMQ_OK) {
            amq_test_write_container(path, AMQ__FAMILY_FRONTIER, &c.hasher, params, MANIFEST_PARAMS,
                                     c.payload, c.payload_len);
            amq_frontier *f;
            open_ok(&f, dir, &opt);
            amq_frontier_close(f);
            continue;
        }
        expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, params, MANIFEST_PARAMS,
                                c.payload, c.payload_len, fields[i].status, fields[i].fragment);
    }
    memcpy(params, c.params, sizeof params);
    amq__store_u32le(params, 3);
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, params, MANIFEST_PARAMS, c.payload,
                            c.payload_len, AMQ_EVERSION, "newer");
    amq__store_u32le(params, 0);
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, params, MANIFEST_PARAMS, c.payload,
                            c.payload_len, AMQ_ECORRUPT, "parameter block");
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, c.params, 100, c.payload,
                            c.payload_len, AMQ_ECORRUPT, "parameter block");
    /* Version 1's block with version 2, and version 2's with version 1. */
    memcpy(params, c.params, sizeof params);
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, params, LOST, c.payload,
                            c.payload_len, AMQ_ECORRUPT, "parameter block");
    amq__store_u32le(params, 1);
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, params, MANIFEST_PARAMS, c.payload,
                            c.payload_len, AMQ_ECORRUPT, "parameter block");
    /* A retired segment of an id the checkpoint never gave out. */
    uint8_t *with_retired = malloc(c.payload_len + 8);
    assert_non_null(with_retired);
    memcpy(with_retired, c.payload, c.payload_len);
    amq__store_u64le(with_retired + c.payload_len, amq__load_u64le(p + NEXT_SEGMENT));
    memcpy(params, c.params, sizeof params);
    amq__store_u64le(params + RETIRED, 1);
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, params, MANIFEST_PARAMS,
                            with_retired, c.payload_len + 8, AMQ_ECORRUPT, "retired segment");
    free(with_retired);
    /* A manifest of version 1 (108 bytes, nothing lost or retired) still
     * opens: directories written before version 2 keep working. */
    memcpy(params, c.params, sizeof params);
    amq__store_u32le(params, 1);
    amq_test_write_container(path, AMQ__FAMILY_FRONTIER, &c.hasher, params, LOST, c.payload,
                             c.payload_len);
    amq_frontier *v1;
    open_ok(&v1, dir, &opt);
    amq_frontier_close(v1);
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_SCALABLE_BLOOM, c.params, MANIFEST_PARAMS,
                            c.payload, c.payload_len, AMQ_ECORRUPT, "not a frontier manifest");

    /* The segment table: an entry short, ids out of order, a segment
     * listed with more records than its bytes can hold. */
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, c.params, MANIFEST_PARAMS,
                            c.payload, c.payload_len - AMQ__SPILL_ENTRY_SIZE, AMQ_ECORRUPT,
                            "segment table");
    uint8_t *table = malloc(c.payload_len);
    assert_non_null(table);
    memcpy(table, c.payload, c.payload_len);
    memcpy(table, c.payload + AMQ__SPILL_ENTRY_SIZE, 8);
    memcpy(table + AMQ__SPILL_ENTRY_SIZE, c.payload, 8);
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, c.params, MANIFEST_PARAMS, table,
                            c.payload_len, AMQ_ECORRUPT, "has id");
    memcpy(table, c.payload, c.payload_len);
    amq__store_u64le(table + AMQ__SPILL_ENTRY_SIZE + 16, first_length);
    expect_manifest_refused(dir, path, &c, AMQ__FAMILY_FRONTIER, c.params, MANIFEST_PARAMS, table,
                            c.payload_len, AMQ_ECORRUPT, "cannot hold");
    free(table);

    /* Restored, it opens, and every segment file survived the refusals. */
    amq_test_write_file(path, file, len);
    reopen_and_check_seen(dir, &opt, &m);
    free(file);
    model_free(&m);
}

/* A manifest may say that the next segment id is the last there is,
 * 2^64 - 1: well-formed, though only damage gets there. A spill that needs
 * a new segment then answers AMQ_ERANGE, and no save writes a manifest that
 * would not reopen (the id after 2^64 - 1 would be 0). */
static void test_segment_ids_exhausted(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    model m;
    make_saved_at_limit(state, dir, &opt, &m, NEXT_SEGMENT);
    amq_frontier *f;
    open_ok(&f, dir, &opt);

    /* Enough URLs to fill the tail, the newest segment and one more. */
    amq_diag diag = { .message = "" };
    int status = 1;
    for (uint64_t id = 1000000; status >= 0 && id < 1020000; id++) {
        char url[URL_SIZE];
        status = amq_frontier_push(f, url, make_url(url, id), &diag);
    }
    assert_int_equal(status, AMQ_ERANGE);
    assert_non_null(strstr(diag.message, "segment id"));
    check_invariants(f);
    assert_int_equal(amq_frontier_save(f, &diag), AMQ_ERANGE);
    amq_frontier_close(f);

    /* The checkpoint is still the one made before. */
    reopen_and_check_seen(dir, &opt, &m);
    model_free(&m);
}

/* A manifest of generation 2^64 - 1 (well-formed; only damage gets there)
 * opens, and a save answers AMQ_ERANGE rather than write generation 0,
 * which reopening refuses for a frontier that is not empty. */
static void test_last_generation(void **state)
{
    char dir[AMQ_TEST_PATH_MAX], filter[AMQ_TEST_PATH_MAX], last_filter[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    model m;
    make_saved_at_limit(state, dir, &opt, &m, GENERATION);
    amq_test_scratch_path(filter, state, "frontier/filter-0000000000000001.amq");
    amq_test_scratch_path(last_filter, state, "frontier/filter-ffffffffffffffff.amq");
    assert_int_equal(rename(filter, last_filter), 0);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_true(st.generation == UINT64_MAX);
    char url[URL_SIZE];
    assert_int_equal(amq_frontier_push(f, url, make_url(url, 1000000), NULL), 1);
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_frontier_save(f, &diag), AMQ_ERANGE);
    assert_non_null(strstr(diag.message, "last"));
    amq_frontier_close(f);

    reopen_and_check_seen(dir, &opt, &m);
    model_free(&m);
}

/* A manifest that counts 2^64 - 1 pushes (well-formed; only damage gets
 * there) opens, and another push answers AMQ_ERANGE, changing nothing,
 * rather than wrap the count below the URLs enqueued, which reopening
 * refuses. */
static void test_push_count_at_its_limit(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    model m;
    make_saved_at_limit(state, dir, &opt, &m, PUSHED);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    char url[URL_SIZE];
    amq_diag diag = { .message = "" };
    /* A new URL and one enqueued before: either would count a push. */
    assert_int_equal(amq_frontier_push(f, url, make_url(url, 1000000), &diag), AMQ_ERANGE);
    assert_non_null(strstr(diag.message, "pushes"));
    assert_int_equal(amq_frontier_push(f, url, make_url(url, 0), NULL), AMQ_ERANGE);
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_true(st.pushed == UINT64_MAX);
    assert_int_equal(st.enqueued, m.enqueued);
    check_invariants(f);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);

    open_ok(&f, dir, &opt);
    amq_frontier_stats_get(&st, f);
    assert_true(st.pushed == UINT64_MAX);
    while (model_queued(&m) > 0)
        pop_both(f, &m);
    pop_both(f, &m);
    amq_frontier_close(f);
    model_free(&m);
}

/* Damage in the middle of the spill: a record with a changed URL byte in
 * the middle of one segment and its last record with a wrong check, a
 * record whose length field is damaged (so the next one must be found by
 * its check) in the middle of another, and
 * the newest segment cut short, while the frontier is open, inside one of
 * its records. Popping everything yields every undamaged URL once, in
 * order; the lost count is exact and survives a save. */
static void test_damaged_records_skipped(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    model m;
    make_saved(dir, &opt, &m);
    char segments[16][AMQ_TEST_PATH_MAX];
    size_t count = segment_paths(segments, 16, dir);
    assert_true(count >= 4);

    uint64_t lost[4096];
    size_t lost_count = 0;
    off_t offsets[4096];
    uint64_t ids[4096];
    /* segment 2: a URL byte of its middle record, and the check of its
     * last one */
    size_t n = segment_records(segments[1], offsets, ids, 4096);
    flip_byte(segments[1], offsets[n / 2] + 10);
    lost[lost_count++] = ids[n / 2];
    flip_byte(segments[1], file_size(segments[1]) - 1);
    lost[lost_count++] = ids[n - 1];
    /* segment 3: the length field of its middle record, made huge */
    n = segment_records(segments[2], offsets, ids, 4096);
    flip_byte(segments[2], offsets[n / 2] + 3);
    lost[lost_count++] = ids[n / 2];

    amq_frontier *f;
    open_ok(&f, dir, &opt);
    /* the newest segment, cut inside its third record from the end */
    const char *newest = segments[count - 1];
    n = segment_records(newest, offsets, ids, 4096);
    assert_true(n > 3);
    assert_int_equal(truncate(newest, offsets[n - 3] + 6), 0);
    for (size_t i = n - 3; i < n; i++)
        lost[lost_count++] = ids[i];

    drain_expecting_lost(f, &m, lost, lost_count, 0);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);

    /* The count is kept with the checkpoint, and a lost URL stays seen: it
     * was enqueued once. */
    open_ok(&f, dir, &opt);
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_int_equal(st.lost, lost_count);
    assert_int_equal(st.queued, 0);
    char url[URL_SIZE];
    assert_int_equal(amq_frontier_push(f, url, make_url(url, lost[0]), NULL), 0);
    check_invariants(f);
    amq_frontier_close(f);
    model_free(&m);
}

/* A whole segment unreadable past its header: its records are all lost,
 * the next segment's all come out. And a segment cut short before the
 * frontier is opened opens (it is not refused as before, which stopped the
 * whole queue). */
static void test_segment_lost_whole(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    model m;
    make_saved(dir, &opt, &m);
    char segments[16][AMQ_TEST_PATH_MAX];
    size_t count = segment_paths(segments, 16, dir);
    assert_true(count >= 3);
    off_t offsets[4096];
    uint64_t ids[4096];
    size_t n = segment_records(segments[1], offsets, ids, 4096);
    assert_int_equal(truncate(segments[1], AMQ__SEGMENT_HEADER), 0);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    drain_expecting_lost(f, &m, ids, n, 0);
    amq_frontier_close(f);
    model_free(&m);
}

/* One opener at a time, across processes: n processes open the same new
 * directory at once; exactly one gets it, every other is refused with
 * AMQ_EIO and a message that names the directory and says it is locked. */
static void test_lock_across_processes(void **state)
{
    for (int n = 2; n <= 8; n++) {
        char dir[AMQ_TEST_PATH_MAX], name[32];
        snprintf(name, sizeof name, "locked-%d", n);
        amq_test_scratch_path(dir, state, name);
        int go[2], results[2], release[2];
        assert_int_equal(pipe(go), 0);
        assert_int_equal(pipe(results), 0);
        assert_int_equal(pipe(release), 0);
        pid_t pids[8];
        for (int i = 0; i < n; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] > 0)
                continue;
            close(go[1]);
            close(results[0]);
            close(release[1]);
            char byte;
            while (read(go[0], &byte, 1) < 0 && errno == EINTR)
                ;
            amq_frontier *f = NULL;
            amq_diag diag = { .message = "" };
            int status = amq_frontier_open(&f, dir, NULL, &diag);
            char answer = status == AMQ_OK ? 'O'
                          : status == AMQ_EIO && strstr(diag.message, "locked") &&
                                  strstr(diag.message, dir) && f == NULL
                              ? 'L'
                              : 'X';
            if (answer == 'X')
                fprintf(stderr, "open answered %s: %s\n", amq_strerror(status), diag.message);
            if (write(results[1], &answer, 1) != 1)
                _exit(2);
            if (f) { /* hold it until every process has tried */
                while (read(release[0], &byte, 1) < 0 && errno == EINTR)
                    ;
                amq_frontier_close(f);
            }
            _exit(0);
        }
        close(go[0]);
        close(results[1]);
        close(release[0]);
        close(go[1]); /* every child reads end-of-file at once: go */
        int opened = 0, locked = 0;
        for (int i = 0; i < n; i++) {
            char answer = 0;
            assert_int_equal(read(results[0], &answer, 1), 1);
            opened += answer == 'O';
            locked += answer == 'L';
        }
        close(release[1]);
        close(results[0]);
        for (int i = 0; i < n; i++) {
            int wstatus;
            assert_int_equal(waitpid(pids[i], &wstatus, 0), pids[i]);
            assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
        }
        assert_int_equal(opened, 1);
        assert_int_equal(locked, n - 1);
        amq_frontier *f;
        open_ok(&f, dir, NULL); /* released with its holder */
        amq_frontier_close(f);
    }
}

/* The directory renamed away while open and a new one made at its old
 * path: the save goes to the directory the frontier opened, which reopens
 * under its new name with every URL, and the new directory is untouched. */
static void test_directory_renamed_while_open(void **state)
{
    char dir[AMQ_TEST_PATH_MAX], moved[AMQ_TEST_PATH_MAX], notes[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    amq_test_scratch_path(moved, state, "frontier-moved");
    amq_test_scratch_path(notes, state, "frontier/notes.txt");
    model m;
    make_saved(dir, &opt, &m);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    for (uint64_t id = 6000; id < 9000; id++)
        push_both(f, &m, id);
    for (int i = 0; i < 50; i++)
        pop_both(f, &m);
    assert_int_equal(rename(dir, moved), 0);
    assert_int_equal(mkdir(dir, 0777), 0);
    amq_test_write_file(notes, "mine", 4);
    for (uint64_t id = 9000; id < 12000; id++)
        push_both(f, &m, id);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);

    assert_int_equal(count_files(dir, ""), 3); /* ".", "..", notes.txt */
    assert_int_equal(file_size(notes), 4);
    reopen_and_check_seen(moved, &opt, &m);
    model_free(&m);
}

/* Put name into dir with the given bytes. */
static void put_file(const char *dir, const char *name, const void *bytes, size_t len)
{
    char path[2 * AMQ_TEST_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    amq_test_write_file(path, bytes, len);
}

/* Whether dir/name exists with exactly these bytes. */
static bool file_is(const char *dir, const char *name, const void *bytes, size_t len)
{
    char path[2 * AMQ_TEST_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t got_len;
    char *got = amq_test_read_file(path, &got_len);
    bool same = got && got_len == len && memcmp(got, bytes, len) == 0;
    free(got);
    return same;
}

/* Files named like the frontier's that it did not write are never
 * removed nor written: not at reopening, not when a new segment would take
 * the name (the id is skipped). */
static void test_foreign_files_kept(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    model m;
    make_saved(dir, &opt, &m);
    char segments[16][AMQ_TEST_PATH_MAX];
    size_t count = segment_paths(segments, 16, dir);
    uint64_t newest;
    assert_true(amq__segment_name_parse(strrchr(segments[count - 1], '/') + 1, &newest));
    char next[64], after[64], low[64];
    snprintf(next, sizeof next, "segment-%016" PRIx64 ".seg", newest + 1);
    snprintf(after, sizeof after, "segment-%016" PRIx64 ".seg", newest + 5);
    snprintf(low, sizeof low, "segment-%016" PRIx64 ".seg", (uint64_t)0);
    /* one with a segment header naming another id */
    uint8_t header[AMQ__SEGMENT_HEADER] = { 0x89, 'A', 'M', 'Q', 'S', 'E', 'G', '\n', 1 };
    amq__store_u64le(header + 16, newest + 99);
    const char *names[] = {
        next, after, low, "filter-0000000000000007.amq", ".frontier.amq.tmp.Ab12cd", "notes.txt"
    };
    for (size_t i = 0; i < 6; i++) {
        if (i == 1)
            put_file(dir, names[i], header, sizeof header);
        else
            put_file(dir, names[i], "not the frontier's", 18);
    }
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    /* spill past the taken ids, and save */
    for (uint64_t id = 6000; id < 20000; id++)
        push_both(f, &m, id);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);
    open_ok(&f, dir, &opt);
    drain_and_check_seen(f, &m);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);
    open_ok(&f, dir, &opt);
    amq_frontier_close(f);
    for (size_t i = 0; i < 6; i++) {
        bool kept = i == 1 ? file_is(dir, names[i], header, sizeof header)
                           : file_is(dir, names[i], "not the frontier's", 18);
        if (!kept)
            fail_msg("%s was removed or changed", names[i]);
    }
    model_free(&m);
}

/* What a crash leaves (spill files made after the checkpoint, a save's
 * files, the removals a save had still to make) is removed when the
 * checkpoint is reopened. */
static void test_leftovers_swept(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    model m;
    make_saved(dir, &opt, &m);
    /* a second checkpoint, which retires a segment read to the end */
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    size_t before = count_files(dir, "segment-");
    for (int i = 0; i < 2000; i++)
        pop_both(f, &m);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);
    size_t listed = count_files(dir, "segment-");
    assert_true(listed < before);

    /* A crash: a child spills new segments and dies without closing. */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        amq_frontier *g;
        if (amq_frontier_open(&g, dir, &opt, NULL) != AMQ_OK)
            _exit(1);
        for (uint64_t id = 100000; id < 110000; id++) {
            char url[URL_SIZE];
            if (amq_frontier_push(g, url, make_url(url, id), NULL) < 0)
                _exit(1);
        }
        _exit(0);
    }
    int wstatus;
    assert_int_equal(waitpid(child, &wstatus, 0), child);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    assert_true(count_files(dir, "segment-") > listed);
    /* ... and a save's files of the next generation, and the previous
     * checkpoint's filter, as a crash between the commit and the removals
     * leaves it */
    put_file(dir, ".frontier.amq.tmp", "x", 1);
    put_file(dir, ".filter-0000000000000003.amq.tmp", "x", 1);
    put_file(dir, "filter-0000000000000003.amq", "x", 1);
    put_file(dir, "filter-0000000000000001.amq", "x", 1);
    open_ok(&f, dir, &opt);
    assert_int_equal(count_files(dir, "segment-"), listed);
    assert_int_equal(count_files(dir, ".frontier.amq.tmp"), 0);
    assert_int_equal(count_files(dir, ".filter-"), 0);
    assert_int_equal(count_files(dir, "filter-"), 1);
    drain_and_check_seen(f, &m);
    amq_frontier_close(f);
    model_free(&m);
}

/* The filter file is the frontier's alone. It is read-only, so `amq add`
 * (amq_save over it) is refused; changed anyway, the reopen says the
 * filter was changed outside the frontier, naming the frontier. */
static void test_filter_changed_outside(void **state)
{
    char dir[AMQ_TEST_PATH_MAX], filter[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    amq_test_scratch_path(filter, state, "frontier/filter-0000000000000001.amq");
    model m;
    make_saved(dir, &opt, &m);
    struct stat st;
    assert_int_equal(stat(filter, &st), 0);
    assert_int_equal(st.st_mode & 0222, 0);
    size_t len;
    char *original = amq_test_read_file(filter, &len);
    assert_non_null(original);

    amq_filter *loaded = NULL;
    assert_int_equal(amq_load(&loaded, filter, 0, NULL), AMQ_OK);
    assert_int_equal(amq_add(loaded, "https://added.outside/", 22), AMQ_OK);
    assert_int_equal(amq_save(loaded, filter, NULL), AMQ_EIO);
    assert_true(file_is(dir, "filter-0000000000000001.amq", original, len));
    make_writable(filter);
    assert_int_equal(amq_save(loaded, filter, NULL), AMQ_OK);
    amq_free(loaded);

    amq_frontier *f = (amq_frontier *)&f;
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_frontier_open(&f, dir, &opt, &diag), AMQ_ECORRUPT);
    assert_null(f);
    assert_non_null(strstr(diag.message, "changed outside the frontier"));
    assert_non_null(strstr(diag.message, "filter-0000000000000001.amq"));
    assert_non_null(strstr(diag.message, dir + strlen(dir) - strlen("frontier")));

    amq_test_write_file(filter, original, len);
    reopen_and_check_seen(dir, &opt, &m);
    free(original);
    model_free(&m);
}

/* ---- whether a path is a frontier's filter ----------------------------------------- */

/* amq_frontier_is_filter(directory, capacity, path): its answer, and what
 * it left in a buffer of capacity bytes (of 2 * AMQ_TEST_PATH_MAX). */
static int is_filter(char *directory, size_t capacity, const char *path)
{
    amq_diag diag = { .message = "" };
    int answer = amq_frontier_is_filter(directory, capacity, path, &diag);
    if (answer >= 0 && diag.message[0] != '\0')
        fail_msg("answered %d for %s, but wrote a message: %s", answer, path, diag.message);
    if (answer < 0 && diag.message[0] == '\0')
        fail_msg("failed with %s for %s without a message", amq_strerror(answer), path);
    return answer;
}

/* A frontier's filter file is told by its name and the manifest beside
 * it, and answered with the frontier's directory; a look-alike without a
 * manifest, the manifest itself and other names are not; odd arguments
 * get their documented answers. */
static void test_is_filter(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    assert_int_equal(amq_frontier_push(f, "https://a.example/", 18, NULL), 1);
    assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
    amq_frontier_close(f);

    char path[2 * AMQ_TEST_PATH_MAX], out[2 * AMQ_TEST_PATH_MAX];
    snprintf(path, sizeof path, "%s/filter-0000000000000001.amq", dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0); /* the file the save wrote */
    assert_int_equal(is_filter(out, sizeof out, path), 1);
    assert_string_equal(out, dir);
    /* By name: a generation the frontier has not written is its own too. */
    snprintf(path, sizeof path, "%s/filter-00000000000000ff.amq", dir);
    assert_int_equal(is_filter(out, sizeof out, path), 1);
    assert_string_equal(out, dir);

    /* Not filter files: the manifest, other names of the directory, names
     * that only look like a filter's. */
    const char *others[] = {
        "frontier.amq",
        "segment-0000000000000001.seg",
        ".filter-0000000000000001.amq.tmp",
        "filter-000000000000000A.amq", /* the frontier writes lowercase */
        "filter-000000000000001.amq",  /* 15 digits */
        "filter-00000000000000001.amq",
        "filter-0000000000000001.amq.bak",
        "filter-0000000000000001.amq/",
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, others[i]);
        memset(out, 'x', sizeof out);
        if (is_filter(out, sizeof out, path) != 0)
            fail_msg("%s was taken for a frontier's filter", others[i]);
        assert_string_equal(out, "");
    }

    /* The same file, under the same name, in a directory without a
     * manifest. */
    char lookalike[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(lookalike, state, "lookalike");
    assert_int_equal(mkdir(lookalike, 0777), 0);
    snprintf(path, sizeof path, "%s/filter-0000000000000001.amq", dir);
    size_t len;
    char *bytes = amq_test_read_file(path, &len);
    assert_non_null(bytes);
    put_file(lookalike, "filter-0000000000000001.amq", bytes, len);
    free(bytes);
    snprintf(path, sizeof path, "%s/filter-0000000000000001.amq", lookalike);
    memset(out, 'x', sizeof out);
    assert_int_equal(is_filter(out, sizeof out, path), 0);
    assert_string_equal(out, "");
    /* A directory part that is a file, or is missing. */
    snprintf(path, sizeof path, "%s/filter-0000000000000001.amq/filter-0000000000000002.amq",
             lookalike);
    assert_int_equal(is_filter(out, sizeof out, path), 0);
    snprintf(path, sizeof path, "%s/missing/filter-0000000000000001.amq", lookalike);
    assert_int_equal(is_filter(out, sizeof out, path), 0);

    /* The manifest is found as amq_frontier_open finds it: through a
     * symbolic link; one that leads nowhere is no manifest; a loop cannot
     * be told, and says so. */
    char manifest[2 * AMQ_TEST_PATH_MAX], link_path[2 * AMQ_TEST_PATH_MAX];
    snprintf(manifest, sizeof manifest, "%s/frontier.amq", dir);
    snprintf(link_path, sizeof link_path, "%s/frontier.amq", lookalike);
    snprintf(path, sizeof path, "%s/filter-0000000000000001.amq", lookalike);
    assert_int_equal(symlink(manifest, link_path), 0);
    assert_int_equal(is_filter(out, sizeof out, path), 1);
    assert_string_equal(out, lookalike);
    assert_int_equal(unlink(link_path), 0);
    assert_int_equal(symlink("nowhere", link_path), 0);
    assert_int_equal(is_filter(out, sizeof out, path), 0);
    assert_int_equal(unlink(link_path), 0);
    assert_int_equal(symlink("frontier.amq", link_path), 0);
    memset(out, 'x', sizeof out);
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_frontier_is_filter(out, sizeof out, path, &diag), AMQ_EIO);
    assert_int_equal(errno, ELOOP);
    assert_non_null(strstr(diag.message, path));
    assert_string_equal(out, "");
    assert_int_equal(unlink(link_path), 0);

    /* A relative path: the directory as it names it, "." for none. */
    int cwd = open(".", O_RDONLY | O_DIRECTORY);
    assert_true(cwd >= 0);
    assert_int_equal(chdir(dir), 0);
    int in_dir = is_filter(out, sizeof out, "filter-0000000000000001.amq");
    bool in_dir_dot = strcmp(out, ".") == 0;
    assert_int_equal(chdir(".."), 0);
    int beside = is_filter(out, sizeof out, "frontier/filter-0000000000000001.amq");
    assert_int_equal(fchdir(cwd), 0);
    close(cwd);
    assert_int_equal(in_dir, 1);
    assert_true(in_dir_dot);
    assert_int_equal(beside, 1);
    assert_string_equal(out, "frontier");

    /* Odd arguments. */
    snprintf(path, sizeof path, "%s/filter-0000000000000001.amq", dir);
    size_t dir_len = strlen(dir);
    memset(out, 'x', sizeof out);
    assert_int_equal(is_filter(out, dir_len, path), AMQ_ERANGE); /* no room for the NUL */
    assert_int_equal(out[0], '\0');
    assert_int_equal(out[1], 'x'); /* nothing written past the first byte */
    assert_int_equal(is_filter(out, dir_len + 1, path), 1);
    assert_string_equal(out, dir);
    assert_int_equal(is_filter(NULL, 0, path), AMQ_ERANGE);
    assert_int_equal(is_filter(NULL, 0, manifest), 0); /* a no needs no room */
    assert_int_equal(is_filter(NULL, 16, path), AMQ_EINVAL);
    memset(out, 'x', sizeof out);
    assert_int_equal(is_filter(out, sizeof out, NULL), AMQ_EINVAL);
    assert_string_equal(out, "");
    assert_int_equal(amq_frontier_is_filter(out, sizeof out, NULL, NULL), AMQ_EINVAL);
    assert_int_equal(is_filter(out, sizeof out, ""), 0);
    assert_int_equal(is_filter(out, sizeof out, "/"), 0);
    /* A path longer than the system takes fails as stat would. */
    size_t long_len = PATH_MAX + 64;
    char *long_path = malloc(long_len + 32);
    assert_non_null(long_path);
    for (size_t i = 0; i < long_len; i += 2)
        memcpy(long_path + i, "a/", 2);
    strcpy(long_path + long_len, "filter-0000000000000001.amq");
    char *long_out = malloc(long_len + 64);
    assert_non_null(long_out);
    assert_int_equal(is_filter(long_out, long_len + 64, long_path), AMQ_EIO);
    assert_int_equal(errno, ENAMETOOLONG);
    free(long_path);
    free(long_out);
}

/* ---- errors ------------------------------------------------------------------------ */

static void test_option_and_directory_errors(void **state)
{
    char dir[AMQ_TEST_PATH_MAX], file[AMQ_TEST_PATH_MAX], busy[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(dir, state, "frontier");
    amq_test_scratch_path(file, state, "a-file");
    amq_test_scratch_path(busy, state, "busy");
    amq_test_write_file(file, "x", 1);
    amq_frontier_options opt;

    amq_frontier_options_init(&opt);
    opt.fpr = 0;
    expect_open_error(dir, &opt, AMQ_EINVAL, "option fpr");
    opt.fpr = 1;
    expect_open_error(dir, &opt, AMQ_EINVAL, "option fpr");
    opt.fpr = NAN;
    expect_open_error(dir, &opt, AMQ_EINVAL, "option fpr");
    amq_frontier_options_init(&opt);
    opt.memory_bytes = 0;
    expect_open_error(dir, &opt, AMQ_EINVAL, "option memory_bytes");
    amq_frontier_options_init(&opt);
    opt.memory_urls = 1;
    expect_open_error(dir, &opt, AMQ_EINVAL, "option memory_urls");
    amq_frontier_options_init(&opt);
    opt.segment_bytes = 100;
    expect_open_error(dir, &opt, AMQ_EINVAL, "option segment_bytes");
    amq_frontier_options_init(&opt);
    opt.initial_capacity = 0;
    expect_open_error(dir, &opt, AMQ_EINVAL, "option initial_capacity");
    amq_frontier_options_init(&opt);
    opt.growth = 100000;
    expect_open_error(dir, &opt, AMQ_EINVAL, "growth");
    assert_int_equal(count_files(dir, "frontier.amq"), 0); /* nothing was made */

    expect_open_error(file, NULL, AMQ_EINVAL, "is not a directory");
    expect_open_error("", NULL, AMQ_EINVAL, "empty");
    char missing[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(missing, state, "no/such/parent");
    expect_open_error(missing, NULL, AMQ_EIO, "cannot create directory");
    /* a directory holding other things */
    amq_test_scratch_path(dir, state, "");
    expect_open_error(dir, NULL, AMQ_EINVAL, "holds no frontier");

    /* one opener at a time */
    amq_frontier *f;
    open_ok(&f, busy, NULL);
    expect_open_error(busy, NULL, AMQ_EIO, "locked");
    amq_frontier_close(f);
    open_ok(&f, busy, NULL);
    amq_frontier_close(f);
}

static void test_url_limits(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    char *big = malloc(AMQ_FRONTIER_MAX_URL + 2);
    assert_non_null(big);
    for (size_t i = 0; i < AMQ_FRONTIER_MAX_URL + 1; i++)
        big[i] = (char)('a' + i % 26);
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_frontier_push(f, big, AMQ_FRONTIER_MAX_URL + 1, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "longer than"));
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_int_equal(st.pushed, 0);
    /* The largest URLs, many, so that they spill and are read back; an
     * empty URL among them. */
    for (int i = 0; i < 12; i++) {
        big[0] = (char)('A' + i);
        assert_int_equal(amq_frontier_push(f, big, AMQ_FRONTIER_MAX_URL, NULL), 1);
    }
    assert_int_equal(amq_frontier_push(f, "", 0, NULL), 1);
    assert_int_equal(amq_frontier_push(f, NULL, 0, NULL), 0);
    amq_frontier_stats_get(&st, f);
    assert_true(st.queued_on_disk > 0);
    char *out = malloc(AMQ_FRONTIER_MAX_URL + 1);
    assert_non_null(out);
    size_t len = 0;
    /* too small a buffer: the needed length, and the URL stays */
    assert_int_equal(amq_frontier_pop(out, 100, &len, f, NULL), AMQ_ERANGE);
    assert_int_equal(len, AMQ_FRONTIER_MAX_URL);
    assert_int_equal(amq_frontier_pop(out, AMQ_FRONTIER_MAX_URL, &len, f, NULL), AMQ_ERANGE);
    for (int i = 0; i < 12; i++) {
        assert_int_equal(amq_frontier_pop(out, AMQ_FRONTIER_MAX_URL + 1, &len, f, NULL), 1);
        assert_int_equal(len, AMQ_FRONTIER_MAX_URL);
        big[0] = (char)('A' + i);
        assert_memory_equal(out, big, len);
        check_invariants(f);
    }
    assert_int_equal(amq_frontier_pop(out, 1, &len, f, NULL), 1);
    assert_int_equal(len, 0);
    assert_int_equal(out[0], '\0');
    assert_int_equal(amq_frontier_pop(NULL, 0, &len, f, NULL), 0);
    free(out);
    free(big);
    amq_frontier_close(f);
}

/* ---- canonicalization -------------------------------------------------------------- */

static void test_canonical_url(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        { "HTTP://Example.COM/Path/%7Euser?Q=A#Frag", "http://example.com/Path/%7Euser?Q=A" },
        { "https://User:PassWord@Example.com:443/", "https://User:PassWord@example.com/" },
        { "http://a@b@Host.COM/", "http://a@b@host.com/" },
        { "http://[2001:DB8::1]:8080/x", "http://[2001:db8::1]:8080/x" },
        { "http://[::1]:80", "http://[::1]/" },
        { "http://Example.com", "http://example.com/" },
        { "http://example.com?q=1", "http://example.com/?q=1" },
        { "http://example.com#f", "http://example.com/" },
        { "http://example.com:/p", "http://example.com/p" },
        { "http://example.com:080/p", "http://example.com/p" },
        { "https://example.com:80/p", "https://example.com:80/p" },
        { "http://example.com:443/p", "http://example.com:443/p" },
        { "http://example.com:99999/p", "http://example.com:99999/p" },
        { "FTP://Example.com:21/a", "ftp://example.com:21/a" },
        { "ftp://example.com", "ftp://example.com" },
        { "http://%C3%A9xample.COM/%C3%A9", "http://%C3%A9xample.com/%C3%A9" },
        { "HtTp://a.b/A%2Fb?X=%2F#%2F", "http://a.b/A%2Fb?X=%2F" },
        { "file:///etc/Passwd", "file:///etc/Passwd" },
        { "svn+SSH://Host/r", "svn+ssh://host/r" },
    };
    char out[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = 0;
        int status = amq_frontier_canonical_url(out, sizeof out, &len, cases[i][0],
                                                strlen(cases[i][0]), NULL);
        if (status != AMQ_OK || len != strlen(cases[i][1]) || memcmp(out, cases[i][1], len) != 0)
            fail_msg("'%s' gave %d '%.*s', expected '%s'", cases[i][0], status, (int)len, out,
                     cases[i][1]);
        /* canonical forms are fixed points */
        char again[256];
        size_t again_len = 0;
        assert_int_equal(
            amq_frontier_canonical_url(again, sizeof again, &again_len, out, len, NULL), AMQ_OK);
        assert_int_equal(again_len, len);
        assert_memory_equal(again, out, len);
    }
    static const char *const refused[] = {
        "",           "example.com/x",    "/relative",    "mailto:a@b.c",   "http:/x",
        "1http://x/", "http://[::1/x",    "http://h:8a/", "http://[::1]x/", "ht tp://x/",
        "http:x",     "http://host:-1/p",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        size_t len = 7;
        if (amq_frontier_canonical_url(out, sizeof out, &len, refused[i], strlen(refused[i]),
                                       NULL) != AMQ_EINVAL)
            fail_msg("'%s' was not refused", refused[i]);
        assert_int_equal(len, 0);
    }
    /* A buffer one byte short: the length needed. */
    const char *url = "http://Example.com";
    size_t len = 0;
    assert_int_equal(amq_frontier_canonical_url(out, 18, &len, url, strlen(url), NULL), AMQ_ERANGE);
    assert_int_equal(len, 19);
    assert_int_equal(amq_frontier_canonical_url(out, 19, &len, url, strlen(url), NULL), AMQ_OK);
}

static void test_canonicalize_hook(void **state)
{
    char dir[AMQ_TEST_PATH_MAX];
    amq_frontier_options opt;
    smallest_frontier(state, dir, &opt);
    opt.canonicalize = amq_frontier_canonical_url;
    amq_frontier *f;
    open_ok(&f, dir, &opt);
    const char *forms[] = { "HTTP://Example.COM:80/a#x", "http://example.com/a",
                            "http://EXAMPLE.com:/a#y" };
    assert_int_equal(amq_frontier_push(f, forms[0], strlen(forms[0]), NULL), 1);
    for (int i = 1; i < 3; i++)
        assert_int_equal(amq_frontier_push(f, forms[i], strlen(forms[i]), NULL), 0);
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_frontier_push(f, "not a url", 9, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "canonicalize"));
    char out[64];
    size_t len;
    assert_int_equal(amq_frontier_pop(out, sizeof out, &len, f, NULL), 1);
    assert_string_equal(out, "http://example.com/a");
    amq_frontier_stats st;
    amq_frontier_stats_get(&st, f);
    assert_int_equal(st.pushed, 3);
    assert_int_equal(st.enqueued, 1);
    amq_frontier_close(f);
}

int main(void)
{
    seed = amq_test_seed(20261122);
    const struct CMUnitTest tests[] = {
        AMQ_TEST_WITH_SCRATCH(test_fifo_small_memory),
        AMQ_TEST_WITH_SCRATCH(test_fifo_url_cap),
        AMQ_TEST_WITH_SCRATCH(test_false_positive_skips),
        AMQ_TEST_WITH_SCRATCH(test_save_reopen),
        AMQ_TEST_WITH_SCRATCH(test_kill_minus_nine),
        AMQ_TEST_WITH_SCRATCH(test_damaged_segments),
        AMQ_TEST_WITH_SCRATCH(test_damaged_manifest_and_filter),
        AMQ_TEST_WITH_SCRATCH(test_crafted_manifests),
        AMQ_TEST_WITH_SCRATCH(test_recorded_checksum),
        AMQ_TEST_WITH_SCRATCH(test_segment_ids_exhausted),
        AMQ_TEST_WITH_SCRATCH(test_last_generation),
        AMQ_TEST_WITH_SCRATCH(test_push_count_at_its_limit),
        AMQ_TEST_WITH_SCRATCH(test_leftovers_swept),
        AMQ_TEST_WITH_SCRATCH(test_damaged_records_skipped),
        AMQ_TEST_WITH_SCRATCH(test_segment_lost_whole),
        AMQ_TEST_WITH_SCRATCH(test_lock_across_processes),
        AMQ_TEST_WITH_SCRATCH(test_directory_renamed_while_open),
        AMQ_TEST_WITH_SCRATCH(test_foreign_files_kept),
        AMQ_TEST_WITH_SCRATCH(test_filter_changed_outside),
        AMQ_TEST_WITH_SCRATCH(test_is_filter),
        AMQ_TEST_WITH_SCRATCH(test_option_and_directory_errors),
        AMQ_TEST_WITH_SCRATCH(test_url_limits),
        cmocka_unit_test(test_canonical_url),
        AMQ_TEST_WITH_SCRATCH(test_canonicalize_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
