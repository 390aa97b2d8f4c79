/*
 * chunks.c - a value's image in chunks (chunks.h): reading one chunk
 * through a writer that keeps only its window, the table of loads in
 * progress that LOADCHUNK appends to until an image is complete, and the
 * SCANDUMP and LOADCHUNK bodies that BF.* and CF.* share.
 */
#include "chunks.h"
#include "command.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The image is the value's header, then amq's file, which begins with a
 * 64-byte header (docs/FORMAT.md). */
#define FILE_HEADER_BYTES 64
/* The headers a first chunk must hold to say how long the image is. */
#define HEADERS_BYTES (VALUE_IMAGE_HEADER_BYTES + FILE_HEADER_BYTES)
/* docs/FORMAT.md: the largest parameter block; payload lengths beyond
 * 2^62 are refused as no image of this module can have them. */
#define FILE_MAX_PARAMS  4096
#define FILE_MAX_PAYLOAD ((uint64_t)1 << 62)

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
    window w = { .out = malloc(len), .start = start, .end = start + len, .at = 0 };
    if (!w.out || !read_window(&w, v)) {
        free(w.out);
        return CHUNK_NO_MEMORY;
    }
    *out = (chunk){ .iterator = start + 1, .bytes = w.out, .len = len };
    return CHUNK_OK;
}

/* ---- loads in progress -------------------------------------------------------------- */

/* An image being received for the key name of database db. */
typedef struct pending_load {
    int db;
    char *name;
    size_t name_len;
    uint8_t *image; /* the bytes received; NULL: the slot is free */
    size_t len, room;
    size_t total;  /* the image's length, from its headers */
    uint64_t used; /* when it last took a chunk (the table's clock) */
} pending_load;

static pending_load pending[CHUNK_MAX_LOADS];
static uint64_t pending_clock;

static void pending_drop(pending_load *load)
{
    if (!load)
        return;
    free(load->name);
    free(load->image);
    *load = (pending_load){ 0 };
}

static pending_load *pending_find(int db, const char *name, size_t name_len)
{
    for (size_t i = 0; i < CHUNK_MAX_LOADS; i++)
        if (pending[i].image && pending[i].db == db && pending[i].name_len == name_len &&
            memcmp(pending[i].name, name, name_len) == 0)
            return &pending[i];
    return NULL;
}

/* A free slot, or else the one least recently given a chunk, emptied. */
static pending_load *pending_slot(void)
{
    pending_load *slot = NULL;
    for (size_t i = 0; !slot && i < CHUNK_MAX_LOADS; i++)
        if (!pending[i].image)
            slot = &pending[i];
    if (!slot) {
        slot = &pending[0];
        for (size_t i = 1; i < CHUNK_MAX_LOADS; i++)
            if (pending[i].used < slot->used)
                slot = &pending[i];
    }
    pending_drop(slot);
    return slot;
}

/*
 * The image's length from the headers a first chunk begins with: the
 * value image's (value_is_image) and amq's file header (docs/FORMAT.md:
 * the magic; params length P at 40, at most 4096; payload length N at 56;
 * the file is round_up(round_up(64 + P, 64) + N, 8) + 8 bytes). 0 when
 * they are not an image's headers. The rest is checked when the image is
 * complete.
 */
static size_t image_length(const uint8_t *bytes, size_t len)
{
    static const uint8_t file_magic[8] = { 0x89, 'A', 'M', 'Q', '\r', '\n', 0x1a, '\n' };
    if (len < HEADERS_BYTES || !value_is_image(bytes, len))
        return 0;
    const uint8_t *file = bytes + VALUE_IMAGE_HEADER_BYTES;
    if (memcmp(file, file_magic, sizeof file_magic) != 0)
        return 0;
    uint64_t params = 0, payload = 0;
    for (int i = 3; i >= 0; i--)
        params = (params << 8) | file[40 + i];
    for (int i = 7; i >= 0; i--)
        payload = (payload << 8) | file[56 + i];
    if (params > FILE_MAX_PARAMS || payload > FILE_MAX_PAYLOAD)
        return 0;
    uint64_t offset = (FILE_HEADER_BYTES + params + 63) / 64 * 64;
    uint64_t total = VALUE_IMAGE_HEADER_BYTES + (offset + payload + 7) / 8 * 8 + 8;
    return total <= SIZE_MAX ? (size_t)total : 0;
}

/* Whether a chunk of len bytes is as long as SCANDUMP cuts the one at the
 * load's offset: CHUNK_OK, or the difference. */
static chunk_status check_length(size_t total, size_t offset, size_t len)
{
    uint64_t want = chunk_length(total, offset);
    return len > want ? CHUNK_TOO_LONG : len < want ? CHUNK_TOO_SHORT : CHUNK_OK;
}

/* Append a chunk (of a length check_length accepted) to a load. */
static chunk_status pending_append(pending_load *load, const void *data, size_t len)
{
    if (load->room - load->len < len) {
        size_t room = load->room * 2 > load->len + len ? load->room * 2 : load->len + len;
        room = room < load->total ? room : load->total;
        uint8_t *grown = realloc(load->image, room);
        if (!grown)
            return CHUNK_NO_MEMORY;
        load->image = grown;
        load->room = room;
    }
    memcpy(load->image + load->len, data, len);
    load->len += len;
    load->used = ++pending_clock;
    return CHUNK_OK;
}

/* Start a load with its first chunk: CHUNK_OK with it in *out. */
static chunk_status pending_start(pending_load **out, int db, const char *name, size_t name_len,
                                  const void *data, size_t len)
{
    size_t total = image_length(data, len);
    if (!total)
        return CHUNK_NOT_IMAGE;
    chunk_status status = check_length(total, 0, len);
    if (status != CHUNK_OK)
        return status;
    pending_load *load = pending_slot();
    load->db = db;
    load->name = malloc(name_len ? name_len : 1);
    load->name_len = name_len;
    load->image = malloc(len);
    load->room = len;
    load->total = total;
    if (!load->name || !load->image) {
        pending_drop(load);
        return CHUNK_NO_MEMORY;
    }
    memcpy(load->name, name, name_len);
    *out = load;
    return pending_append(load, data, len);
}

/* The complete image of load as a value of kind in *out: CHUNK_DONE, or
 * CHUNK_BAD_IMAGE with the reason in *diag. */
static chunk_status pending_finish(value **out, const pending_load *load, value_kind kind,
                                   amq_diag *diag)
{
    value *v = value_from_bytes(load->image, load->len, diag);
    if (!v)
        return CHUNK_BAD_IMAGE;
    if (v->kind != kind) {
        snprintf(diag->message, sizeof diag->message,
                 "the image holds a %s filter, a value of kind %d, not %d",
                 amq_filter_family(v->filter), (int)v->kind, (int)kind);
        value_free(v);
        return CHUNK_BAD_IMAGE;
    }
    *out = v;
    return CHUNK_DONE;
}

chunk_status chunk_load(value **out, int db, const char *name, size_t name_len, long long iterator,
                        const void *data, size_t len, value_kind kind, amq_diag *diag)
{
    *out = NULL;
    pending_load *load = pending_find(db, name, name_len);
    chunk_status status;
    if (iterator == 1) {
        pending_drop(load);
        load = NULL;
        status = pending_start(&load, db, name, name_len, data, len);
    } else if (iterator < 1 || !load || load->len != (uint64_t)iterator - 1) {
        status = CHUNK_NO_LOAD;
    } else if ((status = check_length(load->total, load->len, len)) == CHUNK_OK) {
        status = pending_append(load, data, len);
    }
    if (status == CHUNK_OK && load->len == load->total)
        status = pending_finish(out, load, kind, diag);
    if (status != CHUNK_OK)
        pending_drop(load);
    return status;
}

void chunk_forget(int db, const char *name, size_t name_len)
{
    pending_drop(pending_find(db, name, name_len));
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
        free(c.bytes);
    } else if (status == CHUNK_END) {
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, 0);
        reply = spec->end_is_null ? RedisModule_ReplyWithNull(ctx)
                                  : RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    } else {
        reply = RedisModule_ReplyWithError(ctx, spec->not_saved);
    }
    close_key(key);
    return reply;
}

/* The error LOADCHUNK answers for a chunk chunk_load refused. */
static const char *load_error(const chunk_loadchunk_spec *spec, chunk_status status,
                              long long iterator)
{
    bool first_length = iterator == 1 && spec->first_length;
    switch (status) {
    case CHUNK_NOT_IMAGE:
        return spec->not_image;
    case CHUNK_NO_LOAD:
        return spec->no_load;
    case CHUNK_TOO_LONG:
        return first_length ? spec->first_length : spec->too_long;
    case CHUNK_TOO_SHORT:
        return first_length ? spec->first_length : spec->too_short;
    case CHUNK_NO_MEMORY:
        return spec->no_memory;
    default: /* CHUNK_BAD_IMAGE */
        return spec->bad_image;
    }
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
    int db = RedisModule_GetSelectedDb(ctx);
    size_t name_len = 0, len = 0;
    const char *name = RedisModule_StringPtrLen(argv[1], &name_len);
    const char *data = RedisModule_StringPtrLen(argv[3], &len);
    RedisModuleKey *key = NULL;
    value *existing = NULL;
    key_state state = KEY_EMPTY;
    if (!spec->exists) {
        /* Open until the end: a complete image replaces its value. */
        state = open_kind(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, spec->kind, &key,
                          &existing);
        if (state == KEY_WRONG_TYPE) {
            close_key(key);
            return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        }
    } else if (iterator == 1) {
        state = command_open(ctx, argv[1], REDISMODULE_READ, &key, &existing);
        close_key(key);
        key = NULL;
        if (state != KEY_EMPTY) {
            chunk_forget(db, name, name_len);
            return RedisModule_ReplyWithError(ctx, spec->exists);
        }
    }
    amq_diag diag = { .message = "" };
    value *v = NULL;
    chunk_status status =
        chunk_load(&v, db, name, name_len, iterator, data, len, spec->kind, &diag);
    if (status == CHUNK_DONE && spec->figures_agree && !spec->figures_agree(v)) {
        snprintf(diag.message, sizeof diag.message, "its figures disagree with its filter");
        value_free(v);
        status = CHUNK_BAD_IMAGE;
    }
    if (status == CHUNK_BAD_IMAGE)
        RedisModule_Log(ctx, "verbose", "amq: %s refused the image: %s", spec->command,
                        diag.message);
    if (status != CHUNK_OK && status != CHUNK_DONE) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, load_error(spec, status, iterator));
    }
    if (status == CHUNK_DONE) {
        /* spec->exists: the key must still be missing when its image is
         * complete; else the image replaces the key's value. */
        if (spec->exists && command_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key,
                                         &existing) != KEY_EMPTY) {
            value_free(v);
            close_key(key);
            return RedisModule_ReplyWithError(ctx, spec->exists);
        }
        if (!spec->exists && state == KEY_VALUE)
            RedisModule_DeleteKey(key);
        RedisModule_ModuleTypeSetValue(key, value_type, v);
    }
    close_key(key);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}
