/*
 * regex_plan.c - from a regular expression to the trigrams a matching line
 * must hold, after Russ Cox's "Regular Expression Matching with a Trigram
 * Index" (2012).
 *
 * The pattern is parsed (grep -E's syntax) and each sub-expression e gets
 * a summary of the strings it matches:
 *
 *   emptyable  e can match the empty string
 *   exact      when known: the whole (small) set of strings e matches
 *   prefix     otherwise: a set such that every match of e starts with
 *   suffix     one of them, and ends with one of them
 *   match      a plan every match of e satisfies
 *
 * and the summaries combine by the operators: a concatenation xy holds a
 * suffix of x followed by a prefix of y, so the trigrams of those joined
 * strings are needed; an alternation needs one side's plan or the other's;
 * e* and e? need nothing; e+ needs what e needs. The sets are kept small:
 * an exact set that would grow past SET_MAX strings becomes a prefix and a
 * suffix set (its trigrams moving into the plan), and prefixes and
 * suffixes are cut to two bytes, the most that can still join a trigram,
 * once their own trigrams are in the plan.
 *
 * The same pass finds what the final match can search for first: a small
 * set of strings at least one of which every match holds (required). A
 * sub-expression's candidate is its exact set when that lacks the empty
 * string, else the required set it inherited: a concatenation keeps the
 * better of its parts' (the longer shortest string, then the fewer
 * strings), an alternation the union of both sides' (none if a side has
 * none), e+ keeps e's and e* or e? has none.
 *
 * Soundness is the one rule: every step only forgets information (a
 * shorter prefix, a plan with fewer conditions), never adds a condition a
 * match might not meet. What the analysis does not read - back-references,
 * \w, long classes - it treats as "any text". Under -i every byte is
 * folded to lower case here and each trigram of the plan stands for the
 * OR of its case variants, as the index holds the bytes as they are.
 */
#include "regex_plan.h"

#include "posix_class.h"

#include "codesearch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define SET_MAX       16  /* strings in an exact, prefix or suffix set */
#define CLASS_MAX     16  /* bytes a class may have and still count exactly */
#define EXACT_LEN_MAX 256 /* longer exact strings become prefixes/suffixes */
#define CROSS_MAX     256 /* suffix x prefix pairs worth turning into trigrams */
#define DEPTH_MAX     200 /* nesting the parser follows before giving up */

typedef struct str {
    uint8_t *bytes;
    size_t len;
} str;

typedef struct strset {
    str *item;
    size_t count, capacity;
} strset;

typedef struct info {
    bool emptyable;
    bool exact_known;
    strset exact;          /* when exact_known */
    strset prefix, suffix; /* when not */
    plan *match;
    bool required_known;
    strset required; /* when required_known: every match holds one */
    bool tail_known;
    strset tail; /* when tail_known, not exact: every match ends with one,
                    kept whole (their last REGEX_REQUIRED_LEN bytes) */
} info;

typedef struct parser {
    const uint8_t *at, *end;
    bool fold;
    bool failed; /* the pattern is not read: the plan is ALL */
    bool nomem;
    int depth;
} parser;

/* ---- string sets ------------------------------------------------------ */

static void set_free(strset *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->item[i].bytes);
    free(s->item);
    *s = (strset){ NULL, 0, 0 };
}

/* Add the string a followed by b, unless already there. */
static bool set_add2(strset *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t len = alen + blen;
    for (size_t i = 0; i < s->count; i++)
        if (s->item[i].len == len &&
            (alen == 0 || memcmp(s->item[i].bytes, a, alen) == 0) && /* a, b NULL when empty */
            (blen == 0 || memcmp(s->item[i].bytes + alen, b, blen) == 0))
            return true;
    if (s->count == s->capacity) {
        size_t capacity = s->capacity ? s->capacity * 2 : 4;
        str *grown = realloc(s->item, capacity * sizeof *grown);
        if (!grown)
            return false;
        s->item = grown;
        s->capacity = capacity;
    }
    uint8_t *bytes = malloc(len + 1);
    if (!bytes)
        return false;
    if (alen)
        memcpy(bytes, a, alen);
    if (blen)
        memcpy(bytes + alen, b, blen);
    s->item[s->count++] = (str){ bytes, len };
    return true;
}

static bool set_add(strset *s, const uint8_t *a, size_t len)
{
    return set_add2(s, a, len, NULL, 0);
}

static bool set_union(strset *into, const strset *from)
{
    for (size_t i = 0; i < from->count; i++)
        if (!set_add(into, from->item[i].bytes, from->item[i].len))
            return false;
    return true;
}

/* Every string of a followed by every string of b. */
static bool set_cross(strset *out, const strset *a, const strset *b)
{
    for (size_t i = 0; i < a->count; i++)
        for (size_t j = 0; j < b->count; j++)
            if (!set_add2(out, a->item[i].bytes, a->item[i].len, b->item[j].bytes, b->item[j].len))
                return false;
    return true;
}

/* Keep at most keep bytes of each string: its first (from_end false) or
 * its last. */
static bool set_trim(strset *s, size_t keep, bool from_end)
{
    strset trimmed = { NULL, 0, 0 };
    for (size_t i = 0; i < s->count; i++) {
        const str *x = &s->item[i];
        size_t len = x->len < keep ? x->len : keep;
        if (!set_add(&trimmed, from_end ? x->bytes + x->len - len : x->bytes, len)) {
            set_free(&trimmed);
            return false;
        }
    }
    set_free(s);
    *s = trimmed;
    return true;
}

static size_t set_longest(const strset *s)
{
    size_t longest = 0;
    for (size_t i = 0; i < s->count; i++)
        longest = s->item[i].len > longest ? s->item[i].len : longest;
    return longest;
}

/* ---- trigram plans of strings ----------------------------------------- */

/* The trigram t (folded to lower case when fold) as a plan: under fold,
 * the OR of its case variants. */
static plan *trigram_plan(uint32_t t, bool fold)
{
    if (!fold)
        return plan_trigram(t);
    plan *any = plan_new(PLAN_NONE);
    uint8_t b[3] = { (uint8_t)(t >> 16), (uint8_t)(t >> 8), (uint8_t)t };
    for (unsigned variant = 0; variant < 8 && any; variant++) {
        uint8_t v[3];
        bool valid = true;
        for (int i = 0; i < 3; i++) {
            bool upper = variant >> i & 1;
            if (upper && !islower(b[i]))
                valid = false;
            v[i] = upper ? (uint8_t)toupper(b[i]) : b[i];
        }
        if (valid)
            any = plan_or(any, plan_trigram(codesearch_trigram(v)));
    }
    return any;
}

/* The plan of "holds the string a+b": the AND of its trigrams (ALL when it
 * is shorter than three bytes). */
static plan *string_plan(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, bool fold)
{
    uint8_t joined[8];
    const uint8_t *s = a;
    size_t len = alen + blen;
    if (blen) {
        if (len > sizeof joined)
            return plan_new(PLAN_ALL); /* callers join only short strings */
        memcpy(joined, a, alen);
        memcpy(joined + alen, b, blen);
        s = joined;
    }
    plan *all = plan_new(PLAN_ALL);
    for (size_t i = 0; i + 2 < len && all; i++)
        all = plan_and(all, trigram_plan(codesearch_trigram(s + i), fold));
    return all;
}

/* "holds one of the strings of s". */
static plan *set_plan(const strset *s, bool fold)
{
    plan *any = plan_new(PLAN_NONE);
    for (size_t i = 0; i < s->count && any; i++)
        any = plan_or(any, string_plan(s->item[i].bytes, s->item[i].len, NULL, 0, fold));
    return any;
}

/* "holds x+y for some x of a and y of b": only the trigrams that cross the
 * join are new, so the last two bytes of x and the first two of y do. */
static plan *cross_plan(const strset *a, const strset *b, bool fold)
{
    if (a->count * b->count > CROSS_MAX)
        return plan_new(PLAN_ALL);
    plan *any = plan_new(PLAN_NONE);
    for (size_t i = 0; i < a->count && any; i++)
        for (size_t j = 0; j < b->count && any; j++) {
            const str *x = &a->item[i], *y = &b->item[j];
            size_t xlen = x->len < 2 ? x->len : 2, ylen = y->len < 2 ? y->len : 2;
            any = plan_or(any, string_plan(x->bytes + x->len - xlen, xlen, y->bytes, ylen, fold));
        }
    return any;
}

/* ---- summaries -------------------------------------------------------- */

static void info_free(info *x)
{
    set_free(&x->exact);
    set_free(&x->prefix);
    set_free(&x->suffix);
    set_free(&x->required);
    x->required_known = false;
    set_free(&x->tail);
    x->tail_known = false;
    plan_free(x->match);
    x->match = NULL;
}

/* ---- required strings ------------------------------------------------- */

static size_t set_shortest(const strset *s)
{
    size_t shortest = SIZE_MAX;
    for (size_t i = 0; i < s->count; i++)
        shortest = s->item[i].len < shortest ? s->item[i].len : shortest;
    return shortest;
}

/* Whether a is the better set to search for: its shortest string longer,
 * or as long in fewer strings. */
static bool required_better(const strset *a, const strset *b)
{
    if (!a || a->count == 0 || set_shortest(a) == 0)
        return false; /* an empty string is held by everything */
    if (!b || b->count == 0)
        return true;
    size_t la = set_shortest(a), lb = set_shortest(b);
    return la > lb || (la == lb && a->count < b->count);
}

/* The best of x's sets every match holds one of: its exact set, or its
 * prefix or suffix set (every match starts or ends with one), or the
 * required set it inherited. */
static const strset *required_of(const info *x)
{
    const strset *best = x->required_known ? &x->required : NULL;
    const strset *own[4] = { x->exact_known ? &x->exact : NULL, x->exact_known ? NULL : &x->prefix,
                             x->exact_known ? NULL : &x->suffix,
                             !x->exact_known && x->tail_known ? &x->tail : NULL };
    for (int i = 0; i < 4; i++)
        if (own[i] && required_better(own[i], best))
            best = own[i];
    return best && best->count > 0 && set_shortest(best) > 0 ? best : NULL;
}

/* Keep x's best set as its required one before simplify cuts its sets. */
static bool required_keep(info *x)
{
    const strset *best = required_of(x);
    if (!best || best == &x->required)
        return true;
    strset kept = { NULL, 0, 0 };
    if (!set_union(&kept, best)) {
        set_free(&kept);
        return false;
    }
    set_free(&x->required);
    x->required = kept;
    x->required_known = true;
    return true;
}

/* The strings every match of x ends with, whole: its exact set, or its
 * tail; NULL when not known. */
static const strset *ends_whole(const info *x)
{
    return x->exact_known ? &x->exact : x->tail_known ? &x->tail : NULL;
}

/* r's tail: every string of a (NULL: any text) followed by every string of
 * b, or b alone when there would be too many; cut to their last
 * REGEX_REQUIRED_LEN bytes. */
static bool tail_cross(info *r, const strset *a, const strset *b)
{
    r->tail_known = true;
    bool ok =
        a && a->count * b->count <= SET_MAX ? set_cross(&r->tail, a, b) : set_union(&r->tail, b);
    return ok && set_trim(&r->tail, REGEX_REQUIRED_LEN, true);
}

/* Set r's required set to a copy of from (NULL: none). */
static bool required_set(info *r, const strset *from)
{
    set_free(&r->required);
    r->required_known = from != NULL;
    return !from || set_union(&r->required, from);
}

/* Matches exactly the strings added after (exact, nothing yet). */
static bool info_exact(info *x)
{
    *x = (info){ 0 };
    x->exact_known = true;
    x->match = plan_new(PLAN_ALL);
    return x->match != NULL;
}

/* Any text (emptyable) or any one byte: nothing known. */
static bool info_any(info *x, bool emptyable)
{
    *x = (info){ 0 };
    x->emptyable = emptyable;
    x->match = plan_new(PLAN_ALL);
    x->tail_known = true;
    return x->match && set_add(&x->prefix, NULL, 0) && set_add(&x->suffix, NULL, 0) &&
           set_add(&x->tail, NULL, 0);
}

static bool info_empty(info *x)
{
    if (!info_exact(x))
        return false;
    x->emptyable = true;
    return set_add(&x->exact, NULL, 0);
}

/* Give up the exact set: its trigrams join the plan, and it becomes the
 * prefix and suffix sets. */
static bool make_inexact(info *x, bool fold)
{
    if (!x->exact_known)
        return true;
    if (!required_keep(x))
        return false;
    set_free(&x->tail);
    x->tail_known = true;
    if (!set_union(&x->tail, &x->exact) || !set_trim(&x->tail, REGEX_REQUIRED_LEN, true))
        return false;
    x->match = plan_and(x->match, set_plan(&x->exact, fold));
    x->exact_known = false;
    set_free(&x->prefix);
    set_free(&x->suffix);
    bool ok = set_union(&x->prefix, &x->exact) && set_union(&x->suffix, &x->exact);
    set_free(&x->exact);
    return ok && x->match != NULL;
}

/* Cut a prefix or suffix set to strings of two bytes, its trigrams first
 * joining the plan; cut further when it is still too large. */
static bool trim_affix(info *x, strset *s, bool suffix, bool fold)
{
    if (set_longest(s) > 2) {
        x->match = plan_and(x->match, set_plan(s, fold));
        if (!x->match || !set_trim(s, 2, suffix))
            return false;
    }
    for (size_t keep = 1; s->count > SET_MAX; keep--)
        if (!set_trim(s, keep, suffix))
            return false;
    return true;
}

static bool simplify(info *x, bool fold)
{
    if (!required_keep(x))
        return false;
    if (x->exact_known && (x->exact.count > SET_MAX || set_longest(&x->exact) > EXACT_LEN_MAX))
        if (!make_inexact(x, fold))
            return false;
    if (x->exact_known)
        return true;
    return trim_affix(x, &x->prefix, false, fold) && trim_affix(x, &x->suffix, true, fold);
}

/* The set every match starts (or ends) with. */
static const strset *starts(const info *x)
{
    return x->exact_known ? &x->exact : &x->prefix;
}

static const strset *ends(const info *x)
{
    return x->exact_known ? &x->exact : &x->suffix;
}

/* x followed by y, into x; y is consumed. */
static bool concat(info *x, info *y, bool fold)
{
    info r = { 0 };
    r.emptyable = x->emptyable && y->emptyable;
    r.match = plan_and(x->match, y->match);
    x->match = y->match = NULL;
    const strset *rx = required_of(x), *ry = required_of(y);
    bool ok = r.match != NULL && required_set(&r, required_better(ry, rx) ? ry : rx);
    if (ok && x->exact_known && y->exact_known && x->exact.count * y->exact.count <= SET_MAX) {
        r.exact_known = true;
        ok = set_cross(&r.exact, &x->exact, &y->exact);
    } else if (ok) {
        r.match = plan_and(r.match, cross_plan(ends(x), starts(y), fold));
        ok = r.match != NULL;
        if (ok && x->exact_known && x->exact.count * starts(y)->count <= SET_MAX)
            ok = set_cross(&r.prefix, &x->exact, starts(y));
        else if (ok)
            ok = set_union(&r.prefix, starts(x));
        if (ok && y->exact_known && ends(x)->count * y->exact.count <= SET_MAX)
            ok = set_cross(&r.suffix, ends(x), &y->exact);
        else if (ok)
            ok = set_union(&r.suffix, ends(y));
        if (ok && y->exact_known)
            ok = tail_cross(&r, ends_whole(x), &y->exact);
        else if (ok && y->tail_known)
            ok = tail_cross(&r, NULL, &y->tail);
        /* an exact side's own trigrams, which the affixes may lose */
        if (ok && x->exact_known)
            r.match = plan_and(r.match, set_plan(&x->exact, fold));
        if (ok && y->exact_known)
            r.match = plan_and(r.match, set_plan(&y->exact, fold));
        ok = ok && r.match != NULL;
    }
    info_free(x);
    info_free(y);
    *x = r;
    return ok && simplify(x, fold);
}

/* x or y, into x; y is consumed. */
static bool alternate(info *x, info *y, bool fold)
{
    info r = { 0 };
    r.emptyable = x->emptyable || y->emptyable;
    const strset *rx = required_of(x), *ry = required_of(y);
    bool ok = true;
    if (rx && ry && rx->count + ry->count <= SET_MAX) {
        r.required_known = true;
        ok = set_union(&r.required, rx) && set_union(&r.required, ry);
    }
    if (x->exact_known && y->exact_known && x->exact.count + y->exact.count <= SET_MAX) {
        r.exact_known = true;
        r.match = plan_or(x->match, y->match);
        ok = ok && r.match && set_union(&r.exact, &x->exact) && set_union(&r.exact, &y->exact);
    } else {
        ok = ok && make_inexact(x, fold) && make_inexact(y, fold);
        if (ok && x->tail_known && y->tail_known && x->tail.count + y->tail.count <= SET_MAX) {
            r.tail_known = true;
            ok = set_union(&r.tail, &x->tail) && set_union(&r.tail, &y->tail);
        }
        r.match = plan_or(x->match, y->match);
        ok = ok && r.match && set_union(&r.prefix, &x->prefix) &&
             set_union(&r.prefix, &y->prefix) && set_union(&r.suffix, &x->suffix) &&
             set_union(&r.suffix, &y->suffix);
    }
    x->match = y->match = NULL;
    info_free(x);
    info_free(y);
    *x = r;
    return ok && simplify(x, fold);
}

/* x repeated min to max times (max < 0: no bound), into x. */
static bool repeat(info *x, long min, long max, bool fold)
{
    if (min == 0 && max == 0) {
        info_free(x);
        return info_empty(x);
    }
    if (min == 0 && max == 1 && x->exact_known) { /* x? */
        plan_free(x->match);
        x->match = plan_new(PLAN_ALL);
        x->emptyable = true;
        return x->match && required_set(x, NULL) && set_add(&x->exact, NULL, 0) &&
               simplify(x, fold);
    }
    if (min == 0) { /* may be absent: nothing needed */
        info_free(x);
        return info_any(x, true);
    }
    if (min == 1 && max == 1)
        return true;
    /* x+ and x{m,n}, m >= 1: a match starts and ends with x's and holds x */
    return make_inexact(x, fold) && simplify(x, fold);
}

/* ---- the parser ------------------------------------------------------- */

static bool parse_alternation(parser *p, info *out);

/* One byte, folded under -i. */
static bool literal(parser *p, info *out, uint8_t c)
{
    if (p->fold)
        c = (uint8_t)tolower(c);
    return info_exact(out) && set_add(&out->exact, &c, 1);
}

/* A set of bytes as one position: exact when small. */
static bool byte_class(parser *p, info *out, const bool member[256])
{
    bool folded[256] = { false };
    size_t count = 0;
    for (int c = 0; c < 256; c++)
        if (member[c]) {
            int f = p->fold ? tolower(c) : c;
            count += !folded[f];
            folded[f] = true;
        }
    if (count > CLASS_MAX)
        return info_any(out, false);
    if (!info_exact(out))
        return false;
    for (int c = 0; c < 256; c++) {
        uint8_t b = (uint8_t)c;
        if (folded[c] && !set_add(&out->exact, &b, 1))
            return false;
    }
    return true;
}

static bool named_class(const char *name, size_t len, bool member[256])
{
    posix_class_test test = posix_class_named(name, len, false);
    if (!test)
        return false;
    for (int c = 0; c < 256; c++)
        member[c] = member[c] || test(c);
    return true;
}

/* A bracket expression, after its '['. */
static bool bracket(parser *p, info *out)
{
    bool member[256] = { false };
    bool negate = p->at < p->end && *p->at == '^';
    p->at += negate;
    bool first = true;
    for (;;) {
        if (p->at >= p->end) {
            p->failed = true;
            return info_any(out, false);
        }
        uint8_t c = *p->at;
        if (c == ']' && !first) {
            p->at++;
            break;
        }
        first = false;
        int low;
        if (c == '[' && p->at + 1 < p->end &&
            (p->at[1] == ':' || p->at[1] == '=' || p->at[1] == '.')) {
            uint8_t kind = p->at[1];
            const uint8_t *name = p->at + 2, *close = name;
            while (close + 1 < p->end && !(close[0] == kind && close[1] == ']'))
                close++;
            if (close + 1 >= p->end) {
                p->failed = true;
                return info_any(out, false);
            }
            p->at = close + 2;
            size_t len = (size_t)(close - name);
            if (kind == ':') {
                if (!named_class((const char *)name, len, member)) {
                    p->failed = true;
                    return info_any(out, false);
                }
                continue;
            }
            if (len != 1) { /* a multi-character collating element */
                p->failed = true;
                return info_any(out, false);
            }
            low = name[0];
        } else {
            low = c;
            p->at++;
        }
        int high = low;
        if (p->at + 1 < p->end && p->at[0] == '-' && p->at[1] != ']') {
            high = p->at[1];
            p->at += 2;
            if (high == '[') { /* a range ending in [.x.]: not read */
                p->failed = true;
                return info_any(out, false);
            }
        }
        for (int b = low; b <= high; b++)
            member[b] = true;
    }
    if (negate)
        for (int b = 0; b < 256; b++)
            member[b] = !member[b];
    return byte_class(p, out, member);
}

/* An interval {m}, {m,}, {,n}, {m,n} at p->at (on its '{'): true and its
 * bounds when it is one, else false (grep -E then reads '{' as a byte). */
static bool interval(const parser *p, long *min, long *max, const uint8_t **after)
{
    const uint8_t *s = p->at + 1;
    long a = -1, b = -1;
    while (s < p->end && isdigit(*s) && a < 100000)
        a = (a < 0 ? 0 : a * 10) + (*s++ - '0');
    bool comma = s < p->end && *s == ',';
    if (comma) {
        s++;
        while (s < p->end && isdigit(*s) && b < 100000)
            b = (b < 0 ? 0 : b * 10) + (*s++ - '0');
    }
    if (s >= p->end || *s != '}' || (a < 0 && b < 0 && !comma))
        return false;
    *min = a < 0 ? 0 : a;
    *max = comma ? b : a;
    *after = s + 1;
    return true;
}

static bool atom(parser *p, info *out)
{
    uint8_t c = *p->at++;
    switch (c) {
    case '(': {
        if (++p->depth > DEPTH_MAX) {
            p->failed = true;
            return info_any(out, true);
        }
        if (!parse_alternation(p, out))
            return false;
        p->depth--;
        if (p->at >= p->end || *p->at != ')')
            p->failed = true;
        else
            p->at++;
        return true;
    }
    case '.':
        return info_any(out, false);
    case '[':
        return bracket(p, out);
    case '^':
    case '$':
        return info_empty(out);
    case '*':
    case '+':
    case '?':
        /* an operator with nothing to repeat: read as "anything" whatever
         * grep makes of it */
        return info_any(out, true);
    case '{': {
        long min, max;
        const uint8_t *after;
        p->at--; /* interval() reads from the '{' */
        bool is_interval = interval(p, &min, &max, &after);
        p->at++;
        if (is_interval) {
            p->at = after;
            return info_any(out, true);
        }
        return literal(p, out, c);
    }
    case '\\':
        if (p->at >= p->end) {
            p->failed = true;
            return info_any(out, true);
        }
        c = *p->at++;
        if (strchr("wWsS", c))
            return info_any(out, false);
        if (strchr("bB<>`'", c))
            return info_empty(out);
        if (c >= '1' && c <= '9') /* a back-reference */
            return info_any(out, true);
        return literal(p, out, c);
    default:
        return literal(p, out, c);
    }
}

static bool parse_repetition(parser *p, info *out)
{
    if (!atom(p, out))
        return false;
    while (p->at < p->end && !p->failed) {
        long min, max;
        const uint8_t *after = p->at + 1;
        if (*p->at == '*')
            min = 0, max = -1;
        else if (*p->at == '+')
            min = 1, max = -1;
        else if (*p->at == '?')
            min = 0, max = 1;
        else if (*p->at != '{' || !interval(p, &min, &max, &after))
            break;
        p->at = after;
        if (!repeat(out, min, max, p->fold))
            return false;
    }
    return true;
}

static bool parse_concatenation(parser *p, info *out)
{
    if (!info_empty(out))
        return false;
    while (p->at < p->end && *p->at != '|' && *p->at != ')' && !p->failed) {
        info next;
        if (!parse_repetition(p, &next)) {
            info_free(&next);
            return false;
        }
        if (!concat(out, &next, p->fold))
            return false;
    }
    return true;
}

static bool parse_alternation(parser *p, info *out)
{
    if (!parse_concatenation(p, out))
        return false;
    while (p->at < p->end && *p->at == '|' && !p->failed) {
        p->at++;
        info next;
        if (!parse_concatenation(p, &next)) {
            info_free(&next);
            return false;
        }
        if (!alternate(out, &next, p->fold))
            return false;
    }
    return true;
}

/* Copy x's required strings out (none when it has none, or one of them is
 * empty: then nothing can be searched for). */
static void required_out(regex_required *out, const info *x)
{
    out->count = 0;
    const strset *s = required_of(x);
    if (!s || s->count > REGEX_REQUIRED_MAX || set_shortest(s) == 0)
        return;
    for (size_t i = 0; i < s->count; i++) {
        size_t len = s->item[i].len < REGEX_REQUIRED_LEN ? s->item[i].len : REGEX_REQUIRED_LEN;
        memcpy(out->bytes[i], s->item[i].bytes, len);
        out->len[i] = len;
    }
    out->count = s->count;
}

plan *regex_plan(const char *pattern, size_t len, bool fold, regex_required *required)
{
    if (required)
        required->count = 0;
    parser p = { (const uint8_t *)pattern, (const uint8_t *)pattern + len, fold, false, false, 0 };
    info x = { 0 };
    bool ok = parse_alternation(&p, &x);
    if (ok && p.at != p.end)
        p.failed = true; /* an unmatched ')' */
    plan *result = NULL;
    if (ok && !p.failed) {
        if (x.exact_known) {
            result = plan_and(x.match, set_plan(&x.exact, fold));
        } else {
            result = plan_and(x.match, set_plan(&x.prefix, fold));
            result = plan_and(result, set_plan(&x.suffix, fold));
        }
        x.match = NULL;
        if (required && !fold)
            required_out(required, &x);
    } else if (ok) {
        result = plan_new(PLAN_ALL);
    }
    info_free(&x);
    return result;
}
