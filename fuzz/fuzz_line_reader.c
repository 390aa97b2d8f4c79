/*
 * fuzz_line_reader.c - the amq tool's line reader (tools/cli_input.c, with
 * tools/cli_decompress.c and tools/cli_progress.c built in by
 * fuzz/CMakeLists.txt) on arbitrary input files.
 *
 * Input:
 *
 *     byte 0      options: bit 0 --hex; bit 1 --binary; bits 2-4 --field N
 *                 (0: none); bit 5 --delimiter (byte 1); bit 6 hfb IDs
 *                 (with --hex, each key 32 hex digits); bit 7 two inputs
 *     byte 1      the delimiter
 *     byte 2      the longest line: 0 the tool's (CLI_MAX_LINE), else that
 *                 many times 4 bytes, so that too long a line is reached
 *     byte 3      with two inputs, where the first ends: this share (of
 *                 256) of the content
 *     the rest    the content: one input file, or two
 *
 * The options go through cli_input_option as the tool's own --field and
 * --delimiter values (one it refuses ends the run), and the input files are
 * read to their end or to the first error, as the tool reads them. Nothing
 * may crash or draw a sanitizer report, and every key and line must lie
 * within the reader's buffer. When the inputs are plain (not gzip or zstd,
 * which the reader decodes), each line must also be the content's next
 * bytes with their line end, "\n" or "\r\n"; its key the line's field N
 * (fields split at the delimiter, empty past the last), decoded from hex
 * with --hex; and when every line was read, the lines printed by
 * cli_input_print_line must be the inputs themselves, with a newline only
 * between an input's unended last line and the next input's first.
 *
 * The stubs below stand in for tools/cli_util.c's messages (formatted, and
 * dropped) and its terminal test, so the run stays quiet. A decoded input
 * is read for at most MAX_LINES lines or MAX_DECODED bytes, so that a
 * small compressed input that expands to gigabytes ends fast.
 *
 * A violation aborts with a message on stderr, so libFuzzer keeps the input.
 */
#include "cli.h"
#include "cli_decompress.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINES   (1 << 16)
#define MAX_DECODED ((size_t)16 << 20)

/* ---- stand-ins for tools/cli_util.c ------------------------------------ */

void cli_error(const char *format, ...)
{
    char message[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
}

int cli_usage_error(const char *command, const char *format, ...)
{
    char message[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    (void)command;
    return CLI_EXIT_ERROR;
}

bool cli_stderr_is_tty(void)
{
    return false;
}

/* ---- the checks ------------------------------------------------------------- */

static _Noreturn void fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

static _Noreturn void fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("fuzz_line_reader: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}

/* An input file with the given bytes, already unlinked: its path is
 * /proc/self/fd/N, which the reader opens as any file. */
static int make_input(char *path, size_t cap, const uint8_t *bytes, size_t len)
{
    const char *dir = getenv("TMPDIR");
    char name[4096];
    snprintf(name, sizeof name, "%s/fuzz_line_reader.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(name);
    if (fd < 0)
        fail("cannot make a temporary file in %s", dir && *dir ? dir : "/tmp");
    unlink(name);
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, bytes + done, len - done);
        if (n <= 0)
            fail("cannot write a temporary file");
        done += (size_t)n;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

/* Whether the reader decodes the input (gzip; a zstd frame or skippable
 * frame) rather than returning its bytes. */
static bool compressed(const uint8_t *p, size_t len)
{
    return (len >= 2 && p[0] == 0x1f && p[1] == 0x8b) ||
           (len >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) ||
           (len >= 4 && (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18);
}

static bool within(const void *p, size_t len, const void *start, size_t size)
{
    const char *c = p, *s = start;
    return c >= s && len <= size && (size_t)(c - s) <= size - len;
}

static int hex_value(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The key a plain line gives: field (0: the whole line), then hex. */
static void expect_key(const cli_input *in, const uint8_t *line, size_t line_len, const void *key,
                       size_t key_len)
{
    const uint8_t *text = line, *end = line + line_len;
    size_t text_len = line_len;
    if (in->options.field) {
        const uint8_t *p = line;
        for (size_t i = 1; i < in->options.field && p; i++) {
            p = memchr(p, in->options.delimiter, (size_t)(end - p));
            if (p)
                p++;
        }
        if (!p) {
            text = end;
            text_len = 0;
        } else {
            const uint8_t *next = memchr(p, in->options.delimiter, (size_t)(end - p));
            text = p;
            text_len = (size_t)((next ? next : end) - p);
        }
    }
    if (!in->options.hex) {
        if (key != (const void *)text || key_len != text_len)
            fail("line %llu: a key of %zu bytes at offset %td, not the field of %zu at %td",
                 (unsigned long long)in->line_number, key_len,
                 (const uint8_t *)key - (const uint8_t *)in->line, text_len, text - line);
        return;
    }
    if (key_len != text_len / 2 || (text_len & 1) || (in->ids && text_len != 32))
        fail("line %llu: a hex key of %zu bytes from %zu digits",
             (unsigned long long)in->line_number, key_len, text_len);
    for (size_t i = 0; i < key_len; i++) {
        int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0 || ((const uint8_t *)key)[i] != (uint8_t)(hi << 4 | lo))
            fail("line %llu: hex key byte %zu is wrong", (unsigned long long)in->line_number, i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    unsigned flags = data[0];
    const uint8_t *content = data + 4;
    size_t content_len = size - 4;
    size_t first_len = content_len;
    int input_count = 1;
    if (flags & 0x80) {
        input_count = 2;
        first_len = content_len * data[3] / 256;
    }
    const uint8_t *parts[2] = { content, content + first_len };
    size_t part_lens[2] = { first_len, content_len - first_len };

    cli_input_options options = { 0 };
    if ((flags & 1) && cli_input_option(&options, "fuzz", CLI_OPT_HEX, NULL) != 1)
        fail("--hex is refused");
    if ((flags & 2) && cli_input_option(&options, "fuzz", CLI_OPT_BINARY, NULL) != 1)
        fail("--binary is refused");
    if ((flags >> 2) & 7) {
        char field[8];
        snprintf(field, sizeof field, "%u", (flags >> 2) & 7);
        if (cli_input_option(&options, "fuzz", CLI_OPT_FIELD, field) != 1)
            fail("--field %s is refused", field);
    }
    if (flags & 0x20) {
        char delimiter[2] = { (char)data[1], 0 };
        if (cli_input_option(&options, "fuzz", CLI_OPT_DELIMITER, delimiter) != 1)
            return 0; /* "", "\n" */
    }

    char path_text[2][64];
    char *paths[2] = { path_text[0], path_text[1] };
    int fds[2] = { -1, -1 };
    bool plain = true;
    for (int i = 0; i < input_count; i++) {
        fds[i] = make_input(path_text[i], sizeof path_text[i], parts[i], part_lens[i]);
        plain = plain && !compressed(parts[i], part_lens[i]);
    }

    cli_input in;
    if (cli_input_open(&in, paths, input_count, "fuzz", &options) == 0) {
        in.ids = (flags & 0x40) != 0;
        if (data[2])
            in.max_line = (size_t)data[2] * 4;
        char *printed = NULL;
        size_t printed_len = 0;
        FILE *out = open_memstream(&printed, &printed_len);
        if (!out)
            fail("open_memstream fails");
        int index = -1; /* the input the last line came from */
        size_t at = 0;  /* in it, the offset after that line */
        size_t lines = 0, decoded = 0;
        int status;
        const void *key;
        size_t key_len;
        while ((status = cli_input_next(&in, &key, &key_len)) == 1) {
            lines++;
            decoded += in.line_len + in.ending_len;
            if (!within(in.line, in.line_len + in.ending_len, in.buffer, in.end))
                fail("line %llu lies outside the buffer", (unsigned long long)in.line_number);
            if (in.options.hex ? key != in.decoded || key_len > in.decoded_capacity
                               : !within(key, key_len, in.line, in.line_len))
                fail("line %llu: its key lies outside the line",
                     (unsigned long long)in.line_number);
            if (in.ending_len == 1   ? in.line[in.line_len] != '\n'
                : in.ending_len == 2 ? memcmp(in.line + in.line_len, "\r\n", 2) != 0
                                     : in.ending_len != 0)
                fail("line %llu: a line end of %zu bytes that is not one",
                     (unsigned long long)in.line_number, in.ending_len);
            if (cli_input_print_line(&in, out) != 0)
                fail("cli_input_print_line fails");
            if (plain) {
                if (in.index != index) {
                    if (in.index < index || in.index >= input_count)
                        fail("line %llu: from input %d after input %d",
                             (unsigned long long)in.line_number, in.index, index);
                    index = in.index;
                    at = 0;
                }
                size_t n = in.line_len + in.ending_len;
                if (n > part_lens[index] - at || memcmp(in.line, parts[index] + at, n) != 0)
                    fail("input %d, line %llu: %zu bytes that are not the input's at %zu", index,
                         (unsigned long long)in.line_number, n, at);
                if (in.ending_len == 0 && at + n != part_lens[index])
                    fail("input %d, line %llu: no line end before the input's end", index,
                         (unsigned long long)in.line_number);
                at += n;
                expect_key(&in, (const uint8_t *)in.line, in.line_len, key, key_len);
            }
            if (lines >= MAX_LINES || decoded >= MAX_DECODED)
                break;
        }
        if (status < -1 || status > 1)
            fail("cli_input_next answers %d", status);
        if (fclose(out) != 0)
            fail("the printed lines cannot be kept");
        if (status == 0 && plain) {
            /* What was printed is the inputs, a newline between an unended
             * input and the next line. */
            size_t p = 0;
            bool unended = false;
            for (int i = 0; i < input_count; i++) {
                if (part_lens[i] == 0)
                    continue;
                if (unended) {
                    if (p >= printed_len || printed[p] != '\n')
                        fail("no newline after input %d's unended last line", i - 1);
                    p++;
                }
                if (part_lens[i] > printed_len - p || memcmp(printed + p, parts[i], part_lens[i]))
                    fail("input %d is not printed as it is", i);
                p += part_lens[i];
                unended = parts[i][part_lens[i] - 1] != '\n';
            }
            if (p != printed_len)
                fail("%zu bytes printed past the inputs", printed_len - p);
        }
        free(printed);
        cli_input_close(&in);
    }
    for (int i = 0; i < input_count; i++)
        close(fds[i]);
    return 0;
}
