/*
 * cli_decompress.h - the bytes of one input file, decompressed when they
 * are gzip or zstd (see cli_decompress.c). Used by the line reader
 * (cli_input.c) only.
 */
#ifndef AMQ_CLI_DECOMPRESS_H
#define AMQ_CLI_DECOMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cli_stream_kind {
    CLI_STREAM_PLAIN,
    CLI_STREAM_GZIP,
    CLI_STREAM_ZSTD,
} cli_stream_kind;

typedef struct cli_stream {
    int fd;
    cli_stream_kind kind;
    unsigned char head[4]; /* the bytes read to tell the format, not yet returned */
    size_t head_len, head_pos;
    unsigned char *raw; /* compressed bytes read and not yet decoded */
    size_t raw_pos, raw_end;
    bool raw_eof;       /* fd is at its end */
    bool member_done;   /* gzip: a member ended; zstd: a frame ended and is flushed */
    bool finished;      /* every byte has been returned */
    void *codec;        /* z_stream or ZSTD_DStream, for a compressed stream */
    uint64_t raw_bytes; /* bytes read from fd, for the progress bar */
    char error[160];    /* why the last call failed */
    bool error_is_data; /* the error is damaged data, not a failed read */
} cli_stream;

/* Start reading fd: reads the first bytes (as few as tell the format) and
 * sets up the decoder. Returns 0, or -1 with s->error set. */
int cli_stream_open(cli_stream *s, int fd);

/* Up to cap bytes of the content into buf: returns how many (at least 1),
 * 0 at the end, -1 with s->error set. */
long cli_stream_read(cli_stream *s, void *buf, size_t cap);

/* Free the decoder (the fd is the caller's to close). */
void cli_stream_close(cli_stream *s);

/* "gzip", "zstd", or NULL for plain bytes. */
const char *cli_stream_format(const cli_stream *s);

#endif /* AMQ_CLI_DECOMPRESS_H */
