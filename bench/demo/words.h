/*
 * words.h - the demo's keys: the lines of a word list, each once, and as
 * many strings that are certainly not in it.
 */
#ifndef AMQ_DEMO_WORDS_H
#define AMQ_DEMO_WORDS_H

#include <stddef.h>
#include <stdint.h>

/* count strings stored back to back: string i is bytes + offsets[i], of
 * lens[i] bytes, and pointers[i] points at it (the shape amq_build and
 * amq_contains_many take). */
typedef struct demo_strings {
    char *bytes;
    size_t *offsets;
    const void **pointers;
    size_t *lens;
    size_t count;
} demo_strings;

/* Read the distinct non-empty lines of the file at path (a final "\r" is
 * dropped) into *words, in file order. Returns 0, or -1 after printing what
 * went wrong. */
int demo_read_words(demo_strings *words, const char *path);

/* Make words->count strings that are not among words: random lower-case
 * letters, each as long as the word of the same index (or one longer),
 * redrawn while it is a word. The same seed gives the same strings. Returns 0, or -1 after
 * printing what went wrong. */
int demo_make_non_words(demo_strings *non_words, const demo_strings *words, uint64_t seed);

void demo_strings_free(demo_strings *strings);

#endif /* AMQ_DEMO_WORDS_H */
