/* Shared helpers for the test programs; see test_util.h. */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t amq_test_seed(uint64_t default_seed)
{
    static int printed;
    uint64_t seed = default_seed;
    const char *env = getenv("AMQ_TEST_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 0);
    if (!printed) {
        fprintf(stderr, "seed: %" PRIu64 " (set AMQ_TEST_SEED to replay)\n", seed);
        printed = 1;
    }
    return seed;
}

void amq_test_rng_init(amq_test_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

uint64_t amq_test_next(amq_test_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t amq_test_below(amq_test_rng *rng, uint64_t bound)
{
    return (uint64_t)(((unsigned __int128)amq_test_next(rng) * bound) >> 64);
}

char *amq_test_data_path(const char *name)
{
    const char *dir = getenv("AMQ_TEST_DATA_DIR");
    if (!dir || !*dir)
        dir = AMQ_TEST_DATA_DIR;
    size_t len = strlen(dir) + 1 + strlen(name) + 1;
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%s/%s", dir, name);
    return path;
}

char *amq_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + used, 1, cap - used, f);
        used += got;
        if (used < cap)
            break;
        cap *= 2;
        char *bigger = realloc(buf, cap + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
        }
        buf = bigger;
    }
    fclose(f);
    if (buf) {
        buf[used] = 0;
        if (len)
            *len = used;
    }
    return buf;
}

char *amq_test_scratch_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    size_t len = strlen(tmp) + sizeof("/amq-test-XXXXXX");
    char *path = malloc(len);
    if (!path)
        return NULL;
    snprintf(path, len, "%s/amq-test-XXXXXX", tmp);
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

void amq_test_remove_tree(const char *path)
{
    DIR *dir = opendir(path);
    if (dir) {
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                continue;
            size_t len = strlen(path) + 1 + strlen(entry->d_name) + 1;
            char *child = malloc(len);
            if (!child)
                continue;
            snprintf(child, len, "%s/%s", path, entry->d_name);
            struct stat st;
            if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
                amq_test_remove_tree(child);
            else
                unlink(child);
            free(child);
        }
        closedir(dir);
    }
    rmdir(path);
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long amq_test_unhex(uint8_t *out, size_t cap, const char *hex)
{
    size_t len = strlen(hex);
    if (len % 2 != 0 || len / 2 > cap)
        return -1;
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi * 16 + lo);
    }
    return (long)(len / 2);
}

void amq_test_hex(char *out, const uint8_t *bytes, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * len] = 0;
}

amq_test_key amq_test_make_key(uint64_t seed, uint64_t set, uint64_t i)
{
    amq_test_key key = { .tag = seed * 2 + set, .index = i * 0x9e3779b97f4a7c15ULL + seed };
    return key;
}
