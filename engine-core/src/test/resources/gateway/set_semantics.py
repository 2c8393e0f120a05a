"""Redis semantics through the gateway with redis-py (Debian's python3-redis): SET and DEL right after a GET of the
same key, NX/XX, expiry seen by another connection, TTL/PTTL, KEEPTTL, PERSIST and empty values. Prints one JSON
line of what it saw; exits non-zero at the first difference from Redis.

Usage: set_semantics.py PORT"""
import json
import sys
import time

import redis


def main():
    port = int(sys.argv[1])
    a = redis.Redis(port=port)
    b = redis.Redis(port=port)  # another connection
    seen = {}

    value1, value2 = b"x" * 100_000, b"y" * 200_000
    assert a.set("k", value1) is True
    assert a.get("k") == value1
    t0 = time.monotonic()
    assert a.set("k", value2) is True  # right after the GET: replaced at once
    seen["set_after_get_ms"] = round((time.monotonic() - t0) * 1000)
    assert a.get("k") == value2 and b.get("k") == value2
    assert b.get("k") == value2
    t0 = time.monotonic()
    assert a.delete("k") == 1  # right after the GETs
    seen["del_after_get_ms"] = round((time.monotonic() - t0) * 1000)
    assert a.get("k") is None and b.get("k") is None and a.exists("k") == 0
    for i in range(20):  # SET, GET, SET, GET of one key in a row, as a cache does
        v = str(i).encode() * (i + 1)
        assert a.set("loop", v) is True
        assert b.get("loop") == v, i

    assert a.set("nx", b"1", nx=True) is True
    assert a.set("nx", b"2", nx=True) is None
    assert b.get("nx") == b"1"
    assert a.set("xx", b"1", xx=True) is None
    assert a.exists("xx") == 0
    assert a.set("nx", b"3", xx=True) is True
    assert b.get("nx") == b"3"

    assert a.set("ex", b"v", ex=1) is True
    assert b.get("ex") == b"v"
    ttl = b.pttl("ex")
    assert 0 < ttl <= 1000, ttl
    seen["pttl"] = ttl
    deadline = time.monotonic() + 5
    while b.get("ex") is not None:  # gone for the other connection once its second has passed
        assert time.monotonic() < deadline, "EX 1 did not expire within 5 s"
        time.sleep(0.05)  # polls; the assertion is the deadline above
    seen["expired_after_s"] = round(time.monotonic() - deadline + 5, 2)
    assert seen["expired_after_s"] >= 0.9, seen
    assert b.exists("ex") == 0 and b.ttl("ex") == -2

    # an EXPIRE after a GET: the gateway's cached location (reused for up to 2 s) must not outlive the deadline
    assert a.set("c", b"v") is True and a.get("c") == b"v"
    assert a.pexpire("c", 1) is True
    deadline = time.monotonic() + 0.5
    while a.get("c") is not None:
        assert time.monotonic() < deadline, "a value given 1 ms was still served after 500 ms"
        time.sleep(0.01)  # polls; the assertion is the deadline above

    assert a.set("t", b"v", px=100_000) is True
    assert a.ttl("t") == 100
    assert a.set("t", b"w", keepttl=True) is True and a.ttl("t") == 100
    assert a.persist("t") is True and a.ttl("t") == -1 and a.persist("t") is False
    assert a.expire("t", 50) is True and a.ttl("t") == 50
    assert a.set("t", b"z") is True and a.ttl("t") == -1  # a SET without KEEPTTL drops the deadline
    assert a.expire("missing", 10) is False and a.ttl("missing") == -2
    assert a.pexpire("t", 0) is True and a.get("t") is None  # a time in the past removes the key

    # INFO keyspace counts the keys with a deadline; KEYS, SCAN and DBSIZE leave out keys past theirs
    def expires():
        return b.info("keyspace").get("db0", {}).get("expires", 0)

    e0 = expires()
    assert a.set("cnt:1", b"v", ex=100) is True and a.set("cnt:2", b"v") is True
    assert expires() == e0 + 1
    assert a.expire("cnt:2", 100) is True and expires() == e0 + 2
    assert a.persist("cnt:1") is True and expires() == e0 + 1
    assert a.expire("cnt:1", 100, xx=True) is False and a.expire("cnt:1", 100, gt=True) is False
    assert a.expire("cnt:1", 100, lt=True) is True and a.expire("cnt:1", 200, lt=True) is False
    assert a.expire("cnt:1", 50, xx=True, lt=True) is True and a.ttl("cnt:1") == 50
    assert a.set("cnt:3", b"v", px=150) is True
    n = b.dbsize()
    time.sleep(0.2)  # lets cnt:3's deadline pass (nothing reads it: the master's sweep may or may not have run)
    assert sorted(b.keys("cnt:*")) == [b"cnt:1", b"cnt:2"], b.keys("cnt:*")
    assert sorted(b.scan(0, match="cnt:*", count=100)[1]) == [b"cnt:1", b"cnt:2"]
    assert b.dbsize() == n - 1, (b.dbsize(), n)
    seen["expires"] = expires()

    assert a.set("empty", b"") is True
    assert b.get("empty") == b"" and b.strlen("empty") == 0 and b.exists("empty") == 1
    assert b.getrange("empty", 0, -1) == b""
    assert a.mset({"e1": b"", "e2": b"ab"}) is True and b.mget("e1", "e2") == [b"", b"ab"]
    seen["ok"] = True
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
