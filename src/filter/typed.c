/*
 * typed.c - where the typed and the generic handles meet: a family's typed
 * object (amq_bloom, amq_cuckoo, ...) wrapped in an amq_filter, so that it
 * can be saved, saved to memory or passed wherever any filter is taken;
 * and the typed object inside an amq_filter, so that a loaded filter gets
 * the typed calls' full speed. A family's state is its typed object, so
 * neither direction copies anything.
 */
#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/fuse.h"
#include "amq/gcs.h"
#include "amq/hfb.h"
#include "core/family.h"
#include "core/util.h"
#include "filter/filter.h"

/* Wrap state in a handle of family; on failure the caller keeps state. */
static int wrap_typed(amq_filter **out, const amq__family *family, void *state, const char *call,
                      amq_diag *diag)
{
    if (out)
        *out = NULL;
    if (!out || !state)
        return amq__fail(diag, AMQ_EINVAL, "%s: %s is NULL", call, !out ? "out" : "the filter");
    int status = amq__filter_wrap(out, family, state);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "%s: no memory for a handle", call);
    return AMQ_OK;
}

int amq_bloom_wrap(amq_filter **out, amq_bloom *filter, amq_diag *diag)
{
    return wrap_typed(out, &amq__bloom_family, filter, "amq_bloom_wrap", diag);
}

amq_bloom *amq_bloom_unwrap(amq_filter *f)
{
    return amq__filter_state(f, &amq__bloom_family);
}

int amq_blocked_bloom_wrap(amq_filter **out, amq_blocked_bloom *filter, amq_diag *diag)
{
    return wrap_typed(out, &amq__blocked_bloom_family, filter, "amq_blocked_bloom_wrap", diag);
}

amq_blocked_bloom *amq_blocked_bloom_unwrap(amq_filter *f)
{
    return amq__filter_state(f, &amq__blocked_bloom_family);
}

int amq_counting_bloom_wrap(amq_filter **out, amq_counting_bloom *filter, amq_diag *diag)
{
    return wrap_typed(out, &amq__counting_bloom_family, filter, "amq_counting_bloom_wrap", diag);
}

amq_counting_bloom *amq_counting_bloom_unwrap(amq_filter *f)
{
    return amq__filter_state(f, &amq__counting_bloom_family);
}

int amq_scalable_bloom_wrap(amq_filter **out, amq_scalable_bloom *filter, amq_diag *diag)
{
    return wrap_typed(out, &amq__scalable_bloom_family, filter, "amq_scalable_bloom_wrap", diag);
}

amq_scalable_bloom *amq_scalable_bloom_unwrap(amq_filter *f)
{
    return amq__filter_state(f, &amq__scalable_bloom_family);
}

int amq_cuckoo_wrap(amq_filter **out, amq_cuckoo *filter, amq_diag *diag)
{
    return wrap_typed(out, &amq__cuckoo_family, filter, "amq_cuckoo_wrap", diag);
}

amq_cuckoo *amq_cuckoo_unwrap(amq_filter *f)
{
    return amq__filter_state(f, &amq__cuckoo_family);
}

int amq_gcs_wrap(amq_filter **out, amq_gcs *filter, amq_diag *diag)
{
    return wrap_typed(out, &amq__gcs_family, filter, "amq_gcs_wrap", diag);
}

amq_gcs *amq_gcs_unwrap(amq_filter *f)
{
    return amq__filter_state(f, &amq__gcs_family);
}

int amq_hfb_wrap(amq_filter **out, amq_hfb *filter, amq_diag *diag)
{
    return wrap_typed(out, &amq__hfb_family, filter, "amq_hfb_wrap", diag);
}

amq_hfb *amq_hfb_unwrap(amq_filter *f)
{
    return amq__filter_state(f, &amq__hfb_family);
}

int amq_fuse_wrap(amq_filter **out, amq_fuse *filter, amq_diag *diag)
{
    const amq__family *family = filter && amq_fuse_fingerprint_bits(filter) == 16
                                    ? &amq__fuse16_family
                                    : &amq__fuse8_family;
    return wrap_typed(out, family, filter, "amq_fuse_wrap", diag);
}

amq_fuse *amq_fuse_unwrap(amq_filter *f)
{
    amq_fuse *filter = amq__filter_state(f, &amq__fuse8_family);
    return filter ? filter : amq__filter_state(f, &amq__fuse16_family);
}
