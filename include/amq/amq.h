/*
 * amq.h - approximate membership queries: the umbrella header.
 *
 * amq holds a family of filters that answer "definitely not in the set" or
 * "maybe in the set" in far less memory than the set itself: Bloom filters
 * and their relatives, cuckoo filters, Golomb-coded sets, hash-free Bloom
 * banks and binary fuse filters. Every family has a typed API in its own
 * header (bloom.h, cuckoo.h, ...) for full speed; this header holds what they
 * share:
 *
 *   - version macros and amq_version();
 *   - the status codes every call returns, and amq_strerror();
 *   - diagnostics (amq_diag) for calls that can say more than a code;
 *   - the allocator every allocation goes through (amq_set_allocator), and
 *     amq_buffer_free for the buffers the library hands out;
 *   - the one key-hashing entry point (amq_hash64, amq_hash128);
 *   - the generic handle amq_filter, which reaches any family through a spec
 *     string such as "bloom n=1000000 p=0.01": what the command-line tool
 *     uses, and what a binding or a database module builds on;
 *   - saving and loading filters in amq's one file format (docs/FORMAT.md).
 *
 * Conventions, everywhere in amq (docs/CONVENTIONS.md has them all):
 *   - Calls return int: AMQ_OK (0) or a negative AMQ_E* code. Queries return
 *     1 (maybe present), 0 (definitely absent) or a negative code. Every
 *     call that returns a status, other than the per-key operations (add,
 *     remove, contains and their batch and _hash forms) and a few lookups,
 *     ends with an amq_diag *diag that may be NULL. The
 *     typed queries of the family headers (amq_bloom_contains, ...) return
 *     bool instead: given a valid filter they cannot fail (no allocation,
 *     no I/O, no argument to refuse), so true and false are all they say.
 *   - Out-parameters come first. Whoever calls a _new, _build or _load
 *     function frees the object with the matching _free, which accepts NULL.
 *   - No global mutable state but the allocator (amq_set_allocator), set
 *     once at start-up: distinct objects may be used from distinct
 *     threads freely. One object may be queried from many threads at once
 *     when no thread modifies it (no query changes anything); modifying
 *     calls need exclusive access. Each family header says which calls
 *     those are; the one exception is the concurrent add of the classic and
 *     blocked Bloom filters (bloom.h), which many threads may make at once.
 *   - Sizes are 64-bit: filters past 2^32 bits or keys work.
 *   - Nothing aborts on bad input: untrusted files and strings give codes.
 *   - The generic calls of this header check their pointers: a NULL where a
 *     pointer is needed gives AMQ_EINVAL (amq_filter_family gives NULL; every
 *     _free accepts NULL). The typed calls of the family headers take
 *     their pointers as a precondition ("not NULL" in their docs): they are
 *     the hot paths, and a NULL there is undefined.
 */
#ifndef AMQ_AMQ_H
#define AMQ_AMQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* AMQ_API marks the exported functions. On Windows a program linking the
 * DLL defines AMQ_DLL to import them; elsewhere every other symbol of the
 * library is hidden. */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(AMQ_BUILDING_LIBRARY)
#define AMQ_API __declspec(dllexport)
#elif defined(AMQ_DLL)
#define AMQ_API __declspec(dllimport)
#else
#define AMQ_API
#endif
#elif defined(AMQ_BUILDING_LIBRARY) && defined(__GNUC__)
#define AMQ_API __attribute__((visibility("default")))
#else
#define AMQ_API
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

#define AMQ_VERSION_MAJOR  0
#define AMQ_VERSION_MINOR  1
#define AMQ_VERSION_PATCH  0
#define AMQ_VERSION_NUMBER (AMQ_VERSION_MAJOR * 10000 + AMQ_VERSION_MINOR * 100 + AMQ_VERSION_PATCH)
#define AMQ_VERSION_STRING "0.1.0"

/**
 * Return the version of the library actually linked, as "MAJOR.MINOR.PATCH".
 *
 * Compare with AMQ_VERSION_STRING to detect a header/library mismatch.
 * @return a static string; never NULL.
 * Thread safety: safe.
 */
AMQ_API const char *amq_version(void);

/**
 * Return the linked library's version as MAJOR*10000 + MINOR*100 + PATCH.
 * @return the version number (compare with AMQ_VERSION_NUMBER).
 */
AMQ_API unsigned amq_version_number(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/** Status codes. The numeric values are pinned: they never change. */
typedef enum amq_status {
    AMQ_OK = 0,             /**< success */
    AMQ_ENOMEM = -1,        /**< an allocation failed */
    AMQ_EINVAL = -2,        /**< an argument or spec is invalid */
    AMQ_EFULL = -3,         /**< the filter cannot take another key */
    AMQ_ENOTFOUND = -4,     /**< the key (or fingerprint) is not in the filter */
    AMQ_ECORRUPT = -5,      /**< data failed validation: damaged or truncated */
    AMQ_EFORMAT = -6,       /**< not an amq file (wrong magic) */
    AMQ_EVERSION = -7,      /**< an amq file of a newer format version */
    AMQ_EIO = -8,           /**< an operating-system I/O call failed (see errno) */
    AMQ_EUNSUPPORTED = -9,  /**< the family does not support this operation */
    AMQ_ERANGE = -10,       /**< a value is out of the representable range */
    AMQ_EINCOMPATIBLE = -11 /**< filters differ in family or parameters */
} amq_status;

/**
 * Describe a status code in a short English sentence fragment.
 *
 * @param status any value; unknown values get a generic description.
 * @return a static string; never NULL.
 * Thread safety: safe.
 */
AMQ_API const char *amq_strerror(int status);

/**
 * Details of a failure, for calls that can say more than a status code: which
 * option of a spec was wrong, which check a file failed.
 *
 * Calls that take an amq_diag accept NULL for it. On failure they write a
 * NUL-terminated message; on success they leave it untouched. The message
 * has room for two paths of PATH_MAX (4096) bytes and the reason, so a
 * message that names files is never cut before its reason; one that would
 * still not fit ends in "...".
 */
#define AMQ_DIAG_MESSAGE_MAX 8448

typedef struct amq_diag {
    char message[AMQ_DIAG_MESSAGE_MAX]; /**< what is wrong, e.g. "option 'p': 1.5 is not in
                                             (0, 1)" */
    uint64_t offset;                    /**< byte offset in the input where known, else 0 */
} amq_diag;

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * The functions every allocation of the library goes through, for a host
 * that must account for its memory: a database module whose server limits
 * and reports what each value holds (the Redis module hands amq the
 * server's allocator, so that maxmemory sees every byte of a filter).
 *
 * Each function receives opaque first. The blocks alloc, calloc and
 * realloc return must be aligned for any object type, as malloc's are; the
 * library asks none of them for 0 bytes.
 */
typedef struct amq_allocator {
    /** bytes uninitialized bytes; NULL when out of memory. */
    void *(*alloc)(void *opaque, size_t bytes);
    /** count * bytes zeroed bytes; NULL when out of memory or when
     *  count * bytes overflows. */
    void *(*calloc)(void *opaque, size_t count, size_t bytes);
    /** As C's realloc: ptr (NULL, or a block of this allocator) moved or
     *  resized to bytes, its contents kept; NULL when out of memory, ptr
     *  then left as it was. */
    void *(*realloc)(void *opaque, void *ptr, size_t bytes);
    /** Give back a block of this allocator; ptr may be NULL. */
    void (*free)(void *opaque, void *ptr);
    /** Passed to every function as it is; may be NULL. */
    void *opaque;
} amq_allocator;

/**
 * Route every later allocation of the library through allocator, or, given
 * NULL, through the C library's malloc, calloc, realloc, aligned_alloc and
 * free again (the default).
 *
 * Set it before any other call of the library, while no object of the
 * library exists, and change it only when none does: every object
 * (filter, bundle, bundle writer, frontier) and every buffer the library
 * hands out must be freed under the allocator that made it. Blocks the
 * library needs more strictly aligned than alloc promises (its tables on
 * 64-byte cache lines, file images) are carved out of larger blocks of
 * alloc, so the allocator sees every byte, the padding too; the tables
 * then get no huge-page alignment or hint (the host's pages are its own
 * business). The C library and OpenSSL still allocate for themselves
 * inside some calls (a directory stream while a save removes stale
 * temporary files), none of it held past the call.
 * @param allocator the four functions and their opaque pointer, copied
 *   (the struct need not outlive the call); NULL restores the default.
 * @return AMQ_OK; AMQ_EINVAL when one of the four functions is NULL (the
 *   allocator in use stays). It takes no amq_diag: an incomplete
 *   allocator is its only failure.
 * Allocates: never. Thread safety: not safe against any concurrent call of
 * the library, which every allocation reads: call it at start-up, before
 * other threads use the library. The one global setting of the library.
 */
AMQ_API int amq_set_allocator(const amq_allocator *allocator);

/**
 * Free a buffer the library allocated for the caller: the images of
 * amq_save_to_memory, the data of amq_export and amq_gcs_bip158_serialize.
 * It goes back to the allocator in use (amq_set_allocator), which must be
 * the one that made it. With the default that is free(); under a host's
 * allocator the buffer is one of its alloc's own blocks, never carved
 * out of a larger one, so the host's free takes it too.
 * @param buffer the buffer; may be NULL (nothing happens).
 * Thread safety: safe.
 */
AMQ_API void amq_buffer_free(void *buffer);

/* ------------------------------------------------------------------------ */
/* Hashing                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Key hash functions. A filter stores the kind and its seed or key, and every
 * family hashes keys through amq_hash64 / amq_hash128 so that a caller can
 * hash once (with the filter's hasher) and ask many filters through the
 * families' ..._hash calls.
 */
typedef enum amq_hash_kind {
    AMQ_HASH_XXH3 = 1,   /**< XXH3 (64/128-bit) with a 64-bit seed: the default */
    AMQ_HASH_MD5 = 2,    /**< MD5 digest, for Golomb-coded-set compatibility */
    AMQ_HASH_SIPHASH = 3 /**< SipHash-2-4 with a 128-bit key (BIP158) */
} amq_hash_kind;

/** A 128-bit hash value. */
typedef struct amq_u128 {
    uint64_t low;  /**< the low 64 bits */
    uint64_t high; /**< the high 64 bits */
} amq_u128;

/** A hash function with its seed or key: what a filter hashes keys with. */
typedef struct amq_hasher {
    amq_hash_kind kind; /**< which function */
    /** XXH3: the seed as a little-endian uint64 in bytes 0..7 (8..15 zero).
     *  SipHash: the 16-byte key (k0 = LE bytes 0..7, k1 = LE bytes 8..15).
     *  MD5: unused, all zero. */
    uint8_t key[16];
} amq_hasher;

/**
 * Set up an XXH3 hasher with a 64-bit seed.
 * @param out the hasher to fill; not NULL.
 * @param seed any value.
 */
AMQ_API void amq_hasher_xxh3(amq_hasher *out, uint64_t seed);

/**
 * Set up a SipHash-2-4 hasher with a 16-byte key.
 * @param out the hasher to fill; not NULL.
 * @param key 16 bytes, copied; not NULL.
 */
AMQ_API void amq_hasher_siphash(amq_hasher *out, const uint8_t key[16]);

/**
 * Set up an MD5 hasher.
 * @param out the hasher to fill; not NULL.
 */
AMQ_API void amq_hasher_md5(amq_hasher *out);

/**
 * Set up a hasher with a secret seed or key drawn from the operating system
 * (getrandom(2), else /dev/urandom): what a spec's seed=random (XXH3) and
 * hash=siphash key=random give. Keys crafted in advance to collide in a
 * filter (docs/SECURITY.md) do not collide under a seed nobody knows; keep
 * the seed out of the attacker's sight (the filter's file holds it).
 * Filters to be merged need the same hasher: make one and give it to all.
 * @param out the hasher to fill; not NULL. Unchanged on failure.
 * @param kind AMQ_HASH_XXH3 (a 64-bit seed) or AMQ_HASH_SIPHASH (a 128-bit
 *   key; the choice against keys chosen adaptively, by an attacker who sees
 *   answers).
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (out NULL, or AMQ_HASH_MD5, which has no
 *   key); AMQ_EIO when the system gives no random bytes (errno says why).
 * Allocates: never. Thread safety: safe.
 */
AMQ_API int amq_hasher_random(amq_hasher *out, amq_hash_kind kind, amq_diag *diag);

/**
 * Check that a hasher is well formed (a known kind, unused key bytes zero).
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK, or AMQ_EINVAL.
 */
AMQ_API int amq_hasher_check(const amq_hasher *hasher, amq_diag *diag);

/**
 * Hash a key to 64 bits.
 *
 * XXH3: XXH3_64bits_withSeed. SipHash: the SipHash-2-4 64-bit output. MD5:
 * digest bytes 8..15 read as a big-endian integer (the low half of the digest
 * read as one big-endian 128-bit number; see amq_hash128).
 *
 * @param hasher a hasher from amq_hasher_*; not NULL.
 * @param key the key bytes; may be NULL when len is 0.
 * @param len the key length in bytes.
 * @return the hash.
 * Allocates: never. Thread safety: safe.
 */
AMQ_API uint64_t amq_hash64(const amq_hasher *hasher, const void *key, size_t len);

/**
 * Hash a key to 128 bits.
 *
 * XXH3: XXH3_128bits_withSeed. SipHash: SipHash-2-4 with 128-bit output (the
 * variant in the SipHash reference code; low = first output word). MD5: the
 * digest read as a big-endian 128-bit integer (high = bytes 0..7, low = bytes
 * 8..15), so digest bytes 12..15 big-endian are (low & 0xffffffff).
 *
 * @return the hash. Allocates: never. Thread safety: safe.
 */
AMQ_API amq_u128 amq_hash128(const amq_hasher *hasher, const void *key, size_t len);

/**
 * SipHash-2-4 with 64-bit output.
 * Public for a caller holding a bare SipHash key rather than a hasher (a
 * BIP158 block's key), or checking another implementation's values; equal to
 * amq_hash64 under amq_hasher_siphash with the same key.
 * @param key the 16-byte key (k0 = little-endian bytes 0..7, k1 = bytes 8..15).
 * @param msg the message; may be NULL when len is 0.
 * @param len the message length.
 * @return the 64-bit output as an integer.
 */
AMQ_API uint64_t amq_siphash24(const uint8_t key[16], const void *msg, size_t len);

/**
 * SipHash-2-4 with 128-bit output.
 * Public for the reasons amq_siphash24 is; equal to amq_hash128 under
 * amq_hasher_siphash with the same key.
 * @return the two output words (low = first, high = second).
 */
AMQ_API amq_u128 amq_siphash24_128(const uint8_t key[16], const void *msg, size_t len);

/**
 * MD5 digest of a message, computed by OpenSSL's libcrypto.
 * Public so that a program can make the 16-byte IDs of an hfb filter of raw
 * IDs (AMQ_HFB_IDS_RAW) from its keys, as AMQ_HFB_IDS_MD5 does internally.
 * @param digest receives 16 bytes; not NULL.
 */
AMQ_API void amq_md5(uint8_t digest[16], const void *msg, size_t len);

/* ------------------------------------------------------------------------ */
/* Numbers as users write them                                               */
/* ------------------------------------------------------------------------ */

/**
 * Parse a probability as the spec strings and the command line accept it:
 * "0.0001", "1e-4", "1/8192" or "0.01%". The value must lie in (0, 1).
 * Public so that a program's own options read rates as amq's specs and
 * command line do (the amq tool uses only the public headers).
 * @param out receives the value on success; not NULL.
 * @param text NUL-terminated; not NULL. Surrounding spaces are not allowed.
 * @return AMQ_OK; AMQ_EINVAL (malformed, or not in (0, 1)) with a message in
 *   *diag (may be NULL).
 */
AMQ_API int amq_parse_probability(double *out, const char *text, amq_diag *diag);

/**
 * Parse a count: a decimal integer ("1000000"), or scientific notation whose
 * value is a whole number ("1e6", "2.5e3"), in [min, max].
 * Public so that a program's own options read counts as amq's specs and
 * command line do.
 * @return AMQ_OK; AMQ_EINVAL (malformed, fractional) or AMQ_ERANGE (outside
 *   [min, max]) with a message in *diag (may be NULL).
 */
AMQ_API int amq_parse_count(uint64_t *out, const char *text, uint64_t min, uint64_t max,
                            amq_diag *diag);

/**
 * Decode hexadecimal text ("00ff0a", either case) into bytes: the SipHash
 * key of a spec, the command line's --hex keys.
 * Public so that a program reads hex keys and SipHash keys as amq's command
 * line does.
 * @param out receives text_len / 2 bytes; not NULL unless text_len is 0.
 * @param text the digits; need not be NUL-terminated.
 * @param text_len the number of digits; must be even.
 * @return AMQ_OK; AMQ_EINVAL (an odd number of digits, or a character that
 *   is not a hex digit, whose index goes to diag->offset) with a message in
 *   *diag (may be NULL).
 */
AMQ_API int amq_parse_hex(uint8_t *out, const char *text, size_t text_len, amq_diag *diag);

/* ------------------------------------------------------------------------ */
/* The generic handle                                                        */
/* ------------------------------------------------------------------------ */

/** Any filter of any family; opaque. */
typedef struct amq_filter amq_filter;

/**
 * Create an empty filter of a dynamic family from a spec string.
 *
 * A spec is the family name followed by key=value options separated by
 * spaces: "bloom n=1000000 p=0.01", "blocked-bloom n=4e6 p=0.01
 * layout=split", "cuckoo n=1e6 fingerprint-bits=12". Keys are the command
 * line's long option names; n (capacity) and p (false-positive rate) are
 * common to all. Numbers are decimal or scientific ("1e6" where an integer
 * is wanted must be integral); probabilities also accept "1/8192" and
 * "0.01%". An option that does not apply to the family is an error.
 * seed=random (and key=random with hash=siphash) draws a secret seed or
 * key from the operating system, as amq_hasher_random does.
 *
 * @param out receives the filter on success; not NULL.
 * @param spec NUL-terminated spec; not NULL.
 * @param diag on failure, what was wrong (which option, which value); may
 *   be NULL.
 * @return AMQ_OK; AMQ_EINVAL for an unknown family, unknown option, malformed
 *   or out-of-range value, or a static family (use amq_build); AMQ_ENOMEM;
 *   AMQ_EIO when seed=random or key=random finds no random bytes.
 * Allocates: the filter. Thread safety: safe.
 */
AMQ_API int amq_new(amq_filter **out, const char *spec, amq_diag *diag);

/**
 * Build a filter of any family from all its keys at once.
 *
 * Static families (gcs, hfb, fuse8, fuse16) can only be built this way; a
 * dynamic family gets an empty filter sized by the spec, then every key;
 * when the spec gives no capacity (n), the number of keys is used.
 *
 * @param keys array of count key pointers (each may be NULL if its length is 0).
 * @param lens array of count key lengths.
 * @param count the number of keys.
 * @param diag on failure, what was wrong; may be NULL.
 * @return as amq_new, plus AMQ_EFULL when the keys do not fit a fixed-size filter.
 */
AMQ_API int amq_build(amq_filter **out, const char *spec, const void *const *keys,
                      const size_t *lens, size_t count, amq_diag *diag);

/**
 * Add a key to a dynamic filter.
 * @return AMQ_OK; AMQ_EFULL; AMQ_EUNSUPPORTED for a static family.
 * Thread safety: needs exclusive access to f.
 */
AMQ_API int amq_add(amq_filter *f, const void *key, size_t len);

/**
 * Add a key unless the filter may already hold it, and say which happened:
 * "have I seen this before?" and "remember it" in one step (what a
 * deduplicator or a crawler asks of every item). One hash and, for the
 * Bloom filters, one pass over the key's bits.
 *
 * For bloom and blocked-bloom this changes the filter exactly as amq_add
 * would (adding a key whose bits are all set changes nothing); a
 * counting-bloom or cuckoo filter keeps one copy of the key instead of
 * counting it again.
 * @return 1 the key was certainly absent and is now added; 0 it may have
 *   been present (a false positive, for a key never added), nothing
 *   changed; AMQ_EFULL, AMQ_ERANGE or AMQ_ENOMEM as amq_add, nothing
 *   changed; AMQ_EUNSUPPORTED for a static family.
 * Thread safety: needs exclusive access to f.
 */
AMQ_API int amq_add_unique(amq_filter *f, const void *key, size_t len);

/**
 * Remove one copy of a key from a filter that supports removal (counting
 * Bloom, cuckoo).
 *
 * A key added k times and removed at most k times still answers "maybe";
 * the only way to make a key answer "no" is to remove a key that was never
 * added (or more times than it was added): its traces are other keys'.
 * @return AMQ_OK; AMQ_ENOTFOUND when the key is certainly absent (nothing
 *   changes); AMQ_EUNSUPPORTED for families that cannot remove, and for a
 *   filter marked add-once (amq_mark_add_once).
 * Thread safety: needs exclusive access to f.
 */
AMQ_API int amq_remove(amq_filter *f, const void *key, size_t len);

/**
 * Add many keys, in order: the same filter and the same answers as
 * amq_add of each in turn, through the family's batch path where it has
 * one (bloom, counting-bloom and cuckoo hash the keys ahead and prefetch
 * their cells), which is faster for many keys on a large filter.
 *
 * It stops at the first key whose add fails (a full cuckoo filter:
 * AMQ_EFULL), which changed nothing; the keys before it are added.
 * @param results NULL, or count ints: results[i] becomes amq_add's answer
 *   for keys[i], for every key handled (the failed one included).
 * @param handled NULL, or receives how many keys were added: count on
 *   AMQ_OK; on an error, the index of the key that failed.
 * @param f the filter; not NULL.
 * @param keys count key pointers (each may be NULL if its length is 0).
 * @param lens count key lengths.
 * @return AMQ_OK; the first key's error; AMQ_EINVAL (a NULL argument, a
 *   NULL key of non-zero length: nothing added); AMQ_EUNSUPPORTED for a
 *   static family.
 * Allocates: as amq_add (a growing filter's new stage or table).
 * Thread safety: needs exclusive access to f.
 */
AMQ_API int amq_add_many(int *results, size_t *handled, amq_filter *f, const void *const *keys,
                         const size_t *lens, size_t count);

/**
 * Add many keys, in order, each unless the filter may already hold it: the
 * answers of amq_add_unique of each in turn (1 added, 0 maybe present; a
 * key repeated in the batch is added once), through the family's batch
 * path. Stops at the first key that fails, as amq_add_many.
 * Parameters and return as amq_add_many, with amq_add_unique's answers in
 * results.
 * Thread safety: needs exclusive access to f.
 */
AMQ_API int amq_add_unique_many(int *results, size_t *handled, amq_filter *f,
                                const void *const *keys, const size_t *lens, size_t count);

/**
 * Remove one copy of each of many keys, in order: the answers of amq_remove
 * of each in turn. A key certainly absent is answered AMQ_ENOTFOUND in
 * results and the removal goes on; any other error stops it at that key.
 * @param results NULL, or count ints: AMQ_OK or AMQ_ENOTFOUND per key.
 * @param handled NULL, or receives how many keys were handled (count
 *   unless an error other than AMQ_ENOTFOUND stopped it at that index).
 * @return AMQ_OK (some keys may have been absent: see results); the error
 *   that stopped it; AMQ_EUNSUPPORTED as amq_remove.
 * Thread safety: needs exclusive access to f.
 */
AMQ_API int amq_remove_many(int *results, size_t *handled, amq_filter *f, const void *const *keys,
                            const size_t *lens, size_t count);

/**
 * Mark a filter as filled add-once: its keys went in through
 * amq_add_unique, which stores a key only when the filter does not already
 * answer "maybe" for it. Such a filter holds one copy of a key however
 * often it was given, and none of a key that was a false positive when it
 * was given, so removing any key could take away the only trace of another
 * key the caller thinks was added. A marked filter refuses amq_remove
 * (AMQ_EUNSUPPORTED), and the mark is saved with it (the container's
 * add-once flag, docs/FORMAT.md) and comes back when it is loaded; a
 * filter another marked one is merged into (amq_merge) is marked too. The
 * command line's --add-once sets it. There is no call to take it away.
 * @param f the filter; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (f NULL); AMQ_EUNSUPPORTED for a family that
 *   cannot remove keys (it needs no mark).
 * Allocates: never. Thread safety: needs exclusive access to f.
 */
AMQ_API int amq_mark_add_once(amq_filter *f, amq_diag *diag);

/**
 * Whether a filter is marked add-once (amq_mark_add_once, or loaded from
 * a file so marked).
 * @param f the filter; may be NULL.
 * @return 1 marked, 0 not; AMQ_EINVAL when f is NULL.
 * Allocates: never. Thread safety: safe with other readers.
 */
AMQ_API int amq_add_once_marked(const amq_filter *f);

/**
 * Ask whether a key may be in the filter.
 * @return 1 maybe present, 0 definitely absent, <0 an error code.
 * Allocates: never. Thread safety: safe with other readers.
 */
AMQ_API int amq_contains(const amq_filter *f, const void *key, size_t len);

/**
 * Ask for many keys at once: results[i] becomes 1 when keys[i] may be in the
 * filter, 0 when it is definitely absent - the answers of amq_contains,
 * through the family's batch path (hashes first, the memory of keys further
 * ahead prefetched; a gcs filter sorts the keys and decodes its stream once
 * for all of them).
 *
 * @param results count bytes, written.
 * @param keys array of count key pointers (each may be NULL if its length is 0).
 * @param lens array of count key lengths.
 * @return AMQ_OK; the error amq_contains would give for a key (e.g.
 *   AMQ_EINVAL: a key of a raw-ID hfb filter that is not 16 bytes), with
 *   results unspecified; AMQ_ENOMEM (gcs: it needs count x 32 bytes).
 * Allocates: only for a gcs filter, freed before returning.
 * Thread safety: safe with other readers.
 */
AMQ_API int amq_contains_many(uint8_t *results, const amq_filter *f, const void *const *keys,
                              const size_t *lens, size_t count);

/**
 * Save a filter to a file atomically: a temporary file in the file's
 * directory is written, fsynced and renamed over it, so a crash leaves
 * either the old file or the new one, never a mixture.
 *
 * What path names is left what it was:
 * - a symbolic link is followed (link after link): its target is replaced
 *   in its own directory and the link stays a link;
 * - an existing file keeps its mode, owner and group; one the caller may
 *   not give the new file (not root, saving another user's file) fails
 *   with AMQ_EIO and errno EPERM, the file unchanged;
 * - a read-only file (no write permission for the caller; for root, no
 *   write bit in its mode) fails with AMQ_EIO and errno EACCES, unchanged;
 * - the name is replaced, so other hard links to the file keep the old
 *   contents;
 * - a character device or FIFO (/dev/null, a pipe), or a file a process
 *   holds open named under /proc/PID/fd (/dev/stdout, /dev/fd/N), is
 *   written into, not replaced: not atomic, and a FIFO's open waits for a
 *   reader; an open regular file is appended to;
 * - a directory, socket or block device is refused (AMQ_EINVAL).
 * A new file gets mode 0644 less the umask.
 * @param diag on failure, the path and the reason; may be NULL.
 * @return AMQ_OK; AMQ_EIO (errno tells why); AMQ_EINVAL; AMQ_ENOMEM.
 */
AMQ_API int amq_save(const amq_filter *f, const char *path, amq_diag *diag);

/**
 * The size of the file amq_save would write for f, without writing it (to
 * compare the stored size of two filters of the same keys).
 * @param bytes receives the size; not NULL.
 * @param f the filter; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (a NULL argument); AMQ_ERANGE (too large for
 *   a file).
 * Allocates: never. Thread safety: safe with other readers.
 */
AMQ_API int amq_saved_bytes(uint64_t *bytes, const amq_filter *f, amq_diag *diag);

/** Load options. */
enum amq_load_flags {
    AMQ_LOAD_MMAP = 1,  /**< map the file instead of reading it (static families) */
    AMQ_LOAD_BORROW = 2 /**< amq_load_from_memory only: keep pointers into the caller's
                             buffer instead of copying it (static families) */
};

/**
 * Load a filter saved by amq_save, checking the whole file first.
 * Untrusted input: every field, length and the checksum are validated
 * before anything is allocated from them.
 * @param out receives the filter; NULL on failure; not NULL.
 * @param path the file; not NULL.
 * @param flags 0, or AMQ_LOAD_MMAP to map the file instead of reading it
 *   (a static family then queries the mapping where it lies); anything
 *   else is AMQ_EINVAL. A mapping is checked once, when it is loaded: the
 *   caller must make sure nothing truncates the file or rewrites it in
 *   place until amq_free. A file truncated under the mapping raises
 *   SIGBUS at the next query of a page past its new end; one overwritten
 *   in place answers from whatever bytes it now holds, false "certainly
 *   not"s included. Replacing the file by rename (as amq_save and the amq
 *   tool do) is safe: the mapping keeps the old file. Without the flag
 *   the file is read into memory and later changes to it do not matter.
 * @param diag on failure, the path, which check failed and at what offset;
 *   may be NULL.
 * @return AMQ_OK; AMQ_EFORMAT (not an amq file); AMQ_EVERSION (newer
 *   format); AMQ_ECORRUPT (damaged or truncated); AMQ_EUNSUPPORTED (a family
 *   this build does not have); AMQ_EIO; AMQ_ENOMEM.
 */
AMQ_API int amq_load(amq_filter **out, const char *path, unsigned flags, amq_diag *diag);

/* ---- Filters in memory ---------------------------------------------------
 * The exact bytes of the file format (docs/FORMAT.md), without a file: what
 * a database stores as a value (a Redis module's RDB, DUMP and RESTORE) or
 * a binding passes around. A filter saved to memory and written to a file
 * is a file amq_load reads, and a file's bytes load from memory. */

/**
 * Save a filter into a new buffer: byte for byte what amq_save writes to a
 * file.
 * @param out receives the buffer, from the library's allocator
 *   (amq_set_allocator): the caller frees it with amq_buffer_free. NULL on
 *   failure. Not NULL.
 * @param out_len receives the buffer's length (0 on failure); not NULL.
 * @param f the filter; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (out, out_len or f is NULL); AMQ_ENOMEM (the
 *   buffer); AMQ_ERANGE (larger than this address space).
 * Allocates: the buffer, the size amq_saved_bytes gives, and nothing else
 * (what a filter does not keep as it is saved - an hfb bank's code, a
 * big-endian host's words - is made into the buffer directly).
 * Thread safety: safe with other readers of f.
 */
AMQ_API int amq_save_to_memory(uint8_t **out, size_t *out_len, const amq_filter *f, amq_diag *diag);

/**
 * A sink for amq_save_to_writer: take len bytes (len > 0) and return 0, or
 * return nonzero to stop the save. data is valid only during the call.
 */
typedef int (*amq_write_fn)(void *context, const void *data, size_t len);

/**
 * Save a filter by handing its bytes to a writer in order, for a caller
 * that cannot hold a second copy of a large filter, or may not allocate at
 * all (a database's save in a fork child, which must not fail for want of
 * memory): the writer receives exactly the bytes of amq_save_to_memory,
 * in pieces - the header and parameters in one, the filter's arrays
 * straight from its memory (at most 1 GiB a call), what the filter does
 * not keep as it is saved (an hfb bank's code, a cuckoo filter's counted
 * copies, a big-endian host's words) a few KiB at a time from a buffer on
 * the stack, the checksum last - never an empty one. The save uses about
 * 24 KiB of stack.
 * @param f the filter; not NULL.
 * @param write called for each piece, on this thread; not NULL.
 * @param context passed to write as is; may be NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (f or write is NULL); AMQ_EIO when write
 *   returned nonzero: no further call is made, the diag says the value and
 *   how many bytes write had taken, and errno is whatever write left (its
 *   reason is the writer's own to keep in context); AMQ_ERANGE.
 * Allocates: never, for every family and on every host.
 * Thread safety: safe with other readers of f.
 */
AMQ_API int amq_save_to_writer(const amq_filter *f, amq_write_fn write, void *context,
                               amq_diag *diag);

/**
 * Load a filter from the bytes of a saved file, checking every field,
 * length and the checksum before trusting a byte, as amq_load does.
 *
 * By default the filter owns its memory: data may be freed or reused as
 * soon as the call returns. With AMQ_LOAD_BORROW a static filter whose
 * family keeps its arrays in the file's layout (gcs, fuse8, fuse16) points
 * into data instead of copying it, as it points into a mapped file with
 * AMQ_LOAD_MMAP: data must then stay valid and unchanged until amq_free,
 * and amq never writes to it. Other families (the dynamic ones, hfb)
 * build their own arrays whatever the flag, and keep no pointer into data
 * once the call returns. data needs no particular alignment (a 64-byte
 * aligned buffer gives the arrays the cache-line alignment a file has).
 * @param out receives the filter; NULL on failure; not NULL.
 * @param data the image; not NULL (even when len is 0).
 * @param len its length in bytes.
 * @param flags 0 or AMQ_LOAD_BORROW; anything else (AMQ_LOAD_MMAP
 *   included) is AMQ_EINVAL.
 * @param diag on failure, which check failed and at what offset; may be
 *   NULL.
 * @return AMQ_OK; AMQ_EINVAL (out or data NULL, unknown flags); AMQ_EFORMAT
 *   (not an amq image); AMQ_EVERSION (newer format); AMQ_ECORRUPT (damaged
 *   or truncated, len 0 included); AMQ_EUNSUPPORTED (a family this build
 *   does not have, or a bundle); AMQ_ENOMEM.
 * Allocates: the filter, and without AMQ_LOAD_BORROW for gcs, fuse8 and
 * fuse16 a copy of the image. Thread safety: safe; data must not change
 * during the call.
 */
AMQ_API int amq_load_from_memory(amq_filter **out, const void *data, size_t len, unsigned flags,
                                 amq_diag *diag);

/**
 * What the first bytes of a saved file (or of its image in memory) say:
 * the whole file's length and its family, from the 64-byte header alone,
 * every header field checked as amq_load checks it (magic, version, family
 * id, hash kind and key, flags, reserved bytes, the caps on the parameter
 * block and the payload). For a caller that receives an image in pieces (a
 * stream, a Redis RESTORE in chunks): it learns how many bytes to expect,
 * and to refuse early what is no amq file, before it has them all. The
 * payload and the checksum are not read: amq_load_from_memory checks them
 * once the image is whole.
 * @param file_bytes receives the file's length in bytes, header and
 *   checksum included; on AMQ_ERANGE, the bytes needed to tell (the
 *   header's 64); else 0. Not NULL.
 * @param family NULL, or receives the family's name as amq_filter_family
 *   gives it ("bloom", "cuckoo", ...), "bundle" for a bundle of filters
 *   (amq_bundle_open), "frontier" for a crawl frontier's manifest (not a
 *   filter either), or NULL for a family id this build does not know
 *   (amq_load then answers AMQ_EUNSUPPORTED). A static string.
 * @param head the image's first head_len bytes; may be NULL if head_len
 *   is 0.
 * @param head_len how many bytes head holds; any beyond the header are
 *   not read.
 * @param diag on failure, which field is wrong and at what offset, as
 *   amq_load says it; may be NULL.
 * @return AMQ_OK; AMQ_ERANGE (fewer than 64 bytes, all of them the start
 *   of an amq file: wait for more); AMQ_EFORMAT (not an amq file, as far as
 *   head goes); AMQ_EVERSION (a newer format); AMQ_ECORRUPT (a damaged
 *   header); AMQ_EINVAL (file_bytes NULL, or head NULL with head_len > 0).
 * Allocates: never. Thread safety: safe; head must not change during the
 * call.
 */
AMQ_API int amq_image_peek(uint64_t *file_bytes, const char **family, const void *head,
                           size_t head_len, amq_diag *diag);

/**
 * Merge other into into: afterwards into answers "maybe" for every key
 * either answered "maybe" for (the union). Both must be of the same family
 * and built with the same parameters and hasher.
 * @param into the filter to grow; not NULL.
 * @param other left unchanged; not NULL.
 * @return AMQ_OK; AMQ_EINCOMPATIBLE (family, size or hasher differ: the
 *   message in *diag says which); AMQ_EUNSUPPORTED (the family cannot
 *   merge); AMQ_ENOMEM.
 */
AMQ_API int amq_merge(amq_filter *into, const amq_filter *other, amq_diag *diag);

/**
 * Export a filter's bare data in a named format, for other programs: gcs
 * has "raw" (its Golomb-coded stream, padded to a byte) and "bip158"
 * (Bitcoin's serialization: N as a CompactSize, then the stream).
 * @param out receives a buffer the caller frees with amq_buffer_free; NULL
 *   on failure; not NULL.
 * @param len receives the buffer's length (0 on failure); not NULL.
 * @param f the filter; not NULL.
 * @param format the format's name; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_EUNSUPPORTED (the family exports nothing, or not in
 *   this format: the message names the family or its formats); AMQ_ENOMEM.
 * Allocates: the buffer. Thread safety: safe with other readers.
 */
AMQ_API int amq_export(uint8_t **out, size_t *len, const amq_filter *f, const char *format,
                       amq_diag *diag);

/**
 * The name of a filter's family ("bloom", "cuckoo", ...).
 * @return a static string; NULL only when f is NULL.
 */
AMQ_API const char *amq_filter_family(const amq_filter *f);

/**
 * The name of the index-th filter type this build has (0, 1, ... in order).
 * @return a static string, or NULL when index is past the last type.
 */
AMQ_API const char *amq_family_at(size_t index);

/**
 * Tell whether a filter type is static (built once from all its keys: gcs,
 * hfb, fuse8, fuse16) or dynamic (keys added one by one).
 * @param family a type name such as "bloom"; not NULL.
 * @return 1 static, 0 dynamic, AMQ_EINVAL for a name this build lacks.
 */
AMQ_API int amq_family_is_static(const char *family);

/** What a filter type can do beside answering queries: the bits of
 *  amq_family_capabilities. */
enum amq_capability {
    AMQ_CAN_ADD = 1,     /**< amq_new, then amq_add key by key (dynamic) */
    AMQ_CAN_REMOVE = 2,  /**< amq_remove */
    AMQ_CAN_MERGE = 4,   /**< amq_merge: the union of two filters */
    AMQ_CAN_GROW = 8,    /**< takes keys past its capacity by chaining larger
                              tables: scalable-bloom, whose rate stays within
                              the bound asked for; cuckoo when its spec gives
                              growth, whose tables' rates add up */
    AMQ_CAN_EXPORT = 16, /**< amq_export in a format other programs read */
    /* Properties rather than calls: amq_capability_name names none. */
    AMQ_TAKES_IDS = 32,     /**< its keys are 16-byte IDs used as their own
                                 hash, unless its spec gives hash=md5, which
                                 hashes keys of any length into IDs (hfb); a
                                 filter of MD5 IDs reports AMQ_HASH_MD5 in
                                 amq_info's hasher */
    AMQ_GROWS_IF_ASKED = 64 /**< AMQ_CAN_GROW only when its spec gives growth
                                 above 0; made without, it is of a fixed size
                                 and an add to a full one fails (cuckoo) */
};

/**
 * Tell what a filter type can do, without making a filter: an OR of
 * AMQ_CAN_* bits. Every type can be queried, saved, loaded and described;
 * every type can be built from all its keys with amq_build.
 * @param family a type name such as "cuckoo"; not NULL.
 * @return the bits (0 for a static type that only answers queries), or
 *   AMQ_EINVAL for a name this build lacks.
 * Thread safety: safe.
 */
AMQ_API int amq_family_capabilities(const char *family);

/** One option a filter type's spec takes ("bloom n=1e6 p=0.01 hashes=7"), as
 *  the type's own table in the library defines it: amq_family_option fills
 *  it. The command-line tool builds its per-type options and their help
 *  from these, so a new option appears there without a change to the tool.
 *  Every string is static and lives as long as the library. */
typedef struct amq_option_info {
    size_t struct_size;         /**< the size of the caller's layout, which amq_family_option
                                     sets (docs/CONVENTIONS.md, "Growth") */
    const char *name;           /**< the key in a spec, and the tool's long option:
                                     "fingerprint-bits" */
    const char *alias;          /**< a shorter key the spec takes too ("n" for
                                     capacity), which the tool gives as -n; or NULL */
    const char *kind;           /**< how the value is written: "count" (an integer,
                                     "1e6" allowed), "probability" ("0.01",
                                     "1/8192", "0.5%"), "real", "choice" (one of
                                     choices), "hex" or "flag" (a bare key, no value) */
    const char *value_name;     /**< the value's placeholder in usage text ("N",
                                     "P", "LEN", "HEX"); NULL for a flag */
    const char *const *choices; /**< kind "choice": its words, NULL-terminated
                                     ("split", "block", NULL); else NULL */
    const char *word;           /**< kind "count" or "hex": a word taken instead of
                                     a value ("best"; "random" for seed and key),
                                     or NULL */
    uint64_t min, max;          /**< kind "count": the numbers taken, inclusive */
    double real_min, real_max;  /**< kind "real": the values taken, inclusive;
                                     "probability": 0 and 1, both excluded */
    size_t hex_bytes;           /**< kind "hex": the bytes, written as twice as many
                                     hex digits */
    const char *help;           /**< what it sets and its default, in one line of
                                     English; never NULL */
} amq_option_info;

/**
 * amq_family_option for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): as much of the answer as that layout
 * holds, zeros in fields this library does not have, and struct_size set.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * The rest as amq_family_option.
 */
AMQ_API int amq_family_option_sized(amq_option_info *out, size_t struct_size, const char *family,
                                    size_t index);

/**
 * Describe the index-th option a filter type's spec takes (0, 1, ... in the
 * order of the type's table; shared options such as capacity, fpr, seed,
 * hash and key are listed by every type that takes them). A spec that gives
 * an option a value of its kind passes the spec parser; the type may still
 * refuse a value or a combination (hash=siphash without key; hfb lists seed
 * and key only to refuse them with a reason) and says why in the amq_diag
 * of amq_new or amq_build.
 * @param out receives the description; set only on AMQ_OK; not NULL.
 * @param family a type name such as "cuckoo" (amq_family_at lists them).
 * @param index which option, from 0.
 * @return AMQ_OK; AMQ_ERANGE when index is past the type's last option
 *   (walk from 0 until then); AMQ_EINVAL when out or family is NULL or this
 *   build has no such type.
 * Allocates nothing. Thread safety: safe.
 * Inline: passes the caller's sizeof to amq_family_option_sized, so a
 *   program keeps its layout whatever the library it runs with.
 */
static inline int amq_family_option(amq_option_info *out, const char *family, size_t index)
{
    return amq_family_option_sized(out, sizeof *out, family, index);
}

/**
 * The name of one capability: "add", "remove", "merge", "grow" or "export".
 * @param capability one AMQ_CAN_* bit.
 * @return a static string, or NULL when capability is not exactly one of
 *   the AMQ_CAN_* bits (the properties AMQ_TAKES_IDS and AMQ_GROWS_IF_ASKED
 *   have no name).
 */
AMQ_API const char *amq_capability_name(int capability);

/** Free a filter and everything it owns. Accepts NULL. */
AMQ_API void amq_free(amq_filter *f);

/** What amq_info reports about any filter. */
/** Most family-specific figures an amq_info carries. */
#define AMQ_INFO_MAX_DETAILS 32

/** One family-specific figure of an amq_info: a number, or a word when text
 *  is not empty (e.g. { "layout", 0, "split" }, { "hashes", 8, "" }). */
typedef struct amq_info_detail {
    char name[32]; /**< snake_case, e.g. "saturated_counters" */
    double value;  /**< the number, when text is empty */
    char text[32]; /**< the word, or "" */
} amq_info_detail;

typedef struct amq_info {
    size_t struct_size;     /**< the size of the caller's layout, which amq_info_get
                                 sets (docs/CONVENTIONS.md, "Growth") */
    const char *family;     /**< family name, e.g. "bloom" (static string) */
    uint64_t capacity;      /**< keys the filter was sized for (scalable, cuckoo: all its
                                 stages or tables now) */
    uint64_t keys;          /**< keys added, where tracked (else the estimate) */
    double estimated_keys;  /**< distinct keys estimated from the contents */
    uint64_t memory_bytes;  /**< memory the filter's data takes */
    double bits_per_key;    /**< memory_bytes*8 / capacity, without the at most 63
                                 bits of padding that round a table up to whole
                                 64-bit words (bloom: its m bits / capacity);
                                 scalable: / keys, the keys it holds, as its
                                 capacity grows with them (/ 1 while empty) */
    double target_fpr;      /**< the false-positive rate asked for */
    double expected_fpr;    /**< the rate to expect at the current fill */
    amq_hasher hasher;      /**< the key hash */
    uint64_t file_checksum; /**< the checksum of the file it was loaded from, else 0 */
    /** What only this family has (its k, layout, stages, saturated
     *  counters...), in the order the family gives them. */
    amq_info_detail details[AMQ_INFO_MAX_DETAILS];
    size_t detail_count; /**< entries used in details */
    int keys_estimated;  /**< 1: the family does not count its adds (bloom,
                              blocked-bloom, counting-bloom), and keys is
                              estimated_keys rounded; 0: keys is exact */
    int add_once;        /**< 1: marked add-once (amq_mark_add_once): remove
                              refuses it; 0: not marked */
} amq_info;

/**
 * amq_info_get for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): as much of the answer as that layout
 * holds, zeros in fields this library does not have, and struct_size set.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * The rest as amq_info_get.
 */
AMQ_API int amq_info_get_sized(amq_info *out, size_t struct_size, const amq_filter *f);

/**
 * Describe a filter.
 * @param out receives the description; not NULL.
 * @param f the filter; not NULL.
 * @return AMQ_OK; AMQ_EINVAL (a NULL argument). It needs no amq_diag: a
 *   NULL argument is its only failure.
 * Allocates: never. Thread safety: safe with other readers of f.
 * Inline: passes the caller's sizeof to amq_info_get_sized, so a
 *   program keeps its layout whatever the library it runs with.
 */
static inline int amq_info_get(amq_info *out, const amq_filter *f)
{
    return amq_info_get_sized(out, sizeof *out, f);
}

#ifdef __cplusplus
}
#endif

#endif /* AMQ_AMQ_H */
