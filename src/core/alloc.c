/*
 * alloc.c - the library's allocator: the host's (amq_set_allocator) or the
 * C library's, behind the calls of alloc.h.
 *
 * Plain blocks go straight to the host's functions, so the host sees each
 * block at its true size and a buffer the library hands out is one of its
 * own. A size of 0 is asked as 1, so that a host's function never has to
 * decide what a block of no bytes is.
 *
 * Aligned blocks (tables on cache lines, file images) need more alignment
 * than a host promises (that of malloc). Under a host's allocator each is
 * carved out of a plain block of alignment + sizeof(void *) more bytes:
 *
 *     base                        block = the next multiple of alignment
 *     |                           |       at least one pointer past base
 *     v                           v
 *     [ padding ... | base (word) | bytes ...                 | rest  ]
 *
 * and freed by reading base back from the word before block. The host's
 * accounting so counts the padding too, as it should: the memory is taken.
 * With the C library's allocator aligned_alloc does this itself and free()
 * takes its blocks, so a test that wraps the C library's functions sees
 * those calls and no others.
 *
 * The installed allocator is two globals, written only by
 * amq_set_allocator, which the host calls before anything else (amq.h):
 * every other call only reads them.
 */
#include "core/alloc.h"
#include "amq/amq.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static amq_allocator host;
static bool custom;

int amq_set_allocator(const amq_allocator *allocator)
{
    if (!allocator) {
        custom = false;
        memset(&host, 0, sizeof host);
        return AMQ_OK;
    }
    if (!allocator->alloc || !allocator->calloc || !allocator->realloc || !allocator->free)
        return AMQ_EINVAL;
    host = *allocator;
    custom = true;
    return AMQ_OK;
}

bool amq__allocator_is_custom(void)
{
    return custom;
}

void amq_buffer_free(void *buffer)
{
    amq__free(buffer);
}

/* ---- plain blocks ------------------------------------------------------------------- */

void *amq__malloc(size_t bytes)
{
    if (!custom)
        return malloc(bytes);
    return host.alloc(host.opaque, bytes ? bytes : 1);
}

void *amq__calloc(size_t count, size_t bytes)
{
    if (!custom)
        return calloc(count, bytes);
    if (count == 0 || bytes == 0)
        count = bytes = 1;
    /* The host promises NULL on overflow; asking it nothing that overflows
     * keeps a host that forgot from handing out a short block. */
    if (count > SIZE_MAX / bytes)
        return NULL;
    return host.calloc(host.opaque, count, bytes);
}

void *amq__realloc(void *block, size_t bytes)
{
    if (!custom)
        return realloc(block, bytes);
    return host.realloc(host.opaque, block, bytes ? bytes : 1);
}

void amq__free(void *block)
{
    if (!custom) {
        free(block);
        return;
    }
    if (block)
        host.free(host.opaque, block);
}

/* ---- aligned blocks ----------------------------------------------------------------- */

/* The plain block's size for an aligned block of bytes: false when it
 * overflows. */
static bool padded_size(size_t *total, size_t alignment, size_t bytes)
{
    if (bytes > SIZE_MAX - alignment - sizeof(void *))
        return false;
    *total = bytes + alignment + sizeof(void *);
    return true;
}

/* The aligned block inside the plain block base, with base stored in the
 * word before it. */
static void *carve(void *base, size_t alignment)
{
    uintptr_t at = ((uintptr_t)base + sizeof(void *) + alignment - 1) & ~(uintptr_t)(alignment - 1);
    uint8_t *block = (uint8_t *)base + (at - (uintptr_t)base);
    memcpy(block - sizeof base, &base, sizeof base);
    return block;
}

void *amq__aligned_alloc(size_t alignment, size_t bytes)
{
    assert(alignment >= sizeof(void *) && (alignment & (alignment - 1)) == 0);
    assert(bytes > 0 && bytes % alignment == 0);
    if (!custom)
        return aligned_alloc(alignment, bytes);
    size_t total;
    if (!padded_size(&total, alignment, bytes))
        return NULL;
    void *base = host.alloc(host.opaque, total);
    return base ? carve(base, alignment) : NULL;
}

void *amq__aligned_calloc(size_t alignment, size_t bytes)
{
    assert(alignment >= sizeof(void *) && (alignment & (alignment - 1)) == 0);
    assert(bytes > 0 && bytes % alignment == 0);
    if (!custom) {
        if (alignment <= _Alignof(max_align_t))
            return calloc(1, bytes);
        void *block = aligned_alloc(alignment, bytes);
        if (block)
            memset(block, 0, bytes);
        return block;
    }
    size_t total;
    if (!padded_size(&total, alignment, bytes))
        return NULL;
    void *base = host.calloc(host.opaque, 1, total);
    return base ? carve(base, alignment) : NULL;
}

void amq__aligned_free(void *block)
{
    if (!custom) {
        free(block);
        return;
    }
    if (!block)
        return;
    void *base;
    memcpy(&base, (uint8_t *)block - sizeof base, sizeof base);
    host.free(host.opaque, base);
}
