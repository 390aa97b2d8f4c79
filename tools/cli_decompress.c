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
 *                      `cat a.gz b.gz` and pigz make them; each is decoded
 *                      in turn. After the last, zero bytes up to the end
 *                      (the padding tar and tape tools add) are ignored,
 *                      as gzip -d ignores them; anything else after a
 *                      member must be another member.
 *   zstd  28 b5 2f fd  (RFC 8878) a frame, or
 *         5? 2a 4d 18  a skippable frame (magic 0x184D2A50 to 0x184D2A5F):
 *                      pzstd starts its output with one, and any writer
 *                      may put them before, between and after frames.
 *                      Frames and skippable frames may follow one another
 *                      in any order; libzstd's stream decoder takes them in
 *                      turn, and an empty frame gives no bytes.
 *
 * The formats gzip -d or Debian's zstd -d also read and amq does not
 * (compress, pack, LZH, zip, xz, lz4) are refused by their magic bytes
 * with the command that decompresses them: decoding them as keys would
 * build a filter of bytes nobody meant, whose every real key answers no.
 * Anything else is plain bytes, returned as read. To tell the format, only
 * as many bytes are read as can still begin a magic number, so a plain line
 * typed at a terminal is not held back waiting for more.
 *
 * Decoding runs into the caller's buffer, reading one chunk of compressed
 * bytes at a time: memory is the decoder's state and that chunk, whatever
 * the sizes. A zstd frame may ask for a window of up to 128 MiB (2^27,
 * what zstd -d decodes without --long=N or --memory); a larger one is
 * refused, saying which option of zstd decodes it, rather than letting a
 * small file claim gigabytes. Compressed data that ends inside a member or
 * frame, or that the decoder refuses, is an error naming the byte offset
 * where decoding stopped: a damaged file must not quietly give fewer keys,
 * nor its bytes be taken for keys.
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

/* A magic number the first bytes are compared with. */
typedef struct magic {
    unsigned char bytes[CLI_STREAM_HEAD];
    size_t len;
    unsigned char first_mask; /* the bits of byte 0 compared: a skippable frame's low 4 vary */
    cli_stream_kind kind;     /* CLI_STREAM_PLAIN: a format refused */
    const char *name;         /* a refused format's, and the command that decodes it */
    const char *decoder;
} magic;

static const magic magics[] = {
    { { 0x1f, 0x8b }, 2, 0xff, CLI_STREAM_GZIP, NULL, NULL },
    { { 0x28, 0xb5, 0x2f, 0xfd }, 4, 0xff, CLI_STREAM_ZSTD, NULL, NULL },
    { { 0x50, 0x2a, 0x4d, 0x18 }, 4, 0xf0, CLI_STREAM_ZSTD, NULL, NULL },
    { { 0x1f, 0x9d }, 2, 0xff, CLI_STREAM_PLAIN, "compress (.Z)", "gzip -dc" },
    { { 0x1f, 0x1e }, 2, 0xff, CLI_STREAM_PLAIN, "pack", "gzip -dc" },
    { { 0x1f, 0xa0 }, 2, 0xff, CLI_STREAM_PLAIN, "LZH", "gzip -dc" },
    { { 'P', 'K', 0x03, 0x04 }, 4, 0xff, CLI_STREAM_PLAIN, "zip", "unzip -p" },
    { { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6, 0xff, CLI_STREAM_PLAIN, "xz", "xz -dc" },
    { { 0x04, 0x22, 0x4d, 0x18 }, 4, 0xff, CLI_STREAM_PLAIN, "lz4", "lz4 -dc" },
};

enum { MAGIC_COUNT = sizeof magics / sizeof magics[0] };

/* The gzip decoder, and the header it fills in: whether the header of the
 * member being decoded has been read tells damage inside a member from
 * bytes after the last that begin no member. */
typedef struct gzip_codec {
    z_stream z;
    gz_header header;
    uint64_t member_start; /* the byte offset where the member began */
} gzip_codec;

/* Set s->error and return -1. */
static int fail(cli_stream *s, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int fail(cli_stream *s, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(s->error, sizeof s->error, format, args);
    va_end(args);
    return -1;
}

static long read_fd(cli_stream *s, void *buf, size_t cap)
{
    ssize_t got;
    do
        got = read(s->fd, buf, cap);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return fail(s, "%s", strerror(errno));
    s->raw_bytes += (uint64_t)got;
    return (long)got;
}

/* Where in the file the decoder stands: the bytes read less those not yet
 * given to it. */
static unsigned long long offset_of(const cli_stream *s)
{
    return (unsigned long long)(s->raw_bytes - (s->raw_end - s->raw_pos));
}

/* Whether the bytes read so far agree with m (as far as both go). */
static bool agrees(const cli_stream *s, const magic *m)
{
    size_t n = s->head_len < m->len ? s->head_len : m->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char mask = i == 0 ? m->first_mask : 0xff;
        if ((s->head[i] & mask) != (m->bytes[i] & mask))
            return false;
    }
    return true;
}

/* Read the first bytes until they match a magic number whole, or match
 * none (or the input ends). Returns the magic, or NULL for plain bytes; -1
 * in *status when a read fails. */
static const magic *tell_format(cli_stream *s, int *status)
{
    *status = 0;
    for (;;) {
        bool possible = false;
        for (size_t i = 0; i < MAGIC_COUNT; i++) {
            if (!agrees(s, &magics[i]))
                continue;
            if (s->head_len >= magics[i].len)
                return &magics[i];
            possible = true;
        }
        if (!possible || s->raw_eof)
            return NULL;
        /* No more than the longest magic still possible needs. */
        size_t want = 0;
        for (size_t i = 0; i < MAGIC_COUNT; i++)
            if (agrees(s, &magics[i]) && magics[i].len > want)
                want = magics[i].len;
        long got = read_fd(s, s->head + s->head_len, want - s->head_len);
        if (got < 0) {
            *status = -1;
            return NULL;
        }
        if (got == 0)
            s->raw_eof = true;
        s->head_len += (size_t)got;
    }
}

int cli_stream_open(cli_stream *s, int fd)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    int status;
    const magic *m = tell_format(s, &status);
    if (status < 0)
        return -1;
    if (m && m->kind == CLI_STREAM_PLAIN)
        return fail(s,
                    "%s data (so its first bytes say), which amq does not decompress: give it "
                    "decompressed (%s)",
                    m->name, m->decoder);
    if (!m)
        return 0;
    s->kind = m->kind;

    s->raw = malloc(RAW_CHUNK);
    if (!s->raw)
        return fail(s, "%s", "out of memory");
    memcpy(s->raw, s->head, s->head_len);
    s->raw_end = s->head_len;
    s->head_len = 0;
    if (s->kind == CLI_STREAM_GZIP) {
        gzip_codec *g = calloc(1, sizeof *g);
        /* 15 + 16: the largest window, and a gzip header and trailer. */
        if (!g || inflateInit2(&g->z, 15 + 16) != Z_OK) {
            free(g);
            return fail(s, "%s", "out of memory");
        }
        s->codec = g;
        if (inflateGetHeader(&g->z, &g->header) != Z_OK)
            return fail(s, "%s", "cannot set up the gzip decoder");
    } else {
        /* The decoder's default window limit is zstd -d's: kept. */
        ZSTD_DStream *d = ZSTD_createDStream();
        if (!d || ZSTD_isError(ZSTD_initDStream(d))) {
            ZSTD_freeDStream(d);
            return fail(s, "%s", "out of memory");
        }
        s->codec = d;
    }
    return 0;
}

/* Decode what raw holds into buf; *produced: the bytes written. */
static int decode_gzip(cli_stream *s, void *buf, size_t cap, size_t *produced)
{
    gzip_codec *g = s->codec;
    z_stream *z = &g->z;
    if (s->member_done) {
        /* More bytes after a member, not zero: the next member, or bytes
         * that begin none. */
        if (inflateReset(z) != Z_OK || inflateGetHeader(z, &g->header) != Z_OK)
            return fail(s, "%s", "cannot restart the gzip decoder");
        s->member_done = false;
        g->member_start = offset_of(s);
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
        return fail(s, "%s", "out of memory");
    else if (status == Z_DATA_ERROR && g->header.done != 1 && g->member_start > 0)
        return fail(s,
                    "bytes at byte offset %llu, after the gzip data, that are neither another "
                    "gzip member nor zero padding (gzip -d calls them trailing garbage)",
                    (unsigned long long)g->member_start);
    else if (status != Z_OK && status != Z_BUF_ERROR) /* Z_BUF_ERROR: needs more input */
        return fail(s, "damaged gzip data at byte offset %llu (%s)", offset_of(s),
                    z->msg ? z->msg : "bad stream");
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
     * limit zstd -d keeps by default: not damage, and the message says
     * what decodes it. */
    if (ZSTD_isError(status) &&
        ZSTD_getErrorCode(status) == ZSTD_error_frameParameter_windowTooLarge)
        return fail(s,
                    "the zstd frame at byte offset %llu needs a window over 128 MiB (it was made "
                    "with zstd --long=28 or more), past what zstd -d decodes without --long: "
                    "decompress it with zstd -d --long=31 first",
                    offset_of(s));
    if (ZSTD_isError(status))
        return fail(s, "damaged zstd data at byte offset %llu (%s)", offset_of(s),
                    ZSTD_getErrorName(status));
    /* 0: a frame is complete and all of it returned; a next one may follow. */
    s->member_done = status == 0;
    return 0;
}

/* After the last gzip member: zero bytes, skipped. Returns 0, or -1 at a
 * byte that is not zero. */
static int skip_padding(cli_stream *s)
{
    s->padding = true;
    while (s->raw_pos < s->raw_end && s->raw[s->raw_pos] == 0)
        s->raw_pos++;
    if (s->raw_pos == s->raw_end)
        return 0;
    return fail(s,
                "a byte that is not zero at byte offset %llu, in the zero padding after the gzip "
                "data (gzip -d calls it trailing garbage)",
                offset_of(s));
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
        if (s->kind == CLI_STREAM_GZIP && s->member_done &&
            (s->padding || s->raw[s->raw_pos] == 0)) {
            if (skip_padding(s) < 0)
                return -1;
            continue;
        }
        size_t produced = 0;
        int status = s->kind == CLI_STREAM_GZIP ? decode_gzip(s, buf, cap, &produced)
                                                : decode_zstd(s, buf, cap, &produced);
        if (status < 0)
            return -1;
        if (produced > 0)
            return (long)produced;
        if (no_input && !s->member_done)
            return fail(s, "the %s data ends early, at byte offset %llu (a truncated file?)",
                        cli_stream_format(s), offset_of(s));
    }
    return 0;
}

void cli_stream_close(cli_stream *s)
{
    if (s->codec && s->kind == CLI_STREAM_GZIP) {
        inflateEnd(&((gzip_codec *)s->codec)->z);
        free(s->codec);
    } else if (s->codec) {
        ZSTD_freeDStream(s->codec);
    }
    free(s->raw);
    s->codec = NULL;
    s->raw = NULL;
}

const char *cli_compressed_name(const unsigned char *head, size_t len)
{
    for (size_t i = 0; i < MAGIC_COUNT; i++) {
        const magic *m = &magics[i];
        if (len < m->len || (head[0] & m->first_mask) != (m->bytes[0] & m->first_mask) ||
            memcmp(head + 1, m->bytes + 1, m->len - 1) != 0)
            continue;
        return m->kind == CLI_STREAM_GZIP ? "gzip" : m->kind == CLI_STREAM_ZSTD ? "zstd" : m->name;
    }
    return NULL;
}

const char *cli_stream_format(const cli_stream *s)
{
    return s->kind == CLI_STREAM_GZIP ? "gzip" : s->kind == CLI_STREAM_ZSTD ? "zstd" : NULL;
}
