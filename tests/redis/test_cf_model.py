"""A model test of the CF.* commands: seeded random sequences of CF.ADD,
CF.ADDNX, CF.INSERT, CF.INSERTNX (several items a call; on new keys with
and without CAPACITY and NOCREATE), CF.DEL, CF.COUNT, CF.EXISTS and
CF.MEXISTS against an exact multiset per key (tests/redis/cf_model.py has
the rules), on filters reserved with every BUCKETSIZE 1, 2, 4 and EXPANSION
0, 1, 2, small enough to fill and grow; one item added 100 times among
50,000 others; a DEBUG RELOAD and an RDB restart in the middle, after which
every answer is the same.

Usage: test_cf_model.py MODULE_SO [AMQ_BINARY] [--module OTHER_SO] [--seed N]

The seed is printed; AMQ_TEST_SEED (or --seed) replays a run. --module runs
the same model against another module, such as RedisBloom 2.6's
redisbloom.so, to compare (its failures are its own: the rules are amq's).
"""
import argparse
import os
import random
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cf_model import Model, info_dict  # noqa: E402
from server import Server  # noqa: E402

MODULE = None
SEED = 20261207
CONFIGS = [(b, e) for b in (1, 2, 4) for e in (0, 1, 2)]
STEPS = 2400  # random commands per reserved key
CHECK_EVERY = 200
MAXMEMORY = "1gb"


def report(model):
    summary = model.summary()
    return summary and "seed %d: %s" % (SEED, summary)


class Walk:
    """A random sequence of commands on one reserved filter (and on the keys
    its commands create on the way)."""

    def __init__(self, model, rng, bucket_size, expansion):
        self.model, self.rng = model, rng
        self.tag = "b%d:e%d" % (bucket_size, expansion)
        self.key = "m:" + self.tag
        self.capacity = rng.choice([8, 16, 32, 64, 200])
        self.fresh = 0
        self.used = []
        self.hot = ["hot:%s:%d" % (self.tag, i) for i in range(3)]
        self.extra = []  # keys made by ADD / INSERT on a new key
        model.send("CF.RESERVE", self.key, self.capacity, "BUCKETSIZE", bucket_size,
                   "EXPANSION", expansion)

    def keys(self):
        return [self.key] + [k for k in self.extra if k in self.model.keys]

    def new_item(self):
        self.fresh += 1
        item = "it:%s:%d" % (self.tag, self.fresh)
        self.used.append(item)
        return item

    def item(self, key):
        state = self.model.keys.get(key)
        r = self.rng.random()
        if r < 0.45 or not state or not state.counts:
            return self.new_item()
        if r < 0.75:
            return self.rng.choice(list(state.counts))
        if r < 0.9:
            return self.rng.choice(self.hot)
        return self.rng.choice(self.used)

    def items(self, key):
        return [self.item(key) for _ in range(self.rng.randint(1, 8))]

    def step(self):
        rng, model = self.rng, self.model
        if rng.random() < 0.04:
            self.on_new_key()
            return
        key = self.key if rng.random() < 0.85 or len(self.keys()) == 1 else \
            rng.choice(self.keys()[1:])
        op = rng.choices(["add", "addnx", "insert", "insertnx", "del", "del-absent", "count",
                          "exists", "mexists"], [25, 10, 12, 8, 12, 3, 8, 8, 6])[0]
        state = model.keys[key]
        if op == "add":
            model.send("CF.ADD", key, self.item(key))
        elif op == "addnx":
            model.send("CF.ADDNX", key, self.item(key))
        elif op in ("insert", "insertnx"):
            # CAPACITY is ignored on an existing key, NOCREATE has no effect.
            groups = [g for g, p in ((["CAPACITY", rng.randint(4, 500)], 0.2),
                                     (["NOCREATE"], 0.2)) if rng.random() < p]
            rng.shuffle(groups)
            options = [word for g in groups for word in g]
            model.send("CF." + op.upper(), key, *options, "ITEMS", *self.items(key))
        elif op == "del":
            if state.counts:
                model.send("CF.DEL", key, rng.choice(list(state.counts)))
        elif op == "del-absent":
            item = rng.choice(self.used) if self.used and rng.random() < 0.5 else \
                "never:%s:%d" % (self.tag, rng.getrandbits(32))
            if not state.counts.get(item):
                model.delete_if_absent(key, item)
        elif op == "count":
            model.send("CF.COUNT", key, self.item(key))
        elif op == "exists":
            model.send("CF.EXISTS", key, self.item(key))
        else:
            model.send("CF.MEXISTS", key, *self.items(key))

    def on_new_key(self):
        """A write to a key that does not exist yet: ADD and ADDNX create it
        with the defaults, INSERT / INSERTNX with CAPACITY if given, and not
        at all with NOCREATE."""
        rng, model = self.rng, self.model
        key = "n:%s:%d" % (self.tag, len(self.extra))
        self.extra.append(key)
        op = rng.choice(["CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX"])
        if op in ("CF.ADD", "CF.ADDNX"):
            model.send(op, key, self.new_item())
            return
        groups = [g for g, p in ((["CAPACITY", rng.choice([4, 8, 20, 100, 1000])], 0.5),
                                 (["NOCREATE"], 0.3)) if rng.random() < p]
        rng.shuffle(groups)
        options = [word for g in groups for word in g]
        model.send(op, key, *options, "ITEMS", *[self.new_item() for _ in range(rng.randint(1, 6))])
        if "NOCREATE" in options and model.r.exists(key):
            model.violation(key, "CF.INSERT NOCREATE created %s" % key)

    def check(self):
        for key in self.keys():
            self.model.check(key)


class CfModel(unittest.TestCase):
    def setUp(self):
        # A ceiling on the server's memory, so that a module whose filters
        # grow without bound (RedisBloom's do under copies of one item with
        # EXPANSION 2) answers errors instead of taking the machine's memory.
        self.server = Server(MODULE, args=["--maxmemory", MAXMEMORY])
        self.r = self.server.client()

    def tearDown(self):
        self.server.cleanup()

    def assertNoViolations(self, model):
        message = report(model)
        if message:
            self.fail(message)

    def reload_and_compare(self, model, probes):
        """A DEBUG RELOAD, then a SAVE and a restart from the RDB: the same
        answers after each, and the invariant."""
        before = model.snapshot(probes)
        self.assertEqual(self.r.execute_command("DEBUG", "RELOAD"), b"OK")
        self.assertEqual(model.snapshot(probes), before, "answers changed across DEBUG RELOAD")
        model.check()
        self.r.save()
        self.server.restart()
        self.r = model.r = self.server.client()
        self.assertEqual(model.snapshot(probes), before, "answers changed across a restart")
        model.check()

    def test_copies_of_one_item_do_not_block_others(self):
        """Six copies of one item in a default filter (BUCKETSIZE 2,
        EXPANSION 1): every add answers 1 and the filter stays one table."""
        model = Model(self.r)
        sequence = [("CF.RESERVE", "d", 1024), ("CF.ADD", "d", "a")] + \
            [("CF.ADD", "d", "foo")] * 6 + [("CF.ADD", "d", "bar"), ("CF.ADDNX", "d", "baz")]
        replies, filters = [], []
        for args in sequence:
            replies.append(model.send(*args))
            filters.append(info_dict(self.r.execute_command("CF.INFO", "d"))["Number of filters"])
        model.check()
        shown = [Model.show(r) for r in replies]
        self.assertEqual(shown, ["OK"] + ["1"] * 9, "replies of %s" % sequence)
        self.assertEqual(filters, [1] * len(sequence), "Number of filters after each command")
        self.assertNoViolations(model)

    def test_copies_of_one_item_in_every_configuration(self):
        """The same sequence under every BUCKETSIZE and EXPANSION: the
        rules (no refusal of a filter that holds 8 items of 1024)."""
        model = Model(self.r)
        for b, e in CONFIGS:
            key = "d:b%d:e%d" % (b, e)
            model.send("CF.RESERVE", key, 1024, "BUCKETSIZE", b, "EXPANSION", e)
            for item in ["a"] + ["foo"] * 6 + ["bar"]:
                model.send("CF.ADD", key, item)
            model.send("CF.ADDNX", key, "baz")
        model.check()
        self.assertNoViolations(model)

    def test_random_sequences(self):
        rng = random.Random(SEED)
        model = Model(self.r)
        walks = [Walk(model, random.Random(rng.getrandbits(64)), b, e) for b, e in CONFIGS]
        probes = ["probe:%d" % i for i in range(2000)]
        for step in range(STEPS):
            for walk in walks:
                walk.step()
            if (step + 1) % CHECK_EVERY == 0:
                for walk in walks:
                    walk.check()
            if step + 1 == STEPS // 2:
                self.reload_and_compare(model, probes)
        for walk in walks:
            walk.check()
        filters = {w.key: info_dict(self.r.execute_command("CF.INFO", w.key))["Number of filters"]
                   for w in walks}
        print("  %d commands; Number of filters: %s" % (model.commands, filters), file=sys.stderr)
        self.assertNoViolations(model)

    def test_one_item_100_times_among_50000(self):
        rng = random.Random(SEED ^ 0x5EED)
        model = Model(self.r)
        keys = []
        for b, e in CONFIGS:
            key = "h:b%d:e%d" % (b, e)
            keys.append(key)
            # EXPANSION 0 fills partway through; the others grow (and with
            # EXPANSION 1 may reach cf-max-expansions).
            model.send("CF.RESERVE", key, 20000 if e == 0 else 1000, "BUCKETSIZE", b,
                       "EXPANSION", e)
            items = ["x:%d" % i for i in range(50000)]
            for position in sorted(rng.sample(range(50000), 100), reverse=True):
                items.insert(position, "heavy")
            commands, i = [], 0
            while i < len(items):
                if rng.random() < 0.1:
                    n = rng.randint(2, 6)
                    commands.append(("CF.INSERT", key, "ITEMS", *items[i:i + n]))
                    i += n
                else:
                    commands.append(("CF.ADD", key, items[i]))
                    i += 1
            for start in range(0, len(commands), 2000):
                model.send_many(commands[start:start + 2000])
            model.check(key)
        print("  heavy copies stored: %s" % {
            k: model.keys[k].counts.get("heavy", 0) for k in keys if k in model.keys},
            file=sys.stderr)
        self.reload_and_compare(model, ["heavy"] + ["probe:%d" % i for i in range(1000)])
        self.assertNoViolations(model)


def main():
    global MODULE, SEED
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module_so")
    parser.add_argument("amq_binary", nargs="?")
    parser.add_argument("--module", help="run against this module instead (e.g. redisbloom.so)")
    parser.add_argument("--seed", type=lambda s: int(s, 0))
    args, rest = parser.parse_known_args()
    MODULE = os.path.abspath(args.module or args.module_so)
    env = os.environ.get("AMQ_TEST_SEED")
    if args.seed is not None:
        SEED = args.seed
    elif env:
        SEED = int(env, 0)
    print("seed: %d (set AMQ_TEST_SEED to replay); module %s" % (SEED, MODULE), file=sys.stderr)
    started = time.time()
    result = unittest.main(argv=sys.argv[:1] + rest, verbosity=2, exit=False).result
    print("%.1f s" % (time.time() - started), file=sys.stderr)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
