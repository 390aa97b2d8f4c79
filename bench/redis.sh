#!/bin/sh
# bench/redis.sh - the module under load beside Redis's own set, in one
# server and one run: redis-benchmark with 50 connections and a pipeline
# of 16 drives BF.ADD / BF.EXISTS, CF.ADDNX / CF.EXISTS and SADD / SISMEMBER
# on ITEMS random items (item:0 .. item:ITEMS-1, drawn with repeats, as
# redis-benchmark's -r does), each round ROUNDS times, the contenders
# alternating; then each key's MEMORY USAGE.
#
#   bench/redis.sh MODULE_SO [ITEMS [ROUNDS]]     (defaults 1000000, 3)
#
# Prints one line per command: the median requests per second, the
# spread (min-max), the median p99 latency, and the ratio to the set's
# command; then the memory of each key and its ratio to the set's.
set -eu
# redis-server resolves a relative module path from its --dir.
module=$(realpath "$1")
items=${2:-1000000}
rounds=${3:-3}
command -v redis-benchmark >/dev/null || { echo "redis-benchmark not found (redis-tools)" >&2; exit 2; }

dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --logfile "$dir/log" --loadmodule "$module" --daemonize yes --pidfile "$dir/pid"
trap 'kill "$(cat "$dir/pid")" 2>/dev/null; rm -rf "$dir"' EXIT
cli() { redis-cli -p "$port" "$@"; }
tries=0
until cli ping >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ]; then
        echo "redis-server did not start:" >&2
        tail -3 "$dir/log" >&2
        exit 2
    fi
    sleep 0.1
done

cli BF.RESERVE bf 0.01 "$items" >/dev/null
cli CF.RESERVE cf "$items" >/dev/null

# One redis-benchmark run: the CSV line's requests per second and p99 (ms).
run() {
    redis-benchmark -p "$port" -c 50 -P 16 -n "$items" -r "$items" --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 { print $2, $7 }'
}

# name: the command's arguments after redis-benchmark's options.
measure() { # phase: add or query
    for round in $(seq "$rounds"); do
        for contender in set bf cf; do
            case "$1.$contender" in
            add.set) args="SADD s item:__rand_int__" ;;
            add.bf) args="BF.ADD bf item:__rand_int__" ;;
            add.cf) args="CF.ADDNX cf item:__rand_int__" ;;
            query.set) args="SISMEMBER s item:__rand_int__" ;;
            query.bf) args="BF.EXISTS bf item:__rand_int__" ;;
            query.cf) args="CF.EXISTS cf item:__rand_int__" ;;
            esac
            # Adds run once: a second round would add nothing new.
            if [ "$1" = add ] && [ "$round" -gt 1 ]; then continue; fi
            # shellcheck disable=SC2086
            echo "$1 $contender $(run $args)" >>"$dir/results"
        done
    done
}
measure add
measure query

python3 - "$dir/results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    phase, contender, rps, p99 = line.split()
    rows.setdefault((phase, contender), []).append((float(rps), float(p99)))
names = {("add", "set"): "SADD", ("add", "bf"): "BF.ADD", ("add", "cf"): "CF.ADDNX",
         ("query", "set"): "SISMEMBER", ("query", "bf"): "BF.EXISTS", ("query", "cf"): "CF.EXISTS"}
print("| command | requests/s (median) | spread | p99 ms | vs the set's |")
print("|---|---|---|---|---|")
for phase in ("add", "query"):
    base = statistics.median(r for r, _ in rows[(phase, "set")])
    for contender in ("set", "bf", "cf"):
        runs = rows[(phase, contender)]
        rps = statistics.median(r for r, _ in runs)
        p99 = statistics.median(p for _, p in runs)
        spread = "%.0f-%.0f" % (min(r for r, _ in runs), max(r for r, _ in runs))
        print("| %s | %.0f | %s | %.2f | %.2f |" % (names[(phase, contender)], rps, spread, p99,
                                                  rps / base))
EOF
set_bytes=$(cli MEMORY USAGE s SAMPLES 0)
echo
echo "| key | items | MEMORY USAGE | vs the set's |"
echo "|---|---|---|---|"
for key in s bf cf; do
    bytes=$(cli MEMORY USAGE "$key" SAMPLES 0)
    case $key in
    s) count=$(cli SCARD s) ;;
    bf) count=$(cli BF.CARD bf) ;;
    cf) count=$(cli CF.INFO cf | awk 'prev == "Number of items inserted" { print; exit } { prev = $0 }') ;;
    esac
    echo "| $key | $count | $bytes | $(python3 -c "print('%.3f' % ($bytes / $set_bytes))") |"
done
