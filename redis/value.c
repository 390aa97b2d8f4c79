/*
 * value.c - the module's data type: a filter and its figures, and how the
 * server saves, loads, rewrites and measures it.
 *
 * Everything that persists a filter goes through the library's file format:
 * the RDB holds a value image (value.h: a 64-byte header of the figures,
 * then the filter's file bytes, handed to the RDB in the pieces
 * amq_save_to_writer gives, so a large filter is never copied whole to be
 * saved); the AOF rewrite emits AMQ.RESTORE of the image; DUMP, RESTORE and
 * MIGRATE use the RDB form, so filters move between cluster nodes with it.
 * Loading checks every byte as amq_load does: a damaged payload is refused
 * (the server answers "Bad data format") and never trusted.
 */
#include "value.h"

#include "amq/fuse.h"
#include "amq/gcs.h"
#include "amq/hfb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_MAGIC        "AMQRVAL1"
#define IMAGE_HEADER_BYTES VALUE_IMAGE_HEADER_BYTES
/* The RDB layout of a value (the data type's encoding version). */
#define VALUE_ENCODING 1

RedisModuleType *value_type;

amq_scalable_bloom *value_scalable(value *v)
{
    return amq_scalable_bloom_unwrap(v->filter);
}

amq_bloom *value_classic(value *v)
{
    return amq_bloom_unwrap(v->filter);
}

amq_cuckoo *value_cuckoo(value *v)
{
    return amq_cuckoo_unwrap(v->filter);
}

/* The kind a family's filter belongs to, and the figures it carries. */
static void derive_figures(value *v)
{
    amq_info info;
    amq_info_get(&info, v->filter);
    amq_scalable_bloom *scalable = value_scalable(v);
    amq_bloom *classic = value_classic(v);
    amq_cuckoo *cuckoo = value_cuckoo(v);
    if (scalable) {
        v->kind = VALUE_BLOOM;
        v->capacity = amq_bloom_capacity(amq_scalable_bloom_stage(scalable, 0));
        v->error_rate = amq_scalable_bloom_fpr(scalable);
        v->expansion = (uint32_t)lround(amq_scalable_bloom_growth(scalable));
        v->items = amq_scalable_bloom_keys(scalable);
    } else if (classic) {
        v->kind = VALUE_BLOOM;
        v->capacity = amq_bloom_capacity(classic);
        v->error_rate = info.target_fpr;
        v->expansion = 0;
        v->items = info.keys;
    } else if (cuckoo) {
        v->kind = VALUE_CUCKOO;
        v->bucket_size = amq_cuckoo_bucket_size(cuckoo);
        v->capacity = amq_cuckoo_table_buckets(cuckoo, 0) * v->bucket_size;
        v->max_iterations = amq_cuckoo_max_kicks(cuckoo);
        v->expansion = amq_cuckoo_growth(cuckoo);
        v->items = amq_cuckoo_keys(cuckoo);
    } else {
        v->kind = VALUE_STATIC;
        v->items = info.keys;
    }
}

value *value_new(amq_filter *filter)
{
    value *v = calloc(1, sizeof *v);
    if (!v) {
        amq_free(filter);
        return NULL;
    }
    v->filter = filter;
    derive_figures(v);
    return v;
}

void value_free(value *v)
{
    if (!v)
        return;
    amq_free(v->filter);
    free(v);
}

/* ---- the image --------------------------------------------------------------- */

static void put_u32(uint8_t *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t x)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(x >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t x = 0;
    for (int i = 3; i >= 0; i--)
        x = (x << 8) | p[i];
    return x;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = (x << 8) | p[i];
    return x;
}

/* The checksum of a header's first 56 bytes, kept in its last 8: the
 * filter's file has its own, and this one covers the figures. */
static uint64_t header_checksum(const uint8_t *header)
{
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, 0);
    return amq_hash64(&hasher, header, IMAGE_HEADER_BYTES - 8);
}

static void header_encode(uint8_t header[IMAGE_HEADER_BYTES], const value *v)
{
    memset(header, 0, IMAGE_HEADER_BYTES);
    memcpy(header, IMAGE_MAGIC, 8);
    put_u32(header + 8, (uint32_t)v->kind);
    put_u32(header + 12, v->expansion);
    put_u64(header + 16, v->capacity);
    uint64_t error_bits;
    memcpy(&error_bits, &v->error_rate, sizeof error_bits);
    put_u64(header + 24, error_bits);
    put_u32(header + 32, v->bucket_size);
    put_u32(header + 36, v->max_iterations);
    put_u64(header + 40, v->items);
    put_u64(header + 48, v->deletes);
    put_u64(header + 56, header_checksum(header));
}

void value_image_header(uint8_t header[VALUE_IMAGE_HEADER_BYTES], const value *v)
{
    header_encode(header, v);
}

bool value_is_image(const void *bytes, size_t len)
{
    return len >= IMAGE_HEADER_BYTES && memcmp(bytes, IMAGE_MAGIC, 8) == 0;
}

uint8_t *value_image(const value *v, size_t *len)
{
    uint8_t *file = NULL;
    size_t file_len = 0;
    if (amq_save_to_memory(&file, &file_len, v->filter, NULL) != AMQ_OK)
        return NULL;
    uint8_t *image = malloc(IMAGE_HEADER_BYTES + file_len);
    if (image) {
        header_encode(image, v);
        memcpy(image + IMAGE_HEADER_BYTES, file, file_len);
        *len = IMAGE_HEADER_BYTES + file_len;
    }
    free(file);
    return image;
}

value *value_from_bytes(const void *bytes, size_t len, amq_diag *diag)
{
    const uint8_t *p = bytes;
    bool image = value_is_image(bytes, len);
    const uint8_t *file = image ? p + IMAGE_HEADER_BYTES : p;
    size_t file_len = image ? len - IMAGE_HEADER_BYTES : len;
    amq_filter *filter = NULL;
    if (amq_load_from_memory(&filter, file, file_len, 0, diag) != AMQ_OK)
        return NULL;
    value *v = value_new(filter);
    if (!v) {
        snprintf(diag->message, sizeof diag->message, "out of memory");
        return NULL;
    }
    if (!image)
        return v;
    if (get_u64(p + 56) != header_checksum(p)) {
        snprintf(diag->message, sizeof diag->message,
                 "the image's header does not match its checksum");
        value_free(v);
        return NULL;
    }
    value_kind kind = (value_kind)get_u32(p + 8);
    if (kind != v->kind) {
        snprintf(diag->message, sizeof diag->message,
                 "the image says kind %u but holds a %s filter", (unsigned)kind,
                 amq_filter_family(filter));
        value_free(v);
        return NULL;
    }
    uint64_t error_bits = get_u64(p + 24);
    v->expansion = get_u32(p + 12);
    v->capacity = get_u64(p + 16);
    memcpy(&v->error_rate, &error_bits, sizeof v->error_rate);
    v->bucket_size = get_u32(p + 32);
    v->max_iterations = get_u32(p + 36);
    v->items = get_u64(p + 40);
    v->deletes = get_u64(p + 48);
    if (!(v->error_rate >= 0 && v->error_rate < 1)) {
        snprintf(diag->message, sizeof diag->message, "the image's error rate is not in [0, 1)");
        value_free(v);
        return NULL;
    }
    return v;
}

/* ---- the server's callbacks ------------------------------------------------- */

static int save_piece(void *context, const void *data, size_t len)
{
    RedisModule_SaveStringBuffer(context, data, len);
    return 0;
}

static void rdb_save(RedisModuleIO *rdb, void *ptr)
{
    const value *v = ptr;
    uint8_t header[IMAGE_HEADER_BYTES];
    header_encode(header, v);
    RedisModule_SaveStringBuffer(rdb, (const char *)header, sizeof header);
    /* The pieces, then an empty one: the end. A failed save (no memory for
     * an hfb filter's coding) leaves a truncated payload, which loading
     * refuses. */
    amq_save_to_writer(v->filter, save_piece, rdb, NULL);
    RedisModule_SaveStringBuffer(rdb, "", 0);
}

static void *rdb_load(RedisModuleIO *rdb, int encver)
{
    if (encver != VALUE_ENCODING)
        return NULL;
    size_t header_len = 0;
    char *header = RedisModule_LoadStringBuffer(rdb, &header_len);
    if (RedisModule_IsIOError(rdb) || !header || header_len != IMAGE_HEADER_BYTES) {
        if (header)
            RedisModule_Free(header);
        return NULL;
    }
    uint8_t *image = malloc(IMAGE_HEADER_BYTES);
    size_t len = IMAGE_HEADER_BYTES;
    if (image)
        memcpy(image, header, IMAGE_HEADER_BYTES);
    RedisModule_Free(header);
    for (;;) {
        size_t piece_len = 0;
        char *piece = RedisModule_LoadStringBuffer(rdb, &piece_len);
        if (RedisModule_IsIOError(rdb) || !piece) {
            free(image);
            return NULL;
        }
        if (piece_len == 0) {
            RedisModule_Free(piece);
            break;
        }
        uint8_t *grown = image ? realloc(image, len + piece_len) : NULL;
        if (!grown) {
            RedisModule_Free(piece);
            free(image);
            return NULL;
        }
        image = grown;
        memcpy(image + len, piece, piece_len);
        len += piece_len;
        RedisModule_Free(piece);
    }
    amq_diag diag = { .message = "" };
    value *v = image ? value_from_bytes(image, len, &diag) : NULL;
    free(image);
    if (!v)
        RedisModule_Log(NULL, "warning", "amq: refused a damaged value: %s", diag.message);
    return v;
}

static void aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *ptr)
{
    size_t len = 0;
    uint8_t *image = value_image(ptr, &len);
    if (!image) {
        RedisModule_Log(NULL, "warning", "amq: no memory to rewrite a filter into the AOF");
        return;
    }
    RedisModule_EmitAOF(aof, "AMQ.RESTORE", "sbc", key, (const char *)image, len, "REPLACE");
    free(image);
}

static size_t mem_usage(const void *ptr)
{
    const value *v = ptr;
    amq_info info;
    if (amq_info_get(&info, v->filter) != AMQ_OK)
        return sizeof *v;
    return sizeof *v + (size_t)info.memory_bytes;
}

static void free_value(void *ptr)
{
    value_free(ptr);
}

int value_register_type(RedisModuleCtx *ctx)
{
    RedisModuleTypeMethods methods = {
        .version = REDISMODULE_TYPE_METHOD_VERSION,
        .rdb_load = rdb_load,
        .rdb_save = rdb_save,
        .aof_rewrite = aof_rewrite,
        .mem_usage = mem_usage,
        .free = free_value,
    };
    value_type = RedisModule_CreateDataType(ctx, "amqfilter", VALUE_ENCODING, &methods);
    return value_type ? REDISMODULE_OK : REDISMODULE_ERR;
}
