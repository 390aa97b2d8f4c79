/*
 * fuzz_spec.c - the spec parser on arbitrary text: through amq_new (the
 * families this build has; a filter that gets created is exercised and
 * freed; a spec whose table may take more than AMQ_FUZZ_MAX_BITS bits, by
 * an upper bound computed from its options, is parsed but not created,
 * since a fuzzer must not allocate gigabytes - the unit tests cover huge
 * sizes) and through amq__spec_parse over a family list that holds one
 * option of every type, so every value parser is reached whatever families
 * exist. Nothing may crash, leak, or succeed with a value out of range.
 */
#include "amq/amq.h"
#include "amq/bloom.h"
#include "core/family.h"
#include "core/spec.h"
#include "filter/filter.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const layouts[] = { "block", "split", NULL };
static const amq__option option_layout = {
    .name = "layout",
    .type = AMQ__OPTION_CHOICE,
    .choices = layouts,
};
static const amq__option option_growth = {
    .name = "growth",
    .type = AMQ__OPTION_REAL,
    .real_min = 1.5,
    .real_max = 16,
};
static const amq__option option_bits = {
    .name = "bits",
    .alias = "m",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = UINT64_MAX,
};
static const amq__option option_flag = { .name = "semi-sort", .type = AMQ__OPTION_FLAG };
static const amq__option *const options[] = {
    &amq__option_capacity, &amq__option_fpr, &amq__option_seed, &amq__option_hash, &amq__option_key,
    &option_layout,        &option_growth,   &option_bits,      &option_flag,      NULL,
};
static const amq__family every_type = { .name = "every-type", .id = 62, .options = options };
static const amq__family *const families[] = { &every_type, NULL };

static void check_values(const amq__spec *spec)
{
    for (size_t i = 0; options[i]; i++) {
        const amq__option_value *v = &spec->values[i];
        if (!v->set)
            continue;
        const amq__option *o = options[i];
        switch (o->type) {
        case AMQ__OPTION_COUNT:
            if (v->count < o->count_min || v->count > o->count_max)
                abort();
            break;
        case AMQ__OPTION_PROBABILITY:
            if (!(v->real > 0 && v->real < 1))
                abort();
            break;
        case AMQ__OPTION_REAL:
            if (!(v->real >= o->real_min && v->real <= o->real_max))
                abort();
            break;
        default:
            break;
        }
    }
}

/* The most bits a filter fuzz_spec creates may take: specs whose bound
 * (spec_bits_bound) is larger are parsed but not created, so that no run
 * allocates more than 128 MiB for a filter, far below libFuzzer's malloc
 * limit (fuzz/README.md). The unit tests cover huge sizes. */
#define AMQ_FUZZ_MAX_BITS ((double)((uint64_t)1 << 30))

/* The value of the spec's option called name, or NULL when it is unset or
 * the family has no such option. */
static const amq__option_value *option_value(const amq__spec *spec, const char *name,
                                             const amq__option **option)
{
    const amq__option *const *list = spec->family->options;
    for (size_t i = 0; list[i]; i++) {
        if (strcmp(list[i]->name, name) == 0 && spec->values[i].set) {
            if (option)
                *option = list[i];
            return &spec->values[i];
        }
    }
    return NULL;
}

/* The bits per key of a classic Bloom filter at rate p: with k hashes,
 * -k / ln(1 - p^(1/k)); with the best k (k = 0), -ln p / (ln 2)^2. */
static double bloom_bits_per_key(double p, double k)
{
    if (k > 0)
        return -k / log1p(-pow(p, 1 / k));
    const double ln2 = 0.69314718055994530942;
    return -log(p) / (ln2 * ln2);
}

/* An upper bound on the bits of the table amq_new makes for a spec, from
 * the options that size it, with a margin over each family's own sizing
 * (src/bloom, src/cuckoo): at least a bit per key; a blocked Bloom filter
 * sized by its capacity at most AMQ_BLOCKED_BLOOM_MAX_BITS_PER_KEY bits per
 * key (or its allowance), and given its bits about as many; a scalable
 * one's first stage at most 256 bits per key of a stage capacity of n or a
 * few thousand; a cuckoo table its fingerprints at a load of 0.66 or more.
 * Any other family is given a wide margin. */
static double spec_bits_bound(const amq__spec *spec)
{
    const char *family = spec->family->name;
    double n = (double)amq__spec_count(spec, &amq__option_capacity, 1000);
    double p = amq__spec_real(spec, &amq__option_fpr, 0.01);
    const amq__option_value *v = option_value(spec, "bits", NULL);
    double bits = v ? (double)v->count : 0;
    v = option_value(spec, "hashes", NULL);
    double k = v ? (double)v->count : 0;
    double slack = (double)(1 << 20);
    if (strcmp(family, "cuckoo") == 0) {
        v = option_value(spec, "fingerprint-bits", NULL);
        double fingerprint = v ? (double)v->count : 32;
        return 2 * n * fingerprint + slack;
    }
    if (strcmp(family, "scalable-bloom") == 0)
        return 256 * 2 * n + 16 * slack;
    if (strcmp(family, "blocked-bloom") == 0)
        return bits > 0 ? 2 * bits + slack
                        : fmax(AMQ_BLOCKED_BLOOM_MAX_BITS_PER_KEY * n,
                               (double)AMQ_BLOCKED_BLOOM_ALLOWANCE_BITS) +
                              slack;
    const amq__option *o = NULL;
    double table = bits > 0 ? bits : n * fmax(bloom_bits_per_key(p, k), 1);
    if (strcmp(family, "bloom") == 0)
        return 1.25 * table + slack;
    if (strcmp(family, "counting-bloom") == 0) {
        v = option_value(spec, "counter-bits", &o);
        return 1.25 * (v ? atof(o->choices[v->choice]) : 4) * table + slack;
    }
    return 16 * n * bloom_bits_per_key(p, 0) + 16 * bits + slack;
}

/* Whether the filter the text asks for is small enough to create: its
 * bound at most AMQ_FUZZ_MAX_BITS, and no count the spec gives (but the
 * seed) larger. */
static int small_enough(const char *text)
{
    amq__spec spec;
    if (amq__spec_parse(&spec, text, amq__family_table(), NULL) != AMQ_OK)
        return 1; /* amq_new will refuse it without allocating */
    if (!(spec_bits_bound(&spec) <= AMQ_FUZZ_MAX_BITS))
        return 0;
    const amq__option *const *list = spec.family->options;
    for (size_t i = 0; list[i]; i++)
        if (spec.values[i].set && list[i]->type == AMQ__OPTION_COUNT &&
            list[i] != &amq__option_seed && (double)spec.values[i].count > AMQ_FUZZ_MAX_BITS)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;

    amq_diag diag;
    amq__spec spec;
    if (amq__spec_parse(&spec, text, families, &diag) == AMQ_OK) {
        check_values(&spec);
        amq_hasher hasher;
        (void)amq__spec_hasher(&spec, &hasher, 0, &diag);
    } else if (memchr(diag.message, 0, sizeof diag.message) == NULL) {
        abort(); /* the message must be terminated */
    }

    amq_filter *f = NULL;
    if (small_enough(text) && amq_new(&f, text, &diag) == AMQ_OK) {
        (void)amq_add(f, data, size);
        if (amq_contains(f, data, size) == 0)
            abort(); /* no false negatives */
        amq_free(f);
    }
    free(text);
    return 0;
}
