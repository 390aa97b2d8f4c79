/*
 * matcher.c - grep -E's matching over a file in memory (matcher.h).
 *
 * The engine (rx.h) runs a DFA over the whole buffer, and its newline
 * transition starts each line afresh, so one pass finds the first line
 * that matches alone, as grep matches lines, in time linear in the bytes
 * read; the search goes on from the next line.
 *
 * A pattern whose every match holds one of a few strings (regex_plan.h's
 * required strings: `_free(` for [a-z]+_free\(, `malloc(` or `calloc(`
 * for (malloc|calloc)\() is searched for those first, and only the lines
 * holding one go to the engine: memchr on a string's rarest byte reads
 * source code many times faster than the DFA's byte-at-a-time loop, and
 * most lines hold none of them. A string of one byte is used when that
 * byte is rare in source code (`q` in \s+q, `;` in (\w+\s*)+;$ is not).
 */
#include "matcher.h"

#include "regex_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How rarely byte c turns up in source code, roughly: white space and
 * lower-case letters (by English letter frequency) are common, digits,
 * upper case and punctuation rare. Only the order matters. */
#define RARE_BYTE 20 /* the rarity of b and rarer letters, digits, most punctuation */

static int byte_rarity(uint8_t c)
{
    static const char by_frequency[] = "etaoinsrhldcumfpgwybvkxjqz";
    if (c == ' ' || c == '\t' || c == '\n')
        return 0;
    const char *letter = c ? strchr(by_frequency, c) : NULL;
    if (letter)
        return 1 + (int)(letter - by_frequency);
    if (c == '_' || c == '(' || c == ')' || c == ';' || c == ',' || c == '.' || c == '*')
        return 10;
    if (c >= '0' && c <= '9')
        return 30;
    return 40;
}

/* The first place at or after text + from where needle (needle_len >= 1
 * bytes) starts, or NULL: memchr (vectorised in glibc) for its rarest byte,
 * at offset rare, then a comparison of the whole. Several times faster
 * than memmem on source code, where a rare byte's hits are few. */
static const uint8_t *find_string(const uint8_t *text, size_t len, size_t from,
                                  const uint8_t *needle, size_t needle_len, size_t rare)
{
    while (len - from >= needle_len) {
        const uint8_t *hit = memchr(text + from + rare, needle[rare], len - from - needle_len + 1);
        if (!hit)
            return NULL;
        const uint8_t *start = hit - rare;
        if (memcmp(start, needle, needle_len) == 0)
            return start;
        from = (size_t)(start - text) + 1;
    }
    return NULL;
}

/* The offset of the first of the pattern's required strings at or after
 * from in text[0, len), or len when none is left. Each string's next
 * offset is kept between calls on one text, so a file is scanned once per
 * string however many lines match; the offsets are forgotten when a
 * search starts again at 0, or on another text. */
static size_t next_required(matcher *m, const uint8_t *text, size_t len, size_t from)
{
    if (from == 0 || text != m->searched || len != m->searched_len || from < m->searched_from) {
        memset(m->known, 0, sizeof m->known);
        m->searched = text;
        m->searched_len = len;
    }
    m->searched_from = from;
    size_t first = len;
    for (size_t i = 0; i < m->required.count; i++) {
        if (!m->known[i] || m->next[i] < from) {
            const uint8_t *at =
                find_string(text, len, from, m->required.bytes[i], m->required.len[i], m->rare[i]);
            m->next[i] = at ? (size_t)(at - text) : len;
            m->known[i] = true;
        }
        first = m->next[i] < first ? m->next[i] : first;
    }
    return first;
}

const char *matcher_compile(matcher *m, const char *pattern, size_t len, bool fold, size_t memory,
                            char *error, size_t error_size, plan **plan_out)
{
    memset(m, 0, sizeof *m);
    if (rx_new(&m->re, pattern, len, fold, memory, error, error_size) != 0)
        return error;
    if (!fold || plan_out) {
        /* one pass gives both: the planner sees folded bytes under -i,
         * so the required strings are only known without it */
        plan *p = regex_plan(pattern, len, fold, fold ? NULL : &m->required);
        if (!p) {
            rx_free(m->re);
            m->re = NULL;
            snprintf(error, error_size, "out of memory");
            return error;
        }
        if (plan_out)
            *plan_out = p;
        else
            plan_free(p);
    }
    for (size_t i = 0; i < m->required.count; i++)
        for (size_t j = 1; j < m->required.len[i]; j++)
            if (byte_rarity(m->required.bytes[i][j]) >
                byte_rarity(m->required.bytes[i][m->rare[i]]))
                m->rare[i] = j;
    /* a common byte is found so often that the DFA alone is faster */
    for (size_t i = 0; i < m->required.count; i++)
        if (m->required.len[i] < 2 && byte_rarity(m->required.bytes[i][0]) < RARE_BYTE)
            m->required.count = 0;
    return NULL;
}

void matcher_free(matcher *m)
{
    rx_free(m->re);
    memset(m, 0, sizeof *m);
}

bool matcher_next_line(matcher *m, const uint8_t *text, size_t len, size_t from, size_t *start,
                       size_t *end, bool *error)
{
    *error = false;
    if (m->required.count == 0) {
        int found = rx_next_line(m->re, text, len, from, start, end);
        *error = found < 0;
        return found > 0;
    }
    while (from < len) {
        size_t found = next_required(m, text, len, from);
        if (found == len)
            return false;
        size_t line = found;
        while (line > from && text[line - 1] != '\n')
            line--;
        const uint8_t *newline = memchr(text + found, '\n', len - found);
        size_t line_end = newline ? (size_t)(newline - text) : len;
        int alone = rx_line_matches(m->re, text + line, line_end - line);
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
    size_t start, end;
    return rx_next_line(m->re, (const uint8_t *)s, len, 0, &start, &end) > 0;
}

void matcher_stats(const matcher *m, rx_stats *stats)
{
    rx_get_stats(m->re, stats);
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
