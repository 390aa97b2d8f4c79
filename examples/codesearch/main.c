/*
 * main.c - codesearch: grep -rE over a source tree, reading only the files
 * a trigram index says may match.
 *
 *   codesearch index [-o INDEX] PATH...
 *   codesearch search [--index INDEX] [-i] [-F] [-n] [-l] [-c] [-f RE] PATTERN
 *
 * The index keeps each trigram's files exactly (postings.c): measured
 * against hfb and gcs filters of the files' IDs it is smaller and lets no
 * false candidate through (docs/CODESEARCH.md has the figures). index.c
 * builds the index (index_write.c saves it, format.h describes it),
 * search.c answers queries (regex_plan.c turns the pattern into trigrams,
 * evaluate.c asks the index through index_read.c, scan.c prints what grep
 * prints).
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
            "Usage: %s index [-o INDEX] PATH...\n"
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
