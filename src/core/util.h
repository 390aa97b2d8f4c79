/*
 * util.h - small helpers shared by every source file of the library:
 * little-endian loads and stores (the on-disk byte order), overflow-checked
 * arithmetic, a 64-bit mixer, and filling an amq_diag.
 */
#ifndef AMQ_UTIL_H
#define AMQ_UTIL_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* AMQ__ALWAYS_INLINE: for a function whose callers pass constants (a
 * width, an arity, a flag) so that each inlined copy is specialized to them.
 * AMQ__NOINLINE: for a rare path kept out of a hot function, whose entry
 * would otherwise save and restore the registers that path needs. */
#if defined(__GNUC__)
#define AMQ__PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define AMQ__LIKELY(x)                    __builtin_expect(!!(x), 1)
#define AMQ__UNLIKELY(x)                  __builtin_expect(!!(x), 0)
#define AMQ__ALWAYS_INLINE                inline __attribute__((always_inline))
#define AMQ__NOINLINE                     __attribute__((noinline))
#else
#define AMQ__PRINTF(fmt_index, first_arg)
#define AMQ__LIKELY(x)     (x)
#define AMQ__UNLIKELY(x)   (x)
#define AMQ__ALWAYS_INLINE inline
#define AMQ__NOINLINE
#endif

/* Write a printf-style message into diag (when diag is not NULL) and return
 * status, so that a failing path reads `return amq__fail(diag, AMQ_EINVAL,
 * "...", ...);`. */
int amq__fail(amq_diag *diag, int status, const char *format, ...) AMQ__PRINTF(3, 4);

/* As amq__fail, also recording a byte offset. */
int amq__fail_at(amq_diag *diag, int status, uint64_t offset, const char *format, ...)
    AMQ__PRINTF(4, 5);

/* Whether a batch call's key arrays are usable: both there unless count
 * is 0, and no NULL key of non-zero length. Every batch add, remove and
 * query checks its arguments with it before it changes anything. */
static inline bool amq__key_array_valid(const void *const *keys, const size_t *lens, size_t count)
{
    if (count == 0)
        return true;
    if (!keys || !lens)
        return false;
    for (size_t i = 0; i < count; i++)
        if (!keys[i] && lens[i] > 0)
            return false;
    return true;
}

/* The bits that hold x: 0 for 0, else floor(log2 x) + 1. */
static inline unsigned amq__bit_width(uint64_t x)
{
    return x ? 64u - (unsigned)__builtin_clzll(x) : 0;
}

/* ceil(log2 x) for x >= 1: the bits that number x things. */
static inline unsigned amq__ceil_log2(uint64_t x)
{
    return x <= 1 ? 0 : amq__bit_width(x - 1);
}

/* The splitmix64 finalizer: a bijection of 64-bit values whose every output
 * bit depends on every input bit. Stepping a state by 0x9E3779B97F4A7C15
 * and mixing it gives the splitmix64 sequence. The same function as
 * amq/inline.h's amq_inline_mix64, the fuse view's mix, which the fuse
 * family takes from there: core/ includes no family header (CONTRIBUTING.md,
 * "Layout"), so it keeps these three lines of its own. */
static inline uint64_t amq__mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint16_t amq__load_u16le(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)(p[1] << 8));
}

static inline uint32_t amq__load_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t amq__load_u64le(const uint8_t *p)
{
    return (uint64_t)amq__load_u32le(p) | ((uint64_t)amq__load_u32le(p + 4) << 32);
}

static inline void amq__store_u16le(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void amq__store_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void amq__store_u64le(uint8_t *p, uint64_t v)
{
    amq__store_u32le(p, (uint32_t)v);
    amq__store_u32le(p + 4, (uint32_t)(v >> 32));
}

/* *out = a * b; false on overflow. */
static inline bool amq__mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* *out = a + b; false on overflow. */
static inline bool amq__add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

#endif /* AMQ_UTIL_H */
