/*
 * frontier_segments.c - the crawl frontier's spill: the middle of its FIFO
 * queue, kept in append-only segment files in the frontier's directory
 * (frontier.c holds the two ends in memory and explains the whole).
 *
 * A segment file is a 24-byte header and then records, back to back:
 *
 *   offset  size  field
 *        0     8  magic 89 41 4D 51 53 45 47 0A ("\x89AMQSEG\n")
 *        8     4  segment format version (1)
 *       12     4  zero
 *       16     8  the segment's id, as in its name "segment-<id in hex>.seg"
 *       24     .  records: u32 length | URL bytes | u32 check
 *
 * All integers little-endian. A record's check is the low 32 bits of
 * XXH3-64 (seed 0) over its length field and URL, so a torn or damaged
 * record is found when it is read back, and its length is bounded by
 * AMQ_FRONTIER_MAX_URL before anything trusts it. The same encoding is the
 * one the queue keeps in memory: spilling is one write of the memory
 * buffer, reading back one read into it.
 *
 * Writing: records go to the newest segment until it would pass
 * segment_bytes; then a new segment is begun (a record never spans two, and
 * a record larger than segment_bytes gets a segment of its own). Writes are
 * positional (pwrite at the length this process has written), so bytes a
 * failed write left past that length are simply overwritten later. Ids
 * count up from 1 and the manifest stores the next one, so 2^64 - 1 is
 * never a segment's id: past it (which only a damaged manifest can bring
 * about) a spill that needs a new segment answers AMQ_ERANGE.
 *
 * Reading: the oldest segment is read from read_offset in chunks of whole
 * records, each checked; a chunk that ends inside a record stops before it,
 * and the next read starts there. A segment whose records have all been
 * read is retired: its file is removed at once if no checkpoint lists it,
 * or after the next checkpoint lands if the last one does (a crash before
 * then reopens that checkpoint, which still needs the file).
 *
 * Damage does not stop the queue. A record whose check fails, whose length
 * is out of bounds or that runs past the end of the file is skipped and
 * counted lost, and reading goes on at the next sound record: just past the
 * damaged one when its length field leads to a sound record (or to the
 * segment's end), else the first offset further on where a whole record
 * passes its check (a 32-bit check, so a false start in damaged bytes is a
 * 2^-32 chance per offset with a plausible length). When no sound record
 * follows, the rest of the segment is lost. The manifest says how many
 * records each segment was written with, so when reading reaches a
 * segment's end with fewer records accounted for (a damaged run held
 * several), the difference is counted lost too; and a segment whose
 * records are all accounted for is done, whatever bytes follow. The count
 * of lost records is kept with the checkpoint.
 *
 * Checkpoints: the manifest lists every live segment with its length and
 * record count as of the save, when they were fsynced. Bytes appended
 * after a checkpoint are not part of it: reopening cuts a listed segment
 * back to its listed length and removes segments created after it. So a
 * crash never leaves a half-written record inside a checkpoint; a damaged
 * byte inside one is found by its record's check when the record is read
 * (and skipped, as above), a file shorter than listed when reading
 * reaches its end (the records it lost are counted), and one with a wrong
 * header when the checkpoint is reopened.
 *
 * Memory: the segment table (32 bytes a segment) and the ids of retired
 * segments awaiting the next checkpoint. Two file descriptors at most stay
 * open: the oldest segment (being read) and the newest (being written);
 * others are opened when a sync needs them.
 */
#include "amq/frontier.h"
#include "core/alloc.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/util.h"
#include "frontier/frontier_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t segment_magic[8] = { 0x89, 'A', 'M', 'Q', 'S', 'E', 'G', '\n' };

#define SEGMENT_VERSION 1
#define SEGMENT_PREFIX  "segment-"
#define SEGMENT_SUFFIX  ".seg"
/* The largest record: a URL of AMQ_FRONTIER_MAX_URL bytes. */
#define RECORD_MAX ((size_t)AMQ_FRONTIER_MAX_URL + AMQ__RECORD_OVERHEAD)

/* ---- names --------------------------------------------------------------------- */

void amq__frontier_numbered_name(char *out, size_t size, const char *prefix, uint64_t id,
                                 const char *suffix)
{
    snprintf(out, size, "%s%016" PRIx64 "%s", prefix, id, suffix);
}

bool amq__frontier_numbered_name_parse(const char *name, const char *prefix, const char *suffix,
                                       uint64_t *id)
{
    size_t prefix_len = strlen(prefix), suffix_len = strlen(suffix);
    if (strlen(name) != prefix_len + 16 + suffix_len || strncmp(name, prefix, prefix_len) != 0 ||
        strcmp(name + prefix_len + 16, suffix) != 0)
        return false;
    uint64_t value = 0;
    for (size_t i = prefix_len; i < prefix_len + 16; i++) {
        char c = name[i];
        unsigned digit;
        if (c >= '0' && c <= '9')
            digit = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = (unsigned)(c - 'a' + 10);
        else
            return false;
        value = value << 4 | digit;
    }
    *id = value;
    return true;
}

bool amq__segment_name_parse(const char *name, uint64_t *id)
{
    return amq__frontier_numbered_name_parse(name, SEGMENT_PREFIX, SEGMENT_SUFFIX, id);
}

static void segment_name(char out[AMQ__SEGMENT_NAME_SIZE], uint64_t id)
{
    amq__frontier_numbered_name(out, AMQ__SEGMENT_NAME_SIZE, SEGMENT_PREFIX, id, SEGMENT_SUFFIX);
}

/* ---- records --------------------------------------------------------------------- */

static uint32_t record_check(const uint8_t *record, size_t url_len)
{
    return (uint32_t)XXH3_64bits(record, 4 + url_len);
}

void amq__record_store(uint8_t *at, const void *url, size_t len)
{
    amq__store_u32le(at, (uint32_t)len);
    if (len > 0)
        memcpy(at + 4, url, len);
    amq__store_u32le(at + 4 + len, record_check(at, len));
}

/* The record at at, of which available bytes are at hand: 1 and its size in
 * *size when it is whole and sound; 0 when it needs more bytes; AMQ_ECORRUPT
 * with what is wrong in *problem. */
static int record_parse(const uint8_t *at, size_t available, size_t *size, const char **problem)
{
    if (available < 4)
        return 0;
    uint32_t url_len = amq__load_u32le(at);
    if (url_len > AMQ_FRONTIER_MAX_URL) {
        *problem = "its length is over AMQ_FRONTIER_MAX_URL";
        return AMQ_ECORRUPT;
    }
    size_t total = amq__record_size(url_len);
    if (available < total)
        return 0;
    if (amq__load_u32le(at + 4 + url_len) != record_check(at, url_len)) {
        *problem = "its check does not match";
        return AMQ_ECORRUPT;
    }
    *size = total;
    return 1;
}

/* ---- segments --------------------------------------------------------------------- */

void amq__spill_init(amq__spill *s, int dir_fd, const char *dir, uint64_t segment_bytes)
{
    memset(s, 0, sizeof *s);
    s->dir_fd = dir_fd;
    s->dir = dir;
    s->segment_bytes = segment_bytes;
    s->next_id = 1;
    s->read_offset = AMQ__SEGMENT_HEADER;
}

static void segment_close(amq__segment *seg)
{
    if (seg->fd >= 0)
        close(seg->fd);
    seg->fd = -1;
}

void amq__spill_free(amq__spill *s)
{
    for (size_t i = 0; i < s->count; i++)
        segment_close(&s->segments[i]);
    amq__free(s->segments);
    amq__free(s->retired);
    s->segments = NULL;
    s->retired = NULL;
    s->count = s->capacity = s->retired_count = s->retired_capacity = 0;
}

static int segment_open(const amq__spill *s, amq__segment *seg, amq_diag *diag)
{
    if (seg->fd >= 0)
        return AMQ_OK;
    char name[AMQ__SEGMENT_NAME_SIZE];
    segment_name(name, seg->id);
    int fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return amq__io_fail(diag, errno, "cannot open segment file '%s/%s'", s->dir, name);
    seg->fd = fd;
    return AMQ_OK;
}

/* Close segment i unless it is being read (the oldest) or written (the
 * newest). */
static void segment_release(amq__spill *s, size_t i)
{
    if (i != 0 && i + 1 != s->count)
        segment_close(&s->segments[i]);
}

static void segment_unlink(const amq__spill *s, uint64_t id)
{
    char name[AMQ__SEGMENT_NAME_SIZE];
    segment_name(name, id);
    unlinkat(s->dir_fd, name, 0);
}

/* Make room for one more entry in an array of n-byte items. */
static bool reserve(void **items, size_t *capacity, size_t count, size_t item_size)
{
    if (count < *capacity)
        return true;
    size_t bigger = *capacity ? *capacity * 2 : 8;
    void *grown = amq__realloc(*items, bigger * item_size);
    if (!grown)
        return false;
    *items = grown;
    *capacity = bigger;
    return true;
}

/* Begin a new newest segment: its file, with its header. */
static int segment_create(amq__spill *s, amq_diag *diag)
{
    if (s->next_id == UINT64_MAX)
        return amq__fail(diag, AMQ_ERANGE, "no segment id is left: the next one would be 2^64 - 1");
    if (!reserve((void **)&s->segments, &s->capacity, s->count, sizeof *s->segments))
        return amq__fail(diag, AMQ_ENOMEM, "out of memory for the segment table");
    char name[AMQ__SEGMENT_NAME_SIZE];
    segment_name(name, s->next_id);
    /* Reopening removed the spill files of work after the checkpoint, so a
     * file of this name is not the frontier's: it is left alone and the id
     * skipped (ids need only increase). */
    int fd;
    while ((fd = openat(s->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                        0644)) < 0 &&
           errno == EEXIST) {
        if (s->next_id == UINT64_MAX - 1)
            return amq__fail(diag, AMQ_ERANGE,
                             "no segment id is left: the next one would be 2^64 - 1");
        segment_name(name, ++s->next_id);
    }
    if (fd < 0)
        return amq__io_fail(diag, errno, "cannot create segment file '%s/%s'", s->dir, name);
    uint8_t header[AMQ__SEGMENT_HEADER] = { 0 };
    memcpy(header, segment_magic, sizeof segment_magic);
    amq__store_u32le(header + 8, SEGMENT_VERSION);
    amq__store_u64le(header + 16, s->next_id);
    if (amq__write_all(fd, header, sizeof header, 0) != 0) {
        int status = amq__io_fail(diag, errno, "writing segment file '%s/%s'", s->dir, name);
        close(fd);
        unlinkat(s->dir_fd, name, 0);
        return status;
    }
    s->segments[s->count++] =
        (amq__segment){ .id = s->next_id, .length = AMQ__SEGMENT_HEADER, .fd = fd };
    s->next_id++;
    s->bytes += AMQ__SEGMENT_HEADER;
    if (s->count >= 2)
        segment_release(s, s->count - 2);
    return AMQ_OK;
}

int amq__spill_append(amq__spill *s, const uint8_t *bytes, size_t len, size_t *done_bytes,
                      uint64_t *done_records, amq_diag *diag)
{
    size_t at = 0;
    uint64_t records = 0;
    int status = AMQ_OK;
    while (at < len) {
        amq__segment *last = s->count ? &s->segments[s->count - 1] : NULL;
        size_t first = amq__record_size(amq__record_url_len(bytes + at));
        if (!last || (last->records > 0 && last->length + first > s->segment_bytes)) {
            status = segment_create(s, diag);
            if (status != AMQ_OK)
                break;
            last = &s->segments[s->count - 1];
        }
        status = segment_open(s, last, diag);
        if (status != AMQ_OK)
            break;
        /* The records that fit; the first always does. */
        size_t run = 0;
        uint64_t run_records = 0;
        while (at + run < len) {
            size_t size = amq__record_size(amq__record_url_len(bytes + at + run));
            if (last->records + run_records > 0 && last->length + run + size > s->segment_bytes)
                break;
            run += size;
            run_records++;
        }
        if (amq__write_all(last->fd, bytes + at, run, (int64_t)last->length) != 0) {
            char name[AMQ__SEGMENT_NAME_SIZE];
            segment_name(name, last->id);
            status = amq__io_fail(diag, errno, "writing segment file '%s/%s'", s->dir, name);
            break;
        }
        last->length += run;
        last->records += run_records;
        s->bytes += run;
        s->unread_records += run_records;
        at += run;
        records += run_records;
    }
    *done_bytes = at;
    *done_records = records;
    return status;
}

/* Count as lost the records of the oldest segment that reading has passed
 * without delivering: all of them once its bytes are read to the end. And
 * a segment whose records are all accounted for has nothing more to read:
 * bytes after them (which only damage puts there) are passed over. */
static void settle_oldest(amq__spill *s)
{
    amq__segment *seg = &s->segments[0];
    if (s->read_offset >= seg->length && s->read_records < seg->records) {
        uint64_t missing = seg->records - s->read_records;
        s->lost += missing;
        s->unread_records -= missing;
        s->read_records = seg->records;
    }
    if (s->read_records == seg->records)
        s->read_offset = seg->length;
}

int amq__spill_retire_read(amq__spill *s, amq_diag *diag)
{
    while (s->count > 0) {
        settle_oldest(s);
        amq__segment *seg = &s->segments[0];
        if (s->read_records != seg->records)
            break;
        if (seg->committed && !reserve((void **)&s->retired, &s->retired_capacity, s->retired_count,
                                       sizeof *s->retired))
            return amq__fail(diag, AMQ_ENOMEM, "out of memory for the retired segments");
        segment_close(seg);
        if (seg->committed)
            s->retired[s->retired_count++] = seg->id;
        else
            segment_unlink(s, seg->id);
        s->bytes -= seg->length;
        memmove(s->segments, s->segments + 1, (s->count - 1) * sizeof *s->segments);
        s->count--;
        s->read_offset = AMQ__SEGMENT_HEADER;
        s->read_records = 0;
    }
    return AMQ_OK;
}

/* Whether a whole, sound record starts at offset at of seg, whose readable
 * bytes end at end; into (capacity >= RECORD_MAX) is scratch. */
static int sound_record_at(bool *sound, amq__spill *s, const amq__segment *seg, uint64_t at,
                           uint64_t end, uint8_t *into)
{
    uint64_t want = end - at < RECORD_MAX ? end - at : RECORD_MAX;
    int64_t got = amq__read_full(seg->fd, into, (size_t)want, (int64_t)at);
    if (got < 0) {
        char name[AMQ__SEGMENT_NAME_SIZE];
        segment_name(name, seg->id);
        return amq__io_fail(NULL, errno, "reading segment file '%s/%s'", s->dir, name);
    }
    size_t size;
    const char *problem;
    *sound = record_parse(into, (size_t)got, &size, &problem) == 1;
    return AMQ_OK;
}

/* The record at the read offset of the oldest segment is damaged, or the
 * file ends inside it: count it lost and move the read offset to the next
 * sound record, or to the segment's end when none follows (its remaining
 * records all lost). into (capacity >= RECORD_MAX) is scratch. */
static int skip_damage(amq__spill *s, uint8_t *into, size_t capacity, amq_diag *diag)
{
    amq__segment *seg = &s->segments[0];
    char name[AMQ__SEGMENT_NAME_SIZE];
    segment_name(name, seg->id);
    struct stat st;
    if (fstat(seg->fd, &st) != 0)
        return amq__io_fail(diag, errno, "cannot stat segment file '%s/%s'", s->dir, name);
    const uint64_t at = s->read_offset;
    uint64_t end = seg->length; /* where readable bytes end: the file may be shorter */
    if ((uint64_t)st.st_size < end)
        end = (uint64_t)st.st_size > at ? (uint64_t)st.st_size : at;
    bool found = false;
    uint64_t next = end;

    /* Most damage is a changed byte of the URL or check: the length field
     * still leads to the next record, which must be sound, or to the
     * segment's end. */
    uint8_t field[4];
    if (end - at >= AMQ__RECORD_OVERHEAD &&
        amq__read_full(seg->fd, field, sizeof field, (int64_t)at) == (int64_t)sizeof field &&
        amq__load_u32le(field) <= AMQ_FRONTIER_MAX_URL) {
        uint64_t after = at + amq__record_size(amq__load_u32le(field));
        if (after == seg->length && after <= end) {
            found = true;
            next = after;
        } else if (after < end) {
            int status = sound_record_at(&found, s, seg, after, end, into);
            if (status != AMQ_OK)
                return amq__io_fail(diag, errno, "reading segment file '%s/%s'", s->dir, name);
            next = after;
        }
    }
    /* Else the first offset past the damaged record's smallest size where a
     * whole record passes its check. Chunks overlap by a largest record, so
     * every candidate is judged with all its bytes at hand. */
    for (uint64_t base = at + AMQ__RECORD_OVERHEAD; !found && base + AMQ__RECORD_OVERHEAD <= end;) {
        uint64_t want = end - base < capacity ? end - base : capacity;
        int64_t got = amq__read_full(seg->fd, into, (size_t)want, (int64_t)base);
        if (got < 0)
            return amq__io_fail(diag, errno, "reading segment file '%s/%s'", s->dir, name);
        bool last = (uint64_t)got < RECORD_MAX || base + (uint64_t)got >= end;
        size_t stop = last ? (size_t)got : (size_t)got - RECORD_MAX + 1;
        for (size_t p = 0; p < stop; p++) {
            size_t size;
            const char *problem;
            if (record_parse(into + p, (size_t)got - p, &size, &problem) == 1) {
                found = true;
                next = base + p;
                break;
            }
        }
        if (last)
            break;
        base += stop;
    }
    if (!found || s->read_records + 1 >= seg->records) {
        /* Nothing sound follows (or nothing more was written): the
         * segment's remaining records are lost, which settle_oldest counts
         * once the read offset is at its end. */
        s->read_offset = seg->length;
        return AMQ_OK;
    }
    s->read_offset = next;
    s->read_records++;
    s->unread_records--;
    s->lost++;
    return AMQ_OK;
}

int amq__spill_read(amq__spill *s, uint8_t *into, size_t capacity, uint64_t max_records,
                    size_t *len, uint64_t *records, amq_diag *diag)
{
    *len = 0;
    *records = 0;
    for (;;) {
        int status = amq__spill_retire_read(s, diag);
        if (status != AMQ_OK || s->count == 0)
            return status;
        amq__segment *seg = &s->segments[0];
        status = segment_open(s, seg, diag);
        if (status != AMQ_OK)
            return status;

        /* Bytes to read: what remains of the segment, what fits, and no
         * more than max_records records of the largest size can take. */
        uint64_t limit = seg->records - s->read_records;
        if (max_records < limit)
            limit = max_records;
        uint64_t want = seg->length - s->read_offset;
        if (want > capacity)
            want = capacity;
        if (limit < want / RECORD_MAX)
            want = limit * RECORD_MAX;
        int64_t got = amq__read_full(seg->fd, into, (size_t)want, (int64_t)s->read_offset);
        if (got < 0) {
            char name[AMQ__SEGMENT_NAME_SIZE];
            segment_name(name, seg->id);
            return amq__io_fail(diag, errno, "reading segment file '%s/%s'", s->dir, name);
        }

        /* A short read is a truncated file: its records are parsed as far
         * as they go, and skip_damage deals with the rest. */
        size_t used = 0;
        uint64_t count = 0;
        while (count < limit) {
            size_t size = 0;
            const char *problem;
            if (record_parse(into + used, (size_t)got - used, &size, &problem) != 1)
                break;
            used += size;
            count++;
        }
        if (count > 0) {
            s->read_offset += used;
            s->read_records += count;
            s->unread_records -= count;
            *len = used;
            *records = count;
            return AMQ_OK;
        }
        status = skip_damage(s, into, capacity, diag);
        if (status != AMQ_OK)
            return status;
    }
}

int amq__spill_sync(amq__spill *s, amq_diag *diag)
{
    bool created = false;
    for (size_t i = 0; i < s->count; i++) {
        amq__segment *seg = &s->segments[i];
        created |= !seg->committed;
        if (seg->synced == seg->length)
            continue;
        int status = segment_open(s, seg, diag);
        if (status != AMQ_OK)
            return status;
        if (fsync(seg->fd) != 0) {
            char name[AMQ__SEGMENT_NAME_SIZE];
            segment_name(name, seg->id);
            return amq__io_fail(diag, errno, "syncing segment file '%s/%s'", s->dir, name);
        }
        seg->synced = seg->length;
        segment_release(s, i);
    }
    /* New files' directory entries must be durable before a manifest
     * names them. Filesystems that cannot sync a directory say EINVAL. */
    if (created && fsync(s->dir_fd) != 0 && errno != EINVAL)
        return amq__io_fail(diag, errno, "syncing directory '%s'", s->dir);
    return AMQ_OK;
}

void amq__spill_commit(amq__spill *s)
{
    for (size_t i = 0; i < s->count; i++)
        s->segments[i].committed = true;
    for (size_t i = 0; i < s->retired_count; i++)
        segment_unlink(s, s->retired[i]);
    s->retired_count = 0;
}

void amq__spill_discard_uncommitted(amq__spill *s)
{
    for (size_t i = 0; i < s->count; i++)
        if (!s->segments[i].committed) {
            segment_close(&s->segments[i]);
            segment_unlink(s, s->segments[i].id);
        }
}

bool amq__segment_file_is_ours(int dir_fd, const char *name, uint64_t id)
{
    int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    uint8_t header[AMQ__SEGMENT_HEADER];
    bool ours = amq__read_full(fd, header, sizeof header, 0) == (int64_t)sizeof header &&
                memcmp(header, segment_magic, sizeof segment_magic) == 0 &&
                amq__load_u32le(header + 8) == SEGMENT_VERSION &&
                amq__load_u32le(header + 12) == 0 && amq__load_u64le(header + 16) == id;
    close(fd);
    return ours;
}

bool amq__spill_holds(const amq__spill *s, uint64_t id)
{
    size_t low = 0, high = s->count; /* ids increase along the table */
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (s->segments[middle].id == id)
            return true;
        if (s->segments[middle].id < id)
            low = middle + 1;
        else
            high = middle;
    }
    return false;
}

/* ---- the manifest's table -------------------------------------------------------- */

void amq__spill_table_store(const amq__spill *s, uint8_t *out)
{
    for (size_t i = 0; i < s->count; i++) {
        const amq__segment *seg = &s->segments[i];
        amq__store_u64le(out, seg->id);
        amq__store_u64le(out + 8, seg->length);
        amq__store_u64le(out + 16, seg->records);
        out += AMQ__SPILL_ENTRY_SIZE;
    }
}

/* A listed segment's file: present, its header right; anything written
 * after the checkpoint is cut off. A file shorter than listed (damage: the
 * checkpoint synced it whole) is taken, its lost records counted when
 * reading reaches its end, rather than make the whole queue unreadable. */
static int segment_check_file(const amq__spill *s, const amq__segment *seg, amq_diag *diag)
{
    char name[AMQ__SEGMENT_NAME_SIZE];
    segment_name(name, seg->id);
    int fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "segment file '%s/%s', which the checkpoint lists, is missing", s->dir,
                             name);
        return amq__io_fail(diag, errno, "cannot open segment file '%s/%s'", s->dir, name);
    }
    struct stat st;
    uint8_t header[AMQ__SEGMENT_HEADER];
    int status = AMQ_OK;
    if (fstat(fd, &st) != 0) {
        status = amq__io_fail(diag, errno, "cannot stat segment file '%s/%s'", s->dir, name);
    } else if ((uint64_t)st.st_size < sizeof header) {
        /* Truncated past its header: nothing to check, and every record is
         * counted lost when reading reaches it. */
    } else if (amq__read_full(fd, header, sizeof header, 0) != (int64_t)sizeof header) {
        status = amq__io_fail(diag, errno, "reading segment file '%s/%s'", s->dir, name);
    } else if (memcmp(header, segment_magic, sizeof segment_magic) != 0) {
        status = amq__fail_at(diag, AMQ_ECORRUPT, 0,
                              "segment file '%s/%s' does not begin with the segment magic", s->dir,
                              name);
    } else if (amq__load_u32le(header + 8) != SEGMENT_VERSION || amq__load_u32le(header + 12)) {
        status = amq__fail_at(diag, AMQ_ECORRUPT, 8,
                              "segment file '%s/%s' has version %" PRIu32 " and reserved %" PRIu32
                              ", not %d and 0",
                              s->dir, name, amq__load_u32le(header + 8),
                              amq__load_u32le(header + 12), SEGMENT_VERSION);
    } else if (amq__load_u64le(header + 16) != seg->id) {
        status =
            amq__fail_at(diag, AMQ_ECORRUPT, 16, "segment file '%s/%s' says it is segment %" PRIu64,
                         s->dir, name, amq__load_u64le(header + 16));
    } else if ((uint64_t)st.st_size > seg->length && ftruncate(fd, (off_t)seg->length) != 0) {
        status = amq__io_fail(diag, errno, "cutting segment file '%s/%s' back to its checkpoint",
                              s->dir, name);
    }
    close(fd);
    return status;
}

int amq__spill_table_load(amq__spill *s, const uint8_t *table, uint64_t count, uint64_t next_id,
                          uint64_t read_offset, uint64_t read_records, amq_diag *diag)
{
    if (count > SIZE_MAX / sizeof *s->segments)
        return amq__fail(diag, AMQ_ENOMEM, "%" PRIu64 " segments do not fit in memory", count);
    if (count > 0) {
        s->segments = amq__malloc((size_t)count * sizeof *s->segments);
        if (!s->segments)
            return amq__fail(diag, AMQ_ENOMEM, "out of memory for %" PRIu64 " segments", count);
        s->capacity = (size_t)count;
    }
    uint64_t previous = 0, unread = 0, bytes = 0;
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *entry = table + i * AMQ__SPILL_ENTRY_SIZE;
        amq__segment seg = { .id = amq__load_u64le(entry),
                             .length = amq__load_u64le(entry + 8),
                             .records = amq__load_u64le(entry + 16),
                             .committed = true,
                             .fd = -1 };
        seg.synced = seg.length;
        if (seg.id <= previous || seg.id >= next_id)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "manifest: segment entry %" PRIu64 " has id %" PRIu64
                             ", not above %" PRIu64 " and below %" PRIu64,
                             i, seg.id, previous, next_id);
        if (seg.length < AMQ__SEGMENT_HEADER ||
            (seg.length - AMQ__SEGMENT_HEADER) / AMQ__RECORD_OVERHEAD < seg.records ||
            (seg.records == 0) != (seg.length == AMQ__SEGMENT_HEADER))
            return amq__fail(diag, AMQ_ECORRUPT,
                             "manifest: segment %" PRIu64 " cannot hold %" PRIu64
                             " records in %" PRIu64 " bytes",
                             seg.id, seg.records, seg.length);
        previous = seg.id;
        unread += seg.records; /* at most 2^64 / 8 records in 2^64 bytes */
        if (!amq__add_u64(bytes, seg.length, &bytes))
            return amq__fail(diag, AMQ_ECORRUPT, "manifest: segment lengths overflow");
        s->segments[s->count++] = seg;
    }
    if (count == 0
            ? read_offset != AMQ__SEGMENT_HEADER || read_records != 0
            : read_offset < AMQ__SEGMENT_HEADER || read_offset > s->segments[0].length ||
                  read_records >= s->segments[0].records ||
                  (read_offset - AMQ__SEGMENT_HEADER) / AMQ__RECORD_OVERHEAD < read_records ||
                  (read_records == 0) != (read_offset == AMQ__SEGMENT_HEADER))
        return amq__fail(diag, AMQ_ECORRUPT,
                         "manifest: read position (offset %" PRIu64 ", %" PRIu64
                         " records) does not lie inside the first segment",
                         read_offset, read_records);
    s->next_id = next_id;
    s->read_offset = read_offset;
    s->read_records = read_records;
    s->unread_records = unread - read_records;
    s->bytes = bytes;
    for (size_t i = 0; i < s->count; i++) {
        int status = segment_check_file(s, &s->segments[i], diag);
        if (status != AMQ_OK)
            return status;
    }
    return AMQ_OK;
}
