/*
 * evaluate.h - a trigram query plan (plan.h) against the index: the
 * candidate documents, as a bitmap.
 */
#ifndef CODESEARCH_EVALUATE_H
#define CODESEARCH_EVALUATE_H

#include "index_read.h"
#include "plan.h"

/* The documents that satisfy p: a bitmap of (documents + 63) / 64 words,
 * document d at bit d % 64 of word d / 64, to free. *lookups: the distinct
 * trigrams read from the index. NULL after printing what is wrong. */
uint64_t *evaluate_plan(const plan *p, cs_index *index, size_t *lookups);

#endif /* CODESEARCH_EVALUATE_H */
