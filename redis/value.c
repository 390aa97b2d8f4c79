/*
 * value.c - the module's data type: a filter and its figures, and how the
 * server saves, loads, rewrites and measures it.
 *
 * Everything that persists a filter goes through the library's file format:
 * the RDB holds a value image (value.h: a 64-byte header of the figures,
 * then the filter's file bytes, handed to the RDB in the pieces
 * amq_save_to_writer gives, so a large filter is never copied whole to be
 * saved); the AOF rewrite emits the image as AMQ.LOADCHUNK commands of at
 * most LOAD_AOF_PIECE_BYTES, cut from the same stream by a buffer of that
 * size; DUMP, RESTORE and MIGRATE use the RDB form, so filters move
 * between cluster nodes with it. A load in progress persists the same ways
 * (load.h).
 *
 * A save cannot fail for want of memory: the library's save allocates
 * nothing, and the rewrite's buffer is static. Should the library still
 * refuse a filter, the save must not go on as if it had worked, leaving
 * a truncated value the next start refuses (and with it every key): in a
 * fork child (BGSAVE, BGREWRITEAOF, a replica's full resync) the child
 * exits with an error, so the server reports the save failed and keeps
 * the previous file.
 *
 * Loading checks every byte as amq_load does: a damaged payload is refused
 * (the server answers "Bad data format") and never trusted.
 */
#include "value.h"

#include "bytes.h"
#include "load.h"
#include "memory.h"

#include "amq/fuse.h"
#include "amq/gcs.h"
#include "amq/hfb.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    value *v = memory_calloc(1, sizeof *v);
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
    load_free(v->load);
    memory_free(v);
}

/* ---- the image --------------------------------------------------------------- */

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
    bytes_put_le(header + 8, (uint32_t)v->kind, 4);
    bytes_put_le(header + 12, v->expansion, 4);
    bytes_put_le(header + 16, v->capacity, 8);
    uint64_t error_bits;
    memcpy(&error_bits, &v->error_rate, sizeof error_bits);
    bytes_put_le(header + 24, error_bits, 8);
    bytes_put_le(header + 32, v->bucket_size, 4);
    bytes_put_le(header + 36, v->max_iterations, 4);
    bytes_put_le(header + 40, v->items, 8);
    bytes_put_le(header + 48, v->deletes, 8);
    bytes_put_le(header + 56, header_checksum(header), 8);
}

void value_image_header(uint8_t header[VALUE_IMAGE_HEADER_BYTES], const value *v)
{
    header_encode(header, v);
}

bool value_is_image(const void *bytes, size_t len)
{
    return len >= IMAGE_HEADER_BYTES && memcmp(bytes, IMAGE_MAGIC, 8) == 0;
}

/* Why an image's figures are not what the commands would report for its
 * filter (value.h), or NULL when they are. */
static const char *figures_disagree(value *v)
{
    if (v->capacity > INT64_MAX || v->items > INT64_MAX || v->deletes > INT64_MAX)
        return "a count past 2^63 - 1";
    if (!(v->error_rate >= 0 && v->error_rate < 1))
        return "an error rate outside [0, 1)";
    amq_info info;
    amq_info_get(&info, v->filter);
    amq_scalable_bloom *scalable = value_scalable(v);
    amq_bloom *classic = value_classic(v);
    amq_cuckoo *cuckoo = value_cuckoo(v);
    if (scalable || classic) {
        if (v->error_rate != info.target_fpr)
            return "an error rate not the filter's";
        if (scalable &&
            !(v->expansion >= 1 && v->expansion <= VALUE_MAX_EXPANSION &&
              v->expansion == (uint32_t)lround(amq_scalable_bloom_growth(scalable)) &&
              v->capacity == amq_bloom_capacity(amq_scalable_bloom_stage(scalable, 0)) &&
              v->items == amq_scalable_bloom_keys(scalable)))
            return "an expansion, capacity or count not the scalable filter's";
        /* A classic filter does not count its keys: BF's count is the
         * image's own (BF's adds keep it at most the capacity; a file may
         * hold more). */
        if (classic && !(v->expansion == 0 && v->capacity == amq_bloom_capacity(classic)))
            return "an expansion or capacity not the classic filter's";
    } else if (cuckoo && !(v->bucket_size >= 1 && v->bucket_size <= 255 &&
                           v->bucket_size <= amq_cuckoo_bucket_size(cuckoo))) {
        /* As reserved: the filter's may be larger. */
        return "a bucket size CF.RESERVE does not give that filter";
    }
    return NULL;
}

/* A refusal of value_from_bytes: the message in diag, *out freed. */
static int refuse_image(value **out, amq_diag *diag, const char *message)
{
    snprintf(diag->message, sizeof diag->message, "%s", message);
    value_free(*out);
    *out = NULL;
    return AMQ_ECORRUPT;
}

int value_from_bytes(value **out, const void *bytes, size_t len, amq_diag *diag)
{
    *out = NULL;
    const uint8_t *p = bytes;
    bool image = value_is_image(bytes, len);
    const uint8_t *file = image ? p + IMAGE_HEADER_BYTES : p;
    size_t file_len = image ? len - IMAGE_HEADER_BYTES : len;
    amq_filter *filter = NULL;
    int status = amq_load_from_memory(&filter, file, file_len, 0, diag);
    if (status != AMQ_OK)
        return status;
    value *v = value_new(filter);
    if (!v) {
        snprintf(diag->message, sizeof diag->message, "out of memory");
        return AMQ_ENOMEM;
    }
    *out = v;
    if (!image)
        return AMQ_OK;
    if (bytes_get_le(p + 56, 8) != header_checksum(p))
        return refuse_image(out, diag, "the image's header does not match its checksum");
    value_kind kind = (value_kind)(uint32_t)bytes_get_le(p + 8, 4);
    if (kind != v->kind)
        return refuse_image(out, diag, "the image's kind is not its filter's");
    uint64_t error_bits = bytes_get_le(p + 24, 8);
    v->expansion = (uint32_t)bytes_get_le(p + 12, 4);
    v->capacity = bytes_get_le(p + 16, 8);
    memcpy(&v->error_rate, &error_bits, sizeof v->error_rate);
    v->bucket_size = (uint32_t)bytes_get_le(p + 32, 4);
    v->max_iterations = (uint32_t)bytes_get_le(p + 36, 4);
    v->items = bytes_get_le(p + 40, 8);
    v->deletes = bytes_get_le(p + 48, 8);
    const char *wrong = figures_disagree(v);
    if (wrong) {
        char message[sizeof diag->message];
        snprintf(message, sizeof message, "the image's figures are wrong: %s", wrong);
        return refuse_image(out, diag, message);
    }
    return AMQ_OK;
}

/* ---- the server's callbacks ------------------------------------------------- */

static int save_piece(void *context, const void *data, size_t len)
{
    RedisModule_SaveStringBuffer(context, data, len);
    return 0;
}

/* The library refused to save a filter (value.c's opening says why this
 * cannot end a save that goes on). */
static void save_failed(const char *what, const amq_diag *diag)
{
    RedisModule_Log(NULL, "warning", "amq: could not %s a filter: %s", what,
                    diag->message[0] ? diag->message : "the library refused it");
    if (RedisModule_GetContextFlags(NULL) & REDISMODULE_CTX_FLAGS_IS_CHILD)
        _exit(1);
}

static void rdb_save(RedisModuleIO *rdb, void *ptr)
{
    const value *v = ptr;
    if (v->load) {
        load_rdb_save(rdb, v->load);
        return;
    }
    uint8_t header[IMAGE_HEADER_BYTES];
    header_encode(header, v);
    RedisModule_SaveStringBuffer(rdb, (const char *)header, sizeof header);
    /* The pieces, then an empty one: the end. */
    amq_diag diag = { .message = "" };
    if (amq_save_to_writer(v->filter, save_piece, rdb, &diag) != AMQ_OK) {
        save_failed("save", &diag);
        return;
    }
    RedisModule_SaveStringBuffer(rdb, "", 0);
}

static void *rdb_load_filter(RedisModuleIO *rdb, const char *header)
{
    uint8_t *image = memory_alloc(IMAGE_HEADER_BYTES);
    size_t len = IMAGE_HEADER_BYTES, room = IMAGE_HEADER_BYTES;
    if (!image)
        return NULL;
    memcpy(image, header, IMAGE_HEADER_BYTES);
    for (;;) {
        size_t piece_len = 0;
        char *piece = RedisModule_LoadStringBuffer(rdb, &piece_len);
        if (RedisModule_IsIOError(rdb) || !piece) {
            memory_free(image);
            return NULL;
        }
        if (piece_len == 0) {
            RedisModule_Free(piece);
            break;
        }
        if (room - len < piece_len) {
            size_t grown_room = room * 2 > len + piece_len ? room * 2 : len + piece_len;
            uint8_t *grown = memory_realloc(image, grown_room);
            if (!grown) {
                RedisModule_Free(piece);
                memory_free(image);
                return NULL;
            }
            image = grown;
            room = grown_room;
        }
        memcpy(image + len, piece, piece_len);
        len += piece_len;
        RedisModule_Free(piece);
    }
    amq_diag diag = { .message = "" };
    value *v = NULL;
    int status = value_from_bytes(&v, image, len, &diag);
    memory_free(image);
    if (status != AMQ_OK)
        RedisModule_Log(NULL, status == AMQ_ENOMEM ? "warning" : "verbose",
                        "amq: refused a value: %s", diag.message);
    return v;
}

static void *rdb_load(RedisModuleIO *rdb, int encver)
{
    if (encver != VALUE_ENCODING)
        return NULL;
    size_t header_len = 0;
    char *header = RedisModule_LoadStringBuffer(rdb, &header_len);
    if (RedisModule_IsIOError(rdb) || !header) {
        if (header)
            RedisModule_Free(header);
        return NULL;
    }
    /* RESTORE and MIGRATE hand over a value to take as it is: what the
     * other side held is not refused for this server's limits. */
    memory_suspend_limits();
    value *v = NULL;
    if (header_len == IMAGE_HEADER_BYTES && value_is_image(header, header_len))
        v = rdb_load_filter(rdb, header);
    else if (header_len == LOAD_HEADER_BYTES)
        v = load_rdb_load(rdb, header, header_len);
    memory_resume_limits();
    RedisModule_Free(header);
    return v;
}

/* A writer for amq_save_to_writer that cuts what it is handed into
 * AMQ.LOADCHUNK commands of LOAD_AOF_PIECE_BYTES (the last one shorter). */
typedef struct aof_cutter {
    RedisModuleIO *aof;
    RedisModuleString *key;
    uint64_t offset; /* of the buffer's first byte in the image */
    size_t held;     /* bytes in the buffer */
} aof_cutter;

/* The rewrite runs in a fork child, one key at a time: one buffer serves. */
static uint8_t aof_buffer[LOAD_AOF_PIECE_BYTES];

static void cutter_flush(aof_cutter *cutter)
{
    if (!cutter->held)
        return;
    load_emit_chunk(cutter->aof, cutter->key, cutter->offset, aof_buffer, cutter->held);
    cutter->offset += cutter->held;
    cutter->held = 0;
}

static int cutter_take(void *context, const void *data, size_t len)
{
    aof_cutter *cutter = context;
    const uint8_t *bytes = data;
    while (len) {
        size_t room = sizeof aof_buffer - cutter->held;
        size_t part = len < room ? len : room;
        memcpy(aof_buffer + cutter->held, bytes, part);
        cutter->held += part;
        bytes += part;
        len -= part;
        if (cutter->held == sizeof aof_buffer)
            cutter_flush(cutter);
    }
    return 0;
}

static void aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *ptr)
{
    const value *v = ptr;
    if (v->load) {
        load_aof_rewrite(aof, key, v->load);
        return;
    }
    aof_cutter cutter = { .aof = aof, .key = key };
    uint8_t header[IMAGE_HEADER_BYTES];
    header_encode(header, v);
    cutter_take(&cutter, header, sizeof header);
    amq_diag diag = { .message = "" };
    if (amq_save_to_writer(v->filter, cutter_take, &cutter, &diag) != AMQ_OK) {
        save_failed("rewrite into the AOF", &diag);
        return;
    }
    cutter_flush(&cutter);
}

static size_t mem_usage(const void *ptr)
{
    const value *v = ptr;
    if (v->load)
        return sizeof *v + sizeof *v->load + v->load->room;
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
