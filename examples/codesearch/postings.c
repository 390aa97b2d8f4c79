/*
 * postings.c - Rice-coded document gaps and bitmaps (postings.h).
 *
 * A list of n documents among N has gaps averaging N/n; Rice coding with
 * parameter k (a gap g is g >> k in unary, then its k low bits) costs
 * about k + 1 + g / 2^k bits a gap, least near 2^k = 0.69 N/n: about
 * log2(N/n) + 1.5 bits a document. k follows from N and n, so it is not
 * stored. Bits are written from each byte's lowest.
 */
#include "postings.h"

#include <string.h>

static unsigned rice_k(uint32_t count, uint32_t documents)
{
    uint64_t mean = count ? (uint64_t)documents * 69 / (100 * (uint64_t)count) : 0;
    unsigned k = 0;
    while (k < 31 && ((uint64_t)2 << k) <= mean)
        k++;
    return k;
}

/* The gap before list[i]: the first document itself, then the documents
 * skipped since the previous one. */
static uint32_t gap(const uint32_t *list, uint32_t i)
{
    return i ? list[i] - list[i - 1] - 1 : list[0];
}

size_t postings_size(const uint32_t *list, uint32_t count, uint32_t documents, unsigned kind)
{
    if (kind == POSTINGS_BITMAP)
        return ((size_t)documents + 7) / 8;
    unsigned k = rice_k(count, documents);
    uint64_t bits = 0;
    for (uint32_t i = 0; i < count; i++)
        bits += (gap(list, i) >> k) + 1 + k;
    return (size_t)((bits + 7) / 8);
}

void postings_encode(uint8_t *out, const uint32_t *list, uint32_t count, uint32_t documents,
                     unsigned kind)
{
    size_t len = postings_size(list, count, documents, kind);
    memset(out, 0, len);
    if (kind == POSTINGS_BITMAP) {
        for (uint32_t i = 0; i < count; i++)
            out[list[i] / 8] |= (uint8_t)(1u << (list[i] % 8));
        return;
    }
    unsigned k = rice_k(count, documents);
    uint64_t bit = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t g = gap(list, i);
        for (uint32_t q = g >> k; q > 0; q--, bit++)
            out[bit / 8] |= (uint8_t)(1u << (bit % 8));
        bit++; /* the unary's ending 0 */
        for (unsigned b = 0; b < k; b++, bit++)
            if (g >> b & 1)
                out[bit / 8] |= (uint8_t)(1u << (bit % 8));
    }
}

bool postings_decode(uint64_t *bitmap, const uint8_t *in, size_t len, uint32_t count,
                     uint32_t documents, unsigned kind)
{
    if (kind == POSTINGS_BITMAP) {
        if (len != ((size_t)documents + 7) / 8)
            return false;
        uint32_t seen = 0;
        for (uint32_t d = 0; d < documents; d++)
            if (in[d / 8] >> (d % 8) & 1) {
                bitmap[d / 64] |= (uint64_t)1 << (d % 64);
                seen++;
            }
        /* bits past the last document must be clear */
        for (uint32_t d = documents; d < 8 * (uint32_t)len; d++)
            if (in[d / 8] >> (d % 8) & 1)
                return false;
        return seen == count;
    }
    if (kind != POSTINGS_RICE)
        return false;
    unsigned k = rice_k(count, documents);
    uint64_t bit = 0, bits = 8 * (uint64_t)len;
    uint64_t next = 0; /* the smallest document the next gap can reach */
    for (uint32_t i = 0; i < count; i++) {
        uint64_t q = 0;
        while (bit < bits && (in[bit / 8] >> (bit % 8) & 1)) {
            q++;
            bit++;
        }
        if (bit + 1 + k > bits)
            return false;
        bit++;
        uint64_t g = q << k;
        for (unsigned b = 0; b < k; b++, bit++)
            g |= (uint64_t)(in[bit / 8] >> (bit % 8) & 1) << b;
        uint64_t d = next + g;
        if (d >= documents)
            return false;
        bitmap[d / 64] |= (uint64_t)1 << (d % 64);
        next = d + 1;
    }
    return (bits - bit) < 8; /* no whole byte left over */
}
