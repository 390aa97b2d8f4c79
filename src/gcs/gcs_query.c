/*
 * gcs_query.c - asking a Golomb-coded set (the set and its stream are
 * described at the top of gcs.c).
 *
 * A single query computes the key's value in each segment, starts at the
 * index entry of the value's sub-range (or at the stream's start), and
 * decodes gaps, adding them up, until the sum reaches the value: equal
 * means "maybe present", past it "absent". The stream's end also means
 * absent.
 *
 * Batch matching (BIP158's "match any", and "which of these keys") sorts
 * the queries' values, all segments' together, with the query each came
 * from, and merges them with the stream in one pass: the cursor decodes
 * forward while its value is below the next query's; equal answers that
 * query. Before decoding towards a query the cursor jumps to the query's
 * index entry when that is ahead of it, so stretches of the stream with no
 * query near them are skipped. Each code is decoded at most once: O(N + Q)
 * decoding after an O(Q) radix sort.
 */
#include "core/alloc.h"
#include "core/bits.h"
#include "core/hash.h"
#include "core/sort.h"
#include "core/util.h"
#include "gcs/gcs_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* A position in the stream: the next code to decode and the value of the
 * code before it. started is false until a code has been decoded since
 * the cursor was placed (so that value 0 before the first code is not
 * taken for a stored 0). */
typedef struct cursor {
    amq__golomb_cursor stream;
    uint64_t value;
    bool started;
} cursor;

static void cursor_place(cursor *c, const amq_gcs *f, amq__gcs_entry at)
{
    amq__golomb_cursor_init(&c->stream, f->stream, f->stream_bits, at.position);
    c->value = at.previous;
    c->started = false;
}

/* Decode codes until the value reaches target or the stream ends; true
 * when a code's value equals target. The stream was checked when the
 * filter was made (I2), so every decode succeeds. The loop works on local
 * copies, which the compiler keeps in registers; it is inlined into each
 * of cursor_reach's two calls, where rice is a constant (see
 * amq__golomb_cursor_next). */
static AMQ__ALWAYS_INLINE bool reach(cursor *c, const amq_gcs *f, uint64_t target, bool rice)
{
    amq__golomb_cursor stream = c->stream;
    uint64_t value = c->value, end = f->stream_bits;
    bool started = c->started;
    while (!started || value < target) {
        if (stream.position >= end)
            break;
        uint64_t gap = 0;
        amq__golomb_cursor_next(&stream, &f->code, rice, &gap);
        value += gap;
        started = true;
    }
    c->stream = stream;
    c->value = value;
    c->started = started;
    return started && value == target;
}

static bool cursor_reach(cursor *c, const amq_gcs *f, uint64_t target)
{
    if (f->code.short_limit == 0)
        return reach(c, f, target, true);
    return reach(c, f, target, false);
}

static amq__gcs_entry start_for(const amq_gcs *f, uint64_t value)
{
    if (f->index.entries == 0)
        return (amq__gcs_entry){ 0, 0 };
    return amq__gcs_entry_at(&f->index, amq__gcs_entry_for(&f->index, value));
}

/* Is offset target among the values of the bucket in the stream bits
 * [unary, remainders)? The unary parts are read from the bucket's first
 * bit upwards, a window of 57 bits at a time: each 0-bit in it ends a code,
 * found with a count of trailing zeros of the inverted window and cleared
 * with x & (x - 1), so that finding the next code does not wait for the
 * value of this one. The remainders are read from the bucket's last bit
 * downwards, each at a position known from the code's number. While the
 * unary position is below the lowest remainder read, a code remains. p is
 * a constant where the caller's switch makes it one, so the shifts by it
 * are immediate. */
static AMQ__ALWAYS_INLINE bool bucket_scan(const uint8_t *bytes, unsigned p, uint64_t unary,
                                           uint64_t remainders, uint64_t target)
{
    const uint64_t window_mask = ((uint64_t)1 << 57) - 1;
    const uint64_t remainder_mask = ((uint64_t)1 << p) - 1;
    uint64_t window_at = unary, value = 0;
    uint64_t zeros = ~amq__packed_window(bytes, window_at) & window_mask;
    while (unary < remainders) {
        while (AMQ__UNLIKELY(zeros == 0)) {
            window_at += 57;
            zeros = ~amq__packed_window(bytes, window_at) & window_mask;
        }
        uint64_t zero = window_at + (uint64_t)__builtin_ctzll(zeros);
        zeros &= zeros - 1;
        remainders -= p;
        value += ((zero - unary) << p) + (amq__packed_window(bytes, remainders) & remainder_mask);
        unary = zero + 1;
        if (value >= target)
            return value == target;
    }
    return false;
}

/* Is offset target in bucket b? */
static AMQ__ALWAYS_INLINE bool bucket_holds(const amq_gcs *f, uint64_t b, uint64_t target)
{
    const amq__gcs_buckets *x = &f->buckets;
    uint64_t s = amq__gcs_bucket_start(x, b), e = amq__gcs_bucket_start(x, b + 1);
    switch (f->code.remainder_bits) {
    case 6:
        return bucket_scan(f->stream, 6, s, e, target);
    case 7:
        return bucket_scan(f->stream, 7, s, e, target);
    case 8:
        return bucket_scan(f->stream, 8, s, e, target);
    case 9:
        return bucket_scan(f->stream, 9, s, e, target);
    case 10:
        return bucket_scan(f->stream, 10, s, e, target);
    default:
        return bucket_scan(f->stream, f->code.remainder_bits, s, e, target);
    }
}

/* Ask for the cache lines bucket b can lie in before its delta is read:
 * the bucket starts within 2^delta_bits bits above its floor (which its
 * block's header gives), and holds about step bits. The header area is
 * small and stays cached; the deltas and the stream do not, so the
 * stream's miss then overlaps the delta's instead of following it. */
static AMQ__ALWAYS_INLINE void bucket_prefetch(const amq_gcs *f, uint64_t b)
{
    const amq__gcs_buckets *x = &f->buckets;
    uint64_t low = amq__gcs_bucket_floor(x, b);
    uint64_t high = low + ((uint64_t)1 << x->delta_bits) + x->step;
    if (high > f->stream_bits)
        high = f->stream_bits;
    for (uint64_t byte = low >> 3, i = 0; i < 4 && byte <= high >> 3; i++, byte += 64)
        __builtin_prefetch(f->stream + byte);
}

static AMQ__ALWAYS_INLINE bool contains_bucketed(const amq_gcs *f, uint64_t hash)
{
    const amq__gcs_buckets *x = &f->buckets;
    for (size_t s = 0; s < f->segment_count; s++) {
        uint64_t value = amq__gcs_value(f, &f->segments[s], hash);
        uint64_t b = amq__gcs_bucket_of(x, value);
        bucket_prefetch(f, b);
        if (bucket_holds(f, b, value - b * x->width))
            return true;
    }
    return false;
}

/* The queries a bucketed batch prefetches for at a time. */
#define BUCKET_GROUP 16

/* The bucketed batch (match's contract): a group's values are taken once,
 * their delta fields and likely bucket lines asked for, and only then
 * are their buckets scanned, so that the group's misses overlap. */
static AMQ__ALWAYS_INLINE int match_bucketed(const amq_gcs *f, const uint64_t *hashes, size_t count,
                                             uint8_t *results, bool stop_at_first)
{
    const amq__gcs_buckets *x = &f->buckets;
    const size_t segments = f->segment_count;
    uint64_t values[BUCKET_GROUP][AMQ_GCS_MAX_SEGMENTS];
    int any = 0;
    for (size_t first = 0; first < count; first += BUCKET_GROUP) {
        size_t group = count - first < BUCKET_GROUP ? count - first : BUCKET_GROUP;
        for (size_t i = 0; i < group; i++)
            for (size_t s = 0; s < segments; s++) {
                uint64_t value = amq__gcs_value(f, &f->segments[s], hashes[first + i]);
                uint64_t b = amq__gcs_bucket_of(x, value);
                values[i][s] = value;
                __builtin_prefetch(x->deltas + b * x->delta_bits / 8);
                bucket_prefetch(f, b);
            }
        for (size_t i = 0; i < group; i++)
            for (size_t s = 0; s < segments; s++) {
                uint64_t b = amq__gcs_bucket_of(x, values[i][s]);
                if (bucket_holds(f, b, values[i][s] - b * x->width)) {
                    any = 1;
                    if (stop_at_first)
                        return 1;
                    results[first + i] = 1;
                    break;
                }
            }
    }
    return any;
}

static bool contains_bucketed_plain(const amq_gcs *f, uint64_t hash)
{
    return contains_bucketed(f, hash);
}

static int match_bucketed_plain(const amq_gcs *f, const uint64_t *hashes, size_t count,
                                uint8_t *results, bool stop_at_first)
{
    return match_bucketed(f, hashes, count, results, stop_at_first);
}

/* The same compiled for BMI1 and BMI2, where the CPU has them (f->use_bmi2):
 * shifts by a register amount without the count register, and a count of
 * trailing zeros and a clearing of the lowest set bit in one instruction
 * each, which shortens the scan of a bucket. */
#if AMQ__GCS_HAVE_BMI2
__attribute__((target("bmi,bmi2"))) static bool contains_bucketed_bmi2(const amq_gcs *f,
                                                                       uint64_t hash)
{
    return contains_bucketed(f, hash);
}

__attribute__((target("bmi,bmi2"))) static int match_bucketed_bmi2(const amq_gcs *f,
                                                                   const uint64_t *hashes,
                                                                   size_t count, uint8_t *results,
                                                                   bool stop_at_first)
{
    return match_bucketed(f, hashes, count, results, stop_at_first);
}
#else
#define contains_bucketed_bmi2 contains_bucketed_plain
#define match_bucketed_bmi2    match_bucketed_plain
#endif

bool amq_gcs_contains_hash(const amq_gcs *filter, uint64_t hash)
{
    if (filter->bucketed)
        return filter->use_bmi2 ? contains_bucketed_bmi2(filter, hash)
                                : contains_bucketed_plain(filter, hash);
    for (size_t s = 0; s < filter->segment_count; s++) {
        uint64_t value = amq__gcs_value(filter, &filter->segments[s], hash);
        cursor c;
        cursor_place(&c, filter, start_for(filter, value));
        if (cursor_reach(&c, filter, value))
            return true;
    }
    return false;
}

bool amq_gcs_contains(const amq_gcs *filter, const void *key, size_t len)
{
    return amq_gcs_contains_hash(filter, amq__hash64(&filter->hasher, key, len));
}

/* ---- batch matching ------------------------------------------------------------ */

/* Answer count hashes; with stop_at_first, return 1 at the first hit (the
 * results are then incomplete), else fill results. Returns 1/0 (a hit or
 * none) or AMQ_ENOMEM.
 *
 * The queries' values are sorted with the query each came from. When a
 * value and a query number fit one 64-bit word together (value bits +
 * number bits <= 64: a universe below 2^44 for a million queries), they
 * are sorted as one word, value above number, which halves the sort's
 * memory traffic; else the numbers ride along as the sort's values. */
static int match(const amq_gcs *f, const uint64_t *hashes, size_t count, uint8_t *results,
                 bool stop_at_first)
{
    if (results)
        memset(results, 0, count * sizeof *results);
    if (f->bucketed) /* a query reads one bucket: no merge to gain from */
        return f->use_bmi2 ? match_bucketed_bmi2(f, hashes, count, results, stop_at_first)
                           : match_bucketed_plain(f, hashes, count, results, stop_at_first);
    size_t segments = f->segment_count;
    if (count == 0 || segments == 0)
        return 0;
    if (count > (SIZE_MAX / sizeof(uint64_t) - AMQ__SORT_COUNTS) / 4 / segments)
        return AMQ_ENOMEM;
    size_t targets = count * segments;
    uint64_t *work = amq__malloc((4 * targets + AMQ__SORT_COUNTS) * sizeof *work);
    if (!work)
        return AMQ_ENOMEM;
    unsigned number_bits = amq__bit_width(count - 1);
    bool packed = amq__bit_width(f->universe - 1) + number_bits <= 64;
    uint64_t *values = work, *queries = work + targets, *scratch = work + 2 * targets;
    for (size_t s = 0, t = 0; s < segments; s++) {
        for (size_t i = 0; i < count; i++, t++) {
            values[t] = amq__gcs_value(f, &f->segments[s], hashes[i]);
            if (packed)
                values[t] = number_bits ? values[t] << number_bits | i : values[t];
            else
                queries[t] = i;
        }
    }
    amq__sort_u64(values, packed ? NULL : queries, targets, packed ? queries : scratch);

    int any = 0;
    uint64_t number_mask = number_bits ? UINT64_MAX >> (64 - number_bits) : 0;
    cursor c;
    cursor_place(&c, f, (amq__gcs_entry){ 0, 0 });
    for (size_t t = 0; t < targets; t++) {
        uint64_t value = packed && number_bits ? values[t] >> number_bits : values[t];
        size_t query = packed ? (size_t)(values[t] & number_mask) : (size_t)queries[t];
        /* A target a sub-range or more ahead: jump if its entry is ahead. */
        if (f->index.entries &&
            (!c.started || (c.value < value && value - c.value >= f->index.width))) {
            amq__gcs_entry at = start_for(f, value);
            if (at.position > c.stream.position)
                cursor_place(&c, f, at);
        }
        if (cursor_reach(&c, f, value)) {
            any = 1;
            if (stop_at_first)
                break;
            results[query] = 1;
        }
    }
    amq__free(work);
    return any;
}

int amq_gcs_contains_many_hash(uint8_t *results, const amq_gcs *filter, const uint64_t *hashes,
                               size_t count)
{
    assert(filter && (count == 0 || (hashes && results)));
    int status = match(filter, hashes, count, results, false);
    return status < 0 ? status : AMQ_OK;
}

int amq_gcs_contains_any_hash(const amq_gcs *filter, const uint64_t *hashes, size_t count)
{
    assert(filter && (count == 0 || hashes));
    return match(filter, hashes, count, NULL, true);
}

/* The keys' hashes in a new array (NULL when out of memory). */
static uint64_t *hash_keys(const amq_gcs *f, const void *const *keys, const size_t *lens,
                           size_t count)
{
    if (count > SIZE_MAX / sizeof(uint64_t))
        return NULL;
    uint64_t *hashes = amq__malloc(count ? count * sizeof *hashes : 1);
    if (hashes)
        for (size_t i = 0; i < count; i++)
            hashes[i] = amq__hash64(&f->hasher, keys[i], lens[i]);
    return hashes;
}

int amq_gcs_contains_many(uint8_t *results, const amq_gcs *filter, const void *const *keys,
                          const size_t *lens, size_t count)
{
    assert(filter && (count == 0 || (keys && lens && results)));
    uint64_t *hashes = hash_keys(filter, keys, lens, count);
    if (!hashes)
        return AMQ_ENOMEM;
    int status = amq_gcs_contains_many_hash(results, filter, hashes, count);
    amq__free(hashes);
    return status;
}

int amq_gcs_contains_any(const amq_gcs *filter, const void *const *keys, const size_t *lens,
                         size_t count)
{
    assert(filter && (count == 0 || (keys && lens)));
    uint64_t *hashes = hash_keys(filter, keys, lens, count);
    if (!hashes)
        return AMQ_ENOMEM;
    int status = amq_gcs_contains_any_hash(filter, hashes, count);
    amq__free(hashes);
    return status;
}
