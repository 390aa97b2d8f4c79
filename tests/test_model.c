/*
 * A model-based test of every filter family that deletes: the cuckoo filter
 * (amq/cuckoo.h) and the counting Bloom filter (amq/bloom.h), each driven
 * by random sequences of operations beside an exact model, a multiset (key
 * index -> the times the key was added and not removed).
 *
 * The invariant: a key added k times and removed at most k times answers
 * "maybe" (no false negative), and its count is never below its true count
 * (a counting filter's never below the smaller of it and the counter
 * maximum, where a counter saturates). Around it, what each call promises:
 *   - add: AMQ_OK adds a copy; AMQ_EFULL or AMQ_ENOMEM changes nothing (the
 *     filter's keys and the key's count stay). A growing cuckoo filter
 *     answers AMQ_EFULL only with AMQ_CUCKOO_MAX_TABLES tables or when its
 *     next table would pass AMQ_CUCKOO_MAX_BUCKETS, so one key added again
 *     and again never makes it refuse other keys; one that does not grow
 *     only when it is full (amq_cuckoo_full);
 *   - add-once (amq_cuckoo_add_unique, amq_add_unique for the counting
 *     filter, which has no typed one): 1 stored one copy of a key the model
 *     does not hold, 0 stored nothing and the key answers "maybe";
 *   - remove of a held key: AMQ_OK. Of a key the model does not hold only
 *     when it answers "no" (removing a false positive legitimately takes
 *     another key's copy): AMQ_ENOTFOUND, nothing changed;
 *   - query and count agree with each other and with the generic handle;
 *     the cuckoo filter's keys equal the model's total after every call;
 *   - save and load through the generic handle (amq_save_to_memory,
 *     amq_load_from_memory): the loaded filter answers contains and count
 *     as the saved one for every key of the universe, and the sequence goes
 *     on with it;
 *   - merge of two counting filters of the same parameters: the model is
 *     the sum.
 * Each operation checks its key and one held key picked at random; every
 * key of the universe is checked at the end of a sequence, after each
 * save-load and after each merge.
 *
 * A sequence's keys are a few thousand, picked with a Zipf-like skew, plus
 * a hot key added 100 to 500 times among the others (what made a growing
 * cuckoo filter refuse every key). The grid: cuckoo filters of bucket size
 * 2, 4, 8, fingerprints of 4, 7, 8, 12, 16, 18 bits and growth 0, 1, 2, 16,
 * semi-sorted ones (b = 4, f = 5, 8, 12, 16) of growth 0 and 2, each at
 * capacities 9, 50, 1000 and 5000, so tables fill, grow and drain; counting
 * filters of 4- and 8-bit counters, some of them small enough to saturate.
 *
 * A failing sequence is shrunk by delta debugging (chunks of operations
 * dropped while the same kind of failure persists, the chunk halved when
 * none can go) to a reproducer, printed and written to model-failures/ in
 * the working directory ($AMQ_TEST_MODEL_FAILURES when set) in the text
 * format of tests/data/model/ *.txt, whose files this program replays every
 * run (one per bug found):
 *
 *   # what it reproduces, and its parameters (a line starting with # is a comment)
 *   params cuckoo b=2 f=8 growth=1 capacity=1024 semi=0 kicks=20 seed=0
 *   params counting bits=4 capacity=50 counters=256 hashes=3 p=0.01 seed=7
 *   add KEY             one copy (amq_cuckoo_add, amq_counting_bloom_add)
 *   add_once KEY        amq_cuckoo_add_unique; amq_add_unique (counting)
 *   remove KEY          held: must remove; else, when it answers "no", must
 *                       answer AMQ_ENOTFOUND; else skipped
 *   query KEY           contains;  count KEY: count
 *   saveload            save, load, compare every key, go on with the loaded one
 *   other_add KEY       counting: add to a second filter of the same parameters
 *   merge               counting: merge the second filter in and empty it
 *   check               check every key of the universe
 *   expect adds_ok      from here on every add must answer AMQ_OK
 *   expect tables N     the cuckoo filter has N tables now
 *   expect memory_below N   its memory_bytes is below N now
 * A KEY is N (the test key amq_test_make_key(seed, 0, N)), A..B (each of
 * the keys A to B in turn) or "text" (those bytes: no space or quote); a
 * line ending in xN is done N times. A params line may end in keys=N: the
 * universe, which the checks of every key cover, then holds keys 0 to N-1
 * at least (else those the operations name). A sequence replays exactly
 * from its parameters and operations (numbered from 1 in the messages):
 * the filter's own randomness comes from its hasher (seeded with seed) and
 * its capacity, and the key checked beside each operation is drawn from a
 * generator seeded with seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static uint64_t seed;
/* Operations run by the random sequences and the replays (not by shrinking). */
static uint64_t total_operations;

/* ---- parameters ------------------------------------------------------------------ */

typedef enum model_family { FAMILY_CUCKOO, FAMILY_COUNTING } model_family;

typedef struct model_params {
    model_family family;
    uint64_t capacity;
    uint64_t seed; /* of the keys and of the filter's XXH3 hasher */
    uint32_t keys; /* the universe: keys 0 .. keys-1 at least (0: those the operations name) */
    /* cuckoo */
    uint32_t bucket_size, fingerprint_bits, growth, max_kicks;
    bool semi_sort;
    /* counting Bloom */
    uint32_t counter_bits, hashes;
    uint64_t counters;
    double fpr;
} model_params;

static void params_text(char *out, size_t size, const model_params *p)
{
    char keys[32] = "";
    if (p->keys)
        snprintf(keys, sizeof keys, " keys=%" PRIu32, p->keys);
    if (p->family == FAMILY_CUCKOO)
        snprintf(out, size,
                 "cuckoo b=%" PRIu32 " f=%" PRIu32 " growth=%" PRIu32 " capacity=%" PRIu64
                 " semi=%d kicks=%" PRIu32 " seed=%" PRIu64 "%s",
                 p->bucket_size, p->fingerprint_bits, p->growth, p->capacity, p->semi_sort ? 1 : 0,
                 p->max_kicks, p->seed, keys);
    else
        snprintf(out, size,
                 "counting bits=%" PRIu32 " capacity=%" PRIu64 " counters=%" PRIu64
                 " hashes=%" PRIu32 " p=%.15g seed=%" PRIu64 "%s",
                 p->counter_bits, p->capacity, p->counters, p->hashes, p->fpr, p->seed, keys);
}

/* ---- operations ------------------------------------------------------------------- */

typedef enum op_kind {
    OP_ADD,
    OP_ADD_ONCE,
    OP_REMOVE,
    OP_QUERY,
    OP_COUNT,
    OP_OTHER_ADD,
    OP_SAVELOAD,
    OP_MERGE,
    OP_CHECK,
    OP_EXPECT_ADDS_OK,
    OP_EXPECT_TABLES,
    OP_EXPECT_MEMORY_BELOW,
    OP_KINDS
} op_kind;

static const char *const op_names[OP_KINDS] = {
    "add",      "add_once", "remove", "query",          "count",         "other_add",
    "saveload", "merge",    "check",  "expect adds_ok", "expect tables", "expect memory_below",
};

static bool op_has_key(uint32_t kind)
{
    return kind <= OP_OTHER_ADD;
}

static bool op_has_number(uint32_t kind)
{
    return kind == OP_EXPECT_TABLES || kind == OP_EXPECT_MEMORY_BELOW;
}

typedef struct model_op {
    uint32_t kind;   /* op_kind */
    uint32_t key;    /* index into the universe, for a keyed kind */
    uint64_t number; /* of an expectation */
    uint32_t line;   /* of a file's operation; 0 otherwise */
} model_op;

typedef struct op_list {
    model_op *ops;
    size_t count, room;
} op_list;

static void ops_push(op_list *list, model_op op)
{
    if (list->count == list->room) {
        list->room = list->room ? 2 * list->room : 1024;
        list->ops = realloc(list->ops, list->room * sizeof *list->ops);
        assert_non_null(list->ops);
    }
    list->ops[list->count++] = op;
}

static void ops_copy(op_list *to, const model_op *ops, size_t count)
{
    to->count = 0;
    for (size_t i = 0; i < count; i++)
        ops_push(to, ops[i]);
}

/* ---- the key universe --------------------------------------------------------------- */

/* Keys 0 .. generated-1 are amq_test_make_key(seed, 0, i); the rest, a
 * file's "text" keys, are their bytes. */
typedef struct universe {
    uint32_t count, generated;
    amq_test_key *keys;
    char **literals; /* count - generated of them */
    const void **pointers;
    size_t *lens;
} universe;

/* Takes the literals (malloc'd strings in a malloc'd array) over. */
static void universe_make(universe *u, uint64_t key_seed, uint32_t generated, char **literals,
                          uint32_t literal_count)
{
    u->generated = generated;
    u->count = generated + literal_count;
    u->keys = malloc((generated ? generated : 1) * sizeof *u->keys);
    u->pointers = malloc((u->count ? u->count : 1) * sizeof *u->pointers);
    u->lens = malloc((u->count ? u->count : 1) * sizeof *u->lens);
    assert_true(u->keys && u->pointers && u->lens);
    u->literals = literals;
    for (uint32_t i = 0; i < generated; i++) {
        u->keys[i] = amq_test_make_key(key_seed, 0, i);
        u->pointers[i] = &u->keys[i];
        u->lens[i] = sizeof u->keys[i];
    }
    for (uint32_t i = 0; i < literal_count; i++) {
        u->pointers[generated + i] = literals[i];
        u->lens[generated + i] = strlen(literals[i]);
    }
}

static void universe_free(universe *u)
{
    for (uint32_t i = u->generated; i < u->count; i++)
        free(u->literals[i - u->generated]);
    free(u->literals);
    free(u->keys);
    free(u->pointers);
    free(u->lens);
    memset(u, 0, sizeof *u);
}

static void key_text(char *out, size_t size, const universe *u, uint32_t key)
{
    if (key < u->generated)
        snprintf(out, size, "%" PRIu32, key);
    else
        snprintf(out, size, "\"%s\"", u->literals[key - u->generated]);
}

static void op_text(char *out, size_t size, const universe *u, const model_op *op)
{
    char key[128];
    if (op_has_key(op->kind)) {
        key_text(key, sizeof key, u, op->key);
        snprintf(out, size, "%s %s", op_names[op->kind], key);
    } else if (op_has_number(op->kind)) {
        snprintf(out, size, "%s %" PRIu64, op_names[op->kind], op->number);
    } else {
        snprintf(out, size, "%s", op_names[op->kind]);
    }
}

/* The operations as lines of the file format: a run of one operation as
 * "op KEY xN", keys rising by one as "op A..B". */
static void write_ops(FILE *out, const universe *u, const model_op *ops, size_t count)
{
    char text[256];
    for (size_t i = 0; i < count;) {
        const model_op *op = &ops[i];
        size_t same = i + 1;
        while (same < count && ops[same].kind == op->kind && ops[same].key == op->key &&
               ops[same].number == op->number)
            same++;
        op_text(text, sizeof text, u, op);
        if (same - i >= 2) {
            fprintf(out, "%s x%zu\n", text, same - i);
            i = same;
            continue;
        }
        size_t rising = i + 1;
        if (op_has_key(op->kind) && op->key < u->generated)
            while (rising < count && ops[rising].kind == op->kind &&
                   ops[rising].key == ops[rising - 1].key + 1 && ops[rising].key < u->generated)
                rising++;
        if (rising - i >= 3) {
            fprintf(out, "%s %" PRIu32 "..%" PRIu32 "\n", op_names[op->kind], op->key,
                    ops[rising - 1].key);
            i = rising;
            continue;
        }
        fprintf(out, "%s\n", text);
        i++;
    }
}

/* ---- running a sequence ------------------------------------------------------------- */

typedef enum failure_kind {
    FAIL_NONE,
    FAIL_SETUP,
    FAIL_FALSE_NEGATIVE,
    FAIL_COUNT_LOW,
    FAIL_COUNT_CONTAINS,
    FAIL_REFUSED,
    FAIL_REFUSAL_CHANGED,
    FAIL_STATUS,
    FAIL_KEYS,
    FAIL_ADD_ONCE,
    FAIL_REMOVE,
    FAIL_SAVELOAD,
    FAIL_MERGE,
    FAIL_EXPECT,
    FAIL_KINDS
} failure_kind;

static const char *const failure_names[FAIL_KINDS] = {
    "none",
    "setup",
    "false negative",
    "count below the true count",
    "count and contains disagree",
    "add refused",
    "a refused add changed the filter",
    "unexpected status",
    "keys differ from the model",
    "add_once",
    "remove",
    "save-load",
    "merge",
    "expectation",
};

typedef struct model_stats {
    uint64_t ops, adds, refused, once_added, once_skipped, removes, absent_removes, removes_skipped,
        queries, counts, saveloads, merges, full_checks;
    uint64_t most_tables, most_keys, most_copies, most_saturated, memory_bytes;
    double most_load;
} model_stats;

static void stats_sum(model_stats *into, const model_stats *s)
{
    into->ops += s->ops;
    into->adds += s->adds;
    into->refused += s->refused;
    into->once_added += s->once_added;
    into->once_skipped += s->once_skipped;
    into->removes += s->removes;
    into->absent_removes += s->absent_removes;
    into->removes_skipped += s->removes_skipped;
    into->queries += s->queries;
    into->counts += s->counts;
    into->saveloads += s->saveloads;
    into->merges += s->merges;
    into->full_checks += s->full_checks;
    if (s->most_tables > into->most_tables)
        into->most_tables = s->most_tables;
    if (s->most_keys > into->most_keys)
        into->most_keys = s->most_keys;
    if (s->most_copies > into->most_copies)
        into->most_copies = s->most_copies;
    if (s->most_saturated > into->most_saturated)
        into->most_saturated = s->most_saturated;
    if (s->most_load > into->most_load)
        into->most_load = s->most_load;
}

typedef struct model_run {
    const model_params *p;
    const universe *u;
    amq_filter *handle; /* owns the typed filter */
    amq_cuckoo *cuckoo;
    amq_counting_bloom *counting;
    amq_counting_bloom *other; /* the counting filter merged in by OP_MERGE */
    uint32_t *copies, *other_copies;
    uint32_t *held, *held_at; /* the keys with copies; held_at[i] is 1 + its place, or 0 */
    uint32_t held_count;
    uint64_t total;
    uint64_t counter_max;
    bool adds_ok;
    amq_test_rng sample;
    const model_op *current; /* the operation running; NULL in the final check */
    size_t op_index;
    failure_kind failure;
    size_t failure_index; /* the operation that failed; the count for the final check */
    char message[1024];
    model_stats stats;
} model_run;

__attribute__((format(printf, 3, 4))) static bool run_fail(model_run *r, failure_kind kind,
                                                           const char *format, ...)
{
    if (r->failure != FAIL_NONE)
        return false;
    char what[700];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    char op[256] = "the final check";
    if (r->current) {
        char text[200], line[32] = "";
        op_text(text, sizeof text, r->u, r->current);
        if (r->current->line)
            snprintf(line, sizeof line, ", line %" PRIu32, r->current->line);
        snprintf(op, sizeof op, "operation %zu%s (%s)", r->op_index + 1, line, text);
    }
    snprintf(r->message, sizeof r->message, "%s: %s", op, what);
    r->failure = kind;
    r->failure_index = r->current ? r->op_index : SIZE_MAX;
    return false;
}

static int filter_new(amq_filter **out, amq_counting_bloom **other, const model_params *p,
                      amq_diag *diag)
{
    *out = NULL;
    if (p->family == FAMILY_CUCKOO) {
        amq_cuckoo_params params;
        amq_cuckoo_params_init(&params);
        params.capacity = p->capacity;
        params.bucket_size = p->bucket_size;
        params.fingerprint_bits = p->fingerprint_bits;
        params.growth = p->growth;
        params.max_kicks = p->max_kicks;
        params.semi_sort = p->semi_sort;
        amq_hasher_xxh3(&params.hasher, p->seed);
        amq_cuckoo *f = NULL;
        int status = amq_cuckoo_new(&f, &params, diag);
        if (status != AMQ_OK)
            return status;
        status = amq_cuckoo_wrap(out, f, diag);
        if (status != AMQ_OK)
            amq_cuckoo_free(f);
        return status;
    }
    amq_counting_bloom_params params;
    amq_counting_bloom_params_init(&params);
    params.capacity = p->capacity;
    params.counters = p->counters;
    params.hashes = p->hashes;
    params.counter_bits = p->counter_bits;
    params.fpr = p->fpr;
    amq_hasher_xxh3(&params.hasher, p->seed);
    amq_counting_bloom *f = NULL;
    int status = amq_counting_bloom_new(&f, &params, diag);
    if (status != AMQ_OK)
        return status;
    status = amq_counting_bloom_new(other, &params, diag);
    if (status != AMQ_OK) {
        amq_counting_bloom_free(f);
        return status;
    }
    status = amq_counting_bloom_wrap(out, f, diag);
    if (status != AMQ_OK) {
        amq_counting_bloom_free(f);
        amq_counting_bloom_free(*other);
        *other = NULL;
    }
    return status;
}

static void run_bind(model_run *r)
{
    r->cuckoo = r->p->family == FAMILY_CUCKOO ? amq_cuckoo_unwrap(r->handle) : NULL;
    r->counting = r->p->family == FAMILY_COUNTING ? amq_counting_bloom_unwrap(r->handle) : NULL;
}

/* AMQ_OK, or amq_cuckoo_new's / amq_counting_bloom_new's status (the run
 * then holds nothing and diag says why). */
static int run_open(model_run *r, const model_params *p, const universe *u, amq_diag *diag)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->u = u;
    int status = filter_new(&r->handle, &r->other, p, diag);
    if (status != AMQ_OK)
        return status;
    run_bind(r);
    size_t n = u->count ? u->count : 1;
    r->copies = calloc(n, sizeof *r->copies);
    r->other_copies = calloc(n, sizeof *r->other_copies);
    r->held = calloc(n, sizeof *r->held);
    r->held_at = calloc(n, sizeof *r->held_at);
    assert_true(r->copies && r->other_copies && r->held && r->held_at);
    r->counter_max = p->family == FAMILY_COUNTING
                         ? ((uint64_t)1 << amq_counting_bloom_counter_bits(r->counting)) - 1
                         : UINT64_MAX;
    amq_test_rng_init(&r->sample, p->seed ^ 0x5a3d1e0f2b4c6a78ULL);
    r->failure_index = SIZE_MAX;
    return AMQ_OK;
}

static void run_close(model_run *r)
{
    amq_free(r->handle);
    amq_counting_bloom_free(r->other);
    free(r->copies);
    free(r->other_copies);
    free(r->held);
    free(r->held_at);
    r->handle = NULL;
    r->other = NULL;
    r->copies = r->other_copies = r->held = r->held_at = NULL;
}

static void model_add(model_run *r, uint32_t key, uint32_t copies)
{
    if (copies == 0)
        return;
    if (r->copies[key] == 0) {
        r->held[r->held_count] = key;
        r->held_at[key] = ++r->held_count;
    }
    r->copies[key] += copies;
    r->total += copies;
}

static void model_remove(model_run *r, uint32_t key)
{
    r->total--;
    if (--r->copies[key] == 0) {
        uint32_t at = r->held_at[key] - 1, last = r->held[--r->held_count];
        r->held[at] = last;
        r->held_at[last] = at + 1;
        r->held_at[key] = 0;
    }
}

static bool key_contains(const model_run *r, uint32_t key)
{
    const void *bytes = r->u->pointers[key];
    size_t len = r->u->lens[key];
    return r->cuckoo ? amq_cuckoo_contains(r->cuckoo, bytes, len)
                     : amq_counting_bloom_contains(r->counting, bytes, len);
}

static uint64_t key_count(const model_run *r, uint32_t key)
{
    const void *bytes = r->u->pointers[key];
    size_t len = r->u->lens[key];
    return r->cuckoo ? amq_cuckoo_count(r->cuckoo, bytes, len)
                     : amq_counting_bloom_count(r->counting, bytes, len);
}

static uint64_t memory_bytes(const model_run *r)
{
    return r->cuckoo ? amq_cuckoo_memory_bytes(r->cuckoo)
                     : amq_counting_bloom_counters(r->counting) *
                           amq_counting_bloom_counter_bits(r->counting) / 8;
}

/* The invariant for one key. */
static bool check_key(model_run *r, uint32_t key)
{
    char name[128];
    uint64_t copies = r->copies[key];
    bool maybe = key_contains(r, key);
    uint64_t count = key_count(r, key);
    uint64_t least = copies < r->counter_max ? copies : r->counter_max;
    if (copies && !maybe) {
        key_text(name, sizeof name, r->u, key);
        return run_fail(r, FAIL_FALSE_NEGATIVE,
                        "key %s, added and not removed %" PRIu64 " times, answers no", name,
                        copies);
    }
    if (count < least) {
        key_text(name, sizeof name, r->u, key);
        return run_fail(r, FAIL_COUNT_LOW,
                        "key %s, added and not removed %" PRIu64 " times, counted %" PRIu64, name,
                        copies, count);
    }
    if ((count > 0) != maybe) {
        key_text(name, sizeof name, r->u, key);
        return run_fail(r, FAIL_COUNT_CONTAINS, "key %s: count %" PRIu64 " but contains %d", name,
                        count, maybe);
    }
    return true;
}

static bool full_check(model_run *r)
{
    r->stats.full_checks++;
    for (uint32_t i = 0; i < r->u->count; i++)
        if (!check_key(r, i))
            return false;
    return true;
}

/* What a growing cuckoo filter may answer AMQ_EFULL at: its last table. */
static bool cuckoo_at_its_limit(const amq_cuckoo *f)
{
    size_t tables = amq_cuckoo_tables(f);
    uint64_t newest = amq_cuckoo_table_buckets(f, tables - 1);
    return tables >= AMQ_CUCKOO_MAX_TABLES ||
           newest * amq_cuckoo_growth(f) > AMQ_CUCKOO_MAX_BUCKETS;
}

static void describe_cuckoo(char *out, size_t size, const amq_cuckoo *f)
{
    size_t tables = amq_cuckoo_tables(f);
    snprintf(out, size,
             "%zu of %d tables, the newest of %" PRIu64 " buckets; %" PRIu64 " keys in %" PRIu64
             " slots (load %.3f), full %d, %" PRIu64 " bytes",
             tables, AMQ_CUCKOO_MAX_TABLES, amq_cuckoo_table_buckets(f, tables - 1),
             amq_cuckoo_keys(f), amq_cuckoo_slots(f), amq_cuckoo_load_factor(f), amq_cuckoo_full(f),
             amq_cuckoo_memory_bytes(f));
}

/* A cuckoo add that answered AMQ_EFULL or AMQ_ENOMEM. */
static bool check_refusal(model_run *r, uint32_t key, int status, uint64_t keys_before,
                          uint64_t count_before, bool was_full)
{
    char filter[400];
    r->stats.refused++;
    describe_cuckoo(filter, sizeof filter, r->cuckoo);
    if (r->adds_ok)
        return run_fail(r, FAIL_REFUSED, "%s, where every add must succeed; %s",
                        amq_strerror(status), filter);
    if (amq_cuckoo_keys(r->cuckoo) != keys_before || key_count(r, key) != count_before)
        return run_fail(r, FAIL_REFUSAL_CHANGED,
                        "%s, yet keys went from %" PRIu64 " to %" PRIu64
                        " and the key's count from %" PRIu64 " to %" PRIu64,
                        amq_strerror(status), keys_before, amq_cuckoo_keys(r->cuckoo), count_before,
                        key_count(r, key));
    if (status != AMQ_EFULL)
        return true;
    if (r->p->growth > 0 && !cuckoo_at_its_limit(r->cuckoo))
        return run_fail(r, FAIL_REFUSED, "AMQ_EFULL from a growing filter (growth %" PRIu32 "): %s",
                        r->p->growth, filter);
    if (r->p->growth == 0 && !was_full)
        return run_fail(r, FAIL_REFUSED, "AMQ_EFULL from a filter that was not full: %s", filter);
    return true;
}

static bool step_add(model_run *r, uint32_t key, bool once)
{
    const void *bytes = r->u->pointers[key];
    size_t len = r->u->lens[key];
    uint32_t copies = r->copies[key];
    uint64_t keys_before = 0, count_before = 0;
    bool was_full = false;
    int status;
    if (r->cuckoo) {
        keys_before = amq_cuckoo_keys(r->cuckoo);
        count_before = amq_cuckoo_count(r->cuckoo, bytes, len);
        was_full = amq_cuckoo_full(r->cuckoo);
        status = once ? amq_cuckoo_add_unique(r->cuckoo, bytes, len)
                      : amq_cuckoo_add(r->cuckoo, bytes, len);
    } else if (once) {
        status = amq_add_unique(r->handle, bytes, len);
    } else {
        amq_counting_bloom_add(r->counting, bytes, len);
        status = AMQ_OK;
    }
    if (!once) {
        if (status == AMQ_OK) {
            model_add(r, key, 1);
            r->stats.adds++;
            return true;
        }
    } else if (status == 1) {
        if (copies)
            return run_fail(r, FAIL_FALSE_NEGATIVE,
                            "add_once stored a key held %" PRIu32 " times (it answered no)",
                            copies);
        model_add(r, key, 1);
        r->stats.once_added++;
        return true;
    } else if (status == 0) {
        if (!key_contains(r, key))
            return run_fail(r, FAIL_ADD_ONCE, "add_once answered 0 for a key that answers no");
        if (r->cuckoo && amq_cuckoo_keys(r->cuckoo) != keys_before)
            return run_fail(r, FAIL_ADD_ONCE,
                            "add_once answered 0, yet keys went from %" PRIu64 " to %" PRIu64,
                            keys_before, amq_cuckoo_keys(r->cuckoo));
        r->stats.once_skipped++;
        return true;
    }
    if (r->cuckoo && (status == AMQ_EFULL || status == AMQ_ENOMEM)) {
        if (once && copies)
            return run_fail(r, FAIL_FALSE_NEGATIVE,
                            "add_once of a key held %" PRIu32 " times: %s (it answered no)", copies,
                            amq_strerror(status));
        return check_refusal(r, key, status, keys_before, count_before, was_full);
    }
    return run_fail(r, FAIL_STATUS, "%s answered %d (%s)", once ? "add_once" : "add", status,
                    amq_strerror(status));
}

static bool step_remove(model_run *r, uint32_t key)
{
    const void *bytes = r->u->pointers[key];
    size_t len = r->u->lens[key];
    uint32_t copies = r->copies[key];
    if (copies) {
        int status = r->cuckoo ? amq_cuckoo_remove(r->cuckoo, bytes, len)
                               : amq_counting_bloom_remove(r->counting, bytes, len);
        if (status != AMQ_OK)
            return run_fail(r, FAIL_REMOVE, "removing a key held %" PRIu32 " times: %s", copies,
                            amq_strerror(status));
        model_remove(r, key);
        r->stats.removes++;
        return true;
    }
    if (key_contains(r, key)) {
        /* A false positive: removing it may take another key's copy. */
        r->stats.removes_skipped++;
        return true;
    }
    uint64_t keys_before = r->cuckoo ? amq_cuckoo_keys(r->cuckoo) : 0;
    uint64_t nonzero_before = r->counting ? amq_counting_bloom_nonzero(r->counting) : 0;
    int status = r->cuckoo ? amq_cuckoo_remove(r->cuckoo, bytes, len)
                           : amq_counting_bloom_remove(r->counting, bytes, len);
    if (status != AMQ_ENOTFOUND)
        return run_fail(r, FAIL_REMOVE, "removing a key that answers no: %s, not AMQ_ENOTFOUND",
                        amq_strerror(status));
    if (r->cuckoo ? amq_cuckoo_keys(r->cuckoo) != keys_before
                  : amq_counting_bloom_nonzero(r->counting) != nonzero_before)
        return run_fail(r, FAIL_REMOVE, "removing a key that answers no changed the filter");
    r->stats.absent_removes++;
    return true;
}

static bool step_query(model_run *r, uint32_t key)
{
    r->stats.queries++;
    int generic = amq_contains(r->handle, r->u->pointers[key], r->u->lens[key]);
    bool typed = key_contains(r, key);
    if (generic != (typed ? 1 : 0))
        return run_fail(r, FAIL_STATUS, "amq_contains answered %d, the typed call %d", generic,
                        typed);
    return true;
}

static bool step_saveload(model_run *r)
{
    amq_diag diag = { .message = "" };
    uint8_t *bytes = NULL;
    size_t len = 0;
    r->stats.saveloads++;
    int status = amq_save_to_memory(&bytes, &len, r->handle, &diag);
    if (status != AMQ_OK)
        return run_fail(r, FAIL_SAVELOAD, "amq_save_to_memory: %s: %s", amq_strerror(status),
                        diag.message);
    amq_filter *loaded = NULL;
    status = amq_load_from_memory(&loaded, bytes, len, 0, &diag);
    free(bytes);
    if (status != AMQ_OK)
        return run_fail(r, FAIL_SAVELOAD, "amq_load_from_memory of %zu bytes: %s: %s", len,
                        amq_strerror(status), diag.message);
    model_run l = *r; /* the loaded filter seen as the run sees its own */
    l.handle = loaded;
    run_bind(&l);
    if (!(r->cuckoo ? (void *)l.cuckoo : (void *)l.counting)) {
        amq_free(loaded);
        return run_fail(r, FAIL_SAVELOAD, "the loaded filter is of family %s",
                        amq_filter_family(loaded));
    }
    char differs[300] = "";
    for (uint32_t i = 0; i < r->u->count && !differs[0]; i++) {
        bool a = key_contains(r, i), b = key_contains(&l, i);
        uint64_t ca = key_count(r, i), cb = key_count(&l, i);
        if (a != b || ca != cb) {
            char name[128];
            key_text(name, sizeof name, r->u, i);
            snprintf(differs, sizeof differs,
                     "key %s: the saved filter answers %d and counts %" PRIu64
                     ", the loaded one %d and %" PRIu64,
                     name, a, ca, b, cb);
        }
    }
    if (!differs[0] && r->cuckoo &&
        (amq_cuckoo_keys(r->cuckoo) != amq_cuckoo_keys(l.cuckoo) ||
         amq_cuckoo_tables(r->cuckoo) != amq_cuckoo_tables(l.cuckoo) ||
         amq_cuckoo_full(r->cuckoo) != amq_cuckoo_full(l.cuckoo)))
        snprintf(differs, sizeof differs,
                 "keys %" PRIu64 " / %" PRIu64 ", tables %zu / %zu, full %d / %d (saved / loaded)",
                 amq_cuckoo_keys(r->cuckoo), amq_cuckoo_keys(l.cuckoo),
                 amq_cuckoo_tables(r->cuckoo), amq_cuckoo_tables(l.cuckoo),
                 amq_cuckoo_full(r->cuckoo), amq_cuckoo_full(l.cuckoo));
    if (!differs[0] && r->counting &&
        (amq_counting_bloom_nonzero(r->counting) != amq_counting_bloom_nonzero(l.counting) ||
         amq_counting_bloom_saturated(r->counting) != amq_counting_bloom_saturated(l.counting)))
        snprintf(differs, sizeof differs, "the counters differ");
    if (differs[0]) {
        amq_free(loaded);
        return run_fail(r, FAIL_SAVELOAD, "after a save and load of %zu bytes, %s", len, differs);
    }
    amq_free(r->handle);
    r->handle = loaded;
    run_bind(r);
    return full_check(r);
}

static bool step_merge(model_run *r)
{
    amq_diag diag = { .message = "" };
    r->stats.merges++;
    int status = amq_counting_bloom_merge(r->counting, r->other, &diag);
    if (status != AMQ_OK)
        return run_fail(r, FAIL_MERGE, "amq_counting_bloom_merge: %s: %s", amq_strerror(status),
                        diag.message);
    for (uint32_t i = 0; i < r->u->count; i++) {
        model_add(r, i, r->other_copies[i]);
        r->other_copies[i] = 0;
    }
    amq_counting_bloom_clear(r->other);
    return full_check(r);
}

static bool step(model_run *r, const model_op *op)
{
    r->current = op;
    r->stats.ops++;
    bool cuckoo_only = op->kind == OP_EXPECT_TABLES;
    bool counting_only = op->kind == OP_OTHER_ADD || op->kind == OP_MERGE;
    if ((cuckoo_only && !r->cuckoo) || (counting_only && !r->counting))
        return run_fail(r, FAIL_SETUP, "not an operation of this family");
    if (op_has_key(op->kind) && op->key >= r->u->count)
        return run_fail(r, FAIL_SETUP, "no such key");
    bool ok = true;
    switch ((op_kind)op->kind) {
    case OP_ADD:
        ok = step_add(r, op->key, false);
        break;
    case OP_ADD_ONCE:
        ok = step_add(r, op->key, true);
        break;
    case OP_REMOVE:
        ok = step_remove(r, op->key);
        break;
    case OP_QUERY:
        ok = step_query(r, op->key);
        break;
    case OP_COUNT:
        r->stats.counts++;
        break;
    case OP_OTHER_ADD:
        amq_counting_bloom_add(r->other, r->u->pointers[op->key], r->u->lens[op->key]);
        r->other_copies[op->key]++;
        break;
    case OP_SAVELOAD:
        ok = step_saveload(r);
        break;
    case OP_MERGE:
        ok = step_merge(r);
        break;
    case OP_CHECK:
        ok = full_check(r);
        break;
    case OP_EXPECT_ADDS_OK:
        r->adds_ok = true;
        break;
    case OP_EXPECT_TABLES:
        if (amq_cuckoo_tables(r->cuckoo) != op->number) {
            char filter[400];
            describe_cuckoo(filter, sizeof filter, r->cuckoo);
            ok = run_fail(r, FAIL_EXPECT, "%s", filter);
        }
        break;
    case OP_EXPECT_MEMORY_BELOW:
        r->stats.memory_bytes = memory_bytes(r);
        if (r->stats.memory_bytes >= op->number)
            ok = run_fail(r, FAIL_EXPECT, "memory_bytes is %" PRIu64, r->stats.memory_bytes);
        break;
    case OP_KINDS:
        ok = run_fail(r, FAIL_SETUP, "no such operation");
        break;
    }
    if (!ok)
        return false;
    if (r->cuckoo && amq_cuckoo_keys(r->cuckoo) != r->total)
        return run_fail(r, FAIL_KEYS, "amq_cuckoo_keys is %" PRIu64 ", the model holds %" PRIu64,
                        amq_cuckoo_keys(r->cuckoo), r->total);
    if (op_has_key(op->kind) && !check_key(r, op->key))
        return false;
    if (r->held_count && !check_key(r, r->held[amq_test_below(&r->sample, r->held_count)]))
        return false;
    if (r->cuckoo && amq_cuckoo_tables(r->cuckoo) > r->stats.most_tables)
        r->stats.most_tables = amq_cuckoo_tables(r->cuckoo);
    if (r->cuckoo && amq_cuckoo_load_factor(r->cuckoo) > r->stats.most_load)
        r->stats.most_load = amq_cuckoo_load_factor(r->cuckoo);
    if (r->total > r->stats.most_keys)
        r->stats.most_keys = r->total;
    if (op_has_key(op->kind) && r->copies[op->key] > r->stats.most_copies)
        r->stats.most_copies = r->copies[op->key];
    if (r->counting && amq_counting_bloom_saturated(r->counting) > r->stats.most_saturated)
        r->stats.most_saturated = amq_counting_bloom_saturated(r->counting);
    return true;
}

/* The last check of a sequence: every key. */
static bool run_finish(model_run *r)
{
    r->current = NULL;
    return r->failure == FAIL_NONE && full_check(r);
}

typedef struct replay_result {
    failure_kind failure;
    size_t index; /* of the failing operation; SIZE_MAX for the final check */
    char message[1024];
    model_stats stats;
    int status; /* of making the filter */
} replay_result;

/* Run ops on a new filter of p, then check every key. */
static failure_kind replay(replay_result *out, const model_params *p, const universe *u,
                           const model_op *ops, size_t count)
{
    amq_diag diag = { .message = "" };
    model_run r;
    memset(out, 0, sizeof *out);
    out->status = run_open(&r, p, u, &diag);
    if (out->status != AMQ_OK) {
        out->failure = FAIL_SETUP;
        snprintf(out->message, sizeof out->message, "making the filter: %s: %.900s",
                 amq_strerror(out->status), diag.message);
        return out->failure;
    }
    for (size_t i = 0; i < count; i++) {
        r.op_index = i;
        if (!step(&r, &ops[i]))
            break;
    }
    run_finish(&r);
    out->failure = r.failure;
    out->index = r.failure_index;
    memcpy(out->message, r.message, sizeof out->message);
    out->stats = r.stats;
    run_close(&r);
    return out->failure;
}

/* ---- shrinking ------------------------------------------------------------------------ */

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Delta debugging: drop chunks of operations while the failure stays of its
 * kind, halving the chunk when none can go, until no single operation can.
 * ops ends as the shrunk sequence (cut after the operation that fails). */
static void shrink(op_list *ops, const model_params *p, const universe *u, failure_kind kind,
                   size_t *replays)
{
    const double budget = AMQ_TEST_SANITIZED ? 15.0 : 4.0;
    const double start = seconds_now();
    op_list candidate = { 0 };
    replay_result result;
    *replays = 0;
    size_t chunk = ops->count / 2 ? ops->count / 2 : 1;
    for (;;) {
        bool dropped = false;
        for (size_t at = 0; at < ops->count;) {
            if (seconds_now() - start > budget) {
                print_message("shrinking stopped after %.0f s, %zu replays\n", budget, *replays);
                free(candidate.ops);
                return;
            }
            size_t end = at + chunk < ops->count ? at + chunk : ops->count;
            ops_copy(&candidate, ops->ops, at);
            for (size_t i = end; i < ops->count; i++)
                ops_push(&candidate, ops->ops[i]);
            ++*replays;
            if (replay(&result, p, u, candidate.ops, candidate.count) == kind) {
                if (result.index != SIZE_MAX && result.index + 1 < candidate.count)
                    candidate.count = result.index + 1;
                ops_copy(ops, candidate.ops, candidate.count);
                dropped = true;
            } else {
                at = end;
            }
        }
        if (chunk == 1 && !dropped)
            break;
        if (chunk > 1)
            chunk /= 2;
    }
    free(candidate.ops);
}

/* Where reproducers go: $AMQ_TEST_MODEL_FAILURES, else model-failures in
 * the working directory (ctest's: the build's tests directory). */
static void write_reproducer(char *path, size_t size, const char *name, const char *header,
                             const model_params *p, const universe *u, const op_list *ops)
{
    const char *dir = getenv("AMQ_TEST_MODEL_FAILURES");
    if (!dir || !*dir)
        dir = "model-failures";
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        fail_msg("cannot make %s: %s", dir, strerror(errno));
    snprintf(path, size, "%s/%s.txt", dir, name);
    FILE *out = fopen(path, "w");
    if (!out)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    char params[256];
    params_text(params, sizeof params, p);
    fprintf(out, "# %s\nparams %s\n", header, params);
    write_ops(out, u, ops->ops, ops->count);
    if (fclose(out) != 0)
        fail_msg("cannot write %s", path);
}

/* Print a reproducer as written. */
static void print_reproducer(const char *header, const model_params *p, const universe *u,
                             const op_list *ops)
{
    char params[256];
    params_text(params, sizeof params, p);
    print_message("    # %s\n    params %s\n", header, params);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    write_ops(out, u, ops->ops, ops->count);
    fclose(out);
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        print_message("    %s\n", line);
    }
    free(text);
}

/* ---- random sequences ------------------------------------------------------------------ */

/* Skewed like Zipf's law with s = 1: key i with a chance about
 * 1 / ((i + 1) ln n). */
static uint32_t zipf_key(amq_test_rng *rng, uint32_t n)
{
    double u = (double)(amq_test_next(rng) >> 11) * 0x1p-53;
    uint32_t i = (uint32_t)exp(u * log((double)n + 1)) - 1;
    return i < n ? i : n - 1;
}

typedef struct sequence_shape {
    uint32_t keys;              /* the universe */
    uint32_t hot;               /* the hot key */
    uint32_t hot_copies;        /* about how many times it is added */
    uint64_t length;            /* operations */
    uint64_t hot_windows[2][2]; /* the operations [from, to) in which it is added */
    uint64_t spread;            /* from this operation on, keys are picked evenly */
    uint64_t fill, drain;       /* the longest filling phase; a draining phase */
} sequence_shape;

static uint32_t pick_added_key(amq_test_rng *rng, const sequence_shape *s, uint64_t hot_per_million,
                               bool skewed)
{
    if (amq_test_below(rng, 1000000) < hot_per_million)
        return s->hot;
    if (skewed && amq_test_below(rng, 10) < 6)
        return zipf_key(rng, s->keys);
    return (uint32_t)amq_test_below(rng, s->keys);
}

/* The next operation of a sequence, from the run's state. */
static model_op next_op(amq_test_rng *rng, const model_run *r, const sequence_shape *s, uint64_t at,
                        bool filling, uint64_t hot_per_million)
{
    /* Outside its windows the hot key is not added, and often removed. */
    bool hot = (at >= s->hot_windows[0][0] && at < s->hot_windows[0][1]) ||
               (at >= s->hot_windows[1][0] && at < s->hot_windows[1][1]);
    if (!hot)
        hot_per_million = 0;
    /* At the end, keys are picked evenly and removals drain the most
     * copied ones, so that a filter also fills with many distinct keys. */
    bool skewed = at < s->spread;
    model_op op = { .kind = OP_QUERY };
    uint64_t dice = amq_test_below(rng, 1000);
    /* Rarely: a save-load round trip, a merge. */
    if (dice < 3 * 1000 / s->length + 1 && amq_test_below(rng, 4) == 0) {
        op.kind = OP_SAVELOAD;
        return op;
    }
    if (r->counting && dice >= 999 && amq_test_below(rng, 2) == 0) {
        op.kind = OP_MERGE;
        return op;
    }
    uint64_t percent = amq_test_below(rng, 100);
    /* filling: 40 add, 10 add_once, 12 remove, 3 absent remove, 15 query,
     * 12 count, 8 other_add; draining: 15, 5, 45, 5, 14, 10, 6. */
    const uint64_t *edges;
    static const uint64_t fill_edges[] = { 40, 50, 62, 65, 80, 92 };
    static const uint64_t drain_edges[] = { 15, 20, 65, 70, 84, 94 };
    edges = filling ? fill_edges : drain_edges;
    if (percent < edges[0]) {
        op.kind = OP_ADD;
        op.key = pick_added_key(rng, s, hot_per_million, skewed);
    } else if (percent < edges[1]) {
        op.kind = OP_ADD_ONCE;
        op.key = pick_added_key(rng, s, hot_per_million / 4, skewed);
    } else if (percent < edges[2]) {
        if (r->held_count == 0) {
            op.key = pick_added_key(rng, s, 0, skewed);
        } else {
            op.kind = OP_REMOVE;
            op.key = r->copies[s->hot] && amq_test_below(rng, hot ? 8 : 2) == 0
                         ? s->hot
                         : r->held[amq_test_below(rng, r->held_count)];
            for (int more = 0; !skewed && more < 3; more++) {
                uint32_t other = r->held[amq_test_below(rng, r->held_count)];
                if (r->copies[other] > r->copies[op.key])
                    op.key = other;
            }
        }
    } else if (percent < edges[3]) {
        /* A key the model does not hold, removed only if it answers no. */
        op.key = (uint32_t)amq_test_below(rng, s->keys);
        for (int tries = 0; tries < 4 && r->copies[op.key]; tries++)
            op.key = (uint32_t)amq_test_below(rng, s->keys);
        if (r->copies[op.key] == 0 && !key_contains(r, op.key))
            op.kind = OP_REMOVE;
    } else if (percent < edges[4]) {
        op.key = amq_test_below(rng, 2) ? pick_added_key(rng, s, 0, skewed)
                                        : (uint32_t)amq_test_below(rng, s->keys);
    } else if (percent < edges[5] || !r->counting) {
        op.kind = OP_COUNT;
        op.key = r->held_count && amq_test_below(rng, 2)
                     ? r->held[amq_test_below(rng, r->held_count)]
                     : (uint32_t)amq_test_below(rng, s->keys);
    } else {
        op.kind = OP_OTHER_ADD;
        op.key = pick_added_key(rng, s, hot_per_million, skewed);
    }
    return op;
}

typedef struct grid_report {
    const char *name;
    uint64_t sequences, skipped, failed, shrunk;
    uint64_t by_kind[FAIL_KINDS];
    model_stats stats;
    double seconds;
} grid_report;

static failure_kind replay_text(replay_result *out, const char *name, const char *text);

/* Run one random sequence of p; on a failure, shrink it (the first failure
 * of each kind in the report), print it and write it. */
static void run_sequence(grid_report *report, model_params *p, uint64_t sequence_seed)
{
    amq_test_rng rng;
    amq_test_rng_init(&rng, sequence_seed);
    p->seed = amq_test_next(&rng);
    sequence_shape s;
    s.keys =
        (uint32_t)(2000 + (p->capacity < 6000 ? p->capacity : 6000) + amq_test_below(&rng, 1000));
    s.hot = (uint32_t)amq_test_below(&rng, s.keys);
    s.hot_copies = (uint32_t)(100 + amq_test_below(&rng, 401));
    s.length = p->family == FAMILY_CUCKOO ? 4000 + 8 * p->capacity : 40000;
    s.fill = 4 * p->capacity + 1500;
    s.drain = p->capacity / 2 + 300;
    /* The hot key is added in 45% of the operations: 5% to 35% of the
     * sequence, and 60% to 75%. */
    s.hot_windows[0][0] = s.length / 20;
    s.hot_windows[0][1] = s.length * 7 / 20;
    s.hot_windows[1][0] = s.length * 12 / 20;
    s.hot_windows[1][1] = s.length * 15 / 20;
    s.spread = s.length * 16 / 20;
    /* About 38% of those operations are adds (filling takes most of a
     * sequence). */
    uint64_t hot_per_million = (uint64_t)s.hot_copies * 1000000 / (s.length * 45 / 100 * 38 / 100);
    if (hot_per_million > 500000)
        hot_per_million = 500000;

    p->keys = s.keys;
    universe u;
    universe_make(&u, p->seed, s.keys, NULL, 0);
    amq_diag diag = { .message = "" };
    model_run r;
    char params[256];
    params_text(params, sizeof params, p);
    int status = run_open(&r, p, &u, &diag);
    if (status == AMQ_EINVAL) {
        report->skipped++;
        universe_free(&u);
        return;
    }
    if (status != AMQ_OK)
        fail_msg("%s: making the filter: %s: %s", params, amq_strerror(status), diag.message);
    report->sequences++;
    op_list ops = { 0 };
    bool filling = true;
    uint64_t phase_start = 0, refused_at_phase = 0;
    for (uint64_t i = 0; i < s.length; i++) {
        if (filling ? r.stats.refused - refused_at_phase >= 50 || i - phase_start >= s.fill
                    : i - phase_start >= s.drain) {
            filling = !filling;
            phase_start = i;
            refused_at_phase = r.stats.refused;
        }
        model_op op = next_op(&rng, &r, &s, i, filling, hot_per_million);
        if (i == s.length / 2)
            op = (model_op){ .kind = OP_SAVELOAD };
        if (r.counting && i == s.length * 3 / 4)
            op = (model_op){ .kind = OP_MERGE };
        ops_push(&ops, op);
        r.op_index = (size_t)i;
        if (!step(&r, &ops.ops[ops.count - 1]))
            break;
    }
    run_finish(&r);
    stats_sum(&report->stats, &r.stats);
    total_operations += r.stats.ops;
    failure_kind kind = r.failure;
    char message[1024];
    memcpy(message, r.message, sizeof message);
    size_t failure_index = r.failure_index;
    run_close(&r);
    if (kind != FAIL_NONE) {
        report->failed++;
        if (report->failed <= 8)
            print_message("FAILED %s: %s\n", params, message);
        if (report->by_kind[kind]++ == 0 && report->shrunk < 3) {
            report->shrunk++;
            if (failure_index != SIZE_MAX)
                ops.count = failure_index + 1;
            size_t before = ops.count, replays = 0;
            double start = seconds_now();
            shrink(&ops, p, &u, kind, &replays);
            replay_result result;
            replay(&result, p, &u, ops.ops, ops.count);
            assert_int_equal(result.failure, kind);
            char header[1400], name[128], path[AMQ_TEST_PATH_MAX];
            snprintf(header, sizeof header,
                     "%s: %s (shrunk by test_model's %s from %zu operations)", failure_names[kind],
                     result.message, report->name, before);
            snprintf(name, sizeof name, "%s-%zu", report->name, (size_t)report->shrunk);
            for (char *c = name; *c; c++)
                if (*c == ' ')
                    *c = '-';
            write_reproducer(path, sizeof path, name, header, p, &u, &ops);
            /* What was written fails as the sequence did. */
            char *written = amq_test_read_file(path, NULL);
            assert_non_null(written);
            replay_result again;
            if (replay_text(&again, path, written) != kind)
                fail_msg("%s does not reproduce the failure: %s", path,
                         again.failure ? again.message : "it passes");
            free(written);
            print_message("  shrunk from %zu to %zu operations in %zu replays (%.1f s), "
                          "written to %s:\n",
                          before, ops.count, replays, seconds_now() - start, path);
            print_reproducer(header, p, &u, &ops);
        }
    }
    free(ops.ops);
    universe_free(&u);
}

static void print_report(const grid_report *g)
{
    const model_stats *s = &g->stats;
    print_message("%s: %" PRIu64 " sequences, %" PRIu64 " operations in %.1f s (%" PRIu64
                  " parameter sets refused with AMQ_EINVAL, skipped)\n",
                  g->name, g->sequences, s->ops, g->seconds, g->skipped);
    print_message(
        "  %" PRIu64 " adds (%" PRIu64 " refused), add_once: %" PRIu64 " stored, %" PRIu64
        " maybe present; %" PRIu64 " removes of held keys, %" PRIu64 " of keys that answered no\n",
        s->adds, s->refused, s->once_added, s->once_skipped, s->removes, s->absent_removes);
    print_message("  %" PRIu64 " queries, %" PRIu64 " counts, %" PRIu64 " save-loads, %" PRIu64
                  " merges, %" PRIu64 " full checks\n",
                  s->queries, s->counts, s->saveloads, s->merges, s->full_checks);
    print_message("  at most: %" PRIu64 " keys held, %" PRIu64 " copies of one key, %" PRIu64
                  " tables, a load of %.3f, %" PRIu64 " saturated counters\n",
                  s->most_keys, s->most_copies, s->most_tables, s->most_load, s->most_saturated);
    if (g->failed) {
        char kinds[512] = "";
        size_t used = 0;
        for (int k = 1; k < FAIL_KINDS; k++)
            if (g->by_kind[k] && used < sizeof kinds)
                used += (size_t)snprintf(kinds + used, sizeof kinds - used, "%s%" PRIu64 " %s",
                                         used ? ", " : "", g->by_kind[k], failure_names[k]);
        fail_msg("%s: %" PRIu64 " of %" PRIu64 " sequences failed (%s)", g->name, g->failed,
                 g->sequences, kinds);
    }
}

static const uint64_t capacities[] = { 9, 50, 1000, 5000 };
#define CAPACITIES (sizeof capacities / sizeof capacities[0])

static uint64_t sequence_seed(uint64_t grid, uint64_t index)
{
    amq_test_rng rng;
    amq_test_rng_init(&rng, seed ^ (grid << 48) ^ (index * 0x9e3779b97f4a7c15ULL));
    return amq_test_next(&rng);
}

static void cuckoo_grid(const char *name, uint64_t grid, const uint32_t *growths,
                        size_t growth_count, bool semi_sort)
{
    static const uint32_t plain_bits[] = { 4, 7, 8, 12, 16, 18 };
    static const uint32_t semi_bits[] = { 5, 8, 12, 16 };
    static const uint32_t plain_buckets[] = { 2, 4, 8 };
    static const uint32_t semi_buckets[] = { 4 };
    const uint32_t *bits = semi_sort ? semi_bits : plain_bits;
    const uint32_t *buckets = semi_sort ? semi_buckets : plain_buckets;
    size_t bit_count = semi_sort ? 4 : 6, bucket_count = semi_sort ? 1 : 3;
    grid_report report = { .name = name };
    double start = seconds_now();
    uint64_t index = 0;
    for (size_t g = 0; g < growth_count; g++)
        for (size_t b = 0; b < bucket_count; b++)
            for (size_t f = 0; f < bit_count; f++)
                for (size_t c = 0; c < CAPACITIES; c++) {
                    model_params p = { .family = FAMILY_CUCKOO,
                                       .capacity = capacities[c],
                                       .bucket_size = buckets[b],
                                       .fingerprint_bits = bits[f],
                                       .growth = growths[g],
                                       .semi_sort = semi_sort };
                    run_sequence(&report, &p, sequence_seed(grid, index++));
                }
    report.seconds = seconds_now() - start;
    print_report(&report);
}

static void test_cuckoo_fixed_size(void **state)
{
    (void)state;
    static const uint32_t growths[] = { 0 };
    cuckoo_grid("cuckoo-fixed", 1, growths, 1, false);
}

static void test_cuckoo_growing(void **state)
{
    (void)state;
    static const uint32_t growths[] = { 1, 2, 16 };
    cuckoo_grid("cuckoo-growing", 2, growths, 3, false);
}

static void test_cuckoo_semi_sorted(void **state)
{
    (void)state;
    static const uint32_t growths[] = { 0, 2 };
    cuckoo_grid("cuckoo-semi-sorted", 3, growths, 2, true);
}

static void test_counting_bloom(void **state)
{
    (void)state;
    /* Sized by capacity and rate, and small ones whose counters saturate. */
    static const struct {
        uint64_t capacity, counters;
        uint32_t hashes;
        double fpr;
    } shapes[] = {
        { 1000, 0, 0, 0.01 }, { 5000, 0, 0, 0.001 }, { 200, 0, 0, 0.05 },
        { 50, 256, 3, 0.01 }, { 9, 64, 2, 0.01 },
    };
    static const uint32_t counter_bits[] = { 4, 8 };
    grid_report report = { .name = "counting-bloom" };
    double start = seconds_now();
    uint64_t index = 0;
    for (size_t b = 0; b < 2; b++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int again = 0; again < 2; again++) {
                model_params p = { .family = FAMILY_COUNTING,
                                   .capacity = shapes[i].capacity,
                                   .counters = shapes[i].counters,
                                   .hashes = shapes[i].hashes,
                                   .fpr = shapes[i].fpr,
                                   .counter_bits = counter_bits[b] };
                run_sequence(&report, &p, sequence_seed(4, index++));
            }
    report.seconds = seconds_now() - start;
    print_report(&report);
}

/* ---- the file format --------------------------------------------------------------------- */

static bool parse_u64(uint64_t *out, const char *text)
{
    if (!*text || *text < '0' || *text > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || *end)
        return false;
    *out = value;
    return true;
}

static bool parse_params(model_params *p, char *fields, char *error, size_t error_size)
{
    char *save = NULL;
    char *family = strtok_r(fields, " \t", &save);
    memset(p, 0, sizeof *p);
    if (family && strcmp(family, "cuckoo") == 0) {
        p->family = FAMILY_CUCKOO;
    } else if (family && strcmp(family, "counting") == 0) {
        p->family = FAMILY_COUNTING;
    } else {
        snprintf(error, error_size, "params: the family is cuckoo or counting");
        return false;
    }
    for (char *field; (field = strtok_r(NULL, " \t", &save)) != NULL;) {
        char *value = strchr(field, '=');
        uint64_t number = 0;
        if (!value) {
            snprintf(error, error_size, "params: '%s' is not name=value", field);
            return false;
        }
        *value++ = '\0';
        if (strcmp(field, "p") == 0) {
            char *end;
            p->fpr = strtod(value, &end);
            if (*end || end == value) {
                snprintf(error, error_size, "params: p=%s is not a number", value);
                return false;
            }
            continue;
        }
        if (!parse_u64(&number, value)) {
            snprintf(error, error_size, "params: %s=%s is not a number", field, value);
            return false;
        }
        bool cuckoo = p->family == FAMILY_CUCKOO;
        uint32_t small = number > UINT32_MAX ? UINT32_MAX : (uint32_t)number;
        if (strcmp(field, "capacity") == 0)
            p->capacity = number;
        else if (strcmp(field, "seed") == 0)
            p->seed = number;
        else if (strcmp(field, "keys") == 0 && number <= 10000000)
            p->keys = (uint32_t)number;
        else if (cuckoo && strcmp(field, "b") == 0)
            p->bucket_size = small;
        else if (cuckoo && strcmp(field, "f") == 0)
            p->fingerprint_bits = small;
        else if (cuckoo && strcmp(field, "growth") == 0)
            p->growth = small;
        else if (cuckoo && strcmp(field, "kicks") == 0)
            p->max_kicks = small;
        else if (cuckoo && strcmp(field, "semi") == 0)
            p->semi_sort = number != 0;
        else if (!cuckoo && strcmp(field, "bits") == 0)
            p->counter_bits = small;
        else if (!cuckoo && strcmp(field, "counters") == 0)
            p->counters = number;
        else if (!cuckoo && strcmp(field, "hashes") == 0)
            p->hashes = small;
        else {
            snprintf(error, error_size, "params: no parameter %s for %s", field, family);
            return false;
        }
    }
    return true;
}

/* A key of the file: a number, a range A..B, or "text" (interned). A text
 * key is told apart by its top bit until the universe is made. */
#define LITERAL_KEY 0x80000000u

typedef struct literal_set {
    char **names;
    uint32_t count;
} literal_set;

static bool parse_key(uint32_t *first, uint32_t *last, literal_set *literals, const char *text)
{
    size_t len = strlen(text);
    if (len >= 2 && text[0] == '"' && text[len - 1] == '"') {
        for (uint32_t i = 0; i < literals->count; i++)
            if (strlen(literals->names[i]) == len - 2 &&
                memcmp(literals->names[i], text + 1, len - 2) == 0) {
                *first = *last = LITERAL_KEY | i;
                return true;
            }
        if (memchr(text + 1, '"', len - 2))
            return false;
        literals->names = realloc(literals->names, (literals->count + 1) * sizeof *literals->names);
        assert_non_null(literals->names);
        char *name = malloc(len - 1);
        assert_non_null(name);
        memcpy(name, text + 1, len - 2);
        name[len - 2] = '\0';
        literals->names[literals->count] = name;
        *first = *last = LITERAL_KEY | literals->count++;
        return true;
    }
    char copy[64];
    if (len >= sizeof copy)
        return false;
    memcpy(copy, text, len + 1);
    char *dots = strstr(copy, "..");
    uint64_t a, b;
    if (dots) {
        *dots = '\0';
        if (!parse_u64(&a, copy) || !parse_u64(&b, dots + 2) || b < a)
            return false;
    } else if (!parse_u64(&a, copy)) {
        return false;
    } else {
        b = a;
    }
    if (b >= 10000000)
        return false;
    *first = (uint32_t)a;
    *last = (uint32_t)b;
    return true;
}

typedef struct model_file {
    model_params params;
    universe keys;
    op_list ops;
} model_file;

/* One line of a file's operations into out->ops; false with error set. */
static bool parse_op_line(model_file *out, literal_set *literals, uint32_t *generated, char *line,
                          uint32_t line_number, char *error, size_t error_size)
{
    char *words[4] = { NULL };
    int count = 0;
    char *save = NULL;
    for (char *w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (count == 4) {
            snprintf(error, error_size, "too many words");
            return false;
        }
        words[count++] = w;
    }
    if (count == 0) {
        snprintf(error, error_size, "not an operation");
        return false;
    }
    uint64_t repeat = 1;
    if (count >= 2 && words[count - 1][0] == 'x' && parse_u64(&repeat, words[count - 1] + 1))
        count--;
    if (repeat == 0 || repeat > 10000000) {
        snprintf(error, error_size, "a repeat is 1 to 10^7 times");
        return false;
    }
    model_op op = { .kind = OP_KINDS, .line = line_number };
    uint32_t first = 0, last = 0;
    if (strcmp(words[0], "expect") == 0) {
        if (count == 2 && strcmp(words[1], "adds_ok") == 0)
            op.kind = OP_EXPECT_ADDS_OK;
        else if (count == 3 && strcmp(words[1], "tables") == 0)
            op.kind = OP_EXPECT_TABLES;
        else if (count == 3 && strcmp(words[1], "memory_below") == 0)
            op.kind = OP_EXPECT_MEMORY_BELOW;
        if (op_has_number(op.kind) && !parse_u64(&op.number, words[2])) {
            snprintf(error, error_size, "expect %s needs a number", words[1]);
            return false;
        }
    } else {
        for (uint32_t k = 0; k < OP_KINDS; k++)
            if (strcmp(words[0], op_names[k]) == 0)
                op.kind = k;
        if (op.kind < OP_KINDS && (op_has_key(op.kind) ? count != 2 : count != 1))
            op.kind = OP_KINDS;
        if (op.kind < OP_KINDS && op_has_key(op.kind) &&
            !parse_key(&first, &last, literals, words[1])) {
            snprintf(error, error_size, "'%s' is not a key (N, A..B or \"text\")", words[1]);
            return false;
        }
    }
    if (op.kind == OP_KINDS) {
        snprintf(error, error_size, "not an operation");
        return false;
    }
    if (op_has_key(op.kind) && !(first & LITERAL_KEY) && last + 1 > *generated)
        *generated = last + 1;
    if (out->ops.count + repeat * (last - first + 1) > 20000000) {
        snprintf(error, error_size, "more than 2 * 10^7 operations");
        return false;
    }
    for (uint64_t r = 0; r < repeat; r++)
        for (uint64_t k = first; k <= last; k++) {
            op.key = (uint32_t)k;
            ops_push(&out->ops, op);
        }
    return true;
}

/* Parse a file of the format above (text is changed); false with error
 * set, naming the line, on a mistake. */
static bool parse_model_file(model_file *out, char *text, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    literal_set literals = { 0 };
    bool have_params = false, ok = true;
    uint32_t line_number = 0, generated = 0;
    char reason[400] = "";
    for (char *line = text, *next; ok && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        line_number++;
        while (*line == ' ' || *line == '\t')
            line++;
        size_t len = strlen(line);
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!*line || *line == '#')
            continue;
        if (strncmp(line, "params ", 7) == 0) {
            if (have_params)
                snprintf(reason, sizeof reason, "a second params line");
            else
                ok = parse_params(&out->params, line + 7, reason, sizeof reason);
            ok = ok && !have_params;
            have_params = true;
        } else if (!have_params) {
            snprintf(reason, sizeof reason, "the first line must be params");
            ok = false;
        } else {
            ok =
                parse_op_line(out, &literals, &generated, line, line_number, reason, sizeof reason);
        }
    }
    if (ok && !have_params)
        snprintf(error, error_size, "no params line");
    else if (!ok)
        snprintf(error, error_size, "line %" PRIu32 ": %s", line_number, reason);
    if (!ok || !have_params) {
        for (uint32_t i = 0; i < literals.count; i++)
            free(literals.names[i]);
        free(literals.names);
        free(out->ops.ops);
        out->ops.ops = NULL;
        return false;
    }
    if (out->params.keys > generated)
        generated = out->params.keys;
    for (size_t i = 0; i < out->ops.count; i++)
        if (op_has_key(out->ops.ops[i].kind) && (out->ops.ops[i].key & LITERAL_KEY))
            out->ops.ops[i].key = generated + (out->ops.ops[i].key & ~LITERAL_KEY);
    universe_make(&out->keys, out->params.seed, generated, literals.names, literals.count);
    return true;
}

/* Parse and replay text (a file of the format, named name): the failure,
 * with the message in out. */
static failure_kind replay_text(replay_result *out, const char *name, const char *text)
{
    char *copy = strdup(text);
    assert_non_null(copy);
    model_file file;
    char error[512];
    if (!parse_model_file(&file, copy, error, sizeof error))
        fail_msg("%s: %s", name, error);
    free(copy);
    replay(out, &file.params, &file.keys, file.ops.ops, file.ops.count);
    total_operations += out->stats.ops;
    free(file.ops.ops);
    universe_free(&file.keys);
    return out->failure;
}

/* The format's own round trip: what write_ops writes parses back to the
 * same operations; and mistakes are refused with their line. */
static void test_file_format(void **state)
{
    (void)state;
    const char text[] = "# a comment\n"
                        "params cuckoo b=2 f=8 growth=1 capacity=1024 semi=0 kicks=20 seed=0\n"
                        "\n"
                        "expect adds_ok\n"
                        "add \"a\"\n"
                        "add \"foo\" x6\n"
                        "add 3..6\n"
                        "remove 4\n"
                        "add_once 9 x2\n"
                        "query \"a\"\n"
                        "count 2\n"
                        "saveload\n"
                        "check\n"
                        "expect tables 1\n"
                        "expect memory_below 65536\n";
    char *copy = strdup(text);
    model_file file;
    char error[512];
    if (!parse_model_file(&file, copy, error, sizeof error))
        fail_msg("%s", error);
    free(copy);
    assert_int_equal(file.params.bucket_size, 2);
    assert_int_equal(file.params.max_kicks, 20);
    assert_int_equal(file.params.capacity, 1024);
    assert_int_equal(file.keys.generated, 10);
    assert_int_equal(file.keys.count, 12);
    assert_int_equal(file.ops.count, 1 + 1 + 6 + 4 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1);
    assert_int_equal(file.ops.ops[2].kind, OP_ADD);
    assert_int_equal(file.ops.ops[2].key, 11);
    assert_int_equal(file.ops.ops[2].line, 6);
    assert_int_equal(file.ops.ops[11].key, 6);
    char *written = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&written, &len);
    assert_non_null(out);
    fprintf(out, "params cuckoo b=2 f=8 growth=1 capacity=1024 semi=0 kicks=20 seed=0\n");
    write_ops(out, &file.keys, file.ops.ops, file.ops.count);
    fclose(out);
    assert_string_equal(written,
                        "params cuckoo b=2 f=8 growth=1 capacity=1024 semi=0 kicks=20 seed=0\n"
                        "expect adds_ok\n"
                        "add \"a\"\n"
                        "add \"foo\" x6\n"
                        "add 3..6\n"
                        "remove 4\n"
                        "add_once 9 x2\n"
                        "query \"a\"\n"
                        "count 2\n"
                        "saveload\n"
                        "check\n"
                        "expect tables 1\n"
                        "expect memory_below 65536\n");
    model_file again;
    if (!parse_model_file(&again, written, error, sizeof error))
        fail_msg("%s", error);
    assert_int_equal(again.ops.count, file.ops.count);
    for (size_t i = 0; i < file.ops.count; i++) {
        assert_int_equal(again.ops.ops[i].kind, file.ops.ops[i].kind);
        assert_int_equal(again.ops.ops[i].key, file.ops.ops[i].key);
        assert_int_equal(again.ops.ops[i].number, file.ops.ops[i].number);
    }
    free(written);
    free(again.ops.ops);
    universe_free(&again.keys);
    free(file.ops.ops);
    universe_free(&file.keys);

    static const struct {
        const char *text, *error;
    } mistakes[] = {
        { "add 1\n", "line 1: the first line must be params" },
        { "params bloom capacity=9\n", "line 1: params: the family" },
        { "params cuckoo b=2 q=1\n", "line 1: params: no parameter q" },
        { "params counting bits=x\n", "line 1: params: bits=x is not a number" },
        { "params cuckoo capacity=9\n#\nadd\n", "line 3: not an operation" },
        { "params cuckoo capacity=9\nadd 5..2\n", "line 2: '5..2' is not a key" },
        { "params cuckoo capacity=9\nfly 1\n", "line 2: not an operation" },
        { "params cuckoo capacity=9\nexpect tables\n", "line 2: not an operation" },
        { "params cuckoo capacity=9\nadd 1 x0\n", "line 2: a repeat" },
        { "# nothing\n", "no params line" },
    };
    for (size_t i = 0; i < sizeof mistakes / sizeof mistakes[0]; i++) {
        copy = strdup(mistakes[i].text);
        if (parse_model_file(&file, copy, error, sizeof error))
            fail_msg("'%s' parsed", mistakes[i].text);
        free(copy);
        if (strncmp(error, mistakes[i].error, strlen(mistakes[i].error)) != 0)
            fail_msg("'%s': '%s', expected '%s...'", mistakes[i].text, error, mistakes[i].error);
    }
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every reproducer of tests/data/model replays without a failure. */
static void test_reproducers(void **state)
{
    (void)state;
    char *dir_path = amq_test_data_path("model");
    assert_non_null(dir_path);
    DIR *dir = opendir(dir_path);
    if (!dir)
        fail_msg("cannot open %s: %s", dir_path, strerror(errno));
    char **names = NULL;
    size_t count = 0;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
        size_t len = strlen(entry->d_name);
        if (len < 5 || strcmp(entry->d_name + len - 4, ".txt") != 0)
            continue;
        names = realloc(names, (count + 1) * sizeof *names);
        assert_non_null(names);
        names[count] = strdup(entry->d_name);
        assert_non_null(names[count++]);
    }
    closedir(dir);
    if (count < 2)
        fail_msg("%s holds %zu reproducers, expected at least 2", dir_path, count);
    qsort(names, count, sizeof *names, compare_names);
    size_t failed = 0;
    for (size_t i = 0; i < count; i++) {
        char name[300];
        snprintf(name, sizeof name, "model/%s", names[i]);
        char *text = amq_test_read_data(name, NULL);
        /* The first line says what the file reproduces. */
        if (text[0] != '#')
            fail_msg("%s: the first line is not a comment saying what it reproduces", name);
        replay_result result;
        double start = seconds_now();
        if (replay_text(&result, name, text) != FAIL_NONE) {
            failed++;
            print_message("FAILED %s: %s: %s\n", name, failure_names[result.failure],
                          result.message);
        } else {
            print_message("%s: %" PRIu64 " operations pass (%.2f s)\n", name, result.stats.ops,
                          seconds_now() - start);
        }
        free(text);
        free(names[i]);
    }
    free(names);
    free(dir_path);
    if (failed)
        fail_msg("%zu of %zu reproducers of tests/data/model failed", failed, count);
}

/* One key added 10,000 times, then 1,000 others, into a growing filter of
 * capacity 9 (growth 2): every add succeeds, and the memory stays a few
 * KiB (copies of one key need not take slots, nor tables). */
static void test_hot_key_then_others(void **state)
{
    (void)state;
    static const uint32_t bucket_sizes[] = { 2, 4, 8 };
    size_t failed = 0;
    for (size_t b = 0; b < 3; b++) {
        char text[512];
        snprintf(text, sizeof text,
                 "params cuckoo b=%" PRIu32 " f=12 growth=2 capacity=9 semi=0 kicks=0 seed=%" PRIu64
                 "\n"
                 "expect adds_ok\n"
                 "add \"hot\" x10000\n"
                 "add 0..999\n"
                 "check\n"
                 "expect memory_below 65536\n",
                 bucket_sizes[b], seed);
        replay_result result;
        if (replay_text(&result, "hot key then others", text) != FAIL_NONE) {
            failed++;
            print_message("FAILED b = %" PRIu32 ": %s: %s\n", bucket_sizes[b],
                          failure_names[result.failure], result.message);
        } else {
            print_message("b = %" PRIu32
                          ": 10,000 copies of one key and 1,000 other keys in %" PRIu64 " bytes\n",
                          bucket_sizes[b], result.stats.memory_bytes);
        }
    }
    if (failed)
        fail_msg("%zu of 3 bucket sizes failed", failed);
}

/* RedisBloom's defaults (bucket size 2, growth 1, 20 kicks) at capacity
 * 1024: "a", then "foo" six times, then "bar" and "baz" are all taken, in
 * one table. */
static void test_redisbloom_defaults_take_six_copies(void **state)
{
    (void)state;
    const char text[] = "params cuckoo b=2 f=8 growth=1 capacity=1024 semi=0 kicks=20 seed=0\n"
                        "expect adds_ok\n"
                        "add \"a\"\n"
                        "add \"foo\" x6\n"
                        "add \"bar\"\n"
                        "add \"baz\"\n"
                        "expect tables 1\n";
    replay_result result;
    if (replay_text(&result, "RedisBloom's defaults", text) != FAIL_NONE)
        fail_msg("%s: %s", failure_names[result.failure], result.message);
}

int main(void)
{
    seed = amq_test_seed(20270115);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_format),
        cmocka_unit_test(test_reproducers),
        cmocka_unit_test(test_hot_key_then_others),
        cmocka_unit_test(test_redisbloom_defaults_take_six_copies),
        cmocka_unit_test(test_cuckoo_fixed_size),
        cmocka_unit_test(test_cuckoo_growing),
        cmocka_unit_test(test_cuckoo_semi_sorted),
        cmocka_unit_test(test_counting_bloom),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    fprintf(stderr, "test_model: %" PRIu64 " operations\n", total_operations);
    return failed;
}
