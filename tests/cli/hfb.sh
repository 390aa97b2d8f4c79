#!/bin/sh
# The amq tool end to end with hash-free Bloom banks: build from IDs of 32
# hex digits (any case, CRLF lines), query (present IDs, -v, -c), info (the
# banks, the compound FPR, the stored size; text and JSON agreeing), lines
# that are not IDs refused naming the file and line, --hash md5 for
# arbitrary lines, the non-random warning, a chosen --bank-bits and -p, and
# what an hfb filter refuses (add, merge, the hashing options, banks past
# 2^32 bits, a rate its banks cannot reach).
#   hfb.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

# Deterministic random IDs: MD5 digests of "doc-N" (the set) and
# "other-N" (never in it).
ids() { # PREFIX COUNT
    /usr/bin/python3 -c '
import hashlib, sys
for i in range(int(sys.argv[2])):
    print(hashlib.md5(("%s-%d" % (sys.argv[1], i)).encode()).hexdigest())
' "$1" "$2"
}
ids doc 20000 >"$dir/ids.txt"
ids other 20000 >"$dir/others.txt"

# One sparse, Rice-coded bank (the default len, chosen for memory too,
# takes several dense raw banks: see the default below).
run 0 build -t hfb --bank-bits 21 -o "$dir/f.amq" "$dir/ids.txt" && empty err
run 0 query -c "$dir/f.amq" "$dir/ids.txt" && expect out 20000
run 1 query -v "$dir/f.amq" "$dir/ids.txt" && empty out
# p = 0.01 by default; the banks reach at most that: about 190 of 20000.
"$amq" query -c "$dir/f.amq" "$dir/others.txt" >"$dir/out"
fp=$(cat "$dir/out")
if [ "$fp" -lt 100 ] || [ "$fp" -gt 280 ]; then
    fail "$fp false positives of 20000 at p = 0.01"
fi
run 0 query -v "$dir/f.amq" "$dir/others.txt" && lines out $((20000 - fp))
# The lines printed are the lines as written.
head -n 3 "$dir/ids.txt" >"$dir/three.txt"
run 0 query "$dir/f.amq" "$dir/three.txt" && lines out 3 && expect out "$(head -n 1 "$dir/ids.txt")"
# Upper case and CRLF line ends are the same IDs.
tr 'a-f' 'A-F' <"$dir/three.txt" | sed 's/$/\r/' >"$dir/upper.txt"
run 0 query -c "$dir/f.amq" "$dir/upper.txt" && expect out 3

# info: the banks, in the table and in JSON, agreeing: the expected FPR is
# the product of the listed banks' fills, the stored bits per ID the sum of
# the banks' stored bits over the IDs.
run 0 info "$dir/f.amq" && expect out "type             hfb" && expect out "ids              raw" &&
    expect out "keys added       20000" && expect out "bank0 encoding   golomb" &&
    expect out "hash             xxh3 seed=0"
run 0 info --json "$dir/f.amq"
/usr/bin/python3 -c '
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["family"] == "hfb" and d["count"] == 20000 and d["ids"] == "raw", d
assert d["banks"] == d["banks_listed"] and d["banks_total"] == 128 // d["bank_bits"], d
product = math.prod(d["bank%d_fill" % i] for i in range(d["banks"]))
assert abs(product - d["expected_fpr"]) <= 1e-12 * product and product <= 0.01, d
stored = sum(d["bank%d_stored_bits" % i] for i in range(d["banks"]))
assert stored <= d["stored_bits_per_id"] * 20000 < stored + 8 * d["banks"], d
assert d["size_bytes"] == d["banks"] * 2 ** d["bank_bits"] // 8, d
assert d["bank0_slice"] == "%d+%d" % (int(d["bank0_slice"].split("+")[0]), d["bank_bits"]), d
assert "warning" not in d and d["deviation"] < 6, d
' "$dir/out" || fail "info --json"

# The default len keeps the banks in memory within 1.5 times their file.
run 0 build -t hfb -o "$dir/default.amq" "$dir/ids.txt" && empty err
run 0 info --json "$dir/default.amq"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["size_bytes"] * 8 <= 1.5 * d["stored_bits_per_id"] * d["count"], d
' "$dir/out" || fail "info --json of a default hfb filter"

# Lines that are not IDs: refused with the file and line, nothing written.
printf '%s\nnot-an-id\n' "$(head -n 1 "$dir/ids.txt")" >"$dir/bad.txt"
run 2 build -t hfb -o "$dir/x.amq" "$dir/bad.txt" &&
    expect err "bad.txt:2: an hfb ID is 32 hex digits"
run 2 query "$dir/f.amq" "$dir/bad.txt" && expect err "bad.txt:2: an hfb ID is 32 hex digits"
head -n 1 "$dir/ids.txt" | cut -c 1-30 >"$dir/short.txt"
run 2 query "$dir/f.amq" "$dir/short.txt" && expect err "short.txt:1: an hfb ID is 32 hex digits"
printf '%s00\n' "$(head -n 1 "$dir/ids.txt")" >"$dir/long.txt"
run 2 build -t hfb -o "$dir/x.amq" "$dir/long.txt" &&
    expect err "long.txt:1: an hfb ID is 32 hex digits"
printf '0123456789abcdef0123456789abcdeg\n' >"$dir/letter.txt"
run 2 build -t hfb -o "$dir/x.amq" "$dir/letter.txt" &&
    expect err "letter.txt:1: an hfb ID is 32 hex digits"
[ -e "$dir/x.amq" ] && fail "a refused build wrote a file"

# --hash md5: any lines, hashed into IDs; a query hashes them the same way.
seq 1 5000 | sed 's/^/path\/to\/file-/' >"$dir/paths.txt"
run 0 build -t hfb --hash md5 -p 0.001 -o "$dir/md5.amq" "$dir/paths.txt" && empty err
run 0 query -c "$dir/md5.amq" "$dir/paths.txt" && expect out 5000
run 0 info "$dir/md5.amq" && expect out "ids              md5" && expect out "hash             md5" &&
    expect out "target FPR       0.001"

# IDs that are small integers: built and saved, with a warning; info shows it.
seq 1 5000 | awk '{ printf "%032x\n", $1 }' >"$dir/small.txt"
run 0 build -t hfb -o "$dir/small.amq" "$dir/small.txt" &&
    expect err "warning: ids look non-random" && lines err 1
run 0 query -c "$dir/small.amq" "$dir/small.txt" && expect out 5000
run 0 info "$dir/small.amq" && expect out "warning          ids look non-random"
run 0 info --json "$dir/small.amq" && expect out '"warning": "ids look non-random"'

# A chosen bank size and rate: several banks of 2^18 bits.
run 0 build -t hfb --bank-bits 18 -p 1e-4 -o "$dir/banks.amq" "$dir/ids.txt"
run 0 info --json "$dir/banks.amq"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bank_bits"] == 18 and d["banks_total"] == 7 and 2 <= d["banks"] <= 7, d
fills = [d["bank%d_fill" % i] for i in range(d["banks_listed"])]
assert fills == sorted(fills) and d["expected_fpr"] <= 1e-4, d
' "$dir/out" || fail "info --json of an hfb filter with bank-bits 18"
run 0 query -c "$dir/banks.amq" "$dir/ids.txt" && expect out 20000

# What an hfb filter refuses.
run 2 build -t hfb --hash xxh3 -o "$dir/x.amq" "$dir/ids.txt" && expect err "not hash=xxh3"
run 2 build -t hfb --hash siphash --key 000102030405060708090a0b0c0d0e0f -o "$dir/x.amq" \
    "$dir/ids.txt" && expect err "hash=md5"
run 2 build -t hfb --seed 1 -o "$dir/x.amq" "$dir/ids.txt" && expect err "hfb takes no seed"
run 2 build -t hfb -n 100 -o "$dir/x.amq" "$dir/ids.txt" &&
    expect err "-n does not apply to hfb"
run 2 build -t hfb --bank-bits 33 -o "$dir/x.amq" "$dir/ids.txt" &&
    expect err "option '--bank-bits': '33' is above the maximum, 32"
run 2 build -t hfb --bank-bits 8 -o "$dir/x.amq" "$dir/ids.txt" &&
    expect err "bank-bits=8: all 16 banks together" && expect err "would reach it"
[ -e "$dir/x.amq" ] && fail "a refused build wrote a file"
cp "$dir/f.amq" "$dir/before.amq"
run 2 add "$dir/f.amq" "$dir/three.txt" && expect err "cannot add"
cmp -s "$dir/f.amq" "$dir/before.amq" || fail "a refused add changed the file"
run 2 merge -o "$dir/x.amq" "$dir/f.amq" "$dir/before.amq" && expect err "cannot be merged"

# A damaged file is refused.
size=$(wc -c <"$dir/f.amq")
cp "$dir/f.amq" "$dir/damaged.amq"
printf 'X' | dd of="$dir/damaged.amq" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run 2 query "$dir/damaged.amq" "$dir/ids.txt" && expect err "corrupt"

finish "cli hfb"
