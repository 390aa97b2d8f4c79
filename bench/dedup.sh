#!/bin/sh
# bench/dedup.sh - `amq dedup` beside `sort -u` and `awk '!seen[$0]++'` on
# LINES lines (default 10,000,000) of which about half repeat an earlier
# one: wall time, peak memory (the maximum resident set size that
# /usr/bin/time -f %M reports), lines printed, and the lines amq dropped
# wrongly (distinct lines it took for seen: false positives of its filter).
#
#   bench/dedup.sh [AMQ [LINES [ROUNDS]]]   AMQ defaults to build/amq, ROUNDS to 3
#
# Each round runs the four commands in another order (rotated by one each
# round), so that a slow spell of a shared machine does not fall on one
# command only; the table gives each command's median wall time and peak
# memory over the rounds and the spread (fastest-slowest) of its times.
#
# The input is deterministic: line i is a URL built from the value k_i =
# x_i mod R, where x_i is the minimal standard generator (x <- 48271 x mod
# 2^31 - 1, from x = 42) and R = 0.63 LINES. Drawing LINES values from R
# leaves R (1 - e^(-LINES/R)) = 0.502 LINES distinct: about 50% of the lines
# are repeats, scattered through the input.
#
# The truth is awk's output (each line the first time it is seen, exactly).
# sort -u prints the same set sorted; sorting amq's output and comparing it
# with sort's (comm) counts the lines amq dropped and checks that it printed
# no line twice and none that is not in the input. Both peers run with
# LC_ALL=C (bytewise, their fastest). The work files (about 1 GB for 10^7
# lines) go to AMQ_BENCH_DIR, default $TMPDIR/amq-dedup-bench, removed at
# the end. A round took about 60 s on the 2-core test machine.
set -eu
amq=${1:-build/amq}
count=${2:-10000000}
rounds=${3:-3}
work=${AMQ_BENCH_DIR:-${TMPDIR:-/tmp}/amq-dedup-bench}
export LC_ALL=C

[ -x "$amq" ] || { echo "dedup.sh: no amq at '$amq' (build it, or pass its path)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "dedup.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

awk -v n="$count" 'BEGIN {
    range = int(0.63 * n); x = 42
    for (i = 0; i < n; i++) {
        x = (x * 48271) % 2147483647
        k = x % range
        printf "https://host%d.example/item/%d\n", k % 1000, k
    }
}' >"$work/lines.txt"

# measure NAME COMMAND...: run it with stdout to $work/NAME.out, its time
# and peak memory appended to $work/NAME.times.
measure() {
    name=$1
    shift
    /usr/bin/time -f '%e %M' -o "$work/$name.time" "$@" >"$work/$name.out"
    cat "$work/$name.time" >>"$work/$name.times"
}

run() {
    case $1 in
    awk) measure awk awk '!seen[$0]++' "$work/lines.txt" ;;
    sort) measure sort sort -u "$work/lines.txt" ;;
    amq) measure amq "$amq" dedup "$work/lines.txt" ;;
    amq_n) measure amq_n "$amq" dedup -n $((count * 6 / 10)) "$work/lines.txt" ;;
    esac
}

round=0
while [ "$round" -lt "$rounds" ]; do
    case $((round % 4)) in
    0) order="awk sort amq amq_n" ;;
    1) order="sort amq amq_n awk" ;;
    2) order="amq amq_n awk sort" ;;
    *) order="amq_n awk sort amq" ;;
    esac
    for name in $order; do run "$name"; done
    round=$((round + 1))
done

distinct=$(wc -l <"$work/awk.out")
[ "$distinct" -eq "$(wc -l <"$work/sort.out")" ] || { echo "dedup.sh: awk and sort -u disagree" >&2; exit 1; }

# median FIELD NAME: the median of field FIELD (1 time, 2 memory) of NAME's
# rounds; spread NAME: its fastest and slowest time.
median() {
    cut -d' ' -f"$1" "$work/$2.times" | sort -n |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
spread() {
    cut -d' ' -f1 "$work/$1.times" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'
}

# row LABEL NAME: one line of the table; for amq, the lines wrongly dropped
# (of its last round: the filter and the input are the same every round).
row() {
    seconds=$(median 1 "$2")
    kilobytes=$(median 2 "$2")
    printed=$(wc -l <"$work/$2.out")
    dropped=-
    case $2 in
    amq*)
        sort "$work/$2.out" >"$work/$2.sorted"
        dropped=$(comm -23 "$work/sort.out" "$work/$2.sorted" | wc -l)
        extra=$(comm -13 "$work/sort.out" "$work/$2.sorted" | wc -l)
        twice=$(uniq -d "$work/$2.sorted" | wc -l)
        [ "$extra" -eq 0 ] && [ "$twice" -eq 0 ] ||
            echo "dedup.sh: $1 printed $extra lines not in the input, $twice twice" >&2
        ;;
    esac
    printf '| %-34s | %7.2f | %13s | %8.1f | %10d | %8s |\n' "$1" "$seconds" "$(spread "$2")" \
        "$(echo "$kilobytes" | awk '{ printf "%.1f", $1 / 1024 }')" "$printed" "$dropped"
}

echo "amq dedup beside sort -u and awk: $count lines, $distinct distinct" \
    "($(awk -v n="$count" -v d="$distinct" 'BEGIN { printf "%.1f", 100 * (n - d) / n }')% repeats)," \
    "$(du -m "$work/lines.txt" | cut -f1) MB"
echo "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs;" \
    "$("$amq" --version); awk: $(readlink -f "$(command -v awk)"); LC_ALL=C"
echo
echo "$rounds rounds, contenders alternating; median wall time and peak memory, time spread"
echo
echo "| command                            |  wall s |        spread | peak MiB |      lines |  dropped |"
echo "|------------------------------------|--------:|--------------:|---------:|-----------:|---------:|"
row "amq dedup" amq
row "amq dedup -n $((count * 6 / 10))" amq_n
row "sort -u" sort
row "awk '!seen[\$0]++'" awk
