#!/usr/bin/python3
"""codesearch against grep on random patterns and random files (hypothesis).

    grep_property.py CODESEARCH SCRATCH_DIR

Each example is a few small files over a tiny alphabet (so that patterns
match often), with NUL bytes, bytes past 0x7f, empty lines and a last line
without its newline, and a pattern drawn from grep -E's grammar: literals,
classes, brackets with ranges and [:classes:], anchors, \\b \\B \\< \\> \\w
\\s, groups, alternations, all repetition operators and intervals, and
operators where they repeat nothing. The files are indexed, and the search
(with -n, and sometimes -i or -c) must print exactly what grep -rnaE prints
and exit as it exits; a pattern codesearch refuses must be one grep refuses
too, or a back-reference.
"""
import os
import shutil
import subprocess
import sys

from hypothesis import HealthCheck, given, settings, strategies as st

CS, DIR = sys.argv[1], sys.argv[2]
ALPHABET = b"ab_ \t;(x\x00\xe9A1-"

atoms = st.sampled_from([
    b"a", b"b", b"x", b"_", b" ", b";", b"A", b"\\(", b".", b"\\w", b"\\W", b"\\s", b"\\S",
    b"^", b"$", b"\\b", b"\\B", b"\\<", b"\\>", b"[ab]", b"[^a]", b"[a-x]", b"[[:alpha:]]",
    b"[[:space:];]", b"[]a]", b"[^]_-]", b"\\.", b"\xe9", b"\\y", b")", b"{", b"a{1",
])
ops = st.sampled_from([b"", b"", b"*", b"+", b"?", b"{2}", b"{0,1}", b"{1,}", b"{,2}", b"{0}",
                       b"**", b"+?"])


def regex(depth):
    piece = st.tuples(atoms, ops).map(lambda t: t[0] + t[1])
    if depth > 0:
        group = st.tuples(regex(depth - 1), ops).map(lambda t: b"(" + t[0] + b")" + t[1])
        piece = st.one_of(piece, piece, group)
    branch = st.lists(piece, min_size=0, max_size=4).map(b"".join)
    return st.lists(branch, min_size=1, max_size=3).map(b"|".join)


patterns = st.one_of(regex(2), st.tuples(ops.filter(bool), regex(1)).map(lambda t: t[0] + t[1]))
lines = st.lists(st.binary(max_size=0) | st.lists(st.sampled_from(list(ALPHABET)), max_size=12)
                 .map(bytes), max_size=6)
files = st.lists(st.tuples(lines, st.booleans()), min_size=1, max_size=3)


def run(argv, cwd):
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, LC_ALL="C"))
    return sorted(p.stdout.split(b"\n")), p.returncode, p.stderr


@settings(max_examples=int(os.environ.get("CODESEARCH_EXAMPLES", "300")), deadline=None,
          suppress_health_check=list(HealthCheck), derandomize="CODESEARCH_SEED" not in os.environ)
@given(files=files, pattern=patterns, fold=st.booleans(), count=st.booleans())
def test_same_as_grep(files, pattern, fold, count):
    shutil.rmtree(DIR, ignore_errors=True)
    tree = os.path.join(DIR, "t")
    os.makedirs(tree)
    for i, (content, ended) in enumerate(files):
        data = b"\n".join(content) + (b"\n" if ended and content else b"")
        with open(os.path.join(tree, "f%d" % i), "wb") as f:
            f.write(data)
    index = subprocess.run([CS, "index", "-o", "i.idx", "t"], cwd=DIR, capture_output=True)
    assert index.returncode == 0, index.stderr
    options = (["-i"] if fold else []) + (["-c"] if count else ["-n"])
    mine = run([CS, "search", "--index", "i.idx"] + options + ["--", pattern], DIR)
    grep = run(["grep", "-raE"] + options + ["--", pattern, "t"], DIR)
    if mine[1] == 2 and grep[1] != 2:
        assert b"back-reference" in mine[2] or b"nothing to repeat" in mine[2], (pattern, mine)
        return
    assert mine[1] == grep[1], (pattern, options, mine, grep)
    if grep[1] != 2:
        assert mine[0] == grep[0], (pattern, options, mine[0], grep[0])


if __name__ == "__main__":
    test_same_as_grep()
    print("grep_property: ok")
