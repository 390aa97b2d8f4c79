/*
 * cmd_bench.c - `amq bench [ARGS]`: run the benchmark program amq_bench
 * with ARGS (see `amq_bench --help` and bench/README.md).
 *
 * The amq tool links the public library only. The workloads, their
 * runner, the peer libraries they are compared with and the machine's
 * floors are bench/'s, built into the one program amq_bench when amq is
 * configured with AMQ_BUILD_BENCH (ON by default) and installed beside amq.
 *
 * amq_bench is looked for in this order, the first that exists is run:
 *
 *   1. DIR/amq_bench, where DIR is the directory of the running amq
 *      (/proc/self/exe): an installed amq, whose bindir holds both;
 *   2. DIR/bench/amq_bench: amq run from its build tree;
 *   3. each directory of $PATH.
 *
 * It replaces this process (execv), with argv[0] "amq bench" so that its
 * usage and messages name the command typed, and ARGS unchanged: its exit
 * status is amq bench's (0 every workload ran, 1 one could not be set up,
 * 2 a bad command line). When none is found, or the one found cannot be
 * run, amq bench says so and exits 2.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BENCH_PROGRAM "amq_bench"
#define PATH_ROOM     4096

/* The directory of the running executable into dir, without a trailing
 * slash. Returns false when it cannot be known. */
static bool executable_dir(char *dir, size_t size)
{
    ssize_t len = readlink("/proc/self/exe", dir, size - 1);
    if (len <= 0 || (size_t)len >= size - 1)
        return false;
    dir[len] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return true;
}

int cli_bench(int argc, char **argv)
{
    (void)argc;
    static char program_name[] = "amq bench";
    argv[0] = program_name;
    fflush(NULL);

    char dir[PATH_ROOM], path[PATH_ROOM + 32];
    bool have_dir = executable_dir(dir, sizeof dir);
    const char *const places[] = { BENCH_PROGRAM, "bench/" BENCH_PROGRAM };
    for (size_t i = 0; have_dir && i < sizeof places / sizeof places[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, places[i]);
        execv(path, argv);
        if (errno != ENOENT && errno != ENOTDIR) {
            cli_error("bench: cannot run %s: %s", path, strerror(errno));
            return CLI_EXIT_ERROR;
        }
    }
    execvp(BENCH_PROGRAM, argv);
    if (errno != ENOENT && errno != ENOTDIR) {
        cli_error("bench: cannot run " BENCH_PROGRAM " from $PATH: %s", strerror(errno));
        return CLI_EXIT_ERROR;
    }
    if (have_dir)
        cli_error("bench: the benchmark program " BENCH_PROGRAM " is not installed (looked in %s, "
                  "%s/bench and $PATH; configure amq with -DAMQ_BUILD_BENCH=ON)",
                  dir, dir);
    else
        cli_error("bench: the benchmark program " BENCH_PROGRAM " is not installed (looked in "
                  "$PATH; configure amq with -DAMQ_BUILD_BENCH=ON)");
    return CLI_EXIT_ERROR;
}
