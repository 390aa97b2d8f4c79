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
 *   AMQ.LOADCHUNK key iterator bytes
 *       The same, or a value image, in pieces of at most 16 MiB: iterator
 *       1 + the piece's offset (chunks.h). What the AOF rewrite emits.
 *
 * A missing key answers 0 to the queries and "ERR not found" to INFO and
 * DUMP; a key of another type answers WRONGTYPE.
 */
#include "chunks.h"
#include "command.h"
#include "commands.h"
#include "memory.h"

#include <stdio.h>
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
        uint8_t *results = memory_calloc(count, 1);
        int status = AMQ_OK;
        if (!results || !args_as_keys(argv, 2, argc, &keys, &lens))
            status = AMQ_ENOMEM;
        else if (state == KEY_VALUE)
            status = amq_contains_many(results, v->filter, keys, lens, count);
        if (status == AMQ_ENOMEM) {
            reply = memory_reply_refused(ctx, "ERR Insufficient memory");
        } else if (status != AMQ_OK) {
            reply = RedisModule_ReplyWithError(ctx, "ERR the filter refused an item");
        } else {
            reply = RedisModule_ReplyWithArray(ctx, (long)count);
            for (size_t i = 0; i < count; i++)
                reply_bool(ctx, results[i]);
        }
        memory_free(keys);
        memory_free(lens);
        memory_free(results);
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
        int status = amq_save_to_memory(&bytes, &len, v->filter, &diag);
        if (status == AMQ_ENOMEM)
            reply = memory_reply_refused(ctx, "ERR Insufficient memory");
        else if (status != AMQ_OK)
            reply = reply_diag(ctx, "could not save the filter", &diag);
        else
            reply = RedisModule_ReplyWithStringBuffer(ctx, (const char *)bytes, len);
        amq_buffer_free(bytes);
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
        value *v = NULL;
        int status = value_from_bytes(&v, bytes, len, &diag);
        if (status == AMQ_ENOMEM) {
            reply = memory_reply_refused(ctx, "ERR Insufficient memory");
        } else if (status != AMQ_OK) {
            RedisModule_Log(ctx, "verbose", "amq: AMQ.RESTORE refused the image: %s", diag.message);
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

/* The members of the set at name as keys for amq_build; NULL with
 * *no_memory saying whether memory ran out (else name is not a set). The
 * reply owns the bytes: free it after the build. */
static RedisModuleCallReply *set_members(RedisModuleCtx *ctx, RedisModuleString *name,
                                         const void ***keys, size_t **lens, size_t *count,
                                         bool *no_memory)
{
    *no_memory = false;
    RedisModuleCallReply *members = RedisModule_Call(ctx, "SMEMBERS", "s", name);
    if (!members)
        return NULL;
    if (RedisModule_CallReplyType(members) != REDISMODULE_REPLY_ARRAY) {
        RedisModule_FreeCallReply(members);
        return NULL;
    }
    *count = RedisModule_CallReplyLength(members);
    *keys = memory_alloc((*count ? *count : 1) * sizeof **keys);
    *lens = memory_alloc((*count ? *count : 1) * sizeof **lens);
    if (!*keys || !*lens) {
        RedisModule_FreeCallReply(members);
        *no_memory = true;
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
        bool no_memory = false;
        members = set_members(ctx, argv[i + 1], &keys, &lens, &count, &no_memory);
        if (!members) {
            memory_free(keys);
            memory_free(lens);
            RedisModule_CloseKey(key);
            return no_memory ? memory_reply_refused(ctx, "ERR Insufficient memory")
                             : RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        }
    } else if (!args_as_keys(argv, i + 1, argc, &keys, &lens)) {
        RedisModule_CloseKey(key);
        return memory_reply_refused(ctx, "ERR Insufficient memory");
    } else {
        count = (size_t)(argc - i - 1);
    }
    amq_filter *filter = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_build(&filter, spec, keys, lens, count, &diag);
    if (status == AMQ_ENOMEM) {
        reply = memory_reply_refused(ctx, "ERR Insufficient memory");
    } else if (status != AMQ_OK) {
        reply = reply_diag(ctx, "could not build the filter", &diag);
    } else {
        value *v = value_new(filter);
        if (!v) {
            reply = memory_reply_refused(ctx, "ERR Insufficient memory");
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
    memory_free(keys);
    memory_free(lens);
    RedisModule_CloseKey(key);
    return reply;
}

/* Any image or bare filter file, in pieces of any length up to
 * CHUNK_BYTES; the first replaces whatever filter the key held. */
static const chunk_loadchunk_spec amq_loadchunk = {
    .kind = (value_kind)0,
    .exact_cuts = false,
    .command = "AMQ.LOADCHUNK",
    .not_numeric = "ERR the iterator is not an integer",
    .below_one = "ERR the iterator must be at least 1",
    .exists = NULL,
    .not_image = "ERR the first chunk does not begin a filter's image",
    .no_load = "ERR the key has no load that continues at this iterator",
    .too_long = "ERR the chunk is longer than 16 MiB or than what the image has left",
    .too_short = "ERR the chunk is empty",
    .bad_image = "ERR the complete image is not a sound filter",
    .no_memory = "ERR Insufficient memory",
    .first_length = NULL,
};

static int cmd_amq_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return chunk_loadchunk(ctx, argv, argc, &amq_loadchunk);
}

const command_entry amq_commands[] = {
    { "amq.build", cmd_amq_build, "write deny-oom" },
    { "amq.exists", cmd_amq_exists, "readonly fast" },
    { "amq.mexists", cmd_amq_mexists, "readonly fast" },
    { "amq.info", cmd_amq_info, "readonly fast" },
    { "amq.dump", cmd_amq_dump, "readonly" },
    { "amq.restore", cmd_amq_restore, "write deny-oom" },
    { "amq.loadchunk", cmd_amq_loadchunk, "write deny-oom" },
    { NULL, NULL, NULL },
};
