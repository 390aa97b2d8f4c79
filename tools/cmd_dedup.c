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
 * counting-bloom) keeps its memory at N and lets its rate rise past N:
 * every line is still read and none printed twice, but more new lines are
 * dropped wrongly, so at the end dedup says on stderr how far past N the
 * filter went and the rate that means, and exits CLI_EXIT_PAST_CAPACITY
 * (3). A cuckoo filter is made to grow (growth 2), as the default does.
 * Static types are refused: they cannot take lines one by one.
 *
 * --stats tells, at the end, the lines read, printed and dropped, the
 * filter's type and size, the chance that the next new line would be
 * dropped wrongly, and the number of new lines expected to have been
 * dropped wrongly: from the filter's expected rate r when each line was
 * printed (sampled every 64 lines), r / (1 - r) wrongly dropped lines for
 * each line printed.
 */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static const char dedup_usage[] =
    "Usage: amq dedup [-n N] [-p P] [-t TYPE] [--hex] [--field N] [INPUT...]\n"
    "Print each line of the INPUT files ('-' or none: standard input) the first\n"
    "time it is seen, remembering lines in a filter, not in full: a new line is\n"
    "dropped wrongly (as if seen) with probability at most P. Lines are printed\n"
    "as written.\n"
    "\n"
    "  -n, --capacity N   distinct lines expected (default 1000000); the default\n"
    "                     type grows past N as needed, keeping P\n"
    "  -p, --fpr P        chance of wrongly dropping a new line (default 1e-6)\n"
    "  -t, --type TYPE    the filter to remember lines in (default scalable-bloom;\n"
    "                     cuckoo grows too; bloom, blocked-bloom, counting-bloom\n"
    "                     stay at the size for N and their rate rises past it)\n"
    "      --stats        at the end, print to stderr the lines read, printed and\n"
    "                     dropped, the filter's size, and its rate of wrongly\n"
    "                     dropped lines\n"
    "      --hex          compare lines by their hex-decoded bytes\n"
    "      --binary       keys are any bytes: no warning for input that looks binary\n"
    "      --field N      compare lines by their Nth field (empty if fewer)\n"
    "      --delimiter C  the byte between fields (default: tab; \\t for a tab)\n"
    "A line ends at \\n or \\r\\n (not part of the key), up to 64 MiB; gzip and\n"
    "zstd input is decompressed.\n"
    "Exit status: 0 at least one line printed, 1 none, 2 an error, 3 a type that\n"
    "does not grow passed N: every line was read, but more new lines than P allows\n"
    "may have been dropped (said on stderr).\n";

/* The chance that the filter takes a new line for one seen. */
static double expected_rate(const amq_filter *seen)
{
    amq_info info;
    amq_info_get(&info, seen);
    return isfinite(info.expected_fpr) ? info.expected_fpr : 1.0;
}

static void print_stats(const amq_filter *seen, uint64_t read, uint64_t printed,
                        double expected_wrongly_dropped)
{
    amq_info info;
    amq_info_get(&info, seen);
    char size[48];
    cli_format_bytes(size, sizeof size, (double)info.memory_bytes);
    cli_progress_clear();
    fprintf(stderr,
            "amq dedup: lines read        %llu\n"
            "amq dedup: lines printed     %llu\n"
            "amq dedup: lines dropped     %llu (seen before, or dropped wrongly)\n"
            "amq dedup: filter            %s, %s (%llu bytes), made for %llu lines\n"
            "amq dedup: rate now          %.3g (asked for %.3g): the chance that a new line\n"
            "amq dedup:                   is dropped wrongly, as if seen\n"
            "amq dedup: wrongly dropped   %.1f lines expected in all\n",
            (unsigned long long)read, (unsigned long long)printed,
            (unsigned long long)(read - printed), info.family, size,
            (unsigned long long)info.memory_bytes, (unsigned long long)info.capacity,
            info.expected_fpr, info.target_fpr, expected_wrongly_dropped);
}

int cli_dedup(int argc, char **argv)
{
    static const struct option own_options[] = {
        { "capacity", required_argument, NULL, 'n' }, { "fpr", required_argument, NULL, 'p' },
        { "type", required_argument, NULL, 't' },     { "help", no_argument, NULL, 'h' },
        { "stats", no_argument, NULL, 's' },
    };
    enum { OWN = sizeof own_options / sizeof own_options[0] };
    struct option options[OWN + CLI_INPUT_LONG_OPTIONS];
    memcpy(options, own_options, sizeof own_options);
    memcpy(options + OWN, cli_input_long_options, sizeof cli_input_long_options);
    cli_input_options input = { 0 };
    const char *capacity = "1000000", *fpr = "1e-6", *type = "scalable-bloom";
    bool stats = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":n:p:t:h", options, NULL)) != -1) {
        int taken = cli_input_option(&input, "dedup", c, optarg);
        if (taken < 0)
            return CLI_EXIT_ERROR;
        if (taken)
            continue;
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
        case 's':
            stats = true;
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
    if (strcmp(type, "cuckoo") == 0 &&
        cli_spec_add(&spec, "dedup", "growth", CLI_CUCKOO_GROWTH) < 0)
        return CLI_EXIT_ERROR;
    amq_filter *seen = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_new(&seen, spec.text, &diag);
    if (status != AMQ_OK) {
        cli_spec_error("dedup", diag.message[0] ? diag.message : amq_strerror(status));
        return CLI_EXIT_ERROR;
    }
    cli_input in;
    if (cli_input_open(&in, argv + optind, argc - optind, "dedup", &input) < 0) {
        amq_free(seen);
        return CLI_EXIT_ERROR;
    }
    const void *key;
    size_t len;
    int got;
    uint64_t printed = 0, read = 0;
    double rate = 0, expected_wrongly_dropped = 0;
    bool failed = false;
    while ((got = cli_input_next(&in, &key, &len)) > 0) {
        read++;
        status = amq_add_unique(seen, key, len);
        if (status == 0)
            continue;
        if (status < 0) {
            char where[4200];
            snprintf(where, sizeof where, "%s:%llu", in.name, (unsigned long long)in.line_number);
            cli_add_error("dedup", where, seen, status, false);
            failed = true;
            break;
        }
        cli_input_print_line(&in, stdout);
        /* A new line is printed with probability 1 - rate and dropped
         * wrongly with probability rate: rate / (1 - rate) dropped lines
         * are expected for each one printed. */
        if ((printed++ & 63) == 0)
            rate = expected_rate(seen);
        expected_wrongly_dropped += rate < 1 ? rate / (1 - rate) : 0;
    }
    cli_input_close(&in);
    bool past_capacity =
        !failed && got == 0 &&
        cli_warn_past_capacity("dedup", "the filter of lines seen", seen, printed, read,
                               "give a larger -n, or leave out -t: the default type grows");
    if (stats)
        print_stats(seen, read, printed, expected_wrongly_dropped);
    amq_free(seen);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("dedup: cannot write to standard output");
        return CLI_EXIT_ERROR;
    }
    if (got < 0 || failed)
        return CLI_EXIT_ERROR;
    if (past_capacity)
        return CLI_EXIT_PAST_CAPACITY;
    return printed ? CLI_EXIT_OK : CLI_EXIT_NONE;
}
