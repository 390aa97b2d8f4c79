/*
 * cli_decompress.c - the bytes of one input, decompressed on the fly when
 * it is gzip or zstd.
 *
 * Key lists are often kept compressed (logs rotated to .gz, data sets as
 * .zst). Piping them through zcat works, but the messages then name
 * standard input instead of the file, so the tool reads the two common
 * formats itself. They are told by their magic bytes, not by the file's
 * name: a name can be wrong and standard input has none.
 *
 *   gzip  1f 8b        (RFC 1952) members may follow one another, as
 *                      `cat a.gz b.gz` makes them; each is decoded in turn,
 *                      as gzip -d does.
 *   zstd  28 b5 2f fd  (RFC 8878) frames may follow one another, with
 *                      skippable frames between; libzstd's stream decoder
 *                      takes them in turn.
 *
 * Anything else is plain bytes, returned as read. To tell the format, only
 * as many bytes are read as can still begin a magic number, so a plain line
 * typed at a terminal is not held back waiting for more.
 *
 * Decoding runs into the caller's buffer, reading one chunk of compressed
 * bytes at a time: memory is the decoder's state and that chunk, whatever
 * the sizes. Compressed data that ends inside a member or frame, or that the
 * decoder refuses, is an error: a damaged file must not quietly give fewer
 * keys.
 */
#include "cli_decompress.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define RAW_CHUNK ((size_t)64 << 10)

static const unsigned char gzip_magic[] = { 0x1f, 0x8b };
static const unsigned char zstd_magic[] = { 0x28, 0xb5, 0x2f, 0xfd };

/* Set s->error and return -1. is_data: damaged data, not a failed read. */
static int fail(cli_stream *s, bool is_data, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(cli_stream *s, bool is_data, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(s->error, sizeof s->error, format, args);
    va_end(args);
    s->error_is_data = is_data;
    return -1;
}

static long read_fd(cli_stream *s, void *buf, size_t cap)
{
    ssize_t got;
    do
        got = read(s->fd, buf, cap);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return fail(s, false, "%s", strerror(errno));
    s->raw_bytes += (uint64_t)got;
    return (long)got;
}

/* Whether the bytes read so far agree with magic (as far as both go). */
static bool agrees(const cli_stream *s, const unsigned char *magic, size_t magic_len)
{
    return memcmp(s->head, magic, s->head_len < magic_len ? s->head_len : magic_len) == 0;
}

int cli_stream_open(cli_stream *s, int fd)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    for (;;) {
        bool gzip = agrees(s, gzip_magic, sizeof gzip_magic);
        bool zstd = agrees(s, zstd_magic, sizeof zstd_magic);
        if (gzip && s->head_len >= sizeof gzip_magic) {
            s->kind = CLI_STREAM_GZIP;
            break;
        }
        if (zstd && s->head_len >= sizeof zstd_magic) {
            s->kind = CLI_STREAM_ZSTD;
            break;
        }
        if (!gzip && !zstd)
            break;
        long got = read_fd(s, s->head + s->head_len, sizeof s->head - s->head_len);
        if (got < 0)
            return -1;
        if (got == 0) {
            s->raw_eof = true;
            break;
        }
        s->head_len += (size_t)got;
    }
    if (s->kind == CLI_STREAM_PLAIN)
        return 0;

    s->raw = malloc(RAW_CHUNK);
    if (!s->raw)
        return fail(s, false, "%s", "out of memory");
    memcpy(s->raw, s->head, s->head_len);
    s->raw_end = s->head_len;
    s->head_len = 0;
    if (s->kind == CLI_STREAM_GZIP) {
        z_stream *z = calloc(1, sizeof *z);
        /* 15 + 16: the largest window, and a gzip header and trailer. */
        if (!z || inflateInit2(z, 15 + 16) != Z_OK) {
            free(z);
            return fail(s, false, "%s", "out of memory");
        }
        s->codec = z;
    } else {
        ZSTD_DStream *d = ZSTD_createDStream();
        if (!d || ZSTD_isError(ZSTD_initDStream(d))) {
            ZSTD_freeDStream(d);
            return fail(s, false, "%s", "out of memory");
        }
        s->codec = d;
    }
    return 0;
}

/* Decode what raw holds into buf; *produced: the bytes written. */
static int decode_gzip(cli_stream *s, void *buf, size_t cap, size_t *produced)
{
    z_stream *z = s->codec;
    if (s->member_done) {
        /* More bytes after a member: the next member (or damage, which the
         * header check reports). */
        if (inflateReset(z) != Z_OK)
            return fail(s, false, "%s", "cannot restart the gzip decoder");
        s->member_done = false;
    }
    z->next_in = s->raw + s->raw_pos;
    z->avail_in = (uInt)(s->raw_end - s->raw_pos);
    z->next_out = buf;
    z->avail_out = cap > UINT_MAX ? UINT_MAX : (uInt)cap;
    int status = inflate(z, Z_NO_FLUSH);
    *produced = (size_t)(z->next_out - (Bytef *)buf);
    s->raw_pos = (size_t)(z->next_in - s->raw);
    if (status == Z_STREAM_END)
        s->member_done = true;
    else if (status == Z_MEM_ERROR)
        return fail(s, false, "%s", "out of memory");
    else if (status != Z_OK && status != Z_BUF_ERROR) /* Z_BUF_ERROR: needs more input */
        return fail(s, true, "damaged gzip data (%s)", z->msg ? z->msg : "bad stream");
    return 0;
}

static int decode_zstd(cli_stream *s, void *buf, size_t cap, size_t *produced)
{
    ZSTD_inBuffer input = { s->raw, s->raw_end, s->raw_pos };
    ZSTD_outBuffer output = { buf, cap, 0 };
    size_t status = ZSTD_decompressStream(s->codec, &output, &input);
    *produced = output.pos;
    s->raw_pos = input.pos;
    /* A frame made with zstd --long=N over 27 needs a window past the
     * decoder's default limit (128 MiB), which is kept: that is not damage,
     * and the message says what to do. */
    if (ZSTD_isError(status) &&
        ZSTD_getErrorCode(status) == ZSTD_error_frameParameter_windowTooLarge)
        return fail(s, false, "%s",
                    "the zstd data needs a window over 128 MiB (zstd --long): decompress it "
                    "with zstd -d --long=31 first");
    if (ZSTD_isError(status))
        return fail(s, true, "damaged zstd data (%s)", ZSTD_getErrorName(status));
    /* 0: a frame is complete and all of it returned; a next one may follow. */
    s->member_done = status == 0;
    return 0;
}

long cli_stream_read(cli_stream *s, void *buf, size_t cap)
{
    if (s->kind == CLI_STREAM_PLAIN) {
        if (s->head_pos < s->head_len) {
            size_t n = s->head_len - s->head_pos < cap ? s->head_len - s->head_pos : cap;
            memcpy(buf, s->head + s->head_pos, n);
            s->head_pos += n;
            return (long)n;
        }
        if (s->raw_eof)
            return 0;
        long got = read_fd(s, buf, cap);
        s->raw_eof = got == 0;
        return got;
    }
    while (!s->finished) {
        if (s->raw_pos == s->raw_end && !s->raw_eof) {
            long got = read_fd(s, s->raw, RAW_CHUNK);
            if (got < 0)
                return -1;
            s->raw_pos = 0;
            s->raw_end = (size_t)got;
            s->raw_eof = got == 0;
        }
        bool no_input = s->raw_pos == s->raw_end; /* and none to come */
        if (no_input && s->member_done) {
            s->finished = true;
            break;
        }
        size_t produced = 0;
        int status = s->kind == CLI_STREAM_GZIP ? decode_gzip(s, buf, cap, &produced)
                                                : decode_zstd(s, buf, cap, &produced);
        if (status < 0)
            return -1;
        if (produced > 0)
            return (long)produced;
        if (no_input && !s->member_done)
            return fail(s, true, "the %s data ends early (a truncated file?)",
                        cli_stream_format(s));
    }
    return 0;
}

void cli_stream_close(cli_stream *s)
{
    if (s->codec && s->kind == CLI_STREAM_GZIP) {
        inflateEnd(s->codec);
        free(s->codec);
    } else if (s->codec) {
        ZSTD_freeDStream(s->codec);
    }
    free(s->raw);
    s->codec = NULL;
    s->raw = NULL;
}

const char *cli_stream_format(const cli_stream *s)
{
    return s->kind == CLI_STREAM_GZIP ? "gzip" : s->kind == CLI_STREAM_ZSTD ? "zstd" : NULL;
}
