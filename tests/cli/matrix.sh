#!/bin/sh
# Every subcommand with every filter type: build add remove query info merge
# export dedup. Each either works (checked by its result) or refuses with
# one line that names the type and says what to do instead, exit 2, leaving
# the file as it was. The table below is what each type is expected to do;
# its types must be exactly those `amq --help` lists, so a new type cannot
# arrive without its row.
#   matrix.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

# type            add remove merge export grow
table='
bloom             yes no     yes   no     no
blocked-bloom     yes no     yes   no     no
counting-bloom    yes yes    yes   no     no
scalable-bloom    yes no     yes   no     yes
cuckoo            yes yes    no    no     yes
gcs               no  no     yes   yes    no
hfb               no  no     no    no     no
fuse8             no  no     no    no     no
fuse16            no  no     no    no     no
'
# Dedup works exactly for the types that add keys one by one.

listed=$("$amq" --help | sed -n 's/^ *types: *//p')
expected=$(echo "$table" | awk 'NF { printf "%s%s", sep, $1; sep = " " }')
[ "$listed" = "$expected" ] || fail "amq --help lists types '$listed'; the table has '$expected'"

# The types that remove keys, as the refusal lists them.
removers=$(echo "$table" | awk 'NF && $3 == "yes" { print $1 }' | sed -e ':a' -e 'N;$!ba' \
    -e 's/\n\([^\n]*\)$/ or \1/' -e 's/\n/, /g')

# Keys: lines for most types, 16-byte IDs in hex for hfb (MD5 digests,
# deterministic and random-looking).
seq 1 4000 | sed 's/^/key-/' >"$dir/keys.txt"
seq 1 4000 | sed 's/^/other-/' >"$dir/others.txt"
/usr/bin/python3 -c '
import hashlib, sys
for prefix, path in (("key", sys.argv[1]), ("other", sys.argv[2])):
    with open(path, "w") as out:
        for i in range(4000):
            out.write(hashlib.md5(("%s-%d" % (prefix, i)).encode()).hexdigest() + "\n")
' "$dir/ids.txt" "$dir/other-ids.txt"

# info --json: one object, no name twice, every common field of the right
# kind, the family's details numbers, words or null, and "supports" the
# table's row.
check_json() { # FILE TYPE SUPPORTS
    /usr/bin/python3 -c '
import json, math, sys
def unique(pairs):
    names = [name for name, _ in pairs]
    repeated = sorted(set(n for n in names if names.count(n) > 1))
    assert not repeated, "names given twice: %s" % repeated
    return dict(pairs)
d = json.load(open(sys.argv[1]), object_pairs_hook=unique)
assert d["file"] == sys.argv[2] and d["family"] == sys.argv[3], d
assert d.pop("supports") == sys.argv[4].split(), (sys.argv[4], d)
for name in ("capacity", "count", "size_bytes"):
    assert isinstance(d[name], int) and d[name] >= 0, (name, d)
for name in ("estimated_count", "bits_per_key", "target_fpr", "expected_fpr"):
    assert d[name] is None or isinstance(d[name], (int, float)), (name, d)
assert 0 < d["target_fpr"] < 1, d
assert d["hash"].startswith(d["hash_kind"]) and d["hash_kind"] == "xxh3", d
assert d["hash_seed"] == 0, d
assert d["add_once"] is False and isinstance(d["count_estimated"], bool), d
assert len(d["checksum"]) == 16 and int(d["checksum"], 16) >= 0, d
for name, value in d.items():
    assert value is None or isinstance(value, (int, float, str)), (name, d)
    assert not isinstance(value, float) or math.isfinite(value), (name, d)
' "$dir/out" "$1" "$2" "$3" || fail "info --json of $2"
}

echo "$table" >"$dir/table"
while read -r type add remove merge export grow; do
    [ -n "$type" ] || continue
    supports=
    [ "$add" = yes ] && supports="$supports add"
    [ "$remove" = yes ] && supports="$supports remove"
    [ "$merge" = yes ] && supports="$supports merge"
    [ "$grow" = yes ] && supports="$supports grow"
    [ "$export" = yes ] && supports="$supports export"
    keys=$dir/keys.txt others=$dir/others.txt
    if [ "$type" = hfb ]; then
        keys=$dir/ids.txt others=$dir/other-ids.txt
    fi
    head -n 2000 "$keys" >"$dir/first.txt"
    tail -n 2000 "$keys" >"$dir/second.txt"
    f=$dir/$type.amq

    # build, query, info: every type.
    if [ "$type" = gcs ]; then
        # A gcs build says the layout it chose and the trade-off, one line.
        run 0 build -t "$type" -o "$f" "$keys" && lines err 1
        grep -q "^amq: build: note: bucketed layout, .* bits/key, a query decodes about .* codes; --stream continuous: about .* bits/key" "$dir/err" ||
            fail "gcs build: no trade-off line: $(cat "$dir/err")"
    else
        run 0 build -t "$type" -o "$f" "$keys" && empty err
    fi
    run 0 query -c "$f" "$keys" && expect out 4000
    run 0 query "$f" "$dir/first.txt" && lines out 2000
    "$amq" query -c "$f" "$others" >"$dir/out" </dev/null
    [ "$(cat "$dir/out")" -lt 400 ] || fail "$type: $(cat "$dir/out") of 4000 absent keys found"
    run 0 info "$f" && expect out "type             $type"
    [ "$add" = yes ] && words=$supports || words="static $supports"
    # shellcheck disable=SC2086
    line="supports         $(echo $words | sed 's/ /, /g')"
    grep -qxF "$line" "$dir/out" || fail "info $type: no line '$line'"
    # How keys are added: said by the types that remove keys (every copy,
    # or once with --add-once, which only they take).
    if [ "$remove" = yes ]; then
        grep -qxF "adds             every copy: a key added k times is removed by k removes" "$dir/out" ||
            fail "info $type: no line saying every copy is added"
        run 0 build -t "$type" --add-once -o "$dir/$type-once.amq" "$keys" && empty err
        run 0 info "$dir/$type-once.amq" &&
            expect out "adds             once (--add-once): amq remove refuses this file"
    else
        grep -q "^adds " "$dir/out" && fail "info $type: says how it adds keys"
        run 2 build -t "$type" --add-once -o "$dir/$type-once.amq" "$keys" &&
            expect err "--add-once applies to $(echo "$removers" | sed 's/ or / and /'), not $type"
        [ -e "$dir/$type-once.amq" ] && fail "$type: a refused build wrote a file"
    fi
    run 0 info --json "$f" && check_json "$f" "$type" "$supports"
    cp "$f" "$dir/before.amq"

    # add
    if [ "$add" = yes ]; then
        run 0 build -t "$type" -n 4000 -o "$dir/$type-half.amq" "$dir/first.txt"
        run 0 add "$dir/$type-half.amq" "$dir/second.txt" && empty err
        run 0 query -c "$dir/$type-half.amq" "$keys" && expect out 4000
    else
        run 2 add "$f" "$others" && lines err 1 &&
            expect err "$type is static and cannot add keys: build it from the whole set with \`amq build\`"
        # refused before reading a line: no input is needed to be told
        run 2 add "$f" && expect err "$type is static"
    fi

    # remove
    if [ "$remove" = yes ]; then
        run 0 remove "$f" "$dir/first.txt" && empty err
        "$amq" query -c "$f" "$dir/first.txt" >"$dir/out" </dev/null
        [ "$(cat "$dir/out")" -lt 100 ] || fail "$type: $(cat "$dir/out") of 2000 removed keys remain"
        run 0 query -c "$f" "$dir/second.txt" && expect out 2000
        cp "$dir/before.amq" "$f"
    elif [ "$add" = yes ]; then
        run 2 remove "$f" "$dir/first.txt" && lines err 1 &&
            expect err "$type filters cannot remove keys: use $removers"
    else
        run 2 remove "$f" "$dir/first.txt" && lines err 1 &&
            expect err "$type is static and cannot remove keys: build it again from the remaining keys with \`amq build\`"
    fi
    cmp -s "$f" "$dir/before.amq" || fail "$type: a refused change altered the file"

    # merge: two filters of the same shape; their union holds every key.
    if [ "$add" = no ]; then
        shape= # a static filter is sized to its keys
    else
        shape="-n 4000"
    fi
    # shellcheck disable=SC2086
    "$amq" build -t "$type" $shape -o "$dir/$type-a.amq" "$dir/first.txt" </dev/null &&
        "$amq" build -t "$type" $shape -o "$dir/$type-b.amq" "$dir/second.txt" </dev/null ||
        fail "$type: building the halves"
    if [ "$merge" = yes ]; then
        run 0 merge -o "$dir/$type-union.amq" "$dir/$type-a.amq" "$dir/$type-b.amq" && empty err
        run 0 query -c "$dir/$type-union.amq" "$keys" && expect out 4000
    else
        if [ "$add" = yes ]; then
            instead="add the other filters' keys to it with \`amq add\`"
        else
            instead="build one filter from all the keys with \`amq build\`"
        fi
        run 2 merge -o "$dir/$type-union.amq" "$dir/$type-a.amq" "$dir/$type-b.amq" && lines err 1 &&
            expect err "$type filters cannot be merged; $instead"
        [ -e "$dir/$type-union.amq" ] && fail "$type: a refused merge wrote a file"
    fi

    # export
    if [ "$export" = yes ]; then
        run 0 export --format raw --hex "$f" && lines out 1 && empty err
    else
        run 2 export --format raw --hex "$f" && lines err 1 && empty out &&
            expect err "$type filters have no export format (the .amq file itself is"
    fi

    # dedup: each line once, in the order first seen, for the types that
    # add keys one by one.
    cat "$keys" "$dir/first.txt" "$keys" >"$dir/repeated.txt"
    if [ "$add" = yes ]; then
        run 0 dedup -t "$type" "$dir/repeated.txt" && empty err
        cmp -s "$dir/out" "$keys" || fail "dedup -t $type: not each line once, in order"
    else
        run 2 dedup -t "$type" "$dir/repeated.txt" && lines err 1 && empty out &&
            expect err "$type is static: dedup adds lines as it reads them: use -t bloom,"
    fi
done <"$dir/table"
finish "cli matrix"
