/*
 * hfb_internal.h - what the hash-free Bloom banks' two files share: the
 * filter's layout, the bank helpers, and the invariant checks that the
 * build (in debug builds), the loader and the tests run. hfb.c explains the
 * filter and builds and queries it; hfb_family.c is the generic handle's
 * view of it: spec options, the saved form, info.
 */
#ifndef AMQ_HFB_INTERNAL_H
#define AMQ_HFB_INTERNAL_H

#include "amq/hfb.h"
#include "core/bits.h"

#include <stdint.h>

/* Bits in an ID. */
#define AMQ__HFB_ID_BITS 128

/* The default len keeps the banks' memory within this many times their
 * stored size (amq_hfb_choose_bank_bits). */
#define AMQ__HFB_MEMORY_RATIO 1.5

typedef struct amq__hfb_bank {
    amq__bitvec bits; /* 2^len bits */
    uint64_t mask;    /* 2^len - 1 */
    uint32_t start;
    uint32_t len;
    uint64_t weight;
    uint64_t stored_bits;
    amq_hfb_encoding encoding;
    uint32_t rice_bits;
} amq__hfb_bank;

struct amq_hfb {
    amq__hfb_bank banks[AMQ_HFB_MAX_BANKS]; /* in the order they are asked */
    size_t bank_count;
    uint32_t bank_bits;
    amq_hfb_ids ids;
    uint64_t id_count; /* distinct IDs */
    double target_fpr;
    double deviation; /* the largest of every slice's, at the build */
};

static inline uint64_t amq__hfb_bank_size(uint32_t len)
{
    return (uint64_t)1 << len;
}

static inline double amq__hfb_bank_fill(const amq__hfb_bank *bank)
{
    return (double)bank->weight / (double)amq__hfb_bank_size(bank->len);
}

/* A bank's stored form as a payload piece (format.h): a raw bank's words
 * (amq__bitvec_piece), or a Golomb-Rice bank's code, which the filter does
 * not keep: produced while it is written, ceil(stored_bits / 8) bytes
 * coded from the bits through a bounded buffer (amq__bitsink), without
 * allocating. */
amq__piece amq__hfb_bank_piece(const amq__hfb_bank *bank);

/* The producer of a Golomb-Rice bank's piece (bank_data: the bank). */
int amq__hfb_bank_produce(amq__emitter *e, const void *bank_data, uint64_t arg);

/* Bytes a bank takes in a file: its raw words, or its code padded to a
 * byte. */
uint64_t amq__hfb_bank_stored_bytes(const amq__hfb_bank *bank);

/* The fill n random IDs give a bank of 2^len bits, on average:
 * 1 - (1 - 2^-len)^n. */
double amq__hfb_expected_fill(uint64_t n, uint32_t len);

/* The invariants I1 .. I6 of hfb.c, but for the banks' bits matching their
 * weights (I2), which the loader checks while decoding and the build makes
 * so. Each answers AMQ_OK or AMQ_ECORRUPT naming what fails in *diag (may
 * be NULL). */
/* The filter's own fields: the target and the deviation in range. */
int amq__hfb_check_header(const amq_hfb *filter, amq_diag *diag);
/* Bank i against the banks before it (I1, I3, I4, I6). */
int amq__hfb_check_bank(const amq_hfb *filter, size_t i, amq_diag *diag);
/* All of them, and I5 (the product of fills reaches the target). */
int amq__hfb_check(const amq_hfb *filter, amq_diag *diag);

#endif /* AMQ_HFB_INTERNAL_H */
