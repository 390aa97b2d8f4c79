/*
 * config.h - the module's settings: the defaults BF.* and CF.* create
 * filters with, read from the load arguments and changed at run time with
 * CONFIG SET.
 */
#ifndef AMQ_REDIS_CONFIG_H
#define AMQ_REDIS_CONFIG_H

#include "rm_api.h"

#include <stdint.h>

/* RedisBloom's names and defaults, plus bf-tightening (RedisBloom fixes
 * the ratio at 0.5). */
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
    /* The limits a client's command is held to (memory.h). */
    uint64_t filter_max_bytes; /* filter-max-bytes: 4 GiB, the most one allocation may take */
    uint64_t load_max_bytes;   /* load-max-bytes: 4 GiB, what all loads in progress may claim */
} module_config;

/* The current settings. Commands read them on the server's main thread,
 * where CONFIG SET also writes them. */
extern module_config config;

/*
 * Read the load arguments (pairs "name value": "bf-error-rate 0.001", or
 * RedisBloom's older ERROR_RATE, INITIAL_SIZE and CF_MAX_EXPANSIONS), then
 * register every setting with the server as "amq.<name>" so that CONFIG
 * GET and CONFIG SET reach it and a config file's "amq.<name> value" line
 * applies. Call from RedisModule_OnLoad.
 * Returns REDISMODULE_OK, or REDISMODULE_ERR after logging which argument
 * is wrong (the server then refuses to load the module).
 */
int config_load(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif /* AMQ_REDIS_CONFIG_H */
