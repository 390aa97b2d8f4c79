/*
 * scan.c - one file searched and printed in grep's format (scan.h). The
 * file is read whole into one buffer for the matcher, up to its end as it is
 * when read: a mapping would be cheaper for untouched pages, but a file
 * another process truncates during the search would then kill this one with
 * SIGBUS, and source trees change under their searchers.
 */
#include "scan.h"

#include "codesearch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The newlines in text[from, to). */
static unsigned long long newlines(const uint8_t *text, size_t from, size_t to)
{
    unsigned long long n = 0;
    const uint8_t *p = text + from, *end = text + to;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

static long long search_bytes(matcher *m, const char *path, const uint8_t *text, size_t len,
                              const scan_options *o, FILE *out)
{
    long long matches = 0;
    unsigned long long line_number = 1;
    size_t counted_to = 0, from = 0, start, end;
    bool error = false;
    while (matcher_next_line(m, text, len, from, &start, &end, &error)) {
        matches++;
        if (o->files_only)
            break;
        if (!o->count) {
            fputs(path, out);
            if (o->line_numbers) {
                line_number += newlines(text, counted_to, start);
                counted_to = start;
                fprintf(out, ":%llu", line_number);
            }
            fputc(':', out);
            fwrite(text + start, 1, end - start, out);
            fputc('\n', out);
        }
        from = end + 1;
    }
    if (error) {
        codesearch_error("%s: the regular expression engine failed (out of memory?)", path);
        return -1;
    }
    if (o->files_only && matches)
        fprintf(out, "%s\n", path);
    if (o->count)
        fprintf(out, "%s:%lld\n", path, matches);
    return matches;
}

long long scan_file(matcher *m, const char *path, const scan_options *o, FILE *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        codesearch_error("%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    errno = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        codesearch_error("%s: %s", path, errno ? strerror(errno) : "no longer a regular file");
        close(fd);
        return -1;
    }
    size_t capacity = (size_t)st.st_size + 1, len = 0;
    char *bytes = malloc(capacity);
    for (;;) {
        if (!bytes) {
            codesearch_error("%s: out of memory reading %zu bytes", path, capacity);
            close(fd);
            return -1;
        }
        ssize_t got = read(fd, bytes + len, capacity - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            codesearch_error("%s: %s", path, strerror(errno));
            free(bytes);
            close(fd);
            return -1;
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if (len == capacity) {
            /* The file grew since fstat: read on to its new end. */
            char *larger = capacity <= SIZE_MAX / 2 ? realloc(bytes, 2 * capacity) : NULL;
            if (!larger)
                free(bytes);
            bytes = larger;
            capacity *= 2;
        }
    }
    close(fd);
    long long matches = search_bytes(m, path, (const uint8_t *)bytes, len, o, out);
    free(bytes);
    return matches;
}
