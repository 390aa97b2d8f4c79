/*
 * fuzz_bundle_open.c - a bundle's member records and index (src/bundle/bundle.c)
 * on arbitrary bytes.
 *
 * A mutated bundle file fails the container's checksum before its records
 * are read, so the input is split without one:
 *
 *     bytes 0-1   P, the parameter block's length, little-endian, capped at
 *                 the bytes that follow and at AMQ__FORMAT_PARAMS_MAX
 *     P bytes     the bundle's parameter block
 *     the rest    the payload: member records, then the index
 *
 * each copied into a buffer of its own exact size so that a read past
 * either end is caught. The opener must refuse bad input with a status
 * code, never crash or read out of bounds. When it accepts, every member is
 * listed, found again by its name at the same position, and, when it is a
 * filter, opened (its family may still refuse its data) and asked a key.
 * fuzz/corpus/bundle_open/ holds seeds made from bundles the library wrote.
 *
 * A violation aborts with a message on stderr, so libFuzzer keeps the input.
 */
#include "bundle/bundle_internal.h"
#include "core/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void violation(const char *what, uint64_t index)
{
    fprintf(stderr, "fuzz_bundle_open: member %llu: %s\n", (unsigned long long)index, what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t params_len = amq__load_u16le(data);
    if (params_len > size - 2)
        params_len = size - 2;
    if (params_len > AMQ__FORMAT_PARAMS_MAX)
        params_len = AMQ__FORMAT_PARAMS_MAX;
    size_t payload_len = size - 2 - params_len;
    uint8_t *params = malloc(params_len ? params_len : 1);
    uint8_t *payload = malloc(payload_len ? payload_len : 1);
    if (!params || !payload) {
        free(params);
        free(payload);
        return 0;
    }
    memcpy(params, data + 2, params_len);
    memcpy(payload, data + 2 + params_len, payload_len);
    amq__container c = {
        .family = AMQ__FAMILY_BUNDLE,
        .params = params,
        .params_len = (uint32_t)params_len,
        .payload = payload,
        .payload_len = payload_len,
    };
    amq_hasher_xxh3(&c.hasher, 0);
    amq__file_image image = { payload, payload_len, false };
    amq_bundle *bundle = NULL;
    int status = amq__bundle_from_container(&bundle, &c, &image, "fuzz input", NULL);
    free(params);
    if (status != AMQ_OK) {
        if (status >= 0 || bundle)
            violation("refused without an error status, or with a bundle", 0);
        return 0;
    }
    for (uint64_t i = 0; i < amq_bundle_members(bundle); i++) {
        amq_bundle_member member, found;
        if (amq_bundle_member_at(&member, bundle, i) != AMQ_OK || member.index != i)
            violation("not listed at its position", i);
        if (amq_bundle_find(&found, bundle, member.name, member.name_len) != 1 ||
            found.index != i || found.data != member.data)
            violation("not found again by its name", i);
        if (strcmp(member.family, "bytes") == 0)
            continue;
        amq_filter *filter = NULL;
        if (amq_bundle_open_filter(&filter, bundle, member.name, member.name_len, NULL) == AMQ_OK) {
            (void)amq_contains(filter, "key", 3);
            amq_free(filter);
        } else if (filter) {
            violation("refused but gave a filter", i);
        }
    }
    amq_bundle_close(bundle);
    return 0;
}
