"""Moving objects' bytes between the caller's buffers and the replicas the master named: the data plane
half of a put or a get (the master half is :class:`tiffin.Client`'s).

* writes: a same-host shared-memory replica with one memory copy, the others with DATA_WRITE in slices
  of ``slice_size``, every slice to every node sent before any answer is read; with failover on, the
  last write of every replica carries the object's commit record (after a memory copy, a DATA_WRITE of
  no bytes does), which its node keeps for a master that takes over;
* reads: a same-host replica by memory copy, else the remote memory replicas in the master's order
  (each failure falling back to the next replica), else the SSD tier; a one-slice object none of whose
  replicas is mapped here is one DATA_READ on a pooled connection, its bytes received straight into the
  destination; every read, of memory or of the SSD tier, must end within the read lease of its lookup, and
  waits no longer (LEASE_EXPIRED otherwise: the bytes may have been evicted and reused); replicas on nodes
  that recently did not answer (:class:`tiffin._suspects.Suspects`) are tried after the others; with
  ``verify`` a whole object's bytes are checked against its CRC32C after each copy's read, and a corrupt copy
  counts as a failed one (the next replica is read; the read fails CHECKSUM_MISMATCH naming the copy when
  none is left);
* speculative reads of a read hint, sent together with the master lookup.

Objects of 0 bytes have nothing to move: they are neither written nor read (no node is contacted).

Thread-safety: thread-safe (no state of its own but counters, counted without a lock: approximate when
threads race, and the suspected nodes, which guard themselves); each call borrows pooled connections. It
holds the caller's memory only during a call.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Callable, Optional

from . import _buffers as B
from . import _checksum
from ._frames import Op, request_frame
from ._hints import Hint, ReadHints
from ._proto import tiffin_pb2 as pb
from ._shm import SharedSegments
from ._suspects import Suspects
from ._types import ObjectInfo, grant_msg
from ._pool import Pool
from ._wire import Request, lease_expired
from .errors import TiffinError

log = logging.getLogger("tiffin")

_DISCARD_MAX = 1 << 20     # largest unwanted speculative answer read and thrown away (else: close)
_DISCARD_WAIT_S = 0.020    # longest wait for it


def new_put_id() -> int:
    """A put's id: random, non-zero, the same for the repeats of its PUT_START (never doubled)."""
    return random.getrandbits(64) or 1


def commit_record(key: str, size: int, grant, put_id: int, options: pb.PutOptionsMsg, crc32c: int = 0):
    """The record a writer leaves on the nodes with the object when the master asks for it (failover on:
    ``grant.commit_on_nodes``), else None; :meth:`Transfers.write` sets its offset per replica. A put granted while
    the master recovered says so (``yields``): at a takeover, any other record of the key wins over it. The object's
    expiry deadline, if its put set one, goes with it (``expire_at_ms``), so a master that takes over keeps it."""
    if not grant.commit_on_nodes:
        return None
    return pb.CommitRecord(key=key, size=size, version=grant.version, put_id=put_id, hard_pin=options.hard_pin,
                           soft_pin=options.soft_pin, crc32c=crc32c, yields=grant.yields,
                           expire_at_ms=grant.expire_at_ms)


def transfer_failure(what: str, cause: BaseException) -> TiffinError:
    """The node's own error when it said something precise, else TRANSFER_FAIL (as the Java client)."""
    if isinstance(cause, TiffinError) and cause.code not in ("RPC_FAIL", "INTERNAL_ERROR"):
        return cause
    return TiffinError("TRANSFER_FAIL", f"{what}: moving bytes to or from a node failed ({cause}); check that the "
                                        "nodes are reachable and retry")


def unresponsive(err: TiffinError) -> bool:
    """Whether a replica read failed because its node did not answer: unreachable, a broken connection, or
    silent until the RPC timeout or the end of the read lease. Such a node is not asked again during the same
    read (see ``stalled`` in :meth:`Transfers.read_many`)."""
    return err.code in ("RPC_FAIL", "RPC_TIMEOUT") or (err.code == "LEASE_EXPIRED"
                                                        and getattr(err, "node_waited", False))


def without_stalled(loc: ObjectInfo, stalled: Optional[dict]):
    """(``loc`` without its replicas on the nodes of ``stalled`` (endpoint -> the failure of a read there earlier
    in this read), None); when no replica is left, (``loc``, the failure of the node of its first replica)."""
    if not stalled or not loc.replicas:
        return loc, None
    keep = tuple(r for r in loc.replicas if r.endpoint not in stalled)
    if len(keep) == len(loc.replicas):
        return loc, None
    if not keep:
        return loc, stalled[loc.replicas[0].endpoint]
    return loc._replace(replicas=keep), None


#: At most this many fresh lookups for a read whose lease a node that did not answer used up (each needs another such
#: node: see :func:`spent`).
STALLED_LOOKUPS = 3


def spent(e: TiffinError, loc: ObjectInfo, stalled: dict, before: int) -> bool:
    """Whether a read of ``loc`` that failed with ``e`` is worth a fresh lookup (a new lease): its lease ended, a node
    that did not answer was found since ``stalled`` held ``before`` nodes, and ``loc`` names a replica on another
    node, not tried yet."""
    return (e.code == "LEASE_EXPIRED" and len(stalled) > before
            and any(r.endpoint not in stalled for r in loc.replicas))


def _lease_spent(key: str, endpoint: str, failure: TiffinError) -> TiffinError:
    """LEASE_EXPIRED of a read whose lease (nearly) ended before another replica could be tried after the one on
    ``endpoint`` failed."""
    return lease_expired(f"{key!r}: too little of the read lease was left to read another replica (the one on "
                         f"{endpoint} failed: {failure}); retry (a fresh lookup grants a new lease)", False)


def _too_late(end: float, lease_s: float) -> bool:
    """Whether too little is left of a lease of ``lease_s`` seconds ending at ``end`` to try another replica: less
    than half a second (a quarter of a shorter lease). The waits before may end that much before the lease (see
    ``Connection._bound_timeout``); a node asked with less might be taken for a stalled one."""
    return end - time.monotonic() < min(0.5, lease_s / 4)


def _lease_expired(loc: ObjectInfo, elapsed_s: float) -> TiffinError:
    return TiffinError("LEASE_EXPIRED", f"{loc.key!r}: the read took {elapsed_s * 1000:.0f} ms but the lease lasted "
                                        f"{loc.lease_ttl_ms} ms; the bytes may have been evicted, retry")


class Transfers:
    """Reads and writes replicas for a :class:`tiffin.Client` (see the module comment).

    ``pool``: connections to the nodes; ``shared``: the same-host mappings, or None (sockets only);
    ``slice_size``: the largest DATA_READ/DATA_WRITE; ``counts``: the client's transfer counters
    (``shared_reads``, ``network_reads``, ...), updated in place; ``verify``: whether reads check the bytes
    they received against the object's checksum (``verify_checksums``); ``suspects``: the nodes that recently
    did not answer, whose replicas are read last (None = no such memory; each call starts with the master's order).

    Thread-safety: thread-safe; see the module comment.
    """

    def __init__(self, pool: Pool, shared: Optional[SharedSegments], slice_size: int, counts: dict,
                 verify: bool = False, suspects: Optional[Suspects] = None):
        self._pool = pool
        self._shared = shared
        self._slice = slice_size
        self._counts = counts
        self._verify = verify
        self.suspects = suspects

    # ------------------------------------------------------------------ nodes that did not answer

    def suspected(self, endpoint: str) -> bool:
        """Whether the node at ``endpoint`` recently did not answer (see :class:`tiffin._suspects.Suspects`)."""
        return self.suspects is not None and self.suspects.suspected(endpoint)

    def _prefer_answering(self, loc: ObjectInfo) -> ObjectInfo:
        """``loc`` with its replicas on suspected nodes moved behind the others (none is dropped)."""
        if self.suspects is None:
            return loc
        order = self.suspects.order(loc.replicas)
        return loc if order is None else loc._replace(replicas=order)

    def _failed(self, stalled: Optional[dict], endpoint: str, err: TiffinError) -> None:
        """Records a failed read on ``endpoint``: when it says the node did not answer (:func:`unresponsive`), in
        ``stalled`` (this call's, if kept) and in the suspected nodes."""
        if unresponsive(err):
            if stalled is not None:
                stalled[endpoint] = err
            if self.suspects is not None:
                self.suspects.note(endpoint)

    def _answered(self, endpoint: str) -> None:
        if self.suspects is not None:
            self.suspects.answered(endpoint)

    def corrupt(self, loc: ObjectInfo, r, dst: B.Chunks) -> Optional[TiffinError]:
        """CHECKSUM_MISMATCH when the bytes of ``loc`` just read from replica ``r`` into ``dst`` (exactly the
        object) do not have the object's CRC32C; None when they do, when the object has none (0) or when this
        client does not verify."""
        if not self._verify or not loc.crc32c:
            return None
        actual = _checksum.of_parts(dst.parts)
        return None if actual == loc.crc32c else _checksum.mismatch(loc, r, actual)

    # ------------------------------------------------------------------ same-host mappings

    def direct(self, r, for_write: bool):
        """The replica's bytes mapped into this process, or None."""
        if self._shared is None or r.type != "MEMORY":
            return None
        return self._shared.slice(r.endpoint, r.segment, r.offset, r.size, for_write)

    def epoch_moved(self, r) -> bool:
        """Whether a direct copy of replica ``r`` may have met another mount's bytes (checked after the
        copy of a read, before a write); the node makes the same check on the socket path."""
        if r.mount_epoch == 0:
            return False
        now = self._shared.mount_epoch(r.segment)
        return now >= 0 and now != r.mount_epoch

    def checks_epoch(self, r) -> bool:
        """Whether a read of memory replica ``r`` checks its mount epoch: the node always does; a copy
        through a mapping only when its node publishes the epoch."""
        return r.mount_epoch != 0 and (self.direct(r, False) is None or self._shared.mount_epoch(r.segment) >= 0)

    # ------------------------------------------------------------------ writes

    def write(self, replicas_per_object: list, srcs: list, commits: Optional[list] = None) -> list:
        """Writes every replica of every object (None: skip the object): same-host ones by memory copy,
        the others over the network, all requests to all nodes sent before any answer is read.
        ``commits``: per object its commit record or None (see :func:`commit_record`); the node records the
        object once the write carrying it is done. Returns per object None or its first failure."""
        n = len(srcs)
        failed: list = [None] * n
        batches: dict = {}
        step = self._slice
        for k in range(n):
            replicas = replicas_per_object[k]
            if replicas is None:
                continue
            src = srcs[k]
            commit = commits[k] if commits else None
            for r in replicas:
                local = self.direct(r, True) if r.size else None
                if local is not None and self.epoch_moved(r):
                    local = None  # re-mounted since PUT_START: the node refuses the write over the socket
                if local is not None:
                    try:
                        src.copy_to(local)
                        self._counts["shared_writes"] += 1
                    except Exception as e:  # noqa: BLE001
                        failed[k] = failed[k] or transfer_failure("same-host write", e)
                        continue
                if local is not None or r.size == 0:
                    if commit is not None:  # the record alone: a write of no bytes
                        commit.offset = r.offset
                        batches.setdefault(r.endpoint, []).append(Request(pb.DataRequest(
                            segment=r.segment, offset=r.offset, length=0, mount_epoch=r.mount_epoch, commit=commit,
                            grant=grant_msg(r)),
                            owner=k))
                    continue
                self._counts["network_writes"] += 1
                reqs = batches.setdefault(r.endpoint, [])
                grant = grant_msg(r)
                for off in range(0, r.size, step):
                    length = min(step, r.size - off)
                    msg = pb.DataRequest(segment=r.segment, offset=r.offset + off, length=length,
                                         mount_epoch=r.mount_epoch, grant=grant)
                    if commit is not None and off + length >= r.size:
                        commit.offset = r.offset
                        msg.commit.CopyFrom(commit)
                    reqs.append(Request(msg, out=src.slice(off, length), owner=k))
        if batches:
            outcome = self._pool.exchange(Op.DATA_WRITE, batches)
            for ep, results in outcome.items():
                for req, err in zip(batches[ep], results):
                    if err is not None and failed[req.owner] is None:
                        failed[req.owner] = err
                if results and results[0] is not None:
                    self._failed(None, ep, results[0])
        return failed

    # ------------------------------------------------------------------ reads

    def read_one(self, loc: ObjectInfo, dst: B.Chunks, start: float, stalled: Optional[dict] = None) -> None:
        """Reads one object into ``dst`` (exactly its size); ``start`` (``time.monotonic()``) is when its
        lookup was sent, from which the lease counts; ``stalled`` as for :meth:`read_many`. Raises the read's
        TiffinError."""
        if loc.size == 0:
            return
        loc, gone = without_stalled(loc, stalled)
        if gone is not None:
            raise transfer_failure(f"get {loc.key!r}", gone)
        loc = self._prefer_answering(loc)
        if stalled and _too_late(start + loc.lease_ttl_ms / 1000.0, loc.lease_ttl_ms / 1000.0):
            ep, failure = next(reversed(stalled.items()))  # a speculative read waited for it (nearly) to the end
            raise _lease_spent(loc.key, ep, failure)
        replicas = loc.replicas
        first = replicas[0] if replicas else None
        if (first is not None and first.type == "MEMORY" and first.size == loc.size <= self._slice
                and len(dst.parts) == 1 and (self._shared is None or not any(
                    r.type == "MEMORY" and self.direct(r, False) is not None for r in replicas))):
            self._read_remote(loc, dst.parts[0], start, stalled)
            return
        err = self.read_many([loc], [dst], start, stalled)[0]
        if err is not None:
            raise err

    def _read_remote(self, loc: ObjectInfo, into: memoryview, start: float, stalled: Optional[dict]) -> None:
        """The common get: one object of one slice, none of whose replicas is mapped here, read from its
        first replica with one DATA_READ on a pooled connection; when that fails, the other memory
        replicas as :meth:`read_many` tries them (within what is left of the lease)."""
        r = loc.replicas[0]
        self._counts["network_reads"] += 1
        end = start + loc.lease_ttl_ms / 1000.0
        try:
            self._pool.read_into(r.endpoint, Op.DATA_READ, request_frame(Op.DATA_READ, pb.DataRequest(
                segment=r.segment, offset=r.offset, length=r.size, mount_epoch=r.mount_epoch, grant=grant_msg(r))),
                into, end)
            failure = self.corrupt(loc, r, B.Chunks([into]))
        except TiffinError as e:
            failure = e
        if failure is not None:
            self._failed(stalled, r.endpoint, failure)
            rest = tuple(x for x in loc.replicas[1:] if x.type == "MEMORY")
            if failure.code == "LEASE_EXPIRED" or not rest:
                # after the lease no replica's bytes can be trusted: then the read fails as it is
                raise transfer_failure(f"get {loc.key!r}", failure) from None
            if _too_late(end, loc.lease_ttl_ms / 1000.0):
                raise _lease_spent(loc.key, r.endpoint, failure) from None
            log.debug("read of %r from replica 0 failed (%s), trying the next", loc.key, failure)
            err = self.read_many([loc._replace(replicas=rest)], [B.Chunks([into])], start, stalled)[0]
            if err is not None:
                # a corrupt first copy is what the caller hears of, unless another one is corrupt too
                raise (failure if failure.code == "CHECKSUM_MISMATCH" and err.code != "CHECKSUM_MISMATCH"
                       else err) from None
            return
        self._answered(r.endpoint)
        now = time.monotonic()
        if now >= end:
            raise _lease_expired(loc, now - start)

    def read_many(self, locs: list, dsts: list, start: float, stalled: Optional[dict] = None) -> list:
        """Reads object k of ``locs`` into ``dsts[k]`` (Chunks of exactly its size): a same-host replica
        by memory copy, else the remote memory replicas in order (each round tries the next replica of every
        object still unread, all pipelined), else the SSD tier. Returns per object None or its error.

        ``stalled`` (endpoint -> failure; None = not kept): the nodes that did not answer earlier in this read
        (:func:`unresponsive`), to which this adds; their replicas are not read again, and an object with no
        other replica fails with its first replica's node's failure."""
        n = len(locs)
        errs: list = [None] * n
        remote: dict = {}
        ssd: list = []
        corrupt: dict = {}  # object index -> the first corrupt copy's CHECKSUM_MISMATCH
        for k, loc in enumerate(locs):
            if loc.size == 0:
                continue  # nothing to read
            loc, gone = without_stalled(loc, stalled)
            if gone is not None:
                errs[k] = transfer_failure(f"get {loc.key!r}", gone)
                continue
            loc = self._prefer_answering(loc)
            memory = self._copy_same_host(loc, dsts[k].copy_from, lambda r, k=k: self._corrupt_at(locs, dsts, k, r,
                                                                                                 corrupt))
            if memory is None:
                continue
            if memory:
                remote[k] = memory
                continue
            disk = next((r for r in loc.replicas if r.type == "LOCAL_DISK"), None)
            if disk is not None and k not in corrupt:
                ssd.append((k, disk))
            else:
                errs[k] = corrupt.get(k) or TiffinError("REPLICA_IS_NOT_READY", f"{loc.key!r}: no readable replica")
        if ssd:
            self._read_ssd(locs, dsts, ssd, errs, start, stalled)

        def slices(k: int, r) -> list:
            grant = grant_msg(r)
            return [Request(pb.DataRequest(segment=r.segment, offset=r.offset + off, length=min(self._slice, r.size - off),
                                           mount_epoch=r.mount_epoch, grant=grant),
                            into=dsts[k].slice(off, min(self._slice, r.size - off)), owner=k)
                    for off in range(0, r.size, self._slice)]

        self._read_remote_rounds(locs, remote, slices, start, errs, "get",
                                 lambda k, r: self._corrupt_at(locs, dsts, k, r, corrupt), corrupt, stalled)
        self._fail_late(locs, errs, start, lambda k: locs[k].size > 0)
        return errs

    def _corrupt_at(self, locs: list, dsts: list, k: int, r, corrupt: dict) -> Optional[TiffinError]:
        """:meth:`corrupt` for object ``k`` read from ``r``; the first mismatch of each object is kept in
        ``corrupt``, the error its read fails with if no other copy is read whole."""
        err = self.corrupt(locs[k], r, dsts[k])
        if err is not None:
            log.debug("%s", err)
            corrupt.setdefault(k, err)
        return err

    def read_ranges(self, locs: list, frags: list, start: float, stalled: Optional[dict] = None) -> list:
        """Reads byte ranges of objects: ``frags[k]`` lists the (source offset, destination view) pairs of
        object k, each range inside the object (the caller checked). A same-host replica is copied from
        range by range; otherwise only the ranges' bytes cross the network, from the remote memory replicas
        as :meth:`read_many` tries them; an object with no memory replica is read whole (the SSD tier) into
        a staging buffer first. ``start`` and ``stalled`` as for :meth:`read_many`. Returns per object None or its
        error."""
        errs: list = [None] * len(locs)
        remote: dict = {}
        for k, loc in enumerate(locs):
            if not frags[k]:
                continue
            loc, gone = without_stalled(loc, stalled)
            if gone is not None:
                errs[k] = transfer_failure(f"get ranges of {loc.key!r}", gone)
                continue
            loc = self._prefer_answering(loc)

            def copy(local, ranges=frags[k]) -> None:
                for src, dst in ranges:
                    dst[:] = local[src:src + len(dst)]

            memory = self._copy_same_host(loc, copy)
            if memory:
                remote[k] = memory
            elif memory is not None:  # no memory replica: the whole object from the SSD tier, then its ranges
                staging = memoryview(bytearray(loc.size))
                errs[k] = self.read_many([loc], [B.Chunks([staging])], start, stalled)[0]
                if errs[k] is None:
                    copy(staging)

        def ranges(k: int, r) -> list:
            grant = grant_msg(r)
            return [Request(pb.DataRequest(segment=r.segment, offset=r.offset + src + off,
                                           length=min(self._slice, len(dst) - off), mount_epoch=r.mount_epoch,
                                           grant=grant), into=[dst[off:off + self._slice]], owner=k)
                    for src, dst in frags[k] for off in range(0, len(dst), self._slice)]

        self._read_remote_rounds(locs, remote, ranges, start, errs, "get ranges of", stalled=stalled)
        self._fail_late(locs, errs, start, lambda k: bool(frags[k]))
        return errs

    def _copy_same_host(self, loc: ObjectInfo, copy: Callable, check: Optional[Callable] = None) -> Optional[list]:
        """Reads ``loc`` with ``copy(mapping)`` from a memory replica mapped into this process, if any: None when
        one was copied, else the memory replicas to read over the network (empty: none). ``check(replica)``, when
        given, judges a copy's bytes: a corrupt one (an error) is neither kept nor read again over the network."""
        memory = []
        for r in loc.replicas:
            if r.type != "MEMORY":
                continue
            local = self.direct(r, False)
            if local is None:
                memory.append(r)
                continue
            try:
                copy(local)
            except Exception as e:  # noqa: BLE001 - unmapped meanwhile: use the socket
                log.debug("same-host read of %r failed (%s), using the socket", loc.key, e)
                memory.append(r)
                continue
            if self.epoch_moved(r):
                memory.append(r)  # re-mounted since the master named it: leave it to the node, which refuses it
                continue
            if check is not None and check(r) is not None:
                continue  # its node holds the same bytes: try the other replicas
            self._counts["shared_reads"] += 1
            return None
        return memory

    def _read_remote_rounds(self, locs: list, remote: dict, requests: Callable, start: float, errs: list,
                            what: str, check: Optional[Callable] = None, corrupt: Optional[dict] = None,
                            stalled: Optional[dict] = None) -> None:
        """Reads the objects of ``remote`` (object index -> its memory replicas) over the network: each round sends
        ``requests(k, replica)`` for the next replica of every object still unread, all pipelined; an object whose
        read failed tries its next replica, except after LEASE_EXPIRED (then no replica's bytes can be trusted) or
        once the lease has ended. ``stalled`` as for :meth:`read_many`: a failure that says the node did not answer
        adds it, and the replicas on its nodes are skipped. ``check(k, replica)``, when given, judges the bytes of
        an object read whole: an error makes it a failed read. An object that fails in the end fails with its
        entry of ``corrupt`` (object index -> the first corrupt copy's error, which ``check`` records), else with
        its last error. Sets ``errs`` for the objects that failed."""
        corrupt = {} if corrupt is None else corrupt
        at = dict.fromkeys(remote, 0)  # object index -> the position of the replica to read next
        last: dict = {}  # object index -> (endpoint, failure) of its last failed read
        first_round = True
        while remote:
            batches: dict = {}
            reading: dict = {}  # object index -> the replica read in this round
            for k, memory in list(remote.items()):
                i = at[k]
                while stalled and i < len(memory) and memory[i].endpoint in stalled:
                    i += 1  # its node did not answer another read of this call
                if i >= len(memory):
                    ep, err = last.get(k) or (memory[0].endpoint, stalled[memory[0].endpoint])
                    errs[k] = corrupt.get(k) or transfer_failure(f"{what} {locs[k].key!r}", err)
                    del remote[k]
                    continue
                at[k] = i
                reading[k] = memory[i]
            if not remote:
                break
            lease = min(locs[k].lease_ttl_ms for k in remote) / 1000.0
            if not first_round and _too_late(start + lease, lease):
                for k in remote:  # (almost) no time left to read another replica
                    ep, err = last[k]
                    errs[k] = corrupt.get(k) or _lease_spent(locs[k].key, ep, err)
                break
            first_round = False
            for k, r in reading.items():
                self._counts["network_reads"] += 1
                batches.setdefault(r.endpoint, []).extend(requests(k, r))
            outcome = self._pool.exchange(Op.DATA_READ, batches, start + lease)
            failed: dict = {}
            for ep, results in outcome.items():
                for req, err in zip(batches[ep], results):
                    if err is not None and req.owner not in failed:
                        failed[req.owner] = err
                        self._failed(stalled, ep, err)
            for k, r in reading.items():
                if k not in failed:
                    self._answered(r.endpoint)
            if check is not None:
                for k, r in reading.items():
                    err = None if k in failed else check(k, r)
                    if err is not None:
                        failed[k] = err
            again = {}
            for k, err in failed.items():
                r = reading[k]
                last[k] = (r.endpoint, err)
                at[k] += 1
                if err.code != "LEASE_EXPIRED" and at[k] < len(remote[k]):
                    log.debug("read of %r from replica %d failed (%s), trying the next", locs[k].key, at[k] - 1, err)
                    again[k] = remote[k]
                else:
                    errs[k] = corrupt.get(k) or transfer_failure(f"{what} {locs[k].key!r}", err)
            remote = again

    @staticmethod
    def _fail_late(locs: list, errs: list, start: float, read: Callable) -> None:
        """Fails with LEASE_EXPIRED every object ``read(k)`` says was read, once the read has outlived its lease
        (the bytes may have been evicted and reused meanwhile)."""
        now = time.monotonic()
        for k, loc in enumerate(locs):
            if errs[k] is None and read(k) and (now - start) * 1000.0 >= loc.lease_ttl_ms:
                errs[k] = _lease_expired(loc, now - start)

    def _read_ssd(self, locs, dsts, items, errs, start: float, stalled: Optional[dict] = None) -> None:
        """Objects only on a node's SSD tier: one DATA_READ_SSD per node; its answer holds the objects
        back to back (staged, then copied: this path is rare). As a memory read, it waits no longer than the read
        lease counted from ``start`` (the shortest of the node's objects): a node that does not answer by then
        fails its objects LEASE_EXPIRED and is added to ``stalled`` (see :meth:`read_many`)."""
        by_node: dict = {}
        copy_of = dict(items)
        for k, r in items:
            by_node.setdefault(r.endpoint, []).append(k)
        for ep, ks in by_node.items():
            total = sum(locs[k].size for k in ks)
            staging = memoryview(bytearray(total))
            end = start + min(locs[k].lease_ttl_ms for k in ks) / 1000.0
            got = [0]
            try:
                reply = self._pool.call(ep, Op.DATA_READ_SSD, pb.SsdReadRequest(keys=[locs[k].key for k in ks]),
                                        pb.SsdReadReply, None, [staging], end=end, got=got)
            except TiffinError as e:
                self._failed(stalled, ep, e)
                for k in ks:
                    errs[k] = transfer_failure(f"get {locs[k].key!r}", e)
                continue
            self._answered(ep)
            got = got[0]
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
                errs[k] = self.corrupt(locs[k], copy_of[k], dsts[k])
                self._counts["ssd_reads"] += 1
                at += size

    # ------------------------------------------------------------------ speculative reads (read hints)

    def speculate(self, key: str, hint: Hint, dst: B.Chunks, start: float,
                  lookup: Callable[[str], ObjectInfo], hints: ReadHints, stalled: Optional[dict] = None):
        """Sends the read of ``hint`` into ``dst`` (exactly ``hint.size`` bytes) on an idle connection to
        its node (if there is one: a hint never waits for a connect), then calls ``lookup(key)``. Returns
        (location, True) when the lookup named the hinted replica and its bytes arrived in ``dst``
        within the lease; (location, False) when the caller must read the location the usual way.
        Raises what the lookup raises (the hint is dropped). ``stalled`` as for :meth:`read_many`: when
        given, a hinted node that did not answer is added, so that the caller's read skips it (and, when it
        kept the read waiting until the lease ended, finds the lease spent), instead of raising its
        LEASE_EXPIRED."""
        conn = self._pool.acquire_idle(hint.endpoint)
        reqs = first = None
        if conn is not None:
            reqs = []
            grant = grant_msg(hint)
            for off in range(0, hint.size, self._slice):
                length = min(self._slice, hint.size - off)
                reqs.append(Request(pb.DataRequest(segment=hint.segment, offset=hint.offset + off, length=length,
                                                   mount_epoch=hint.mount_epoch, grant=grant),
                                    into=dst.slice(off, length)))
            try:
                first = conn.send(Op.DATA_READ, reqs)
            except TiffinError:
                self._pool.release(conn)  # closed by the failed send
                conn = None
        try:
            loc = lookup(key)
        except BaseException as e:
            hints.invalidate(key)
            if conn is not None:  # a key that is gone is common; its node most likely is fine
                self._abandon(conn, first, reqs, hint, isinstance(e, TiffinError) and e.code == "OBJECT_NOT_FOUND")
            raise
        if conn is None:
            return loc, False
        if not hints.confirms(loc, hint):
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
                self._failed(stalled, hint.endpoint, e)
                if e.code == "LEASE_EXPIRED" and (stalled is None or not unresponsive(e)):
                    raise e  # the node may be stalled; after the lease no replica's bytes can be trusted
                log.debug("speculative read of %r failed (%s); reading it again", key, e)
                return loc, False
        self._answered(hint.endpoint)
        elapsed = time.monotonic() - start
        if elapsed * 1000.0 >= loc.lease_ttl_ms:
            raise _lease_expired(loc, elapsed)
        self._counts["network_reads"] += 1
        hinted = next((r for r in loc.replicas if r.endpoint == hint.endpoint and r.segment == hint.segment
                       and r.offset == hint.offset), None)
        if hinted is not None and self.corrupt(loc, hinted, dst) is not None:
            log.debug("speculative read of %r: its bytes fail their checksum; reading it again", key)
            return loc, False
        return loc, True

    def _abandon(self, conn, first, reqs, hint, node_alive: bool) -> None:
        """Gives the connection back without the speculative answers: read and thrown away when small
        and the node is alive, else the connection is closed."""
        if node_alive and hint.size <= _DISCARD_MAX:
            conn.receive(Op.DATA_READ, first, [Request(r.msg) for r in reqs], time.monotonic() + _DISCARD_WAIT_S)
        else:
            conn.close()
        self._pool.release(conn)
