/*
 * amq/split_block.h - the split-block kernel: the add and the test of a key
 * in one 256-bit block of eight 32-bit words (the layout of Apache
 * Parquet's split-block Bloom filters), in a portable form and an AVX2
 * form that set and test the same bits.
 *
 * Part of the inline tier (amq/inline.h, which includes this header): the
 * arithmetic is numbered by AMQ_INLINE_LAYOUT and changes only with it.
 * The library's blocked Bloom filter (split layout), the split-block stages
 * of its scalable Bloom filter and amq_split_block_view_contains_hash are
 * all made of these functions, so their bits agree by construction: the
 * kernel is a header of static inline functions because the inline view
 * must compile into the caller, and the library includes the same header
 * rather than keep a copy of its own.
 *
 * A key's 32-bit in-block hash key32 sets, in word i (0..7) of its block,
 * bit (key32 * amq_split_block_salt(i)) mod 2^32 >> 27. Multiplying by an
 * odd constant permutes the 32-bit values and the top bits of the product
 * hash all of key32's; the eight salts are the constants Parquet's
 * specification gives. A block is picked from 32 other bits of the key's
 * hash by multiply-high (amq_split_block_index).
 *
 * The AVX2 forms (amq_split_block_*_avx2) are defined when the compiler
 * targets AVX2 (__AVX2__: -mavx2, or -march=native on a CPU that has it),
 * or, with GCC or Clang on x86, when AMQ_SPLIT_BLOCK_AVX2_TARGET is defined
 * before this header is first included: they are then compiled with the
 * target("avx2") attribute, for code that checks the CPU at run time and
 * calls them only where it has AVX2 (as the library does). They are
 * inlined only into functions compiled for AVX2 as well.
 * AMQ_SPLIT_BLOCK_HAVE_AVX2 is 1 where they are defined, else 0.
 *
 * Header-only C99; no allocation, no state: safe from any thread on blocks
 * no other thread changes.
 */
#ifndef AMQ_SPLIT_BLOCK_H
#define AMQ_SPLIT_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__AVX2__)
#define AMQ_SPLIT_BLOCK_HAVE_AVX2 1
#define AMQ_SPLIT_BLOCK_AVX2_FUNCTION
#elif defined(AMQ_SPLIT_BLOCK_AVX2_TARGET) && (defined(__x86_64__) || defined(__i386__)) &&        \
    defined(__GNUC__)
#define AMQ_SPLIT_BLOCK_HAVE_AVX2     1
#define AMQ_SPLIT_BLOCK_AVX2_FUNCTION __attribute__((target("avx2")))
#else
#define AMQ_SPLIT_BLOCK_HAVE_AVX2 0
#endif

#if AMQ_SPLIT_BLOCK_HAVE_AVX2
#include <immintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** 32-bit words in a split block: one bit of a key is set in each. */
#define AMQ_SPLIT_BLOCK_WORDS 8

/** The odd constant of word i (0..7) of a split block: Parquet's eight. */
static inline uint32_t amq_split_block_salt(unsigned word)
{
    static const uint32_t salts[AMQ_SPLIT_BLOCK_WORDS] = { 0x47b6137bU, 0x44974d91U, 0x8824ad5bU,
                                                           0xa2b7289dU, 0x705495c7U, 0x2df1424bU,
                                                           0x9efc4947U, 0x5c6bfb31U };
    return salts[word & 7];
}

/** The bit key32 sets in word i of its block. */
static inline uint32_t amq_split_block_bit(uint32_t key32, unsigned word)
{
    return (uint32_t)1 << ((key32 * amq_split_block_salt(word)) >> 27);
}

/**
 * The block, among blocks (at least 1, at most 2^32), of a key whose hash
 * has the block-picking bits in its top 32: (hash >> 32) * blocks >> 32.
 */
static inline uint64_t amq_split_block_index(uint64_t hash, uint64_t blocks)
{
    return (hash >> 32) * blocks >> 32;
}

/**
 * Whether every bit of key32 is set in the block (its eight words). Tests
 * all eight without a branch, as the AVX2 form does: they are one cache
 * line, and a branch per word would mispredict on absent keys.
 */
static inline bool amq_split_block_test(const uint32_t *block, uint32_t key32)
{
    uint32_t missing = 0;
    for (unsigned i = 0; i < AMQ_SPLIT_BLOCK_WORDS; i++)
        missing |= ~block[i] & amq_split_block_bit(key32, i);
    return missing == 0;
}

/**
 * Set key32's eight bits in the block.
 * @return how many of them were clear before: 0 when the key was maybe
 *   present already.
 */
static inline unsigned amq_split_block_add(uint32_t *block, uint32_t key32)
{
    unsigned set = 0;
    for (unsigned i = 0; i < AMQ_SPLIT_BLOCK_WORDS; i++) {
        uint32_t bit = amq_split_block_bit(key32, i);
        set += (block[i] & bit) == 0;
        block[i] |= bit;
    }
    return set;
}

#if AMQ_SPLIT_BLOCK_HAVE_AVX2
/** key32's eight one-bit masks, word i's in 32-bit lane i. */
AMQ_SPLIT_BLOCK_AVX2_FUNCTION static inline __m256i amq_split_block_masks_avx2(uint32_t key32)
{
    const __m256i salts = _mm256_setr_epi32(
        (int)amq_split_block_salt(0), (int)amq_split_block_salt(1), (int)amq_split_block_salt(2),
        (int)amq_split_block_salt(3), (int)amq_split_block_salt(4), (int)amq_split_block_salt(5),
        (int)amq_split_block_salt(6), (int)amq_split_block_salt(7));
    __m256i products = _mm256_mullo_epi32(_mm256_set1_epi32((int)key32), salts);
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(products, 27));
}

/** amq_split_block_test in one 256-bit test of the block against the masks. */
AMQ_SPLIT_BLOCK_AVX2_FUNCTION static inline bool amq_split_block_test_avx2(const uint32_t *block,
                                                                           uint32_t key32)
{
    __m256i words = _mm256_loadu_si256((const __m256i *)(const void *)block);
    return _mm256_testc_si256(words, amq_split_block_masks_avx2(key32)) != 0;
}

/**
 * Set key32's eight bits in the block with one 256-bit OR (the same bits
 * as amq_split_block_add).
 * @return whether any of them was clear before: false when the key was
 *   maybe present already. (Not how many: the count would cost the add a
 *   population count its callers do not need.)
 */
AMQ_SPLIT_BLOCK_AVX2_FUNCTION static inline bool amq_split_block_add_avx2(uint32_t *block,
                                                                          uint32_t key32)
{
    __m256i *lanes = (__m256i *)(void *)block;
    __m256i old = _mm256_loadu_si256(lanes), masks = amq_split_block_masks_avx2(key32);
    _mm256_storeu_si256(lanes, _mm256_or_si256(old, masks));
    return !_mm256_testc_si256(old, masks);
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* AMQ_SPLIT_BLOCK_H */
