/*
 * cmd_query.c - `amq query FILE [-v] [-c] [INPUT...]`: print the lines that
 * may be in the filter, like grep prints the lines that match.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
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
    "      --binary       keys are any bytes: read input that looks binary\n"
    "      --field N      the key is the Nth field of the line (empty if fewer)\n"
    "      --delimiter C  the byte between fields (default: tab; \\t for a tab)\n"
    "A line ends at \\n or \\r\\n (not part of the key), up to 64 MiB; gzip and\n"
    "zstd input is decompressed.\n"
    "An hfb filter of raw IDs (built without --hash md5) reads each line as an ID\n"
    "of 32 hex digits.\n"
    "Exit status: 0 at least one line printed (or counted), 1 none, 2 an error.\n";

typedef struct query_answers {
    bool invert, count_only;
    uint64_t selected; /* lines printed (or counted) so far */
    int write_error;   /* the errno of a failed write of standard output, once one failed */
    uint8_t results[CLI_BATCH_KEYS];
} query_answers;

/* Ask the batch's keys, print (or count) the lines selected and empty the
 * batch. A failed batch call is asked again key by key, so that the lines
 * before the key that fails are printed and the error names its line, as
 * when every key was asked alone. Returns 0, or -1 after the error. */
static int ask_batch(query_answers *a, const amq_filter *filter, cli_batch *batch, cli_input *in)
{
    cli_batch_seal(batch);
    int status = amq_contains_many(a->results, filter, batch->pointers, batch->lens, batch->count);
    for (size_t i = 0; i < batch->count; i++) {
        int answer = status == AMQ_OK ? a->results[i]
                                      : amq_contains(filter, batch->pointers[i], batch->lens[i]);
        if (answer < 0) {
            cli_error("query: %s:%llu: %s", batch->names[i],
                      (unsigned long long)batch->line_numbers[i], amq_strerror(answer));
            cli_batch_clear(batch);
            return -1;
        }
        if ((answer == 1) != a->invert) {
            a->selected++;
            errno = 0;
            if (!a->count_only && cli_batch_print_line(batch, i, in, stdout) != 0) {
                /* Nothing more can reach the reader: stop reading. */
                a->write_error = errno ? errno : EIO;
                cli_stdout_error("query", a->write_error);
                cli_batch_clear(batch);
                return -1;
            }
        }
    }
    cli_batch_clear(batch);
    return 0;
}

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
    /* Asked CLI_BATCH_KEYS at a time through the filter's batch call, and
     * printed in input order once answered. */
    cli_batch *batch = malloc(sizeof *batch);
    if (!batch) {
        cli_error("query: out of memory");
        cli_input_close(&in);
        amq_free(filter);
        return CLI_EXIT_ERROR;
    }
    cli_batch_init(batch, !count_only);
    const void *key;
    size_t len;
    int got;
    query_answers answers = { .invert = invert, .count_only = count_only };
    bool failed = false;
    for (;;) {
        got = cli_input_next(&in, &key, &len);
        if (got > 0) {
            if (cli_batch_take(batch, &in, key, len) != 0) {
                cli_error("query: %s:%llu: out of memory", in.name,
                          (unsigned long long)in.line_number);
                failed = true;
                break;
            }
            if (!cli_batch_full(batch))
                continue;
        }
        /* At the end, or at a line that could not be read, the lines before
         * it are answered first, as they were when asked one by one. */
        if (batch->count > 0 && ask_batch(&answers, filter, batch, &in) != 0) {
            failed = true;
            break;
        }
        if (got <= 0)
            break;
    }
    uint64_t selected = answers.selected;
    cli_batch_free(batch);
    free(batch);
    cli_input_close(&in);
    amq_free(filter);
    if (got < 0 || failed)
        return CLI_EXIT_ERROR;
    if (answers.write_error)
        return CLI_EXIT_ERROR; /* said */
    errno = 0;
    if (count_only && printf("%llu\n", (unsigned long long)selected) < 0)
        return cli_stdout_error("query", errno);
    if (cli_stdout_flush("query", 0) != 0)
        return CLI_EXIT_ERROR;
    return selected ? CLI_EXIT_OK : CLI_EXIT_NONE;
}
