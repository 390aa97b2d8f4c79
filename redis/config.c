/*
 * config.c - the module's settings, from the load arguments and CONFIG SET.
 *
 * Each setting is a row of one table: its name, where its value lives and
 * its range. The load arguments are read against the table first (so
 * "--loadmodule amq.so bf-error-rate 0.001" works on every server); then,
 * where the server has module configs (Redis 7.0), every row is
 * registered under the module's name, "amq.bf-error-rate", with the value
 * the arguments left as its default. Integers are the server's numeric
 * configs, which check their own range; the two fractions (bf-error-rate,
 * bf-tightening) are string configs parsed and checked here. One rule
 * spans two rows, cf-initial-size at least twice cf-bucket-size: it is
 * checked once every value of a CONFIG SET is in place, and the server
 * puts the old values back when it fails.
 */
#include "config.h"

#include "command.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    .filter_max_bytes = (uint64_t)4 << 30,
    .load_max_bytes = (uint64_t)4 << 30,
};

/* A setting: a fraction in [min, max] when closed, or strictly inside
 * (min, max) when not, or an integer in [min, max]. legacy_name is
 * RedisBloom's older load-argument name, where it has one. */
typedef struct config_entry {
    const char *name;
    const char *legacy_name;
    double *fraction;
    uint64_t *integer;
    double min, max;
    bool closed;
    bool memory; /* a size in bytes: CONFIG SET also takes "4gb" */
} config_entry;

static const config_entry config_entries[] = {
    { "bf-error-rate", "ERROR_RATE", &config.bf_error_rate, NULL, 0, 1, false, false },
    { "bf-initial-size", "INITIAL_SIZE", NULL, &config.bf_initial_size, 1, 1073741824, true,
      false },
    { "bf-expansion-factor", NULL, NULL, &config.bf_expansion, 0, 32768, true, false },
    /* scalable_bloom.c's range of the ratio. */
    { "bf-tightening", NULL, &config.bf_tightening, NULL, 0.5, 0.95, true, false },
    { "cf-initial-size", NULL, NULL, &config.cf_initial_size, 2, 1073741824, true, false },
    { "cf-bucket-size", NULL, NULL, &config.cf_bucket_size, 1, 255, true, false },
    { "cf-max-iterations", NULL, NULL, &config.cf_max_iterations, 1, 65535, true, false },
    { "cf-expansion-factor", NULL, NULL, &config.cf_expansion, 0, 32768, true, false },
    { "cf-max-expansions", "CF_MAX_EXPANSIONS", NULL, &config.cf_max_expansions, 1, 65536, true,
      false },
    /* memory.c: the limits a client's command is held to. */
    { "filter-max-bytes", NULL, NULL, &config.filter_max_bytes, 1 << 20, 4611686018427387904.0,
      true, true },
    { "load-max-bytes", NULL, NULL, &config.load_max_bytes, 0, 4611686018427387904.0, true, true },
};
#define CONFIG_ENTRIES (sizeof config_entries / sizeof config_entries[0])

/* Whether a fraction is in its row's range (false for NaN). */
static bool fraction_in_range(const config_entry *entry, double x)
{
    if (entry->closed)
        return x >= entry->min && x <= entry->max;
    return x > entry->min && x < entry->max;
}

/* "bf-error-rate must be in the range (0, 1)", for logs and CONFIG SET. */
static void range_message(char *out, size_t size, const config_entry *entry)
{
    snprintf(out, size, "%s must be in the range %s%g, %g%s", entry->name,
             entry->closed ? "[" : "(", entry->min, entry->max, entry->closed ? "]" : ")");
}

static int read_arguments(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc % 2 != 0) {
        RedisModule_Log(ctx, "warning", "amq: load arguments come in pairs: name value");
        return REDISMODULE_ERR;
    }
    for (int i = 0; i < argc; i += 2) {
        const config_entry *entry = NULL;
        for (size_t j = 0; j < CONFIG_ENTRIES; j++)
            if (arg_is(argv[i], config_entries[j].name) ||
                (config_entries[j].legacy_name && arg_is(argv[i], config_entries[j].legacy_name)))
                entry = &config_entries[j];
        if (!entry) {
            size_t len = 0;
            const char *name = RedisModule_StringPtrLen(argv[i], &len);
            RedisModule_Log(ctx, "warning", "amq: unknown load argument '%.*s'", (int)len, name);
            return REDISMODULE_ERR;
        }
        bool ok;
        if (entry->fraction) {
            double x = 0;
            ok = arg_double(argv[i + 1], &x) && fraction_in_range(entry, x);
            if (ok)
                *entry->fraction = x;
        } else {
            ok = arg_u64(argv[i + 1], (uint64_t)entry->min, (uint64_t)entry->max, entry->integer);
        }
        if (!ok) {
            char message[128];
            range_message(message, sizeof message, entry);
            RedisModule_Log(ctx, "warning", "amq: %s", message);
            return REDISMODULE_ERR;
        }
    }
    if (config.cf_initial_size < 2 * config.cf_bucket_size) {
        RedisModule_Log(ctx, "warning",
                        "amq: cf-initial-size must be at least twice cf-bucket-size");
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

/* ---- CONFIG GET and SET ---------------------------------------------------------------- */

static long long get_integer(const char *name, void *privdata)
{
    (void)name;
    return (long long)*((const config_entry *)privdata)->integer;
}

static int set_integer(const char *name, long long setting, void *privdata, RedisModuleString **err)
{
    (void)name;
    (void)err; /* the server has checked the range */
    *((const config_entry *)privdata)->integer = (uint64_t)setting;
    return REDISMODULE_OK;
}

/* The string CONFIG GET shows for each fraction: the server keeps the
 * pointer without freeing it, so each row owns its latest one. */
static RedisModuleString *shown_fraction[CONFIG_ENTRIES];

/* The shortest decimal that reads back as exactly x. */
static void format_fraction(char *out, size_t size, double x)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, size, "%.*g", digits, x);
        if (strtod(out, NULL) == x)
            return;
    }
}

static RedisModuleString *get_fraction(const char *name, void *privdata)
{
    (void)name;
    const config_entry *entry = privdata;
    size_t row = (size_t)(entry - config_entries);
    char text[32];
    format_fraction(text, sizeof text, *entry->fraction);
    if (shown_fraction[row])
        RedisModule_FreeString(NULL, shown_fraction[row]);
    shown_fraction[row] = RedisModule_CreateString(NULL, text, strlen(text));
    return shown_fraction[row];
}

static int set_fraction(const char *name, RedisModuleString *setting, void *privdata,
                        RedisModuleString **err)
{
    (void)name;
    const config_entry *entry = privdata;
    double x = 0;
    if (!arg_double(setting, &x) || !fraction_in_range(entry, x)) {
        char message[128];
        range_message(message, sizeof message, entry);
        *err = RedisModule_CreateString(NULL, message, strlen(message));
        return REDISMODULE_ERR;
    }
    *entry->fraction = x;
    return REDISMODULE_OK;
}

/* After every value of a CONFIG SET (or the config file) is in place. */
static int check_together(RedisModuleCtx *ctx, void *privdata, RedisModuleString **err)
{
    (void)ctx;
    (void)privdata;
    if (config.cf_initial_size < 2 * config.cf_bucket_size) {
        static const char message[] = "cf-initial-size must be at least twice cf-bucket-size";
        *err = RedisModule_CreateString(NULL, message, sizeof message - 1);
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

static int register_configs(RedisModuleCtx *ctx)
{
    for (size_t i = 0; i < CONFIG_ENTRIES; i++) {
        const config_entry *entry = &config_entries[i];
        void *privdata = (void *)(uintptr_t)entry;
        int status;
        if (entry->fraction) {
            char text[32];
            format_fraction(text, sizeof text, *entry->fraction);
            status = RedisModule_RegisterStringConfig(ctx, entry->name, text, 0, get_fraction,
                                                      set_fraction, check_together, privdata);
        } else {
            status = RedisModule_RegisterNumericConfig(
                ctx, entry->name, (long long)*entry->integer,
                entry->memory ? REDISMODULE_CONFIG_MEMORY : 0, (long long)entry->min,
                (long long)entry->max, get_integer, set_integer, check_together, privdata);
        }
        if (status != REDISMODULE_OK) {
            RedisModule_Log(ctx, "warning", "amq: the server refused the setting %s", entry->name);
            return REDISMODULE_ERR;
        }
    }
    return RedisModule_LoadConfigs(ctx);
}

int config_load(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (read_arguments(ctx, argv, argc) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    /* A server without module configs (before 7.0): load arguments only. */
    if (!RedisModule_RegisterNumericConfig || !RedisModule_RegisterStringConfig ||
        !RedisModule_LoadConfigs)
        return REDISMODULE_OK;
    return register_configs(ctx);
}
