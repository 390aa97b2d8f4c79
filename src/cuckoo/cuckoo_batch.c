/*
 * cuckoo_batch.c - the cuckoo filter's batch calls: the queries
 * contains_many and contains_many_hash, and the adds add_many and
 * add_unique_many (the filter is explained at the top of cuckoo.c).
 *
 * A batch asks the same membership test as a single query
 * (amq__cuckoo_table_holds), but can hide the memory latency that bounds a
 * query of a large table: the hashes go in chunks of LOOKUP_CHUNK, a first
 * pass works out each key's fingerprint and two buckets and prefetches the
 * buckets, and a second pass tests them, by then in the cache or on their
 * way. For a table the cache holds, keys are tested as they come: the
 * processor overlaps the reads of neighbouring keys by itself, and the
 * prefetches and the positions kept between the passes only cost. A grown
 * filter's keys are asked one by one, of each table.
 *
 * A batch add must give what adds one by one give, in order (a key may
 * repeat, a walk moves other keys' fingerprints), so only the hashing and
 * the prefetch of each key's first bucket in the newest table run ahead;
 * the adds themselves are the single add's.
 */
#include "amq/cuckoo.h"
#include "core/hash.h"
#include "core/util.h"
#include "cuckoo/cuckoo_internal.h"

/* How many keys the batch query hashes and prefetches before it reads their
 * buckets, and the table size from which it does so; smaller tables are
 * read straight through (prefetching saved 30% at 10^6 keys, f = 12, and
 * cost 8% at 10^4, where the table is in the cache). */
#define LOOKUP_CHUNK           32
#define PREFETCHED_TABLE_BYTES ((uint64_t)1 << 20)

/* The batch over one table, written once and compiled with plain and
 * prefetch constant, into the four functions below. */
static AMQ__ALWAYS_INLINE void batch(const amq_cuckoo *f, const amq__cuckoo_table *t,
                                     const uint64_t *hashes, size_t count, uint8_t *results,
                                     bool plain, bool prefetch)
{
    if (!prefetch) {
        for (size_t i = 0; i < count; i++) {
            uint32_t fingerprint = amq__cuckoo_fingerprint(f, hashes[i]);
            uint64_t i1 = amq__cuckoo_index(hashes[i], t->buckets);
            uint64_t i2 = amq__cuckoo_alternate(f, t, i1, fingerprint, plain);
            results[i] = amq__cuckoo_table_holds(f, t, amq__cuckoo_bucket_at(f, i1),
                                                 amq__cuckoo_bucket_at(f, i2), fingerprint, plain);
        }
        return;
    }
    uint64_t firsts[LOOKUP_CHUNK], seconds[LOOKUP_CHUNK];
    uint32_t fingerprints[LOOKUP_CHUNK];
    for (size_t start = 0; start < count; start += LOOKUP_CHUNK) {
        size_t chunk = count - start < LOOKUP_CHUNK ? count - start : LOOKUP_CHUNK;
        for (size_t j = 0; j < chunk; j++) {
            uint64_t hash = hashes[start + j];
            uint32_t fingerprint = amq__cuckoo_fingerprint(f, hash);
            uint64_t i1 = amq__cuckoo_index(hash, t->buckets);
            uint64_t i2 = amq__cuckoo_alternate(f, t, i1, fingerprint, plain);
            fingerprints[j] = fingerprint;
            firsts[j] = amq__cuckoo_bucket_at(f, i1);
            seconds[j] = amq__cuckoo_bucket_at(f, i2);
            __builtin_prefetch(amq__cuckoo_bucket_start(f, t, firsts[j]));
            __builtin_prefetch(amq__cuckoo_bucket_start(f, t, seconds[j]));
        }
        for (size_t j = 0; j < chunk; j++)
            results[start + j] =
                amq__cuckoo_table_holds(f, t, firsts[j], seconds[j], fingerprints[j], plain);
    }
}

/* Their pointers are restrict: results is a byte array, and without the
 * promise that it overlaps nothing else every store to it could change the
 * filter's fields as far as the compiler knows, so they would be loaded
 * again after each key (7% slower by hashes). The promise is made here,
 * where the loop is compiled, not on batch, whose parameters lose it when
 * it is inlined. */
static void batch_plain(const amq_cuckoo *restrict f, const uint64_t *restrict hashes, size_t count,
                        uint8_t *restrict results)
{
    batch(f, &f->tables[0], hashes, count, results, true, false);
}

static void batch_plain_prefetched(const amq_cuckoo *restrict f, const uint64_t *restrict hashes,
                                   size_t count, uint8_t *restrict results)
{
    batch(f, &f->tables[0], hashes, count, results, true, true);
}

static void batch_any(const amq_cuckoo *restrict f, const uint64_t *restrict hashes, size_t count,
                      uint8_t *restrict results)
{
    batch(f, &f->tables[0], hashes, count, results, false, false);
}

static void batch_any_prefetched(const amq_cuckoo *restrict f, const uint64_t *restrict hashes,
                                 size_t count, uint8_t *restrict results)
{
    batch(f, &f->tables[0], hashes, count, results, false, true);
}

static void contains_many_of_hashes(const amq_cuckoo *f, const uint64_t *hashes, size_t count,
                                    uint8_t *results)
{
    if (f->table_count > 1) {
        for (size_t i = 0; i < count; i++)
            results[i] = amq_cuckoo_contains_hash(f, hashes[i]);
        return;
    }
    bool prefetch = amq__cuckoo_table_bytes(f, f->tables[0].buckets) > PREFETCHED_TABLE_BYTES;
    if (amq__cuckoo_plain_single_table(f))
        (prefetch ? batch_plain_prefetched : batch_plain)(f, hashes, count, results);
    else
        (prefetch ? batch_any_prefetched : batch_any)(f, hashes, count, results);
}

int amq_cuckoo_contains_many(uint8_t *results, const amq_cuckoo *filter, const void *const *keys,
                             const size_t *lens, size_t count)
{
    if (count == 0)
        return AMQ_OK;
    if (!results || !filter || !keys || !lens)
        return AMQ_EINVAL;
    uint64_t chunk_hashes[LOOKUP_CHUNK];
    for (size_t start = 0; start < count; start += LOOKUP_CHUNK) {
        size_t chunk = count - start < LOOKUP_CHUNK ? count - start : LOOKUP_CHUNK;
        for (size_t j = 0; j < chunk; j++)
            chunk_hashes[j] = amq__hash64(&filter->hasher, keys[start + j], lens[start + j]);
        contains_many_of_hashes(filter, chunk_hashes, chunk, results + start);
    }
    return AMQ_OK;
}

int amq_cuckoo_contains_many_hash(uint8_t *results, const amq_cuckoo *filter,
                                  const uint64_t *hashes, size_t count)
{
    if (count == 0)
        return AMQ_OK;
    if (!results || !filter || !hashes)
        return AMQ_EINVAL;
    contains_many_of_hashes(filter, hashes, count, results);
    return AMQ_OK;
}

/* The adds of keys in order, as the single adds give them, until a key's
 * add fails or leaves the filter full (amq_cuckoo_full): the generic batch
 * call checks its growth limits there. Returns how many keys it handled. */
size_t amq__cuckoo_add_many_until_full(int *results, amq_cuckoo *f, const void *const *keys,
                                       const size_t *lens, size_t count, bool unique)
{
    uint64_t chunk_hashes[LOOKUP_CHUNK];
    for (size_t start = 0; start < count; start += LOOKUP_CHUNK) {
        size_t chunk = count - start < LOOKUP_CHUNK ? count - start : LOOKUP_CHUNK;
        const amq__cuckoo_table *newest = &f->tables[f->table_count - 1];
        bool prefetch = amq__cuckoo_table_bytes(f, newest->buckets) > PREFETCHED_TABLE_BYTES;
        for (size_t j = 0; j < chunk; j++) {
            chunk_hashes[j] = amq__hash64(&f->hasher, keys[start + j], lens[start + j]);
            if (prefetch) {
                uint64_t i1 = amq__cuckoo_index(chunk_hashes[j], newest->buckets);
                __builtin_prefetch(
                    amq__cuckoo_bucket_start(f, newest, amq__cuckoo_bucket_at(f, i1)), 1);
            }
        }
        for (size_t j = 0; j < chunk; j++) {
            int status = unique ? amq_cuckoo_add_unique_hash(f, chunk_hashes[j])
                                : amq_cuckoo_add_hash(f, chunk_hashes[j]);
            results[start + j] = status;
            if (status < 0 || amq_cuckoo_full(f))
                return start + j + 1;
        }
    }
    return count;
}

/* The public batch adds: every key, in windows of the stack's answers when
 * the caller wants none, stopping only at a failed add. */
static int add_many(int *results, size_t *handled, amq_cuckoo *f, const void *const *keys,
                    const size_t *lens, size_t count, bool unique)
{
    if (handled)
        *handled = 0;
    if (!f || !amq__key_array_valid(keys, lens, count))
        return AMQ_EINVAL;
    int scratch[LOOKUP_CHUNK];
    size_t done = 0;
    while (done < count) {
        size_t n = count - done;
        int *answers = results ? results + done : scratch;
        if (!results && n > LOOKUP_CHUNK)
            n = LOOKUP_CHUNK;
        size_t got =
            amq__cuckoo_add_many_until_full(answers, f, keys + done, lens + done, n, unique);
        if (answers[got - 1] < 0) {
            done += got - 1;
            if (handled)
                *handled = done;
            return answers[got - 1];
        }
        done += got;
    }
    if (handled)
        *handled = done;
    return AMQ_OK;
}

int amq_cuckoo_add_many(int *results, size_t *handled, amq_cuckoo *filter, const void *const *keys,
                        const size_t *lens, size_t count)
{
    return add_many(results, handled, filter, keys, lens, count, false);
}

int amq_cuckoo_add_unique_many(int *results, size_t *handled, amq_cuckoo *filter,
                               const void *const *keys, const size_t *lens, size_t count)
{
    return add_many(results, handled, filter, keys, lens, count, true);
}
