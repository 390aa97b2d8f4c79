/*
 * regex_plan.h - the trigram query plan (plan.h) of a regular expression
 * in grep -E's syntax (POSIX extended, with GNU's escapes).
 */
#ifndef CODESEARCH_REGEX_PLAN_H
#define CODESEARCH_REGEX_PLAN_H

#include "plan.h"

#include <stddef.h>
#include <stdint.h>

/* Strings at least one of which every match of a pattern holds, for a
 * matcher to search for before it runs the regex engine: count of them
 * (0: none known), each cut to its first REGEX_REQUIRED_LEN bytes (a cut
 * string is still held by every match that holds the whole). */
#define REGEX_REQUIRED_MAX 16
#define REGEX_REQUIRED_LEN 64
typedef struct regex_required {
    size_t count;
    size_t len[REGEX_REQUIRED_MAX];
    uint8_t bytes[REGEX_REQUIRED_MAX][REGEX_REQUIRED_LEN];
} regex_required;

/* The plan of pattern (len bytes) matched line by line as grep -E matches
 * it; fold: matched ignoring ASCII case (-i), so each trigram stands for
 * its case variants. Anything the analysis does not understand counts as
 * "any text", which can only widen the plan: a pattern it cannot read at
 * all gets PLAN_ALL. NULL only when out of memory. With required not NULL,
 * also the strings every match holds one of (none under fold, where the
 * analysis sees bytes folded to lower case). */
plan *regex_plan(const char *pattern, size_t len, bool fold, regex_required *required);

#endif /* CODESEARCH_REGEX_PLAN_H */
