/*
 * chunks.h - a value's image (value.h) in chunks: what BF.SCANDUMP and
 * CF.SCANDUMP hand out, and what BF.LOADCHUNK and CF.LOADCHUNK take back.
 * The chunks, their iterators, the checks and the commands' bodies are the
 * same for both families; each passes the value kind its keys hold, its
 * RedisBloom error strings and the few ways its replies and keys differ
 * (chunk_scandump_spec, chunk_loadchunk_spec).
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
 * any other must be 1 + the bytes the key's load holds, and each chunk must
 * be exactly as long as SCANDUMP cuts it there.
 *
 * The loads in progress: at most CHUNK_MAX_LOADS at a time, each kept by
 * database and key name until its image is complete; a load beyond them
 * drops the one least recently given a chunk. They live in the module's
 * memory only (not in the RDB, the AOF rewrite, or used_memory).
 */
#ifndef AMQ_REDIS_CHUNKS_H
#define AMQ_REDIS_CHUNKS_H

#include "value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest chunk (RedisBloom's). */
#define CHUNK_BYTES ((uint64_t)16 << 20)

/* The most loads in progress at once. */
#define CHUNK_MAX_LOADS 64

typedef enum chunk_status {
    CHUNK_OK = 0,    /* chunk_read: the chunk; chunk_load: taken, the image is not complete */
    CHUNK_END,       /* chunk_read: no chunk after the iterator's */
    CHUNK_DONE,      /* chunk_load: taken, and the complete image is a value */
    CHUNK_NOT_IMAGE, /* iterator 1, but the chunk does not begin a value image */
    CHUNK_NO_LOAD,   /* an iterator other than 1 that is not where the key's load continues
                      * (or the key has no load; or below 1) */
    CHUNK_TOO_LONG,  /* longer than the chunk SCANDUMP cuts at the iterator */
    CHUNK_TOO_SHORT, /* shorter than it */
    CHUNK_BAD_IMAGE, /* complete, but not a sound value of the kind asked for */
    CHUNK_NO_MEMORY, /* out of memory (chunk_read: or the filter could not be saved) */
} chunk_status;

/* A chunk of an image. */
typedef struct chunk {
    uint64_t iterator; /* 1 + its offset in the image */
    uint8_t *bytes;    /* allocated with malloc: free it */
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

/*
 * LOADCHUNK: take the chunk data[0..len) with its iterator into the load of
 * key name in database db. Iterator 1 starts a load (dropping any the key
 * had): the chunk must begin with a value image's header and amq's file
 * header, whose length fields give the image's length. Any other iterator
 * continues the key's load. CHUNK_OK: taken, more to come. CHUNK_DONE: the
 * image is complete, and loaded by value_from_bytes with all its checks
 * into a value of kind, in *out (the caller owns it); the load is gone.
 * Any other status: refused, *out NULL, and the key's load dropped;
 * CHUNK_BAD_IMAGE says why in *diag (not NULL).
 */
chunk_status chunk_load(value **out, int db, const char *name, size_t name_len, long long iterator,
                        const void *data, size_t len, value_kind kind, amq_diag *diag);

/* Drop the load of key name in database db, if it has one. */
void chunk_forget(int db, const char *name, size_t name_len);

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

/* What BF.LOADCHUNK and CF.LOADCHUNK do and answer differently. */
typedef struct chunk_loadchunk_spec {
    value_kind kind;         /* of the value the image must be */
    const char *command;     /* its name, for the log */
    const char *not_numeric; /* the error for an iterator that is not an integer */
    const char *below_one;   /* the error for an iterator below 1; NULL: chunk_load's no_load */
    /*
     * NULL: the key may be missing or hold a value of kind (WRONGTYPE
     * otherwise, before any chunk is taken), which the complete image
     * replaces. Else the error for a key that exists when a load starts
     * (which drops the key's load) or when its image is complete.
     */
    const char *exists;
    /* NULL, or whether a complete value's figures agree with its filter
     * (beyond chunk_load's checks); one whose do not is CHUNK_BAD_IMAGE */
    bool (*figures_agree)(value *v);
    /* The error for each refusal of chunk_load. */
    const char *not_image, *no_load, *too_long, *too_short, *bad_image, *no_memory;
    /* NULL, or the error for a first chunk (iterator 1) refused for its
     * length, instead of too_long and too_short */
    const char *first_length;
} chunk_loadchunk_spec;

/*
 * LOADCHUNK key iterator data: chunk_load into the key's load; OK for a
 * chunk taken, and for the last one, whose value is then stored in the key.
 * Every chunk taken is replicated verbatim. A chunk chunk_load refuses
 * drops the key's load, as does a start on a key spec->exists refuses.
 */
int chunk_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                    const chunk_loadchunk_spec *spec);

#endif /* AMQ_REDIS_CHUNKS_H */
