/*
 * random.h - secret random bytes from the operating system, for the seeds
 * and keys of hashers a spec asks for with seed=random or key=random
 * (amq_hasher_random). Nothing else in the library needs unpredictable
 * numbers: the cuckoo walk's choices and the fuse filter's attempt seeds
 * are reproducible on purpose.
 */
#ifndef AMQ_RANDOM_H
#define AMQ_RANDOM_H

#include "amq/amq.h"

#include <stdbool.h>
#include <stddef.h>

/* Fill out with len bytes from the operating system's generator: getrandom(2)
 * where the system has it, else (or when the kernel lacks the call) the
 * device /dev/urandom. AMQ_OK, or AMQ_EIO with errno set and a message
 * naming what failed; out is then unspecified. Never blocks once the
 * system's generator is initialised. */
int amq__random_bytes(void *out, size_t len, amq_diag *diag);

/* As amq__random_bytes, for the tests: with use_getrandom false the system
 * call is skipped, and device names the file read instead of /dev/urandom. */
int amq__random_bytes_from(void *out, size_t len, bool use_getrandom, const char *device,
                           amq_diag *diag);

#endif /* AMQ_RANDOM_H */
