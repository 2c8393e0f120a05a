"""The native Tiffin client: :class:`Client`.

It follows the Java client (``io.tiffin.core.client.TiffinClient``) step by step:

* put: PUT_START (retried while the master answers NO_AVAILABLE_HANDLE, up to 5 times with growing
  pauses, so its evictor can free room) -> write every replica (a same-host shared-memory replica with
  one memory copy, the others with DATA_WRITE in slices of ``slice_size``, every slice to every node
  written before any answer is read) -> PUT_END; any failed write -> PUT_REVOKE and the error
  (TRANSFER_FAIL unless the node said something more precise). A put of an existing key is a
  successful no-op (Mooncake's rule: OBJECT_ALREADY_EXISTS counts as success) unless ``upsert``.
* get: GET_REPLICA_LIST (the master grants a read lease) -> a same-host replica by memory copy, else
  the remote memory replicas in the master's order, falling back to the next one when a read fails ->
  LEASE_EXPIRED if the lease ran out before the read ended (the bytes may have been evicted and
  reused). Objects that live only on a node's SSD tier are read with DATA_READ_SSD.
* batch calls: one master round trip for all keys, then the reads or writes of all objects pipelined
  per node.

* read hints (as the Java client's ``ReadHints``): a get of a key seen before sends the node read of
  its last known replica together with the lookup and keeps the bytes only if the lookup names that
  very replica.

What the Java client has and this one does not (optional speed-ups there, see docs/PYTHON.md): the
location cache and the local hot cache.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple, Optional

from . import _buffers as B
from ._proto import tiffin_pb2 as pb
from ._shm import SharedSegments
from ._wire import Op, Pool, Request, Settings, STORE_VERSION, DEFAULT_MAX_FRAME, parse_endpoint
from .errors import InvalidArgument, TiffinError, code_name

log = logging.getLogger("tiffin")

MiB = 1 << 20
MEMORY = 0
LOCAL_DISK = 2
_REPLICA_TYPES = {MEMORY: "MEMORY", LOCAL_DISK: "LOCAL_DISK"}
_REPLICA_STATUS = ("UNDEFINED", "INITIALIZED", "PROCESSING", "COMPLETE", "REMOVED", "FAILED")
PUT_RETRIES = 5


class Replica(NamedTuple):
    """Where one copy of an object lives (immutable)."""

    replica_id: int
    type: str          # "MEMORY" or "LOCAL_DISK"
    status: str        # "COMPLETE", ...
    segment: str
    node_id: str
    endpoint: str      # host:port of the node's data plane
    offset: int
    size: int
    mount_epoch: int


class ObjectInfo(NamedTuple):
    """An object's location as the master answered it (immutable); the lookup granted a read lease of
    ``lease_ttl_ms``."""

    key: str
    size: int
    version: int
    lease_ttl_ms: int
    replicas: tuple


class KeyResult(NamedTuple):
    """The outcome of one key of a batch call (immutable): ``code`` is ``"OK"`` or an error code name;
    ``value`` is the call's result for the key (bytes, bytes read, bool, ...) or None."""

    key: str
    value: Any
    code: str

    @property
    def ok(self) -> bool:
        return self.code == "OK"

    @property
    def error(self) -> Optional[TiffinError]:
        return None if self.code == "OK" else TiffinError(self.code, f"{self.code}: key {self.key!r}")

    def unwrap(self):
        """The value, or raises the key's TiffinError."""
        if self.code != "OK":
            raise TiffinError(self.code, f"{self.code}: key {self.key!r}")
        return self.value


class KeyListing(list):
    """``list()``'s answer: (key, size) pairs in key order; ``truncated`` says whether more keys match."""

    truncated: bool = False


class _Hint(NamedTuple):
    endpoint: str
    segment: str
    replica_id: int
    offset: int
    size: int
    mount_epoch: int

    def names(self, r: Replica) -> bool:
        return (r.type == "MEMORY" and r.replica_id == self.replica_id and r.mount_epoch == self.mount_epoch
                and r.offset == self.offset and r.size == self.size and r.segment == self.segment
                and r.endpoint == self.endpoint)


class _ReadHints:
    """Where this client last saw each key's bytes (the first memory replica its last lookup named or
    its last put wrote), so a get can send the node read together with the master lookup and keep the
    bytes only if the lookup names that very replica: same replica id, mount epoch, node, segment,
    offset and size (``ReadHints`` in the Java client, whose comment argues why a confirmed read is the
    object's bytes). Objects read through a same-host mapping get no hint. LRU, bounded; thread-safe."""

    def __init__(self, max_entries: int):
        self._max = max_entries
        self._hints: dict = {}
        self._lock = threading.Lock()
        self.confirmed = 0
        self.refuted = 0

    def get(self, key: str):
        with self._lock:
            h = self._hints.pop(key, None)
            if h is not None:
                self._hints[key] = h  # most recently used last
            return h

    def remember(self, key: str, replicas, direct) -> None:
        first = None
        for r in replicas:
            if r.type == "MEMORY":
                if direct(r):
                    self.invalidate(key)
                    return
                if first is None:
                    first = r
        if first is None or first.mount_epoch == 0:
            self.invalidate(key)
            return
        h = _Hint(first.endpoint, first.segment, first.replica_id, first.offset, first.size, first.mount_epoch)
        with self._lock:
            self._hints.pop(key, None)
            self._hints[key] = h
            if len(self._hints) > self._max:
                del self._hints[next(iter(self._hints))]

    def confirms(self, loc: "ObjectInfo", hint: _Hint) -> bool:
        ok = loc.size == hint.size and any(hint.names(r) for r in loc.replicas)
        if ok:
            self.confirmed += 1
        else:
            self.refuted += 1
        return ok

    def invalidate(self, key: str) -> None:
        with self._lock:
            self._hints.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._hints.clear()

    def __len__(self):
        return len(self._hints)


_DISCARD_MAX = 1 << 20     # largest unwanted speculative answer read and thrown away (else: close)
_DISCARD_WAIT_S = 0.020    # longest wait for it


def _replica(r) -> Replica:
    return Replica(r.replica_id, _REPLICA_TYPES.get(r.type, str(r.type)),
                   _REPLICA_STATUS[r.status] if 0 <= r.status < len(_REPLICA_STATUS) else str(r.status),
                   r.segment, r.node_id, r.endpoint, r.offset, r.size, r.mount_epoch)


def _info(m) -> ObjectInfo:
    return ObjectInfo(m.key, m.size, m.version, m.lease_ttl_ms, tuple(_replica(r) for r in m.replicas))


def _options(replicas, preferred_segment, soft_pin, hard_pin, upsert) -> pb.PutOptionsMsg:
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise InvalidArgument("INVALID_PARAMS", f"replicas = {replicas!r} (expected: an int >= 1)")
    if replicas < 1:
        raise TiffinError("INVALID_PARAMS", f"replicas = {replicas} (expected: at least 1)")
    if preferred_segment is not None and not isinstance(preferred_segment, str):
        raise InvalidArgument("INVALID_PARAMS", "preferred_segment must be a segment name (str) or None")
    return pb.PutOptionsMsg(replicas=replicas, preferred_segment=preferred_segment or "", soft_pin=bool(soft_pin),
                            hard_pin=bool(hard_pin), upsert=bool(upsert))


def _transfer_failure(what: str, cause: BaseException) -> TiffinError:
    """The node's own error when it said something precise, else TRANSFER_FAIL (as the Java client)."""
    if isinstance(cause, TiffinError) and cause.code not in ("RPC_FAIL", "INTERNAL_ERROR"):
        return cause
    return TiffinError("TRANSFER_FAIL", f"{what}: moving bytes to or from a node failed ({cause}); check that the "
                                        "nodes are reachable and retry")


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
                 read_hints: int = 100_000, peer_id: Optional[str] = None):
        """Prefer :meth:`connect`, which also checks the master's version."""
        parse_endpoint(master)
        for name, v in (("timeout", timeout), ("connect_timeout", connect_timeout)):
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
        if auth_token is None:
            # as the Java processes read transport.client-token / transport.auth-token from the environment
            auth_token = (os.environ.get("TIFFIN_TRANSPORT_CLIENT_TOKEN")
                          or os.environ.get("TIFFIN_TRANSPORT_AUTH_TOKEN", ""))
        self._pool = Pool(Settings(float(timeout), float(connect_timeout), auth_token, max_frame_size), self.client_id)
        self._shared = SharedSegments(self._segment_info) if shared_memory else None
        if not isinstance(read_hints, int) or read_hints < 0:
            raise InvalidArgument("INVALID_PARAMS", f"read_hints = {read_hints!r} (expected: an int >= 0, 0 = off)")
        self._hints = _ReadHints(read_hints) if read_hints else None
        self._closed = False
        self._counts = {"shared_reads": 0, "shared_writes": 0, "network_reads": 0, "network_writes": 0,
                        "ssd_reads": 0}

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
        last known replica while the master is asked, as ``client.read-hint-cache-size``), ``peer_id``
        (the name the servers log, and this client's writer id: default ``client-py-<uuid>``).

        Raises TiffinError: RPC_FAIL if the master cannot be reached, INVALID_VERSION on a version
        mismatch, ILLEGAL_CLIENT if it rejects the auth token.
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

    def _rpc(self, op: int, req, reply_cls):
        self._check_open()
        return self._pool.call(self.master, op, req, reply_cls)

    def _segment_info(self, endpoint: str, segment: str):
        return self._pool.call(endpoint, Op.SEGMENT_INFO, pb.SegmentInfoRequest(segment=segment), pb.SegmentInfoReply)

    def _direct(self, r, for_write: bool):
        """The replica's bytes mapped into this process, or None."""
        if self._shared is None or r.type != "MEMORY":
            return None
        return self._shared.slice(r.endpoint, r.segment, r.offset, r.size, for_write)

    def _epoch_moved(self, r) -> bool:
        """Whether a direct copy of replica ``r`` may have met another mount's bytes (checked after the
        copy of a read, before a write); the node makes the same check on the socket path."""
        if r.mount_epoch == 0:
            return False
        now = self._shared.mount_epoch(r.segment)
        return now >= 0 and now != r.mount_epoch

    # ------------------------------------------------------------------ put

    def put(self, key: str, value, *, replicas: int = 1, preferred_segment: Optional[str] = None,
            soft_pin: bool = False, hard_pin: bool = False, upsert: bool = False) -> None:
        """Stores ``value`` (any buffer, read in place) under ``key`` with ``replicas`` copies on
        different nodes. A put of an existing key is a successful no-op (the stored bytes stay) unless
        ``upsert``; objects are at least 1 byte (the master refuses empty ones with INVALID_PARAMS, as
        Mooncake does).

        Raises TiffinError: INVALID_KEY, INVALID_PARAMS, NO_AVAILABLE_HANDLE (no room, after retries),
        TRANSFER_FAIL, RPC_FAIL/RPC_TIMEOUT (master), OBJECT_HAS_LEASE (upsert of an object being read).
        """
        key = B.check_key(key)
        src = B.Chunks([B.readable(value)])
        try:
            self._put(key, src, _options(replicas, preferred_segment, soft_pin, hard_pin, upsert))
        finally:
            src.release()

    def put_parts(self, key: str, *parts, replicas: int = 1, preferred_segment: Optional[str] = None,
                  soft_pin: bool = False, hard_pin: bool = False, upsert: bool = False) -> None:
        """Stores the concatenation of ``parts`` (buffers) as one object, without joining them in
        memory. Otherwise as :meth:`put`."""
        key = B.check_key(key)
        src = B.Chunks([B.readable(p, f"part {i}") for i, p in enumerate(parts)])
        try:
            self._put(key, src, _options(replicas, preferred_segment, soft_pin, hard_pin, upsert))
        finally:
            src.release()

    def _put(self, key: str, src: B.Chunks, options: pb.PutOptionsMsg) -> None:
        if self._hints is not None:
            self._hints.invalidate(key)
        req = pb.PutStartRequest(client_id=self.client_id, key=key, size=src.size, options=options)
        attempt = 0
        while True:
            try:
                reply = self._rpc(Op.PUT_START, req, pb.PutStartReply)
                break
            except TiffinError as e:
                if e.code == "OBJECT_ALREADY_EXISTS" and not options.upsert:
                    return  # Mooncake's rule: a put of an existing key is a successful no-op
                if e.code == "INVALID_PARAMS" and src.size == 0:
                    raise TiffinError("INVALID_PARAMS", f"put {key!r}: the value is empty; Tiffin (like Mooncake) "
                                                        "stores objects of at least 1 byte") from None
                if e.code != "NO_AVAILABLE_HANDLE" or attempt >= PUT_RETRIES:
                    raise
                time.sleep(0.020 * (1 << attempt))  # a failed allocation wakes the master's evictor
                attempt += 1
        replicas = [_replica(r) for r in reply.replicas]
        try:
            failed = self._write_all([replicas], [src])[0]
        except Exception as e:  # noqa: BLE001 - the put is revoked whatever went wrong
            failed = e
        if failed is not None:
            self._revoke_quietly([key])
            raise _transfer_failure(f"put {key!r}", failed)
        self._rpc(Op.PUT_END, pb.KeyRequest(client_id=self.client_id, key=key), pb.Empty)
        self._remember(key, replicas)

    def _revoke_quietly(self, keys) -> None:
        try:
            if len(keys) == 1:
                self._rpc(Op.PUT_REVOKE, pb.KeyRequest(client_id=self.client_id, key=keys[0]), pb.Empty)
            else:
                self._rpc(Op.BATCH_PUT_REVOKE, pb.BatchKeysRequest(client_id=self.client_id, keys=keys),
                          pb.BatchCodesReply)
        except TiffinError as e:
            log.warning("PutRevoke of %d key(s) failed (%s); the master releases them after its put timeout",
                        len(keys), e)

    def _write_all(self, replicas_per_object: list, srcs: list) -> list:
        """Writes every replica of every object (same-host ones by memory copy, the others over the
        network, all requests to all nodes sent before any answer is read). Returns per object None or
        its first failure."""
        n = len(srcs)
        failed: list = [None] * n
        batches: dict = {}
        step = self.slice_size
        for k in range(n):
            replicas = replicas_per_object[k]
            if replicas is None:
                continue
            src = srcs[k]
            for r in replicas:
                local = self._direct(r, True)
                if local is not None and self._epoch_moved(r):
                    local = None  # re-mounted since PUT_START: the node refuses the write over the socket
                if local is not None:
                    try:
                        src.copy_to(local)
                        self._counts["shared_writes"] += 1
                    except Exception as e:  # noqa: BLE001
                        failed[k] = failed[k] or _transfer_failure("same-host write", e)
                    continue
                self._counts["network_writes"] += 1
                reqs = batches.setdefault(r.endpoint, [])
                for off in range(0, r.size, step):
                    length = min(step, r.size - off)
                    reqs.append(Request(pb.DataRequest(segment=r.segment, offset=r.offset + off, length=length,
                                                       mount_epoch=r.mount_epoch), out=src.slice(off, length), owner=k))
        if batches:
            outcome = self._pool.exchange(Op.DATA_WRITE, batches)
            for ep, results in outcome.items():
                for req, err in zip(batches[ep], results):
                    if err is not None and failed[req.owner] is None:
                        failed[req.owner] = err
        return failed

    def batch_put(self, keys, values=None, *, replicas: int = 1, preferred_segment: Optional[str] = None,
                  soft_pin: bool = False, hard_pin: bool = False, upsert: bool = False) -> list:
        """Stores many objects with one master round trip per phase and all writes pipelined:
        ``batch_put(keys, values)`` or ``batch_put({key: value, ...})``. Returns one :class:`KeyResult`
        per key (value None); an existing key is OK (not overwritten) unless ``upsert``. A key given
        twice is written once (the first value; the second counts as existing)."""
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
            return self._batch_put(keys, srcs, _options(replicas, preferred_segment, soft_pin, hard_pin, upsert))
        finally:
            for c in srcs:
                c.release()

    def _batch_put(self, keys: list, srcs: list, options: pb.PutOptionsMsg) -> list:
        n = len(keys)
        if n == 0:
            self._check_open()
            return []
        if self._hints is not None:
            for k in keys:
                self._hints.invalidate(k)
        reply = self._rpc(Op.BATCH_PUT_START, pb.BatchPutStartRequest(
            client_id=self.client_id, keys=keys, sizes=[s.size for s in srcs], options=options), pb.BatchPutStartReply)
        if len(reply.results) != n:
            raise TiffinError("DESERIALIZE_FAIL", f"the master answered {len(reply.results)} results for {n} keys")
        codes = []
        to_write: list = []
        for r in reply.results:
            code = code_name(r.code)
            if code == "OBJECT_ALREADY_EXISTS" and not options.upsert:
                code = "OK"
                to_write.append(None)
            elif code == "OK":
                to_write.append([_replica(x) for x in r.replicas])
            else:
                to_write.append(None)
            codes.append(code)
        try:
            failed = self._write_all(to_write, srcs)
        except Exception as e:  # noqa: BLE001
            failed = [_transfer_failure("batch put", e)] * n
        to_end, end_at, to_revoke = [], [], []
        for i in range(n):
            if to_write[i] is None:
                continue
            if failed[i] is None:
                to_end.append(keys[i])
                end_at.append(i)
            else:
                log.debug("batch put: write of %r failed: %s", keys[i], failed[i])
                codes[i] = _transfer_failure("batch put", failed[i]).code
                to_revoke.append(keys[i])
        if to_revoke:
            self._revoke_quietly(to_revoke)
        if to_end:
            ended = self._rpc(Op.BATCH_PUT_END, pb.BatchKeysRequest(client_id=self.client_id, keys=to_end),
                              pb.BatchCodesReply)
            for j, i in enumerate(end_at):
                codes[i] = code_name(ended.codes[j]) if j < len(ended.codes) else "INTERNAL_ERROR"
                if codes[i] == "OK":
                    self._remember(keys[i], to_write[i])
        return [KeyResult(keys[i], None, codes[i]) for i in range(n)]

    # ------------------------------------------------------------------ get

    def _lookup(self, key: str) -> ObjectInfo:
        loc = _info(self._rpc(Op.GET_REPLICA_LIST, pb.KeyRequest(key=key), pb.ObjectLocationMsg))
        self._remember(key, loc.replicas)
        return loc

    def _remember(self, key: str, replicas) -> None:
        if self._hints is not None:
            self._hints.remember(key, replicas, lambda r: self._direct(r, False) is not None)

    def _hint_for(self, key: str):
        return self._hints.get(key) if self._hints is not None else None

    def _speculate(self, key: str, hint: _Hint, dst: B.Chunks, start: float):
        """Sends the read of ``hint`` into ``dst`` (exactly ``hint.size`` bytes) on an idle connection to
        its node (if there is one: a hint never waits for a connect), then looks ``key`` up. Returns
        (location, True) when the lookup named the hinted replica and its bytes arrived in ``dst``
        within the lease; (location, False) when the caller must read the location the usual way.
        Raises what the lookup raises (the hint is dropped)."""
        conn = self._pool.acquire_idle(hint.endpoint)
        reqs = first = None
        if conn is not None:
            reqs = []
            for off in range(0, hint.size, self.slice_size):
                length = min(self.slice_size, hint.size - off)
                reqs.append(Request(pb.DataRequest(segment=hint.segment, offset=hint.offset + off, length=length,
                                                   mount_epoch=hint.mount_epoch), into=dst.slice(off, length)))
            try:
                first = conn.send(Op.DATA_READ, reqs)
            except TiffinError:
                self._pool.release(conn)  # closed by the failed send
                conn = None
        try:
            loc = self._lookup(key)
        except BaseException as e:
            self._hints.invalidate(key)
            if conn is not None:  # a key that is gone is common; its node most likely is fine
                self._abandon(conn, first, reqs, hint, isinstance(e, TiffinError) and e.code == "OBJECT_NOT_FOUND")
            raise
        if conn is None:
            return loc, False
        if not self._hints.confirms(loc, hint):
            self._abandon(conn, first, reqs, hint, any(r.endpoint == hint.endpoint for r in loc.replicas))
            return loc, False
        try:
            errs = conn.receive(Op.DATA_READ, first, reqs, start + loc.lease_ttl_ms / 1000.0)
        except BaseException:
            conn.close()  # interrupted mid-answer: the stream position is unknown
            raise
        finally:
            self._pool.release(conn)
        for e in errs:
            if e is not None:
                if e.code == "LEASE_EXPIRED":
                    raise e  # the node may be stalled; after the lease no replica's bytes can be trusted
                log.debug("speculative read of %r failed (%s); reading it again", key, e)
                return loc, False
        elapsed_ms = (time.monotonic() - start) * 1000.0
        if elapsed_ms >= loc.lease_ttl_ms:
            raise TiffinError("LEASE_EXPIRED", f"{key!r}: the read took {elapsed_ms:.0f} ms but the lease lasted "
                                               f"{loc.lease_ttl_ms} ms; the bytes may have been evicted, retry")
        self._counts["network_reads"] += 1
        return loc, True

    def _abandon(self, conn, first, reqs, hint, node_alive: bool) -> None:
        """Gives the connection back without the speculative answers: read and thrown away when small
        and the node is alive, else the connection is closed."""
        if node_alive and hint.size <= _DISCARD_MAX:
            conn.receive(Op.DATA_READ, first, [Request(r.msg) for r in reqs], time.monotonic() + _DISCARD_WAIT_S)
        else:
            conn.close()
        self._pool.release(conn)

    def _batch_lookup(self, keys: list) -> list:
        """One ObjectInfo or error code name per key."""
        reply = self._rpc(Op.BATCH_GET_REPLICA_LIST, pb.BatchKeysRequest(keys=keys), pb.BatchLocationsReply)
        if len(reply.results) != len(keys):
            raise TiffinError("DESERIALIZE_FAIL", f"the master answered {len(reply.results)} locations for "
                                                  f"{len(keys)} keys")
        out = [_info(r.location) if r.code == 0 else code_name(r.code) for r in reply.results]
        for k, loc in zip(keys, out):
            if isinstance(loc, ObjectInfo):
                self._remember(k, loc.replicas)
        return out

    def get(self, key: str) -> bytes:
        """The object's bytes (a new ``bytes``).

        Raises TiffinError: OBJECT_NOT_FOUND, LEASE_EXPIRED, TRANSFER_FAIL (no replica readable),
        RPC_FAIL/RPC_TIMEOUT, ...
        """
        key = B.check_key(key)
        start = time.monotonic()
        hint = self._hint_for(key)
        if hint is not None:
            buf = bytearray(hint.size)
            loc, done = self._speculate(key, hint, B.Chunks([memoryview(buf)]), start)
            if done:
                return bytes(buf)
        else:
            loc = self._lookup(key)
        buf = bytearray(loc.size)
        self._read_one(loc, B.Chunks([memoryview(buf)]), start)
        return bytes(buf)

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
            return self._get_into(key, dst)
        finally:
            dst.release()

    def _get_into(self, key: str, dst: B.Chunks) -> int:
        start = time.monotonic()
        hint = self._hint_for(key)
        if hint is not None and dst.size >= hint.size:
            loc, done = self._speculate(key, hint, dst.prefix(hint.size), start)
            if done:
                return hint.size
        else:
            loc = self._lookup(key)
        if dst.size < loc.size:
            raise TiffinError("BUFFER_OVERFLOW", f"{key!r} is {loc.size} bytes but the destination holds {dst.size}")
        self._read_one(loc, dst.prefix(loc.size), start)
        return loc.size

    def _read_one(self, loc: ObjectInfo, dst: B.Chunks, start: float) -> None:
        err = self._read_many([loc], [dst], start)[0]
        if err is not None:
            raise err

    def _read_many(self, locs: list, dsts: list, start: float) -> list:
        """Reads object k of ``locs`` into ``dsts[k]`` (Chunks of exactly its size): a same-host replica
        by memory copy, else the remote memory replicas in order (round r tries replica r of every
        object still unread, all pipelined), else the SSD tier. Returns per object None or its error."""
        n = len(locs)
        errs: list = [None] * n
        remote: dict = {}
        ssd: list = []
        for k, loc in enumerate(locs):
            memory = []
            done = False
            for r in loc.replicas:
                if r.type != "MEMORY":
                    continue
                local = self._direct(r, False)
                if local is None:
                    memory.append(r)
                    continue
                try:
                    dsts[k].copy_from(local)
                except Exception as e:  # noqa: BLE001 - unmapped meanwhile: use the socket
                    log.debug("same-host read of %r failed (%s), using the socket", loc.key, e)
                    memory.append(r)
                    continue
                if self._epoch_moved(r):
                    memory.append(r)  # re-mounted since the master named it: leave it to the node, which refuses it
                    continue
                done = True
                self._counts["shared_reads"] += 1
                break
            if done:
                continue
            if memory:
                remote[k] = memory
                continue
            disk = next((r for r in loc.replicas if r.type == "LOCAL_DISK"), None)
            if disk is not None:
                ssd.append((k, disk))
            else:
                errs[k] = TiffinError("REPLICA_IS_NOT_READY", f"{loc.key!r}: no readable replica")
        if ssd:
            self._read_ssd(locs, dsts, ssd, errs)
        round_ = 0
        while remote:
            batches: dict = {}
            lease = min(locs[k].lease_ttl_ms for k in remote) / 1000.0
            for k, memory in remote.items():
                r = memory[round_]
                self._counts["network_reads"] += 1
                reqs = batches.setdefault(r.endpoint, [])
                for off in range(0, r.size, self.slice_size):
                    length = min(self.slice_size, r.size - off)
                    reqs.append(Request(pb.DataRequest(segment=r.segment, offset=r.offset + off, length=length,
                                                       mount_epoch=r.mount_epoch),
                                        into=dsts[k].slice(off, length), owner=k))
            outcome = self._pool.exchange(Op.DATA_READ, batches, start + lease)
            failed: dict = {}
            for ep, results in outcome.items():
                for req, err in zip(batches[ep], results):
                    if err is not None and req.owner not in failed:
                        failed[req.owner] = err
            round_ += 1
            again = {}
            for k in remote:
                err = failed.get(k)
                if err is None:
                    continue
                if err.code != "LEASE_EXPIRED" and round_ < len(remote[k]):
                    # after the lease no replica's bytes can be trusted: then the read fails as it is
                    log.debug("read of %r from replica %d failed (%s), trying the next", locs[k].key, round_ - 1, err)
                    again[k] = remote[k]
                else:
                    errs[k] = _transfer_failure(f"get {locs[k].key!r}", err)
            remote = again
        now = time.monotonic()
        for k, loc in enumerate(locs):
            if errs[k] is None and (now - start) * 1000.0 >= loc.lease_ttl_ms:
                errs[k] = TiffinError("LEASE_EXPIRED", f"{loc.key!r}: the read took {(now - start) * 1000:.0f} ms "
                                      f"but the lease lasted {loc.lease_ttl_ms} ms; the bytes may have been evicted, "
                                      "retry")
        return errs

    def _read_ssd(self, locs, dsts, items, errs) -> None:
        """Objects only on a node's SSD tier: one DATA_READ_SSD per node; its answer holds the objects
        back to back (staged, then copied: this path is rare)."""
        by_node: dict = {}
        for k, r in items:
            by_node.setdefault(r.endpoint, []).append(k)
        for ep, ks in by_node.items():
            total = sum(locs[k].size for k in ks)
            staging = memoryview(bytearray(total))
            try:
                c = self._pool.acquire(ep)
            except TiffinError as e:
                for k in ks:
                    errs[k] = _transfer_failure(f"get {locs[k].key!r}", e)
                continue
            try:
                reply = c.call(Op.DATA_READ_SSD, pb.SsdReadRequest(keys=[locs[k].key for k in ks]), pb.SsdReadReply,
                               None, [staging])
                got = c._last_bulk
            except TiffinError as e:
                for k in ks:
                    errs[k] = _transfer_failure(f"get {locs[k].key!r}", e)
                continue
            finally:
                self._pool.release(c)
            sizes = list(reply.sizes)
            if len(sizes) != len(ks) or sum(max(0, s) for s in sizes) != got:
                for k in ks:
                    errs[k] = TiffinError("TRANSFER_FAIL", f"node {ep} answered an SSD read of {len(ks)} keys with "
                                          f"{len(sizes)} sizes and {got} bytes; is it running the same Tiffin version?")
                continue
            at = 0
            for k, size in zip(ks, sizes):
                if size != locs[k].size:
                    errs[k] = TiffinError("OBJECT_NOT_FOUND", f"{locs[k].key!r}: its SSD copy on {ep} is gone or corrupt")
                    at += max(0, size)
                    continue
                dsts[k].copy_from(staging[at:at + size])
                self._counts["ssd_reads"] += 1
                at += size

    def batch_get(self, keys) -> list:
        """Many objects with one master round trip, reads pipelined per node: one :class:`KeyResult`
        per key (value: the bytes). Missing keys answer OBJECT_NOT_FOUND; a key given twice is read
        twice."""
        keys = B.check_keys(keys)
        if not keys:
            self._check_open()
            return []
        start = time.monotonic()
        locs = self._batch_lookup(keys)
        bufs = [bytearray(l.size) if isinstance(l, ObjectInfo) else None for l in locs]
        results = self._batch_read(keys, locs, [B.Chunks([memoryview(b)]) if b is not None else None for b in bufs],
                                   start)
        return [KeyResult(r.key, bytes(bufs[i]), "OK") if r.ok else r for i, r in enumerate(results)]

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
        if not keys:
            self._check_open()
            return []
        start = time.monotonic()
        locs = self._batch_lookup(keys)
        results = self._batch_read(keys, locs, dsts, start)
        return [KeyResult(r.key, locs[i].size, "OK") if r.ok else r for i, r in enumerate(results)]

    def _batch_read(self, keys, locs, dsts, start) -> list:
        idx, rl, rd = [], [], []
        out = [None] * len(keys)
        for i, loc in enumerate(locs):
            if not isinstance(loc, ObjectInfo):
                out[i] = KeyResult(keys[i], None, loc)
            elif dsts[i].size < loc.size:
                out[i] = KeyResult(keys[i], None, "BUFFER_OVERFLOW")
            else:
                idx.append(i)
                rl.append(loc)
                rd.append(dsts[i].prefix(loc.size))
        if idx:
            errs = self._read_many(rl, rd, start)
            for j, i in enumerate(idx):
                out[i] = KeyResult(keys[i], None, "OK" if errs[j] is None else errs[j].code)
        return out

    # ------------------------------------------------------------------ exists, remove, query

    def exists(self, key: str) -> bool:
        """Whether an object with this key exists (and is complete)."""
        key = B.check_key(key)
        return self._rpc(Op.EXIST_KEY, pb.KeyRequest(key=key), pb.ExistReply).exists

    def batch_exists(self, keys) -> list:
        """:meth:`exists` for many keys in one round trip: one :class:`KeyResult` per key (value bool)."""
        keys = B.check_keys(keys)
        if not keys:
            self._check_open()
            return []
        reply = self._rpc(Op.BATCH_EXIST_KEY, pb.BatchKeysRequest(keys=keys), pb.BatchExistReply)
        out = []
        for i, k in enumerate(keys):
            code = code_name(reply.codes[i]) if i < len(reply.codes) else "INTERNAL_ERROR"
            out.append(KeyResult(k, bool(reply.exists[i]) if code == "OK" and i < len(reply.exists) else None, code))
        return out

    def remove(self, key: str, force: bool = False) -> None:
        """Removes the object. Without ``force`` an object being read (holding a read lease: every get
        grants one, ``master.lease-ttl``) is refused with OBJECT_HAS_LEASE.

        Raises TiffinError: OBJECT_NOT_FOUND, OBJECT_HAS_LEASE, REPLICA_IS_NOT_READY (being written), ...
        """
        key = B.check_key(key)
        if self._hints is not None:
            self._hints.invalidate(key)
        self._rpc(Op.REMOVE, pb.KeyRequest(key=key, force=bool(force)), pb.Empty)

    def batch_remove(self, keys, force: bool = False) -> list:
        """:meth:`remove` for many keys: one :class:`KeyResult` per key."""
        keys = B.check_keys(keys)
        if not keys:
            self._check_open()
            return []
        if self._hints is not None:
            for k in keys:
                self._hints.invalidate(k)
        reply = self._rpc(Op.BATCH_REMOVE, pb.BatchKeysRequest(keys=keys, force=bool(force)), pb.BatchCodesReply)
        return [KeyResult(k, None, code_name(reply.codes[i]) if i < len(reply.codes) else "INTERNAL_ERROR")
                for i, k in enumerate(keys)]

    def remove_by_regex(self, regex: str, force: bool = False) -> int:
        """Removes the objects whose key matches ``regex`` (RE2 syntax, searched anywhere in the key:
        anchor it with ``^``/``$``); returns how many. An invalid pattern raises INVALID_PARAMS."""
        if not isinstance(regex, str):
            raise InvalidArgument("INVALID_PARAMS", "regex must be a str")
        if self._hints is not None:
            self._hints.clear()  # only saves wasted reads: a hint is used only once a lookup confirms it
        return self._rpc(Op.REMOVE_BY_REGEX, pb.RegexRequest(regex=regex, force=bool(force)), pb.CountReply).count

    def remove_all(self, force: bool = False) -> int:
        """Removes every object (leased ones only with ``force``); returns how many."""
        if self._hints is not None:
            self._hints.clear()
        return self._rpc(Op.REMOVE_ALL, pb.RemoveAllRequest(force=bool(force)), pb.CountReply).count

    def list(self, prefix: str = "", limit: int = 1000) -> KeyListing:
        """Keys starting with ``prefix``, in order, with their sizes: at most ``limit`` (the master caps
        it at 100000); ``.truncated`` says whether more match."""
        if not isinstance(prefix, str):
            raise InvalidArgument("INVALID_PARAMS", "prefix must be a str")
        if not isinstance(limit, int) or limit < 1:
            raise InvalidArgument("INVALID_PARAMS", f"limit = {limit!r} (expected: an int >= 1)")
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
        """Where the object's replicas are, or None if it does not exist (grants a read lease, like a
        get's lookup)."""
        key = B.check_key(key)
        try:
            return self._lookup(key)
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
        network (``network_*``, one per replica attempted) and from SSD tiers, and how many speculative
        reads the master's answer confirmed or refuted (``hints_*``); for diagnostics and tests (counted
        without a lock: approximate when threads race)."""
        out = dict(self._counts)
        out["hints_confirmed"] = self._hints.confirmed if self._hints is not None else 0
        out["hints_refuted"] = self._hints.refuted if self._hints is not None else 0
        return out

    def connections_opened(self) -> int:
        """Connections opened so far (each a TCP connect and a handshake); for diagnostics."""
        return self._pool.opened
