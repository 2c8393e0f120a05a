"""The SGLang and LMCache plug-ins, called as the engines call them (numpy buffers stand in for the
pinned host pool and LMCache's memory objects), against a real cluster."""

from __future__ import annotations

import asyncio
import importlib
import random
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pytest

MiB = 1 << 20


# ---------------------------------------------------------------------------------- SGLang HiCache

@dataclass
class StorageConfig:
    """The fields of SGLang's HiCacheStorageConfig the backend reads."""

    tp_rank: int = 0
    tp_size: int = 1
    pp_rank: int = 0
    pp_size: int = 1
    is_mla_model: bool = False
    model_name: Optional[str] = "meta-llama/Llama-3.1-8B"
    extra_config: dict = field(default_factory=dict)


class HostPool:
    """A page_first host KV pool: per page a K part and a V part (MHA) or one part (MLA), with
    SGLang's get_page_buffer_meta(indices) -> (pointers, sizes)."""

    def __init__(self, pages=16, page_size=4, token_bytes=1024, mla=False):
        self.page_size = page_size
        self.parts = 1 if mla else 2
        self.item = page_size * token_bytes
        self.kv_buffer = np.zeros((pages, self.parts, self.item), np.uint8)

    def get_page_buffer_meta(self, indices):
        ptrs, sizes = [], []
        for start in list(indices)[::self.page_size]:
            page = int(start) // self.page_size
            for part in range(self.parts):
                ptrs.append(self.kv_buffer[page, part].ctypes.data)
                sizes.append(self.item)
        return ptrs, sizes

    def fill(self, seed):
        self.kv_buffer[:] = np.random.default_rng(seed).integers(0, 255, self.kv_buffer.shape, dtype=np.uint8)


def host_indices(pages, page_size):
    return np.concatenate([np.arange(p * page_size, (p + 1) * page_size) for p in pages])


def make_backend(cluster, prefix, **cfg):
    """As SGLang's StorageBackendFactory builds a 'dynamic' backend."""
    extra = {"backend_name": "tiffin", "module_path": "tiffin.adapters.sglang", "class_name": "TiffinHiCacheStorage",
             "master_server_address": cluster.master, "extra_backend_tag": prefix.strip("/").replace("/", "-")}
    config = StorageConfig(extra_config=extra, **cfg)
    module = importlib.import_module(extra["module_path"])
    cls = getattr(module, extra["class_name"])
    return cls(config, {})


@pytest.mark.parametrize("mla", [False, True])
def test_sglang_hicache_zero_copy_pages(cluster, prefix, mla):
    backend = make_backend(cluster, prefix, is_mla_model=mla)
    pool = HostPool(mla=mla)
    backend.register_mem_pool_host(pool)
    keys = [f"page-{i:04x}" for i in range(8)]
    assert backend.batch_exists(keys) == 0
    pool.fill(1)
    expected = pool.kv_buffer.copy()
    # backup: pages 0..7 from pool slots 0..7
    assert backend.batch_set_v1(keys, host_indices(range(8), pool.page_size)) == [True] * 8
    assert backend.batch_exists(keys) == 8
    assert backend.batch_exists(keys + ["page-missing"]) == 8
    # again: existing pages are not written, still True
    assert backend.batch_set_v1(keys[:2], host_indices(range(2), pool.page_size)) == [True, True]
    # prefetch into other slots (8..15) of the pool
    assert backend.batch_get_v1(keys, host_indices(range(8, 16), pool.page_size)) == [True] * 8
    assert np.array_equal(pool.kv_buffer[8:16], expected[:8])
    # a page with one object missing is not there; the others still are
    obj = f"{backend.prefix}_page-0003_{'_k' if mla else '0_v'}"
    backend.client.remove(obj, force=True)
    assert backend.batch_exists(keys) == 3
    assert backend.batch_get_v1(keys[2:5], host_indices([0, 1, 2], pool.page_size)) == [True, False, True]
    backend.clear()
    assert backend.batch_exists(keys) == 0
    backend.close()


def test_sglang_generic_calls(cluster, prefix):
    backend = make_backend(cluster, prefix)
    assert backend.set("k1", b"value one") is True and backend.exists("k1") is True
    assert backend.get("k1") == b"value one" and backend.get("nope") is None
    src = np.arange(256, dtype=np.uint8)
    dst = np.zeros(256, np.uint8)
    assert backend.set("k2", target_location=src.ctypes.data, target_sizes=256) is True
    assert backend.get("k2", target_location=dst.ctypes.data, target_sizes=256) is True
    assert np.array_equal(src, dst)
    out = bytearray(256)
    assert backend.get("k2", target_location=out) is out and bytes(out) == src.tobytes()
    assert backend.get("nope", target_location=dst.ctypes.data, target_sizes=256) is False
    assert backend.batch_set(["k3", "k4"], [b"three", b"four"]) is True
    assert backend.batch_get(["k3", "nope", "k4"]) == [b"three", None, b"four"]
    bufs = [np.zeros(16, np.uint8) for _ in range(3)]
    assert backend.batch_get(["k3", "k4", "nope"], [b.ctypes.data for b in bufs], [16] * 3) == 2
    assert backend.batch_exists(["k1"]) in (0, 1)  # page keys get _k/_v suffixes: "k1" alone is not a page
    backend.close()


# ---------------------------------------------------------------------------------- LMCache

class FakeKey:
    def __init__(self, s):
        self.s = s

    def to_string(self):
        return self.s


class MemoryObj:
    """What the connector uses of LMCache's MemoryObj, backed by numpy."""

    def __init__(self, shape, dtype, fmt, backend):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.fmt = fmt
        self.raw = np.zeros(int(np.prod(shape)), dtype=np.float16)
        self.backend = backend
        self.refs = 1

    @property
    def byte_array(self):
        return memoryview(self.raw).cast("B")

    def get_shape(self):
        return self.shape

    def get_dtype(self):
        return self.dtype

    def get_memory_format(self):
        return self.fmt

    def ref_count_down(self):
        self.refs -= 1
        self.backend.released += 1


class LocalCPUBackend:
    def __init__(self):
        self.allocated = 0
        self.released = 0

    def allocate(self, shape, dtype, fmt):
        self.allocated += 1
        return MemoryObj(shape, dtype, fmt, self)


class Context:
    def __init__(self, url, loop, backend, config):
        self.url = url
        self.loop = loop
        self.local_cpu_backend = backend
        self.config = config


class Config:
    def __init__(self, extra):
        self.extra_config = extra
        self.remote_storage_plugins = ["tiffin"]


def load_connector(cluster, backend, extra=None):
    """As LMCache's ConnectorManager._remote_adapters_plugin_launcher and create_connector do."""
    extra = {"remote_storage_plugin.tiffin.module_path": "tiffin.adapters.lmcache",
             "remote_storage_plugin.tiffin.class_name": "TiffinConnectorAdapter", **(extra or {})}
    config = Config(extra)
    name = config.remote_storage_plugins[0]
    module = importlib.import_module(extra[f"remote_storage_plugin.{name}.module_path"])
    adapter = getattr(module, extra[f"remote_storage_plugin.{name}.class_name"])()
    url = f"tiffin://{cluster.master}"
    assert adapter.can_parse(url) and not adapter.can_parse("redis://127.0.0.1:6379")
    return adapter.create_connector(Context(url, asyncio.new_event_loop(), backend, config))


def chunk(backend, seed, tokens=256):
    obj = backend.allocate((2, 4, tokens, 64), "float16", 1)
    obj.raw[:] = np.random.default_rng(seed).standard_normal(obj.raw.size).astype(np.float16)
    return obj


def test_lmcache_plugin_stores_chunks_with_their_metadata(cluster, prefix):
    backend = LocalCPUBackend()
    conn = load_connector(cluster, backend)
    keys = [FakeKey(f"{prefix}model@1@0@{i:08x}@half") for i in range(4)]
    objs = [chunk(backend, i) for i in range(4)]
    allocated = backend.allocated

    async def run():
        assert await conn.batched_async_contains("lookup-1", keys) == 0
        await conn.batched_put(keys[:3], objs[:3])
        assert conn.exists_sync(keys[0]) and await conn.exists(keys[2]) and not conn.exists_sync(keys[3])
        assert await conn.batched_async_contains("lookup-2", keys) == 3
        assert conn.batched_contains(keys) == [True, True, True, False]
        got = await conn.batched_get(keys)
        assert got[3] is None
        for o, g in zip(objs[:3], got[:3]):
            assert g.get_shape() == o.get_shape() and g.get_memory_format() == 1
            assert np.array_equal(g.raw, o.raw)
        single = await conn.get(keys[1])
        assert np.array_equal(single.raw, objs[1].raw)
        await conn.put(keys[3], objs[3])
        assert await conn.batched_async_contains("lookup-3", keys, pin=True) == 4
        assert await conn.ping() == 0
        listed = await conn.list()
        assert all(k.to_string() in listed for k in keys)
        assert conn.remove_sync(keys[0]) and not conn.exists_sync(keys[0])
        await conn.close()

    asyncio.run(run())
    assert backend.allocated == allocated + 4  # one chunk per hit


def test_lmcache_plugin_zero_copy_mode(cluster, prefix):
    backend = LocalCPUBackend()
    conn = load_connector(cluster, backend, {"save_chunk_meta": False, "tiffin.replicas": 2})
    conn.save_chunk_meta = False  # LMCache's init_chunk_meta sets these from the model's KV shape
    conn.meta_shape, conn.meta_dtype, conn.meta_fmt = (2, 4, 256, 64), "float16", 1
    keys = [FakeKey(f"{prefix}c{i}") for i in range(3)]
    objs = [chunk(backend, 10 + i) for i in range(2)]

    async def run():
        await conn.batched_put(keys[:2], objs)
        assert len(conn.client.locate(keys[0].to_string()).replicas) == 2
        assert conn.client.locate(keys[0].to_string()).size == objs[0].raw.nbytes  # no header
        got = await conn.batched_get(keys)
        assert got[2] is None and backend.released == 1  # the miss's buffer went back
        assert np.array_equal(got[0].raw, objs[0].raw) and np.array_equal(got[1].raw, objs[1].raw)
        await conn.close()

    asyncio.run(run())
