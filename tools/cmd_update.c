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
 * A filter that cannot take the change is refused before any input is read,
 * with what to do instead: a static filter (gcs, hfb, fuse) is built again
 * with `amq build`; a dynamic one that cannot remove names the types that
 * can.
 */
#include "cli.h"

#include "amq/bloom.h"
#include "amq/cuckoo.h"
#include "amq/frontier.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The input options, as add and remove both take them. */
#define INPUT_OPTIONS_HELP                                                                         \
    "      --hex          each key is hexadecimal, decoded to bytes\n"                             \
    "      --binary       keys are any bytes: no warning for input that looks binary\n"            \
    "      --field N      the key is the Nth field of the line (empty if fewer)\n"                 \
    "      --delimiter C  the byte between fields (default: tab; \\t for a tab)\n"                 \
    "A line ends at \\n or \\r\\n (not part of the key), up to 64 MiB; gzip and\n"                 \
    "zstd input is decompressed.\n"

static const char add_usage[] =
    "Usage: amq add FILE [--count-duplicates] [--hex] [--field N] [INPUT...]\n"
    "Add keys, one per line from the INPUT files ('-' or none: standard input), to\n"
    "the filter saved in FILE (bloom, blocked-bloom, counting-bloom, scalable-bloom,\n"
    "cuckoo), and save it again. If a key does not fit, FILE is left unchanged.\n"
    "A cuckoo filter takes a key only if it does not already hold it.\n"
    "\n"
    "      --count-duplicates  cuckoo: add every copy of a key, so that each copy\n"
    "                     needs its own remove\n" INPUT_OPTIONS_HELP
    "Exit status: 0 done, 2 an error (FILE unchanged), 3 done and saved, but the\n"
    "filter (bloom, blocked-bloom, counting-bloom) now holds more keys than it was\n"
    "made for: its false-positive rate is above its target (said on stderr).\n";

static const char remove_usage[] =
    "Usage: amq remove FILE [--hex] [--field N] [INPUT...]\n"
    "Remove keys, one per line, from the filter saved in FILE (counting-bloom,\n"
    "cuckoo), and save it again. A key that is certainly not in the filter is\n"
    "reported and skipped. Removing a key that was never added can remove\n"
    "another key's trace and cause false negatives: remove only keys you added.\n"
    "\n" INPUT_OPTIONS_HELP
    "Exit status: 0 all removed, 1 some keys were not in the filter, 2 an error\n"
    "(FILE unchanged).\n";

/* Whether the filter in path cannot take the change, after saying so and
 * what to do instead. A crawl frontier's filter changes only through its
 * frontier, whose manifest records its checksum (docs/FRONTIER.md). */
static bool refuse_change(const amq_filter *filter, const char *path, bool removing)
{
    const char *command = removing ? "remove" : "add";
    /* path was just loaded, so it is shorter than PATH_MAX, and its
     * directory fits in strlen(path) + 2 bytes. */
    char directory[PATH_MAX + 1];
    amq_diag diag = { .message = "" };
    int frontier = amq_frontier_is_filter(directory, sizeof directory, path, &diag);
    if (frontier < 0) {
        /* Not knowing, change nothing: a frontier's filter changed here
         * would make its frontier refuse to open. */
        cli_error("%s: %s", command, diag.message);
        return true;
    }
    if (frontier) {
        cli_error("%s: %s is the filter of the crawl frontier in %s: it changes only through "
                  "that frontier (amq_frontier_push), which would refuse to open after a change "
                  "made here; query it with amq query",
                  command, path, directory);
        return true;
    }
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
    return false;
}

static int update_file(const char *path, int input_count, char **inputs,
                       const cli_input_options *input, bool count_duplicates, bool removing);

static int update(int argc, char **argv, bool removing)
{
    const char *command = removing ? "remove" : "add";
    struct option options[2 + CLI_INPUT_LONG_OPTIONS] = {
        { "help", no_argument, NULL, 'h' },
        { "count-duplicates", no_argument, NULL, 'd' },
    };
    /* remove takes every option of add but --count-duplicates */
    size_t own = removing ? 1 : 2;
    memcpy(options + own, cli_input_long_options, sizeof cli_input_long_options);
    bool count_duplicates = false;
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
    /* Held from the load to the save: another add or remove meanwhile
     * would save its change over ours, or ours over its. */
    cli_lock lock;
    if (cli_lock_take(&lock, command, path, false) != 0)
        return CLI_EXIT_ERROR;
    int exit_code =
        update_file(path, argc - optind, argv + optind, &input, count_duplicates, removing);
    cli_lock_release(&lock);
    return exit_code;
}

/* Whether the filter's family adds keys through a batch call: classic and
 * scalable Bloom, cuckoo (the typed add_many calls). The others add key by
 * key. */
static bool batch_adds(amq_filter *filter)
{
    return amq_bloom_unwrap(filter) || amq_scalable_bloom_unwrap(filter) ||
           amq_cuckoo_unwrap(filter);
}

/* Add the batch's keys through the family's add_many, in order, counting
 * those that changed the filter into *changed as the key-by-key loop
 * counts them. Returns AMQ_OK, or the status of the first key that failed
 * (*failed_at: its index in the batch; nothing after it was added). */
static int add_batch(amq_filter *filter, cli_batch *batch, bool add_once, int *statuses,
                     uint64_t *changed, size_t *failed_at)
{
    cli_batch_seal(batch);
    size_t count = batch->count;
    amq_bloom *bloom = amq_bloom_unwrap(filter);
    if (bloom) {
        /* A classic filter's add cannot fail, and every add counts. */
        amq_bloom_add_many(NULL, bloom, batch->pointers, batch->lens, count);
        *changed += count;
        return AMQ_OK;
    }
    amq_cuckoo *cuckoo = amq_cuckoo_unwrap(filter);
    amq_scalable_bloom *scalable = amq_scalable_bloom_unwrap(filter);
    /* add_many stops after a key that fails, and a cuckoo filter's also
     * after a key that leaves it full: then it goes on from the next key,
     * whose add will say whether the filter can take it. */
    for (size_t done = 0; done < count;) {
        const void *const *keys = batch->pointers + done;
        const size_t *lens = batch->lens + done;
        size_t n = count - done, handled;
        if (cuckoo)
            handled = add_once ? amq_cuckoo_add_unique_many(statuses, cuckoo, keys, lens, n)
                               : amq_cuckoo_add_many(statuses, cuckoo, keys, lens, n);
        else
            handled = amq_scalable_bloom_add_many(statuses, scalable, keys, lens, n);
        for (size_t i = 0; i < handled; i++) {
            if (statuses[i] < 0) {
                *failed_at = done + i;
                return statuses[i];
            }
            /* With add_once, 0 is "maybe held already": nothing changed. */
            if (!(add_once && statuses[i] == 0))
                (*changed)++;
        }
        done += handled;
    }
    return AMQ_OK;
}

/* The add loop of update_file by batches (batch_adds): the same keys added
 * in the same order with the same errors, CLI_BATCH_KEYS keys per call.
 * Returns what the last cli_input_next returned (-1: an input error,
 * printed); *failed when a key could not be added (said, and the file is
 * to stay unchanged). */
static int add_in_batches(amq_filter *filter, cli_input *in, const char *path, bool add_once,
                          bool count_duplicates, uint64_t *changed, bool *failed)
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
            cli_add_error("add", where, filter, status, count_duplicates);
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
                       const cli_input_options *input, bool count_duplicates, bool removing)
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
    /* Without --count-duplicates a key is added once: a cuckoo filter would
     * otherwise fill with copies of keys added again. */
    if (count_duplicates && !cli_family_adds_once(amq_filter_family(filter))) {
        cli_error("add: %s: --count-duplicates applies to cuckoo filters, not %s", path,
                  amq_filter_family(filter));
        cli_input_close(&in);
        amq_free(filter);
        return CLI_EXIT_ERROR;
    }
    bool add_once =
        !removing && !count_duplicates && cli_family_adds_once(amq_filter_family(filter));
    /* The adds of the families that have a batch add go through it
     * (add_in_batches); the others, and every remove, key by key. */
    bool batched = !removing && batch_adds(filter);
    if (batched)
        got = add_in_batches(filter, &in, path, add_once, count_duplicates, &changed, &failed);
    while (!batched && (got = cli_input_next(&in, &key, &len)) > 0) {
        int status = removing   ? amq_remove(filter, key, len)
                     : add_once ? amq_add_unique(filter, key, len)
                                : amq_add(filter, key, len);
        if (status == 0 && add_once)
            continue; /* maybe held already: nothing changed */
        if (status >= 0) {
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
        char where[4200];
        snprintf(where, sizeof where, "%s:%llu", in.name, (unsigned long long)in.line_number);
        cli_add_error(command, where, filter, status, count_duplicates);
        cli_error("%s: %s is unchanged", command, path);
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
