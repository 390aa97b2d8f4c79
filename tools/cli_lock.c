/*
 * cli_lock.c - the lock that serialises the commands that load a filter,
 * change it and save it again (add, remove, merge -o), so that two of them
 * on one file at once cannot each save their own change over the other's.
 *
 * What is locked: an empty file "<dir>/.<name>.lock" beside the filter
 * (after its symbolic links, as the save replaces the file they lead to),
 * with flock(LOCK_EX). Not the filter itself: a save replaces it by rename,
 * so a lock on its inode would lock a file no longer under the name, and
 * the next writer would lock the new one while the first still works.
 * The lock file stays when done: removing it would race with a writer that
 * has just opened it and waits, which would then lock a file no longer
 * under the name. It is hidden, empty, and no command takes it for a
 * filter ("not an amq file"); it never holds data, so deleting it while no
 * writer runs is harmless.
 *
 * The kernel releases a flock when its process exits, however it exits,
 * so a writer killed with kill -9 leaves no lock held. flock works on
 * local filesystems and, as a lock of the whole file, over NFS (Linux
 * 2.6.12+).
 *
 * build reads nothing of the old file, but takes the lock for its save, so
 * that it cannot save inside an add's load and save (which would then save
 * the old filter over build's).
 *
 * A second writer waits, saying once on stderr that it does, for up to
 * AMQ_LOCK_TIMEOUT seconds (default 30; 0: do not wait), then gives up
 * with an error, exit status 2, the file unchanged. Readers (query, info,
 * export) take no lock: a save replaces the file whole, so a reader sees
 * the old file or the new one.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_SUFFIX          ".lock"
#define LOCK_DEFAULT_TIMEOUT 30.0
#define LOCK_POLL_FIRST      0.005 /* seconds; doubled up to LOCK_POLL_MAX */
#define LOCK_POLL_MAX        0.1

/* The seconds to wait for the lock: AMQ_LOCK_TIMEOUT, or the default. -1
 * after printing why the variable is not a number of seconds. */
static double lock_timeout(const char *command)
{
    const char *text = getenv("AMQ_LOCK_TIMEOUT");
    if (!text || !*text)
        return LOCK_DEFAULT_TIMEOUT;
    char *end;
    errno = 0;
    double seconds = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !isfinite(seconds) || seconds < 0) {
        cli_error("%s: AMQ_LOCK_TIMEOUT='%s' is not a number of seconds (0 or more)", command,
                  text);
        return -1;
    }
    return seconds;
}

/* Links followed before giving up, as many as Linux follows. */
#define LOCK_MAX_LINKS 40

/* Links in the directories before the last component lead to the same
 * directory whatever the spelling, so to the same lock file. */
char *cli_follow_links(const char *path)
{
    char *name = strdup(path);
    for (int links = 0; name && links < LOCK_MAX_LINKS; links++) {
        struct stat st;
        if (lstat(name, &st) != 0 || !S_ISLNK(st.st_mode))
            return name;
        char text[4096];
        ssize_t len = readlink(name, text, sizeof text - 1);
        if (len < 0)
            return name;
        text[len] = '\0';
        const char *slash = strrchr(name, '/');
        size_t head = text[0] == '/' || !slash ? 0 : (size_t)(slash - name) + 1;
        char *next = malloc(head + (size_t)len + 1);
        if (next) {
            memcpy(next, name, head);
            memcpy(next + head, text, (size_t)len + 1);
        }
        free(name);
        name = next;
    }
    return name;
}

/* "<dir>/.<name>.lock" for the file a save to path replaces. A new string,
 * or NULL when out of memory. */
static char *lock_path_of(const char *path)
{
    char *file = cli_follow_links(path);
    if (!file)
        return NULL;
    const char *slash = strrchr(file, '/');
    size_t head = slash ? (size_t)(slash - file) + 1 : 0;
    size_t len = head + 1 + strlen(file + head) + strlen(LOCK_SUFFIX) + 1;
    char *lock = malloc(len);
    if (lock)
        snprintf(lock, len, "%.*s.%s%s", (int)head, file, file + head, LOCK_SUFFIX);
    free(file);
    return lock;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether creating a file in the lock file's directory failed for a reason
 * that fails the save there as well (it creates its new file in the same
 * directory): a missing or read-only directory, no permission, no room.
 * Then there is nothing to serialise, and the save says what is wrong. */
static bool directory_refuses_files(int error)
{
    return error == ENOENT || error == ENOTDIR || error == EACCES || error == EPERM ||
           error == EROFS || error == ENOSPC || error == EDQUOT;
}

int cli_lock_take(cli_lock *lock, const char *command, const char *path, bool new_file)
{
    lock->fd = -1;
    struct stat st;
    /* A device or FIFO is written into, nothing replaced (the save refuses
     * anything else that is no regular file); a missing file that is not
     * to be created fails to load, and needs no lock file left behind. */
    if (stat(path, &st) == 0 ? !S_ISREG(st.st_mode) : errno == ENOENT && !new_file)
        return 0;
    double timeout = lock_timeout(command);
    if (timeout < 0)
        return -1;
    char *lock_path = lock_path_of(path);
    if (!lock_path) {
        cli_error("%s: cannot lock %s: %s", command, path, strerror(ENOMEM));
        return -1;
    }
    /* Open an existing lock file without O_CREAT: in a sticky directory
     * such as /tmp, O_CREAT on another user's file fails
     * (fs.protected_regular) where a plain open succeeds. */
    int fd = open(lock_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        fd = open(lock_path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        /* Readable by all whatever the umask: a user who may write the
         * filter must be able to open its lock. */
        if (fd >= 0)
            (void)fchmod(fd, 0644);
        else if (directory_refuses_files(errno)) {
            free(lock_path);
            return 0;
        }
    }
    if (fd < 0) {
        cli_error("%s: cannot lock %s: cannot open its lock file '%s': %s", command, path,
                  lock_path, strerror(errno));
        free(lock_path);
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            cli_error("%s: cannot lock %s (lock file '%s'): %s", command, path, lock_path,
                      strerror(errno));
            close(fd);
            free(lock_path);
            return -1;
        }
        if (timeout > 0)
            cli_error("%s: waiting for the lock on %s, held by another process changing it (up "
                      "to %g s)",
                      command, path, timeout);
        double deadline = now_seconds() + timeout, pause = LOCK_POLL_FIRST;
        bool locked = false;
        while (!locked && now_seconds() < deadline) {
            double left = deadline - now_seconds();
            double step = pause < left ? pause : left;
            struct timespec sleep_for = { (time_t)step, (long)((step - floor(step)) * 1e9) };
            nanosleep(&sleep_for, NULL);
            pause = pause * 2 < LOCK_POLL_MAX ? pause * 2 : LOCK_POLL_MAX;
            locked = flock(fd, LOCK_EX | LOCK_NB) == 0;
        }
        if (!locked) {
            cli_error("%s: %s is locked by another process changing it (lock file '%s'); gave "
                      "up after %g s, nothing changed (AMQ_LOCK_TIMEOUT sets the wait)",
                      command, path, lock_path, timeout);
            close(fd);
            free(lock_path);
            return -1;
        }
    }
    free(lock_path);
    lock->fd = fd;
    return 0;
}

void cli_lock_release(cli_lock *lock)
{
    if (lock->fd >= 0)
        close(lock->fd);
    lock->fd = -1;
}
