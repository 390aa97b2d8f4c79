/*
 * cuckoo_semisort.c - semi-sorted buckets (Fan et al., section 5.2; the
 * filter is explained at the top of cuckoo.c).
 *
 * In a bucket of four slots the order of the fingerprints carries no
 * information, and that can be turned into space. Split each f-bit
 * fingerprint into its top 4 bits (the prefix) and the other f - 4 (the
 * suffix), and keep the bucket's four fingerprints in ascending order, so
 * that its prefixes are a sorted sequence a <= b <= c <= d. There are only
 * C(16 + 4 - 1, 4) = 3876 such sequences (multisets of four values out of
 * 16), so the four prefixes fit in a 12-bit code instead of 16 bits, and a
 * bucket takes 12 + 4(f - 4) = 4f - 4 bits: one bit per slot less, at the
 * same FPR. An empty slot is the fingerprint 0, prefix and suffix 0, and
 * sorts first.
 *
 * The code of a sorted sequence is its rank in the combinatorial number
 * system: a <= b <= c <= d maps to the strictly increasing a < b + 1 <
 * c + 2 < d + 3, whose rank among 4-subsets of 0..18 is
 *
 *     code = C(a, 1) + C(b + 1, 2) + C(c + 2, 3) + C(d + 3, 4)    in 0 .. 3875.
 *
 * Decoding goes through a table of the 3876 sequences (built once, 31 KiB:
 * each the four prefixes already in the top 4 bits of four 16-bit lanes):
 * listing them with d outermost and a innermost, each in ascending order,
 * visits the codes 0, 1, 2, ... in turn. A semi-sorted bucket is 12 bits
 * of code, then the four suffixes of f - 4 bits, slot 0 first:
 *
 *     bit 0          12          12 + w      12 + 2w     12 + 3w     12 + 4w
 *         | code     | suffix 0  | suffix 1  | suffix 2  | suffix 3  |
 *                                                             (w = f - 4)
 *
 * A lookup (amq__cuckoo_semisort_holds, in cuckoo_internal.h) asks a key's
 * two buckets together. It first compares the key's suffix with the eight
 * stored ones where they lie (the zero-lane test on lanes of w bits): for
 * an absent key that settles most lookups without the table. Otherwise it
 * builds each bucket's four fingerprints in 16-bit lanes, prefix << 12 |
 * suffix, from the table's entry and the suffixes spread into the lanes'
 * low bits, and compares all four at once. The spreading is one BMI2 pdep
 * where the CPU has a fast one (chosen at run time; Intel since Haswell,
 * AMD since Zen 3), else four shifts and masks; both give the same lanes.
 * Insertions, removals and counts decode a bucket into the plain layout's
 * word of four f-bit lanes (amq__cuckoo_semisort_decode), find slots in it
 * with the plain buckets' test and change it as a plain bucket, and sort
 * and encode the four fingerprints again (amq__cuckoo_semisort_store). An
 * insertion first asks the suffixes whether any is 0: a full bucket is told
 * without decoding. The lanes must fit one 64-bit word, so semi-sorting
 * takes f <= 16 (and f >= 5: a suffix of at least one bit).
 */
#include "core/bits.h"
#include "cuckoo/cuckoo_internal.h"

#include <assert.h>
#include <pthread.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CUCKOO_HAVE_BMI2 1
#include <immintrin.h>
#else
#define CUCKOO_HAVE_BMI2 0
#endif

uint64_t amq__cuckoo_prefix_sequences[AMQ__CUCKOO_SEMI_SORT_CODES];
static pthread_once_t prefix_sequences_once = PTHREAD_ONCE_INIT;

static void list_prefix_sequences(void)
{
    unsigned code = 0;
    for (uint64_t d = 0; d < 16; d++)
        for (uint64_t c = 0; c <= d; c++)
            for (uint64_t b = 0; b <= c; b++)
                for (uint64_t a = 0; a <= b; a++)
                    amq__cuckoo_prefix_sequences[code++] = a << 12 | b << 28 | c << 44 | d << 60;
    assert(code == AMQ__CUCKOO_SEMI_SORT_CODES);
}

void amq__cuckoo_semisort_init(void)
{
    pthread_once(&prefix_sequences_once, list_prefix_sequences);
}

/* Not the microcoded pdep of AMD's Zen 1 and 2 (hundreds of cycles, slower
 * than the portable spread). */
bool amq__cuckoo_fast_pdep(void)
{
#if CUCKOO_HAVE_BMI2
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("znver1") &&
           !__builtin_cpu_is("znver2");
#else
    return false;
#endif
}

#if CUCKOO_HAVE_BMI2
__attribute__((target("bmi2"))) bool
amq__cuckoo_semisort_lanes_hold_pdep(const amq_cuckoo *f, uint64_t code1, uint64_t suffixes1,
                                     uint64_t code2, uint64_t suffixes2, uint64_t target)
{
    return amq__cuckoo_wide_lanes_hold(
        amq__cuckoo_prefix_sequences[code1] | _pdep_u64(suffixes1, f->suffix_lanes),
        amq__cuckoo_prefix_sequences[code2] | _pdep_u64(suffixes2, f->suffix_lanes), target);
}
#else
bool amq__cuckoo_semisort_lanes_hold_pdep(const amq_cuckoo *f, uint64_t code1, uint64_t suffixes1,
                                          uint64_t code2, uint64_t suffixes2, uint64_t target)
{
    return amq__cuckoo_wide_lanes_hold(
        amq__cuckoo_prefix_sequences[code1] | amq__cuckoo_spread(f, suffixes1),
        amq__cuckoo_prefix_sequences[code2] | amq__cuckoo_spread(f, suffixes2), target);
}
#endif

/* The code of the sorted prefixes a <= b <= c <= d. */
static inline uint32_t prefix_code(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    return a + (b + 1) * b / 2 + (c + 2) * (c + 1) * c / 6 + (d + 3) * (d + 2) * (d + 1) * d / 24;
}

uint64_t amq__cuckoo_semisort_decode(const amq_cuckoo *f, uint64_t code, uint64_t suffixes)
{
    uint64_t prefixes = amq__cuckoo_prefix_sequences[code];
    uint64_t word = 0;
    for (uint32_t slot = 0; slot < AMQ__CUCKOO_SEMI_SORT_SLOTS; slot++) {
        uint64_t prefix = prefixes >> (AMQ__CUCKOO_WIDE_LANE_BITS * slot + 12) & 15;
        uint64_t suffix = suffixes >> (f->suffix_bits * slot) & f->suffix_mask;
        word |= (prefix << f->suffix_bits | suffix) << (f->fingerprint_bits * slot);
    }
    return word;
}

static inline void order(uint32_t *low, uint32_t *high)
{
    uint32_t a = *low, b = *high;
    *low = a < b ? a : b;
    *high = a < b ? b : a;
}

void amq__cuckoo_semisort_store(const amq_cuckoo *f, amq__cuckoo_table *t, uint64_t bucket,
                                uint64_t word)
{
    uint32_t fingerprints[AMQ__CUCKOO_SEMI_SORT_SLOTS];
    for (uint32_t slot = 0; slot < AMQ__CUCKOO_SEMI_SORT_SLOTS; slot++)
        fingerprints[slot] =
            (uint32_t)(word >> (f->fingerprint_bits * slot)) & f->fingerprint_range;
    order(&fingerprints[0], &fingerprints[1]);
    order(&fingerprints[2], &fingerprints[3]);
    order(&fingerprints[0], &fingerprints[2]);
    order(&fingerprints[1], &fingerprints[3]);
    order(&fingerprints[1], &fingerprints[2]);
    uint32_t prefix[AMQ__CUCKOO_SEMI_SORT_SLOTS];
    uint64_t suffixes = 0;
    for (uint32_t slot = 0; slot < AMQ__CUCKOO_SEMI_SORT_SLOTS; slot++) {
        prefix[slot] = fingerprints[slot] >> f->suffix_bits;
        suffixes |= (uint64_t)(fingerprints[slot] & f->suffix_mask) << (f->suffix_bits * slot);
    }
    uint64_t bit = amq__cuckoo_bucket_bit(f, bucket);
    uint64_t code = prefix_code(prefix[0], prefix[1], prefix[2], prefix[3]);
    if (f->bucket_bits <= 57) {
        amq__packed_set(t->slots, bit, f->bucket_bits,
                        code | suffixes << AMQ__CUCKOO_SEMI_SORT_CODE_BITS);
        return;
    }
    amq__packed_set(t->slots, bit, AMQ__CUCKOO_SEMI_SORT_CODE_BITS, code);
    amq__packed_set(t->slots, bit + AMQ__CUCKOO_SEMI_SORT_CODE_BITS,
                    AMQ__CUCKOO_SEMI_SORT_SLOTS * f->suffix_bits, suffixes);
}
