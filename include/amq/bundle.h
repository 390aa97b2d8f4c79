/*
 * amq/bundle.h - many named filters in one file: a term dictionary of
 * filters (a search engine's word -> document-ID filter, a code index's
 * trigram -> file filter, one filter per shard or per day).
 *
 * A bundle maps names (any bytes, up to AMQ_BUNDLE_NAME_MAX) to members. A
 * member is a filter of any family, or plain bytes the application keeps
 * beside its filters (a document table, its own settings). A bundle is
 * written once by an amq_bundle_writer and read by an amq_bundle: members
 * are found by name with a binary search over a sparse index and opened one
 * at a time as ordinary amq_filter handles.
 *
 * The file is one amq container (docs/FORMAT.md, "The bundle"), so it has
 * the same magic, checksum and atomic save as a filter file. It is built for
 * very many small members: a member costs its name, a few bytes of framing
 * and its payload - the parameters of a member are stored as the bytes that
 * differ from a template its family shares, so a hundred thousand small
 * Golomb-coded sets do not each pay for a full header.
 *
 * Thread safety: a writer needs exclusive access. An open bundle is never
 * modified; any number of threads may find members and open filters from
 * it at once. A filter opened from a bundle owns its memory: it may outlive
 * the bundle.
 */
#ifndef AMQ_BUNDLE_H
#define AMQ_BUNDLE_H

#include "amq/amq.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The longest member name, in bytes. */
#define AMQ_BUNDLE_NAME_MAX 4096

/* ---- writing --------------------------------------------------------------- */

/** A bundle being assembled in memory; opaque. */
typedef struct amq_bundle_writer amq_bundle_writer;

/**
 * Start an empty bundle.
 * @param out receives the writer; not NULL.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_ENOMEM.
 */
AMQ_API int amq_bundle_writer_new(amq_bundle_writer **out, amq_diag *diag);

/**
 * Add a filter under a name. The filter is encoded at once, as amq_save
 * would write it: the writer keeps no reference to it.
 * @param name name_len bytes, any values; may be NULL when name_len is 0.
 * @param name_len at most AMQ_BUNDLE_NAME_MAX.
 * @param filter not NULL.
 * @param diag may be NULL.
 * @return AMQ_OK; AMQ_EINVAL (a name too long; the diag says which);
 *   AMQ_ENOMEM; AMQ_ERANGE (the bundle would pass 2^63 bytes). Two members
 *   with the same name are found at amq_bundle_save.
 * Allocates: the member's encoded bytes, held until the writer is freed.
 */
AMQ_API int amq_bundle_add(amq_bundle_writer *writer, const void *name, size_t name_len,
                           const amq_filter *filter, amq_diag *diag);

/**
 * Add plain bytes under a name (a member that is not a filter).
 * @param data len bytes; may be NULL when len is 0. Copied.
 * @param diag on failure, what was wrong; may be NULL.
 * @return as amq_bundle_add.
 */
AMQ_API int amq_bundle_add_bytes(amq_bundle_writer *writer, const void *name, size_t name_len,
                                 const void *data, size_t len, amq_diag *diag);

/** Members added so far. */
AMQ_API uint64_t amq_bundle_writer_members(const amq_bundle_writer *writer);

/**
 * Write the bundle to path atomically (a temporary file, fsync, rename: a
 * crash leaves the old file or the new one), members in name order. The
 * writer is unchanged and may be saved again or given more members.
 * @return AMQ_OK; AMQ_EINVAL (two members share a name: the diag gives it
 *   in hex); AMQ_EIO (errno kept; the diag names the path); AMQ_ENOMEM.
 * Allocates: about the bundle's size, freed before returning.
 */
AMQ_API int amq_bundle_save(const amq_bundle_writer *writer, const char *path, amq_diag *diag);

/** Free a writer and every member it holds. Accepts NULL. */
AMQ_API void amq_bundle_writer_free(amq_bundle_writer *writer);

/* ---- reading --------------------------------------------------------------- */

/** An open bundle file; opaque. */
typedef struct amq_bundle amq_bundle;

/** What a member is, as amq_bundle_find and amq_bundle_member_at tell it. */
typedef struct amq_bundle_member {
    size_t struct_size;  /**< the size of the caller's layout, which amq_bundle_find
                              sets (docs/CONVENTIONS.md, "Growth") */
    const uint8_t *name; /**< name_len bytes inside the bundle; not NUL-terminated */
    size_t name_len;
    /** The family name of a filter member ("gcs", "hfb", ...), "bytes" for
     *  a plain-bytes member, or "unknown" for a family this build does not
     *  have. A static string. */
    const char *family;
    /** A bytes member: its bytes. A filter: its payload as stored (the
     *  family's data without its parameters and without the zero bytes
     *  that end it, which the bundle restores when opening the filter),
     *  for size accounting. Valid while the bundle is open. */
    const uint8_t *data;
    uint64_t data_len;
    uint64_t index; /**< the member's position in name order, 0 first */
} amq_bundle_member;

/**
 * Open a bundle file. The whole file is checked before anything is trusted
 * (the container's checksum, then every member's framing, the name order
 * and the index), so that finding members later never reads out of bounds.
 * @param flags 0 (read the file into memory) or AMQ_LOAD_MMAP (map it).
 * @return AMQ_OK; AMQ_EIO; AMQ_EFORMAT (not an amq file, or an amq file
 *   holding one filter, not a bundle: the diag says which); AMQ_ECORRUPT
 *   (the diag names the member or field); AMQ_EVERSION; AMQ_ENOMEM.
 * Allocates: the file's bytes (or a mapping) and a small handle.
 */
AMQ_API int amq_bundle_open(amq_bundle **out, const char *path, unsigned flags, amq_diag *diag);

/** Members in the bundle. */
AMQ_API uint64_t amq_bundle_members(const amq_bundle *bundle);

/**
 * amq_bundle_find for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): as much of the answer as that layout
 * holds, zeros in fields this library does not have, and struct_size set.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * The rest as amq_bundle_find.
 */
AMQ_API int amq_bundle_find_sized(amq_bundle_member *out, size_t struct_size,
                                  const amq_bundle *bundle, const void *name, size_t name_len);

/**
 * Find a member by name.
 * @param out filled when found; not NULL.
 * @return 1 found, 0 no member has that name.
 * Allocates: never. Complexity: a binary search over one entry per
 * AMQ_BUNDLE_BLOCK members, then at most that many members read in turn.
 * Inline: passes the caller's sizeof to amq_bundle_find_sized, so a
 *   program keeps its layout whatever the library it runs with.
 */
static inline int amq_bundle_find(amq_bundle_member *out, const amq_bundle *bundle,
                                  const void *name, size_t name_len)
{
    return amq_bundle_find_sized(out, sizeof *out, bundle, name, name_len);
}

/**
 * amq_bundle_member_at for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): as much of the answer as that layout
 * holds, zeros in fields this library does not have, and struct_size set.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * The rest as amq_bundle_member_at.
 */
AMQ_API int amq_bundle_member_at_sized(amq_bundle_member *out, size_t struct_size,
                                       const amq_bundle *bundle, uint64_t index);

/**
 * The member at a position in name order (to list a bundle).
 * @return AMQ_OK; AMQ_EINVAL when index is not below amq_bundle_members.
 * Allocates: never. Complexity: as amq_bundle_find.
 * Inline: passes the caller's sizeof to amq_bundle_member_at_sized, so a
 *   program keeps its layout whatever the library it runs with.
 */
static inline int amq_bundle_member_at(amq_bundle_member *out, const amq_bundle *bundle,
                                       uint64_t index)
{
    return amq_bundle_member_at_sized(out, sizeof *out, bundle, index);
}

/**
 * Open the filter stored under a name, as amq_load would open it from its
 * own file (the family checks its parameters and data the same way).
 * @param out receives a filter the caller frees with amq_free; it does not
 *   depend on the bundle staying open.
 * @param diag on failure, what was wrong; may be NULL.
 * @return AMQ_OK; AMQ_ENOTFOUND (no such member); AMQ_EINVAL (the member
 *   is plain bytes); AMQ_EUNSUPPORTED (a family this build does not have);
 *   AMQ_ECORRUPT (the member's data fails its family's checks); AMQ_ENOMEM.
 * Allocates: the filter (its data is copied out of the bundle).
 */
AMQ_API int amq_bundle_open_filter(amq_filter **out, const amq_bundle *bundle, const void *name,
                                   size_t name_len, amq_diag *diag);

/** Size of the bundle file in bytes. */
AMQ_API uint64_t amq_bundle_file_bytes(const amq_bundle *bundle);

/** Close a bundle. Accepts NULL. Filters opened from it stay valid. */
AMQ_API void amq_bundle_close(amq_bundle *bundle);

/** Members per index entry in the bundles this build writes. */
#define AMQ_BUNDLE_BLOCK 32

#ifdef __cplusplus
}
#endif

#endif /* AMQ_BUNDLE_H */
