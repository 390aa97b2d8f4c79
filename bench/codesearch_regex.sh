#!/bin/sh
# amq-codesearch's matcher beside csearch (Debian's codesearch), ripgrep and
# grep on one tree, over a fixed set of 34 patterns: literals, classes,
# the patterns of issue 43 that once took minutes (\s+q, (\w+\s*)+;$,
# .{3000}, a 4,000-identifier alternation), and a refused back-reference.
# Each tool runs each pattern RUNS times, the tools alternating within a
# run so that a noisy machine's slow spells fall on all of them; printed
# are the median wall times (ms), the spread (max - min) of amq's, and
# amq's time as a ratio of each other's ("-" where a tool refused the
# pattern or gave up after TIMEOUT seconds, marked "t/o").
# Usage: bench/codesearch_regex.sh CODESEARCH TREE [RUNS] [TIMEOUT]
# Needs cindex, csearch, rg (apt-get install codesearch ripgrep); the table
# in docs/CODESEARCH.md came from
#   bench/codesearch_regex.sh build-release/examples/codesearch/codesearch /tmp/cs-tree 5
set -eu
cs=$1 tree=$(cd "$2" && pwd) runs=${3:-5} limit=${4:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C
cd "$tree"
ALT=$work/alt; export ALT
"$cs" index -o "$work/amq.idx" . >/dev/null 2>&1
export CSEARCHINDEX="$work/cindex.idx"
cindex "$tree" >/dev/null 2>&1
echo "tree: $tree: $(find . -type f | wc -l) files, $(du -sb . | cut -f1) bytes"
python3 -c '
import random
rng = random.Random(4000)
ids = set()
import re, os
for root, _, files in os.walk("."):
    for f in files[:3]:
        try:
            ids.update(re.findall(rb"\b[a-z_][a-z0-9_]{5,}\b", open(os.path.join(root, f), "rb").read(1 << 14)))
        except OSError:
            pass
ids = sorted(ids)
rng.shuffle(ids)
open(os.environ["ALT"], "wb").write(b"|".join(ids[:4000]))' 2>/dev/null
alt=$(cat "$ALT" 2>/dev/null || true)

# ms COMMAND...: wall time of one run in ms, or t/o
ms() {
    start=$(date +%s%N)
    code=0
    timeout "$limit" "$@" >/dev/null 2>&1 || code=$?
    end=$(date +%s%N)
    [ "$code" -eq 124 ] && { echo t/o; return; }
    [ "$code" -ge 2 ] && { echo err; return; }
    echo $(((end - start) / 1000000))
}
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else print v[int((NR + 1) / 2)]}'; }
spread() { tr ' ' '\n' | grep -v '^$' | sort -n | awk 'NR==1{lo=$1} {hi=$1} END {print hi-lo}'; }
ratio() { case "$1$2" in *[!0-9]*) echo - ;; *) [ "$2" -gt 0 ] && awk "BEGIN{printf \"%.2f\", $1/$2}" || echo - ;; esac; }

printf '%-28s %8s %6s %8s %8s %8s %7s %7s %7s\n' pattern "amq ms" spread "csrch ms" "rg ms" \
    "grep ms" "/csrch" "/rg" "/grep"
i=0
while IFS= read -r q; do
    [ "$q" = ALT ] && q=$alt && name="4,000 identifiers (|)" || name=$q
    a= c= r= g=
    k=0
    while [ "$k" -lt "$runs" ]; do
        t=$(ms "$cs" search --index "$work/amq.idx" -n -- "$q"); case $t in *[!0-9]*) a=$t ;; *) a="$a $t" ;; esac
        t=$(ms csearch -n -- "$q"); case $t in *[!0-9]*) c=$t ;; *) c="$c $t" ;; esac
        t=$(ms rg -n -uuu -a --no-heading -e "$q" .); case $t in *[!0-9]*) r=$t ;; *) r="$r $t" ;; esac
        t=$(ms grep -rnaE -e "$q" .); case $t in *[!0-9]*) g=$t ;; *) g="$g $t" ;; esac
        k=$((k + 1))
    done
    am=$(echo "$a" | median) cm=$(echo "$c" | median) rm=$(echo "$r" | median) gm=$(echo "$g" | median)
    as=$(echo "$a" | spread)
    case $a in *t/o* | *err*) am=${a##* } as=- ;; esac
    case $c in *t/o* | *err*) cm=${c##* } ;; esac
    case $r in *t/o* | *err*) rm=${r##* } ;; esac
    case $g in *t/o* | *err*) gm=${g##* } ;; esac
    printf '%-28.28s %8s %6s %8s %8s %8s %7s %7s %7s\n' "$name" "$am" "$as" "$cm" "$rm" "$gm" \
        "$(ratio "$am" "$cm")" "$(ratio "$am" "$rm")" "$(ratio "$am" "$gm")"
    i=$((i + 1))
done <<'EOF'
amq_[a-z]+_many
[A-Z]{5}_[0-9]+
\s+q
(\w+\s*)+;$
.{3000}
ALT
redisCommand
pthread_mutex_lock
EVP_[A-Z][a-z]+_new
(malloc|calloc)\(
[a-z]+_free\(
TODO|FIXME|XXX
^#include <pthread\.h>
^#define [A-Z_]+ 0x[0-9a-f]+$
\bstatic inline\b
\<unsigned long long\>
[0-9]{4}-[0-9]{2}-[0-9]{2}
0x[0-9a-fA-F]{16}
struct [a-z_]+ \{
(int|long|short) [a-z]+\[
"[^"]*\\n"
//.*TODO
/\*.*\*/$
^\s*return [a-z]+;$
[A-Za-z]+_[A-Za-z]+_[A-Za-z]+_[A-Za-z]+
.{200}
.{1000}
(a|b|c|d|e)+z
[^ ]{80}
\w+\s*=\s*\w+\s*;
qzxjwvkq
(foo|bar)(baz|qux)
x{3}y{3}
(x*)\1y
EOF
