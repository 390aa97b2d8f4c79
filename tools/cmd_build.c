/*
 * cmd_build.c - `amq build -t TYPE [options] -o FILE [INPUT...]`.
 *
 * The family options are passed on to the library as a spec ("bloom
 * n=1000000 p=0.01 ..."), so each family accepts or refuses them by name in
 * one place (the spec parser); which options there are, their short forms
 * and their help come from the library's tables too (cli_options.c). A dynamic family given -n is
 * filled line by line as the input streams past; otherwise (a static family, or no -n) all keys are
 * read first, repeated keys are dropped exactly (cli_keys.c), and the filter is built from the
 * distinct keys, sized to their number. A filter that removes keys (counting-bloom, cuckoo) gets
 * every copy, streamed or read first, so that a key given k times stays until it is removed k
 * times; read first, it is sized for the distinct keys (a cuckoo filter: for the copies its slots
 * will store, at most b / 2 of each key, and a quarter more for second copies). --add-once gives
 * such a filter each key once (the distinct keys, or streaming, only keys it does not already
 * answer "maybe" for) and marks the file add-once, which amq remove refuses (cmd_update.c says
 * why). A cuckoo filter is built to grow
 * (--growth 2) unless --growth says otherwise, so `amq add` never finds it full. Past
 * -n, a type that does not grow keeps every key but its false-positive rate
 * rises: the build saves it, says so, and exits CLI_EXIT_PAST_CAPACITY.
 * An hfb filter's keys are its 16-byte IDs, 32 hex digits a line,
 * unless --hash md5 hashes arbitrary lines into IDs. A warning the filter
 * reports about its keys (an amq_info detail "warning": hfb IDs that do not
 * look random) is printed to stderr; the build still succeeds.
 */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* The usage text around the options of the filter types, which come from
 * the library's tables (cli_options.c). */
static const char build_usage_head[] =
    "Usage: amq build -t TYPE [OPTIONS] -o FILE [INPUT...]\n"
    "Build a filter from keys, one per line, read from the INPUT files ('-' or\n"
    "none: standard input), and save it to FILE.\n"
    "\n";
static const char build_usage_own[] =
    "  -o, --output FILE          where to save the filter\n"
    "      --force                overwrite FILE if it exists\n"
    "      --hex                  each key is hexadecimal, decoded to bytes\n"
    "      --binary               keys are any bytes: read input that looks binary\n"
    "      --field N              the key is the Nth field of the line (empty if\n"
    "                             fewer)\n"
    "      --delimiter C          the byte between fields (default: tab; \\t: a tab)\n"
    "      --add-once             counting-bloom, cuckoo: store each key once (only\n"
    "                             if it does not already answer maybe) and mark\n"
    "                             FILE so: amq remove then refuses it (default:\n"
    "                             every copy, each removed by one remove)\n"
    "      --count-duplicates     store every copy (the default)\n"
    "\n";
static const char build_usage_tail[] =
    "\n"
    "Without -n a filter is sized to the distinct keys read; a static type is\n"
    "always sized to its keys and refuses -n. A cuckoo filter is built with\n"
    "growth 2 unless --growth says otherwise. An hfb filter's lines are 16-byte\n"
    "IDs in 32 hex digits unless --hash md5 hashes lines into IDs. fuse8 and\n"
    "fuse16 have a fixed rate, 2^-8 and 2^-16, and take any P down to it.\n"
    "A line ends at \\n or \\r\\n (not part of the key), up to 64 MiB; gzip and\n"
    "zstd input is decompressed.\n"
    "A type refuses, by name, the options that do not apply to it.\n"
    "Exit status: 0 built and saved, 2 an error (nothing is written), 3 saved, but\n"
    "more keys than -n went into a type that does not grow: its false-positive\n"
    "rate is above P (said on stderr).\n";

/* `amq build --help`: with the options of type when it is known (-t before
 * --help), else of every type. */
static void print_usage(const char *type)
{
    fputs(build_usage_head, stdout);
    char types[512];
    cli_list_families(types, sizeof types, NULL, ", ");
    cli_print_help_line(stdout, "-t, --type TYPE", types, NULL);
    fputs(build_usage_own, stdout);
    cli_print_type_options(stdout, type);
    fputs(build_usage_tail, stdout);
}

/* The value given for a family option, or NULL. */
static const char *given_value(const cli_type_option *options, size_t count,
                               const char *const *given, const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(options[i].name, name) == 0)
            return given[i];
    return NULL;
}

/* Print the warning a filter reports about its keys, if any. */
static void print_warning(const amq_filter *filter, const char *output)
{
    amq_info info;
    amq_info_get(&info, filter);
    const amq_info_detail *warning = cli_info_detail(&info, "warning");
    if (warning)
        cli_error("build: warning: %s (amq info %s shows why); the filter is saved", warning->text,
                  output);
}

/* Say the size/speed trade-off the filter's layout chose, when it reports
 * one (gcs: its layout, the codes a query decodes, the other layout's:
 * the info details alt_layout_bits and alt_layout_codes). */
static void print_trade_off(const amq_filter *filter)
{
    amq_info info;
    amq_info_get(&info, filter);
    const amq_info_detail *layout = cli_info_detail(&info, "layout");
    const amq_info_detail *codes = cli_info_detail(&info, "query_codes");
    const amq_info_detail *other = cli_info_detail(&info, "alt_layout_bits");
    const amq_info_detail *other_codes = cli_info_detail(&info, "alt_layout_codes");
    if (!layout || !codes || !other || !other_codes || info.keys == 0)
        return; /* an empty filter has no bits per key to weigh */
    bool bucketed = strcmp(layout->text, "bucketed") == 0;
    cli_error("build: note: %s layout, %.2f bits/key, a query decodes about %.0f codes; "
              "--stream %s: about %.2f bits/key, %.0f codes",
              layout->text, info.bits_per_key, codes->value, bucketed ? "continuous" : "bucketed",
              other->value, other_codes->value);
}

/* The family option a short option letter stands for, or -1. */
static int family_option_index(const cli_type_option *options, size_t count, int letter)
{
    for (size_t i = 0; i < count; i++)
        if (options[i].letter && options[i].letter == letter)
            return (int)i;
    return -1;
}

/* Build a filter from the keys held in store: a static type through
 * amq_build (sized to the keys); a dynamic one made for them with amq_new
 * and filled by add_keys. */
static int build_from_store(amq_filter **out, const char *spec, const cli_keys *store)
{
    const void **keys = malloc((store->count ? store->count : 1) * sizeof *keys);
    size_t *lens = malloc((store->count ? store->count : 1) * sizeof *lens);
    int status = AMQ_ENOMEM;
    amq_diag diag = { .message = "" };
    if (keys && lens) {
        for (size_t i = 0; i < store->count; i++)
            keys[i] = cli_keys_at(store, i, &lens[i]);
        status = amq_build(out, spec, (const void *const *)keys, lens, store->count, &diag);
    }
    if (status != AMQ_OK)
        cli_spec_error("build", diag.message[0] ? diag.message : amq_strerror(status));
    free(keys);
    free(lens);
    return status;
}

/* Add one key: every copy (amq_add), or once (amq_add_unique). Returns
 * AMQ_OK or an error code; *added is set when the filter changed. */
static int add_key(amq_filter *filter, const void *key, size_t len, bool count_copies, bool *added)
{
    if (count_copies) {
        int status = amq_add(filter, key, len);
        *added = status == AMQ_OK;
        return status;
    }
    int status = amq_add_unique(filter, key, len);
    *added = status == 1;
    return status < 0 ? status : AMQ_OK;
}

int cli_build(int argc, char **argv)
{
    enum { OPT_FORCE = 1000, OPT_HELP, OPT_COUNT_DUPLICATES, OPT_ADD_ONCE };
    /* The filter types' options first, from the library's tables, then
     * build's own and the input options. */
    cli_type_option family[CLI_MAX_TYPE_OPTIONS];
    size_t family_count = cli_type_options(family, CLI_MAX_TYPE_OPTIONS);
    struct option options[CLI_MAX_TYPE_OPTIONS + 6 + CLI_INPUT_LONG_OPTIONS];
    char shorts[2 * CLI_MAX_TYPE_OPTIONS + 8] = ":t:o:h";
    size_t shorts_len = strlen(shorts);
    for (size_t i = 0; i < family_count; i++) {
        options[i] =
            (struct option){ family[i].name, family[i].flag ? no_argument : required_argument, NULL,
                             family[i].letter };
        if (family[i].letter) {
            shorts[shorts_len++] = family[i].letter;
            if (!family[i].flag)
                shorts[shorts_len++] = ':';
        }
    }
    shorts[shorts_len] = '\0';
    options[family_count + 0] = (struct option){ "type", required_argument, NULL, 't' };
    options[family_count + 1] = (struct option){ "output", required_argument, NULL, 'o' };
    options[family_count + 2] = (struct option){ "force", no_argument, NULL, OPT_FORCE };
    options[family_count + 3] = (struct option){ "help", no_argument, NULL, 'h' };
    options[family_count + 4] =
        (struct option){ "count-duplicates", no_argument, NULL, OPT_COUNT_DUPLICATES };
    options[family_count + 5] = (struct option){ "add-once", no_argument, NULL, OPT_ADD_ONCE };
    memcpy(options + family_count + 6, cli_input_long_options, sizeof cli_input_long_options);
    cli_input_options input = { 0 };

    const char *type = NULL, *output = NULL;
    bool force = false, capacity_given = false, count_duplicates = false, add_once = false;
    /* Family options are collected first and appended once the type is known. */
    const char *given[CLI_MAX_TYPE_OPTIONS] = { NULL };
    bool flag_given[CLI_MAX_TYPE_OPTIONS] = { false };

    optind = 1;
    opterr = 0;
    int c, index = -1;
    while ((c = getopt_long(argc, argv, shorts, options, &index)) != -1) {
        int taken = cli_input_option(&input, "build", c, optarg);
        if (taken < 0)
            return CLI_EXIT_ERROR;
        if (taken) {
            index = -1;
            continue;
        }
        int letter_index = c > 0 && c < 256 ? family_option_index(family, family_count, c) : -1;
        if (c == 0 || letter_index >= 0) {
            if (c != 0)
                index = letter_index;
            if (index < 0 || (size_t)index >= family_count)
                return cli_usage_error("build", "unexpected option");
            if (given[index] || flag_given[index])
                return cli_usage_error("build", "--%s is given twice", options[index].name);
            if (options[index].has_arg == no_argument)
                flag_given[index] = true;
            else
                given[index] = optarg;
            if (strcmp(options[index].name, "capacity") == 0)
                capacity_given = true;
            index = -1;
            continue;
        }
        switch (c) {
        case 't':
            if (type)
                return cli_usage_error("build", "-t/--type is given twice");
            type = optarg;
            break;
        case 'o':
            if (output)
                return cli_usage_error("build", "-o/--output is given twice");
            output = optarg;
            break;
        case OPT_COUNT_DUPLICATES:
            count_duplicates = true;
            break;
        case OPT_ADD_ONCE:
            add_once = true;
            break;
        case OPT_FORCE:
            force = true;
            break;
        case 'h':
            print_usage(type);
            return CLI_EXIT_OK;
        default:
            return cli_option_error("build", c, argc, argv, options);
        }
        index = -1;
    }
    if (!type)
        return cli_usage_error("build", "give the filter type with -t TYPE");
    if (!output)
        return cli_usage_error("build", "give the output file with -o FILE");

    int is_static = amq_family_is_static(type);
    if (is_static < 0) {
        char known[512];
        cli_list_families(known, sizeof known, NULL, ", ");
        return cli_usage_error("build", "unknown filter type '%s' (this build has: %s)", type,
                               known[0] ? known : "none");
    }
    if (is_static && capacity_given)
        return cli_usage_error("build",
                               "-n does not apply to %s: a static filter is sized to the keys "
                               "it is built from",
                               type);
    if (count_duplicates && add_once)
        return cli_usage_error("build", "--count-duplicates and --add-once contradict each other: "
                                        "give one (every copy is stored by default)");
    if ((count_duplicates || add_once) && !cli_family_removes(type)) {
        char removing[256];
        cli_list_families(removing, sizeof removing, cli_family_removes, " and ");
        return cli_usage_error("build",
                               "--%s applies to %s, not %s: it holds a key once however often it "
                               "is added",
                               add_once ? "add-once" : "count-duplicates", removing, type);
    }
    /* Whether each copy of a repeated key goes into the filter: into one
     * that removes keys, unless told to add once. */
    bool store_copies = cli_family_removes(type) && !add_once;
    /* A type whose buckets have slots (bucket-size: cuckoo) stores copies
     * of a key in them, up to half a bucket, and counts the rest. */
    bool copies_take_slots = cli_family_takes_option(type, "bucket-size");
    int capabilities = amq_family_capabilities(type);
    cli_spec spec;
    cli_spec_init(&spec, type);
    for (size_t i = 0; i < family_count; i++)
        if ((given[i] || flag_given[i]) &&
            cli_spec_add(&spec, "build", family[i].name, given[i]) < 0)
            return CLI_EXIT_ERROR;
    /* A type that is of a fixed size unless asked to grow (cuckoo) grows
     * unless told not to (--growth 0), so later adds never find it full. */
    if (capabilities >= 0 && (capabilities & AMQ_GROWS_IF_ASKED) &&
        !given_value(family, family_count, given, "growth") &&
        cli_spec_add(&spec, "build", "growth", CLI_CUCKOO_GROWTH) < 0)
        return CLI_EXIT_ERROR;
    /* Before --force is looked at: no option replaces a frontier's file. */
    if (cli_refuse_frontier_file("build", output, false))
        return CLI_EXIT_ERROR;
    if (!force && cli_refuse_overwrite("build", output))
        return CLI_EXIT_ERROR;

    bool ids = cli_type_takes_ids(type, given_value(family, family_count, given, "hash"));
    cli_input in;
    input.hex = input.hex || ids;
    if (cli_input_open(&in, argv + optind, argc - optind, "build", &input) < 0)
        return CLI_EXIT_ERROR;
    in.ids = ids;
    amq_filter *filter = NULL;
    const void *key;
    size_t len;
    int got, status = AMQ_OK;
    amq_diag diag = { .message = "" };

    uint64_t added = 0, read = 0;
    if (!is_static && capacity_given) {
        /* Filled as the input streams past: memory is the filter's alone. */
        status = amq_new(&filter, spec.text, &diag);
        if (status != AMQ_OK) {
            cli_spec_error("build", diag.message[0] ? diag.message : amq_strerror(status));
            cli_input_close(&in);
            return CLI_EXIT_ERROR;
        }
        while ((got = cli_input_next(&in, &key, &len)) > 0) {
            bool changed = false;
            status = add_key(filter, key, len, store_copies, &changed);
            added += changed;
            read++;
            if (status != AMQ_OK) {
                char where[4200];
                snprintf(where, sizeof where, "%s:%llu", in.name,
                         (unsigned long long)in.line_number);
                cli_add_error("build", where, filter, status);
                break;
            }
        }
    } else {
        /* Every key first, so the filter is made for the distinct keys. */
        cli_keys store = { 0 };
        while ((got = cli_input_next(&in, &key, &len)) > 0) {
            if (cli_keys_add(&store, key, len) < 0) {
                cli_error("build: out of memory after %zu keys", store.count);
                got = -1;
                break;
            }
        }
        size_t distinct = 0, held = 0;
        /* A cuckoo filter stores at most b / 2 copies of a key in its
         * slots (copies_take_slots), and counts the rest. */
        const char *bucket_size = given_value(family, family_count, given, "bucket-size");
        size_t slots_per_key = (bucket_size ? (size_t)strtoul(bucket_size, NULL, 10) : 4) / 2;
        if (got == 0 && cli_keys_distinct(&store, !store_copies, slots_per_key, &distinct,
                                          copies_take_slots && store_copies ? &held : NULL) < 0) {
            cli_error("build: out of memory finding the distinct keys of %zu", store.count);
            got = -1;
        }
        /* A dynamic type keeping copies is still made for the distinct keys
         * (a cuckoo filter: for the copies its slots store, and a quarter
         * more for the second copies: copies that share two buckets fill a
         * table at about 87% of its slots, not 95%, cuckoo_overflow.c). */
        size_t sized_for =
            copies_take_slots && store_copies ? held + (held - distinct) / 4 : distinct;
        char capacity[32];
        snprintf(capacity, sizeof capacity, "%zu", sized_for ? sized_for : 1);
        if (got == 0 && !is_static && store_copies &&
            cli_spec_add(&spec, "build", "capacity", capacity) < 0)
            got = -1;
        if (got == 0) {
            cli_progress_phase(&in.progress, "building the filter");
            status = build_from_store(&filter, spec.text, &store);
        }
        cli_keys_free(&store);
    }
    if (got == 0 && status == AMQ_OK && add_once) {
        status = amq_mark_add_once(filter, &diag);
        if (status != AMQ_OK)
            cli_error("build: %s", diag.message);
    }
    int exit_code = CLI_EXIT_ERROR;
    if (got == 0 && status == AMQ_OK) {
        cli_progress_phase(&in.progress, "saving");
        /* Locked for the save alone: build reads nothing of the old file,
         * but its save must not land inside an add's load and save, which
         * would then save the old filter over the new one. */
        cli_lock lock;
        if (cli_lock_take(&lock, "build", output, true) == 0 &&
            cli_save(filter, "build", output) == AMQ_OK)
            exit_code = CLI_EXIT_OK;
        cli_lock_release(&lock);
    }
    cli_input_close(&in);
    if (exit_code == CLI_EXIT_OK) {
        print_warning(filter, output);
        print_trade_off(filter);
        double delivered = cli_undelivered_rate(filter);
        if (delivered > 0) {
            amq_info info;
            amq_info_get(&info, filter);
            cli_error("build: note: p = %.3g is below what a %s filter of %llu keys can deliver: "
                      "it will have about %.3g at its capacity",
                      info.target_fpr, info.family, (unsigned long long)info.capacity, delivered);
        }
        if (capacity_given &&
            cli_warn_past_capacity("build", output, filter, store_copies ? 0 : added,
                                   store_copies ? 0 : read, NULL))
            exit_code = CLI_EXIT_PAST_CAPACITY;
    }
    amq_free(filter);
    return exit_code;
}
