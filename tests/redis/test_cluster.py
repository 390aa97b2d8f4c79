"""amq's module on a Redis Cluster: six nodes on loopback (three primaries,
three replicas), 1,000 filters spread over all slots through python3-redis's
RedisCluster, one primary SIGKILLed, its replica promoted, and every filter
and every answer intact afterwards.

Usage: test_cluster.py MODULE_SO
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import Cluster  # noqa: E402

MODULE = None
FILTERS = 1000
TYPES = [["fuse8"], ["fuse16"], ["gcs"], ["bloom"], ["blocked-bloom"], ["scalable-bloom"],
         ["cuckoo"], ["hfb", "hash=md5"]]


def items(i):
    return [b"f%d-item-%d" % (i, j) for j in range(20)]


def absent(i):
    return [b"f%d-absent-%d" % (i, j) for j in range(40)]


class ClusterFailover(unittest.TestCase):
    def test_filters_survive_a_primary_killed(self):
        cluster = Cluster(MODULE)
        try:
            rc = cluster.client()
            for i in range(FILTERS):
                spec = TYPES[i % len(TYPES)]
                rc.execute_command("AMQ.BUILD", "filter:%d" % i, *spec, "ITEMS", *items(i))
            before = {}
            for i in range(FILTERS):
                key = "filter:%d" % i
                before[key] = [int(x) for x in rc.execute_command(
                    "AMQ.MEXISTS", key, *(items(i) + absent(i)))]
                self.assertEqual(before[key][:20], [1] * 20, key)
            primaries = cluster.primaries()
            self.assertEqual(len(primaries), 3)
            # Every primary holds some of the filters: they are spread over the slots.
            for p in primaries:
                self.assertGreater(p.client().dbsize(), FILTERS // 10)
            # Every replica has every write of its primary before the kill.
            for p in primaries:
                self.assertGreaterEqual(p.client().execute_command("WAIT", 1, 10000), 1)
            victim = primaries[0]
            replicas = cluster.replicas_of(victim)
            self.assertEqual(len(replicas), 1)
            victim.stop(kill=True)
            deadline = time.time() + 60
            while time.time() < deadline:
                role = replicas[0].client().execute_command("ROLE")[0]
                if role in (b"master", "master"):
                    break
                time.sleep(0.2)
            self.assertIn(replicas[0].client().execute_command("ROLE")[0], (b"master", "master"))
            cluster.wait_ok()
            rc = cluster.client()
            for i in range(FILTERS):
                key = "filter:%d" % i
                after = [int(x) for x in rc.execute_command(
                    "AMQ.MEXISTS", key, *(items(i) + absent(i)))]
                self.assertEqual(after, before[key], key)
        finally:
            cluster.cleanup()


if __name__ == "__main__":
    MODULE = sys.argv[1]
    unittest.main(argv=sys.argv[:1], verbosity=2)
