#!/bin/sh
# `amq bench`: the tool runs the benchmark program amq_bench with its
# arguments, found beside amq, then in amq's bench/, then on $PATH, and
# says so clearly when there is none. When this build has amq_bench
# ($AMQ_TEST_BENCH): the standard workloads at a small n, as JSON (every
# filter type `amq --help` lists has a workload that ran, with timed phases
# and its figures) and as a table; --filter, --list and the usage errors.
#   bench.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

bench=${AMQ_TEST_BENCH:-}

# Where amq looks: copies of amq alone, with PATH reduced to one directory.
mkdir -p "$dir/alone" "$dir/beside" "$dir/path"
cp "$amq" "$dir/alone/amq"
cp "$amq" "$dir/beside/amq"
printf '#!/bin/sh\necho "beside: $*"\nexit 7\n' >"$dir/beside/amq_bench"
printf '#!/bin/sh\necho "on PATH: $*"\nexit 5\n' >"$dir/path/amq_bench"
chmod +x "$dir/beside/amq_bench" "$dir/path/amq_bench"

last="amq bench (no amq_bench anywhere)"
PATH="$dir/empty" "$dir/alone/amq" bench --keys 1000 >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
empty out
expect err "amq: bench: the benchmark program amq_bench is not installed"
# (amq names the directories /proc/self/exe gives: $dir with its links resolved)
expect err "/alone, " && expect err "/alone/bench and \$PATH"
expect err "-DAMQ_BUILD_BENCH=ON"

last="amq bench (amq_bench on PATH)"
PATH="$dir/path" "$dir/alone/amq" bench --keys 1000 "two words" >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 5 ] || fail "$last exited $code, expected amq_bench's 5"
expect out "on PATH: --keys 1000 two words" && empty err

last="amq bench (amq_bench beside amq and on PATH)"
PATH="$dir/path" "$dir/beside/amq" bench --list >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 7 ] || fail "$last exited $code, expected amq_bench's 7"
expect out "beside: --list" && empty err

last="amq bench (amq_bench not executable)"
chmod -x "$dir/beside/amq_bench"
"$dir/beside/amq" bench --list >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 2 ] || fail "$last exited $code, expected 2"
expect err "amq: bench: cannot run " && expect err "/beside/amq_bench: Permission denied"

if [ -z "$bench" ]; then
    finish "cli bench (without amq_bench)"
fi

# An installed tree: amq and amq_bench side by side, and nothing on PATH.
mkdir -p "$dir/bin"
cp "$amq" "$bench" "$dir/bin/"
last="amq bench --list (installed side by side)"
PATH="$dir/empty" "$dir/bin/amq" bench --list >"$dir/out" 2>"$dir/err"
code=$?
[ "$code" -eq 0 ] || fail "$last exited $code, expected 0"
"$bench" --list >"$dir/list"
cmp -s "$dir/out" "$dir/list" || fail "amq bench --list differs from amq_bench --list"

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
ran = {w["name"]: w for w in d["workloads"]}
for w in d["workloads"]:
    assert w["status"] == "ok", w
    assert w["n"] == 10000 and w["phases"], w
    for phase in w["phases"]:
        assert phase["ops"] > 0 and phase["median_ns_per_op"] > 0, (w["name"], phase)
        assert phase["min_ns_per_op"] <= phase["median_ns_per_op"] <= phase["max_ns_per_op"]
    if w["family"]:
        assert w["figures"]["false_negatives"] == 0, w
        assert 0 <= w["figures"]["fpr"] < 0.05, w
    # A workload whose peer ran has the ratio of each phase the two share.
    peer = ran.get(w["peer"])
    if peer:
        shared = set(p["name"] for p in peer["phases"])
        for phase in w["phases"]:
            if phase["name"] in shared:
                assert phase["ratio_to_peer"] > 0, (w["name"], phase)
families = set(w["family"] for w in d["workloads"])
missing = [t for t in sys.argv[2].split() if t not in families]
assert not missing, "no workload for %s" % missing
assert not families - set(sys.argv[2].split()) - {None}, families
assert any(w["group"] == "hash" for w in d["workloads"]), names
for w in d["workloads"]:
    if w["group"] == "peer":
        assert w["family"] is None and w["peer"] is None, w
' "$dir/out" "$types" || fail "amq bench --json: $(head -c 300 "$dir/out")"

# The table, for the workloads a pattern selects.
run 0 bench --keys 2000 --runs 1 --filter fuse/8,hash/md5 && empty err &&
    expect out "amq bench " && expect out "n = 2000 keys" && expect out "fuse/8 " &&
    expect out "query-absent" && expect out "hash/md5" && expect out "bits_per_key="
grep -q "cuckoo/" "$dir/out" && fail "--filter fuse/8,hash/md5 ran a cuckoo workload"
run 0 bench --list && expect out "cuckoo/f12" && expect out "gcs/M256"

run 2 bench --filter no-such-workload && expect err "no workload matches 'no-such-workload'"
run 2 bench --keys 0 && expect err "--keys"
run 2 bench --runs && expect err "amq bench: option '--runs' needs a value"
run 2 bench extra && expect err "unexpected argument 'extra'"

finish "cli bench"
