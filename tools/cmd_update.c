/*
 * cmd_update.c - `amq add FILE [INPUT...]` and `amq remove FILE [INPUT...]`:
 * change a saved dynamic filter and save it again atomically.
 *
 * All or nothing for add: if a key does not fit (the filter is full), the
 * file is left exactly as it was. Remove goes on past keys that are
 * certainly absent, reporting each and then how many there were, and exits
 * 1 if there were any. A file that no key changed is not rewritten.
 *
 * A filter that cannot take the change is refused before any input is read,
 * with what to do instead: a static filter (gcs, hfb, fuse) is built again
 * with `amq build`; a dynamic one that cannot remove names the types that
 * can.
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char add_usage[] =
    "Usage: amq add FILE [--hex] [INPUT...]\n"
    "Add keys, one per line from the INPUT files ('-' or none: standard input), to\n"
    "the filter saved in FILE (bloom, blocked-bloom, counting-bloom, scalable-bloom,\n"
    "cuckoo), and save it again. If a key does not fit, FILE is left unchanged.\n"
    "\n"
    "      --hex    each line is hexadecimal, decoded to bytes\n"
    "Exit status: 0 done, 2 an error (FILE unchanged).\n";

static const char remove_usage[] =
    "Usage: amq remove FILE [--hex] [INPUT...]\n"
    "Remove keys, one per line, from the filter saved in FILE (counting-bloom,\n"
    "cuckoo), and save it again. A key that is certainly not in the filter is\n"
    "reported and skipped. Removing a key that was never added can remove\n"
    "another key's trace and cause false negatives: remove only keys you added.\n"
    "\n"
    "      --hex    each line is hexadecimal, decoded to bytes\n"
    "Exit status: 0 all removed, 1 some keys were not in the filter, 2 an error\n"
    "(FILE unchanged).\n";

/* Whether the filter in path cannot take the change, after saying so and
 * what to do instead. */
static bool refuse_change(const amq_filter *filter, const char *path, bool removing)
{
    const char *family = amq_family(filter);
    if (!cli_family_is_dynamic(family)) {
        if (removing)
            cli_error("remove: %s: %s is static and cannot remove keys: build it again from the "
                      "remaining keys with `amq build`",
                      path, family);
        else
            cli_error("add: %s: %s is static and cannot add keys: build it from the whole set "
                      "with `amq build`",
                      path, family);
        return true;
    }
    if (removing && !cli_family_removes(family)) {
        char removable[256];
        cli_list_families(removable, sizeof removable, cli_family_removes, " or ");
        cli_error("remove: %s: %s filters cannot remove keys: use %s", path, family, removable);
        return true;
    }
    return false;
}

static int update(int argc, char **argv, bool removing)
{
    const char *command = removing ? "remove" : "add";
    static const struct option options[] = {
        { "hex", no_argument, NULL, 'x' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool hex = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        if (c == 'x') {
            hex = true;
        } else if (c == 'h') {
            fputs(removing ? remove_usage : add_usage, stdout);
            return CLI_EXIT_OK;
        } else {
            return cli_option_error(command, c, argc, argv, options);
        }
    }
    if (optind >= argc)
        return cli_usage_error(command, "give the filter FILE");
    const char *path = argv[optind++];
    amq_filter *filter = NULL;
    if (cli_load(&filter, command, path, 0) != AMQ_OK)
        return CLI_EXIT_ERROR;
    if (refuse_change(filter, path, removing)) {
        amq_free(filter);
        return CLI_EXIT_ERROR;
    }

    cli_input in;
    if (cli_input_open(&in, argv + optind, argc - optind, command, hex) < 0) {
        amq_free(filter);
        return CLI_EXIT_ERROR;
    }
    const void *key;
    size_t len;
    int got;
    bool failed = false;
    uint64_t absent = 0, changed = 0;
    while ((got = cli_input_next(&in, &key, &len)) > 0) {
        int status = removing ? amq_remove(filter, key, len) : amq_add(filter, key, len);
        if (status == AMQ_OK) {
            changed++;
            continue;
        }
        if (removing && status == AMQ_ENOTFOUND) {
            cli_progress_clear();
            fprintf(stderr, "amq remove: %s:%llu: not in the filter\n", in.name,
                    (unsigned long long)in.line_number);
            absent++;
            continue;
        }
        cli_error("%s: %s:%llu: %s; %s is unchanged", command, in.name,
                  (unsigned long long)in.line_number, amq_strerror(status), path);
        failed = true;
        break;
    }
    if (got < 0)
        failed = true;
    if (!failed && changed > 0) {
        cli_progress_phase(&in.progress, "saving");
        failed = cli_save(filter, command, path) != AMQ_OK;
    }
    cli_input_close(&in);
    amq_free(filter);
    if (failed)
        return CLI_EXIT_ERROR;
    if (absent)
        fprintf(stderr, "amq remove: %llu of %llu keys were not in the filter%s\n",
                (unsigned long long)absent, (unsigned long long)(absent + changed),
                changed ? "" : "; the file is unchanged");
    return absent ? CLI_EXIT_NONE : CLI_EXIT_OK;
}

int cli_add(int argc, char **argv)
{
    return update(argc, argv, false);
}

int cli_remove(int argc, char **argv)
{
    return update(argc, argv, true);
}
