"""``python3 -m tiffin.bench``: put, get and get_into through the Tiffin Python client, over TCP
(client ``tiffin``) and, where a node on this host keeps its segment in shared memory, through the
mapping (client ``tiffin-shm``), and in the same run SET and GET through redis-py against a
redis-server (client ``redis-py``). ``--clients tiffin,tiffin-verify`` adds a TCP client that verifies what it
reads (``verify_checksums=True``): its reads against ``tiffin``'s are the cost of the check.

::

    python3 -m tiffin.bench --master 127.0.0.1:50051 [--redis 127.0.0.1:6379 | --redis auto] \\
        --value-size 4KiB,1MiB,32MiB --duration 5 [--threads 1,4] [--location-cache-ttl 2] [--csv results.csv]

CSV columns: ``client,operation,value_size,threads,ops_per_sec,gb_per_sec,p50_us,p99_us`` (GB = 1e9
bytes). ``--redis auto`` starts ``redis-server --port <free> --save '' --appendonly no`` for the run
and stops it. Every put writes a new key (a put of an existing key is a no-op in Tiffin); the keys of
each put phase are removed after it. Reads cycle over ``--keys`` objects put beforehand: for
``tiffin`` on a node that is not mapped here (or with shared memory off in the client), for
``tiffin-shm`` on a mapped segment (hard-pinned, so the put phases' eviction leaves them). The puts of
all clients are measured together, in alternating turns of 0.25 s (the order rotating), and so are all
reads (get, get_into, redis-py's GET and a numpy copy of the same bytes): on a shared machine whose load
changes by the minute, the figures compared come from the same minutes. Each client and operation gets
``--duration`` seconds of measurement. The summary compares get_into with redis-py's GET and the
shared-memory get_into with the numpy copy. The Tiffin clients run with their default location cache
(``--location-cache-ttl 2``): a read reuses a lookup of its key made less than 2 s before, so most reads
are one node round trip; ``--location-cache-ttl 0`` measures a master lookup with every read.

Thread-safety: a command-line tool; each worker thread has its own buffers and shares the clients.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid

from .client import Client
from .errors import TiffinError

COLUMNS = ["client", "operation", "value_size", "threads", "ops_per_sec", "gb_per_sec", "p50_us", "p99_us"]


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(i?B?)\s*", text, re.I)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 4KiB, 1MiB or 32MiB")
    return int(m.group(1)) << (10 * " KMG".index((m.group(2) or " ").upper()))


def size_name(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return f"{n}B"


def percentile(sorted_values, q: float) -> float:
    if not sorted_values:
        return 0.0
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


#: failures a measured operation may meet and go on (a machine stalled past a read lease or an RPC
#: timeout), each reported; any other failure, or more than MAX_FAILURES of them, ends the run
TRANSIENT = ("LEASE_EXPIRED", "RPC_TIMEOUT")
MAX_FAILURES = 5


def run_slice(op, threads: int, duration: float, first: list, failures: list) -> tuple:
    """Runs ``op(thread, i)`` in ``threads`` threads for ``duration`` seconds, thread t counting i up
    from ``first[t]`` (updated). Transient failures are appended to ``failures`` (not timed); any other
    failure, or more than MAX_FAILURES, is raised. Returns (latencies in ns, elapsed seconds)."""
    lat: list = [[] for _ in range(threads)]
    errors: list = []
    stop = 0.0
    barrier = threading.Barrier(threads + 1)

    def worker(t):
        mine = lat[t]
        barrier.wait()
        i = first[t]
        pc = time.perf_counter_ns
        try:
            while True:
                s = pc()
                try:
                    op(t, i)
                except TiffinError as ex:
                    if ex.code not in TRANSIENT or len(failures) >= MAX_FAILURES:
                        raise
                    failures.append(ex)
                    e = pc()
                else:
                    e = pc()
                    mine.append(e - s)
                i += 1
                if e * 1e-9 >= stop:
                    break
        except Exception as ex:  # noqa: BLE001 - reported below
            errors.append(ex)
        first[t] = i

    ts = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(threads)]
    for t in ts:
        t.start()
    start = time.perf_counter()
    stop = start + duration
    barrier.wait()
    for t in ts:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    return [x for part in lat for x in part], elapsed


def run_interleaved(ops: dict, threads: int, duration: float, size: int, slice_s: float = 0.25) -> dict:
    """Measures every ``ops[name]`` for ``duration`` seconds in total, in turns of ``slice_s`` (the
    order rotating every round), so all of them see the same load over the same minutes: on a shared
    machine, separate phases would compare different moments. Per name: ops/s, GB/s, p50/p99 µs of the
    operations that succeeded, and ``failures``, the transient failures met (see TRANSIENT)."""
    names = list(ops)
    lat = {n: [] for n in names}
    busy = {n: 0.0 for n in names}
    first = {n: [0] * threads for n in names}
    failures = {n: [] for n in names}
    rounds = max(1, int(round(duration / slice_s)))
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            got, elapsed = run_slice(ops[name], threads, min(slice_s, duration), first[name], failures[name])
            lat[name].extend(got)
            busy[name] += elapsed
    out = {}
    for name in names:
        all_lat = sorted(lat[name])
        n = len(all_lat)
        out[name] = {"ops_per_sec": n / busy[name], "gb_per_sec": n * size / busy[name] / 1e9,
                     "p50_us": percentile(all_lat, 0.50) / 1e3, "p99_us": percentile(all_lat, 0.99) / 1e3,
                     "failures": failures[name]}
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A redis-server on a free port for the duration of the run (``--redis auto``)."""

    def __init__(self):
        exe = shutil.which("redis-server")
        if exe is None:
            raise SystemExit("bench: --redis auto needs redis-server on the PATH (Debian: apt-get install redis-server)")
        self.port = free_port()
        self.dir = f"/tmp/tiffin-bench-redis-{os.getpid()}"
        os.makedirs(self.dir, exist_ok=True)
        self.proc = subprocess.Popen([exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", self.dir, "--daemonize", "no"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise SystemExit("bench: redis-server did not start")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def _numpy_pair(size: int):
    """(source, destination) numpy arrays of ``size`` bytes for the copy reference, or memoryviews of
    bytearrays without numpy."""
    try:
        import numpy as np
        src, dst = np.ones(size, np.uint8), np.empty(size, np.uint8)
        np.copyto(dst, src)
        return src, dst
    except ImportError:
        return memoryview(bytearray(b"\x01" * size)), memoryview(bytearray(size))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m tiffin.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--master", required=True, help="the Tiffin master, host:port")
    p.add_argument("--redis", help="a redis-server to compare with, host:port, or 'auto' to start one")
    p.add_argument("--value-size", default="4KiB,1MiB,32MiB", help="comma-separated sizes (default %(default)s)")
    p.add_argument("--duration", type=float, default=5.0,
                   help="seconds of measurement per client, operation, size and thread count (default %(default)s)")
    p.add_argument("--threads", default="1", help="comma-separated thread counts (default %(default)s)")
    p.add_argument("--keys", type=int, default=8, help="objects the reads cycle over (default %(default)s)")
    p.add_argument("--operations", default="put,get,get_into", help="subset of put,get,get_into")
    p.add_argument("--clients", default="tiffin,tiffin-shm,redis-py",
                   help="subset of tiffin,tiffin-shm,redis-py,tiffin-verify (default %(default)s)")
    p.add_argument("--location-cache-ttl", type=float, default=2.0,
                   help="the Tiffin clients' location_cache_ttl in seconds (default %(default)s, as Client.connect; "
                        "0 = every get asks the master)")
    p.add_argument("--csv", help="write the results to this CSV file")
    a = p.parse_args(argv)
    sizes = [parse_size(s) for s in a.value_size.split(",") if s.strip()]
    threads = [int(t) for t in a.threads.split(",") if t.strip()]
    ops = [o.strip() for o in a.operations.split(",") if o.strip()]
    wanted = {c.strip() for c in a.clients.split(",") if c.strip()}
    rows: list = []
    run = uuid.uuid4().hex[:8]

    def emit(client, op, size, n, r):
        row = {"client": client, "operation": op, "value_size": size, "threads": n,
               "ops_per_sec": round(r["ops_per_sec"], 1), "gb_per_sec": round(r["gb_per_sec"], 4),
               "p50_us": round(r["p50_us"], 1), "p99_us": round(r["p99_us"], 1)}
        rows.append(row)
        failed = r.get("failures") or []
        note = f"  ({len(failed)} failed: {failed[0].code}, not timed)" if failed else ""
        print(f"{client:10s} {op:9s} {size_name(size):>7s} x{n:<3d} {row['ops_per_sec']:>10.1f} ops/s "
              f"{row['gb_per_sec']:>8.3f} GB/s  p50 {row['p50_us']:>9.1f} us  p99 {row['p99_us']:>9.1f} us{note}",
              flush=True)

    tcp = Client.connect(a.master, shared_memory=False, location_cache_ttl=a.location_cache_ttl)
    shm = Client.connect(a.master, shared_memory=True, location_cache_ttl=a.location_cache_ttl)
    mapped = shm.shared_segments()
    segments = [g["name"] for g in tcp.stat()["segments"]]
    remote = [s for s in segments if s not in mapped]
    clients = []
    if "tiffin" in wanted:
        clients.append(("tiffin", tcp, remote[0] if remote else None))
    verifying = None
    if "tiffin-verify" in wanted:
        verifying = Client.connect(a.master, shared_memory=False, location_cache_ttl=a.location_cache_ttl,
                                   verify_checksums=True)
        clients.append(("tiffin-verify", verifying, remote[0] if remote else None))
    if "tiffin-shm" in wanted:
        if mapped:
            clients.append(("tiffin-shm", shm, mapped[0]))
        else:
            print("bench: no node on this host keeps its segment in shared memory (tiffin node "
                  "--shared-memory-dir /dev/shm); skipping tiffin-shm", file=sys.stderr)
    redis_server = None
    rc = None
    if a.redis and "redis-py" in wanted:
        try:
            import redis  # noqa: PLC0415
        except ImportError:
            raise SystemExit("bench: --redis needs redis-py (Debian: apt-get install python3-redis)")
        if a.redis == "auto":
            redis_server = RedisServer()
            host, port = "127.0.0.1", redis_server.port
        else:
            host, _, port = a.redis.rpartition(":")
            port = int(port)
        rc = redis.Redis(host=host, port=port, socket_timeout=60)
        rc.ping()
    numpy_ref: dict = {}
    try:
        for size in sizes:
            payload = os.urandom(size)
            # Phases run operation by operation, each client in turn, so the ones compared (tiffin and
            # tiffin-shm get_into against redis-py get, the shared-memory read against a numpy copy)
            # run seconds apart, under the same load.
            readers = []  # (client name, get, get_into) of each client
            for name, c, segment in clients:
                prefix = f"bench/{run}/{name}/{size}/"
                keys = [f"{prefix}read/{k}" for k in range(a.keys)]

                def prepare(c=c, keys=keys, segment=segment, name=name):
                    # hard-pinned, so the put phases' churn does not evict them; a put of an existing key
                    # is a no-op
                    for k in keys:
                        c.put(k, payload, preferred_segment=segment, hard_pin=True)
                    where = {r.segment for k in keys for r in c.locate(k).replicas}
                    if name == "tiffin-shm" and not where <= set(mapped):
                        print(f"bench: some read keys of {name} are not in a mapped segment", file=sys.stderr)

                def put(t, i, n, c=c, prefix=prefix, segment=segment):
                    c.put(f"{prefix}put/{n}/{t}/{i}", payload, preferred_segment=segment)

                def get(t, i, n, c=c, keys=keys):
                    c.get(keys[i % len(keys)])

                def get_into(t, i, n, c=c, keys=keys):
                    c.get_into(keys[i % len(keys)], bufs[t])
                readers.append((name, put, get, get_into, c, prefix, prepare))
            if rc is not None:
                rprefix = f"bench:{run}:{size}:"
                rkeys = [f"{rprefix}read:{k}" for k in range(a.keys)]

                def rprepare():
                    for k in rkeys:
                        rc.set(k, payload)

                def rset(t, i, n):
                    rc.set(f"{rprefix}put:{t}:{i % 64}", payload)

                def rget(t, i, n):
                    v = rc.get(rkeys[i % len(rkeys)])
                    if v is None or len(v) != size:
                        raise TiffinError("INTERNAL_ERROR", "redis-py GET returned the wrong value")
                readers.append(("redis-py", rset, rget, None, None, rprefix, rprepare))
            for n in threads:
                bufs = [bytearray(size) for _ in range(n)]
                for b in bufs:
                    b[:] = payload  # touch the pages once
                # puts of every client in alternating turns, then every read operation of every client
                # (and the numpy copy reference) in alternating turns
                phases = []
                if "put" in ops:
                    phases.append(("put",))
                reads = tuple(op for op in ("get", "get_into") if op in ops)
                if reads:
                    phases.append(reads)
                for phase in phases:
                    if phase != ("put",):
                        for r in readers:
                            r[6]()  # the objects the reads cycle over, put after the put phases
                    fns = {}
                    for op in phase:
                        for name, put, get, get_into, c, prefix, _ in readers:
                            fn = {"put": put, "get": get, "get_into": get_into}[op]
                            if fn is not None:
                                fns[(name, op)] = (lambda t, i, fn=fn, n=n: fn(t, i, n))
                    if ("tiffin-shm", "get_into") in fns:
                        ref_src, ref_dst = _numpy_pair(size)
                        fns[("numpy-copy", "copy")] = (lambda t, i, d=ref_dst, s=ref_src: d.__setitem__(slice(None), s))
                    results = run_interleaved(fns, n, a.duration, size)
                    for (name, op), r in results.items():
                        if name == "numpy-copy":
                            numpy_ref[(size, n)] = r["gb_per_sec"]
                    for op in ("put", "get", "get_into"):
                        for (name, o), r in results.items():
                            if o == op:
                                emit(name, op, size, n, r)
                    if phase == ("put",):
                        for name, put, get, get_into, c, prefix, _ in readers:
                            if c is not None:
                                c.remove_by_regex("^" + re.escape(f"{prefix}put/"), force=True)
            for name, put, get, get_into, c, prefix, _ in readers:
                if c is not None:
                    c.remove_by_regex("^" + re.escape(prefix), force=True)
            if rc is not None:
                for k in rc.scan_iter(match=f"{rprefix}*", count=1000):
                    rc.delete(k)
    finally:
        tcp.close()
        shm.close()
        if verifying is not None:
            verifying.close()
        if redis_server is not None:
            redis_server.stop()
    print("\nsummary (get_into vs redis-py GET; shared memory vs a numpy copy of the same bytes; each pair "
          "measured in alternating turns):")
    for size in sizes:
        for n in threads:
            def val(client, op):
                for r in rows:
                    if (r["client"], r["operation"], r["value_size"], r["threads"]) == (client, op, size, n):
                        return r["gb_per_sec"]
                return None
            redis_get = val("redis-py", "get")
            for client in ("tiffin", "tiffin-shm"):
                gi = val(client, "get_into")
                if gi is not None and redis_get:
                    print(f"  {size_name(size):>7s} x{n}: {client} get_into / redis-py get = {gi / redis_get:.2f}")
            for op in ("get", "get_into"):
                plain, checked = val("tiffin", op), val("tiffin-verify", op)
                if plain and checked is not None:
                    print(f"  {size_name(size):>7s} x{n}: tiffin-verify {op} / tiffin {op} = {checked / plain:.2f}")
            gi = val("tiffin-shm", "get_into")
            ref = numpy_ref.get((size, n))
            if gi is not None and ref:
                print(f"  {size_name(size):>7s} x{n}: tiffin-shm get_into {gi:.2f} GB/s / numpy copy {ref:.2f} GB/s"
                      f" = {gi / ref:.2f}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
        print(f"wrote {a.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
