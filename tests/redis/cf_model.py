"""An exact model of the CF.* commands, shared by test_cf_model.py (seeded
random sequences) and test_cf_properties.py (hypothesis's stateful
testing and the reproducers in tests/data/redis/cf-reproducers.txt).

The model keeps, for each key, every item's true count: how many copies of
it the filter stores. A cuckoo filter may answer "maybe" for an item it
never stored (a false positive) and may count other items' equal
fingerprints, so the model checks only what a correct filter must answer:

- CF.ADD answering 1 stores one more copy. CF.ADDNX / CF.INSERTNX answering
  1 store one, 0 store nothing (and an item the model holds must get 0).
  CF.INSERT / CF.INSERTNX answering -1 (full) and any error reply change
  nothing.
- CF.DEL is sent only of an item whose true count is positive (it must
  answer 1 and removes one copy) or of one CF.EXISTS says is absent (it
  must answer 0).
- The invariant: every item of positive true count answers CF.EXISTS 1 and
  CF.MEXISTS 1, and CF.COUNT at least its true count; CF.INFO's `Number of
  items inserted` is the copies stored (adds minus deletions) and `Number
  of items deleted` the CF.DEL calls that answered 1 (docs/REDIS.md).
- Copies of one item never make the filter refuse other items. A filter
  that grows (EXPANSION >= 1) may refuse an add (`Maximum expansions
  reached`, or -1 in an INSERT) only when CF.INFO's `Number of filters` is
  the module's cf-max-expansions; one that cannot (EXPANSION 0) may answer
  `Filter is full` (or -1) only when it holds at least half its reserved
  capacity, not counting the copies of the item with the most of them.

Every write is sent in a pipeline with CF.INFO after it: an error changes
nothing, so that CF.INFO is the filter as it was when it refused.
"""
import shlex

import redis

FULL = "Filter is full"
MAX_EXPANSIONS = "Maximum expansions reached"
# What a key created by CF.ADD, CF.ADDNX or CF.INSERT without CAPACITY gets
# (the settings' defaults, RedisBloom's too).
DEFAULT_CAPACITY, DEFAULT_BUCKET_SIZE, DEFAULT_EXPANSION = 1024, 2, 1
WRITES = {"CF.RESERVE", "CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX", "CF.DEL"}


class ModelViolation(AssertionError):
    pass


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def format_command(args):
    return " ".join(text(a) for a in args)


def info_dict(reply):
    if isinstance(reply, Exception) or not isinstance(reply, list):
        return None
    return {text(k): v for k, v in zip(reply[0::2], reply[1::2])}


def max_expansions_of(client):
    """The module's cf-max-expansions: amq's module config, or 32 (the
    default of both modules; RedisBloom 2.6 has no config to ask)."""
    try:
        reply = client.execute_command("CONFIG", "GET", "amq.cf-max-expansions")
    except redis.ResponseError:
        reply = []
    return int(reply[1]) if len(reply) == 2 else 32


class Key:
    """One filter as the model knows it: its parameters and its items' true
    counts."""

    def __init__(self, capacity, bucket_size, expansion):
        self.capacity, self.bucket_size, self.expansion = capacity, bucket_size, expansion
        self.counts = {}
        self.total = 0  # copies stored
        self.deletes = 0  # CF.DEL calls that answered 1
        self.most = 0  # the largest true count

    def add(self, item):
        n = self.counts.get(item, 0) + 1
        self.counts[item] = n
        self.total += 1
        self.most = max(self.most, n)

    def remove(self, item):
        n = self.counts[item] - 1
        if n:
            self.counts[item] = n
        else:
            del self.counts[item]
        self.total -= 1
        self.deletes += 1
        if n + 1 == self.most:
            self.most = max(self.counts.values(), default=0)

    def present(self):
        return [item for item, n in self.counts.items() if n > 0]


class Model:
    """The model of every CF key of one server. `client` is a redis.Redis
    (decode_responses off). Violations raise ModelViolation at once when
    `raise_at_once`, else are collected in `violations` (each with the
    key's last commands) and the run goes on."""

    def __init__(self, client, max_expansions=None, raise_at_once=False, history=30):
        self.r = client
        self.max_expansions = max_expansions or max_expansions_of(client)
        self.raise_at_once = raise_at_once
        self.keys = {}
        self.log = {}  # key -> the commands sent to it and their replies, in order
        self.sent = {}  # key -> the commands alone
        self.history = history
        self.violations = []
        self.commands = 0

    # ---- reporting -------------------------------------------------------

    def violation(self, key, message):
        lines = self.log.get(key, [])
        shown = lines if self.history is None else lines[-self.history:]
        report = "%s\n  the commands of %s%s:\n    %s" % (
            message, text(key), "" if len(shown) == len(lines) else
            " (the last %d of %d)" % (len(shown), len(lines)), "\n    ".join(shown))
        if self.raise_at_once:
            raise ModelViolation(
                report + "\n  as a block of tests/data/redis/cf-reproducers.txt:\n"
                "# %s\n%s\n" % (message, "\n".join(self.sent.get(key, []))))
        self.violations.append((key, message, report))

    def summary(self, keys=8):
        """The violations, key by key: the first in full (with the commands
        before it), then how many more and what the next ones said."""
        if not self.violations:
            return None
        by_key = {}
        for key, message, report in self.violations:
            by_key.setdefault(key, []).append((message, report))
        parts = []
        for key, found in list(by_key.items())[:keys]:
            part = found[0][1]
            if len(found) > 1:
                part += "\n  and %d more on %s, such as:\n    %s" % (
                    len(found) - 1, text(key), "\n    ".join(m for m, _ in found[1:4]))
            parts.append(part)
        more = len(by_key) - keys
        return "%d violations of the model on %d keys%s:\n\n%s" % (
            len(self.violations), len(by_key),
            "" if more <= 0 else " (the first %d keys shown)" % keys, "\n\n".join(parts))

    def note(self, key, args, reply):
        self.commands += 1
        self.log.setdefault(key, []).append(
            "%s   -> %s" % (format_command(args), self.show(reply)))
        self.sent.setdefault(key, []).append(format_command(args))

    @staticmethod
    def show(reply):
        if isinstance(reply, Exception):
            return "error %r" % str(reply)
        if isinstance(reply, list):
            return "[%s]" % ", ".join(Model.show(x) for x in reply)
        return text(reply)

    # ---- sending ---------------------------------------------------------

    def send(self, *args):
        """Send one command, apply its reply to the model; return the reply
        (an exception object for an error)."""
        return self.send_many([args])[0]

    def send_many(self, commands):
        """Pipeline commands (each write followed by CF.INFO of its key)
        and apply every reply in order."""
        pipe = self.r.pipeline(transaction=False)
        for args in commands:
            pipe.execute_command(*args)
            if args[0].upper() in WRITES:
                pipe.execute_command("CF.INFO", args[1])
        replies = iter(pipe.execute(raise_on_error=False))
        out = []
        for args in commands:
            reply = next(replies)
            info = info_dict(next(replies)) if args[0].upper() in WRITES else None
            self.apply(args, reply, info)
            out.append(reply)
        return out

    def delete_if_absent(self, key, item):
        """CF.DEL of an item the model does not hold, if CF.EXISTS says it is
        absent (it must then answer 0); True if it was sent."""
        if self.keys.get(key) and self.keys[key].counts.get(item):
            raise ValueError("%s holds %s" % (key, item))
        if self.r.execute_command("CF.EXISTS", key, item) != 0:
            return False
        self.send("CF.DEL", key, item)
        return True

    # ---- the rules -------------------------------------------------------

    def apply(self, args, reply, info):
        name = args[0].upper()
        key = args[1]
        self.note(key, args, reply)
        handler = {"CF.RESERVE": self.reserved, "CF.ADD": self.added, "CF.ADDNX": self.added,
                   "CF.INSERT": self.inserted, "CF.INSERTNX": self.inserted,
                   "CF.DEL": self.deleted, "CF.COUNT": self.counted,
                   "CF.EXISTS": self.existed, "CF.MEXISTS": self.existed}.get(name)
        if handler is None:
            if isinstance(reply, Exception):
                self.violation(key, "%s answered %r" % (format_command(args), str(reply)))
            return
        handler(name, key, args, reply, info)

    def reserved(self, name, key, args, reply, info):
        if isinstance(reply, Exception) and key in self.keys:
            return  # RESERVE of an existing key: refused, nothing changes
        if isinstance(reply, Exception) or key in self.keys:
            self.violation(key, "%s answered %s" % (format_command(args), self.show(reply)))
            return
        options = {text(a).upper(): int(b) for a, b in zip(args[3::2], args[4::2])}
        self.keys[key] = Key(int(args[2]), options.get("BUCKETSIZE", DEFAULT_BUCKET_SIZE),
                             options.get("EXPANSION", DEFAULT_EXPANSION))

    def created(self, key, capacity=DEFAULT_CAPACITY):
        if key not in self.keys:
            self.keys[key] = Key(capacity, DEFAULT_BUCKET_SIZE, DEFAULT_EXPANSION)
        return self.keys[key]

    def added(self, name, key, args, reply, info):
        item = text(args[2])
        state = self.keys.get(key)
        held = state.counts.get(item, 0) if state else 0
        if isinstance(reply, Exception):
            self.refused(key, args, str(reply), info, 0)
            return
        if name == "CF.ADDNX" and held and reply != 0:
            self.violation(key, "%s answered %s, but the filter holds %d copies of %s" % (
                format_command(args), self.show(reply), held, item))
            return
        if reply == 1:
            self.created(key).add(item)
        elif not (reply == 0 and name == "CF.ADDNX"):
            self.violation(key, "%s answered %s" % (format_command(args), self.show(reply)))

    def inserted(self, name, key, args, reply, info):
        nx = name == "CF.INSERTNX"
        words = [text(a).upper() for a in args]
        start = words.index("ITEMS") + 1
        items = [text(a) for a in args[start:]]
        nocreate = "NOCREATE" in words[2:start]
        capacity = DEFAULT_CAPACITY
        if "CAPACITY" in words[2:start]:
            capacity = int(args[words.index("CAPACITY") + 1])
        if isinstance(reply, Exception):
            if nocreate and key not in self.keys and str(reply) == "not found":
                return  # NOCREATE of a missing key
            self.refused(key, args, str(reply), info, 0)
            return
        if nocreate and key not in self.keys:
            self.violation(key, "%s created the key" % format_command(args))
        if not isinstance(reply, list) or len(reply) != len(items):
            self.violation(key, "%s answered %s" % (format_command(args), self.show(reply)))
            return
        state = self.created(key, capacity)
        for i, (item, answer) in enumerate(zip(items, reply)):
            later = sum(1 for a in reply[i + 1:] if a == 1)
            held = state.counts.get(item, 0)
            if isinstance(answer, Exception):
                self.refused(key, args, str(answer), info, later, item=i)
            elif answer == -1:
                self.refused(key, args, -1, info, later, item=i)
            elif nx and held and answer != 0:
                self.violation(key, "%s answered %s for item %d (%s), but the filter holds %d "
                               "copies of it" % (format_command(args), self.show(reply), i, item,
                                                 held))
            elif answer == 1:
                state.add(item)
            elif not (answer == 0 and nx):
                self.violation(key, "%s answered %s (item %d)" % (
                    format_command(args), self.show(reply), i))

    def refused(self, key, args, what, info, later, item=None):
        """An add refused (an error, or -1 in an INSERT): allowed only as the
        rules say. `info` is CF.INFO after the command, `later` the items
        the same command added after the refused one."""
        state = self.keys.get(key)
        where = format_command(args) + ("" if item is None else " (item %d)" % item)
        if what not in (FULL, MAX_EXPANSIONS, -1):
            self.violation(key, "%s answered %r" % (where, what))
            return
        if info is None:
            self.violation(key, "%s answered %r on a key without CF.INFO" % (where, what))
            return
        expansion = state.expansion if state else DEFAULT_EXPANSION
        filters = info["Number of filters"]
        if expansion >= 1:
            if what == FULL or filters != self.max_expansions:
                self.violation(key, "%s answered %r with EXPANSION %d and Number of filters "
                               "%d (cf-max-expansions %d)" % (
                                   where, what, expansion, filters, self.max_expansions))
            return
        stored = info["Number of items inserted"] - later
        copies = max(state.most - 1, 0)
        if what == MAX_EXPANSIONS or 2 * (stored - copies) < state.capacity:
            self.violation(key, "%s answered %r with EXPANSION 0: Number of items inserted %d "
                           "(%d of them extra copies of one item) of capacity %d" % (
                               where, what, stored, copies, state.capacity))

    def deleted(self, name, key, args, reply, info):
        item = text(args[2])
        state = self.keys.get(key)
        held = state.counts.get(item, 0) if state else 0
        if held:
            if reply != 1:
                self.violation(key, "%s answered %s, but the filter holds %d copies" % (
                    format_command(args), self.show(reply), held))
            else:
                state.remove(item)
        elif state is None:
            if not (isinstance(reply, Exception) and str(reply) == "Not found"):
                self.violation(key, "%s of a missing key answered %s" % (
                    format_command(args), self.show(reply)))
        elif reply != 0:
            self.violation(key, "%s answered %s for an item CF.EXISTS says is absent" % (
                format_command(args), self.show(reply)))

    def counted(self, name, key, args, reply, info):
        item = text(args[2])
        held = self.keys[key].counts.get(item, 0) if key in self.keys else 0
        if isinstance(reply, Exception) or reply < held:
            self.violation(key, "%s answered %s, the true count is %d" % (
                format_command(args), self.show(reply), held))

    def existed(self, name, key, args, reply, info):
        state = self.keys.get(key)
        items = [text(a) for a in args[2:]]
        answers = [reply] if name == "CF.EXISTS" else reply
        if isinstance(reply, Exception) or not isinstance(answers, list) or \
                len(answers) != len(items):
            self.violation(key, "%s answered %s" % (format_command(args), self.show(reply)))
            return
        for item, answer in zip(items, answers):
            if state and state.counts.get(item) and answer != 1:
                self.violation(key, "%s answered %s for %s, which it holds %d times" % (
                    name, self.show(answer), item, state.counts[item]))

    # ---- the invariant ---------------------------------------------------

    def check(self, key=None, items=None):
        """The invariant, for one key (or all): every item it holds answers
        CF.EXISTS 1, CF.MEXISTS 1 and CF.COUNT >= its true count, and
        CF.INFO counts the copies and deletions. `items` limits the
        CF.EXISTS / CF.COUNT part to some items (CF.MEXISTS still asks all)."""
        for k in ([key] if key is not None else list(self.keys)):
            state = self.keys.get(k)
            if state is None:
                self.violation(k, "%s was never created" % text(k))
                continue
            present = state.present()
            asked = present if items is None else [i for i in items if state.counts.get(i)]
            pipe = self.r.pipeline(transaction=False)
            pipe.execute_command("CF.INFO", k)
            batches = [present[i:i + 10000] for i in range(0, len(present), 10000)]
            for batch in batches:
                pipe.execute_command("CF.MEXISTS", k, *batch)
            for item in asked:
                pipe.execute_command("CF.EXISTS", k, item)
                pipe.execute_command("CF.COUNT", k, item)
            replies = pipe.execute(raise_on_error=False)
            info = info_dict(replies[0])
            if info is None:
                self.violation(k, "CF.INFO %s answered %s" % (text(k), self.show(replies[0])))
                continue
            if (info["Number of items inserted"], info["Number of items deleted"]) != \
                    (state.total, state.deletes):
                self.violation(k, "CF.INFO says %d items inserted and %d deleted; the model "
                               "%d and %d" % (info["Number of items inserted"],
                                              info["Number of items deleted"], state.total,
                                              state.deletes))
            at = 1
            for batch in batches:
                answers = replies[at]
                at += 1
                if isinstance(answers, Exception):
                    self.violation(k, "CF.MEXISTS answered %r" % str(answers))
                    continue
                missed = [item for item, a in zip(batch, answers) if a != 1]
                if missed:
                    self.violation(k, "CF.MEXISTS answered 0 for %d held items: %s" % (
                        len(missed), ", ".join(missed[:10])))
            for item in asked:
                exists, count = replies[at], replies[at + 1]
                at += 2
                if exists != 1:
                    self.violation(k, "CF.EXISTS %s %s answered %s; it holds %d copies" % (
                        text(k), item, self.show(exists), state.counts[item]))
                if isinstance(count, Exception) or count < state.counts[item]:
                    self.violation(k, "CF.COUNT %s %s answered %s; it holds %d copies" % (
                        text(k), item, self.show(count), state.counts[item]))

    def snapshot(self, probes=(), counts=3000):
        """What the keys answer: CF.INFO, CF.MEXISTS of their items and of
        `probes`, CF.COUNT of (up to `counts` of) their items; equal before
        and after a reload."""
        out = {}
        for k, state in self.keys.items():
            held = sorted(state.counts)
            pipe = self.r.pipeline(transaction=False)
            pipe.execute_command("CF.INFO", k)
            pipe.execute_command("CF.MEXISTS", k, *(held + list(probes)))
            for item in held[:counts]:
                pipe.execute_command("CF.COUNT", k, item)
            out[k] = pipe.execute(raise_on_error=False)
        return out


def parse_reproducers(path):
    """The blocks of a reproducer file: [(title, [(args, expected), ...])].
    A block is a run of lines without a blank one: comment lines (#) say
    what it reproduces, the others are commands, one per line, each
    optionally followed by `=> reply` (an integer, a list of integers, an
    error's text, or for CF.INFO `field: value`)."""
    blocks, title, commands = [], [], []

    def close():
        if commands:
            blocks.append((" ".join(title).strip(), list(commands)))
        del title[:], commands[:]

    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                close()
            elif line.startswith("#"):
                if commands:
                    close()
                title.append(line.lstrip("#").strip())
            else:
                command, _, expected = line.partition("=>")
                commands.append((shlex.split(command), expected.strip() or None))
    close()
    return blocks


def expectation_met(args, reply, expected):
    """Whether a reply is what a reproducer line's `=> expected` says."""
    if args[0].upper() == "CF.INFO":
        field, _, value = expected.rpartition(":")
        info = info_dict(reply)
        return info is not None and str(info.get(field.strip())) == value.strip()
    if isinstance(reply, Exception):
        return str(reply) == expected
    return Model.show(reply) == expected.replace(" ", "").replace(",", ", ")
