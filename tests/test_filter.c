/*
 * Tests for generic calls over every family this build has: the batch
 * query amq_contains_many answers as amq_contains does, key for key, error
 * for error; amq_saved_bytes tells the size amq_save writes;
 * amq_family_capabilities tells what the other calls will do; amq_add_unique
 * adds only what is certainly new.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/util.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KEYS = 20000, ASKED = 9000 };

/* The filter spec builds from keys (set 0); fails the test if it cannot. */
static amq_filter *build_spec(const char *spec, const amq_test_keys *keys)
{
    amq_filter *f = NULL;
    amq_diag diag = { 0 };
    int status = amq_build(&f, spec, keys->pointers, keys->lens, keys->count, &diag);
    if (status != AMQ_OK)
        fail_msg("%s: %s", spec, diag.message);
    return f;
}

/* The family's filter from KEYS keys of set 0, at 1%. An hfb filter takes
 * its keys through MD5: the test keys are not random 128-bit IDs. */
static amq_filter *build_family(const char *family, const amq_test_keys *keys)
{
    char spec[96];
    snprintf(spec, sizeof spec, "%s p=0.01%s", family,
             strcmp(family, "hfb") == 0 ? " hash=md5" : "");
    return build_spec(spec, keys);
}

/* Keys asked in a batch (amq_test_batch_keys, stride 2) and room for the
 * answers. */
typedef struct asked_keys {
    amq_test_key *keys;
    const void **pointers;
    size_t *lens;
    uint8_t *results;
} asked_keys;

static void asked_make(asked_keys *asked, uint64_t seed)
{
    asked->keys = calloc(ASKED, sizeof *asked->keys);
    asked->pointers = calloc(ASKED, sizeof *asked->pointers);
    asked->lens = calloc(ASKED, sizeof *asked->lens);
    asked->results = calloc(ASKED, 1);
    assert_non_null(asked->keys);
    assert_non_null(asked->pointers);
    assert_non_null(asked->lens);
    assert_non_null(asked->results);
    /* Two thirds of set 0, one third of set 1, in an order unrelated to the
     * filter's. */
    amq_test_batch_keys(asked->keys, asked->pointers, asked->lens, ASKED, seed, 2);
}

static void asked_free(asked_keys *asked)
{
    free(asked->results);
    free(asked->lens);
    free(asked->pointers);
    free(asked->keys);
}

/* f, built from the first built keys of set 0, answers the asked keys in
 * one batch as it does one by one, and says "maybe" of every key it holds.
 * Returns how many of the asked keys it holds. */
static size_t check_batch_is_single(amq_filter *f, const char *name, asked_keys *asked,
                                    size_t built)
{
    memset(asked->results, 0xee, ASKED);
    assert_int_equal(amq_contains_many(asked->results, f, asked->pointers, asked->lens, ASKED),
                     AMQ_OK);
    size_t present = 0;
    for (size_t i = 0; i < ASKED; i++) {
        int single = amq_contains(f, asked->pointers[i], asked->lens[i]);
        if (asked->results[i] != single)
            fail_msg("%s: key %zu: batch answer %u, single answer %d", name, i, asked->results[i],
                     single);
        if (i % 3 != 0 && i * 2 < built) {
            present++;
            if (asked->results[i] != 1)
                fail_msg("%s: key %zu was put in but the batch says absent", name, i);
        }
    }
    assert_int_equal(amq_contains_many(NULL, f, NULL, NULL, 0), AMQ_OK);
    return present;
}

static void test_batch_answers_are_single_answers(void **state)
{
    (void)state;
    uint64_t seed = amq_test_seed(0xba7c4);
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, KEYS);
    asked_keys asked;
    asked_make(&asked, seed);
    for (size_t family = 0; amq_family_at(family); family++) {
        const char *name = amq_family_at(family);
        amq_filter *f = build_family(name, &keys);
        assert_true(check_batch_is_single(f, name, &asked, KEYS) > 0);
        amq_free(f);
    }
    asked_free(&asked);
    amq_test_keys_free(&keys);
}

/* The classic and counting filters' batch takes its keys in chunks of
 * 1024 / k, with k a constant for the usual hash counts: at every k, and
 * both counter widths, over many chunks, it answers as the single query. */
static void test_bloom_batch_at_every_hash_count(void **state)
{
    (void)state;
    enum { BUILT = 300 }; /* in 4096 bits: both answers at every k */
    uint64_t seed = amq_test_seed(0xb7c4);
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, BUILT);
    asked_keys asked;
    asked_make(&asked, seed);
    static const char *const shapes[] = { "bloom", "counting-bloom counter-bits=4",
                                          "counting-bloom counter-bits=8" };
    for (size_t shape = 0; shape < sizeof shapes / sizeof *shapes; shape++) {
        for (unsigned k = 1; k <= 64; k++) {
            char spec[96];
            snprintf(spec, sizeof spec, "%s bits=4096 hashes=%u", shapes[shape], k);
            amq_filter *f = build_spec(spec, &keys);
            assert_true(check_batch_is_single(f, spec, &asked, BUILT) > 0);
            amq_free(f);
        }
    }
    asked_free(&asked);
    amq_test_keys_free(&keys);
}

/* A raw-ID hfb filter refuses a key that is not 16 bytes, in a batch as
 * alone. */
static void test_batch_error_is_single_error(void **state)
{
    (void)state;
    uint8_t ids[300][16];
    const void *pointers[300];
    size_t lens[300];
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(0x1d5));
    for (size_t i = 0; i < 300; i++) {
        for (size_t b = 0; b < 16; b += 8) {
            uint64_t word = amq_test_next(&rng);
            memcpy(ids[i] + b, &word, 8);
        }
        pointers[i] = ids[i];
        lens[i] = 16;
    }
    amq_filter *f = NULL;
    assert_int_equal(amq_build(&f, "hfb p=0.01", pointers, lens, 300, NULL), AMQ_OK);
    uint8_t results[300];
    assert_int_equal(amq_contains_many(results, f, pointers, lens, 300), AMQ_OK);
    for (size_t i = 0; i < 300; i++)
        assert_int_equal(results[i], 1);
    lens[257] = 15; /* in the second chunk of the batch */
    assert_int_equal(amq_contains(f, pointers[257], lens[257]), AMQ_EINVAL);
    assert_int_equal(amq_contains_many(results, f, pointers, lens, 300), AMQ_EINVAL);
    amq_free(f);
}

/* amq_saved_bytes is the size of the file amq_save writes, for every
 * family. */
static void test_saved_size_is_file_size(void **state)
{
    uint64_t seed = amq_test_seed(0x5173);
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, 3000);
    char path[4096];
    amq_test_scratch_path(path, state, "sized.amq");
    for (size_t family = 0; amq_family_at(family); family++) {
        amq_filter *f = build_family(amq_family_at(family), &keys);
        uint64_t predicted = 0;
        assert_int_equal(amq_saved_bytes(&predicted, f, NULL), AMQ_OK);
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
        size_t written = 0;
        free(amq_test_read_file(path, &written));
        if (predicted != written)
            fail_msg("%s: amq_saved_bytes says %llu bytes, amq_save wrote %zu",
                     amq_family_at(family), (unsigned long long)predicted, written);
        amq_free(f);
    }
    amq_test_keys_free(&keys);
}

/* amq_family_capabilities tells what the generic calls then do: a type
 * without AMQ_CAN_REMOVE answers AMQ_EUNSUPPORTED to amq_remove and one with
 * it does not, and so on for add, merge and export; a type that grows takes
 * 64 times its capacity (and the scalable Bloom filter keeps the rate it was
 * asked for). */
static void test_capabilities_are_what_the_calls_do(void **state)
{
    (void)state;
    uint64_t seed = amq_test_seed(0xca9a);
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, 2000);
    assert_int_equal(amq_family_capabilities("no-such-filter"), AMQ_EINVAL);
    const int bits[] = { AMQ_CAN_ADD, AMQ_CAN_REMOVE, AMQ_CAN_MERGE, AMQ_CAN_GROW, AMQ_CAN_EXPORT };
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        assert_non_null(amq_capability_name(bits[i]));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(amq_capability_name(bits[i]), amq_capability_name(bits[j]));
    }
    assert_null(amq_capability_name(0));
    assert_null(amq_capability_name(AMQ_CAN_ADD | AMQ_CAN_REMOVE));
    assert_null(amq_capability_name(AMQ_CAN_EXPORT << 1));
    for (size_t family = 0; amq_family_at(family); family++) {
        const char *name = amq_family_at(family);
        int capabilities = amq_family_capabilities(name);
        assert_true(capabilities >= 0);
        assert_int_equal(!(capabilities & AMQ_CAN_ADD), amq_family_is_static(name));
        amq_filter *f = build_family(name, &keys);
        amq_filter *other = build_family(name, &keys);

        int added = amq_add(f, keys.pointers[0], keys.lens[0]);
        assert_int_equal(added == AMQ_EUNSUPPORTED, !(capabilities & AMQ_CAN_ADD));
        int removed = amq_remove(f, keys.pointers[1], keys.lens[1]);
        assert_int_equal(removed == AMQ_EUNSUPPORTED, !(capabilities & AMQ_CAN_REMOVE));
        if (capabilities & AMQ_CAN_REMOVE)
            assert_int_equal(removed, AMQ_OK);
        int merged = amq_merge(f, other, NULL);
        assert_int_equal(merged == AMQ_EUNSUPPORTED, !(capabilities & AMQ_CAN_MERGE));
        if (capabilities & AMQ_CAN_MERGE)
            assert_int_equal(merged, AMQ_OK);
        uint8_t *exported = NULL;
        size_t exported_len = 0;
        amq_diag diag = { 0 };
        int exported_status = amq_export(&exported, &exported_len, f, "raw", &diag);
        assert_int_equal(exported_status == AMQ_OK, (capabilities & AMQ_CAN_EXPORT) != 0);
        free(exported);
        amq_free(other);
        amq_free(f);

        if (capabilities & AMQ_CAN_GROW) {
            char spec[96];
            snprintf(spec, sizeof spec, "%s n=64 p=0.01%s", name,
                     strcmp(name, "cuckoo") == 0 ? " growth=2" : "");
            amq_filter *growing = NULL;
            assert_int_equal(amq_new(&growing, spec, &diag), AMQ_OK);
            for (size_t i = 0; i < 64 * 64 && i < keys.count; i++)
                assert_int_equal(amq_add(growing, keys.pointers[i], keys.lens[i]), AMQ_OK);
            amq_info info;
            assert_int_equal(amq_info_get(&info, growing), AMQ_OK);
            if (strcmp(name, "scalable-bloom") == 0 && !(info.expected_fpr <= 0.01))
                fail_msg("%s grew to an expected rate of %g, over the 0.01 asked for", name,
                         info.expected_fpr);
            amq_free(growing);
        }
    }
    amq_test_keys_free(&keys);
}

/* amq_add_unique, for every dynamic family: a key certainly absent is
 * added (1) and then found; asked again it answers 0 and changes nothing
 * (the saved file is byte for byte the same); distinct new keys answer 0
 * only as often as false positives would (within 4 binomial standard
 * deviations of the filter's rate); for the Bloom filters, a filter built
 * by amq_add_unique equals one built by amq_add. Static families refuse. */
static void test_add_unique(void **state)
{
    uint64_t seed = amq_test_seed(0xadd1);
    enum { N = 20000 };
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, N);
    char path[4096], other_path[4096];
    amq_test_scratch_path(path, state, "unique.amq");
    amq_test_scratch_path(other_path, state, "plain.amq");
    for (size_t family = 0; amq_family_at(family); family++) {
        const char *name = amq_family_at(family);
        if (amq_family_is_static(name)) {
            amq_filter *f = build_family(name, &keys);
            assert_int_equal(amq_add_unique(f, "k", 1), AMQ_EUNSUPPORTED);
            amq_free(f);
            continue;
        }
        char spec[96];
        snprintf(spec, sizeof spec, "%s n=%d p=0.01", name, N);
        amq_filter *f = NULL, *plain = NULL;
        assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
        assert_int_equal(amq_new(&plain, spec, NULL), AMQ_OK);
        size_t already = 0;
        for (size_t i = 0; i < keys.count; i++) {
            int added = amq_add_unique(f, keys.pointers[i], keys.lens[i]);
            assert_true(added == 0 || added == 1);
            already += added == 0;
            assert_int_equal(amq_contains(f, keys.pointers[i], keys.lens[i]), 1);
            assert_int_equal(amq_add(plain, keys.pointers[i], keys.lens[i]), AMQ_OK);
        }
        /* A new key answers 0 when the filter, holding fewer than N keys,
         * has a false positive for it: fewer than rate x N on average. */
        amq_info info;
        assert_int_equal(amq_info_get(&info, f), AMQ_OK);
        double expected = info.target_fpr * N, limit = expected + 4 * sqrt(expected) + 1;
        if ((double)already > limit)
            fail_msg("%s: %zu of %d new keys seemed present (limit %.0f)", name, already, N, limit);
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
        size_t before_len = 0, after_len = 0;
        char *before = amq_test_read_file(path, &before_len);
        for (size_t i = 0; i < keys.count; i += 7)
            assert_int_equal(amq_add_unique(f, keys.pointers[i], keys.lens[i]), 0);
        assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
        char *after = amq_test_read_file(path, &after_len);
        assert_int_equal(before_len, after_len);
        assert_memory_equal(before, after, before_len);
        if (strcmp(name, "bloom") == 0 || strcmp(name, "blocked-bloom") == 0) {
            assert_int_equal(amq_save(plain, other_path, NULL), AMQ_OK);
            size_t plain_len = 0;
            char *plain_bytes = amq_test_read_file(other_path, &plain_len);
            assert_int_equal(plain_len, after_len);
            assert_memory_equal(plain_bytes, after, after_len);
            free(plain_bytes);
        }
        free(before);
        free(after);
        amq_free(plain);
        amq_free(f);
    }
    amq_test_keys_free(&keys);
}

/* The generic calls answer AMQ_EINVAL to a NULL pointer they need, with
 * a message naming it where they take a diag, and change nothing; a key of
 * length 0 may be NULL. */
static void test_null_arguments_are_einval(void **state)
{
    (void)state;
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_new(NULL, "bloom n=100", NULL), AMQ_EINVAL);
    assert_int_equal(amq_new(&f, NULL, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "amq_new: spec is NULL"));
    assert_int_equal(amq_build(&f, "fuse8", NULL, NULL, 3, NULL), AMQ_EINVAL);
    assert_int_equal(amq_build(NULL, "fuse8", NULL, NULL, 0, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "out is NULL"));
    assert_int_equal(amq_load(&f, NULL, 0, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "amq_load: path is NULL"));
    assert_int_equal(amq_load(NULL, "x.amq", 0, NULL), AMQ_EINVAL);
    assert_null(f);

    assert_int_equal(amq_new(&f, "bloom n=100", NULL), AMQ_OK);
    assert_int_equal(amq_add(f, NULL, 0), AMQ_OK); /* the empty key */
    assert_int_equal(amq_contains(f, NULL, 0), 1);
    assert_int_equal(amq_add(NULL, "a", 1), AMQ_EINVAL);
    assert_int_equal(amq_add(f, NULL, 1), AMQ_EINVAL);
    assert_int_equal(amq_add_unique(NULL, "a", 1), AMQ_EINVAL);
    assert_int_equal(amq_remove(NULL, "a", 1), AMQ_EINVAL);
    assert_int_equal(amq_contains(NULL, "a", 1), AMQ_EINVAL);
    assert_int_equal(amq_contains(f, NULL, 1), AMQ_EINVAL);
    uint8_t result = 7;
    const void *key = "a";
    size_t len = 1;
    assert_int_equal(amq_contains_many(&result, NULL, &key, &len, 1), AMQ_EINVAL);
    assert_int_equal(amq_contains_many(NULL, f, &key, &len, 1), AMQ_EINVAL);
    assert_int_equal(amq_contains_many(NULL, f, NULL, NULL, 0), AMQ_OK);
    assert_int_equal(result, 7);
    assert_int_equal(amq_save(f, NULL, NULL), AMQ_EINVAL);
    assert_int_equal(amq_save(NULL, "x.amq", &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "amq_save: f is NULL"));
    uint64_t bytes = 0;
    assert_int_equal(amq_saved_bytes(NULL, f, NULL), AMQ_EINVAL);
    assert_int_equal(amq_saved_bytes(&bytes, NULL, NULL), AMQ_EINVAL);
    amq_info info;
    assert_int_equal(amq_info_get(&info, NULL), AMQ_EINVAL);
    assert_int_equal(amq_info_get(NULL, f), AMQ_EINVAL);
    assert_int_equal(amq_merge(f, NULL, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "amq_merge: other is NULL"));
    assert_int_equal(amq_merge(NULL, f, NULL), AMQ_EINVAL);
    uint8_t *data = NULL;
    assert_int_equal(amq_export(&data, &len, f, NULL, &diag), AMQ_EINVAL);
    assert_int_equal(amq_export(&data, &len, NULL, "raw", NULL), AMQ_EINVAL);
    assert_null(amq_filter_family(NULL));
    assert_int_equal(amq_family_is_static(NULL), AMQ_EINVAL);
    assert_int_equal(amq_family_capabilities(NULL), AMQ_EINVAL);
    amq_free(NULL);
    amq_free(f);
}

/* The add-once mark: a counting-bloom or cuckoo filter marked so refuses
 * removal, keeps the mark through a save (a version-2 container, flag 1)
 * and a load, and a filter saved without the mark writes the version-1
 * bytes it always did. A filter that cannot remove takes no mark, and a
 * file that says otherwise is corrupt. */
static void test_add_once_mark(void **state)
{
    (void)state;
    const char *const specs[] = { "counting-bloom n=1000", "cuckoo n=1000" };
    for (size_t i = 0; i < 2; i++) {
        amq_filter *f = NULL;
        assert_int_equal(amq_new(&f, specs[i], NULL), AMQ_OK);
        assert_int_equal(amq_add_once_marked(f), 0);
        assert_int_equal(amq_add(f, "a", 1), AMQ_OK);
        assert_int_equal(amq_add(f, "b", 1), AMQ_OK);
        uint8_t *unmarked = NULL;
        size_t unmarked_len = 0;
        assert_int_equal(amq_save_to_memory(&unmarked, &unmarked_len, f, NULL), AMQ_OK);
        assert_int_equal(amq__load_u32le(unmarked + 8), 1);
        assert_int_equal(amq__load_u32le(unmarked + 20), 0);
        assert_int_equal(amq_remove(f, "b", 1), AMQ_OK);

        assert_int_equal(amq_mark_add_once(f, NULL), AMQ_OK);
        assert_int_equal(amq_add_once_marked(f), 1);
        assert_int_equal(amq_remove(f, "a", 1), AMQ_EUNSUPPORTED);
        assert_int_equal(amq_contains(f, "a", 1), 1);
        amq_info info;
        assert_int_equal(amq_info_get(&info, f), AMQ_OK);
        assert_int_equal(info.add_once, 1);
        uint8_t *bytes = NULL;
        size_t len = 0;
        assert_int_equal(amq_save_to_memory(&bytes, &len, f, NULL), AMQ_OK);
        assert_int_equal(amq__load_u32le(bytes + 8), 2);
        assert_int_equal(amq__load_u32le(bytes + 20), AMQ__FORMAT_FLAG_ADD_ONCE);
        amq_filter *loaded = NULL;
        assert_int_equal(amq_load_from_memory(&loaded, bytes, len, 0, NULL), AMQ_OK);
        assert_int_equal(amq_add_once_marked(loaded), 1);
        assert_int_equal(amq_remove(loaded, "a", 1), AMQ_EUNSUPPORTED);
        assert_int_equal(amq_contains(loaded, "a", 1), 1);
        amq_free(loaded);
        free(bytes);
        free(unmarked);
        amq_free(f);
    }
    /* A union with a marked filter is marked, whichever comes first. */
    for (int marked_first = 0; marked_first < 2; marked_first++) {
        amq_filter *a = NULL, *b = NULL;
        assert_int_equal(amq_new(&a, "counting-bloom n=1000", NULL), AMQ_OK);
        assert_int_equal(amq_new(&b, "counting-bloom n=1000", NULL), AMQ_OK);
        assert_int_equal(amq_mark_add_once(marked_first ? a : b, NULL), AMQ_OK);
        assert_int_equal(amq_merge(a, b, NULL), AMQ_OK);
        assert_int_equal(amq_add_once_marked(a), 1);
        assert_int_equal(amq_remove(a, "x", 1), AMQ_EUNSUPPORTED);
        amq_free(a);
        amq_free(b);
    }
    amq_filter *bloom = NULL;
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_new(&bloom, "bloom n=1000", NULL), AMQ_OK);
    assert_int_equal(amq_mark_add_once(bloom, &diag), AMQ_EUNSUPPORTED);
    assert_non_null(strstr(diag.message, "cannot remove keys"));
    assert_int_equal(amq_add_once_marked(bloom), 0);
    assert_int_equal(amq_mark_add_once(NULL, NULL), AMQ_EINVAL);
    assert_int_equal(amq_add_once_marked(NULL), AMQ_EINVAL);
    /* A bloom file with the flag set (and its checksum made good). */
    uint8_t *bytes = NULL;
    size_t len = 0;
    assert_int_equal(amq_save_to_memory(&bytes, &len, bloom, NULL), AMQ_OK);
    amq__store_u32le(bytes + 8, 2);
    amq__store_u32le(bytes + 20, AMQ__FORMAT_FLAG_ADD_ONCE);
    amq__store_u64le(bytes + len - 8, amq__xxh3_64(bytes, len - 8, 0));
    amq_filter *loaded = NULL;
    assert_int_equal(amq_load_from_memory(&loaded, bytes, len, 0, &diag), AMQ_ECORRUPT);
    assert_non_null(strstr(diag.message, "marked add-once"));
    free(bytes);
    amq_free(bloom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_once_mark),
        cmocka_unit_test(test_batch_answers_are_single_answers),
        cmocka_unit_test(test_bloom_batch_at_every_hash_count),
        cmocka_unit_test(test_batch_error_is_single_error),
        cmocka_unit_test(test_capabilities_are_what_the_calls_do),
        cmocka_unit_test(test_null_arguments_are_einval),
        cmocka_unit_test_setup_teardown(test_add_unique, amq_test_scratch_setup,
                                        amq_test_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_saved_size_is_file_size, amq_test_scratch_setup,
                                        amq_test_scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
