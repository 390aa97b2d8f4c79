#!/bin/sh
# How `amq build` without -n treats its keys: sized for the distinct keys,
# repeated keys dropped exactly by the types that cannot remove keys, and
# every copy kept by those that can (counting-bloom, cuckoo: a cuckoo filter
# sized for the copies its slots store), empty keys, and an input of only
# empty lines.
#   keys.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

# json FILE EXPRESSION: EXPRESSION holds for the info --json of FILE (as d).
json() {
    "$amq" info --json "$1" >"$dir/info.json" 2>&1 || fail "info --json $1"
    /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert eval(sys.argv[2]), d' \
        "$dir/info.json" "$2" || fail "$1: not $2"
}

seq 1 3000 | sed 's/^/key-/' >"$dir/keys.txt"
cat "$dir/keys.txt" "$dir/keys.txt" "$dir/keys.txt" >"$dir/thrice.txt"

# Three copies of 3000 keys: every type but cuckoo is made for 3000.
for type in bloom blocked-bloom scalable-bloom counting-bloom; do
    run 0 build -t "$type" -o "$dir/$type.amq" "$dir/thrice.txt" && empty err
    json "$dir/$type.amq" 'd["capacity"] in (3000, 3008)'
done
for type in gcs fuse8 fuse16; do
    run 0 build -t "$type" -o "$dir/$type.amq" "$dir/thrice.txt" && empty_but_note err
    json "$dir/$type.amq" 'd["count"] == 3000'
done
# cuckoo holds every copy: two of each key in its slots (b / 2 for b = 4),
# the third counted; made for the 6000 its slots store and a quarter of the
# 3000 second copies more, in one table.
run 0 build -t cuckoo -o "$dir/cuckoo.amq" "$dir/thrice.txt" && empty err
json "$dir/cuckoo.amq" 'd["count"] == 9000 and d["capacity"] == 6750 and d["tables"] == 1'
json "$dir/cuckoo.amq" 'd["counted_copies"] >= 3000 and d["add_once"] is False'
# Both count the copies: one remove of each key leaves them all, three
# remove them all.
for type in counting-bloom cuckoo; do
    run 0 remove "$dir/$type.amq" "$dir/keys.txt"
    run 0 query -c "$dir/$type.amq" "$dir/keys.txt" && expect out 3000
done
run 0 remove "$dir/cuckoo.amq" "$dir/keys.txt" "$dir/keys.txt"
run 1 query -c "$dir/cuckoo.amq" "$dir/keys.txt" && expect out 0
json "$dir/cuckoo.amq" 'd["count"] == 0 and d["counted_copies"] == 0'
# With --add-once each distinct key once, and the file says so.
run 0 build -t cuckoo --add-once -o "$dir/once.amq" "$dir/thrice.txt" && empty err
json "$dir/once.amq" 'd["count"] == 3000 and d["capacity"] in (3000, 3008) and d["add_once"]'


# Keys that differ only past a shared prefix, or by one byte, are distinct.
printf 'a\nab\nb\na\n\nab\n' >"$dir/close.txt"
run 0 build -t cuckoo --add-once -o "$dir/close.amq" "$dir/close.txt"
json "$dir/close.amq" 'd["count"] == 4'

# Only empty lines: one key, the empty one, for every type.
printf '\n\n\n' >"$dir/empty-lines.txt"
for type in bloom cuckoo fuse8 gcs; do
    run 0 build -t "$type" -o "$dir/e-$type.amq" "$dir/empty-lines.txt" && empty_but_note err
    printf '\n' >"$dir/one-empty.txt"
    run 0 query -c "$dir/e-$type.amq" "$dir/one-empty.txt" && expect out 1
done

finish "cli keys"
