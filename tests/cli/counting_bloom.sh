#!/bin/sh
# The amq tool end to end with the counting Bloom filter: build, query, add,
# remove (removed keys gone but for false positives, absent keys reported
# and the file left byte for byte as it was), info, merge and remove from
# the union, 8-bit counters, repeated keys (every copy counted, one removed
# a remove) and --add-once, and the options a counting filter refuses.
#   counting_bloom.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 20000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 20000 | sed 's/^/other-/' >"$dir/others.txt"
head -n 10000 "$dir/keys.txt" >"$dir/first.txt"
tail -n 10000 "$dir/keys.txt" >"$dir/second.txt"

run 0 build -t counting-bloom -n 20000 -p 0.01 -o "$dir/f.amq" "$dir/keys.txt"
run 0 query -c "$dir/f.amq" "$dir/keys.txt" && expect out 20000
"$amq" query -c "$dir/f.amq" "$dir/others.txt" >"$dir/out"
fp=$(cat "$dir/out")
if [ "$fp" -lt 100 ] || [ "$fp" -gt 400 ]; then
    fail "$fp false positives of 20000 at p = 0.01"
fi

# info: 4-bit counters take 4 times the classic filter's bits per key.
run 0 info "$dir/f.amq" && expect out "type             counting-bloom" &&
    expect out "capacity         20000" && expect out "bits per key     38.34"
run 0 info --json "$dir/f.amq"
if ! /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["family"]=="counting-bloom" and d["size_bytes"]==95851 and abs(d["estimated_count"]-20000)<400, d' "$dir/out"; then
    fail "info --json"
fi

# remove: the removed keys are absent except for false positives; the
# others all stay.
run 0 remove "$dir/f.amq" "$dir/first.txt" && empty err
run 0 query -c "$dir/f.amq" "$dir/second.txt" && expect out 10000
"$amq" query -c "$dir/f.amq" "$dir/first.txt" >"$dir/out"
left=$(cat "$dir/out")
if [ "$left" -gt 200 ]; then
    fail "$left of 10000 removed keys still answer maybe"
fi
run 0 info --json "$dir/f.amq"
if ! /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert abs(d["estimated_count"]-10000)<200, d' "$dir/out"; then
    fail "estimated count after removing half the keys"
fi

remove_absent_keys "$dir/f.amq" "$dir/others.txt" "$dir/second.txt"
"$amq" query -c "$dir/f.amq" "$dir/second.txt" >"$dir/out"
[ "$(cat "$dir/out")" -lt 10000 ] || fail "the mixed removal removed nothing"

# add puts keys back.
run 0 add "$dir/f.amq" "$dir/first.txt"
run 0 query -c "$dir/f.amq" "$dir/first.txt" && expect out 10000

# merge: the union answers for both sets and equals the filter built from
# both; removing one set from it gives back the other's filter exactly.
run 0 build -t counting-bloom -n 20000 -o "$dir/a.amq" "$dir/keys.txt"
run 0 build -t counting-bloom -n 20000 -o "$dir/b.amq" "$dir/others.txt"
run 3 build -t counting-bloom -n 20000 -o "$dir/both.amq" "$dir/keys.txt" "$dir/others.txt" &&
    expect err "holds about 399" && expect err "2.00 times the 20000 it was made for"
run 3 merge -o "$dir/ab.amq" "$dir/a.amq" "$dir/b.amq" && expect err "2.00 times the 20000 it was made for"
run 0 query -c "$dir/ab.amq" "$dir/keys.txt" "$dir/others.txt" && expect out 40000
cmp -s "$dir/ab.amq" "$dir/both.amq" || fail "merge differs from the filter of both key sets"
run 0 remove "$dir/ab.amq" "$dir/others.txt"
cmp -s "$dir/ab.amq" "$dir/a.amq" || fail "removing B's keys from A+B does not give A"

# 8-bit counters: twice the size, the same answers.
run 0 build -t counting-bloom --counter-bits 8 -n 20000 -o "$dir/wide.amq" "$dir/keys.txt"
run 0 info --json "$dir/wide.amq"
if ! /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["size_bytes"]==191702 and abs(d["bits_per_key"]-76.68)<0.01, d' "$dir/out"; then
    fail "info --json of 8-bit counters"
fi
run 0 query -c "$dir/wide.amq" "$dir/keys.txt" && expect out 20000
"$amq" query -c "$dir/wide.amq" "$dir/others.txt" >"$dir/out"
[ "$(cat "$dir/out")" = "$fp" ] || fail "8-bit counters give other false positives than 4-bit"
run 0 remove "$dir/wide.amq" "$dir/first.txt"
run 0 query -c "$dir/wide.amq" "$dir/second.txt" && expect out 10000
run 2 merge -o "$dir/bad.amq" "$dir/a.amq" "$dir/wide.amq" && expect err "4-bit and 8-bit counters"
[ -e "$dir/bad.amq" ] && fail "a failed merge wrote a file"

# Repeated keys: every copy counts, streamed (-n) or read first, and a
# remove takes one away: a key given three times answers maybe until its
# third remove.
cat "$dir/first.txt" "$dir/first.txt" "$dir/first.txt" >"$dir/thrice.txt"
run 0 info "$dir/a.amq" && expect out "adds             every copy: a key added k times is removed by k removes"
for how in "-n 20000" ""; do
    # shellcheck disable=SC2086 # $how is words or nothing
    run 0 build -t counting-bloom $how -o "$dir/copies.amq" --force "$dir/thrice.txt" && empty err
    run 0 remove "$dir/copies.amq" "$dir/first.txt" "$dir/first.txt" && empty err
    run 0 query -c "$dir/copies.amq" "$dir/first.txt" && expect out 10000
    run 0 remove "$dir/copies.amq" "$dir/first.txt" && empty err
    "$amq" query -c "$dir/copies.amq" "$dir/first.txt" >"$dir/out"
    [ "$(cat "$dir/out")" -eq 0 ] || fail "build $how: $(cat "$dir/out") of 10000 keys removed three times answer maybe"
done
# --add-once: each key once (streamed: unless it already answers maybe),
# the file marked (container version 2, flag 1), and remove refused with
# the file left as it was; add adds once from then on.
for how in "-n 20000" ""; do
    # shellcheck disable=SC2086 # $how is words or nothing
    run 0 build -t counting-bloom $how --add-once -o "$dir/once.amq" --force "$dir/thrice.txt" &&
        empty err
    run 0 query -c "$dir/once.amq" "$dir/first.txt" && expect out 10000
    run 0 info --json "$dir/once.amq"
    /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["add_once"] is True and abs(d["estimated_count"]-10000)<200, d' "$dir/out" ||
        fail "build $how --add-once: not marked, or not the distinct keys"
    [ "$(od -An -tu4 -j8 -N4 "$dir/once.amq" | tr -d ' ') $(od -An -tu4 -j20 -N4 "$dir/once.amq" | tr -d ' ')" = "2 1" ] ||
        fail "build $how --add-once: not container version 2 with flag 1"
done
# add --add-once of keys it holds changes nothing but the mark.
run 0 build -t counting-bloom -n 20000 -o "$dir/plain.amq" "$dir/first.txt"
cp "$dir/plain.amq" "$dir/plain-unmarked.amq"
run 0 add --add-once "$dir/plain.amq" "$dir/first.txt" && empty err
# (the header's version and flags differ, and the checksum trailer; from
# the hash key on to the trailer the bytes are the same)
tail -c +25 "$dir/plain.amq" | head -c -8 >"$dir/plain.body"
tail -c +25 "$dir/plain-unmarked.amq" | head -c -8 >"$dir/plain-unmarked.body"
cmp -s "$dir/plain.body" "$dir/plain-unmarked.body" ||
    fail "add --add-once of keys the filter holds changed more than the mark"
[ "$(od -An -tu4 -j8 -N4 "$dir/plain.amq" | tr -d ' ') $(od -An -tu4 -j20 -N4 "$dir/plain.amq" | tr -d ' ')" = "2 1" ] ||
    fail "add --add-once: not container version 2 with flag 1"
run 0 info "$dir/plain.amq" && expect out "adds             once (--add-once): amq remove refuses this file"
cp "$dir/plain.amq" "$dir/plain-before.amq"
run 2 remove "$dir/plain.amq" "$dir/first.txt" && expect err "--add-once"
cmp -s "$dir/plain.amq" "$dir/plain-before.amq" || fail "a refused remove changed the file"
run 0 add "$dir/plain.amq" "$dir/first.txt" && empty err
cmp -s "$dir/plain.amq" "$dir/plain-before.amq" || fail "an add-once file took copies"
run 2 build -t counting-bloom --add-once --count-duplicates -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "contradict"
run 0 build -t counting-bloom --count-duplicates -n 20000 -o "$dir/dup.amq" "$dir/thrice.txt"
run 0 build -t counting-bloom -n 20000 -o "$dir/nodup.amq" "$dir/thrice.txt"
cmp -s "$dir/dup.amq" "$dir/nodup.amq" || fail "--count-duplicates is not the default"

# m and k directly; the options a counting filter refuses.
run 0 build -t counting-bloom -m 100000 -k 5 -o "$dir/mk.amq" "$dir/keys.txt"
run 0 info --json "$dir/mk.amq" && expect out '"size_bytes": 50000'
run 2 build -t counting-bloom --counter-bits 5 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "counter-bits"
run 2 build -t counting-bloom --layout split -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--layout' for counting-bloom"
run 2 build -t bloom --counter-bits 8 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--counter-bits' for bloom"

# info names the counter width and the saturated counters: none at
# capacity, some when 20000 keys pour into a filter sized for 500.
run 0 info "$dir/mk.amq" && expect out "counter bits     4" && expect out "saturated        0"
run 3 build -t counting-bloom -n 500 -o "$dir/over.amq" "$dir/keys.txt"
run 0 info --json "$dir/over.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["counter_bits"]==4 and d["saturated"]>0 and d["hashes"]==7, d' "$dir/out" ||
    fail "info --json of an overfull counting filter"

# A damaged file is refused.
size=$(wc -c <"$dir/a.amq")
cp "$dir/a.amq" "$dir/damaged.amq"
printf 'X' | dd of="$dir/damaged.amq" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run 2 remove "$dir/damaged.amq" "$dir/keys.txt" && expect err "corrupt"

finish "cli counting-bloom"
