/*
 * bloom_internal.h - what the Bloom family's files share inside the
 * library: sizing from (n, p) or (m, k), and the invariant checks tests call.
 */
#ifndef AMQ_BLOOM_INTERNAL_H
#define AMQ_BLOOM_INTERNAL_H

#include "amq/bloom.h"

/* m, k and the capacity for params (see amq_bloom_new). */
int amq__bloom_size(uint64_t *bits, uint32_t *hashes, uint64_t *capacity,
                    const amq_bloom_params *params, amq_diag *diag);

/* AMQ_OK if the filter's invariants hold, else AMQ_ECORRUPT. O(m). */
int amq__bloom_check(const amq_bloom *filter);

/* The filter's words (for tests comparing filters bit for bit). */
const uint64_t *amq__bloom_words(const amq_bloom *filter);

#endif /* AMQ_BLOOM_INTERNAL_H */
