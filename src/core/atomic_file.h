/*
 * atomic_file.h - writing a file so that a crash leaves it old or new,
 * never a mixture (atomic_file.c has the how and why), and the small I/O
 * helpers every file operation of the library shares.
 *
 * The writer knows nothing of what it writes: a fill callback writes the
 * bytes into the descriptor it is handed, as many times as the writer asks
 * (a save that cannot name an unnamed file starts again on a named one).
 * Two entry points share one way of writing (a temporary file in the
 * file's directory, fsync, rename over the file, fsync the directory),
 * each in the words of its callers' messages:
 *
 *   amq__atomic_save      a path, as a user names it: symbolic links
 *                         followed, devices written into, a replaced
 *                         file's attributes kept, temporary names unique
 *                         to the writer (format.h's amq__format_save)
 *   amq__atomic_write_at  a name inside a directory held open, under a
 *                         temporary name the caller fixes (the frontier,
 *                         whose lock makes it the directory's only writer
 *                         and whose sweep knows its temporaries by name)
 */
#ifndef AMQ_ATOMIC_FILE_H
#define AMQ_ATOMIC_FILE_H

#include "amq/amq.h"
#include "core/util.h"

#include <stdint.h>
#include <sys/types.h>

/* Write every byte of the file into fd, at its position. Returns AMQ_OK;
 * AMQ_EIO with errno set (the writer then says what it was writing, with
 * strerror); or another status with diag saying why (the writer puts its
 * words before them). Called again from the start on a new descriptor
 * when the writer starts over. */
typedef int (*amq__fill_fn)(void *context, int fd, amq_diag *diag);

/* Write path atomically with the bytes fill writes: symbolic links at path
 * followed to the file they name, the new file written in that file's
 * directory (mode 0644 less the umask for a new file; an existing file's
 * mode, owner and group), unnamed where the filesystem allows (O_TMPFILE),
 * fsynced, named directory/.name.tmp.XXXXXX, renamed over the file, the
 * directory fsynced. Temporary files that earlier saves of the file left
 * when killed are removed first. On any failure up to the rename the
 * temporary file is removed and the file is untouched; should only the
 * final directory fsync fail, the file holds the new contents and the diag
 * says so. A character device, a FIFO or a file named under /proc/PID/fd
 * is written into instead, not atomically. An existing regular file
 * without write permission (for root: without a write bit) is refused
 * (AMQ_EIO, errno EACCES), as is one whose owner or group this process
 * cannot give a new file (AMQ_EIO, EPERM). Returns AMQ_OK, AMQ_EIO (errno
 * kept; the diag names the path and the reason), AMQ_EINVAL (a path
 * ending in '/', or a directory, socket or block device), AMQ_ENOMEM, or
 * fill's status. */
int amq__atomic_save(const char *path, amq__fill_fn fill, void *context, amq_diag *diag);

/* Whether path ends in a file name: AMQ_OK, else AMQ_EINVAL saying it
 * cannot be saved to. */
int amq__atomic_check_name(const char *path, amq_diag *diag);

/* Write the file name inside the directory open as dirfd atomically: the
 * caller's temporary name in that directory removed if an earlier write
 * left it, created anew (O_EXCL, never through a symbolic link) with mode
 * (less the umask), filled, fsynced, closed, renamed over name, and the
 * directory fsynced; all relative to dirfd, never by path, so a directory
 * renamed meanwhile still gets the whole file. dir is the directory's
 * path, for messages only. On a failure before the rename, name is
 * untouched and the temporary file gone. Returns AMQ_OK, AMQ_EIO (errno
 * kept; the diag names dir and the file), or fill's status. */
int amq__atomic_write_at(int dirfd, const char *dir, const char *name, const char *temporary,
                         mode_t mode, amq__fill_fn fill, void *context, amq_diag *diag);

/* Fill diag with the printf-style message, ": ", and strerror(saved_errno);
 * leave errno at saved_errno; return AMQ_EIO. For every file operation that
 * fails with errno set. */
int amq__io_fail(amq_diag *diag, int saved_errno, const char *format, ...) AMQ__PRINTF(3, 4);

/* Write all of len bytes to fd at offset (offset < 0: at the file
 * position), resuming after partial writes and EINTR, in calls of at most
 * 1 GiB. Returns 0, or -1 with errno set. */
int amq__write_all(int fd, const void *data, uint64_t len, int64_t offset);

#endif /* AMQ_ATOMIC_FILE_H */
