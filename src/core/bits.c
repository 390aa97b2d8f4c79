/*
 * bits.c - bit vectors, and the bit writer and reader behind every
 * compressed bit stream of the library (Golomb-coded sets, hash-free Bloom
 * banks).
 *
 * Bit vectors
 * -----------
 * A vector of n bits is ceil(n / 64) uint64_t words; bit i is bit i % 64
 * (least significant first) of word i / 64. Indexes are 64-bit, so a vector
 * of 2^32 bits or more works. The get/set calls are inline in bits.h; this
 * file allocates (zeroed, so the bits past n stay 0 as the header promises),
 * counts bits, and saves and loads the words: as little-endian uint64s, so a
 * little-endian host saves its words without a copy, and a load checks the
 * length and that the bits past n are 0 before trusting them. A vector is
 * limited to AMQ__BITVEC_MAX_BITS = 2^63 bits: then its word count times 64
 * still fits a uint64_t and its byte size (2^60) fits size_t, ptrdiff_t and
 * off_t on any 64-bit system. A larger request, or one whose byte size does
 * not fit size_t (32-bit systems), answers AMQ_ERANGE before anything is
 * allocated.
 *
 * Bit streams
 * -----------
 * Streams are MSB-first: bit k of the stream is bit 7 - k % 8 of byte k / 8,
 * and an n-bit value is written most significant bit first. The stream is
 * padded with 0-bits to a whole byte when finished. Writing 0b101 in 3 bits
 * gives one byte 0xA0 (1010 0000) holding 3 bits.
 *
 * The codes. A value v is split into a quotient q and a remainder r by a
 * divisor M; q is written in unary (q 1-bits, then a 0-bit), r in binary:
 *
 *   Rice, parameter P (M = 2^P):  q = v >> P, r = the low P bits of v,
 *                                 always P bits. A value costs q + 1 + P bits.
 *   Golomb, any M >= 1:           q = v / M, r = v % M in truncated binary.
 *                                 With b = ceil(log2 M) and u = 2^b - M, the
 *                                 u smallest remainders (r < u) take b - 1
 *                                 bits, the others are written as r + u in b
 *                                 bits. M = 1 has no remainder bits; M = 2^P
 *                                 has u = 0 and is exactly the Rice code.
 *
 * Truncated binary is what makes Golomb optimal for a geometric
 * distribution when M is not a power of two: of the M remainders, u get a
 * code one bit shorter, and the codes stay prefix-free because the b-1 bit
 * patterns below u never begin a b-bit code (r + u >= 2u, so its top b-1
 * bits are >= u).
 *
 * Worked example, Rice with P = 2, values 0, 5, 9:
 *
 *   0 = 0*4 + 0   ->  0   00
 *   5 = 1*4 + 1   ->  10  01
 *   9 = 2*4 + 1   ->  110 01
 *
 *   stream   0 00 10 01 110 01 + padding
 *   bytes    0001 0011  1001 0000   = 0x13 0x90, 12 bits
 *
 * and Golomb with M = 5 (b = 3, u = 3: remainders 0, 1, 2 are 00, 01, 10;
 * 3 and 4 become 6 and 7, i.e. 110 and 111), values 3, 7, 14:
 *
 *   3  = 0*5 + 3  ->  0   110
 *   7  = 1*5 + 2  ->  10  10
 *   14 = 2*5 + 4  ->  110 111
 *
 *   stream   0110 1010 1101 11 + padding  = 0x6A 0xDC, 14 bits
 *
 * The writer keeps the stream in a byte buffer that grows geometrically
 * (doubling, at least 64 bytes), zero-filled beyond the bits written, with
 * 8 spare bytes past the last partly written byte. So a put of up to 64
 * bits is one big-endian 64-bit read-modify-write, plus one byte when the
 * value straddles nine bytes. Failures (out of memory, a stream past 2^64
 * bits, a bad parameter) are sticky: the first one is kept in the status
 * field, later puts do nothing, and amq__bitwriter_finish reports it.
 *
 * The reader is the query path of a Golomb-coded set, so it works on 64-bit
 * windows instead of single bits. A window is the 64 stream bits starting
 * at a bit position: the 8 bytes from position / 8, loaded big-endian and
 * shifted left by position % 8, so at least 57 of its bits are stream bits.
 * Near the end of the buffer (fewer than 8 bytes left) the bytes are loaded
 * one by one and the missing ones read as zero, so the reader never touches
 * a byte past ceil(bit_count / 8). A unary run is decoded by inverting the
 * window and counting leading zeros: one instruction finds up to 57 1-bits.
 * A truncated-binary remainder of up to 57 bits is taken from one window
 * holding all b candidate bits; whether it is the short or the long code
 * is a select rather than a branch, since on hashed data it is a coin flip.
 * Every read checks its end against bit_count, so bits of the last byte
 * beyond the stream, and the zeros read in past the buffer, are never taken
 * as data: a unary run whose 0-bit is not inside the stream, a remainder
 * cut off by the end, or a value that does not fit 64 bits (q << P or
 * q * M + r overflowing) answer AMQ_ECORRUPT. A read works on a copy of
 * the position and stores it back only on success, so a failed read leaves
 * the reader where it was.
 */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE, which the POSIX level alone hides */
#include "core/bits.h"
#include "core/alloc.h"
#include "core/util.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- bit vector ---------------------------------------------------------- */

void *amq__alloc_table(uint64_t bytes, bool zeroed)
{
    /* Under a host's allocator, cache lines only (alloc.h says why). */
    bool huge = bytes >= AMQ__HUGE_PAGE && !amq__allocator_is_custom();
    uint64_t alignment = huge ? AMQ__HUGE_PAGE : 64;
    uint64_t rounded = (bytes + alignment - 1) / alignment * alignment;
    if (bytes == 0 || rounded > SIZE_MAX)
        return NULL;
    void *table = amq__aligned_alloc((size_t)alignment, (size_t)rounded);
    if (!table)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (huge)
        madvise(table, (size_t)rounded, MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
    if (zeroed)
        memset(table, 0, (size_t)rounded);
    return table;
}

/* A vector of bit_count zero bits: a table (amq__alloc_table), or, sparse,
 * zeroed pages the system maps when first touched (amq__aligned_calloc:
 * calloc's, with the C library's allocator). Either is an aligned block. */
static int bitvec_alloc(amq__bitvec *v, uint64_t bit_count, bool sparse)
{
    v->words = NULL;
    v->bit_count = 0;
    if (bit_count > AMQ__BITVEC_MAX_BITS)
        return AMQ_ERANGE;
    uint64_t word_count = amq__bitvec_words_for(bit_count);
    if (word_count > SIZE_MAX / sizeof(uint64_t))
        return AMQ_ERANGE;
    if (word_count > 0) {
        v->words = sparse ? amq__aligned_calloc(sizeof(uint64_t), (size_t)word_count * 8)
                          : amq__alloc_table(word_count * sizeof(uint64_t), true);
        if (!v->words)
            return AMQ_ENOMEM;
    }
    v->bit_count = bit_count;
    return AMQ_OK;
}

int amq__bitvec_init(amq__bitvec *v, uint64_t bit_count)
{
    return bitvec_alloc(v, bit_count, false);
}

int amq__bitvec_init_sparse(amq__bitvec *v, uint64_t bit_count)
{
    return bitvec_alloc(v, bit_count, true);
}

void amq__bitvec_free(amq__bitvec *v)
{
    amq__aligned_free(v->words);
    v->words = NULL;
    v->bit_count = 0;
}

uint64_t amq__bitvec_popcount(const amq__bitvec *v)
{
    uint64_t word_count = amq__bitvec_words_for(v->bit_count);
    uint64_t count = 0;
    for (uint64_t i = 0; i < word_count; i++)
        count += (uint64_t)__builtin_popcountll(v->words[i]);
    return count;
}

amq__piece amq__bitvec_piece(const amq__bitvec *v)
{
    return amq__piece_le_u64(v->words, amq__bitvec_words_for(v->bit_count));
}

int amq__bitvec_load_words(amq__bitvec *v, uint64_t bit_count, const uint8_t *bytes, uint64_t len,
                           amq_diag *diag)
{
    v->words = NULL;
    v->bit_count = 0;
    uint64_t word_count = amq__bitvec_words_for(bit_count);
    if (len / 8 != word_count || len % 8 != 0)
        return amq__fail(diag, AMQ_ECORRUPT, "%llu bits need %llu bytes of words, not %llu",
                         (unsigned long long)bit_count, (unsigned long long)word_count * 8,
                         (unsigned long long)len);
    int status = amq__bitvec_init(v, bit_count);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "a vector of %llu bits cannot be allocated",
                         (unsigned long long)bit_count);
    for (uint64_t i = 0; i < word_count; i++)
        v->words[i] = amq__load_u64le(bytes + i * 8);
    unsigned used_in_last = (unsigned)(bit_count % 64);
    if (used_in_last != 0 && v->words[word_count - 1] >> used_in_last != 0) {
        amq__bitvec_free(v);
        return amq__fail(diag, AMQ_ECORRUPT, "bits past the end of a %llu-bit vector are set",
                         (unsigned long long)bit_count);
    }
    return AMQ_OK;
}

/* ---- big-endian 64-bit words ---------------------------------------------- */

static inline void store_u64be(uint8_t *p, uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    memcpy(p, &x, sizeof x);
}

/* The low bit_count bits of value (bit_count 0..64). */
static inline uint64_t low_bits(uint64_t value, unsigned bit_count)
{
    return bit_count >= 64 ? value : value & (((uint64_t)1 << bit_count) - 1);
}

/* ---- bit writer ---------------------------------------------------------- */

/* Spare zero bytes kept past the last partly written byte, so that a put
 * can read and write a whole 64-bit word there. */
enum { WRITER_SLACK = 8, WRITER_MIN_CAPACITY = 64 };

void amq__bitwriter_init(amq__bitwriter *w)
{
    w->bytes = NULL;
    w->capacity = 0;
    w->bit_count = 0;
    w->status = AMQ_OK;
}

static void writer_fail(amq__bitwriter *w, int status)
{
    if (w->status == AMQ_OK)
        w->status = status;
}

/* Make sure bit_count more bits, plus the slack, fit the buffer. */
static bool writer_make_room(amq__bitwriter *w, uint64_t bit_count)
{
    if (w->status != AMQ_OK)
        return false;
    uint64_t end_bit;
    if (!amq__add_u64(w->bit_count, bit_count, &end_bit)) {
        writer_fail(w, AMQ_ERANGE);
        return false;
    }
    uint64_t needed = end_bit / 8 + 1 + WRITER_SLACK;
    if (AMQ__LIKELY(needed <= w->capacity))
        return true;
    if (needed > SIZE_MAX) {
        writer_fail(w, AMQ_ERANGE);
        return false;
    }
    size_t capacity = w->capacity < WRITER_MIN_CAPACITY ? WRITER_MIN_CAPACITY : w->capacity;
    while (capacity < needed)
        capacity = capacity > SIZE_MAX / 2 ? (size_t)needed : capacity * 2;
    uint8_t *bytes = amq__realloc(w->bytes, capacity);
    if (!bytes) {
        writer_fail(w, AMQ_ENOMEM);
        return false;
    }
    memset(bytes + w->capacity, 0, capacity - w->capacity);
    w->bytes = bytes;
    w->capacity = capacity;
    return true;
}

void amq__bitwriter_reserve(amq__bitwriter *w, uint64_t bit_count)
{
    writer_make_room(w, bit_count);
}

/* OR the low bit_count (1..64) bits of value into bytes at bit position
 * at: zero bits there, and 9 bytes from at / 8 to read and write. */
static inline void put_bits(uint8_t *bytes, uint64_t at, uint64_t value, unsigned bit_count)
{
    value = low_bits(value, bit_count);
    uint8_t *p = bytes + (at >> 3);
    unsigned end = (unsigned)(at & 7) + bit_count; /* 1..71 */
    if (end <= 64) {
        store_u64be(p, amq__load_u64be(p) | value << (64 - end));
    } else {
        store_u64be(p, amq__load_u64be(p) | value >> (end - 64));
        p[8] = (uint8_t)(value << (72 - end));
    }
}

void amq__bitwriter_put(amq__bitwriter *w, uint64_t value, unsigned bit_count)
{
    assert(bit_count <= 64);
    if (bit_count > 64) {
        writer_fail(w, AMQ_EINVAL);
        return;
    }
    if (bit_count == 0 || !writer_make_room(w, bit_count))
        return;
    put_bits(w->bytes, w->bit_count, value, bit_count);
    w->bit_count += bit_count;
}

void amq__bitwriter_put_unary(amq__bitwriter *w, uint64_t q)
{
    uint64_t total;
    if (!amq__add_u64(q, 1, &total)) {
        writer_fail(w, AMQ_ERANGE);
        return;
    }
    if (!writer_make_room(w, total))
        return;
    for (; q >= 64; q -= 64)
        amq__bitwriter_put(w, UINT64_MAX, 64);
    /* q (< 64) 1-bits followed by the terminating 0-bit: q + 1 bits. */
    amq__bitwriter_put(w, low_bits(UINT64_MAX, (unsigned)q) << 1, (unsigned)q + 1);
}

void amq__bitwriter_put_rice(amq__bitwriter *w, uint64_t value, unsigned rice_bits)
{
    assert(rice_bits <= 63);
    if (rice_bits > 63) {
        writer_fail(w, AMQ_EINVAL);
        return;
    }
    amq__bitwriter_put_unary(w, value >> rice_bits);
    amq__bitwriter_put(w, value, rice_bits);
}

void amq__bitwriter_put_golomb(amq__bitwriter *w, uint64_t value, uint64_t divisor)
{
    assert(divisor >= 1);
    if (divisor == 0) {
        writer_fail(w, AMQ_EINVAL);
        return;
    }
    uint64_t remainder = value % divisor;
    unsigned b = amq__ceil_log2(divisor);
    uint64_t u = low_bits(0 - divisor, b); /* 2^b - M, also for b = 64 */
    amq__bitwriter_put_unary(w, value / divisor);
    if (remainder < u)
        amq__bitwriter_put(w, remainder, b - 1);
    else
        amq__bitwriter_put(w, remainder + u, b);
}

int amq__bitwriter_finish(amq__bitwriter *w, uint8_t **bytes, size_t *byte_count,
                          uint64_t *bit_count)
{
    int status = w->status;
    *bytes = NULL;
    *byte_count = 0;
    if (bit_count)
        *bit_count = 0;
    if (status == AMQ_OK && w->bit_count > 0) {
        /* The padding bits are already zero: the buffer is zero-filled. */
        size_t used = (size_t)(w->bit_count / 8 + (w->bit_count % 8 != 0));
        uint8_t *shrunk = amq__realloc(w->bytes, used);
        *bytes = shrunk ? shrunk : w->bytes;
        *byte_count = used;
        if (bit_count)
            *bit_count = w->bit_count;
    } else {
        amq__free(w->bytes);
    }
    amq__bitwriter_init(w);
    return status;
}

void amq__bitwriter_free(amq__bitwriter *w)
{
    amq__free(w->bytes);
    amq__bitwriter_init(w);
}

/* ---- bit sink ------------------------------------------------------------ */

void amq__bitsink_init(amq__bitsink *s, amq__bitsink_emit_fn emit, void *context)
{
    memset(s->bytes, 0, sizeof s->bytes);
    s->bit_count = 0;
    s->emit = emit;
    s->context = context;
    s->status = 0;
}

/* Hand over the whole bytes and keep the partial one, so that a put of 64
 * bits finds its 9 bytes inside the buffer. */
static void sink_make_room(amq__bitsink *s)
{
    size_t whole = (size_t)(s->bit_count >> 3);
    if (whole < AMQ__BITSINK_BYTES)
        return;
    if (s->status == 0)
        s->status = s->emit(s->context, s->bytes, whole);
    /* Past bit_count every byte is zero (a put writes zeros there), so
     * clearing up to the partial byte leaves the buffer zero-filled. */
    s->bytes[0] = s->bytes[whole];
    memset(s->bytes + 1, 0, whole);
    s->bit_count &= 7;
}

void amq__bitsink_put(amq__bitsink *s, uint64_t value, unsigned bit_count)
{
    assert(bit_count <= 64);
    if (bit_count == 0 || s->status != 0)
        return;
    sink_make_room(s);
    put_bits(s->bytes, s->bit_count, value, bit_count);
    s->bit_count += bit_count;
}

void amq__bitsink_put_unary(amq__bitsink *s, uint64_t q)
{
    for (; q >= 64 && s->status == 0; q -= 64)
        amq__bitsink_put(s, UINT64_MAX, 64);
    amq__bitsink_put(s, low_bits(UINT64_MAX, (unsigned)q) << 1, (unsigned)q + 1);
}

void amq__bitsink_put_rice(amq__bitsink *s, uint64_t value, unsigned rice_bits)
{
    assert(rice_bits <= 63);
    amq__bitsink_put_unary(s, value >> rice_bits);
    amq__bitsink_put(s, value, rice_bits);
}

int amq__bitsink_finish(amq__bitsink *s)
{
    /* The padding bits are already zero: the buffer is zero-filled. */
    size_t used = (size_t)(s->bit_count / 8 + (s->bit_count % 8 != 0));
    if (s->status == 0 && used > 0)
        s->status = s->emit(s->context, s->bytes, used);
    s->bit_count = 0;
    return s->status;
}

/* ---- bit reader ---------------------------------------------------------- */

void amq__bitreader_init(amq__bitreader *r, const uint8_t *bytes, uint64_t bit_count)
{
    r->bytes = bytes;
    r->bit_count = bit_count;
    r->position = 0;
}

int amq__bitreader_seek(amq__bitreader *r, uint64_t position)
{
    if (position > r->bit_count)
        return AMQ_ECORRUPT;
    r->position = position;
    return AMQ_OK;
}

/* The 64 stream bits from bit position pos, first bit in the most
 * significant place. At least 57 are real; bits past the buffer read as 0,
 * bits past bit_count inside the last byte as whatever it holds. */
static inline uint64_t reader_window(const amq__bitreader *r, uint64_t pos)
{
    uint64_t byte_index = pos >> 3;
    uint64_t byte_count = r->bit_count / 8 + (r->bit_count % 8 != 0);
    uint64_t word;
    if (AMQ__LIKELY(byte_index + 8 <= byte_count)) {
        word = amq__load_u64be(r->bytes + byte_index);
    } else {
        word = 0;
        for (unsigned k = 0; k < 8; k++) {
            uint64_t i = byte_index + k;
            word = word << 8 | (i < byte_count ? r->bytes[i] : 0u);
        }
    }
    return word << (pos & 7);
}

/* Read bit_count (0..64) bits at *pos and advance *pos. */
static inline int reader_take(const amq__bitreader *r, uint64_t *pos, unsigned bit_count,
                              uint64_t *value)
{
    if (AMQ__UNLIKELY(bit_count > r->bit_count - *pos))
        return AMQ_ECORRUPT;
    if (bit_count == 0) {
        *value = 0;
    } else if (bit_count <= 57) {
        *value = reader_window(r, *pos) >> (64 - bit_count);
    } else {
        /* Two reads: the high bit_count - 32 bits, then the low 32. */
        uint64_t high = reader_window(r, *pos) >> (96 - bit_count);
        uint64_t low = reader_window(r, *pos + bit_count - 32) >> 32;
        *value = high << 32 | low;
    }
    *pos += bit_count;
    return AMQ_OK;
}

/* Read a unary number at *pos and advance *pos past its 0-bit. */
static inline int reader_take_unary(const amq__bitreader *r, uint64_t *pos, uint64_t *q)
{
    uint64_t start = *pos;
    uint64_t at = start;
    for (;;) {
        if (AMQ__UNLIKELY(at >= r->bit_count))
            return AMQ_ECORRUPT;
        unsigned shift = (unsigned)(at & 7);
        /* Invert, then drop the shifted-in low bits: a set bit is a 0-bit
         * of the stream; none means the window's real bits are all 1. */
        uint64_t zeros = ~reader_window(r, at) & (UINT64_MAX << shift);
        if (AMQ__LIKELY(zeros != 0)) {
            uint64_t end = at + (unsigned)__builtin_clzll(zeros);
            if (AMQ__UNLIKELY(end >= r->bit_count))
                return AMQ_ECORRUPT;
            *q = end - start;
            *pos = end + 1;
            return AMQ_OK;
        }
        at += 64 - shift;
    }
}

int amq__bitreader_get(amq__bitreader *r, unsigned bit_count, uint64_t *value)
{
    if (bit_count > 64)
        return AMQ_EINVAL;
    uint64_t pos = r->position;
    int status = reader_take(r, &pos, bit_count, value);
    if (status == AMQ_OK)
        r->position = pos;
    return status;
}

int amq__bitreader_get_unary(amq__bitreader *r, uint64_t *q)
{
    uint64_t pos = r->position;
    int status = reader_take_unary(r, &pos, q);
    if (status == AMQ_OK)
        r->position = pos;
    return status;
}

int amq__bitreader_get_rice(amq__bitreader *r, unsigned rice_bits, uint64_t *value)
{
    if (rice_bits > 63)
        return AMQ_EINVAL;
    uint64_t pos = r->position;
    uint64_t q, remainder;
    int status = reader_take_unary(r, &pos, &q);
    if (AMQ__UNLIKELY(status != AMQ_OK))
        return status;
    if (AMQ__UNLIKELY(rice_bits > 0 && q >> (64 - rice_bits) != 0))
        return AMQ_ECORRUPT;
    status = reader_take(r, &pos, rice_bits, &remainder);
    if (AMQ__UNLIKELY(status != AMQ_OK))
        return status;
    *value = q << rice_bits | remainder;
    r->position = pos;
    return AMQ_OK;
}

/* Read a truncated-binary remainder of b bits (b = ceil(log2 M) >= 1,
 * u = 2^b - M) at *pos and advance *pos. Up to 57 bits, one window holds
 * all b candidate bits and the choice between the short and the long code
 * is a select, not a branch: on random data that branch is mispredicted
 * about as often as it is taken. */
static inline int reader_take_truncated(const amq__bitreader *r, uint64_t *pos, unsigned b,
                                        uint64_t u, uint64_t *remainder)
{
    if (AMQ__LIKELY(b <= 57)) {
        uint64_t bits = reader_window(r, *pos) >> (64 - b);
        bool is_short = bits >> 1 < u;
        unsigned length = b - is_short;
        if (AMQ__UNLIKELY(length > r->bit_count - *pos))
            return AMQ_ECORRUPT;
        *remainder = is_short ? bits >> 1 : bits - u;
        *pos += length;
        return AMQ_OK;
    }
    uint64_t high, last_bit = 0;
    int status = reader_take(r, pos, b - 1, &high);
    if (status == AMQ_OK && high >= u)
        status = reader_take(r, pos, 1, &last_bit);
    if (status != AMQ_OK)
        return status;
    *remainder = high >= u ? (high << 1 | last_bit) - u : high;
    return AMQ_OK;
}

int amq__bitreader_get_golomb(amq__bitreader *r, uint64_t divisor, uint64_t *value)
{
    if (divisor == 0)
        return AMQ_EINVAL;
    uint64_t pos = r->position;
    uint64_t q, remainder = 0;
    int status = reader_take_unary(r, &pos, &q);
    if (AMQ__UNLIKELY(status != AMQ_OK))
        return status;
    unsigned b = amq__ceil_log2(divisor);
    if (b > 0) {
        status = reader_take_truncated(r, &pos, b, low_bits(0 - divisor, b), &remainder);
        if (AMQ__UNLIKELY(status != AMQ_OK))
            return status;
    }
    uint64_t v;
    if (AMQ__UNLIKELY(!amq__mul_u64(q, divisor, &v) || !amq__add_u64(v, remainder, &v)))
        return AMQ_ECORRUPT;
    *value = v;
    r->position = pos;
    return AMQ_OK;
}

/* ---- fast Golomb decoding ---------------------------------------------------- */

void amq__golomb_code_init(amq__golomb_code *code, uint64_t divisor)
{
    assert(divisor >= 1);
    code->divisor = divisor;
    code->remainder_bits = amq__ceil_log2(divisor);
    code->short_limit = low_bits(0 - divisor, code->remainder_bits);
}

int amq__golomb_cursor_next_slow(amq__golomb_cursor *c, const amq__golomb_code *code,
                                 uint64_t *value)
{
    amq__bitreader r;
    amq__bitreader_init(&r, c->bytes, c->bit_count);
    int status = amq__bitreader_seek(&r, c->position);
    if (status == AMQ_OK)
        status = amq__bitreader_get_golomb(&r, code->divisor, value);
    if (status != AMQ_OK)
        return status;
    amq__golomb_cursor_seek(c, r.position);
    return AMQ_OK;
}
