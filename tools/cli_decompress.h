/*
 * cli_decompress.h - the bytes of one input file, decompressed when they
 * are gzip or zstd (see cli_decompress.c). Used by the line reader
 * (cli_input.c), and by cli_util.c to name the format of a compressed
 * filter file it cannot load.
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

/* The longest magic number looked for (xz's, refused). */
#define CLI_STREAM_HEAD 6

typedef struct cli_stream {
    int fd;
    cli_stream_kind kind;
    unsigned char head[CLI_STREAM_HEAD]; /* the bytes read to tell the format, not yet returned */
    size_t head_len, head_pos;
    unsigned char *raw; /* compressed bytes read and not yet decoded */
    size_t raw_pos, raw_end;
    bool raw_eof;       /* fd is at its end */
    bool member_done;   /* gzip: a member ended; zstd: a frame ended and is flushed */
    bool padding;       /* gzip: in the zero bytes after the last member */
    bool finished;      /* every byte has been returned */
    void *codec;        /* the gzip or zstd decoder, for a compressed stream */
    uint64_t raw_bytes; /* bytes read from fd, for the progress bar */
    char error[256];    /* why the last call failed */
} cli_stream;

/* Start reading fd: reads the first bytes (as few as tell the format) and
 * sets up the decoder. Returns 0, or -1 with s->error set (a failed read,
 * or a compressed format amq does not decode). */
int cli_stream_open(cli_stream *s, int fd);

/* Up to cap bytes of the content into buf: returns how many (at least 1),
 * 0 at the end, -1 with s->error set. */
long cli_stream_read(cli_stream *s, void *buf, size_t cap);

/* Free the decoder (the fd is the caller's to close). */
void cli_stream_close(cli_stream *s);

/* The compressed format whose magic number head (len bytes) begins with
 * ("gzip", "zstd", or one amq refuses, such as "xz"), or NULL. */
const char *cli_compressed_name(const unsigned char *head, size_t len);

/* "gzip", "zstd", or NULL for plain bytes. */
const char *cli_stream_format(const cli_stream *s);

#endif /* AMQ_CLI_DECOMPRESS_H */
