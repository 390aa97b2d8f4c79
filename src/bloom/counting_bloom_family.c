/*
 * counting_bloom_family.c - the counting Bloom filter seen through the
 * generic handle (core/family.h): its spec options, adds, removals and
 * queries by the typed calls, the saved form (the parameter block and
 * payload described at the top of counting_bloom.c), loading (every field
 * and the invariants checked) and info. The filter is explained at the top
 * of counting_bloom.c.
 */
#include "bloom/bloom_internal.h"

#include "core/family.h"
#include "core/hash.h"
#include "core/util.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The size of a parameter block: u64 m, u32 k, u32 w, u64 capacity,
 * f64 p, u64 non-zero, u64 saturated, then u32 probe version, which a
 * version-1 filter leaves out. */
#define COUNTING_PARAMS_SIZE_V1 48
#define COUNTING_PARAMS_SIZE_V2 52

/* ---- the generic handle's view ------------------------------------------------- */

static const amq__option option_counters = {
    .name = "bits",
    .alias = "m",
    .type = AMQ__OPTION_COUNT,
    .count_min = AMQ_BLOOM_MIN_BITS,
    .count_max = AMQ_BLOOM_MAX_BITS,
    .value_name = "M",
    .help = "the number of counters (default: the best for capacity and fpr)",
};
static const amq__option option_hashes = {
    .name = "hashes",
    .alias = "k",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = AMQ_BLOOM_MAX_HASHES,
    .value_name = "K",
    .help = "the counters per key (default: the best for bits and capacity)",
};
static const char *const counter_bits_choices[] = { "4", "8", NULL };
static const uint32_t counter_bits_values[] = { 4, 8 };
static const amq__option option_counter_bits = {
    .name = "counter-bits",
    .type = AMQ__OPTION_CHOICE,
    .choices = counter_bits_choices,
    .help = "the width of a counter in bits (default 4)",
};

static const amq__option *const counting_options[] = {
    &amq__option_capacity, &amq__option_fpr,     &option_counters,
    &option_hashes,        &option_counter_bits, &amq__option_seed,
    &amq__option_hash,     &amq__option_key,     NULL,
};

static int family_create(void **state, const amq__spec *spec, amq_diag *diag)
{
    amq_counting_bloom_params params = {
        .capacity = amq__spec_count(spec, &amq__option_capacity, 0),
        .fpr = amq__spec_real(spec, &amq__option_fpr, 0.01),
        .counters = amq__spec_count(spec, &option_counters, 0),
        .hashes = (uint32_t)amq__spec_count(spec, &option_hashes, 0),
        .counter_bits = counter_bits_values[amq__spec_choice(spec, &option_counter_bits, 0)],
    };
    int status = amq__spec_hasher(spec, &params.hasher, 0, diag);
    if (status != AMQ_OK)
        return status;
    amq_counting_bloom *f;
    status = amq__counting_bloom_new(&f, &params, AMQ__BLOOM_PROBE_LATEST, diag);
    *state = f;
    return status;
}

static int family_add(void *state, const void *key, size_t len)
{
    amq_counting_bloom_add(state, key, len);
    return AMQ_OK;
}

/* One hash for the question and the increment. */
static int family_add_unique(void *state, const void *key, size_t len)
{
    amq_counting_bloom *f = state;
    amq_u128 hash = amq__hash128(&f->hasher, key, len);
    if (amq_counting_bloom_contains_hash(f, hash))
        return 0;
    amq_counting_bloom_add_hash(f, hash);
    return 1;
}

static size_t family_add_many(void *state, const void *const *keys, const size_t *lens,
                              size_t count, int *results)
{
    size_t handled = 0;
    amq_counting_bloom_add_many(results, &handled, state, keys, lens, count);
    return handled;
}

static int family_remove(void *state, const void *key, size_t len)
{
    return amq_counting_bloom_remove(state, key, len);
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_counting_bloom_contains(state, key, len);
}

static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    amq_counting_bloom_contains_many(results, state, keys, lens, count);
    return AMQ_OK;
}

static int family_merge(void *state, const void *other, amq_diag *diag)
{
    return amq_counting_bloom_merge(state, other, diag);
}

static int family_save(const void *state, amq__saved *out)
{
    const amq_counting_bloom *f = state;
    out->hasher = f->hasher;
    amq__params_put_u64(&out->params, f->counter_count);
    amq__params_put_u32(&out->params, f->hashes);
    amq__params_put_u32(&out->params, amq_counting_bloom_counter_bits(f));
    amq__params_put_u64(&out->params, f->capacity);
    amq__params_put_f64(&out->params, f->target_fpr);
    amq__params_put_u64(&out->params, f->nonzero);
    amq__params_put_u64(&out->params, f->saturated);
    /* Version 1 writes the block without the field, as every file before
     * the field was written: it loads the same in any version of amq. */
    if (f->probe_version != AMQ__BLOOM_PROBE_DOUBLE)
        amq__params_put_u32(&out->params, f->probe_version);
    out->pieces[0].data = f->counters;
    out->pieces[0].len = f->stored_bytes;
    out->piece_count = 1;
    return AMQ_OK;
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    *borrows_image = false;
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    uint64_t m = 0, capacity = 0, nonzero = 0, saturated = 0;
    uint32_t k = 0, width = 0, version = AMQ__BLOOM_PROBE_DOUBLE; /* a block without the field */
    double fpr = 0;
    if (amq__params_get_u64(&r, &m) || amq__params_get_u32(&r, &k) ||
        amq__params_get_u32(&r, &width) || amq__params_get_u64(&r, &capacity) ||
        amq__params_get_f64(&r, &fpr) || amq__params_get_u64(&r, &nonzero) ||
        amq__params_get_u64(&r, &saturated) ||
        (c->params_len == COUNTING_PARAMS_SIZE_V2 && amq__params_get_u32(&r, &version)) ||
        amq__params_end(&r))
        return amq__fail(diag, AMQ_ECORRUPT,
                         "counting-bloom parameters are %u bytes, expected %d or %d", c->params_len,
                         COUNTING_PARAMS_SIZE_V1, COUNTING_PARAMS_SIZE_V2);
    if (c->params_len == COUNTING_PARAMS_SIZE_V2 && version != AMQ__BLOOM_PROBE_REHASH)
        return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom probe version %u is not 2", version);
    if (m < AMQ_BLOOM_MIN_BITS || m > AMQ_BLOOM_MAX_BITS)
        return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom counter count %llu is out of range",
                         (unsigned long long)m);
    if (k < 1 || k > AMQ_BLOOM_MAX_HASHES)
        return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom hash count %u is out of range", k);
    if (width != 4 && width != 8)
        return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom counters are %u bits, not 4 or 8",
                         width);
    if (capacity == 0)
        return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom capacity is 0");
    if (!(fpr > 0 && fpr < 1))
        return amq__fail(diag, AMQ_ECORRUPT, "counting-bloom target fpr is not in (0, 1)");
    unsigned width_log2 = width == 8 ? 3 : 2;
    uint64_t expected = amq__counting_bloom_stored_bytes(m, width_log2);
    if (c->payload_len != expected)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "counting-bloom payload is %llu bytes; %llu counters of %u bits take %llu",
                         (unsigned long long)c->payload_len, (unsigned long long)m, width,
                         (unsigned long long)expected);
    amq_counting_bloom *f = NULL;
    int status = amq__counting_bloom_allocate(&f, m, width_log2, diag);
    if (status != AMQ_OK)
        return status;
    memcpy(f->counters, c->payload, (size_t)expected);
    f->hashes = k;
    f->capacity = capacity;
    f->target_fpr = fpr;
    f->probe_version = version;
    f->hasher = c->hasher;
    f->nonzero = nonzero;
    f->saturated = saturated;
    status = amq__counting_bloom_check(f, diag);
    if (status != AMQ_OK) {
        amq_counting_bloom_free(f);
        return status;
    }
    *state = f;
    return AMQ_OK;
}

static void family_info(const void *state, amq_info *out)
{
    const amq_counting_bloom *f = state;
    out->capacity = f->capacity;
    out->estimated_keys = amq_counting_bloom_estimated_keys(f);
    out->keys =
        isfinite(out->estimated_keys) ? (uint64_t)llround(out->estimated_keys) : f->counter_count;
    out->keys_estimated = 1;
    out->memory_bytes = f->stored_bytes;
    out->bits_per_key = (double)f->stored_bytes * 8 / (double)f->capacity;
    out->target_fpr = f->target_fpr;
    out->expected_fpr = amq_counting_bloom_expected_fpr(f);
    out->hasher = f->hasher;
    amq__info_number(out, "counters", (double)f->counter_count);
    amq__info_number(out, "counter_bits", amq_counting_bloom_counter_bits(f));
    amq__info_number(out, "hashes", f->hashes);
    amq__info_number(out, "nonzero", (double)amq_counting_bloom_nonzero(f));
    amq__info_number(out, "saturated", (double)amq_counting_bloom_saturated(f));
    amq__info_number(out, "probe_version", f->probe_version);
    amq__info_number(out, "fpr_at_capacity",
                     amq__bloom_rate_at(f->probe_version, f->counter_count, f->hashes,
                                        (double)(f->capacity ? f->capacity : 1)));
}

static void family_destroy(void *state)
{
    amq_counting_bloom_free(state);
}

const amq__family amq__counting_bloom_family = {
    .name = "counting-bloom",
    .id = AMQ__FAMILY_COUNTING_BLOOM,
    .options = counting_options,
    .create = family_create,
    .add = family_add,
    .add_unique = family_add_unique,
    .add_many = family_add_many,
    .remove = family_remove,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .merge = family_merge,
    .save = family_save,
    .load = family_load,
    .info = family_info,
    .destroy = family_destroy,
};
