/*
 * evaluate.c - a plan's candidates: a bitmap a node, AND and OR word by
 * word. A trigram is read from the index once however often the plan
 * names it (under -i, case variants recur across the plan).
 */
#include "evaluate.h"

#include "codesearch.h"

#include <stdlib.h>
#include <string.h>

typedef struct cached {
    uint32_t trigram;
    uint64_t *bitmap;
} cached;

typedef struct evaluation {
    cs_index *index;
    size_t words;
    uint64_t tail; /* the valid bits of the last word */
    cached *cache;
    size_t cached_count, cached_capacity;
    uint32_t *slots; /* open addressing: 1 + an index into cache, 0 when free */
    size_t slot_capacity;
} evaluation;

static size_t slot_of(uint32_t t, size_t capacity)
{
    return (size_t)((t * 0x9e3779b1u) >> 8) & (capacity - 1);
}

static uint64_t *new_bitmap(const evaluation *e, bool all)
{
    uint64_t *b = malloc((e->words + 1) * sizeof *b);
    if (!b)
        return NULL;
    memset(b, all ? 0xff : 0, e->words * sizeof *b);
    if (all && e->words)
        b[e->words - 1] &= e->tail;
    return b;
}

/* The documents of trigram t, read once: a 4,000-way alternation names
 * 30,000 trigrams, so they are found by hash. */
static const uint64_t *trigram_documents(evaluation *e, uint32_t t)
{
    if (2 * (e->cached_count + 1) > e->slot_capacity) {
        size_t capacity = e->slot_capacity ? 2 * e->slot_capacity : 64;
        uint32_t *slots = calloc(capacity, sizeof *slots);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < e->cached_count; i++) {
            size_t at = slot_of(e->cache[i].trigram, capacity);
            while (slots[at])
                at = (at + 1) & (capacity - 1);
            slots[at] = (uint32_t)(i + 1);
        }
        free(e->slots);
        e->slots = slots;
        e->slot_capacity = capacity;
    }
    size_t at = slot_of(t, e->slot_capacity);
    for (; e->slots[at]; at = (at + 1) & (e->slot_capacity - 1))
        if (e->cache[e->slots[at] - 1].trigram == t)
            return e->cache[e->slots[at] - 1].bitmap;
    if (e->cached_count == e->cached_capacity) {
        size_t capacity = e->cached_capacity ? 2 * e->cached_capacity : 16;
        cached *grown = realloc(e->cache, capacity * sizeof *grown);
        if (!grown)
            return NULL;
        e->cache = grown;
        e->cached_capacity = capacity;
    }
    uint64_t *b = new_bitmap(e, false);
    if (!b || cs_index_trigram(e->index, t, b) != 0) {
        free(b);
        return NULL;
    }
    e->slots[at] = (uint32_t)(e->cached_count + 1);
    e->cache[e->cached_count++] = (cached){ t, b };
    return b;
}

static bool empty(const evaluation *e, const uint64_t *b)
{
    for (size_t i = 0; i < e->words; i++)
        if (b[i])
            return false;
    return true;
}

static uint64_t *evaluate(evaluation *e, const plan *p)
{
    if (p->op == PLAN_ALL || p->op == PLAN_NONE)
        return new_bitmap(e, p->op == PLAN_ALL);
    if (p->op == PLAN_TRIGRAM) {
        const uint64_t *found = trigram_documents(e, p->trigram);
        uint64_t *b = found ? new_bitmap(e, false) : NULL;
        if (b)
            memcpy(b, found, e->words * sizeof *b);
        return b;
    }
    bool and = p->op == PLAN_AND;
    uint64_t *result = new_bitmap(e, and);
    for (size_t i = 0; i < p->count && result; i++) {
        if (and&&empty(e, result))
            break;
        uint64_t *b = evaluate(e, p->sub[i]);
        if (!b) {
            free(result);
            return NULL;
        }
        for (size_t w = 0; w < e->words; w++)
            result[w] = and? result[w] & b[w] : result[w] | b[w];
        free(b);
    }
    return result;
}

uint64_t *evaluate_plan(const plan *p, cs_index *index, size_t *lookups)
{
    uint32_t n = cs_index_documents(index);
    evaluation e = { index, ((size_t)n + 63) / 64, 0, NULL, 0, 0, NULL, 0 };
    e.tail = n % 64 ? ((uint64_t)1 << (n % 64)) - 1 : ~(uint64_t)0;
    uint64_t *result = evaluate(&e, p);
    if (!result)
        codesearch_error("out of memory, or the index could not be read");
    *lookups = e.cached_count;
    for (size_t i = 0; i < e.cached_count; i++)
        free(e.cache[i].bitmap);
    free(e.cache);
    free(e.slots);
    return result;
}
