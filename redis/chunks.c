/*
 * chunks.c - a value's image in chunks (chunks.h): reading one chunk
 * through a writer that keeps only its window, and the SCANDUMP and
 * LOADCHUNK bodies that BF.*, CF.* and AMQ.* share, over the loads in
 * progress of load.h.
 */
#include "chunks.h"
#include "command.h"
#include "load.h"
#include "memory.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The length of the chunk SCANDUMP cuts at offset of an image of total
 * bytes (offset < total). */
static uint64_t chunk_length(uint64_t total, uint64_t offset)
{
    return min_u64(total - offset, CHUNK_BYTES);
}

/* ---- reading a chunk ------------------------------------------------------------- */

/* A writer for amq_save_to_writer that keeps the bytes [start, end) of
 * what it is handed (offsets in the image) and stops the save once it has
 * them all. */
typedef struct window {
    uint8_t *out;        /* receives the window's bytes */
    uint64_t start, end; /* the window */
    uint64_t at;         /* the offset of the next byte handed over */
} window;

static int window_take(void *context, const void *data, size_t len)
{
    window *w = context;
    uint64_t from = w->at, to = w->at + len;
    uint64_t low = from > w->start ? from : w->start;
    uint64_t high = min_u64(to, w->end);
    if (low < high)
        memcpy(w->out + (low - w->start), (const uint8_t *)data + (low - from),
               (size_t)(high - low));
    w->at = to;
    return w->at >= w->end; /* the window is full: stop */
}

/* Fill w from v's image: its header, then the filter's file, whose save
 * stops once the window is full. False when the save failed. */
static bool read_window(window *w, const value *v)
{
    if (w->start < VALUE_IMAGE_HEADER_BYTES) {
        uint8_t header[VALUE_IMAGE_HEADER_BYTES];
        value_image_header(header, v);
        window_take(w, header, sizeof header);
    } else {
        w->at = VALUE_IMAGE_HEADER_BYTES;
    }
    if (w->at >= w->end)
        return true;
    int status = amq_save_to_writer(v->filter, window_take, w, NULL);
    return (status == AMQ_OK || status == AMQ_EIO) && w->at >= w->end;
}

chunk_status chunk_read(chunk *out, const value *v, uint64_t iterator)
{
    *out = (chunk){ 0 };
    uint64_t file_bytes = 0;
    if (amq_saved_bytes(&file_bytes, v->filter, NULL) != AMQ_OK)
        return CHUNK_NO_MEMORY;
    uint64_t total = VALUE_IMAGE_HEADER_BYTES + file_bytes;
    /* The chunk's index: 0, or the one after iterator - 1's. */
    uint64_t index = iterator == 0 ? 0 : (iterator - 1) / CHUNK_BYTES + 1;
    if (index > (total - 1) / CHUNK_BYTES)
        return CHUNK_END;
    uint64_t start = index * CHUNK_BYTES;
    size_t len = (size_t)chunk_length(total, start);
    window w = { .out = memory_alloc(len), .start = start, .end = start + len, .at = 0 };
    if (!w.out || !read_window(&w, v)) {
        memory_free(w.out);
        return CHUNK_NO_MEMORY;
    }
    *out = (chunk){ .iterator = start + 1, .bytes = w.out, .len = len };
    return CHUNK_OK;
}

/* Whether a chunk of len bytes at offset of an image of total bytes is as
 * long as the spec wants: CHUNK_OK, or the difference. */
static chunk_status check_length(const chunk_loadchunk_spec *spec, size_t total, size_t offset,
                                 size_t len)
{
    uint64_t want = chunk_length(total, offset);
    if (len > want)
        return CHUNK_TOO_LONG;
    if (spec->exact_cuts ? len < want : len == 0)
        return CHUNK_TOO_SHORT;
    return CHUNK_OK;
}

/* ---- the commands ------------------------------------------------------------------ */

static void close_key(RedisModuleKey *key)
{
    if (key)
        RedisModule_CloseKey(key);
}

/* command_open, a value of another kind than kind being the wrong type. */
static key_state open_kind(RedisModuleCtx *ctx, RedisModuleString *name, int mode, value_kind kind,
                           RedisModuleKey **key, value **v)
{
    key_state state = command_open(ctx, name, mode, key, v);
    return state == KEY_VALUE && (*v)->kind != kind ? KEY_WRONG_TYPE : state;
}

int chunk_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                   const chunk_scandump_spec *spec)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    long long iterator = 0;
    if (RedisModule_StringToLongLong(argv[2], &iterator) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, spec->not_numeric);
    if (iterator < 0)
        return RedisModule_ReplyWithError(ctx, spec->negative);
    RedisModuleKey *key;
    value *v;
    key_state state = open_kind(ctx, argv[1], REDISMODULE_READ, spec->kind, &key, &v);
    if (state != KEY_VALUE) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, state == KEY_EMPTY ? "ERR not found"
                                                                  : REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    chunk c = { 0 };
    chunk_status status = spec->ends_at_once && spec->ends_at_once(v)
                              ? CHUNK_END
                              : chunk_read(&c, v, (uint64_t)iterator);
    int reply;
    if (status == CHUNK_OK) {
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, (long long)c.iterator);
        reply = RedisModule_ReplyWithStringBuffer(ctx, (const char *)c.bytes, c.len);
        memory_free(c.bytes);
    } else if (status == CHUNK_END) {
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, 0);
        reply = spec->end_is_null ? RedisModule_ReplyWithNull(ctx)
                                  : RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    } else {
        reply = memory_reply_refused(ctx, spec->not_saved);
    }
    close_key(key);
    return reply;
}

/* The error LOADCHUNK answers for a refused chunk. */
static int reply_refused(RedisModuleCtx *ctx, const chunk_loadchunk_spec *spec, chunk_status status,
                         long long iterator, const amq_diag *diag)
{
    bool first_length = iterator == 1 && spec->first_length;
    const char *error = spec->bad_image;
    switch (status) {
    case CHUNK_NOT_IMAGE:
        error = spec->not_image;
        break;
    case CHUNK_NO_LOAD:
        error = spec->no_load;
        break;
    case CHUNK_TOO_LONG:
        error = first_length ? spec->first_length : spec->too_long;
        break;
    case CHUNK_TOO_SHORT:
        error = first_length ? spec->first_length : spec->too_short;
        break;
    case CHUNK_NO_MEMORY:
        return memory_reply_refused(ctx, spec->no_memory);
    case CHUNK_LIMIT: {
        char text[sizeof diag->message + 8];
        snprintf(text, sizeof text, "ERR %s", diag->message);
        return RedisModule_ReplyWithError(ctx, text);
    }
    default: /* CHUNK_BAD_IMAGE */
        break;
    }
    return RedisModule_ReplyWithError(ctx, error);
}

/* Whether a load (its image declaring kind) may be taken on by spec's
 * command. */
static bool kind_fits(const chunk_loadchunk_spec *spec, value_kind kind)
{
    return !spec->kind || spec->kind == kind;
}

/* A first chunk: a new load in *out, of an image spec's command takes. */
static chunk_status first_chunk(value **out, const chunk_loadchunk_spec *spec, const void *data,
                                size_t len, amq_diag *diag)
{
    value_kind kind;
    size_t total = load_image_length(data, len, &kind);
    if (!total || !kind_fits(spec, kind))
        return CHUNK_NOT_IMAGE;
    chunk_status status = check_length(spec, total, 0, len);
    if (status != CHUNK_OK)
        return status;
    return load_start(out, data, len, total, kind, diag);
}

int chunk_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                    const chunk_loadchunk_spec *spec)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long iterator = 0;
    if (RedisModule_StringToLongLong(argv[2], &iterator) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, spec->not_numeric);
    if (iterator < 1 && spec->below_one)
        return RedisModule_ReplyWithError(ctx, spec->below_one);
    size_t len = 0;
    const char *data = RedisModule_StringPtrLen(argv[3], &len);
    RedisModuleKey *key = NULL;
    value *existing = NULL;
    key_state state =
        command_open_any(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &existing);
    value_load *load = state == KEY_VALUE ? existing->load : NULL;
    /* A key of another type, a filter of another kind, or another
     * command's load, is the wrong type. */
    bool wrong_type =
        state == KEY_WRONG_TYPE ||
        (state == KEY_VALUE && !load && !spec->exists && !kind_fits(spec, existing->kind)) ||
        (load && !kind_fits(spec, load->kind));
    if (wrong_type) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    if (iterator == 1 && state == KEY_VALUE && !load && spec->exists) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, spec->exists);
    }
    amq_diag diag = { .message = "" };
    chunk_status status;
    value *started = NULL;
    if (iterator == 1) {
        status = first_chunk(&started, spec, data, len, &diag);
        load = started ? started->load : NULL;
    } else if (iterator < 1 || !load || load->len != (uint64_t)iterator - 1) {
        status = CHUNK_NO_LOAD;
    } else if ((status = check_length(spec, load->total, load->len, len)) == CHUNK_OK) {
        status = load_append(load, data, len);
    }
    value *v = NULL;
    if (status == CHUNK_OK && load->len == load->total) {
        status = load_finish(&v, load, &diag);
        if (status == CHUNK_DONE && !kind_fits(spec, v->kind)) {
            value_free(v);
            v = NULL;
            status = CHUNK_BAD_IMAGE;
        }
        if (status == CHUNK_NO_MEMORY && !started)
            load->len -= len; /* as if this chunk had not come: it can come again */
        if (status == CHUNK_BAD_IMAGE) {
            RedisModule_Log(ctx, "verbose", "amq: %s refused the image: %s", spec->command,
                            diag.message);
            if (!started) {
                /* Complete and unsound: nothing can follow. */
                RedisModule_DeleteKey(key);
                RedisModule_Replicate(ctx, "DEL", "s", argv[1]);
            }
        }
    }
    if (status != CHUNK_OK && status != CHUNK_DONE) {
        value_free(started);
        close_key(key);
        return reply_refused(ctx, spec, status, iterator, &diag);
    }
    if (v) {
        value_free(started);
        RedisModule_ModuleTypeSetValue(key, value_type, v);
    } else if (started) {
        RedisModule_ModuleTypeSetValue(key, value_type, started);
    }
    close_key(key);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}
