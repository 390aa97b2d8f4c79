/*
 * command.c - the helpers every command shares (command.h).
 */
#include "command.h"

#include "memory.h"

#include <string.h>
#include <strings.h>

key_state command_open_any(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                           RedisModuleKey **key, value **v)
{
    *v = NULL;
    *key = RedisModule_OpenKey(ctx, name, mode);
    if (!*key)
        return KEY_EMPTY;
    int type = RedisModule_KeyType(*key);
    if (type == REDISMODULE_KEYTYPE_EMPTY)
        return KEY_EMPTY;
    if (type != REDISMODULE_KEYTYPE_MODULE || RedisModule_ModuleTypeGetType(*key) != value_type)
        return KEY_WRONG_TYPE;
    *v = RedisModule_ModuleTypeGetValue(*key);
    return KEY_VALUE;
}

key_state command_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
                       value **v)
{
    key_state state = command_open_any(ctx, name, mode, key, v);
    if (state == KEY_VALUE && (*v)->kind == VALUE_LOADING) {
        *v = NULL;
        return KEY_WRONG_TYPE;
    }
    return state;
}

int reply_bool(RedisModuleCtx *ctx, int answer)
{
    if (rm_resp3(ctx))
        return RedisModule_ReplyWithBool(ctx, answer != 0);
    return RedisModule_ReplyWithLongLong(ctx, answer != 0);
}

int reply_pairs(RedisModuleCtx *ctx, long pairs)
{
    if (rm_resp3(ctx))
        return RedisModule_ReplyWithMap(ctx, pairs);
    return RedisModule_ReplyWithArray(ctx, 2 * pairs);
}

bool arg_is(RedisModuleString *arg, const char *word)
{
    size_t len = 0;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    return len == strlen(word) && strncasecmp(text, word, len) == 0;
}

bool arg_u64(RedisModuleString *arg, uint64_t min, uint64_t max, uint64_t *out)
{
    long long number = 0;
    if (RedisModule_StringToLongLong(arg, &number) != REDISMODULE_OK || number < 0)
        return false;
    if ((uint64_t)number < min || (uint64_t)number > max)
        return false;
    *out = (uint64_t)number;
    return true;
}

bool arg_double(RedisModuleString *arg, double *out)
{
    return RedisModule_StringToDouble(arg, out) == REDISMODULE_OK;
}

bool args_as_keys(RedisModuleString **argv, int first, int argc, const void ***keys, size_t **lens)
{
    size_t count = argc > first ? (size_t)(argc - first) : 0;
    *keys = memory_alloc((count ? count : 1) * sizeof **keys);
    *lens = memory_alloc((count ? count : 1) * sizeof **lens);
    if (!*keys || !*lens) {
        memory_free(*keys);
        memory_free(*lens);
        return false;
    }
    for (size_t i = 0; i < count; i++)
        (*keys)[i] = RedisModule_StringPtrLen(argv[first + (int)i], &(*lens)[i]);
    return true;
}
