/*
 * test_util.h - what every test program shares: the seed (printed, and
 * taken from AMQ_TEST_SEED when set, so a failure can be replayed), a fast
 * seeded generator, paths to test data and scratch directories.
 *
 * Include after <stdarg.h>, <stddef.h>, <setjmp.h> and <cmocka.h>.
 */
#ifndef AMQ_TEST_UTIL_H
#define AMQ_TEST_UTIL_H

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

/* Path of a file in tests/data (a static buffer per call site is not used:
 * the result is malloc'd; free it). */
char *amq_test_data_path(const char *name);

/* Read a whole file; returns malloc'd bytes (NUL-terminated) or NULL. */
char *amq_test_read_file(const char *path, size_t *len);

/* Make a fresh scratch directory (under TMPDIR or /tmp); malloc'd path.
 * amq_test_remove_tree removes it again. */
char *amq_test_scratch_dir(void);
void amq_test_remove_tree(const char *path);

/* Hex helpers: decode (returns byte count or -1 on bad hex) and encode. */
long amq_test_unhex(uint8_t *out, size_t cap, const char *hex);
void amq_test_hex(char *out, const uint8_t *bytes, size_t len);

#endif /* AMQ_TEST_UTIL_H */
