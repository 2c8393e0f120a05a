"""The native client against a real cluster (master, a shared-memory node, a socket-only node)."""

from __future__ import annotations

import array
import mmap
import os
import random
import struct
import threading
import time

import numpy as np
import pytest

import tiffin
from tiffin import InvalidArgument, TiffinError
from tiffin import _buffers as B
from tiffin._frames import Op
from tiffin._proto import tiffin_pb2 as pb
from tiffin._types import grant_msg

MiB = 1 << 20


def data(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def code_of(excinfo) -> str:
    return excinfo.value.code


# ---------------------------------------------------------------------------------- round trips

SIZES = [1, 63, 64, 65, 4095, 4096, 100_003, MiB, 16 * MiB - 1, 16 * MiB, 16 * MiB + 1, 64 * MiB]


@pytest.mark.parametrize("size", SIZES)
def test_round_trip_over_tcp_is_byte_exact(cluster, tcp_client, prefix, size):
    key = f"{prefix}k"
    value = data(size, size)
    tcp_client.put(key, value, preferred_segment=cluster.tcp_segment)
    assert tcp_client.get(key) == value
    buf = bytearray(size + 7)
    buf[size:] = b"\xAB" * 7
    assert tcp_client.get_into(key, buf) == size
    assert bytes(buf[:size]) == value
    assert buf[size:] == b"\xAB" * 7, "bytes after the object must be left alone"
    counts = tcp_client.transfer_counts()
    assert counts["shared_reads"] == 0 and counts["network_reads"] == 2
    tcp_client.remove(key, force=True)


@pytest.mark.parametrize("size", [1, 4096, MiB + 5, 16 * MiB + 1, 64 * MiB])
def test_round_trip_through_shared_memory_is_byte_exact(cluster, client, tcp_client, prefix, size):
    key = f"{prefix}k"
    value = data(size, size + 1)
    assert cluster.shm_segment in client.shared_segments()
    client.put(key, value, preferred_segment=cluster.shm_segment)
    assert client.transfer_counts()["shared_writes"] == 1
    assert client.locate(key).replicas[0].segment == cluster.shm_segment
    out = np.zeros(size, np.uint8)
    assert client.get_into(key, out) == size
    assert out.tobytes() == value
    assert client.get(key) == value
    counts = client.transfer_counts()
    assert counts["shared_reads"] == 2 and counts["network_reads"] == 0 and counts["network_writes"] == 0
    # the same bytes through the node's socket
    assert tcp_client.get(key) == value
    client.remove(key, force=True)


def test_shared_memory_client_reads_other_nodes_over_the_socket(cluster, client, prefix):
    key = f"{prefix}k"
    value = data(3 * MiB, 5)
    client.put(key, value, preferred_segment=cluster.tcp_segment)
    assert client.get(key) == value
    c = client.transfer_counts()
    assert c["network_writes"] == 1 and c["network_reads"] == 1 and c["shared_reads"] == 0


def test_two_replicas_land_on_both_nodes_and_read_back(cluster, tcp_client, prefix):
    key = f"{prefix}k"
    value = data(2 * MiB + 3, 9)
    tcp_client.put(key, value, replicas=2)
    loc = tcp_client.locate(key)
    assert loc.size == len(value)
    assert sorted(r.segment for r in loc.replicas) == sorted([cluster.shm_segment, cluster.tcp_segment])
    assert all(r.type == "MEMORY" and r.status == "COMPLETE" for r in loc.replicas)
    assert tcp_client.get(key) == value


def test_put_parts_stores_the_concatenation_without_joining(cluster, client, tcp_client, prefix):
    parts = [data(10, 1), memoryview(data(17 * MiB, 2)), bytearray(data(3, 3)), np.arange(1000, dtype=np.int32)]
    joined = b"".join(bytes(p) if not isinstance(p, np.ndarray) else p.tobytes() for p in parts)
    tcp_client.put_parts(f"{prefix}net", *parts, preferred_segment=cluster.tcp_segment)
    client.put_parts(f"{prefix}shm", *parts, preferred_segment=cluster.shm_segment)
    assert tcp_client.get(f"{prefix}net") == joined
    assert tcp_client.get(f"{prefix}shm") == joined


# ---------------------------------------------------------------------------------- buffers

class FakeTensor:
    """What the client needs of a CPU torch tensor (torch is not installed here): numpy-backed."""

    def __init__(self, arr, device="cpu", contiguous=True):
        self.arr = arr
        self.device = type("Device", (), {"type": device, "__str__": lambda s: device})()
        self._contiguous = contiguous

    def data_ptr(self):
        return self.arr.ctypes.data

    def numel(self):
        return self.arr.size

    def element_size(self):
        return self.arr.itemsize

    def is_contiguous(self):
        return self._contiguous


def test_every_buffer_kind_is_read_and_written_in_place(client, tcp_client, prefix):
    m = mmap.mmap(-1, 8192)
    m[:] = data(8192, 4)
    matrix = np.arange(12 * 1000, dtype=np.float32).reshape(12, 1000)
    sources = {
        "bytes": b"plain bytes",
        "bytearray": bytearray(b"a bytearray"),
        "memoryview-slice": memoryview(data(1000, 1))[100:900],
        "numpy-2d-float32": matrix,
        "array.array": array.array("d", [1.5, 2.5, 3.5]),
        "mmap": m,
        "tensor": FakeTensor(np.arange(4096, dtype=np.float16)),
    }
    for name, src in sources.items():
        expected = src.arr.tobytes() if isinstance(src, FakeTensor) else bytes(memoryview(src).cast("B"))
        for c in (client, tcp_client):
            key = f"{prefix}{name}-{c is client}"
            c.put(key, src)
            assert c.get(key) == expected, name
    # destinations: numpy (any dtype and shape), a memoryview slice, mmap, a tensor
    key = f"{prefix}numpy-2d-float32-False"
    dst = np.zeros((12, 1000), np.float32)
    assert tcp_client.get_into(key, dst) == matrix.nbytes
    assert np.array_equal(dst, matrix)
    region = bytearray(matrix.nbytes + 100)
    assert tcp_client.get_into(key, memoryview(region)[50:]) == matrix.nbytes
    assert region[50:50 + matrix.nbytes] == matrix.tobytes() and region[:50] == bytes(50)
    m2 = mmap.mmap(-1, 8192)
    assert client.get_into(f"{prefix}mmap-True", m2) == 8192 and m2[:] == m[:]
    t = FakeTensor(np.zeros(4096, np.float16))
    assert client.get_into(f"{prefix}tensor-True", t) == 8192
    assert np.array_equal(t.arr, np.arange(4096, dtype=np.float16))


def test_bad_buffers_give_clear_errors_before_any_request(tcp_client, prefix):
    with pytest.raises(InvalidArgument) as e:
        tcp_client.put(f"{prefix}k", 12345)
    assert e.value.code == "INVALID_PARAMS" and "buffer protocol" in str(e.value)
    assert isinstance(e.value, TypeError)
    with pytest.raises(InvalidArgument):
        tcp_client.put(f"{prefix}k", "a str is not bytes")
    strided = np.arange(100, dtype=np.int64)[::2]
    with pytest.raises(InvalidArgument) as e:
        tcp_client.put(f"{prefix}k", strided)
    assert "contiguous" in str(e.value)
    tcp_client.put(f"{prefix}k", b"x" * 10)
    with pytest.raises(InvalidArgument) as e:
        tcp_client.get_into(f"{prefix}k", b"read-only bytes.")
    assert "read-only" in str(e.value)
    with pytest.raises(InvalidArgument) as e:
        tcp_client.put(f"{prefix}gpu", FakeTensor(np.zeros(4), device="cuda"))
    assert "CPU" in str(e.value)
    with pytest.raises(InvalidArgument):
        tcp_client.put(f"{prefix}nc", FakeTensor(np.zeros(4), contiguous=False))
    assert not tcp_client.exists(f"{prefix}gpu")


def test_get_into_a_small_buffer_is_buffer_overflow_and_touches_nothing(tcp_client, client, prefix):
    tcp_client.put(f"{prefix}k", data(1000, 2))
    for c in (tcp_client, client):
        small = bytearray(b"\x01" * 999)
        with pytest.raises(TiffinError) as e:
            c.get_into(f"{prefix}k", small)
        assert code_of(e) == "BUFFER_OVERFLOW"
        assert small == b"\x01" * 999


# ---------------------------------------------------------------------------------- keys and errors

def test_missing_keys(tcp_client, prefix):
    with pytest.raises(TiffinError) as e:
        tcp_client.get(f"{prefix}nothing")
    assert code_of(e) == "OBJECT_NOT_FOUND" and e.value.value == -704
    with pytest.raises(TiffinError) as e:
        tcp_client.get_into(f"{prefix}nothing", bytearray(10))
    assert code_of(e) == "OBJECT_NOT_FOUND"
    assert tcp_client.exists(f"{prefix}nothing") is False
    assert tcp_client.locate(f"{prefix}nothing") is None
    with pytest.raises(TiffinError) as e:
        tcp_client.remove(f"{prefix}nothing")
    assert code_of(e) == "OBJECT_NOT_FOUND"


def test_bad_keys(tcp_client):
    with pytest.raises(TiffinError) as e:
        tcp_client.put("", b"x")
    assert code_of(e) == "INVALID_KEY"
    with pytest.raises(InvalidArgument) as e:
        tcp_client.get(b"bytes-key")
    assert code_of(e) == "INVALID_KEY" and isinstance(e.value, TypeError)
    with pytest.raises(TiffinError) as e:
        tcp_client.put("bad\ud800key", b"x")
    assert code_of(e) == "INVALID_KEY" and "surrogate" in str(e.value)
    with pytest.raises(TiffinError) as e:
        tcp_client.put("k" * 5000, b"x")  # the master's limit, master.max-key-length
    assert code_of(e) == "INVALID_KEY"


def test_unicode_keys_round_trip(tcp_client, prefix):
    key = f"{prefix}ключ/鍵/🔑"
    tcp_client.put(key, b"unicode")
    assert tcp_client.get(key) == b"unicode"
    assert key in [k for k, _ in tcp_client.list(prefix)]


def test_oversized_value_is_no_available_handle_after_retries(tcp_client, prefix):
    huge = mmap.mmap(-1, 700 * MiB)  # more than the cluster holds; never touched (zero pages)
    try:
        with pytest.raises(TiffinError) as e:
            tcp_client.put(f"{prefix}huge", huge)
        assert code_of(e) == "NO_AVAILABLE_HANDLE"
    finally:
        huge.close()
    assert not tcp_client.exists(f"{prefix}huge")
    tcp_client.put(f"{prefix}after", b"still works")
    assert tcp_client.get(f"{prefix}after") == b"still works"


def test_put_of_an_existing_key_keeps_the_old_bytes_and_upsert_replaces_them(tcp_client, prefix):
    key = f"{prefix}k"
    tcp_client.put(key, b"first")
    tcp_client.put(key, b"second")  # Mooncake's rule: success, not overwritten
    tcp_client.put(f"{prefix}u", b"old value")
    tcp_client.put(f"{prefix}u", b"new", upsert=True)
    assert tcp_client.get(key) == b"first"
    assert tcp_client.get(f"{prefix}u") == b"new"
    with pytest.raises(TiffinError) as e:  # the get above holds a read lease
        tcp_client.put(f"{prefix}u", b"newer", upsert=True)
    assert code_of(e) == "OBJECT_HAS_LEASE"
    assert tcp_client.get(f"{prefix}u") == b"new"


def test_upsert_with_replace_leased_replaces_an_object_being_read(tcp_client, prefix):
    key = f"{prefix}u"
    tcp_client.put(key, b"old value")
    assert tcp_client.get(key) == b"old value"  # a read lease on the old object
    tcp_client.put(key, b"new value, longer", upsert=True, replace_leased=True)
    assert tcp_client.get(key) == b"new value, longer"
    results = tcp_client.batch_put([key, f"{prefix}fresh"], [b"third", b"f"], upsert=True, replace_leased=True)
    assert [r.ok for r in results] == [True, True]
    tcp_client.put_parts(key, b"fou", b"rth", upsert=True, replace_leased=True)
    assert tcp_client.get(key) == b"fourth"
    tcp_client.put(key, b"ignored", replace_leased=True)  # without upsert: an existing key is kept, as always
    assert tcp_client.get(key) == b"fourth"


def test_remove_respects_leases_unless_forced(tcp_client, prefix):
    key = f"{prefix}k"
    tcp_client.put(key, b"v")
    tcp_client.remove(key)  # never read: no lease
    tcp_client.put(key, b"v")
    tcp_client.get(key)
    with pytest.raises(TiffinError) as e:
        tcp_client.remove(key)
    assert code_of(e) == "OBJECT_HAS_LEASE"
    tcp_client.remove(key, force=True)
    assert not tcp_client.exists(key)


def test_a_put_with_a_ttl_expires_and_expire_persist_and_ttl_ms_move_deadlines(tcp_client, prefix):
    short, kept, batch = f"{prefix}short", f"{prefix}kept", [f"{prefix}b1", f"{prefix}b2"]
    tcp_client.put(short, b"soon gone", ttl=1.0)
    assert 0 < tcp_client.ttl_ms(short) <= 1000
    assert [r.code for r in tcp_client.batch_put(batch, [b"x", b"y"], ttl=60)] == ["OK", "OK"]
    assert all(59_000 < tcp_client.ttl_ms(k) <= 60_000 for k in batch)
    tcp_client.put(kept, b"kept")
    assert tcp_client.ttl_ms(kept) == -1
    assert tcp_client.expire(kept, 30)
    assert 29_000 < tcp_client.ttl_ms(kept) <= 30_000
    assert tcp_client.persist(kept) is True
    assert tcp_client.persist(kept) is False  # it had no deadline left
    assert tcp_client.ttl_ms(kept) == -1
    assert tcp_client.get(kept) == b"kept"
    deadline = time.monotonic() + 10
    while tcp_client.exists(short) and time.monotonic() < deadline:
        time.sleep(0.1)
    with pytest.raises(TiffinError) as e:
        tcp_client.get(short)
    assert code_of(e) == "OBJECT_NOT_FOUND"
    assert tcp_client.ttl_ms(short) == -2
    assert tcp_client.expire(short, 5) is False and tcp_client.persist(short) is False
    assert tcp_client.expire(batch[0], 0)  # goes now, as Redis's EXPIRE k 0
    assert not tcp_client.exists(batch[0])


def test_bad_times_to_live_are_refused(tcp_client, prefix):
    for ttl in (0, -1, float("nan"), True, "10"):
        with pytest.raises(TiffinError) as e:
            tcp_client.put(f"{prefix}k", b"v", ttl=ttl)
        assert code_of(e) == "INVALID_PARAMS", ttl
    with pytest.raises(TiffinError) as e:
        tcp_client.expire(f"{prefix}k", -5)
    assert code_of(e) == "INVALID_PARAMS"
    assert not tcp_client.exists(f"{prefix}k")


# ---------------------------------------------------------------------------------- batches

def test_batch_put_and_get_with_missing_duplicate_and_bad_keys(client, tcp_client, cluster, prefix):
    keys = [f"{prefix}a", f"{prefix}b", f"{prefix}a", "", f"{prefix}c"]
    values = [data(100, 1), data(17 * MiB, 2), data(50, 3), b"x", np.arange(10, dtype=np.int8)]
    results = tcp_client.batch_put(keys, values)
    assert [r.key for r in results] == keys
    assert [r.code for r in results] == ["OK", "OK", "OK", "INVALID_KEY", "OK"]
    assert results[3].error.code == "INVALID_KEY"
    with pytest.raises(TiffinError):
        results[3].unwrap()
    # the duplicate counted as existing: the first value stays
    got = client.batch_get([f"{prefix}a", f"{prefix}missing", f"{prefix}b", f"{prefix}a", f"{prefix}c"])
    assert [r.code for r in got] == ["OK", "OBJECT_NOT_FOUND", "OK", "OK", "OK"]
    assert got[0].value == values[0] and got[3].value == values[0]
    assert got[2].value == values[1] and got[4].value == bytes(range(10))
    assert got[1].value is None and not got[1].ok
    # into buffers: one too small, one missing
    bufs = [bytearray(100), bytearray(10), np.zeros(17 * MiB, np.uint8), bytearray(5)]
    res = tcp_client.batch_get_into([f"{prefix}a", f"{prefix}b", f"{prefix}b", f"{prefix}zzz"], bufs)
    assert [(r.code, r.value) for r in res] == [("OK", 100), ("BUFFER_OVERFLOW", None), ("OK", 17 * MiB),
                                                ("OBJECT_NOT_FOUND", None)]
    assert bytes(bufs[0]) == values[0] and bufs[2].tobytes() == values[1] and bufs[1] == bytes(10)
    ex = tcp_client.batch_exists([f"{prefix}a", f"{prefix}zzz", f"{prefix}c"])
    assert [(r.code, r.value) for r in ex] == [("OK", True), ("OK", False), ("OK", True)]
    rm = tcp_client.batch_remove([f"{prefix}a", f"{prefix}zzz"], force=True)
    assert [r.code for r in rm] == ["OK", "OBJECT_NOT_FOUND"]
    assert tcp_client.batch_get([]) == [] and tcp_client.batch_put([], []) == []


def test_batch_put_accepts_a_mapping_and_replicas(tcp_client, prefix):
    items = {f"{prefix}{i}": data(1000 + i, i) for i in range(20)}
    assert all(r.ok for r in tcp_client.batch_put(items, replicas=2))
    got = tcp_client.batch_get(list(items))
    assert [r.value for r in got] == list(items.values())
    assert all(len(tcp_client.locate(k).replicas) == 2 for k in list(items)[:3])


def test_a_batch_put_waits_out_another_writers_put_of_one_of_its_keys(cluster, tcp_client, prefix):
    """Two engines storing the same prefix's pages: the key another writer is still writing is put again once that
    put ends (revoked here, so this batch writes it), instead of failing at once with REPLICA_IS_NOT_READY."""
    shared, mine = f"{prefix}shared", f"{prefix}mine"
    with tiffin.Client.connect(cluster.master, shared_memory=False) as other:
        other._rpc(Op.PUT_START, pb.PutStartRequest(client_id=other.client_id, key=shared, size=3,
                                                    options=pb.PutOptionsMsg(replicas=1), put_id=7), pb.PutStartReply)
        revoke = threading.Timer(0.1, lambda: other._rpc(Op.PUT_REVOKE, pb.KeyRequest(client_id=other.client_id,
                                                                                        key=shared), pb.Empty))
        revoke.start()
        try:
            results = tcp_client.batch_put({shared: b"abc", mine: b"d"})
        finally:
            revoke.join()
    assert [r.code for r in results] == ["OK", "OK"]
    assert tcp_client.get(shared) == b"abc" and tcp_client.get(mine) == b"d"


def test_bad_put_options(tcp_client, prefix):
    with pytest.raises(TiffinError) as e:
        tcp_client.put(f"{prefix}k", b"x", replicas=0)
    assert code_of(e) == "INVALID_PARAMS" and not isinstance(e.value, TypeError)
    with pytest.raises(InvalidArgument):
        tcp_client.put(f"{prefix}k", b"x", replicas="2")
    with pytest.raises(InvalidArgument):
        tcp_client.put(f"{prefix}k", b"x", preferred_segment=3)
    assert not tcp_client.exists(f"{prefix}k")


def test_batch_argument_errors(tcp_client, prefix):
    with pytest.raises(TiffinError) as e:
        tcp_client.batch_put([f"{prefix}a", f"{prefix}b"], [b"1"])
    assert code_of(e) == "INVALID_PARAMS"
    with pytest.raises(InvalidArgument):
        tcp_client.batch_get(f"{prefix}a")  # a str, not a list of keys
    with pytest.raises(InvalidArgument):
        tcp_client.batch_get([f"{prefix}a", 7])
    with pytest.raises(TiffinError) as e:
        tcp_client.batch_get_into([f"{prefix}a"], [bytearray(1), bytearray(1)])
    assert code_of(e) == "INVALID_PARAMS"


# ---------------------------------------------------------------------------------- queries

def test_list_stat_and_remove_by_regex(tcp_client, cluster, prefix):
    for i in range(5):
        tcp_client.put(f"{prefix}x{i}", data(10 + i, i))
    tcp_client.put(f"{prefix}y", b"y")
    listing = tcp_client.list(prefix)
    assert listing == [(f"{prefix}x{i}", 10 + i) for i in range(5)] + [(f"{prefix}y", 1)]
    assert listing.truncated is False
    short = tcp_client.list(prefix, limit=2)
    assert len(short) == 2 and short.truncated is True
    st = tcp_client.stat()
    assert st["version"] == "0.1.0" and st["live_nodes"] == 2 and st["keys"] >= 6
    assert {g["name"] for g in st["segments"]} == {cluster.shm_segment, cluster.tcp_segment}
    assert tcp_client.remove_by_regex("^" + prefix.replace("/", "/") + "x[0-3]$") == 4
    assert [k for k, _ in tcp_client.list(prefix)] == [f"{prefix}x4", f"{prefix}y"]
    with pytest.raises(TiffinError) as e:
        tcp_client.remove_by_regex("(")
    assert code_of(e) == "INVALID_PARAMS"


# ---------------------------------------------------------------------------------- same-host path

def test_same_host_reads_check_the_mount_epoch(cluster, client, prefix):
    """A replica whose segment was re-mounted (epoch moved) must not be read through the mapping:
    the client falls back to the node, which refuses the stale descriptor."""
    key = f"{prefix}k"
    client.put(key, data(4096, 1), preferred_segment=cluster.shm_segment)
    path = [p for p in os.listdir(cluster.shm_dir) if cluster.shm_segment in p][0]
    path = os.path.join(cluster.shm_dir, path)
    size = os.path.getsize(path)
    epoch_at = size - 4096  # the page after the segment's bytes
    with open(path, "r+b") as f:
        mm = mmap.mmap(f.fileno(), size)
    try:
        old = struct.unpack_from("=Q", mm, epoch_at)[0]
        assert old == client.locate(key).replicas[0].mount_epoch
        struct.pack_into("=Q", mm, epoch_at, old + 1000)
        with pytest.raises(TiffinError) as e:
            client.get(key)
        assert code_of(e) == "REPLICA_IS_GONE"
        assert client.transfer_counts()["shared_reads"] == 0
    finally:
        struct.pack_into("=Q", mm, epoch_at, old)
        mm.close()
    assert client.get(key) == data(4096, 1)
    assert client.transfer_counts()["shared_reads"] == 1


def test_closed_client_refuses_calls(cluster):
    c = tiffin.Client.connect(cluster.master)
    c.close()
    c.close()
    with pytest.raises(TiffinError) as e:
        c.get("anything")
    assert code_of(e) == "UNAVAILABLE_IN_CURRENT_STATUS"
    with tiffin.Client.connect(cluster.master) as c2:
        assert repr(c2).startswith("tiffin.Client(")
    assert c2.closed


# ---------------------------------------------------------------------------------- threads

def test_concurrent_threads_share_one_client(cluster, client, prefix):
    errors = []
    shared_key = f"{prefix}shared"
    shared_value = data(3 * MiB, 77)
    client.put(shared_key, shared_value, replicas=2)

    def work(t):
        try:
            rnd = random.Random(t)
            buf = bytearray(2 * MiB)
            for i in range(12):
                size = rnd.choice([1, 1000, 64 * 1024, 2 * MiB])
                key = f"{prefix}{t}/{i}"
                v = data(size, t * 1000 + i)
                client.put(key, v, preferred_segment=rnd.choice([None, cluster.shm_segment, cluster.tcp_segment]))
                n = client.get_into(key, buf)
                assert n == size and bytes(buf[:n]) == v
                assert client.get(shared_key) == shared_value
                if i % 4 == 3:
                    ks = [f"{prefix}{t}/{j}" for j in range(i - 3, i + 1)]
                    got = client.batch_get(ks)
                    assert all(r.ok for r in got)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    # pooled: at most one connection per thread per server (plus SEGMENT_INFO ones), not one per call
    assert client.connections_opened() <= 8 * 3 + 4


# ---------------------------------------------------------------------------------- read hints

@pytest.mark.parametrize("size", [4096, 3 * MiB])
def test_read_hints_are_used_only_when_the_master_confirms_them(cluster, tcp_client, prefix, size):
    key = f"{prefix}k"
    tcp_client.put(key, data(size, 1), preferred_segment=cluster.tcp_segment)
    assert tcp_client.get(key) == data(size, 1)  # the node read went out with the lookup
    assert tcp_client.transfer_counts()["hints_confirmed"] == 1
    with tiffin.Client.connect(cluster.master, shared_memory=False) as other:
        other.remove(key, force=True)
        other.put(key, data(size, 2), preferred_segment=cluster.tcp_segment)  # same size, new replica
        buf = bytearray(size)
        assert tcp_client.get_into(key, buf) == size and bytes(buf) == data(size, 2)
        assert tcp_client.transfer_counts()["hints_refuted"] == 1
        other.remove(key, force=True)
        other.put(key, data(size + 10, 3), preferred_segment=cluster.tcp_segment)  # another size
        assert tcp_client.get(key) == data(size + 10, 3)
        other.remove(key, force=True)
    with pytest.raises(TiffinError) as e:  # gone: the speculative answer is thrown away
        tcp_client.get(key)
    assert code_of(e) == "OBJECT_NOT_FOUND"
    counts = tcp_client.transfer_counts()
    assert counts["hints_refuted"] == 2 and counts["hints_confirmed"] == 1
    tcp_client.put(f"{prefix}after", b"after")
    assert tcp_client.get(f"{prefix}after") == b"after"  # the connection kept (or replaced) is sound
    with tiffin.Client.connect(cluster.master, shared_memory=False, read_hints=0) as plain:
        plain.put(f"{prefix}plain", b"p")
        assert plain.get(f"{prefix}plain") == b"p"
        assert plain.transfer_counts()["hints_confirmed"] == 0


def test_reads_carry_the_masters_grant_and_a_node_refuses_an_altered_one(tcp_client, prefix):
    """Every DATA_READ carries its replica's grant (docs/SECURITY.md, "Data-plane access"): the client's reads work,
    the same request with the grant moved to other bytes, or without it, is refused by the node."""
    value = bytes(range(256)) * 16
    tcp_client.put(prefix + "granted", value)
    tcp_client.put(prefix + "neighbour", value[::-1])
    assert tcp_client.get(prefix + "granted") == value
    r = next(x for x in tcp_client.locate(prefix + "granted").replicas if x.type == "MEMORY")
    assert r.grant is not None and r.grant[0] == 1  # a lookup grants reads
    pool = tcp_client._pool
    into = [memoryview(bytearray(len(value)))]
    ok = pb.DataRequest(segment=r.segment, offset=r.offset, length=r.size, mount_epoch=r.mount_epoch, grant=grant_msg(r))
    pool.call(r.endpoint, Op.DATA_READ, ok, None, bulk_in=into)
    assert bytes(into[0]) == value
    moved = grant_msg(r)
    moved.offset = r.offset + r.size  # the bytes after the object (another's, or free)
    for request, message in (
            (pb.DataRequest(segment=r.segment, offset=moved.offset, length=r.size, mount_epoch=r.mount_epoch,
                            grant=moved), "its grant's MAC does not match"),
            (pb.DataRequest(segment=r.segment, offset=r.offset, length=r.size, mount_epoch=r.mount_epoch),
             "it carries no access grant")):
        with pytest.raises(tiffin.TiffinError) as e:
            pool.call(r.endpoint, Op.DATA_READ, request, None, bulk_in=into)
        assert e.value.code == "ILLEGAL_CLIENT" and message in str(e.value)


@pytest.mark.parametrize("where", ["shm", "tcp"])
def test_get_range_into_reads_only_the_range(client, tcp_client, cluster, prefix, where):
    """A range from the shared-memory node (copied from the mapping) and from the TCP node (DATA_READs from the
    offset on), clipped at the object's end, into bytearrays and numpy arrays; the refusals."""
    value = random.Random(7).randbytes(3 << 20)
    key = f"{prefix}r-{where}"
    c = client if where == "shm" else tcp_client
    c.put(key, value, preferred_segment=cluster.shm_segment if where == "shm" else cluster.tcp_segment)
    buf = bytearray(100)
    before = c.transfer_counts()
    assert c.get_range_into(key, 1_000_000, buf) == 100 and bytes(buf) == value[1_000_000:1_000_100]
    path = "shared_reads" if where == "shm" else "network_reads"
    assert c.transfer_counts()[path] == before[path] + 1
    arr = np.zeros(1 << 20, np.uint8)
    assert c.get_range_into(key, 123_457, arr) == 1 << 20
    assert arr.tobytes() == value[123_457:123_457 + (1 << 20)]
    tail = bytearray(100)
    assert c.get_range_into(key, len(value) - 10, tail) == 10
    assert bytes(tail[:10]) == value[-10:] and not any(tail[10:])
    assert c.get_range_into(key, len(value), tail) == 0
    with pytest.raises(TiffinError) as past:
        c.get_range_into(key, len(value) + 1, tail)
    assert past.value.code == "INVALID_PARAMS"
    with pytest.raises(TiffinError) as missing:
        c.get_range_into(f"{prefix}missing", 0, tail)
    assert missing.value.code == "OBJECT_NOT_FOUND"
    with pytest.raises(InvalidArgument):
        c.get_range_into(key, -1, tail)
    with pytest.raises(InvalidArgument):
        c.get_range_into(key, 0, b"read-only")


def test_a_key_utf8_cannot_encode_fails_alone_in_batches(tcp_client, prefix):
    """A str key with an unpaired surrogate is INVALID_KEY for itself only in every batch call (batch calls
    never raise for one key); it used to refuse the whole batch, and the entry points the adapters use
    (``_batch_put``, ``_batch_get_into``, ``_get_into``) raised UnicodeEncodeError."""
    bad, a, b = "a\udc80", f"{prefix}a", f"{prefix}b"
    assert [r.code for r in tcp_client.batch_put([a, bad, b], [b"1", b"2", b"3"])] == ["OK", "INVALID_KEY", "OK"]
    got = tcp_client.batch_get([bad, a, b])
    assert [(r.code, r.value) for r in got] == [("INVALID_KEY", None), ("OK", b"1"), ("OK", b"3")]
    bufs = [bytearray(4), bytearray(4)]
    assert [(r.code, r.value) for r in tcp_client.batch_get_into([a, bad], bufs)] == [("OK", 1), ("INVALID_KEY", None)]
    assert bufs[0][:1] == b"1"
    assert [(r.code, r.value) for r in tcp_client.batch_exists([bad, a])] == [("INVALID_KEY", None), ("OK", True)]
    assert [r.code for r in tcp_client.batch_remove([a, bad], force=True)] == ["OK", "INVALID_KEY"]
    assert [r.code for r in tcp_client.batch_get([bad])] == ["INVALID_KEY"]
    opts = pb.PutOptionsMsg(replicas=1)
    srcs = [B.Chunks([memoryview(b"x")]), B.Chunks([memoryview(b"y")])]
    assert [r.code for r in tcp_client._batch_put([bad, a], srcs, opts)] == ["INVALID_KEY", "OK"]
    dsts = [B.Chunks([memoryview(bytearray(2))]) for _ in range(2)]
    assert [r.code for r in tcp_client._batch_get_into([a, bad], dsts)] == ["OK", "INVALID_KEY"]
    with pytest.raises(TiffinError) as e:
        tcp_client._get_into(bad, dsts[0])
    assert code_of(e) == "INVALID_KEY"
    with pytest.raises(InvalidArgument):
        tcp_client.batch_get([a, b"\xff"])  # not a str: a wrong argument type, the whole batch
    # a prefix or regex that is not valid Unicode is refused as such, before any request (no key can match it)
    for call in (lambda: tcp_client.list(bad), lambda: tcp_client.remove_by_regex(bad)):
        with pytest.raises(TiffinError) as e:
            call()
        assert code_of(e) == "INVALID_PARAMS" and "unpaired surrogate" in str(e.value)
