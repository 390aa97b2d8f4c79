/*
 * report.c - amq_demo's table and data file.
 *
 * The table has one line per filter: its size per word in the saved file
 * (and in memory, when that differs by more than 5%, as for hfb, whose
 * banks are stored compressed), the space bound for the rate it reached,
 * log2(1/rate) bits per key, which no filter can beat, and the ratio of the
 * two; the measured rate; build and query time per word; what the type can
 * do. The measured rate of n queries that each come out positive with
 * probability p has a standard deviation of sqrt(p(1-p)/n): at the demo's
 * 663,473 non-words that is 1.2% of p at p = 1% and 3.9% at p = 0.1%, so
 * the bound column is good to about 0.06 bits.
 */
#include "demo.h"

#include "amq/amq.h"

#include <math.h>
#include <string.h>

double demo_measured_fpr(const demo_result *result)
{
    return result->queries ? (double)result->false_positives / (double)result->queries : 0.0;
}

double demo_bound_bits(const demo_result *result)
{
    double rate = demo_measured_fpr(result);
    return rate > 0.0 ? -log2(rate) : 0.0;
}

void demo_supports(char *out, size_t capacity, int capabilities)
{
    size_t used = (size_t)snprintf(out, capacity, "%s", capabilities & AMQ_CAN_ADD ? "" : "static");
    for (int bit = 1; amq_capability_name(bit) && used < capacity; bit <<= 1)
        if (capabilities & bit)
            used += (size_t)snprintf(out + used, capacity - used, "%s%s", used ? ", " : "",
                                     amq_capability_name(bit));
}

/* A rate as a percentage with three significant digits. */
static void format_rate(char *out, size_t capacity, double rate)
{
    double percent = rate * 100.0;
    int decimals = percent >= 1.0 ? 2 : percent >= 0.1 ? 3 : percent >= 0.01 ? 4 : 5;
    snprintf(out, capacity, "%.*f%%", decimals, percent);
}

void demo_print_table(FILE *out, const demo_result *results, size_t count)
{
    fputs("| filter | p asked | bits/key | bound log2(1/ε) | ÷ bound | measured ε "
          "| build ns/key | query ns/key: words | non-words | batch | supports |\n",
          out);
    fputs("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n", out);
    for (size_t i = 0; i < count; i++) {
        const demo_result *r = &results[i];
        char asked[32], measured[32], bits[48], bound[32], ratio[32], supports[96];
        format_rate(asked, sizeof asked, r->target_fpr);
        format_rate(measured, sizeof measured, demo_measured_fpr(r));
        if (fabs(r->bits_memory - r->bits_file) > 0.05 * r->bits_file)
            snprintf(bits, sizeof bits, "%.2f (%.1f in memory)", r->bits_file, r->bits_memory);
        else
            snprintf(bits, sizeof bits, "%.2f", r->bits_file);
        double bound_bits = demo_bound_bits(r);
        if (bound_bits > 0.0) {
            snprintf(bound, sizeof bound, "%.2f", bound_bits);
            snprintf(ratio, sizeof ratio, "%.2f×", r->bits_file / bound_bits);
        } else {
            snprintf(measured, sizeof measured, "0 of %llu", (unsigned long long)r->queries);
            snprintf(bound, sizeof bound, "—");
            snprintf(ratio, sizeof ratio, "—");
        }
        demo_supports(supports, sizeof supports, r->capabilities);
        fprintf(out, "| %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %s |\n", r->label,
                asked, bits, bound, ratio, measured, r->build_ns, r->present_ns, r->absent_ns,
                r->batch_ns, supports);
    }
}

void demo_print_tsv(FILE *out, const demo_result *results, size_t count)
{
    fputs("# label\tp_asked\tbits_file\tbits_memory\tmeasured_fpr\tbound_bits\tbuild_ns"
          "\tpresent_ns\tabsent_ns\tbatch_ns\tfalse_positives\tqueries\n",
          out);
    for (size_t i = 0; i < count; i++) {
        const demo_result *r = &results[i];
        fprintf(out, "\"%s\"\t%g\t%.4f\t%.4f\t%.6g\t%.4f\t%.2f\t%.2f\t%.2f\t%.2f\t%llu\t%llu\n",
                r->label, r->target_fpr, r->bits_file, r->bits_memory, demo_measured_fpr(r),
                demo_bound_bits(r), r->build_ns, r->present_ns, r->absent_ns, r->batch_ns,
                (unsigned long long)r->false_positives, (unsigned long long)r->queries);
    }
}
