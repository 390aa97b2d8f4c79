/*
 * frontier_internal.h - what the crawl frontier's two files share:
 * frontier.c (the queue's memory part, the filter, checkpoints) and
 * frontier_segments.c (the spill: the part of the queue kept in segment
 * files). Both are described in those files' opening comments.
 */
#ifndef AMQ_FRONTIER_INTERNAL_H
#define AMQ_FRONTIER_INTERNAL_H

#include "amq/amq.h"
#include "amq/frontier.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* AMQ_OK if the frontier's invariants (frontier.c, I1 to I5) hold, else
 * AMQ_ECORRUPT naming the broken one in *diag (may be NULL). O(URLs in
 * memory). */
int amq__frontier_check(const amq_frontier *f, amq_diag *diag);

#endif /* AMQ_FRONTIER_INTERNAL_H */
