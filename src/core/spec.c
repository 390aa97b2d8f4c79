/*
 * spec.c - parses filter specs ("blocked-bloom n=4e6 p=0.01 layout=split")
 * against the families' option lists. See spec.h for the grammar.
 *
 * Parsing is one pass over whitespace-separated words: the first names the
 * family, each later one is key=value or a bare flag key. A word is looked up
 * by name or alias in the family's option list and its value parsed by the
 * option's type with the same number parsers the command line uses
 * (number.c), so "n=1e6", "p=1/8192" and "p=0.01%" mean here what they mean
 * to `amq calc`. Nothing is allocated; words are bounded (a spec of any
 * length is fine, one word may not exceed AMQ__SPEC_WORD_MAX bytes).
 */
#include "core/spec.h"
#include "core/family.h"
#include "core/number.h"
#include "core/util.h"

#include <stdio.h>
#include <string.h>

#define AMQ__SPEC_WORD_MAX 256

static const char *const hash_choices[] = { "xxh3", "md5", "siphash", NULL };

const amq__option amq__option_capacity = {
    .name = "capacity",
    .alias = "n",
    .type = AMQ__OPTION_COUNT,
    .count_min = 1,
    .count_max = (uint64_t)1 << 56,
    .help = "keys to size the filter for",
};
const amq__option amq__option_fpr = {
    .name = "fpr",
    .alias = "p",
    .type = AMQ__OPTION_PROBABILITY,
    .help = "false-positive rate: 0.01, 1e-4, 1/8192, 0.5%",
};
const amq__option amq__option_seed = {
    .name = "seed",
    .type = AMQ__OPTION_COUNT,
    .count_min = 0,
    .count_max = UINT64_MAX,
    .count_word = "random",
    .value_name = "S",
    .help = "the seed of the xxh3 key hash, or random: a secret one from the operating system "
            "(default 0)",
};
const amq__option amq__option_hash = {
    .name = "hash",
    .type = AMQ__OPTION_CHOICE,
    .choices = hash_choices,
    .help = "the key hash (default xxh3)",
};
const amq__option amq__option_key = {
    .name = "key",
    .type = AMQ__OPTION_HEX,
    .hex_bytes = 16,
    .count_word = "random",
    .help = "the SipHash-2-4 key of hash=siphash, 32 hex digits, or random: a secret one from "
            "the operating system",
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Copy the next word of *text into word (NUL-terminated) and advance *text.
 * Returns the word's length, 0 at the end, or -1 if it is too long. */
static long next_word(const char **text, char word[AMQ__SPEC_WORD_MAX])
{
    const char *p = *text;
    while (is_space(*p))
        p++;
    size_t len = 0;
    while (p[len] && !is_space(p[len]))
        len++;
    *text = p + len;
    if (len >= AMQ__SPEC_WORD_MAX)
        return -1;
    memcpy(word, p, len);
    word[len] = 0;
    return (long)len;
}

/* A list of names for a message, built in a fixed buffer; what does not fit
 * is dropped. */
typedef struct name_list {
    char text[512];
    size_t used;
} name_list;

static void name_list_add(name_list *list, const char *separator, const char *name,
                          const char *alias)
{
    size_t room = sizeof list->text - list->used;
    int n = snprintf(list->text + list->used, room, "%s%s%s%s%s", list->used ? separator : "", name,
                     alias ? " (" : "", alias ? alias : "", alias ? ")" : "");
    if (n > 0 && (size_t)n < room)
        list->used += (size_t)n;
}

static int parse_value(amq__option_value *value, const amq__option *option, const char *text,
                       amq_diag *diag)
{
    amq_diag inner;
    int status;
    switch (option->type) {
    case AMQ__OPTION_COUNT:
        if (option->count_word && strcmp(text, option->count_word) == 0) {
            value->word = true;
            return AMQ_OK;
        }
        status = amq_parse_count(&value->count, text, option->count_min, option->count_max, &inner);
        break;
    case AMQ__OPTION_PROBABILITY:
        status = amq_parse_probability(&value->real, text, &inner);
        break;
    case AMQ__OPTION_REAL:
        status = amq__parse_real(&value->real, text, option->real_min, option->real_max, &inner);
        break;
    case AMQ__OPTION_CHOICE:
        for (unsigned i = 0; option->choices[i]; i++) {
            if (strcmp(text, option->choices[i]) == 0) {
                value->choice = i;
                return AMQ_OK;
            }
        }
        {
            name_list choices = { .used = 0 };
            for (unsigned i = 0; option->choices[i]; i++)
                name_list_add(&choices, "|", option->choices[i], NULL);
            return amq__fail(diag, AMQ_EINVAL, "option '%s': '%s' is not one of %s", option->name,
                             text, choices.text);
        }
    case AMQ__OPTION_HEX: {
        if (option->count_word && strcmp(text, option->count_word) == 0) {
            value->word = true;
            return AMQ_OK;
        }
        size_t len = strlen(text);
        if (len != 2 * option->hex_bytes)
            return amq__fail(diag, AMQ_EINVAL,
                             "option '%s': expected %zu hex digits (%zu bytes), got %zu",
                             option->name, 2 * option->hex_bytes, option->hex_bytes, len);
        if (amq_parse_hex(value->hex, text, len, &inner) != AMQ_OK)
            return amq__fail(diag, AMQ_EINVAL, "option '%s': '%s' is not hexadecimal (%s)",
                             option->name, text, inner.message);
        return AMQ_OK;
    }
    case AMQ__OPTION_FLAG:
    default:
        return amq__fail(diag, AMQ_EINVAL, "option '%s' takes no value", option->name);
    }
    if (status != AMQ_OK)
        return amq__fail(diag, AMQ_EINVAL, "option '%s': %s", option->name, inner.message);
    return AMQ_OK;
}

static const amq__family *find_family(const amq__family *const *families, const char *name)
{
    for (size_t i = 0; families[i]; i++)
        if (strcmp(families[i]->name, name) == 0)
            return families[i];
    return NULL;
}

static long find_option(const amq__family *family, const char *key)
{
    for (size_t i = 0; family->options[i]; i++) {
        const amq__option *o = family->options[i];
        if (strcmp(o->name, key) == 0 || (o->alias && strcmp(o->alias, key) == 0))
            return (long)i;
    }
    return -1;
}

int amq__spec_parse(amq__spec *out, const char *text, const amq__family *const *families,
                    amq_diag *diag)
{
    char word[AMQ__SPEC_WORD_MAX];
    memset(out, 0, sizeof *out);
    const char *cursor = text;
    long len = next_word(&cursor, word);
    if (len == 0)
        return amq__fail(diag, AMQ_EINVAL, "empty spec: expected a filter type");
    if (len < 0)
        return amq__fail(diag, AMQ_EINVAL, "filter type is longer than %d bytes",
                         AMQ__SPEC_WORD_MAX - 1);
    const amq__family *family = find_family(families, word);
    if (!family) {
        name_list names = { .used = 0 };
        for (size_t i = 0; families[i]; i++)
            name_list_add(&names, ", ", families[i]->name, NULL);
        return amq__fail(diag, AMQ_EINVAL, "unknown filter type '%s' (known: %s)", word,
                         names.used ? names.text : "none are built in");
    }
    out->family = family;

    while ((len = next_word(&cursor, word)) != 0) {
        uint64_t offset = (uint64_t)(cursor - text);
        if (len < 0)
            return amq__fail_at(diag, AMQ_EINVAL, offset, "option is longer than %d bytes",
                                AMQ__SPEC_WORD_MAX - 1);
        char *equals = strchr(word, '=');
        const char *value_text = NULL;
        if (equals) {
            *equals = 0;
            value_text = equals + 1;
        }
        long index = find_option(family, word);
        if (index < 0) {
            name_list names = { .used = 0 };
            for (size_t i = 0; family->options[i]; i++)
                name_list_add(&names, ", ", family->options[i]->name, family->options[i]->alias);
            return amq__fail_at(diag, AMQ_EINVAL, offset,
                                "unknown option '%s' for %s (it takes: %s)", word, family->name,
                                names.text);
        }
        const amq__option *option = family->options[index];
        amq__option_value *value = &out->values[index];
        if (value->set)
            return amq__fail_at(diag, AMQ_EINVAL, offset, "option '%s' is given twice",
                                option->name);
        if (option->type == AMQ__OPTION_FLAG) {
            if (value_text)
                return amq__fail_at(diag, AMQ_EINVAL, offset, "option '%s' takes no value",
                                    option->name);
        } else {
            if (!value_text || !*value_text)
                return amq__fail_at(diag, AMQ_EINVAL, offset, "option '%s' needs a value (%s=...)",
                                    option->name, option->name);
            int status = parse_value(value, option, value_text, diag);
            if (status != AMQ_OK) {
                if (diag)
                    diag->offset = offset;
                return status;
            }
        }
        value->set = true;
    }
    return AMQ_OK;
}

const amq__option_value *amq__spec_get(const amq__spec *spec, const amq__option *option)
{
    const amq__option *const *options = spec->family->options;
    for (size_t i = 0; options[i]; i++)
        if (options[i] == option)
            return spec->values[i].set ? &spec->values[i] : NULL;
    return NULL;
}

uint64_t amq__spec_count(const amq__spec *spec, const amq__option *option, uint64_t fallback)
{
    const amq__option_value *v = amq__spec_get(spec, option);
    return v ? v->count : fallback;
}

double amq__spec_real(const amq__spec *spec, const amq__option *option, double fallback)
{
    const amq__option_value *v = amq__spec_get(spec, option);
    return v ? v->real : fallback;
}

unsigned amq__spec_choice(const amq__spec *spec, const amq__option *option, unsigned fallback)
{
    const amq__option_value *v = amq__spec_get(spec, option);
    return v ? v->choice : fallback;
}

bool amq__spec_flag(const amq__spec *spec, const amq__option *option)
{
    return amq__spec_get(spec, option) != NULL;
}

int amq__spec_hasher(const amq__spec *spec, amq_hasher *out, uint64_t default_seed, amq_diag *diag)
{
    const amq__option_value *hash = amq__spec_get(spec, &amq__option_hash);
    const amq__option_value *seed = amq__spec_get(spec, &amq__option_seed);
    const amq__option_value *key = amq__spec_get(spec, &amq__option_key);
    const char *kind = hash ? hash_choices[hash->choice] : "xxh3";

    if (strcmp(kind, "siphash") == 0) {
        if (!key)
            return amq__fail(diag, AMQ_EINVAL,
                             "hash=siphash needs key=HEX (16 bytes) or key=random");
        if (seed)
            return amq__fail(diag, AMQ_EINVAL,
                             "hash=siphash is keyed by 'key', not 'seed': drop seed%s",
                             seed->word ? " (key=random draws a secret key)" : "");
        if (key->word)
            return amq_hasher_random(out, AMQ_HASH_SIPHASH, diag);
        amq_hasher_siphash(out, key->hex);
        return AMQ_OK;
    }
    if (key)
        return amq__fail(diag, AMQ_EINVAL, "option 'key' applies to hash=siphash only");
    if (strcmp(kind, "md5") == 0) {
        if (seed)
            return amq__fail(diag, AMQ_EINVAL, "hash=md5 takes no seed");
        amq_hasher_md5(out);
        return AMQ_OK;
    }
    if (seed && seed->word)
        return amq_hasher_random(out, AMQ_HASH_XXH3, diag);
    amq_hasher_xxh3(out, seed ? seed->count : default_seed);
    return AMQ_OK;
}
