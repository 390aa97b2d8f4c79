/*
 * index_read.c - the index (codesearch.h) opened for searching: the
 * document table, and a trigram's documents as a bitmap, asked of its
 * filter for every document's ID at once (amq_contains_many).
 */
#include "index_read.h"

#include "amq/amq.h"
#include "amq/bundle.h"
#include "codesearch.h"

#include <stdlib.h>
#include <string.h>

struct cs_index {
    amq_bundle *bundle;
    const char *path;
    const char **paths;
    uint8_t *ids;
    uint32_t count;
    const void **keys; /* each document's ID, for amq_contains_many */
    size_t *lens;
    uint8_t *passed;
};

static int read_documents(cs_index *x)
{
    amq_bundle_member table;
    if (amq_bundle_find(&table, x->bundle, CODESEARCH_DOCUMENTS, strlen(CODESEARCH_DOCUMENTS)) !=
            1 ||
        strcmp(table.family, "bytes") != 0 ||
        (table.data_len > 0 && table.data[table.data_len - 1] != 0)) {
        codesearch_error("%s is not a codesearch index: no document table", x->path);
        return 2;
    }
    uint64_t count = 0;
    for (uint64_t i = 0; i < table.data_len; i++)
        count += table.data[i] == 0;
    if (count >= UINT32_MAX) {
        codesearch_error("%s: %llu documents are too many", x->path, (unsigned long long)count);
        return 2;
    }
    x->count = (uint32_t)count;
    x->paths = malloc((count + 1) * sizeof *x->paths);
    x->ids = malloc((count + 1) * CODESEARCH_ID_BYTES);
    x->keys = malloc((count + 1) * sizeof *x->keys);
    x->lens = malloc((count + 1) * sizeof *x->lens);
    x->passed = malloc(count + 1);
    if (!x->paths || !x->ids || !x->keys || !x->lens || !x->passed) {
        codesearch_error("out of memory");
        return 2;
    }
    const char *p = (const char *)table.data;
    for (uint32_t d = 0; d < x->count; d++) {
        size_t len = strlen(p);
        x->paths[d] = p;
        amq_md5(x->ids + (size_t)d * CODESEARCH_ID_BYTES, p, len);
        x->keys[d] = x->ids + (size_t)d * CODESEARCH_ID_BYTES;
        x->lens[d] = CODESEARCH_ID_BYTES;
        p += len + 1;
    }
    return 0;
}

int cs_index_open(cs_index **out, const char *path)
{
    *out = NULL;
    cs_index *x = calloc(1, sizeof *x);
    if (!x) {
        codesearch_error("out of memory");
        return 2;
    }
    x->path = path;
    amq_diag diag = { 0 };
    if (amq_bundle_open(&x->bundle, path, AMQ_LOAD_MMAP, &diag) != AMQ_OK) {
        codesearch_error("%s", diag.message);
        cs_index_close(x);
        return 2;
    }
    if (read_documents(x) != 0) {
        cs_index_close(x);
        return 2;
    }
    *out = x;
    return 0;
}

void cs_index_close(cs_index *x)
{
    if (!x)
        return;
    amq_bundle_close(x->bundle);
    free(x->paths);
    free(x->ids);
    free(x->keys);
    free(x->lens);
    free(x->passed);
    free(x);
}

uint32_t cs_index_documents(const cs_index *x)
{
    return x->count;
}

const char *cs_index_path(const cs_index *x, uint32_t document)
{
    return x->paths[document];
}

int cs_index_trigram(cs_index *x, uint32_t trigram, uint64_t *bitmap)
{
    uint8_t name[3];
    codesearch_trigram_name(name, trigram);
    amq_diag diag = { 0 };
    amq_filter *f = NULL;
    int status = amq_bundle_open_filter(&f, x->bundle, name, 3, &diag);
    if (status == AMQ_ENOTFOUND)
        return 0;
    if (status != AMQ_OK) {
        codesearch_error("%s: a trigram's filter: %s", x->path, diag.message);
        return 2;
    }
    status = amq_contains_many(x->passed, f, x->keys, x->lens, x->count);
    amq_free(f);
    if (status != AMQ_OK) {
        codesearch_error("%s: a trigram filter refused the document IDs", x->path);
        return 2;
    }
    for (uint32_t d = 0; d < x->count; d++)
        if (x->passed[d])
            bitmap[d / 64] |= (uint64_t)1 << (d % 64);
    return 0;
}
