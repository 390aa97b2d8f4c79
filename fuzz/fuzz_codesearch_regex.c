/*
 * fuzz_codesearch_regex.c - the code search's pattern parser, planner and
 * matcher (examples/codesearch/rx_compile.c, rx_dfa.c, regex_plan.c) on
 * arbitrary patterns and texts, checking the promise the search rests
 * on: a line that matches satisfies the pattern's trigram plan and holds
 * one of its required strings, so the index never drops a file that has a
 * match.
 *
 * Input: byte 0 flags (bit 0: -i; bit 1: the smallest memory budget, so
 * that the DFA's cache is emptied often), bytes 1-2 the pattern's length
 * n (little-endian, at most what follows), then n bytes of pattern and
 * the text. Each line of the text is matched alone (rx_line_matches) and
 * the text whole (rx_next_line), and both must name the same lines; each
 * matching line is checked against the plan (a trigram leaf holds when
 * the line has those three bytes; -i variants are the plan's own ORs) and
 * the required strings. A pattern the engine refuses must come with a
 * message. Compilation is bounded by the budget, so no input allocates
 * more than a few MiB.
 */
#include "codesearch.h"
#include "plan.h"
#include "regex_plan.h"
#include "rx.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool has_trigram(const uint8_t *line, size_t len, uint32_t t)
{
    for (size_t i = 0; i + 2 < len; i++)
        if (codesearch_trigram(line + i) == t)
            return true;
    return false;
}

static bool satisfies(const plan *p, const uint8_t *line, size_t len)
{
    switch (p->op) {
    case PLAN_ALL:
        return true;
    case PLAN_NONE:
        return false;
    case PLAN_TRIGRAM:
        return has_trigram(line, len, p->trigram);
    case PLAN_AND:
        for (size_t i = 0; i < p->count; i++)
            if (!satisfies(p->sub[i], line, len))
                return false;
        return true;
    default: /* PLAN_OR */
        for (size_t i = 0; i < p->count; i++)
            if (satisfies(p->sub[i], line, len))
                return true;
        return false;
    }
}

static bool holds_required(const regex_required *r, const uint8_t *line, size_t len)
{
    if (r->count == 0)
        return true;
    for (size_t i = 0; i < r->count; i++)
        for (size_t at = 0; at + r->len[i] <= len; at++)
            if (memcmp(line + at, r->bytes[i], r->len[i]) == 0)
                return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    bool fold = data[0] & 1;
    size_t memory = data[0] & 2 ? RX_MEMORY_MIN : 4 * RX_MEMORY_MIN;
    size_t n = (size_t)data[1] | (size_t)data[2] << 8;
    if (n > size - 3)
        n = size - 3;
    const char *pattern = (const char *)data + 3;
    const uint8_t *text = data + 3 + n;
    size_t len = size - 3 - n;

    char error[512] = "";
    rx *r;
    if (rx_new(&r, pattern, n, fold, memory, error, sizeof error) != 0) {
        if (!error[0])
            abort(); /* a refusal says why */
        return 0;
    }
    regex_required required = { 0 };
    plan *p = regex_plan(pattern, n, fold, fold ? NULL : &required);
    if (!p)
        abort();

    size_t from = 0, next_start = 0, next_end = 0;
    int next = rx_next_line(r, text, len, 0, &next_start, &next_end);
    while (from < len) {
        const uint8_t *newline = memchr(text + from, '\n', len - from);
        size_t end = newline ? (size_t)(newline - text) : len;
        int alone = rx_line_matches(r, text + from, end - from);
        if (alone < 0 || next < 0)
            abort(); /* the budget is far above what these inputs need */
        bool reported = next == 1 && next_start == from;
        if (reported != (alone == 1) || (reported && next_end != end))
            abort(); /* the whole-text search and the line disagree */
        if (alone == 1) {
            if (!satisfies(p, text + from, end - from))
                abort(); /* the index would miss this line's file */
            if (!holds_required(&required, text + from, end - from))
                abort(); /* the prefilter would skip this line */
            next = end < len ? rx_next_line(r, text, len, end + 1, &next_start, &next_end) : 0;
        }
        from = end + 1;
    }
    if (next == 1)
        abort(); /* a line reported past the text's last */
    plan_free(p);
    rx_free(r);
    return 0;
}
