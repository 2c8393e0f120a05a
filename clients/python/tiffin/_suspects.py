"""The nodes a client suspects of hanging or being gone, remembered between calls for a while.

A read (or a put's write) whose node did not answer (unreachable, a refused or broken connection, or silent
until the RPC timeout or the end of the read lease: :func:`tiffin._transfers.unresponsive`) notes the node here.
Until the note expires (``ttl`` seconds after the last failure), reads of this client try replicas on other nodes
first and send it no speculative read (read hint); a node is never skipped: when every replica of an object is on
suspected nodes they are still read, in the master's order. A read that the node answers clears its note at once,
and a note expires on its own, so a node that comes back is used again. Without it, every new read of a key whose
first replica is on a hung node would wait for the lease (or the RPC timeout) until the master drops the node.

The Java client (``io.tiffin.core.client.SuspectNodes``) keeps the same memory for 10 s; within one call the Python
client also skips such a node (``stalled`` in :mod:`tiffin._transfers`), where the Java client's read fails at the
lease's end.

Thread-safety: :class:`Suspects` is thread-safe (one lock; the common case, nothing suspected, takes no lock).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Optional

#: Default length of the memory (seconds): the master's default ``master.node-ttl`` and ``master.lease-ttl``, after
#: which the master has dropped a node that stayed silent, so its replicas are no longer named.
DEFAULT_TTL = 10.0
#: Default number of nodes remembered at most; beyond it the note that expires first is dropped.
DEFAULT_MAX_NODES = 1024


class Suspects:
    """Endpoints (``host:port``) of nodes that recently failed to answer, each until ``ttl`` seconds after its last
    failure, at most ``max_nodes`` of them (the note that would expire first gives way to a new one).

    ``clock``: seconds, monotonic (default ``time.monotonic``; tests give their own).

    Thread-safe (see the module comment).
    """

    def __init__(self, ttl: float = DEFAULT_TTL, max_nodes: int = DEFAULT_MAX_NODES,
                 clock: Callable[[], float] = time.monotonic):
        if not ttl > 0:
            raise ValueError(f"ttl = {ttl!r} (expected: seconds > 0)")
        if max_nodes < 1:
            raise ValueError(f"max_nodes = {max_nodes!r} (expected: at least 1)")
        self.ttl = float(ttl)
        self.max_nodes = max_nodes
        self._clock = clock
        self._until: OrderedDict = OrderedDict()  # endpoint -> expiry; in order of expiry (same ttl for all)
        self._lock = threading.Lock()

    def note(self, endpoint: str) -> None:
        """Suspects ``endpoint`` for ``ttl`` seconds from now (a read there just went unanswered)."""
        now = self._clock()
        with self._lock:
            self._until.pop(endpoint, None)
            self._prune(now)
            while len(self._until) >= self.max_nodes:
                self._until.popitem(last=False)  # the note that expires first
            self._until[endpoint] = now + self.ttl

    def answered(self, endpoint: str) -> None:
        """Forgets ``endpoint``: it just answered a read."""
        if endpoint not in self._until:  # no lock for the common case: a miss here at worst waits for the expiry
            return
        with self._lock:
            self._until.pop(endpoint, None)

    def suspected(self, endpoint: str) -> bool:
        """Whether ``endpoint`` is suspected now."""
        if not self._until:
            return False
        with self._lock:
            until = self._until.get(endpoint)
            return until is not None and until > self._clock()

    def snapshot(self) -> dict:
        """endpoint -> seconds its note has left, of the nodes suspected now (for tests and diagnostics)."""
        now = self._clock()
        with self._lock:
            self._prune(now)
            return {ep: until - now for ep, until in self._until.items()}

    def order(self, replicas: tuple) -> Optional[tuple]:
        """``replicas`` with those on suspected nodes moved behind the others (each group in its own order), or
        None when none of them is suspected or all are (then the master's order stands)."""
        if not self._until or len(replicas) < 2:
            return None
        now = self._clock()
        with self._lock:
            self._prune(now)
            suspect = [r.endpoint in self._until for r in replicas]
        if not any(suspect) or all(suspect):
            return None
        return (tuple(r for r, s in zip(replicas, suspect) if not s)
                + tuple(r for r, s in zip(replicas, suspect) if s))

    def _prune(self, now: float) -> None:
        """Drops the expired notes (the lock is held)."""
        while self._until:
            ep, until = next(iter(self._until.items()))
            if until > now:
                return
            del self._until[ep]
