/*
 * format.c - the container every filter is saved in: encoding, atomic
 * saving, reading or mapping a file, and validating an image before any
 * family trusts a byte of it. docs/FORMAT.md is the specification; this
 * comment is the summary a reader of the code needs.
 *
 * One file, all integers little-endian whatever the host:
 *
 *   offset   size  field
 *   ------   ----  -----------------------------------------------------
 *        0      8  magic 89 41 4d 51 0d 0a 1a 0a  ("\x89AMQ\r\n\x1a\n")
 *        8      4  format version (1; 2 when flags are set)
 *       12      4  family id (1..AMQ__FAMILY_MAX)
 *       16      4  hash kind (1 xxh3, 2 md5, 3 siphash)
 *       20      4  flags (version 1: 0; version 2: bit 0 add-once, not 0)
 *       24     16  hash seed or key (as amq_hasher.key)
 *       40      4  params length P (<= AMQ__FORMAT_PARAMS_MAX)
 *       44     12  reserved, zero
 *       56      8  payload length N (<= AMQ__FORMAT_PAYLOAD_MAX = 2^63)
 *       64      P  the family's parameter block
 *     64+P         zero padding up to O = the next multiple of 64
 *        O      N  payload
 *      O+N         zero padding up to T = the next multiple of 8
 *        T      8  XXH3-64 (seed 0) of bytes [0, T)
 *
 *   +--------+--------+-----+---------+-----+-------+
 *   | header | params | pad | payload | pad | XXH3  |   size = T + 8
 *   +--------+--------+-----+---------+-----+-------+
 *   0        64            O              T
 *
 * The magic is built like PNG's: a non-ASCII first byte catches 7-bit
 * channels, CR LF and LF catch line-ending conversion, ^Z stops a DOS
 * `type`. The payload starts on a 64-byte boundary so that a mapped file
 * hands a family cache-line-aligned data (every mapping is page-aligned),
 * and the trailer sits on an 8-byte boundary. With P <= 4096 and
 * N <= 2^63 every size and offset fits in 64 bits, so the reader's
 * arithmetic cannot overflow once those two caps are checked.
 *
 * Every byte is determined by the container: padding, flags and reserved
 * bytes are zero and checked to be zero, so an image that parses
 * re-encodes to itself byte for byte (the fuzz target relies on it), and
 * any single damaged byte is caught by a field check or, failing that, by
 * the checksum.
 *
 * Writing goes through one routine (write_container) for the in-memory
 * encoder, the caller's writer callback and the file writer, so the three
 * cannot drift apart:
 * the header, parameter block and first padding are assembled in a small
 * buffer, the payload pieces are passed straight from the caller's memory
 * or, for a piece that is not in memory as it is saved, from its
 * producer's bounded buffer (format.h), and the checksum is computed over
 * exactly the bytes emitted. None of it allocates: amq__format_write and
 * the generic handle's save to a writer make no allocation at all. A save
 * reports the checksum it wrote, so that no caller reads its file back to
 * learn it (the frontier records its filter file's in its manifest).
 *
 * Reading the header is done here only: amq__format_described_size (the
 * length its first bytes describe, which a reader of a stream needs
 * before it has the rest), amq__format_peek (that and every header field
 * checked) and amq__format_parse (the whole image) share its field checks.
 *
 * The rest lives beside this file, each job in one place: the atomic file
 * writer that saves go through (atomic_file.c: temporary files, links
 * followed, fsync and rename), and the reading or mapping of a file into
 * an image (file_image.c).
 */
#include "core/format.h"
#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/bits.h"
#include "core/hash.h"
#include "core/util.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const uint8_t format_magic[8] = { 0x89, 'A', 'M', 'Q', '\r', '\n', 0x1a, '\n' };

/* Header field offsets (docs/FORMAT.md, "Header"). */
enum {
    OFFSET_MAGIC = 0,
    OFFSET_VERSION = 8,
    OFFSET_FAMILY = 12,
    OFFSET_HASH_KIND = 16,
    OFFSET_FLAGS = 20,
    OFFSET_HASH_KEY = 24,
    OFFSET_PARAMS_LEN = 40,
    OFFSET_RESERVED = 44,
    OFFSET_PAYLOAD_LEN = 56,
    RESERVED_SIZE = 12,
    TRAILER_ALIGN = 8
};

_Static_assert(OFFSET_PAYLOAD_LEN + 8 == AMQ__FORMAT_HEADER_SIZE, "header fields fill 64 bytes");
_Static_assert(OFFSET_RESERVED + RESERVED_SIZE == OFFSET_PAYLOAD_LEN, "reserved bytes");

/* Reads, writes and checksum updates go in chunks of at most this, so that
 * no single call's length overflows size_t or ssize_t anywhere. */
#define IO_CHUNK ((size_t)1 << 30)

static uint64_t align_up(uint64_t value, uint64_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

static uint64_t payload_offset(uint32_t params_len)
{
    return align_up((uint64_t)AMQ__FORMAT_HEADER_SIZE + params_len, AMQ__FORMAT_ALIGN);
}

uint64_t amq__format_encoded_size(uint32_t params_len, uint64_t payload_len)
{
    if (params_len > AMQ__FORMAT_PARAMS_MAX || payload_len > AMQ__FORMAT_PAYLOAD_MAX)
        return 0;
    return align_up(payload_offset(params_len) + payload_len, TRAILER_ALIGN) +
           AMQ__FORMAT_TRAILER_SIZE;
}

static const char *hash_kind_name(uint32_t kind)
{
    switch (kind) {
    case AMQ_HASH_XXH3:
        return "xxh3";
    case AMQ_HASH_MD5:
        return "md5";
    case AMQ_HASH_SIPHASH:
        return "siphash";
    default:
        return "unknown";
    }
}
/* The ids the format assigns (docs/FORMAT.md, "Family ids"), each with
 * the name a caller knows it by: a filter family's name as its spec and
 * amq_filter_family give it (a test checks each against its family), or
 * the word for a container that is not a filter. What such a container is
 * and how to open it is for the layers above to say (filter/containers.c). */
typedef struct registered_id {
    uint32_t family;
    const char *name;
} registered_id;

static const registered_id registered_ids[] = {
    { AMQ__FAMILY_BLOOM, "bloom" },
    { AMQ__FAMILY_BLOCKED_BLOOM, "blocked-bloom" },
    { AMQ__FAMILY_COUNTING_BLOOM, "counting-bloom" },
    { AMQ__FAMILY_SCALABLE_BLOOM, "scalable-bloom" },
    { AMQ__FAMILY_CUCKOO, "cuckoo" },
    { AMQ__FAMILY_GCS, "gcs" },
    { AMQ__FAMILY_HFB, "hfb" },
    { AMQ__FAMILY_FUSE8, "fuse8" },
    { AMQ__FAMILY_FUSE16, "fuse16" },
    { AMQ__FAMILY_BUNDLE, "bundle" },
    { AMQ__FAMILY_FRONTIER, "frontier" },
};

static const registered_id *registered(uint32_t family)
{
    for (size_t i = 0; i < sizeof registered_ids / sizeof registered_ids[0]; i++)
        if (registered_ids[i].family == family)
            return &registered_ids[i];
    return NULL;
}

/* ---- writing --------------------------------------------------------------- */

/* Where encoded bytes go: a buffer (encode), a caller's writer callback
 * (amq__format_write), or a file descriptor (a save's fill). */
typedef struct sink {
    amq__checksum checksum;
    uint8_t *memory;    /* the buffer, or NULL */
    amq_write_fn write; /* the callback when memory is NULL, or NULL for fd */
    void *context;
    int refused; /* the callback's nonzero answer that stopped the write */
    bool broken; /* a produced piece emitted other than its length */
    int fd;
    uint64_t written;
    uint64_t sum; /* the checksum written in the trailer, once written */
} sink;

/* Pass bytes to the sink without checksumming them (the trailer). len is
 * at most IO_CHUNK, so it fits a size_t. */
static int sink_output(sink *s, const void *data, uint64_t len)
{
    if (s->memory) {
        memcpy(s->memory + s->written, data, (size_t)len);
    } else if (s->write) {
        int answer = len > 0 ? s->write(s->context, data, (size_t)len) : 0;
        if (answer != 0) {
            s->refused = answer;
            return -1;
        }
    } else if (amq__write_all(s->fd, data, len, -1) != 0) {
        return -1;
    }
    s->written += len;
    return 0;
}

/* Checksum bytes and pass them to the sink. */
static int sink_emit(sink *s, const void *data, uint64_t len)
{
    const uint8_t *bytes = data;
    while (len > 0) {
        size_t chunk = len < IO_CHUNK ? (size_t)len : IO_CHUNK;
        amq__checksum_update(&s->checksum, bytes, chunk);
        if (sink_output(s, bytes, chunk) != 0)
            return -1;
        bytes += chunk;
        len -= chunk;
    }
    return 0;
}

/* ---- produced pieces ------------------------------------------------------------- */

/* A produced piece on its way: to the writer's sink, or (amq__piece_copy)
 * into memory; and how many bytes it may still emit. */
struct amq__emitter {
    sink *to;     /* NULL: into out */
    uint8_t *out; /* amq__piece_copy's destination, advanced */
    uint64_t left;
    bool overrun; /* the producer tried to emit past its length */
};

int amq__emit(amq__emitter *e, const void *bytes, size_t len)
{
    if (len > e->left) {
        e->overrun = true;
        return -1;
    }
    e->left -= len;
    if (e->to)
        return sink_emit(e->to, bytes, len);
    if (len > 0)
        memcpy(e->out, bytes, len);
    e->out += len;
    return 0;
}

/* Emit a piece, produced or in memory. Returns 0, or -1: the sink failed
 * (as sink_emit), or a producer emitted other than its length, a bug that
 * must not write a wrong file: *broken is then set and errno is EIO. */
static int emit_piece(sink *s, const amq__piece *piece, bool *broken)
{
    if (!piece->produce)
        return sink_emit(s, piece->data, piece->len);
    amq__emitter e = { .to = s, .left = piece->len };
    int answer = piece->produce(&e, piece->data, piece->arg);
    if (e.overrun || (answer == 0 && e.left != 0)) {
        assert(0 && "a produced piece emitted other than its length");
        *broken = true;
        errno = EIO;
        return -1;
    }
    return answer == 0 ? 0 : -1;
}

void amq__piece_copy(uint8_t *out, const amq__piece *piece)
{
    if (!piece->produce) {
        if (piece->len > 0)
            memcpy(out, piece->data, (size_t)piece->len);
        return;
    }
    amq__emitter e = { .to = NULL, .out = out, .left = piece->len };
    int answer = piece->produce(&e, piece->data, piece->arg);
    assert(answer == 0 && e.left == 0 && !e.overrun);
    (void)answer;
}

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* count words at data, each stored little-endian into a buffer and
 * emitted a buffer at a time. */
static int produce_le_u32(amq__emitter *e, const void *data, uint64_t count)
{
    const uint32_t *words = data;
    uint8_t buffer[AMQ__PRODUCE_BUFFER];
    const size_t per_buffer = sizeof buffer / 4;
    for (uint64_t i = 0; i < count;) {
        size_t n = count - i < per_buffer ? (size_t)(count - i) : per_buffer;
        for (size_t j = 0; j < n; j++)
            amq__store_u32le(buffer + 4 * j, words[i + j]);
        int answer = amq__emit(e, buffer, 4 * n);
        if (answer != 0)
            return answer;
        i += n;
    }
    return 0;
}

static int produce_le_u64(amq__emitter *e, const void *data, uint64_t count)
{
    const uint64_t *words = data;
    uint8_t buffer[AMQ__PRODUCE_BUFFER];
    const size_t per_buffer = sizeof buffer / 8;
    for (uint64_t i = 0; i < count;) {
        size_t n = count - i < per_buffer ? (size_t)(count - i) : per_buffer;
        for (size_t j = 0; j < n; j++)
            amq__store_u64le(buffer + 8 * j, words[i + j]);
        int answer = amq__emit(e, buffer, 8 * n);
        if (answer != 0)
            return answer;
        i += n;
    }
    return 0;
}
#endif

amq__piece amq__piece_le_u32(const uint32_t *words, uint64_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (amq__piece){ .data = words, .len = count * 4 };
#else
    return (amq__piece){ .data = words, .len = count * 4, .produce = produce_le_u32, .arg = count };
#endif
}

amq__piece amq__piece_le_u64(const uint64_t *words, uint64_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (amq__piece){ .data = words, .len = count * 8 };
#else
    return (amq__piece){ .data = words, .len = count * 8, .produce = produce_le_u64, .arg = count };
#endif
}

static void store_header(uint8_t *header, const amq__container *c, uint64_t payload_len)
{
    memset(header, 0, AMQ__FORMAT_HEADER_SIZE); /* reserved bytes are zero */
    memcpy(header + OFFSET_MAGIC, format_magic, sizeof format_magic);
    amq__store_u32le(header + OFFSET_VERSION, c->flags ? 2 : 1);
    amq__store_u32le(header + OFFSET_FLAGS, c->flags);
    amq__store_u32le(header + OFFSET_FAMILY, c->family);
    amq__store_u32le(header + OFFSET_HASH_KIND, (uint32_t)c->hasher.kind);
    memcpy(header + OFFSET_HASH_KEY, c->hasher.key, sizeof c->hasher.key);
    amq__store_u32le(header + OFFSET_PARAMS_LEN, c->params_len);
    amq__store_u64le(header + OFFSET_PAYLOAD_LEN, payload_len);
}

/* Emit a whole container. Returns 0, or -1 (file sinks: errno set;
 * callback sinks: s->refused set; either: s->broken when a produced piece
 * was not its length). */
static int write_container(sink *s, const amq__container *c, const amq__piece *pieces,
                           size_t piece_count, uint64_t payload_len)
{
    uint8_t prefix[AMQ__FORMAT_HEADER_SIZE + AMQ__FORMAT_PARAMS_MAX + AMQ__FORMAT_ALIGN];
    uint64_t offset = payload_offset(c->params_len);
    store_header(prefix, c, payload_len);
    if (c->params_len > 0)
        memcpy(prefix + AMQ__FORMAT_HEADER_SIZE, c->params, c->params_len);
    memset(prefix + AMQ__FORMAT_HEADER_SIZE + c->params_len, 0,
           (size_t)offset - AMQ__FORMAT_HEADER_SIZE - c->params_len);

    amq__checksum_init(&s->checksum);
    if (sink_emit(s, prefix, offset) != 0)
        return -1;
    for (size_t i = 0; i < piece_count; i++)
        if (emit_piece(s, &pieces[i], &s->broken) != 0)
            return -1;

    uint64_t end = offset + payload_len;
    size_t pad = (size_t)(align_up(end, TRAILER_ALIGN) - end);
    uint8_t tail[TRAILER_ALIGN - 1 + AMQ__FORMAT_TRAILER_SIZE] = { 0 };
    amq__checksum_update(&s->checksum, tail, pad);
    s->sum = amq__checksum_final(&s->checksum);
    amq__store_u64le(tail + pad, s->sum);
    return sink_output(s, tail, pad + AMQ__FORMAT_TRAILER_SIZE);
}

/* Check what a writer was given and total the payload. */
static int check_container(const amq__container *c, const amq__piece *pieces, size_t piece_count,
                           uint64_t *payload_len, amq_diag *diag)
{
    if (c->family < 1 || c->family > AMQ__FAMILY_MAX)
        return amq__fail(diag, AMQ_EINVAL, "family id %" PRIu32 " is not in 1..%d", c->family,
                         AMQ__FAMILY_MAX);
    if (amq_hasher_check(&c->hasher, NULL) != AMQ_OK)
        return amq__fail(diag, AMQ_EINVAL, "malformed hasher (kind %d, %s)", (int)c->hasher.kind,
                         hash_kind_name((uint32_t)c->hasher.kind));
    if (c->params_len > AMQ__FORMAT_PARAMS_MAX)
        return amq__fail(diag, AMQ_EINVAL,
                         "parameter block of %" PRIu32 " bytes exceeds the %d-byte limit",
                         c->params_len, AMQ__FORMAT_PARAMS_MAX);
    assert(c->params_len == 0 || c->params != NULL);
    uint64_t total = 0;
    for (size_t i = 0; i < piece_count; i++) {
        assert(pieces[i].len == 0 || pieces[i].data != NULL || pieces[i].produce);
        if (!amq__add_u64(total, pieces[i].len, &total) || total > AMQ__FORMAT_PAYLOAD_MAX)
            return amq__fail(diag, AMQ_ERANGE, "payload exceeds the format's limit of 2^63 bytes");
    }
    *payload_len = total;
    return AMQ_OK;
}

int amq__format_encode(uint8_t **out, size_t *out_len, const amq__container *c,
                       const amq__piece *pieces, size_t piece_count, amq_diag *diag)
{
    uint64_t payload_len = 0;
    int status = check_container(c, pieces, piece_count, &payload_len, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t size = amq__format_encoded_size(c->params_len, payload_len);
#if SIZE_MAX < UINT64_MAX
    if (size > SIZE_MAX)
        return amq__fail(diag, AMQ_ERANGE, "a %" PRIu64 "-byte container does not fit in memory",
                         size);
#endif
    uint8_t *buffer = amq__malloc((size_t)size);
    if (!buffer)
        return amq__fail(diag, AMQ_ENOMEM, "cannot allocate %" PRIu64 " bytes for a container",
                         size);
    sink s = { .memory = buffer, .fd = -1, .written = 0 };
    if (write_container(&s, c, pieces, piece_count, payload_len) != 0) {
        amq__free(buffer); /* memory cannot fail: only a broken piece stops it */
        return amq__fail(diag, AMQ_EINVAL, "a payload piece did not produce its length");
    }
    assert(s.written == size);
    *out = buffer;
    *out_len = (size_t)size;
    return AMQ_OK;
}

int amq__format_write(const amq__container *c, const amq__piece *pieces, size_t piece_count,
                      amq_write_fn write, void *context, amq_diag *diag)
{
    assert(write);
    uint64_t payload_len = 0;
    int status = check_container(c, pieces, piece_count, &payload_len, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t size = amq__format_encoded_size(c->params_len, payload_len);
    sink s = { .write = write, .context = context, .fd = -1, .written = 0 };
    if (write_container(&s, c, pieces, piece_count, payload_len) == 0) {
        assert(s.written == size);
        return AMQ_OK;
    }
    if (s.broken)
        return amq__fail(diag, AMQ_EINVAL, "a payload piece did not produce its length");
    /* The writer's reason is its own (its context, errno): say only where
     * it stopped, and leave errno as it left it. */
    int saved_errno = errno;
    amq__fail_at(diag, AMQ_EIO, s.written,
                 "the writer stopped the save with %d after taking %" PRIu64 " of %" PRIu64
                 " bytes",
                 s.refused, s.written, size);
    errno = saved_errno;
    return AMQ_EIO;
}

/* ---- saving ---------------------------------------------------------------- */

/* What a save's fill writes: a container, into the descriptor the atomic
 * writer hands it (each time it asks), its checksum kept. */
typedef struct container_fill {
    const amq__container *c;
    const amq__piece *pieces;
    size_t piece_count;
    uint64_t payload_len;
    uint64_t sum; /* the trailer written, once written */
} container_fill;

static int fill_container(void *context, int fd, amq_diag *diag)
{
    container_fill *f = context;
    (void)diag; /* the container was checked before the save began */
    sink s = { .memory = NULL, .fd = fd, .written = 0 };
    if (write_container(&s, f->c, f->pieces, f->piece_count, f->payload_len) != 0)
        return AMQ_EIO; /* errno set; EIO for a piece not of its length */
    f->sum = s.sum;
    return AMQ_OK;
}

int amq__format_save(uint64_t *checksum, const char *path, const amq__container *c,
                     const amq__piece *pieces, size_t piece_count, amq_diag *diag)
{
    container_fill fill = { .c = c, .pieces = pieces, .piece_count = piece_count };
    int status = check_container(c, pieces, piece_count, &fill.payload_len, diag);
    if (status == AMQ_OK)
        status = amq__atomic_check_name(path, diag);
    if (status == AMQ_OK)
        status = amq__atomic_save(path, fill_container, &fill, diag);
    if (status == AMQ_OK && checksum)
        *checksum = fill.sum;
    return status;
}

int amq__format_save_at(uint64_t *checksum, int dirfd, const char *dir, const char *name,
                        const char *temporary, mode_t mode, const amq__container *c,
                        const amq__piece *pieces, size_t piece_count, amq_diag *diag)
{
    container_fill fill = { .c = c, .pieces = pieces, .piece_count = piece_count };
    amq_diag inner = { .message = "" };
    int status = check_container(c, pieces, piece_count, &fill.payload_len, &inner);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "writing '%s/%s': %s", dir, temporary, inner.message);
    status = amq__atomic_write_at(dirfd, dir, name, temporary, mode, fill_container, &fill, diag);
    if (status == AMQ_OK && checksum)
        *checksum = fill.sum;
    return status;
}

/* ---- parsing --------------------------------------------------------------- */

static int check_zero(const uint8_t *buf, uint64_t from, uint64_t to, const char *what,
                      amq_diag *diag)
{
    for (uint64_t i = from; i < to; i++)
        if (buf[i] != 0)
            return amq__fail_at(diag, AMQ_ECORRUPT, i,
                                "%s byte at offset %" PRIu64 " is 0x%02x, not zero", what, i,
                                buf[i]);
    return AMQ_OK;
}

/* The magic, or as much of it as len bytes hold. */
static int check_magic(const uint8_t *buf, size_t len, amq_diag *diag)
{
    size_t compare = len < sizeof format_magic ? len : sizeof format_magic;
    if (memcmp(buf, format_magic, compare) == 0)
        return AMQ_OK;
    size_t first = 0;
    while (buf[first] == format_magic[first])
        first++;
    if (first >= 4)
        return amq__fail_at(diag, AMQ_EFORMAT, first,
                            "the amq magic's line-ending bytes are altered (byte %zu is 0x%02x, "
                            "not 0x%02x): the file was probably transferred in text mode",
                            first, buf[first], format_magic[first]);
    return amq__fail_at(diag, AMQ_EFORMAT, first,
                        "not an amq file: byte %zu is 0x%02x where the magic has 0x%02x", first,
                        buf[first], format_magic[first]);
}

/* The header's own fields, each on its own; no lengths against the size. */
static int check_header_fields(const uint8_t *buf, amq_diag *diag)
{
    uint32_t version = amq__load_u32le(buf + OFFSET_VERSION);
    if (version == 0)
        return amq__fail_at(diag, AMQ_ECORRUPT, OFFSET_VERSION,
                            "format version at offset %d is 0, which no amq file has",
                            OFFSET_VERSION);
    if (version > AMQ__FORMAT_VERSION)
        return amq__fail_at(diag, AMQ_EVERSION, OFFSET_VERSION,
                            "format version %" PRIu32 " (offset %d) is newer than the %d this "
                            "library reads, or the header is damaged",
                            version, OFFSET_VERSION, AMQ__FORMAT_VERSION);

    uint32_t family = amq__load_u32le(buf + OFFSET_FAMILY);
    if (family < 1 || family > AMQ__FAMILY_MAX)
        return amq__fail_at(diag, AMQ_ECORRUPT, OFFSET_FAMILY,
                            "family id %" PRIu32 " at offset %d is not in 1..%d", family,
                            OFFSET_FAMILY, AMQ__FAMILY_MAX);

    uint32_t kind = amq__load_u32le(buf + OFFSET_HASH_KIND);
    if (kind != AMQ_HASH_XXH3 && kind != AMQ_HASH_MD5 && kind != AMQ_HASH_SIPHASH)
        return amq__fail_at(diag, AMQ_ECORRUPT, OFFSET_HASH_KIND,
                            "hash kind %" PRIu32 " at offset %d is not 1 (xxh3), 2 (md5) or "
                            "3 (siphash)",
                            kind, OFFSET_HASH_KIND);
    amq_hasher hasher;
    hasher.kind = (amq_hash_kind)kind;
    memcpy(hasher.key, buf + OFFSET_HASH_KEY, sizeof hasher.key);
    if (amq_hasher_check(&hasher, NULL) != AMQ_OK)
        return amq__fail_at(diag, AMQ_ECORRUPT, OFFSET_HASH_KEY,
                            "hash key at offset %d has nonzero bytes that hash kind %s does "
                            "not use",
                            OFFSET_HASH_KEY, hash_kind_name(kind));

    uint32_t flags = amq__load_u32le(buf + OFFSET_FLAGS);
    if (version == 1 && flags != 0)
        return amq__fail_at(diag, AMQ_ECORRUPT, OFFSET_FLAGS,
                            "flags at offset %d are 0x%08" PRIx32 "; format version 1 defines "
                            "none",
                            OFFSET_FLAGS, flags);
    if (version == 2 && (flags == 0 || (flags & ~(uint32_t)AMQ__FORMAT_FLAGS_KNOWN)))
        return amq__fail_at(diag, AMQ_ECORRUPT, OFFSET_FLAGS,
                            "flags at offset %d are 0x%08" PRIx32 "; format version 2 has "
                            "flags and defines only 0x%08x (add-once)",
                            OFFSET_FLAGS, flags, AMQ__FORMAT_FLAGS_KNOWN);

    uint32_t params_len = amq__load_u32le(buf + OFFSET_PARAMS_LEN);
    if (params_len > AMQ__FORMAT_PARAMS_MAX)
        return amq__fail_at(diag, AMQ_ECORRUPT, OFFSET_PARAMS_LEN,
                            "parameter block length %" PRIu32 " at offset %d exceeds the "
                            "%d-byte limit",
                            params_len, OFFSET_PARAMS_LEN, AMQ__FORMAT_PARAMS_MAX);

    int status =
        check_zero(buf, OFFSET_RESERVED, OFFSET_RESERVED + RESERVED_SIZE, "reserved", diag);
    if (status != AMQ_OK)
        return status;

    uint64_t payload_len = amq__load_u64le(buf + OFFSET_PAYLOAD_LEN);
    if (payload_len > AMQ__FORMAT_PAYLOAD_MAX)
        return amq__fail_at(diag, AMQ_ECORRUPT, OFFSET_PAYLOAD_LEN,
                            "payload length %" PRIu64 " at offset %d exceeds the limit of 2^63",
                            payload_len, OFFSET_PAYLOAD_LEN);
    return AMQ_OK;
}

static uint64_t checksum_of(const uint8_t *buf, size_t len)
{
    amq__checksum checksum;
    amq__checksum_init(&checksum);
    for (size_t done = 0; done < len;) {
        size_t chunk = len - done < IO_CHUNK ? len - done : IO_CHUNK;
        amq__checksum_update(&checksum, buf + done, chunk);
        done += chunk;
    }
    return amq__checksum_final(&checksum);
}

int amq__format_parse(amq__container *out, const uint8_t *buf, size_t len, amq_diag *diag)
{
    const size_t minimum = AMQ__FORMAT_HEADER_SIZE + AMQ__FORMAT_TRAILER_SIZE;
    if (len < minimum) {
        /* A short file that does not even begin like one is not an amq file;
         * a short prefix of an amq file is a truncated one. */
        size_t compare = len < sizeof format_magic ? len : sizeof format_magic;
        if (compare > 0 && memcmp(buf, format_magic, compare) != 0)
            return amq__fail(diag, AMQ_EFORMAT,
                             "not an amq file: %zu bytes, not beginning with the amq magic", len);
        return amq__fail_at(diag, AMQ_ECORRUPT, len,
                            "file is %zu bytes, shorter than the %zu-byte minimum (a %d-byte "
                            "header and a %d-byte checksum): truncated",
                            len, minimum, AMQ__FORMAT_HEADER_SIZE, AMQ__FORMAT_TRAILER_SIZE);
    }
    int status = check_magic(buf, len, diag);
    if (status == AMQ_OK)
        status = check_header_fields(buf, diag);
    if (status != AMQ_OK)
        return status;

    uint32_t params_len = amq__load_u32le(buf + OFFSET_PARAMS_LEN);
    uint64_t payload_len = amq__load_u64le(buf + OFFSET_PAYLOAD_LEN);
    uint64_t expected = amq__format_encoded_size(params_len, payload_len);
    if (expected != (uint64_t)len)
        return amq__fail_at(diag, AMQ_ECORRUPT, len,
                            "file is %zu bytes but its header (parameter block %" PRIu32
                            " bytes, payload %" PRIu64 " bytes) describes %" PRIu64 " bytes: %s",
                            len, params_len, payload_len, expected,
                            expected > (uint64_t)len ? "truncated" : "extra bytes at the end");

    uint64_t offset = payload_offset(params_len);
    uint64_t trailer = (uint64_t)len - AMQ__FORMAT_TRAILER_SIZE;
    status =
        check_zero(buf, AMQ__FORMAT_HEADER_SIZE + (uint64_t)params_len, offset, "padding", diag);
    if (status == AMQ_OK)
        status = check_zero(buf, offset + payload_len, trailer, "padding", diag);
    if (status != AMQ_OK)
        return status;

    uint64_t stored = amq__load_u64le(buf + trailer);
    uint64_t computed = checksum_of(buf, (size_t)trailer);
    if (stored != computed)
        return amq__fail_at(diag, AMQ_ECORRUPT, trailer,
                            "checksum mismatch: the file stores %016" PRIx64 " at offset %" PRIu64
                            " but bytes 0..%" PRIu64 " hash to %016" PRIx64,
                            stored, trailer, trailer - 1, computed);

    out->family = amq__load_u32le(buf + OFFSET_FAMILY);
    out->flags = amq__load_u32le(buf + OFFSET_FLAGS);
    out->hasher.kind = (amq_hash_kind)amq__load_u32le(buf + OFFSET_HASH_KIND);
    memcpy(out->hasher.key, buf + OFFSET_HASH_KEY, sizeof out->hasher.key);
    out->params = buf + AMQ__FORMAT_HEADER_SIZE;
    out->params_len = params_len;
    out->payload = buf + offset;
    out->payload_len = payload_len;
    return AMQ_OK;
}

uint64_t amq__format_described_size(const uint8_t *head)
{
    if (memcmp(head, format_magic, sizeof format_magic) != 0)
        return 0;
    return amq__format_encoded_size(amq__load_u32le(head + OFFSET_PARAMS_LEN),
                                    amq__load_u64le(head + OFFSET_PAYLOAD_LEN));
}

int amq__format_peek(uint64_t *file_bytes, uint32_t *family, const uint8_t *head, size_t len,
                     amq_diag *diag)
{
    int status = len > 0 ? check_magic(head, len, diag) : AMQ_OK;
    if (status != AMQ_OK)
        return status;
    if (len < AMQ__FORMAT_HEADER_SIZE) {
        *file_bytes = AMQ__FORMAT_HEADER_SIZE;
        return amq__fail_at(diag, AMQ_ERANGE, len,
                            "%zu bytes of a %d-byte header: the rest is needed to tell the "
                            "file's length",
                            len, AMQ__FORMAT_HEADER_SIZE);
    }
    status = check_header_fields(head, diag);
    if (status != AMQ_OK)
        return status;
    *file_bytes = amq__format_described_size(head);
    *family = amq__load_u32le(head + OFFSET_FAMILY);
    return AMQ_OK;
}

int amq_image_peek(uint64_t *file_bytes, const char **family, const void *head, size_t head_len,
                   amq_diag *diag)
{
    if (file_bytes)
        *file_bytes = 0;
    if (family)
        *family = NULL;
    if (!file_bytes || (!head && head_len > 0))
        return amq__fail(diag, AMQ_EINVAL, "%s is NULL", !file_bytes ? "file_bytes" : "head");
    uint64_t bytes = 0;
    uint32_t id = 0;
    int status = amq__format_peek(&bytes, &id, head, head_len, diag);
    if (status == AMQ_OK || status == AMQ_ERANGE)
        *file_bytes = bytes;
    if (status == AMQ_OK && family) {
        const registered_id *r = registered(id);
        *family = r ? r->name : NULL;
    }
    return status;
}

int amq__format_open(amq__file_image *img, amq__container *c, const char *path, unsigned flags,
                     amq_diag *diag)
{
    if (flags & ~(unsigned)AMQ_LOAD_MMAP)
        return amq__fail(diag, AMQ_EINVAL, "unknown open flags 0x%x", flags);
    int status = amq__file_image_open(img, path, (flags & AMQ_LOAD_MMAP) != 0, diag);
    if (status != AMQ_OK)
        return status;
    status = amq__format_parse(c, img->data, img->len, diag);
    if (status != AMQ_OK)
        amq__file_image_close(img);
    return status;
}

/* ---- parameter blocks ------------------------------------------------------ */

void amq__params_init(amq__params_writer *w)
{
    w->len = 0;
    w->overflow = false;
}

/* Append bytes. After one put fails every later put is refused too, so a
 * smaller field can never land where a larger one was skipped. */
static void params_put(amq__params_writer *w, const uint8_t *bytes, uint32_t n)
{
    if (w->overflow || n > AMQ__FORMAT_PARAMS_MAX - w->len) {
        w->overflow = true;
        return;
    }
    memcpy(w->bytes + w->len, bytes, n);
    w->len += n;
}

void amq__params_put_u8(amq__params_writer *w, uint8_t v)
{
    params_put(w, &v, 1);
}

void amq__params_put_u32(amq__params_writer *w, uint32_t v)
{
    uint8_t bytes[4];
    amq__store_u32le(bytes, v);
    params_put(w, bytes, sizeof bytes);
}

void amq__params_put_u64(amq__params_writer *w, uint64_t v)
{
    uint8_t bytes[8];
    amq__store_u64le(bytes, v);
    params_put(w, bytes, sizeof bytes);
}

void amq__params_put_f64(amq__params_writer *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    amq__params_put_u64(w, bits);
}

void amq__params_reader_init(amq__params_reader *r, const uint8_t *bytes, uint32_t len)
{
    r->bytes = bytes;
    r->len = len;
    r->position = 0;
}

/* The next n bytes, or NULL (position unchanged) when fewer remain. */
static const uint8_t *params_take(amq__params_reader *r, uint32_t n)
{
    if (n > r->len - r->position)
        return NULL;
    const uint8_t *p = r->bytes + r->position;
    r->position += n;
    return p;
}

int amq__params_get_u8(amq__params_reader *r, uint8_t *v)
{
    const uint8_t *p = params_take(r, 1);
    if (!p)
        return AMQ_ECORRUPT;
    *v = *p;
    return AMQ_OK;
}

int amq__params_get_u32(amq__params_reader *r, uint32_t *v)
{
    const uint8_t *p = params_take(r, 4);
    if (!p)
        return AMQ_ECORRUPT;
    *v = amq__load_u32le(p);
    return AMQ_OK;
}

int amq__params_get_u64(amq__params_reader *r, uint64_t *v)
{
    const uint8_t *p = params_take(r, 8);
    if (!p)
        return AMQ_ECORRUPT;
    *v = amq__load_u64le(p);
    return AMQ_OK;
}

int amq__params_get_f64(amq__params_reader *r, double *v)
{
    uint64_t bits;
    int status = amq__params_get_u64(r, &bits);
    if (status == AMQ_OK)
        memcpy(v, &bits, sizeof bits);
    return status;
}

int amq__params_end(const amq__params_reader *r)
{
    return r->position == r->len ? AMQ_OK : AMQ_ECORRUPT;
}
