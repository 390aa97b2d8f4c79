/*
 * replay_main.c - runs a fuzz target over files without libFuzzer, so that
 * every corpus entry (and every crash once found) is replayed as an ordinary
 * test under any compiler. Arguments are files or directories of files.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, used = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        used += fread(buf + used, 1, cap - used, f);
        if (used < cap)
            break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return 1;
    }
    /* An exact-size copy, so that ASan sees reads past the input's end. */
    uint8_t *exact = malloc(used ? used : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, used);
    free(buf);
    LLVMFuzzerTestOneInput(exact, used);
    free(exact);
    return 0;
}

static int replay_path(const char *path, unsigned long *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: no such file or directory: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *dir = opendir(path);
    if (!dir)
        return 1;
    int failures = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        size_t len = strlen(path) + strlen(entry->d_name) + 2;
        char *child = malloc(len);
        if (!child) {
            failures++;
            continue;
        }
        snprintf(child, len, "%s/%s", path, entry->d_name);
        failures += replay_path(child, count);
        free(child);
    }
    closedir(dir);
    return failures;
}

int main(int argc, char **argv)
{
    unsigned long count = 0;
    int failures = 0;
    for (int i = 1; i < argc; i++)
        failures += replay_path(argv[i], &count);
    printf("replayed %lu inputs\n", count);
    return failures ? 1 : 0;
}
