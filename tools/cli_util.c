/*
 * cli_util.c - helpers the subcommands share: error messages, building a
 * spec from options, loading and saving with messages that name the file,
 * and human-readable sizes.
 */
#include "cli.h"
#include "cli_decompress.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_error(const char *format, ...)
{
    va_list args;
    cli_progress_clear();
    fputs("amq: ", stderr);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
}

int cli_usage_error(const char *command, const char *format, ...)
{
    va_list args;
    cli_progress_clear();
    fprintf(stderr, "amq %s: ", command);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, "\nTry 'amq %s --help'.\n", command);
    return CLI_EXIT_ERROR;
}

/* The argument of argv that holds the short option letter getopt is
 * reporting: the one being scanned (getopt has not moved past a bundle such
 * as "-Zq" while letters are left in it) or the one just finished. */
static const char *short_option_argument(int argc, char **argv, int letter)
{
    for (int i = optind; i >= optind - 1 && i >= 1; i--) {
        const char *arg = i < argc ? argv[i] : NULL;
        if (arg && arg[0] == '-' && arg[1] != '-' && strchr(arg + 1, letter))
            return arg;
    }
    return NULL;
}

/* Whether getopt_long is reporting the long option arg ("--name" or
 * "--name=value"): optopt is 0 for an unknown one, or the value of the
 * option the typed name stands for. */
static bool reports_long_option(const char *arg, const struct option *long_options)
{
    if (!arg || strncmp(arg, "--", 2) != 0)
        return false;
    if (optopt == 0)
        return true;
    size_t name_len = strcspn(arg + 2, "=");
    for (const struct option *o = long_options; o && o->name; o++)
        if (strncmp(o->name, arg + 2, name_len) == 0 && !o->flag && o->val == optopt)
            return true;
    return false;
}

int cli_option_error(const char *command, int result, int argc, char **argv,
                     const struct option *long_options)
{
    const char *arg = optind >= 2 && optind - 1 < argc ? argv[optind - 1] : NULL;
    if (reports_long_option(arg, long_options)) {
        size_t name_len = strcspn(arg + 2, "=");
        int shown = (int)name_len + 2;
        size_t prefixed = 0;
        bool exact = false;
        for (const struct option *o = long_options; o && o->name; o++) {
            if (strncmp(o->name, arg + 2, name_len) != 0)
                continue;
            prefixed++;
            exact = exact || strlen(o->name) == name_len;
        }
        if (result == ':')
            return cli_usage_error(command, "option '%.*s' needs a value", shown, arg);
        if (exact || prefixed == 1)
            return cli_usage_error(command, "option '%.*s' takes no value", shown, arg);
        if (prefixed > 1)
            return cli_usage_error(command, "option '%.*s' is ambiguous (%zu options begin so)",
                                   shown, arg, prefixed);
        return cli_usage_error(command, "unknown option '%.*s'", shown, arg);
    }
    const char *bundle = NULL;
    if (optopt > 0 && optopt < 256 && isgraph(optopt))
        bundle = short_option_argument(argc, argv, optopt);
    if (!bundle)
        return cli_usage_error(command, "unknown option '%s'", arg ? arg : "?");
    if (result == ':')
        return cli_usage_error(command, "option '-%c' needs a value", optopt);
    if (strlen(bundle) == 2)
        return cli_usage_error(command, "unknown option '-%c'", optopt);
    return cli_usage_error(command, "unknown option '-%c' (in '%s')", optopt, bundle);
}

int cli_stdout_error(const char *command, int error)
{
    /* In the words amq_cli.c's final check uses for every command. */
    cli_progress_clear();
    fprintf(stderr, "amq %s: writing standard output%s%s\n", command, error ? ": " : " failed",
            error ? strerror(error) : "");
    return CLI_EXIT_ERROR;
}

int cli_stdout_flush(const char *command, int earlier)
{
    errno = 0;
    int flushed = fflush(stdout);
    int error = flushed != 0 && errno ? errno : earlier;
    if (flushed == 0 && !ferror(stdout))
        return 0;
    cli_stdout_error(command, error);
    return -1;
}

bool cli_stderr_is_tty(void)
{
    return isatty(STDERR_FILENO) == 1;
}

void cli_spec_init(cli_spec *spec, const char *type)
{
    spec->len = 0;
    spec->overflow = false;
    int n = snprintf(spec->text, sizeof spec->text, "%s", type);
    if (n < 0 || (size_t)n >= sizeof spec->text)
        spec->overflow = true;
    else
        spec->len = (size_t)n;
}

int cli_spec_add(cli_spec *spec, const char *command, const char *key, const char *value)
{
    if (value && (strpbrk(value, " \t\r\n=") != NULL || *value == 0)) {
        cli_usage_error(command, "--%s: '%s' is not a valid value", key, value);
        return -1;
    }
    int n = value ? snprintf(spec->text + spec->len, sizeof spec->text - spec->len, " %s=%s", key,
                             value)
                  : snprintf(spec->text + spec->len, sizeof spec->text - spec->len, " %s", key);
    if (n < 0 || (size_t)n >= sizeof spec->text - spec->len) {
        cli_usage_error(command, "options are too long");
        spec->overflow = true;
        return -1;
    }
    spec->len += (size_t)n;
    return 0;
}

void cli_spec_error(const char *command, const char *message)
{
    char text[1024];
    size_t used = 0;
    const char *p = message;
    while (*p && used + 1 < sizeof text) {
        const char *quote = strstr(p, "option '");
        if (!quote)
            break;
        const char *name = quote + strlen("option '");
        size_t len = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-");
        if (len == 0 || name[len] != '\'') {
            int n = snprintf(text + used, sizeof text - used, "%.*s", (int)(name - p), p);
            used += n > 0 ? (size_t)n : 0;
            p = name;
            continue;
        }
        char letter = cli_type_option_letter(name, len);
        int n = letter ? snprintf(text + used, sizeof text - used, "%.*s--%.*s' (-%c",
                                  (int)(name - p), p, (int)len, name, letter)
                       : snprintf(text + used, sizeof text - used, "%.*s--%.*s", (int)(name - p), p,
                                  (int)len, name);
        used += n > 0 ? (size_t)n : 0;
        if (used >= sizeof text)
            used = sizeof text - 1;
        p = name + len + (letter ? 1 : 0);
        if (letter && used + 1 < sizeof text)
            text[used++] = ')';
    }
    snprintf(text + used, sizeof text - used, "%s", p);
    cli_error("%s: %s", command, text);
}

int cli_load(amq_filter **out, const char *command, const char *path, unsigned flags)
{
    amq_diag diag = { .message = "" };
    int status = amq_load(out, path, flags, &diag);
    if (status != AMQ_OK)
        cli_load_error(command, path, status, &diag);
    return status;
}

/* For a file that is not an amq file: its compressed format, if its
 * first bytes name one, or NULL. */
static const char *compressed_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    unsigned char head[CLI_STREAM_HEAD];
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    return got > 0 ? cli_compressed_name(head, (size_t)got) : NULL;
}

void cli_load_error(const char *command, const char *path, int status, const amq_diag *diag)
{
    const char *format = status == AMQ_EFORMAT ? compressed_file(path) : NULL;
    if (format)
        cli_error("%s: %s: %s data, not an amq file: a filter is read as amq saved it; "
                  "decompress it into a file first",
                  command, path, format);
    else if (diag->message[0])
        cli_error("%s: %s: %s (%s)", command, path, amq_strerror(status), diag->message);
    else
        cli_error("%s: %s: %s", command, path, amq_strerror(status));
}

int cli_save(const amq_filter *f, const char *command, const char *path)
{
    /* Again at the save itself: a link may have been made since the
     * command began. */
    if (cli_refuse_frontier_file(command, path, false))
        return AMQ_EINVAL;
    amq_diag diag = { .message = "" };
    int status = amq_save(f, path, &diag);
    if (status != AMQ_OK)
        cli_error("%s: cannot save %s: %s", command, path,
                  diag.message[0] ? diag.message : amq_strerror(status));
    return status;
}

bool cli_refuse_overwrite(const char *command, const char *path)
{
    struct stat st, out;
    if (stat(path, &st) != 0)
        return false; /* nothing there: the save creates it, or says why it cannot */
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return false; /* written into: nothing is replaced */
    if (!S_ISREG(st.st_mode)) {
        const char *kind = S_ISDIR(st.st_mode)    ? "a directory"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                           : S_ISBLK(st.st_mode)  ? "a block device"
                                                  : "not a regular file";
        cli_error("%s: cannot save %s: '%s' is %s: a filter is saved to a regular file, a "
                  "character device or a FIFO",
                  command, path, path, kind);
        return true;
    }
    /* -o /dev/stdout with standard output redirected to a file: the shell
     * has opened (and emptied) it for amq to write. */
    if (fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino)
        return false;
    cli_error("%s: %s already exists (use --force to overwrite it)", command, path);
    return true;
}

/* value with the largest unit that keeps it below 1000, each unit step
 * times the one before, to three significant digits ("2.23 GiB",
 * "229 KiB", "19.2 Gbit"). */
static void format_scaled(char *out, size_t cap, double value, double step,
                          const char *const *units, size_t unit_count)
{
    size_t unit = 0;
    while (value >= 999.5 && unit + 1 < unit_count) {
        value /= step;
        unit++;
    }
    int decimals = unit == 0 || value >= 99.95 ? 0 : value >= 9.995 ? 1 : 2;
    snprintf(out, cap, "%.*f %s", decimals, value, units[unit]);
}

void cli_format_bytes(char *out, size_t cap, double bytes)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    format_scaled(out, cap, bytes, 1024.0, units, sizeof units / sizeof units[0]);
}

void cli_format_bits(char *out, size_t cap, double bits)
{
    static const char *const units[] = { "bit", "kbit", "Mbit", "Gbit", "Tbit", "Pbit", "Ebit" };
    format_scaled(out, cap, bits, 1000.0, units, sizeof units / sizeof units[0]);
}

uint64_t cli_hasher_seed(const amq_hasher *hasher)
{
    uint64_t seed = 0;
    for (int i = 7; i >= 0; i--)
        seed = seed << 8 | hasher->key[i];
    return seed;
}

void cli_hasher_key_hex(char out[33], const amq_hasher *hasher)
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", hasher->key[i]);
}

const char *cli_hasher_kind(const amq_hasher *hasher)
{
    switch (hasher->kind) {
    case AMQ_HASH_SIPHASH:
        return "siphash";
    case AMQ_HASH_MD5:
        return "md5";
    case AMQ_HASH_XXH3:
    default:
        return "xxh3";
    }
}

void cli_format_hasher(char *out, size_t cap, const amq_hasher *hasher)
{
    char key[33];
    switch (hasher->kind) {
    case AMQ_HASH_SIPHASH:
        cli_hasher_key_hex(key, hasher);
        snprintf(out, cap, "siphash key=%s", key);
        break;
    case AMQ_HASH_MD5:
        snprintf(out, cap, "md5");
        break;
    case AMQ_HASH_XXH3:
    default:
        snprintf(out, cap, "xxh3 seed=%llu", (unsigned long long)cli_hasher_seed(hasher));
        break;
    }
}

const amq_info_detail *cli_info_detail(const amq_info *info, const char *name)
{
    for (size_t i = 0; i < info->detail_count; i++)
        if (strcmp(info->details[i].name, name) == 0)
            return &info->details[i];
    return NULL;
}

bool cli_family_is_dynamic(const char *family)
{
    int capabilities = amq_family_capabilities(family);
    return capabilities >= 0 && (capabilities & AMQ_CAN_ADD);
}

bool cli_family_removes(const char *family)
{
    int capabilities = amq_family_capabilities(family);
    return capabilities >= 0 && (capabilities & AMQ_CAN_REMOVE);
}

bool cli_family_grows(const char *family)
{
    int capabilities = amq_family_capabilities(family);
    return capabilities >= 0 && (capabilities & AMQ_CAN_GROW);
}

bool cli_family_takes_option(const char *family, const char *name)
{
    amq_option_info option;
    for (size_t i = 0; amq_family_option(&option, family, i) == AMQ_OK; i++)
        if (strcmp(option.name, name) == 0)
            return true;
    return false;
}

void cli_list_families(char *out, size_t cap, bool (*keep)(const char *family), const char *last)
{
    size_t count = 0, used = 0;
    out[0] = '\0';
    for (size_t i = 0; amq_family_at(i); i++)
        count += !keep || keep(amq_family_at(i));
    for (size_t i = 0, listed = 0; amq_family_at(i) && used < cap; i++) {
        const char *name = amq_family_at(i);
        if (keep && !keep(name))
            continue;
        const char *separator = listed == 0 ? "" : listed + 1 == count ? last : ", ";
        int n = snprintf(out + used, cap - used, "%s%s", separator, name);
        if (n < 0)
            break;
        used += (size_t)n;
        listed++;
    }
}
