/*
 * load.h - a load in progress: a value image (value.h) received chunk by
 * chunk (BF.LOADCHUNK, CF.LOADCHUNK, AMQ.LOADCHUNK), kept in the key
 * itself from its first chunk.
 *
 * A load is a value of kind VALUE_LOADING, stored in the keyspace like a
 * filter, so everything the server does with keys carries it: the RDB
 * saves it, the AOF rewrite emits it, a replica's full resync sends it,
 * DEL, FLUSHALL, FLUSHDB, expiry and an overwrite free it, and MEMORY
 * USAGE and maxmemory count it. A chunk that answered OK is therefore
 * never lost, whatever the server saved or rewrote between two chunks:
 * the chunks after it find the load where they left it. Filter commands
 * answer WRONGTYPE on a key that holds a load, until its last chunk turns
 * it into the filter.
 *
 * What a load claims: its first chunk begins with the headers that give
 * the image's length; the load never holds more, and the lengths all
 * loads claim are counted (load_claimed), so that a client's first chunk
 * is refused when it would take them past amq.load-max-bytes, or the one
 * image past amq.filter-max-bytes or the server past maxmemory
 * (memory.h). The bytes themselves are taken as the chunks come.
 *
 * In the RDB a load is a first string of LOAD_HEADER_BYTES (the magic
 * "AMQRLOD1", the kind its image declares, the length it claims, the
 * bytes it holds), then those bytes in strings of at most CHUNK_BYTES,
 * then an empty string; a filter's first string is the 64-byte image
 * header, so rdb_load tells them apart by the first string. In the AOF a
 * load is the AMQ.LOADCHUNK commands that rebuild it.
 */
#ifndef AMQ_REDIS_LOAD_H
#define AMQ_REDIS_LOAD_H

#include "chunks.h"
#include "rm_api.h"
#include "value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes of a load's first RDB string. */
#define LOAD_HEADER_BYTES 32

/* The most bytes of one AMQ.LOADCHUNK the AOF rewrite emits. */
#define LOAD_AOF_PIECE_BYTES ((size_t)1 << 20)

typedef struct value_load {
    value_kind kind; /* what the image's header says it holds; 0 for a bare filter file */
    uint8_t *image;  /* the bytes received, from the module's allocator */
    size_t len;      /* how many */
    size_t room;     /* how many image has room for */
    size_t total;    /* the image's length, from its headers */
} value_load;

/*
 * The length of the image whose first bytes are bytes[0..len): a value
 * image (value_is_image) or a bare filter file, whose headers say how
 * long they are; *kind receives the kind a value image declares (0 for a
 * bare file). 0 when they are not an image's headers.
 */
size_t load_image_length(const void *bytes, size_t len, value_kind *kind);

/*
 * A new load from its first chunk data[0..len), of an image of total bytes
 * whose header declares kind (load_image_length's answers, total > 0):
 * CHUNK_OK with the value in *out, CHUNK_LIMIT (a client's load past
 * amq.load-max-bytes, the reason in *diag), or CHUNK_NO_MEMORY
 * (memory_reply_refused says why). The caller checks the chunk's length
 * against the image's first.
 */
chunk_status load_start(value **out, const void *data, size_t len, size_t total, value_kind kind,
                        amq_diag *diag);

/* Append data[0..len) to the load (which has room: len <= total - len). */
chunk_status load_append(value_load *load, const void *data, size_t len);

/*
 * The complete image of a load as a filter's value in *out: CHUNK_DONE,
 * CHUNK_NO_MEMORY, or CHUNK_BAD_IMAGE with the reason in *diag. The load
 * is unchanged (the caller replaces the key's value, which frees it).
 */
chunk_status load_finish(value **out, const value_load *load, amq_diag *diag);

/* Free a load's bytes and give back its claim. Any thread. */
void load_free(value_load *load);

/* What all loads in progress claim together, in bytes. */
uint64_t load_claimed(void);

/* The server's callbacks for a value that holds a load (value.c). */
void load_rdb_save(RedisModuleIO *rdb, const value_load *load);
/* After the first string, of LOAD_HEADER_BYTES: NULL when damaged. */
value *load_rdb_load(RedisModuleIO *rdb, const char *header, size_t header_len);
void load_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, const value_load *load);

/* Emit AMQ.LOADCHUNK key (1 + offset) bytes[0..len) into the AOF. */
void load_emit_chunk(RedisModuleIO *aof, RedisModuleString *key, uint64_t offset, const void *bytes,
                     size_t len);

#endif /* AMQ_REDIS_LOAD_H */
