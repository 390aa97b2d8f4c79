/*
 * cmd_query.c - `amq query FILE [-v] [-c] [INPUT...]`: print the lines that
 * may be in the filter, like grep prints the lines that match.
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char query_usage[] =
    "Usage: amq query FILE [-v] [-c] [--mmap] [--hex] [--field N] [INPUT...]\n"
    "Print the lines of the INPUT files ('-' or none: standard input) that may be\n"
    "in the filter saved in FILE. A line printed may be a false positive; a line\n"
    "not printed is certainly not in the set. Lines are printed as written.\n"
    "\n"
    "  -v, --invert       print the lines that are certainly not in the filter\n"
    "  -c, --count        print only the number of such lines\n"
    "      --mmap         map FILE instead of reading it (a quicker start on a large\n"
    "                     file; nothing may truncate or rewrite it in place meanwhile)\n"
    "      --hex          each key is hexadecimal, decoded to bytes before the query\n"
    "      --binary       keys are any bytes: no warning for input that looks binary\n"
    "      --field N      the key is the Nth field of the line (empty if fewer)\n"
    "      --delimiter C  the byte between fields (default: tab; \\t for a tab)\n"
    "A line ends at \\n or \\r\\n (not part of the key), up to 64 MiB; gzip and\n"
    "zstd input is decompressed.\n"
    "An hfb filter of raw IDs (built without --hash md5) reads each line as an ID\n"
    "of 32 hex digits.\n"
    "Exit status: 0 at least one line printed (or counted), 1 none, 2 an error.\n";

int cli_query(int argc, char **argv)
{
    enum { OPT_MMAP = 1000 };
    static const struct option own_options[] = {
        { "invert", no_argument, NULL, 'v' },
        { "count", no_argument, NULL, 'c' },
        { "mmap", no_argument, NULL, OPT_MMAP },
        { "help", no_argument, NULL, 'h' },
    };
    enum { OWN = sizeof own_options / sizeof own_options[0] };
    struct option options[OWN + CLI_INPUT_LONG_OPTIONS];
    memcpy(options, own_options, sizeof own_options);
    memcpy(options + OWN, cli_input_long_options, sizeof cli_input_long_options);
    cli_input_options input = { 0 };
    bool invert = false, count_only = false;
    /* Read, not mapped, unless asked: a mapped file truncated by another
     * process kills this one with SIGBUS, and one rewritten in place gives
     * wrong answers (amq.h, AMQ_LOAD_MMAP). */
    unsigned load_flags = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":vch", options, NULL)) != -1) {
        int taken = cli_input_option(&input, "query", c, optarg);
        if (taken < 0)
            return CLI_EXIT_ERROR;
        if (taken)
            continue;
        switch (c) {
        case 'v':
            invert = true;
            break;
        case 'c':
            count_only = true;
            break;
        case OPT_MMAP:
            load_flags = AMQ_LOAD_MMAP;
            break;
        case 'h':
            fputs(query_usage, stdout);
            return CLI_EXIT_OK;
        default:
            return cli_option_error("query", c, argc, argv, options);
        }
    }
    if (optind >= argc)
        return cli_usage_error("query", "give the filter FILE");
    const char *path = argv[optind++];
    amq_filter *filter = NULL;
    if (cli_load(&filter, "query", path, load_flags) != AMQ_OK)
        return CLI_EXIT_ERROR;

    bool ids = cli_filter_takes_ids(filter);
    cli_input in;
    input.hex = input.hex || ids;
    if (cli_input_open(&in, argv + optind, argc - optind, "query", &input) < 0) {
        amq_free(filter);
        return CLI_EXIT_ERROR;
    }
    in.ids = ids;
    const void *key;
    size_t len;
    int got;
    uint64_t selected = 0;
    bool failed = false;
    while ((got = cli_input_next(&in, &key, &len)) > 0) {
        int answer = amq_contains(filter, key, len);
        if (answer < 0) {
            cli_error("query: %s:%llu: %s", in.name, (unsigned long long)in.line_number,
                      amq_strerror(answer));
            failed = true;
            break;
        }
        if ((answer == 1) != invert) {
            selected++;
            if (!count_only)
                cli_input_print_line(&in, stdout);
        }
    }
    cli_input_close(&in);
    amq_free(filter);
    if (got < 0 || failed)
        return CLI_EXIT_ERROR;
    if (count_only)
        printf("%llu\n", (unsigned long long)selected);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("query: cannot write to standard output");
        return CLI_EXIT_ERROR;
    }
    return selected ? CLI_EXIT_OK : CLI_EXIT_NONE;
}
