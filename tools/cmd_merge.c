/*
 * cmd_merge.c - `amq merge -o OUT A B ...`: the union of compatible filters.
 *
 * The first file is loaded for changing, the others mapped and merged into
 * it one by one (amq_merge); OUT is written once, at the end, and locked
 * (cli_lock.c) from before the first load until then. A family that
 * cannot merge is told what to do instead: add the other keys (a dynamic
 * filter) or build one filter from all of them (a static one).
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char merge_usage[] =
    "Usage: amq merge -o OUT [--force] FILE FILE...\n"
    "Save to OUT the union of the filters in the FILEs: a key any of them may\n"
    "hold, the result may hold. The filters must be of one type, built with the\n"
    "same size, parameters and hash.\n"
    "\n"
    "  -o, --output OUT   where to save the union\n"
    "      --force        overwrite OUT if it exists\n"
    "Exit status: 0 merged, 2 an error (nothing is written), 3 merged and saved,\n"
    "but the union holds more keys than a filter of that size was made for (bloom,\n"
    "blocked-bloom, counting-bloom): its false-positive rate is above the target.\n";

static int merge_into(const char *output, int input_count, char **inputs);

int cli_merge(int argc, char **argv)
{
    static const struct option options[] = {
        { "output", required_argument, NULL, 'o' },
        { "force", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *output = NULL;
    bool force = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (output)
                return cli_usage_error("merge", "-o/--output is given twice");
            output = optarg;
            break;
        case 'f':
            force = true;
            break;
        case 'h':
            fputs(merge_usage, stdout);
            return CLI_EXIT_OK;
        default:
            return cli_option_error("merge", c, argc, argv, options);
        }
    }
    if (!output)
        return cli_usage_error("merge", "give the output file with -o OUT");
    if (argc - optind < 2)
        return cli_usage_error("merge", "give at least two filter files");
    /* Before --force is looked at: no option replaces a frontier's file. */
    if (cli_refuse_frontier_file("merge", output, false))
        return CLI_EXIT_ERROR;
    if (!force && cli_refuse_overwrite("merge", output))
        return CLI_EXIT_ERROR;

    /* OUT stays locked from before the inputs are read until it is saved:
     * an add to OUT meanwhile (OUT may be one of the inputs) would be lost. */
    cli_lock lock;
    if (cli_lock_take(&lock, "merge", output, true) != 0)
        return CLI_EXIT_ERROR;
    int exit_code = merge_into(output, argc - optind, argv + optind);
    cli_lock_release(&lock);
    return exit_code;
}

/* Save to output the union of the filters in the files inputs; cli_merge's
 * exit code. */
static int merge_into(const char *output, int input_count, char **inputs)
{
    amq_filter *result = NULL;
    if (cli_load(&result, "merge", inputs[0], 0) != AMQ_OK)
        return CLI_EXIT_ERROR;
    for (int i = 1; i < input_count; i++) {
        amq_filter *other = NULL;
        if (cli_load(&other, "merge", inputs[i], 0) != AMQ_OK) {
            amq_free(result);
            return CLI_EXIT_ERROR;
        }
        amq_diag diag = { .message = "" };
        int status = amq_merge(result, other, &diag);
        amq_free(other);
        if (status == AMQ_EUNSUPPORTED) {
            const char *family = amq_filter_family(result);
            cli_error("merge: %s: %s; %s", inputs[0],
                      diag.message[0] ? diag.message : amq_strerror(status),
                      cli_family_is_dynamic(family)
                          ? "add the other filters' keys to it with `amq add`"
                          : "build one filter from all the keys with `amq build`");
            amq_free(result);
            return CLI_EXIT_ERROR;
        }
        if (status != AMQ_OK) {
            cli_error("merge: %s and %s: %s", inputs[0], inputs[i],
                      diag.message[0] ? diag.message : amq_strerror(status));
            amq_free(result);
            return CLI_EXIT_ERROR;
        }
    }
    int exit_code = cli_save(result, "merge", output) == AMQ_OK ? CLI_EXIT_OK : CLI_EXIT_ERROR;
    /* The union of filters each near its capacity holds more keys than
     * that capacity: saved, but said. */
    if (exit_code == CLI_EXIT_OK && cli_warn_past_capacity("merge", output, result, 0, 0, NULL))
        exit_code = CLI_EXIT_PAST_CAPACITY;
    amq_free(result);
    return exit_code;
}
