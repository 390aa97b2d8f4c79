/*
 * Tests for hostile keys and secret seeds (docs/SECURITY.md).
 *
 * An attacker who knows a filter's hasher - the default, XXH3 with seed 0,
 * is known to everyone - can search offline for keys that hurt it. Three
 * such attacks are made here by brute force under the default seed, and
 * each is shown to fail against a filter whose seed is secret (seed=random):
 *
 *   - cuckoo: keys that share one bucket pair, at most b / 2 of them of
 *     one fingerprint (copies of a fingerprint past b / 2 are counted, not
 *     stored, so keys of one fingerprint alone fill nothing). A
 *     default-seed filter takes 2b + 1 of them (2b slots and the stash) and
 *     then refuses every key; a random-seed filter takes all of them.
 *   - bloom, fill: keys each of whose k positions is a bit not yet set, so
 *     that n keys set n*k bits instead of m(1 - (1 - 1/m)^(nk)), and the
 *     false-positive rate of everyone's queries rises. Under a random seed
 *     the same keys set the usual number of bits, within a binomial
 *     tolerance.
 *   - bloom, false positives: keys the default-seed filter answers "maybe"
 *     for though they were never added. Under a random seed they are false
 *     positives at the filter's usual rate, within a binomial tolerance.
 *
 * The searches use fixed filters and keys (reproducible: the seed printed
 * is the test keys'); the random seeds are new each run and the tests must
 * pass whatever they are: every tolerance is six standard deviations wide,
 * beyond which a run fails with a chance below 10^-8.
 *
 * Then seed=random (and key=random) itself: every family that takes a seed
 * draws a new one each time, a saved filter keeps it and answers alike
 * after loading, what refuses it says why, and a failing source of random
 * bytes is an error, never a predictable seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/inline.h"
#include "core/random.h"
#include "test_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A candidate key: "hostile-" and a counter, as an attacker would try
 * them. */
typedef struct candidate {
    char text[32];
    size_t len;
} candidate;

static candidate make_candidate(uint64_t i)
{
    candidate c;
    int n = snprintf(c.text, sizeof c.text, "hostile-%llu", (unsigned long long)i);
    c.len = (size_t)n;
    return c;
}

/* Within six standard deviations of a binomial(trials, p), plus one for
 * rounding. */
static bool within_binomial(double observed, double trials, double p)
{
    double mean = trials * p;
    double sd = sqrt(trials * p * (1 - p));
    return fabs(observed - mean) <= 6 * sd + 1;
}

/* ---- cuckoo: one bucket pair, few fingerprints ----------------------------------- */

enum { CUCKOO_CAPACITY = 64, CUCKOO_FINGERPRINT_BITS = 8, CUCKOO_BUCKET_SIZE = 4 };
enum { CUCKOO_CRAFTED = 2 * CUCKOO_BUCKET_SIZE + 2 }; /* past 2b + 1 */

static void cuckoo_params(amq_cuckoo_params *params)
{
    amq_cuckoo_params_init(params);
    params->capacity = CUCKOO_CAPACITY;
    params->fingerprint_bits = CUCKOO_FINGERPRINT_BITS;
    params->bucket_size = CUCKOO_BUCKET_SIZE;
    params->growth = 0; /* a full filter refuses: no new table to flee to */
}

/* A key's first bucket and fingerprint, as src/cuckoo/cuckoo.c's top
 * describes them: fp = 1 + lo32(h) (2^f - 1) / 2^32, i1 = hi32(h) B / 2^32. */
static uint64_t cuckoo_bucket(uint64_t hash, uint64_t buckets)
{
    return ((hash >> 32) * buckets) >> 32;
}

static uint32_t cuckoo_fingerprint(uint64_t hash, uint32_t bits)
{
    uint64_t range = ((uint64_t)1 << bits) - 1;
    return 1 + (uint32_t)(((hash & 0xffffffffu) * range) >> 32);
}

/* Search candidates for count keys of bucket 0 and one alternate under
 * hasher, at most b / 2 of them of one fingerprint: copies of one
 * fingerprint past b / 2 are counted, not stored, so filling the pair takes
 * keys of several fingerprints with the same alternate bucket (about
 * 2^f / buckets of them share each one; the alternate taken is the one the
 * most share). Returns the candidates tried. */
static uint64_t craft_cuckoo_keys(candidate *out, size_t count, const amq_hasher *hasher,
                                  uint64_t buckets)
{
    enum { FINGERPRINTS = 1 << CUCKOO_FINGERPRINT_BITS };
    unsigned sharing[FINGERPRINTS] = { 0 }; /* by alternate of bucket 0 (< buckets) */
    for (uint32_t fp = 1; fp < FINGERPRINTS; fp++)
        sharing[amq_cuckoo_view_alternate(0, fp, buckets)]++;
    uint64_t other = 0;
    for (uint64_t b = 1; b < buckets; b++)
        if (sharing[b] > sharing[other])
            other = b;
    assert_true(sharing[other] * (CUCKOO_BUCKET_SIZE / 2) >= count);
    uint64_t tried = 0;
    size_t found = 0;
    unsigned of_fingerprint[FINGERPRINTS] = { 0 };
    while (found < count) {
        candidate c = make_candidate(tried++);
        uint64_t h = amq_hash64(hasher, c.text, c.len);
        uint32_t fp = cuckoo_fingerprint(h, CUCKOO_FINGERPRINT_BITS);
        if (cuckoo_bucket(h, buckets) == 0 && amq_cuckoo_view_alternate(0, fp, buckets) == other &&
            of_fingerprint[fp] < CUCKOO_BUCKET_SIZE / 2) {
            of_fingerprint[fp]++;
            out[found++] = c;
        }
    }
    return tried;
}

/* Add the keys in order; returns how many went in before the first
 * refusal, which must be AMQ_EFULL, as must every add after it. */
static size_t cuckoo_accepted(amq_cuckoo *f, const candidate *keys, size_t count)
{
    size_t accepted = 0;
    for (size_t i = 0; i < count; i++) {
        int status = amq_cuckoo_add(f, keys[i].text, keys[i].len);
        if (status == AMQ_OK && accepted == i)
            accepted++;
        else
            assert_int_equal(status, AMQ_EFULL);
    }
    return accepted;
}

static void test_cuckoo_bucket_pair_attack(void **state)
{
    (void)state;
    amq_cuckoo_params params;
    cuckoo_params(&params);
    amq_cuckoo *plain = NULL;
    assert_int_equal(amq_cuckoo_new(&plain, &params, NULL), AMQ_OK);
    uint64_t buckets = amq_cuckoo_table_buckets(plain, 0);
    candidate keys[CUCKOO_CRAFTED];
    uint64_t tried = craft_cuckoo_keys(keys, CUCKOO_CRAFTED, amq_cuckoo_hasher(plain), buckets);
    fprintf(stderr,
            "cuckoo: %llu buckets of %d, f = %d: %d keys of one bucket pair, at most %d of a "
            "fingerprint, in %llu tries\n",
            (unsigned long long)buckets, CUCKOO_BUCKET_SIZE, CUCKOO_FINGERPRINT_BITS,
            CUCKOO_CRAFTED, CUCKOO_BUCKET_SIZE / 2, (unsigned long long)tried);

    /* The default seed: 2b slots of the pair, then the stash (b + 1 if the
     * pair is one bucket twice), then nothing - not even an honest key. */
    size_t accepted = cuckoo_accepted(plain, keys, CUCKOO_CRAFTED);
    fprintf(stderr, "cuckoo: the default seed takes %zu of them, then is full\n", accepted);
    assert_true(accepted <= 2 * CUCKOO_BUCKET_SIZE + 1);
    assert_true(accepted >= CUCKOO_BUCKET_SIZE + 1);
    assert_true(amq_cuckoo_full(plain));
    assert_int_equal(amq_cuckoo_add(plain, "an honest key", 13), AMQ_EFULL);
    assert_true(amq_cuckoo_load_factor(plain) < 0.1);
    amq_cuckoo_free(plain);

    /* A random seed, typed: every one of them goes in, and then the
     * capacity's worth of other keys too. */
    amq_cuckoo *secret = NULL;
    assert_int_equal(amq_hasher_random(&params.hasher, AMQ_HASH_XXH3, NULL), AMQ_OK);
    assert_int_equal(amq_cuckoo_new(&secret, &params, NULL), AMQ_OK);
    assert_int_equal(cuckoo_accepted(secret, keys, CUCKOO_CRAFTED), CUCKOO_CRAFTED);
    for (size_t i = 0; i < CUCKOO_CAPACITY - CUCKOO_CRAFTED; i++) {
        candidate c = make_candidate(UINT64_MAX - i);
        assert_int_equal(amq_cuckoo_add(secret, c.text, c.len), AMQ_OK);
    }
    assert_false(amq_cuckoo_full(secret));
    for (size_t i = 0; i < CUCKOO_CRAFTED; i++)
        assert_true(amq_cuckoo_contains(secret, keys[i].text, keys[i].len));
    amq_cuckoo_free(secret);

    /* And through a spec, with seed=random or a random SipHash key. */
    const char *const specs[] = {
        "cuckoo n=64 fingerprint-bits=8 bucket-size=4 growth=0 seed=random",
        "cuckoo n=64 fingerprint-bits=8 bucket-size=4 growth=0 hash=siphash key=random",
    };
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        amq_filter *f = NULL;
        amq_diag diag = { .message = "" };
        if (amq_new(&f, specs[s], &diag) != AMQ_OK)
            fail_msg("%s: %s", specs[s], diag.message);
        for (size_t i = 0; i < CUCKOO_CRAFTED; i++)
            assert_int_equal(amq_add(f, keys[i].text, keys[i].len), AMQ_OK);
        for (size_t i = 0; i < CUCKOO_CRAFTED; i++)
            assert_int_equal(amq_contains(f, keys[i].text, keys[i].len), 1);
        amq_free(f);
    }
}

/* ---- bloom: keys that fill it, keys that are false positives -------------------- */

enum { BLOOM_CAPACITY = 200, BLOOM_QUERIES = 400 };

static void bloom_params(amq_bloom_params *params)
{
    amq_bloom_params_init(params);
    params->capacity = BLOOM_CAPACITY;
    params->fpr = 0.01;
}

/* floor(x m / 2^64). */
static uint64_t reduce(uint64_t x, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)x * m) >> 64);
}

/* A key's k positions, by probe version 2 (docs/FORMAT.md, every new
 * filter's): s0 = h.low, s(i+1) = s(i) * 0xd1342543de82ef95 + (h.high | 1),
 * position i = reduce(s(i), m). */
static void bloom_positions(uint64_t *out, amq_u128 h, uint64_t m, uint32_t k)
{
    uint64_t s = h.low;
    for (uint32_t i = 0; i < k; i++) {
        out[i] = reduce(s, m);
        s = s * 0xd1342543de82ef95ULL + (h.high | 1);
    }
}

/* The fill attack: count keys each of whose k positions is distinct and
 * unset in set (a bitmap of m bits, updated). Returns the tries. */
static uint64_t craft_filling_keys(candidate *out, size_t count, const amq_hasher *hasher,
                                   uint64_t m, uint32_t k, uint8_t *set)
{
    uint64_t tried = 0, positions[AMQ_BLOOM_MAX_HASHES];
    for (size_t found = 0; found < count;) {
        candidate c = make_candidate(tried++);
        bloom_positions(positions, amq_hash128(hasher, c.text, c.len), m, k);
        bool fresh = true;
        for (uint32_t i = 0; i < k && fresh; i++) {
            fresh = !(set[positions[i] / 8] >> (positions[i] % 8) & 1);
            for (uint32_t j = 0; j < i && fresh; j++)
                fresh = positions[j] != positions[i];
        }
        if (!fresh)
            continue;
        for (uint32_t i = 0; i < k; i++)
            set[positions[i] / 8] |= (uint8_t)(1u << (positions[i] % 8));
        out[found++] = c;
    }
    return tried;
}

static void test_bloom_fill_attack(void **state)
{
    (void)state;
    amq_bloom_params params;
    bloom_params(&params);
    amq_bloom *plain = NULL;
    assert_int_equal(amq_bloom_new(&plain, &params, NULL), AMQ_OK);
    uint64_t m = amq_bloom_bits(plain);
    uint32_t k = amq_bloom_hashes(plain);
    uint8_t *set = calloc((size_t)(m + 7) / 8, 1);
    candidate *keys = malloc(BLOOM_CAPACITY * sizeof *keys);
    assert_non_null(set);
    assert_non_null(keys);
    uint64_t tried = craft_filling_keys(keys, BLOOM_CAPACITY, amq_bloom_hasher(plain), m, k, set);
    for (size_t i = 0; i < BLOOM_CAPACITY; i++)
        amq_bloom_add(plain, keys[i].text, keys[i].len);

    /* Under the default seed every key set k new bits. */
    double usual = (double)m * -expm1((double)BLOOM_CAPACITY * k * log1p(-1.0 / (double)m));
    uint64_t plain_set = amq_bloom_bits_set(plain);
    fprintf(stderr,
            "bloom fill: m = %llu, k = %u, %d keys found in %llu tries set %llu bits (%.0f%%; "
            "FPR %.3g) where honest keys set %.0f (%.0f%%; FPR %.3g)\n",
            (unsigned long long)m, k, BLOOM_CAPACITY, (unsigned long long)tried,
            (unsigned long long)plain_set, 100.0 * (double)plain_set / (double)m,
            amq_bloom_expected_fpr(plain), usual, 100 * usual / (double)m,
            pow(usual / (double)m, k));
    assert_int_equal(plain_set, (uint64_t)BLOOM_CAPACITY * k);
    assert_false(within_binomial((double)plain_set, (double)m, usual / (double)m));

    /* Under a random seed they are keys like any other. */
    amq_bloom *secret = NULL;
    assert_int_equal(amq_hasher_random(&params.hasher, AMQ_HASH_XXH3, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_new(&secret, &params, NULL), AMQ_OK);
    for (size_t i = 0; i < BLOOM_CAPACITY; i++)
        amq_bloom_add(secret, keys[i].text, keys[i].len);
    uint64_t secret_set = amq_bloom_bits_set(secret);
    fprintf(stderr, "bloom fill: a random seed: %llu bits (%.0f%%; FPR %.3g)\n",
            (unsigned long long)secret_set, 100.0 * (double)secret_set / (double)m,
            amq_bloom_expected_fpr(secret));
    /* The count of set bits varies less than a binomial's (the bits are
     * negatively correlated): its tolerance is a generous one. */
    if (!within_binomial((double)secret_set, (double)m, usual / (double)m))
        fail_msg("a random seed set %llu bits; %.1f expected", (unsigned long long)secret_set,
                 usual);
    assert_true(amq_bloom_expected_fpr(secret) < 2 * params.fpr);
    amq_bloom_free(secret);
    amq_bloom_free(plain);
    free(keys);
    free(set);
}

static void test_bloom_false_positive_attack(void **state)
{
    (void)state;
    uint64_t seed = amq_test_seed(2718);
    amq_test_keys honest;
    amq_test_keys_make(&honest, seed, 0, BLOOM_CAPACITY);

    amq_bloom_params params;
    bloom_params(&params);
    amq_bloom *plain = NULL, *secret = NULL;
    assert_int_equal(amq_bloom_new(&plain, &params, NULL), AMQ_OK);
    assert_int_equal(amq_hasher_random(&params.hasher, AMQ_HASH_XXH3, NULL), AMQ_OK);
    assert_int_equal(amq_bloom_new(&secret, &params, NULL), AMQ_OK);
    for (size_t i = 0; i < honest.count; i++) {
        amq_bloom_add(plain, honest.pointers[i], honest.lens[i]);
        amq_bloom_add(secret, honest.pointers[i], honest.lens[i]);
    }

    /* Keys never added that the default-seed filter says it may hold. */
    candidate *keys = malloc(BLOOM_QUERIES * sizeof *keys);
    assert_non_null(keys);
    uint64_t tried = 0;
    for (size_t found = 0; found < BLOOM_QUERIES;) {
        candidate c = make_candidate(tried++);
        if (amq_bloom_contains(plain, c.text, c.len))
            keys[found++] = c;
    }
    /* The secret filter answers them as it answers any absent key. */
    uint64_t maybe = 0;
    for (size_t i = 0; i < BLOOM_QUERIES; i++)
        maybe += amq_bloom_contains(secret, keys[i].text, keys[i].len);
    double rate = amq_bloom_expected_fpr(secret);
    fprintf(stderr,
            "bloom false positives: %d found in %llu tries (rate %.3g); a random seed answers "
            "maybe for %llu of them (%.3g; expected %.3g)\n",
            BLOOM_QUERIES, (unsigned long long)tried, (double)BLOOM_QUERIES / (double)tried,
            (unsigned long long)maybe, (double)maybe / BLOOM_QUERIES, rate);
    if (!within_binomial((double)maybe, BLOOM_QUERIES, rate))
        fail_msg("%llu of %d crafted keys are false positives under a random seed; %.1f "
                 "expected",
                 (unsigned long long)maybe, BLOOM_QUERIES, rate * BLOOM_QUERIES);
    amq_bloom_free(plain);
    amq_bloom_free(secret);
    free(keys);
    amq_test_keys_free(&honest);
}

/* ---- seed=random ------------------------------------------------------------- */

/* "TYPE seed=random", with a capacity for the types amq_new makes. */
static void random_spec(char *out, size_t cap, const char *family, const char *hash)
{
    snprintf(out, cap, "%s %s", family, hash);
}

static bool takes_seed(const char *family)
{
    amq_option_info o;
    for (size_t i = 0; amq_family_option(&o, family, i) == AMQ_OK; i++)
        if (strcmp(o.name, "seed") == 0)
            return strcmp(family, "hfb") != 0; /* listed only to be refused */
    return false;
}

static void test_seed_random_in_every_family(void **state)
{
    (void)state;
    uint64_t seed = amq_test_seed(31);
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, 500);
    const char *const hashes[] = { "seed=random", "hash=siphash key=random" };
    size_t families = 0;
    for (size_t t = 0; amq_family_at(t); t++) {
        const char *family = amq_family_at(t);
        if (!takes_seed(family))
            continue;
        families++;
        for (size_t h = 0; h < sizeof hashes / sizeof hashes[0]; h++) {
            char spec[128];
            random_spec(spec, sizeof spec, family, hashes[h]);
            amq_filter *a = NULL, *b = NULL, *loaded = NULL;
            amq_diag diag = { .message = "" };
            if (amq_build(&a, spec, keys.pointers, keys.lens, keys.count, &diag) != AMQ_OK)
                fail_msg("%s: %s", spec, diag.message);
            assert_int_equal(amq_build(&b, spec, keys.pointers, keys.lens, keys.count, &diag),
                             AMQ_OK);
            amq_info ia, ib;
            amq_info_get(&ia, a);
            amq_info_get(&ib, b);
            assert_int_equal(ia.hasher.kind, h == 0 ? AMQ_HASH_XXH3 : AMQ_HASH_SIPHASH);
            /* Two draws differ (by chance with odds 2^-64 at worst). */
            if (memcmp(&ia.hasher, &ib.hasher, sizeof ia.hasher) == 0)
                fail_msg("%s: two filters got the same seed", spec);
            static const uint8_t zero[16];
            assert_true(memcmp(ia.hasher.key, zero, 16) != 0);
            assert_int_equal(amq_hasher_check(&ia.hasher, NULL), AMQ_OK);

            /* Saved and loaded: the same hasher, the same answers. */
            uint8_t *bytes = NULL;
            size_t len = 0;
            assert_int_equal(amq_save_to_memory(&bytes, &len, a, NULL), AMQ_OK);
            assert_int_equal(amq_load_from_memory(&loaded, bytes, len, 0, &diag), AMQ_OK);
            amq_info il;
            amq_info_get(&il, loaded);
            assert_memory_equal(&il.hasher, &ia.hasher, sizeof il.hasher);
            amq_test_expect_same_answers(a, loaded, seed, 2000);
            for (size_t i = 0; i < keys.count; i++)
                assert_int_equal(amq_contains(loaded, keys.pointers[i], keys.lens[i]), 1);
            free(bytes);
            amq_free(a);
            amq_free(b);
            amq_free(loaded);
        }
    }
    /* bloom, blocked-bloom, counting-bloom, scalable-bloom, cuckoo, gcs,
     * fuse8, fuse16 in a full build. */
    assert_true(families >= 1);
    amq_test_keys_free(&keys);
}

static void test_seed_random_refusals(void **state)
{
    (void)state;
    static const amq_test_spec_case cases[] = {
        { "bloom n=100 hash=siphash seed=random", AMQ_EINVAL, "key=random" },
        { "bloom n=100 hash=md5 seed=random", AMQ_EINVAL, "takes no seed" },
        { "bloom n=100 key=random", AMQ_EINVAL, "siphash only" },
        { "bloom n=100 seed=randomly", AMQ_EINVAL, "option 'seed'" },
        { "bloom n=100 hash=siphash key=Random", AMQ_EINVAL, "option 'key'" },
    };
    amq_test_expect_spec_errors(cases, sizeof cases / sizeof cases[0]);

    /* hfb takes no seed at all, random or not. */
    const void *id = "0123456789abcdef";
    size_t len = 16;
    amq_filter *f = NULL;
    amq_diag diag = { .message = "" };
    if (amq_family_capabilities("hfb") >= 0) {
        assert_int_equal(amq_build(&f, "hfb seed=random", &id, &len, 1, &diag), AMQ_EINVAL);
        assert_non_null(strstr(diag.message, "seed"));
        assert_null(f);
    }
}

static void test_hasher_random(void **state)
{
    (void)state;
    amq_hasher a, b;
    assert_int_equal(amq_hasher_random(&a, AMQ_HASH_XXH3, NULL), AMQ_OK);
    assert_int_equal(amq_hasher_random(&b, AMQ_HASH_XXH3, NULL), AMQ_OK);
    assert_int_equal(a.kind, AMQ_HASH_XXH3);
    assert_int_equal(amq_hasher_check(&a, NULL), AMQ_OK); /* bytes 8..15 zero */
    assert_memory_not_equal(&a, &b, sizeof a);
    assert_int_equal(amq_hasher_random(&a, AMQ_HASH_SIPHASH, NULL), AMQ_OK);
    assert_int_equal(a.kind, AMQ_HASH_SIPHASH);
    assert_int_equal(amq_hasher_check(&a, NULL), AMQ_OK);

    /* The bytes look random: over 64 draws of 128 bits, about half set. */
    uint64_t ones = 0;
    for (int i = 0; i < 64; i++) {
        assert_int_equal(amq_hasher_random(&a, AMQ_HASH_SIPHASH, NULL), AMQ_OK);
        for (int j = 0; j < 16; j++)
            ones += (uint64_t)__builtin_popcount(a.key[j]);
    }
    assert_true(within_binomial((double)ones, 64 * 128, 0.5));

    amq_diag diag = { .message = "" };
    b = a;
    assert_int_equal(amq_hasher_random(&b, AMQ_HASH_MD5, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "md5"));
    assert_memory_equal(&a, &b, sizeof a);
    assert_int_equal(amq_hasher_random(&b, (amq_hash_kind)9, NULL), AMQ_EINVAL);
    assert_int_equal(amq_hasher_random(NULL, AMQ_HASH_XXH3, NULL), AMQ_EINVAL);
}

/* The operating system's bytes: the device fallback works, and when
 * neither source gives any the call fails, saying what it tried. */
static void test_random_sources(void **state)
{
    (void)state;
    uint8_t bytes[64] = { 0 }, zero[64] = { 0 };
    assert_int_equal(amq__random_bytes(bytes, sizeof bytes, NULL), AMQ_OK);
    assert_memory_not_equal(bytes, zero, sizeof bytes);
    memset(bytes, 0, sizeof bytes);
    assert_int_equal(amq__random_bytes_from(bytes, sizeof bytes, false, "/dev/urandom", NULL),
                     AMQ_OK);
    assert_memory_not_equal(bytes, zero, sizeof bytes);

    amq_diag diag = { .message = "" };
    memset(bytes, 0x5a, sizeof bytes);
    assert_int_equal(
        amq__random_bytes_from(bytes, sizeof bytes, false, "/nonexistent/amq-urandom", &diag),
        AMQ_EIO);
    assert_int_equal(errno, ENOENT);
    assert_non_null(strstr(diag.message, "cannot draw a random seed"));
    assert_non_null(strstr(diag.message, "/nonexistent/amq-urandom"));
    assert_memory_equal(bytes, zero, sizeof bytes); /* nothing half-random left */
    /* A file that ends early is no source either. */
    memset(&diag, 0, sizeof diag);
    assert_int_equal(amq__random_bytes_from(bytes, sizeof bytes, false, "/dev/null", &diag),
                     AMQ_EIO);
    assert_non_null(strstr(diag.message, "/dev/null"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuckoo_bucket_pair_attack),
        cmocka_unit_test(test_bloom_fill_attack),
        cmocka_unit_test(test_bloom_false_positive_attack),
        cmocka_unit_test(test_seed_random_in_every_family),
        cmocka_unit_test(test_seed_random_refusals),
        cmocka_unit_test(test_hasher_random),
        cmocka_unit_test(test_random_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
