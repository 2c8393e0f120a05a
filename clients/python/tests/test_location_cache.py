"""The location cache (``location_cache_ttl``): the Java client's ``LocationCache`` rules, against real
processes — hits skip the master, removes are seen as the master promises, a re-mounted segment makes a
cached read look the key up again, and concurrent puts and removes by another client never give wrong
bytes — and the cache's own bookkeeping with synthetic locations."""

from __future__ import annotations

import random
import re
import signal
import struct
import threading
import time

import numpy as np
import pytest

import tiffin
from tiffin import InvalidArgument, TiffinError
from tiffin._locations import LocationCache
from tiffin.client import ObjectInfo, Replica
from tiffin.mooncake import MooncakeDistributedStore

from conftest import make_cluster

MiB = 1 << 20
MS = 1_000_000


def data(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def lookups(cluster) -> float:
    """Lookups the master has answered (single and batch requests)."""
    return cluster.master_requests("get_replica_list") + cluster.master_requests("batch_get_replica_list")


# ---------------------------------------------------------------------------------- bookkeeping (no cluster)

def _loc(key="k", lease_ms=10_000, epoch=1):
    r = Replica(7, "MEMORY", "COMPLETE", "seg", "node", "127.0.0.1:1", 0, 100, epoch)
    return ObjectInfo(key, 100, 1, lease_ms, (r,))


def test_window_is_the_least_of_ttl_half_the_lease_and_20_s():
    c = LocationCache(2000 * MS, 10)
    assert c.cache_for_ms == 2000
    c.put("k", _loc(), 0, c.stamp("k"))
    assert c.get("k", 2000 * MS) is not None  # usable up to and including ttl after the lookup was sent
    assert c.get("k", 2000 * MS + 1) is None
    assert c.get("k", 0) is None, "an expired entry stays dropped"
    c.put("k", _loc(lease_ms=1000), 0, c.stamp("k"))  # lease / 2 = 500 ms < ttl
    assert c.get("k", 500 * MS) is not None and c.get("k", 500 * MS + 1) is None
    long = LocationCache(60_000 * MS, 10)
    long.put("k", _loc(lease_ms=120_000), 0, long.stamp("k"))  # 20 s cap < ttl 60 s < lease / 2
    assert long.get("k", 20_000 * MS) is not None and long.get("k", 20_000 * MS + 1) is None
    assert LocationCache(1, 1).cache_for_ms == 1, "rounded up to whole ms"


def test_a_hit_carries_what_is_left_of_the_lease():
    c = LocationCache(2000 * MS, 10)
    c.put("k", _loc(lease_ms=10_000), 5 * MS, c.stamp("k"))
    hit = c.get("k", 5 * MS + 1500 * MS + 1)  # 1500.000001 ms after the lookup was sent: rounded up
    assert hit.lease_ttl_ms == 10_000 - 1501 and hit.key == "k" and hit.replicas == _loc().replicas
    assert c.stats() == {"hits": 1, "misses": 0, "refused": 0, "size": 1}


def test_an_invalidation_between_stamp_and_answer_keeps_the_answer_out():
    c = LocationCache(2000 * MS, 10)
    stamp = c.stamp("k")
    c.invalidate("k")  # this client's remove or put ran while the lookup was on its way
    c.put("k", _loc(), 0, stamp)
    assert c.get("k", 0) is None
    stamp = c.stamp("k")
    c.invalidate_matching(lambda key: key.startswith("x"))  # every stamp moves
    c.put("k", _loc(), 0, stamp)
    assert c.get("k", 0) is None
    c.put("k", _loc(), 0, c.stamp("k"))
    c.refused("k")
    assert c.get("k", 0) is None and c.stats()["refused"] == 1


def test_bounded_least_recently_used_first():
    c = LocationCache(2000 * MS, 3)
    for k in "abc":
        c.put(k, _loc(k), 0, c.stamp(k))
    assert c.get("a", 0) is not None  # a is now the most recently used
    c.put("d", _loc("d"), 0, c.stamp("d"))
    assert len(c) == 3 and c.get("b", 0) is None
    assert all(c.get(k, 0) is not None for k in "acd")


def test_options_are_checked():
    for bad in (-1, "2s", True, float("nan")):
        with pytest.raises(InvalidArgument):
            tiffin.Client("127.0.0.1:1", location_cache_ttl=bad)
    with pytest.raises(InvalidArgument):
        tiffin.Client("127.0.0.1:1", location_cache_size=-1)
    assert tiffin.Client("127.0.0.1:1").location_cache_stats() == {"hits": 0, "misses": 0, "refused": 0, "size": 0}
    assert tiffin.Client("127.0.0.1:1", location_cache_ttl=0).location_cache_stats() is None
    assert tiffin.Client("127.0.0.1:1", location_cache_size=0).location_cache_stats() is None


# ---------------------------------------------------------------------------------- against the shared cluster

@pytest.mark.parametrize("shared", [False, True])
def test_hits_skip_the_master_and_return_the_same_bytes(cluster, prefix, shared):
    segment = cluster.shm_segment if shared else cluster.tcp_segment
    with tiffin.Client.connect(cluster.master, shared_memory=shared, location_cache_ttl=5) as c, \
            tiffin.Client.connect(cluster.master, location_cache_ttl=0) as plain:
        v, w = data(300_000, 1), data(5000, 2)
        c.put(f"{prefix}k", v, preferred_segment=segment)
        plain.put(f"{prefix}w", w, preferred_segment=segment)
        before = lookups(cluster)
        assert c.get(f"{prefix}k") == v  # looked up (the read hint's bytes kept)
        for _ in range(5):
            assert c.get(f"{prefix}k") == v
        dst = np.zeros(len(v), np.uint8)
        assert c.get_into(f"{prefix}k", dst) == len(v) and dst.tobytes() == v
        assert c.exists(f"{prefix}k")
        assert c.location_cache_stats()["hits"] == 7, "get x5, get_into, exists"
        assert c.transfer_counts()["lookups"] == 1
        # a batch mixes cached keys and keys the master is asked for (in one request)
        got = c.batch_get([f"{prefix}k", f"{prefix}w", f"{prefix}missing"])
        assert [r.value for r in got[:2]] == [v, w] and got[2].code == "OBJECT_NOT_FOUND"
        assert [r.value for r in c.batch_exists([f"{prefix}k", f"{prefix}w", f"{prefix}missing"])] == \
            [True, True, False]
        bufs = [bytearray(len(v)), bytearray(len(w))]
        assert [r.value for r in c.batch_get_into([f"{prefix}k", f"{prefix}w"], bufs)] == [len(v), len(w)]
        assert bytes(bufs[0]) == v and bytes(bufs[1]) == w
        stats = c.location_cache_stats()
        assert stats["hits"] == 7 + 1 + 2 + 2 and stats["size"] == 2, stats
        assert c.transfer_counts()["lookups"] == 2, "one lookup, then one batch lookup of w and missing"
        time.sleep(0.1)  # the master counts a request once it has answered it
        assert lookups(cluster) - before == 2, "the master saw the same two lookups"
        counts = c.transfer_counts()
        if shared:
            assert counts["shared_reads"] >= 10 and counts["network_reads"] == 0, counts
        else:
            assert counts["shared_reads"] == 0
        # off: every read asks the master
        for _ in range(3):
            assert plain.get(f"{prefix}k") == v
        assert plain.transfer_counts()["lookups"] == 3 and plain.transfer_counts()["location_hits"] == 0
        c.batch_remove([f"{prefix}k", f"{prefix}w"], force=True)


def test_entries_expire_after_the_ttl(cluster, prefix):
    with tiffin.Client.connect(cluster.master, shared_memory=False, location_cache_ttl=0.3) as c:
        c.put(f"{prefix}k", b"value")
        assert c.get(f"{prefix}k") == b"value"
        assert c.get(f"{prefix}k") == b"value"
        assert c.transfer_counts()["lookups"] == 1
        time.sleep(0.35)
        assert c.get(f"{prefix}k") == b"value"
        assert c.transfer_counts()["lookups"] == 2
        c.remove(f"{prefix}k", force=True)


def test_locate_always_asks_the_master(cluster, prefix):
    with tiffin.Client.connect(cluster.master) as c:
        c.put(f"{prefix}k", b"value")
        assert c.get(f"{prefix}k") == b"value"
        assert c.locate(f"{prefix}k").size == 5 and c.locate(f"{prefix}k").size == 5
        assert c.transfer_counts()["lookups"] == 3
        c.remove(f"{prefix}k", force=True)
        assert c.locate(f"{prefix}k") is None


def test_a_remove_through_this_client_is_seen_at_once(cluster, prefix):
    # a window of 5 s: a remove that waited for it would show
    with tiffin.Client.connect(cluster.master, shared_memory=False, location_cache_ttl=5) as c:
        keys = [f"{prefix}{i}" for i in range(4)]
        for i, k in enumerate(keys):
            c.put(k, data(1000, i))
            assert c.get(k) == data(1000, i)  # cached
        assert c.location_cache_stats()["size"] == 4
        t = time.monotonic()
        c.remove(keys[0], force=True)  # the master holds no forced removal for the remover's own cache
        with pytest.raises(TiffinError) as e:
            c.get(keys[0])
        assert e.value.code == "OBJECT_NOT_FOUND"
        assert not c.exists(keys[0])
        assert [r.code for r in c.batch_remove(keys[1:3], force=True)] == ["OK", "OK"]
        assert [r.code for r in c.batch_get(keys[1:3])] == ["OBJECT_NOT_FOUND"] * 2
        assert c.remove_by_regex("^" + re.escape(keys[3]) + "$", force=True) == 1
        assert not c.exists(keys[3])
        assert time.monotonic() - t < 4, "none of the removes waited for this client's own window"
        # a put after the remove is read at once, not the old object
        c.put(keys[0], b"new")
        assert c.get(keys[0]) == b"new"
        c.remove(keys[0], force=True)


def test_an_upsert_of_what_only_this_client_cached_does_not_wait(cluster, prefix):
    """A forced replacement waits for other clients' cached locations, not for the writer's own (it forgot its
    entry): the PUT_END carries cache_owner. Without it, each upsert after this client's own get waited the window."""
    with tiffin.Client.connect(cluster.master, shared_memory=False, location_cache_ttl=5) as c:
        keys = [f"{prefix}{i}" for i in range(3)]
        for i, k in enumerate(keys):
            c.put(k, data(1000, i))
            assert c.get(k) == data(1000, i)  # cached by this client only
        t = time.monotonic()
        c.put(keys[0], b"new", upsert=True, replace_leased=True)
        assert [r.code for r in c.batch_put({keys[1]: b"n1", keys[2]: b"n2"}, upsert=True, replace_leased=True)] \
            == ["OK", "OK"]
        assert time.monotonic() - t < 4, "no upsert waited for this client's own window (5 s, held 6.25 s)"
        assert c.get(keys[0]) == b"new" and c.batch_get(keys[1:])[1].value == b"n2"


def test_another_clients_forced_remove_is_seen_once_the_window_ends(cluster, prefix):
    key = f"{prefix}k"
    ttl = 1.5
    with tiffin.Client.connect(cluster.master, shared_memory=False, location_cache_ttl=ttl) as reader, \
            tiffin.Client.connect(cluster.master, shared_memory=False) as other:
        other.put(key, data(70_000, 1), preferred_segment=cluster.tcp_segment)
        t_lookup = time.monotonic()
        assert reader.get(key) == data(70_000, 1)  # cached for 1.5 s
        with pytest.raises(TiffinError) as e:
            other.remove(key)  # an ordinary remove meets the reader's read lease
        assert e.value.code == "OBJECT_HAS_LEASE"
        during: list = []
        removed = threading.Event()

        def read_meanwhile():
            # while the forced remove is held, the reader may still read the object through its entry
            while not removed.is_set():
                try:
                    during.append(reader.get(key))
                except TiffinError as ex:
                    during.append(ex.code)
                time.sleep(0.05)
        th = threading.Thread(target=read_meanwhile)
        th.start()
        try:
            other.remove(key, force=True)  # returns once the reader's reuse has ended
            t_removed = time.monotonic()
        finally:
            removed.set()
            th.join(30)
        assert t_removed - t_lookup >= ttl - 0.05, "the forced remove returned before the reader's window ended"
        assert t_removed - t_lookup < ttl * 1.25 + 5
        with pytest.raises(TiffinError) as e:
            reader.get(key)
        assert e.value.code == "OBJECT_NOT_FOUND"
        assert not reader.exists(key)
        assert [r.code for r in reader.batch_get([key])] == ["OBJECT_NOT_FOUND"]
        assert during and all(v == data(70_000, 1) or v == "OBJECT_NOT_FOUND" for v in during), \
            "reads during the hold see the object whole, or nothing"


def test_concurrent_puts_and_removes_by_another_client_never_give_wrong_bytes(cluster, prefix):
    """A writer puts generations of the same keys and force-removes them; readers with a location cache
    read them all the while. Every read returns one generation's exact bytes, and no read that starts
    after a generation's remove returned sees that generation."""
    keys = [f"{prefix}{i}" for i in range(3)]
    segments = [cluster.tcp_segment, cluster.shm_segment]

    def value(key: str, gen: int) -> bytes:
        size = 4096 + (gen * 7919) % (300_000)
        return struct.pack(">q", gen) + random.Random(f"{key}/{gen}").randbytes(size)

    removed_at: dict = {}  # (key, gen) -> moment its forced remove returned
    reads: list = []       # (key, gen, moment the read started)
    failures: list = []
    stop = threading.Event()

    def writer():
        gen = 0
        with tiffin.Client.connect(cluster.master, location_cache_ttl=0, timeout=20) as w:
            while not stop.is_set():
                for i, k in enumerate(keys):
                    gen += 1
                    try:
                        w.put(k, value(k, gen), preferred_segment=segments[gen % 2])
                    except TiffinError as e:
                        if e.code != "OBJECT_HAS_LEASE":  # refused while an earlier remove's hold lasts
                            failures.append(f"put {k} #{gen}: {e}")
                        continue
                    time.sleep(0.02)
                    try:
                        w.remove(k, force=True)
                        removed_at[(k, gen)] = time.monotonic()
                    except TiffinError as e:
                        failures.append(f"remove {k} #{gen}: {e}")

    def reader(shared: bool, n: int):
        rng = random.Random(n)
        with tiffin.Client.connect(cluster.master, shared_memory=shared, location_cache_ttl=0.4, timeout=20) as r:
            buf = bytearray(400_000)
            while not stop.is_set():
                k = rng.choice(keys)
                t = time.monotonic()
                try:
                    how = rng.randrange(3)
                    if how == 0:
                        got = r.get(k)
                    elif how == 1:
                        got = bytes(buf[:r.get_into(k, buf)])
                    else:
                        res = r.batch_get([k, rng.choice(keys)])
                        if not res[0].ok:
                            continue
                        got = res[0].value
                except TiffinError as e:
                    if e.code not in ("OBJECT_NOT_FOUND", "REPLICA_IS_NOT_READY", "LEASE_EXPIRED"):
                        failures.append(f"get {k}: {e}")
                    continue
                gen = struct.unpack(">q", got[:8])[0]
                if got != value(k, gen):
                    failures.append(f"get {k}: wrong bytes (generation {gen}, {len(got)} bytes)")
                reads.append((k, gen, t))

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader, args=(s, n))
                                                    for n, s in enumerate((False, True, False))]
    for t in threads:
        t.start()
    time.sleep(8)
    stop.set()
    for t in threads:
        t.join(60)
    assert not failures, failures[:5]
    assert len(removed_at) >= 6 and len(reads) >= 50, (len(removed_at), len(reads))
    late = [(k, g, t - removed_at[(k, g)]) for k, g, t in reads if (k, g) in removed_at and t > removed_at[(k, g)]]
    assert not late, f"reads that started after their object's remove returned: {late[:5]}"


def test_mooncake_setup_configures_the_location_cache(cluster):
    store = MooncakeDistributedStore()
    assert store.setup("h", "P2PHANDSHAKE", 0, 0, "tcp", "", cluster.master) == 0
    assert store._client.location_cache_stats() is not None and store._client._cache_for_ms == 2000
    store.close()
    store = MooncakeDistributedStore()
    assert store.setup("h", "P2PHANDSHAKE", 0, 0, "tcp", "", cluster.master, location_cache_ttl=0) == 0
    assert store._client.location_cache_stats() is None
    store.close()
    store = MooncakeDistributedStore()
    assert store.setup({"local_hostname": "h", "metadata_server": "P2PHANDSHAKE", "master_server_address":
                        cluster.master, "location_cache_ttl": "500ms"}) == 0
    assert store._client._cache_for_ms == 500
    store.close()
    with pytest.raises(TypeError):
        MooncakeDistributedStore().setup("h", "P2PHANDSHAKE", 0, 0, "tcp", "", cluster.master,
                                         location_cache_ttl="soon")


# ---------------------------------------------------------------------------------- re-mounted segments

@pytest.fixture()
def forgetful():
    """A master that forgets a node silent for 2 s (and leases of 60 s, so a 20 s reuse window outlasts a
    re-mount), with a shared-memory node and a socket node of its own (this test freezes them)."""
    c = make_cluster(shm_size_mib=32, tcp_nodes=1, tcp_size_mib=32,
                     master_args=("-D", "master.node-ttl=2s", "-D", "master.node-check-interval=200ms",
                                  "-D", "master.lease-ttl=60s"))
    yield c
    c.stop()


def _forget_and_await_remount(cluster, timeout: float = 60.0) -> None:
    """Freezes every node until the master has unmounted their segments, then lets them go on and waits
    until each has re-mounted (the node logs it); their objects are gone, their mount epochs moved."""
    before = [p.output().count("re-mounted segment") for p in cluster.nodes]
    with tiffin.Client.connect(cluster.master, location_cache_ttl=0) as c:
        for p in cluster.nodes:
            p.freeze()
        try:
            deadline = time.monotonic() + timeout
            while c.stat()["segments"]:
                assert time.monotonic() < deadline, "the master did not unmount the silent nodes"
                time.sleep(0.1)
        finally:
            for p in cluster.nodes:
                p.signal(signal.SIGCONT)
        deadline = time.monotonic() + timeout
        while any(p.output().count("re-mounted segment") == b for p, b in zip(cluster.nodes, before)) \
                or len(c.stat()["segments"]) < len(cluster.nodes):
            assert time.monotonic() < deadline, "the nodes did not re-mount"
            time.sleep(0.1)


def test_a_cached_location_of_a_remounted_segment_is_refused_and_looked_up_again(forgetful):
    c = forgetful
    shm_seg, tcp_seg = (c.node_info(p)["segment"] for p in c.nodes)
    cached = tiffin.Client.connect(c.master, location_cache_ttl=30, timeout=10)
    other = tiffin.Client.connect(c.master, shared_memory=False, location_cache_ttl=0)
    try:
        assert shm_seg in cached.shared_segments()
        olds = {"old": (tcp_seg, data(MiB, 1)), "old2": (tcp_seg, data(MiB, 2)), "old-shm": (shm_seg, data(MiB, 3))}
        for k, (seg, v) in olds.items():
            cached.put(k, v, preferred_segment=seg)
            assert cached.get(k) == v  # now cached (the window: min(30 s, 60 s / 2, 20 s) = 20 s)
        assert cached.location_cache_stats()["size"] == 3
        old_at = {k: cached.locate(k).replicas[0] for k in olds}
        _forget_and_await_remount(c)

        # Other objects take the old ones' places in the empty, re-mounted segments.
        fresh = {"fresh": (tcp_seg, data(MiB, 4)), "fresh-shm": (shm_seg, data(MiB, 5))}
        for k, (seg, v) in fresh.items():
            other.put(k, v, preferred_segment=seg)
        now = {k: other.locate(k).replicas[0] for k in fresh}
        assert now["fresh"].mount_epoch == old_at["old"].mount_epoch + 1
        assert now["fresh-shm"].mount_epoch == old_at["old-shm"].mount_epoch + 1
        assert now["fresh"].offset == old_at["old"].offset, "the new object reuses the old one's bytes"

        lookups_before = cached.transfer_counts()["lookups"]
        # The cached location still names those bytes; the node refuses it, the master says "gone".
        with pytest.raises(TiffinError) as e:
            cached.get("old")
        assert e.value.code == "OBJECT_NOT_FOUND"
        assert cached.location_cache_stats()["refused"] == 1
        assert cached.transfer_counts()["lookups"] == lookups_before + 1
        # Through the mapping the client sees the moved epoch itself, then the node refuses.
        buf = bytearray(MiB)
        with pytest.raises(TiffinError) as e:
            cached.get_into("old-shm", buf)
        assert e.value.code == "OBJECT_NOT_FOUND"
        assert cached.location_cache_stats()["refused"] == 2
        # The batch path: only the refused key is looked up again.
        d1, d2 = bytearray(MiB), bytearray(MiB)
        res = cached.batch_get_into(["old2", "fresh"], [d1, d2])
        assert [r.code for r in res] == ["OBJECT_NOT_FOUND", "OK"] and bytes(d2) == fresh["fresh"][1]
        assert cached.location_cache_stats()["refused"] == 3
        assert cached.get("fresh-shm") == fresh["fresh-shm"][1]
    finally:
        cached.close()
        other.close()


# ---------------------------------------------------------------------------------- a hung node

@pytest.fixture()
def short_leases():
    """A master granting read leases of 4 s, with one socket node of its own (this test freezes it)."""
    c = make_cluster(shm_size_mib=0, tcp_nodes=1, tcp_size_mib=32, master_args=("-D", "master.lease-ttl=4s"))
    yield c
    c.stop()


def test_a_read_through_a_cached_location_ends_within_the_lease(short_leases, caplog):
    c = short_leases
    node = c.nodes[0]
    with tiffin.Client.connect(c.master, location_cache_ttl=30, connect_timeout=1, timeout=20) as client:
        client.put("k", data(MiB, 1))
        t_lookup = time.monotonic()
        assert client.get("k") == data(MiB, 1)  # cached: the window is min(30 s, 4 s / 2) = 2 s
        assert client.get("k") == data(MiB, 1)
        assert client.location_cache_stats()["hits"] == 1
        node.freeze()  # the node holds the read until after the lease
        try:
            caplog.set_level("DEBUG", logger="tiffin")
            buf = bytearray(MiB)
            with pytest.raises(TiffinError) as e:
                client.get_into("k", buf)
            elapsed = time.monotonic() - t_lookup
        finally:
            node.signal(signal.SIGCONT)
        # the read through the cached location gave up when what was left of the lease ended; the fresh
        # lookup's read then met the same hung node (LEASE_EXPIRED, or a connect that timed out)
        assert any("through its cached location failed (LEASE_EXPIRED)" in r.getMessage() for r in caplog.records)
        assert e.value.code in ("LEASE_EXPIRED", "TRANSFER_FAIL"), e.value
        assert client.location_cache_stats()["refused"] == 1
        assert elapsed < 4 + 4 + 1 + 5, elapsed
        assert client.get("k") == data(MiB, 1)  # the node answers again
