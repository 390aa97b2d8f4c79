#!/bin/sh
# What `make demo` and `make readme-demo` run.
#
#   scripts/demo.sh BUILD_DIR [OUT_DIR]
#       every filter type built from a word list at about 1% and about 0.1%
#       false positives and asked about every word and as many non-words
#       (BUILD_DIR/bench/amq_demo); what that measured goes to OUT_DIR
#       (default BUILD_DIR/demo): table.md (the table, in markdown),
#       demo.tsv (the same, tab-separated, for plotting), space-vs-fpr.png
#       and query-speed.png (gnuplot).
#   scripts/demo.sh --readme OUT_DIR
#       puts OUT_DIR's table into README.md and its plots into docs/img: how
#       the README's figures are refreshed, by `make readme-demo`. A plain
#       demo run writes nothing in the source tree, so a user's checkout
#       stays as it was.
#
# The environment can change what is read and written (the tests use this):
#   AMQ_DEMO_WORDS   the word list (default: Debian's wamerican-insane)
#   AMQ_DEMO_RUNS    runs of each measurement, whose median is kept (5)
#   AMQ_DEMO_README  the file whose demo section --readme replaces (README.md)
#   AMQ_DEMO_IMG     where --readme copies the plots (docs/img)
# The README's section lies between the lines "<!-- demo: begin -->" and
# "<!-- demo: end -->"; what is between them is replaced.
set -eu

usage="usage: scripts/demo.sh BUILD_DIR [OUT_DIR] | scripts/demo.sh --readme OUT_DIR"
root=$(cd "$(dirname "$0")/.." && pwd)
plots="space-vs-fpr.png query-speed.png"

fail() {
    echo "demo: $*" >&2
    exit 2
}

# ---- --readme: OUT_DIR's table and plots into the README and docs/img ------
if [ "${1:-}" = --readme ]; then
    out=${2:?$usage}
    readme=${AMQ_DEMO_README:-$root/README.md}
    img=${AMQ_DEMO_IMG:-$root/docs/img}
    [ -r "$out/table.md" ] || fail "no table at $out/table.md: run make demo first"
    for plot in $plots; do
        [ -r "$out/$plot" ] || fail "no plot at $out/$plot: install gnuplot (sh scripts/install-deps.sh --demo) and run make demo"
    done
    grep -q '^<!-- demo: begin -->$' "$readme" && grep -q '^<!-- demo: end -->$' "$readme" ||
        fail "$readme has no lines <!-- demo: begin --> and <!-- demo: end --> to put the table between"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    {
        echo "<!-- demo: begin -->"
        cat "$out/table.md"
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
    mkdir -p "$img"
    for plot in $plots; do
        cp "$out/$plot" "$img/$plot"
    done
    echo "demo: $readme's table and the plots in $img are now those of $out"
    exit 0
fi

# ---- a demo run: everything into OUT_DIR ------------------------------------
build=${1:?$usage}
out=${2:-$build/demo}
words=${AMQ_DEMO_WORDS:-/usr/share/dict/american-english-insane}
runs=${AMQ_DEMO_RUNS:-5}
amq=$build/amq
demo=$build/bench/amq_demo

[ -x "$demo" ] || fail "$demo is not built: run make demo"
[ -r "$words" ] || fail "no word list at $words: install Debian's wamerican-insane (sh scripts/install-deps.sh --demo)"
mkdir -p "$out" || fail "cannot make $out"
# Plots of an earlier run must not pass for this run's.
for plot in $plots; do
    rm -f "$out/$plot"
done

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
    echo "Measured by \`make demo\` on $(date -u +%Y-%m-%d), ${cpu:-this machine} ($(nproc 2>/dev/null || echo "?") cores):"
    echo "$(basename "$words"), $(sed -n '1s/ distinct words.*//p' "$work/table.md") words;"
    echo "every filter is asked about each word and as many random-letter non-words."
    echo
    sed -n '/^|/p' "$work/table.md"
} >"$out/table.md"
cp "$work/demo.tsv" "$out/demo.tsv"
echo
table="the table is in $out/table.md (tab-separated: $out/demo.tsv)"
command -v gnuplot >/dev/null 2>&1 ||
    fail "$table; no plots, gnuplot is not installed: sh scripts/install-deps.sh --demo"
# Plotted in the scratch directory: gnuplot's -e strings quote the paths.
labels=$(awk -F '\t' '!/^#/ && !seen[$1]++ { printf "%s ", $1 }' "$work/demo.tsv")
gnuplot -e "data='$work/demo.tsv'; labels='$labels'; out='$work/space-vs-fpr.png'" "$root/scripts/plot-space-vs-fpr.gp"
gnuplot -e "data='$work/demo.tsv'; out='$work/query-speed.png'" "$root/scripts/plot-query-speed.gp"
for plot in $plots; do
    cp "$work/$plot" "$out/$plot"
done
echo "demo: $table; plots: $out/space-vs-fpr.png, $out/query-speed.png"
