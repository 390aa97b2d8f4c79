/*
 * bench_main.c - amq_bench: amq's workloads (bench_run.c) beside the peer
 * libraries they are compared with. The peers live here and only here, so
 * the amq tool, which runs the same workloads as `amq bench`, links no
 * peer library; a peer whose Debian package is missing at configure time is
 * left out (bench/CMakeLists.txt).
 */
#include "bench.h"

#include <stddef.h>

/* clang-format off */
static const bench_workload *const peers[] = {
#ifdef AMQ_BENCH_HAVE_LIBBLOOM
    &bench_libbloom,
#endif
    NULL,
};
/* clang-format on */

int main(int argc, char **argv)
{
    return bench_main(argc, argv, "amq_bench", peers, sizeof peers / sizeof peers[0] - 1);
}
