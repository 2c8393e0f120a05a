"""A soak of a Redis-protocol server: LMCache's redis:// command sequence under churn, every byte read back checked.

Connections (redis.asyncio, Debian's python3-redis) pick random chunk keys of a key space larger than the store and
write pairs (SET K+"kv_bytes" <value>, SET K+"metadata" <28 bytes>), read them as LMCache does (EXISTS metadata, GET
metadata, GET kv_bytes, DEL metadata when the data is missing), delete pairs and give values a few seconds to live:
eviction, replacement, removal and expiry all run under the reads. Each value checks itself (8 bytes of generation,
4 of CRC32 over the rest, then bytes drawn from key and generation): one that fails is corruption. A reader must get
a whole value or a miss, never a mix.

Usage: /usr/bin/python3 soak.py --port 6379 --duration 600 [--pid PID] [--keys N] [--connections N]
Prints a line every --report seconds (the server's used_memory, the resident memory of --pid, counts) and a final
JSON object; exits 1 on any corrupt value, or on any error reply or dropped connection.
"""
import argparse
import asyncio
import json
import os
import random
import struct
import sys
import time
import zlib

import numpy as np
import redis.asyncio as aioredis


def make_value(key, gen, size):
    rng = np.random.default_rng(zlib.crc32(key.encode()) ^ (gen * 2654435761 & 0xFFFFFFFF))
    body = rng.integers(0, 256, size - 12, dtype=np.uint8).tobytes()
    return struct.pack("<QI", gen, zlib.crc32(body)) + body


def check_value(v):
    if len(v) < 12:
        return False
    gen, crc = struct.unpack_from("<QI", v)
    return zlib.crc32(memoryview(v)[12:]) == crc


class Stats:
    def __init__(self):
        self.c = {}
        self.first = {}

    def add(self, name, n=1):
        self.c[name] = self.c.get(name, 0) + n


async def worker(r, keys, sizes, stats, deadline, gens):
    while time.monotonic() < deadline:
        k = random.choice(keys)
        op = random.random()
        try:
            if op < 0.40:
                gens[k] = gens.get(k, 0) + 1
                gen = gens[k]
                size = random.choice(sizes)
                await r.set(k + "kv_bytes", make_value(k, gen, size))
                await r.set(k + "metadata", struct.pack("<QQIII", gen, size, 0, 0, 0))
                stats.add("pairs_written")
            elif op < 0.90:
                if not await r.exists(k + "metadata"):
                    stats.add("misses")
                    continue
                meta = await r.get(k + "metadata")
                data = await r.get(k + "kv_bytes")
                if meta is None or data is None:
                    stats.add("half_misses")
                    if data is None:
                        await r.delete(k + "metadata")  # as LMCache does when the data key is missing
                    continue
                if not check_value(data):
                    stats.add("CORRUPT")
                    print(f"corrupt value of {k}: {len(data)} bytes", file=sys.stderr)
                else:
                    stats.add("reads_ok")
                    stats.add("bytes_read", len(data))
            elif op < 0.95:
                await r.delete(k + "kv_bytes", k + "metadata")
                stats.add("deletes")
            else:
                await r.expire(k + "kv_bytes", random.randint(1, 5))
                stats.add("expires")
        except Exception as e:  # a Redis error reply or a dropped connection
            kind = "error: " + type(e).__name__ + ": " + str(e)[:80]
            stats.add(kind)
            stats.first.setdefault(kind, str(e))  # the whole message, once per kind


def rss_of(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return -1
    return -1


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=6379)
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--keys", type=int, default=2000)
    p.add_argument("--duration", type=float, default=600)
    p.add_argument("--report", type=float, default=30)
    p.add_argument("--pid", type=int, default=0)
    p.add_argument("--max-size", type=int, default=4 << 20)
    a = p.parse_args()
    random.seed(1)
    keys = [f"model@1@0@{i:016x}@bfloat16" for i in range(a.keys)]
    sizes = [s for s in (1000, 33 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20) if s <= a.max_size]
    pool = aioredis.ConnectionPool(host=a.host, port=a.port, max_connections=a.connections + 4)
    r = aioredis.Redis(connection_pool=pool)
    stats = Stats()
    gens = {}
    start = time.monotonic()
    deadline = start + a.duration
    tasks = [asyncio.create_task(worker(r, keys, sizes, stats, deadline, gens)) for _ in range(a.connections)]
    while time.monotonic() < deadline:
        await asyncio.sleep(min(a.report, max(0.1, deadline - time.monotonic())))
        info = await r.info("memory")
        print(f"{time.monotonic() - start:6.0f} s  used_memory {info.get('used_memory', -1) / 2**20:7.0f} MiB"
              f"  rss {rss_of(a.pid) / 2**20 if a.pid else -1:7.0f} MiB  "
              + "  ".join(f"{k}={v}" for k, v in sorted(stats.c.items()) if k != "bytes_read"), flush=True)
    await asyncio.gather(*tasks)
    await r.close()
    errors = {k: v for k, v in stats.c.items() if k.startswith("error")}
    print(json.dumps({"counts": stats.c, "errors": errors, "messages": stats.first,
                      "ok": not errors and not stats.c.get("CORRUPT")}))
    return 0 if not errors and not stats.c.get("CORRUPT") else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
