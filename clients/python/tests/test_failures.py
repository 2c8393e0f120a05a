"""Dead and hung processes, killed with real signals: errors are clear and nothing hangs."""

from __future__ import annotations

import os
import random
import signal
import time

import pytest

import tiffin
from tiffin import TiffinError
from tiffin.mooncake import MooncakeDistributedStore

from conftest import make_cluster

MiB = 1 << 20


def data(n, seed):
    return random.Random(seed).randbytes(n)


@pytest.fixture()
def two_nodes():
    """A master with a shared-memory node and a socket node of its own (this test kills them)."""
    c = make_cluster(shm_size_mib=64, tcp_nodes=1, tcp_size_mib=64)
    yield c
    c.stop()


def test_dead_node_with_two_replicas_reads_the_other_one(two_nodes):
    c = two_nodes
    with tiffin.Client.connect(c.master, shared_memory=False, timeout=5) as client:
        values = {f"k{i}": data(MiB + i, i) for i in range(6)}
        assert all(r.ok for r in client.batch_put(values, replicas=2))
        first = client.locate("k0").replicas[0]
        assert len(client.locate("k0").replicas) == 2
        victim = next(p for p in c.nodes if c.node_info(p)["segment"] == first.segment)
        victim.kill()  # SIGKILL, as a crash: the master still lists its replicas (node-ttl 10 s)
        t = time.monotonic()
        for k, v in values.items():
            assert client.get(k) == v  # the first replica fails (connection refused), the next one answers
        got = client.batch_get(list(values))
        assert [r.value for r in got] == list(values.values())
        buf = bytearray(2 * MiB)
        assert client.get_into("k3", buf) == MiB + 3 and bytes(buf[:MiB + 3]) == values["k3"]
        assert time.monotonic() - t < 20
        # a new put that lands on the dead node fails cleanly and is revoked
        with pytest.raises(TiffinError) as e:
            client.put("to-dead", b"x" * 100, preferred_segment=first.segment)
        assert e.value.code == "TRANSFER_FAIL"
        assert not client.exists("to-dead")


def test_dead_shared_memory_node_is_not_written_through_its_mapping(two_nodes):
    c = two_nodes
    shm_node = c.nodes[0]
    segment = c.node_info(shm_node)["segment"]
    with tiffin.Client.connect(c.master, timeout=5) as client:
        assert segment in client.shared_segments()
        client.put("before", data(4096, 1), preferred_segment=segment)
        assert client.transfer_counts()["shared_writes"] == 1
        shm_node.kill()
        time.sleep(0.05)  # past the 20 ms liveness cache
        with pytest.raises(TiffinError) as e:
            client.put("after", data(4096, 2), preferred_segment=segment)
        assert e.value.code == "TRANSFER_FAIL"
        counts = client.transfer_counts()
        assert counts["shared_writes"] == 1 and counts["network_writes"] == 1, counts
        assert not client.exists("after")
        # reads need no liveness: a replica the master still lists holds its bytes (as the Java client)
        assert client.get("before") == data(4096, 1)


@pytest.fixture()
def one_node():
    """A master and one node of its own (this test stops and kills the master)."""
    c = make_cluster(shm_size_mib=0, tcp_nodes=1, tcp_size_mib=32)
    yield c
    c.stop()


def test_hung_and_dead_master(one_node):
    c = one_node
    client = tiffin.Client.connect(c.master, timeout=1.5, connect_timeout=2)
    store = MooncakeDistributedStore()
    assert store.setup("test-host", "P2PHANDSHAKE", 0, 0, "tcp", "", c.master) == 0
    try:
        client.put("k", b"value")
        assert store.put("m", b"mooncake") == 0
        assert store.health_check() == 0
        # remove_all: every object, as a count (this cluster is the test's own)
        assert store.remove_all() == 2
        client.put("k", b"value")
        # a hung master (SIGSTOP): every call ends with RPC_TIMEOUT after the timeout, never hangs
        c.master_proc.freeze()
        try:
            t = time.monotonic()
            with pytest.raises(TiffinError) as e:
                client.get("k")
            elapsed = time.monotonic() - t
            assert e.value.code == "RPC_TIMEOUT" and 1.0 < elapsed < 6, elapsed
            t = time.monotonic()
            with pytest.raises(TiffinError) as e:
                tiffin.Client.connect(c.master, connect_timeout=1.0)
            assert e.value.code == "RPC_FAIL" and time.monotonic() - t < 5
        finally:
            c.master_proc.signal(signal.SIGCONT)
        assert client.get("k") == b"value"  # recovered: a fresh connection
        # a dead master (SIGKILL): RPC_FAIL at once for every call that needs it ("k" was just read, so
        # its location may be in the location cache: reads of it could still succeed)
        c.master_proc.kill()
        t = time.monotonic()
        for call in (lambda: client.get("k2"), lambda: client.put("k2", b"x"), lambda: client.exists("k2"),
                     lambda: client.batch_get(["k2"]), lambda: client.stat()):
            with pytest.raises(TiffinError) as e:
                call()
            assert e.value.code == "RPC_FAIL", e.value
        assert time.monotonic() - t < 10
        with pytest.raises(TiffinError) as e:
            tiffin.Client.connect(c.master)
        assert e.value.code == "RPC_FAIL" and "cannot connect" in str(e.value)
        # Mooncake's conventions for the same failures
        assert store.health_check() == 2
        assert store.get("k") == b"" and store.is_exist("k") == -1 and store.put("x", b"y") == -900
        assert store.batch_is_exist(["k", "x"]) == [-1, -1]
        fresh = MooncakeDistributedStore()
        assert fresh.setup("h", "P2PHANDSHAKE", 0, 0, "tcp", "", c.master) == -900
    finally:
        client.close()
        store.close()


def test_nothing_listening(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        t = time.monotonic()
        with pytest.raises(TiffinError) as e:
            tiffin.Client.connect(f"127.0.0.1:{port}")
        assert e.value.code == "RPC_FAIL" and time.monotonic() - t < 5
    with pytest.raises(TiffinError) as e:
        tiffin.Client.connect("no-port-here")
    assert e.value.code == "INVALID_PARAMS"


def test_a_master_stopped_longer_than_the_node_ttl_keeps_its_live_nodes_and_their_objects():
    """A master stopped (SIGSTOP: a frozen VM, a long pause) for longer than master.node-ttl while its nodes kept
    pinging must not take them for dead when it resumes: their pings waited in its sockets. It used to unmount
    every node's segments and erase their objects before reading them."""
    c = make_cluster(shm_size_mib=0, tcp_nodes=2, tcp_size_mib=32, master_args=("-D", "master.node-ttl=2s"))
    try:
        with tiffin.Client.connect(c.master, location_cache_ttl=0, timeout=5) as client:
            values = {f"pause/{i}": data(1000 + i, i) for i in range(20)}
            assert all(r.ok for r in client.batch_put(values))
            c.master_proc.freeze()
            try:
                time.sleep(5)  # 2.5 node TTLs
            finally:
                c.master_proc.signal(signal.SIGCONT)
            time.sleep(1.5)  # the liveness check runs every second
            assert client.stat()["live_nodes"] == 2
            assert [r.value for r in client.batch_get(list(values))] == list(values.values())
            assert "missed its heartbeats" not in c.master_proc.output()
            # a node that dies is still found, one TTL after its last ping
            c.nodes[0].kill()
            deadline = time.monotonic() + 15
            while client.stat()["live_nodes"] != 1:
                assert time.monotonic() < deadline, "the killed node was never taken for dead"
                time.sleep(0.2)
    finally:
        c.stop()


def test_a_hung_node_with_two_replicas_reads_the_other_one():
    """A node that hangs (SIGSTOP: the kernel still accepts connections, nothing answers) holding the first of
    two replicas: every read ends from the other replica within about one read lease, whether the hung node is
    met on a pooled connection (the read hint's speculative read), in a new connection's handshake, or in a
    pipelined batch; it is not asked again in the same read, and a key with no other replica fails naming it.
    The reads used to fail LEASE_EXPIRED naming the healthy node (its read began after the handshake with the
    hung one had used up the lease) or read the hung node twice (the hint, then the replica list)."""
    lease = 3.0
    c = make_cluster(shm_size_mib=0, tcp_nodes=2, tcp_size_mib=32,
                     master_args=("-D", "master.node-ttl=60s", "-D", f"master.lease-ttl={lease:g}s"))
    try:
        hung, healthy = (c.node_info(p) for p in c.nodes)
        with tiffin.Client.connect(c.master, shared_memory=False) as client:  # default timeouts: 30 s, 10 s
            values = {f"h{i}": data(1000 + i, i) for i in range(4)}
            for k, v in values.items():
                client.put(k, v, replicas=2, preferred_segment=hung["segment"])
            client.put("other", data(500, 9), replicas=2, preferred_segment=healthy["segment"])
            client.put("solo", data(100, 10), preferred_segment=hung["segment"])
            assert [r.endpoint for r in client.locate("h0").replicas] == [hung["endpoint"], healthy["endpoint"]]
            assert client.locate("other").replicas[0].endpoint == healthy["endpoint"]
            c.nodes[0].freeze()
            try:
                def timed(read):
                    t = time.monotonic()
                    out = read()
                    elapsed = time.monotonic() - t
                    assert elapsed < lease + 2.5, f"took {elapsed:.1f} s (lease {lease} s)"
                    return out

                assert timed(lambda: client.get("h0")) == values["h0"]  # hinted: on the put's idle connection
                buf = bytearray(2000)
                assert timed(lambda: client.get_into("h1", buf)) == 1001 and bytes(buf[:1001]) == values["h1"]
                got = timed(lambda: client.batch_get(["h2", "other"]))
                assert [(r.code, r.value) for r in got] == [("OK", values["h2"]), ("OK", data(500, 9))]
                got = timed(lambda: client.batch_get_into(["h3"], [buf]))
                assert [(r.code, r.value) for r in got] == [("OK", 1003)] and bytes(buf[:1003]) == values["h3"]
                with pytest.raises(TiffinError) as e:
                    timed(lambda: client.get("solo"))
                assert e.value.code == "LEASE_EXPIRED" and hung["endpoint"] in str(e.value), e.value
                assert healthy["endpoint"] not in str(e.value)
            finally:
                c.nodes[0].signal(signal.SIGCONT)
    finally:
        c.stop()
