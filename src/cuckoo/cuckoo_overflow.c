/*
 * cuckoo_overflow.c - a table's overflow: the exact count of the copies of
 * a fingerprint that its pair of buckets holds beyond b / 2.
 *
 * Why there is one. A cuckoo filter stores one fingerprint per copy of a
 * key, and a key's copies can only live in its two buckets. A key added
 * over and over would fill both with its own copies, and then the table is
 * stuck for reasons that have nothing to do with its load: another copy
 * finds no free slot, and no walk can make one, since every resident of
 * those buckets is a copy whose alternate is the other bucket of the same
 * pair. Worse, any walk that enters one of the two buckets is trapped
 * there, so other keys' inserts fail too, at any load. Chaining a new table
 * for it (the usual answer to a failed insert) spends a whole table on one
 * key, and a popular key added on every visit would chain tables until the
 * filter may chain no more. Copies crowd a table well before that: when
 * every key is added c times, a table of b = 4 first refuses a key at 97%
 * of its slots for c = 1, 87% for c = 2 and 40% for c = 4 (b = 2: 88% for
 * c = 1, 40% for c = 2; b = 8: 97%, 87% and 40% for c = 2, 4, 8), 20
 * tables of 100,000 keys each, with copies past b counted: c copies that
 * must share two buckets are a pile-up in the making once c reaches b.
 * With the rule below no c makes a table refuse a key below 87% of its
 * slots (b = 2: 88%).
 *
 * The rule. A table's pair of buckets stores at most b / 2 copies of one
 * fingerprint (counting the stash, when it holds one for the pair); a
 * further copy is counted in the table's overflow under the pair's lower
 * bucket and the fingerprint. A removal takes a counted copy before a
 * stored one. Hence the invariant
 *
 *     O   an overflow entry exists only while its pair stores (in slots or
 *         the stash) at least b / 2 copies of its fingerprint,
 *
 * since copies are only counted when b are stored, a stored copy is only
 * removed when no count is left, and relocations move a copy between the
 * two buckets of its pair, never out of it. From O: a query never needs the
 * overflow (a key that matches an entry matches the stored copies); each
 * entry has b / 2 stored copies of its own, so the overflow has at most
 * 2 slots / b entries whatever was added; and a key's copies take at most
 * b / 2 slots, half of its two buckets, leaving the rest to other keys.
 * Two keys with the same fingerprint and the same pair are one key to the
 * table, as they are to its slots: they share the count.
 *
 * The map: an ordered hash table (Amble and Knuth, "Ordered hash tables",
 * The Computer Journal 17(2), 1974) with linear probing and no wrap. An
 * entry's rank is the splitmix64 finalizer of (bucket, fingerprint), and
 * its home slot is the rank's top bits, log2(capacity) of them, so that
 * home slots rise with rank. Entries are kept in increasing rank along
 * the array: an insert goes where its rank belongs in its run, at or past
 * its home, and moves the run's larger entries up one slot; a run that
 * passes the last home slot goes on into slots past it (length grows by a
 * few at a time). Hence the invariants
 *
 *     R1  every used entry lies at or after its home slot, with no free
 *         slot between the two;
 *     R2  the used entries' ranks increase from slot 0 to the last,
 *
 * from which a lookup starts at the home slot and stops at the first free
 * entry or larger rank, and the array read in order is the entries sorted
 * by rank: the order a file holds them in, written straight from the map
 * with no copy and no sort (a save allocates nothing), and the same for
 * the same entries whatever the map's history or capacity. The map is
 * resized (doubled) to keep at most 3/4 of its home slots used; an entry
 * whose count falls to 0 is removed by moving back the run's later
 * entries that are past their home slot (no tombstones). Most tables
 * never have an entry, and then the map is a NULL pointer.
 */
#include "core/alloc.h"
#include "core/util.h"
#include "cuckoo/cuckoo_internal.h"

#include <string.h>

/* The smallest map, and the slots past the last home slot a run is given
 * at a time. */
enum { MIN_CAPACITY = 8, SPILL_STEP = 8 };

static uint64_t rank_of(const amq__cuckoo_overflow_entry *e)
{
    return amq__cuckoo_overflow_rank(e->bucket, e->fingerprint);
}

static uint64_t home(const amq__cuckoo_overflow *o, uint64_t rank)
{
    return rank >> o->shift;
}

/* Where rank is, or would go: the first slot from its home that is free
 * or holds a rank not below it (length when the last run ends first). */
static uint64_t position(const amq__cuckoo_overflow *o, uint64_t rank)
{
    uint64_t i = home(o, rank);
    while (i < o->length && o->entries[i].copies && rank_of(&o->entries[i]) < rank)
        i++;
    return i;
}

/* The entry of (bucket, fingerprint), or NULL. */
static amq__cuckoo_overflow_entry *find(const amq__cuckoo_overflow *o, uint32_t bucket,
                                        uint32_t fingerprint)
{
    if (o->used == 0)
        return NULL;
    uint64_t i = position(o, amq__cuckoo_overflow_rank(bucket, fingerprint));
    amq__cuckoo_overflow_entry *e = i < o->length ? &o->entries[i] : NULL;
    return e && e->copies && e->bucket == bucket && e->fingerprint == fingerprint ? e : NULL;
}

uint64_t amq__cuckoo_overflow_copies(const amq__cuckoo_overflow *o, uint32_t bucket,
                                     uint32_t fingerprint)
{
    const amq__cuckoo_overflow_entry *e = find(o, bucket, fingerprint);
    return e ? e->copies : 0;
}

/* Move the map to capacity home slots (a power of two, at least
 * MIN_CAPACITY): AMQ_OK or AMQ_ENOMEM (unchanged). The entries, read in
 * order, are laid down in order, each at its new home or just past the
 * one before: first to learn how far the last run goes, then for real. */
static int resize(amq__cuckoo_overflow *o, uint64_t capacity)
{
    unsigned shift = 64 - (unsigned)__builtin_ctzll(capacity);
    uint64_t end = 0; /* one past the last slot taken */
    for (uint64_t i = 0; i < o->length; i++)
        if (o->entries[i].copies) {
            uint64_t at = rank_of(&o->entries[i]) >> shift;
            end = (at > end ? at : end) + 1;
        }
    uint64_t length = end > capacity ? end + SPILL_STEP : capacity + SPILL_STEP;
    if (length > SIZE_MAX / sizeof *o->entries)
        return AMQ_ENOMEM;
    amq__cuckoo_overflow_entry *entries = amq__calloc((size_t)length, sizeof *entries);
    if (!entries)
        return AMQ_ENOMEM;
    end = 0;
    for (uint64_t i = 0; i < o->length; i++)
        if (o->entries[i].copies) {
            uint64_t at = rank_of(&o->entries[i]) >> shift;
            at = at > end ? at : end;
            entries[at] = o->entries[i];
            end = at + 1;
        }
    amq__free(o->entries);
    o->entries = entries;
    o->capacity = capacity;
    o->length = length;
    o->shift = shift;
    return AMQ_OK;
}

int amq__cuckoo_overflow_add(amq__cuckoo_overflow *o, uint32_t bucket, uint32_t fingerprint,
                             uint64_t copies)
{
    if (o->copies > UINT64_MAX - copies)
        return AMQ_ERANGE;
    amq__cuckoo_overflow_entry *e = find(o, bucket, fingerprint);
    if (e) {
        e->copies += copies;
        o->copies += copies;
        return AMQ_OK;
    }
    if ((o->used + 1) * 4 > o->capacity * 3) {
        int status = resize(o, o->capacity ? o->capacity * 2 : MIN_CAPACITY);
        if (status != AMQ_OK)
            return status;
    }
    uint64_t rank = amq__cuckoo_overflow_rank(bucket, fingerprint);
    uint64_t at = position(o, rank), free_at = at;
    while (free_at < o->length && o->entries[free_at].copies)
        free_at++;
    if (free_at == o->length) {
        /* The last run reaches the end: give it more slots. */
        uint64_t length = o->length + SPILL_STEP;
        if (length > SIZE_MAX / sizeof *o->entries)
            return AMQ_ENOMEM;
        amq__cuckoo_overflow_entry *grown =
            amq__realloc(o->entries, (size_t)length * sizeof *grown);
        if (!grown)
            return AMQ_ENOMEM;
        memset(grown + o->length, 0, SPILL_STEP * sizeof *grown);
        o->entries = grown;
        o->length = length;
    }
    /* The run's larger entries up one slot: each stays past its home (R1)
     * and in order (R2). */
    memmove(&o->entries[at + 1], &o->entries[at], (size_t)(free_at - at) * sizeof *o->entries);
    o->entries[at] = (amq__cuckoo_overflow_entry){ .copies = copies,
                                                   .bucket = bucket,
                                                   .fingerprint = fingerprint };
    o->used++;
    o->copies += copies;
    return AMQ_OK;
}

bool amq__cuckoo_overflow_take(amq__cuckoo_overflow *o, uint32_t bucket, uint32_t fingerprint)
{
    amq__cuckoo_overflow_entry *e = find(o, bucket, fingerprint);
    if (!e)
        return false;
    o->copies--;
    if (--e->copies)
        return true;
    o->used--;
    /* Move back each later entry of the run that is past its home slot:
     * it may sit one slot nearer (R1), and the order stays (R2). The first
     * one at its home ends it, and so every entry after it. */
    uint64_t hole = (uint64_t)(e - o->entries);
    for (uint64_t i = hole + 1;
         i < o->length && o->entries[i].copies && home(o, rank_of(&o->entries[i])) < i; i++) {
        o->entries[hole] = o->entries[i];
        hole = i;
    }
    o->entries[hole].copies = 0;
    return true;
}

void amq__cuckoo_overflow_free(amq__cuckoo_overflow *o)
{
    amq__free(o->entries);
    memset(o, 0, sizeof *o);
}

uint64_t amq__cuckoo_overflow_memory_bytes(const amq__cuckoo_overflow *o)
{
    return o->used * sizeof *o->entries;
}
