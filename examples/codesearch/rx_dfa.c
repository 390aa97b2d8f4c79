/*
 * rx_dfa.c - a compiled pattern (rx_internal.h) run as a lazily built DFA
 * over lines of text (rx.h).
 *
 * A DFA state is a set of program counters - the threads waiting for the
 * next byte - and the context of the byte before: a line start, a word
 * byte or another. The pattern is found anywhere in a line, so every
 * state also holds, implicitly, a thread starting afresh at the program's
 * start. A transition on byte c follows each thread through SPLITs and
 * the assertions that hold between the byte before and c (\b needs both),
 * and the threads at a RX_BYTE instruction whose set has c step over it:
 *
 *       state {ctx, pcs}  --c-->  {ctx of c, the pcs after c}
 *
 * and a thread reaching RX_MATCH on the way means the line has matched,
 * which the transition records as the sentinel `matched`. The newline is
 * a byte of its own: its transition checks the assertions with a line
 * end after and leads to the state of a line start, so a whole buffer of
 * lines runs through one loop and every line is matched alone, as grep
 * matches them. A last line without its newline gets the newline's
 * transition at the end of the text.
 *
 * Bytes the program cannot tell apart share a class (one column of the
 * transition table): the classes are the partition of 0..255 that every
 * set of the program, the newline and, if the program has word
 * assertions, the word bytes refine.
 *
 * Transitions are computed when a search first needs them and cached in
 * the states: a search costs a table lookup per byte, plus, per new
 * state, one pass over the threads' closure - O(program) at worst. The
 * states live in an arena counted against a budget; a state that would
 * overflow it first empties the whole cache (the `flushes` of
 * rx_get_stats), and the search goes on from the new state. So memory
 * never passes the budget, and time never passes O(program) a byte, which
 * is the cost of simulating the NFA itself (the fallback RE2 keeps for
 * this case is this loop without the cache).
 *
 *   struct state:  hash | count | ctx | next[classes] | pcs[count]
 *                  next[k]: NULL (not yet computed), &matched, or a state
 */
#include "rx.h"
#include "rx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CTX_LINE, CTX_WORD, CTX_OTHER };

typedef struct state {
    uint32_t hash;
    uint32_t count;
    uint8_t ctx;
    struct state *next[];
} state;

/* Only its address is used: the transition "the line has matched". */
static state matched;

/* The pcs a thread at the program's start reaches over one byte class, or
 * that it matches before the byte (found). */
typedef struct start_step {
    bool found;
    uint32_t count;
    uint32_t pcs[];
} start_step;

typedef struct chunk {
    struct chunk *older;
    size_t size, used;
    max_align_t data[];
} chunk;

struct rx {
    rx_program prog;
    uint8_t byte_class[256];
    uint8_t class_byte[256]; /* a byte of each class */
    uint8_t class_ctx[256];  /* the context a byte of the class leaves */
    size_t classes;
    size_t newline; /* the newline's class */
    /* the cache */
    size_t budget, used;
    chunk *chunks, *spare; /* in use; emptied by a flush, to reuse */
    state **table;
    size_t table_capacity, table_count;
    state *line_start;
    /* what the thread starting afresh adds on class k after context ctx,
     * in the arena: starts[ctx * classes + k] */
    struct start_step **starts;
    /* work space for a transition, one slot a pc each */
    uint32_t *mark, *stepped_mark, generation;
    uint32_t *stack, *pcs;
    rx_stats stats;
};

static uint32_t *state_pcs(const rx *r, state *s)
{
    return (uint32_t *)(void *)(s->next + r->classes);
}

static uint32_t hash_pcs(uint8_t ctx, const uint32_t *pcs, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ ctx;
    for (size_t i = 0; i < n; i++)
        h = (h ^ pcs[i]) * 0xff51afd7ed558ccdu;
    return (uint32_t)(h >> 32);
}

/* Empty the cache. Its chunks are kept for the states to come: a state
 * of .{3000} is 12 KB, and giving such chunks back to the system at every
 * flush costs more than the search. */
static void flush(rx *r)
{
    while (r->chunks) {
        chunk *c = r->chunks;
        r->chunks = c->older;
        c->used = 0;
        c->older = r->spare;
        r->spare = c;
    }
    memset(r->table, 0, r->table_capacity * sizeof *r->table);
    memset(r->starts, 0, 3 * r->classes * sizeof *r->starts);
    r->table_count = 0;
    r->used = r->table_capacity * sizeof *r->table;
    r->line_start = NULL;
    r->stats.flushes++;
}

static void free_chunks(chunk *c)
{
    while (c) {
        chunk *older = c->older;
        free(c);
        c = older;
    }
}

static void *arena_alloc(rx *r, size_t size)
{
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    chunk *c = r->chunks;
    if (!c || c->size - c->used < size) {
        if (r->spare && r->spare->size >= size) {
            c = r->spare;
            r->spare = c->older;
        } else {
            size_t want = r->budget / 16 > size ? r->budget / 16 : size;
            c = malloc(sizeof *c + want);
            if (!c)
                return NULL;
            c->size = want;
            c->used = 0;
        }
        c->older = r->chunks;
        r->chunks = c;
        r->used += sizeof *c + c->size;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    return p;
}

static bool table_grow(rx *r)
{
    size_t capacity = 2 * r->table_capacity;
    state **table = calloc(capacity, sizeof *table);
    if (!table)
        return false;
    for (size_t i = 0; i < r->table_capacity; i++)
        if (r->table[i]) {
            size_t at = r->table[i]->hash & (capacity - 1);
            while (table[at])
                at = (at + 1) & (capacity - 1);
            table[at] = r->table[i];
        }
    free(r->table);
    r->used += (capacity - r->table_capacity) * sizeof *table;
    r->table = table;
    r->table_capacity = capacity;
    return true;
}

/* The state {ctx, pcs[0, n)} (pcs sorted), from the cache or new.
 * The cache is emptied first when the state would not fit in the budget.
 * NULL: out of memory. */
static state *intern(rx *r, uint8_t ctx, const uint32_t *pcs, size_t n)
{
    uint32_t h = hash_pcs(ctx, pcs, n);
    size_t mask = r->table_capacity - 1;
    for (size_t at = h & mask; r->table[at]; at = (at + 1) & mask) {
        state *s = r->table[at];
        if (s->hash == h && s->ctx == ctx && s->count == n &&
            (n == 0 || memcmp(state_pcs(r, s), pcs, n * sizeof *pcs) == 0))
            return s;
    }
    size_t size = sizeof(state) + r->classes * sizeof(state *) + n * sizeof(uint32_t);
    bool grow = 2 * (r->table_count + 1) > r->table_capacity;
    size_t need =
        size + sizeof(chunk) + r->budget / 16 + (grow ? r->table_capacity * sizeof(state *) : 0);
    if (r->used + need > r->budget && r->table_count > 0) {
        flush(r);
        grow = false;
    }
    if (grow && !table_grow(r))
        return NULL;
    state *s = arena_alloc(r, size);
    if (!s)
        return NULL;
    s->hash = h;
    s->count = (uint32_t)n;
    s->ctx = ctx;
    memset(s->next, 0, r->classes * sizeof(state *));
    if (n > 0) /* pcs is NULL for the line start */
        memcpy(state_pcs(r, s), pcs, n * sizeof *pcs);
    size_t at = h & (r->table_capacity - 1);
    while (r->table[at])
        at = (at + 1) & (r->table_capacity - 1);
    r->table[at] = s;
    r->table_count++;
    r->stats.states++;
    return s;
}

static state *line_start(rx *r)
{
    if (!r->line_start)
        r->line_start = intern(r, CTX_LINE, NULL, 0);
    return r->line_start;
}

static bool holds(uint32_t assertion, uint8_t before, uint8_t after)
{
    bool word_before = before == CTX_WORD, word_after = after == CTX_WORD;
    switch (assertion) {
    case RX_BOL:
        return before == CTX_LINE;
    case RX_EOL:
        return after == CTX_LINE;
    case RX_WORD_BOUNDARY:
        return word_before != word_after;
    case RX_NOT_WORD_BOUNDARY:
        return word_before == word_after;
    case RX_WORD_START:
        return !word_before && word_after;
    default: /* RX_WORD_END */
        return word_before && !word_after;
    }
}

static void next_generation(rx *r)
{
    if (++r->generation == 0) {
        memset(r->mark, 0, r->prog.count * sizeof *r->mark);
        memset(r->stepped_mark, 0, r->prog.count * sizeof *r->stepped_mark);
        r->generation = 1;
    }
}

/* Follow the threads on the stack (marked) through the closure on byte
 * class k between contexts before and after, appending to r->pcs the pcs
 * after the byte that are not yet marked stepped. Returns whether a
 * thread matched. */
static bool closure(rx *r, size_t top, size_t k, uint8_t before, uint8_t after, size_t *stepped)
{
    const rx_inst *inst = r->prog.inst;
    uint8_t byte = r->class_byte[k];
    bool eol = k == r->newline;
    uint32_t g = r->generation;
    while (top > 0) {
        const rx_inst *in = &inst[r->stack[--top]];
        uint32_t to[2] = { in->out, in->arg };
        int n = 0;
        switch (in->op) {
        case RX_MATCH:
            return true;
        case RX_SPLIT:
            n = 2;
            break;
        case RX_ASSERT:
            n = holds(in->arg, before, after);
            break;
        default: /* RX_BYTE */
            if (!eol && rx_set_has(&r->prog.sets[in->arg], byte) && r->stepped_mark[in->out] != g) {
                r->stepped_mark[in->out] = g;
                r->pcs[(*stepped)++] = in->out;
            }
            break;
        }
        for (int i = 0; i < n; i++)
            if (r->mark[to[i]] != g) {
                r->mark[to[i]] = g;
                r->stack[top++] = to[i];
            }
    }
    return false;
}

/* Sort pcs[0, n) of a program of count instructions: by insertion when
 * few, a bitmap's scan when they are many for the program (a state of
 * .{3000} holds thousands), else by radix, a byte a pass. The work space
 * (r->stack) is free while a transition sorts. */
static void sort_pcs(rx *r, uint32_t *pcs, size_t n)
{
    if (n < 32) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = pcs[i];
            size_t j = i;
            for (; j > 0 && pcs[j - 1] > x; j--)
                pcs[j] = pcs[j - 1];
            pcs[j] = x;
        }
        return;
    }
    if (n >= r->prog.count / 256) {
        uint64_t *bits = (uint64_t *)(void *)r->stack; /* count words hold count bits */
        size_t words = (r->prog.count + 63) / 64;
        memset(bits, 0, words * sizeof *bits);
        for (size_t i = 0; i < n; i++)
            bits[pcs[i] / 64] |= (uint64_t)1 << (pcs[i] % 64);
        size_t out = 0;
        for (size_t w = 0; w < words; w++)
            for (uint64_t b = bits[w]; b; b &= b - 1)
                pcs[out++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b));
        return;
    }
    uint32_t *from = pcs, *to = r->stack;
    for (unsigned shift = 0; shift < 32 && (r->prog.count - 1) >> shift; shift += 8) {
        size_t at[257] = { 0 };
        for (size_t i = 0; i < n; i++)
            at[(from[i] >> shift & 0xff) + 1]++;
        for (size_t d = 1; d < 257; d++)
            at[d] += at[d - 1];
        for (size_t i = 0; i < n; i++)
            to[at[from[i] >> shift & 0xff]++] = from[i];
        uint32_t *swap = from;
        from = to;
        to = swap;
    }
    if (from != pcs)
        memcpy(pcs, from, n * sizeof *pcs);
}

static state *transition(rx *r, state *s, size_t k)
{
    uint8_t before = s->ctx, after = r->class_ctx[k];
    size_t flushes = r->stats.flushes;
    next_generation(r);
    uint32_t g = r->generation;
    size_t stepped = 0;
    bool found;
    /* the fresh thread's step, cached: a 10,000-way alternation's start
     * is 20,000 instructions, which every new state would walk again */
    start_step **slot = &r->starts[before * r->classes + k];
    if (*slot) {
        found = (*slot)->found;
        for (size_t i = 0; i < (*slot)->count; i++) {
            r->stepped_mark[(*slot)->pcs[i]] = g;
            r->pcs[stepped++] = (*slot)->pcs[i];
        }
    } else {
        r->mark[r->prog.start] = g;
        r->stack[0] = r->prog.start;
        found = closure(r, 1, k, before, after, &stepped);
        size_t size = sizeof(start_step) + stepped * sizeof(uint32_t);
        start_step *step = r->used + size + sizeof(chunk) + r->budget / 16 <= r->budget
                               ? arena_alloc(r, size)
                               : NULL; /* kept only while the budget has room */
        if (step) {
            step->found = found;
            step->count = (uint32_t)stepped;
            memcpy(step->pcs, r->pcs, stepped * sizeof *r->pcs);
            *slot = step;
        }
    }
    if (!found) {
        const uint32_t *pcs = state_pcs(r, s);
        size_t top = 0;
        for (size_t i = 0; i < s->count; i++)
            if (r->mark[pcs[i]] != g) {
                r->mark[pcs[i]] = g;
                r->stack[top++] = pcs[i];
            }
        found = closure(r, top, k, before, after, &stepped);
    }
    state *t;
    if (found) {
        t = &matched;
    } else if (k == r->newline) {
        t = line_start(r);
    } else {
        sort_pcs(r, r->pcs, stepped);
        t = intern(r, after, r->pcs, stepped);
    }
    if (t && r->stats.flushes == flushes)
        s->next[k] = t; /* s is gone if the cache was emptied */
    return t;
}

/* Follow s through text[*at, len) until a match: true with *at on the
 * byte before which it was seen (or len); false at the end with *s the
 * state there. *error on running out of memory. */
static bool run(rx *r, state **s, const uint8_t *text, size_t len, size_t *at, bool *error)
{
    state *cur = *s;
    for (size_t p = *at; p < len; p++) {
        size_t k = r->byte_class[text[p]];
        state *t = cur->next[k];
        if (!t) {
            t = transition(r, cur, k);
            if (!t) {
                *error = true;
                return false;
            }
        }
        if (t == &matched) {
            *at = p;
            return true;
        }
        cur = t;
    }
    *s = cur;
    *at = len;
    return false;
}

/* The end-of-line transition of s: 1 the line matched, 0 not, -1 error. */
static int at_line_end(rx *r, state *s)
{
    state *t = s->next[r->newline];
    if (!t)
        t = transition(r, s, r->newline);
    return !t ? -1 : t == &matched;
}

int rx_next_line(rx *r, const uint8_t *text, size_t len, size_t from, size_t *start, size_t *end)
{
    if (from >= len)
        return 0;
    state *s = line_start(r);
    if (!s)
        return -1;
    size_t at = from;
    bool error = false;
    if (!run(r, &s, text, len, &at, &error)) {
        if (error)
            return -1;
        if (text[len - 1] == '\n')
            return 0; /* after the last newline there is no line */
        int last = at_line_end(r, s);
        if (last <= 0)
            return last;
        at = len;
    }
    size_t line = at;
    while (line > from && text[line - 1] != '\n')
        line--;
    const uint8_t *newline = at < len ? memchr(text + at, '\n', len - at) : NULL;
    *start = line;
    *end = newline ? (size_t)(newline - text) : len;
    return 1;
}

int rx_line_matches(rx *r, const uint8_t *line, size_t len)
{
    state *s = line_start(r);
    if (!s)
        return -1;
    size_t at = 0;
    bool error = false;
    if (run(r, &s, line, len, &at, &error))
        return 1;
    return error ? -1 : at_line_end(r, s);
}

/* The byte classes: bytes in the same sets (and alike for the newline and
 * the word assertions) share one. */
static void make_classes(rx *r)
{
    uint16_t id[256] = { 0 }, renamed[512];
    size_t count = 1;
    rx_set word = { { 0 } }, newline = { { 0 } };
    newline.bits['\n' >> 6] |= (uint64_t)1 << ('\n' & 63);
    for (unsigned c = 0; c < 256; c++)
        if (rx_is_word((uint8_t)c))
            word.bits[c >> 6] |= (uint64_t)1 << (c & 63);
    size_t extra = r->prog.word_context ? 2 : 1;
    for (size_t i = 0; i < r->prog.set_count + extra; i++) {
        const rx_set *s = i < r->prog.set_count    ? &r->prog.sets[i]
                          : i == r->prog.set_count ? &newline
                                                   : &word;
        for (size_t j = 0; j < 2 * count; j++)
            renamed[j] = UINT16_MAX;
        size_t next = 0;
        for (unsigned c = 0; c < 256; c++) {
            size_t key = 2 * (size_t)id[c] + (rx_set_has(s, (uint8_t)c) ? 1u : 0u);
            if (renamed[key] == UINT16_MAX)
                renamed[key] = (uint16_t)next++;
            id[c] = renamed[key];
        }
        count = next;
    }
    r->classes = count;
    for (unsigned c = 0; c < 256; c++) {
        size_t k = id[c];
        r->byte_class[c] = (uint8_t)k;
        r->class_byte[k] = (uint8_t)c;
        r->class_ctx[k] = c == '\n'                                        ? CTX_LINE
                          : r->prog.word_context && rx_is_word((uint8_t)c) ? CTX_WORD
                                                                           : CTX_OTHER;
    }
    r->newline = r->byte_class['\n'];
}

int rx_new(rx **out, const char *pattern, size_t len, bool fold, size_t memory, char *error,
           size_t error_size)
{
    *out = NULL;
    if (memory < RX_MEMORY_MIN) {
        snprintf(error, error_size, "a regex memory budget under %zu bytes", RX_MEMORY_MIN);
        return -1;
    }
    rx *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    /* the program, its work space (four words a pc) and the cache's first
     * table take at most half the budget */
    size_t per_instruction = sizeof(rx_inst) + 4 * sizeof(uint32_t);
    if (rx_program_compile(&r->prog, pattern, len, fold, memory / 2 / per_instruction, error,
                           error_size) != 0) {
        free(r);
        return -1;
    }
    make_classes(r);
    size_t n = r->prog.count;
    r->mark = calloc(n, sizeof *r->mark);
    r->stepped_mark = calloc(n, sizeof *r->stepped_mark);
    r->stack = malloc(n * sizeof *r->stack);
    r->pcs = malloc(n * sizeof *r->pcs);
    r->table_capacity = 1024;
    r->table = calloc(r->table_capacity, sizeof *r->table);
    r->starts = calloc(3 * r->classes, sizeof *r->starts);
    r->budget = memory - n * per_instruction;
    r->used = r->table_capacity * sizeof *r->table;
    if (!r->mark || !r->stepped_mark || !r->stack || !r->pcs || !r->table || !r->starts) {
        rx_free(r);
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    r->stats.instructions = n;
    *out = r;
    return 0;
}

void rx_free(rx *r)
{
    if (!r)
        return;
    free_chunks(r->chunks);
    free_chunks(r->spare);
    free(r->table);
    free(r->starts);
    free(r->mark);
    free(r->stepped_mark);
    free(r->stack);
    free(r->pcs);
    rx_program_free(&r->prog);
    free(r);
}

void rx_get_stats(const rx *r, rx_stats *stats)
{
    *stats = r->stats;
}
