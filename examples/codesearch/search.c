/*
 * search.c - `codesearch search [options] PATTERN`: grep -rE over the
 * indexed files, reading only those the index says may match.
 *
 * 1. The pattern (grep -E's syntax; -F: a fixed string) is compiled for
 *    matching (matcher.c) and turned into a trigram query plan
 *    (regex_plan.c): an AND/OR of trigrams every matching line holds.
 * 2. The plan is evaluated against the index (evaluate.c): the candidate
 *    documents. A plan with no trigram (ALL) makes every file a candidate:
 *    the search falls back to a scan, and --stats says so.
 * 3. Each candidate (in the index's order, sorted by path), if its path
 *    passes -f, is read and searched line by line (scan.c); output as
 *    grep -r prints it, with -n, -l, -c.
 *
 * Exit status as grep's: 0 a line matched, 1 none, 2 an error (even if a
 * line matched). The index is a snapshot: a file changed since is searched
 * as it is now, a file added since is not seen, a file gone is an error.
 */
#include "../common/options.h"
#include "codesearch.h"
#include "evaluate.h"
#include "index_read.h"
#include "matcher.h"
#include "regex_plan.h"
#include "scan.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void search_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s search [--index INDEX] [-i] [-F] [-n] [-l] [-c] [-f PATHREGEX] [--stats]\n"
            "       [--regex-memory MIB] [--] PATTERN\n"
            "Print the lines of the indexed files that match PATTERN, as grep -rE prints them.\n"
            "PATTERN is a POSIX extended regular expression as grep -E reads it; binary files\n"
            "are searched as text (grep -a). Matching takes time linear in the bytes read;\n"
            "back-references, which cannot be matched so, are refused.\n"
            "\n"
            "  --index INDEX         the index (default $AMQ_CODESEARCH_INDEX, else\n"
            "                        codesearch.idx)\n"
            "  -i, --ignore-case     ignore ASCII case\n"
            "  -F, --fixed-strings   PATTERN is a string, not a regular expression\n"
            "  -n, --line-number     print each line's number\n"
            "  -l, --files-with-matches  print only the names of files with a match\n"
            "  -c, --count           print each file's count of matching lines\n"
            "  -f, --file-regex RE   search only files whose path matches RE (grep -E syntax)\n"
            "      --stats           print to stderr the query plan, the candidates read and\n"
            "                        the time taken\n"
            "      --regex-memory MIB  memory for each pattern's compiled program and DFA\n"
            "                        states (default 64); a pattern whose program needs more\n"
            "                        than half of it is refused\n"
            "Exit status: 0 a line matched, 1 none, 2 an error.\n",
            codesearch_program);
}

typedef struct search_options {
    const char *index;
    const char *path_regex;
    bool fold, fixed, stats;
    size_t regex_memory;
    scan_options scan;
} search_options;

/* 0: options read, -1: --help printed, 2: an error printed. */
static int read_options(search_options *s, int argc, char **argv)
{
    static const struct option options[] = {
        { "index", required_argument, NULL, 'x' },
        { "ignore-case", no_argument, NULL, 'i' },
        { "fixed-strings", no_argument, NULL, 'F' },
        { "line-number", no_argument, NULL, 'n' },
        { "files-with-matches", no_argument, NULL, 'l' },
        { "count", no_argument, NULL, 'c' },
        { "file-regex", required_argument, NULL, 'f' },
        { "stats", no_argument, NULL, 's' },
        { "regex-memory", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *env = getenv("AMQ_CODESEARCH_INDEX");
    s->index = env && *env ? env : "codesearch.idx";
    s->regex_memory = RX_MEMORY_DEFAULT;
    example_options o;
    example_options_init(&o, argc, argv, ":f:iFnlch", options);
    int c;
    while ((c = example_options_next(&o)) != -1) {
        switch (c) {
        case 'x':
            s->index = optarg;
            break;
        case 'i':
            s->fold = true;
            break;
        case 'F':
            s->fixed = true;
            break;
        case 'n':
            s->scan.line_numbers = true;
            break;
        case 'l':
            s->scan.files_only = true;
            break;
        case 'c':
            s->scan.count = true;
            break;
        case 'f':
            s->path_regex = optarg;
            break;
        case 's':
            s->stats = true;
            break;
        case 'm': {
            char *end;
            errno = 0;
            unsigned long long mib = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-' || mib < 1 ||
                mib > (SIZE_MAX >> 21)) {
                codesearch_error("search: --regex-memory '%s': give MiB, a whole number from 1 "
                                 "to %zu",
                                 optarg, (size_t)(SIZE_MAX >> 21));
                return 2;
            }
            s->regex_memory = (size_t)mib << 20;
            break;
        }
        case 'h':
            search_usage(stdout);
            return -1;
        default: {
            char message[256];
            example_options_error(message, sizeof message, &o, c);
            codesearch_error("search: %s", message);
            search_usage(stderr);
            return 2;
        }
        }
    }
    if (argc - optind != 1) {
        codesearch_error("search: give one PATTERN");
        search_usage(stderr);
        return 2;
    }
    if (s->scan.files_only && s->scan.count) {
        codesearch_error("search: -l and -c exclude each other");
        return 2;
    }
    return 0;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Compile PATTERN (quoted first under -F) and build its plan. */
static int prepare(const search_options *s, const char *pattern, matcher *m, plan **out)
{
    size_t len = strlen(pattern);
    char *quoted = NULL;
    if (s->fixed) {
        quoted = matcher_quote(pattern, len, &len);
        if (!quoted) {
            codesearch_error("out of memory");
            return 2;
        }
        pattern = quoted;
    }
    char message[512];
    const char *error =
        matcher_compile(m, pattern, len, s->fold, s->regex_memory, message, sizeof message, out);
    free(quoted);
    if (error) {
        codesearch_error("the pattern: %s", error);
        return 2;
    }
    return 0;
}

int codesearch_search(int argc, char **argv)
{
    search_options s = { 0 };
    int status = read_options(&s, argc, argv);
    if (status != 0)
        return status < 0 ? 0 : status;
    double started = seconds_now();
    matcher m, path_m;
    plan *p = NULL;
    if (prepare(&s, argv[optind], &m, &p) != 0)
        return 2;
    char message[512];
    const char *error = s.path_regex
                            ? matcher_compile(&path_m, s.path_regex, strlen(s.path_regex), false,
                                              s.regex_memory, message, sizeof message, NULL)
                            : NULL;
    if (error) {
        codesearch_error("-f %s: %s", s.path_regex, error);
        matcher_free(&m);
        plan_free(p);
        return 2;
    }
    cs_index *index = NULL;
    uint64_t *candidates = NULL;
    size_t lookups = 0;
    status = 2;
    if (cs_index_open(&index, s.index) != 0)
        goto done;
    double opened = seconds_now();
    candidates = evaluate_plan(p, index, &lookups);
    if (!candidates)
        goto done;
    double planned = seconds_now();
    uint32_t n = cs_index_documents(index);
    unsigned long long read = 0, matched_files = 0, errors = 0, filtered_out = 0;
    for (uint32_t d = 0; d < n; d++) {
        if (!(candidates[d / 64] >> (d % 64) & 1) && !s.scan.count)
            continue;
        const char *path = cs_index_path(index, d);
        if (s.path_regex && !matcher_matches(&path_m, path, strlen(path))) {
            filtered_out++;
            continue;
        }
        if (!(candidates[d / 64] >> (d % 64) & 1)) {
            printf("%s:0\n", path); /* -c: a file that cannot match */
            continue;
        }
        read++;
        long long lines = scan_file(&m, path, &s.scan, stdout);
        errors += lines < 0;
        matched_files += lines > 0;
    }
    if (fflush(stdout) != 0) {
        codesearch_error("writing the output failed");
        errors++;
    }
    double finished = seconds_now();
    if (s.stats) {
        fprintf(stderr, "plan: ");
        plan_print(stderr, p);
        fprintf(stderr, "\n%s",
                p->op == PLAN_ALL ? "no trigram to look up: scanning every file\n" : "");
        fprintf(stderr,
                "documents: %u\ntrigrams looked up: %zu\ncandidates read: %llu\n"
                "files matched: %llu\nskipped by -f: %llu\n"
                "time: %.3f ms opening, %.3f ms planning, %.3f ms reading\n",
                n, lookups, read, matched_files, filtered_out, (opened - started) * 1e3,
                (planned - opened) * 1e3, (finished - planned) * 1e3);
        rx_stats rs;
        matcher_stats(&m, &rs);
        fprintf(stderr, "regex: %zu instructions, %zu DFA states built, %zu cache flushes\n",
                rs.instructions, rs.states, rs.flushes);
    }
    status = errors ? 2 : matched_files ? 0 : 1;
done:
    free(candidates);
    cs_index_close(index);
    matcher_free(&m);
    if (s.path_regex)
        matcher_free(&path_m);
    plan_free(p);
    return status;
}
