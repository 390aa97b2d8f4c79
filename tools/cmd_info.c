/*
 * cmd_info.c - `amq info FILE [--json]`: what a filter file holds.
 */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static const char info_usage[] =
    "Usage: amq info FILE [--json]\n"
    "Describe the filter saved in FILE: its type, parameters, size, bits per key,\n"
    "the false-positive rate asked for and the one to expect at its fill, the\n"
    "estimated number of keys, the key hash and the file's checksum.\n"
    "\n"
    "      --json   one JSON object instead of the table\n"
    "Exit status: 0 described, 2 an error.\n";

/* JSON has no NaN or infinity: write null for them. */
static void json_number(const char *name, double value, bool last)
{
    if (isfinite(value))
        printf("  \"%s\": %.17g%s\n", name, value, last ? "" : ",");
    else
        printf("  \"%s\": null%s\n", name, last ? "" : ",");
}

int cli_info(int argc, char **argv)
{
    static const struct option options[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'h') {
            fputs(info_usage, stdout);
            return CLI_EXIT_OK;
        } else
            return cli_usage_error("info", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1)
        return cli_usage_error("info", "give exactly one filter FILE");
    const char *path = argv[optind];
    amq_filter *filter = NULL;
    if (cli_load(&filter, "info", path, AMQ_LOAD_MMAP) != AMQ_OK)
        return CLI_EXIT_ERROR;
    amq_info info;
    amq_info_get(filter, &info);
    char hasher[80], size[48];
    cli_format_hasher(hasher, sizeof hasher, &info.hasher);
    cli_format_bytes(size, sizeof size, (double)info.size_bytes);

    if (json) {
        printf("{\n  \"file\": \"");
        for (const char *p = path; *p; p++) {
            if (*p == '"' || *p == '\\')
                printf("\\%c", *p);
            else if ((unsigned char)*p < 0x20)
                printf("\\u%04x", (unsigned char)*p);
            else
                putchar(*p);
        }
        printf("\",\n  \"family\": \"%s\",\n", info.family);
        printf("  \"capacity\": %llu,\n", (unsigned long long)info.capacity);
        printf("  \"count\": %llu,\n", (unsigned long long)info.count);
        json_number("estimated_count", info.estimated_count, false);
        printf("  \"size_bytes\": %llu,\n", (unsigned long long)info.size_bytes);
        json_number("bits_per_key", info.bits_per_key, false);
        json_number("target_fpr", info.target_fpr, false);
        json_number("expected_fpr", info.expected_fpr, false);
        for (size_t i = 0; i < info.detail_count; i++) {
            const amq_info_detail *detail = &info.details[i];
            if (detail->text[0])
                printf("  \"%s\": \"%s\",\n", detail->name, detail->text);
            else
                json_number(detail->name, detail->value, false);
        }
        printf("  \"hash\": \"%s\",\n", hasher);
        printf("  \"checksum\": \"%016llx\"\n}\n", (unsigned long long)info.file_checksum);
    } else {
        printf("file             %s\n", path);
        printf("type             %s\n", info.family);
        printf("capacity         %llu\n", (unsigned long long)info.capacity);
        printf("keys             %llu\n", (unsigned long long)info.count);
        printf("estimated keys   %.0f\n", info.estimated_count);
        printf("size             %llu bytes (%s)\n", (unsigned long long)info.size_bytes, size);
        printf("bits per key     %.2f\n", info.bits_per_key);
        printf("target FPR       %.6g\n", info.target_fpr);
        printf("expected FPR     %.6g\n", info.expected_fpr);
        for (size_t i = 0; i < info.detail_count; i++) {
            const amq_info_detail *detail = &info.details[i];
            char label[40];
            snprintf(label, sizeof label, "%s", detail->name);
            for (char *letter = label; *letter; letter++)
                *letter = *letter == '_' ? ' ' : *letter;
            if (detail->text[0])
                printf("%-16s %s\n", label, detail->text);
            else
                printf("%-16s %.6g\n", label, detail->value);
        }
        printf("hash             %s\n", hasher);
        printf("checksum         %016llx (xxh3-64)\n", (unsigned long long)info.file_checksum);
    }
    amq_free(filter);
    return CLI_EXIT_OK;
}
