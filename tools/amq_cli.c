/*
 * amq_cli.c - the amq command-line tool: subcommand dispatch, --help and
 * --version, and the one check that standard output was written: every
 * command's output is flushed and closed here, and a failure (a full disk,
 * a closed descriptor) is an error, exit status 2. Each subcommand lives in
 * its own tools/cmd_<name>.c. One command is not listed: `amq __options
 * [TYPE]`, the filter types' options for the bash completion.
 */
#include "cli.h"

#include "amq/amq.h"

#include <errno.h>
#include <stdbool.h>
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
    for (size_t i = 0; amq_family_at(i); i++)
        fprintf(out, " %s", amq_family_at(i));
    fprintf(out, "\n\nOptions:\n"
                 "  -h, --help     show this help\n"
                 "  --version      show the version\n\n"
                 "'amq COMMAND --help' describes a command. Exit status: 0 success (or lines\n"
                 "printed), 1 nothing printed, 2 an error.\n");
}

/* Flush and close standard output: what a command printed is not all
 * written until then, and a full disk or a closed descriptor shows only
 * there. command: the subcommand, or NULL. Returns exit_code, or
 * CLI_EXIT_ERROR after saying why the output was lost. A standard output
 * that was closed before amq started (EBADF) and was never written to is
 * no error. Commands that print much (query, dedup, export) check their
 * own writes too, to stop early. */
static int close_stdout(const char *command, int exit_code)
{
    int flushed = fflush(stdout);
    int flush_errno = errno;
    bool failed_before = ferror(stdout) != 0;
    int closed = fclose(stdout);
    int close_errno = errno;
    int reason = flushed != 0                          ? flush_errno
                 : failed_before                       ? 0
                 : closed != 0 && close_errno != EBADF ? close_errno
                                                       : -1;
    /* An earlier write failed and the flush that would say why already
     * ran: the command's own check, which has reported it. */
    if (reason < 0 || (reason == 0 && exit_code == CLI_EXIT_ERROR))
        return exit_code;
    cli_progress_clear();
    fprintf(stderr, "amq%s%s: writing standard output%s%s\n", command ? " " : "",
            command ? command : "", reason ? ": " : " failed", reason ? strerror(reason) : "");
    return CLI_EXIT_ERROR;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return close_stdout(NULL, CLI_EXIT_ERROR);
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_help(stdout);
        return close_stdout(NULL, CLI_EXIT_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("amq %s\n", amq_version());
        return close_stdout(NULL, CLI_EXIT_OK);
    }
    for (size_t i = 0; i < command_count; i++)
        if (strcmp(name, commands[i].name) == 0)
            return close_stdout(name, commands[i].run(argc - 1, argv + 1));
    /* For the bash completion: the filter types' options (cli_options.c). */
    if (strcmp(name, "__options") == 0)
        return close_stdout(name, cli_options_command(argc - 1, argv + 1));
    cli_error("'%s' is not a command. See 'amq --help'.", name);
    return close_stdout(NULL, CLI_EXIT_ERROR);
}
