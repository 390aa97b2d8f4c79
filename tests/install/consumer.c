/* A program that uses an installed amq: built by tests/install/run.sh with
 * `cc consumer.c $(pkg-config --cflags --libs amq)` and through find_package. */
#include <amq/amq.h>
#include <amq/calc.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    if (strcmp(amq_version(), AMQ_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s, library %s\n", AMQ_VERSION_STRING, amq_version());
        return 1;
    }
    uint64_t m = 0;
    if (amq_calc_optimal_m(&m, 2000, 0.01, NULL) != AMQ_OK || m != 19171) {
        fprintf(stderr, "amq_calc_optimal_m gave %llu, expected 19171\n", (unsigned long long)m);
        return 1;
    }
    amq_hasher hasher;
    amq_hasher_xxh3(&hasher, 1);
    if (amq_hash64(&hasher, "key", 3) == amq_hash64(&hasher, "kez", 3))
        return 1;
    printf("amq %s: ok (%s)\n", amq_version(), amq_strerror(AMQ_ECORRUPT));
    return 0;
}
