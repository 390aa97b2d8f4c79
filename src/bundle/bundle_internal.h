/*
 * bundle_internal.h - opening a bundle from memory already checked by the
 * container layer (for amq_bundle_open and the bundle fuzz target).
 */
#ifndef AMQ_BUNDLE_INTERNAL_H
#define AMQ_BUNDLE_INTERNAL_H

#include "amq/bundle.h"
#include "core/format.h"

/* The bundle a container describes: c's parameters and payload point into
 * *image, which the bundle takes over (closed on failure too). `where`
 * names the source in messages. Every record is checked (see bundle.c).
 * Returns AMQ_OK, AMQ_EFORMAT (c holds a filter, not a bundle),
 * AMQ_ECORRUPT, AMQ_ENOMEM. */
int amq__bundle_from_container(amq_bundle **out, const amq__container *c, amq__file_image *image,
                               const char *where, amq_diag *diag);

#endif /* AMQ_BUNDLE_INTERNAL_H */
