/*
 * frontier_store.c - the crawl frontier's directory (frontier.c explains
 * the whole): the names of its files and which of them a reopening
 * sweeps, opening and locking the directory, writing a file atomically and
 * reading one whole, and the filter's file of a checkpoint.
 *
 * Every file is opened, created, renamed and removed relative to the
 * directory's descriptor, taken once at open (and flock'ed for as long as
 * the frontier is open), never by path: a directory renamed while open, or
 * replaced by another at its path, cannot get half a checkpoint. A file is
 * written under one temporary name per file of a checkpoint,
 * ".<name>.tmp", so that the checkpoint before says which temporary files
 * can be the frontier's; the lock makes the frontier the directory's only
 * writer, so a fixed name cannot collide.
 */
#define _DEFAULT_SOURCE /* flock, which the POSIX level alone hides */

#include "amq/bloom.h"
#include "amq/frontier.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/family.h"
#include "core/format.h"
#include "core/util.h"
#include "filter/filter.h"
#include "frontier/frontier_internal.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILTER_PREFIX  "filter-"
#define FILTER_SUFFIX  ".amq"
#define TEMP_SUFFIX    ".tmp"
#define TEMP_NAME_SIZE sizeof(".filter-0123456789abcdef.amq.tmp")

/* ---- names ------------------------------------------------------------------ */

void amq__frontier_filter_name(char out[AMQ__FRONTIER_FILTER_NAME_SIZE], uint64_t generation)
{
    amq__frontier_numbered_name(out, AMQ__FRONTIER_FILTER_NAME_SIZE, FILTER_PREFIX, generation,
                                FILTER_SUFFIX);
}

/* The name a file is written under before it is renamed into place,
 * ".<name>.tmp": one name per file of a checkpoint, so that the checkpoint
 * before says which temporary files can be the frontier's. */
static void temp_name(char out[TEMP_NAME_SIZE], const char *name)
{
    snprintf(out, TEMP_NAME_SIZE, ".%s%s", name, TEMP_SUFFIX);
}

int amq_frontier_is_filter(char *directory, size_t capacity, const char *path, amq_diag *diag)
{
    if (directory && capacity > 0)
        directory[0] = '\0';
    if (!path)
        return amq__fail(diag, AMQ_EINVAL, "the path to ask about is NULL");
    if (!directory && capacity > 0)
        return amq__fail(diag, AMQ_EINVAL, "the directory buffer is NULL, its capacity %zu",
                         capacity);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    uint64_t generation;
    if (!amq__frontier_numbered_name_parse(name, FILTER_PREFIX, FILTER_SUFFIX, &generation))
        return 0;
    /* The manifest's path is path with the filter's name replaced: shorter
     * than path, so one that does not fit in PATH_MAX belongs to a path
     * stat would refuse in the same way. */
    size_t head = (size_t)(name - path); /* up to and including the last '/' */
    char manifest[PATH_MAX];
    struct stat st;
    int error = 0;
    if (head + sizeof AMQ__FRONTIER_MANIFEST_NAME > sizeof manifest) {
        error = ENAMETOOLONG;
    } else {
        memcpy(manifest, path, head);
        memcpy(manifest + head, AMQ__FRONTIER_MANIFEST_NAME, sizeof AMQ__FRONTIER_MANIFEST_NAME);
        if (stat(manifest, &st) != 0)
            error = errno;
    }
    if (error == ENOENT || error == ENOTDIR)
        return 0;
    if (error != 0)
        return amq__io_fail(diag, error,
                            "cannot tell whether '%s' is a frontier's filter: no stat of the "
                            "manifest beside it",
                            path);
    const char *from = slash ? path : ".";
    size_t len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    if (capacity <= len)
        return amq__fail(diag, AMQ_ERANGE,
                         "'%s' is a frontier's filter, but its directory (%zu bytes) and a NUL "
                         "do not fit in %zu bytes",
                         path, len, capacity);
    memcpy(directory, from, len);
    directory[len] = '\0';
    return 1;
}

/* What a directory entry's name makes it to the frontier. */
typedef enum entry_kind {
    ENTRY_OTHER,     /* not a name the frontier writes: never touched */
    ENTRY_MANIFEST,  /* frontier.amq */
    ENTRY_FILTER,    /* filter-<generation>.amq; number = the generation */
    ENTRY_SEGMENT,   /* segment-<id>.seg; number = the id */
    ENTRY_TEMPORARY, /* a save's temporary file, ".frontier.amq.tmp" (number = UINT64_MAX)
                        or ".filter-<generation>.amq.tmp" (number = the generation) */
} entry_kind;

static entry_kind classify(const char *name, uint64_t *number)
{
    if (strcmp(name, AMQ__FRONTIER_MANIFEST_NAME) == 0)
        return ENTRY_MANIFEST;
    if (amq__frontier_numbered_name_parse(name, FILTER_PREFIX, FILTER_SUFFIX, number))
        return ENTRY_FILTER;
    if (amq__segment_name_parse(name, number))
        return ENTRY_SEGMENT;
    size_t len = strlen(name), suffix_len = strlen(TEMP_SUFFIX);
    if (name[0] != '.' || len <= 1 + suffix_len || len >= TEMP_NAME_SIZE ||
        strcmp(name + len - suffix_len, TEMP_SUFFIX) != 0)
        return ENTRY_OTHER;
    char base[TEMP_NAME_SIZE];
    memcpy(base, name + 1, len - 1 - suffix_len);
    base[len - 1 - suffix_len] = '\0';
    *number = UINT64_MAX;
    if (strcmp(base, AMQ__FRONTIER_MANIFEST_NAME) == 0 ||
        amq__frontier_numbered_name_parse(base, FILTER_PREFIX, FILTER_SUFFIX, number))
        return ENTRY_TEMPORARY;
    return ENTRY_OTHER;
}

/* Whether reopening at the checkpoint removes the entry: only a file the
 * frontier wrote and no longer needs. Each is known by the checkpoint's
 * record: the files of the save that would have made the next checkpoint
 * (filter-<g+1>.amq and the temporary files, whose names it fixes), the
 * previous checkpoint's filter and the segments the manifest lists as
 * retired (the removals a crash can interrupt after the commit point),
 * and segments of ids the checkpoint had not yet given out whose header is
 * a segment's of that id (spilled after it). A file named like the
 * frontier's that none of these covers is someone else's. */
static bool sweepable(const amq_frontier *f, entry_kind kind, uint64_t number, const char *name,
                      const uint64_t *retired, size_t retired_count)
{
    switch (kind) {
    case ENTRY_TEMPORARY:
        return number == UINT64_MAX || number == f->generation + 1;
    case ENTRY_FILTER:
        return number == f->generation + 1 || (f->generation >= 2 && number == f->generation - 1);
    case ENTRY_SEGMENT:
        if (amq__spill_holds(&f->spill, number))
            return false;
        for (size_t i = 0; i < retired_count; i++)
            if (retired[i] == number)
                return true;
        return number >= f->spill.next_id && amq__segment_file_is_ours(f->dir_fd, name, number);
    default:
        return false;
    }
}

/* Walk the directory. fresh (there is no manifest): the manifest's
 * temporary file is removed, any other file of the frontier's names is
 * damage, and any other file at all means this is not a frontier's
 * directory. Otherwise the files sweepable() names are removed. */
int amq__frontier_sweep(amq_frontier *f, bool fresh, const uint64_t *retired, size_t retired_count,
                        amq_diag *diag)
{
    int fd = openat(f->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        int status = amq__io_fail(diag, errno, "cannot list directory '%s'", f->dir);
        if (fd >= 0)
            close(fd);
        return status;
    }
    int status = AMQ_OK;
    struct dirent *entry;
    while (status == AMQ_OK && (entry = readdir(dir)) != NULL) {
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        uint64_t number = 0;
        entry_kind kind = classify(name, &number);
        bool remove = fresh ? kind == ENTRY_TEMPORARY && number == UINT64_MAX
                            : sweepable(f, kind, number, name, retired, retired_count);
        if (fresh && kind == ENTRY_OTHER)
            status =
                amq__fail(diag, AMQ_EINVAL, "'%s' is not empty and holds no frontier (it has '%s')",
                          f->dir, name);
        else if (fresh && !remove)
            status = amq__fail(diag, AMQ_ECORRUPT,
                               "'%s' holds the frontier file '%s' but no %s: the manifest is "
                               "missing",
                               f->dir, name, AMQ__FRONTIER_MANIFEST_NAME);
        else if (remove && unlinkat(f->dir_fd, name, 0) != 0 && errno != ENOENT)
            status = amq__io_fail(diag, errno, "cannot remove '%s/%s'", f->dir, name);
    }
    closedir(dir);
    return status;
}

/* Create dir if needed, open it, lock it, and resolve its path (for
 * messages: every file is reached through the descriptor, so a directory
 * renamed while open is still the one written). */
int amq__frontier_open_directory(amq_frontier *f, const char *dir, amq_diag *diag)
{
    if (*dir == '\0')
        return amq__fail(diag, AMQ_EINVAL, "the frontier's directory path is empty");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return amq__io_fail(diag, errno, "cannot create directory '%s'", dir);
    f->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (f->dir_fd < 0) {
        if (errno == ENOTDIR)
            return amq__fail(diag, AMQ_EINVAL, "'%s' is not a directory", dir);
        return amq__io_fail(diag, errno, "cannot open directory '%s'", dir);
    }
    /* The lock belongs to this open file description: a second open, in
     * this process or another, makes its own and is refused. */
    if (flock(f->dir_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return amq__io_fail(diag, errno,
                                "frontier directory '%s' is locked: another amq_frontier has it "
                                "open",
                                dir);
        return amq__io_fail(diag, errno, "cannot lock frontier directory '%s'", dir);
    }
    /* Into a buffer of our own, not realpath's malloc'd one: every byte
     * the frontier keeps comes from the library's allocator. */
    char resolved[PATH_MAX];
    if (!realpath(dir, resolved))
        return amq__io_fail(diag, errno, "cannot resolve the path '%s'", dir);
    size_t len = strlen(resolved);
    f->dir = amq__malloc(len + 1);
    if (!f->dir)
        return amq__fail(diag, AMQ_ENOMEM, "out of memory opening '%s'", dir);
    memcpy(f->dir, resolved, len + 1);
    return AMQ_OK;
}

/* ---- files in the directory ------------------------------------------------------ */

/* Write a container as name in the frontier's directory, atomically
 * (format.h's amq__format_save_at): its temporary file ".<name>.tmp",
 * fsync, rename over name, fsync the directory, all relative to the
 * directory's descriptor. mode is the new file's (less the umask).
 * *checksum (may be NULL) receives the trailer written. On a failure
 * before the rename, name is untouched and the temporary file gone. */
int amq__frontier_write_file(uint64_t *checksum, amq_frontier *f, const char *name, mode_t mode,
                             const amq__container *c, const amq__piece *pieces, size_t piece_count,
                             amq_diag *diag)
{
    char temp[TEMP_NAME_SIZE];
    temp_name(temp, name);
    return amq__format_save_at(checksum, f->dir_fd, f->dir, name, temp, mode, c, pieces,
                               piece_count, diag);
}

/* Read the whole file name of the frontier's directory into *image (a
 * symbolic link is not followed). AMQ_EIO (errno ENOENT for a missing
 * file), AMQ_ECORRUPT (not a regular file, or it changed size while read),
 * AMQ_ENOMEM. */
int amq__frontier_read_file(amq__file_image *image, const amq_frontier *f, const char *name,
                            amq_diag *diag)
{
    memset(image, 0, sizeof *image);
    int fd = openat(f->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return amq__io_fail(diag, errno, "cannot open '%s/%s'", f->dir, name);
    struct stat st;
    uint8_t *data = NULL;
    int status = AMQ_OK;
    if (fstat(fd, &st) != 0)
        status = amq__io_fail(diag, errno, "cannot stat '%s/%s'", f->dir, name);
    else if (!S_ISREG(st.st_mode))
        status = amq__fail(diag, AMQ_ECORRUPT, "'%s/%s' is not a regular file", f->dir, name);
    else if ((uint64_t)st.st_size > SIZE_MAX ||
             (st.st_size > 0 && !(data = amq__alloc_table((uint64_t)st.st_size, false))))
        status = amq__fail(diag, AMQ_ENOMEM, "out of memory reading '%s/%s'", f->dir, name);
    if (status == AMQ_OK) {
        int64_t got = amq__read_full(fd, data, (size_t)st.st_size, 0);
        if (got < 0)
            status = amq__io_fail(diag, errno, "reading '%s/%s'", f->dir, name);
        else if (got != (int64_t)st.st_size)
            status = amq__fail(diag, AMQ_ECORRUPT, "'%s/%s' changed size while being read", f->dir,
                               name);
    }
    close(fd);
    if (status != AMQ_OK) {
        amq__aligned_free(data);
        return status;
    }
    image->data = data;
    image->len = (size_t)st.st_size;
    image->mapped = false;
    return AMQ_OK;
}

/* ---- the filter's file ------------------------------------------------------ */

/* Write the filter as filter-<generation>.amq, as the generic handle saves
 * it, and learn the checksum written. The file is read-only: its checksum
 * is the manifest's, so a change by any other writer (amq add, which
 * refuses a file without a write bit) would make the checkpoint
 * unopenable. */
int amq__frontier_save_filter(uint64_t *checksum, amq_frontier *f, uint64_t generation,
                              amq_diag *diag)
{
    char name[AMQ__FRONTIER_FILTER_NAME_SIZE];
    amq__frontier_filter_name(name, generation);
    amq__container c;
    amq__saved saved;
    int status = amq__filter_describe(&saved, &c, f->handle, diag);
    if (status != AMQ_OK)
        return status;
    return amq__frontier_write_file(checksum, f, name, 0444, &c, saved.pieces, saved.piece_count,
                                    diag);
}

/* Load filter-<generation>.amq: a scalable Bloom filter's file, which must
 * be the one whose checksum the manifest holds. */
int amq__frontier_load_filter(amq_frontier *f, uint64_t checksum, amq_diag *diag)
{
    char name[AMQ__FRONTIER_FILTER_NAME_SIZE];
    amq__frontier_filter_name(name, f->generation);
    amq__file_image image;
    amq__container c;
    amq_diag inner = { .message = "" };
    int status = amq__frontier_read_file(&image, f, name, &inner);
    if (status == AMQ_EIO && errno == ENOENT)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "frontier '%s': the checkpoint's filter file '%s' is missing", f->dir,
                         name);
    if (status == AMQ_OK) {
        status = amq__format_parse(&c, image.data, image.len, &inner);
        if (status == AMQ_OK && c.family != amq__scalable_bloom_family.id)
            status =
                amq__fail(&inner, AMQ_ECORRUPT,
                          "it holds family %" PRIu32 ", not a scalable-bloom filter", c.family);
        if (status != AMQ_OK)
            amq__file_image_close(&image);
    }
    uint64_t trailer = 0;
    amq_filter *handle = NULL;
    if (status == AMQ_OK) {
        trailer = amq__load_u64le(image.data + image.len - AMQ__FORMAT_TRAILER_SIZE);
        status = amq__filter_from_container(&handle, &c, &image, name, &inner);
    }
    if (status != AMQ_OK)
        return amq__fail(diag, status, "frontier '%s': filter file '%s': %s", f->dir, name,
                         inner.message);
    amq_scalable_bloom *filter = amq_scalable_bloom_unwrap(handle);
    assert(filter);
    if (trailer != checksum) {
        /* A sound filter file, but not the one the checkpoint wrote: the
         * frontier cannot tell which URLs were added to it (and would skip
         * them, never having queued them), nor rebuild it, the popped URLs
         * being gone. */
        status =
            amq__fail(diag, AMQ_ECORRUPT,
                      "frontier '%s': its filter file '%s' was changed outside the "
                      "frontier (or belongs to another checkpoint): its checksum %016" PRIx64
                      " is not the %016" PRIx64 " checkpoint %" PRIu64
                      " wrote, and it holds %" PRIu64 " URLs where the checkpoint enqueued %" PRIu64
                      "; restore the file the checkpoint wrote",
                      f->dir, name, trailer, checksum, f->generation,
                      amq_scalable_bloom_keys(filter), f->enqueued);
        amq_free(handle);
        return status;
    }
    f->handle = handle;
    f->filter = filter;
    return AMQ_OK;
}
