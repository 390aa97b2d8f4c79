/*
 * bits.h - bit vectors and the one bit writer / bit reader of the library.
 *
 * Bit vector: bit i lives in 64-bit word i / 64 at bit position i % 64
 * (least significant first). Indexes are 64-bit, so vectors past 2^32 bits
 * work. The get/set calls are inline: they are the Bloom families' hot path.
 *
 * Bit streams (Golomb-coded sets, hash-free Bloom banks) are MSB-first: the
 * first bit written is the most significant bit of the first byte. A value
 * written with n bits is written most significant bit first. The stream is
 * padded with 0 bits to a whole byte when finished.
 *
 *   Rice code, parameter P (divisor 2^P):   q = v >> P as q 1-bits and a
 *       0-bit (unary), then the low P bits of v.
 *   Golomb code, any divisor M >= 1:        q = v / M in unary, then
 *       r = v % M in truncated binary: with b = ceil(log2 M) and
 *       u = 2^b - M, r < u is written in b-1 bits, otherwise r + u in b bits.
 *       (M = 2^P gives exactly the Rice code.)
 *
 * Writers grow their buffer as needed; an allocation failure is remembered
 * ("sticky") and reported by amq__bitwriter_finish, so encoding loops need not
 * check every call. Readers never read past the end of their buffer: reading
 * beyond the stream's last bit answers AMQ_ECORRUPT and leaves the reader's
 * position where it was.
 */
#ifndef AMQ_BITS_H
#define AMQ_BITS_H

#include "amq/amq.h"
#include "core/format.h"
#include "core/util.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- bit vector ---------------------------------------------------------- */

typedef struct amq__bitvec {
    uint64_t *words;    /* ceil(bit_count / 64) words; bits past bit_count are 0 */
    uint64_t bit_count; /* number of addressable bits */
} amq__bitvec;

/* Number of 64-bit words that hold bit_count bits. */
static inline uint64_t amq__bitvec_words_for(uint64_t bit_count)
{
    return bit_count / 64 + (bit_count % 64 != 0);
}

/* The largest bit vector: 2^63 bits (2^60 bytes), so that its word count
 * times 64 fits a uint64_t and its byte size fits ptrdiff_t and off_t. */
#define AMQ__BITVEC_MAX_BITS ((uint64_t)1 << 63)

/* Memory for a filter's table of bytes bytes (> 0), zeroed when zeroed is
 * true (a caller that writes every byte before reading it passes false and
 * saves a pass over the table), 64-byte aligned so that no cache line
 * straddles two; from 2 MiB up aligned to, and asking the kernel for,
 * 2 MiB pages (MADV_HUGEPAGE), which spares a random access its TLB miss
 * (not under a host's allocator: core/alloc.h). Free with
 * amq__aligned_free. NULL when it cannot be had. */
#define AMQ__HUGE_PAGE ((uint64_t)2 << 20)
void *amq__alloc_table(uint64_t bytes, bool zeroed);

/* Allocate a vector of bit_count zero bits (bit_count may be 0; words is then
 * NULL). Returns AMQ_OK, AMQ_ERANGE (bit_count above AMQ__BITVEC_MAX_BITS, or
 * a byte size that does not fit size_t) or AMQ_ENOMEM; on error v is empty. */
int amq__bitvec_init(amq__bitvec *v, uint64_t bit_count);

/* As amq__bitvec_init, for a vector that will have few bits set: its zero
 * pages are left for the system to map on first touch (calloc) instead of
 * being written, so filling a sparse vector from a small input - a loader
 * decoding a coded bank - never writes the whole vector. */
int amq__bitvec_init_sparse(amq__bitvec *v, uint64_t bit_count);

/* Free the words (an aligned block, core/alloc.h); v becomes an empty
 * vector. Accepts an empty vector. */
void amq__bitvec_free(amq__bitvec *v);

static inline bool amq__bitvec_get(const amq__bitvec *v, uint64_t i)
{
    return (v->words[i >> 6] >> (i & 63)) & 1u;
}

static inline void amq__bitvec_set(amq__bitvec *v, uint64_t i)
{
    v->words[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline void amq__bitvec_clear(amq__bitvec *v, uint64_t i)
{
    v->words[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

/* Set bit i and return whether it was already set. */
static inline bool amq__bitvec_test_and_set(amq__bitvec *v, uint64_t i)
{
    uint64_t mask = (uint64_t)1 << (i & 63);
    uint64_t old = v->words[i >> 6];
    v->words[i >> 6] = old | mask;
    return (old & mask) != 0;
}

/* Number of set bits. */
uint64_t amq__bitvec_popcount(const amq__bitvec *v);

/* ---- atomic bit access ----------------------------------------------------- */

/* The concurrent adds and queries of the Bloom filters (amq_bloom_add_concurrent,
 * amq_blocked_bloom_add_concurrent and their contains_concurrent): the words
 * are plain integers everywhere else, and these treat them as C11 atomic
 * 64-bit words for the length of one call (a blocked filter's pairs of
 * 32-bit words: its blocks are 64-byte aligned). A bit is only ever set while
 * calls run concurrently, so relaxed order suffices: a set bit stays set, and
 * a fetch-or's old value says whether this call set it. Where a read finds
 * the bit set already, the read-modify-write, which takes the cache line for
 * writing and on x86 drains the store buffer, is skipped. */
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t) &&
                   _Alignof(_Atomic uint64_t) == _Alignof(uint64_t),
               "an _Atomic uint64_t is laid out as a uint64_t");

static inline uint64_t amq__atomic_load_u64(const uint64_t *word)
{
    return atomic_load_explicit((const _Atomic uint64_t *)word, memory_order_relaxed);
}

/* Set the bits of mask in *word. The old value is not asked for, so the
 * compiler emits one locked OR rather than a compare-exchange loop. */
static inline void amq__atomic_set_u64(uint64_t *word, uint64_t mask)
{
    if ((amq__atomic_load_u64(word) & mask) != mask)
        atomic_fetch_or_explicit((_Atomic uint64_t *)word, mask, memory_order_relaxed);
}

static inline bool amq__bitvec_get_atomic(const amq__bitvec *v, uint64_t i)
{
    return (amq__atomic_load_u64(&v->words[i >> 6]) >> (i & 63)) & 1u;
}

/* Set bit i; whether it was already set (false: this call set it). Written
 * as fetch_or(word, bit) & bit, which GCC and clang turn into one locked
 * bit-test-and-set (lock bts) on x86, where other masks take a
 * compare-exchange loop. */
static inline bool amq__bitvec_test_and_set_atomic(amq__bitvec *v, uint64_t i)
{
    uint64_t *word = &v->words[i >> 6], bit = (uint64_t)1 << (i & 63);
    if (amq__atomic_load_u64(word) & bit)
        return true;
    return (atomic_fetch_or_explicit((_Atomic uint64_t *)word, bit, memory_order_relaxed) & bit) !=
           0;
}

/* ---- packed fields ------------------------------------------------------------ */

/* Fields of a fixed width w (1..57 bits) packed back to back in a byte array,
 * least significant bits first: field i occupies bits i*w .. i*w + w - 1,
 * bit j of the array being bit (j mod 8) of byte j / 8. Each access is one
 * unaligned little-endian 64-bit load (and store), so the array needs 8
 * readable bytes from the byte holding a field's first bit: allocate
 * AMQ__PACKED_PADDING bytes beyond the last field's. */
#define AMQ__PACKED_PADDING 8

/* The 64 bits starting at bit offset bit: valid are the low 64 - bit % 8. */
static inline uint64_t amq__packed_window(const uint8_t *bytes, uint64_t bit)
{
    return amq__load_u64le(bytes + (bit >> 3)) >> (bit & 7);
}

/* The width-bit field starting at bit offset bit. */
static inline uint64_t amq__packed_get(const uint8_t *bytes, uint64_t bit, unsigned width)
{
    return amq__packed_window(bytes, bit) & (((uint64_t)1 << width) - 1);
}

/* Store value (< 2^width) in the width-bit field starting at bit offset bit. */
static inline void amq__packed_set(uint8_t *bytes, uint64_t bit, unsigned width, uint64_t value)
{
    uint8_t *at = bytes + (bit >> 3);
    unsigned shift = (unsigned)(bit & 7);
    uint64_t mask = (((uint64_t)1 << width) - 1) << shift;
    amq__store_u64le(at, (amq__load_u64le(at) & ~mask) | (value << shift));
}

/* The words as they are saved, a payload piece (format.h):
 * amq__bitvec_words_for(bit_count) * 8 bytes, each word little-endian. On
 * a little-endian host these are v's own words; elsewhere a producer
 * converts them while they are written. Nothing is allocated; an empty
 * vector is a piece of no bytes. */
amq__piece amq__bitvec_piece(const amq__bitvec *v);

/* Allocate v with bit_count bits read from saved words (as written by
 * amq__bitvec_piece). Untrusted input: len must be exactly
 * amq__bitvec_words_for(bit_count) * 8 and the bits past bit_count must be 0,
 * else AMQ_ECORRUPT (with a message in *diag, which may be NULL). Also
 * AMQ_ERANGE and AMQ_ENOMEM as amq__bitvec_init; on error v is empty. */
int amq__bitvec_load_words(amq__bitvec *v, uint64_t bit_count, const uint8_t *bytes, uint64_t len,
                           amq_diag *diag);

/* ---- bit writer ---------------------------------------------------------- */

typedef struct amq__bitwriter {
    uint8_t *bytes;     /* owned buffer, grown as needed */
    size_t capacity;    /* bytes allocated */
    uint64_t bit_count; /* bits written so far */
    int status;         /* AMQ_OK, or the first error (sticky) */
} amq__bitwriter;

/* Start an empty stream. Never fails (allocation happens on first write). */
void amq__bitwriter_init(amq__bitwriter *w);

/* Make room for at least bit_count more bits (optional; avoids regrowth). */
void amq__bitwriter_reserve(amq__bitwriter *w, uint64_t bit_count);

/* Write the low bit_count bits of value, most significant first. 0..64.
 * Errors (all sticky, reported by amq__bitwriter_finish): AMQ_ENOMEM;
 * AMQ_ERANGE when the stream would pass 2^64 bits; AMQ_EINVAL for a
 * parameter out of range here or below (also an assert). */
void amq__bitwriter_put(amq__bitwriter *w, uint64_t value, unsigned bit_count);

/* Write q 1-bits then a 0-bit. */
void amq__bitwriter_put_unary(amq__bitwriter *w, uint64_t q);

/* Rice-code value with parameter rice_bits (0..63). */
void amq__bitwriter_put_rice(amq__bitwriter *w, uint64_t value, unsigned rice_bits);

/* Golomb-code value with divisor (>= 1), truncated-binary remainder. */
void amq__bitwriter_put_golomb(amq__bitwriter *w, uint64_t value, uint64_t divisor);

/* Pad with 0-bits to a byte boundary and hand over the buffer: *bytes
 * (caller frees with amq__free; NULL when empty), *byte_count, and *bit_count
 * the number of bits written before padding (may be NULL). Returns the
 * sticky status; on error nothing is handed over and the writer is freed.
 * The writer is left empty either way. */
int amq__bitwriter_finish(amq__bitwriter *w, uint8_t **bytes, size_t *byte_count,
                          uint64_t *bit_count);

/* Discard a writer's buffer. */
void amq__bitwriter_free(amq__bitwriter *w);

/* ---- bit sink ------------------------------------------------------------ */

/* The writer's stream (MSB-first, the codes above) without the stream in
 * memory: the bits go through a bounded buffer whose whole bytes are
 * handed to emit as it fills, and amq__bitsink_finish pads the last byte
 * with 0-bits and hands over the rest. For saving a code the filter does
 * not keep (an hfb bank's) with no allocation. emit answers 0, or nonzero
 * to stop: the stream then stops (sticky) and finish returns that answer. */
#define AMQ__BITSINK_BYTES 2048

typedef int (*amq__bitsink_emit_fn)(void *context, const void *data, size_t len);

typedef struct amq__bitsink {
    uint8_t bytes[AMQ__BITSINK_BYTES + 16]; /* zero past bit_count */
    uint64_t bit_count;                     /* bits in bytes, not yet handed over */
    amq__bitsink_emit_fn emit;
    void *context;
    int status; /* 0, or emit's first nonzero answer */
} amq__bitsink;

void amq__bitsink_init(amq__bitsink *s, amq__bitsink_emit_fn emit, void *context);
/* As amq__bitwriter_put (0..64 bits), _put_unary and _put_rice (0..63). */
void amq__bitsink_put(amq__bitsink *s, uint64_t value, unsigned bit_count);
void amq__bitsink_put_unary(amq__bitsink *s, uint64_t q);
void amq__bitsink_put_rice(amq__bitsink *s, uint64_t value, unsigned rice_bits);
/* Pad to a byte and hand over what is left; 0 or emit's answer. */
int amq__bitsink_finish(amq__bitsink *s);

/* ---- bit reader ---------------------------------------------------------- */

typedef struct amq__bitreader {
    const uint8_t *bytes; /* not owned; ceil(bit_count / 8) readable bytes */
    uint64_t bit_count;   /* bits in the stream */
    uint64_t position;    /* next bit to read */
} amq__bitreader;

/* Read a stream of bit_count bits from bytes (ceil(bit_count/8) bytes). */
void amq__bitreader_init(amq__bitreader *r, const uint8_t *bytes, uint64_t bit_count);

/* Move to an absolute bit position (<= bit_count), else AMQ_ECORRUPT. */
int amq__bitreader_seek(amq__bitreader *r, uint64_t position);

/* Every read below returns AMQ_OK, AMQ_ECORRUPT when the stream ends before
 * the value does, or AMQ_EINVAL for a parameter out of range (bit_count > 64,
 * rice_bits > 63, divisor 0). On error neither the position nor *value
 * changes. */

/* Read bit_count (0..64) bits, most significant first. */
int amq__bitreader_get(amq__bitreader *r, unsigned bit_count, uint64_t *value);

/* Read a unary number (1-bits up to a 0-bit). */
int amq__bitreader_get_unary(amq__bitreader *r, uint64_t *q);

/* Read a Rice-coded value; AMQ_ECORRUPT if the stream ends or the value
 * does not fit 64 bits. */
int amq__bitreader_get_rice(amq__bitreader *r, unsigned rice_bits, uint64_t *value);

/* Read a Golomb-coded value (divisor >= 1); AMQ_ECORRUPT as above. */
int amq__bitreader_get_golomb(amq__bitreader *r, uint64_t divisor, uint64_t *value);

/* ---- fast Golomb decoding ---------------------------------------------------- */

/* The 8 bytes at p as a big-endian integer. */
static inline uint64_t amq__load_u64be(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

/* A Golomb code's constants: divisor D >= 1, b = ceil(log2 D) remainder
 * bits, u = 2^b - D short remainders (taking b - 1 bits). */
typedef struct amq__golomb_code {
    uint64_t divisor;
    uint64_t short_limit;
    unsigned remainder_bits;
} amq__golomb_code;

void amq__golomb_code_init(amq__golomb_code *code, uint64_t divisor);

/* A cursor that decodes Golomb codes at speed, for the query loops of
 * Golomb-coded sets. The stream must be followed by AMQ__GOLOMB_SLACK
 * readable bytes: the cursor keeps a 64-bit window of the stream in a
 * register, loaded with one 8-byte read at the byte of its position, and
 * decodes each code from it with a count of leading ones (the unary part)
 * and a shift (the remainder), reloading when the next code may not be
 * whole in it. A code the window cannot hold even after a reload (more
 * than 57 bits; every code when b > 56) goes through the checked bitreader
 * instead. Keep the cursor in a local variable in a decoding loop: its
 * fields then live in registers.
 *
 * The fast path does not compare with bit_count: call next only while
 * position < bit_count, and check after it that position <= bit_count (a
 * checked stream always passes). Then every read stays within the stream
 * and its slack, whatever the stream holds. */
#define AMQ__GOLOMB_SLACK 8

typedef struct amq__golomb_cursor {
    const uint8_t *bytes; /* ceil(bit_count / 8) bytes, then the slack */
    uint64_t bit_count;
    uint64_t position;  /* the bit where the next code begins */
    uint64_t window;    /* the bits from position, first in the top bit */
    unsigned available; /* how many of them are stream bits to decode from */
} amq__golomb_cursor;

/* Place c at bit position (<= bit_count) of a stream. A byte-aligned
 * window counts only 63 of its 64 bits as available: the count of leading
 * ones is taken with bit 0 forced to 1, and must never find a code's 0-bit
 * there. */
static inline void amq__golomb_cursor_seek(amq__golomb_cursor *c, uint64_t position)
{
    unsigned shift = (unsigned)(position & 7);
    c->position = position;
    c->window = amq__load_u64be(c->bytes + (position >> 3)) << shift;
    c->available = shift ? 64 - shift : 63;
}

static inline void amq__golomb_cursor_init(amq__golomb_cursor *c, const uint8_t *bytes,
                                           uint64_t bit_count, uint64_t position)
{
    c->bytes = bytes;
    c->bit_count = bit_count;
    amq__golomb_cursor_seek(c, position);
}

/* The checked path of amq__golomb_cursor_next. */
int amq__golomb_cursor_next_slow(amq__golomb_cursor *c, const amq__golomb_code *code,
                                 uint64_t *value);

/* Decode the next value. AMQ_OK, or AMQ_ECORRUPT from the checked path
 * (the stream ends inside the code, or the value does not fit 64 bits).
 * rice: true promises a power-of-two divisor (code->short_limit == 0);
 * given as a constant, it lets the compiler drop the short-remainder test
 * from the loop's critical path. false is right for any divisor.
 *
 * The window's bits after the unary part's 0-bit are the remainder: with
 * head = window << q, whose top bit is that 0-bit, head >> (63 - b) is the
 * b candidate remainder bits. A short remainder (b - 1 bits) is one whose
 * b bits are below 2u. The next code then starts 1 + b or 1 + b - 1 bits
 * into head: a shift of at most 57, whatever q was. */
static inline int amq__golomb_cursor_next(amq__golomb_cursor *c, const amq__golomb_code *code,
                                          bool rice, uint64_t *value)
{
    unsigned b = code->remainder_bits;
    if (AMQ__LIKELY(b <= 56)) {
        /* The leading ones, at most 63. When q + 1 + b <= available, the
         * 0-bit ending them and the b bits after it are stream bits. */
        unsigned q = (unsigned)__builtin_clzll(~c->window | 1);
        if (AMQ__UNLIKELY(q + 1 + b > c->available)) {
            amq__golomb_cursor_seek(c, c->position);
            q = (unsigned)__builtin_clzll(~c->window | 1);
        }
        if (AMQ__LIKELY(q + 1 + b <= c->available)) {
            uint64_t head = c->window << q;
            uint64_t bits = head >> (63 - b);
            /* Without a branch: on hashed data a short remainder is a coin
             * flip, which a branch would mispredict half the time. */
            unsigned is_short = !rice && bits < 2 * code->short_limit;
            uint64_t short_mask = 0 - (uint64_t)is_short;
            uint64_t remainder =
                ((bits >> 1) & short_mask) | ((bits - code->short_limit) & ~short_mask);
            unsigned tail = 1 + b - is_short;
            c->window = head << tail;
            c->available -= q + tail;
            c->position += q + tail;
            *value = (uint64_t)q * code->divisor + remainder;
            return AMQ_OK;
        }
    }
    /* Through copies, so that c and value, which the fast path keeps in
     * registers, never have their address taken. */
    amq__golomb_cursor copy = *c;
    uint64_t decoded = 0;
    int status = amq__golomb_cursor_next_slow(&copy, code, &decoded);
    *c = copy;
    *value = decoded;
    return status;
}

#endif /* AMQ_BITS_H */
