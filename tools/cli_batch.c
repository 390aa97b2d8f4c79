/*
 * cli_batch.c - keys read from the input, held until there are enough to
 * ask or add together through a filter's batch call.
 *
 * `amq query` and `amq add` answer line by line, but a filter's batch call
 * (amq_contains_many, amq_add_many) hashes keys ahead and
 * fetches their memory while it tests the ones before, which a call per
 * key cannot. So the keys are copied into a batch as they are read, with
 * what the answers need later: the line as written with its line end (for
 * query to print it), the file and line number (for an error to name).
 * The caller sends the batch when cli_batch_full says so and at the end of
 * the input, then walks the answers in input order, so what it prints is
 * what it printed asking key by key.
 */
#include "cli.h"

#include <string.h>

/* A batch is sent at CLI_BATCH_KEYS keys, or earlier once its copies take
 * this many bytes, so that a few very long lines do not pile up. */
#define BATCH_BYTES ((size_t)1 << 20)

void cli_batch_init(cli_batch *batch, bool keep_lines)
{
    memset(batch, 0, sizeof *batch);
    batch->keep_lines = keep_lines;
}

int cli_batch_take(cli_batch *batch, const cli_input *in, const void *key, size_t len)
{
    size_t i = batch->count;
    if (cli_keys_add(&batch->keys, key, len) != 0)
        return -1;
    if (batch->keep_lines &&
        cli_keys_add(&batch->lines, in->line, in->line_len + in->ending_len) != 0) {
        batch->keys.count--;
        batch->keys.used -= len;
        return -1;
    }
    batch->endings[i] = (uint8_t)in->ending_len;
    batch->line_numbers[i] = in->line_number;
    batch->names[i] = in->name;
    batch->count++;
    return 0;
}

bool cli_batch_full(const cli_batch *batch)
{
    return batch->count == CLI_BATCH_KEYS || batch->keys.used + batch->lines.used >= BATCH_BYTES;
}

void cli_batch_seal(cli_batch *batch)
{
    for (size_t i = 0; i < batch->count; i++)
        batch->pointers[i] = cli_keys_at(&batch->keys, i, &batch->lens[i]);
}

int cli_batch_print_line(const cli_batch *batch, size_t i, cli_input *in, FILE *out)
{
    size_t len;
    const char *line = cli_keys_at(&batch->lines, i, &len);
    return cli_input_print_text(in, out, line, len, batch->endings[i]);
}

void cli_batch_clear(cli_batch *batch)
{
    batch->keys.count = batch->keys.used = 0;
    batch->lines.count = batch->lines.used = 0;
    batch->count = 0;
}

void cli_batch_free(cli_batch *batch)
{
    cli_keys_free(&batch->keys);
    cli_keys_free(&batch->lines);
    batch->count = 0;
}
