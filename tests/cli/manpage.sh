#!/bin/sh
# The man page docs/amq.1: it renders without a warning (groff -ww, with
# tbl), carries the tool's version, has a section for every subcommand
# `amq --help` lists, names every type, and documents every option each
# subcommand's --help shows.
#   manpage.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"
page=$(dirname "$0")/../../docs/amq.1

groff -t -man -Tutf8 -ww -P -cbou "$page" >"$dir/rendered" 2>"$dir/warnings" ||
    fail "groff failed on amq.1"
[ -s "$dir/warnings" ] && fail "groff warns about amq.1: $(head -n 3 "$dir/warnings")"
grep -q "EXIT STATUS" "$dir/rendered" || fail "amq.1 renders without its EXIT STATUS section"

version=$("$amq" --version | sed 's/^amq //')
grep -q "^\.TH AMQ 1 .*\"amq $version\"" "$page" || fail "amq.1's .TH does not say amq $version"

commands=$("$amq" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
for command in $commands; do
    grep -q "^\.SS \"amq $command" "$page" || fail "amq.1 has no section for amq $command"
    # Options on the lines of --help that define them (those that start
    # with a dash), as the page writes them: \-\-name.
    "$amq" "$command" --help | /usr/bin/python3 -c '
import re, sys
for line in sys.stdin:
    if line.lstrip().startswith("-"):
        for name in re.findall(r"(?:(?<=\s)|^)--([a-z0-9][a-z0-9-]*)", line.strip()):
            print(name)
' | sort -u >"$dir/options"
    while read -r option; do
        [ "$option" = help ] && continue
        escaped=$(echo "$option" | sed 's/-/\\\\-/g')
        grep -q -- "\\\\-\\\\-$escaped" "$page" || fail "amq.1 does not document amq $command --$option"
    done <"$dir/options"
done

for type in $("$amq" --help | sed -n 's/^ *types: *//p'); do
    grep -qF "$(echo "$type" | sed 's/-/\\-/g')" "$page" || fail "amq.1 does not name the type $type"
done

finish "cli manpage"
