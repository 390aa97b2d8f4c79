/*
 * fuzz_round_trip.c - a filter made through the public API (amq.h) from
 * derived parameters and keys, saved to memory and loaded back: it must hold
 * every key it took, and the loaded filter must answer as the saved one.
 *
 * Input:
 *
 *     byte 0      the family: an index into amq_family_at(), modulo the
 *                 number of families
 *     byte 1      mode: bit 0 - a dynamic family is made by amq_new, then
 *                 amq_add of each key (else amq_build, for every family);
 *                 bit 1 - every key is 16 bytes (an hfb filter of raw IDs
 *                 takes no other); bit 2 - the image is loaded with
 *                 AMQ_LOAD_BORROW too
 *     bytes 2-4   which of the family's options the spec sets: bit i (of
 *                 the three bytes, little-endian) for its i-th option, as
 *                 amq_family_option lists them
 *     bytes 5-28  one byte per option (the i-th for the i-th option), from
 *                 which its value is derived, always small: a capacity of
 *                 1 to 256, a size in bits or counters at most 4 KiB past
 *                 its minimum, any other count at most 15 past its minimum,
 *                 a probability from a short list, a real within its
 *                 range, a choice, hex digits, or the flag
 *     the rest    the keys, at most MAX_KEYS: each a length byte (modulo
 *                 MAX_KEY_LEN + 1; none with mode bit 1), then its bytes
 *
 * A spec the family refuses (a value it does not take, a combination such
 * as hash=siphash without key) ends the run. Otherwise:
 *
 *   1. every key amq_build took, or amq_add answered AMQ_OK for, answers 1
 *      (no false negative), and amq_contains_many agrees with amq_contains;
 *      a cuckoo filter's memory stays within MAX_CUCKOO_BYTES (the keys
 *      are at most 256 and the capacity at most 256: one key added 200
 *      times into a growing cuckoo filter of capacity 9 once asked for
 *      gigabytes);
 *   2. the filter saves to memory, in amq_saved_bytes bytes; the image
 *      loads (copied, and borrowed with mode bit 2), saves again to the
 *      same bytes, and answers as the saved filter for every key and for
 *      absent keys derived from them (each key with a byte appended, and
 *      with its first byte flipped).
 *
 * FUZZ_ROUND_TRIP_VERBOSE=1 in the environment prints each spec and what
 * became of it. The sizes stay small by construction, so one run takes milliseconds and
 * never nears the fuzzer's memory limit. A violation aborts with a message
 * on stderr, so libFuzzer keeps the input.
 */
#include "amq/amq.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS    256
#define MAX_KEY_LEN 64
#define MAX_OPTIONS 24
#define HEADER      (5 + MAX_OPTIONS)
/* What a cuckoo filter of these few keys and small sizes may take. */
#define MAX_CUCKOO_BYTES ((uint64_t)4 << 20)

static _Noreturn void fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

static _Noreturn void fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("fuzz_round_trip: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}

/* Append to the spec; 0, or -1 when it does not fit (never, at these sizes). */
static int append(char *spec, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int append(char *spec, size_t cap, const char *format, ...)
{
    size_t used = strlen(spec);
    va_list args;
    va_start(args, format);
    int n = vsnprintf(spec + used, cap - used, format, args);
    va_end(args);
    return n < 0 || (size_t)n >= cap - used ? -1 : 0;
}

/* The value of one option, derived from v, appended as " name=value". */
static int append_option(char *spec, size_t cap, const amq_option_info *o, uint8_t v)
{
    static const char *const probabilities[] = { "0.5",  "0.1",  "0.01",  "1/8192",
                                                 "1e-4", "1e-6", "0.99%", "0.25" };
    const char *kind = o->kind;
    if (strcmp(kind, "flag") == 0)
        return append(spec, cap, " %s", o->name);
    if (strcmp(kind, "probability") == 0)
        return append(spec, cap, " %s=%s", o->name, probabilities[v % 8]);
    if (strcmp(kind, "real") == 0) {
        double real = o->real_min + (o->real_max - o->real_min) * (double)v / 255.0;
        return append(spec, cap, " %s=%.17g", o->name, real);
    }
    if (strcmp(kind, "choice") == 0) {
        size_t n = 0;
        while (o->choices && o->choices[n])
            n++;
        return n ? append(spec, cap, " %s=%s", o->name, o->choices[v % n]) : -1;
    }
    if (strcmp(kind, "hex") == 0) {
        if (append(spec, cap, " %s=", o->name) != 0)
            return -1;
        uint32_t x = 0x9e3779b9u * (v + 1u);
        for (size_t i = 0; i < o->hex_bytes; i++) {
            x = x * 1103515245u + 12345u;
            if (append(spec, cap, "%02x", (unsigned)(x >> 24)) != 0)
                return -1;
        }
        return 0;
    }
    if (strcmp(kind, "count") != 0)
        return -1;
    if (o->word && v == 255)
        return append(spec, cap, " %s=%s", o->name, o->word);
    uint64_t count;
    if (strcmp(o->name, "seed") == 0)
        count = v * UINT64_C(0x9e3779b97f4a7c15);
    else if (strcmp(o->name, "capacity") == 0)
        count = o->min + v;
    else if (strcmp(o->name, "bits") == 0 || strcmp(o->name, "counters") == 0)
        count = o->min + ((uint64_t)v << 4);
    else
        count = o->min + v % 16;
    if (count > o->max)
        count = o->max;
    return append(spec, cap, " %s=%llu", o->name, (unsigned long long)count);
}

/* The absent keys of key i: the key with a byte appended, the key with its
 * first byte flipped (or, for an empty key, one byte). */
static size_t absent_key(uint8_t *out, const uint8_t *key, size_t len, int which)
{
    memcpy(out, key, len);
    if (which == 0 || len == 0) {
        out[len] = 0xa5;
        return len + 1;
    }
    out[0] ^= 0x80;
    return len;
}

/* Every query answers alike on a and b. */
static void same_answers(const amq_filter *a, const amq_filter *b, const void *const *keys,
                         const size_t *lens, size_t count, const char *how)
{
    uint8_t other[MAX_KEY_LEN + 1];
    for (size_t i = 0; i < count; i++) {
        int x = amq_contains(a, keys[i], lens[i]);
        int y = amq_contains(b, keys[i], lens[i]);
        if (x != y)
            fail("%s %s: key %zu (%zu bytes) answers %d, loaded %d", how, amq_filter_family(a), i,
                 lens[i], x, y);
        for (int which = 0; which < 2; which++) {
            size_t len = absent_key(other, keys[i], lens[i], which);
            x = amq_contains(a, other, len);
            y = amq_contains(b, other, len);
            if (x != y)
                fail("%s %s: absent key %zu/%d (%zu bytes) answers %d, loaded %d", how,
                     amq_filter_family(a), i, which, len, x, y);
        }
    }
}

/* Load the image with flags; the loaded filter saves to the same bytes and
 * answers as f. */
static void check_load(const amq_filter *f, const uint8_t *image, size_t image_len, unsigned flags,
                       const void *const *keys, const size_t *lens, size_t count)
{
    amq_diag diag = { .message = "" };
    amq_filter *loaded = NULL;
    int status = amq_load_from_memory(&loaded, image, image_len, flags, &diag);
    if (status != AMQ_OK)
        fail("flags %u: a saved %s filter does not load: %d %s", flags, amq_filter_family(f),
             status, diag.message);
    if (strcmp(amq_filter_family(loaded), amq_filter_family(f)) != 0)
        fail("flags %u: a saved %s filter loads as %s", flags, amq_filter_family(f),
             amq_filter_family(loaded));
    uint8_t *again = NULL;
    size_t again_len = 0;
    status = amq_save_to_memory(&again, &again_len, loaded, &diag);
    if (status != AMQ_OK)
        fail("flags %u: a loaded %s filter does not save: %s", flags, amq_filter_family(f),
             diag.message);
    if (again_len != image_len || memcmp(again, image, image_len) != 0)
        fail("flags %u: a loaded %s filter saves %zu other bytes than the %zu it loaded", flags,
             amq_filter_family(f), again_len, image_len);
    free(again);
    same_answers(f, loaded, keys, lens, count, flags ? "borrowed" : "copied");
    amq_free(loaded);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER)
        return 0;
    size_t family_count = 0;
    while (amq_family_at(family_count))
        family_count++;
    if (family_count == 0)
        return 0;
    const char *family = amq_family_at(data[0] % family_count);
    unsigned mode = data[1];
    uint32_t set = (uint32_t)data[2] | (uint32_t)data[3] << 8 | (uint32_t)data[4] << 16;

    char spec[1024] = "";
    if (append(spec, sizeof spec, "%s", family) != 0)
        return 0;
    amq_option_info option;
    for (size_t i = 0; i < MAX_OPTIONS && amq_family_option(&option, family, i) == AMQ_OK; i++)
        if ((set >> i & 1) && append_option(spec, sizeof spec, &option, data[5 + i]) != 0)
            return 0;

    /* The keys, pointing into data. */
    const void *keys[MAX_KEYS];
    size_t lens[MAX_KEYS];
    size_t count = 0;
    for (size_t at = HEADER; at < size && count < MAX_KEYS;) {
        size_t len = 16;
        if (!(mode & 2))
            len = data[at++] % (MAX_KEY_LEN + 1);
        if (len > size - at)
            break;
        keys[count] = data + at;
        lens[count] = len;
        count++;
        at += len;
    }

    amq_diag diag = { .message = "" };
    amq_filter *f = NULL;
    uint8_t took[MAX_KEYS];
    bool dynamic = amq_family_is_static(family) == 0;
    bool verbose = getenv("FUZZ_ROUND_TRIP_VERBOSE") != NULL;
    if ((mode & 1) && dynamic) {
        int status = amq_new(&f, spec, &diag);
        if (verbose)
            fprintf(stderr, "amq_new(\"%s\"): %d %s\n", spec, status, status ? diag.message : "");
        if (status != AMQ_OK)
            return 0;
        for (size_t i = 0; i < count; i++) {
            int added = amq_add(f, keys[i], lens[i]);
            if (added != AMQ_OK && added != AMQ_EFULL && added != AMQ_ERANGE)
                fail("%s: amq_add of key %zu answers %d", spec, i, added);
            took[i] = added == AMQ_OK;
        }
    } else {
        int status = amq_build(&f, spec, keys, lens, count, &diag);
        if (verbose)
            fprintf(stderr, "amq_build(\"%s\", %zu keys): %d %s\n", spec, count, status,
                    status ? diag.message : "");
        if (status != AMQ_OK)
            return 0;
        memset(took, 1, count);
    }

    amq_info info;
    amq_info_get(&info, f);
    if (strcmp(family, "cuckoo") == 0 && info.memory_bytes > MAX_CUCKOO_BYTES)
        fail("%s: %zu keys take %llu bytes, more than %llu", spec, count,
             (unsigned long long)info.memory_bytes, (unsigned long long)MAX_CUCKOO_BYTES);

    uint8_t results[MAX_KEYS];
    int status = amq_contains_many(results, f, keys, lens, count);
    for (size_t i = 0; i < count; i++) {
        int answer = amq_contains(f, keys[i], lens[i]);
        if (took[i] && answer != 1)
            fail("%s: key %zu (%zu bytes), which it took, answers %d", spec, i, lens[i], answer);
        if (status == AMQ_OK && answer >= 0 && results[i] != answer)
            fail("%s: key %zu: amq_contains_many answers %d, amq_contains %d", spec, i, results[i],
                 answer);
    }

    uint8_t *image = NULL;
    size_t image_len = 0;
    status = amq_save_to_memory(&image, &image_len, f, &diag);
    if (status != AMQ_OK)
        fail("%s: does not save to memory: %d %s", spec, status, diag.message);
    uint64_t saved_bytes = 0;
    if (amq_saved_bytes(&saved_bytes, f, &diag) != AMQ_OK || saved_bytes != image_len)
        fail("%s: amq_saved_bytes says %llu, the image has %zu", spec,
             (unsigned long long)saved_bytes, image_len);
    check_load(f, image, image_len, 0, keys, lens, count);
    if (mode & 4)
        check_load(f, image, image_len, AMQ_LOAD_BORROW, keys, lens, count);
    free(image);
    amq_free(f);
    return 0;
}
