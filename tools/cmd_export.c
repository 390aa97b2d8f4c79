/*
 * cmd_export.c - `amq export FILE --format FORMAT`: a filter's bare data on
 * standard output, for programs that read another format than amq's file
 * (gcs: "raw", the padded Golomb-coded stream; "bip158", Bitcoin's
 * serialization of a compact block filter). The family decides which
 * formats it has (amq_export); one with none is told that the .amq file is
 * what to share instead.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char export_usage[] =
    "Usage: amq export FILE --format FORMAT [--hex]\n"
    "Write the filter's bare data to standard output, in a format another\n"
    "program reads.\n"
    "\n"
    "  -f, --format FORMAT   gcs: raw (the Golomb-coded stream, padded with zero\n"
    "                        bits to a byte) or bip158 (CompactSize N, then the\n"
    "                        stream: a BIP158 compact block filter)\n"
    "      --hex             write lowercase hexadecimal and a newline instead of\n"
    "                        raw bytes\n"
    "Exit status: 0 written, 2 an error (the type has no such format, the file\n"
    "is damaged, or the output could not be written).\n";

/* Write all of data to standard output; false on a write error. */
static bool write_all(const uint8_t *data, size_t len, bool hex)
{
    if (!hex)
        return fwrite(data, 1, len, stdout) == len;
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++)
        if (putchar(digits[data[i] >> 4]) == EOF || putchar(digits[data[i] & 15]) == EOF)
            return false;
    return putchar('\n') != EOF;
}

int cli_export(int argc, char **argv)
{
    static const struct option options[] = {
        { "format", required_argument, NULL, 'f' },
        { "hex", no_argument, NULL, 'x' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *format = NULL;
    bool hex = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":f:h", options, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'x':
            hex = true;
            break;
        case 'h':
            fputs(export_usage, stdout);
            return CLI_EXIT_OK;
        default:
            return cli_option_error("export", c, argc, argv, options);
        }
    }
    if (!format)
        return cli_usage_error("export", "give the format with --format FORMAT");
    if (argc - optind != 1)
        return cli_usage_error("export", "give exactly one filter file");
    if (!hex && isatty(STDOUT_FILENO))
        return cli_usage_error("export",
                               "standard output is a terminal: redirect it, or use --hex");

    amq_filter *f = NULL;
    if (cli_load(&f, "export", argv[optind], 0) != AMQ_OK)
        return CLI_EXIT_ERROR;
    uint8_t *data = NULL;
    size_t len = 0;
    amq_diag diag = { .message = "" };
    int status = amq_export(&data, &len, f, format, &diag);
    amq_free(f);
    if (status != AMQ_OK) {
        cli_error("export: %s: %s%s", argv[optind],
                  diag.message[0] ? diag.message : amq_strerror(status),
                  status == AMQ_EUNSUPPORTED
                      ? " (the .amq file itself is the portable form of any filter)"
                      : "");
        return CLI_EXIT_ERROR;
    }
    bool written = write_all(data, len, hex) && fflush(stdout) == 0;
    amq_buffer_free(data);
    if (!written) {
        cli_error("export: writing standard output: %s", strerror(errno));
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}
