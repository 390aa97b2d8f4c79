/*
 * demo.c - amq_demo: every filter type of this build, built from a word
 * list at two false-positive rates (about 1% and about 0.1% unless --rates
 * says otherwise), asked about every word and as many non-words, in one
 * table (what `make demo` shows; see scripts/demo.sh, which also plots the
 * data file).
 *
 *   amq_demo [--runs R] [--seed S] [--rates P1,P2] [--tsv FILE] WORDLIST
 *
 * Each filter comes from one amq_build spec: "<type> p=<rate> <options>".
 * The types are asked in two tiers, p = P1 and p = P2, with the variants
 * worth seeing side by side (both blocked-Bloom layouts; a scalable Bloom
 * filter started at 1/64 of the words, so that it has to grow; hfb over the
 * words' MD5 digests, since it takes random IDs). The binary fuse filters
 * have fixed rates: fuse8 (0.39%) stands in the first tier and fuse16
 * (0.0015%) in the second (docs/PERFORMANCE.md's table of every family
 * uses --rates 0.004,0.0001, the rates closest to theirs). A type this table does not name is built
 * with its plain spec in both tiers, so every type of the build is shown.
 *
 * What is timed, through the generic calls a user of the library makes
 * (the typed APIs and batch paths are faster; bench/ measures those):
 *   build     amq_build from every word (a dynamic type: an empty filter
 *             sized for the words, then amq_add of each word);
 *   words     amq_contains of every word, which must all answer "maybe" -
 *             a false negative stops the demo with an error;
 *   non-words amq_contains of every non-word: the false positives;
 *   batch     amq_contains_many of all non-words at once, which must give
 *             the same answers.
 * Each is run --runs times (default 5), every filter's run r before any
 * filter's run r + 1, and the median per word is kept: this is a shared
 * machine, and a median ignores the runs it preempted.
 *
 * Exit status: 0, or 2 with a message on stderr (a bad argument, a word
 * list that cannot be read, a filter that cannot be built, or a wrong
 * answer).
 */
#include "demo.h"
#include "words.h"

#include "amq/amq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_RUNS = 99, MAX_RESULTS = 64 };

/* A filter of the table: the type, what its label adds, its options. */
typedef struct demo_variant {
    const char *family;
    const char *variant; /* "" or what the label adds in parentheses */
    const char *options; /* spec options beside p */
    int tiers;           /* TIER_* bits: where it is shown */
} demo_variant;

enum { TIER_1 = 1, TIER_01 = 2, BOTH_TIERS = 3 };

/* Options that depend on the word count are added by spec_for. */
static const demo_variant variants[] = {
    { "bloom", "", "", BOTH_TIERS },
    { "blocked-bloom", "block", "layout=block", BOTH_TIERS },
    { "blocked-bloom", "split", "layout=split", BOTH_TIERS },
    { "counting-bloom", "4-bit", "", BOTH_TIERS },
    { "scalable-bloom", "from n/64", "", BOTH_TIERS },
    { "cuckoo", "", "", BOTH_TIERS },
    { "gcs", "", "", BOTH_TIERS },
    { "hfb", "MD5 IDs", "hash=md5", BOTH_TIERS },
    { "fuse8", "", "", TIER_1 },
    { "fuse16", "", "", TIER_01 },
};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, size_t count)
{
    qsort(values, count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

static void spec_for(char *out, size_t capacity, const demo_variant *variant, double rate,
                     size_t words)
{
    size_t used = (size_t)snprintf(out, capacity, "%s p=%g", variant->family, rate);
    if (used < capacity && strcmp(variant->family, "scalable-bloom") == 0)
        used += (size_t)snprintf(out + used, capacity - used, " n=%zu",
                                 words / 64 > 0 ? words / 64 : 1);
    if (used < capacity && variant->options[0])
        snprintf(out + used, capacity - used, " %s", variant->options);
}

/* One filter's timings, one entry per run. */
typedef struct demo_timings {
    double build[MAX_RUNS], present[MAX_RUNS], absent[MAX_RUNS], batch[MAX_RUNS];
} demo_timings;

/* amq_contains of every string of keys: ns per key, and the number that
 * answered "maybe" into *hits. */
static int time_queries(double *ns_per_key, uint64_t *hits, const amq_filter *filter,
                        const demo_strings *keys)
{
    uint64_t found = 0;
    double start = now_ns();
    for (size_t i = 0; i < keys->count; i++) {
        int answer = amq_contains(filter, keys->pointers[i], keys->lens[i]);
        if (answer < 0)
            return answer;
        found += (uint64_t)answer;
    }
    *ns_per_key = (now_ns() - start) / (double)keys->count;
    *hits = found;
    return AMQ_OK;
}

/* Run `run` of one filter: build it, time its three queries into *times,
 * and check its answers: every word found, the same false positives as the
 * first run (which records them, with the sizes, in *result) and from the
 * batch call as from the single ones. Returns 0, or -1 after saying what
 * went wrong. */
static int measure_run(demo_result *result, demo_timings *times, unsigned run,
                       const demo_strings *words, const demo_strings *non_words, uint8_t *answers)
{
    const char *spec = result->spec;
    amq_filter *filter = NULL;
    amq_diag diag = { 0 };
    double start = now_ns();
    int status = amq_build(&filter, spec, words->pointers, words->lens, words->count, &diag);
    times->build[run] = (now_ns() - start) / (double)words->count;
    if (status != AMQ_OK) {
        fprintf(stderr, "amq_demo: cannot build \"%s\": %s\n", spec,
                diag.message[0] ? diag.message : amq_strerror(status));
        return -1;
    }
    if (run == 0) {
        amq_info info;
        uint64_t saved_bytes = 0;
        amq_info_get(&info, filter);
        status = amq_saved_bytes(&saved_bytes, filter, NULL);
        result->bits_file = 8.0 * (double)saved_bytes / (double)words->count;
        result->bits_memory = 8.0 * (double)info.memory_bytes / (double)words->count;
        result->capabilities = amq_family_capabilities(amq_filter_family(filter));
        result->queries = non_words->count;
    }
    uint64_t found = 0, false_positives = 0;
    if (status == AMQ_OK)
        status = time_queries(&times->present[run], &found, filter, words);
    if (status == AMQ_OK && found != words->count) {
        fprintf(stderr, "amq_demo: \"%s\" lost %llu of its %zu words\n", spec,
                (unsigned long long)(words->count - found), words->count);
        status = AMQ_EINVAL;
    }
    if (status == AMQ_OK)
        status = time_queries(&times->absent[run], &false_positives, filter, non_words);
    if (status == AMQ_OK && run == 0)
        result->false_positives = false_positives;
    if (status == AMQ_OK && false_positives != result->false_positives) {
        fprintf(stderr, "amq_demo: \"%s\" found %llu non-words, and %llu in its first run\n", spec,
                (unsigned long long)false_positives, (unsigned long long)result->false_positives);
        status = AMQ_EINVAL;
    }
    if (status == AMQ_OK) {
        start = now_ns();
        status = amq_contains_many(answers, filter, non_words->pointers, non_words->lens,
                                   non_words->count);
        times->batch[run] = (now_ns() - start) / (double)non_words->count;
        uint64_t batch_hits = 0;
        for (size_t i = 0; i < non_words->count; i++)
            batch_hits += answers[i];
        if (status == AMQ_OK && batch_hits != false_positives) {
            fprintf(stderr,
                    "amq_demo: \"%s\": the batch query found %llu non-words, "
                    "the single queries %llu\n",
                    spec, (unsigned long long)batch_hits, (unsigned long long)false_positives);
            status = AMQ_EINVAL;
        }
    }
    if (status != AMQ_OK && status != AMQ_EINVAL)
        fprintf(stderr, "amq_demo: \"%s\": %s\n", spec, amq_strerror(status));
    amq_free(filter);
    return status == AMQ_OK ? 0 : -1;
}

static bool family_in_table(const char *family)
{
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        if (strcmp(variants[i].family, family) == 0)
            return true;
    return false;
}

/* The filters to show, in order: the table's variants of the types this
 * build has, then every other type with its plain spec. */
static size_t list_variants(demo_variant *out, size_t capacity)
{
    size_t count = 0;
    for (size_t i = 0; i < sizeof variants / sizeof variants[0] && count < capacity; i++)
        if (amq_family_capabilities(variants[i].family) >= 0)
            out[count++] = variants[i];
    for (size_t i = 0; amq_family_at(i) && count < capacity; i++)
        if (!family_in_table(amq_family_at(i)))
            out[count++] = (demo_variant){ amq_family_at(i), "", "", BOTH_TIERS };
    return count;
}

static int usage_error(const char *message, const char *argument)
{
    fprintf(stderr,
            "amq_demo: %s%s\nUsage: amq_demo [--runs R] [--seed S] [--rates P1,P2] "
            "[--tsv FILE] WORDLIST\n",
            message, argument);
    return 2;
}

/* "P1,P2": two rates as amq_parse_probability takes them ("0.004",
 * "1/8192", "0.4%"), the first the larger. */
static int parse_rates(double rates[2], const char *text)
{
    const char *comma = strchr(text, ',');
    char first[64];
    if (!comma || (size_t)(comma - text) >= sizeof first)
        return -1;
    memcpy(first, text, (size_t)(comma - text));
    first[comma - text] = '\0';
    if (amq_parse_probability(&rates[0], first, NULL) != AMQ_OK ||
        amq_parse_probability(&rates[1], comma + 1, NULL) != AMQ_OK)
        return -1;
    return rates[1] < rates[0] ? 0 : -1;
}

int main(int argc, char **argv)
{
    uint64_t runs = 5, seed = 0x6e6f6e776f7264ULL;
    double tier_rates[2] = { 0.01, 0.001 };
    const char *tsv_path = NULL, *word_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(arg, "--runs") == 0 && has_value) {
            if (amq_parse_count(&runs, argv[++i], 1, MAX_RUNS, NULL) != AMQ_OK)
                return usage_error("--runs takes a number from 1 to 99, not ", argv[i]);
        } else if (strcmp(arg, "--seed") == 0 && has_value) {
            if (amq_parse_count(&seed, argv[++i], 0, UINT64_MAX, NULL) != AMQ_OK)
                return usage_error("--seed takes a number, not ", argv[i]);
        } else if (strcmp(arg, "--rates") == 0 && has_value) {
            if (parse_rates(tier_rates, argv[++i]) != 0)
                return usage_error("--rates takes two rates in (0, 1), the larger first, as "
                                   "0.01,0.001, not ",
                                   argv[i]);
        } else if (strcmp(arg, "--tsv") == 0 && has_value) {
            tsv_path = argv[++i];
        } else if (arg[0] == '-' && arg[1]) {
            return usage_error("unknown option or missing value: ", arg);
        } else if (word_path) {
            return usage_error("one word list only; also given ", arg);
        } else {
            word_path = arg;
        }
    }
    if (!word_path)
        return usage_error("give the word list, e.g. ", "/usr/share/dict/american-english-insane");

    demo_strings words, non_words;
    if (demo_read_words(&words, word_path) != 0)
        return 2;
    if (demo_make_non_words(&non_words, &words, seed) != 0) {
        demo_strings_free(&words);
        return 2;
    }
    printf("%zu distinct words from %s, and as many non-words (random letters, none a word); "
           "medians of %llu runs.\n\n",
           words.count, word_path, (unsigned long long)runs);
    fflush(stdout);

    demo_variant shown[MAX_RESULTS / 2];
    size_t shown_count = list_variants(shown, MAX_RESULTS / 2);
    demo_result results[MAX_RESULTS];
    size_t result_count = 0;
    for (size_t tier = 0; tier < 2; tier++) {
        for (size_t i = 0; i < shown_count; i++) {
            if (!(shown[i].tiers & (1 << tier)))
                continue;
            demo_result *result = &results[result_count++];
            memset(result, 0, sizeof *result);
            snprintf(result->label, sizeof result->label, "%s%s%s%s", shown[i].family,
                     shown[i].variant[0] ? " (" : "", shown[i].variant,
                     shown[i].variant[0] ? ")" : "");
            result->target_fpr = tier_rates[tier];
            spec_for(result->spec, sizeof result->spec, &shown[i], tier_rates[tier], words.count);
        }
    }
    /* Run r of every filter before run r + 1 of any: a stretch of time the
     * machine gives to something else then slows one run of several
     * filters, which their medians ignore, not every run of one filter. */
    demo_timings *timings = calloc(result_count, sizeof *timings);
    uint8_t *answers = malloc(non_words.count);
    int exit_code = timings && answers ? 0 : 2;
    if (exit_code)
        fprintf(stderr, "amq_demo: out of memory\n");
    for (unsigned run = 0; run < runs && exit_code == 0; run++) {
        fprintf(stderr, "amq_demo: run %u of %llu\n", run + 1, (unsigned long long)runs);
        for (size_t i = 0; i < result_count && exit_code == 0; i++)
            if (measure_run(&results[i], &timings[i], run, &words, &non_words, answers) != 0)
                exit_code = 2;
    }
    for (size_t i = 0; i < result_count && exit_code == 0; i++) {
        results[i].build_ns = median(timings[i].build, runs);
        results[i].present_ns = median(timings[i].present, runs);
        results[i].absent_ns = median(timings[i].absent, runs);
        results[i].batch_ns = median(timings[i].batch, runs);
    }
    free(timings);
    free(answers);
    if (exit_code == 0) {
        demo_print_table(stdout, results, result_count);
        if (tsv_path) {
            FILE *tsv = fopen(tsv_path, "w");
            if (tsv)
                demo_print_tsv(tsv, results, result_count);
            if (!tsv || fclose(tsv) != 0) {
                fprintf(stderr, "amq_demo: cannot write %s: %s\n", tsv_path, strerror(errno));
                exit_code = 2;
            }
        }
    }
    demo_strings_free(&words);
    demo_strings_free(&non_words);
    return exit_code;
}
