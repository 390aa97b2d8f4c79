"""A redis-server of the test's own, with amq's module loaded.

Each test starts its servers on free loopback ports in a scratch
directory and stops them by pid. A server that cannot start fails the test
with the reason from its log; nothing is skipped.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """redis-server --loadmodule MODULE, in directory DIR (a fresh
    temporary one unless given, so that a restart finds its RDB/AOF), on
    PORT (a free one unless given; a restart keeps it)."""

    def __init__(self, module, directory=None, args=(), module_args=(), port=None):
        self.module = module
        self.fixed_port = port
        self.dir = directory or tempfile.mkdtemp(prefix="amq-redis-")
        self.args = list(args)
        self.module_args = list(module_args)
        self.port = None
        self.process = None
        self.start()

    def start(self):
        self.port = self.fixed_port or free_port()
        self.log = os.path.join(self.dir, "redis-%d.log" % self.port)
        command = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
                   "--dir", self.dir, "--save", "", "--logfile", self.log,
                   "--enable-debug-command", "local",
                   "--loadmodule", self.module] + self.module_args + self.args
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.process.poll() is not None:
                with self.process.stderr:
                    said = self.process.stderr.read().decode(errors="replace")
                raise RuntimeError("redis-server exited with %d: %s%s" % (
                    self.process.returncode, said, self.log_tail()))
            try:
                if self.client().ping():
                    return
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not answer within 15 s:" + self.log_tail())

    def log_tail(self):
        try:
            with open(self.log, errors="replace") as f:
                return "\n" + "".join(f.readlines()[-20:])
        except OSError:
            return ""

    def client(self, **kwargs):
        return redis.Redis(host="127.0.0.1", port=self.port, **kwargs)

    def alive(self):
        return self.process.poll() is None and self.client().ping()

    def stop(self, kill=False):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process and self.process.stderr:
            self.process.stderr.close()

    def restart(self):
        self.stop()
        self.start()

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
