"""The module as `cmake --install` puts it: installed into a scratch
prefix, it has its execute bit (Redis 7 refuses a module without one) and
Debian's redis-server loads it and answers from it.

Usage: test_installed.py CMAKE BUILD_DIR
"""
import glob
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server  # noqa: E402

CMAKE = BUILD = None


class Installed(unittest.TestCase):
    def setUp(self):
        self.prefix = tempfile.mkdtemp(prefix="amq-install-")

    def tearDown(self):
        shutil.rmtree(self.prefix, ignore_errors=True)

    def test_the_installed_module_loads(self):
        subprocess.run([CMAKE, "--install", BUILD, "--prefix", self.prefix], check=True,
                       stdout=subprocess.DEVNULL)
        found = glob.glob(os.path.join(self.prefix, "lib*", "**", "amq", "amq.so"),
                          recursive=True) + glob.glob(
                              os.path.join(self.prefix, "lib*", "amq", "amq.so"))
        self.assertTrue(found, "no amq.so under %s" % self.prefix)
        module = found[0]
        mode = os.stat(module).st_mode
        self.assertTrue(mode & stat.S_IXUSR and mode & stat.S_IXGRP and mode & stat.S_IXOTH,
                        "%s has mode %o" % (module, mode))
        # Not the build tree's copy: the one in the prefix.
        self.assertTrue(os.path.realpath(module).startswith(os.path.realpath(self.prefix)))
        server = Server(module)
        try:
            r = server.client()
            modules = [m[b"name"] for m in r.module_list()]
            self.assertIn(b"amq", modules)
            self.assertEqual(r.execute_command("BF.ADD", "b", "x"), 1)
            self.assertEqual(r.execute_command("BF.EXISTS", "b", "x"), 1)
            self.assertEqual(r.execute_command("BF.EXISTS", "b", "y"), 0)
        finally:
            server.cleanup()


if __name__ == "__main__":
    CMAKE, BUILD = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
