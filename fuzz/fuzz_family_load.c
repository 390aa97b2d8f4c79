/*
 * fuzz_family_load.c - every filter family's loader (amq__family.load) on
 * arbitrary parameter blocks and payloads.
 *
 * fuzz_container_load.c cannot reach the loaders: a mutated file fails the
 * container's checksum long before a family reads its parameters. Here the
 * input is split without one:
 *
 *     byte 0      the family: an index into amq__family_table(), modulo
 *                 the number of families
 *     bytes 1-2   P, the parameter block's length, little-endian, capped at
 *                 the bytes that follow and at AMQ__FORMAT_PARAMS_MAX
 *     P bytes     the parameter block
 *     the rest    the payload
 *
 * and the family's loader gets an amq__container with its id, an XXH3
 * hasher with seed 0 and those two blocks, each copied into a buffer of its
 * own exact size (the payload 64-byte aligned, as in a file) so that a read
 * past either end is caught. fuzz/make_family_corpus.sh makes the seeds from
 * files the amq tool writes.
 *
 * A loader must refuse bad input with a status code, never crash, leak or
 * read out of bounds, and never allocate more than its payload justifies.
 * When it accepts, the filter must also behave:
 *
 *   1. saving it at once gives back the loaded parameter block and payload
 *      byte for byte (a loader keeps every field it accepts, and a family's
 *      bytes are determined by its state);
 *   2. a few fixed keys are queried; each key added (AMQ_OK; a full filter
 *      may answer AMQ_EFULL, a scalable one AMQ_ERANGE) is then present, and
 *      removing the added keys in reverse order succeeds every time;
 *   3. what it saves after those changes loads again and saves to the same
 *      bytes.
 *
 * Families with an invariant check (amq__<family>_check: bloom_internal.h,
 * gcs_internal.h, hfb_internal.h, fuse_internal.h) are checked after the
 * load and after the changes.
 *
 * A violation aborts with a message on stderr, so libFuzzer keeps the input.
 */
#include "bloom/bloom_internal.h"
#include "core/family.h"
#include "core/format.h"
#include "core/util.h"
#include "filter/filter.h"
#include "fuse/fuse_internal.h"
#include "gcs/gcs_internal.h"
#include "hfb/hfb_internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The most a saved filter may describe: far more than any input can make
 * (an added key opens at most one table or stage, about 16 times the
 * largest so far), far less than would exhaust memory. */
#define SAVED_BYTES_MAX ((uint64_t)1 << 28)

static const char *const probe_keys[] = {
    "",
    "a",
    "amq",
    "key-1",
    "key-42",
    "0123456789abcdef",
    "a somewhat longer key, to hash past 16 bytes",
};
static const char *const added_keys[] = { "added-1", "added-2", "added-3", "key-1" };
#define PROBE_COUNT (sizeof probe_keys / sizeof probe_keys[0])
#define ADDED_COUNT (sizeof added_keys / sizeof added_keys[0])

/* A family's parameter block and payload, each in a buffer of its own. */
typedef struct blocks {
    amq_hasher hasher;
    uint8_t *params;
    uint32_t params_len;
    uint8_t *payload;
    uint64_t payload_len;
} blocks;

static _Noreturn void fail(const amq__family *family, const char *format, ...) AMQ__PRINTF(2, 3);

static _Noreturn void fail(const amq__family *family, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "fuzz_family_load: %s: ", family->name);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}

static void blocks_free(blocks *b)
{
    free(b->params);
    free(b->payload);
    b->params = b->payload = NULL;
}

/* Copy params and payload into exact-size buffers; false if out of memory. */
static bool blocks_copy(blocks *b, const uint8_t *params, uint32_t params_len,
                        const uint8_t *payload, uint64_t payload_len)
{
    void *aligned = NULL;
    b->params = malloc(params_len ? params_len : 1);
    if (posix_memalign(&aligned, AMQ__FORMAT_ALIGN, payload_len ? (size_t)payload_len : 1) != 0)
        aligned = NULL;
    b->payload = aligned;
    if (!b->params || !b->payload) {
        blocks_free(b);
        return false;
    }
    memcpy(b->params, params, params_len);
    memcpy(b->payload, payload, (size_t)payload_len);
    b->params_len = params_len;
    b->payload_len = payload_len;
    return true;
}

static bool blocks_equal(const blocks *a, const blocks *b)
{
    return memcmp(&a->hasher, &b->hasher, sizeof a->hasher) == 0 &&
           a->params_len == b->params_len && a->payload_len == b->payload_len &&
           memcmp(a->params, b->params, a->params_len) == 0 &&
           memcmp(a->payload, b->payload, (size_t)a->payload_len) == 0;
}

static int load(const amq__family *family, void **state, const blocks *b, amq_diag *diag)
{
    amq__container c = {
        .family = family->id,
        .hasher = b->hasher,
        .params = b->params,
        .params_len = b->params_len,
        .payload = b->payload,
        .payload_len = b->payload_len,
    };
    bool borrows_image = false;
    *state = NULL;
    int status = family->load(state, &c, &borrows_image, diag);
    if (status > 0 || (status == AMQ_OK) != (*state != NULL))
        fail(family, "load answered %d with%s a filter", status, *state ? "" : "out");
    return status;
}

/* The family's invariant check, where it has one. */
static void check(const amq__family *family, const void *state, const char *when)
{
    amq_diag diag = { .message = "" };
    int status = AMQ_OK;
    switch (family->id) {
    case AMQ__FAMILY_BLOOM:
        status = amq__bloom_check(state);
        break;
    case AMQ__FAMILY_COUNTING_BLOOM:
        status = amq__counting_bloom_check(state, &diag);
        break;
    case AMQ__FAMILY_SCALABLE_BLOOM:
        status = amq__scalable_bloom_check(state, &diag);
        break;
    case AMQ__FAMILY_GCS:
        status = amq__gcs_check(state, &diag);
        break;
    case AMQ__FAMILY_HFB:
        status = amq__hfb_check(state, &diag);
        break;
    case AMQ__FAMILY_FUSE8:
    case AMQ__FAMILY_FUSE16:
        status = amq__fuse_check(state, &diag);
        break;
    default:
        break;
    }
    if (status != AMQ_OK)
        fail(family, "invariants broken %s: %s", when, diag.message);
}

/* Save the filter, check what the family describes, and gather it into
 * *out (the pieces one after another, as a file would hold them). */
static void save(const amq__family *family, const void *state, blocks *out)
{
    static amq__saved saved_block; /* 12 KiB: not on a fuzzer's stack */
    amq__saved *saved = &saved_block;
    memset(saved, 0, sizeof *saved);
    amq__params_init(&saved->params);
    int status = family->save(state, saved);
    if (status != AMQ_OK)
        fail(family, "save failed: %s", amq_strerror(status));
    if (saved->params.overflow)
        fail(family, "saved parameters overflow the block");
    if (saved->piece_count > AMQ__MAX_PIECES)
        fail(family, "save describes %zu pieces", saved->piece_count);
    uint64_t total = 0;
    for (size_t i = 0; i < saved->piece_count; i++) {
        if (saved->pieces[i].len > SAVED_BYTES_MAX ||
            (saved->pieces[i].len && !saved->pieces[i].data && !saved->pieces[i].produce))
            fail(family, "saved piece %zu has %llu bytes at %p", i,
                 (unsigned long long)saved->pieces[i].len, saved->pieces[i].data);
        total += saved->pieces[i].len;
    }
    if (total > SAVED_BYTES_MAX)
        fail(family, "save describes a payload of %llu bytes", (unsigned long long)total);
    out->hasher = saved->hasher;
    out->params = malloc(saved->params.len ? saved->params.len : 1);
    out->payload = malloc(total ? (size_t)total : 1);
    if (!out->params || !out->payload)
        abort();
    memcpy(out->params, saved->params.bytes, saved->params.len);
    out->params_len = saved->params.len;
    uint64_t offset = 0;
    for (size_t i = 0; i < saved->piece_count; i++) {
        amq__piece_copy(out->payload + offset, &saved->pieces[i]);
        offset += saved->pieces[i].len;
    }
    out->payload_len = total;
}

/* Query, add and remove keys (property 2). */
static void exercise(const amq__family *family, void *state)
{
    for (size_t i = 0; i < PROBE_COUNT; i++) {
        int answer = family->contains(state, probe_keys[i], strlen(probe_keys[i]));
        /* An hfb filter of raw IDs takes 16-byte keys only. */
        if (answer == AMQ_EINVAL && family->id == AMQ__FAMILY_HFB &&
            strlen(probe_keys[i]) != AMQ_HFB_ID_BYTES)
            continue;
        if (answer != 0 && answer != 1)
            fail(family, "contains answered %d", answer);
    }
    if (!family->add)
        return;
    bool added[ADDED_COUNT] = { false };
    for (size_t i = 0; i < ADDED_COUNT; i++) {
        const char *key = added_keys[i];
        int status = family->add(state, key, strlen(key));
        if (status == AMQ_EFULL || status == AMQ_ERANGE)
            continue;
        if (status != AMQ_OK)
            fail(family, "adding %s failed: %s", key, amq_strerror(status));
        added[i] = true;
        if (family->contains(state, key, strlen(key)) != 1)
            fail(family, "%s is absent just after it was added", key);
    }
    if (!family->remove)
        return;
    for (size_t i = ADDED_COUNT; i-- > 0;) {
        if (!added[i])
            continue;
        int status = family->remove(state, added_keys[i], strlen(added_keys[i]));
        if (status != AMQ_OK)
            fail(family, "removing %s failed: %s", added_keys[i], amq_strerror(status));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    const amq__family *const *families = amq__family_table();
    size_t family_count = 0;
    while (families[family_count])
        family_count++;
    const amq__family *family = families[data[0] % family_count];
    size_t params_len = amq__load_u16le(data + 1);
    size_t rest = size - 3;
    if (params_len > rest)
        params_len = rest;
    if (params_len > AMQ__FORMAT_PARAMS_MAX)
        params_len = AMQ__FORMAT_PARAMS_MAX;

    blocks input = { .params = NULL };
    amq_hasher_xxh3(&input.hasher, 0);
    if (!blocks_copy(&input, data + 3, (uint32_t)params_len, data + 3 + params_len,
                     rest - params_len))
        return 0;
    void *state;
    amq_diag diag = { .message = "" };
    if (load(family, &state, &input, &diag) != AMQ_OK) {
        blocks_free(&input);
        return 0;
    }

    check(family, state, "after loading");
    amq_info info;
    memset(&info, 0, sizeof info);
    info.family = family->name;
    family->info(state, &info);
    if (info.detail_count > AMQ_INFO_MAX_DETAILS)
        fail(family, "info has %zu details", info.detail_count);

    blocks saved;
    save(family, state, &saved);
    if (!blocks_equal(&saved, &input))
        fail(family, "saving a loaded filter does not give back what was loaded");
    blocks_free(&saved);

    exercise(family, state);
    check(family, state, "after adding and removing keys");
    blocks changed;
    save(family, state, &changed);
    void *reloaded;
    if (load(family, &reloaded, &changed, &diag) != AMQ_OK)
        fail(family, "a changed filter saves what it cannot load: %s", diag.message);
    save(family, reloaded, &saved);
    if (!blocks_equal(&saved, &changed))
        fail(family, "a reloaded filter saves other bytes");
    blocks_free(&saved);
    family->destroy(reloaded);
    blocks_free(&changed);
    family->destroy(state);
    blocks_free(&input);
    return 0;
}
