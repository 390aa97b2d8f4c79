#!/bin/sh
# `amq bench`: the standard workloads at a small n, as JSON (every filter
# type `amq --help` lists has a workload that ran, with timed phases and its
# figures) and as a table; --filter, --list and the usage errors.
#   bench.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

types=$("$amq" --help | sed -n 's/^ *types: *//p')
[ -n "$types" ] || fail "amq --help lists no types"

run 0 bench --keys 10000 --runs 1 --json && empty err
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["keys"] == 10000 and d["config"]["runs"] == 1, d["config"]
assert d["machine"]["amq_version"], d["machine"]
names = [w["name"] for w in d["workloads"]]
assert len(names) == len(set(names)), names
for w in d["workloads"]:
    assert w["status"] == "ok", w
    assert w["n"] == 10000 and w["phases"], w
    for phase in w["phases"]:
        assert phase["ops"] > 0 and phase["median_ns_per_op"] > 0, (w["name"], phase)
        assert phase["min_ns_per_op"] <= phase["median_ns_per_op"] <= phase["max_ns_per_op"]
    if w["family"]:
        assert w["figures"]["false_negatives"] == 0, w
        assert 0 <= w["figures"]["fpr"] < 0.05, w
families = set(w["family"] for w in d["workloads"])
missing = [t for t in sys.argv[2].split() if t not in families]
assert not missing, "no workload for %s" % missing
assert not families - set(sys.argv[2].split()) - {None}, families
assert any(w["group"] == "hash" for w in d["workloads"]), names
assert not any(w["group"] == "peer" for w in d["workloads"]), "amq bench runs no peer"
' "$dir/out" "$types" || fail "amq bench --json: $(head -c 300 "$dir/out")"

# The table, for the workloads a pattern selects.
run 0 bench --keys 2000 --runs 1 --filter fuse/8,hash/md5 && empty err &&
    expect out "amq bench " && expect out "n = 2000 keys" && expect out "fuse/8 " &&
    expect out "query-absent" && expect out "hash/md5" && expect out "bits_per_key="
grep -q "cuckoo/" "$dir/out" && fail "--filter fuse/8,hash/md5 ran a cuckoo workload"
run 0 bench --list && expect out "cuckoo/f12" && expect out "gcs/M256"

run 2 bench --filter no-such-workload && expect err "no workload matches 'no-such-workload'"
run 2 bench --keys 0 && expect err "--keys"
run 2 bench --runs && expect err "needs a value"
run 2 bench extra && expect err "unexpected argument 'extra'"

finish "cli bench"
