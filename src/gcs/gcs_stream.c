/*
 * gcs_stream.c - a Golomb-coded set's stream decoded whole: checking every
 * code, counting the distinct values, and making or checking the seek
 * index (the set, the index and the invariants I1-I6 are described at the
 * top of gcs.c).
 *
 * One pass decodes every code with bits.h's fast cursor, which is safe on
 * untrusted streams as used here: each code is decoded only from a
 * position inside the stream, and a code that ends past the stream, a value
 * that overflows or leaves its segment's universe, or the wrong number of
 * codes is AMQ_ECORRUPT. As the values go by, index entry j is handed to a
 * sink as soon as a value reaches j·W: building stores the entries and
 * packs them in the fewest bits; loading compares each with the stored
 * entry and checks that the stored packing is that fewest-bits one, so a
 * damaged index is refused instead of sending a query to the wrong place.
 */
#include "core/alloc.h"
#include "core/bits.h"
#include "core/util.h"
#include "gcs/gcs_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- decoding the whole stream ------------------------------------------------ */

/* Called with each index entry as the stream is decoded. */
typedef void (*entry_sink)(void *context, uint64_t j, amq__gcs_entry entry);

/* Decode every code (as amq__gcs_decode_all); with S > 0 entries, also hand
 * entry j of an index over f's universe to sink, in order. */
static int decode_stream(const amq_gcs *f, const uint8_t *bytes, uint64_t limit_bits,
                         uint64_t entries, entry_sink sink, void *context, uint64_t *end,
                         uint64_t distinct[AMQ_GCS_MAX_SEGMENTS], amq_diag *diag)
{
    amq__gcs_index frame;
    amq__gcs_index_frame(&frame, f, entries);
    amq__golomb_cursor c;
    amq__golomb_cursor_init(&c, bytes, limit_bits, 0);
    uint64_t value = 0, code = 0, next_entry = 0;
    for (size_t s = 0; s < f->segment_count; s++) {
        const amq__gcs_segment *segment = &f->segments[s];
        uint64_t limit = segment->base + segment->universe;
        distinct[s] = 0;
        for (uint64_t i = 0; i < segment->count; i++, code++) {
            uint64_t position = c.position, previous = value, gap;
            if (position >= limit_bits ||
                amq__golomb_cursor_next(&c, &f->code, false, &gap) != AMQ_OK ||
                c.position > limit_bits)
                return amq__fail(diag, AMQ_ECORRUPT,
                                 "gcs stream: code %llu at bit %llu is cut off by the end of the "
                                 "stream or does not fit 64 bits",
                                 (unsigned long long)code, (unsigned long long)position);
            if (!amq__add_u64(value, gap, &value) || value >= limit || value < segment->base)
                return amq__fail(diag, AMQ_ECORRUPT,
                                 "gcs stream: code %llu gives a value outside segment %zu's "
                                 "universe [%llu, %llu)",
                                 (unsigned long long)code, s, (unsigned long long)segment->base,
                                 (unsigned long long)limit);
            distinct[s] += i == 0 || gap != 0;
            for (; next_entry < frame.entries && next_entry * frame.width <= value; next_entry++)
                sink(context, next_entry, (amq__gcs_entry){ position, previous });
        }
    }
    for (; next_entry < frame.entries; next_entry++)
        sink(context, next_entry, (amq__gcs_entry){ c.position, value });
    *end = c.position;
    return AMQ_OK;
}

static void ignore_entry(void *context, uint64_t j, amq__gcs_entry entry)
{
    (void)context;
    (void)j;
    (void)entry;
}

int amq__gcs_decode_all(const amq_gcs *f, const uint8_t *bytes, uint64_t limit_bits, uint64_t *end,
                        uint64_t distinct[AMQ_GCS_MAX_SEGMENTS], amq_diag *diag)
{
    return decode_stream(f, bytes, limit_bits, 0, ignore_entry, NULL, end, distinct, diag);
}

/* ---- the seek index ----------------------------------------------------------- */

void amq__gcs_index_frame(amq__gcs_index *index, const amq_gcs *f, uint64_t entries)
{
    memset(index, 0, sizeof *index);
    index->entries = entries;
    if (entries == 0)
        return;
    index->width = f->universe / entries;
    index->reciprocal = UINT64_MAX / index->width;
    index->position_step = f->stream_bits / entries;
}

/* An entry's position relative to j·step, made unsigned by adding 2^63, so
 * that unsigned comparison orders the signed offsets. */
static uint64_t biased_offset(const amq__gcs_index *index, uint64_t j, uint64_t position)
{
    return (position - j * index->position_step) ^ ((uint64_t)1 << 63);
}

/* Entries into an array (building). */
typedef struct entry_array {
    amq__gcs_entry *entries;
} entry_array;

static void store_entry(void *context, uint64_t j, amq__gcs_entry entry)
{
    ((entry_array *)context)->entries[j] = entry;
}

/* The widths and base of the canonical packing of entries (I6). */
static void index_shape(amq__gcs_index *index, const amq__gcs_entry *entries)
{
    uint64_t least = UINT64_MAX, most = 0, lag_most = 0;
    for (uint64_t j = 0; j < index->entries; j++) {
        uint64_t offset = biased_offset(index, j, entries[j].position);
        least = offset < least ? offset : least;
        most = offset > most ? offset : most;
        uint64_t lag = j * index->width - entries[j].previous;
        lag_most = lag > lag_most ? lag : lag_most;
    }
    index->position_base = least ^ ((uint64_t)1 << 63);
    index->position_bits = amq__bit_width(most - least);
    index->lag_bits = amq__bit_width(lag_most);
    uint64_t bits = index->entries * (index->position_bits + index->lag_bits);
    index->bytes = bits / 8 + (bits % 8 != 0);
}

static void index_pack(const amq__gcs_index *index, const amq__gcs_entry *entries, uint8_t *out)
{
    unsigned entry_bits = index->position_bits + index->lag_bits;
    for (uint64_t j = 0; j < index->entries; j++) {
        uint64_t bit = j * entry_bits;
        amq__gcs_field_put(out, bit, index->position_bits,
                           entries[j].position - j * index->position_step - index->position_base);
        amq__gcs_field_put(out, bit + index->position_bits, index->lag_bits,
                           j * index->width - entries[j].previous);
    }
}

/* ---- taking a stream ---------------------------------------------------------- */

int amq__gcs_adopt_stream(amq_gcs *f, uint8_t *bytes, uint64_t stream_bits, uint64_t index_entries,
                          amq_diag *diag)
{
    assert(!f->owned && index_entries <= f->count);
    uint64_t stream_bytes = stream_bits / 8 + (stream_bits % 8 != 0);
    size_t stream_part = (size_t)stream_bytes + AMQ__GCS_STREAM_SLACK;
    uint8_t *owned = amq__realloc(bytes, stream_part);
    amq__gcs_entry *entries =
        amq__calloc(index_entries ? (size_t)index_entries : 1, sizeof *entries);
    if (!owned || !entries) {
        amq__free(owned ? owned : bytes);
        amq__free(entries);
        return amq__fail(diag, AMQ_ENOMEM, "out of memory for a gcs stream of %llu bits",
                         (unsigned long long)stream_bits);
    }
    memset(owned + stream_bytes, 0, AMQ__GCS_STREAM_SLACK);
    if (stream_bits % 8)
        owned[stream_bytes - 1] &= (uint8_t)(0xff00u >> (stream_bits % 8));
    f->owned = owned;
    f->stream = owned;
    f->stream_bits = stream_bits;
    f->stream_bytes = stream_bytes;

    entry_array sink = { entries };
    uint64_t end = 0, distinct[AMQ_GCS_MAX_SEGMENTS];
    int status = decode_stream(f, owned, stream_bits, index_entries, store_entry, &sink, &end,
                               distinct, diag);
    if (status == AMQ_OK && end != stream_bits)
        status = amq__fail(diag, AMQ_ECORRUPT, "gcs stream has %llu bits past its %llu codes",
                           (unsigned long long)(stream_bits - end), (unsigned long long)f->count);
    if (status != AMQ_OK) {
        amq__free(entries);
        return status;
    }
    f->distinct = 0;
    for (size_t s = 0; s < f->segment_count; s++) {
        f->segments[s].distinct = distinct[s];
        f->distinct += distinct[s];
    }
    amq__gcs_index_frame(&f->index, f, index_entries);
    if (index_entries) {
        index_shape(&f->index, entries);
        size_t index_part = (size_t)f->index.bytes + AMQ__GCS_INDEX_SLACK;
        uint8_t *grown = amq__realloc(owned, stream_part + index_part);
        if (!grown) {
            amq__free(entries);
            return amq__fail(diag, AMQ_ENOMEM, "out of memory for a gcs index of %llu entries",
                             (unsigned long long)index_entries);
        }
        memset(grown + stream_part, 0, index_part);
        index_pack(&f->index, entries, grown + stream_part);
        f->owned = grown;
        f->stream = grown;
        f->index.fields = grown + stream_part;
    }
    amq__free(entries);
    return AMQ_OK;
}

/* ---- checking ----------------------------------------------------------------- */

/* Entries compared with the stored index (loading, checking). */
typedef struct entry_check {
    const amq__gcs_index *index;
    uint64_t first_wrong; /* the first entry that differs, or UINT64_MAX */
    uint64_t least, most, lag_most;
} entry_check;

static void compare_entry(void *context, uint64_t j, amq__gcs_entry entry)
{
    entry_check *check = context;
    const amq__gcs_index *index = check->index;
    amq__gcs_entry stored = amq__gcs_entry_at(index, j);
    if ((stored.position != entry.position || stored.previous != entry.previous) &&
        check->first_wrong == UINT64_MAX)
        check->first_wrong = j;
    uint64_t offset = biased_offset(index, j, entry.position);
    check->least = offset < check->least ? offset : check->least;
    check->most = offset > check->most ? offset : check->most;
    uint64_t lag = j * index->width - entry.previous;
    check->lag_most = lag > check->lag_most ? lag : check->lag_most;
}

static bool all_zero(const uint8_t *bytes, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (bytes[i])
            return false;
    return true;
}

int amq__gcs_verify(const amq_gcs *f, uint64_t distinct[AMQ_GCS_MAX_SEGMENTS], amq_diag *diag)
{
    if (f->bucketed)
        return amq__gcs_verify_buckets(f, distinct, diag);
    const amq__gcs_index *index = &f->index;
    entry_check check = { index, UINT64_MAX, UINT64_MAX, 0, 0 };
    uint64_t end = 0;
    int status = decode_stream(f, f->stream, f->stream_bits, index->entries, compare_entry, &check,
                               &end, distinct, diag);
    if (status != AMQ_OK)
        return status;
    if (end != f->stream_bits)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream has %llu bits past its %llu codes",
                         (unsigned long long)(f->stream_bits - end), (unsigned long long)f->count);
    if (f->stream_bits % 8 && (f->stream[f->stream_bytes - 1] << (f->stream_bits % 8)) & 0xff)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream's padding bits are not zero");
    if (!all_zero(f->stream + f->stream_bytes, AMQ__GCS_STREAM_SLACK))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs stream is followed by nonzero bytes");
    if (index->entries == 0)
        return AMQ_OK;
    if (check.first_wrong != UINT64_MAX)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "gcs index entry %llu does not point where the stream says",
                         (unsigned long long)check.first_wrong);
    if (index->position_base != (check.least ^ ((uint64_t)1 << 63)) ||
        index->position_bits != amq__bit_width(check.most - check.least) ||
        index->lag_bits != amq__bit_width(check.lag_most))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs index is not packed in its fewest bits");
    uint64_t bits = index->entries * (index->position_bits + index->lag_bits);
    if (bits % 8 && index->fields[bits / 8] >> (bits % 8))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs index has bits set past its last entry");
    if (!all_zero(index->fields + index->bytes, AMQ__GCS_INDEX_SLACK))
        return amq__fail(diag, AMQ_ECORRUPT, "gcs index is followed by nonzero bytes");
    return AMQ_OK;
}

int amq__gcs_check(const amq_gcs *f, amq_diag *diag)
{
    uint64_t distinct[AMQ_GCS_MAX_SEGMENTS], total = 0;
    int status = amq__gcs_verify(f, distinct, diag);
    if (status != AMQ_OK)
        return status;
    for (size_t s = 0; s < f->segment_count; s++) {
        if (distinct[s] != f->segments[s].distinct)
            return amq__fail(
                diag, AMQ_ECORRUPT, "gcs segment %zu holds %llu distinct values, not %llu", s,
                (unsigned long long)distinct[s], (unsigned long long)f->segments[s].distinct);
        total += distinct[s];
    }
    if (total != f->distinct)
        return amq__fail(diag, AMQ_ECORRUPT, "gcs holds %llu distinct values, not %llu",
                         (unsigned long long)total, (unsigned long long)f->distinct);
    return AMQ_OK;
}
