/*
 * cmd_cf.c - the CF.* commands: RedisBloom's cuckoo filter surface, on
 * amq's cuckoo filter (a key of the cuckoo kind, value.h).
 *
 *   CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]
 *       OK: a new, empty filter (options in any order).
 *   CF.ADD key item             1: one more copy of the item (duplicates are
 *                               stored again); creates the key with the
 *                               module's defaults.
 *   CF.ADDNX key item           1 added, 0 maybe present already (nothing
 *                               added); creates the key too.
 *   CF.INSERT key [CAPACITY n] [NOCREATE] ITEMS item ...
 *   CF.INSERTNX key [CAPACITY n] [NOCREATE] ITEMS item ...
 *                               one answer per item: 1 added, 0 maybe present
 *                               (NX only), -1 the filter is full. CAPACITY is
 *                               for a key they create; NOCREATE refuses to.
 *   CF.EXISTS key item          1 maybe present, 0 certainly absent
 *   CF.MEXISTS key item ...     one answer per item (one batch query)
 *   CF.DEL key item             1 removed one copy, 0 none was stored; an
 *                               error for a filter marked add-once
 *   CF.COUNT key item           copies stored (an upper bound: other items'
 *                               equal fingerprints count too)
 *   CF.INFO key                 RedisBloom's eight figures, by name
 *   CF.SCANDUMP key iterator    the filter in chunks: [iterator, bytes], until
 *                               [0, nil]
 *   CF.LOADCHUNK key iterator bytes
 *                               rebuilds a filter from SCANDUMP's chunks
 *   CF.DEBUG key                RedisBloom's one-line summary
 *   CF.COMPACT key              OK; does nothing (amq does not compact)
 *
 * Replies follow the client's protocol: RESP3 booleans where RedisBloom
 * gives them (ADD, ADDNX, INSERT, EXISTS, MEXISTS, DEL), integers where it
 * keeps them (INSERTNX, COUNT), a map for INFO. Errors are RedisBloom's
 * strings, many without an "ERR " prefix ("Bad capacity", "Filter is full",
 * "Maximum expansions reached", "Not found"). A missing or wrong-type key
 * answers 0 to the queries, as RedisBloom's do. Every command that changes
 * a key replicates itself verbatim.
 *
 * Where amq's cuckoo filter cannot take RedisBloom's parameters as they are
 * (bucket sizes other than 2, 4 and 8; expansions above 16), they are mapped
 * as cf_shape says; docs/REDIS.md lists every difference and its reason.
 */
#include "chunks.h"
#include "command.h"
#include "commands.h"
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RedisBloom's limits and messages (docs/REDIS.md, "CF.*"). */
#define CF_MAX_CAPACITY       1073741824LL
#define CF_MAX_BUCKET_SIZE    255
#define CF_MAX_ITERATIONS     65535
#define CF_MAX_EXPANSION      32768
#define CF_FINGERPRINT_BITS   8 /* RedisBloom's: an FPR of 2b/255 */
#define ERR_EXISTS            "ERR item exists"
#define ERR_NOT_FOUND         "ERR not found"
#define ERR_NO_MEMORY         "ERR Insufficient memory"
#define ERR_FULL              "Filter is full"
#define ERR_MAX_EXPANSIONS    "Maximum expansions reached"
#define ERR_BAD_CAPACITY      "Bad capacity"
#define ERR_UNKNOWN_ARGUMENT  "Unknown argument received"
#define ERR_INVALID_POSITION  "Invalid position"
#define ERR_CANNOT_CREATE     "Couldn't create filter!"
#define ERR_CANNOT_LOAD_CHUNK "Couldn't load chunk!"
#define ERR_ADD_ONCE                                                                               \
    "ERR the filter was filled add-once (amq --add-once): it holds one copy of an item however "   \
    "often it was added, so a deletion could make an added item answer 0"

/* ---- keys ------------------------------------------------------------------------ */

/* command_open for the CF commands: a value of another kind (a Bloom
 * filter, a static filter) is the wrong type for them. */
static key_state cf_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                         RedisModuleKey **key, value **v)
{
    key_state state = command_open(ctx, name, mode, key, v);
    if (state == KEY_VALUE && (*v)->kind != VALUE_CUCKOO) {
        *v = NULL;
        return KEY_WRONG_TYPE;
    }
    return state;
}

static void close_key(RedisModuleKey *key)
{
    if (key)
        RedisModule_CloseKey(key);
}

/* Keep the value's "items inserted" figure (saved in its image) in step
 * with the filter after a change. */
static void sync_items(value *v)
{
    v->items = amq_cuckoo_keys(value_cuckoo(v));
}

/* ---- making a filter --------------------------------------------------------------- */

/* A new filter's parameters as RedisBloom takes them (validated). */
typedef struct cf_params {
    uint64_t capacity;
    uint32_t bucket_size;    /* 1..255 */
    uint32_t max_iterations; /* 1..65535 */
    uint32_t expansion;      /* 0..32768, rounded up to a power of two */
} cf_params;

/* The module's defaults (the settings cf-*, config.c). */
static cf_params cf_defaults(void)
{
    cf_params p = {
        .capacity = config.cf_initial_size,
        .bucket_size = (uint32_t)config.cf_bucket_size,
        .max_iterations = (uint32_t)config.cf_max_iterations,
        .expansion = (uint32_t)config.cf_expansion,
    };
    return p;
}

/* RedisBloom rounds an expansion up to a power of two (0 stays 0). */
static uint32_t round_expansion(uint32_t expansion)
{
    uint32_t rounded = 1;
    if (expansion == 0)
        return 0;
    while (rounded < expansion)
        rounded <<= 1;
    return rounded;
}

/*
 * amq's parameters for RedisBloom's. amq's buckets hold 2, 4 or 8 slots: a
 * bucket size b is rounded up to one of them (8 at most), and the
 * fingerprint widened from RedisBloom's 8 bits until the bound of the FPR,
 * 2b'/(2^f - 1), is no worse than RedisBloom's 2b/255 (b = 1, 3, 5, 6, 7
 * take 9 bits). amq grows by 1, 2, 4, 8 or 16: a larger expansion grows by
 * 16.
 */
static void cf_shape(amq_cuckoo_params *out, const cf_params *p)
{
    uint32_t slots = p->bucket_size <= 2 ? 2 : p->bucket_size <= 4 ? 4 : 8;
    uint32_t bits = CF_FINGERPRINT_BITS;
    while ((uint64_t)slots * 255 > (uint64_t)p->bucket_size * (((uint64_t)1 << bits) - 1))
        bits++;
    uint32_t growth = round_expansion(p->expansion);
    amq_cuckoo_params_init(out);
    out->capacity = p->capacity;
    out->bucket_size = slots;
    out->fingerprint_bits = bits;
    out->max_kicks = p->max_iterations;
    out->growth = growth > AMQ_CUCKOO_MAX_GROWTH ? AMQ_CUCKOO_MAX_GROWTH : growth;
}

/* A new value for p into *out: AMQ_OK, or the status of the failure. Its
 * figures are RedisBloom's as reserved, which CF.INFO reports. */
static int cf_create(value **out, const cf_params *p)
{
    amq_cuckoo_params params;
    cf_shape(&params, p);
    amq_cuckoo *cuckoo = NULL;
    int status = amq_cuckoo_new(&cuckoo, &params, NULL);
    if (status != AMQ_OK)
        return status;
    amq_filter *filter = NULL;
    status = amq_cuckoo_wrap(&filter, cuckoo, NULL);
    if (status != AMQ_OK) {
        amq_cuckoo_free(cuckoo);
        return status;
    }
    value *v = value_new(filter);
    if (!v)
        return AMQ_ENOMEM;
    v->capacity = p->capacity;
    v->bucket_size = p->bucket_size;
    v->max_iterations = p->max_iterations;
    v->expansion = round_expansion(p->expansion);
    *out = v;
    return AMQ_OK;
}

/* Create the filter into an empty key opened for writing; the error reply
 * when that fails, as RedisBloom words it. */
static int create_into(RedisModuleCtx *ctx, RedisModuleKey *key, const cf_params *p, value **v)
{
    int status = cf_create(v, p);
    if (status != AMQ_OK)
        return RedisModule_ReplyWithError(
            ctx, status == AMQ_ENOMEM ? memory_refusal("ERR Insufficient memory to create filter")
                                      : "ERR Could not create filter");
    RedisModule_ModuleTypeSetValue(key, value_type, *v);
    return REDISMODULE_OK;
}

/* ---- adding ------------------------------------------------------------------------ */

typedef enum insert_result {
    INSERT_ADDED,
    INSERT_EXISTS,         /* add_unique: maybe present already */
    INSERT_FULL,           /* a filter that does not grow is full */
    INSERT_MAX_EXPANSIONS, /* a growing filter has all the tables it may have */
    INSERT_NO_MEMORY,
} insert_result;

/* The most tables a filter may chain: cf-max-expansions, within amq's. */
static size_t table_limit(void)
{
    return config.cf_max_expansions < AMQ_CUCKOO_MAX_TABLES ? (size_t)config.cf_max_expansions
                                                            : AMQ_CUCKOO_MAX_TABLES;
}

/* Whether the next add would need a table beyond cf-max-expansions: the
 * filter grows, its newest table is full and it has as many tables as it
 * may. amq checks only its own limit of 32, so the module checks the
 * configured one before adding. */
static bool at_table_limit(const amq_cuckoo *cuckoo)
{
    return amq_cuckoo_growth(cuckoo) > 0 && amq_cuckoo_full(cuckoo) &&
           amq_cuckoo_tables(cuckoo) >= table_limit();
}

/* What an add's status means to the commands; a refusal as full by why
 * the filter is full (amq_cuckoo_why_full): its walk failed in a filter
 * that does not grow, or it has grown as far as it may. */
static insert_result insert_result_of(const amq_cuckoo *cuckoo, int status, bool unique)
{
    if (unique && status == 0)
        return INSERT_EXISTS;
    if (status >= 0)
        return INSERT_ADDED;
    if (status == AMQ_EFULL)
        return (amq_cuckoo_why_full(cuckoo) & 0xff) == AMQ_CUCKOO_FULL_NO_FREE_SLOT
                   ? INSERT_FULL
                   : INSERT_MAX_EXPANSIONS;
    return INSERT_NO_MEMORY;
}

/* Add count items in order (unique: each unless maybe present) through the
 * library's batch adds, with the configured table limit checked before the
 * filter would grow past it: an add chains at most one table, so a batch
 * of no more items than the tables still allowed cannot pass the limit. */
static void cf_insert_many(value *v, const void *const *keys, const size_t *lens, size_t count,
                           bool unique, insert_result *results)
{
    const amq_cuckoo *cuckoo = value_cuckoo(v);
    int statuses[64];
    size_t done = 0;
    while (done < count) {
        if (at_table_limit(cuckoo)) {
            results[done++] = INSERT_MAX_EXPANSIONS;
            continue;
        }
        size_t batch = count - done < 64 ? count - done : 64;
        size_t tables = amq_cuckoo_tables(cuckoo), limit = table_limit();
        if (amq_cuckoo_growth(cuckoo) > 0 && batch > (tables < limit ? limit - tables : 0))
            batch = tables + 1 < limit ? limit - tables : 1;
        size_t handled = 0;
        int status =
            unique ? amq_add_unique_many(statuses, &handled, v->filter, keys + done, lens + done,
                                         batch)
                   : amq_add_many(statuses, &handled, v->filter, keys + done, lens + done, batch);
        /* The key that failed is answered too, and the next goes on. */
        if (status < 0)
            handled++;
        for (size_t i = 0; i < handled; i++)
            results[done + i] = insert_result_of(cuckoo, statuses[i], unique);
        done += handled;
    }
}

/* Add one item (unique: unless maybe present). */
static insert_result cf_insert(value *v, const char *item, size_t len, bool unique)
{
    const void *key = item;
    insert_result result = INSERT_NO_MEMORY;
    cf_insert_many(v, &key, &len, 1, unique, &result);
    return result;
}

/* The reply of CF.ADD and CF.ADDNX for one insert. */
static int reply_insert(RedisModuleCtx *ctx, insert_result result)
{
    switch (result) {
    case INSERT_ADDED:
        return reply_bool(ctx, 1);
    case INSERT_EXISTS:
        return reply_bool(ctx, 0);
    case INSERT_FULL:
        return RedisModule_ReplyWithError(ctx, ERR_FULL);
    case INSERT_MAX_EXPANSIONS:
        return RedisModule_ReplyWithError(ctx, ERR_MAX_EXPANSIONS);
    default:
        return memory_reply_refused(ctx, ERR_NO_MEMORY);
    }
}

/* ---- CF.RESERVE ----------------------------------------------------------------------- */

/* An option's value as RedisBloom checks it: "Couldn't parse NAME", or
 * "NAME: value must be in the range [min, max]". NULL when it is fine. */
static const char *option_u32(RedisModuleString *arg, const char *name, long long min,
                              long long max, uint32_t *out, char *error, size_t error_size)
{
    long long number = 0;
    if (RedisModule_StringToLongLong(arg, &number) != REDISMODULE_OK) {
        snprintf(error, error_size, "Couldn't parse %s", name);
        return error;
    }
    if (number < min || number > max) {
        snprintf(error, error_size, "%s: value must be in the range [%lld, %lld]", name, min, max);
        return error;
    }
    *out = (uint32_t)number;
    return NULL;
}

/* CF.RESERVE's options (argv[3..], in pairs, any order) into p; NULL, or
 * the error. RedisBloom checks MAXITERATIONS, BUCKETSIZE, EXPANSION in that
 * order, whatever their order in the command. */
static const char *reserve_options(RedisModuleString **argv, int argc, cf_params *p, char *error,
                                   size_t error_size)
{
    RedisModuleString *bucket_size = NULL, *max_iterations = NULL, *expansion = NULL;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (arg_is(argv[i], "BUCKETSIZE"))
            bucket_size = argv[i + 1];
        else if (arg_is(argv[i], "MAXITERATIONS"))
            max_iterations = argv[i + 1];
        else if (arg_is(argv[i], "EXPANSION"))
            expansion = argv[i + 1];
        else
            return ERR_UNKNOWN_ARGUMENT;
    }
    const char *wrong = NULL;
    if (max_iterations)
        wrong = option_u32(max_iterations, "MAXITERATIONS", 1, CF_MAX_ITERATIONS,
                           &p->max_iterations, error, error_size);
    if (!wrong && bucket_size)
        wrong = option_u32(bucket_size, "BUCKETSIZE", 1, CF_MAX_BUCKET_SIZE, &p->bucket_size, error,
                           error_size);
    if (!wrong && expansion)
        wrong = option_u32(expansion, "EXPANSION", 0, CF_MAX_EXPANSION, &p->expansion, error,
                           error_size);
    return wrong;
}

static int cmd_cf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3 || argc % 2 == 0)
        return RedisModule_WrongArity(ctx);
    cf_params p = cf_defaults();
    long long capacity = 0;
    if (RedisModule_StringToLongLong(argv[2], &capacity) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, ERR_BAD_CAPACITY);
    char error[96];
    const char *wrong = reserve_options(argv, argc, &p, error, sizeof error);
    if (wrong)
        return RedisModule_ReplyWithError(ctx, wrong);
    if (capacity < 2 * (long long)p.bucket_size || capacity > CF_MAX_CAPACITY)
        return RedisModule_ReplyWithError(
            ctx, "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]");
    p.capacity = (uint64_t)capacity;
    RedisModuleKey *key;
    value *v;
    key_state state = cf_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &v);
    int reply;
    if (state != KEY_EMPTY) {
        reply = RedisModule_ReplyWithError(ctx, ERR_EXISTS);
    } else if (create_into(ctx, key, &p, &v) == REDISMODULE_OK) {
        RedisModule_ReplicateVerbatim(ctx);
        reply = RedisModule_ReplyWithSimpleString(ctx, "OK");
    } else {
        reply = REDISMODULE_OK; /* create_into replied */
    }
    close_key(key);
    return reply;
}

/* ---- CF.ADD, CF.ADDNX --------------------------------------------------------------- */

static int add_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool unique)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    key_state state = cf_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &v);
    if (state == KEY_WRONG_TYPE) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    cf_params defaults = cf_defaults();
    if (state == KEY_EMPTY && create_into(ctx, key, &defaults, &v) != REDISMODULE_OK) {
        close_key(key);
        return REDISMODULE_OK;
    }
    size_t len = 0;
    const char *item = RedisModule_StringPtrLen(argv[2], &len);
    insert_result result = cf_insert(v, item, len, unique);
    sync_items(v);
    /* A created key is a change even when the item was refused. */
    if (result == INSERT_ADDED || state == KEY_EMPTY)
        RedisModule_ReplicateVerbatim(ctx);
    close_key(key);
    return reply_insert(ctx, result);
}

static int cmd_cf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, false);
}

static int cmd_cf_addnx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, true);
}

/* ---- CF.INSERT, CF.INSERTNX ------------------------------------------------------------ */

/* CF.INSERT's options, argv[2..] up to ITEMS: into *p and *nocreate, and
 * *first the index of the first item. 0, or -1 for a wrong arity, or the
 * index of the error (written to *error). */
static int insert_options(RedisModuleString **argv, int argc, cf_params *p, bool *nocreate,
                          int *first, const char **error)
{
    for (int i = 2; i < argc; i++) {
        if (arg_is(argv[i], "ITEMS")) {
            *first = i + 1;
            return *first < argc ? 0 : -1;
        }
        if (arg_is(argv[i], "NOCREATE")) {
            *nocreate = true;
        } else if (arg_is(argv[i], "CAPACITY")) {
            long long capacity = 0;
            if (++i >= argc)
                return -1;
            if (RedisModule_StringToLongLong(argv[i], &capacity) != REDISMODULE_OK) {
                *error = ERR_BAD_CAPACITY;
                return i;
            }
            if (capacity < 2 * (long long)config.cf_bucket_size || capacity > CF_MAX_CAPACITY) {
                *error = "Capacity must be in the range [cf-bucket-size * 2, 1073741824]";
                return i;
            }
            p->capacity = (uint64_t)capacity;
        } else {
            *error = ERR_UNKNOWN_ARGUMENT;
            return i;
        }
    }
    return -1; /* no ITEMS */
}

/* One INSERT answer: RESP2 integers 1 / 0 / -1; under RESP3 CF.INSERT
 * gives booleans (false when full), CF.INSERTNX keeps the integers. */
static void reply_insert_element(RedisModuleCtx *ctx, insert_result result, bool unique)
{
    if (result == INSERT_NO_MEMORY) {
        memory_reply_refused(ctx, ERR_NO_MEMORY);
        return;
    }
    long long answer = result == INSERT_ADDED ? 1 : result == INSERT_EXISTS ? 0 : -1;
    if (!unique && rm_resp3(ctx))
        RedisModule_ReplyWithBool(ctx, answer == 1);
    else
        RedisModule_ReplyWithLongLong(ctx, answer);
}

static int insert_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool unique)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    cf_params p = cf_defaults();
    bool nocreate = false;
    int first = 0;
    const char *error = NULL;
    int wrong = insert_options(argv, argc, &p, &nocreate, &first, &error);
    if (wrong < 0)
        return RedisModule_WrongArity(ctx);
    if (wrong > 0)
        return RedisModule_ReplyWithError(ctx, error);
    RedisModuleKey *key;
    value *v;
    key_state state = cf_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &v);
    if (state == KEY_WRONG_TYPE || (state == KEY_EMPTY && nocreate)) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, state == KEY_EMPTY ? ERR_NOT_FOUND
                                                                  : REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    if (state == KEY_EMPTY && create_into(ctx, key, &p, &v) != REDISMODULE_OK) {
        close_key(key);
        return REDISMODULE_OK;
    }
    if (at_table_limit(value_cuckoo(v))) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, ERR_MAX_EXPANSIONS);
    }
    bool changed = state == KEY_EMPTY;
    const void **keys = NULL;
    size_t *lens = NULL, count = (size_t)(argc - first);
    insert_result *results = memory_alloc((count ? count : 1) * sizeof *results);
    if (!results || !args_as_keys(argv, first, argc, &keys, &lens)) {
        memory_free(results);
        close_key(key);
        return memory_reply_refused(ctx, ERR_NO_MEMORY);
    }
    cf_insert_many(v, keys, lens, count, unique, results);
    RedisModule_ReplyWithArray(ctx, (long)count);
    for (size_t i = 0; i < count; i++) {
        changed |= results[i] == INSERT_ADDED;
        reply_insert_element(ctx, results[i], unique);
    }
    memory_free(keys);
    memory_free(lens);
    memory_free(results);
    sync_items(v);
    if (changed)
        RedisModule_ReplicateVerbatim(ctx);
    close_key(key);
    return REDISMODULE_OK;
}

static int cmd_cf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return insert_command(ctx, argv, argc, false);
}

static int cmd_cf_insertnx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return insert_command(ctx, argv, argc, true);
}

/* ---- queries ------------------------------------------------------------------------- */

/* CF.EXISTS and CF.COUNT: a missing or wrong-type key answers 0. */
static int query_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool count)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    key_state state = cf_open(ctx, argv[1], REDISMODULE_READ, &key, &v);
    uint64_t answer = 0;
    if (state == KEY_VALUE) {
        size_t len = 0;
        const char *item = RedisModule_StringPtrLen(argv[2], &len);
        answer = count ? amq_cuckoo_count(value_cuckoo(v), item, len)
                       : amq_cuckoo_contains(value_cuckoo(v), item, len);
    }
    close_key(key);
    if (count)
        return RedisModule_ReplyWithLongLong(ctx, (long long)answer);
    return reply_bool(ctx, answer != 0);
}

static int cmd_cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return query_command(ctx, argv, argc, false);
}

static int cmd_cf_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return query_command(ctx, argv, argc, true);
}

static int cmd_cf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    size_t count = (size_t)(argc - 2);
    uint8_t *results = memory_calloc(count, 1);
    const void **keys = NULL;
    size_t *lens = NULL;
    if (!results || !args_as_keys(argv, 2, argc, &keys, &lens)) {
        memory_free(results);
        return memory_reply_refused(ctx, ERR_NO_MEMORY);
    }
    RedisModuleKey *key;
    value *v;
    int status = AMQ_OK;
    if (cf_open(ctx, argv[1], REDISMODULE_READ, &key, &v) == KEY_VALUE)
        status = amq_contains_many(results, v->filter, (const void *const *)keys, lens, count);
    close_key(key);
    if (status != AMQ_OK) {
        RedisModule_ReplyWithError(ctx, "ERR the filter could not answer the batch");
    } else {
        RedisModule_ReplyWithArray(ctx, (long)count);
        for (size_t i = 0; i < count; i++)
            reply_bool(ctx, results[i]);
    }
    memory_free(keys);
    memory_free(lens);
    memory_free(results);
    return REDISMODULE_OK;
}

/* ---- CF.DEL ---------------------------------------------------------------------------- */

static int cmd_cf_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    if (cf_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &v) != KEY_VALUE) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, "Not found");
    }
    /* A filter restored from an add-once file (AMQ.RESTORE of `amq build
     * --add-once`) holds one copy of an item however often it was given:
     * a deletion could take an item that was added. */
    if (amq_add_once_marked(v->filter) == 1) {
        close_key(key);
        return RedisModule_ReplyWithError(ctx, ERR_ADD_ONCE);
    }
    size_t len = 0;
    const char *item = RedisModule_StringPtrLen(argv[2], &len);
    bool removed = amq_cuckoo_remove(value_cuckoo(v), item, len) == AMQ_OK;
    if (removed) {
        v->deletes++;
        sync_items(v);
        RedisModule_ReplicateVerbatim(ctx);
    }
    close_key(key);
    return reply_bool(ctx, removed);
}

/* ---- CF.INFO, CF.DEBUG, CF.COMPACT --------------------------------------------------- */

/* Open a key the figures of a filter are read from: the error reply is
 * "ERR not found" or WRONGTYPE (missing_error for a missing key). */
static bool open_for_figures(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey **key,
                             value **v, const char *missing_error)
{
    key_state state = cf_open(ctx, name, REDISMODULE_READ, key, v);
    if (state == KEY_VALUE)
        return true;
    close_key(*key);
    RedisModule_ReplyWithError(ctx,
                               state == KEY_EMPTY ? missing_error : REDISMODULE_ERRORMSG_WRONGTYPE);
    return false;
}

static void reply_figure(RedisModuleCtx *ctx, const char *name, uint64_t figure)
{
    RedisModule_ReplyWithSimpleString(ctx, name);
    RedisModule_ReplyWithLongLong(ctx, (long long)figure);
}

static int cmd_cf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    if (!open_for_figures(ctx, argv[1], &key, &v, ERR_NOT_FOUND))
        return REDISMODULE_OK;
    const amq_cuckoo *cuckoo = value_cuckoo(v);
    reply_pairs(ctx, 8);
    reply_figure(ctx, "Size", amq_cuckoo_memory_bytes(cuckoo));
    reply_figure(ctx, "Number of buckets", amq_cuckoo_table_buckets(cuckoo, 0));
    reply_figure(ctx, "Number of filters", amq_cuckoo_tables(cuckoo));
    reply_figure(ctx, "Number of items inserted", amq_cuckoo_keys(cuckoo));
    reply_figure(ctx, "Number of items deleted", v->deletes);
    reply_figure(ctx, "Bucket size", v->bucket_size);
    reply_figure(ctx, "Expansion rate", v->expansion);
    reply_figure(ctx, "Max iterations", v->max_iterations);
    close_key(key);
    return REDISMODULE_OK;
}

static int cmd_cf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    if (!open_for_figures(ctx, argv[1], &key, &v, ERR_NOT_FOUND))
        return REDISMODULE_OK;
    const amq_cuckoo *cuckoo = value_cuckoo(v);
    char line[256];
    int len = snprintf(line, sizeof line,
                       "bktsize:%u buckets:%llu items:%llu deletes:%llu filters:%zu "
                       "max_iterations:%u expansion:%u",
                       v->bucket_size, (unsigned long long)amq_cuckoo_table_buckets(cuckoo, 0),
                       (unsigned long long)amq_cuckoo_keys(cuckoo), (unsigned long long)v->deletes,
                       amq_cuckoo_tables(cuckoo), v->max_iterations, v->expansion);
    close_key(key);
    return RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)len);
}

/* RedisBloom's CF.COMPACT moves items into older sub-filters; amq's chained
 * tables cannot hand items back (docs/REDIS.md), so this checks the key
 * and answers OK. */
static int cmd_cf_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    if (!open_for_figures(ctx, argv[1], &key, &v, "Cuckoo filter was not found"))
        return REDISMODULE_OK;
    close_key(key);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* ---- CF.SCANDUMP, CF.LOADCHUNK (chunks.h) ------------------------------------------------ */

/* Whether a filter holds no items: its SCANDUMP answers [0, nil] at once,
 * as RedisBloom's does. */
static bool cf_is_empty(value *v)
{
    return amq_cuckoo_keys(value_cuckoo(v)) == 0;
}

static const chunk_scandump_spec cf_scandump = {
    .kind = VALUE_CUCKOO,
    .not_numeric = ERR_INVALID_POSITION,
    .negative = ERR_INVALID_POSITION,
    .not_saved = ERR_NO_MEMORY,
    .end_is_null = true,
    .ends_at_once = cf_is_empty,
};

static int cmd_cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return chunk_scandump(ctx, argv, argc, &cf_scandump);
}

/*
 * Iterator 1 starts a load of a key that must not hold a filter ("ERR item
 * exists"; a load it holds starts again); a first chunk that
 * does not begin an image, or is not as long as the image's first chunk,
 * is "Couldn't create filter!"; a chunk that does not continue the load
 * where it stands or is not as long as the chunk there, or an image that
 * fails its checks when complete, is "Couldn't load chunk!".
 */
static const chunk_loadchunk_spec cf_loadchunk = {
    .kind = VALUE_CUCKOO,
    .exact_cuts = true,
    .command = "CF.LOADCHUNK",
    .not_numeric = ERR_INVALID_POSITION,
    .below_one = ERR_INVALID_POSITION,
    .exists = ERR_EXISTS,
    .not_image = ERR_CANNOT_CREATE,
    .no_load = ERR_CANNOT_LOAD_CHUNK,
    .too_long = ERR_CANNOT_LOAD_CHUNK,
    .too_short = ERR_CANNOT_LOAD_CHUNK,
    .bad_image = ERR_CANNOT_LOAD_CHUNK,
    .no_memory = ERR_NO_MEMORY,
    .first_length = ERR_CANNOT_CREATE,
};

static int cmd_cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return chunk_loadchunk(ctx, argv, argc, &cf_loadchunk);
}

/* ---- the table ---------------------------------------------------------------------- */

const command_entry cf_commands[] = {
    { "cf.reserve", cmd_cf_reserve, "write deny-oom" },
    { "cf.add", cmd_cf_add, "write deny-oom" },
    { "cf.addnx", cmd_cf_addnx, "write deny-oom" },
    { "cf.insert", cmd_cf_insert, "write deny-oom" },
    { "cf.insertnx", cmd_cf_insertnx, "write deny-oom" },
    { "cf.exists", cmd_cf_exists, "readonly fast" },
    { "cf.mexists", cmd_cf_mexists, "readonly fast" },
    { "cf.del", cmd_cf_del, "write fast" },
    { "cf.count", cmd_cf_count, "readonly fast" },
    { "cf.info", cmd_cf_info, "readonly fast" },
    { "cf.debug", cmd_cf_debug, "readonly fast" },
    { "cf.compact", cmd_cf_compact, "readonly" },
    { "cf.scandump", cmd_cf_scandump, "readonly" },
    { "cf.loadchunk", cmd_cf_loadchunk, "write deny-oom" },
    { NULL, NULL, NULL },
};
