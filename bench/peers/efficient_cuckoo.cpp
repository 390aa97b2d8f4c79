/*
 * efficient_cuckoo.cpp - the adapter for efficient/cuckoofilter (the
 * original cuckoo filter of Fan et al., 2014; bench_peers.h):
 * CuckooFilter<uint64_t, 12> with its defaults, SingleTable (4 slots per
 * bucket, a power of two of buckets, doubled when n would fill it past
 * 96%) and TwoIndependentMultiplyShift (a randomly seeded 128-bit
 * multiply-add), 500 kicks and a victim slot.
 *
 * fastfilter_cpp's cuckoo filter (ff_filters.cpp) is a fork of this code
 * with the same namespace, class and header names, so this file renames
 * efficient's namespace before including its headers (as system headers):
 * the two template instances then never merge at link time.
 */
#include "bench_peers.h"

#include <cstdint>
#include <cstring>
#include <iostream>
#include <new>
#include <sstream>
#include <string>

#define cuckoofilter efficient_cuckoofilter
#include "cuckoofilter.h"
#undef cuckoofilter

#define PEER_NOINLINE __attribute__((noinline))

namespace
{

using Cuckoo12 = efficient_cuckoofilter::CuckooFilter<uint64_t, 12>;

PEER_NOINLINE bool add_one(Cuckoo12 *f, uint64_t key)
{
    return f->Add(key) == efficient_cuckoofilter::Ok;
}
PEER_NOINLINE bool contains_one(const Cuckoo12 *f, uint64_t key)
{
    return f->Contain(key) == efficient_cuckoofilter::Ok;
}
PEER_NOINLINE bool remove_one(Cuckoo12 *f, uint64_t key)
{
    return f->Delete(key) == efficient_cuckoofilter::Ok;
}

void *create(size_t n)
{
    try {
        return new Cuckoo12(n);
    } catch (...) {
        return nullptr;
    }
}

uint64_t add_all(void *filter, const uint64_t *keys, size_t n)
{
    Cuckoo12 *f = static_cast<Cuckoo12 *>(filter);
    uint64_t refused = 0;
    for (size_t i = 0; i < n; i++)
        refused += !add_one(f, keys[i]);
    return refused;
}

uint64_t count(const void *filter, const uint64_t *keys, size_t n)
{
    const Cuckoo12 *f = static_cast<const Cuckoo12 *>(filter);
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += contains_one(f, keys[i]);
    return hits;
}

uint64_t remove_all(void *filter, const uint64_t *keys, size_t n)
{
    Cuckoo12 *f = static_cast<Cuckoo12 *>(filter);
    uint64_t misses = 0;
    for (size_t i = 0; i < n; i++)
        misses += !remove_one(f, keys[i]);
    return misses;
}

size_t bytes(const void *filter)
{
    return static_cast<size_t>(static_cast<const Cuckoo12 *>(filter)->SizeInBytes());
}

void destroy(void *filter)
{
    delete static_cast<Cuckoo12 *>(filter);
}

} // namespace

extern "C" const bench_peer_ops bench_peer_efficient_cuckoo12 = {
    "efficient/cuckoofilter CuckooFilter<12>",
    create,
    add_all,
    nullptr,
    count,
    remove_all,
    bytes,
    destroy,
};
