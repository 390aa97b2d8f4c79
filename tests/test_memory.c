/*
 * Tests for filters in memory (amq_save_to_memory, amq_save_to_writer,
 * amq_load_from_memory), for every family:
 *
 *   - the bytes saved to memory, and those a writer receives, are the
 *     file's bytes exactly, and the writer gets them in non-empty pieces;
 *   - a writer that stops the save, at any of its calls, gets no further
 *     call, and the save answers AMQ_EIO and says so (nothing leaks: the
 *     sanitizer build checks);
 *   - a filter loaded from memory answers every key put in, and as the
 *     original for keys never put in, whatever then happens to the buffer
 *     (it is scribbled over and freed) - unless it borrowed the buffer;
 *   - AMQ_LOAD_BORROW: a static filter of gcs or fuse keeps pointers into
 *     the caller's buffer (a fuse filter's answers follow the buffer's
 *     fingerprints), at an odd address too, and never writes to it; the
 *     other families copy;
 *   - every prefix of an image and every single damaged byte is refused,
 *     with the code the damaged field calls for; NULL arguments and unknown
 *     flags are AMQ_EINVAL; an image of a bundle or of an unknown family is
 *     AMQ_EUNSUPPORTED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "core/format.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The keys never put in that each loaded filter is asked about. */
enum { ABSENT = 100000 };

typedef struct family_case {
    const char *spec;
    size_t keys;    /* keys put in */
    bool borrows;   /* with AMQ_LOAD_BORROW, points into the caller's buffer */
    bool fuse;      /* its payload is the fingerprints, any value harmless */
    size_t small_n; /* keys of the small filter whose every byte is damaged */
} family_case;

static const family_case cases[] = {
    { "bloom p=0.01", 100000, false, false, 100 },
    { "blocked-bloom p=0.01", 20000, false, false, 100 },
    { "counting-bloom p=0.01", 20000, false, false, 50 },
    { "scalable-bloom n=1000 p=0.01", 20000, false, false, 40 },
    { "cuckoo p=0.01", 100000, false, false, 100 },
    { "gcs p=0.01", 100000, true, false, 100 },
    { "hfb p=0.01 hash=md5", 20000, false, false, 100 },
    { "fuse8 p=0.004", 100000, true, true, 100 },
    { "fuse16", 20000, true, true, 100 },
};
#define CASE_COUNT (sizeof cases / sizeof cases[0])

static amq_filter *build(const char *spec, const amq_test_keys *keys)
{
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_build(&f, spec, keys->pointers, keys->lens, keys->count, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: %s", spec, diag.message);
    return f;
}

static uint8_t *save_to_memory(const amq_filter *f, size_t *len)
{
    uint8_t *bytes = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_save_to_memory(&bytes, len, f, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: save to memory: %s", amq_filter_family(f), diag.message);
    assert_non_null(bytes);
    return bytes;
}

/* A loaded filter saves back to exactly the bytes it was loaded from. */
static void expect_saves_back(const amq_filter *loaded, const uint8_t *bytes, size_t len)
{
    size_t again_len = 0;
    uint8_t *again = save_to_memory(loaded, &again_len);
    assert_int_equal(again_len, len);
    assert_memory_equal(again, bytes, len);
    free(again);
}

/* A copy of bytes at `offset` past a fresh allocation's start, the
 * allocation ending where the copy does (so a read past it is caught). */
static uint8_t *copy_at(const uint8_t *bytes, size_t len, size_t offset, uint8_t **allocation)
{
    *allocation = malloc(offset + len + 1);
    assert_non_null(*allocation);
    memcpy(*allocation + offset, bytes, len);
    return *allocation + offset;
}

/* f answers "maybe" for every key of present, and as expected does for
 * every key of absent. */
static void expect_answers(const char *what, const amq_filter *expected, const amq_filter *f,
                           const amq_test_keys *present, const amq_test_keys *absent)
{
    size_t most = present->count > absent->count ? present->count : absent->count;
    uint8_t *got = malloc(most), *want = malloc(most);
    assert_non_null(got);
    assert_non_null(want);
    assert_int_equal(amq_contains_many(got, f, present->pointers, present->lens, present->count),
                     AMQ_OK);
    for (size_t i = 0; i < present->count; i++)
        if (got[i] != 1)
            fail_msg("%s: key %zu of %zu put in is absent", what, i, present->count);
    assert_int_equal(amq_contains_many(got, f, absent->pointers, absent->lens, absent->count),
                     AMQ_OK);
    assert_int_equal(
        amq_contains_many(want, expected, absent->pointers, absent->lens, absent->count), AMQ_OK);
    for (size_t i = 0; i < absent->count; i++)
        if (got[i] != want[i])
            fail_msg("%s: absent key %zu answers %d, the original %d", what, i, got[i], want[i]);
    free(got);
    free(want);
}

/* ---- writers --------------------------------------------------------------- */

typedef struct collector {
    uint8_t *data;
    size_t len, capacity;
    size_t calls;
    size_t smallest, largest;
    size_t stop_at; /* the call (1, 2, ...) that answers `answer`; 0: none */
    int answer;
    bool called_after_stop;
} collector;

static int collect(void *context, const void *data, size_t len)
{
    collector *c = context;
    if (c->stop_at && c->calls >= c->stop_at)
        c->called_after_stop = true;
    c->calls++;
    assert_non_null(data);
    if (len < c->smallest)
        c->smallest = len;
    if (len > c->largest)
        c->largest = len;
    if (c->calls == c->stop_at)
        return c->answer;
    if (c->len + len > c->capacity) {
        size_t capacity = c->capacity ? c->capacity : 256;
        while (capacity < c->len + len)
            capacity *= 2;
        uint8_t *bigger = realloc(c->data, capacity);
        assert_non_null(bigger);
        c->data = bigger;
        c->capacity = capacity;
    }
    /* Taken a byte at a time, as a writer with the smallest buffer would. */
    for (size_t i = 0; i < len; i++)
        c->data[c->len++] = ((const uint8_t *)data)[i];
    return 0;
}

static collector collector_new(size_t stop_at, int answer)
{
    return (collector){ .smallest = SIZE_MAX, .stop_at = stop_at, .answer = answer };
}

/* The writer gets the file's bytes in non-empty pieces, at least three
 * (prefix, payload, checksum) when there is a payload; then every stop,
 * at each of those calls, is AMQ_EIO with no further call. */
static void expect_writer(const amq_filter *f, const uint8_t *file, size_t len)
{
    const char *family = amq_filter_family(f);
    collector c = collector_new(0, 0);
    amq_diag diag = { .message = "" };
    int status = amq_save_to_writer(f, collect, &c, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: save to writer: %s", family, diag.message);
    assert_int_equal(c.len, len);
    assert_memory_equal(c.data, file, len);
    assert_true(c.smallest > 0);
    assert_true(c.calls >= 2);
    size_t calls = c.calls;
    free(c.data);

    for (size_t stop = 1; stop <= calls; stop++) {
        collector s = collector_new(stop, (int)stop + 6);
        amq_diag stopped = { .message = "" };
        status = amq_save_to_writer(f, collect, &s, &stopped);
        if (status != AMQ_EIO)
            fail_msg("%s: a writer stopping at call %zu of %zu: status %d", family, stop, calls,
                     status);
        assert_false(s.called_after_stop);
        assert_int_equal(s.calls, stop);
        char expected[64];
        snprintf(expected, sizeof expected, "with %d after taking %zu of %zu bytes", (int)stop + 6,
                 s.len, len);
        if (!strstr(stopped.message, expected))
            fail_msg("%s: a writer stopping at call %zu: message '%s'", family, stop,
                     stopped.message);
        assert_int_equal(stopped.offset, s.len);
        assert_memory_equal(s.data ? s.data : (const uint8_t *)"", file, s.len);
        free(s.data);
    }
}

/* ---- every family, at real sizes ------------------------------------------ */

static void test_every_family(void **state)
{
    uint64_t seed = amq_test_seed(0x3e30);
    amq_test_keys absent;
    amq_test_keys_make(&absent, seed, 1, ABSENT);
    for (size_t i = 0; i < CASE_COUNT; i++) {
        const family_case *k = &cases[i];
        amq_test_keys keys;
        amq_test_keys_make(&keys, seed, 0, k->keys);
        amq_filter *f = build(k->spec, &keys);

        /* Saved to memory: the file's bytes. */
        size_t len = 0;
        uint8_t *bytes = save_to_memory(f, &len);
        char path[AMQ_TEST_PATH_MAX];
        amq_test_scratch_path(path, state, "filter.amq");
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
        size_t file_len = 0;
        char *file = amq_test_read_file(path, &file_len);
        assert_non_null(file);
        assert_int_equal(file_len, len);
        assert_memory_equal(file, bytes, len);
        uint64_t saved_size = 0;
        assert_int_equal(amq_saved_bytes(&saved_size, f, NULL), AMQ_OK);
        assert_int_equal(saved_size, len);
        free(file);

        expect_writer(f, bytes, len);

        /* Loaded from memory (a copy whatever the family): the buffer is
         * scribbled over and freed before the filter is asked anything. */
        uint8_t *allocation;
        uint8_t *image = copy_at(bytes, len, 0, &allocation);
        for (unsigned flags = 0; flags <= AMQ_LOAD_BORROW; flags += AMQ_LOAD_BORROW) {
            if (flags && k->borrows)
                continue;
            memcpy(image, bytes, len);
            amq_filter *loaded = NULL;
            amq_diag diag = { .message = "" };
            int status = amq_load_from_memory(&loaded, image, len, flags, &diag);
            if (status != AMQ_OK)
                fail_msg("%s: load from memory (flags %u): %s", k->spec, flags, diag.message);
            memset(image, 0xa5, len);
            char what[96];
            snprintf(what, sizeof what, "%s loaded from memory, flags %u", k->spec, flags);
            expect_answers(what, f, loaded, &keys, &absent);
            amq_info info;
            assert_int_equal(amq_info_get(&info, loaded), AMQ_OK);
            assert_int_equal(info.file_checksum,
                             amq__load_u64le(bytes + len - AMQ__FORMAT_TRAILER_SIZE));
            expect_saves_back(loaded, bytes, len);
            amq_free(loaded);
        }
        free(allocation);

        /* Borrowed, at an odd address: the same answers, and the buffer
         * unchanged when the filter is freed. */
        if (k->borrows) {
            image = copy_at(bytes, len, 1, &allocation);
            amq_filter *loaded = NULL;
            amq_diag diag = { .message = "" };
            int status = amq_load_from_memory(&loaded, image, len, AMQ_LOAD_BORROW, &diag);
            if (status != AMQ_OK)
                fail_msg("%s: borrowed load at an odd address: %s", k->spec, diag.message);
            char what[96];
            snprintf(what, sizeof what, "%s borrowed at an odd address", k->spec);
            expect_answers(what, f, loaded, &keys, &absent);
            amq_free(loaded);
            assert_memory_equal(image, bytes, len);
            free(allocation);
        }

        free(bytes);
        amq_free(f);
        amq_test_keys_free(&keys);
    }
    amq_test_keys_free(&absent);
}

/* A borrowing fuse filter reads the caller's buffer: zeroing the
 * fingerprints there (harmless for a fuse filter, whatever their values)
 * turns the keys put in "absent", all but those whose fingerprint is 0. A
 * copying load does not notice. */
static void test_borrowed_fuse_reads_the_buffer(void **state)
{
    (void)state;
    uint64_t seed = amq_test_seed(0xb0440);
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, 20000);
    amq_filter *f = build("fuse8", &keys);
    size_t len = 0;
    uint8_t *bytes = save_to_memory(f, &len);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, bytes, len, NULL), AMQ_OK);
    size_t payload_at = (size_t)(c.payload - bytes);

    for (size_t offset = 0; offset < 2; offset++) {
        for (unsigned flags = 0; flags <= AMQ_LOAD_BORROW; flags += AMQ_LOAD_BORROW) {
            uint8_t *allocation;
            uint8_t *image = copy_at(bytes, len, offset, &allocation);
            amq_filter *loaded = NULL;
            assert_int_equal(amq_load_from_memory(&loaded, image, len, flags, NULL), AMQ_OK);
            memset(image + payload_at, 0, (size_t)c.payload_len);
            uint8_t *results = malloc(keys.count);
            assert_non_null(results);
            assert_int_equal(
                amq_contains_many(results, loaded, keys.pointers, keys.lens, keys.count), AMQ_OK);
            size_t present = 0;
            for (size_t i = 0; i < keys.count; i++)
                present += results[i];
            if (flags & AMQ_LOAD_BORROW)
                assert_true(present < keys.count / 64); /* about 1 in 256 */
            else
                assert_int_equal(present, keys.count);
            free(results);
            amq_free(loaded);
            free(allocation);
        }
    }
    free(bytes);
    amq_free(f);
    amq_test_keys_free(&keys);
}

/* ---- damage -------------------------------------------------------------- */

/* The status a flip of the byte at i must give: the magic is AMQ_EFORMAT,
 * the version AMQ_EVERSION (a higher one), anything else AMQ_ECORRUPT. */
static int damage_status(size_t i)
{
    return i < 8 ? AMQ_EFORMAT : i < 12 ? AMQ_EVERSION : AMQ_ECORRUPT;
}

static void expect_refused(const char *what, const uint8_t *image, size_t len, unsigned flags,
                           int expected)
{
    uint8_t *exact = malloc(len ? len : 1);
    assert_non_null(exact);
    memcpy(exact, image, len);
    amq_filter *f = (amq_filter *)&f;
    amq_diag diag = { .message = "" };
    int status = amq_load_from_memory(&f, exact, len, flags, &diag);
    if (status != expected)
        fail_msg("%s (flags %u): status %d, not %d (%s)", what, flags, status, expected,
                 diag.message);
    assert_null(f);
    assert_true(diag.message[0] != '\0');
    free(exact);
}

/* A small filter of each family: each prefix, and each byte changed in
 * three ways, is refused under either flag. */
static void test_small_images_damaged(void **state)
{
    (void)state;
    uint64_t seed = amq_test_seed(0xda3a6e);
    static const uint8_t flips[] = { 0x10, 0x01, 0xff };
    for (size_t i = 0; i < CASE_COUNT; i++) {
        amq_test_keys keys;
        amq_test_keys_make(&keys, seed, 0, cases[i].small_n);
        amq_filter *f = build(cases[i].spec, &keys);
        size_t len = 0;
        uint8_t *bytes = save_to_memory(f, &len);
        char what[160];
        for (unsigned flags = 0; flags <= AMQ_LOAD_BORROW; flags += AMQ_LOAD_BORROW) {
            for (size_t cut = 0; cut < len; cut++) {
                snprintf(what, sizeof what, "%s cut to %zu of %zu bytes", cases[i].spec, cut, len);
                expect_refused(what, bytes, cut, flags, AMQ_ECORRUPT);
            }
            for (size_t at = 0; at < len; at++) {
                for (size_t j = 0; j < sizeof flips; j++) {
                    bytes[at] ^= flips[j];
                    snprintf(what, sizeof what, "%s with byte %zu of %zu xor 0x%02x", cases[i].spec,
                             at, len, flips[j]);
                    /* Only the version's low byte can become 0 (0x01 ^ 0x01). */
                    int expected = at == 8 && flips[j] == 0x01 ? AMQ_ECORRUPT : damage_status(at);
                    expect_refused(what, bytes, len, flags, expected);
                    bytes[at] ^= flips[j];
                }
            }
            /* A byte more is damage too. */
            uint8_t *longer = malloc(len + 1);
            assert_non_null(longer);
            memcpy(longer, bytes, len);
            longer[len] = 0;
            snprintf(what, sizeof what, "%s with a byte appended", cases[i].spec);
            expect_refused(what, longer, len + 1, flags, AMQ_ECORRUPT);
            free(longer);
        }
        free(bytes);
        amq_free(f);
        amq_test_keys_free(&keys);
    }
}

/* A large image damaged at random places, each refused. */
static void test_large_image_damaged(void **state)
{
    (void)state;
    uint64_t seed = amq_test_seed(0x1a46e);
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed);
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, 100000);
    static const char *const specs[] = { "gcs", "fuse16", "cuckoo" };
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        amq_filter *f = build(specs[s], &keys);
        size_t len = 0;
        uint8_t *bytes = save_to_memory(f, &len);
        for (int trial = 0; trial < 200; trial++) {
            size_t at = (size_t)amq_test_below(&rng, len);
            uint8_t flip = (uint8_t)(1 + amq_test_below(&rng, 255));
            bytes[at] ^= flip;
            amq_filter *loaded = (amq_filter *)&loaded;
            int status = amq_load_from_memory(&loaded, bytes, len, AMQ_LOAD_BORROW, NULL);
            bytes[at] ^= flip;
            if (status >= 0 || loaded)
                fail_msg("%s: byte %zu of %zu xor 0x%02x: status %d", specs[s], at, len, flip,
                         status);
        }
        /* Cut anywhere. */
        for (int trial = 0; trial < 50; trial++) {
            size_t cut = (size_t)amq_test_below(&rng, len);
            amq_filter *loaded = (amq_filter *)&loaded;
            assert_int_equal(amq_load_from_memory(&loaded, bytes, cut, 0, NULL), AMQ_ECORRUPT);
            assert_null(loaded);
        }
        free(bytes);
        amq_free(f);
    }
    amq_test_keys_free(&keys);
}

/* ---- arguments ----------------------------------------------------------- */

static int never_called(void *context, const void *data, size_t len)
{
    (void)context;
    (void)data;
    (void)len;
    fail_msg("a writer was called");
    return 0;
}

static void test_arguments(void **state)
{
    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, "bloom n=100 p=0.01", NULL), AMQ_OK);
    assert_int_equal(amq_add(f, "k", 1), AMQ_OK);
    uint8_t *bytes = (uint8_t *)&bytes;
    size_t len = 7;
    amq_diag diag = { .message = "" };

    assert_int_equal(amq_save_to_memory(NULL, &len, f, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "out"));
    assert_int_equal(len, 0);
    assert_int_equal(amq_save_to_memory(&bytes, NULL, f, NULL), AMQ_EINVAL);
    assert_null(bytes);
    assert_int_equal(amq_save_to_memory(&bytes, &len, NULL, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "filter"));
    assert_int_equal(amq_save_to_writer(NULL, never_called, NULL, NULL), AMQ_EINVAL);
    assert_int_equal(amq_save_to_writer(f, NULL, NULL, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "writer"));

    assert_int_equal(amq_save_to_memory(&bytes, &len, f, NULL), AMQ_OK);
    amq_filter *loaded = (amq_filter *)&loaded;
    assert_int_equal(amq_load_from_memory(NULL, bytes, len, 0, &diag), AMQ_EINVAL);
    assert_int_equal(amq_load_from_memory(&loaded, NULL, len, 0, &diag), AMQ_EINVAL);
    assert_null(loaded);
    assert_non_null(strstr(diag.message, "data"));
    loaded = (amq_filter *)&loaded;
    assert_int_equal(amq_load_from_memory(&loaded, NULL, 0, 0, NULL), AMQ_EINVAL);
    assert_null(loaded);
    static const unsigned bad_flags[] = { AMQ_LOAD_MMAP, AMQ_LOAD_MMAP | AMQ_LOAD_BORROW, 4,
                                          0x80000000u };
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
        loaded = (amq_filter *)&loaded;
        assert_int_equal(amq_load_from_memory(&loaded, bytes, len, bad_flags[i], &diag),
                         AMQ_EINVAL);
        assert_null(loaded);
        assert_non_null(strstr(diag.message, "flags"));
    }
    /* An empty image is a truncated one, as an empty file is. */
    assert_int_equal(amq_load_from_memory(&loaded, bytes, 0, 0, NULL), AMQ_ECORRUPT);
    /* Not an amq image at all. */
    assert_int_equal(
        amq_load_from_memory(&loaded, "not a filter, at all, of any kind", 33, 0, NULL),
        AMQ_EFORMAT);

    /* A file's AMQ_LOAD_BORROW means nothing: refused. */
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_write_file(path, bytes, len);
    assert_int_equal(amq_load(&loaded, path, AMQ_LOAD_BORROW, NULL), AMQ_EINVAL);
    assert_null(loaded);
    /* ... while the bytes written to a file are a file amq_load reads. */
    assert_int_equal(amq_load(&loaded, path, 0, NULL), AMQ_OK);
    assert_int_equal(amq_contains(loaded, "k", 1), 1);
    amq_free(loaded);
    free(bytes);
    amq_free(f);
}

/* Containers that are not filters of this build: refused, as amq_load
 * refuses such files. */
static void test_not_a_filter(void **state)
{
    (void)state;
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, 0);
    static const uint32_t ids[] = { AMQ__FAMILY_BUNDLE, AMQ__FAMILY_FRONTIER, 40 };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        amq__container c = { .family = ids[i], .hasher = hasher };
        uint8_t payload[24] = { 1, 2, 3 };
        amq__piece piece = { .data = payload, .len = sizeof payload };
        uint8_t *bytes = NULL;
        size_t len = 0;
        assert_int_equal(amq__format_encode(&bytes, &len, &c, &piece, 1, NULL), AMQ_OK);
        for (unsigned flags = 0; flags <= AMQ_LOAD_BORROW; flags += AMQ_LOAD_BORROW) {
            amq_filter *f = (amq_filter *)&f;
            amq_diag diag = { .message = "" };
            assert_int_equal(amq_load_from_memory(&f, bytes, len, flags, &diag), AMQ_EUNSUPPORTED);
            assert_null(f);
            assert_non_null(strstr(diag.message, "the image in memory"));
        }
        free(bytes);
    }
}

/* The smallest filters: a payload of a few bytes, or none (an empty fuse
 * filter), round-trips through a writer and memory. */
static void test_tiny_filters(void **state)
{
    (void)state;
    static const char *const specs[] = { "bloom m=64 k=1", "fuse8", "gcs", "hfb" };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        amq_filter *f = NULL;
        assert_int_equal(amq_build(&f, specs[i], NULL, NULL, 0, NULL), AMQ_OK);
        size_t len = 0;
        uint8_t *bytes = save_to_memory(f, &len);
        expect_writer(f, bytes, len);
        for (unsigned flags = 0; flags <= AMQ_LOAD_BORROW; flags += AMQ_LOAD_BORROW) {
            amq_filter *loaded = NULL;
            assert_int_equal(amq_load_from_memory(&loaded, bytes, len, flags, NULL), AMQ_OK);
            assert_int_equal(amq_contains(loaded, "0123456789abcdef", 16), 0);
            expect_saves_back(loaded, bytes, len);
            amq_free(loaded);
        }
        free(bytes);
        amq_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        AMQ_TEST_WITH_SCRATCH(test_every_family),
        cmocka_unit_test(test_borrowed_fuse_reads_the_buffer),
        cmocka_unit_test(test_small_images_damaged),
        cmocka_unit_test(test_large_image_damaged),
        AMQ_TEST_WITH_SCRATCH(test_arguments),
        cmocka_unit_test(test_not_a_filter),
        cmocka_unit_test(test_tiny_filters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
