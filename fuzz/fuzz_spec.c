/*
 * fuzz_spec.c - the spec parser on arbitrary text: through amq_new (the
 * families this build has; a filter that gets created is exercised and
 * freed; specs asking for more than AMQ_FUZZ_MAX_BITS bits are parsed but
 * not created, since a fuzzer must not allocate gigabytes - the unit tests
 * cover huge sizes) and through amq__spec_parse over a family list that holds one
 * option of every type, so every value parser is reached whatever families
 * exist. Nothing may crash, leak, or succeed with a value out of range.
 */
#include "amq/amq.h"
#include "core/family.h"
#include "core/spec.h"
#include "filter/filter.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const layouts[] = { "block", "split", NULL };
static const amq__option option_layout = {
    .name = "layout",
    .type = AMQ__OPTION_CHOICE,
    .choices = layouts,
};
static const amq__option option_growth = {
    .name = "growth",
    .type = AMQ__OPTION_REAL,
    .real_min = 1.5,
    .real_max = 16,
};
static const amq__option option_bits = {
    .name = "bits",
    .alias = "m",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = UINT64_MAX,
};
static const amq__option option_flag = { .name = "semi-sort", .type = AMQ__OPTION_FLAG };
static const amq__option *const options[] = {
    &amq__option_capacity, &amq__option_fpr, &amq__option_seed, &amq__option_hash, &amq__option_key,
    &option_layout,        &option_growth,   &option_bits,      &option_flag,      NULL,
};
static const amq__family every_type = { .name = "every-type", .id = 62, .options = options };
static const amq__family *const families[] = { &every_type, NULL };

static void check_values(const amq__spec *spec)
{
    for (size_t i = 0; options[i]; i++) {
        const amq__option_value *v = &spec->values[i];
        if (!v->set)
            continue;
        const amq__option *o = options[i];
        switch (o->type) {
        case AMQ__OPTION_COUNT:
            if (v->count < o->count_min || v->count > o->count_max)
                abort();
            break;
        case AMQ__OPTION_PROBABILITY:
            if (!(v->real > 0 && v->real < 1))
                abort();
            break;
        case AMQ__OPTION_REAL:
            if (!(v->real >= o->real_min && v->real <= o->real_max))
                abort();
            break;
        default:
            break;
        }
    }
}

#define AMQ_FUZZ_MAX_BITS ((uint64_t)1 << 28)

/* Whether the filter the text asks for stays below AMQ_FUZZ_MAX_BITS bits:
 * capacity times the optimal bits per key at its fpr, and any explicit
 * size, below the cap (with room for families that spend more per key). */
static int small_enough(const char *text)
{
    amq__spec spec;
    if (amq__spec_parse(&spec, text, amq__family_table(), NULL) != AMQ_OK)
        return 1; /* amq_new will refuse it without allocating */
    double fpr = amq__spec_real(&spec, &amq__option_fpr, 0.01);
    double bits_per_key = 4 * (1 - log(fpr) / 0.48);
    double capacity = (double)amq__spec_count(&spec, &amq__option_capacity, 1000);
    if (capacity * bits_per_key > (double)AMQ_FUZZ_MAX_BITS)
        return 0;
    const amq__option *const *list = spec.family->options;
    for (size_t i = 0; list[i]; i++)
        if (spec.values[i].set && list[i]->type == AMQ__OPTION_COUNT &&
            list[i] != &amq__option_seed && spec.values[i].count > AMQ_FUZZ_MAX_BITS)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;

    amq_diag diag;
    amq__spec spec;
    if (amq__spec_parse(&spec, text, families, &diag) == AMQ_OK) {
        check_values(&spec);
        amq_hasher hasher;
        (void)amq__spec_hasher(&spec, &hasher, 0, &diag);
    } else if (memchr(diag.message, 0, sizeof diag.message) == NULL) {
        abort(); /* the message must be terminated */
    }

    amq_filter *f = NULL;
    if (small_enough(text) && amq_new(&f, text, &diag) == AMQ_OK) {
        (void)amq_add(f, data, size);
        if (amq_contains(f, data, size) == 0)
            abort(); /* no false negatives */
        amq_free(f);
    }
    free(text);
    return 0;
}
