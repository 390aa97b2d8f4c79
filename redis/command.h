/*
 * command.h - what every command of the module shares: opening a key of
 * the module's type, replies that follow the client's protocol (RESP2
 * integers and arrays, RESP3 booleans and maps), and argument parsing.
 */
#ifndef AMQ_REDIS_COMMAND_H
#define AMQ_REDIS_COMMAND_H

#include "rm_api.h"
#include "value.h"

#include <stdbool.h>
#include <stdint.h>

/* What opening a key found. */
typedef enum key_state {
    KEY_EMPTY = 0,      /* no such key */
    KEY_VALUE = 1,      /* a value of the module's type */
    KEY_WRONG_TYPE = 2, /* some other type */
} key_state;

/*
 * Open name with mode (REDISMODULE_READ or | REDISMODULE_WRITE); *key
 * receives the key (close it with RedisModule_CloseKey; NULL when a missing
 * key was opened for reading) and *v its value when KEY_VALUE: always a
 * filter, as a key that holds a load in progress (load.h) is of the wrong
 * type for every command but LOADCHUNK's.
 */
key_state command_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
                       value **v);

/* command_open, a load in progress being a KEY_VALUE too (LOADCHUNK). */
key_state command_open_any(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                           RedisModuleKey **key, value **v);

/* 1/0 as a RESP3 boolean, or a RESP2 integer. */
int reply_bool(RedisModuleCtx *ctx, int answer);

/* A reply of pairs name/value: a RESP3 map of pairs entries, or a RESP2
 * array of 2 x pairs elements. */
int reply_pairs(RedisModuleCtx *ctx, long pairs);

/* Whether argument arg is word, ignoring case. */
bool arg_is(RedisModuleString *arg, const char *word);

/* The argument as an integer in [min, max] or a double; false when it is
 * not one (or out of range). */
bool arg_u64(RedisModuleString *arg, uint64_t min, uint64_t max, uint64_t *out);
bool arg_double(RedisModuleString *arg, double *out);

/* The key bytes of arguments argv[first..argc-1] as the library's batch
 * calls take them; keys and lens are arrays from memory_alloc (memory_free
 * both); false when out of memory. */
bool args_as_keys(RedisModuleString **argv, int first, int argc, const void ***keys, size_t **lens);

#endif /* AMQ_REDIS_COMMAND_H */
