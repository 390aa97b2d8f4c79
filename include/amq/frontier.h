/*
 * amq/frontier.h - a crawl frontier: the to-visit queue of a web crawler,
 * which enqueues a URL only the first time it is pushed.
 *
 * push(url) asks a scalable Bloom filter whether the URL was pushed before;
 * if not, the URL is added to the filter and appended to a FIFO queue, and
 * pop() returns the oldest queued URL. A URL that was enqueued is never
 * enqueued again (a Bloom filter has no false negatives). A URL never seen
 * is skipped with probability at most the configured fpr, however many URLs
 * arrive: the scalable filter adds stages as it fills, each tighter than
 * the last, so there is no "expected size" past which the rate degrades.
 *
 * Memory is bounded: the queue holds at most a configured number of bytes
 * (and, optionally, URLs) in memory and spills the rest to append-only
 * segment files in the frontier's directory, read back in order. The
 * filter's memory is separate and grows with the URLs enqueued (about 15 to
 * 30 bits per URL at fpr 1%; amq_frontier_stats_get reports it).
 *
 * Persistence is by checkpoint: amq_frontier_save makes the whole state
 * durable at once, and amq_frontier_open on the same directory resumes from
 * the last completed save, whatever happened after it (a crash, kill -9, a
 * close without saving). Relative to that checkpoint no queued URL is lost
 * and no enqueued one is enqueued again. Pushes after it are lost together
 * with their filter bits (pushing them again enqueues them); URLs popped
 * after it are queued again, so a crawler that saves after handling what it
 * popped visits every URL at least once. docs/FRONTIER.md has the details.
 *
 * URLs are byte strings of at most AMQ_FRONTIER_MAX_URL bytes, compared
 * exactly. Normalizing them is the caller's choice; amq_frontier_canonical_url
 * is an optional hook for the common RFC 3986 steps.
 *
 * Thread safety: none. One thread at a time may call into a frontier;
 * distinct frontiers (distinct directories) are independent. A directory is
 * locked while open, so a second process, or a second open in the same
 * process, is refused.
 */
#ifndef AMQ_FRONTIER_H
#define AMQ_FRONTIER_H

#include "amq/amq.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A crawl frontier; opaque. */
typedef struct amq_frontier amq_frontier;

/** The longest URL a frontier takes, in bytes (after canonicalization). */
#define AMQ_FRONTIER_MAX_URL 65536
/** The smallest memory cap in bytes: room for two URLs of the largest size. */
#define AMQ_FRONTIER_MIN_MEMORY ((uint64_t)256 * 1024)
/** The smallest segment file size in bytes. */
#define AMQ_FRONTIER_MIN_SEGMENT ((uint64_t)64 * 1024)

/**
 * A canonicalization hook: write the form of url that the frontier should
 * compare and store.
 *
 * @param out where to write the canonical URL (not NUL-terminated).
 * @param capacity bytes available at out (AMQ_FRONTIER_MAX_URL + 1 when the
 *   frontier calls it).
 * @param out_len receives the canonical URL's length; on AMQ_ERANGE, the
 *   length it needs.
 * @param url the URL as pushed; len bytes.
 * @param len its length.
 * @param user the options' canonicalize_user pointer.
 * @return AMQ_OK, or a negative code, which the push returns unchanged.
 */
typedef int (*amq_frontier_canonicalize_fn)(char *out, size_t capacity, size_t *out_len,
                                            const char *url, size_t len, void *user);

/** How a frontier is made. Initialize with amq_frontier_options_init. */
typedef struct amq_frontier_options {
    size_t struct_size; /**< the size of the layout the caller was built
                             against: set by amq_frontier_options_init; 0 = the first
                             layout (docs/CONVENTIONS.md, "Growth") */
    /* The filter: used when a directory is created, then stored in it; a
     * reopened frontier keeps the values it was created with. */
    double fpr;                /**< bound on the chance a new URL is skipped, in (0, 1);
                                    default 0.01 */
    uint64_t initial_capacity; /**< URLs in the filter's first stage; default 2^20 */
    double growth;             /**< each stage holds this times the URLs of the one
                                    before, in [1, 32768]; default 2 */
    double tightening;         /**< each stage's error is this times the one before's,
                                    in [0.5, 0.95]; default 0.9 */
    uint64_t seed;             /**< the filter's XXH3 seed; default 0 */
    /* The queue: taken from the options at every open. */
    uint64_t memory_bytes;  /**< most bytes of queued URLs held in memory (each URL
                                 takes its length + 8), at least AMQ_FRONTIER_MIN_MEMORY;
                                 default 64 MiB */
    uint64_t memory_urls;   /**< most URLs held in memory, at least 2; default
                                 UINT64_MAX (only memory_bytes limits) */
    uint64_t segment_bytes; /**< the size at which a spill file is closed and the next
                                 one begun, at least AMQ_FRONTIER_MIN_SEGMENT;
                                 default 64 MiB */
    /** Called on every pushed URL before anything else; NULL: URLs are
     *  taken as they are. The same hook must be used every time a
     *  directory is opened, or equal URLs may be told apart. */
    amq_frontier_canonicalize_fn canonicalize;
    void *canonicalize_user; /**< passed to canonicalize */
} amq_frontier_options;

/** What a frontier reports about itself. */
typedef struct amq_frontier_stats {
    size_t struct_size;        /**< the size of the caller's layout, which amq_frontier_stats_get
                                    sets (docs/CONVENTIONS.md, "Growth") */
    uint64_t pushed;           /**< pushes answered 0 or 1 */
    uint64_t enqueued;         /**< pushes answered 1 */
    uint64_t skipped;          /**< pushes answered 0: pushed before, or a false positive */
    uint64_t popped;           /**< pops answered 1 */
    uint64_t queued;           /**< URLs waiting: enqueued - popped - lost */
    uint64_t queued_in_memory; /**< of those, held in memory */
    uint64_t queued_on_disk;   /**< of those, only in segment files */
    uint64_t memory_bytes;     /**< bytes the queue's buffers take */
    uint64_t disk_bytes;       /**< bytes of the live segment files */
    uint64_t segments;         /**< live segment files */
    uint64_t filter_bytes;     /**< bytes of the filter's bits */
    double expected_fpr;       /**< the chance that the next new URL is skipped, from
                                    the filter's fill (below fpr) */
    double fpr;                /**< the bound the filter was made with */
    uint64_t generation;       /**< checkpoints completed in this directory */
    uint64_t lost;             /**< URLs enqueued that will never be popped: records
                                    of segment files found damaged (or cut off) when
                                    read back, and skipped; kept with the checkpoint */
} amq_frontier_stats;

/**
 * amq_frontier_options_init for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): the defaults in as much of it as
 * that layout holds, zeros beyond, and struct_size set.
 * @param opt the struct to fill, struct_size bytes; not NULL.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * Allocates: never. Thread safety: safe.
 */
AMQ_API void amq_frontier_options_init_sized(amq_frontier_options *opt, size_t struct_size);

/**
 * Fill options with the defaults named in amq_frontier_options.
 * @param opt the options to fill; not NULL.
 * It sets struct_size to the caller's sizeof, so the library reads the
 *   layout the caller was built against.
 * Allocates: never. Thread safety: safe.
 */
static inline void amq_frontier_options_init(amq_frontier_options *opt)
{
    amq_frontier_options_init_sized(opt, sizeof *opt);
}

/**
 * Open the frontier in a directory, creating it when needed.
 *
 * A directory that does not exist is created (its parent must exist); an
 * empty one gets a new, empty frontier, whose first checkpoint is written
 * at once. A directory holding a frontier is reopened at its last
 * checkpoint: what was pushed or popped after it is gone, segment bytes
 * written after it are cut off, and files of that later work are removed.
 * Only files the checkpoint records as the frontier's are removed (the
 * spill files made after it carry a header naming them); any other file,
 * whatever its name, is never touched. Every file is reached through the
 * directory opened here, so renaming the directory while it is open is
 * harmless: the frontier goes on in it, under its new name.
 *
 * @param out receives the frontier; NULL on failure. Not NULL.
 * @param dir the directory's path; not NULL. It is resolved to an absolute
 *   path at once.
 * @param opt the options; NULL means the defaults. Copied.
 * @param diag on failure, what went wrong and where; may be NULL.
 * @return AMQ_OK;
 *   AMQ_EINVAL: an option out of range (the message names it), dir is not
 *   a directory, or it is not empty and holds no frontier;
 *   AMQ_ECORRUPT: the frontier's files are damaged, missing or do not
 *   belong together (the message names the file and the check), including
 *   a filter file changed by another writer (the message says so);
 *   AMQ_EVERSION: a frontier written by a newer version;
 *   AMQ_EIO: a system call failed (errno tells why), including a directory
 *   already open (locked) elsewhere, in this process or another (errno
 *   EWOULDBLOCK; the message names the directory and says it is locked);
 *   AMQ_ERANGE: the filter's first stage would be too large;
 *   AMQ_ENOMEM.
 * Allocates: the frontier and its filter; queue buffers come later, as they
 *   fill. Complexity: reads the checkpoint's files but not the queued URLs
 *   (segment records are checked as they are read back).
 */
AMQ_API int amq_frontier_open(amq_frontier **out, const char *dir, const amq_frontier_options *opt,
                              amq_diag *diag);

/**
 * Push a URL: enqueue it unless the filter says it was pushed before.
 *
 * The URL is canonicalized first when the options have a hook.
 *
 * @param f the frontier; not NULL.
 * @param url the URL's bytes; may be NULL when len is 0.
 * @param len its length.
 * @param diag on failure, what went wrong; may be NULL.
 * @return 1: enqueued; 0: pushed before, or (with probability at most fpr)
 *   a new URL the filter mistakes for one, not enqueued; or, with nothing
 *   changed:
 *   AMQ_EINVAL: longer than AMQ_FRONTIER_MAX_URL (before or after the hook);
 *   any code the hook returns;
 *   AMQ_EIO: spilling to a segment file failed (the disk is full, ...);
 *   AMQ_ERANGE: the filter cannot grow another stage (64 stages), 2^64 - 1
 *   pushes are counted already, or a spill needs a new segment file and
 *   every segment id has been used;
 *   AMQ_ENOMEM.
 * Allocates: queue buffers up to the memory cap, filter stages as it
 *   grows. Complexity: a hash and a probe of every filter stage; a spill
 *   writes up to the memory cap's worth at once, then nothing for as long.
 */
AMQ_API int amq_frontier_push(amq_frontier *f, const char *url, size_t len, amq_diag *diag);

/**
 * Pop the oldest queued URL.
 *
 * @param buffer receives the URL and a terminating NUL; not NULL unless
 *   capacity is 0. A buffer of AMQ_FRONTIER_MAX_URL + 1 bytes always fits.
 * @param capacity its size in bytes.
 * @param len receives the URL's length (without the NUL) on 1 and on
 *   AMQ_ERANGE, else 0; not NULL.
 * @param f the frontier; not NULL.
 * @param diag on failure, what went wrong; may be NULL.
 * A record of a segment file found damaged when read back (its check
 * fails, its length is out of bounds, the file was cut short) is skipped:
 * pop returns the next sound URL, and the skipped ones are counted in the
 * stats' lost. Damage never blocks the URLs behind it.
 *
 * @return 1: popped; 0: the queue is empty; or, with nothing changed:
 *   AMQ_ERANGE: capacity is less than *len + 1 (the URL stays queued);
 *   AMQ_EIO: reading a segment file failed; AMQ_ENOMEM.
 * Allocates: the read-ahead buffer, once. Complexity: O(1), and one read of
 *   up to 4 MiB of a segment file per such chunk of URLs.
 */
AMQ_API int amq_frontier_pop(char *buffer, size_t capacity, size_t *len, amq_frontier *f,
                             amq_diag *diag);

/**
 * Save a checkpoint: make the queue, the filter and the counters durable,
 * atomically. After a crash, amq_frontier_open resumes from the last save
 * that returned AMQ_OK (or from the one being made, if the crash came after
 * its commit point).
 *
 * URLs held in memory are appended to a segment file; segment files are
 * fsynced; the filter is written to a new file; then a manifest naming them
 * replaces the old one (the commit point), and files the old checkpoint
 * needed and the new one does not are removed.
 *
 * @param f the frontier; not NULL.
 * @param diag on failure, what went wrong; may be NULL.
 * @return AMQ_OK; or, the previous checkpoint staying the one a reopen finds
 *   and the frontier usable: AMQ_EIO (errno tells why); AMQ_ERANGE (the
 *   checkpoint count is at 2^64 - 1, or spilling needs a new segment and
 *   no segment id is left); AMQ_ECORRUPT (a file of the directory was
 *   found damaged; diag says which); AMQ_ENOMEM.
 * Allocates: a copy of the segment table. Complexity: writes the whole
 *   filter and the URLs held in memory since the last spill.
 */
AMQ_API int amq_frontier_save(amq_frontier *f, amq_diag *diag);

/**
 * amq_frontier_stats_get for a caller of the layout of struct_size bytes (a binding
 * that defines the struct itself): as much of the answer as that layout
 * holds, zeros in fields this library does not have, and struct_size set.
 * @param struct_size the caller's sizeof; at least sizeof(size_t).
 * The rest as amq_frontier_stats_get.
 */
AMQ_API void amq_frontier_stats_get_sized(amq_frontier_stats *out, size_t struct_size,
                                          const amq_frontier *f);

/**
 * Describe a frontier.
 * @param out receives the figures; not NULL.
 * @param f the frontier; not NULL.
 * Allocates: never. Complexity: O(filter stages).
 * Inline: passes the caller's sizeof to amq_frontier_stats_get_sized, so a
 *   program keeps its layout whatever the library it runs with.
 */
static inline void amq_frontier_stats_get(amq_frontier_stats *out, const amq_frontier *f)
{
    amq_frontier_stats_get_sized(out, sizeof *out, f);
}

/**
 * Close a frontier without saving: what changed since the last
 * amq_frontier_save is discarded (the directory stays at that checkpoint).
 * Spill files made since then are removed. Releases the directory's lock.
 * @param f the frontier; may be NULL.
 */
AMQ_API void amq_frontier_close(amq_frontier *f);

/**
 * The provided canonicalization hook (optional: pass it as the options'
 * canonicalize): RFC 3986 normalizations that never change what a URL
 * points to. Public so that a crawler passes it as the hook, or calls it
 * from a hook of its own before its own rules (dropping session
 * parameters, say), and canonicalizes URLs as the frontier does.
 *
 *   - the scheme is lower-cased: "HTTP://" -> "http://";
 *   - the host is lower-cased, except inside percent-escapes; an IPv6
 *     literal "[...]" likewise; the userinfo ("user:pass@") is kept as is;
 *   - an empty port ("host:") is dropped, and so is the scheme's default
 *     port, 80 for http and 443 for https ("080" counts as 80);
 *   - an empty path becomes "/" for http and https ("http://a.b?q" ->
 *     "http://a.b/?q");
 *   - the fragment ("#..." to the end) is dropped;
 *   - the path and query are kept byte for byte: no percent-escape is
 *     decoded or re-cased, no "." or ".." segment removed.
 *
 * @param out receives the canonical URL (not NUL-terminated); not NULL
 *   unless capacity is 0. The result is at most len + 1 bytes.
 * @param capacity bytes at out.
 * @param out_len receives its length, or on AMQ_ERANGE the length needed;
 *   not NULL.
 * @param url the URL; len bytes; may be NULL when len is 0.
 * @param len its length.
 * @param user unused (the hook's user pointer); may be NULL.
 * @return AMQ_OK; AMQ_EINVAL: not "scheme://authority..." (a relative URL, a
 *   scheme with characters RFC 3986 does not allow, an IPv6 literal without
 *   its ']', a port that is not digits); AMQ_ERANGE: capacity too small.
 * Allocates: never. Thread safety: safe.
 */
AMQ_API int amq_frontier_canonical_url(char *out, size_t capacity, size_t *out_len, const char *url,
                                       size_t len, void *user);

/**
 * Whether path names a frontier's filter file, and if so the frontier's
 * directory. For a program that changes saved filters (amq add and amq
 * remove) and must leave a frontier's alone: the manifest records the
 * filter file's checksum, so a frontier whose filter another writer
 * changed refuses to open (amq_frontier_open, AMQ_ECORRUPT).
 *
 * The answer is 1 when the last component of path is a name
 * amq_frontier_save gives a filter file, "filter-" then 16 lowercase hex
 * digits then ".amq", and the directory holding it has the entry
 * amq_frontier_open takes for a manifest, "frontier.amq" (a symbolic link
 * followed, as open follows it). Only names are looked at, no file is
 * read: the filter file need not exist, any generation counts (one left
 * by an interrupted save is the frontier's too), and a damaged manifest
 * counts as a sound one. Every other path answers 0, the manifest's own
 * among them: it is not a filter file (and amq_load already refuses it,
 * naming it a frontier's manifest).
 *
 * @param directory receives, on 1, the frontier's directory as path names
 *   it, NUL-terminated: path up to its last '/', "." when it has none, "/"
 *   for a file in the root. On any other answer it holds "" (when capacity
 *   is not 0). Not NULL unless capacity is 0; strlen(path) + 2 bytes
 *   always fit.
 * @param capacity its size in bytes.
 * @param path the path, absolute or relative to the working directory;
 *   may be NULL (AMQ_EINVAL).
 * @param diag on failure, what went wrong; may be NULL.
 * @return 1: a frontier's filter; 0: not (the empty path, a path ending in
 *   '/', another name, no manifest beside it, a directory part that does
 *   not exist or is not a directory); or
 *   AMQ_EINVAL: path is NULL, or directory is NULL and capacity is not 0;
 *   AMQ_ERANGE: a frontier's filter, but its directory and a NUL do not fit
 *   in capacity bytes;
 *   AMQ_EIO: whether the manifest is there cannot be told (its stat failed
 *   with another error than ENOENT or ENOTDIR, such as EACCES; errno tells
 *   which).
 * Allocates: never. Thread safety: safe; it takes no frontier, and a
 *   frontier saving at the same time never removes its manifest.
 */
AMQ_API int amq_frontier_is_filter(char *directory, size_t capacity, const char *path,
                                   amq_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* AMQ_FRONTIER_H */
