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
 * A pattern whose every match holds one of a few strings (regex_plan.h's
 * required strings: `_free(` for [a-z]+_free\(, `malloc(` or `calloc(`
 * for (malloc|calloc)\() is searched for those with memmem first, and only
 * the lines holding one go to the regex engine: glibc's backtracking
 * matcher is slow on such patterns tried at every byte.
 */
#include "matcher.h"

#include "regex_plan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* How rarely byte c turns up in source code, roughly: white space and
 * lower-case letters (by English letter frequency) are common, digits,
 * upper case and punctuation rare. Only the order matters. */
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
        plan_free(regex_plan(pattern, len, false, &m->required));
    /* one byte is no faster to find than the regex engine's own search */
    for (size_t i = 0; i < m->required.count; i++)
        if (m->required.len[i] < 2)
            m->required.count = 0;
    for (size_t i = 0; i < m->required.count; i++)
        for (size_t j = 1; j < m->required.len[i]; j++)
            if (byte_rarity(m->required.bytes[i][j]) >
                byte_rarity(m->required.bytes[i][m->rare[i]]))
                m->rare[i] = j;
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
        if (m->required.count > 0) {
            found = next_required(m, text, len, from);
            if (found == len)
                return false;
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
