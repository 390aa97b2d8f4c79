/*
 * fuzz_golomb_decode.c - the bit reader's Golomb and Rice decoders on
 * arbitrary streams.
 *
 * Input layout:
 *
 *   byte 0       bit 0: 0 = Rice, 1 = Golomb; bits 1-3: how many bits (0-7)
 *                to drop from the end of the stream, so that streams end
 *                inside a byte
 *   Rice:        byte 1 & 63 = the rice parameter P; the stream follows
 *   Golomb:      byte 1 & 63 = a shift s, bytes 2-9 = a little-endian x;
 *                the divisor is x >> s, or 1 when that is 0; the stream
 *                follows
 *
 * Values are decoded until the stream ends or a read fails; a failure must
 * be AMQ_ECORRUPT and leave the position unchanged. The values are then
 * re-encoded: both codes are bijective on well-formed streams, so the
 * re-encoding must reproduce the decoded prefix bit for bit and decode to
 * the same values. A power-of-two divisor is also decoded as Rice, which
 * must agree.
 */
#include "core/bits.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct decoder {
    bool rice;
    unsigned rice_bits;
    uint64_t divisor;
} decoder;

static int decode(amq__bitreader *r, const decoder *d, uint64_t *value)
{
    return d->rice ? amq__bitreader_get_rice(r, d->rice_bits, value)
                   : amq__bitreader_get_golomb(r, d->divisor, value);
}

static void encode(amq__bitwriter *w, const decoder *d, uint64_t value)
{
    if (d->rice)
        amq__bitwriter_put_rice(w, value, d->rice_bits);
    else
        amq__bitwriter_put_golomb(w, value, d->divisor);
}

static bool same_bits(const uint8_t *a, const uint8_t *b, uint64_t bit_count)
{
    if (bit_count == 0)
        return true;
    size_t whole = (size_t)(bit_count / 8);
    if (memcmp(a, b, whole) != 0)
        return false;
    unsigned rest = (unsigned)(bit_count % 8);
    if (rest == 0)
        return true;
    unsigned mask = (0xFF00u >> rest) & 0xFFu;
    return ((a[whole] ^ b[whole]) & mask) == 0;
}

/* Decode everything decodable; returns the value count (values has room
 * for one value per stream bit: every code is at least one bit). */
static size_t decode_all(const uint8_t *stream, uint64_t bit_count, const decoder *d,
                         uint64_t *values, uint64_t *end)
{
    amq__bitreader r;
    amq__bitreader_init(&r, stream, bit_count);
    size_t count = 0;
    for (;;) {
        uint64_t before = r.position, v;
        int status = decode(&r, d, &v);
        if (status != AMQ_OK) {
            if (status != AMQ_ECORRUPT || r.position != before)
                abort();
            break;
        }
        if (r.position <= before || r.position > bit_count)
            abort();
        values[count++] = v;
    }
    *end = r.position;
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    decoder d = { .rice = (data[0] & 1) == 0, .rice_bits = data[1] & 63u, .divisor = 1 };
    unsigned dropped_bits = (data[0] >> 1) & 7u;
    size_t header = 2;
    if (!d.rice) {
        if (size < 10)
            return 0;
        d.divisor = amq__load_u64le(data + 2) >> (data[1] & 63u);
        if (d.divisor == 0)
            d.divisor = 1;
        header = 10;
    }
    const uint8_t *stream = data + header;
    uint64_t bit_count = (uint64_t)(size - header) * 8;
    bit_count = bit_count > dropped_bits ? bit_count - dropped_bits : 0;

    uint64_t *values = malloc((size_t)(bit_count + 1) * sizeof *values);
    uint64_t *again = malloc((size_t)(bit_count + 1) * sizeof *again);
    if (!values || !again)
        abort();
    uint64_t end;
    size_t count = decode_all(size > header ? stream : NULL, bit_count, &d, values, &end);

    if (!d.rice && (d.divisor & (d.divisor - 1)) == 0) {
        decoder as_rice = { .rice = true,
                            .rice_bits = (unsigned)__builtin_ctzll(d.divisor),
                            .divisor = 1 };
        uint64_t rice_end;
        size_t rice_count =
            decode_all(size > header ? stream : NULL, bit_count, &as_rice, again, &rice_end);
        if (rice_count != count || rice_end != end ||
            memcmp(values, again, count * sizeof *values) != 0)
            abort();
    }

    amq__bitwriter w;
    amq__bitwriter_init(&w);
    for (size_t i = 0; i < count; i++)
        encode(&w, &d, values[i]);
    uint8_t *bytes;
    size_t byte_count;
    uint64_t written;
    if (amq__bitwriter_finish(&w, &bytes, &byte_count, &written) != AMQ_OK)
        abort();
    if (written != end || !same_bits(bytes, stream, end))
        abort();
    uint64_t again_end;
    size_t again_count = decode_all(bytes, written, &d, again, &again_end);
    if (again_count != count || again_end != end ||
        memcmp(values, again, count * sizeof *values) != 0)
        abort();

    free(bytes);
    free(values);
    free(again);
    return 0;
}
