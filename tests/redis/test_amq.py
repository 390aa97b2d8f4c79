"""The module's AMQ.* commands, persistence and refusals, through a real
client (Debian's python3-redis) against a real redis-server.

Usage: test_amq.py MODULE_SO AMQ_BINARY
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server  # noqa: E402

MODULE = AMQ = None

KEYS = [b"key-%d" % i for i in range(20000)]
ABSENT = [b"absent-%d" % i for i in range(20000)]


def answers(client, key, items):
    return [int(x) for x in client.execute_command("AMQ.MEXISTS", key, *items)]


class AmqCommands(unittest.TestCase):
    def setUp(self):
        self.server = Server(MODULE)
        self.r = self.server.client()

    def tearDown(self):
        self.server.cleanup()

    def test_build_from_items_and_set(self):
        self.assertEqual(self.r.execute_command("AMQ.BUILD", "f8", "fuse8", "ITEMS", *KEYS[:1000]),
                         1000)
        self.assertEqual(answers(self.r, "f8", KEYS[:1000]), [1] * 1000)
        false_positives = sum(answers(self.r, "f8", ABSENT))
        # fuse8: 2^-8 per absent key; 20,000 keys: mean 78, sd 8.8.
        self.assertLess(false_positives, 78 + 6 * 9)
        self.r.sadd("members", *KEYS[:5000])
        self.assertEqual(
            self.r.execute_command("AMQ.BUILD", "g", "gcs", "p=0.001", "FROM", "members"), 5000)
        self.assertEqual(answers(self.r, "g", KEYS[:5000]), [1] * 5000)
        self.assertEqual(self.r.execute_command("AMQ.EXISTS", "g", KEYS[0]), 1)
        # An item with NUL bytes is an item like any other.
        self.r.execute_command("AMQ.BUILD", "nul", "fuse16", "ITEMS", b"a\x00b", b"\x00")
        self.assertEqual(answers(self.r, "nul", [b"a\x00b", b"\x00", b"a"]), [1, 1, 0])
        info = self.r.execute_command("AMQ.INFO", "g")
        fields = dict(zip(info[0::2], info[1::2]))
        self.assertEqual(fields[b"family"], b"gcs")
        self.assertEqual(int(fields[b"keys"]), 5000)

    def test_build_refusals(self):
        with self.assertRaisesRegex(redis.ResponseError, "item exists"):
            self.r.execute_command("AMQ.BUILD", "x", "fuse8", "ITEMS", "a")
            self.r.execute_command("AMQ.BUILD", "x", "fuse8", "ITEMS", "a")
        self.r.execute_command("AMQ.BUILD", "x", "fuse8", "REPLACE", "ITEMS", "b")
        self.assertEqual(answers(self.r, "x", ["b"]), [1])
        with self.assertRaisesRegex(redis.ResponseError, "could not build the filter: .*nosuch"):
            self.r.execute_command("AMQ.BUILD", "y", "nosuch", "ITEMS", "a")
        with self.assertRaisesRegex(redis.ResponseError, "could not build the filter: .*'fpr'"):
            self.r.execute_command("AMQ.BUILD", "y", "gcs", "p=7", "ITEMS", "a")
        self.r.set("string", "v")
        with self.assertRaisesRegex(redis.ResponseError, "WRONGTYPE"):
            self.r.execute_command("AMQ.BUILD", "y", "gcs", "FROM", "string")
        with self.assertRaisesRegex(redis.ResponseError, "WRONGTYPE"):
            self.r.execute_command("AMQ.EXISTS", "string", "a")
        with self.assertRaisesRegex(redis.ResponseError, "wrong number of arguments"):
            self.r.execute_command("AMQ.EXISTS", "x")
        with self.assertRaisesRegex(redis.ResponseError, "not found"):
            self.r.execute_command("AMQ.INFO", "missing")
        self.assertEqual(self.r.execute_command("AMQ.EXISTS", "missing", "a"), 0)
        self.assertTrue(self.server.alive())

    def test_dump_and_restore_meet_the_cli(self):
        scratch = tempfile.mkdtemp(prefix="amq-cli-")
        keys_file = os.path.join(scratch, "keys.txt")
        with open(keys_file, "wb") as f:
            f.write(b"\n".join(KEYS[:3000]) + b"\n")
        built = os.path.join(scratch, "built.amq")
        subprocess.run([AMQ, "build", "-t", "bloom", "-p", "0.01", "-o", built, keys_file],
                       check=True)
        with open(built, "rb") as f:
            self.assertEqual(self.r.execute_command("AMQ.RESTORE", "b", f.read()), b"OK")
        query_file = os.path.join(scratch, "query.txt")
        queries = KEYS[:3000] + ABSENT[:3000]
        with open(query_file, "wb") as f:
            f.write(b"\n".join(queries) + b"\n")
        cli = subprocess.run([AMQ, "query", built, query_file], capture_output=True)
        # The CLI prints the lines that may be present; Redis answers the same.
        maybe = set(cli.stdout.split(b"\n")) - {b""}
        redis_answers = answers(self.r, "b", queries)
        self.assertEqual({q for q, a in zip(queries, redis_answers) if a}, maybe)
        # A filter made in Redis, dumped, is a file the CLI reads.
        self.r.execute_command("AMQ.BUILD", "f16", "fuse16", "ITEMS", *KEYS[:2000])
        dumped = os.path.join(scratch, "dumped.amq")
        with open(dumped, "wb") as f:
            f.write(self.r.execute_command("AMQ.DUMP", "f16"))
        cli = subprocess.run([AMQ, "query", dumped, query_file], capture_output=True)
        maybe = set(cli.stdout.split(b"\n")) - {b""}
        redis_answers = answers(self.r, "f16", queries)
        self.assertEqual({q for q, a in zip(queries, redis_answers) if a}, maybe)
        with open(dumped, "rb") as f, self.assertRaisesRegex(redis.ResponseError, "BUSYKEY"):
            self.r.execute_command("AMQ.RESTORE", "f16", f.read())
        shutil.rmtree(scratch)

    def test_build_with_a_random_seed(self):
        # seed=random is a spec word like any other: each build draws its
        # own secret seed (bytes 24..31 of the dump's header), the filter
        # answers for its keys, and `amq info` of the dump keeps it secret.
        scratch = tempfile.mkdtemp(prefix="amq-seed-")
        seeds = []
        for name, family in (("r1", "fuse8"), ("r2", "fuse8"), ("r3", "gcs")):
            self.assertEqual(self.r.execute_command("AMQ.BUILD", name, family, "seed=random",
                                                    "ITEMS", *KEYS[:1000]), 1000)
            self.assertEqual(answers(self.r, name, KEYS[:1000]), [1] * 1000)
            dump = self.r.execute_command("AMQ.DUMP", name)
            seeds.append(dump[24:32])
            path = os.path.join(scratch, name + ".amq")
            with open(path, "wb") as f:
                f.write(dump)
            info = subprocess.run([AMQ, "info", path], capture_output=True, check=True)
            self.assertIn(b"xxh3 with a secret seed", info.stdout)
            shown = subprocess.run([AMQ, "info", "--show-seed", path], capture_output=True,
                                   check=True)
            seed = int.from_bytes(dump[24:32], "little")
            self.assertIn(b"xxh3 seed=%d" % seed, shown.stdout)
        self.assertEqual(len(set(seeds)), 3)
        self.assertNotIn(b"\0" * 8, seeds)
        with self.assertRaisesRegex(redis.ResponseError, "key=random"):
            self.r.execute_command("AMQ.BUILD", "r4", "fuse8", "hash=siphash", "seed=random",
                                   "ITEMS", "a")
        shutil.rmtree(scratch)

    def test_damaged_restore_is_refused(self):
        self.r.execute_command("AMQ.BUILD", "g", "gcs", "ITEMS", *KEYS[:500])
        good = self.r.execute_command("AMQ.DUMP", "g")
        rng = random.Random(7)
        for cut in [0, 1, 10, 40, len(good) // 2, len(good) - 1]:
            with self.assertRaisesRegex(redis.ResponseError, "bad data"):
                self.r.execute_command("AMQ.RESTORE", "t", good[:cut])
        for _ in range(200):
            damaged = bytearray(good)
            damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
            with self.assertRaisesRegex(redis.ResponseError, "bad data"):
                self.r.execute_command("AMQ.RESTORE", "t", bytes(damaged))
        for _ in range(50):
            noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
            with self.assertRaisesRegex(redis.ResponseError, "bad data"):
                self.r.execute_command("AMQ.RESTORE", "t", noise)
        self.assertEqual(self.r.exists("t"), 0)
        # A value image (a header of the figures, then the filter): its
        # header's checksum refuses any damaged figure.
        self.r.execute_command("CF.RESERVE", "c", 1000)
        self.r.execute_command("CF.ADD", "c", "x")
        iterator, image = self.r.execute_command("CF.SCANDUMP", "c", 0)
        self.assertEqual(self.r.execute_command("CF.SCANDUMP", "c", iterator), [0, None])
        self.assertEqual(self.r.execute_command("AMQ.RESTORE", "t", image), b"OK")
        self.assertEqual(self.r.execute_command("CF.EXISTS", "t", "x"), 1)
        for byte in range(64):
            damaged = bytearray(image)
            damaged[byte] ^= 0x04
            with self.assertRaisesRegex(redis.ResponseError, "bad data"):
                self.r.execute_command("AMQ.RESTORE", "t", bytes(damaged), "REPLACE")
        # The server's own RESTORE of a damaged DUMP payload.
        payload = bytearray(self.r.dump("g"))
        payload[len(payload) // 2] ^= 0x10
        with self.assertRaises(redis.ResponseError):
            self.r.restore("t2", 0, bytes(payload))
        self.assertTrue(self.server.alive())


class Persistence(unittest.TestCase):
    """Every type survives DEBUG RELOAD, a restart from an RDB, and one from
    an AOF without an RDB preamble, with identical answers."""

    SPECS = {"fuse8": [], "fuse16": [], "gcs": [], "hfb": ["hash=md5"], "bloom": [],
             "blocked-bloom": [], "counting-bloom": [], "scalable-bloom": [], "cuckoo": []}
    TYPES = list(SPECS)

    def fill(self, r):
        for t, options in self.SPECS.items():
            r.execute_command("AMQ.BUILD", "k:" + t, t, *options, "ITEMS", *KEYS[:4000])

    def snapshot(self, r):
        return {t: (answers(r, "k:" + t, KEYS[:4000] + ABSENT[:4000]),
                    r.execute_command("AMQ.DUMP", "k:" + t)) for t in self.TYPES}

    def test_debug_reload_and_rdb_restart(self):
        server = Server(MODULE)
        try:
            r = server.client()
            self.fill(r)
            before = self.snapshot(r)
            self.assertEqual(r.execute_command("DEBUG", "RELOAD"), b"OK")
            self.assertEqual(self.snapshot(r), before)
            r.save()
            server.restart()
            self.assertEqual(self.snapshot(server.client()), before)
            for t in self.TYPES:
                usage = server.client().memory_usage("k:" + t)
                self.assertGreater(usage, 1000, t)
        finally:
            server.cleanup()

    def test_aof_without_rdb_preamble(self):
        server = Server(MODULE, args=["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
        try:
            r = server.client()
            self.fill(r)
            before = self.snapshot(r)
            r.bgrewriteaof()
            deadline = time.time() + 30
            while r.info("persistence")["aof_rewrite_in_progress"] and time.time() < deadline:
                time.sleep(0.05)
            # The rewrite wrote each filter as AMQ.LOADCHUNK commands of its
            # image, one for a filter under a megabyte.
            aof_dir = os.path.join(server.dir, "appendonlydir")
            written = b""
            for name in os.listdir(aof_dir):
                with open(os.path.join(aof_dir, name), "rb") as f:
                    written += f.read()
            self.assertEqual(written.count(b"AMQ.LOADCHUNK"), len(self.TYPES))
            self.assertEqual(written.count(b"AMQ.RESTORE"), 0)
            server.restart()
            self.assertEqual(self.snapshot(server.client()), before)
        finally:
            server.cleanup()


class Settings(unittest.TestCase):
    """The defaults BF.* and CF.* create filters with: load arguments
    (amq's names and RedisBloom's older ones), CONFIG GET / SET as
    amq.<name>, and a config line on the server's command line."""

    DEFAULTS = {"amq.bf-error-rate": "0.01", "amq.bf-initial-size": "100",
                "amq.bf-expansion-factor": "2", "amq.bf-tightening": "0.5",
                "amq.cf-initial-size": "1024", "amq.cf-bucket-size": "2",
                "amq.cf-max-iterations": "20", "amq.cf-expansion-factor": "1",
                "amq.cf-max-expansions": "32", "amq.filter-max-bytes": str(4 << 30),
                "amq.load-max-bytes": str(4 << 30)}

    def test_defaults_and_config_set(self):
        server = Server(MODULE)
        try:
            r = server.client(decode_responses=True)
            self.assertEqual(r.config_get("amq.*"), self.DEFAULTS)
            r.config_set("amq.bf-initial-size", 5000)
            r.config_set("amq.bf-error-rate", "0.001")
            r.config_set("amq.cf-bucket-size", 4)
            r.execute_command("BF.ADD", "b", "x")
            info = r.execute_command("BF.INFO", "b")
            self.assertEqual(info[info.index("Capacity") + 1], 5000)
            r.execute_command("CF.ADD", "c", "x")
            self.assertIn("bktsize:4", r.execute_command("CF.DEBUG", "c"))
            refusals = {
                ("amq.bf-error-rate", "0"): "bf-error-rate must be in the range (0, 1)",
                ("amq.bf-error-rate", "1"): "bf-error-rate must be in the range (0, 1)",
                ("amq.bf-error-rate", "nan"): "bf-error-rate must be in the range (0, 1)",
                ("amq.bf-tightening", "0.96"): "bf-tightening must be in the range [0.5, 0.95]",
                ("amq.cf-bucket-size", "256"): "argument must be between 1 and 255 inclusive",
                ("amq.bf-initial-size", "x"): "argument couldn't be parsed into an integer",
                ("amq.cf-initial-size", "7"): "cf-initial-size must be at least twice cf-bucket-size",
            }
            for (name, value), message in refusals.items():
                with self.assertRaises(redis.ResponseError) as caught:
                    r.config_set(name, value)
                self.assertTrue(str(caught.exception).endswith(message), str(caught.exception))
            # A refused CONFIG SET leaves every value as it was.
            expected = dict(self.DEFAULTS, **{"amq.bf-initial-size": "5000",
                                             "amq.bf-error-rate": "0.001",
                                             "amq.cf-bucket-size": "4"})
            self.assertEqual(r.config_get("amq.*"), expected)
        finally:
            server.cleanup()

    def test_load_arguments_and_config_lines(self):
        server = Server(MODULE, module_args=["bf-error-rate", "0.002", "INITIAL_SIZE", "300",
                                             "CF_MAX_EXPANSIONS", "7"],
                        args=["--amq.cf-max-iterations", "99"])
        try:
            r = server.client(decode_responses=True)
            got = r.config_get("amq.*")
            self.assertEqual((got["amq.bf-error-rate"], got["amq.bf-initial-size"],
                              got["amq.cf-max-expansions"], got["amq.cf-max-iterations"]),
                             ("0.002", "300", "7", "99"))
        finally:
            server.cleanup()
        for bad in (["bf-error-rate", "1.5"], ["bf-error-rate"], ["no-such-setting", "1"],
                    ["cf-initial-size", "4", "cf-bucket-size", "4"]):
            with self.assertRaises(RuntimeError, msg=bad):
                Server(MODULE, module_args=bad)


class RdbPayloads(unittest.TestCase):
    """The module's RDB loader meets damaged data: the server's RESTORE of
    a DUMP payload, with the payload's own CRC check switched off so that
    every damaged byte reaches the loader. Each one is refused with
    "Bad data format" or, where the damage falls on bytes the RDB
    compression makes redundant, loads as exactly the original filter."""

    def test_damaged_payloads_reach_the_loader_and_are_refused(self):
        server = Server(MODULE)
        try:
            r = server.client()
            r.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
            r.execute_command("BF.RESERVE", "bf", 0.01, 200, "EXPANSION", 2)
            r.execute_command("BF.MADD", "bf", *KEYS[:1000])
            r.execute_command("CF.RESERVE", "cf", 500)
            r.execute_command("CF.INSERT", "cf", "ITEMS", *KEYS[:1500])
            r.execute_command("AMQ.BUILD", "fuse", "fuse8", "ITEMS", *KEYS[:1000])
            r.execute_command("AMQ.BUILD", "gcs", "gcs", "ITEMS", *KEYS[:1000])
            rng = random.Random(11)
            for key in ["bf", "cf", "fuse", "gcs"]:
                payload = r.dump(key)
                original = r.execute_command("AMQ.DUMP", key)
                # The last 10 bytes are the RDB version and the CRC.
                body, trailer = payload[:-10], payload[-10:]
                damaged = [body[:cut] + trailer for cut in range(1, len(body), 7)]
                for _ in range(150):
                    flipped = bytearray(body)
                    flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
                    damaged.append(bytes(flipped) + trailer)
                refused = 0
                for blob in damaged:
                    try:
                        r.restore("t", 0, blob, replace=True)
                    except redis.ResponseError as e:
                        self.assertEqual(str(e), "Bad data format", key)
                        refused += 1
                        continue
                    self.assertEqual(r.execute_command("AMQ.DUMP", "t"), original, key)
                self.assertGreater(refused, len(damaged) * 3 // 4, key)
                # The undamaged payload still loads.
                r.restore("t", 0, payload, replace=True)
                self.assertEqual(r.execute_command("AMQ.DUMP", "t"), original, key)
            self.assertTrue(server.alive())
        finally:
            server.cleanup()


class Replication(unittest.TestCase):
    """A replica started against a primary holds identical filters: the
    full sync (RDB) and then the stream of writes (ReplicateVerbatim)."""

    def test_replica_answers_as_the_primary(self):
        primary = Server(MODULE)
        replica = None
        try:
            r = primary.client()
            probe = [b"item-%d" % i for i in range(100000)]
            r.execute_command("AMQ.BUILD", "synced", "fuse16", "ITEMS", *probe[:50000])
            replica = Server(MODULE, args=["--replicaof", "127.0.0.1", str(primary.port)])
            # Written after the full sync: reaches the replica as a command.
            r.execute_command("AMQ.BUILD", "streamed", "cuckoo", "ITEMS", *probe[25000:75000])
            self.assertGreaterEqual(r.execute_command("WAIT", 1, 10000), 1)
            rr = replica.client()
            for key in ["synced", "streamed"]:
                self.assertEqual(rr.execute_command("AMQ.MEXISTS", key, *probe),
                                 r.execute_command("AMQ.MEXISTS", key, *probe), key)
                self.assertEqual(rr.execute_command("AMQ.DUMP", key),
                                 r.execute_command("AMQ.DUMP", key), key)
        finally:
            if replica:
                replica.cleanup()
            primary.cleanup()


class Migrate(unittest.TestCase):
    """MIGRATE (what resharding a cluster uses) carries every kind of key
    to another server with the same answers."""

    def test_migrate_keeps_answers(self):
        source, target = Server(MODULE), Server(MODULE)
        try:
            r = source.client()
            r.execute_command("AMQ.BUILD", "static", "fuse8", "ITEMS", *KEYS[:5000])
            r.execute_command("BF.MADD", "bf", *KEYS[:5000])
            r.execute_command("CF.INSERT", "cf", "ITEMS", *KEYS[:5000])
            queries = KEYS[:5000] + ABSENT[:5000]
            before = {k: answers(r, k, queries) for k in ["static", "bf", "cf"]}
            cards = r.execute_command("BF.CARD", "bf")
            for key in before:
                self.assertEqual(r.migrate("127.0.0.1", target.port, key, 0, 5000), b"OK")
                self.assertEqual(r.exists(key), 0)
            t = target.client()
            for key, expected in before.items():
                self.assertEqual(answers(t, key, queries), expected, key)
            self.assertEqual(t.execute_command("BF.CARD", "bf"), cards)
        finally:
            source.cleanup()
            target.cleanup()


if __name__ == "__main__":
    MODULE, AMQ = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
