#!/bin/sh
# The amq tool end to end with binary fuse filters: build fuse8 and fuse16
# (3- and 4-wise), query (present keys, -v for absent ones, -c, the false
# positives near 2^-8), info (the shape in the table and in JSON agreeing
# with each other), duplicate and empty input, p accepted down to the fixed
# rate and refused below it, the options a fuse filter refuses, add, remove
# and merge refused, and a damaged file refused.
#   fuse.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 20000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 20000 | sed 's/^/other-/' >"$dir/others.txt"
head -n 10000 "$dir/keys.txt" >"$dir/first.txt"

run 0 build -t fuse8 -o "$dir/f8.amq" "$dir/keys.txt" && empty err
run 0 query -c "$dir/f8.amq" "$dir/keys.txt" && expect out 20000
run 0 query "$dir/f8.amq" "$dir/first.txt" && lines out 10000
# 20000 absent lines at 2^-8: 78 expected, sigma 8.8.
"$amq" query -c "$dir/f8.amq" "$dir/others.txt" >"$dir/out"
fp=$(cat "$dir/out")
if [ "$fp" -lt 40 ] || [ "$fp" -gt 120 ]; then
    fail "$fp false positives of 20000 at 2^-8"
fi
run 1 query -v "$dir/f8.amq" "$dir/keys.txt" && empty out
run 0 query -v "$dir/f8.amq" "$dir/others.txt" && lines out $((20000 - fp))

# info: the table and JSON; the array is (segment count + arity - 1)
# segments, one byte per slot, and the FPR is 2^-8 whatever the keys.
run 0 info "$dir/f8.amq" && expect out "type             fuse8" &&
    expect out "capacity         20000" && expect out "keys added       20000" &&
    expect out "fingerprint bits 8" && expect out "arity            3" &&
    expect out "expected FPR     0.00390625" && expect out "attempts         1"
run 0 info --json "$dir/f8.amq"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["family"] == "fuse8" and d["count"] == 20000 and d["capacity"] == 20000, d
assert d["fingerprint_bits"] == 8 and d["arity"] == 3, d
L, c = d["segment_length"], d["segment_count"]
assert L & (L - 1) == 0 and d["array_length"] == (c + 2) * L, d
assert d["size_bytes"] == d["array_length"], d
assert abs(d["bits_per_key"] - 8 * d["size_bytes"] / 20000) < 1e-9, d
assert d["bits_per_key"] < 10.5, d
assert d["expected_fpr"] == 2 ** -8 and d["target_fpr"] == 2 ** -8, d
assert len(d["seed"]) == 16 and d["attempts"] >= 1, d
' "$dir/out" || fail "info --json of fuse8"

# fuse16, 4-wise, with p: two bytes per slot, a false positive or two at
# most, p kept as the target.
run 0 build -t fuse16 --arity 4 -p 0.001 -o "$dir/f16.amq" "$dir/keys.txt" && empty err
# -n does not apply: a static filter is sized to its keys.
run 2 build -t fuse16 -n 5 -o "$dir/n.amq" "$dir/keys.txt" && expect err "-n does not apply to fuse16"
[ ! -e "$dir/n.amq" ] || fail "build -t fuse16 -n wrote a file"
run 0 query -c "$dir/f16.amq" "$dir/keys.txt" && expect out 20000
"$amq" query -c "$dir/f16.amq" "$dir/others.txt" >"$dir/out"
[ "$(cat "$dir/out")" -le 5 ] || fail "$(cat "$dir/out") false positives of 20000 at 2^-16"
run 0 info --json "$dir/f16.amq"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["family"] == "fuse16" and d["count"] == 20000, d
assert d["fingerprint_bits"] == 16 and d["arity"] == 4, d
assert d["array_length"] == (d["segment_count"] + 3) * d["segment_length"], d
assert d["size_bytes"] == 2 * d["array_length"], d
assert d["expected_fpr"] == 2 ** -16 and d["target_fpr"] == 0.001, d
' "$dir/out" || fail "info --json of fuse16"

# Duplicate lines are stored once; an empty input makes an empty filter.
cat "$dir/keys.txt" "$dir/first.txt" "$dir/keys.txt" >"$dir/repeated.txt"
run 0 build -t fuse8 -o "$dir/repeated.amq" "$dir/repeated.txt"
run 0 info "$dir/repeated.amq" && expect out "keys added       20000"
run 0 query -c "$dir/repeated.amq" "$dir/keys.txt" && expect out 20000
: >"$dir/empty.txt"
run 0 build -t fuse16 -o "$dir/empty.amq" "$dir/empty.txt"
run 0 info "$dir/empty.amq" && expect out "keys added       0"
head -n 100 "$dir/keys.txt" >"$dir/hundred.txt"
run 1 query "$dir/empty.amq" "$dir/hundred.txt" && empty out
# An empty fuse8 filter answers "no" to every key (its zero slots are the
# fingerprint of one key in 256).
run 0 build -t fuse8 -o "$dir/empty8.amq" "$dir/empty.txt"
run 1 query "$dir/empty8.amq" "$dir/keys.txt" && empty out

# p down to the fixed rate is accepted, below it refused, naming the rate;
# options of other families are refused by name.
run 0 build -t fuse8 -p 0.00390625 -o "$dir/p.amq" "$dir/first.txt"
run 2 build -t fuse8 -p 0.001 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "fuse8's false-positive rate is fixed at 2^-8" && expect err "fuse16's is 2^-16"
run 2 build -t fuse16 -p 1e-6 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "fixed at 2^-16"
run 2 build -t fuse8 --arity 5 -o "$dir/x.amq" "$dir/keys.txt" && expect err "arity"
run 2 build -t fuse8 --fingerprint-bits 16 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--fingerprint-bits' for fuse8"
run 2 build -t fuse16 -k 3 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--hashes' (-k) for fuse16"
run 2 build -t fuse8 --growth 2 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--growth' for fuse8"
run 2 build -t bloom --arity 3 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--arity' for bloom"
[ -e "$dir/x.amq" ] && fail "a refused build wrote a file"

# A static filter takes no keys, gives none back, merges with nothing;
# the file is left as it was.
cp "$dir/f8.amq" "$dir/before.amq"
run 2 add "$dir/f8.amq" "$dir/others.txt" && expect err "cannot add keys"
run 2 remove "$dir/f8.amq" "$dir/first.txt" && expect err "cannot remove keys"
run 2 merge -o "$dir/merged.amq" "$dir/f8.amq" "$dir/f8.amq" && expect err "cannot be merged"
cmp -s "$dir/f8.amq" "$dir/before.amq" || fail "a refused change altered the file"

# A damaged file is refused.
size=$(wc -c <"$dir/f8.amq")
cp "$dir/f8.amq" "$dir/damaged.amq"
printf 'X' | dd of="$dir/damaged.amq" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run 2 query "$dir/damaged.amq" "$dir/keys.txt" && expect err "corrupt"
run 2 info "$dir/damaged.amq" && expect err "corrupt"

finish "cli fuse"
