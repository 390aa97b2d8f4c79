/*
 * test_util.h - what every test program shares: the seed (printed, and
 * taken from AMQ_TEST_SEED when set, so a failure can be replayed), a fast
 * seeded generator, test keys, paths to test data and scratch directories;
 * and the checks the family test programs make alike through the generic
 * handle: specs refused and accepted, filters sized by their keys, removals,
 * refused merges, loaded filters answering as the saved ones, and damaged
 * files.
 *
 * Include after <stdarg.h>, <stddef.h>, <setjmp.h> and <cmocka.h>.
 */
#ifndef AMQ_TEST_UTIL_H
#define AMQ_TEST_UTIL_H

#include "amq/amq.h"
#include "core/format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The run's seed: AMQ_TEST_SEED if set (decimal or 0x hex), else the given
 * default. Printed once to stderr as "seed: N" so every run can be replayed. */
uint64_t amq_test_seed(uint64_t default_seed);

/* splitmix64: a fast, well-mixed generator for test keys. */
typedef struct amq_test_rng {
    uint64_t state;
} amq_test_rng;

void amq_test_rng_init(amq_test_rng *rng, uint64_t seed);
uint64_t amq_test_next(amq_test_rng *rng);
/* Uniform in [0, bound), bound > 0. */
uint64_t amq_test_below(amq_test_rng *rng, uint64_t bound);

/* A 16-byte key for filter tests: key i of set `set` (0: the keys put in,
 * 1: keys never put in) under seed. A tag word for the set and a counter,
 * so two sets never share a key whatever the seed. */
typedef struct amq_test_key {
    uint64_t tag;
    uint64_t index;
} amq_test_key;

amq_test_key amq_test_make_key(uint64_t seed, uint64_t set, uint64_t i);

/* count keys, key i being amq_test_make_key(seed, set, i), with the pointer
 * and length arrays amq_build and the batch calls take. */
typedef struct amq_test_keys {
    amq_test_key *keys;
    const void **pointers;
    size_t *lens;
    size_t count;
} amq_test_keys;

/* Fill out (the test fails when memory runs out); free with
 * amq_test_keys_free. */
void amq_test_keys_make(amq_test_keys *out, uint64_t seed, uint64_t set, size_t count);
void amq_test_keys_free(amq_test_keys *keys);

/* Keys for a batch query: key i is key i * stride of set 1 (never put in)
 * when i % 3 == 0, else of set 0; pointers[i] and lens[i] describe it. */
void amq_test_batch_keys(amq_test_key *keys, const void **pointers, size_t *lens, size_t count,
                         uint64_t seed, uint64_t stride);

/* Path of a file in tests/data (a static buffer per call site is not used:
 * the result is malloc'd; free it). */
char *amq_test_data_path(const char *name);

/* Read a whole file; returns malloc'd bytes (NUL-terminated) or NULL. */
char *amq_test_read_file(const char *path, size_t *len);

/* Read a whole file of tests/data (amq_test_data_path); fails the test,
 * naming the path, when it cannot. len may be NULL. */
char *amq_test_read_data(const char *name, size_t *len);

/* Whether two files hold the same bytes; fails the test when either cannot
 * be read. */
bool amq_test_same_file(const char *a, const char *b);

/* Fails the test unless two filters save to the same bytes
 * (amq_save_to_memory). */
void amq_test_assert_same_image(const amq_filter *a, const amq_filter *b);

/* Write len bytes to path, replacing it; fails the test on any error. */
void amq_test_write_file(const char *path, const void *bytes, size_t len);

/* Make a fresh scratch directory (under TMPDIR or /tmp); malloc'd path.
 * amq_test_remove_tree removes it again. */
char *amq_test_scratch_dir(void);
void amq_test_remove_tree(const char *path);

/* cmocka fixtures (cmocka_unit_test_setup_teardown): the setup makes a
 * scratch directory and puts its malloc'd path in *state; the teardown
 * removes the directory and frees the path, whether the test passed or not. */
int amq_test_scratch_setup(void **state);
int amq_test_scratch_teardown(void **state);

/* A cmocka test entry whose test runs with a scratch directory. */
#define AMQ_TEST_WITH_SCRATCH(test)                                                                \
    cmocka_unit_test_setup_teardown(test, amq_test_scratch_setup, amq_test_scratch_teardown)

/* Size of a buffer for amq_test_scratch_path. */
#define AMQ_TEST_PATH_MAX 512

/* Write "<the test's scratch directory>/name" to out (AMQ_TEST_PATH_MAX
 * bytes); state is the test's, set by amq_test_scratch_setup. */
void amq_test_scratch_path(char *out, void **state, const char *name);

/* Hex helpers: decode (returns byte count or -1 on bad hex) and encode. */
long amq_test_unhex(uint8_t *out, size_t cap, const char *hex);
void amq_test_hex(char *out, const uint8_t *bytes, size_t len);

/* ---- specs, through the generic handle ---------------------------------------- */

/* A spec amq_new must refuse, the status it must answer, and a fragment
 * of the message it must give ("" for any message). */
typedef struct amq_test_spec_case {
    const char *spec;
    int status;
    const char *message;
} amq_test_spec_case;

/* amq_new refuses each case's spec with its status and a message holding
 * its fragment, leaving its output NULL; a failure names the spec, the
 * status and the message. */
void amq_test_expect_spec_errors(const amq_test_spec_case *cases, size_t count);

/* amq_new accepts each spec, and the filter takes key "k" and finds it.
 * Deletable: it removes "k", then does not find it, and a second removal
 * answers AMQ_ENOTFOUND. Otherwise the removal answers AMQ_EUNSUPPORTED. */
void amq_test_expect_specs_accepted(const char *const *specs, size_t count, bool deletable);

/* amq_build with spec (which gives no capacity) from the keys "a", "b",
 * "c": the filter's amq_info capacity is 3 and it finds each key. Returns
 * amq_info's count. */
uint64_t amq_test_expect_sized_by_keys(const char *spec);

/* Add keys 0 .. n-1 of set 0 under seed to a deletable filter, remove keys
 * 0, 4, 8, ..., then remove each of keys 0 .. 999 of set 1 the filter says
 * is absent: each must answer AMQ_ENOTFOUND. Returns how many were absent. */
uint64_t amq_test_add_then_remove_quarter(amq_filter *f, uint64_t seed, uint64_t n);

/* amq_merge of a new filter of other_spec into into answers
 * AMQ_EINCOMPATIBLE with a message holding fragment. */
void amq_test_expect_merge_refused(amq_filter *into, const char *other_spec, const char *fragment);

/* actual answers amq_contains as expected does for count keys under seed,
 * alternately of set 0 and set 1 (key i is key i / 2 of set i % 2). */
void amq_test_expect_same_answers(const amq_filter *expected, const amq_filter *actual,
                                  uint64_t seed, uint64_t count);

/* ---- damaged files ------------------------------------------------------------- */

/* Write each copy of a saved file (len bytes) with one byte changed (xor
 * 0x10), then each of its proper prefixes, to path: amq_load refuses every
 * one and leaves its output NULL, a prefix with AMQ_ECORRUPT (AMQ_EFORMAT
 * allowed under 8 bytes). */
void amq_test_expect_damage_refused(const char *path, const uint8_t *file, size_t len);

/* Write path as an amq container with a correct checksum holding the given
 * family id (enum amq__family_id), hasher, parameter block and payload:
 * damage only the family's loader can find. */
void amq_test_write_container(const char *path, uint32_t family, const amq_hasher *hasher,
                              const uint8_t *params, uint32_t params_len, const uint8_t *payload,
                              uint64_t payload_len);

/* Write c's container to path again with its payload a byte short, then a
 * byte long (a zero byte appended): each is refused, with a message holding
 * short_refusal and long_refusal ("" for any). */
void amq_test_expect_payload_resize_refused(const char *path, const amq__container *c,
                                            const char *short_refusal, const char *long_refusal);

/* Load path with amq_load. refusal NULL: it loads, and the filter
 * answers a query. Otherwise it is refused with AMQ_ECORRUPT and a message
 * holding refusal ("" for any), its output left NULL. A failure names the
 * file as what_format says (printf), the status and the message. */
void amq_test_expect_load(const char *path, const char *refusal, const char *what_format, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- false-positive rates at low p ------------------------------------------------ */

/* The keys are the 16-byte test keys (amq_test_make_key), cheap to make
 * and to hash; for rates down to p = 1e-6, tens of millions of them are
 * asked. Where a test makes its own, it asks them in batches of
 * AMQ_TEST_BATCH. */
#define AMQ_TEST_BATCH 4096

/* Add keys 0 .. count-1 of set 0 to a dynamic filter. */
void amq_test_add_keys(amq_filter *f, uint64_t seed, uint64_t count);

/* amq_build with spec from keys 0 .. count-1 of set 0; fails the test,
 * with the message, when it cannot. */
amq_filter *amq_test_build_keys(const char *spec, uint64_t seed, uint64_t count);

/* Ask f about keys 0 .. count-1 of set 1 (never put in), one by one: a
 * Bloom filter's query of an absent key stops at its first clear bits,
 * where the batch query reads all k (30 at p = 1e-9). How many it answered
 * "maybe" for. */
uint64_t amq_test_count_false_positives(const amq_filter *f, uint64_t seed, uint64_t count);

/* positives false positives among trials absent keys agree with a rate:
 * the count is within 5 standard deviations of trials * rate, plus 5 for
 * the Poisson tail's skew at small counts. A filter that delivers rate
 * fails it with a chance below 1e-6 (at trials * rate = 20, P(X >= 48) is
 * 3e-8 for Poisson). Prints the figures; fails naming what. */
void amq_test_expect_fpr(const char *what, uint64_t positives, uint64_t trials, double rate);

/* How the filter of a rate check gets its keys: amq_new, then amq_add of
 * each (a dynamic family), or amq_build of them all (a static one). */
typedef enum amq_test_fill { AMQ_TEST_ADD, AMQ_TEST_BUILD } amq_test_fill;

/* Load tests/data/bloom/NAME with flags: a version-1 classic or counting
 * filter of the 1000 golden keys (tests/data/README.md: m = 9586, k = 7,
 * 4969 bits or counters set). Checks that it loads as version 1, answers as
 * bloom-v1.positives records, reports the pair floor in its expected rate,
 * and saves back to the same bytes at saved. Returns it (free it). */
amq_filter *amq_test_load_golden_version_1(const char *name, unsigned flags, const char *saved);

/* A family detail of amq_info by name: NULL when the family gives none
 * (amq_test_detail), or the test fails naming it (amq_test_find_detail). */
const amq_info_detail *amq_test_detail(const amq_info *info, const char *name);
const amq_info_detail *amq_test_find_detail(const amq_info *info, const char *name);
/* The number a filter's detail holds, or -1 when it has none. */
double amq_test_detail_value(const amq_filter *f, const char *name);

/* The rate at small n and low p, as every family checks it. A filter of
 * spec with " seed=<seed>" appended, holding keys 0 .. keys-1 of set 0
 * (filled as fill says; the test fails, naming the spec, when it cannot be
 * made): its amq_info expected_fpr is at most max_over_target times its
 * target_fpr (not checked when max_over_target is 0), and its false
 * positives among trials absent keys (amq_test_count_false_positives) are
 * as many as expected_fpr predicts (amq_test_expect_fpr, named by the
 * seeded spec). Returns expected_fpr. */
double amq_test_expect_low_rate(const char *spec, uint64_t seed, amq_test_fill fill, uint64_t keys,
                                uint64_t trials, double max_over_target);

/* A rate too low for amq_test_expect_fpr's tolerance to tell apart from a
 * higher one: a filter of spec with " seed=<seed>" appended, keys 0 ..
 * keys-1 added one by one, answers "maybe" for at most `most` of trials
 * absent keys. Prints the count; a failure names it and the
 * trials * target_fpr expected. */
void amq_test_expect_at_most_false_positives(const char *spec, uint64_t seed, uint64_t keys,
                                             uint64_t trials, uint64_t most);

/* f answers as recorded in tests/data/<positives> (the lines "prefix-N"
 * it answered "maybe" for, one per line): "maybe" for the keys
 * "prefix-0" .. "prefix-<present-1>" and for the recorded ones among
 * "prefix-<present>" .. "prefix-<present+absent-1>", "no" for the rest,
 * one by one and in a batch. Fails naming the first key that differs. */
void amq_test_expect_recorded_answers(const amq_filter *f, const char *positives,
                                      const char *prefix, size_t present, size_t absent);

/* 1 in a build with AddressSanitizer (gcc or clang), else 0: tests that
 * take minutes there use smaller sets. */
#if defined(__SANITIZE_ADDRESS__)
#define AMQ_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AMQ_TEST_SANITIZED 1
#endif
#endif
#ifndef AMQ_TEST_SANITIZED
#define AMQ_TEST_SANITIZED 0
#endif

#endif /* AMQ_TEST_UTIL_H */
