/*
 * info.c - the helpers a family's info operation uses to append its own
 * figures to an amq_info. They live below the generic handle so a family
 * never reaches into filter.c.
 */
#include "core/family.h"

#include <stdio.h>

static amq_info_detail *next_detail(amq_info *out, const char *name)
{
    if (out->detail_count >= AMQ_INFO_MAX_DETAILS)
        return NULL;
    amq_info_detail *detail = &out->details[out->detail_count++];
    snprintf(detail->name, sizeof detail->name, "%s", name);
    return detail;
}

void amq__info_number(amq_info *out, const char *name, double value)
{
    amq_info_detail *detail = next_detail(out, name);
    if (detail)
        detail->value = value;
}

void amq__info_text(amq_info *out, const char *name, const char *text)
{
    amq_info_detail *detail = next_detail(out, name);
    if (detail)
        snprintf(detail->text, sizeof detail->text, "%s", text);
}
