/*
 * module.c - the module's entry point: it fills in the server's API,
 * reads the load arguments, registers the data type and every command.
 *
 *   redis-server --loadmodule /path/to/amq.so [name value ...]
 *
 * The load arguments are pairs of a setting's name and its value
 * (config.c lists them), e.g. "bf-error-rate 0.001 cf-bucket-size 4".
 */
#include "command.h"
#include "commands.h"
#include "config.h"
#include "memory.h"
#include "rm_api.h"
#include "value.h"

#ifdef AMQ_REDIS_FAULTS
/* Tests only (the amq-faults.so build): AMQ.FAULTS FAIL-FROM bytes | OFF
 * makes every allocation of at least bytes fail from now on, in this
 * server and in the children it forks (saves, rewrites). */
static int cmd_amq_faults(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    uint64_t bytes = 0;
    if (argc == 2 && arg_is(argv[1], "OFF"))
        memory_fail_from(SIZE_MAX);
    else if (argc == 3 && arg_is(argv[1], "FAIL-FROM") && arg_u64(argv[2], 0, SIZE_MAX, &bytes))
        memory_fail_from((size_t)bytes);
    else
        return RedisModule_ReplyWithError(ctx, "ERR AMQ.FAULTS FAIL-FROM bytes | OFF");
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}
#endif

/* Every command table (commands.h). */
static const command_entry *const command_tables[] = { amq_commands, cf_commands, bf_commands };

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx,
                                                              RedisModuleString **argv, int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rm_api_init(ctx, "amq", AMQ_VERSION_NUMBER, REDISMODULE_APIVER_1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (memory_init(ctx) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (config_load(ctx, argv, argc) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
    if (value_register_type(ctx) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    for (size_t t = 0; t < sizeof command_tables / sizeof command_tables[0]; t++)
        for (const command_entry *c = command_tables[t]; c->name; c++)
            if (RedisModule_CreateCommand(ctx, c->name, c->function, c->flags, 1, 1, 1) !=
                REDISMODULE_OK)
                return REDISMODULE_ERR;
#ifdef AMQ_REDIS_FAULTS
    if (RedisModule_CreateCommand(ctx, "amq.faults", cmd_amq_faults, "admin", 0, 0, 0) !=
        REDISMODULE_OK)
        return REDISMODULE_ERR;
#endif
    return REDISMODULE_OK;
}
