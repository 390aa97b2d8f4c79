#!/bin/sh
# `amq dedup`: each line printed the first time it is seen, in order, never
# twice, compared with awk '!seen[$0]++'; the default grows past -n and
# keeps the rate (lines wrongly dropped within a binomial bound of P times
# the distinct lines); several inputs share what was seen; --hex and CRLF
# lines compare keys, printing lines as written; a cuckoo filter past its
# capacity is an error naming the line; no input prints nothing (exit 1).
#   dedup.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

# 60000 lines drawn from 30000 values (a fixed LCG): about 23000 distinct,
# repeats scattered.
awk 'BEGIN { x = 7; for (i = 0; i < 60000; i++) { x = (x * 48271) % 2147483647;
    printf "line-%d\n", x % 30000 } }' >"$dir/lines.txt"
awk '!seen[$0]++' "$dir/lines.txt" >"$dir/expected.txt"
distinct=$(wc -l <"$dir/expected.txt" | tr -d ' ')

# subsequence FILE: the output holds no line twice and is, in order, the
# expected lines less some (those wrongly dropped); prints how many.
subsequence() {
    /usr/bin/python3 -c '
import sys
got = open(sys.argv[1]).read().splitlines()
want = open(sys.argv[2]).read().splitlines()
assert len(set(got)) == len(got), "a line printed twice"
at = 0
for line in got:
    while at < len(want) and want[at] != line:
        at += 1
    assert at < len(want), "%r out of order or never in the input" % line
    at += 1
print(len(want) - len(got))
' "$dir/out" "$1"
}

# The default, and a first size far below the distinct lines: the filter
# grows, the output is awk's.
run 0 dedup "$dir/lines.txt" && empty err
cmp -s "$dir/out" "$dir/expected.txt" || fail "dedup: not awk's output ($(subsequence "$dir/expected.txt") dropped)"
run 0 dedup -n 100 "$dir/lines.txt" && empty err
cmp -s "$dir/out" "$dir/expected.txt" || fail "dedup -n 100: not awk's output"

# A loose rate: lines are dropped, each new line with probability at most
# P, so at most P * distinct on average (+ 4 sigma).
run 0 dedup -n 1000 -p 0.05 "$dir/lines.txt"
dropped=$(subsequence "$dir/expected.txt") || fail "dedup -p 0.05: $dropped"
limit=$(awk -v n="$distinct" 'BEGIN { m = 0.05 * n; printf "%d", m + 4 * sqrt(m) }')
[ "$dropped" -le "$limit" ] || fail "dedup -p 0.05 dropped $dropped of $distinct lines (at most $limit)"

# A fixed-size filter past its size: still never a line twice, in order;
# every line is read, and stderr says once how far past its size the filter
# went and the rate that means; exit 3.
run 3 dedup -t bloom -n 1000 -p 0.01 "$dir/lines.txt" && lines err 1 &&
    expect err "amq: dedup: warning: the filter of lines seen holds" &&
    expect err "times the 1000 it was made for: its false-positive rate is now" &&
    expect err "give a larger -n, or leave out -t"
subsequence "$dir/expected.txt" >/dev/null || fail "dedup -t bloom: not a subsequence of awk's output"

# Many more distinct lines than -n (200000 for 20000): the default grows and
# drops none (at P = 1e-6, 0.2 expected); so does cuckoo, which grows too.
seq 1 200000 | sed 's/^/many-/' >"$dir/many.txt"
run 0 dedup -n 20000 "$dir/many.txt" && empty err
cmp -s "$dir/out" "$dir/many.txt" || fail "dedup -n 20000 of 200000 distinct lines dropped $(($(wc -l <"$dir/many.txt") - $(wc -l <"$dir/out"))) lines"
run 0 dedup -t cuckoo -n 100 "$dir/lines.txt" && empty err
subsequence "$dir/expected.txt" >/dev/null || fail "dedup -t cuckoo: not a subsequence of awk's output"

# --stats: read = printed + dropped, the filter named, and the expected
# count of wrongly dropped lines within a few sigma of the real one (the
# real one is known here: awk's output).
run 3 dedup --stats -t bloom -n 10000 -p 0.01 "$dir/lines.txt"
printed=$(wc -l <"$dir/out" | tr -d ' ')
/usr/bin/python3 -c '
import re, sys, math
err = open(sys.argv[1]).read()
def field(name):
    m = re.search(r"amq dedup: " + name + r" +([0-9.e+-]+)", err)
    assert m, (name, err)
    return float(m.group(1))
read, printed, dropped = field("lines read"), field("lines printed"), field("lines dropped")
assert read == 60000 and printed == int(sys.argv[2]) and read == printed + dropped, err
assert "filter            bloom," in err and "made for 10000 lines" in err, err
wrong = int(sys.argv[3]) - printed          # distinct lines not printed
expected = field("wrongly dropped")
assert abs(wrong - expected) <= 5 * math.sqrt(expected) + 5, (wrong, expected)
assert 0 < field("rate now") < 1, err
' "$dir/err" "$printed" "$distinct" || fail "dedup --stats"
run 0 dedup --stats "$dir/lines.txt" && expect err "amq dedup: lines printed     $distinct" &&
    expect err "filter            scalable-bloom"

# Several inputs, and '-': a line seen in one is not printed from another.
head -n 30000 "$dir/lines.txt" >"$dir/a.txt"
tail -n 30000 "$dir/lines.txt" >"$dir/b.txt"
"$amq" dedup "$dir/a.txt" - <"$dir/b.txt" >"$dir/out" 2>"$dir/err" || fail "dedup a.txt -"
cmp -s "$dir/out" "$dir/expected.txt" || fail "dedup a.txt - <b.txt: not awk's output"

# --hex: lines are compared by their bytes; printed as written. CRLF ends
# are dropped before comparing.
printf '00ff\n00FF\nabcd\n00ff\n' >"$dir/hex.txt"
run 0 dedup --hex "$dir/hex.txt" && lines out 2 && expect out "00ff" && expect out "abcd"
printf 'x\r\nx\ny\r\n' >"$dir/crlf.txt"
run 0 dedup "$dir/crlf.txt" && lines out 2
printf 'x\r\ny\r\n' | cmp -s - "$dir/out" || fail "dedup of CRLF lines: $(od -c "$dir/out")"
printf '00ff\nzz\n' >"$dir/badhex.txt"
run 2 dedup --hex "$dir/badhex.txt" && expect err "badhex.txt:2: not a hex key"


# Nothing in, nothing out.
: >"$dir/empty.txt"
run 1 dedup "$dir/empty.txt" && empty out && empty err

finish "cli dedup"
