#!/bin/sh
# codesearch beside cindex/csearch (Debian's codesearch), ripgrep and grep
# on one tree: build time, index size and peak memory, then eleven queries
# from cold processes - time (best of RUNS), candidates read, lines found,
# and lines missed against grep -rnaE (the reference: every file, bytes
# as bytes). The table in docs/CODESEARCH.md comes from
#   bench/codesearch.sh build-cs-release/examples/codesearch/codesearch /work/cs-trees/tree
# Needs /usr/bin/time (GNU time), and cindex, csearch, rg when present
# (apt-get install codesearch ripgrep time).
# The tree of docs/CODESEARCH.md: redis and git (git archive HEAD of their
# GitHub snapshots) and sqlite 3.40.1 (Debian's sqlite3_3.40.1.orig.tar.xz)
# side by side in one directory.
# Usage: bench/codesearch.sh CODESEARCH TREE [RUNS]
set -eu
cs=$1 tree=$(cd "$2" && pwd) runs=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C
have() { command -v "$1" >/dev/null 2>&1; }
now() { date +%s%N; }

# build NAME COMMAND...: wall time, peak RSS, from GNU time
build() {
    name=$1
    shift
    /usr/bin/time -v "$@" >/dev/null 2>"$work/$name.time"
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/$name.time")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$name.time")
    printf '%-10s build %8s  peak %6d MB' "$name" "$wall" $((rss / 1024))
}
echo "tree: $tree: $(find "$tree" -type f | wc -l) files, $(du -sb "$tree" | cut -f1) bytes"
build amq "$cs" index -o "$work/amq.idx" "$tree"
echo "  index $(wc -c <"$work/amq.idx") bytes"
if have cindex; then
    export CSEARCHINDEX="$work/cindex.idx"
    build cindex cindex "$tree"
    echo "  index $(wc -c <"$work/cindex.idx") bytes"
fi

# best TOOL ARGS...: the best of RUNS wall times in ms, output kept
best() {
    ms=
    i=0
    while [ "$i" -lt "$runs" ]; do
        start=$(now)
        "$@" >"$work/out" 2>"$work/err" || true
        end=$(now)
        t=$(((end - start) / 100000))
        [ -z "$ms" ] || [ "$t" -lt "$ms" ] && ms=$t
        i=$((i + 1))
    done
    printf '%d.%d' $((ms / 10)) $((ms % 10))
}
lines() { wc -l <"$1" | tr -d ' '; }
missed() { sort -u "$1" >"$work/a"; comm -13 "$work/a" "$work/ref" | wc -l | tr -d ' '; }

printf '\n%-26s %7s %7s %8s %7s %6s %7s %6s %5s %5s %5s\n' query "grep ms" "rg ms" \
    "csrch ms" "amq ms" "amq" "csrch" lines "amq" csrch rg
printf '%-26s %7s %7s %8s %7s %6s %7s %6s %5s %5s %5s\n' "" "" "" "" "" cand cand "" miss \
    miss miss
for q in 'redisCommand' 'strbuf_addf' 'listAddNodeTail' 'aeCreateFileEvent' \
    'repo_config_get_bool' '(malloc|calloc)\(' '[a-z]+_free\(' 'TODO|FIXME' \
    '^#include <pthread\.h>' 'sqlite3_prepare_v2' 'qzxjwvkq'; do
    g=$(best grep -rnaE -- "$q" "$tree")
    sort -u "$work/out" >"$work/ref"
    ref=$(lines "$work/ref")
    r=-
    rmiss=-
    if have rg; then
        r=$(best rg -n -uuu -a --no-heading -e "$q" "$tree")
        rmiss=$(missed "$work/out")
    fi
    c=-
    ccand=-
    cmiss=-
    if have csearch; then
        c=$(best csearch -n -- "$q")
        cmiss=$(missed "$work/out")
        csearch -verbose -l -- "$q" >/dev/null 2>"$work/verbose" || true
        ccand=$(sed -n 's/.*post query identified \([0-9]*\) possible files.*/\1/p' \
            "$work/verbose" | tail -n 1)
    fi
    a=$(best "$cs" search --index "$work/amq.idx" -n -- "$q")
    amiss=$(missed "$work/out")
    "$cs" search --index "$work/amq.idx" --stats -l -- "$q" >/dev/null 2>"$work/stats" || true
    acand=$(sed -n 's/^candidates read: //p' "$work/stats")
    printf '%-26s %7s %7s %8s %7s %6s %7s %6s %5s %5s %5s\n' "$q" "$g" "$r" "$c" "$a" "$acand" \
        "${ccand:--}" "$ref" "$amiss" "$cmiss" "$rmiss"
done
