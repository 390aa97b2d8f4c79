/*
 * cli_input.c - reads keys, one per line, from the INPUT arguments of a
 * subcommand ('-' or no argument: standard input).
 *
 * Lines are split on '\n'; a '\r' before it is dropped, so files written on
 * Windows give the same keys. A line longer than the limit (default 1 MiB)
 * is an error naming the file and line, found without buffering the line:
 * a 10 GB line costs 1 MiB of memory. With --hex, each line is decoded from
 * hexadecimal first; the keys of an hfb filter of raw IDs must each be
 * exactly 32 hex digits (16 bytes). Every key and every read is counted
 * for the progress bar (cli_progress.c), which knows the size of the whole
 * input when every INPUT is a regular file.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLI_READ_CHUNK (1 << 20)

/* The bytes left to read in all the inputs, or 0 when one of them is not a
 * regular file (a pipe, a terminal) and the total cannot be known. Inputs
 * that cannot be opened are left to open_next to report. */
static uint64_t input_size(char **paths, int path_count)
{
    uint64_t total = 0;
    for (int i = 0; i < (path_count > 0 ? path_count : 1); i++) {
        const char *path = path_count > 0 ? paths[i] : "-";
        struct stat st;
        bool is_stdin = strcmp(path, "-") == 0;
        if ((is_stdin ? fstat(STDIN_FILENO, &st) : stat(path, &st)) != 0 || !S_ISREG(st.st_mode))
            return 0;
        off_t offset = is_stdin ? lseek(STDIN_FILENO, 0, SEEK_CUR) : 0;
        if (offset >= 0 && offset < st.st_size)
            total += (uint64_t)(st.st_size - offset);
    }
    return total;
}

int cli_input_open(cli_input *in, char **paths, int path_count, const char *command, bool hex)
{
    memset(in, 0, sizeof *in);
    in->paths = paths;
    in->path_count = path_count;
    in->index = -1;
    in->fd = -1;
    in->command = command;
    in->hex = hex;
    in->max_line = CLI_MAX_LINE;
    in->capacity = CLI_READ_CHUNK + in->max_line + 1;
    in->buffer = malloc(in->capacity);
    in->decoded = hex ? malloc(in->max_line / 2 + 1) : NULL;
    if (!in->buffer || (hex && !in->decoded)) {
        free(in->buffer);
        free(in->decoded);
        in->buffer = NULL;
        in->decoded = NULL;
        cli_error("%s: out of memory", command);
        return -1;
    }
    cli_progress_start(&in->progress, command, input_size(paths, path_count));
    return 0;
}

/* Open the next input; 1 opened, 0 no more, -1 error. */
static int open_next(cli_input *in)
{
    if (in->fd > STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
    in->index++;
    int count = in->path_count > 0 ? in->path_count : 1;
    if (in->index >= count)
        return 0;
    const char *path = in->path_count > 0 ? in->paths[in->index] : "-";
    in->line_number = 0;
    in->start = in->end = 0;
    in->at_eof = false;
    if (strcmp(path, "-") == 0) {
        in->name = "(standard input)";
        in->fd = STDIN_FILENO;
        return 1;
    }
    in->name = path;
    in->fd = open(path, O_RDONLY);
    if (in->fd < 0) {
        cli_error("%s: %s: %s", in->command, path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        cli_error("%s: %s: is a directory", in->command, path);
        return -1;
    }
    return 1;
}

/* Refill the buffer, keeping the unread tail. Returns bytes added, 0 at EOF,
 * -1 on error. */
static long refill(cli_input *in)
{
    if (in->start > 0) {
        memmove(in->buffer, in->buffer + in->start, in->end - in->start);
        in->end -= in->start;
        in->start = 0;
    }
    size_t room = in->capacity - 1 - in->end;
    if (room == 0)
        return 0;
    ssize_t got;
    do
        got = read(in->fd, in->buffer + in->end, room > CLI_READ_CHUNK ? CLI_READ_CHUNK : room);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        cli_error("%s: %s: %s", in->command, in->name, strerror(errno));
        return -1;
    }
    in->end += (size_t)got;
    cli_progress_bytes(&in->progress, (uint64_t)got);
    return (long)got;
}

int cli_input_next(cli_input *in, const void **key, size_t *len)
{
    for (;;) {
        if (in->fd < 0) {
            int opened = open_next(in);
            if (opened <= 0)
                return opened;
        }
        char *start = in->buffer + in->start;
        size_t available = in->end - in->start;
        char *newline = memchr(start, '\n', available);
        size_t line_len;
        if (newline) {
            line_len = (size_t)(newline - start);
        } else if (available > in->max_line) {
            line_len = available;
        } else if (!in->at_eof) {
            long got = refill(in);
            if (got < 0)
                return -1;
            in->at_eof = got == 0;
            continue;
        } else if (available > 0) {
            line_len = available; /* a last line without a newline */
        } else {
            if (in->fd > STDIN_FILENO)
                close(in->fd);
            in->fd = -1;
            continue;
        }
        if (line_len > in->max_line) {
            cli_error("%s: %s:%llu: line is longer than %zu bytes", in->command, in->name,
                      (unsigned long long)in->line_number + 1, in->max_line);
            return -1;
        }
        in->line_number++;
        in->start += line_len + (newline != NULL);
        if (line_len > 0 && start[line_len - 1] == '\r')
            line_len--;
        in->line = start;
        in->line_len = line_len;
        if (in->hex) {
            amq_diag diag;
            bool bad_id = in->ids && line_len != 32;
            if (bad_id || amq_parse_hex(in->decoded, start, line_len, &diag) != AMQ_OK) {
                if (in->ids)
                    cli_error("%s: %s:%llu: an hfb ID is 32 hex digits", in->command, in->name,
                              (unsigned long long)in->line_number);
                else
                    cli_error("%s: %s:%llu: not a hex key: %s", in->command, in->name,
                              (unsigned long long)in->line_number, diag.message);
                return -1;
            }
            *key = in->decoded;
            *len = line_len / 2;
        } else {
            *key = start;
            *len = line_len;
        }
        cli_progress_key(&in->progress);
        return 1;
    }
}

void cli_input_close(cli_input *in)
{
    if (in->fd > STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
    cli_progress_end(&in->progress);
    free(in->buffer);
    free(in->decoded);
    in->buffer = NULL;
    in->decoded = NULL;
}

bool cli_type_takes_ids(const char *type, const char *hash)
{
    return strcmp(type, "hfb") == 0 && !(hash && strcmp(hash, "md5") == 0);
}

bool cli_filter_takes_ids(const amq_filter *filter)
{
    amq_info info;
    amq_info_get(filter, &info);
    return strcmp(info.family, "hfb") == 0 && info.hasher.kind != AMQ_HASH_MD5;
}
