#!/bin/sh
# What `make demo` runs: every filter type built from a word list at about
# 1% and about 0.1% false positives and asked about every word and as many
# non-words (bench/demo/amq_demo), the table of what that measured, its two
# plots, and the table and plots put into the README.
#
#   scripts/demo.sh BUILD_DIR
#
# BUILD_DIR holds the amq tool and bench/amq_demo. The environment can
# change what is read and written (the tests use this):
#   AMQ_DEMO_WORDS   the word list (default: Debian's wamerican-insane)
#   AMQ_DEMO_RUNS    runs of each measurement, whose median is kept (5)
#   AMQ_DEMO_README  the file whose demo section is replaced (README.md)
#   AMQ_DEMO_IMG     where the plots go (docs/img)
# The README's section lies between the lines "<!-- demo: begin -->" and
# "<!-- demo: end -->"; what is between them is replaced.
set -eu

build=${1:?usage: scripts/demo.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
words=${AMQ_DEMO_WORDS:-/usr/share/dict/american-english-insane}
runs=${AMQ_DEMO_RUNS:-5}
readme=${AMQ_DEMO_README:-$root/README.md}
img=${AMQ_DEMO_IMG:-$root/docs/img}
amq=$build/amq
demo=$build/bench/amq_demo

fail() {
    echo "demo: $*" >&2
    exit 2
}
[ -x "$demo" ] || fail "$demo is not built: run make demo"
[ -r "$words" ] || fail "no word list at $words: install Debian's wamerican-insane (sh scripts/install-deps.sh --demo)"
grep -q '^<!-- demo: begin -->$' "$readme" && grep -q '^<!-- demo: end -->$' "$readme" ||
    fail "$readme has no lines <!-- demo: begin --> and <!-- demo: end --> to put the table between"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

lines=$(wc -l <"$words" | tr -d ' ')
printf '\n$ amq calc -n %s -p 0.01\n' "$lines"
"$amq" calc -n "$lines" -p 0.01

echo
"$demo" --runs "$runs" --tsv "$work/demo.tsv" "$words" >"$work/table.md"
cat "$work/table.md"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
{
    echo "<!-- demo: begin -->"
    echo "Measured by \`make demo\` on $(date -u +%Y-%m-%d), ${cpu:-this machine} ($(nproc 2>/dev/null || echo "?") cores):"
    echo "$(basename "$words"), $(sed -n '1s/ distinct words.*//p' "$work/table.md") words;"
    echo "every filter is asked about each word and as many random-letter non-words."
    echo
    sed -n '/^|/p' "$work/table.md"
    echo
    echo "![bits per key against measured false-positive rate](docs/img/space-vs-fpr.png)"
    echo "![query time per key](docs/img/query-speed.png)"
    echo "<!-- demo: end -->"
} >"$work/section.md"
awk -v section="$work/section.md" '
    $0 == "<!-- demo: begin -->" { while ((getline line < section) > 0) print line; skipping = 1; next }
    $0 == "<!-- demo: end -->" { skipping = 0; next }
    !skipping { print }
' "$readme" >"$work/readme"
cat "$work/readme" >"$readme"
echo "demo: the table is in $readme"

command -v gnuplot >/dev/null 2>&1 || fail "gnuplot is not installed, so there are no plots: sh scripts/install-deps.sh --demo"
mkdir -p "$img"
labels=$(awk -F '\t' '!/^#/ && !seen[$1]++ { printf "%s ", $1 }' "$work/demo.tsv")
gnuplot -e "data='$work/demo.tsv'; labels='$labels'; out='$img/space-vs-fpr.png'" "$root/scripts/plot-space-vs-fpr.gp"
gnuplot -e "data='$work/demo.tsv'; out='$img/query-speed.png'" "$root/scripts/plot-query-speed.gp"
echo "demo: the plots are $img/space-vs-fpr.png and $img/query-speed.png"
