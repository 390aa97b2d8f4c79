/*
 * rx_internal.h - the compiled program that rx_compile.c makes from a
 * pattern and rx_dfa.c runs.
 *
 * A program is an array of instructions; pc is an index into it:
 *
 *   RX_BYTE    one byte of sets[arg], then go to out
 *   RX_SPLIT   go to out and to arg (either)
 *   RX_ASSERT  go to out if the assertion arg (RX_BOL...) holds between
 *              the byte before and the byte after
 *   RX_MATCH   the pattern has matched
 *
 * No set holds '\n': lines are matched apart, and a newline is the end of
 * a line for the assertions.
 */
#ifndef CODESEARCH_RX_INTERNAL_H
#define CODESEARCH_RX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { RX_BYTE, RX_SPLIT, RX_ASSERT, RX_MATCH };

/* Assertions: ^ and \` (line start), $ and \' (line end), \b, \B, \<, \>. */
enum {
    RX_BOL = 1,
    RX_EOL,
    RX_WORD_BOUNDARY,
    RX_NOT_WORD_BOUNDARY,
    RX_WORD_START,
    RX_WORD_END,
};

typedef struct rx_inst {
    uint32_t out;
    uint32_t arg; /* RX_BYTE: the set; RX_SPLIT: the other pc; RX_ASSERT: which */
    uint8_t op;
} rx_inst;

typedef struct rx_set {
    uint64_t bits[4];
} rx_set;

static inline bool rx_set_has(const rx_set *s, uint8_t c)
{
    return s->bits[c >> 6] >> (c & 63) & 1;
}

typedef struct rx_program {
    rx_inst *inst;
    size_t count;
    uint32_t start;
    rx_set *sets; /* distinct */
    size_t set_count;
    bool word_context; /* the program has \b, \B, \< or \> */
} rx_program;

/* Compile pattern into p, in at most max_instructions instructions. 0, or
 * -1 and a message in error[error_size]. */
int rx_program_compile(rx_program *p, const char *pattern, size_t len, bool fold,
                       size_t max_instructions, char *error, size_t error_size);
void rx_program_free(rx_program *p);

/* Whether c is a word byte for \w, \b, \< and \> (the C locale's). */
static inline bool rx_is_word(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

#endif /* CODESEARCH_RX_INTERNAL_H */
