"""Reads on other connections never go back in time, with redis-py (Debian's python3-redis).

One connection rewrites random keys as fast as it can (SET; DEL then SET; SET of a value of another size), each new
value one generation later than the last and of a size of its own, while reader threads on connections of their own
GET and MGET them. Every value carries its key and generation and bytes only they give, so a reader can tell
- a stale value: older than the last write of the key whose reply had arrived before the read was sent;
- a mixed value: bytes of two values, or of another key, or the length of another value;
- a wrong nil, or a wrong generation, while no write of the key was under way at any moment of the read.

Prints one JSON line of what it saw; exits 1 at any such read, or on an error reply.

Usage: read_your_writes.py PORT [SECONDS]"""
import json
import random
import struct
import sys
import threading
import time

import redis

KEYS = 12
READERS = 3
HEAD = struct.Struct(">QI")


def size_of(k, gen):
    """Sizes of 4 KiB to about 200 KiB that change from one generation to the next."""
    return 4096 + ((gen * 7919 + k * 104729) % 50) * 4096 + gen % 13


def value(k, gen):
    body = random.Random(gen * 1000 + k).randbytes(size_of(k, gen) - HEAD.size)
    return HEAD.pack(gen, k) + body


def key(k):
    return f"ryw-{k}"


class Race:
    def __init__(self):
        # per key: the last generation whose write's reply had arrived, and a count that is odd while a write runs
        self.completed = [1] * KEYS
        self.writes = [0] * KEYS
        self.violations = []
        self.reads = 0
        self.nils = 0
        self.rewrites = 0
        self.stop = False

    def writer(self, r, seconds):
        gen = 1
        end = time.monotonic() + seconds
        rnd = random.Random(42)
        while time.monotonic() < end:
            k = rnd.randrange(KEYS)
            gen += 1
            self.writes[k] += 1
            op = rnd.randrange(2)
            if op == 1:
                r.delete(key(k))
            assert r.set(key(k), value(k, gen)), "SET did not answer OK"
            self.completed[k] = gen
            self.writes[k] += 1
            self.rewrites += 1
        self.stop = True

    def reader(self, r, seed):
        rnd = random.Random(seed)
        while not self.stop:
            k = rnd.randrange(KEYS)
            j = (k + 1 + rnd.randrange(KEYS - 1)) % KEYS
            ks = [k, j]
            # the write counts first: when they show no write under way, the generations read next are current
            writes_before = [self.writes[x] for x in ks]
            before = [self.completed[x] for x in ks]
            if rnd.randrange(2) == 0:
                answers = [r.get(key(k))]
            else:
                answers = r.mget([key(k), key(j)])
            for i, v in enumerate(answers):
                quiet = writes_before[i] % 2 == 0 and self.writes[ks[i]] == writes_before[i]
                self.check(ks[i], before[i], quiet, v)

    def check(self, k, before, quiet, v):
        self.reads += 1
        if v is None:
            self.nils += 1
            if quiet:
                self.violations.append(f"{key(k)}: nil with no write under way (generation {before} stands)")
            return
        if len(v) < HEAD.size:
            self.violations.append(f"{key(k)}: {len(v)} bytes")
            return
        gen, owner = HEAD.unpack_from(v)
        if owner != k or gen > 10_000_000 or v != value(k, gen):
            self.violations.append(f"{key(k)}: mixed or foreign bytes ({len(v)} bytes, header: key {owner}, "
                                   f"generation {gen})")
        elif gen < before:
            self.violations.append(f"{key(k)}: stale generation {gen} after {before} had been written")
        elif quiet and gen != before:
            self.violations.append(f"{key(k)}: generation {gen} while {before} was the last written and no write "
                                   "was under way")


def main():
    port = int(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 4
    race = Race()
    setup = redis.Redis(port=port)
    for k in range(KEYS):
        assert setup.set(key(k), value(k, 1))
    failures = []

    def run(target, *args):
        try:
            target(redis.Redis(port=port), *args)
        except Exception as e:  # noqa: BLE001 - reported as the run's failure
            failures.append(repr(e))
            race.stop = True

    threads = [threading.Thread(target=run, args=(race.reader, seed)) for seed in range(READERS)]
    for t in threads:
        t.start()
    run(race.writer, seconds)
    for t in threads:
        t.join()
    ok = not failures and not race.violations and race.rewrites > KEYS and race.reads > 100
    print(json.dumps({"ok": ok, "rewrites": race.rewrites, "reads": race.reads, "nils": race.nils,
                      "failures": failures[:5], "violations": race.violations[:10],
                      "violation_count": len(race.violations)}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
