/*
 * memory.h - every byte the module holds comes from the server's
 * allocator, so that INFO memory, MEMORY USAGE, maxmemory, eviction and
 * the deny-oom flag see the filters; and the limits a client's command is
 * held to.
 *
 * memory_init hands the library (amq_set_allocator) the same functions
 * the module's own code calls: memory_alloc and the rest, which take from
 * the server without ever panicking (RedisModule_TryAlloc; where the
 * server lacks TryCalloc or TryRealloc, TryAlloc and a copy stand in).
 *
 * The limits. The server refuses a deny-oom command only when it is
 * already past maxmemory, so one command that asks for a large block
 * (BF.RESERVE of 300 million items) would take it far past. So while a
 * client's command runs on a primary, an allocation of MEMORY_CHECKED_BYTES
 * or more is refused (NULL, and the reason kept for memory_reply_refused)
 * when
 *   - it is larger than amq.filter-max-bytes, or
 *   - maxmemory is set and the server's used memory plus the block would
 *     pass it.
 * Nothing is refused while the server loads its files, on a replica
 * (which follows its primary whatever its own maxmemory says), in a fork
 * child (saves), or inside memory_suspend_limits, so that what a primary
 * did is always redone. Smaller blocks are left to the server's own
 * check before each deny-oom command.
 *
 * Thread safety: memory_free may run on the server's lazy-free thread
 * (FLUSHALL ASYNC frees values there); the rest on the main thread.
 */
#ifndef AMQ_REDIS_MEMORY_H
#define AMQ_REDIS_MEMORY_H

#include "rm_api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The smallest allocation the limits look at. */
#define MEMORY_CHECKED_BYTES ((size_t)1 << 20)

/* Install the module's allocator in the library. Call in OnLoad, before
 * any filter exists. REDISMODULE_OK or _ERR. */
int memory_init(RedisModuleCtx *ctx);

/* As malloc, calloc, realloc and free, from the server's allocator, held
 * to the limits above; NULL when out of memory or refused. */
void *memory_alloc(size_t bytes);
void *memory_calloc(size_t count, size_t bytes);
void *memory_realloc(void *ptr, size_t bytes);
void memory_free(void *ptr);

/* Whether the limits apply now: a client's command on a primary, outside
 * memory_suspend_limits. */
bool memory_limits_apply(void);

/*
 * Whether a client's command may now take bytes more, by the limits above
 * (any size is checked here; true whenever they do not apply): true, or
 * false with the reason kept for memory_reply_refused. limit is a setting
 * it must also stay under (UINT64_MAX: none) and limit_name its name, for
 * the reply.
 */
bool memory_admit(uint64_t bytes, uint64_t limit, const char *limit_name);

/* Suspend the limits (depth counted) while the server hands the module a
 * value to take as it is (RESTORE, MIGRATE: rdb_load). */
void memory_suspend_limits(void);
void memory_resume_limits(void);

/* Answer a command whose memory ran out: the server's own OOM error when
 * maxmemory refused it, the setting and the sizes when a setting did, or
 * otherwise (the command's own words, RedisBloom's where it has them)
 * when the allocator had none. Clears the reason. */
int memory_reply_refused(RedisModuleCtx *ctx, const char *otherwise);

/* The error memory_reply_refused answers, for a reply made later; valid
 * until the next call. Clears the reason. */
const char *memory_refusal(const char *otherwise);

#ifdef AMQ_REDIS_FAULTS
/* Tests: make every allocation of at least bytes fail (SIZE_MAX: none),
 * in this process and in every child it forks from now. */
void memory_fail_from(size_t bytes);
#endif

#endif /* AMQ_REDIS_MEMORY_H */
