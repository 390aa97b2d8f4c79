/*
 * fuzz_codesearch_index.c - the code-search example's index loader
 * (examples/codesearch/index_read.c) on arbitrary bytes: opening must
 * refuse a damaged file with an error, and looking trigrams up in one it
 * accepted must stay inside the file, whatever its directory and postings
 * say.
 */
#include "codesearch.h"
#include "index_read.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* main.c's, which the target does not link: errors are expected here. */
const char *codesearch_program = "fuzz";
void codesearch_error(const char *format, ...)
{
    (void)format;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_codesearch_index.%ld", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t written = fwrite(data, 1, size, f);
    fclose(f);
    cs_index *index = NULL;
    if (written == size && cs_index_open(&index, path) == 0) {
        uint32_t n = cs_index_documents(index);
        uint64_t *bitmap = calloc((size_t)n / 64 + 1, sizeof *bitmap);
        for (uint32_t d = 0; d < n && d < 16; d++)
            (void)strlen(cs_index_path(index, d));
        /* trigrams named by the input itself, and a spread of others */
        for (size_t i = 0; bitmap && i + 2 < size && i < 3 * 64; i += 3)
            cs_index_trigram(
                index, (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2], bitmap);
        for (uint32_t t = 0; bitmap && t < 1u << 24; t += 1u << 18)
            cs_index_trigram(index, t, bitmap);
        free(bitmap);
        cs_index_close(index);
    }
    unlink(path);
    return 0;
}
