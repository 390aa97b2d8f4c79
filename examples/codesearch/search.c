/*
 * search.c - `codesearch search [-i INDEX] [--stats] STRING`: the files
 * that contain STRING, found through the trigram index.
 *
 * 1. The query's distinct trigrams are looked up in the index. A trigram
 *    the index lacks is in no file: nothing can match. A query of fewer
 *    than three bytes has no trigram and every file is a candidate.
 *
 * 2. Candidates. Every document's ID starts on the list; the list is asked
 *    of one trigram filter after another, most selective first (the filter
 *    of the fewest documents), and shrinks to the IDs that pass - this is
 *    the search engine's use of the filters: whole lists of IDs at once,
 *    through amq_contains_many. A document that holds the string holds all
 *    its trigrams, so it passes every filter; a document that does not
 *    passes only by false positives.
 *
 * 3. Verification. Each candidate file is read and searched for the string
 *    as bytes; the matches are printed in index order, one path a line, as
 *    `grep -rlF` prints them. The index is a snapshot: a file changed since
 *    is searched as it is now, a file added since is not seen, a file gone
 *    is reported.
 *
 * --stats prints to stderr the documents, candidates after filtering, true
 * matches and the false candidates, split in two: documents that hold every
 * trigram of the string without the string (an exact trigram index keeps
 * them too), and documents lacking a trigram that the filters let through -
 * the filters' false-candidate rate, to set beside their target rate.
 */
#define _GNU_SOURCE /* memmem */

#include "../common/options.h"
#include "amq/amq.h"
#include "amq/bundle.h"
#include "codesearch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A trigram of the query with its filter. */
typedef struct query_filter {
    amq_filter *filter;
    uint64_t documents; /* the filter's key count: its selectivity */
} query_filter;

static int by_documents(const void *a, const void *b)
{
    const query_filter *x = a, *y = b;
    return (x->documents > y->documents) - (x->documents < y->documents);
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What reading a candidate found. */
typedef enum candidate_kind {
    CANDIDATE_UNREADABLE,
    CANDIDATE_MATCH,         /* it holds the string */
    CANDIDATE_ALL_TRIGRAMS,  /* not the string, but every trigram of it */
    CANDIDATE_FALSE_POSITIVE /* a trigram it lacks passed that trigram's filter */
} candidate_kind;

/* Read the file at path and say which kind of candidate it is. */
static candidate_kind read_candidate(const char *path, const char *needle, size_t needle_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return CANDIDATE_UNREADABLE;
    struct stat st;
    candidate_kind kind = CANDIDATE_UNREADABLE;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        const uint8_t *bytes = NULL;
        size_t len = (size_t)st.st_size;
        void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
        if (map != MAP_FAILED) {
            bytes = map;
            /* as grep, an empty file has no line to match */
            if (len > 0 && memmem(bytes, len, needle, needle_len) != NULL) {
                kind = CANDIDATE_MATCH;
            } else {
                kind = CANDIDATE_ALL_TRIGRAMS;
                for (size_t i = 0; i + 2 < needle_len && kind == CANDIDATE_ALL_TRIGRAMS; i++)
                    if (len < 3 || memmem(bytes, len, needle + i, 3) == NULL)
                        kind = CANDIDATE_FALSE_POSITIVE;
            }
            if (map)
                munmap(map, len);
        }
    }
    close(fd);
    return kind;
}

/* The query's distinct trigrams' filters, most selective first. Returns
 * how many, 0 with *absent set when a trigram is in no document, or -1. */
static long open_filters(const amq_bundle *index, const char *query, size_t len, query_filter **out,
                         bool *absent)
{
    *absent = false;
    *out = NULL;
    if (len < 3)
        return 0;
    query_filter *filters = calloc(len - 2, sizeof *filters);
    uint8_t *names = malloc(3 * (len - 2));
    if (!filters || !names) {
        free(filters);
        free(names);
        codesearch_error("out of memory");
        return -1;
    }
    long count = 0;
    for (size_t i = 0; i + 2 < len; i++) {
        uint8_t name[3];
        codesearch_trigram_name(name, codesearch_trigram((const uint8_t *)query + i));
        bool repeated = false;
        for (long j = 0; j < count && !repeated; j++)
            repeated = memcmp(names + 3 * j, name, 3) == 0;
        if (repeated)
            continue;
        amq_diag diag = { 0 };
        amq_filter *f = NULL;
        int status = amq_bundle_open_filter(&f, index, name, 3, &diag);
        if (status == AMQ_ENOTFOUND) {
            *absent = true;
            break;
        }
        if (status != AMQ_OK) {
            codesearch_error("the index's trigram filter: %s", diag.message);
            count = -1;
            break;
        }
        amq_info info;
        amq_info_get(&info, f);
        memcpy(names + 3 * count, name, 3);
        filters[count++] = (query_filter){ f, info.keys };
    }
    free(names);
    if (count <= 0 || *absent) {
        for (long j = 0; j < count; j++)
            amq_free(filters[j].filter);
        free(filters);
        return *absent ? 0 : count;
    }
    qsort(filters, (size_t)count, sizeof *filters, by_documents);
    *out = filters;
    return count;
}

static void search_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s search [-i INDEX] [--stats] [--] STRING\n"
            "Print the indexed files that contain STRING (as bytes), like grep -rlF STRING.\n"
            "\n"
            "  -i, --index INDEX  the index file (default codesearch.idx)\n"
            "      --stats        print to stderr the documents, candidates, matches and the\n"
            "                     false-candidate rate\n"
            "Exit status: 0 a file matched, 1 none, 2 an error.\n",
            codesearch_program);
}

/* The document table: count paths, each NUL-ended, and their IDs. */
typedef struct documents {
    const char **paths;
    uint8_t *ids;
    uint32_t count;
} documents;

static bool read_documents(const amq_bundle *index, const char *index_path, documents *out)
{
    amq_bundle_member table;
    if (amq_bundle_find(&table, index, CODESEARCH_DOCUMENTS, strlen(CODESEARCH_DOCUMENTS)) != 1 ||
        strcmp(table.family, "bytes") != 0 ||
        (table.data_len > 0 && table.data[table.data_len - 1] != 0)) {
        codesearch_error("%s is not a codesearch index: no document table", index_path);
        return false;
    }
    uint64_t count = 0;
    for (uint64_t i = 0; i < table.data_len; i++)
        count += table.data[i] == 0;
    if (count >= UINT32_MAX) {
        codesearch_error("%s: %llu documents are too many", index_path, (unsigned long long)count);
        return false;
    }
    out->count = (uint32_t)count;
    out->paths = malloc((count + 1) * sizeof *out->paths);
    out->ids = malloc((count + 1) * CODESEARCH_ID_BYTES);
    if (!out->paths || !out->ids) {
        codesearch_error("out of memory");
        return false;
    }
    const char *p = (const char *)table.data;
    for (uint32_t d = 0; d < out->count; d++) {
        size_t len = strlen(p);
        out->paths[d] = p;
        amq_md5(out->ids + (size_t)d * CODESEARCH_ID_BYTES, p, len);
        p += len + 1;
    }
    return true;
}

/* Shrink the candidates (document numbers) to those every filter passes. */
static bool filter_candidates(const documents *docs, const query_filter *filters, long count,
                              uint32_t *candidates, uint32_t *candidate_count)
{
    uint32_t n = *candidate_count;
    const void **keys = malloc((n + 1) * sizeof *keys);
    size_t *lens = malloc((n + 1) * sizeof *lens);
    uint8_t *passed = malloc(n + 1);
    if (!keys || !lens || !passed) {
        free(keys);
        free(lens);
        free(passed);
        codesearch_error("out of memory");
        return false;
    }
    bool ok = true;
    for (long f = 0; f < count && n > 0; f++) {
        for (uint32_t i = 0; i < n; i++) {
            keys[i] = docs->ids + (size_t)candidates[i] * CODESEARCH_ID_BYTES;
            lens[i] = CODESEARCH_ID_BYTES;
        }
        if (amq_contains_many(passed, filters[f].filter, keys, lens, n) != AMQ_OK) {
            codesearch_error("a trigram filter refused the candidate IDs");
            ok = false;
            break;
        }
        uint32_t kept = 0;
        for (uint32_t i = 0; i < n; i++)
            if (passed[i])
                candidates[kept++] = candidates[i];
        n = kept;
    }
    *candidate_count = n;
    free(keys);
    free(lens);
    free(passed);
    return ok;
}

int codesearch_search(int argc, char **argv)
{
    static const struct option options[] = {
        { "index", required_argument, NULL, 'i' },
        { "stats", no_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *index_path = "codesearch.idx";
    bool stats = false;
    example_options o;
    example_options_init(&o, argc, argv, ":i:h", options);
    int c;
    while ((c = example_options_next(&o)) != -1) {
        switch (c) {
        case 'i':
            index_path = optarg;
            break;
        case 's':
            stats = true;
            break;
        case 'h':
            search_usage(stdout);
            return 0;
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
        codesearch_error("search: give one STRING");
        search_usage(stderr);
        return 2;
    }
    const char *query = argv[optind];
    size_t query_len = strlen(query);

    amq_bundle *index = NULL;
    amq_diag diag = { 0 };
    if (amq_bundle_open(&index, index_path, AMQ_LOAD_MMAP, &diag) != AMQ_OK) {
        codesearch_error("%s", diag.message);
        return 2;
    }
    documents docs = { NULL, NULL, 0 };
    query_filter *filters = NULL;
    uint32_t *candidates = NULL;
    int status = 2;
    double started = seconds_now();
    if (!read_documents(index, index_path, &docs))
        goto done;
    bool absent = false;
    long filter_count = open_filters(index, query, query_len, &filters, &absent);
    if (filter_count < 0)
        goto done;
    candidates = malloc(((size_t)docs.count + 1) * sizeof *candidates);
    if (!candidates) {
        codesearch_error("out of memory");
        goto done;
    }
    uint32_t candidate_count = absent ? 0 : docs.count;
    for (uint32_t d = 0; d < candidate_count; d++)
        candidates[d] = d;
    if (!filter_candidates(&docs, filters, filter_count, candidates, &candidate_count))
        goto done;
    double filtered = seconds_now();
    uint32_t found[CANDIDATE_FALSE_POSITIVE + 1] = { 0 };
    for (uint32_t i = 0; i < candidate_count; i++) {
        const char *path = docs.paths[candidates[i]];
        candidate_kind kind = read_candidate(path, query, query_len);
        found[kind]++;
        if (kind == CANDIDATE_UNREADABLE)
            codesearch_error("%s: %s (indexed, now unreadable)", path, strerror(errno));
        if (kind == CANDIDATE_MATCH)
            puts(path);
    }
    uint32_t matches = found[CANDIDATE_MATCH];
    double verified = seconds_now();
    if (stats) {
        /* The documents lacking a trigram of the string are those an exact
         * trigram index would rule out; of them, the filters let through
         * found[CANDIDATE_FALSE_POSITIVE]. Only the candidates are read, so
         * the documents holding every trigram are counted among them: the
         * filters never drop one. */
        uint32_t non_matching = docs.count - matches;
        uint32_t lacking = non_matching - found[CANDIDATE_ALL_TRIGRAMS];
        fprintf(stderr,
                "documents: %u\nquery trigrams: %ld%s\ncandidates after filtering: %u\n"
                "true matches: %u\n"
                "false candidates: %u of %u non-matching documents (%.4f%%)\n"
                "  holding every trigram of the string: %u\n"
                "  let through by the filters: %u of %u documents lacking a trigram (%.4f%%)\n"
                "time: %.3f ms filtering, %.3f ms reading candidates\n",
                docs.count, filter_count, absent ? " (one is in no document)" : "", candidate_count,
                matches, candidate_count - matches, non_matching,
                non_matching ? 100.0 * (candidate_count - matches) / non_matching : 0.0,
                found[CANDIDATE_ALL_TRIGRAMS], found[CANDIDATE_FALSE_POSITIVE], lacking,
                lacking ? 100.0 * found[CANDIDATE_FALSE_POSITIVE] / lacking : 0.0,
                (filtered - started) * 1e3, (verified - filtered) * 1e3);
    }
    status = matches > 0 ? 0 : 1;
done:
    for (long j = 0; filters && j < filter_count; j++)
        amq_free(filters[j].filter);
    free(filters);
    free(candidates);
    free(docs.paths);
    free(docs.ids);
    amq_bundle_close(index);
    return status;
}
