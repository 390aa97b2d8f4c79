/*
 * filter.c - the generic handle: one amq_filter type that reaches every
 * family through its amq__family table (family.h).
 *
 * A handle is the family, the family's own state, and, when the family
 * borrowed its arrays from a loaded file (a static family opened by mmap),
 * the file image it borrowed from - or, loaded from memory with
 * AMQ_LOAD_BORROW, the caller's buffer, which is never freed here. Creating
 * parses the spec once (spec.c) and hands the family the parsed values;
 * saving asks the family for its hasher, parameter block and payload
 * pieces and writes them through format.c (to a file, a buffer or the
 * caller's writer); loading validates the whole image before the family
 * sees it.
 */
#include "filter/filter.h"
#include "core/alloc.h"
#include "core/bits.h"
#include "core/family.h"
#include "core/format.h"
#include "core/spec.h"
#include "core/struct_size.h"
#include "core/util.h"

#include <assert.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct amq_filter {
    const amq__family *family;
    void *state;
    amq__file_image image;  /* kept only when the family borrows from it */
    bool image_is_callers;  /* image is a caller's buffer (AMQ_LOAD_BORROW): never freed */
    uint64_t file_checksum; /* the trailer of the file it was loaded from, else 0 */
    bool add_once;          /* marked add-once (amq_mark_add_once): remove refuses */
};

/* Every family this build has. Families add themselves here. */
static const amq__family *const families[] = {
    &amq__bloom_family,
    &amq__blocked_bloom_family,
    &amq__counting_bloom_family,
    &amq__scalable_bloom_family,
    &amq__cuckoo_family,
    &amq__gcs_family,
    &amq__hfb_family,
    &amq__fuse8_family,
    &amq__fuse16_family,
    NULL,
};

static const size_t family_count = sizeof families / sizeof families[0] - 1;

const amq__family *const *amq__family_table(void)
{
    return families;
}

const char *amq_family_at(size_t index)
{
    return index < family_count ? families[index]->name : NULL;
}

static const amq__family *family_by_id(uint32_t id)
{
    for (size_t i = 0; families[i]; i++)
        if (families[i]->id == id)
            return families[i];
    return NULL;
}

/* A handle around state, which it takes over: on failure the state is
 * destroyed. */
static int wrap(amq_filter **out, const amq__family *family, void *state)
{
    int status = amq__filter_wrap(out, family, state);
    if (status != AMQ_OK)
        family->destroy(state);
    return status;
}

int amq__filter_wrap(amq_filter **out, const amq__family *family, void *state)
{
    amq_filter *f = amq__calloc(1, sizeof *f);
    if (!f)
        return AMQ_ENOMEM;
    f->family = family;
    f->state = state;
    *out = f;
    return AMQ_OK;
}

/* The error of a generic call given NULL for a pointer it needs: the
 * generic calls are the ones bindings and scripts reach, so they answer
 * AMQ_EINVAL rather than assert (the typed calls take non-NULL pointers as
 * a precondition, documented in their headers). */
static int null_argument(amq_diag *diag, const char *call, const char *argument)
{
    return amq__fail(diag, AMQ_EINVAL, "%s: %s is NULL", call, argument);
}

/*
 * Out of memory, said once for every generic call. A family that runs out
 * of memory deep inside (a table, a copy, a decoder's buffer) may return
 * AMQ_ENOMEM without a message; the generic call then names what it was
 * doing. The caller's diag keeps its old message on success (amq.h), so
 * its first byte is set aside at the start and put back unless the call
 * wrote a message.
 */
static char diag_begin(amq_diag *diag)
{
    if (!diag)
        return '\0';
    char kept = diag->message[0];
    diag->message[0] = '\0';
    return kept;
}

static int diag_end(int status, amq_diag *diag, char kept, const char *doing, const char *what)
{
    if (!diag)
        return status;
    if (diag->message[0] == '\0') {
        if (status == AMQ_ENOMEM)
            return amq__fail(diag, status, "out of memory %s %s", doing, what ? what : "");
        diag->message[0] = kept;
    }
    return status;
}

static int new_filter(amq_filter **out, const char *spec_text, amq_diag *diag)
{
    if (!out || !spec_text)
        return null_argument(diag, "amq_new", !out ? "out" : "spec");
    *out = NULL;
    amq__spec spec;
    int status = amq__spec_parse(&spec, spec_text, families, diag);
    if (status != AMQ_OK)
        return status;
    if (!spec.family->create)
        return amq__fail(diag, AMQ_EINVAL,
                         "%s is a static filter: build it from all its keys at once (amq_build)",
                         spec.family->name);
    void *state = NULL;
    status = spec.family->create(&state, &spec, diag);
    if (status != AMQ_OK)
        return status;
    return wrap(out, spec.family, state);
}

int amq_new(amq_filter **out, const char *spec_text, amq_diag *diag)
{
    char kept = diag_begin(diag);
    return diag_end(new_filter(out, spec_text, diag), diag, kept, "making a filter of spec",
                    spec_text);
}

static int build_filter(amq_filter **out, const char *spec_text, const void *const *keys,
                        const size_t *lens, size_t count, amq_diag *diag)
{
    if (!out || !spec_text || (count > 0 && (!keys || !lens)))
        return null_argument(diag, "amq_build",
                             !out         ? "out"
                             : !spec_text ? "spec"
                                          : "keys or lens (with count > 0)");
    *out = NULL;
    amq__spec spec;
    int status = amq__spec_parse(&spec, spec_text, families, diag);
    if (status != AMQ_OK)
        return status;
    const amq__family *family = spec.family;
    if (!family->build) {
        /* A dynamic family sized by the keys it is built from. */
        for (size_t i = 0; family->options[i]; i++)
            if (family->options[i] == &amq__option_capacity && !spec.values[i].set) {
                spec.values[i].set = true;
                spec.values[i].count = count ? count : 1;
            }
    }
    void *state = NULL;
    if (family->build) {
        status = family->build(&state, &spec, keys, lens, count, diag);
        if (status != AMQ_OK)
            return status;
        return wrap(out, family, state);
    }
    status = family->create(&state, &spec, diag);
    if (status != AMQ_OK)
        return status;
    for (size_t i = 0; i < count; i++) {
        status = family->add(state, keys[i], lens[i]);
        if (status != AMQ_OK) {
            family->destroy(state);
            return amq__fail(diag, status, "key %zu of %zu: %s", i + 1, count,
                             amq_strerror(status));
        }
    }
    return wrap(out, family, state);
}

int amq_build(amq_filter **out, const char *spec_text, const void *const *keys, const size_t *lens,
              size_t count, amq_diag *diag)
{
    char kept = diag_begin(diag);
    return diag_end(build_filter(out, spec_text, keys, lens, count, diag), diag, kept,
                    "building a filter of spec", spec_text);
}

int amq_add(amq_filter *f, const void *key, size_t len)
{
    if (!f || (!key && len > 0))
        return AMQ_EINVAL;
    if (!f->family->add)
        return AMQ_EUNSUPPORTED;
    return f->family->add(f->state, key, len);
}

int amq_add_unique(amq_filter *f, const void *key, size_t len)
{
    if (!f || (!key && len > 0))
        return AMQ_EINVAL;
    if (!f->family->add_unique)
        return AMQ_EUNSUPPORTED;
    return f->family->add_unique(f->state, key, len);
}

int amq_remove(amq_filter *f, const void *key, size_t len)
{
    if (!f || (!key && len > 0))
        return AMQ_EINVAL;
    if (!f->family->remove || f->add_once)
        return AMQ_EUNSUPPORTED;
    return f->family->remove(f->state, key, len);
}

enum batch_verb { BATCH_ADD, BATCH_ADD_UNIQUE, BATCH_REMOVE };

/* Run one verb over keys in order (amq_add_many, amq_add_unique_many,
 * amq_remove_many): the family's batch path where it has one, else key by
 * key, stopping at the first key that fails. AMQ_ENOTFOUND is a removal's
 * answer, not a failure. */
static int run_batch(enum batch_verb verb, int *results, size_t *handled, amq_filter *f,
                     const void *const *keys, const size_t *lens, size_t count)
{
    if (handled)
        *handled = 0;
    if (!f || !amq__key_array_valid(keys, lens, count))
        return AMQ_EINVAL;
    const amq__family *family = f->family;
    int (*one)(void *, const void *, size_t) = verb == BATCH_ADD          ? family->add
                                               : verb == BATCH_ADD_UNIQUE ? family->add_unique
                                                                          : family->remove;
    if (!one || (verb == BATCH_REMOVE && f->add_once))
        return AMQ_EUNSUPPORTED;
    size_t (*many)(void *, const void *const *, const size_t *, size_t, int *) =
        verb == BATCH_ADD          ? family->add_many
        : verb == BATCH_ADD_UNIQUE ? family->add_unique_many
                                   : NULL;
    /* The family's batch path writes every answer; without results they
     * go to a window on the stack, a batch at a time. */
    int scratch[256];
    size_t done = 0;
    while (done < count) {
        size_t n = count - done;
        int *answers = results ? results + done : scratch;
        if (!results && n > sizeof scratch / sizeof *scratch)
            n = sizeof scratch / sizeof *scratch;
        size_t got = many ? many(f->state, keys + done, lens + done, n, answers) : 0;
        /* Key by key where there is no batch path (and for one key, were a
         * batch path to handle none). */
        while (got < n && (!many || got == 0)) {
            answers[got] = one(f->state, keys[done + got], lens[done + got]);
            got++;
            if (answers[got - 1] < 0 &&
                !(verb == BATCH_REMOVE && answers[got - 1] == AMQ_ENOTFOUND))
                break;
        }
        int last = answers[got - 1];
        if (last < 0 && !(verb == BATCH_REMOVE && last == AMQ_ENOTFOUND)) {
            done += got - 1;
            if (handled)
                *handled = done;
            return last;
        }
        done += got;
    }
    if (handled)
        *handled = done;
    return AMQ_OK;
}

int amq_add_many(int *results, size_t *handled, amq_filter *f, const void *const *keys,
                 const size_t *lens, size_t count)
{
    return run_batch(BATCH_ADD, results, handled, f, keys, lens, count);
}

int amq_add_unique_many(int *results, size_t *handled, amq_filter *f, const void *const *keys,
                        const size_t *lens, size_t count)
{
    return run_batch(BATCH_ADD_UNIQUE, results, handled, f, keys, lens, count);
}

int amq_remove_many(int *results, size_t *handled, amq_filter *f, const void *const *keys,
                    const size_t *lens, size_t count)
{
    return run_batch(BATCH_REMOVE, results, handled, f, keys, lens, count);
}

int amq_mark_add_once(amq_filter *f, amq_diag *diag)
{
    if (!f)
        return null_argument(diag, "amq_mark_add_once", "f");
    if (!f->family->remove)
        return amq__fail(diag, AMQ_EUNSUPPORTED,
                         "a %s filter cannot remove keys: it needs no add-once mark",
                         f->family->name);
    f->add_once = true;
    return AMQ_OK;
}

int amq_add_once_marked(const amq_filter *f)
{
    if (!f)
        return AMQ_EINVAL;
    return f->add_once;
}

int amq_contains(const amq_filter *f, const void *key, size_t len)
{
    if (!f || (!key && len > 0))
        return AMQ_EINVAL;
    return f->family->contains(f->state, key, len);
}

int amq_contains_many(uint8_t *results, const amq_filter *f, const void *const *keys,
                      const size_t *lens, size_t count)
{
    if (!f || (count > 0 && (!keys || !lens || !results)))
        return AMQ_EINVAL;
    if (count == 0)
        return AMQ_OK;
    if (f->family->contains_many)
        return f->family->contains_many(f->state, keys, lens, count, results);
    for (size_t i = 0; i < count; i++) {
        int answer = f->family->contains(f->state, keys[i], lens[i]);
        if (answer < 0)
            return answer;
        results[i] = (uint8_t)answer;
    }
    return AMQ_OK;
}

static int merge_filters(amq_filter *into, const amq_filter *other, amq_diag *diag)
{
    if (!into || !other)
        return null_argument(diag, "amq_merge", !into ? "into" : "other");
    if (into->family != other->family)
        return amq__fail(diag, AMQ_EINCOMPATIBLE, "cannot merge a %s filter with a %s filter",
                         into->family->name, other->family->name);
    if (!into->family->merge)
        return amq__fail(diag, AMQ_EUNSUPPORTED, "%s filters cannot be merged", into->family->name);
    int status = into->family->merge(into->state, other->state, diag);
    /* The union of an add-once filter holds its keys once, as it does. */
    if (status == AMQ_OK && other->add_once)
        into->add_once = true;
    return status;
}

int amq_merge(amq_filter *into, const amq_filter *other, amq_diag *diag)
{
    char kept = diag_begin(diag);
    return diag_end(merge_filters(into, other, diag), diag, kept, "merging",
                    into ? into->family->name : NULL);
}

static int export_filter(uint8_t **out, size_t *len, const amq_filter *f, const char *format,
                         amq_diag *diag)
{
    if (!f || !format || !out || !len)
        return null_argument(diag, "amq_export",
                             !f        ? "f"
                             : !format ? "format"
                             : !out    ? "out"
                                       : "len");
    *out = NULL;
    *len = 0;
    if (!f->family->export_as)
        return amq__fail(diag, AMQ_EUNSUPPORTED, "%s filters have no export format",
                         f->family->name);
    return f->family->export_as(f->state, format, out, len, diag);
}

int amq_export(uint8_t **out, size_t *len, const amq_filter *f, const char *format, amq_diag *diag)
{
    char kept = diag_begin(diag);
    return diag_end(export_filter(out, len, f, format, diag), diag, kept, "exporting", format);
}

static const amq__family *family_by_name(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; families[i]; i++)
        if (strcmp(families[i]->name, name) == 0)
            return families[i];
    return NULL;
}

int amq_family_is_static(const char *name)
{
    const amq__family *family = family_by_name(name);
    return family ? family->create == NULL : AMQ_EINVAL;
}

int amq_family_capabilities(const char *name)
{
    const amq__family *family = family_by_name(name);
    if (!family)
        return AMQ_EINVAL;
    int capabilities = 0;
    if (family->create)
        capabilities |= AMQ_CAN_ADD;
    if (family->remove)
        capabilities |= AMQ_CAN_REMOVE;
    if (family->merge)
        capabilities |= AMQ_CAN_MERGE;
    if (family->grows)
        capabilities |= AMQ_CAN_GROW;
    if (family->export_as)
        capabilities |= AMQ_CAN_EXPORT;
    /* Properties of one family's design, which its table does not carry. */
    if (family == &amq__hfb_family)
        capabilities |= AMQ_TAKES_IDS;
    if (family == &amq__cuckoo_family)
        capabilities |= AMQ_GROWS_IF_ASKED;
    return capabilities;
}

const char *amq_capability_name(int capability)
{
    switch (capability) {
    case AMQ_CAN_ADD:
        return "add";
    case AMQ_CAN_REMOVE:
        return "remove";
    case AMQ_CAN_MERGE:
        return "merge";
    case AMQ_CAN_GROW:
        return "grow";
    case AMQ_CAN_EXPORT:
        return "export";
    default:
        return NULL;
    }
}

const char *amq_filter_family(const amq_filter *f)
{
    return f ? f->family->name : NULL;
}

int amq_info_get_sized(amq_info *out, size_t struct_size, const amq_filter *f)
{
    if (!f || !out || struct_size < sizeof(size_t))
        return AMQ_EINVAL;
    amq_info info;
    memset(&info, 0, sizeof info);
    info.family = f->family->name;
    f->family->info(f->state, &info);
    info.file_checksum = f->file_checksum;
    info.add_once = f->add_once;
    amq__struct_write(out, struct_size, &info, sizeof info);
    return AMQ_OK;
}

int amq__filter_describe(amq__saved *saved, amq__container *c, const amq_filter *f, amq_diag *diag)
{
    assert(saved && c && f);
    memset(saved, 0, sizeof *saved);
    amq__params_init(&saved->params);
    int status = f->family->save(f->state, saved);
    if (status != AMQ_OK)
        return amq__fail(diag, status, "saving a %s filter: %s", f->family->name,
                         amq_strerror(status));
    if (saved->params.overflow)
        return amq__fail(diag, AMQ_EINVAL, "%s parameters do not fit the file header",
                         f->family->name);
    *c = (amq__container){
        .family = f->family->id,
        .flags = f->add_once ? AMQ__FORMAT_FLAG_ADD_ONCE : 0,
        .hasher = saved->hasher,
        .params = saved->params.bytes,
        .params_len = saved->params.len,
    };
    return AMQ_OK;
}

uint64_t amq__saved_payload_len(const amq__saved *saved)
{
    uint64_t len = 0;
    for (size_t i = 0; i < saved->piece_count; i++)
        len += saved->pieces[i].len;
    return len;
}

int amq__filter_save(uint64_t *checksum, const amq_filter *f, const char *path, amq_diag *diag)
{
    assert(f && path);
    amq__container c;
    amq__saved saved;
    int status = amq__filter_describe(&saved, &c, f, diag);
    if (status != AMQ_OK)
        return status;
    return amq__format_save(checksum, path, &c, saved.pieces, saved.piece_count, diag);
}

int amq_save(const amq_filter *f, const char *path, amq_diag *diag)
{
    if (!f || !path)
        return null_argument(diag, "amq_save", !f ? "f" : "path");
    char kept = diag_begin(diag);
    return diag_end(amq__filter_save(NULL, f, path, diag), diag, kept, "saving", path);
}

int amq_saved_bytes(uint64_t *bytes, const amq_filter *f, amq_diag *diag)
{
    if (!bytes || !f)
        return null_argument(diag, "amq_saved_bytes", !bytes ? "bytes" : "the filter");
    amq__container c;
    amq__saved saved;
    int status = amq__filter_describe(&saved, &c, f, diag);
    if (status != AMQ_OK)
        return status;
    *bytes = amq__format_encoded_size(c.params_len, amq__saved_payload_len(&saved));
    if (!*bytes)
        return amq__fail(diag, AMQ_ERANGE, "the filter is too large for a file");
    return AMQ_OK;
}

/* Let go of an image the family did not keep: close it, unless it is the
 * caller's buffer, which is not ours to free. */
static void release_image(amq__file_image *image, bool callers)
{
    if (!callers)
        amq__file_image_close(image);
}

/* As amq__filter_from_container; callers: *image is a caller's buffer. */
static int from_container(amq_filter **out, const amq__container *c, amq__file_image *image,
                          bool callers, const char *where, amq_diag *diag)
{
    assert(out && c && image && where);
    *out = NULL;
    const amq__family *family = family_by_id(c->family);
    if (!family) {
        release_image(image, callers);
        const char *other = amq__non_filter_description(c->family);
        if (other)
            return amq__fail(diag, AMQ_EUNSUPPORTED, "%s is %s", where, other);
        return amq__fail(diag, AMQ_EUNSUPPORTED,
                         "%s holds a filter of family %u, which this build does not have", where,
                         c->family);
    }
    if ((c->flags & AMQ__FORMAT_FLAG_ADD_ONCE) && !family->remove) {
        release_image(image, callers);
        return amq__fail(diag, AMQ_ECORRUPT,
                         "%s is marked add-once, which a %s filter, that cannot remove keys, "
                         "never is",
                         where, family->name);
    }
    void *state = NULL;
    bool borrows = false;
    int status = family->load(&state, c, &borrows, diag);
    if (status != AMQ_OK) {
        release_image(image, callers);
        return status;
    }
    if (!borrows)
        release_image(image, callers);
    status = wrap(out, family, state);
    if (status != AMQ_OK) {
        release_image(image, callers);
        return status;
    }
    (*out)->add_once = (c->flags & AMQ__FORMAT_FLAG_ADD_ONCE) != 0;
    if (borrows) {
        (*out)->image = *image;
        (*out)->image_is_callers = callers;
    }
    return AMQ_OK;
}

int amq__filter_from_container(amq_filter **out, const amq__container *c, amq__file_image *image,
                               const char *where, amq_diag *diag)
{
    char kept = diag_begin(diag);
    return diag_end(from_container(out, c, image, false, where, diag), diag, kept, "loading",
                    where);
}

int amq__filter_load(amq_filter **out, const char *path, unsigned flags, const amq__family *family,
                     amq_diag *diag)
{
    assert(out && path);
    *out = NULL;
    amq__file_image image;
    amq__container c;
    int status = amq__format_open(&image, &c, path, flags, diag);
    if (status != AMQ_OK)
        return status;
    if (family && c.family != family->id) {
        amq__file_image_close(&image);
        return amq__fail(diag, AMQ_ECORRUPT, "it holds family %" PRIu32 ", not a %s filter",
                         c.family, family->name);
    }
    uint64_t checksum = amq__load_u64le(image.data + image.len - AMQ__FORMAT_TRAILER_SIZE);
    status = amq__filter_from_container(out, &c, &image, path, diag);
    if (status == AMQ_OK)
        (*out)->file_checksum = checksum;
    return status;
}

int amq_load(amq_filter **out, const char *path, unsigned flags, amq_diag *diag)
{
    if (!out || !path)
        return null_argument(diag, "amq_load", !out ? "out" : "path");
    char kept = diag_begin(diag);
    return diag_end(amq__filter_load(out, path, flags, NULL, diag), diag, kept, "loading", path);
}

/* ---- filters in memory ----------------------------------------------------- */

static int save_to_memory(uint8_t **out, size_t *out_len, const amq_filter *f, amq_diag *diag)
{
    if (out)
        *out = NULL;
    if (out_len)
        *out_len = 0;
    if (!out || !out_len || !f)
        return null_argument(diag, "amq_save_to_memory",
                             !out       ? "out"
                             : !out_len ? "out_len"
                                        : "the filter");
    amq__container c;
    amq__saved saved;
    int status = amq__filter_describe(&saved, &c, f, diag);
    if (status != AMQ_OK)
        return status;
    return amq__format_encode(out, out_len, &c, saved.pieces, saved.piece_count, diag);
}

int amq_save_to_memory(uint8_t **out, size_t *out_len, const amq_filter *f, amq_diag *diag)
{
    char kept = diag_begin(diag);
    return diag_end(save_to_memory(out, out_len, f, diag), diag, kept, "saving to memory",
                    f ? f->family->name : NULL);
}

int amq_save_to_writer(const amq_filter *f, amq_write_fn write, void *context, amq_diag *diag)
{
    if (!f || !write)
        return null_argument(diag, "amq_save_to_writer", !f ? "the filter" : "the writer");
    amq__container c;
    amq__saved saved;
    int status = amq__filter_describe(&saved, &c, f, diag);
    if (status != AMQ_OK)
        return status;
    return amq__format_write(&c, saved.pieces, saved.piece_count, write, context, diag);
}

/* A copy of a checked image in memory of its own, checked again: what the
 * copy holds is what is trusted, whatever becomes of the caller's buffer.
 * It is a table (amq__alloc_table), as a file read into memory is: 64-byte
 * aligned, and on huge pages from 2 MiB up, for the families that query
 * the image in place. */
static int copy_image(amq__file_image *copy, amq__container *c, const uint8_t *data, size_t len,
                      amq_diag *diag)
{
    copy->data = len ? amq__alloc_table(len, false) : NULL;
    copy->len = len;
    copy->mapped = false;
    if (!copy->data)
        return amq__fail(diag, AMQ_ENOMEM, "cannot allocate %zu bytes to copy the image", len);
    memcpy(copy->data, data, len);
    int status = amq__format_parse(c, copy->data, len, diag);
    if (status != AMQ_OK)
        amq__file_image_close(copy);
    return status;
}

static int load_from_memory(amq_filter **out, const void *data, size_t len, unsigned flags,
                            amq_diag *diag)
{
    if (out)
        *out = NULL;
    if (!out || !data)
        return null_argument(diag, "amq_load_from_memory", !out ? "out" : "the data");
    if (flags & ~(unsigned)AMQ_LOAD_BORROW)
        return amq__fail(diag, AMQ_EINVAL,
                         "load flags 0x%x: from memory only AMQ_LOAD_BORROW applies", flags);
    static const char where[] = "the image in memory";
    const uint8_t *bytes = data;
    amq__container c;
    int status = amq__format_parse(&c, bytes, len, diag);
    if (status != AMQ_OK)
        return status;
    uint64_t checksum = amq__load_u64le(bytes + len - AMQ__FORMAT_TRAILER_SIZE);
    bool borrow = (flags & AMQ_LOAD_BORROW) != 0;

    /* A static family may keep pointers into what it loads from: unless
     * borrowing is asked for, it gets a copy to keep. A dynamic family
     * builds its own arrays and never borrows (family.h), so it reads the
     * caller's buffer directly. */
    const amq__family *family = family_by_id(c.family);
    bool copy_first = !borrow && (!family || !family->create);
    amq__file_image image = { .data = (uint8_t *)(uintptr_t)bytes, .len = len };
    if (copy_first) {
        status = copy_image(&image, &c, bytes, len, diag);
        if (status != AMQ_OK)
            return status;
    }
    status = from_container(out, &c, &image, !copy_first, where, diag);
    if (status != AMQ_OK)
        return status;
    assert(borrow || copy_first || !(*out)->image_is_callers);
    (*out)->file_checksum = checksum;
    return AMQ_OK;
}

int amq_load_from_memory(amq_filter **out, const void *data, size_t len, unsigned flags,
                         amq_diag *diag)
{
    char kept = diag_begin(diag);
    return diag_end(load_from_memory(out, data, len, flags, diag), diag, kept, "loading",
                    "an image in memory");
}

void amq_free(amq_filter *f)
{
    if (!f)
        return;
    f->family->destroy(f->state);
    release_image(&f->image, f->image_is_callers);
    amq__free(f);
}

void *amq__filter_state(amq_filter *f, const amq__family *family)
{
    return f && f->family == family ? f->state : NULL;
}
