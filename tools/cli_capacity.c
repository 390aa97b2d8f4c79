/*
 * cli_capacity.c - what the tool says when a filter runs out of room.
 *
 * A filter made for n keys either grows past n (scalable-bloom; cuckoo
 * built with --growth), fills up (cuckoo without growth: an add answers
 * AMQ_EFULL), or takes every key and lets its false-positive rate rise
 * (bloom, blocked-bloom, counting-bloom). Nothing is lost in the last
 * case - a filter has no false negatives - but the rate the user asked
 * for no longer holds, so the command finishes its work, says once how
 * far past its capacity the filter is and what rate that means now, and
 * exits CLI_EXIT_PAST_CAPACITY. A full cuckoo filter is an error whose
 * message names the real cause and the remedy.
 */
#include "cli.h"

#include "amq/bloom.h"
#include "amq/cuckoo.h"

#include <math.h>

/* A family detail's number, or fallback when the family has none. */
static double detail_value(const amq_info *info, const char *name, double fallback)
{
    const amq_info_detail *detail = cli_info_detail(info, name);
    return detail ? detail->value : fallback;
}

bool cli_warn_past_capacity(const char *command, const char *what, const amq_filter *filter,
                            uint64_t keys, uint64_t read, const char *remedy)
{
    amq_info info;
    amq_info_get(&info, filter);
    int capabilities = amq_family_capabilities(info.family);
    if (capabilities >= 0 && (capabilities & AMQ_CAN_GROW))
        return false;
    bool estimated = keys == 0 && info.keys_estimated;
    if (keys == 0)
        keys = info.keys;
    if (estimated && !isfinite(info.estimated_keys)) {
        cli_error("%s: warning: %s is saturated (every bit is set): it answers \"maybe\" for "
                  "every key; it was made for %llu keys: build it with a larger -n",
                  command, what, (unsigned long long)info.capacity);
        return true;
    }
    if (info.capacity == 0 || keys <= info.capacity)
        return false;
    /* An estimate near the capacity may be above it by chance alone: what
     * the user asked for is the rate, so an estimated count is past only
     * when the rate is clearly above the target too. */
    if (estimated && !(info.expected_fpr > 1.1 * info.target_fpr))
        return false;
    /* Once most bits are set, a new key often looks present and is not
     * counted as added: keys is then a lower bound. */
    char of_read[64] = "";
    if (read > keys)
        snprintf(of_read, sizeof of_read, " (of %llu read)", (unsigned long long)read);
    char fallback[256];
    if (!remedy) {
        char grows[128];
        cli_list_families(grows, sizeof grows, cli_family_grows, " or ");
        snprintf(fallback, sizeof fallback, "build it with a larger -n, or use %s, which grow",
                 grows);
        remedy = fallback;
    }
    cli_error("%s: warning: %s holds %s%llu distinct keys%s, %.2f times the %llu it was made "
              "for: its false-positive rate is now %.3g, not %.3g; %s",
              command, what,
              estimated     ? "about "
              : read > keys ? "at least "
                            : "",
              (unsigned long long)keys, of_read, (double)keys / (double)info.capacity,
              (unsigned long long)info.capacity, info.expected_fpr, info.target_fpr, remedy);
    return true;
}

double cli_undelivered_rate(const amq_filter *filter)
{
    amq_info info;
    amq_info_get(&info, filter);
    double at_capacity = detail_value(&info, "fpr_at_capacity", 0);
    return at_capacity > 1.5 * info.target_fpr ? at_capacity : 0;
}

/* A full filter's error: a cuckoo filter's names why it is full
 * (amq_cuckoo_why_full) and the remedy for that cause. */
static void full_error(const char *command, const char *where, amq_filter *filter)
{
    amq_info info;
    amq_info_get(&info, filter);
    const amq_cuckoo *cuckoo = amq_cuckoo_unwrap(filter);
    if (!cuckoo) {
        cli_error("%s: %s: the %s filter is full (%llu keys, made for %llu); build it with a "
                  "larger -n",
                  command, where, info.family, (unsigned long long)info.keys,
                  (unsigned long long)info.capacity);
        return;
    }
    int why = amq_cuckoo_why_full(cuckoo);
    size_t tables = amq_cuckoo_tables(cuckoo);
    switch (why & 0xff) {
    case AMQ_CUCKOO_FULL_MOST_TABLES:
        cli_error("%s: %s: the cuckoo filter is full: its %zu tables, the most a filter "
                  "chains, hold %llu keys; build it with a larger -n or --growth",
                  command, where, tables, (unsigned long long)info.keys);
        return;
    case AMQ_CUCKOO_FULL_TABLE_TOO_LARGE:
        cli_error("%s: %s: the cuckoo filter is full: it holds %llu keys in %zu tables, "
                  "and its next table would have more than 2^32 buckets, the most a table "
                  "has; build it with a smaller --growth",
                  command, where, (unsigned long long)info.keys, tables);
        return;
    default:
        break;
    }
    char short_fingerprint[160] = "";
    if (why & AMQ_CUCKOO_FULL_SHORT_FINGERPRINTS)
        snprintf(short_fingerprint, sizeof short_fingerprint,
                 ", or a larger --fingerprint-bits (with %u bits a key's second bucket has "
                 "few choices and tables fill early)",
                 (unsigned)amq_cuckoo_fingerprint_bits(cuckoo));
    cli_error("%s: %s: the cuckoo filter is full: %llu keys in room for %llu, and a walk of %u "
              "relocations found no free slot for this key; build it with --growth 2 (a full "
              "filter then chains a larger table), a larger -n%s",
              command, where, (unsigned long long)info.keys, (unsigned long long)info.capacity,
              (unsigned)amq_cuckoo_max_kicks(cuckoo), short_fingerprint);
}

/* A growing filter whose next stage would pass one of its limits. */
static void growth_error(const char *command, const char *where, const amq_filter *filter)
{
    amq_info info;
    amq_info_get(&info, filter);
    cli_error("%s: %s: the %s filter cannot grow any further: its next stage would pass a "
              "limit (at most %d stages, each of at most 2^48 bits and 256 bits per key); it "
              "holds %llu keys in %.0f stages; build it with a larger -n, a higher -p or a "
              "tightening nearer 1",
              command, where, info.family, AMQ_SCALABLE_BLOOM_MAX_STAGES,
              (unsigned long long)info.keys, detail_value(&info, "stages", 0));
}

void cli_add_error(const char *command, const char *where, amq_filter *filter, int status)
{
    if (status == AMQ_EFULL) {
        full_error(command, where, filter);
        return;
    }
    int capabilities = amq_family_capabilities(amq_filter_family(filter));
    if (status == AMQ_ERANGE && capabilities >= 0 && (capabilities & AMQ_CAN_GROW)) {
        growth_error(command, where, filter);
        return;
    }
    cli_error("%s: %s: %s", command, where, amq_strerror(status));
}
