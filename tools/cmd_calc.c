/*
 * cmd_calc.c - `amq calc`: the Bloom filter parameter calculator on the
 * command line.
 *
 * The options give some of n (keys), p (false-positive rate), m (bits) and
 * k (hash functions); amq_calc_solve fills in the rest and this file prints
 * them, either as an aligned table for people:
 *
 *   n (keys)             1000000000
 *   m (bits)             19170116755  (19.2 Gbit, 2.23 GiB)
 *   k (hash functions)   13
 *   p (target)           0.0001  (1 in 10000)
 *   p (at n, m, k)       0.000100135  (1 in 9987)
 *   bits per key         19.17
 *
 * or as one JSON object for programs. Sizes are shown to three significant
 * digits, bits with SI prefixes (kbit = 1000 bits) and bytes, m / 8 rounded
 * up, with IEC prefixes (KiB = 1024 bytes). Errors go to stderr with exit
 * status 2.
 */
#include "cli.h"

#include "amq/amq.h"
#include "amq/bloom.h"
#include "amq/calc.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: amq calc [-n N] [-p P] [-m BITS] [-k K] [--json]\n"
    "Compute the parameters of a classic Bloom filter: n and p give the optimal\n"
    "m and k; n and m, or m and p, or any three of n, m, k, p give the rest.\n"
    "\n"
    "Options:\n"
    "  -n, --capacity N   number of keys (1000000, 1e6, 2.5e3)\n"
    "  -p, --fpr P        false-positive rate (0.0001, 1e-4, 1/8192, 0.01%)\n"
    "  -m, --bits BITS    size of the filter in bits\n"
    "  -k, --hashes K     number of hash functions (1 to 1024)\n"
    "      --json         print one JSON object: n, m, k, p, actual_p, bytes,\n"
    "                     bits_per_key\n"
    "  -h, --help         show this help\n"
    "\n"
    "Examples:\n"
    "  amq calc -n 1e9 -p 1e-4          bits and hashes for a billion keys at 0.01%\n"
    "  amq calc -n 100000 -p 1/8192     one false positive in 8192 queries\n"
    "  amq calc -n 2000 -m 20000        best k, and the rate it gives\n"
    "  amq calc -m 20000 -k 5 -p 0.01   how many keys fit\n"
    "  amq calc -n 2000 -m 20000 -k 5 --json\n"
    "\n"
    "p (target) is the rate asked for; p (at n, m, k) is the rate the rounded m\n"
    "and k actually give. Exit status: 0 success, 2 an error.\n";

enum { OPTION_JSON = 256 };

static const struct option long_options[] = {
    { "capacity", required_argument, NULL, 'n' },
    { "fpr", required_argument, NULL, 'p' },
    { "bits", required_argument, NULL, 'm' },
    { "hashes", required_argument, NULL, 'k' },
    { "json", no_argument, NULL, OPTION_JSON },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* The option's both names, for messages. */
static const char *option_name(int option)
{
    switch (option) {
    case 'n':
        return "-n/--capacity";
    case 'p':
        return "-p/--fpr";
    case 'm':
        return "-m/--bits";
    default:
        return "-k/--hashes";
    }
}

/* A rate as "1 in N" (N = 1/p), or empty when p is 0. */
static void format_odds(char *out, size_t size, double p)
{
    if (p <= 0.0)
        snprintf(out, size, "%s", "");
    else if (1.0 / p < 1e15)
        snprintf(out, size, "  (1 in %.0f)", 1.0 / p);
    else
        snprintf(out, size, "  (1 in %.3g)", 1.0 / p);
}

/* The shortest %g form that reads back as the same double, for JSON; no
 * exponent for values from 1 up to 1e16 ("10", not "1e+01"). */
static void format_exact(char *out, size_t size, double value)
{
    bool plain = fabs(value) >= 1.0 && fabs(value) < 1e16;
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, size, "%.*g", digits, value);
        if (strtod(out, NULL) == value && !(plain && strchr(out, 'e')))
            return;
    }
}

static uint64_t bytes_of(uint64_t bits)
{
    return bits / 8 + (bits % 8 != 0);
}

/* What amq's own bloom and counting-bloom filters differ in from the
 * textbook figures above, as notes (at most two, each up to 256 bytes):
 * they take at most 64 hash functions (more bits instead), and their
 * positions come from a 128-bit key hash, so no size takes the rate of n
 * keys under n 2^-127 (they size for twice that). Returns how many. */
static int amq_notes(char notes[2][256], const amq_calc *r, unsigned known)
{
    int count = 0;
    if (!(known & AMQ_CALC_N) || !(known & AMQ_CALC_P))
        return 0;
    double floor = (double)r->n * 0x1p-127;
    double aim = r->p < 2 * floor ? 2 * floor : r->p;
    if (aim > r->p)
        snprintf(notes[count++], 256,
                 "p is below what %llu keys hashed to 128 bits allow (n 2^-127 = %.3g): amq's "
                 "bloom and counting-bloom filters size for %.3g",
                 (unsigned long long)r->n, floor, aim);
    amq_calc at_most = { .n = r->n, .k = AMQ_BLOOM_MAX_HASHES, .p = aim };
    if ((r->k > AMQ_BLOOM_MAX_HASHES || aim > r->p) &&
        amq_calc_solve(&at_most, AMQ_CALC_N | AMQ_CALC_K | AMQ_CALC_P, NULL) == AMQ_OK)
        snprintf(notes[count++], 256,
                 "amq's bloom and counting-bloom filters take at most %d hash functions: they "
                 "use k = %d and m = %llu bits (%.2f bits per key) for p = %.3g",
                 AMQ_BLOOM_MAX_HASHES, AMQ_BLOOM_MAX_HASHES, (unsigned long long)at_most.m,
                 (double)at_most.m / (double)at_most.n, aim);
    return count;
}

static void print_table(const amq_calc *r, unsigned known)
{
    char bits[32], bytes[32], odds[48];
    cli_format_bits(bits, sizeof bits, (double)r->m);
    cli_format_bytes(bytes, sizeof bytes, (double)bytes_of(r->m));
    printf("%-20s %llu\n", "n (keys)", (unsigned long long)r->n);
    printf("%-20s %llu  (%s, %s)\n", "m (bits)", (unsigned long long)r->m, bits, bytes);
    printf("%-20s %lu\n", "k (hash functions)", (unsigned long)r->k);
    if (known & AMQ_CALC_P) {
        format_odds(odds, sizeof odds, r->p);
        printf("%-20s %.6g%s\n", "p (target)", r->p, odds);
    }
    format_odds(odds, sizeof odds, r->actual_p);
    printf("%-20s %.6g%s\n", "p (at n, m, k)", r->actual_p, odds);
    printf("%-20s %.2f\n", "bits per key", (double)r->m / (double)r->n);
    char notes[2][256];
    int note_count = amq_notes(notes, r, known);
    for (int i = 0; i < note_count; i++)
        printf("note: %s\n", notes[i]);
}

static void print_json(const amq_calc *r, unsigned known)
{
    char p[32], actual_p[32], bits_per_key[32];
    format_exact(p, sizeof p, r->p);
    format_exact(actual_p, sizeof actual_p, r->actual_p);
    format_exact(bits_per_key, sizeof bits_per_key, (double)r->m / (double)r->n);
    printf("{\"n\": %llu, \"m\": %llu, \"k\": %lu, \"p\": %s, \"actual_p\": %s, "
           "\"bytes\": %llu, \"bits_per_key\": %s",
           (unsigned long long)r->n, (unsigned long long)r->m, (unsigned long)r->k, p, actual_p,
           (unsigned long long)bytes_of(r->m), bits_per_key);
    char notes[2][256];
    int note_count = amq_notes(notes, r, known);
    if (note_count > 0) {
        printf(", \"notes\": [");
        for (int i = 0; i < note_count; i++)
            printf("%s\"%s\"", i ? ", " : "", notes[i]); /* the notes hold no quote */
        printf("]");
    }
    printf("}\n");
}

/* Parse the argument of option into r; report and return nonzero on error. */
static int parse_value(amq_calc *r, unsigned *known, int option, const char *text)
{
    amq_diag diag;
    int status;
    uint64_t count = 0;
    switch (option) {
    case 'n':
        status = amq_parse_count(&r->n, text, 1, UINT64_MAX, &diag);
        *known |= AMQ_CALC_N;
        break;
    case 'p':
        status = amq_parse_probability(&r->p, text, &diag);
        *known |= AMQ_CALC_P;
        break;
    case 'm':
        status = amq_parse_count(&r->m, text, 1, UINT64_MAX, &diag);
        *known |= AMQ_CALC_M;
        break;
    default:
        status = amq_parse_count(&count, text, 1, AMQ_CALC_MAX_K, &diag);
        r->k = (uint32_t)count;
        *known |= AMQ_CALC_K;
        break;
    }
    if (status != AMQ_OK)
        return cli_usage_error("calc", "%s: %s", option_name(option), diag.message);
    return CLI_EXIT_OK;
}

int cli_calc(int argc, char **argv)
{
    amq_calc r = { 0 };
    unsigned known = 0;
    bool json = false;

    opterr = 0;
    int option;
    while ((option = getopt_long(argc, argv, ":n:p:m:k:h", long_options, NULL)) != -1) {
        switch (option) {
        case 'n':
        case 'p':
        case 'm':
        case 'k':
            if (parse_value(&r, &known, option, optarg) != CLI_EXIT_OK)
                return CLI_EXIT_ERROR;
            break;
        case OPTION_JSON:
            json = true;
            break;
        case 'h':
            fputs(usage, stdout);
            return CLI_EXIT_OK;
        default:
            return cli_option_error("calc", option, argc, argv, long_options);
        }
    }
    if (optind < argc)
        return cli_usage_error("calc", "unexpected argument '%s'", argv[optind]);

    amq_diag diag;
    if (amq_calc_solve(&r, known, &diag) != AMQ_OK)
        return cli_usage_error("calc", "%s", diag.message);
    if (json)
        print_json(&r, known);
    else
        print_table(&r, known);
    return CLI_EXIT_OK;
}
