/*
 * fuzz_image_peek.c - amq_image_peek on arbitrary bytes. It must never
 * crash or read outside the input, and it must agree with the container
 * parser: an input that parses whole is peeked as its own length and
 * family; a peek that asks for more (AMQ_ERANGE) has fewer bytes than the
 * header; and a header the peek takes is one whose image, at the length
 * it tells, the parser refuses only for what lies past the header.
 */
#include "amq/amq.h"
#include "core/format.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t bytes = 0;
    const char *family = NULL;
    amq_diag diag;
    int peeked = amq_image_peek(&bytes, &family, data, size, &diag);
    if (peeked == AMQ_ERANGE &&
        (size >= AMQ__FORMAT_HEADER_SIZE || bytes != AMQ__FORMAT_HEADER_SIZE))
        abort();
    if (peeked == AMQ_OK && bytes < AMQ__FORMAT_HEADER_SIZE + AMQ__FORMAT_TRAILER_SIZE)
        abort();
    amq__container c;
    int parsed = amq__format_parse(&c, data, size, &diag);
    if (parsed == AMQ_OK && (peeked != AMQ_OK || bytes != size))
        abort();
    /* Whatever the parser says of the header alone, the peek says too. */
    if (peeked != AMQ_OK && peeked != AMQ_ERANGE &&
        size >= AMQ__FORMAT_HEADER_SIZE + AMQ__FORMAT_TRAILER_SIZE && parsed != peeked)
        abort();
    return 0;
}
