/*
 * commands.h - every command the module registers (module.c's table), and
 * the defaults BF.* and CF.* create filters with.
 */
#ifndef AMQ_REDIS_COMMANDS_H
#define AMQ_REDIS_COMMANDS_H

#include "rm_api.h"

#include <stdint.h>

/* The defaults of filters made without explicit parameters, set by the
 * module's load arguments ("bf-error-rate 0.001"); RedisBloom's names and
 * values, plus bf-tightening (RedisBloom fixes it at 0.5). */
typedef struct module_config {
    double bf_error_rate;       /* bf-error-rate: 0.01 */
    uint64_t bf_initial_size;   /* bf-initial-size: 100 */
    uint64_t bf_expansion;      /* bf-expansion-factor: 2 (0: non-scaling) */
    double bf_tightening;       /* bf-tightening: 0.5 */
    uint64_t cf_initial_size;   /* cf-initial-size: 1024 */
    uint64_t cf_bucket_size;    /* cf-bucket-size: 2 */
    uint64_t cf_max_iterations; /* cf-max-iterations: 20 */
    uint64_t cf_expansion;      /* cf-expansion-factor: 1 */
    uint64_t cf_max_expansions; /* cf-max-expansions: 32 */
} module_config;

extern module_config config;

int cmd_amq_build(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int cmd_amq_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int cmd_amq_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int cmd_amq_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int cmd_amq_dump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int cmd_amq_restore(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif /* AMQ_REDIS_COMMANDS_H */
