#!/bin/sh
# The filter types' options on the command line come from the library's
# tables (amq_family_option), which `amq __options TYPE` prints: for every
# type `amq --help` lists, `amq build --help` and `amq build -t TYPE --help`
# list each option the library reports for it (long, and short when it has
# one), with its words when it takes one of a few, and `amq build` knows
# each one (a missing value is refused as missing, not as unknown).
#   options_table.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

types=$("$amq" --help | sed -n 's/^ *types: *//p')
[ -n "$types" ] || fail "amq --help lists no types"
"$amq" build --help >"$dir/all-help" || fail "amq build --help failed"

# has FILE LABEL: an option line of FILE (one that starts with a dash)
# begins with LABEL, followed by a space or the end of the line.
has() {
    awk -v label="$2" '/^ +-/ {
        sub(/^ +/, "")
        rest = substr($0, length(label) + 1, 1)
        if (index($0, label) == 1 && (rest == "" || rest == " ")) found = 1
    } END { exit !found }' "$1" || fail "$(basename "$1") of $type lacks an option line '$2'"
}

for type in $types; do
    run 0 __options "$type" && empty err
    [ -s "$dir/out" ] || fail "the library reports no option for $type"
    cp "$dir/out" "$dir/options"
    run 0 build -t "$type" --help && empty err && expect out "Options of $type"
    cp "$dir/out" "$dir/type-help"
    count=0
    while read -r name letter kind words; do
        count=$((count + 1))
        label="--$name"
        [ "$letter" != - ] && label="-$letter, --$name"
        [ "$kind" = choice ] && label="$label $(echo "$words" | tr ' ' '|')"
        has "$dir/type-help" "$label"
        has "$dir/all-help" "$label"
        # build takes it: a value it lacks is missing, not the option unknown.
        if [ "$kind" = flag ]; then
            run 2 build -t "$type" -o "$dir/x.amq" "--$name=1" &&
                expect err "option '--$name' takes no value"
        else
            run 2 build -t "$type" -o "$dir/x.amq" "--$name" &&
                expect err "option '--$name' needs a value"
        fi
    done <"$dir/options"
    # The type's help lists exactly its options.
    listed=$(sed -n '/^Options of /,/^$/p' "$dir/type-help" | grep -cE '^ +-')
    [ "$listed" = "$count" ] ||
        fail "amq build -t $type --help lists $listed options; the library reports $count"
done
[ ! -e "$dir/x.amq" ] || fail "a refused build wrote its output"

# The completion's source, for every type at once: each name once.
run 0 __options && empty err
dups=$(cut -d' ' -f1 "$dir/out" | sort | uniq -d)
[ -z "$dups" ] || fail "amq __options lists twice: $dups"
run 2 __options no-such-type && expect err "unknown filter type 'no-such-type'"

finish "cli options_table"
