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
 * distinct lines (about 50 MB for 5 * 10^6 at P = 10^-6) instead of with
 * their bytes, as `awk '!seen[$0]++'` or `sort -u` do. Another dynamic type
 * can be chosen with -t; a fixed-size one (bloom, blocked-bloom,
 * counting-bloom) keeps its memory at N and lets its rate rise past N:
 * every line is still read and none printed twice, but more new lines are
 * dropped wrongly, so at the end dedup says on stderr how far past N the
 * filter went and the rate that means, and exits CLI_EXIT_PAST_CAPACITY
 * (3). A cuckoo filter is made to grow (growth 2), as the default does.
 * Static types are refused: they cannot take lines one by one.
 *
 * Its stages are 512-bit blocks (--stages: classic, split-block, block;
 * docs/BLOOM.md), and it takes lines in batches of 1024
 * (amq_add_unique_many), copied out of the input's buffer: the batch call
 * hashes them ahead and prefetches every stage's block of each, then adds
 * them in order, so a line repeated inside a batch is still caught and the
 * output keeps the input's order.
 *
 * --stats tells, at the end, the lines read, printed and dropped, the
 * filter's type and size, the chance that the next new line would be
 * dropped wrongly, and the number of new lines expected to have been
 * dropped wrongly: from the filter's expected rate r when each line was
 * printed (sampled every 64 lines; once per batch for a filter that always
 * grows), r / (1 - r) wrongly dropped lines for each line printed.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lines a filter that always grows takes per batch (amq_add_unique_many),
 * and the bytes of lines and keys a batch holds before it is handed over
 * anyway (a batch always takes at least one line, however long). */
#define DEDUP_BATCH_LINES 1024

/* The scalable filter's stages unless --stages says otherwise: 512-bit
 * blocks, one cache line per stage and line. At the default P (stage rates
 * near 10^-7) they need about 50 bits per line against classic stages' 34
 * and split blocks' 105; on bench/dedup.sh's input they were 5 times
 * faster than classic stages in a tenth of awk's memory, where split
 * blocks, 10% faster still, took a fifth (docs/BLOOM.md). */
#ifndef DEDUP_STAGES
#define DEDUP_STAGES "block"
#endif
#define DEDUP_BATCH_BYTES ((size_t)1 << 20)

/* The lines of a batch, copied out of the input's buffer (which the next
 * read may move): each line as written, with its line end, then its key. */
typedef struct dedup_batch {
    char *bytes;
    size_t used, capacity;
    size_t count;
    size_t line_at[DEDUP_BATCH_LINES], line_len[DEDUP_BATCH_LINES];
    size_t key_at[DEDUP_BATCH_LINES];
    size_t key_lens[DEDUP_BATCH_LINES];
    bool ended[DEDUP_BATCH_LINES]; /* the line had a line end */
    uint64_t line_number[DEDUP_BATCH_LINES];
    const char *name[DEDUP_BATCH_LINES];
    const void *keys[DEDUP_BATCH_LINES];
    int results[DEDUP_BATCH_LINES];
} dedup_batch;

/* Append the input's last line and its key to the batch: 0, or -1 out of
 * memory. */
static int batch_take(dedup_batch *b, const cli_input *in, const void *key, size_t len)
{
    size_t line = in->line_len + in->ending_len;
    if (b->capacity - b->used < line + len) {
        size_t capacity = b->capacity ? b->capacity : DEDUP_BATCH_BYTES;
        while (capacity - b->used < line + len)
            capacity *= 2;
        char *bytes = realloc(b->bytes, capacity);
        if (!bytes)
            return -1;
        b->bytes = bytes;
        b->capacity = capacity;
    }
    size_t i = b->count++;
    b->line_at[i] = b->used;
    b->line_len[i] = line;
    b->ended[i] = in->ending_len != 0;
    memcpy(b->bytes + b->used, in->line, line);
    b->used += line;
    b->key_at[i] = b->used;
    b->key_lens[i] = len;
    if (len)
        memcpy(b->bytes + b->used, key, len);
    b->used += len;
    b->line_number[i] = in->line_number;
    b->name[i] = in->name;
    return 0;
}

static const char dedup_usage[] =
    "Usage: amq dedup [-n N] [-p P] [-t TYPE] [--stages L] [--hex] [--field N] [INPUT...]\n"
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
    "      --stages L     the default type's stages: block (default), split-block\n"
    "                     (faster, about twice the memory) or classic (smaller,\n"
    "                     slower)\n"
    "      --stats        at the end, print to stderr the lines read, printed and\n"
    "                     dropped, the filter's size, and its rate of wrongly\n"
    "                     dropped lines\n"
    "      --hex          compare lines by their hex-decoded bytes\n"
    "      --binary       keys are any bytes: read input that looks binary\n"
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

/* Hand the batch to the filter in order (so a line repeated inside the
 * batch is caught at its second copy) and print the lines it took as new,
 * in order. The rate for the wrongly-dropped estimate is taken once per
 * batch. Returns 0, or -1 after printing the error of a line the filter
 * refused (the lines before it are printed) or of a failed write
 * (*write_error: its errno). */
static int flush_batch(dedup_batch *b, amq_filter *seen, uint64_t *printed,
                       double *expected_wrongly_dropped, bool *unended, int *write_error)
{
    for (size_t i = 0; i < b->count; i++)
        b->keys[i] = b->bytes + b->key_at[i];
    double rate = expected_rate(seen);
    size_t done = 0;
    /* The key that failed, if one did, is answered too: handled + 1. */
    if (amq_add_unique_many(b->results, &done, seen, b->keys, b->key_lens, b->count) < 0)
        done++;
    int status = 0;
    for (size_t i = 0; i < done; i++) {
        if (b->results[i] < 0) {
            char where[4200];
            snprintf(where, sizeof where, "%s:%llu", b->name[i],
                     (unsigned long long)b->line_number[i]);
            cli_add_error("dedup", where, seen, b->results[i]);
            status = -1;
            break;
        }
        if (b->results[i] == 0)
            continue;
        errno = 0;
        if ((*unended && putc('\n', stdout) == EOF) ||
            fwrite(b->bytes + b->line_at[i], 1, b->line_len[i], stdout) != b->line_len[i]) {
            /* Nothing more can reach the reader: stop reading. */
            *write_error = errno ? errno : EIO;
            cli_stdout_error("dedup", *write_error);
            status = -1;
            break;
        }
        *unended = !b->ended[i];
        ++*printed;
        /* See the one-by-one loop in cli_dedup. */
        *expected_wrongly_dropped += rate < 1 ? rate / (1 - rate) : 0;
    }
    b->count = 0;
    b->used = 0;
    return status;
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
        { "stats", no_argument, NULL, 's' },          { "stages", required_argument, NULL, 'S' },
    };
    enum { OWN = sizeof own_options / sizeof own_options[0] };
    struct option options[OWN + CLI_INPUT_LONG_OPTIONS];
    memcpy(options, own_options, sizeof own_options);
    memcpy(options + OWN, cli_input_long_options, sizeof cli_input_long_options);
    cli_input_options input = { 0 };
    const char *capacity = "1000000", *fpr = "1e-6", *type = "scalable-bloom";
    const char *stages = DEDUP_STAGES;
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
        case 'S':
            stages = optarg;
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
    /* The stages for a type whose spec takes them; growth for a type that
     * is of a fixed size unless its spec asks it to grow. */
    int capabilities = amq_family_capabilities(type);
    if (cli_family_takes_option(type, "stages") &&
        cli_spec_add(&spec, "dedup", "stages", stages) < 0)
        return CLI_EXIT_ERROR;
    if (capabilities >= 0 && (capabilities & AMQ_GROWS_IF_ASKED) &&
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
    bool failed = false, unended = false;
    int write_error = 0; /* the errno of a failed write of standard output */
    /* A filter that always grows (scalable-bloom) takes the lines in
     * batches: hashed ahead, and every stage's block of each prefetched, so
     * the memory accesses of many lines overlap; its rate stays near P, so
     * it is sampled once a batch. The others take them one by one: their
     * rate rises with their lines, sampled every 64. */
    bool batched =
        capabilities >= 0 && (capabilities & AMQ_CAN_GROW) && !(capabilities & AMQ_GROWS_IF_ASKED);
    dedup_batch *batch = batched ? calloc(1, sizeof *batch) : NULL;
    if (batched && !batch) {
        cli_error("dedup: out of memory");
        cli_input_close(&in);
        amq_free(seen);
        return CLI_EXIT_ERROR;
    }
    while (batch) {
        got = cli_input_next(&in, &key, &len);
        if (got > 0) {
            read++;
            if (batch_take(batch, &in, key, len) < 0) {
                cli_error("dedup: out of memory for a batch of lines");
                failed = true;
                break;
            }
        }
        if ((got <= 0 || batch->count == DEDUP_BATCH_LINES || batch->used >= DEDUP_BATCH_BYTES) &&
            batch->count &&
            flush_batch(batch, seen, &printed, &expected_wrongly_dropped, &unended, &write_error) <
                0) {
            failed = true;
            break;
        }
        if (got <= 0)
            break;
    }
    if (batch) {
        free(batch->bytes);
        free(batch);
        got = failed ? -1 : got;
    }
    while (!batched && (got = cli_input_next(&in, &key, &len)) > 0) {
        read++;
        status = amq_add_unique(seen, key, len);
        if (status == 0)
            continue;
        if (status < 0) {
            char where[4200];
            snprintf(where, sizeof where, "%s:%llu", in.name, (unsigned long long)in.line_number);
            cli_add_error("dedup", where, seen, status);
            failed = true;
            break;
        }
        errno = 0;
        if (cli_input_print_line(&in, stdout) != 0) {
            write_error = errno ? errno : EIO;
            cli_stdout_error("dedup", write_error);
            failed = true;
            break;
        }
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
    if (!write_error && cli_stdout_flush("dedup", 0) != 0)
        return CLI_EXIT_ERROR;
    if (got < 0 || failed)
        return CLI_EXIT_ERROR;
    if (past_capacity)
        return CLI_EXIT_PAST_CAPACITY;
    return printed ? CLI_EXIT_OK : CLI_EXIT_NONE;
}
