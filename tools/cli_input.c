/*
 * cli_input.c - reads keys, one per line, from the INPUT arguments of a
 * subcommand ('-' or no argument: standard input), and the options that say
 * how (--hex, --binary, --field, --delimiter), shared by every command that
 * reads keys so they mean the same everywhere.
 *
 * A line ends at "\n" or "\r\n", and the key is the line without that end:
 * a file written on Windows gives the same keys as one written on Unix. The
 * end is kept all the same: query and dedup print a line with
 * cli_input_print_line, exactly as it was read, so what they print is the
 * input's own bytes. A last line with no end is printed without one, unless
 * another line follows it (from the next input), which a newline then
 * separates from it.
 *
 * A line may be up to CLI_MAX_LINE (64 MiB) long. The buffer starts at one
 * read chunk and grows only as far as the longest line needs, so memory
 * follows the lines, not the file. A longer line is refused, naming the
 * file, the line and the limit, as soon as the limit is passed and before
 * any of it is used: a 10 GB line costs 64 MiB, not 10 GB. The search for a
 * line's end goes on from where the last one stopped, so a long line is
 * scanned once, not once per read.
 *
 * The bytes of an input come through cli_decompress.c, which decodes gzip
 * and zstd on the fly. An input whose first 64 KiB (of its content, after
 * decompression) hold a NUL byte, or mostly bytes that are not text, is
 * probably not a list of keys (an executable, a compressed format amq does
 * not read, UTF-16), and is refused, saying why and that --binary reads it:
 * a filter built from bytes the user did not mean answers no for every key
 * the user did mean. --binary says keys are any bytes; with --hex the
 * decoding checks each line instead. A regular file's first 64 KiB are
 * read and judged before any of its lines is returned, so a refused file
 * gives no key at all; a pipe or terminal is judged as its bytes come (a
 * line typed is answered at once), so lines before the byte that decides
 * may already have been taken.
 *
 * --field N takes the key from the Nth field of the line, fields being
 * separated by one byte (--delimiter, a tab by default); a line of fewer
 * fields has an empty key, as awk's $N is empty. With --hex the key (the
 * field) is decoded from hexadecimal; the keys of an hfb filter of raw IDs
 * must each be exactly 32 hex digits (16 bytes). Every key and every byte
 * read (compressed bytes, for a compressed input) is counted for the
 * progress bar (cli_progress.c), which knows the size of the whole input
 * when every INPUT is a regular file.
 */
#include "cli.h"
#include "cli_decompress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The buffer's first size, and how far past the line limit it may grow. */
#define READ_CHUNK ((size_t)64 << 10)
/* How much of each input is looked at to tell text from binary. */
#define SNIFF_BYTES ((uint64_t)64 << 10)

const struct option cli_input_long_options[CLI_INPUT_LONG_OPTIONS] = {
    { "hex", no_argument, NULL, CLI_OPT_HEX },
    { "binary", no_argument, NULL, CLI_OPT_BINARY },
    { "field", required_argument, NULL, CLI_OPT_FIELD },
    { "delimiter", required_argument, NULL, CLI_OPT_DELIMITER },
    { NULL, 0, NULL, 0 },
};

int cli_input_option(cli_input_options *o, const char *command, int c, const char *value)
{
    switch (c) {
    case CLI_OPT_HEX:
        o->hex = true;
        return 1;
    case CLI_OPT_BINARY:
        o->binary = true;
        return 1;
    case CLI_OPT_FIELD: {
        /* A line of CLI_MAX_LINE bytes has at most CLI_MAX_LINE + 1 fields. */
        size_t field = 0;
        const char *p = value;
        for (; *p >= '0' && *p <= '9' && field <= CLI_MAX_LINE + 1; p++)
            field = field * 10 + (size_t)(*p - '0');
        if (p == value || *p || field == 0 || field > CLI_MAX_LINE + 1) {
            cli_usage_error(command, "--field takes a field number, from 1: '%s'", value);
            return -1;
        }
        o->field = field;
        return 1;
    }
    case CLI_OPT_DELIMITER:
        if (strcmp(value, "\\t") == 0) {
            o->delimiter = '\t';
        } else if (value[0] && !value[1] && value[0] != '\n') {
            o->delimiter = value[0];
        } else {
            cli_usage_error(command, "--delimiter takes one byte (or \\t for a tab): '%s'", value);
            return -1;
        }
        return 1;
    default:
        return 0;
    }
}

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

int cli_input_open(cli_input *in, char **paths, int path_count, const char *command,
                   const cli_input_options *options)
{
    memset(in, 0, sizeof *in);
    in->paths = paths;
    in->path_count = path_count;
    in->index = -1;
    in->fd = -1;
    in->command = command;
    in->options = *options;
    if (in->options.delimiter && !in->options.field) {
        cli_usage_error(command, "--delimiter separates the fields --field N picks from: give "
                                 "--field too");
        return -1;
    }
    if (!in->options.delimiter)
        in->options.delimiter = '\t';
    in->max_line = CLI_MAX_LINE;
    in->capacity = READ_CHUNK;
    in->buffer = malloc(in->capacity);
    in->stream = calloc(1, sizeof *in->stream);
    if (!in->buffer || !in->stream) {
        free(in->buffer);
        free(in->stream);
        in->buffer = NULL;
        in->stream = NULL;
        cli_error("%s: out of memory", command);
        return -1;
    }
    cli_progress_start(&in->progress, command, input_size(paths, path_count));
    return 0;
}

/* Give the progress bar the bytes the stream has read from its file since
 * last time. */
static void count_read(cli_input *in)
{
    cli_progress_bytes(&in->progress, in->stream->raw_bytes - in->raw_counted);
    in->raw_counted = in->stream->raw_bytes;
}

/* The error of a failed stream call. Damaged data is placed by its byte
 * offset in the file, which the message holds: the lines of a regular file
 * are counted only as they are returned, after the bytes are read. */
static void stream_error(const cli_input *in)
{
    cli_error("%s: %s: %s", in->command, in->name, in->stream->error);
}

/* Refuse the input: it looks binary, for the reason in->binary_why.
 * Returns -1. */
static int refuse_binary(const cli_input *in)
{
    const char *format = cli_stream_format(in->stream);
    char where[96] = "";
    if (in->binary_nul)
        snprintf(where, sizeof where, " at byte offset %llu", (unsigned long long)in->binary_at);
    cli_error("%s: %s: not read: it looks binary (%s%s in the first 64 KiB%s%s), not like lines "
              "of text; if its lines are keys of any bytes, give --binary",
              in->command, in->name, in->binary_why, where, format ? " decompressed from " : "",
              format ? format : "");
    return -1;
}

/* Decide on what was sniffed: more than 30% of bytes that are not text.
 * Random bytes are over half; text in any ASCII-based encoding, far under. */
static void judge_sniffed(cli_input *in)
{
    if (!in->sniff_done && in->odd * 10 > in->sniffed * 3)
        in->binary_why = "mostly bytes that are not text";
    in->sniff_done = true;
}

/* Look at the first SNIFF_BYTES of an input as they are read. Text is
 * printable ASCII, the usual control characters (tab, line ends, form feed,
 * backspace, escape) and UTF-8 sequences (well enough formed: lead byte and
 * continuation bytes); anything else counts against it, and a NUL byte,
 * never in text, decides at once. Sets in->binary_why when it is binary. */
static void sniff(cli_input *in, const unsigned char *p, size_t n)
{
    if (in->sniff_done)
        return;
    if (n > SNIFF_BYTES - in->sniffed)
        n = (size_t)(SNIFF_BYTES - in->sniffed);
    for (size_t i = 0; i < n; i++) {
        unsigned char b = p[i];
        if (in->utf8_needed) {
            if ((b & 0xc0) == 0x80) {
                in->utf8_needed--;
                continue;
            }
            in->utf8_needed = 0;
            in->odd++; /* a sequence cut short */
        }
        if (b == 0) {
            in->binary_why = "a NUL byte";
            in->binary_nul = true;
            in->binary_at = in->sniffed + i;
            in->sniff_done = true;
            return;
        }
        if (b < 0x20)
            in->odd += !(b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v' ||
                         b == '\b' || b == 0x1b);
        else if (b == 0x7f)
            in->odd++;
        else if (b >= 0xc2 && b <= 0xf4)
            in->utf8_needed = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : 1;
        else if (b >= 0x80)
            in->odd++;
    }
    in->sniffed += n;
    if (in->sniffed == SNIFF_BYTES)
        judge_sniffed(in);
}

static void close_current(cli_input *in)
{
    if (in->stream)
        cli_stream_close(in->stream);
    if (in->fd > STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
}

/* Open the next input; 1 opened, 0 no more, -1 error. */
static int open_next(cli_input *in)
{
    close_current(in);
    in->index++;
    int count = in->path_count > 0 ? in->path_count : 1;
    if (in->index >= count)
        return 0;
    const char *path = in->path_count > 0 ? in->paths[in->index] : "-";
    in->line_number = 0;
    in->start = in->end = in->scanned = 0;
    in->at_eof = false;
    in->sniff_done = in->options.hex || in->options.binary;
    in->sniffed = in->odd = 0;
    in->utf8_needed = 0;
    in->binary_why = NULL;
    in->binary_nul = false;
    in->binary_at = 0;
    if (strcmp(path, "-") == 0) {
        in->name = "(standard input)";
        in->fd = STDIN_FILENO;
    } else {
        in->name = path;
        in->fd = open(path, O_RDONLY);
        if (in->fd < 0) {
            cli_error("%s: %s: %s", in->command, path, strerror(errno));
            return -1;
        }
    }
    struct stat st;
    bool regular = false;
    if (fstat(in->fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            cli_error("%s: %s: is a directory", in->command, in->name);
            return -1;
        }
        regular = S_ISREG(st.st_mode);
    }
    /* A regular file's reads wait on no writer: its sniffed bytes are all
     * read, and judged, before its first line is returned. */
    in->sniff_whole = !in->sniff_done && regular;
    in->raw_counted = 0;
    int status = cli_stream_open(in->stream, in->fd);
    count_read(in);
    if (status < 0) {
        stream_error(in);
        return -1;
    }
    return 1;
}

/* Read more of the current input into the buffer, after the unread tail,
 * which is moved to the front first. When the tail fills the buffer (a line
 * longer than it), the buffer doubles, up to the line limit and a chunk:
 * enough to hold the longest line and see that one more is too long.
 * Returns the bytes added, 0 at the end, -1 after printing an error. */
static long refill(cli_input *in)
{
    if (in->start > 0) {
        memmove(in->buffer, in->buffer + in->start, in->end - in->start);
        in->end -= in->start;
        in->start = 0;
    }
    if (in->end == in->capacity) {
        size_t limit = in->max_line + READ_CHUNK;
        size_t capacity = in->capacity < limit / 2 ? in->capacity * 2 : limit;
        char *grown = realloc(in->buffer, capacity);
        if (!grown) {
            cli_error("%s: %s:%llu: out of memory for a line of over %zu bytes", in->command,
                      in->name, (unsigned long long)in->line_number + 1, in->end);
            return -1;
        }
        in->buffer = grown;
        in->capacity = capacity;
    }
    long added = 0;
    for (;;) {
        long got = cli_stream_read(in->stream, in->buffer + in->end, in->capacity - in->end);
        count_read(in);
        if (got < 0) {
            stream_error(in);
            return -1;
        }
        sniff(in, (const unsigned char *)in->buffer + in->end, (size_t)got);
        in->end += (size_t)got;
        added += got;
        if (got == 0 && !in->sniff_done)
            judge_sniffed(in); /* the input is shorter than the sniffed bytes */
        if (in->binary_why)
            return refuse_binary(in);
        /* The end comes back as 0 from the next call too. */
        if (!in->sniff_whole || in->sniff_done || got == 0 || in->end == in->capacity)
            return added;
    }
}

/* The key of a line: with --field, its Nth field (empty if it has fewer). */
static void pick_field(const cli_input *in, const char *line, size_t len, const char **key,
                       size_t *key_len)
{
    const char *p = line, *end = line + len;
    for (size_t i = 1; i < in->options.field; i++) {
        const char *next = memchr(p, in->options.delimiter, (size_t)(end - p));
        if (!next) {
            *key = end;
            *key_len = 0;
            return;
        }
        p = next + 1;
    }
    const char *next = memchr(p, in->options.delimiter, (size_t)(end - p));
    *key = p;
    *key_len = (size_t)((next ? next : end) - p);
}

/* Decode a --hex key into in->decoded, grown to fit. */
static int decode_hex(cli_input *in, const char *text, size_t len)
{
    bool bad_id = in->ids && len != 32;
    size_t need = len / 2 + 1;
    if (need > in->decoded_capacity) {
        size_t capacity = in->decoded_capacity ? in->decoded_capacity : 64;
        while (capacity < need)
            capacity *= 2;
        uint8_t *grown = realloc(in->decoded, capacity);
        if (!grown) {
            cli_error("%s: %s:%llu: out of memory", in->command, in->name,
                      (unsigned long long)in->line_number);
            return -1;
        }
        in->decoded = grown;
        in->decoded_capacity = capacity;
    }
    amq_diag diag;
    if (bad_id || amq_parse_hex(in->decoded, text, len, &diag) != AMQ_OK) {
        if (in->ids)
            cli_error("%s: %s:%llu: an hfb ID is 32 hex digits", in->command, in->name,
                      (unsigned long long)in->line_number);
        else
            cli_error("%s: %s:%llu: not a hex key: %s", in->command, in->name,
                      (unsigned long long)in->line_number, diag.message);
        return -1;
    }
    return 0;
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
        char *newline = in->scanned < available
                            ? memchr(start + in->scanned, '\n', available - in->scanned)
                            : NULL;
        size_t line_len, ending_len;
        if (newline) {
            line_len = (size_t)(newline - start);
            ending_len = 1;
            if (line_len > 0 && start[line_len - 1] == '\r') {
                line_len--;
                ending_len = 2;
            }
        } else {
            in->scanned = available;
            if (available > in->max_line + 1) {
                /* No line end in the first max_line + 2 bytes: even with
                 * "\r\n" next, the line is too long. */
                line_len = available;
                ending_len = 0;
            } else if (!in->at_eof) {
                long got = refill(in);
                if (got < 0)
                    return -1;
                in->at_eof = got == 0;
                continue;
            } else if (available > 0) {
                line_len = available; /* a last line without a line end */
                ending_len = 0;
            } else {
                close_current(in);
                continue;
            }
        }
        if (line_len > in->max_line) {
            cli_error("%s: %s: line %llu is longer than %zu MiB, the longest line amq reads",
                      in->command, in->name, (unsigned long long)in->line_number + 1,
                      in->max_line >> 20);
            return -1;
        }
        in->line_number++;
        in->start += line_len + ending_len;
        in->scanned = 0;
        in->line = start;
        in->line_len = line_len;
        in->ending_len = ending_len;
        const char *text = start;
        size_t text_len = line_len;
        if (in->options.field)
            pick_field(in, start, line_len, &text, &text_len);
        if (in->options.hex) {
            if (decode_hex(in, text, text_len) < 0)
                return -1;
            *key = in->decoded;
            *len = text_len / 2;
        } else {
            *key = text;
            *len = text_len;
        }
        cli_progress_key(&in->progress);
        return 1;
    }
}

int cli_input_print_text(cli_input *in, FILE *out, const char *line, size_t len, size_t ending_len)
{
    if (in->unended_printed && putc('\n', out) == EOF)
        return -1;
    in->unended_printed = ending_len == 0;
    return fwrite(line, 1, len, out) == len ? 0 : -1;
}

int cli_input_print_line(cli_input *in, FILE *out)
{
    return cli_input_print_text(in, out, in->line, in->line_len + in->ending_len, in->ending_len);
}

void cli_input_close(cli_input *in)
{
    close_current(in);
    cli_progress_end(&in->progress);
    free(in->buffer);
    free(in->decoded);
    free(in->stream);
    in->buffer = NULL;
    in->decoded = NULL;
    in->stream = NULL;
}

/* Whether the family's keys are IDs unless hashed with MD5 (AMQ_TAKES_IDS). */
static bool family_takes_ids(const char *family)
{
    int capabilities = amq_family_capabilities(family);
    return capabilities >= 0 && (capabilities & AMQ_TAKES_IDS);
}

bool cli_type_takes_ids(const char *type, const char *hash)
{
    return family_takes_ids(type) && !(hash && strcmp(hash, "md5") == 0);
}

bool cli_filter_takes_ids(const amq_filter *filter)
{
    amq_info info;
    amq_info_get(&info, filter);
    return family_takes_ids(info.family) && info.hasher.kind != AMQ_HASH_MD5;
}
