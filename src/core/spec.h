/*
 * spec.h - the one parser of filter specs: "bloom n=1000000 p=0.01".
 *
 * A spec is a family name followed by options separated by spaces. An option
 * is key=value, or a bare key for a flag (semi-sort). Keys are the command
 * line's long option names; some have a short alias (n for capacity, p for
 * fpr, m for bits, k for hashes). Each family lists the options it accepts as
 * a NULL-terminated array of descriptors; the options every family shares
 * (capacity, fpr, seed, hash, key) are the descriptors declared here, so a
 * family's list can point at them.
 *
 * Each descriptor also says what the option is for, in one line (help) with
 * the placeholder of its value in usage text (value_name): the public
 * amq_family_option (src/filter/options.c) hands both on, and the command
 * line builds its options and its help from them, so an option is added in
 * one place: its family's list.
 *
 * The parser checks everything it can without knowing the family's meaning:
 * the family exists, every key is one the family takes, no key is given
 * twice, every value is well formed and within the descriptor's range. It
 * reports the first problem in an amq_diag naming the option and the text.
 */
#ifndef AMQ_SPEC_H
#define AMQ_SPEC_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum amq__option_type {
    AMQ__OPTION_COUNT,       /* integer in [count_min, count_max]; "1e6" allowed; or
                                count_word when it is set */
    AMQ__OPTION_PROBABILITY, /* in (0, 1): "0.01", "1e-4", "1/8192", "1%" */
    AMQ__OPTION_REAL,        /* finite real in [real_min, real_max] */
    AMQ__OPTION_CHOICE,      /* one of choices[] (NULL-terminated) */
    AMQ__OPTION_HEX,         /* exactly hex_bytes bytes as 2*hex_bytes hex digits */
    AMQ__OPTION_FLAG         /* a bare key; no value */
} amq__option_type;

typedef struct amq__option {
    const char *name;  /* the long name, e.g. "fingerprint-bits" */
    const char *alias; /* a short name, e.g. "n", or NULL */
    amq__option_type type;
    uint64_t count_min, count_max;
    const char *count_word; /* COUNT or HEX: a word also accepted instead of a
                               value (e.g. "best"; "random" for seed and key),
                               or NULL; the value then has word set */
    double real_min, real_max;
    const char *const *choices;
    size_t hex_bytes;
    const char *value_name; /* the value's placeholder in usage text ("N", "LEN"); NULL:
                               the type's ("N", "P", "R", "HEX", "WORD") */
    const char *help;       /* one line: what it sets, and its default; not NULL */
} amq__option;

/* The largest number of options a family may take. */
#define AMQ__SPEC_MAX_OPTIONS 24
#define AMQ__SPEC_MAX_HEX     32

typedef struct amq__option_value {
    bool set;
    uint64_t count;  /* COUNT */
    bool word;       /* COUNT, HEX: the option's count_word was given, not a value */
    double real;     /* PROBABILITY, REAL */
    unsigned choice; /* CHOICE: index into choices */
    uint8_t hex[AMQ__SPEC_MAX_HEX];
} amq__option_value;

struct amq__family;

typedef struct amq__spec {
    const struct amq__family *family;
    amq__option_value values[AMQ__SPEC_MAX_OPTIONS]; /* parallel to family->options */
} amq__spec;

/* Options every family may accept. */
extern const amq__option amq__option_capacity; /* n, capacity: 1 .. 2^56 keys */
extern const amq__option amq__option_fpr;      /* p, fpr */
extern const amq__option amq__option_seed;     /* seed: any 64-bit value, or random */
extern const amq__option amq__option_hash;     /* hash: xxh3 | md5 | siphash */
extern const amq__option amq__option_key;      /* key: 16-byte SipHash key, hex, or random */

/* Parse text against the families (a NULL-terminated array). On success
 * out->family is the family named and out->values hold what was given. */
int amq__spec_parse(amq__spec *out, const char *text, const struct amq__family *const *families,
                    amq_diag *diag);

/* The value given for an option of spec's family, or NULL if it was not
 * given (or the family does not take it). */
const amq__option_value *amq__spec_get(const amq__spec *spec, const amq__option *option);

/* Convenience readers with a default for options that were not given. */
uint64_t amq__spec_count(const amq__spec *spec, const amq__option *option, uint64_t fallback);
double amq__spec_real(const amq__spec *spec, const amq__option *option, double fallback);
unsigned amq__spec_choice(const amq__spec *spec, const amq__option *option, unsigned fallback);
bool amq__spec_flag(const amq__spec *spec, const amq__option *option);

/* The hasher the spec asks for, from its hash, seed and key options:
 * xxh3 (default) with seed (default default_seed); siphash needs key and
 * takes no seed; md5 takes neither. AMQ_EINVAL with a message otherwise.
 * seed=random and key=random draw the seed or key from the operating
 * system (amq_hasher_random; AMQ_EIO when it gives none). */
int amq__spec_hasher(const amq__spec *spec, amq_hasher *out, uint64_t default_seed, amq_diag *diag);

#endif /* AMQ_SPEC_H */
