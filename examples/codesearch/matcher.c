/*
 * matcher.c - grep -E's matching over a file in memory (matcher.h).
 *
 * Searching line by line costs a regex call per line, far too slow for a
 * scan; searching the whole buffer with newline_anchor (^ and $ match at
 * line ends) finds the leftmost match in one call. A match found so may
 * cross a newline (\s and [[:space:]] match one), which grep, matching
 * lines alone, would not see: so the line where the match starts is
 * matched again alone, printed only if that matches, and the search goes
 * on from the next line. No line is skipped: a line's own match is also a
 * match of the whole buffer at the same place, so the leftmost match
 * never starts after the first line that matches alone.
 *
 * A pattern whose every match holds a fixed string (the longest run of
 * plain bytes outside groups, in a pattern without a top-level |) is
 * searched for that string with memmem first, and only the lines holding
 * it go to the regex engine: glibc's backtracking matcher is slow on
 * patterns such as [a-z]+_free\( tried at every byte.
 */
#include "matcher.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The longest run of bytes every match of the pattern holds, read from its
 * top level: none when there is a top-level | (then no byte is required). */
static void required_literal(matcher *m, const char *p, size_t len)
{
    size_t run_len = 0, depth = 0;
    char run[sizeof m->literal];
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        bool plain = false;
        if (c == '|' && depth == 0)
            return; /* one side or the other: nothing is required */
        if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth -= depth > 0;
        } else if (c == '[') { /* skip the bracket expression */
            size_t j = i + 1;
            j += j < len && p[j] == '^';
            j += j < len && p[j] == ']';
            while (j < len && p[j] != ']') {
                if (p[j] == '[' && j + 1 < len && strchr(":=.", p[j + 1])) {
                    const char *close = NULL;
                    for (size_t k = j + 2; k + 1 < len && !close; k++)
                        if (p[k] == p[j + 1] && p[k + 1] == ']')
                            close = p + k;
                    if (!close)
                        return;
                    j = (size_t)(close - p) + 2;
                    continue;
                }
                j++;
            }
            i = j;
        } else if (c == '{') { /* skip an interval's bounds */
            size_t j = i + 1;
            while (j < len && (isdigit((unsigned char)p[j]) || p[j] == ','))
                j++;
            if (j < len && p[j] == '}')
                i = j;
        } else if (c == '\\' && i + 1 < len) {
            c = p[++i];
            plain = depth == 0 && !strchr("wWsSbB<>`'123456789", c);
        } else {
            plain = depth == 0 && !strchr(".^$*+?{}", c);
        }
        /* a byte a quantifier may drop, or repeat, ends the run */
        bool quantified = i + 1 < len && strchr("*+?{", p[i + 1]);
        if (plain && quantified && p[i + 1] == '+' && run_len < sizeof run)
            run[run_len++] = c;
        if (plain && !quantified && run_len < sizeof run) {
            run[run_len++] = c;
            continue;
        }
        if (run_len > m->literal_len) {
            memcpy(m->literal, run, run_len);
            m->literal_len = run_len;
        }
        run_len = 0;
    }
    if (run_len > m->literal_len) {
        memcpy(m->literal, run, run_len);
        m->literal_len = run_len;
    }
}

const char *matcher_compile(matcher *m, const char *pattern, size_t len, bool fold)
{
    memset(m, 0, sizeof *m);
    if (memchr(pattern, '\n', len))
        return "a newline in the pattern is not supported (grep reads it as two patterns)";
    m->fastmap = malloc(256);
    if (!m->fastmap)
        return "out of memory";
    m->re.fastmap = m->fastmap;
    re_syntax_options = RE_SYNTAX_EGREP | (fold ? RE_ICASE : 0);
    const char *error = re_compile_pattern(pattern, len, &m->re);
    if (error) {
        regfree(&m->re);
        m->fastmap = NULL;
        return error;
    }
    /* \` and \' anchor at the searched string's ends: a line's, in grep */
    for (size_t i = 0; i + 1 < len; i++)
        if (pattern[i] == '\\') {
            m->per_line = m->per_line || pattern[i + 1] == '`' || pattern[i + 1] == '\'';
            i++;
        }
    if (!fold)
        required_literal(m, pattern, len);
    m->re.newline_anchor = 1;
    m->re.not_bol = 0;
    m->re.not_eol = 0;
    return NULL;
}

void matcher_free(matcher *m)
{
    regfree(&m->re); /* frees the fastmap too */
    memset(m, 0, sizeof *m);
}

/* Whether the line text[0, len) matches alone; -2 for an engine error. */
static int line_matches(matcher *m, const uint8_t *text, size_t len)
{
    if (len > INT_MAX)
        return -2;
    regoff_t at = re_search(&m->re, (const char *)text, (regoff_t)len, 0, (regoff_t)len, NULL);
    return at >= 0 ? 1 : at == -1 ? 0 : -2;
}

bool matcher_next_line(matcher *m, const uint8_t *text, size_t len, size_t from, size_t *start,
                       size_t *end, bool *error)
{
    *error = false;
    while (from < len) {
        size_t found;
        if (m->literal_len >= 2) {
            const uint8_t *at = memmem(text + from, len - from, m->literal, m->literal_len);
            if (!at)
                return false;
            found = (size_t)(at - text);
        } else if (m->per_line || len - from > INT_MAX) {
            /* the next line alone: past the regex engine's offsets, or
             * with anchors that mean the line's ends */
            found = from;
        } else {
            regoff_t at = re_search(&m->re, (const char *)text + from, (regoff_t)(len - from), 0,
                                    (regoff_t)(len - from), NULL);
            if (at == -1)
                return false;
            if (at < 0) {
                *error = true;
                return false;
            }
            found = from + (size_t)at;
        }
        if (found == len && text[len - 1] == '\n')
            return false; /* after the last newline there is no line */
        size_t line = found;
        while (line > from && text[line - 1] != '\n')
            line--;
        const uint8_t *newline = memchr(text + found, '\n', len - found);
        size_t line_end = newline ? (size_t)(newline - text) : len;
        int alone = line_matches(m, text + line, line_end - line);
        if (alone < 0) {
            *error = true;
            return false;
        }
        if (alone) {
            *start = line;
            *end = line_end;
            return true;
        }
        from = line_end + 1;
    }
    return false;
}

bool matcher_matches(matcher *m, const char *s, size_t len)
{
    return line_matches(m, (const uint8_t *)s, len) == 1;
}

char *matcher_quote(const char *s, size_t len, size_t *out_len)
{
    char *quoted = malloc(2 * len + 1);
    if (!quoted)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\0' && strchr(".[]()*+?{}|^$\\", s[i]))
            quoted[n++] = '\\';
        quoted[n++] = s[i];
    }
    quoted[n] = '\0';
    *out_len = n;
    return quoted;
}
