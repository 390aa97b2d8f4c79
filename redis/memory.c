/*
 * memory.c - the module's allocator and the limits on a client's command
 * (memory.h).
 */
#include "memory.h"

#include "amq/amq.h"
#include "config.h"

#include <stdio.h>
#include <string.h>

/* Why the last refused allocation was refused. */
typedef enum refusal {
    REFUSED_NONE = 0, /* not refused: the allocator had no memory */
    REFUSED_MAXMEMORY,
    REFUSED_SETTING,
} refusal;

static struct {
    refusal reason;
    uint64_t bytes, limit;
    const char *setting;
} last_refusal;

static int suspended;

#ifdef AMQ_REDIS_FAULTS
static size_t fail_from = SIZE_MAX;

void memory_fail_from(size_t bytes)
{
    fail_from = bytes;
}
#define FAULT(bytes) ((bytes) >= fail_from)
#else
#define FAULT(bytes) false
#endif

void memory_suspend_limits(void)
{
    suspended++;
}

void memory_resume_limits(void)
{
    if (suspended > 0)
        suspended--;
}

bool memory_limits_apply(void)
{
    if (suspended)
        return false;
    int flags = RedisModule_GetContextFlags(NULL);
    return !(flags & (REDISMODULE_CTX_FLAGS_LOADING | REDISMODULE_CTX_FLAGS_SLAVE |
                      REDISMODULE_CTX_FLAGS_IS_CHILD));
}

/* Whether bytes more would take the server past maxmemory, by the
 * server's own measure (the used memory it evicts by). */
static bool past_maxmemory(uint64_t bytes)
{
    if (!(RedisModule_GetContextFlags(NULL) & REDISMODULE_CTX_FLAGS_MAXMEMORY))
        return false;
    float ratio = RedisModule_GetUsedMemoryRatio();
    RedisModuleServerInfoData *info = RedisModule_GetServerInfo(NULL, "memory");
    if (!info)
        return false;
    int missing = 0;
    unsigned long long maxmemory =
        RedisModule_ServerInfoGetFieldUnsigned(info, "maxmemory", &missing);
    RedisModule_FreeServerInfo(NULL, info);
    if (missing || maxmemory == 0)
        return false;
    double used = (double)ratio * (double)maxmemory;
    return used + (double)bytes > (double)maxmemory;
}

static bool refuse(refusal reason, uint64_t bytes, uint64_t limit, const char *setting)
{
    last_refusal.reason = reason;
    last_refusal.bytes = bytes;
    last_refusal.limit = limit;
    last_refusal.setting = setting;
    return false;
}

/* Whether a block of bytes, of which growth are new to the server, may be
 * taken now. */
static bool admit(uint64_t bytes, uint64_t growth, uint64_t limit, const char *limit_name)
{
    if (!memory_limits_apply())
        return true;
    if (bytes > limit)
        return refuse(REFUSED_SETTING, bytes, limit, limit_name);
    if (bytes > config.filter_max_bytes)
        return refuse(REFUSED_SETTING, bytes, config.filter_max_bytes, "filter-max-bytes");
    if (past_maxmemory(growth))
        return refuse(REFUSED_MAXMEMORY, bytes, 0, NULL);
    return true;
}

bool memory_admit(uint64_t bytes, uint64_t limit, const char *limit_name)
{
    return admit(bytes, bytes, limit, limit_name);
}

/* Whether an allocation of a block of bytes, growth of them new, may go
 * ahead. */
static bool allowed(size_t bytes, size_t growth)
{
    if (FAULT(bytes))
        return false;
    return growth < MEMORY_CHECKED_BYTES || admit(bytes, growth, UINT64_MAX, NULL);
}

void *memory_alloc(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    if (!allowed(bytes, bytes))
        return NULL;
    return RedisModule_TryAlloc ? RedisModule_TryAlloc(bytes) : RedisModule_Alloc(bytes);
}

void *memory_calloc(size_t count, size_t bytes)
{
    if (bytes && count > SIZE_MAX / bytes)
        return NULL;
    size_t total = count * bytes;
    if (RedisModule_TryCalloc) {
        if (!allowed(total, total))
            return NULL;
        return RedisModule_TryCalloc(count ? count : 1, bytes ? bytes : 1);
    }
    void *block = memory_alloc(total);
    if (block)
        memset(block, 0, total);
    return block;
}

void *memory_realloc(void *ptr, size_t bytes)
{
    if (!ptr)
        return memory_alloc(bytes);
    if (bytes == 0)
        bytes = 1;
    size_t old = RedisModule_MallocSize(ptr);
    if (!allowed(bytes, bytes > old ? bytes - old : 0))
        return NULL;
    if (RedisModule_TryRealloc)
        return RedisModule_TryRealloc(ptr, bytes);
    void *moved = RedisModule_TryAlloc ? RedisModule_TryAlloc(bytes) : RedisModule_Alloc(bytes);
    if (!moved)
        return NULL;
    memcpy(moved, ptr, old < bytes ? old : bytes);
    RedisModule_Free(ptr);
    return moved;
}

void memory_free(void *ptr)
{
    if (ptr)
        RedisModule_Free(ptr);
}

const char *memory_refusal(const char *otherwise)
{
    static char text[256];
    switch (last_refusal.reason) {
    case REFUSED_MAXMEMORY:
        snprintf(text, sizeof text, "OOM command not allowed when used memory > 'maxmemory'.");
        break;
    case REFUSED_SETTING:
        snprintf(text, sizeof text,
                 "ERR %llu bytes asked for at once, more than amq.%s (%llu): raise it with "
                 "CONFIG SET amq.%s",
                 (unsigned long long)last_refusal.bytes, last_refusal.setting,
                 (unsigned long long)last_refusal.limit, last_refusal.setting);
        break;
    default:
        snprintf(text, sizeof text, "%s", otherwise);
        break;
    }
    last_refusal.reason = REFUSED_NONE;
    return text;
}

int memory_reply_refused(RedisModuleCtx *ctx, const char *otherwise)
{
    return RedisModule_ReplyWithError(ctx, memory_refusal(otherwise));
}

/* ---- the library's allocator ------------------------------------------------------ */

static void *library_alloc(void *opaque, size_t bytes)
{
    (void)opaque;
    return memory_alloc(bytes);
}

static void *library_calloc(void *opaque, size_t count, size_t bytes)
{
    (void)opaque;
    return memory_calloc(count, bytes);
}

static void *library_realloc(void *opaque, void *ptr, size_t bytes)
{
    (void)opaque;
    return memory_realloc(ptr, bytes);
}

static void library_free(void *opaque, void *ptr)
{
    (void)opaque;
    memory_free(ptr);
}

int memory_init(RedisModuleCtx *ctx)
{
    static const amq_allocator allocator = {
        .alloc = library_alloc,
        .calloc = library_calloc,
        .realloc = library_realloc,
        .free = library_free,
        .opaque = NULL,
    };
    if (amq_set_allocator(&allocator) != AMQ_OK) {
        RedisModule_Log(ctx, "warning", "amq: the library refused the server's allocator");
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}
