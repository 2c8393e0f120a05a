"""Finding objects: the master lookups of a :class:`tiffin.Client` (GET_REPLICA_LIST and
BATCH_GET_REPLICA_LIST, each granting a read lease) and what the client keeps of their answers — the
location cache (:mod:`tiffin._locations`, reused lookups) and the read hints (:mod:`tiffin._hints`,
speculative node reads).

Thread-safety: thread-safe (the caches lock themselves; the lookup counter is counted without a lock,
approximate when threads race).
"""

from __future__ import annotations

import time
import uuid
from typing import Callable, Optional

from . import _buffers as B
from ._frames import Op
from ._hints import ReadHints
from ._locations import LocationCache
from ._proto import tiffin_pb2 as pb
from ._types import ObjectInfo, info_from
from .errors import TiffinError, code_name


class Locator:
    """Lookups and their reuse for one client.

    ``rpc(opcode, request, reply_cls)`` calls the master; ``checks_epoch(replica)`` says whether a read
    of a memory replica checks its mount epoch and ``direct(replica)`` whether it is mapped here (see
    :class:`tiffin._transfers.Transfers`); ``locations`` and ``hints`` are the caches (None = off);
    ``counts`` is the client's counter dict (``lookups`` is counted here).

    Thread-safety: thread-safe.
    """

    def __init__(self, rpc: Callable, checks_epoch: Callable, direct: Callable,
                 locations: Optional[LocationCache], hints: Optional[ReadHints], counts: dict):
        self._rpc = rpc
        self._checks_epoch = checks_epoch
        self._direct = direct
        self.locations = locations
        self.hints = hints
        self._counts = counts
        # this client's location cache as the master knows it (cache_owner): random, positive, never 0
        self.cache_owner = (uuid.uuid4().int & ((1 << 63) - 1)) | 1
        self.cache_for_ms = locations.cache_for_ms if locations is not None else 0

    # ------------------------------------------------------------------ lookups

    def lookup(self, key: str) -> ObjectInfo:
        """Asks the master where ``key`` lives (granting a read lease), telling it how long the location
        cache may reuse the answer; keeps the answer there when it may be reused, and as the key's read
        hint. Raises the master's TiffinError (OBJECT_NOT_FOUND, ...)."""
        locations = self.locations
        stamp = 0
        if locations is None:
            req = pb.KeyRequest(key=key)
        else:
            stamp = locations.stamp(key)  # before the lookup is sent: see LocationCache.put
            req = pb.KeyRequest(key=key, cache_for_ms=self.cache_for_ms, cache_owner=self.cache_owner)
        sent = time.monotonic_ns()
        self._counts["lookups"] += 1
        loc = info_from(self._rpc(Op.GET_REPLICA_LIST, req, pb.ObjectLocationMsg))
        if locations is not None and self.reusable(loc):
            locations.put(key, loc, sent, stamp)
        self.remember(key, loc.replicas)
        return loc

    def locate(self, key: str) -> ObjectInfo:
        """The master's current answer, neither taken from nor kept in the location cache (kept as the
        key's read hint)."""
        self._counts["lookups"] += 1
        loc = info_from(self._rpc(Op.GET_REPLICA_LIST, pb.KeyRequest(key=key), pb.ObjectLocationMsg))
        self.remember(key, loc.replicas)
        return loc

    def batch_lookup(self, keys: list, cached: Optional[list] = None) -> list:
        """One ObjectInfo or error code name per key. With ``cached`` (one False per key), the keys the
        location cache holds come from it (marked True in ``cached``) and only the others are asked of
        the master, in one batch; without, all are asked. The master's answers are kept when they may be
        reused. A key UTF-8 cannot encode (:func:`tiffin._buffers.sendable`) is INVALID_KEY, not asked."""
        locations = self.locations
        out: list = [None] * len(keys)
        ask, at = keys, None
        if cached is not None and locations is not None:
            now = time.monotonic_ns()
            ask, at = [], []
            for i, k in enumerate(keys):
                hit = locations.get(k, now)
                if hit is None:
                    ask.append(k)
                    at.append(i)
                else:
                    out[i] = hit
                    cached[i] = True
        if not all(B.sendable(k) for k in ask):
            pos = range(len(ask)) if at is None else at
            kept, kept_at = [], []
            for i, k in zip(pos, ask):
                if B.sendable(k):
                    kept.append(k)
                    kept_at.append(i)
                else:
                    out[i] = "INVALID_KEY"  # no request can carry it
            ask, at = kept, kept_at
        if not ask:
            return out
        if locations is None:
            stamps = None
            req = pb.BatchKeysRequest(keys=ask, compact=True)
        else:
            stamps = [locations.stamp(k) for k in ask]  # before the lookup is sent
            req = pb.BatchKeysRequest(keys=ask, cache_for_ms=self.cache_for_ms, cache_owner=self.cache_owner,
                                      compact=True)
        sent = time.monotonic_ns()
        self._counts["lookups"] += 1
        reply = self._rpc(Op.BATCH_GET_REPLICA_LIST, req, pb.BatchLocationsReply)
        if len(reply.results) != len(ask):
            raise TiffinError("DESERIALIZE_FAIL", f"the master answered {len(reply.results)} locations for "
                                                  f"{len(ask)} keys")
        # compact: keys left out (the request's), each segment's names given once
        segments = [(n.segment, n.node_id, n.endpoint) for n in reply.segments]
        for j, r in enumerate(reply.results):
            i = j if at is None else at[j]
            if r.code != 0:
                out[i] = code_name(r.code)
                continue
            loc = info_from(r.location, ask[j], segments)
            out[i] = loc
            if stamps is not None and self.reusable(loc):
                locations.put(ask[j], loc, sent, stamps[j])
            self.remember(ask[j], loc.replicas)
        return out

    def reusable(self, loc: ObjectInfo) -> bool:
        """Whether a location may be reused (as the Java client's ``Locator.isReusable``): it has memory
        replicas, each carrying a mount epoch that the read checks."""
        memory = False
        for r in loc.replicas:
            if r.type == "MEMORY":
                if not self._checks_epoch(r):
                    return False
                memory = True
        return memory

    # ------------------------------------------------------------------ the caches

    def refused(self, key: str) -> None:
        """A read through the key's cached location failed: drops it."""
        self.locations.refused(key)

    def forget(self, key: str) -> None:
        """Drops ``key`` from the location cache and the read hints (this client writes or removes it)."""
        if self.locations is not None:
            self.locations.invalidate(key)
        if self.hints is not None:
            self.hints.invalidate(key)

    def forget_location(self, key: str) -> None:
        if self.locations is not None:
            self.locations.invalidate(key)

    def forget_all(self) -> None:
        if self.locations is not None:
            self.locations.invalidate_matching()
        if self.hints is not None:
            self.hints.clear()  # only saves wasted reads: a hint is used only once a lookup confirms it

    def remember(self, key: str, replicas) -> None:
        """Keeps the replicas this client just wrote or was told of as the key's read hint."""
        if self.hints is not None:
            self.hints.remember(key, replicas, self._direct)

    def hint_for(self, key: str):
        return self.hints.get(key) if self.hints is not None else None
