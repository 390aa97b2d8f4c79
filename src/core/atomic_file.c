/*
 * atomic_file.c - the library's one atomic-file writer (atomic_file.h),
 * and the I/O helpers its callers share.
 *
 * A file is replaced atomically: the bytes go to a new file in the file's
 * directory (so the rename stays within one filesystem), which is
 * fsynced, closed, renamed over the file, and then the directory is
 * fsynced so the rename itself is durable. A crash at any moment leaves
 * the file either old or new, never a mixture. Every step after the
 * directory is opened is relative to its descriptor (openat, linkat,
 * renameat), so a directory renamed or replaced meanwhile cannot get half
 * a file: replace_in() is those steps, and both entry points go through
 * it; they differ in how the temporary file is named, which each one's
 * callers depend on, and in the words of their messages.
 *
 * amq__atomic_save, for a path a user gives. The temporary file is named
 * "<dir>/.<name>.tmp.XXXXXX". It is unnamed (O_TMPFILE) until it is
 * complete, where the filesystem allows, so a process killed while
 * writing leaves nothing; elsewhere it is named from the start, the suffix
 * XXXXXX encoding the writer's pid, and each save first removes the
 * temporary files of the same file whose writer is gone (see
 * TEMP_PID_LIMIT). Either way a killed save's leftover lives at most until
 * the file's next save. What path names decides the rest:
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
 * amq__atomic_write_at, for a file inside a directory its caller holds
 * open: the temporary name is the caller's, fixed, and removed first when
 * an earlier write left it. The frontier writes so: its lock on the
 * directory makes it the only writer there, and its reopening sweep knows
 * exactly which temporary names a checkpoint can leave.
 */
#include "core/atomic_file.h"
#include "core/alloc.h"
#include "core/hash.h"
#include "core/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/vfs.h>
/* glibc names O_TMPFILE and O_PATH only for _GNU_SOURCE, which would also
 * swap strerror_r for its GNU form; its own names for them are there all
 * the same. */
#if !defined(O_TMPFILE) && defined(__O_TMPFILE)
#define O_TMPFILE __O_TMPFILE
#endif
#if !defined(O_PATH) && defined(__O_PATH)
#define O_PATH __O_PATH
#endif
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0 /* <linux/magic.h> */
#endif
#endif

/* Writes go in calls of at most this, so that no single call's length
 * overflows size_t or ssize_t anywhere. */
#define IO_CHUNK ((size_t)1 << 30)

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

/* ---- the steps of a replacement -------------------------------------------- */

/* The step of a replacement that failed, for its entry point's message. */
typedef enum atomic_step {
    STEP_REMOVE,  /* removing the fixed temporary name an earlier write left */
    STEP_CREATE,  /* opening the directory, or creating the temporary file */
    STEP_PREPARE, /* giving the new file the old one's attributes: the diag is said */
    STEP_FILL,    /* the fill callback */
    STEP_SYNC,    /* fsync of the temporary file */
    STEP_CLOSE,   /* close of the temporary file */
    STEP_RENAME,  /* the rename over the file */
    STEP_SYNC_DIR /* fsync of the directory, after the rename: the file is replaced */
} atomic_step;

/* One replacement of a file in a directory held open. */
typedef struct atomic_job {
    int dirfd;
    const char *name;      /* the file's name in the directory */
    const char *temporary; /* the temporary file's name in the directory */
    /* Generated temporary names: temporary points into paths->temporary,
     * whose suffix is drawn afresh for each attempt. NULL: temporary is
     * the caller's, fixed, and removed first if it is there. */
    save_paths *paths;
    const temp_host *host;
    bool unnamed;             /* try an unnamed file first (generated names only) */
    mode_t mode;              /* the temporary file's, less the umask */
    const save_target *keep;  /* NULL, or the file whose attributes the new one takes */
    const char *path;         /* with keep: the path saved, for its messages */
    const char *sync_by_path; /* NULL, or the directory's path when dirfd cannot be synced */
    amq__fill_fn fill;
    void *context;
    atomic_step failed; /* out: the step that failed */
    int error;          /* out: its errno */
} atomic_job;

static int step_failed(atomic_job *job, atomic_step step, int status)
{
    job->failed = step;
    job->error = errno;
    return status;
}

/* Create the temporary file with the job's mode (less the umask): under a
 * fresh generated name, O_EXCL making a collision a retry, not a clobber;
 * or under the caller's fixed name. Never through a symbolic link. open
 * rather than mkstemp, which fixes mode 0600 and whose repair would need
 * the umask, readable only by changing it (a race with threads). Returns
 * the descriptor, or -1 with errno set. */
static int create_temporary(const atomic_job *job)
{
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
    if (!job->paths)
        return openat(job->dirfd, job->temporary, flags, job->mode);
    for (unsigned attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        name_temporary(job->paths, job->host, attempt);
        int fd = openat(job->dirfd, job->temporary, flags, job->mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* An unnamed file in the directory (O_TMPFILE): a process killed while
 * writing it leaves nothing behind, as the kernel frees a file with no
 * name once its last descriptor closes. -1 with errno set where the kernel
 * or the filesystem has no such files. */
static int open_unnamed(int dirfd, mode_t mode)
{
#ifdef O_TMPFILE
    return openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
#else
    (void)dirfd;
    (void)mode;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

/* Give the unnamed file fd a temporary name, for the rename over the file
 * (linkat cannot replace a name). Through /proc/self/fd/N, which anyone
 * may link where /proc is mounted (linkat's AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH). Returns 0, or -1 with errno set. */
static int link_temporary(int fd, const atomic_job *job)
{
    char by_proc[64];
    snprintf(by_proc, sizeof by_proc, "/proc/self/fd/%d", fd);
    for (unsigned attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        name_temporary(job->paths, job->host, attempt);
        if (linkat(AT_FDCWD, by_proc, job->dirfd, job->temporary, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Make a completed rename durable. Filesystems that cannot sync a
 * directory say EINVAL; that is not an error of the write. Returns 0, or
 * -1 with errno set. */
static int sync_directory(const atomic_job *job)
{
    int fd = job->dirfd;
    if (job->sync_by_path) {
        fd = open(job->sync_by_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return -1;
    }
    int result = fsync(fd);
    if (result != 0 && errno == EINVAL)
        result = 0;
    int saved_errno = errno;
    if (job->sync_by_path)
        close(fd);
    errno = saved_errno;
    return result;
}

/* Write the file into a new file in the directory, synced and closed,
 * named job->temporary, for the rename over the file. unnamed: try an
 * unnamed file first, named only once complete. On failure no file is
 * left. fill's own words for a failure other than AMQ_EIO go to inner. */
static int write_temporary(atomic_job *job, bool unnamed, amq_diag *diag, amq_diag *inner)
{
    int fd = unnamed ? open_unnamed(job->dirfd, job->mode) : -1;
    unnamed = fd >= 0;
    if (!unnamed)
        fd = create_temporary(job);
    if (fd < 0)
        return step_failed(job, STEP_CREATE, AMQ_EIO);
    bool named = !unnamed;
    int status = AMQ_OK;
    if (job->keep && (status = keep_attributes(fd, job->keep, job->path, diag)) != AMQ_OK)
        step_failed(job, STEP_PREPARE, status);
    if (status == AMQ_OK && (status = job->fill(job->context, fd, inner)) != AMQ_OK)
        step_failed(job, STEP_FILL, status);
    if (status == AMQ_OK && fsync(fd) != 0)
        status = step_failed(job, STEP_SYNC, AMQ_EIO);
    if (status == AMQ_OK && unnamed) {
        if (link_temporary(fd, job) != 0) {
            /* No way to name it here (no /proc, a filesystem that refuses):
             * the bytes go again to a file named from the start. */
            close(fd);
            return write_temporary(job, false, diag, inner);
        }
        named = true;
    }
    if (close(fd) != 0 && status == AMQ_OK)
        status = step_failed(job, STEP_CLOSE, AMQ_EIO);
    if (status != AMQ_OK && named)
        unlinkat(job->dirfd, job->temporary, 0);
    if (status != AMQ_OK)
        errno = job->error;
    return status;
}

/* The replacement both entry points make: the temporary file written,
 * renamed over the file, the directory synced; every step relative to
 * job->dirfd. On failure job->failed and job->error say where and why
 * (errno is job->error), and the entry point words its message. */
static int replace_in(atomic_job *job, amq_diag *diag, amq_diag *inner)
{
    if (!job->paths && unlinkat(job->dirfd, job->temporary, 0) != 0 && errno != ENOENT)
        return step_failed(job, STEP_REMOVE, AMQ_EIO);
    int status = write_temporary(job, job->unnamed, diag, inner);
    if (status != AMQ_OK)
        return status;
    if (renameat(job->dirfd, job->temporary, job->dirfd, job->name) != 0) {
        step_failed(job, STEP_RENAME, AMQ_EIO);
        unlinkat(job->dirfd, job->temporary, 0);
        errno = job->error;
        return AMQ_EIO;
    }
    if (sync_directory(job) != 0)
        return step_failed(job, STEP_SYNC_DIR, AMQ_EIO);
    return AMQ_OK;
}

/* ---- a file in a directory held open ------------------------------------------- */

int amq__atomic_write_at(int dirfd, const char *dir, const char *name, const char *temporary,
                         mode_t mode, amq__fill_fn fill, void *context, amq_diag *diag)
{
    atomic_job job = {
        .dirfd = dirfd,
        .name = name,
        .temporary = temporary,
        .mode = mode,
        .fill = fill,
        .context = context,
    };
    amq_diag inner = { .message = "" };
    int status = replace_in(&job, diag, &inner);
    if (status == AMQ_OK)
        return AMQ_OK;
    switch (job.failed) {
    case STEP_REMOVE:
        return amq__io_fail(diag, job.error, "cannot remove '%s/%s'", dir, temporary);
    case STEP_FILL:
        if (status != AMQ_EIO)
            return amq__fail(diag, status, "writing '%s/%s': %s", dir, temporary, inner.message);
        return amq__io_fail(diag, job.error, "writing '%s/%s'", dir, temporary);
    case STEP_SYNC:
        return amq__io_fail(diag, job.error, "syncing '%s/%s'", dir, temporary);
    case STEP_CLOSE:
        return amq__io_fail(diag, job.error, "closing '%s/%s'", dir, temporary);
    case STEP_RENAME:
        return amq__io_fail(diag, job.error, "cannot rename '%s/%s' to '%s'", dir, temporary, name);
    case STEP_SYNC_DIR:
        return amq__io_fail(diag, job.error, "syncing directory '%s' after writing '%s'", dir,
                            name);
    case STEP_CREATE:
    case STEP_PREPARE:
    default:
        return amq__io_fail(diag, job.error, "cannot create '%s/%s'", dir, temporary);
    }
}

/* ---- a file a user names --------------------------------------------------------- */

int amq__atomic_check_name(const char *path, amq_diag *diag)
{
    return check_file_name(path, diag);
}

/* Open the directory a replacement is made in. One that may be written
 * but not listed (mode 0333) is opened for its name only (O_PATH), which
 * the *at calls need; its final fsync then fails as it would by path.
 * *readable: whether the descriptor can be synced. -1 with errno set. */
static int open_directory(const char *directory, bool *readable)
{
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    *readable = fd >= 0;
#ifdef O_PATH
    if (fd < 0 && errno == EACCES) {
        fd = open(directory, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            errno = EACCES;
    }
#endif
    return fd;
}

/* Remove the temporary files of this file's earlier saves whose process is
 * gone: a save killed before its rename (kill -9, a crash) leaves one that
 * nobody else would ever remove. One whose process lives, or may (kill
 * says anything but ESRCH), or that another host or pid namespace made,
 * is being written and stays. Best effort: a directory that cannot be
 * read is reported by the save that follows, if at all. */
static void remove_stale_temporaries(int dirfd, const save_paths *p, const temp_host *h)
{
    const char *prefix = p->temporary + p->name_at; /* ".<name>.tmp." */
    size_t prefix_len = p->suffix_at - p->name_at;
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return;
    }
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
        unlinkat(dirfd, entry->d_name, 0);
    }
    closedir(dir);
}

/* Write into a character device, a FIFO or an open file, in place: there
 * is no name to replace, so this is not atomic. An open regular file is
 * appended to, as the redirection that opened it (">" has emptied it,
 * ">>" keeps what it holds) would. */
static int save_into(const save_target *t, const char *path, amq__fill_fn fill, void *context,
                     amq_diag *diag)
{
    bool regular = S_ISREG(t->st.st_mode);
    int fd = open(t->name, O_WRONLY | O_NOCTTY | O_CLOEXEC | (regular ? O_APPEND : 0));
    if (fd < 0)
        return amq__io_fail(diag, errno, "saving '%s': cannot open it", path);
    amq_diag inner = { .message = "" };
    int status = fill(context, fd, &inner);
    if (status == AMQ_EIO)
        status = amq__io_fail(diag, errno, "saving '%s': writing it", path);
    else if (status != AMQ_OK)
        status = amq__fail(diag, status, "saving '%s': writing it: %s", path, inner.message);
    else if (regular && fsync(fd) != 0 && errno != EINVAL)
        status = amq__io_fail(diag, errno, "saving '%s': syncing it", path);
    int saved_errno = errno;
    if (close(fd) != 0 && status == AMQ_OK) {
        saved_errno = errno;
        status = amq__io_fail(diag, errno, "saving '%s': closing it", path);
    }
    errno = saved_errno;
    return status;
}

/* The message for a replacement of path that failed. */
static int save_failed(const atomic_job *job, int status, const char *path, const save_paths *p,
                       const amq_diag *inner, amq_diag *diag)
{
    switch (job->failed) {
    case STEP_PREPARE:
        return status; /* keep_attributes has said why */
    case STEP_FILL:
        if (status != AMQ_EIO)
            return amq__fail(diag, status, "saving '%s': writing a temporary file in '%s': %s",
                             path, p->directory, inner->message);
        return amq__io_fail(diag, job->error, "saving '%s': writing a temporary file in '%s'", path,
                            p->directory);
    case STEP_SYNC:
        return amq__io_fail(diag, job->error, "saving '%s': syncing a temporary file in '%s'", path,
                            p->directory);
    case STEP_CLOSE:
        return amq__io_fail(diag, job->error, "saving '%s': closing a temporary file in '%s'", path,
                            p->directory);
    case STEP_RENAME:
        return amq__io_fail(diag, job->error, "saving '%s': renaming '%s' over it", path,
                            p->temporary);
    case STEP_SYNC_DIR:
        return amq__io_fail(diag, job->error,
                            "'%s' was replaced, but syncing its directory '%s' failed, so the "
                            "replacement may not survive a crash",
                            path, p->directory);
    case STEP_REMOVE:
    case STEP_CREATE:
    default:
        return amq__io_fail(diag, job->error, "saving '%s': cannot create a temporary file in '%s'",
                            path, p->directory);
    }
}

int amq__atomic_save(const char *path, amq__fill_fn fill, void *context, amq_diag *diag)
{
    int status = check_file_name(path, diag);
    if (status != AMQ_OK)
        return status;
    save_target target;
    status = resolve_target(&target, path, diag);
    if (status != AMQ_OK)
        return status;
    if (target.kind == SAVE_INTO) {
        status = save_into(&target, path, fill, context, diag);
        int saved_errno = errno;
        amq__free(target.name);
        errno = saved_errno;
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

    bool readable;
    int dirfd = open_directory(paths.directory, &readable);
    if (dirfd < 0) {
        status = amq__io_fail(diag, errno, "saving '%s': cannot create a temporary file in '%s'",
                              path, paths.directory);
    } else {
        temp_host host;
        temp_host_init(&host);
        remove_stale_temporaries(dirfd, &paths, &host);
        const char *slash = strrchr(target.name, '/');
        atomic_job job = {
            .dirfd = dirfd,
            .name = slash ? slash + 1 : target.name,
            .temporary = paths.temporary + paths.name_at,
            .paths = &paths,
            .host = &host,
            .unnamed = true,
            /* A replacement starts private and takes the old file's mode
             * before anything is written to it. */
            .mode = target.kind == SAVE_REPLACE ? 0600 : 0644,
            .keep = target.kind == SAVE_REPLACE ? &target : NULL,
            .path = path,
            .sync_by_path = readable ? NULL : paths.directory,
            .fill = fill,
            .context = context,
        };
        amq_diag inner = { .message = "" };
        status = replace_in(&job, diag, &inner);
        if (status != AMQ_OK)
            status = save_failed(&job, status, path, &paths, &inner, diag);
        int saved_errno = errno;
        close(dirfd);
        errno = saved_errno;
    }
    int saved_errno = errno;
    save_paths_free(&paths);
    amq__free(target.name);
    errno = saved_errno;
    return status;
}
