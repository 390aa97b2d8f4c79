/*
 * Tests for the cuckoo filter (src/cuckoo/cuckoo.c).
 *
 * What they establish, each by something that could fail:
 *   - no false negatives, for bucket sizes 2, 4, 8 and fingerprints of 4 to
 *     32 bits;
 *   - a filter made for n keys takes n keys: a million keys at b = 4, f = 12
 *     under ten seeds (then at a load of at least 0.90), and capacities from
 *     1 to 1000 under many seeds;
 *   - a fixed-size filter first refuses a key at a median load of at least
 *     0.95 over ten seeds (b = 4, f = 12); the add before that went to the
 *     stash, the refusals change nothing and no key stored is lost;
 *   - the FPR at 95% load is 1 - (1 - 1/(2^f - 1))^(2 b load) within 4
 *     binomial standard deviations, the formula evaluated here from the
 *     measured load;
 *   - fingerprints are packed f bits each: at most 13.3 bits per key at
 *     capacity for f = 12, b = 4;
 *   - duplicates fill a key's two buckets and the stash, then the filter is
 *     full; add_unique stores one copy; a removal empties the stash;
 *   - a growing filter chains tables of growth times the buckets, takes 20
 *     times its capacity and keeps its FPR; without growth it fills;
 *     removals from a grown filter never lose another key;
 *   - a randomized model of a million operations against an exact multiset
 *     (adds, unique adds, removes, queries, counts) on small filters that
 *     fill and use the stash, with and without growth;
 *   - removing keys that are certainly absent answers AMQ_ENOTFOUND and
 *     changes nothing;
 *   - the query of one table of f = 12, b = 4 (a path of its own) answers
 *     as the count while the stash fills and empties, after a clear and
 *     once the filter grew;
 *   - argument errors of the typed API and of specs; save/load through the
 *     generic handle answers identically and keeps working, full or grown;
 *     damaged files are refused with AMQ_ECORRUPT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/cuckoo.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/util.h"
#include "cuckoo/cuckoo_internal.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed;

static amq_cuckoo *new_seeded(uint64_t capacity, uint32_t fingerprint_bits, uint32_t bucket_size,
                              uint32_t growth, uint64_t hash_seed)
{
    amq_cuckoo_params params = { .capacity = capacity,
                                 .fingerprint_bits = fingerprint_bits,
                                 .bucket_size = bucket_size,
                                 .growth = growth };
    amq_hasher_xxh3(&params.hasher, hash_seed);
    amq_cuckoo *f = NULL;
    int status = amq_cuckoo_new(&f, &params, NULL);
    if (status != AMQ_OK)
        fail_msg("amq_cuckoo_new(n = %llu, f = %u, b = %u, growth = %u): %s",
                 (unsigned long long)capacity, fingerprint_bits, bucket_size, growth,
                 amq_strerror(status));
    return f;
}

static amq_cuckoo *new_filter(uint64_t capacity, uint32_t fingerprint_bits, uint32_t bucket_size,
                              uint32_t growth)
{
    return new_seeded(capacity, fingerprint_bits, bucket_size, growth, seed);
}

/* Add keys 0 .. n-1 of set 0 under key_seed; every add must succeed. */
static void add_all(amq_cuckoo *f, uint64_t key_seed, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(key_seed, 0, i);
        int status = amq_cuckoo_add(f, &key, sizeof key);
        if (status != AMQ_OK)
            fail_msg("n = %llu, f = %u, b = %u, key seed %llu: add of key %llu: %s (load %.4f)",
                     (unsigned long long)amq_cuckoo_capacity(f), amq_cuckoo_fingerprint_bits(f),
                     amq_cuckoo_bucket_size(f), (unsigned long long)key_seed, (unsigned long long)i,
                     amq_strerror(status), amq_cuckoo_load_factor(f));
    }
}

/* Keys 0 .. n-1 of set 0 under key_seed are all maybe present. */
static void assert_all_found(const amq_cuckoo *f, uint64_t key_seed, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        amq_test_key key = amq_test_make_key(key_seed, 0, i);
        if (!amq_cuckoo_contains(f, &key, sizeof key))
            fail_msg("false negative: key %llu of %llu (f = %u, b = %u, key seed %llu)",
                     (unsigned long long)i, (unsigned long long)n, amq_cuckoo_fingerprint_bits(f),
                     amq_cuckoo_bucket_size(f), (unsigned long long)key_seed);
    }
}

/* Absent keys (set 1) that are maybe present, of trials. */
static uint64_t false_positives(const amq_cuckoo *f, uint64_t trials)
{
    uint64_t positives = 0;
    for (uint64_t i = 0; i < trials; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        positives += amq_cuckoo_contains(f, &key, sizeof key);
    }
    return positives;
}

/* 1 - (1 - 1/(2^f - 1))^(2 b load): the chance that one of the 2 b load
 * fingerprints an absent key is compared with equals its own. */
static double fpr_formula(uint32_t fingerprint_bits, uint32_t bucket_size, double load)
{
    double match = 1 / (ldexp(1, (int)fingerprint_bits) - 1);
    return -expm1(2.0 * bucket_size * load * log1p(-match));
}

/* The smallest f with 2 b / (2^f - 1) <= p. */
static uint32_t bits_for_fpr(double p, uint32_t bucket_size)
{
    uint32_t bits = 1;
    while (2.0 * bucket_size / (ldexp(1, (int)bits) - 1) > p)
        bits++;
    return bits;
}

static uint64_t table_slots(const amq_cuckoo *f)
{
    uint64_t slots = 0;
    for (size_t i = 0; i < amq_cuckoo_tables(f); i++)
        slots += amq_cuckoo_table_buckets(f, i) * amq_cuckoo_bucket_size(f);
    return slots;
}

/* ---- parameters ----------------------------------------------------------------- */

static void test_defaults_and_sizing(void **state)
{
    (void)state;
    amq_cuckoo_params params = { .capacity = 1000 };
    amq_cuckoo *f = NULL;
    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_OK);
    assert_int_equal(amq_cuckoo_fingerprint_bits(f), bits_for_fpr(0.01, 4));
    assert_int_equal(amq_cuckoo_fingerprint_bits(f), 10);
    assert_int_equal(amq_cuckoo_bucket_size(f), 4);
    assert_int_equal(amq_cuckoo_max_kicks(f), AMQ_CUCKOO_DEFAULT_MAX_KICKS);
    assert_int_equal(amq_cuckoo_growth(f), 0);
    assert_int_equal(amq_cuckoo_capacity(f), 1000);
    assert_int_equal(amq_cuckoo_tables(f), 1);
    assert_int_equal(amq_cuckoo_keys(f), 0);
    assert_false(amq_cuckoo_full(f));
    assert_true(amq_cuckoo_load_factor(f) == 0);
    assert_true(amq_cuckoo_expected_fpr(f) == 0);
    amq_hasher xxh3_zero;
    amq_hasher_xxh3(&xxh3_zero, 0);
    assert_memory_equal(amq_cuckoo_hasher(f), &xxh3_zero, sizeof xxh3_zero);
    amq_cuckoo_free(f);
    amq_cuckoo_free(NULL);

    /* f from p for each bucket size; what is given is kept. */
    const double rates[] = { 0.1, 0.01, 0.001, 1e-6 };
    const uint32_t bucket_sizes[] = { 2, 4, 8 };
    for (size_t i = 0; i < 4; i++) {
        for (size_t j = 0; j < 3; j++) {
            amq_cuckoo_params p = { .capacity = 5000,
                                    .fpr = rates[i],
                                    .bucket_size = bucket_sizes[j],
                                    .max_kicks = 77,
                                    .growth = 4 };
            assert_int_equal(amq_cuckoo_new(&f, &p, NULL), AMQ_OK);
            assert_int_equal(amq_cuckoo_fingerprint_bits(f), bits_for_fpr(rates[i], p.bucket_size));
            assert_int_equal(amq_cuckoo_bucket_size(f), p.bucket_size);
            assert_int_equal(amq_cuckoo_max_kicks(f), 77);
            assert_int_equal(amq_cuckoo_growth(f), 4);
            amq_cuckoo_free(f);
        }
    }

    /* The bucket count is what the design load asks for, not rounded up to
     * a power of two: n keys fill at least 80% of the slots (90% for b =
     * 4 and 8), and the slots hold them. */
    const uint64_t capacities[] = { 1000000, 3000000, 123457 };
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 3; j++) {
            f = new_filter(capacities[i], 12, bucket_sizes[j], 0);
            uint64_t slots = amq_cuckoo_slots(f);
            assert_int_equal(slots, amq_cuckoo_table_buckets(f, 0) * bucket_sizes[j]);
            double load = (double)capacities[i] / (double)slots;
            if (slots < capacities[i] || load < (bucket_sizes[j] == 2 ? 0.80 : 0.90))
                fail_msg("n = %llu, b = %u: %llu slots, a load of %.4f at capacity",
                         (unsigned long long)capacities[i], bucket_sizes[j],
                         (unsigned long long)slots, load);
            amq_cuckoo_free(f);
        }
    }
}

static void test_parameter_errors(void **state)
{
    (void)state;
    amq_cuckoo *f = (amq_cuckoo *)&f;
    struct {
        amq_cuckoo_params params;
        int status;
    } cases[] = {
        { { .capacity = 0 }, AMQ_EINVAL },
        { { .capacity = 1000, .bucket_size = 3 }, AMQ_EINVAL },
        { { .capacity = 1000, .bucket_size = 1 }, AMQ_EINVAL },
        { { .capacity = 1000, .bucket_size = 16 }, AMQ_EINVAL },
        { { .capacity = 1000, .fingerprint_bits = 3 }, AMQ_EINVAL },
        { { .capacity = 1000, .fingerprint_bits = 33 }, AMQ_EINVAL },
        { { .capacity = 1000, .fpr = 1 }, AMQ_EINVAL },
        { { .capacity = 1000, .fpr = 1.5 }, AMQ_EINVAL },
        { { .capacity = 1000, .fpr = -0.01 }, AMQ_EINVAL },
        { { .capacity = 1000, .fpr = NAN }, AMQ_EINVAL },
        { { .capacity = 1000, .growth = AMQ_CUCKOO_MAX_GROWTH + 1 }, AMQ_EINVAL },
        { { .capacity = 1000, .growth = 3 }, AMQ_EINVAL },
        { { .capacity = 1000, .growth = 12 }, AMQ_EINVAL },
        { { .capacity = 1000, .hasher = { .kind = (amq_hash_kind)9 } }, AMQ_EINVAL },
        /* 8 / (2^f - 1) <= 1e-12 needs f = 43. */
        { { .capacity = 1000, .fpr = 1e-12 }, AMQ_ERANGE },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int status = amq_cuckoo_new(&f, &cases[i].params, NULL);
        if (status != cases[i].status)
            fail_msg("case %zu: status %d, expected %d", i, status, cases[i].status);
        assert_null(f);
    }
    /* More buckets than 2^32, or more memory than there is: refused, no
     * crash. */
    const uint64_t huge[] = { 1000000000000000ULL, 100000000000ULL, UINT64_MAX };
    for (size_t i = 0; i < 3; i++) {
        amq_cuckoo_params params = { .capacity = huge[i], .fingerprint_bits = 12 };
        f = (amq_cuckoo *)&f;
        int status = amq_cuckoo_new(&f, &params, NULL);
        if (status != AMQ_ERANGE && status != AMQ_ENOMEM)
            fail_msg("capacity %llu: status %d, expected AMQ_ERANGE or AMQ_ENOMEM",
                     (unsigned long long)huge[i], status);
        assert_null(f);
    }
    /* The extremes that are allowed. */
    const amq_cuckoo_params good[] = {
        { .capacity = 1, .fingerprint_bits = AMQ_CUCKOO_MIN_FINGERPRINT_BITS, .bucket_size = 2 },
        { .capacity = 1, .fingerprint_bits = AMQ_CUCKOO_MAX_FINGERPRINT_BITS, .bucket_size = 8 },
        { .capacity = 10, .growth = AMQ_CUCKOO_MAX_GROWTH, .max_kicks = 1 },
        { .capacity = 10, .fpr = 0.999 },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(amq_cuckoo_new(&f, &good[i], NULL), AMQ_OK);
        assert_int_equal(amq_cuckoo_add(f, "k", 1), AMQ_OK);
        assert_true(amq_cuckoo_contains(f, "k", 1));
        amq_cuckoo_free(f);
    }
}

/* ---- no false negatives, and n keys always fit ------------------------------------ */

/* Ten seeds, a million keys into a filter made for a million (b = 4, f =
 * 12): every add succeeds and the load is then at least 0.90. Then keys
 * past the capacity until the first AMQ_EFULL: the add before it ran out of
 * kicks and went to the stash (the filter turned full), the refusal and the
 * ones after it change nothing, and every key stored is still found. The
 * median load at the first refusal is at least 0.95. */
static void test_million_keys_then_first_refusal(void **state)
{
    (void)state;
    enum { N = 1000000, MOST = N + N / 5, SEEDS = 10, REFUSALS = 1000 };
    double loads[SEEDS];
    /* Each key is hashed once, for its add and its lookup. */
    uint64_t *hashes = malloc(MOST * sizeof *hashes);
    assert_non_null(hashes);
    for (uint64_t s = 0; s < SEEDS; s++) {
        uint64_t key_seed = seed + s;
        amq_cuckoo *f = new_seeded(N, 12, 4, 0, key_seed);
        const amq_hasher *hasher = amq_cuckoo_hasher(f);
        for (uint64_t i = 0; i < N; i++) {
            amq_test_key key = amq_test_make_key(key_seed, 0, i);
            hashes[i] = amq_hash64(hasher, &key, sizeof key);
            int status = amq_cuckoo_add_hash(f, hashes[i]);
            if (status != AMQ_OK)
                fail_msg("key seed %llu: key %llu of a million refused: %s (load %.4f)",
                         (unsigned long long)key_seed, (unsigned long long)i, amq_strerror(status),
                         amq_cuckoo_load_factor(f));
        }
        uint64_t slots = amq_cuckoo_slots(f);
        assert_int_equal(amq_cuckoo_keys(f), N);
        /* A key whose pair holds b / 2 copies of its fingerprint already
         * (other keys' equal ones) is counted, not stored. */
        double load = (double)(N - amq_cuckoo_counted_copies(f)) / (double)slots;
        assert_true(fabs(amq_cuckoo_load_factor(f) - load) < 1e-12);
        if (load < 0.90)
            fail_msg("key seed %llu: a million keys fill only %.4f of %llu slots",
                     (unsigned long long)key_seed, load, (unsigned long long)slots);

        uint64_t i = N;
        for (;; i++) {
            assert_true(i < MOST);
            amq_test_key key = amq_test_make_key(key_seed, 0, i);
            hashes[i] = amq_hash64(hasher, &key, sizeof key);
            bool was_full = amq_cuckoo_full(f);
            uint64_t size = amq_cuckoo_keys(f), copies = amq_cuckoo_count_hash(f, hashes[i]);
            int status = amq_cuckoo_add_hash(f, hashes[i]);
            if (status == AMQ_OK) {
                if (was_full)
                    fail_msg("key seed %llu: key %llu accepted while the stash was occupied",
                             (unsigned long long)key_seed, (unsigned long long)i);
                assert_int_equal(amq_cuckoo_keys(f), size + 1);
                continue;
            }
            if (status != AMQ_EFULL || !was_full)
                fail_msg("key seed %llu: key %llu: %s with the stash %s",
                         (unsigned long long)key_seed, (unsigned long long)i, amq_strerror(status),
                         was_full ? "occupied" : "empty");
            assert_int_equal(amq_cuckoo_keys(f), size);
            assert_int_equal(amq_cuckoo_count_hash(f, hashes[i]), copies);
            break;
        }
        loads[s] = amq_cuckoo_load_factor(f);
        assert_true(fabs(loads[s] - (double)(i - amq_cuckoo_counted_copies(f)) / (double)slots) <
                    1e-12);
        /* Refused keys change nothing, whatever the key. */
        for (uint64_t j = 1; j <= REFUSALS; j++) {
            amq_test_key key = amq_test_make_key(key_seed, 0, i + j);
            uint64_t copies = amq_cuckoo_count(f, &key, sizeof key);
            assert_int_equal(amq_cuckoo_add(f, &key, sizeof key), AMQ_EFULL);
            assert_int_equal(amq_cuckoo_add_hash(f, j), AMQ_EFULL);
            assert_int_equal(amq_cuckoo_count(f, &key, sizeof key), copies);
        }
        assert_int_equal(amq_cuckoo_keys(f), i);
        assert_true(amq_cuckoo_full(f));
        for (uint64_t j = 0; j < i; j++)
            if (!amq_cuckoo_contains_hash(f, hashes[j]))
                fail_msg("key seed %llu: key %llu of %llu stored is lost",
                         (unsigned long long)key_seed, (unsigned long long)j,
                         (unsigned long long)i);
        amq_cuckoo_free(f);
    }
    free(hashes);
    print_message("load at the first refusal (b = 4, f = 12, n = 1e6):");
    for (size_t s = 0; s < SEEDS; s++)
        print_message(" %.4f", loads[s]);
    for (size_t s = 1; s < SEEDS; s++)
        for (size_t t = s; t > 0 && loads[t - 1] > loads[t]; t--) {
            double swap = loads[t];
            loads[t] = loads[t - 1];
            loads[t - 1] = swap;
        }
    double median = (loads[SEEDS / 2 - 1] + loads[SEEDS / 2]) / 2;
    print_message("; median %.4f\n", median);
    if (median < 0.95)
        fail_msg("median load at the first refusal %.4f < 0.95", median);
}

/* Other bucket sizes and fingerprint widths, at 100,000 keys or fewer:
 * every key added, every key found. */
static void test_no_false_negatives(void **state)
{
    (void)state;
    struct {
        uint64_t n;
        uint32_t fingerprint_bits, bucket_size;
    } cases[] = {
        { 100000, 12, 2 },
        { 100000, 12, 8 },
        { 100000, 8, 4 },
        { 100000, 16, 4 },
        { 50000, 8, 2 },
        { 50000, 16, 8 },
        { 50000, 32, 4 },
        { 10000, 4, 4 },
        { 10000, 5, 8 },
        { 10000, 7, 2 },
        /* Buckets of b * f bits that start mid-byte: 72 bits (b = 4, f = 18;
         * b = 8, f = 9) and 54 (b = 2, f = 27). */
        { 50000, 18, 4 },
        { 50000, 9, 8 },
        { 50000, 27, 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amq_cuckoo *f = new_filter(cases[i].n, cases[i].fingerprint_bits, cases[i].bucket_size, 0);
        if (cases[i].fingerprint_bits > 4) {
            add_all(f, seed, cases[i].n);
            assert_int_equal(amq_cuckoo_keys(f), cases[i].n);
            assert_all_found(f, seed, cases[i].n);
        } else {
            /* 4-bit fingerprints lead a bucket's keys to at most 15
             * alternates: one table in a few dozen of 10,000 keys (b = 4)
             * fills first at 80-90% load. Every key it took is found. */
            uint64_t taken = 0;
            for (; taken < cases[i].n; taken++) {
                amq_test_key key = amq_test_make_key(seed, 0, taken);
                if (amq_cuckoo_add(f, &key, sizeof key) != AMQ_OK)
                    break;
            }
            assert_true(taken >= cases[i].n * 3 / 4);
            assert_all_found(f, seed, taken);
        }
        amq_cuckoo_free(f);
    }
}

/* Tiny filters too take the keys they were made for, whatever the seed. */
static void test_small_capacities_take_their_keys(void **state)
{
    (void)state;
    const uint64_t capacities[] = { 1, 2, 3, 10, 100, 1000 };
    const uint64_t runs[] = { 1000, 1000, 1000, 1000, 300, 100 };
    const uint32_t bucket_sizes[] = { 2, 4, 8 };
    for (size_t b = 0; b < 3; b++) {
        for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
            for (uint64_t run = 0; run < runs[c]; run++) {
                uint64_t key_seed = seed * 1000003 + run * 7919 + c;
                amq_cuckoo *f = new_seeded(capacities[c], 12, bucket_sizes[b], 0, key_seed);
                add_all(f, key_seed, capacities[c]);
                assert_int_equal(amq_cuckoo_keys(f), capacities[c]);
                assert_all_found(f, key_seed, capacities[c]);
                amq_cuckoo_free(f);
            }
        }
    }
}

/* Short walks (RedisBloom's default of 20 kicks, and 100) fail at lower
 * loads; a table sized for them still takes its n keys, at every bucket
 * size, over 30 key sets at 10,000 keys and 3 at 200,000. */
static void test_short_walks_take_their_keys(void **state)
{
    (void)state;
    const uint32_t kicks[] = { 20, 100 };
    const uint64_t capacities[] = { 10000, 200000 };
    const uint64_t runs[] = { 30, 3 };
    const uint32_t bucket_sizes[] = { 2, 4, 8 };
    for (size_t k = 0; k < 2; k++)
        for (size_t b = 0; b < 3; b++)
            for (size_t c = 0; c < 2; c++)
                for (uint64_t run = 0; run < runs[c]; run++) {
                    uint64_t key_seed = seed * 1000033 + run * 104729 + c * 31 + b;
                    amq_cuckoo_params params = { .capacity = capacities[c],
                                                 .fingerprint_bits = 12,
                                                 .bucket_size = bucket_sizes[b],
                                                 .max_kicks = kicks[k] };
                    amq_hasher_xxh3(&params.hasher, key_seed);
                    amq_cuckoo *f = NULL;
                    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_OK);
                    add_all(f, key_seed, capacities[c]);
                    assert_int_equal(amq_cuckoo_keys(f), capacities[c]);
                    amq_cuckoo_free(f);
                }
}

/* A growing filter's first table skips the pile-up floor (1,000 keys at
 * b = 2: 656 buckets, not the 2,781 a fixed table needs) and still holds
 * every key, chaining a table in the rare case of a pile-up. */
static void test_growing_tables_skip_the_pileup_floor(void **state)
{
    (void)state;
    for (uint64_t run = 0; run < 200; run++) {
        uint64_t key_seed = seed * 7 + run;
        amq_cuckoo *fixed = new_seeded(1000, 8, 2, 0, key_seed);
        amq_cuckoo *growing = new_seeded(1000, 8, 2, 1, key_seed);
        assert_true(amq_cuckoo_slots(growing) * 3 < amq_cuckoo_slots(fixed));
        add_all(growing, key_seed, 1000);
        assert_int_equal(amq_cuckoo_keys(growing), 1000);
        assert_all_found(growing, key_seed, 1000);
        amq_cuckoo_free(fixed);
        amq_cuckoo_free(growing);
    }
}

/* ---- false positives ---------------------------------------------------------------- */

/* A filter made for a million keys, filled to a load of 95% (or to its
 * first overflow into the stash, if that comes first); the FPR over two
 * million absent keys is within 4 sigma of the formula at the measured
 * load. */
static void check_fpr_at_95_percent(uint32_t fingerprint_bits, bool semi_sort)
{
    enum { N = 1000000, TRIALS = 2000000 };
    amq_cuckoo_params params = { .capacity = N,
                                 .fingerprint_bits = fingerprint_bits,
                                 .semi_sort = semi_sort };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_cuckoo *f = NULL;
    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_OK);
    uint64_t target = (uint64_t)ceil(0.95 * (double)amq_cuckoo_slots(f));
    for (uint64_t i = 0; i < target && !amq_cuckoo_full(f); i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        int status = amq_cuckoo_add(f, &key, sizeof key);
        if (status != AMQ_OK)
            fail_msg("f = %u: add of key %llu: %s", fingerprint_bits, (unsigned long long)i,
                     amq_strerror(status));
    }
    double load =
        (double)(amq_cuckoo_keys(f) - amq_cuckoo_counted_copies(f)) / (double)amq_cuckoo_slots(f);
    assert_true(load > 0.90);
    double expected = fpr_formula(fingerprint_bits, 4, load);
    double measured = (double)false_positives(f, TRIALS) / TRIALS;
    double sigma = sqrt(expected * (1 - expected) / TRIALS);
    print_message("f = %u, b = 4%s, load %.4f: measured FPR %.6f, expected %.6f (4 sigma %.6f), "
                  "%.2f bits/key\n",
                  fingerprint_bits, semi_sort ? " semi-sorted" : "", load, measured, expected,
                  4 * sigma, (double)amq_cuckoo_memory_bytes(f) * 8 / (double)amq_cuckoo_keys(f));
    if (fabs(measured - expected) > 4 * sigma)
        fail_msg("f = %u: FPR %.6f is more than 4 sigma (%.6f) from %.6f", fingerprint_bits,
                 measured, 4 * sigma, expected);
    /* The library's own figure is the same formula. */
    double library = amq_cuckoo_expected_fpr(f);
    if (fabs(library - expected) > 1e-9 * expected)
        fail_msg("amq_cuckoo_expected_fpr %.9g, the formula %.9g", library, expected);
    amq_cuckoo_free(f);
}

static void test_fpr_8_bits(void **state)
{
    (void)state;
    check_fpr_at_95_percent(8, false);
}

static void test_fpr_12_bits(void **state)
{
    (void)state;
    check_fpr_at_95_percent(12, false);
}

static void test_fpr_16_bits(void **state)
{
    (void)state;
    check_fpr_at_95_percent(16, false);
}

/* Semi-sorting changes how a bucket is stored, not what it holds: the FPR
 * is that of f-bit fingerprints. */
static void test_fpr_semi_sorted(void **state)
{
    (void)state;
    check_fpr_at_95_percent(9, true);
    check_fpr_at_95_percent(13, true);
}

/* ---- space ------------------------------------------------------------------------ */

/* A slot takes f bits, not a whole byte or word: the table is slots * f / 8
 * bytes within a cache line of padding. */
static void test_fingerprints_are_packed(void **state)
{
    (void)state;
    const uint32_t widths[] = { 4, 5, 7, 8, 9, 12, 13, 16, 17, 24, 31, 32 };
    const uint32_t bucket_sizes[] = { 2, 4, 8 };
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        for (size_t j = 0; j < 3; j++) {
            amq_cuckoo *f = new_filter(100003, widths[i], bucket_sizes[j], 0);
            uint64_t packed = (amq_cuckoo_slots(f) * widths[i] + 7) / 8;
            uint64_t bytes = amq_cuckoo_memory_bytes(f);
            if (bytes < packed || bytes > packed + 64)
                fail_msg("f = %u, b = %u: %llu slots in %llu bytes, packed %llu", widths[i],
                         bucket_sizes[j], (unsigned long long)amq_cuckoo_slots(f),
                         (unsigned long long)bytes, (unsigned long long)packed);
            amq_cuckoo_free(f);
        }
    }
    /* The figure in the header: under 13.3 bits per key at capacity. */
    amq_cuckoo *f = new_filter(1000000, 12, 4, 0);
    double bits_per_key = (double)amq_cuckoo_memory_bytes(f) * 8 / 1e6;
    print_message("f = 12, b = 4, n = 1e6: %llu bytes, %.3f bits/key at capacity\n",
                  (unsigned long long)amq_cuckoo_memory_bytes(f), bits_per_key);
    if (bits_per_key > 13.3)
        fail_msg("%.3f bits per key at capacity (f = 12, b = 4)", bits_per_key);
    amq_cuckoo_free(f);
}

/* ---- semi-sorted buckets ---------------------------------------------------------- */

static amq_cuckoo *new_semi_sorted(uint64_t capacity, uint32_t fingerprint_bits)
{
    amq_cuckoo_params params = { .capacity = capacity,
                                 .fingerprint_bits = fingerprint_bits,
                                 .semi_sort = true };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_cuckoo *f = NULL;
    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_OK);
    return f;
}

/* A hash whose fingerprint is fingerprint (1 .. 2^f - 1) and whose first
 * bucket is bucket, by inverting the mappings in src/cuckoo/cuckoo.c: fp = 1 +
 * (lo32 (2^f - 1)) >> 32, bucket = (hi32 buckets) >> 32. */
static uint64_t hash_for(const amq_cuckoo *f, uint32_t fingerprint, uint64_t bucket)
{
    uint64_t range = ((uint64_t)1 << amq_cuckoo_fingerprint_bits(f)) - 1;
    uint64_t buckets = amq_cuckoo_table_buckets(f, 0);
    uint64_t low = (((uint64_t)(fingerprint - 1) << 32) + range - 1) / range;
    uint64_t high = ((bucket << 32) + buckets - 1) / buckets;
    return high << 32 | low;
}

/* Put the four fingerprints (0: none) into one bucket, then take them out
 * one by one: each step, every fingerprint is counted as often as the
 * bucket holds it. A bucket of a fresh table takes all four at home. */
static void check_bucket_holds(amq_cuckoo *f, const uint32_t fingerprints[4], uint64_t bucket)
{
    uint64_t hashes[4];
    for (int i = 0; i < 4; i++)
        hashes[i] = hash_for(f, fingerprints[i], bucket);
    for (int i = 0; i < 4; i++)
        if (fingerprints[i])
            assert_int_equal(amq_cuckoo_add_hash(f, hashes[i]), AMQ_OK);
    for (int removed = 0; removed <= 4; removed++) {
        for (int i = 0; i < 4; i++) {
            if (!fingerprints[i])
                continue;
            uint64_t copies = 0;
            for (int j = removed; j < 4; j++)
                copies += fingerprints[j] == fingerprints[i];
            uint64_t counted = amq_cuckoo_count_hash(f, hashes[i]);
            if (counted != copies)
                fail_msg("f = %u, bucket %llu holding %u %u %u %u, %d removed: %u counted %llu "
                         "times, not %llu",
                         amq_cuckoo_fingerprint_bits(f), (unsigned long long)bucket,
                         fingerprints[0], fingerprints[1], fingerprints[2], fingerprints[3],
                         removed, fingerprints[i], (unsigned long long)counted,
                         (unsigned long long)copies);
        }
        if (removed < 4 && fingerprints[removed])
            assert_int_equal(amq_cuckoo_remove_hash(f, hashes[removed]), AMQ_OK);
    }
    assert_int_equal(amq_cuckoo_keys(f), 0);
}

/* Every bucket content survives the prefix coding: all multisets of four
 * 5-bit fingerprints (with empty slots), in buckets across the table, and
 * random ones of 6 to 16 bits, whose buckets start at every bit offset. */
static void test_semi_sorted_buckets(void **state)
{
    (void)state;
    amq_cuckoo *f = new_semi_sorted(1000, 5);
    uint64_t buckets = amq_cuckoo_table_buckets(f, 0), contents = 0;
    uint32_t fingerprints[4];
    for (uint32_t d = 0; d < 32; d++)
        for (uint32_t c = 0; c <= d; c++)
            for (uint32_t b = 0; b <= c; b++)
                for (uint32_t a = 0; a <= b; a++, contents++) {
                    /* Added in an order that is not the sorted one. */
                    fingerprints[0] = c;
                    fingerprints[1] = a;
                    fingerprints[2] = d;
                    fingerprints[3] = b;
                    check_bucket_holds(f, fingerprints, contents % buckets);
                }
    assert_int_equal(contents, 52360); /* C(32 + 3, 4) */
    amq_cuckoo_free(f);

    amq_test_rng rng;
    amq_test_rng_init(&rng, seed);
    const uint32_t widths[] = { 6, 9, 12, 13, 16 };
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        f = new_semi_sorted(1000, widths[w]);
        uint32_t range = (1u << widths[w]) - 1;
        buckets = amq_cuckoo_table_buckets(f, 0);
        for (int trial = 0; trial < 20000; trial++) {
            /* Shared prefixes and equal fingerprints are the cases that
             * sorting could get wrong: draw from few values now and then. */
            uint32_t values = trial % 3 == 0 ? 3 : range + 1;
            for (int i = 0; i < 4; i++)
                fingerprints[i] = (uint32_t)amq_test_below(&rng, values) * (range / (values - 1));
            check_bucket_holds(f, fingerprints, amq_test_below(&rng, buckets));
        }
        amq_cuckoo_free(f);
    }
}

/* A semi-sorted filter answers alike whether it spreads its suffixes with
 * BMI2's pdep (where the CPU has it) or portably, for every f from 5 (a
 * one-bit suffix: nearly every query compares whole fingerprints) to 16 (a
 * bucket wider than one 64-bit window), nearly full, for present keys,
 * absent keys (a few per cent of them false positives) and batches. */
static void test_semi_sorted_pdep_and_portable_agree(void **state)
{
    (void)state;
    enum { CAPACITY = 4000, KEYS = 3900, ABSENT = 40000, BATCH = 1000 };
    amq_test_key keys[BATCH];
    const void *pointers[BATCH];
    size_t lens[BATCH];
    uint8_t fast_results[BATCH], portable_results[BATCH];
    for (uint32_t bits = AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS;
         bits <= AMQ_CUCKOO_SEMI_SORT_MAX_FINGERPRINT_BITS; bits++) {
        amq_cuckoo *fast = new_semi_sorted(CAPACITY, bits);
        amq_cuckoo *portable = new_semi_sorted(CAPACITY, bits);
        amq__cuckoo_use_portable(portable);
        assert_false(amq__cuckoo_uses_bmi2(portable));
        if (bits == AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS)
            print_message("this CPU %s the pdep path\n",
                          amq__cuckoo_uses_bmi2(fast) ? "takes" : "does not take");
        add_all(fast, seed, KEYS);
        add_all(portable, seed, KEYS);
        assert_all_found(portable, seed, KEYS);
        uint64_t positives = 0;
        for (uint64_t i = 0; i < ABSENT; i++) {
            amq_test_key key = amq_test_make_key(seed, 1, i);
            bool answer = amq_cuckoo_contains(fast, &key, sizeof key);
            if (answer != amq_cuckoo_contains(portable, &key, sizeof key))
                fail_msg("f = %u: absent key %llu is %s with pdep, not portably", bits,
                         (unsigned long long)i, answer ? "maybe present" : "absent");
            positives += answer;
        }
        /* Some false positives, which take the whole comparison: about
         * 40000 * 8 * 0.975 / (2^f - 1) of them, at least 76 for f <= 12. */
        if (bits <= 12)
            assert_true(positives > 0);
        amq_test_batch_keys(keys, pointers, lens, BATCH, seed, 3);
        amq_cuckoo_contains_many(fast_results, fast, pointers, lens, BATCH);
        amq_cuckoo_contains_many(portable_results, portable, pointers, lens, BATCH);
        assert_memory_equal(fast_results, portable_results, BATCH);
        amq_cuckoo_free(fast);
        amq_cuckoo_free(portable);
    }
}

/* A semi-sorted bucket of f-bit fingerprints takes 4f - 4 bits. */
static void test_semi_sorted_size(void **state)
{
    (void)state;
    for (uint32_t bits = AMQ_CUCKOO_SEMI_SORT_MIN_FINGERPRINT_BITS;
         bits <= AMQ_CUCKOO_SEMI_SORT_MAX_FINGERPRINT_BITS; bits++) {
        amq_cuckoo *f = new_semi_sorted(100003, bits);
        assert_true(amq_cuckoo_semi_sorted(f));
        uint64_t buckets = amq_cuckoo_table_buckets(f, 0);
        assert_int_equal(amq_cuckoo_memory_bytes(f), (buckets * (4 * bits - 4) + 7) / 8);
        amq_cuckoo *plain = new_filter(100003, bits, 4, 0);
        assert_false(amq_cuckoo_semi_sorted(plain));
        assert_int_equal(amq_cuckoo_table_buckets(plain, 0), buckets);
        amq_cuckoo_free(plain);
        amq_cuckoo_free(f);
    }
    /* 13-bit fingerprints in 12 bits a slot: the FPR of f = 13 at the
     * size of f = 12. */
    amq_cuckoo *f = new_semi_sorted(1000000, 13);
    add_all(f, seed, 1000000);
    assert_all_found(f, seed, 1000000);
    double bits_per_key = (double)amq_cuckoo_memory_bytes(f) * 8 / 1e6;
    print_message("f = 13 semi-sorted, n = 1e6: %.3f bits/key at capacity, load %.4f\n",
                  bits_per_key, amq_cuckoo_load_factor(f));
    assert_true(bits_per_key <= 13.3);
    amq_cuckoo_free(f);
}

/* ---- duplicates and the stash ------------------------------------------------------ */

/* One key added over and over: b / 2 copies go into its two buckets, the rest
 * are counted; the filter never fills and other keys still go in; every
 * copy needs its own removal. (In a filter of a million keys' capacity a
 * key's two buckets coincide with chance 4e-6.) */
static void test_duplicates(void **state)
{
    (void)state;
    const uint32_t bucket_sizes[] = { 2, 4, 8 };
    const uint64_t copies = 1000;
    for (size_t b = 0; b < 3; b++) {
        uint32_t bucket_size = bucket_sizes[b];
        amq_cuckoo *f = new_filter(1000000, 12, bucket_size, 0);
        uint64_t table_bytes = amq_cuckoo_memory_bytes(f);
        for (uint64_t k = 0; k < 10; k++) {
            amq_test_key key = amq_test_make_key(seed, 0, k);
            for (uint64_t stored = 1; stored <= copies; stored++) {
                assert_int_equal(amq_cuckoo_add(f, &key, sizeof key), AMQ_OK);
                assert_int_equal(amq_cuckoo_count(f, &key, sizeof key), stored);
            }
            assert_false(amq_cuckoo_full(f));
            assert_int_equal(amq_cuckoo_keys(f), copies);
            /* b / 2 copies in the slots, the rest counted beside them. */
            assert_int_equal(amq_cuckoo_counted_copies(f), copies - bucket_size / 2);
            assert_true(amq_cuckoo_load_factor(f) * (double)amq_cuckoo_slots(f) <
                        bucket_size / 2 + 0.5);
            /* Other keys go in as before. */
            amq_test_key other = amq_test_make_key(seed, 1, k);
            assert_int_equal(amq_cuckoo_add(f, &other, sizeof other), AMQ_OK);
            assert_int_equal(amq_cuckoo_add_unique(f, &key, sizeof key), 0);
            assert_int_equal(amq_cuckoo_remove(f, &other, sizeof other), AMQ_OK);
            assert_int_equal(amq_cuckoo_keys(f), copies);
            /* Every copy removed, then no more; the counted ones go first. */
            for (uint64_t left = copies; left > 0; left--) {
                assert_true(amq_cuckoo_contains(f, &key, sizeof key));
                assert_int_equal(amq_cuckoo_remove(f, &key, sizeof key), AMQ_OK);
                assert_int_equal(amq_cuckoo_count(f, &key, sizeof key), left - 1);
            }
            assert_int_equal(amq_cuckoo_remove(f, &key, sizeof key), AMQ_ENOTFOUND);
            assert_false(amq_cuckoo_contains(f, &key, sizeof key));
            assert_int_equal(amq_cuckoo_keys(f), 0);
            assert_int_equal(amq_cuckoo_counted_copies(f), 0);
            /* add_unique keeps one copy. */
            assert_int_equal(amq_cuckoo_add_unique(f, &key, sizeof key), 1);
            assert_int_equal(amq_cuckoo_add_unique(f, &key, sizeof key), 0);
            uint64_t hash = amq_hash64(amq_cuckoo_hasher(f), &key, sizeof key);
            assert_int_equal(amq_cuckoo_add_unique_hash(f, hash), 0);
            assert_int_equal(amq_cuckoo_count(f, &key, sizeof key), 1);
            assert_int_equal(amq_cuckoo_keys(f), 1);
            assert_int_equal(amq_cuckoo_remove_hash(f, hash), AMQ_OK);
            assert_int_equal(amq_cuckoo_keys(f), 0);
        }
        /* The counts' map is all the memory the copies took. */
        print_message("b = %u: %llu copies of a key took %llu bytes beside the %llu of the "
                      "table\n",
                      bucket_size, (unsigned long long)copies,
                      (unsigned long long)(amq_cuckoo_memory_bytes(f) - table_bytes),
                      (unsigned long long)table_bytes);
        assert_true(amq_cuckoo_memory_bytes(f) - table_bytes <= 1024);
        amq_cuckoo_free(f);
    }
}

/* A filter of distinct keys filled until a walk runs out of kicks: removing
 * stored keys lets the stashed fingerprint back into the table, and the
 * filter takes keys again. The stash is not lost on the way. */
static void test_removal_empties_the_stash(void **state)
{
    (void)state;
    enum { N = 20000, MOST_REMOVALS = 20 };
    for (uint64_t s = 0; s < 5; s++) {
        uint64_t key_seed = seed + s;
        amq_cuckoo *f = new_seeded(N, 12, 4, 0, key_seed);
        uint64_t added = 0;
        while (!amq_cuckoo_full(f)) {
            amq_test_key key = amq_test_make_key(key_seed, 0, added);
            assert_int_equal(amq_cuckoo_add(f, &key, sizeof key), AMQ_OK);
            added++;
        }
        assert_true(added >= N);
        amq_test_key refused = amq_test_make_key(key_seed, 0, added);
        assert_int_equal(amq_cuckoo_add(f, &refused, sizeof refused), AMQ_EFULL);
        uint64_t removed = 0;
        while (amq_cuckoo_full(f)) {
            if (removed == MOST_REMOVALS)
                fail_msg("key seed %llu: still full after %d removals",
                         (unsigned long long)key_seed, MOST_REMOVALS);
            amq_test_key key = amq_test_make_key(key_seed, 0, removed * 997);
            assert_int_equal(amq_cuckoo_remove(f, &key, sizeof key), AMQ_OK);
            removed++;
        }
        assert_int_equal(amq_cuckoo_keys(f), added - removed);
        assert_int_equal(amq_cuckoo_add(f, &refused, sizeof refused), AMQ_OK);
        for (uint64_t i = 0; i <= added; i++) {
            amq_test_key key = amq_test_make_key(key_seed, 0, i);
            bool gone = i % 997 == 0 && i / 997 < removed;
            if (!gone && !amq_cuckoo_contains(f, &key, sizeof key))
                fail_msg("key seed %llu: key %llu lost after %llu removals",
                         (unsigned long long)key_seed, (unsigned long long)i,
                         (unsigned long long)removed);
        }
        print_message("key seed %llu: full after %llu keys (load %.4f), room again after %llu "
                      "removal(s)\n",
                      (unsigned long long)key_seed, (unsigned long long)added,
                      (double)added / (double)amq_cuckoo_slots(f), (unsigned long long)removed);
        amq_cuckoo_free(f);
    }
}

/* ---- removal of absent keys ----------------------------------------------------- */

/* Removing keys with no matching fingerprint answers AMQ_ENOTFOUND and
 * changes nothing: every key's count stays that of a twin filter given the
 * same adds. */
static void test_removing_absent_keys_changes_nothing(void **state)
{
    (void)state;
    enum { N = 50000 };
    amq_cuckoo *f = new_filter(N, 8, 4, 0), *twin = new_filter(N, 8, 4, 0);
    add_all(f, seed, N);
    add_all(twin, seed, N);
    uint64_t refused = 0;
    for (uint64_t i = 0; i < 4 * N; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        if (amq_cuckoo_count(f, &key, sizeof key) != 0)
            continue; /* a false positive: removing it would take another key's copy */
        int status =
            i % 2 ? amq_cuckoo_remove(f, &key, sizeof key)
                  : amq_cuckoo_remove_hash(f, amq_hash64(amq_cuckoo_hasher(f), &key, sizeof key));
        assert_int_equal(status, AMQ_ENOTFOUND);
        refused++;
    }
    assert_true(refused > 3 * N);
    assert_int_equal(amq_cuckoo_keys(f), N);
    for (uint64_t i = 0; i < 2 * N; i++) {
        amq_test_key key = amq_test_make_key(seed, i & 1, i / 2);
        if (amq_cuckoo_count(f, &key, sizeof key) != amq_cuckoo_count(twin, &key, sizeof key))
            fail_msg("key %llu of set %llu: count %llu, the twin's %llu",
                     (unsigned long long)(i / 2), (unsigned long long)(i & 1),
                     (unsigned long long)amq_cuckoo_count(f, &key, sizeof key),
                     (unsigned long long)amq_cuckoo_count(twin, &key, sizeof key));
    }
    /* A cleared filter refuses every removal, and takes keys again. */
    amq_cuckoo_clear(f);
    assert_int_equal(amq_cuckoo_keys(f), 0);
    assert_int_equal(amq_cuckoo_tables(f), 1);
    assert_true(amq_cuckoo_load_factor(f) == 0);
    for (uint64_t i = 0; i < 1000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_false(amq_cuckoo_contains(f, &key, sizeof key));
        assert_int_equal(amq_cuckoo_remove(f, &key, sizeof key), AMQ_ENOTFOUND);
    }
    add_all(f, seed, N);
    assert_all_found(f, seed, N);
    amq_cuckoo_free(f);
    amq_cuckoo_free(twin);
}

/* ---- growth --------------------------------------------------------------------- */

static void test_growth(void **state)
{
    (void)state;
    enum { CAPACITY = 10000, N = 200000, TRIALS = 500000 };
    amq_cuckoo *f = new_filter(CAPACITY, 0, 4, 2);
    add_all(f, seed, N);
    assert_all_found(f, seed, N);
    assert_int_equal(amq_cuckoo_keys(f), N);
    size_t tables = amq_cuckoo_tables(f);
    assert_true(tables > 1);
    for (size_t i = 0; i + 1 < tables; i++)
        if (amq_cuckoo_table_buckets(f, i + 1) != 2 * amq_cuckoo_table_buckets(f, i))
            fail_msg("table %zu has %llu buckets, table %zu %llu", i + 1,
                     (unsigned long long)amq_cuckoo_table_buckets(f, i + 1), i,
                     (unsigned long long)amq_cuckoo_table_buckets(f, i));
    assert_int_equal(amq_cuckoo_slots(f), table_slots(f));
    assert_true(fabs(amq_cuckoo_load_factor(f) - (double)(N - amq_cuckoo_counted_copies(f)) /
                                                     (double)amq_cuckoo_slots(f)) < 1e-12);
    double measured = (double)false_positives(f, TRIALS) / TRIALS;
    double expected = amq_cuckoo_expected_fpr(f);
    double sigma = sqrt(expected * (1 - expected) / TRIALS);
    print_message("growth 2 from %d to %d keys: %zu tables, load %.4f, FPR %.6f, expected %.6f "
                  "(4 sigma %.6f)\n",
                  CAPACITY, N, tables, amq_cuckoo_load_factor(f), measured, expected, 4 * sigma);
    if (measured > expected + 4 * sigma)
        fail_msg("FPR %.6f above the expected %.6f + 4 sigma (%.6f)", measured, expected,
                 4 * sigma);
    amq_cuckoo_free(f);

    /* The same keys without growth: the filter fills. */
    f = new_filter(CAPACITY, 0, 4, 0);
    uint64_t i = 0;
    int status = AMQ_OK;
    for (; i < N && status == AMQ_OK; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        status = amq_cuckoo_add(f, &key, sizeof key);
    }
    assert_int_equal(status, AMQ_EFULL);
    assert_true(i > CAPACITY);
    assert_int_equal(amq_cuckoo_tables(f), 1);
    amq_cuckoo_free(f);

    /* Growth 4, and growth 1 up to the most tables a filter chains. */
    f = new_filter(1000, 12, 8, 4);
    add_all(f, seed, 50000);
    assert_all_found(f, seed, 50000);
    assert_true(amq_cuckoo_tables(f) >= 3);
    for (size_t t = 0; t + 1 < amq_cuckoo_tables(f); t++)
        assert_int_equal(amq_cuckoo_table_buckets(f, t + 1), 4 * amq_cuckoo_table_buckets(f, t));
    amq_cuckoo_free(f);

    f = new_filter(10, 12, 4, 1);
    for (i = 0;; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        uint64_t size = amq_cuckoo_keys(f);
        status = amq_cuckoo_add(f, &key, sizeof key);
        if (status != AMQ_OK) {
            assert_int_equal(status, AMQ_EFULL);
            assert_int_equal(amq_cuckoo_keys(f), size);
            break;
        }
        assert_true(i < 10000);
    }
    assert_int_equal(amq_cuckoo_tables(f), AMQ_CUCKOO_MAX_TABLES);
    for (size_t t = 0; t < AMQ_CUCKOO_MAX_TABLES; t++)
        assert_int_equal(amq_cuckoo_table_buckets(f, t), amq_cuckoo_table_buckets(f, 0));
    assert_true(amq_cuckoo_full(f));
    assert_all_found(f, seed, i);
    /* Clearing drops the chained tables. */
    amq_cuckoo_clear(f);
    assert_int_equal(amq_cuckoo_tables(f), 1);
    assert_int_equal(amq_cuckoo_keys(f), 0);
    assert_false(amq_cuckoo_full(f));
    add_all(f, seed, 100);
    assert_all_found(f, seed, 100);
    amq_cuckoo_free(f);
}

/* Add keys until an add answers AMQ_EFULL: amq_cuckoo_why_full says
 * NOT_FULL before every add that stores its key and a reason before the
 * one that fails, which it returns. */
static int fill_until_full(amq_cuckoo *f)
{
    for (uint64_t i = 0;; i++) {
        int why = amq_cuckoo_why_full(f);
        amq_test_key key = amq_test_make_key(seed, 0, i);
        int status = amq_cuckoo_add(f, &key, sizeof key);
        assert_int_equal(status == AMQ_EFULL, why != AMQ_CUCKOO_NOT_FULL);
        if (status == AMQ_EFULL) {
            assert_int_equal(amq_cuckoo_why_full(f), why);
            return why;
        }
        assert_int_equal(status, AMQ_OK);
        assert_true(i < 100000);
    }
}

/* amq_cuckoo_why_full tells each reason a full filter has: a fixed size's
 * failed walk, with short fingerprints flagged; the most tables chained.
 * (The third, a next table past AMQ_CUCKOO_MAX_BUCKETS, needs a newest
 * table of 2^28 buckets or more to reach.) A removal that lets the stash
 * back in makes it not full again. */
static void test_why_full(void **state)
{
    (void)state;
    amq_cuckoo *f = new_filter(200, 12, 4, 0);
    assert_int_equal(fill_until_full(f), AMQ_CUCKOO_FULL_NO_FREE_SLOT);
    amq_test_key first = amq_test_make_key(seed, 0, 0);
    assert_int_equal(amq_cuckoo_remove(f, &first, sizeof first), AMQ_OK);
    assert_false(amq_cuckoo_full(f));
    assert_int_equal(amq_cuckoo_why_full(f), AMQ_CUCKOO_NOT_FULL);
    amq_cuckoo_free(f);

    f = new_filter(200, 4, 4, 0);
    assert_int_equal(fill_until_full(f),
                     AMQ_CUCKOO_FULL_NO_FREE_SLOT | AMQ_CUCKOO_FULL_SHORT_FINGERPRINTS);
    amq_cuckoo_free(f);

    f = new_filter(10, 12, 4, 1);
    assert_int_equal(fill_until_full(f), AMQ_CUCKOO_FULL_MOST_TABLES);
    assert_int_equal(amq_cuckoo_tables(f), AMQ_CUCKOO_MAX_TABLES);
    amq_cuckoo_free(f);

    f = new_filter(10, 6, 4, 1);
    assert_int_equal(fill_until_full(f) & 0xff, AMQ_CUCKOO_FULL_MOST_TABLES);
    assert_true(amq_cuckoo_why_full(f) & AMQ_CUCKOO_FULL_SHORT_FINGERPRINTS);
    amq_cuckoo_free(f);
}

/* Copies of one key never chain a table nor make the filter refuse keys:
 * past b / 2 of them in its two buckets they are counted. For every growth and
 * bucket size, the smallest filter takes 10,000 copies of one key in its
 * first table and a few kilobytes, then 1,000 other keys; RedisBloom's
 * defaults (b = 2, growth 1) take "a", six copies of "foo", then "bar" in
 * one table. (Once, copies past 2b doubled a growing filter each time.) */
static void test_copies_of_one_key_do_not_grow_without_end(void **state)
{
    (void)state;
    const uint32_t growths[] = { 0, 1, 2, 4, 16 };
    const uint32_t bucket_sizes[] = { 2, 4, 8 };
    for (size_t g = 0; g < 5; g++)
        for (size_t b = 0; b < 3; b++) {
            amq_cuckoo *f = new_filter(9, 12, bucket_sizes[b], growths[g]);
            const char key[] = "same";
            for (uint64_t added = 1; added <= 10000; added++) {
                assert_int_equal(amq_cuckoo_add(f, key, 4), AMQ_OK);
                assert_int_equal(amq_cuckoo_tables(f), 1);
            }
            assert_int_equal(amq_cuckoo_keys(f), 10000);
            assert_int_equal(amq_cuckoo_count(f, key, 4), 10000);
            if (amq_cuckoo_memory_bytes(f) > 4096)
                fail_msg("growth %u, b = %u: %llu bytes for 10000 copies of one key", growths[g],
                         bucket_sizes[b], (unsigned long long)amq_cuckoo_memory_bytes(f));
            /* Other keys: a fixed-size filter takes its capacity (the b / 2
             * stored copies count), one growing by 1 many more (its 32
             * tables hold about 32 times that), a larger growth all. */
            uint64_t others = growths[g] > 1 ? 1000 : growths[g] ? 100 : 9 - bucket_sizes[b] / 2;
            for (uint64_t i = 0; i < others; i++) {
                amq_test_key other = amq_test_make_key(seed, 0, i);
                int status = amq_cuckoo_add(f, &other, sizeof other);
                if (status != AMQ_OK)
                    fail_msg("growth %u, b = %u: other key %llu of %llu: %s (%llu slots)",
                             growths[g], bucket_sizes[b], (unsigned long long)i,
                             (unsigned long long)others, amq_strerror(status),
                             (unsigned long long)amq_cuckoo_slots(f));
            }
            assert_all_found(f, seed, others);
            assert_int_equal(amq_cuckoo_count(f, key, 4), 10000);
            amq_cuckoo_free(f);
        }
    amq_cuckoo *f = new_filter(1024, 8, 2, 1);
    assert_int_equal(amq_cuckoo_add(f, "a", 1), AMQ_OK);
    for (int i = 0; i < 6; i++)
        assert_int_equal(amq_cuckoo_add(f, "foo", 3), AMQ_OK);
    assert_int_equal(amq_cuckoo_add(f, "bar", 3), AMQ_OK);
    assert_int_equal(amq_cuckoo_add_unique(f, "baz", 3), 1);
    assert_int_equal(amq_cuckoo_tables(f), 1);
    assert_int_equal(amq_cuckoo_count(f, "foo", 3), 6);
    amq_cuckoo_free(f);
}

/* Two keys with one fingerprint and one bucket pair are the same to a
 * table, and a removal may take the other key's copy. In a grown filter
 * that must not lose a key: a removal looks in the newest table first, so
 * the tables are nested (keys sharing a fingerprint and a pair in a later
 * table share them in every earlier one) and the other key can still reach
 * the copy left behind. Every other key removed from filters grown 1, 2 and
 * 4 times over, through many tables: each removal finds its key, and every
 * key kept is found. */
static void test_removal_in_a_grown_filter(void **state)
{
    (void)state;
    enum { N = 40000 };
    const uint32_t growths[] = { 1, 2, 4 };
    for (size_t g = 0; g < 3; g++) {
        /* 6-bit fingerprints: many keys share one, and so many pairs. */
        amq_cuckoo *f = new_filter(g == 0 ? 4000 : 500, 6, 4, growths[g]);
        add_all(f, seed, N);
        assert_true(amq_cuckoo_tables(f) >= 4);
        for (uint64_t i = 0; i < N; i += 2) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            int status = amq_cuckoo_remove(f, &key, sizeof key);
            if (status != AMQ_OK)
                fail_msg("growth %u, %zu tables: removing key %llu: %s", growths[g],
                         amq_cuckoo_tables(f), (unsigned long long)i, amq_strerror(status));
        }
        assert_int_equal(amq_cuckoo_keys(f), N / 2);
        for (uint64_t i = 1; i < N; i += 2) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            if (!amq_cuckoo_contains(f, &key, sizeof key))
                fail_msg("growth %u, %zu tables: key %llu lost to the removals", growths[g],
                         amq_cuckoo_tables(f), (unsigned long long)i);
        }
        /* The rest removed too: nothing is left. */
        for (uint64_t i = 1; i < N; i += 2) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            assert_int_equal(amq_cuckoo_remove(f, &key, sizeof key), AMQ_OK);
        }
        assert_int_equal(amq_cuckoo_keys(f), 0);
        assert_true(amq_cuckoo_expected_fpr(f) == 0);
        amq_cuckoo_free(f);
    }
}

/* ---- the randomized model ----------------------------------------------------------- */

enum { MODEL_MAX_UNIVERSE = 8000, MODEL_MAX_COPIES = 3 };

/* An exact multiset of the keys a filter holds. */
typedef struct model {
    size_t universe;
    amq_test_key keys[MODEL_MAX_UNIVERSE];
    uint64_t hashes[MODEL_MAX_UNIVERSE];
    uint32_t copies[MODEL_MAX_UNIVERSE];
    uint32_t held[MODEL_MAX_UNIVERSE];    /* the keys with copies > 0 */
    uint32_t held_at[MODEL_MAX_UNIVERSE]; /* a held key's index in held */
    size_t held_count;
    uint64_t total; /* the sum of copies */
} model;

static void model_add(model *m, uint32_t i)
{
    if (m->copies[i]++ == 0) {
        m->held_at[i] = (uint32_t)m->held_count;
        m->held[m->held_count++] = i;
    }
    m->total++;
}

static void model_remove(model *m, uint32_t i)
{
    if (--m->copies[i] == 0) {
        uint32_t last = m->held[--m->held_count];
        m->held[m->held_at[i]] = last;
        m->held_at[last] = m->held_at[i];
    }
    m->total--;
}

/* A key is counted at least as often as held. */
static void model_check_count(const model *m, const amq_cuckoo *f, uint32_t i, uint64_t op)
{
    uint64_t count = amq_cuckoo_count_hash(f, m->hashes[i]);
    if (count < m->copies[i])
        fail_msg("operation %llu: key %u held %u times, counted %llu", (unsigned long long)op, i,
                 m->copies[i], (unsigned long long)count);
}

/* A held key is maybe present, with at least as many copies. */
static void model_check_key(const model *m, const amq_cuckoo *f, uint32_t i, uint64_t op)
{
    if (m->copies[i] == 0)
        return;
    if (!amq_cuckoo_contains_hash(f, m->hashes[i]))
        fail_msg("operation %llu: key %u, held %u times, is not found", (unsigned long long)op, i,
                 m->copies[i]);
    model_check_count(m, f, i, op);
}

/* Every held key is counted at least as often as held (so it is found). */
static void model_sweep(const model *m, const amq_cuckoo *f, uint64_t op)
{
    for (size_t j = 0; j < m->held_count; j++)
        model_check_count(m, f, m->held[j], op);
}

/* A refused add (AMQ_EFULL) is allowed only when the stash was occupied and
 * the filter may not grow; it changes neither the size nor the key's count. */
static void model_check_refusal(const amq_cuckoo *f, bool was_full, uint64_t count_before,
                                uint64_t hash, uint64_t op)
{
    if (!was_full || (amq_cuckoo_growth(f) != 0 && amq_cuckoo_tables(f) < AMQ_CUCKOO_MAX_TABLES))
        fail_msg("operation %llu: AMQ_EFULL with the stash %s and growth %u",
                 (unsigned long long)op, was_full ? "occupied" : "empty", amq_cuckoo_growth(f));
    if (amq_cuckoo_count_hash(f, hash) != count_before)
        fail_msg("operation %llu: a refused add changed the key's count", (unsigned long long)op);
}

/* A million random operations on a small filter against the model. Phases
 * alternate between filling (mostly adds, until the filter has been full for
 * 1000 operations - its stash used, adds refused - or a table was chained,
 * or 20,000 operations) and draining (10,000 operations with a few more
 * removes than adds: removals give the stash back to the table). Walks give
 * up after 100 kicks: the stash is used a little earlier, and the
 * sanitizer build spends less time in walks that fail. After every
 * operation the size is the model's total, and the
 * key operated on and one random held key are found with at least their
 * copies; every 4096 operations every held key is. (Every key after every
 * operation would be five billion lookups.) */
static void check_model(uint64_t capacity, uint32_t growth, size_t universe, bool semi_sort)
{
    enum {
        OPERATIONS = 1000000,
        LONGEST_FILL = 20000,
        FULL_OPERATIONS = 1000,
        DRAIN = 10000,
        SWEEP = 4096,
        MAX_KICKS = 100
    };
    static model m;
    memset(&m, 0, sizeof m);
    m.universe = universe;
    amq_cuckoo_params params = { .capacity = capacity,
                                 .fingerprint_bits = 12,
                                 .max_kicks = MAX_KICKS,
                                 .growth = growth,
                                 .semi_sort = semi_sort };
    amq_hasher_xxh3(&params.hasher, seed);
    amq_cuckoo *f = NULL;
    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_OK);
    for (uint32_t i = 0; i < universe; i++) {
        m.keys[i] = amq_test_make_key(seed, 0, i);
        m.hashes[i] = amq_hash64(amq_cuckoo_hasher(f), &m.keys[i], sizeof m.keys[i]);
    }
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ (capacity << 8) ^ growth);
    uint64_t adds = 0, refusals = 0, unique_skips = 0, removes = 0, stash_returns = 0;
    uint64_t full_ops = 0, most_held = 0, phase_start = 0, full_in_phase = 0, phases = 0;
    bool filling = true;
    for (uint64_t op = 0; op < OPERATIONS; op++) {
        if (filling ? full_in_phase == FULL_OPERATIONS || op - phase_start == LONGEST_FILL
                    : op - phase_start == DRAIN) {
            filling = !filling;
            phase_start = op;
            full_in_phase = 0;
            phases++;
        }
        uint64_t dice = amq_test_below(&rng, 100);
        uint32_t i = (uint32_t)amq_test_below(&rng, universe);
        bool by_key = amq_test_below(&rng, 2) == 0;
        const amq_test_key *key = &m.keys[i];
        bool was_full = amq_cuckoo_full(f);
        full_ops += was_full;
        full_in_phase += was_full;
        /* A refusal is allowed only when the filter was full; only then is
         * the key's count before the add needed. */
        uint64_t before = was_full ? amq_cuckoo_count_hash(f, m.hashes[i]) : 0;
        if (dice < (filling ? 45u : 28u) && m.copies[i] < MODEL_MAX_COPIES) {
            int status =
                by_key ? amq_cuckoo_add(f, key, sizeof *key) : amq_cuckoo_add_hash(f, m.hashes[i]);
            if (status == AMQ_OK) {
                if (was_full && amq_cuckoo_growth(f) == 0)
                    fail_msg("operation %llu: an add accepted while the stash was occupied",
                             (unsigned long long)op);
                model_add(&m, i);
                adds++;
            } else if (status == AMQ_EFULL) {
                model_check_refusal(f, was_full, before, m.hashes[i], op);
                refusals++;
            } else {
                fail_msg("operation %llu: add: %s", (unsigned long long)op, amq_strerror(status));
            }
        } else if (dice < (filling ? 60u : 33u)) {
            int status = by_key ? amq_cuckoo_add_unique(f, key, sizeof *key)
                                : amq_cuckoo_add_unique_hash(f, m.hashes[i]);
            if (status == 1) {
                if (m.copies[i] != 0)
                    fail_msg("operation %llu: add_unique added key %u held %u times",
                             (unsigned long long)op, i, m.copies[i]);
                model_add(&m, i);
                adds++;
            } else if (status == 0) {
                if (!amq_cuckoo_contains_hash(f, m.hashes[i]))
                    fail_msg("operation %llu: add_unique skipped key %u, which is not found",
                             (unsigned long long)op, i);
                unique_skips += m.copies[i] == 0;
            } else if (status == AMQ_EFULL) {
                if (m.copies[i] != 0)
                    fail_msg("operation %llu: add_unique of a held key: AMQ_EFULL",
                             (unsigned long long)op);
                model_check_refusal(f, was_full, before, m.hashes[i], op);
                refusals++;
            } else {
                fail_msg("operation %llu: add_unique: %s", (unsigned long long)op,
                         amq_strerror(status));
            }
        } else if (dice < (filling ? 75u : 73u)) {
            if (m.held_count > 0) {
                i = m.held[amq_test_below(&rng, m.held_count)];
                key = &m.keys[i];
                int status = by_key ? amq_cuckoo_remove(f, key, sizeof *key)
                                    : amq_cuckoo_remove_hash(f, m.hashes[i]);
                if (status != AMQ_OK)
                    fail_msg("operation %llu: removing key %u held %u times: %s",
                             (unsigned long long)op, i, m.copies[i], amq_strerror(status));
                model_remove(&m, i);
                removes++;
                stash_returns += was_full && !amq_cuckoo_full(f);
            }
        } else if (dice < 90) {
            bool maybe = by_key ? amq_cuckoo_contains(f, key, sizeof *key)
                                : amq_cuckoo_contains_hash(f, m.hashes[i]);
            if (m.copies[i] && !maybe)
                fail_msg("operation %llu: key %u held %u times is not found",
                         (unsigned long long)op, i, m.copies[i]);
        } else {
            uint64_t count = by_key ? amq_cuckoo_count(f, key, sizeof *key)
                                    : amq_cuckoo_count_hash(f, m.hashes[i]);
            if (count < m.copies[i])
                fail_msg("operation %llu: key %u held %u times, counted %llu",
                         (unsigned long long)op, i, m.copies[i], (unsigned long long)count);
        }
        if (amq_cuckoo_keys(f) != m.total)
            fail_msg("operation %llu: size %llu, the model holds %llu", (unsigned long long)op,
                     (unsigned long long)amq_cuckoo_keys(f), (unsigned long long)m.total);
        model_check_key(&m, f, i, op);
        if (m.held_count)
            model_check_count(&m, f, m.held[amq_test_below(&rng, m.held_count)], op);
        if (op % SWEEP == 0)
            model_sweep(&m, f, op);
        most_held = m.total > most_held ? m.total : most_held;
    }
    model_sweep(&m, f, OPERATIONS);
    print_message(
        "n = %llu, growth %u%s: %llu phases, %llu adds, %llu refused, %llu "
        "false-positive unique skips, %llu removes, %llu operations while full, %llu "
        "stash returns, at most %llu keys, %zu table(s)\n",
        (unsigned long long)capacity, growth, semi_sort ? ", semi-sorted" : "",
        (unsigned long long)phases, (unsigned long long)adds, (unsigned long long)refusals,
        (unsigned long long)unique_skips, (unsigned long long)removes, (unsigned long long)full_ops,
        (unsigned long long)stash_returns, (unsigned long long)most_held, amq_cuckoo_tables(f));
    assert_true(removes > OPERATIONS / 10);
    if (growth == 0) {
        /* The filter ran full and gave its stash back, again and again. */
        assert_true(refusals > 1000 && stash_returns > 100);
        assert_true(most_held > capacity);
    } else {
        assert_int_equal(refusals, 0);
        assert_true(amq_cuckoo_tables(f) >= 3);
    }
    amq_cuckoo_free(f);
}

static void test_model_fixed_size(void **state)
{
    (void)state;
    check_model(5000, 0, 6000, false);
}

static void test_model_growing(void **state)
{
    (void)state;
    check_model(5000, 2, 6000, false);
}

static void test_model_semi_sorted(void **state)
{
    (void)state;
    check_model(5000, 0, 6000, true);
    check_model(5000, 2, 6000, true);
}

/* ---- other forms of the calls ---------------------------------------------------- */

static void test_batch_and_hash_forms_agree(void **state)
{
    (void)state;
    enum { N = 50000, COUNT = 1003 };
    amq_cuckoo *by_key = new_filter(N, 8, 4, 0), *by_hash = new_filter(N, 8, 4, 0);
    const amq_hasher *hasher = amq_cuckoo_hasher(by_key);
    add_all(by_key, seed, N);
    for (uint64_t i = 0; i < N; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_cuckoo_add_hash(by_hash, amq_hash64(hasher, &key, sizeof key)),
                         AMQ_OK);
    }
    static amq_test_key keys[COUNT];
    const void *pointers[COUNT];
    size_t lens[COUNT];
    uint8_t results[COUNT];
    amq_test_batch_keys(keys, pointers, lens, COUNT, seed, 37);
    amq_cuckoo_contains_many(results, by_key, pointers, lens, COUNT);
    uint64_t hashes[COUNT];
    uint8_t hash_results[COUNT];
    for (uint64_t i = 0; i < COUNT; i++)
        hashes[i] = amq_hash64(hasher, &keys[i], sizeof keys[i]);
    amq_cuckoo_contains_many_hash(hash_results, by_hash, hashes, COUNT);
    assert_memory_equal(hash_results, results, COUNT);
    uint64_t maybes = 0;
    for (uint64_t i = 0; i < COUNT; i++) {
        uint64_t hash = hashes[i];
        assert_int_equal(results[i], amq_cuckoo_contains(by_key, &keys[i], sizeof keys[i]));
        assert_int_equal(results[i], amq_cuckoo_contains_hash(by_key, hash));
        assert_int_equal(results[i], amq_cuckoo_contains_hash(by_hash, hash));
        assert_int_equal(amq_cuckoo_count(by_key, &keys[i], sizeof keys[i]),
                         amq_cuckoo_count_hash(by_hash, hash));
        maybes += results[i];
    }
    assert_true(maybes >= COUNT * 2 / 3 - 1); /* every present key at least */
    amq_cuckoo_contains_many(results, by_key, pointers, lens, 0);
    amq_cuckoo_free(by_key);
    amq_cuckoo_free(by_hash);
}

/* f = 12, b = 4 in one table has a query of its own (amq_cuckoo_view's):
 * it answers as the count, which reads any shape, for present and absent
 * hashes, while the filter fills its stash, after removals empty it, after
 * a clear, and once it has grown a second table (the general query). */
static void check_query_as_count(const amq_cuckoo *f, const uint64_t *present, size_t count,
                                 amq_test_rng *rng)
{
    for (size_t i = 0; i < count; i++)
        assert_true(amq_cuckoo_contains_hash(f, present[i]));
    for (size_t i = 0; i < 20000; i++) {
        uint64_t hash = amq_test_next(rng);
        assert_int_equal(amq_cuckoo_contains_hash(f, hash), amq_cuckoo_count_hash(f, hash) > 0);
    }
}

static void test_query_of_the_common_shape(void **state)
{
    (void)state;
    enum { MOST = 8000 };
    static uint64_t hashes[MOST];
    for (uint32_t growth = 0; growth <= 2; growth += 2) {
        amq_test_rng rng;
        amq_test_rng_init(&rng, seed + growth);
        amq_cuckoo *f = new_filter(1000, 12, 4, growth);
        size_t count = 0;
        while (!amq_cuckoo_full(f)) {
            assert_true(count < MOST);
            hashes[count] = amq_test_next(&rng);
            assert_int_equal(amq_cuckoo_add_hash(f, hashes[count]), AMQ_OK);
            count++;
            if (count % 500 == 0)
                check_query_as_count(f, hashes, count, &rng);
        }
        check_query_as_count(f, hashes, count, &rng);
        if (growth) {
            hashes[count] = amq_test_next(&rng);
            assert_int_equal(amq_cuckoo_add_hash(f, hashes[count]), AMQ_OK);
            count++;
            assert_int_equal(amq_cuckoo_tables(f), 2);
            check_query_as_count(f, hashes, count, &rng);
            amq_cuckoo_free(f);
            continue;
        }
        size_t removed = 0;
        while (amq_cuckoo_full(f)) {
            assert_int_equal(amq_cuckoo_remove_hash(f, hashes[removed]), AMQ_OK);
            removed++;
        }
        check_query_as_count(f, hashes + removed, count - removed, &rng);
        amq_cuckoo_clear(f);
        check_query_as_count(f, hashes, 0, &rng);
        amq_cuckoo_free(f);
    }
}

/* The batch calls answer as the one-by-one query in every shape of bucket
 * (f from 4 to 32 bits, b = 2, 4, 8: byte-aligned buckets, buckets across
 * bytes, buckets wider than a word; semi-sorted; grown), in tables small
 * enough to be read straight through and large enough (over 1 MiB) to be
 * prefetched, each filled with distinct keys until a walk ran out of kicks,
 * so that one key is held only by the stash: every key added must be found
 * by the batch too. */
static void test_batch_in_every_shape(void **state)
{
    (void)state;
    enum { ABSENT = 3000 };
    typedef struct shape {
        uint32_t fingerprint_bits, bucket_size, growth;
        bool semi_sort;
        uint64_t capacity;
    } shape;
    static const shape shapes[] = {
        { 4, 4, 0, false, 2000 },   { 7, 4, 0, false, 2000 },    { 8, 4, 0, false, 2000 },
        { 12, 4, 0, false, 2000 },  { 13, 4, 0, false, 2000 },   { 16, 4, 0, false, 2000 },
        { 14, 4, 0, false, 2000 },  { 12, 2, 0, false, 2000 },   { 8, 2, 0, false, 2000 },
        { 32, 2, 0, false, 2000 },  { 8, 8, 0, false, 2000 },    { 7, 8, 0, false, 2000 },
        { 12, 8, 0, false, 2000 },  { 32, 4, 0, false, 2000 },   { 12, 4, 0, true, 2000 },
        { 12, 4, 2, false, 2000 },  { 12, 4, 0, false, 800000 }, { 13, 4, 0, false, 700000 },
        { 12, 4, 0, true, 800000 }, { 12, 8, 0, false, 800000 },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *sh = &shapes[i];
        size_t most_added = 2 * (size_t)sh->capacity + 40000, asked_max = most_added + ABSENT;
        amq_test_key *keys = malloc(asked_max * sizeof *keys);
        const void **pointers = malloc(asked_max * sizeof *pointers);
        size_t *lens = malloc(asked_max * sizeof *lens);
        uint64_t *hashes = malloc(asked_max * sizeof *hashes);
        uint8_t *results = malloc(asked_max), *hash_results = malloc(asked_max);
        assert_true(keys && pointers && lens && hashes && results && hash_results);
        amq_cuckoo_params params = { .capacity = sh->capacity,
                                     .fingerprint_bits = sh->fingerprint_bits,
                                     .bucket_size = sh->bucket_size,
                                     .growth = sh->growth,
                                     .semi_sort = sh->semi_sort,
                                     .max_kicks = 50 };
        amq_hasher_xxh3(&params.hasher, seed + i);
        amq_cuckoo *f = NULL;
        assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_OK);
        /* Distinct keys until the stash is taken (or, growing, until a
         * second table was chained and filled a little). */
        size_t added = 0;
        while (added < most_added &&
               !(sh->growth ? amq_cuckoo_tables(f) > 1 && added > 3 * sh->capacity / 2
                            : amq_cuckoo_full(f))) {
            keys[added] = amq_test_make_key(seed, 0, added);
            assert_int_equal(amq_cuckoo_add(f, &keys[added], sizeof keys[added]), AMQ_OK);
            added++;
        }
        if (sh->growth ? amq_cuckoo_tables(f) == 1 : !amq_cuckoo_full(f))
            fail_msg("f = %u, b = %u, growth %u: not full after %zu keys", sh->fingerprint_bits,
                     sh->bucket_size, sh->growth, added);
        size_t asked = added;
        for (size_t j = 0; j < ABSENT; j++)
            keys[asked++] = amq_test_make_key(seed, 1, j);
        const amq_hasher *hasher = amq_cuckoo_hasher(f);
        for (size_t j = 0; j < asked; j++) {
            pointers[j] = &keys[j];
            lens[j] = sizeof keys[j];
            hashes[j] = amq_hash64(hasher, &keys[j], sizeof keys[j]);
        }
        amq_cuckoo_contains_many(results, f, pointers, lens, asked);
        amq_cuckoo_contains_many_hash(hash_results, f, hashes, asked);
        for (size_t j = 0; j < asked; j++) {
            bool single = amq_cuckoo_contains_hash(f, hashes[j]);
            if (results[j] != single || hash_results[j] != single || (j < added && !single))
                fail_msg("n = %llu, f = %u, b = %u, growth %u%s: key %zu (%s): batch %u, by "
                         "hashes %u, one by one %d",
                         (unsigned long long)sh->capacity, sh->fingerprint_bits, sh->bucket_size,
                         sh->growth, sh->semi_sort ? ", semi-sorted" : "", j,
                         j < added ? "added" : "absent", results[j], hash_results[j], single);
        }
        amq_cuckoo_free(f);
        free(keys);
        free(pointers);
        free(lens);
        free(hashes);
        free(results);
        free(hash_results);
    }
}

/* ---- through the generic handle ------------------------------------------------ */

static uint8_t *read_all(const char *path, size_t *len)
{
    uint8_t *bytes = (uint8_t *)amq_test_read_file(path, len);
    assert_non_null(bytes);
    return bytes;
}

static double detail_number(const amq_info *info, const char *name)
{
    const amq_info_detail *d = amq_test_find_detail(info, name);
    if (d->text[0])
        fail_msg("detail '%s' is the word '%s', not a number", name, d->text);
    return d->value;
}

/* The figures amq_info gives for a cuckoo filter agree with each other. */
static void check_info(const amq_filter *f, uint64_t capacity, uint64_t count,
                       uint32_t fingerprint_bits, uint32_t bucket_size, const char *stash)
{
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    assert_int_equal(info.capacity, capacity);
    assert_int_equal(info.keys, count);
    assert_int_equal(detail_number(&info, "fingerprint_bits"), fingerprint_bits);
    assert_int_equal(detail_number(&info, "bucket_size"), bucket_size);
    double buckets = detail_number(&info, "buckets"), load = detail_number(&info, "load");
    double tables = detail_number(&info, "tables");
    assert_true(tables >= 1);
    if (tables == 1) {
        double stored = (double)count - detail_number(&info, "counted_copies");
        assert_true(fabs(load - stored / (buckets * bucket_size)) < 1e-9);
        double expected = fpr_formula(fingerprint_bits, bucket_size, load);
        if (fabs(info.expected_fpr - expected) > 1e-9 * expected + 1e-15)
            fail_msg("expected_fpr %.9g, the formula at load %.6f: %.9g", info.expected_fpr, load,
                     expected);
        /* The packed table, within a cache line. */
        double packed = ceil(buckets * bucket_size * fingerprint_bits / 8);
        assert_true((double)info.memory_bytes >= packed &&
                    (double)info.memory_bytes <= packed + 64);
    }
    /* Bits per key as every family gives it: the size over the capacity. */
    assert_true(fabs(info.bits_per_key - (double)info.memory_bytes * 8 / (double)capacity) < 1e-9);
    assert_true(detail_number(&info, "max_kicks") >= 1);
    assert_true(detail_number(&info, "growth") >= 0);
    assert_string_equal(amq_test_find_detail(&info, "stash")->text, stash);
}

/* The file of a filter, saved to memory. */
static uint8_t *save_counted(size_t *len, const amq_filter *f)
{
    uint8_t *bytes = NULL;
    assert_int_equal(amq_save_to_memory(&bytes, len, f, NULL), AMQ_OK);
    return bytes;
}

/* Load a file image; AMQ_OK or its failure. */
static int load_counted(amq_filter **out, const uint8_t *bytes, size_t len, amq_diag *diag)
{
    return amq_load_from_memory(out, bytes, len, 0, diag);
}

/* Counted copies are saved (a block of version 2, entries after the
 * slots) and come back exactly: every count, every answer, the same bytes
 * saved again; a filter without any saves the block of version 1. Damaged
 * entries are refused, each naming what is wrong. */
static void test_counted_copies_saved(void **state)
{
    (void)state;
    amq_cuckoo *f = new_filter(200, 8, 2, 2);
    amq_filter *handle = NULL;
    assert_int_equal(amq_cuckoo_wrap(&handle, f, NULL), AMQ_OK);
    /* Hot keys in the first table, then enough keys to chain two more,
     * then hot keys in the newest. */
    for (uint64_t k = 0; k < 5; k++)
        for (uint64_t c = 0; c < 10 + k; c++) {
            amq_test_key key = amq_test_make_key(seed, 2, k);
            assert_int_equal(amq_cuckoo_add(f, &key, sizeof key), AMQ_OK);
        }
    add_all(f, seed, 1000);
    assert_true(amq_cuckoo_tables(f) >= 3);
    for (uint64_t k = 5; k < 8; k++)
        for (uint64_t c = 0; c < 7; c++) {
            amq_test_key key = amq_test_make_key(seed, 2, k);
            assert_int_equal(amq_cuckoo_add(f, &key, sizeof key), AMQ_OK);
        }
    assert_true(amq_cuckoo_counted_copies(f) > 0);
    uint64_t counts[8];
    for (uint64_t k = 0; k < 8; k++) {
        amq_test_key key = amq_test_make_key(seed, 2, k);
        counts[k] = amq_cuckoo_count(f, &key, sizeof key);
        assert_true(counts[k] >= (k < 5 ? 10 + k : 7));
    }
    size_t len = 0;
    uint8_t *bytes = save_counted(&len, handle);
    uint32_t params_len = amq__load_u32le(bytes + 40);
    uint64_t payload_len = amq__load_u64le(bytes + 56);
    size_t payload = (64 + params_len + 63) / 64 * 64;
    amq_filter *g = NULL;
    amq_diag diag = { .message = "" };
    if (load_counted(&g, bytes, len, &diag) != AMQ_OK)
        fail_msg("load: %s", diag.message);
    amq_cuckoo *loaded = amq_cuckoo_unwrap(g);
    assert_int_equal(amq_cuckoo_keys(loaded), amq_cuckoo_keys(f));
    assert_int_equal(amq_cuckoo_counted_copies(loaded), amq_cuckoo_counted_copies(f));
    for (uint64_t k = 0; k < 8; k++) {
        amq_test_key key = amq_test_make_key(seed, 2, k);
        assert_int_equal(amq_cuckoo_count(loaded, &key, sizeof key), counts[k]);
    }
    assert_all_found(loaded, seed, 1000);
    size_t again_len = 0;
    uint8_t *again = save_counted(&again_len, g);
    assert_int_equal(again_len, len);
    assert_memory_equal(again, bytes, len);
    free(again);
    amq_free(g);

    /* Damage each field of the first entry, and the block's version. */
    uint64_t entries = 0;
    for (size_t t = 0; t < amq_cuckoo_tables(f); t++)
        entries += f->tables[t].overflow.used;
    size_t first = payload + (size_t)payload_len - (size_t)entries * 16;
    size_t version_at = 64 + 4 * 5 + 8 * 3 + 4 + amq_cuckoo_tables(f) * 28;
    assert_int_equal(amq__load_u32le(bytes + version_at), 2);
    struct {
        size_t at;
        int width;
        uint64_t value;
        const char *says;
    } cases[] = {
        { version_at, 4, 3, "block version" },
        { first, 4, 1u << 30, "out of range or order" },
        { first + 4, 4, 0, "out of range or order" },
        { first + 4, 4, 256, "out of range or order" },
        { first + 8, 8, 0, "out of range or order" },
        { first + 8, 8, UINT64_MAX, "2^64" },
        { first + 4, 4, 77, "does not store" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *copy = malloc(len);
        assert_non_null(copy);
        memcpy(copy, bytes, len);
        if (cases[i].width == 4)
            amq__store_u32le(copy + cases[i].at, (uint32_t)cases[i].value);
        else
            amq__store_u64le(copy + cases[i].at, cases[i].value);
        amq__store_u64le(copy + len - 8, amq__xxh3_64(copy, len - 8, 0));
        amq_filter *bad = NULL;
        int status = load_counted(&bad, copy, len, &diag);
        if (status != AMQ_ECORRUPT || !strstr(diag.message, cases[i].says))
            fail_msg("case %zu: %d \"%s\", expected \"%s\"", i, status, diag.message,
                     cases[i].says);
        assert_null(bad);
        free(copy);
    }
    free(bytes);

    /* Every copy of the hot keys removed (as often as each was added:
     * count may include other keys' equal fingerprints), the other keys
     * still there; then those too (some were counted, sharing a pair and a
     * fingerprint): the file is version 1's again. */
    for (uint64_t k = 0; k < 8; k++) {
        amq_test_key key = amq_test_make_key(seed, 2, k);
        for (uint64_t c = 0; c < (k < 5 ? 10 + k : 7); c++)
            assert_int_equal(amq_cuckoo_remove(f, &key, sizeof key), AMQ_OK);
    }
    assert_all_found(f, seed, 1000);
    for (uint64_t i = 0; i < 1000; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_cuckoo_remove(f, &key, sizeof key), AMQ_OK);
    }
    assert_int_equal(amq_cuckoo_counted_copies(f), 0);
    assert_int_equal(amq_cuckoo_keys(f), 0);
    bytes = save_counted(&len, handle);
    assert_int_equal(amq__load_u32le(bytes + 40), params_len - 4 - 8 * amq_cuckoo_tables(f));
    assert_int_equal(amq__load_u32le(bytes + 8), 1);
    free(bytes);
    amq_free(handle);
}

/* The overflow map keeps its entries in increasing rank, each at or past
 * its home slot with no free slot between (cuckoo_overflow.c, R1 and R2);
 * check both, and return the used entries in order into out (room for
 * o->used). */
static void check_overflow_map(const amq__cuckoo_overflow *o, amq__cuckoo_overflow_entry *out)
{
    uint64_t used = 0, copies = 0, last = 0;
    for (uint64_t i = 0; i < o->length; i++) {
        const amq__cuckoo_overflow_entry *e = &o->entries[i];
        if (!e->copies)
            continue;
        uint64_t rank = amq__cuckoo_overflow_rank(e->bucket, e->fingerprint);
        if (used > 0 && rank <= last)
            fail_msg("overflow slot %llu is out of rank order", (unsigned long long)i);
        uint64_t home = rank >> o->shift;
        if (home > i)
            fail_msg("overflow slot %llu holds an entry of home %llu", (unsigned long long)i,
                     (unsigned long long)home);
        for (uint64_t j = home; j < i; j++)
            if (!o->entries[j].copies)
                fail_msg("overflow slot %llu is free inside a run", (unsigned long long)j);
        out[used++] = *e;
        copies += e->copies;
        last = rank;
    }
    assert_int_equal(used, o->used);
    assert_int_equal(copies, o->copies);
    assert_true(o->used * 4 <= o->capacity * 3);
}

/* The overflow map's order is its entries' alone: the same entries added
 * in another order, or after others were added and taken (a larger map),
 * lie in the same order, which is what a file holds; counts and removals
 * keep it. */
static void test_overflow_map_order(void **state)
{
    (void)state;
    enum { N = 3000, EXTRA = 5000 };
    static amq__cuckoo_overflow_entry keys[N + EXTRA], one[N + EXTRA], other[N + EXTRA];
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0x0e);
    for (size_t i = 0; i < N + EXTRA; i++) {
        /* Distinct pairs: a counter in the fingerprint's high bits. */
        keys[i].bucket = (uint32_t)amq_test_below(&rng, 1u << 20);
        keys[i].fingerprint = (uint32_t)(i + 1) << 8 | (uint32_t)amq_test_below(&rng, 256);
        keys[i].copies = 1 + amq_test_below(&rng, 5);
    }
    amq__cuckoo_overflow a = { 0 }, b = { 0 };
    for (size_t i = 0; i < N; i++)
        assert_int_equal(
            amq__cuckoo_overflow_add(&a, keys[i].bucket, keys[i].fingerprint, keys[i].copies),
            AMQ_OK);
    /* b: the extra entries first, then the same ones backwards, one copy
     * at a time, then the extra ones taken away again. */
    for (size_t i = N; i < N + EXTRA; i++)
        assert_int_equal(amq__cuckoo_overflow_add(&b, keys[i].bucket, keys[i].fingerprint, 1),
                         AMQ_OK);
    for (size_t i = N; i-- > 0;)
        for (uint64_t c = 0; c < keys[i].copies; c++)
            assert_int_equal(amq__cuckoo_overflow_add(&b, keys[i].bucket, keys[i].fingerprint, 1),
                             AMQ_OK);
    check_overflow_map(&b, other);
    for (size_t i = N; i < N + EXTRA; i++)
        assert_true(amq__cuckoo_overflow_take(&b, keys[i].bucket, keys[i].fingerprint));
    assert_true(b.capacity > a.capacity);
    check_overflow_map(&a, one);
    check_overflow_map(&b, other);
    assert_int_equal(a.used, N);
    assert_memory_equal(one, other, N * sizeof *one);
    for (size_t i = 0; i < N + EXTRA; i++)
        assert_int_equal(amq__cuckoo_overflow_copies(&a, keys[i].bucket, keys[i].fingerprint),
                         i < N ? keys[i].copies : 0);

    /* Every other entry taken to nothing: the rest keep their order. */
    for (size_t i = 0; i < N; i += 2)
        for (uint64_t c = 0; c < keys[i].copies; c++)
            assert_true(amq__cuckoo_overflow_take(&a, keys[i].bucket, keys[i].fingerprint));
    assert_false(amq__cuckoo_overflow_take(&a, keys[0].bucket, keys[0].fingerprint));
    check_overflow_map(&a, one);
    assert_int_equal(a.used, N / 2);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(amq__cuckoo_overflow_copies(&a, keys[i].bucket, keys[i].fingerprint),
                         i % 2 ? keys[i].copies : 0);
    amq__cuckoo_overflow_free(&a);
    amq__cuckoo_overflow_free(&b);

    /* Entries whose ranks all lie in the top eighth: their run goes on
     * past the last home slot, growing the slots beyond it. */
    size_t high = 0;
    for (uint32_t x = 1; high < 400; x++) {
        uint32_t bucket = x >> 4, fingerprint = x;
        if (amq__cuckoo_overflow_rank(bucket, fingerprint) >> 61 == 7)
            keys[high++] = (amq__cuckoo_overflow_entry){ 1, bucket, fingerprint };
    }
    amq__cuckoo_overflow c = { 0 };
    for (size_t i = 0; i < high; i++)
        assert_int_equal(amq__cuckoo_overflow_add(&c, keys[i].bucket, keys[i].fingerprint, 1),
                         AMQ_OK);
    assert_true(c.length > c.capacity + 8);
    check_overflow_map(&c, one);
    for (size_t i = 0; i < high; i += 3)
        assert_true(amq__cuckoo_overflow_take(&c, keys[i].bucket, keys[i].fingerprint));
    check_overflow_map(&c, one);
    for (size_t i = 0; i < high; i++)
        assert_int_equal(amq__cuckoo_overflow_copies(&c, keys[i].bucket, keys[i].fingerprint),
                         i % 3 ? 1 : 0);
    amq__cuckoo_overflow_free(&c);
}

static void test_generic_round_trip(void **state)
{
    char path[AMQ_TEST_PATH_MAX], again[AMQ_TEST_PATH_MAX], spec[200];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(again, state, "again.amq");
    enum { N = 20000 };
    snprintf(spec, sizeof spec,
             "cuckoo n=%d fingerprint-bits=12 bucket-size=4 max-kicks=500 growth=0 seed=%llu", N,
             (unsigned long long)seed);
    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
    assert_true(amq_test_add_then_remove_quarter(f, seed, N) > 950);
    check_info(f, N, N * 3 / 4, 12, 4, "empty");
    amq_info info;
    amq_info_get(&info, f);
    assert_true(info.target_fpr > 0 && info.target_fpr < 1);
    assert_int_equal(detail_number(&info, "max_kicks"), 500);
    assert_int_equal(detail_number(&info, "growth"), 0);
    assert_int_equal(detail_number(&info, "tables"), 1);
    assert_int_equal(info.hasher.kind, AMQ_HASH_XXH3);
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);

    for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
        amq_filter *g = NULL;
        amq_diag diag = { .message = "" };
        if (amq_load(&g, path, flags, &diag) != AMQ_OK)
            fail_msg("load: %s", diag.message);
        amq_info a, b;
        assert_int_equal(amq_info_get(&a, f), AMQ_OK);
        assert_int_equal(amq_info_get(&b, g), AMQ_OK);
        assert_string_equal(b.family, "cuckoo");
        assert_int_equal(b.capacity, a.capacity);
        assert_int_equal(b.keys, a.keys);
        assert_int_equal(b.memory_bytes, a.memory_bytes);
        assert_true(b.expected_fpr == a.expected_fpr);
        assert_true(b.target_fpr == a.target_fpr);
        assert_memory_equal(&b.hasher, &a.hasher, sizeof a.hasher);
        assert_int_equal(b.detail_count, a.detail_count);
        assert_memory_equal(b.details, a.details, a.detail_count * sizeof a.details[0]);
        assert_true(b.file_checksum != 0);
        amq_test_expect_same_answers(f, g, seed, 2 * N);
        /* Saved again, the file is the same bytes. */
        assert_int_equal(amq_save(g, again, NULL), AMQ_OK);
        assert_true(amq_test_same_file(path, again));
        /* The loaded filter keeps taking and giving back keys. */
        for (uint64_t i = 0; i < N; i += 4) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            assert_int_equal(amq_add(g, &key, sizeof key), AMQ_OK);
        }
        for (uint64_t i = 1; i < N; i += 4) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            assert_int_equal(amq_remove(g, &key, sizeof key), AMQ_OK);
        }
        for (uint64_t i = 0; i < N; i++) {
            amq_test_key key = amq_test_make_key(seed, 0, i);
            if (i % 4 != 1 && amq_contains(g, &key, sizeof key) != 1)
                fail_msg("loaded filter: key %llu lost", (unsigned long long)i);
        }
        check_info(g, N, N * 3 / 4, 12, 4, "empty");
        amq_free(g);
    }
    amq_free(f);

    /* Defaults through the spec. */
    assert_int_equal(amq_new(&f, "cuckoo n=1000", NULL), AMQ_OK);
    check_info(f, 1000, 0, 10, 4, "empty");
    amq_info_get(&info, f);
    assert_true(info.target_fpr == 0.01);
    assert_int_equal(detail_number(&info, "max_kicks"), AMQ_CUCKOO_DEFAULT_MAX_KICKS);
    assert_int_equal(detail_number(&info, "growth"), 0);
    amq_free(f);
    assert_int_equal(amq_new(&f, "cuckoo n=1000 p=0.001 bucket-size=2", NULL), AMQ_OK);
    check_info(f, 1000, 0, bits_for_fpr(0.001, 2), 2, "empty");
    amq_info_get(&info, f);
    assert_true(info.target_fpr == 0.001);
    amq_free(f);
}

/* A full filter saved and loaded is still full, refuses adds without
 * changing a byte of its file, and takes keys again after a removal; a
 * grown one keeps its tables. */
static void test_generic_full_and_grown_filters(void **state)
{
    char path[AMQ_TEST_PATH_MAX], again[AMQ_TEST_PATH_MAX], spec[200];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(again, state, "again.amq");
    enum { N = 5000 };
    snprintf(spec, sizeof spec, "cuckoo n=%d fingerprint-bits=12 seed=%llu", N,
             (unsigned long long)seed);
    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
    uint64_t added = 0;
    amq_info info;
    for (;; added++) {
        amq_info_get(&info, f);
        if (strcmp(amq_test_find_detail(&info, "stash")->text, "occupied") == 0)
            break;
        amq_test_key key = amq_test_make_key(seed, 0, added);
        assert_int_equal(amq_add(f, &key, sizeof key), AMQ_OK);
    }
    assert_true(added >= N);
    check_info(f, N, added, 12, 4, "occupied");
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
    for (uint64_t i = 0; i < 100; i++) {
        amq_test_key key = amq_test_make_key(seed, 1, i);
        assert_int_equal(amq_add(f, &key, sizeof key), AMQ_EFULL);
    }
    assert_int_equal(amq_save(f, again, NULL), AMQ_OK);
    if (!amq_test_same_file(path, again))
        fail_msg("refused adds changed the saved filter");
    amq_free(f);

    assert_int_equal(amq_load(&f, path, 0, NULL), AMQ_OK);
    check_info(f, N, added, 12, 4, "occupied");
    amq_test_key key = amq_test_make_key(seed, 1, 0);
    assert_int_equal(amq_add(f, &key, sizeof key), AMQ_EFULL);
    for (uint64_t i = 0; i < added; i++) {
        amq_test_key stored = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_contains(f, &stored, sizeof stored), 1);
    }
    uint64_t removed = 0;
    for (;;) {
        amq_info_get(&info, f);
        if (strcmp(amq_test_find_detail(&info, "stash")->text, "empty") == 0)
            break;
        assert_true(removed < 20);
        amq_test_key stored = amq_test_make_key(seed, 0, removed++);
        assert_int_equal(amq_remove(f, &stored, sizeof stored), AMQ_OK);
    }
    /* The table is as full as before the removals: the new key's own walk
     * may end in the stash again (seed 77 does), which is no loss. */
    assert_int_equal(amq_add(f, &key, sizeof key), AMQ_OK);
    assert_int_equal(amq_contains(f, &key, sizeof key), 1);
    amq_info_get(&info, f);
    check_info(f, N, added - removed + 1, 12, 4, amq_test_find_detail(&info, "stash")->text);
    amq_free(f);

    /* A grown filter: its tables, answers and growth survive the file. */
    snprintf(spec, sizeof spec, "cuckoo n=1000 growth=2 seed=%llu", (unsigned long long)seed);
    assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
    for (uint64_t i = 0; i < 10000; i++) {
        amq_test_key stored = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_add(f, &stored, sizeof stored), AMQ_OK);
    }
    amq_info_get(&info, f);
    double tables = detail_number(&info, "tables");
    assert_true(tables >= 3);
    assert_int_equal(detail_number(&info, "growth"), 2);
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
    amq_filter *g = NULL;
    assert_int_equal(amq_load(&g, path, 0, NULL), AMQ_OK);
    amq_info loaded;
    amq_info_get(&loaded, g);
    assert_true(detail_number(&loaded, "tables") == tables);
    assert_int_equal(loaded.keys, 10000);
    assert_true(loaded.expected_fpr == info.expected_fpr);
    amq_test_expect_same_answers(f, g, seed, 40000);
    /* It grows on, and gives the new keys back last in, first out: each
     * removal then finds its key in the newest table holding keys, so the
     * filter answers as before. */
    for (uint64_t i = 10000; i < 40000; i++) {
        amq_test_key stored = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_add(g, &stored, sizeof stored), AMQ_OK);
    }
    amq_info_get(&loaded, g);
    assert_true(detail_number(&loaded, "tables") > tables);
    for (uint64_t i = 40000; i-- > 10000;) {
        amq_test_key stored = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_remove(g, &stored, sizeof stored), AMQ_OK);
    }
    amq_info_get(&loaded, g);
    assert_int_equal(loaded.keys, 10000);
    amq_test_expect_same_answers(f, g, seed, 40000);
    amq_free(f);
    amq_free(g);
}

static void test_generic_spec_errors(void **state)
{
    (void)state;
    const amq_test_spec_case cases[] = {
        { "cuckoo", AMQ_EINVAL, "capacity" },
        { "cuckoo n=0", AMQ_EINVAL, "capacity" },
        { "cuckoo n=1000 bucket-size=3", AMQ_EINVAL, "bucket-size" },
        { "cuckoo n=1000 bucket-size=16", AMQ_EINVAL, "bucket-size" },
        { "cuckoo n=1000 fingerprint-bits=3", AMQ_EINVAL, "fingerprint-bits" },
        { "cuckoo n=1000 fingerprint-bits=33", AMQ_EINVAL, "fingerprint-bits" },
        { "cuckoo n=1000 growth=17", AMQ_EINVAL, "growth" },
        { "cuckoo n=1000 growth=3", AMQ_EINVAL, "growth" },
        { "cuckoo n=1000 max-kicks=0", AMQ_EINVAL, "max-kicks" },
        { "cuckoo n=1000 p=1", AMQ_EINVAL, "fpr" },
        { "cuckoo n=1000 semi-sort bucket-size=2", AMQ_EINVAL, "semi-sort" },
        { "cuckoo n=1000 semi-sort fingerprint-bits=17", AMQ_EINVAL, "semi-sort" },
        { "cuckoo n=1000 semi-sort fingerprint-bits=4", AMQ_EINVAL, "semi-sort" },
        { "cuckoo n=1000 semi-sort p=1e-6", AMQ_EINVAL, "semi-sort" },
        { "cuckoo n=1000 semi-sort=1", AMQ_EINVAL, "semi-sort" },
        { "cuckoo n=1000 layout=split", AMQ_EINVAL, "unknown option 'layout' for cuckoo" },
        { "cuckoo n=1000 counter-bits=4", AMQ_EINVAL, "counter-bits" },
        { "cuckoo n=1000 k=3", AMQ_EINVAL, "unknown option 'k' for cuckoo" },
        { "cuckoo n=1e15", AMQ_ERANGE, "" },
        { "bloom n=1000 fingerprint-bits=12", AMQ_EINVAL,
          "unknown option 'fingerprint-bits' for bloom" },
    };
    amq_test_expect_spec_errors(cases, sizeof cases / sizeof cases[0]);
    const char *const good[] = {
        "cuckoo capacity=1000 fingerprint-bits=16 bucket-size=8 max-kicks=1 growth=16",
        "cuckoo n=1000 fpr=0.001 bucket-size=8 max-kicks=1000000 growth=0",
        "cuckoo n=1 fingerprint-bits=4 bucket-size=2",
        "cuckoo n=1000 fingerprint-bits=32",
        "cuckoo n=1000 hash=siphash key=000102030405060708090a0b0c0d0e0f",
        "cuckoo n=1000 hash=md5",
        "cuckoo n=1000 semi-sort",
        "cuckoo n=1000 semi-sort bucket-size=4 fingerprint-bits=16",
        "cuckoo n=1000 semi-sort p=0.4",
    };
    amq_test_expect_specs_accepted(good, sizeof good / sizeof good[0], true);
    /* amq_build sizes a cuckoo filter by its keys when no n is given. */
    assert_int_equal(amq_test_expect_sized_by_keys("cuckoo p=0.01"), 3);
}

/* p and f both given: f must meet p (2b / (2^f - 1) <= p), and p stays the
 * rate asked for. */
static void test_fpr_and_fingerprint_bits_together(void **state)
{
    (void)state;
    /* 8 / 4095 = 0.00195. */
    amq_cuckoo *f = (amq_cuckoo *)&f;
    amq_cuckoo_params params = { .capacity = 1000, .fpr = 0.001, .fingerprint_bits = 12 };
    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_EINVAL);
    assert_null(f);
    params.fpr = 0.002;
    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_OK);
    assert_int_equal(amq_cuckoo_fingerprint_bits(f), 12);
    amq_cuckoo_free(f);
    params.bucket_size = 8; /* 16 / 4095 = 0.0039 */
    assert_int_equal(amq_cuckoo_new(&f, &params, NULL), AMQ_EINVAL);
    assert_null(f);

    amq_filter *g = NULL;
    amq_diag diag = { .message = "" };
    assert_int_equal(amq_new(&g,
                             "cuckoo n=1000000 p=0.001 fingerprint-bits=12 bucket-size=4 "
                             "max-kicks=500 growth=0 seed=7",
                             &diag),
                     AMQ_EINVAL);
    assert_null(g);
    assert_non_null(strstr(diag.message, "fingerprint bits"));
    const char *spec = "cuckoo n=1000000 p=0.002 fingerprint-bits=12 bucket-size=4 max-kicks=500 "
                       "growth=0 seed=7";
    if (amq_new(&g, spec, &diag) != AMQ_OK)
        fail_msg("'%s' refused: %s", spec, diag.message);
    amq_info info;
    amq_info_get(&info, g);
    assert_int_equal(detail_number(&info, "fingerprint_bits"), 12);
    assert_true(info.target_fpr == 0.002);
    amq_free(g);
}

/* ---- damaged files -------------------------------------------------------------- */

/* The files these tests damage: 150 keys into a filter made for 10 (b = 4,
 * f = 7) that grows: three tables, the first two with their stash
 * occupied (a table is only chained once its stash is taken). */
#define GROWN_SPEC "cuckoo n=10 fingerprint-bits=7 growth=2 seed=3"
enum { GROWN_KEYS = 150 };

/* Save a filter of spec holding keys 0 .. count-1; its bytes, malloc'd. */
static uint8_t *saved_file(const char *path, const char *spec, uint64_t count, size_t *len)
{
    amq_filter *f = NULL;
    assert_int_equal(amq_new(&f, spec, NULL), AMQ_OK);
    for (uint64_t i = 0; i < count; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_add(f, &key, sizeof key), AMQ_OK);
    }
    assert_int_equal(amq_save(f, path, NULL), AMQ_OK);
    amq_free(f);
    return read_all(path, len);
}

/* Load what is at path: AMQ_OK or AMQ_ECORRUPT only. What loads must hold
 * keys 0 .. count-1, answer, take and give back keys, and save. */
static int load_damaged(const char *path, const char *scratch, uint64_t count, amq_diag *diag)
{
    amq_filter *f = NULL;
    memset(diag, 0, sizeof *diag);
    int status = amq_load(&f, path, 0, diag);
    if (status != AMQ_OK) {
        assert_null(f);
        if (status != AMQ_ECORRUPT)
            fail_msg("status %d '%s', expected AMQ_OK or AMQ_ECORRUPT", status, diag->message);
        return status;
    }
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    for (uint64_t i = 0; i < count; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        if (amq_contains(f, &key, sizeof key) != 1)
            fail_msg("the file loaded, but key %llu of %llu is not found", (unsigned long long)i,
                     (unsigned long long)count);
    }
    for (uint64_t i = 0; i < 20; i++) {
        amq_test_key key = amq_test_make_key(seed, 2, i);
        int added = amq_add(f, &key, sizeof key);
        assert_true(added == AMQ_OK || added == AMQ_EFULL);
        if (added == AMQ_OK)
            assert_int_equal(amq_remove(f, &key, sizeof key), AMQ_OK);
    }
    assert_int_equal(amq_save(f, scratch, NULL), AMQ_OK);
    amq_free(f);
    return status;
}

/* Every single-byte change and every truncation of a saved file is
 * refused. */
static void test_flipped_and_truncated_files(void **state)
{
    char path[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    size_t len = 0;
    uint8_t *good = saved_file(path, GROWN_SPEC, GROWN_KEYS, &len);
    amq_test_expect_damage_refused(path, good, len);
    free(good);
}

/* A cuckoo parameter block, field by field, as src/cuckoo/cuckoo.c saves it: f,
 * b, layout, max kicks, growth (u32 each), capacity (u64), target fpr (f64), the
 * walk's random state (u64), the table count (u32); then per table its
 * buckets, fingerprints stored, stash bucket (u64 each) and stash
 * fingerprint (u32). */
typedef struct cuckoo_fields {
    uint32_t fingerprint_bits, bucket_size, layout, max_kicks, growth;
    uint64_t capacity;
    double target_fpr;
    uint64_t random_state;
    uint32_t tables;  /* the count the block declares */
    uint32_t records; /* the per-table fields it holds */
    struct {
        uint64_t buckets, stored, stash_bucket;
        uint32_t stash_fingerprint;
    } table[AMQ_CUCKOO_MAX_TABLES];
    int extra_bytes; /* appended (> 0) or dropped (< 0) after the fields */
} cuckoo_fields;

static void read_fields(cuckoo_fields *out, const amq__container *c)
{
    memset(out, 0, sizeof *out);
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    assert_int_equal(amq__params_get_u32(&r, &out->fingerprint_bits), AMQ_OK);
    assert_int_equal(amq__params_get_u32(&r, &out->bucket_size), AMQ_OK);
    assert_int_equal(amq__params_get_u32(&r, &out->layout), AMQ_OK);
    assert_int_equal(amq__params_get_u32(&r, &out->max_kicks), AMQ_OK);
    assert_int_equal(amq__params_get_u32(&r, &out->growth), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &out->capacity), AMQ_OK);
    assert_int_equal(amq__params_get_f64(&r, &out->target_fpr), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &out->random_state), AMQ_OK);
    assert_int_equal(amq__params_get_u32(&r, &out->tables), AMQ_OK);
    assert_true(out->tables <= AMQ_CUCKOO_MAX_TABLES);
    out->records = out->tables;
    for (uint32_t i = 0; i < out->tables; i++) {
        assert_int_equal(amq__params_get_u64(&r, &out->table[i].buckets), AMQ_OK);
        assert_int_equal(amq__params_get_u64(&r, &out->table[i].stored), AMQ_OK);
        assert_int_equal(amq__params_get_u64(&r, &out->table[i].stash_bucket), AMQ_OK);
        assert_int_equal(amq__params_get_u32(&r, &out->table[i].stash_fingerprint), AMQ_OK);
    }
    assert_int_equal(amq__params_end(&r), AMQ_OK);
}

static void write_fields(amq__params_writer *w, const cuckoo_fields *in)
{
    amq__params_init(w);
    amq__params_put_u32(w, in->fingerprint_bits);
    amq__params_put_u32(w, in->bucket_size);
    amq__params_put_u32(w, in->layout);
    amq__params_put_u32(w, in->max_kicks);
    amq__params_put_u32(w, in->growth);
    amq__params_put_u64(w, in->capacity);
    amq__params_put_f64(w, in->target_fpr);
    amq__params_put_u64(w, in->random_state);
    amq__params_put_u32(w, in->tables);
    for (uint32_t i = 0; i < in->records; i++) {
        amq__params_put_u64(w, in->table[i].buckets);
        amq__params_put_u64(w, in->table[i].stored);
        amq__params_put_u64(w, in->table[i].stash_bucket);
        amq__params_put_u32(w, in->table[i].stash_fingerprint);
    }
    for (int i = 0; i < in->extra_bytes; i++)
        amq__params_put_u8(w, 0);
    if (in->extra_bytes < 0)
        w->len -= (uint32_t)-in->extra_bytes;
    assert_false(w->overflow);
}

/* Parameter blocks and payloads that do not hold together, each written
 * with a correct checksum so that only the cuckoo loader can catch them:
 * AMQ_ECORRUPT naming what is wrong, never a crash. Then every byte of the
 * block changed in five ways: refused, or (where the byte does not matter to
 * the answers: the capacity, the kicks, the walk's state) loaded holding
 * every key. */
static void test_damaged_parameters(void **state)
{
    char path[AMQ_TEST_PATH_MAX], crafted[AMQ_TEST_PATH_MAX], scratch[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(crafted, state, "crafted.amq");
    amq_test_scratch_path(scratch, state, "scratch.amq");
    size_t len = 0;
    uint8_t *file = saved_file(path, GROWN_SPEC, GROWN_KEYS, &len);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, file, len, NULL), AMQ_OK);
    assert_int_equal(c.family, AMQ__FAMILY_CUCKOO);
    cuckoo_fields good;
    read_fields(&good, &c);
    amq__params_writer w;
    write_fields(&w, &good);
    assert_int_equal(w.len, c.params_len);
    assert_memory_equal(w.bytes, c.params, c.params_len);
    assert_int_equal(good.fingerprint_bits, 7);
    assert_int_equal(good.bucket_size, 4);
    assert_int_equal(good.growth, 2);
    assert_int_equal(good.tables, 3);
    uint64_t table_bytes[3], stored = 0;
    for (uint32_t i = 0; i < 3; i++) {
        table_bytes[i] = (good.table[i].buckets * 4 * 7 + 7) / 8;
        stored += good.table[i].stored;
    }
    assert_int_equal(table_bytes[0] + table_bytes[1] + table_bytes[2], c.payload_len);
    assert_int_equal(stored, GROWN_KEYS);
    assert_true(good.table[0].stash_fingerprint != 0 && good.table[1].stash_fingerprint != 0);
    assert_int_equal(good.table[2].stash_fingerprint, 0);
    amq_diag diag;
    /* Rewritten as it was, it loads. */
    amq_test_write_container(crafted, c.family, &c.hasher, w.bytes, w.len, c.payload,
                             c.payload_len);
    if (load_damaged(crafted, scratch, GROWN_KEYS, &diag) != AMQ_OK)
        fail_msg("the re-encoded file is refused: %s", diag.message);
    assert_true(amq_test_same_file(crafted, path));

    struct {
        const char *what;
        cuckoo_fields f;
        const char *message;
    } cases[] = {
        { "3-bit fingerprints", good, "fingerprint bits" },
        { "33-bit fingerprints", good, "fingerprint bits" },
        { "8-bit fingerprints in a 7-bit payload", good, "" },
        { "bucket size 3", good, "bucket size" },
        { "bucket size 8 in a size-4 payload", good, "" },
        { "layout 2", good, "layout" },
        { "semi-sorted layout for a plain payload", good, "" },
        { "semi-sorted layout with 3-bit fingerprints", good, "fingerprint bits" },
        { "max kicks 0", good, "max kicks" },
        { "growth 17", good, "growth" },
        { "growth 4 for tables of growth 2", good, "buckets" },
        { "growth 3", good, "growth" },
        { "growth 0 with three tables", good, "table count" },
        { "capacity 0", good, "capacity" },
        { "target fpr 0", good, "fpr" },
        { "target fpr 1", good, "fpr" },
        { "target fpr NaN", good, "fpr" },
        { "no tables", good, "table count" },
        { "33 tables", good, "table count" },
        { "a fourth table missing from the block", good, "parameters end" },
        { "two tables and three tables' fields", good, "trailing" },
        { "a table of 0 buckets", good, "buckets" },
        { "the last table a bucket larger", good, "buckets" },
        { "the last table a bucket smaller", good, "buckets" },
        { "one fingerprint more stored", good, "fingerprints" },
        { "one fingerprint fewer stored", good, "fingerprints" },
        { "a stashed fingerprint above 2^f - 1", good, "stash" },
        { "a stash bucket past the table", good, "stash" },
        { "an empty stash with a bucket", good, "stash" },
        { "the stash emptied", good, "fingerprints" },
        { "a byte more", good, "trailing" },
        { "four bytes fewer", good, "parameters end" },
    };
    cases[0].f.fingerprint_bits = 3;
    cases[1].f.fingerprint_bits = 33;
    cases[2].f.fingerprint_bits = 8;
    cases[3].f.bucket_size = 3;
    cases[4].f.bucket_size = 8;
    cases[5].f.layout = 2;
    cases[6].f.layout = 1;
    cases[7].f.layout = 1;
    cases[7].f.fingerprint_bits = 3;
    cases[8].f.max_kicks = 0;
    cases[9].f.growth = 17;
    cases[10].f.growth = 4;
    cases[11].f.growth = 3;
    cases[12].f.growth = 0;
    cases[13].f.capacity = 0;
    cases[14].f.target_fpr = 0;
    cases[15].f.target_fpr = 1;
    cases[16].f.target_fpr = NAN;
    cases[17].f.tables = 0;
    cases[18].f.tables = AMQ_CUCKOO_MAX_TABLES + 1;
    cases[19].f.tables = 4;
    cases[20].f.tables = 2;
    cases[21].f.table[0].buckets = 0;
    cases[22].f.table[2].buckets++;
    cases[23].f.table[2].buckets--;
    cases[24].f.table[1].stored++;
    cases[25].f.table[1].stored--;
    cases[26].f.table[0].stash_fingerprint = 128;
    cases[27].f.table[1].stash_bucket = good.table[1].buckets;
    cases[28].f.table[2].stash_bucket = 1;
    cases[29].f.table[0].stash_fingerprint = 0;
    cases[29].f.table[0].stash_bucket = 0;
    cases[30].f.extra_bytes = 1;
    cases[31].f.extra_bytes = -4;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_fields(&w, &cases[i].f);
        amq_test_write_container(crafted, c.family, &c.hasher, w.bytes, w.len, c.payload,
                                 c.payload_len);
        amq_test_expect_load(crafted, cases[i].message, "%s", cases[i].what);
    }

    /* The payload: a byte short, a byte long, and a bit set past the first
     * table's last slot (when its slots do not end on a byte boundary). */
    amq_test_expect_payload_resize_refused(crafted, &c, "", "");
    uint8_t *payload = malloc((size_t)c.payload_len);
    assert_non_null(payload);
    memcpy(payload, c.payload, (size_t)c.payload_len);
    uint64_t bits = good.table[0].buckets * 4 * 7;
    if (bits % 8) {
        payload[bits / 8] |= 0x80;
        amq_test_write_container(crafted, c.family, &c.hasher, c.params, c.params_len, payload,
                                 c.payload_len);
        amq_test_expect_load(crafted, "past its last slot", "a bit past the first table");
    }
    free(payload);

    /* Every byte of the block, changed. A table's stash may name another
     * fingerprint or bucket that is just as valid - no check can tell it
     * from the saved one - so a file changed there may load without the
     * stashed key; anywhere else, what loads holds every key. */
    enum { FILTER_FIELDS = 48, TABLE_FIELDS = 28, STASH_FIELDS_AT = 16 };
    uint8_t params[AMQ__FORMAT_PARAMS_MAX];
    const uint8_t changes[] = { 0x01, 0x02, 0x10, 0x80, 0xff };
    uint64_t refused = 0, accepted = 0;
    assert_int_equal(c.params_len, FILTER_FIELDS + 3 * TABLE_FIELDS);
    for (uint32_t i = 0; i < c.params_len; i++) {
        bool in_stash = i >= FILTER_FIELDS && (i - FILTER_FIELDS) % TABLE_FIELDS >= STASH_FIELDS_AT;
        for (size_t j = 0; j < sizeof changes; j++) {
            memcpy(params, c.params, c.params_len);
            params[i] ^= changes[j];
            amq_test_write_container(crafted, c.family, &c.hasher, params, c.params_len, c.payload,
                                     c.payload_len);
            int status = load_damaged(crafted, scratch, in_stash ? 0 : GROWN_KEYS, &diag);
            refused += status == AMQ_ECORRUPT;
            accepted += status == AMQ_OK;
        }
    }
    print_message("%u parameter bytes changed 5 ways: %llu refused, %llu loaded\n", c.params_len,
                  (unsigned long long)refused, (unsigned long long)accepted);
    assert_true(refused > accepted);
    free(file);
}

/* A semi-sorted filter saves and loads as itself; a bucket whose prefix
 * code is not one of the 3876 is refused. */
static void test_semi_sorted_files(void **state)
{
    char path[AMQ_TEST_PATH_MAX], crafted[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(crafted, state, "crafted.amq");
    const char *spec = "cuckoo n=2000 fingerprint-bits=12 semi-sort seed=5";
    size_t len = 0;
    uint8_t *file = saved_file(path, spec, 1900, &len);
    amq_filter *built = NULL, *loaded = NULL;
    assert_int_equal(amq_new(&built, spec, NULL), AMQ_OK);
    for (uint64_t i = 0; i < 1900; i++) {
        amq_test_key key = amq_test_make_key(seed, 0, i);
        assert_int_equal(amq_add(built, &key, sizeof key), AMQ_OK);
    }
    assert_int_equal(amq_load(&loaded, path, 0, NULL), AMQ_OK);
    amq_test_expect_same_answers(built, loaded, seed, 20000);
    amq_info info;
    amq_info_get(&info, loaded);
    assert_string_equal(amq_test_find_detail(&info, "layout")->text, "semi-sorted");
    assert_int_equal(info.memory_bytes, (detail_number(&info, "buckets") * 44 + 7) / 8);
    amq_free(built);
    amq_free(loaded);

    amq__container c;
    assert_int_equal(amq__format_parse(&c, file, len, NULL), AMQ_OK);
    uint8_t *payload = malloc((size_t)c.payload_len);
    assert_non_null(payload);
    const uint32_t codes[] = { 3876, 4000, 4095 };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        uint32_t code = codes[i];
        /* Bucket 3's code: bits 132 .. 143, the high nibble of byte 16 and
         * all of byte 17. */
        memcpy(payload, c.payload, (size_t)c.payload_len);
        payload[16] = (uint8_t)((payload[16] & 0x0f) | (code & 0x0f) << 4);
        payload[17] = (uint8_t)(code >> 4);
        amq_test_write_container(crafted, c.family, &c.hasher, c.params, c.params_len, payload,
                                 c.payload_len);
        amq_test_expect_load(crafted, "prefix code", "code %u", code);
    }
    free(payload);
    free(file);
}

/* ---- files saved by earlier versions ------------------------------------------- */

/* tests/data/cuckoo/NAME.amq: saved by amq_build -t cuckoo -n 2000 --seed 7
 * with the options below, from the 2250 lines key-0 .. key-2249 (a load of
 * 0.947); absent_hits is what `amq query -c` counted then among the 20,000
 * lines absent-0 .. absent-19999 (see the README beside the files). */
typedef struct golden_cuckoo {
    const char *name;
    const char *spec;
    uint64_t absent_hits;
} golden_cuckoo;

enum { GOLDEN_PRESENT = 2250, GOLDEN_ABSENT = 20000 };

static size_t golden_key(char *out, const char *prefix, uint64_t i)
{
    return (size_t)snprintf(out, 32, "%s-%llu", prefix, (unsigned long long)i);
}

/* A saved filter loads and answers as it did when it was saved, gives back
 * every key, and the same keys added today save the same bytes: the bucket
 * coding, plain and semi-sorted (f = 8, 12 and 16: buckets of 28, 44 and 60
 * bits, the last past one 64-bit window), does not change. */
static void test_saved_files_still_answer(void **state)
{
    static const golden_cuckoo files[] = {
        { "plain-f12", "cuckoo n=2000 seed=7 fingerprint-bits=12", 26 },
        { "semi-f8", "cuckoo n=2000 seed=7 fingerprint-bits=8 semi-sort", 499 },
        { "semi-f12", "cuckoo n=2000 seed=7 fingerprint-bits=12 semi-sort", 26 },
        { "semi-f16", "cuckoo n=2000 seed=7 fingerprint-bits=16 semi-sort", 3 },
    };
    char key[32], name[64], resaved[AMQ_TEST_PATH_MAX];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(name, sizeof name, "cuckoo/%s.amq", files[i].name);
        char *golden = amq_test_data_path(name);
        amq_filter *loaded = NULL, *rebuilt = NULL;
        assert_int_equal(amq_load(&loaded, golden, 0, NULL), AMQ_OK);
        assert_int_equal(amq_new(&rebuilt, files[i].spec, NULL), AMQ_OK);
        for (uint64_t k = 0; k < GOLDEN_PRESENT; k++) {
            size_t len = golden_key(key, "key", k);
            if (amq_contains(loaded, key, len) != 1)
                fail_msg("%s: key-%llu is not found", name, (unsigned long long)k);
            assert_int_equal(amq_add(rebuilt, key, len), AMQ_OK);
        }
        uint64_t hits = 0;
        for (uint64_t k = 0; k < GOLDEN_ABSENT; k++) {
            size_t len = golden_key(key, "absent", k);
            hits += (uint64_t)amq_contains(loaded, key, len);
        }
        if (hits != files[i].absent_hits)
            fail_msg("%s: %llu of the absent keys are maybe present, %llu when it was saved", name,
                     (unsigned long long)hits, (unsigned long long)files[i].absent_hits);
        amq_test_scratch_path(resaved, state, "rebuilt.amq");
        assert_int_equal(amq_save(rebuilt, resaved, NULL), AMQ_OK);
        if (!amq_test_same_file(golden, resaved))
            fail_msg("%s: the same keys added today save different bytes", name);
        for (uint64_t k = 0; k < GOLDEN_PRESENT; k++) {
            size_t len = golden_key(key, "key", k);
            if (amq_remove(loaded, key, len) != AMQ_OK)
                fail_msg("%s: key-%llu cannot be removed", name, (unsigned long long)k);
        }
        amq_info info;
        assert_int_equal(amq_info_get(&info, loaded), AMQ_OK);
        assert_int_equal(info.keys, 0);
        amq_free(loaded);
        amq_free(rebuilt);
        free(golden);
    }
}

/* ---- the rate at small n and low p ------------------------------------------------- */

/* cuckoo n=1000 p=1e-6 (fingerprint bits rounded up from p): 1000 keys, 2 * 10^7 absent ones, about
 * 10 false positives; as many as amq_info's expected_fpr predicts (within 5 standard deviations),
 * and that below the target. */
static void test_fpr_small_n_low_p(void **state)
{
    (void)state;
    amq_test_expect_low_rate("cuckoo n=1000 p=1e-6", seed, AMQ_TEST_ADD, 1000, 20000000, 1);
}

int main(void)
{
    seed = amq_test_seed(20261207);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_sizing),
        cmocka_unit_test(test_parameter_errors),
        cmocka_unit_test(test_million_keys_then_first_refusal),
        cmocka_unit_test(test_no_false_negatives),
        cmocka_unit_test(test_small_capacities_take_their_keys),
        cmocka_unit_test(test_short_walks_take_their_keys),
        cmocka_unit_test(test_growing_tables_skip_the_pileup_floor),
        cmocka_unit_test(test_fpr_8_bits),
        cmocka_unit_test(test_fpr_12_bits),
        cmocka_unit_test(test_fpr_16_bits),
        cmocka_unit_test(test_fpr_semi_sorted),
        cmocka_unit_test(test_fingerprints_are_packed),
        cmocka_unit_test(test_semi_sorted_buckets),
        cmocka_unit_test(test_semi_sorted_size),
        cmocka_unit_test(test_semi_sorted_pdep_and_portable_agree),
        AMQ_TEST_WITH_SCRATCH(test_semi_sorted_files),
        AMQ_TEST_WITH_SCRATCH(test_saved_files_still_answer),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_removal_empties_the_stash),
        cmocka_unit_test(test_removing_absent_keys_changes_nothing),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_why_full),
        cmocka_unit_test(test_copies_of_one_key_do_not_grow_without_end),
        cmocka_unit_test(test_counted_copies_saved),
        cmocka_unit_test(test_overflow_map_order),
        cmocka_unit_test(test_removal_in_a_grown_filter),
        cmocka_unit_test(test_model_fixed_size),
        cmocka_unit_test(test_model_growing),
        cmocka_unit_test(test_model_semi_sorted),
        cmocka_unit_test(test_batch_and_hash_forms_agree),
        cmocka_unit_test(test_batch_in_every_shape),
        cmocka_unit_test(test_query_of_the_common_shape),
        AMQ_TEST_WITH_SCRATCH(test_generic_round_trip),
        AMQ_TEST_WITH_SCRATCH(test_generic_full_and_grown_filters),
        cmocka_unit_test(test_generic_spec_errors),
        cmocka_unit_test(test_fpr_and_fingerprint_bits_together),
        AMQ_TEST_WITH_SCRATCH(test_flipped_and_truncated_files),
        AMQ_TEST_WITH_SCRATCH(test_damaged_parameters),
        cmocka_unit_test(test_fpr_small_n_low_p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
