/*
 * containers.c - what the containers that are not filters are, in the
 * words amq_load and a bundle's member check give when handed one: the
 * format (core/format.c) knows only their ids, and the generic handle is
 * the lowest layer that tells a caller which call opens them instead.
 */
#include "core/format.h"
#include "filter/filter.h"

const char *amq__non_filter_description(uint32_t family)
{
    switch (family) {
    case AMQ__FAMILY_BUNDLE:
        return "a bundle of filters, not one filter: open it with amq_bundle_open ('amq info' "
               "lists its members)";
    case AMQ__FAMILY_FRONTIER:
        return "a crawl frontier's manifest, not a filter: open its directory with "
               "amq_frontier_open";
    default:
        return NULL;
    }
}
