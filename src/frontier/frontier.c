/*
 * frontier.c - the crawl frontier: a FIFO queue of URLs that takes each URL
 * at most once, in bounded memory, saved by checkpoints (amq/frontier.h is
 * the interface; docs/FRONTIER.md the user's guide).
 *
 * Deduplication. Every push asks a scalable Bloom filter (scalable_bloom.c)
 * whether the URL may have been pushed before; only if not is it added to
 * the filter and enqueued. The filter has no false negatives, so an
 * enqueued URL is never enqueued again; it has false positives, so a new
 * URL is skipped with probability at most its compound bound p, whatever
 * the count (each new stage is tighter: p (1 - r) r^i for stage i). The URL
 * is hashed once, to 128 bits; the same hash serves the query and the add.
 *
 * The queue is three parts, oldest first:
 *
 *         pop                                                    push
 *          ^                                                       |
 *          |                                                       v
 *   +-------------+   +-----------+-----------+-----+   +---------------------+
 *   | head        | < | segment 1 | segment 2 | ... | < | tail                |
 *   | read-ahead  |   +-----------+-----------+-----+   | newest URLs, not    |
 *   | of segment 1|   the spill: segment files,         | yet spilled         |
 *   +-------------+   append-only (frontier_segments.c) +---------------------+
 *     <= min(M/2, 4 MiB)                                   <= M - head's share
 *
 * Push appends a record (u32 length | URL | u32 check: the segment files'
 * encoding) to the tail. When the tail has no room under its share of the
 * memory cap M (bytes, and optionally URLs), all of it is appended to the
 * spill in one write, and the tail starts empty. Pop takes from the head;
 * an empty head is refilled with the next chunk of whole records of the
 * oldest segment; and when the spill has nothing unread, pop takes straight
 * from the front of the tail, so a queue that fits in memory never touches
 * the disk. Invariants, checked by amq__frontier_check():
 *
 *   I1  the queue, in order, is head ++ the spill's unread records ++ tail;
 *       the head's records are the bytes of segment 1 just before its read
 *       offset, so the head is empty whenever the spill has no segment;
 *   I2  queued = enqueued - popped - lost = head + unread spill + tail
 *       records (lost: damaged records the spill skipped);
 *   I3  the head holds at most min(M/2, 4 MiB) bytes and half the URL cap,
 *       the tail the rest of each: together at most the caps;
 *   I4  every byte in a buffer between start and end is a whole record;
 *   I5  the filter holds exactly the enqueued URLs: its count is enqueued.
 *
 * The tail is a flat buffer whose consumed front is reclaimed by moving
 * the live records down, but only when the consumed part is at least as
 * large as the live one: each move then costs at most the bytes popped
 * since the last, so moving is amortized O(1) per byte. Otherwise a tail
 * without room is spilled, which writes at least half its share at once.
 * The head gets at most 4 MiB: reading back is sequential, and a larger
 * read-ahead saves nothing but system calls already rare; the tail gets the
 * rest, so that short queues stay in memory.
 *
 * Persistence. The directory holds
 *
 *   frontier.amq               the manifest: the current checkpoint
 *   filter-<generation>.amq    the filter as of that checkpoint
 *   segment-<id>.seg           spill files, the ones it lists and newer ones
 *
 * and the manifest is the commit point. amq_frontier_save (1) spills the
 * tail, (2) retires segments read to the end, (3) fsyncs the segments
 * written since they were last synced (and the directory, for new ones),
 * (4) writes the filter, as the generic handle describes it, to
 * filter-<g+1>.amq (temporary file .filter-<g+1>.amq.tmp, fsync, rename,
 * directory fsync; the file read-only, its checksum kept from the bytes
 * written), (5) writes the manifest the same way, naming generation g+1,
 * that checksum, the counters, the live segments with their lengths, the
 * segments retired since g, and the read position of the next URL to pop
 * (inside the head's segment when the head holds URLs). Only then (6) are
 * filter-<g>.amq and those retired segments removed. A crash before (5)
 * completes leaves checkpoint g whole: its filter file was not touched,
 * its segments were only appended to or left for removal. A crash after
 * it leaves g+1 whole, and the next open removes what (6) did not, and
 * the files of work after the checkpoint: it cuts each listed segment back
 * to its listed length and removes exactly the files the checkpoint
 * records as the frontier's and unneeded (sweepable() has the list), never
 * another file, whatever its name.
 *
 * Every file is opened, created, renamed and removed relative to the
 * directory's descriptor, taken once at open (and flock'ed for as long as
 * the frontier is open), never by path: a directory renamed while open, or
 * replaced by another at its path, cannot get half a checkpoint.
 *
 * So the state after a reopen is exactly the last checkpoint: URLs pushed
 * after it are gone together with their filter bits (nothing is "seen"
 * that is not queued or popped), and URLs popped after it are queued
 * again. Why checkpoints rather than a write-ahead log making every push
 * durable: a log costs a system call per push (about as costly as the
 * push itself) or, buffered, loses its last buffer anyway; replaying it means a
 * second code path through the filter; and a crawler has a natural moment
 * to save, after it has handled what it popped, which gives it
 * at-least-once visits with no per-URL cost. docs/FRONTIER.md compares the
 * two.
 *
 * The manifest is an amq container (docs/FORMAT.md) of family 11, whose
 * hasher is the filter's: the filter's parameters, the counters, the
 * filter file's checksum, the read position and the segment table
 * (frontier_manifest.c has its layout). Generation 0 is the empty
 * frontier written when the directory is created: it has no filter file
 * (the filter is made anew from the parameters), so creating takes a
 * single atomic write, and a directory with frontier files but no
 * manifest is damage, never a half-made frontier. Reopening checks the container, every field, the
 * counters against each other and against the segment table (I2 with an empty head and tail), the
 * filter file's checksum against the manifest's and its count against enqueued (I5), and each
 * segment file's header and length. Counters never wrap, since a wrapped one would be refused at
 * reopening: a frontier at generation 2^64 - 1 is refused a save, and one that has counted 2^64 - 1
 * pushes another push, with AMQ_ERANGE (only a damaged manifest can say either).
 *
 * The filter is kept in a generic handle (amq_filter, filter/filter.h),
 * which owns it: the filter file holds what the handle describes and is
 * loaded through amq__filter_from_container, the paths by which any filter
 * is persisted (a loaded file must hold a scalable Bloom filter, and its
 * trailer must be the manifest's checksum). Push and the figures use the
 * typed filter inside it (amq_scalable_bloom_unwrap), at the typed calls'
 * speed. A filter file changed by another writer (amq add, which the
 * read-only mode refuses, unless forced) is refused at reopening, saying
 * so: the frontier cannot rebuild the filter, the popped URLs being gone,
 * nor adopt one that would skip URLs it never queued.
 *
 * Allocation: open (the frontier, the filter and its handle, the segment
 * table); push (the tail grows by doubling up to its share; filter
 * stages); pop (the read-ahead buffer, once); save (the filter's
 * description, the table copy). Errors: AMQ_EINVAL (options, URL length,
 * directory), AMQ_EIO (system calls, the lock), AMQ_ECORRUPT and
 * AMQ_EVERSION (the directory's files), AMQ_ERANGE (filter bounds, a small
 * pop buffer, a counter or the segment ids at their limit), AMQ_ENOMEM.
 */
#include "amq/frontier.h"
#include "amq/bloom.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/family.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/struct_size.h"
#include "core/util.h"
#include "filter/filter.h"
#include "frontier/frontier_internal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_FPR              0.01
#define DEFAULT_INITIAL_CAPACITY ((uint64_t)1 << 20)
#define DEFAULT_GROWTH           2.0
#define DEFAULT_TIGHTENING       0.9
#define DEFAULT_MEMORY           ((uint64_t)64 << 20)
#define DEFAULT_SEGMENT          ((uint64_t)64 << 20)
#define HEAD_MAX                 ((size_t)4 << 20)
#define TAIL_FIRST_CAPACITY      ((size_t)64 << 10)

void amq_frontier_options_init_sized(amq_frontier_options *opt, size_t struct_size)
{
    assert(opt && struct_size >= sizeof(size_t));
    amq_frontier_options defaults;
    memset(&defaults, 0, sizeof defaults);
    defaults.fpr = DEFAULT_FPR;
    defaults.initial_capacity = DEFAULT_INITIAL_CAPACITY;
    defaults.growth = DEFAULT_GROWTH;
    defaults.tightening = DEFAULT_TIGHTENING;
    defaults.memory_bytes = DEFAULT_MEMORY;
    defaults.memory_urls = UINT64_MAX;
    defaults.segment_bytes = DEFAULT_SEGMENT;
    amq__struct_write(opt, struct_size, &defaults, sizeof defaults);
}

/* The filter a manifest describes, made empty (generation 0), in its
 * handle. */
static int make_filter(amq_frontier *f, amq_diag *diag)
{
    amq_scalable_bloom *filter = NULL;
    amq_diag inner = { .message = "" };
    int status = amq_scalable_bloom_new(&filter, &f->filter_params, &inner);
    if (status == AMQ_EINVAL)
        return amq__fail(diag, status, "the filter options are out of range: %s", inner.message);
    if (status == AMQ_ERANGE)
        return amq__fail(diag, status,
                         "a filter stage of %" PRIu64 " URLs at fpr %g would be too large",
                         f->filter_params.capacity, f->filter_params.fpr);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "making the filter: %s", amq_strerror(status));
    status = amq_scalable_bloom_wrap(&f->handle, filter, NULL);
    if (status != AMQ_OK) {
        amq_scalable_bloom_free(filter);
        return amq__fail(diag, status, "out of memory for the filter's handle");
    }
    f->filter = filter;
    return AMQ_OK;
}

static int reopen(amq_frontier *f, amq_diag *diag)
{
    amq__file_image image;
    amq_diag inner = { .message = "" };
    amq__container c;
    amq__manifest m;
    uint64_t *retired = NULL;
    int status = amq__frontier_read_file(&image, f, AMQ__FRONTIER_MANIFEST_NAME, &inner);
    if (status == AMQ_OK) {
        status = amq__format_parse(&c, image.data, image.len, &inner);
        if (status == AMQ_OK)
            status = amq__manifest_parse(&m, &c, &inner);
        if (status == AMQ_OK) {
            f->generation = m.generation;
            f->filter_params = m.filter;
            f->pushed = m.pushed;
            f->enqueued = m.enqueued;
            f->popped = m.popped;
            f->spill.lost = m.lost;
            status = amq__spill_table_load(&f->spill, c.payload, m.segments, m.next_segment,
                                           m.read_offset, m.read_records, &inner);
        }
        if (status == AMQ_OK && m.retired > 0) {
            retired = amq__malloc((size_t)m.retired * sizeof *retired);
            if (!retired)
                status = amq__fail(&inner, AMQ_ENOMEM, "out of memory for the retired segments");
            for (uint64_t i = 0; retired && i < m.retired; i++)
                retired[i] = amq__load_u64le(m.retired_ids + i * 8);
        }
        amq__file_image_close(&image);
    }
    if (status != AMQ_OK) {
        amq__free(retired);
        return amq__fail(diag, status, "manifest '%s/%s': %s", f->dir, AMQ__FRONTIER_MANIFEST_NAME,
                         inner.message);
    }
    if (f->spill.unread_records != m.enqueued - m.popped - m.lost)
        status =
            amq__fail(diag, AMQ_ECORRUPT,
                      "manifest '%s/%s': its segments hold %" PRIu64 " unread URLs, but %" PRIu64
                      " were enqueued, %" PRIu64 " popped and %" PRIu64 " lost",
                      f->dir, AMQ__FRONTIER_MANIFEST_NAME, f->spill.unread_records, m.enqueued,
                      m.popped, m.lost);
    else if (m.generation > 0)
        status = amq__frontier_load_filter(f, m.filter_checksum, diag);
    else if ((status = make_filter(f, &inner)) != AMQ_OK) {
        if (status == AMQ_EINVAL || status == AMQ_ERANGE)
            status = AMQ_ECORRUPT;
        amq__fail(diag, status, "manifest: its filter parameters are refused: %s", inner.message);
    }
    if (status == AMQ_OK && amq_scalable_bloom_keys(f->filter) != f->enqueued)
        status = amq__fail(diag, AMQ_ECORRUPT,
                           "frontier '%s': the filter holds %" PRIu64
                           " URLs; the manifest says %" PRIu64 " were enqueued",
                           f->dir, amq_scalable_bloom_keys(f->filter), f->enqueued);
    if (status == AMQ_OK)
        status = amq__frontier_sweep(f, false, retired, (size_t)m.retired, diag);
    amq__free(retired);
    return status;
}

static int create(amq_frontier *f, const amq_frontier_options *opt, amq_diag *diag)
{
    int status = amq__frontier_sweep(f, true, NULL, 0, diag);
    if (status != AMQ_OK)
        return status;
    f->filter_params = (amq_scalable_bloom_params){
        .capacity = opt->initial_capacity,
        .fpr = opt->fpr,
        .growth = opt->growth,
        .tightening = opt->tightening,
    };
    amq_hasher_xxh3(&f->filter_params.hasher, opt->seed);
    status = make_filter(f, diag);
    if (status != AMQ_OK)
        return status;
    amq__manifest m = {
        .filter = f->filter_params,
        .next_segment = f->spill.next_id,
        .read_offset = f->spill.read_offset,
    };
    return amq__manifest_write(f, &m, diag);
}

/* ---- open and close -------------------------------------------------------------- */

static int check_options(const amq_frontier_options *opt, amq_diag *diag)
{
    if (!(opt->fpr > 0 && opt->fpr < 1))
        return amq__fail(diag, AMQ_EINVAL, "option fpr: %g is not in (0, 1)", opt->fpr);
    if (opt->initial_capacity < 1)
        return amq__fail(diag, AMQ_EINVAL, "option initial_capacity: 0 URLs");
    if (opt->memory_bytes < AMQ_FRONTIER_MIN_MEMORY)
        return amq__fail(diag, AMQ_EINVAL,
                         "option memory_bytes: %" PRIu64 " is less than the %" PRIu64
                         " needed for two URLs of the largest size",
                         opt->memory_bytes, AMQ_FRONTIER_MIN_MEMORY);
    if (opt->memory_urls < 2)
        return amq__fail(diag, AMQ_EINVAL,
                         "option memory_urls: %" PRIu64 " is less than 2 (one being read "
                         "back, one being pushed)",
                         opt->memory_urls);
    if (opt->segment_bytes < AMQ_FRONTIER_MIN_SEGMENT)
        return amq__fail(diag, AMQ_EINVAL,
                         "option segment_bytes: %" PRIu64 " is less than %" PRIu64,
                         opt->segment_bytes, AMQ_FRONTIER_MIN_SEGMENT);
    return AMQ_OK;
}

/* Split the memory caps between the head and the tail (I3). */
static void share_memory(amq_frontier *f, const amq_frontier_options *opt)
{
    uint64_t bytes = opt->memory_bytes < SIZE_MAX ? opt->memory_bytes : SIZE_MAX;
    f->head_bytes_max = bytes / 2 < HEAD_MAX ? (size_t)(bytes / 2) : HEAD_MAX;
    f->tail_bytes_max = (size_t)bytes - f->head_bytes_max;
    f->head_urls_max = opt->memory_urls / 2;
    f->tail_urls_max = opt->memory_urls - f->head_urls_max;
}

/* Free everything; no file is touched. */
static void destroy(amq_frontier *f)
{
    amq__spill_free(&f->spill);
    amq_free(f->handle); /* and the filter */
    amq__free(f->head.bytes);
    amq__free(f->tail.bytes);
    if (f->dir_fd >= 0)
        close(f->dir_fd); /* releases the lock */
    amq__free(f->dir);
    amq__free(f);
}

int amq_frontier_open(amq_frontier **out, const char *dir, const amq_frontier_options *caller_opt,
                      amq_diag *diag)
{
    assert(out && dir);
    *out = NULL;
    amq_frontier_options read;
    amq_frontier_options_init(&read);
    if (caller_opt) {
        int read_status = amq__struct_read(&read, sizeof read, caller_opt, sizeof read,
                                           "amq_frontier_options", diag);
        if (read_status != AMQ_OK)
            return read_status;
    }
    const amq_frontier_options *opt = &read;
    int status = check_options(opt, diag);
    if (status != AMQ_OK)
        return status;
    amq_frontier *f = amq__calloc(1, sizeof *f);
    if (!f)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory for a frontier");
    f->dir_fd = -1;
    f->canonicalize = opt->canonicalize;
    f->canonicalize_user = opt->canonicalize_user;
    share_memory(f, opt);
    status = amq__frontier_open_directory(f, dir, diag);
    if (status == AMQ_OK) {
        amq__spill_init(&f->spill, f->dir_fd, f->dir, opt->segment_bytes);
        struct stat st;
        if (fstatat(f->dir_fd, AMQ__FRONTIER_MANIFEST_NAME, &st, 0) == 0)
            status = reopen(f, diag);
        else if (errno == ENOENT)
            status = create(f, opt, diag);
        else
            status = amq__io_fail(diag, errno, "cannot stat '%s/%s'", f->dir,
                                  AMQ__FRONTIER_MANIFEST_NAME);
    }
    if (status != AMQ_OK) {
        destroy(f);
        return status;
    }
    f->hasher = *amq_scalable_bloom_hasher(f->filter);
    *out = f;
    return AMQ_OK;
}

void amq_frontier_close(amq_frontier *f)
{
    if (!f)
        return;
    amq__spill_discard_uncommitted(&f->spill);
    destroy(f);
}

/* ---- push and pop ------------------------------------------------------------ */

/* Spill the tail; on failure, what was written has left it (I1 holds). */
static int spill_tail(amq_frontier *f, amq_diag *diag)
{
    amq__record_buffer *t = &f->tail;
    size_t done = 0;
    uint64_t records = 0;
    int status =
        amq__spill_append(&f->spill, t->bytes + t->start, t->end - t->start, &done, &records, diag);
    t->start += done;
    t->records -= records;
    if (t->records == 0)
        t->start = t->end = 0;
    return status;
}

/* Make room at the tail's end for need more bytes and one more record. */
static int make_room(amq_frontier *f, size_t need, amq_diag *diag)
{
    amq__record_buffer *t = &f->tail;
    size_t live = t->end - t->start;
    if (t->records >= f->tail_urls_max || live + need > f->tail_bytes_max) {
        int status = spill_tail(f, diag);
        if (status != AMQ_OK)
            return status;
    } else if (t->end + need > f->tail_bytes_max) {
        if (t->start >= live) {
            memmove(t->bytes, t->bytes + t->start, live);
            t->start = 0;
            t->end = live;
        } else {
            int status = spill_tail(f, diag);
            if (status != AMQ_OK)
                return status;
        }
    }
    if (t->end + need <= t->capacity)
        return AMQ_OK;
    size_t capacity = t->capacity ? t->capacity : TAIL_FIRST_CAPACITY;
    while (capacity < t->end + need)
        capacity *= 2;
    if (capacity > f->tail_bytes_max)
        capacity = f->tail_bytes_max;
    uint8_t *bytes = amq__realloc(t->bytes, capacity);
    if (!bytes)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory growing the queue to %zu bytes",
                         capacity);
    t->bytes = bytes;
    t->capacity = capacity;
    return AMQ_OK;
}

int amq_frontier_push(amq_frontier *f, const char *url, size_t len, amq_diag *diag)
{
    assert(f && (url || len == 0));
    if (f->pushed == UINT64_MAX)
        return amq__fail(diag, AMQ_ERANGE, "%" PRIu64 " pushes are counted, the most there can be",
                         f->pushed);
    if (f->canonicalize) {
        size_t canonical_len = 0;
        int status = f->canonicalize(f->canonical, sizeof f->canonical, &canonical_len, url, len,
                                     f->canonicalize_user);
        if (status != AMQ_OK)
            return amq__fail(diag, status < 0 ? status : AMQ_EINVAL,
                             "the canonicalize hook refused a URL of %zu bytes: %s", len,
                             amq_strerror(status));
        url = f->canonical;
        len = canonical_len;
    }
    if (len > AMQ_FRONTIER_MAX_URL)
        return amq__fail(diag, AMQ_EINVAL,
                         "a URL of %zu bytes is longer than the %d a frontier takes", len,
                         AMQ_FRONTIER_MAX_URL);
    amq_u128 hash = amq__hash128(&f->hasher, url, len);
    if (amq_scalable_bloom_contains_hash(f->filter, hash)) {
        f->pushed++;
        return 0;
    }
    size_t size = amq__record_size(len);
    int status = make_room(f, size, diag);
    if (status != AMQ_OK)
        return status;
    status = amq_scalable_bloom_add_hash(f->filter, hash);
    if (status < 0)
        return amq__fail(diag, status, "the filter cannot take another URL: %s",
                         amq_strerror(status));
    assert(status == 1); /* the filter said it was absent */
    amq__record_store(f->tail.bytes + f->tail.end, url, len);
    f->tail.end += size;
    f->tail.records++;
    f->pushed++;
    f->enqueued++;
    return 1;
}

static int refill_head(amq_frontier *f, amq_diag *diag)
{
    amq__record_buffer *h = &f->head;
    if (!h->bytes) {
        h->bytes = amq__malloc(f->head_bytes_max);
        if (!h->bytes)
            return amq__fail(diag, AMQ_ENOMEM, "out of memory for a %zu-byte read-ahead",
                             f->head_bytes_max);
        h->capacity = f->head_bytes_max;
    }
    size_t len = 0;
    uint64_t records = 0;
    int status =
        amq__spill_read(&f->spill, h->bytes, h->capacity, f->head_urls_max, &len, &records, diag);
    if (status == AMQ_OK) {
        h->start = 0;
        h->end = len;
        h->records = records;
    }
    return status;
}

int amq_frontier_pop(char *buffer, size_t capacity, size_t *len, amq_frontier *f, amq_diag *diag)
{
    assert(f && len && (buffer || capacity == 0));
    *len = 0;
    if (f->head.records == 0 && f->spill.count > 0) {
        /* Read on, or let go of the segments read to the end. */
        int status = f->spill.unread_records > 0 ? refill_head(f, diag)
                                                 : amq__spill_retire_read(&f->spill, diag);
        if (status != AMQ_OK)
            return status;
    }
    amq__record_buffer *from = f->head.records ? &f->head : f->tail.records ? &f->tail : NULL;
    if (!from)
        return 0;
    const uint8_t *record = from->bytes + from->start;
    size_t url_len = amq__record_url_len(record);
    if (capacity <= url_len) {
        *len = url_len;
        return amq__fail(diag, AMQ_ERANGE,
                         "the next URL is %zu bytes; the buffer of %zu has no room for it and "
                         "its NUL",
                         url_len, capacity);
    }
    memcpy(buffer, record + 4, url_len);
    buffer[url_len] = '\0';
    from->start += amq__record_size(url_len);
    from->records--;
    if (from->records == 0)
        from->start = from->end = 0;
    f->popped++;
    *len = url_len;
    return 1;
}

/* ---- checkpoints ------------------------------------------------------------- */

int amq_frontier_save(amq_frontier *f, amq_diag *diag)
{
    assert(f);
    if (f->generation == UINT64_MAX)
        return amq__fail(diag, AMQ_ERANGE, "checkpoint %" PRIu64 " is the last there can be",
                         f->generation);
    int status = f->tail.records ? spill_tail(f, diag) : AMQ_OK;
    if (status == AMQ_OK && f->head.records == 0)
        status = amq__spill_retire_read(&f->spill, diag);
    if (status == AMQ_OK)
        status = amq__spill_sync(&f->spill, diag);
    amq__manifest m = {
        .generation = f->generation + 1,
        .filter = f->filter_params,
        .pushed = f->pushed,
        .enqueued = f->enqueued,
        .popped = f->popped,
        .next_segment = f->spill.next_id,
        /* the next URL to pop: the head's first, else the spill's */
        .read_offset = f->spill.read_offset - (f->head.end - f->head.start),
        .read_records = f->spill.read_records - f->head.records,
        .segments = f->spill.count,
        .lost = f->spill.lost,
        .retired = f->spill.retired_count,
    };
    if (status == AMQ_OK)
        status = amq__frontier_save_filter(&m.filter_checksum, f, m.generation, diag);
    if (status == AMQ_OK) {
        status = amq__manifest_write(f, &m, diag);
        if (status != AMQ_OK) {
            char name[AMQ__FRONTIER_FILTER_NAME_SIZE];
            amq__frontier_filter_name(name, m.generation);
            unlinkat(f->dir_fd, name, 0);
        }
    }
    if (status != AMQ_OK)
        return status;
    if (f->generation > 0) {
        char name[AMQ__FRONTIER_FILTER_NAME_SIZE];
        amq__frontier_filter_name(name, f->generation);
        unlinkat(f->dir_fd, name, 0);
    }
    amq__spill_commit(&f->spill);
    f->generation = m.generation;
    return AMQ_OK;
}

/* ---- figures and invariants ------------------------------------------------------- */

void amq_frontier_stats_get_sized(amq_frontier_stats *caller_out, size_t struct_size,
                                  const amq_frontier *f)
{
    assert(f && caller_out && struct_size >= sizeof(size_t));
    amq_frontier_stats stats;
    amq_frontier_stats *out = &stats;
    memset(out, 0, sizeof *out);
    out->pushed = f->pushed;
    out->enqueued = f->enqueued;
    out->skipped = f->pushed - f->enqueued;
    out->popped = f->popped;
    out->queued = f->enqueued - f->popped - f->spill.lost;
    out->queued_in_memory = f->head.records + f->tail.records;
    out->queued_on_disk = f->spill.unread_records;
    out->memory_bytes = f->head.capacity + f->tail.capacity;
    out->disk_bytes = f->spill.bytes;
    out->segments = f->spill.count;
    out->filter_bytes = amq_scalable_bloom_memory_bytes(f->filter);
    out->expected_fpr = amq_scalable_bloom_expected_fpr(f->filter);
    out->fpr = amq_scalable_bloom_fpr(f->filter);
    out->generation = f->generation;
    out->lost = f->spill.lost;
    amq__struct_write(caller_out, struct_size, out, sizeof *out);
}

/* I4 for one buffer: whole records from start to end, as many as it says. */
static int check_buffer(const amq__record_buffer *b, const char *which, amq_diag *diag)
{
    if (b->start > b->end || b->end > b->capacity)
        return amq__fail(diag, AMQ_ECORRUPT, "%s: start %zu, end %zu, capacity %zu (I4)", which,
                         b->start, b->end, b->capacity);
    uint64_t records = 0;
    size_t at = b->start;
    while (at < b->end) {
        if (b->end - at < AMQ__RECORD_OVERHEAD ||
            b->end - at < amq__record_size(amq__record_url_len(b->bytes + at)))
            return amq__fail(diag, AMQ_ECORRUPT, "%s: a record at %zu runs past the end (I4)",
                             which, at);
        at += amq__record_size(amq__record_url_len(b->bytes + at));
        records++;
    }
    if (records != b->records)
        return amq__fail(diag, AMQ_ECORRUPT, "%s holds %" PRIu64 " records, not %" PRIu64 " (I4)",
                         which, records, b->records);
    return AMQ_OK;
}

int amq__frontier_check(const amq_frontier *f, amq_diag *diag)
{
    int status = check_buffer(&f->head, "head", diag);
    if (status == AMQ_OK)
        status = check_buffer(&f->tail, "tail", diag);
    if (status != AMQ_OK)
        return status;
    const amq__spill *s = &f->spill;
    if (f->head.records > 0 &&
        (s->count == 0 || s->read_offset < AMQ__SEGMENT_HEADER + (f->head.end - f->head.start) ||
         s->read_records < f->head.records))
        return amq__fail(diag, AMQ_ECORRUPT, "the head is not read from the first segment (I1)");
    if (s->lost > f->enqueued - f->popped ||
        f->enqueued - f->popped - s->lost != f->head.records + s->unread_records + f->tail.records)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "%" PRIu64 " enqueued, %" PRIu64 " popped, %" PRIu64 " lost, but %" PRIu64
                         " + %" PRIu64 " + %" PRIu64 " in head, spill and tail (I2)",
                         f->enqueued, f->popped, s->lost, f->head.records, s->unread_records,
                         f->tail.records);
    if (f->head.capacity > f->head_bytes_max || f->tail.capacity > f->tail_bytes_max ||
        f->head.records > f->head_urls_max || f->tail.records > f->tail_urls_max)
        return amq__fail(diag, AMQ_ECORRUPT, "the buffers exceed their caps (I3)");
    if (amq_scalable_bloom_keys(f->filter) != f->enqueued)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "the filter holds %" PRIu64 " URLs, %" PRIu64 " were enqueued (I5)",
                         amq_scalable_bloom_keys(f->filter), f->enqueued);
    return AMQ_OK;
}
