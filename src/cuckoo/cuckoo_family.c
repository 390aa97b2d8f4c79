/*
 * cuckoo_family.c - the cuckoo filter seen through the generic handle
 * (core/family.h): its spec options, the saved form, loading (with every
 * field checked against the others and the tables' contents against their
 * headers), and info. The filter is explained at the top of cuckoo.c.
 *
 * Saved parameters, little-endian, in order: u32 f, u32 b, u32 layout (0
 * plain, 1 semi-sorted), u32 max_kicks, u32 growth, u64 capacity, f64
 * target fpr, u64 the walk's random state, u32 the table count; then per
 * table u64 buckets, u64 stored count, u64 stash bucket and u32 stash
 * fingerprint. The payload is the tables' packed slots, each rounded up to
 * whole bytes, one after the other.
 *
 * A filter with counted copies (cuckoo_overflow.c) adds to the block u32
 * block version 2, then per table u64 its overflow entries; and to the
 * payload, after the slots, each table's entries in increasing rank
 * (amq__cuckoo_overflow_rank: the splitmix64 finalizer of bucket * 2^32 +
 * fingerprint, the order the table's map holds them in, so that they are
 * written from it with no copy), each u32 bucket (the pair's lower one),
 * u32 fingerprint, u64 copies (16 bytes). A filter without any saves the block without
 * those fields, the bytes of a file an earlier amq wrote and still reads;
 * an earlier amq refuses the longer block.
 */
#include "amq/cuckoo.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/family.h"
#include "core/util.h"
#include "cuckoo/cuckoo_internal.h"

#include <stdlib.h>
#include <string.h>

static const amq__option option_fingerprint_bits = {
    .name = "fingerprint-bits",
    .type = AMQ__OPTION_COUNT,
    .count_min = AMQ_CUCKOO_MIN_FINGERPRINT_BITS,
    .count_max = AMQ_CUCKOO_MAX_FINGERPRINT_BITS,
    .value_name = "F",
    .help = "the bits of a fingerprint, 4 to 32 (default: from fpr)",
};
static const char *const bucket_size_names[] = { "2", "4", "8", NULL };
static const uint32_t bucket_size_values[] = { 2, 4, 8 };
static const amq__option option_bucket_size = {
    .name = "bucket-size",
    .type = AMQ__OPTION_CHOICE,
    .choices = bucket_size_names,
    .help = "the slots per bucket (default 4)",
};
static const amq__option option_max_kicks = {
    .name = "max-kicks",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = AMQ_CUCKOO_MAX_KICKS,
    .value_name = "K",
    .help = "the fingerprints an insert may relocate before the filter is full (default 500)",
};
static const amq__option option_growth = {
    .name = "growth",
    .type = AMQ__OPTION_COUNT,
    .count_min = 0,
    .count_max = AMQ_CUCKOO_MAX_GROWTH,
    .value_name = "S",
    .help = "0: a fixed size, full when full (default); 1, 2, 4, 8 or 16: chain a table that many "
            "times larger",
};
/* The block version of a filter with counted copies, and the bytes of one
 * saved entry. */
#define BLOCK_VERSION_COUNTED 2
#define SAVED_ENTRY_BYTES     16

static const amq__option option_semi_sort = {
    .name = "semi-sort",
    .type = AMQ__OPTION_FLAG,
    .help = "semi-sorted buckets: one bit less per slot, slower inserts",
};

static const amq__option *const cuckoo_options[] = {
    &amq__option_capacity,
    &amq__option_fpr,
    &option_fingerprint_bits,
    &option_bucket_size,
    &option_max_kicks,
    &option_growth,
    &option_semi_sort,
    &amq__option_seed,
    &amq__option_hash,
    &amq__option_key,
    NULL,
};

static int family_create(void **state, const amq__spec *spec, amq_diag *diag)
{
    amq_cuckoo_params params = {
        .capacity = amq__spec_count(spec, &amq__option_capacity, 0),
        .fpr = amq__spec_real(spec, &amq__option_fpr, 0),
        .fingerprint_bits = (uint32_t)amq__spec_count(spec, &option_fingerprint_bits, 0),
        .bucket_size = bucket_size_values[amq__spec_choice(spec, &option_bucket_size, 1)],
        .max_kicks = (uint32_t)amq__spec_count(spec, &option_max_kicks, 0),
        .growth = (uint32_t)amq__spec_count(spec, &option_growth, 0),
        .semi_sort = amq__spec_flag(spec, &option_semi_sort),
    };
    int status = amq__spec_hasher(spec, &params.hasher, 0, diag);
    if (status != AMQ_OK)
        return status;
    amq_cuckoo *f;
    status = amq_cuckoo_new(&f, &params, diag);
    *state = f;
    return status;
}

static int family_add(void *state, const void *key, size_t len)
{
    return amq_cuckoo_add(state, key, len);
}

static int family_add_unique(void *state, const void *key, size_t len)
{
    return amq_cuckoo_add_unique(state, key, len);
}

static size_t family_add_many(void *state, const void *const *keys, const size_t *lens,
                              size_t count, int *results)
{
    return amq__cuckoo_add_many_until_full(results, state, keys, lens, count, false);
}

static size_t family_add_unique_many(void *state, const void *const *keys, const size_t *lens,
                                     size_t count, int *results)
{
    return amq__cuckoo_add_many_until_full(results, state, keys, lens, count, true);
}

static int family_remove(void *state, const void *key, size_t len)
{
    return amq_cuckoo_remove(state, key, len);
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_cuckoo_contains(state, key, len);
}

static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    return amq_cuckoo_contains_many(results, state, keys, lens, count);
}

/* A table's counted entries as saved, 16 bytes each, read from its map in
 * the map's order (the saved one) into a bounded buffer. */
static int produce_counted(amq__emitter *e, const void *data, uint64_t arg)
{
    (void)arg;
    const amq__cuckoo_overflow *o = data;
    uint8_t buffer[AMQ__PRODUCE_BUFFER];
    size_t filled = 0;
    for (uint64_t i = 0; i < o->length; i++) {
        const amq__cuckoo_overflow_entry *entry = &o->entries[i];
        if (!entry->copies)
            continue;
        if (filled + SAVED_ENTRY_BYTES > sizeof buffer) {
            int answer = amq__emit(e, buffer, filled);
            if (answer != 0)
                return answer;
            filled = 0;
        }
        amq__store_u32le(buffer + filled, entry->bucket);
        amq__store_u32le(buffer + filled + 4, entry->fingerprint);
        amq__store_u64le(buffer + filled + 8, entry->copies);
        filled += SAVED_ENTRY_BYTES;
    }
    return amq__emit(e, buffer, filled);
}

/* The counted copies after the tables: the block's fields, and a piece of
 * each table's entries, made while it is written. */
static int save_counted(const amq_cuckoo *f, amq__saved *out)
{
    uint64_t entries = 0;
    for (size_t i = 0; i < f->table_count; i++)
        entries += f->tables[i].overflow.used;
    if (entries == 0)
        return AMQ_OK;
    amq__params_put_u32(&out->params, BLOCK_VERSION_COUNTED);
    for (size_t i = 0; i < f->table_count; i++) {
        const amq__cuckoo_overflow *o = &f->tables[i].overflow;
        amq__params_put_u64(&out->params, o->used);
        if (o->used)
            out->pieces[out->piece_count++] = (amq__piece){ .data = o,
                                                            .len = o->used * SAVED_ENTRY_BYTES,
                                                            .produce = produce_counted };
    }
    return AMQ_OK;
}

static int family_save(const void *state, amq__saved *out)
{
    const amq_cuckoo *f = state;
    out->hasher = f->hasher;
    amq__params_put_u32(&out->params, f->fingerprint_bits);
    amq__params_put_u32(&out->params, f->bucket_size);
    amq__params_put_u32(&out->params, f->semi_sorted);
    amq__params_put_u32(&out->params, f->max_kicks);
    amq__params_put_u32(&out->params, f->growth);
    amq__params_put_u64(&out->params, f->capacity);
    amq__params_put_f64(&out->params, f->target_fpr);
    amq__params_put_u64(&out->params, f->random_state);
    amq__params_put_u32(&out->params, (uint32_t)f->table_count);
    for (size_t i = 0; i < f->table_count; i++) {
        const amq__cuckoo_table *t = &f->tables[i];
        amq__params_put_u64(&out->params, t->buckets);
        amq__params_put_u64(&out->params, t->stored);
        amq__params_put_u64(&out->params, t->stash_bucket);
        amq__params_put_u32(&out->params, t->stash_fingerprint);
        out->pieces[i].data = t->slots;
        out->pieces[i].len = amq__cuckoo_table_bytes(f, t->buckets);
    }
    out->piece_count = f->table_count;
    return save_counted(f, out);
}

/* Check a loaded table against its saved header fields: the bits past the
 * last slot are zero, every semi-sorted bucket's prefix code is one of the
 * 3876, and the stored count is the occupied slots plus the stash. */
static int check_table(const amq_cuckoo *f, const amq__cuckoo_table *t, size_t index,
                       amq_diag *diag)
{
    uint64_t bits = t->buckets * f->bucket_bits;
    if (bits % 8 && (t->slots[bits / 8] >> (bits % 8)) != 0)
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo table %zu has bits set past its last slot",
                         index);
    uint64_t occupied = 0;
    for (uint64_t bucket = 0; bucket < t->buckets; bucket++) {
        if (f->semi_sorted) {
            uint64_t code = amq__packed_get(t->slots, amq__cuckoo_bucket_bit(f, bucket),
                                            AMQ__CUCKOO_SEMI_SORT_CODE_BITS);
            if (code >= AMQ__CUCKOO_SEMI_SORT_CODES)
                return amq__fail(diag, AMQ_ECORRUPT,
                                 "cuckoo table %zu bucket %llu has prefix code %llu, not below %d",
                                 index, (unsigned long long)bucket, (unsigned long long)code,
                                 AMQ__CUCKOO_SEMI_SORT_CODES);
        }
        occupied += f->bucket_size - amq__cuckoo_bucket_count(f, t, bucket, 0);
    }
    occupied += t->stash_fingerprint != 0;
    if (occupied != t->stored)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo table %zu holds %llu fingerprints, its header says %llu", index,
                         (unsigned long long)occupied, (unsigned long long)t->stored);
    return AMQ_OK;
}

static int load_table(amq_cuckoo *f, amq__params_reader *r, const amq__container *c,
                      uint64_t *offset, amq_diag *diag)
{
    size_t index = f->table_count;
    uint64_t buckets = 0, stored = 0, stash_bucket = 0;
    uint32_t stash_fingerprint = 0;
    if (amq__params_get_u64(r, &buckets) || amq__params_get_u64(r, &stored) ||
        amq__params_get_u64(r, &stash_bucket) || amq__params_get_u32(r, &stash_fingerprint))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo parameters end inside table %zu", index);
    unsigned shift = 0;
    if (index == 0) {
        if (buckets < 1 || buckets > AMQ_CUCKOO_MAX_BUCKETS)
            return amq__fail(diag, AMQ_ECORRUPT, "cuckoo table 0 has %llu buckets",
                             (unsigned long long)buckets);
        if (f->capacity > buckets * f->bucket_size)
            return amq__fail(
                diag, AMQ_ECORRUPT, "cuckoo capacity %llu is more than table 0's %llu slots",
                (unsigned long long)f->capacity, (unsigned long long)(buckets * f->bucket_size));
        f->base_buckets = buckets;
    } else {
        shift = f->tables[index - 1].shift + amq__cuckoo_growth_shift(f->growth);
        if (shift >= 32 || buckets != f->base_buckets << shift || buckets > AMQ_CUCKOO_MAX_BUCKETS)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "cuckoo table %zu has %llu buckets, not %u times table %zu's", index,
                             (unsigned long long)buckets, f->growth, index - 1);
    }
    if (stash_fingerprint > f->fingerprint_range ||
        (stash_fingerprint ? stash_bucket >= buckets : stash_bucket != 0))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo table %zu has an invalid stash", index);
    uint64_t bytes = amq__cuckoo_table_bytes(f, buckets);
    if (c->payload_len - *offset < bytes)
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo payload ends inside table %zu", index);
    int status = amq__cuckoo_table_open(f, shift);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "cannot allocate cuckoo table %zu", index);
    amq__cuckoo_table *t = &f->tables[index];
    memcpy(t->slots, c->payload + *offset, (size_t)bytes);
    *offset += bytes;
    t->stored = stored;
    t->stash_bucket = stash_bucket;
    t->stash_fingerprint = stash_fingerprint;
    amq__cuckoo_note_change(f);
    return check_table(f, t, index, diag);
}

/* The counted copies of a block of version 2 (the fields after the
 * tables) and their entries in the payload from *offset, each checked: in
 * range, in increasing rank (amq__cuckoo_overflow_rank: the map's order,
 * so no entry comes twice), for the lower bucket of its pair, and with the
 * pair storing b / 2 copies of its fingerprint (the overflow's invariant
 * O). */
static int load_counted(amq_cuckoo *f, amq__params_reader *r, const amq__container *c,
                        uint64_t *offset, amq_diag *diag)
{
    uint32_t version = 0;
    if (amq__params_get_u32(r, &version) || version != BLOCK_VERSION_COUNTED)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo parameters have trailing bytes, not block version %d",
                         BLOCK_VERSION_COUNTED);
    uint64_t counts[AMQ_CUCKOO_MAX_TABLES], total = 0;
    for (size_t i = 0; i < f->table_count; i++) {
        if (amq__params_get_u64(r, &counts[i]))
            return amq__fail(diag, AMQ_ECORRUPT,
                             "cuckoo parameters end inside the counted copies' sizes");
        /* Each entry's pair stores b / 2 of the table's fingerprints (O). */
        if (counts[i] > f->tables[i].stored / amq__cuckoo_pair_copies_max(f))
            return amq__fail(diag, AMQ_ECORRUPT,
                             "cuckoo table %zu has %llu counted entries, more than its %llu "
                             "fingerprints allow",
                             i, (unsigned long long)counts[i],
                             (unsigned long long)f->tables[i].stored);
        total += counts[i];
    }
    if (total == 0)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo block version %d without counted copies (saved as version 1)",
                         BLOCK_VERSION_COUNTED);
    if (c->payload_len - *offset != total * SAVED_ENTRY_BYTES)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo payload has %llu bytes for %llu counted entries of %d bytes",
                         (unsigned long long)(c->payload_len - *offset), (unsigned long long)total,
                         SAVED_ENTRY_BYTES);
    const uint8_t *at = c->payload + *offset;
    for (size_t i = 0; i < f->table_count; i++) {
        amq__cuckoo_table *t = &f->tables[i];
        uint64_t last_rank = 0;
        for (uint64_t j = 0; j < counts[i]; j++, at += SAVED_ENTRY_BYTES) {
            uint32_t bucket = amq__load_u32le(at);
            uint32_t fingerprint = amq__load_u32le(at + 4);
            uint64_t copies = amq__load_u64le(at + 8);
            uint64_t rank = amq__cuckoo_overflow_rank(bucket, fingerprint);
            bool ordered = j == 0 || rank > last_rank;
            if (bucket >= t->buckets || fingerprint < 1 || fingerprint > f->fingerprint_range ||
                copies < 1 || !ordered)
                return amq__fail(diag, AMQ_ECORRUPT,
                                 "cuckoo table %zu counted entry %llu is out of range or order", i,
                                 (unsigned long long)j);
            uint64_t other = amq__cuckoo_alternate(f, t, bucket, fingerprint, false);
            if (other < bucket || amq__cuckoo_pair_stored(f, t, fingerprint, bucket, other) <
                                      amq__cuckoo_pair_copies_max(f))
                return amq__fail(diag, AMQ_ECORRUPT,
                                 "cuckoo table %zu counts copies of fingerprint %u for bucket "
                                 "%u, whose pair does not store %u of them",
                                 i, fingerprint, bucket, amq__cuckoo_pair_copies_max(f));
            int status = amq__cuckoo_overflow_add(&t->overflow, bucket, fingerprint, copies);
            if (status == AMQ_ERANGE)
                return amq__fail(diag, AMQ_ECORRUPT,
                                 "cuckoo table %zu counts more than 2^64 - 1 copies", i);
            if (status != AMQ_OK)
                return amq__fail(diag, status, "cannot allocate cuckoo table %zu's counted copies",
                                 i);
            last_rank = rank;
        }
    }
    *offset = c->payload_len;
    return AMQ_OK;
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    *borrows_image = false;
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    uint32_t fingerprint_bits = 0, bucket_size = 0, layout = 0, max_kicks = 0, growth = 0,
             tables = 0;
    uint64_t capacity = 0, random_state = 0;
    double target_fpr = 0;
    if (amq__params_get_u32(&r, &fingerprint_bits) || amq__params_get_u32(&r, &bucket_size) ||
        amq__params_get_u32(&r, &layout) || amq__params_get_u32(&r, &max_kicks) ||
        amq__params_get_u32(&r, &growth) || amq__params_get_u64(&r, &capacity) ||
        amq__params_get_f64(&r, &target_fpr) || amq__params_get_u64(&r, &random_state) ||
        amq__params_get_u32(&r, &tables))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo parameters are %u bytes, too short",
                         c->params_len);
    if (fingerprint_bits < AMQ_CUCKOO_MIN_FINGERPRINT_BITS ||
        fingerprint_bits > AMQ_CUCKOO_MAX_FINGERPRINT_BITS)
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo fingerprint bits %u is out of range",
                         fingerprint_bits);
    if (!amq__cuckoo_bucket_size_valid(bucket_size))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo bucket size %u is not 2, 4 or 8", bucket_size);
    if (layout > 1 || (layout == 1 && !amq__cuckoo_semi_sort_valid(fingerprint_bits, bucket_size)))
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo layout %u does not fit %u-bit fingerprints in buckets of %u",
                         layout, fingerprint_bits, bucket_size);
    if (layout == 1)
        amq__cuckoo_semisort_init();
    /* A target FPR is a rate, or the full-table bound a filter made from
     * fingerprint bits alone records, which may pass 1. */
    bool target_valid = (target_fpr > 0 && target_fpr < 1) ||
                        target_fpr == amq__cuckoo_full_fpr(fingerprint_bits, bucket_size);
    if (max_kicks < 1 || max_kicks > AMQ_CUCKOO_MAX_KICKS || !amq__cuckoo_growth_valid(growth) ||
        capacity < 1 || !target_valid)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "cuckoo max kicks, growth, capacity or target fpr is out of range");
    if (tables < 1 || tables > AMQ_CUCKOO_MAX_TABLES || (tables > 1 && growth == 0))
        return amq__fail(diag, AMQ_ECORRUPT, "cuckoo table count %u is invalid", tables);
    amq_cuckoo *f = amq__calloc(1, sizeof *f);
    if (!f)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    amq__cuckoo_set_shape(f, fingerprint_bits, bucket_size, layout == 1);
    f->max_kicks = max_kicks;
    f->growth = growth;
    f->capacity = capacity;
    f->target_fpr = target_fpr;
    f->random_state = random_state;
    f->hasher = c->hasher;
    uint64_t offset = 0;
    int status = AMQ_OK;
    for (uint32_t i = 0; i < tables && status == AMQ_OK; i++)
        status = load_table(f, &r, c, &offset, diag);
    if (status == AMQ_OK && amq__params_end(&r))
        status = load_counted(f, &r, c, &offset, diag);
    if (status == AMQ_OK && amq__params_end(&r))
        status = amq__fail(diag, AMQ_ECORRUPT, "cuckoo parameters have trailing bytes");
    if (status == AMQ_OK && offset != c->payload_len)
        status = amq__fail(diag, AMQ_ECORRUPT, "cuckoo payload has %llu bytes past its tables",
                           (unsigned long long)(c->payload_len - offset));
    if (status != AMQ_OK) {
        amq_cuckoo_free(f);
        return status;
    }
    *state = f;
    return AMQ_OK;
}

static void family_info(const void *state, amq_info *out)
{
    const amq_cuckoo *f = state;
    uint64_t first_slots = f->base_buckets * f->bucket_size;
    out->capacity =
        (uint64_t)((double)f->capacity * (double)amq_cuckoo_slots(f) / (double)first_slots);
    out->keys = amq_cuckoo_keys(f);
    out->estimated_keys = (double)out->keys;
    out->memory_bytes = amq_cuckoo_memory_bytes(f);
    out->bits_per_key = (double)out->memory_bytes * 8 / (double)out->capacity;
    out->target_fpr = f->target_fpr;
    out->expected_fpr = amq_cuckoo_expected_fpr(f);
    out->hasher = f->hasher;
    amq__info_number(out, "fingerprint_bits", f->fingerprint_bits);
    amq__info_number(out, "bucket_size", f->bucket_size);
    amq__info_text(out, "layout", f->semi_sorted ? "semi-sorted" : "plain");
    amq__info_number(out, "buckets", (double)f->tables[0].buckets);
    amq__info_number(out, "tables", (double)f->table_count);
    amq__info_number(out, "load", amq_cuckoo_load_factor(f));
    amq__info_number(out, "max_kicks", f->max_kicks);
    amq__info_number(out, "growth", f->growth);
    amq__info_text(out, "stash", amq_cuckoo_full(f) ? "occupied" : "empty");
    amq__info_number(out, "counted_copies", (double)amq_cuckoo_counted_copies(f));
}

static void family_destroy(void *state)
{
    amq_cuckoo_free(state);
}

const amq__family amq__cuckoo_family = {
    .name = "cuckoo",
    .id = AMQ__FAMILY_CUCKOO,
    .options = cuckoo_options,
    .grows = true,
    .create = family_create,
    .add = family_add,
    .add_unique = family_add_unique,
    .add_many = family_add_many,
    .add_unique_many = family_add_unique_many,
    .remove = family_remove,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .save = family_save,
    .load = family_load,
    .info = family_info,
    .destroy = family_destroy,
};
