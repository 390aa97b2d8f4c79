/*
 * matcher.h - a pattern matched line by line as grep -E matches it, over a
 * file's bytes in memory.
 *
 * The syntax is POSIX extended regular expressions as GNU grep -E reads
 * them: glibc's regex with RE_SYNTAX_EGREP, the syntax grep compiles -E
 * patterns with (so \w, \b, \< and back-references work as there). Bytes
 * are matched as bytes, as grep does in the C locale, and a NUL byte is an
 * ordinary byte: binary files are searched as text, like grep -a.
 */
#ifndef CODESEARCH_MATCHER_H
#define CODESEARCH_MATCHER_H

#define _GNU_SOURCE /* the GNU regex API: lengths, not NUL-ended strings */
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "regex_plan.h"

typedef struct matcher {
    struct re_pattern_buffer re;
    char *fastmap;
    bool per_line;           /* match each line alone (the pattern has \` or \') */
    regex_required required; /* strings every match holds one of */
    /* next_required's offsets into the text being searched */
    const uint8_t *searched;
    size_t searched_len, searched_from;
    size_t next[REGEX_REQUIRED_MAX];
    bool known[REGEX_REQUIRED_MAX];
    size_t rare[REGEX_REQUIRED_MAX]; /* each string's rarest byte, searched first */
} matcher;

/* Compile pattern (len bytes; fold: ignore ASCII case). NULL on success,
 * else grep's message for the pattern (and m holds nothing to free). */
const char *matcher_compile(matcher *m, const char *pattern, size_t len, bool fold);
void matcher_free(matcher *m);

/* The first line at or after offset from (a line start) of text[0, len)
 * that matches: true and its bounds [*start, *end), the newline excluded;
 * false when none. *error set (and false returned) when the regex engine
 * fails, e.g. out of memory. */
bool matcher_next_line(matcher *m, const uint8_t *text, size_t len, size_t from, size_t *start,
                       size_t *end, bool *error);

/* Whether any part of the string s (len bytes) matches (the path filter). */
bool matcher_matches(matcher *m, const char *s, size_t len);

/* The ERE that matches the bytes of s literally (grep -F's string): special
 * bytes escaped. Returns a malloc'd string of *out_len bytes, or NULL. */
char *matcher_quote(const char *s, size_t len, size_t *out_len);

#endif /* CODESEARCH_MATCHER_H */
