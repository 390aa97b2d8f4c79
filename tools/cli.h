/*
 * cli.h - what the amq tool's subcommands share: the command table entry,
 * error reporting (to stderr, naming file and line), exit codes, the
 * progress bar, the line reader over INPUT arguments, and what each filter
 * type can do.
 *
 * The tool's own code uses only the public headers (`amq bench` runs the
 * separate program amq_bench: cmd_bench.c).
 */
#ifndef AMQ_CLI_H
#define AMQ_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "amq/amq.h"

/* Exit codes, as grep: 0 something found/printed or success, 1 nothing,
 * 2 an error. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_NONE = 1, CLI_EXIT_ERROR = 2 };

/* Exit code of a command that did all its work into a fixed-size filter
 * past the capacity it was made for: nothing was lost, but its
 * false-positive rate is above the one asked for (the command says by how
 * much on stderr). */
enum { CLI_EXIT_PAST_CAPACITY = 3 };

/* A subcommand: run gets argv with argv[0] = the subcommand's name. */
typedef struct cli_command {
    const char *name;
    const char *summary; /* one line for `amq --help` */
    int (*run)(int argc, char **argv);
} cli_command;

/* Print "amq: <message>" to stderr. */
void cli_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Print "amq <command>: <message>\nTry 'amq <command> --help'." and return
 * CLI_EXIT_ERROR: for usage mistakes. */
int cli_usage_error(const char *command, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

struct option;
/* Report what getopt_long refused, naming the option as the user typed it,
 * and return CLI_EXIT_ERROR. result: what getopt_long returned ('?' or ':';
 * give every option string a leading ':' so a missing value is told from
 * an unknown option); long_options: the command's table (for "takes no
 * value" and ambiguous prefixes). Call it right after getopt_long returns:
 * it reads optind and optopt. */
int cli_option_error(const char *command, int result, int argc, char **argv,
                     const struct option *long_options);

/* Say that writing standard output failed: "amq COMMAND: writing standard
 * output: REASON" (error: the errno of the failed write; 0 when unknown).
 * Returns CLI_EXIT_ERROR. */
int cli_stdout_error(const char *command, int error);

/* Flush standard output at the end of a command that printed: 0, or -1
 * after cli_stdout_error. earlier: the errno of a write that failed
 * before (0: none), the reason when the flush itself has none to give. */
int cli_stdout_flush(const char *command, int earlier);

/* True when stderr is a terminal (progress bars go there only then). */
bool cli_stderr_is_tty(void);

/* ---- the progress bar (cli_progress.c) ------------------------------------------ */

/* Progress of one command over its input: keys, bytes, and the phase after
 * reading. Drawn on stderr only when it is a terminal and the work has
 * lasted a second; see cli_progress.c. */
typedef struct cli_progress {
    const char *command;
    const char *phase; /* what follows the reading, e.g. "building the filter"; or NULL */
    bool enabled;      /* stderr is a terminal, and the bar has not ended */
    double started, drawn_at;
    uint64_t keys, bytes;
    uint64_t total_bytes; /* the size of the whole input; 0: unknown */
} cli_progress;

void cli_progress_start(cli_progress *p, const char *command, uint64_t total_bytes);
/* Redraw if the bar is due. */
void cli_progress_update(cli_progress *p);
/* Count bytes read from the input, then redraw if due. */
void cli_progress_bytes(cli_progress *p, uint64_t bytes);
/* Count one key; the clock is looked at once per 1024 keys. */
static inline void cli_progress_key(cli_progress *p)
{
    if ((++p->keys & 1023) == 0)
        cli_progress_update(p);
}
/* Name the phase the work is in now, and show it at once if the work has
 * lasted a second. phase: a static string. */
void cli_progress_phase(cli_progress *p, const char *phase);
/* Erase the bar and stop drawing it. */
void cli_progress_end(cli_progress *p);
/* Erase the bar if one is on screen, before another message on stderr. */
void cli_progress_clear(void);

/* Longest input line accepted, in bytes, without its line end. */
#define CLI_MAX_LINE ((size_t)64 << 20)

/* ---- reading keys ------------------------------------------------------------ */

/* How the lines of the input give keys: the options every command that
 * reads keys takes (build, add, remove, query, dedup). Zero is the default. */
typedef struct cli_input_options {
    bool hex;       /* --hex: the key is decoded from hexadecimal */
    bool binary;    /* --binary: read an input that looks binary (refused without it) */
    size_t field;   /* --field N: the key is the Nth field (from 1); 0: the whole line */
    char delimiter; /* --delimiter C: what separates fields; 0 until given (then a tab) */
} cli_input_options;

/* getopt_long values of the input options: apart from any letter or
 * command's own values. */
enum { CLI_OPT_HEX = 0x1000, CLI_OPT_BINARY, CLI_OPT_FIELD, CLI_OPT_DELIMITER };

/* The input options' long-option entries, then the all-zero entry that ends
 * a table: a command copies all CLI_INPUT_LONG_OPTIONS of them after its own
 * entries. */
#define CLI_INPUT_LONG_OPTIONS 5
extern const struct option cli_input_long_options[CLI_INPUT_LONG_OPTIONS];

/* Take option c (as getopt_long returned it, with its value) if it is an
 * input option: returns 1 taken, 0 not an input option, -1 after printing a
 * usage error (a bad --field or --delimiter). */
int cli_input_option(cli_input_options *o, const char *command, int c, const char *value);

struct cli_stream;

typedef struct cli_input {
    char **paths; /* INPUT arguments; none means standard input */
    int path_count;
    int index; /* of the input being read */
    int fd;    /* -1 when none is open */
    const char *name;
    const char *command;
    cli_input_options options;
    uint64_t line_number; /* of the last line returned */
    const char *line;     /* the last line returned, without its line end */
    size_t line_len;
    size_t ending_len;         /* its line end, after it: 2 "\r\n", 1 "\n", 0 none (a last line) */
    bool unended_printed;      /* the last line printed had no line end */
    struct cli_stream *stream; /* the current input's bytes, decompressed */
    uint64_t raw_counted;      /* of the stream's bytes, those given to the progress bar */
    char *buffer;
    size_t capacity, start, end, max_line;
    size_t scanned;   /* bytes after start known to hold no newline */
    uint8_t *decoded; /* --hex: the decoded key */
    size_t decoded_capacity;
    bool at_eof;
    bool ids; /* with hex: each line is an hfb ID, exactly 32 hex digits (set after opening) */
    bool sniff_done;        /* the current input is judged text or binary, or need not be */
    bool sniff_whole;       /* judge it before its first line is returned (a regular file) */
    unsigned utf8_needed;   /* continuation bytes the sniffed text still owes */
    uint64_t sniffed, odd;  /* bytes looked at, and of them those that are not text */
    const char *binary_why; /* why it looks binary, once judged so; NULL: it does not */
    bool binary_nul;        /* for a NUL byte, whose offset in the content is binary_at */
    uint64_t binary_at;
    cli_progress progress; /* over all the inputs */
} cli_input;

/* Prepare to read the keys of paths[0..path_count) ('-' = stdin; none =
 * stdin), as options say. Starts in->progress, over the sum of the inputs'
 * sizes when all are regular files. Returns 0, or -1 after printing an
 * error. */
int cli_input_open(cli_input *in, char **paths, int path_count, const char *command,
                   const cli_input_options *options);

/* The next key: returns 1 and sets key and len (valid until the next call;
 * in->line is the line as written, without its line end), 0 at the end of
 * all inputs, -1 after printing an error that names the file and line. */
int cli_input_next(cli_input *in, const void **key, size_t *len);

/* Write the last line returned exactly as it was read, with its own line
 * end ("\r\n" or "\n"). A line that had none (the last of an input) is
 * written without one, and a newline goes before the next line printed, so
 * lines never run together. Returns 0, or -1 on a write error. */
int cli_input_print_line(cli_input *in, FILE *out);

/* As cli_input_print_line, for a line returned earlier and kept: len bytes,
 * the last ending_len of them its line end. */
int cli_input_print_text(cli_input *in, FILE *out, const char *line, size_t len, size_t ending_len);

/* Close the input and end its progress bar. */
void cli_input_close(cli_input *in);

/* Whether the keys of a filter are 16-byte IDs, read as 32 hex digits a
 * line: a filter of a type whose keys are IDs (AMQ_TAKES_IDS: hfb) without
 * --hash md5 (hash: the option's value, or NULL), or a loaded filter of
 * such a type that holds raw IDs. */
bool cli_type_takes_ids(const char *type, const char *hash);
bool cli_filter_takes_ids(const amq_filter *filter);

/* ---- shared helpers ------------------------------------------------------------ */

/* A spec under construction: "TYPE key=value ...". */
typedef struct cli_spec {
    char text[4096];
    size_t len;
    bool overflow;
} cli_spec;

void cli_spec_init(cli_spec *spec, const char *type);
/* Append key=value (or a bare key when value is NULL). Returns -1 (after
 * printing an error naming --key) if the value holds whitespace or '='. */
int cli_spec_add(cli_spec *spec, const char *command, const char *key, const char *value);

/* Print an error of the spec parser (amq_new, amq_build) in the
 * tool's words: the option it names ("option 'capacity'") as the user
 * gives it ("option '--capacity' (-n)"). */
void cli_spec_error(const char *command, const char *message);

/* Load a filter, printing "amq COMMAND: PATH: why" on failure. */
int cli_load(amq_filter **out, const char *command, const char *path, unsigned flags);
/* The error cli_load prints for a failed amq_load. */
void cli_load_error(const char *command, const char *path, int status, const amq_diag *diag);

/* Save a filter with amq_save, printing an error on failure: a regular
 * file is replaced atomically (through a symbolic link, keeping its mode
 * and owner; a read-only one refused), a character device or FIFO is
 * written into. */
int cli_save(const amq_filter *f, const char *command, const char *path);

/* The file a save to path replaces: path with the symbolic links of its
 * last component followed, as amq_save follows them (a dangling link
 * gives its target). A new string, or NULL with errno set (cli_lock.c). */
char *cli_follow_links(const char *path);

/* The lock a command holds while it loads a filter file, changes it and
 * saves it again (add, remove, merge -o; build for its save alone): flock
 * on "<dir>/.<name>.lock" beside the file (cli_lock.c). */
typedef struct cli_lock {
    int fd; /* the locked lock file, or -1: nothing locked */
} cli_lock;

/* Lock the file at path for a load-modify-save, waiting up to
 * AMQ_LOCK_TIMEOUT seconds (default 30) while another process holds it.
 * Nothing is locked for a device or FIFO (written into, nothing replaced),
 * where the file's directory cannot take a new file (then the save fails
 * and says why), nor for a missing file unless new_file (the command may
 * create it: merge -o; add and remove fail to load it). Returns 0, or -1
 * after printing why (timed out, no lock file): the caller exits 2. */
int cli_lock_take(cli_lock *lock, const char *command, const char *path, bool new_file);
/* Release the lock (if any). */
void cli_lock_release(cli_lock *lock);

/* Whether path (after its symbolic links, down to a dangling one's target)
 * is a file of a crawl frontier, or another hard link to one in its
 * directory: its manifest, filter, spill or temporary files
 * (cli_guard.c). If so, or if that cannot be told, print why and return
 * true: the command changes nothing. updating: the command loads the file
 * to change it (add, remove), and the message points to amq query; else it
 * saves a new filter there (build, merge). Call it before any other check
 * of path, whose remedies (--force, making it writable) would destroy a
 * frontier's file. */
bool cli_refuse_frontier_file(const char *command, const char *path, bool updating);

/* For build and merge without --force: true, after printing why, if
 * saving to path would replace an existing regular file (the --force
 * hint) or path is something no filter is saved to (a directory, a
 * socket, a block device). A character device, a FIFO or the file that is
 * amq's standard output (-o /dev/stdout) replaces nothing: false. */
bool cli_refuse_overwrite(const char *command, const char *path);

/* Human-readable sizes to three significant digits: IEC bytes ("2.23 GiB")
 * and SI bits ("19.2 Gbit"). */
void cli_format_bytes(char *out, size_t cap, double bytes);
void cli_format_bits(char *out, size_t cap, double bits);

/* A hasher as text: "xxh3 seed=42", "siphash key=0011..", "md5". */
void cli_format_hasher(char *out, size_t cap, const amq_hasher *hasher);
/* Its parts: the kind ("xxh3", "md5", "siphash"), the xxh3 seed, the
 * SipHash key as 32 hex digits. */
const char *cli_hasher_kind(const amq_hasher *hasher);
uint64_t cli_hasher_seed(const amq_hasher *hasher);
void cli_hasher_key_hex(char out[33], const amq_hasher *hasher);

/* A family detail of info by name ("hashes", "warning"), or NULL. */
const amq_info_detail *cli_info_detail(const amq_info *info, const char *name);

/* What the filter types of this build can do (amq_family_capabilities),
 * for messages that say what to use instead. A dynamic type takes keys one
 * by one. */
bool cli_family_is_dynamic(const char *family);
bool cli_family_removes(const char *family);
bool cli_family_grows(const char *family);
/* Whether the type's spec takes the option name (amq_family_option). */
bool cli_family_takes_option(const char *family, const char *name);

/* The type names this build has for which keep holds (NULL: all) into out,
 * as "a, b<last>c": last is ", " or " or ". Cut short if cap is too small. */
void cli_list_families(char *out, size_t cap, bool (*keep)(const char *family), const char *last);

/* ---- the filter types' options (cli_options.c) ------------------------------ */

/* The most options of the filter types the tool takes, all types together. */
#define CLI_MAX_TYPE_OPTIONS 64

/* One of the filter types' options as the command line takes it: --name,
 * and -letter when the library gives it a one-letter alias build does not
 * use for its own options. */
typedef struct cli_type_option {
    const char *name; /* the spec's key: "fingerprint-bits" */
    char letter;      /* the short option, or 0 */
    bool flag;        /* takes no value */
} cli_type_option;

/* The options of every filter type this build has (amq_family_option),
 * each name once, in the order the types list them, into out (at most cap,
 * CLI_MAX_TYPE_OPTIONS is enough): what `amq build` takes. Returns how many. */
size_t cli_type_options(cli_type_option *out, size_t cap);

/* The short option letter the tool gives the type option name[0..len), or
 * 0 (also for a name no type has). */
char cli_type_option_letter(const char *name, size_t len);

/* Print, as usage text, the options of type, each with the library's help;
 * for type NULL (or unknown) those of every type, noting which take each. */
void cli_print_type_options(FILE *out, const char *type);

/* Print one entry of usage text: "  LABEL", then text (and "(note)" when
 * note is not NULL) from the help column, wrapped to 79 columns. */
void cli_print_help_line(FILE *out, const char *label, const char *text, const char *note);

/* `amq __options [TYPE]`, which the bash completion runs: a line for each
 * option of TYPE (or of every type), "NAME LETTER KIND [WORD...]", LETTER
 * '-' when the option has none, the WORDs a choice's. Not listed in
 * `amq --help`. */
int cli_options_command(int argc, char **argv);

/* ---- keys in memory (cli_keys.c) ---------------------------------------------- */

/* Keys read into memory for a build from all keys at once. */
typedef struct cli_keys {
    char *bytes;
    size_t used, capacity;
    size_t *offsets; /* count + 1 entries: key i is bytes[offsets[i], offsets[i + 1]) */
    size_t count, slots;
} cli_keys;

/* Append a copy of a key. Returns 0, or -1 when out of memory. */
int cli_keys_add(cli_keys *store, const void *key, size_t len);
/* Key i (valid until the store changes) and its length. */
const void *cli_keys_at(const cli_keys *store, size_t i, size_t *len);
/* Count the distinct keys into *distinct and, when held is not NULL, into
 * *held the sum over the distinct keys of their copies, each at most
 * copies_held (the slots a cuckoo filter's copies of them take); if
 * drop_copies, keep only the first copy of each key, in input order.
 * Returns 0, or -1 when out of memory (the store unchanged). */
int cli_keys_distinct(cli_keys *store, bool drop_copies, size_t copies_held, size_t *distinct,
                      size_t *held);
void cli_keys_free(cli_keys *store);

/* ---- keys in batches (cli_batch.c) ------------------------------------------- */

/* Keys read from a cli_input, held for a filter's batch call, with each
 * one's line (when kept), file and line number. */
#define CLI_BATCH_KEYS 1024
typedef struct cli_batch {
    cli_keys keys;  /* the keys' bytes */
    cli_keys lines; /* keep_lines: each key's line as written, with its line end */
    bool keep_lines;
    size_t count;
    const void *pointers[CLI_BATCH_KEYS]; /* set by cli_batch_seal */
    size_t lens[CLI_BATCH_KEYS];          /* set by cli_batch_seal */
    uint8_t endings[CLI_BATCH_KEYS];      /* the line end's length: 0, 1 or 2 */
    uint64_t line_numbers[CLI_BATCH_KEYS];
    const char *names[CLI_BATCH_KEYS]; /* the input's name, as in->name */
} cli_batch;

/* An empty batch; keep_lines: keep each key's line, for printing. */
void cli_batch_init(cli_batch *batch, bool keep_lines);
/* Copy in the key cli_input_next just returned, with its line. Returns 0,
 * or -1 when out of memory (the batch unchanged). */
int cli_batch_take(cli_batch *batch, const cli_input *in, const void *key, size_t len);
/* Whether the batch is to be sent before another key is taken. */
bool cli_batch_full(const cli_batch *batch);
/* Fill pointers[] and lens[] for the keys taken, before the batch call. */
void cli_batch_seal(cli_batch *batch);
/* Print key i's line as cli_input_print_line printed it when it was read. */
int cli_batch_print_line(const cli_batch *batch, size_t i, cli_input *in, FILE *out);
/* Empty the batch, keeping its memory for the next; free it. */
void cli_batch_clear(cli_batch *batch);
void cli_batch_free(cli_batch *batch);

/* ---- capacity ------------------------------------------------------------------ */

/* The growth a cuckoo filter is built with when --growth is not given: it
 * chains a table twice as large when full, instead of refusing keys. */
#define CLI_CUCKOO_GROWTH "2"

/* If a filter that cannot grow holds more keys than its capacity (keys:
 * the keys added, or 0 to use the filter's own count; read: the keys
 * offered, repeats included, or 0), say once on stderr how far past it is
 * and the false-positive rate that means now, and return true: the command
 * then exits CLI_EXIT_PAST_CAPACITY. what names the filter ("f.amq");
 * remedy: what to do about it, or NULL for "build it with a larger -n, or
 * use" the types that grow. */
bool cli_warn_past_capacity(const char *command, const char *what, const amq_filter *filter,
                            uint64_t keys, uint64_t read, const char *remedy);

/* The rate a filter will have at its capacity when that is clearly above
 * the target it was made for (a target below what the type can deliver:
 * a Bloom filter's probe floor, or an old file's), else 0. */
double cli_undelivered_rate(const amq_filter *filter);

/* The error for a failed add (status < 0): for AMQ_EFULL the real cause for
 * the filter's type, for AMQ_ERANGE from a growing filter the limit its next
 * stage would pass, and what to do about it. where: "FILE:LINE" of the key
 * that did not fit. */
void cli_add_error(const char *command, const char *where, amq_filter *filter, int status);

/* ---- the subcommands -------------------------------------------------------- */

int cli_calc(int argc, char **argv);
int cli_build(int argc, char **argv);
int cli_add(int argc, char **argv);
int cli_remove(int argc, char **argv);
int cli_query(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_dedup(int argc, char **argv);
int cli_bench(int argc, char **argv);

#endif /* AMQ_CLI_H */
