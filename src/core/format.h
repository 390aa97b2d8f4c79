/*
 * format.h - the container file format every family is saved in
 * (specified in docs/FORMAT.md), and the little parameter-block writer and
 * reader families use for their own fields.
 *
 * A family saves by filling an amq__container (family id, hasher, its
 * parameter block) and passing its payload as a list of pieces (so a filter
 * made of several arrays is written without first copying them together).
 * Loading reads (or maps) the whole file, amq__format_parse checks every
 * field, every length and the checksum, and hands the family pointers into
 * the image: nothing in it is trusted before that.
 */
#ifndef AMQ_FORMAT_H
#define AMQ_FORMAT_H

#include "amq/amq.h"
#include "core/atomic_file.h"
#include "core/file_image.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Family identifiers stored in files. Pinned: never renumber. */
enum amq__family_id {
    AMQ__FAMILY_BLOOM = 1,
    AMQ__FAMILY_BLOCKED_BLOOM = 2,
    AMQ__FAMILY_COUNTING_BLOOM = 3,
    AMQ__FAMILY_SCALABLE_BLOOM = 4,
    AMQ__FAMILY_CUCKOO = 5,
    AMQ__FAMILY_GCS = 6,
    AMQ__FAMILY_HFB = 7,
    AMQ__FAMILY_FUSE8 = 8,
    AMQ__FAMILY_FUSE16 = 9,
    AMQ__FAMILY_BUNDLE = 10,   /* many named filters in one file (bundle.c), not a filter */
    AMQ__FAMILY_FRONTIER = 11, /* a crawl frontier's manifest (frontier.c), not a filter */
    AMQ__FAMILY_MAX = 63       /* ids above this are refused as corrupt */
};

/* The newest format version this build reads. It writes version 1 for a
 * container without flags, which every amq reads, and version 2 for one
 * with flags, which version 2 defines (an earlier amq then answers
 * AMQ_EVERSION, not a misread filter). */
#define AMQ__FORMAT_VERSION 2

/* The container flags, version 2. */
enum {
    /* The filter was filled add-once (amq_mark_add_once): amq_remove
     * refuses it. */
    AMQ__FORMAT_FLAG_ADD_ONCE = 1,
    AMQ__FORMAT_FLAGS_KNOWN = AMQ__FORMAT_FLAG_ADD_ONCE
};

/* Fixed sizes (bytes). */
#define AMQ__FORMAT_HEADER_SIZE  64
#define AMQ__FORMAT_PARAMS_MAX   4096 /* cap on a family's parameter block */
#define AMQ__FORMAT_ALIGN        64   /* the payload starts at a multiple of this */
#define AMQ__FORMAT_TRAILER_SIZE 8
/* The largest payload a file may hold: 2^63 bytes, so that every offset and
 * size in the format fits in a uint64_t without overflow. */
#define AMQ__FORMAT_PAYLOAD_MAX ((uint64_t)1 << 63)

/* What a file says, apart from the payload bytes. */
typedef struct amq__container {
    uint32_t family;       /* enum amq__family_id */
    uint32_t flags;        /* AMQ__FORMAT_FLAG_*: 0 in a version-1 file */
    amq_hasher hasher;     /* key hash kind and seed/key */
    const uint8_t *params; /* the family's parameter block */
    uint32_t params_len;   /* <= AMQ__FORMAT_PARAMS_MAX */
    const uint8_t *payload;
    uint64_t payload_len;
} amq__container;

/*
 * One piece of a payload being written: bytes in memory, or bytes made
 * while they are written. A piece that is not in memory as it is saved (a
 * big-endian host's words, an hfb bank's code, a cuckoo table's counted
 * copies) has a producer, which hands its exact bytes to an emitter in
 * order, a bounded buffer on its own stack at a time, so that a save
 * allocates nothing: not in a Redis fork child, where a save must not fail
 * for want of memory. The writer (amq__format_write, amq__format_encode,
 * amq__format_save) checksums and passes on what it is handed.
 */
typedef struct amq__emitter amq__emitter;

/* Hand the next len bytes of a produced piece to the writer: 0, or nonzero
 * when the writer stopped (or the piece would pass its length), which the
 * producer then returns at once. */
int amq__emit(amq__emitter *e, const void *bytes, size_t len);

/* Emit a piece's bytes, exactly its len of them, in order; allocate
 * nothing. data and arg are the piece's. Returns 0, or amq__emit's
 * nonzero. */
typedef int (*amq__produce_fn)(amq__emitter *e, const void *data, uint64_t arg);

/* The most a producer keeps on its stack for what it emits. */
#define AMQ__PRODUCE_BUFFER 4096

typedef struct amq__piece {
    const void *data;        /* the len bytes; with produce, what produce reads */
    uint64_t len;            /* the piece's bytes */
    amq__produce_fn produce; /* NULL: the bytes are at data */
    uint64_t arg;            /* passed to produce */
} amq__piece;

/* A piece of count words in the host's byte order, saved little-endian:
 * on a little-endian host the words where they lie, on a big-endian one a
 * producer that converts them through a bounded buffer. */
amq__piece amq__piece_le_u32(const uint32_t *words, uint64_t count);
amq__piece amq__piece_le_u64(const uint64_t *words, uint64_t count);

/* Write a piece's bytes to out (piece->len bytes): the bytes in memory
 * copied, or the producer run into out. For a writer that gathers pieces
 * into memory of its own (a bundle's member, a fuzz target). */
void amq__piece_copy(uint8_t *out, const amq__piece *piece);

/* Size in bytes of the file that amq__format_encode / _save would write;
 * 0 when params_len exceeds AMQ__FORMAT_PARAMS_MAX or payload_len exceeds
 * AMQ__FORMAT_PAYLOAD_MAX. */
uint64_t amq__format_encoded_size(uint32_t params_len, uint64_t payload_len);

/* Encode a container into a new buffer (for in-memory dumps). The payload is
 * the concatenation of the pieces; c->payload/payload_len are ignored.
 * *out is a plain block (core/alloc.h): the caller frees it with
 * amq__free. Returns AMQ_OK, AMQ_EINVAL (params too long, unknown family or
 * hasher), AMQ_ERANGE, AMQ_ENOMEM. */
int amq__format_encode(uint8_t **out, size_t *out_len, const amq__container *c,
                       const amq__piece *pieces, size_t piece_count, amq_diag *diag);

/* Stream a container to a writer callback: the same bytes amq__format_encode
 * produces, in order, in pieces of at most 1 GiB (the header, parameter
 * block and padding in one; each payload piece in memory straight from
 * there, a large one in several; a produced piece as its producer emits
 * it; the last padding and the checksum in one), never an empty one.
 * Nothing is allocated.
 * Returns AMQ_OK; as encode before the first byte (AMQ_EINVAL,
 * AMQ_ERANGE); AMQ_EIO when the writer returns nonzero, at once, the diag
 * giving its value and how many bytes it had taken (errno is the
 * writer's). */
int amq__format_write(const amq__container *c, const amq__piece *pieces, size_t piece_count,
                      amq_write_fn write, void *context, amq_diag *diag);

/* Save atomically (atomic_file.h's amq__atomic_save: symbolic links
 * followed, a new file in the target's directory, fsync, rename over the
 * file, fsync the directory; a device or an open file written into).
 * Returns AMQ_OK, AMQ_EIO (errno kept; the diag names the path and the
 * reason), AMQ_EINVAL (as for encode, a path ending in '/', or a
 * directory, socket or block device), AMQ_ERANGE, AMQ_ENOMEM. On success
 * *checksum (when checksum is not NULL) is the checksum the save wrote:
 * the file's trailer, its last 8 bytes read as a little-endian u64 (for a
 * file written into, the trailer of the container appended), so that a
 * caller need not read the file back to learn it. */
int amq__format_save(uint64_t *checksum, const char *path, const amq__container *c,
                     const amq__piece *pieces, size_t piece_count, amq_diag *diag);

/* Save as name inside the directory open as dirfd, atomically
 * (atomic_file.h's amq__atomic_write_at: under the caller's temporary
 * name, with mode less the umask; dir names the directory in messages).
 * *checksum (may be NULL) as amq__format_save's. Returns AMQ_OK, AMQ_EIO
 * (errno kept), or as encode (the diag naming the temporary file). */
int amq__format_save_at(uint64_t *checksum, int dirfd, const char *dir, const char *name,
                        const char *temporary, mode_t mode, const amq__container *c,
                        const amq__piece *pieces, size_t piece_count, amq_diag *diag);

/* Validate a whole file image and describe it; the pointers in *out point
 * into buf, and *out is written only on success. Checks, in order: length
 * >= header + trailer (AMQ_ECORRUPT; AMQ_EFORMAT instead when the short
 * image does not begin like the magic), magic (AMQ_EFORMAT), version
 * (AMQ_EVERSION if newer, AMQ_ECORRUPT if 0), every header field, lengths
 * against the image size, reserved and padding bytes are zero, and the
 * checksum (AMQ_ECORRUPT). Every failure says in diag which field or
 * offset and why. Untrusted input: reads only buf[0, len); allocates
 * nothing. */
int amq__format_parse(amq__container *out, const uint8_t *buf, size_t len, amq_diag *diag);

/* The size of the file whose first AMQ__FORMAT_HEADER_SIZE bytes are at
 * head, as its magic and its two lengths say, no other field checked; 0
 * when head does not begin with the magic or its lengths pass the caps.
 * For a reader of a stream, which learns from it how much to read. */
uint64_t amq__format_described_size(const uint8_t *head);

/* What a file's first len bytes say: its size (*file_bytes) and family id
 * (*family), every header field checked as amq__format_parse checks it
 * (the same statuses and messages). Fewer than AMQ__FORMAT_HEADER_SIZE
 * bytes that begin like the magic: AMQ_ERANGE, *file_bytes the bytes
 * needed to tell; ones that do not: AMQ_EFORMAT. Untrusted input: reads
 * only head[0, len); allocates nothing. */
int amq__format_peek(uint64_t *file_bytes, uint32_t *family, const uint8_t *head, size_t len,
                     amq_diag *diag);

/* Open a container file: check flags (0 or AMQ_LOAD_MMAP; else AMQ_EINVAL),
 * read or map it into *img, and parse it into *c (pointing into *img). On
 * failure the image is closed; on success the caller owns it. Returns as
 * amq__file_image_open and amq__format_parse. */
int amq__format_open(amq__file_image *img, amq__container *c, const char *path, unsigned flags,
                     amq_diag *diag);

/* ---- parameter blocks ---------------------------------------------------- */

/* A family's parameters, written field by field, little-endian. */
typedef struct amq__params_writer {
    uint8_t bytes[AMQ__FORMAT_PARAMS_MAX];
    uint32_t len;
    bool overflow; /* a put did not fit */
} amq__params_writer;

void amq__params_init(amq__params_writer *w);
void amq__params_put_u8(amq__params_writer *w, uint8_t v);
void amq__params_put_u32(amq__params_writer *w, uint32_t v);
void amq__params_put_u64(amq__params_writer *w, uint64_t v);
void amq__params_put_f64(amq__params_writer *w, double v); /* IEEE-754 bits, LE */

typedef struct amq__params_reader {
    const uint8_t *bytes;
    uint32_t len;
    uint32_t position;
} amq__params_reader;

void amq__params_reader_init(amq__params_reader *r, const uint8_t *bytes, uint32_t len);
/* Each returns AMQ_OK or AMQ_ECORRUPT when the block is too short. */
int amq__params_get_u8(amq__params_reader *r, uint8_t *v);
int amq__params_get_u32(amq__params_reader *r, uint32_t *v);
int amq__params_get_u64(amq__params_reader *r, uint64_t *v);
int amq__params_get_f64(amq__params_reader *r, double *v);
/* AMQ_OK when every byte was read, else AMQ_ECORRUPT (trailing garbage). */
int amq__params_end(const amq__params_reader *r);

#endif /* AMQ_FORMAT_H */
