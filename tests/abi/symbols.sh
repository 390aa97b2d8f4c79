#!/bin/sh
# The shared library exports exactly the documented API: the names in
# tests/abi/symbols.txt, which are the functions the public headers declare
# with AMQ_API. Any other symbol would be a promise nobody meant to make
# (everything else is built hidden: CMAKE_C_VISIBILITY_PRESET), and a name
# the list has but the library lacks breaks programs linked against it.
#   symbols.sh LIBRARY SYMBOL_LIST INCLUDE_DIR SCRATCH_DIR
set -eu
library=$1 list=$2 include=$3 scratch=$4
mkdir -p "$scratch"
export LC_ALL=C

# __start_X / __stop_X are the linker's bounds of section X, which a
# coverage-instrumented build (libFuzzer's sancov sections) exports.
nm -D --defined-only "$library" | awk 'NF == 3 && $3 !~ /^__(start|stop)_/ { print $3 }' |
    sort -u >"$scratch/exported"
# Every public declaration is one line starting "AMQ_API <type> amq_name(".
grep -h '^AMQ_API [^(]*(' "$include"/amq/*.h | sed 's/(.*//; s/.*[ *]//' | sort -u \
    >"$scratch/declared"
sort -u "$list" >"$scratch/listed"
# The stable tier: the declarations outside the headers' experimental
# blocks (#ifdef AMQ_EXPERIMENTAL ... #endif /* AMQ_EXPERIMENTAL */),
# listed in stable.txt beside the list.
stable_list=$(dirname "$list")/stable.txt
awk '/^#ifdef AMQ_EXPERIMENTAL$/ { hidden = 1 } /^#endif \/\* AMQ_EXPERIMENTAL \*\/$/ { hidden = 0 }
     !hidden && /^AMQ_API [^(]*\(/ { print }' "$include"/amq/*.h | sed 's/(.*//; s/.*[ *]//' |
    sort -u >"$scratch/stable"

failed=0
if ! cmp -s "$scratch/listed" "$list"; then
    echo "$list is not sorted (LC_ALL=C) with one name a line"
    failed=1
fi
report() { # file-a file-b what-a-lacks what-b-lacks
    if ! cmp -s "$1" "$2"; then
        comm -13 "$1" "$2" | awk -v what="$3" '{ print "  " what ": " $0 }'
        comm -23 "$1" "$2" | awk -v what="$4" '{ print "  " what ": " $0 }'
        failed=1
    fi
}
report "$scratch/listed" "$scratch/exported" \
    "exported, not in the list" "in the list, not exported"
report "$scratch/listed" "$scratch/declared" \
    "declared with AMQ_API in include/amq, not in the list" \
    "in the list, not declared with AMQ_API in include/amq"
if [ -f "$stable_list" ]; then
    report "$stable_list" "$scratch/stable" \
        "declared in the stable tier, not in stable.txt" \
        "in stable.txt, not declared in the stable tier (experimental, or gone)"
else
    echo "$stable_list is missing"
    failed=1
fi

if [ "$failed" -ne 0 ]; then
    cat <<MSG
The exported symbols differ from $list.
A symbol that is not public API: drop AMQ_API from it (hidden is the
default). A deliberate change of the API: declare the function with AMQ_API
in include/amq/, say so in CHANGELOG.md, and update the list:
  nm -D --defined-only $library | awk 'NF == 3 { print \$3 }' | LC_ALL=C sort -u >$list
and the stable tier's, stable.txt, as tests/abi/README.md says.
MSG
    exit 1
fi
echo "symbols: $(wc -l <"$scratch/listed") exported, as listed and declared;" \
    "$(wc -l <"$scratch/stable") of them the stable tier"
