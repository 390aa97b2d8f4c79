/*
 * load.c - a load in progress, kept in its key (load.h): its claim, its
 * bytes, and how the RDB and the AOF keep it.
 */
#include "load.h"

#include "bytes.h"
#include "config.h"
#include "memory.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define LOAD_MAGIC "AMQRLOD1"

/* What every load claims, freed on any thread (load.h). */
static _Atomic uint64_t claimed;

uint64_t load_claimed(void)
{
    return atomic_load(&claimed);
}

/* The length of a filter file from its first bytes, every header field
 * checked by the library (amq_image_peek); 0 when they are not the header
 * of one, or not all of it yet. The rest is checked when the image is
 * complete. */
static uint64_t file_length(const uint8_t *file, size_t len)
{
    uint64_t length = 0;
    return amq_image_peek(&length, NULL, file, len, NULL) == AMQ_OK ? length : 0;
}

size_t load_image_length(const void *bytes, size_t len, value_kind *kind)
{
    const uint8_t *p = bytes;
    *kind = (value_kind)0;
    uint64_t total;
    if (value_is_image(bytes, len)) {
        *kind = (value_kind)bytes_get_le(p + 8, 4);
        uint64_t file = file_length(p + VALUE_IMAGE_HEADER_BYTES, len - VALUE_IMAGE_HEADER_BYTES);
        total = file ? VALUE_IMAGE_HEADER_BYTES + file : 0;
    } else {
        total = file_length(p, len);
    }
    return total <= SIZE_MAX ? (size_t)total : 0;
}

chunk_status load_start(value **out, const void *data, size_t len, size_t total, value_kind kind,
                        amq_diag *diag)
{
    *out = NULL;
    if (!memory_admit(total, UINT64_MAX, NULL))
        return CHUNK_NO_MEMORY;
    uint64_t held = load_claimed();
    uint64_t room = config.load_max_bytes > held ? config.load_max_bytes - held : 0;
    if (total > room && memory_limits_apply()) {
        snprintf(diag->message, sizeof diag->message,
                 "the image claims %zu bytes; loads in progress claim %llu of "
                 "amq.load-max-bytes (%llu)",
                 total, (unsigned long long)held, (unsigned long long)config.load_max_bytes);
        return CHUNK_LIMIT;
    }
    value *v = memory_calloc(1, sizeof *v);
    value_load *load = memory_calloc(1, sizeof *load);
    uint8_t *image = memory_alloc(len);
    if (!v || !load || !image) {
        memory_free(v);
        memory_free(load);
        memory_free(image);
        return CHUNK_NO_MEMORY;
    }
    *load = (value_load){ .kind = kind, .image = image, .room = len, .total = total };
    atomic_fetch_add(&claimed, total);
    v->kind = VALUE_LOADING;
    v->load = load;
    load_append(load, data, len);
    *out = v;
    return CHUNK_OK;
}

chunk_status load_append(value_load *load, const void *data, size_t len)
{
    if (load->room - load->len < len) {
        size_t room = load->room * 2 > load->len + len ? load->room * 2 : load->len + len;
        room = room < load->total ? room : load->total;
        uint8_t *grown = memory_realloc(load->image, room);
        if (!grown)
            return CHUNK_NO_MEMORY;
        load->image = grown;
        load->room = room;
    }
    memcpy(load->image + load->len, data, len);
    load->len += len;
    return CHUNK_OK;
}

chunk_status load_finish(value **out, const value_load *load, amq_diag *diag)
{
    int status = value_from_bytes(out, load->image, load->len, diag);
    return status == AMQ_OK ? CHUNK_DONE : status == AMQ_ENOMEM ? CHUNK_NO_MEMORY : CHUNK_BAD_IMAGE;
}

void load_free(value_load *load)
{
    if (!load)
        return;
    atomic_fetch_sub(&claimed, load->total);
    memory_free(load->image);
    memory_free(load);
}

/* ---- the RDB and the AOF ---------------------------------------------------------- */

void load_rdb_save(RedisModuleIO *rdb, const value_load *load)
{
    uint8_t header[LOAD_HEADER_BYTES] = { 0 };
    memcpy(header, LOAD_MAGIC, 8);
    bytes_put_le(header + 8, (uint64_t)load->kind, 4);
    bytes_put_le(header + 16, load->total, 8);
    bytes_put_le(header + 24, load->len, 8);
    RedisModule_SaveStringBuffer(rdb, (const char *)header, sizeof header);
    for (size_t at = 0; at < load->len; at += CHUNK_BYTES) {
        size_t piece = load->len - at < CHUNK_BYTES ? load->len - at : CHUNK_BYTES;
        RedisModule_SaveStringBuffer(rdb, (const char *)load->image + at, piece);
    }
    RedisModule_SaveStringBuffer(rdb, "", 0);
}

/* The log line for a load the RDB holds that is not sound. */
static value *refused(value *v, const char *why)
{
    RedisModule_Log(NULL, "warning", "amq: refused a damaged load in progress: %s", why);
    value_free(v);
    return NULL;
}

value *load_rdb_load(RedisModuleIO *rdb, const char *header, size_t header_len)
{
    const uint8_t *h = (const uint8_t *)header;
    if (header_len != LOAD_HEADER_BYTES || memcmp(h, LOAD_MAGIC, 8) != 0)
        return refused(NULL, "its header is not a load's");
    uint64_t kind = bytes_get_le(h + 8, 4), total = bytes_get_le(h + 16, 8),
             len = bytes_get_le(h + 24, 8);
    if (len == 0 || len >= total || total > SIZE_MAX)
        return refused(NULL, "it holds no bytes, or as many as it claims");
    value *v = memory_calloc(1, sizeof *v);
    value_load *load = memory_calloc(1, sizeof *load);
    uint8_t *image = memory_alloc((size_t)len);
    if (!v || !load || !image) {
        memory_free(load);
        memory_free(image);
        return refused(v, "out of memory");
    }
    *load = (value_load){
        .kind = (value_kind)kind, .image = image, .room = (size_t)len, .total = (size_t)total
    };
    atomic_fetch_add(&claimed, total);
    v->kind = VALUE_LOADING;
    v->load = load;
    for (;;) {
        size_t piece_len = 0;
        char *piece = RedisModule_LoadStringBuffer(rdb, &piece_len);
        if (RedisModule_IsIOError(rdb) || !piece)
            return refused(v, "the RDB ended inside it");
        if (piece_len == 0) {
            RedisModule_Free(piece);
            break;
        }
        bool fits = piece_len <= load->room - load->len;
        if (fits)
            load_append(load, piece, piece_len);
        RedisModule_Free(piece);
        if (!fits)
            return refused(v, "it holds more bytes than it says");
    }
    value_kind declared;
    if (load->len != len)
        return refused(v, "it holds fewer bytes than it says");
    if (load_image_length(load->image, load->len, &declared) != load->total ||
        declared != load->kind)
        return refused(v, "its bytes do not begin the image it claims");
    return v;
}

void load_emit_chunk(RedisModuleIO *aof, RedisModuleString *key, uint64_t offset, const void *bytes,
                     size_t len)
{
    RedisModule_EmitAOF(aof, "AMQ.LOADCHUNK", "slb", key, (long long)(offset + 1),
                        (const char *)bytes, len);
}

void load_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, const value_load *load)
{
    for (size_t at = 0; at < load->len; at += LOAD_AOF_PIECE_BYTES) {
        size_t piece = load->len - at;
        piece = piece < LOAD_AOF_PIECE_BYTES ? piece : LOAD_AOF_PIECE_BYTES;
        load_emit_chunk(aof, key, at, load->image + at, piece);
    }
}
