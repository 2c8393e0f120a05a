"""Mooncake Store's Python API on Tiffin.

Code written for ``from mooncake.store import MooncakeDistributedStore, ReplicateConfig`` runs on
Tiffin with that one import changed to ``from tiffin.mooncake import ...``: the method names,
positional arguments and return conventions are Mooncake's (``mooncake-integration/store/store_py.cpp``
and ``docs/source/api-reference/python/mooncake-store.md`` in kvcache-ai/Mooncake):

* status calls return 0 or a negative Mooncake error code (the same numbers Tiffin uses);
* ``get`` returns ``b""`` on a miss or any error; ``get_into`` returns the bytes read or a negative code;
* ``is_exist`` returns 1, 0 or -1; batch calls return lists; ``remove_by_regex``/``remove_all`` a count;
* store errors are never raised; wrong argument types raise ``TypeError`` (as pybind11 does).

Where Mooncake's meaning cannot carry over it is logged once and the closest right thing is done
(docs/PYTHON.md lists each case): a Tiffin client contributes no memory (``global_segment_size``: nodes
do), has no local buffer, moves bytes over TCP or same-host shared memory whatever ``protocol`` and
``rdma_devices`` say, needs no ``register_buffer`` (it is recorded, not required), and has no tenants.

Thread-safety: a MooncakeDistributedStore may be shared between threads once ``setup`` has returned.
Ownership: it owns one :class:`tiffin.Client` (connections, mappings), released by ``close``; pointer
arguments are the caller's memory, used only during the call.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
import types
from typing import Optional

from . import _buffers as B
from . import _ranges
from ._frames import Op
from ._hostmem import HOST
from ._proto import tiffin_pb2 as pb
from .client import Client, _options
from .errors import CODES, InvalidArgument, TiffinError

log = logging.getLogger("tiffin.mooncake")

__all__ = ["MooncakeDistributedStore", "ReplicateConfig", "BufferHandle", "install_as_mooncake"]

_MiB = 1 << 20
_NOT_READY = CODES["INVALID_PARAMS"]  # Mooncake's RealClient answers INVALID_PARAMS before setup
_warned: set = set()
_warn_lock = threading.Lock()


def _once(topic: str, message: str, *args) -> None:
    """Logs ``message`` the first time ``topic`` comes up in this process."""
    with _warn_lock:
        if topic in _warned:
            return
        _warned.add(topic)
    log.warning(message, *args)


class ReplicateConfig:
    """How a put places its replicas (Mooncake's ``ReplicateConfig``).

    ``replica_num`` (1), ``with_hard_pin`` (never evicted), ``with_soft_pin`` (evicted last),
    ``preferred_segment`` / ``preferred_segments`` (a Tiffin segment name, or a node's ``host:port``,
    which is translated to that node's segment; Tiffin takes the first), ``soft_pin_ttl_ms`` (accepted;
    Tiffin's soft-pin TTL is the master's ``master.soft-pin-ttl``), ``prefer_alloc_in_same_node`` and
    ``group_ids`` (accepted, logged once and ignored: Tiffin places objects by its allocation strategy and
    has no object groups). Other attributes are refused, as on Mooncake's pybind11 class.
    Not thread-safe while being modified; plain data.
    """

    __slots__ = ("replica_num", "with_soft_pin", "with_hard_pin", "preferred_segment", "preferred_segments",
                 "prefer_alloc_in_same_node", "group_ids", "soft_pin_ttl_ms")

    def __init__(self):
        self.replica_num = 1
        self.with_soft_pin = False
        self.with_hard_pin = False
        self.preferred_segment = ""
        self.preferred_segments = []
        self.prefer_alloc_in_same_node = False
        self.group_ids = None
        self.soft_pin_ttl_ms = None

    def __repr__(self):
        return (f"ReplicateConfig(replica_num={self.replica_num}, with_soft_pin={self.with_soft_pin}, "
                f"with_hard_pin={self.with_hard_pin}, preferred_segment={self.preferred_segment!r}, "
                f"preferred_segments={self.preferred_segments!r})")


class BufferHandle(bytearray):
    """An object's bytes as returned by ``get_buffer`` / ``batch_get_buffer``: supports the buffer
    protocol (``memoryview(h)``, ``numpy.frombuffer(h, ...)``), ``len(h)``, ``h.size()`` and
    ``h.ptr()`` (the address of its first byte). It owns its memory; do not resize it while a pointer
    from ``ptr()`` is in use. Not thread-safe for writes (a bytearray)."""

    def ptr(self) -> int:
        if not len(self):
            return 0
        return B.address(memoryview(self))

    def size(self) -> int:
        return len(self)


def _size(value, name: str) -> int:
    """A size in bytes: an int, or text such as "16MB", "4 GB", "1GiB", "3355443200"."""
    if isinstance(value, bool):
        raise InvalidArgument("INVALID_PARAMS", f"{name} must be a size, not a bool")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*", value.lower())
        if m:
            mult = 1 << (10 * "kmgtp".find(m.group(2)) + 10) if m.group(2) else 1
            return int(float(m.group(1)) * mult)
    raise InvalidArgument("INVALID_PARAMS", f"{name} = {value!r} is not a size (e.g. 16777216 or \"16MB\")")


def _seconds(value, name: str) -> float:
    """A duration in seconds: a number, or text such as "2", "2s", "500ms"."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*", value.lower())
        if m:
            return float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)
    raise InvalidArgument("INVALID_PARAMS", f"{name} = {value!r} is not a duration (seconds >= 0, or e.g. \"500ms\")")


def _str(value, name: str) -> str:
    """``value`` as a str: bytes (pybind11 takes them for a std::string) decoded as UTF-8, bytes that do not
    decode kept as unpaired surrogates. As a key, such a str is INVALID_KEY (-400): the client refuses it before
    anything is sent, in a batch for that key alone."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if not isinstance(value, str):
        raise InvalidArgument("INVALID_PARAMS", f"{name} must be a str, not {type(value).__name__}")
    return value


def _key(value) -> str:
    return _str(value, "key")


def _keys(values) -> list:
    if isinstance(values, (str, bytes)):
        raise InvalidArgument("INVALID_PARAMS", "keys must be a list of str")
    return [_key(k) for k in values]


def _code(call) -> int:
    """0 once ``call()`` returned, or the negative code of the TiffinError it raised (a wrong argument type,
    InvalidArgument, is raised: Mooncake's pybind11 raises TypeError there)."""
    try:
        call()
        return 0
    except InvalidArgument:
        raise
    except TiffinError as e:
        return e.value


def _first_code(call) -> int:
    """0 when every result of ``call()`` (a batch) is OK, else the first negative code (as :func:`_code`)."""
    try:
        results = call()
    except InvalidArgument:
        raise
    except TiffinError as e:
        return e.value
    for r in results:
        if not r.ok:
            return CODES[r.code]
    return 0


class MooncakeDistributedStore:
    """Mooncake's store class, backed by a :class:`tiffin.Client` (see the module comment).

    Thread-safety: the data calls are thread-safe; ``setup`` and ``close`` are serialised with each
    other. Ownership: owns its Client until ``close``; never keeps the caller's pointers after a call.
    """

    def __init__(self):
        self._client: Optional[Client] = None
        self._hostname = ""
        self._lock = threading.Lock()
        self._registered: dict = {}
        self._segments_at = 0.0
        self._segment_names: set = set()
        self._segment_by_endpoint: dict = {}

    # ------------------------------------------------------------------ lifecycle

    def setup(self, local_hostname, metadata_server=None, global_segment_size=16 * _MiB,
              local_buffer_size=16 * _MiB, protocol="tcp", rdma_devices="", master_server_addr="127.0.0.1:50051",
              engine=None, enable_ssd_offload=False, ssd_offload_path="", tenant_id="default",
              enable_client_http_server=False, client_http_port=9300, *, location_cache_ttl=2.0, **extra) -> int:
        """Connects to the Tiffin master at ``master_server_addr``. Also ``setup(config_dict)`` with the
        same names as keys (sizes may be text such as "4 GB"; the master may also be given as
        ``master_server_address``). Returns 0, or a negative code (RPC_FAIL -900 when the master cannot
        be reached, INVALID_PARAMS -600 for a bad or repeated setup).

        Tiffin's own option, a keyword (or a key of the dict): ``location_cache_ttl``, how long a lookup
        is reused for later reads of the key (seconds, or text such as "500ms" or "2s"; default 2, 0 =
        off), as :meth:`tiffin.Client.connect`'s."""
        if isinstance(local_hostname, dict):
            cfg = dict(local_hostname)
            if "local_hostname" not in cfg or "metadata_server" not in cfg:
                raise InvalidArgument("INVALID_PARAMS", "setup(config): local_hostname and metadata_server are required")
            master = cfg.pop("master_server_addr", cfg.pop("master_server_address", "127.0.0.1:50051"))
            known = ("local_hostname", "metadata_server", "global_segment_size", "local_buffer_size", "protocol",
                     "rdma_devices", "tenant_id", "enable_ssd_offload", "ssd_offload_path", "location_cache_ttl")
            kwargs = {k: cfg.pop(k) for k in known if k in cfg}
            if "device_name" in cfg:
                kwargs.setdefault("rdma_devices", cfg.pop("device_name"))
            for k in cfg:
                _once(f"setup-key-{k}", "setup(config): %r has no meaning for Tiffin and is ignored", k)
            return self.setup(master_server_addr=master, **kwargs)
        if metadata_server is None:
            raise InvalidArgument("INVALID_PARAMS", "setup() needs local_hostname and metadata_server, as Mooncake's")
        hostname = _str(local_hostname, "local_hostname")
        _str(metadata_server, "metadata_server")
        gss = _size(global_segment_size, "global_segment_size")
        _size(local_buffer_size, "local_buffer_size")
        protocol = _str(protocol, "protocol")
        rdma_devices = _str(rdma_devices or "", "rdma_devices")
        master = _str(master_server_addr, "master_server_addr")
        ttl = _seconds(location_cache_ttl, "location_cache_ttl")
        if isinstance(enable_ssd_offload, str):
            enable_ssd_offload = enable_ssd_offload.strip().lower() in ("1", "true", "yes", "on", "enable")
        if (tenant_id or "default") != "default":
            log.error("setup: tenant_id %r: Tiffin has no tenants (one key space per cluster); use a separate "
                      "cluster or a key prefix", tenant_id)
            return CODES["INVALID_PARAMS"]
        if gss:
            _once("gss", "global_segment_size=%d: a Tiffin client contributes no memory; storage comes from "
                         "nodes (tiffin node --segment-size). Ignored.", gss)
        if protocol.lower() != "tcp" or rdma_devices:
            _once("proto", "protocol=%r rdma_devices=%r: the Tiffin Python client moves bytes over TCP, or by "
                           "memory copy from same-host nodes started with --shared-memory-dir. Using TCP.",
                  protocol, rdma_devices)
        if engine is not None:
            _once("engine", "setup(engine=...): a Mooncake TransferEngine has no use in Tiffin; ignored")
        if enable_ssd_offload:
            _once("ssd", "enable_ssd_offload: Tiffin's SSD tier belongs to nodes (tiffin node --storage-path, "
                         "master -D offload.mode=on-evict); ignored for this client")
        if enable_client_http_server:
            _once("http", "enable_client_http_server: not available in the Tiffin client; the master serves "
                          "/metrics on its admin port")
        if extra:
            _once("setup-extra", "setup(): %s have no meaning for Tiffin and are ignored", sorted(extra))
        with self._lock:
            if self._client is not None:
                log.error("setup: the store is already set up; close() it first")
                return CODES["INVALID_PARAMS"]
            try:
                # the peer id is the writer id too: one per store
                self._client = Client.connect(master, peer_id=f"mooncake-api-{hostname}-{os.getpid()}-{id(self):x}",
                                              location_cache_ttl=ttl)
            except InvalidArgument:
                raise
            except TiffinError as e:
                log.error("setup: cannot connect to the Tiffin master %s: %s", master, e)
                return e.value
            self._hostname = hostname
        return 0

    def init_all(self, protocol, device_name, mount_segment_size=16 * _MiB) -> int:
        """Mooncake's all-defaults setup: the master at 127.0.0.1:50051 (or ``TIFFIN_MASTER_ADDRESS``)."""
        master = os.environ.get("TIFFIN_MASTER_ADDRESS", "127.0.0.1:50051")
        return self.setup("localhost:12345", "127.0.0.1:2379", mount_segment_size, 1 << 30, protocol,
                          device_name or "", master)

    def setup_dummy(self, mem_pool_size, local_buffer_size, server_address) -> int:
        """Mooncake's dummy client talks to a separate ``mooncake_client`` process; Tiffin has no such
        split (every client talks to the master and nodes directly). Returns NOT_SUPPORTED (-1012);
        use ``setup`` with the master's address."""
        log.error("setup_dummy(%r): Tiffin has no real/dummy client split; call setup(...) with the master's "
                  "address", server_address)
        return CODES["NOT_SUPPORTED"]

    def close(self) -> int:
        """Closes the connections. Idempotent; returns 0."""
        with self._lock:
            c, self._client = self._client, None
            self._registered.clear()
        if c is not None:
            c.close()
        return 0

    def health_check(self) -> int:
        """0 healthy, 1 not set up or closed, 2 master unreachable."""
        c = self._client
        if c is None:
            return 1
        try:
            c._rpc(Op.SERVICE_READY, pb.Empty(), pb.ServiceReadyReply)
            return 0
        except TiffinError:
            return 1 if c.closed else 2

    def get_hostname(self) -> str:
        """The ``local_hostname`` given to setup (a Tiffin client serves nothing itself)."""
        return self._hostname

    def _c(self) -> Client:
        c = self._client
        if c is None:
            raise TiffinError("INVALID_PARAMS", "the store is not set up; call setup() first")
        return c

    # ------------------------------------------------------------------ placement

    def _opts(self, config) -> dict:
        if config is None:
            return {}
        if not isinstance(config, ReplicateConfig):
            raise InvalidArgument("INVALID_PARAMS", f"config must be a ReplicateConfig, not {type(config).__name__}")
        preferred = config.preferred_segment or (config.preferred_segments[0] if config.preferred_segments else "")
        if config.preferred_segments and len(config.preferred_segments) > 1 and not config.preferred_segment:
            _once("prefs", "ReplicateConfig.preferred_segments: Tiffin prefers one segment; using the first")
        if config.group_ids:
            _once("groups", "ReplicateConfig.group_ids: Tiffin has no object groups; ignored")
        if config.prefer_alloc_in_same_node:
            _once("samenode", "ReplicateConfig.prefer_alloc_in_same_node: Tiffin places replicas by its "
                              "allocation strategy; ignored (set preferred_segment to place one)")
        if not isinstance(config.replica_num, int):
            raise InvalidArgument("INVALID_PARAMS", "ReplicateConfig.replica_num must be an int")
        return {"replicas": config.replica_num, "soft_pin": bool(config.with_soft_pin),
                "hard_pin": bool(config.with_hard_pin),
                "preferred_segment": self._segment_for(_str(preferred, "preferred_segment")) or None}

    def _segment_for(self, preferred: str) -> str:
        """A Tiffin segment name for Mooncake's ``preferred_segment`` (which names a store by
        ``host:port``): a segment name as is, a node endpoint as that node's segment."""
        if not preferred:
            return ""
        now = time.monotonic()
        if now - self._segments_at > 1.0:
            try:
                segs = self._c().stat()["segments"]
                self._segment_names = {g["name"] for g in segs}
                self._segment_by_endpoint = {g["endpoint"]: g["name"] for g in segs}
                self._segments_at = now
            except TiffinError:
                pass
        if preferred in self._segment_names:
            return preferred
        if preferred in self._segment_by_endpoint:
            return self._segment_by_endpoint[preferred]
        _once(f"pref-{preferred}", "preferred_segment %r names no mounted segment or node; the master places "
                                   "the object itself", preferred)
        return ""

    # ------------------------------------------------------------------ byte values

    def put(self, key, value, config=None) -> int:
        """Stores ``value`` (any buffer); 0, or a negative code. An existing key is 0 (not overwritten)."""
        return _code(lambda: self._c().put(_key(key), value, **self._opts(config)))

    def upsert(self, key, value, config=None) -> int:
        """Inserts or replaces the object; 0 or a negative code. As in Mooncake, an object being read is
        replaced too: readers keep the old bytes until the upsert returns (Tiffin writes the new object beside
        the old and frees the old once its read leases end, where Mooncake overwrites same-size buffers in
        place)."""
        return _code(lambda: self._c().put(_key(key), value, **self._upsert_opts(config)))

    def put_parts(self, key, *parts, config=None) -> int:
        """Stores the concatenation of ``parts`` (bytes-like) as one object, without joining them."""
        return _code(lambda: self._c().put_parts(_key(key), *parts, **self._opts(config)))

    def upsert_parts(self, key, *parts, config=None) -> int:
        """``upsert`` of the concatenation of ``parts`` (bytes-like), without joining them."""
        return _code(lambda: self._c().put_parts(_key(key), *parts, **self._upsert_opts(config)))

    def put_batch(self, keys, values, config=None) -> int:
        """Stores many objects; 0 when all succeeded, else the first negative code."""
        return _first_code(lambda: self._c().batch_put(_keys(keys), list(values), **self._opts(config)))

    def upsert_batch(self, keys, values, config=None) -> int:
        """``upsert`` of many objects; 0 when all succeeded, else the first negative code."""
        return _first_code(lambda: self._c().batch_put(_keys(keys), list(values), **self._upsert_opts(config)))

    def _upsert_opts(self, config) -> dict:
        """The put options of ``config`` for an upsert that replaces even an object being read."""
        return dict(self._opts(config), upsert=True, replace_leased=True)

    def get(self, key) -> bytes:
        """The object's bytes; ``b""`` when it is missing or the read fails."""
        try:
            return self._c().get(_key(key))
        except InvalidArgument:
            raise
        except TiffinError as e:
            if e.code != "OBJECT_NOT_FOUND":
                log.debug("get(%r) failed: %s", key, e)
            return b""

    def get_batch(self, keys) -> list:
        """The objects' bytes, ``b""`` for each one missing or failed."""
        try:
            return [r.value if r.ok else b"" for r in self._c().batch_get(_keys(keys))]
        except InvalidArgument:
            raise
        except TiffinError:
            return [b""] * len(keys)

    def get_buffer(self, key) -> Optional[BufferHandle]:
        """The object's bytes in a :class:`BufferHandle` (buffer protocol, ``ptr()``, ``size()``), or
        None."""
        return self.batch_get_buffer([key])[0]

    def batch_get_buffer(self, keys) -> list:
        """One :class:`BufferHandle` per key, None for each missing or failed; read straight into the
        handles (no copy after the socket)."""
        keys = _keys(keys)
        try:
            results = self._c()._batch_get_buffers(keys, BufferHandle)
        except InvalidArgument:
            raise
        except TiffinError:
            return [None] * len(keys)
        return [h if r.ok else None for r, h in results]

    def get_size(self, key) -> int:
        """The object's size in bytes, or a negative code (OBJECT_NOT_FOUND -704). Like Mooncake's, the
        lookup grants a read lease."""
        try:
            return self._c()._location(B.check_key(_key(key))).size
        except InvalidArgument:
            raise
        except TiffinError as e:
            return e.value

    # ------------------------------------------------------------------ zero-copy (pointers)

    def register_buffer(self, buffer_ptr, size) -> int:
        """Records a buffer for the pointer calls; 0. Tiffin needs no registration (it reads and writes
        through the socket or a shared mapping), so pointer calls also work on unregistered memory. A range that is
        not host memory the process can read and write (GPU memory, which Mooncake moves itself and Tiffin does not)
        is INVALID_PARAMS (-600), logged with the reason, as every later pointer call on it would be."""
        if not isinstance(buffer_ptr, int) or not isinstance(size, int):
            raise InvalidArgument("INVALID_PARAMS", "register_buffer(buffer_ptr: int, size: int)")
        if buffer_ptr <= 0 or size <= 0:
            return CODES["INVALID_PARAMS"]
        try:
            HOST.check(buffer_ptr, size, "register_buffer", fresh=True)
        except TiffinError as e:
            log.error("%s", e)
            return CODES["INVALID_PARAMS"]
        with self._lock:
            self._registered[buffer_ptr] = size
        return 0

    def unregister_buffer(self, buffer_ptr) -> int:
        """Forgets a registered buffer; 0, or INVALID_PARAMS (-600) if it was not registered."""
        if not isinstance(buffer_ptr, int):
            raise InvalidArgument("INVALID_PARAMS", "unregister_buffer(buffer_ptr: int)")
        with self._lock:
            return 0 if self._registered.pop(buffer_ptr, None) is not None else CODES["INVALID_PARAMS"]

    def put_from(self, key, buffer_ptr, size, config=None) -> int:
        """Stores ``size`` bytes at address ``buffer_ptr``; 0 or a negative code."""
        return _code(lambda: self._c().put(_key(key), B.from_pointer(buffer_ptr, size), **self._opts(config)))

    def upsert_from(self, key, buffer_ptr, size, config=None) -> int:
        """``upsert`` from ``size`` bytes at ``buffer_ptr``."""
        return _code(lambda: self._c().put(_key(key), B.from_pointer(buffer_ptr, size), **self._upsert_opts(config)))

    def get_into(self, key, buffer_ptr, size) -> int:
        """Reads the object into ``size`` bytes at ``buffer_ptr``; the bytes read, or a negative code
        (BUFFER_OVERFLOW -10 when the buffer is too small)."""
        try:
            return self._c()._get_into(B.check_key(_key(key)), B.Chunks([B.from_pointer(buffer_ptr, size)]))
        except InvalidArgument:
            raise
        except TiffinError as e:
            return e.value

    def batch_put_from(self, keys, buffer_ptrs, sizes, config=None) -> list:
        """Stores each key from its buffer; per key 0 or a negative code."""
        return self._batch_put_parts(keys, [[p] for p in buffer_ptrs], [[s] for s in sizes], config)

    def batch_put_from_multi_buffers(self, keys, all_buffer_ptrs, all_sizes, config=None) -> list:
        """Stores each key from the concatenation of its buffers; per key 0 or a negative code."""
        return self._batch_put_parts(keys, all_buffer_ptrs, all_sizes, config)

    def batch_upsert_from(self, keys, buffer_ptrs, sizes, config=None) -> list:
        """``upsert`` of each key from its buffer; per key 0 or a negative code."""
        return self._batch_put_parts(keys, [[p] for p in buffer_ptrs], [[s] for s in sizes], config, upsert=True)

    def _batch_put_parts(self, keys, ptrs, sizes, config, upsert=False) -> list:
        keys = _keys(keys)
        ptrs, sizes = list(ptrs), list(sizes)
        if not (len(keys) == len(ptrs) == len(sizes)):
            log.error("batch put: %d keys, %d buffer lists, %d size lists", len(keys), len(ptrs), len(sizes))
            return [CODES["INVALID_PARAMS"]] * len(keys)
        try:
            c = self._c()
            opts = self._opts(config)
            srcs = []
            for i, (p, s) in enumerate(zip(ptrs, sizes)):
                p, s = list(p), list(s)
                if len(p) != len(s):
                    raise TiffinError("INVALID_PARAMS", f"key {i}: {len(p)} buffers but {len(s)} sizes")
                srcs.append(B.Chunks([B.from_pointer(a, n, f"buffer of key {i}") for a, n in zip(p, s)]))
            results = c._batch_put(keys, srcs, _options(opts.get("replicas", 1), opts.get("preferred_segment"),
                                                        opts.get("soft_pin"), opts.get("hard_pin"), upsert,
                                                        replace_leased=upsert))
        except InvalidArgument:
            raise
        except TiffinError as e:
            return [e.value] * len(keys)
        return [0 if r.ok else CODES[r.code] for r in results]

    def batch_get_into(self, keys, buffer_ptrs, sizes) -> list:
        """Reads each key into its buffer; per key the bytes read or a negative code."""
        return self._batch_get_parts(keys, [[p] for p in buffer_ptrs], [[s] for s in sizes])

    def batch_get_into_multi_buffers(self, keys, all_buffer_ptrs, all_sizes, prefer_alloc_in_same_node=False) -> list:
        """Reads each key into its buffers, filled in order; per key the bytes read or a negative code
        (BUFFER_OVERFLOW when the object is larger than its buffers together)."""
        return self._batch_get_parts(keys, all_buffer_ptrs, all_sizes)

    def _batch_get_parts(self, keys, ptrs, sizes) -> list:
        keys = _keys(keys)
        ptrs, sizes = list(ptrs), list(sizes)
        if not (len(keys) == len(ptrs) == len(sizes)):
            log.error("batch get: %d keys, %d buffer lists, %d size lists", len(keys), len(ptrs), len(sizes))
            return [CODES["INVALID_PARAMS"]] * len(keys)
        try:
            c = self._c()
            dsts = []
            for i, (p, s) in enumerate(zip(ptrs, sizes)):
                p, s = list(p), list(s)
                if len(p) != len(s):
                    raise TiffinError("INVALID_PARAMS", f"key {i}: {len(p)} buffers but {len(s)} sizes")
                dsts.append(B.Chunks([B.from_pointer(a, n, f"buffer of key {i}") for a, n in zip(p, s)]))
            results = c._batch_get_into(keys, dsts)
        except InvalidArgument:
            raise
        except TiffinError as e:
            return [e.value] * len(keys)
        return [r.value if r.ok else CODES[r.code] for r in results]

    def get_into_ranges(self, buffer_ptrs, all_keys, all_dst_offsets, all_src_offsets, all_sizes) -> list:
        """Ranged reads into buffers, Mooncake's buffer-major form: for buffer ``b``, key ``all_keys[b][j]``
        and fragment ``f``, ``all_sizes[b][j][f]`` bytes from offset ``all_src_offsets[b][j][f]`` of the
        object go to ``buffer_ptrs[b] + all_dst_offsets[b][j][f]``. Only those bytes are moved (one master
        round trip for all keys). Returns ``[b][j][f]``: the fragment's size, or a negative code for every
        fragment of a key that failed (OBJECT_NOT_FOUND -704; INVALID_PARAMS -600 for a range outside its
        object, a negative offset or size, fragment lists of different lengths, or a range past the end of
        a registered buffer). Lists of different lengths at the top level: logged, ``[]``."""
        ptrs, keys_b = list(buffer_ptrs), [list(k) for k in all_keys]
        dsts_b, srcs_b, sizes_b = list(all_dst_offsets), list(all_src_offsets), list(all_sizes)
        if not (len(ptrs) == len(keys_b) == len(dsts_b) == len(srcs_b) == len(sizes_b)):
            log.error("get_into_ranges: %d buffers, %d key lists, %d/%d/%d offset and size lists", len(ptrs),
                      len(keys_b), len(dsts_b), len(srcs_b), len(sizes_b))
            return []
        bad = CODES["INVALID_PARAMS"]
        out = [[None] * len(k) for k in keys_b]
        flat_keys, flat_frags, at = [], [], []
        with self._lock:
            registered = dict(self._registered)
        for b, ptr in enumerate(ptrs):
            for j, key in enumerate(keys_b[b]):
                try:
                    dst_o, src_o, size = list(dsts_b[b][j]), list(srcs_b[b][j]), list(sizes_b[b][j])
                except (IndexError, TypeError):
                    out[b][j] = [bad]
                    continue
                limit = registered.get(ptr)
                if (len(dst_o) != len(src_o) or len(src_o) != len(size) or any(d < 0 or s < 0 or n < 0 for d, s, n in
                        zip(dst_o, src_o, size)) or (limit is not None and any(d + n > limit for d, n in zip(dst_o, size)))):
                    out[b][j] = [bad] * max(len(size), 1)
                    continue
                try:
                    checked = B.check_key(_key(key))
                    frags = [(s, B.from_pointer(ptr + d, n, f"range {f} of key {j} in buffer {b}"))
                             for f, (d, s, n) in enumerate(zip(dst_o, src_o, size)) if n > 0]
                except InvalidArgument:
                    raise
                except TiffinError as e:  # an empty key, a null buffer address
                    out[b][j] = [e.value] * max(len(size), 1)
                    continue
                flat_keys.append(checked)
                flat_frags.append(frags)
                at.append((b, j, size))
        if flat_keys:
            try:
                results = _ranges.read_ranges(self._c(), flat_keys, lambda i, loc: flat_frags[i] if all(
                    src + len(dst) <= loc.size for src, dst in flat_frags[i]) else "INVALID_PARAMS")
            except InvalidArgument:
                raise
            except TiffinError as e:
                results = [e] * len(flat_keys)
            for (b, j, size), r in zip(at, results):
                code = r.value if isinstance(r, TiffinError) else (0 if r.ok else CODES[r.code])
                out[b][j] = list(size) if code == 0 else [code] * max(len(size), 1)
        return out

    # ------------------------------------------------------------------ existence and removal

    def is_exist(self, key) -> int:
        """1 if the object exists, 0 if not, -1 on error."""
        try:
            return 1 if self._c().exists(_key(key)) else 0
        except InvalidArgument:
            raise
        except TiffinError:
            return -1

    def batch_is_exist(self, keys) -> list:
        """Per key 1, 0 or -1."""
        keys = _keys(keys)
        try:
            results = self._c().batch_exists(keys)
        except InvalidArgument:
            raise
        except TiffinError:
            return [-1] * len(keys)
        return [(1 if r.value else 0) if r.ok else -1 for r in results]

    def remove(self, key, force=False) -> int:
        """0, or a negative code (OBJECT_NOT_FOUND -704, OBJECT_HAS_LEASE -706 unless ``force``)."""
        return _code(lambda: self._c().remove(_key(key), force=bool(force)))

    def batch_remove(self, keys, force=False) -> list:
        """Per key 0 or a negative code."""
        keys = _keys(keys)
        try:
            return [0 if r.ok else CODES[r.code] for r in self._c().batch_remove(keys, force=bool(force))]
        except InvalidArgument:
            raise
        except TiffinError as e:
            return [e.value] * len(keys)

    def remove_by_regex(self, regex_pattern, force=False) -> int:
        """How many objects matching the pattern were removed, or a negative code."""
        try:
            return self._c().remove_by_regex(_str(regex_pattern, "regex_pattern"), force=bool(force))
        except InvalidArgument:
            raise
        except TiffinError as e:
            return e.value

    def remove_all(self, force=False) -> int:
        """How many objects were removed, or a negative code."""
        try:
            return self._c().remove_all(force=bool(force))
        except InvalidArgument:
            raise
        except TiffinError as e:
            return e.value


def install_as_mooncake() -> bool:
    """Makes ``import mooncake.store`` give this module's classes, so code that imports Mooncake itself
    (SGLang's ``mooncake`` HiCache backend, vLLM's ``MooncakeStoreConnector``, LMCache's
    ``mooncakestore://``) runs on Tiffin unchanged. Call it before that code imports Mooncake (for
    example in ``sitecustomize.py``). Returns False, changing nothing, when a real ``mooncake`` module is
    already imported."""
    existing = sys.modules.get("mooncake")
    if existing is not None and not getattr(existing, "__tiffin__", False):
        log.warning("install_as_mooncake: a real 'mooncake' module is already imported; left as it is")
        return False
    pkg = types.ModuleType("mooncake", "Tiffin's stand-in for Mooncake (tiffin.mooncake)")
    pkg.__path__ = []
    pkg.__tiffin__ = True
    store = types.ModuleType("mooncake.store", __doc__)
    for name in ("MooncakeDistributedStore", "ReplicateConfig", "BufferHandle"):
        setattr(store, name, globals()[name])
    store.__tiffin__ = True
    pkg.store = store
    sys.modules["mooncake"] = pkg
    sys.modules["mooncake.store"] = store
    return True
