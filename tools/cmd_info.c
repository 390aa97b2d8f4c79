/*
 * cmd_info.c - `amq info FILE [--json] [--show-seed]`: what a filter file
 * holds.
 *
 * Everything amq_info_get reports, as an aligned table or as one flat JSON
 * object:
 *
 *   file, family, supports (a list: "add", "remove", "merge", "grow",
 *   "export"; amq_family_capabilities), capacity, count, count_estimated
 *   (true: count is estimated_count rounded, the family does not count
 *   its adds), estimated_count,
 *   size_bytes,
 *   bits_per_key, target_fpr, expected_fpr,
 *   the family's details (numbers or words, under their own snake_case
 *   names: "hashes", "layout", "fingerprint_bits", ...),
 *   hash ("xxh3 seed=0", as in the table), hash_kind (xxh3, md5, siphash),
 *   hash_secret (true: the seed or key is not the public default),
 *   hash_seed (xxh3) or hash_key (siphash, 32 hex digits) unless secret,
 *   checksum (the file's xxh3-64 trailer, 16 hex digits).
 *
 * The seed is secret. A seed or key nobody knows is what keeps keys
 * crafted to collide out of a filter (docs/SECURITY.md), and the file
 * cannot say whether its seed was drawn at random (seed=random) or chosen:
 * it stores the hasher as it always has, with no flag for that. So every
 * seed but the default 0, and every SipHash key, is left out unless
 * --show-seed asks for it: a seed of 0 protects nothing and hides nothing,
 * any other may be someone's secret, and a user who chose seed=42 knows it
 * already (or asks). Whoever can read the file can read the seed in it;
 * keeping it from the screen keeps it out of logs, tickets and terminals
 * shared in a screenshot, which is where info's output goes.
 *
 * Numbers that are not finite are null. The details share one object with
 * the common fields, so a script reads d["hashes"] as it reads
 * d["capacity"]; tests/cli/matrix.sh checks that no family repeats a name.
 *
 * A bundle (many named filters in one file, amq/bundle.h) is described by
 * its members: how many, and per type how many and their stored data bytes
 * (JSON: family "bundle", members, size_bytes, and "types": {TYPE:
 * {"members": N, "data_bytes": B}}).
 */
#include "cli.h"

#include "amq/bundle.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static const char info_usage[] =
    "Usage: amq info FILE [--json] [--show-seed]\n"
    "Describe the filter saved in FILE: its type, parameters, size, bits per key,\n"
    "the false-positive rate asked for and the one to expect at its fill, the\n"
    "keys added (types that count them) or their estimate from the contents\n"
    "(bloom, blocked-bloom, counting-bloom), how keys were added (counting-bloom,\n"
    "cuckoo: every copy, or once with --add-once), the key hash and the file's\n"
    "checksum. For a bundle\n"
    "of filters: its members, counted by type, with their data bytes.\n"
    "A seed other than the default 0, and a SipHash key, are secret: info says\n"
    "there is one and prints it only with --show-seed.\n"
    "\n"
    "      --json   one JSON object instead of the table: the same figures under\n"
    "               snake_case names (file, family, capacity, count,\n"
    "               count_estimated, add_once, estimated_count, size_bytes,\n"
    "               bits_per_key, target_fpr,\n"
    "               expected_fpr, the type's own details, hash, hash_kind,\n"
    "               hash_secret, hash_seed or hash_key, checksum); null for a\n"
    "               number that is not finite\n"
    "      --show-seed\n"
    "               print the key hash's seed or key even when it is secret (not\n"
    "               the default seed 0): whoever knows it can craft keys that\n"
    "               collide in the filter\n"
    "Exit status: 0 described, 2 an error.\n";

/* A JSON string: quotes and backslashes escaped, control characters as
 * \u00XX; other bytes as they are (paths and words are UTF-8 or ASCII). */
static void json_string(const char *text)
{
    putchar('"');
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            printf("\\u%04x", (unsigned char)*p);
        else
            putchar(*p);
    }
    putchar('"');
}

/* "name": value, a number; JSON has no NaN or infinity: null for them. */
static void json_number(const char *name, double value)
{
    printf(",\n  ");
    json_string(name);
    if (isfinite(value))
        printf(": %.17g", value);
    else
        printf(": null");
}

static void json_text(const char *name, const char *text)
{
    printf(",\n  ");
    json_string(name);
    printf(": ");
    json_string(text);
}

static void json_count(const char *name, uint64_t value)
{
    printf(",\n  ");
    json_string(name);
    printf(": %llu", (unsigned long long)value);
}

/* The whole amq_info as one flat JSON object (the order of the table). */
/* What the filter's type can do beside queries (amq_family_capabilities):
 * "supports  add, remove" ("static" first for a static type), or in JSON
 * "supports": ["add", "remove"]. */
static void print_supports(const char *family, bool json)
{
    int capabilities = amq_family_capabilities(family);
    const char *separator = "";
    if (json) {
        printf(",\n  \"supports\": [");
    } else {
        printf("supports         %s", capabilities & AMQ_CAN_ADD ? "" : "static");
        separator = capabilities & AMQ_CAN_ADD ? "" : ", ";
    }
    for (int bit = 1; amq_capability_name(bit); bit <<= 1) {
        if (!(capabilities & bit))
            continue;
        if (json)
            printf("%s\"%s\"", separator, amq_capability_name(bit));
        else
            printf("%s%s", separator, amq_capability_name(bit));
        separator = ", ";
    }
    printf(json ? "]" : "\n");
}

/* Whether a hasher's seed or key is one to keep secret: anything but no
 * key (md5) or the default xxh3 seed 0. The file does not record whether
 * it was drawn at random, so every other one is taken to be. */
static bool hasher_secret(const amq_hasher *hasher)
{
    if (hasher->kind == AMQ_HASH_MD5)
        return false;
    return hasher->kind != AMQ_HASH_XXH3 || cli_hasher_seed(hasher) != 0;
}

/* The hasher as the table and JSON's "hash" give it: "xxh3 seed=42" when
 * it may be shown, "xxh3 seed=secret" when not. */
static void format_hasher(char *out, size_t cap, const amq_hasher *hasher, bool show)
{
    if (show || !hasher_secret(hasher))
        cli_format_hasher(out, cap, hasher);
    else
        snprintf(out, cap, "%s %s=secret", cli_hasher_kind(hasher),
                 hasher->kind == AMQ_HASH_SIPHASH ? "key" : "seed");
}

static void print_json(const char *path, const amq_info *info, const char *hasher, bool show)
{
    printf("{\n  \"file\": ");
    json_string(path);
    json_text("family", info->family);
    print_supports(info->family, true);
    json_count("capacity", info->capacity);
    json_count("count", info->keys);
    printf(",\n  \"count_estimated\": %s", info->keys_estimated ? "true" : "false");
    printf(",\n  \"add_once\": %s", info->add_once ? "true" : "false");
    json_number("estimated_count", info->estimated_keys);
    json_count("size_bytes", info->memory_bytes);
    json_number("bits_per_key", info->bits_per_key);
    json_number("target_fpr", info->target_fpr);
    json_number("expected_fpr", info->expected_fpr);
    for (size_t i = 0; i < info->detail_count; i++) {
        const amq_info_detail *detail = &info->details[i];
        if (detail->text[0])
            json_text(detail->name, detail->text);
        else
            json_number(detail->name, detail->value);
    }
    json_text("hash", hasher);
    json_text("hash_kind", cli_hasher_kind(&info->hasher));
    bool secret = hasher_secret(&info->hasher);
    printf(",\n  \"hash_secret\": %s", secret ? "true" : "false");
    if (secret && !show) {
        /* Neither hash_seed nor hash_key: the seed is not printed. */
    } else if (info->hasher.kind == AMQ_HASH_XXH3) {
        json_count("hash_seed", cli_hasher_seed(&info->hasher));
    } else if (info->hasher.kind == AMQ_HASH_SIPHASH) {
        char key[33];
        cli_hasher_key_hex(key, &info->hasher);
        json_text("hash_key", key);
    }
    char checksum[17];
    snprintf(checksum, sizeof checksum, "%016llx", (unsigned long long)info->file_checksum);
    json_text("checksum", checksum);
    printf("\n}\n");
}

/* Members of each type in a bundle, in order of first appearance. */
typedef struct type_tally {
    const char *family;
    uint64_t members, data_bytes;
} type_tally;

static void print_bundle(const char *path, const amq_bundle *bundle, bool json)
{
    type_tally tallies[AMQ_INFO_MAX_DETAILS];
    size_t types = 0;
    for (uint64_t i = 0; i < amq_bundle_members(bundle); i++) {
        amq_bundle_member member;
        amq_bundle_member_at(&member, bundle, i);
        size_t t = 0;
        while (t < types && strcmp(tallies[t].family, member.family) != 0)
            t++;
        if (t == types && types < AMQ_INFO_MAX_DETAILS)
            tallies[types++] = (type_tally){ member.family, 0, 0 };
        if (t < types) {
            tallies[t].members++;
            tallies[t].data_bytes += member.data_len;
        }
    }
    uint64_t size = amq_bundle_file_bytes(bundle);
    if (json) {
        printf("{\n  \"file\": ");
        json_string(path);
        json_text("family", "bundle");
        json_count("members", amq_bundle_members(bundle));
        json_count("size_bytes", size);
        printf(",\n  \"types\": {");
        for (size_t t = 0; t < types; t++) {
            printf("%s\n    ", t ? "," : "");
            json_string(tallies[t].family);
            printf(": { \"members\": %llu, \"data_bytes\": %llu }",
                   (unsigned long long)tallies[t].members,
                   (unsigned long long)tallies[t].data_bytes);
        }
        printf("\n  }\n}\n");
        return;
    }
    char human[48];
    cli_format_bytes(human, sizeof human, (double)size);
    printf("file             %s\n", path);
    printf("type             bundle (many named filters)\n");
    printf("members          %llu\n", (unsigned long long)amq_bundle_members(bundle));
    printf("size             %llu bytes (%s)\n", (unsigned long long)size, human);
    for (size_t t = 0; t < types; t++)
        printf("  %-14s %llu members, %llu data bytes\n", tallies[t].family,
               (unsigned long long)tallies[t].members, (unsigned long long)tallies[t].data_bytes);
}

int cli_info(int argc, char **argv)
{
    enum { OPT_SHOW_SEED = 1000 };
    static const struct option options[] = {
        { "json", no_argument, NULL, 'j' },
        { "show-seed", no_argument, NULL, OPT_SHOW_SEED },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false, show_seed = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == OPT_SHOW_SEED)
            show_seed = true;
        else if (c == 'h') {
            fputs(info_usage, stdout);
            return CLI_EXIT_OK;
        } else
            return cli_option_error("info", c, argc, argv, options);
    }
    if (optind != argc - 1)
        return cli_usage_error("info", "give exactly one filter FILE");
    const char *path = argv[optind];
    amq_filter *filter = NULL;
    amq_diag diag = { .message = "" };
    int status = amq_load(&filter, path, 0, &diag);
    /* Not a filter: it may be a bundle of them. */
    amq_bundle *bundle = NULL;
    if (status == AMQ_EUNSUPPORTED &&
        amq_bundle_open(&bundle, path, AMQ_LOAD_MMAP, NULL) == AMQ_OK) {
        print_bundle(path, bundle, json);
        amq_bundle_close(bundle);
        return CLI_EXIT_OK;
    }
    if (status != AMQ_OK) {
        cli_load_error("info", path, status, &diag);
        return CLI_EXIT_ERROR;
    }
    amq_info info;
    amq_info_get(&info, filter);
    char hasher[80], size[48];
    format_hasher(hasher, sizeof hasher, &info.hasher, show_seed);
    cli_format_bytes(size, sizeof size, (double)info.memory_bytes);

    if (json) {
        print_json(path, &info, hasher, show_seed);
    } else {
        printf("file             %s\n", path);
        printf("type             %s\n", info.family);
        print_supports(info.family, false);
        printf("capacity         %llu\n", (unsigned long long)info.capacity);
        if (!info.keys_estimated)
            printf("keys added       %llu\n", (unsigned long long)info.keys);
        if (!isfinite(info.estimated_keys))
            printf("estimated keys   too many to tell (every bit is set)\n");
        else if (info.keys_estimated)
            printf("estimated keys   %.0f (from the bits set: a %s filter does not count its "
                   "adds)\n",
                   info.estimated_keys, info.family);
        else if (llround(info.estimated_keys) != (long long)info.keys)
            printf("estimated keys   %.0f (from the contents)\n", info.estimated_keys);
        if (cli_family_removes(info.family))
            printf("adds             %s\n",
                   info.add_once ? "once (--add-once): amq remove refuses this file"
                                 : "every copy: a key added k times is removed by k removes");
        printf("size             %llu bytes (%s)\n", (unsigned long long)info.memory_bytes, size);
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
        double delivered = cli_undelivered_rate(filter);
        if (delivered > 0)
            printf("note             the target FPR is below what this filter delivers: about "
                   "%.3g at its capacity\n",
                   delivered);
        if (hasher_secret(&info.hasher) && !show_seed)
            printf("hash             %s with a secret %s (--show-seed prints it)\n",
                   cli_hasher_kind(&info.hasher),
                   info.hasher.kind == AMQ_HASH_SIPHASH ? "key" : "seed");
        else
            printf("hash             %s\n", hasher);
        printf("checksum         %016llx (xxh3-64)\n", (unsigned long long)info.file_checksum);
    }
    amq_free(filter);
    return CLI_EXIT_OK;
}
