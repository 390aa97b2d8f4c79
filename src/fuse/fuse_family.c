/*
 * fuse_family.c - the binary fuse filter seen through the generic handle
 * (core/family.h): the fuse8 and fuse16 families, their spec options,
 * build, the saved form, loading (every field checked, the array borrowed
 * from the file image) and info. The filter is explained at the top of
 * fuse.c.
 */
#include "amq/fuse.h"
#include "core/alloc.h"
#include "core/family.h"
#include "core/util.h"
#include "fuse/fuse_internal.h"

#include <math.h>
#include <stdio.h>

/* ---- the generic handle's view --------------------------------------------------
 *
 * Two family names, fuse8 and fuse16 (file ids 8 and 9), for one filter
 * with f = 8 and f = 16. Spec options: n (accepted and ignored: the filter
 * is sized by its keys), p (accepted when the filter meets it, 2^-f <= p,
 * and reported as the target; refused below that), arity (3 or 4), and the
 * hasher's seed, hash and key.
 *
 * Saved parameter block: u32 fingerprint bits, u32 arity, u64 seed, u64
 * segment length, u64 segment count, u64 array length, u64 keys, u32
 * attempts, f64 target fpr (60 bytes). Payload: the fingerprint array,
 * array length x f/8 bytes, nothing else.
 */

static const char *const arity_names[] = { "3", "4", NULL };
static const uint32_t arity_values[] = { 3, 4 };
static const amq__option option_arity = {
    .name = "arity",
    .type = AMQ__OPTION_CHOICE,
    .choices = arity_names,
    .help = "the number of slots a key maps to (default 3)",
};

static const amq__option *const fuse_options[] = {
    &amq__option_capacity, &amq__option_fpr, &option_arity, &amq__option_seed,
    &amq__option_hash,     &amq__option_key, NULL,
};

static int family_build(void **state, const amq__spec *spec, const void *const *keys,
                        const size_t *lens, size_t count, amq_diag *diag, uint32_t fingerprint_bits)
{
    amq_fuse_params params = {
        .fingerprint_bits = fingerprint_bits,
        .arity = arity_values[amq__spec_choice(spec, &option_arity, 0)],
    };
    double rate = ldexp(1, -(int)fingerprint_bits);
    double fpr = amq__spec_real(spec, &amq__option_fpr, rate);
    if (fpr < rate)
        return amq__fail(diag, AMQ_EINVAL,
                         "option 'fpr': %s's false-positive rate is fixed at 2^-%u = %.3g, above "
                         "p = %g%s",
                         spec->family->name, fingerprint_bits, rate, fpr,
                         fingerprint_bits == 8 ? "; fuse16's is 2^-16" : "");
    int status = amq__spec_hasher(spec, &params.hasher, 0, diag);
    if (status != AMQ_OK)
        return status;
    amq_fuse *f = NULL;
    status = amq_fuse_build(&f, &params, keys, lens, count, diag);
    if (status != AMQ_OK)
        return status;
    f->target_fpr = fpr;
    *state = f;
    return AMQ_OK;
}

static int fuse8_build(void **state, const amq__spec *spec, const void *const *keys,
                       const size_t *lens, size_t count, amq_diag *diag)
{
    return family_build(state, spec, keys, lens, count, diag, 8);
}

static int fuse16_build(void **state, const amq__spec *spec, const void *const *keys,
                        const size_t *lens, size_t count, amq_diag *diag)
{
    return family_build(state, spec, keys, lens, count, diag, 16);
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_fuse_contains(state, key, len);
}

static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    return amq_fuse_contains_many(results, state, keys, lens, count);
}

static int family_save(const void *state, amq__saved *out)
{
    const amq_fuse *f = state;
    out->hasher = f->hasher;
    amq__params_put_u32(&out->params, f->fingerprint_bits);
    amq__params_put_u32(&out->params, f->shape.arity);
    amq__params_put_u64(&out->params, f->seed);
    amq__params_put_u64(&out->params, f->shape.segment_length);
    amq__params_put_u64(&out->params, f->shape.segment_count);
    amq__params_put_u64(&out->params, f->shape.array_length);
    amq__params_put_u64(&out->params, f->count);
    amq__params_put_u32(&out->params, f->attempts);
    amq__params_put_f64(&out->params, f->target_fpr);
    out->pieces[0].data = f->fingerprints;
    out->pieces[0].len = amq_fuse_memory_bytes(f);
    out->piece_count = 1;
    return AMQ_OK;
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag,
                       uint32_t fingerprint_bits)
{
    *borrows_image = false;
    const char *name = fingerprint_bits == 8 ? "fuse8" : "fuse16";
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    amq_fuse f = { .fingerprint_bits = 0 };
    uint64_t segment_length = 0, segment_count = 0, array_length = 0;
    if (amq__params_get_u32(&r, &f.fingerprint_bits) || amq__params_get_u32(&r, &f.shape.arity) ||
        amq__params_get_u64(&r, &f.seed) || amq__params_get_u64(&r, &segment_length) ||
        amq__params_get_u64(&r, &segment_count) || amq__params_get_u64(&r, &array_length) ||
        amq__params_get_u64(&r, &f.count) || amq__params_get_u32(&r, &f.attempts) ||
        amq__params_get_f64(&r, &f.target_fpr))
        return amq__fail(diag, AMQ_ECORRUPT, "%s parameters are %u bytes, too short", name,
                         c->params_len);
    if (amq__params_end(&r))
        return amq__fail(diag, AMQ_ECORRUPT, "%s parameters have trailing bytes", name);
    if (f.fingerprint_bits != fingerprint_bits)
        return amq__fail(diag, AMQ_ECORRUPT, "a %s file with %u-bit fingerprints", name,
                         f.fingerprint_bits);
    f.shape.segment_length = segment_length;
    f.shape.segment_mask = segment_length - 1;
    f.shape.segment_count = segment_count;
    f.shape.segment_count_length = segment_count * segment_length;
    f.shape.array_length = array_length;
    int status = amq__fuse_check(&f, diag);
    if (status != AMQ_OK)
        return status;
    if (c->payload_len != amq_fuse_memory_bytes(&f))
        return amq__fail(diag, AMQ_ECORRUPT,
                         "%s payload is %llu bytes; %llu slots of %u bits take %llu", name,
                         (unsigned long long)c->payload_len, (unsigned long long)array_length,
                         fingerprint_bits, (unsigned long long)amq_fuse_memory_bytes(&f));
    amq_fuse *loaded = amq__malloc(sizeof *loaded);
    if (!loaded)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    *loaded = f;
    loaded->hasher = c->hasher;
    loaded->fingerprints = c->payload;
    loaded->owned = NULL;
    *borrows_image = true;
    *state = loaded;
    return AMQ_OK;
}

static int fuse8_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    return family_load(state, c, borrows_image, diag, 8);
}

static int fuse16_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    return family_load(state, c, borrows_image, diag, 16);
}

static void family_info(const void *state, amq_info *out)
{
    const amq_fuse *f = state;
    out->capacity = f->count;
    out->keys = f->count;
    out->estimated_keys = (double)f->count;
    out->memory_bytes = amq_fuse_memory_bytes(f);
    out->bits_per_key = amq_fuse_bits_per_key(f);
    out->target_fpr = f->target_fpr;
    out->expected_fpr = amq_fuse_expected_fpr(f);
    out->hasher = f->hasher;
    amq__info_number(out, "fingerprint_bits", f->fingerprint_bits);
    amq__info_number(out, "arity", f->shape.arity);
    amq__info_number(out, "segment_length", (double)f->shape.segment_length);
    amq__info_number(out, "segment_count", (double)f->shape.segment_count);
    amq__info_number(out, "array_length", (double)f->shape.array_length);
    amq__info_number(out, "attempts", f->attempts);
    char seed[32];
    snprintf(seed, sizeof seed, "%016llx", (unsigned long long)f->seed);
    amq__info_text(out, "seed", seed);
}

static void family_destroy(void *state)
{
    amq_fuse_free(state);
}

const amq__family amq__fuse8_family = {
    .name = "fuse8",
    .id = AMQ__FAMILY_FUSE8,
    .options = fuse_options,
    .build = fuse8_build,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .save = family_save,
    .load = fuse8_load,
    .info = family_info,
    .destroy = family_destroy,
};

const amq__family amq__fuse16_family = {
    .name = "fuse16",
    .id = AMQ__FAMILY_FUSE16,
    .options = fuse_options,
    .build = fuse16_build,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .save = family_save,
    .load = fuse16_load,
    .info = family_info,
    .destroy = family_destroy,
};
