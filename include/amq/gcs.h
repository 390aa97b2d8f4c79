/*
 * amq/gcs.h - Golomb-coded sets: a static filter close to the space minimum.
 *
 * A Golomb-coded set (GCS) hashes its N distinct keys into [0, N·M), sorts
 * the values and stores the gaps between them with a Golomb (or Rice) code.
 * An absent key's value hits a stored one with chance about 1/M, and the set
 * takes about log2(M) + 1.5 bits per key, where a Bloom filter of the same
 * rate takes 1.44·log2(M). Choose it for a set known in advance (it cannot
 * take keys after it is built, nor remove any) when size matters most: to
 * ship or store, to keep many of them, to answer batches of keys. A query
 * decodes part of the bit stream, so it is slower than a Bloom or cuckoo
 * filter's few memory accesses; a seek index of S entries bounds the part
 * (about N/S codes), for some bits more.
 *
 *   FPR     d/(N·M) per absent key, d the distinct stored values (d ≤ N;
 *           two keys whose values collide are both kept, as a zero gap):
 *           about 1/M.
 *   size    the stream: about log2(M) + 1.5 bits per key with the divisor
 *           that minimizes it, log2(M) + 1.58 with the Rice code P = log2 M;
 *           plus the index: S entries of a few dozen bits.
 *   compat  hash=md5 reproduces the worked example of the article "Golomb-
 *           coded sets: smaller than Bloom filters"; SipHash with M = 784931,
 *           P = 19 (amq_gcs_params_bip158) gives BIP158's basic block filters,
 *           byte for byte (amq_gcs_bip158_serialize, amq_gcs_from_bip158).
 *
 * The algorithm, the stream and the index are explained at the top of
 * src/gcs/gcs.c; docs/GCS.md says how to choose the parameters.
 *
 * Thread-safety: no query changes a filter (the batch query's work space is
 * the caller's stack or its own allocation), so any number of threads may
 * make the calls that take a const filter on one filter at once. The one
 * call that changes a filter, amq_gcs_merge, replaces into's stream and
 * needs exclusive access to into (other is only read); amq_gcs_free and
 * amq_gcs_wrap need every other call on the filter to have returned.
 */
#ifndef AMQ_GCS_H
#define AMQ_GCS_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * amq_info details of a gcs filter (amq_info_get), in this order:
 *   range             number  M: hashes are reduced to [0, n x M)
 *   universe          number  n x M, the values' range
 *   code              word    "rice" (a power-of-two divisor) or "golomb"
 *   rice_bits         number  log2 of the divisor (only when code is rice)
 *   divisor           number  the Golomb divisor
 *   distinct_values   number  the values stored (keys less collisions)
 *   stream_bits       number  the bits of the coded stream
 *   layout            word    "bucketed" or "continuous"
 *   buckets           number  buckets of the index (bucketed only)
 *   bucket_keys       number  keys a bucket is sized for (bucketed only)
 *   index_block       number  buckets per index block (bucketed only)
 *   index_entries     number  entries of the seek index (continuous only)
 *   index_bytes       number  the bytes of the index
 *   segments          number  stream segments (one unless merged or huge)
 *   query_codes       number  codes a query decodes, on average
 *   alt_layout_bits   number  bits per key the other layout would take
 *   alt_layout_codes  number  codes a query would decode in the other layout
 */
/** A Golomb-coded set; opaque. */
typedef struct amq_gcs amq_gcs;

/** The false-positive rate asked for when none is given: 1/1024 (M = 2^10). */
#define AMQ_GCS_DEFAULT_FPR (1.0 / 1024)
/** Keys per bucket of the bucketed layout by default (a bucket is this
 *  many times M values wide). */
#define AMQ_GCS_DEFAULT_BUCKET_KEYS 24
/** Buckets per block of the bucketed layout's offset index by default. */
#define AMQ_GCS_DEFAULT_BLOCK_BUCKETS 16
/** amq_gcs_params.index_entries: no seek index; queries decode from the start. */
#define AMQ_GCS_NO_INDEX UINT64_MAX
/** Codes per index entry by default: S = floor(N / this) entries (none
 *  below 128 keys). */
#define AMQ_GCS_DEFAULT_KEYS_PER_ENTRY 128
/** The most segments a union may hold (see amq_gcs_merge). */
#define AMQ_GCS_MAX_SEGMENTS 64
/** BIP158's basic filter: M and the Rice parameter P. */
#define AMQ_GCS_BIP158_RANGE     784931
#define AMQ_GCS_BIP158_RICE_BITS 19

/** How the gaps are coded. */
typedef enum amq_gcs_code {
    /** The bucketed layout: Rice with the best P for M (as BEST_RICE).
     *  The continuous one: Rice with P = log2 M when M is a power of two,
     *  else Golomb with D = M. */
    AMQ_GCS_CODE_AUTO = 0,
    /** Rice with rice_bits = P: divisor 2^P, P-bit remainders. */
    AMQ_GCS_CODE_RICE = 1,
    /** Golomb with any divisor D: truncated-binary remainders. */
    AMQ_GCS_CODE_GOLOMB = 2,
    /** Rice with the P that minimizes the expected size for M. */
    AMQ_GCS_CODE_BEST_RICE = 3,
    /** Golomb with the divisor that minimizes the expected size for M
     *  (the Gallager-van Voorhis optimum, about 0.69·M). */
    AMQ_GCS_CODE_BEST_GOLOMB = 4
} amq_gcs_code;

/** How the coded values are laid out (src/gcs/gcs.c explains both). */
typedef enum amq_gcs_layout {
    /** Bucketed when it can be (a Rice code, P <= 56, a hash other than
     *  MD5, no seek index asked for), else continuous. */
    AMQ_GCS_LAYOUT_AUTO = 0,
    /** The values split by range into buckets of about bucket_keys keys,
     *  each bucket's gaps restarted from zero, with a compact index of
     *  where each bucket begins: a query decodes one bucket. Needs a Rice
     *  code (a power-of-two divisor, P <= 56). */
    AMQ_GCS_LAYOUT_BUCKETED = 1,
    /** One run of gaps with a sampled seek index: the article's and
     *  BIP158's stream. */
    AMQ_GCS_LAYOUT_CONTINUOUS = 2
} amq_gcs_layout;

/** How to build a GCS. A zeroed struct asks for every default. */
typedef struct amq_gcs_params {
    size_t struct_size;     /**< the size of the layout the caller was built
                                 against: set by amq_gcs_params_init; 0 = the first
                                 layout (docs/CONVENTIONS.md, "Growth") */
    amq_hasher hasher;      /**< key hash; all-zero = XXH3 with seed 0. MD5:
                                 the value is (digest bytes 12..15 big-endian)
                                 % N·M; XXH3, SipHash: multiply-high. */
    double fpr;             /**< p: picks M = 1/p rounded to the nearest power
                                 of two (in log scale) when range is 0;
                                 0 = AMQ_GCS_DEFAULT_FPR */
    uint64_t range;         /**< M >= 2: values live in [0, N·M); 0 = from fpr */
    amq_gcs_code code;      /**< how gaps are coded (AUTO: from M) */
    uint32_t rice_bits;     /**< P, 0..63, for AMQ_GCS_CODE_RICE */
    uint64_t divisor;       /**< D >= 1, for AMQ_GCS_CODE_GOLOMB */
    uint64_t index_entries; /**< S: seek-index entries of the continuous
                                 layout; 0 = floor(N / 128);
                                 AMQ_GCS_NO_INDEX = none; at most N */
    amq_gcs_layout layout;  /**< the layout (AUTO: bucketed if it can be) */
    uint32_t bucket_keys;   /**< bucketed: keys per bucket, 1 .. 2^20: a
                                 bucket is bucket_keys·M values wide;
                                 0 = AMQ_GCS_DEFAULT_BUCKET_KEYS */
    uint32_t block_buckets; /**< bucketed: buckets per index block, a power
                                 of two 1 .. 2^16; 0 = the default */
} amq_gcs_params;

/**
 * amq_gcs_params_init for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): the defaults in as much of it as
 * that layout holds, zeros beyond, and struct_size set.
 * @param params the struct to fill, struct_size bytes; not NULL.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_gcs_params_init_sized(amq_gcs_params *params, size_t struct_size);

/**
 * Fill params with the defaults: XXH3 with seed 0, p = 1/1024 (so M = 1024,
 * Rice with P = 10), the default index. The same as a zeroed struct.
 * @param params the struct to fill; not NULL.
 * It sets struct_size to the caller's sizeof, so the library reads the
 *   layout the caller was built against.
 * Allocates: never. Thread safety: safe.
 */
static inline void amq_gcs_params_init(amq_gcs_params *params)
{
    amq_gcs_params_init_sized(params, sizeof *params);
}

/**
 * Fill params for BIP158's basic block filter: SipHash-2-4 with key,
 * M = 784931, Rice with P = 19, the default index.
 * @param params the struct to fill, of struct_size bytes; not NULL.
 * @param struct_size the caller's sizeof, as amq_gcs_params_init_sized.
 * @param key the 16 SipHash key bytes (the first 16 bytes of the block hash
 *   in internal byte order); copied; not NULL.
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_gcs_params_bip158_sized(amq_gcs_params *params, size_t struct_size,
                                         const uint8_t key[16]);
/** amq_gcs_params_bip158_sized with the caller's sizeof. */
static inline void amq_gcs_params_bip158(amq_gcs_params *params, const uint8_t key[16])
{
    amq_gcs_params_bip158_sized(params, sizeof *params, key);
}

/**
 * Build a GCS from all its keys.
 *
 * Keys are hashed to 64 bits; equal hashes count once (so a key given twice
 * is one key, and N is the number of distinct hashes); the N hashes are
 * reduced to values in [0, N·M), sorted, and the gaps coded. Two distinct
 * keys whose values collide are both kept (a zero gap).
 *
 * @param out receives the filter; set to NULL on failure; not NULL.
 * @param params how to build it; NULL = the defaults.
 * @param keys count key pointers (each may be NULL when its length is 0).
 * @param lens count key lengths.
 * @param count the number of keys; 0 gives a valid empty filter.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (range below 2, fpr outside (0, 1), rice_bits
 *   above 63, divisor 0, an unknown code, an invalid hasher); AMQ_ERANGE
 *   (N·M does not fit 64 bits, or fpr so small that M would not);
 *   AMQ_ENOMEM.
 * Allocates: the filter; while building, 16 bytes per key.
 * Complexity: O(count): hashing, a radix sort, one coding pass.
 */
AMQ_API int amq_gcs_build(amq_gcs **out, const amq_gcs_params *params, const void *const *keys,
                          const size_t *lens, size_t count, amq_diag *diag);

/**
 * As amq_gcs_build, from the keys' 64-bit hashes under params' hasher
 * (amq_hash64). The array is not modified.
 * @param diag on failure, what was wrong; may be NULL.
 */
AMQ_API int amq_gcs_build_hash(amq_gcs **out, const amq_gcs_params *params, const uint64_t *hashes,
                               size_t count, amq_diag *diag);

/**
 * Make a queryable filter from a bare coded stream: count values coded as
 * params say (with count as N), then zero bits to a byte boundary - what
 * amq_gcs_stream gives, or the part of a BIP158 filter after its count.
 *
 * @param out receives the filter; set to NULL on failure; not NULL.
 * @param params the parameters the stream was made with; NULL = defaults.
 * @param count N, the number of values coded.
 * @param bytes the stream; copied; may be NULL when len is 0.
 * @param len its length in bytes.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_ECORRUPT (a code cut off or not fitting 64 bits,
 *   fewer or more bytes than count codes take, nonzero padding bits);
 *   AMQ_EINVAL, AMQ_ERANGE as amq_gcs_build; AMQ_ENOMEM.
 * Untrusted input: every code is decoded and checked once.
 */
AMQ_API int amq_gcs_from_stream(amq_gcs **out, const amq_gcs_params *params, uint64_t count,
                                const uint8_t *bytes, size_t len, amq_diag *diag);

/**
 * Decode a serialized BIP158 basic filter (CompactSize N, then the stream)
 * into a queryable filter, with the block's SipHash key.
 * @param key the 16 key bytes, as for amq_gcs_params_bip158; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return as amq_gcs_from_stream; AMQ_ECORRUPT also for a missing or
 *   non-canonical CompactSize.
 */
AMQ_API int amq_gcs_from_bip158(amq_gcs **out, const uint8_t key[16], const uint8_t *bytes,
                                size_t len, amq_diag *diag);

/** Free a filter. Accepts NULL. */
AMQ_API void amq_gcs_free(amq_gcs *filter);

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
AMQ_API int amq_gcs_wrap(amq_filter **out, amq_gcs *filter, amq_diag *diag);

/**
 * The typed filter inside a generic handle (one made by amq_new,
 * amq_build, amq_load, amq_load_from_memory or amq_gcs_wrap), for the
 * typed calls' speed on a filter that was loaded. Nothing is copied.
 * @param f a handle; may be NULL.
 * @return the filter, owned by f and valid until amq_free(f); NULL when f
 *   is NULL or not of this family. A filter of a mapped file or a
 *   borrowed buffer (AMQ_LOAD_MMAP, AMQ_LOAD_BORROW) reads that memory.
 */
AMQ_API amq_gcs *amq_gcs_unwrap(amq_filter *f);

/**
 * Is the key maybe in the set? false: certainly not; true: it is, or a
 * false positive (chance about 1/M).
 * Allocates: never. Complexity: decodes about N/S codes (N without an
 *   index), once per segment.
 */
AMQ_API bool amq_gcs_contains(const amq_gcs *filter, const void *key, size_t len);

/** As amq_gcs_contains, by the key's 64-bit hash under the filter's hasher. */
AMQ_API bool amq_gcs_contains_hash(const amq_gcs *filter, uint64_t hash);

/**
 * Ask for many keys in one pass over the stream: results[i] is true when
 * keys[i] may be in the set. The same answers as amq_gcs_contains; a match
 * of every key ("match all") is every result true.
 *
 * The keys' values are sorted and merged with the stream, decoding each
 * code at most once and skipping through the index past long stretches
 * without queries.
 * @param results count entries, written; not NULL when count > 0.
 * @return AMQ_OK; AMQ_ENOMEM (results unspecified).
 * Allocates: 32 bytes per key per segment, freed before returning.
 * Complexity: O(N + count).
 */
AMQ_API int amq_gcs_contains_many(uint8_t *results, const amq_gcs *filter, const void *const *keys,
                                  const size_t *lens, size_t count);

/** As amq_gcs_contains_many, by the keys' 64-bit hashes. */
AMQ_API int amq_gcs_contains_many_hash(uint8_t *results, const amq_gcs *filter,
                                       const uint64_t *hashes, size_t count);

/**
 * BIP158's "match any": may any of the keys be in the set? Stops at the
 * first that may.
 * @return 1 yes, 0 none (also for count 0), AMQ_ENOMEM.
 * Allocates, Complexity: as amq_gcs_contains_many.
 */
AMQ_API int amq_gcs_contains_any(const amq_gcs *filter, const void *const *keys, const size_t *lens,
                                 size_t count);

/** As amq_gcs_contains_any, by the keys' 64-bit hashes. */
AMQ_API int amq_gcs_contains_any_hash(const amq_gcs *filter, const uint64_t *hashes, size_t count);

/**
 * The union of two sets: a filter that answers "maybe" for every key either
 * does.
 *
 * The values of a set are reduced with its own N, so a union cannot simply
 * merge the two value lists into one set of N_a + N_b values: a key of a
 * would need its value for the new N, which only its hash gives. The union
 * keeps each part as a segment instead: one stream holds a's values, then
 * b's shifted past a's range; a query asks each segment with that
 * segment's own N. Nothing is lost (no false negatives), the size is the
 * sum of the parts', and the FPR is about the sum of theirs
 * (1 - (1 - fpr_a)(1 - fpr_b)); queries decode once per segment. A key in
 * both sets is in both segments. Unions of unions concatenate their
 * segments, up to AMQ_GCS_MAX_SEGMENTS. The index gets S_a + S_b entries.
 *
 * Like every merge in amq, it is in place: into becomes the union, and on
 * failure into is unchanged.
 * @param into a set, replaced by the union; not NULL.
 * @param other another set (or into itself); not NULL; unchanged.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE (M, divisor or hasher differ: the
 *   message says which); AMQ_ERANGE (more than AMQ_GCS_MAX_SEGMENTS
 *   segments, or the combined range passes 2^64); AMQ_ENOMEM.
 * Allocates: the union's stream (into's old one is freed). Complexity:
 * O(N_into + N_other).
 */
AMQ_API int amq_gcs_merge(amq_gcs *into, const amq_gcs *other, amq_diag *diag);

/**
 * Serialize as BIP158 does: N as a Bitcoin CompactSize, then the stream
 * padded to a byte. Only a filter of one segment (not a union) has this form.
 * @param out receives a buffer the caller frees with amq_buffer_free (NULL
 *   for len 0, which never happens: N = 0 is the byte 00); not NULL.
 * @param len receives the length; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EUNSUPPORTED (a union of several segments);
 *   AMQ_ENOMEM.
 */
AMQ_API int amq_gcs_bip158_serialize(uint8_t **out, size_t *len, const amq_gcs *filter,
                                     amq_diag *diag);

/**
 * The coded stream itself: ceil(bit_count / 8) bytes, the codes of every
 * value in order, then zero bits to a byte boundary.
 * @param bytes receives a pointer into the filter (valid while it lives; an
 *   mmap'd filter's points into the file); not NULL.
 * @param bit_count receives the bits of the codes, without the padding;
 *   may be NULL.
 */
AMQ_API void amq_gcs_stream(const uint8_t **bytes, uint64_t *bit_count, const amq_gcs *filter);

/* ------------------------------------------------------------------------ */
/* Experimental tier (docs/CONVENTIONS.md, "Tiers"): declared only when    */
/* AMQ_EXPERIMENTAL is defined before the include, exported, and free to   */
/* change or go in any release.                                            */
/* ------------------------------------------------------------------------ */
#ifdef AMQ_EXPERIMENTAL

/** N: the values held (distinct key hashes; a union sums its parts'). */
AMQ_API uint64_t amq_gcs_keys(const amq_gcs *filter);

/** Distinct values held: N less the collisions (zero gaps). */
AMQ_API uint64_t amq_gcs_distinct_values(const amq_gcs *filter);

/** M, the range multiplier. */
AMQ_API uint64_t amq_gcs_range(const amq_gcs *filter);

/** The universe N·M the values live in (a union: the sum over its segments). */
AMQ_API uint64_t amq_gcs_universe(const amq_gcs *filter);

/** D, the Golomb divisor (2^P for a Rice code). */
AMQ_API uint64_t amq_gcs_divisor(const amq_gcs *filter);

/** P when the divisor is a power of two (a Rice code), else -1. */
AMQ_API int amq_gcs_rice_bits(const amq_gcs *filter);

/** S, the seek-index entries (0: none). */
AMQ_API uint64_t amq_gcs_index_entries(const amq_gcs *filter);

/** Bits of the codes in the stream, without the padding. */
AMQ_API uint64_t amq_gcs_stream_bits(const amq_gcs *filter);

/** Bytes of the stream: ceil(stream bits / 8). */
AMQ_API uint64_t amq_gcs_stream_bytes(const amq_gcs *filter);

/** Bytes of the seek index's packed entries. */
AMQ_API uint64_t amq_gcs_index_bytes(const amq_gcs *filter);

/** Bytes of the filter's data: stream and index. */
AMQ_API uint64_t amq_gcs_memory_bytes(const amq_gcs *filter);

/** Segments: 1 for a built filter (0 when empty), more for a union. */
AMQ_API size_t amq_gcs_segments(const amq_gcs *filter);

/**
 * The FPR of an absent key: for one segment d/(N·M), d its distinct values
 * (d/2^32 for MD5 when N·M exceeds 2^32: its values come from 32 bits);
 * over segments 1 - the product of (1 - each).
 */
AMQ_API double amq_gcs_expected_fpr(const amq_gcs *filter);

/** The hasher keys are hashed with. */
AMQ_API const amq_hasher *amq_gcs_hasher(const amq_gcs *filter);

/**
 * The expected length in bits of one gap's code with divisor D when the
 * gaps are those of values spread over N·M: geometric, P(gap = g) =
 * (1 - θ)θ^g with θ = e^(-1/M). It is 1 + E[q] + the expected remainder
 * length, with E[q] = θ^D / (1 - θ^D), b = ceil(log2 D), u = 2^b - D and
 * E[remainder] = b - (1 - θ^u) / (1 - θ^D).
 * @param range M >= 2.
 * @param divisor D >= 1.
 * @return the bits, or 0 for an argument out of range.
 */
AMQ_API double amq_gcs_expected_code_bits(uint64_t range, uint64_t divisor);

/**
 * The Golomb divisor that minimizes the expected size for M (Gallager and
 * van Voorhis, 1975): the smallest D with θ^D + θ^(D+1) <= 1, θ = e^(-1/M),
 * i.e. D = ceil(M·ln(1 + θ)), about 0.69·M.
 * @param range M >= 2.
 * @return D, or 0 for M < 2.
 */
AMQ_API uint64_t amq_gcs_best_divisor(uint64_t range);

/**
 * The Rice parameter P (0..63) that minimizes amq_gcs_expected_code_bits
 * for M: 2^P is near M / 1.5.
 * @param range M >= 2.
 * @return P, or 0 for M < 2.
 */
AMQ_API uint32_t amq_gcs_best_rice_bits(uint64_t range);

#endif /* AMQ_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif /* AMQ_GCS_H */
