#!/bin/sh
# The amq tool end to end with the cuckoo filter: build with the cuckoo
# options, query (present keys, -v for absent ones, -c), remove (removed
# keys gone but for false positives, absent keys reported and the file left
# byte for byte as it was), add, info (fingerprint bits, bucket size, load;
# text and JSON), growth, semi-sorted buckets, a full filter refusing keys
# (exit 2, the file unchanged, the message naming cause and remedy),
# repeated keys stored once (they never fill the filter) unless
# --count-duplicates, and the options a cuckoo filter refuses.
#   cuckoo.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 20000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 20000 | sed 's/^/other-/' >"$dir/others.txt"
head -n 10000 "$dir/keys.txt" >"$dir/first.txt"
tail -n 10000 "$dir/keys.txt" >"$dir/second.txt"

# Without -n the keys are read first and made distinct exactly, so each is
# stored once and no key is mistaken for another.
run 0 build -t cuckoo --fingerprint-bits 12 --bucket-size 4 --max-kicks 500 \
    -o "$dir/f.amq" "$dir/keys.txt" && empty err
run 0 query -c "$dir/f.amq" "$dir/keys.txt" && expect out 20000
run 0 query "$dir/f.amq" "$dir/first.txt" && lines out 10000
# f = 12, b = 4 at a load near 0.93: about 0.18%, 36 of 20000.
"$amq" query -c "$dir/f.amq" "$dir/others.txt" >"$dir/out"
fp=$(cat "$dir/out")
if [ "$fp" -lt 10 ] || [ "$fp" -gt 80 ]; then
    fail "$fp false positives of 20000 at f = 12"
fi
# -v prints the lines certainly absent: none of the keys, all other lines
# but the false positives.
run 1 query -v "$dir/f.amq" "$dir/keys.txt" && empty out
run 0 query -v "$dir/f.amq" "$dir/others.txt" && lines out $((20000 - fp))

# info: the cuckoo figures, in the table and in JSON, agreeing with each
# other: the load is keys over slots, the size f bits per slot, the
# expected FPR 1 - (1 - 1/(2^f - 1))^(2 b load).
run 0 info "$dir/f.amq" && expect out "type             cuckoo" &&
    expect out "capacity         20000" && expect out "keys added       20000" &&
    expect out "fingerprint bits 12" && expect out "bucket size      4" &&
    expect out "load             0.9" && expect out "stash            empty"
run 0 info --json "$dir/f.amq"
/usr/bin/python3 -c '
import json, math, sys
d = json.load(open(sys.argv[1]))
slots = d["buckets"] * d["bucket_size"]
assert d["family"] == "cuckoo" and d["count"] == 20000, d
assert d["fingerprint_bits"] == 12 and d["bucket_size"] == 4 and d["tables"] == 1, d
assert d["max_kicks"] == 500 and d["growth"] == 2 and d["stash"] == "empty", d
assert abs(d["load"] - 20000 / slots) < 1e-9 and 0.85 < d["load"] < 0.97, d
assert math.ceil(slots * 12 / 8) <= d["size_bytes"] <= math.ceil(slots * 12 / 8) + 64, d
expected = 1 - (1 - 1 / 4095) ** (2 * 4 * d["load"])
assert abs(d["expected_fpr"] - expected) < 1e-9 * expected, (d, expected)
' "$dir/out" || fail "info --json"

# remove: the removed keys are absent but for false positives; the others
# all stay.
run 0 remove "$dir/f.amq" "$dir/first.txt" && empty err
run 0 query -c "$dir/f.amq" "$dir/second.txt" && expect out 10000
"$amq" query -c "$dir/f.amq" "$dir/first.txt" >"$dir/out"
left=$(cat "$dir/out")
[ "$left" -le 40 ] || fail "$left of 10000 removed keys still answer maybe"
run 0 info --json "$dir/f.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["count"]==10000, d' \
    "$dir/out" || fail "count after removing half the keys"

remove_absent_keys "$dir/f.amq" "$dir/others.txt" "$dir/second.txt"
run 0 query -c "$dir/f.amq" "$dir/second.txt" && expect out 9900

# add puts keys back.
run 0 add "$dir/f.amq" "$dir/first.txt" && empty err
head -n 100 "$dir/second.txt" | "$amq" add "$dir/f.amq" || fail "add from standard input"
run 0 query -c "$dir/f.amq" "$dir/keys.txt" && expect out 20000

# A filter too small and without growth: the add that does not fit is
# reported as the filter being full, exit 2, and the file is unchanged; a
# build that does not fit writes nothing.
head -n 1000 "$dir/keys.txt" >"$dir/thousand.txt"
run 0 build -t cuckoo -n 1000 --growth 0 -o "$dir/small.amq" "$dir/thousand.txt"
cp "$dir/small.amq" "$dir/small-before.amq"
run 2 add "$dir/small.amq" "$dir/second.txt" && expect err "filter is full" &&
    expect err "small.amq is unchanged"
cmp -s "$dir/small.amq" "$dir/small-before.amq" || fail "a refused add changed the file"
run 0 query -c "$dir/small.amq" "$dir/thousand.txt" && expect out 1000
run 2 build -t cuckoo -n 1000 --growth 0 -o "$dir/over.amq" "$dir/keys.txt" &&
    expect err "filter is full" && expect err "a larger -n" && expect err "--growth 2"
[ -e "$dir/over.amq" ] && fail "a build that did not fit wrote a file"

# With growth the same keys fit: tables are chained, every key is found,
# and keys come out again.
run 0 build -t cuckoo -n 1000 --growth 2 --count-duplicates -o "$dir/grown.amq" "$dir/keys.txt"
run 0 query -c "$dir/grown.amq" "$dir/keys.txt" && expect out 20000
run 0 info --json "$dir/grown.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["tables"]>=4 and d["growth"]==2 and d["count"]==20000, d' \
    "$dir/out" || fail "info --json of a grown filter"
run 0 remove "$dir/grown.amq" "$dir/first.txt"
run 0 query -c "$dir/grown.amq" "$dir/second.txt" && expect out 10000

# Defaults: sized by the keys read, f from p = 0.01 (10 bits at b = 4);
# -p picks f (13 bits for 0.001).
run 0 build -t cuckoo -o "$dir/default.amq" "$dir/keys.txt"
run 0 info --json "$dir/default.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["capacity"]==20000 and d["fingerprint_bits"]==10 and d["bucket_size"]==4 and d["target_fpr"]==0.01, d' \
    "$dir/out" || fail "info --json of a default cuckoo filter"
run 0 build -t cuckoo -n 20000 -p 0.001 --bucket-size 2 -o "$dir/narrow.amq" "$dir/keys.txt"
run 0 info "$dir/narrow.amq" && expect out "fingerprint bits 12" && expect out "bucket size      2"

# Semi-sorted buckets: the same keys in one bit per slot less (13-bit
# fingerprints in 12 bits), every key found, removals work.
run 0 build -t cuckoo -n 20000 --fingerprint-bits 13 --semi-sort --count-duplicates \
    -o "$dir/semi.amq" "$dir/keys.txt"
run 0 info "$dir/semi.amq" && expect out "layout           semi-sorted" &&
    expect out "fingerprint bits 13"
run 0 info --json "$dir/semi.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["layout"]=="semi-sorted" and d["size_bytes"]==(d["buckets"]*48+7)//8, d' \
    "$dir/out" || fail "info --json of a semi-sorted cuckoo filter"
run 0 query -c "$dir/semi.amq" "$dir/keys.txt" && expect out 20000
run 0 remove "$dir/semi.amq" "$dir/first.txt"
run 0 query -c "$dir/semi.amq" "$dir/second.txt" && expect out 10000

# Repeated keys: ten copies of one line, and every key twice, fit a filter
# made for them (once each); adding keys already present again and again
# never fills it; the default grows past -n (--growth 2).
yes line | head -n 10 >"$dir/ten.txt"
run 0 build -t cuckoo -n 1000000 -o "$dir/ten.amq" "$dir/ten.txt" && empty err
run 0 info --json "$dir/ten.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["count"]==1, d' \
    "$dir/out" || fail "ten copies of a line stored more than once"
cat "$dir/keys.txt" "$dir/keys.txt" >"$dir/twice.txt"
run 0 build -t cuckoo -n 20000 --growth 0 -o "$dir/twice.amq" "$dir/twice.txt" && empty err
run 0 build -t cuckoo --growth 0 -o "$dir/twice-all.amq" "$dir/twice.txt" && empty err
run 0 info --json "$dir/twice-all.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["count"]==20000 and d["capacity"]==20000, d' \
    "$dir/out" || fail "a build from every key twice is not made for the distinct keys"
for round in 1 2 3 4 5 6; do
    run 0 add "$dir/twice.amq" "$dir/keys.txt" || break
done
run 0 query -c "$dir/twice.amq" "$dir/keys.txt" && expect out 20000
run 0 build -t cuckoo -n 1000 -o "$dir/grows.amq" "$dir/keys.txt" && empty err
run 0 query -c "$dir/grows.amq" "$dir/keys.txt" && expect out 20000
# Counting copies on purpose: one key fits 2b = 8 times, and the error
# says why a larger filter would not help.
run 2 build -t cuckoo --growth 0 --count-duplicates -n 1000 -o "$dir/copies.amq" "$dir/ten.txt" &&
    expect err "ten.txt:10: the cuckoo filter is full" && expect err "at most 8 times" &&
    expect err "leave it out to store each key once"
run 2 build -t cuckoo --growth 0 --count-duplicates -o "$dir/copies.amq" "$dir/ten.txt" &&
    expect err "leave --count-duplicates out"
[ -e "$dir/copies.amq" ] && fail "a build that did not fit wrote a file"
run 2 build -t bloom --count-duplicates -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "--count-duplicates applies to cuckoo, not bloom"
run 0 build -t bloom -o "$dir/b.amq" "$dir/keys.txt"
run 2 add --count-duplicates "$dir/b.amq" "$dir/keys.txt" &&
    expect err "--count-duplicates applies to cuckoo filters, not bloom"
run 2 remove --count-duplicates "$dir/grows.amq" "$dir/keys.txt" &&
    expect err "unknown option '--count-duplicates'"
# Ten more copies of the key it holds: a table takes 2b + 1 = 9, and a
# growing filter does not double a table that is full of one key's copies
# (1 key in a million slots), so the add is refused and the file unchanged.
run 2 add --count-duplicates "$dir/ten.amq" "$dir/ten.txt" &&
    expect err "ten.txt:9: the cuckoo filter cannot grow" &&
    expect err "full of copies of a single key" && expect err "ten.amq is unchanged"
run 0 info --json "$dir/ten.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["count"]==1 and d["tables"]==1, d' \
    "$dir/out" || fail "a refused add --count-duplicates changed the filter"
head -n 8 "$dir/ten.txt" >"$dir/eight.txt"
run 0 add --count-duplicates "$dir/ten.amq" "$dir/eight.txt" && empty err
run 0 info --json "$dir/ten.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["count"]==9 and d["tables"]==1, d' \
    "$dir/out" || fail "add --count-duplicates did not store each copy"

# The options a cuckoo filter refuses, by name.
run 2 build -t cuckoo --layout split -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--layout' for cuckoo"
run 2 build -t cuckoo --counter-bits 8 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--counter-bits' for cuckoo"
run 2 build -t cuckoo --semi-sort --bucket-size 2 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "semi-sort needs a bucket size of 4"
run 2 build -t cuckoo --semi-sort --fingerprint-bits 17 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "semi-sort needs fingerprint bits in 5..16"
run 2 build -t cuckoo -k 3 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--hashes' (-k) for cuckoo"
run 2 build -t cuckoo --bucket-size 3 -o "$dir/x.amq" "$dir/keys.txt" && expect err "bucket-size"
run 2 build -t cuckoo --fingerprint-bits 3 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "fingerprint-bits"
run 2 build -t cuckoo --fingerprint-bits 33 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "fingerprint-bits"
run 2 build -t cuckoo --growth 17 -o "$dir/x.amq" "$dir/keys.txt" && expect err "growth"
run 2 build -t cuckoo --growth 3 -o "$dir/x.amq" "$dir/keys.txt" && expect err "growth"
run 2 build -t cuckoo --max-kicks 0 -o "$dir/x.amq" "$dir/keys.txt" && expect err "max-kicks"
run 2 build -t cuckoo -p 0.001 --fingerprint-bits 12 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "fingerprint bits"
run 2 build -t bloom --fingerprint-bits 12 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--fingerprint-bits' for bloom"
[ -e "$dir/x.amq" ] && fail "a refused build wrote a file"

# A damaged file is refused.
size=$(wc -c <"$dir/f.amq")
cp "$dir/f.amq" "$dir/damaged.amq"
printf 'X' | dd of="$dir/damaged.amq" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run 2 remove "$dir/damaged.amq" "$dir/keys.txt" && expect err "corrupt"
run 2 query "$dir/damaged.amq" "$dir/keys.txt" && expect err "corrupt"

finish "cli cuckoo"
