#!/bin/sh
# `amq calc`: the published example, the article's figures, every form of -p,
# the JSON output, and the error paths (stdout, stderr, exit codes).
#   calc.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

# field LABEL VALUE: the table row LABEL (the text before the value) starts
# with VALUE.
field() {
    row=$(grep -F -- "$1" "$dir/out" | head -n 1)
    case $row in
    "$1"*) value=$(printf '%s\n' "${row#"$1"}" | sed 's/^ *//') ;;
    *) value= ;;
    esac
    case $value in
    "$2" | "$2 "*) ;;
    *) fail "'$last': row '$1' is '$value', expected '$2'" ;;
    esac
}

# The article's figures.
run 0 calc -n 1000000000 -p 0.0001 && empty err && expect out "2.23 GiB" && field "k (hash functions)" 13 &&
    field "m (bits)" 19170116755 && field "bits per key" 19.17
run 0 calc -n 100000 -p 1/8192 && expect out "229 KiB" && expect out "1.88 Mbit" && field "k (hash functions)" 13

# The published example: the four relations.
run 0 calc -m 20000 -n 2000 && field "k (hash functions)" 7 && field "p (at n, m, k)" 0.00819372
run 0 calc -n 2000 -p 0.01 && field "m (bits)" 19171 && field "k (hash functions)" 7
run 0 calc -m 20000 -k 5 -p 0.01 && field "n (keys)" 2031
run 0 calc -n 2000 -m 20000 -k 5 && field "p (at n, m, k)" 0.00943093
run 0 calc --bits 20000 --capacity 2000 --hashes 5 --json && expect out '"p": 0.009430929226122474'
run 0 calc -m 19171 -p 0.01 && field "n (keys)" 2000 && field "k (hash functions)" 7

# Every spelling of the same probability gives the same answer.
run 0 calc -n 1e9 -p 1e-4 && cp "$dir/out" "$dir/sci"
for p in 0.0001 0.01% 1/10000 .0001 1e-4 0.1e-3 10e-5; do
    run 0 calc -n 1000000000 -p "$p" && { cmp -s "$dir/out" "$dir/sci" || fail "-p $p differs from -p 1e-4"; }
done
run 0 calc -n 1000000000 --fpr=0.01% && { cmp -s "$dir/out" "$dir/sci" || fail "--fpr=0.01% differs"; }

# JSON: one object with every field, parsed by Python's json module.
run 0 calc -n 1000000000 -p 0.0001 --json && empty err
if /usr/bin/python3 -c 'import json, sys; json.load(sys.stdin)' <"$dir/out" 2>"$dir/py"; then
    /usr/bin/python3 - "$dir/out" <<'EOF' || fail "JSON fields are wrong: $(cat "$dir/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert set(r) == {"n", "m", "k", "p", "actual_p", "bytes", "bits_per_key"}, r
assert r["n"] == 1000000000 and r["m"] == 19170116755 and r["k"] == 13, r
assert r["p"] == 0.0001 and abs(r["actual_p"] - 1e-4) < 1e-6, r
assert r["bytes"] == (r["m"] + 7) // 8, r
assert abs(r["bits_per_key"] - r["m"] / r["n"]) < 1e-9, r
EOF
else
    fail "--json output does not parse: $(cat "$dir/py")"
fi
run 0 calc -n 2000 -m 20000 --json && /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["k"] == 7 and r["bytes"] == 2500 and r["p"] == r["actual_p"], r' <"$dir/out" ||
    fail "JSON for -n 2000 -m 20000 is wrong: $(cat "$dir/out")"

# Errors: exit 2, nothing on stdout, and a message naming the problem.
run 2 calc -n 1000 -p 0 && empty out && expect err "-p/--fpr: '0' is not between 0 and 1"
run 2 calc -n 1000 -p 1 && expect err "'1' is not between 0 and 1"
run 2 calc -n 1000 -p 1.5 && expect err "'1.5' is not between 0 and 1"
run 2 calc -n 1000 -p 100% && expect err "'100%' is not between 0 and 1"
run 2 calc -n 1000 -p abc && expect err "-p/--fpr: 'abc' is not a number"
run 2 calc -n 1000 -p 1/0 && expect err "divides by zero"
run 2 calc -n 0 -p 0.01 && empty out && expect err "-n/--capacity: '0' is below the minimum"
run 2 calc -n 1.5 -p 0.01 && expect err "'1.5' is not a whole number"
run 2 calc -n -5 -p 0.01 && expect err "-n/--capacity: '-5'"
run 2 calc -n 1e20 -p 0.01 && expect err "'1e20' is above the maximum"
run 2 calc -n 0x10 -p 0.01 && expect err "unexpected 'x'"
run 2 calc -m 0 -n 5 && expect err "-m/--bits: '0' is below the minimum"
run 2 calc -k 0 -m 100 -n 5 && expect err "-k/--hashes: '0' is below the minimum"
run 2 calc -k 2000 -m 100 -n 5 && expect err "'2000' is above the maximum, 1024"
run 2 calc -n 1000 && empty out && expect err "only n given; also give p, or m"
run 2 calc -p 0.01 && expect err "only p given; also give n, or m"
run 2 calc -k 3 -m 1000 && expect err "only m and k given; also give n, or p"
run 2 calc && expect err "nothing given"
run 2 calc -n && expect err "option '-n' needs a value"
run 2 calc -n 10 --fpr && expect err "option '--fpr' needs a value"
run 2 calc -x && expect err "unknown option '-x'" && expect err "Try 'amq calc --help'"
run 2 calc --capacity 10 --bogus && expect err "unknown option '--bogus'"
run 2 calc --json=yes -n 10 -p 0.1 && expect err "option '--json' takes no value"
run 2 calc -n 10 -p 0.1 extra && expect err "unexpected argument 'extra'"
run 2 calc -n 1e19 -p 1e-300 && empty out && expect err "past the maximum 2^64 - 1"
run 2 calc -n 1 -m 1000000 && expect err "above the maximum, 1024"
run 2 calc -m 3 -p 0.001 && expect err "cannot hold even one key"

# Where amq's own filters differ from the textbook figures, calc says so:
# past 64 hash functions they use more bits instead; below n 2^-127 (the
# 128-bit key hash) they cannot go. Ordinary rates carry no note.
run 0 calc -n 1000 -p 1e-30 && expect out "k (hash functions)   100" &&
    expect out "note: amq's bloom and counting-bloom filters take at most 64 hash functions: they use k = 64 and m = 154127 bits" &&
    lines out 7
run 0 calc -n 1000 -p 1e-100 && expect out "note: p is below what 1000 keys hashed to 128 bits allow (n 2^-127 = 5.88e-36)" &&
    expect out "size for 1.18e-35" && expect out "k = 64 and m = 191101 bits"
run 0 calc -n 1000 -p 1e-30 --json
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["k"]==100 and len(d["notes"])==1 and "k = 64" in d["notes"][0], d' "$dir/out" ||
    fail "calc --json notes"
run 0 calc -n 1000 -p 1e-9 && lines out 6
run 0 calc -n 1000 -p 1e-9 --json && expect out '"bits_per_key": 43.133}'

# Help.
run 0 calc --help && empty err && expect out "Usage: amq calc" && expect out "Examples:" && expect out "1/8192"
run 0 calc -h && expect out "Usage: amq calc"

finish "cli calc"
