/*
 * commands.h - every command the module registers (module.c's table).
 */
#ifndef AMQ_REDIS_COMMANDS_H
#define AMQ_REDIS_COMMANDS_H

#include "config.h"
#include "rm_api.h"

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
