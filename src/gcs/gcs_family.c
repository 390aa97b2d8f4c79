/*
 * gcs_family.c - the Golomb-coded set seen through the generic handle
 * (core/family.h): its spec options, build, merge, the saved form, loading
 * and info, and export. The set itself is described at the top of gcs.c;
 * BIP158's serialization is in gcs_file.c.
 *
 * Saved parameter block, little-endian, in order:
 *
 *     u64 M                u64 D (the divisor)       u64 stream bits
 *     u64 S (index entries)                           u64 index position base
 *     u32 index position bits                         u32 index lag bits
 *     u32 segments k (0..64), then k times u64 N_j
 *
 * and the payload is the filter's memory block as gcs.c draws it: the
 * stream (ceil(bits/8) bytes), 8 zero bytes, and with S > 0 the packed
 * index entries (ceil(S·(position bits + lag bits)/8) bytes) and 8 zero
 * bytes. A loaded filter borrows that block from the file image (a mapped
 * file is queried in place) after checking everything: the block's fields
 * against each other and the payload's length before anything is read,
 * then every code and every index entry against the stream (I1-I6 of
 * gcs.c); a file that fails is AMQ_ECORRUPT, never a query that reads out
 * of bounds or misses a key.
 */
#include "core/alloc.h"
#include "core/family.h"
#include "core/util.h"
#include "gcs/gcs_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- spec options ------------------------------------------------------------ */

static const amq__option option_range = {
    .name = "range",
    .type = AMQ__OPTION_COUNT,
    .count_min = 2,
    .count_max = UINT64_MAX,
    .value_name = "M",
    .help = "hashed values lie in [0, N x M): the rate is about 1/M (default: from fpr)",
};
static const amq__option option_rice_bits = {
    .name = "rice-bits",
    .type = AMQ__OPTION_COUNT,
    .count_min = 0,
    .count_max = 63,
    .count_word = "best",
    .value_name = "P",
    .help = "the Golomb-Rice parameter P, the divisor 2^P, or best (default: the best for M)",
};
static const amq__option option_divisor = {
    .name = "divisor",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = UINT64_MAX,
    .count_word = "best",
    .value_name = "D",
    .help = "a Golomb divisor D instead of rice-bits, or best",
};
static const amq__option option_index = {
    .name = "index",
    .type = AMQ__OPTION_COUNT,
    .count_min = 0,
    .count_max = (uint64_t)1 << 56,
    .value_name = "S",
    .help = "the seek-index entries (0: none; default N/128)",
};
static const char *const stream_names[] = { "auto", "bucketed", "continuous", NULL };
static const amq__option option_stream = {
    .name = "stream",
    .type = AMQ__OPTION_CHOICE,
    .choices = stream_names, /* indexed by amq_gcs_layout */
    .help = "bucketed: gaps restarted per bucket, a query decodes one (default with a Rice code); "
            "continuous: one run of gaps with a seek index, the article's and BIP158's",
};
static const amq__option option_bucket_keys = {
    .name = "bucket-keys",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = (uint64_t)1 << 20,
    .value_name = "B",
    .help = "bucketed stream: keys per bucket, W = B·M values (default 24)",
};
static const amq__option option_index_block = {
    .name = "index-block",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = (uint64_t)1 << 16,
    .value_name = "K",
    .help = "bucketed stream: buckets per offset-index block, a power of two (default 16)",
};
static const amq__option option_bip158_key = {
    .name = "bip158-key",
    .type = AMQ__OPTION_HEX,
    .hex_bytes = 16,
    .help = "a BIP158 compact block filter: SipHash with this key, M = 784931, P = 19",
};

static const amq__option *const gcs_options[] = {
    &amq__option_capacity, &amq__option_fpr,
    &option_range,         &option_rice_bits,
    &option_divisor,       &option_index,
    &option_stream,        &option_bucket_keys,
    &option_index_block,   &option_bip158_key,
    &amq__option_seed,     &amq__option_hash,
    &amq__option_key,      NULL,
};

/* A number option's text for a message: the number, or its word. */
static const char *count_text(const amq__option *option, const amq__option_value *v, char *buf,
                              size_t size)
{
    if (v->word)
        return option->count_word;
    snprintf(buf, size, "%llu", (unsigned long long)v->count);
    return buf;
}

/* bip158-key fixes the hash, its key, M and P: other options may repeat
 * them, not contradict them. */
static int check_bip158_options(const amq__spec *spec, const uint8_t key[16], amq_diag *diag)
{
    char buf[32];
    const amq__option_value *v;
    if ((v = amq__spec_get(spec, &amq__option_hash)) &&
        strcmp(amq__option_hash.choices[v->choice], "siphash") != 0)
        return amq__fail(diag, AMQ_EINVAL,
                         "option 'hash': %s contradicts bip158-key, which hashes with siphash",
                         amq__option_hash.choices[v->choice]);
    if ((v = amq__spec_get(spec, &amq__option_key)) && memcmp(v->hex, key, 16) != 0)
        return amq__fail(diag, AMQ_EINVAL, "option 'key' contradicts bip158-key: give one key");
    if (amq__spec_get(spec, &amq__option_seed))
        return amq__fail(diag, AMQ_EINVAL,
                         "option 'seed' does not apply with bip158-key (siphash is keyed)");
    if (amq__spec_get(spec, &amq__option_fpr))
        return amq__fail(diag, AMQ_EINVAL,
                         "option 'fpr' does not apply with bip158-key, which sets M = %d",
                         AMQ_GCS_BIP158_RANGE);
    if ((v = amq__spec_get(spec, &option_range)) && v->count != AMQ_GCS_BIP158_RANGE)
        return amq__fail(diag, AMQ_EINVAL,
                         "option 'range': %llu contradicts bip158-key, which sets M = %d",
                         (unsigned long long)v->count, AMQ_GCS_BIP158_RANGE);
    if ((v = amq__spec_get(spec, &option_rice_bits)) &&
        (v->word || v->count != AMQ_GCS_BIP158_RICE_BITS))
        return amq__fail(
            diag, AMQ_EINVAL, "option 'rice-bits': %s contradicts bip158-key, which sets P = %d",
            count_text(&option_rice_bits, v, buf, sizeof buf), AMQ_GCS_BIP158_RICE_BITS);
    if ((v = amq__spec_get(spec, &option_divisor)) &&
        (v->word || v->count != (uint64_t)1 << AMQ_GCS_BIP158_RICE_BITS))
        return amq__fail(diag, AMQ_EINVAL,
                         "option 'divisor': %s contradicts bip158-key, which sets D = 2^%d",
                         count_text(&option_divisor, v, buf, sizeof buf), AMQ_GCS_BIP158_RICE_BITS);
    return AMQ_OK;
}

static int params_from_spec(amq_gcs_params *params, const amq__spec *spec, amq_diag *diag)
{
    amq_gcs_params_init(params);
    const amq__option_value *rice = amq__spec_get(spec, &option_rice_bits);
    const amq__option_value *divisor = amq__spec_get(spec, &option_divisor);
    const amq__option_value *bip158 = amq__spec_get(spec, &option_bip158_key);
    const amq__option_value *index = amq__spec_get(spec, &option_index);
    if (rice && divisor)
        return amq__fail(diag, AMQ_EINVAL,
                         "options 'rice-bits' and 'divisor' exclude each other: give one");
    int status;
    if (bip158) {
        status = check_bip158_options(spec, bip158->hex, diag);
        if (status != AMQ_OK)
            return status;
        amq_gcs_params_bip158(params, bip158->hex);
    } else {
        status = amq__spec_hasher(spec, &params->hasher, 0, diag);
        if (status != AMQ_OK)
            return status;
        params->fpr = amq__spec_real(spec, &amq__option_fpr, 0);
        params->range = amq__spec_count(spec, &option_range, 0);
        if (rice) {
            params->code = rice->word ? AMQ_GCS_CODE_BEST_RICE : AMQ_GCS_CODE_RICE;
            params->rice_bits = (uint32_t)rice->count;
        }
        if (divisor) {
            params->code = divisor->word ? AMQ_GCS_CODE_BEST_GOLOMB : AMQ_GCS_CODE_GOLOMB;
            params->divisor = divisor->count;
        }
    }
    if (index)
        params->index_entries = index->count == 0 ? AMQ_GCS_NO_INDEX : index->count;
    const amq__option_value *v;
    if ((v = amq__spec_get(spec, &option_stream)) && v->choice != AMQ_GCS_LAYOUT_AUTO)
        params->layout = (amq_gcs_layout)v->choice;
    params->bucket_keys = (uint32_t)amq__spec_count(spec, &option_bucket_keys, 0);
    params->block_buckets = (uint32_t)amq__spec_count(spec, &option_index_block, 0);
    return AMQ_OK;
}

/* ---- the generic handle's view ------------------------------------------------ */

/* The layout field's values (absent: continuous). */
enum { GCS_LAYOUT_CONTINUOUS = 1, GCS_LAYOUT_BUCKETED = 2 };

/* The bucketed layout's default index, in bits per key at M = 2^8 (its
 * deltas' width grows slowly with M). */
#define GCS_BUCKET_INDEX_BITS_PER_KEY 0.45

/* The trade-off a filter's layout makes, as info details (the build
 * command prints them): the codes a query decodes, and the bits/key the
 * other layout would take with the same keys. The continuous layout's
 * figure is its expectation with D = M and its default index (an entry of
 * about 28 bits per 128 keys); the bucketed one's, the best Rice code's
 * with the default buckets and index (about 0.39 bits/key at M = 2^8). */
static void trade_off(const amq_gcs *f, amq_info *out)
{
    double bucket_codes = (double)AMQ_GCS_DEFAULT_BUCKET_KEYS / 2 + 1;
    double continuous_codes = (double)AMQ_GCS_DEFAULT_KEYS_PER_ENTRY / 2 + 1;
    if (f->bucketed) {
        double keys = (double)f->buckets.width / (double)f->range;
        amq__info_number(out, "query_codes", keys / 2 + 1);
        amq__info_number(out, "alt_layout_bits",
                         amq_gcs_expected_code_bits(f->range, f->range) + 28.0 / 128);
        amq__info_number(out, "alt_layout_codes", continuous_codes);
    } else {
        uint64_t per = f->index.entries ? f->count / f->index.entries : f->count;
        amq__info_number(out, "query_codes", (double)per / 2 + 1);
        amq__info_number(
            out, "alt_layout_bits",
            amq_gcs_expected_code_bits(f->range, (uint64_t)1 << amq_gcs_best_rice_bits(f->range)) +
                GCS_BUCKET_INDEX_BITS_PER_KEY);
        amq__info_number(out, "alt_layout_codes", bucket_codes);
    }
}

static int family_build(void **state, const amq__spec *spec, const void *const *keys,
                        const size_t *lens, size_t count, amq_diag *diag)
{
    amq_gcs_params params;
    int status = params_from_spec(&params, spec, diag);
    if (status != AMQ_OK)
        return status;
    amq_gcs *f = NULL;
    status = amq_gcs_build(&f, &params, keys, lens, count, diag);
    *state = f;
    return status;
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_gcs_contains(state, key, len);
}

/* One merge of the sorted keys with the stream (amq_gcs_contains_many). */
static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    return amq_gcs_contains_many(results, state, keys, lens, count);
}

static int family_merge(void *state, const void *other, amq_diag *diag)
{
    return amq_gcs_merge(state, other, diag);
}

static int family_save(const void *state, amq__saved *out)
{
    const amq_gcs *f = state;
    out->hasher = f->hasher;
    amq__params_put_u64(&out->params, f->range);
    amq__params_put_u64(&out->params, f->divisor);
    amq__params_put_u64(&out->params, f->stream_bits);
    amq__params_put_u64(&out->params, f->index.entries);
    amq__params_put_u64(&out->params, f->index.position_base);
    amq__params_put_u32(&out->params, f->index.position_bits);
    amq__params_put_u32(&out->params, f->index.lag_bits);
    amq__params_put_u32(&out->params, (uint32_t)f->segment_count);
    for (size_t s = 0; s < f->segment_count; s++)
        amq__params_put_u64(&out->params, f->segments[s].count);
    if (f->bucketed) {
        const amq__gcs_buckets *x = &f->buckets;
        amq__params_put_u32(&out->params, GCS_LAYOUT_BUCKETED);
        amq__params_put_u64(&out->params, x->width);
        amq__params_put_u32(&out->params, x->block_shift);
        amq__params_put_u32(&out->params, x->header_bits);
        amq__params_put_u32(&out->params, x->delta_bits);
        amq__params_put_u64(&out->params, x->base);
    }
    out->pieces[0].data = f->stream;
    out->pieces[0].len = amq__gcs_payload_bytes(f);
    out->piece_count = 1;
    return AMQ_OK;
}

/* The fields of a saved parameter block. */
typedef struct saved_fields {
    uint64_t range, divisor, stream_bits, index_entries, position_base;
    uint32_t position_bits, lag_bits, segments;
    uint64_t counts[AMQ_GCS_MAX_SEGMENTS];
    /* the layout field (GCS_LAYOUT_CONTINUOUS when the block has none) and
     * the bucketed layout's fields */
    uint32_t layout, block_shift, header_bits, delta_bits;
    uint64_t width, bucket_base;
} saved_fields;

static int read_fields(saved_fields *s, const amq__container *c, amq_diag *diag)
{
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    if (amq__params_get_u64(&r, &s->range) || amq__params_get_u64(&r, &s->divisor) ||
        amq__params_get_u64(&r, &s->stream_bits) || amq__params_get_u64(&r, &s->index_entries) ||
        amq__params_get_u64(&r, &s->position_base) || amq__params_get_u32(&r, &s->position_bits) ||
        amq__params_get_u32(&r, &s->lag_bits) || amq__params_get_u32(&r, &s->segments))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs parameters are %u bytes, too short",
                         c->params_len);
    if (s->segments > AMQ_GCS_MAX_SEGMENTS)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs filter has %u segments, more than %d",
                         s->segments, AMQ_GCS_MAX_SEGMENTS);
    for (uint32_t i = 0; i < s->segments; i++)
        if (amq__params_get_u64(&r, &s->counts[i]))
            return amq__fail(diag, AMQ_ECORRUPT, "gcs parameters end inside segment %u", i);
    s->layout = GCS_LAYOUT_CONTINUOUS;
    s->block_shift = s->header_bits = s->delta_bits = 0;
    s->width = s->bucket_base = 0;
    if (amq__params_end(&r) != 0) { /* more fields: the layout's */
        if (amq__params_get_u32(&r, &s->layout) || amq__params_get_u64(&r, &s->width) ||
            amq__params_get_u32(&r, &s->block_shift) || amq__params_get_u32(&r, &s->header_bits) ||
            amq__params_get_u32(&r, &s->delta_bits) || amq__params_get_u64(&r, &s->bucket_base))
            return amq__fail(diag, AMQ_ECORRUPT,
                             "gcs parameters have trailing bytes, not the layout fields");
        if (s->layout != GCS_LAYOUT_BUCKETED)
            return amq__fail(diag, AMQ_ECORRUPT, "gcs layout %u is not 2, the bucketed layout",
                             s->layout);
    }
    if (amq__params_end(&r))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs parameters have trailing bytes");
    return AMQ_OK;
}

/* Check the saved fields against each other and the payload's length,
 * and set f's shape from them (I1, and the sizes of the block). */
static int adopt_fields(amq_gcs *f, const saved_fields *s, const amq__container *c, amq_diag *diag)
{
    for (uint32_t i = 0; i < s->segments; i++) {
        if (s->counts[i] == 0)
            return amq__fail(diag, AMQ_ECORRUPT, "gcs segment %u holds no values", i);
        if (amq__gcs_add_segment(f, s->counts[i], diag) != AMQ_OK)
            return amq__fail(diag, AMQ_ECORRUPT, "gcs segments' universes pass 2^64");
    }
    /* Every code takes at least one bit; this also bounds the decoding. */
    if (f->count > s->stream_bits)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream of %llu bits cannot hold %llu codes",
                         (unsigned long long)s->stream_bits, (unsigned long long)f->count);
    if (s->stream_bits / 8 > c->payload_len)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream of %llu bits is longer than the payload",
                         (unsigned long long)s->stream_bits);
    if (s->index_entries > f->count)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs index has %llu entries for %llu values",
                         (unsigned long long)s->index_entries, (unsigned long long)f->count);
    if (s->position_bits > 64 || s->lag_bits > 64 ||
        (s->index_entries == 0 && (s->position_base || s->position_bits || s->lag_bits)))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs index field widths %u and %u are invalid",
                         s->position_bits, s->lag_bits);
    f->stream_bits = s->stream_bits;
    f->stream_bytes = s->stream_bits / 8 + (s->stream_bits % 8 != 0);
    amq__gcs_index_frame(&f->index, f, s->index_entries);
    f->index.position_base = s->position_base;
    f->index.position_bits = s->position_bits;
    f->index.lag_bits = s->lag_bits;
    uint64_t index_bits;
    if (!amq__mul_u64(s->index_entries, s->position_bits + s->lag_bits, &index_bits))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs index of %llu entries does not fit 64 bits",
                         (unsigned long long)s->index_entries);
    f->index.bytes = index_bits / 8 + (index_bits % 8 != 0);
    uint64_t expected = amq__gcs_payload_bytes(f);
    if (expected != c->payload_len)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "gcs payload is %llu bytes; its parameters describe %llu",
                         (unsigned long long)c->payload_len, (unsigned long long)expected);
    f->stream = c->payload;
    f->index.fields = c->payload + f->stream_bytes + AMQ__GCS_STREAM_SLACK;
    return AMQ_OK;
}

/* The bucketed layout's fields, checked against each other and the
 * payload's length, into f (B1 of gcs.c, and the sizes of the block). */
static int adopt_bucket_fields(amq_gcs *f, const saved_fields *s, const amq__container *c,
                               amq_diag *diag)
{
    for (uint32_t i = 0; i < s->segments; i++) {
        if (s->counts[i] == 0)
            return amq__fail(diag, AMQ_ECORRUPT, "gcs segment %u holds no values", i);
        if (amq__gcs_add_segment(f, s->counts[i], diag) != AMQ_OK)
            return amq__fail(diag, AMQ_ECORRUPT, "gcs segments' universes pass 2^64");
    }
    if (s->index_entries || s->position_base || s->position_bits || s->lag_bits)
        return amq__fail(diag, AMQ_ECORRUPT, "a bucketed gcs has continuous index fields");
    if ((s->divisor & (s->divisor - 1)) != 0 ||
        __builtin_ctzll(s->divisor) > AMQ__GCS_BUCKET_MAX_RICE)
        return amq__fail(diag, AMQ_ECORRUPT, "a bucketed gcs needs a Rice code, not divisor %llu",
                         (unsigned long long)s->divisor);
    if (s->width < 1 || s->width > ((uint64_t)1 << 62) || s->block_shift > 16 ||
        s->header_bits > 64 || s->delta_bits > 64)
        return amq__fail(
            diag, AMQ_ECORRUPT, "gcs bucket width %llu, block 2^%u or field widths %u, %u invalid",
            (unsigned long long)s->width, s->block_shift, s->header_bits, s->delta_bits);
    if (f->count > s->stream_bits)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream of %llu bits cannot hold %llu codes",
                         (unsigned long long)s->stream_bits, (unsigned long long)f->count);
    if (s->stream_bits / 8 > c->payload_len)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream of %llu bits is longer than the payload",
                         (unsigned long long)s->stream_bits);
    amq__gcs_buckets *x = &f->buckets;
    f->bucketed = true;
    x->width = s->width;
    x->block_shift = s->block_shift;
    x->header_bits = s->header_bits;
    x->delta_bits = s->delta_bits;
    x->base = s->bucket_base;
    if (!amq__gcs_bucket_frame(x, f->universe) || amq__gcs_bucket_index_bytes(x) > c->payload_len)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs bucket index is larger than the payload");
    if (x->count == 0 && (s->header_bits || s->delta_bits || s->bucket_base))
        return amq__fail(diag, AMQ_ECORRUPT, "an empty gcs has bucket index fields");
    f->stream_bits = s->stream_bits;
    f->stream_bytes = s->stream_bits / 8 + (s->stream_bits % 8 != 0);
    x->step = x->count ? f->stream_bits / x->count : 0;
    uint64_t expected = amq__gcs_payload_bytes(f);
    if (expected != c->payload_len)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "gcs payload is %llu bytes; its parameters describe %llu",
                         (unsigned long long)c->payload_len, (unsigned long long)expected);
    f->stream = c->payload;
    if (x->count) {
        x->headers = c->payload + f->stream_bytes + AMQ__GCS_STREAM_SLACK;
        x->deltas = x->headers + x->header_bytes + AMQ__GCS_INDEX_SLACK;
    }
    return AMQ_OK;
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    *borrows_image = false;
    saved_fields s;
    int status = read_fields(&s, c, diag);
    if (status != AMQ_OK)
        return status;
    if (s.range < 2 || s.divisor < 1)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs range M = %llu or divisor %llu is invalid",
                         (unsigned long long)s.range, (unsigned long long)s.divisor);
    amq_gcs *f = amq__gcs_new(&c->hasher, s.range, s.divisor);
    if (!f)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    uint64_t distinct[AMQ_GCS_MAX_SEGMENTS];
    status = s.layout == GCS_LAYOUT_BUCKETED ? adopt_bucket_fields(f, &s, c, diag)
                                             : adopt_fields(f, &s, c, diag);
    if (status == AMQ_OK)
        status = amq__gcs_verify(f, distinct, diag); /* either layout's checks */
    if (status != AMQ_OK) {
        amq_gcs_free(f);
        return status;
    }
    for (size_t i = 0; i < f->segment_count; i++) {
        f->segments[i].distinct = distinct[i];
        f->distinct += distinct[i];
    }
    *borrows_image = true;
    *state = f;
    return AMQ_OK;
}

static void family_info(const void *state, amq_info *out)
{
    const amq_gcs *f = state;
    out->capacity = f->count;
    out->keys = f->count;
    out->estimated_keys = (double)f->count;
    out->memory_bytes = amq_gcs_memory_bytes(f);
    out->bits_per_key = f->count ? (double)out->memory_bytes * 8 / (double)f->count : 0;
    out->target_fpr = 1.0 / (double)f->range;
    out->expected_fpr = amq_gcs_expected_fpr(f);
    out->hasher = f->hasher;
    int rice_bits = amq_gcs_rice_bits(f);
    amq__info_number(out, "range", (double)f->range);
    amq__info_number(out, "universe", (double)f->universe);
    amq__info_text(out, "code", rice_bits >= 0 ? "rice" : "golomb");
    if (rice_bits >= 0)
        amq__info_number(out, "rice_bits", rice_bits);
    amq__info_number(out, "divisor", (double)f->divisor);
    amq__info_number(out, "distinct_values", (double)f->distinct);
    amq__info_number(out, "stream_bits", (double)f->stream_bits);
    amq__info_text(out, "layout", f->bucketed ? "bucketed" : "continuous");
    if (f->bucketed) {
        const amq__gcs_buckets *x = &f->buckets;
        amq__info_number(out, "buckets", (double)x->count);
        amq__info_number(out, "bucket_keys", (double)x->width / (double)f->range);
        amq__info_number(out, "index_block", (double)((uint64_t)1 << x->block_shift));
    } else {
        amq__info_number(out, "index_entries", (double)f->index.entries);
    }
    amq__info_number(out, "index_bytes", (double)amq_gcs_index_bytes(f));
    amq__info_number(out, "segments", (double)f->segment_count);
    trade_off(f, out);
}

static int family_export(const void *state, const char *format, uint8_t **out, size_t *len,
                         amq_diag *diag)
{
    const amq_gcs *f = state;
    if (strcmp(format, "bip158") == 0) {
        int status = amq_gcs_bip158_serialize(out, len, f, NULL);
        if (status == AMQ_EUNSUPPORTED)
            return amq__fail(diag, status,
                             "a gcs union of %zu segments has no BIP158 form (one N, one stream)",
                             f->segment_count);
        return status == AMQ_OK ? status : amq__fail(diag, status, "out of memory");
    }
    if (strcmp(format, "raw") == 0) {
        uint8_t *bytes;
        uint64_t bits = f->stream_bits;
        if (f->bucketed) {
            if (amq__gcs_continuous_stream(f, &bytes, &bits) != AMQ_OK)
                return amq__fail(diag, AMQ_ENOMEM, "out of memory");
        } else {
            bytes = amq__malloc(f->stream_bytes ? (size_t)f->stream_bytes : 1);
            if (!bytes)
                return amq__fail(diag, AMQ_ENOMEM, "out of memory");
            memcpy(bytes, f->stream, (size_t)f->stream_bytes);
        }
        *out = bytes;
        *len = (size_t)(bits / 8 + (bits % 8 != 0));
        return AMQ_OK;
    }
    return amq__fail(diag, AMQ_EUNSUPPORTED, "gcs exports 'raw' and 'bip158', not '%s'", format);
}

static void family_destroy(void *state)
{
    amq_gcs_free(state);
}

const amq__family amq__gcs_family = {
    .name = "gcs",
    .id = AMQ__FAMILY_GCS,
    .options = gcs_options,
    .build = family_build,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .merge = family_merge,
    .save = family_save,
    .load = family_load,
    .info = family_info,
    .export_as = family_export,
    .destroy = family_destroy,
};
