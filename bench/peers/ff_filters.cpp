/*
 * ff_filters.cpp - adapters for FastFilter/fastfilter_cpp's filters
 * (bench_peers.h), each with the template arguments its own benchmark
 * (benchmarks/bulk-insert-and-query.cc) uses and its SimpleMixSplit hash
 * (murmur64 finalizer of key + a random seed):
 *
 *   split-block   SimdBlockFilterFixed<SimpleMixSplit>(n): n / 24 buckets of
 *                 256 bits (10.67 bits/key), 8 bits set per key (AVX2)
 *   bloom10       BloomFilter<uint64_t, 10, true, SimpleMixSplit>: 10 bits per
 *                 key, k = 7, the branchless query ("Bloom10")
 *   counting10    CountingBloomFilter<uint64_t, 10, true, SimpleMixSplit>:
 *                 10 counters of 4 bits per key, k = 7 ("CountingBloom10")
 *   cuckoo12      CuckooFilter<uint64_t, 12, SingleTable, SimpleMixSplit>:
 *                 12-bit fingerprints, 4 per bucket, a power of two of buckets
 *                 ("Cuckoo12")
 *   gcs           GcsFilter<uint64_t, 8, SimpleMixSplit>: Golomb-Rice coded
 *                 8-bit fingerprints in buckets ("GCS"), built from all keys
 *
 * The headers are fastfilter_cpp's own, included as system headers (their
 * warnings are theirs); all in this one file, as their benchmark includes
 * them in one, since some define functions that are not inline. Each key's
 * add or query is a call to a function kept out of line, as the peers'
 * filterapi.h keeps Contain (CONTAIN_ATTRIBUTES).
 */
#include "bench_peers.h"

/* What the peers' headers use without including (their benchmark's
 * sources include it first). */
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloom.h"
#include "counting_bloom.h"
#include "cuckoofilter.h"
#include "gcs.h"
#include "simd-block-fixed-fpp.h"

#define PEER_NOINLINE __attribute__((noinline))

namespace
{

using SplitBlock = SimdBlockFilterFixed<hashing::SimpleMixSplit>;
using Bloom10 = bloomfilter::BloomFilter<uint64_t, 10, true, hashing::SimpleMixSplit>;
using Counting10 =
    counting_bloomfilter::CountingBloomFilter<uint64_t, 10, true, hashing::SimpleMixSplit>;
using Cuckoo12 =
    cuckoofilter::CuckooFilter<uint64_t, 12, cuckoofilter::SingleTable, hashing::SimpleMixSplit>;
using Gcs8 = gcsfilter::GcsFilter<uint64_t, 8, hashing::SimpleMixSplit>;

/* ---- one key: the out-of-line calls ---------------------------------- */

PEER_NOINLINE bool add_one(SplitBlock *f, uint64_t key)
{
    f->Add(key);
    return true;
}
PEER_NOINLINE bool contains_one(const SplitBlock *f, uint64_t key)
{
    return f->Find(key);
}

PEER_NOINLINE bool add_one(Bloom10 *f, uint64_t key)
{
    return f->Add(key) == bloomfilter::Ok;
}
PEER_NOINLINE bool contains_one(const Bloom10 *f, uint64_t key)
{
    return f->Contain(key) == bloomfilter::Ok;
}

PEER_NOINLINE bool add_one(Counting10 *f, uint64_t key)
{
    return f->Add(key) == counting_bloomfilter::Ok;
}
PEER_NOINLINE bool contains_one(const Counting10 *f, uint64_t key)
{
    return f->Contain(key) == counting_bloomfilter::Ok;
}
PEER_NOINLINE bool remove_one(Counting10 *f, uint64_t key)
{
    return f->Remove(key) == counting_bloomfilter::Ok;
}

PEER_NOINLINE bool add_one(Cuckoo12 *f, uint64_t key)
{
    return f->Add(key) == cuckoofilter::Ok;
}
PEER_NOINLINE bool contains_one(const Cuckoo12 *f, uint64_t key)
{
    return f->Contain(key) == cuckoofilter::Ok;
}
PEER_NOINLINE bool remove_one(Cuckoo12 *f, uint64_t key)
{
    return f->Delete(key) == cuckoofilter::Ok;
}

PEER_NOINLINE bool contains_one(const Gcs8 *f, uint64_t key)
{
    return f->Contain(key) == gcsfilter::Ok;
}

/* ---- the adapter calls, for any of them --------------------------------- */

template <typename F> void *create(size_t n)
{
    try {
        return new F(n);
    } catch (...) {
        return nullptr;
    }
}

template <> void *create<SplitBlock>(size_t n)
{
    try {
        /* Its benchmark's ConstructFromAddCount: the argument is n. */
        return new SplitBlock(static_cast<int>(n));
    } catch (...) {
        return nullptr;
    }
}

template <typename F> uint64_t add_all(void *filter, const uint64_t *keys, size_t n)
{
    F *f = static_cast<F *>(filter);
    uint64_t refused = 0;
    for (size_t i = 0; i < n; i++)
        refused += !add_one(f, keys[i]);
    return refused;
}

template <typename F> uint64_t count(const void *filter, const uint64_t *keys, size_t n)
{
    const F *f = static_cast<const F *>(filter);
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += contains_one(f, keys[i]);
    return hits;
}

template <typename F> uint64_t remove_all(void *filter, const uint64_t *keys, size_t n)
{
    F *f = static_cast<F *>(filter);
    uint64_t misses = 0;
    for (size_t i = 0; i < n; i++)
        misses += !remove_one(f, keys[i]);
    return misses;
}

template <typename F> size_t bytes(const void *filter)
{
    return static_cast<size_t>(static_cast<const F *>(filter)->SizeInBytes());
}

template <typename F> void destroy(void *filter)
{
    delete static_cast<F *>(filter);
}

/* GcsFilter is built by AddAll from a std::vector: the keys are copied into
 * one (about 1 ns a key, inside the timed build). */
void *gcs_build(const uint64_t *keys, size_t n)
{
    try {
        std::vector<uint64_t> v(keys, keys + n);
        Gcs8 *f = new Gcs8(n);
        f->AddAll(v, 0, n);
        return f;
    } catch (...) {
        return nullptr;
    }
}

} // namespace

extern "C" {

const bench_peer_ops bench_peer_ff_split_block = {
    "fastfilter_cpp SimdBlockFilterFixed",
    create<SplitBlock>,
    add_all<SplitBlock>,
    nullptr,
    count<SplitBlock>,
    nullptr,
    bytes<SplitBlock>,
    destroy<SplitBlock>,
};

const bench_peer_ops bench_peer_ff_bloom10 = {
    "fastfilter_cpp BloomFilter<10, branchless>",
    create<Bloom10>,
    add_all<Bloom10>,
    nullptr,
    count<Bloom10>,
    nullptr,
    bytes<Bloom10>,
    destroy<Bloom10>,
};

const bench_peer_ops bench_peer_ff_counting10 = {
    "fastfilter_cpp CountingBloomFilter<10>",
    create<Counting10>,
    add_all<Counting10>,
    nullptr,
    count<Counting10>,
    remove_all<Counting10>,
    bytes<Counting10>,
    destroy<Counting10>,
};

const bench_peer_ops bench_peer_ff_cuckoo12 = {
    "fastfilter_cpp CuckooFilter<12>",
    create<Cuckoo12>,
    add_all<Cuckoo12>,
    nullptr,
    count<Cuckoo12>,
    remove_all<Cuckoo12>,
    bytes<Cuckoo12>,
    destroy<Cuckoo12>,
};

const bench_peer_ops bench_peer_ff_gcs = {
    "fastfilter_cpp GcsFilter<8>",
    nullptr,
    nullptr,
    gcs_build,
    count<Gcs8>,
    nullptr,
    bytes<Gcs8>,
    destroy<Gcs8>,
};

} // extern "C"
