#!/bin/sh
# Tests amq_demo and scripts/demo.sh on a small generated word list:
#   sh test.sh BUILD_DIR SOURCE_DIR SCRATCH_DIR
# The list has repeated words, empty lines and CRLF endings; every type of
# the build must be in the table, the Bloom filter's measured rate must be
# within 5 standard deviations of the rate asked for, bad arguments must be
# refused; scripts/demo.sh must write its table and plots into the output
# directory it is given and leave the source tree alone, and its --readme
# step must replace the README's section and nothing else.
set -u
build=$1 source=$2 dir=$3
demo=$build/bench/amq_demo
rm -rf "$dir"
mkdir -p "$dir"
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# 40,000 lines: pseudo-random lower-case words of 3-12 letters from a
# linear congruential generator; every 10th line repeats an earlier word,
# every 1000th is empty, and odd lines end in CRLF.
awk 'BEGIN {
    state = 12345
    for (i = 0; i < 40000; i++) {
        if (i % 1000 == 999) { print ""; continue }
        if (i % 10 == 9) { word = seen[int(i / 2)] } else {
            state = (state * 1103515245 + 12345) % 2147483648
            len = 3 + state % 10; word = ""
            for (j = 0; j < len; j++) {
                state = (state * 1103515245 + 12345) % 2147483648
                word = word substr("abcdefghijklmnopqrstuvwxyz", int(state / 65536) % 26 + 1, 1)
            }
        }
        seen[i] = word
        printf "%s%s\n", word, (i % 2 ? "\r" : "")
    }
}' >"$dir/words.txt"
distinct=$(tr -d '\r' <"$dir/words.txt" | grep -v '^$' | sort -u | wc -l | tr -d ' ')

"$demo" --runs 1 --tsv "$dir/demo.tsv" "$dir/words.txt" >"$dir/table.md" 2>"$dir/err"
code=$?
[ "$code" -eq 0 ] || { fail "amq_demo exited $code"; sed 's/^/  /' "$dir/err"; }
grep -q "^$distinct distinct words" "$dir/table.md" ||
    fail "amq_demo did not count $distinct distinct words: $(head -n 1 "$dir/table.md")"
for type in $("$build/amq" --help | sed -n 's/^  types: //p'); do
    grep -q "^| $type[ |]" "$dir/table.md" || fail "the table has no row for $type"
done
rows=$(($(grep -c '^| ' "$dir/table.md") - 1)) # less the header
tsv_rows=$(grep -vc '^#' "$dir/demo.tsv")
[ "$rows" -eq "$tsv_rows" ] || fail "$rows table rows but $tsv_rows data rows"
# The Bloom filter's rows: p as asked, and false positives binomial(queries,
# p) within 5 sigma.
check_bloom_rows() { # data file, the two rates asked
    awk -F '\t' -v first="$2" -v second="$3" '$1 == "\"bloom\"" {
        mean = $12 * $2; sigma = sqrt($12 * $2 * (1 - $2))
        if ($11 < mean - 5 * sigma || $11 > mean + 5 * sigma) {
            printf "bloom at p = %g: %d false positives of %d, expected %.0f +- %.0f\n", $2, $11, $12, mean, 5 * sigma
            bad = 1
        }
        asked[++checked] = $2
    } END {
        if (checked != 2) { print "expected 2 bloom rows, found " checked; bad = 1 }
        else if (asked[1] != first || asked[2] != second) { print "bloom rows at p = " asked[1] ", " asked[2] ", asked " first ", " second; bad = 1 }
        exit bad
    }' "$1"
}
check_bloom_rows "$dir/demo.tsv" 0.01 0.001 || fail "the Bloom filter's rows"

# Other rates, as docs/PERFORMANCE.md's table of every family asks.
"$demo" --runs 1 --rates 0.4%,1/10000 --tsv "$dir/rates.tsv" "$dir/words.txt" >"$dir/rates.md" 2>"$dir/err" ||
    { fail "amq_demo --rates exited $?"; sed 's/^/  /' "$dir/err"; }
check_bloom_rows "$dir/rates.tsv" 0.004 0.0001 || fail "the Bloom filter's rows with --rates"

# Bad arguments: refused with a message, exit 2.
refused() {
    expected=$1
    shift
    "$demo" "$@" >"$dir/out" 2>"$dir/err"
    code=$?
    [ "$code" -eq 2 ] || fail "amq_demo $* exited $code, expected 2"
    grep -qF -- "$expected" "$dir/err" || fail "amq_demo $*: no \"$expected\" in: $(cat "$dir/err")"
}
: >"$dir/empty.txt"
printf '\n\r\n\n' >"$dir/blank.txt"
refused "cannot open the word list" "$dir/no-such-file"
refused "has no words" "$dir/empty.txt"
refused "is not a regular file" "$dir"
refused "has no words" "$dir/blank.txt"
refused "--runs takes a number from 1 to 99" --runs 0 "$dir/words.txt"
refused "--runs takes a number from 1 to 99" --runs 1x "$dir/words.txt"
refused "one word list only" "$dir/words.txt" "$dir/words.txt"
for rates in 0.001,0.01 1,0.1 0.01,0 0.01 0.01,0.001x x,y 0.01,,0.001; do
    refused "--rates takes two rates in (0, 1), the larger first" --rates "$rates" "$dir/words.txt"
done
refused "give the word list"
refused "unknown option" --plot "$dir/words.txt"

# scripts/demo.sh writes what it measured into the output directory it is
# given, and nothing into the source tree: the README's demo section and
# docs/img are as they were.
tracked() { # the README's demo section and the plots in docs/img
    sed -n '/^<!-- demo: begin -->$/,/^<!-- demo: end -->$/p' "$source/README.md"
    cksum "$source"/docs/img/*.png 2>/dev/null
}
tracked >"$dir/tracked.before"
run_script() { # demo.sh's arguments
    AMQ_DEMO_WORDS="$dir/words.txt" AMQ_DEMO_RUNS=1 sh "$source/scripts/demo.sh" "$@" \
        >"$dir/out" 2>"$dir/err"
}
have_gnuplot() { command -v gnuplot >/dev/null 2>&1; }
run_script "$build" "$dir/out.d"
code=$?
if have_gnuplot; then
    [ "$code" -eq 0 ] || { fail "demo.sh exited $code"; sed 's/^/  /' "$dir/err"; }
    for plot in space-vs-fpr query-speed; do
        [ "$(head -c 4 "$dir/out.d/$plot.png" 2>/dev/null | od -An -c | tr -d ' ')" = "211PNG" ] ||
            fail "demo.sh wrote no PNG $plot.png"
    done
    grep -qF "demo: the table is in $dir/out.d/table.md" "$dir/out" ||
        fail "demo.sh did not say where the table is: $(tail -n 1 "$dir/out")"
    grep -qF "plots: $dir/out.d/space-vs-fpr.png, $dir/out.d/query-speed.png" "$dir/out" ||
        fail "demo.sh did not say where the plots are: $(tail -n 1 "$dir/out")"
else
    [ "$code" -eq 2 ] || fail "demo.sh without gnuplot exited $code, expected 2"
    grep -q "gnuplot is not installed" "$dir/err" || fail "demo.sh did not say gnuplot is missing"
    grep -qF "the table is in $dir/out.d/table.md" "$dir/err" ||
        fail "demo.sh without gnuplot did not say where the table is: $(cat "$dir/err")"
fi
grep -q "^| bloom |" "$dir/out.d/table.md" || fail "demo.sh put no table in table.md"
grep -q "^words.txt, $distinct words;" "$dir/out.d/table.md" ||
    fail "table.md does not name the word list and its $distinct words"
[ "$(grep -vc '^#' "$dir/out.d/demo.tsv")" -eq "$tsv_rows" ] || fail "demo.sh wrote no demo.tsv"
tracked >"$dir/tracked.after"
cmp -s "$dir/tracked.before" "$dir/tracked.after" ||
    fail "demo.sh changed the README's demo section or docs/img"
# Without an output directory: BUILD_DIR/demo (make demo's build-release/demo),
# here in a build directory of links to the real one's programs.
mkdir -p "$dir/build/bench"
ln -s "$build/amq" "$dir/build/amq"
ln -s "$build/bench/amq_demo" "$dir/build/bench/amq_demo"
run_script "$dir/build"
grep -q "^| bloom |" "$dir/build/demo/table.md" 2>/dev/null ||
    fail "demo.sh without an output directory wrote no BUILD_DIR/demo/table.md"

# demo.sh --readme replaces the README's section, and only it, each time,
# and copies the plots.
printf 'before\n<!-- demo: begin -->\nold table\n<!-- demo: end -->\nafter\n' >"$dir/README.md"
readme_step() {
    AMQ_DEMO_README="$dir/README.md" AMQ_DEMO_IMG="$dir/img" run_script --readme "$dir/out.d"
}
readme_step
code=$?
if have_gnuplot; then
    [ "$code" -eq 0 ] || { fail "demo.sh --readme exited $code"; sed 's/^/  /' "$dir/err"; }
    for plot in space-vs-fpr query-speed; do
        cmp -s "$dir/out.d/$plot.png" "$dir/img/$plot.png" || fail "demo.sh --readme did not copy $plot.png"
    done
    grep -q "old table" "$dir/README.md" && fail "demo.sh --readme left the old table"
    [ "$(head -n 1 "$dir/README.md")" = before ] && [ "$(tail -n 1 "$dir/README.md")" = after ] ||
        fail "demo.sh --readme changed the README outside its section"
    grep -q "^| bloom |" "$dir/README.md" || fail "demo.sh --readme put no table in the README"
    grep -q "](docs/img/query-speed.png)$" "$dir/README.md" || fail "the README does not show the plots"
    lines=$(wc -l <"$dir/README.md")
    readme_step
    [ "$(wc -l <"$dir/README.md")" -eq "$lines" ] || fail "a second --readme changed the README's length"
else
    # No plots to show: the README is left as it was.
    [ "$code" -eq 2 ] || fail "demo.sh --readme without plots exited $code, expected 2"
    grep -q "no plot at" "$dir/err" || fail "demo.sh --readme did not say the plots are missing"
    grep -q "old table" "$dir/README.md" || fail "demo.sh --readme without plots changed the README"
fi

printf 'no markers here\n' >"$dir/README.md"
: >"$dir/out.d/space-vs-fpr.png"
: >"$dir/out.d/query-speed.png"
readme_step
code=$?
[ "$code" -eq 2 ] || fail "demo.sh --readme on a README without markers exited $code, expected 2"
grep -q "no lines <!-- demo: begin -->" "$dir/err" || fail "demo.sh --readme: $(cat "$dir/err")"
[ "$(cat "$dir/README.md")" = "no markers here" ] || fail "demo.sh --readme changed a README without markers"

if [ "$failures" -ne 0 ]; then
    echo "demo: $failures failure(s)"
    exit 1
fi
echo "demo: all checks passed"
