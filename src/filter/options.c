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
 */
#include "core/family.h"
#include "core/spec.h"
#include "core/struct_size.h"
#include "filter/filter.h"

#include <string.h>

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

int amq_family_option_sized(amq_option_info *caller_out, size_t struct_size, const char *family,
                            size_t index)
{
    if (!caller_out || !family || struct_size < sizeof(size_t))
        return AMQ_EINVAL;
    amq_option_info described;
    amq_option_info *out = &described;
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
        out->word = option->count_word;
        out->hex_bytes = option->hex_bytes;
        break;
    case AMQ__OPTION_FLAG:
    default:
        break;
    }
    amq__struct_write(caller_out, struct_size, out, sizeof *out);
    return AMQ_OK;
}
