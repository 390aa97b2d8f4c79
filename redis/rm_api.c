/*
 * rm_api.c - the module API's function pointers and their filling at load
 * time (rm_api.h says how).
 */
#include "rm_api.h"

#include <string.h>

int (*RedisModule_CreateCommand)(RedisModuleCtx *ctx, const char *name, RedisModuleCmdFunc cmdfunc,
                                 const char *strflags, int firstkey, int lastkey, int keystep);
RedisModuleType *(*RedisModule_CreateDataType)(RedisModuleCtx *ctx, const char *name, int encver,
                                               void *typemethods);
void (*RedisModule_SetModuleOptions)(RedisModuleCtx *ctx, int options);
RedisModuleKey *(*RedisModule_OpenKey)(RedisModuleCtx *ctx, RedisModuleString *keyname, int mode);
void (*RedisModule_CloseKey)(RedisModuleKey *key);
int (*RedisModule_KeyType)(RedisModuleKey *key);
RedisModuleType *(*RedisModule_ModuleTypeGetType)(RedisModuleKey *key);
void *(*RedisModule_ModuleTypeGetValue)(RedisModuleKey *key);
int (*RedisModule_ModuleTypeSetValue)(RedisModuleKey *key, RedisModuleType *mt, void *value);
int (*RedisModule_DeleteKey)(RedisModuleKey *key);
int (*RedisModule_ReplyWithError)(RedisModuleCtx *ctx, const char *err);
int (*RedisModule_ReplyWithSimpleString)(RedisModuleCtx *ctx, const char *msg);
int (*RedisModule_ReplyWithLongLong)(RedisModuleCtx *ctx, long long value);
int (*RedisModule_ReplyWithDouble)(RedisModuleCtx *ctx, double value);
int (*RedisModule_ReplyWithArray)(RedisModuleCtx *ctx, long len);
void (*RedisModule_ReplySetArrayLength)(RedisModuleCtx *ctx, long len);
int (*RedisModule_ReplyWithStringBuffer)(RedisModuleCtx *ctx, const char *buf, size_t len);
int (*RedisModule_ReplyWithNull)(RedisModuleCtx *ctx);
int (*RedisModule_WrongArity)(RedisModuleCtx *ctx);
int (*RedisModule_GetContextFlags)(RedisModuleCtx *ctx);
int (*RedisModule_GetSelectedDb)(RedisModuleCtx *ctx);
int (*RedisModule_ReplyWithBool)(RedisModuleCtx *ctx, int value);
int (*RedisModule_ReplyWithMap)(RedisModuleCtx *ctx, long len);
const char *(*RedisModule_StringPtrLen)(const RedisModuleString *str, size_t *len);
int (*RedisModule_StringToLongLong)(const RedisModuleString *str, long long *value);
int (*RedisModule_StringToDouble)(const RedisModuleString *str, double *value);
void (*RedisModule_SaveUnsigned)(RedisModuleIO *io, uint64_t value);
uint64_t (*RedisModule_LoadUnsigned)(RedisModuleIO *io);
void (*RedisModule_SaveDouble)(RedisModuleIO *io, double value);
double (*RedisModule_LoadDouble)(RedisModuleIO *io);
void (*RedisModule_SaveStringBuffer)(RedisModuleIO *io, const char *str, size_t len);
char *(*RedisModule_LoadStringBuffer)(RedisModuleIO *io, size_t *len);
int (*RedisModule_IsIOError)(RedisModuleIO *io);
void (*RedisModule_EmitAOF)(RedisModuleIO *io, const char *cmdname, const char *fmt, ...);
int (*RedisModule_ReplicateVerbatim)(RedisModuleCtx *ctx);
int (*RedisModule_Replicate)(RedisModuleCtx *ctx, const char *cmdname, const char *fmt, ...);
RedisModuleCallReply *(*RedisModule_Call)(RedisModuleCtx *ctx, const char *cmdname, const char *fmt,
                                          ...);
int (*RedisModule_CallReplyType)(RedisModuleCallReply *reply);
size_t (*RedisModule_CallReplyLength)(RedisModuleCallReply *reply);
RedisModuleCallReply *(*RedisModule_CallReplyArrayElement)(RedisModuleCallReply *reply,
                                                           size_t index);
const char *(*RedisModule_CallReplyStringPtr)(RedisModuleCallReply *reply, size_t *len);
void (*RedisModule_FreeCallReply)(RedisModuleCallReply *reply);
int (*RedisModule_RegisterNumericConfig)(RedisModuleCtx *ctx, const char *name,
                                         long long default_value, unsigned int flags, long long min,
                                         long long max, RedisModuleConfigGetNumericFunc get,
                                         RedisModuleConfigSetNumericFunc set,
                                         RedisModuleConfigApplyFunc apply, void *privdata);
int (*RedisModule_RegisterStringConfig)(RedisModuleCtx *ctx, const char *name,
                                        const char *default_value, unsigned int flags,
                                        RedisModuleConfigGetStringFunc get,
                                        RedisModuleConfigSetStringFunc set,
                                        RedisModuleConfigApplyFunc apply, void *privdata);
int (*RedisModule_LoadConfigs)(RedisModuleCtx *ctx);
RedisModuleString *(*RedisModule_CreateString)(RedisModuleCtx *ctx, const char *ptr, size_t len);
void (*RedisModule_FreeString)(RedisModuleCtx *ctx, RedisModuleString *str);
void *(*RedisModule_Alloc)(size_t bytes);
void *(*RedisModule_TryAlloc)(size_t bytes);
void *(*RedisModule_TryCalloc)(size_t count, size_t bytes);
void *(*RedisModule_TryRealloc)(void *ptr, size_t bytes);
size_t (*RedisModule_MallocSize)(void *ptr);
void (*RedisModule_Free)(void *ptr);
float (*RedisModule_GetUsedMemoryRatio)(void);
RedisModuleServerInfoData *(*RedisModule_GetServerInfo)(RedisModuleCtx *ctx, const char *section);
unsigned long long (*RedisModule_ServerInfoGetFieldUnsigned)(RedisModuleServerInfoData *data,
                                                             const char *field, int *out_err);
void (*RedisModule_FreeServerInfo)(RedisModuleCtx *ctx, RedisModuleServerInfoData *data);
void (*RedisModule_Log)(RedisModuleCtx *ctx, const char *level, const char *fmt, ...);

/* Every pointer above by name; an optional one may stay NULL. */
typedef struct api_entry {
    const char *name;
    void **slot;
    int optional;
} api_entry;

static const api_entry entries[] = {
    { "RedisModule_CreateCommand", (void **)&RedisModule_CreateCommand, 0 },
    { "RedisModule_CreateDataType", (void **)&RedisModule_CreateDataType, 0 },
    { "RedisModule_SetModuleOptions", (void **)&RedisModule_SetModuleOptions, 0 },
    { "RedisModule_OpenKey", (void **)&RedisModule_OpenKey, 0 },
    { "RedisModule_CloseKey", (void **)&RedisModule_CloseKey, 0 },
    { "RedisModule_KeyType", (void **)&RedisModule_KeyType, 0 },
    { "RedisModule_ModuleTypeGetType", (void **)&RedisModule_ModuleTypeGetType, 0 },
    { "RedisModule_ModuleTypeGetValue", (void **)&RedisModule_ModuleTypeGetValue, 0 },
    { "RedisModule_ModuleTypeSetValue", (void **)&RedisModule_ModuleTypeSetValue, 0 },
    { "RedisModule_DeleteKey", (void **)&RedisModule_DeleteKey, 0 },
    { "RedisModule_ReplyWithError", (void **)&RedisModule_ReplyWithError, 0 },
    { "RedisModule_ReplyWithSimpleString", (void **)&RedisModule_ReplyWithSimpleString, 0 },
    { "RedisModule_ReplyWithLongLong", (void **)&RedisModule_ReplyWithLongLong, 0 },
    { "RedisModule_ReplyWithDouble", (void **)&RedisModule_ReplyWithDouble, 0 },
    { "RedisModule_ReplyWithArray", (void **)&RedisModule_ReplyWithArray, 0 },
    { "RedisModule_ReplySetArrayLength", (void **)&RedisModule_ReplySetArrayLength, 0 },
    { "RedisModule_ReplyWithStringBuffer", (void **)&RedisModule_ReplyWithStringBuffer, 0 },
    { "RedisModule_ReplyWithNull", (void **)&RedisModule_ReplyWithNull, 0 },
    { "RedisModule_WrongArity", (void **)&RedisModule_WrongArity, 0 },
    { "RedisModule_GetContextFlags", (void **)&RedisModule_GetContextFlags, 0 },
    { "RedisModule_GetSelectedDb", (void **)&RedisModule_GetSelectedDb, 0 },
    { "RedisModule_ReplyWithBool", (void **)&RedisModule_ReplyWithBool, 1 },
    { "RedisModule_ReplyWithMap", (void **)&RedisModule_ReplyWithMap, 1 },
    { "RedisModule_StringPtrLen", (void **)&RedisModule_StringPtrLen, 0 },
    { "RedisModule_StringToLongLong", (void **)&RedisModule_StringToLongLong, 0 },
    { "RedisModule_StringToDouble", (void **)&RedisModule_StringToDouble, 0 },
    { "RedisModule_SaveUnsigned", (void **)&RedisModule_SaveUnsigned, 0 },
    { "RedisModule_LoadUnsigned", (void **)&RedisModule_LoadUnsigned, 0 },
    { "RedisModule_SaveDouble", (void **)&RedisModule_SaveDouble, 0 },
    { "RedisModule_LoadDouble", (void **)&RedisModule_LoadDouble, 0 },
    { "RedisModule_SaveStringBuffer", (void **)&RedisModule_SaveStringBuffer, 0 },
    { "RedisModule_LoadStringBuffer", (void **)&RedisModule_LoadStringBuffer, 0 },
    { "RedisModule_IsIOError", (void **)&RedisModule_IsIOError, 0 },
    { "RedisModule_EmitAOF", (void **)&RedisModule_EmitAOF, 0 },
    { "RedisModule_ReplicateVerbatim", (void **)&RedisModule_ReplicateVerbatim, 0 },
    { "RedisModule_Replicate", (void **)&RedisModule_Replicate, 0 },
    { "RedisModule_Call", (void **)&RedisModule_Call, 0 },
    { "RedisModule_CallReplyType", (void **)&RedisModule_CallReplyType, 0 },
    { "RedisModule_CallReplyLength", (void **)&RedisModule_CallReplyLength, 0 },
    { "RedisModule_CallReplyArrayElement", (void **)&RedisModule_CallReplyArrayElement, 0 },
    { "RedisModule_CallReplyStringPtr", (void **)&RedisModule_CallReplyStringPtr, 0 },
    { "RedisModule_FreeCallReply", (void **)&RedisModule_FreeCallReply, 0 },
    { "RedisModule_RegisterNumericConfig", (void **)&RedisModule_RegisterNumericConfig, 1 },
    { "RedisModule_RegisterStringConfig", (void **)&RedisModule_RegisterStringConfig, 1 },
    { "RedisModule_LoadConfigs", (void **)&RedisModule_LoadConfigs, 1 },
    { "RedisModule_CreateString", (void **)&RedisModule_CreateString, 0 },
    { "RedisModule_FreeString", (void **)&RedisModule_FreeString, 0 },
    { "RedisModule_Alloc", (void **)&RedisModule_Alloc, 0 },
    { "RedisModule_TryAlloc", (void **)&RedisModule_TryAlloc, 1 },
    { "RedisModule_TryCalloc", (void **)&RedisModule_TryCalloc, 1 },
    { "RedisModule_TryRealloc", (void **)&RedisModule_TryRealloc, 1 },
    { "RedisModule_MallocSize", (void **)&RedisModule_MallocSize, 0 },
    { "RedisModule_Free", (void **)&RedisModule_Free, 0 },
    { "RedisModule_GetUsedMemoryRatio", (void **)&RedisModule_GetUsedMemoryRatio, 0 },
    { "RedisModule_GetServerInfo", (void **)&RedisModule_GetServerInfo, 0 },
    { "RedisModule_ServerInfoGetFieldUnsigned", (void **)&RedisModule_ServerInfoGetFieldUnsigned,
      0 },
    { "RedisModule_FreeServerInfo", (void **)&RedisModule_FreeServerInfo, 0 },
    { "RedisModule_Log", (void **)&RedisModule_Log, 0 },
};

int rm_api_init(RedisModuleCtx *ctx, const char *name, int version, int apiver)
{
    /* The server's context starts with its GetApi function. */
    int (*get_api)(const char *, void *) = (int (*)(const char *, void *))((void **)ctx)[0];
    int (*is_name_busy)(const char *) = NULL;
    void (*set_attribs)(RedisModuleCtx *, const char *, int, int) = NULL;
    if (get_api("RedisModule_IsModuleNameBusy", (void *)&is_name_busy) != REDISMODULE_OK ||
        get_api("RedisModule_SetModuleAttribs", (void *)&set_attribs) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        *entries[i].slot = NULL;
        if (get_api(entries[i].name, (void *)entries[i].slot) != REDISMODULE_OK &&
            !entries[i].optional)
            return REDISMODULE_ERR;
    }
    if (is_name_busy(name))
        return REDISMODULE_ERR;
    set_attribs(ctx, name, version, apiver);
    return REDISMODULE_OK;
}

int rm_resp3(RedisModuleCtx *ctx)
{
    return RedisModule_ReplyWithBool && RedisModule_ReplyWithMap &&
           (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0;
}
