/*
 * plan.h - a trigram query plan: which trigrams a file must hold to be
 * able to match a pattern, as an AND/OR tree (Russ Cox, "Regular
 * Expression Matching with a Trigram Index", 2012).
 *
 * A plan is necessary, never sufficient: every file with a match
 * satisfies it, and the files that satisfy it (the candidates) are read
 * and searched. PLAN_ALL is "no trigram is known to be needed" (every
 * file is a candidate), PLAN_NONE is "no file can match".
 *
 * regex_plan.c builds a plan from a regular expression; search.c
 * evaluates it against the index.
 */
#ifndef CODESEARCH_PLAN_H
#define CODESEARCH_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum plan_op { PLAN_ALL, PLAN_NONE, PLAN_AND, PLAN_OR, PLAN_TRIGRAM } plan_op;

typedef struct plan {
    plan_op op;
    uint32_t trigram;  /* PLAN_TRIGRAM: three bytes, the first the high */
    size_t count;      /* PLAN_AND, PLAN_OR: the operands */
    struct plan **sub; /* owned */
    uint64_t hash;     /* of op, trigram and operands: unequal plans mostly differ in it */
} plan;

/* A new leaf (PLAN_ALL, PLAN_NONE) or trigram; NULL when out of memory. */
plan *plan_new(plan_op op);
plan *plan_trigram(uint32_t trigram);
void plan_free(plan *p);

/* a AND b, a OR b, simplified (ALL and NONE absorbed, nested operators of
 * the same kind flattened). Both operands are consumed, also on failure;
 * NULL when out of memory (either operand NULL counts as that). */
plan *plan_and(plan *a, plan *b);
plan *plan_or(plan *a, plan *b);

/* The number of trigram leaves. */
size_t plan_trigrams(const plan *p);

/* Print the plan, e.g. ("abc" "bcd" | "xyz"), to out. */
void plan_print(FILE *out, const plan *p);

#endif /* CODESEARCH_PLAN_H */
