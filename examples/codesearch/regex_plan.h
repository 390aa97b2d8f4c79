/*
 * regex_plan.h - the trigram query plan (plan.h) of a regular expression
 * in grep -E's syntax (POSIX extended, with GNU's escapes).
 */
#ifndef CODESEARCH_REGEX_PLAN_H
#define CODESEARCH_REGEX_PLAN_H

#include "plan.h"

/* The plan of pattern (len bytes) matched line by line as grep -E matches
 * it; fold: matched ignoring ASCII case (-i), so each trigram stands for
 * its case variants. Anything the analysis does not understand counts as
 * "any text", which can only widen the plan: a pattern it cannot read at
 * all gets PLAN_ALL. NULL only when out of memory. */
plan *regex_plan(const char *pattern, size_t len, bool fold);

#endif /* CODESEARCH_REGEX_PLAN_H */
