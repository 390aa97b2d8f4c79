/*
 * value.h - what a Redis key of amq's data type holds: one amq filter (a
 * generic handle owning the typed object) and the few figures RedisBloom's
 * commands report that a filter does not keep itself.
 *
 * Every key is of one data type, "amqfilter"; its kind says which command
 * family may use it: BF.* a Bloom kind, CF.* the cuckoo kind, AMQ.* any.
 */
#ifndef AMQ_REDIS_VALUE_H
#define AMQ_REDIS_VALUE_H

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "rm_api.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum value_kind {
    VALUE_BLOOM = 1,   /* BF.*: a scalable Bloom filter, or a classic one when NONSCALING */
    VALUE_CUCKOO = 2,  /* CF.*: a cuckoo filter */
    VALUE_STATIC = 3,  /* AMQ.BUILD: fuse8, fuse16, gcs, hfb; or any filter AMQ.RESTORE took */
    VALUE_LOADING = 4, /* a load in progress (load.h): no filter yet */
} value_kind;

/* The largest expansion BF.* and CF.* take (RedisBloom's). */
#define VALUE_MAX_EXPANSION 32768

struct value_load;

typedef struct value {
    value_kind kind;
    amq_filter *filter;      /* NULL while loading */
    struct value_load *load; /* VALUE_LOADING: the image so far; else NULL */
    /* What RedisBloom reports beside the filter. */
    uint64_t capacity;       /* as reserved (BF: the first link's; CF: the first table's) */
    double error_rate;       /* BF: as reserved */
    uint32_t expansion;      /* BF, CF: as reserved (0: does not grow) */
    uint32_t bucket_size;    /* CF */
    uint32_t max_iterations; /* CF */
    uint64_t items;          /* BF: adds that were new (BF.CARD); CF: items inserted */
    uint64_t deletes;        /* CF: items deleted */
} value;

/* The module's data type, registered by value_register_type. */
extern RedisModuleType *value_type;

/* Register the data type (in OnLoad). REDISMODULE_OK or _ERR. */
int value_register_type(RedisModuleCtx *ctx);

/* A value around filter, which it takes over, its kind and figures read
 * off the filter (a scalable or classic Bloom filter is of the Bloom kind,
 * a cuckoo filter of the cuckoo kind, any other static); NULL when out of
 * memory (filter is then freed). Values come from the module's allocator
 * (memory.h). */
value *value_new(amq_filter *filter);
/* Free a value, its filter or its load; NULL is fine. Any thread. */
void value_free(value *v);

/* The value's filter as a scalable Bloom, classic Bloom or cuckoo filter;
 * NULL when it is another family. */
amq_scalable_bloom *value_scalable(value *v);
amq_bloom *value_classic(value *v);
amq_cuckoo *value_cuckoo(value *v);

/*
 * The value's image is a 64-byte header of the figures above
 * (little-endian, the last 8 bytes a checksum of the first 56), then the
 * filter in amq's file format: what the RDB, SCANDUMP and the AOF rewrite
 * hold, so the figures survive with the filter.
 */

/* The bytes of a value image's header. */
#define VALUE_IMAGE_HEADER_BYTES 64

/* The header of v's image alone: the figures and their checksum (what
 * value_image puts before the filter's file). */
void value_image_header(uint8_t header[VALUE_IMAGE_HEADER_BYTES], const value *v);

/* Whether bytes begin as a value image does. */
bool value_is_image(const void *bytes, size_t len);

/*
 * A value from an image, or from a bare filter file (amq's file format, as
 * `amq build` writes and AMQ.DUMP returns), whose kind and figures are
 * derived from the filter. An image's figures must be what the commands
 * report for its filter: each count at most 2^63 - 1, an error rate in
 * [0, 1), a Bloom filter's capacity, expansion, rate and (scalable) count
 * its own, a cuckoo filter's bucket size its own. The same checks hold for
 * every way in (RDB, RESTORE, MIGRATE, LOADCHUNK, AMQ.RESTORE).
 * Returns AMQ_OK with the value in *out; else *out is NULL, the status is
 * AMQ_ENOMEM or the library's refusal (AMQ_ECORRUPT, ...), and *diag says
 * what was wrong.
 */
int value_from_bytes(value **out, const void *bytes, size_t len, amq_diag *diag);

#endif /* AMQ_REDIS_VALUE_H */
