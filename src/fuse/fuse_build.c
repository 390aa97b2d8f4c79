/*
 * fuse_build.c - building a binary fuse filter: the array's shape for a
 * number of keys, and the construction by peeling with bounded retries. The
 * filter itself and why peeling works are explained at the top of fuse.c;
 * this file is about doing it fast and in bounded memory.
 *
 * Shape (Graf & Lemire, section 4, fitted by experiment there). For n keys
 * and arity 3
 *
 *     segment length L = 2^floor(ln n / ln 3.33 + 2.25)
 *     size factor      = max(1.125, 0.875 + 0.25 ln(10^6) / ln n)
 *
 * and for arity 4
 *
 *     L                = 2^floor(ln n / ln 2.91 - 0.5)
 *     size factor      = max(1.075, 0.77 + 0.305 ln(600000) / ln n)
 *
 * with L kept within [4, 2^18]. The array gets ceil(n x size factor / L)
 * segments, at least arity: segment_count = that - (arity - 1), at least 1,
 * and array_length = (segment_count + arity - 1) x L. Small sets get a larger
 * factor (5.9 at n = 2, 1.375 at 1000) because a small random hypergraph
 * needs more room to peel; from a million keys on it is 1.125 (1.075): 9.04
 * bits per key for f = 8 at 10^6 keys, 9.02 at 10^7. n = 0 and 1 get one
 * segment: 3L (4L) slots.
 *
 * Construction, one attempt, for the keys' 64-bit hashes h_1..h_n and an
 * attempt seed s:
 *
 *   1. Partition. m_i = mix(h_i, s) (fuse_internal.h); count the keys per
 *      segment of their first slot, floor(m_i x segment_count / 2^64), and
 *      scatter the m_i into a buffer in segment order (a counting sort).
 *   2. Fill. For each m in that order, for each of its slots j:
 *      count[j] += 1 and keys[j] ^= m. Because the keys arrive by segment,
 *      these updates stay within a window of arity segments that moves
 *      once through the array: at 10^7 keys the window is 3 x 2^15 slots x
 *      9 bytes = 885 KB, which fits the L2 cache, where updates in key order
 *      would miss it on almost every slot of a 100 MB array. The window's
 *      front segment is zeroed as it enters, so that zeroing costs no pass
 *      of its own over the array.
 *   3. Peel. Scan the slots in order, a block at a time, queueing those
 *      with count 1. For each queued slot j whose count is still 1, the
 *      key there is m = keys[j] (the xor of one hash is that hash): record
 *      m, remove it from all its slots (count - 1, keys ^= m) and queue
 *      those of its slots whose count fell to 1, unless the scan is still
 *      to reach them. The queue empties before the scan moves on, so the
 *      slots touched stay within a few segments of the scan; the window's
 *      front, arity - 1 segments ahead of the block scanned, is prefetched
 *      a block at a time. Any slot of count 1 is peeled sooner or later,
 *      and peeling until none is left ends in the same place (the graph's
 *      2-core) whatever the order. The peel order overwrites the buffer of
 *      step 1: the keys m themselves, and beside them, a byte each, which
 *      of its slots (0 .. arity - 1) each was peeled from - j's segment
 *      less the first slot's. All n keys peeled: success.
 *   4. Assign, in reverse peel order, reading the peel order straight
 *      through: for the key m peeled from its slot j, fingerprints[j] =
 *      fingerprint(m) xor the fingerprints of its other slots. Slot j itself
 *      is still 0 then (each slot is peeled for one key at most), so all
 *      arity slots are xored in without asking which one j is. The slots
 *      assigned after it were each the slot of a key peeled before m, at a
 *      time when m was still in the graph and that key was alone there:
 *      none is a slot of m. So once assigned, a key's slots never change
 *      and their xor stays its fingerprint.
 *
 * Counts are bytes. Filling stops them at 255; with distinct keys a slot
 * is the slot of about arity x n / length keys, 2.7 on average, and 255
 * never happens (a chance below 10^-300 per slot), so an attempt that
 * finds one (memchr, a fast pass over a byte per slot) has equal hashes
 * and fails at once. Peeling then counts down exactly.
 *
 * Retries. An attempt fails with a probability that depends on n: measured
 * over thousands of builds, up to 5% per attempt for some sets of 2 to
 * 1000 keys (3-wise; up to 15% 4-wise), none in hundreds of builds from
 * 10^5 keys on. The next attempt uses a new seed from a splitmix64
 * sequence, so the keys' hashes are mixed differently but never
 * recomputed. A set with two equal hashes can never peel (the two keys
 * share every slot, so no slot of theirs ever reaches count 1), so after
 * the first failure the hashes are sorted (sort.c) and
 * duplicates dropped: duplicate keys cost one extra attempt and a sort, and
 * never make construction fail. After AMQ_FUSE_MAX_ATTEMPTS = 100 failures
 * (for distinct keys, with independent attempts failing at most 15% of the
 * time, a chance below 10^-80) the build answers AMQ_EFULL, naming the keys
 * and attempts.
 *
 * Memory, in bytes per key at n >= 10^6, arity 3 (length = 1.125 n):
 *
 *     the keys' hashes (amq_fuse_build only)      8
 *     the segment-ordered hashes / peel order     8
 *     which slot each key was peeled from         1
 *     per slot: xor of keys 8, count 1            10.1
 *     the fingerprints (kept)                     1.1 (f = 8) or 2.3
 *     segment starts and the peel queue           < 0.01
 *
 * so about 28 (29 for f = 16) from keys and 20 (21) from hashes, plus 8
 * when the hashes must be copied to be sorted for duplicates. Everything but
 * the fingerprints is freed before the build returns. 10^8 keys take about
 * 2.8 GB. The arrays from 2 MiB up, the fingerprints too, are asked for in
 * 2 MiB pages (amq__alloc_table): the random accesses within the window,
 * and a query's, then seldom miss the TLB.
 */
#include "amq/fuse.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/hash.h"
#include "core/reduce.h"
#include "core/sort.h"
#include "core/struct_size.h"
#include "core/util.h"
#include "fuse/fuse_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where the attempt seeds' splitmix64 sequence starts. */
#define SEED_SEQUENCE_START 0x6A09E667F3BCC908ULL
/* The splitmix64 sequence's increment. */
#define SEED_SEQUENCE_STEP 0x9E3779B97F4A7C15ULL
/* Slots peeling scans before it peels what it found. */
#define SCAN_BLOCK 1024
/* First size of the peeling queue: a block and one key's slots; it grows
 * when a chain of peelings needs more. */
#define QUEUE_INITIAL (SCAN_BLOCK + 4)

/* ---- shape ---------------------------------------------------------------- */

static uint64_t segment_length_for(uint64_t count, uint32_t arity)
{
    if (count < 2)
        return AMQ__FUSE_MIN_SEGMENT_LENGTH;
    double n = (double)count;
    double exponent =
        arity == 3 ? floor(log(n) / log(3.33) + 2.25) : floor(log(n) / log(2.91) - 0.5);
    double low = log2(AMQ__FUSE_MIN_SEGMENT_LENGTH), high = log2(AMQ_FUSE_MAX_SEGMENT_LENGTH);
    exponent = fmin(fmax(exponent, low), high);
    return (uint64_t)1 << (unsigned)exponent;
}

static double size_factor_for(uint64_t count, uint32_t arity)
{
    double n = (double)count;
    if (arity == 3)
        return fmax(1.125, 0.875 + 0.25 * log(1e6) / log(n));
    return fmax(1.075, 0.77 + 0.305 * log(600000.0) / log(n));
}

bool amq__fuse_shape_for(amq__fuse_shape *out, uint64_t count, uint32_t arity,
                         uint32_t fingerprint_bits, double size_factor)
{
    uint64_t segment_length = segment_length_for(count, arity);
    double capacity = 0;
    if (size_factor > 0)
        capacity = ceil((double)count * size_factor);
    else if (count >= 2)
        capacity = ceil((double)count * size_factor_for(count, arity));
    if (!(capacity < 0x1p62))
        return false;
    uint64_t segments = ((uint64_t)capacity + segment_length - 1) / segment_length;
    uint64_t segment_count = segments > arity ? segments - (arity - 1) : 1;
    return amq__fuse_shape_make(out, arity, segment_length, segment_count, fingerprint_bits);
}

/* ---- one attempt ---------------------------------------------------------- */

typedef struct workspace {
    amq__fuse_shape shape;
    uint64_t *order;  /* n: mixed hashes in segment order, then in peel order */
    uint8_t *own;     /* n: which of its slots each key in peel order was peeled from */
    uint64_t *starts; /* segment_count + 1: where each segment's keys start in order */
    uint64_t *keys;   /* array_length: xor of the mixed hashes of the keys in each slot */
    uint8_t *counts;  /* array_length: keys in each slot, up to 255 */
    uint64_t *queue;  /* slots of count 1, to peel */
    size_t queue_capacity;
} workspace;

static void workspace_free_shaped(workspace *w)
{
    amq__free(w->starts);
    amq__aligned_free(w->keys);
    amq__aligned_free(w->counts);
    w->starts = w->keys = NULL;
    w->counts = NULL;
}

/* Allocate the arrays sized by the shape, not zeroed: fill zeroes each
 * segment of keys and counts before using it, every attempt. */
static int workspace_shape(workspace *w, const amq__fuse_shape *shape)
{
    workspace_free_shaped(w);
    w->shape = *shape;
    if (shape->segment_count >= SIZE_MAX / sizeof *w->starts ||
        shape->array_length > SIZE_MAX / sizeof *w->keys)
        return AMQ_ERANGE;
    w->starts = amq__malloc(((size_t)shape->segment_count + 1) * sizeof *w->starts);
    w->keys = amq__alloc_table(shape->array_length * sizeof *w->keys, false);
    w->counts = amq__alloc_table(shape->array_length, false);
    return w->starts && w->keys && w->counts ? AMQ_OK : AMQ_ENOMEM;
}

static void workspace_free(workspace *w)
{
    workspace_free_shaped(w);
    amq__aligned_free(w->order);
    amq__free(w->own);
    amq__free(w->queue);
}

/* Step 1: the mixed hashes into w->order, by the segment of their first
 * slot. The hashes are mixed twice, once to count the keys per segment and
 * once to place them: cheaper than writing the mixed values out and
 * reading them back. */
static void partition(workspace *w, const uint64_t *hashes, size_t n, uint64_t seed)
{
    uint64_t segments = w->shape.segment_count;
    uint64_t *starts = w->starts, *order = w->order;
    memset(starts, 0, ((size_t)segments + 1) * sizeof *starts);
    for (size_t i = 0; i < n; i++)
        starts[amq__reduce(amq__fuse_mix(hashes[i], seed), segments) + 1]++;
    for (uint64_t s = 1; s <= segments; s++)
        starts[s] += starts[s - 1];
    /* starts[s] is now where segment s begins; advancing it as keys are
     * placed leaves it where segment s + 1 begins. */
    for (size_t i = 0; i < n; i++) {
        uint64_t m = amq__fuse_mix(hashes[i], seed);
        order[starts[amq__reduce(m, segments)]++] = m;
    }
}

/* Zero segment s's counts and key xors. */
static void clear_segment(workspace *w, uint64_t s)
{
    size_t length = (size_t)w->shape.segment_length, first = (size_t)s * length;
    memset(w->counts + first, 0, length);
    memset(w->keys + first, 0, length * sizeof *w->keys);
}

/* Step 2, a segment's keys at a time. The keys of segment s touch
 * segments s to s + arity - 1 only, so segment s + arity - 1 is zeroed just
 * before them: zeroing then writes lines the updates are about to read,
 * where zeroing the whole arrays first would write them all out to memory
 * and read them back. */
static AMQ__ALWAYS_INLINE void fill(workspace *w, uint32_t arity)
{
    const amq__fuse_shape shape = w->shape;
    const uint64_t *starts = w->starts, *order = w->order;
    uint8_t *counts = w->counts;
    uint64_t *keys = w->keys;
    for (uint64_t s = 0; s + 1 < arity; s++)
        clear_segment(w, s);
    for (uint64_t s = 0; s < shape.segment_count; s++) {
        clear_segment(w, s + arity - 1);
        for (size_t i = s ? (size_t)starts[s - 1] : 0; i < starts[s]; i++) {
            uint64_t m = order[i], slots[4];
            amq__fuse_slots(&shape, m, arity, slots);
            for (uint32_t k = 0; k < arity; k++) {
                uint8_t c = counts[slots[k]];
                counts[slots[k]] = (uint8_t)(c + (c != UINT8_MAX));
                keys[slots[k]] ^= m;
            }
        }
    }
}

/* Make room for at least needed entries in the peeling queue. */
static int reserve(workspace *w, size_t needed)
{
    if (needed <= w->queue_capacity)
        return AMQ_OK;
    size_t capacity = w->queue_capacity * 2 > needed ? w->queue_capacity * 2 : needed;
    uint64_t *queue = amq__realloc(w->queue, capacity * sizeof *queue);
    if (!queue)
        return AMQ_ENOMEM;
    w->queue = queue;
    w->queue_capacity = capacity;
    return AMQ_OK;
}

/* Step 3: *peeled receives the keys peeled; they are in w->order, each
 * with the index of its own slot in w->own. The slots are scanned
 * SCAN_BLOCK at a time: the block's slots of count 1 are queued, then the
 * queue is peeled empty, the slots whose count falls to 1 joining its end;
 * those past the block's end are passed over when they come up, because
 * the scan will reach them. Followed ahead, a chain of peelings can run
 * through the whole array (the fuse burning) and its front through memory
 * far from the scan, where each step is a cache miss; at 10^8 keys that
 * nearly doubles the time per key against a chain kept within the few
 * segments around the scan. Slots are queued without a
 * branch - written at the end, the end moved on when their count is 1 -
 * because whether a count is 1 is a coin toss the processor cannot
 * predict. A queue rather than a stack: the next slot to peel does not
 * depend on the peeling just done, so the processor can work on several
 * at once. */
static AMQ__ALWAYS_INLINE int peel(workspace *w, size_t n, size_t *peeled, uint32_t arity)
{
    const amq__fuse_shape shape = w->shape;
    uint8_t *counts = w->counts, *own = w->own;
    uint64_t *keys = w->keys, *order = w->order;
    uint64_t length = shape.array_length;
    /* A key's k-th slot is in the k-th segment after its first one's. */
    unsigned segment_bits = (unsigned)__builtin_ctzll(shape.segment_length);
    size_t done = 0;
    for (uint64_t start = 0; start < length; start += SCAN_BLOCK) {
        uint64_t end = length - start > SCAN_BLOCK ? start + SCAN_BLOCK : length;
        uint64_t *queue = w->queue;
        size_t head = 0, tail = 0;
        /* The window's front: the slots arity - 1 segments on, which the
         * keys peeled in this block reach. */
        uint64_t front = start + (arity - 1) * shape.segment_length;
        uint64_t front_end = front + SCAN_BLOCK < length ? front + SCAN_BLOCK : length;
        for (uint64_t a = front; a < front_end; a += 64 / sizeof *keys)
            __builtin_prefetch(keys + a);
        for (uint64_t a = front; a < front_end; a += 64)
            __builtin_prefetch(counts + a);
        for (uint64_t slot = start; slot < end; slot++) {
            queue[tail] = slot;
            tail += counts[slot] == 1;
        }
        while (head < tail) {
            uint64_t j = queue[head++];
            /* With exact counts done < n always holds here; the test
             * keeps w->order in bounds whatever happens. */
            if (counts[j] != 1 || j >= end || done == n)
                continue;
            if (tail + arity > w->queue_capacity) {
                if (reserve(w, tail + arity) != AMQ_OK)
                    return AMQ_ENOMEM;
                queue = w->queue;
            }
            uint64_t m = keys[j], slots[4];
            amq__fuse_slots(&shape, m, arity, slots);
            for (uint32_t k = 0; k < arity; k++) {
                uint64_t s = slots[k];
                keys[s] ^= m;
                counts[s]--;
                queue[tail] = s;
                tail += counts[s] == 1;
            }
            order[done] = m;
            own[done] = (uint8_t)((j >> segment_bits) - (slots[0] >> segment_bits));
            done++;
        }
    }
    *peeled = done;
    return AMQ_OK;
}

static AMQ__ALWAYS_INLINE void set_fingerprint(uint8_t *fingerprints, uint64_t i, uint32_t value,
                                               uint32_t fingerprint_bits)
{
    if (fingerprint_bits == 8)
        fingerprints[i] = (uint8_t)value;
    else
        amq__store_u16le(fingerprints + 2 * i, (uint16_t)value);
}

/* Step 4, into zeroed fingerprints. */
static AMQ__ALWAYS_INLINE void assign(const workspace *w, size_t n, uint8_t *fingerprints,
                                      uint32_t fingerprint_bits, uint32_t arity)
{
    const amq__fuse_shape shape = w->shape;
    const uint64_t *order = w->order;
    const uint8_t *own = w->own;
    for (size_t i = n; i-- > 0;) {
        uint64_t m = order[i], slots[4];
        amq__fuse_slots(&shape, m, arity, slots);
        uint32_t value = amq__fuse_fingerprint(m, fingerprint_bits);
        for (uint32_t k = 0; k < arity; k++)
            value ^= amq__fuse_get(fingerprints, slots[k], fingerprint_bits);
        set_fingerprint(fingerprints, slots[own[i]], value, fingerprint_bits);
    }
}

/* Steps 1-3 for one arity: AMQ_OK with *peeled set, or AMQ_ENOMEM. */
static int attempt(workspace *w, const uint64_t *hashes, size_t n, uint64_t seed, size_t *peeled)
{
    partition(w, hashes, n, seed);
    if (w->shape.arity == 3)
        fill(w, 3);
    else
        fill(w, 4);
    /* A slot of 255 keys or more: its count stopped at 255 and peeling's
     * exact decrements would go wrong. Only equal hashes do that (distinct
     * keys put 255 in one slot with a chance below 10^-300), and they can
     * never peel anyway: fail the attempt, so that they are dropped. */
    if (memchr(w->counts, UINT8_MAX, (size_t)w->shape.array_length)) {
        *peeled = 0;
        return AMQ_OK;
    }
    return w->shape.arity == 3 ? peel(w, n, peeled, 3) : peel(w, n, peeled, 4);
}

static void assign_any(const workspace *w, size_t n, uint8_t *fingerprints,
                       uint32_t fingerprint_bits)
{
    if (fingerprint_bits == 8 && w->shape.arity == 3)
        assign(w, n, fingerprints, 8, 3);
    else if (fingerprint_bits == 8)
        assign(w, n, fingerprints, 8, 4);
    else if (w->shape.arity == 3)
        assign(w, n, fingerprints, 16, 3);
    else
        assign(w, n, fingerprints, 16, 4);
}

/* ---- the build ------------------------------------------------------------- */

static int check_params(const amq_fuse_params *params, amq_fuse_params *resolved, amq_diag *diag)
{
    amq_fuse_params_init(resolved);
    int status = amq__struct_read(resolved, sizeof *resolved, params, sizeof *resolved,
                                  "amq_fuse_params", diag);
    if (status != AMQ_OK)
        return status;
    const amq_fuse_params asked = *resolved;
    if (resolved->fingerprint_bits == 0)
        resolved->fingerprint_bits = 8;
    if (resolved->arity == 0)
        resolved->arity = 3;
    if (resolved->fingerprint_bits != 8 && resolved->fingerprint_bits != 16)
        return amq__fail(diag, AMQ_EINVAL, "binary fuse fingerprint bits must be 8 or 16, not %u",
                         asked.fingerprint_bits);
    if (resolved->arity != 3 && resolved->arity != 4)
        return amq__fail(diag, AMQ_EINVAL, "binary fuse arity must be 3 or 4, not %u", asked.arity);
    return amq__hasher_resolve(&resolved->hasher, &asked.hasher, diag);
}

/* The construction proper. owned is hashes when the caller hands over a
 * buffer it allocated (then it may be sorted in place; the caller frees
 * it), else NULL. */
static int build(amq_fuse **out, const amq_fuse_params *params, const uint64_t *hashes,
                 uint64_t *owned, size_t n, const amq__fuse_build_options *options, amq_diag *diag)
{
    *out = NULL;
    amq_fuse_params p;
    int status = check_params(params, &p, diag);
    if (status != AMQ_OK)
        return status;
    uint32_t max_attempts =
        options && options->max_attempts ? options->max_attempts : AMQ_FUSE_MAX_ATTEMPTS;
    double size_factor = options ? options->size_factor : 0;
    amq__fuse_shape shape;
    if (!amq__fuse_shape_for(&shape, n, p.arity, p.fingerprint_bits, size_factor) ||
        n > SIZE_MAX / sizeof(uint64_t))
        return amq__fail(diag, AMQ_ERANGE, "%zu keys are too many for a binary fuse filter", n);

    workspace w = { .queue_capacity = QUEUE_INITIAL };
    uint64_t *copy = NULL;
    status = workspace_shape(&w, &shape);
    /* Also the scratch of the sort that drops duplicates. Not zeroed:
     * partition writes the n entries before they are read, and the sort
     * zeroes its own counters. */
    w.order = n <= SIZE_MAX / sizeof *w.order - AMQ__SORT_COUNTS
                  ? amq__alloc_table((n + AMQ__SORT_COUNTS) * sizeof *w.order, false)
                  : NULL;
    w.own = amq__malloc(n ? n : 1);
    w.queue = amq__malloc(w.queue_capacity * sizeof *w.queue);
    if (status == AMQ_OK && (!w.order || !w.own || !w.queue))
        status = AMQ_ENOMEM;

    uint64_t state = SEED_SEQUENCE_START, seed = 0;
    uint32_t attempts = 0;
    bool deduplicated = false, peeled_all = false;
    while (status == AMQ_OK && attempts < max_attempts) {
        state += SEED_SEQUENCE_STEP;
        seed = amq__mix64(state);
        attempts++;
        size_t peeled = 0;
        status = attempt(&w, hashes, n, seed, &peeled);
        if (status != AMQ_OK || peeled == n) {
            peeled_all = status == AMQ_OK;
            break;
        }
        if (deduplicated)
            continue;
        deduplicated = true;
        if (!owned) {
            copy = amq__malloc(n * sizeof *copy);
            if (!copy) {
                status = AMQ_ENOMEM;
                break;
            }
            memcpy(copy, hashes, n * sizeof *copy);
            owned = copy;
            hashes = copy;
        }
        size_t distinct = amq__sort_unique_u64(owned, n, w.order);
        if (distinct != n) {
            n = distinct;
            if (!amq__fuse_shape_for(&shape, n, p.arity, p.fingerprint_bits, size_factor))
                status = AMQ_ERANGE;
            else
                status = workspace_shape(&w, &shape);
        }
    }

    amq_fuse *f = NULL;
    if (status == AMQ_OK && peeled_all) {
        f = amq__calloc(1, sizeof *f);
        /* Zeroed, and in 2 MiB pages when that large: queries then miss the
         * TLB far less often. */
        uint8_t *fingerprints =
            f ? amq__alloc_table(shape.array_length * (p.fingerprint_bits / 8), true) : NULL;
        if (!fingerprints) {
            amq__free(f);
            f = NULL;
            status = AMQ_ENOMEM;
        } else {
            assign_any(&w, n, fingerprints, p.fingerprint_bits);
            f->shape = shape;
            f->owned = fingerprints;
            f->fingerprints = fingerprints;
            f->fingerprint_bits = p.fingerprint_bits;
            f->attempts = attempts;
            f->seed = seed;
            f->count = n;
            f->target_fpr = ldexp(1, -(int)p.fingerprint_bits);
            f->hasher = p.hasher;
        }
    }
    workspace_free(&w);
    amq__free(copy);
    if (status == AMQ_ENOMEM)
        return amq__fail(diag, status, "out of memory building a binary fuse filter of %zu keys",
                         n);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "%zu keys are too many for a binary fuse filter", n);
    if (!f)
        return amq__fail(diag, AMQ_EFULL,
                         "binary fuse construction failed: %zu distinct keys did not peel in %u "
                         "attempts with different seeds",
                         n, attempts);
    assert(amq__fuse_check(f, NULL) == AMQ_OK);
    *out = f;
    return AMQ_OK;
}

int amq__fuse_build_hashes_with(amq_fuse **out, const amq_fuse_params *params,
                                const uint64_t *hashes, size_t count,
                                const amq__fuse_build_options *options, amq_diag *diag)
{
    assert(out && params && (count == 0 || hashes));
    return build(out, params, hashes, NULL, count, options, diag);
}

void amq_fuse_params_init_sized(amq_fuse_params *params, size_t struct_size)
{
    assert(params && struct_size >= sizeof(size_t));
    amq_fuse_params defaults;
    memset(&defaults, 0, sizeof defaults);
    amq_hasher_xxh3(&defaults.hasher, 0);
    amq__struct_write(params, struct_size, &defaults, sizeof defaults);
}

int amq_fuse_build_hash(amq_fuse **out, const amq_fuse_params *params, const uint64_t *hashes,
                        size_t count, amq_diag *diag)
{
    return amq__fuse_build_hashes_with(out, params, hashes, count, NULL, diag);
}

int amq_fuse_build(amq_fuse **out, const amq_fuse_params *params, const void *const *keys,
                   const size_t *lens, size_t count, amq_diag *diag)
{
    assert(out && params && (count == 0 || (keys && lens)));
    *out = NULL;
    amq_fuse_params p;
    int status = check_params(params, &p, diag);
    if (status != AMQ_OK)
        return status;
    if (count > SIZE_MAX / sizeof(uint64_t))
        return amq__fail(diag, AMQ_ERANGE, "%zu keys are too many for a binary fuse filter", count);
    uint64_t *hashes = amq__malloc((count ? count : 1) * sizeof *hashes);
    if (!hashes)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory hashing %zu keys", count);
    for (size_t i = 0; i < count; i++)
        hashes[i] = amq__hash64(&p.hasher, keys[i], lens[i]);
    status = build(out, &p, hashes, hashes, count, NULL, diag);
    amq__free(hashes);
    return status;
}
