/*
 * cmd_bf.c - the BF.* commands: RedisBloom's Bloom filter surface, on amq's
 * scalable Bloom filter (and its classic one when a filter must not grow).
 *
 *   BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
 *                                   an empty filter; OK
 *   BF.ADD key item                  1 the item is new, 0 it may be present
 *   BF.MADD key item [item ...]      BF.ADD's answer for each item, in order
 *   BF.INSERT key [CAPACITY c] [ERROR p] [EXPANSION x] [NOCREATE] [NONSCALING]
 *             ITEMS item [item ...]  BF.MADD with the parameters of the
 *                                    filter it creates (options in any order)
 *   BF.EXISTS key item               1 maybe present, 0 certainly absent
 *   BF.MEXISTS key item [item ...]   BF.EXISTS's answer for each item
 *   BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]
 *                                    the figures by name, or [one figure]
 *   BF.CARD key                      the adds that answered 1
 *   BF.SCANDUMP key iterator         the filter in chunks: [iterator, bytes]
 *   BF.LOADCHUNK key iterator data   a filter from SCANDUMP's chunks; OK
 *
 * A filter that grows is amq's scalable Bloom filter: its first stage
 * holds the capacity at error_rate * (1 - r), each further stage EXPANSION
 * times the keys of the one before at r times the error, r the module's
 * bf-tightening (0.5, RedisBloom's fixed ratio). NONSCALING (or EXPANSION 0)
 * gives a classic Bloom filter of the capacity at error_rate, which takes
 * no new item once it holds capacity of them ("non scaling filter is
 * full"). An add first asks the filter: an item that may be present
 * answers 0 and changes nothing, so BF.CARD counts the adds that were new.
 * ADD, MADD and INSERT create a missing key with the module's defaults
 * (commands.h) or INSERT's options; MADD and INSERT stop at the first item
 * that fails, whose error is then the array's last element. MEXISTS asks
 * the library once for all its items (the batch query). A write that
 * changed the key is replicated verbatim (an add that changed nothing is
 * not), and so is every chunk LOADCHUNK accepts.
 *
 * Replies, errors and their order are RedisBloom's (docs/REDIS.md lists
 * where they differ): under RESP3 the 1/0 answers are booleans and BF.INFO
 * a map. A missing key answers 0 to EXISTS, MEXISTS and CARD and "ERR not
 * found" to INFO and SCANDUMP; a key of another type (or a filter of the
 * module's other kinds) answers WRONGTYPE, except to EXISTS and MEXISTS,
 * which answer 0 as RedisBloom's do.
 *
 * SCANDUMP and LOADCHUNK move the value's image (value.h: a 64-byte header
 * of the figures and their checksum, then the filter in amq's file format)
 * in consecutive pieces: the first is the two headers (128 bytes), the
 * others at most 16 MiB. A chunk's iterator is 1 + its offset in the image; SCANDUMP key 0
 * gives [1, first chunk], SCANDUMP key it the chunk after the one it
 * named, and [0, ""] after the last. A chunk is read from the filter
 * through a writer that keeps only its window, so no call copies the whole
 * filter. LOADCHUNK takes the chunks in order: iterator 1 starts a load,
 * kept in a table of the module's (pending loads, keyed by database and key
 * name) until the image is complete - amq's file header gives its length -
 * and then loaded, checked, and stored in the key, replacing what it held.
 * Until then the key is untouched; any inconsistency drops the load with
 * an error, and damaged data never becomes a queryable filter.
 */
#include "command.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RedisBloom's ranges for the parameters. */
#define MAX_CAPACITY   ((uint64_t)1 << 30)
#define MAX_EXPANSION  32768
#define MAX_ERROR_RATE 0.25 /* larger rates are capped to it */

/* RedisBloom's error strings (many have no ERR prefix). */
#define ERR_NOT_FOUND      "ERR not found"
#define ERR_FULL           "ERR non scaling filter is full"
#define ERR_INSERT         "ERR problem inserting into filter"
#define ERR_NO_MEMORY      "ERR Insufficient memory to create filter"
#define ERR_CREATE         "ERR could not create filter"
#define ERR_BAD_DATA       "ERR received bad data"
#define ERR_BAD_OFFSET     "ERR invalid offset - no link found"
#define ERR_TOO_BIG        "ERR invalid chunk - Too big for current filter"
#define ERR_CANNOT_EXPAND  "Nonscaling filters cannot expand"
#define ERR_UNKNOWN_OPTION "Unknown argument received"

/* ---- the filter ------------------------------------------------------------- */

/* What a new filter is made of: RESERVE's or INSERT's arguments, or the
 * module's defaults. */
typedef struct bf_params {
    double error_rate;
    uint64_t capacity;
    uint64_t expansion; /* 0: non-scaling, a classic filter */
} bf_params;

static bf_params bf_defaults(void)
{
    return (bf_params){ .error_rate = config.bf_error_rate,
                        .capacity = config.bf_initial_size,
                        .expansion = config.bf_expansion };
}

/* The library's filter for params, wrapped in a handle. */
static int new_filter(amq_filter **out, const bf_params *params, amq_diag *diag)
{
    if (params->expansion == 0) {
        amq_bloom_params classic = { .capacity = params->capacity, .fpr = params->error_rate };
        amq_bloom *bloom = NULL;
        int status = amq_bloom_new(&bloom, &classic, diag);
        if (status == AMQ_OK && (status = amq_bloom_wrap(out, bloom, diag)) != AMQ_OK)
            amq_bloom_free(bloom);
        return status;
    }
    amq_scalable_bloom_params scalable = { .capacity = params->capacity,
                                           .fpr = params->error_rate,
                                           .growth = (double)params->expansion,
                                           .tightening = config.bf_tightening };
    amq_scalable_bloom *bloom = NULL;
    int status = amq_scalable_bloom_new(&bloom, &scalable, diag);
    if (status == AMQ_OK && (status = amq_scalable_bloom_wrap(out, bloom, diag)) != AMQ_OK)
        amq_scalable_bloom_free(bloom);
    return status;
}

/* A new empty value for params, error rates above 0.25 capped to it as
 * RedisBloom does; NULL with the error to answer in *error. */
static value *bf_create(RedisModuleCtx *ctx, bf_params params, const char **error)
{
    if (params.error_rate > MAX_ERROR_RATE) {
        RedisModule_Log(ctx, "warning", "amq: BF error rate %g capped at %g", params.error_rate,
                        MAX_ERROR_RATE);
        params.error_rate = MAX_ERROR_RATE;
    }
    amq_filter *filter = NULL;
    amq_diag diag = { .message = "" };
    int status = new_filter(&filter, &params, &diag);
    value *v = status == AMQ_OK ? value_new(filter) : NULL;
    if (!v) {
        *error = status == AMQ_OK || status == AMQ_ENOMEM ? ERR_NO_MEMORY : ERR_CREATE;
        if (status != AMQ_OK && status != AMQ_ENOMEM)
            RedisModule_Log(ctx, "verbose", "amq: BF filter refused: %s", diag.message);
        return NULL;
    }
    v->capacity = params.capacity;
    v->error_rate = params.error_rate;
    v->expansion = (uint32_t)params.expansion;
    v->items = 0;
    return v;
}

/*
 * Add one item: 1 it was new, 0 it may have been present (nothing
 * changed), or the error to answer in *error (-1).
 */
static int bf_add(value *v, RedisModuleString *arg, const char **error)
{
    size_t len = 0;
    const char *item = RedisModule_StringPtrLen(arg, &len);
    amq_scalable_bloom *scalable = value_scalable(v);
    if (scalable) {
        int added = amq_scalable_bloom_add(scalable, item, len);
        if (added < 0) {
            *error = ERR_INSERT;
            return -1;
        }
        v->items += (uint64_t)added;
        return added;
    }
    amq_bloom *classic = value_classic(v);
    if (amq_bloom_contains(classic, item, len))
        return 0;
    if (v->items >= v->capacity) {
        *error = ERR_FULL;
        return -1;
    }
    amq_bloom_add(classic, item, len);
    v->items++;
    return 1;
}

/* The keys the filter holds before it grows (the sum of its stages'). */
static uint64_t bf_capacity(value *v)
{
    amq_scalable_bloom *scalable = value_scalable(v);
    return scalable ? amq_scalable_bloom_capacity(scalable) : v->capacity;
}

/* ---- keys -------------------------------------------------------------------- */

/* Open name as command_open does; a value of another kind than Bloom is
 * of the wrong type here. */
static key_state bf_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                         RedisModuleKey **key, value **v)
{
    key_state state = command_open(ctx, name, mode, key, v);
    if (state == KEY_VALUE && (*v)->kind != VALUE_BLOOM)
        return KEY_WRONG_TYPE;
    return state;
}

static void close_key(RedisModuleKey *key)
{
    if (key)
        RedisModule_CloseKey(key);
}

/*
 * Open name for adds: *v its filter, created from params (and stored)
 * when the key is missing and create is set (*created says so). NULL, or
 * the error to answer (the key is then closed).
 */
static const char *open_for_add(RedisModuleCtx *ctx, RedisModuleString *name,
                                const bf_params *params, bool create, RedisModuleKey **key,
                                value **v, bool *created)
{
    key_state state = bf_open(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE, key, v);
    const char *error = NULL;
    *created = false;
    if (state == KEY_WRONG_TYPE)
        error = REDISMODULE_ERRORMSG_WRONGTYPE;
    else if (state == KEY_EMPTY && !create)
        error = ERR_NOT_FOUND;
    else if (state == KEY_EMPTY && (*v = bf_create(ctx, *params, &error)) != NULL)
        *created = RedisModule_ModuleTypeSetValue(*key, value_type, *v) == REDISMODULE_OK;
    if (error) {
        close_key(*key);
        *key = NULL;
    }
    return error;
}

/* Add argv[first..argc-1] one by one (each answer depends on the adds
 * before it) and answer an array: 1/0 per item, ended early by the error
 * of an item that failed. Returns the number of items added. */
static long reply_adds(RedisModuleCtx *ctx, value *v, RedisModuleString **argv, int first, int argc)
{
    long added = 0;
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_ARRAY_LEN);
    long replied = 0;
    for (int i = first; i < argc; i++, replied++) {
        const char *error = NULL;
        int answer = bf_add(v, argv[i], &error);
        if (answer < 0) {
            RedisModule_ReplyWithError(ctx, error);
            replied++;
            break;
        }
        added += answer;
        reply_bool(ctx, answer);
    }
    RedisModule_ReplySetArrayLength(ctx, replied);
    return added;
}

/* Replicate (and append to the AOF) a write that changed the key: one
 * that changed nothing needs no copy. */
static void replicate_if(RedisModuleCtx *ctx, bool changed)
{
    if (changed)
        RedisModule_ReplicateVerbatim(ctx);
}

/* ---- argument parsing ---------------------------------------------------------- */

static bool arg_long(RedisModuleString *arg, long long *out)
{
    return RedisModule_StringToLongLong(arg, out) == REDISMODULE_OK;
}

/*
 * BF.RESERVE's arguments: NULL, or the error to answer. An option's value
 * is checked where it stands; NONSCALING with a nonzero EXPANSION is
 * refused, EXPANSION 0 means NONSCALING.
 */
static const char *parse_reserve(bf_params *out, RedisModuleString **argv, int argc)
{
    *out = bf_defaults();
    long long number = 0;
    if (!arg_double(argv[2], &out->error_rate))
        return "ERR bad error rate";
    if (!(out->error_rate > 0 && out->error_rate < 1))
        return "ERR error rate must be in the range (0.000000, 1.000000)";
    if (!arg_long(argv[3], &number))
        return "ERR bad capacity";
    if (number < 1 || (uint64_t)number > MAX_CAPACITY)
        return "ERR capacity must be in the range [1, 1073741824]";
    out->capacity = (uint64_t)number;
    bool nonscaling = false, expansion_given = false;
    for (int i = 4; i < argc; i++) {
        if (arg_is(argv[i], "NONSCALING")) {
            nonscaling = true;
        } else if (arg_is(argv[i], "EXPANSION")) {
            if (++i >= argc)
                return "ERR no expansion";
            if (!arg_long(argv[i], &number))
                return "ERR bad expansion";
            if (number < 0 || number > MAX_EXPANSION)
                return "ERR expansion must be in the range [0, 32768]";
            out->expansion = (uint64_t)number;
            expansion_given = true;
        } else {
            return ERR_UNKNOWN_OPTION;
        }
    }
    if (nonscaling && expansion_given && out->expansion > 0)
        return ERR_CANNOT_EXPAND;
    if (nonscaling)
        out->expansion = 0;
    return NULL;
}

/* What BF.INSERT's options say. */
typedef struct insert_options {
    bf_params params;
    bool nocreate;
    int first_item; /* argv index of the first item */
} insert_options;

/*
 * BF.INSERT's options, any order, before ITEMS: NULL, or the error to
 * answer; wrong_arity when ITEMS or an option's value is missing.
 */
static const char *parse_insert(insert_options *out, RedisModuleString **argv, int argc,
                                bool *wrong_arity)
{
    *out = (insert_options){ .params = bf_defaults() };
    *wrong_arity = false;
    bool nonscaling = false, expansion_given = false;
    long long number = 0;
    int i = 2;
    for (; i < argc && !arg_is(argv[i], "ITEMS"); i++) {
        bool takes_value =
            arg_is(argv[i], "CAPACITY") || arg_is(argv[i], "ERROR") || arg_is(argv[i], "EXPANSION");
        if (takes_value && i + 1 >= argc) {
            *wrong_arity = true;
            return NULL;
        }
        if (arg_is(argv[i], "CAPACITY")) {
            if (!arg_long(argv[++i], &number) || number < 1 || (uint64_t)number > MAX_CAPACITY)
                return "Bad capacity";
            out->params.capacity = (uint64_t)number;
        } else if (arg_is(argv[i], "ERROR")) {
            double rate = 0;
            if (!arg_double(argv[++i], &rate) || !(rate > 0 && rate < 1))
                return "Bad error rate";
            out->params.error_rate = rate;
        } else if (arg_is(argv[i], "EXPANSION")) {
            if (!arg_long(argv[++i], &number) || number < 0 || number > MAX_EXPANSION)
                return "Bad expansion";
            out->params.expansion = (uint64_t)number;
            expansion_given = true;
        } else if (arg_is(argv[i], "NOCREATE")) {
            out->nocreate = true;
        } else if (arg_is(argv[i], "NONSCALING")) {
            nonscaling = true;
        } else {
            return ERR_UNKNOWN_OPTION;
        }
    }
    if (i + 1 >= argc) { /* no ITEMS, or nothing after it */
        *wrong_arity = true;
        return NULL;
    }
    if (nonscaling && expansion_given && out->params.expansion > 0)
        return ERR_CANNOT_EXPAND;
    if (nonscaling)
        out->params.expansion = 0;
    out->first_item = i + 1;
    return NULL;
}

/* ---- BF.RESERVE, BF.ADD, BF.MADD, BF.INSERT ------------------------------------ */

static int cmd_bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4 || argc > 7)
        return RedisModule_WrongArity(ctx);
    bf_params params;
    const char *error = parse_reserve(&params, argv, argc);
    if (error)
        return RedisModule_ReplyWithError(ctx, error);
    RedisModuleKey *key;
    value *v;
    key_state state = bf_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &v);
    if (state == KEY_WRONG_TYPE)
        error = REDISMODULE_ERRORMSG_WRONGTYPE;
    else if (state == KEY_VALUE)
        error = "ERR item exists";
    else if ((v = bf_create(ctx, params, &error)) != NULL)
        RedisModule_ModuleTypeSetValue(key, value_type, v);
    close_key(key);
    if (error)
        return RedisModule_ReplyWithError(ctx, error);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmd_bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    bf_params defaults = bf_defaults();
    RedisModuleKey *key;
    value *v;
    bool created;
    const char *error = open_for_add(ctx, argv[1], &defaults, true, &key, &v, &created);
    if (error)
        return RedisModule_ReplyWithError(ctx, error);
    int added = bf_add(v, argv[2], &error);
    close_key(key);
    replicate_if(ctx, created || added > 0);
    return added < 0 ? RedisModule_ReplyWithError(ctx, error) : reply_bool(ctx, added);
}

static int cmd_bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    bf_params defaults = bf_defaults();
    RedisModuleKey *key;
    value *v;
    bool created;
    const char *error = open_for_add(ctx, argv[1], &defaults, true, &key, &v, &created);
    if (error)
        return RedisModule_ReplyWithError(ctx, error);
    long added = reply_adds(ctx, v, argv, 2, argc);
    close_key(key);
    replicate_if(ctx, created || added > 0);
    return REDISMODULE_OK;
}

static int cmd_bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    insert_options options;
    bool wrong_arity = false;
    const char *error = parse_insert(&options, argv, argc, &wrong_arity);
    if (wrong_arity)
        return RedisModule_WrongArity(ctx);
    if (error)
        return RedisModule_ReplyWithError(ctx, error);
    RedisModuleKey *key;
    value *v;
    bool created;
    error = open_for_add(ctx, argv[1], &options.params, !options.nocreate, &key, &v, &created);
    if (error)
        return RedisModule_ReplyWithError(ctx, error);
    long added = reply_adds(ctx, v, argv, options.first_item, argc);
    close_key(key);
    replicate_if(ctx, created || added > 0);
    return REDISMODULE_OK;
}

/* ---- BF.EXISTS, BF.MEXISTS ------------------------------------------------------- */

static int cmd_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    int answer = 0;
    /* A missing key, or one of another type (RedisBloom's quirk), is 0. */
    if (bf_open(ctx, argv[1], REDISMODULE_READ, &key, &v) == KEY_VALUE) {
        size_t len = 0;
        const char *item = RedisModule_StringPtrLen(argv[2], &len);
        amq_scalable_bloom *scalable = value_scalable(v);
        answer = scalable ? amq_scalable_bloom_contains(scalable, item, len)
                          : amq_bloom_contains(value_classic(v), item, len);
    }
    close_key(key);
    return reply_bool(ctx, answer);
}

static int cmd_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    size_t count = (size_t)(argc - 2);
    uint8_t *results = calloc(count, 1);
    if (!results)
        return RedisModule_ReplyWithError(ctx, "ERR Insufficient memory");
    RedisModuleKey *key;
    value *v;
    if (bf_open(ctx, argv[1], REDISMODULE_READ, &key, &v) == KEY_VALUE) {
        const void **keys = NULL;
        size_t *lens = NULL;
        if (!args_as_keys(argv, 2, argc, &keys, &lens)) {
            free(results);
            close_key(key);
            return RedisModule_ReplyWithError(ctx, "ERR Insufficient memory");
        }
        amq_scalable_bloom *scalable = value_scalable(v);
        if (scalable)
            amq_scalable_bloom_contains_many(results, scalable, keys, lens, count);
        else
            amq_bloom_contains_many(results, value_classic(v), keys, lens, count);
        free(keys);
        free(lens);
    }
    close_key(key);
    RedisModule_ReplyWithArray(ctx, (long)count);
    for (size_t i = 0; i < count; i++)
        reply_bool(ctx, results[i]);
    free(results);
    return REDISMODULE_OK;
}

/* ---- BF.INFO, BF.CARD ------------------------------------------------------------- */

/* BF.INFO's fields, in RedisBloom's order, and their selectors. */
typedef enum info_field {
    INFO_CAPACITY,
    INFO_SIZE,
    INFO_FILTERS,
    INFO_ITEMS,
    INFO_EXPANSION,
    INFO_FIELDS
} info_field;

static const char *const info_names[INFO_FIELDS] = {
    "Capacity", "Size", "Number of filters", "Number of items inserted", "Expansion rate",
};
static const char *const info_selectors[INFO_FIELDS] = {
    "CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION",
};

/* One figure of v: an integer, or nil for the expansion of a filter that
 * does not grow. */
static void reply_info_field(RedisModuleCtx *ctx, value *v, info_field field)
{
    amq_scalable_bloom *scalable = value_scalable(v);
    amq_info info;
    switch (field) {
    case INFO_CAPACITY:
        RedisModule_ReplyWithLongLong(ctx, (long long)bf_capacity(v));
        break;
    case INFO_SIZE:
        amq_info_get(&info, v->filter);
        RedisModule_ReplyWithLongLong(ctx, (long long)info.memory_bytes);
        break;
    case INFO_FILTERS:
        RedisModule_ReplyWithLongLong(ctx, scalable ? (long long)amq_scalable_bloom_stages(scalable)
                                                    : 1);
        break;
    case INFO_ITEMS:
        RedisModule_ReplyWithLongLong(ctx, (long long)v->items);
        break;
    default:
        if (scalable)
            RedisModule_ReplyWithLongLong(ctx, (long long)v->expansion);
        else
            RedisModule_ReplyWithNull(ctx);
        break;
    }
}

static int cmd_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    key_state state = bf_open(ctx, argv[1], REDISMODULE_READ, &key, &v);
    int reply;
    if (state == KEY_WRONG_TYPE) {
        reply = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    } else if (state == KEY_EMPTY) {
        reply = RedisModule_ReplyWithError(ctx, ERR_NOT_FOUND);
    } else if (argc == 2) {
        reply = reply_pairs(ctx, INFO_FIELDS);
        for (int f = 0; f < INFO_FIELDS; f++) {
            RedisModule_ReplyWithSimpleString(ctx, info_names[f]);
            reply_info_field(ctx, v, (info_field)f);
        }
    } else {
        int f = 0;
        while (f < INFO_FIELDS && !arg_is(argv[2], info_selectors[f]))
            f++;
        if (f == INFO_FIELDS) {
            reply = RedisModule_ReplyWithError(ctx, "Invalid information value");
        } else {
            /* A one-element array, as RedisBloom answers (and its tests
             * assert), though its docs say a bare integer. */
            reply = RedisModule_ReplyWithArray(ctx, 1);
            reply_info_field(ctx, v, (info_field)f);
        }
    }
    close_key(key);
    return reply;
}

static int cmd_bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    key_state state = bf_open(ctx, argv[1], REDISMODULE_READ, &key, &v);
    int reply;
    if (state == KEY_WRONG_TYPE)
        reply = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    else
        reply = RedisModule_ReplyWithLongLong(ctx, state == KEY_VALUE ? (long long)v->items : 0);
    close_key(key);
    return reply;
}

/* ---- the image in chunks ---------------------------------------------------------- */

/* The value image (value.h) is a header of VALUE_IMAGE_HEADER_BYTES, then
 * amq's file, which begins with a 64-byte header (docs/FORMAT.md). */
#define FILE_HEADER_BYTES 64
/* The first chunk: both headers, so a load knows the image's length. */
#define FIRST_CHUNK_BYTES (VALUE_IMAGE_HEADER_BYTES + FILE_HEADER_BYTES)
/* The largest chunk (RedisBloom's). */
#define CHUNK_BYTES ((uint64_t)16 << 20)

/*
 * The chunk SCANDUMP answers to iterator (0: the first; else the one
 * after the chunk at offset iterator - 1) of an image of total bytes:
 * true with its offset and length, false past the end.
 */
static bool next_chunk(uint64_t iterator, uint64_t total, uint64_t *start, uint64_t *len)
{
    if (iterator == 0)
        *start = 0;
    else if (iterator - 1 < FIRST_CHUNK_BYTES)
        *start = FIRST_CHUNK_BYTES;
    else
        *start = iterator - 1 + CHUNK_BYTES;
    if (*start >= total) /* iterator <= 2^63: no wrap */
        return false;
    uint64_t size = *start == 0 ? FIRST_CHUNK_BYTES : CHUNK_BYTES;
    *len = total - *start < size ? total - *start : size;
    return true;
}

/* A writer for amq_save_to_writer that keeps the bytes of [start, end) of
 * the file and stops the save once past them. */
typedef struct window {
    uint8_t *out;        /* receives the window's bytes */
    uint64_t start, end; /* the window, as offsets in the file */
    uint64_t at;         /* the offset of the next byte the save hands over */
} window;

static int window_take(void *context, const void *data, size_t len)
{
    window *w = context;
    uint64_t from = w->at, to = w->at + len;
    uint64_t low = from > w->start ? from : w->start;
    uint64_t high = to < w->end ? to : w->end;
    if (low < high)
        memcpy(w->out + (low - w->start), (const uint8_t *)data + (low - from),
               (size_t)(high - low));
    w->at = to;
    return w->at >= w->end; /* the window is full: stop */
}

/* Bytes [start, start + len) of v's image into out; false when the
 * filter cannot be saved (out of memory). */
static bool read_image(uint8_t *out, const value *v, uint64_t start, uint64_t len)
{
    uint64_t end = start + len;
    if (start < VALUE_IMAGE_HEADER_BYTES) {
        uint8_t header[VALUE_IMAGE_HEADER_BYTES];
        value_image_header(header, v);
        uint64_t upto = end < VALUE_IMAGE_HEADER_BYTES ? end : VALUE_IMAGE_HEADER_BYTES;
        memcpy(out, header + start, (size_t)(upto - start));
    }
    if (end <= VALUE_IMAGE_HEADER_BYTES)
        return true;
    uint64_t from = start > VALUE_IMAGE_HEADER_BYTES ? start : VALUE_IMAGE_HEADER_BYTES;
    window w = { .out = out + (from - start),
                 .start = from - VALUE_IMAGE_HEADER_BYTES,
                 .end = end - VALUE_IMAGE_HEADER_BYTES };
    amq_save_to_writer(v->filter, window_take, &w, NULL);
    return w.at >= w.end;
}

static int cmd_bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    long long iterator = 0;
    if (!arg_long(argv[2], &iterator))
        return RedisModule_ReplyWithError(ctx, "Second argument must be numeric");
    if (iterator < 0)
        return RedisModule_ReplyWithError(ctx, "ERR invalid iterator");
    RedisModuleKey *key;
    value *v;
    key_state state = bf_open(ctx, argv[1], REDISMODULE_READ, &key, &v);
    int reply;
    uint64_t file_bytes = 0, start = 0, len = 0;
    if (state == KEY_WRONG_TYPE) {
        reply = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    } else if (state == KEY_EMPTY) {
        reply = RedisModule_ReplyWithError(ctx, ERR_NOT_FOUND);
    } else if (amq_saved_bytes(&file_bytes, v->filter, NULL) != AMQ_OK) {
        reply = RedisModule_ReplyWithError(ctx, "ERR could not save the filter");
    } else if (!next_chunk((uint64_t)iterator, VALUE_IMAGE_HEADER_BYTES + file_bytes, &start,
                           &len)) {
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, 0);
        reply = RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    } else {
        uint8_t *chunk = malloc((size_t)len);
        if (!chunk || !read_image(chunk, v, start, len)) {
            reply = RedisModule_ReplyWithError(ctx, "ERR could not save the filter");
        } else {
            RedisModule_ReplyWithArray(ctx, 2);
            RedisModule_ReplyWithLongLong(ctx, (long long)(start + 1));
            reply = RedisModule_ReplyWithStringBuffer(ctx, (const char *)chunk, (size_t)len);
        }
        free(chunk);
    }
    close_key(key);
    return reply;
}

/* ---- loads in progress -------------------------------------------------------------- */

/* The most loads in progress at once; a load beyond them drops the one
 * least recently given a chunk. */
#define MAX_PENDING 64

/* An image being received by BF.LOADCHUNK for the key name of database db. */
typedef struct pending_load {
    int db;
    char *name;
    size_t name_len;
    uint8_t *image; /* the bytes received; NULL: the slot is free */
    size_t len, room, total;
    uint64_t used; /* when it last took a chunk (the table's clock) */
} pending_load;

static pending_load pending[MAX_PENDING];
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
    for (size_t i = 0; i < MAX_PENDING; i++)
        if (pending[i].image && pending[i].db == db && pending[i].name_len == name_len &&
            memcmp(pending[i].name, name, name_len) == 0)
            return &pending[i];
    return NULL;
}

/* A slot for a new load: the key's own, a free one, or the least
 * recently used one, emptied. */
static pending_load *pending_slot(int db, const char *name, size_t name_len)
{
    pending_load *slot = pending_find(db, name, name_len);
    for (size_t i = 0; !slot && i < MAX_PENDING; i++)
        if (!pending[i].image)
            slot = &pending[i];
    if (!slot) {
        slot = &pending[0];
        for (size_t i = 1; i < MAX_PENDING; i++)
            if (pending[i].used < slot->used)
                slot = &pending[i];
    }
    pending_drop(slot);
    return slot;
}

/*
 * The image's length from the first chunk's two headers (docs/FORMAT.md:
 * the file is round_up(round_up(64 + P, 64) + N, 8) + 8 bytes for its
 * parameter block's P and payload's N); 0 when they are not a value
 * image's headers.
 */
static size_t image_length(const uint8_t *chunk, size_t len)
{
    static const uint8_t file_magic[8] = { 0x89, 'A', 'M', 'Q', '\r', '\n', 0x1a, '\n' };
    if (len < FIRST_CHUNK_BYTES || !value_is_image(chunk, len))
        return 0;
    const uint8_t *file = chunk + VALUE_IMAGE_HEADER_BYTES;
    if (memcmp(file, file_magic, sizeof file_magic) != 0)
        return 0;
    uint64_t params = 0, payload = 0;
    for (int i = 3; i >= 0; i--)
        params = (params << 8) | file[40 + i];
    for (int i = 7; i >= 0; i--)
        payload = (payload << 8) | file[56 + i];
    if (params > 4096 || payload > ((uint64_t)1 << 62))
        return 0;
    uint64_t offset = (FILE_HEADER_BYTES + params + 63) / 64 * 64;
    uint64_t total = VALUE_IMAGE_HEADER_BYTES + (offset + payload + 7) / 8 * 8 + 8;
    return total <= SIZE_MAX ? (size_t)total : 0;
}

/* Append a chunk to a load; false when out of memory. */
static bool pending_append(pending_load *load, const void *chunk, size_t len)
{
    if (load->room - load->len < len) {
        size_t room = load->room * 2 > load->len + len ? load->room * 2 : load->len + len;
        room = room < load->total ? room : load->total;
        uint8_t *grown = realloc(load->image, room);
        if (!grown)
            return false;
        load->image = grown;
        load->room = room;
    }
    memcpy(load->image + load->len, chunk, len);
    load->len += len;
    load->used = ++pending_clock;
    return true;
}

/* Start a load with its first chunk: NULL, or the error to answer. */
static const char *pending_start(pending_load **out, int db, const char *name, size_t name_len,
                                 const uint8_t *chunk, size_t len)
{
    size_t total = image_length(chunk, len);
    if (!total || len > total)
        return ERR_BAD_DATA;
    pending_load *load = pending_slot(db, name, name_len);
    load->db = db;
    load->name = malloc(name_len ? name_len : 1);
    load->name_len = name_len;
    load->image = malloc(len);
    load->room = len;
    load->total = total;
    if (!load->name || !load->image) {
        pending_drop(load);
        return "ERR Insufficient memory";
    }
    memcpy(load->name, name, name_len);
    pending_append(load, chunk, len);
    *out = load;
    return NULL;
}

/* Whether a loaded value's figures agree with its filter, as BF.* relies
 * on them. */
static bool figures_agree(value *v)
{
    if (v->kind != VALUE_BLOOM)
        return false;
    amq_info info;
    amq_info_get(&info, v->filter);
    if (v->error_rate != info.target_fpr)
        return false;
    amq_scalable_bloom *scalable = value_scalable(v);
    if (scalable)
        return v->expansion >= 1 && v->expansion <= MAX_EXPANSION &&
               v->expansion == (uint32_t)lround(amq_scalable_bloom_growth(scalable)) &&
               v->capacity == amq_bloom_capacity(amq_scalable_bloom_stage(scalable, 0)) &&
               v->items == amq_scalable_bloom_keys(scalable);
    /* A classic filter does not count its keys: BF's count is the image's,
     * which BF's adds keep at most the capacity. */
    return v->expansion == 0 && v->capacity >= 1 &&
           v->capacity == amq_bloom_capacity(value_classic(v)) && v->items <= v->capacity;
}

/* The complete image of load as a value (the load is dropped); NULL when
 * it is not a sound BF filter. */
static value *pending_finish(RedisModuleCtx *ctx, pending_load *load)
{
    amq_diag diag = { .message = "" };
    value *v = value_from_bytes(load->image, load->len, &diag);
    pending_drop(load);
    if (v && !figures_agree(v)) {
        snprintf(diag.message, sizeof diag.message, "its figures disagree with its filter");
        value_free(v);
        v = NULL;
    }
    if (!v)
        RedisModule_Log(ctx, "verbose", "amq: BF.LOADCHUNK refused the image: %s", diag.message);
    return v;
}

static int cmd_bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long iterator = 0;
    if (!arg_long(argv[2], &iterator))
        return RedisModule_ReplyWithError(ctx, "ERR Second argument must be numeric");
    RedisModuleKey *key;
    value *existing;
    key_state state = bf_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &existing);
    if (state == KEY_WRONG_TYPE) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    int db = RedisModule_GetSelectedDb(ctx);
    size_t name_len = 0, len = 0;
    const char *name = RedisModule_StringPtrLen(argv[1], &name_len);
    const uint8_t *chunk = (const uint8_t *)RedisModule_StringPtrLen(argv[3], &len);
    pending_load *load = pending_find(db, name, name_len);
    const char *error = NULL;
    if (iterator == 1) {
        error = pending_start(&load, db, name, name_len, chunk, len);
    } else if (iterator < 1 || !load || load->len != (uint64_t)iterator - 1) {
        error = ERR_BAD_OFFSET;
    } else if (len > load->total - load->len) {
        error = ERR_TOO_BIG;
    } else if (!pending_append(load, chunk, len)) {
        error = "ERR Insufficient memory";
    }
    if (error) {
        pending_drop(load);
    } else if (load->len == load->total) {
        value *v = pending_finish(ctx, load);
        if (!v) {
            error = ERR_BAD_DATA;
        } else {
            if (state == KEY_VALUE)
                RedisModule_DeleteKey(key);
            RedisModule_ModuleTypeSetValue(key, value_type, v);
        }
    }
    close_key(key);
    if (error)
        return RedisModule_ReplyWithError(ctx, error);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

const command_entry bf_commands[] = {
    { "bf.reserve", cmd_bf_reserve, "write deny-oom" },
    { "bf.add", cmd_bf_add, "write deny-oom" },
    { "bf.madd", cmd_bf_madd, "write deny-oom" },
    { "bf.insert", cmd_bf_insert, "write deny-oom" },
    { "bf.exists", cmd_bf_exists, "readonly fast" },
    { "bf.mexists", cmd_bf_mexists, "readonly fast" },
    { "bf.info", cmd_bf_info, "readonly fast" },
    { "bf.card", cmd_bf_card, "readonly fast" },
    { "bf.scandump", cmd_bf_scandump, "readonly" },
    { "bf.loadchunk", cmd_bf_loadchunk, "write deny-oom" },
    { NULL, NULL, NULL },
};
