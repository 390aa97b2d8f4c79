#!/usr/bin/env python3
"""The data of docs/img/gcs-frontier.png, from amq_bench --json documents.

Each RUN.json is one invocation of

    amq_bench --keys N --runs R --filter gcs/M256,vs/fastfilter-gcs --json

and the output (stdout) is a tab-separated table in three blocks, blank
lines between them, one per series of scripts/plot-gcs-frontier.gp:

    0  amq, continuous layout: n/16, n/64, n/128 index entries
    1  amq, bucketed layout: 16, 24 (the default) and 32 keys a bucket
    2  fastfilter_cpp's GcsFilter<uint64_t, 8> (vs/fastfilter-gcs's peer)

with the columns keys, series, label (keys per index entry or per bucket),
bits per key, and the single pre-hashed query of absent keys in ns: the
median of the invocations' medians, their lowest and highest.
"""
import json
import statistics
import sys

CONTINUOUS = [("gcs/M256-N16", 16), ("gcs/M256-N64", 64), ("gcs/M256", 128)]
BUCKETED = [("gcs/M256-B16", 16), ("gcs/M256-B24", 24), ("gcs/M256-B32", 32)]
PEER = "vs/fastfilter-gcs"


def phase(workload, name):
    for p in workload["phases"]:
        if p["name"] == name:
            return p["median_ns_per_op"]
    raise SystemExit("gcs-frontier-data: %s has no phase %s" % (workload["name"], name))


def main(paths):
    if not paths:
        raise SystemExit("usage: gcs-frontier-data.py RUN.json...")
    docs = [json.load(open(p)) for p in paths]
    keys = docs[0]["config"]["keys"]
    by_name = {}
    for d in docs:
        if d["config"]["keys"] != keys:
            raise SystemExit("gcs-frontier-data: the invocations differ in keys")
        for w in d["workloads"]:
            by_name.setdefault(w["name"], []).append(w)

    def row(series, label, name, ns_phase, bits_figure):
        runs = by_name.get(name)
        if not runs:
            raise SystemExit("gcs-frontier-data: no workload %s in the documents" % name)
        ns = [phase(w, ns_phase) for w in runs]
        bits = runs[0]["figures"][bits_figure]
        print("%d\t%s\t%d\t%.3f\t%.1f\t%.1f\t%.1f" % (keys, series, label, bits,
                                                    statistics.median(ns), min(ns), max(ns)))

    print("# keys\tseries\tlabel\tbits_per_key\tns_median\tns_min\tns_max")
    for name, label in CONTINUOUS:
        row("amq-continuous", label, name, "query-hashed", "bits_per_key")
    print("\n")
    for name, label in BUCKETED:
        row("amq-bucketed", label, name, "query-hashed", "bits_per_key")
    print("\n")
    row("fastfilter-cpp", 16, PEER, "peer-absent", "peer_bits_per_key")


if __name__ == "__main__":
    main(sys.argv[1:])
