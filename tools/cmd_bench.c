/*
 * cmd_bench.c - `amq bench [--filter PATTERN] [--keys N] [--runs R]
 * [--json]`: the standard workloads of bench/ (every filter type's insert
 * and query passes, the key hashes), timed and shown as a table or JSON.
 *
 * The workloads and their runner are bench/'s own, linked in as the
 * amq_bench_core library: this command and the amq_bench program run the
 * same code. amq_bench adds the peer libraries (libbloom); the tool links
 * none, so its Bloom workloads are shown without a peer ratio.
 */
#include "cli.h"

#include "bench.h"

int cli_bench(int argc, char **argv)
{
    return bench_main(argc, argv, "amq bench", NULL, 0);
}
