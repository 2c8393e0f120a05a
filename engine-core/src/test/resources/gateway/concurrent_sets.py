"""SETs racing GETs and SET ... GET racing SET ... GET through the gateway, with redis-py (Debian's python3-redis).

1. One connection SETs 256 KiB values of one key in a loop while three others GET it: every GET answers a whole
   value (never nil, never bytes of two values).
2. Two connections SET one key in a loop at once: every SET answers OK (the later one waits for the earlier),
   and the key ends with one of the last values.
3. Four connections SET ... GET one key, each with values of its own: every value written is answered as the old
   value by exactly one SET ... GET, or is the final value (a chain: no value replaced twice, none lost).
4. One connection SETs one key to values of 256 KiB and 64 KiB in turn while three others GETRANGE it: every
   reply holds the bytes of one value at the offset asked (a range of the new value may be clipped by the old
   one's length, or be empty where the new value ends before the range starts), never an error or two values'
   bytes.

Prints one JSON line of what it saw; exits non-zero at the first difference from Redis.

Usage: concurrent_sets.py PORT"""
import json
import sys
import threading
import time

import redis

HEADER = 32


def value(tag, i, size):
    """A value whose body byte follows from its header, so a mix of two values is seen."""
    head = f"{tag}:{i:08d}:".encode().ljust(HEADER, b".")
    return head + bytes([1 + (hash((tag, i)) % 250)]) * (size - HEADER)


def check(v, size):
    assert v is not None, "nil while the key holds a value"
    assert len(v) == size, f"{len(v)} bytes, not {size}"
    tag, i = v[:HEADER].rstrip(b".").decode().split(":")[:2]
    assert v == value(tag, int(i), size), f"the bytes of {tag}:{i} are mixed with another value's"


def race(port, read_once, write_once):
    """Three connections call ``read_once(connection)`` in a loop while ``write_once(n)`` is called for n = 1, 2, ...
    (3 s, at most 400 writes). Returns the writes; a reader's first error stops the race and is raised."""
    stop = threading.Event()
    errors = []

    def reader():
        r = redis.Redis(port=port)
        try:
            while not stop.is_set():
                read_once(r)
        except BaseException as e:  # reported by the main thread
            errors.append(repr(e))
            stop.set()

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    writes = 0
    deadline = time.monotonic() + 3
    try:
        while time.monotonic() < deadline and not stop.is_set() and writes < 400:
            writes += 1
            write_once(writes)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]
    return writes


def sets_racing_gets(port, seen):
    size = 256 * 1024
    w = redis.Redis(port=port)
    assert w.set("raced", value("w", 0, size)) is True
    reads = [0]

    def read_once(r):
        check(r.get("raced"), size)
        reads[0] += 1

    def write_once(n):
        assert w.set("raced", value("w", n, size)) is True

    writes = race(port, read_once, write_once)
    assert writes > 10 and reads[0] > 10, (writes, reads[0])
    seen["raced_sets"], seen["raced_gets"] = writes, reads[0]


def sets_racing_sets(port, seen):
    size = 64 * 1024
    errors, last = [], {}

    def writer(tag):
        c = redis.Redis(port=port)
        try:
            for i in range(40):
                assert c.set("both", value(tag, i, size)) is True
            last[tag] = value(tag, 39, size)
        except BaseException as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=writer, args=(t,)) for t in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    final = redis.Redis(port=port).get("both")
    check(final, size)
    assert final in last.values(), "the key ended with neither writer's last value"
    seen["racing_sets"] = 80


def set_get_chain(port, seen):
    size = 4096
    redis.Redis(port=port).set("chain", value("init", 0, size))
    results, errors = {}, []

    def writer(tag):
        c = redis.Redis(port=port)
        olds = []
        try:
            for i in range(25):
                try:
                    olds.append((i, c.set("chain", value(tag, i, size), get=True)))
                except redis.ResponseError as e:
                    assert "CONFLICT" in str(e), e  # nothing stored: the value takes no part in the chain
                    olds.append((i, "conflict"))
        except BaseException as e:
            errors.append(repr(e))
        results[tag] = olds

    threads = [threading.Thread(target=writer, args=(f"t{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    written = {value("init", 0, size)}
    answered = []
    conflicts = 0
    for tag, olds in results.items():
        for i, old in olds:
            if old == "conflict":
                conflicts += 1
                continue
            written.add(value(tag, i, size))
            check(old, size)
            answered.append(old)
    final = redis.Redis(port=port).get("chain")
    check(final, size)
    chain = answered + [final]
    assert len(chain) == len(set(chain)), "a value was answered as the old value twice (replaced twice)"
    assert set(chain) == written, "a value written was lost (never answered, not the final value)"
    seen["set_get_calls"], seen["set_get_conflicts"] = len(answered) + conflicts, conflicts


def getranges_racing_sets(port, seen):
    long_size, short_size = 256 * 1024, 64 * 1024
    w = redis.Redis(port=port)
    assert w.set("ranged", value("w", 0, long_size)) is True
    bodies = {value("w", 0, long_size)[-1]}
    counts = {"ranges": 0, "empty": 0}
    lock = threading.Lock()

    def same_value(r, start, end):
        """r answers GETRANGE start end of one of the values written: one body byte throughout."""
        assert len(r) <= end - start + 1, f"{len(r)} bytes for a range of {end - start + 1}"
        assert len(set(r)) <= 1, f"GETRANGE {start} {end} holds the bytes of two values"
        if r:
            with lock:
                assert r[0] in bodies, f"GETRANGE {start} {end} holds bytes no value had"

    def read_once(r):
        head = r.getrange("ranged", 0, HEADER + 7)  # a header and the first body bytes of one value
        assert len(head) == HEADER + 8, f"{len(head)} bytes of a value's first {HEADER + 8}"
        tag, i = head[:HEADER].rstrip(b".").decode().split(":")[:2]
        size = long_size if int(i) % 2 == 0 else short_size
        assert head == value(tag, int(i), size)[:HEADER + 8], f"the start of {tag}:{i} is mixed"
        inside = r.getrange("ranged", 1000, 5000)
        assert len(inside) == 4001, f"{len(inside)} bytes of a range inside every value"
        same_value(inside, 1000, 5000)
        same_value(r.getrange("ranged", 60000, 70000), 60000, 70000)  # past the short values' end
        beyond = r.getrange("ranged", 100000, 110000)  # only in the long values
        same_value(beyond, 100000, 110000)
        with lock:
            counts["ranges"] += 4
            counts["empty"] += beyond == b""

    def write_once(n):
        v = value("w", n, long_size if n % 2 == 0 else short_size)
        with lock:
            bodies.add(v[-1])
        assert w.set("ranged", v) is True

    writes = race(port, read_once, write_once)
    assert writes > 10 and counts["ranges"] > 40, (writes, counts)
    assert counts["empty"] > 0, "no GETRANGE found a short value past its end"
    seen["ranged_sets"], seen["getranges"] = writes, counts["ranges"]


def main():
    port = int(sys.argv[1])
    seen = {}
    sets_racing_gets(port, seen)
    sets_racing_sets(port, seen)
    set_get_chain(port, seen)
    getranges_racing_sets(port, seen)
    seen["ok"] = True
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
