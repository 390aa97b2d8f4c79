/*
 * cmd_dedup.c - `amq dedup [-n N] [-p P] [INPUT...]`: print each line the
 * first time it is seen, in bounded memory.
 *
 * The lines seen so far are kept in a filter: a line the filter says is
 * certainly absent is printed and added; a line it may hold is dropped.
 * Filters have no false negatives, so a line is never printed twice; a
 * false positive makes a line never seen look seen, and it is dropped
 * wrongly. The chance of that, per distinct line, is at most P.
 *
 * The default filter is a scalable Bloom filter sized for N lines at first
 * (-n, default 10^6): past N it adds larger stages with tighter rates, so
 * the bound P holds however many lines come, and memory grows with the
 * distinct lines (about 40 MB for 5 * 10^6 at P = 10^-6) instead of with
 * their bytes, as `awk '!seen[$0]++'` or `sort -u` do. Another dynamic type
 * can be chosen with -t; a fixed-size one (bloom, blocked-bloom,
 * counting-bloom) keeps its memory at N and lets its rate rise past N, and
 * cuckoo refuses lines past its capacity (an error, exit 2). Static types
 * are refused: they cannot take lines one by one.
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char dedup_usage[] =
    "Usage: amq dedup [-n N] [-p P] [-t TYPE] [--hex] [INPUT...]\n"
    "Print each line of the INPUT files ('-' or none: standard input) the first\n"
    "time it is seen, remembering lines in a filter, not in full: a new line is\n"
    "dropped wrongly (as if seen) with probability at most P.\n"
    "\n"
    "  -n, --capacity N   distinct lines expected (default 1000000); the default\n"
    "                     type grows past N as needed, keeping P\n"
    "  -p, --fpr P        chance of wrongly dropping a new line (default 1e-6)\n"
    "  -t, --type TYPE    the filter to remember lines in (default scalable-bloom;\n"
    "                     bloom, blocked-bloom, counting-bloom stay at the size\n"
    "                     for N and their rate rises past it; cuckoo fails past N)\n"
    "      --hex          compare lines by their hex-decoded bytes\n"
    "Exit status: 0 at least one line printed, 1 none, 2 an error.\n";

int cli_dedup(int argc, char **argv)
{
    static const struct option options[] = {
        { "capacity", required_argument, NULL, 'n' }, { "fpr", required_argument, NULL, 'p' },
        { "type", required_argument, NULL, 't' },     { "hex", no_argument, NULL, 'x' },
        { "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
    };
    const char *capacity = "1000000", *fpr = "1e-6", *type = "scalable-bloom";
    bool hex = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":n:p:t:h", options, NULL)) != -1) {
        switch (c) {
        case 'n':
            capacity = optarg;
            break;
        case 'p':
            fpr = optarg;
            break;
        case 't':
            type = optarg;
            break;
        case 'x':
            hex = true;
            break;
        case 'h':
            fputs(dedup_usage, stdout);
            return CLI_EXIT_OK;
        default:
            return cli_option_error("dedup", c, argc, argv, options);
        }
    }
    if (amq_family_is_static(type) == 1) {
        char dynamic[256];
        cli_list_families(dynamic, sizeof dynamic, cli_family_is_dynamic, " or ");
        cli_error("dedup: %s is static: dedup adds lines as it reads them: use -t %s", type,
                  dynamic);
        return CLI_EXIT_ERROR;
    }
    cli_spec spec;
    cli_spec_init(&spec, type);
    if (cli_spec_add(&spec, "dedup", "capacity", capacity) < 0 ||
        cli_spec_add(&spec, "dedup", "fpr", fpr) < 0)
        return CLI_EXIT_ERROR;
    amq_filter *seen = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_new_ex(&seen, spec.text, &diag);
    if (status != AMQ_OK) {
        cli_error("dedup: %s", diag.message[0] ? diag.message : amq_strerror(status));
        return CLI_EXIT_ERROR;
    }
    cli_input in;
    if (cli_input_open(&in, argv + optind, argc - optind, "dedup", hex) < 0) {
        amq_free(seen);
        return CLI_EXIT_ERROR;
    }
    const void *key;
    size_t len;
    int got;
    uint64_t printed = 0;
    bool failed = false;
    while ((got = cli_input_next(&in, &key, &len)) > 0) {
        status = amq_add_unique(seen, key, len);
        if (status == 0)
            continue;
        if (status < 0) {
            cli_error("dedup: %s:%llu: %s%s", in.name, (unsigned long long)in.line_number,
                      amq_strerror(status),
                      status == AMQ_EFULL ? " (give a larger -n, or a type that grows)" : "");
            failed = true;
            break;
        }
        fwrite(in.line, 1, in.line_len, stdout);
        putchar('\n');
        printed++;
    }
    cli_input_close(&in);
    amq_free(seen);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("dedup: cannot write to standard output");
        return CLI_EXIT_ERROR;
    }
    if (got < 0 || failed)
        return CLI_EXIT_ERROR;
    return printed ? CLI_EXIT_OK : CLI_EXIT_NONE;
}
