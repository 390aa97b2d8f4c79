/*
 * rm_api.h - the part of the Redis module API that amq's module uses,
 * declared here from the documented signatures (Debian ships no
 * redismodule.h).
 *
 * The API is a set of function pointers the module fills in at load time:
 * the server's context begins with a pointer to its GetApi function, which
 * returns each API function by name ("RedisModule_OpenKey"). rm_api_init
 * does that for every pointer below, then registers the module's name.
 * A pointer the server lacks stays NULL; rm_api_init fails only when a
 * required one is missing, and callers check the optional ones
 * (RedisModule_ReplyWithBool and _ReplyWithMap for RESP3) before use.
 *
 * Constants are the values of Redis 7.0's module API.
 */
#ifndef AMQ_REDIS_RM_API_H
#define AMQ_REDIS_RM_API_H

#include <stddef.h>
#include <stdint.h>

#define REDISMODULE_OK       0
#define REDISMODULE_ERR      1
#define REDISMODULE_APIVER_1 1

#define REDISMODULE_READ  (1 << 0)
#define REDISMODULE_WRITE (1 << 1)

#define REDISMODULE_KEYTYPE_EMPTY  0
#define REDISMODULE_KEYTYPE_SET    4
#define REDISMODULE_KEYTYPE_MODULE 6

#define REDISMODULE_REPLY_STRING  0
#define REDISMODULE_REPLY_ERROR   1
#define REDISMODULE_REPLY_INTEGER 2
#define REDISMODULE_REPLY_ARRAY   3

/* The methods structure version of Redis 7.0. */
#define REDISMODULE_TYPE_METHOD_VERSION      4
#define REDISMODULE_OPTIONS_HANDLE_IO_ERRORS (1 << 0)
#define REDISMODULE_CTX_FLAGS_RESP3          (1 << 22)
#define REDISMODULE_CONFIG_MEMORY            (1 << 7)
#define REDISMODULE_CTX_FLAGS_SLAVE          (1 << 3)
#define REDISMODULE_CTX_FLAGS_MAXMEMORY      (1 << 8)
#define REDISMODULE_CTX_FLAGS_LOADING        (1 << 13)
#define REDISMODULE_CTX_FLAGS_IS_CHILD       (1 << 20)
#define REDISMODULE_POSTPONED_ARRAY_LEN      -1

#define REDISMODULE_ERRORMSG_WRONGTYPE                                                             \
    "WRONGTYPE Operation against a key holding the wrong kind of value"

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleCallReply RedisModuleCallReply;
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
typedef void *(*RedisModuleTypeLoadFunc)(RedisModuleIO *rdb, int encver);
typedef void (*RedisModuleTypeSaveFunc)(RedisModuleIO *rdb, void *value);
typedef void (*RedisModuleTypeRewriteFunc)(RedisModuleIO *aof, RedisModuleString *key, void *value);
typedef size_t (*RedisModuleTypeMemUsageFunc)(const void *value);
typedef void (*RedisModuleTypeDigestFunc)(RedisModuleDigest *digest, void *value);
typedef void (*RedisModuleTypeFreeFunc)(void *value);
typedef long long (*RedisModuleConfigGetNumericFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetNumericFunc)(const char *name, long long value, void *privdata,
                                               RedisModuleString **err);
typedef RedisModuleString *(*RedisModuleConfigGetStringFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetStringFunc)(const char *name, RedisModuleString *value,
                                              void *privdata, RedisModuleString **err);
typedef int (*RedisModuleConfigApplyFunc)(RedisModuleCtx *ctx, void *privdata,
                                          RedisModuleString **err);

/* The data type's callbacks, as the server reads them for method version
 * 4 (fields past `defrag` are later versions' and stay NULL). */
typedef struct RedisModuleTypeMethods {
    uint64_t version;
    RedisModuleTypeLoadFunc rdb_load;
    RedisModuleTypeSaveFunc rdb_save;
    RedisModuleTypeRewriteFunc aof_rewrite;
    RedisModuleTypeMemUsageFunc mem_usage;
    RedisModuleTypeDigestFunc digest;
    RedisModuleTypeFreeFunc free;
    void *aux_load;
    void *aux_save;
    int aux_save_triggers;
    void *free_effort;
    void *unlink;
    void *copy;
    void *defrag;
    void *mem_usage2;
    void *free_effort2;
    void *unlink2;
    void *copy2;
} RedisModuleTypeMethods;

/* Registration and keys. */
extern int (*RedisModule_CreateCommand)(RedisModuleCtx *ctx, const char *name,
                                        RedisModuleCmdFunc cmdfunc, const char *strflags,
                                        int firstkey, int lastkey, int keystep);
extern RedisModuleType *(*RedisModule_CreateDataType)(RedisModuleCtx *ctx, const char *name,
                                                      int encver, void *typemethods);
extern void (*RedisModule_SetModuleOptions)(RedisModuleCtx *ctx, int options);
extern RedisModuleKey *(*RedisModule_OpenKey)(RedisModuleCtx *ctx, RedisModuleString *keyname,
                                              int mode);
extern void (*RedisModule_CloseKey)(RedisModuleKey *key);
extern int (*RedisModule_KeyType)(RedisModuleKey *key);
extern RedisModuleType *(*RedisModule_ModuleTypeGetType)(RedisModuleKey *key);
extern void *(*RedisModule_ModuleTypeGetValue)(RedisModuleKey *key);
extern int (*RedisModule_ModuleTypeSetValue)(RedisModuleKey *key, RedisModuleType *mt, void *value);
extern int (*RedisModule_DeleteKey)(RedisModuleKey *key);

/* Replies. */
extern int (*RedisModule_ReplyWithError)(RedisModuleCtx *ctx, const char *err);
extern int (*RedisModule_ReplyWithSimpleString)(RedisModuleCtx *ctx, const char *msg);
extern int (*RedisModule_ReplyWithLongLong)(RedisModuleCtx *ctx, long long value);
extern int (*RedisModule_ReplyWithDouble)(RedisModuleCtx *ctx, double value);
extern int (*RedisModule_ReplyWithArray)(RedisModuleCtx *ctx, long len);
extern void (*RedisModule_ReplySetArrayLength)(RedisModuleCtx *ctx, long len);
extern int (*RedisModule_ReplyWithStringBuffer)(RedisModuleCtx *ctx, const char *buf, size_t len);
extern int (*RedisModule_ReplyWithNull)(RedisModuleCtx *ctx);
extern int (*RedisModule_WrongArity)(RedisModuleCtx *ctx);
extern int (*RedisModule_GetContextFlags)(RedisModuleCtx *ctx);
extern int (*RedisModule_GetSelectedDb)(RedisModuleCtx *ctx);
/* RESP3 (Redis 7.0): optional, checked before use. */
extern int (*RedisModule_ReplyWithBool)(RedisModuleCtx *ctx, int value);
extern int (*RedisModule_ReplyWithMap)(RedisModuleCtx *ctx, long len);

/* Arguments. */
extern const char *(*RedisModule_StringPtrLen)(const RedisModuleString *str, size_t *len);
extern int (*RedisModule_StringToLongLong)(const RedisModuleString *str, long long *value);
extern int (*RedisModule_StringToDouble)(const RedisModuleString *str, double *value);

/* RDB and AOF. */
extern void (*RedisModule_SaveUnsigned)(RedisModuleIO *io, uint64_t value);
extern uint64_t (*RedisModule_LoadUnsigned)(RedisModuleIO *io);
extern void (*RedisModule_SaveDouble)(RedisModuleIO *io, double value);
extern double (*RedisModule_LoadDouble)(RedisModuleIO *io);
extern void (*RedisModule_SaveStringBuffer)(RedisModuleIO *io, const char *str, size_t len);
extern char *(*RedisModule_LoadStringBuffer)(RedisModuleIO *io, size_t *len);
extern int (*RedisModule_IsIOError)(RedisModuleIO *io);
extern void (*RedisModule_EmitAOF)(RedisModuleIO *io, const char *cmdname, const char *fmt, ...);
extern int (*RedisModule_ReplicateVerbatim)(RedisModuleCtx *ctx);
extern int (*RedisModule_Replicate)(RedisModuleCtx *ctx, const char *cmdname, const char *fmt, ...);

/* Calling other commands (AMQ.BUILD ... FROM setkey). */
extern RedisModuleCallReply *(*RedisModule_Call)(RedisModuleCtx *ctx, const char *cmdname,
                                                 const char *fmt, ...);
extern int (*RedisModule_CallReplyType)(RedisModuleCallReply *reply);
extern size_t (*RedisModule_CallReplyLength)(RedisModuleCallReply *reply);
extern RedisModuleCallReply *(*RedisModule_CallReplyArrayElement)(RedisModuleCallReply *reply,
                                                                  size_t index);
extern const char *(*RedisModule_CallReplyStringPtr)(RedisModuleCallReply *reply, size_t *len);
extern void (*RedisModule_FreeCallReply)(RedisModuleCallReply *reply);

/* Module configs (Redis 7.0): optional, checked before use. */
extern int (*RedisModule_RegisterNumericConfig)(RedisModuleCtx *ctx, const char *name,
                                                long long default_value, unsigned int flags,
                                                long long min, long long max,
                                                RedisModuleConfigGetNumericFunc get,
                                                RedisModuleConfigSetNumericFunc set,
                                                RedisModuleConfigApplyFunc apply, void *privdata);
extern int (*RedisModule_RegisterStringConfig)(RedisModuleCtx *ctx, const char *name,
                                               const char *default_value, unsigned int flags,
                                               RedisModuleConfigGetStringFunc get,
                                               RedisModuleConfigSetStringFunc set,
                                               RedisModuleConfigApplyFunc apply, void *privdata);
extern int (*RedisModule_LoadConfigs)(RedisModuleCtx *ctx);

/* Strings the module owns (ctx NULL: freed by the module, or by the
 * server where it takes them, as a config's error). */
extern RedisModuleString *(*RedisModule_CreateString)(RedisModuleCtx *ctx, const char *ptr,
                                                      size_t len);
extern void (*RedisModule_FreeString)(RedisModuleCtx *ctx, RedisModuleString *str);

/* Memory and logging. TryAlloc (7.0) and TryCalloc, TryRealloc (7.4)
 * are optional: memory.c falls back on what the server has. */
extern void *(*RedisModule_Alloc)(size_t bytes);
extern void *(*RedisModule_TryAlloc)(size_t bytes);
extern void *(*RedisModule_TryCalloc)(size_t count, size_t bytes);
extern void *(*RedisModule_TryRealloc)(void *ptr, size_t bytes);
extern size_t (*RedisModule_MallocSize)(void *ptr);
extern void (*RedisModule_Free)(void *ptr);
extern float (*RedisModule_GetUsedMemoryRatio)(void);
extern RedisModuleServerInfoData *(*RedisModule_GetServerInfo)(RedisModuleCtx *ctx,
                                                               const char *section);
extern unsigned long long (*RedisModule_ServerInfoGetFieldUnsigned)(RedisModuleServerInfoData *data,
                                                                    const char *field,
                                                                    int *out_err);
extern void (*RedisModule_FreeServerInfo)(RedisModuleCtx *ctx, RedisModuleServerInfoData *data);
extern void (*RedisModule_Log)(RedisModuleCtx *ctx, const char *level, const char *fmt, ...);

/*
 * Fill every pointer above from the server's GetApi, check the module's
 * name is free and register it: what the RedisModule_Init of Redis's own
 * header does. Call it first in RedisModule_OnLoad.
 * Returns REDISMODULE_OK, or REDISMODULE_ERR when the name is taken or the
 * server lacks a required function.
 */
int rm_api_init(RedisModuleCtx *ctx, const char *name, int version, int apiver);

/* Whether the calling client speaks RESP3 (booleans and maps). */
int rm_resp3(RedisModuleCtx *ctx);

#endif /* AMQ_REDIS_RM_API_H */
