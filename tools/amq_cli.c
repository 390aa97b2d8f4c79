/*
 * amq_cli.c - the amq command-line tool: subcommand dispatch, --help and
 * --version. Each subcommand lives in its own tools/cmd_<name>.c.
 */
#include "cli.h"

#include "amq/amq.h"

#include <stdio.h>
#include <string.h>

static const cli_command commands[] = {
    { "build", "build a filter from keys, one per line", cli_build },
    { "add", "add keys to a filter (dynamic types)", cli_add },
    { "remove", "remove keys from a filter (counting-bloom, cuckoo)", cli_remove },
    { "query", "print the lines that may be in a filter", cli_query },
    { "info", "describe a filter file", cli_info },
    { "merge", "union of compatible filters", cli_merge },
    { "export", "write a filter's bare data in another program's format", cli_export },
    { "dedup", "print each line the first time it is seen", cli_dedup },
    { "calc", "Bloom filter parameters: any three of n, m, k, p give the rest", cli_calc },
    { "bench", "time the standard workloads of every filter type", cli_bench },
};

static const size_t command_count = sizeof commands / sizeof commands[0];

static void print_help(FILE *out)
{
    fprintf(out, "Usage: amq COMMAND [OPTIONS] [ARGS]\n"
                 "Approximate membership queries: build, query and inspect filters.\n\n"
                 "Commands:\n");
    for (size_t i = 0; i < command_count; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nFilter types in this build:\n  types:");
    for (size_t i = 0; amq_family_name(i); i++)
        fprintf(out, " %s", amq_family_name(i));
    fprintf(out, "\n\nOptions:\n"
                 "  -h, --help     show this help\n"
                 "  --version      show the version\n\n"
                 "'amq COMMAND --help' describes a command. Exit status: 0 success (or lines\n"
                 "printed), 1 nothing printed, 2 an error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return CLI_EXIT_ERROR;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("amq %s\n", amq_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < command_count; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    cli_error("'%s' is not a command. See 'amq --help'.", name);
    return CLI_EXIT_ERROR;
}
