/*
 * status.c - the library's version, its status codes' descriptions, and the
 * helper that fills an amq_diag.
 */
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *amq_version(void)
{
    return AMQ_VERSION_STRING;
}

unsigned amq_version_number(void)
{
    return AMQ_VERSION_NUMBER;
}

const char *amq_strerror(int status)
{
    switch (status) {
    case AMQ_OK:
        return "success";
    case AMQ_ENOMEM:
        return "out of memory";
    case AMQ_EINVAL:
        return "invalid argument";
    case AMQ_EFULL:
        return "filter is full";
    case AMQ_ENOTFOUND:
        return "key not found";
    case AMQ_ECORRUPT:
        return "data is corrupt or truncated";
    case AMQ_EFORMAT:
        return "not an amq file";
    case AMQ_EVERSION:
        return "file format version is newer than this library supports";
    case AMQ_EIO:
        return "input/output error";
    case AMQ_EUNSUPPORTED:
        return "operation not supported by this filter family";
    case AMQ_ERANGE:
        return "value out of range";
    case AMQ_EINCOMPATIBLE:
        return "filters are not compatible";
    default:
        return "unknown error";
    }
}

AMQ__PRINTF(3, 0)
static void diag_vset(amq_diag *diag, uint64_t offset, const char *format, va_list args)
{
    if (!diag)
        return;
    int written = vsnprintf(diag->message, sizeof diag->message, format, args);
    /* Cut short: say so rather than end mid-word. */
    if (written >= (int)sizeof diag->message)
        memcpy(diag->message + sizeof diag->message - 4, "...", 4);
    diag->offset = offset;
}

int amq__fail(amq_diag *diag, int status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    diag_vset(diag, 0, format, args);
    va_end(args);
    return status;
}

int amq__fail_at(amq_diag *diag, int status, uint64_t offset, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    diag_vset(diag, offset, format, args);
    va_end(args);
    return status;
}
