/*
 * cmd_bf.c - the BF.* commands, RedisBloom's Bloom filter surface (being
 * written; the table is empty for now).
 */
#include "commands.h"

const command_entry bf_commands[] = {
    { NULL, NULL, NULL },
};
