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
 * The map: open addressing with linear probing over a power-of-two array
 * of 16-byte entries, resized to keep it at most 3/4 full; an entry whose count
 * falls to 0 is removed by shifting back the entries after it that would
 * otherwise be cut off from their home position (no tombstones), so a
 * lookup stops at the first free entry. Most tables never have an entry,
 * and then the map is a NULL pointer.
 */
#include "core/alloc.h"
#include "core/util.h"
#include "cuckoo/cuckoo_internal.h"

#include <stdlib.h>
#include <string.h>

/* The first entry a key probes in a map of capacity entries. */
static uint64_t home(uint64_t capacity, uint32_t bucket, uint32_t fingerprint)
{
    return amq__mix64((uint64_t)bucket << 32 | fingerprint) & (capacity - 1);
}

/* The entry of (bucket, fingerprint), or the free entry where it would go. */
static amq__cuckoo_overflow_entry *find(const amq__cuckoo_overflow *o, uint32_t bucket,
                                        uint32_t fingerprint)
{
    uint64_t mask = o->capacity - 1;
    for (uint64_t i = home(o->capacity, bucket, fingerprint);; i = (i + 1) & mask) {
        amq__cuckoo_overflow_entry *e = &o->entries[i];
        if (e->copies == 0 || (e->bucket == bucket && e->fingerprint == fingerprint))
            return e;
    }
}

uint64_t amq__cuckoo_overflow_copies(const amq__cuckoo_overflow *o, uint32_t bucket,
                                     uint32_t fingerprint)
{
    if (o->used == 0)
        return 0;
    return find(o, bucket, fingerprint)->copies;
}

/* Move the map to capacity entries: AMQ_OK or AMQ_ENOMEM (unchanged). */
static int resize(amq__cuckoo_overflow *o, uint64_t capacity)
{
    if (capacity > SIZE_MAX / sizeof *o->entries)
        return AMQ_ENOMEM;
    amq__cuckoo_overflow_entry *entries = amq__calloc((size_t)capacity, sizeof *entries);
    if (!entries)
        return AMQ_ENOMEM;
    amq__cuckoo_overflow old = *o;
    o->entries = entries;
    o->capacity = capacity;
    for (uint64_t i = 0; i < old.capacity; i++)
        if (old.entries[i].copies)
            *find(o, old.entries[i].bucket, old.entries[i].fingerprint) = old.entries[i];
    amq__free(old.entries);
    return AMQ_OK;
}

int amq__cuckoo_overflow_add(amq__cuckoo_overflow *o, uint32_t bucket, uint32_t fingerprint,
                             uint64_t copies)
{
    if (o->copies > UINT64_MAX - copies)
        return AMQ_ERANGE;
    if ((o->used + 1) * 4 > o->capacity * 3) {
        int status = resize(o, o->capacity ? o->capacity * 2 : 8);
        if (status != AMQ_OK)
            return status;
    }
    amq__cuckoo_overflow_entry *e = find(o, bucket, fingerprint);
    if (e->copies == 0) {
        e->bucket = bucket;
        e->fingerprint = fingerprint;
        o->used++;
    }
    e->copies += copies;
    o->copies += copies;
    return AMQ_OK;
}

bool amq__cuckoo_overflow_take(amq__cuckoo_overflow *o, uint32_t bucket, uint32_t fingerprint)
{
    if (o->used == 0)
        return false;
    amq__cuckoo_overflow_entry *e = find(o, bucket, fingerprint);
    if (e->copies == 0)
        return false;
    o->copies--;
    if (--e->copies)
        return true;
    o->used--;
    /* Backward shift: each later entry of the run moves into the hole
     * unless its home lies cyclically after the hole, at or before it. */
    uint64_t mask = o->capacity - 1;
    uint64_t hole = (uint64_t)(e - o->entries);
    for (uint64_t i = (hole + 1) & mask; o->entries[i].copies; i = (i + 1) & mask) {
        uint64_t want = home(o->capacity, o->entries[i].bucket, o->entries[i].fingerprint);
        if (((i - want) & mask) >= ((i - hole) & mask)) {
            o->entries[hole] = o->entries[i];
            o->entries[i].copies = 0;
            hole = i;
        }
    }
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

static int entry_order(const void *a, const void *b)
{
    const amq__cuckoo_overflow_entry *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return (x->fingerprint > y->fingerprint) - (x->fingerprint < y->fingerprint);
}

void amq__cuckoo_overflow_sorted(amq__cuckoo_overflow_entry *out, const amq__cuckoo_overflow *o)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < o->capacity; i++)
        if (o->entries[i].copies)
            out[n++] = o->entries[i];
    qsort(out, (size_t)n, sizeof *out, entry_order);
}
