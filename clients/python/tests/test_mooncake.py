"""Mooncake's Python API (tiffin.mooncake) against a real cluster: every return convention."""

from __future__ import annotations

import ctypes
import logging
import random
import sys

import numpy as np
import pytest

from tiffin.mooncake import BufferHandle, MooncakeDistributedStore, ReplicateConfig, install_as_mooncake

MiB = 1 << 20


def data(n, seed):
    return random.Random(seed).randbytes(n)


@pytest.fixture()
def store(cluster):
    s = MooncakeDistributedStore()
    # SGLang's call: seven positional arguments
    assert s.setup("localhost", "P2PHANDSHAKE", 512 * MiB, 128 * MiB, "tcp", "", cluster.master) == 0
    yield s
    assert s.close() == 0


def test_setup_forms_and_lifecycle(cluster, caplog):
    s = MooncakeDistributedStore()
    assert s.health_check() == 1
    assert s.put("k", b"v") == -600 and s.get("k") == b"" and s.is_exist("k") == -1  # before setup
    assert s.get_into("k", 1, 1) == -600 and s.batch_is_exist(["a", "b"]) == [-1, -1]
    with caplog.at_level(logging.WARNING, logger="tiffin.mooncake"):
        assert s.setup({"local_hostname": "h:1", "metadata_server": "http://meta:8080/metadata",
                        "master_server_address": cluster.master, "global_segment_size": "4 GB",
                        "local_buffer_size": "0", "protocol": "rdma", "device_name": "mlx5_0"}) == 0
    assert s.health_check() == 0 and s.get_hostname() == "h:1"
    assert s.setup("h", "P2PHANDSHAKE", 0, 0, "tcp", "", cluster.master) == -600  # already set up
    assert s.close() == 0 and s.close() == 0 and s.health_check() == 1
    other = MooncakeDistributedStore()
    assert other.setup("h", "P2PHANDSHAKE", master_server_addr=cluster.master, tenant_id="team-a") == -600
    assert other.setup_dummy(MiB, MiB, "127.0.0.1:50052") == -1012
    with pytest.raises(TypeError):
        other.setup("only-a-hostname")
    with pytest.raises(TypeError):
        other.setup(123, "P2PHANDSHAKE")


def test_init_all_uses_the_default_master(cluster, monkeypatch):
    monkeypatch.setenv("TIFFIN_MASTER_ADDRESS", cluster.master)
    s = MooncakeDistributedStore()
    assert s.init_all("tcp", "") == 0
    assert s.put("init-all-key", b"x") == 0 and s.get("init-all-key") == b"x"
    s.close()


def test_bytes_api(store, prefix):
    k = f"{prefix}k"
    assert store.put(k, b"Hello, Mooncake Store!") == 0
    assert store.put(k, b"other") == 0  # existing key: 0, not overwritten
    assert store.get(k) == b"Hello, Mooncake Store!"
    assert store.get(f"{prefix}missing") == b""
    # Tiffin stores empty values (Mooncake's master refuses them, -600); Mooncake's get reads one as b"", as a miss
    assert store.put(f"{prefix}empty", b"") == 0
    assert store.get(f"{prefix}empty") == b"" and store.is_exist(f"{prefix}empty") == 1
    assert store.get_size(f"{prefix}empty") == 0
    weights = np.random.randn(100, 100).astype(np.float32)
    assert store.put(f"{prefix}w", weights.tobytes()) == 0
    back = np.frombuffer(store.get(f"{prefix}w"), dtype=np.float32).reshape(100, 100)
    assert np.array_equal(back, weights)
    assert store.put(f"{prefix}np", weights) == 0  # any buffer, as pybind11's py::buffer
    assert store.put_parts(f"{prefix}parts", b"Hello, ", b"World!", memoryview(b" From Tiffin")) == 0
    assert store.get(f"{prefix}parts") == b"Hello, World! From Tiffin"
    assert store.put_batch([f"{prefix}b1", f"{prefix}b2"], [b"v1", b"v2"]) == 0
    assert store.get_batch([f"{prefix}b1", f"{prefix}nope", f"{prefix}b2"]) == [b"v1", b"", b"v2"]
    assert store.upsert(f"{prefix}u", b"one") == 0 and store.upsert(f"{prefix}u", b"two") == 0
    assert store.get(f"{prefix}u") == b"two"
    # as in Mooncake, an upsert replaces an object that was just read (the get above holds a read lease)
    assert store.upsert(f"{prefix}u", b"three!") == 0
    assert store.get(f"{prefix}u") == b"three!"
    assert store.upsert_parts(f"{prefix}u", b"fo", b"ur") == 0
    assert store.get(f"{prefix}u") == b"four"
    assert store.upsert_batch([f"{prefix}u", f"{prefix}b1"], [b"five", b"v1 again"]) == 0
    assert store.get_batch([f"{prefix}u", f"{prefix}b1"]) == [b"five", b"v1 again"]
    with pytest.raises(TypeError):
        store.put(f"{prefix}bad", 42)


def test_existence_size_and_removal(store, prefix):
    k = f"{prefix}k"
    assert store.is_exist(k) == 0
    assert store.put(k, b"12345") == 0
    assert store.is_exist(k) == 1
    assert store.batch_is_exist([k, f"{prefix}nope", k]) == [1, 0, 1]
    assert store.get_size(k) == 5 and store.get_size(f"{prefix}nope") == -704
    assert store.remove(k) == -706  # get_size's lookup granted a read lease, as in Mooncake
    assert store.remove(k, True) == 0 and store.remove(k) == -704
    for i in range(3):
        assert store.put(f"{prefix}r{i}", b"x") == 0
    assert store.remove_by_regex("^" + prefix + "r[01]$") == 2
    assert store.remove_by_regex("(") == -600
    assert store.remove_by_regex(b"\xff") == -600  # not UTF-8: no key can match it (it raised UnicodeEncodeError)
    assert store.batch_remove([f"{prefix}r2", f"{prefix}r0"]) == [0, -704]


def test_zero_copy_pointer_api(store, prefix, cluster):
    src = np.random.randint(0, 255, 3 * MiB + 17, dtype=np.uint8)
    dst = np.zeros_like(src)
    assert store.register_buffer(src.ctypes.data, src.nbytes) == 0
    assert store.register_buffer(dst.ctypes.data, dst.nbytes) == 0
    assert store.put_from(f"{prefix}t", src.ctypes.data, src.nbytes) == 0
    assert store.get_into(f"{prefix}t", dst.ctypes.data, dst.nbytes) == src.nbytes
    assert np.array_equal(src, dst)
    assert store.get_into(f"{prefix}t", dst.ctypes.data, 100) == -10  # BUFFER_OVERFLOW
    assert store.get_into(f"{prefix}missing", dst.ctypes.data, dst.nbytes) == -704
    # unregistered memory works too (Tiffin needs no registration)
    raw = (ctypes.c_char * 64)()
    assert store.put_from(f"{prefix}raw", ctypes.addressof(raw), 64) == 0
    assert store.unregister_buffer(src.ctypes.data) == 0 and store.unregister_buffer(src.ctypes.data) == -600
    with pytest.raises(TypeError):
        store.put_from(f"{prefix}x", "not a pointer", 10)


def _inaccessible(size):
    """An address range the process may not touch, as a GPU pointer is to the CPU (a PROT_NONE mapping)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    addr = libc.mmap(None, size, 0, 0x02 | 0x20, -1, 0)  # PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS
    assert addr not in (None, ctypes.c_void_p(-1).value)
    return addr


def test_pointers_to_memory_the_process_cannot_touch_are_refused_not_a_crash(store, prefix, caplog):
    """vLLM's Mooncake connector registers its GPU KV caches: reading them through ctypes killed the process with
    SIGSEGV at the first batch_get_into. Such a range is INVALID_PARAMS, at register_buffer and at every pointer
    call; host memory still works."""
    size = 1 * MiB
    device = _inaccessible(size)
    with caplog.at_level(logging.ERROR, logger="tiffin.mooncake"):
        assert store.register_buffer(device, size) == -600
    assert "not host memory" in caplog.text
    assert store.put(f"{prefix}k", b"x" * 4096) == 0
    assert store.get_into(f"{prefix}k", device, 4096) == -600
    assert store.batch_get_into([f"{prefix}k"], [device], [4096]) == [-600]
    assert store.put_from(f"{prefix}p", device, 4096) == -600
    assert store.batch_put_from([f"{prefix}q"], [device], [4096]) == [-600]
    assert store.batch_get_into_multi_buffers([f"{prefix}k"], [[device]], [[4096]]) == [-600]
    assert store.is_exist(f"{prefix}p") == 0 and store.is_exist(f"{prefix}q") == 0
    # a range that starts in host memory and runs past its mapping's end
    host = np.zeros(4096, dtype=np.uint8)
    assert store.get_into(f"{prefix}k", host.ctypes.data, 4096) == 4096
    assert store.register_buffer(host.ctypes.data, 1 << 40) == -600


def test_host_memory_ranges_merge_adjacent_mappings_and_are_read_again_when_unknown(tmp_path):
    from tiffin._hostmem import HostMemory
    from tiffin.errors import TiffinError
    maps = tmp_path / "maps"
    maps.write_text("1000-2000 rw-p 00000000 00:00 0\n2000-3000 rw-s 00000000 00:00 0 /dev/shm/x\n"
                    "3000-4000 ---p 00000000 00:00 0\n5000-6000 r--p 00000000 00:00 0\n")
    hm = HostMemory(str(maps))
    hm.check(0x1000, 0x2000, "spanning two adjacent rw mappings")
    for ptr, size in ((0x2800, 0x1000), (0x5000, 0x10), (0x0800, 0x900), (0x7000, 1)):
        with pytest.raises(TiffinError) as e:
            hm.check(ptr, size, "b")
        assert e.value.code == "INVALID_PARAMS"
    maps.write_text("1000-3000 rw-p 00000000 00:00 0\n7000-8000 rw-p 00000000 00:00 0\n")  # mapped since
    hm.check(0x7000, 0x1000, "read again")
    assert HostMemory(str(tmp_path / "absent")).check(0x10, 1, "no maps: not checked") is None


def test_batch_zero_copy_and_multi_buffers(store, prefix):
    n = 6
    page = 64 * 1024
    pool = np.random.randint(0, 255, (n, 2, page), dtype=np.uint8)  # a host KV pool: k and v per page
    keys = [f"{prefix}p{i}" for i in range(n)]
    ptrs = [pool[i].ctypes.data for i in range(n)]
    assert store.batch_put_from(keys, ptrs, [2 * page] * n) == [0] * n
    assert store.batch_put_from(keys[:2] + [""], ptrs[:3], [2 * page] * 3) == [0, 0, -400]
    out = np.zeros_like(pool)
    res = store.batch_get_into(keys + [f"{prefix}missing"], [out[i].ctypes.data for i in range(n)] + [ptrs[0]],
                               [2 * page] * n + [10])
    assert res == [2 * page] * n + [-704]
    assert np.array_equal(out, pool)
    # multi-buffer objects: each object made of its k and v buffers (vLLM's layout), read back scattered
    mkeys = [f"{prefix}m{i}" for i in range(n)]
    all_ptrs = [[pool[i, 0].ctypes.data, pool[i, 1].ctypes.data] for i in range(n)]
    all_sizes = [[page, page] for _ in range(n)]
    assert store.batch_put_from_multi_buffers(mkeys, all_ptrs, all_sizes) == [0] * n
    back = np.zeros((n, 2, page), np.uint8)
    got = store.batch_get_into_multi_buffers(mkeys, [[back[i, 1].ctypes.data, back[i, 0].ctypes.data] for i in range(n)],
                                             all_sizes)
    assert got == [2 * page] * n
    assert np.array_equal(back[:, 1], pool[:, 0]) and np.array_equal(back[:, 0], pool[:, 1])
    small = np.zeros(page, np.uint8)
    assert store.batch_get_into_multi_buffers(mkeys[:1], [[small.ctypes.data]], [[page]]) == [-10]
    assert store.batch_get_into(keys, ptrs[:2], [1, 2]) == [-600] * n  # mismatched lengths
    # upserts from pointers replace the pages just read (under read leases), as Mooncake's do
    fresh = np.random.randint(0, 255, (n, 2, page), dtype=np.uint8)
    fptrs = [fresh[i].ctypes.data for i in range(n)]
    assert store.batch_put_from(keys, fptrs, [2 * page] * n) == [0] * n  # a put keeps existing objects
    assert store.batch_upsert_from(keys, fptrs, [2 * page] * n) == [0] * n
    assert store.upsert_from(keys[0], pool[0].ctypes.data, 2 * page) == 0
    res = store.batch_get_into(keys, [out[i].ctypes.data for i in range(n)], [2 * page] * n)
    assert res == [2 * page] * n
    assert np.array_equal(out[0], pool[0]) and np.array_equal(out[1:], fresh[1:])


def test_buffer_handles(store, prefix):
    assert store.put(f"{prefix}a", data(100_000, 1)) == 0
    h = store.get_buffer(f"{prefix}a")
    assert isinstance(h, BufferHandle) and len(h) == h.size() == 100_000
    assert bytes(memoryview(h)) == data(100_000, 1)
    assert ctypes.string_at(h.ptr(), 10) == data(100_000, 1)[:10]
    assert np.frombuffer(h, dtype=np.uint8).size == 100_000
    hs = store.batch_get_buffer([f"{prefix}a", f"{prefix}missing"])
    assert hs[1] is None and bytes(hs[0]) == data(100_000, 1)
    assert store.get_buffer(f"{prefix}missing") is None


def test_replicate_config(store, prefix, cluster):
    cfg = ReplicateConfig()
    assert cfg.replica_num == 1 and cfg.with_hard_pin is False and cfg.preferred_segment == ""
    with pytest.raises(AttributeError):
        cfg.no_such_field = 1
    cfg.replica_num = 2
    cfg.with_hard_pin = True
    assert store.put(f"{prefix}two", b"x" * 1000, cfg) == 0
    loc = store._c().locate(f"{prefix}two")
    assert len(loc.replicas) == 2
    one = ReplicateConfig()
    one.preferred_segment = cluster.shm_segment  # by segment name
    assert store.put(f"{prefix}by-name", b"y", one) == 0
    assert store._c().locate(f"{prefix}by-name").replicas[0].segment == cluster.shm_segment
    endpoint = cluster.node_info(cluster.tcp_node)["endpoint"]
    by_ep = ReplicateConfig()
    by_ep.preferred_segment = endpoint  # Mooncake style: the store's host:port
    assert store.put_from(f"{prefix}by-endpoint", ctypes.addressof((ctypes.c_char * 8)()), 8, by_ep) == 0
    assert store._c().locate(f"{prefix}by-endpoint").replicas[0].segment == cluster.tcp_segment
    with pytest.raises(TypeError):
        store.put(f"{prefix}cfg-type", b"z", "not a config")


def test_install_as_mooncake_lets_mooncake_imports_run_on_tiffin(cluster, prefix):
    saved = {k: sys.modules.pop(k) for k in ("mooncake", "mooncake.store") if k in sys.modules}
    try:
        assert install_as_mooncake() is True
        from mooncake.store import MooncakeDistributedStore as M, ReplicateConfig as R  # noqa: N814
        assert M is MooncakeDistributedStore and R is ReplicateConfig
        s = M()
        assert s.setup("localhost", "P2PHANDSHAKE", 0, 0, "tcp", "", cluster.master) == 0
        assert s.put(f"{prefix}via-shim", b"ok") == 0 and s.get(f"{prefix}via-shim") == b"ok"
        s.close()
        assert install_as_mooncake() is True  # idempotent
    finally:
        sys.modules.pop("mooncake", None)
        sys.modules.pop("mooncake.store", None)
        sys.modules.update(saved)


def test_bad_replica_counts(store, prefix):
    cfg = ReplicateConfig()
    cfg.replica_num = 0
    assert store.put(f"{prefix}zero", b"x", cfg) == -600
    cfg.replica_num = "two"
    with pytest.raises(TypeError):
        store.put(f"{prefix}str", b"x", cfg)


def test_get_into_ranges_reads_rows_of_tables(store, prefix, cluster):
    """Mooncake's ranged reads: rows of two tables (one on the shared-memory node, copied from the mapping; one on
    the TCP node, each range a DATA_READ of its own bytes) gathered into two buffers, in any order."""
    rows, width = 64, 4096
    table = np.random.randint(0, 255, (rows, width), dtype=np.uint8)
    keys = []
    for seg in (cluster.shm_segment, cluster.tcp_segment):
        cfg = ReplicateConfig()
        cfg.preferred_segment = seg
        keys.append(f"{prefix}table-{seg}")
        assert store.put_from(keys[-1], table.ctypes.data, table.nbytes, cfg) == 0
    picks = [5, 0, 63, 17]
    out = np.zeros((2, len(picks), width), np.uint8)
    dst = [[[i * width for i in range(len(picks))]] for _ in keys]
    src = [[[p * width for p in picks]] for _ in keys]
    sizes = [[[width] * len(picks)] for _ in keys]
    res = store.get_into_ranges([out[0].ctypes.data, out[1].ctypes.data], [[k] for k in keys], dst, src, sizes)
    assert res == [[[width] * 4], [[width] * 4]]
    assert np.array_equal(out[0], table[picks]) and np.array_equal(out[1], table[picks])
    # several keys in one buffer, a range across rows, a zero-size range, a key that fails beside one that reads
    two = np.zeros(3 * width, np.uint8)
    res = store.get_into_ranges([two.ctypes.data], [[keys[1], f"{prefix}missing", keys[0]]],
                                [[[0, width], [0], [2 * width]]], [[[10, 7 * width], [0], [3 * width + 5]]],
                                [[[width - 10, width], [8], [0]]])
    assert res == [[[width - 10, width], [-704], [0]]]
    assert np.array_equal(two[:width - 10], table.reshape(-1)[10:width])
    assert np.array_equal(two[width:2 * width], table[7])
    assert not two[2 * width:].any()


def test_get_into_ranges_refuses_bad_ranges(store, prefix):
    value = np.arange(1000, dtype=np.uint8)
    assert store.put_from(f"{prefix}v", value.ctypes.data, 1000) == 0
    out = np.zeros(1000, np.uint8)
    ptr = out.ctypes.data
    assert store.get_into_ranges([ptr], [[f"{prefix}v"]], [[[0]]], [[[990]]], [[[11]]]) == [[[-600]]]  # past the end
    assert store.get_into_ranges([ptr], [[f"{prefix}v"]], [[[0]]], [[[-1]]], [[[1]]]) == [[[-600]]]
    assert store.get_into_ranges([ptr], [[f"{prefix}v"]], [[[0, 1]]], [[[0]]], [[[1, 1]]]) == [[[-600, -600]]]
    assert store.get_into_ranges([ptr, ptr], [[f"{prefix}v"]], [[[0]]], [[[0]]], [[[1]]]) == []  # 2 buffers, 1 list
    assert store.get_into_ranges([ptr], [["", f"{prefix}v"]], [[[0], [0]]], [[[0], [0]]], [[[1], [1]]]) == [[[-400], [1]]]
    assert store.register_buffer(ptr, 1000) == 0
    assert store.get_into_ranges([ptr], [[f"{prefix}v"]], [[[500]]], [[[0]]], [[[600]]]) == [[[-600]]]  # past the buffer
    assert store.get_into_ranges([ptr], [[f"{prefix}v"]], [[[500]]], [[[0]]], [[[500]]]) == [[[500]]]
    assert np.array_equal(out[500:], value[:500]) and not out[:500].any()
    assert store.unregister_buffer(ptr) == 0


@pytest.mark.parametrize("bad", [b"\xff", "a\udc80"], ids=["non-utf8-bytes", "unpaired-surrogate"])
def test_a_key_utf8_cannot_encode_fails_alone_in_every_batch_call(store, prefix, bad):
    """A key that is not UTF-8 (bytes that do not decode, a str with an unpaired surrogate) is INVALID_KEY
    (-400, b"", None, -1: each call's convention) for itself only: the other keys of the batch get their real
    results. These calls used to raise UnicodeEncodeError, or fail every key."""
    good, gone = f"{prefix}good", f"{prefix}missing"
    assert store.put(good, b"0123456789") == 0
    assert store.put(bad, b"x") == -400 and store.get(bad) == b"" and store.is_exist(bad) == -1  # as before
    buf = ctypes.create_string_buffer(100)
    p = ctypes.addressof(buf)
    assert store.batch_get_into([good, bad], [p, p + 50], [10, 10]) == [10, -400]
    assert buf.raw[:10] == b"0123456789"
    assert store.batch_get_into_multi_buffers([bad, good], [[p + 50], [p + 20, p + 25]], [[10], [5, 5]]) == [-400, 10]
    assert buf.raw[20:30] == b"0123456789"
    assert store.get_batch([good, bad, gone]) == [b"0123456789", b"", b""]
    handles = store.batch_get_buffer([bad, good])
    assert handles[0] is None and bytes(handles[1]) == b"0123456789"
    assert store.get_buffer(bad) is None
    assert store.batch_is_exist([good, bad, gone]) == [1, -1, 0]
    ctypes.memmove(p, b"abcdefghij", 10)
    assert store.batch_put_from([f"{prefix}p1", bad], [p, p], [10, 10]) == [0, -400]
    assert store.batch_upsert_from([bad, f"{prefix}p2"], [p, p], [5, 5]) == [-400, 0]
    assert store.batch_put_from_multi_buffers([f"{prefix}p3", bad], [[p, p + 5], [p]], [[5, 5], [10]]) == [0, -400]
    assert store.put_batch([f"{prefix}p4", bad], [b"four", b"x"]) == -400  # the first negative code...
    assert store.get_batch([f"{prefix}p1", f"{prefix}p2", f"{prefix}p3", f"{prefix}p4"]) == [
        b"abcdefghij", b"abcde", b"abcdefghij", b"four"]  # ...but the good keys were stored
    assert store.batch_remove([f"{prefix}p4", bad, gone], force=True) == [0, -400, -704]
