/*
 * bench_main.c - amq_bench: amq's workloads (bench_run.c) beside the peer
 * libraries they are compared with. The peers live in this program alone
 * (the amq tool links none: `amq bench` runs this program); a peer whose
 * Debian package is missing at configure time is left out
 * (bench/CMakeLists.txt), and the public peers timed pair by pair beside
 * amq (bench/peers/) are in only when the build is pointed at their
 * sources (-DAMQ_PEERS_DIR).
 *
 * The program names itself by argv[0]: `amq bench` runs it as "amq bench"
 * (tools/cmd_bench.c), so its usage and messages name the command typed.
 * Standard output is flushed and closed at the end, and a failure (a full
 * disk, a closed descriptor) is an error, exit status 2, as in the amq
 * tool.
 */
#include "bench.h"
#ifdef AMQ_BENCH_HAVE_PEERS
#include "bench_peers.h"
#endif

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* clang-format off */
static const bench_workload *const peers[] = {
#ifdef AMQ_BENCH_HAVE_LIBBLOOM
    &bench_libbloom,
#endif
#ifdef AMQ_BENCH_HAVE_PEERS
    &bench_vs_ff_split_block,
    &bench_vs_ff_bloom10,
    &bench_vs_ff_counting,
    &bench_vs_ff_counting_delete,
    &bench_vs_ff_cuckoo12,
    &bench_vs_efficient_cuckoo12,
    &bench_vs_ff_gcs,
    &bench_vs_xor_fuse8,
    &bench_vs_xor_fuse16,
#endif
    NULL,
};
/* clang-format on */

/* argv[0] without its directory, or "amq_bench" when there is none. */
static const char *program_name(const char *argv0)
{
    if (!argv0 || !*argv0)
        return "amq_bench";
    const char *slash = strrchr(argv0, '/');
    return slash && slash[1] ? slash + 1 : argv0;
}

/* Flush and close standard output; returns status, or 2 after saying why
 * the output was lost. A write failure that bench_main reported already
 * (status 2) is not reported again, and a standard output closed before
 * the program started (EBADF) and never written to is no error. */
static int close_stdout(const char *program, int status)
{
    bool failed_before = ferror(stdout) != 0;
    int flushed = fflush(stdout);
    int flush_errno = errno;
    int closed = fclose(stdout);
    int close_errno = errno;
    if (failed_before && status == 2)
        return status;
    int reason = flushed != 0                          ? flush_errno
                 : failed_before                       ? 0
                 : closed != 0 && close_errno != EBADF ? close_errno
                                                       : -1;
    if (reason < 0)
        return status;
    fprintf(stderr, "%s: writing standard output%s%s\n", program, reason ? ": " : " failed",
            reason ? strerror(reason) : "");
    return 2;
}

int main(int argc, char **argv)
{
    const char *program = program_name(argc > 0 ? argv[0] : NULL);
    int status = bench_main(argc, argv, program, peers, sizeof peers / sizeof peers[0] - 1);
    return close_stdout(program, status);
}
