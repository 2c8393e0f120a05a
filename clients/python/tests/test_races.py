"""Reads of the Python client never go back in time while another client rewrites the keys.

One client rewrites keys as fast as it can (forced replacement, remove then put, upsert, a batch put of two keys),
while threads of other clients (one with the same-host shared-memory path, one over sockets with its location
cache) read them through get, get_into, batch_get and batch_get_into. Every value carries its key and generation and
bytes only they give, so a read can tell a stale value (older than the last write that had returned before the read
started), a mixed one (bytes of two values, or of another key), and a wrong miss or generation while no write of the
key overlapped the read at all (the rules of the Java engine's ``ConcurrentRewrites``).
"""

from __future__ import annotations

import random
import struct
import threading
import time

import tiffin
from tiffin import TiffinError

KEYS = 10
SIZE = 150_007
HEAD = struct.Struct(">QI")
#: what a read racing a write (or outliving its lease on a loaded machine) may answer instead of a value
TRANSIENT = {"OBJECT_NOT_FOUND", "LEASE_EXPIRED", "REPLICA_IS_GONE", "REPLICA_IS_NOT_READY"}


def value(k: int, gen: int) -> bytes:
    return HEAD.pack(gen, k) + random.Random(gen * 1000 + k).randbytes(SIZE - HEAD.size)


class Race:
    def __init__(self, prefix: str):
        self.prefix = prefix
        # per key: the last generation whose write had returned, and a count that is odd while a write runs
        self.completed = [1] * KEYS
        self.writes = [0] * KEYS
        self.violations: list = []
        self.reads = 0
        self.transient = 0
        self.rewrites = 0
        self.stop = False

    def key(self, k: int) -> str:
        return f"{self.prefix}{k}"

    def writer(self, c, seconds: float):
        gen = 1
        rnd = random.Random(42)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            k = rnd.randrange(KEYS)
            other = (k + 1 + rnd.randrange(KEYS - 1)) % KEYS
            op = rnd.randrange(4)
            written = [k, other] if op == 3 else [k]
            gens = []
            for w in written:
                gen += 1
                gens.append(gen)
                self.writes[w] += 1
            try:
                if op == 0:
                    c.put(self.key(k), value(k, gens[0]), upsert=True, replace_leased=True)
                elif op == 1:
                    try:
                        c.remove(self.key(k), force=True)
                    except TiffinError as e:
                        if e.code != "OBJECT_NOT_FOUND":
                            raise
                    c.put(self.key(k), value(k, gens[0]))
                elif op == 2:
                    try:
                        c.put(self.key(k), value(k, gens[0]), upsert=True)
                    except TiffinError as e:
                        if e.code != "OBJECT_HAS_LEASE":
                            raise
                        c.put(self.key(k), value(k, gens[0]), upsert=True, replace_leased=True)
                else:
                    results = c.batch_put([self.key(w) for w in written], [value(w, g) for w, g in zip(written, gens)],
                                          upsert=True, replace_leased=True)
                    bad = [r for r in results if not r.ok]
                    assert not bad, f"batch put answered {bad}"
                for w, g in zip(written, gens):
                    self.completed[w] = g
                self.rewrites += len(written)
            finally:
                for w in written:
                    self.writes[w] += 1

    def reader(self, c, seed: int):
        rnd = random.Random(seed)
        buffers = [bytearray(SIZE), bytearray(SIZE)]
        while not self.stop:
            k = rnd.randrange(KEYS)
            j = (k + 1 + rnd.randrange(KEYS - 1)) % KEYS
            ks = [k, j]
            # the write counts first: when they show no write under way, the generations read next are current
            writes_before = [self.writes[x] for x in ks]
            before = [self.completed[x] for x in ks]
            api = rnd.randrange(4)
            answers = []
            try:
                if api == 0:
                    answers.append(("OK", c.get(self.key(k))))
                elif api == 1:
                    n = c.get_into(self.key(k), buffers[0])
                    answers.append(("OK", bytes(buffers[0][:n])))
                elif api == 2:
                    answers += [(r.code, r.value) for r in c.batch_get([self.key(k), self.key(j)])]
                else:
                    for i, r in enumerate(c.batch_get_into([self.key(k), self.key(j)], buffers)):
                        answers.append((r.code, bytes(buffers[i][:r.value]) if r.ok else None))
            except TiffinError as e:
                answers.append((e.code, None))
            for i, (code, v) in enumerate(answers):
                quiet = writes_before[i] % 2 == 0 and self.writes[ks[i]] == writes_before[i]
                self.check(ks[i], before[i], quiet, code, v, api)

    def check(self, k, before, quiet, code, v, api):
        self.reads += 1
        what = f"{self.key(k)} (read API {api}): "
        if code != "OK":
            self.transient += 1
            if code not in TRANSIENT or (quiet and code == "OBJECT_NOT_FOUND"):
                self.violations.append(what + code + (" with no write under way" if quiet else ""))
            return
        if len(v) != SIZE:
            self.violations.append(what + f"{len(v)} bytes")
            return
        gen, owner = HEAD.unpack_from(v)
        if owner != k or gen > 10_000_000 or v != value(k, gen):
            self.violations.append(what + f"mixed or foreign bytes (header: key {owner}, generation {gen})")
        elif gen < before:
            self.violations.append(what + f"stale generation {gen} after {before} had returned")
        elif quiet and gen != before:
            self.violations.append(what + f"generation {gen} while {before} was the last written and no write was"
                                          " under way")


def test_reads_never_return_an_older_generation_than_the_last_returned_write_or_mixed_bytes(cluster, prefix):
    race = Race(prefix)
    # the readers reuse lookups for 50 ms: a forced write returns once other clients' reuse of the old location has
    # ended, so the default 2 s would leave the writer a few writes in the run
    with tiffin.Client.connect(cluster.master, shared_memory=False) as writer, \
            tiffin.Client.connect(cluster.master, location_cache_ttl=0.05) as same_host, \
            tiffin.Client.connect(cluster.master, shared_memory=False, location_cache_ttl=0.05) as remote:
        for k in range(KEYS):
            writer.put(race.key(k), value(k, 1))
        failures = []

        def run(target, *args):
            try:
                target(*args)
            except Exception as e:  # noqa: BLE001 - reported as the run's failure
                failures.append(repr(e))
                race.stop = True

        threads = [threading.Thread(target=run, args=(race.reader, c, seed))
                   for seed, c in enumerate([same_host, same_host, remote])]
        for t in threads:
            t.start()
        try:
            run(race.writer, writer, 4)
        finally:
            race.stop = True
            for t in threads:
                t.join()
        writer.batch_remove([race.key(k) for k in range(KEYS)], force=True)
    assert not failures
    assert not race.violations, race.violations[:10]
    assert race.rewrites > KEYS
    assert race.reads > 100
    assert race.transient < race.reads // 2
