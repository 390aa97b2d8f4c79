/*
 * reduce.h - mapping a 64-bit hash onto [0, range), for the families'
 * index computations, and the 128-bit integer type it is computed with.
 *
 * Internal: the public headers must compile as C99 and C11 on 32-bit
 * targets and with MSVC, none of which have unsigned __int128, so this
 * GNU extension stays inside the library. The library itself is built by
 * gcc or clang for a 64-bit target.
 */
#ifndef AMQ_REDUCE_H
#define AMQ_REDUCE_H

#include <stdint.h>

#if !defined(__SIZEOF_INT128__)
#error "amq's library needs unsigned __int128: build it with gcc or clang for a 64-bit target"
#endif

__extension__ typedef unsigned __int128 amq__uint128;

/* Map a 64-bit hash uniformly onto [0, range) by multiply-high:
 * (hash * range) >> 64. Faster than % and unbiased for uniform hashes; a
 * range of 0 gives 0. The product amq/inline.h's amq_inline_mulhi computes
 * for the views (there with a fallback for compilers without 128-bit
 * integers); tests/test_hash.c and tests/test_inline.c check both against
 * the 128-bit product. */
static inline uint64_t amq__reduce(uint64_t hash, uint64_t range)
{
    return (uint64_t)(((amq__uint128)hash * range) >> 64);
}

#endif /* AMQ_REDUCE_H */
