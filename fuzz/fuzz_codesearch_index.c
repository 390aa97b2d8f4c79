/*
 * fuzz_codesearch_index.c - the code-search example's index loader
 * (examples/codesearch/index_read.c) on arbitrary bytes: opening must
 * refuse a damaged file with an error, and looking trigrams up in one it
 * accepted must stay inside the file, whatever its directory and postings
 * say.
 *
 * Byte 0 of the input is a mode, the rest the file. A mutated file fails
 * a checksum long before its directory or postings are read, so with bit 0
 * of the mode set the target first seals the file: it writes the checksum
 * of every section, of every directory block's postings it can find, and
 * of the header, as the indexer would. A hostile file can carry right
 * checksums, so what lies behind them is checked here too. The seeds are
 * small real indexes, sealed and not.
 */
#include "codesearch.h"
#include "format.h"
#include "index_read.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* main.c's, which the target does not link: errors are expected here. */
const char *codesearch_program = "fuzz";
void codesearch_error(const char *format, ...)
{
    (void)format;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write the checksums an indexer would into the index image of size bytes,
 * wherever its header and directory say they go and that lies inside it. */
static void seal(uint8_t *image, size_t size)
{
    if (size < FORMAT_HEADER_BYTES)
        return;
    uint64_t section_at[FORMAT_SECTIONS] = { 0 }, section_len[FORMAT_SECTIONS] = { 0 };
    bool inside[FORMAT_SECTIONS];
    for (int s = 0; s < FORMAT_SECTIONS; s++) {
        uint8_t *entry = image + 24 + 24 * s;
        section_at[s] = get_u64(entry);
        section_len[s] = get_u64(entry + 8);
        inside[s] = section_at[s] <= size && section_len[s] <= size - section_at[s];
    }
    /* The directory's blocks first: their checksums are part of the
     * directory's own. */
    if (inside[SECTION_DIRECTORY] && inside[SECTION_POSTINGS] &&
        section_len[SECTION_DIRECTORY] >= 4) {
        uint8_t *directory = image + section_at[SECTION_DIRECTORY];
        uint64_t blocks = get_u32(directory);
        uint64_t room = (section_len[SECTION_DIRECTORY] - 4) / BLOCK_BYTES;
        if (blocks > room)
            blocks = room;
        for (uint64_t b = 0; b < blocks; b++) {
            uint8_t *block = directory + 4 + b * BLOCK_BYTES;
            uint64_t start = get_u64(block + 8);
            uint64_t end =
                b + 1 < blocks ? get_u64(block + BLOCK_BYTES + 8) : section_len[SECTION_POSTINGS];
            if (start <= end && end <= section_len[SECTION_POSTINGS])
                put_u64(block + 16, XXH3_64bits(image + section_at[SECTION_POSTINGS] + start,
                                                (size_t)(end - start)));
        }
    }
    for (int s = 0; s < FORMAT_SECTIONS; s++)
        if (inside[s])
            put_u64(image + 40 + 24 * s,
                    XXH3_64bits(image + section_at[s], (size_t)section_len[s]));
    put_u64(image + 96, XXH3_64bits(image, 96));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    uint8_t *image = malloc(size ? size : 1);
    if (!image)
        return 0;
    memcpy(image, data, size);
    if (mode & 1)
        seal(image, size);
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_codesearch_index.%ld", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(image);
        return 0;
    }
    size_t written = fwrite(image, 1, size, f);
    fclose(f);
    data = image;
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
    free(image);
    return 0;
}
