/*
 * random.c - secret seeds and keys from the operating system.
 *
 * A filter whose hasher is secret cannot be attacked with keys chosen in
 * advance to collide in it (docs/SECURITY.md): the spec's seed=random and
 * key=random, and amq_hasher_random, take its seed or SipHash key from the
 * kernel's generator. getrandom(2) first - no file descriptor, works in a
 * chroot without /dev - and /dev/urandom where the call is missing (a
 * kernel before 3.17, or a system without it). Both draw from the same
 * cryptographic generator; getrandom waits only until it is first seeded,
 * at boot. A failure of both is an error: a filter is never given a
 * predictable seed in place of the secret one asked for.
 */
#define _DEFAULT_SOURCE /* getrandom's declaration on older C libraries */
#include "core/random.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__) && defined(__has_include)
#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define AMQ__HAVE_GETRANDOM 1
#endif
#endif
#ifndef AMQ__HAVE_GETRANDOM
#define AMQ__HAVE_GETRANDOM 0
#endif

/* getrandom(2) for all len bytes: 0, or the errno of the failure. */
static int from_getrandom(unsigned char *out, size_t len)
{
#if AMQ__HAVE_GETRANDOM
    size_t done = 0;
    while (done < len) {
        ssize_t got = getrandom(out + done, len - done, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        done += (size_t)got;
    }
    return 0;
#else
    (void)out;
    (void)len;
    return ENOSYS;
#endif
}

/* Read len bytes from device: 0, or the errno of the failure (EIO for a
 * device that ends early). */
static int from_device(unsigned char *out, size_t len, const char *device)
{
    int fd;
    do
        fd = open(device, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return errno;
    size_t done = 0;
    int error = 0;
    while (done < len) {
        ssize_t got = read(fd, out + done, len - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            error = got < 0 ? errno : EIO;
            break;
        }
        done += (size_t)got;
    }
    close(fd);
    return error;
}

int amq__random_bytes_from(void *out, size_t len, bool use_getrandom, const char *device,
                           amq_diag *diag)
{
    int call_error = use_getrandom ? from_getrandom(out, len) : ENOSYS;
    if (call_error == 0)
        return AMQ_OK;
    int device_error = from_device(out, len, device);
    if (device_error == 0)
        return AMQ_OK;
    memset(out, 0, len);
    int status = amq__fail(diag, AMQ_EIO,
                           "cannot draw a random seed from the operating system: getrandom: %s; "
                           "%s: %s",
                           use_getrandom ? strerror(call_error) : "not used", device,
                           strerror(device_error));
    errno = device_error;
    return status;
}

int amq__random_bytes(void *out, size_t len, amq_diag *diag)
{
    return amq__random_bytes_from(out, len, true, "/dev/urandom", diag);
}

int amq_hasher_random(amq_hasher *out, amq_hash_kind kind, amq_diag *diag)
{
    if (!out)
        return amq__fail(diag, AMQ_EINVAL, "amq_hasher_random: out is NULL");
    uint8_t key[16];
    int status;
    switch (kind) {
    case AMQ_HASH_XXH3:
        status = amq__random_bytes(key, 8, diag);
        if (status != AMQ_OK)
            return status;
        amq_hasher_xxh3(out, amq__load_u64le(key));
        return AMQ_OK;
    case AMQ_HASH_SIPHASH:
        status = amq__random_bytes(key, sizeof key, diag);
        if (status != AMQ_OK)
            return status;
        amq_hasher_siphash(out, key);
        memset(key, 0, sizeof key);
        return AMQ_OK;
    case AMQ_HASH_MD5:
        return amq__fail(diag, AMQ_EINVAL, "md5 has no seed or key to draw at random");
    default:
        return amq__fail(diag, AMQ_EINVAL, "unknown hash kind %d", (int)kind);
    }
}
