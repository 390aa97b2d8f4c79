/*
 * bytes.h - little-endian integers in the module's own headers (a value
 * image's, a load's), whatever the host's byte order.
 */
#ifndef AMQ_REDIS_BYTES_H
#define AMQ_REDIS_BYTES_H

#include <stdint.h>

/* The integer of width bytes (at most 8) stored little-endian at p. */
static inline uint64_t bytes_get_le(const uint8_t *p, int width)
{
    uint64_t x = 0;
    for (int i = width - 1; i >= 0; i--)
        x = (x << 8) | p[i];
    return x;
}

/* Store the low width bytes of x little-endian at p. */
static inline void bytes_put_le(uint8_t *p, uint64_t x, int width)
{
    for (int i = 0; i < width; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

#endif /* AMQ_REDIS_BYTES_H */
