/*
 * gcs_bucket.c - the Golomb-coded set's bucketed layout: coding the values
 * into buckets, packing the offset index, checking a stream and its index
 * (the layout, and the invariants B1-B5, are described at the top of
 * gcs.c, "The bucketed layout"), and reading every value back out of
 * either layout.
 *
 * A bucket occupies the stream bits [start_b, start_{b+1}). Its c codes
 * are split in two: the unary parts (q_i 1-bits, then a 0-bit) from the
 * bucket's first bit upwards, and the P-bit remainders from its last bit
 * downwards (remainder i in the P bits ending where remainder i - 1
 * begins). The two meet exactly: c·(1 + P) + sum q_i bits. A reader needs
 * no count: while the unary position is below the lowest remainder read,
 * another code remains.
 */
#include "core/alloc.h"
#include "core/bits.h"
#include "core/util.h"
#include "gcs/gcs_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The bits a packed window always holds. */
#define WINDOW_BITS 57
#define WINDOW_MASK (((uint64_t)1 << WINDOW_BITS) - 1)

uint64_t amq__gcs_bucket_width(uint64_t range, uint64_t keys)
{
    uint64_t width;
    if (!amq__mul_u64(range, keys, &width) || width > ((uint64_t)1 << 62))
        return (uint64_t)1 << 62;
    return width;
}

bool amq__gcs_bucket_frame(amq__gcs_buckets *x, uint64_t universe)
{
    x->reciprocal = UINT64_MAX / x->width;
    x->count = amq__gcs_bucket_count(x, universe);
    x->header_bytes = x->delta_bytes = 0;
    if (x->count == 0)
        return true;
    uint64_t headers = (x->count >> x->block_shift) + 1, deltas = x->count + 1, bits;
    if (deltas == 0 || !amq__mul_u64(headers, x->header_bits, &bits))
        return false;
    x->header_bytes = bits / 8 + (bits % 8 != 0);
    if (!amq__mul_u64(deltas, x->delta_bits, &bits))
        return false;
    x->delta_bytes = bits / 8 + (bits % 8 != 0);
    return true;
}

uint64_t amq__gcs_bucket_index_bytes(const amq__gcs_buckets *x)
{
    if (x->count == 0)
        return 0;
    return x->header_bytes + AMQ__GCS_INDEX_SLACK + x->delta_bytes + AMQ__GCS_INDEX_SLACK;
}

/* ---- coding --------------------------------------------------------------------- */

/* The stream bits of the bucket holding values[0 .. n) (offsets from
 * first), with remainders of p bits. */
static uint64_t bucket_bits(const uint64_t *values, size_t n, uint64_t first, unsigned p)
{
    uint64_t bits = 0, previous = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t offset = values[i] - first;
        bits += 1 + p + ((offset - previous) >> p);
        previous = offset;
    }
    return bits;
}

/* Pack the index of the bucket starts start[0 .. count] into x (widths,
 * base) and the two areas at headers and deltas (NULL: only measure). */
static void index_shape(amq__gcs_buckets *x, const uint64_t *start)
{
    const uint64_t sign = (uint64_t)1 << 63;
    uint64_t least = UINT64_MAX;
    for (uint64_t b = 0; b <= x->count; b++) {
        uint64_t biased = (start[b] - b * x->step) ^ sign;
        least = biased < least ? biased : least;
    }
    x->base = least ^ sign;
    uint64_t header_most = 0, delta_most = 0;
    for (uint64_t b = 0; b <= x->count; b += (uint64_t)1 << x->block_shift) {
        uint64_t end = b + ((uint64_t)1 << x->block_shift), low = UINT64_MAX, high = 0;
        for (uint64_t i = b; i < end && i <= x->count; i++) {
            uint64_t off = start[i] - i * x->step - x->base;
            low = off < low ? off : low;
            high = off > high ? off : high;
        }
        header_most = low > header_most ? low : header_most;
        delta_most = high - low > delta_most ? high - low : delta_most;
    }
    x->header_bits = amq__bit_width(header_most);
    x->delta_bits = amq__bit_width(delta_most);
}

static void index_pack(const amq__gcs_buckets *x, const uint64_t *start, uint8_t *headers,
                       uint8_t *deltas)
{
    for (uint64_t b = 0; b <= x->count; b += (uint64_t)1 << x->block_shift) {
        uint64_t end = b + ((uint64_t)1 << x->block_shift), low = UINT64_MAX;
        for (uint64_t i = b; i < end && i <= x->count; i++) {
            uint64_t off = start[i] - i * x->step - x->base;
            low = off < low ? off : low;
        }
        amq__gcs_field_put(headers, (b >> x->block_shift) * x->header_bits, x->header_bits, low);
        for (uint64_t i = b; i < end && i <= x->count; i++)
            amq__gcs_field_put(deltas, i * x->delta_bits, x->delta_bits,
                               start[i] - i * x->step - x->base - low);
    }
}

/* Write the bucket of values[0 .. n) into the stream bits [s, e). */
static void bucket_write(uint8_t *bytes, uint64_t s, uint64_t e, const uint64_t *values, size_t n,
                         uint64_t first, unsigned p)
{
    uint64_t unary = s, remainders = e, previous = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t offset = values[i] - first, gap = offset - previous;
        for (uint64_t q = gap >> p; q > 0;) {
            unsigned run = q < 56 ? (unsigned)q : 56;
            amq__packed_set(bytes, unary, run, ((uint64_t)1 << run) - 1);
            unary += run;
            q -= run;
        }
        unary++; /* the 0-bit */
        remainders -= p;
        amq__packed_set(bytes, remainders, p, gap & (((uint64_t)1 << p) - 1));
        previous = offset;
    }
    assert(unary == remainders);
}

int amq__gcs_encode_buckets(amq_gcs *f, const uint64_t *values, uint64_t width,
                            unsigned block_shift, amq_diag *diag)
{
    assert(!f->owned && (f->divisor & (f->divisor - 1)) == 0);
    unsigned p = (unsigned)__builtin_ctzll(f->divisor);
    assert(p <= AMQ__GCS_BUCKET_MAX_RICE);
    amq__gcs_buckets *x = &f->buckets;
    memset(x, 0, sizeof *x);
    x->width = width;
    x->block_shift = block_shift;
    amq__gcs_bucket_frame(x, f->universe);
    f->bucketed = true;
    uint64_t n = f->count;
    if (x->count > SIZE_MAX / sizeof(uint64_t) - 1)
        return amq__fail(diag, AMQ_ENOMEM, "%llu gcs buckets do not fit memory",
                         (unsigned long long)x->count);
    uint64_t *start = amq__malloc((size_t)(x->count + 1) * sizeof *start);
    if (!start)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory for %llu gcs buckets",
                         (unsigned long long)x->count);
    /* Where each bucket begins: the sizes of the buckets before it. */
    uint64_t bits = 0;
    size_t i = 0;
    for (uint64_t b = 0; b < x->count; b++) {
        size_t first = i;
        while (i < n && amq__gcs_bucket_of(x, values[i]) == b)
            i++;
        start[b] = bits;
        uint64_t size = bucket_bits(values + first, i - first, b * width, p);
        if (!amq__add_u64(bits, size, &bits) || bits > (UINT64_MAX >> 4)) {
            amq__free(start);
            return amq__fail(diag, AMQ_ERANGE, "the gcs stream passes 2^60 bits");
        }
    }
    if (x->count)
        start[x->count] = bits;
    uint64_t stream_bytes = bits / 8 + (bits % 8 != 0);
    x->step = x->count ? bits / x->count : 0;
    if (x->count)
        index_shape(x, start);
    if (!amq__gcs_bucket_frame(x, f->universe) ||
        stream_bytes > SIZE_MAX / 2 - amq__gcs_bucket_index_bytes(x) - AMQ__GCS_STREAM_SLACK) {
        amq__free(start);
        return amq__fail(diag, AMQ_ENOMEM, "a gcs stream of %llu bits does not fit memory",
                         (unsigned long long)bits);
    }
    size_t stream_part = (size_t)stream_bytes + AMQ__GCS_STREAM_SLACK;
    size_t total = stream_part + (size_t)amq__gcs_bucket_index_bytes(x);
    /* a table, not calloc: at 2 MiB and more the system's huge pages spare
     * a query's two random reads (index, bucket) their TLB misses */
    uint8_t *block = amq__alloc_table(total, true);
    if (!block) {
        amq__free(start);
        return amq__fail(diag, AMQ_ENOMEM, "out of memory for a gcs stream of %llu bits",
                         (unsigned long long)bits);
    }
    i = 0;
    for (uint64_t b = 0; b < x->count; b++) {
        size_t first = i;
        while (i < n && amq__gcs_bucket_of(x, values[i]) == b)
            i++;
        bucket_write(block, start[b], start[b + 1], values + first, i - first, b * width, p);
    }
    f->owned = block;
    f->owned_table = true;
    f->stream = block;
    f->stream_bits = bits;
    f->stream_bytes = stream_bytes;
    if (x->count) {
        uint8_t *headers = block + stream_part;
        uint8_t *deltas = headers + x->header_bytes + AMQ__GCS_INDEX_SLACK;
        index_pack(x, start, headers, deltas);
        x->headers = headers;
        x->deltas = deltas;
    }
    amq__free(start);
    uint64_t distinct[AMQ_GCS_MAX_SEGMENTS];
    int status = amq__gcs_verify_buckets(f, distinct, diag);
    if (status != AMQ_OK)
        return status;
    f->distinct = 0;
    for (size_t s = 0; s < f->segment_count; s++) {
        f->segments[s].distinct = distinct[s];
        f->distinct += distinct[s];
    }
    return AMQ_OK;
}

/* ---- checking -------------------------------------------------------------------- */

static bool all_zero(const uint8_t *bytes, uint64_t len)
{
    for (uint64_t i = 0; i < len; i++)
        if (bytes[i])
            return false;
    return true;
}

/* The packed area of fields fields of width bits: the bits past the last
 * field, and the slack after it, are zero. */
static bool tail_zero(const uint8_t *area, uint64_t fields, unsigned width, uint64_t bytes)
{
    uint64_t bits = fields * width;
    if (bits % 8 && area[bits / 8] >> (bits % 8))
        return false;
    return all_zero(area + bytes, AMQ__GCS_INDEX_SLACK);
}

/* The values as the checker meets them: in order, in their segments. */
typedef struct value_check {
    const amq_gcs *f;
    uint64_t *distinct;
    uint64_t *out; /* every value, or NULL */
    uint64_t code;
    size_t segment;
    uint64_t segment_end; /* the codes before the next segment */
    uint64_t previous;
} value_check;

static int take_value(value_check *v, uint64_t value, amq_diag *diag)
{
    const amq_gcs *f = v->f;
    if (v->code >= f->count)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream holds more than its %llu codes",
                         (unsigned long long)f->count);
    bool first = v->code == v->segment_end - f->segments[v->segment].count;
    const amq__gcs_segment *segment = &f->segments[v->segment];
    if (value < segment->base || value - segment->base >= segment->universe)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "gcs stream: code %llu gives a value outside segment %zu's universe",
                         (unsigned long long)v->code, v->segment);
    v->distinct[v->segment] += first || value != v->previous;
    if (v->out)
        v->out[v->code] = value;
    v->previous = value;
    if (++v->code == v->segment_end && v->segment + 1 < f->segment_count)
        v->segment_end += f->segments[++v->segment].count;
    return AMQ_OK;
}

/* Decode the bucket b in [s, e), checking every code. */
static int check_bucket(value_check *v, uint64_t b, uint64_t s, uint64_t e, amq_diag *diag)
{
    const amq_gcs *f = v->f;
    const amq__gcs_buckets *x = &f->buckets;
    unsigned p = (unsigned)__builtin_ctzll(f->divisor);
    uint64_t unary = s, remainders = e, offset = 0;
    while (unary < remainders) {
        if (remainders - unary < 1 + (uint64_t)p)
            return amq__fail(diag, AMQ_ECORRUPT, "gcs bucket %llu ends inside a code",
                             (unsigned long long)b);
        uint64_t limit = remainders - p, at = unary, zero = UINT64_MAX;
        while (at < limit) {
            uint64_t z = ~amq__packed_window(f->stream, at) & WINDOW_MASK;
            if (limit - at < WINDOW_BITS)
                z &= ((uint64_t)1 << (limit - at)) - 1;
            if (z) {
                zero = at + (uint64_t)__builtin_ctzll(z);
                break;
            }
            at += WINDOW_BITS;
        }
        uint64_t q = zero - unary;
        if (zero == UINT64_MAX || q >> (63 - p))
            return amq__fail(diag, AMQ_ECORRUPT,
                             "gcs bucket %llu: a code without its 0-bit, or past the bucket",
                             (unsigned long long)b);
        remainders -= p;
        uint64_t gap = q << p | amq__packed_get(f->stream, remainders, p);
        uint64_t value;
        if (!amq__add_u64(offset, gap, &offset) || !amq__add_u64(b * x->width, offset, &value) ||
            amq__gcs_bucket_of(x, value) != b)
            return amq__fail(diag, AMQ_ECORRUPT, "gcs bucket %llu: a value past the bucket",
                             (unsigned long long)b);
        unary = zero + 1;
        int status = take_value(v, value, diag);
        if (status != AMQ_OK)
            return status;
    }
    return AMQ_OK;
}

/* Walk every bucket of f, checking it and its index entry; with out, also
 * store every value. */
static int walk(const amq_gcs *f, uint64_t distinct[AMQ_GCS_MAX_SEGMENTS], uint64_t *out,
                amq_diag *diag)
{
    const amq__gcs_buckets *x = &f->buckets;
    value_check v = { f, distinct, out, 0, 0, f->segment_count ? f->segments[0].count : 0, 0 };
    for (size_t s = 0; s < AMQ_GCS_MAX_SEGMENTS; s++)
        distinct[s] = 0;
    if (x->count == 0) {
        if (f->stream_bits != 0 || f->count != 0)
            return amq__fail(diag, AMQ_ECORRUPT, "empty gcs with a stream");
        return AMQ_OK;
    }
    uint64_t header_most = 0, header_least = UINT64_MAX, delta_most = 0;
    uint64_t block_least = UINT64_MAX;
    uint64_t s = amq__gcs_bucket_start(x, 0);
    if (s != 0)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs bucket 0 does not begin the stream");
    for (uint64_t b = 0; b <= x->count; b++) {
        uint64_t header =
            amq__gcs_field_get(x->headers, (b >> x->block_shift) * x->header_bits, x->header_bits);
        uint64_t delta = amq__gcs_field_get(x->deltas, b * x->delta_bits, x->delta_bits);
        header_most = header > header_most ? header : header_most;
        header_least = header < header_least ? header : header_least;
        delta_most = delta > delta_most ? delta : delta_most;
        block_least = delta < block_least ? delta : block_least;
        if ((b + 1) % ((uint64_t)1 << x->block_shift) == 0 || b == x->count) {
            if (block_least != 0)
                return amq__fail(diag, AMQ_ECORRUPT,
                                 "gcs index block %llu is not stored from its least entry",
                                 (unsigned long long)(b >> x->block_shift));
            block_least = UINT64_MAX;
        }
        if (b == x->count)
            break;
        uint64_t e = amq__gcs_bucket_start(x, b + 1);
        if (e < s || e > f->stream_bits || (b + 1 == x->count && e != f->stream_bits))
            return amq__fail(diag, AMQ_ECORRUPT,
                             "gcs index: bucket %llu ends at bit %llu, outside [%llu, %llu]",
                             (unsigned long long)b, (unsigned long long)e, (unsigned long long)s,
                             (unsigned long long)f->stream_bits);
        int status = check_bucket(&v, b, s, e, diag);
        if (status != AMQ_OK)
            return status;
        s = e;
    }
    if (v.code != f->count)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream holds %llu codes, not %llu",
                         (unsigned long long)v.code, (unsigned long long)f->count);
    if (header_least != 0 || x->header_bits != amq__bit_width(header_most) ||
        x->delta_bits != amq__bit_width(delta_most))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs bucket index is not packed in its fewest bits");
    return AMQ_OK;
}

int amq__gcs_verify_buckets(const amq_gcs *f, uint64_t distinct[AMQ_GCS_MAX_SEGMENTS],
                            amq_diag *diag)
{
    const amq__gcs_buckets *x = &f->buckets;
    if (x->count && x->step != f->stream_bits / x->count)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs bucket index step is not the stream's");
    int status = walk(f, distinct, NULL, diag);
    if (status != AMQ_OK)
        return status;
    if (f->stream_bits % 8 && (f->stream[f->stream_bytes - 1] >> (f->stream_bits % 8)))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream's padding bits are not zero");
    if (!all_zero(f->stream + f->stream_bytes, AMQ__GCS_STREAM_SLACK))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream is followed by nonzero bytes");
    if (x->count && (!tail_zero(x->headers, (x->count >> x->block_shift) + 1, x->header_bits,
                                x->header_bytes) ||
                     !tail_zero(x->deltas, x->count + 1, x->delta_bits, x->delta_bytes)))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs bucket index has bits set past its fields");
    return AMQ_OK;
}

/* ---- every value, either layout ----------------------------------------------- */

void amq__gcs_values(const amq_gcs *f, uint64_t *out)
{
    if (f->bucketed) {
        uint64_t distinct[AMQ_GCS_MAX_SEGMENTS];
        int status = walk(f, distinct, out, NULL);
        assert(status == AMQ_OK); /* the filter was checked when made */
        (void)status;
        return;
    }
    amq__golomb_cursor c;
    amq__golomb_cursor_init(&c, f->stream, f->stream_bits, 0);
    uint64_t value = 0;
    for (uint64_t i = 0; i < f->count; i++) {
        uint64_t gap = 0;
        int status = amq__golomb_cursor_next(&c, &f->code, false, &gap);
        assert(status == AMQ_OK);
        (void)status;
        value += gap;
        out[i] = value;
    }
}

int amq__gcs_continuous_stream(const amq_gcs *f, uint8_t **bytes, uint64_t *bits)
{
    *bytes = NULL;
    *bits = 0;
    if (f->count > SIZE_MAX / sizeof(uint64_t))
        return AMQ_ENOMEM;
    uint64_t *values = amq__malloc(f->count ? (size_t)f->count * sizeof *values : 1);
    if (!values)
        return AMQ_ENOMEM;
    amq__gcs_values(f, values);
    amq__bitwriter w;
    amq__bitwriter_init(&w);
    amq__bitwriter_reserve(&w, f->stream_bits + 64);
    uint64_t previous = 0;
    for (uint64_t i = 0; i < f->count; i++) {
        amq__bitwriter_put_golomb(&w, values[i] - previous, f->divisor);
        previous = values[i];
    }
    amq__free(values);
    size_t len;
    return amq__bitwriter_finish(&w, bytes, &len, bits);
}
