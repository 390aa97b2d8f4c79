/*
 * struct_size.h - structs that cross the library's boundary with their
 * size, so that they can grow (docs/CONVENTIONS.md, "Growth").
 *
 * A caller-allocated struct that may gain fields leads with a size_t
 * struct_size: the size of the layout the caller was compiled against,
 * which the header's inline _init (or the inline wrapper of an out-call)
 * sets from the caller's own sizeof. The library reads such a struct into
 * its own layout and writes one out to the caller's, so a program built
 * against an older header keeps working with a newer library and the
 * other way round:
 *
 * - a caller's struct shorter than the library's: its fields are read,
 *   and the ones it lacks keep their defaults (fields are only ever
 *   appended, after the end of the previous layout, padding included);
 * - longer (a caller built against a newer header): the fields this
 *   library does not know must still be all zero, their "unset", else the
 *   call is refused rather than silently ignoring what the caller asked;
 * - struct_size 0: the first published layout, so that a struct zeroed
 *   with "= {0}" means what it always meant.
 */
#ifndef AMQ_CORE_STRUCT_SIZE_H
#define AMQ_CORE_STRUCT_SIZE_H

#include "amq/amq.h"

#include <stddef.h>

/* Read a caller's struct (whose first member is its struct_size) into the
 * library's, which holds the defaults on entry: the caller's fields over
 * them, and the library's struct_size set to library_size. first_size is
 * the first published layout's size, which struct_size 0 stands for. what
 * names the struct in a refusal ("amq_cuckoo_params").
 * Returns AMQ_OK; AMQ_EINVAL (a struct_size smaller than its own field);
 * AMQ_EUNSUPPORTED (fields beyond this library's layout are set). */
int amq__struct_read(void *library, size_t library_size, const void *caller, size_t first_size,
                     const char *what, amq_diag *diag);

/* Write the library's struct to a caller's of caller_size bytes: as much
 * of it as the caller's layout holds, and zeros in a longer caller's
 * fields this library does not know; the caller's struct_size becomes
 * caller_size. caller_size is at least sizeof(size_t). */
void amq__struct_write(void *caller, size_t caller_size, const void *library, size_t library_size);

#endif
