/*
 * cmd_cf.c - the CF.* commands, RedisBloom's cuckoo filter surface (being
 * written; the table is empty for now).
 */
#include "commands.h"

const command_entry cf_commands[] = {
    { NULL, NULL, NULL },
};
