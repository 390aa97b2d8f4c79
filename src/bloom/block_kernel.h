/*
 * block_kernel.h - the bits of one block, for the blocked Bloom filter
 * (blocked_bloom.c) and the blocked stages of the scalable one
 * (scalable_bloom.c): the split-block kernel of amq/split_block.h, with
 * its AVX2 forms compiled for a run-time check of the CPU, and the same
 * for 512-bit blocks, whose k (1 to 16) bits may fall anywhere in the
 * block.
 *
 * A key's 32-bit in-block hash key32 sets, for t < k, bit
 * (key32 * amq__block_salts()[t]) mod 2^32 >> 23 of a 512-bit block (bit b
 * is bit b mod 32 of word b / 32). The salts are the first 32 bits of the
 * fractional parts of the cube roots of the first 16 primes, made odd:
 * constants with no structure.
 *
 * Include this before amq/inline.h (which includes amq/split_block.h
 * without the AVX2 forms the library needs) or anything that includes it.
 */
#ifndef AMQ_BLOCK_KERNEL_H
#define AMQ_BLOCK_KERNEL_H

#ifndef AMQ_SPLIT_BLOCK_AVX2_TARGET
#define AMQ_SPLIT_BLOCK_AVX2_TARGET 1
#endif
#include "amq/split_block.h"

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define AMQ__BLOCK_HAVE_AVX2 1
#if !AMQ_SPLIT_BLOCK_HAVE_AVX2
#error "amq/split_block.h was included before bloom/block_kernel.h, without its AVX2 forms"
#endif
#else
#define AMQ__BLOCK_HAVE_AVX2 0
#endif

#define AMQ__BLOCK_WORDS      16 /* 32-bit words in a 512-bit block */
#define AMQ__BLOCK_MAX_HASHES 16

/* Whether the CPU has AVX2: the blocked paths' run-time check. */
static inline bool amq__block_cpu_has_avx2(void)
{
#if AMQ__BLOCK_HAVE_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

/* The 512-bit block layout's salts, AMQ__BLOCK_MAX_HASHES of them. */
static inline const uint32_t *amq__block_salts(void)
{
    static const uint32_t salts[AMQ__BLOCK_MAX_HASHES] = {
        0x428a2f99U, 0x71374491U, 0xb5c0fbcfU, 0xe9b5dba5U, 0x3956c25bU, 0x59f111f1U,
        0x923f82a5U, 0xab1c5ed5U, 0xd807aa99U, 0x12835b01U, 0x243185bfU, 0x550c7dc3U,
        0x72be5d75U, 0x80deb1ffU, 0x9bdc06a7U, 0xc19bf175U,
    };
    return salts;
}

/* Set key32's k bits in a 512-bit block; how many were clear before (0:
 * the key was maybe present already). Scalar: two of the bits may share a
 * word, and one counts once. */
static inline unsigned amq__block_add(uint32_t *block, uint32_t key32, uint32_t k)
{
    const uint32_t *salts = amq__block_salts();
    unsigned set = 0;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t position = (key32 * salts[i]) >> 23, bit = 1U << (position & 31);
        set += (block[position >> 5] & bit) == 0;
        block[position >> 5] |= bit;
    }
    return set;
}

/* Whether key32's k bits are set in a 512-bit block. Reads all k without
 * branching: they are in one cache line, which the first read brings in. */
static inline bool amq__block_test(const uint32_t *block, uint32_t key32, uint32_t k)
{
    const uint32_t *salts = amq__block_salts();
    uint32_t all = 1;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t position = (key32 * salts[i]) >> 23;
        all &= block[position >> 5] >> (position & 31);
    }
    return all & 1;
}

#if AMQ__BLOCK_HAVE_AVX2
/* amq__block_test with AVX2, for a 64-byte aligned block: positions
 * j .. j + 7 of key32 in one vector, each lane's word picked out of the
 * block's sixteen by two in-register permutes (one per half of the block)
 * and a blend on bit 3 of the word's index, lanes at or past k left out,
 * and one 256-bit test of the eight bits. */
__attribute__((target("avx2"))) static inline bool amq__block_test_avx2(const uint32_t *block,
                                                                        uint32_t key32, uint32_t k)
{
    const uint32_t *salt = amq__block_salts();
    const __m256i *halves = (const __m256i *)(const void *)block;
    const __m256i low = _mm256_load_si256(halves), high = _mm256_load_si256(halves + 1);
    const __m256i keys = _mm256_set1_epi32((int)key32), ones = _mm256_set1_epi32(1);
    const __m256i lane_numbers = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i missing = _mm256_setzero_si256();
    for (uint32_t first = 0; first < k; first += 8) {
        __m256i salts = _mm256_loadu_si256((const __m256i *)(const void *)(salt + first));
        __m256i positions = _mm256_srli_epi32(_mm256_mullo_epi32(keys, salts), 23);
        __m256i word_indexes = _mm256_srli_epi32(positions, 5);
        __m256i from_low = _mm256_permutevar8x32_epi32(low, word_indexes);
        __m256i from_high = _mm256_permutevar8x32_epi32(high, word_indexes);
        __m256i words = _mm256_castps_si256(
            _mm256_blendv_ps(_mm256_castsi256_ps(from_low), _mm256_castsi256_ps(from_high),
                             _mm256_castsi256_ps(_mm256_slli_epi32(word_indexes, 28))));
        __m256i bits = _mm256_sllv_epi32(ones, _mm256_and_si256(positions, _mm256_set1_epi32(31)));
        __m256i in_use = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(k - first)), lane_numbers);
        missing =
            _mm256_or_si256(missing, _mm256_andnot_si256(words, _mm256_and_si256(bits, in_use)));
    }
    return _mm256_testz_si256(missing, missing);
}
#endif

#endif /* AMQ_BLOCK_KERNEL_H */
