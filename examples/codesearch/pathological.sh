#!/bin/sh
# The patterns and files that made the backtracking matcher take minutes
# or gigabytes (issue 43), scaled down: each search must finish within a
# few seconds (the whole test has ctest's timeout; each search here is
# given LIMIT seconds by `timeout`) and print what grep -rnaE prints, or
# be refused with a message naming why.
#   pathological.sh PATH_TO_CODESEARCH PROJECT_ROOT SCRATCH_DIR
cs=$1 root=$2
case $cs in /*) ;; *) cs=$PWD/$cs ;; esac
set -- "$cs" "$3"
. "$root/tests/cli/lib/common.sh"
export LC_ALL=C
limit=${CODESEARCH_LIMIT:-20}

mkdir -p "$dir/t"
cd "$dir" || exit 2
python3 - <<'EOF'
import random
rng = random.Random(43)
open("t/spaces", "wb").write(b" " * (256 << 10))           # one line of spaces
open("t/blank", "wb").write(b"\n" * (32 << 10))            # blank lines
open("t/xs", "wb").write(b"x" * (64 << 10) + b"\n")       # (x*)\1y's line
open("t/long", "wb").write(b"a" * 5000 + b"\nshort\n" + b"b" * 2999 + b"\n")
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(6, 14)))
         for _ in range(10000)]
with open("t/code.c", "w") as f:
    for i in range(0, 10000, 97):
        f.write("int %s = %d; /* a line */\n" % (words[i], i))
    f.write("static int q;\n")
open("alt4000", "w").write("|".join(words[:4000]))
open("alt10000", "w").write("|".join(words))
EOF
run 0 index -o "$dir/p.idx" t
expect err "indexed"

# same PATTERN: the search prints what grep prints, within the limit
same() {
    timeout "$limit" "$cs" search --index "$dir/p.idx" -n -- "$1" >"$dir/mine" 2>"$dir/err"
    code=$?
    [ "$code" -le 1 ] || fail "$1: exit $code: $(head -c 300 "$dir/err")"
    grep -rnaE -- "$1" t 2>/dev/null | sort >"$dir/theirs"
    sort "$dir/mine" | cmp -s - "$dir/theirs" || fail "$1: output differs from grep -rnaE"
}
same '\s+q'
same '\s+$'
same '(\w+\s*)+;$'
same '.{3000}'
same '.{5000}'
same '(a|aa)+$'
same '(.*)*q'
same "$(cat alt4000)"

# The 4,000-way alternation still uses the index: few candidates.
run 0 search --index "$dir/p.idx" --stats -l -- "$(cat alt4000)"
expect err "candidates read: 1"
# 100 KB of alternatives: parsed, planned and compiled in bounded time.
start=$(date +%s%N)
run 0 search --index "$dir/p.idx" -c -- "$(cat alt10000)"
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -lt $((limit * 1000)) ] || fail "a 10,000-way alternation took $took ms"
# The largest count grep allows compiles; one past it is grep's error.
# Its DFA states hold up to 32767 threads each, built once per long line:
# the bound is on the processor time the search takes (its wall time
# depends on what else the machine runs), with a wall-clock guard.
cpu=$(python3 - "$limit" "$cs" "$dir/p.idx" "$dir/err" <<'EOF'
import resource, subprocess, sys
limit, cs, index, err = sys.argv[1:5]
with open(err, "wb") as e:
    try:
        code = subprocess.call([cs, "search", "--index", index, "-c", "--", ".{32767}"],
                               stdout=subprocess.DEVNULL, stderr=e, timeout=4 * int(limit))
    except subprocess.TimeoutExpired:
        code = 124
        e.write(b"killed after %d s of wall time\n" % (4 * int(limit)))
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(code, int((used.ru_utime + used.ru_stime) * 1000))
EOF
)
[ "${cpu%% *}" -le 1 ] || fail ".{32767}: $(cat "$dir/err")"
[ "${cpu#* }" -lt $((limit * 1000)) ] || fail ".{32767} took ${cpu#* } ms of processor time"
run 2 search --index "$dir/p.idx" 'a{32768}'
expect err "Regular expression too big"

# Refused, with why: back-references, programs past the budget, nesting.
run 2 search --index "$dir/p.idx" '(x*)\1y'
expect err "back-references"
run 2 search --index "$dir/p.idx" '((a{999}){999}){999}'
expect err "over the limit of"
expect err "--regex-memory"
run 2 search --index "$dir/p.idx" --regex-memory 1 '(abcdefgh){9999}'
expect err "over the limit of"
run 0 search --index "$dir/p.idx" --regex-memory 8 -c '(abcdefgh){9999}|q'
deep=$(python3 -c 'print("(" * 1500 + "a" + ")" * 1500)')
run 2 search --index "$dir/p.idx" "$deep"
expect err "nest more than 1000"
run 2 search --index "$dir/p.idx" --regex-memory 0 x
expect err "--regex-memory"
finish codesearch_pathological
