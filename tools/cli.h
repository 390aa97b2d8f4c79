/*
 * cli.h - what the amq tool's subcommands share: the command table entry,
 * error reporting (to stderr, naming file and line), exit codes, and the
 * line reader over INPUT arguments.
 *
 * The tool uses only the public headers.
 */
#ifndef AMQ_CLI_H
#define AMQ_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes, as grep: 0 something found/printed or success, 1 nothing,
 * 2 an error. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_NONE = 1, CLI_EXIT_ERROR = 2 };

/* A subcommand: run gets argv with argv[0] = the subcommand's name. */
typedef struct cli_command {
    const char *name;
    const char *summary; /* one line for `amq --help` */
    int (*run)(int argc, char **argv);
} cli_command;

/* Print "amq: <message>" to stderr. */
void cli_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Print "amq <command>: <message>\nTry 'amq <command> --help'." and return
 * CLI_EXIT_ERROR: for usage mistakes. */
int cli_usage_error(const char *command, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* True when stderr is a terminal (progress bars go there only then). */
bool cli_stderr_is_tty(void);

/* ---- the subcommands -------------------------------------------------------- */

int cli_calc(int argc, char **argv);

#endif /* AMQ_CLI_H */
