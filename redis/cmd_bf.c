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
 * in the chunks of chunks.h, shared with CF.*: pieces of 16 MiB from offset
 * 0, each with 1 + its offset as its iterator; SCANDUMP key 0 gives [1,
 * first chunk], SCANDUMP key it the chunk after the one it named, and
 * [0, ""] after the last. LOADCHUNK takes the chunks in order, each as
 * SCANDUMP cut it: iterator 1 starts a load, kept by chunks.c until the
 * image is complete, then loaded, checked against its figures and stored
 * in the key, replacing what it held. Until then the key is untouched; any
 * inconsistency drops the load with an error, and damaged data never
 * becomes a queryable filter.
 */
#include "chunks.h"
#include "command.h"
#include "commands.h"
#include "memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* RedisBloom's ranges for the parameters. */
#define MAX_CAPACITY   ((uint64_t)1 << 30)
#define MAX_EXPANSION  VALUE_MAX_EXPANSION
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
        *error =
            status == AMQ_OK || status == AMQ_ENOMEM ? memory_refusal(ERR_NO_MEMORY) : ERR_CREATE;
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

/*
 * Add count items in order through the library's batch add
 * (amq_add_unique_many), answers[i] as bf_add's for item i: 1 new, 0 maybe
 * present, -1 failed with *error. Stops after the first failure. Returns
 * how many items it answered.
 */
static size_t bf_add_many(value *v, const void *const *keys, const size_t *lens, size_t count,
                          int *answers, const char **error)
{
    int capabilities = amq_family_capabilities(amq_filter_family(v->filter));
    if (capabilities >= 0 && (capabilities & AMQ_CAN_GROW)) {
        size_t handled = 0;
        int status = amq_add_unique_many(answers, &handled, v->filter, keys, lens, count);
        for (size_t i = 0; i < handled; i++)
            v->items += (uint64_t)answers[i];
        if (status < 0) {
            *error = status == AMQ_ENOMEM ? memory_refusal(ERR_INSERT) : ERR_INSERT;
            answers[handled++] = -1;
        }
        return handled;
    }
    /* A non-scaling filter takes at most its capacity: a batch of no more
     * items than the room left cannot pass it. */
    size_t done = 0;
    while (done < count) {
        uint64_t room = v->capacity > v->items ? v->capacity - v->items : 0;
        if (room == 0) {
            if (amq_contains(v->filter, keys[done], lens[done]) != 1) {
                answers[done] = -1;
                *error = ERR_FULL;
                return done + 1;
            }
            answers[done++] = 0;
            continue;
        }
        size_t batch = count - done < 256 ? count - done : 256;
        if (batch > room)
            batch = (size_t)room;
        /* A classic filter's add cannot fail. */
        amq_add_unique_many(answers + done, NULL, v->filter, keys + done, lens + done, batch);
        for (size_t i = 0; i < batch; i++)
            v->items += (uint64_t)answers[done + i];
        done += batch;
    }
    return done;
}

/* Add one item: 1 it was new, 0 it may have been present (nothing
 * changed), or -1 with the error to answer in *error. */
static int bf_add(value *v, RedisModuleString *arg, const char **error)
{
    size_t len = 0;
    const void *item = RedisModule_StringPtrLen(arg, &len);
    int answer = 0;
    bf_add_many(v, &item, &len, 1, &answer, error);
    return answer;
}

/* Add argv[first..argc-1] in order (each answer depends on the adds
 * before it) and answer an array: 1/0 per item, ended early by the error
 * of an item that failed. Returns the number of items added. */
static long reply_adds(RedisModuleCtx *ctx, value *v, RedisModuleString **argv, int first, int argc)
{
    const void **keys = NULL;
    size_t *lens = NULL, count = argc > first ? (size_t)(argc - first) : 0;
    int *answers = memory_alloc((count ? count : 1) * sizeof *answers);
    if (!answers || !args_as_keys(argv, first, argc, &keys, &lens)) {
        memory_free(answers);
        memory_reply_refused(ctx, ERR_NO_MEMORY);
        return 0;
    }
    const char *error = NULL;
    size_t answered = bf_add_many(v, keys, lens, count, answers, &error);
    long added = 0;
    RedisModule_ReplyWithArray(ctx, (long)answered);
    for (size_t i = 0; i < answered; i++) {
        if (answers[i] < 0) {
            RedisModule_ReplyWithError(ctx, error);
        } else {
            added += answers[i];
            reply_bool(ctx, answers[i]);
        }
    }
    memory_free(keys);
    memory_free(lens);
    memory_free(answers);
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
    uint8_t *results = memory_calloc(count, 1);
    if (!results)
        return memory_reply_refused(ctx, "ERR Insufficient memory");
    RedisModuleKey *key;
    value *v;
    if (bf_open(ctx, argv[1], REDISMODULE_READ, &key, &v) == KEY_VALUE) {
        const void **keys = NULL;
        size_t *lens = NULL;
        if (!args_as_keys(argv, 2, argc, &keys, &lens)) {
            memory_free(results);
            close_key(key);
            return memory_reply_refused(ctx, "ERR Insufficient memory");
        }
        amq_scalable_bloom *scalable = value_scalable(v);
        if (scalable)
            amq_scalable_bloom_contains_many(results, scalable, keys, lens, count);
        else
            amq_bloom_contains_many(results, value_classic(v), keys, lens, count);
        memory_free(keys);
        memory_free(lens);
    }
    close_key(key);
    RedisModule_ReplyWithArray(ctx, (long)count);
    for (size_t i = 0; i < count; i++)
        reply_bool(ctx, results[i]);
    memory_free(results);
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

/* ---- the image in chunks (chunks.h) --------------------------------------------------- */

static const chunk_scandump_spec bf_scandump = {
    .kind = VALUE_BLOOM,
    .not_numeric = "Second argument must be numeric",
    .negative = "ERR invalid iterator",
    .not_saved = "ERR could not save the filter",
    .end_is_null = false,
    .ends_at_once = NULL,
};

static int cmd_bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return chunk_scandump(ctx, argv, argc, &bf_scandump);
}

/* A key of another type or kind is WRONGTYPE; the image replaces a Bloom
 * filter the key holds. A refused chunk is RedisBloom's error. */
static const chunk_loadchunk_spec bf_loadchunk = {
    .kind = VALUE_BLOOM,
    .exact_cuts = true,
    .command = "BF.LOADCHUNK",
    .not_numeric = "ERR Second argument must be numeric",
    .below_one = NULL,
    .exists = NULL,
    .not_image = ERR_BAD_DATA,
    .no_load = ERR_BAD_OFFSET,
    .too_long = ERR_TOO_BIG,
    .too_short = ERR_BAD_DATA,
    .bad_image = ERR_BAD_DATA,
    .no_memory = "ERR Insufficient memory",
    .first_length = NULL,
};

static int cmd_bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return chunk_loadchunk(ctx, argv, argc, &bf_loadchunk);
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
