#!/bin/sh
# The amq tool end to end with the blocked Bloom filters, both layouts:
# build, query, add, info, merge, and the options only they take.
#   blocked_bloom.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

seq 1 20000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 20000 | sed 's/^/other-/' >"$dir/others.txt"

for layout in split block; do
    run 0 build -t blocked-bloom --layout $layout -n 20000 -p 0.01 -o "$dir/$layout.amq" "$dir/keys.txt"
    run 0 query -c "$dir/$layout.amq" "$dir/keys.txt" && expect out 20000
    # About 1% of the others are false positives: between 0.5% and 2%.
    "$amq" query -c "$dir/$layout.amq" "$dir/others.txt" >"$dir/out"
    fp=$(cat "$dir/out")
    if [ "$fp" -lt 100 ] || [ "$fp" -gt 400 ]; then
        fail "$layout: $fp false positives of 20000 at p = 0.01"
    fi
    run 0 info "$dir/$layout.amq" && expect out "type             blocked-bloom"
    run 0 info --json "$dir/$layout.amq"
    if ! /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["family"]=="blocked-bloom" and d["capacity"]==20000 and abs(d["estimated_count"]-20000)<600 and d["bits_per_key"]>9.6, d' "$dir/out"; then
        fail "$layout: info --json"
    fi
    # add, then merge of two halves equals the filter of both.
    run 3 add "$dir/$layout.amq" "$dir/others.txt" && expect err "2.00 times the 20000"
    run 0 query -c "$dir/$layout.amq" "$dir/others.txt" "$dir/keys.txt" && expect out 40000
    run 0 build -t blocked-bloom --layout $layout -n 20000 -o "$dir/b.amq" "$dir/others.txt"
    run 0 build -t blocked-bloom --layout $layout -n 20000 -o "$dir/a.amq" "$dir/keys.txt"
    run 3 merge -o "$dir/ab.amq" "$dir/a.amq" "$dir/b.amq" && expect err "2.00 times the 20000"
    cmp -s "$dir/ab.amq" "$dir/$layout.amq" || fail "$layout: merge differs from adding both key sets"
    rm -f "$dir/a.amq" "$dir/b.amq" "$dir/ab.amq"
    run 2 remove "$dir/$layout.amq" "$dir/keys.txt" && expect err "cannot remove"
done

# Filters of different layouts do not merge, and say why.
run 2 merge -o "$dir/mixed.amq" "$dir/split.amq" "$dir/block.amq" && expect err "layout"
[ -e "$dir/mixed.amq" ] && fail "a refused merge wrote its output"

# The options: a bad layout, k with split, k out of range, another family's option.
run 2 build -t blocked-bloom --layout diagonal -n 100 -o "$dir/x.amq" "$dir/keys.txt" && expect err "layout"
run 2 build -t blocked-bloom -k 4 -n 100 -o "$dir/x.amq" "$dir/keys.txt" && expect err "split"
run 2 build -t blocked-bloom --layout block -k 40 -n 100 -o "$dir/x.amq" "$dir/keys.txt" && expect err "hashes"
run 2 build -t blocked-bloom --growth 2 -n 100 -o "$dir/x.amq" "$dir/keys.txt" && expect err "growth"
[ -e "$dir/x.amq" ] && fail "a refused build wrote its output"
# Sized by bits: m rounds up to whole blocks.
run 0 build -t blocked-bloom --layout block -m 100000 -o "$dir/m.amq" "$dir/keys.txt"
run 0 info --json "$dir/m.amq"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["size_bytes"]==12544, d' "$dir/out" || fail "-m 100000 is not 196 blocks of 64 bytes"

finish "cli blocked-bloom"
