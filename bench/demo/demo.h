/*
 * demo.h - what amq_demo measures of one filter, and how it is printed.
 */
#ifndef AMQ_DEMO_H
#define AMQ_DEMO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One filter built from the words and asked about words and non-words. */
typedef struct demo_result {
    char label[64];           /* the type, and its variant in parentheses */
    char spec[160];           /* the amq_build spec it was built from */
    double target_fpr;        /* the rate the spec asked for */
    double bits_file;         /* amq_saved_bytes x 8 / words */
    double bits_memory;       /* the filter's data in memory x 8 / words */
    uint64_t false_positives; /* non-words answered "maybe" */
    uint64_t queries;         /* non-words asked */
    double build_ns;          /* per word, median of the runs */
    double present_ns;        /* amq_contains of every word, per word */
    double absent_ns;         /* amq_contains of every non-word */
    double batch_ns;          /* amq_contains_many of all non-words at once */
    int capabilities;         /* amq_family_capabilities */
} demo_result;

/* The measured rate, false_positives / queries. */
double demo_measured_fpr(const demo_result *result);

/* The fewest bits per key any filter needs for the measured rate,
 * log2(1 / rate); 0 when no false positive was seen. */
double demo_bound_bits(const demo_result *result);

/* What the type can do beside queries, as "add, remove, merge" or "static". */
void demo_supports(char *out, size_t capacity, int capabilities);

/* The table of results as Markdown. */
void demo_print_table(FILE *out, const demo_result *results, size_t count);

/* The results as tab-separated values with a commented header, for
 * gnuplot. */
void demo_print_tsv(FILE *out, const demo_result *results, size_t count);

#endif /* AMQ_DEMO_H */
