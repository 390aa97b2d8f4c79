/*
 * family.h - what a filter family provides so the generic handle
 * (amq_filter, src/filter/filter.c) can reach it: its name and file id, the options
 * its spec takes, and its operations behind function pointers.
 *
 * Each family defines one `const amq__family amq__<name>_family` and is
 * listed in filter.c's table. Operations a family cannot do are NULL and the
 * generic call answers AMQ_EUNSUPPORTED (for build: a dynamic family is
 * built by create + add of every key).
 */
#ifndef AMQ_FAMILY_H
#define AMQ_FAMILY_H

#include "amq/amq.h"
#include "core/format.h"
#include "core/spec.h"

#include <stdbool.h>

/* The most pieces a family's payload may be saved in. */
#define AMQ__MAX_PIECES 256

/* What a family hands over to be saved: about 12 KiB, which a save keeps
 * on its caller's stack. A family allocates nothing for it: a piece not in
 * memory as it is saved is produced while it is written (format.h), so
 * that a save makes no allocation at all. */
typedef struct amq__saved {
    amq_hasher hasher;
    amq__params_writer params;
    amq__piece pieces[AMQ__MAX_PIECES];
    size_t piece_count;
} amq__saved;

typedef struct amq__family {
    const char *name;                  /* the spec's and the CLI's type name */
    uint32_t id;                       /* enum amq__family_id, stored in files */
    const amq__option *const *options; /* NULL-terminated */
    /* Whether a filter can take keys past its capacity (AMQ_CAN_GROW). */
    bool grows;

    /* An empty filter from a spec (dynamic families; NULL for static ones). */
    int (*create)(void **state, const amq__spec *spec, amq_diag *diag);
    /* A filter from all its keys (NULL: create, then add each key). */
    int (*build)(void **state, const amq__spec *spec, const void *const *keys, const size_t *lens,
                 size_t count, amq_diag *diag);
    int (*add)(void *state, const void *key, size_t len);
    /* Add unless maybe present: 1 added, 0 maybe present (nothing
     * changed), or an error; one hash per key. Every dynamic family has
     * it. */
    int (*add_unique)(void *state, const void *key, size_t len);
    int (*remove)(void *state, const void *key, size_t len);
    /* Add keys in order, as add (add_many) or add_unique (add_unique_many)
     * of each in turn, through the family's batch path: results[i] becomes
     * that call's answer for keys[i]. Returns how many keys it handled; it
     * stops after a key whose add fails and may stop sooner (a cuckoo
     * filter that fills), and the generic call goes on from there. NULL:
     * the generic call adds key by key. */
    size_t (*add_many)(void *state, const void *const *keys, const size_t *lens, size_t count,
                       int *results);
    size_t (*add_unique_many)(void *state, const void *const *keys, const size_t *lens,
                              size_t count, int *results);
    int (*contains)(const void *state, const void *key, size_t len);
    /* The answers of contains for count keys into results (1 maybe, 0 no),
     * by the family's batch path; AMQ_OK or the first error. NULL: the
     * generic call asks contains for each key. */
    int (*contains_many)(const void *state, const void *const *keys, const size_t *lens,
                         size_t count, uint8_t *results);
    /* Union into state of other (same family); AMQ_EINCOMPATIBLE if the
     * parameters differ. */
    int (*merge)(void *state, const void *other, amq_diag *diag);
    /* Describe the filter for saving; *out is zeroed by the caller. Never
     * allocates; fails only for a filter too large for the format. */
    int (*save)(const void *state, amq__saved *out);
    /* Rebuild a filter from a validated container. A static family (no
     * create) may keep pointers into c->payload and then sets
     * *borrows_image: the caller keeps the file image alive as long as the
     * filter. A dynamic family builds its own arrays and never borrows. */
    int (*load)(void **state, const amq__container *c, bool *borrows_image, amq_diag *diag);
    void (*info)(const void *state, amq_info *out);
    /* The filter's bare data in a named format, in a plain block
     * (core/alloc.h), for amq_export; NULL: the family exports nothing.
     * AMQ_EUNSUPPORTED with a message for a format it does not have. */
    int (*export_as)(const void *state, const char *format, uint8_t **out, size_t *len,
                     amq_diag *diag);
    void (*destroy)(void *state);
} amq__family;

/* For a family's info: append a family-specific figure, a number or a
 * word, to out->details (names as in amq_info_detail; past
 * AMQ_INFO_MAX_DETAILS entries are dropped). */
void amq__info_number(amq_info *out, const char *name, double value);
void amq__info_text(amq_info *out, const char *name, const char *text);

/* The families, each defined in its own file and listed in filter.c. */
extern const amq__family amq__bloom_family;
extern const amq__family amq__blocked_bloom_family;
extern const amq__family amq__counting_bloom_family;
extern const amq__family amq__scalable_bloom_family;
extern const amq__family amq__cuckoo_family;
extern const amq__family amq__gcs_family;
extern const amq__family amq__hfb_family;
extern const amq__family amq__fuse8_family;
extern const amq__family amq__fuse16_family;

#endif /* AMQ_FAMILY_H */
