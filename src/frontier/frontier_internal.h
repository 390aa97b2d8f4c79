/*
 * frontier_internal.h - what the crawl frontier's files share:
 * frontier.c (the queue's memory part, the filter, checkpoints),
 * frontier_store.c (its directory: file names, the sweep, atomic writes),
 * frontier_manifest.c (the manifest's encoding) and frontier_segments.c
 * (the spill: the part of the queue kept in segment files). Each is
 * described in its opening comment.
 */
#ifndef AMQ_FRONTIER_INTERNAL_H
#define AMQ_FRONTIER_INTERNAL_H

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/frontier.h"
#include "core/format.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- records ------------------------------------------------------------------ */

/* A queued URL as stored, in memory and in segment files alike:
 *
 *     u32 length | length bytes of URL | u32 check
 *
 * check is the low 32 bits of XXH3-64 (seed 0) of the length field and the
 * URL. */
#define AMQ__RECORD_OVERHEAD 8

static inline size_t amq__record_size(size_t url_len)
{
    return url_len + AMQ__RECORD_OVERHEAD;
}

/* Write the record of url (len <= AMQ_FRONTIER_MAX_URL) at at, which has
 * room for amq__record_size(len) bytes. */
void amq__record_store(uint8_t *at, const void *url, size_t len);

/* The URL length of a record already checked (or stored by this process). */
static inline size_t amq__record_url_len(const uint8_t *at)
{
    return amq__load_u32le(at);
}

/* ---- the spill ------------------------------------------------------------------ */

/* Segment files: "segment-<id as 16 hex digits>.seg". */
#define AMQ__SEGMENT_NAME_SIZE sizeof("segment-0123456789abcdef.seg")
#define AMQ__SEGMENT_HEADER    24

/* One segment file. */
typedef struct amq__segment {
    uint64_t id;
    uint64_t length;  /* bytes written: the header, then whole records */
    uint64_t records; /* records written */
    uint64_t synced;  /* bytes known to be on stable storage */
    bool committed;   /* listed in the last checkpoint's manifest */
    int fd;           /* -1 while closed */
} amq__segment;

/* The spilled part of the queue: segment files, oldest first, and how far
 * the oldest has been read. */
typedef struct amq__spill {
    int dir_fd;              /* the frontier's directory (not owned) */
    const char *dir;         /* its path, for messages (not owned) */
    uint64_t segment_bytes;  /* the size at which the next segment is begun */
    amq__segment *segments;  /* segments[0 .. count), oldest first */
    size_t count, capacity;  /* used and allocated entries */
    uint64_t next_id;        /* the id the next new segment gets */
    uint64_t read_offset;    /* in segments[0]: the first byte not yet read */
    uint64_t read_records;   /* records of segments[0] already read */
    uint64_t unread_records; /* records not yet read, in all segments */
    uint64_t bytes;          /* the live segments' lengths, summed */
    uint64_t lost;           /* records found damaged and skipped, ever (as of the
                                last checkpoint, plus since) */
    uint64_t *retired;       /* committed segments read to the end since the
                                checkpoint: removed when the next one lands */
    size_t retired_count, retired_capacity;
} amq__spill;

/* An empty spill whose files live in dir_fd (dir names it in messages). */
void amq__spill_init(amq__spill *s, int dir_fd, const char *dir, uint64_t segment_bytes);

/* Close every segment and free the spill's memory; no file is removed. */
void amq__spill_free(amq__spill *s);

/* Append whole records (bytes [0, len)) to the newest segment, beginning
 * new segments at segment_bytes. *done_bytes and *done_records say how much
 * was appended: all of it on AMQ_OK, a prefix of whole records on failure
 * (AMQ_EIO, AMQ_ENOMEM, AMQ_ERANGE: a new segment is needed and no segment
 * id is left). */
int amq__spill_append(amq__spill *s, const uint8_t *bytes, size_t len, size_t *done_bytes,
                      uint64_t *done_records, amq_diag *diag);

/* Read the next whole records of the oldest segment that still has unread
 * ones into into (capacity >= the largest record): at most capacity bytes
 * and max_records (>= 1) records, each checked. Segments read to the end
 * are retired first. A damaged record (or the part of a segment a
 * truncation took) is skipped and counted in s->lost: the records before
 * it are delivered by this call, the ones after it by the next. *len and
 * *records say what was read: 0 and 0 only when nothing readable is
 * left. AMQ_EIO, AMQ_ENOMEM. */
int amq__spill_read(amq__spill *s, uint8_t *into, size_t capacity, uint64_t max_records,
                    size_t *len, uint64_t *records, amq_diag *diag);

/* Retire the leading segments that have been read to the end (all their
 * bytes or all their records): close them, and remove at once those no
 * checkpoint lists. Records a segment was written with and that its bytes
 * no longer held are counted lost. AMQ_ENOMEM. */
int amq__spill_retire_read(amq__spill *s, amq_diag *diag);

/* fsync every segment written since it was last synced, and the directory
 * when a segment was created since the last checkpoint. AMQ_EIO. */
int amq__spill_sync(amq__spill *s, amq_diag *diag);

/* A checkpoint listing the live segments has landed: mark them committed
 * and remove the retired ones. */
void amq__spill_commit(amq__spill *s);

/* Remove the segments no checkpoint lists (when closing without saving). */
void amq__spill_discard_uncommitted(amq__spill *s);

/* Whether the file name in dir_fd is a segment file with id in its header
 * (magic, version and id), which only a frontier writes. */
bool amq__segment_file_is_ours(int dir_fd, const char *name, uint64_t id);

/* The manifest's segment table: 24 bytes per live segment (u64 id, u64
 * length, u64 records). */
#define AMQ__SPILL_ENTRY_SIZE 24

/* Write the table of the live segments (s->count entries) to out. */
void amq__spill_table_store(const amq__spill *s, uint8_t *out);

/* Take the live segments from a checkpoint's table (count entries) with
 * segments[0] read up to read_offset / read_records, checking the table
 * against itself and against next_id, and each segment file: present, its
 * header right (when the file still holds one), cut back to its listed
 * length when longer. A file shorter than listed is taken: its missing
 * records are counted lost when reading reaches them. Returns AMQ_OK;
 * AMQ_ECORRUPT naming the file or entry; AMQ_EIO; AMQ_ENOMEM. */
int amq__spill_table_load(amq__spill *s, const uint8_t *table, uint64_t count, uint64_t next_id,
                          uint64_t read_offset, uint64_t read_records, amq_diag *diag);

/* If name is a segment file's, its id in *id. */
bool amq__segment_name_parse(const char *name, uint64_t *id);

/* Whether segment id is live. */
bool amq__spill_holds(const amq__spill *s, uint64_t id);

/* Format "<prefix><id as 16 hex digits><suffix>" into out; the name of a
 * numbered file (segments, filter generations). */
void amq__frontier_numbered_name(char *out, size_t size, const char *prefix, uint64_t id,
                                 const char *suffix);

/* If name is "<prefix><16 lowercase hex digits><suffix>", its number in *id. */
bool amq__frontier_numbered_name_parse(const char *name, const char *prefix, const char *suffix,
                                       uint64_t *id);

/* ---- the frontier ---------------------------------------------------------------- */

/* The directory's files (frontier_store.c names them). */
#define AMQ__FRONTIER_MANIFEST_NAME    "frontier.amq"
#define AMQ__FRONTIER_FILTER_NAME_SIZE sizeof("filter-0123456789abcdef.amq")

/* Records in memory, between start and end of bytes[0, capacity). */
typedef struct amq__record_buffer {
    uint8_t *bytes;
    size_t capacity;
    size_t start;     /* the first record not yet popped */
    size_t end;       /* the end of the last record */
    uint64_t records; /* records in [start, end) */
} amq__record_buffer;

struct amq_frontier {
    char *dir;                  /* absolute path */
    int dir_fd;                 /* held with an exclusive flock while open */
    amq_filter *handle;         /* the filter's owner, through which it is saved and loaded */
    amq_scalable_bloom *filter; /* the handle's filter, for the typed calls */
    amq_scalable_bloom_params filter_params; /* as made; stored in the manifest */
    amq_hasher hasher;
    amq_frontier_canonicalize_fn canonicalize;
    void *canonicalize_user;
    amq__record_buffer head; /* read-ahead of the spill's oldest segment */
    amq__record_buffer tail; /* the newest URLs, not spilled */
    size_t head_bytes_max, tail_bytes_max;
    uint64_t head_urls_max, tail_urls_max;
    amq__spill spill;
    uint64_t pushed, enqueued, popped;
    uint64_t generation; /* of the last checkpoint */
    char canonical[AMQ_FRONTIER_MAX_URL + 1];
};

/* ---- the directory (frontier_store.c) ------------------------------------------------ */

/* "filter-<generation as 16 hex digits>.amq", the checkpoint's filter file. */
void amq__frontier_filter_name(char out[AMQ__FRONTIER_FILTER_NAME_SIZE], uint64_t generation);

/* Create dir if needed, open it into f->dir_fd, lock it, and resolve its
 * path into f->dir (for messages: every file is reached through the
 * descriptor). AMQ_EINVAL (empty path, not a directory), AMQ_EIO (the
 * lock among them), AMQ_ENOMEM. */
int amq__frontier_open_directory(amq_frontier *f, const char *dir, amq_diag *diag);

/* Walk the directory. fresh (there is no manifest): the manifest's
 * temporary file is removed, any other file of the frontier's names is
 * damage (AMQ_ECORRUPT), and any other file at all means this is not a
 * frontier's directory (AMQ_EINVAL). Otherwise the files the checkpoint
 * f is at records as the frontier's and unneeded are removed (retired:
 * the segments its manifest lists as retired). AMQ_EIO. */
int amq__frontier_sweep(amq_frontier *f, bool fresh, const uint64_t *retired, size_t retired_count,
                        amq_diag *diag);

/* Write a container as name in the directory, atomically, with mode (less
 * the umask); *checksum (may be NULL) receives its trailer. */
int amq__frontier_write_file(uint64_t *checksum, amq_frontier *f, const char *name, mode_t mode,
                             const amq__container *c, const amq__piece *pieces, size_t piece_count,
                             amq_diag *diag);

/* Read the whole file name of the directory into *image (a symbolic link
 * is not followed). AMQ_EIO (errno ENOENT for a missing file),
 * AMQ_ECORRUPT (not a regular file, or it changed size while read),
 * AMQ_ENOMEM. */
int amq__frontier_read_file(amq__file_image *image, const amq_frontier *f, const char *name,
                            amq_diag *diag);

/* Write f's filter as filter-<generation>.amq, read-only, and learn the
 * checksum written. */
int amq__frontier_save_filter(uint64_t *checksum, amq_frontier *f, uint64_t generation,
                              amq_diag *diag);

/* Load the checkpoint's filter file into f->handle and f->filter: a
 * scalable Bloom filter's file whose trailer is checksum. AMQ_ECORRUPT
 * when it is missing, damaged or not the checkpoint's. */
int amq__frontier_load_filter(amq_frontier *f, uint64_t checksum, amq_diag *diag);

/* ---- the manifest (frontier_manifest.c) --------------------------------------------- */

/* What a manifest says besides the segment table. */
typedef struct amq__manifest {
    uint64_t generation;
    amq_scalable_bloom_params filter;
    uint64_t pushed, enqueued, popped;
    uint64_t filter_checksum;
    uint64_t next_segment;
    uint64_t read_offset, read_records;
    uint64_t segments;
    uint64_t lost;              /* version 2: records skipped as damaged */
    uint64_t retired;           /* version 2: segments awaiting removal */
    const uint8_t *retired_ids; /* their ids, u64 each, after the segment table */
} amq__manifest;

/* Write the manifest m, with f's segment table, as the directory's
 * frontier.amq: the commit point of a checkpoint. */
int amq__manifest_write(amq_frontier *f, const amq__manifest *m, amq_diag *diag);

/* Read a manifest's fields from its container and check them against
 * each other; the segment table (c->payload) is the spill's to check.
 * AMQ_ECORRUPT, AMQ_EVERSION. */
int amq__manifest_parse(amq__manifest *m, const amq__container *c, amq_diag *diag);

/* ---- invariants ------------------------------------------------------------------ */

/* AMQ_OK if the frontier's invariants (frontier.c, I1 to I5) hold, else
 * AMQ_ECORRUPT naming the broken one in *diag (may be NULL). O(URLs in
 * memory). */
int amq__frontier_check(const amq_frontier *f, amq_diag *diag);

#endif /* AMQ_FRONTIER_INTERNAL_H */
