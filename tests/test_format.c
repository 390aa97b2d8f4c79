/*
 * Tests for the container file format (src/core/format.c, docs/FORMAT.md):
 * round trips through memory, files and mappings; the golden version-1
 * file; every single-byte change, truncation and extension of a file is
 * caught with the right code; each header field's check fires on its own
 * (with a valid checksum, so the field check and not the checksum is what
 * answers); atomic saving survives a writer killed at a random moment;
 * failed saves leave the old file; the parameter-block writer and reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "core/format.h"
#include "core/hash.h"
#include "core/util.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers --------------------------------------------------------------- */

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + 1 + strlen(name) + 1;
    char *path = malloc(len);
    assert_non_null(path);
    snprintf(path, len, "%s/%s", dir, name);
    return path;
}

/* A copy of exactly len bytes, so that AddressSanitizer sees any read past
 * the end of the image. */
static uint8_t *exact_copy(const uint8_t *data, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len)
        memcpy(copy, data, len);
    return copy;
}

static int parse_copy(const uint8_t *data, size_t len, amq_diag *diag)
{
    uint8_t *copy = exact_copy(data, len);
    amq__container c;
    int status = amq__format_parse(&c, copy, len, diag);
    free(copy);
    return status;
}

/* Rewrite the trailer so that the checksum is valid again after a patch. */
static void reseal(uint8_t *file, size_t len)
{
    size_t body = len - AMQ__FORMAT_TRAILER_SIZE;
    amq__store_u64le(file + body, amq__xxh3_64(file, body, 0));
}

/* Count the save's temporary files for name in dir, removing them. */
static int remove_temporaries(const char *dir, const char *name)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, ".%s.tmp.", name);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        if (strncmp(entry->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char *path = join(dir, entry->d_name);
        assert_int_equal(unlink(path), 0);
        free(path);
        count++;
    }
    closedir(d);
    return count;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
            count++;
    closedir(d);
    return count;
}

static void assert_same_container(const amq__container *got, const amq__container *want,
                                  const uint8_t *want_payload)
{
    assert_int_equal(got->family, want->family);
    assert_int_equal(got->hasher.kind, want->hasher.kind);
    assert_memory_equal(got->hasher.key, want->hasher.key, 16);
    assert_int_equal(got->params_len, want->params_len);
    if (want->params_len)
        assert_memory_equal(got->params, want->params, want->params_len);
    assert_true(got->payload_len == want->payload_len);
    if (want->payload_len)
        assert_memory_equal(got->payload, want_payload, want->payload_len);
}

/* The fixed small container pinned by tests/golden/container-v1.bin (and
 * shown byte by byte in docs/FORMAT.md). */
typedef struct golden {
    amq__params_writer params;
    amq__container container;
    amq__piece pieces[3];
} golden;

static void golden_init(golden *g)
{
    amq__params_init(&g->params);
    amq__params_put_u8(&g->params, 7);
    amq__params_put_u32(&g->params, 1000000);
    amq__params_put_u64(&g->params, 9585059);
    amq__params_put_f64(&g->params, 0.01);
    assert_false(g->params.overflow);
    memset(&g->container, 0, sizeof g->container);
    g->container.family = AMQ__FAMILY_BLOOM;
    amq_hasher_xxh3(&g->container.hasher, 0x0123456789abcdefULL);
    g->container.params = g->params.bytes;
    g->container.params_len = g->params.len;
    g->pieces[0] = (amq__piece){ .data = "amq golden ", .len = 11 };
    g->pieces[1] = (amq__piece){ .data = "payload", .len = 7 };
    g->pieces[2] = (amq__piece){ .data = "!", .len = 1 };
}

/* tests/golden/container-v1.bin: tests/golden sits beside tests/data. */
static char *golden_path(void)
{
    const char *data_dir = AMQ_TEST_DATA_DIR;
    const char *slash = strrchr(data_dir, '/');
    assert_non_null(slash);
    const char *name = "/golden/container-v1.bin";
    size_t head = (size_t)(slash - data_dir);
    char *path = malloc(head + strlen(name) + 1);
    assert_non_null(path);
    memcpy(path, data_dir, head);
    strcpy(path + head, name);
    return path;
}

/* ---- sizes and round trips ------------------------------------------------- */

static void test_encoded_size(void **state)
{
    (void)state;
    /* header 64, params padded to a multiple of 64, payload padded to 8, trailer 8 */
    assert_true(amq__format_encoded_size(0, 0) == 64 + 8);
    assert_true(amq__format_encoded_size(1, 0) == 128 + 8);
    assert_true(amq__format_encoded_size(64, 1) == 128 + 8 + 8);
    assert_true(amq__format_encoded_size(21, 19) == 160);
    assert_true(amq__format_encoded_size(0, 8) == 64 + 8 + 8);
    assert_true(amq__format_encoded_size(AMQ__FORMAT_PARAMS_MAX, 0) == 64 + 4096 + 8);
    uint64_t two63 = (uint64_t)1 << 63;
    assert_true(amq__format_encoded_size(0, two63) == 64 + two63 + 8);
    assert_true(amq__format_encoded_size(AMQ__FORMAT_PARAMS_MAX, two63) == 64 + 4096 + two63 + 8);
    assert_true(amq__format_encoded_size(0, two63 + 1) == 0);
    assert_true(amq__format_encoded_size(0, UINT64_MAX) == 0);
    assert_true(amq__format_encoded_size(AMQ__FORMAT_PARAMS_MAX + 1, 0) == 0);
}

/* Encode, parse, save, read and map one container; check it every way. */
static void round_trip(const char *dir, const amq__container *c, const amq__piece *pieces,
                       size_t piece_count)
{
    uint64_t payload_len = 0;
    for (size_t i = 0; i < piece_count; i++)
        payload_len += pieces[i].len;
    uint8_t *payload = malloc(payload_len ? payload_len : 1);
    assert_non_null(payload);
    for (size_t i = 0, at = 0; i < piece_count; at += pieces[i].len, i++)
        memcpy(payload + at, pieces[i].data, pieces[i].len);
    amq__container want = *c;
    want.payload_len = payload_len;

    amq_diag diag = { "", 0 };
    uint8_t *encoded = NULL;
    size_t encoded_len = 0;
    assert_int_equal(amq__format_encode(&encoded, &encoded_len, c, pieces, piece_count, &diag),
                     AMQ_OK);
    assert_true(encoded_len == amq__format_encoded_size(c->params_len, payload_len));
    assert_int_equal(encoded_len % 8, 0);

    amq__container got;
    assert_int_equal(amq__format_parse(&got, encoded, encoded_len, &diag), AMQ_OK);
    assert_same_container(&got, &want, payload);
    assert_int_equal((size_t)(got.payload - encoded) % AMQ__FORMAT_ALIGN, 0);
    assert_ptr_equal(got.params, encoded + AMQ__FORMAT_HEADER_SIZE);

    char *path = join(dir, "round-trip.amq");
    uint64_t checksum = 0;
    assert_int_equal(amq__format_save(&checksum, path, c, pieces, piece_count, &diag), AMQ_OK);
    /* The save reports the checksum it wrote: the file's trailer. */
    assert_true(checksum == amq__load_u64le(encoded + encoded_len - AMQ__FORMAT_TRAILER_SIZE));
    for (int use_mmap = 0; use_mmap <= 1; use_mmap++) {
        amq__file_image img;
        assert_int_equal(amq__file_image_open(&img, path, use_mmap, &diag), AMQ_OK);
        assert_int_equal(img.mapped, use_mmap);
        assert_int_equal(img.len, encoded_len);
        assert_memory_equal(img.data, encoded, encoded_len);
        assert_int_equal(amq__format_parse(&got, img.data, img.len, &diag), AMQ_OK);
        assert_same_container(&got, &want, payload);
        if (use_mmap) /* a mapping starts on a page, so the payload is cache-line aligned */
            assert_int_equal((uintptr_t)got.payload % AMQ__FORMAT_ALIGN, 0);
        amq__file_image_close(&img);
        assert_null(img.data);
    }
    assert_int_equal(remove_temporaries(dir, "round-trip.amq"), 0);
    free(path);
    free(encoded);
    free(payload);
}

static void test_round_trips(void **state)
{
    const char *dir = *state;
    assert_non_null(dir);
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(0x5eed));

    static uint8_t data[3000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)amq_test_next(&rng);
    static uint8_t params[AMQ__FORMAT_PARAMS_MAX];
    for (size_t i = 0; i < sizeof params; i++)
        params[i] = (uint8_t)amq_test_next(&rng);
    uint8_t siphash_key[16];
    for (int i = 0; i < 16; i++)
        siphash_key[i] = (uint8_t)(0xf0 + i);

    const uint32_t params_lens[] = { 0, 1, 21, 63, 64, 65, AMQ__FORMAT_PARAMS_MAX };
    /* payloads as piece lengths: none, empty pieces, and sizes around the paddings */
    const uint64_t piece_sets[][4] = {
        { 0, 0, 0, 0 }, { 1, 0, 0, 0 },   { 7, 0, 0, 0 },         { 8, 0, 0, 0 },
        { 3, 0, 5, 1 }, { 64, 64, 1, 0 }, { 1000, 999, 1, 1000 },
    };
    const uint32_t families[] = { AMQ__FAMILY_BLOOM, AMQ__FAMILY_FUSE16, AMQ__FAMILY_MAX };

    for (size_t p = 0; p < sizeof params_lens / sizeof params_lens[0]; p++) {
        for (size_t s = 0; s < sizeof piece_sets / sizeof piece_sets[0]; s++) {
            amq__container c;
            memset(&c, 0, sizeof c);
            c.family = families[(p + s) % 3];
            switch ((p + s) % 3) {
            case 0:
                amq_hasher_xxh3(&c.hasher, amq_test_next(&rng));
                break;
            case 1:
                amq_hasher_md5(&c.hasher);
                break;
            default:
                amq_hasher_siphash(&c.hasher, siphash_key);
                break;
            }
            c.params = params;
            c.params_len = params_lens[p];
            amq__piece pieces[4];
            size_t at = 0;
            for (size_t i = 0; i < 4; i++) {
                pieces[i] = (amq__piece){ .data = data + at, .len = piece_sets[s][i] };
                at += piece_sets[s][i];
            }
            round_trip(dir, &c, pieces, 4);
            if (s == 0)
                round_trip(dir, &c, NULL, 0); /* no pieces at all */
        }
    }
}

/* ---- the golden file ------------------------------------------------------- */

static void test_golden_file(void **state)
{
    (void)state;
    golden g;
    golden_init(&g);
    uint8_t *encoded;
    size_t encoded_len;
    assert_int_equal(amq__format_encode(&encoded, &encoded_len, &g.container, g.pieces, 3, NULL),
                     AMQ_OK);

    char *path = golden_path();
    size_t len = 0;
    uint8_t *file = (uint8_t *)amq_test_read_file(path, &len);
    if (!file)
        fail_msg("cannot read %s", path);
    assert_int_equal(len, 160);
    /* A change here breaks every file already saved: a new format version
     * needs a new golden file, and this one must keep loading. */
    assert_int_equal(encoded_len, len);
    assert_memory_equal(encoded, file, len);

    /* The fields sit where docs/FORMAT.md says, independently of the parser. */
    const uint8_t magic[8] = { 0x89, 'A', 'M', 'Q', '\r', '\n', 0x1a, '\n' };
    assert_memory_equal(file, magic, 8);
    assert_int_equal(amq__load_u32le(file + 8), 1);
    assert_int_equal(amq__load_u32le(file + 12), AMQ__FAMILY_BLOOM);
    assert_int_equal(amq__load_u32le(file + 16), AMQ_HASH_XXH3);
    assert_int_equal(amq__load_u32le(file + 20), 0);
    assert_true(amq__load_u64le(file + 24) == 0x0123456789abcdefULL);
    assert_true(amq__load_u64le(file + 32) == 0);
    assert_int_equal(amq__load_u32le(file + 40), 21);
    for (int i = 44; i < 56; i++)
        assert_int_equal(file[i], 0);
    assert_true(amq__load_u64le(file + 56) == 19);
    assert_int_equal(file[64], 7);
    assert_int_equal(amq__load_u32le(file + 65), 1000000);
    for (int i = 85; i < 128; i++)
        assert_int_equal(file[i], 0);
    assert_memory_equal(file + 128, "amq golden payload!", 19);
    for (int i = 147; i < 152; i++)
        assert_int_equal(file[i], 0);
    assert_true(amq__load_u64le(file + 152) == amq__xxh3_64(file, 152, 0));

    amq__container c;
    amq_diag diag = { "", 0 };
    assert_int_equal(amq__format_parse(&c, file, len, &diag), AMQ_OK);
    assert_int_equal(c.family, AMQ__FAMILY_BLOOM);
    amq__params_reader r;
    amq__params_reader_init(&r, c.params, c.params_len);
    uint8_t u8;
    uint32_t u32;
    uint64_t u64;
    double f64;
    assert_int_equal(amq__params_get_u8(&r, &u8), AMQ_OK);
    assert_int_equal(amq__params_get_u32(&r, &u32), AMQ_OK);
    assert_int_equal(amq__params_get_u64(&r, &u64), AMQ_OK);
    assert_int_equal(amq__params_get_f64(&r, &f64), AMQ_OK);
    assert_int_equal(amq__params_end(&r), AMQ_OK);
    assert_int_equal(u8, 7);
    assert_int_equal(u32, 1000000);
    assert_true(u64 == 9585059);
    assert_true(f64 == 0.01);
    free(file);
    free(path);
    free(encoded);
}

/* ---- damage ---------------------------------------------------------------- */

/* Save a container and read the file back. */
static uint8_t *saved_bytes(const char *dir, const amq__container *c, const amq__piece *pieces,
                            size_t piece_count, size_t *len)
{
    char *path = join(dir, "damage.amq");
    assert_int_equal(amq__format_save(NULL, path, c, pieces, piece_count, NULL), AMQ_OK);
    uint8_t *bytes = (uint8_t *)amq_test_read_file(path, len);
    assert_non_null(bytes);
    free(path);
    return bytes;
}

static void check_every_byte_change(const uint8_t *file, size_t len)
{
    uint8_t *copy = exact_copy(file, len);
    amq__container c;
    amq_diag diag;
    for (size_t at = 0; at < len; at++) {
        for (unsigned mask = 1; mask < 256; mask++) {
            copy[at] ^= (uint8_t)mask;
            diag.message[0] = '\0';
            int status = amq__format_parse(&c, copy, len, &diag);
            int expected = AMQ_ECORRUPT;
            /* Version 2 is known, and needs flags, which a version-1
             * file has none of. */
            if (at < 8)
                expected = AMQ_EFORMAT;
            else if (at < 12 && amq__load_u32le(copy + 8) > AMQ__FORMAT_VERSION)
                expected = AMQ_EVERSION;
            if (status != expected)
                fail_msg("byte %zu ^ 0x%02x: got %d (%s), expected %d", at, mask, status,
                         diag.message, expected);
            assert_true(strlen(diag.message) > 0);
            copy[at] ^= (uint8_t)mask;
        }
    }
    assert_int_equal(amq__format_parse(&c, copy, len, NULL), AMQ_OK);
    free(copy);
}

static void test_every_byte_change_is_caught(void **state)
{
    const char *dir = *state;
    golden g;
    golden_init(&g);
    size_t len;
    uint8_t *file = saved_bytes(dir, &g.container, g.pieces, 3, &len);
    check_every_byte_change(file, len);
    free(file);

    /* No params, no payload: the smallest file; and a siphash key. */
    amq__container c;
    memset(&c, 0, sizeof c);
    c.family = AMQ__FAMILY_GCS;
    const uint8_t key[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    amq_hasher_siphash(&c.hasher, key);
    file = saved_bytes(dir, &c, NULL, 0, &len);
    assert_int_equal(len, 72);
    check_every_byte_change(file, len);
    free(file);
}

static void test_truncation_and_extension(void **state)
{
    (void)state;
    golden g;
    golden_init(&g);
    uint8_t *file;
    size_t len;
    assert_int_equal(amq__format_encode(&file, &len, &g.container, g.pieces, 3, NULL), AMQ_OK);
    amq_diag diag;
    for (size_t cut = 0; cut < len; cut++) {
        diag.message[0] = '\0';
        int status = parse_copy(file, cut, &diag);
        if (status != AMQ_ECORRUPT)
            fail_msg("truncated to %zu bytes: got %d (%s)", cut, status, diag.message);
        assert_non_null(strstr(diag.message, "truncated"));
    }
    uint8_t *longer = malloc(len + 1);
    assert_non_null(longer);
    memcpy(longer, file, len);
    for (unsigned extra = 0; extra < 256; extra += 85) {
        longer[len] = (uint8_t)extra;
        assert_int_equal(parse_copy(longer, len + 1, &diag), AMQ_ECORRUPT);
        assert_non_null(strstr(diag.message, "extra bytes"));
    }
    free(longer);
    free(file);
}

static void test_empty_and_missing_files(void **state)
{
    const char *dir = *state;
    char *path = join(dir, "empty.amq");
    amq_test_write_file(path, "", 0);
    for (int use_mmap = 0; use_mmap <= 1; use_mmap++) {
        amq__file_image img;
        amq_diag diag = { "", 0 };
        assert_int_equal(amq__file_image_open(&img, path, use_mmap, &diag), AMQ_OK);
        assert_int_equal(img.len, 0);
        assert_null(img.data);
        amq__container c;
        assert_int_equal(amq__format_parse(&c, img.data, img.len, &diag), AMQ_ECORRUPT);
        assert_non_null(strstr(diag.message, "file is 0 bytes"));
        amq__file_image_close(&img);
    }
    char *missing = join(dir, "missing.amq");
    for (int use_mmap = 0; use_mmap <= 1; use_mmap++) {
        amq__file_image img;
        amq_diag diag = { "", 0 };
        errno = 0;
        assert_int_equal(amq__file_image_open(&img, missing, use_mmap, &diag), AMQ_EIO);
        assert_int_equal(errno, ENOENT);
        assert_non_null(strstr(diag.message, missing));
        assert_null(img.data);
        /* A directory is said to be one, not reported as a failed read. */
        assert_int_equal(amq__file_image_open(&img, dir, use_mmap, &diag), AMQ_EFORMAT);
        assert_non_null(strstr(diag.message, "is a directory, not an amq file"));
        assert_null(img.data);
    }
    free(missing);
    free(path);
}

static void test_wrong_magic(void **state)
{
    (void)state;
    golden g;
    golden_init(&g);
    uint8_t *file;
    size_t len;
    assert_int_equal(amq__format_encode(&file, &len, &g.container, g.pieces, 3, NULL), AMQ_OK);
    amq_diag diag;

    memcpy(file, "PK\x03\x04zip!", 8);
    reseal(file, len);
    assert_int_equal(parse_copy(file, len, &diag), AMQ_EFORMAT);
    assert_non_null(strstr(diag.message, "not an amq file"));
    assert_int_equal(diag.offset, 0);

    /* CR LF turned into LF by a text-mode transfer: the magic loses a byte. */
    memcpy(file,
           "\x89"
           "AMQ\n\x1a\n\x01",
           8);
    assert_int_equal(parse_copy(file, len, &diag), AMQ_EFORMAT);
    assert_non_null(strstr(diag.message, "text mode"));
    assert_int_equal(diag.offset, 4);

    /* Short files that are not amq files at all. */
    const char *text = "hello, world\n";
    assert_int_equal(parse_copy((const uint8_t *)text, strlen(text), &diag), AMQ_EFORMAT);
    assert_int_equal(parse_copy((const uint8_t *)"{", 1, &diag), AMQ_EFORMAT);
    free(file);
}

/* Each header field's own check, with the checksum made valid again so
 * that the field check is what answers; diag.offset names the field. */
static void test_header_fields(void **state)
{
    (void)state;
    golden g;
    golden_init(&g);
    uint8_t *good;
    size_t len;
    assert_int_equal(amq__format_encode(&good, &len, &g.container, g.pieces, 3, NULL), AMQ_OK);
    uint8_t *file = malloc(len);
    assert_non_null(file);
    amq_diag diag;
    const uint64_t two63 = (uint64_t)1 << 63;

    struct {
        size_t at; /* where to patch */
        int width; /* 1, 4 or 8 bytes */
        uint64_t value;
        int expected;
        uint64_t offset; /* diag.offset */
        const char *says;
    } cases[] = {
        { 8, 4, 2, AMQ_ECORRUPT, 20, "version 2 has flags" },
        { 8, 4, 3, AMQ_EVERSION, 8, "newer" },
        { 8, 4, 0xffffffff, AMQ_EVERSION, 8, "newer" },
        { 8, 4, 0, AMQ_ECORRUPT, 8, "version" },
        { 12, 4, 0, AMQ_ECORRUPT, 12, "family" },
        { 12, 4, AMQ__FAMILY_MAX + 1, AMQ_ECORRUPT, 12, "family" },
        { 16, 4, 0, AMQ_ECORRUPT, 16, "hash kind" },
        { 16, 4, 4, AMQ_ECORRUPT, 16, "hash kind" },
        { 16, 4, AMQ_HASH_MD5, AMQ_ECORRUPT, 24, "hash key" }, /* md5 with a seed */
        { 39, 1, 1, AMQ_ECORRUPT, 24, "hash key" },            /* xxh3 uses 8 bytes */
        { 20, 4, 1, AMQ_ECORRUPT, 20, "flags" },
        { 23, 1, 0x80, AMQ_ECORRUPT, 20, "flags" },
        { 40, 4, AMQ__FORMAT_PARAMS_MAX + 1, AMQ_ECORRUPT, 40, "parameter block" },
        { 40, 4, 0xffffffff, AMQ_ECORRUPT, 40, "parameter block" },
        { 44, 1, 1, AMQ_ECORRUPT, 44, "reserved" },
        { 55, 1, 0xff, AMQ_ECORRUPT, 55, "reserved" },
        { 56, 8, two63 + 1, AMQ_ECORRUPT, 56, "payload length" },
        { 56, 8, UINT64_MAX, AMQ_ECORRUPT, 56, "payload length" },
        { 56, 8, UINT64_MAX - 63, AMQ_ECORRUPT, 56, "payload length" },
        { 56, 8, two63, AMQ_ECORRUPT, 160, "truncated" },
        { 56, 8, two63 - 160, AMQ_ECORRUPT, 160, "truncated" },
        { 56, 8, 27, AMQ_ECORRUPT, 160, "truncated" },
        { 56, 8, 0, AMQ_ECORRUPT, 160, "extra bytes" },
        { 40, 4, 65, AMQ_ECORRUPT, 160, "truncated" },
        { 100, 1, 1, AMQ_ECORRUPT, 100, "padding" },
        { 150, 1, 1, AMQ_ECORRUPT, 150, "padding" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(file, good, len);
        if (cases[i].width == 1)
            file[cases[i].at] = (uint8_t)cases[i].value;
        else if (cases[i].width == 4)
            amq__store_u32le(file + cases[i].at, (uint32_t)cases[i].value);
        else
            amq__store_u64le(file + cases[i].at, cases[i].value);
        reseal(file, len);
        memset(&diag, 0, sizeof diag);
        int status = parse_copy(file, len, &diag);
        if (status != cases[i].expected || diag.offset != cases[i].offset ||
            !strstr(diag.message, cases[i].says))
            fail_msg("case %zu (offset %zu = %llu): got %d at %llu \"%s\"", i, cases[i].at,
                     (unsigned long long)cases[i].value, status, (unsigned long long)diag.offset,
                     diag.message);
    }

    /* Version 2: the add-once flag, and no other. */
    const uint32_t flags[] = { 1, 2, 3, 0x80000001u };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        memcpy(file, good, len);
        amq__store_u32le(file + 8, 2);
        amq__store_u32le(file + 20, flags[i]);
        reseal(file, len);
        memset(&diag, 0, sizeof diag);
        amq__container c;
        int status = amq__format_parse(&c, file, len, &diag);
        if (flags[i] == AMQ__FORMAT_FLAG_ADD_ONCE) {
            assert_int_equal(status, AMQ_OK);
            assert_int_equal(c.flags, AMQ__FORMAT_FLAG_ADD_ONCE);
        } else {
            assert_int_equal(status, AMQ_ECORRUPT);
            assert_int_equal(diag.offset, 20);
        }
    }

    /* The checksum itself. */
    memcpy(file, good, len);
    file[130] ^= 1;
    assert_int_equal(parse_copy(file, len, &diag), AMQ_ECORRUPT);
    assert_non_null(strstr(diag.message, "checksum"));
    assert_int_equal(diag.offset, 152);
    free(file);
    free(good);
}

/* ---- writers' checks ------------------------------------------------------- */

static void test_writers_reject_bad_containers(void **state)
{
    const char *dir = *state;
    char *path = join(dir, "never.amq");
    golden g;
    golden_init(&g);
    const uint8_t byte = 0;
    const amq__piece huge[3] = { { .data = &byte, .len = (uint64_t)1 << 62 },
                                 { .data = &byte, .len = (uint64_t)1 << 62 },
                                 { .data = &byte, .len = 1 } };
    const amq__piece wrapping[2] = { { .data = &byte, .len = UINT64_MAX },
                                     { .data = &byte, .len = 2 } };

    for (int which = 0; which < 7; which++) {
        amq__container c = g.container;
        const amq__piece *pieces = g.pieces;
        size_t piece_count = 3;
        int expected = AMQ_EINVAL;
        switch (which) {
        case 0:
            c.family = 0;
            break;
        case 1:
            c.family = AMQ__FAMILY_MAX + 1;
            break;
        case 2:
            c.hasher.kind = (amq_hash_kind)4;
            break;
        case 3:
            c.hasher.key[15] = 1; /* xxh3 uses only bytes 0..7 */
            break;
        case 4:
            c.params_len = AMQ__FORMAT_PARAMS_MAX + 1;
            break;
        case 5:
            pieces = huge; /* 2^63 + 1 bytes: never read, the length is refused */
            expected = AMQ_ERANGE;
            break;
        default:
            pieces = wrapping;
            piece_count = 2;
            expected = AMQ_ERANGE;
            break;
        }
        uint8_t *out = NULL;
        size_t out_len = 0;
        amq_diag diag = { "", 0 };
        assert_int_equal(amq__format_encode(&out, &out_len, &c, pieces, piece_count, &diag),
                         expected);
        assert_null(out);
        assert_true(strlen(diag.message) > 0);
        assert_int_equal(amq__format_save(NULL, path, &c, pieces, piece_count, NULL), expected);
        assert_int_equal(count_entries(dir), 0);
    }
    amq_diag diag = { "", 0 };
    char *slash = join(dir, "");
    assert_int_equal(amq__format_save(NULL, slash, &g.container, g.pieces, 3, &diag), AMQ_EINVAL);
    assert_int_equal(count_entries(dir), 0);
    free(slash);
    free(path);
}

/* ---- saving ---------------------------------------------------------------- */

/* A new file gets mode 0644 less the umask; an existing one keeps its own
 * mode, whatever the umask. */
static void test_save_sets_and_keeps_mode(void **state)
{
    const char *dir = *state;
    char *path = join(dir, "filter.amq");
    char *other = join(dir, "other.amq");
    golden g;
    golden_init(&g);

    mode_t old_mask = umask(022);
    assert_int_equal(amq__format_save(NULL, path, &g.container, g.pieces, 3, NULL), AMQ_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(st.st_size, 160);
    umask(077);
    assert_int_equal(amq__format_save(NULL, other, &g.container, g.pieces, 3, NULL), AMQ_OK);
    assert_int_equal(stat(other, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    /* Rewriting keeps the file's mode, not the umask's. */
    static const mode_t modes[] = { 0640, 0604, 0666, 0200 };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        umask(i % 2 ? 022 : 077);
        assert_int_equal(chmod(path, modes[i]), 0);
        g.container.family = i % 2 ? AMQ__FAMILY_CUCKOO : AMQ__FAMILY_GCS;
        assert_int_equal(amq__format_save(NULL, path, &g.container, g.pieces, 3, NULL), AMQ_OK);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, modes[i]);
    }
    umask(old_mask);
    assert_int_equal(chmod(path, 0644), 0);

    amq__file_image img;
    amq__container c;
    assert_int_equal(amq__file_image_open(&img, path, false, NULL), AMQ_OK);
    assert_int_equal(amq__format_parse(&c, img.data, img.len, NULL), AMQ_OK);
    assert_int_equal(c.family, AMQ__FAMILY_CUCKOO);
    amq__file_image_close(&img);
    assert_int_equal(count_entries(dir), 2); /* no temporary file left */

    /* A bare file name saves into the current directory. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(amq__format_save(NULL, "bare.amq", &g.container, g.pieces, 3, NULL), AMQ_OK);
    assert_int_equal(chdir(cwd), 0);
    char *bare = join(dir, "bare.amq");
    assert_int_equal(stat(bare, &st), 0);
    assert_int_equal(count_entries(dir), 3);
    free(bare);
    free(other);
    free(path);
}

static void assert_holds(const char *path, const void *contents, size_t len)
{
    size_t got_len = 0;
    char *got = amq_test_read_file(path, &got_len);
    assert_non_null(got);
    assert_int_equal(got_len, len);
    assert_memory_equal(got, contents, len);
    free(got);
}

static void test_failed_saves_leave_old_file(void **state)
{
    const char *dir = *state;
    golden g;
    golden_init(&g);
    amq_diag diag = { "", 0 };

    /* A directory that does not exist. */
    char *nowhere = join(dir, "no-such-dir/filter.amq");
    errno = 0;
    assert_int_equal(amq__format_save(NULL, nowhere, &g.container, g.pieces, 3, &diag), AMQ_EIO);
    assert_int_equal(errno, ENOENT);
    assert_non_null(strstr(diag.message, nowhere));
    assert_non_null(strstr(diag.message, strerror(ENOENT)));
    free(nowhere);

    /* A path of nearly PATH_MAX bytes (19 missing directories of 200
     * characters): the message names it, and its temporary file's, in
     * full, and still ends with the reason. */
    char component[202];
    memset(component, 'd', 200);
    component[200] = '/';
    component[201] = '\0';
    char long_tail[19 * 201 + 16] = "";
    for (int i = 0; i < 19; i++)
        strcat(long_tail, component);
    strcat(long_tail, "filter.amq");
    char *far = join(dir, long_tail);
    assert_true(strlen(far) > 3800 && strlen(far) < 4096);
    assert_int_equal(amq__format_save(NULL, far, &g.container, g.pieces, 3, &diag), AMQ_EIO);
    assert_non_null(strstr(diag.message, far));
    const char *reason = strerror(ENOENT);
    size_t message_len = strlen(diag.message);
    assert_true(message_len > strlen(reason));
    assert_string_equal(diag.message + message_len - strlen(reason), reason);
    free(far);

    /* The path is a directory, or a link to one: refused before anything
     * is written. */
    char *subdir = join(dir, "a-directory");
    char *to_subdir = join(dir, "to-a-directory");
    assert_int_equal(mkdir(subdir, 0755), 0);
    assert_int_equal(symlink("a-directory", to_subdir), 0);
    assert_int_equal(amq__format_save(NULL, subdir, &g.container, g.pieces, 3, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "is a directory"));
    assert_int_equal(amq__format_save(NULL, to_subdir, &g.container, g.pieces, 3, &diag),
                     AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "is a directory"));
    assert_int_equal(count_entries(dir), 2);
    assert_int_equal(count_entries(subdir), 0);
    struct stat st;
    assert_int_equal(stat(subdir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    free(to_subdir);
    free(subdir);

    /* A directory without write permission (root ignores modes). */
    if (geteuid() == 0) {
        fprintf(stderr, "running as root: skipping the read-only directory case\n");
    } else {
        char *locked = join(dir, "locked");
        assert_int_equal(mkdir(locked, 0755), 0);
        char *path = join(locked, "filter.amq");
        amq_test_write_file(path, "old contents", 12);
        assert_int_equal(chmod(locked, 0555), 0);
        errno = 0;
        assert_int_equal(amq__format_save(NULL, path, &g.container, g.pieces, 3, &diag), AMQ_EIO);
        assert_int_equal(errno, EACCES);
        assert_non_null(strstr(diag.message, path));
        assert_int_equal(chmod(locked, 0755), 0);
        assert_holds(path, "old contents", 12);
        assert_int_equal(count_entries(locked), 1);
        free(path);
        free(locked);
    }
}

/* The file at path parses as a container of the given family. */
static void assert_saved(const char *path, uint32_t family)
{
    amq__file_image img;
    amq__container c;
    amq_diag diag = { "", 0 };
    if (amq__file_image_open(&img, path, false, &diag) != AMQ_OK ||
        amq__format_parse(&c, img.data, img.len, &diag) != AMQ_OK)
        fail_msg("%s: %s", path, diag.message);
    assert_int_equal(c.family, family);
    amq__file_image_close(&img);
}

static void assert_link_to(const char *link, const char *text)
{
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    char got[4096];
    ssize_t len = readlink(link, got, sizeof got - 1);
    assert_true(len > 0);
    got[len] = '\0';
    assert_string_equal(got, text);
}

/* A save through a symbolic link (or a chain of them, relative or
 * absolute) replaces the file at the end in its own directory; the links
 * stay links. A dangling link gets its target created; a loop is an
 * error. */
static void test_save_follows_symbolic_links(void **state)
{
    const char *dir = *state;
    char *real = join(dir, "real");
    char *links = join(dir, "links");
    assert_int_equal(mkdir(real, 0755), 0);
    assert_int_equal(mkdir(links, 0755), 0);
    char *target = join(real, "target.amq");
    char *link = join(links, "link.amq");
    char *chain = join(links, "chain.amq");
    amq_test_write_file(target, "old contents", 12);
    assert_int_equal(chmod(target, 0640), 0);
    assert_int_equal(symlink("../real/target.amq", link), 0);
    assert_int_equal(symlink("link.amq", chain), 0);
    golden g;
    golden_init(&g);

    assert_int_equal(amq__format_save(NULL, chain, &g.container, g.pieces, 3, NULL), AMQ_OK);
    assert_link_to(chain, "link.amq");
    assert_link_to(link, "../real/target.amq");
    assert_saved(target, AMQ__FAMILY_BLOOM);
    struct stat st;
    assert_int_equal(lstat(target, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(count_entries(links), 2);
    assert_int_equal(count_entries(real), 1);

    /* An absolute link, from a directory with no slash in the path. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(links), 0);
    assert_int_equal(symlink(target, "absolute.amq"), 0);
    g.container.family = AMQ__FAMILY_CUCKOO;
    assert_int_equal(amq__format_save(NULL, "absolute.amq", &g.container, g.pieces, 3, NULL),
                     AMQ_OK);
    assert_int_equal(chdir(cwd), 0);
    char *absolute = join(links, "absolute.amq");
    assert_link_to(absolute, target);
    assert_saved(target, AMQ__FAMILY_CUCKOO);
    assert_int_equal(count_entries(real), 1);

    /* A dangling link: its target is created, as a shell's > would. */
    char *dangling = join(links, "dangling.amq");
    char *created = join(real, "created.amq");
    assert_int_equal(symlink("../real/created.amq", dangling), 0);
    assert_int_equal(amq__format_save(NULL, dangling, &g.container, g.pieces, 3, NULL), AMQ_OK);
    assert_link_to(dangling, "../real/created.amq");
    assert_saved(created, AMQ__FAMILY_CUCKOO);

    /* A loop. */
    char *loop = join(links, "loop.amq");
    assert_int_equal(symlink("loop.amq", loop), 0);
    amq_diag diag = { "", 0 };
    errno = 0;
    assert_int_equal(amq__format_save(NULL, loop, &g.container, g.pieces, 3, &diag), AMQ_EIO);
    assert_int_equal(errno, ELOOP);
    assert_non_null(strstr(diag.message, "loop.amq"));
    assert_link_to(loop, "loop.amq");
    assert_int_equal(count_entries(links), 5);
    assert_int_equal(count_entries(real), 2);

    free(loop);
    free(created);
    free(dangling);
    free(absolute);
    free(chain);
    free(link);
    free(target);
    free(links);
    free(real);
}

/* A file without write permission is refused, even for root (who could
 * write it): AMQ_EIO, errno EACCES, the file as it was. */
static void test_save_refuses_read_only(void **state)
{
    const char *dir = *state;
    char *path = join(dir, "read-only.amq");
    char *link = join(dir, "link.amq");
    amq_test_write_file(path, "old contents", 12);
    assert_int_equal(chmod(path, 0444), 0);
    assert_int_equal(symlink("read-only.amq", link), 0);
    golden g;
    golden_init(&g);

    amq_diag diag = { "", 0 };
    errno = 0;
    assert_int_equal(amq__format_save(NULL, path, &g.container, g.pieces, 3, &diag), AMQ_EIO);
    assert_int_equal(errno, EACCES);
    assert_non_null(strstr(diag.message, "is read-only"));
    assert_non_null(strstr(diag.message, path));
    errno = 0;
    assert_int_equal(amq__format_save(NULL, link, &g.container, g.pieces, 3, &diag), AMQ_EIO);
    assert_int_equal(errno, EACCES);
    assert_non_null(strstr(diag.message, "is read-only"));
    assert_non_null(strstr(diag.message, "its target")); /* named */
    assert_holds(path, "old contents", 12);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0444);
    assert_int_equal(count_entries(dir), 2);

    /* Write permission for anyone but its owner is not the caller's. */
    if (geteuid() == 0) {
        assert_int_equal(chmod(path, 0644), 0);
        assert_int_equal(amq__format_save(NULL, link, &g.container, g.pieces, 3, NULL), AMQ_OK);
        assert_saved(path, AMQ__FAMILY_BLOOM);
    } else {
        assert_int_equal(chmod(path, 0466), 0);
        assert_int_equal(amq__format_save(NULL, path, &g.container, g.pieces, 3, &diag), AMQ_EIO);
        assert_non_null(strstr(diag.message, "is read-only"));
        assert_holds(path, "old contents", 12);
        assert_int_equal(chmod(path, 0644), 0);
        assert_int_equal(amq__format_save(NULL, link, &g.container, g.pieces, 3, NULL), AMQ_OK);
        assert_saved(path, AMQ__FAMILY_BLOOM);
    }
    assert_int_equal(count_entries(dir), 2);
    free(link);
    free(path);
}

/* Root's save keeps another user's file theirs (and its set-ID bits); a
 * process that cannot give the new file the old owner refuses, leaving the
 * file as it was. */
static void test_save_keeps_owner(void **state)
{
    if (geteuid() != 0) {
        fprintf(stderr, "not running as root: skipping the owner cases\n");
        return;
    }
    const uid_t nobody = 65534;
    const gid_t nogroup = 65534;
    const char *dir = *state;
    char *path = join(dir, "theirs.amq");
    amq_test_write_file(path, "old contents", 12);
    assert_int_equal(chown(path, nobody, nogroup), 0);
    assert_int_equal(chmod(path, 06664), 0);
    golden g;
    golden_init(&g);
    assert_int_equal(amq__format_save(NULL, path, &g.container, g.pieces, 3, NULL), AMQ_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, nobody);
    assert_int_equal(st.st_gid, nogroup);
    assert_int_equal(st.st_mode & 07777, 06664);
    assert_saved(path, AMQ__FAMILY_BLOOM);

    /* As nobody, a writable file of root's in a directory anyone writes. */
    char *roots = join(dir, "roots.amq");
    amq_test_write_file(roots, "old contents", 12);
    assert_int_equal(chmod(roots, 0666), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (setgid(nogroup) != 0 || setuid(nobody) != 0)
            _exit(3);
        if (access(dir, W_OK | X_OK) != 0)
            _exit(77); /* TMPDIR is out of nobody's reach */
        amq_diag diag = { "", 0 };
        errno = 0;
        int status = amq__format_save(NULL, roots, &g.container, g.pieces, 3, &diag);
        if (status != AMQ_EIO || errno != EPERM || !strstr(diag.message, "belongs to user 0")) {
            fprintf(stderr, "as nobody: status %d, errno %d, '%s'\n", status, errno, diag.message);
            _exit(1);
        }
        char *mine = join(dir, "mine.amq");
        if (amq__format_save(NULL, mine, &g.container, g.pieces, 3, NULL) != AMQ_OK)
            _exit(2);
        g.container.family = AMQ__FAMILY_CUCKOO;
        if (amq__format_save(NULL, mine, &g.container, g.pieces, 3, NULL) != AMQ_OK)
            _exit(2);
        free(mine);
        _exit(0);
    }
    int wstatus;
    assert_int_equal(waitpid(child, &wstatus, 0), child);
    assert_true(WIFEXITED(wstatus));
    if (WEXITSTATUS(wstatus) == 77) {
        fprintf(stderr, "the scratch directory is out of nobody's reach: skipping that case\n");
    } else {
        assert_int_equal(WEXITSTATUS(wstatus), 0);
        assert_holds(roots, "old contents", 12);
        char *mine = join(dir, "mine.amq");
        assert_int_equal(stat(mine, &st), 0);
        assert_int_equal(st.st_uid, nobody);
        assert_saved(mine, AMQ__FAMILY_CUCKOO);
        free(mine);
        assert_int_equal(count_entries(dir), 3);
    }
    free(roots);
    free(path);
}

/* A save replaces a name: the file's other hard links keep the old
 * contents. */
static void test_save_replaces_one_hard_link(void **state)
{
    const char *dir = *state;
    char *path = join(dir, "one.amq");
    char *other = join(dir, "other.amq");
    amq_test_write_file(path, "old contents", 12);
    assert_int_equal(link(path, other), 0);
    golden g;
    golden_init(&g);
    assert_int_equal(amq__format_save(NULL, path, &g.container, g.pieces, 3, NULL), AMQ_OK);
    assert_saved(path, AMQ__FAMILY_BLOOM);
    assert_holds(other, "old contents", 12);
    struct stat st;
    assert_int_equal(stat(other, &st), 0);
    assert_int_equal(st.st_nlink, 1);
    free(other);
    free(path);
}

/* Read what a save wrote into a pipe or FIFO: exactly one container. */
static void assert_pipe_holds_container(int fd, uint32_t family)
{
    uint8_t buf[1024];
    int64_t got = amq__read_full(fd, buf, sizeof buf, -1);
    assert_int_equal(got, 160);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, buf, (size_t)got, NULL), AMQ_OK);
    assert_int_equal(c.family, family);
}

/* A FIFO, a character device and a file some process holds open (named
 * under /proc/self/fd or /dev/fd) are written into, not replaced. */
static void test_save_into_fifo_device_and_open_file(void **state)
{
    const char *dir = *state;
    golden g;
    golden_init(&g);
    struct stat st;

    char *fifo = join(dir, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int reader = open(fifo, O_RDONLY | O_NONBLOCK); /* so that the writer's open returns */
    assert_true(reader >= 0);
    assert_int_equal(amq__format_save(NULL, fifo, &g.container, g.pieces, 3, NULL), AMQ_OK);
    assert_pipe_holds_container(reader, AMQ__FAMILY_BLOOM);
    close(reader);
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(count_entries(dir), 1);

    assert_int_equal(amq__format_save(NULL, "/dev/null", &g.container, g.pieces, 3, NULL), AMQ_OK);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));

#ifdef __linux__
    /* A pipe's write end, by its /dev/fd name (its link text is
     * "pipe:[N]", no path). */
    int ends[2];
    assert_int_equal(pipe(ends), 0);
    char name[64];
    snprintf(name, sizeof name, "/dev/fd/%d", ends[1]);
    g.container.family = AMQ__FAMILY_GCS;
    assert_int_equal(amq__format_save(NULL, name, &g.container, g.pieces, 3, NULL), AMQ_OK);
    close(ends[1]);
    assert_pipe_holds_container(ends[0], AMQ__FAMILY_GCS);
    close(ends[0]);

    /* A regular file open for appending (a shell's >>): appended to, the
     * same file. */
    char *log = join(dir, "log");
    amq_test_write_file(log, "head", 4);
    struct stat before;
    assert_int_equal(stat(log, &before), 0);
    int fd = open(log, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    uint64_t checksum = 0;
    assert_int_equal(amq__format_save(&checksum, name, &g.container, g.pieces, 3, NULL), AMQ_OK);
    close(fd);
    assert_int_equal(stat(log, &st), 0);
    assert_int_equal(st.st_ino, before.st_ino);
    size_t len = 0;
    char *bytes = amq_test_read_file(log, &len);
    assert_non_null(bytes);
    assert_int_equal(len, 4 + 160);
    assert_memory_equal(bytes, "head", 4);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, (const uint8_t *)bytes + 4, 160, NULL), AMQ_OK);
    /* The checksum reported is the appended container's trailer. */
    assert_true(checksum == amq__load_u64le((const uint8_t *)bytes + len - 8));
    free(bytes);
    free(log);
    assert_int_equal(count_entries(dir), 2);
#endif
    free(fifo);
}

/* A write that fails part-way (the file-size limit stands in for a full
 * disk): the partial temporary file is removed, the old file stays, errno
 * tells why. */
static void test_failed_write_leaves_old_file(void **state)
{
    const char *dir = *state;
    char *path = join(dir, "filter.amq");
    amq_test_write_file(path, "old contents", 12);
    golden g;
    golden_init(&g);

    struct rlimit old_limit;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    struct sigaction ignore, old_action;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    assert_int_equal(sigaction(SIGXFSZ, &ignore, &old_action), 0);
    /* 100 bytes: the first write (128 bytes of header and parameters) is
     * cut short, and the next one fails with EFBIG. */
    struct rlimit small = { 100, old_limit.rlim_max };
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    amq_diag diag = { "", 0 };
    errno = 0;
    int status = amq__format_save(NULL, path, &g.container, g.pieces, 3, &diag);
    int saved_errno = errno;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
    assert_int_equal(sigaction(SIGXFSZ, &old_action, NULL), 0);

    assert_int_equal(status, AMQ_EIO);
    assert_int_equal(saved_errno, EFBIG);
    assert_non_null(strstr(diag.message, "writing"));
    assert_non_null(strstr(diag.message, path));
    assert_holds(path, "old contents", 12);
    assert_int_equal(count_entries(dir), 1);
    free(path);
}

/* A writer killed at a random moment of a save leaves the previous file
 * whole. The child saves two alternating 64 MiB versions over one path
 * without pause; the parent kills it after a random delay, then the file
 * must parse and be exactly one of the two versions, and after the
 * parent's own save no temporary file may be left: a killed save's file
 * is unnamed, or named for its dead process and removed by the next save. */
static void test_kill_during_save(void **state)
{
    const size_t size = (size_t)64 << 20;
    amq_test_rng rng;
    amq_test_rng_init(&rng, amq_test_seed(0x5eed) ^ 0x6b696c6cULL);
    uint8_t *payloads[2] = { malloc(size), malloc(size) };
    assert_non_null(payloads[0]);
    assert_non_null(payloads[1]);
    for (size_t i = 0; i < size; i += 8) {
        uint64_t word = amq_test_next(&rng);
        memcpy(payloads[0] + i, &word, 8);
        word ^= 0x5555555555555555ULL;
        memcpy(payloads[1] + i, &word, 8);
    }
    const uint8_t version_names[2] = { 'A', 'B' };
    amq__container versions[2];
    amq__piece pieces[2][4];
    for (int v = 0; v < 2; v++) {
        memset(&versions[v], 0, sizeof versions[v]);
        versions[v].family = AMQ__FAMILY_BLOOM;
        amq_hasher_xxh3(&versions[v].hasher, (uint64_t)v);
        versions[v].params = &version_names[v];
        versions[v].params_len = 1;
        for (int i = 0; i < 4; i++)
            pieces[v][i] =
                (amq__piece){ .data = payloads[v] + (size_t)i * (size / 4), .len = size / 4 };
    }

    const char *dir = *state;
    char *path = join(dir, "big.amq");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(amq__format_save(NULL, path, &versions[0], pieces[0], 4, NULL), AMQ_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long save_us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;

    const int rounds = 15;
    int left = 0, seen[2] = { 0, 0 };
    for (int round = 0; round < rounds; round++) {
        fflush(NULL);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            for (unsigned i = 1;; i++)
                if (amq__format_save(NULL, path, &versions[i % 2], pieces[i % 2], 4, NULL) !=
                    AMQ_OK)
                    _exit(1);
        }
        /* A few ms up to two saves' time, so kills land anywhere in a save. */
        long delay_us = 1000 + (long)amq_test_below(&rng, (uint64_t)(2 * save_us + 1));
        struct timespec delay = { delay_us / 1000000, (delay_us % 1000000) * 1000 };
        nanosleep(&delay, NULL);
        assert_int_equal(kill(child, SIGKILL), 0);
        int wstatus;
        assert_int_equal(waitpid(child, &wstatus, 0), child);
        assert_true(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);

        amq__file_image img;
        amq__container c;
        amq_diag diag = { "", 0 };
        assert_int_equal(amq__file_image_open(&img, path, true, &diag), AMQ_OK);
        int status = amq__format_parse(&c, img.data, img.len, &diag);
        if (status != AMQ_OK)
            fail_msg("round %d: the file does not parse after the kill: %s", round, diag.message);
        assert_int_equal(c.params_len, 1);
        int v = c.params[0] == 'B';
        assert_int_equal(c.params[0], version_names[v]);
        assert_true(c.payload_len == size);
        assert_memory_equal(c.payload, payloads[v], size);
        seen[v]++;
        amq__file_image_close(&img);
        left += count_entries(dir) > 1;
        assert_int_equal(amq__format_save(NULL, path, &versions[v], pieces[v], 4, NULL), AMQ_OK);
        assert_int_equal(count_entries(dir), 1);
    }
    fprintf(stderr,
            "one save: %ld us; %d of %d kills left a temporary file until the next save; "
            "versions seen A %d, B %d\n",
            save_us, left, rounds, seen[0], seen[1]);
    free(path);
    free(payloads[0]);
    free(payloads[1]);
}

/* A pipe cannot be mapped or sized: it is read to its end instead. */
static void test_image_from_pipe(void **state)
{
    const char *dir = *state;
    char *fifo = join(dir, "pipe");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    golden g;
    golden_init(&g);
    const size_t payload_len = 200000; /* several times the first read buffer */
    uint8_t *payload = malloc(payload_len);
    assert_non_null(payload);
    for (size_t i = 0; i < payload_len; i++)
        payload[i] = (uint8_t)(i * 131);
    amq__piece piece = { .data = payload, .len = payload_len };
    uint8_t *encoded;
    size_t encoded_len;
    assert_int_equal(amq__format_encode(&encoded, &encoded_len, &g.container, &piece, 1, NULL),
                     AMQ_OK);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int fd = open(fifo, O_WRONLY);
        size_t done = 0;
        while (fd >= 0 && done < encoded_len) {
            ssize_t n = write(fd, encoded + done, encoded_len - done);
            if (n <= 0)
                _exit(1);
            done += (size_t)n;
        }
        _exit(fd >= 0 ? 0 : 1);
    }
    amq__file_image img;
    assert_int_equal(amq__file_image_open(&img, fifo, true, NULL), AMQ_OK);
    int wstatus;
    assert_int_equal(waitpid(child, &wstatus, 0), child);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    assert_false(img.mapped);
    assert_int_equal(img.len, encoded_len);
    assert_memory_equal(img.data, encoded, encoded_len);
    amq__container c;
    assert_int_equal(amq__format_parse(&c, img.data, img.len, NULL), AMQ_OK);
    assert_true(c.payload_len == payload_len);
    amq__file_image_close(&img);
    free(encoded);
    free(payload);
    free(fifo);
}

/* ---- parameter blocks ------------------------------------------------------ */

static void test_params_round_trip(void **state)
{
    (void)state;
    amq__params_writer w;
    amq__params_init(&w);
    amq__params_put_u8(&w, 0xab);
    amq__params_put_u32(&w, 0x01020304);
    amq__params_put_u64(&w, 0x1122334455667788ULL);
    const double doubles[] = { 0.01, -0.0, 1e-310, INFINITY, -INFINITY, 0x1.fffffffffffffp1023 };
    size_t n_doubles = sizeof doubles / sizeof doubles[0];
    for (size_t i = 0; i < n_doubles; i++)
        amq__params_put_f64(&w, doubles[i]);
    amq__params_put_f64(&w, NAN);
    assert_false(w.overflow);
    assert_int_equal(w.len, 1 + 4 + 8 + 8 * (n_doubles + 1));

    /* Little-endian whatever the host; doubles as their IEEE-754 bits. */
    const uint8_t head[13] = { 0xab, 4, 3, 2, 1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };
    assert_memory_equal(w.bytes, head, sizeof head);
    assert_true(amq__load_u64le(w.bytes + 13) == 0x3f847ae147ae147bULL); /* 0.01 */
    assert_true(amq__load_u64le(w.bytes + 21) == 0x8000000000000000ULL); /* -0.0 */

    amq__params_reader r;
    amq__params_reader_init(&r, w.bytes, w.len);
    uint8_t u8;
    uint32_t u32;
    uint64_t u64;
    double f64;
    assert_int_equal(amq__params_get_u8(&r, &u8), AMQ_OK);
    assert_int_equal(u8, 0xab);
    assert_int_equal(amq__params_get_u32(&r, &u32), AMQ_OK);
    assert_int_equal(u32, 0x01020304);
    assert_int_equal(amq__params_get_u64(&r, &u64), AMQ_OK);
    assert_true(u64 == 0x1122334455667788ULL);
    for (size_t i = 0; i < n_doubles; i++) {
        assert_int_equal(amq__params_get_f64(&r, &f64), AMQ_OK);
        assert_memory_equal(&f64, &doubles[i], sizeof f64); /* bit-exact, sign of zero too */
    }
    assert_int_equal(amq__params_end(&r), AMQ_ECORRUPT); /* the NaN is still unread */
    assert_int_equal(amq__params_get_f64(&r, &f64), AMQ_OK);
    assert_true(isnan(f64));
    assert_int_equal(amq__params_end(&r), AMQ_OK);

    /* Reading past the end fails without moving. */
    assert_int_equal(amq__params_get_u8(&r, &u8), AMQ_ECORRUPT);
    amq__params_reader_init(&r, w.bytes, 3);
    assert_int_equal(amq__params_get_u32(&r, &u32), AMQ_ECORRUPT);
    assert_int_equal(amq__params_get_u64(&r, &u64), AMQ_ECORRUPT);
    assert_int_equal(amq__params_get_f64(&r, &f64), AMQ_ECORRUPT);
    assert_int_equal(r.position, 0);
    assert_int_equal(amq__params_get_u8(&r, &u8), AMQ_OK);
    assert_int_equal(amq__params_get_u8(&r, &u8), AMQ_OK);
    assert_int_equal(amq__params_end(&r), AMQ_ECORRUPT); /* one byte left over */
    amq__params_reader_init(&r, NULL, 0);
    assert_int_equal(amq__params_end(&r), AMQ_OK);
    assert_int_equal(amq__params_get_u8(&r, &u8), AMQ_ECORRUPT);
}

static void test_params_overflow(void **state)
{
    (void)state;
    amq__params_writer w;
    amq__params_init(&w);
    for (int i = 0; i < AMQ__FORMAT_PARAMS_MAX - 4; i++)
        amq__params_put_u8(&w, (uint8_t)i);
    assert_false(w.overflow);
    amq__params_put_u64(&w, 1); /* 8 bytes into the last 4 */
    assert_true(w.overflow);
    assert_int_equal(w.len, AMQ__FORMAT_PARAMS_MAX - 4);
    amq__params_put_u32(&w, 2); /* would fit, but the block is already wrong */
    assert_int_equal(w.len, AMQ__FORMAT_PARAMS_MAX - 4);

    amq__params_init(&w);
    assert_false(w.overflow);
    assert_int_equal(w.len, 0);
    for (int i = 0; i < AMQ__FORMAT_PARAMS_MAX / 4; i++)
        amq__params_put_u32(&w, (uint32_t)i);
    assert_false(w.overflow);
    assert_int_equal(w.len, AMQ__FORMAT_PARAMS_MAX);
    amq__params_put_u8(&w, 1);
    assert_true(w.overflow);
    assert_int_equal(w.len, AMQ__FORMAT_PARAMS_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoded_size),
        AMQ_TEST_WITH_SCRATCH(test_round_trips),
        cmocka_unit_test(test_golden_file),
        AMQ_TEST_WITH_SCRATCH(test_every_byte_change_is_caught),
        cmocka_unit_test(test_truncation_and_extension),
        AMQ_TEST_WITH_SCRATCH(test_empty_and_missing_files),
        cmocka_unit_test(test_wrong_magic),
        cmocka_unit_test(test_header_fields),
        AMQ_TEST_WITH_SCRATCH(test_writers_reject_bad_containers),
        AMQ_TEST_WITH_SCRATCH(test_save_sets_and_keeps_mode),
        AMQ_TEST_WITH_SCRATCH(test_save_follows_symbolic_links),
        AMQ_TEST_WITH_SCRATCH(test_save_refuses_read_only),
        AMQ_TEST_WITH_SCRATCH(test_save_keeps_owner),
        AMQ_TEST_WITH_SCRATCH(test_save_replaces_one_hard_link),
        AMQ_TEST_WITH_SCRATCH(test_save_into_fifo_device_and_open_file),
        AMQ_TEST_WITH_SCRATCH(test_failed_saves_leave_old_file),
        AMQ_TEST_WITH_SCRATCH(test_failed_write_leaves_old_file),
        AMQ_TEST_WITH_SCRATCH(test_kill_during_save),
        AMQ_TEST_WITH_SCRATCH(test_image_from_pipe),
        cmocka_unit_test(test_params_round_trip),
        cmocka_unit_test(test_params_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
