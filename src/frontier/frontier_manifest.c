/*
 * frontier_manifest.c - the crawl frontier's manifest, the commit point of
 * a checkpoint (frontier.c explains the whole): its encoding and the
 * checks of what a manifest read says.
 *
 * The manifest is an amq container (docs/FORMAT.md) of family 11, whose
 * hasher is the filter's. Its parameter block, little-endian:
 *
 *   u32 version (2) | u64 generation
 *   u64 initial capacity | f64 fpr | f64 growth | f64 tightening
 *   u64 pushed | u64 enqueued | u64 popped
 *   u64 filter file checksum (its trailer; 0 at generation 0)
 *   u64 next segment id | u64 read offset | u64 read records | u64 segments
 *   u64 lost | u64 retired segments                            (124 bytes)
 *
 * and its payload the segment table, 24 bytes a segment (u64 id, u64
 * length, u64 records), then the retired segments' ids, u64 each. Version
 * 1, without lost and retired (108 bytes), is still read: nothing lost,
 * nothing retired.
 *
 * Every field is checked on reading: the counters against each other, the
 * segment table's length against the counts, the retired ids against the
 * next id; the spill checks the table itself (frontier_segments.c).
 */
#include "amq/bloom.h"
#include "amq/frontier.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/format.h"
#include "core/util.h"
#include "frontier/frontier_internal.h"

#include <assert.h>
#include <inttypes.h>
#include <string.h>

#define MANIFEST_VERSION   2
#define MANIFEST_PARAMS_V1 108
#define MANIFEST_PARAMS    124

int amq__manifest_write(amq_frontier *f, const amq__manifest *m, amq_diag *diag)
{
    amq__params_writer *w = amq__malloc(sizeof *w);
    size_t table_len = f->spill.count * AMQ__SPILL_ENTRY_SIZE;
    size_t retired_len = m->retired * 8;
    uint8_t *table = table_len + retired_len ? amq__malloc(table_len + retired_len) : NULL;
    int status = AMQ_OK;
    if (!w || (table_len + retired_len && !table)) {
        status = amq__fail(diag, AMQ_ENOMEM, "out of memory writing the manifest");
    } else {
        amq__params_init(w);
        amq__params_put_u32(w, MANIFEST_VERSION);
        amq__params_put_u64(w, m->generation);
        amq__params_put_u64(w, m->filter.capacity);
        amq__params_put_f64(w, m->filter.fpr);
        amq__params_put_f64(w, m->filter.growth);
        amq__params_put_f64(w, m->filter.tightening);
        amq__params_put_u64(w, m->pushed);
        amq__params_put_u64(w, m->enqueued);
        amq__params_put_u64(w, m->popped);
        amq__params_put_u64(w, m->filter_checksum);
        amq__params_put_u64(w, m->next_segment);
        amq__params_put_u64(w, m->read_offset);
        amq__params_put_u64(w, m->read_records);
        amq__params_put_u64(w, m->segments);
        amq__params_put_u64(w, m->lost);
        amq__params_put_u64(w, m->retired);
        assert(w->len == MANIFEST_PARAMS);
        amq__spill_table_store(&f->spill, table);
        for (size_t i = 0; i < m->retired; i++)
            amq__store_u64le(table + table_len + i * 8, f->spill.retired[i]);
        amq__container c = {
            .family = AMQ__FAMILY_FRONTIER,
            .hasher = m->filter.hasher,
            .params = w->bytes,
            .params_len = w->len,
        };
        amq__piece piece = { .data = table, .len = table_len + retired_len };
        status = amq__frontier_write_file(NULL, f, AMQ__FRONTIER_MANIFEST_NAME, 0644, &c, &piece, 1,
                                          diag);
    }
    amq__free(w);
    amq__free(table);
    return status;
}

/* Read the manifest's fields and check them against each other; the
 * segment table is checked by the spill. */
int amq__manifest_parse(amq__manifest *m, const amq__container *c, amq_diag *diag)
{
    if (c->family != AMQ__FAMILY_FRONTIER)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "it is an amq file of family %" PRIu32 ", not a frontier manifest",
                         c->family);
    amq__params_reader r;
    amq__params_reader_init(&r, c->params, c->params_len);
    uint32_t version = 0;
    if (amq__params_get_u32(&r, &version) != AMQ_OK)
        return amq__fail(diag, AMQ_ECORRUPT, "its parameter block is empty");
    if (version > MANIFEST_VERSION)
        return amq__fail(diag, AMQ_EVERSION,
                         "manifest version %" PRIu32 " is newer than the %d this library reads",
                         version, MANIFEST_VERSION);
    memset(m, 0, sizeof *m);
    m->filter.hasher = c->hasher;
    if (version < 1 || amq__params_get_u64(&r, &m->generation) ||
        amq__params_get_u64(&r, &m->filter.capacity) || amq__params_get_f64(&r, &m->filter.fpr) ||
        amq__params_get_f64(&r, &m->filter.growth) ||
        amq__params_get_f64(&r, &m->filter.tightening) || amq__params_get_u64(&r, &m->pushed) ||
        amq__params_get_u64(&r, &m->enqueued) || amq__params_get_u64(&r, &m->popped) ||
        amq__params_get_u64(&r, &m->filter_checksum) || amq__params_get_u64(&r, &m->next_segment) ||
        amq__params_get_u64(&r, &m->read_offset) || amq__params_get_u64(&r, &m->read_records) ||
        amq__params_get_u64(&r, &m->segments) ||
        (version >= 2 &&
         (amq__params_get_u64(&r, &m->lost) || amq__params_get_u64(&r, &m->retired))) ||
        amq__params_end(&r) != AMQ_OK)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "its parameter block is %" PRIu32 " bytes of version %" PRIu32
                         "; version 1 has %d, version 2 %d",
                         c->params_len, version, MANIFEST_PARAMS_V1, MANIFEST_PARAMS);
    if (m->enqueued > m->pushed || m->popped > m->enqueued || m->lost > m->enqueued - m->popped)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "its counters are inconsistent: %" PRIu64 " pushed, %" PRIu64
                         " enqueued, %" PRIu64 " popped, %" PRIu64 " lost",
                         m->pushed, m->enqueued, m->popped, m->lost);
    if (m->next_segment < 1)
        return amq__fail(diag, AMQ_ECORRUPT, "its next segment id is 0");
    if (m->filter.capacity < 1 || !(m->filter.fpr > 0 && m->filter.fpr < 1))
        return amq__fail(diag, AMQ_ECORRUPT,
                         "its filter's first-stage capacity %" PRIu64 " or fpr %g is out of range",
                         m->filter.capacity, m->filter.fpr);
    if (m->generation == 0 && (m->pushed || m->segments || m->filter_checksum || m->retired))
        return amq__fail(diag, AMQ_ECORRUPT, "generation 0 is not the empty frontier");
    if (m->segments > c->payload_len / AMQ__SPILL_ENTRY_SIZE || m->retired > c->payload_len / 8 ||
        c->payload_len != m->segments * AMQ__SPILL_ENTRY_SIZE + m->retired * 8)
        return amq__fail(diag, AMQ_ECORRUPT,
                         "its segment table is %" PRIu64 " bytes, not %d for each of %" PRIu64
                         " segments and 8 for each of %" PRIu64 " retired ones",
                         c->payload_len, AMQ__SPILL_ENTRY_SIZE, m->segments, m->retired);
    m->retired_ids = c->payload + m->segments * AMQ__SPILL_ENTRY_SIZE;
    for (uint64_t i = 0; i < m->retired; i++) {
        uint64_t id = amq__load_u64le(m->retired_ids + i * 8);
        if (id == 0 || id >= m->next_segment)
            return amq__fail(diag, AMQ_ECORRUPT,
                             "retired segment %" PRIu64 " has id %" PRIu64
                             ", not above 0 and below %" PRIu64,
                             i, id, m->next_segment);
    }
    return AMQ_OK;
}
