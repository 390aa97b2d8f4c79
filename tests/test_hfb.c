/*
 * Tests for the hash-free Bloom banks (src/hfb/hfb.c).
 *
 * What they establish, each by something that could fail:
 *   - no false negatives for 1,000, 100,000 and 1,000,000 random IDs;
 *   - over 1,000,000 random absent IDs, the FPR is at most the target + 4
 *     binomial sigmas for targets 1%, 0.1% and 0.01%, and within 4 sigmas of
 *     the filter's own product of fill ratios (the premise: disjoint slices
 *     of random IDs pass banks independently); the stored bits per ID are
 *     printed beside a classic Bloom filter and a Golomb-coded set at the
 *     measured FPR (both from their formulas), and are below the Bloom
 *     filter's at 1% and 0.1%;
 *   - slices that cross bit 64 of the ID index their bank with the right
 *     bits: IDs that vary only in bits 60..70 within a slice of len 24 (and
 *     20) make that bank, and crafted IDs pass it exactly when their bits
 *     60..70 are among the set's;
 *   - bank selection against a brute force computed here from the IDs, bit
 *     by bit: the kept banks are the emptiest slices in ascending weight,
 *     exactly as many as reach p; full banks are never kept; p out of reach
 *     is refused with a suggestion;
 *   - the stored form: a sparse bank is Rice-coded at the best parameter of
 *     all (its length computed here from the gaps), a dense one raw because
 *     no Rice code is smaller; the default len gives the smallest measured
 *     filter of every len, within 2%, and its size is within 3% of the
 *     expectation;
 *   - duplicates count once and change nothing; 0 IDs reject everything, 1
 *     ID is found;
 *   - IDs that are small integers are flagged as non-random, random IDs
 *     (several seeds and sizes) and MD5 digests of small integers are not;
 *   - batch queries answer as single ones; filter_ids keeps exactly the
 *     passing IDs, in order, in place or into another buffer;
 *   - MD5 mode: a key's answer is its digest's answer; raw mode refuses keys
 *     that are not 16 bytes;
 *   - the generic handle: spec errors named, static refusals, info details,
 *     save/load answering the same; every flip and truncation of a file, and
 *     crafted parameter blocks and coded streams, refused as corrupt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/hfb.h"
#include "core/format.h"
#include "hfb/hfb_internal.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID 16

static uint64_t seed;

/* count random IDs from a generator seeded with id_seed. */
static uint8_t *random_ids(size_t count, uint64_t id_seed)
{
    uint8_t *ids = malloc(count ? count * ID : 1);
    assert_non_null(ids);
    amq_test_rng rng;
    amq_test_rng_init(&rng, id_seed);
    for (size_t i = 0; i < count; i++)
        for (int half = 0; half < 2; half++) {
            uint64_t word = amq_test_next(&rng);
            for (int b = 0; b < 8; b++)
                ids[i * ID + half * 8 + b] = (uint8_t)(word >> (8 * b));
        }
    return ids;
}

/* Bit i of an ID as the header defines it: bytes 0..7 are the low word,
 * little-endian, so bit i is bit i % 8 of byte i / 8. */
static unsigned id_bit(const uint8_t *id, unsigned i)
{
    return (id[i / 8] >> (i % 8)) & 1;
}

static void id_set_bit(uint8_t *id, unsigned i, unsigned value)
{
    id[i / 8] = (uint8_t)((id[i / 8] & ~(1u << (i % 8))) | (value << (i % 8)));
}

/* The slice (start, len) of an ID, bit by bit. */
static uint64_t id_slice(const uint8_t *id, unsigned start, unsigned len)
{
    uint64_t value = 0;
    for (unsigned b = 0; b < len; b++)
        value |= (uint64_t)id_bit(id, start + b) << b;
    return value;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct values of a slice over the IDs, sorted, into values (room
 * for count); returns how many. */
static size_t slice_values(uint64_t *values, const uint8_t *ids, size_t count, unsigned start,
                           unsigned len)
{
    for (size_t i = 0; i < count; i++)
        values[i] = id_slice(ids + i * ID, start, len);
    qsort(values, count, sizeof *values, compare_u64);
    size_t distinct = 0;
    for (size_t i = 0; i < count; i++)
        if (distinct == 0 || values[i] != values[distinct - 1])
            values[distinct++] = values[i];
    return distinct;
}

/* The Rice code length of the gaps between sorted distinct positions. */
static uint64_t rice_length(const uint64_t *positions, size_t count, unsigned parameter)
{
    uint64_t bits = 0, next = 0;
    for (size_t i = 0; i < count; i++) {
        bits += ((positions[i] - next) >> parameter) + 1 + parameter;
        next = positions[i] + 1;
    }
    return bits;
}

static amq_hfb *build(const uint8_t *ids, size_t count, double fpr, uint32_t bank_bits)
{
    amq_hfb_params params = { .fpr = fpr, .bank_bits = bank_bits };
    amq_hfb *f = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_hfb_build_hash(&f, &params, ids, count, &diag);
    if (status != AMQ_OK)
        fail_msg("build of %zu IDs, p = %g, bank bits %u: %s (%s)", count, fpr, bank_bits,
                 amq_strerror(status), diag.message);
    if (amq__hfb_check(f, &diag) != AMQ_OK)
        fail_msg("build of %zu IDs, p = %g, bank bits %u: %s", count, fpr, bank_bits, diag.message);
    return f;
}

static amq_hfb_bank bank_of(const amq_hfb *f, size_t i)
{
    amq_hfb_bank bank;
    assert_int_equal(amq_hfb_bank_get(&bank, f, i), AMQ_OK);
    return bank;
}

static void expect_all_found(const amq_hfb *f, const uint8_t *ids, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!amq_hfb_contains_hash(f, ids + i * ID))
            fail_msg("ID %zu of %zu is missing (bank bits %u, %zu banks)", i, count,
                     amq_hfb_bank_bits(f), amq_hfb_bank_count(f));
}

/* ---- the statistics ------------------------------------------------------------ */

static void test_no_false_negatives(void **state)
{
    (void)state;
    const size_t sizes[] = { 1000, 100000, 1000000 };
    for (size_t s = 0; s < 3; s++) {
        uint8_t *ids = random_ids(sizes[s], seed + s);
        amq_hfb *f = build(ids, sizes[s], 0, 0);
        assert_int_equal(amq_hfb_keys(f), sizes[s]);
        expect_all_found(f, ids, sizes[s]);
        assert_false(amq_hfb_nonrandom(f));
        amq_hfb_free(f);
        free(ids);
    }
}

/* The binomial standard deviation of a rate p measured over trials. */
static double sigma(double p, double trials)
{
    return sqrt(p * (1 - p) / trials);
}

static void test_fpr_at_three_targets(void **state)
{
    (void)state;
    const size_t n = 1000000, trials = 1000000;
    const double targets[] = { 0.01, 0.001, 0.0001 };
    uint8_t *ids = random_ids(n, seed);
    uint8_t *absent = random_ids(trials, seed ^ 0xabcdef);
    uint8_t *results = malloc(trials);
    assert_non_null(results);
    fprintf(stderr,
            "n = %zu random IDs; stored bits per ID beside a classic Bloom filter "
            "(1.44 log2(1/fpr)) and a Golomb-coded set (log2(1/fpr) + 1.58, from its "
            "formula: gcs is not measured here), both at the measured FPR\n",
            n);
    for (size_t t = 0; t < 3; t++) {
        double p = targets[t];
        amq_hfb *f = build(ids, n, p, 0);
        amq_hfb_contains_many_hash(results, f, absent, trials);
        size_t hits = 0;
        for (size_t i = 0; i < trials; i++)
            hits += results[i];
        double fpr = (double)hits / (double)trials;
        double expected = amq_hfb_expected_fpr(f);
        if (fpr > p + 4 * sigma(p, (double)trials))
            fail_msg("p = %g: measured FPR %g is above the target + 4 sigma", p, fpr);
        if (fabs(fpr - expected) > 4 * sigma(expected, (double)trials))
            fail_msg("p = %g: measured FPR %g, the banks' product of fills %g", p, fpr, expected);
        assert_true(expected <= p);
        double stored = (double)amq_hfb_stored_bytes(f) * 8 / (double)n;
        double bloom = log2(1 / fpr) / log(2.0);
        double gcs = log2(1 / fpr) + 1.58;
        fprintf(stderr,
                "  p = %-7g fpr %.6f (banks' product %.6f)  len %2u, %zu of %zu banks  "
                "hfb %.2f bits/ID stored, %.1f in memory   classic Bloom %.2f   GCS %.2f\n",
                p, fpr, expected, amq_hfb_bank_bits(f), amq_hfb_bank_count(f),
                amq_hfb_slice_count(f), stored, (double)amq_hfb_memory_bytes(f) * 8 / (double)n,
                bloom, gcs);
        /* At 1e-4 the 128 bits of an ID hold too few dense banks for a
         * million IDs; the default then takes the least memory. */
        double memory = (double)amq_hfb_memory_bytes(f) * 8 / (double)n;
        if (p >= 0.001 && memory > 1.5 * stored)
            fail_msg("p = %g: %.2f bits per ID in memory, %.2f stored", p, memory, stored);
        amq_hfb_free(f);
        /* Chosen for the file alone, the banks store less than a classic
         * Bloom filter at the same rate. */
        uint32_t smallest_len = 0;
        double smallest = INFINITY;
        for (uint32_t len = 1; len <= AMQ_HFB_MAX_BANK_BITS; len++)
            if (amq_hfb_expected_bits(n, p, len) < smallest) {
                smallest = amq_hfb_expected_bits(n, p, len);
                smallest_len = len;
            }
        f = build(ids, n, p, smallest_len);
        stored = (double)amq_hfb_stored_bytes(f) * 8 / (double)n;
        fprintf(stderr, "  p = %-7g len %2u for the file alone: %.2f bits/ID stored\n", p,
                smallest_len, stored);
        if (p >= 0.001 && stored >= bloom)
            fail_msg("p = %g: %.2f stored bits per ID, a classic Bloom filter needs %.2f", p,
                     stored, bloom);
        amq_hfb_free(f);
    }
    free(results);
    free(absent);
    free(ids);
}

/* ---- slices -------------------------------------------------------------------- */

/* IDs random but for one slice crossing bit 64 - len 24 over bits 48..71,
 * len 20 over bits 60..79 - whose bits are fixed except bits 60..70, which
 * take one of 100 values. That slice's bank has the smallest weight (100),
 * is kept first, and alone reaches p; an ID of the set with bits 60..70
 * replaced passes it exactly when the new value is one of the 100. */
static void test_slices_cross_bit_64(void **state)
{
    (void)state;
    enum { N = 5000, DISTINCT = 100, VALUES = 1 << 11 };
    const unsigned lens[] = { 24, 20 }, starts[] = { 48, 60 };
    for (size_t c = 0; c < 2; c++) {
        uint8_t *ids = random_ids(N, seed + c);
        bool chosen[VALUES] = { false };
        uint16_t values[DISTINCT];
        amq_test_rng rng;
        amq_test_rng_init(&rng, seed + 10 + c);
        for (size_t v = 0; v < DISTINCT;) {
            uint16_t value = (uint16_t)amq_test_below(&rng, VALUES);
            if (!chosen[value]) {
                chosen[value] = true;
                values[v++] = value;
            }
        }
        for (size_t i = 0; i < N; i++) {
            uint8_t *id = ids + i * ID;
            for (unsigned b = starts[c]; b < starts[c] + lens[c]; b++)
                id_set_bit(id, b, b % 3 == 0);
            uint16_t value = values[i < DISTINCT ? i : amq_test_below(&rng, DISTINCT)];
            for (unsigned b = 0; b < 11; b++)
                id_set_bit(id, 60 + b, (value >> b) & 1);
        }
        amq_hfb *f = build(ids, N, 0.01, lens[c]);
        assert_int_equal(amq_hfb_bank_count(f), 1);
        amq_hfb_bank first = bank_of(f, 0);
        assert_int_equal(first.start, starts[c]);
        assert_int_equal(first.len, lens[c]);
        assert_int_equal(first.weight, DISTINCT);
        assert_true(amq_hfb_nonrandom(f));
        expect_all_found(f, ids, N);
        for (unsigned value = 0; value < VALUES; value++) {
            uint8_t probe[ID];
            memcpy(probe, ids + (value % N) * ID, ID);
            for (unsigned b = 0; b < 11; b++)
                id_set_bit(probe, 60 + b, (value >> b) & 1);
            if (amq_hfb_contains_hash(f, probe) != chosen[value])
                fail_msg("len %u: bits 60..70 = %u: the filter says %d, the set %s it", lens[c],
                         value, amq_hfb_contains_hash(f, probe), chosen[value] ? "has" : "lacks");
        }
        amq_hfb_free(f);
        free(ids);
    }
}

/* ---- bank selection -------------------------------------------------------------- */

/* The filter's banks are the emptiest slices of width len in ascending weight
 * (stable in slice order), as many as the product of fills needs to reach p,
 * with the weights measured here. */
static void expect_selection(const amq_hfb *f, const uint8_t *ids, size_t count, double p)
{
    unsigned len = amq_hfb_bank_bits(f), slices = 128 / len;
    assert_int_equal(amq_hfb_slice_count(f), slices);
    uint64_t *values = malloc((count ? count : 1) * sizeof *values);
    assert_non_null(values);
    uint64_t weights[128];
    unsigned order[128];
    for (unsigned j = 0; j < slices; j++) {
        weights[j] = slice_values(values, ids, count, j * len, len);
        unsigned at = j;
        for (; at > 0 && weights[order[at - 1]] > weights[j]; at--)
            order[at] = order[at - 1];
        order[at] = j;
    }
    free(values);
    double m = ldexp(1.0, (int)len), product = 1;
    size_t kept = 0;
    while (product > p) {
        assert_true(kept < slices && weights[order[kept]] < (uint64_t)m);
        product *= (double)weights[order[kept++]] / m;
    }
    if (amq_hfb_bank_count(f) != kept)
        fail_msg("len %u, p = %g: %zu banks kept, the brute force keeps %zu", len, p,
                 amq_hfb_bank_count(f), kept);
    for (size_t i = 0; i < kept; i++) {
        amq_hfb_bank bank = bank_of(f, i);
        assert_int_equal(bank.start, order[i] * len);
        assert_int_equal(bank.len, len);
        assert_int_equal(bank.weight, weights[order[i]]);
        assert_true(fabs(bank.fill - (double)bank.weight / m) < 1e-15);
    }
    assert_true(fabs(amq_hfb_expected_fpr(f) - product) <= 1e-12 * product);
}

static void test_bank_selection(void **state)
{
    (void)state;
    enum { N = 20000 };
    uint8_t *ids = random_ids(N, seed);
    /* len 16: fill about 0.26, so p = 0.001 needs about 6 of the 8 slices. */
    const double targets[] = { 0.1, 0.001, 1e-4 };
    for (size_t t = 0; t < 3; t++) {
        amq_hfb *f = build(ids, N, targets[t], 16);
        expect_selection(f, ids, N, targets[t]);
        amq_hfb_free(f);
    }
    amq_hfb *f = build(ids, N, 0.001, 16);
    assert_true(amq_hfb_bank_count(f) < amq_hfb_slice_count(f)); /* some were dropped */
    amq_hfb_free(f);

    /* Non-random: the low word is a counter below 2^16, the high word
     * random. Slices 1..3 of len 16 are all zero (weight 1) and are kept
     * first; one of them already reaches p. */
    for (size_t i = 0; i < N; i++) {
        memset(ids + i * ID, 0, 8);
        ids[i * ID] = (uint8_t)i;
        ids[i * ID + 1] = (uint8_t)(i >> 8);
    }
    f = build(ids, N, 0.001, 16);
    expect_selection(f, ids, N, 0.001);
    assert_int_equal(bank_of(f, 0).start, 16);
    assert_int_equal(bank_of(f, 0).weight, 1);
    assert_true(amq_hfb_nonrandom(f));
    amq_hfb_free(f);

    /* Full banks are never kept: the low word random fills every bank of
     * len 8 there; the constant high word's banks reach p. */
    uint8_t *low = random_ids(N, seed + 7);
    for (size_t i = 0; i < N; i++)
        memset(low + i * ID + 8, 0x5a, 8);
    f = build(low, N, 1e-6, 8);
    expect_selection(f, low, N, 1e-6);
    for (size_t i = 0; i < amq_hfb_bank_count(f); i++)
        assert_true(bank_of(f, i).start >= 64);
    amq_hfb_free(f);
    free(low);

    /* Out of reach: 20000 random IDs fill banks of 2^8 bits completely,
     * and 10 banks of 2^12 bits to 0.99 each. */
    uint8_t *random = random_ids(N, seed + 8);
    amq_hfb_params params = { .fpr = 0.01, .bank_bits = 8 };
    amq_diag diag = { .message = "" };
    f = (amq_hfb *)&f;
    assert_int_equal(amq_hfb_build_hash(&f, &params, random, N, &diag), AMQ_ERANGE);
    assert_null(f);
    f = (amq_hfb *)&f;
    params.bank_bits = 12;
    assert_int_equal(amq_hfb_build_hash(&f, &params, random, N, &diag), AMQ_ERANGE);
    assert_null(f);
    char suggestion[64];
    snprintf(suggestion, sizeof suggestion, "bank-bits=%u would reach it",
             amq_hfb_choose_bank_bits(N, 0.01));
    if (!strstr(diag.message, "bank-bits=12") || !strstr(diag.message, suggestion))
        fail_msg("refusal says '%s', expected 'bank-bits=12' and '%s'", diag.message, suggestion);
    free(random);
    free(ids);
}

/* ---- stored form and the choice of len ------------------------------------------------ */

static void test_encoding_choice(void **state)
{
    (void)state;
    enum { N = 1000 };
    uint8_t *ids = random_ids(N, seed);
    uint64_t *positions = malloc(N * sizeof *positions);
    assert_non_null(positions);

    /* Sparse: 1000 positions among 2^20, about one in a thousand. */
    amq_hfb *f = build(ids, N, 0.01, 20);
    amq_hfb_bank bank = bank_of(f, 0);
    assert_int_equal(bank.encoding, AMQ_HFB_GOLOMB);
    size_t count = slice_values(positions, ids, N, bank.start, bank.len);
    assert_int_equal(count, bank.weight);
    assert_int_equal(rice_length(positions, count, bank.rice_bits), bank.stored_bits);
    for (unsigned p = 0; p <= 20; p++)
        assert_true(rice_length(positions, count, p) >= bank.stored_bits);
    assert_true(bank.stored_bits < (uint64_t)1 << 20);
    amq_hfb_free(f);

    /* Dense: 1000 IDs fill 2^10 bits to about 0.62; no Rice code beats the
     * 128 raw bytes. */
    f = build(ids, N, 0.01, 10);
    bank = bank_of(f, 0);
    assert_int_equal(bank.encoding, AMQ_HFB_RAW);
    assert_int_equal(bank.stored_bits, 1024);
    assert_int_equal(bank.rice_bits, 0);
    count = slice_values(positions, ids, N, bank.start, bank.len);
    for (unsigned p = 0; p <= 10; p++)
        assert_true((rice_length(positions, count, p) + 7) / 8 >= 128);
    amq_hfb_free(f);
    free(positions);
    free(ids);
}

/* The bits a filter takes in memory: its banks' bits. */
static double memory_bits(const amq_hfb *f)
{
    return (double)amq_hfb_memory_bytes(f) * 8;
}

static void test_default_len(void **state)
{
    (void)state;
    enum { N = 20000 };
    uint8_t *ids = random_ids(N, seed);
    const double targets[] = { 0.01, 0.001, 1e-5 };
    for (size_t t = 0; t < 3; t++) {
        double p = targets[t];
        uint32_t chosen = amq_hfb_choose_bank_bits(N, p);
        assert_true(chosen >= 1 && chosen <= AMQ_HFB_MAX_BANK_BITS);
        double expected = amq_hfb_expected_bits(N, p, chosen);
        amq_hfb *f = build(ids, N, p, 0);
        assert_int_equal(amq_hfb_bank_bits(f), chosen);
        double stored = (double)amq_hfb_stored_bytes(f) * 8;
        if (fabs(stored - expected) > 0.03 * expected)
            fail_msg("p = %g, len %u: %.0f bits stored, %.0f expected", p, chosen, stored,
                     expected);
        /* The default is chosen for memory as well as for the file (at
         * 1e-5 the 128 bits of an ID do not hold enough dense banks for
         * 20,000 IDs: the least memory is chosen, checked below). */
        if (p >= 0.001 && memory_bits(f) > 1.5 * stored)
            fail_msg("p = %g, len %u: %.0f bits in memory, %.0f stored", p, chosen, memory_bits(f),
                     stored);
        /* Brute force over the lens whose banks fit a test's memory: none
         * within the memory bound stores much less. */
        double smallest = INFINITY, leanest = INFINITY;
        uint32_t smallest_len = 0, leanest_len = 0;
        for (uint32_t len = 1; len <= 26; len++) {
            amq_hfb_params params = { .fpr = p, .bank_bits = len };
            amq_hfb *g = NULL;
            if (amq_hfb_build_hash(&g, &params, ids, N, NULL) != AMQ_OK)
                continue;
            double bits = (double)amq_hfb_stored_bytes(g) * 8;
            if (bits < smallest && memory_bits(g) <= 1.5 * bits) {
                smallest = bits;
                smallest_len = len;
            }
            if (memory_bits(g) < leanest) {
                leanest = memory_bits(g);
                leanest_len = len;
            }
            amq_hfb_free(g);
        }
        if (smallest_len && stored > 1.02 * smallest)
            fail_msg("p = %g: the default len %u stores %.0f bits, len %u only %.0f", p, chosen,
                     stored, smallest_len, smallest);
        if (!smallest_len && memory_bits(f) > 1.02 * leanest)
            fail_msg("p = %g: the default len %u takes %.0f bits in memory, len %u only %.0f", p,
                     chosen, memory_bits(f), leanest_len, leanest);
        amq_hfb_free(f);
    }
    /* Nothing reaches p = 1e-30 for a million IDs: 4 banks of 2^32 bits. */
    assert_int_equal(amq_hfb_choose_bank_bits(1000000, 1e-30), 0);
    assert_true(isinf(amq_hfb_expected_bits(1000000, 0.01, 0)));
    assert_true(isinf(amq_hfb_expected_bits(1000000, 0.01, 33)));
    free(ids);
}

/* ---- duplicates, tiny sets, non-random sets ----------------------------------------- */

static void test_duplicates_and_tiny_sets(void **state)
{
    (void)state;
    enum { N = 3000 };
    uint8_t *ids = random_ids(N, seed);
    uint8_t *tripled = malloc(3 * N * ID);
    assert_non_null(tripled);
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed);
    for (size_t i = 0; i < 3 * N; i++)
        memcpy(tripled + i * ID, ids + amq_test_below(&rng, N) * ID, ID);
    for (size_t i = 0; i < N; i++) /* every ID at least once */
        memcpy(tripled + (3 * i) * ID, ids + i * ID, ID);
    amq_hfb *once = build(ids, N, 0.001, 0), *thrice = build(tripled, 3 * N, 0.001, 0);
    assert_int_equal(amq_hfb_keys(thrice), N);
    assert_int_equal(amq_hfb_bank_count(thrice), amq_hfb_bank_count(once));
    assert_int_equal(amq_hfb_stored_bytes(thrice), amq_hfb_stored_bytes(once));
    for (size_t i = 0; i < amq_hfb_bank_count(once); i++) {
        amq_hfb_bank a = bank_of(once, i), b = bank_of(thrice, i);
        assert_int_equal(a.start, b.start);
        assert_int_equal(a.weight, b.weight);
        assert_int_equal(a.stored_bits, b.stored_bits);
    }
    uint8_t *others = random_ids(10000, seed + 1);
    for (size_t i = 0; i < 10000; i++)
        assert_int_equal(amq_hfb_contains_hash(once, others + i * ID),
                         amq_hfb_contains_hash(thrice, others + i * ID));

    /* No IDs: one empty bank, every ID rejected. */
    amq_hfb *empty = build(NULL, 0, 0.01, 0);
    assert_int_equal(amq_hfb_keys(empty), 0);
    assert_int_equal(amq_hfb_bank_count(empty), 1);
    assert_true(amq_hfb_expected_fpr(empty) == 0);
    for (size_t i = 0; i < 10000; i++)
        assert_false(amq_hfb_contains_hash(empty, others + i * ID));
    amq_hfb_free(empty);

    /* One ID, several times. */
    uint8_t one[3 * ID];
    for (int i = 0; i < 3; i++)
        memcpy(one + i * ID, ids, ID);
    amq_hfb *single = build(one, 3, 0.01, 0);
    assert_int_equal(amq_hfb_keys(single), 1);
    assert_true(amq_hfb_contains_hash(single, ids));
    assert_true(amq_hfb_expected_fpr(single) <= 0.01);
    size_t passed = 0;
    for (size_t i = 0; i < 10000; i++)
        passed += amq_hfb_contains_hash(single, others + i * ID);
    assert_true(passed <= 100 + 4 * 10); /* 1% + 4 sigma */
    assert_false(amq_hfb_nonrandom(single));
    amq_hfb_free(single);

    amq_hfb_free(once);
    amq_hfb_free(thrice);
    free(others);
    free(tripled);
    free(ids);
}

static void test_nonrandom_ids(void **state)
{
    (void)state;
    const size_t sizes[] = { 1000, 100000 };
    for (size_t s = 0; s < 2; s++) {
        size_t n = sizes[s];
        uint8_t *ids = calloc(n, ID);
        assert_non_null(ids);
        for (size_t i = 0; i < n; i++)
            for (int b = 0; b < 8; b++)
                ids[i * ID + b] = (uint8_t)(i >> (8 * b));
        amq_hfb *f = build(ids, n, 0.01, 0);
        if (!amq_hfb_nonrandom(f))
            fail_msg("%zu small integers as IDs: deviation %g, not flagged", n,
                     amq_hfb_deviation(f));
        expect_all_found(f, ids, n);
        amq_hfb_free(f);

        /* Their MD5 digests are random. */
        const void **keys = malloc(n * sizeof *keys);
        size_t *lens = malloc(n * sizeof *lens);
        assert_true(keys && lens);
        for (size_t i = 0; i < n; i++) {
            keys[i] = ids + i * ID;
            lens[i] = 8;
        }
        amq_hfb_params params = { .fpr = 0.01, .ids = AMQ_HFB_IDS_MD5 };
        assert_int_equal(amq_hfb_build(&f, &params, keys, lens, n, NULL), AMQ_OK);
        if (amq_hfb_nonrandom(f))
            fail_msg("MD5 of %zu small integers: deviation %g, flagged", n, amq_hfb_deviation(f));
        amq_hfb_free(f);
        free(keys);
        free(lens);
        free(ids);
    }
    /* Random IDs of many sizes and seeds, at the default len and at lens
     * that make their banks sparse, middling and full. */
    const size_t counts[] = { 1, 2, 10, 100, 1000, 30000 };
    const uint32_t lens[] = { 0, 4, 12, 20, 28 };
    double worst = 0;
    for (uint64_t s = 0; s < 5; s++)
        for (size_t c = 0; c < 6; c++) {
            uint8_t *ids = random_ids(counts[c], seed * 31 + s);
            for (size_t l = 0; l < 5; l++) {
                amq_hfb_params params = { .fpr = 0.5, .bank_bits = lens[l] };
                amq_hfb *f = NULL;
                if (amq_hfb_build_hash(&f, &params, ids, counts[c], NULL) != AMQ_OK)
                    continue; /* full banks: p out of reach */
                if (amq_hfb_nonrandom(f))
                    fail_msg("%zu random IDs (seed %llu), len %u: deviation %g, flagged", counts[c],
                             (unsigned long long)(seed * 31 + s), amq_hfb_bank_bits(f),
                             amq_hfb_deviation(f));
                if (amq_hfb_deviation(f) > worst)
                    worst = amq_hfb_deviation(f);
                amq_hfb_free(f);
            }
            free(ids);
        }
    fprintf(stderr, "largest deviation of random IDs: %.2f (flagged above %.0f)\n", worst,
            AMQ_HFB_NONRANDOM_DEVIATION);
}

/* ---- queries ------------------------------------------------------------------------- */

static void test_batch_and_filter_ids(void **state)
{
    (void)state;
    enum { N = 50000, ASKED = 3001 };
    uint8_t *ids = random_ids(N, seed);
    uint8_t *others = random_ids(ASKED, seed + 1);
    /* A mix: every third asked ID is in the set. */
    for (size_t i = 0; i < ASKED; i += 3)
        memcpy(others + i * ID, ids + (i * 7 % N) * ID, ID);
    const double targets[] = { 0.5, 0.01 };
    for (size_t t = 0; t < 2; t++) {
        amq_hfb *f = build(ids, N, targets[t], 0);
        const size_t counts[] = { 0, 1, 15, 16, 17, ASKED };
        for (size_t c = 0; c < 6; c++) {
            size_t count = counts[c];
            uint8_t results[ASKED + 1];
            memset(results, 0xee, sizeof results);
            amq_hfb_contains_many_hash(results, f, others, count);
            uint8_t *kept = malloc(ASKED * ID), *in_place = malloc(ASKED * ID);
            assert_true(kept && in_place);
            memcpy(in_place, others, ASKED * ID);
            size_t kept_count = amq_hfb_select_hash(kept, f, others, count);
            size_t in_place_count = amq_hfb_select_hash(in_place, f, in_place, count);
            size_t expected = 0;
            for (size_t i = 0; i < count; i++) {
                bool pass = amq_hfb_contains_hash(f, others + i * ID);
                assert_int_equal(results[i], pass);
                if (pass) {
                    assert_memory_equal(kept + expected * ID, others + i * ID, ID);
                    assert_memory_equal(in_place + expected * ID, others + i * ID, ID);
                    expected++;
                }
            }
            assert_int_equal(results[count], 0xee);
            assert_int_equal(kept_count, expected);
            assert_int_equal(in_place_count, expected);
            assert_true(count < 3 || expected >= count / 3);
            free(kept);
            free(in_place);
        }
        amq_hfb_free(f);
    }
    free(others);
    free(ids);
}

static void test_md5_mode(void **state)
{
    (void)state;
    enum { N = 2000 };
    char text[N][24];
    const void *keys[N];
    size_t lens[N];
    for (size_t i = 0; i < N; i++) {
        lens[i] = (size_t)snprintf(text[i], sizeof text[i], "document-%zu", i);
        keys[i] = text[i];
    }
    amq_hfb_params params = { .fpr = 0.01, .ids = AMQ_HFB_IDS_MD5 };
    amq_hfb *f = NULL;
    assert_int_equal(amq_hfb_build(&f, &params, keys, lens, N / 2, NULL), AMQ_OK);
    assert_int_equal(amq_hfb_id_kind(f), AMQ_HFB_IDS_MD5);
    size_t passed = 0;
    for (size_t i = 0; i < N; i++) {
        uint8_t digest[16];
        amq_md5(digest, keys[i], lens[i]);
        int answer = amq_hfb_contains(f, keys[i], lens[i]);
        assert_int_equal(answer, amq_hfb_contains_hash(f, digest));
        if (i < N / 2)
            assert_int_equal(answer, 1);
        else
            passed += answer;
    }
    assert_true(passed <= 10 + 4 * 4); /* 1% of 1000 + 4 sigma */
    /* The key batch answers as the single query, past its 256-key chunks. */
    uint8_t results[N];
    memset(results, 0xff, sizeof results);
    assert_int_equal(amq_hfb_contains_many(results, f, keys, lens, N), AMQ_OK);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(results[i], amq_hfb_contains(f, keys[i], lens[i]));
    amq_hfb_free(f);

    /* Raw IDs: a key must be 16 bytes, at the build and at a query. */
    params.ids = AMQ_HFB_IDS_RAW;
    amq_diag diag = { .message = "" };
    const void *raw[3] = { "0123456789abcdef", "short", "0123456789ABCDEF" };
    size_t raw_lens[3] = { 16, 5, 16 };
    f = (amq_hfb *)&f;
    assert_int_equal(amq_hfb_build(&f, &params, raw, raw_lens, 3, &diag), AMQ_EINVAL);
    assert_null(f);
    if (!strstr(diag.message, "key 2 of 3 is 5 bytes"))
        fail_msg("refusal says '%s'", diag.message);
    raw[1] = "fedcba9876543210";
    raw_lens[1] = 16;
    assert_int_equal(amq_hfb_build(&f, &params, raw, raw_lens, 3, &diag), AMQ_OK);
    assert_int_equal(amq_hfb_contains(f, raw[1], 16), 1);
    assert_int_equal(amq_hfb_contains(f, raw[1], 15), AMQ_EINVAL);
    uint8_t raw_results[3];
    assert_int_equal(amq_hfb_contains_many(raw_results, f, raw, raw_lens, 3), AMQ_OK);
    assert_true(raw_results[0] && raw_results[1] && raw_results[2]);
    raw_lens[1] = 15;
    assert_int_equal(amq_hfb_contains_many(raw_results, f, raw, raw_lens, 3), AMQ_EINVAL);
    assert_int_equal(amq_hfb_contains_hash(f, (const uint8_t *)raw[2]), 1);
    amq_hfb_free(f);
}

static void test_parameter_errors(void **state)
{
    (void)state;
    uint8_t id[ID] = { 1 };
    struct {
        amq_hfb_params params;
        const char *message;
    } cases[] = {
        { { .fpr = 1 }, "fpr" },
        { { .fpr = -0.1 }, "fpr" },
        { { .fpr = NAN }, "fpr" },
        { { .bank_bits = 33 }, "2^32 bits" },
        { { .ids = (amq_hfb_ids)2 }, "ids" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amq_hfb *f = (amq_hfb *)&f;
        amq_diag diag = { .message = "" };
        assert_int_equal(amq_hfb_build_hash(&f, &cases[i].params, id, 1, &diag), AMQ_EINVAL);
        assert_null(f);
        if (!strstr(diag.message, cases[i].message))
            fail_msg("case %zu says '%s', expected '%s'", i, diag.message, cases[i].message);
    }
    amq_hfb *f = build(id, 1, 0, 0);
    amq_hfb_bank bank;
    assert_int_equal(amq_hfb_bank_get(&bank, f, amq_hfb_bank_count(f)), AMQ_EINVAL);
    assert_true(amq_hfb_target_fpr(f) == AMQ_HFB_DEFAULT_FPR);
    amq_hfb_free(f);
    amq_hfb_free(NULL);
}

/* ---- the generic handle ---------------------------------------------------------------- */

static amq_filter *generic_build(const char *spec, const uint8_t *ids, size_t count)
{
    const void **keys = malloc((count ? count : 1) * sizeof *keys);
    size_t *lens = malloc((count ? count : 1) * sizeof *lens);
    assert_true(keys && lens);
    for (size_t i = 0; i < count; i++) {
        keys[i] = ids + i * ID;
        lens[i] = ID;
    }
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (amq_build(&f, spec, keys, lens, count, &diag) != AMQ_OK)
        fail_msg("'%s' refused: %s", spec, diag.message);
    free(keys);
    free(lens);
    return f;
}

static void test_generic_spec_errors(void **state)
{
    (void)state;
    uint8_t ids[2 * ID] = { 1, 2, 3 };
    ids[ID] = 9;
    const void *keys[2] = { ids, ids + ID };
    size_t lens[2] = { ID, ID };
    struct {
        const char *spec;
        int status;
        const char *message;
    } cases[] = {
        { "hfb hash=xxh3", AMQ_EINVAL, "not hash=xxh3" },
        { "hfb hash=siphash key=000102030405060708090a0b0c0d0e0f", AMQ_EINVAL, "hash=md5" },
        { "hfb seed=7", AMQ_EINVAL, "no seed" },
        { "hfb key=000102030405060708090a0b0c0d0e0f", AMQ_EINVAL, "no key" },
        { "hfb hash=md5 seed=1", AMQ_EINVAL, "no seed" },
        { "hfb bank-bits=33", AMQ_EINVAL, "'33' is above the maximum, 32" },
        { "hfb bank-bits=0", AMQ_EINVAL, "bank-bits" },
        { "hfb bank-bits=129", AMQ_EINVAL, "bank-bits" },
        { "hfb p=1.5", AMQ_EINVAL, "'fpr'" },
        { "hfb n=1000", AMQ_EINVAL, "unknown option 'n'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amq_filter *f = (amq_filter *)&f;
        amq_diag diag = { .message = "" };
        int status = amq_build(&f, cases[i].spec, keys, lens, 2, &diag);
        if (status != cases[i].status || !strstr(diag.message, cases[i].message))
            fail_msg("'%s': status %d '%s', expected %d mentioning '%s'", cases[i].spec, status,
                     diag.message, cases[i].status, cases[i].message);
        assert_null(f);
    }
    uint8_t *random = random_ids(20000, seed);
    amq_filter *f = (amq_filter *)&f;
    amq_diag diag = { .message = "" };
    const void **many = malloc(20000 * sizeof *many);
    size_t *many_lens = malloc(20000 * sizeof *many_lens);
    assert_true(many && many_lens);
    for (size_t i = 0; i < 20000; i++) {
        many[i] = random + i * ID;
        many_lens[i] = ID;
    }
    assert_int_equal(amq_build(&f, "hfb bank-bits=4", many, many_lens, 20000, &diag), AMQ_ERANGE);
    assert_null(f);
    if (!strstr(diag.message, "would reach it"))
        fail_msg("refusal says '%s'", diag.message);
    free(many);
    free(many_lens);
    free(random);

    amq_test_spec_case created[] = { { "hfb", AMQ_EINVAL, "static" } };
    amq_test_expect_spec_errors(created, 1);

    /* A raw key of another length: refused at the build and at a query. */
    lens[1] = 15;
    f = (amq_filter *)&f;
    assert_int_equal(amq_build(&f, "hfb", keys, lens, 2, &diag), AMQ_EINVAL);
    assert_null(f);
    if (!strstr(diag.message, "key 2 of 2 is 15 bytes"))
        fail_msg("refusal says '%s'", diag.message);
    f = generic_build("hfb", ids, 2);
    assert_int_equal(amq_contains(f, ids, ID), 1);
    assert_int_equal(amq_contains(f, ids, ID - 1), AMQ_EINVAL);
    amq_free(f);
    assert_int_equal(amq_test_expect_sized_by_keys("hfb hash=md5"), 3);
}

static void test_generic_info(void **state)
{
    (void)state;
    enum { N = 30000 };
    uint8_t *ids = random_ids(N, seed);
    amq_filter *f = generic_build("hfb p=1e-4 bank-bits=18", ids, N);
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    assert_int_equal(info.capacity, N);
    assert_int_equal(info.keys, N);
    assert_true(info.target_fpr == 1e-4);
    assert_true(info.expected_fpr <= 1e-4 && info.expected_fpr > 0);
    assert_int_equal(info.hasher.kind, AMQ_HASH_XXH3);
    assert_string_equal(amq_test_detail(&info, "ids")->text, "raw");
    assert_true(amq_test_detail(&info, "bank_bits")->value == 18);
    double banks = amq_test_detail(&info, "banks")->value;
    assert_true(banks >= 2 && banks <= 7);
    assert_true(amq_test_detail(&info, "banks_total")->value == 7);
    assert_null(amq_test_detail(&info, "warning"));
    assert_true(amq_test_detail(&info, "banks_listed")->value == (banks < 5 ? banks : 5));
    double product = 1;
    for (int i = 0; i < (int)banks && i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "bank%d_fill", i);
        product *= amq_test_detail(&info, name)->value;
        snprintf(name, sizeof name, "bank%d_slice", i);
        assert_non_null(strchr(amq_test_detail(&info, name)->text, '+'));
        snprintf(name, sizeof name, "bank%d_encoding", i);
        assert_string_equal(amq_test_detail(&info, name)->text, "golomb");
    }
    if (banks <= 5)
        assert_true(fabs(product - info.expected_fpr) <= 1e-12 * product);
    assert_int_equal(info.memory_bytes, (uint64_t)banks * (1 << 18) / 8);
    assert_true(info.detail_count <= AMQ_INFO_MAX_DETAILS);
    amq_free(f);

    /* Many banks (50 IDs fill banks of 2^8 bits to about 0.18, and 1e-7
     * takes 10 of them): only the first five are listed. */
    f = generic_build("hfb p=1e-7 bank-bits=8", ids, 50);
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    assert_true(amq_test_detail(&info, "banks")->value > 5);
    assert_true(amq_test_detail(&info, "banks_listed")->value == 5);
    assert_non_null(amq_test_detail(&info, "bank4_fill"));
    assert_null(amq_test_detail(&info, "bank5_fill"));
    amq_free(f);

    /* Small integers: a warning. */
    memset(ids, 0, (size_t)N * ID);
    for (size_t i = 0; i < N; i++) {
        ids[i * ID] = (uint8_t)i;
        ids[i * ID + 1] = (uint8_t)(i >> 8);
    }
    f = generic_build("hfb", ids, N);
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    assert_non_null(amq_test_detail(&info, "warning"));
    assert_string_equal(amq_test_detail(&info, "warning")->text, "ids look non-random");
    assert_true(amq_test_detail(&info, "deviation")->value > AMQ_HFB_NONRANDOM_DEVIATION);
    assert_true(info.detail_count <= AMQ_INFO_MAX_DETAILS);
    amq_free(f);
    free(ids);
}

static uint8_t *save_and_read(const amq_filter *f, const char *path, size_t *len)
{
    amq_diag diag = { .message = "" };
    if (amq_save(f, path, &diag) != AMQ_OK)
        fail_msg("saving %s: %s", path, diag.message);
    uint8_t *bytes = (uint8_t *)amq_test_read_file(path, len);
    assert_non_null(bytes);
    return bytes;
}

static void test_save_and_load(void **state)
{
    enum { N = 40000 };
    char path[AMQ_TEST_PATH_MAX], again[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(again, state, "again.amq");
    uint8_t *ids = random_ids(N, seed);
    uint8_t *others = random_ids(N, seed + 1);
    const char *specs[] = { "hfb", "hfb p=1e-3 bank-bits=17", "hfb p=0.2 bank-bits=15",
                            "hfb hash=md5 p=0.05" };
    for (size_t s = 0; s < 4; s++) {
        amq_filter *f = generic_build(specs[s], ids, N);
        size_t len = 0, len_again = 0;
        free(save_and_read(f, path, &len));
        for (unsigned flags = 0; flags <= AMQ_LOAD_MMAP; flags += AMQ_LOAD_MMAP) {
            amq_filter *loaded = NULL;
            amq_diag diag = { .message = "" };
            if (amq_load(&loaded, path, flags, &diag) != AMQ_OK)
                fail_msg("'%s' does not load: %s", specs[s], diag.message);
            for (size_t i = 0; i < N; i++) {
                assert_int_equal(amq_contains(loaded, ids + i * ID, ID), 1);
                assert_int_equal(amq_contains(loaded, others + i * ID, ID),
                                 amq_contains(f, others + i * ID, ID));
            }
            amq_info a, b;
            amq_info_get(&a, f);
            amq_info_get(&b, loaded);
            assert_int_equal(a.detail_count, b.detail_count);
            for (size_t i = 0; i < a.detail_count; i++) {
                assert_string_equal(a.details[i].name, b.details[i].name);
                assert_string_equal(a.details[i].text, b.details[i].text);
                assert_true(a.details[i].value == b.details[i].value);
            }
            assert_int_equal(a.hasher.kind, s == 3 ? AMQ_HASH_MD5 : AMQ_HASH_XXH3);
            assert_int_equal(b.hasher.kind, a.hasher.kind);
            /* Saved again, the same bytes. */
            uint8_t *first = (uint8_t *)amq_test_read_file(path, &len);
            uint8_t *second = save_and_read(loaded, again, &len_again);
            assert_int_equal(len, len_again);
            assert_memory_equal(first, second, len);
            free(first);
            free(second);
            amq_free(loaded);
        }
        amq_free(f);
    }
    free(others);
    free(ids);
}

static void test_flipped_and_truncated_files(void **state)
{
    char path[AMQ_TEST_PATH_MAX], damaged[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(damaged, state, "damaged.amq");
    uint8_t *ids = random_ids(60, seed);
    /* A Golomb-coded bank, and raw ones. */
    const char *specs[] = { "hfb", "hfb p=0.3 bank-bits=6" };
    for (size_t s = 0; s < 2; s++) {
        amq_filter *f = generic_build(specs[s], ids, 60);
        size_t len = 0;
        uint8_t *file = save_and_read(f, path, &len);
        amq_test_expect_damage_refused(damaged, file, len);
        free(file);
        amq_free(f);
    }
    free(ids);
}

/* The saved fields of a filter, to be changed and written back. */
typedef struct hfb_fields {
    uint8_t ids, banks;
    uint64_t id_count;
    double fpr, deviation;
    struct {
        uint8_t start, len, encoding, rice_bits;
        uint64_t weight, stored_bits;
    } bank[4];
    int extra_bytes;
} hfb_fields;

static void read_fields(hfb_fields *f, const amq__container *c)
{
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    memset(f, 0, sizeof *f);
    assert_int_equal(amq__params_get_u8(&r, &f->ids), AMQ_OK);
    assert_int_equal(amq__params_get_u8(&r, &f->banks), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &f->id_count), AMQ_OK);
    assert_int_equal(amq__params_get_f64(&r, &f->fpr), AMQ_OK);
    assert_int_equal(amq__params_get_f64(&r, &f->deviation), AMQ_OK);
    assert_true(f->banks <= 4);
    for (size_t i = 0; i < f->banks; i++) {
        assert_int_equal(amq__params_get_u8(&r, &f->bank[i].start), AMQ_OK);
        assert_int_equal(amq__params_get_u8(&r, &f->bank[i].len), AMQ_OK);
        assert_int_equal(amq__params_get_u8(&r, &f->bank[i].encoding), AMQ_OK);
        assert_int_equal(amq__params_get_u8(&r, &f->bank[i].rice_bits), AMQ_OK);
        assert_int_equal(amq__params_get_u64(&r, &f->bank[i].weight), AMQ_OK);
        assert_int_equal(amq__params_get_u64(&r, &f->bank[i].stored_bits), AMQ_OK);
    }
    assert_int_equal(amq__params_end(&r), AMQ_OK);
}

static void write_fields(amq__params_writer *w, const hfb_fields *f, size_t banks)
{
    amq__params_init(w);
    amq__params_put_u8(w, f->ids);
    amq__params_put_u8(w, f->banks);
    amq__params_put_u64(w, f->id_count);
    amq__params_put_f64(w, f->fpr);
    amq__params_put_f64(w, f->deviation);
    for (size_t i = 0; i < banks; i++) {
        amq__params_put_u8(w, f->bank[i].start);
        amq__params_put_u8(w, f->bank[i].len);
        amq__params_put_u8(w, f->bank[i].encoding);
        amq__params_put_u8(w, f->bank[i].rice_bits);
        amq__params_put_u64(w, f->bank[i].weight);
        amq__params_put_u64(w, f->bank[i].stored_bits);
    }
    for (int i = 0; i < f->extra_bytes; i++)
        amq__params_put_u8(w, 0);
    if (f->extra_bytes < 0)
        w->len -= (uint32_t)-f->extra_bytes;
}

static void test_damaged_parameters(void **state)
{
    enum { N = 300 };
    char path[AMQ_TEST_PATH_MAX], crafted[AMQ_TEST_PATH_MAX];
    amq_test_scratch_path(path, state, "f.amq");
    amq_test_scratch_path(crafted, state, "crafted.amq");
    uint8_t *ids = random_ids(N, seed);
    /* p = 1e-5 needs three banks of 2^14 bits at fill 0.018, all coded.
     * MD5 IDs, so that amq_test_expect_load can ask for a 1-byte key. */
    amq_filter *f = generic_build("hfb hash=md5 p=1e-5 bank-bits=14", ids, N);
    size_t len = 0;
    uint8_t *file = save_and_read(f, path, &len);
    amq_free(f);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, file, len, NULL), AMQ_OK);
    assert_int_equal(c.family, AMQ__FAMILY_HFB);
    hfb_fields good;
    read_fields(&good, &c);
    assert_int_equal(good.banks, 3);
    assert_int_equal(good.id_count, N);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(good.bank[i].len, 14);
        assert_int_equal(good.bank[i].encoding, AMQ_HFB_GOLOMB);
    }
    amq__params_writer w;
    write_fields(&w, &good, 3);
    assert_int_equal(w.len, c.params_len);
    assert_memory_equal(w.bytes, c.params, c.params_len);
    amq_test_write_container(crafted, c.family, &c.hasher, w.bytes, w.len, c.payload,
                             c.payload_len);
    amq_test_expect_load(crafted, NULL, "the file written again");

    struct {
        const char *what;
        hfb_fields f;
        size_t banks; /* written */
        const char *message;
    } cases[] = {
        { "ids kind 2", good, 3, "ids kind" },
        { "raw IDs with an MD5 hasher", good, 3, "hasher" },
        { "no banks", good, 0, "bank count" },
        { "129 banks", good, 3, "bank count" },
        { "a fourth bank missing", good, 3, "end inside bank" },
        { "target fpr 0", good, 3, "target fpr" },
        { "target fpr NaN", good, 3, "target fpr" },
        { "target fpr below the banks' product", good, 3, "above the target" },
        { "deviation -1", good, 3, "deviation" },
        { "deviation infinite", good, 3, "deviation" },
        { "len 0", good, 3, "len" },
        { "len 33", good, 3, "len" },
        { "lens differ", good, 3, "len" },
        { "a slice past bit 127", good, 3, "passes bit 127" },
        { "overlapping slices", good, 3, "overlaps" },
        { "weight 0", good, 3, "weight" },
        { "weight above the IDs", good, 3, "weight" },
        { "weights descending", good, 3, "emptier" },
        { "encoding 2", good, 3, "encoding" },
        { "Rice parameter above len", good, 3, "encoding" },
        { "a code too short for its weight", good, 3, "encoding" },
        { "a code longer than its gaps can make", good, 3, "encoding" },
        { "a code of 2^64 - 1 bits", good, 3, "encoding" },
        { "one position more", good, 3, "" },
        { "one position fewer", good, 3, "past its" },
        { "raw encoding for a coded bank", good, 3, "encoding" },
        { "no IDs", good, 3, "weight" },
        { "a byte more", good, 3, "trailing" },
        { "a byte fewer", good, 3, "end inside bank" },
    };
    cases[0].f.ids = 2;
    cases[1].f.ids = 0;
    cases[2].f.banks = 0;
    cases[3].f.banks = 129;
    cases[4].f.banks = 4;
    cases[5].f.fpr = 0;
    cases[6].f.fpr = NAN;
    cases[7].f.fpr = 1e-9;
    cases[8].f.deviation = -1;
    cases[9].f.deviation = INFINITY;
    cases[10].f.bank[1].len = 0;
    cases[11].f.bank[0].len = 33;
    cases[12].f.bank[2].len = 13;
    cases[13].f.bank[2].start = 120;
    cases[14].f.bank[1].start = (uint8_t)(good.bank[0].start + 1);
    cases[15].f.bank[0].weight = 0;
    cases[16].f.bank[2].weight = N + 1;
    cases[17].f.bank[1].weight = good.bank[0].weight - 1;
    cases[18].f.bank[1].encoding = 2;
    cases[19].f.bank[1].rice_bits = 15;
    cases[20].f.bank[2].stored_bits = good.bank[2].weight * (good.bank[2].rice_bits + 1) - 1;
    cases[21].f.bank[1].stored_bits = good.bank[1].weight * (good.bank[1].rice_bits + 1) +
                                      ((uint64_t)1 << (14 - good.bank[1].rice_bits)) + 1;
    cases[22].f.bank[0].stored_bits = UINT64_MAX;
    cases[23].f.bank[0].weight++;
    cases[24].f.bank[0].weight--;
    cases[25].f.bank[1].encoding = 0;
    cases[26].f.id_count = 0;
    cases[27].f.extra_bytes = 1;
    cases[28].f.extra_bytes = -1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_fields(&w, &cases[i].f, cases[i].banks);
        amq_hasher hasher = c.hasher;
        amq_test_write_container(crafted, c.family, &hasher, w.bytes, w.len, c.payload,
                                 c.payload_len);
        amq_test_expect_load(crafted, cases[i].message, "%s", cases[i].what);
    }

    /* The coded streams: a byte short or long, a padding bit set, a gap
     * that runs past 2^len, every byte changed. */
    amq_test_expect_payload_resize_refused(crafted, &c, "", "past its banks");
    uint8_t *payload = malloc((size_t)c.payload_len);
    assert_non_null(payload);
    memcpy(payload, c.payload, (size_t)c.payload_len);
    uint64_t first_bits = good.bank[0].stored_bits;
    if (first_bits % 8) {
        payload[first_bits / 8] |= 1;
        amq_test_write_container(crafted, c.family, &c.hasher, c.params, c.params_len, payload,
                                 c.payload_len);
        amq_test_expect_load(crafted, "padding", "a padding bit of bank 0 set");
        payload[first_bits / 8] &= (uint8_t)~1u;
    }
    /* The first gap's quotient made huge: ones from the start of bank 0. */
    memset(payload, 0xff, 4);
    amq_test_write_container(crafted, c.family, &c.hasher, c.params, c.params_len, payload,
                             c.payload_len);
    amq_test_expect_load(crafted, "", "a unary run across bank 0's first positions");
    memcpy(payload, c.payload, (size_t)c.payload_len);
    /* Every bit flipped. A flip in a Rice remainder moves a position and
     * leaves a valid code (in a file the checksum catches it); a flip in a
     * unary quotient changes the code's length and is refused. Either way
     * the loader answers AMQ_OK or AMQ_ECORRUPT. */
    size_t refused = 0;
    for (size_t i = 0; i < c.payload_len; i++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            payload[i] ^= (uint8_t)(1u << bit);
            amq_test_write_container(crafted, c.family, &c.hasher, c.params, c.params_len, payload,
                                     c.payload_len);
            amq_filter *loaded = (amq_filter *)&loaded;
            int status = amq_load(&loaded, crafted, 0, NULL);
            if (status == AMQ_OK) {
                amq_free(loaded);
            } else {
                assert_int_equal(status, AMQ_ECORRUPT);
                assert_null(loaded);
                refused++;
            }
            payload[i] ^= (uint8_t)(1u << bit);
        }
    }
    fprintf(stderr, "%zu of %llu single-bit changes of the coded banks refused\n", refused,
            (unsigned long long)c.payload_len * 8);
    assert_true(refused > c.payload_len * 8 / 10);
    free(payload);
    free(file);
    free(ids);
}

/* ---- the rate at small n and low p ------------------------------------------------- */

/* 1000 random IDs at p = 1e-6, 2 * 10^7 random absent ones: about as many
 * false positives as the banks' product of fills predicts (amq_info's
 * expected_fpr, within 5 standard deviations), and that at most p. Asked
 * in chunks of AMQ_TEST_BATCH IDs. */
static void test_fpr_small_n_low_p(void **state)
{
    (void)state;
    uint8_t *ids = random_ids(1000, seed);
    amq_filter *f = generic_build("hfb p=1e-6", ids, 1000);
    free(ids);
    amq_info info;
    assert_int_equal(amq_info_get(&info, f), AMQ_OK);
    assert_true(info.expected_fpr <= info.target_fpr);
    const uint64_t trials = 20000000;
    static uint8_t absent[AMQ_TEST_BATCH * ID];
    static const void *keys[AMQ_TEST_BATCH];
    static size_t lens[AMQ_TEST_BATCH];
    static uint8_t results[AMQ_TEST_BATCH];
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ 0x10e6);
    uint64_t positives = 0;
    for (uint64_t first = 0; first < trials; first += AMQ_TEST_BATCH) {
        for (size_t i = 0; i < AMQ_TEST_BATCH; i++) {
            for (int half = 0; half < 2; half++) {
                uint64_t word = amq_test_next(&rng);
                memcpy(absent + i * ID + half * 8, &word, 8);
            }
            keys[i] = absent + i * ID;
            lens[i] = ID;
        }
        size_t batch = trials - first < AMQ_TEST_BATCH ? (size_t)(trials - first) : AMQ_TEST_BATCH;
        assert_int_equal(amq_contains_many(results, f, keys, lens, batch), AMQ_OK);
        for (size_t i = 0; i < batch; i++)
            positives += results[i];
    }
    amq_test_expect_fpr("hfb p=1e-6, 1000 IDs", positives, trials, info.expected_fpr);
    amq_free(f);
}

int main(void)
{
    seed = amq_test_seed(0x4bfb);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_false_negatives),
        cmocka_unit_test(test_fpr_at_three_targets),
        cmocka_unit_test(test_slices_cross_bit_64),
        cmocka_unit_test(test_bank_selection),
        cmocka_unit_test(test_encoding_choice),
        cmocka_unit_test(test_default_len),
        cmocka_unit_test(test_duplicates_and_tiny_sets),
        cmocka_unit_test(test_nonrandom_ids),
        cmocka_unit_test(test_batch_and_filter_ids),
        cmocka_unit_test(test_md5_mode),
        cmocka_unit_test(test_parameter_errors),
        cmocka_unit_test(test_generic_spec_errors),
        cmocka_unit_test(test_generic_info),
        AMQ_TEST_WITH_SCRATCH(test_save_and_load),
        AMQ_TEST_WITH_SCRATCH(test_flipped_and_truncated_files),
        AMQ_TEST_WITH_SCRATCH(test_damaged_parameters),
        cmocka_unit_test(test_fpr_small_n_low_p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
