"""LMCache's redis:// backend traffic against the Tiffin Redis gateway, with Debian's redis-py (4.3.4).

What LMCache's RedisConnector does per 256-token chunk K (model@world_size@worker_id@chunk_hash@dtype):
put:      EXISTS K+"metadata" (skip if present), SET K+"kv_bytes" <raw>, SET K+"metadata" <28 bytes>
get:      GET K+"metadata", then GET K+"kv_bytes"; DEL K+"metadata" when the data key is missing
No pipelining: many chunks at once are asyncio.gather over single commands on a connection pool.

Usage: lmcache_redis.py PORT MODE CHUNKS CHUNK_BYTES [DEADLINE_S]   (MODE: async | sync | edge; deadline 300 s)
Prints one JSON object with what it saw; exits 1 with a message when a check fails, or when the run outlasts the
deadline (then the message names every command still waiting for its reply, oldest first, and every thread's
stack goes to stderr).
"""
import asyncio
import faulthandler
import json
import os
import struct
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import redis
import redis.asyncio as aioredis

PORT = int(sys.argv[1])
MODE = sys.argv[2]
CHUNKS = int(sys.argv[3])
CHUNK = int(sys.argv[4])
DEADLINE = float(sys.argv[5]) if len(sys.argv) > 5 else 300.0
STEP = 4096
# a backstop when the event loop itself is stuck: every thread's stack to stderr, then exit
faulthandler.dump_traceback_later(DEADLINE + 30, exit=True)
# commands sent and not answered yet: id -> (command, key, when sent)
INFLIGHT = {}

# One random buffer; chunk i is the window starting at i * STEP, so every chunk differs and the values
# together take little more memory than one chunk.
BASE = os.urandom(CHUNK + CHUNKS * STEP)


def kv(i):
    return memoryview(BASE)[i * STEP:i * STEP + CHUNK]


def meta(i):
    # LMCache's metadata: seven int32 (length, fmt, dtype, 4-dim shape) = 28 bytes
    return struct.pack("<7i", CHUNK, 1, 2, 32, 2, 256, 1024 + i)


def key(i):
    return "meta-llama/Llama-3.1-8B@1@0@%064x@bfloat16" % (0x5eed0000 + i)


def fail(message):
    print(json.dumps({"ok": False, "error": message}), flush=True)
    sys.stderr.flush()
    # not sys.exit: asyncio.run would first cancel the other commands' tasks and wait for them, and redis-py
    # 4.3.4's cancelled reads may never finish (seen: the process then hangs with nothing printed)
    os._exit(1)


async def call(name, coro, k):
    """Awaits one command, noting it as waiting meanwhile (for the deadline's report)."""
    token = object()
    INFLIGHT[id(token)] = (name, k, time.monotonic())
    try:
        return await coro
    finally:
        del INFLIGHT[id(token)]


async def within_deadline(coro):
    task = asyncio.ensure_future(coro)
    done, _ = await asyncio.wait({task}, timeout=DEADLINE)
    if task in done:
        if task.exception() is not None:
            traceback.print_exception(task.exception())
            fail("%s: %s" % (type(task.exception()).__name__, task.exception()))
        return task.result()
    now = time.monotonic()
    waiting = sorted(INFLIGHT.values(), key=lambda v: v[2])
    fail("no result within %.0f s; %d commands waiting for their replies, oldest first: %s" % (
        DEADLINE, len(waiting), ["%s %s for %.1f s" % (n, k, now - t) for n, k, t in waiting[:10]]))


async def run_async():
    pool = aioredis.ConnectionPool(host="127.0.0.1", port=PORT, max_connections=CHUNKS)
    r = aioredis.Redis(connection_pool=pool)
    peak = {"in_use": 0}

    def note():
        peak["in_use"] = max(peak["in_use"], len(pool._in_use_connections))

    async def put(i):
        k = key(i)
        if await call("EXISTS", r.exists(k + "metadata"), k + "metadata"):
            return "present"
        note()
        await call("SET", r.set(k + "kv_bytes", kv(i)), k + "kv_bytes")
        await call("SET", r.set(k + "metadata", meta(i)), k + "metadata")
        note()
        return "stored"

    async def get(i):
        k = key(i)
        if await call("EXISTS", r.exists(k + "metadata"), k + "metadata") != 1:
            return "no metadata"
        m = await call("GET", r.get(k + "metadata"), k + "metadata")
        note()
        data = await call("GET", r.get(k + "kv_bytes"), k + "kv_bytes")
        if data is None:
            await call("DEL", r.delete(k + "metadata"), k + "metadata")
            return "miss"
        if m != meta(i):
            return "metadata differs"
        if len(data) != CHUNK or data != kv(i):
            return "kv_bytes differ"
        return "ok"

    stored = await asyncio.gather(*(put(i) for i in range(CHUNKS)))
    if stored.count("stored") != CHUNKS:
        fail("puts: %s" % stored)
    again = await asyncio.gather(*(put(i) for i in range(CHUNKS)))
    if again.count("present") != CHUNKS:
        fail("second puts should find the metadata: %s" % again)
    got = await asyncio.gather(*(get(i) for i in range(CHUNKS)))
    if got.count("ok") != CHUNKS:
        fail("gets: %s" % got)
    connections = len(pool._available_connections) + len(pool._in_use_connections)
    await pool.disconnect()
    return {"ok": True, "chunks": CHUNKS, "connections": connections, "peak_in_use": peak["in_use"]}


def run_sync():
    pool = redis.ConnectionPool(host="127.0.0.1", port=PORT, max_connections=CHUNKS)
    r = redis.Redis(connection_pool=pool)
    barrier = threading.Barrier(CHUNKS)

    def one(i):
        k = key(i)
        barrier.wait()  # every thread holds its own connection at once
        if r.exists(k + "metadata"):
            return "present"
        r.set(k + "kv_bytes", kv(i))
        r.set(k + "metadata", meta(i))
        if r.exists(k + "metadata") != 1:
            return "no metadata"
        m = r.get(k + "metadata")
        data = r.get(k + "kv_bytes")
        if data is None:
            r.delete(k + "metadata")
            return "miss"
        if m != meta(i) or data != kv(i):
            return "bytes differ"
        return "ok"

    with ThreadPoolExecutor(max_workers=CHUNKS) as ex:
        results = list(ex.map(one, range(CHUNKS)))
    if results.count("ok") != CHUNKS:
        fail("sync chunks: %s" % results)
    connections = len(pool._available_connections) + len(pool._in_use_connections)
    pool.disconnect()
    return {"ok": True, "chunks": CHUNKS, "connections": connections}


def run_edge():
    r = redis.Redis(host="127.0.0.1", port=PORT)
    out = {}
    # misses: what LMCache sees for a chunk nobody stored
    out["miss_get"] = r.get(key(999999) + "kv_bytes")
    out["miss_exists"] = r.exists(key(999999) + "metadata")
    # half a pair: the data key gone (evicted or deleted), LMCache finds no data and drops the metadata
    r.set(key(1) + "kv_bytes", kv(1))
    r.set(key(1) + "metadata", meta(1))
    out["del_data"] = r.delete(key(1) + "kv_bytes")
    m = r.get(key(1) + "metadata")
    data = r.get(key(1) + "kv_bytes")
    if data is None:
        out["del_meta"] = r.delete(key(1) + "metadata")
    out["meta_was"] = m == meta(1)
    out["after_exists"] = r.exists(key(1) + "metadata", key(1) + "kv_bytes")
    # EXISTS on many keys at once, some present, one given twice
    keys = [key(2000 + i) + "metadata" for i in range(500)]
    for k in keys[::2]:
        r.set(k, b"m")
    out["exists_many"] = r.exists(*keys)
    out["exists_dup"] = r.exists(keys[0], keys[0], keys[1])
    out["mget"] = [v is not None for v in r.mget(keys[:4])]
    out["dbsize"] = r.dbsize()
    out["info_keys"] = r.info("keyspace").get("db0", {}).get("keys")
    out["scan"] = sorted(x.decode() for x in r.scan_iter(match=key(2000)[:30] + "*", count=50))[:2]
    out["scan_count"] = len(list(r.scan_iter(match=key(2000)[:30] + "*", count=50)))
    out["ok"] = True
    out["miss_get"] = out["miss_get"] is None
    return out


if MODE == "async":
    result = asyncio.run(within_deadline(run_async()))
elif MODE == "sync":
    result = run_sync()
else:
    result = run_edge()
print(json.dumps(result))
