/*
 * cmd_update.c - `amq add FILE [INPUT...]` and `amq remove FILE [INPUT...]`:
 * change a saved dynamic filter and save it again atomically, holding the
 * file's lock (cli_lock.c) from the load to the save.
 *
 * All or nothing for add: if a key does not fit (the filter is full), the
 * file is left exactly as it was. Remove goes on past keys that are
 * certainly absent, reporting each and then how many there were, and exits
 * 1 if there were any. A file that no key changed is not rewritten.
 *
 * Every key read is added, copies included, and remove takes one copy
 * away: a key added k times answers "maybe" until it has been removed k
 * times. --add-once adds only keys the filter does not already answer
 * "maybe" for, and marks the file (amq_mark_add_once): such a file holds a
 * key once however often it came, and none of a key that was a false
 * positive when it came, so removing any key could make a key that was
 * added answer "no". A marked file is added to once from then on, with or
 * without the option, and remove refuses it.
 *
 * A filter that cannot take the change is refused before any input is read,
 * with what to do instead: a static filter (gcs, hfb, fuse) is built again
 * with `amq build`; a dynamic one that cannot remove names the types that
 * can; a file marked add-once says how it was made.
 */
#include "cli.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The input options, as add and remove both take them. */
#define INPUT_OPTIONS_HELP                                                                         \
    "      --hex          each key is hexadecimal, decoded to bytes\n"                             \
    "      --binary       keys are any bytes: read input that looks binary\n"                      \
    "      --field N      the key is the Nth field of the line (empty if fewer)\n"                 \
    "      --delimiter C  the byte between fields (default: tab; \\t for a tab)\n"                 \
    "A line ends at \\n or \\r\\n (not part of the key), up to 64 MiB; gzip and\n"                 \
    "zstd input is decompressed.\n"

static const char add_usage[] =
    "Usage: amq add FILE [--add-once] [--hex] [--field N] [INPUT...]\n"
    "Add keys, one per line from the INPUT files ('-' or none: standard input), to\n"
    "the filter saved in FILE (bloom, blocked-bloom, counting-bloom, scalable-bloom,\n"
    "cuckoo), and save it again. If a key does not fit, FILE is left unchanged.\n"
    "Every line is added, repeated ones too: in a counting-bloom or cuckoo filter\n"
    "a key added k times stays until it is removed k times.\n"
    "\n"
    "      --add-once     counting-bloom, cuckoo: add a key only if the filter does\n"
    "                     not already answer maybe for it, and mark FILE so: it is\n"
    "                     added to once from then on, and amq remove refuses it\n"
    "      --count-duplicates  add every copy (the default; refused with "
    "--add-once)\n" INPUT_OPTIONS_HELP
    "Exit status: 0 done, 2 an error (FILE unchanged), 3 done and saved, but the\n"
    "filter (bloom, blocked-bloom, counting-bloom) now holds more keys than it was\n"
    "made for: its false-positive rate is above its target (said on stderr).\n";

static const char remove_usage[] =
    "Usage: amq remove FILE [--hex] [--field N] [INPUT...]\n"
    "Remove keys, one per line, from the filter saved in FILE (counting-bloom,\n"
    "cuckoo), and save it again: each line takes one copy away. A key that is\n"
    "certainly not in the filter is reported and skipped. A key added k times\n"
    "answers maybe until it is removed k times; only removing a key that was never\n"
    "added (or more often than added) can make another key answer no. A file made\n"
    "or added to with --add-once is refused.\n"
    "\n" INPUT_OPTIONS_HELP
    "Exit status: 0 all removed, 1 some keys were not in the filter, 2 an error\n"
    "(FILE unchanged).\n";

/* Whether the filter in path cannot take the change, after saying so and
 * what to do instead. (A crawl frontier's files are refused before the
 * load: cli_refuse_frontier_file.) */
static bool refuse_change(const amq_filter *filter, const char *path, bool removing)
{
    const char *family = amq_filter_family(filter);
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
    if (removing && amq_add_once_marked(filter) == 1) {
        cli_error("remove: %s was filled with --add-once: it holds a key once however often "
                  "it was added, and none of a key that looked present when it came, so "
                  "removing a key could make keys you added answer no; build it again without "
                  "--add-once to remove keys",
                  path);
        return true;
    }
    return false;
}

static int update_file(const char *path, int input_count, char **inputs,
                       const cli_input_options *input, bool add_once, bool removing);

static int update(int argc, char **argv, bool removing)
{
    const char *command = removing ? "remove" : "add";
    struct option options[3 + CLI_INPUT_LONG_OPTIONS] = {
        { "help", no_argument, NULL, 'h' },
        { "count-duplicates", no_argument, NULL, 'd' },
        { "add-once", no_argument, NULL, 'o' },
    };
    /* remove takes every option of add but --count-duplicates and --add-once */
    size_t own = removing ? 1 : 3;
    memcpy(options + own, cli_input_long_options, sizeof cli_input_long_options);
    bool count_duplicates = false, add_once = false;
    cli_input_options input = { 0 };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        int taken = cli_input_option(&input, command, c, optarg);
        if (taken < 0)
            return CLI_EXIT_ERROR;
        if (taken)
            continue;
        if (c == 'd') {
            count_duplicates = true;
        } else if (c == 'o') {
            add_once = true;
        } else if (c == 'h') {
            fputs(removing ? remove_usage : add_usage, stdout);
            return CLI_EXIT_OK;
        } else {
            return cli_option_error(command, c, argc, argv, options);
        }
    }
    if (count_duplicates && add_once)
        return cli_usage_error(command, "--count-duplicates and --add-once contradict each other: "
                                        "give one (every copy is added by default)");
    if (optind >= argc)
        return cli_usage_error(command, "give the filter FILE");
    const char *path = argv[optind++];
    /* A frontier's filter changes only through its frontier, whose
     * manifest records its checksum (docs/FRONTIER.md): refused by the file
     * itself, whatever name or link leads to it, before the lock puts a
     * file beside it. */
    if (cli_refuse_frontier_file(command, path, true))
        return CLI_EXIT_ERROR;
    /* Held from the load to the save: another add or remove meanwhile
     * would save its change over ours, or ours over its. */
    cli_lock lock;
    if (cli_lock_take(&lock, command, path, false) != 0)
        return CLI_EXIT_ERROR;
    int exit_code = update_file(path, argc - optind, argv + optind, &input, add_once, removing);
    cli_lock_release(&lock);
    return exit_code;
}

/* Add the batch's keys through amq_add_many (amq_add_unique_many with
 * add_once), in order, counting those that changed the filter into
 * *changed as the key-by-key loop counts them. Returns AMQ_OK, or the
 * status of the first key that failed (*failed_at: its index in the
 * batch; nothing after it was added). */
static int add_batch(amq_filter *filter, cli_batch *batch, bool add_once, int *statuses,
                     uint64_t *changed, size_t *failed_at)
{
    cli_batch_seal(batch);
    size_t handled = 0;
    int status = add_once ? amq_add_unique_many(statuses, &handled, filter, batch->pointers,
                                                batch->lens, batch->count)
                          : amq_add_many(statuses, &handled, filter, batch->pointers, batch->lens,
                                         batch->count);
    /* With add_once, 0 is "maybe held already": nothing changed. */
    for (size_t i = 0; i < handled; i++)
        if (!(add_once && statuses[i] == 0))
            (*changed)++;
    *failed_at = handled;
    return status;
}

/* The add loop of update_file by batches: the same keys added
 * in the same order with the same errors, CLI_BATCH_KEYS keys per call.
 * Returns what the last cli_input_next returned (-1: an input error,
 * printed); *failed when a key could not be added (said, and the file is
 * to stay unchanged). */
static int add_in_batches(amq_filter *filter, cli_input *in, const char *path, bool add_once,
                          uint64_t *changed, bool *failed)
{
    cli_batch *batch = malloc(sizeof *batch);
    int *statuses = malloc(CLI_BATCH_KEYS * sizeof *statuses);
    if (!batch || !statuses) {
        free(batch);
        free(statuses);
        cli_error("add: out of memory");
        *failed = true;
        return 0;
    }
    cli_batch_init(batch, false);
    const void *key;
    size_t len;
    int got;
    for (;;) {
        got = cli_input_next(in, &key, &len);
        if (got > 0) {
            if (cli_batch_take(batch, in, key, len) != 0) {
                cli_error("add: %s:%llu: out of memory", in->name,
                          (unsigned long long)in->line_number);
                *failed = true;
                break;
            }
            if (!cli_batch_full(batch))
                continue;
        }
        size_t failed_at = 0;
        int status = batch->count > 0
                         ? add_batch(filter, batch, add_once, statuses, changed, &failed_at)
                         : AMQ_OK;
        if (status < 0) {
            char where[4200];
            snprintf(where, sizeof where, "%s:%llu", batch->names[failed_at],
                     (unsigned long long)batch->line_numbers[failed_at]);
            cli_add_error("add", where, filter, status);
            cli_error("add: %s is unchanged", path);
            *failed = true;
            break;
        }
        cli_batch_clear(batch);
        if (got <= 0)
            break;
    }
    cli_batch_free(batch);
    free(batch);
    free(statuses);
    return got;
}

/* Load the filter in path, add or remove the keys of the INPUT files and
 * save it again; update's exit code. */
static int update_file(const char *path, int input_count, char **inputs,
                       const cli_input_options *input, bool add_once, bool removing)
{
    const char *command = removing ? "remove" : "add";
    amq_filter *filter = NULL;
    if (cli_load(&filter, command, path, 0) != AMQ_OK)
        return CLI_EXIT_ERROR;
    if (refuse_change(filter, path, removing)) {
        amq_free(filter);
        return CLI_EXIT_ERROR;
    }

    cli_input in;
    if (cli_input_open(&in, inputs, input_count, command, input) < 0) {
        amq_free(filter);
        return CLI_EXIT_ERROR;
    }
    const void *key;
    size_t len;
    int got;
    bool failed = false;
    uint64_t absent = 0, changed = 0;
    /* --add-once marks a filter that removes keys (a filter that cannot
     * remove needs no mark: adding a key twice changes nothing there that
     * a removal could undo); a marked one is added to once. */
    bool newly_marked = false;
    if (add_once && amq_add_once_marked(filter) != 1) {
        amq_diag diag = { .message = "" };
        if (amq_mark_add_once(filter, &diag) != AMQ_OK) {
            char removing_types[256];
            cli_list_families(removing_types, sizeof removing_types, cli_family_removes, " and ");
            cli_error("add: %s: --add-once applies to %s filters, not %s", path, removing_types,
                      amq_filter_family(filter));
            cli_input_close(&in);
            amq_free(filter);
            return CLI_EXIT_ERROR;
        }
        newly_marked = true;
    }
    add_once = !removing && amq_add_once_marked(filter) == 1;
    /* Adds go through the generic batch calls (add_in_batches), which take
     * each family's batch path where it has one; removes key by key, each
     * absent key reported as it is met. */
    bool batched = !removing;
    if (batched)
        got = add_in_batches(filter, &in, path, add_once, &changed, &failed);
    while (!batched && (got = cli_input_next(&in, &key, &len)) > 0) {
        int status = amq_remove(filter, key, len);
        if (status >= 0) {
            changed++;
            continue;
        }
        if (status == AMQ_ENOTFOUND) {
            cli_progress_clear();
            fprintf(stderr, "amq remove: %s:%llu: not in the filter\n", in.name,
                    (unsigned long long)in.line_number);
            absent++;
            continue;
        }
        char where[4200];
        snprintf(where, sizeof where, "%s:%llu", in.name, (unsigned long long)in.line_number);
        cli_add_error(command, where, filter, status);
        cli_error("%s: %s is unchanged", command, path);
        failed = true;
        break;
    }
    if (got < 0)
        failed = true;
    if (!failed && (changed > 0 || newly_marked)) {
        cli_progress_phase(&in.progress, "saving");
        failed = cli_save(filter, command, path) != AMQ_OK;
    }
    cli_input_close(&in);
    if (failed) {
        amq_free(filter);
        return CLI_EXIT_ERROR;
    }
    int exit_code = absent ? CLI_EXIT_NONE : CLI_EXIT_OK;
    if (absent)
        fprintf(stderr, "amq remove: %llu of %llu keys were not in the filter%s\n",
                (unsigned long long)absent, (unsigned long long)(absent + changed),
                changed ? "" : "; the file is unchanged");
    if (!removing && cli_warn_past_capacity(command, path, filter, 0, 0, NULL))
        exit_code = CLI_EXIT_PAST_CAPACITY;
    amq_free(filter);
    return exit_code;
}

int cli_add(int argc, char **argv)
{
    return update(argc, argv, false);
}

int cli_remove(int argc, char **argv)
{
    return update(argc, argv, true);
}
