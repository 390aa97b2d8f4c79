/*
 * hfb.c - hash-free Bloom banks: a static filter over 128-bit IDs that are
 * already uniformly random, such as MD5 digests of document paths.
 *
 * The premise. When the keys are the output of a good hash, any fixed bits
 * of them are uniform and independent of any other bits, so a slice of an
 * ID is as good an index as a hash of it - and costs a shift and a mask.
 * An ID is 16 bytes read as two little-endian 64-bit words, bytes 0..7 being
 * bits 0..63 and bytes 8..15 bits 64..127; the slice (start, len) is the
 * number formed by bits start .. start + len - 1, which may cross bit 64:
 *
 *     bit 127                      64 63                          0
 *     | high word (bytes 8..15)     | low word (bytes 0..7)       |
 *     |    slice 2 = (48, 24): .....|......                       |
 *                           bits 71..64  63..48
 *
 * Banks. A bank is a bit array of 2^len positions with bit v set when some
 * ID of the set has the value v in the bank's slice. An ID of the set passes
 * every bank (no false negatives). A random ID not in the set passes a bank
 * with probability fill = weight / 2^len (weight: the bank's set bits), and,
 * the slices being disjoint bits of a random ID, passes independent banks
 * independently:
 *
 *     FPR = fill_1 * fill_2 * ... * fill_k        (exactly, given the banks)
 *
 * n random IDs fill a bank of m = 2^len bits to 1 - (1 - 1/m)^n on average.
 *
 * Building, for n IDs (duplicates counted once) and a target p:
 *
 *   1. Sort the IDs and drop duplicates: order them by the top 16 bits of
 *      the high word (two counting passes of 8 bits), then sort each run of
 *      equal top bits by insertion (qsort for a long run: IDs that are not
 *      random). n is the number of distinct IDs.
 *   2. Choose len. Given, or by default the len in 1..32 whose banks are
 *      expected to take the least stored space while taking at most 1.5
 *      times that in memory: with f = 1 - (1 - 2^-len)^n, k = the fewest
 *      banks with f^k <= p (at most floor(128 / len), the slices there
 *      are), S = the expected stored bits of one bank (the smaller of its
 *      raw 2^len bits and its Rice code, below) and R = its bits in memory
 *      (2^len, plus the code when Rice-coded), minimize k * S over the lens
 *      with R <= 1.5 S. Without the memory bound one bank at fill just
 *      below p would win: its Rice code takes about log2(1/f) + 1.6 bits
 *      per ID, but a query reads the decoded 2^len bits, about 1/p bits per
 *      ID (100 at p = 1%). With it, several denser banks are chosen (three
 *      of fill about 0.2 at 1%). The measured size differs from the
 *      expectation by the spread of the weights (well under 1% at a
 *      thousand IDs and more).
 *   3. Measure every slice j = (j * len, len), j < floor(128 / len): fill a
 *      scratch bank and count the bits that were newly set. Compare each
 *      weight with what n random IDs give (below); the largest deviation is
 *      kept with the filter.
 *   4. Select. Order the slices by ascending weight (the emptiest bank
 *      rejects the most, so it is asked first) and keep them in that order
 *      until the product of the kept fills is at or below p. Every later
 *      bank is dropped: the emptier ones already reach p, and another bank
 *      would cost memory and, for the IDs in the set, one more memory access
 *      per query. A full bank (fill 1) rejects nothing and is never kept.
 *      If all the slices together do not reach p, the build fails with
 *      AMQ_ERANGE, saying the best rate they reach and a len that would
 *      reach p. With the default len that happens only when the IDs fill
 *      their banks more than random IDs would; the next wider len is then
 *      tried, up to 32.
 *   5. Fill the kept banks, and choose each one's stored form.
 *
 * Non-random IDs. The number of positions n random IDs fill in m = 2^len
 * has mean E = m (1 - a) and variance V = m (a - b) + m^2 (b - a^2), with
 * a = (1 - 1/m)^n (a given position stays empty) and b = (1 - 2/m)^n (two
 * given ones do). a - b and b - a^2 are differences of nearly equal numbers;
 * they are computed as
 *
 *     a - b   = -a * expm1(n * log1p(-1 / (m - 1)))
 *     b - a^2 = a^2 * expm1(n * log1p(-1 / (m - 1)^2))
 *
 * which lose nothing. A bank's deviation is |weight - E| / (sqrt(V) + 0.5);
 * the set is flagged as non-random when one exceeds 6, i.e. when some weight
 * is more than 6 sigma + 3 positions from E. The 3 positions keep a bank
 * that random IDs fill almost surely exactly (sigma near 0: n much smaller
 * or much larger than m) from being judged by its tiny sigma; at n << m the
 * weight falls short of n by a Poisson number of collisions, and 6 sigma + 3
 * is past its 1e-7 tail. Small integers as IDs (high bits all zero) fill
 * their high slices' banks with one position each, hundreds of sigmas off.
 * The filter is still correct - no false negatives - but its FPR for random
 * absent IDs is not the product of fills the build promised; the warning
 * says so (amq_hfb_nonrandom, the generic handle's info detail "warning",
 * the command line's build).
 *
 * Stored form of a bank. Raw: the 2^len bits as little-endian 64-bit words
 * (ceil(2^len / 64) of them). Golomb-Rice: the set positions in increasing
 * order as gaps g_1 = v_1, g_i = v_i - v_(i-1) - 1 (>= 0), each Rice-coded
 * with parameter P (bits.h: g >> P in unary, then the low P bits), the
 * stream padded to a whole byte. The gaps of w random positions in m are
 * about geometric with mean m / w, which the Rice code stores in about
 * P + 1 + t / (1 - t) bits, t = (1 - w/m)^(2^P); the best P is near
 * log2(m / w). The build finds the largest P with w * 2^P <= m, measures the
 * exact code length at P - 1, P and P + 1, and stores the bank in whichever
 * of the Rice code and the raw words takes fewer bytes (raw on a tie: it
 * loads without decoding). Loading decodes a Rice-coded bank into a bit
 * array: a query never decodes. The code is not kept beside the bits:
 * saving codes the bits again, so memory holds the bits alone.
 *
 * In memory:
 *
 *     amq_hfb: banks[0 .. bank_count), in the order they are asked
 *       bank: words -> 2^len bits (bit v = bit v % 64 of word v / 64)
 *             mask = 2^len - 1, start, len, weight, how it is stored
 *
 * Invariants (checked by the loader on every file, and after every build in
 * debug builds):
 *   I1  1 <= bank_count; every bank has the same len in 1..32; the slices
 *       lie within the 128 bits and do not overlap.
 *   I2  bank i has exactly weight_i bits set among its 2^len, none beyond.
 *   I3  weights do not decrease from one bank to the next.
 *   I4  n = 0: every weight is 0; n > 0: 1 <= weight_i <= min(n, 2^len).
 *   I5  the product of the fills is at most the target p.
 *   I6  raw: stored_bits = 2^len, rice_bits = 0; Rice: rice_bits <= len and
 *       stored_bits is the exact length of the bank's code, so at least
 *       w (P + 1) and at most w (P + 1) + 2^len / 2^P (P = rice_bits).
 *
 * Queries. contains reads the two words of the ID once, then for each bank
 * the bit at its slice, stopping at the first 0. Most absent IDs stop at the
 * first bank: fill_1 of them go on. The batch forms (contains_many,
 * filter_ids) compute the first bank's position of the ID a fixed distance
 * ahead and prefetch its word, so the cache misses of several IDs overlap.
 *
 * The saved form and the generic handle's view (spec options, info) are in
 * hfb_family.c; hfb_internal.h holds what the two files share.
 *
 * Allocation and cost. A build allocates 32 bytes per ID (the IDs and a sort
 * buffer), one scratch bank and the kept banks (the scratch becomes the
 * first), and does floor(128 / len) + k passes over the IDs. A query
 * allocates nothing. Failures: AMQ_EINVAL (bad parameters, a raw key that is
 * not 16 bytes), AMQ_ERANGE (p not reachable), AMQ_ENOMEM; a damaged file
 * AMQ_ECORRUPT.
 */
#include "core/alloc.h"
#include "core/reduce.h"
#include "core/struct_size.h"
#include "core/util.h"
#include "hfb/hfb_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many IDs ahead of the one tested the batch queries prefetch. */
#define PREFETCH_DISTANCE 16

/* The longest run of equal top bits step 1 of the build sorts by insertion. */
#define INSERTION_SORT_MAX 32

/* Added to a bank's standard deviation in the non-random test (see above). */
#define DEVIATION_SLACK 0.5

typedef struct hfb_id {
    uint64_t low;  /* bytes 0..7: bits 0..63 */
    uint64_t high; /* bytes 8..15: bits 64..127 */
} hfb_id;

static inline hfb_id id_read(const uint8_t *bytes)
{
    hfb_id id = { amq__load_u64le(bytes), amq__load_u64le(bytes + 8) };
    return id;
}

/* Bits start .. start + len - 1 of the ID, as a number (mask = 2^len - 1). */
static inline uint64_t slice_value(uint64_t low, uint64_t high, uint32_t start, uint64_t mask)
{
    amq__uint128 id = ((amq__uint128)high << 64) | low;
    return (uint64_t)(id >> start) & mask;
}

static inline bool bank_passes(const amq__hfb_bank *bank, uint64_t low, uint64_t high)
{
    uint64_t position = slice_value(low, high, bank->start, bank->mask);
    return (bank->bits.words[position >> 6] >> (position & 63)) & 1;
}

uint64_t amq__hfb_bank_stored_bytes(const amq__hfb_bank *bank)
{
    return bank->encoding == AMQ_HFB_RAW ? 8 * amq__bitvec_words_for(amq__hfb_bank_size(bank->len))
                                         : (bank->stored_bits + 7) / 8;
}

/* ---- sizing ----------------------------------------------------------------------- */

double amq__hfb_expected_fill(uint64_t n, uint32_t len)
{
    return -expm1((double)n * log1p(-ldexp(1.0, -(int)len)));
}

/* The fewest banks of fill f whose product is at most p; more than
 * AMQ_HFB_MAX_BANKS when no number of them reaches p. */
static uint32_t banks_needed(double fill, double p)
{
    if (fill <= p)
        return 1;
    if (fill >= 1)
        return AMQ_HFB_MAX_BANKS + 1;
    double k = ceil(log(p) / log(fill));
    if (!(k <= AMQ_HFB_MAX_BANKS))
        return AMQ_HFB_MAX_BANKS + 1;
    uint32_t banks = k < 1 ? 1 : (uint32_t)k;
    while (banks > 1 && pow(fill, banks - 1) <= p)
        banks--;
    while (banks <= AMQ_HFB_MAX_BANKS && pow(fill, banks) > p)
        banks++;
    return banks;
}

/* The expected Rice-coded size in bits of weight random positions among m,
 * at the best parameter: weight * (P + 1 + t / (1 - t)), t = (1 - q)^(2^P),
 * q = weight / m. */
static double expected_rice_bits(double weight, double m, uint32_t len)
{
    if (weight <= 0)
        return 0;
    double log_empty = log1p(-weight / m);
    double best = INFINITY;
    for (uint32_t p = 0; p <= len; p++) {
        double x = ldexp(log_empty, (int)p); /* log t */
        double bits = weight * ((double)p + 1 + exp(x) / -expm1(x));
        if (bits < best)
            best = bits;
    }
    return best;
}

/* The expected stored bits (amq_hfb_expected_bits) of banks of len bits,
 * and in *memory_bits the bits they take in memory: every bank's 2^len raw
 * bits (a query reads bits, never a code; the code is made again when
 * saving). */
static double expected_sizes(uint64_t n, double fpr, uint32_t bank_bits, double *memory_bits)
{
    *memory_bits = INFINITY;
    if (bank_bits < 1 || bank_bits > AMQ_HFB_MAX_BANK_BITS || !(fpr > 0 && fpr < 1))
        return INFINITY;
    double fill = amq__hfb_expected_fill(n, bank_bits);
    uint32_t banks = banks_needed(fill, fpr);
    if (banks > AMQ__HFB_ID_BITS / bank_bits)
        return INFINITY;
    double m = ldexp(1.0, (int)bank_bits);
    double raw_bits = 64 * ceil(m / 64);
    double rice_bits = 8 * ceil(expected_rice_bits(fill * m, m, bank_bits) / 8);
    *memory_bits = banks * raw_bits;
    return banks * (rice_bits < raw_bits ? rice_bits : raw_bits);
}

double amq_hfb_expected_bits(uint64_t n, double fpr, uint32_t bank_bits)
{
    double memory_bits;
    return expected_sizes(n, fpr, bank_bits, &memory_bits);
}

/* The default len: the smallest expected stored size among the lens whose
 * banks are expected to take at most AMQ__HFB_MEMORY_RATIO times that in
 * memory. The stored size alone would pick one wide, sparse bank: a Rice
 * code of about log2(1/p) + 1.6 bits per ID on disk, but 2^len bits, about
 * 1/p per ID, once decoded for queries. When no len keeps within the ratio
 * (p so small that the 128 bits of an ID do not hold enough dense banks),
 * the len with the least memory. */
uint32_t amq_hfb_choose_bank_bits(uint64_t n, double fpr)
{
    uint32_t best_len = 0, leanest_len = 0;
    double best = INFINITY, leanest = INFINITY;
    for (uint32_t len = 1; len <= AMQ_HFB_MAX_BANK_BITS; len++) {
        double memory_bits;
        double bits = expected_sizes(n, fpr, len, &memory_bits);
        if (bits < best && memory_bits <= AMQ__HFB_MEMORY_RATIO * bits) {
            best = bits;
            best_len = len;
        }
        if (memory_bits < leanest) {
            leanest = memory_bits;
            leanest_len = len;
        }
    }
    return best_len ? best_len : leanest_len;
}

/* ---- step 1: sorting the IDs ------------------------------------------------------ */

static inline bool id_less(hfb_id a, hfb_id b)
{
    return a.high < b.high || (a.high == b.high && a.low < b.low);
}

static int compare_ids(const void *a, const void *b)
{
    hfb_id x = *(const hfb_id *)a, y = *(const hfb_id *)b;
    return id_less(y, x) - id_less(x, y);
}

static void insertion_sort(hfb_id *ids, size_t count)
{
    for (size_t i = 1; i < count; i++) {
        hfb_id id = ids[i];
        size_t j = i;
        for (; j > 0 && id_less(id, ids[j - 1]); j--)
            ids[j] = ids[j - 1];
        ids[j] = id;
    }
}

/* Sort ids (count of them) and drop duplicates, returning the distinct
 * count; or 0 with AMQ_ENOMEM in *status. Two stable counting passes (LSD
 * radix) order the IDs by the top 16 bits of the high word, bits 48..55
 * then 56..63, each scattering into 256 runs that the caches can hold; then
 * each run of equal top bits is sorted by insertion (about n / 65536 IDs
 * each when the IDs are random; qsort for a long one). */
static size_t sort_unique(hfb_id *ids, size_t count, int *status)
{
    *status = AMQ_OK;
    if (count < 2)
        return count;
    hfb_id *other = amq__malloc(count * sizeof *other);
    if (!other) {
        *status = AMQ_ENOMEM;
        return 0;
    }
    size_t counts[2][257] = { { 0 } };
    for (size_t i = 0; i < count; i++) {
        counts[0][((ids[i].high >> 48) & 0xff) + 1]++;
        counts[1][(ids[i].high >> 56) + 1]++;
    }
    hfb_id *from = ids, *to = other;
    for (unsigned pass = 0; pass < 2; pass++) {
        size_t *starts = counts[pass];
        for (unsigned digit = 0; digit < 256; digit++)
            starts[digit + 1] += starts[digit];
        unsigned shift = 48 + 8 * pass;
        for (size_t i = 0; i < count; i++)
            to[starts[(from[i].high >> shift) & 0xff]++] = from[i];
        hfb_id *sorted = to;
        to = from;
        from = sorted;
    }
    amq__free(other); /* two passes: the sorted IDs are back in ids */
    for (size_t begin = 0, end; begin < count; begin = end) {
        for (end = begin + 1; end < count && (ids[end].high >> 48) == (ids[begin].high >> 48);)
            end++;
        if (end - begin > INSERTION_SORT_MAX)
            qsort(ids + begin, end - begin, sizeof *ids, compare_ids);
        else
            insertion_sort(ids + begin, end - begin);
    }
    size_t kept = 1;
    for (size_t i = 1; i < count; i++)
        if (ids[i].low != ids[kept - 1].low || ids[i].high != ids[kept - 1].high)
            ids[kept++] = ids[i];
    return kept;
}

/* ---- step 3: measuring the slices ------------------------------------------------- */

/* The deviation of a bank's weight from what n random IDs give a bank of
 * 2^len bits: |weight - E| / (sigma + DEVIATION_SLACK). */
static double weight_deviation(uint64_t weight, uint64_t n, uint32_t len)
{
    if (n == 0)
        return 0;
    double m = ldexp(1.0, (int)len), count = (double)n;
    double log_empty = count * log1p(-1 / m);
    double empty = exp(log_empty); /* a */
    double mean = m * -expm1(log_empty);
    double a_minus_b = -empty * expm1(count * log1p(-1 / (m - 1)));
    double b_minus_a2 = empty * empty * expm1(count * log1p(-1 / ((m - 1) * (m - 1))));
    double variance = m * a_minus_b + m * m * b_minus_a2;
    double sigma = variance > 0 ? sqrt(variance) : 0;
    return fabs((double)weight - mean) / (sigma + DEVIATION_SLACK);
}

/* Set the bit of every ID's slice (start, len = bits of mask) in bits and
 * return how many were not set before. The word of the ID PREFETCH_DISTANCE
 * ahead is prefetched for writing: the positions are random, and a bank of
 * 2^27 bits is far larger than the caches. */
static uint64_t set_slices(amq__bitvec *bits, const hfb_id *ids, size_t n, uint32_t start,
                           uint64_t mask)
{
    uint64_t newly_set = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + PREFETCH_DISTANCE < n) {
            const hfb_id *ahead = &ids[i + PREFETCH_DISTANCE];
            uint64_t position = slice_value(ahead->low, ahead->high, start, mask);
            __builtin_prefetch(&bits->words[position >> 6], 1);
        }
        newly_set +=
            !amq__bitvec_test_and_set(bits, slice_value(ids[i].low, ids[i].high, start, mask));
    }
    return newly_set;
}

/* The weight of every slice j = (j * len, len), j < slices, over the n
 * distinct IDs, counted in scratch (2^len zero bits; left zero). */
static void measure_slices(const hfb_id *ids, size_t n, uint32_t len, uint32_t slices,
                           amq__bitvec *scratch, uint64_t *weights)
{
    uint64_t mask = amq__hfb_bank_size(len) - 1;
    uint64_t words = amq__bitvec_words_for(scratch->bit_count);
    for (uint32_t j = 0; j < slices; j++) {
        uint32_t start = j * len;
        weights[j] = set_slices(scratch, ids, n, start, mask);
        /* Clear what was set: word by word when the IDs are few, else all. */
        if ((uint64_t)n < words / 8)
            for (size_t i = 0; i < n; i++)
                scratch->words[slice_value(ids[i].low, ids[i].high, start, mask) >> 6] = 0;
        else
            memset(scratch->words, 0, (size_t)words * sizeof *scratch->words);
    }
}

/* ---- step 5: the kept banks and their stored form --------------------------------- */

/* The gaps between a bank's set positions in increasing order: the first
 * position, then each position minus the one before minus 1.
 *
 *     gap_cursor c = gap_cursor_start(bank);
 *     uint64_t gap;
 *     while (gap_next(&c, &gap)) ...
 */
typedef struct gap_cursor {
    const uint64_t *words;
    uint64_t word_count, index, word;
    uint64_t next; /* the smallest position the next one may have */
} gap_cursor;

static gap_cursor gap_cursor_start(const amq__hfb_bank *bank)
{
    gap_cursor c = { bank->bits.words, amq__bitvec_words_for(bank->bits.bit_count), 0, 0, 0 };
    c.word = c.word_count ? c.words[0] : 0;
    return c;
}

static inline bool gap_next(gap_cursor *c, uint64_t *gap)
{
    while (!c->word) {
        if (++c->index >= c->word_count)
            return false;
        c->word = c->words[c->index];
    }
    uint64_t position = c->index * 64 + (uint64_t)__builtin_ctzll(c->word);
    c->word &= c->word - 1;
    *gap = position - c->next;
    c->next = position + 1;
    return true;
}

/* Choose how the bank is stored: Rice-coded when that takes fewer bytes
 * than the raw words, at the best of the parameters around log2(2^len / w). */
static void choose_encoding(amq__hfb_bank *bank)
{
    uint64_t m = amq__hfb_bank_size(bank->len);
    uint32_t p = 0;
    while (p < bank->len && (bank->weight << (p + 1)) <= m)
        p++;
    /* The code's length at P - 1, P and P + 1 (those within 0..len): w (P + 1)
     * bits of remainders and stops, plus the quotients. */
    uint32_t low = p ? p - 1 : 0, high = p + 1 <= bank->len ? p + 1 : p;
    uint64_t quotients[3] = { 0, 0, 0 }, gap;
    gap_cursor cursor = gap_cursor_start(bank);
    while (gap_next(&cursor, &gap))
        for (uint32_t c = low; c <= high; c++)
            quotients[c - low] += gap >> c;
    uint32_t best = low;
    uint64_t best_bits = UINT64_MAX;
    for (uint32_t c = low; c <= high; c++) {
        uint64_t bits = bank->weight * (c + 1) + quotients[c - low];
        if (bits < best_bits) {
            best = c;
            best_bits = bits;
        }
    }
    uint64_t raw_bytes = 8 * amq__bitvec_words_for(m);
    if ((best_bits + 7) / 8 < raw_bytes) {
        bank->encoding = AMQ_HFB_GOLOMB;
        bank->rice_bits = best;
        bank->stored_bits = best_bits;
    } else {
        bank->encoding = AMQ_HFB_RAW;
        bank->rice_bits = 0;
        bank->stored_bits = m;
    }
}

/* amq__bitsink's emit: the bytes to the save's writer. */
static int emit_code(void *context, const void *data, size_t len)
{
    return amq__emit(context, data, len);
}

int amq__hfb_bank_produce(amq__emitter *e, const void *bank_data, uint64_t arg)
{
    (void)arg;
    const amq__hfb_bank *bank = bank_data;
    amq__bitsink sink;
    amq__bitsink_init(&sink, emit_code, e);
    uint64_t gap;
    gap_cursor cursor = gap_cursor_start(bank);
    while (gap_next(&cursor, &gap) && sink.status == 0)
        amq__bitsink_put_rice(&sink, gap, bank->rice_bits);
    return amq__bitsink_finish(&sink);
}

amq__piece amq__hfb_bank_piece(const amq__hfb_bank *bank)
{
    uint64_t bytes = amq__hfb_bank_stored_bytes(bank);
    if (bank->encoding == AMQ_HFB_RAW)
        return amq__bitvec_piece(&bank->bits);
    return (amq__piece){ .data = bank, .len = bytes, .produce = amq__hfb_bank_produce };
}

/* ---- building --------------------------------------------------------------------- */

static void banks_free(amq_hfb *f)
{
    for (size_t i = 0; i < f->bank_count; i++)
        amq__bitvec_free(&f->banks[i].bits);
    f->bank_count = 0;
}

void amq_hfb_free(amq_hfb *filter)
{
    if (!filter)
        return;
    banks_free(filter);
    amq__free(filter);
}

/* The message of a build that cannot reach p with banks of len bits. */
static int unreachable(amq_diag *diag, uint64_t n, double p, uint32_t len, uint32_t slices,
                       double best_rate)
{
    uint32_t suggested = amq_hfb_choose_bank_bits(n, p);
    char advice[96];
    if (suggested && suggested != len)
        snprintf(advice, sizeof advice, "bank-bits=%u would reach it", suggested);
    else if (suggested)
        snprintf(advice, sizeof advice, "these IDs fill their banks more than random IDs would");
    else
        snprintf(advice, sizeof advice, "no bank size reaches it for %llu IDs",
                 (unsigned long long)n);
    return amq__fail(diag, AMQ_ERANGE,
                     "bank-bits=%u: all %u banks together give an FPR of %.3g, above p = %g; %s",
                     len, slices, best_rate, p, advice);
}

/* Steps 3 to 5 with banks of len bits, into f (which holds no banks). */
static int build_banks(amq_hfb *f, const hfb_id *ids, size_t n, uint32_t len, amq_diag *diag)
{
    uint32_t slices = AMQ__HFB_ID_BITS / len;
    uint64_t m = amq__hfb_bank_size(len);
    amq__bitvec scratch;
    int status = amq__bitvec_init(&scratch, m);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "cannot allocate a bank of 2^%u bits", len);
    uint64_t weights[AMQ_HFB_MAX_BANKS];
    measure_slices(ids, n, len, slices, &scratch, weights);

    uint32_t order[AMQ_HFB_MAX_BANKS];
    f->deviation = 0;
    for (uint32_t j = 0; j < slices; j++) {
        double deviation = weight_deviation(weights[j], n, len);
        if (deviation > f->deviation)
            f->deviation = deviation;
        uint32_t at = j; /* insertion by weight, stable in slice order */
        for (; at > 0 && weights[order[at - 1]] > weights[j]; at--)
            order[at] = order[at - 1];
        order[at] = j;
    }
    double product = 1;
    uint32_t kept = 0;
    while (kept < slices && product > f->target_fpr && weights[order[kept]] < m)
        product *= (double)weights[order[kept++]] / (double)m;
    if (product > f->target_fpr) {
        amq__bitvec_free(&scratch);
        return unreachable(diag, n, f->target_fpr, len, slices, product);
    }

    f->bank_bits = len;
    for (uint32_t i = 0; i < kept; i++) {
        amq__hfb_bank *bank = &f->banks[i];
        bank->start = order[i] * len;
        bank->len = len;
        bank->mask = m - 1;
        bank->weight = weights[order[i]];
        if (i == 0) {
            bank->bits = scratch;
        } else {
            status = amq__bitvec_init(&bank->bits, m);
            if (status != AMQ_OK) {
                banks_free(f);
                return amq__fail(diag, status, "cannot allocate bank %u of 2^%u bits", i, len);
            }
        }
        f->bank_count = i + 1;
        uint64_t weight = set_slices(&bank->bits, ids, n, bank->start, bank->mask);
        assert(weight == bank->weight);
        (void)weight;
        choose_encoding(bank);
    }
    assert(amq__hfb_check(f, NULL) == AMQ_OK);
    return AMQ_OK;
}

/* Build from the caller's IDs in *ids (count of them, taken over and freed). */
static int build_from_ids(amq_hfb **out, const amq_hfb_params *params, hfb_id *ids, size_t count,
                          amq_diag *diag)
{
    *out = NULL;
    double p = params->fpr != 0 ? params->fpr : AMQ_HFB_DEFAULT_FPR;
    int status = AMQ_OK;
    if (!(p > 0 && p < 1))
        status = amq__fail(diag, AMQ_EINVAL, "fpr %g is not in (0, 1)", params->fpr);
    else if (params->bank_bits > AMQ_HFB_MAX_BANK_BITS)
        status = amq__fail(diag, AMQ_EINVAL,
                           "bank-bits=%u: a bank of 2^%u bits is too large; the widest is "
                           "2^%d bits (512 MiB)",
                           params->bank_bits, params->bank_bits, AMQ_HFB_MAX_BANK_BITS);
    else if (params->ids != AMQ_HFB_IDS_RAW && params->ids != AMQ_HFB_IDS_MD5)
        status = amq__fail(diag, AMQ_EINVAL, "unknown ids kind %d", (int)params->ids);
    amq_hfb *f = NULL;
    size_t n = 0;
    if (status == AMQ_OK) {
        f = amq__calloc(1, sizeof *f);
        if (f)
            n = sort_unique(ids, count, &status);
        else
            status = AMQ_ENOMEM;
        if (status != AMQ_OK)
            status = amq__fail(diag, status, "out of memory sorting %zu IDs", count);
    }
    if (status == AMQ_OK) {
        f->ids = params->ids;
        f->id_count = n;
        f->target_fpr = p;
        if (params->bank_bits) {
            status = build_banks(f, ids, n, params->bank_bits, diag);
        } else {
            /* The expected best, then wider banks should these IDs fill
             * them more than random ones. Only the last refusal is told. */
            uint32_t len = amq_hfb_choose_bank_bits(n, p);
            if (!len)
                len = AMQ_HFB_MAX_BANK_BITS;
            amq_diag attempt;
            do
                status = build_banks(f, ids, n, len, &attempt);
            while (status == AMQ_ERANGE && ++len <= AMQ_HFB_MAX_BANK_BITS);
            if (status != AMQ_OK && diag)
                *diag = attempt;
        }
    }
    amq__free(ids);
    if (status != AMQ_OK) {
        amq_hfb_free(f);
        return status;
    }
    *out = f;
    return AMQ_OK;
}

/* Room for count IDs (at least one), twice over for the sort's buffer:
 * NULL when that does not fit a size_t or cannot be had. */
static hfb_id *ids_alloc(size_t count)
{
    if (count > SIZE_MAX / 2 / sizeof(hfb_id))
        return NULL;
    return amq__malloc((count ? count : 1) * sizeof(hfb_id));
}

void amq_hfb_params_init_sized(amq_hfb_params *params, size_t struct_size)
{
    assert(params && struct_size >= sizeof(size_t));
    amq_hfb_params defaults;
    memset(&defaults, 0, sizeof defaults);
    amq__struct_write(params, struct_size, &defaults, sizeof defaults);
}

/* The caller's parameters in this library's layout (core/struct_size.h). */
static int read_params(amq_hfb_params *read, const amq_hfb_params *params, amq_diag *diag)
{
    amq_hfb_params_init(read);
    return amq__struct_read(read, sizeof *read, params, sizeof *read, "amq_hfb_params", diag);
}

int amq_hfb_build_hash(amq_hfb **out, const amq_hfb_params *caller_params, const uint8_t *ids,
                       size_t count, amq_diag *diag)
{
    assert(out && caller_params && (count == 0 || ids));
    *out = NULL;
    amq_hfb_params read;
    int status = read_params(&read, caller_params, diag);
    if (status != AMQ_OK)
        return status;
    const amq_hfb_params *params = &read;
    hfb_id *copy = ids_alloc(count);
    if (!copy)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory copying %zu IDs", count);
    for (size_t i = 0; i < count; i++)
        copy[i] = id_read(ids + i * AMQ_HFB_ID_BYTES);
    return build_from_ids(out, params, copy, count, diag);
}

int amq_hfb_build(amq_hfb **out, const amq_hfb_params *caller_params, const void *const *keys,
                  const size_t *lens, size_t count, amq_diag *diag)
{
    assert(out && caller_params && (count == 0 || (keys && lens)));
    *out = NULL;
    amq_hfb_params read;
    int status = read_params(&read, caller_params, diag);
    if (status != AMQ_OK)
        return status;
    const amq_hfb_params *params = &read;
    hfb_id *ids = ids_alloc(count);
    if (!ids)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory for %zu IDs", count);
    for (size_t i = 0; i < count; i++) {
        if (params->ids == AMQ_HFB_IDS_MD5) {
            uint8_t digest[16];
            amq_md5(digest, keys[i], lens[i]);
            ids[i] = id_read(digest);
        } else if (lens[i] == AMQ_HFB_ID_BYTES) {
            ids[i] = id_read(keys[i]);
        } else {
            amq__free(ids);
            return amq__fail(diag, AMQ_EINVAL,
                             "key %zu of %zu is %zu bytes: an hfb ID is 16 bytes (or build "
                             "with hash=md5 to hash keys into IDs)",
                             i + 1, count, lens[i]);
        }
    }
    return build_from_ids(out, params, ids, count, diag);
}

/* ---- queries ---------------------------------------------------------------------- */

static inline bool passes_all(const amq_hfb *f, uint64_t low, uint64_t high)
{
    for (size_t i = 0; i < f->bank_count; i++)
        if (!bank_passes(&f->banks[i], low, high))
            return false;
    return true;
}

bool amq_hfb_contains_hash(const amq_hfb *filter, const uint8_t id[16])
{
    hfb_id x = id_read(id);
    return passes_all(filter, x.low, x.high);
}

int amq_hfb_contains(const amq_hfb *filter, const void *key, size_t len)
{
    if (filter->ids == AMQ_HFB_IDS_MD5) {
        uint8_t digest[16];
        amq_md5(digest, key, len);
        return amq_hfb_contains_hash(filter, digest);
    }
    if (len != AMQ_HFB_ID_BYTES)
        return AMQ_EINVAL;
    return amq_hfb_contains_hash(filter, key);
}

/* The batch pipeline: ID i's first-bank word is prefetched while ID
 * i - PREFETCH_DISTANCE is tested. With results, its answer goes there;
 * with kept, a passing ID is copied to kept[passed] (kept may be ids: an ID
 * is read before any write reaches its slot). Returns the IDs that passed.
 * The prefetch stays in this loop, where the compiler cannot judge it free
 * of effects and drop it. */
static size_t pipeline(const amq_hfb *f, const uint8_t *ids, size_t count, uint8_t *results,
                       uint8_t *kept)
{
    const amq__hfb_bank *first = &f->banks[0];
    size_t passed = 0;
    for (size_t i = 0; i < count + PREFETCH_DISTANCE; i++) {
        if (i < count) {
            hfb_id ahead = id_read(ids + i * AMQ_HFB_ID_BYTES);
            uint64_t position = slice_value(ahead.low, ahead.high, first->start, first->mask);
            __builtin_prefetch(&first->bits.words[position >> 6]);
        }
        if (i >= PREFETCH_DISTANCE) {
            size_t j = i - PREFETCH_DISTANCE;
            const uint8_t *bytes = ids + j * AMQ_HFB_ID_BYTES;
            hfb_id id = id_read(bytes);
            bool pass = passes_all(f, id.low, id.high);
            if (results)
                results[j] = pass;
            if (pass && kept && kept + passed * AMQ_HFB_ID_BYTES != bytes)
                memcpy(kept + passed * AMQ_HFB_ID_BYTES, bytes, AMQ_HFB_ID_BYTES);
            passed += pass;
        }
    }
    return passed;
}

int amq_hfb_contains_many_hash(uint8_t *results, const amq_hfb *filter, const uint8_t *ids,
                               size_t count)
{
    if (count == 0)
        return AMQ_OK;
    if (!results || !filter || !ids)
        return AMQ_EINVAL;
    pipeline(filter, ids, count, results, NULL);
    return AMQ_OK;
}

/* The keys' IDs are gathered a chunk at a time into one array (hashed
 * first for an MD5 filter), which the prefetching batch then asks. */
int amq_hfb_contains_many(uint8_t *results, const amq_hfb *filter, const void *const *keys,
                          const size_t *lens, size_t count)
{
    enum { CHUNK = 256 };
    const amq_hfb *f = filter;
    if (count == 0)
        return AMQ_OK;
    if (!results || !f || !keys || !lens)
        return AMQ_EINVAL;
    uint8_t ids[CHUNK * AMQ_HFB_ID_BYTES];
    for (size_t done = 0; done < count; done += CHUNK) {
        size_t n = count - done < CHUNK ? count - done : CHUNK;
        for (size_t i = 0; i < n; i++) {
            uint8_t *id = ids + i * AMQ_HFB_ID_BYTES;
            if (f->ids == AMQ_HFB_IDS_MD5)
                amq_md5(id, keys[done + i], lens[done + i]);
            else if (lens[done + i] == AMQ_HFB_ID_BYTES)
                memcpy(id, keys[done + i], AMQ_HFB_ID_BYTES);
            else
                return AMQ_EINVAL;
        }
        pipeline(f, ids, n, results + done, NULL);
    }
    return AMQ_OK;
}

size_t amq_hfb_select_hash(uint8_t *kept, const amq_hfb *filter, const uint8_t *ids, size_t count)
{
    return pipeline(filter, ids, count, NULL, kept);
}

/* ---- statistics ------------------------------------------------------------------- */

amq_hfb_ids amq_hfb_id_kind(const amq_hfb *filter)
{
    return filter->ids;
}

uint64_t amq_hfb_keys(const amq_hfb *filter)
{
    return filter->id_count;
}

uint32_t amq_hfb_bank_bits(const amq_hfb *filter)
{
    return filter->bank_bits;
}

size_t amq_hfb_bank_count(const amq_hfb *filter)
{
    return filter->bank_count;
}

size_t amq_hfb_slice_count(const amq_hfb *filter)
{
    return AMQ__HFB_ID_BITS / filter->bank_bits;
}

int amq_hfb_bank_get(amq_hfb_bank *out, const amq_hfb *filter, size_t i)
{
    if (i >= filter->bank_count)
        return AMQ_EINVAL;
    const amq__hfb_bank *bank = &filter->banks[i];
    out->start = bank->start;
    out->len = bank->len;
    out->weight = bank->weight;
    out->fill = amq__hfb_bank_fill(bank);
    out->encoding = bank->encoding;
    out->rice_bits = bank->rice_bits;
    out->stored_bits = bank->stored_bits;
    return AMQ_OK;
}

double amq_hfb_target_fpr(const amq_hfb *filter)
{
    return filter->target_fpr;
}

double amq_hfb_expected_fpr(const amq_hfb *filter)
{
    double product = 1;
    for (size_t i = 0; i < filter->bank_count; i++)
        product *= amq__hfb_bank_fill(&filter->banks[i]);
    return product;
}

uint64_t amq_hfb_memory_bytes(const amq_hfb *filter)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < filter->bank_count; i++)
        bytes += 8 * amq__bitvec_words_for(filter->banks[i].bits.bit_count);
    return bytes;
}

uint64_t amq_hfb_stored_bytes(const amq_hfb *filter)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < filter->bank_count; i++)
        bytes += amq__hfb_bank_stored_bytes(&filter->banks[i]);
    return bytes;
}

double amq_hfb_deviation(const amq_hfb *filter)
{
    return filter->deviation;
}

bool amq_hfb_nonrandom(const amq_hfb *filter)
{
    return filter->deviation > AMQ_HFB_NONRANDOM_DEVIATION;
}

/* ---- invariants ------------------------------------------------------------------- */

int amq__hfb_check_header(const amq_hfb *f, amq_diag *diag)
{
    if (!(f->target_fpr > 0 && f->target_fpr < 1))
        return amq__fail(diag, AMQ_ECORRUPT, "hfb target fpr %g is not in (0, 1)", f->target_fpr);
    if (!(f->deviation >= 0 && f->deviation < INFINITY))
        return amq__fail(diag, AMQ_ECORRUPT, "hfb deviation %g is not a finite non-negative number",
                         f->deviation);
    return AMQ_OK;
}

int amq__hfb_check_bank(const amq_hfb *f, size_t i, amq_diag *diag)
{
    const amq__hfb_bank *bank = &f->banks[i];
    uint32_t len = bank->len;
    if (len < 1 || len > AMQ_HFB_MAX_BANK_BITS || len != f->bank_bits)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb bank %zu has len %u (the filter's is %u)", i, len,
                         f->bank_bits);
    uint64_t m = amq__hfb_bank_size(len);
    if (bank->start > AMQ__HFB_ID_BITS - len)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb bank %zu's slice %u+%u passes bit 127", i,
                         bank->start, len);
    for (size_t j = 0; j < i; j++)
        if (bank->start < f->banks[j].start + len && f->banks[j].start < bank->start + len)
            return amq__fail(diag, AMQ_ECORRUPT, "hfb bank %zu's slice %u+%u overlaps bank %zu's",
                             i, bank->start, len, j);
    if (f->id_count == 0 ? bank->weight != 0
                         : bank->weight < 1 || bank->weight > m || bank->weight > f->id_count)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb bank %zu has weight %llu for %llu IDs", i,
                         (unsigned long long)bank->weight, (unsigned long long)f->id_count);
    if (i > 0 && bank->weight < f->banks[i - 1].weight)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb bank %zu is emptier than bank %zu before it", i,
                         i - 1);
    /* A code of w gaps takes w (P + 1) bits, plus their quotients, which sum
     * to at most the gaps' sum over 2^P, itself below 2^len. */
    bool valid =
        bank->encoding == AMQ_HFB_RAW
            ? bank->rice_bits == 0 && bank->stored_bits == m
            : bank->encoding == AMQ_HFB_GOLOMB && bank->rice_bits <= len &&
                  bank->stored_bits >= bank->weight * (bank->rice_bits + 1) &&
                  bank->stored_bits - bank->weight * (bank->rice_bits + 1) <= m >> bank->rice_bits;
    if (!valid)
        return amq__fail(
            diag, AMQ_ECORRUPT, "hfb bank %zu: encoding %u with parameter %u cannot take %llu bits",
            i, (unsigned)bank->encoding, bank->rice_bits, (unsigned long long)bank->stored_bits);
    return AMQ_OK;
}

int amq__hfb_check(const amq_hfb *f, amq_diag *diag)
{
    if (f->bank_count < 1 || f->bank_count > AMQ_HFB_MAX_BANKS)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb bank count %zu is not in 1..%d", f->bank_count,
                         AMQ_HFB_MAX_BANKS);
    int status = amq__hfb_check_header(f, diag);
    for (size_t i = 0; i < f->bank_count && status == AMQ_OK; i++)
        status = amq__hfb_check_bank(f, i, diag);
    if (status == AMQ_OK && amq_hfb_expected_fpr(f) > f->target_fpr)
        status = amq__fail(diag, AMQ_ECORRUPT, "hfb banks give an FPR of %g, above the target %g",
                           amq_hfb_expected_fpr(f), f->target_fpr);
    return status;
}
