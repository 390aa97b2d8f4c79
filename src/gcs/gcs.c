/*
 * gcs.c - Golomb-coded sets (F. Putze, P. Sanders, J. Singler, "Cache-,
 * Hash- and Space-Efficient Bloom Filters", WEA 2007; G. Bajo's article
 * "Golomb-coded sets: smaller than Bloom filters"; BIP158, O. Osuntokun and
 * A. Akselrod, "Compact Block Filters for Light Clients").
 *
 * This file chooses the parameters, builds the set and makes unions;
 * gcs_stream.c checks a stream and makes and checks its seek index;
 * gcs_query.c decodes for queries and batch matching; gcs_family.c is the
 * generic handle's view (specs, files, exports); gcs_file.c is BIP158's
 * serialization.
 *
 * The set
 * -------
 * N keys are hashed to 64 bits. Equal hashes are one key: the hashes are
 * sorted and duplicates dropped before anything else, so N counts distinct
 * hashes. Each hash becomes a value in the universe [0, N·M):
 *
 *     XXH3, SipHash   v = floor(h · N·M / 2^64)      (multiply-high)
 *     MD5             v = (h mod 2^32) mod N·M        (the article's %)
 *
 * where for MD5 h is digest bytes 8..15 big-endian (amq_hash64), so
 * h mod 2^32 is the integer of digest bytes 12..15 - the hex digest's
 * characters 24..31, as the article takes them. Multiply-high is monotone,
 * so the sorted hashes give the values already sorted; MD5's values are
 * sorted again. Two distinct hashes may give one value: both are kept (a
 * zero gap), as BIP158 requires. The values are stored as their gaps
 * d_i = v_i - v_{i-1} (v_{-1} = 0), each coded with divisor D:
 *
 *     q = d / D in unary (q 1-bits, a 0-bit), then r = d mod D:
 *     Rice (D = 2^P)  r in P bits;
 *     Golomb          r in truncated binary, b = ceil(log2 D) bits, or b - 1
 *                     for the u = 2^b - D smallest remainders (bits.c).
 *
 * The stream is MSB-first and padded with 0-bits to a byte; it is exactly
 * the article's and BIP158's encoding. The article's worked example (26
 * words, MD5, M = 64, Rice P = 6, N·M = 1664) begins with the values 151,
 * 192, 208:
 *
 *     gap 151 = 2·64 + 23   ->  110 010111
 *     gap  41 = 0·64 + 41   ->  0   101001
 *     gap  16 = 0·64 + 16   ->  0   010000
 *
 *     stream   110010111 0101001 0010000 ...   (197 bits for the 26 words)
 *
 * FPR: an absent key's hash is uniform, so its value hits one of the d
 * distinct stored values with chance d / (N·M), about 1/M (d < N by the
 * collisions, about N/(2M) of them). For MD5 the value comes from 32 bits:
 * d / min(N·M, 2^32).
 *
 * Space: N values spread over N·M are, near enough, a Poisson process of
 * rate 1/M on the integers, so the gaps are geometric: P(d = g) =
 * (1 - θ)θ^g with θ = e^(-1/M) (a zero gap is another value in the same
 * place). A code takes 1 + q + the remainder's bits, so its expected length
 * is
 *
 *     E(D) = 1 + θ^D / (1 - θ^D) + b - (1 - θ^u) / (1 - θ^D)
 *
 * (E[q] = sum over k >= 1 of P(d >= kD); the remainder is short with
 * probability P(r < u)). The entropy of the gaps is about log2(M) + 1.443
 * bits; Rice with P = log2 M takes log2(M) + 1.58, the best Rice parameter
 * (2^P near M/1.5) about log2(M) + 1.54, and the best Golomb divisor, the
 * smallest D with θ^D + θ^(D+1) <= 1 (Gallager and van Voorhis, 1975;
 * D = ceil(M·ln(1 + θ)), about 0.69·M), about log2(M) + 1.47.
 *
 * The seek index
 * --------------
 * A query must decode from the start of the stream to its value, N/2
 * codes on average. The index splits the universe into S sub-ranges of
 * width W = floor(universe / S) (the last one also takes the remainder) and
 * records for sub-range j, starting at j·W, the entry
 *
 *     position_j  the bit where the first code with value >= j·W begins
 *                 (the stream's end if there is none), and
 *     previous_j  the value before that code (0 before the first code),
 *
 * so decoding for a value v starts at the entry of v's sub-range and
 * decodes about N/S codes. v's sub-range is found without a division:
 * j = floor(v · floor((2^64 - 1)/W) / 2^64) is at most 2 below floor(v/W)
 * and is corrected upwards; any j with j·W <= v would be correct.
 *
 * The entries are part of the size, so they are packed small. Position j
 * is close to j·step, step = floor(stream_bits / S), and previous_j is
 * close below j·W, so an entry stores
 *
 *     position field  position_j - j·step - base   (base = the least
 *                     position_j - j·step over the entries: fields >= 0)
 *     lag field       j·W - previous_j
 *
 * each in the fewest bits that hold its largest value over the entries.
 * The position's deviation from j·step is a random walk of the codes'
 * lengths, some sqrt(N) codes at most; the lag is one gap. At a million
 * keys and M = 2^8 an entry takes about 16 + 12 bits, so the default
 * S = floor(N / 128) costs about 0.22 bits per key.
 *
 * The bucketed layout
 * -------------------
 * The seek index above must give the value before each entry as well as a
 * position, because the gaps run on across it. The bucketed layout (the
 * default for a Rice code, D = 2^P; FastFilter's GCS showed the idea)
 * restarts the gaps instead. The universe is cut into buckets of width
 * W = B·M, B about 24 keys: bucket b = floor(v · floor((2^64 - 1)/W) / 2^64)
 * (floor(v/W) or one less, from a multiply; monotone in v), and a value is
 * coded as its offset v - b·W (below 2W), its bucket's gaps starting from
 * 0. A query reads one bucket, about B/2 codes, from a known bit.
 *
 * Within a bucket the codes are split: the unary parts (q 1-bits, a 0-bit)
 * run from the bucket's first bit upwards, the P-bit remainders from its
 * last bit downwards, and the two meet exactly. The unary parts are then
 * scanned a 57-bit window at a time by counting trailing zeros, and each
 * remainder's place is known from the code's number, so finding the next
 * code does not wait on the last one's length. The bits are numbered as
 * bits.h's packed fields (least significant first) - not the article's
 * stream, which amq_export's raw and bip158 forms rebuild when asked.
 *
 * The offset index gives start_b for b = 0 .. count (start_count is the
 * stream's end) in two levels: per block of K = 8-16 buckets a header, the
 * least of start_b - b·step - base over the block (step = floor(bits /
 * count), base the least over all), and per bucket a delta from it, each in
 * the fewest bits for its largest value (about 16 and 9 bits at M = 2^8):
 * about 0.45 bits/key at B = 24, K = 16. The restart also leaves each
 * bucket's last gap to its end uncoded, which saves about 0.08 bits/key on
 * the stream (9.46 bits/key at M = 2^8, P = 7, against 9.54 continuous).
 *
 * Invariants of the bucketed layout (amq__gcs_verify_buckets):
 *   B1  the divisor is 2^P, P <= 56; 1 <= W <= 2^62; K = 2^k, k <= 16;
 *       count = bucket(universe - 1) + 1 (0 when empty).
 *   B2  start_0 = 0, start_count = stream bits, starts nondecreasing.
 *   B3  each bucket's bits hold whole codes exactly; each value v = b·W +
 *       offset has bucket(v) = b; the values lie in their segments, N in all.
 *   B4  each block's least delta and the least header are 0; the widths are
 *       the fewest bits for the largest field; bits past the last field, the
 *       padding and the slack are zero.
 *   B5  the payload is the stream, 8 zero bytes, the headers, 8 zero bytes,
 *       the deltas, 8 zero bytes.
 *
 * Segments: unions
 * ----------------
 * A set's values depend on its N, so two sets cannot be merged into one
 * value list of N_a + N_b values without the keys' hashes, which a filter
 * does not keep. A union keeps its parts as segments instead: segment j
 * holds N_j values in its own universe of N_j·M, shifted up by the sum of
 * the universes before it. One stream holds all of them in order (the
 * first code of a segment is a gap from the previous segment's last value),
 * one index covers the whole universe, and a query asks each segment for
 * its own value of the key. Nothing is lost; the size is the sum of the
 * parts'; the FPR is about the sum of the parts' (1 - the product of the
 * 1 - fpr_j); queries decode once per segment. A built filter has one
 * segment, or none when empty.
 *
 * Memory and file layout
 * ----------------------
 * Stream and index are one block, owned by the filter or borrowed from a
 * loaded file image (the payload of the file has exactly this layout, so
 * a mapped file is queried in place):
 *
 *     +------------------+--------+----------------------+--------+
 *     | stream           | slack  | index: S entries of  | slack  |
 *     | ceil(bits/8) B   | 8 zero | pos_bits + lag_bits  | 8 zero |
 *     +------------------+--------+----------------------+--------+
 *
 * The stream's slack lets the decoder load 8 bytes at the byte of any
 * stream bit; the index's (present only with an index) lets a packed field
 * be read with one 8-byte load. Index fields are packed least significant
 * bit first (bits.h, "packed fields"), entry j at bit j·(pos_bits +
 * lag_bits), its position field first.
 *
 * Invariants (amq__gcs_verify checks I2-I6; the loader checks I1 first):
 *   I1  0 <= segments <= 64; each N_j >= 1; universe_j = N_j·M; base_j the
 *       sum of the universes before it; N and the universe are the sums,
 *       and fit 64 bits; M >= 2, D >= 1.
 *   I2  the stream holds exactly N codes in exactly stream_bits bits; the
 *       bits after them to the byte boundary and the slack are zero.
 *   I3  values are nondecreasing, and segment j's lie in
 *       [base_j, base_j + universe_j).
 *   I4  distinct_j is the number of distinct values of segment j.
 *   I5  S <= N; entry j is (position_j, previous_j) as defined above.
 *   I6  the index is packed as above with base the least offset and each
 *       width the fewest bits for its largest field; the bits after the
 *       last field and the slack are zero.
 *
 * Costs: building hashes the keys, sorts the 64-bit hashes (sort.c: a
 * radix sort of their top 33 bits finished by an insertion sort), codes the gaps and
 * decodes the stream once more to check it and make the index: O(N), 16
 * bytes per key while building. Loading decodes the stream once to check
 * every code and every index entry: O(N) time, no memory beyond the
 * filter (a mapped filter allocates only its small header struct).
 * Queries never allocate; batch matching allocates its sort.
 *
 * Failures: AMQ_EINVAL for parameters out of range, AMQ_ERANGE when N·M or
 * a union does not fit, AMQ_EINCOMPATIBLE for unions of different
 * parameters, AMQ_ECORRUPT for a damaged stream or file, AMQ_ENOMEM.
 */
#include "core/alloc.h"
#include "core/bits.h"
#include "core/hash.h"
#include "core/sort.h"
#include "core/struct_size.h"
#include "core/util.h"
#include "gcs/gcs_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ------------------------------------------------------------------ */

double amq_gcs_expected_code_bits(uint64_t range, uint64_t divisor)
{
    if (range < 2 || divisor < 1)
        return 0;
    double log_theta = -1.0 / (double)range;
    double theta_d = exp((double)divisor * log_theta);
    double one_minus_theta_d = -expm1((double)divisor * log_theta);
    unsigned b = amq__ceil_log2(divisor);
    double u = ldexp(1.0, (int)b) - (double)divisor;
    double short_share = -expm1(u * log_theta) / one_minus_theta_d;
    return 1 + theta_d / one_minus_theta_d + b - short_share;
}

uint64_t amq_gcs_best_divisor(uint64_t range)
{
    if (range < 2)
        return 0;
    double log_theta = -1.0 / (double)range;
    double theta = exp(log_theta);
    double d = ceil(log1p(theta) / -log_theta);
    if (d < 1)
        d = 1;
    /* Against rounding in the line above: settle the defining inequality
     * theta^D + theta^(D+1) <= 1 < theta^(D-1) + theta^D directly (where
     * doubles still tell D from D + 1). */
    while (d > 1 && d < 0x1p52 && exp((d - 1) * log_theta) * (1 + theta) <= 1)
        d -= 1;
    while (d < 0x1p52 && exp(d * log_theta) * (1 + theta) > 1)
        d += 1;
    return d >= 0x1p64 ? UINT64_MAX : (uint64_t)d;
}

uint32_t amq_gcs_best_rice_bits(uint64_t range)
{
    if (range < 2)
        return 0;
    uint32_t best = 0;
    double best_bits = amq_gcs_expected_code_bits(range, 1);
    for (uint32_t p = 1; p < 64; p++) {
        double bits = amq_gcs_expected_code_bits(range, (uint64_t)1 << p);
        if (bits < best_bits) {
            best_bits = bits;
            best = p;
        }
    }
    return best;
}

/* ---- parameters ------------------------------------------------------------- */

void amq_gcs_params_init_sized(amq_gcs_params *params, size_t struct_size)
{
    assert(params && struct_size >= sizeof(size_t));
    amq_gcs_params defaults;
    memset(&defaults, 0, sizeof defaults);
    amq_hasher_xxh3(&defaults.hasher, 0);
    amq__struct_write(params, struct_size, &defaults, sizeof defaults);
}

void amq_gcs_params_bip158_sized(amq_gcs_params *params, size_t struct_size, const uint8_t key[16])
{
    assert(params && key && struct_size >= sizeof(size_t));
    amq_gcs_params bip158;
    amq_gcs_params_init(&bip158);
    amq_hasher_siphash(&bip158.hasher, key);
    bip158.range = AMQ_GCS_BIP158_RANGE;
    bip158.code = AMQ_GCS_CODE_RICE;
    bip158.rice_bits = AMQ_GCS_BIP158_RICE_BITS;
    bip158.layout = AMQ_GCS_LAYOUT_CONTINUOUS;
    amq__struct_write(params, struct_size, &bip158, sizeof bip158);
}

/* What the parameters come to before the keys are counted. */
typedef struct gcs_shape {
    amq_hasher hasher;
    uint64_t range;
    uint64_t divisor;
    uint64_t index_asked; /* as amq_gcs_params.index_entries */
    bool bucketed;
    uint64_t width;       /* bucketed: the bucket width W */
    unsigned block_shift; /* bucketed: log2 of the buckets per index block */
} gcs_shape;

/* Can the bucketed layout code with this divisor? A Rice code with P at
 * most AMQ__GCS_BUCKET_MAX_RICE. */
static bool bucketable(uint64_t divisor)
{
    return (divisor & (divisor - 1)) == 0 &&
           (unsigned)__builtin_ctzll(divisor) <= AMQ__GCS_BUCKET_MAX_RICE;
}

/* The layout and the bucket shape. */
static int resolve_layout(gcs_shape *out, const amq_gcs_params *params, amq_diag *diag)
{
    switch (params->layout) {
    case AMQ_GCS_LAYOUT_AUTO:
        out->bucketed = bucketable(out->divisor) && out->hasher.kind != AMQ_HASH_MD5 &&
                        params->index_entries == 0;
        break;
    case AMQ_GCS_LAYOUT_BUCKETED:
        if (!bucketable(out->divisor))
            return amq__fail(diag, AMQ_EINVAL,
                             "gcs divisor %llu: the bucketed layout needs a Rice code, a power "
                             "of two up to 2^%d",
                             (unsigned long long)out->divisor, AMQ__GCS_BUCKET_MAX_RICE);
        out->bucketed = true;
        break;
    case AMQ_GCS_LAYOUT_CONTINUOUS:
        out->bucketed = false;
        break;
    default:
        return amq__fail(diag, AMQ_EINVAL, "gcs layout %d is not an amq_gcs_layout",
                         (int)params->layout);
    }
    uint32_t keys = params->bucket_keys ? params->bucket_keys : AMQ_GCS_DEFAULT_BUCKET_KEYS;
    uint32_t block = params->block_buckets ? params->block_buckets : AMQ_GCS_DEFAULT_BLOCK_BUCKETS;
    if (keys > ((uint32_t)1 << 20))
        return amq__fail(diag, AMQ_EINVAL, "gcs bucket keys %u: at most 2^20", keys);
    if ((block & (block - 1)) != 0 || block > ((uint32_t)1 << 16))
        return amq__fail(diag, AMQ_EINVAL, "gcs block buckets %u: a power of two from 1 to 65536",
                         block);
    out->width = amq__gcs_bucket_width(out->range, keys);
    out->block_shift = (unsigned)__builtin_ctz(block);
    return AMQ_OK;
}

static int resolve_params(gcs_shape *out, const amq_gcs_params *caller_params, amq_diag *diag)
{
    amq_gcs_params read;
    amq_gcs_params_init(&read);
    if (caller_params) {
        int read_status = amq__struct_read(&read, sizeof read, caller_params, sizeof read,
                                           "amq_gcs_params", diag);
        if (read_status != AMQ_OK)
            return read_status;
    }
    const amq_gcs_params *params = &read;
    int status = amq__hasher_resolve(&out->hasher, &params->hasher, diag);
    if (status != AMQ_OK)
        return status;
    out->range = params->range;
    if (out->range == 0) {
        double fpr = params->fpr == 0 ? AMQ_GCS_DEFAULT_FPR : params->fpr;
        if (!(fpr > 0 && fpr < 1))
            return amq__fail(diag, AMQ_EINVAL, "gcs fpr %g is not in (0, 1)", fpr);
        long exponent = lround(-log2(fpr));
        if (exponent > 63)
            return amq__fail(diag, AMQ_ERANGE, "gcs fpr %g needs M = 2^%ld, past 2^63", fpr,
                             exponent);
        out->range = (uint64_t)1 << (exponent < 1 ? 1 : exponent);
    } else if (out->range < 2) {
        return amq__fail(diag, AMQ_EINVAL, "gcs range M = %llu: M must be at least 2",
                         (unsigned long long)out->range);
    }
    switch (params->code) {
    case AMQ_GCS_CODE_AUTO:
        /* The bucketed layout's default is the smallest Rice code; the
         * continuous one keeps the article's and BIP158's D = M. */
        out->divisor = out->range;
        if (params->layout != AMQ_GCS_LAYOUT_CONTINUOUS && out->hasher.kind != AMQ_HASH_MD5 &&
            params->index_entries == 0)
            out->divisor = (uint64_t)1 << amq_gcs_best_rice_bits(out->range);
        break;
    case AMQ_GCS_CODE_RICE:
        if (params->rice_bits > 63)
            return amq__fail(diag, AMQ_EINVAL, "gcs rice bits %u: at most 63", params->rice_bits);
        out->divisor = (uint64_t)1 << params->rice_bits;
        break;
    case AMQ_GCS_CODE_GOLOMB:
        if (params->divisor < 1)
            return amq__fail(diag, AMQ_EINVAL, "gcs divisor 0: it must be at least 1");
        out->divisor = params->divisor;
        break;
    case AMQ_GCS_CODE_BEST_RICE:
        out->divisor = (uint64_t)1 << amq_gcs_best_rice_bits(out->range);
        break;
    case AMQ_GCS_CODE_BEST_GOLOMB:
        out->divisor = amq_gcs_best_divisor(out->range);
        break;
    default:
        return amq__fail(diag, AMQ_EINVAL, "gcs code %d is not an amq_gcs_code", (int)params->code);
    }
    out->index_asked = params->index_entries;
    return resolve_layout(out, params, diag);
}

/* S for N values: the default floor(N / AMQ_GCS_DEFAULT_KEYS_PER_ENTRY),
 * none, or what was asked, at most N. */
static uint64_t index_entries_for(uint64_t asked, uint64_t count)
{
    if (asked == AMQ_GCS_NO_INDEX)
        return 0;
    if (asked == 0)
        return count / AMQ_GCS_DEFAULT_KEYS_PER_ENTRY;
    return asked < count ? asked : count;
}

/* ---- the filter object ------------------------------------------------------ */

amq_gcs *amq__gcs_new(const amq_hasher *hasher, uint64_t range, uint64_t divisor)
{
    amq_gcs *f = amq__calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->hasher = *hasher;
    f->range = range;
    f->divisor = divisor;
    amq__golomb_code_init(&f->code, divisor);
#if AMQ__GCS_HAVE_BMI2
    __builtin_cpu_init();
    f->use_bmi2 = __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
#endif
    return f;
}

int amq__gcs_add_segment(amq_gcs *f, uint64_t count, amq_diag *diag)
{
    assert(count >= 1);
    if (f->segment_count >= AMQ_GCS_MAX_SEGMENTS)
        return amq__fail(diag, AMQ_ERANGE, "a gcs union holds at most %d segments",
                         AMQ_GCS_MAX_SEGMENTS);
    uint64_t universe, total_universe, total_count;
    if (!amq__mul_u64(count, f->range, &universe))
        return amq__fail(diag, AMQ_ERANGE, "gcs universe N·M = %llu·%llu does not fit 64 bits",
                         (unsigned long long)count, (unsigned long long)f->range);
    if (!amq__add_u64(f->universe, universe, &total_universe) ||
        !amq__add_u64(f->count, count, &total_count))
        return amq__fail(diag, AMQ_ERANGE, "the gcs segments' universes together pass 2^64");
    amq__gcs_segment *s = &f->segments[f->segment_count++];
    s->count = count;
    s->universe = universe;
    s->base = f->universe;
    s->distinct = 0;
    f->universe = total_universe;
    f->count = total_count;
    return AMQ_OK;
}

void amq__gcs_free_owned(amq_gcs *f)
{
    if (f->owned_table)
        amq__aligned_free(f->owned);
    else
        amq__free(f->owned);
    f->owned = NULL;
    f->owned_table = false;
}

void amq_gcs_free(amq_gcs *filter)
{
    if (!filter)
        return;
    amq__gcs_free_owned(filter);
    amq__free(filter);
}

uint64_t amq__gcs_payload_bytes(const amq_gcs *f)
{
    uint64_t bytes = f->stream_bytes + AMQ__GCS_STREAM_SLACK;
    if (f->bucketed)
        return bytes + amq__gcs_bucket_index_bytes(&f->buckets);
    if (f->index.entries)
        bytes += f->index.bytes + AMQ__GCS_INDEX_SLACK;
    return bytes;
}

/* ---- building ----------------------------------------------------------------- */

/* Hand f the stream w has written, with an index of index_entries, and
 * give f to *out; on failure f is freed. */
static int finish_stream(amq_gcs **out, amq_gcs *f, amq__bitwriter *w, uint64_t index_entries,
                         amq_diag *diag)
{
    uint8_t *bytes;
    size_t byte_count;
    uint64_t bits;
    int status = amq__bitwriter_finish(w, &bytes, &byte_count, &bits);
    if (status != AMQ_OK)
        status = amq__fail(diag, status, "cannot code %llu gcs values: %s",
                           (unsigned long long)f->count, amq_strerror(status));
    else
        status = amq__gcs_adopt_stream(f, bytes, bits, index_entries, diag);
    if (status != AMQ_OK) {
        amq_gcs_free(f);
        return status;
    }
    *out = f;
    return AMQ_OK;
}

/* Build from count hashes in work (the hashes, then scratch for the sort:
 * count + AMQ__SORT_COUNTS words), which is freed. */
static int build_from_hashes(amq_gcs **out, const gcs_shape *shape, uint64_t *work, size_t count,
                             amq_diag *diag)
{
    uint64_t *values = work;
    size_t n = amq__sort_unique_u64(values, count, work + count);

    amq_gcs *f = amq__gcs_new(&shape->hasher, shape->range, shape->divisor);
    int status = f ? AMQ_OK : amq__fail(diag, AMQ_ENOMEM, "out of memory");
    if (status == AMQ_OK && n > 0)
        status = amq__gcs_add_segment(f, n, diag);
    if (status != AMQ_OK) {
        amq__free(work);
        amq_gcs_free(f);
        return status;
    }
    for (size_t i = 0; i < n; i++)
        values[i] = amq__gcs_value(f, &f->segments[0], values[i]);
    if (f->hasher.kind == AMQ_HASH_MD5)
        amq__sort_u64(values, NULL, n, work + count);
    if (shape->bucketed) {
        status = amq__gcs_encode_buckets(f, values, shape->width, shape->block_shift, diag);
        amq__free(work);
        if (status != AMQ_OK) {
            amq_gcs_free(f);
            return status;
        }
        *out = f;
        return AMQ_OK;
    }

    amq__bitwriter w;
    amq__bitwriter_init(&w);
    amq__bitwriter_reserve(&w, (uint64_t)n * (f->code.remainder_bits + 2));
    uint64_t previous = 0;
    for (size_t i = 0; i < n; i++) {
        amq__bitwriter_put_golomb(&w, values[i] - previous, f->divisor);
        previous = values[i];
    }
    amq__free(work);
    return finish_stream(out, f, &w, index_entries_for(shape->index_asked, n), diag);
}

/* Room for count hashes and the sort's scratch. */
static uint64_t *alloc_work(size_t count, amq_diag *diag)
{
    if (count > SIZE_MAX / (2 * sizeof(uint64_t)) - AMQ__SORT_COUNTS) {
        amq__fail(diag, AMQ_ENOMEM, "%zu keys do not fit memory", count);
        return NULL;
    }
    uint64_t *work = amq__malloc((2 * count + AMQ__SORT_COUNTS) * sizeof *work);
    if (!work)
        amq__fail(diag, AMQ_ENOMEM, "out of memory for %zu gcs keys", count);
    return work;
}

/* Build from keys[i] (lens[i] bytes), hashed, or when keys is NULL from
 * hashes[i]. */
static int build(amq_gcs **out, const amq_gcs_params *params, const void *const *keys,
                 const size_t *lens, const uint64_t *hashes, size_t count, amq_diag *diag)
{
    *out = NULL;
    gcs_shape shape;
    int status = resolve_params(&shape, params, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t *work = alloc_work(count, diag);
    if (!work)
        return AMQ_ENOMEM;
    for (size_t i = 0; i < count; i++)
        work[i] = keys ? amq__hash64(&shape.hasher, keys[i], lens[i]) : hashes[i];
    return build_from_hashes(out, &shape, work, count, diag);
}

int amq_gcs_build(amq_gcs **out, const amq_gcs_params *params, const void *const *keys,
                  const size_t *lens, size_t count, amq_diag *diag)
{
    assert(out && (count == 0 || (keys && lens)));
    return build(out, params, keys, lens, NULL, count, diag);
}

int amq_gcs_build_hash(amq_gcs **out, const amq_gcs_params *params, const uint64_t *hashes,
                       size_t count, amq_diag *diag)
{
    assert(out && (count == 0 || hashes));
    return build(out, params, NULL, NULL, hashes, count, diag);
}

int amq_gcs_from_stream(amq_gcs **out, const amq_gcs_params *params, uint64_t count,
                        const uint8_t *bytes, size_t len, amq_diag *diag)
{
    assert(out && (len == 0 || bytes));
    *out = NULL;
    /* A bare stream is the continuous layout's. */
    amq_gcs_params continuous;
    amq_gcs_params_init(&continuous);
    if (params) {
        int read_status = amq__struct_read(&continuous, sizeof continuous, params,
                                           sizeof continuous, "amq_gcs_params", diag);
        if (read_status != AMQ_OK)
            return read_status;
    }
    continuous.layout = AMQ_GCS_LAYOUT_CONTINUOUS;
    gcs_shape shape;
    int status = resolve_params(&shape, &continuous, diag);
    if (status != AMQ_OK)
        return status;
    /* Every code takes at least one bit. */
    if (count > (uint64_t)len * 8)
        return amq__fail(diag, AMQ_ECORRUPT, "%zu bytes cannot hold %llu gcs codes", len,
                         (unsigned long long)count);
    if (len > SIZE_MAX - AMQ__GCS_STREAM_SLACK)
        return amq__fail(diag, AMQ_ENOMEM, "a gcs stream of %zu bytes does not fit memory", len);
    amq_gcs *f = amq__gcs_new(&shape.hasher, shape.range, shape.divisor);
    uint8_t *copy = amq__calloc(len + AMQ__GCS_STREAM_SLACK, 1);
    if (!f || !copy) {
        amq_gcs_free(f);
        amq__free(copy);
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    }
    if (len)
        memcpy(copy, bytes, len);
    if (count > 0)
        status = amq__gcs_add_segment(f, count, diag);
    uint64_t end = 0, distinct[AMQ_GCS_MAX_SEGMENTS];
    if (status == AMQ_OK)
        status = amq__gcs_decode_all(f, copy, (uint64_t)len * 8, &end, distinct, diag);
    uint64_t used = end / 8 + (end % 8 != 0);
    if (status == AMQ_OK && used != len)
        status = amq__fail(diag, AMQ_ECORRUPT, "gcs stream has %llu bytes past its %llu codes",
                           (unsigned long long)(len - used), (unsigned long long)count);
    if (status == AMQ_OK && end % 8 && (copy[len - 1] << (end % 8)) & 0xff)
        status = amq__fail(diag, AMQ_ECORRUPT, "gcs stream's padding bits are not zero");
    if (status == AMQ_OK)
        status =
            amq__gcs_adopt_stream(f, copy, end, index_entries_for(shape.index_asked, count), diag);
    else
        amq__free(copy);
    if (status != AMQ_OK) {
        amq_gcs_free(f);
        return status;
    }
    *out = f;
    return AMQ_OK;
}

/* ---- union -------------------------------------------------------------------- */

/* The union of a and b as a new filter (a segment per part). */
static int gcs_union(amq_gcs **out, const amq_gcs *a, const amq_gcs *b, amq_diag *diag)
{
    assert(out && a && b);
    *out = NULL;
    if (a->range != b->range)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "gcs range M differs: %llu and %llu",
                         (unsigned long long)a->range, (unsigned long long)b->range);
    if (a->divisor != b->divisor)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "gcs divisor differs: %llu and %llu",
                         (unsigned long long)a->divisor, (unsigned long long)b->divisor);
    int status = amq__hasher_compare(&a->hasher, &b->hasher, diag);
    if (status != AMQ_OK)
        return status;
    amq_gcs *f = amq__gcs_new(&a->hasher, a->range, a->divisor);
    if (!f)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    for (size_t s = 0; s < a->segment_count && status == AMQ_OK; s++)
        status = amq__gcs_add_segment(f, a->segments[s].count, diag);
    for (size_t s = 0; s < b->segment_count && status == AMQ_OK; s++)
        status = amq__gcs_add_segment(f, b->segments[s].count, diag);
    if (status != AMQ_OK) {
        amq_gcs_free(f);
        return status;
    }
    /* Every value of both, b's shifted past a's universe, coded again in
     * a's layout. */
    uint64_t *values = NULL;
    if (f->count <= SIZE_MAX / sizeof *values)
        values = amq__malloc(f->count ? (size_t)f->count * sizeof *values : 1);
    if (!values) {
        amq_gcs_free(f);
        return amq__fail(diag, AMQ_ENOMEM, "out of memory for a gcs union");
    }
    amq__gcs_values(a, values);
    amq__gcs_values(b, values + a->count);
    for (uint64_t i = a->count; i < f->count; i++)
        values[i] += a->universe;
    if (a->bucketed) {
        status = amq__gcs_encode_buckets(f, values, a->buckets.width, a->buckets.block_shift, diag);
        amq__free(values);
        if (status != AMQ_OK) {
            amq_gcs_free(f);
            return status;
        }
        *out = f;
        return AMQ_OK;
    }
    amq__bitwriter w;
    amq__bitwriter_init(&w);
    amq__bitwriter_reserve(&w, a->stream_bits + b->stream_bits + 64);
    uint64_t previous = 0;
    for (uint64_t i = 0; i < f->count; i++) {
        amq__bitwriter_put_golomb(&w, values[i] - previous, f->divisor);
        previous = values[i];
    }
    amq__free(values);
    uint64_t entries = a->index.entries + b->index.entries;
    return finish_stream(out, f, &w, entries < f->count ? entries : f->count, diag);
}

/* ---- statistics --------------------------------------------------------------- */

uint64_t amq_gcs_keys(const amq_gcs *filter)
{
    return filter->count;
}

uint64_t amq_gcs_distinct_values(const amq_gcs *filter)
{
    return filter->distinct;
}

uint64_t amq_gcs_range(const amq_gcs *filter)
{
    return filter->range;
}

uint64_t amq_gcs_universe(const amq_gcs *filter)
{
    return filter->universe;
}

uint64_t amq_gcs_divisor(const amq_gcs *filter)
{
    return filter->divisor;
}

int amq_gcs_rice_bits(const amq_gcs *filter)
{
    uint64_t d = filter->divisor;
    return (d & (d - 1)) == 0 ? (int)__builtin_ctzll(d) : -1;
}

uint64_t amq_gcs_index_entries(const amq_gcs *filter)
{
    return filter->index.entries;
}

uint64_t amq_gcs_stream_bits(const amq_gcs *filter)
{
    return filter->stream_bits;
}

uint64_t amq_gcs_stream_bytes(const amq_gcs *filter)
{
    return filter->stream_bytes;
}

uint64_t amq_gcs_index_bytes(const amq_gcs *filter)
{
    if (filter->bucketed)
        return filter->buckets.header_bytes + filter->buckets.delta_bytes;
    return filter->index.bytes;
}

uint64_t amq_gcs_memory_bytes(const amq_gcs *filter)
{
    return filter->stream_bytes + amq_gcs_index_bytes(filter);
}

size_t amq_gcs_segments(const amq_gcs *filter)
{
    return filter->segment_count;
}

double amq_gcs_expected_fpr(const amq_gcs *filter)
{
    double miss = 1;
    for (size_t s = 0; s < filter->segment_count; s++) {
        const amq__gcs_segment *segment = &filter->segments[s];
        double reachable = (double)segment->universe;
        if (filter->hasher.kind == AMQ_HASH_MD5 && reachable > 0x1p32)
            reachable = 0x1p32;
        miss *= 1 - (double)segment->distinct / reachable;
    }
    return 1 - miss;
}

const amq_hasher *amq_gcs_hasher(const amq_gcs *filter)
{
    return &filter->hasher;
}

void amq_gcs_stream(const uint8_t **bytes, uint64_t *bit_count, const amq_gcs *filter)
{
    *bytes = filter->stream;
    if (bit_count)
        *bit_count = filter->stream_bits;
}

int amq_gcs_merge(amq_gcs *into, const amq_gcs *other, amq_diag *diag)
{
    assert(into && other);
    amq_gcs *merged = NULL;
    int status = gcs_union(&merged, into, other, diag);
    if (status != AMQ_OK)
        return status;
    /* into's old stream, when it was borrowed from a file image, stays
     * valid while the handle that owns the image lives. */
    amq__gcs_free_owned(into);
    *into = *merged;
    amq__free(merged);
    return AMQ_OK;
}
