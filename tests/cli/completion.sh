#!/bin/sh
# The bash completion (tools/completion/amq.bash), sourced in bash and asked
# for COMPREPLY as bash would: subcommands, each subcommand's options (the
# same, short and long, as its --help lists), the types after -t (those
# `amq --help` lists), the words of --hash and --format, nothing after an
# option that takes a number, file names otherwise.
#   completion.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"
script=$(cd "$(dirname "$0")/../../tools/completion" && pwd)/amq.bash

# candidates WORD...: the completions bash offers for the last WORD of
# "amq WORD...", sorted, one per line, into $dir/got (run in $dir). The
# command word is the amq under test, which the script asks for the filter
# types' options (amq __options).
candidates() {
    (cd "$dir" && bash -c '
. "$1" || exit 1
amq=$2
shift 2
COMP_WORDS=("$amq" "$@")
COMP_CWORD=$#
_amq
printf "%s\n" "${COMPREPLY[@]}"
' completion "$script" "$amq" "$@") | sed '/^$/d' | LC_ALL=C sort >"$dir/got"
    last="completion of 'amq $*'"
}

# offers WORD...: the candidates are exactly these words (after --).
offers() {
    printf '%s\n' "$@" | sed '/^$/d' | LC_ALL=C sort >"$dir/want"
    cmp -s "$dir/got" "$dir/want" ||
        fail "$last: got [$(tr '\n' ' ' <"$dir/got")], expected [$(tr '\n' ' ' <"$dir/want")]"
}

bash -n "$script" || fail "amq.bash does not parse"

# Subcommands: those amq --help lists.
commands=$("$amq" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
candidates ""
# shellcheck disable=SC2086
offers $commands --help --version
candidates b
offers bench build

# Types after -t: those amq --help lists.
types=$("$amq" --help | sed -n 's/^ *types: *//p')
candidates build -t ""
# shellcheck disable=SC2086
offers $types
candidates dedup --type c
offers counting-bloom cuckoo
candidates build -t cuckoo -o f.amq --hash ""
offers md5 siphash xxh3
candidates export f.amq -f b
offers bip158
candidates build -t bloom -n ""
offers

# Each subcommand's options: the short and long ones its --help lists
# (on the lines that define options: those that start with a dash), -h
# offered as --help. bench's help is amq_bench's, so only a build that has
# amq_bench ($AMQ_TEST_BENCH) can list it.
for command in $commands; do
    [ "$command" = bench ] && [ -z "${AMQ_TEST_BENCH:-}" ] && continue
    "$amq" "$command" --help | /usr/bin/python3 -c '
import re, sys
names = {"--help"}
for line in sys.stdin:
    if line.lstrip().startswith("-"):
        names.update(re.findall(r"(?:(?<=\s)|^)(--?[a-z0-9][a-z0-9-]*)", line.strip()))
names.discard("-h")  # offered as --help
print("\n".join(sorted(n for n in names if n.startswith("--") or len(n) == 2)))
' >"$dir/options"
    # shellcheck disable=SC2046
    candidates "$command" -
    offers $(cat "$dir/options")
done

# File names for inputs, filters and -o; directories too.
mkdir -p "$dir/sub"
: >"$dir/seen.amq"
: >"$dir/seen.txt"
candidates query se
offers seen.amq seen.txt
candidates build -t bloom -o s
offers seen.amq seen.txt sub

finish "cli completion"
