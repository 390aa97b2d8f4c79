/*
 * hfb_family.c - the hash-free Bloom banks (hfb.c) as the generic handle
 * sees them: the spec's options, building from keys, the saved form and
 * amq_info.
 *
 * Spec: "hfb [p=P] [bank-bits=LEN] [hash=md5]". Without hash=md5 every key
 * is a 16-byte ID; with it, each key is hashed into its ID by MD5. hash=xxh3
 * or siphash, seed and key are refused with the reason: the IDs are not
 * hashed by the filter.
 *
 * Saved form (docs/FORMAT.md, family 7). The container's hasher records the
 * IDs' kind: MD5 for MD5 IDs, XXH3 with seed 0 for raw IDs (not used: raw
 * IDs are not hashed); the loader refuses any other. The parameter block is
 *
 *     u8 ids (0 raw, 1 MD5) | u8 banks k | u64 distinct IDs n |
 *     f64 target p | f64 deviation |
 *     k times: u8 start | u8 len | u8 encoding (0 raw, 1 Golomb-Rice) |
 *              u8 Rice parameter | u64 weight | u64 stored bits
 *
 * and the payload is the banks' stored forms one after another in query
 * order: raw, ceil(2^len / 64) little-endian 64-bit words (bit v is bit
 * v % 64 of word v / 64); Golomb-Rice, the code of the gaps (hfb.c) in
 * ceil(stored bits / 8) bytes, MSB-first, padded with 0-bits. A Golomb
 * bank's code is not kept in memory beside its bits: saving codes the bits
 * again (one scan of 2^len bits), and the code being unique for the
 * positions and the parameter, a loaded filter saves to the bytes it was
 * loaded from.
 *
 * Loading checks every field before it allocates (amq__hfb_check_bank),
 * then decodes: a raw bank's set bits must number its weight; a coded bank
 * must hold exactly weight positions below 2^len, end exactly at its stored
 * bits, and have zero padding. Anything else is AMQ_ECORRUPT.
 */
#include "core/alloc.h"
#include "core/family.h"
#include "core/util.h"
#include "hfb/hfb_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Banks amq_info lists one by one (4 details each). */
#define INFO_BANKS_LISTED 5

/* ---- the generic handle's view ---------------------------------------------------- */

static const amq__option option_bank_bits = {
    .name = "bank-bits",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = AMQ_HFB_MAX_BANK_BITS,
    .value_name = "LEN",
    .help =
        "banks of 2^LEN bits (default: the smallest stored filter for fpr within 1.5x in memory)",
};

/* seed and key are listed only to be refused with a reason. */
static const amq__option *const hfb_options[] = {
    &amq__option_fpr,  &option_bank_bits, &amq__option_hash,
    &amq__option_seed, &amq__option_key,  NULL,
};

static int family_build(void **state, const amq__spec *spec, const void *const *keys,
                        const size_t *lens, size_t count, amq_diag *diag)
{
    const amq__option_value *hash = amq__spec_get(spec, &amq__option_hash);
    if (hash && strcmp(amq__option_hash.choices[hash->choice], "md5") != 0)
        return amq__fail(diag, AMQ_EINVAL,
                         "hfb takes raw 16-byte IDs, or hash=md5 to hash keys into IDs; "
                         "not hash=%s",
                         amq__option_hash.choices[hash->choice]);
    if (amq__spec_get(spec, &amq__option_seed) || amq__spec_get(spec, &amq__option_key))
        return amq__fail(diag, AMQ_EINVAL,
                         "hfb takes no %s: its IDs are used as they are (raw IDs or MD5 "
                         "digests with hash=md5)",
                         amq__spec_get(spec, &amq__option_seed) ? "seed" : "key");
    amq_hfb_params params = {
        .fpr = amq__spec_real(spec, &amq__option_fpr, AMQ_HFB_DEFAULT_FPR),
        .bank_bits = (uint32_t)amq__spec_count(spec, &option_bank_bits, 0),
        .ids = hash ? AMQ_HFB_IDS_MD5 : AMQ_HFB_IDS_RAW,
    };
    amq_hfb *f;
    int status = amq_hfb_build(&f, &params, keys, lens, count, diag);
    *state = f;
    return status;
}

static int family_contains(const void *state, const void *key, size_t len)
{
    return amq_hfb_contains(state, key, len);
}

static int family_contains_many(const void *state, const void *const *keys, const size_t *lens,
                                size_t count, uint8_t *results)
{
    return amq_hfb_contains_many(results, state, keys, lens, count);
}

static void saved_hasher(const amq_hfb *f, amq_hasher *out)
{
    if (f->ids == AMQ_HFB_IDS_MD5)
        amq_hasher_md5(out);
    else
        amq_hasher_xxh3(out, 0);
}

/* Saved: u8 ids (0 raw, 1 MD5), u8 bank count, u64 IDs, f64 target fpr,
 * f64 deviation; then per bank u8 start, u8 len, u8 encoding (0 raw,
 * 1 Golomb-Rice), u8 Rice parameter, u64 weight, u64 stored bits. The
 * payload is the banks' stored forms one after another, in query order. */
static int family_save(const void *state, amq__saved *out)
{
    const amq_hfb *f = state;
    saved_hasher(f, &out->hasher);
    amq__params_put_u8(&out->params, (uint8_t)f->ids);
    amq__params_put_u8(&out->params, (uint8_t)f->bank_count);
    amq__params_put_u64(&out->params, f->id_count);
    amq__params_put_f64(&out->params, f->target_fpr);
    amq__params_put_f64(&out->params, f->deviation);
    for (size_t i = 0; i < f->bank_count; i++) {
        const amq__hfb_bank *bank = &f->banks[i];
        amq__params_put_u8(&out->params, (uint8_t)bank->start);
        amq__params_put_u8(&out->params, (uint8_t)bank->len);
        amq__params_put_u8(&out->params, (uint8_t)bank->encoding);
        amq__params_put_u8(&out->params, (uint8_t)bank->rice_bits);
        amq__params_put_u64(&out->params, bank->weight);
        amq__params_put_u64(&out->params, bank->stored_bits);
        /* One piece a bank; a coded bank's code is made while it is
         * written (hfb_internal.h). */
        if (amq__hfb_bank_stored_bytes(bank) > 0)
            out->pieces[out->piece_count++] = amq__hfb_bank_piece(bank);
    }
    return AMQ_OK;
}

/* A bank of 2^len zero bits for decoding a Rice code of weight positions.
 * A sparse one (fewer set bits than 4 KiB pages) is allocated sparse, so
 * that only the pages its bits touch are ever made: a small file cannot
 * make the loader write gigabytes. A denser one is an ordinary (huge-page)
 * table. */
static int bank_alloc_for_code(amq__bitvec *bits, uint32_t len, uint64_t weight)
{
    uint64_t m = amq__hfb_bank_size(len);
    return weight >= m / (4096 * 8) ? amq__bitvec_init(bits, m) : amq__bitvec_init_sparse(bits, m);
}

/* Decode bank i's Rice code (its header fields already set) from bytes. */
static int decode_rice(amq__hfb_bank *bank, size_t i, const uint8_t *bytes, amq_diag *diag)
{
    uint64_t m = amq__hfb_bank_size(bank->len);
    int status = bank_alloc_for_code(&bank->bits, bank->len, bank->weight);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "cannot allocate hfb bank %zu of 2^%u bits", i, bank->len);
    amq__bitreader reader;
    amq__bitreader_init(&reader, bytes, bank->stored_bits);
    uint64_t next = 0;
    for (uint64_t k = 0; k < bank->weight; k++) {
        uint64_t gap;
        if (amq__bitreader_get_rice(&reader, bank->rice_bits, &gap) != AMQ_OK)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "hfb bank %zu's code ends after %llu of %llu "
                             "positions",
                             i, (unsigned long long)k, (unsigned long long)bank->weight);
        if (gap >= m - next)
            return amq__fail(diag, AMQ_ECORRUPT, "hfb bank %zu's position %llu is past 2^%u", i,
                             (unsigned long long)k, bank->len);
        amq__bitvec_set(&bank->bits, next + gap);
        next += gap + 1;
    }
    if (reader.position != bank->stored_bits)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "hfb bank %zu's code has %llu bits past its %llu positions", i,
                         (unsigned long long)(bank->stored_bits - reader.position),
                         (unsigned long long)bank->weight);
    unsigned tail = (unsigned)(bank->stored_bits % 8);
    if (tail && (bytes[bank->stored_bits / 8] & (0xffu >> tail)) != 0)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb bank %zu's code has padding bits set", i);
    return AMQ_OK;
}

static int load_bank(amq_hfb *f, amq__params_reader *r, const amq__container *c, uint64_t *offset,
                     amq_diag *diag)
{
    size_t i = f->bank_count;
    amq__hfb_bank *bank = &f->banks[i];
    uint8_t start = 0, len = 0, encoding = 0, rice_bits = 0;
    if (amq__params_get_u8(r, &start) || amq__params_get_u8(r, &len) ||
        amq__params_get_u8(r, &encoding) || amq__params_get_u8(r, &rice_bits) ||
        amq__params_get_u64(r, &bank->weight) || amq__params_get_u64(r, &bank->stored_bits))
        return amq__fail(diag, AMQ_ECORRUPT, "hfb parameters end inside bank %zu", i);
    if (i == 0)
        f->bank_bits = len;
    bank->start = start;
    bank->len = len;
    bank->encoding = (amq_hfb_encoding)encoding;
    bank->rice_bits = rice_bits;
    f->bank_count = i + 1; /* from here its bits are freed with the filter */
    int status = amq__hfb_check_bank(f, i, diag);
    if (status != AMQ_OK)
        return status;
    bank->mask = amq__hfb_bank_size(len) - 1;
    uint64_t bytes = amq__hfb_bank_stored_bytes(bank);
    if (c->payload_len - *offset < bytes)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb payload ends inside bank %zu", i);
    const uint8_t *at = c->payload + *offset;
    *offset += bytes;
    if (bank->encoding == AMQ_HFB_GOLOMB)
        return decode_rice(bank, i, at, diag);
    status = amq__bitvec_load_words(&bank->bits, amq__hfb_bank_size(len), at, bytes, diag);
    if (status != AMQ_OK)
        return status;
    if (amq__bitvec_popcount(&bank->bits) != bank->weight)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb bank %zu has %llu bits set, its header says %llu",
                         i, (unsigned long long)amq__bitvec_popcount(&bank->bits),
                         (unsigned long long)bank->weight);
    return AMQ_OK;
}

static int family_load(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag)
{
    *borrows_image = false;
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    uint8_t ids = 0, bank_count = 0;
    uint64_t id_count = 0;
    double target_fpr = 0, deviation = 0;
    if (amq__params_get_u8(&r, &ids) || amq__params_get_u8(&r, &bank_count) ||
        amq__params_get_u64(&r, &id_count) || amq__params_get_f64(&r, &target_fpr) ||
        amq__params_get_f64(&r, &deviation))
        return amq__fail(diag, AMQ_ECORRUPT, "hfb parameters are %u bytes, too short",
                         c->params_len);
    if (ids > AMQ_HFB_IDS_MD5)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb ids kind %u is not 0 (raw) or 1 (md5)", ids);
    if (bank_count < 1 || bank_count > AMQ_HFB_MAX_BANKS)
        return amq__fail(diag, AMQ_ECORRUPT, "hfb bank count %u is not in 1..%d", bank_count,
                         AMQ_HFB_MAX_BANKS);
    amq_hfb *f = amq__calloc(1, sizeof *f);
    if (!f)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory");
    f->ids = (amq_hfb_ids)ids;
    f->id_count = id_count;
    f->target_fpr = target_fpr;
    f->deviation = deviation;
    amq_hasher expected;
    saved_hasher(f, &expected);
    int status = amq__hfb_check_header(f, diag);
    if (status == AMQ_OK && (expected.kind != c->hasher.kind ||
                             memcmp(expected.key, c->hasher.key, sizeof expected.key) != 0))
        status = amq__fail(diag, AMQ_ECORRUPT, "an hfb filter of %s IDs must record hasher %s",
                           ids ? "MD5" : "raw", ids ? "md5" : "xxh3 with seed 0");
    uint64_t offset = 0;
    while (status == AMQ_OK && f->bank_count < bank_count)
        status = load_bank(f, &r, c, &offset, diag);
    if (status == AMQ_OK)
        status = amq__hfb_check(f, diag);
    if (status == AMQ_OK && amq__params_end(&r))
        status = amq__fail(diag, AMQ_ECORRUPT, "hfb parameters have trailing bytes");
    if (status == AMQ_OK && offset != c->payload_len)
        status = amq__fail(diag, AMQ_ECORRUPT, "hfb payload has %llu bytes past its banks",
                           (unsigned long long)(c->payload_len - offset));
    if (status != AMQ_OK) {
        amq_hfb_free(f);
        return status;
    }
    *state = f;
    return AMQ_OK;
}

static void family_info(const void *state, amq_info *out)
{
    const amq_hfb *f = state;
    double n = (double)f->id_count;
    out->capacity = f->id_count;
    out->keys = f->id_count;
    out->estimated_keys = n;
    out->memory_bytes = amq_hfb_memory_bytes(f);
    out->bits_per_key = n > 0 ? (double)out->memory_bytes * 8 / n : 0;
    out->target_fpr = f->target_fpr;
    out->expected_fpr = amq_hfb_expected_fpr(f);
    saved_hasher(f, &out->hasher);
    amq__info_text(out, "ids", f->ids == AMQ_HFB_IDS_MD5 ? "md5" : "raw");
    amq__info_number(out, "bank_bits", f->bank_bits);
    amq__info_number(out, "banks", (double)f->bank_count);
    amq__info_number(out, "banks_total", (double)amq_hfb_slice_count(f));
    amq__info_number(out, "stored_bits_per_id",
                     n > 0 ? (double)amq_hfb_stored_bytes(f) * 8 / n : 0);
    amq__info_number(out, "random_fill", amq__hfb_expected_fill(f->id_count, f->bank_bits));
    amq__info_number(out, "deviation", f->deviation);
    if (amq_hfb_nonrandom(f))
        amq__info_text(out, "warning", "ids look non-random");
    size_t listed = f->bank_count < INFO_BANKS_LISTED ? f->bank_count : INFO_BANKS_LISTED;
    amq__info_number(out, "banks_listed", (double)listed);
    for (size_t i = 0; i < listed; i++) {
        const amq__hfb_bank *bank = &f->banks[i];
        char name[32], text[32];
        snprintf(name, sizeof name, "bank%zu_slice", i);
        snprintf(text, sizeof text, "%u+%u", bank->start, bank->len);
        amq__info_text(out, name, text);
        snprintf(name, sizeof name, "bank%zu_fill", i);
        amq__info_number(out, name, amq__hfb_bank_fill(bank));
        snprintf(name, sizeof name, "bank%zu_stored_bits", i);
        amq__info_number(out, name, (double)bank->stored_bits);
        snprintf(name, sizeof name, "bank%zu_encoding", i);
        amq__info_text(out, name, bank->encoding == AMQ_HFB_RAW ? "raw" : "golomb");
    }
}

static void family_destroy(void *state)
{
    amq_hfb_free(state);
}

const amq__family amq__hfb_family = {
    .name = "hfb",
    .id = AMQ__FAMILY_HFB,
    .options = hfb_options,
    .build = family_build,
    .contains = family_contains,
    .contains_many = family_contains_many,
    .save = family_save,
    .load = family_load,
    .info = family_info,
    .destroy = family_destroy,
};
