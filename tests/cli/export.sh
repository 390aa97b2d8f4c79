#!/bin/sh
# `amq export`: every BIP158 vector built from its elements with its key
# exports, as bip158, exactly the vector's filter (in raw bytes and with
# --hex), and as raw exactly the filter after its count; the errors: a type
# that exports nothing, an unknown format, no format, not one file, a
# damaged file, and raw bytes to a terminal-less pipe work.
#   export.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"
data=${AMQ_TEST_DATA_DIR:-$(dirname "$0")/../data}

/usr/bin/python3 -c '
import json, sys
for i, line in enumerate(open(sys.argv[1])):
    v = json.loads(line)
    with open("%s/elements-%d.txt" % (sys.argv[2], i), "w") as out:
        out.write("".join(e + "\n" for e in v["elements_hex"]))
    print(i, v["siphash_key_hex"], v["filter_hex"])
' "$data/gcs/bip158-elements.jsonl" "$dir" >"$dir/vectors"
[ "$(wc -l <"$dir/vectors")" -eq 10 ] || fail "expected 10 BIP158 vectors"
while read -r i key filter; do
    run 0 build -t gcs --bip158-key "$key" --hex -o "$dir/block-$i.amq" "$dir/elements-$i.txt"
    run 0 export --format bip158 --hex "$dir/block-$i.amq" && expect out "$filter" && lines out 1
    "$amq" export -f bip158 "$dir/block-$i.amq" >"$dir/bytes" || fail "vector $i: raw bytes"
    got=$(od -An -v -tx1 "$dir/bytes" | tr -d ' \n')
    [ "$got" = "$filter" ] || fail "vector $i: exported $got, expected $filter"
    # raw: the stream alone, the filter less its CompactSize count (one
    # byte for these counts, all below 253).
    run 0 export --format raw --hex "$dir/block-$i.amq" && expect out "${filter#??}"
done <"$dir/vectors"

seq 1 100 | sed 's/^/key-/' >"$dir/keys.txt"
run 0 build -t bloom -o "$dir/bloom.amq" "$dir/keys.txt"
run 2 export --format raw "$dir/bloom.amq" && expect err "bloom" && empty out
run 2 export --format nope --hex "$dir/block-0.amq" && expect err "not 'nope'" && empty out
run 2 export "$dir/block-0.amq" && expect err "give the format"
run 2 export --format raw --hex && expect err "exactly one filter file"
run 2 export --format raw --hex "$dir/block-0.amq" "$dir/block-1.amq" &&
    expect err "exactly one filter file"
run 2 export --format raw --hex "$dir/missing.amq" && expect err "missing.amq"
head -c 70 "$dir/block-0.amq" >"$dir/short.amq"
run 2 export --format raw --hex "$dir/short.amq" && expect err "short.amq" && empty out
run 0 export --help && expect out "Usage: amq export"
echo "cli export: ok"
