/*
 * words.c - the demo's keys.
 *
 * The word list is read whole and cut into lines; a line seen before is
 * dropped, so every key is distinct and "keys added" means "distinct keys".
 * Distinctness is decided by an exact set: open addressing over the 64-bit
 * XXH3 hash of each word, linear probing, a table of word indexes at most
 * half full, and a byte comparison on every hash match.
 *
 * The non-words are what a filter is asked about to measure its false
 * positives: strings of random lower-case letters, the i-th as long as the
 * i-th word (so their lengths follow the list's), each checked against the
 * exact set and drawn again if it is a word (one letter longer after 64
 * draws, for a list that holds every string of some length). Most are unpronounceable; the
 * short ones are often real words, which is why the check is needed. A
 * hash-based filter cannot tell a pronounceable string from another, so
 * this loses nothing.
 */
#include "words.h"

#include "amq/amq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The exact set: slots hold a word index + 1, 0 marks an empty slot. */
typedef struct word_set {
    const demo_strings *strings;
    uint32_t *slots;
    size_t mask;
    amq_hasher hasher;
} word_set;

static int word_set_init(word_set *set, const demo_strings *strings, size_t capacity)
{
    size_t size = 16;
    while (size < 2 * capacity)
        size *= 2;
    set->strings = strings;
    set->slots = calloc(size, sizeof *set->slots);
    set->mask = size - 1;
    amq_hasher_xxh3(&set->hasher, 0);
    return set->slots ? 0 : -1;
}

/* The slot holding the string (bytes, len), or the empty slot where it
 * would go. */
static uint32_t *word_set_slot(const word_set *set, const char *bytes, size_t len)
{
    size_t slot = (size_t)amq_hash64(&set->hasher, bytes, len) & set->mask;
    for (;;) {
        uint32_t entry = set->slots[slot];
        if (entry == 0)
            return &set->slots[slot];
        size_t index = entry - 1;
        if (set->strings->lens[index] == len &&
            memcmp(set->strings->pointers[index], bytes, len) == 0)
            return &set->slots[slot];
        slot = (slot + 1) & set->mask;
    }
}

static int strings_alloc(demo_strings *strings, size_t count, size_t bytes)
{
    memset(strings, 0, sizeof *strings);
    strings->bytes = malloc(bytes ? bytes : 1);
    strings->offsets = calloc(count + 1, sizeof *strings->offsets);
    strings->pointers = calloc(count ? count : 1, sizeof *strings->pointers);
    strings->lens = calloc(count ? count : 1, sizeof *strings->lens);
    if (!strings->bytes || !strings->offsets || !strings->pointers || !strings->lens) {
        demo_strings_free(strings);
        return -1;
    }
    return 0;
}

/* Point pointers[] and lens[] at the first count strings of offsets[]. */
static void strings_index(demo_strings *strings, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        strings->pointers[i] = strings->bytes + strings->offsets[i];
        strings->lens[i] = strings->offsets[i + 1] - strings->offsets[i];
    }
    strings->count = count;
}

/* The whole of a regular file, in a malloc'd buffer of *size bytes. */
static char *read_file(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "amq_demo: cannot open the word list %s: %s\n", path, strerror(errno));
        return NULL;
    }
    struct stat status;
    char *data = NULL;
    if (fstat(fileno(file), &status) != 0 || !S_ISREG(status.st_mode)) {
        fprintf(stderr, "amq_demo: the word list %s is not a regular file\n", path);
    } else if ((uint64_t)status.st_size >= SIZE_MAX ||
               !(data = malloc((size_t)status.st_size + 1))) {
        fprintf(stderr, "amq_demo: the word list %s (%lld bytes) does not fit in memory\n", path,
                (long long)status.st_size);
    } else if (fread(data, 1, (size_t)status.st_size, file) != (size_t)status.st_size) {
        fprintf(stderr, "amq_demo: cannot read the word list %s: %s\n", path,
                ferror(file) ? strerror(errno) : "it shrank while being read");
        free(data);
        data = NULL;
    }
    fclose(file);
    *size = data ? (size_t)status.st_size : 0;
    return data;
}

int demo_read_words(demo_strings *words, const char *path)
{
    size_t size = 0;
    char *data = read_file(path, &size);
    if (!data)
        return -1;
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    lines++;
    if (lines > UINT32_MAX - 1 || strings_alloc(words, lines, size) != 0) {
        fprintf(stderr, "amq_demo: the word list %s has too many lines for memory\n", path);
        free(data);
        return -1;
    }
    word_set set;
    if (word_set_init(&set, words, lines) != 0) {
        fprintf(stderr, "amq_demo: out of memory for the set of %zu words\n", lines);
        free(data);
        demo_strings_free(words);
        return -1;
    }
    size_t count = 0, used = 0;
    for (size_t start = 0; start < size;) {
        const char *end = memchr(data + start, '\n', size - start);
        size_t stop = end ? (size_t)(end - data) : size;
        size_t len = stop - start;
        if (len > 0 && data[start + len - 1] == '\r')
            len--;
        if (len > 0) {
            memcpy(words->bytes + used, data + start, len);
            words->offsets[count + 1] = used + len;
            words->pointers[count] = words->bytes + used;
            words->lens[count] = len;
            uint32_t *slot = word_set_slot(&set, words->bytes + used, len);
            if (*slot == 0) {
                *slot = (uint32_t)(count + 1);
                used += len;
                count++;
            }
        }
        start = stop + 1;
    }
    free(set.slots);
    free(data);
    strings_index(words, count);
    if (count == 0) {
        fprintf(stderr, "amq_demo: the word list %s has no words\n", path);
        demo_strings_free(words);
        return -1;
    }
    return 0;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int demo_make_non_words(demo_strings *non_words, const demo_strings *words, uint64_t seed)
{
    size_t count = words->count, bytes = words->offsets[count];
    word_set set;
    if (bytes > SIZE_MAX - count || strings_alloc(non_words, count, bytes + count) != 0 ||
        word_set_init(&set, words, count) != 0) {
        fprintf(stderr, "amq_demo: out of memory for %zu non-words\n", count);
        demo_strings_free(non_words);
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        *word_set_slot(&set, words->pointers[i], words->lens[i]) = (uint32_t)(i + 1);
    uint64_t state = seed;
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        char *out = non_words->bytes + used;
        size_t len = words->lens[i];
        for (unsigned tries = 1;; tries++) {
            for (size_t j = 0; j < len; j++)
                out[j] = (char)('a' + splitmix64(&state) % 26);
            if (*word_set_slot(&set, out, len) == 0)
                break;
            if (tries % 64 == 0 && len == words->lens[i])
                len++; /* every string of this length may be a word */
        }
        used += len;
        non_words->offsets[i + 1] = used;
    }
    free(set.slots);
    strings_index(non_words, count);
    return 0;
}

void demo_strings_free(demo_strings *strings)
{
    free(strings->bytes);
    free(strings->offsets);
    free((void *)strings->pointers);
    free(strings->lens);
    memset(strings, 0, sizeof *strings);
}
