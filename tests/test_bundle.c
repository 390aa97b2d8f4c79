/*
 * Tests for bundles (src/bundle/bundle.c): many named filters and byte strings in
 * one file - round trips, name order and lookup, the size of a member's
 * framing, and every way a damaged bundle is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "amq/amq.h"
#include "amq/bundle.h"
#include "core/format.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A filter of the given spec over keys 0 .. n-1 of set 0 under seed. */
static amq_filter *filter_of(const char *spec, uint64_t seed, size_t n)
{
    amq_test_keys keys;
    amq_test_keys_make(&keys, seed, 0, n);
    amq_filter *f = NULL;
    amq_diag diag = { 0 };
    if (amq_build(&f, spec, keys.pointers, keys.lens, keys.count, &diag) != AMQ_OK)
        fail_msg("%s: %s", spec, diag.message);
    amq_test_keys_free(&keys);
    return f;
}

/* Member i of the round-trip bundle: its name and filter spec (or none). */
static void member_name(char *out, size_t cap, size_t i)
{
    snprintf(out, cap, "m%zu", i * 7919 % 1000);
}

static const char *member_spec(size_t i)
{
    static const char *const specs[] = { "gcs p=0.01",   "hfb p=0.01 hash=md5",
                                         "bloom p=0.01", "cuckoo p=0.01",
                                         "fuse8",        NULL };
    return specs[i % 6];
}

enum { MEMBERS = 300 };

static void write_round_trip(const char *path, amq_filter **filters, uint64_t seed)
{
    amq_bundle_writer *w = NULL;
    assert_int_equal(amq_bundle_writer_new(&w, NULL), AMQ_OK);
    for (size_t i = 0; i < MEMBERS; i++) {
        char name[32];
        member_name(name, sizeof name, i);
        const char *spec = member_spec(i);
        if (spec) {
            filters[i] = filter_of(spec, seed + i, 1 + i % 50);
            assert_int_equal(amq_bundle_add(w, name, strlen(name), filters[i], NULL), AMQ_OK);
        } else {
            filters[i] = NULL;
            assert_int_equal(amq_bundle_add_bytes(w, name, strlen(name), name, strlen(name), NULL),
                             AMQ_OK);
        }
    }
    assert_int_equal(amq_bundle_writer_members(w), MEMBERS);
    amq_diag diag = { 0 };
    if (amq_bundle_save(w, path, &diag) != AMQ_OK)
        fail_msg("save: %s", diag.message);
    amq_bundle_writer_free(w);
}

static void check_round_trip(const char *path, amq_filter **filters, uint64_t seed, unsigned flags)
{
    amq_bundle *b = NULL;
    amq_diag diag = { 0 };
    if (amq_bundle_open(&b, path, flags, &diag) != AMQ_OK)
        fail_msg("open: %s", diag.message);
    assert_int_equal(amq_bundle_members(b), MEMBERS);
    for (size_t i = 0; i < MEMBERS; i++) {
        char name[32];
        member_name(name, sizeof name, i);
        amq_bundle_member m;
        assert_int_equal(amq_bundle_find(&m, b, name, strlen(name)), 1);
        assert_int_equal(m.name_len, strlen(name));
        assert_memory_equal(m.name, name, m.name_len);
        amq_filter *opened = NULL;
        int status = amq_bundle_open_filter(&opened, b, name, strlen(name), &diag);
        if (!filters[i]) {
            assert_string_equal(m.family, "bytes");
            assert_int_equal(m.data_len, strlen(name));
            assert_memory_equal(m.data, name, m.data_len);
            assert_int_equal(status, AMQ_EINVAL);
            assert_non_null(strstr(diag.message, "plain bytes"));
            continue;
        }
        assert_string_equal(m.family, amq_filter_family(filters[i]));
        if (status != AMQ_OK)
            fail_msg("member %s: %s", name, diag.message);
        amq_test_expect_same_answers(filters[i], opened, seed + i, 200);
        amq_free(opened);
    }
    /* Listing gives the names in bytewise order, each found where listed. */
    amq_bundle_member previous = { 0 };
    for (uint64_t i = 0; i < MEMBERS; i++) {
        amq_bundle_member m, found;
        assert_int_equal(amq_bundle_member_at(&m, b, i), AMQ_OK);
        assert_int_equal(m.index, i);
        if (i > 0) {
            size_t common = m.name_len < previous.name_len ? m.name_len : previous.name_len;
            int order = memcmp(previous.name, m.name, common);
            assert_true(order < 0 || (order == 0 && previous.name_len < m.name_len));
        }
        assert_int_equal(amq_bundle_find(&found, b, m.name, m.name_len), 1);
        assert_int_equal(found.index, i);
        previous = m;
    }
    amq_bundle_member m;
    assert_int_equal(amq_bundle_member_at(&m, b, MEMBERS), AMQ_EINVAL);
    /* Names around the members' are absent: before the first, after the
     * last, prefixes and extensions of members. */
    const char *absent[] = { "", "a", "m", "m1000", "m99x", "zz", "m0\x01" };
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
        assert_int_equal(amq_bundle_find(&m, b, absent[i], strlen(absent[i])), 0);
        amq_filter *none = NULL;
        assert_int_equal(amq_bundle_open_filter(&none, b, absent[i], strlen(absent[i]), &diag),
                         AMQ_ENOTFOUND);
        assert_null(none);
    }
    amq_bundle_close(b);
}

static void test_round_trip(void **state)
{
    char path[4096];
    amq_test_scratch_path(path, state, "round.amqb");
    uint64_t seed = amq_test_seed(0xb0d1e);
    amq_filter *filters[MEMBERS];
    write_round_trip(path, filters, seed);
    check_round_trip(path, filters, seed, 0);
    check_round_trip(path, filters, seed, AMQ_LOAD_MMAP);
    for (size_t i = 0; i < MEMBERS; i++)
        amq_free(filters[i]);
}

/* A filter opened from a bundle keeps answering after the bundle closes. */
static void test_filter_outlives_bundle(void **state)
{
    char path[4096];
    amq_test_scratch_path(path, state, "outlive.amqb");
    uint64_t seed = amq_test_seed(0x0417);
    amq_filter *gcs = filter_of("gcs p=0.001", seed, 5000);
    amq_bundle_writer *w = NULL;
    assert_int_equal(amq_bundle_writer_new(&w, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_add(w, "g", 1, gcs, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_save(w, path, NULL), AMQ_OK);
    amq_bundle_writer_free(w);
    amq_bundle *b = NULL;
    assert_int_equal(amq_bundle_open(&b, path, AMQ_LOAD_MMAP, NULL), AMQ_OK);
    amq_filter *opened = NULL;
    assert_int_equal(amq_bundle_open_filter(&opened, b, "g", 1, NULL), AMQ_OK);
    amq_bundle_close(b);
    amq_test_expect_same_answers(gcs, opened, seed, 4000);
    amq_free(opened);
    amq_free(gcs);
}

static void test_empty_bundle_and_names(void **state)
{
    char path[4096];
    amq_test_scratch_path(path, state, "empty.amqb");
    amq_bundle_writer *w = NULL;
    assert_int_equal(amq_bundle_writer_new(&w, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_save(w, path, NULL), AMQ_OK);
    amq_bundle *b = NULL;
    assert_int_equal(amq_bundle_open(&b, path, 0, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_members(b), 0);
    amq_bundle_member m;
    assert_int_equal(amq_bundle_find(&m, b, "x", 1), 0);
    amq_bundle_close(b);

    /* The empty name and a name of every byte value are names like others;
     * a name one byte over the limit is refused; two equal names are
     * refused at saving, naming the name. */
    uint8_t long_name[AMQ_BUNDLE_NAME_MAX + 1];
    for (size_t i = 0; i < sizeof long_name; i++)
        long_name[i] = (uint8_t)i;
    amq_diag diag = { 0 };
    assert_int_equal(amq_bundle_add_bytes(w, "", 0, "e", 1, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_add_bytes(w, long_name, AMQ_BUNDLE_NAME_MAX, NULL, 0, NULL),
                     AMQ_OK);
    assert_int_equal(amq_bundle_add_bytes(w, long_name, sizeof long_name, NULL, 0, &diag),
                     AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "4097 bytes"));
    assert_int_equal(amq_bundle_save(w, path, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_open(&b, path, 0, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_members(b), 2);
    assert_int_equal(amq_bundle_find(&m, b, "", 0), 1);
    assert_int_equal(m.index, 0);
    assert_memory_equal(m.data, "e", 1);
    assert_int_equal(amq_bundle_find(&m, b, long_name, AMQ_BUNDLE_NAME_MAX), 1);
    assert_int_equal(m.data_len, 0);
    amq_bundle_close(b);
    assert_int_equal(amq_bundle_add_bytes(w, "", 0, "f", 1, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_save(w, path, &diag), AMQ_EINVAL);
    assert_non_null(strstr(diag.message, "two bundle members are named ''"));
    amq_bundle_writer_free(w);
}

/* What a bundle is for: many small filters cost little more than their
 * data. 5000 Golomb-coded sets of 1 ... 8 keys each: the framing (names,
 * kinds, hashers, delta-coded parameters, lengths and the index) stays
 * under 20 bytes a member, where a file each would add over 120. */
static void test_small_members_cost_little(void **state)
{
    char path[4096];
    amq_test_scratch_path(path, state, "small.amqb");
    uint64_t seed = amq_test_seed(0x5a11);
    enum { SMALL = 5000 };
    amq_bundle_writer *w = NULL;
    assert_int_equal(amq_bundle_writer_new(&w, NULL), AMQ_OK);
    for (uint32_t i = 0; i < SMALL; i++) {
        amq_filter *f = filter_of("gcs p=0.01", seed + i, 1 + i % 8);
        uint8_t name[3] = { (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
        assert_int_equal(amq_bundle_add(w, name, 3, f, NULL), AMQ_OK);
        amq_free(f);
    }
    assert_int_equal(amq_bundle_save(w, path, NULL), AMQ_OK);
    amq_bundle_writer_free(w);
    amq_bundle *b = NULL;
    assert_int_equal(amq_bundle_open(&b, path, 0, NULL), AMQ_OK);
    uint64_t data_bytes = 0;
    for (uint64_t i = 0; i < SMALL; i++) {
        amq_bundle_member m;
        assert_int_equal(amq_bundle_member_at(&m, b, i), AMQ_OK);
        assert_string_equal(m.family, "gcs");
        data_bytes += m.data_len + m.name_len;
    }
    double framing = (double)(amq_bundle_file_bytes(b) - data_bytes) / SMALL;
    print_message("framing: %.2f bytes a member (file %llu bytes, names and data %llu)\n", framing,
                  (unsigned long long)amq_bundle_file_bytes(b), (unsigned long long)data_bytes);
    assert_true(framing < 20);
    amq_bundle_close(b);
}

/* A filter file is not a bundle and a bundle is not a filter file: each
 * opener says which it found. */
static void test_bundle_and_filter_files_told_apart(void **state)
{
    char filter_path[4096], bundle_path[4096];
    amq_test_scratch_path(filter_path, state, "one.amq");
    amq_test_scratch_path(bundle_path, state, "many.amqb");
    amq_filter *f = filter_of("bloom p=0.01", 1, 100);
    assert_int_equal(amq_save(f, filter_path, NULL), AMQ_OK);
    amq_bundle_writer *w = NULL;
    assert_int_equal(amq_bundle_writer_new(&w, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_add(w, "b", 1, f, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_save(w, bundle_path, NULL), AMQ_OK);
    amq_bundle_writer_free(w);
    amq_free(f);
    amq_diag diag = { 0 };
    amq_bundle *b = NULL;
    assert_int_equal(amq_bundle_open(&b, filter_path, 0, &diag), AMQ_EFORMAT);
    assert_null(b);
    assert_non_null(strstr(diag.message, "holds one bloom filter, not a bundle"));
    amq_filter *loaded = NULL;
    assert_int_equal(amq_load(&loaded, bundle_path, 0, &diag), AMQ_EUNSUPPORTED);
    assert_null(loaded);
    assert_non_null(strstr(diag.message, "is a bundle of filters"));
}

/* ---- damaged bundles ------------------------------------------------------- */

/* A bundle container written by hand: params for count members in blocks
 * of block, the templates section, the records, and the index entries. */
static void write_bundle_with(const char *path, uint64_t count, uint32_t block,
                              const uint8_t *templates, uint64_t templates_len,
                              const uint8_t *records, uint64_t records_len, const uint64_t *index,
                              uint64_t index_entries)
{
    uint8_t params[36];
    for (int i = 0; i < 8; i++) {
        params[i] = (uint8_t)(count >> (8 * i));
        params[12 + i] = (uint8_t)(templates_len >> (8 * i));
        params[20 + i] = (uint8_t)(records_len >> (8 * i));
        params[28 + i] = (uint8_t)(index_entries >> (8 * i));
    }
    for (int i = 0; i < 4; i++)
        params[8 + i] = (uint8_t)(block >> (8 * i));
    uint64_t payload_len = templates_len + records_len + 8 * index_entries;
    uint8_t *payload = calloc((size_t)payload_len + 1, 1);
    assert_non_null(payload);
    memcpy(payload, templates, (size_t)templates_len);
    memcpy(payload + templates_len, records, (size_t)records_len);
    for (uint64_t e = 0; e < index_entries; e++)
        for (int i = 0; i < 8; i++)
            payload[templates_len + records_len + 8 * e + (uint64_t)i] =
                (uint8_t)(index[e] >> (8 * i));
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, 0);
    amq_test_write_container(path, AMQ__FAMILY_BUNDLE, &hasher, params, sizeof params, payload,
                             payload_len);
    free(payload);
}

/* The same without templates (a templates section of count 0). */
static void write_bundle(const char *path, uint64_t count, uint32_t block, const uint8_t *records,
                         uint64_t records_len, const uint64_t *index, uint64_t index_entries)
{
    static const uint8_t no_templates[] = { 0 };
    write_bundle_with(path, count, block, no_templates, 1, records, records_len, index,
                      index_entries);
}

static void expect_refused(const char *path, const char *fragment, const char *what)
{
    amq_bundle *b = NULL;
    amq_diag diag = { 0 };
    int status = amq_bundle_open(&b, path, 0, &diag);
    if (status != AMQ_ECORRUPT || b || !strstr(diag.message, fragment))
        fail_msg("%s: status %d, message '%s'; expected AMQ_ECORRUPT and '%s'", what, status,
                 diag.message, fragment);
}

/* Three plain-bytes members "a", "b", "c" with one byte of data each. */
static const uint8_t three_records[] = { 1, 'a', 0, 1, 'x', 1, 'b', 0, 1, 'y', 1, 'c', 0, 1, 'z' };

static void test_damaged_bundles_refused(void **state)
{
    char path[4096];
    amq_test_scratch_path(path, state, "damaged.amqb");
    uint64_t index0[] = { 0 }, index2[] = { 0, 10 };
    uint8_t r[64];

    write_bundle(path, 3, 32, three_records, sizeof three_records, index0, 1);
    amq_bundle *b = NULL;
    assert_int_equal(amq_bundle_open(&b, path, 0, NULL), AMQ_OK);
    amq_bundle_member m;
    assert_int_equal(amq_bundle_find(&m, b, "b", 1), 1);
    assert_memory_equal(m.data, "y", 1);
    amq_bundle_close(b);

    /* Blocks of 2: the second block starts at byte 10. */
    write_bundle(path, 3, 2, three_records, sizeof three_records, index2, 2);
    assert_int_equal(amq_bundle_open(&b, path, 0, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_find(&m, b, "c", 1), 1);
    amq_bundle_close(b);
    uint64_t index_wrong[] = { 0, 5 };
    write_bundle(path, 3, 2, three_records, sizeof three_records, index_wrong, 2);
    expect_refused(path, "index entry 1 says member 2 starts at 5", "index entry");

    write_bundle(path, 3, 32, three_records, sizeof three_records, index2, 2);
    expect_refused(path, "do not fit", "index entries");
    write_bundle(path, 3, 0, three_records, sizeof three_records, index0, 1);
    expect_refused(path, "block size 0", "block size");
    write_bundle(path, 4, 32, three_records, sizeof three_records, index0, 1);
    expect_refused(path, "member 3", "more members than records");
    write_bundle(path, 2, 32, three_records, sizeof three_records, index0, 1);
    expect_refused(path, "5 bytes of member records are left", "fewer members than records");

    memcpy(r, three_records, sizeof three_records);
    r[6] = 'a'; /* "a", "a", "c" */
    write_bundle(path, 3, 32, r, sizeof three_records, index0, 1);
    expect_refused(path, "does not come after", "repeated name");
    r[6] = 'c';
    r[11] = 'b'; /* "a", "c", "b" */
    write_bundle(path, 3, 32, r, sizeof three_records, index0, 1);
    expect_refused(path, "member 2", "names out of order");

    write_bundle(path, 3, 32, three_records, sizeof three_records - 1, index0, 1);
    expect_refused(path, "cut off in its data", "cut off");
    const uint8_t non_minimal[] = { 0x81, 0x00, 'a', 0, 1, 'x' };
    write_bundle(path, 1, 32, non_minimal, sizeof non_minimal, index0, 1);
    expect_refused(path, "name length", "non-minimal varint");
    const uint8_t flagged_bytes[] = { 1, 'a', 0x40, 1, 'x' };
    write_bundle(path, 1, 32, flagged_bytes, sizeof flagged_bytes, index0, 1);
    expect_refused(path, "plain-bytes member has filter flags", "flags on bytes");
    const uint8_t nested[] = { 1, 'a', AMQ__FAMILY_BUNDLE, AMQ_HASH_MD5, 0, 0 };
    write_bundle(path, 1, 32, nested, sizeof nested, index0, 1);
    expect_refused(path, "cannot be a bundle", "nested bundle");
    const uint8_t orphan_delta[] = { 1, 'a', AMQ__FAMILY_GCS | 0x40, 1, 0, 0, 0 };
    write_bundle(path, 1, 32, orphan_delta, sizeof orphan_delta, index0, 1);
    expect_refused(path, "template its family does not have", "delta without a template");
    const uint8_t bad_hash[] = { 1, 'a', AMQ__FAMILY_GCS, 9, 0, 0, 0 };
    write_bundle(path, 1, 32, bad_hash, sizeof bad_hash, index0, 1);
    expect_refused(path, "hash kind is unknown", "hash kind");
    const uint8_t long_params[] = { 1, 'a', AMQ__FAMILY_GCS, AMQ_HASH_MD5, 0x81, 0x20, 0, 0 };
    write_bundle(path, 1, 32, long_params, sizeof long_params, index0, 1);
    expect_refused(path, "above 4096", "parameters too long");
    const uint8_t too_many_zeros[] = { 1, 'a', AMQ__FAMILY_GCS, AMQ_HASH_MD5, 0, 1, 2 };
    write_bundle(path, 1, 32, too_many_zeros, sizeof too_many_zeros, index0, 1);
    expect_refused(path, "more zero bytes than its data has", "zeros past the data");

    /* A gcs template of 3 parameter bytes 1, 2, 3 under MD5; a member whose
     * delta bitmap (1 byte for 3 bytes of parameters) marks byte 5. */
    const uint8_t gcs_template[] = { 1, AMQ__FAMILY_GCS, AMQ_HASH_MD5, 3, 1, 2, 3 };
    const uint8_t stray_bit[] = { 1, 'b', AMQ__FAMILY_GCS | 0xC0, 3, 0x20, 0, 0 };
    write_bundle_with(path, 1, 32, gcs_template, sizeof gcs_template, stray_bit, sizeof stray_bit,
                      index0, 1);
    expect_refused(path, "past the parameters", "stray bitmap bit");
    const uint8_t repeated_template[] = { 2, AMQ__FAMILY_GCS, AMQ_HASH_MD5,
                                          0, AMQ__FAMILY_GCS, AMQ_HASH_MD5,
                                          0 };
    write_bundle_with(path, 3, 32, repeated_template, sizeof repeated_template, three_records,
                      sizeof three_records, index0, 1);
    expect_refused(path, "templates: its family ids are not increasing", "repeated template");
    const uint8_t template_bad_hash[] = { 1, AMQ__FAMILY_GCS, 7, 0 };
    write_bundle_with(path, 3, 32, template_bad_hash, sizeof template_bad_hash, three_records,
                      sizeof three_records, index0, 1);
    expect_refused(path, "templates: its hash kind is unknown", "template hash kind");
    const uint8_t template_left_over[] = { 0, 0 };
    write_bundle_with(path, 3, 32, template_left_over, sizeof template_left_over, three_records,
                      sizeof three_records, index0, 1);
    expect_refused(path, "left after the last template", "bytes after the templates");

    /* Framing that holds but a member whose data its family refuses: the
     * bundle opens, that member does not. Its parameters are the template's
     * but its second byte. */
    const uint8_t bad_member[] = { 1, 'a', AMQ__FAMILY_GCS | 0xC0, 3, 0x02, 9, 0, 0 };
    write_bundle_with(path, 1, 32, gcs_template, sizeof gcs_template, bad_member, sizeof bad_member,
                      index0, 1);
    assert_int_equal(amq_bundle_open(&b, path, 0, NULL), AMQ_OK);
    amq_filter *f = NULL;
    amq_diag diag = { 0 };
    assert_int_equal(amq_bundle_open_filter(&f, b, "a", 1, &diag), AMQ_ECORRUPT);
    assert_null(f);
    amq_bundle_close(b);

    /* And any flipped byte or lost tail of a real bundle is refused by the
     * container's checks before the records are read. */
    amq_bundle_writer *w = NULL;
    assert_int_equal(amq_bundle_writer_new(&w, NULL), AMQ_OK);
    amq_filter *small = filter_of("gcs p=0.01", 3, 20);
    assert_int_equal(amq_bundle_add(w, "s", 1, small, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_add_bytes(w, "t", 1, "bytes", 5, NULL), AMQ_OK);
    assert_int_equal(amq_bundle_save(w, path, NULL), AMQ_OK);
    amq_bundle_writer_free(w);
    amq_free(small);
    size_t len = 0;
    uint8_t *file = (uint8_t *)amq_test_read_file(path, &len);
    for (size_t at = 0; at < len; at++) {
        file[at] ^= 0x10;
        amq_test_write_file(path, file, len);
        assert_true(amq_bundle_open(&b, path, 0, NULL) < 0);
        file[at] ^= 0x10;
        amq_test_write_file(path, file, at);
        assert_true(amq_bundle_open(&b, path, 0, NULL) < 0);
    }
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, amq_test_scratch_setup,
                                        amq_test_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_filter_outlives_bundle, amq_test_scratch_setup,
                                        amq_test_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_empty_bundle_and_names, amq_test_scratch_setup,
                                        amq_test_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_small_members_cost_little, amq_test_scratch_setup,
                                        amq_test_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_bundle_and_filter_files_told_apart,
                                        amq_test_scratch_setup, amq_test_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_damaged_bundles_refused, amq_test_scratch_setup,
                                        amq_test_scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
