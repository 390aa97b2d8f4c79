/*
 * amq/hfb.h - hash-free Bloom banks: a static filter over 128-bit IDs that
 * are already uniformly random (MD5 digests of document paths, the output of
 * any collision-resistant hash), queried without hashing them again.
 *
 * A bank is a bit array of 2^len positions indexed by a slice of len bits of
 * the ID; a filter is a few banks over disjoint slices, asked in turn: an ID
 * is rejected by the first bank whose bit is 0. The build picks len, fills a
 * bank for every slice, and keeps the emptiest banks until the product of
 * their fill ratios - the false-positive rate for random IDs - reaches the
 * target. Banks are stored Rice-coded when sparse, as raw bits when dense.
 *
 * Choose it for sets of random document IDs that are built once and asked
 * many times, notably to weed out candidate documents in a search engine
 * (amq_hfb_select_hash). Never for arbitrary keys: an ID's bits ARE the hash,
 * so IDs that are not random (counters, timestamps, UUIDs with fixed
 * version bits in a sliced range) fill some banks unevenly and the FPR is
 * not what the build promised. The build measures this and flags such a set
 * (amq_hfb_nonrandom); AMQ_HFB_IDS_MD5 hashes arbitrary keys into IDs first.
 *
 *   FPR     the product of the kept banks' fill ratios, for random absent
 *           IDs (amq_hfb_expected_fpr): at most the target.
 *   size    stored: a Rice-coded bank costs about log2(1/fill) + 1.6 bits
 *           per ID, so one bank at fill p is near a Golomb-coded set's size;
 *           in memory each bank is 2^len bits.
 *   static  no add, remove or merge: build again from the whole set.
 *
 * An ID is 16 bytes read as two little-endian 64-bit words, bytes 0..7 the
 * low word (bits 0..63) and bytes 8..15 the high word (bits 64..127). Slice
 * (start, len) is bits start .. start + len - 1, and may cross bit 64.
 *
 * Thread safety: a filter is never modified after it is built (no add,
 * remove or merge, and no query changes anything), so any number of threads
 * may make any call on it at once but amq_hfb_free and amq_hfb_wrap, which
 * need every other call on it to have returned.
 */
#ifndef AMQ_HFB_H
#define AMQ_HFB_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * amq_info details of an hfb filter (amq_info_get), in this order (I is a
 * bank's number, from 0, for the first banks_listed banks):
 *   ids                 word    "raw" (16-byte IDs) or "md5" (keys hashed)
 *   bank_bits           number  the bits of each bank's bitmap
 *   banks               number  the banks a query reads
 *   banks_total         number  the slices stored (banks a query may pick)
 *   stored_bits_per_id  number  the stored bits over the IDs
 *   random_fill         number  the fill a bank of random IDs would have
 *   deviation           number  how far the fill is from random_fill
 *   warning             word    "ids look non-random" (only then)
 *   banks_listed        number  the banks described one by one below
 *   bankI_slice         word    "START+LEN": the ID bits the bank reads
 *   bankI_fill          number  the fraction of the bank's bits set
 *   bankI_stored_bits   number  the bits the bank is stored in
 *   bankI_encoding      word    "raw" or "golomb"
 */
/** A hash-free Bloom bank filter; opaque. */
typedef struct amq_hfb amq_hfb;

/** Bytes in an ID. */
#define AMQ_HFB_ID_BYTES 16
/** The widest bank: 2^32 bits (512 MiB in memory). */
#define AMQ_HFB_MAX_BANK_BITS 32
/** The most banks a filter may have: 128 slices of one bit. */
#define AMQ_HFB_MAX_BANKS 128
/** The target false-positive rate unless one is given. */
#define AMQ_HFB_DEFAULT_FPR 0.01
/** A bank whose weight is further than this many standard deviations (see
 *  amq_hfb_deviation) from what random IDs give marks the set non-random. */
#define AMQ_HFB_NONRANDOM_DEVIATION 6.0

/** What a filter's IDs are. */
typedef enum amq_hfb_ids {
    AMQ_HFB_IDS_RAW = 0, /**< the caller's own 16-byte random IDs */
    AMQ_HFB_IDS_MD5 = 1  /**< MD5 digests of keys: keys of any length are hashed into IDs */
} amq_hfb_ids;

/** How a bank is stored in a file. */
typedef enum amq_hfb_encoding {
    AMQ_HFB_RAW = 0,   /**< the 2^len bits as they are */
    AMQ_HFB_GOLOMB = 1 /**< the gaps between set positions, Golomb-Rice coded
                            (divisor 2^rice_bits) */
} amq_hfb_encoding;

/** How to build a filter. Fields left 0 take the default named. */
typedef struct amq_hfb_params {
    size_t struct_size; /**< the size of the layout the caller was built
                             against: set by amq_hfb_params_init; 0 = the first
                             layout (docs/CONVENTIONS.md, "Growth") */
    double fpr;         /**< target p in (0, 1) for random absent IDs; 0 = 0.01 */
    uint32_t bank_bits; /**< len, 1..32; 0 = the len whose banks are expected to
                             take the least stored space for p while taking
                             at most 1.5 times that in memory
                             (amq_hfb_choose_bank_bits) */
    amq_hfb_ids ids;    /**< what the IDs are; recorded in the filter so that
                             amq_hfb_contains knows whether to hash */
} amq_hfb_params;

/**
 * amq_hfb_params_init for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): the defaults in as much of it as
 * that layout holds, zeros beyond, and struct_size set.
 * @param params the struct to fill, struct_size bytes; not NULL.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_hfb_params_init_sized(amq_hfb_params *params, size_t struct_size);

/**
 * Fill params with every default: all fields 0 (each field's comment says
 * what 0 means). A zeroed struct means the same; this call keeps meaning
 * it when fields are added.
 * @param params the struct to fill; not NULL.
 * It sets struct_size to the caller's sizeof, so the library reads the
 *   layout the caller was built against.
 * Allocates: never. Thread safety: safe.
 */
static inline void amq_hfb_params_init(amq_hfb_params *params)
{
    amq_hfb_params_init_sized(params, sizeof *params);
}

/** One kept bank, as amq_hfb_bank_get describes it. */
typedef struct amq_hfb_bank {
    uint32_t start;            /**< the slice's first bit, 0..127 */
    uint32_t len;              /**< the slice's width: the bank has 2^len bits */
    uint64_t weight;           /**< set positions */
    double fill;               /**< weight / 2^len: the chance a random ID passes */
    amq_hfb_encoding encoding; /**< how it is stored */
    uint32_t rice_bits;        /**< the Rice parameter (AMQ_HFB_GOLOMB), else 0 */
    uint64_t stored_bits;      /**< bits of its stored form: 2^len raw, the code's
                                    length Rice-coded */
} amq_hfb_bank;

/**
 * Build a filter from count IDs of 16 bytes each, back to back in ids.
 *
 * Duplicates count once. The IDs are copied and sorted; the caller's array is
 * not changed. With bank_bits 0 the len expected to give the smallest stored
 * filter for p within 1.5 times that in memory is used (and, should these IDs need more banks than
 * their slices offer, the next wider len that reaches p).
 *
 * @param out receives the filter; set to NULL on failure. Not NULL.
 * @param params how to build; not NULL.
 * @param ids count * 16 bytes; may be NULL when count is 0.
 * @param count the number of IDs (0 gives a filter that rejects every ID).
 * @param diag receives a message on failure; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (fpr outside (0, 1) and not 0, bank_bits above
 *   32, an unknown ids kind); AMQ_ERANGE (no set of banks of that len reaches
 *   p for these IDs: the message gives the best rate they reach and a
 *   bank_bits that would reach p); AMQ_ENOMEM.
 * Allocates: the banks, 2^len bits each; while building, 32 bytes per ID and
 *   one more bank. Complexity: O(count) expected, plus one pass over the IDs
 *   per slice.
 */
AMQ_API int amq_hfb_build_hash(amq_hfb **out, const amq_hfb_params *params, const uint8_t *ids,
                               size_t count, amq_diag *diag);

/**
 * Build a filter from keys: with params->ids AMQ_HFB_IDS_MD5 each key, of
 * any length, is hashed into its ID (its MD5 digest); with AMQ_HFB_IDS_RAW
 * each key must be exactly 16 bytes and is the ID.
 *
 * @param keys count key pointers (each may be NULL when its length is 0).
 * @param lens count key lengths.
 * @param diag on failure, what was wrong; may be NULL.
 * @return as amq_hfb_build_hash; AMQ_EINVAL also for a raw key that is not 16
 *   bytes (the message names its index and length).
 */
AMQ_API int amq_hfb_build(amq_hfb **out, const amq_hfb_params *params, const void *const *keys,
                          const size_t *lens, size_t count, amq_diag *diag);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_hfb_free(amq_hfb *filter);

/**
 * Wrap a filter in a generic handle, to save it (amq_save,
 * amq_save_to_memory), merge it or pass it wherever an amq_filter is
 * taken. The handle takes the filter over: amq_free frees both, and the
 * filter must not be freed on its own; the typed calls still work on it
 * while the handle lives. Nothing is copied.
 * @param out receives the handle; NULL on failure; not NULL.
 * @param filter the filter; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (a NULL argument); AMQ_ENOMEM (the filter
 *   is then still the caller's).
 * Allocates: the handle. Thread safety: needs exclusive access to filter.
 */
AMQ_API int amq_hfb_wrap(amq_filter **out, amq_hfb *filter, amq_diag *diag);

/**
 * The typed filter inside a generic handle (one made by amq_new,
 * amq_build, amq_load, amq_load_from_memory or amq_hfb_wrap), for the
 * typed calls' speed on a filter that was loaded. Nothing is copied.
 * @param f a handle; may be NULL.
 * @return the filter, owned by f and valid until amq_free(f); NULL when f
 *   is NULL or not of this family. A filter of a mapped file or a
 *   borrowed buffer (AMQ_LOAD_MMAP, AMQ_LOAD_BORROW) reads that memory.
 */
AMQ_API amq_hfb *amq_hfb_unwrap(amq_filter *f);

/**
 * Is the ID maybe in the set? false: certainly not; true: in it, or a false
 * positive. The ID is used as it is, whatever the filter's ids kind.
 * @param filter not NULL.
 * @param id 16 bytes; not NULL.
 * Allocates: never. Complexity: one bit per bank, stopping at the first 0.
 */
AMQ_API bool amq_hfb_contains_hash(const amq_hfb *filter, const uint8_t id[16]);

/**
 * Ask for a key: a filter of MD5 IDs hashes it (any length) and asks for its
 * digest; a filter of raw IDs takes it as the ID.
 * It returns int, not bool as the other typed queries do, because it can
 * refuse its argument: a key of a raw-ID filter must be an ID.
 * @return 1 maybe present, 0 certainly absent; AMQ_EINVAL when the filter
 *   holds raw IDs and len is not 16.
 * Allocates: never.
 */
AMQ_API int amq_hfb_contains(const amq_hfb *filter, const void *key, size_t len);

/**
 * Ask for many keys at once: results[i] becomes the answer of
 * amq_hfb_contains for keys[i], through the prefetching batch of
 * amq_hfb_contains_many_hash (the keys' IDs are gathered 256 at a time,
 * hashed first for a filter of MD5 IDs).
 * @param results count bytes, written; may be NULL when count is 0.
 * @param filter the filter; not NULL.
 * @param keys count key pointers (each may be NULL if its length is 0).
 * @param lens count key lengths.
 * @param count the number of keys.
 * @return AMQ_OK; AMQ_EINVAL when the filter holds raw IDs and a key is
 *   not 16 bytes (results then unspecified), or for a NULL argument with
 *   count > 0.
 * Allocates: never. Thread safety: safe with other readers.
 */
AMQ_API int amq_hfb_contains_many(uint8_t *results, const amq_hfb *filter, const void *const *keys,
                                  const size_t *lens, size_t count);

/**
 * Ask for count IDs (16 bytes each, back to back): results[i] is 1 when ID i
 * is maybe present, else 0 - the answers of amq_hfb_contains_hash, faster for
 * many IDs: the first bank's word of the ID a fixed distance ahead is
 * prefetched, so the cache misses of several IDs overlap (most absent IDs
 * are rejected by the first bank).
 * @param results count bytes; may be NULL when count is 0.
 * @param filter the filter; not NULL.
 * @param ids count * 16 bytes; may be NULL when count is 0.
 * @param count the number of IDs.
 * @return AMQ_OK; AMQ_EINVAL for a NULL argument with count > 0.
 * Allocates: never. Thread safety: safe with other readers.
 */
AMQ_API int amq_hfb_contains_many_hash(uint8_t *results, const amq_hfb *filter, const uint8_t *ids,
                                       size_t count);

/**
 * Keep the IDs that may be in the set: copy every ID of ids (count, 16 bytes
 * each) that amq_hfb_contains_hash accepts to kept, in their order, and return
 * how many there are. This is the candidate filter of a search engine: ask a
 * candidate list against one filter after another, shrinking it in place.
 * @param kept room for count IDs; may be ids itself (the list shrinks in
 *   place), otherwise must not overlap it.
 * @return the number of IDs written to kept.
 * Allocates: never. Prefetches as amq_hfb_contains_many_hash.
 */
AMQ_API size_t amq_hfb_select_hash(uint8_t *kept, const amq_hfb *filter, const uint8_t *ids,
                                   size_t count);

/* ------------------------------------------------------------------------ */
/* Experimental tier (docs/CONVENTIONS.md, "Tiers"): declared only when    */
/* AMQ_EXPERIMENTAL is defined before the include, exported, and free to   */
/* change or go in any release.                                            */
/* ------------------------------------------------------------------------ */
#ifdef AMQ_EXPERIMENTAL

/** What the filter's IDs are (AMQ_HFB_IDS_RAW or AMQ_HFB_IDS_MD5). */
AMQ_API amq_hfb_ids amq_hfb_id_kind(const amq_hfb *filter);

/** Distinct IDs the filter was built from. */
AMQ_API uint64_t amq_hfb_keys(const amq_hfb *filter);

/** len: every bank has 2^len bits. */
AMQ_API uint32_t amq_hfb_bank_bits(const amq_hfb *filter);

/** Banks kept (and asked, in order). */
AMQ_API size_t amq_hfb_bank_count(const amq_hfb *filter);

/** The slices of width len the 128-bit ID offers: floor(128 / len). */
AMQ_API size_t amq_hfb_slice_count(const amq_hfb *filter);

/**
 * Describe kept bank i (0 = the first asked).
 * @param out filled on success; not NULL.
 * @return AMQ_OK; AMQ_EINVAL when i is not below amq_hfb_bank_count.
 */
AMQ_API int amq_hfb_bank_get(amq_hfb_bank *out, const amq_hfb *filter, size_t i);

/** The target rate asked for. */
AMQ_API double amq_hfb_target_fpr(const amq_hfb *filter);

/** The product of the kept banks' fill ratios: the false-positive rate for
 *  random absent IDs. */
AMQ_API double amq_hfb_expected_fpr(const amq_hfb *filter);

/** Bytes of the banks in memory: 2^len bits each, in whole 64-bit words. */
AMQ_API uint64_t amq_hfb_memory_bytes(const amq_hfb *filter);

/** Bytes of the banks as saved (the container's payload). */
AMQ_API uint64_t amq_hfb_stored_bytes(const amq_hfb *filter);

/**
 * How far the banks' weights are from what random IDs give, at the build:
 * over every slice, the largest |weight - E| / (sigma + 0.5), where E and
 * sigma are the mean and standard deviation of the number of distinct
 * positions n random IDs fill in 2^len (the 0.5 keeps a bank that random IDs
 * fill almost surely exactly from being judged by a tiny sigma).
 */
AMQ_API double amq_hfb_deviation(const amq_hfb *filter);

/** True when amq_hfb_deviation exceeds AMQ_HFB_NONRANDOM_DEVIATION: the IDs
 *  do not look random, and the FPR may be far from amq_hfb_expected_fpr. */
AMQ_API bool amq_hfb_nonrandom(const amq_hfb *filter);

/**
 * The stored bits to expect for n random IDs in banks of 2^bank_bits bits at
 * target fpr: the banks needed (fill f = 1 - (1 - 2^-len)^n each, k the
 * fewest with f^k <= fpr, at most floor(128 / len)) times the expected
 * stored size of one (the smaller of its raw bits and its Rice code at the
 * best parameter).
 * @return the bits; INFINITY when no number of such banks reaches fpr, or
 *   bank_bits is not in 1..32.
 */
AMQ_API double amq_hfb_expected_bits(uint64_t n, double fpr, uint32_t bank_bits);

/**
 * The bank_bits a build uses by default: among the lens in 1..32 whose banks
 * are expected to take at most 1.5 times their stored size in memory (the
 * 2^len bits of each bank, and its code where it is stored Rice-coded), the
 * one with the fewest expected stored bits (amq_hfb_expected_bits), the
 * narrower on a tie.
 * @return the len; 0 when none reaches fpr for n random IDs.
 */
AMQ_API uint32_t amq_hfb_choose_bank_bits(uint64_t n, double fpr);

#endif /* AMQ_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif /* AMQ_HFB_H */
