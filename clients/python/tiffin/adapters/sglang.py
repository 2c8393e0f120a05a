"""SGLang HiCache storage backend on Tiffin (the ``dynamic`` backend plug-in point).

Engine side::

    python -m sglang.launch_server ... --enable-hierarchical-cache \\
        --hicache-storage-backend dynamic \\
        --hicache-storage-backend-extra-config '{"backend_name": "tiffin",
            "module_path": "tiffin.adapters.sglang", "class_name": "TiffinHiCacheStorage",
            "master_server_address": "10.0.0.5:50051"}'

SGLang builds it as ``TiffinHiCacheStorage(storage_config, kwargs)`` and then hands it the host KV
pool with ``register_mem_pool_host``. Pages are stored as Mooncake's backend stores them: one object
per page and rank, ``{page_key}_{tp_rank}_k`` and ``_v`` for MHA models, ``{page_key}_k`` for MLA,
written and read in place in the host pool (``get_page_buffer_meta``: pointers and sizes) with one
batch call, and a page that already exists is not written again.

``extra_config`` keys: ``master_server_address`` (or ``tiffin_master``; default the environment's
``TIFFIN_MASTER_ADDRESS``, else 127.0.0.1:50051), ``replicas`` (1), ``timeout`` (s),
``shared_memory`` (true), ``location_cache_ttl`` (s, 2; 0 = off), ``extra_backend_tag`` (a key prefix, as
Mooncake's).

Thread-safety: SGLang calls a backend from its prefetch and backup threads at once; this class is
thread-safe (its state after construction is the thread-safe :class:`tiffin.Client` and read-only
settings). Ownership: it owns its Client (``close``); the host pool stays SGLang's.
"""

from __future__ import annotations

import logging
import os
from typing import Any, List, Optional

from .. import _buffers as B
from ..client import Client, _options
from ..errors import TiffinError

log = logging.getLogger("tiffin.sglang")

try:  # SGLang checks issubclass(cls, HiCacheStorage) before building a dynamic backend
    from sglang.srt.mem_cache.hicache_storage import HiCacheStorage as _Base  # type: ignore
except ImportError:  # SGLang not installed (tests, docs): the same interface, minus its ABC
    class _Base:  # noqa: D401
        """Stand-in for ``sglang.srt.mem_cache.hicache_storage.HiCacheStorage``."""

        def register_mem_pool_host(self, mem_pool_host):
            self.mem_pool_host = mem_pool_host

        def batch_exists(self, keys, extra_info=None) -> int:
            for i, k in enumerate(keys):
                if not self.exists(k):
                    return i
            return len(keys)

        def clear(self) -> None:
            pass

        def get_stats(self):
            return None


def _is_pointer(target) -> bool:
    return isinstance(target, (int, list, tuple))


def _cfg(storage_config, name, default=None):
    return getattr(storage_config, name, default) if storage_config is not None else default


class TiffinHiCacheStorage(_Base):
    """A ``HiCacheStorage`` on a Tiffin cluster (see the module comment).

    Thread-safety: thread-safe after ``register_mem_pool_host`` (SGLang's prefetch and backup threads
    call it at once). Ownership: owns its :class:`tiffin.Client`; the host pool is SGLang's, read and
    written only during a call.
    """

    def __init__(self, storage_config=None, kwargs: Optional[dict] = None, client: Optional[Client] = None):
        extra = dict(_cfg(storage_config, "extra_config") or {})
        master = (extra.get("master_server_address") or extra.get("tiffin_master")
                  or os.environ.get("TIFFIN_MASTER_ADDRESS", "127.0.0.1:50051"))
        self.replicas = int(extra.get("replicas", 1))
        self.client = client if client is not None else Client.connect(
            master, timeout=float(extra.get("timeout", 30.0)), shared_memory=bool(extra.get("shared_memory", True)),
            location_cache_ttl=float(extra.get("location_cache_ttl", 2.0)))
        self.is_mla = bool(_cfg(storage_config, "is_mla_model", False))
        tp_rank = _cfg(storage_config, "tp_rank", 0)
        pp_size = _cfg(storage_config, "pp_size", 1)
        pp_rank = _cfg(storage_config, "pp_rank", 0)
        self.mha_suffix = f"{tp_rank}_{pp_rank}" if pp_size > 1 else f"{tp_rank}"
        self.mla_suffix = f"{pp_rank}" if pp_size > 1 else ""
        parts = []
        if extra.get("extra_backend_tag") is not None:
            parts.append(str(extra["extra_backend_tag"]))
        model = _cfg(storage_config, "model_name")
        if model:
            parts.append("-".join(model.split("/")))
        self.prefix = "_".join(parts) if parts else None
        self.mem_pool_host = None
        self._options = _options(self.replicas, None, False, False, False)

    # ------------------------------------------------------------------ keys and buffers

    def _tag(self, keys: List[str]) -> List[str]:
        return keys if self.prefix is None else [f"{self.prefix}_{k}" for k in keys]

    def _component_keys(self, keys: List[str]) -> tuple:
        """(object keys, objects per page): ``_k`` (MLA) or ``_k``/``_v`` (MHA) per page key."""
        if self.is_mla:
            return [f"{k}_{self.mla_suffix}_k" for k in keys], 1
        out = []
        for k in keys:
            out.append(f"{k}_{self.mha_suffix}_k")
            out.append(f"{k}_{self.mha_suffix}_v")
        return out, 2

    def _page_buffers(self, object_keys: List[str], host_indices) -> list:
        """Per object the byte views of its part of the host pool (``get_page_buffer_meta``)."""
        if self.mem_pool_host is None:
            raise TiffinError("INVALID_PARAMS", "no host pool registered (register_mem_pool_host)")
        ptrs, sizes = self.mem_pool_host.get_page_buffer_meta(host_indices)
        if isinstance(sizes, int):
            sizes = [sizes] * len(ptrs)
        ptrs, sizes = list(ptrs), list(sizes)
        if len(ptrs) != len(sizes) or not object_keys or len(ptrs) % len(object_keys):
            raise TiffinError("INVALID_PARAMS", f"the host pool gave {len(ptrs)} buffers and {len(sizes)} sizes for "
                                                f"{len(object_keys)} objects")
        per = len(ptrs) // len(object_keys)  # layer_first MLA pools give several buffers per object
        return [B.Chunks([B.from_pointer(int(ptrs[i * per + j]), int(sizes[i * per + j])) for j in range(per)])
                for i in range(len(object_keys))]

    @staticmethod
    def _location_buffers(target_location, target_sizes, for_write: bool = True) -> B.Chunks:
        """Pointer(s) and size(s), or a buffer, as Chunks."""
        if isinstance(target_location, (list, tuple)):
            return B.Chunks([B.from_pointer(int(p), int(s)) for p, s in zip(target_location, target_sizes)])
        if isinstance(target_location, int):
            return B.Chunks([B.from_pointer(target_location, int(target_sizes))])
        if for_write:
            return B.Chunks([B.writable(target_location, "target_location")])
        return B.Chunks([B.readable(target_location, "target_location")])

    def _put_missing(self, keys: List[str], srcs: list) -> List[bool]:
        """Writes the objects that do not exist yet; per object whether it is stored now."""
        exist = self.client.batch_exists(keys)
        ok = [r.ok and bool(r.value) for r in exist]
        todo = [i for i, e in enumerate(ok) if not e]
        if todo:
            results = self.client._batch_put([keys[i] for i in todo], [srcs[i] for i in todo], self._options)
            for i, r in zip(todo, results):
                ok[i] = r.ok
        return ok

    @staticmethod
    def _pages(ok: List[bool], per: int) -> List[bool]:
        return [all(ok[i:i + per]) for i in range(0, len(ok), per)]

    # ------------------------------------------------------------------ zero-copy page I/O (v1)

    def batch_get_v1(self, keys: List[str], host_indices, extra_info=None) -> List[bool]:
        """Reads pages into the host pool slots ``host_indices``; per page whether it was read."""
        try:
            objs, per = self._component_keys(self._tag(list(keys)))
            dsts = self._page_buffers(objs, host_indices)
            results = self.client._batch_get_into(objs, dsts)
            return self._pages([r.ok and r.value > 0 for r in results], per)
        except TiffinError as e:
            log.warning("batch_get_v1 of %d pages failed: %s", len(keys), e)
            return [False] * len(keys)

    def batch_set_v1(self, keys: List[str], host_indices, extra_info=None) -> List[bool]:
        """Writes the pages in host pool slots ``host_indices`` that the store does not hold yet; per
        page whether it is stored."""
        try:
            objs, per = self._component_keys(self._tag(list(keys)))
            srcs = self._page_buffers(objs, host_indices)
            return self._pages(self._put_missing(objs, srcs), per)
        except TiffinError as e:
            log.warning("batch_set_v1 of %d pages failed: %s", len(keys), e)
            return [False] * len(keys)

    # ------------------------------------------------------------------ the generic interface

    def get(self, key: str, target_location: Optional[Any] = None, target_sizes: Optional[Any] = None):
        """With a pointer (or pointers and sizes) or a writable buffer as ``target_location``: reads the
        object there and returns True/False (a buffer is returned on success). Without: the object's
        bytes, or None."""
        try:
            if target_location is None:
                return self.client.get(key)
            dst = self._location_buffers(target_location, target_sizes)
            self.client._get_into(key, dst)
            return True if _is_pointer(target_location) else target_location
        except TiffinError as e:
            if e.code != "OBJECT_NOT_FOUND":
                log.debug("get(%r) failed: %s", key, e)
            return False if _is_pointer(target_location) else None

    def batch_get(self, keys: List[str], target_locations: Optional[Any] = None,
                  target_sizes: Optional[Any] = None):
        """With target pointers: reads each key there and returns how many leading keys were read.
        Without: the bytes of each key (None when missing)."""
        keys = list(keys)
        if target_locations is None:
            return [r.value if r.ok else None for r in self.client.batch_get(keys)]
        dsts = [self._location_buffers(t, s) for t, s in zip(target_locations, target_sizes)]
        results = self.client._batch_get_into(keys, dsts)
        for i, r in enumerate(results):
            if not r.ok:
                return i
        return len(keys)

    def set(self, key: str, value: Optional[Any] = None, target_location: Optional[Any] = None,
            target_sizes: Optional[Any] = None) -> bool:
        """Stores ``value`` (a buffer) or the memory at ``target_location``; True when it is stored (an
        existing key counts)."""
        return self.batch_set([key], None if value is None else [value],
                              None if target_location is None else [target_location],
                              None if target_sizes is None else [target_sizes])

    def batch_set(self, keys: List[str], values: Optional[Any] = None, target_locations: Optional[Any] = None,
                  target_sizes: Optional[Any] = None) -> bool:
        """Stores every key that does not exist yet; True when all are stored."""
        keys = list(keys)
        if not keys:
            return False
        try:
            if values is not None:
                srcs = [B.Chunks([B.readable(v)]) for v in values]
            else:
                srcs = [self._location_buffers(t, s, False) for t, s in zip(target_locations, target_sizes)]
            return all(self._put_missing(keys, srcs))
        except TiffinError as e:
            log.warning("batch_set of %d keys failed: %s", len(keys), e)
            return False

    def exists(self, key: str) -> bool:
        try:
            return self.client.exists(key)
        except TiffinError:
            return False

    def batch_exists(self, keys: List[str], extra_info=None) -> int:
        """How many leading pages the store holds completely (every object of the page)."""
        objs, per = self._component_keys(self._tag(list(keys)))
        try:
            results = self.client.batch_exists(objs)
        except TiffinError as e:
            log.warning("batch_exists failed: %s", e)
            return 0
        for i, r in enumerate(results):
            if not (r.ok and r.value):
                return i // per
        return len(keys)

    def clear(self) -> None:
        """Removes this backend's objects (those under its key prefix; everything without one)."""
        import re
        if self.prefix is not None:
            self.client.remove_by_regex("^" + re.escape(self.prefix + "_"), force=True)
        else:
            self.client.remove_all(force=True)

    def close(self) -> None:
        self.client.close()
