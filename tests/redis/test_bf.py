"""The module's BF.* commands against a real redis-server: what RedisBloom's
flow tests check (/work/shared/REDIS.md, 1.8 "Bloom"), its exact replies and
error strings (on the wire, through a raw RESP2/RESP3 client), python3-redis's
bf() helpers, SCANDUMP/LOADCHUNK, persistence and replication.

Usage: test_bf.py MODULE_SO AMQ_BINARY
"""
import math
import os
import random
import socket
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server  # noqa: E402

MODULE = AMQ = None

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


# ---- a raw client: the exact reply types and error strings ------------------------


class Error(str):
    """An error reply, its text exactly as sent (prefix included)."""


FILE_MAGIC = b"\x89AMQ\r\n\x1a\n"
NO_LINK = Error("ERR invalid offset - no link found")
TOO_BIG = Error("ERR invalid chunk - Too big for current filter")
BAD_DATA = Error("ERR received bad data")


class Map(list):
    """A RESP3 map, as its list of (name, value) pairs."""


class Raw:
    """RESP over a socket, parsed without interpretation: integers are int,
    RESP3 booleans bool, nil None, strings bytes, errors Error (returned,
    not raised, so that an array may hold one), maps Map."""

    def __init__(self, port, resp3=False):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")
        if resp3:
            hello = self.call("HELLO", "3")
            assert isinstance(hello, Map), hello

    def close(self):
        self.file.close()
        self.sock.close()

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))
        return self.read()

    def read(self):
        line = self.file.readline()
        assert line.endswith(b"\r\n"), line
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest
        if kind == b"-":
            return Error(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2]
        if kind in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if kind == b"%":
            return Map((self.read(), self.read()) for _ in range(int(rest)))
        if kind == b"_":
            return None
        if kind == b"#":
            return rest == b"t"
        if kind == b",":
            return float(rest)
        raise AssertionError("unknown reply type %r" % line)


def arity_error(command):
    return Error("ERR wrong number of arguments for '%s' command" % command)


def items(prefix, n, start=0):
    return [b"%s-%d" % (prefix, i) for i in range(start, start + n)]


def info(r, key):
    """BF.INFO through the raw client, as a dict."""
    reply = r.call("BF.INFO", key)
    assert isinstance(reply, list), reply
    return dict(zip([k.decode() for k in reply[0::2]], reply[1::2]))


def mexists(r, key, keys, batch=10000):
    answers = []
    for i in range(0, len(keys), batch):
        answers += r.call("BF.MEXISTS", key, *keys[i:i + batch])
    return answers


def madd(r, key, keys, batch=10000):
    answers = []
    for i in range(0, len(keys), batch):
        answers += r.call("BF.MADD", key, *keys[i:i + batch])
    return answers


def dump(r, key):
    """Every (iterator, chunk) of BF.SCANDUMP, up to the end marker."""
    chunks, it = [], 0
    while True:
        reply = r.call("BF.SCANDUMP", key, it)
        assert isinstance(reply, list) and len(reply) == 2, reply
        it, data = reply
        if it == 0:
            assert data == b"", data
            return chunks
        chunks.append((it, data))


def two_chunks(r, key):
    """A filter whose image is two chunks, the first 16 MiB: its chunks."""
    r.call("BF.RESERVE", key, "0.01", "13000000")
    r.call("BF.MADD", key, "a", "b")
    chunks = dump(r, key)
    assert len(chunks) == 2 and len(chunks[0][1]) == 16 << 20, [len(d) for _, d in chunks]
    return chunks


def load(r, key, chunks):
    for it, data in chunks:
        reply = r.call("BF.LOADCHUNK", key, it, data)
        if isinstance(reply, Error):
            return reply
        assert reply == b"OK", reply
    return b"OK"


class BfTest(unittest.TestCase):
    def setUp(self):
        self.server = Server(MODULE)
        self.r = Raw(self.server.port)

    def tearDown(self):
        self.r.close()
        self.server.cleanup()


# ---- BF.RESERVE, BF.ADD, BF.MADD, BF.EXISTS, BF.MEXISTS ----------------------------


class Basics(BfTest):
    def test_reserve_madd_exists(self):
        r = self.r
        self.assertEqual(r.call("BF.RESERVE", "f", "0.01", "1000"), b"OK")
        self.assertEqual(r.call("BF.MADD", "f", "a", "b", "c"), [1, 1, 1])
        self.assertEqual(r.call("BF.MEXISTS", "f", "a", "b", "c", "x"), [1, 1, 1, 0])
        self.assertEqual(r.call("BF.EXISTS", "f", "a"), 1)
        self.assertEqual(r.call("BF.EXISTS", "f", "x"), 0)
        self.assertEqual(r.call("BF.ADD", "f", "a"), 0)
        self.assertEqual(r.call("BF.ADD", "f", "d"), 1)
        # An item may hold any bytes.
        self.assertEqual(r.call("BF.ADD", "f", b"\x00a\xffb"), 1)
        self.assertEqual(r.call("BF.MEXISTS", "f", b"\x00a\xffb", b"\x00a"), [1, 0])
        # Missing keys: queries answer 0, adds create the key with the defaults.
        self.assertEqual(r.call("BF.EXISTS", "missing", "a"), 0)
        self.assertEqual(r.call("BF.MEXISTS", "missing", "a", "b"), [0, 0])
        self.assertEqual(r.call("BF.ADD", "auto", "a"), 1)
        self.assertEqual(r.call("BF.MADD", "auto2", "a", "a", "b"), [1, 0, 1])
        self.assertEqual(info(r, "auto"), {"Capacity": 100, "Size": info(r, "auto")["Size"],
                                           "Number of filters": 1,
                                           "Number of items inserted": 1, "Expansion rate": 2})
        self.assertEqual(r.call("TYPE", "f"), b"amqfilter")

    def test_reserve_on_an_existing_key(self):
        r = self.r
        self.assertEqual(r.call("BF.RESERVE", "f", "0.01", "100"), b"OK")
        self.assertEqual(r.call("BF.RESERVE", "f", "0.01", "100"), Error("ERR item exists"))
        r.call("BF.ADD", "g", "a")
        self.assertEqual(r.call("BF.RESERVE", "g", "0.1", "10"), Error("ERR item exists"))

    def test_reserve_validation(self):
        r = self.r
        cases = [
            (["BF.RESERVE"], arity_error("bf.reserve")),
            (["BF.RESERVE", "k"], arity_error("bf.reserve")),
            (["BF.RESERVE", "k", "0.01"], arity_error("bf.reserve")),
            (["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "2", "NONSCALING", "x"],
             arity_error("bf.reserve")),
            (["BF.RESERVE", "k", "foo", "100"], Error("ERR bad error rate")),
            (["BF.RESERVE", "k", "0.01", "foo"], Error("ERR bad capacity")),
            (["BF.RESERVE", "k", "0.01", "1.5"], Error("ERR bad capacity")),
            (["BF.RESERVE", "k", "0", "100"],
             Error("ERR error rate must be in the range (0.000000, 1.000000)")),
            (["BF.RESERVE", "k", "7.7", "100"],
             Error("ERR error rate must be in the range (0.000000, 1.000000)")),
            (["BF.RESERVE", "k", "1", "100"],
             Error("ERR error rate must be in the range (0.000000, 1.000000)")),
            (["BF.RESERVE", "k", "-0.5", "100"],
             Error("ERR error rate must be in the range (0.000000, 1.000000)")),
            (["BF.RESERVE", "k", "0.01", "0"],
             Error("ERR capacity must be in the range [1, 1073741824]")),
            (["BF.RESERVE", "k", "0.01", "-5"],
             Error("ERR capacity must be in the range [1, 1073741824]")),
            (["BF.RESERVE", "k", "0.01", str(2**30 + 1)],
             Error("ERR capacity must be in the range [1, 1073741824]")),
            (["BF.RESERVE", "k", "0.01", str(2**64)], Error("ERR bad capacity")),
            (["BF.RESERVE", "k", "0.01", "100", "EXPANSION"], Error("ERR no expansion")),
            (["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "x"], Error("ERR bad expansion")),
            (["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "32769"],
             Error("ERR expansion must be in the range [0, 32768]")),
            (["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "-1"],
             Error("ERR expansion must be in the range [0, 32768]")),
            (["BF.RESERVE", "k", "0.01", "100", "NONSCALING", "EXPANSION", "2"],
             Error("Nonscaling filters cannot expand")),
            (["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "2", "NONSCALING"],
             Error("Nonscaling filters cannot expand")),
            (["BF.RESERVE", "k", "0.01", "100", "SCALING"], Error("Unknown argument received")),
        ]
        for args, expected in cases:
            self.assertEqual(r.call(*args), expected, args)
        self.assertEqual(r.call("EXISTS", "k"), 0)
        # Accepted: the largest capacity and expansion, options in any order
        # and any case, rates near 1 (capped to 0.25), EXPANSION 0 = NONSCALING.
        self.assertEqual(r.call("BF.RESERVE", "e", "0.01", "10", "expansion", "32768"), b"OK")
        self.assertEqual(info(r, "e")["Expansion rate"], 32768)
        for rate in ["0.99", "0.95", "0.9999999999999999"]:
            self.assertEqual(r.call("BF.RESERVE", "r" + rate, rate, "100", "NONSCALING"), b"OK")
            self.assertEqual(r.call("BF.ADD", "r" + rate, "a"), 1)
        self.assertEqual(r.call("BF.RESERVE", "z", "0.01", "100", "EXPANSION", "0"), b"OK")
        self.assertEqual(info(r, "z")["Expansion rate"], None)
        self.assertEqual(r.call("BF.RESERVE", "n", "0.01", "100", "NONSCALING", "EXPANSION",
                                "0"), b"OK")
        self.assertEqual(info(r, "n")["Expansion rate"], None)

    def test_arity(self):
        r = self.r
        for args in [["BF.ADD"], ["BF.ADD", "k"], ["BF.ADD", "k", "a", "b"], ["BF.MADD"],
                     ["BF.MADD", "k"], ["BF.EXISTS", "k"], ["BF.EXISTS", "k", "a", "b"],
                     ["BF.MEXISTS", "k"], ["BF.INSERT", "k", "ITEMS"], ["BF.CARD"],
                     ["BF.CARD", "k", "x"], ["BF.INFO"], ["BF.INFO", "k", "CAPACITY", "SIZE"],
                     ["BF.SCANDUMP", "k"], ["BF.SCANDUMP", "k", "0", "1"],
                     ["BF.LOADCHUNK", "k", "1"], ["BF.LOADCHUNK", "k", "1", "a", "b"]]:
            self.assertEqual(r.call(*args), arity_error(args[0].lower()), args)
        self.assertEqual(r.call("EXISTS", "k"), 0)

    def test_wrong_type(self):
        r = self.r
        r.call("SET", "s", "v")
        r.call("AMQ.BUILD", "cuckoo", "cuckoo", "ITEMS", "a")
        r.call("AMQ.BUILD", "fuse", "fuse8", "ITEMS", "a")
        for key in ["s", "cuckoo", "fuse"]:
            for args in [["BF.RESERVE", key, "0.01", "100"], ["BF.ADD", key, "a"],
                         ["BF.MADD", key, "a"], ["BF.INSERT", key, "ITEMS", "a"],
                         ["BF.INFO", key], ["BF.INFO", key, "SIZE"], ["BF.CARD", key],
                         ["BF.SCANDUMP", key, "0"], ["BF.LOADCHUNK", key, "1", "x" * 200]]:
                self.assertEqual(r.call(*args), Error(WRONGTYPE), args)
            # RedisBloom's quirk: the queries answer 0 on a key of another type.
            self.assertEqual(r.call("BF.EXISTS", key, "a"), 0)
            self.assertEqual(r.call("BF.MEXISTS", key, "a", "b"), [0, 0])
        self.assertEqual(r.call("GET", "s"), b"v")
        self.assertEqual(r.call("AMQ.EXISTS", "cuckoo", "a"), 1)


# ---- growth, NONSCALING, BF.INSERT --------------------------------------------------


class Growth(BfTest):
    def test_expansion_and_items_inserted(self):
        r = self.r
        for expansion in [1, 2, 4]:
            key = "e%d" % expansion
            self.assertEqual(r.call("BF.RESERVE", key, "0.01", "4", "EXPANSION", expansion), b"OK")
            added = sum(r.call("BF.ADD", key, "item-%d" % i) for i in range(100))
            figures = info(r, key)
            # Only the adds that were new count.
            self.assertEqual(figures["Number of items inserted"], added)
            self.assertEqual(r.call("BF.CARD", key), added)
            self.assertGreater(added, 90)
            self.assertEqual(figures["Expansion rate"], expansion)
            # Stages of 4, 4 * e, 4 * e^2, ... keys, a new one when the last is full.
            stages, capacity = 0, 0
            while capacity < added:
                capacity += 4 * expansion ** stages
                stages += 1
            self.assertEqual(figures["Number of filters"], stages, expansion)
            self.assertEqual(figures["Capacity"], capacity, expansion)
        # RedisBloom's tests count 23, 5 and 4 filters for these; amq's first
        # stages, sized with the floor of double hashing, let fewer of the
        # 100 items be false positives, so expansion 1 needs about 25.
        self.assertEqual(info(r, "e2")["Number of filters"], 5)
        self.assertEqual(info(r, "e4")["Number of filters"], 4)

    def test_growth_stops_at_the_last_stage(self):
        # Expansion 1 adds a stage of 1 key per new key. With the default
        # tightening (0.5) stage i's error is 0.005 / 2^i, and the stages
        # past the 40th would take hundreds of megabytes (docs/REDIS.md); at
        # tightening 0.95 they stay small up to amq's last, the 64th.
        server = Server(MODULE, module_args=["bf-tightening", "0.95"])
        r = Raw(server.port)
        try:
            r.call("BF.RESERVE", "f", "0.01", "1", "EXPANSION", "1")
            answers = [r.call("BF.ADD", "f", "item-%d" % i) for i in range(100)]
            first_error = answers.index(Error("ERR problem inserting into filter"))
            self.assertEqual(info(r, "f")["Number of filters"], 64)
            self.assertEqual(r.call("BF.CARD", "f"), sum(answers[:first_error]))
            self.assertEqual(r.call("BF.CARD", "f"), 64)
            self.assertLess(info(r, "f")["Size"], 1 << 20)
            # The filter still answers, and still refuses new items.
            self.assertEqual(r.call("BF.MEXISTS", "f", "item-0", "item-%d" % (first_error - 1)),
                             [1, 1])
            self.assertEqual(r.call("BF.ADD", "f", "yet another"),
                             Error("ERR problem inserting into filter"))
            self.assertEqual(r.call("PING"), b"PONG")
        finally:
            r.close()
            server.cleanup()

    def test_nonscaling(self):
        r = self.r
        self.assertEqual(r.call("BF.RESERVE", "n", "0.01", "3", "NONSCALING"), b"OK")
        self.assertEqual(r.call("BF.MADD", "n", "a", "b", "c"), [1, 1, 1])
        self.assertEqual(r.call("BF.ADD", "n", "d"), Error("ERR non scaling filter is full"))
        # An item it may hold is no add: 0, not an error.
        self.assertEqual(r.call("BF.ADD", "n", "a"), 0)
        self.assertEqual(r.call("BF.INSERT", "n", "ITEMS", "a", "b", "c", "d", "d"),
                         [0, 0, 0, Error("ERR non scaling filter is full")])
        self.assertEqual(r.call("BF.MADD", "n", "e", "a"),
                         [Error("ERR non scaling filter is full")])
        self.assertEqual(info(r, "n"), {"Capacity": 3, "Size": info(r, "n")["Size"],
                                        "Number of filters": 1, "Number of items inserted": 3,
                                        "Expansion rate": None})
        self.assertEqual(r.call("BF.CARD", "n"), 3)
        # A non-scaling filter is smaller than a scaling one of the same rate
        # (whose first stage has half the rate).
        r.call("BF.RESERVE", "s", "0.01", "1000")
        r.call("BF.RESERVE", "c", "0.01", "1000", "NONSCALING")
        self.assertLess(info(r, "c")["Size"], info(r, "s")["Size"])

    def test_insert(self):
        r = self.r
        self.assertEqual(r.call("BF.INSERT", "a", "ITEMS", "x", "y", "x"), [1, 1, 0])
        self.assertEqual(info(r, "a")["Capacity"], 100)
        # Options in any order, any case; they shape the filter INSERT creates.
        self.assertEqual(r.call("BF.INSERT", "b", "expansion", "4", "ERROR", "0.001",
                                "CAPACITY", "50", "ITEMS", "x"), [1])
        figures = info(r, "b")
        self.assertEqual((figures["Capacity"], figures["Expansion rate"]), (50, 4))
        self.assertEqual(r.call("BF.INSERT", "c", "NONSCALING", "CAPACITY", "2", "ITEMS", "x",
                                "y", "z"), [1, 1, Error("ERR non scaling filter is full")])
        self.assertIsNone(info(r, "c")["Expansion rate"])
        self.assertEqual(r.call("BF.INSERT", "d", "EXPANSION", "0", "ITEMS", "x"), [1])
        self.assertIsNone(info(r, "d")["Expansion rate"])
        # An existing filter keeps its parameters.
        self.assertEqual(r.call("BF.INSERT", "b", "CAPACITY", "7", "NONSCALING", "ITEMS", "y"),
                         [1])
        self.assertEqual(info(r, "b")["Capacity"], 50)
        # NOCREATE.
        self.assertEqual(r.call("BF.INSERT", "e", "NOCREATE", "ITEMS", "x"),
                         Error("ERR not found"))
        self.assertEqual(r.call("BF.INSERT", "a", "NOCREATE", "ITEMS", "z"), [1])
        self.assertEqual(r.call("EXISTS", "e"), 0)
        cases = [
            (["BF.INSERT", "e", "CAPACITY", "x", "ITEMS", "a"], Error("Bad capacity")),
            (["BF.INSERT", "e", "CAPACITY", "0", "ITEMS", "a"], Error("Bad capacity")),
            (["BF.INSERT", "e", "ERROR", "x", "ITEMS", "a"], Error("Bad error rate")),
            (["BF.INSERT", "e", "ERROR", "1", "ITEMS", "a"], Error("Bad error rate")),
            (["BF.INSERT", "e", "EXPANSION", "x", "ITEMS", "a"], Error("Bad expansion")),
            (["BF.INSERT", "e", "EXPANSION", "40000", "ITEMS", "a"], Error("Bad expansion")),
            (["BF.INSERT", "e", "FOO", "ITEMS", "a"], Error("Unknown argument received")),
            (["BF.INSERT", "e", "NONSCALING", "EXPANSION", "2", "ITEMS", "a"],
             Error("Nonscaling filters cannot expand")),
            (["BF.INSERT", "e", "a", "b"], Error("Unknown argument received")),
            (["BF.INSERT", "e", "NOCREATE", "ITEMS"], arity_error("bf.insert")),
            (["BF.INSERT", "e", "NOCREATE", "NONSCALING"], arity_error("bf.insert")),
            (["BF.INSERT", "e", "CAPACITY", "10"], arity_error("bf.insert")),
        ]
        for args, expected in cases:
            self.assertEqual(r.call(*args), expected, args)
        self.assertEqual(r.call("EXISTS", "e"), 0)


# ---- BF.INFO, BF.CARD, the false-positive rate ----------------------------------------


class Figures(BfTest):
    def test_info_layout_and_selectors(self):
        r = self.r
        r.call("BF.RESERVE", "f", "0.001", "100")
        r.call("BF.MADD", "f", *items(b"k", 150))
        reply = r.call("BF.INFO", "f")
        self.assertEqual(reply[0::2], [b"Capacity", b"Size", b"Number of filters",
                                       b"Number of items inserted", b"Expansion rate"])
        self.assertTrue(all(type(v) is int for v in reply[1::2]), reply)
        figures = info(r, "f")
        self.assertEqual(figures["Capacity"], 300)
        self.assertEqual(figures["Number of filters"], 2)
        self.assertEqual(figures["Number of items inserted"], r.call("BF.CARD", "f"))
        self.assertEqual(figures["Expansion rate"], 2)
        # Size is the filter's memory, amq's memory_bytes, within MEMORY USAGE.
        amq = r.call("AMQ.INFO", "f")
        self.assertEqual(figures["Size"], dict(zip(amq[0::2], amq[1::2]))[b"memory_bytes"])
        self.assertLess(figures["Size"], r.call("MEMORY", "USAGE", "f"))
        for selector, name in [("CAPACITY", "Capacity"), ("size", "Size"),
                               ("Filters", "Number of filters"),
                               ("ITEMS", "Number of items inserted"),
                               ("EXPANSION", "Expansion rate")]:
            self.assertEqual(r.call("BF.INFO", "f", selector), [figures[name]], selector)
        r.call("BF.RESERVE", "n", "0.01", "10", "NONSCALING")
        self.assertEqual(r.call("BF.INFO", "n", "EXPANSION"), [None])
        self.assertEqual(r.call("BF.INFO", "f", "FOO"), Error("Invalid information value"))
        self.assertEqual(r.call("BF.INFO", "missing"), Error("ERR not found"))
        self.assertEqual(r.call("BF.INFO", "missing", "SIZE"), Error("ERR not found"))

    def test_card(self):
        r = self.r
        self.assertEqual(r.call("BF.CARD", "missing"), 0)
        r.call("BF.ADD", "f", "a")
        r.call("BF.ADD", "f", "a")
        self.assertEqual(r.call("BF.CARD", "f"), 1)
        r.call("BF.MADD", "f", "b", "c", "b")
        self.assertEqual(r.call("BF.CARD", "f"), 3)
        r.call("SET", "s", "v")
        self.assertEqual(r.call("BF.CARD", "s"), Error(WRONGTYPE))

    def test_false_positive_rate(self):
        r = self.r
        added = items(b"present", 1024)
        for p in [0.1, 0.01, 0.001, 0.0001]:
            # Enough absent keys that the bound is tested to a few percent.
            n = max(100000, int(50 / p))
            absent = items(b"absent-%g" % p, n)
            # The scaling filter from the defaults' capacity (100): 4 stages
            # for 1024 items, whose compound rate amq keeps below p.
            key = "s%g" % p
            r.call("BF.RESERVE", key, p, 100)
            self.assertEqual(sum(madd(r, key, added)), r.call("BF.CARD", key))
            self.assertEqual(mexists(r, key, added), [1] * 1024)
            false_positives = sum(mexists(r, key, absent))
            tolerance = 4 * math.sqrt(n * p * (1 - p))
            self.assertLessEqual(false_positives, n * p + tolerance, (p, false_positives / n))
            # The classic filter at its capacity.
            key = "c%g" % p
            r.call("BF.RESERVE", key, p, 1024, "NONSCALING")
            madd(r, key, added)
            self.assertEqual(mexists(r, key, added), [1] * 1024)
            false_positives = sum(mexists(r, key, absent))
            self.assertLessEqual(false_positives, n * p + tolerance, (p, false_positives / n))


# ---- BF.SCANDUMP, BF.LOADCHUNK -----------------------------------------------------------


class Chunks(BfTest):
    def assert_same(self, a, b, probe):
        r = self.r
        self.assertEqual(info(r, a), info(r, b))
        self.assertEqual(r.call("BF.CARD", a), r.call("BF.CARD", b))
        self.assertEqual(mexists(r, a, probe), mexists(r, b, probe))
        self.assertEqual(dump(r, a), dump(r, b))

    def test_round_trips(self):
        r = self.r
        probe = items(b"k", 3000) + items(b"other", 3000)
        r.call("BF.RESERVE", "small", "0.01", "100")
        r.call("BF.MADD", "small", *items(b"k", 50))
        r.call("BF.RESERVE", "grown", "0.001", "10", "EXPANSION", "3")
        madd(r, "grown", items(b"k", 3000))
        r.call("BF.RESERVE", "fixed", "0.01", "100", "NONSCALING")
        r.call("BF.MADD", "fixed", *items(b"k", 150))  # full: stops at an error
        self.assertGreater(info(r, "grown")["Number of filters"], 4)
        for key in ["small", "grown", "fixed"]:
            chunks = dump(r, key)
            # The first chunk, at iterator 1, begins with the two headers
            # (here it is the whole image); each iterator is 1 + the
            # chunk's offset.
            self.assertEqual(chunks[0][0], 1)
            self.assertEqual(len(chunks), 1)
            self.assertEqual(chunks[0][1][64:72], FILE_MAGIC)
            offset = 0
            for it, data in chunks:
                self.assertEqual(it, offset + 1)
                offset += len(data)
            self.assertEqual(load(r, "copy-" + key, chunks), b"OK")
            self.assert_same(key, "copy-" + key, probe)
        # The full non-scaling filter stays full.
        self.assertEqual(r.call("BF.CARD", "copy-fixed"), 100)
        self.assertEqual(r.call("BF.ADD", "copy-fixed", "new item"),
                         r.call("BF.ADD", "fixed", "new item"))
        # LOADCHUNK replaces what the key held.
        self.assertEqual(load(r, "small", dump(r, "grown")), b"OK")
        self.assert_same("small", "grown", probe)

    def test_large_filter_in_several_chunks(self):
        r = self.r
        r.call("BF.RESERVE", "big", "0.01", "40000000")
        some = items(b"k", 20000)
        madd(r, "big", some)
        chunks = dump(r, "big")
        self.assertGreaterEqual(len(chunks), 4)
        self.assertEqual([it for it, _ in chunks], [1 + (k << 24) for k in range(len(chunks))])
        self.assertTrue(all(len(data) <= 16 << 20 for _, data in chunks))
        self.assertEqual(max(len(data) for _, data in chunks), 16 << 20)
        self.assertEqual(load(r, "copy", chunks), b"OK")
        self.assertEqual(mexists(r, "copy", some), [1] * len(some))
        self.assertEqual(info(r, "copy"), info(r, "big"))
        r.call("DEL", "copy")

    def test_a_load_is_a_key_from_its_first_chunk(self):
        r = self.r
        chunks = two_chunks(r, "f")
        self.assertEqual(r.call("BF.LOADCHUNK", "g", *chunks[0]), b"OK")
        # The load is in the key (so saves, rewrites and resyncs carry it);
        # no filter answers from it yet.
        self.assertEqual(r.call("EXISTS", "g"), 1)
        self.assertEqual(r.call("TYPE", "g"), b"amqfilter")
        self.assertEqual(r.call("BF.EXISTS", "g", "a"), 0)
        # In another database the same key name has no load.
        other = Raw(self.server.port)
        try:
            self.assertEqual(other.call("SELECT", 1), b"OK")
            self.assertEqual(other.call("BF.LOADCHUNK", "g", *chunks[1]), NO_LINK)
            self.assertEqual(other.call("EXISTS", "g"), 0)
        finally:
            other.close()
        self.assertEqual(load(r, "g", chunks[1:]), b"OK")
        self.assertEqual(r.call("BF.EXISTS", "g", "a"), 1)

    def test_many_loads_at_once(self):
        r = self.r
        header, body = two_chunks(r, "f")
        for i in range(100):
            self.assertEqual(r.call("BF.LOADCHUNK", "g%d" % i, *header), b"OK")
        for i in range(100):
            self.assertEqual(r.call("BF.LOADCHUNK", "g%d" % i, *body), b"OK")
            self.assertEqual(r.call("BF.MEXISTS", "g%d" % i, "a", "b"), [1, 1])

    def test_refusals(self):
        r = self.r
        r.call("BF.RESERVE", "f", "0.01", "100")
        r.call("BF.MADD", "f", *items(b"k", 80))
        [(_, image)] = dump(r, "f")
        header, body = two_chunks(r, "big")
        self.assertEqual(r.call("BF.SCANDUMP", "missing", "0"), Error("ERR not found"))
        self.assertEqual(r.call("BF.SCANDUMP", "f", "x"),
                         Error("Second argument must be numeric"))
        self.assertEqual(r.call("BF.LOADCHUNK", "g", "x", b"data"),
                         Error("ERR Second argument must be numeric"))
        # A chunk without its load, or out of order.
        self.assertEqual(r.call("BF.LOADCHUNK", "g", *body), NO_LINK)
        self.assertEqual(r.call("BF.LOADCHUNK", "g", *header), b"OK")
        self.assertEqual(r.call("BF.LOADCHUNK", "g", body[0] + 1, body[1]), NO_LINK)
        # ... which left the load as it was: the right chunk completes it.
        self.assertEqual(r.call("BF.LOADCHUNK", "g", *body), b"OK")
        self.assertEqual(r.call("BF.EXISTS", "g", "a"), 1)
        # A chunk past the image's end.
        self.assertEqual(r.call("BF.LOADCHUNK", "g", *header), b"OK")
        self.assertEqual(r.call("BF.LOADCHUNK", "g", body[0], body[1] + b"x"),
                         TOO_BIG)
        # A chunk cut short is refused, first or later (chunks must be as
        # SCANDUMP cut them); the load stays where it was.
        self.assertEqual(r.call("DEL", "g"), 1)
        self.assertEqual(r.call("BF.LOADCHUNK", "g", 1, header[1][:-1]), BAD_DATA)
        self.assertEqual(r.call("EXISTS", "g"), 0)
        self.assertEqual(r.call("BF.LOADCHUNK", "g", *header), b"OK")
        self.assertEqual(r.call("BF.LOADCHUNK", "g", body[0], body[1][:-9]), BAD_DATA)
        self.assertEqual(r.call("BF.LOADCHUNK", "g", body[0] + len(body[1]) - 9,
                                body[1][-9:] + b"x"), NO_LINK)
        self.assertEqual(r.call("TYPE", "g"), b"amqfilter")
        self.assertEqual(r.call("BF.EXISTS", "g", "a"), 0)
        self.assertEqual(r.call("DEL", "g"), 1)
        # Damaged headers.
        head = image[:128]
        for damaged in [b"", head[:127], b"x" * 128, head[:64] + b"y" * 64, b"z" * 64 + head[64:]]:
            self.assertEqual(r.call("BF.LOADCHUNK", "g", 1, damaged), BAD_DATA)
        for iterator in [0, -1, -2**63]:
            self.assertEqual(r.call("BF.LOADCHUNK", "g", iterator, head), NO_LINK)
        # Single bits flipped anywhere in the image: refused at the header
        # (a length field that changed makes the chunk too short or too
        # long), or when the image completes and fails its checksums; never
        # a filter.
        rng = random.Random(1)
        for _ in range(300):
            position = rng.randrange(len(image))
            damaged = bytearray(image)
            damaged[position] ^= 1 << rng.randrange(8)
            damaged = bytes(damaged)
            reply = load(r, "g", [(1, damaged)])
            self.assertIn(reply, [BAD_DATA, TOO_BIG], position)
            self.assertEqual(r.call("EXISTS", "g"), 0, position)
        self.assertEqual(r.call("EXISTS", "g"), 0)

    def test_random_chunks_and_iterators(self):
        r = self.r
        r.call("BF.RESERVE", "f", "0.01", "100", "EXPANSION", "2")
        r.call("BF.MADD", "f", *items(b"k", 300))
        chunks = dump(r, "f")
        allowed = {BAD_DATA, NO_LINK, TOO_BIG, b"OK"}
        rng = random.Random(2)
        for i in range(500):
            kind = rng.randrange(4)
            if kind == 0:  # noise
                data = bytes(rng.randrange(256) for _ in range(rng.randrange(300)))
            elif kind == 1:  # a real header, then noise
                data = chunks[0][1] + bytes(rng.randrange(256) for _ in range(rng.randrange(300)))
            elif kind == 2:  # a real chunk cut short or grown
                data = rng.choice(chunks)[1]
                data = data[:rng.randrange(len(data) + 1)] + b"\0" * rng.randrange(3)
            else:  # the header with its length fields changed
                data = bytearray(chunks[0][1])
                data[64 + rng.choice([40, 56, 57, 62, 63])] = rng.randrange(256)
                data = bytes(data)
            iterator = rng.choice([1, 1, rng.randrange(-5, 3000), rng.randrange(2**63)])
            reply = r.call("BF.LOADCHUNK", "g%d" % (i % 5), iterator, data)
            self.assertIn(reply, allowed, (iterator, data[:20]))
            if rng.randrange(10) == 0:
                reply = r.call("BF.SCANDUMP", "f", rng.choice([rng.randrange(3000),
                                                               rng.randrange(2**63)]))
                self.assertTrue(isinstance(reply, list) and type(reply[0]) is int, reply)
        for i in range(5):
            reply = r.call("BF.EXISTS", "g%d" % i, "k-1")
            self.assertIn(reply, [0, 1])
        for iterator in [-1, -2**63]:
            self.assertEqual(r.call("BF.SCANDUMP", "f", iterator), Error("ERR invalid iterator"))
        for iterator in [2**63 - 1, 10**9, 1 + sum(len(data) for _, data in chunks)]:
            self.assertEqual(r.call("BF.SCANDUMP", "f", iterator), [0, b""])
        self.assertEqual(r.call("PING"), b"PONG")
        self.assertEqual(dump(r, "f"), chunks)


# ---- persistence and replication ------------------------------------------------------


class Persistence(unittest.TestCase):
    def fill(self, r):
        r.call("BF.RESERVE", "grown", "0.01", "50", "EXPANSION", "2")
        madd(r, "grown", items(b"k", 1000))
        r.call("BF.RESERVE", "fixed", "0.001", "20", "NONSCALING")
        r.call("BF.MADD", "fixed", *items(b"k", 20))
        r.call("BF.INSERT", "one", "EXPANSION", "1", "CAPACITY", "10", "ITEMS", *items(b"k", 35))

    def snapshot(self, r):
        probe = items(b"k", 1000) + items(b"absent", 5000)
        return {key: (r.call("BF.CARD", key), info(r, key), mexists(r, key, probe),
                      r.call("BF.ADD", key, "k-1"), dump(r, key))
                for key in ["grown", "fixed", "one"]}

    def test_debug_reload_and_restart(self):
        server = Server(MODULE)
        r = Raw(server.port)
        try:
            self.fill(r)
            before = self.snapshot(r)
            self.assertEqual(r.call("DEBUG", "RELOAD"), b"OK")
            self.assertEqual(self.snapshot(r), before)
            self.assertEqual(r.call("SAVE"), b"OK")
            r.close()
            server.restart()
            r = Raw(server.port)
            self.assertEqual(self.snapshot(r), before)
            # The full non-scaling filter is still full.
            self.assertEqual(r.call("BF.ADD", "fixed", "new item"),
                             Error("ERR non scaling filter is full"))
        finally:
            r.close()
            server.cleanup()

    def test_aof_without_rdb_preamble(self):
        server = Server(MODULE, args=["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
        r = Raw(server.port)
        try:
            self.fill(r)
            before = self.snapshot(r)
            # The commands themselves are replayed from the AOF...
            r.close()
            server.restart()
            r = Raw(server.port)
            self.assertEqual(self.snapshot(r), before)
            # ... and after a rewrite, the values.
            r.call("BGREWRITEAOF")
            deadline = time.time() + 30
            while b"aof_rewrite_in_progress:1" in r.call("INFO", "persistence") or \
                    b"aof_rewrite_scheduled:1" in r.call("INFO", "persistence"):
                self.assertLess(time.time(), deadline)
                time.sleep(0.05)
            r.close()
            server.restart()
            r = Raw(server.port)
            self.assertEqual(self.snapshot(r), before)
        finally:
            r.close()
            server.cleanup()

    def test_replica_follows_every_write(self):
        master = Server(MODULE)
        replica = Server(MODULE, args=["--replicaof", "127.0.0.1", str(master.port)])
        m, s = Raw(master.port), Raw(replica.port)
        try:
            deadline = time.time() + 30
            while b"master_link_status:up" not in s.call("INFO", "replication"):
                self.assertLess(time.time(), deadline)
                time.sleep(0.05)
            self.fill(m)
            m.call("BF.ADD", "added", "a")
            self.assertEqual(load(m, "loaded", dump(m, "grown")), b"OK")
            self.assertEqual(m.call("WAIT", 1, 10000), 1)
            for key in ["grown", "fixed", "one", "added", "loaded"]:
                self.assertEqual(info(s, key), info(m, key), key)
                self.assertEqual(dump(s, key), dump(m, key), key)
        finally:
            m.close()
            s.close()
            replica.cleanup()
            master.cleanup()


# ---- RESP3 and python3-redis's helpers --------------------------------------------------


class Clients(BfTest):
    def test_resp3_types(self):
        # python3-redis 4.3.4 speaks RESP2 only: RESP3 through the raw client.
        r3 = Raw(self.server.port, resp3=True)
        try:
            self.assertEqual(r3.call("BF.RESERVE", "f", "0.01", "100"), b"OK")
            self.assertIs(r3.call("BF.ADD", "f", "a"), True)
            self.assertIs(r3.call("BF.ADD", "f", "a"), False)
            self.assertIs(r3.call("BF.EXISTS", "f", "a"), True)
            self.assertIs(r3.call("BF.EXISTS", "f", "b"), False)
            self.assertIs(r3.call("BF.EXISTS", "missing", "b"), False)
            self.assertEqual(r3.call("BF.MADD", "f", "a", "b"), [False, True])
            self.assertEqual(r3.call("BF.MEXISTS", "f", "a", "c"), [True, False])
            self.assertEqual(r3.call("BF.INSERT", "f", "ITEMS", "c", "a"), [True, False])
            self.assertTrue(all(type(x) is bool for x in r3.call("BF.MEXISTS", "f", "a", "z")))
            card = r3.call("BF.CARD", "f")
            self.assertEqual((type(card), card), (int, 3))
            figures = r3.call("BF.INFO", "f")
            self.assertIsInstance(figures, Map)
            self.assertEqual([k for k, _ in figures],
                             [b"Capacity", b"Size", b"Number of filters",
                              b"Number of items inserted", b"Expansion rate"])
            self.assertEqual(dict(figures)[b"Number of items inserted"], 3)
            self.assertEqual(r3.call("BF.INFO", "f", "CAPACITY"), [100])
            r3.call("BF.RESERVE", "n", "0.01", "1", "NONSCALING")
            self.assertEqual(r3.call("BF.INSERT", "n", "ITEMS", "a", "b"),
                             [True, Error("ERR non scaling filter is full")])
            self.assertIsNone(dict(r3.call("BF.INFO", "n"))[b"Expansion rate"])
            reply = r3.call("BF.SCANDUMP", "f", 0)
            self.assertEqual(tuple(reply), dump(self.r, "f")[0])
            self.assertEqual(reply[0], 1)
            self.assertEqual(r3.call("BF.SCANDUMP", "f", reply[0]), [0, b""])
        finally:
            r3.close()

    def test_python_redis_helpers(self):
        client = self.server.client(decode_responses=False)
        bf = client.bf()
        self.assertTrue(bf.create("f", 0.01, 1000))
        self.assertTrue(bf.create("g", 0.001, 10, expansion=4))
        self.assertTrue(bf.create("n", 0.01, 2, noScale=True))
        with self.assertRaisesRegex(redis.ResponseError, "^item exists$"):
            bf.create("f", 0.01, 1000)
        self.assertEqual(bf.add("f", "a"), 1)
        self.assertEqual(bf.add("f", "a"), 0)
        self.assertEqual(bf.madd("f", "b", "c", "a"), [1, 1, 0])
        self.assertEqual(bf.exists("f", "b"), 1)
        self.assertEqual(bf.exists("f", "zz"), 0)
        self.assertEqual(bf.mexists("f", "a", "b", "zz"), [1, 1, 0])
        self.assertEqual(bf.insert("h", ["x", "y"], capacity=500, error=0.001, expansion=3),
                         [1, 1])
        self.assertEqual(bf.insert("h", ["x", "z"], noCreate=True), [0, 1])
        with self.assertRaisesRegex(redis.ResponseError, "^not found$"):
            bf.insert("missing", ["x"], noCreate=True)
        self.assertEqual(bf.insert("i", ["x"], noScale=True, capacity=1), [1])
        result = bf.insert("i", ["x", "y"])
        self.assertEqual(result[0], 0)
        self.assertIsInstance(result[1], redis.ResponseError)
        with self.assertRaisesRegex(redis.ResponseError, "^Nonscaling filters cannot expand$"):
            bf.insert("j", ["x"], expansion=2, noScale=True)
        figures = bf.info("h")
        self.assertEqual((figures.capacity, figures.filterNum, figures.insertedNum,
                          figures.expansionRate), (500, 1, 3, 3))
        self.assertGreater(figures.size, 0)
        self.assertIsNone(bf.info("n").expansionRate)
        self.assertEqual(client.execute_command("BF.CARD", "f"), 3)
        # scandump and loadchunk, python3-redis's documented loop.
        for i in range(2000):
            bf.add("g", "item-%d" % i)

        def copy(key, to):
            chunks, it = [], 0
            while True:
                it, data = bf.scandump(key, it)
                if it == 0:
                    break
                chunks.append((it, data))
            for it, data in chunks:
                self.assertTrue(bf.loadchunk(to, it, data))
            return len(chunks)

        self.assertEqual(copy("g", "copy"), 1)
        self.assertEqual(bf.mexists("copy", *["item-%d" % i for i in range(2000)]), [1] * 2000)
        self.assertEqual(vars(bf.info("copy")), vars(bf.info("g")))
        # An image of more than one chunk.
        self.assertTrue(bf.create("big", 0.01, 13000000))
        self.assertEqual(bf.madd("big", "a", "b"), [1, 1])
        self.assertGreater(copy("big", "big-copy"), 1)
        self.assertEqual(bf.mexists("big-copy", "a", "b"), [1, 1])
        self.assertEqual(vars(bf.info("big-copy")), vars(bf.info("big")))


if __name__ == "__main__":
    MODULE, AMQ = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
