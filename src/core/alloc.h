/*
 * alloc.h - the one door every allocation of the library goes through: the
 * allocator a host installed (amq_set_allocator), or the C library's.
 *
 * No other file of src/ calls malloc, calloc, realloc, aligned_alloc or
 * free. Two kinds of block, each freed by its own call:
 *
 *   plain    amq__malloc, amq__calloc, amq__realloc; freed by amq__free.
 *            Under a host's allocator these are its own blocks, passed
 *            through untouched, so a buffer handed to a caller
 *            (amq_save_to_memory) is one the host's free takes.
 *   aligned  amq__aligned_alloc, amq__aligned_calloc (and the tables of
 *            bits.h, made from them); freed by amq__aligned_free only.
 *            Under a host's allocator such a block is carved out of a
 *            larger plain one, whose pointer is kept in the word just
 *            before the aligned address; with the C library's they are
 *            aligned_alloc's (or calloc's) and free() takes them.
 *
 * The default path calls the C library's functions by name, so a test that
 * wraps them at link time (tests/test_alloc_failure.c) sees every
 * allocation the library makes.
 */
#ifndef AMQ_ALLOC_H
#define AMQ_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* As malloc, calloc and realloc; NULL when out of memory (calloc also when
 * count * bytes overflows). A failed realloc leaves block as it was. */
void *amq__malloc(size_t bytes);
void *amq__calloc(size_t count, size_t bytes);
void *amq__realloc(void *block, size_t bytes);

/* Free a plain block; NULL is ignored. */
void amq__free(void *block);

/* bytes (a multiple of alignment, > 0) aligned to alignment (a power of
 * two, at least sizeof(void *)), uninitialized; NULL when out of memory or
 * when the size with its padding overflows. */
void *amq__aligned_alloc(size_t alignment, size_t bytes);

/* As amq__aligned_alloc, zeroed. With the C library's allocator and an
 * alignment malloc gives anyway (at most 16), this is calloc, whose fresh
 * pages cost nothing until touched: what a large vector that stays mostly
 * zero wants. */
void *amq__aligned_calloc(size_t alignment, size_t bytes);

/* Free an aligned block; NULL is ignored. */
void amq__aligned_free(void *block);

/* Whether a host's allocator is installed. The tables of bits.h then skip
 * huge-page alignment and hints: 2 MiB of padding per table would count
 * against the host's memory, and its pages are its own business. */
bool amq__allocator_is_custom(void);

#endif /* AMQ_ALLOC_H */
