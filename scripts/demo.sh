#!/bin/sh
# The demo `make demo` runs: the calculator's examples, then a tour of every
# filter type this build has.   demo.sh PATH_TO_AMQ
set -eu
amq=$1
say() { printf '\n$ %s\n' "$*"; }

say amq calc -n 1000000000 -p 0.0001
"$amq" calc -n 1000000000 -p 0.0001
say amq calc -n 100000 -p 1/8192
"$amq" calc -n 100000 -p 1/8192
say amq calc -m 20000 -n 2000
"$amq" calc -m 20000 -n 2000

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
i=0
while [ $i -lt 100000 ]; do echo "https://example.org/page/$i"; i=$((i + 1)); done >"$work/seen.txt"
i=0
while [ $i -lt 100000 ]; do echo "https://example.net/other/$i"; i=$((i + 1)); done >"$work/unseen.txt"

types=$("$amq" --help | sed -n 's/^  types: //p')
for type in $types; do
    say amq build -t "$type" -p 0.01 -o "$type.amq" seen.txt
    "$amq" build -t "$type" -p 0.01 -o "$work/$type.amq" "$work/seen.txt"
    "$amq" info "$work/$type.amq"
    found=$("$amq" query -c "$work/$type.amq" "$work/seen.txt" || true)
    false_positives=$("$amq" query -c "$work/$type.amq" "$work/unseen.txt" || true)
    echo "keys found: $found of 100000; false positives: $false_positives of 100000"
done
[ -n "$types" ] || echo "(no filter types in this build yet)"
