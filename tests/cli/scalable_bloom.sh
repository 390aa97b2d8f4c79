#!/bin/sh
# The amq tool end to end with the scalable Bloom filter: build with a small
# -n and forty times as many keys (the filter grows stages), query, add (it
# grows again), info with the stages, merge (accepted, refused for other
# parameters or a union past the FPR bound), build without -n, dedup without
# knowing the count, and the options it refuses.
#   scalable_bloom.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 20000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 20000 | sed 's/^/other-/' >"$dir/others.txt"
head -n 30 "$dir/others.txt" >"$dir/few.txt"

# Stages of 500, 1000, ..., 16000 keys: 20000 keys fill five and open a sixth.
run 0 build -t scalable-bloom -n 500 -p 0.01 -o "$dir/f.amq" "$dir/keys.txt"
run 0 query -c "$dir/f.amq" "$dir/keys.txt" && expect out 20000
run 1 query -v "$dir/f.amq" "$dir/keys.txt" && lines out 0
# The compound rate stays under p = 1% (about half of it here): at most
# 200 + 4 sigma false positives of 20000.
"$amq" query -c "$dir/f.amq" "$dir/others.txt" >"$dir/out"
fp=$(cat "$dir/out")
if [ "$fp" -gt 260 ]; then
    fail "$fp false positives of 20000 at p = 0.01"
fi

run 0 info "$dir/f.amq" && expect out "type             scalable-bloom" &&
    expect out "capacity         31500" && expect out "stages           6" &&
    expect out "initial capacity 500" && expect out "growth           2" &&
    expect out "tightening       0.9"
run 0 info --json "$dir/f.amq"
if ! /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["family"]=="scalable-bloom" and d["stages"]==6 and 19700<d["count"]<=20000 and d["expected_fpr"]<0.01 and abs(d["estimated_count"]-d["count"])<300, d' "$dir/out"; then
    fail "info --json"
fi

# add grows it further: a seventh stage of 32000 keys.
run 0 add "$dir/f.amq" "$dir/others.txt"
run 0 query -c "$dir/f.amq" "$dir/keys.txt" "$dir/others.txt" && expect out 40000
run 0 info "$dir/f.amq" && expect out "stages           7" && expect out "capacity         63500"
cp "$dir/f.amq" "$dir/before.amq"
run 2 remove "$dir/f.amq" "$dir/keys.txt" && expect err "cannot remove"
cmp -s "$dir/f.amq" "$dir/before.amq" || fail "remove changed the file"

# merge: a filter with few keys merges into a grown one; both key sets
# answer. (Its keys land in the first stage, already full: a few hundred
# would push that stage's rate, and the compound one, past p.)
run 0 build -t scalable-bloom -n 500 -p 0.01 -o "$dir/a.amq" "$dir/keys.txt"
run 0 build -t scalable-bloom -n 500 -p 0.01 -o "$dir/b.amq" "$dir/few.txt"
run 0 merge -o "$dir/ab.amq" "$dir/a.amq" "$dir/b.amq"
run 0 query -c "$dir/ab.amq" "$dir/keys.txt" "$dir/few.txt" && expect out 20030
run 0 info "$dir/ab.amq" && expect out "stages           6"
# Two grown filters: each merged stage would hold twice its keys - refused.
run 0 build -t scalable-bloom -n 500 -p 0.01 -o "$dir/c.amq" "$dir/others.txt"
run 2 merge -o "$dir/bad.amq" "$dir/a.amq" "$dir/c.amq" && expect err "false-positive rate"
[ -e "$dir/bad.amq" ] && fail "a failed merge wrote a file"
run 0 build -t scalable-bloom -n 500 -p 0.01 --growth 4 -o "$dir/d.amq" "$dir/few.txt"
run 2 merge -o "$dir/bad.amq" "$dir/a.amq" "$dir/d.amq" && expect err "growth"

# Without -n the first stage holds all the keys read.
run 0 build -t scalable-bloom -o "$dir/auto.amq" "$dir/keys.txt"
run 0 info "$dir/auto.amq" && expect out "capacity         20000" && expect out "stages           1"
run 0 build -t scalable-bloom -n 100 --growth 4 --tightening 0.8 -p 0.001 -o "$dir/g.amq" "$dir/keys.txt"
run 0 query -c "$dir/g.amq" "$dir/keys.txt" && expect out 20000
run 0 info "$dir/g.amq" && expect out "growth           4" && expect out "tightening       0.8" &&
    expect out "stages           5"

# Options it refuses, by name and with the allowed range.
run 2 build -t scalable-bloom --tightening 0.99 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "option '--tightening': '0.99' is not between 0.5 and 0.95"
run 2 build -t scalable-bloom --tightening 0 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "tightening"
run 2 build -t scalable-bloom --growth 0.5 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "option '--growth': '0.5' is not between 1 and 32768"
run 2 build -t scalable-bloom --growth two -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "option '--growth': 'two' is not a number"
run 2 build -t scalable-bloom -m 1000 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--bits' (-m) for scalable-bloom"
run 2 build -t scalable-bloom -n 10 -p 1e-19 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "more than 64 hash functions"
[ -e "$dir/x.amq" ] && fail "a refused build wrote a file"
run 2 build -t bloom --growth 2 -o "$dir/x.amq" "$dir/keys.txt" &&
    expect err "unknown option '--growth' for bloom"

# A damaged file is refused.
size=$(wc -c <"$dir/a.amq")
cp "$dir/a.amq" "$dir/damaged.amq"
printf 'X' | dd of="$dir/damaged.amq" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run 2 query "$dir/damaged.amq" "$dir/keys.txt" && expect err "damaged.amq" && expect err "corrupt"

# dedup with no idea of the count: the filter grows from 2 keys.
{ cat "$dir/few.txt"; cat "$dir/few.txt"; } >"$dir/twice.txt"
run 0 dedup -t scalable-bloom -n 2 "$dir/twice.txt"
cmp -s "$dir/out" "$dir/few.txt" || fail "dedup output"

finish "cli scalable_bloom"
