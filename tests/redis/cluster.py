"""A Redis Cluster of the test's own on loopback: three primaries and
three replicas, each a redis-server with amq's module loaded, joined by
redis-cli --cluster create."""
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time

import redis
from redis.cluster import RedisCluster

from server import Server

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def port_is_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def cluster_port():
    """A free port whose cluster bus port (port + 10000) is free too."""
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(20000, 50000)
        if port_is_free(port) and port_is_free(port + 10000):
            return port
    raise RuntimeError("no free pair of ports for a cluster node")


class ClusterNode(Server):
    def __init__(self, module, directory):
        port = cluster_port()
        super().__init__(module, directory, port=port, args=[
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes-%d.conf" % port,
            "--cluster-node-timeout", "2000",
            "--appendonly", "no"])


class Cluster:
    def __init__(self, module, nodes=6):
        self.dir = tempfile.mkdtemp(prefix="amq-cluster-")
        self.nodes = []
        try:
            for i in range(nodes):
                node_dir = os.path.join(self.dir, "node%d" % i)
                os.mkdir(node_dir)
                self.nodes.append(ClusterNode(module, node_dir))
            addresses = ["127.0.0.1:%d" % n.port for n in self.nodes]
            created = subprocess.run(
                [REDIS_CLI, "--cluster", "create", *addresses, "--cluster-replicas", "1",
                 "--cluster-yes"], capture_output=True, text=True, timeout=120)
            if created.returncode != 0 or "All 16384 slots covered" not in created.stdout:
                raise RuntimeError("redis-cli --cluster create failed:\n" + created.stdout +
                                   created.stderr)
            self.wait_ok()
        except BaseException:
            self.cleanup()
            raise

    def live_nodes(self):
        return [n for n in self.nodes if n.process.poll() is None]

    def wait_ok(self, timeout=60):
        """Until every live node says cluster_state:ok and sees the same
        number of primaries with slots."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            states = []
            for n in self.live_nodes():
                try:
                    states.append(n.client().cluster("info")["cluster_state"])
                except redis.exceptions.RedisError:
                    states.append("down")
            if states and all(s == "ok" for s in states):
                return
            time.sleep(0.2)
        raise RuntimeError("the cluster did not reach cluster_state:ok within %d s" % timeout)

    def client(self):
        node = self.live_nodes()[0]
        return RedisCluster(host="127.0.0.1", port=node.port)

    def primaries(self):
        """The live nodes that serve slots."""
        result = []
        for n in self.live_nodes():
            role = n.client().execute_command("ROLE")[0]
            if role in (b"master", "master"):
                result.append(n)
        return result

    def replicas_of(self, primary):
        node_id = primary.client().execute_command("CLUSTER", "MYID")
        if isinstance(node_id, bytes):
            node_id = node_id.decode()
        replicas = []
        for n in self.live_nodes():
            if n is primary:
                continue
            info = n.client().execute_command("ROLE")
            if info[0] in (b"slave", "slave") and n.client().info("replication").get(
                    "master_port") == primary.port:
                replicas.append(n)
        return replicas

    def cleanup(self):
        for n in self.nodes:
            n.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
