"""LMCache remote-storage plug-in on Tiffin (``remote_storage_plugins``).

Engine side (LMCache configuration YAML)::

    remote_url: "tiffin://10.0.0.5:50051"
    remote_serde: "naive"
    remote_storage_plugins: ["tiffin"]
    extra_config:
      remote_storage_plugin.tiffin.module_path: tiffin.adapters.lmcache
      remote_storage_plugin.tiffin.class_name: TiffinConnectorAdapter
      # optional: tiffin.replicas: 2, tiffin.timeout: 30, tiffin.location_cache_ttl: 2, save_chunk_meta: false

LMCache's ``ConnectorManager`` imports the module, builds ``TiffinConnectorAdapter()``, asks it
``can_parse(url)`` and then ``create_connector(context)``; the connector is LMCache's
``RemoteConnector``: ``exists``/``exists_sync``, ``get``/``put``, ``batched_get``, ``batched_put``,
``batched_async_contains``, ``batched_contains``, ``remove_sync``, ``list``, ``ping``, ``close``.

Storage format, as LMCache's Mooncake connector: with ``save_chunk_meta`` (LMCache's default) each
chunk is one object holding a 28-byte metadata header (length, format, dtype, shape) and then the KV
bytes, written without joining them; a read allocates the chunk from LMCache's local CPU backend
from the header and copies the bytes in. With ``save_chunk_meta: false`` the shape is LMCache's fixed
chunk shape, and reads go straight into the allocated chunk (zero copy) with one batch call.

Thread-safety: LMCache calls the async methods on its event loop and the ``*_sync`` ones from other
threads; the connector runs the blocking client calls in worker threads (``asyncio.to_thread``) and
is thread-safe. Ownership: it owns its :class:`tiffin.Client`; memory objects stay LMCache's (a read
hands the allocated objects to the caller, a failed read releases them with ``ref_count_down``).
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import List, Optional
from urllib.parse import urlparse

from .. import _buffers as B
from ..client import Client, _options
from ..errors import TiffinError

log = logging.getLogger("tiffin.lmcache")

SCHEME = "tiffin://"
META_LEN = 28
_META = struct.Struct("<7i")

try:  # LMCache's base classes, when LMCache is installed
    from lmcache.v1.storage_backend.connector import ConnectorAdapter as _AdapterBase  # type: ignore
    from lmcache.v1.storage_backend.connector.base_connector import RemoteConnector as _ConnectorBase  # type: ignore
except ImportError:  # stand-ins with the same interface (tests, docs)
    class _AdapterBase:
        def __init__(self, schema: str = "") -> None:
            self.schema = schema

        def can_parse(self, url: str) -> bool:
            return self.schema != "" and url.startswith(self.schema)

    class _ConnectorBase:
        save_chunk_meta: bool = True
        meta_shape = None
        meta_dtype = None
        meta_fmt = None
        full_chunk_size = None
        single_token_size = None

        def post_init(self):
            pass

try:
    from lmcache.v1.protocol import RemoteMetadata as _LMCacheMetadata  # type: ignore
except ImportError:
    _LMCacheMetadata = None

# dtype codes of the fallback header (used only without LMCache installed)
_DTYPES = ["float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64",
           "float8_e4m3fn", "float8_e5m2"]


def _dtype_name(dtype) -> str:
    return str(getattr(dtype, "name", dtype)).replace("torch.", "")


def encode_meta(length: int, shape, dtype, fmt) -> bytes:
    """The 28-byte chunk header: LMCache's ``RemoteMetadata`` when LMCache is installed, else seven
    little-endian int32 (length, format, dtype code, 4 dims)."""
    if _LMCacheMetadata is not None:
        return _LMCacheMetadata(length, shape, dtype, fmt).serialize()
    dims = list(shape)[:4] + [0] * (4 - len(list(shape)[:4]))
    return _META.pack(length, int(getattr(fmt, "value", fmt)), _DTYPES.index(_dtype_name(dtype)), *dims)


def decode_meta(data) -> tuple:
    """(length, shape, dtype, fmt) from a chunk header."""
    if _LMCacheMetadata is not None:
        m = _LMCacheMetadata.deserialize(data)
        return m.length, m.shape, m.dtype, m.fmt
    length, fmt, dtype, *dims = _META.unpack_from(data)
    while dims and dims[-1] == 0:
        dims.pop()
    return length, tuple(dims), _DTYPES[dtype], fmt


def _key(k) -> str:
    return k.to_string() if hasattr(k, "to_string") else str(k)


class TiffinConnectorAdapter(_AdapterBase):
    """Creates :class:`TiffinConnector` for ``tiffin://host:port`` URLs. Stateless; thread-safe."""

    def __init__(self) -> None:
        super().__init__(SCHEME)

    def can_parse(self, url: str) -> bool:
        return url.startswith(SCHEME)

    def create_connector(self, context) -> "TiffinConnector":
        return TiffinConnector(context.url, context.loop, context.local_cpu_backend, getattr(context, "config", None))


class TiffinConnector(_ConnectorBase):
    """An LMCache ``RemoteConnector`` storing chunks in Tiffin (see the module comment).

    Thread-safety: thread-safe (its state is a thread-safe :class:`tiffin.Client` and read-only
    settings); the async methods run the blocking calls in worker threads. Ownership: owns its Client
    (``close``); memory objects stay LMCache's, and a read hands allocated chunks to the caller.
    """

    def __init__(self, url: str, loop, local_cpu_backend, config=None, client: Optional[Client] = None):
        parsed = urlparse(url)
        if parsed.scheme != "tiffin" or not parsed.hostname or not parsed.port:
            raise ValueError(f"{url!r} is not tiffin://host:port")
        extra = dict(getattr(config, "extra_config", None) or {})
        self.loop = loop
        self.local_cpu_backend = local_cpu_backend
        self.client = client if client is not None else Client.connect(
            f"{parsed.hostname}:{parsed.port}", timeout=float(extra.get("tiffin.timeout", 30.0)),
            location_cache_ttl=float(extra.get("tiffin.location_cache_ttl", 2.0)))
        self._options = _options(int(extra.get("tiffin.replicas", 1)), None, False, False, False)
        self._pin_warned = False

    # ------------------------------------------------------------------ existence

    async def exists(self, key) -> bool:
        return await asyncio.to_thread(self.exists_sync, key)

    def exists_sync(self, key) -> bool:
        try:
            return self.client.exists(_key(key))
        except TiffinError as e:
            log.warning("exists failed: %s", e)
            return False

    def support_batched_contains(self) -> bool:
        return True

    def batched_contains(self, keys, stop_after_first_not_exits: bool = True) -> List[bool]:
        try:
            found = [r.ok and bool(r.value) for r in self.client.batch_exists([_key(k) for k in keys])]
        except TiffinError as e:
            log.warning("batched_contains failed: %s", e)
            return [False] * len(keys)
        if stop_after_first_not_exits and False in found:
            first = found.index(False)
            found = found[:first] + [False] * (len(found) - first)
        return found

    def support_batched_async_contains(self) -> bool:
        return True

    async def batched_async_contains(self, lookup_id: str, keys, pin: bool = False) -> int:
        """How many leading keys the store holds. ``pin`` cannot be honoured (Tiffin pins at put time:
        ``with_hard_pin``); it is logged once."""
        if pin and not self._pin_warned:
            self._pin_warned = True
            log.warning("batched_async_contains(pin=True): Tiffin cannot pin an existing object; not pinned")
        found = await asyncio.to_thread(self.batched_contains, keys, True)
        return found.index(False) if False in found else len(found)

    # ------------------------------------------------------------------ writes

    def _parts(self, memory_obj) -> list:
        kv = B.readable(memory_obj.byte_array, "the chunk")
        if not self.save_chunk_meta:
            return [kv]
        meta = encode_meta(len(kv), memory_obj.get_shape(), memory_obj.get_dtype(), memory_obj.get_memory_format())
        return [memoryview(meta), kv]

    def _put_sync(self, keys, memory_objs) -> None:
        keys = [_key(k) for k in keys]
        srcs = [B.Chunks(self._parts(m)) for m in memory_objs]
        try:
            results = self.client._batch_put(keys, srcs, self._options)
        finally:
            for c in srcs:
                c.release()
        failed = [r for r in results if not r.ok]
        if failed:
            raise TiffinError(failed[0].code, f"put of {len(failed)} of {len(keys)} chunks failed, first "
                                              f"{failed[0].key!r}: {failed[0].code}")

    async def put(self, key, memory_obj) -> None:
        await asyncio.to_thread(self._put_sync, [key], [memory_obj])

    def support_batched_put(self) -> bool:
        return True

    async def batched_put(self, keys, memory_objs) -> None:
        await asyncio.to_thread(self._put_sync, keys, memory_objs)

    # ------------------------------------------------------------------ reads

    def _get_sync(self, keys) -> list:
        keys = [_key(k) for k in keys]
        if not keys:
            return []
        if not self.save_chunk_meta and self.meta_shape is not None:
            return self._get_zero_copy(keys)
        out: list = []
        for r in self.client.batch_get(keys):
            if not r.ok:
                if r.code != "OBJECT_NOT_FOUND":
                    log.warning("get of %r failed: %s", r.key, r.code)
                out.append(None)
                continue
            data = memoryview(r.value)
            try:
                length, shape, dtype, fmt = decode_meta(data[:META_LEN])
                if length != len(data) - META_LEN:
                    raise ValueError(f"header says {length} bytes, the object holds {len(data) - META_LEN}")
            except Exception as e:  # noqa: BLE001
                log.warning("chunk %r has no valid header (%s); treated as missing", r.key, e)
                out.append(None)
                continue
            obj = self.local_cpu_backend.allocate(shape, dtype, fmt)
            if obj is None:
                log.warning("LMCache's local CPU backend could not allocate a chunk for %r", r.key)
                out.append(None)
                continue
            B.writable(obj.byte_array, "the chunk")[:length] = data[META_LEN:]
            out.append(obj)
        return out

    def _get_zero_copy(self, keys) -> list:
        objs = [self.local_cpu_backend.allocate(self.meta_shape, self.meta_dtype, self.meta_fmt) for _ in keys]
        idx = [i for i, o in enumerate(objs) if o is not None]
        dsts = [B.Chunks([B.writable(objs[i].byte_array, "the chunk")]) for i in idx]
        try:
            results = self.client._batch_get_into([keys[i] for i in idx], dsts)
        finally:
            for d in dsts:
                d.release()
        out: list = [None] * len(keys)
        for i, dst, r in zip(idx, dsts, results):
            if not (r.ok and r.value > 0):
                objs[i].ref_count_down()
            elif r.value == dst.size:
                out[i] = objs[i]
            else:  # a partial last chunk: LMCache's base class trims the shape
                try:
                    out[i] = self.reshape_partial_chunk(objs[i], r.value)
                except Exception as e:  # noqa: BLE001
                    log.warning("chunk %r: %s", keys[i], e)
                    objs[i].ref_count_down()
        return out

    async def get(self, key):
        return (await asyncio.to_thread(self._get_sync, [key]))[0]

    def support_batched_get(self) -> bool:
        return True

    async def batched_get(self, keys) -> list:
        return await asyncio.to_thread(self._get_sync, keys)

    # ------------------------------------------------------------------ the rest

    def remove_sync(self, key) -> bool:
        try:
            self.client.remove(_key(key), force=True)
            return True
        except TiffinError:
            return False

    async def list(self) -> List[str]:
        listing = await asyncio.to_thread(self.client.list, "", 100000)
        return [k for k, _ in listing]

    def support_ping(self) -> bool:
        return True

    async def ping(self) -> int:
        """0 when the master answers, else the (negative) error code."""
        try:
            await asyncio.to_thread(self.client.stat)
            return 0
        except TiffinError as e:
            return e.value

    async def close(self) -> None:
        self.client.close()
