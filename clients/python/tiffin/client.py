"""The native Tiffin client: :class:`Client`.

It follows the Java client (``io.tiffin.core.client.TiffinClient``) step by step:

* put (:class:`tiffin._puts.Puts`): PUT_START with a random put id (retried while the master answers
  NO_AVAILABLE_HANDLE, up to 5 times with growing pauses, so its evictor can free room, or REPLICA_IS_NOT_READY:
  another writer's put of the key in progress) -> write every replica (:class:`tiffin._transfers.Transfers`) ->
  PUT_END; any failed write -> PUT_REVOKE and the error (TRANSFER_FAIL unless the node said something more
  precise). A put of an existing (complete) key is a successful no-op (Mooncake's rule: OBJECT_ALREADY_EXISTS
  counts as success) unless ``upsert``. With failover on (the master says ``commit_on_nodes``) the last write of
  every replica carries the object's commit record, which its node keeps, so a master that takes over
  recovers the object.
* masters: ``"h1:p1,h2:p2,h3:p3"`` lists a cluster's masters; calls go to the leader and are repeated
  across a leader change (:class:`tiffin._masters.Masters`).
* get (:class:`tiffin._reads.Reads`): the key's location from the location cache, else GET_REPLICA_LIST (the
  master grants a read lease; :class:`tiffin._locator.Locator`) -> the replicas' bytes (``Transfers``: a
  same-host replica by memory copy, else the remote memory replicas in the master's order, else the SSD tier)
  within the lease. A read through a cached location that fails drops it and runs once more with a fresh
  lookup. A get of a key seen before but not in the location cache sends the node read of its last known
  replica together with the lookup and keeps the bytes only if the lookup names that very replica (read
  hints).
* batch calls: one master round trip for all keys (none for keys the location cache holds), then the
  reads or writes of all objects pipelined per node.

What the Java client has and this one does not (an optional speed-up there, see docs/PYTHON.md): the
local hot cache.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping
from typing import Optional

from . import _buffers as B
from . import _ranges
from ._checksum import verify_setting
from ._hints import ReadHints
from ._locations import LocationCache
from ._locator import Locator
from ._masters import Masters
from ._proto import tiffin_pb2 as pb
from ._shm import SharedSegments
from ._suspects import DEFAULT_TTL as DEFAULT_SUSPECT_TTL, Suspects
from ._transfers import Transfers
from ._tls import tls_from
from ._tokens import tokens_from
from ._types import KeyListing, KeyResult, ObjectInfo, Replica  # noqa: F401 - Replica: public name
from ._pool import Pool
from ._puts import Puts
from ._reads import Reads
from ._removals import Removals
from ._expiry import MISSING, Expiry, ttl_ms_of
from ._frames import DEFAULT_MAX_FRAME, Op
from ._wire import STORE_VERSION, Settings
from .errors import InvalidArgument, TiffinError, code_name

MiB = 1 << 20


def _options(replicas, preferred_segment, soft_pin, hard_pin, upsert, replace_leased=False,
             ttl=None) -> pb.PutOptionsMsg:
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise InvalidArgument("INVALID_PARAMS", f"replicas = {replicas!r} (expected: an int >= 1)")
    if replicas < 1:
        raise TiffinError("INVALID_PARAMS", f"replicas = {replicas} (expected: at least 1)")
    if preferred_segment is not None and not isinstance(preferred_segment, str):
        raise InvalidArgument("INVALID_PARAMS", "preferred_segment must be a segment name (str) or None")
    return pb.PutOptionsMsg(replicas=replicas, preferred_segment=preferred_segment or "", soft_pin=bool(soft_pin),
                            hard_pin=bool(hard_pin), upsert=bool(upsert),
                            replace_leased=bool(upsert) and bool(replace_leased),
                            ttl_ms=0 if ttl is None else ttl_ms_of(ttl, "ttl", False))


class Client:
    """A connection to a Tiffin cluster: asks the master where objects live and moves the bytes
    directly to and from the nodes (or, for a node on this host with ``--shared-memory-dir``, with
    one memory copy through a mapping of its segment).

    Create it with :meth:`connect`; use it as a context manager or call :meth:`close`.

    Values: any buffer-protocol object (bytes, bytearray, memoryview, numpy arrays, mmap, ...) or a
    CPU tensor (anything with ``data_ptr()``, ``numel()``, ``element_size()``), read and written in
    place: the client holds the caller's memory only during a call and never copies it in Python
    (``get`` and ``batch_get`` return new ``bytes``, which costs one copy more than ``get_into``).

    Errors: every failure raises :class:`tiffin.TiffinError` whose ``code`` is the error code name
    (``OBJECT_NOT_FOUND``, ``BUFFER_OVERFLOW``, ``RPC_FAIL``, ...); wrong argument types raise
    :class:`tiffin.InvalidArgument` (a TiffinError and a TypeError). Batch calls report per key in a
    :class:`KeyResult`. Every network wait is bounded (``timeout``, ``connect_timeout``, and for
    reads the master's read lease).

    Thread-safety: thread-safe; share one instance between threads. Each thread's call borrows pooled
    connections (one per server it talks to), so N threads use N connections per server.

    Ownership: the client owns its sockets and its mappings of same-host segment files; :meth:`close`
    releases them.
    """

    def __init__(self, master: str, *, timeout: float = 30.0, connect_timeout: float = 10.0,
                 auth_token: Optional[str] = None,
                 shared_memory: bool = True, slice_size: int = 16 * MiB, max_frame_size: int = DEFAULT_MAX_FRAME,
                 read_hints: int = 100_000, location_cache_ttl: float = 2.0, location_cache_size: int = 100_000,
                 peer_id: Optional[str] = None, failover_timeout: float = 15.0,
                 tls_enabled: Optional[bool] = None, tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
                 tls_key: Optional[str] = None, tls_verify_hostname: Optional[bool] = None,
                 tls_reload_interval=None, tokens_file: Optional[str] = None, tokens_reload_interval=None,
                 verify_checksums: Optional[bool] = None, suspect_ttl: float = DEFAULT_SUSPECT_TTL):
        """Prefer :meth:`connect`, which also checks the master's version."""
        for name, v in (("timeout", timeout), ("connect_timeout", connect_timeout),
                        ("failover_timeout", failover_timeout)):
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                raise InvalidArgument("INVALID_PARAMS", f"{name} = {v!r} (expected: seconds > 0)")
        if not isinstance(slice_size, int) or not 1024 <= slice_size <= 64 * MiB:
            raise InvalidArgument("INVALID_PARAMS", f"slice_size = {slice_size!r} (expected: 1 KiB .. 64 MiB, as "
                                                    "client.transfer-slice-size)")
        if slice_size + 64 * 1024 > max_frame_size:
            raise TiffinError("INVALID_PARAMS", f"slice_size = {slice_size} needs a max_frame_size above it plus 64 KiB")
        self.master = master
        # the master takes a put's writer from the connection's HELLO peer id: the two must be the same
        self.client_id = peer_id or f"client-py-{uuid.uuid4()}"
        self.slice_size = slice_size
        tokens = tokens_from(tokens_file, tokens_reload_interval, auth_token)
        if auth_token is None:
            # as the Java processes read transport.client-token / transport.auth-token from the environment
            auth_token = (os.environ.get("TIFFIN_TRANSPORT_CLIENT_TOKEN")
                          or os.environ.get("TIFFIN_TRANSPORT_AUTH_TOKEN", ""))
        self._pool = Pool(Settings(float(timeout), float(connect_timeout), auth_token, max_frame_size,
                                   tls_from(tls_enabled, tls_ca, tls_cert, tls_key, tls_verify_hostname,
                                             tls_reload_interval), tokens),
                          self.client_id)
        self._masters = Masters(master, self._pool, float(failover_timeout), lambda: self._closed)
        self._shared = SharedSegments(self._segment_info) if shared_memory else None
        if not isinstance(read_hints, int) or read_hints < 0:
            raise InvalidArgument("INVALID_PARAMS", f"read_hints = {read_hints!r} (expected: an int >= 0, 0 = off)")
        if (not isinstance(location_cache_ttl, (int, float)) or isinstance(location_cache_ttl, bool)
                or not location_cache_ttl >= 0):
            raise InvalidArgument("INVALID_PARAMS", f"location_cache_ttl = {location_cache_ttl!r} (expected: seconds "
                                                    ">= 0, 0 = off, as client.location-cache-ttl)")
        if not isinstance(location_cache_size, int) or isinstance(location_cache_size, bool) or location_cache_size < 0:
            raise InvalidArgument("INVALID_PARAMS", f"location_cache_size = {location_cache_size!r} (expected: an "
                                                    "int >= 0, 0 = off, as client.location-cache-size)")
        if not isinstance(suspect_ttl, (int, float)) or isinstance(suspect_ttl, bool) or not suspect_ttl >= 0:
            raise InvalidArgument("INVALID_PARAMS", f"suspect_ttl = {suspect_ttl!r} (expected: seconds >= 0, 0 = off)")
        ttl_ns = int(round(location_cache_ttl * 1e9))
        self._closed = False
        self._counts = {"shared_reads": 0, "shared_writes": 0, "network_reads": 0, "network_writes": 0,
                        "ssd_reads": 0, "lookups": 0}
        self._io = Transfers(self._pool, self._shared, slice_size, self._counts, verify_setting(verify_checksums),
                             Suspects(float(suspect_ttl)) if suspect_ttl > 0 else None)
        self._locator = Locator(self._rpc, self._io.checks_epoch, lambda r: self._io.direct(r, False) is not None,
                                LocationCache(ttl_ns, location_cache_size) if ttl_ns > 0 and location_cache_size
                                else None, ReadHints(read_hints) if read_hints else None, self._counts)
        self._locations = self._locator.locations
        self._reads = Reads(self._locator, self._io, self._check_open)
        self._puts = Puts(self._rpc, self._io, self._locator, self.client_id, self._check_open)
        self._removals = Removals(self._rpc, self._masters, self._locator)
        self._expiry = Expiry(self._rpc, self._locator)
        self._hints = self._locator.hints
        #: what this client's lookups tell the master about reusing their answers (0 = the cache is off)
        self._cache_for_ms = self._locator.cache_for_ms

    @classmethod
    def connect(cls, master: str, **options) -> "Client":
        """Connects to the master at ``host:port`` and checks that it runs the same Tiffin version.

        Options: ``timeout`` (s, default 30: longest wait for one answer, as ``client.rpc-timeout``),
        ``connect_timeout`` (s, default 10), ``auth_token`` (the token of the role this client acts in:
        ``transport.client-token``, or ``transport.admin-token`` for ``remove_all`` and forced removals, or the
        shared ``transport.auth-token``; default: the environment's ``TIFFIN_TRANSPORT_CLIENT_TOKEN``, else
        ``TIFFIN_TRANSPORT_AUTH_TOKEN``, else none), ``shared_memory``
        (default True: use same-host nodes' shared-memory segments, as ``client.shared-memory``),
        ``slice_size`` (default 16 MiB, as ``client.transfer-slice-size``), ``max_frame_size``,
        ``read_hints`` (default 100000 keys, 0 = off: a get of a key this client saw before reads its
        last known replica while the master is asked, as ``client.read-hint-cache-size``),
        ``location_cache_ttl`` (s, default 2, 0 = off: a get, exists or batch read reuses this client's
        lookup of the key made less than this long ago — at most half the master's read lease and 20 s —
        instead of asking the master again, as ``client.location-cache-ttl``; a forced remove by another
        client returns only once that reuse has ended), ``location_cache_size`` (default 100000
        locations, least recently used dropped first, as ``client.location-cache-size``), ``peer_id`` (the
        name the servers log, and this client's writer id: default ``client-py-<uuid>``), ``failover_timeout``
        (s, default 15: how long a call keeps looking for the leader among several masters, or waits for a
        master that recovers, as ``client.failover-timeout``). ``master`` may list every master of a cluster
        with failover, ``"h1:p1,h2:p2,h3:p3"``: the client finds the leader. TLS, as the Java processes'
        ``transport.tls.*`` keys (docs/SECURITY.md): ``tls_enabled`` (default False), ``tls_ca`` (PEM file of the
        authorities whose server certificates to trust; default the system's), ``tls_cert`` and ``tls_key`` (PEM
        certificate chain and unencrypted key this client presents, for mutual TLS), ``tls_verify_hostname``
        (default True: the server's certificate must name the host dialled), ``tls_reload_interval`` (s or a
        string such as ``"1m"``, default 60: how often new connections look at the files again, so that rotated
        certificates are used without a restart; 0 = never); each defaults to the environment's
        ``TIFFIN_TRANSPORT_TLS_ENABLED``, ``_CA``, ``_CERT``, ``_KEY``, ``_VERIFY_HOSTNAME``, ``_RELOAD_INTERVAL``.
        Tokens that rotate, as the Java processes' ``transport.tokens-file``: ``tokens_file`` (a file of
        ``role=token`` lines; the client presents its first ``client`` token, else its first ``auth`` token, instead
        of ``auth_token``, which it may not be given with) and ``tokens_reload_interval`` (s or e.g. ``"1m"``,
        default 60: how often new connections look at the file again; 0 = never); each defaults to the
        environment's ``TIFFIN_TRANSPORT_TOKENS_FILE``, ``TIFFIN_TRANSPORT_TOKENS_RELOAD_INTERVAL`` (an
        ``auth_token`` given to the call wins over the environment's file). ``verify_checksums`` (default the
        environment's ``TIFFIN_CLIENT_VERIFY_CHECKSUMS``, else False; needs the ``crc32c`` module): reads check the
        bytes of each whole object against the CRC32C its writer stored, as the Java client's
        ``client.verify-checksums``; a corrupt copy is skipped for another replica, and the read fails
        CHECKSUM_MISMATCH naming the copy when none is whole (``get_range_into`` is not checked).
        ``suspect_ttl`` (s, default 10, 0 = off; the Java client has no such memory): how long the client
        remembers a node that did not answer a read (unreachable, or silent until the RPC timeout or the read
        lease ended); meanwhile reads try replicas on other nodes first and send it no read-hint read (it is still
        read when it holds an object's only replicas), and a read it answers ends the memory at once.

        Raises TiffinError: RPC_FAIL if the master cannot be reached or the TLS handshake fails, INVALID_VERSION on
        a version mismatch, ILLEGAL_CLIENT if it rejects the auth token (or, plaintext, accepts TLS only),
        INVALID_PARAMS for a TLS or tokens file that cannot be used, or ``verify_checksums`` without ``crc32c``.
        """
        c = cls(master, **options)
        try:
            ready = c._rpc(Op.SERVICE_READY, pb.Empty(), pb.ServiceReadyReply)
            if ready.version != STORE_VERSION:
                raise TiffinError("INVALID_VERSION", f"master {master} runs Tiffin {ready.version}, this client "
                                                     f"{STORE_VERSION}; run the same version everywhere")
        except BaseException:
            c.close()
            raise
        return c

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections and unmaps shared segments. Idempotent; later calls raise
        UNAVAILABLE_IN_CURRENT_STATUS."""
        self._closed = True
        self._pool.close()
        if self._shared is not None:
            self._shared.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __repr__(self) -> str:
        return f"tiffin.Client({self.master!r}{', closed' if self._closed else ''})"

    # ------------------------------------------------------------------ plumbing

    def _check_open(self):
        if self._closed:
            raise TiffinError("UNAVAILABLE_IN_CURRENT_STATUS", "the client is closed")

    def _rpc(self, op: int, req, reply_cls, lost: Optional[list] = None):
        self._check_open()
        return self._masters.call(op, req, reply_cls, lost)

    def _segment_info(self, endpoint: str, segment: str):
        return self._pool.call(endpoint, Op.SEGMENT_INFO, pb.SegmentInfoRequest(segment=segment), pb.SegmentInfoReply)

    # ------------------------------------------------------------------ put

    def put(self, key: str, value, *, replicas: int = 1, preferred_segment: Optional[str] = None,
            soft_pin: bool = False, hard_pin: bool = False, upsert: bool = False,
            replace_leased: bool = False, ttl: Optional[float] = None) -> None:
        """Stores ``value`` (any buffer, read in place) under ``key`` with ``replicas`` copies on
        different nodes. A put of an existing key is a successful no-op (the stored bytes stay) unless
        ``upsert``. An upsert of an object under a read lease fails (OBJECT_HAS_LEASE) unless
        ``replace_leased``: then the new object is written beside the old, which readers keep reading until
        the put returns, and the old bytes are freed once their leases end. An empty value is stored (a
        master of an older version refuses it with INVALID_PARAMS, as Mooncake does). With ``ttl`` (seconds,
        > 0) the object expires that long after the master starts the put; it is then gone for every client.

        Raises TiffinError: INVALID_KEY, INVALID_PARAMS, NO_AVAILABLE_HANDLE (no room, after retries),
        TRANSFER_FAIL, RPC_FAIL/RPC_TIMEOUT (master), OBJECT_HAS_LEASE (upsert of an object being read).
        """
        key = B.check_key(key)
        src = B.Chunks([B.readable(value)])
        try:
            self._put(key, src, _options(replicas, preferred_segment, soft_pin, hard_pin, upsert, replace_leased, ttl))
        finally:
            src.release()

    def put_parts(self, key: str, *parts, replicas: int = 1, preferred_segment: Optional[str] = None,
                  soft_pin: bool = False, hard_pin: bool = False, upsert: bool = False,
                  replace_leased: bool = False, ttl: Optional[float] = None) -> None:
        """Stores the concatenation of ``parts`` (buffers) as one object, without joining them in
        memory. Otherwise as :meth:`put`."""
        key = B.check_key(key)
        src = B.Chunks([B.readable(p, f"part {i}") for i, p in enumerate(parts)])
        try:
            self._put(key, src, _options(replicas, preferred_segment, soft_pin, hard_pin, upsert, replace_leased, ttl))
        finally:
            src.release()

    def _put(self, key: str, src: B.Chunks, options: pb.PutOptionsMsg) -> None:
        self._puts.put(key, src, options)

    def batch_put(self, keys, values=None, *, replicas: int = 1, preferred_segment: Optional[str] = None,
                  soft_pin: bool = False, hard_pin: bool = False, upsert: bool = False,
                  replace_leased: bool = False, ttl: Optional[float] = None) -> list:
        """Stores many objects with one master round trip per phase and all writes pipelined:
        ``batch_put(keys, values)`` or ``batch_put({key: value, ...})``. Returns one :class:`KeyResult`
        per key (value None); an existing key is OK (not overwritten) unless ``upsert`` (``replace_leased``
        and ``ttl`` as in :meth:`put`). A key given twice is written once (the first value; the second counts as
        existing, with the first's outcome)."""
        if values is None and isinstance(keys, Mapping):
            keys, values = list(keys.keys()), list(keys.values())
        keys = B.check_keys(keys)
        if values is None or isinstance(values, (str, bytes, bytearray, memoryview)):
            raise InvalidArgument("INVALID_PARAMS", "values must be a list of buffers, one per key")
        values = list(values)
        if len(keys) != len(values):
            raise TiffinError("INVALID_PARAMS", f"batch put: {len(keys)} keys but {len(values)} values")
        srcs = [B.Chunks([B.readable(v, f"value {i}")]) for i, v in enumerate(values)]
        try:
            return self._batch_put(keys, srcs, _options(replicas, preferred_segment, soft_pin, hard_pin, upsert,
                                                        replace_leased, ttl))
        finally:
            for c in srcs:
                c.release()

    def _batch_put(self, keys: list, srcs: list, options: pb.PutOptionsMsg) -> list:
        # the adapters' entry: buffers already checked
        return self._sendable_only(keys, lambda at: self._puts.batch_put([keys[i] for i in at], [srcs[i] for i in at],
                                                                         options))

    def _sendable_only(self, keys: list, run) -> list:
        """``run(positions)``, one KeyResult per position, for the keys of ``keys`` UTF-8 can encode; one it cannot
        (:func:`tiffin._buffers.sendable`: an unpaired surrogate) is INVALID_KEY alone, never sent."""
        out: list = [None] * len(keys)
        good = []
        for i, k in enumerate(keys):
            if B.sendable(k):
                good.append(i)
            else:
                out[i] = KeyResult(k, None, "INVALID_KEY")
        if len(good) == len(keys):
            return run(good)
        if not good:
            self._check_open()
            return out
        for i, r in zip(good, run(good)):
            out[i] = r
        return out

    # ------------------------------------------------------------------ get (the read path: tiffin._reads)

    def _location(self, key: str) -> ObjectInfo:
        """The location of ``key`` for a read: the location cache's, else the master's (Mooncake's entry)."""
        return self._reads.location(B.check_key(key))

    def get(self, key: str) -> bytes:
        """The object's bytes (a new ``bytes``).

        Raises TiffinError: OBJECT_NOT_FOUND, LEASE_EXPIRED, TRANSFER_FAIL (no replica readable),
        RPC_FAIL/RPC_TIMEOUT, ...
        """
        return self._reads.get(B.check_key(key))

    def get_into(self, key: str, buffer) -> int:
        """Reads the object into ``buffer`` (any writable buffer: bytearray, numpy array, memoryview,
        mmap, CPU tensor), straight from the socket or the shared segment, and returns its size; the
        bytes after it are left alone.

        Raises TiffinError: BUFFER_OVERFLOW when ``buffer`` is smaller than the object (nothing is
        read), and what :meth:`get` raises.
        """
        key = B.check_key(key)
        dst = B.Chunks([B.writable(buffer)])
        try:
            return self._reads.get_into(key, dst)
        finally:
            dst.release()

    def _get_into(self, key: str, dst: B.Chunks) -> int:
        # the adapters' entry: the destination already made
        return self._reads.get_into(B.check_key(key), dst)

    def batch_get(self, keys) -> list:
        """Many objects with one master round trip, reads pipelined per node: one :class:`KeyResult`
        per key (value: the bytes). Missing keys answer OBJECT_NOT_FOUND; a key given twice is read
        twice."""
        keys = B.check_keys(keys)
        return [KeyResult(r.key, bytes(buf), "OK") if r.ok else r for r, buf in self._batch_get_buffers(keys, bytearray)]

    def _batch_get_buffers(self, keys: list, alloc) -> list:
        """Reads each key into a new buffer ``alloc(size)``: one (KeyResult, buffer or None) per key
        (:meth:`tiffin._reads.Reads.batch_get_buffers`; Mooncake's entry)."""
        return self._reads.batch_get_buffers(keys, alloc)

    def batch_get_into(self, keys, buffers) -> list:
        """Reads each key into its buffer (as :meth:`get_into`) with one master round trip and the
        reads pipelined per node: one :class:`KeyResult` per key (value: bytes read); a buffer smaller
        than its object gives BUFFER_OVERFLOW for that key."""
        keys = B.check_keys(keys)
        if isinstance(buffers, (bytes, bytearray, memoryview)) or buffers is None:
            raise InvalidArgument("INVALID_PARAMS", "buffers must be a list of writable buffers, one per key")
        buffers = list(buffers)
        if len(keys) != len(buffers):
            raise TiffinError("INVALID_PARAMS", f"batch get: {len(keys)} keys but {len(buffers)} buffers")
        dsts = [B.Chunks([B.writable(b, f"buffer {i}")]) for i, b in enumerate(buffers)]
        try:
            return self._batch_get_into(keys, dsts)
        finally:
            for c in dsts:
                c.release()

    def _batch_get_into(self, keys: list, dsts: list) -> list:
        # the adapters' and Mooncake's entry: the destinations already made
        return self._reads.batch_get_into(keys, dsts)

    def _batch_lookup(self, keys: list, cached: Optional[list]) -> list:
        # tiffin._ranges' entry
        return self._reads.batch_lookup(keys, cached)

    def get_range_into(self, key: str, offset: int, buffer) -> int:
        """Reads the object's bytes from ``offset`` on into ``buffer`` (any writable buffer, as :meth:`get_into`):
        as many as it holds or the object has after ``offset``, whichever is less; returns how many. Only those
        bytes are moved (a same-host copy, or DATA_READs that start at ``offset``); they are not checked against
        the object's checksum, which covers the whole object.

        Raises TiffinError: INVALID_PARAMS for a negative offset or one past the object's end, and what
        :meth:`get` raises."""
        return _ranges.get_range_into(self, key, offset, buffer)

    # ------------------------------------------------------------------ exists, remove, query

    def exists(self, key: str) -> bool:
        """Whether an object with this key exists (and is complete). True at once when this client holds
        a usable cached location of it (leased by its earlier lookup: not removed, since a forced remove
        waits for the reuse to end)."""
        key = B.check_key(key)
        if self._reads.cached_location(key, time.monotonic_ns(), [False]) is not None:
            return True
        return self._rpc(Op.EXIST_KEY, pb.KeyRequest(key=key), pb.ExistReply).exists

    def batch_exists(self, keys) -> list:
        """:meth:`exists` for many keys in one round trip (none for the keys the location cache holds):
        one :class:`KeyResult` per key (value bool)."""
        keys = B.check_keys(keys)
        self._check_open()
        if not keys:
            return []
        out: list = [None] * len(keys)
        now = time.monotonic_ns()
        ask, at = [], []
        for i, k in enumerate(keys):
            if not B.sendable(k):
                out[i] = KeyResult(k, None, "INVALID_KEY")  # no request can carry it
            elif self._locations is not None and self._locations.get(k, now) is not None:
                out[i] = KeyResult(k, True, "OK")
            else:
                ask.append(k)
                at.append(i)
        if not ask:
            return out
        reply = self._rpc(Op.BATCH_EXIST_KEY, pb.BatchKeysRequest(keys=ask), pb.BatchExistReply)
        for j, (i, k) in enumerate(zip(at, ask)):
            code = code_name(reply.codes[j]) if j < len(reply.codes) else "INTERNAL_ERROR"
            out[i] = KeyResult(k, bool(reply.exists[j]) if code == "OK" and j < len(reply.exists) else None, code)
        return out

    def remove(self, key: str, force: bool = False) -> None:
        """Removes the object. Without ``force`` an object being read (holding a read lease: every get
        grants one, ``master.lease-ttl``) is refused with OBJECT_HAS_LEASE. A forced remove of an object
        that another client holds in its location cache returns once that client's reuse has ended (at
        most its ``location_cache_ttl`` and a quarter); this client's own cache entries are dropped at
        once.

        Raises TiffinError: OBJECT_NOT_FOUND, OBJECT_HAS_LEASE, REPLICA_IS_NOT_READY (a put of it is being
        written), OBJECT_HAS_REPLICATION_TASK (a node has been copying it to SSD or back for longer than the 0.6 s
        this call asks again for), ... After an attempt whose answer was lost, a repeat that finds the key gone counts as done, and one
        refused with OBJECT_HAS_LEASE is repeated until the lease ends (within ``failover_timeout``): that
        attempt may have begun the removal (docs/FAILOVER.md, Limits).
        """
        self._removals.remove(B.check_key(key), force)

    def batch_remove(self, keys, force: bool = False) -> list:
        """:meth:`remove` for many keys: one :class:`KeyResult` per key."""
        keys = B.check_keys(keys)
        if not keys:
            self._check_open()
            return []
        return self._sendable_only(keys, lambda at: self._removals.batch_remove([keys[i] for i in at], force))

    def remove_by_regex(self, regex: str, force: bool = False) -> int:
        """Removes the objects whose key matches ``regex`` (RE2 syntax, searched anywhere in the key:
        anchor it with ``^``/``$``); returns how many. An invalid pattern raises INVALID_PARAMS. Drops
        this client's whole location cache (Python's ``re`` is not RE2: matching here could miss keys
        the master removes)."""
        if not isinstance(regex, str):
            raise InvalidArgument("INVALID_PARAMS", "regex must be a str")
        if not B.sendable(regex):
            raise TiffinError("INVALID_PARAMS", "the regex has an unpaired surrogate: it is not valid Unicode, and no "
                                                "key can match it")
        return self._removals.by_regex(regex, force)

    def remove_all(self, force: bool = False) -> int:
        """Removes every object (leased ones only with ``force``); returns how many."""
        return self._removals.everything(force)

    # ------------------------------------------------------------------ expiry

    def expire(self, key: str, seconds: float) -> bool:
        """Gives ``key``'s object a deadline ``seconds`` from now (the master's clock; 0: it goes now, as Redis's
        ``EXPIRE k 0``); returns False when the key holds no object."""
        return self._expiry.call(B.check_key(key), 1, ttl_ms_of(seconds, "seconds", True)) != MISSING

    def persist(self, key: str) -> bool:
        """Drops ``key``'s deadline; returns whether it had one."""
        return self._expiry.call(B.check_key(key), 2, 0) >= 0

    def ttl_ms(self, key: str) -> int:
        """``key``'s time to live in ms (the master's clock), -1 without a deadline, -2 when it holds no object."""
        return self._expiry.call(B.check_key(key), 0, 0)

    def list(self, prefix: str = "", limit: int = 1000) -> KeyListing:
        """Keys starting with ``prefix``, in order, with their sizes: at most ``limit`` (the master caps
        it at 100000); ``.truncated`` says whether more match."""
        if not isinstance(prefix, str):
            raise InvalidArgument("INVALID_PARAMS", "prefix must be a str")
        if not isinstance(limit, int) or limit < 1:
            raise InvalidArgument("INVALID_PARAMS", f"limit = {limit!r} (expected: an int >= 1)")
        if not B.sendable(prefix):
            raise TiffinError("INVALID_PARAMS", "the prefix has an unpaired surrogate: it is not valid Unicode, and no "
                                                "key starts with it")
        reply = self._rpc(Op.LIST_KEYS, pb.ListKeysRequest(prefix=prefix, limit=min(limit, 0xFFFFFFFF)),
                          pb.ListKeysReply)
        out = KeyListing(zip(reply.keys, reply.sizes))
        out.truncated = reply.truncated
        return out

    def stat(self) -> dict:
        """Cluster summary: version, keys, capacity, used (bytes), live_nodes, evicted_keys and one dict
        per segment (name, node_id, endpoint, capacity, used, largest_free, status)."""
        s = self._rpc(Op.STATS, pb.Empty(), pb.StatsReply)
        return {
            "version": s.version, "keys": s.keys, "capacity": s.capacity, "used": s.used,
            "live_nodes": s.live_nodes, "evicted_keys": s.evicted_keys,
            "segments": [{"name": g.name, "node_id": g.node_id, "endpoint": g.endpoint, "capacity": g.capacity,
                          "used": g.used, "largest_free": g.largest_free, "status": g.status} for g in s.segments],
        }

    def locate(self, key: str) -> Optional[ObjectInfo]:
        """Where the object's replicas are, or None if it does not exist: always the master's current
        answer (grants a read lease, like a get's lookup; not taken from nor kept in the location
        cache)."""
        key = B.check_key(key)
        self._check_open()
        try:
            return self._locator.locate(key)
        except TiffinError as e:
            if e.code == "OBJECT_NOT_FOUND":
                return None
            raise

    def shared_segments(self, probe: bool = True) -> list:
        """Names of the segments this client reads and writes through shared memory (same-host nodes
        started with ``--shared-memory-dir``). With ``probe``, first asks every mounted segment's node
        (STATS, then one SEGMENT_INFO per segment not seen yet)."""
        if self._shared is None:
            return []
        if probe:
            for g in self.stat()["segments"]:
                if g["endpoint"]:
                    self._shared.slice(g["endpoint"], g["name"], 0, 0, False)
        return self._shared.mapped()

    def transfer_counts(self) -> dict:
        """How many replica reads and writes went through same-host mappings (``shared_*``), over the
        network (``network_*``, one per replica attempted) and from SSD tiers, how many speculative
        reads the master's answer confirmed or refuted (``hints_*``), how many lookups were sent to the
        master (``lookups``: GET_REPLICA_LIST and BATCH_GET_REPLICA_LIST requests) and what the location
        cache answered (``location_hits``, ``location_misses``, ``location_refused``: reads through a
        cached location that failed and were looked up again); for diagnostics and tests (counted
        without a lock: approximate when threads race)."""
        out = dict(self._counts)
        out["hints_confirmed"] = self._hints.confirmed if self._hints is not None else 0
        out["hints_refuted"] = self._hints.refuted if self._hints is not None else 0
        stats = self.location_cache_stats() or {}
        for k in ("hits", "misses", "refused"):
            out[f"location_{k}"] = stats.get(k, 0)
        return out

    def location_cache_stats(self) -> Optional[dict]:
        """The location cache's counters (``hits``, ``misses``, ``refused``) and ``size`` (locations kept),
        or None when it is off (``location_cache_ttl=0``)."""
        return self._locations.stats() if self._locations is not None else None

    def connections_opened(self) -> int:
        """Connections opened so far (each a TCP connect and a handshake); for diagnostics."""
        return self._pool.opened
