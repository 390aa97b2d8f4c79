/*
 * cmd_amq.c - the AMQ.* commands: what the module offers beyond
 * RedisBloom's BF.* and CF.*, on any key of its type.
 *
 *   AMQ.BUILD dst TYPE [option=value ...] [REPLACE] (FROM setkey | ITEMS item ...)
 *       A static filter (fuse8, fuse16, gcs, hfb; or any type) built from
 *       the members of a Redis set or from the arguments, with the options
 *       of the library's spec ("p=0.001", "fingerprint-bits=16").
 *   AMQ.EXISTS key item            1 maybe present, 0 certainly absent
 *   AMQ.MEXISTS key item [item ...]  one answer per item (the batch path)
 *   AMQ.INFO key                    the filter's figures, by name
 *   AMQ.DUMP key                    the filter in amq's file format
 *   AMQ.RESTORE key bytes [REPLACE] a filter from amq's file format (what
 *                                   `amq build` writes and AMQ.DUMP returns)
 *
 * A missing key answers 0 to the queries and "ERR not found" to INFO and
 * DUMP; a key of another type answers WRONGTYPE.
 */
#include "command.h"
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An error reply carrying a library diagnostic: "ERR <what>: <message>". */
static int reply_diag(RedisModuleCtx *ctx, const char *what, const amq_diag *diag)
{
    char text[sizeof diag->message + 64];
    snprintf(text, sizeof text, "ERR %s: %s", what, diag->message[0] ? diag->message : "failed");
    return RedisModule_ReplyWithError(ctx, text);
}

static int cmd_amq_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    key_state state = command_open(ctx, argv[1], REDISMODULE_READ, &key, &v);
    int reply;
    if (state == KEY_WRONG_TYPE) {
        reply = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    } else if (state == KEY_EMPTY) {
        reply = reply_bool(ctx, 0);
    } else {
        size_t len = 0;
        const char *item = RedisModule_StringPtrLen(argv[2], &len);
        int answer = amq_contains(v->filter, item, len);
        reply = answer < 0 ? RedisModule_ReplyWithError(ctx, "ERR the filter refused the item")
                           : reply_bool(ctx, answer);
    }
    if (key)
        RedisModule_CloseKey(key);
    return reply;
}

static int cmd_amq_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    key_state state = command_open(ctx, argv[1], REDISMODULE_READ, &key, &v);
    int reply;
    size_t count = (size_t)(argc - 2);
    if (state == KEY_WRONG_TYPE) {
        reply = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    } else {
        const void **keys = NULL;
        size_t *lens = NULL;
        uint8_t *results = calloc(count, 1);
        int status = AMQ_OK;
        if (!results || !args_as_keys(argv, 2, argc, &keys, &lens))
            status = AMQ_ENOMEM;
        else if (state == KEY_VALUE)
            status = amq_contains_many(results, v->filter, keys, lens, count);
        if (status != AMQ_OK) {
            reply = RedisModule_ReplyWithError(ctx, status == AMQ_ENOMEM
                                                        ? "ERR Insufficient memory"
                                                        : "ERR the filter refused an item");
        } else {
            reply = RedisModule_ReplyWithArray(ctx, (long)count);
            for (size_t i = 0; i < count; i++)
                reply_bool(ctx, results[i]);
        }
        free(keys);
        free(lens);
        free(results);
    }
    if (key)
        RedisModule_CloseKey(key);
    return reply;
}

static int cmd_amq_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    key_state state = command_open(ctx, argv[1], REDISMODULE_READ, &key, &v);
    int reply;
    if (state == KEY_WRONG_TYPE) {
        reply = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    } else if (state == KEY_EMPTY) {
        reply = RedisModule_ReplyWithError(ctx, "ERR not found");
    } else {
        amq_info info;
        amq_info_get(&info, v->filter);
        reply = reply_pairs(ctx, 7 + (long)info.detail_count);
        RedisModule_ReplyWithSimpleString(ctx, "family");
        RedisModule_ReplyWithSimpleString(ctx, info.family);
        RedisModule_ReplyWithSimpleString(ctx, "capacity");
        RedisModule_ReplyWithLongLong(ctx, (long long)info.capacity);
        RedisModule_ReplyWithSimpleString(ctx, "keys");
        RedisModule_ReplyWithLongLong(ctx, (long long)info.keys);
        RedisModule_ReplyWithSimpleString(ctx, "memory_bytes");
        RedisModule_ReplyWithLongLong(ctx, (long long)info.memory_bytes);
        RedisModule_ReplyWithSimpleString(ctx, "bits_per_key");
        RedisModule_ReplyWithDouble(ctx, info.bits_per_key);
        RedisModule_ReplyWithSimpleString(ctx, "target_fpr");
        RedisModule_ReplyWithDouble(ctx, info.target_fpr);
        RedisModule_ReplyWithSimpleString(ctx, "expected_fpr");
        RedisModule_ReplyWithDouble(ctx, info.expected_fpr);
        for (size_t i = 0; i < info.detail_count; i++) {
            RedisModule_ReplyWithSimpleString(ctx, info.details[i].name);
            if (info.details[i].text[0])
                RedisModule_ReplyWithSimpleString(ctx, info.details[i].text);
            else
                RedisModule_ReplyWithDouble(ctx, info.details[i].value);
        }
    }
    if (key)
        RedisModule_CloseKey(key);
    return reply;
}

static int cmd_amq_dump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    value *v;
    key_state state = command_open(ctx, argv[1], REDISMODULE_READ, &key, &v);
    int reply;
    if (state == KEY_WRONG_TYPE) {
        reply = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    } else if (state == KEY_EMPTY) {
        reply = RedisModule_ReplyWithError(ctx, "ERR not found");
    } else {
        uint8_t *bytes = NULL;
        size_t len = 0;
        amq_diag diag = { .message = "" };
        if (amq_save_to_memory(&bytes, &len, v->filter, &diag) != AMQ_OK)
            reply = reply_diag(ctx, "could not save the filter", &diag);
        else
            reply = RedisModule_ReplyWithStringBuffer(ctx, (const char *)bytes, len);
        free(bytes);
    }
    if (key)
        RedisModule_CloseKey(key);
    return reply;
}

static int cmd_amq_restore(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3 && argc != 4)
        return RedisModule_WrongArity(ctx);
    bool replace = argc == 4 && arg_is(argv[3], "REPLACE");
    if (argc == 4 && !replace)
        return RedisModule_ReplyWithError(ctx, "ERR syntax error: the only option is REPLACE");
    RedisModuleKey *key;
    value *existing;
    key_state state =
        command_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &existing);
    int reply;
    if (state != KEY_EMPTY && !replace) {
        reply = RedisModule_ReplyWithError(ctx, "BUSYKEY Target key name already exists.");
    } else {
        size_t len = 0;
        const char *bytes = RedisModule_StringPtrLen(argv[2], &len);
        amq_diag diag = { .message = "" };
        value *v = value_from_bytes(bytes, len, &diag);
        if (!v) {
            reply = reply_diag(ctx, "bad data", &diag);
        } else {
            if (state != KEY_EMPTY)
                RedisModule_DeleteKey(key);
            RedisModule_ModuleTypeSetValue(key, value_type, v);
            RedisModule_ReplicateVerbatim(ctx);
            reply = RedisModule_ReplyWithSimpleString(ctx, "OK");
        }
    }
    RedisModule_CloseKey(key);
    return reply;
}

/* The members of the set at name as keys for amq_build; NULL with *status
 * set when name is not a set or memory runs out. The reply owns the
 * bytes: free it after the build. */
static RedisModuleCallReply *set_members(RedisModuleCtx *ctx, RedisModuleString *name,
                                         const void ***keys, size_t **lens, size_t *count)
{
    RedisModuleCallReply *members = RedisModule_Call(ctx, "SMEMBERS", "s", name);
    if (!members)
        return NULL;
    if (RedisModule_CallReplyType(members) != REDISMODULE_REPLY_ARRAY) {
        RedisModule_FreeCallReply(members);
        return NULL;
    }
    *count = RedisModule_CallReplyLength(members);
    *keys = malloc((*count ? *count : 1) * sizeof **keys);
    *lens = malloc((*count ? *count : 1) * sizeof **lens);
    if (!*keys || !*lens) {
        RedisModule_FreeCallReply(members);
        return NULL;
    }
    for (size_t i = 0; i < *count; i++) {
        RedisModuleCallReply *member = RedisModule_CallReplyArrayElement(members, i);
        (*keys)[i] = RedisModule_CallReplyStringPtr(member, &(*lens)[i]);
    }
    return members;
}

static int cmd_amq_build(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    /* dst TYPE [option=value ...] [REPLACE] (FROM setkey | ITEMS item ...) */
    char spec[1024];
    size_t type_len = 0;
    const char *type = RedisModule_StringPtrLen(argv[2], &type_len);
    int used = snprintf(spec, sizeof spec, "%.*s", (int)type_len, type);
    bool replace = false;
    int i = 3;
    for (; i < argc && !arg_is(argv[i], "FROM") && !arg_is(argv[i], "ITEMS"); i++) {
        if (arg_is(argv[i], "REPLACE")) {
            replace = true;
            continue;
        }
        size_t len = 0;
        const char *option = RedisModule_StringPtrLen(argv[i], &len);
        int n = snprintf(spec + used, sizeof spec - (size_t)used, " %.*s", (int)len, option);
        if (n < 0 || (size_t)n >= sizeof spec - (size_t)used)
            return RedisModule_ReplyWithError(ctx, "ERR the options are too long");
        used += n;
    }
    if (i >= argc)
        return RedisModule_ReplyWithError(ctx, "ERR FROM setkey or ITEMS item ... is missing");
    bool from_set = arg_is(argv[i], "FROM");
    if (from_set && i + 2 != argc)
        return RedisModule_ReplyWithError(ctx, "ERR FROM takes one set key");
    if (!from_set && i + 1 >= argc)
        return RedisModule_WrongArity(ctx);

    RedisModuleKey *key;
    value *existing;
    key_state state =
        command_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &existing);
    if (state != KEY_EMPTY && !replace) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    }
    const void **keys = NULL;
    size_t *lens = NULL;
    size_t count = 0;
    RedisModuleCallReply *members = NULL;
    int reply;
    if (from_set) {
        members = set_members(ctx, argv[i + 1], &keys, &lens, &count);
        if (!members) {
            free(keys);
            free(lens);
            RedisModule_CloseKey(key);
            return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        }
    } else if (!args_as_keys(argv, i + 1, argc, &keys, &lens)) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR Insufficient memory");
    } else {
        count = (size_t)(argc - i - 1);
    }
    amq_filter *filter = NULL;
    amq_diag diag = { .message = "" };
    if (amq_build(&filter, spec, keys, lens, count, &diag) != AMQ_OK) {
        reply = reply_diag(ctx, "could not build the filter", &diag);
    } else {
        value *v = value_new(filter);
        if (!v) {
            reply = RedisModule_ReplyWithError(ctx, "ERR Insufficient memory");
        } else {
            if (state != KEY_EMPTY)
                RedisModule_DeleteKey(key);
            RedisModule_ModuleTypeSetValue(key, value_type, v);
            RedisModule_ReplicateVerbatim(ctx);
            reply = RedisModule_ReplyWithLongLong(ctx, (long long)count);
        }
    }
    if (members)
        RedisModule_FreeCallReply(members);
    free(keys);
    free(lens);
    RedisModule_CloseKey(key);
    return reply;
}

const command_entry amq_commands[] = {
    { "amq.build", cmd_amq_build, "write deny-oom" },
    { "amq.exists", cmd_amq_exists, "readonly fast" },
    { "amq.mexists", cmd_amq_mexists, "readonly fast" },
    { "amq.info", cmd_amq_info, "readonly fast" },
    { "amq.dump", cmd_amq_dump, "readonly" },
    { "amq.restore", cmd_amq_restore, "write deny-oom" },
    { NULL, NULL, NULL },
};
