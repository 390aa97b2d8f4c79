#!/bin/sh
# query and add send their keys through the filters' batch calls, 1024 keys
# (or 1 MiB) at a time (tools/cli_batch.c); what they print and where an
# error points must be what asking key by key gave:
#  - query gives back, byte for byte and in order, the lines of inputs of
#    several batches whose keys are all in the filter (CRLF and LF ends, an
#    input without a final newline before another input), and only the
#    present lines of a mix; -v and -c count as before;
#  - a bad line after the first batch: the lines before it are printed,
#    and the error names its line;
#  - add: a cuckoo filter that fills names the first key that did not fit,
#    after exactly the keys before it went in (the one-by-one answer:
#    line 1221 after 1220 keys), and the file is unchanged;
#    the keys added by batches are all found.
#   batch.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

# 3000 distinct keys, every seventh line ending in CRLF; the same keys in
# two inputs, the first of which has no final newline (its last line ends
# in LF in keys.txt, so no CR is left on it).
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "key-%05d%s", i, (i % 7 ? "\n" : "\r\n") }' \
    >"$dir/keys.txt"
head -n 1801 "$dir/keys.txt" | head -c -1 >"$dir/first.txt"
tail -n +1802 "$dir/keys.txt" >"$dir/second.txt"
# A line printed without its end gets a newline before the next one.
{ cat "$dir/first.txt"; printf '\n'; cat "$dir/second.txt"; } >"$dir/two.expected"

for type in bloom blocked-bloom counting-bloom scalable-bloom cuckoo fuse8 gcs; do
    run 0 build -t "$type" -o "$dir/$type.amq" "$dir/keys.txt"
    run 0 query "$dir/$type.amq" "$dir/keys.txt" && cmp -s "$dir/out" "$dir/keys.txt" ||
        fail "query $type: the output is not keys.txt byte for byte"
    run 1 query -v "$dir/$type.amq" "$dir/keys.txt" && empty out
    run 0 query -c "$dir/$type.amq" "$dir/keys.txt" && expect out 3000
    run 0 query "$dir/$type.amq" "$dir/first.txt" "$dir/second.txt" &&
        cmp -s "$dir/out" "$dir/two.expected" ||
        fail "query $type of two inputs: not the lines as printed key by key"
done

# A mix: present keys on odd lines, absent ones on even; only the odd lines
# come out (p = 1e-6 over 2500 absent keys, and a fixed seed: a false
# positive would show every time, and none does).
awk 'BEGIN { for (i = 0; i < 5000; i++) printf (i % 2 ? "absent-%05d\n" : "key-%05d\n"), i / 2 }' \
    >"$dir/mix.txt"
awk 'NR % 2 == 1' "$dir/mix.txt" >"$dir/mix.expected"
run 0 build -t bloom -p 1e-6 -o "$dir/mix.amq" "$dir/mix.expected"
run 0 query "$dir/mix.amq" "$dir/mix.txt" && cmp -s "$dir/out" "$dir/mix.expected" ||
    fail "query of a mix: not the present lines in order"
run 0 query -v -c "$dir/mix.amq" "$dir/mix.txt" && expect out 2500

# --hex with a bad line 2500: the 2499 lines before it are printed (two
# batches and part of a third), and the error names line 2500.
awk 'BEGIN { for (i = 0; i < 3000; i++) { if (i == 2499) print "not hex"; else printf "%08x\n", i } }' \
    >"$dir/hex.txt"
awk 'NR < 2500' "$dir/hex.txt" >"$dir/hex-in.txt"
run 0 build -t bloom -p 1e-6 --hex -o "$dir/hex.amq" "$dir/hex-in.txt"
run 2 query --hex "$dir/hex.amq" "$dir/hex.txt"
expect err "hex.txt:2500: not a hex key"
cmp -s "$dir/out" "$dir/hex-in.txt" || fail "query --hex: not the 2499 lines before the bad one"

# add: a cuckoo filter of fixed size fills; the key named is the first that
# did not fit, after all the keys before it (every key takes a slot, none
# is skipped as maybe held already: --count-duplicates, the default).
run 0 build -t cuckoo -n 1000 --growth 0 -o "$dir/full.amq" /dev/null
cp "$dir/full.amq" "$dir/full-before.amq"
run 2 add --count-duplicates "$dir/full.amq" "$dir/keys.txt"
where=$(sed -n 's/.*keys\.txt:\([0-9]*\): the cuckoo filter is full: \([0-9]*\) keys.*/\1 \2/p' \
    "$dir/err")
set -- $where
[ $# -eq 2 ] && [ "$1" -eq $(($2 + 1)) ] ||
    fail "add to a full cuckoo filter: the error names '$where' (line, keys), not the key after those added"
expect err "is unchanged"
cmp -s "$dir/full.amq" "$dir/full-before.amq" || fail "an add that failed changed the file"

# The keys added by batches are all there (a classic filter made for 100
# keys warns that it holds more: exit 3).
for type in bloom scalable-bloom cuckoo; do
    run 0 build -t "$type" -n 100 -o "$dir/grown-$type.amq" /dev/null
    "$amq" add "$dir/grown-$type.amq" "$dir/keys.txt" >/dev/null 2>&1
    code=$?
    [ "$code" -eq 0 ] || [ "$code" -eq 3 ] || fail "add to $type exited $code"
    run 0 query -c "$dir/grown-$type.amq" "$dir/keys.txt" && expect out 3000
done

finish batch
