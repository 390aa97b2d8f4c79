/*
 * file_image.h - a whole file's bytes, read into memory or mapped
 * (file_image.c), which the container parser (format.h) then checks.
 */
#ifndef AMQ_FILE_IMAGE_H
#define AMQ_FILE_IMAGE_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A file's bytes, read into memory or mapped. */
typedef struct amq__file_image {
    uint8_t *data; /* NULL for an empty file; read: an aligned block (core/alloc.h) */
    size_t len;
    bool mapped; /* munmap rather than amq__aligned_free */
} amq__file_image;

/* Read (use_mmap false) or map read-only (true) a whole file. An empty file
 * gives an empty image (data NULL, len 0). Pipes and devices are read to
 * their end even when mapping was asked for.
 * Returns AMQ_OK, AMQ_EIO (open/read/mmap failed; errno kept), AMQ_ECORRUPT
 * (the file changed size while being read), AMQ_ENOMEM. */
int amq__file_image_open(amq__file_image *img, const char *path, bool use_mmap, amq_diag *diag);

/* Release an image (amq__aligned_free or munmap). Accepts an empty image. */
void amq__file_image_close(amq__file_image *img);

/* Read up to len bytes from fd at offset (offset < 0: at the file
 * position), short only at the end of the file, resuming after EINTR.
 * Returns the count read, or -1 with errno set. */
int64_t amq__read_full(int fd, void *buf, size_t len, int64_t offset);

#endif /* AMQ_FILE_IMAGE_H */
