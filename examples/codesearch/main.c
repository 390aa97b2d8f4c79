/*
 * main.c - codesearch: find the files of a source tree that contain a
 * string, through a trigram index whose posting lists are amq filters.
 *
 *   codesearch index [-o INDEX] [-p FPR] [-f KIND] PATH...
 *   codesearch search [-i INDEX] [--stats] STRING
 *
 * An example of the library's candidate-filter use: hash-free Bloom banks
 * (and Golomb-coded sets) over MD5 document IDs, many of them in one bundle
 * file. index.c builds the index, search.c answers queries, codesearch.h
 * describes the index.
 */
#include "codesearch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void codesearch_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("codesearch: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

static const char usage[] =
    "Usage: codesearch index [-o INDEX] [-p FPR] [-f KIND] PATH...\n"
    "       codesearch search [-i INDEX] [--stats] STRING\n"
    "Index a source tree's trigrams, then find the files that contain a string.\n"
    "'codesearch COMMAND --help' describes a command.\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(argv[1], "index") == 0)
        return codesearch_index(argc - 1, argv + 1);
    if (strcmp(argv[1], "search") == 0)
        return codesearch_search(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    codesearch_error("'%s' is not a command\n%s", argv[1], usage);
    return 2;
}
