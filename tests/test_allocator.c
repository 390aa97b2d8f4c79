/*
 * The pluggable allocator (amq_set_allocator, amq_buffer_free).
 *
 * A counting allocator is installed before the first call of the library.
 * It keeps every block it hands out in a table, with its size, so that it
 * can tell the live blocks and bytes at any moment, refuse to free a block
 * it never gave (an aligned block freed as a plain one, or a pointer of
 * the C library's), and poison each block it frees. The program is linked
 * with the C library's malloc, calloc, realloc, aligned_alloc and free
 * wrapped (tests/CMakeLists.txt: --wrap), as tests/test_alloc_failure.c
 * is, and counts the wrapped calls: while the counting allocator is
 * installed, the library must make none.
 *
 * Checked:
 *   - a filter of every family and variant (bloom, blocked-bloom in both
 *     layouts, counting-bloom, scalable-bloom with several stages, cuckoo
 *     with counted copies in chained tables and semi-sorted, gcs in both
 *     layouts, hfb with a coded bank, fuse8, fuse16) made, filled,
 *     queried, saved to memory, to a writer and to a file, loaded back
 *     (copied, borrowed, read and mapped), merged and exported: the
 *     allocator sees allocations for each, the C library's functions are
 *     never called, the buffers handed out are the allocator's own blocks,
 *     and once everything is freed no block is live;
 *   - the same for a bundle and a crawl frontier;
 *   - an allocator that fails its n-th allocation, for every n an
 *     operation reaches: each answers AMQ_OK or AMQ_ENOMEM and leaks
 *     nothing;
 *   - amq_save_to_writer allocates nothing, for every family: with every
 *     allocation failing (the counting allocator's, and with the default
 *     allocator the C library's), it writes the bytes amq_save_to_memory
 *     wrote before and asks for no memory at all; amq_saved_bytes neither;
 *     amq_save_to_memory asks for its buffer alone;
 *   - amq_set_allocator refuses an allocator without all four functions
 *     and keeps the one in use; amq_set_allocator(NULL) gives the C
 *     library's back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/bundle.h"
#include "amq/frontier.h"
#include "amq/inline.h"
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the C library's functions, wrapped ------------------------------------------ */

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

/* Calls of the wrapped functions since watch_begin. Only the library and
 * this file's own code reach them (cmocka and the C library call their
 * own): the test keeps its own allocations out of a watched stretch.
 * While libc_fail is set every allocation fails. */
static long libc_calls;
static bool libc_fail;

void *__wrap_malloc(size_t size)
{
    libc_calls++;
    return libc_fail ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size)
{
    libc_calls++;
    return libc_fail ? NULL : __real_calloc(count, size);
}

void *__wrap_realloc(void *pointer, size_t size)
{
    libc_calls++;
    return libc_fail ? NULL : __real_realloc(pointer, size);
}

void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    libc_calls++;
    return libc_fail ? NULL : __real_aligned_alloc(alignment, size);
}

void __wrap_free(void *pointer)
{
    libc_calls++;
    __real_free(pointer);
}

static void watch_begin(void)
{
    libc_calls = 0;
}

static void watch_end(const char *what)
{
    if (libc_calls != 0)
        fail_msg("%s: the library called the C library's allocator %ld times under a custom one",
                 what, libc_calls);
}

/* ---- the counting allocator ------------------------------------------------------- */

/* What the allocator knows; its address is the opaque pointer, which each
 * call checks it is given. */
typedef struct counter {
    long attempts;    /* calls of alloc, calloc and realloc */
    long live_blocks; /* blocks handed out and not yet freed */
    size_t live_bytes;
    long fail_at; /* attempt number (from 0) that fails; -1: none */
    bool fail_all;
} counter;

static counter the_counter = { .fail_at = -1 };

/* The live blocks, by address, with their sizes: open addressing with
 * tombstones. */
enum { TRACKED = 1 << 18 };
static struct {
    void *p;
    size_t bytes;
} tracked[TRACKED];
static char tombstone;

static size_t slot_of(const void *p)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ULL >> 46) & (TRACKED - 1);
}

static void track(void *p, size_t bytes)
{
    size_t i = slot_of(p);
    while (tracked[i].p && tracked[i].p != &tombstone)
        i = (i + 1) & (TRACKED - 1);
    tracked[i].p = p;
    tracked[i].bytes = bytes;
    the_counter.live_blocks++;
    the_counter.live_bytes += bytes;
}

/* The slot of a live block, or -1. */
static long find_tracked(const void *p)
{
    for (size_t i = slot_of(p); tracked[i].p; i = (i + 1) & (TRACKED - 1))
        if (tracked[i].p == p)
            return (long)i;
    return -1;
}

static size_t untrack(void *p, const char *call)
{
    long i = find_tracked(p);
    if (i < 0)
        fail_msg("%s of %p, a block the allocator never handed out (or freed already)", call, p);
    size_t bytes = tracked[i].bytes;
    tracked[i].p = &tombstone;
    the_counter.live_blocks--;
    the_counter.live_bytes -= bytes;
    return bytes;
}

static bool is_block(const void *p)
{
    return find_tracked(p) >= 0;
}

static counter *check_opaque(void *opaque)
{
    if (opaque != &the_counter)
        fail_msg("the allocator was given opaque %p, not %p", opaque, (void *)&the_counter);
    return opaque;
}

static bool refuse(counter *c)
{
    long n = c->attempts++;
    return c->fail_all || n == c->fail_at;
}

static void *counting_alloc(void *opaque, size_t bytes)
{
    counter *c = check_opaque(opaque);
    if (bytes == 0)
        fail_msg("alloc asked for 0 bytes");
    if (refuse(c))
        return NULL;
    void *p = __real_malloc(bytes);
    if (p) {
        memset(p, 0xa5, bytes); /* no reader may count on what is there */
        track(p, bytes);
    }
    return p;
}

static void *counting_calloc(void *opaque, size_t count, size_t bytes)
{
    counter *c = check_opaque(opaque);
    if (count == 0 || bytes == 0)
        fail_msg("calloc asked for %zu x %zu bytes", count, bytes);
    if (refuse(c) || count > SIZE_MAX / bytes)
        return NULL;
    void *p = __real_calloc(count, bytes);
    if (p)
        track(p, count * bytes);
    return p;
}

static void *counting_realloc(void *opaque, void *ptr, size_t bytes)
{
    counter *c = check_opaque(opaque);
    if (bytes == 0)
        fail_msg("realloc asked for 0 bytes");
    if (ptr && !is_block(ptr))
        fail_msg("realloc of %p, a block the allocator never handed out", ptr);
    if (refuse(c))
        return NULL;
    void *p = __real_realloc(ptr, bytes);
    if (p) {
        if (ptr)
            untrack(ptr, "realloc");
        track(p, bytes);
    }
    return p;
}

static void counting_free(void *opaque, void *ptr)
{
    check_opaque(opaque);
    if (!ptr)
        return;
    size_t bytes = untrack(ptr, "free");
    memset(ptr, 0xdd, bytes); /* a use after free reads garbage */
    __real_free(ptr);
}

static const amq_allocator counting = {
    .alloc = counting_alloc,
    .calloc = counting_calloc,
    .realloc = counting_realloc,
    .free = counting_free,
    .opaque = &the_counter,
};

static void fail_none(void)
{
    the_counter.fail_at = -1;
    the_counter.fail_all = false;
}

static void expect_nothing_live(const char *what)
{
    if (the_counter.live_blocks != 0 || the_counter.live_bytes != 0)
        fail_msg("%s: %ld blocks (%zu bytes) still live after everything was freed", what,
                 the_counter.live_blocks, the_counter.live_bytes);
}

/* ---- keys and scratch files, without allocating ------------------------------------ */

enum { KEYS = 1500, MAX_KEYS = 2000 };
static uint64_t seed;
static amq_test_key key_store[MAX_KEYS];
static const void *key_pointers[MAX_KEYS];
static size_t key_lens[MAX_KEYS];

static void make_keys(void)
{
    for (size_t i = 0; i < MAX_KEYS; i++) {
        key_store[i] = amq_test_make_key(seed, 0, i);
        key_pointers[i] = &key_store[i];
        key_lens[i] = sizeof key_store[i];
    }
}

static char scratch[128];

static const char *scratch_file(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    return path;
}

/* ---- every family ------------------------------------------------------------------- */

typedef struct family_case {
    const char *spec;
    bool build;  /* amq_build from the keys, else amq_new and amq_add */
    int repeats; /* dynamic: key 0 added this many more times (counted copies) */
} family_case;

static const family_case family_cases[] = {
    { "bloom n=2000 p=0.01", false, 0 },
    { "blocked-bloom n=2000 p=0.01 layout=split", false, 0 },
    { "blocked-bloom n=2000 p=0.01 layout=block", false, 0 },
    { "counting-bloom n=2000 p=0.01", false, 3 },
    { "scalable-bloom n=100 p=0.01", false, 0 },
    { "scalable-bloom n=100 p=0.01 stages=split-block", false, 0 },
    { "cuckoo n=400 p=0.01 growth=2", false, 40 },
    { "cuckoo n=2000 p=0.001 semi-sort", false, 10 },
    { "bloom n=2000 p=0.01", true, 0 },
    { "gcs p=0.01", true, 0 },
    { "gcs p=0.01 stream=continuous", true, 0 },
    { "hfb hash=md5", true, 0 },
    { "fuse8", true, 0 },
    { "fuse16", true, 0 },
};

/* A writer that keeps a count of the bytes it is given. */
static int count_bytes(void *context, const void *data, size_t len)
{
    (void)data;
    *(uint64_t *)context += len;
    return 0;
}

static amq_filter *make_filter(const family_case *fc)
{
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (fc->build) {
        if (amq_build(&f, fc->spec, key_pointers, key_lens, KEYS, &diag) != AMQ_OK)
            fail_msg("amq_build %s: %s", fc->spec, diag.message);
        return f;
    }
    if (amq_new(&f, fc->spec, &diag) != AMQ_OK)
        fail_msg("amq_new %s: %s", fc->spec, diag.message);
    for (size_t i = 0; i < KEYS; i++)
        assert_true(amq_add(f, key_pointers[i], key_lens[i]) >= 0);
    for (int r = 0; r < fc->repeats; r++)
        assert_true(amq_add(f, key_pointers[0], key_lens[0]) >= 0);
    return f;
}

static void expect_all_keys(const amq_filter *f, const char *what)
{
    for (size_t i = 0; i < KEYS; i++)
        if (amq_contains(f, key_pointers[i], key_lens[i]) != 1)
            fail_msg("%s: key %zu is missing", what, i);
}

static void exercise_family(const family_case *fc)
{
    amq_diag diag = { .message = "" };
    long before = the_counter.attempts;
    watch_begin();
    amq_filter *f = make_filter(fc);
    if (the_counter.attempts == before)
        fail_msg("%s: made without one call of the allocator", fc->spec);
    expect_all_keys(f, fc->spec);

    /* Saved to memory: the buffer is the allocator's own block. */
    uint8_t *bytes = NULL;
    size_t len = 0;
    assert_int_equal(amq_save_to_memory(&bytes, &len, f, &diag), AMQ_OK);
    assert_true(is_block(bytes));
    uint64_t size = 0, written = 0;
    assert_int_equal(amq_saved_bytes(&size, f, NULL), AMQ_OK);
    assert_int_equal(size, len);
    assert_int_equal(amq_save_to_writer(f, count_bytes, &written, NULL), AMQ_OK);
    assert_int_equal(written, len);

    /* Loaded back, copied and borrowed. */
    amq_filter *copied = NULL, *borrowed = NULL;
    if (amq_load_from_memory(&copied, bytes, len, 0, &diag) != AMQ_OK)
        fail_msg("%s: load from memory: %s", fc->spec, diag.message);
    assert_int_equal(amq_load_from_memory(&borrowed, bytes, len, AMQ_LOAD_BORROW, NULL), AMQ_OK);
    expect_all_keys(copied, fc->spec);
    expect_all_keys(borrowed, fc->spec);

    /* A file, read and mapped. */
    const char *path = scratch_file("filter.amq");
    if (amq_save(f, path, &diag) != AMQ_OK)
        fail_msg("%s: save: %s", fc->spec, diag.message);
    amq_filter *read = NULL, *mapped = NULL;
    assert_int_equal(amq_load(&read, path, 0, NULL), AMQ_OK);
    assert_int_equal(amq_load(&mapped, path, AMQ_LOAD_MMAP, NULL), AMQ_OK);
    expect_all_keys(read, fc->spec);
    expect_all_keys(mapped, fc->spec);

    int capabilities = amq_family_capabilities(amq_filter_family(f));
    if (capabilities & AMQ_CAN_MERGE) {
        if (amq_merge(copied, read, &diag) != AMQ_OK)
            fail_msg("%s: merge: %s", fc->spec, diag.message);
        expect_all_keys(copied, fc->spec);
    }
    if (capabilities & AMQ_CAN_EXPORT) {
        const char *const formats[] = { "raw", "bip158" };
        for (size_t i = 0; i < 2; i++) {
            uint8_t *data = NULL;
            size_t data_len = 0;
            assert_int_equal(amq_export(&data, &data_len, f, formats[i], NULL), AMQ_OK);
            assert_true(is_block(data));
            amq_buffer_free(data);
        }
    }
    amq_free(mapped);
    amq_free(read);
    amq_free(borrowed);
    amq_free(copied);
    amq_buffer_free(bytes);
    amq_free(f);
    watch_end(fc->spec);
    expect_nothing_live(fc->spec);
    unlink(path);
}

static void test_every_family(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof family_cases / sizeof family_cases[0]; i++)
        exercise_family(&family_cases[i]);
}

/* A cuckoo filter whose copies are counted beside its tables, and a
 * scalable filter of several stages: what they are is checked, so that the
 * cases above reach the overflow map and the stages' allocations. */
static void test_counted_copies_and_stages(void **state)
{
    (void)state;
    watch_begin();
    amq_filter *cuckoo = make_filter(&family_cases[6]);
    amq_info info;
    assert_int_equal(amq_info_get(&info, cuckoo), AMQ_OK);
    const amq_info_detail *counted = amq_test_find_detail(&info, "counted_copies");
    const amq_info_detail *tables = amq_test_find_detail(&info, "tables");
    assert_true(counted && counted->value > 0);
    assert_true(tables && tables->value >= 2);
    amq_free(cuckoo);
    amq_filter *scalable = make_filter(&family_cases[4]);
    assert_int_equal(amq_info_get(&info, scalable), AMQ_OK);
    const amq_info_detail *stages = amq_test_find_detail(&info, "stages");
    assert_true(stages && stages->value >= 3);
    amq_free(scalable);
    watch_end("counted copies and stages");
    expect_nothing_live("counted copies and stages");
}

/* A table carved out of a larger block is still on a cache line. */
static void test_tables_aligned(void **state)
{
    (void)state;
    amq_blocked_bloom_params params;
    amq_blocked_bloom_params_init(&params);
    params.capacity = 100000;
    params.fpr = 0.01;
    params.layout = AMQ_BLOCKED_SPLIT;
    watch_begin();
    amq_blocked_bloom *f = NULL;
    assert_int_equal(amq_blocked_bloom_new(&f, &params, NULL), AMQ_OK);
    amq_split_block_view view;
    assert_int_equal(amq_split_block_view_get(&view, f, AMQ_INLINE_LAYOUT, NULL), AMQ_OK);
    assert_int_equal((uintptr_t)view.words % 64, 0);
    assert_false(is_block(view.words)); /* carved: the block begins before it */
    amq_blocked_bloom_free(f);
    watch_end("aligned table");
    expect_nothing_live("aligned table");
}

/* ---- a bundle and a frontier ----------------------------------------------------------- */

static void test_bundle(void **state)
{
    (void)state;
    const char *path = scratch_file("bundle.amqb");
    watch_begin();
    amq_filter *fuse = make_filter(&family_cases[12]);
    amq_filter *cuckoo = make_filter(&family_cases[6]);
    amq_bundle_writer *w = NULL;
    assert_int_equal(amq_bundle_writer_new(&w, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_add(w, "fuse", 4, fuse, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_add(w, "cuckoo", 6, cuckoo, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_add_bytes(w, "notes", 5, "some bytes", 10, NULL), AMQ_OK);
    amq_diag diag = { .message = "" };
    if (amq_bundle_save(w, path, &diag) != AMQ_OK)
        fail_msg("bundle save: %s", diag.message);
    amq_bundle_writer_free(w);
    amq_free(fuse);
    amq_free(cuckoo);
    const unsigned flags[] = { 0, AMQ_LOAD_MMAP };
    for (size_t i = 0; i < 2; i++) {
        amq_bundle *b = NULL;
        assert_int_equal(amq_bundle_open(&b, path, flags[i], NULL), AMQ_OK);
        amq_filter *member = NULL;
        assert_int_equal(amq_bundle_open_filter(&member, b, "cuckoo", 6, NULL), AMQ_OK);
        amq_bundle_close(b);
        expect_all_keys(member, "bundle member");
        amq_free(member);
    }
    watch_end("bundle");
    expect_nothing_live("bundle");
    unlink(path);
}

static void frontier_options(amq_frontier_options *opt)
{
    amq_frontier_options_init(opt);
    opt->initial_capacity = 100; /* stages open while URLs arrive */
    opt->memory_bytes = AMQ_FRONTIER_MIN_MEMORY;
    opt->segment_bytes = AMQ_FRONTIER_MIN_SEGMENT;
}

static void test_frontier(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/frontier", scratch);
    amq_frontier_options opt;
    frontier_options(&opt);
    watch_begin();
    for (int session = 0; session < 2; session++) {
        amq_frontier *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_frontier_open(&f, dir, &opt, &diag) != AMQ_OK)
            fail_msg("frontier open: %s", diag.message);
        char url[64], popped[256];
        for (int i = 0; i < 6000; i++) {
            int n = snprintf(url, sizeof url, "https://example.org/%d/%d", session, i);
            assert_true(amq_frontier_push(f, url, (size_t)n, NULL) >= 0);
        }
        size_t len = 0;
        for (int i = 0; i < 200; i++)
            assert_int_equal(amq_frontier_pop(popped, sizeof popped, &len, f, NULL), 1);
        amq_frontier_stats stats;
        amq_frontier_stats_get(&stats, f);
        assert_true(stats.segments > 0); /* the queue spilled to disk */
        assert_int_equal(amq_frontier_save(f, NULL), AMQ_OK);
        amq_frontier_close(f);
    }
    watch_end("frontier");
    expect_nothing_live("frontier");
}

/* ---- an allocator that fails ------------------------------------------------------------- */

typedef struct failing_case {
    const char *name;
    const char *spec;
    int (*run)(const struct failing_case *fc, amq_diag *diag);
} failing_case;

static amq_filter *made;
static amq_filter *prepared;
static uint8_t *image;
static size_t image_len;

static int run_build(const failing_case *fc, amq_diag *diag)
{
    int status = amq_build(&made, fc->spec, key_pointers, key_lens, KEYS, diag);
    if (status != AMQ_OK)
        assert_null(made);
    return status;
}

/* amq_new and adds (with repeats of key 0: counted copies, new stages and
 * tables); a failed add leaves every key added before it present. */
static int run_fill(const failing_case *fc, amq_diag *diag)
{
    int status = amq_new(&made, fc->spec, diag);
    if (status != AMQ_OK) {
        assert_null(made);
        return status;
    }
    int failed = AMQ_OK;
    for (size_t i = 0; i < KEYS + 40; i++) {
        size_t k = i < KEYS ? i : 0;
        int added = amq_add(made, key_pointers[k], key_lens[k]);
        if (added == AMQ_ENOMEM) {
            failed = AMQ_ENOMEM;
            for (size_t j = 0; j < i && j < KEYS; j++)
                assert_int_equal(amq_contains(made, key_pointers[j], key_lens[j]), 1);
            continue;
        }
        assert_true(added >= 0);
    }
    return failed;
}

static int run_save_memory(const failing_case *fc, amq_diag *diag)
{
    (void)fc;
    uint8_t *bytes = NULL;
    size_t len = 0;
    int status = amq_save_to_memory(&bytes, &len, prepared, diag);
    if (status == AMQ_OK) {
        assert_int_equal(len, image_len);
        assert_memory_equal(bytes, image, len);
    } else {
        assert_null(bytes);
    }
    amq_buffer_free(bytes);
    return status;
}

static int run_load_memory(const failing_case *fc, amq_diag *diag)
{
    (void)fc;
    int status = amq_load_from_memory(&made, image, image_len, 0, diag);
    if (status != AMQ_OK)
        assert_null(made);
    return status;
}

static int run_merge(const failing_case *fc, amq_diag *diag)
{
    int status = amq_new(&made, fc->spec, diag);
    if (status != AMQ_OK)
        return status;
    return amq_merge(made, prepared, diag);
}

static const failing_case failing_cases[] = {
    { "build", "bloom n=2000 p=0.01", run_build },
    { "build", "blocked-bloom n=2000 p=0.01", run_build },
    { "build", "gcs p=0.01", run_build },
    { "build", "gcs p=0.01 stream=continuous", run_build },
    { "build", "hfb hash=md5", run_build },
    { "build", "fuse8", run_build },
    { "build", "fuse16", run_build },
    { "fill", "counting-bloom n=2000 p=0.01", run_fill },
    { "fill", "scalable-bloom n=100 p=0.01", run_fill },
    { "fill", "cuckoo n=400 p=0.01 growth=2", run_fill },
    { "save to memory", "cuckoo n=400 p=0.01 growth=2", run_save_memory },
    { "save to memory", "hfb hash=md5", run_save_memory },
    { "save to memory", "scalable-bloom n=100 p=0.01", run_save_memory },
    { "load from memory", "cuckoo n=400 p=0.01 growth=2", run_load_memory },
    { "load from memory", "gcs p=0.01", run_load_memory },
    { "load from memory", "hfb hash=md5", run_load_memory },
    { "merge", "scalable-bloom n=100 p=0.01", run_merge },
};

static bool is_dynamic(const char *spec)
{
    char family[32];
    sscanf(spec, "%31s", family);
    return amq_family_is_static(family) == 0;
}

/* The filter of spec that saving, loading and merging start from. */
static void prepare(const char *spec)
{
    family_case fc = { spec, !is_dynamic(spec), 40 };
    prepared = make_filter(&fc);
    assert_int_equal(amq_save_to_memory(&image, &image_len, prepared, NULL), AMQ_OK);
}

static void test_failing_allocator(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof failing_cases / sizeof failing_cases[0]; i++) {
        const failing_case *fc = &failing_cases[i];
        prepare(fc->spec);
        long baseline = the_counter.live_blocks;
        amq_diag diag = { .message = "" };
        fail_none();
        long first = the_counter.attempts;
        int status = fc->run(fc, &diag);
        long total = the_counter.attempts - first;
        if (status != AMQ_OK)
            fail_msg("%s %s without a failure: %s", fc->name, fc->spec, diag.message);
        amq_free(made);
        made = NULL;
        assert_int_equal(the_counter.live_blocks, baseline);
        for (long n = 0; n < total; n++) {
            diag = (amq_diag){ .message = "" };
            the_counter.fail_at = the_counter.attempts + n;
            status = fc->run(fc, &diag);
            fail_none();
            if (status != AMQ_OK && status != AMQ_ENOMEM)
                fail_msg("%s %s, allocation %ld of %ld failing: %s (%s)", fc->name, fc->spec, n,
                         total, amq_strerror(status), diag.message);
            if (status == AMQ_ENOMEM && fc->run != run_fill && diag.message[0] == '\0')
                fail_msg("%s %s, allocation %ld of %ld failing: AMQ_ENOMEM without a message",
                         fc->name, fc->spec, n, total);
            amq_free(made);
            made = NULL;
            if (the_counter.live_blocks != baseline)
                fail_msg("%s %s, allocation %ld of %ld failing: %ld blocks leaked", fc->name,
                         fc->spec, n, total, the_counter.live_blocks - baseline);
        }
        amq_free(prepared);
        prepared = NULL;
        amq_buffer_free(image);
        image = NULL;
        expect_nothing_live(fc->spec);
    }
}

/* ---- saving allocates nothing ----------------------------------------------------------- */

/* A writer into a static buffer: it allocates nothing either. */
enum { CAPTURED_MAX = 1 << 21 };
static uint8_t captured[CAPTURED_MAX];
static size_t captured_len;
static size_t captured_calls;

static int capture(void *context, const void *data, size_t len)
{
    (void)context;
    if (len == 0 || len > CAPTURED_MAX - captured_len)
        return 1;
    memcpy(captured + captured_len, data, len);
    captured_len += len;
    captured_calls++;
    return 0;
}

/* Filters whose saves once allocated: hfb's coded banks, a cuckoo
 * filter's counted copies (past b / 2, in chained tables), scalable
 * filters' stages (and, on a big-endian host, every family's words); and
 * the rest of the families beside them. */
static const family_case save_cases[] = {
    { "hfb hash=md5", true, 0 },
    { "hfb hash=md5 p=0.001", true, 0 },
    { "cuckoo n=400 p=0.01 growth=2", false, 40 },
    { "cuckoo n=2000 p=0.001 semi-sort", false, 10 },
    { "scalable-bloom n=100 p=0.01", false, 0 },
    { "scalable-bloom n=100 p=0.01 stages=split-block", false, 0 },
    { "scalable-bloom n=100 p=0.01 stages=block", false, 0 },
    { "bloom n=2000 p=0.01", false, 0 },
    { "blocked-bloom n=2000 p=0.01 layout=split", false, 0 },
    { "blocked-bloom n=2000 p=0.01 layout=block", false, 0 },
    { "counting-bloom n=2000 p=0.01", false, 3 },
    { "gcs p=0.01", true, 0 },
    { "gcs p=0.01 stream=continuous", true, 0 },
    { "fuse8", true, 0 },
    { "fuse16", true, 0 },
};

/* The case's filter is what it is meant to be: a coded hfb bank, counted
 * copies in chained tables, several stages. */
static void expect_shape(const amq_filter *f, const char *spec)
{
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    const char *family = amq_filter_family(f);
    if (strcmp(family, "hfb") == 0) {
        bool coded = false;
        for (size_t i = 0; i < info.detail_count; i++)
            if (strstr(info.details[i].name, "_encoding") &&
                strcmp(info.details[i].text, "golomb") == 0)
                coded = true;
        if (!coded)
            fail_msg("%s: no Golomb-coded bank", spec);
    } else if (strcmp(family, "cuckoo") == 0) {
        assert_true(amq_test_find_detail(&info, "counted_copies")->value > 0);
        if (strstr(spec, "growth"))
            assert_true(amq_test_find_detail(&info, "tables")->value >= 2);
    } else if (strcmp(family, "scalable-bloom") == 0) {
        assert_true(amq_test_find_detail(&info, "stages")->value >= 3);
    }
}

/* Under the allocator in use, with every allocation failing (the
 * counting allocator's and the C library's both), amq_save_to_writer
 * writes what amq_save_to_memory wrote before, and asks for no memory;
 * amq_saved_bytes neither; amq_save_to_memory asks for its buffer alone. */
static void expect_save_allocates_nothing(const family_case *fc, const char *allocator)
{
    amq_filter *f = make_filter(fc);
    expect_shape(f, fc->spec);
    uint8_t *bytes = NULL;
    size_t len = 0;
    assert_int_equal(amq_save_to_memory(&bytes, &len, f, NULL), AMQ_OK);
    assert_true(len <= CAPTURED_MAX);

    captured_len = 0;
    captured_calls = 0;
    uint64_t size = 0;
    long attempts = the_counter.attempts;
    libc_calls = 0;
    the_counter.fail_all = true;
    libc_fail = true;
    amq_diag diag = { .message = "" };
    int status = amq_save_to_writer(f, capture, NULL, &diag);
    int size_status = amq_saved_bytes(&size, f, NULL);
    long save_attempts = the_counter.attempts - attempts;
    long save_libc_calls = libc_calls;
    uint8_t *refused = NULL;
    size_t refused_len = 0;
    int memory_status = amq_save_to_memory(&refused, &refused_len, f, NULL);
    long memory_attempts = the_counter.attempts - attempts - save_attempts;
    long memory_libc_calls = libc_calls - save_libc_calls;
    libc_fail = false;
    fail_none();

    if (status != AMQ_OK)
        fail_msg("%s (%s): amq_save_to_writer with no memory: %s", fc->spec, allocator,
                 diag.message);
    if (save_attempts != 0 || save_libc_calls != 0)
        fail_msg("%s (%s): saving asked for memory %ld times (C library: %ld)", fc->spec, allocator,
                 save_attempts, save_libc_calls);
    assert_int_equal(size_status, AMQ_OK);
    assert_int_equal(size, len);
    assert_int_equal(captured_len, len);
    assert_memory_equal(captured, bytes, len);
    assert_true(captured_calls >= 2); /* the header, ..., the checksum */
    /* amq_save_to_memory: its buffer, refused, and nothing else. */
    assert_int_equal(memory_status, AMQ_ENOMEM);
    assert_null(refused);
    assert_int_equal(memory_attempts + memory_libc_calls, 1);
    amq_buffer_free(bytes);
    amq_free(f);
}

static void test_save_allocates_nothing(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof save_cases / sizeof save_cases[0]; i++)
        expect_save_allocates_nothing(&save_cases[i], "counting allocator");
    expect_nothing_live("saves");
    /* And with the C library's allocator, whose calls the wrappers fail. */
    assert_int_equal(amq_set_allocator(NULL), AMQ_OK);
    for (size_t i = 0; i < sizeof save_cases / sizeof save_cases[0]; i++)
        expect_save_allocates_nothing(&save_cases[i], "the C library's");
    assert_int_equal(amq_set_allocator(&counting), AMQ_OK);
}

/* ---- installing and restoring ------------------------------------------------------------ */

static void test_set_and_restore(void **state)
{
    (void)state;
    /* An allocator missing a function is refused; the one in use stays. */
    for (int missing = 0; missing < 4; missing++) {
        amq_allocator partial = counting;
        if (missing == 0)
            partial.alloc = NULL;
        else if (missing == 1)
            partial.calloc = NULL;
        else if (missing == 2)
            partial.realloc = NULL;
        else
            partial.free = NULL;
        assert_int_equal(amq_set_allocator(&partial), AMQ_EINVAL);
    }
    long before = the_counter.attempts;
    watch_begin();
    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, "bloom n=1000 p=0.01", NULL), AMQ_OK);
    amq_free(f);
    watch_end("after a refused allocator");
    assert_true(the_counter.attempts > before);

    /* NULL: the C library's functions again, and the counting allocator
     * sees nothing. */
    assert_int_equal(amq_set_allocator(NULL), AMQ_OK);
    before = the_counter.attempts;
    libc_calls = 0;
    assert_int_equal(amq_new(&f, "cuckoo n=1000 p=0.01", NULL), AMQ_OK);
    uint8_t *bytes = NULL;
    size_t len = 0;
    assert_int_equal(amq_save_to_memory(&bytes, &len, f, NULL), AMQ_OK);
    assert_true(libc_calls > 0);
    assert_int_equal(the_counter.attempts, before);
    amq_buffer_free(bytes); /* free(), the default's */
    amq_free(f);

    /* And back. */
    assert_int_equal(amq_set_allocator(&counting), AMQ_OK);
    watch_begin();
    assert_int_equal(amq_new(&f, "cuckoo n=1000 p=0.01", NULL), AMQ_OK);
    amq_free(f);
    watch_end("reinstalled");
    assert_true(the_counter.attempts > before);
    expect_nothing_live("reinstalled");
}

/* ---- the run ------------------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "/tmp/amq-allocator-%ld", (long)getpid());
    if (mkdir(scratch, 0700) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char command[200];
    snprintf(command, sizeof command, "rm -rf '%s'", scratch);
    return system(command) == 0 ? 0 : -1;
}

int main(void)
{
    /* Before any other call of the library. */
    if (amq_set_allocator(&counting) != AMQ_OK)
        return 1;
    seed = amq_test_seed(20261207);
    make_keys();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_family),
        cmocka_unit_test(test_counted_copies_and_stages),
        cmocka_unit_test(test_tables_aligned),
        cmocka_unit_test(test_bundle),
        cmocka_unit_test(test_frontier),
        cmocka_unit_test(test_failing_allocator),
        cmocka_unit_test(test_save_allocates_nothing),
        cmocka_unit_test(test_set_and_restore),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
