"""The module's CF.* commands, RedisBloom's cuckoo filter surface, through a
real client (Debian's python3-redis) against a real redis-server: what
RedisBloom's flow tests assert for CF.* (docs/REDIS.md says where amq
answers differently and why), every r.cf() helper, RESP3 types, SCANDUMP and
LOADCHUNK, persistence and replication.

Usage: test_cf.py MODULE_SO AMQ_BINARY
"""
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

KEYS = [b"key-%d" % i for i in range(20000)]
ABSENT = [b"absent-%d" % i for i in range(20000)]
INFO_FIELDS = [b"Size", b"Number of buckets", b"Number of filters", b"Number of items inserted",
               b"Number of items deleted", b"Bucket size", b"Expansion rate", b"Max iterations"]
# What a damaged LOADCHUNK may answer, and nothing else.
LOAD_ERRORS = {"Invalid position", "Couldn't create filter!", "Couldn't load chunk!",
               "item exists"}


def info(r, key):
    reply = r.execute_command("CF.INFO", key)
    return dict(zip(reply[0::2], reply[1::2]))


def debug(r, key):
    return dict(field.split(b":") for field in r.execute_command("CF.DEBUG", key).split())


def error_of(r, *args):
    """The error text a command answers (redis-py strips "ERR "), or None."""
    try:
        r.execute_command(*args)
    except redis.ResponseError as e:
        return str(e)
    return None


def scandump(r, key):
    """Every (iterator, chunk) pair of a SCANDUMP. (The tests call r.cf()'s
    helpers on clients of their own: r.cf() installs reply parsers on its
    client, CF.INFO's among them.)"""
    chunks, iterator = [], 0
    while True:
        iterator, data = r.execute_command("CF.SCANDUMP", key, iterator)
        if iterator == 0:
            return chunks
        chunks.append((iterator, data))


def add_until_error(r, key, items):
    """CF.ADD items in pipelined batches until one fails: (how many were
    added, the error)."""
    for start in range(0, len(items), 500):
        pipe = r.pipeline(transaction=False)
        for item in items[start:start + 500]:
            pipe.execute_command("CF.ADD", key, item)
        for i, answer in enumerate(pipe.execute(raise_on_error=False)):
            if isinstance(answer, Exception):
                return start + i, str(answer)
    return len(items), None


class Resp3:
    """A raw RESP3 connection (python3-redis 4.3.4 speaks only RESP2): HELLO
    3, then commands whose replies are parsed into Python values with their
    RESP3 type kept: booleans as bool, null as None, maps as dict."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buffer = b""
        hello = self.call("HELLO", "3")
        assert hello[b"proto"] == 3, hello

    def close(self):
        self.sock.close()

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()

    def line(self):
        while b"\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def exactly(self, n):
        while len(self.buffer) < n + 2:
            self.buffer += self.sock.recv(65536)
        data, self.buffer = self.buffer[:n], self.buffer[n + 2:]
        return data

    def read(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            return redis.ResponseError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"#":
            return rest == b"t"
        if kind == b"_":
            return None
        if kind == b",":
            return float(rest)
        if kind in (b"$", b"="):
            return None if int(rest) < 0 else self.exactly(int(rest))
        if kind in (b"*", b"~"):
            return [self.read() for _ in range(int(rest))]
        if kind == b"%":
            return {self.read(): self.read() for _ in range(int(rest))}
        raise AssertionError("unexpected RESP3 reply %r" % line)


class CfCommands(unittest.TestCase):
    def setUp(self):
        self.server = Server(MODULE)
        self.r = self.server.client()

    def tearDown(self):
        self.server.cleanup()

    def test_counts_and_deletes(self):
        r = self.r
        self.assertEqual(r.execute_command("CF.ADD", "c", "a"), 1)
        # A duplicate is stored again.
        self.assertEqual(r.execute_command("CF.ADD", "c", "a"), 1)
        self.assertEqual(r.execute_command("CF.COUNT", "c", "a"), 2)
        self.assertEqual(r.execute_command("CF.DEL", "c", "a"), 1)
        self.assertEqual(r.execute_command("CF.COUNT", "c", "a"), 1)
        self.assertEqual(r.execute_command("CF.EXISTS", "c", "a"), 1)
        self.assertEqual(r.execute_command("CF.DEL", "c", "a"), 1)
        self.assertEqual(r.execute_command("CF.EXISTS", "c", "a"), 0)
        self.assertEqual(r.execute_command("CF.DEL", "c", "never-added"), 0)
        fields = info(r, "c")
        self.assertEqual(fields[b"Number of items inserted"], 0)
        self.assertEqual(fields[b"Number of items deleted"], 2)
        self.assertEqual(r.execute_command("CF.COUNT", "missing", "a"), 0)
        self.assertEqual(error_of(r, "CF.DEL", "missing", "a"), "Not found")

    def test_addnx(self):
        self.assertEqual(self.r.execute_command("CF.ADDNX", "c", "a"), 1)
        self.assertEqual(self.r.execute_command("CF.ADDNX", "c", "a"), 0)
        self.assertEqual(self.r.execute_command("CF.COUNT", "c", "a"), 1)

    def test_insert_defaults_and_nocreate(self):
        r = self.r
        r.execute_command("CF.ADD", "added", "x")
        self.assertEqual(r.execute_command("CF.INSERT", "inserted", "ITEMS", "x"), [1])
        self.assertEqual(info(r, "inserted"), info(r, "added"))
        self.assertEqual(debug(r, "inserted"), debug(r, "added"))
        # CAPACITY sizes a filter INSERT creates as RESERVE would.
        r.execute_command("CF.INSERT", "big", "CAPACITY", 10000, "ITEMS", "x")
        r.execute_command("CF.RESERVE", "reserved", 10000)
        self.assertEqual(debug(r, "big")[b"buckets"], debug(r, "reserved")[b"buckets"])
        self.assertGreater(int(debug(r, "big")[b"buckets"]), int(debug(r, "added")[b"buckets"]))
        # NOCREATE: a missing key is an error, an existing one takes the items.
        self.assertEqual(error_of(r, "CF.INSERT", "nokey", "NOCREATE", "ITEMS", "a"), "not found")
        self.assertEqual(r.exists("nokey"), 0)
        self.assertEqual(r.execute_command("CF.INSERT", "added", "NOCREATE", "ITEMS", "y", "z"),
                         [1, 1])
        self.assertEqual(r.execute_command("CF.INSERTNX", "added", "ITEMS", "y", "w"), [0, 1])
        self.assertEqual(r.execute_command("CF.MEXISTS", "added", "x", "y", "z", "w", "v"),
                         [1, 1, 1, 1, 0])
        # Options in any order before ITEMS.
        self.assertEqual(
            error_of(r, "CF.INSERT", "o", "NOCREATE", "CAPACITY", 100, "ITEMS", "a"), "not found")
        self.assertEqual(r.execute_command("CF.INSERT", "o", "CAPACITY", 100, "ITEMS", "a"), [1])
        self.assertEqual(
            r.execute_command("CF.INSERT", "o", "NOCREATE", "CAPACITY", 100, "ITEMS", "b"), [1])

    def test_mexists_and_exists_on_missing_and_wrong_keys(self):
        r = self.r
        self.assertEqual(r.execute_command("CF.MEXISTS", "missing", "a"), [0])
        self.assertEqual(r.execute_command("CF.EXISTS", "missing", "a"), 0)
        r.set("string", "v")
        self.assertEqual(r.execute_command("CF.MEXISTS", "string", "a", "b"), [0, 0])
        self.assertEqual(r.execute_command("CF.EXISTS", "string", "a"), 0)
        self.assertEqual(r.execute_command("CF.COUNT", "string", "a"), 0)
        self.assertEqual(error_of(r, "CF.DEL", "string", "a"), "Not found")
        self.assertEqual(error_of(r, "CF.ADD", "string", "a")[:9], "WRONGTYPE")
        self.assertEqual(error_of(r, "CF.INSERT", "string", "ITEMS", "a")[:9], "WRONGTYPE")
        self.assertEqual(error_of(r, "CF.INFO", "string")[:9], "WRONGTYPE")
        self.assertEqual(error_of(r, "CF.RESERVE", "string", 100), "item exists")
        # A filter of the module's type but another kind is no cuckoo filter.
        r.execute_command("AMQ.BUILD", "fuse", "fuse8", "ITEMS", "a")
        self.assertEqual(error_of(r, "CF.ADD", "fuse", "a")[:9], "WRONGTYPE")
        self.assertEqual(r.execute_command("CF.EXISTS", "fuse", "a"), 0)
        self.assertEqual(error_of(r, "CF.INFO", "missing"), "not found")
        self.assertEqual(error_of(r, "CF.SCANDUMP", "missing", 0), "not found")

    def test_mexists_agrees_with_exists(self):
        r = self.r
        r.execute_command("CF.RESERVE", "c", 5000, "BUCKETSIZE", 4)
        r.execute_command("CF.INSERT", "c", "ITEMS", *KEYS[:4000])
        queries = KEYS[:4000] + ABSENT[:4000]
        batch = r.execute_command("CF.MEXISTS", "c", *queries)
        pipe = r.pipeline(transaction=False)
        for q in queries:
            pipe.execute_command("CF.EXISTS", "c", q)
        self.assertEqual(batch, pipe.execute())
        self.assertEqual(batch[:4000], [1] * 4000)
        # 8-bit fingerprints, 4 slots: at most 2b/255 = 3.1% of absent keys.
        self.assertLess(sum(batch[4000:]), 4000 * 8 / 255)

    def test_info_layout(self):
        r = self.r
        r.execute_command("CF.RESERVE", "c", 1000, "EXPANSION", 3, "MAXITERATIONS", 50)
        r.execute_command("CF.ADD", "c", "a")
        reply = r.execute_command("CF.INFO", "c")
        self.assertEqual(reply[0::2], INFO_FIELDS)
        fields = dict(zip(reply[0::2], reply[1::2]))
        self.assertEqual(fields[b"Number of filters"], 1)
        self.assertEqual(fields[b"Number of items inserted"], 1)
        self.assertEqual(fields[b"Bucket size"], 2)
        self.assertEqual(fields[b"Expansion rate"], 4)  # rounded up to a power of two
        self.assertEqual(fields[b"Max iterations"], 50)
        # Size is the table's bytes: a bucket of two 8-bit fingerprints each.
        self.assertEqual(fields[b"Size"], 2 * fields[b"Number of buckets"])
        parsed = self.server.client().cf().info("c")
        self.assertEqual((parsed.size, parsed.bucketNum, parsed.filterNum, parsed.insertedNum,
                          parsed.deletedNum, parsed.bucketSize, parsed.expansionRate,
                          parsed.maxIteration),
                         tuple(fields[name] for name in INFO_FIELDS))
        self.assertEqual(debug(r, "c"), {b"bktsize": b"2", b"buckets": b"%d" % parsed.bucketNum,
                                         b"items": b"1", b"deletes": b"0", b"filters": b"1",
                                         b"max_iterations": b"50", b"expansion": b"4"})
        self.assertIn("wrong number of arguments", error_of(r, "CF.INFO", "c", "x"))
        self.assertGreater(r.memory_usage("c"), fields[b"Size"])

    def test_reserve_validation_matrix(self):
        r = self.r
        cases = [
            (("CF.RESERVE",), "wrong number of arguments for 'cf.reserve' command"),
            (("CF.RESERVE", "k"), "wrong number of arguments for 'cf.reserve' command"),
            (("CF.RESERVE", "k", 100, "BUCKETSIZE"),
             "wrong number of arguments for 'cf.reserve' command"),
            (("CF.RESERVE", "k", "x"), "Bad capacity"),
            (("CF.RESERVE", "k", 2 ** 64), "Bad capacity"),
            (("CF.RESERVE", "k", 1), "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"),
            (("CF.RESERVE", "k", 0), "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"),
            (("CF.RESERVE", "k", -5), "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"),
            (("CF.RESERVE", "k", 1073741825),
             "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"),
            (("CF.RESERVE", "k", 9, "BUCKETSIZE", 5),
             "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"),
            (("CF.RESERVE", "k", 100, "BUCKETSIZE", "x"), "Couldn't parse BUCKETSIZE"),
            (("CF.RESERVE", "k", 100, "BUCKETSIZE", 0),
             "BUCKETSIZE: value must be in the range [1, 255]"),
            (("CF.RESERVE", "k", 1000, "BUCKETSIZE", 256),
             "BUCKETSIZE: value must be in the range [1, 255]"),
            (("CF.RESERVE", "k", 100, "MAXITERATIONS", "x"), "Couldn't parse MAXITERATIONS"),
            (("CF.RESERVE", "k", 100, "MAXITERATIONS", 0),
             "MAXITERATIONS: value must be in the range [1, 65535]"),
            (("CF.RESERVE", "k", 100, "MAXITERATIONS", 65536),
             "MAXITERATIONS: value must be in the range [1, 65535]"),
            (("CF.RESERVE", "k", 100, "EXPANSION", "x"), "Couldn't parse EXPANSION"),
            (("CF.RESERVE", "k", 100, "EXPANSION", -1),
             "EXPANSION: value must be in the range [0, 32768]"),
            (("CF.RESERVE", "k", 100, "EXPANSION", 32769),
             "EXPANSION: value must be in the range [0, 32768]"),
            # RedisBloom's order: MAXITERATIONS, then BUCKETSIZE, then EXPANSION.
            (("CF.RESERVE", "k", 100, "EXPANSION", "x", "BUCKETSIZE", 0, "MAXITERATIONS", 0),
             "MAXITERATIONS: value must be in the range [1, 65535]"),
            (("CF.RESERVE", "k", 100, "BUCKETSIZES", 4), "Unknown argument received"),
            (("CF.INSERT", "k", "CAPACITY", -1, "ITEMS", "a"),
             "Capacity must be in the range [cf-bucket-size * 2, 1073741824]"),
            (("CF.INSERT", "k", "CAPACITY", 3, "ITEMS", "a"),
             "Capacity must be in the range [cf-bucket-size * 2, 1073741824]"),
            (("CF.INSERT", "k", "CAPACITY", "x", "ITEMS", "a"), "Bad capacity"),
            (("CF.INSERT", "k", "CAPACITY", 100, "BOGUS", "ITEMS", "a"),
             "Unknown argument received"),
            (("CF.INSERT", "k", "ITEMS"), "wrong number of arguments for 'cf.insert' command"),
            (("CF.INSERT", "k", "CAPACITY", 100, "a"), "Unknown argument received"),
            (("CF.INSERT", "k", "CAPACITY", 100),
             "wrong number of arguments for 'cf.insert' command"),
            (("CF.INSERTNX", "k", "CAPACITY"),
             "wrong number of arguments for 'cf.insertnx' command"),
            (("CF.ADD", "k"), "wrong number of arguments for 'cf.add' command"),
            (("CF.ADD", "k", "a", "b"), "wrong number of arguments for 'cf.add' command"),
            (("CF.ADDNX", "k"), "wrong number of arguments for 'cf.addnx' command"),
            (("CF.EXISTS", "k"), "wrong number of arguments for 'cf.exists' command"),
            (("CF.MEXISTS", "k"), "wrong number of arguments for 'cf.mexists' command"),
            (("CF.DEL", "k"), "wrong number of arguments for 'cf.del' command"),
            (("CF.COUNT", "k", "a", "b"), "wrong number of arguments for 'cf.count' command"),
            (("CF.SCANDUMP", "k"), "wrong number of arguments for 'cf.scandump' command"),
            (("CF.LOADCHUNK", "k", 1), "wrong number of arguments for 'cf.loadchunk' command"),
        ]
        for args, expected in cases:
            self.assertEqual(error_of(r, *args), expected, args)
        self.assertEqual(r.keys("*"), [])
        # RedisBloom's largest values are accepted.
        for i, (option, largest) in enumerate([("BUCKETSIZE", 255), ("MAXITERATIONS", 65535),
                                               ("EXPANSION", 32768)]):
            self.assertEqual(r.execute_command("CF.RESERVE", "max%d" % i, 1000, option, largest),
                             b"OK")
            self.assertEqual(r.execute_command("CF.ADD", "max%d" % i, "a"), 1)
        self.assertEqual(info(r, "max0")[b"Bucket size"], 255)
        self.assertEqual(info(r, "max2")[b"Expansion rate"], 32768)
        self.assertEqual(r.execute_command("CF.RESERVE", "lower", 4, "bucketsize", 2), b"OK")
        self.assertEqual(error_of(r, "CF.RESERVE", "lower", 100), "item exists")

    def test_every_bucket_size_works(self):
        r = self.r
        for b in [1, 2, 3, 4, 5, 8, 9, 255]:
            key = "b%d" % b
            r.execute_command("CF.RESERVE", key, 2000, "BUCKETSIZE", b, "EXPANSION", 0)
            self.assertEqual(r.execute_command("CF.INSERT", key, "ITEMS", *KEYS[:2000]),
                             [1] * 2000, b)
            answers = r.execute_command("CF.MEXISTS", key, *(KEYS[:2000] + ABSENT[:8000]))
            self.assertEqual(answers[:2000], [1] * 2000, b)
            # The FPR stays within RedisBloom's bound for b, 2b/255 at most
            # (far below it at this load).
            self.assertLess(sum(answers[2000:]), 8000 * 2 * b / 255, b)
            self.assertEqual(info(r, key)[b"Bucket size"], b)

    def test_add_once_file_refuses_del(self):
        """A filter built with `amq build --add-once` holds an item once
        however often it was given: restored into Redis, it answers EXISTS
        and COUNT, and CF.DEL is refused with the reason."""
        import subprocess
        import tempfile
        with tempfile.TemporaryDirectory() as scratch:
            keys = os.path.join(scratch, "keys.txt")
            with open(keys, "w") as out:
                out.write("apple\napple\nbanana\n")
            path = os.path.join(scratch, "once.amq")
            subprocess.run([AMQ, "build", "-t", "cuckoo", "--add-once", "-o", path, keys],
                           check=True)
            with open(path, "rb") as f:
                self.assertEqual(self.r.execute_command("AMQ.RESTORE", "once", f.read()), b"OK")
        self.assertEqual(self.r.execute_command("CF.EXISTS", "once", "apple"), 1)
        self.assertEqual(self.r.execute_command("CF.COUNT", "once", "apple"), 1)
        self.assertIn("add-once", error_of(self.r, "CF.DEL", "once", "apple"))
        self.assertEqual(self.r.execute_command("CF.EXISTS", "once", "apple"), 1)
        self.assertEqual(self.r.execute_command("CF.ADD", "once", "cherry"), 1)

    def test_expansion_0(self):
        r = self.r
        r.execute_command("CF.RESERVE", "c", 4, "EXPANSION", 0)
        # amq sizes a table for its capacity with margin: far more than 4
        # distinct items fit before it is full (docs/REDIS.md).
        added, error = add_until_error(r, "c", KEYS[:1000])
        self.assertEqual(error, "Filter is full")
        self.assertGreater(added, 4)
        self.assertEqual(r.execute_command("CF.INSERT", "c", "ITEMS", "new1", "new2"), [-1, -1])
        self.assertEqual(r.execute_command("CF.INSERTNX", "c", "ITEMS", KEYS[0], "new3"), [0, -1])
        self.assertEqual(error_of(r, "CF.ADDNX", "c", "new4"), "Filter is full")
        self.assertEqual(info(r, "c")[b"Number of filters"], 1)
        self.assertEqual(r.execute_command("CF.MEXISTS", "c", *KEYS[:added]), [1] * added)
        # A removal makes room again.
        self.assertEqual(r.execute_command("CF.DEL", "c", KEYS[0]), 1)
        self.assertEqual(r.execute_command("CF.ADD", "c", KEYS[0]), 1)
        # One item's copies never fill a filter (docs/REDIS.md, point 7):
        # RedisBloom answers "Filter is full" at the fifth copy here.
        r.execute_command("CF.RESERVE", "dup", 4, "EXPANSION", 0)
        added, error = add_until_error(r, "dup", [b"same"] * 1000)
        self.assertEqual((added, error), (1000, None))
        self.assertEqual(r.execute_command("CF.COUNT", "dup", "same"), 1000)
        self.assertEqual(add_until_error(r, "dup", KEYS[:3]), (3, None))
        for left in range(999, -1, -1):
            self.assertEqual(r.execute_command("CF.DEL", "dup", "same"), 1)
            self.assertEqual(r.execute_command("CF.COUNT", "dup", "same"), left)
        self.assertEqual(r.execute_command("CF.EXISTS", "dup", "same"), 0)

    def test_capacity_exhaustion_reaches_max_expansions(self):
        r = self.r
        r.execute_command("CF.RESERVE", "c", 4)
        added, error = add_until_error(r, "c", KEYS)
        self.assertEqual(error, "Maximum expansions reached")
        self.assertEqual(info(r, "c")[b"Number of filters"], 32)
        self.assertEqual(error_of(r, "CF.INSERT", "c", "ITEMS", "x"), "Maximum expansions reached")
        self.assertEqual(error_of(r, "CF.ADDNX", "c", "x"), "Maximum expansions reached")
        self.assertEqual(r.execute_command("CF.MEXISTS", "c", *KEYS[:added]), [1] * added)
        self.assertEqual(info(r, "c")[b"Number of items inserted"], added)

    def test_expansion_grows_tables(self):
        r = self.r
        filters = {}
        for e in [1, 2, 4, 16, 32768]:
            key = "e%d" % e
            r.execute_command("CF.RESERVE", key, 1000, "EXPANSION", e)
            self.assertEqual(r.execute_command("CF.INSERT", key, "ITEMS", *KEYS), [1] * len(KEYS))
            filters[e] = info(r, key)[b"Number of filters"]
            self.assertEqual(r.execute_command("CF.MEXISTS", key, *KEYS), [1] * len(KEYS))
        self.assertGreater(filters[1], filters[2])
        self.assertGreater(filters[2], filters[4])
        self.assertGreaterEqual(filters[4], filters[16])
        # amq grows by 16 at most: EXPANSION 32768 grows as 16 does.
        self.assertEqual(filters[32768], filters[16])
        self.assertEqual(info(r, "e32768")[b"Expansion rate"], 32768)

    def test_nul_bytes_and_large_items(self):
        r = self.r
        self.assertEqual(r.execute_command("CF.ADD", "c", b"a\x00b"), 1)
        self.assertEqual(r.execute_command("CF.MEXISTS", "c", b"a\x00b", b"a", b"a\x00c"),
                         [1, 0, 0])
        big = bytes(random.Random(1).getrandbits(8) for _ in range(1 << 20))
        self.assertEqual(r.execute_command("CF.ADD", "c", big), 1)
        self.assertEqual(r.execute_command("CF.EXISTS", "c", big), 1)
        self.assertEqual(r.execute_command("CF.COUNT", "c", big), 1)
        self.assertEqual(r.execute_command("CF.EXISTS", "c", big[:-1]), 0)
        self.assertEqual(r.execute_command("CF.DEL", "c", big), 1)
        self.assertEqual(r.execute_command("CF.EXISTS", "c", big), 0)

    def test_compact_and_debug(self):
        r = self.r
        r.execute_command("CF.ADD", "c", "a")
        self.assertEqual(r.execute_command("CF.COMPACT", "c"), b"OK")
        self.assertEqual(r.execute_command("CF.EXISTS", "c", "a"), 1)
        self.assertEqual(error_of(r, "CF.COMPACT", "missing"), "Cuckoo filter was not found")
        self.assertEqual(error_of(r, "CF.DEBUG", "missing"), "not found")
        self.assertEqual(set(debug(r, "c")), {b"bktsize", b"buckets", b"items", b"deletes",
                                              b"filters", b"max_iterations", b"expansion"})

    def test_python_helpers(self):
        """Every r.cf() method of python3-redis 4.3.4, under RESP2."""
        r = self.r
        cf = self.server.client().cf()
        self.assertTrue(cf.create("c", 1000, expansion=2, bucket_size=4, max_iterations=30))
        self.assertEqual(cf.add("c", "a"), 1)
        self.assertEqual(cf.addnx("c", "a"), 0)
        self.assertEqual(cf.addnx("c", "b"), 1)
        self.assertEqual(cf.insert("c", ["c1", "c2"]), [1, 1])
        self.assertEqual(cf.insert("new", ["x"], capacity=500), [1])
        with self.assertRaisesRegex(redis.ResponseError, "not found"):
            cf.insert("missing", ["x"], nocreate=True)
        self.assertEqual(cf.insertnx("c", ["a", "d"]), [0, 1])
        self.assertEqual(cf.insertnx("new2", ["x", "x"], capacity=500), [1, 0])
        self.assertEqual(cf.exists("c", "a"), 1)
        self.assertEqual(cf.exists("c", "zz"), 0)
        self.assertEqual(cf.mexists("c", "a", "b", "zz"), [1, 1, 0])
        self.assertEqual(cf.count("c", "a"), 1)
        self.assertEqual(cf.delete("c", "a"), 1)
        self.assertEqual(cf.delete("c", "a"), 0)
        parsed = cf.info("c")
        self.assertEqual((parsed.bucketSize, parsed.expansionRate, parsed.maxIteration,
                          parsed.insertedNum, parsed.deletedNum, parsed.filterNum),
                         (4, 2, 30, 4, 1, 1))
        raw = self.server.client(decode_responses=False).cf()
        chunks = []
        iterator = 0
        while True:
            iterator, data = raw.scandump("c", iterator)
            if iterator == 0:
                break
            chunks.append((iterator, data))
        self.assertEqual(len(chunks), 1)
        for iterator, data in chunks:
            self.assertTrue(raw.loadchunk("copy", iterator, data))
        self.assertEqual(cf.mexists("copy", "a", "b", "c1", "c2", "d", "zz"), [0, 1, 1, 1, 1, 0])
        self.assertEqual(r.execute_command("CF.INFO", "copy"), r.execute_command("CF.INFO", "c"))


class CfResp3(unittest.TestCase):
    """The RESP3 types: booleans where RedisBloom answers them, integers
    where it keeps them, a map for CF.INFO, null at the end of SCANDUMP."""

    def test_resp3_types(self):
        server = Server(MODULE)
        try:
            c = Resp3(server.port)
            self.assertEqual(c.call("CF.RESERVE", "c", 4, "EXPANSION", 0), b"OK")
            self.assertIs(c.call("CF.ADD", "c", "a"), True)
            self.assertIs(c.call("CF.ADDNX", "c", "a"), False)
            self.assertIs(c.call("CF.ADDNX", "c", "b"), True)
            self.assertIs(c.call("CF.EXISTS", "c", "a"), True)
            self.assertIs(c.call("CF.EXISTS", "c", "zz"), False)
            self.assertIs(c.call("CF.EXISTS", "missing", "zz"), False)
            self.assertEqual(c.call("CF.MEXISTS", "c", "a", "zz"), [True, False])
            self.assertEqual(c.call("CF.MEXISTS", "missing", "a"), [False])
            self.assertEqual(c.call("CF.INSERT", "c", "ITEMS", "d"), [True])
            self.assertEqual(c.call("CF.INSERTNX", "c", "ITEMS", "d", "e"), [0, 1])
            count = c.call("CF.COUNT", "c", "a")
            self.assertEqual((type(count), count), (int, 1))
            self.assertIs(c.call("CF.DEL", "c", "a"), True)
            self.assertIs(c.call("CF.DEL", "c", "a"), False)
            fields = c.call("CF.INFO", "c")
            self.assertEqual(list(fields), INFO_FIELDS)
            self.assertEqual(fields[b"Number of items deleted"], 1)
            iterator, chunk = c.call("CF.SCANDUMP", "c", 0)
            self.assertEqual(iterator, 1)
            self.assertEqual(c.call("CF.SCANDUMP", "c", iterator), [0, None])
            # A full filter: INSERT answers false, INSERTNX -1.
            for i in range(10000):
                reply = c.call("CF.ADD", "c", "fill-%d" % i)
                if isinstance(reply, redis.ResponseError):
                    self.assertEqual(str(reply), "Filter is full")
                    break
            else:
                self.fail("the filter never filled")
            self.assertEqual(c.call("CF.INSERT", "c", "ITEMS", "p", "q"), [False, False])
            self.assertEqual(c.call("CF.INSERTNX", "c", "ITEMS", "p"), [-1])
            self.assertEqual(c.call("CF.INSERTNX", "c", "ITEMS", "b"), [0])
            c.close()
        finally:
            server.cleanup()


class CfScanDump(unittest.TestCase):
    def setUp(self):
        self.server = Server(MODULE)
        self.r = self.server.client()

    def tearDown(self):
        self.server.cleanup()

    def assertSameFilter(self, a, b):
        r = self.r
        self.assertEqual(r.execute_command("CF.INFO", a), r.execute_command("CF.INFO", b))
        queries = KEYS[:3000] + ABSENT[:3000]
        self.assertEqual(r.execute_command("CF.MEXISTS", a, *queries),
                         r.execute_command("CF.MEXISTS", b, *queries))

    def test_round_trips(self):
        r = self.r
        # An empty filter: [0, nil] at once, as RedisBloom answers.
        r.execute_command("CF.RESERVE", "empty", 100)
        self.assertEqual(r.execute_command("CF.SCANDUMP", "empty", 0), [0, None])
        # Small, grown, deleted from, and with RedisBloom-only parameters.
        r.execute_command("CF.RESERVE", "small", 1000, "BUCKETSIZE", 3, "MAXITERATIONS", 7)
        r.execute_command("CF.INSERT", "small", "ITEMS", *KEYS[:900])
        r.execute_command("CF.RESERVE", "grown", 100, "EXPANSION", 2)
        r.execute_command("CF.INSERT", "grown", "ITEMS", *KEYS[:3000])
        for item in KEYS[:100]:
            r.execute_command("CF.DEL", "grown", item)
        self.assertGreater(info(r, "grown")[b"Number of filters"], 1)
        for key in ["small", "grown"]:
            chunks = scandump(r, key)
            self.assertEqual(chunks[0][0], 1)
            for iterator, data in chunks:
                self.assertEqual(
                    r.execute_command("CF.LOADCHUNK", key + ":copy", iterator, data), b"OK")
            self.assertSameFilter(key, key + ":copy")
            self.assertEqual(info(r, key + ":copy")[b"Number of items deleted"],
                             100 if key == "grown" else 0)
            # Iterator 1 on an existing key.
            self.assertEqual(error_of(r, "CF.LOADCHUNK", key, 1, chunks[0][1]), "item exists")
        # The copy is a filter like any other.
        self.assertEqual(r.execute_command("CF.ADD", "small:copy", "new"), 1)
        self.assertEqual(r.execute_command("CF.EXISTS", "small:copy", "new"), 1)

    def test_chunks_of_a_large_filter(self):
        r = self.r
        # 30M keys: a table of about 35 MB, three chunks of at most 16 MiB.
        r.execute_command("CF.RESERVE", "large", 30000000)
        r.execute_command("CF.INSERT", "large", "ITEMS", *KEYS[:2000])
        chunks = scandump(r, "large")
        self.assertEqual(len(chunks), 3)
        self.assertEqual([it for it, _ in chunks], [1, 1 + (16 << 20), 1 + (32 << 20)])
        self.assertEqual([len(d) for _, d in chunks[:2]], [16 << 20, 16 << 20])
        # Out of order: refused, and the load stays where it was, so the
        # right chunk continues it.
        self.assertEqual(r.execute_command("CF.LOADCHUNK", "bad", *chunks[0]), b"OK")
        self.assertEqual(error_of(r, "CF.LOADCHUNK", "bad", *chunks[2]), "Couldn't load chunk!")
        self.assertEqual(r.exists("bad"), 1)
        self.assertEqual(r.execute_command("CF.EXISTS", "bad", KEYS[0]), 0)
        self.assertEqual(r.execute_command("CF.LOADCHUNK", "bad", *chunks[1]), b"OK")
        self.assertEqual(r.execute_command("CF.LOADCHUNK", "bad", *chunks[2]), b"OK")
        self.assertSameFilter("large", "bad")
        # In order, into another database too; the key holds the load from
        # its first chunk.
        for iterator, data in chunks:
            self.assertEqual(r.execute_command("CF.LOADCHUNK", "copy", iterator, data), b"OK")
            self.assertEqual(r.exists("copy"), 1)
        self.assertSameFilter("large", "copy")
        other = self.server.client(db=3)
        for iterator, data in chunks[:2]:
            other.cf().loadchunk("copy", iterator, data)
        # A load in database 3 is separate from one of the same name in 0.
        self.assertEqual(r.execute_command("CF.LOADCHUNK", "copy2", *chunks[0]), b"OK")
        other.cf().loadchunk("copy", *chunks[2])
        self.assertEqual(other.execute_command("CF.EXISTS", "copy", KEYS[0]), 1)
        self.assertEqual(r.execute_command("CF.EXISTS", "copy2", KEYS[0]), 0)

    def test_damaged_chunks_only_give_errors(self):
        r = self.r
        rng = random.Random(11)
        r.execute_command("CF.RESERVE", "c", 2000, "EXPANSION", 2)
        r.execute_command("CF.INSERT", "c", "ITEMS", *KEYS[:5000])
        [(iterator, good)] = scandump(r, "c")
        self.assertEqual(iterator, 1)
        outcomes = {}

        def load(key, it, data):
            answer = error_of(r, "CF.LOADCHUNK", key, it, data)
            outcomes[answer] = outcomes.get(answer, 0) + 1
            return answer

        for n in range(300):  # random iterators and bytes
            data = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 50, 200, 5000])))
            answer = load("r%d" % n, rng.choice([-1, 0, 1, 1, 2, 65, rng.getrandbits(40)]), data)
            self.assertIn(answer, LOAD_ERRORS)
        for n in range(200):  # truncated and extended
            cut = rng.randrange(len(good))
            self.assertIn(load("t%d" % n, 1, good[:cut]), LOAD_ERRORS)
        self.assertIn(load("x", 1, good + b"\x00"), LOAD_ERRORS)
        for n in range(300):  # one bit flipped past the image's header
            damaged = bytearray(good)
            damaged[rng.randrange(64, len(good))] ^= 1 << rng.randrange(8)
            self.assertIn(load("f%d" % n, 1, bytes(damaged)), LOAD_ERRORS)
        # A flip in the image's header (the figures beside the filter,
        # outside the file's checksum) may load; the filter is then intact.
        for n in range(100):
            damaged = bytearray(good)
            damaged[rng.randrange(64)] ^= 1 << rng.randrange(8)
            answer = load("h%d" % n, 1, bytes(damaged))
            if answer is None:
                self.assertEqual(r.execute_command("CF.MEXISTS", "h%d" % n, *KEYS[:5000]),
                                 [1] * 5000)
            else:
                self.assertIn(answer, LOAD_ERRORS)
        self.assertTrue(r.ping())
        loaded = {k for k in r.keys("*") if not k.startswith(b"h")}
        self.assertEqual(loaded, {b"c"})
        # Random SCANDUMP iterators never crash.
        for _ in range(200):
            it = rng.choice([0, 1, 2, 100, rng.getrandbits(62)])
            reply = r.execute_command("CF.SCANDUMP", "c", it)
            self.assertEqual(len(reply), 2)
        self.assertEqual(error_of(r, "CF.SCANDUMP", "c", -1), "Invalid position")
        self.assertEqual(error_of(r, "CF.SCANDUMP", "c", "x"), "Invalid position")
        self.assertTrue(self.server.alive())


class CfPersistence(unittest.TestCase):
    def snapshot(self, r):
        queries = KEYS[:2000] + ABSENT[:2000]
        return {k: (r.execute_command("CF.INFO", k), r.execute_command("CF.MEXISTS", k, *queries))
                for k in ["a", "b"]}

    def fill(self, r):
        r.execute_command("CF.RESERVE", "a", 500, "BUCKETSIZE", 4, "EXPANSION", 2)
        r.execute_command("CF.INSERT", "a", "ITEMS", *KEYS[:2000])
        r.execute_command("CF.RESERVE", "b", 1000, "BUCKETSIZE", 7, "MAXITERATIONS", 99)
        r.execute_command("CF.INSERT", "b", "ITEMS", *KEYS[:500])
        for item in KEYS[:300]:
            r.execute_command("CF.DEL", "a", item)
        r.execute_command("CF.DEL", "b", KEYS[0])

    def test_deletes_survive_reload_and_restart(self):
        server = Server(MODULE)
        try:
            r = server.client()
            self.fill(r)
            before = self.snapshot(r)
            self.assertEqual(info(r, "a")[b"Number of items deleted"], 300)
            self.assertEqual(r.execute_command("DEBUG", "RELOAD"), b"OK")
            self.assertEqual(self.snapshot(r), before)
            r.save()
            server.restart()
            r = server.client()
            self.assertEqual(self.snapshot(r), before)
            self.assertEqual(info(r, "b")[b"Number of items deleted"], 1)
            self.assertEqual(info(r, "b")[b"Bucket size"], 7)
        finally:
            server.cleanup()

    def test_aof_replays_the_commands_and_the_rewrite(self):
        server = Server(MODULE, args=["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
        try:
            r = server.client()
            self.fill(r)
            # A LOADCHUNK restore is in the AOF as its commands.
            for iterator, data in scandump(r, "a"):
                r.execute_command("CF.LOADCHUNK", "restored", iterator, data)
            before = self.snapshot(r)
            restored = r.execute_command("CF.INFO", "restored")
            server.restart()
            r = server.client()
            self.assertEqual(self.snapshot(r), before)
            self.assertEqual(r.execute_command("CF.INFO", "restored"), restored)
            # After a rewrite (AMQ.RESTORE of each image) too.
            r.bgrewriteaof()
            deadline = time.time() + 30
            while r.info("persistence")["aof_rewrite_in_progress"] and time.time() < deadline:
                time.sleep(0.05)
            server.restart()
            r = server.client()
            self.assertEqual(self.snapshot(r), before)
            self.assertEqual(r.execute_command("CF.INFO", "restored"), restored)
        finally:
            server.cleanup()

    def test_replica_receives_writes_and_loadchunk_data(self):
        master = Server(MODULE)
        replica = None
        try:
            replica = Server(MODULE, args=["--replicaof", "127.0.0.1", str(master.port)])
            r, rr = master.client(), replica.client()
            deadline = time.time() + 15
            while rr.info("replication")["master_link_status"] != "up":
                self.assertLess(time.time(), deadline, "the replica did not connect")
                time.sleep(0.05)
            self.fill(r)
            for iterator, data in scandump(r, "a"):
                r.execute_command("CF.LOADCHUNK", "restored", iterator, data)
            r.execute_command("CF.ADDNX", "c", "x")
            self.assertEqual(r.execute_command("WAIT", 1, 10000), 1)
            self.assertEqual(self.snapshot(rr), self.snapshot(r))
            self.assertEqual(rr.execute_command("CF.INFO", "restored"),
                             r.execute_command("CF.INFO", "restored"))
            self.assertEqual(rr.execute_command("CF.EXISTS", "c", "x"), 1)
        finally:
            if replica:
                replica.cleanup()
            master.cleanup()


if __name__ == "__main__":
    MODULE, AMQ = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
