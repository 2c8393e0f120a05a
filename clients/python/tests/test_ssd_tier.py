"""Reads of objects that live on a node's SSD tier alone, through the Python client and Mooncake's API.

A master that offloads on eviction (``offload.mode=on-evict``) and evicts early, one node of 16 MiB with an SSD
tier (``--storage-path``): puts of 24 objects of ~0.5 MiB push the older ones out of memory onto the SSD. Each
read API then reads a different SSD-only object (a second read of one promotes it back to memory) and must answer
its exact bytes, counted as an SSD read.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
import urllib.request

import numpy as np
import pytest

from conftest import LOG_ROOT, make_cluster

import tiffin
from tiffin import mooncake

MiB = 1 << 20
COUNT = 24


def value_of(i: int) -> bytes:
    size = MiB // 2 + 4099 * i
    return (np.arange(size, dtype=np.uint32) * (2 * i + 1) % 251).astype(np.uint8).tobytes()


@pytest.fixture(scope="module")
def ssd_cluster():
    storage = tempfile.mkdtemp(prefix="tiffin-ssd-", dir=LOG_ROOT)
    c = make_cluster(shm_size_mib=0, tcp_nodes=1, tcp_size_mib=16,
                     master_args=("-D", "offload.mode=on-evict", "-D", "master.eviction-high-watermark=0.5",
                                  "-D", "master.eviction-ratio=0.3"),
                     node_args=("--storage-path", storage))
    yield c
    c.stop()
    shutil.rmtree(storage, ignore_errors=True)


@pytest.fixture(scope="module")
def ssd_only(ssd_cluster):
    """{key: value} of the objects found on the SSD tier alone after the puts."""
    values = {f"ssd/{i:02d}": value_of(i) for i in range(COUNT)}
    with tiffin.Client.connect(ssd_cluster.master, shared_memory=False) as c:
        for k, v in values.items():
            c.put(k, v)
        # wait on the master's counter, not on lookups: each lookup grants a read lease, which holds its object
        # in memory
        deadline = time.monotonic() + 60
        while offloads(ssd_cluster) < COUNT // 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        found = {}
        for k in values:
            loc = c.locate(k)
            types = {r.type for r in loc.replicas} if loc else set()
            if "LOCAL_DISK" in types and "MEMORY" not in types:
                found[k] = values[k]
    assert len(found) >= 4, (f"only {len(found)} objects on the SSD tier alone after {offloads(ssd_cluster):.0f}"
                             " offloads (60 s at most)")
    return found


def node_admin(node, path: str) -> str:
    """GET ``path`` from a node's admin HTTP server (``--admin-port``), whose address it printed at start."""
    deadline = time.monotonic() + 30
    while not (m := re.search(r"Tiffin node \S+ admin (http://\S+)/metrics", node.output())):
        assert time.monotonic() < deadline, "the node printed no admin address: " + node.output()[-2000:]
        time.sleep(0.1)
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(m.group(1) + path, timeout=10) as r:
        return r.read().decode()


def offloads(cluster) -> float:
    return cluster.master_metric("tiffin_master_offloads_total")


def ssd_reads(c) -> int:
    return c.transfer_counts()["ssd_reads"]


def test_each_read_api_answers_the_exact_bytes_of_an_ssd_only_object(ssd_cluster, ssd_only):
    keys = sorted(ssd_only)
    with tiffin.Client.connect(ssd_cluster.master, shared_memory=False, location_cache_ttl=0) as c:
        before = ssd_reads(c)
        assert c.get(keys[0]) == ssd_only[keys[0]]
        assert ssd_reads(c) == before + 1

        v = ssd_only[keys[1]]
        buf = bytearray(len(v) + 10)
        assert c.get_into(keys[1], buf) == len(v)
        assert bytes(buf[:len(v)]) == v
        assert ssd_reads(c) == before + 2

        # a range: the object is read whole into a staging buffer, only the range kept
        v = ssd_only[keys[2]]
        head, tail = bytearray(1000), bytearray(5000)
        assert c.get_range_into(keys[2], 100, head) == 1000
        assert bytes(head) == v[100:1100]
        assert ssd_reads(c) == before + 3
        assert c.get_range_into(keys[2], len(v) - 3000, tail) == 3000  # clipped at the object's end
        assert bytes(tail[:3000]) == v[-3000:]
        with pytest.raises(tiffin.TiffinError) as past:
            c.get_range_into(keys[2], len(v) + 1, bytearray(10))
        assert past.value.code == "INVALID_PARAMS"


def test_mooncake_get_into_ranges_reads_rows_of_an_ssd_only_object(ssd_cluster, ssd_only):
    key = sorted(ssd_only)[3]
    v = ssd_only[key]
    store = mooncake.MooncakeDistributedStore()
    assert store.setup("localhost", "P2PHANDSHAKE", 0, 0, "tcp", "", ssd_cluster.master) == 0
    try:
        out = np.zeros(3000, dtype=np.uint8)
        offsets = [0, 1000, 2000]
        src = [[7, 250_000, len(v) - 1000]]  # three rows of the key, the last at its end
        res = store.get_into_ranges([out.ctypes.data], [[key]], [[offsets]], [src], [[[1000, 1000, 1000]]])
        assert res == [[[1000, 1000, 1000]]], res
        assert out[:1000].tobytes() == v[7:1007]
        assert out[1000:2000].tobytes() == v[250_000:251_000]
        assert out[2000:].tobytes() == v[-1000:]
    finally:
        store.close()


def test_an_ssd_read_from_a_hung_node_ends_with_the_read_lease(tmp_path):
    """As the module's cluster with read leases of 2 s: once an SSD read has left a pooled connection to the node,
    the node is frozen with SIGSTOP. A get, and a batch get, of another SSD-only object then fail LEASE_EXPIRED
    when the lease ends, as a memory read does, instead of waiting for the client's RPC timeout (8 s here)."""
    import signal

    lease = 2.0
    storage = str(tmp_path / "ssd")
    c = make_cluster(shm_size_mib=0, tcp_nodes=1, tcp_size_mib=16,
                     master_args=("-D", "offload.mode=on-evict", "-D", "master.eviction-high-watermark=0.5",
                                  "-D", "master.eviction-ratio=0.3", "-D", f"master.lease-ttl={lease:g}s"),
                     node_args=("--storage-path", storage))
    try:
        values = {f"hang/{i:02d}": value_of(i) for i in range(COUNT)}
        with tiffin.Client.connect(c.master, shared_memory=False, timeout=8, location_cache_ttl=0) as cl:
            for k, v in values.items():
                cl.put(k, v)
            deadline = time.monotonic() + 60
            while offloads(c) < COUNT // 3 and time.monotonic() < deadline:
                time.sleep(0.2)
            ssd = [k for k in values if {r.type for r in cl.locate(k).replicas} == {"LOCAL_DISK"}]
            assert len(ssd) >= 3, f"only {len(ssd)} objects on the SSD tier alone"
        # no read hints: a hinted read would take the pooled connection first
        with tiffin.Client.connect(c.master, shared_memory=False, timeout=8, location_cache_ttl=0,
                                   read_hints=0) as reader:
            assert reader.get(ssd[0]) == values[ssd[0]]  # leaves an idle connection to the node in the pool
            assert ssd_reads(reader) == 1
            c.nodes[0].freeze()
            try:
                # the first on the pooled connection, the second on a new one (the first's was closed)
                for read in (lambda: reader.get(ssd[1]), lambda: reader.batch_get([ssd[2]])[0].error):
                    t = time.monotonic()
                    with pytest.raises(tiffin.TiffinError) as e:
                        err = read()
                        if err is not None:
                            raise err
                    took = time.monotonic() - t
                    assert e.value.code == "LEASE_EXPIRED", e.value
                    assert took < lease + 1.5, f"an SSD read of a hung node took {took:.2f} s (lease {lease:g} s)"
            finally:
                c.nodes[0].signal(signal.SIGCONT)
            assert reader.get(ssd[1]) == values[ssd[1]]  # let go: it answers again
    finally:
        c.stop()


def test_a_node_stopped_with_sigterm_keeps_what_only_its_memory_held_on_its_ssd(tmp_path):
    """A node process with an SSD tier and offload off (nothing on the SSD before) is stopped with SIGTERM: before it
    goes it has the master offload the objects only its memory holds (``node.stop-offload-timeout``), so once it
    starts again on the same ``--storage-path`` (its node id kept there) every object reads back."""
    from conftest import start_master, start_node, wait_nodes
    storage = str(tmp_path / "ssd")
    mp, master = start_master()
    node = start_node(master, "64MiB", None, "--storage-path", storage)
    try:
        wait_nodes(master, 1)
        values = {f"stop/{i:02d}": value_of(i) for i in range(20)}
        with tiffin.Client.connect(master, shared_memory=False) as c:
            for k, v in values.items():
                c.put(k, v)
            assert all("LOCAL_DISK" not in {r.type for r in c.locate(k).replicas} for k in values)
            node.stop()  # SIGTERM
            assert "copied what only its memory held to its SSD tier" in node.output()
            with pytest.raises(tiffin.TiffinError) as gone:
                c.get("stop/00")
            assert gone.value.code == "OBJECT_NOT_FOUND"  # the copies are away with their node
            node = start_node(master, "64MiB", None, "--storage-path", storage, "--admin-port", "0")
            deadline = time.monotonic() + 60
            while not c.exists("stop/19"):  # the node's scan lists its copies again
                assert time.monotonic() < deadline, "the node's SSD copies did not come back: " + node.output()[-2000:]
                time.sleep(0.1)
            for k, v in values.items():
                assert c.get(k) == v, k
            # the restarted node's own metrics (node.admin-port): what its SSD tier holds, its link to the master
            metrics = node_admin(node, "/metrics")
            assert float(re.search(r"^tiffin_node_ssd_objects (\S+)$", metrics, re.M).group(1)) == 20
            assert float(re.search(r"^tiffin_node_master_ping_failures (\S+)$", metrics, re.M).group(1)) == 0
            assert json.loads(node_admin(node, "/health"))["status"] == "ok"
    finally:
        node.stop()
        mp.stop()
