#!/usr/bin/python3
"""codesearch against grep: never a missed (or an extra) line.

    grep_compare.py CODESEARCH INDEX SEED COUNT TREE...

Run from the directory the index was built in. Draws COUNT patterns from
the trees' own lines (seeded: a failure names its seed and pattern) -
literals and regular expressions made from them: classes, dots, stars,
alternations, anchors, intervals, \\b and \\w, some under -i or -F - and
checks that `codesearch search` prints exactly what `grep -rnaE` prints
(sorted: the orders differ) and exits as grep exits. Binary files are
searched as text by both (grep's -a). Some searches also try -l, -c and a
path filter against grep's -l, -c and --include.
"""
import os
import random
import re
import subprocess
import sys

SPECIAL = b".[]()*+?{}|^$\\"


def quote(s):
    return b"".join(b"\\" + bytes([c]) if c in SPECIAL else bytes([c]) for c in s)


def lines_of(trees):
    """Some lines of the trees' files, as bytes without their newline."""
    found = []
    for tree in trees:
        for root, dirs, files in os.walk(tree):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    data = f.read(1 << 16)
                for line in data.split(b"\n")[:400]:
                    if 3 <= len(line) <= 300 and b"\0" not in line:  # argv cannot hold NUL
                        found.append(line)
    return found


def piece(rng, lines, shortest=3, longest=12):
    line = rng.choice(lines)
    n = rng.randint(shortest, min(longest, len(line)))
    at = rng.randint(0, len(line) - n)
    return line[at : at + n]


def class_of(rng, c):
    if c in b"]^-[":  # bytes with a meaning inside brackets: kept literal
        return quote(bytes([c]))
    return b"[" + bytes([c, rng.choice(b"aeiouxyz_019")]) + b"]"


def pattern(rng, lines):
    """A pattern (bytes) and the options to search it with."""
    kind = rng.randrange(14)
    s = piece(rng, lines)
    q = quote(s)
    options = []
    if kind == 0:
        return q, options
    if kind == 1:  # a fixed string
        return s, ["-F"]
    if kind == 2:  # some bytes become '.'
        chars = [quote(bytes([c])) for c in s]
        for _ in range(rng.randint(1, 2)):
            chars[rng.randrange(len(chars))] = b"."
        return b"".join(chars), options
    if kind == 3:  # a byte becomes a class holding it
        at = rng.randrange(len(s))
        return quote(s[:at]) + class_of(rng, s[at]) + quote(s[at + 1 :]), options
    if kind == 4:  # two pieces of a line with anything between
        line = rng.choice(lines)
        a = rng.randint(0, len(line) - 3)
        b = rng.randint(a + 1, len(line) - 2)
        gap = rng.choice([b".*", b"[a-z_]*", b"\\w*", b".+", b"[^;]*", b" *"])
        return quote(line[a : a + 3]) + gap + quote(line[b : b + 2]), options
    if kind == 5:  # alternation
        return q + b"|" + quote(piece(rng, lines)), options
    if kind == 6:  # a group of alternatives before a common tail
        return (b"(" + q + b"|" + quote(piece(rng, lines, 2, 6)) + b")"
                + quote(piece(rng, lines, 1, 4))), options
    if kind == 7:  # an optional byte or group
        at = rng.randrange(len(s))
        return quote(s[:at]) + b"(" + quote(s[at : at + 2]) + b")?" + quote(s[at + 2 :]), options
    if kind == 8:  # anchored at a line's start or end
        line = rng.choice(lines)
        n = rng.randint(2, min(10, len(line)))
        return (b"^" + quote(line[:n])) if rng.random() < 0.5 else (quote(line[-n:]) + b"$"), options
    if kind == 9:  # a repeated byte
        at = rng.randrange(len(s))
        op = rng.choice([b"+", b"*", b"{1,3}", b"{2}", b"{0,1}"])
        return quote(s[: at + 1]) + op + quote(s[at + 1 :]), options
    if kind == 10:  # ignoring case, the case of some bytes changed
        mixed = bytes(c ^ 0x20 if chr(c).isalpha() and c < 128 and rng.random() < 0.5 else c
                      for c in s)
        return quote(mixed), ["-i"]
    if kind == 11:  # a word
        words = re.findall(rb"[A-Za-z_][A-Za-z0-9_]{2,}", rng.choice(lines)) or [b"return"]
        return b"\\b" + rng.choice(words) + b"\\b", options
    if kind == 12:  # an identifier-shaped regex
        return quote(s[:3]) + rng.choice([b"[A-Za-z0-9_]+", b"[[:alnum:]_]*", b"\\w+"]), options
    # a short or odd pattern: few trigrams, a scan
    return rng.choice([b"x", b"ab", b"\\w", b"^$", b"[0-9]{4}", b"\\s+$", b"\r$", b"\x01",
                       b"(a|b)c", b"[\x80-\xff]{2}", b"\xe9", b"a.b", b"q*"]), options


def run(argv):
    # bytes as bytes: grep in the C locale, as codesearch matches
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, LC_ALL="C"))
    return sorted(p.stdout.split(b"\n")), p.returncode, p.stderr


def main():
    cs, index, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    trees = sys.argv[5:]
    rng = random.Random(seed)
    lines = lines_of(trees)
    failures = 0
    for i in range(count):
        pat, options = pattern(rng, lines)
        extra, grep_extra = [], []
        variant = rng.randrange(10)
        if variant == 0:
            extra = grep_extra = ["-l"]
        elif variant == 1:
            extra = grep_extra = ["-c"]
        elif variant == 2:
            extra, grep_extra = ["-f", "\\.h$"], ["--include=*.h"]
        numbers = [] if variant == 3 else ["-n"]
        if "-l" in extra or "-c" in extra:
            numbers = []
        mine = run([cs, "search", "--index", index] + options + numbers + extra + ["--", pat])
        grep = run(["grep", "-raE" if "-F" not in options else "-ra"] + options + numbers
                   + grep_extra + ["--", pat] + trees)
        if mine[1] != grep[1] or (grep[1] != 2 and mine[0] != grep[0]):
            failures += 1
            print("FAIL: seed %d, search %d: %r %s %s: exit %d (grep %d)"
                  % (seed, i, pat, options, extra, mine[1], grep[1]), flush=True)
            print("  stderr: %r" % mine[2][:300])
            mine_set, grep_set = set(mine[0]), set(grep[0])
            missed = [x for x in grep[0] if x not in mine_set][:3]
            more = [x for x in mine[0] if x not in grep_set][:3]
            print("  missed: %r\n  extra: %r" % ([m[:200] for m in missed],
                                                  [m[:200] for m in more]))
            if failures >= 10:
                break
    print("grep_compare: %d searches, %d failed (seed %d)" % (i + 1, failures, seed))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
