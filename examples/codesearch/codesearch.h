/*
 * codesearch.h - what the example's commands (index.c, search.c) share:
 * trigrams, the entry points, and error messages.
 *
 * The index (format.h) holds, for every trigram (three consecutive bytes)
 * of every indexed file, the exact list of the files holding it. No
 * trigram is left out, so a file missing a trigram a pattern needs is
 * certainly not a match, and no file is left out for its name or bytes.
 */
#ifndef CODESEARCH_H
#define CODESEARCH_H

#include <stddef.h>
#include <stdint.h>

/* The trigram starting at p, as a number below 2^24 (byte 0 the high). */
static inline uint32_t codesearch_trigram(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* `codesearch index`: argv after the command. Returns the exit status. */
int codesearch_index(int argc, char **argv);
/* `codesearch search`: argv after the command. Returns the exit status:
 * 0 matches printed, 1 none, 2 an error. */
int codesearch_search(int argc, char **argv);

/* The name the program was run as (argv[0] without its directory): the
 * build's codesearch, or the installed amq-codesearch. */
extern const char *codesearch_program;

/* Print the program's name, ": " and the message to stderr. */
void codesearch_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif /* CODESEARCH_H */
