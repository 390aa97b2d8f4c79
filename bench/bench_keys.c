/*
 * bench_keys.c - seeded key sets for the benchmarks: fast to generate,
 * distinct, and with an "absent" set that provably shares no key with the
 * "present" one, so that every hit on it is a false positive.
 *
 * Binary keys. Key i of role r (0 present, 1 absent) starts with the 8-byte
 * little-endian word
 *
 *     id = mix(((r << 63) | i) ^ mix(seed))
 *
 * where mix is the splitmix64 output function (xor-shift, odd multiply,
 * xor-shift, odd multiply, xor-shift). Every step of mix is invertible on
 * 64-bit words, and so is xoring a constant, so id is a bijection of
 * (r, i): two keys of one seed never share their first 8 bytes, whatever the
 * role. The remaining len - 8 bytes are the splitmix64 stream started at id,
 * so the whole key looks random to a hash function while its distinctness
 * rests on the first word alone. Cost: one mix per 8 bytes.
 *
 * URL keys. Key i of role r is
 *
 *     https://host<2i + r>.example/<path>
 *
 * with a path of one to three segments of 3-12 characters from [a-z0-9],
 * drawn from the splitmix64 stream of (seed, i, r). The host number is unique
 * per key and its parity is the role, so again no key repeats and the sets
 * are disjoint. Lengths vary like real URLs: for a million keys, 27 to 66
 * bytes, 43.5 on average (never more than 79).
 *
 * Storage: all keys of a set back to back in one buffer, with count + 1
 * offsets (key i spans offsets[i] .. offsets[i + 1]); no allocation per key,
 * and a pass over the keys reads memory sequentially.
 */
#include "bench.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN_GAMMA 0x9e3779b97f4a7c15ULL

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t bench_splitmix64(uint64_t *state)
{
    *state += GOLDEN_GAMMA;
    return mix64(*state);
}

static uint64_t key_id(size_t index, uint64_t seed, bench_key_role role)
{
    return mix64((((uint64_t)role << 63) | (uint64_t)index) ^ mix64(seed));
}

/* Allocate storage for count keys of at most max_len bytes each. */
static int keyset_alloc(bench_keyset *out, size_t count, size_t max_len)
{
    memset(out, 0, sizeof *out);
    if (count >= ((uint64_t)1 << 63) || count > SIZE_MAX / max_len ||
        count + 1 > SIZE_MAX / sizeof *out->offsets)
        return AMQ_ERANGE;
    out->bytes = malloc(count * max_len > 0 ? count * max_len : 1);
    out->offsets = malloc((count + 1) * sizeof *out->offsets);
    if (!out->bytes || !out->offsets) {
        bench_keyset_free(out);
        return AMQ_ENOMEM;
    }
    out->count = count;
    out->offsets[0] = 0;
    return AMQ_OK;
}

int bench_keys_binary(bench_keyset *out, size_t count, size_t len, uint64_t seed,
                      bench_key_role role)
{
    if (len < BENCH_MIN_BINARY_KEY)
        return AMQ_EINVAL;
    int status = keyset_alloc(out, count, len);
    if (status != AMQ_OK)
        return status;
    for (size_t i = 0; i < count; i++) {
        uint8_t *key = out->bytes + i * len;
        uint64_t stream = key_id(i, seed, role);
        amq__store_u64le(key, stream);
        for (size_t at = 8; at < len; at += 8) {
            uint8_t word[8];
            amq__store_u64le(word, bench_splitmix64(&stream));
            memcpy(key + at, word, len - at < 8 ? len - at : 8);
        }
        out->offsets[i + 1] = (i + 1) * len;
    }
    return AMQ_OK;
}

/* "https://host" + 20 digits + ".example" + 3 × ("/" + 12 characters) */
#define URL_MAX_LEN (12 + 20 + 8 + 3 * 13)

int bench_keys_urls(bench_keyset *out, size_t count, uint64_t seed, bench_key_role role)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    int status = keyset_alloc(out, count, URL_MAX_LEN + 1);
    if (status != AMQ_OK)
        return status;
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        char *url = (char *)out->bytes + used;
        uint64_t stream = key_id(i, seed, role);
        int written = snprintf(url, URL_MAX_LEN + 1, "https://host%llu.example",
                               (unsigned long long)(2 * (uint64_t)i + (uint64_t)role));
        size_t len = (size_t)written;
        uint64_t segments = 1 + bench_splitmix64(&stream) % 3;
        for (uint64_t s = 0; s < segments; s++) {
            uint64_t bits = bench_splitmix64(&stream);
            size_t segment_len = 3 + (size_t)(bits % 10);
            bits = bench_splitmix64(&stream);
            url[len++] = '/';
            for (size_t c = 0; c < segment_len; c++) {
                url[len++] = alphabet[bits % (sizeof alphabet - 1)];
                bits /= sizeof alphabet - 1;
            }
        }
        used += len;
        out->offsets[i + 1] = used;
    }
    /* Give back the slack of the worst-case allocation. */
    uint8_t *fitted = realloc(out->bytes, used > 0 ? used : 1);
    if (fitted)
        out->bytes = fitted;
    return AMQ_OK;
}

void bench_keyset_free(bench_keyset *keys)
{
    free(keys->bytes);
    free(keys->offsets);
    memset(keys, 0, sizeof *keys);
}
