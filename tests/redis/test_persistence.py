"""Data safety: a save never lies, a load that answered OK never vanishes,
and Redis sees and bounds the filters' memory.

- Saves under failing allocations: with amq-faults.so (the module built
  with AMQ.FAULTS, which fails every allocation of at least N bytes in the
  server and in the children it forks), SAVE, BGSAVE and BGREWRITEAOF with
  and without the RDB preamble, for every family and a load in progress,
  for N from 0 up; then the server restarts from whatever is on disk and
  every key answers as before.
- A load of a filter of over 200 MB through BF.LOADCHUNK with appendonly
  yes and Redis's default auto-rewrite, an explicit BGREWRITEAOF and a
  replica's full resync in the middle: after a restart and a failover the
  key is there with identical answers. CF.LOADCHUNK the same way, smaller.
- maxmemory 100mb with noeviction: a reserve, an insert and a load that
  would pass it are refused with Redis's own OOM error; INFO and MEMORY
  USAGE see the filters; amq.filter-max-bytes and amq.load-max-bytes
  bound one allocation and the loads in progress; FLUSHALL, DEL and an
  overwrite free a load.
- AMQ.RESTORE refuses the figures LOADCHUNK refuses, no count is negative,
  refused payloads are not logged at the default level, and out of memory
  is answered as out of memory.

Usage: test_persistence.py MODULE_SO FAULTS_MODULE_SO
"""
import ctypes
import ctypes.util
import os
import random
import struct
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server  # noqa: E402

MODULE = FAULTS = None

KEYS = [b"key-%d" % i for i in range(4000)]
ABSENT = [b"absent-%d" % i for i in range(4000)]
QUERIES = KEYS + ABSENT

# The families AMQ.BUILD makes, with their options (test_amq.py's).
SPECS = {"fuse8": [], "fuse16": [], "gcs": [], "hfb": ["hash=md5"], "bloom": [],
         "blocked-bloom": [], "counting-bloom": [], "scalable-bloom": [], "cuckoo": []}


def answers(client, key, items):
    return [int(x) for x in client.execute_command("AMQ.MEXISTS", key, *items)]


def wait_for(predicate, what, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def persistence(r):
    return r.info("persistence")


def wait_rewrite_done(r):
    wait_for(lambda: not persistence(r)["aof_rewrite_in_progress"] and
             not persistence(r)["aof_rewrite_scheduled"], "the AOF rewrite")


def wait_bgsave_done(r):
    wait_for(lambda: not persistence(r)["rdb_bgsave_in_progress"], "the BGSAVE")


def scandump(r, command, key):
    chunks, iterator = [], 0
    while True:
        iterator, data = r.execute_command(command, key, iterator)
        if iterator == 0:
            return chunks
        chunks.append((iterator, data))


# ---- the image header: 64 bytes, the last 8 an XXH3 of the first 56 ---------------------

_xxhash = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
_xxhash.XXH3_64bits_withSeed.restype = ctypes.c_uint64
_xxhash.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]


def reseal(header):
    """The header with its checksum made right again."""
    body = bytes(header[:56])
    return body + struct.pack("<Q", _xxhash.XXH3_64bits_withSeed(body, 56, 0))


def with_figure(image, offset, fmt, number):
    header = bytearray(image[:64])
    struct.pack_into(fmt, header, offset, number)
    return reseal(header) + image[64:]


class SavesUnderFailingAllocations(unittest.TestCase):
    """Every save path, with the module's allocations failing from each
    size up: the save succeeds or fails visibly, and the server restarts
    from whatever file is on disk with every key and identical answers."""

    FAIL_FROM = [0, 1, 64, 4096, 1 << 16, 1 << 20, 16 << 20]

    def fill(self, r):
        for t, options in SPECS.items():
            r.execute_command("AMQ.BUILD", "k:" + t, t, *options, "ITEMS", *KEYS)
        r.execute_command("BF.MADD", "bf", *KEYS)
        r.execute_command("BF.RESERVE", "bf-fixed", 0.01, 5000, "NONSCALING")
        r.execute_command("BF.MADD", "bf-fixed", *KEYS)
        r.execute_command("CF.RESERVE", "cf", 1000, "BUCKETSIZE", 4, "EXPANSION", 2)
        r.execute_command("CF.INSERT", "cf", "ITEMS", *KEYS)
        for _ in range(50):  # copies past b/2: the counted overflow
            r.execute_command("CF.ADD", "cf", KEYS[0])
        # A load in progress: the first chunk of a filter of two.
        r.execute_command("BF.RESERVE", "big", 0.01, 20000000)
        r.execute_command("BF.MADD", "big", *KEYS)
        self.big_chunks = scandump(r, "BF.SCANDUMP", "big")
        self.assertGreater(len(self.big_chunks), 1)
        iterator, data = self.big_chunks[0]
        self.assertEqual(r.execute_command("BF.LOADCHUNK", "partial", iterator, data), b"OK")

    def snapshot(self, r):
        keys = ["k:" + t for t in SPECS] + ["bf", "bf-fixed", "cf", "big"]
        state = {k: answers(r, k, QUERIES) for k in keys}
        state["cards"] = (r.execute_command("BF.CARD", "bf"),
                          r.execute_command("BF.CARD", "bf-fixed"),
                          r.execute_command("CF.COUNT", "cf", KEYS[0]))
        state["dbsize"] = r.dbsize()
        return state

    def finish_partial(self, r):
        """The load in progress survived: its other chunks complete it."""
        for iterator, data in self.big_chunks[1:]:
            self.assertEqual(r.execute_command("BF.LOADCHUNK", "partial", iterator, data), b"OK")
        self.assertEqual(answers(r, "partial", QUERIES), answers(r, "big", QUERIES))
        r.delete("partial")
        iterator, data = self.big_chunks[0]
        r.execute_command("BF.LOADCHUNK", "partial", iterator, data)

    def check_restart(self, server, expected, what):
        server.restart()
        r = server.client()
        self.assertEqual(self.snapshot(r), expected, what)
        self.finish_partial(r)
        return r

    def test_every_save_path(self):
        server = Server(FAULTS, args=["--appendonly", "no"])
        try:
            r = server.client()
            self.fill(r)
            expected = self.snapshot(r)
            r.save()
            for fail_from in self.FAIL_FROM:
                what = "allocations of %d bytes and more failing" % fail_from
                r.execute_command("AMQ.FAULTS", "FAIL-FROM", fail_from)
                try:
                    r.save()
                except redis.ResponseError:
                    pass  # a save that fails says so; the previous file stays
                r.bgsave()
                wait_bgsave_done(r)
                r.execute_command("AMQ.FAULTS", "OFF")
                r = self.check_restart(server, expected, what + ": SAVE, BGSAVE")
                for preamble in ("yes", "no"):
                    r.config_set("aof-use-rdb-preamble", preamble)
                    r.config_set("appendonly", "yes")
                    wait_rewrite_done(r)
                    r.execute_command("AMQ.FAULTS", "FAIL-FROM", fail_from)
                    r.bgrewriteaof()
                    wait_rewrite_done(r)
                    r.execute_command("AMQ.FAULTS", "OFF")
                    server.args = ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble]
                    r = self.check_restart(server, expected,
                                           what + ": BGREWRITEAOF, preamble " + preamble)
                    self.assertEqual(persistence(r)["aof_last_bgrewrite_status"], "ok")
                    r.config_set("appendonly", "no")
                    server.args = ["--appendonly", "no"]
                    r.save()
            # The saves above did not fail: nothing in them needs memory.
            self.assertEqual(persistence(r)["rdb_last_bgsave_status"], "ok")
        finally:
            server.cleanup()

    def test_dump_and_restore_under_failing_allocations(self):
        server = Server(FAULTS)
        try:
            r = server.client()
            self.fill(r)
            expected = {k: answers(r, k, QUERIES) for k in ["k:hfb", "cf", "bf"]}
            r.execute_command("AMQ.FAULTS", "FAIL-FROM", 0)
            payloads = {k: r.dump(k) for k in expected}
            r.execute_command("AMQ.FAULTS", "OFF")
            for key, payload in payloads.items():
                r.restore(key + ":copy", 0, payload)
                self.assertEqual(answers(r, key + ":copy", QUERIES), expected[key])
        finally:
            server.cleanup()

    def test_out_of_memory_is_answered_as_such(self):
        server = Server(FAULTS)
        try:
            r = server.client()
            r.sadd("members", *KEYS[:100])
            r.execute_command("AMQ.FAULTS", "FAIL-FROM", 0)
            for command in (["AMQ.BUILD", "f", "fuse8", "FROM", "members"],
                            ["AMQ.BUILD", "f", "fuse8", "ITEMS", "a", "b"],
                            ["BF.RESERVE", "b", 0.01, 1000],
                            ["CF.RESERVE", "c", 1000],
                            ["BF.ADD", "b2", "x"]):
                with self.assertRaises(redis.ResponseError) as caught:
                    r.execute_command(*command)
                self.assertRegex(str(caught.exception), "(?i)memory", command)
                self.assertNotIn("WRONGTYPE", str(caught.exception))
            r.execute_command("AMQ.FAULTS", "OFF")
            self.assertEqual(r.execute_command("AMQ.BUILD", "f", "fuse8", "FROM", "members"), 100)
        finally:
            server.cleanup()


class LoadsSurvive(unittest.TestCase):
    """A load whose every chunk answered OK is a key in the RDB, the AOF
    and every replica, whatever happened between its chunks."""

    def big_source(self, r, megabytes):
        # 0.01: 9.6 bits an item.
        capacity = int(megabytes * 8e6 / 9.6)
        r.execute_command("BF.RESERVE", "src", 0.01, capacity)
        rng = random.Random(42)
        self.present = [b"item-%d" % rng.getrandbits(48) for _ in range(20000)]
        r.execute_command("BF.MADD", "src", *self.present)
        self.queries = self.present + [b"other-%d" % i for i in range(20000)]
        return scandump(r, "BF.SCANDUMP", "src")

    def test_a_200_mb_load_across_rewrites_a_resync_and_a_failover(self):
        for preamble in ("yes", "no"):
            with self.subTest(preamble=preamble):
                self.load_across(preamble)

    def load_across(self, preamble):
        primary = Server(MODULE, args=["--appendonly", "yes", "--aof-use-rdb-preamble", preamble])
        replica = None
        try:
            r = primary.client()
            chunks = self.big_source(r, 210)
            self.assertGreaterEqual(len(chunks), 13)
            expected = answers(r, "src", self.queries)
            cards = r.execute_command("BF.CARD", "src")
            image_bytes = sum(len(data) for _, data in chunks)
            self.assertGreater(image_bytes, 200e6)
            # The source goes: what the AOF holds of dst is all there is.
            r.delete("src")
            r.bgrewriteaof()
            wait_rewrite_done(r)
            rewrites_before = persistence(r)["aof_rewrites"]
            syncs_before = r.info("stats")["sync_full"]
            for n, (iterator, data) in enumerate(chunks):
                self.assertEqual(r.execute_command("BF.LOADCHUNK", "dst", iterator, data), b"OK")
                self.assertEqual(r.type("dst"), b"amqfilter")
                if n == 2:
                    r.bgrewriteaof()
                if n == 5:
                    replica = Server(MODULE, args=["--replicaof", "127.0.0.1", str(primary.port)])
                if n == 8:
                    # The replica's link drops; 16 MiB chunks overflow the
                    # 1 MB backlog, so it resyncs in full.
                    r.client_kill_filter(_type="slave")
            stats = persistence(r)
            self.assertGreaterEqual(stats["aof_rewrites"] + stats["aof_rewrite_in_progress"],
                                    rewrites_before + 2, "the explicit and the automatic rewrite")
            self.assertGreaterEqual(r.info("stats")["sync_full"], syncs_before + 2)
            self.assertEqual(answers(r, "dst", self.queries), expected)
            self.assertEqual(r.execute_command("BF.CARD", "dst"), cards)
            wait_rewrite_done(r)
            rr = replica.client()
            wait_for(lambda: rr.info("replication")["master_link_status"] == "up" and
                     rr.info("replication")["master_repl_offset"] ==
                     r.info("replication")["master_repl_offset"], "the replica", 300)
            self.assertEqual(answers(rr, "dst", self.queries), expected)
            primary.restart()
            r = primary.client()
            self.assertEqual(answers(r, "dst", self.queries), expected)
            self.assertEqual(r.execute_command("BF.CARD", "dst"), cards)
            # Failover: the primary goes, the replica takes over.
            primary.stop()
            rr.replicaof("NO", "ONE")
            self.assertEqual(answers(rr, "dst", self.queries), expected)
            self.assertEqual(rr.execute_command("BF.CARD", "dst"), cards)
        finally:
            primary.cleanup()
            if replica:
                replica.cleanup()

    def test_a_cuckoo_load_across_a_rewrite_and_a_restart(self):
        server = Server(MODULE, args=["--appendonly", "yes"])
        try:
            r = server.client()
            r.execute_command("CF.RESERVE", "src", 40000000, "BUCKETSIZE", 4)
            r.execute_command("CF.INSERT", "src", "ITEMS", *KEYS)
            chunks = scandump(r, "CF.SCANDUMP", "src")
            self.assertGreater(len(chunks), 2)
            expected = answers(r, "src", QUERIES)
            for n, (iterator, data) in enumerate(chunks):
                self.assertEqual(r.execute_command("CF.LOADCHUNK", "dst", iterator, data), b"OK")
                if n == 0:
                    r.bgrewriteaof()
                    wait_rewrite_done(r)
                    server.restart()
                    r = server.client()
            self.assertEqual(answers(r, "dst", QUERIES), expected)
            server.restart()
            self.assertEqual(answers(server.client(), "dst", QUERIES), expected)
        finally:
            server.cleanup()

    def test_a_load_in_progress_is_a_key(self):
        server = Server(MODULE)
        try:
            r = server.client()
            r.execute_command("BF.RESERVE", "src", 0.01, 40000000)
            r.execute_command("BF.MADD", "src", *KEYS)
            chunks = scandump(r, "BF.SCANDUMP", "src")
            self.assertGreaterEqual(len(chunks), 3)
            iterator, data = chunks[0]
            r.execute_command("BF.LOADCHUNK", "dst", iterator, data)
            self.assertEqual(r.exists("dst"), 1)
            self.assertGreater(r.memory_usage("dst"), len(data))
            # Filter commands find no filter there yet: WRONGTYPE, but
            # BF.EXISTS and CF.EXISTS answer 0 as they do for any key of
            # another type (RedisBloom's way).
            for command in (["BF.ADD", "dst", "x"], ["AMQ.EXISTS", "dst", "x"],
                            ["BF.SCANDUMP", "dst", 0], ["BF.INFO", "dst"], ["BF.CARD", "dst"],
                            ["CF.INFO", "dst"], ["AMQ.DUMP", "dst"], ["BF.RESERVE", "dst", 0.1, 10]):
                with self.assertRaisesRegex(redis.ResponseError, "WRONGTYPE"):
                    r.execute_command(*command)
            self.assertEqual(r.execute_command("BF.EXISTS", "dst", KEYS[0]), 0)
            self.assertEqual(r.execute_command("CF.EXISTS", "dst", KEYS[0]), 0)
            # A chunk out of place is refused and leaves the load as it was.
            with self.assertRaises(redis.ResponseError):
                r.execute_command("BF.LOADCHUNK", "dst", chunks[2][0], chunks[2][1])
            with self.assertRaises(redis.ResponseError):
                r.execute_command("CF.LOADCHUNK", "dst", chunks[1][0], chunks[1][1])
            # DEBUG RELOAD: saved and loaded in the middle.
            r.execute_command("DEBUG", "RELOAD")
            for iterator, data in chunks[1:]:
                self.assertEqual(r.execute_command("BF.LOADCHUNK", "dst", iterator, data), b"OK")
            self.assertEqual(answers(r, "dst", QUERIES), answers(r, "src", QUERIES))
            # Expiry and an overwrite end a load like any value.
            r.execute_command("BF.LOADCHUNK", "gone", *chunks[0])
            r.pexpire("gone", 1)
            time.sleep(0.05)
            self.assertEqual(r.exists("gone"), 0)
            r.execute_command("BF.LOADCHUNK", "over", *chunks[0])
            r.set("over", "a string")
            self.assertEqual(r.get("over"), b"a string")
        finally:
            server.cleanup()


class MemoryBounded(unittest.TestCase):
    """The filters' memory is the server's: seen, bounded and freed."""

    OOM = "^OOM command not allowed when used memory > 'maxmemory'"

    def used(self, r):
        return r.info("memory")["used_memory"]

    def test_info_and_memory_usage_see_the_filters(self):
        server = Server(MODULE)
        try:
            r = server.client()
            before = self.used(r)
            r.execute_command("BF.RESERVE", "b", 0.01, 50000000)  # 60 MB
            self.assertGreater(self.used(r) - before, 55e6)
            self.assertGreater(r.memory_usage("b"), 55e6)
            r.delete("b")
            self.assertLess(self.used(r) - before, 5e6)
        finally:
            server.cleanup()

    def test_maxmemory_refuses_what_would_pass_it(self):
        server = Server(MODULE, args=["--maxmemory", "100mb", "--maxmemory-policy", "noeviction"])
        try:
            r = server.client()
            with self.assertRaisesRegex(redis.ResponseError, self.OOM):
                r.execute_command("BF.RESERVE", "big1", 0.01, 300000000)
            with self.assertRaisesRegex(redis.ResponseError, self.OOM):
                r.execute_command("CF.RESERVE", "big2", 1073741824)
            with self.assertRaisesRegex(redis.ResponseError, self.OOM):
                r.execute_command("AMQ.BUILD", "big3", "bloom", "n=300000000", "ITEMS", "a")
            self.assertLess(self.used(r), 20e6)
            self.assertTrue(r.ping())
            # An insert that opens a stage past the limit: 100 million
            # items after the first 100,000.
            r.execute_command("BF.RESERVE", "grow", 0.01, 100000, "EXPANSION", 1024)
            batch = [b"g-%d" % i for i in range(100000)]
            for start in range(0, len(batch), 10000):
                replies = r.execute_command("BF.MADD", "grow", *batch[start:start + 10000])
                self.assertFalse([x for x in replies if isinstance(x, Exception)])
            for i in range(5000):
                try:
                    r.execute_command("BF.ADD", "grow", b"more-%d" % i)
                except redis.ResponseError as refused:
                    self.assertRegex(str(refused), self.OOM)
                    break
            else:
                self.fail("the stage past maxmemory was opened")
            self.assertEqual(r.execute_command("BF.EXISTS", "grow", batch[0]), 1)
            self.assertLess(self.used(r), 100e6)
            # A load whose first chunk claims more than the room left.
            r.config_set("maxmemory", "0")
            r.execute_command("BF.RESERVE", "src", 0.01, 150000000)  # 180 MB
            first = r.execute_command("BF.SCANDUMP", "src", 0)
            r.delete("src")
            r.config_set("maxmemory", "100mb")
            with self.assertRaisesRegex(redis.ResponseError, self.OOM):
                r.execute_command("BF.LOADCHUNK", "dst", first[0], first[1])
            self.assertEqual(r.exists("dst"), 0)
            self.assertTrue(r.ping())
            # Under the limit, all goes on.
            r.execute_command("BF.RESERVE", "small", 0.01, 1000000)
            self.assertEqual(r.execute_command("BF.ADD", "small", "x"), 1)
        finally:
            server.cleanup()

    def load_start(self, r, key, image_bytes):
        """A first chunk of an image that claims image_bytes (a bare Bloom
        filter's file, grown in its header's payload length)."""
        first = bytearray(r.execute_command("BF.SCANDUMP", "template", 0)[1])
        file = first[64:]
        params = struct.unpack_from("<I", file, 40)[0]
        offset = (64 + params + 63) // 64 * 64
        struct.pack_into("<Q", file, 56, image_bytes - 64 - offset - 8)
        return r.execute_command("AMQ.LOADCHUNK", key, 1, bytes(file[:len(file) // 2]))

    def test_loads_are_bounded_and_freed(self):
        server = Server(MODULE)
        try:
            r = server.client()
            r.execute_command("BF.RESERVE", "template", 0.01, 1000)
            # A claim past amq.filter-max-bytes (4 GiB) is refused at once.
            with self.assertRaisesRegex(redis.ResponseError, "filter-max-bytes"):
                self.load_start(r, "huge", 1 << 40)
            self.assertEqual(r.exists("huge"), 0)
            r.config_set("amq.load-max-bytes", 50 << 20)
            self.assertEqual(self.load_start(r, "a", 30 << 20), b"OK")
            with self.assertRaisesRegex(redis.ResponseError, "load-max-bytes"):
                self.load_start(r, "b", 30 << 20)
            r.delete("a")
            self.assertEqual(self.load_start(r, "b", 30 << 20), b"OK")
            r.flushdb()
            r.execute_command("BF.RESERVE", "template", 0.01, 1000)
            self.assertEqual(self.load_start(r, "c", 30 << 20), b"OK")
            r.flushall()
            r.execute_command("BF.RESERVE", "template", 0.01, 1000)
            self.assertEqual(self.load_start(r, "c", 30 << 20), b"OK")
            r.execute_command("FLUSHALL", "ASYNC")
            r.execute_command("BF.RESERVE", "template", 0.01, 1000)

            def starts():
                try:
                    return self.load_start(r, "d", 30 << 20) == b"OK"
                except redis.ResponseError:
                    return False
            wait_for(starts, "FLUSHALL ASYNC to free the load")
            # The setting takes sizes as the server's memory settings do.
            r.config_set("amq.filter-max-bytes", "8gb")
            self.assertEqual(r.config_get("amq.filter-max-bytes")["amq.filter-max-bytes"],
                             str(8 << 30))
        finally:
            server.cleanup()


class Refusals(unittest.TestCase):
    def test_restore_checks_what_loadchunk_checks(self):
        server = Server(MODULE)
        try:
            r = server.client()
            r.execute_command("BF.RESERVE", "b", 0.01, 1000)
            r.execute_command("BF.MADD", "b", *KEYS[:100])
            image = r.execute_command("BF.SCANDUMP", "b", 0)[1]
            self.assertEqual(r.execute_command("BF.SCANDUMP", "b", 1)[0], 0)
            r.execute_command("CF.RESERVE", "c", 1000)
            r.execute_command("CF.INSERT", "c", "ITEMS", *KEYS[:100])
            cuckoo = r.execute_command("CF.SCANDUMP", "c", 0)[1]
            self.assertEqual(r.execute_command("AMQ.RESTORE", "ok", image), b"OK")
            bad = [with_figure(image, 40, "<Q", 1 << 63),          # items
                   with_figure(image, 16, "<Q", (1 << 64) - 1),    # capacity
                   with_figure(image, 12, "<I", 7),                # expansion
                   with_figure(image, 24, "<d", 0.5),              # error rate
                   with_figure(cuckoo, 48, "<Q", 1 << 63),         # deletes
                   with_figure(cuckoo, 40, "<Q", 1 << 63),         # items
                   with_figure(cuckoo, 32, "<I", 3)]               # bucket size
            for n, payload in enumerate(bad):
                with self.assertRaisesRegex(redis.ResponseError, "bad data", msg=n):
                    r.execute_command("AMQ.RESTORE", "x%d" % n, payload)
                command = "BF.LOADCHUNK" if payload[8] == 1 else "CF.LOADCHUNK"
                with self.assertRaises(redis.ResponseError, msg=n):
                    r.execute_command(command, "y%d" % n, 1, payload)
                self.assertEqual(r.exists("x%d" % n, "y%d" % n), 0)
            # No count any command answers is negative.
            for key in ("b", "ok"):
                info = r.execute_command("BF.INFO", key)
                self.assertTrue(all(v >= 0 for v in info[1::2]), info)
                self.assertGreaterEqual(r.execute_command("BF.CARD", key), 0)
            info = r.execute_command("CF.INFO", "c")
            self.assertTrue(all(v >= 0 for v in info[1::2]), info)
        finally:
            server.cleanup()

    def test_damaged_loads_in_progress_are_refused(self):
        """A load in progress in the RDB form (DUMP of its key), damaged
        anywhere and handed to RESTORE with the checksum check off: refused
        or, where the damage falls in bytes a load cannot check yet, a load
        that the rest of its chunks then completes or refuses; never a
        crash."""
        server = Server(MODULE)
        try:
            r = server.client()
            r.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
            r.execute_command("BF.RESERVE", "src", 0.01, 40000)
            r.execute_command("BF.MADD", "src", *KEYS[:1000])
            image = r.execute_command("BF.SCANDUMP", "src", 0)[1]
            r.execute_command("AMQ.LOADCHUNK", "partial", 1, image[:5000])
            payload = r.dump("partial")
            body, trailer = payload[:-10], payload[-10:]
            rng = random.Random(5)
            damaged = [body[:cut] + trailer for cut in range(1, 200, 3)]
            for _ in range(300):
                flipped = bytearray(body)
                flipped[rng.randrange(min(len(flipped), 300))] ^= 1 << rng.randrange(8)
                damaged.append(bytes(flipped) + trailer)
            for blob in damaged:
                try:
                    r.restore("t", 0, blob, replace=True)
                except redis.ResponseError as e:
                    self.assertEqual(str(e), "Bad data format")
                    continue
                try:
                    r.execute_command("AMQ.LOADCHUNK", "t", 5001, image[5000:])
                    self.assertEqual(answers(r, "t", KEYS[:1000]), [1] * 1000)
                except redis.ResponseError:
                    pass
                r.delete("t")
            r.restore("t", 0, payload)
            self.assertEqual(r.execute_command("AMQ.LOADCHUNK", "t", 5001, image[5000:]), b"OK")
            self.assertEqual(answers(r, "t", QUERIES), answers(r, "src", QUERIES))
            self.assertTrue(server.alive())
        finally:
            server.cleanup()

    def test_refused_payloads_are_not_logged_at_the_default_level(self):
        server = Server(MODULE)
        try:
            r = server.client()
            r.execute_command("AMQ.BUILD", "f", "fuse8", "ITEMS", *KEYS[:100])
            good = r.dump("f")
            dump = r.execute_command("AMQ.DUMP", "f")
            for i in range(200):
                damaged = bytearray(dump)
                damaged[100 + i] ^= 0xFF
                with self.assertRaises(redis.ResponseError):
                    r.execute_command("AMQ.RESTORE", "x", bytes(damaged))
                payload = bytearray(good)
                payload[20 + i % (len(good) - 30)] ^= 0x10
                try:
                    r.restore("y", 0, bytes(payload), replace=True)
                except redis.ResponseError:
                    pass
            with open(server.log, errors="replace") as log:
                self.assertNotIn("refused", log.read())
        finally:
            server.cleanup()


if __name__ == "__main__":
    MODULE, FAULTS = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1] + sys.argv[3:], verbosity=2)
