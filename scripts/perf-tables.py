#!/usr/bin/env python3
"""perf-tables.py - the tables of docs/PERFORMANCE.md, from amq_bench --json.

    scripts/perf-tables.py RUN.json...                 print the tables (markdown)
    scripts/perf-tables.py --update PAGE RUN.json...   rewrite PAGE between its markers
    scripts/perf-tables.py --check PAGE RUN.json...    check PAGE's markers, and that the
                                                       tables of PAGE and of RUN.json parse
    ... --block NAME                                   the tables of block NAME, and with
                                                       --update or --check the text between
                                                       NAME's markers instead
    ... --run AMQ_BENCH [--invocations K] [--save DIR] -- ARGS...
                                                       run `AMQ_BENCH ARGS --json` K times,
                                                       one after the other, instead of
                                                       reading RUN.json files

Each RUN.json is the document of one invocation of `amq_bench --json` (bench/bench_report.c
describes it); every invocation given must have the same keys, runs, seed and filter. There is
one table per filter family (fuse8 and fuse16 share one), then one per group of the workloads
that exercise no family (the key hashes, the floors). A workload's peer, the workload amq_bench
compares it with (libbloom, the split-block Bloom filter, any peer a later amq_bench has), is a
row of each table that has a workload naming it. A row gives:

    bits/key    the figure bits_per_key (in memory), with stored_bits_per_key beside it
                where a filter keeps a different form in memory (hfb); log2(1/p) is
                bound_bits_per_key, the least any filter with rate p can use, and "÷ bound"
                the ratio of bits/key to it
    FPR         the rate measured on the absent keys, and in parentheses the rate the
                filter is built for (target_fpr)
    a phase     the median ns per operation: over several invocations the median of their
                medians, and "±" how far from it the middle half of those medians reaches
                (the farther quartile; with fewer than four invocations, the farthest
                median); of one invocation its runs' median, and "±" the farther of its
                fastest and slowest run. "· 0.41×" is the ratio to the row's peer in the
                same phase (the median of the invocations' ratios, each taken within one
                invocation): below 1 is faster. A workload without a peer that names a
                baseline phase of its own (the threads/ workloads: insert, the plain add on
                one thread) gets the ratio to that phase of its own row instead, taken the
                same way, and its table says so.

The tables sit in PAGE between the lines PAGE_BEGIN and PAGE_END (below); --update replaces
what is between them and nothing else. A page may hold other blocks, each made from its own
invocations (the threads/ workloads, timed apart with --filter threads/): --block NAME reads
and writes the one between "<!-- perf-tables:NAME:begin -->" and "<!-- perf-tables:NAME:end -->",
with the tables BLOCK_TABLES gives it; those tables are never in the main block.

The vs/ workloads (bench/peers/: an amq filter and a public peer, timed alternating in one
process when amq_bench is built with -DAMQ_PEERS_DIR) go in a block of their own, "peers" or
any block named "peers-..." (one per key count: peers-1m, peers-10m), as two tables: the ns per
key of every phase (amq's and the peer's side by side, a pair's "-delete" workload folded into
its row), and the ratios amq / peer, each taken within one invocation between the two phases
that alternated in it (insert / peer-insert or build / peer-build, present-hashed and
present-inline / peer-present, query-hashed, hashed-batch, query-absent and absent-inline /
peer-absent, delete / peer-delete):
the median of the invocations' ratios, with their lowest and highest in parentheses.
Python 3 standard library only.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap

PAGE_BEGIN = "<!-- perf-tables:begin -->"
PAGE_END = "<!-- perf-tables:end -->"

# Tables in this order; families and groups not listed follow in the order they first appear.
TABLE_ORDER = ["bloom", "blocked-bloom", "counting-bloom", "scalable-bloom", "cuckoo", "fuse",
               "gcs", "hfb", "group:threads", "group:hash", "group:floor"]
GROUP_TITLES = {"hash": "key hashes", "floor": "floors", "peer": "peers",
                "threads": "concurrent adds", "vs": "amq beside the public peers"}
# Tables that go in a block of their own (--block NAME), never in the main one: the threads/
# workloads are timed apart (docs/PERFORMANCE.md, "Concurrent adds").
BLOCK_TABLES = {"threads": {"group:threads"}, "peers": {"group:vs"}}
# From this many invocations on, "±" spans the middle half of their medians (the quartiles)
# rather than all of them, so that one invocation a busy machine slowed does not set it.
QUARTILE_INVOCATIONS = 4
PHASE_CELL = re.compile(r"^(\d[\d,]*(?:\.\d+)?) ±(\d+)%(?: · (\d[\d,]*(?:\.\d+)?)×)?$")


class Failure(Exception):
    pass


# ---- reading the invocations ----------------------------------------------------------------

def load_invocation(text, source):
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise Failure("%s: not JSON: %s" % (source, e))
    for key in ("machine", "config", "workloads"):
        if key not in doc:
            raise Failure("%s: no \"%s\": not an amq_bench --json document" % (source, key))
    return doc


def same_config(docs, sources):
    first = docs[0]["config"]
    for doc, source in zip(docs[1:], sources[1:]):
        if doc["config"] != first:
            raise Failure("%s: configuration %s differs from %s's %s"
                          % (source, doc["config"], sources[0], first))


def run_bench(program, args, invocations, save_dir):
    docs, sources = [], []
    for i in range(1, invocations + 1):
        command = [program] + args + ["--json"]
        print("perf-tables: invocation %d of %d: %s" % (i, invocations, " ".join(command)),
              file=sys.stderr)
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, check=False)
        except OSError as e:
            raise Failure("cannot run %s: %s" % (program, e))
        if done.returncode not in (0, 1):
            raise Failure("%s exited %d" % (" ".join(command), done.returncode))
        text = done.stdout.decode("utf-8")
        source = "invocation %d" % i
        if save_dir:
            os.makedirs(save_dir, exist_ok=True)
            source = os.path.join(save_dir, "run%d.json" % i)
            with open(source, "w", encoding="utf-8") as out:
                out.write(text)
        docs.append(load_invocation(text, source))
        sources.append(source)
    return docs, sources


# ---- combining them ---------------------------------------------------------------------------

class Row:
    """One workload over every invocation that ran it."""

    def __init__(self, name):
        self.name = name
        self.workload = None  # the first invocation's entry
        self.phase_names = []
        self.samples = {}  # phase -> [(median, min, max, ratio)]
        self.figures = {}  # figure -> [values]
        self.errors = []
        self.per_doc = []  # one {phase: median ns} per invocation that ran it

    def add(self, w):
        if self.workload is None:
            self.workload = w
        if w.get("status") != "ok":
            self.errors.append(w.get("error") or w.get("status"))
            return
        self.per_doc.append({p["name"]: p["median_ns_per_op"] for p in w["phases"]})
        for p in w["phases"]:
            if p["name"] not in self.samples:
                self.phase_names.append(p["name"])
                self.samples[p["name"]] = []
            ratio = p.get("ratio_to_peer")
            if ratio is None and w.get("baseline") and p["name"] != w["baseline"]:
                ratio = p.get("ratio_to_baseline")
            self.samples[p["name"]].append((p["median_ns_per_op"], p["min_ns_per_op"],
                                            p["max_ns_per_op"], ratio))
        for name, value in w.get("figures", {}).items():
            if value is not None:
                self.figures.setdefault(name, []).append(value)

    def ran(self):
        return bool(self.samples)

    def figure(self, name):
        values = self.figures.get(name)
        return statistics.median(values) if values else None

    def phase(self, name):
        """(median ns, spread in percent, ratio to peer or None), or None."""
        samples = self.samples.get(name)
        if not samples:
            return None
        if len(samples) == 1:
            median, low, high, ratio = samples[0]
        else:
            medians = [s[0] for s in samples]
            median = statistics.median(medians)
            if len(medians) >= QUARTILE_INVOCATIONS:
                low, _, high = statistics.quantiles(medians, n=4, method="inclusive")
            else:
                low, high = min(medians), max(medians)
            ratios = [s[3] for s in samples if s[3] is not None]
            ratio = statistics.median(ratios) if ratios else None
        spread = 100.0 * max(high - median, median - low) / median if median > 0 else 0.0
        return median, spread, ratio


def combine(docs):
    rows = {}
    for doc in docs:
        for w in doc["workloads"]:
            rows.setdefault(w["name"], Row(w["name"])).add(w)
    return rows


def table_key(w):
    family = w.get("family")
    if family:
        return re.sub(r"\d+$", "", family)  # fuse8, fuse16 -> fuse
    return "group:" + (w.get("group") or "other")


def tables_of(rows):
    """[(title, [member rows])] in TABLE_ORDER, then in order of appearance."""
    members, titles = {}, {}
    for row in rows.values():
        w = row.workload
        key = table_key(w)
        if key == "group:peer":
            continue
        members.setdefault(key, []).append(row)
        if key.startswith("group:"):
            titles[key] = GROUP_TITLES.get(key[6:], key[6:])
        else:
            names = titles.setdefault(key, [])
            if w["family"] not in names:
                names.append(w["family"])
    order = [k for k in TABLE_ORDER if k in members]
    order += [k for k in members if k not in order]
    result = []
    for key in order:
        title = titles[key] if isinstance(titles[key], str) else ", ".join(titles[key])
        result.append((title, members[key]))
    # Peers no table shows (a peer no workload names) get a table of their own.
    shown = {r.name for _, rs in result for r in rs}
    shown |= {r.workload.get("peer") for _, rs in result for r in rs}
    lonely = [r for r in rows.values() if table_key(r.workload) == "group:peer"
              and r.name not in shown]
    if lonely:
        result.append((GROUP_TITLES["peer"], lonely))
    return result


# ---- the markdown -------------------------------------------------------------------------------

def fmt_ns(value):
    if value < 10:
        return "%.2f" % value
    if value < 1000:
        return "%.1f" % value
    return "{:,.0f}".format(value)


def fmt_rate(value):
    if value is None:
        return "—"
    if value == 0:
        return "0"
    return "%s%%" % ("%.3g" % (100.0 * value))


def fmt_ratio(value):
    if value < 10:
        return "%.2f×" % value
    return "{:,.0f}×".format(value)


def phase_cell(row, phase, with_ratio):
    """A phase's cell; a peer's own row shows no ratio (to its own peer)."""
    cell = row.phase(phase)
    if cell is None:
        return "—"
    median, spread, ratio = cell
    text = "%s ±%.0f%%" % (fmt_ns(median), spread)
    if ratio is not None and with_ratio:
        text += " · " + fmt_ratio(ratio)
    return text


def render_table(rows_by_name, title, members):
    peers = []
    for row in members:
        peer = row.workload.get("peer")
        if peer and peer in rows_by_name and peer not in peers:
            peers.append(peer)
    shown = [rows_by_name[p] for p in peers if p not in {r.name for r in members}] + members
    ran = [r for r in shown if r.ran()]
    phases = []  # the members' phases: a peer's others are not compared with anything here
    for row in members:
        for p in row.phase_names:
            if p not in phases:
                phases.append(p)
    has_bits = any(r.figure("bits_per_key") is not None for r in ran)
    has_rate = any(r.figure("fpr") is not None for r in ran)
    member_peers = {r.workload.get("peer") for r in members if r.workload.get("peer")}

    header = ["workload"]
    if len(member_peers) > 1:
        header.append("peer")
    if has_bits:
        header += ["bits/key", "log2(1/p)", "÷ bound"]
    if has_rate:
        header.append("FPR (p)")
    header += ["%s ns" % p for p in phases]
    baselines = sorted({r.workload.get("baseline") for r in members
                        if r.workload.get("baseline") and not r.workload.get("peer")})
    align = ["---"] + ["---" if h == "peer" else "---:" for h in header[1:]]

    lines = ["### %s" % title, ""]
    if baselines:
        lines += ["· x×: the ratio to the row's own %s phase, below 1 faster." %
                  " or ".join(baselines), ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    for row in ran:
        name = row.name
        if row.name in peers and row not in members:
            name += " (peer)"
        cells = [name]
        if len(member_peers) > 1:
            cells.append(row.workload.get("peer") or "—")
        if has_bits:
            bits, bound = row.figure("bits_per_key"), row.figure("bound_bits_per_key")
            stored = row.figure("stored_bits_per_key")
            if bits is None or stored is None or abs(stored - bits) <= 0.05 * bits:
                stored = None
            cell = "%.2f" % bits if bits is not None else "—"
            cells.append(cell + (" (%.2f stored)" % stored if stored else ""))
            cells.append("%.2f" % bound if bound is not None else "—")
            cell = "%.2f×" % (bits / bound) if bits is not None and bound else "—"
            cells.append(cell + (" (%.2f× stored)" % (stored / bound) if stored and bound else ""))
        if has_rate:
            fpr, target = row.figure("fpr"), row.figure("target_fpr")
            cell = fmt_rate(fpr)
            if fpr is not None and target is not None:
                cell += " (%s)" % fmt_rate(target)
            cells.append(cell)
        is_member = row in members
        cells += [phase_cell(row, p, is_member) for p in phases]
        lines.append("| " + " | ".join(cells) + " |")
    for row in shown:
        if row.errors:
            lines.append("")
            lines.append("%s was skipped: %s." % (row.name, row.errors[0]))
    return lines


def spread_words(count):
    if count >= QUARTILE_INVOCATIONS:
        return "how far from it the middle half of the invocations' medians reaches"
    if count > 1:
        return "how far from it the farthest invocation's median lies"
    return "how far from it the fastest or slowest run lies"


def block_tables(block):
    # The table keys of block NAME: BLOCK_TABLES' entry for it, or for the word before its
    # first "-" (peers-1m, peers-10m: the peers' tables at two key counts); None: any.
    if block in BLOCK_TABLES:
        return BLOCK_TABLES[block]
    return BLOCK_TABLES.get(block.split("-")[0])


def in_block(w, block):
    # Whether workload w's table belongs in block (None: the page's main one).
    key = table_key(w)
    if block is None:
        return not any(key in keys for keys in BLOCK_TABLES.values())
    keys = block_tables(block)
    return keys is None or key in keys


def render(docs, block=None):
    rows = {name: row for name, row in combine(docs).items() if in_block(row.workload, block)}
    first = docs[0]
    machine, config = first["machine"], first["config"]
    count = len(docs)
    dates = sorted(d["machine"].get("date", "") for d in docs)
    command = "amq_bench --keys %d --runs %d" % (config["keys"], config["runs"])
    if config.get("filter"):
        command += " --filter %s" % config["filter"]
    if config.get("seed") is not None:
        command += " --seed %d" % config["seed"]
    build = "optimized" if machine.get("optimized") else "unoptimized"
    if machine.get("sanitized"):
        build += ", sanitized"
    lines = [
        "Measured by %d invocation%s of `%s --json`, %s: %s (%s CPUs), %s, %s (%s), amq %s."
        % (count, "s" if count > 1 else "", command, dates[0][:10] or "date unknown",
           machine.get("cpu"), machine.get("cpus"), machine.get("kernel"),
           machine.get("compiler"), build, machine.get("amq_version")),
        "n = %s keys, %d timed run%s per phase after a warm-up. ns: %s; ±: %s%s"
        % ("{:,}".format(config["keys"]), config["runs"], "s" if config["runs"] > 1 else "",
           "the median of the invocations' medians" if count > 1 else "the median of the runs",
           spread_words(count),
           "." if block and block_tables(block) == {"group:vs"}
           else "; · x×: the ratio to the row's peer, below 1 faster."),
    ]
    lines = [textwrap.fill(line, 78, break_on_hyphens=False) for line in lines]
    for title, members in tables_of(rows):
        lines.append("")
        if members and table_key(members[0].workload) == "group:vs":
            lines += render_vs_tables(members, config["keys"])
        else:
            lines += render_table(rows, title, members)
    return "\n".join(lines) + "\n"


# ---- the peers' pairs (group vs) -----------------------------------------------------------------

# The ns columns: (header, phases that fill it); the ratio columns: (header, amq phase, peer
# phase), with the phases' other names for a static filter (build) and in a "-delete" workload.
VS_NS_COLUMNS = [("insert/build", ("insert", "build")),
                 ("peer insert/build", ("peer-insert", "peer-build")),
                 ("present-hashed", ("present-hashed",)), ("peer-present", ("peer-present",)),
                 ("query-hashed", ("query-hashed",)), ("peer-absent", ("peer-absent",)),
                 ("hashed-batch", ("hashed-batch",)), ("query-absent", ("query-absent",)),
                 ("present-inline", ("present-inline",)), ("absent-inline", ("absent-inline",)),
                 ("delete", ("delete",)), ("peer-delete", ("peer-delete",))]
VS_RATIOS = [("insert/build", ("insert", "build"), ("peer-insert", "peer-build")),
             ("present, hashed", ("present-hashed",), ("peer-present",)),
             ("absent, hashed", ("query-hashed",), ("peer-absent",)),
             ("absent, hashed batch", ("hashed-batch",), ("peer-absent",)),
             ("absent, key bytes", ("query-absent",), ("peer-absent",)),
             ("present, inline", ("present-inline",), ("peer-present",)),
             ("absent, inline", ("absent-inline",), ("peer-absent",)),
             ("delete", ("delete",), ("peer-delete",))]


def first_phase(row, names):
    for name in names:
        if row and name in row.samples:
            return name
    return None


def vs_ratio(row, amq_names, peer_names):
    """(median, lowest, highest) of the invocations' amq / peer ratios, or None."""
    ratios = []
    for medians in (row.per_doc if row else []):
        a = next((medians[n] for n in amq_names if n in medians), None)
        b = next((medians[n] for n in peer_names if n in medians), None)
        if a is not None and b:
            ratios.append(a / b)
    if not ratios:
        return None
    return statistics.median(ratios), min(ratios), max(ratios)


def render_vs_tables(members, keys):
    by_name = {r.name: r for r in members}
    pairs = [r for r in members if not (r.name.endswith("-delete")
                                        and r.name[:-len("-delete")] in by_name)]
    lines = ["### %s, n = %s" % (GROUP_TITLES["vs"], "{:,}".format(keys)), ""]
    lines += ["ns per key, amq's phases and the peer's (peer-...) side by side:", ""]
    header = ["pair"] + ["%s ns" % h for h, _ in VS_NS_COLUMNS]
    lines += ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for row in pairs:
        delete_row = by_name.get(row.name + "-delete")
        cells = [row.name]
        for _, names in VS_NS_COLUMNS:
            source = row if first_phase(row, names) else delete_row
            name = first_phase(source, names)
            cells.append(phase_cell(source, name, False) if name else "—")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "amq / peer, within each invocation: the median ratio (lowest–highest); "
              "below 1 amq is faster or smaller:", ""]
    header = ["pair", "bits/key amq", "bits/key peer", "FPR amq", "FPR peer"]
    header += [h for h, _, _ in VS_RATIOS]
    lines += ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for row in pairs:
        delete_row = by_name.get(row.name + "-delete")
        bits, peer_bits = row.figure("bits_per_key"), row.figure("peer_bits_per_key")
        cells = [row.name,
                 "%.2f" % bits if bits is not None else "—",
                 "%.2f" % peer_bits if peer_bits is not None else "—",
                 fmt_rate(row.figure("fpr")), fmt_rate(row.figure("peer_fpr"))]
        for _, amq_names, peer_names in VS_RATIOS:
            ratio = vs_ratio(row, amq_names, peer_names) or vs_ratio(delete_row, amq_names,
                                                                      peer_names)
            cells.append("—" if ratio is None else "%s (%s–%s)" % (
                fmt_ratio(ratio[0]), fmt_ratio(ratio[1])[:-1], fmt_ratio(ratio[2])[:-1]))
        lines.append("| " + " | ".join(cells) + " |")
    for row in members:
        if row.errors:
            lines.append("")
            lines.append("%s was skipped: %s." % (row.name, row.errors[0]))
    return lines


# ---- checking a page ------------------------------------------------------------------------------

def parse_tables(text, source):
    """The markdown tables of text as [(title, header, [rows])]; raises Failure on a bad one."""
    tables, title, lines = [], None, text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            title = line[4:].strip()
        if not line.startswith("|"):
            i += 1
            continue
        block = []
        while i < len(lines) and lines[i].startswith("|"):
            block.append(lines[i])
            i += 1
        cells = [[c.strip() for c in b.strip().strip("|").split("|")] for b in block]
        if len(cells) < 3:
            raise Failure("%s: table %r has no rows" % (source, title))
        header, rule, body = cells[0], cells[1], cells[2:]
        if len(rule) != len(header) or not all(re.match(r"^:?-{3,}:?$", c) for c in rule):
            raise Failure("%s: table %r: bad separator row %r" % (source, title, block[1]))
        for row, raw in zip(body, block[2:]):
            if len(row) != len(header):
                raise Failure("%s: table %r: %d cells where the header has %d: %r"
                              % (source, title, len(row), len(header), raw))
            for name, cell in zip(header, row):
                if name.endswith(" ns") and cell != "—" and not PHASE_CELL.match(cell):
                    raise Failure("%s: table %r: %s cell %r does not parse"
                                  % (source, title, name, cell))
        tables.append((title, header, body))
    return tables


def markers(block):
    # The begin and end lines of a block: the default one, or NAME's.
    if block is None:
        return PAGE_BEGIN, PAGE_END
    if not re.match(r"^[a-z0-9-]+$", block):
        raise Failure("block name %r: letters, digits and '-' only" % block)
    return "<!-- perf-tables:%s:begin -->" % block, "<!-- perf-tables:%s:end -->" % block


def page_block(text, source, block=None):
    begin, end_line = markers(block)
    begins, ends = text.count(begin), text.count(end_line)
    if begins != 1 or ends != 1:
        raise Failure("%s: needs one %s and one %s line (has %d and %d)"
                      % (source, begin, end_line, begins, ends))
    start, end = text.index(begin), text.index(end_line)
    if end < start:
        raise Failure("%s: %s comes before %s" % (source, end_line, begin))
    return start + len(begin), end


def check(page, docs, block=None):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    start, end = page_block(text, page, block)
    if not parse_tables(text[start:end], page):
        raise Failure("%s: no table between the markers" % page)
    rendered = render(docs, block)
    tables = parse_tables(rendered, "the tables of the run")
    named = {row[0].replace(" (peer)", "") for _, _, body in tables for row in body}
    for doc in docs:
        for w in doc["workloads"]:
            folded = w["name"].endswith("-delete") and w["name"][:-len("-delete")] in named
            if w.get("status") == "ok" and w["name"] not in named and not folded \
                    and in_block(w, block):
                raise Failure("the tables of the run have no row for %s" % w["name"])
    return len(tables)


def update(page, docs, block=None):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    start, end = page_block(text, page, block)
    new = text[:start] + "\n" + render(docs, block) + text[end:]
    directory = os.path.dirname(os.path.abspath(page))
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".perf-tables.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(new)
        os.chmod(temp, os.stat(page).st_mode & 0o777)
        os.replace(temp, page)
    except BaseException:
        os.unlink(temp)
        raise


def main(argv):
    args, bench_args = argv, []
    if "--" in argv:
        at = argv.index("--")
        args, bench_args = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(
        prog="perf-tables.py",
        description="The tables of docs/PERFORMANCE.md, from amq_bench --json documents.",
        epilog="With --run, the arguments after -- go to amq_bench (--json is added).")
    parser.add_argument("runs", nargs="*", metavar="RUN.json",
                        help="amq_bench --json documents, one per invocation ('-': stdin)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--update", metavar="PAGE", help="rewrite PAGE between its markers")
    mode.add_argument("--check", metavar="PAGE",
                      help="check PAGE's markers and tables, and that the run's tables parse")
    parser.add_argument("--block", metavar="NAME",
                        help="the tables of block NAME (between NAME's markers in PAGE)")
    parser.add_argument("--run", metavar="AMQ_BENCH", help="run AMQ_BENCH instead of reading files")
    parser.add_argument("--invocations", type=int, default=1, metavar="K",
                        help="with --run: how many invocations (default 1)")
    parser.add_argument("--save", metavar="DIR", help="with --run: keep each document as DIR/runN.json")
    opts = parser.parse_args(args)

    try:
        if opts.run:
            if opts.runs:
                parser.error("give RUN.json files or --run, not both")
            if opts.invocations < 1:
                parser.error("--invocations must be at least 1")
            docs, sources = run_bench(opts.run, bench_args, opts.invocations, opts.save)
        else:
            if bench_args or opts.save or opts.invocations != 1:
                parser.error("arguments after --, --save and --invocations go with --run")
            if not opts.runs:
                parser.error("give one or more RUN.json files, or --run AMQ_BENCH")
            docs, sources = [], []
            for source in opts.runs:
                if source == "-":
                    docs.append(load_invocation(sys.stdin.read(), "stdin"))
                else:
                    with open(source, encoding="utf-8") as f:
                        docs.append(load_invocation(f.read(), source))
                sources.append(source)
        same_config(docs, sources)
        if opts.check:
            count = check(opts.check, docs, opts.block)
            print("perf-tables: %s: markers and tables ok; the run gives %d tables that parse"
                  % (opts.check, count))
        elif opts.update:
            update(opts.update, docs, opts.block)
        else:
            sys.stdout.write(render(docs, opts.block))
    except (Failure, OSError) as e:
        print("perf-tables: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
