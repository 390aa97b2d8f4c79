/*
 * scan.h - search one file for a pattern and print what grep -r prints.
 */
#ifndef CODESEARCH_SCAN_H
#define CODESEARCH_SCAN_H

#include "matcher.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct scan_options {
    bool line_numbers; /* -n: path:N:line */
    bool files_only;   /* -l: the path, once */
    bool count;        /* -c: path:count */
} scan_options;

/* Search the file at path and print to out as grep -r would: matching
 * lines as path:line (path:N:line with -n), or with -l the path, or with
 * -c path:count (also path:0). Returns the matching lines (with -l, 0 or
 * 1), or -1 after printing why the file could not be read. */
long long scan_file(matcher *m, const char *path, const scan_options *options, FILE *out);

#endif /* CODESEARCH_SCAN_H */
