"""SETs racing GETs and SET ... GET racing SET ... GET through the gateway, with redis-py (Debian's python3-redis).

1. One connection SETs 256 KiB values of one key in a loop while three others GET it: every GET answers a whole
   value (never nil, never bytes of two values).
2. Two connections SET one key in a loop at once: every SET answers OK (the later one waits for the earlier),
   and the key ends with one of the last values.
3. Four connections SET ... GET one key, each with values of its own: every value written is answered as the old
   value by exactly one SET ... GET, or is the final value (a chain: no value replaced twice, none lost).

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


def sets_racing_gets(port, seen):
    size = 256 * 1024
    w = redis.Redis(port=port)
    assert w.set("raced", value("w", 0, size)) is True
    stop = threading.Event()
    errors, reads = [], [0]

    def reader():
        r = redis.Redis(port=port)
        try:
            while not stop.is_set():
                check(r.get("raced"), size)
                reads[0] += 1
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
            assert w.set("raced", value("w", writes, size)) is True
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]
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


def main():
    port = int(sys.argv[1])
    seen = {}
    sets_racing_gets(port, seen)
    sets_racing_sets(port, seen)
    set_get_chain(port, seen)
    seen["ok"] = True
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
