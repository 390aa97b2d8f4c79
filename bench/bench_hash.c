/*
 * bench_hash.c - throughput of the key hashes, through the public entry
 * points amq_hash64 and amq_hash128 exactly as a filter calls them (the
 * switch on the hasher kind included).
 *
 * Four workloads, one per function a filter can be built with:
 *
 *   hash/xxh3-64    amq_hash64, XXH3 seeded (the default of every family)
 *   hash/xxh3-128   amq_hash128, XXH3 seeded (families that need 128 bits)
 *   hash/siphash    amq_hash64, SipHash-2-4 (BIP158 Golomb-coded sets)
 *   hash/md5        amq_hash64, MD5 through libcrypto (GCS compatibility)
 *
 * each with three phases over n keys: 16-byte and 64-byte binary keys, and
 * variable-length URL keys (bench_keys.c). One operation is one key hashed.
 * Every hash is folded into a sink kept in the state so that the compiler
 * cannot drop the calls; the sink is otherwise unused.
 */
#include "bench.h"
#include "core/util.h"

#include <stdlib.h>

typedef struct hash_variant {
    amq_hash_kind kind;
    unsigned width; /* 64 or 128: which entry point */
} hash_variant;

typedef struct hash_state {
    amq_hasher hasher;
    unsigned width;
    bench_keyset short_keys, long_keys, urls;
    uint64_t sink;
} hash_state;

static void hash_teardown(void *state)
{
    hash_state *s = state;
    bench_keyset_free(&s->short_keys);
    bench_keyset_free(&s->long_keys);
    bench_keyset_free(&s->urls);
    free(s);
}

static int hash_setup(void **state, const bench_config *config, const void *arg, amq_diag *diag)
{
    const hash_variant *variant = arg;
    hash_state *s = calloc(1, sizeof *s);
    if (!s)
        return AMQ_ENOMEM;
    s->width = variant->width;
    switch (variant->kind) {
    case AMQ_HASH_SIPHASH: {
        uint8_t key[16];
        amq__store_u64le(key, config->seed);
        amq__store_u64le(key + 8, ~config->seed);
        amq_hasher_siphash(&s->hasher, key);
        break;
    }
    case AMQ_HASH_MD5:
        amq_hasher_md5(&s->hasher);
        break;
    case AMQ_HASH_XXH3:
    default:
        amq_hasher_xxh3(&s->hasher, config->seed);
        break;
    }
    int status =
        bench_keys_binary(&s->short_keys, config->keys, 16, config->seed, BENCH_KEYS_PRESENT);
    if (status == AMQ_OK)
        status =
            bench_keys_binary(&s->long_keys, config->keys, 64, config->seed, BENCH_KEYS_PRESENT);
    if (status == AMQ_OK)
        status = bench_keys_urls(&s->urls, config->keys, config->seed, BENCH_KEYS_PRESENT);
    if (status != AMQ_OK) {
        hash_teardown(s);
        return amq__fail(diag, status, "generating %zu keys: %s", config->keys,
                         amq_strerror(status));
    }
    *state = s;
    return AMQ_OK;
}

static uint64_t hash_pass(hash_state *s, const bench_keyset *keys)
{
    uint64_t sink = 0;
    if (s->width == 128) {
        for (size_t i = 0; i < keys->count; i++) {
            amq_u128 h = amq_hash128(&s->hasher, bench_key(keys, i), bench_key_len(keys, i));
            sink ^= h.low ^ h.high;
        }
    } else {
        for (size_t i = 0; i < keys->count; i++)
            sink ^= amq_hash64(&s->hasher, bench_key(keys, i), bench_key_len(keys, i));
    }
    s->sink ^= sink;
    return keys->count;
}

static uint64_t hash_short(void *state)
{
    hash_state *s = state;
    return hash_pass(s, &s->short_keys);
}

static uint64_t hash_long(void *state)
{
    hash_state *s = state;
    return hash_pass(s, &s->long_keys);
}

static uint64_t hash_urls(void *state)
{
    hash_state *s = state;
    return hash_pass(s, &s->urls);
}

static const bench_phase hash_phases[] = {
    { .name = "16B", .run = hash_short },
    { .name = "64B", .run = hash_long },
    { .name = "url", .run = hash_urls },
    { .name = NULL },
};

static const hash_variant xxh3_64 = { AMQ_HASH_XXH3, 64 };
static const hash_variant xxh3_128 = { AMQ_HASH_XXH3, 128 };
static const hash_variant siphash = { AMQ_HASH_SIPHASH, 64 };
static const hash_variant md5 = { AMQ_HASH_MD5, 64 };

const bench_workload bench_hash_xxh3_64 = {
    .name = "hash/xxh3-64",
    .group = "hash",
    .description = "amq_hash64 with XXH3 (seeded)",
    .arg = &xxh3_64,
    .setup = hash_setup,
    .phases = hash_phases,
    .teardown = hash_teardown,
};

const bench_workload bench_hash_xxh3_128 = {
    .name = "hash/xxh3-128",
    .group = "hash",
    .description = "amq_hash128 with XXH3 (seeded)",
    .arg = &xxh3_128,
    .setup = hash_setup,
    .phases = hash_phases,
    .teardown = hash_teardown,
};

const bench_workload bench_hash_siphash = {
    .name = "hash/siphash",
    .group = "hash",
    .description = "amq_hash64 with SipHash-2-4",
    .arg = &siphash,
    .setup = hash_setup,
    .phases = hash_phases,
    .teardown = hash_teardown,
};

const bench_workload bench_hash_md5 = {
    .name = "hash/md5",
    .group = "hash",
    .description = "amq_hash64 with MD5 (OpenSSL libcrypto)",
    .arg = &md5,
    .setup = hash_setup,
    .phases = hash_phases,
    .teardown = hash_teardown,
};
