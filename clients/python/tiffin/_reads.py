"""The read path of :class:`tiffin.client.Client`: get, get_into and their batch forms, from a key to its bytes in
the caller's buffer.

* the key's location: the location cache's, else the master's lookup, which grants a read lease
  (:class:`tiffin._locator.Locator`; a batch asks once for all the keys the cache does not hold);
* a get of a key seen before but not in the location cache sends the node read of its last known replica
  together with the lookup and keeps the bytes only if the lookup names that very replica (read hints,
  :mod:`tiffin._hints`);
* the replicas' bytes within the lease (:class:`tiffin._transfers.Transfers`: a same-host replica by memory copy,
  else the remote memory replicas in the master's order, else the SSD tier);
* a read through a cached location that fails drops it and runs once more with a fresh lookup (the Java client's
  ``LocationRetry``); a read whose lease a node that did not answer used up while another replica was left runs
  again with a fresh lookup (a new lease), up to ``STALLED_LOOKUPS`` times, never asking the nodes that did not
  answer again within the call (:func:`tiffin._transfers.spent`);
* across calls, nodes that recently did not answer (:class:`tiffin._suspects.Suspects`, kept by the transfers) get
  no speculative read, and their replicas are read after the others.

Ranged reads are :mod:`tiffin._ranges`.

Thread-safety: :class:`Reads` is thread-safe: it keeps no state of its own (a call's state, such as the nodes that
did not answer, is local to the call); the locator, its caches and the transfers (with the nodes suspected across
calls) guard themselves.

Ownership: it holds the caller's buffers only during a call and owns nothing else (the client owns the
connections and the mappings the transfers use).
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Optional

from . import _buffers as B
from ._locator import Locator
from ._transfers import STALLED_LOOKUPS, Transfers, spent
from ._types import KeyResult, ObjectInfo
from .errors import TiffinError

log = logging.getLogger("tiffin")


class _LeaseSpent(Exception):
    """A read failed LEASE_EXPIRED after a node that did not answer (it is in the read's ``stalled``) used up
    the lease, and its location names a replica on another node (:func:`tiffin._transfers.spent`): a fresh
    lookup (a new lease) can read that one. ``error``: the read's TiffinError, raised when no lookup is left."""

    def __init__(self, error: TiffinError):
        super().__init__(str(error))
        self.error = error


def _retry_fresh(code: str) -> bool:
    """Whether a read that failed through a cached location is run again with a fresh lookup (as
    ``LocationRetry.retryFresh``): not for failures a fresh lookup cannot change."""
    return code not in ("BUFFER_OVERFLOW", "INVALID_PARAMS", "INVALID_KEY")


class Reads:
    """The reads of one client, of keys and buffers its public methods have checked.

    ``locator`` looks keys up and holds the location cache and the read hints (``locator.locations``,
    ``locator.hints``; None = off), ``io`` moves the replicas' bytes, ``check_open()`` raises
    UNAVAILABLE_IN_CURRENT_STATUS once the client is closed.

    Thread-safety: thread-safe (see the module comment).
    """

    def __init__(self, locator: Locator, io: Transfers, check_open: Callable[[], None]):
        self._locator = locator
        self._io = io
        self._locations = locator.locations
        self._hints = locator.hints
        self._check_open = check_open

    # ------------------------------------------------------------------ locations

    def location(self, key: str) -> ObjectInfo:
        """The location of ``key`` for a read: the location cache's, else the master's."""
        loc = self.cached_location(key, time.monotonic_ns(), [False])
        return loc if loc is not None else self._locator.lookup(key)

    def cached_location(self, key: str, now_ns: int, cached: list):
        """The location cache's usable location of ``key`` (then ``cached[0]`` is set), or None."""
        if self._locations is None:
            return None
        self._check_open()
        loc = self._locations.get(key, now_ns)
        if loc is not None:
            cached[0] = True
        return loc

    def batch_lookup(self, keys: list, cached: Optional[list]) -> list:
        """One location (:class:`ObjectInfo`) or error code name per key (:meth:`tiffin._locator.Locator.batch_lookup`:
        ``cached``, if given, says which came from the location cache)."""
        self._check_open()
        return self._locator.batch_lookup(keys, cached)

    # ------------------------------------------------------------------ single reads

    def get(self, key: str) -> bytes:
        """:meth:`tiffin.client.Client.get` of a checked key."""
        return self._with_fresh_retry(key, self._get_once, None)

    def get_into(self, key: str, dst: B.Chunks) -> int:
        """:meth:`tiffin.client.Client.get_into` of a checked key into ``dst``; returns the object's size."""
        return self._with_fresh_retry(key, self._get_into_once, dst)

    def _with_fresh_retry(self, key: str, read, arg):
        """Runs ``read(key, arg, use_cache, cached, stalled)``; when it fails after using a cached location (a
        node refused a re-mounted segment's descriptor, or was unreachable), drops the entry and runs it once
        more with a fresh lookup, so the caller gets the master's current answer (``LocationRetry``). When a
        node that did not answer used up the read lease while another replica was left (:class:`_LeaseSpent`),
        it runs again with a fresh lookup (a new lease), up to ``STALLED_LOOKUPS`` times; ``stalled`` (endpoint
        -> failure), shared by the runs, keeps the nodes that did not answer, so no run asks them again."""
        cached = [False]
        stalled: dict = {}
        use_cache = True
        lookups = 0
        while True:
            try:
                return read(key, arg, use_cache, cached, stalled)
            except _LeaseSpent as s:
                lookups += 1
                if lookups > STALLED_LOOKUPS:
                    raise s.error from None
                log.debug("read of %r: a node did not answer before the read lease ended (%s); looking it up "
                          "again to read another replica", key, s.error)
                if use_cache and cached[0]:
                    self._locator.refused(key)
            except TiffinError as e:
                if not use_cache or not cached[0] or not _retry_fresh(e.code):
                    raise
                log.debug("read of %r through its cached location failed (%s); looking it up again", key, e.code)
                self._locator.refused(key)
            use_cache = False

    def _read_one(self, loc: ObjectInfo, dst: B.Chunks, start_ns: int, stalled: dict, before: int) -> None:
        """Reads ``loc`` into ``dst``; a failure worth another lookup (:func:`tiffin._transfers.spent`) raises
        :class:`_LeaseSpent`."""
        try:
            self._io.read_one(loc, dst, start_ns / 1e9, stalled)
        except TiffinError as e:
            if spent(e, loc, stalled, before):
                raise _LeaseSpent(e) from None
            raise

    def _speculate(self, key: str, hint, dst: B.Chunks, start_ns: int, stalled: dict):
        return self._io.speculate(key, hint, dst, start_ns / 1e9, self._locator.lookup, self._hints, stalled)

    def _get_once(self, key: str, _unused, use_cache: bool, cached: list, stalled: dict) -> bytes:
        now = time.monotonic_ns()
        before = len(stalled)
        loc = self.cached_location(key, now, cached) if use_cache else None
        if loc is None:
            hint = self._locator.hint_for(key)
            if hint is not None and hint.endpoint not in stalled and not self._io.suspected(hint.endpoint):
                buf = bytearray(hint.size)
                loc, done = self._speculate(key, hint, B.Chunks([memoryview(buf)]), now, stalled)
                if done:
                    return bytes(buf)
            else:
                loc = self._locator.lookup(key)
        buf = bytearray(loc.size)
        self._read_one(loc, B.Chunks([memoryview(buf)]), now, stalled, before)
        return bytes(buf)

    def _get_into_once(self, key: str, dst: B.Chunks, use_cache: bool, cached: list, stalled: dict) -> int:
        now = time.monotonic_ns()
        before = len(stalled)
        loc = self.cached_location(key, now, cached) if use_cache else None
        if loc is None:
            hint = self._locator.hint_for(key)
            if (hint is not None and dst.size >= hint.size and hint.endpoint not in stalled
                    and not self._io.suspected(hint.endpoint)):
                loc, done = self._speculate(key, hint, dst.prefix(hint.size), now, stalled)
                if done:
                    return hint.size
            else:
                loc = self._locator.lookup(key)
        if dst.size < loc.size:
            raise TiffinError("BUFFER_OVERFLOW", f"{key!r} is {loc.size} bytes but the destination holds {dst.size}")
        self._read_one(loc, dst.prefix(loc.size), now, stalled, before)
        return loc.size

    # ------------------------------------------------------------------ batch reads

    def batch_get_buffers(self, keys: list, alloc) -> list:
        """Reads each key into a new buffer ``alloc(size)``: one (KeyResult, buffer or None) per key; keys
        whose cached location failed, or whose lease a node that did not answer used up, are read again
        after a fresh lookup (see :meth:`_batch_again`)."""
        if not keys:
            self._check_open()
            return []
        return self._batch_again(keys, lambda ks, at, cached, stalled: self._batch_get_buffers_once(
            ks, alloc, cached, stalled), lambda o: o[0])

    def batch_get_into(self, keys: list, dsts: list) -> list:
        """Reads each key into its destination (``dsts``: one :class:`tiffin._buffers.Chunks` per key): one
        :class:`KeyResult` per key (value: bytes read); a destination smaller than its object gives
        BUFFER_OVERFLOW for that key."""
        if not keys:
            self._check_open()
            return []
        return self._batch_again(keys, lambda ks, at, cached, stalled: self._batch_get_into_once(
            ks, [dsts[i] for i in at], cached, stalled), lambda r: r)

    def _batch_get_buffers_once(self, keys: list, alloc, cached, stalled: dict):
        start = time.monotonic()
        locs = self.batch_lookup(keys, cached)
        bufs = [alloc(l.size) if isinstance(l, ObjectInfo) else None for l in locs]
        results, worth = self._batch_read(keys, locs, [B.Chunks([memoryview(b)]) if b is not None else None
                                                       for b in bufs], start, stalled)
        return list(zip(results, bufs)), worth

    def _batch_get_into_once(self, keys: list, dsts: list, cached, stalled: dict):
        start = time.monotonic()
        locs = self.batch_lookup(keys, cached)
        results, worth = self._batch_read(keys, locs, dsts, start, stalled)
        return [KeyResult(r.key, locs[i].size, "OK") if r.ok else r for i, r in enumerate(results)], worth

    def _batch_again(self, keys: list, once, result) -> list:
        """A batch read: ``once(keys, positions, cached, stalled)`` reads ``keys`` (at ``positions`` of the batch)
        and returns (one outcome per key, the indices of those worth another lookup: see
        :func:`tiffin._transfers.spent`); ``result(outcome)`` is its KeyResult. Keys whose cached location failed
        are read once more after a fresh lookup, as (up to ``STALLED_LOOKUPS`` times) keys whose lease a node that
        did not answer used up while another replica was left; ``stalled`` (endpoint -> failure) keeps those
        nodes for every round."""
        stalled: dict = {}
        cached = [False] * len(keys)
        out, worth = once(keys, list(range(len(keys))), cached, stalled)
        again = set(self._refused_cached([result(o) for o in out], cached)) if self._locations is not None else set()
        if stalled:
            again.update(worth)
        for _ in range(STALLED_LOOKUPS):
            if not again:
                break
            at = sorted(again)
            log.debug("batch read: looking %d keys up again (%d nodes did not answer)", len(at), len(stalled))
            before = len(stalled)
            res, worth = once([keys[i] for i in at], at, None, stalled)
            for i, r in zip(at, res):
                out[i] = r
            again = {at[j] for j in worth} if len(stalled) > before else set()
        return out

    def _refused_cached(self, results: list, cached: list) -> list:
        """Positions of failed batch results whose location came from the location cache; their entries
        are dropped, so the caller reads them again after a fresh lookup."""
        again = []
        for i, r in enumerate(results):
            if cached[i] and r.code != "OK" and _retry_fresh(r.code):
                self._locator.refused(r.key)
                again.append(i)
        return again

    def _batch_read(self, keys, locs, dsts, start, stalled: dict):
        """(one KeyResult per key, the indices of the keys whose read is worth another lookup:
        :func:`tiffin._transfers.spent`)."""
        idx, rl, rd = [], [], []
        worth = []
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
            before = len(stalled)
            errs = self._io.read_many(rl, rd, start, stalled)
            for j, i in enumerate(idx):
                out[i] = KeyResult(keys[i], None, "OK" if errs[j] is None else errs[j].code)
                if errs[j] is not None and spent(errs[j], rl[j], stalled, before):
                    worth.append(i)
        return out, worth
