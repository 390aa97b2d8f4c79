/*
 * bundle.c - many named filters in one file (include/amq/bundle.h).
 *
 * The problem. A code index keeps one small filter per trigram, a search
 * engine one per term: a hundred thousand filters, most holding a handful
 * of keys. Saved one container each, every filter would pay a 64-byte
 * header, its padding, an 8-byte trailer and its whole parameter block -
 * more than the few bytes of data it holds. A bundle keeps them in one
 * container and frames each member in a few bytes.
 *
 * Layout (docs/FORMAT.md, "The bundle", is the specification). The
 * container's family id is AMQ__FAMILY_BUNDLE; its parameter block gives
 * the member count C, the block size B, the lengths of the templates and of
 * the member records, and the number of index entries E = ceil(C / B). The
 * payload is the templates, the C records in name order, then E
 * little-endian u64 offsets: entry k is where record k * B starts, counted
 * from the first record.
 *
 * Templates. Most members of a bundle are filters of one or two families
 * built with one setting, so their parameter blocks differ in a few count
 * fields. For each family present the writer stores one template: a hasher
 * and a parameter block whose every byte is the one most members of that
 * family have there. A member's parameters are then stored as a bitmap of
 * the bytes that differ from its family's template, and those bytes - a
 * 52-byte Golomb-coded-set block becomes a 7-byte bitmap and 3 or 4 bytes.
 * Templates are read once at opening; a record depends on nothing but its
 * template, so any member can be decoded alone.
 *
 *     varint T; T times: u8 family id, u8 hash kind and its key (8 bytes
 *     of XXH3 seed, 16 of SipHash key, none for MD5), varint parameter
 *     length, the parameter bytes; family ids strictly increasing
 *
 * A record is
 *
 *     varint name length, name bytes
 *     u8 kind: bits 0..5 the family id (0: plain bytes, not a filter),
 *              bit 6 the parameters are a delta from the family's template,
 *              bit 7 the hasher is the template's
 *     (a filter, unless bit 7) u8 hash kind and its key
 *     (a filter) varint parameter length P; then either the P bytes, or
 *              (bit 6) a bitmap of ceil(P / 8) bytes marking the bytes that
 *              differ from the template's (read as zero past its end), and
 *              those bytes
 *     varint data length N; (a filter) varint Z, the zero bytes that end
 *              the data and are not stored; the N - Z stored bytes
 *
 * Payloads often end in zero padding (a Golomb-coded set keeps 8 zero bytes
 * after its stream so that a reader may load 8 bytes anywhere), which is
 * the larger part of a small set's payload; Z leaves it out. Plain bytes
 * are stored whole.
 *
 * Varints are unsigned LEB128: 7 bits a byte, low group first, the high
 * bit set on every byte but the last, and never longer than needed.
 *
 * Finding a member: a binary search over the blocks' first names (read
 * through the index), then the block's records in turn. B = 32 keeps the
 * index at a quarter of a byte per member and the scan short.
 *
 * Trust. amq_bundle_open checks the container (checksum included), the
 * templates, and then walks every record once: lengths inside the records,
 * names strictly increasing (bytewise, a prefix before its extensions),
 * kinds and hash kinds valid, deltas only against a template that exists,
 * the index pointing at the right records, the records ending exactly
 * where the index begins. After that, finding and listing read without
 * further checks. A filter member's parameters and data are checked by its
 * family when it is opened, as when a filter is loaded from its own file.
 * An opened filter gets a copy of its data (in memory aligned as in a
 * file), so it owns it and outlives the bundle.
 */
#include "bundle/bundle_internal.h"
#include "core/alloc.h"
#include "core/family.h"
#include "core/format.h"
#include "core/struct_size.h"
#include "core/util.h"
#include "filter/filter.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIND_FAMILY_MASK  0x3Fu
#define KIND_PARAMS_DELTA 0x40u
#define KIND_SAME_HASHER  0x80u
#define VARINT_MAX_BYTES  10
/* Family ids are 6 bits, 1 ... AMQ__FAMILY_MAX. */
#define FAMILY_IDS (AMQ__FAMILY_MAX + 1)
/* u64 count, u32 block, u64 templates, u64 records, u64 index entries */
#define BUNDLE_PARAMS_BYTES 36

/* ---- varints and names --------------------------------------------------- */

static size_t varint_put(uint8_t *out, uint64_t value)
{
    size_t n = 0;
    while (value >= 0x80) {
        out[n++] = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    out[n++] = (uint8_t)value;
    return n;
}

/* Read a varint from [*p, end); advances *p. Refuses a cut-off, overlong
 * (more than 64 bits) or non-minimal encoding. */
static bool varint_get(const uint8_t **p, const uint8_t *end, uint64_t *value)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p == end)
            return false;
        uint8_t byte = *(*p)++;
        uint64_t group = byte & 0x7Fu;
        if (shift == 63 && group > 1)
            return false;
        v |= group << shift;
        if (!(byte & 0x80)) {
            if (byte == 0 && shift > 0)
                return false; /* a last group of 0: longer than needed */
            *value = v;
            return true;
        }
    }
    return false;
}

static int compare_names(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
    size_t common = a_len < b_len ? a_len : b_len;
    int order = common ? memcmp(a, b, common) : 0;
    if (order != 0)
        return order;
    return (a_len > b_len) - (a_len < b_len);
}

/* A name for messages: printable ASCII in quotes, else hex, cut short. */
static void describe_name(char *out, size_t cap, const uint8_t *name, size_t len)
{
    bool printable = true;
    for (size_t i = 0; i < len; i++)
        printable = printable && name[i] >= 0x20 && name[i] < 0x7F;
    size_t shown = len > 24 ? 24 : len;
    if (printable) {
        snprintf(out, cap, "'%.*s%s'", (int)shown, (const char *)name, shown < len ? "..." : "");
        return;
    }
    size_t at = 0;
    at += (size_t)snprintf(out, cap, "0x");
    for (size_t i = 0; i < shown && at + 3 < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%02x", name[i]);
    if (shown < len && at + 4 < cap)
        snprintf(out + at, cap - at, "...");
}

static size_t hasher_key_bytes(amq_hash_kind kind)
{
    return kind == AMQ_HASH_XXH3 ? 8 : kind == AMQ_HASH_SIPHASH ? 16 : 0;
}

/* ---- a growing byte buffer ------------------------------------------------- */

typedef struct byte_buffer {
    uint8_t *bytes;
    uint64_t len, cap;
} byte_buffer;

static bool buffer_reserve(byte_buffer *b, uint64_t more)
{
    uint64_t need;
    if (!amq__add_u64(b->len, more, &need) || need > AMQ__FORMAT_PAYLOAD_MAX / 2 ||
        need > SIZE_MAX / 2)
        return false;
    if (need <= b->cap)
        return true;
    uint64_t cap = b->cap ? b->cap : 4096;
    while (cap < need)
        cap *= 2;
    uint8_t *grown = amq__realloc(b->bytes, (size_t)cap);
    if (!grown)
        return false;
    b->bytes = grown;
    b->cap = cap;
    return true;
}

/* Append len bytes; the caller reserved room. */
static void buffer_put(byte_buffer *b, const void *data, uint64_t len)
{
    if (len)
        memcpy(b->bytes + b->len, data, (size_t)len);
    b->len += len;
}

/* Append a payload piece, produced or in memory; the caller reserved room. */
static void buffer_put_piece(byte_buffer *b, const amq__piece *piece)
{
    amq__piece_copy(b->bytes + b->len, piece);
    b->len += piece->len;
}

static void buffer_put_varint(byte_buffer *b, uint64_t value)
{
    b->len += varint_put(b->bytes + b->len, value);
}

/* ---- the writer -------------------------------------------------------------- */

/* A member as added: its parts are ranges of the writer's arena (offsets,
 * because the arena moves as it grows). */
typedef struct pending {
    uint64_t name_at, params_at, data_at, data_len;
    uint32_t name_len, params_len;
    uint32_t family; /* 0: plain bytes */
    amq_hasher hasher;
} pending;

struct amq_bundle_writer {
    byte_buffer arena;
    pending *members;
    uint64_t count, cap;
};

int amq_bundle_writer_new(amq_bundle_writer **out, amq_diag *diag)
{
    assert(out);
    *out = amq__calloc(1, sizeof **out);
    if (!*out)
        return amq__fail(diag, AMQ_ENOMEM, "no memory for a bundle writer");
    return AMQ_OK;
}

void amq_bundle_writer_free(amq_bundle_writer *writer)
{
    if (!writer)
        return;
    amq__free(writer->arena.bytes);
    amq__free(writer->members);
    amq__free(writer);
}

uint64_t amq_bundle_writer_members(const amq_bundle_writer *writer)
{
    return writer->count;
}

/* Room for one more member whose parts take bytes; its name copied in. */
static int start_member(amq_bundle_writer *w, const void *name, size_t name_len, uint64_t bytes,
                        pending **out, amq_diag *diag)
{
    if (name_len > AMQ_BUNDLE_NAME_MAX)
        return amq__fail(diag, AMQ_EINVAL, "a bundle member's name is %zu bytes; at most %d",
                         name_len, AMQ_BUNDLE_NAME_MAX);
    if (w->count == w->cap) {
        uint64_t cap = w->cap ? w->cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof *w->members)
            return amq__fail(diag, AMQ_ENOMEM, "a bundle writer cannot hold %llu members",
                             (unsigned long long)cap);
        pending *grown = amq__realloc(w->members, (size_t)cap * sizeof *grown);
        if (!grown)
            return amq__fail(diag, AMQ_ENOMEM, "out of memory for a list of %llu bundle members",
                             (unsigned long long)cap);
        w->members = grown;
        w->cap = cap;
    }
    uint64_t total = UINT64_MAX;
    if (!amq__add_u64(bytes, name_len, &total) || !buffer_reserve(&w->arena, total))
        return amq__fail(diag, total > SIZE_MAX / 2 ? AMQ_ERANGE : AMQ_ENOMEM,
                         "no room for a bundle member of %llu bytes", (unsigned long long)total);
    pending *m = &w->members[w->count];
    memset(m, 0, sizeof *m);
    m->name_at = w->arena.len;
    m->name_len = (uint32_t)name_len;
    buffer_put(&w->arena, name, name_len);
    *out = m;
    return AMQ_OK;
}

int amq_bundle_add(amq_bundle_writer *writer, const void *name, size_t name_len,
                   const amq_filter *filter, amq_diag *diag)
{
    assert(writer && filter && (name || name_len == 0));
    amq__container c;
    amq__saved saved;
    int status = amq__filter_describe(&saved, &c, filter, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t payload_len = amq__saved_payload_len(&saved);
    pending *m = NULL;
    status = start_member(writer, name, name_len, c.params_len + payload_len, &m, diag);
    if (status == AMQ_OK) {
        m->family = c.family;
        m->hasher = c.hasher;
        m->params_at = writer->arena.len;
        m->params_len = c.params_len;
        buffer_put(&writer->arena, c.params, c.params_len);
        m->data_at = writer->arena.len;
        m->data_len = payload_len;
        for (size_t i = 0; i < saved.piece_count; i++)
            buffer_put_piece(&writer->arena, &saved.pieces[i]);
        writer->count++;
    }
    return status;
}

int amq_bundle_add_bytes(amq_bundle_writer *writer, const void *name, size_t name_len,
                         const void *data, size_t len, amq_diag *diag)
{
    assert(writer && (name || name_len == 0) && (data || len == 0));
    pending *m = NULL;
    int status = start_member(writer, name, name_len, len, &m, diag);
    if (status != AMQ_OK)
        return status;
    m->data_at = writer->arena.len;
    m->data_len = len;
    buffer_put(&writer->arena, data, len);
    writer->count++;
    return AMQ_OK;
}

typedef struct sorted_member {
    const uint8_t *name;
    size_t name_len;
    const pending *member;
} sorted_member;

static int compare_sorted(const void *a, const void *b)
{
    const sorted_member *x = a, *y = b;
    return compare_names(x->name, x->name_len, y->name, y->name_len);
}

/* A family's template: a hasher and a parameter block (see the opening
 * comment). In the writer, params points into the template buffer. */
typedef struct template_block {
    bool present;
    amq_hasher hasher;
    const uint8_t *params;
    uint32_t params_len;
} template_block;

/* Each present family's template: its first member's hasher, and per byte
 * position the value most of its members have (a member's bytes past its
 * own length count as zero). The parameter bytes go to storage, 4096 bytes
 * per family. */
static int make_templates(const amq_bundle_writer *w, template_block templates[FAMILY_IDS],
                          uint8_t *storage)
{
    uint32_t *votes = amq__malloc((size_t)AMQ__FORMAT_PARAMS_MAX * 256 * sizeof *votes);
    if (!votes)
        return AMQ_ENOMEM;
    uint32_t longest[FAMILY_IDS] = { 0 };
    for (uint64_t i = 0; i < w->count; i++) {
        const pending *m = &w->members[i];
        if (m->family == 0)
            continue;
        template_block *t = &templates[m->family];
        if (!t->present)
            t->hasher = m->hasher;
        t->present = true;
        longest[m->family] =
            m->params_len > longest[m->family] ? m->params_len : longest[m->family];
    }
    for (uint32_t family = 1; family < FAMILY_IDS; family++) {
        template_block *t = &templates[family];
        if (!t->present)
            continue;
        uint32_t len = longest[family];
        memset(votes, 0, (size_t)len * 256 * sizeof *votes);
        for (uint64_t i = 0; i < w->count; i++) {
            const pending *m = &w->members[i];
            for (uint32_t at = 0; m->family == family && at < len; at++)
                votes[at * 256 + (at < m->params_len ? w->arena.bytes[m->params_at + at] : 0)]++;
        }
        uint8_t *params = storage + (size_t)family * AMQ__FORMAT_PARAMS_MAX;
        for (uint32_t at = 0; at < len; at++) {
            unsigned best = 0;
            for (unsigned value = 1; value < 256; value++)
                best = votes[at * 256 + value] > votes[at * 256 + best] ? value : best;
            params[at] = (uint8_t)best;
        }
        t->params = params;
        t->params_len = len;
    }
    amq__free(votes);
    return AMQ_OK;
}

static void put_hasher(byte_buffer *out, const amq_hasher *hasher)
{
    out->bytes[out->len++] = (uint8_t)hasher->kind;
    buffer_put(out, hasher->key, hasher_key_bytes(hasher->kind));
}

static void put_templates(byte_buffer *out, const template_block templates[FAMILY_IDS])
{
    uint64_t count = 0;
    for (uint32_t family = 1; family < FAMILY_IDS; family++)
        count += templates[family].present;
    buffer_put_varint(out, count);
    for (uint32_t family = 1; family < FAMILY_IDS; family++) {
        const template_block *t = &templates[family];
        if (!t->present)
            continue;
        out->bytes[out->len++] = (uint8_t)family;
        put_hasher(out, &t->hasher);
        buffer_put_varint(out, t->params_len);
        buffer_put(out, t->params, t->params_len);
    }
}

/* The template's byte at position at: zero past its end. */
static uint8_t template_byte(const template_block *t, uint32_t at)
{
    return at < t->params_len ? t->params[at] : 0;
}

/* Append member m's record. */
static void put_record(byte_buffer *out, const uint8_t *arena, const pending *m,
                       const template_block templates[FAMILY_IDS])
{
    buffer_put_varint(out, m->name_len);
    buffer_put(out, arena + m->name_at, m->name_len);
    const uint8_t *data = arena + m->data_at;
    uint64_t zeros = 0;
    if (m->family == 0) {
        out->bytes[out->len++] = 0;
    } else {
        const template_block *t = &templates[m->family];
        const uint8_t *params = arena + m->params_at;
        size_t bitmap_len = (m->params_len + 7u) / 8u, changed = 0;
        for (uint32_t i = 0; i < m->params_len; i++)
            changed += params[i] != template_byte(t, i);
        bool delta = bitmap_len + changed < m->params_len;
        bool same_hasher = memcmp(&t->hasher, &m->hasher, sizeof m->hasher) == 0;
        out->bytes[out->len++] = (uint8_t)(m->family | (delta ? KIND_PARAMS_DELTA : 0) |
                                           (same_hasher ? KIND_SAME_HASHER : 0));
        if (!same_hasher)
            put_hasher(out, &m->hasher);
        buffer_put_varint(out, m->params_len);
        if (delta) {
            uint8_t *bitmap = out->bytes + out->len;
            memset(bitmap, 0, bitmap_len);
            out->len += bitmap_len;
            for (uint32_t i = 0; i < m->params_len; i++) {
                if (params[i] != template_byte(t, i)) {
                    bitmap[i / 8] |= (uint8_t)(1u << (i % 8));
                    out->bytes[out->len++] = params[i];
                }
            }
        } else {
            buffer_put(out, params, m->params_len);
        }
        while (zeros < m->data_len && data[m->data_len - 1 - zeros] == 0)
            zeros++;
    }
    buffer_put_varint(out, m->data_len);
    if (m->family != 0)
        buffer_put_varint(out, zeros);
    buffer_put(out, data, m->data_len - zeros);
}

int amq_bundle_save(const amq_bundle_writer *writer, const char *path, amq_diag *diag)
{
    assert(writer && path);
    uint64_t count = writer->count;
    uint64_t index_entries = (count + AMQ_BUNDLE_BLOCK - 1) / AMQ_BUNDLE_BLOCK;
    sorted_member *sorted = amq__calloc(count ? (size_t)count : 1, sizeof *sorted);
    uint8_t *index = amq__calloc(index_entries ? (size_t)index_entries : 1, 8);
    template_block *templates = amq__calloc(FAMILY_IDS, sizeof *templates);
    uint8_t *template_storage = amq__malloc((size_t)FAMILY_IDS * AMQ__FORMAT_PARAMS_MAX);
    byte_buffer head = { 0 }, records = { 0 };
    int status = AMQ_OK;
    /* A record is at most its arena bytes plus four varints, a kind byte
     * and a hasher (parameters are delta-coded only when that is shorter);
     * the templates at most 63 hashers and parameter blocks. */
    uint64_t framing = 4 * VARINT_MAX_BYTES + 1 + 1 + 16;
    if (!sorted || !index || !templates || !template_storage ||
        !buffer_reserve(&records, writer->arena.len + count * framing) ||
        !buffer_reserve(&head, VARINT_MAX_BYTES + (FAMILY_IDS - 1) * (2 + 16 + VARINT_MAX_BYTES +
                                                                      AMQ__FORMAT_PARAMS_MAX)) ||
        make_templates(writer, templates, template_storage) != AMQ_OK) {
        status = amq__fail(diag, AMQ_ENOMEM, "out of memory for a bundle of %llu members",
                           (unsigned long long)count);
        goto done;
    }
    for (uint64_t i = 0; i < count; i++) {
        const pending *m = &writer->members[i];
        sorted[i] = (sorted_member){ writer->arena.bytes + m->name_at, m->name_len, m };
    }
    qsort(sorted, (size_t)count, sizeof *sorted, compare_sorted);
    put_templates(&head, templates);
    for (uint64_t i = 0; i < count; i++) {
        if (i > 0 && compare_sorted(&sorted[i - 1], &sorted[i]) == 0) {
            char name[64];
            describe_name(name, sizeof name, sorted[i].name, sorted[i].name_len);
            status = amq__fail(diag, AMQ_EINVAL, "two bundle members are named %s", name);
            goto done;
        }
        if (i % AMQ_BUNDLE_BLOCK == 0)
            amq__store_u64le(index + (i / AMQ_BUNDLE_BLOCK) * 8, records.len);
        put_record(&records, writer->arena.bytes, sorted[i].member, templates);
    }
    amq__params_writer params;
    amq__params_init(&params);
    amq__params_put_u64(&params, count);
    amq__params_put_u32(&params, AMQ_BUNDLE_BLOCK);
    amq__params_put_u64(&params, head.len);
    amq__params_put_u64(&params, records.len);
    amq__params_put_u64(&params, index_entries);
    amq__container c = {
        .family = AMQ__FAMILY_BUNDLE,
        .params = params.bytes,
        .params_len = params.len,
    };
    amq_hasher_xxh3(&c.hasher, 0);
    amq__piece pieces[3] = { { .data = head.bytes, .len = head.len },
                             { .data = records.bytes, .len = records.len },
                             { .data = index, .len = index_entries * 8 } };
    status = amq__format_save(NULL, path, &c, pieces, 3, diag);
done:
    amq__free(head.bytes);
    amq__free(records.bytes);
    amq__free(template_storage);
    amq__free(templates);
    amq__free(index);
    amq__free(sorted);
    return status;
}

/* ---- reading ----------------------------------------------------------------- */

struct amq_bundle {
    amq__file_image image;
    const uint8_t *records;
    uint64_t records_len;
    const uint8_t *index;
    uint64_t count;
    uint32_t block;
    template_block templates[FAMILY_IDS];
};

/* A record as read. params is filled only when asked for. */
typedef struct record {
    const uint8_t *name;
    uint64_t name_len;
    uint32_t family; /* 0: plain bytes */
    const uint8_t *data;
    uint64_t data_len;    /* N */
    uint64_t data_stored; /* N - Z */
    amq_hasher hasher;
    uint32_t params_len;
    uint8_t params[AMQ__FORMAT_PARAMS_MAX];
} record;

/* Read a hash kind and its key at *p into hasher. */
static const char *read_hasher(amq_hasher *hasher, const uint8_t **p, const uint8_t *end)
{
    if (*p == end)
        return "it is cut off in its hash kind";
    memset(hasher, 0, sizeof *hasher);
    hasher->kind = (amq_hash_kind)(*(*p)++);
    size_t key_bytes = hasher_key_bytes(hasher->kind);
    if ((uint64_t)(end - *p) < key_bytes)
        return "it is cut off in its hash key";
    memcpy(hasher->key, *p, key_bytes);
    *p += key_bytes;
    return amq_hasher_check(hasher, NULL) == AMQ_OK ? NULL : "its hash kind is unknown";
}

/* Read the record at *p (inside [.., end)) into r and advance *p; with
 * want_params, rebuild its parameter block. Returns NULL or what is wrong
 * with it. */
static const char *record_read(const amq_bundle *b, record *r, const uint8_t **p,
                               const uint8_t *end, bool want_params)
{
    if (!varint_get(p, end, &r->name_len) || r->name_len > AMQ_BUNDLE_NAME_MAX)
        return "its name length is cut off or too long";
    if ((uint64_t)(end - *p) < r->name_len + 1)
        return "it is cut off in its name";
    r->name = *p;
    *p += r->name_len;
    uint8_t kind = *(*p)++;
    r->family = kind & KIND_FAMILY_MASK;
    r->params_len = 0;
    if (r->family == 0 && kind != 0)
        return "a plain-bytes member has filter flags";
    if (amq__non_filter_description(r->family))
        return "a member cannot be a bundle or another container that is not a filter";
    if (r->family != 0) {
        const template_block *t = &b->templates[r->family];
        if ((kind & (KIND_PARAMS_DELTA | KIND_SAME_HASHER)) && !t->present)
            return "it refers to a template its family does not have";
        if (kind & KIND_SAME_HASHER) {
            r->hasher = t->hasher;
        } else {
            const char *wrong = read_hasher(&r->hasher, p, end);
            if (wrong)
                return wrong;
        }
        uint64_t params_len;
        if (!varint_get(p, end, &params_len) || params_len > AMQ__FORMAT_PARAMS_MAX)
            return "its parameter length is cut off or above 4096";
        r->params_len = (uint32_t)params_len;
        if (kind & KIND_PARAMS_DELTA) {
            uint64_t bitmap_len = (params_len + 7) / 8;
            if ((uint64_t)(end - *p) < bitmap_len)
                return "it is cut off in its parameter bitmap";
            const uint8_t *bitmap = *p;
            *p += bitmap_len;
            if (params_len % 8 && bitmap[bitmap_len - 1] >> (params_len % 8))
                return "its parameter bitmap marks bytes past the parameters";
            uint64_t changed = 0;
            for (uint64_t i = 0; i < bitmap_len; i += 8) {
                uint64_t word = 0;
                memcpy(&word, bitmap + i, (size_t)(bitmap_len - i < 8 ? bitmap_len - i : 8));
                changed += (uint64_t)__builtin_popcountll(word);
            }
            if ((uint64_t)(end - *p) < changed)
                return "it is cut off in its changed parameters";
            for (uint32_t i = 0; want_params && i < r->params_len; i++)
                r->params[i] = bitmap[i / 8] >> (i % 8) & 1 ? *(*p)++ : template_byte(t, i);
            if (!want_params)
                *p += changed;
        } else {
            if ((uint64_t)(end - *p) < params_len)
                return "it is cut off in its parameters";
            if (want_params)
                memcpy(r->params, *p, (size_t)params_len);
            *p += params_len;
        }
    }
    uint64_t zeros = 0;
    if (!varint_get(p, end, &r->data_len) || (r->family != 0 && !varint_get(p, end, &zeros)))
        return "its data length is cut off";
    if (zeros > r->data_len)
        return "it leaves out more zero bytes than its data has";
    r->data_stored = r->data_len - zeros;
    if ((uint64_t)(end - *p) < r->data_stored)
        return "it is cut off in its data";
    r->data = *p;
    *p += r->data_stored;
    return NULL;
}

static const char *family_name_of(uint32_t family)
{
    if (family == 0)
        return "bytes";
    for (const amq__family *const *f = amq__family_table(); *f; f++)
        if ((*f)->id == family)
            return (*f)->name;
    return "unknown";
}

/* Read the templates section [p, end) into b->templates. */
static int read_templates(amq_bundle *b, const uint8_t *p, const uint8_t *end, const char *where,
                          amq_diag *diag)
{
    uint64_t count;
    const char *wrong = varint_get(&p, end, &count) ? NULL : "its count is cut off";
    uint32_t last_family = 0;
    for (uint64_t i = 0; !wrong && i < count; i++) {
        if (p == end) {
            wrong = "it is cut off";
            break;
        }
        uint32_t family = *p++;
        if (family <= last_family || family >= FAMILY_IDS || amq__non_filter_description(family)) {
            wrong = "its family ids are not increasing valid filter families";
            break;
        }
        last_family = family;
        template_block *t = &b->templates[family];
        wrong = read_hasher(&t->hasher, &p, end);
        uint64_t params_len = 0;
        if (!wrong && (!varint_get(&p, end, &params_len) || params_len > AMQ__FORMAT_PARAMS_MAX ||
                       (uint64_t)(end - p) < params_len))
            wrong = "a parameter block is cut off or above 4096 bytes";
        if (wrong)
            break;
        t->present = true;
        t->params = p;
        t->params_len = (uint32_t)params_len;
        p += params_len;
    }
    if (!wrong && p != end)
        wrong = "bytes are left after the last template";
    if (wrong)
        return amq__fail(diag, AMQ_ECORRUPT, "%s: the bundle's templates: %s", where, wrong);
    return AMQ_OK;
}

/* Check every record once (see the opening comment). */
static int check_records(const amq_bundle *b, const char *where, amq_diag *diag)
{
    record *r = amq__malloc(sizeof *r);
    if (!r)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory checking %s", where);
    const uint8_t *p = b->records, *end = b->records + b->records_len;
    const uint8_t *last_name = NULL;
    uint64_t last_name_len = 0;
    int status = AMQ_OK;
    for (uint64_t i = 0; i < b->count; i++) {
        if (i % b->block == 0) {
            uint64_t expected = amq__load_u64le(b->index + (i / b->block) * 8);
            if (expected != (uint64_t)(p - b->records)) {
                status =
                    amq__fail(diag, AMQ_ECORRUPT,
                              "%s: index entry %llu says member %llu starts at %llu; it "
                              "starts at %llu",
                              where, (unsigned long long)(i / b->block), (unsigned long long)i,
                              (unsigned long long)expected, (unsigned long long)(p - b->records));
                break;
            }
        }
        const uint8_t *start = p;
        const char *wrong = record_read(b, r, &p, end, false);
        if (!wrong && last_name &&
            compare_names(last_name, last_name_len, r->name, r->name_len) >= 0)
            wrong = "its name does not come after the previous member's";
        if (wrong) {
            status = amq__fail_at(diag, AMQ_ECORRUPT, (uint64_t)(start - b->records),
                                  "%s: bundle member %llu (record byte %llu): %s", where,
                                  (unsigned long long)i, (unsigned long long)(start - b->records),
                                  wrong);
            break;
        }
        last_name = r->name;
        last_name_len = r->name_len;
    }
    if (status == AMQ_OK && p != end)
        status = amq__fail(diag, AMQ_ECORRUPT,
                           "%s: %llu bytes of member records are left after the last member", where,
                           (unsigned long long)(end - p));
    amq__free(r);
    return status;
}

int amq__bundle_from_container(amq_bundle **out, const amq__container *c, amq__file_image *image,
                               const char *where, amq_diag *diag)
{
    assert(out && c && image && where);
    *out = NULL;
    amq_bundle *b = amq__calloc(1, sizeof *b);
    if (!b) {
        amq__file_image_close(image);
        return amq__fail(diag, AMQ_ENOMEM, "out of memory opening %s", where);
    }
    b->image = *image;
    int status = AMQ_OK;
    if (c->family != AMQ__FAMILY_BUNDLE && amq__non_filter_description(c->family))
        status =
            amq__fail(diag, AMQ_EFORMAT, "%s is %s", where, amq__non_filter_description(c->family));
    else if (c->family != AMQ__FAMILY_BUNDLE)
        status = amq__fail(diag, AMQ_EFORMAT, "%s holds one %s filter, not a bundle", where,
                           family_name_of(c->family));
    uint64_t templates_len = 0, index_entries = 0, rest = 0;
    if (status == AMQ_OK) {
        amq__params_reader reader;
        amq__params_reader_init(&reader, c->params, c->params_len);
        if (amq__params_get_u64(&reader, &b->count) != AMQ_OK ||
            amq__params_get_u32(&reader, &b->block) != AMQ_OK ||
            amq__params_get_u64(&reader, &templates_len) != AMQ_OK ||
            amq__params_get_u64(&reader, &b->records_len) != AMQ_OK ||
            amq__params_get_u64(&reader, &index_entries) != AMQ_OK ||
            amq__params_end(&reader) != AMQ_OK)
            status = amq__fail(diag, AMQ_ECORRUPT,
                               "%s: the bundle's parameter block is %u bytes, not %d", where,
                               c->params_len, BUNDLE_PARAMS_BYTES);
        else if (b->block == 0 || b->block > 65536)
            status =
                amq__fail(diag, AMQ_ECORRUPT,
                          "%s: the bundle's block size %u is not in 1 ... 65536", where, b->block);
        else if (templates_len > c->payload_len ||
                 b->records_len > c->payload_len - templates_len ||
                 (rest = c->payload_len - templates_len - b->records_len) % 8 != 0 ||
                 rest / 8 != index_entries ||
                 index_entries != b->count / b->block + (b->count % b->block != 0) ||
                 b->count > b->records_len)
            status =
                amq__fail(diag, AMQ_ECORRUPT,
                          "%s: the bundle says %llu members, %llu index entries, %llu bytes "
                          "of templates and %llu of records, which do not fit its "
                          "%llu-byte payload",
                          where, (unsigned long long)b->count, (unsigned long long)index_entries,
                          (unsigned long long)templates_len, (unsigned long long)b->records_len,
                          (unsigned long long)c->payload_len);
    }
    if (status == AMQ_OK)
        status = read_templates(b, c->payload, c->payload + templates_len, where, diag);
    if (status == AMQ_OK) {
        b->records = c->payload + templates_len;
        b->index = b->records + b->records_len;
        status = check_records(b, where, diag);
    }
    if (status != AMQ_OK) {
        amq_bundle_close(b);
        return status;
    }
    *out = b;
    return AMQ_OK;
}

int amq_bundle_open(amq_bundle **out, const char *path, unsigned flags, amq_diag *diag)
{
    assert(out && path);
    *out = NULL;
    amq__file_image image;
    amq__container c;
    int status = amq__format_open(&image, &c, path, flags, diag);
    if (status != AMQ_OK)
        return status;
    return amq__bundle_from_container(out, &c, &image, path, diag);
}

void amq_bundle_close(amq_bundle *bundle)
{
    if (!bundle)
        return;
    amq__file_image_close(&bundle->image);
    amq__free(bundle);
}

uint64_t amq_bundle_members(const amq_bundle *bundle)
{
    return bundle->count;
}

uint64_t amq_bundle_file_bytes(const amq_bundle *bundle)
{
    return bundle->image.len;
}

static const uint8_t *block_start(const amq_bundle *b, uint64_t block)
{
    return b->records + amq__load_u64le(b->index + block * 8);
}

/* The member named name (name != NULL) or at wanted_index, in its block,
 * read into r with its parameters. Returns its index, or b->count when
 * there is none. The records were checked at opening: reading cannot fail. */
static uint64_t scan_block(const amq_bundle *b, uint64_t block, record *r, const void *name,
                           size_t name_len, uint64_t wanted_index)
{
    const uint8_t *p = block_start(b, block), *end = b->records + b->records_len;
    uint64_t first = block * b->block;
    for (uint64_t i = first; i < b->count && i < first + b->block; i++) {
        const uint8_t *start = p;
        (void)record_read(b, r, &p, end, false);
        int order = name ? compare_names(r->name, r->name_len, name, name_len)
                         : (i > wanted_index) - (i < wanted_index);
        if (order > 0)
            break;
        if (order == 0) {
            (void)record_read(b, r, &start, end, true);
            return i;
        }
    }
    return b->count;
}

/* The member named name into r; its index, or b->count when absent. */
static uint64_t find_record(const amq_bundle *b, const void *name, size_t name_len, record *r)
{
    if (b->count == 0)
        return b->count;
    /* The last block whose first name is <= name. */
    uint64_t low = 0, high = (b->count - 1) / b->block;
    while (low < high) {
        uint64_t middle = low + (high - low + 1) / 2;
        const uint8_t *p = block_start(b, middle);
        uint64_t first_len = 0;
        (void)varint_get(&p, b->records + b->records_len, &first_len);
        if (compare_names(p, first_len, name, name_len) <= 0)
            low = middle;
        else
            high = middle - 1;
    }
    return scan_block(b, low, r, name, name_len, 0);
}

/* Describe a member into the caller's layout of struct_size bytes. */
static void describe_member(const record *r, uint64_t index, amq_bundle_member *out,
                            size_t struct_size)
{
    amq_bundle_member member;
    memset(&member, 0, sizeof member);
    member.name = r->name;
    member.name_len = r->name_len;
    member.family = family_name_of(r->family);
    member.data = r->data;
    member.data_len = r->data_stored;
    member.index = index;
    amq__struct_write(out, struct_size, &member, sizeof member);
}

int amq_bundle_find_sized(amq_bundle_member *out, size_t struct_size, const amq_bundle *bundle,
                          const void *name, size_t name_len)
{
    assert(bundle && out && (name || name_len == 0) && struct_size >= sizeof(size_t));
    record r;
    uint64_t i = find_record(bundle, name, name_len, &r);
    if (i == bundle->count)
        return 0;
    describe_member(&r, i, out, struct_size);
    return 1;
}

int amq_bundle_member_at_sized(amq_bundle_member *out, size_t struct_size, const amq_bundle *bundle,
                               uint64_t index)
{
    assert(bundle && out && struct_size >= sizeof(size_t));
    if (index >= bundle->count)
        return AMQ_EINVAL;
    record r;
    scan_block(bundle, index / bundle->block, &r, NULL, 0, index);
    describe_member(&r, index, out, struct_size);
    return AMQ_OK;
}

int amq_bundle_open_filter(amq_filter **out, const amq_bundle *bundle, const void *name,
                           size_t name_len, amq_diag *diag)
{
    assert(bundle && out && (name || name_len == 0));
    *out = NULL;
    char shown[64];
    describe_name(shown, sizeof shown, name, name_len);
    record r;
    if (find_record(bundle, name, name_len, &r) == bundle->count)
        return amq__fail(diag, AMQ_ENOTFOUND, "the bundle has no member named %s", shown);
    if (r.family == 0)
        return amq__fail(diag, AMQ_EINVAL, "bundle member %s is plain bytes, not a filter", shown);
    /* The filter gets its own copy of the data, aligned as in a file, with
     * the zero bytes the record left out. */
    uint64_t rounded = (r.data_len + AMQ__FORMAT_ALIGN) & ~(uint64_t)(AMQ__FORMAT_ALIGN - 1);
    if (rounded > SIZE_MAX)
        return amq__fail(diag, AMQ_ENOMEM, "bundle member %s is too large", shown);
    amq__file_image image = { amq__aligned_alloc(AMQ__FORMAT_ALIGN, (size_t)rounded),
                              (size_t)r.data_len, false };
    if (!image.data)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory for bundle member %s", shown);
    memcpy(image.data, r.data, (size_t)r.data_stored);
    memset(image.data + r.data_stored, 0, (size_t)(r.data_len - r.data_stored));
    amq__container c = {
        .family = r.family,
        .hasher = r.hasher,
        .params = r.params,
        .params_len = r.params_len,
        .payload = image.data,
        .payload_len = r.data_len,
    };
    char where[96];
    snprintf(where, sizeof where, "bundle member %s", shown);
    return amq__filter_from_container(out, &c, &image, where, diag);
}
