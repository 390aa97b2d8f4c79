/*
 * options.h - getopt_long for the example programs, with errors that name
 * what the user typed.
 *
 * getopt_long says only that an option was refused ('?' or ':') and leaves
 * optind at an argument that is not always the one it refused: inside a
 * bundle such as "-zq" optind still points at the bundle, after "-z" it
 * points past it, and non-options it skipped lie in between. So
 * example_options_next keeps the index of the argument getopt_long is
 * reading, from the two rules it follows: it goes on in a bundle until the
 * bundle's last letter, and otherwise starts at the next argument that
 * begins with '-' (and is not "-" alone). example_options_error then
 * writes:
 *
 *   unknown option '-z'                   "-z"
 *   unknown option '-z' (in '-zq')        "-zq"
 *   unknown option '--bogus'              "--bogus" or "--bogus=1"
 *   option '--help' takes no value        "--help=1"
 *   option '--f' is ambiguous             a prefix of two long options
 *   option '-o' needs a value             "-o" last
 *   option '--output' needs a value       "--output" last
 */
#ifndef EXAMPLES_OPTIONS_H
#define EXAMPLES_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct example_options {
    int argc;
    char **argv;
    const char *short_options; /* starts with ':', so that ':' means a missing value */
    const struct option *long_options;
    int at;         /* the argument getopt_long read last */
    bool in_bundle; /* it stopped inside that argument */
} example_options;

/* Start reading argv[1...]: once per program run, before the first call. */
static inline void example_options_init(example_options *o, int argc, char **argv,
                                        const char *short_options,
                                        const struct option *long_options)
{
    o->argc = argc;
    o->argv = argv;
    o->short_options = short_options;
    o->long_options = long_options;
    o->at = 1;
    o->in_bundle = false;
    optind = 1;
    opterr = 0;
}

/* getopt_long's next answer, noting which argument it came from. */
static inline int example_options_next(example_options *o)
{
    if (!o->in_bundle) {
        int at = optind;
        while (at < o->argc && (o->argv[at][0] != '-' || o->argv[at][1] == '\0'))
            at++;
        o->at = at;
    }
    int c = getopt_long(o->argc, o->argv, o->short_options, o->long_options, NULL);
    o->in_bundle = c != -1 && optind == o->at;
    return c;
}

/* What getopt_long refused (its answer c, '?' or ':'), as a message. */
static inline void example_options_error(char *message, size_t size, const example_options *o,
                                         int c)
{
    const char *arg = o->at < o->argc ? o->argv[o->at] : "";
    if (strncmp(arg, "--", 2) != 0) {
        if (c == ':')
            snprintf(message, size, "option '-%c' needs a value", optopt);
        else if (strlen(arg) > 2)
            snprintf(message, size, "unknown option '-%c' (in '%s')", optopt, arg);
        else
            snprintf(message, size, "unknown option '-%c'", optopt);
        return;
    }
    const char *name = arg + 2;
    int name_len = (int)strcspn(name, "=");
    if (c == ':') {
        snprintf(message, size, "option '--%.*s' needs a value", name_len, name);
        return;
    }
    /* Refused with a known name: a value it does not take, or an ambiguous
     * prefix. Otherwise the name is unknown. */
    const struct option *match = NULL;
    int matches = 0;
    for (const struct option *l = o->long_options; l->name; l++) {
        if (strncmp(l->name, name, (size_t)name_len) != 0)
            continue;
        if (l->name[name_len] == '\0') {
            match = l;
            matches = 1;
            break;
        }
        match = l;
        matches++;
    }
    if (matches == 1 && name[name_len] == '=' && match->has_arg == no_argument)
        snprintf(message, size, "option '--%s' takes no value", match->name);
    else if (matches > 1)
        snprintf(message, size, "option '--%.*s' is ambiguous", name_len, name);
    else
        snprintf(message, size, "unknown option '--%.*s'", name_len, name);
}

#endif /* EXAMPLES_OPTIONS_H */
