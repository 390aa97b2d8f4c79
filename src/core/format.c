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
 * Saving a regular file is atomic: the bytes go to a new file in the
 * file's directory (so the rename stays within one filesystem), which is
 * fsynced, named "<dir>/.<name>.tmp.XXXXXX", closed, renamed over the
 * file, and then the directory is fsynced so the rename itself is durable.
 * A crash at any moment leaves the file either old or new, never a
 * mixture. The new file is unnamed (O_TMPFILE) until it is complete, where
 * the filesystem allows, so a process killed while writing leaves nothing;
 * elsewhere it is named from the start, the suffix XXXXXX encoding the
 * writer's pid, and each save first removes the temporary files of the
 * same file whose writer is gone (see TEMP_PID_LIMIT). Either way a killed
 * save's leftover lives at most until the file's next save. What path
 * names decides the rest:
 *
 *   nothing            a new file, mode 0644 less the umask (and a
 *                      directory's default ACL): the temporary file is
 *                      created with open(O_CREAT | O_EXCL, 0644) under a
 *                      random name rather than with mkstemp, which fixes
 *                      mode 0600 and whose repair would need the umask,
 *                      readable only by changing it (a race with threads)
 *   a symbolic link    followed, link after link: the target is replaced
 *                      in its own directory and the link stays a link (a
 *                      dangling link gets its target created)
 *   a regular file     replaced, keeping its mode, owner and group: the
 *                      temporary file is created 0600, given them before a
 *                      byte is written, then renamed. A process that may
 *                      not give it the old owner or group (not root,
 *                      saving another user's file) refuses (AMQ_EIO,
 *                      EPERM), as it refuses a read-only file (AMQ_EIO,
 *                      EACCES): one without write permission for the
 *                      caller, or for root, whom the kernel lets write
 *                      anything, one with no write bit in its mode. The
 *                      name is replaced, so the file's other hard links
 *                      keep the old contents
 *   a character device written into in place: no temporary file, not
 *   or a FIFO          atomic (/dev/null; a FIFO's open waits for a reader)
 *   /proc/PID/fd/N     (where /dev/fd/N and /dev/stdout lead) a file some
 *                      process holds open, whatever its type: written into
 *                      too; a regular one is appended to, as the shell's
 *                      ">" or ">>" that opened it meant, not replaced
 *   anything else      a directory, a socket, a block device: refused
 *                      (AMQ_EINVAL), nothing written
 *
 * A save never changes what kind of thing path names, nor its mode or
 * owner.
 *
 * Reading: amq__file_image_open reads a file whole or maps it read-only.
 * A file whose size changes while it is read is reported as corrupt: such
 * a file is being rewritten in place by someone, never by amq's saves,
 * which replace it. A mapped file must likewise not be truncated in place
 * while mapped (the kernel would raise SIGBUS).
 */
#include "core/format.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/hash.h"
#include "core/util.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/vfs.h>
/* glibc names O_TMPFILE only for _GNU_SOURCE, which would also swap
 * strerror_r for its GNU form; its own name for it is there all the same. */
#if !defined(O_TMPFILE) && defined(__O_TMPFILE)
#define O_TMPFILE __O_TMPFILE
#endif
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0 /* <linux/magic.h> */
#endif
#endif

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

const char *amq__format_non_filter(uint32_t family)
{
    switch (family) {
    case AMQ__FAMILY_BUNDLE:
        return "a bundle of filters, not one filter: open it with amq_bundle_open ('amq info' "
               "lists its members)";
    case AMQ__FAMILY_FRONTIER:
        return "a crawl frontier's manifest, not a filter: open its directory with "
               "amq_frontier_open";
    default:
        return NULL;
    }
}

/* ---- writing --------------------------------------------------------------- */

/* Where encoded bytes go: a buffer (encode), a caller's writer callback
 * (amq__format_write), or a file descriptor (save). */
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

int amq__write_all(int fd, const void *data, uint64_t len, int64_t offset)
{
    const uint8_t *bytes = data;
    while (len > 0) {
        size_t chunk = len < IO_CHUNK ? (size_t)len : IO_CHUNK;
        ssize_t n = offset < 0 ? write(fd, bytes, chunk) : pwrite(fd, bytes, chunk, (off_t)offset);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        bytes += n;
        len -= (uint64_t)n;
        if (offset >= 0)
            offset += n;
    }
    return 0;
}

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

int amq__io_fail(amq_diag *diag, int saved_errno, const char *format, ...)
{
    /* Room left for ": " and the reason, so a long path never cuts it off. */
    char what[sizeof diag->message - 160];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    char reason[128];
    if (strerror_r(saved_errno, reason, sizeof reason) != 0)
        snprintf(reason, sizeof reason, "error %d", saved_errno);
    amq__fail(diag, AMQ_EIO, "%s: %s", what, reason);
    errno = saved_errno;
    return AMQ_EIO;
}

#define TEMP_INFIX      ".tmp."
#define TEMP_SUFFIX_LEN 6

/*
 * A temporary file's suffix is six base-62 digits, least significant first,
 * of pid + TEMP_PID_LIMIT * (tag + TEMP_TAGS * nonce):
 *
 *   pid    the process that made it (0 if its pid does not fit), so that a
 *          later save can tell a file left by a process that died (kill -9,
 *          a crash, a power cut) from one being written, and remove it
 *   tag    a hash of the host's name, the pid namespace and the pid: a pid
 *          means something only on its host and in its namespace (a
 *          directory shared over NFS or between containers), so a file
 *          whose tag is not ours for its pid is left alone; so is, but for
 *          one in 128, the random-named leftover of an older amq
 *   nonce  random, so that one process's saves (threads) differ
 *
 * Six digits, as long as the random suffix was, so that whoever reads
 * these names (the frontier's directory sweep) sees the same shape.
 */
#define TEMP_PID_LIMIT 4194304u /* 2^22, Linux's PID_MAX_LIMIT */
#define TEMP_TAGS      128u
#define TEMP_NONCES    105u /* 2^22 * 128 * 105 < 62^6 */
#define TEMP_ATTEMPTS  100u

static const char temp_alphabet[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* The paths a save uses, derived from the destination path. */
typedef struct save_paths {
    char *directory;  /* for the final fsync; "." when path has no slash */
    char *temporary;  /* "<dir>/.<name>.tmp.XXXXXX"; the X's replaced per attempt */
    size_t name_at;   /* where ".<name>.tmp." starts in temporary */
    size_t suffix_at; /* where the X's start */
} save_paths;

/* Where this process's pids mean something (see the tag above). */
typedef struct temp_host {
    char name[256];
    uint64_t pid_namespace[2]; /* device and inode of /proc/self/ns/pid, or 0 */
} temp_host;

static void temp_host_init(temp_host *h)
{
    memset(h, 0, sizeof *h);
    if (gethostname(h->name, sizeof h->name - 1) != 0)
        memset(h->name, 0, sizeof h->name);
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) == 0) {
        h->pid_namespace[0] = (uint64_t)st.st_dev;
        h->pid_namespace[1] = (uint64_t)st.st_ino;
    }
}

static uint32_t temp_tag(const temp_host *h, uint32_t pid)
{
    return (uint32_t)(amq__xxh3_64(h, sizeof *h, pid) % TEMP_TAGS);
}

static uint32_t own_pid(void)
{
    pid_t pid = getpid();
    return pid > 0 && (uint64_t)pid < TEMP_PID_LIMIT ? (uint32_t)pid : 0;
}

/* Write the suffix for this process into p->temporary, its nonce drawn
 * afresh for each attempt. */
static void name_temporary(save_paths *p, const temp_host *h, unsigned attempt)
{
    struct {
        struct timespec now;
        const void *stack;
        unsigned attempt;
    } entropy;
    memset(&entropy, 0, sizeof entropy);
    clock_gettime(CLOCK_REALTIME, &entropy.now);
    entropy.stack = &entropy;
    entropy.attempt = attempt;
    uint32_t pid = own_pid();
    uint64_t nonce = amq__xxh3_64(&entropy, sizeof entropy, pid) % TEMP_NONCES;
    uint64_t value = pid + (uint64_t)TEMP_PID_LIMIT * (temp_tag(h, pid) + TEMP_TAGS * nonce);
    for (size_t i = 0; i < TEMP_SUFFIX_LEN; i++) {
        p->temporary[p->suffix_at + i] = temp_alphabet[value % (sizeof temp_alphabet - 1)];
        value /= sizeof temp_alphabet - 1;
    }
    p->temporary[p->suffix_at + TEMP_SUFFIX_LEN] = '\0';
}

/* The pid and tag a temporary file's suffix holds; false if it is not a
 * suffix name_temporary writes. */
static bool parse_temporary_suffix(const char *suffix, uint32_t *pid, uint32_t *tag)
{
    if (strlen(suffix) != TEMP_SUFFIX_LEN)
        return false;
    uint64_t value = 0;
    for (size_t i = TEMP_SUFFIX_LEN; i-- > 0;) {
        const char *digit = strchr(temp_alphabet, suffix[i]);
        if (!digit)
            return false;
        value = value * (sizeof temp_alphabet - 1) + (uint64_t)(digit - temp_alphabet);
    }
    uint64_t rest = value / TEMP_PID_LIMIT;
    if (rest / TEMP_TAGS >= TEMP_NONCES)
        return false;
    *pid = (uint32_t)(value % TEMP_PID_LIMIT);
    *tag = (uint32_t)(rest % TEMP_TAGS);
    return true;
}

static int check_file_name(const char *path, amq_diag *diag)
{
    const char *slash = strrchr(path, '/');
    if (*(slash ? slash + 1 : path) == '\0')
        return amq__fail(diag, AMQ_EINVAL, "cannot save to '%s': it does not end in a file name",
                         path);
    return AMQ_OK;
}

/* The directory part of path in a new string: "name" -> ".", "/name" ->
 * "/", "dir/name" -> "dir". NULL when out of memory. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *directory = slash ? path : ".";
    size_t len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    char *copy = amq__malloc(len + 1);
    if (copy) {
        memcpy(copy, directory, len);
        copy[len] = '\0';
    }
    return copy;
}

static int save_paths_init(save_paths *p, const char *path, amq_diag *diag)
{
    int status = check_file_name(path, diag);
    if (status != AMQ_OK)
        return status;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t head = (size_t)(name - path); /* path up to and including the slash */
    size_t name_len = strlen(name);
    p->directory = directory_of(path);
    p->temporary = amq__malloc(head + 1 + name_len + strlen(TEMP_INFIX) + TEMP_SUFFIX_LEN + 1);
    if (!p->directory || !p->temporary) {
        amq__free(p->directory);
        amq__free(p->temporary);
        return amq__fail(diag, AMQ_ENOMEM, "out of memory saving '%s'", path);
    }
    memcpy(p->temporary, path, head);
    p->temporary[head] = '.';
    memcpy(p->temporary + head + 1, name, name_len);
    memcpy(p->temporary + head + 1 + name_len, TEMP_INFIX, strlen(TEMP_INFIX));
    p->name_at = head;
    p->suffix_at = head + 1 + name_len + strlen(TEMP_INFIX);
    p->temporary[p->suffix_at] = '\0';
    return AMQ_OK;
}

static void save_paths_free(save_paths *p)
{
    amq__free(p->directory);
    amq__free(p->temporary);
}

/* Remove the temporary files of this file's earlier saves whose process is
 * gone: a save killed before its rename (kill -9, a crash) leaves one that
 * nobody else would ever remove. One whose process lives, or may (kill
 * says anything but ESRCH), or that another host or pid namespace made,
 * is being written and stays. Best effort: a directory that cannot be
 * read is reported by the save that follows, if at all. */
static void remove_stale_temporaries(const save_paths *p, const temp_host *h)
{
    const char *prefix = p->temporary + p->name_at; /* ".<name>.tmp." */
    size_t prefix_len = p->suffix_at - p->name_at;
    DIR *dir = opendir(p->directory);
    if (!dir)
        return;
    uint32_t self = own_pid();
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        uint32_t pid, tag;
        if (strncmp(entry->d_name, prefix, prefix_len) != 0 ||
            !parse_temporary_suffix(entry->d_name + prefix_len, &pid, &tag))
            continue;
        if (pid == 0 || pid == self || tag != temp_tag(h, pid))
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        unlinkat(dirfd(dir), entry->d_name, 0);
    }
    closedir(dir);
}

/* Create the temporary file with the given mode (less the umask) under a
 * fresh name. O_EXCL makes a collision a retry, not a clobber; open rather
 * than mkstemp, which fixes mode 0600 and whose repair would need the
 * umask, readable only by changing it (a race with threads). Returns the
 * descriptor, or -1 with errno set. */
static int create_temporary(save_paths *p, const temp_host *h, mode_t mode)
{
    for (unsigned attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        name_temporary(p, h, attempt);
        int fd = open(p->temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* An unnamed file in directory (O_TMPFILE): a process killed while writing
 * it leaves nothing behind, as the kernel frees a file with no name once
 * its last descriptor closes. -1 with errno set where the kernel or the
 * filesystem has no such files. */
static int open_unnamed(const char *directory, mode_t mode)
{
#ifdef O_TMPFILE
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
#else
    (void)directory;
    (void)mode;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

/* Give the unnamed file fd a temporary name, for the rename over the file
 * (linkat cannot replace a name). Through /proc/self/fd/N, which anyone
 * may link where /proc is mounted (linkat's AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH). Returns 0, or -1 with errno set. */
static int link_temporary(int fd, save_paths *p, const temp_host *h)
{
    char by_proc[64];
    snprintf(by_proc, sizeof by_proc, "/proc/self/fd/%d", fd);
    for (unsigned attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        name_temporary(p, h, attempt);
        if (linkat(AT_FDCWD, by_proc, AT_FDCWD, p->temporary, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Make a completed rename durable. Filesystems that cannot sync a
 * directory say EINVAL; that is not an error of the save. Returns 0, or -1
 * with errno set. */
static int sync_directory(const char *directory)
{
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int result = fsync(fd);
    if (result != 0 && errno == EINVAL)
        result = 0;
    int saved_errno = errno;
    close(fd);
    errno = saved_errno;
    return result;
}

/* ---- where a save writes --------------------------------------------------- */

/* How a save treats what its path names. */
typedef enum save_kind {
    SAVE_CREATE,  /* nothing: a new file, mode 0644 less the umask */
    SAVE_REPLACE, /* a regular file: replaced by name, keeping its mode, owner and group */
    SAVE_INTO     /* a character device, a FIFO, or a file open in some process named by
                     /proc/PID/fd/N: written into where it is, in place */
} save_kind;

typedef struct save_target {
    char *name; /* the path with the symbolic links of its last component followed */
    save_kind kind;
    struct stat st; /* what is there (SAVE_REPLACE, SAVE_INTO) */
} save_target;

/* Links followed before giving up with ELOOP, as many as Linux follows. */
#define SAVE_MAX_LINKS 40

/* Whether the symbolic link name lives in procfs. /proc/PID/fd/N (where
 * /dev/fd/N and /dev/stdout lead) names a file a process holds open: a
 * pipe, a terminal, or a file its shell opened for appending, or one
 * already deleted. Its text ("pipe:[1234]") is no name to replace: the
 * file is written into, as the shell's own redirection would. */
static bool link_in_procfs(const char *name)
{
#ifdef __linux__
    char *directory = directory_of(name);
    struct statfs fs;
    bool procfs = directory && statfs(directory, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
    amq__free(directory);
    return procfs;
#else
    (void)name;
    return false;
#endif
}

/* The path the symbolic link name points to, as a path from here: its
 * text, relative to the link's directory unless absolute. size: the link's
 * lstat size (0 when the filesystem does not say). NULL with errno set. */
static char *follow_link(const char *name, off_t size)
{
    size_t capacity = size > 0 ? (size_t)size + 1 : 256;
    for (;;) {
        char *text = amq__malloc(capacity);
        if (!text)
            return NULL;
        ssize_t len = readlink(name, text, capacity);
        if (len < 0) {
            int saved_errno = errno;
            amq__free(text);
            errno = saved_errno;
            return NULL;
        }
        if ((size_t)len < capacity) {
            text[len] = '\0';
            const char *slash = strrchr(name, '/');
            if (text[0] == '/' || !slash)
                return text;
            size_t head = (size_t)(slash - name) + 1;
            char *joined = amq__malloc(head + (size_t)len + 1);
            if (joined) {
                memcpy(joined, name, head);
                memcpy(joined + head, text, (size_t)len + 1);
            }
            amq__free(text);
            if (!joined)
                errno = ENOMEM;
            return joined;
        }
        amq__free(text);
        if (capacity > SIZE_MAX / 2) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        capacity *= 2;
    }
}

static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISBLK(mode)  ? "a block device"
                            : "neither a regular file, a character device nor a FIFO";
}

/* Follow path's last component through its symbolic links and say what a
 * save does there. On success the caller frees t->name. */
static int resolve_target(save_target *t, const char *path, amq_diag *diag)
{
    char *name = amq__malloc(strlen(path) + 1);
    if (!name)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory saving '%s'", path);
    strcpy(name, path);
    bool open_file = false;
    for (int links = 0;; links++) {
        if (lstat(name, &t->st) != 0) {
            if (errno == ENOENT) {
                t->name = name;
                t->kind = SAVE_CREATE;
                return AMQ_OK;
            }
            int status = amq__io_fail(diag, errno, "saving '%s': cannot look at '%s'", path, name);
            amq__free(name);
            return status;
        }
        if (!S_ISLNK(t->st.st_mode))
            break;
        if (link_in_procfs(name)) {
            if (stat(name, &t->st) != 0) {
                int status =
                    amq__io_fail(diag, errno, "saving '%s': cannot follow '%s'", path, name);
                amq__free(name);
                return status;
            }
            open_file = true;
            break;
        }
        char *next = links < SAVE_MAX_LINKS ? follow_link(name, t->st.st_size) : NULL;
        if (links >= SAVE_MAX_LINKS)
            errno = ELOOP;
        if (!next) {
            int status = amq__io_fail(
                diag, errno, "saving '%s': cannot follow the symbolic link '%s'", path, name);
            amq__free(name);
            return status;
        }
        amq__free(name);
        name = next;
    }
    mode_t mode = t->st.st_mode;
    if (!S_ISREG(mode) && !S_ISCHR(mode) && !S_ISFIFO(mode)) {
        amq__free(name);
        return amq__fail(diag, AMQ_EINVAL,
                         "'%s' is %s: a filter is saved to a regular file, a character device "
                         "or a FIFO",
                         path, file_kind(mode));
    }
    t->name = name;
    t->kind = S_ISREG(mode) && !open_file ? SAVE_REPLACE : SAVE_INTO;
    return AMQ_OK;
}

/* Refuse to replace a file its mode marks read-only: the mode is the
 * owner's word that it is not to change. For others than root, the
 * kernel's answer for writing (group, ACLs, a read-only mount); root may
 * write any file, so for root only the mode bits count: none set for
 * write is read-only. */
static int check_writable(const save_target *t, const char *path, amq_diag *diag)
{
    bool read_only;
    if (geteuid() == 0)
        read_only = (t->st.st_mode & 0222) == 0;
    else if (faccessat(AT_FDCWD, t->name, W_OK, AT_EACCESS) == 0)
        read_only = false;
    else if (errno == EACCES)
        read_only = true;
    else
        return amq__io_fail(diag, errno, "saving '%s': cannot write '%s'", path, t->name);
    if (!read_only)
        return AMQ_OK;
    unsigned mode = (unsigned)(t->st.st_mode & 07777);
    if (strcmp(t->name, path) == 0)
        amq__fail(diag, AMQ_EIO, "'%s' is read-only (mode %04o): make it writable to save over it",
                  path, mode);
    else
        amq__fail(diag, AMQ_EIO,
                  "'%s' is read-only: its target '%s' has mode %04o; make it writable to save "
                  "over it",
                  path, t->name, mode);
    errno = EACCES;
    return AMQ_EIO;
}

/* Give the new file the old one's owner, group and mode, before any byte
 * of it is written and before it takes the old one's name, so it is never
 * seen with other permissions. chown comes first: it clears the set-ID
 * bits that chmod then sets. A process that may not give the file the old
 * owner or group (one not root, saving another user's file, or one of a
 * group it is not in) refuses the save rather than hand the file over. */
static int keep_attributes(int fd, const save_target *t, const char *path, amq_diag *diag)
{
    struct stat now;
    if (fstat(fd, &now) != 0)
        return amq__io_fail(diag, errno, "saving '%s': cannot stat its temporary file", path);
    bool chowned = false;
    if (now.st_uid != t->st.st_uid || now.st_gid != t->st.st_gid) {
        if (fchown(fd, t->st.st_uid, t->st.st_gid) != 0) {
            if (errno != EPERM)
                return amq__io_fail(
                    diag, errno, "saving '%s': cannot give the new file its owner and group", path);
            amq__fail(diag, AMQ_EIO,
                      "'%s' belongs to user %lu, group %lu; this process (user %lu) cannot give "
                      "a new file that owner and group, so it is left as it is",
                      path, (unsigned long)t->st.st_uid, (unsigned long)t->st.st_gid,
                      (unsigned long)geteuid());
            errno = EPERM;
            return AMQ_EIO;
        }
        chowned = true;
    }
    mode_t mode = t->st.st_mode & 07777;
    if ((chowned || (now.st_mode & 07777) != mode) && fchmod(fd, mode) != 0)
        return amq__io_fail(diag, errno, "saving '%s': cannot give the new file mode %04o", path,
                            (unsigned)mode);
    return AMQ_OK;
}

/* Write a container into a character device, a FIFO or an open file, in
 * place: there is no name to replace, so this is not atomic. An open
 * regular file is appended to, as the redirection that opened it (">" has
 * emptied it, ">>" keeps what it holds) would. */
static int save_into(uint64_t *checksum, const save_target *t, const char *path,
                     const amq__container *c, const amq__piece *pieces, size_t piece_count,
                     uint64_t payload_len, amq_diag *diag)
{
    bool regular = S_ISREG(t->st.st_mode);
    int fd = open(t->name, O_WRONLY | O_NOCTTY | O_CLOEXEC | (regular ? O_APPEND : 0));
    if (fd < 0)
        return amq__io_fail(diag, errno, "saving '%s': cannot open it", path);
    int status = AMQ_OK;
    sink s = { .memory = NULL, .fd = fd, .written = 0 };
    if (write_container(&s, c, pieces, piece_count, payload_len) != 0)
        status = amq__io_fail(diag, errno, "saving '%s': writing it", path);
    else if (regular && fsync(fd) != 0 && errno != EINVAL)
        status = amq__io_fail(diag, errno, "saving '%s': syncing it", path);
    int saved_errno = errno;
    if (close(fd) != 0 && status == AMQ_OK) {
        saved_errno = errno;
        status = amq__io_fail(diag, errno, "saving '%s': closing it", path);
    }
    if (status == AMQ_OK)
        *checksum = s.sum;
    errno = saved_errno;
    return status;
}

/* Write the container into a new file in the target's directory, synced
 * and closed, named paths->temporary, for the rename over the target.
 * unnamed: try an unnamed file first, named only once complete. On failure
 * no file is left. */
static int write_temporary(uint64_t *sum, save_paths *paths, const temp_host *host, bool unnamed,
                           const save_target *target, const char *path, const amq__container *c,
                           const amq__piece *pieces, size_t piece_count, uint64_t payload_len,
                           amq_diag *diag)
{
    /* A replacement starts private and takes the old file's mode before
     * anything is written to it. */
    mode_t mode = target->kind == SAVE_REPLACE ? 0600 : 0644;
    int fd = unnamed ? open_unnamed(paths->directory, mode) : -1;
    unnamed = fd >= 0;
    if (!unnamed)
        fd = create_temporary(paths, host, mode);
    if (fd < 0)
        return amq__io_fail(diag, errno, "saving '%s': cannot create a temporary file in '%s'",
                            path, paths->directory);
    bool named = !unnamed;
    int status = AMQ_OK;
    if (target->kind == SAVE_REPLACE)
        status = keep_attributes(fd, target, path, diag);
    sink s = { .memory = NULL, .fd = fd, .written = 0 };
    if (status == AMQ_OK) {
        if (write_container(&s, c, pieces, piece_count, payload_len) != 0)
            status = amq__io_fail(diag, errno, "saving '%s': writing a temporary file in '%s'",
                                  path, paths->directory);
        else if (fsync(fd) != 0)
            status = amq__io_fail(diag, errno, "saving '%s': syncing a temporary file in '%s'",
                                  path, paths->directory);
    }
    if (status == AMQ_OK && unnamed) {
        if (link_temporary(fd, paths, host) != 0) {
            /* No way to name it here (no /proc, a filesystem that refuses):
             * the bytes go again to a file named from the start. */
            close(fd);
            return write_temporary(sum, paths, host, false, target, path, c, pieces, piece_count,
                                   payload_len, diag);
        }
        named = true;
    }
    int saved_errno = errno;
    if (close(fd) != 0 && status == AMQ_OK) {
        saved_errno = errno;
        status = amq__io_fail(diag, errno, "saving '%s': closing a temporary file in '%s'", path,
                              paths->directory);
    }
    if (status != AMQ_OK && named)
        unlink(paths->temporary);
    if (status == AMQ_OK)
        *sum = s.sum;
    errno = saved_errno;
    return status;
}

int amq__format_save(uint64_t *checksum, const char *path, const amq__container *c,
                     const amq__piece *pieces, size_t piece_count, amq_diag *diag)
{
    uint64_t ignored;
    if (!checksum)
        checksum = &ignored;
    uint64_t payload_len = 0;
    int status = check_container(c, pieces, piece_count, &payload_len, diag);
    if (status == AMQ_OK)
        status = check_file_name(path, diag);
    if (status != AMQ_OK)
        return status;
    save_target target;
    status = resolve_target(&target, path, diag);
    if (status != AMQ_OK)
        return status;
    if (target.kind == SAVE_INTO) {
        status = save_into(checksum, &target, path, c, pieces, piece_count, payload_len, diag);
        amq__free(target.name);
        return status;
    }
    save_paths paths = { NULL, NULL, 0, 0 };
    if (target.kind == SAVE_REPLACE)
        status = check_writable(&target, path, diag);
    if (status == AMQ_OK)
        status = save_paths_init(&paths, target.name, diag);
    if (status != AMQ_OK) {
        int saved_errno = errno;
        amq__free(target.name);
        errno = saved_errno;
        return status;
    }

    temp_host host;
    temp_host_init(&host);
    remove_stale_temporaries(&paths, &host);
    uint64_t sum = 0;
    status = write_temporary(&sum, &paths, &host, true, &target, path, c, pieces, piece_count,
                             payload_len, diag);
    int saved_errno = errno;
    if (status == AMQ_OK && rename(paths.temporary, target.name) != 0) {
        saved_errno = errno;
        status =
            amq__io_fail(diag, errno, "saving '%s': renaming '%s' over it", path, paths.temporary);
        unlink(paths.temporary);
    } else if (status == AMQ_OK && sync_directory(paths.directory) != 0) {
        saved_errno = errno;
        status = amq__io_fail(diag, errno,
                              "'%s' was replaced, but syncing its directory '%s' failed, so the "
                              "replacement may not survive a crash",
                              path, paths.directory);
    }
    save_paths_free(&paths);
    amq__free(target.name);
    if (status == AMQ_OK)
        *checksum = sum;
    else
        errno = saved_errno;
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

static int check_magic(const uint8_t *buf, amq_diag *diag)
{
    if (memcmp(buf, format_magic, sizeof format_magic) == 0)
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
    int status = check_magic(buf, diag);
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

/* ---- file images ----------------------------------------------------------- */

int64_t amq__read_full(int fd, void *buf, size_t len, int64_t offset)
{
    uint8_t *bytes = buf;
    size_t done = 0;
    while (done < len) {
        size_t chunk = len - done < IO_CHUNK ? len - done : IO_CHUNK;
        ssize_t n = offset < 0 ? read(fd, bytes + done, chunk)
                               : pread(fd, bytes + done, chunk, (off_t)((uint64_t)offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (int64_t)done;
}

/* A regular file of a known size: read it exactly, and notice if it
 * shrinks or grows meanwhile. The image goes into a table
 * (amq__alloc_table): 64-byte aligned, as a mapped file is, and from 2 MiB
 * up on huge pages where the system gives them, since the families that
 * query a loaded image in place (fuse, gcs) read it at random, as a built
 * filter's table. */
static int read_regular(amq__file_image *img, int fd, size_t size, const char *path, amq_diag *diag)
{
    uint8_t *data = amq__alloc_table(size, false);
    if (!data)
        return amq__fail(diag, AMQ_ENOMEM, "cannot allocate %zu bytes to read '%s'", size, path);
    int64_t got = amq__read_full(fd, data, size, -1);
    uint8_t extra;
    int64_t beyond = got == (int64_t)size ? amq__read_full(fd, &extra, 1, -1) : 0;
    if (got < 0 || beyond < 0) {
        int saved_errno = errno;
        amq__aligned_free(data);
        return amq__io_fail(diag, saved_errno, "reading '%s'", path);
    }
    if (got != (int64_t)size || beyond != 0) {
        amq__aligned_free(data);
        return amq__fail(diag, AMQ_ECORRUPT,
                         "'%s' changed size from %zu bytes while being read: it is being "
                         "rewritten in place",
                         path, size);
    }
    img->data = data;
    img->len = size;
    return AMQ_OK;
}

/*
 * A pipe or device: read until end of file, growing the buffer, but judge
 * it by its first bytes. The buffer is an aligned block, 64-byte aligned
 * like a regular file's table, so that every image is one kind of block
 * (amq__file_image_close frees them all alike); it grows by copying, as
 * realloc would. The header comes first: without the amq magic,
 * or with lengths no file can have, reading stops there (the parser then
 * says what it is not); with them, at most the size the header describes
 * and one byte more (so that extra bytes are still noticed). /dev/zero or
 * an endless pipe of something else is not read to its end.
 */
static int read_stream(amq__file_image *img, int fd, const char *path, amq_diag *diag)
{
    size_t capacity = 1 << 16, used = 0;
    uint64_t wanted = AMQ__FORMAT_HEADER_SIZE;
    bool judged = false;
    uint8_t *data = NULL;
    for (;;) {
        if (used == capacity || !data) {
            if (data)
                capacity = capacity > SIZE_MAX / 2 ? 0 : capacity * 2;
            uint8_t *bigger = capacity ? amq__aligned_alloc(AMQ__FORMAT_ALIGN, capacity) : NULL;
            if (!bigger) {
                amq__aligned_free(data);
                return amq__fail(diag, AMQ_ENOMEM, "out of memory reading '%s'", path);
            }
            if (used)
                memcpy(bigger, data, used);
            amq__aligned_free(data);
            data = bigger;
        }
        size_t room = capacity - used;
        if ((uint64_t)room > wanted - used)
            room = (size_t)(wanted - used);
        int64_t got = amq__read_full(fd, data + used, room, -1);
        if (got < 0) {
            int saved_errno = errno;
            amq__aligned_free(data);
            return amq__io_fail(diag, saved_errno, "reading '%s'", path);
        }
        used += (size_t)got;
        if ((size_t)got < room)
            break; /* end of file */
        if (used < wanted)
            continue;
        if (judged)
            break; /* one byte past what the header describes */
        judged = true;
        uint64_t described =
            memcmp(data, format_magic, sizeof format_magic) != 0
                ? 0
                : amq__format_encoded_size(amq__load_u32le(data + OFFSET_PARAMS_LEN),
                                           amq__load_u64le(data + OFFSET_PAYLOAD_LEN));
        if (described == 0 || described >= SIZE_MAX)
            break;
        wanted = described + 1;
    }
    if (used == 0) {
        amq__aligned_free(data);
        data = NULL;
    }
    img->data = data;
    img->len = used;
    return AMQ_OK;
}

int amq__file_image_open(amq__file_image *img, const char *path, bool use_mmap, amq_diag *diag)
{
    img->data = NULL;
    img->len = 0;
    img->mapped = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return amq__io_fail(diag, errno, "cannot open '%s'", path);
    struct stat st;
    int status = AMQ_OK;
    if (fstat(fd, &st) != 0) {
        status = amq__io_fail(diag, errno, "cannot stat '%s'", path);
    } else if (S_ISDIR(st.st_mode)) {
        status = amq__fail(diag, AMQ_EFORMAT, "'%s' is a directory, not an amq file", path);
    } else if (!S_ISREG(st.st_mode)) {
        status = read_stream(img, fd, path, diag);
    } else if ((uint64_t)st.st_size > SIZE_MAX) {
        status = amq__fail(diag, AMQ_ENOMEM, "'%s' is too large for this address space", path);
    } else if (st.st_size == 0) {
        status = AMQ_OK; /* nothing to map; the parser rejects the empty image */
    } else if (use_mmap) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            status = amq__io_fail(diag, errno, "cannot map '%s'", path);
        } else {
            img->data = map;
            img->len = (size_t)st.st_size;
            img->mapped = true;
        }
    } else {
        status = read_regular(img, fd, (size_t)st.st_size, path, diag);
    }
    int saved_errno = errno;
    close(fd);
    errno = saved_errno;
    return status;
}

void amq__file_image_close(amq__file_image *img)
{
    if (img->mapped)
        munmap(img->data, img->len);
    else
        amq__aligned_free(img->data);
    img->data = NULL;
    img->len = 0;
    img->mapped = false;
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
