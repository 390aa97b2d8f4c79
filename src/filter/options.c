/*
 * options.c - the families' spec options, as the public API describes them
 * (amq_family_option): the one list a program or the command-line tool
 * reads to learn which options a filter type takes, how each is written
 * and what it is for.
 *
 * Nothing here is a second copy of the options: each answer is read from
 * the family's own descriptors (core/spec.h), which the spec parser checks
 * specs against, so what is listed is exactly what parses. The kind names
 * are those of amq__option_type in lower case; a descriptor without its
 * own placeholder gets its kind's ("N" for a count, "P" for a
 * probability). Nothing is allocated.
 *
 * One exception, for now: cuckoo's descriptors are written in a file that
 * is being split in two, so their help lines wait here (pending_help),
 * keyed by option name, until they move into cuckoo's own table.
 */
#include "core/family.h"
#include "core/spec.h"
#include "filter/filter.h"

#include <string.h>

/* Help for descriptors that do not carry their own yet (see above). */
static const struct pending_help {
    const char *family, *option, *value_name, *help;
} pending_help[] = {
    { "cuckoo", "fingerprint-bits", "F", "the bits of a fingerprint, 4 to 32 (default: from fpr)" },
    { "cuckoo", "bucket-size", NULL, "the slots per bucket (default 4)" },
    { "cuckoo", "max-kicks", "K",
      "the fingerprints an insert may relocate before the filter is full (default 500)" },
    { "cuckoo", "growth", "S",
      "0: a fixed size, full when full (default); 1, 2, 4, 8 or 16: chain a table that many "
      "times larger" },
    { "cuckoo", "semi-sort", NULL, "semi-sorted buckets: one bit less per slot, slower inserts" },
};

static const struct pending_help *find_pending_help(const char *family, const char *option)
{
    for (size_t i = 0; i < sizeof pending_help / sizeof pending_help[0]; i++)
        if (strcmp(pending_help[i].family, family) == 0 &&
            strcmp(pending_help[i].option, option) == 0)
            return &pending_help[i];
    return NULL;
}

/* The placeholder a kind's value gets in usage text when the option names
 * none; NULL for a flag. */
static const char *default_value_name(amq__option_type type)
{
    switch (type) {
    case AMQ__OPTION_COUNT:
        return "N";
    case AMQ__OPTION_PROBABILITY:
        return "P";
    case AMQ__OPTION_REAL:
        return "R";
    case AMQ__OPTION_CHOICE:
        return "WORD";
    case AMQ__OPTION_HEX:
        return "HEX";
    case AMQ__OPTION_FLAG:
    default:
        return NULL;
    }
}

static const char *kind_name(amq__option_type type)
{
    switch (type) {
    case AMQ__OPTION_COUNT:
        return "count";
    case AMQ__OPTION_PROBABILITY:
        return "probability";
    case AMQ__OPTION_REAL:
        return "real";
    case AMQ__OPTION_CHOICE:
        return "choice";
    case AMQ__OPTION_HEX:
        return "hex";
    case AMQ__OPTION_FLAG:
    default:
        return "flag";
    }
}

int amq_family_option(amq_option_info *out, const char *family, size_t index)
{
    if (!out || !family)
        return AMQ_EINVAL;
    const amq__family *const *families = amq__family_table();
    const amq__family *found = NULL;
    for (size_t i = 0; families[i] && !found; i++)
        if (strcmp(families[i]->name, family) == 0)
            found = families[i];
    if (!found)
        return AMQ_EINVAL;
    for (size_t i = 0; i < index; i++)
        if (!found->options[i])
            return AMQ_ERANGE;
    const amq__option *option = found->options[index];
    if (!option)
        return AMQ_ERANGE;

    memset(out, 0, sizeof *out);
    out->name = option->name;
    out->alias = option->alias;
    out->kind = kind_name(option->type);
    out->value_name = option->type == AMQ__OPTION_FLAG ? NULL
                      : option->value_name             ? option->value_name
                                                       : default_value_name(option->type);
    out->help = option->help ? option->help : "";
    const struct pending_help *pending =
        option->help ? NULL : find_pending_help(family, option->name);
    if (pending) {
        out->help = pending->help;
        if (pending->value_name && out->value_name)
            out->value_name = pending->value_name;
    }
    switch (option->type) {
    case AMQ__OPTION_COUNT:
        out->word = option->count_word;
        out->min = option->count_min;
        out->max = option->count_max;
        break;
    case AMQ__OPTION_PROBABILITY:
        out->real_min = 0;
        out->real_max = 1;
        break;
    case AMQ__OPTION_REAL:
        out->real_min = option->real_min;
        out->real_max = option->real_max;
        break;
    case AMQ__OPTION_CHOICE:
        out->choices = option->choices;
        break;
    case AMQ__OPTION_HEX:
        out->hex_bytes = option->hex_bytes;
        break;
    case AMQ__OPTION_FLAG:
    default:
        break;
    }
    return AMQ_OK;
}
