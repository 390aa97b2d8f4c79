#!/bin/sh
# The amq tool end to end with the classic Bloom filter: build, query (-v,
# -c, exit codes), add, info, merge, dedup, and the error paths that need a
# real filter: over-long lines, bad hex, damaged files, refused overwrites.
#   bloom.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 20000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 20000 | sed 's/^/other-/' >"$dir/others.txt"

run 0 build -t bloom -n 20000 -p 0.01 -o "$dir/f.amq" "$dir/keys.txt"
run 0 query "$dir/f.amq" "$dir/keys.txt" && lines out 20000
run 0 query -c "$dir/f.amq" "$dir/keys.txt" && expect out 20000
run 1 query -v "$dir/f.amq" "$dir/keys.txt" && lines out 0
# About 1% of the others are false positives: between 0.5% and 2%.
"$amq" query -c "$dir/f.amq" "$dir/others.txt" >"$dir/out"
fp=$(cat "$dir/out")
if [ "$fp" -lt 100 ] || [ "$fp" -gt 400 ]; then
    fail "$fp false positives of 20000 at p = 0.01"
fi
run 0 query -v -c "$dir/f.amq" "$dir/others.txt" && expect out $((20000 - fp))
# Standard input, '-' and several inputs.
"$amq" query -c "$dir/f.amq" <"$dir/keys.txt" >"$dir/out" && expect out 20000
"$amq" query -c "$dir/f.amq" - "$dir/keys.txt" <"$dir/keys.txt" >"$dir/out" && expect out 40000

# Windows line ends give the same keys; a last line without a newline counts.
printf 'key-1\r\nkey-2\r\nkey-3' >"$dir/crlf.txt"
run 0 query -c "$dir/f.amq" "$dir/crlf.txt" && expect out 3

# info, as text and JSON.
run 0 info "$dir/f.amq" && expect out "type             bloom" && expect out "capacity         20000"
run 0 info --json "$dir/f.amq"
if ! /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["family"]=="bloom" and d["capacity"]==20000 and abs(d["estimated_count"]-20000)<400, d' "$dir/out"; then
    fail "info --json"
fi

# add: the new keys are found afterwards; the file was replaced atomically.
# Twice the keys it was made for: saved, but said on stderr, exit 3.
run 3 add "$dir/f.amq" "$dir/others.txt" && lines err 1 &&
    expect err "f.amq holds about " && expect err "2.00 times the 20000 it was made for"
run 0 query -c "$dir/f.amq" "$dir/others.txt" && expect out 20000
# remove is refused by name for a classic filter, and the file is unchanged.
cp "$dir/f.amq" "$dir/before.amq"
run 2 remove "$dir/f.amq" "$dir/keys.txt" && expect err "cannot remove"
cmp -s "$dir/f.amq" "$dir/before.amq" || fail "remove changed the file"

# merge: the union of two filters answers for both key sets.
run 0 build -t bloom -n 20000 -p 0.01 -o "$dir/a.amq" "$dir/keys.txt"
run 0 build -t bloom -n 20000 -p 0.01 -o "$dir/b.amq" "$dir/others.txt"
run 3 merge -o "$dir/ab.amq" "$dir/a.amq" "$dir/b.amq" && expect err "2.00 times the 20000 it was made for"
run 0 query -c "$dir/ab.amq" "$dir/keys.txt" "$dir/others.txt" && expect out 40000
cmp -s "$dir/ab.amq" "$dir/f.amq" || fail "merge differs from adding both key sets"
run 3 build -t bloom -n 5000 -o "$dir/small.amq" "$dir/keys.txt" &&
    expect err "holds at least" && expect err "(of 20000 read)" &&
    expect err "the 5000 it was made for: its false-positive rate is now 0.6"
run 2 merge -o "$dir/bad.amq" "$dir/a.amq" "$dir/small.amq" && expect err "bits"
[ -e "$dir/bad.amq" ] && fail "a failed merge wrote a file"

# build without -n sizes the filter to the keys; refuses to overwrite.
run 0 build -t bloom -o "$dir/auto.amq" "$dir/keys.txt"
run 0 info --json "$dir/auto.amq" && expect out '"capacity": 20000'
run 2 build -t bloom -o "$dir/auto.amq" "$dir/keys.txt" && expect err "already exists"
run 0 build -t bloom --force -p 0.1 -o "$dir/auto.amq" "$dir/keys.txt"
run 2 build -t bloom --layout split -o "$dir/x.amq" "$dir/keys.txt" && expect err "unknown option '--layout' for bloom"
run 2 build -t bloom -n 1e15 -o "$dir/x.amq" "$dir/keys.txt" && expect err "bits"
run 2 build -t bloom -n 0 -o "$dir/x.amq" "$dir/keys.txt" && expect err "capacity"

# --hex keys, and bad hex names the file and line.
printf '00ff\n0a0b0c\n' >"$dir/hex.txt"
run 0 build -t bloom --hex -o "$dir/hex.amq" "$dir/hex.txt"
run 0 query --hex -c "$dir/hex.amq" "$dir/hex.txt" && expect out 2
printf '00ff\nzz\n' >"$dir/badhex.txt"
run 2 query --hex "$dir/hex.amq" "$dir/badhex.txt" && expect err "badhex.txt:2: not a hex key"
printf '00ff\nabc\n' >"$dir/oddhex.txt"
run 2 query --hex "$dir/hex.amq" "$dir/oddhex.txt" && expect err "oddhex.txt:2: not a hex key" && expect err "odd number of hex digits"

# A line over 64 MiB: a clear error naming the file, the line and the
# limit, in bounded memory; add leaves the filter as it was.
{ echo key-1; head -c 67108865 /dev/zero | tr '\0' x; echo; echo key-2; } >"$dir/long.txt"
run 2 query "$dir/f.amq" "$dir/long.txt" &&
    expect err "long.txt: line 2 is longer than 64 MiB, the longest line amq reads"
cp "$dir/f.amq" "$dir/before.amq"
run 2 add "$dir/f.amq" "$dir/long.txt" && expect err "long.txt: line 2 is longer"
cmp -s "$dir/f.amq" "$dir/before.amq" || fail "a failed add changed the file"
rm -f "$dir/long.txt"

# Damaged files: a flipped byte or a truncation is refused; nothing crashes.
size=$(wc -c <"$dir/a.amq")
cp "$dir/a.amq" "$dir/damaged.amq"
printf 'X' | dd of="$dir/damaged.amq" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run 2 query "$dir/damaged.amq" "$dir/keys.txt" && expect err "damaged.amq" && expect err "corrupt"
head -c $((size - 1)) "$dir/a.amq" >"$dir/short.amq"
run 2 info "$dir/short.amq" && expect err "short.amq"
run 2 query "$dir" "$dir/keys.txt"
run 2 query "$dir/a.amq" "$dir/no-such-input.txt" && expect err "no-such-input.txt"

# dedup prints each line once, first occurrence first.
printf 'b\na\nb\nc\na\n' >"$dir/dups.txt"
run 0 dedup -t bloom -n 100 "$dir/dups.txt"
printf 'b\na\nc\n' >"$dir/dedup-expected.txt"
cmp -s "$dir/out" "$dir/dedup-expected.txt" || { fail "dedup output"; cat "$dir/out"; }

# A rate below what the filter can deliver (n 2^-127 for its 128-bit key
# hash) is said by build and info, with the rate it will have; a rate past
# 64 hash functions is reached with more bits (no note); p = 1e-9 is
# delivered as asked.
seq 1 1000 | sed 's/^/key-/' >"$dir/thousand.txt"
run 0 build -t bloom -n 1000 -p 1e-100 -o "$dir/tiny.amq" "$dir/thousand.txt" &&
    expect err "note: p = 1e-100 is below what a bloom filter of 1000 keys can deliver: it will have about 1.7"
run 0 info "$dir/tiny.amq" && expect out "note             the target FPR is below what this filter delivers: about 1.7"
run 0 build -t counting-bloom -n 1000 -p 1e-100 -o "$dir/tiny-c.amq" "$dir/thousand.txt" &&
    expect err "note: p = 1e-100 is below what a counting-bloom filter"
for p in 1e-9 1e-30; do
    run 0 build -t bloom -n 1000 -p $p -o "$dir/low-$p.amq" "$dir/thousand.txt" && empty err
    run 0 info --json "$dir/low-$p.amq"
    /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["fpr_at_capacity"] <= 1.01 * float(sys.argv[2]) and d["hashes"] <= 64 and d["probe_version"] == 2, d' \
        "$dir/out" "$p" || fail "bloom at p = $p does not deliver it"
done

finish "cli bloom"
