"""Property-based tests of the CF.* commands with Debian's
python3-hypothesis: a stateful machine (hypothesis.stateful) reserves a
filter (BUCKETSIZE 1, 2 or 4, EXPANSION 0, 1 or 2, a small capacity) and
runs adds, ADDNX, INSERT, INSERTNX, deletions of held items and of absent
ones, counts and queries against the exact model of tests/redis/cf_model.py,
checking its invariant after every step. Before that it replays every
reproducer of tests/data/redis/cf-reproducers.txt (the shrunk
failures hypothesis found, and the 'foo x6' scenario), checking the
invariant after each command.

One server for the whole run; each example starts with FLUSHALL. The
search is derandomized (the same examples on every run), keeps no
database (no .hypothesis directory), and prints the blob of a failure
(@reproduce_failure) along with the failure as a reproducer block to add
to the file.

Usage: test_cf_properties.py MODULE_SO [AMQ_BINARY] [--module OTHER_SO] [--examples N]
"""
import argparse
import os
import sys
import time
import unittest

try:
    import hypothesis
    from hypothesis import HealthCheck, settings
    from hypothesis import strategies as st
    from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, precondition,
                                     rule)
except ImportError:
    print("test_cf_properties: python3-hypothesis is missing (/usr/bin/python3 cannot import "
          "hypothesis): apt-get install python3-hypothesis, or run scripts/install-deps.sh",
          file=sys.stderr)
    sys.exit(1)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cf_model import Model, ModelViolation, expectation_met, format_command  # noqa: E402
from cf_model import parse_reproducers  # noqa: E402
from server import Server  # noqa: E402

REPRODUCERS = os.path.join(HERE, "..", "data", "redis", "cf-reproducers.txt")
MODULE = None
SERVER = None
EXAMPLES = 300
STEPS = 50
KEY = "k"

# A small pool of items, so that copies of one item are common (and shrink
# towards i0), and fresh distinct ones to fill a filter.
ITEMS = st.integers(min_value=0, max_value=12).map(lambda i: "i%d" % i)
ITEM_LISTS = st.lists(ITEMS, min_size=1, max_size=6)


class CfMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.model = None
        self.fresh = 0
        self.touched = []
        self.failed = False

    def send(self, *args):
        try:
            return self.model.send(*args)
        except ModelViolation:
            self.failed = True
            raise

    @initialize(bucket_size=st.sampled_from([1, 2, 4]), expansion=st.sampled_from([0, 1, 2]),
                capacity=st.sampled_from([8, 16, 32, 64, 1024]))
    def reserve(self, bucket_size, expansion, capacity):
        r = SERVER.client()
        r.flushall()
        self.model = Model(r, raise_at_once=True, history=None)
        self.send("CF.RESERVE", KEY, capacity, "BUCKETSIZE", bucket_size, "EXPANSION", expansion)

    def held(self):
        state = self.model.keys.get(KEY)
        return sorted(state.counts) if state else []

    @rule(item=ITEMS)
    def add(self, item):
        self.touched.append(item)
        self.send("CF.ADD", KEY, item)

    @rule(item=ITEMS)
    def addnx(self, item):
        self.touched.append(item)
        self.send("CF.ADDNX", KEY, item)

    @rule(items=ITEM_LISTS)
    def insert(self, items):
        self.touched += items
        self.send("CF.INSERT", KEY, "ITEMS", *items)

    @rule(items=ITEM_LISTS)
    def insertnx(self, items):
        self.touched += items
        self.send("CF.INSERTNX", KEY, "ITEMS", *items)

    @rule(n=st.integers(min_value=1, max_value=200))
    def fill(self, n):
        """n distinct new items in one CF.INSERT: filters fill and grow."""
        items = ["f%d" % (self.fresh + i) for i in range(n)]
        self.fresh += n
        self.send("CF.INSERT", KEY, "ITEMS", *items)

    @precondition(lambda self: self.model is not None and self.held())
    @rule(data=st.data())
    def delete_held(self, data):
        item = data.draw(st.sampled_from(self.held()), label="item")
        self.touched.append(item)
        self.send("CF.DEL", KEY, item)

    @rule(item=ITEMS)
    def delete_absent(self, item):
        state = self.model.keys.get(KEY)
        if state and state.counts.get(item):
            return
        try:
            self.model.delete_if_absent(KEY, item)
        except ModelViolation:
            self.failed = True
            raise

    @rule(item=ITEMS)
    def count(self, item):
        self.send("CF.COUNT", KEY, item)

    @rule(item=ITEMS)
    def exists(self, item):
        self.send("CF.EXISTS", KEY, item)

    @rule(items=ITEM_LISTS)
    def mexists(self, items):
        self.send("CF.MEXISTS", KEY, *items)

    @invariant()
    def invariant_holds(self):
        """Every held item answers CF.MEXISTS 1, those this step touched
        CF.EXISTS 1 and CF.COUNT >= their count; CF.INFO's counts."""
        if self.model is None or KEY not in self.model.keys:
            return
        touched, self.touched = self.touched, []
        try:
            self.model.check(KEY, items=touched)
        except ModelViolation:
            self.failed = True
            raise

    def teardown(self):
        if self.model is not None and KEY in self.model.keys and not self.failed:
            self.model.check(KEY)  # every held item, CF.EXISTS and CF.COUNT too


def replay(r, title, commands):
    """One reproducer block on an empty server: the model's rules for each
    reply, the `=> expected` replies, the invariant after each command.
    The violations found, as text (empty if none)."""
    r.flushall()
    model = Model(r, history=None)
    for args, expected in commands:
        name, key = args[0].upper(), args[1]
        state = model.keys.get(key)
        if name == "CF.DEL" and not (state and state.counts.get(args[2])):
            # Only of an item CF.EXISTS says is absent (a false positive
            # would take another item's copy).
            if not model.delete_if_absent(key, args[2]) and expected is not None:
                model.violation(key, "%s: CF.EXISTS says present, not sent" % " ".join(args))
            continue
        reply = r.execute_command("CF.INFO", key) if name == "CF.INFO" else \
            model.send(*args)
        if name == "CF.INFO":
            model.note(key, args, reply)
        if expected is not None and not expectation_met(args, reply, expected):
            model.violation(key, "%s answered %s, the reproducer expects %s" % (
                format_command(args), Model.show(reply), expected))
        if key in model.keys:
            model.check(key)
    return model.summary()


class Reproducers(unittest.TestCase):
    def test_reproducers(self):
        blocks = parse_reproducers(REPRODUCERS)
        self.assertGreater(len(blocks), 0, REPRODUCERS)
        r = SERVER.client()
        failed = []
        for title, commands in blocks:
            found = replay(r, title, commands)
            if found:
                failed.append("reproducer %r:\n%s" % (title, found))
        print("  %d reproducers, %d fail" % (len(blocks), len(failed)), file=sys.stderr)
        if failed:
            self.fail("\n\n".join(failed))


class Properties(unittest.TestCase):
    def test_state_machine(self):
        machine_settings = settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, derandomize=True, database=None,
            print_blob=True, deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.filter_too_much])
        hypothesis.stateful.run_state_machine_as_test(CfMachine, settings=machine_settings)


def main():
    global MODULE, SERVER, EXAMPLES
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module_so")
    parser.add_argument("amq_binary", nargs="?")
    parser.add_argument("--module", help="run against this module instead (e.g. redisbloom.so)")
    parser.add_argument("--examples", type=int, default=EXAMPLES)
    args = parser.parse_args()
    MODULE = os.path.abspath(args.module or args.module_so)
    EXAMPLES = args.examples
    print("hypothesis %s, derandomized, %d examples of up to %d steps; module %s" % (
        hypothesis.__version__, EXAMPLES, STEPS, MODULE), file=sys.stderr)
    started = time.time()
    SERVER = Server(MODULE, args=["--maxmemory", "1gb"])
    try:
        suite = unittest.TestSuite([Reproducers("test_reproducers"),
                                    Properties("test_state_machine")])
        result = unittest.TextTestRunner(verbosity=2).run(suite)
    finally:
        SERVER.cleanup()
    print("%.1f s" % (time.time() - started), file=sys.stderr)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
