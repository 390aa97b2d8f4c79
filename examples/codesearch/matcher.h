/*
 * matcher.h - a pattern matched line by line as grep -E matches it, over a
 * file's bytes in memory.
 *
 * The syntax is POSIX extended regular expressions as GNU grep -E reads
 * them, with \w, \s, \b, \< and the other GNU escapes; the engine is
 * rx.h's, linear in the text, so back-references are refused. Bytes are
 * matched as bytes, as grep does in the C locale, and a NUL byte is an
 * ordinary byte: binary files are searched as text, like grep -a.
 */
#ifndef CODESEARCH_MATCHER_H
#define CODESEARCH_MATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "regex_plan.h"
#include "rx.h"

typedef struct matcher {
    rx *re;
    regex_required required; /* strings every match holds one of */
    /* next_required's offsets into the text being searched */
    const uint8_t *searched;
    size_t searched_len, searched_from;
    size_t next[REGEX_REQUIRED_MAX];
    bool known[REGEX_REQUIRED_MAX];
    size_t rare[REGEX_REQUIRED_MAX]; /* each string's rarest byte, searched first */
} matcher;

/* Compile pattern (len bytes; fold: ignore ASCII case) within memory
 * bytes (rx_new's budget), and with plan_out not NULL make its trigram
 * plan (regex_plan) into *plan_out, to free. NULL on success, else the
 * message for the pattern, in error (error_size bytes), and m and
 * *plan_out hold nothing to free. */
const char *matcher_compile(matcher *m, const char *pattern, size_t len, bool fold, size_t memory,
                            char *error, size_t error_size, plan **plan_out);
void matcher_free(matcher *m);

/* The first line at or after offset from (a line start) of text[0, len)
 * that matches: true and its bounds [*start, *end), the newline excluded;
 * false when none. *error set (and false returned) when the regex engine
 * fails, e.g. out of memory. */
bool matcher_next_line(matcher *m, const uint8_t *text, size_t len, size_t from, size_t *start,
                       size_t *end, bool *error);

/* Whether any part of the string s (len bytes) matches (the path filter). */
bool matcher_matches(matcher *m, const char *s, size_t len);

/* The engine's counts (--stats). */
void matcher_stats(const matcher *m, rx_stats *stats);

/* The ERE that matches the bytes of s literally (grep -F's string): special
 * bytes escaped. Returns a malloc'd string of *out_len bytes, or NULL. */
char *matcher_quote(const char *s, size_t len, size_t *out_len);

#endif /* CODESEARCH_MATCHER_H */
