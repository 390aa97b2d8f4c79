#!/bin/sh
# Tests amq_demo and scripts/demo.sh on a small generated word list:
#   sh test.sh BUILD_DIR SOURCE_DIR SCRATCH_DIR
# The list has repeated words, empty lines and CRLF endings; every type of
# the build must be in the table, the Bloom filter's measured rate must be
# within 5 standard deviations of the rate asked for, bad arguments must be
# refused, and the README section must be replaced and nothing else.
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

# scripts/demo.sh replaces the README's section, and only it, each time.
printf 'before\n<!-- demo: begin -->\nold table\n<!-- demo: end -->\nafter\n' >"$dir/README.md"
run_script() {
    AMQ_DEMO_WORDS="$dir/words.txt" AMQ_DEMO_RUNS=1 AMQ_DEMO_README="$dir/README.md" \
        AMQ_DEMO_IMG="$dir/img" sh "$source/scripts/demo.sh" "$build" >"$dir/out" 2>"$dir/err"
}
run_script
code=$?
if command -v gnuplot >/dev/null 2>&1; then
    [ "$code" -eq 0 ] || { fail "demo.sh exited $code"; sed 's/^/  /' "$dir/err"; }
    for plot in space-vs-fpr query-speed; do
        [ "$(head -c 4 "$dir/img/$plot.png" 2>/dev/null | od -An -c | tr -d ' ')" = "211PNG" ] ||
            fail "demo.sh wrote no PNG $plot.png"
    done
else
    [ "$code" -eq 2 ] || fail "demo.sh without gnuplot exited $code, expected 2"
    grep -q "gnuplot is not installed" "$dir/err" || fail "demo.sh did not say gnuplot is missing"
fi
grep -q "old table" "$dir/README.md" && fail "demo.sh left the old table"
[ "$(head -n 1 "$dir/README.md")" = before ] && [ "$(tail -n 1 "$dir/README.md")" = after ] ||
    fail "demo.sh changed the README outside its section"
grep -q "^| bloom |" "$dir/README.md" || fail "demo.sh put no table in the README"
lines=$(wc -l <"$dir/README.md")
run_script
[ "$(wc -l <"$dir/README.md")" -eq "$lines" ] || fail "a second demo.sh run changed the README's length"

printf 'no markers here\n' >"$dir/README.md"
run_script
code=$?
[ "$code" -eq 2 ] || fail "demo.sh on a README without markers exited $code, expected 2"
[ "$(cat "$dir/README.md")" = "no markers here" ] || fail "demo.sh changed a README without markers"

if [ "$failures" -ne 0 ]; then
    echo "demo: $failures failure(s)"
    exit 1
fi
echo "demo: all checks passed"
