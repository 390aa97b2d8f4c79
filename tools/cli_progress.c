/*
 * cli_progress.c - the progress bar of the amq tool: one line on stderr,
 * redrawn in place, for work that lasts long enough to wonder about.
 *
 *   amq build: 3456789 keys, 1.21M keys/s, 45%, ETA 0:07
 *
 * What is shown:
 *   - the keys read so far and the rate, keys / seconds since the start;
 *   - when the size of the input is known (every INPUT a regular file, or
 *     standard input redirected from one: the sum of their sizes), the
 *     share of its bytes read so far and the time left at the rate so far,
 *     elapsed * (total - read) / read;
 *   - after reading, the phase the command is in ("building the filter").
 *
 * When it is shown: only if stderr is a terminal (a pipe or a file never
 * gets a byte of it), and only once the work has lasted a second, so quick
 * commands stay silent. It is redrawn at most ten times a second: "\r",
 * the line, then ESC [K to erase what a longer previous line left. The
 * clock is read once per 1024 keys and after each read of the input, so
 * counting a key costs an increment and a test. At the end the line is
 * erased; a message printed meanwhile (cli_error) erases it first.
 *
 * The one bar on screen is remembered in a file-level flag: the tool runs
 * one command, and its messages must know whether to erase a line first.
 */
#include "cli.h"

#include <time.h>

#define PROGRESS_DELAY    1.0 /* seconds of work before the bar appears */
#define PROGRESS_INTERVAL 0.1 /* seconds between redraws */
#define CLEAR_LINE        "\r\033[K"

static bool bar_on_screen;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, const char *command, uint64_t total_bytes)
{
    *p = (cli_progress){ .command = command, .total_bytes = total_bytes };
    p->enabled = cli_stderr_is_tty();
    p->started = now_seconds();
}

/* value with an SI prefix to three significant digits: "987", "1.21M". */
static void format_si(char *out, size_t cap, double value)
{
    static const char prefixes[] = " kMGTPE";
    size_t prefix = 0;
    while (value >= 999.5 && prefix + 1 < sizeof prefixes - 1) {
        value /= 1000;
        prefix++;
    }
    int decimals = prefix == 0 || value >= 99.95 ? 0 : value >= 9.995 ? 1 : 2;
    if (prefix == 0)
        snprintf(out, cap, "%.0f", value);
    else
        snprintf(out, cap, "%.*f%c", decimals, value, prefixes[prefix]);
}

/* seconds as m:ss, or h:mm:ss from an hour on. */
static void format_duration(char *out, size_t cap, double seconds)
{
    unsigned long long s = seconds < 0 ? 0 : (unsigned long long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(out, cap, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, cap, "%llu:%02llu", s / 60, s % 60);
}

static void draw(cli_progress *p, double now)
{
    double elapsed = now - p->started;
    char rate[16], line[160];
    format_si(rate, sizeof rate, elapsed > 0 ? (double)p->keys / elapsed : 0);
    int used = snprintf(line, sizeof line, "amq %s: %llu keys, %s keys/s", p->command,
                        (unsigned long long)p->keys, rate);
    if (p->total_bytes > 0 && used > 0 && (size_t)used < sizeof line) {
        uint64_t read = p->bytes < p->total_bytes ? p->bytes : p->total_bytes;
        char eta[24] = "";
        if (read > 0)
            format_duration(eta, sizeof eta,
                            elapsed * (double)(p->total_bytes - read) / (double)read);
        used +=
            snprintf(line + used, sizeof line - (size_t)used, ", %.0f%%%s%s",
                     100.0 * (double)read / (double)p->total_bytes, eta[0] ? ", ETA " : "", eta);
    }
    if (p->phase && used > 0 && (size_t)used < sizeof line)
        snprintf(line + used, sizeof line - (size_t)used, "; %s", p->phase);
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn_at = now;
    bar_on_screen = true;
}

void cli_progress_update(cli_progress *p)
{
    if (!p->enabled)
        return;
    double now = now_seconds();
    if (now - p->started >= PROGRESS_DELAY && now - p->drawn_at >= PROGRESS_INTERVAL)
        draw(p, now);
}

void cli_progress_bytes(cli_progress *p, uint64_t bytes)
{
    p->bytes += bytes;
    cli_progress_update(p);
}

void cli_progress_phase(cli_progress *p, const char *phase)
{
    p->phase = phase;
    if (!p->enabled)
        return;
    double now = now_seconds();
    if (now - p->started >= PROGRESS_DELAY)
        draw(p, now);
}

void cli_progress_end(cli_progress *p)
{
    p->enabled = false;
    cli_progress_clear();
}

void cli_progress_clear(void)
{
    if (!bar_on_screen)
        return;
    fputs(CLEAR_LINE, stderr);
    fflush(stderr);
    bar_on_screen = false;
}
