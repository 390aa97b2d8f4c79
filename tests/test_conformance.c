/*
 * The conformance test: every family the library lists (amq_family_at)
 * keeps the generic handle's promises, through the generic handle only:
 *
 *   - no false negative after amq_build or amq_add, for keys of several
 *     shapes (random bytes, decimal strings, the empty key, long keys);
 *   - amq_contains_many answers as amq_contains, for batches of every size;
 *   - a filter saved (to memory and to a file) and loaded answers as the
 *     saved one, describes itself alike, and saves to the same bytes again;
 *   - amq_info: the family's name, capacity, keys, memory and bits per key
 *     as amq.h defines them, the target rate asked for, distinct details;
 *   - an empty filter answers "no";
 *   - where the family merges, the union holds every key of both;
 *   - where it removes, the keys not removed still answer "maybe", and
 *     removing every key leaves a filter as empty as a new one;
 *   - amq_add_many, amq_add_unique_many and amq_remove_many answer as the
 *     single calls key by key and leave the same filter.
 *
 * Each family's spec is in the one table below, the one list a new family
 * touches: a family the library has and the table lacks fails the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

/* ---- the families ---------------------------------------------------------------- */

/* What amq_info's keys is for a filter of n distinct keys. */
typedef enum keys_kind {
    KEYS_EXACT,     /* n */
    KEYS_STORED,    /* the keys it stored: a key it already answered "maybe" for
                       is not stored again (scalable-bloom), so at most n */
    KEYS_ESTIMATED, /* estimated_keys rounded (keys_estimated is 1) */
} keys_kind;

typedef struct family_case {
    const char *family;
    /* A spec with a fixed seed, sized for the keys every check adds
     * (dynamic families), or without a capacity (static ones: the keys
     * built from are the capacity). */
    const char *spec;
    uint64_t capacity; /* amq_info's capacity before any key: the spec's n (0: static) */
    double target_fpr; /* amq_info's target_fpr for the spec */
    keys_kind keys;
    /* amq_info's capacity grows with the keys (scalable stages), and
     * bits_per_key is per key held rather than per capacity. */
    int grows;
    /* The keys each of two filters merged holds (0: half the keys): a
     * union the family takes (a scalable filter refuses one whose stages
     * would each hold more than their capacity). */
    size_t merge_keys;
} family_case;

enum { MAX_KEYS = 100000 };

static const family_case cases[] = {
    { .family = "bloom",
      .spec = "bloom n=100000 p=0.01 seed=11",
      .capacity = 100000,
      .target_fpr = 0.01,
      .keys = KEYS_ESTIMATED },
    { .family = "blocked-bloom",
      .spec = "blocked-bloom n=100000 p=0.01 seed=12",
      .capacity = 100000,
      .target_fpr = 0.01,
      .keys = KEYS_ESTIMATED },
    { .family = "counting-bloom",
      .spec = "counting-bloom n=100000 p=0.01 seed=13",
      .capacity = 100000,
      .target_fpr = 0.01,
      .keys = KEYS_ESTIMATED },
    { .family = "scalable-bloom",
      .spec = "scalable-bloom n=5000 p=0.01 seed=14",
      .capacity = 5000,
      .target_fpr = 0.01,
      .keys = KEYS_STORED,
      .grows = 1,
      .merge_keys = 2000 },
    { .family = "cuckoo",
      .spec = "cuckoo n=100000 p=0.01 seed=15",
      .capacity = 100000,
      .target_fpr = 0.01,
      .keys = KEYS_EXACT },
    { .family = "gcs", .spec = "gcs p=1/128 seed=16", .target_fpr = 1.0 / 128, .keys = KEYS_EXACT },
    { .family = "hfb", .spec = "hfb p=0.01 hash=md5", .target_fpr = 0.01, .keys = KEYS_EXACT },
    { .family = "fuse8",
      .spec = "fuse8 p=1/256 seed=18",
      .target_fpr = 1.0 / 256,
      .keys = KEYS_EXACT },
    { .family = "fuse16",
      .spec = "fuse16 p=1/65536 seed=19",
      .target_fpr = 1.0 / 65536,
      .keys = KEYS_EXACT },
};

enum { CASE_COUNT = sizeof cases / sizeof cases[0] };

static const family_case *case_of(const char *family)
{
    for (size_t i = 0; i < CASE_COUNT; i++)
        if (strcmp(cases[i].family, family) == 0)
            return &cases[i];
    return NULL;
}

static int is_static(const family_case *c)
{
    int answer = amq_family_is_static(c->family);
    assert_true(answer == 0 || answer == 1);
    return answer;
}

static int can(const family_case *c, int capability)
{
    int capabilities = amq_family_capabilities(c->family);
    assert_true(capabilities >= 0);
    return (capabilities & capability) != 0;
}

/* A per-family test's state: its case and a scratch directory. */
typedef struct fixture {
    char *dir; /* first: amq_test_scratch_path reads it through the state */
    const family_case *c;
} fixture;

static int fixture_setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->c = *state;
    void *dir = NULL;
    int status = amq_test_scratch_setup(&dir);
    fx->dir = dir;
    *state = fx;
    return status;
}

static int fixture_teardown(void **state)
{
    fixture *fx = *state;
    void *dir = fx->dir;
    int status = amq_test_scratch_teardown(&dir);
    free(fx);
    return status;
}

static const family_case *fixture_case(void **state)
{
    return ((fixture *)*state)->c;
}

/* The state amq_test_scratch_path takes: a pointer to the directory. */
static void **scratch(void **state)
{
    return (void **)&((fixture *)*state)->dir;
}

/* ---- keys ------------------------------------------------------------------------- */

/* A list of keys: pointers into one arena, with the arrays amq_build and
 * the batch calls take. */
typedef struct key_list {
    uint8_t *arena;
    size_t arena_used, arena_size;
    const void **pointers;
    size_t *lens;
    size_t count, size;
} key_list;

static void list_init(key_list *l, size_t count, size_t bytes)
{
    l->arena = malloc(bytes ? bytes : 1);
    l->pointers = malloc(count * sizeof *l->pointers);
    l->lens = malloc(count * sizeof *l->lens);
    assert_non_null(l->arena);
    assert_non_null(l->pointers);
    assert_non_null(l->lens);
    l->arena_used = 0;
    l->arena_size = bytes;
    l->count = 0;
    l->size = count;
}

static uint8_t *list_push(key_list *l, size_t len)
{
    assert_true(l->count < l->size && l->arena_used + len <= l->arena_size);
    uint8_t *key = l->arena + l->arena_used;
    l->arena_used += len;
    l->pointers[l->count] = key;
    l->lens[l->count] = len;
    l->count++;
    return key;
}

static void list_free(key_list *l)
{
    free(l->arena);
    free(l->pointers);
    free(l->lens);
    memset(l, 0, sizeof *l);
}

static void random_bytes(amq_test_rng *rng, uint8_t *out, size_t len)
{
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)amq_test_next(rng);
}

/*
 * The keys put in: count distinct keys of every shape, interleaved so that
 * any prefix holds each shape - the empty key first, then in turn:
 *   - a decimal string "0", "1", ... (set 0) or, for the absent keys
 *     (set 1), the same strings after a '-';
 *   - random bytes of 8 to 40 bytes but never 16, the first byte's high
 *     bit set for set 0 and clear (and not a digit or '-') for set 1;
 *   - the 16-byte test key of its set (amq_test_make_key);
 *   - every 64th, a long key of 1 to 5 KiB of random bytes, whose first
 *     byte follows the random keys' rule;
 *   - for set 0 only, the 128 one-byte keys 0x80 .. 0xff.
 * No key of one set is a key of the other, and no two keys of a set are
 * alike (random keys of 8 bytes or more collide with a chance below 2^-40).
 */
static void make_keys(key_list *out, uint64_t set, size_t count)
{
    list_init(out, count, count * 48 + (count / 64 + 1) * 5120 + 64);
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ (0x636f6e666f726dULL + set));
    uint64_t decimal = 0, test_key = 0, one_byte = 0;
    if (set == 0)
        (void)list_push(out, 0);
    for (size_t turn = 0; out->count < count; turn++) {
        switch (turn % 5) {
        case 0: {
            char text[32];
            int len = snprintf(text, sizeof text, "%s%llu", set == 0 ? "" : "-",
                               (unsigned long long)decimal++);
            memcpy(list_push(out, (size_t)len), text, (size_t)len);
            break;
        }
        case 1:
        case 3: {
            size_t len = 8 + (size_t)amq_test_below(&rng, 33);
            if (len == 16)
                len = 17;
            if (turn % 64 == 1)
                len = 1024 + (size_t)amq_test_below(&rng, 4097);
            uint8_t *key = list_push(out, len);
            random_bytes(&rng, key, len);
            key[0] = set == 0 ? (uint8_t)(key[0] | 0x80) : (uint8_t)('a' + key[0] % 26);
            break;
        }
        case 2: {
            amq_test_key key = amq_test_make_key(seed, set, test_key++);
            memcpy(list_push(out, sizeof key), &key, sizeof key);
            break;
        }
        case 4:
            if (set == 0 && one_byte < 128) {
                *list_push(out, 1) = (uint8_t)(0x80 + one_byte++);
            } else {
                amq_test_key key = amq_test_make_key(seed, set, test_key++);
                memcpy(list_push(out, sizeof key), &key, sizeof key);
            }
            break;
        }
    }
}

/* The keys every check puts in, and keys never put in; made once. */
static key_list present, absent;
static size_t key_count;

/* ---- filters ---------------------------------------------------------------------- */

/* A filter of c holding keys [from, from + count) of present: amq_build
 * for a static family, amq_new and amq_add of each key for a dynamic one. */
static amq_filter *make_filter(const family_case *c, size_t from, size_t count)
{
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (is_static(c)) {
        int status =
            amq_build(&f, c->spec, present.pointers + from, present.lens + from, count, &diag);
        if (status != AMQ_OK)
            fail_msg("%s: amq_build of %zu keys: %s (%s)", c->spec, count, amq_strerror(status),
                     diag.message);
        return f;
    }
    int status = amq_new(&f, c->spec, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: amq_new: %s (%s)", c->spec, amq_strerror(status), diag.message);
    for (size_t i = from; i < from + count; i++) {
        status = amq_add(f, present.pointers[i], present.lens[i]);
        if (status != AMQ_OK)
            fail_msg("%s: amq_add of key %zu: %s", c->spec, i, amq_strerror(status));
    }
    return f;
}

/* An empty filter of c: amq_new, or amq_build of no keys. */
static amq_filter *make_empty(const family_case *c)
{
    return make_filter(c, 0, 0);
}

static void save_image(const family_case *c, const amq_filter *f, uint8_t **image, size_t *len)
{
    amq_diag diag = { .message = "" };
    int status = amq_save_to_memory(image, len, f, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: amq_save_to_memory: %s (%s)", c->family, amq_strerror(status), diag.message);
    assert_non_null(*image);
    assert_true(*len > 0);
}

static void expect_image(const family_case *c, const amq_filter *f, const uint8_t *image,
                         size_t len, const char *what)
{
    uint8_t *again = NULL;
    size_t again_len = 0;
    save_image(c, f, &again, &again_len);
    if (again_len != len || memcmp(again, image, len) != 0) {
        size_t at = 0;
        while (at < len && at < again_len && again[at] == image[at])
            at++;
        fail_msg("%s: %s: saved %zu bytes, differing from the %zu expected at byte %zu", c->family,
                 what, again_len, len, at);
    }
    amq_buffer_free(again);
}

/* The first key of keys [0, count) that f answers other than want for,
 * one by one: the test fails naming it. */
static void expect_answers(const family_case *c, const amq_filter *f, const key_list *keys,
                           size_t count, int want, const char *what)
{
    for (size_t i = 0; i < count; i++) {
        int got = amq_contains(f, keys->pointers[i], keys->lens[i]);
        if (got != want)
            fail_msg("%s: %s: key %zu of %zu (%zu bytes) answered %d, expected %d", c->family, what,
                     i, count, keys->lens[i], got, want);
    }
}

/* b answers as a does for the keys [0, count) of keys. */
static void expect_same_answers(const family_case *c, const amq_filter *a, const amq_filter *b,
                                const key_list *keys, size_t count, const char *what)
{
    for (size_t i = 0; i < count; i++) {
        int want = amq_contains(a, keys->pointers[i], keys->lens[i]);
        int got = amq_contains(b, keys->pointers[i], keys->lens[i]);
        assert_true(want == 0 || want == 1);
        if (got != want)
            fail_msg("%s: %s: key %zu (%zu bytes) answered %d, the saved filter %d", c->family,
                     what, i, keys->lens[i], got, want);
    }
}

/* ---- every family is in the table ----------------------------------------------- */

static void test_every_family_has_a_case(void **state)
{
    (void)state;
    size_t families = 0;
    for (const char *name; (name = amq_family_at(families)) != NULL; families++)
        if (!case_of(name))
            fail_msg("family %s (amq_family_at(%zu)) has no case in test_conformance.c's "
                     "table: add its spec there",
                     name, families);
    assert_int_equal(families, CASE_COUNT);
    /* Each case names a family the library has, once, and its spec makes
     * a filter of that family. */
    for (size_t i = 0; i < CASE_COUNT; i++) {
        const family_case *c = &cases[i];
        if (amq_family_is_static(c->family) < 0)
            fail_msg("case %s: the library has no such family", c->family);
        assert_ptr_equal(case_of(c->family), c);
        amq_filter *f = make_empty(c);
        assert_string_equal(amq_filter_family(f), c->family);
        amq_free(f);
        /* Static families are built, dynamic ones take adds. */
        assert_int_equal(is_static(c), !can(c, AMQ_CAN_ADD));
        assert_true(is_static(c) ? c->capacity == 0 : c->capacity > 0);
        /* The case grows as its family says a filter of its spec does. */
        assert_int_equal(c->grows, can(c, AMQ_CAN_GROW) && !can(c, AMQ_GROWS_IF_ASKED));
        /* A family whose keys are IDs is given keys of any length. */
        if (can(c, AMQ_TAKES_IDS))
            assert_non_null(strstr(c->spec, "hash=md5"));
    }
}

/* ---- no false negative ------------------------------------------------------------- */

static void test_no_false_negatives(void **state)
{
    const family_case *c = fixture_case(state);
    uint8_t *results = malloc(key_count);
    assert_non_null(results);
    amq_filter *f = make_filter(c, 0, key_count);
    expect_answers(c, f, &present, key_count, 1, "a key put in, by amq_contains");
    memset(results, 0, key_count);
    assert_int_equal(amq_contains_many(results, f, present.pointers, present.lens, key_count),
                     AMQ_OK);
    for (size_t k = 0; k < key_count; k++)
        if (results[k] != 1)
            fail_msg("%s: key %zu (%zu bytes) put in: amq_contains_many answered %u", c->family, k,
                     present.lens[k], results[k]);
    /* A dynamic family built from the keys is the filter they were
     * added to. */
    if (!is_static(c)) {
        amq_filter *built = NULL;
        amq_diag diag = { .message = "" };
        assert_int_equal(
            amq_build(&built, c->spec, present.pointers, present.lens, key_count, &diag), AMQ_OK);
        uint8_t *image = NULL;
        size_t len = 0;
        save_image(c, f, &image, &len);
        expect_image(c, built, image, len, "amq_build against amq_new and amq_add");
        amq_buffer_free(image);
        amq_free(built);
    }
    amq_free(f);
    free(results);
}

/* ---- batch equals single ------------------------------------------------------------ */

/* The keys of a batch query: present and absent keys alternating in runs
 * of 1 to 5. */
static void make_queries(key_list *out, size_t count)
{
    list_init(out, count, 0);
    size_t p = 0, a = 0;
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0x7175657279ULL);
    while (out->count < count) {
        int from_present = amq_test_below(&rng, 2) == 0;
        for (uint64_t run = 1 + amq_test_below(&rng, 5); run > 0 && out->count < count; run--) {
            const key_list *from = from_present ? &present : &absent;
            size_t *at = from_present ? &p : &a;
            size_t k = (*at)++ % key_count;
            out->pointers[out->count] = from->pointers[k];
            out->lens[out->count] = from->lens[k];
            out->count++;
        }
    }
}

static void test_batch_equals_single(void **state)
{
    const family_case *c = fixture_case(state);
    key_list queries;
    make_queries(&queries, 2 * key_count);
    int *single = malloc(queries.count * sizeof *single);
    uint8_t *results = malloc(queries.count + 1);
    assert_non_null(single);
    assert_non_null(results);
    /* Batch sizes: none, one, a few, and past every family's group. */
    static const size_t sizes[] = { 0, 1, 7, 1000, 1001, 1031, 4096, 4099, 25013 };
    enum { SIZE_COUNT = sizeof sizes / sizeof sizes[0] };
    /* Half the keys in: the other half of the "present" ones asked are
     * absent too, and false positives among them are answered alike. */
    amq_filter *f = make_filter(c, 0, key_count / 2);
    amq_filter *empty = make_empty(c);
    for (int which = 0; which < 2; which++) {
        const amq_filter *g = which ? empty : f;
        for (size_t k = 0; k < queries.count; k++) {
            single[k] = amq_contains(g, queries.pointers[k], queries.lens[k]);
            assert_true(single[k] == 0 || single[k] == 1);
        }
        size_t at = 0;
        for (size_t turn = 0; at < queries.count; turn++) {
            size_t n = sizes[turn % SIZE_COUNT];
            if (n > queries.count - at)
                n = queries.count - at;
            memset(results, 0xa5, n + 1);
            int status = amq_contains_many(results, g, queries.pointers + at, queries.lens + at, n);
            if (status != AMQ_OK)
                fail_msg("%s: amq_contains_many of %zu keys: %s", c->family, n,
                         amq_strerror(status));
            for (size_t k = 0; k < n; k++)
                if (results[k] != single[at + k])
                    fail_msg("%s%s: batch of %zu keys from %zu: key %zu (%zu bytes) "
                             "answered %u, amq_contains %d",
                             c->family, which ? " (empty)" : "", n, at, at + k,
                             queries.lens[at + k], results[k], single[at + k]);
            /* Nothing past the batch is written. */
            assert_int_equal(results[n], 0xa5);
            at += n;
        }
    }
    amq_free(empty);
    amq_free(f);
    free(results);
    free(single);
    list_free(&queries);
}

/* ---- info fields -------------------------------------------------------------------- */

/* What amq_info must say of a filter of c holding n distinct keys, put in
 * from scratch (merged filters included: their keys are distinct). */
static void expect_info(const family_case *c, const amq_filter *f, uint64_t n, const char *what)
{
    amq_info info;
    memset(&info, 0x5a, sizeof info);
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    if (!info.family || strcmp(info.family, c->family) != 0)
        fail_msg("%s: %s: amq_info names family %s", c->family, what,
                 info.family ? info.family : "(null)");
    assert_string_equal(amq_filter_family(f), c->family);

    /* Capacity: as asked; a static filter's is its keys; a growing one's
     * is at least what it holds. */
    if (is_static(c)) {
        if (info.capacity != n)
            fail_msg("%s: %s: capacity %llu for %llu keys", c->family, what,
                     (unsigned long long)info.capacity, (unsigned long long)n);
    } else if (c->grows) {
        if (info.capacity < c->capacity || info.capacity < info.keys)
            fail_msg("%s: %s: capacity %llu, %llu asked, %llu keys held", c->family, what,
                     (unsigned long long)info.capacity, (unsigned long long)c->capacity,
                     (unsigned long long)info.keys);
    } else if (info.capacity != c->capacity) {
        fail_msg("%s: %s: capacity %llu, %llu asked", c->family, what,
                 (unsigned long long)info.capacity, (unsigned long long)c->capacity);
    }

    /* Keys. */
    if (info.keys_estimated != (c->keys == KEYS_ESTIMATED))
        fail_msg("%s: %s: keys_estimated %d", c->family, what, info.keys_estimated);
    assert_true(info.estimated_keys >= 0 && isfinite(info.estimated_keys));
    switch (c->keys) {
    case KEYS_EXACT:
        if (info.keys != n)
            fail_msg("%s: %s: keys %llu, %llu put in", c->family, what,
                     (unsigned long long)info.keys, (unsigned long long)n);
        break;
    case KEYS_STORED:
        /* At most n, short of it by the false positives among the adds
         * (a few percent at most at these rates). */
        if (info.keys > n || (double)info.keys < 0.97 * (double)n)
            fail_msg("%s: %s: keys %llu, %llu put in", c->family, what,
                     (unsigned long long)info.keys, (unsigned long long)n);
        break;
    case KEYS_ESTIMATED:
        if ((double)info.keys != round(info.estimated_keys))
            fail_msg("%s: %s: keys %llu, estimated_keys %.3f", c->family, what,
                     (unsigned long long)info.keys, info.estimated_keys);
        if (fabs(info.estimated_keys - (double)n) > 0.03 * (double)n + 1)
            fail_msg("%s: %s: estimated %.1f keys, %llu put in", c->family, what,
                     info.estimated_keys, (unsigned long long)n);
        break;
    }
    if (n == 0 && (info.keys != 0 || info.estimated_keys != 0))
        fail_msg("%s: %s: empty, keys %llu, estimated %.3f", c->family, what,
                 (unsigned long long)info.keys, info.estimated_keys);

    /* Memory and bits per key: memory_bytes*8 / capacity (per key held,
     * for a growing filter), where that is a number, less at most the 63
     * bits of padding a table of words ends in (amq.h). */
    if (n > 0 || !is_static(c))
        assert_true(info.memory_bytes > 0);
    uint64_t per = c->grows ? info.keys : info.capacity;
    if (per > 0) {
        double want = (double)info.memory_bytes * 8 / (double)per;
        double padding = 63.0 / (double)per;
        if (info.bits_per_key > want * (1 + 1e-9) ||
            info.bits_per_key < (want - padding) * (1 - 1e-9))
            fail_msg("%s: %s: bits_per_key %.6f, memory_bytes*8/%s = %llu*8/%llu = %.6f", c->family,
                     what, info.bits_per_key, c->grows ? "keys" : "capacity",
                     (unsigned long long)info.memory_bytes, (unsigned long long)per, want);
    }

    /* Rates. */
    if (info.target_fpr != c->target_fpr)
        fail_msg("%s: %s: target_fpr %.9g, %.9g asked", c->family, what, info.target_fpr,
                 c->target_fpr);
    if (!(info.expected_fpr >= 0 && info.expected_fpr <= 1))
        fail_msg("%s: %s: expected_fpr %g", c->family, what, info.expected_fpr);
    if (n == 0 && info.expected_fpr != 0)
        fail_msg("%s: %s: empty, expected_fpr %g", c->family, what, info.expected_fpr);

    assert_int_equal(amq_hasher_check(&info.hasher, NULL), AMQ_OK);
    if (can(c, AMQ_TAKES_IDS))
        assert_int_equal(info.hasher.kind, AMQ_HASH_MD5);
    assert_int_equal(info.add_once, 0);

    /* Details: named, each name once. */
    assert_true(info.detail_count <= AMQ_INFO_MAX_DETAILS);
    for (size_t i = 0; i < info.detail_count; i++) {
        const amq_info_detail *d = &info.details[i];
        assert_non_null(memchr(d->name, '\0', sizeof d->name));
        assert_non_null(memchr(d->text, '\0', sizeof d->text));
        if (d->name[0] == '\0')
            fail_msg("%s: %s: detail %zu has no name", c->family, what, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(info.details[j].name, d->name) == 0)
                fail_msg("%s: %s: details %zu and %zu are both named %s", c->family, what, j, i,
                         d->name);
        if (d->text[0] == '\0' && !isfinite(d->value))
            fail_msg("%s: %s: detail %s is %g", c->family, what, d->name, d->value);
    }
}

static void test_info_fields(void **state)
{
    const family_case *c = fixture_case(state);
    amq_filter *f = make_empty(c);
    expect_info(c, f, 0, "empty");
    amq_free(f);
    f = make_filter(c, 0, key_count);
    expect_info(c, f, key_count, "holding every key");
    amq_free(f);
}

/* ---- save and load ------------------------------------------------------------------- */

/* Two descriptions alike, but for the checksum of the file a filter was
 * loaded from. */
static void expect_same_info(const family_case *c, const amq_filter *a, const amq_filter *b,
                             const char *what)
{
    amq_info x, y;
    assert_int_equal(amq_info_get(&x, a), AMQ_OK);
    assert_int_equal(amq_info_get(&y, b), AMQ_OK);
    assert_string_equal(y.family, x.family);
#define SAME(field, format)                                                                        \
    do {                                                                                           \
        if (x.field != y.field)                                                                    \
            fail_msg("%s: %s: amq_info " #field " " format ", the saved filter's " format,         \
                     c->family, what, y.field, x.field);                                           \
    } while (0)
    SAME(capacity, "%" PRIu64);
    SAME(keys, "%" PRIu64);
    SAME(estimated_keys, "%.17g");
    SAME(memory_bytes, "%" PRIu64);
    SAME(bits_per_key, "%.17g");
    SAME(target_fpr, "%.17g");
    SAME(expected_fpr, "%.17g");
    SAME(detail_count, "%zu");
    SAME(keys_estimated, "%d");
    SAME(add_once, "%d");
#undef SAME
    assert_memory_equal(&x.hasher, &y.hasher, sizeof x.hasher);
    for (size_t i = 0; i < x.detail_count; i++) {
        const amq_info_detail *d = &x.details[i], *e = &y.details[i];
        if (strcmp(d->name, e->name) != 0 || strcmp(d->text, e->text) != 0 ||
            !(d->value == e->value || (isnan(d->value) && isnan(e->value))))
            fail_msg("%s: %s: detail %zu is %s=%.17g '%s', the saved filter's %s=%.17g '%s'",
                     c->family, what, i, e->name, e->value, e->text, d->name, d->value, d->text);
    }
}

/* Save f to memory and to a file, load it every way, and each copy
 * answers as f for every present key and for absent keys ("maybe" for
 * the first n present ones, which f holds), describes itself alike, and
 * saves to the same bytes. */
static void expect_round_trip(const family_case *c, const amq_filter *f, size_t n, void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "conformance.amq");
    uint8_t *image = NULL;
    size_t len = 0;
    save_image(c, f, &image, &len);
    uint64_t saved = 0;
    assert_int_equal(amq_saved_bytes(&saved, f, NULL), AMQ_OK);
    assert_int_equal(saved, len);
    /* Saved again, the same bytes. */
    expect_image(c, f, image, len, "a second save");
    amq_diag diag = { .message = "" };
    int status = amq_save(f, path, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: amq_save: %s (%s)", c->family, amq_strerror(status), diag.message);
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    assert_int_equal(info.file_checksum, 0);
    size_t file_len = 0;
    char *file = amq_test_read_file(path, &file_len);
    assert_non_null(file);
    if (file_len != len || memcmp(file, image, len) != 0)
        fail_msg("%s: amq_save wrote %zu bytes, not amq_save_to_memory's %zu", c->family, file_len,
                 len);
    free(file);

    static const char *const ways[] = { "amq_load_from_memory", "amq_load_from_memory BORROW",
                                        "amq_load", "amq_load MMAP" };
    for (size_t way = 0; way < 4; way++) {
        amq_filter *g = NULL;
        if (way < 2)
            status = amq_load_from_memory(&g, image, len, way == 1 ? AMQ_LOAD_BORROW : 0, &diag);
        else
            status = amq_load(&g, path, way == 3 ? AMQ_LOAD_MMAP : 0, &diag);
        if (status != AMQ_OK)
            fail_msg("%s: %s: %s (%s)", c->family, ways[way], amq_strerror(status), diag.message);
        assert_string_equal(amq_filter_family(g), c->family);
        expect_same_answers(c, f, g, &present, key_count, ways[way]);
        expect_answers(c, g, &present, n, 1, ways[way]);
        expect_same_answers(c, f, g, &absent, key_count, ways[way]);
        expect_same_info(c, f, g, ways[way]);
        /* It knows the checksum it was loaded with: the image's last 8
         * bytes; the filter saved, never loaded, has none. */
        uint64_t trailer = 0;
        for (size_t b = 0; b < 8; b++)
            trailer |= (uint64_t)image[len - 8 + b] << (8 * b);
        assert_int_equal(amq_info_get(&info, g), AMQ_OK);
        if (info.file_checksum != trailer || trailer == 0)
            fail_msg("%s: %s: file_checksum %016" PRIx64 ", the image's %016" PRIx64, c->family,
                     ways[way], info.file_checksum, trailer);
        expect_image(c, g, image, len, ways[way]);
        amq_free(g);
    }
    amq_buffer_free(image);
}

static void test_save_load_round_trip(void **state)
{
    const family_case *c = fixture_case(state);
    amq_filter *f = make_empty(c);
    expect_round_trip(c, f, 0, scratch(state));
    amq_free(f);
    f = make_filter(c, 0, key_count);
    expect_round_trip(c, f, key_count, scratch(state));
    amq_free(f);
}

/* ---- an empty filter -------------------------------------------------------------------- */

/* An empty filter holds nothing: it answers "no" for every key, one by one
 * and in a batch (a static filter built from no keys too). */
static void test_empty_filter_answers_no(void **state)
{
    const family_case *c = fixture_case(state);
    size_t count = key_count < 5000 ? key_count : 5000;
    uint8_t *results = malloc(count);
    assert_non_null(results);
    amq_filter *f = make_empty(c);
    const key_list *sets[] = { &present, &absent };
    for (size_t s = 0; s < 2; s++) {
        expect_answers(c, f, sets[s], count, 0, "an empty filter");
        memset(results, 1, count);
        assert_int_equal(amq_contains_many(results, f, sets[s]->pointers, sets[s]->lens, count),
                         AMQ_OK);
        for (size_t k = 0; k < count; k++)
            if (results[k] != 0)
                fail_msg("%s: an empty filter: amq_contains_many answered %u for key %zu",
                         c->family, results[k], k);
    }
    amq_free(f);
    free(results);
}

/* ---- merge ---------------------------------------------------------------------------- */

static void test_merge(void **state)
{
    const family_case *c = fixture_case(state);
    size_t half = c->merge_keys ? c->merge_keys : key_count / 2;
    amq_filter *a = make_filter(c, 0, half);
    amq_filter *b = make_filter(c, half, half);
    amq_diag diag = { .message = "" };
    if (!can(c, AMQ_CAN_MERGE)) {
        assert_int_equal(amq_merge(a, b, &diag), AMQ_EUNSUPPORTED);
        amq_free(a);
        amq_free(b);
        return;
    }
    uint8_t *image = NULL;
    size_t len = 0;
    save_image(c, b, &image, &len);
    int status = amq_merge(a, b, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: amq_merge: %s (%s)", c->family, amq_strerror(status), diag.message);
    /* Every key of both answers "maybe"; the other is unchanged. */
    expect_answers(c, a, &present, 2 * half, 1, "the union");
    expect_image(c, b, image, len, "the filter merged in");
    expect_info(c, a, 2 * half, "the union");
    expect_round_trip(c, a, 2 * half, scratch(state));
    amq_buffer_free(image);
    /* Merging an empty filter changes nothing. */
    amq_filter *empty = make_empty(c);
    save_image(c, a, &image, &len);
    status = amq_merge(a, empty, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: amq_merge of an empty filter: %s (%s)", c->family, amq_strerror(status),
                 diag.message);
    expect_image(c, a, image, len, "the union with an empty filter");
    amq_buffer_free(image);
    amq_free(empty);
    amq_free(a);
    amq_free(b);
}

/* ---- remove ----------------------------------------------------------------------------- */

static void test_remove(void **state)
{
    const family_case *c = fixture_case(state);
    amq_filter *f = make_filter(c, 0, key_count);
    if (!can(c, AMQ_CAN_REMOVE)) {
        assert_int_equal(amq_remove(f, present.pointers[0], present.lens[0]), AMQ_EUNSUPPORTED);
        assert_int_equal(amq_contains(f, present.pointers[0], present.lens[0]), 1);
        amq_free(f);
        return;
    }
    /* Every other key out: the rest still answer "maybe". */
    for (size_t k = 0; k < key_count; k += 2) {
        int status = amq_remove(f, present.pointers[k], present.lens[k]);
        if (status != AMQ_OK)
            fail_msg("%s: removing key %zu: %s", c->family, k, amq_strerror(status));
    }
    for (size_t k = 1; k < key_count; k += 2)
        if (amq_contains(f, present.pointers[k], present.lens[k]) != 1)
            fail_msg("%s: key %zu, not removed, answered no after others were", c->family, k);
    expect_round_trip(c, f, 0, scratch(state));
    /* The rest out: the filter is an empty one, byte for byte. */
    for (size_t k = 1; k < key_count; k += 2) {
        int status = amq_remove(f, present.pointers[k], present.lens[k]);
        if (status != AMQ_OK)
            fail_msg("%s: removing key %zu: %s", c->family, k, amq_strerror(status));
    }
    /* Every key out: the filter is as empty as a new one - it counts
     * no key, expects no false positive and answers "no" to all. (Its
     * bytes may differ: a cuckoo filter keeps its walk's random state.) */
    expect_info(c, f, 0, "every key removed");
    expect_answers(c, f, &present, key_count, 0, "every key removed");
    expect_answers(c, f, &absent, key_count, 0, "every key removed");
    expect_round_trip(c, f, 0, scratch(state));
    amq_free(f);
}

/* ---- batch adds and removals --------------------------------------------------------- */

/* What a batch call answers: the status, how many keys it handled, and
 * each key's answer. */
typedef int (*batch_call)(int *results, size_t *handled, amq_filter *f, const void *const *keys,
                          const size_t *lens, size_t count);
typedef int (*single_call)(amq_filter *f, const void *key, size_t len);

/* The keys of a batch add: the present ones, every fourth replaced by an
 * earlier key (a repeat within a batch or across batches). */
static void make_add_stream(key_list *out, size_t count)
{
    list_init(out, count, 0);
    for (size_t i = 0; i < count; i++) {
        size_t k = i % 4 == 3 ? i / 3 : i;
        out->pointers[i] = present.pointers[k];
        out->lens[i] = present.lens[k];
    }
    out->count = count;
}

/* single on one filter key by key and batch on a twin in batches of
 * every size answer alike, key for key, and leave the same bytes. */
static void expect_batch_as_single(const family_case *c, amq_filter *one, amq_filter *many,
                                   const key_list *keys, single_call single, batch_call batch,
                                   const char *name)
{
    static const size_t sizes[] = { 0, 1, 7, 1000, 1001, 4099, 25013 };
    enum { SIZE_COUNT = sizeof sizes / sizeof sizes[0] };
    int *want = malloc(keys->count * sizeof *want);
    int *got = malloc((keys->count + 1) * sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    for (size_t k = 0; k < keys->count; k++)
        want[k] = single(one, keys->pointers[k], keys->lens[k]);
    size_t at = 0;
    for (size_t turn = 0; at < keys->count; turn++) {
        size_t n = sizes[turn % SIZE_COUNT];
        if (n > keys->count - at)
            n = keys->count - at;
        for (size_t k = 0; k <= n; k++)
            got[k] = 12345;
        size_t handled = (size_t)-1;
        int status = batch(got, &handled, many, keys->pointers + at, keys->lens + at, n);
        if (status != AMQ_OK || handled != n)
            fail_msg("%s: %s of %zu keys from %zu: %s, %zu handled", c->family, name, n, at,
                     amq_strerror(status), handled);
        for (size_t k = 0; k < n; k++)
            if (got[k] != want[at + k])
                fail_msg("%s: %s: key %zu answered %d, one by one %d", c->family, name, at + k,
                         got[k], want[at + k]);
        assert_int_equal(got[n], 12345);
        at += n;
    }
    uint8_t *image = NULL;
    size_t len = 0;
    save_image(c, one, &image, &len);
    expect_image(c, many, image, len, name);
    amq_buffer_free(image);
    free(got);
    free(want);
}

static void test_batch_adds_equal_single(void **state)
{
    const family_case *c = fixture_case(state);
    key_list stream;
    make_add_stream(&stream, key_count);
    amq_filter *one = make_empty(c), *many = make_empty(c);
    if (!can(c, AMQ_CAN_ADD)) {
        size_t handled = 0;
        assert_int_equal(amq_add(many, stream.pointers[0], stream.lens[0]), AMQ_EUNSUPPORTED);
        assert_int_equal(amq_add_unique(many, stream.pointers[0], stream.lens[0]),
                         AMQ_EUNSUPPORTED);
        assert_int_equal(amq_add_many(NULL, &handled, many, stream.pointers, stream.lens, 1),
                         AMQ_EUNSUPPORTED);
        assert_int_equal(amq_add_unique_many(NULL, &handled, many, stream.pointers, stream.lens, 1),
                         AMQ_EUNSUPPORTED);
    } else {
        expect_batch_as_single(c, one, many, &stream, amq_add, amq_add_many, "amq_add_many");
        amq_free(one);
        amq_free(many);
        one = make_empty(c);
        many = make_empty(c);
        expect_batch_as_single(c, one, many, &stream, amq_add_unique, amq_add_unique_many,
                               "amq_add_unique_many");
    }
    if (!can(c, AMQ_CAN_REMOVE)) {
        size_t handled = 0;
        assert_int_equal(amq_remove_many(NULL, &handled, many, stream.pointers, stream.lens, 1),
                         AMQ_EUNSUPPORTED);
    } else {
        /* Removals of keys in and out (answered AMQ_ENOTFOUND, and
         * the removal goes on). */
        key_list removals;
        make_queries(&removals, key_count / 2);
        expect_batch_as_single(c, one, many, &removals, amq_remove, amq_remove_many,
                               "amq_remove_many");
        list_free(&removals);
    }
    amq_free(one);
    amq_free(many);
    list_free(&stream);
}

/* Each check, run for each family as a test of its own: "<check> <family>". */
static const struct {
    const char *name;
    CMUnitTestFunction test;
} checks[] = {
    { "no false negatives", test_no_false_negatives },
    { "batch equals single", test_batch_equals_single },
    { "info fields", test_info_fields },
    { "save/load round trip", test_save_load_round_trip },
    { "empty filter answers no", test_empty_filter_answers_no },
    { "merge", test_merge },
    { "remove", test_remove },
    { "batch adds equal single", test_batch_adds_equal_single },
};

enum { CHECK_COUNT = sizeof checks / sizeof checks[0] };

int main(void)
{
    seed = amq_test_seed(20261201);
    key_count = AMQ_TEST_SANITIZED ? 20000 : MAX_KEYS;
    make_keys(&present, 0, key_count);
    make_keys(&absent, 1, key_count);
    static char names[CHECK_COUNT * CASE_COUNT][64];
    struct CMUnitTest tests[1 + CHECK_COUNT * CASE_COUNT];
    memset(tests, 0, sizeof tests);
    tests[0] = (struct CMUnitTest)cmocka_unit_test(test_every_family_has_a_case);
    size_t count = 1;
    for (size_t check = 0; check < CHECK_COUNT; check++)
        for (size_t i = 0; i < CASE_COUNT; i++, count++) {
            char *name = names[count - 1];
            snprintf(name, sizeof names[0], "%s %s", checks[check].name, cases[i].family);
            tests[count] = (struct CMUnitTest){ .name = name,
                                                .test_func = checks[check].test,
                                                .setup_func = fixture_setup,
                                                .teardown_func = fixture_teardown,
                                                .initial_state = (void *)&cases[i] };
        }
    int failed = _cmocka_run_group_tests("conformance", tests, count, NULL, NULL);
    list_free(&present);
    list_free(&absent);
    return failed;
}
