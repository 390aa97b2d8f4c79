/*
 * rx.h - the code search's regular expression engine: grep -E's patterns
 * matched line by line in time linear in the text, in bounded memory.
 *
 * A pattern is read as GNU grep -E reads it in the C locale (POSIX
 * extended syntax with GNU's \w \W \s \S \b \B \< \> \` \'), bytes matched
 * as bytes, a NUL an ordinary byte. It is compiled to a Thompson program
 * (rx_compile.c) and run as a DFA built lazily from it (rx_dfa.c), so
 * that a search reads each byte of the text once and does O(1) work for
 * it, plus O(size of the program) the first time it meets a DFA state.
 * The states are cached within a memory budget; when the cache is full it
 * is emptied and the search goes on, so the worst case - a new state at
 * every byte - costs what simulating the program's NFA costs: O(text x
 * program), never more, and never more memory than the budget.
 *
 * What is refused, with a message that says why (never a wrong answer):
 * back-references (\1 to \9), which no automaton matches; a program larger
 * than half the budget; nesting deeper than RX_DEPTH_MAX; and the
 * patterns grep itself refuses, with grep's own messages.
 */
#ifndef CODESEARCH_RX_H
#define CODESEARCH_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The default memory budget of one compiled pattern: its program and its
 * cache of DFA states. */
#define RX_MEMORY_DEFAULT ((size_t)64 << 20)
/* The least budget rx_new accepts. */
#define RX_MEMORY_MIN ((size_t)1 << 20)
/* Groups and repetitions nested deeper than this are refused. */
#define RX_DEPTH_MAX 1000

typedef struct rx rx;

typedef struct rx_stats {
    size_t instructions; /* the compiled program's */
    size_t states;       /* DFA states built, over all searches */
    size_t flushes;      /* times the state cache was full and emptied */
} rx_stats;

/* Compile pattern (len bytes, a NUL an ordinary byte; fold: ignore ASCII
 * case, as grep -i in the C locale) within memory bytes (at least
 * RX_MEMORY_MIN). Returns 0 and *out, to free with rx_free; or -1 with a
 * message in error (error_size bytes, at least 1) and *out NULL.
 * Complexity: O(pattern length + program size). */
int rx_new(rx **out, const char *pattern, size_t len, bool fold, size_t memory, char *error,
           size_t error_size);
void rx_free(rx *r);

/* The first line of text[0, len) at or after from (a line start) that
 * holds a match: 1 and its bounds [*start, *end), the newline excluded; 0
 * when none; -1 when out of memory. A last line without its newline is a
 * line; after a last newline there is none. */
int rx_next_line(rx *r, const uint8_t *text, size_t len, size_t from, size_t *start, size_t *end);

/* Whether line[0, len) - one line, its newline excluded - holds a match:
 * 1, 0, or -1 when out of memory. */
int rx_line_matches(rx *r, const uint8_t *line, size_t len);

void rx_get_stats(const rx *r, rx_stats *stats);

#endif /* CODESEARCH_RX_H */
