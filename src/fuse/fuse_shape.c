/*
 * fuse_shape.c - a binary fuse filter's shape (segment length and count,
 * array length) from its parameters, and the check of invariants I1-I5
 * (fuse.c) that construction ends with and loading starts with. The
 * fuse files stand on this file; fuse.c and fuse_build.c do not reach into
 * each other, and the generic handle's build in fuse_family.c calls
 * amq_fuse_build.
 */
#include "amq/fuse.h"
#include "core/util.h"
#include "fuse/fuse_internal.h"

#include <math.h>
#include <stdio.h>

bool amq__fuse_shape_make(amq__fuse_shape *out, uint32_t arity, uint64_t segment_length,
                          uint64_t segment_count, uint32_t fingerprint_bits)
{
    uint64_t first_slots = 0, segments = 0, length = 0, bytes = 0;
    if (!amq__mul_u64(segment_count, segment_length, &first_slots) ||
        !amq__add_u64(segment_count, arity - 1, &segments) ||
        !amq__mul_u64(segments, segment_length, &length) ||
        !amq__mul_u64(length, fingerprint_bits / 8, &bytes) || bytes > SIZE_MAX)
        return false;
    out->arity = arity;
    out->segment_length = segment_length;
    out->segment_mask = segment_length - 1;
    out->segment_count = segment_count;
    out->segment_count_length = first_slots;
    out->array_length = length;
    return true;
}

int amq__fuse_check(const amq_fuse *f, amq_diag *diag)
{
    const amq__fuse_shape *s = &f->shape;
    if (f->fingerprint_bits != 8 && f->fingerprint_bits != 16)
        return amq__fail(diag, AMQ_ECORRUPT, "fuse fingerprint bits %u is not 8 or 16",
                         f->fingerprint_bits);
    if (s->arity != 3 && s->arity != 4)
        return amq__fail(diag, AMQ_ECORRUPT, "fuse arity %u is not 3 or 4", s->arity);
    uint64_t length = s->segment_length;
    if (length < AMQ__FUSE_MIN_SEGMENT_LENGTH || length > AMQ_FUSE_MAX_SEGMENT_LENGTH ||
        (length & (length - 1)) != 0 || s->segment_mask != length - 1)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "fuse segment length %llu is not a power of two from %d to %llu",
                         (unsigned long long)length, AMQ__FUSE_MIN_SEGMENT_LENGTH,
                         (unsigned long long)AMQ_FUSE_MAX_SEGMENT_LENGTH);
    amq__fuse_shape expected;
    if (s->segment_count < 1 ||
        !amq__fuse_shape_make(&expected, s->arity, length, s->segment_count, f->fingerprint_bits))
        return amq__fail(diag, AMQ_ECORRUPT, "fuse segment count %llu is out of range",
                         (unsigned long long)s->segment_count);
    if (s->array_length != expected.array_length ||
        s->segment_count_length != expected.segment_count_length)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "fuse array length %llu is not (segment count %llu + arity %u - 1) x "
                         "segment length %llu = %llu",
                         (unsigned long long)s->array_length, (unsigned long long)s->segment_count,
                         s->arity, (unsigned long long)length,
                         (unsigned long long)expected.array_length);
    if (f->count > s->array_length)
        return amq__fail(diag, AMQ_ECORRUPT, "fuse key count %llu is more than the %llu slots",
                         (unsigned long long)f->count, (unsigned long long)s->array_length);
    if (f->attempts < 1 || f->attempts > AMQ_FUSE_MAX_ATTEMPTS)
        return amq__fail(diag, AMQ_ECORRUPT, "fuse attempts %u is not in 1..%d", f->attempts,
                         AMQ_FUSE_MAX_ATTEMPTS);
    double rate = ldexp(1, -(int)f->fingerprint_bits);
    if (!(f->target_fpr >= rate && f->target_fpr < 1))
        return amq__fail(diag, AMQ_ECORRUPT, "fuse target fpr %g is not in [2^-%u, 1)",
                         f->target_fpr, f->fingerprint_bits);
    return AMQ_OK;
}
