/*
 * cuckoo_internal.h - what the tests reach inside the cuckoo filter
 * (cuckoo.c): the choice between its two ways of reading a semi-sorted
 * bucket, so that both can be checked to answer alike.
 */
#ifndef AMQ_CUCKOO_INTERNAL_H
#define AMQ_CUCKOO_INTERNAL_H

#include "amq/cuckoo.h"

#include <stdbool.h>

/* Make a semi-sorted filter spread its suffixes without BMI2's pdep, as on
 * a CPU that lacks it. */
void amq__cuckoo_use_portable(amq_cuckoo *filter);

/* Whether the filter spreads its suffixes with pdep (only ever for a
 * semi-sorted filter on a CPU with a fast pdep). */
bool amq__cuckoo_uses_bmi2(const amq_cuckoo *filter);

#endif
