#!/bin/sh
# The code-search example on a real tree: index size and build time for each
# choice of filter, then queries against grep -rlF (time, candidates, false
# candidates). Figures in docs/CODESEARCH.md come from
#   bench/codesearch.sh build-release/examples/codesearch/codesearch /usr/include
# Usage: bench/codesearch.sh CODESEARCH TREE [QUERY...]
set -eu
cs=$1 tree=$2
shift 2
[ $# -gt 0 ] || set -- "#include" "uint32_t" "EXPORT_SYMBOL" "pthread_mutex_lock" \
    "__attribute__((deprecated" "SSL_CTX_new" "XXH3_64bits_withSeed" "qzxqzx"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" -v scale="$3" 'BEGIN { printf "%.0f", (b - a) * scale }'; }
for kind in smaller gcs hfb; do
    start=$(now)
    "$cs" index -f "$kind" -o "$work/$kind.idx" "$tree" 2>"$work/log"
    end=$(now)
    printf '%-8s %s ms  ' "$kind" "$(elapsed "$start" "$end" 1000)"
    sed -n '2p' "$work/log"
    [ "$kind" != smaller ] || sed -n '1p;3p' "$work/log"
done
printf '\n%-28s %10s %8s %9s %10s %10s %10s\n' query candidates matches "all tri" "filter fp" \
    "search ms" "grep ms"
for query in "$@"; do
    start=$(now)
    "$cs" search --index "$work/smaller.idx" -F -l --stats -- "$query" >/dev/null 2>"$work/stats" || true
    mid=$(now)
    grep -rlF -- "$query" "$tree" >/dev/null 2>&1 || true
    end=$(now)
    candidates=$(sed -n 's/^candidates read: //p' "$work/stats")
    matches=$(sed -n 's/^files matched: //p' "$work/stats")
    all_trigrams=$(sed -n 's/^  holding every trigram of the string: //p' "$work/stats")
    let_through=$(sed -n 's/^  let through by the filters: \([0-9]*\) of \([0-9]*\).*/\1\/\2/p' \
        "$work/stats")
    printf '%-28s %10s %8s %9s %10s %10s %10s\n' "$query" "$candidates" "$matches" \
        "$all_trigrams" "$let_through" "$(elapsed "$start" "$mid" 1000)" \
        "$(elapsed "$mid" "$end" 1000)"
done
