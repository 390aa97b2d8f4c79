/*
 * main.c - codesearch: grep -rE over a source tree, reading only the files
 * a trigram index says may match.
 *
 *   codesearch index [-o INDEX] [-p FPR] [-f KIND] PATH...
 *   codesearch search [--index INDEX] [-i] [-F] [-n] [-l] [-c] [-f RE] PATTERN
 *
 * An example of the library's candidate-filter use: hash-free Bloom banks
 * (and Golomb-coded sets) over MD5 document IDs, many of them in one bundle
 * file. index.c builds the index, search.c answers queries (regex_plan.c
 * turns the pattern into trigrams, evaluate.c asks the index, scan.c
 * prints what grep prints), codesearch.h describes the index.
 * `make install` installs it as amq-codesearch; its messages use the name
 * it was run as.
 */
#include "codesearch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *codesearch_program = "codesearch";

void codesearch_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s: ", codesearch_program);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

static void usage(FILE *out)
{
    const char *p = codesearch_program;
    fprintf(out,
            "Usage: %s index [-o INDEX] [-p FPR] [-f KIND] PATH...\n"
            "       %s search [--index INDEX] [-i] [-F] [-n] [-l] [-c] [-f PATHREGEX] PATTERN\n"
            "Index a source tree's trigrams, then search it as grep -rE would.\n"
            "'%s COMMAND --help' describes a command.\n",
            p, p, p);
}

int main(int argc, char **argv)
{
    if (argc > 0 && argv[0][0]) {
        const char *slash = strrchr(argv[0], '/');
        codesearch_program = slash ? slash + 1 : argv[0];
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "index") == 0)
        return codesearch_index(argc - 1, argv + 1);
    if (strcmp(argv[1], "search") == 0)
        return codesearch_search(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    codesearch_error("'%s' is not a command", argv[1]);
    usage(stderr);
    return 2;
}
