/*
 * fuzz_container_load.c - the container parser (amq__format_parse) on
 * arbitrary bytes. It must never crash or read outside the input; when an
 * input parses, encoding what it describes must give back the input byte
 * for byte, since every byte of a valid file is determined by its fields
 * (docs/FORMAT.md, "Canonical encoding").
 */
#include "core/format.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    amq__container c;
    amq_diag diag;
    if (amq__format_parse(&c, data, size, &diag) != AMQ_OK)
        return 0;
    amq__piece payload = { .data = c.payload, .len = c.payload_len };
    uint8_t *encoded = NULL;
    size_t encoded_len = 0;
    if (amq__format_encode(&encoded, &encoded_len, &c, &payload, 1, &diag) != AMQ_OK)
        abort();
    if (encoded_len != size || memcmp(encoded, data, size) != 0)
        abort();
    free(encoded);
    return 0;
}
