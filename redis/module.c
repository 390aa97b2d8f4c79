/*
 * module.c - the module's entry point: it fills in the server's API,
 * reads the load arguments, registers the data type and every command.
 *
 *   redis-server --loadmodule /path/to/amq.so [name value ...]
 *
 * The load arguments are pairs of a setting's name and its value
 * (config.c lists them), e.g. "bf-error-rate 0.001 cf-bucket-size 4".
 */
#include "commands.h"
#include "config.h"
#include "rm_api.h"
#include "value.h"

/* Every command table (commands.h). */
static const command_entry *const command_tables[] = { amq_commands, cf_commands, bf_commands };

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx,
                                                              RedisModuleString **argv, int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rm_api_init(ctx, "amq", AMQ_VERSION_NUMBER, REDISMODULE_APIVER_1) != REDISMODULE_OK)
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
    return REDISMODULE_OK;
}
