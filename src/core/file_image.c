/*
 * file_image.c - a file's bytes in memory: read whole, or mapped
 * read-only (file_image.h).
 *
 * A file whose size changes while it is read is reported as corrupt: such
 * a file is being rewritten in place by someone, never by amq's saves,
 * which replace it. A mapped file must likewise not be truncated in place
 * while mapped (the kernel would raise SIGBUS). A pipe or a device has no
 * size to read: it is read to its end, but no further than the container
 * its first bytes describe (format.h's amq__format_described_size), so
 * that an endless stream of something else is not read forever.
 */
#include "core/file_image.h"
#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/bits.h"
#include "core/format.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads go in calls of at most this, so that no single call's length
 * overflows size_t or ssize_t anywhere. */
#define IO_CHUNK ((size_t)1 << 30)

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
        uint64_t described = amq__format_described_size(data);
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
