/*
 * cli_options.c - the filter types' options on the command line, read from
 * the library's tables (amq_family_option) rather than written here: the
 * long and short options `amq build` takes, the letter an error message
 * gives an option, the help `amq build --help` prints, and the list the
 * bash completion asks for (`amq __options`). An option a family adds to
 * its table is taken, described and completed with no change to the tool.
 *
 * The tool takes the union of every type's options, each name once, in the
 * order the types list them (a type refuses the ones it does not take, by
 * name, in the spec parser). An option's short form is its one-letter
 * alias in the spec (n, p, m, k) unless the letter is one of build's own.
 */
#include "cli.h"

#include <ctype.h>
#include <string.h>

/* The letters `amq build` uses for its own options: never an alias's. */
#define BUILD_OWN_LETTERS "toh"

/* Where an option's help starts in usage text, and the width it wraps at. */
#define HELP_COLUMN 29
#define HELP_WIDTH  79

/* The most filter types the help groups options by. */
#define MAX_TYPES 32

size_t cli_type_options(cli_type_option *out, size_t cap)
{
    size_t count = 0;
    for (size_t t = 0; amq_family_at(t); t++) {
        amq_option_info info;
        for (size_t i = 0; amq_family_option(&info, amq_family_at(t), i) == AMQ_OK; i++) {
            size_t j = 0;
            while (j < count && strcmp(out[j].name, info.name) != 0)
                j++;
            if (j < count)
                continue;
            if (count == cap)
                return count;
            char letter = 0;
            if (info.alias && strlen(info.alias) == 1 && isalnum((unsigned char)info.alias[0]) &&
                !strchr(BUILD_OWN_LETTERS, info.alias[0])) {
                letter = info.alias[0];
                for (size_t k = 0; k < count; k++)
                    if (out[k].letter == letter)
                        letter = 0;
            }
            out[count++] = (cli_type_option){
                .name = info.name,
                .letter = letter,
                .flag = strcmp(info.kind, "flag") == 0,
            };
        }
    }
    return count;
}

char cli_type_option_letter(const char *name, size_t len)
{
    cli_type_option options[CLI_MAX_TYPE_OPTIONS];
    size_t count = cli_type_options(options, CLI_MAX_TYPE_OPTIONS);
    for (size_t i = 0; i < count; i++)
        if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0)
            return options[i].letter;
    return 0;
}

/* ---- help ---------------------------------------------------------------------- */

/* Print text from column *column, a word at a time, wrapping at HELP_WIDTH
 * to HELP_COLUMN. */
static void print_wrapped(FILE *out, size_t *column, const char *text)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (len == 0)
            break;
        if (*column > HELP_COLUMN && *column + 1 + len > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_COLUMN, "");
            *column = HELP_COLUMN;
        } else if (*column > HELP_COLUMN) {
            fputc(' ', out);
            (*column)++;
        }
        fprintf(out, "%.*s", (int)len, p);
        *column += len;
        p += len;
    }
}

void cli_print_help_line(FILE *out, const char *label, const char *text, const char *note)
{
    size_t column = 2 + strlen(label);
    fprintf(out, "  %s", label);
    if (column + 2 <= HELP_COLUMN) {
        fprintf(out, "%*s", (int)(HELP_COLUMN - column), "");
        column = HELP_COLUMN;
    } else {
        fputc(' ', out); /* print_wrapped adds the second space */
        column++;
    }
    print_wrapped(out, &column, text);
    if (note) {
        char words[512];
        snprintf(words, sizeof words, "(%s)", note);
        print_wrapped(out, &column, words);
    }
    fputc('\n', out);
}

/* One option's line(s): "  -n, --capacity N" then its help, and note
 * (which types take it) when not NULL. */
static void print_option(FILE *out, const amq_option_info *o, const char *note)
{
    char label[256];
    char letter = cli_type_option_letter(o->name, strlen(o->name));
    int n = letter ? snprintf(label, sizeof label, "-%c, --%s", letter, o->name)
                   : snprintf(label, sizeof label, "    --%s", o->name);
    size_t used = n > 0 && (size_t)n < sizeof label ? (size_t)n : 0;
    if (o->choices) {
        for (size_t i = 0; o->choices[i] && used < sizeof label; i++) {
            n = snprintf(label + used, sizeof label - used, "%s%s", i ? "|" : " ", o->choices[i]);
            used += n > 0 ? (size_t)n : 0;
        }
    } else if (o->value_name) {
        snprintf(label + used, sizeof label - used, " %s", o->value_name);
    }
    cli_print_help_line(out, label, o->help, note);
}

/* One option as the types list it: the same name and help make one entry,
 * taken by the types marked. */
typedef struct help_entry {
    amq_option_info info;
    bool taken[MAX_TYPES];
    size_t types;
} help_entry;

/* The types that take an entry, for its note: "all types", "all types but
 * hfb", or their names. */
static void types_note(char *out, size_t cap, const help_entry *e, size_t type_count)
{
    bool all_but = e->types == type_count || e->types + 2 >= type_count;
    size_t used = 0;
    int n = snprintf(out, cap, "%s", all_but ? "all types" : "");
    used = n > 0 && (size_t)n < cap ? (size_t)n : 0;
    bool first = true;
    for (size_t t = 0; t < type_count && used < cap; t++) {
        if (e->taken[t] == all_but)
            continue;
        n = snprintf(out + used, cap - used, "%s%s", first ? (all_but ? " but " : "") : ", ",
                     amq_family_at(t));
        used += n > 0 ? (size_t)n : 0;
        first = false;
    }
}

void cli_print_type_options(FILE *out, const char *type)
{
    amq_option_info info;
    if (type && amq_family_is_static(type) >= 0) {
        fprintf(out, "Options of %s, from the library's table:\n", type);
        for (size_t i = 0; amq_family_option(&info, type, i) == AMQ_OK; i++)
            print_option(out, &info, NULL);
        return;
    }

    help_entry entries[CLI_MAX_TYPE_OPTIONS * 2];
    size_t entry_count = 0, type_count = 0;
    for (; amq_family_at(type_count) && type_count < MAX_TYPES; type_count++) {
        const char *name = amq_family_at(type_count);
        for (size_t i = 0; amq_family_option(&info, name, i) == AMQ_OK; i++) {
            size_t j = 0;
            while (j < entry_count && (strcmp(entries[j].info.name, info.name) != 0 ||
                                       strcmp(entries[j].info.help, info.help) != 0))
                j++;
            if (j == entry_count) {
                if (entry_count == sizeof entries / sizeof entries[0])
                    continue;
                memset(&entries[j], 0, sizeof entries[j]);
                entries[j].info = info;
                entry_count++;
            }
            if (!entries[j].taken[type_count]) {
                entries[j].taken[type_count] = true;
                entries[j].types++;
            }
        }
    }
    fprintf(out, "Options of the filter types, from the library's tables; those of more than\n"
                 "one type first ('amq build -t TYPE --help' shows one type's):\n");
    char note[512];
    for (size_t j = 0; j < entry_count; j++) {
        if (entries[j].types < 2)
            continue;
        types_note(note, sizeof note, &entries[j], type_count);
        print_option(out, &entries[j].info, note);
    }
    for (size_t t = 0; t < type_count; t++) {
        bool heading = false;
        for (size_t j = 0; j < entry_count; j++) {
            if (entries[j].types != 1 || !entries[j].taken[t])
                continue;
            if (!heading)
                fprintf(out, " %s:\n", amq_family_at(t));
            heading = true;
            print_option(out, &entries[j].info, NULL);
        }
    }
}

/* ---- amq __options ------------------------------------------------------------- */

/* One line for the completion: NAME LETTER KIND [WORD...], LETTER '-' when
 * there is none. */
static void print_completion_line(const amq_option_info *o)
{
    char letter = cli_type_option_letter(o->name, strlen(o->name));
    printf("%s %c %s", o->name, letter ? letter : '-', o->kind);
    for (size_t i = 0; o->choices && o->choices[i]; i++)
        printf(" %s", o->choices[i]);
    putchar('\n');
}

int cli_options_command(int argc, char **argv)
{
    if (argc > 2)
        return cli_usage_error(argv[0], "give at most one filter type");
    amq_option_info info;
    if (argc == 2) {
        if (amq_family_is_static(argv[1]) < 0)
            return cli_usage_error(argv[0], "unknown filter type '%s'", argv[1]);
        for (size_t i = 0; amq_family_option(&info, argv[1], i) == AMQ_OK; i++)
            print_completion_line(&info);
        return CLI_EXIT_OK;
    }
    cli_type_option options[CLI_MAX_TYPE_OPTIONS];
    size_t count = cli_type_options(options, CLI_MAX_TYPE_OPTIONS);
    for (size_t i = 0; i < count; i++) {
        /* The first type's description of the name. */
        bool found = false;
        for (size_t t = 0; amq_family_at(t) && !found; t++)
            for (size_t k = 0; !found && amq_family_option(&info, amq_family_at(t), k) == AMQ_OK;
                 k++)
                found = strcmp(info.name, options[i].name) == 0;
        if (found)
            print_completion_line(&info);
    }
    return CLI_EXIT_OK;
}
