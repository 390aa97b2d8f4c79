/*
 * cli_guard.c - the guard that keeps the commands that save filters (add,
 * remove, build -o, merge -o) off the files of a crawl frontier.
 *
 * A frontier's directory (docs/FRONTIER.md) holds its manifest
 * (frontier.amq), its filter (filter-<16 hex digits>.amq, read-only), its
 * spill files (segment-<16 hex digits>.seg) and a save's temporary files
 * (.frontier.amq.tmp, .filter-<16 hex digits>.amq.tmp). The manifest
 * records the filter file's checksum: a filter file changed by anyone but
 * the frontier makes the frontier refuse to open, and its queued URLs are
 * then out of reach; a replaced manifest or spill file loses the queue.
 *
 * What is judged is the file a save would change, not the name it was
 * given: a save follows symbolic links (and /dev/fd/N, /dev/stdout) to the
 * file they lead to, so the guard does as well, down to a dangling link's
 * target that a save would create. A file there is the frontier's when its
 * name is one of the names above in a directory that holds a manifest, or
 * when it is the same file (device and inode) as one of them: another hard
 * link to it in that directory. Hard links are found in that directory
 * only; one made elsewhere cannot be told from the file alone, and a save
 * through it replaces that name, leaving the frontier's file as it was.
 *
 * The guard comes before every other check of the output (--force, the
 * read-only refusal), so that no message that names a remedy ("use
 * --force", "make it writable") is ever given for a frontier's file.
 */
#define _XOPEN_SOURCE 700 /* realpath, which the POSIX level alone hides */

#include "cli.h"

#include "amq/frontier.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_NAME "frontier.amq"

/* What a name makes a file in a frontier's directory. */
typedef enum frontier_role {
    ROLE_NONE,
    ROLE_MANIFEST,
    ROLE_FILTER,
    ROLE_SEGMENT,
    ROLE_TEMPORARY,
} frontier_role;

/* Whether name is prefix, 16 lowercase hex digits, then suffix: how the
 * frontier numbers its files. */
static bool numbered(const char *name, const char *prefix, const char *suffix)
{
    size_t prefix_len = strlen(prefix), suffix_len = strlen(suffix);
    if (strlen(name) != prefix_len + 16 + suffix_len || strncmp(name, prefix, prefix_len) != 0 ||
        strcmp(name + prefix_len + 16, suffix) != 0)
        return false;
    for (size_t i = prefix_len; i < prefix_len + 16; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return false;
    return true;
}

static frontier_role role_of(const char *name)
{
    if (strcmp(name, MANIFEST_NAME) == 0)
        return ROLE_MANIFEST;
    if (numbered(name, "filter-", ".amq"))
        return ROLE_FILTER;
    if (numbered(name, "segment-", ".seg"))
        return ROLE_SEGMENT;
    if (strcmp(name, "." MANIFEST_NAME ".tmp") == 0 || numbered(name, ".filter-", ".amq.tmp"))
        return ROLE_TEMPORARY;
    return ROLE_NONE;
}

static const char *role_name(frontier_role role)
{
    switch (role) {
    case ROLE_MANIFEST:
        return "the manifest";
    case ROLE_FILTER:
        return "the filter";
    case ROLE_SEGMENT:
        return "a spill file";
    case ROLE_TEMPORARY:
        return "a temporary file";
    case ROLE_NONE:
    default:
        return "a file";
    }
}

/* path's directory part ("." for none, "/" for the root) and its last
 * component, as new strings; false when out of memory. */
static bool split(const char *path, char **directory, char **name)
{
    const char *slash = strrchr(path, '/');
    size_t len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    *directory = malloc(len + 1);
    *name = strdup(slash ? slash + 1 : path);
    if (!*directory || !*name) {
        free(*directory);
        free(*name);
        return false;
    }
    memcpy(*directory, slash ? path : ".", len);
    (*directory)[len] = '\0';
    return true;
}

/* The file a save to path changes, as an absolute path without links:
 * realpath for a file that is there; for a dangling link, its target,
 * followed link by link, in its directory made absolute. A new string, or
 * NULL when out of memory. */
static char *resolve(const char *path)
{
    char *name = cli_follow_links(path);
    if (!name)
        return NULL;
    char *real = realpath(name, NULL);
    if (real) {
        free(name);
        return real;
    }
    /* Not there: the save would create it, in its directory. */
    char *directory, *base;
    if (!split(name, &directory, &base))
        return name;
    real = realpath(directory, NULL);
    char *joined = real ? malloc(strlen(real) + 1 + strlen(base) + 1) : NULL;
    if (joined) {
        free(name);
        strcpy(joined, real);
        if (strcmp(real, "/") != 0)
            strcat(joined, "/");
        strcat(joined, base);
        name = joined;
    }
    free(real);
    free(directory);
    free(base);
    return name;
}

/* Whether directory holds a frontier's manifest: 1, 0, or -1 when that
 * cannot be told (errno set). */
static int holds_manifest(const char *directory)
{
    size_t len = strlen(directory) + 1 + sizeof MANIFEST_NAME;
    char *manifest = malloc(len);
    if (!manifest)
        return -1;
    snprintf(manifest, len, "%s/%s", directory, MANIFEST_NAME);
    struct stat st;
    int answer = stat(manifest, &st) == 0 ? 1 : errno == ENOENT || errno == ENOTDIR ? 0 : -1;
    int saved = errno;
    free(manifest);
    errno = saved;
    return answer;
}

/* A frontier's file found: what it is and where. */
typedef struct frontier_file {
    frontier_role role;
    char *directory; /* the frontier's */
    char *name;      /* the file's name there */
    bool hard_link;  /* path is another name of that file */
} frontier_file;

/* Whether the file at directory/name (name: not a frontier's) is the same
 * file as one of the frontier's in directory; found->name set to its name. */
static bool same_as_frontier_file(const char *directory, const char *name, frontier_file *found)
{
    DIR *d = opendir(directory);
    if (!d)
        return false;
    int fd = dirfd(d);
    struct stat st;
    bool same = false;
    if (fd >= 0 && fstatat(fd, name, &st, 0) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
        struct dirent *entry;
        while (!same && (entry = readdir(d)) != NULL) {
            frontier_role role = role_of(entry->d_name);
            struct stat other;
            if (role == ROLE_NONE || fstatat(fd, entry->d_name, &other, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            if (other.st_dev == st.st_dev && other.st_ino == st.st_ino) {
                same = true;
                found->role = role;
                found->name = strdup(entry->d_name);
            }
        }
    }
    closedir(d);
    return same;
}

/* Look for path as a frontier's file by its own directory and name. 1
 * found (found filled in), 0 not, -1 when it cannot be told (printed). */
static int find(const char *command, const char *path, const char *shown, frontier_file *found)
{
    char *directory, *name;
    if (!split(path, &directory, &name)) {
        cli_error("%s: out of memory", command);
        return -1;
    }
    int manifest = holds_manifest(directory);
    if (manifest < 0) {
        cli_error("%s: cannot tell whether %s is a file of a crawl frontier (%s/%s: %s), so it is "
                  "left alone",
                  command, shown, directory, MANIFEST_NAME, strerror(errno));
        free(directory);
        free(name);
        return -1;
    }
    frontier_role role = manifest ? role_of(name) : ROLE_NONE;
    if (role == ROLE_FILTER) {
        /* The library's word on its own filter names. */
        char unused[PATH_MAX + 2];
        if (strlen(path) + 2 <= sizeof unused &&
            amq_frontier_is_filter(unused, sizeof unused, path, NULL) == 0)
            role = ROLE_NONE;
    }
    if (role != ROLE_NONE) {
        found->role = role;
        found->directory = directory;
        found->name = name;
        found->hard_link = false;
        return 1;
    }
    if (manifest && same_as_frontier_file(directory, name, found)) {
        found->directory = directory;
        found->hard_link = true;
        free(name);
        return 1;
    }
    free(directory);
    free(name);
    return 0;
}

bool cli_refuse_frontier_file(const char *command, const char *path, bool updating)
{
    frontier_file found = { .role = ROLE_NONE };
    /* The name as given first, so the message names the directory as the
     * user does; then the file it leads to. */
    int status = find(command, path, path, &found);
    char *resolved = NULL;
    if (status == 0) {
        resolved = resolve(path);
        if (!resolved) {
            cli_error("%s: out of memory", command);
            return true;
        }
        status = strcmp(resolved, path) == 0 ? 0 : find(command, resolved, path, &found);
    }
    if (status < 0) {
        free(resolved);
        return true;
    }
    if (status == 0) {
        free(resolved);
        return false;
    }
    char via[PATH_MAX + 64] = "";
    if (found.hard_link)
        snprintf(via, sizeof via, " (the same file as %s/%s)", found.directory,
                 found.name ? found.name : "one of its files");
    else if (resolved)
        snprintf(via, sizeof via, " (it leads to %s)", resolved);
    if (found.role == ROLE_FILTER)
        cli_error("%s: %s%s is the filter of the crawl frontier in %s: it changes only through "
                  "that frontier (amq_frontier_push), which would refuse to open after a change "
                  "made here; %s",
                  command, path, via, found.directory,
                  updating ? "query it with amq query" : "save to another file");
    else
        cli_error("%s: %s%s is %s of the crawl frontier in %s: only that frontier writes it, and "
                  "a change made here would lose the frontier's checkpoint; save to another file",
                  command, path, via, role_name(found.role), found.directory);
    free(found.directory);
    free(found.name);
    free(resolved);
    return true;
}
