/*
 * cli_keys.c - keys held in memory for a build from all keys at once, and
 * their reduction to distinct keys.
 *
 * `amq build` without -n reads every key before building, so it can size
 * the filter to the keys it will hold: the distinct keys (a filter that
 * keeps copies counts them, and a cuckoo filter stores at most b / 2 of
 * them in slots, which cli_keys_distinct also counts). It can keep only the
 * first copy of each key, for a filter that holds each key once: keys are
 * ordered by a 64-bit hash, and keys with equal hashes are compared byte
 * for byte, so two distinct keys are never merged.
 *
 * The bytes of all keys live in one growing buffer and each key is an
 * offset into it, so a million short keys are two allocations, not a
 * million.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_keys_add(cli_keys *store, const void *key, size_t len)
{
    if (store->count + 2 > store->slots) {
        size_t slots = store->slots ? store->slots * 2 : 1024;
        size_t *offsets = realloc(store->offsets, slots * sizeof *offsets);
        if (!offsets)
            return -1;
        store->offsets = offsets;
        store->slots = slots;
        if (store->count == 0)
            store->offsets[0] = 0;
    }
    if (store->used + len > store->capacity) {
        size_t capacity = store->capacity ? store->capacity : (size_t)1 << 16;
        while (capacity < store->used + len)
            capacity *= 2;
        char *bytes = realloc(store->bytes, capacity);
        if (!bytes)
            return -1;
        store->bytes = bytes;
        store->capacity = capacity;
    }
    if (len)
        memcpy(store->bytes + store->used, key, len);
    store->used += len;
    store->count++;
    store->offsets[store->count] = store->used;
    return 0;
}

const void *cli_keys_at(const cli_keys *store, size_t i, size_t *len)
{
    *len = store->offsets[i + 1] - store->offsets[i];
    /* An empty key may sit at the end of a buffer never allocated. */
    return store->bytes ? store->bytes + store->offsets[i] : "";
}

void cli_keys_free(cli_keys *store)
{
    free(store->bytes);
    free(store->offsets);
    memset(store, 0, sizeof *store);
}

typedef struct keyed_index {
    uint64_t hash;
    size_t index;
} keyed_index;

/* By hash, then by input order: the copies of a key end up next to each
 * other, first copy first. */
static int compare_keyed(const void *a, const void *b)
{
    const keyed_index *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static bool same_key(const cli_keys *store, size_t a, size_t b)
{
    size_t a_len, b_len;
    const void *a_key = cli_keys_at(store, a, &a_len);
    const void *b_key = cli_keys_at(store, b, &b_len);
    return a_len == b_len && (a_len == 0 || memcmp(a_key, b_key, a_len) == 0);
}

int cli_keys_distinct(cli_keys *store, bool drop_copies, size_t copies_held, size_t *distinct,
                      size_t *held)
{
    size_t count = store->count;
    *distinct = count;
    if (held)
        *held = count < 2 || copies_held > 0 ? count : 0;
    if (count < 2)
        return 0;
    keyed_index *order = malloc(count * sizeof *order);
    unsigned char *keep = malloc(count);
    /* copies[i]: the copies seen so far of the key whose first copy is i. */
    size_t *copies = held ? calloc(count, sizeof *copies) : NULL;
    if (!order || !keep || (held && !copies)) {
        free(order);
        free(keep);
        free(copies);
        return -1;
    }
    if (held)
        *held = 0;
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, 0);
    for (size_t i = 0; i < count; i++) {
        size_t len;
        const void *key = cli_keys_at(store, i, &len);
        order[i] = (keyed_index){ amq_hash64(&hasher, key, len), i };
    }
    qsort(order, count, sizeof *order, compare_keyed);
    /* A key is kept unless an earlier key of its hash run is kept and is
     * the same bytes; runs are one key long but for copies (and, once in
     * 2^64, two keys sharing a hash). */
    for (size_t run = 0; run < count;) {
        size_t end = run + 1;
        while (end < count && order[end].hash == order[run].hash)
            end++;
        for (size_t i = run; i < end; i++) {
            size_t first = order[i].index;
            keep[first] = 1;
            for (size_t j = run; j < i; j++)
                if (keep[order[j].index] && same_key(store, order[i].index, order[j].index)) {
                    keep[order[i].index] = 0;
                    first = order[j].index;
                    break;
                }
            if (held && copies[first]++ < copies_held)
                (*held)++;
        }
        run = end;
    }
    free(order);
    free(copies);
    *distinct = 0;
    for (size_t i = 0; i < count; i++)
        *distinct += keep[i];
    if (!drop_copies) {
        free(keep);
        return 0;
    }
    /* Compact in place, in input order: a kept key never moves forward. */
    size_t kept = 0, used = 0;
    for (size_t i = 0; i < count; i++) {
        if (!keep[i])
            continue;
        size_t len;
        const char *key = cli_keys_at(store, i, &len);
        if (len && store->bytes + used != key)
            memmove(store->bytes + used, key, len);
        store->offsets[kept] = used;
        used += len;
        kept++;
        store->offsets[kept] = used;
    }
    free(keep);
    store->count = kept;
    store->used = used;
    return 0;
}
