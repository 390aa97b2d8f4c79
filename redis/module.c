/*
 * module.c - the module's entry point: it fills in the server's API,
 * reads the load arguments, registers the data type and every command.
 *
 *   redis-server --loadmodule /path/to/amq.so [name value ...]
 *
 * The load arguments are pairs of a config name and its value
 * (commands.h lists them), e.g. "bf-error-rate 0.001 cf-bucket-size 4".
 */
#include "command.h"
#include "commands.h"
#include "rm_api.h"
#include "value.h"

#include <stdio.h>
#include <strings.h>

module_config config = {
    .bf_error_rate = 0.01,
    .bf_initial_size = 100,
    .bf_expansion = 2,
    .bf_tightening = 0.5,
    .cf_initial_size = 1024,
    .cf_bucket_size = 2,
    .cf_max_iterations = 20,
    .cf_expansion = 1,
    .cf_max_expansions = 32,
};

/* A config the load arguments may set: a real in (min, max) or an
 * integer in [min, max]. */
typedef struct config_entry {
    const char *name;
    double *real;
    uint64_t *integer;
    double min, max;
} config_entry;

static const config_entry config_entries[] = {
    { "bf-error-rate", &config.bf_error_rate, NULL, 0, 1 },
    { "bf-initial-size", NULL, &config.bf_initial_size, 1, 1073741824 },
    { "bf-expansion-factor", NULL, &config.bf_expansion, 0, 32768 },
    { "bf-tightening", &config.bf_tightening, NULL, 0, 1 },
    { "cf-initial-size", NULL, &config.cf_initial_size, 2, 1073741824 },
    { "cf-bucket-size", NULL, &config.cf_bucket_size, 1, 255 },
    { "cf-max-iterations", NULL, &config.cf_max_iterations, 1, 65535 },
    { "cf-expansion-factor", NULL, &config.cf_expansion, 0, 32768 },
    { "cf-max-expansions", NULL, &config.cf_max_expansions, 1, 65536 },
};

static int read_config(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc % 2 != 0) {
        RedisModule_Log(ctx, "warning", "amq: load arguments come in pairs: name value");
        return REDISMODULE_ERR;
    }
    for (int i = 0; i < argc; i += 2) {
        size_t len = 0;
        const char *name = RedisModule_StringPtrLen(argv[i], &len);
        const config_entry *entry = NULL;
        for (size_t j = 0; j < sizeof config_entries / sizeof config_entries[0]; j++)
            if (arg_is(argv[i], config_entries[j].name))
                entry = &config_entries[j];
        if (!entry) {
            RedisModule_Log(ctx, "warning", "amq: unknown load argument '%.*s'", (int)len, name);
            return REDISMODULE_ERR;
        }
        bool ok;
        if (entry->real) {
            double x = 0;
            ok = arg_double(argv[i + 1], &x) && x > entry->min && x < entry->max;
            if (ok)
                *entry->real = x;
        } else {
            ok = arg_u64(argv[i + 1], (uint64_t)entry->min, (uint64_t)entry->max, entry->integer);
        }
        if (!ok) {
            RedisModule_Log(ctx, "warning", "amq: %s must be in the range %s%g, %g%s", entry->name,
                            entry->real ? "(" : "[", entry->min, entry->max,
                            entry->real ? ")" : "]");
            return REDISMODULE_ERR;
        }
    }
    return REDISMODULE_OK;
}

/* Every command table (commands.h). */
static const command_entry *const command_tables[] = { amq_commands, cf_commands, bf_commands };

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx,
                                                              RedisModuleString **argv, int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rm_api_init(ctx, "amq", AMQ_VERSION_NUMBER, REDISMODULE_APIVER_1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (read_config(ctx, argv, argc) != REDISMODULE_OK)
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
