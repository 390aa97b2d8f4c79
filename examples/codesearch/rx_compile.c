/*
 * rx_compile.c - a grep -E pattern to a Thompson program (rx_internal.h).
 *
 * GNU grep checks a pattern's syntax with glibc's regex compiler and
 * matches it with gnulib's DFA, so what is accepted here, and the message
 * when it is not, follow glibc's RE_SYNTAX_EGREP parser, and what an
 * accepted pattern means follows the DFA's reading. The two differ in
 * corners, all followed here:
 *
 *   - a repetition operator with nothing before it (at the start, after
 *     '(' or '|') repeats the empty string: "*a" is "a";
 *   - an anchor can be repeated: "^*x" is "(^)*x", so x anywhere;
 *   - '{' that does not open a valid interval is a literal ("a{1", "a{x}"),
 *     but "{}", "{2,1}" and "{1,2,3}" are errors, and a count over 32767
 *     is "Regular expression too big";
 *   - ')' with no '(' open is a literal;
 *   - in a bracket, '\' is a literal, ']' first is a member, '-' is a
 *     range unless first or last, [:class:] [=c=] [.c.] (one byte each in
 *     the C locale); a range from a class, or backwards, is an error.
 *
 * Under -i a letter stands for both its cases (ASCII), a bracket's members
 * are folded before '^' negates them, and [:upper:] and [:lower:] mean
 * [:alpha:].
 *
 * The parse builds a tree in an array (n-ary concatenations and
 * alternations, so a 10,000-way alternation is one node, not 10,000 deep)
 * and gives every node the number of instructions it compiles to, summed
 * and multiplied bottom up with saturation: a pattern is refused by that
 * count before a single instruction is written, so "((a{999}){999}){999}"
 * costs its parse, not 10^9 instructions. Nesting is limited to
 * RX_DEPTH_MAX, which bounds the recursion of the parser and of the
 * compiler both.
 *
 * Compiling writes each node in front of the instruction it continues to,
 * back to front (emit(node, next) returns the node's entry), so no jump
 * needs patching:
 *
 *   x y          emit(x, emit(y, next))
 *   x|y          SPLIT(emit(x, next), emit(y, next))
 *   x{n,m}       x ... x (n times) then m-n times SPLIT(x -> the rest, next)
 *   x{n,}        x ... x (n times) then L: SPLIT(x -> L, next)
 *
 * A repetition is written out copy by copy, as grep's DFA does; that is
 * what makes its program, and so the time bound, grow with the count.
 */
#include "rx.h"

#include "posix_class.h"
#include "rx_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

enum { N_EMPTY, N_SET, N_ASSERT, N_CAT, N_ALT, N_REPEAT };

typedef struct node {
    uint8_t kind;
    uint8_t assertion; /* N_ASSERT */
    uint32_t set;      /* N_SET */
    uint32_t last;     /* N_CAT, N_ALT: the last child; N_REPEAT: the child */
    uint32_t prev;     /* the previous sibling */
    int32_t min, max;  /* N_REPEAT; max -1: no bound */
    uint64_t size;     /* instructions, saturated at the parser's cap */
} node;

typedef struct parser {
    const uint8_t *at, *end;
    bool fold;
    node *nodes;
    size_t count, capacity;
    rx_set *sets;
    size_t set_count, set_capacity;
    uint32_t *set_table; /* open addressing over sets, NONE when free */
    size_t set_table_capacity;
    int depth;
    uint64_t cap; /* sizes saturate here: one past the limit */
    bool word_context;
    char *error;
    size_t error_size;
    bool failed;
} parser;

/* glibc's messages, as grep prints them. */
static const char EBRACK[] = "Unmatched [, [^, [:, [., or [=";
static const char EPAREN[] = "Unmatched ( or \\(";
static const char BADBR[] = "Invalid content of \\{\\}";
static const char ERANGE[] = "Invalid range end";
static const char ESIZE[] = "Regular expression too big";
static const char ECTYPE[] = "Invalid character class name";
static const char ECOLLATE[] = "Invalid collation character";
static const char EESCAPE[] = "Trailing backslash";

static uint32_t fail(parser *p, const char *message)
{
    if (!p->failed)
        snprintf(p->error, p->error_size, "%s", message);
    p->failed = true;
    return NONE;
}

static uint64_t add_sat(const parser *p, uint64_t a, uint64_t b)
{
    return a + b > p->cap ? p->cap : a + b;
}

static uint64_t mul_sat(const parser *p, uint64_t a, uint64_t n)
{
    return n != 0 && a > p->cap / n ? p->cap : a * n > p->cap ? p->cap : a * n;
}

static uint32_t new_node(parser *p, uint8_t kind)
{
    if (p->count == p->capacity) {
        size_t capacity = p->capacity ? 2 * p->capacity : 64;
        node *grown = realloc(p->nodes, capacity * sizeof *grown);
        if (!grown)
            return fail(p, "out of memory");
        p->nodes = grown;
        p->capacity = capacity;
    }
    node *n = &p->nodes[p->count];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->last = n->prev = NONE;
    return (uint32_t)p->count++;
}

/* ---- byte sets ------------------------------------------------------- */

static void set_add(rx_set *s, unsigned c)
{
    s->bits[c >> 6] |= (uint64_t)1 << (c & 63);
}

static size_t set_hash(const rx_set *s)
{
    uint64_t h = 0;
    for (int i = 0; i < 4; i++)
        h = (h ^ s->bits[i]) * 0x9e3779b97f4a7c15u;
    return (size_t)(h >> 32);
}

/* The index of set s among the distinct sets, added if new. */
static uint32_t intern_set(parser *p, const rx_set *s)
{
    if (2 * (p->set_count + 1) > p->set_table_capacity) {
        size_t capacity = p->set_table_capacity ? 2 * p->set_table_capacity : 64;
        uint32_t *table = malloc(capacity * sizeof *table);
        if (!table)
            return fail(p, "out of memory");
        memset(table, 0xff, capacity * sizeof *table);
        for (size_t i = 0; i < p->set_count; i++) {
            size_t at = set_hash(&p->sets[i]) & (capacity - 1);
            while (table[at] != NONE)
                at = (at + 1) & (capacity - 1);
            table[at] = (uint32_t)i;
        }
        free(p->set_table);
        p->set_table = table;
        p->set_table_capacity = capacity;
    }
    size_t at = set_hash(s) & (p->set_table_capacity - 1);
    while (p->set_table[at] != NONE) {
        if (memcmp(&p->sets[p->set_table[at]], s, sizeof *s) == 0)
            return p->set_table[at];
        at = (at + 1) & (p->set_table_capacity - 1);
    }
    if (p->set_count == p->set_capacity) {
        size_t capacity = p->set_capacity ? 2 * p->set_capacity : 16;
        rx_set *grown = realloc(p->sets, capacity * sizeof *grown);
        if (!grown)
            return fail(p, "out of memory");
        p->sets = grown;
        p->set_capacity = capacity;
    }
    p->sets[p->set_count] = *s;
    p->set_table[at] = (uint32_t)p->set_count;
    return (uint32_t)p->set_count++;
}

static bool ascii_alpha(unsigned c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A node matching one byte of s (folded under -i; never a newline). */
static uint32_t set_node(parser *p, rx_set s)
{
    if (p->fold)
        for (unsigned c = 'A'; c <= 'z'; c++)
            if (ascii_alpha(c) && rx_set_has(&s, (uint8_t)c))
                set_add(&s, c ^ 0x20);
    s.bits['\n' >> 6] &= ~((uint64_t)1 << ('\n' & 63));
    uint32_t set = intern_set(p, &s);
    uint32_t n = set == NONE ? NONE : new_node(p, N_SET);
    if (n != NONE) {
        p->nodes[n].set = set;
        p->nodes[n].size = 1;
    }
    return n;
}

static uint32_t byte_node(parser *p, uint8_t c)
{
    rx_set s = { { 0 } };
    set_add(&s, c);
    return set_node(p, s);
}

/* \w \W \s \S, or '.' (any byte but the newline). */
static uint32_t class_node(parser *p, uint8_t which)
{
    rx_set s = { { 0 } };
    for (unsigned c = 0; c < 256; c++) {
        bool in = which == '.' ||
                  (which == 'w' || which == 'W' ? rx_is_word((uint8_t)c) : isspace((int)c) != 0);
        if (which == 'W' || which == 'S')
            in = !in;
        if (in)
            set_add(&s, c);
    }
    return set_node(p, s);
}

static uint32_t assert_node(parser *p, uint8_t assertion)
{
    uint32_t n = new_node(p, N_ASSERT);
    if (n != NONE) {
        p->nodes[n].assertion = assertion;
        p->nodes[n].size = 1;
    }
    p->word_context = p->word_context || assertion >= RX_WORD_BOUNDARY;
    return n;
}

static uint32_t empty_node(parser *p)
{
    return new_node(p, N_EMPTY);
}

/* ---- bracket expressions ---------------------------------------------- */

/* Merge the class named name[0, len) into s: false when there is none. */
static bool named_class(const uint8_t *name, size_t len, bool fold, rx_set *s)
{
    posix_class_test test = posix_class_named((const char *)name, len, fold);
    if (!test)
        return false;
    for (unsigned c = 0; c < 128; c++)
        if (test((int)c))
            set_add(s, c);
    return true;
}

enum { ELEM_BYTE, ELEM_CLASS, ELEM_EQUIV };

/* One element of a bracket at p->at: a byte (also [.c.]) in *byte, or a
 * class or [=c=] merged into s. Returns its kind, or -1 on an error. */
static int bracket_element(parser *p, rx_set *s, uint8_t *byte)
{
    const uint8_t *at = p->at;
    if (at[0] == '[' && at + 2 < p->end && (at[1] == ':' || at[1] == '.' || at[1] == '=')) {
        uint8_t delim = at[1];
        const uint8_t *name = at + 2, *close = name;
        while (close + 1 < p->end && !(close[0] == delim && close[1] == ']'))
            close++;
        size_t len = (size_t)(close - name);
        if (close + 1 >= p->end || len >= 32) {
            fail(p, EBRACK);
            return -1;
        }
        p->at = close + 2;
        if (delim == ':') {
            if (!named_class(name, len, p->fold, s)) {
                fail(p, ECTYPE);
                return -1;
            }
            return ELEM_CLASS;
        }
        if (len != 1) { /* the C locale has one-byte collating elements only */
            fail(p, ECOLLATE);
            return -1;
        }
        *byte = name[0];
        if (delim == '=')
            set_add(s, name[0]);
        return delim == '=' ? ELEM_EQUIV : ELEM_BYTE;
    }
    *byte = *p->at++;
    return ELEM_BYTE;
}

/* A bracket expression, after its '['. */
static uint32_t bracket(parser *p)
{
    rx_set s = { { 0 } };
    bool negate = p->at < p->end && *p->at == '^';
    p->at += negate;
    for (bool first = true;; first = false) {
        if (p->at >= p->end)
            return fail(p, EBRACK);
        if (*p->at == ']' && !first) {
            p->at++;
            break;
        }
        /* a '-' that is neither first nor last cannot start an element */
        if (*p->at == '-' && !first && p->at + 1 < p->end && p->at[1] != ']')
            return fail(p, ERANGE);
        uint8_t low = 0;
        int kind = bracket_element(p, &s, &low);
        if (kind < 0)
            return NONE;
        if (p->at >= p->end)
            return fail(p, EBRACK);
        bool range = *p->at == '-' && p->at + 1 < p->end && p->at[1] != ']';
        if (p->at + 1 >= p->end && *p->at == '-')
            return fail(p, EBRACK);
        if (!range) {
            if (kind == ELEM_BYTE)
                set_add(&s, low);
            continue;
        }
        if (kind != ELEM_BYTE)
            return fail(p, ERANGE);
        p->at++; /* the '-' */
        uint8_t high = 0;
        rx_set ignored = { { 0 } };
        int end_kind = bracket_element(p, &ignored, &high);
        if (end_kind < 0)
            return NONE;
        if (end_kind != ELEM_BYTE || high < low)
            return fail(p, ERANGE);
        for (unsigned c = low; c <= high; c++)
            set_add(&s, c);
    }
    if (p->fold)
        for (unsigned c = 'A'; c <= 'z'; c++)
            if (ascii_alpha(c) && rx_set_has(&s, (uint8_t)c))
                set_add(&s, c ^ 0x20);
    if (negate)
        for (int i = 0; i < 4; i++)
            s.bits[i] = ~s.bits[i];
    bool fold = p->fold;
    p->fold = false; /* folded above, before the negation */
    uint32_t n = set_node(p, s);
    p->fold = fold;
    return n;
}

/* ---- intervals ---------------------------------------------------------- */

/* The digits at *s up to '}' or ',': -1 none, -2 anything else in
 * between (or the pattern's end), else the number (capped past 32767). */
static long interval_number(const parser *p, const uint8_t **s)
{
    long n = -1;
    bool bad = false;
    for (; *s < p->end && **s != '}' && **s != ','; (*s)++) {
        if (**s < '0' || **s > '9')
            bad = true;
        else if (!bad)
            n = n < 0 ? **s - '0' : n * 10 + (**s - '0') > 32768 ? 32768 : n * 10 + (**s - '0');
    }
    return *s >= p->end || bad ? -2 : n;
}

/* At p->at (a '{'): 1 an interval {min,max} (max -1: no bound) ending
 * before *after; 0 a literal '{'; -1 an error. */
static int interval(parser *p, long *min, long *max, const uint8_t **after)
{
    const uint8_t *s = p->at + 1;
    long low = interval_number(p, &s);
    if (low == -2)
        return 0;
    if (low == -1) {
        if (*s != ',') {
            fail(p, BADBR); /* "{}" */
            return -1;
        }
        low = 0;
    }
    long high = low;
    if (*s == ',') {
        s++;
        high = interval_number(p, &s);
        if (high == -2)
            return 0;
        if (*s == ',') {
            fail(p, BADBR);
            return -1;
        }
    }
    s++; /* the '}' */
    if (high != -1 && low > high) {
        fail(p, BADBR);
        return -1;
    }
    if ((high == -1 ? low : high) > 32767) {
        fail(p, ESIZE);
        return -1;
    }
    *min = low;
    *max = high;
    *after = s;
    return 1;
}

/* At p->at: 1 and its bounds when a repetition operator starts there, 0
 * when none does, -1 on an error. */
static int repetition_operator(parser *p, long *min, long *max, const uint8_t **after)
{
    if (p->at >= p->end)
        return 0;
    *after = p->at + 1;
    switch (*p->at) {
    case '*':
        *min = 0, *max = -1;
        return 1;
    case '+':
        *min = 1, *max = -1;
        return 1;
    case '?':
        *min = 0, *max = 1;
        return 1;
    case '{':
        return interval(p, min, max, after);
    default:
        return 0;
    }
}

/* ---- the grammar -------------------------------------------------------- */

static uint32_t alternation(parser *p, int nest);

/* Append child to the n-ary node parent (N_CAT or N_ALT). */
static void add_child(parser *p, uint32_t parent, uint32_t child)
{
    node *n = &p->nodes[parent];
    p->nodes[child].prev = n->last;
    n->last = child;
    n->size = add_sat(p, n->size, p->nodes[child].size);
    if (n->kind == N_ALT && p->nodes[child].prev != NONE)
        n->size = add_sat(p, n->size, 1); /* a SPLIT */
}

static uint32_t atom(parser *p, int nest)
{
    uint8_t c = *p->at++;
    switch (c) {
    case '(': {
        if (++p->depth > RX_DEPTH_MAX) {
            char message[96];
            snprintf(message, sizeof message, "groups and repetitions nest more than %d deep",
                     RX_DEPTH_MAX);
            return fail(p, message);
        }
        uint32_t inner;
        if (p->at < p->end && *p->at == ')')
            inner = empty_node(p);
        else
            inner = alternation(p, nest + 1);
        if (inner == NONE)
            return NONE;
        if (p->at >= p->end || *p->at != ')')
            return fail(p, EPAREN);
        p->at++;
        p->depth--;
        return inner;
    }
    case '.':
        return class_node(p, '.');
    case '[':
        return bracket(p);
    case '^':
        return assert_node(p, RX_BOL);
    case '$':
        return assert_node(p, RX_EOL);
    case '\\':
        if (p->at >= p->end)
            return fail(p, EESCAPE);
        c = *p->at++;
        if (c >= '1' && c <= '9')
            return fail(p, "back-references (\\1 to \\9) cannot be matched in linear time and "
                           "are not supported; search with each \\N replaced by a copy of its "
                           "group (a pattern matching a superset of the lines), and filter "
                           "those lines with grep -E");
        switch (c) {
        case '`':
            return assert_node(p, RX_BOL);
        case '\'':
            return assert_node(p, RX_EOL);
        case '<':
            return assert_node(p, RX_WORD_START);
        case '>':
            return assert_node(p, RX_WORD_END);
        case 'b':
            return assert_node(p, RX_WORD_BOUNDARY);
        case 'B':
            return assert_node(p, RX_NOT_WORD_BOUNDARY);
        case 'w':
        case 'W':
        case 's':
        case 'S':
            return class_node(p, c);
        default:
            return byte_node(p, c); /* a stray backslash: grep warns, and matches c */
        }
    default:
        return byte_node(p, c); /* also '{' that opens no interval, ')' with no '(' */
    }
}

/* An atom and the repetition operators after it. at_start: at the start
 * of a branch, where an operator repeats the empty string. */
static uint32_t closure(parser *p, int nest, bool at_start)
{
    long min, max;
    const uint8_t *after;
    int op = at_start ? repetition_operator(p, &min, &max, &after) : 0;
    if (op < 0)
        return NONE;
    uint32_t x = op ? empty_node(p) : atom(p, nest);
    if (x == NONE)
        return NONE;
    bool bare = op || p->nodes[x].kind == N_ASSERT;
    bool repeated = false;
    int depth = p->depth;
    while ((op = repetition_operator(p, &min, &max, &after)) == 1) {
        p->at = after;
        repeated = true;
        if (++p->depth > RX_DEPTH_MAX) {
            char message[96];
            snprintf(message, sizeof message, "groups and repetitions nest more than %d deep",
                     RX_DEPTH_MAX);
            return fail(p, message);
        }
        uint32_t r = new_node(p, N_REPEAT);
        if (r == NONE)
            return NONE;
        node *n = &p->nodes[r];
        n->last = x;
        n->min = (int32_t)min;
        n->max = (int32_t)max;
        uint64_t s = p->nodes[x].size;
        if (max < 0)
            n->size = add_sat(p, mul_sat(p, s, (uint64_t)min + 1), 1);
        else
            n->size = add_sat(p, mul_sat(p, s, (uint64_t)max), (uint64_t)(max - min));
        x = r;
    }
    p->depth = depth;
    if (op < 0)
        return NONE;
    /* glibc reads such an operator as absent and the ')' after it as a
     * literal, grep's matcher as repeating the empty string: refused
     * rather than answered one way or the other */
    if (bare && repeated && nest > 0 && p->at < p->end && *p->at == ')')
        return fail(p, "a repetition operator with nothing to repeat before ')' "
                       "is read differently by grep's parser and matcher; remove it");
    return x;
}

static uint32_t branch(parser *p, int nest)
{
    uint32_t first = NONE, cat = NONE;
    while (p->at < p->end && *p->at != '|' && !(*p->at == ')' && nest > 0)) {
        uint32_t x = closure(p, nest, first == NONE);
        if (x == NONE)
            return NONE;
        if (first == NONE) {
            first = x;
            continue;
        }
        if (cat == NONE) {
            cat = new_node(p, N_CAT);
            if (cat == NONE)
                return NONE;
            add_child(p, cat, first);
        }
        add_child(p, cat, x);
    }
    return cat != NONE ? cat : first != NONE ? first : empty_node(p);
}

static uint32_t alternation(parser *p, int nest)
{
    uint32_t first = branch(p, nest);
    if (first == NONE || p->at >= p->end || *p->at != '|')
        return first;
    uint32_t alt = new_node(p, N_ALT);
    if (alt == NONE)
        return NONE;
    add_child(p, alt, first);
    while (p->at < p->end && *p->at == '|') {
        p->at++;
        uint32_t x = branch(p, nest);
        if (x == NONE)
            return NONE;
        add_child(p, alt, x);
    }
    return alt;
}

/* ---- the program ---------------------------------------------------------- */

typedef struct emitter {
    const parser *p;
    rx_inst *inst;
    size_t count;
} emitter;

static uint32_t put(emitter *e, uint8_t op, uint32_t out, uint32_t arg)
{
    e->inst[e->count] = (rx_inst){ out, arg, op };
    return (uint32_t)e->count++;
}

/* Write node n so that it continues at next; returns its entry. */
static uint32_t emit(emitter *e, uint32_t n, uint32_t next)
{
    const node *x = &e->p->nodes[n];
    switch (x->kind) {
    case N_SET:
        return put(e, RX_BYTE, next, x->set);
    case N_ASSERT:
        return put(e, RX_ASSERT, next, x->assertion);
    case N_CAT:
        for (uint32_t c = x->last; c != NONE; c = e->p->nodes[c].prev)
            next = emit(e, c, next);
        return next;
    case N_ALT: {
        uint32_t entry = emit(e, x->last, next);
        for (uint32_t c = e->p->nodes[x->last].prev; c != NONE; c = e->p->nodes[c].prev)
            entry = put(e, RX_SPLIT, emit(e, c, next), entry);
        return entry;
    }
    case N_REPEAT: {
        uint32_t entry = next;
        if (x->max < 0) {
            uint32_t loop = put(e, RX_SPLIT, 0, next);
            e->inst[loop].out = emit(e, x->last, loop);
            entry = loop;
        } else {
            for (int32_t i = x->min; i < x->max; i++)
                entry = put(e, RX_SPLIT, emit(e, x->last, entry), next);
        }
        for (int32_t i = 0; i < x->min; i++)
            entry = emit(e, x->last, entry);
        return entry;
    }
    default: /* N_EMPTY */
        return next;
    }
}

int rx_program_compile(rx_program *prog, const char *pattern, size_t len, bool fold,
                       size_t max_instructions, char *error, size_t error_size)
{
    memset(prog, 0, sizeof *prog);
    parser p = { 0 };
    p.at = (const uint8_t *)pattern;
    p.end = p.at + len;
    p.fold = fold;
    p.cap = (uint64_t)max_instructions + 1;
    p.error = error;
    p.error_size = error_size;
    int status = -1;
    if (memchr(pattern, '\n', len)) {
        fail(&p, "a newline in the pattern is not supported (grep reads it as two patterns)");
        goto done;
    }
    uint32_t root = alternation(&p, 0);
    if (root == NONE)
        goto done;
    /* the only way out of alternation at depth 0 is the pattern's end: a
     * ')' with no '(' is a literal there */
    uint64_t size = add_sat(&p, p.nodes[root].size, 1);
    if (size > max_instructions) {
        snprintf(error, error_size,
                 "the pattern compiles to %s%llu instructions, over the limit of %zu that its "
                 "memory budget sets (--regex-memory); give a larger budget or a smaller "
                 "pattern",
                 size >= p.cap ? "more than " : "",
                 (unsigned long long)(size >= p.cap ? max_instructions : size), max_instructions);
        goto done;
    }
    emitter e = { &p, malloc((size_t)size * sizeof(rx_inst)), 0 };
    if (!e.inst) {
        fail(&p, "out of memory");
        goto done;
    }
    uint32_t match = put(&e, RX_MATCH, 0, 0);
    prog->start = emit(&e, root, match);
    prog->inst = e.inst;
    prog->count = e.count;
    prog->sets = p.sets;
    prog->set_count = p.set_count;
    prog->word_context = p.word_context;
    p.sets = NULL;
    status = 0;
done:
    free(p.nodes);
    free(p.sets);
    free(p.set_table);
    return status;
}

void rx_program_free(rx_program *p)
{
    free(p->inst);
    free(p->sets);
    memset(p, 0, sizeof *p);
}
