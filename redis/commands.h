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

/* A command as module.c registers it: every command takes one key, its
 * first argument. flags are the server's ("write deny-oom", "readonly
 * fast"). */
typedef struct command_entry {
    const char *name;
    RedisModuleCmdFunc function;
    const char *flags;
} command_entry;

/* Each command file's table, ended by an entry whose name is NULL. */
extern const command_entry amq_commands[]; /* cmd_amq.c: AMQ.* */
extern const command_entry cf_commands[];  /* cmd_cf.c: CF.* */
extern const command_entry bf_commands[];  /* cmd_bf.c: BF.* */

#endif /* AMQ_REDIS_COMMANDS_H */
