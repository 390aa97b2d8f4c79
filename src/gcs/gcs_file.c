/*
 * gcs_file.c - BIP158's serialization of a Golomb-coded set. The set itself
 * is described at the top of gcs.c; its saved form and the generic
 * handle's view are in gcs_family.c.
 *
 * BIP158 serializes a filter as N in Bitcoin's CompactSize (one byte below
 * 0xfd; else 0xfd, 0xfe or 0xff followed by N in 2, 4 or 8 little-endian
 * bytes, always the shortest form) and then the stream.
 */
#include "core/alloc.h"
#include "core/util.h"
#include "gcs/gcs_internal.h"

#include <assert.h>
#include <string.h>

/* ---- BIP158 serialization -------------------------------------------------------- */

/* Write N as a CompactSize into out (9 bytes); returns its length. */
static size_t compact_size_put(uint8_t out[9], uint64_t n)
{
    if (n < 0xfd) {
        out[0] = (uint8_t)n;
        return 1;
    }
    if (n <= 0xffff) {
        out[0] = 0xfd;
        amq__store_u16le(out + 1, (uint16_t)n);
        return 3;
    }
    if (n <= 0xffffffffu) {
        out[0] = 0xfe;
        amq__store_u32le(out + 1, (uint32_t)n);
        return 5;
    }
    out[0] = 0xff;
    amq__store_u64le(out + 1, n);
    return 9;
}

/* Read a canonical CompactSize from bytes; returns its length, or 0 when it
 * is cut off or not in its shortest form. */
static size_t compact_size_get(const uint8_t *bytes, size_t len, uint64_t *n)
{
    if (len < 1)
        return 0;
    if (bytes[0] < 0xfd) {
        *n = bytes[0];
        return 1;
    }
    size_t width = bytes[0] == 0xfd ? 2 : bytes[0] == 0xfe ? 4 : 8;
    if (len < 1 + width)
        return 0;
    uint64_t value = width == 2   ? amq__load_u16le(bytes + 1)
                     : width == 4 ? amq__load_u32le(bytes + 1)
                                  : amq__load_u64le(bytes + 1);
    uint64_t least = width == 2 ? 0xfd : width == 4 ? 0x10000 : (uint64_t)1 << 32;
    if (value < least)
        return 0;
    *n = value;
    return 1 + width;
}

int amq_gcs_bip158_serialize(uint8_t **out, size_t *len, const amq_gcs *filter, amq_diag *diag)
{
    assert(filter && out && len);
    *out = NULL;
    *len = 0;
    if (filter->segment_count > 1)
        return amq__fail(diag, AMQ_EUNSUPPORTED,
                         "a filter of %zu segments has no BIP158 serialization (one stream)",
                         filter->segment_count);
    uint8_t prefix[9];
    size_t prefix_len = compact_size_put(prefix, filter->count);
    const uint8_t *stream = filter->stream;
    uint64_t stream_bytes = filter->stream_bytes, bits;
    uint8_t *converted = NULL;
    if (filter->bucketed) {
        if (amq__gcs_continuous_stream(filter, &converted, &bits) != AMQ_OK)
            return amq__fail(diag, AMQ_ENOMEM, "no memory for the continuous stream");
        stream = converted;
        stream_bytes = bits / 8 + (bits % 8 != 0);
    }
    if (stream_bytes > SIZE_MAX - prefix_len) {
        amq__free(converted);
        return amq__fail(diag, AMQ_ENOMEM, "the stream does not fit this address space");
    }
    size_t total = prefix_len + (size_t)stream_bytes;
    uint8_t *bytes = amq__malloc(total);
    if (!bytes) {
        amq__free(converted);
        return amq__fail(diag, AMQ_ENOMEM, "no memory for %zu bytes", total);
    }
    memcpy(bytes, prefix, prefix_len);
    if (stream_bytes)
        memcpy(bytes + prefix_len, stream, (size_t)stream_bytes);
    amq__free(converted);
    *out = bytes;
    *len = total;
    return AMQ_OK;
}

int amq_gcs_from_bip158(amq_gcs **out, const uint8_t key[16], const uint8_t *bytes, size_t len,
                        amq_diag *diag)
{
    assert(out && key && (len == 0 || bytes));
    *out = NULL;
    uint64_t count = 0;
    size_t prefix_len = compact_size_get(bytes, len, &count);
    if (prefix_len == 0)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "a BIP158 filter begins with N as a CompactSize: missing, cut off or "
                         "not in its shortest form");
    amq_gcs_params params;
    amq_gcs_params_bip158(&params, key);
    return amq_gcs_from_stream(out, &params, count, bytes + prefix_len, len - prefix_len, diag);
}
