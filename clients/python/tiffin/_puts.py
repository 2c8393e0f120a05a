"""The put path of :class:`tiffin.client.Client`: PUT_START (retried while the master has no room or
another writer's put of the key is in progress), the replicas' writes with their commit records
(:class:`tiffin._transfers.Transfers`), then PUT_END, or PUT_REVOKE when a write failed; the location
cache learns the new replicas. Single and batch puts. PUT_END and the commit records carry the value's CRC32C
when the C implementation is installed (:mod:`tiffin._checksum`), else none (0: readers do not verify it).

Thread-safe: holds no state of its own beyond the collaborators it is given, which are thread-safe.
"""

from __future__ import annotations

import logging
import time

from . import _buffers as B
from . import _checksum
from ._frames import Op
from ._proto import tiffin_pb2 as pb
from ._transfers import commit_record, new_put_id, transfer_failure
from ._types import KeyResult, replica_from
from .errors import TiffinError, code_name

log = logging.getLogger("tiffin")

#: PUT_START attempts after the first while the master answers NO_AVAILABLE_HANDLE, REPLICA_IS_NOT_READY or
#: OBJECT_HAS_REPLICATION_TASK (pauses of 20, 40, 80, 160 and 320 ms: about 0.6 s)
PUT_RETRIES = 5
#: the master's refusals of a PUT_START that end within moments on their own
BRIEF_PUT_REFUSALS = ("NO_AVAILABLE_HANDLE", "REPLICA_IS_NOT_READY", "OBJECT_HAS_REPLICATION_TASK")
#: those a batch put asks again for (not NO_AVAILABLE_HANDLE: a batch answers it at once, so that its caller sees the
#: pressure, as the Java client's ``BriefRefusals.ofBatchPut``)
BRIEF_BATCH_PUT_REFUSALS = ("REPLICA_IS_NOT_READY", "OBJECT_HAS_REPLICATION_TASK")


class Puts:
    """Puts through ``rpc`` (the client's master call), ``io`` (replica writes) and ``locator``."""

    def __init__(self, rpc, io, locator, client_id: str, check_open):
        self._rpc = rpc
        self._io = io
        self._locator = locator
        self.client_id = client_id
        self._check_open = check_open

    def put(self, key: str, src: B.Chunks, options: pb.PutOptionsMsg) -> None:
        self._locator.forget(key)
        put_id = new_put_id()
        req = pb.PutStartRequest(client_id=self.client_id, key=key, size=src.size, options=options, put_id=put_id)
        attempt = 0
        while True:
            try:
                reply = self._rpc(Op.PUT_START, req, pb.PutStartReply)
                break
            except TiffinError as e:
                if e.code == "OBJECT_ALREADY_EXISTS" and not options.upsert:
                    return  # Mooncake's rule: a put of an existing (complete) key is a successful no-op
                if e.code not in BRIEF_PUT_REFUSALS or attempt >= PUT_RETRIES:
                    raise
                # a failed allocation wakes the master's evictor; another writer's put of the key ends as soon, and
                # a node's copy of the object to SSD or back sooner
                time.sleep(0.020 * (1 << attempt))
                attempt += 1
        replicas = [replica_from(r) for r in reply.replicas]
        crc = _checksum.of_parts(src.parts)
        try:
            failed = self._io.write([replicas], [src], [commit_record(key, src.size, reply, put_id, options, crc)])[0]
        except Exception as e:  # noqa: BLE001 - the put is revoked whatever went wrong
            failed = e
        if failed is not None:
            self._revoke_quietly([key])
            raise transfer_failure(f"put {key!r}", failed)
        # cache_owner: this client's own cached location of the object it replaces is not waited for (it forgot it)
        self._rpc(Op.PUT_END, pb.KeyRequest(client_id=self.client_id, key=key, crc32c=crc,
                                            cache_owner=self._locator.cache_owner), pb.Empty)
        self._locator.forget_location(key)  # a lookup of another thread that overlapped the put must not stay
        self._locator.remember(key, replicas)

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

    def batch_put(self, keys: list, srcs: list, options: pb.PutOptionsMsg) -> list:
        """One result per key. The keys another writer was still writing, or a node was copying to SSD or back, are
        put again, together, after the single put's pauses (about 0.6 s in all): a key whose other put completed
        meanwhile is then a successful no-op, as for a single put (two engines storing the same prefix's pages)."""
        out = self._batch_put_once(keys, srcs, options)
        for attempt in range(PUT_RETRIES):
            again = [i for i, r in enumerate(out) if r.code in BRIEF_BATCH_PUT_REFUSALS]
            if not again:
                break
            time.sleep(0.020 * (1 << attempt))
            retried = self._batch_put_once([keys[i] for i in again], [srcs[i] for i in again], options)
            for j, i in enumerate(again):
                out[i] = retried[j]
        return out

    def _batch_put_once(self, keys: list, srcs: list, options: pb.PutOptionsMsg) -> list:
        n = len(keys)
        if n == 0:
            self._check_open()
            return []
        for k in keys:
            self._locator.forget(k)
        put_ids = [new_put_id() for _ in range(n)]
        reply = self._rpc(Op.BATCH_PUT_START, pb.BatchPutStartRequest(
            client_id=self.client_id, keys=keys, sizes=[s.size for s in srcs], options=options, put_ids=put_ids,
            compact=True), pb.BatchPutStartReply)
        if len(reply.results) != n:
            raise TiffinError("DESERIALIZE_FAIL", f"the master answered {len(reply.results)} results for {n} keys")
        codes = []
        crcs = [0] * n
        to_write: list = []
        commits: list = []
        first_of: dict = {}  # key -> index of its first occurrence granted in this batch
        same_as: dict = {}  # index of a repeated key -> that first occurrence, whose outcome it shares
        segments = [(n.segment, n.node_id, n.endpoint) for n in reply.segments]  # compact: each segment once
        for i, r in enumerate(reply.results):
            code = code_name(r.code)
            commit = None
            if code == "OBJECT_ALREADY_EXISTS" and not options.upsert:
                code = "OK"  # complete: a successful no-op (another writer's put in progress is not)
                to_write.append(None)
            elif code == "OK":
                to_write.append([replica_from(x, segments) for x in r.replicas])
                crcs[i] = _checksum.of_parts(srcs[i].parts)
                commit = commit_record(keys[i], srcs[i].size, r, put_ids[i], options, crcs[i])
                first_of.setdefault(keys[i], i)
            else:
                to_write.append(None)
                if code == "REPLICA_IS_NOT_READY" and keys[i] in first_of:
                    same_as[i] = first_of[keys[i]]  # in progress: by this very batch
            codes.append(code)
            commits.append(commit)
        try:
            failed = self._io.write(to_write, srcs, commits)
        except Exception as e:  # noqa: BLE001
            failed = [transfer_failure("batch put", e)] * n
        to_end, end_at, to_revoke = [], [], []
        for i in range(n):
            if to_write[i] is None:
                continue
            if failed[i] is None:
                to_end.append(keys[i])
                end_at.append(i)
            else:
                log.debug("batch put: write of %r failed: %s", keys[i], failed[i])
                codes[i] = transfer_failure("batch put", failed[i]).code
                to_revoke.append(keys[i])
        if to_revoke:
            self._revoke_quietly(to_revoke)
        if to_end:
            ended = self._rpc(Op.BATCH_PUT_END, pb.BatchKeysRequest(
                client_id=self.client_id, keys=to_end, crc32cs=[crcs[i] for i in end_at],
                cache_owner=self._locator.cache_owner), pb.BatchCodesReply)
            for j, i in enumerate(end_at):
                codes[i] = code_name(ended.codes[j]) if j < len(ended.codes) else "INTERNAL_ERROR"
                self._locator.forget_location(keys[i])
                if codes[i] == "OK":
                    self._locator.remember(keys[i], to_write[i])
        for i, first in same_as.items():
            codes[i] = codes[first]  # a key given twice is written once: the second shares the first's outcome
        return [KeyResult(keys[i], None, codes[i]) for i in range(n)]
