/*
 * bundle_container.c - what the bundle's container is, in the words
 * amq_load and a bundle's member check give (core/format.h's
 * amq__format_non_filter): the bundle's to say, not the format's.
 */
#include "core/format.h"

const char amq__bundle_description[] =
    "a bundle of filters, not one filter: open it with amq_bundle_open ('amq info' lists its "
    "members)";
