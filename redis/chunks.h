/*
 * chunks.h - a value's image (value.h) in chunks: what BF.SCANDUMP and
 * CF.SCANDUMP hand out, and what BF.LOADCHUNK, CF.LOADCHUNK and
 * AMQ.LOADCHUNK take back. The chunks, their iterators, the checks and the
 * commands' bodies are the same for all; each passes the value kind its
 * keys hold, its error strings and the few ways its replies and keys
 * differ (chunk_scandump_spec, chunk_loadchunk_spec).
 *
 * The chunks: the image (a 64-byte header of the value's figures, then the
 * filter in amq's file format) cut into consecutive pieces of CHUNK_BYTES,
 * the last one shorter: chunk k is the bytes [k * CHUNK_BYTES, (k + 1) *
 * CHUNK_BYTES) of the image. The first chunk holds both headers (an image
 * is longer than 128 bytes); an image of up to 16 MiB is one chunk.
 *
 * The iterators: a chunk's iterator is 1 + its offset in the image.
 * SCANDUMP iterator 0 answers the first chunk (iterator 1); SCANDUMP it
 * answers the chunk after the one that holds offset it - 1, so passing back
 * each chunk's iterator walks the image in order; past the last chunk comes
 * the end. LOADCHUNK takes each chunk with its iterator: 1 starts a load,
 * any other must be 1 + the bytes the key's load holds, and each chunk of
 * BF's and CF's must be exactly as long as SCANDUMP cuts it there
 * (AMQ.LOADCHUNK, which the AOF rewrite emits, takes any length up to
 * CHUNK_BYTES).
 *
 * The loads: a first chunk puts a load in progress into its key (load.h),
 * which each later chunk extends where it stands, and the last turns into
 * the filter. A chunk refused for its offset or length leaves the load as
 * it was, so the right chunk can still follow; an image refused once
 * complete deletes the key.
 */
#ifndef AMQ_REDIS_CHUNKS_H
#define AMQ_REDIS_CHUNKS_H

#include "value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest chunk (RedisBloom's). */
#define CHUNK_BYTES ((uint64_t)16 << 20)

typedef enum chunk_status {
    CHUNK_OK = 0,    /* chunk_read: the chunk; a load: taken, the image is not complete */
    CHUNK_END,       /* chunk_read: no chunk after the iterator's */
    CHUNK_DONE,      /* a load: taken, and the complete image is a value */
    CHUNK_NOT_IMAGE, /* iterator 1, but the chunk does not begin a value image */
    CHUNK_NO_LOAD,   /* an iterator other than 1 that is not where the key's load continues
                      * (or the key has no load; or below 1) */
    CHUNK_LIMIT,     /* a first chunk whose image would pass amq.load-max-bytes */
    CHUNK_TOO_LONG,  /* longer than the chunk SCANDUMP cuts at the iterator */
    CHUNK_TOO_SHORT, /* shorter than it (or empty, where any length is taken) */
    CHUNK_BAD_IMAGE, /* complete, but not a sound value of the kind asked for */
    CHUNK_NO_MEMORY, /* out of memory (chunk_read: or the filter could not be saved) */
} chunk_status;

/* A chunk of an image. */
typedef struct chunk {
    uint64_t iterator; /* 1 + its offset in the image */
    uint8_t *bytes;    /* from memory_alloc: memory_free it */
    size_t len;        /* 1 to CHUNK_BYTES */
} chunk;

/*
 * The chunk SCANDUMP answers to iterator (0: the first; else the one after
 * the chunk that holds offset iterator - 1) of v's image: CHUNK_OK with it
 * in *out, CHUNK_END past the last chunk, or CHUNK_NO_MEMORY (*out then
 * holds no bytes). The chunk is read from the filter through a writer that
 * keeps only the chunk's bytes and stops the save once it has them: no
 * call copies the whole filter.
 */
chunk_status chunk_read(chunk *out, const value *v, uint64_t iterator);

/* ---- the commands ------------------------------------------------------------------ */

/* What BF.SCANDUMP and CF.SCANDUMP answer differently. */
typedef struct chunk_scandump_spec {
    value_kind kind;         /* of the keys read; a value of another kind is WRONGTYPE */
    const char *not_numeric; /* the error for an iterator that is not an integer */
    const char *negative;    /* the error for an iterator below 0 */
    const char *not_saved;   /* the error when chunk_read fails */
    bool end_is_null;        /* the end is [0, nil]; else [0, ""] */
    /* NULL, or whether a filter answers the end at once (CF: an empty one) */
    bool (*ends_at_once)(value *v);
} chunk_scandump_spec;

/*
 * SCANDUMP key iterator: [the chunk's iterator, its bytes] (chunk_read), or
 * [0, nil or ""] past the last chunk. A missing key is "ERR not found", a
 * key of another type or kind WRONGTYPE.
 */
int chunk_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                   const chunk_scandump_spec *spec);

/* What BF.LOADCHUNK, CF.LOADCHUNK and AMQ.LOADCHUNK do and answer
 * differently. */
typedef struct chunk_loadchunk_spec {
    value_kind kind; /* of the value the image must be; 0: any */
    /* Whether each chunk must be as long as SCANDUMP cuts it (else any
     * length from 1 to CHUNK_BYTES, as the AOF rewrite emits) */
    bool exact_cuts;
    const char *command;     /* its name, for the log */
    const char *not_numeric; /* the error for an iterator that is not an integer */
    const char *below_one;   /* the error for an iterator below 1; NULL: no_load */
    /*
     * NULL: the key may be missing, hold a load, or hold a filter of kind
     * (WRONGTYPE otherwise), which the first chunk replaces. Else the
     * error for a first chunk on a key that holds a filter.
     */
    const char *exists;
    /* The error for each refusal. Out of memory is memory_reply_refused's
     * (with no_memory its words for an allocator that had none). */
    const char *not_image, *no_load, *too_long, *too_short, *bad_image, *no_memory;
    /* NULL, or the error for a first chunk (iterator 1) refused for its
     * length, instead of too_long and too_short */
    const char *first_length;
} chunk_loadchunk_spec;

/*
 * LOADCHUNK key iterator data: iterator 1 starts a load in the key (the
 * chunk must begin with a value image's header and amq's file header, or
 * for AMQ.LOADCHUNK a bare file's, whose length fields give the image's
 * length); any other continues the key's load. OK for a chunk taken, and
 * for the last one, whose filter then replaces the load. Every chunk taken
 * is replicated verbatim; an image refused once complete deletes the key,
 * and the deletion is replicated.
 */
int chunk_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                    const chunk_loadchunk_spec *spec);

#endif /* AMQ_REDIS_CHUNKS_H */
