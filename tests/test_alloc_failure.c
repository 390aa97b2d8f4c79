/*
 * Allocation failure, every allocation in turn. The test is linked with
 * the library's malloc, calloc, realloc and aligned_alloc wrapped
 * (tests/CMakeLists.txt: --wrap), so it can make the n-th allocation made
 * inside an operation fail, for n = 0, 1, ... up to the number the
 * operation makes when nothing fails. For each n:
 *
 *   - the operation answers AMQ_OK (if it did without that memory) or
 *     AMQ_ENOMEM, never another status, a crash or an abort;
 *   - on AMQ_ENOMEM it created nothing (*out is NULL) and, where it takes a
 *     diag, says so in it;
 *   - it leaks nothing: the allocations still live after the caller frees
 *     what it was given are the ones live before (counted here, so the plain
 *     build checks it too, not only LeakSanitizer);
 *   - an operation on an existing filter (add that grows, merge) leaves it
 *     answering as before for every key it held.
 *
 * The operations: amq_new and amq_build of every family, loading each
 * family's file from memory and from a file, adds that open a new stage or
 * chain a new table, merge, save to memory, writing, saving and opening a
 * bundle, and a frontier's open, push, pop and save.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bundle.h"
#include "amq/frontier.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the wrapped allocator ------------------------------------------------------- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *pointer, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
void __real_free(void *pointer);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *pointer, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);
void __wrap_free(void *pointer);

/* While armed, allocation number fail_at (counting from 0) fails; every
 * allocation is counted, and so are the live blocks. */
static bool armed;
static long fail_at = -1;
static long allocations;
static long live;

/* The blocks the wrappers handed out, by address, so that free counts only
 * those: the C library hands out memory of its own (realpath, scandir)
 * that the library frees. Open addressing with tombstones; sized for far
 * more blocks than any operation here holds at once. */
enum { TRACKED = 1 << 18 };
static void *tracked[TRACKED];
static void *const tombstone = &tracked;

static size_t slot_of(const void *p)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ULL >> 46) & (TRACKED - 1);
}

static void track(void *p)
{
    if (!p)
        return;
    size_t i = slot_of(p);
    while (tracked[i] && tracked[i] != tombstone)
        i = (i + 1) & (TRACKED - 1);
    tracked[i] = p;
    live++;
}

static void untrack(void *p)
{
    if (!p)
        return;
    for (size_t i = slot_of(p); tracked[i]; i = (i + 1) & (TRACKED - 1))
        if (tracked[i] == p) {
            tracked[i] = tombstone;
            live--;
            return;
        }
}

static bool fail_this_one(void)
{
    if (!armed)
        return false;
    return allocations++ == fail_at;
}

void *__wrap_malloc(size_t size)
{
    if (fail_this_one())
        return NULL;
    void *p = __real_malloc(size);
    track(p);
    return p;
}

void *__wrap_calloc(size_t count, size_t size)
{
    if (fail_this_one())
        return NULL;
    void *p = __real_calloc(count, size);
    track(p);
    return p;
}

void *__wrap_realloc(void *pointer, size_t size)
{
    if (fail_this_one())
        return NULL;
    void *p = __real_realloc(pointer, size);
    if (p) {
        untrack(pointer);
        track(p);
    }
    return p;
}

void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    if (fail_this_one())
        return NULL;
    void *p = __real_aligned_alloc(alignment, size);
    track(p);
    return p;
}

void __wrap_free(void *pointer)
{
    untrack(pointer);
    __real_free(pointer);
}

static void arm(long n)
{
    allocations = 0;
    fail_at = n;
    armed = true;
}

static long disarm(void)
{
    armed = false;
    return allocations;
}

/* ---- the operations -------------------------------------------------------------- */

static uint64_t seed;
enum { KEYS = 2000 };
static amq_test_keys keys;

/* An operation: runs once, returns its status; what it made is freed by
 * its cleanup so that the live count can be compared. */
typedef struct operation {
    const char *name;
    int (*run)(const struct operation *op, amq_diag *diag);
    void (*cleanup)(void);
    const char *spec;
    bool static_family;
} operation;

static amq_filter *made;
static uint8_t *saved;
static size_t saved_len;
static char saved_path[256];

static void free_made(void)
{
    amq_free(made);
    made = NULL;
}

static int run_new(const operation *op, amq_diag *diag)
{
    int status = amq_new(&made, op->spec, diag);
    if (status != AMQ_OK)
        assert_null(made);
    return status;
}

static int run_build(const operation *op, amq_diag *diag)
{
    int status = amq_build(&made, op->spec, keys.pointers, keys.lens, keys.count, diag);
    if (status != AMQ_OK)
        assert_null(made);
    return status;
}

static int run_load_memory(const operation *op, amq_diag *diag)
{
    (void)op;
    int status = amq_load_from_memory(&made, saved, saved_len, 0, diag);
    if (status != AMQ_OK)
        assert_null(made);
    return status;
}

static int run_load_file(const operation *op, amq_diag *diag)
{
    (void)op;
    int status = amq_load(&made, saved_path, 0, diag);
    if (status != AMQ_OK)
        assert_null(made);
    return status;
}

static uint8_t *saved_out;

static void free_saved_out(void)
{
    free(saved_out);
    saved_out = NULL;
}

/* Save the prepared filter (held in `made` across runs) to memory. */
static amq_filter *prepared;

static int run_save_memory(const operation *op, amq_diag *diag)
{
    (void)op;
    size_t len = 0;
    int status = amq_save_to_memory(&saved_out, &len, prepared, diag);
    if (status != AMQ_OK)
        assert_null(saved_out);
    return status;
}

/* Adds into a copy of the prepared filter that make it grow; each add
 * answers OK, 0/1, or AMQ_ENOMEM, after which the filter still holds every
 * key added before. */
static int run_grow(const operation *op, amq_diag *diag)
{
    (void)diag;
    (void)op;
    int failed = AMQ_OK;
    for (size_t i = 0; i < keys.count; i++) {
        int status = amq_add(made, keys.pointers[i], keys.lens[i]);
        if (status == AMQ_ENOMEM) {
            failed = AMQ_ENOMEM;
            for (size_t j = 0; j < i; j++)
                assert_int_equal(amq_contains(made, keys.pointers[j], keys.lens[j]), 1);
            continue;
        }
        assert_true(status >= 0);
    }
    return failed;
}

static int run_merge(const operation *op, amq_diag *diag)
{
    (void)op;
    return amq_merge(made, prepared, diag);
}

/* Fill `made` with a fresh filter of the operation's spec before each run
 * of an operation on an existing filter. */
static void make_fresh(const operation *op)
{
    assert_int_equal(amq_new(&made, op->spec, NULL), AMQ_OK);
}

/* ---- the driver ------------------------------------------------------------------ */

static void check_operation(const operation *op, bool needs_fresh)
{
    long baseline = live;
    /* A run with no failure counts the allocations. */
    if (needs_fresh)
        make_fresh(op);
    long before = live;
    amq_diag diag = { .message = "" };
    arm(-1);
    int status = op->run(op, &diag);
    long total = disarm();
    if (status != AMQ_OK)
        fail_msg("%s (%s): %s without any failure: %s", op->name, op->spec ? op->spec : "",
                 amq_strerror(status), diag.message);
    op->cleanup();
    assert_int_equal(live, baseline);
    (void)before;
    for (long n = 0; n < total; n++) {
        if (needs_fresh)
            make_fresh(op);
        diag = (amq_diag){ .message = "" };
        arm(n);
        status = op->run(op, &diag);
        disarm();
        if (status != AMQ_OK && status != AMQ_ENOMEM)
            fail_msg("%s (%s), allocation %ld of %ld failing: %s (%s)", op->name,
                     op->spec ? op->spec : "", n, total, amq_strerror(status), diag.message);
        if (status == AMQ_ENOMEM && op->run != run_grow && diag.message[0] == '\0')
            fail_msg("%s (%s), allocation %ld of %ld failing: AMQ_ENOMEM without a message",
                     op->name, op->spec ? op->spec : "", n, total);
        op->cleanup();
        if (live != baseline)
            fail_msg("%s (%s), allocation %ld of %ld failing: %ld blocks leaked", op->name,
                     op->spec ? op->spec : "", n, total, live - baseline);
    }
}

static const char *const dynamic_specs[] = {
    "bloom n=3000 p=0.01",         "blocked-bloom n=3000 p=0.01", "counting-bloom n=3000 p=0.01",
    "scalable-bloom n=100 p=0.01", "cuckoo n=3000 p=0.01",        "cuckoo n=3000 p=0.001 semi-sort",
};
static const char *const static_specs[] = {
    "fuse8", "fuse16", "gcs p=0.01", "bloom n=3000 p=0.01", "cuckoo n=3000", "scalable-bloom n=100",
};

static void test_new(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof dynamic_specs / sizeof dynamic_specs[0]; i++) {
        operation op = { "amq_new", run_new, free_made, dynamic_specs[i], false };
        check_operation(&op, false);
    }
}

static void test_build(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof static_specs / sizeof static_specs[0]; i++) {
        operation op = { "amq_build", run_build, free_made, static_specs[i], true };
        check_operation(&op, false);
    }
}

/* Save a filter of spec holding the keys, to memory and to a file. */
static void prepare_saved(const char *spec)
{
    amq_filter *f = NULL;
    assert_int_equal(amq_build(&f, spec, keys.pointers, keys.lens, keys.count, NULL), AMQ_OK);
    free(saved);
    saved = NULL;
    assert_int_equal(amq_save_to_memory(&saved, &saved_len, f, NULL), AMQ_OK);
    snprintf(saved_path, sizeof saved_path, "/tmp/amq-alloc-%ld.amq", (long)getpid());
    assert_int_equal(amq_save(f, saved_path, NULL), AMQ_OK);
    amq_free(f);
}

static void test_load(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof static_specs / sizeof static_specs[0]; i++) {
        prepare_saved(static_specs[i]);
        operation from_memory = { "amq_load_from_memory", run_load_memory, free_made,
                                  static_specs[i], true };
        check_operation(&from_memory, false);
        operation from_file = { "amq_load", run_load_file, free_made, static_specs[i], true };
        check_operation(&from_file, false);
        unlink(saved_path);
    }
    free(saved);
    saved = NULL;
}

static void test_save_to_memory(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof static_specs / sizeof static_specs[0]; i++) {
        assert_int_equal(
            amq_build(&prepared, static_specs[i], keys.pointers, keys.lens, keys.count, NULL),
            AMQ_OK);
        operation op = { "amq_save_to_memory", run_save_memory, free_saved_out, static_specs[i],
                         true };
        check_operation(&op, false);
        amq_free(prepared);
        prepared = NULL;
    }
}

/* Adds that open stages and chain tables: the filters start small. */
static void test_adds_that_grow(void **state)
{
    (void)state;
    const char *const growing[] = { "scalable-bloom n=50 p=0.01", "cuckoo n=100 growth=2" };
    for (size_t i = 0; i < 2; i++) {
        operation op = { "amq_add (growing)", run_grow, free_made, growing[i], false };
        check_operation(&op, true);
    }
}

static void test_merge(void **state)
{
    (void)state;
    const char *const mergeable[] = { "bloom n=3000 p=0.01", "counting-bloom n=3000 p=0.01",
                                      "scalable-bloom n=100 p=0.01", "blocked-bloom n=3000" };
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(amq_build(&prepared, mergeable[i], keys.pointers, keys.lens, 500, NULL),
                         AMQ_OK);
        operation op = { "amq_merge", run_merge, free_made, mergeable[i], false };
        check_operation(&op, true);
        amq_free(prepared);
        prepared = NULL;
    }
}

/* ---- bundles --------------------------------------------------------------------- */

static amq_bundle_writer *writer;
static amq_bundle *bundle;
static char bundle_path[256];

/* A writer with three members (two filters, some bytes), saved. */
static int run_bundle_write(const operation *op, amq_diag *diag)
{
    (void)op;
    int status = amq_bundle_writer_new(&writer, diag);
    if (status != AMQ_OK) {
        assert_null(writer);
        return status;
    }
    status = amq_bundle_add(writer, "first", 5, prepared, diag);
    if (status == AMQ_OK)
        status = amq_bundle_add(writer, "second", 6, prepared, diag);
    if (status == AMQ_OK)
        status = amq_bundle_add_bytes(writer, "notes", 5, "some bytes", 10, diag);
    if (status == AMQ_OK)
        status = amq_bundle_save(writer, bundle_path, diag);
    return status;
}

static void free_writer(void)
{
    amq_bundle_writer_free(writer);
    writer = NULL;
}

/* Open the saved bundle and a filter of it. */
static int run_bundle_open(const operation *op, amq_diag *diag)
{
    (void)op;
    int status = amq_bundle_open(&bundle, bundle_path, 0, diag);
    if (status != AMQ_OK) {
        assert_null(bundle);
        return status;
    }
    status = amq_bundle_open_filter(&made, bundle, "second", 6, diag);
    if (status != AMQ_OK)
        assert_null(made);
    return status;
}

static void close_bundle(void)
{
    amq_free(made);
    made = NULL;
    amq_bundle_close(bundle);
    bundle = NULL;
}

static void test_bundles(void **state)
{
    (void)state;
    snprintf(bundle_path, sizeof bundle_path, "/tmp/amq-alloc-%ld.amqb", (long)getpid());
    assert_int_equal(amq_build(&prepared, "fuse8", keys.pointers, keys.lens, keys.count, NULL),
                     AMQ_OK);
    operation write = { "amq_bundle_save", run_bundle_write, free_writer, "fuse8", true };
    check_operation(&write, false);
    operation open = { "amq_bundle_open", run_bundle_open, close_bundle, "fuse8", true };
    check_operation(&open, false);
    amq_free(prepared);
    prepared = NULL;
    unlink(bundle_path);
}

/* ---- the frontier ------------------------------------------------------------------ */

static amq_frontier *frontier;
static char frontier_dir[256];

static void frontier_options(amq_frontier_options *opt)
{
    amq_frontier_options_init(opt);
    opt->initial_capacity = 100; /* stages open while URLs arrive */
    /* With the smallest memory and segments, 10,000 URLs spill to disk. */
    opt->memory_bytes = AMQ_FRONTIER_MIN_MEMORY;
    opt->segment_bytes = AMQ_FRONTIER_MIN_SEGMENT;
}

/* Open (a new directory, or one with a checkpoint and spilled segments),
 * push URLs until the queue spills to segments, pop some, save. A push or
 * pop that fails leaves the frontier usable. */
static int run_frontier(const operation *op, amq_diag *diag)
{
    (void)op;
    amq_frontier_options opt;
    frontier_options(&opt);
    int status = amq_frontier_open(&frontier, frontier_dir, &opt, diag);
    if (status != AMQ_OK) {
        assert_null(frontier);
        return status;
    }
    int failed = AMQ_OK;
    char url[64];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(url, sizeof url, "https://example.org/%d", i);
        int pushed = amq_frontier_push(frontier, url, (size_t)n, diag);
        if (pushed < 0) {
            if (pushed != AMQ_ENOMEM)
                return pushed;
            failed = AMQ_ENOMEM;
        }
    }
    char buffer[256];
    size_t len = 0;
    for (int i = 0; i < 300; i++) {
        int popped = amq_frontier_pop(buffer, sizeof buffer, &len, frontier, diag);
        if (popped < 0) {
            if (popped != AMQ_ENOMEM)
                return popped;
            failed = AMQ_ENOMEM;
        }
    }
    status = amq_frontier_save(frontier, diag);
    return status != AMQ_OK ? status : failed;
}

static void close_frontier(void)
{
    amq_frontier_close(frontier);
    frontier = NULL;
}

static void test_frontier(void **state)
{
    (void)state;
    snprintf(frontier_dir, sizeof frontier_dir, "/tmp/amq-alloc-frontier-%ld", (long)getpid());
    /* A first session leaves a checkpoint and segments; each run below
     * reopens it. */
    amq_frontier_options opt;
    frontier_options(&opt);
    assert_int_equal(amq_frontier_open(&frontier, frontier_dir, &opt, NULL), AMQ_OK);
    char url[64];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(url, sizeof url, "https://example.com/first/%d", i);
        assert_true(amq_frontier_push(frontier, url, (size_t)n, NULL) >= 0);
    }
    assert_int_equal(amq_frontier_save(frontier, NULL), AMQ_OK);
    amq_frontier_stats stats;
    amq_frontier_stats_get(&stats, frontier);
    assert_true(stats.segments > 0);
    close_frontier();
    operation op = { "amq_frontier", run_frontier, close_frontier, "frontier", false };
    check_operation(&op, false);
    char command[320];
    snprintf(command, sizeof command, "rm -rf '%s'", frontier_dir);
    assert_int_equal(system(command), 0);
}

static int setup(void **state)
{
    (void)state;
    seed = amq_test_seed(20261126);
    amq_test_keys_make(&keys, seed, 0, KEYS);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    amq_test_keys_free(&keys);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new),
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_save_to_memory),
        cmocka_unit_test(test_adds_that_grow),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_bundles),
        cmocka_unit_test(test_frontier),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
