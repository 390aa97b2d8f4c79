/*
 * filter.h - what the generic handle (filter.c) offers the applications
 * built on it (bundle, frontier) and the tests: a filter's saved
 * description, a filter from a validated container, and the family table.
 * Families never include this header: they stand below the handle and
 * reach it only through family.h.
 */
#ifndef AMQ_FILTER_H
#define AMQ_FILTER_H

#include "core/family.h"
#include "core/format.h"

/* For the ids of containers that are not filters (a bundle, a frontier's
 * manifest): what such a file is and how to open it, e.g. "a bundle of
 * filters, not one filter: open it with amq_bundle_open ..."; NULL for any
 * other id (containers.c). */
const char *amq__non_filter_description(uint32_t family);

/* What saving f writes: fills *saved (its pieces are the payload) and *c
 * (family id, hasher, parameter block, which point into *saved). Allocates
 * nothing. Returns AMQ_OK, or what the family's save refuses (AMQ_ERANGE)
 * or AMQ_EINVAL (parameters too long), with a message in diag. */
int amq__filter_describe(amq__saved *saved, amq__container *c, const amq_filter *f, amq_diag *diag);
/* The payload's length: the sum of the pieces'. */
uint64_t amq__saved_payload_len(const amq__saved *saved);

/* amq_save (f and path not NULL), reporting in *checksum, when checksum
 * is not NULL, the checksum the save wrote: the file's trailer, which
 * amq_info's file_checksum gives for the filter loaded from it. Returns as
 * amq_save. */
int amq__filter_save(uint64_t *checksum, const amq_filter *f, const char *path, amq_diag *diag);

/* amq_load (out and path not NULL) of a file that must hold a filter of
 * family: a container of any other family, a bundle's or a frontier's
 * manifest included, is refused with AMQ_ECORRUPT ("it holds family N, not
 * a <name> filter") before any family's load reads it. family NULL: any
 * filter, as amq_load. The filter's file checksum is the file's trailer. */
int amq__filter_load(amq_filter **out, const char *path, unsigned flags, const amq__family *family,
                     amq_diag *diag);

/* The filter a validated container describes (c's family decides which
 * load runs; `where` names the source in messages). *image is the memory
 * c points into: the filter keeps it when the family borrows from it, else
 * it is closed - either way the caller no longer owns it. The filter's
 * file checksum is 0. Returns AMQ_OK, AMQ_EUNSUPPORTED (a family this
 * build does not have, or a bundle), or the family's load error. */
int amq__filter_from_container(amq_filter **out, const amq__container *c, amq__file_image *image,
                               const char *where, amq_diag *diag);

/* Every family this build has, NULL-terminated (for the spec parser's
 * tests and fuzz targets). */
const amq__family *const *amq__family_table(void);

/* A handle around a family's state, which amq_free then destroys. On
 * failure (AMQ_ENOMEM) the state is left to the caller. */
int amq__filter_wrap(amq_filter **out, const amq__family *family, void *state);

/* f's state when f is of family, else NULL (also for f NULL). */
void *amq__filter_state(amq_filter *f, const amq__family *family);

#endif /* AMQ_FILTER_H */
