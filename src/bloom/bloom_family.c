/*
 * bloom_family.c - the classic Bloom filter seen through the generic handle
 * (core/family.h): its spec options, adds and queries by the typed calls,
 * the saved form (the parameter block and payload described at the top of
 * bloom.c), loading and info. The filter is explained at the top of
 * bloom.c.
 */
#include "bloom/bloom_internal.h"

#include "core/bits.h"
#include "core/family.h"
#include "core/hash.h"
#include "core/util.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* The parameter block without the probe version field (version 1) and with
 * it. */
#define BLOOM_PARAMS_SIZE_V1 36
#define BLOOM_PARAMS_SIZE_V2 40

/* ---- the generic handle's view ------------------------------------------------- */

static const amq__option option_bits = {
    .name = "bits",
    .alias = "m",
    .type = AMQ__OPTION_COUNT,
    .count_min = AMQ_BLOOM_MIN_BITS,
    .count_max = AMQ_BLOOM_MAX_BITS,
    .value_name = "M",
    .help = "the size in bits (default: the best for capacity and fpr)",
};
static const amq__option option_hashes = {
    .name = "hashes",
    .alias = "k",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = AMQ_BLOOM_MAX_HASHES,
    .value_name = "K",
    .help = "the number of hash functions (default: the best for bits and capacity)",
};

static const amq__option *const bloom_options[] = {
    &amq__option_capacity, &amq__option_fpr,  &option_bits,     &option_hashes,
    &amq__option_seed,     &amq__option_hash, &amq__option_key, NULL,
};

static int family_create(void **state, const amq__spec *spec, amq_diag *diag)
{
    amq_bloom_params params = {
        .capacity = amq__spec_count(spec, &amq__option_capacity, 0),
        .fpr = amq__spec_real(spec, &amq__option_fpr, 0.01),
        .bits = amq__spec_count(spec, &option_bits, 0),
        .hashes = (uint32_t)amq__spec_count(spec, &option_hashes, 0),
    };
    int status = amq__spec_hasher(spec, &params.hasher, 0, diag);
    if (status != AMQ_OK)
        return status;
    amq_bloom *f;
    status = amq__bloom_new(&f, &params, AMQ__BLOOM_PROBE_LATEST, diag);
    *state = f;
    return status;
}

static int family_add(void *state, const void *key, size_t len)
{
    amq_bloom_add(state, key, len);
    return AMQ_OK;
}

static int family_add_unique(void *state, const void *key, size_t len)
{
    amq_bloom *f = state;
    return amq__bloom_add_hash_new_bits(f, amq__hash128(&f->hasher, key, len)) > 0;
}

/* The typed batch reports new keys in bytes: a window of them at a time. */
static size_t add_many_window(void *state, const void *const *keys, const size_t *lens,
                              size_t count, int *results, bool unique)
{
    uint8_t added[256];
    for (size_t done = 0; done < count;) {
        size_t n = count - done < sizeof added ? count - done : sizeof added;
        amq_bloom_add_many(unique ? added : NULL, state, keys + done, lens + done, n);
        for (size_t i = 0; i < n; i++)
            results[done + i] = unique ? (int)added[i] : AMQ_OK;
        done += n;
    }
    return count;
}

static size_t family_add_many(void *state, const void *const *keys, const size_t *lens,
                              size_t count, int *results)
{
    return add_many_window(state, keys, lens, count, results, false);
}

static size_t family_add_unique_many(void *state, const void *const *keys, const size_t *lens,
                                     size_t count, int *results)
{
    return add_many_window(state, keys, lens, count, results, true);
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_bloom_contains(state, key, len);
}

static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    amq_bloom_contains_many(results, state, keys, lens, count);
    return AMQ_OK;
}

static int family_merge(void *state, const void *other, amq_diag *diag)
{
    return amq_bloom_merge(state, other, diag);
}

static int family_save(const void *state, amq__saved *out)
{
    const amq_bloom *f = state;
    out->hasher = f->hasher;
    amq__params_put_u64(&out->params, f->bits.bit_count);
    amq__params_put_u32(&out->params, f->hashes);
    amq__params_put_u64(&out->params, f->capacity);
    amq__params_put_f64(&out->params, f->target_fpr);
    amq__params_put_u64(&out->params, f->bits_set);
    /* Version 1 writes the block without the field, as every file before
     * the field was written: it loads the same in any version of amq. */
    if (f->probe_version != AMQ__BLOOM_PROBE_DOUBLE)
        amq__params_put_u32(&out->params, f->probe_version);
    out->pieces[0] = amq__bitvec_piece(&f->bits);
    out->piece_count = 1;
    return AMQ_OK;
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    *borrows_image = false;
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    amq_bloom_params params = { .hasher = c->hasher };
    uint64_t bits_set = 0;
    uint32_t version = AMQ__BLOOM_PROBE_DOUBLE; /* a block without the field */
    if (amq__params_get_u64(&r, &params.bits) || amq__params_get_u32(&r, &params.hashes) ||
        amq__params_get_u64(&r, &params.capacity) || amq__params_get_f64(&r, &params.fpr) ||
        amq__params_get_u64(&r, &bits_set) ||
        (c->params_len == BLOOM_PARAMS_SIZE_V2 && amq__params_get_u32(&r, &version)) ||
        amq__params_end(&r))
        return amq__fail(diag, AMQ_ECORRUPT, "bloom parameters are %u bytes, expected %d or %d",
                         c->params_len, BLOOM_PARAMS_SIZE_V1, BLOOM_PARAMS_SIZE_V2);
    if (c->params_len == BLOOM_PARAMS_SIZE_V2 && version != AMQ__BLOOM_PROBE_REHASH)
        return amq__fail(diag, AMQ_ECORRUPT, "bloom probe version %u is not 2", version);
    amq_bloom *f;
    int status =
        amq__bloom_from_words(&f, &params, version, bits_set, c->payload, c->payload_len, diag);
    if (status == AMQ_OK)
        *state = f;
    return status;
}

static void family_info(const void *state, amq_info *out)
{
    const amq_bloom *f = state;
    out->capacity = f->capacity;
    out->estimated_keys = amq_bloom_estimated_keys(f);
    out->keys =
        isfinite(out->estimated_keys) ? (uint64_t)llround(out->estimated_keys) : f->bits.bit_count;
    out->keys_estimated = 1;
    out->memory_bytes = amq__bitvec_words_for(f->bits.bit_count) * 8;
    out->bits_per_key = (double)f->bits.bit_count / (double)(f->capacity ? f->capacity : 1);
    out->target_fpr = f->target_fpr;
    out->expected_fpr = amq_bloom_expected_fpr(f);
    out->hasher = f->hasher;
    amq__info_number(out, "bits", (double)f->bits.bit_count);
    amq__info_number(out, "hashes", f->hashes);
    amq__info_number(out, "probe_version", f->probe_version);
    amq__info_number(out, "fpr_at_capacity",
                     amq__bloom_rate_at(f->probe_version, f->bits.bit_count, f->hashes,
                                        (double)(f->capacity ? f->capacity : 1)));
}

static void family_destroy(void *state)
{
    amq_bloom_free(state);
}

const amq__family amq__bloom_family = {
    .name = "bloom",
    .id = AMQ__FAMILY_BLOOM,
    .options = bloom_options,
    .create = family_create,
    .add = family_add,
    .add_unique = family_add_unique,
    .add_many = family_add_many,
    .add_unique_many = family_add_unique_many,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .merge = family_merge,
    .save = family_save,
    .load = family_load,
    .info = family_info,
    .destroy = family_destroy,
};
