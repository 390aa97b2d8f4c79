/*
 * blocked_bloom.c - blocked Bloom filters (F. Putze, P. Sanders, J. Singler,
 * "Cache-, Hash- and Space-Efficient Bloom Filters", WEA 2007), in two
 * layouts: 512-bit blocks with k bits anywhere in the block, and the
 * split-block filter of Apache Parquet's specification (256-bit blocks of
 * eight 32-bit words, one bit per word).
 *
 * A classic Bloom filter scatters a key's k bits over the whole array, so a
 * query for a present key touches k cache lines. A blocked filter first picks
 * one block for the key and puts all k bits inside it; a block is at most a
 * cache line, so a query costs one memory access however large the filter.
 *
 * Hashing. A key is hashed once, to 64 bits h, with the filter's hasher. The
 * high half picks the block and the low half, key32, the bits inside it:
 *
 *     block  = (h >> 32) * blocks >> 32        (multiply-high; blocks <= 2^32)
 *     split: in word i (0..7), bit (key32 * salt_i) mod 2^32 >> 27
 *     block: for i < k, bit (key32 * BLOCK_SALT[i]) mod 2^32 >> 23 of 512
 *
 * Multiplying by an odd constant permutes the 32-bit values, and the top bits
 * of the product are a good hash of all of key32's bits; different constants
 * give practically independent positions. The split salts are the eight
 * constants Parquet's specification gives (amq_split_block_salt), so with Parquet's hash (XXH64 of
 * the value, seed 0, through amq_blocked_bloom_add_hash) the bits are Parquet's bit for bit.
 * BLOCK_SALT are the first 32 bits of the fractional parts of the cube roots of the first 16
 * primes, made odd: constants with no structure. The add and test of a
 * block are written once, in bloom/block_kernel.h, for this filter and the
 * scalable filter's blocked stages; the split layout's are amq/split_block.h's,
 * the kernel the inline view (amq_split_block_view) compiles into callers.
 *
 * The split layout's eight multiplies, shifts and masks are one AVX2
 * instruction each, and its query one 256-bit test. The block layout's query
 * takes its positions eight at a time the same way; each lane then picks its
 * word out of the block's sixteen with two in-register permutes (one per
 * half of the block) and a blend on bit 3 of the word's index, and one
 * 256-bit test checks the eight bits. On CPUs with AVX2 (checked once, when
 * the filter is created or loaded) those paths run, and elsewhere portable
 * loops that set and test exactly the same bits (the tests compare the two).
 * The block layout's add stays scalar: its k bits may share words.
 *
 * False-positive rate. Keys fall into blocks unevenly: with lambda = n/blocks
 * keys per block on average, a block holds j keys with probability
 * Poisson(j; lambda), and a block with j keys answers "maybe" for an absent
 * key with probability (1 - q^j)^k, where q is the chance that one key leaves
 * a given bit of the key's clear:
 *
 *     split:  q = 31/32        (one bit per 32-bit word), k = 8
 *     block:  q = (511/512)^k  (k bits in 512)
 *
 *     FPR(n, blocks, k) = sum_j Poisson(j; lambda) (1 - q^j)^k
 *
 * Overfull blocks weigh more than underfull ones help, so the FPR is above
 * the classic filter's at the same m. The filter is sized from this formula,
 * not the classic one: the fewest blocks (and for the block layout the k)
 * with FPR(n, blocks, k) <= p. The cost at p = 1% is 10.5 bits per key
 * (split) and 9.9 (block, k = 6) against the classic 9.6; docs/BLOOM.md has
 * the table.
 *
 * Count and fill. The expected fraction of set bits after n keys is
 * 1 - exp(-lambda (1 - q')), where q' is the chance a key leaves one given
 * bit of its block clear (31/32 for split, (511/512)^k for block), which
 * inverts to the estimate n = -blocks ln(1 - X/m) / (1 - q'). The FPR to
 * expect now is measured from the blocks themselves: the mean over blocks of
 * the chance that a random key's bits in it are all set. Both count the bits
 * (O(m)); add and query do no bookkeeping beyond setting and testing bits.
 *
 * Concurrent adds (amq_blocked_bloom_add_concurrent) set the same bits as
 * the add with a relaxed atomic OR on each 64-bit lane (two words) of the
 * block that holds some of them, skipped when a relaxed load finds them set
 * already: not AVX2's one 256-bit store, which would lose another thread's
 * bits. A query beside them reads the lanes with relaxed atomic loads
 * (amq_blocked_bloom_contains_concurrent). OR is order-independent: after
 * any set of adds the words are the same.
 *
 * Layout in memory and on disk: blocks * W 32-bit words (W = 8 or 16), block
 * b at words [b W, (b + 1) W); bit i of a 512-bit block is bit (i mod 32) of
 * its word i / 32. Memory is 64-byte aligned, so no block crosses a cache
 * line. The file payload is the words little-endian (a split-block payload is
 * Parquet's bitset), and the parameter block:
 *
 *     params:  u32 layout | u32 k | u64 blocks | u64 capacity | f64 target p
 */
#include "bloom/block_kernel.h" /* first: it asks amq/split_block.h for the AVX2 forms */

#include "amq/inline.h"
#include "bloom/bloom_internal.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/family.h"
#include "core/hash.h"
#include "core/util.h"

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct amq_blocked_bloom {
    uint32_t *words; /* blocks * words_per_block, 64-byte aligned */
    uint64_t blocks;
    uint32_t words_per_block; /* 8 (split) or 16 (block) */
    uint32_t hashes;          /* k */
    amq_blocked_layout layout;
    bool use_avx2;     /* the CPU has AVX2: the split layout's add and query and
                          the block layout's query take it */
    uint64_t capacity; /* n it was sized for */
    double target_fpr; /* p it was sized for */
    amq_hasher hasher;
};

#define SPLIT_BLOCK_BITS 256
#define BLOCK_BLOCK_BITS 512
#define SPLIT_HASHES     8
/* How many keys ahead contains_many hashes and prefetches: enough misses in
 * flight to cover a DRAM access, no more than the line-fill buffers take. */
#define BLOCKED_PREFETCH_DISTANCE 16

static uint32_t block_bits_of(amq_blocked_layout layout)
{
    return layout == AMQ_BLOCKED_SPLIT ? SPLIT_BLOCK_BITS : BLOCK_BLOCK_BITS;
}

/* ---- the formula ------------------------------------------------------------- */

/* ln(j!), exactly for small j and by Stirling's series beyond (error below
 * 1e-12); lgamma would do, but it writes the global signgam. */
static double log_factorial(double j)
{
    if (j < 16) {
        double sum = 0;
        for (double i = 2; i <= j; i++)
            sum += log(i);
        return sum;
    }
    double x = j + 1, inverse = 1 / x, inverse_squared = inverse * inverse;
    return (x - 0.5) * log(x) - x + 0.91893853320467274178 +
           inverse * (1.0 / 12 - inverse_squared * (1.0 / 360 - inverse_squared / 1260));
}

/* The chance that one key leaves a given bit of its block clear (q above). */
static double clear_chance(amq_blocked_layout layout, uint32_t k)
{
    return layout == AMQ_BLOCKED_SPLIT ? 31.0 / 32 : pow(511.0 / 512, k);
}

static bool layout_valid(amq_blocked_layout layout, uint32_t k)
{
    if (layout == AMQ_BLOCKED_SPLIT)
        return k == SPLIT_HASHES;
    return layout == AMQ_BLOCKED_BLOCK && k >= 1 && k <= AMQ_BLOCKED_BLOOM_MAX_HASHES;
}

static double formula_fpr(amq_blocked_layout layout, double n, double blocks, uint32_t k)
{
    double lambda = n / blocks, q = clear_chance(layout, k);
    if (lambda <= 0)
        return 0;
    /* Past a million keys per block the Poisson spread is negligible beside
     * the mean (and the block is full). */
    if (lambda > 1e6)
        return pow(1 - pow(q, lambda), k);
    double spread = sqrt(lambda);
    double first = floor(lambda - 12 * spread - 20), last = ceil(lambda + 12 * spread + 40);
    if (first < 0)
        first = 0;
    double sum = 0, log_lambda = log(lambda);
    for (double j = first; j <= last; j++) {
        double poisson = exp(-lambda + j * log_lambda - log_factorial(j));
        sum += poisson * pow(1 - pow(q, j), k);
    }
    return sum < 1 ? sum : 1;
}

double amq_blocked_bloom_formula_fpr(amq_blocked_layout layout, uint64_t n, uint64_t bits,
                                     uint32_t k)
{
    if (!layout_valid(layout, k) || bits == 0 || bits % block_bits_of(layout) != 0)
        return NAN;
    return formula_fpr(layout, (double)n, (double)(bits / block_bits_of(layout)), k);
}

/* The fewest blocks (at most AMQ_BLOCKED_BLOOM_MAX_BLOCKS) whose FPR for n
 * keys is at most p, or 0 if there are none. The FPR falls as blocks grow. */
static uint64_t fewest_blocks(amq_blocked_layout layout, uint64_t n, uint32_t k, double p)
{
    uint64_t low = 1, high = AMQ_BLOCKED_BLOOM_MAX_BLOCKS;
    if (formula_fpr(layout, (double)n, (double)high, k) > p)
        return 0;
    while (low < high) {
        uint64_t middle = low + (high - low) / 2;
        if (formula_fpr(layout, (double)n, (double)middle, k) <= p)
            high = middle;
        else
            low = middle + 1;
    }
    return low;
}

/* The k in [1, 16] with the smallest FPR for n keys in blocks (block layout). */
static uint32_t best_hashes(uint64_t n, uint64_t blocks)
{
    uint32_t best = 1;
    double best_fpr = 2;
    for (uint32_t k = 1; k <= AMQ_BLOCKED_BLOOM_MAX_HASHES; k++) {
        double fpr = formula_fpr(AMQ_BLOCKED_BLOCK, (double)n, (double)blocks, k);
        if (fpr < best_fpr) {
            best_fpr = fpr;
            best = k;
        }
    }
    return best;
}

/* The most keys blocks hold at p with k (0 for split's 8, or k = 0: the best
 * k for each count). */
static uint64_t keys_held(amq_blocked_layout layout, uint64_t blocks, uint32_t k, double p)
{
    uint64_t low = 0, high = blocks * block_bits_of(layout); /* a bit per key: FPR near 1 */
    while (low < high) {
        uint64_t middle = low + (high - low + 1) / 2;
        uint32_t hashes = k ? k : best_hashes(middle, blocks);
        if (formula_fpr(layout, (double)middle, (double)blocks, hashes) <= p)
            low = middle;
        else
            high = middle - 1;
    }
    return low;
}

typedef struct blocked_size {
    uint64_t blocks, capacity;
    uint32_t hashes;
} blocked_size;

static int size_filter(blocked_size *out, const amq_blocked_bloom_params *params, double p,
                       amq_diag *diag)
{
    amq_blocked_layout layout = params->layout;
    uint32_t k = params->hashes;
    if (layout == AMQ_BLOCKED_SPLIT && k != 0 && k != SPLIT_HASHES)
        return amq__fail(diag, AMQ_EINVAL, "the split layout sets 8 bits per key, not %u", k);
    if (layout == AMQ_BLOCKED_SPLIT)
        k = SPLIT_HASHES;
    if (k > AMQ_BLOCKED_BLOOM_MAX_HASHES)
        return amq__fail(diag, AMQ_ERANGE, "%u hashes is more than the block layout's %d", k,
                         AMQ_BLOCKED_BLOOM_MAX_HASHES);
    uint64_t n = params->capacity, block_bits = block_bits_of(layout), blocks;
    if (params->bits != 0) {
        blocks = params->bits / block_bits + (params->bits % block_bits != 0);
        if (blocks > AMQ_BLOCKED_BLOOM_MAX_BLOCKS)
            return amq__fail(diag, AMQ_ERANGE, "%llu bits is more than 2^32 blocks of %llu",
                             (unsigned long long)params->bits, (unsigned long long)block_bits);
        if (n == 0) {
            n = keys_held(layout, blocks, k, p);
            if (n == 0)
                n = 1;
        }
        if (k == 0)
            k = best_hashes(n, blocks);
    } else if (n == 0) {
        return amq__fail(diag, AMQ_EINVAL, "give a capacity (n) or a number of bits (m)");
    } else if (k != 0) {
        blocks = fewest_blocks(layout, n, k, p);
    } else {
        blocks = 0;
        for (uint32_t hashes = 1; hashes <= AMQ_BLOCKED_BLOOM_MAX_HASHES; hashes++) {
            uint64_t needed = fewest_blocks(layout, n, hashes, p);
            if (needed != 0 && (blocks == 0 || needed < blocks)) {
                blocks = needed;
                k = hashes;
            }
        }
    }
    if (blocks == 0)
        return amq__fail(diag, AMQ_ERANGE, "%llu keys at fpr %g need more than 2^32 blocks",
                         (unsigned long long)n, p);
    if (params->bits == 0) {
        uint64_t ceiling = n > AMQ_BLOCKED_BLOOM_ALLOWANCE_BITS / AMQ_BLOCKED_BLOOM_MAX_BITS_PER_KEY
                               ? n * AMQ_BLOCKED_BLOOM_MAX_BITS_PER_KEY
                               : AMQ_BLOCKED_BLOOM_ALLOWANCE_BITS;
        if (blocks * block_bits > ceiling)
            return amq__fail(diag, AMQ_ERANGE,
                             "%llu keys at fpr %g need %.0f bits per key in %s blocks, more "
                             "than the %d a blocked filter takes: use a classic bloom filter "
                             "(about %.0f bits per key)%s or a higher fpr",
                             (unsigned long long)n, p,
                             (double)blocks * (double)block_bits / (double)n,
                             layout == AMQ_BLOCKED_SPLIT ? "split 256-bit" : "512-bit",
                             AMQ_BLOCKED_BLOOM_MAX_BITS_PER_KEY, -log2(p) / 0.6931471805599453,
                             layout == AMQ_BLOCKED_SPLIT ? ", 512-bit blocks (layout=block)" : "");
    }
    out->blocks = blocks;
    out->hashes = k;
    out->capacity = n;
    return AMQ_OK;
}

/* ---- creating ---------------------------------------------------------------- */

/* An empty filter of the given shape; the caller fills in the rest. */
static int allocate(amq_blocked_bloom **out, amq_blocked_layout layout, uint64_t blocks,
                    amq_diag *diag)
{
    amq_blocked_bloom *f = amq__calloc(1, sizeof *f);
    if (!f)
        return AMQ_ENOMEM;
    f->layout = layout;
    f->blocks = blocks;
    f->words_per_block = block_bits_of(layout) / 32;
    uint64_t bytes = blocks * f->words_per_block * 4; /* a multiple of 32; at most 2^38 */
    f->words = amq__alloc_table(bytes, true);
    if (!f->words) {
        amq__free(f);
        return amq__fail(diag, AMQ_ENOMEM, "cannot allocate %llu bytes of blocks",
                         (unsigned long long)bytes);
    }
    f->use_avx2 = amq__block_cpu_has_avx2();
    *out = f;
    return AMQ_OK;
}

static int blocked_new(amq_blocked_bloom **out, const amq_blocked_bloom_params *params,
                       amq_diag *diag)
{
    *out = NULL;
    double p = params->fpr == 0 ? 0.01 : params->fpr;
    if (!(p > 0 && p < 1))
        return amq__fail(diag, AMQ_EINVAL, "fpr %g is not between 0 and 1", p);
    if (params->layout != AMQ_BLOCKED_SPLIT && params->layout != AMQ_BLOCKED_BLOCK)
        return amq__fail(diag, AMQ_EINVAL, "unknown block layout %d", (int)params->layout);
    amq_hasher hasher;
    int status = amq__hasher_resolve(&hasher, &params->hasher, diag);
    if (status != AMQ_OK)
        return status;
    blocked_size size = { 0 };
    status = size_filter(&size, params, p, diag);
    if (status != AMQ_OK)
        return status;
    amq_blocked_bloom *f = NULL;
    status = allocate(&f, params->layout, size.blocks, diag);
    if (status != AMQ_OK)
        return status;
    f->hashes = size.hashes;
    f->capacity = size.capacity;
    f->target_fpr = p;
    f->hasher = hasher;
    *out = f;
    return AMQ_OK;
}

void amq_blocked_bloom_params_init(amq_blocked_bloom_params *params)
{
    assert(params);
    memset(params, 0, sizeof *params);
    amq_hasher_xxh3(&params->hasher, 0);
}

int amq_blocked_bloom_new(amq_blocked_bloom **out, const amq_blocked_bloom_params *params,
                          amq_diag *diag)
{
    assert(out && params);
    return blocked_new(out, params, diag);
}

void amq_blocked_bloom_free(amq_blocked_bloom *filter)
{
    if (!filter)
        return;
    amq__aligned_free(filter->words);
    amq__free(filter);
}

void amq_blocked_bloom_clear(amq_blocked_bloom *f)
{
    memset(f->words, 0, (size_t)(f->blocks * f->words_per_block * 4));
}

/* ---- add and query: the bits of one block ---------------------------------------- */

static inline uint32_t *block_of(const amq_blocked_bloom *f, uint64_t hash)
{
    return f->words + amq_split_block_index(hash, f->blocks) * f->words_per_block;
}

/* The bits of a block are block_kernel.h's: amq/split_block.h's kernel
 * for the split layout (the one amq_split_block_view's queries compile
 * into callers) and the 512-bit layout's beside it. */

/* Add by hash; whether a bit changed (false: maybe present already). */
static bool add_hash_changed(amq_blocked_bloom *f, uint64_t hash)
{
    uint32_t *block = block_of(f, hash), key = (uint32_t)hash;
    if (f->layout == AMQ_BLOCKED_BLOCK)
        return amq__block_add(block, key, f->hashes) != 0;
#if AMQ__BLOCK_HAVE_AVX2
    if (f->use_avx2)
        return amq_split_block_add_avx2(block, key);
#endif
    return amq_split_block_add(block, key) != 0;
}

/* Add a key; whether a bit changed. */
static bool add_key_changed(amq_blocked_bloom *f, const void *key, size_t len)
{
    return add_hash_changed(f, amq__hash64(&f->hasher, key, len));
}

void amq_blocked_bloom_add_hash(amq_blocked_bloom *f, uint64_t hash)
{
    add_hash_changed(f, hash);
}

void amq_blocked_bloom_add(amq_blocked_bloom *f, const void *key, size_t len)
{
    add_key_changed(f, key, len);
}

bool amq_blocked_bloom_contains_hash(const amq_blocked_bloom *f, uint64_t hash)
{
    const uint32_t *block = block_of(f, hash);
    uint32_t key = (uint32_t)hash;
#if AMQ__BLOCK_HAVE_AVX2
    if (f->use_avx2)
        return f->layout == AMQ_BLOCKED_SPLIT ? amq_split_block_test_avx2(block, key)
                                              : amq__block_test_avx2(block, key, f->hashes);
#endif
    if (f->layout == AMQ_BLOCKED_BLOCK)
        return amq__block_test(block, key, f->hashes);
    return amq_split_block_test(block, key);
}

int amq_split_block_view_get(amq_split_block_view *out, const amq_blocked_bloom *filter,
                             uint32_t layout, amq_diag *diag)
{
    if (!out || !filter)
        return amq__fail(diag, AMQ_EINVAL, "amq_split_block_view_get: %s is NULL",
                         !out ? "out" : "filter");
    memset(out, 0, sizeof *out);
    if (layout != AMQ_INLINE_LAYOUT)
        return amq__fail(diag, AMQ_EVERSION,
                         "a split-block view of layout %u was asked for; this library computes "
                         "layout %d",
                         layout, AMQ_INLINE_LAYOUT);
    if (filter->layout != AMQ_BLOCKED_SPLIT)
        return amq__fail(diag, AMQ_EINVAL,
                         "a split-block view of a filter of 512-bit blocks: only the split "
                         "layout has one");
    *out = (amq_split_block_view){ .words = filter->words,
                                   .blocks = filter->blocks,
                                   .layout = AMQ_INLINE_LAYOUT };
    return AMQ_OK;
}

/* The key's hash is taken here, in code built for every CPU, and the AVX2
 * block test is then a jump: a single AVX2 function that hashed and tested
 * kept a frame with its stack realigned (it may call the out-of-line hash
 * kinds), which costs a query of a cached filter more than the jump. */
bool amq_blocked_bloom_contains(const amq_blocked_bloom *f, const void *key, size_t len)
{
    return amq_blocked_bloom_contains_hash(f, amq__hash64(&f->hasher, key, len));
}

/* ---- concurrent add and query ----------------------------------------------------- */

/* A key's bits in its block as 64-bit lanes: lanes[j] holds the masks of
 * words 2j and 2j + 1, laid out as in memory (memcpy: either byte order),
 * so that an atomic operation on lane j of the block is one on those two
 * words. The number of lanes, words_per_block / 2. */
static unsigned key_lanes(uint64_t lanes[8], const amq_blocked_bloom *f, uint32_t key)
{
    uint32_t masks[16] = { 0 };
    if (f->layout == AMQ_BLOCKED_SPLIT) {
        for (unsigned i = 0; i < 8; i++)
            masks[i] = amq_split_block_bit(key, i);
    } else {
        for (uint32_t i = 0; i < f->hashes; i++) {
            uint32_t position = (key * amq__block_salts()[i]) >> 23;
            masks[position >> 5] |= 1U << (position & 31);
        }
    }
    memcpy(lanes, masks, sizeof masks);
    return f->words_per_block / 2;
}

/* The block's 64-bit lanes (a block is 64-byte aligned, a lane 8). */
static uint64_t *block_lanes(const amq_blocked_bloom *f, uint64_t hash)
{
    return (uint64_t *)(void *)block_of(f, hash);
}

/* The same bits as add_hash_changed sets, by a relaxed atomic OR on each
 * 64-bit lane of the block that has some (skipped when a relaxed load finds
 * them set): 4 locked ORs for a split block, at most min(k, 8) for a
 * 512-bit one, all on one cache line. */
void amq_blocked_bloom_add_concurrent(amq_blocked_bloom *f, const void *key, size_t len)
{
    uint64_t hash = amq__hash64(&f->hasher, key, len), lanes[8];
    uint64_t *block = block_lanes(f, hash);
    unsigned count = key_lanes(lanes, f, (uint32_t)hash);
    for (unsigned j = 0; j < count; j++)
        if (lanes[j])
            amq__atomic_set_u64(&block[j], lanes[j]);
}

/* The query, by relaxed atomic loads of the same lanes: it may run beside
 * concurrent adds. */
bool amq_blocked_bloom_contains_concurrent(const amq_blocked_bloom *f, const void *key, size_t len)
{
    uint64_t hash = amq__hash64(&f->hasher, key, len), lanes[8], missing = 0;
    const uint64_t *block = block_lanes(f, hash);
    unsigned count = key_lanes(lanes, f, (uint32_t)hash);
    for (unsigned j = 0; j < count; j++)
        missing |= lanes[j] & ~amq__atomic_load_u64(&block[j]);
    return missing == 0;
}

/* ---- the batch queries ----------------------------------------------------------- */

/* A block's test, one signature for the four kinds, so that the batch loop
 * below is written once and compiled with each test a constant. */
typedef bool (*block_test)(const uint32_t *block, uint32_t key, uint32_t k);

static inline bool test_split_portable(const uint32_t *block, uint32_t key, uint32_t k)
{
    (void)k;
    return amq_split_block_test(block, key);
}

static inline bool test_block_portable(const uint32_t *block, uint32_t key, uint32_t k)
{
    return amq__block_test(block, key, k);
}

static AMQ__ALWAYS_INLINE const uint32_t *batch_block(const uint32_t *words, uint64_t blocks,
                                                      uint32_t words_per_block, uint64_t hash)
{
    return words + amq_split_block_index(hash, blocks) * words_per_block;
}

/* A pipeline BLOCKED_PREFETCH_DISTANCE keys deep: key i + D is hashed (or
 * its hash read) and its block prefetched just before key i is tested, so
 * about D cache misses are in flight at any time. By keys, ahead[] holds
 * the hashes in between, key j at j mod D (slot i is read before key i + D
 * overwrites it); by hashes, hashes[] is read again.
 *
 * Everything a key needs is inlined here, in one function per kind of test
 * (the AVX2 ones compiled for AVX2): the test chosen per call, not per key,
 * and the filter's fields read once. A call per key to the one-by-one query,
 * with its own dispatch and its own reads of the fields, made this loop
 * slower than asking the keys one by one. */
static AMQ__ALWAYS_INLINE void batch(const amq_blocked_bloom *f, const void *const *keys,
                                     const size_t *lens, const uint64_t *hashes, size_t count,
                                     uint8_t *results, block_test test, uint32_t words_per_block,
                                     bool by_hash)
{
    enum { D = BLOCKED_PREFETCH_DISTANCE };
    _Static_assert((D & (D - 1)) == 0, "the ring's index is a mask");
    const uint32_t *words = f->words;
    const uint64_t blocks = f->blocks;
    const uint32_t k = f->hashes;
    const amq_hasher hasher = f->hasher;
    uint64_t ahead[D];
    size_t primed = count < D ? count : D;
    for (size_t i = 0; i < primed; i++) {
        uint64_t h = by_hash ? hashes[i] : amq__hash64(&hasher, keys[i], lens[i]);
        ahead[i] = h;
        __builtin_prefetch(batch_block(words, blocks, words_per_block, h));
    }
    size_t steady = count > D ? count - D : 0, i = 0;
    for (; i < steady; i++) {
        uint64_t h = by_hash ? hashes[i] : ahead[i & (D - 1)];
        uint64_t next = by_hash ? hashes[i + D] : amq__hash64(&hasher, keys[i + D], lens[i + D]);
        if (!by_hash)
            ahead[i & (D - 1)] = next;
        __builtin_prefetch(batch_block(words, blocks, words_per_block, next));
        results[i] = test(batch_block(words, blocks, words_per_block, h), (uint32_t)h, k);
    }
    for (; i < count; i++) {
        uint64_t h = by_hash ? hashes[i] : ahead[i & (D - 1)];
        results[i] = test(batch_block(words, blocks, words_per_block, h), (uint32_t)h, k);
    }
}

/* The pointers are restrict: results is a byte array, which without the
 * promise could alias the filter's fields and the key arrays, and every
 * store to it would make the loop read them again. */
#define BATCH_ARGS                                                                                 \
    const amq_blocked_bloom *restrict f, const void *const *restrict keys,                         \
        const size_t *restrict lens, const uint64_t *restrict hashes, size_t count,                \
        uint8_t *restrict results

static void batch_split_portable(BATCH_ARGS)
{
    if (hashes)
        batch(f, NULL, NULL, hashes, count, results, test_split_portable, SPLIT_BLOCK_BITS / 32,
              true);
    else
        batch(f, keys, lens, NULL, count, results, test_split_portable, SPLIT_BLOCK_BITS / 32,
              false);
}

static void batch_block_portable(BATCH_ARGS)
{
    if (hashes)
        batch(f, NULL, NULL, hashes, count, results, test_block_portable, BLOCK_BLOCK_BITS / 32,
              true);
    else
        batch(f, keys, lens, NULL, count, results, test_block_portable, BLOCK_BLOCK_BITS / 32,
              false);
}

#if AMQ__BLOCK_HAVE_AVX2
__attribute__((target("avx2"))) static inline bool test_split_avx2(const uint32_t *block,
                                                                   uint32_t key, uint32_t k)
{
    (void)k;
    return amq_split_block_test_avx2(block, key);
}

__attribute__((target("avx2"))) static inline bool test_block_avx2(const uint32_t *block,
                                                                   uint32_t key, uint32_t k)
{
    return amq__block_test_avx2(block, key, k);
}

__attribute__((target("avx2"))) static void batch_split_avx2(BATCH_ARGS)
{
    if (hashes)
        batch(f, NULL, NULL, hashes, count, results, test_split_avx2, SPLIT_BLOCK_BITS / 32, true);
    else
        batch(f, keys, lens, NULL, count, results, test_split_avx2, SPLIT_BLOCK_BITS / 32, false);
}

__attribute__((target("avx2"))) static void batch_block_avx2(BATCH_ARGS)
{
    if (hashes)
        batch(f, NULL, NULL, hashes, count, results, test_block_avx2, BLOCK_BLOCK_BITS / 32, true);
    else
        batch(f, keys, lens, NULL, count, results, test_block_avx2, BLOCK_BLOCK_BITS / 32, false);
}
#endif
#undef BATCH_ARGS

/* Keys (hashes NULL) or hashes (keys and lens NULL), through the batch of
 * the filter's test. */
static void contains_many(const amq_blocked_bloom *f, const void *const *keys, const size_t *lens,
                          const uint64_t *hashes, size_t count, uint8_t *results)
{
    bool split = f->layout == AMQ_BLOCKED_SPLIT;
#if AMQ__BLOCK_HAVE_AVX2
    if (f->use_avx2) {
        (split ? batch_split_avx2 : batch_block_avx2)(f, keys, lens, hashes, count, results);
        return;
    }
#endif
    (split ? batch_split_portable : batch_block_portable)(f, keys, lens, hashes, count, results);
}

void amq_blocked_bloom_contains_many_hash(uint8_t *results, const amq_blocked_bloom *f,
                                          const uint64_t *hashes, size_t count)
{
    contains_many(f, NULL, NULL, hashes, count, results);
}

void amq_blocked_bloom_contains_many(uint8_t *results, const amq_blocked_bloom *f,
                                     const void *const *keys, const size_t *lens, size_t count)
{
    contains_many(f, keys, lens, NULL, count, results);
}

/* ---- what the filter knows about itself ---------------------------------------- */

static uint64_t word_count(const amq_blocked_bloom *f)
{
    return f->blocks * f->words_per_block;
}

uint64_t amq_blocked_bloom_bits_set(const amq_blocked_bloom *f)
{
    uint64_t set = 0, words = word_count(f);
    for (uint64_t i = 0; i < words; i++)
        set += (uint64_t)__builtin_popcount(f->words[i]);
    return set;
}

double amq_blocked_bloom_estimated_keys(const amq_blocked_bloom *f)
{
    double m = (double)amq_blocked_bloom_bits(f), x = (double)amq_blocked_bloom_bits_set(f);
    if (x >= m)
        return INFINITY;
    return -(double)f->blocks * log1p(-x / m) / (1 - clear_chance(f->layout, f->hashes));
}

double amq_blocked_bloom_expected_fpr(const amq_blocked_bloom *f)
{
    double sum = 0;
    for (uint64_t b = 0; b < f->blocks; b++) {
        const uint32_t *block = f->words + b * f->words_per_block;
        if (f->layout == AMQ_BLOCKED_SPLIT) {
            double chance = 1;
            for (unsigned i = 0; i < 8; i++)
                chance *= __builtin_popcount(block[i]) / 32.0;
            sum += chance;
        } else {
            unsigned set = 0;
            for (unsigned i = 0; i < 16; i++)
                set += (unsigned)__builtin_popcount(block[i]);
            sum += pow(set / 512.0, f->hashes);
        }
    }
    return sum / (double)f->blocks;
}

uint64_t amq_blocked_bloom_bits(const amq_blocked_bloom *f)
{
    return f->blocks * block_bits_of(f->layout);
}

uint64_t amq_blocked_bloom_blocks(const amq_blocked_bloom *f)
{
    return f->blocks;
}

uint32_t amq_blocked_bloom_hashes(const amq_blocked_bloom *f)
{
    return f->hashes;
}

amq_blocked_layout amq_blocked_bloom_layout(const amq_blocked_bloom *f)
{
    return f->layout;
}

uint64_t amq_blocked_bloom_capacity(const amq_blocked_bloom *f)
{
    return f->capacity;
}

const amq_hasher *amq_blocked_bloom_hasher(const amq_blocked_bloom *f)
{
    return &f->hasher;
}

const uint32_t *amq_blocked_bloom_words(const amq_blocked_bloom *f)
{
    return f->words;
}

void amq__blocked_bloom_use_portable(amq_blocked_bloom *f)
{
    f->use_avx2 = false;
}

bool amq__blocked_bloom_uses_avx2(const amq_blocked_bloom *f)
{
    return f->use_avx2;
}

/* ---- union and intersection ---------------------------------------------------- */

static int combine(amq_blocked_bloom *into, const amq_blocked_bloom *other, bool intersect,
                   amq_diag *diag)
{
    if (into->layout != other->layout)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters have different block layouts");
    if (into->blocks != other->blocks)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters have %llu and %llu blocks",
                         (unsigned long long)into->blocks, (unsigned long long)other->blocks);
    if (into->hashes != other->hashes)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "the filters set %u and %u bits per key",
                         into->hashes, other->hashes);
    int status = amq__hasher_compare(&into->hasher, &other->hasher, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t words = word_count(into);
    for (uint64_t i = 0; i < words; i++) {
        if (intersect)
            into->words[i] &= other->words[i];
        else
            into->words[i] |= other->words[i];
    }
    return AMQ_OK;
}

int amq_blocked_bloom_merge(amq_blocked_bloom *into, const amq_blocked_bloom *other, amq_diag *diag)
{
    assert(into && other);
    return combine(into, other, false, diag);
}

int amq_blocked_bloom_intersect(amq_blocked_bloom *into, const amq_blocked_bloom *other,
                                amq_diag *diag)
{
    assert(into && other);
    return combine(into, other, true, diag);
}

/* ---- the generic handle's view ------------------------------------------------- */

static const amq__option option_bits = {
    .name = "bits",
    .alias = "m",
    .type = AMQ__OPTION_COUNT,
    .count_min = SPLIT_BLOCK_BITS,
    .count_max = AMQ_BLOCKED_BLOOM_MAX_BLOCKS * BLOCK_BLOCK_BITS,
    .value_name = "M",
    .help = "the size in bits, rounded up to whole blocks (default: the fewest that reach fpr)",
};
static const amq__option option_hashes = {
    .name = "hashes",
    .alias = "k",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = AMQ_BLOCKED_BLOOM_MAX_HASHES,
    .value_name = "K",
    .help = "bits set per key: 8 with layout=split, 1 to 16 with layout=block",
};
static const char *const layout_names[] = { "split", "block", NULL };
static const amq__option option_layout = {
    .name = "layout",
    .type = AMQ__OPTION_CHOICE,
    .choices = layout_names, /* indexed by amq_blocked_layout */
    .help = "split: one bit in each 32-bit word of a 256-bit block (default); block: bits "
            "anywhere in a 512-bit block",
};

static const amq__option *const blocked_options[] = {
    &amq__option_capacity, &amq__option_fpr,  &option_layout,   &option_bits, &option_hashes,
    &amq__option_seed,     &amq__option_hash, &amq__option_key, NULL,
};

static int family_create(void **state, const amq__spec *spec, amq_diag *diag)
{
    amq_blocked_bloom_params params = {
        .capacity = amq__spec_count(spec, &amq__option_capacity, 0),
        .fpr = amq__spec_real(spec, &amq__option_fpr, 0.01),
        .bits = amq__spec_count(spec, &option_bits, 0),
        .hashes = (uint32_t)amq__spec_count(spec, &option_hashes, 0),
        .layout = (amq_blocked_layout)amq__spec_choice(spec, &option_layout, AMQ_BLOCKED_SPLIT),
    };
    int status = amq__spec_hasher(spec, &params.hasher, 0, diag);
    if (status != AMQ_OK)
        return status;
    amq_blocked_bloom *f;
    status = blocked_new(&f, &params, diag);
    *state = f;
    return status;
}

static int family_add(void *state, const void *key, size_t len)
{
    amq_blocked_bloom_add(state, key, len);
    return AMQ_OK;
}

static int family_add_unique(void *state, const void *key, size_t len)
{
    return add_key_changed(state, key, len);
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_blocked_bloom_contains(state, key, len);
}

static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    amq_blocked_bloom_contains_many(results, state, keys, lens, count);
    return AMQ_OK;
}

static int family_merge(void *state, const void *other, amq_diag *diag)
{
    return combine(state, other, false, diag);
}

static int family_save(const void *state, amq__saved *out)
{
    const amq_blocked_bloom *f = state;
    out->hasher = f->hasher;
    amq__params_put_u32(&out->params, (uint32_t)f->layout);
    amq__params_put_u32(&out->params, f->hashes);
    amq__params_put_u64(&out->params, f->blocks);
    amq__params_put_u64(&out->params, f->capacity);
    amq__params_put_f64(&out->params, f->target_fpr);
    out->pieces[0] = amq__piece_le_u32(f->words, word_count(f));
    out->piece_count = 1;
    return AMQ_OK;
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    *borrows_image = false;
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    uint32_t layout = 0, k = 0;
    uint64_t blocks = 0, capacity = 0;
    double fpr = 0;
    if (amq__params_get_u32(&r, &layout) || amq__params_get_u32(&r, &k) ||
        amq__params_get_u64(&r, &blocks) || amq__params_get_u64(&r, &capacity) ||
        amq__params_get_f64(&r, &fpr) || amq__params_end(&r))
        return amq__fail(diag, AMQ_ECORRUPT, "blocked-bloom parameters are %u bytes, expected 32",
                         c->params_len);
    if (layout > AMQ_BLOCKED_BLOCK)
        return amq__fail(diag, AMQ_ECORRUPT, "blocked-bloom layout %u is unknown", layout);
    if (!layout_valid((amq_blocked_layout)layout, k))
        return amq__fail(diag, AMQ_ECORRUPT, "blocked-bloom %s layout cannot set %u bits per key",
                         layout_names[layout], k);
    if (blocks < 1 || blocks > AMQ_BLOCKED_BLOOM_MAX_BLOCKS)
        return amq__fail(diag, AMQ_ECORRUPT, "blocked-bloom block count %llu is out of range",
                         (unsigned long long)blocks);
    if (!(fpr > 0 && fpr < 1))
        return amq__fail(diag, AMQ_ECORRUPT, "blocked-bloom target fpr is not in (0, 1)");
    uint64_t bytes = blocks * block_bits_of((amq_blocked_layout)layout) / 8;
    if (c->payload_len != bytes)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "blocked-bloom payload is %llu bytes, %llu blocks need %llu",
                         (unsigned long long)c->payload_len, (unsigned long long)blocks,
                         (unsigned long long)bytes);
    amq_blocked_bloom *f = NULL;
    int status = allocate(&f, (amq_blocked_layout)layout, blocks, diag);
    if (status != AMQ_OK)
        return status;
    for (uint64_t i = 0; i < word_count(f); i++)
        f->words[i] = amq__load_u32le(c->payload + i * 4);
    f->hashes = k;
    f->capacity = capacity;
    f->target_fpr = fpr;
    f->hasher = c->hasher;
    *state = f;
    return AMQ_OK;
}

static void family_info(const void *state, amq_info *out)
{
    const amq_blocked_bloom *f = state;
    out->capacity = f->capacity;
    out->estimated_keys = amq_blocked_bloom_estimated_keys(f);
    out->keys = isfinite(out->estimated_keys) ? (uint64_t)llround(out->estimated_keys)
                                              : amq_blocked_bloom_bits(f);
    out->keys_estimated = 1;
    out->memory_bytes = amq_blocked_bloom_bits(f) / 8;
    out->bits_per_key = (double)amq_blocked_bloom_bits(f) / (double)(f->capacity ? f->capacity : 1);
    out->target_fpr = f->target_fpr;
    out->expected_fpr = amq_blocked_bloom_expected_fpr(f);
    out->hasher = f->hasher;
    amq__info_text(out, "layout", layout_names[f->layout]);
    amq__info_number(out, "blocks", (double)f->blocks);
    amq__info_number(out, "hashes", f->hashes);
    amq__info_text(out, "simd", f->use_avx2 ? "avx2" : "portable");
}

static void family_destroy(void *state)
{
    amq_blocked_bloom_free(state);
}

const amq__family amq__blocked_bloom_family = {
    .name = "blocked-bloom",
    .id = AMQ__FAMILY_BLOCKED_BLOOM,
    .options = blocked_options,
    .create = family_create,
    .add = family_add,
    .add_unique = family_add_unique,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .merge = family_merge,
    .save = family_save,
    .load = family_load,
    .info = family_info,
    .destroy = family_destroy,
};
