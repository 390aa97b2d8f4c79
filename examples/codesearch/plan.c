/*
 * plan.c - the trigram query plan's tree (plan.h): building it with the
 * simplifications that keep it small, and printing it for --stats.
 */
#include "plan.h"

#include <stdlib.h>

static uint64_t mix(uint64_t h, uint64_t x)
{
    return (h ^ x) * 0x9e3779b97f4a7c15u + 0x632be59bd9b4e019u;
}

plan *plan_new(plan_op op)
{
    plan *p = calloc(1, sizeof *p);
    if (p) {
        p->op = op;
        p->hash = mix(0, (uint64_t)op);
    }
    return p;
}

plan *plan_trigram(uint32_t trigram)
{
    plan *p = plan_new(PLAN_TRIGRAM);
    if (p) {
        p->trigram = trigram;
        p->hash = mix(p->hash, trigram);
    }
    return p;
}

void plan_free(plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->count; i++)
        plan_free(p->sub[i]);
    free(p->sub);
    free(p);
}

static bool same(const plan *a, const plan *b)
{
    if (a->hash != b->hash || a->op != b->op || a->count != b->count)
        return false;
    if (a->op == PLAN_TRIGRAM)
        return a->trigram == b->trigram;
    for (size_t i = 0; i < a->count; i++)
        if (!same(a->sub[i], b->sub[i]))
            return false;
    return true;
}

/* Append x's operands (x of kind op) or x itself to into, skipping
 * operands already there: x is consumed. */
static bool absorb(plan *into, plan *x)
{
    size_t add = x->op == into->op ? x->count : 1;
    plan **grown = realloc(into->sub, (into->count + add) * sizeof *grown);
    if (!grown) {
        plan_free(x);
        return false;
    }
    into->sub = grown;
    bool flatten = x->op == into->op;
    plan **items = flatten ? x->sub : &x;
    for (size_t i = 0; i < add; i++) {
        bool repeated = false;
        for (size_t j = 0; j < into->count && !repeated; j++)
            repeated = same(into->sub[j], items[i]);
        if (repeated) {
            plan_free(items[i]);
        } else {
            into->hash = mix(into->hash, items[i]->hash);
            into->sub[into->count++] = items[i];
        }
    }
    if (flatten) {
        free(x->sub);
        free(x);
    }
    return true;
}

/* a op b, where identity is the operand that changes nothing (ALL for
 * AND, NONE for OR) and absorbing the one that decides alone. */
static plan *combine(plan_op op, plan *a, plan *b, plan_op identity, plan_op absorbing)
{
    if (!a || !b) {
        plan_free(a);
        plan_free(b);
        return NULL;
    }
    if (a->op == absorbing || b->op == identity) {
        plan_free(b);
        return a;
    }
    if (b->op == absorbing || a->op == identity) {
        plan_free(a);
        return b;
    }
    if (same(a, b)) {
        plan_free(b);
        return a;
    }
    if (a->op == op) {
        /* grow a in place: an alternation of n strings is n ORs in a row,
         * and rebuilding the OR at each would make it O(n^3) */
        if (!absorb(a, b)) {
            plan_free(a);
            return NULL;
        }
        return a;
    }
    plan *p = plan_new(op);
    if (!p) {
        plan_free(a);
        plan_free(b);
        return NULL;
    }
    bool ok = absorb(p, a);
    ok = absorb(p, b) && ok;
    if (!ok) {
        plan_free(p);
        return NULL;
    }
    return p;
}

plan *plan_and(plan *a, plan *b)
{
    return combine(PLAN_AND, a, b, PLAN_ALL, PLAN_NONE);
}

plan *plan_or(plan *a, plan *b)
{
    return combine(PLAN_OR, a, b, PLAN_NONE, PLAN_ALL);
}

size_t plan_trigrams(const plan *p)
{
    if (p->op == PLAN_TRIGRAM)
        return 1;
    size_t n = 0;
    for (size_t i = 0; i < p->count; i++)
        n += plan_trigrams(p->sub[i]);
    return n;
}

static void print_byte(FILE *out, unsigned c)
{
    if (c == '"' || c == '\\')
        fprintf(out, "\\%c", c);
    else if (c >= 0x20 && c < 0x7f)
        fputc((int)c, out);
    else
        fprintf(out, "\\x%02x", c);
}

static void print_plan(FILE *out, const plan *p, bool nested)
{
    switch (p->op) {
    case PLAN_ALL:
        fputs("ALL", out);
        return;
    case PLAN_NONE:
        fputs("NONE", out);
        return;
    case PLAN_TRIGRAM:
        fputc('"', out);
        for (int shift = 16; shift >= 0; shift -= 8)
            print_byte(out, p->trigram >> shift & 0xff);
        fputc('"', out);
        return;
    case PLAN_AND:
    case PLAN_OR:
        if (nested)
            fputc('(', out);
        for (size_t i = 0; i < p->count; i++) {
            if (i)
                fputs(p->op == PLAN_AND ? " " : " | ", out);
            print_plan(out, p->sub[i], true);
        }
        if (nested)
            fputc(')', out);
        return;
    }
}

void plan_print(FILE *out, const plan *p)
{
    print_plan(out, p, false);
}
