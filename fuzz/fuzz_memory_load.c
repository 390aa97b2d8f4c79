/*
 * fuzz_memory_load.c - amq_load_from_memory on arbitrary images, copying
 * and borrowing, and the way back through amq_save_to_memory and
 * amq_save_to_writer.
 *
 * Input:
 *
 *     byte 0      mode: bit 0 set - write the image's checksum before
 *                 loading (the XXH3 of all but its last 8 bytes, into
 *                 those), so that mutations reach the family loaders
 *                 instead of the checksum; bits 1-3 - the image's address
 *                 modulo 8, so borrowed loads see unaligned buffers
 *     the rest    the image
 *
 * The image is copied into an allocation that ends where it does (a read
 * past its end is caught) and loaded twice: with flags 0, then with
 * AMQ_LOAD_BORROW. Both must answer the same status (the same checks run
 * whatever the flag), never crash, leak or read out of bounds, and leave
 * their output NULL on failure. A loaded filter must save, to memory and
 * through a writer, exactly the image it was loaded from (every byte of a
 * valid image is determined by what it describes), answer a few queries as
 * the other load does, and a borrowing filter must leave the buffer as it
 * found it. The seeds are small filters' files, some with a zero checksum
 * and mode bit 0 set.
 *
 * A violation aborts with a message on stderr, so libFuzzer keeps the input.
 */
#include "core/format.h"
#include "core/hash.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const probe_keys[] = {
    "", "a", "key-1", "key-42", "0123456789abcdef", "a key longer than sixteen bytes",
};
#define PROBE_COUNT (sizeof probe_keys / sizeof probe_keys[0])

static _Noreturn void fail(const char *format, ...) AMQ__PRINTF(1, 2);

static _Noreturn void fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("fuzz_memory_load: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}

/* A writer that compares what it is given with the expected bytes. */
typedef struct comparer {
    const uint8_t *expected;
    size_t len;
    size_t taken;
} comparer;

static int compare(void *context, const void *data, size_t len)
{
    comparer *c = context;
    if (len == 0 || len > c->len - c->taken || memcmp(data, c->expected + c->taken, len) != 0)
        fail("the writer was given other bytes than the image at offset %zu (%zu bytes)", c->taken,
             len);
    c->taken += len;
    return 0;
}

/* f saves the image back, to memory and through a writer. */
static void expect_round_trip(const amq_filter *f, const uint8_t *image, size_t len,
                              const char *how)
{
    uint8_t *saved = NULL;
    size_t saved_len = 0;
    amq_diag diag = { .message = "" };
    int status = amq_save_to_memory(&saved, &saved_len, f, &diag);
    if (status != AMQ_OK)
        fail("%s %s filter does not save to memory: %s", how, amq_filter_family(f), diag.message);
    if (saved_len != len || memcmp(saved, image, len) != 0)
        fail("%s %s filter saves %zu other bytes than the %zu of its image", how,
             amq_filter_family(f), saved_len, len);
    free(saved);
    comparer c = { image, len, 0 };
    status = amq_save_to_writer(f, compare, &c, &diag);
    if (status != AMQ_OK || c.taken != len)
        fail("%s %s filter's writer save: status %d, %zu of %zu bytes (%s)", how,
             amq_filter_family(f), status, c.taken, len, diag.message);
}

static int load(amq_filter **f, const uint8_t *image, size_t len, unsigned flags)
{
    amq_diag diag = { .message = "" };
    *f = (amq_filter *)f; /* must become NULL on failure */
    int status = amq_load_from_memory(f, image, len, flags, &diag);
    if (status > 0 || (status == AMQ_OK) != (*f != NULL))
        fail("flags %u: status %d with%s a filter", flags, status, *f ? "" : "out");
    if (status != AMQ_OK && diag.message[0] == '\0')
        fail("flags %u: status %d without a message", flags, status);
    return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned mode = data[0];
    size_t offset = (mode >> 1) & 7;
    size_t len = size - 1;
    uint8_t *allocation = malloc(offset + len > 0 ? offset + len : 1);
    uint8_t *pristine = malloc(len + 1);
    if (!allocation || !pristine)
        abort();
    uint8_t *image = allocation + offset;
    memcpy(image, data + 1, len);
    if ((mode & 1) && len >= AMQ__FORMAT_HEADER_SIZE + AMQ__FORMAT_TRAILER_SIZE) {
        amq__checksum checksum;
        amq__checksum_init(&checksum);
        amq__checksum_update(&checksum, image, len - AMQ__FORMAT_TRAILER_SIZE);
        amq__store_u64le(image + len - AMQ__FORMAT_TRAILER_SIZE, amq__checksum_final(&checksum));
    }
    memcpy(pristine, image, len);

    amq_filter *copied, *borrowed;
    int copied_status = load(&copied, image, len, 0);
    int borrowed_status = load(&borrowed, image, len, AMQ_LOAD_BORROW);
    if (copied_status != borrowed_status)
        fail("the image loads with status %d copied, %d borrowed", copied_status, borrowed_status);
    if (copied_status == AMQ_OK) {
        expect_round_trip(copied, image, len, "a copied");
        expect_round_trip(borrowed, image, len, "a borrowed");
        for (size_t i = 0; i < PROBE_COUNT; i++) {
            size_t key_len = strlen(probe_keys[i]);
            int a = amq_contains(copied, probe_keys[i], key_len);
            int b = amq_contains(borrowed, probe_keys[i], key_len);
            if (a != b)
                fail("%s: key '%s' answers %d copied, %d borrowed", amq_filter_family(copied),
                     probe_keys[i], a, b);
        }
        amq_free(copied);
        amq_free(borrowed);
        if (memcmp(image, pristine, len) != 0)
            fail("a load changed the caller's buffer");
    }
    free(pristine);
    free(allocation);
    return 0;
}
