/*
 * struct_size.c - reading and writing the structs that carry their size
 * (struct_size.h explains the rule).
 */
#include "core/struct_size.h"
#include "core/util.h"

#include <string.h>

int amq__struct_read(void *library, size_t library_size, const void *caller, size_t first_size,
                     const char *what, amq_diag *diag)
{
    size_t caller_size;
    memcpy(&caller_size, caller, sizeof caller_size);
    if (caller_size == 0)
        caller_size = first_size;
    if (caller_size < sizeof caller_size)
        return amq__fail(diag, AMQ_EINVAL,
                         "%s: struct_size %zu is smaller than the struct_size field itself; set "
                         "it with the struct's _init call",
                         what, caller_size);
    if (caller_size > library_size) {
        const unsigned char *beyond = (const unsigned char *)caller + library_size;
        for (size_t i = 0; i < caller_size - library_size; i++)
            if (beyond[i] != 0)
                return amq__fail(diag, AMQ_EUNSUPPORTED,
                                 "%s: a field at byte %zu is set, which this libamq (whose "
                                 "layout ends at byte %zu) does not have; build against its "
                                 "header or leave that field unset",
                                 what, library_size + i, library_size);
    }
    /* The defaults stay where the caller's layout ends. */
    memcpy(library, caller, caller_size < library_size ? caller_size : library_size);
    memcpy(library, &library_size, sizeof library_size);
    return AMQ_OK;
}

void amq__struct_write(void *caller, size_t caller_size, const void *library, size_t library_size)
{
    size_t shared = caller_size < library_size ? caller_size : library_size;
    memcpy(caller, library, shared);
    if (caller_size > shared)
        memset((unsigned char *)caller + shared, 0, caller_size - shared);
    memcpy(caller, &caller_size, sizeof caller_size);
}
