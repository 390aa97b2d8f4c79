#!/bin/sh
# The amq tool end to end with the cuckoo filter: build with the cuckoo
# options, query (present keys, -v for absent ones, -c), remove (removed
# keys gone but for false positives, absent keys reported and the file left
# byte for byte as it was), add, info (fingerprint bits, bucket size, load;
# text and JSON), growth, semi-sorted buckets, a full filter refusing keys
# (exit 2, the file unchanged, the message naming the limit reached and
# the remedy), repeated keys stored as copies (b / 2 in the slots, the rest
# counted: one key's copies never fill the filter) and removed one copy a
# remove, --add-once (each key once, the file marked, remove refused), and
# the options a cuckoo filter refuses.
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
    expect err "filter is full" && expect err "found no free slot" && expect err "a larger -n" &&
    expect err "--growth 2"
[ -e "$dir/over.amq" ] && fail "a build that did not fit wrote a file"
# A growing filter names the limit it reached: growth 1 chains tables of
# one size, and the 33rd is refused (the most a filter chains is 32).
run 0 build -t cuckoo -n 10 --growth 1 -o "$dir/chain.amq" /dev/null
cp "$dir/chain.amq" "$dir/chain-before.amq"
run 2 add "$dir/chain.amq" "$dir/keys.txt" && expect err "the cuckoo filter is full: its 32 tables" &&
    expect err "the most a filter chains" && expect err "chain.amq is unchanged"
cmp -s "$dir/chain.amq" "$dir/chain-before.amq" || fail "a refused add changed the file"
run 2 build -t cuckoo -n 10 --growth 1 -o "$dir/over.amq" "$dir/keys.txt" &&
    expect err "its 32 tables, the most a filter chains"
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

# Repeated keys: every copy is stored (b / 2 = 2 of a key in its slots,
# the rest counted), so ten copies of one line count 10 and never fill a
# filter; every key twice fits a filter made for the copies; each remove
# takes one copy away; the default grows past -n (--growth 2).
yes line | head -n 10 >"$dir/ten.txt"
run 0 build -t cuckoo -n 1000000 -o "$dir/ten.amq" "$dir/ten.txt" && empty err
json() {
    run 0 info --json "$1"
    /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert eval(sys.argv[2]), d' \
        "$dir/out" "$2" || fail "$3"
}
json "$dir/ten.amq" 'd["count"] == 10 and d["counted_copies"] == 8 and d["tables"] == 1' \
    "ten copies of a line are not ten copies held"
run 0 info "$dir/ten.amq" && expect out "keys added       10" &&
    expect out "adds             every copy: a key added k times is removed by k removes"
[ "$(od -An -tu4 -j8 -N4 "$dir/ten.amq" | tr -d ' ')" = 1 ] &&
    [ "$(od -An -tu4 -j20 -N4 "$dir/ten.amq" | tr -d ' ')" = 0 ] ||
    fail "a file not marked add-once is not container version 1 without flags"
# Nine removes leave it maybe, the tenth makes it no, an eleventh finds it
# absent.
head -n 1 "$dir/ten.txt" >"$dir/one.txt"
cp "$dir/ten.amq" "$dir/ten-removed.amq"
for copy in 1 2 3 4 5 6 7 8 9; do
    run 0 remove "$dir/ten-removed.amq" "$dir/one.txt" && empty err || break
done
run 0 query -c "$dir/ten-removed.amq" "$dir/one.txt" && expect out 1
json "$dir/ten-removed.amq" 'd["count"] == 1 and d["counted_copies"] == 0' \
    "nine removes of ten copies did not leave one"
run 0 remove "$dir/ten-removed.amq" "$dir/one.txt" && empty err
run 1 query -c "$dir/ten-removed.amq" "$dir/one.txt" && expect out 0
run 1 remove "$dir/ten-removed.amq" "$dir/one.txt" && expect err "one.txt:1: not in the filter"
# Ten copies in one remove take all ten away.
cp "$dir/ten.amq" "$dir/ten-removed.amq"
run 0 remove "$dir/ten-removed.amq" "$dir/ten.txt" && empty err
run 1 query -c "$dir/ten-removed.amq" "$dir/one.txt" && expect out 0
json "$dir/ten-removed.amq" 'd["count"] == 0 and d["counted_copies"] == 0' \
    "removing ten copies left some"
# However often one key is added it takes b / 2 slots: a filter of fixed
# size made for 1000 keys takes a thousand copies of one line and then
# 1000 other keys.
yes line | head -n 1000 >"$dir/copies1000.txt"
run 0 build -t cuckoo -n 1000 --growth 0 -o "$dir/hot.amq" "$dir/copies1000.txt" && empty err
run 0 add "$dir/hot.amq" "$dir/thousand.txt" && empty err
json "$dir/hot.amq" 'd["count"] == 2000 and d["counted_copies"] == 998 and d["tables"] == 1' \
    "a thousand copies of a key crowded out other keys"
run 0 query -c "$dir/hot.amq" "$dir/thousand.txt" && expect out 1000
cat "$dir/keys.txt" "$dir/keys.txt" >"$dir/twice.txt"
# Copies that must share two buckets crowd a table (about 87% of its
# slots, not 95%): -n for 40,000 such lines is 45,000, as a build that
# reads its keys first makes it.
run 0 build -t cuckoo -n 45000 --growth 0 -o "$dir/twice.amq" "$dir/twice.txt" && empty err
json "$dir/twice.amq" 'd["count"] == 40000 and d["tables"] == 1' "every key twice is not 40000 copies"
run 0 query -c "$dir/twice.amq" "$dir/keys.txt" && expect out 20000
# A filter of fixed size made for the distinct keys has no room for their
# second copies (each takes a slot): the add is refused, the file unchanged.
run 0 build -t cuckoo -n 20000 --growth 0 -o "$dir/once-each.amq" "$dir/keys.txt" && empty err
cp "$dir/once-each.amq" "$dir/once-each-before.amq"
run 2 add "$dir/once-each.amq" "$dir/keys.txt" && expect err "the cuckoo filter is full" &&
    expect err "found no free slot" && expect err "once-each.amq is unchanged"
cmp -s "$dir/once-each.amq" "$dir/once-each-before.amq" || fail "a refused add changed the file"
run 0 build -t cuckoo --growth 0 -o "$dir/twice-all.amq" "$dir/twice.txt" && empty err
json "$dir/twice-all.amq" 'd["count"] == 40000 and d["capacity"] == 45000' \
    "a build from every key twice is not made for the copies its slots store"
run 0 remove "$dir/twice-all.amq" "$dir/keys.txt"
run 0 query -c "$dir/twice-all.amq" "$dir/keys.txt" && expect out 20000
run 0 remove "$dir/twice-all.amq" "$dir/keys.txt"
json "$dir/twice-all.amq" 'd["count"] == 0' "two removes of each key left copies"
run 0 build -t cuckoo -n 20000 -o "$dir/again.amq" "$dir/keys.txt" && empty err
for round in 1 2 3 4 5 6; do
    run 0 add "$dir/again.amq" "$dir/keys.txt" || break
done
run 0 query -c "$dir/again.amq" "$dir/keys.txt" && expect out 20000
json "$dir/again.amq" 'd["count"] == 140000' "seven adds of each key are not seven copies"
run 0 build -t cuckoo -n 1000 -o "$dir/grows.amq" "$dir/keys.txt" && empty err
run 0 query -c "$dir/grows.amq" "$dir/keys.txt" && expect out 20000
# Ten more copies of the key it holds: all go in, in the one table.
run 0 add "$dir/ten.amq" "$dir/ten.txt" && empty err
json "$dir/ten.amq" 'd["count"] == 20 and d["tables"] == 1' "ten more copies were not held"
for copy in $(seq 1 19); do
    "$amq" remove "$dir/ten.amq" "$dir/one.txt" 2>/dev/null || fail "remove of copy $copy"
done
run 0 query -c "$dir/ten.amq" "$dir/one.txt" && expect out 1
run 0 remove "$dir/ten.amq" "$dir/one.txt"
run 1 query -c "$dir/ten.amq" "$dir/one.txt" && expect out 0

# --add-once: each key once, the file marked; remove refuses it and leaves
# it as it was; add adds to it once from then on.
# The mark is the container's flag 1, in format version 2.
run 0 build -t cuckoo -n 1000 --add-once -o "$dir/once.amq" "$dir/ten.txt" && empty err
json "$dir/once.amq" 'd["count"] == 1 and d["add_once"] and d["counted_copies"] == 0' \
    "--add-once stored copies"
run 0 info "$dir/once.amq" && expect out "keys added       1" &&
    expect out "adds             once (--add-once): amq remove refuses this file"
[ "$(od -An -tu4 -j8 -N4 "$dir/once.amq" | tr -d ' ')" = 2 ] &&
    [ "$(od -An -tu4 -j20 -N4 "$dir/once.amq" | tr -d ' ')" = 1 ] ||
    fail "a file marked add-once is not container version 2 with flag 1"
cp "$dir/once.amq" "$dir/once-before.amq"
inode=$(ls -i "$dir/once.amq" | cut -d' ' -f1)
run 2 remove "$dir/once.amq" "$dir/one.txt" && expect err "filled with --add-once"
cmp -s "$dir/once.amq" "$dir/once-before.amq" || fail "a refused remove changed the file"
[ "$(ls -i "$dir/once.amq" | cut -d' ' -f1)" = "$inode" ] || fail "a refused remove rewrote the file"
# Added to once from then on, without the option too: keys it answers
# maybe for change nothing (the file is not rewritten), new keys go in once.
run 0 add "$dir/once.amq" "$dir/ten.txt" && empty err
cmp -s "$dir/once.amq" "$dir/once-before.amq" || fail "adding a key held to an add-once file changed it"
run 0 add "$dir/once.amq" "$dir/thousand.txt" "$dir/thousand.txt"
json "$dir/once.amq" '990 <= d["count"] <= 1001 and d["add_once"] and d["counted_copies"] == 0' \
    "an add-once file took copies"
run 0 query -c "$dir/once.amq" "$dir/thousand.txt" && expect out 1000
# Without -n: the distinct keys, once each.
run 0 build -t cuckoo --add-once -o "$dir/once-all.amq" "$dir/twice.txt" && empty err
json "$dir/once-all.amq" 'd["count"] == 20000 and d["capacity"] == 20000 and d["add_once"]' \
    "a build --add-once without -n is not the distinct keys"
run 0 build -t cuckoo -n 1000 -o "$dir/marked.amq" "$dir/ten.txt"
run 0 info "$dir/marked.amq" && expect out "adds             every copy"
run 0 add --add-once "$dir/marked.amq" "$dir/ten.txt"
json "$dir/marked.amq" 'd["count"] == 10 and d["add_once"]' "add --add-once did not mark the file"
run 2 remove "$dir/marked.amq" "$dir/one.txt" && expect err "--add-once"
run 2 build -t cuckoo --add-once --count-duplicates -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "contradict"
run 2 add --add-once --count-duplicates "$dir/marked.amq" "$dir/keys.txt" &&
    expect err "contradict"
# --count-duplicates is the default, and only for the types that remove.
run 0 build -t cuckoo --growth 0 --count-duplicates -n 1000 -o "$dir/copies.amq" "$dir/ten.txt"
json "$dir/copies.amq" 'd["count"] == 10' "--count-duplicates did not store each copy"
run 2 build -t bloom --count-duplicates -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "--count-duplicates applies to counting-bloom and cuckoo, not bloom"
run 2 build -t bloom --add-once -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "--add-once applies to counting-bloom and cuckoo, not bloom"
[ -e "$dir/x.amq" ] && fail "a refused build wrote a file"
run 0 build -t bloom -o "$dir/b.amq" "$dir/keys.txt"
json "$dir/b.amq" 'd["add_once"] is False' "info --json of a bloom filter lacks add_once false"
run 0 info "$dir/b.amq"
grep -q '^adds ' "$dir/out" && fail "info of a bloom filter says how it adds"
run 2 add --add-once "$dir/b.amq" "$dir/keys.txt" &&
    expect err "--add-once applies to counting-bloom and cuckoo filters, not bloom"
run 2 remove --count-duplicates "$dir/grows.amq" "$dir/keys.txt" &&
    expect err "unknown option '--count-duplicates'"

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
