"""Pooled connections per server (``io.tiffin.core.transport.BlockingConnectionPool``'s Python twin):
a thread borrows one :class:`tiffin._wire.Connection` per server for a call or a pipelined batch and
gives it back, and a call that finds a reused connection dead before any answer byte arrived (the
server closed the idle connection, e.g. after a restart) is sent again once on a fresh one.

Thread-safety: :class:`Pool` is thread-safe.
"""

from __future__ import annotations

import threading
from typing import Optional

from ._wire import Connection, Settings
from .errors import TiffinError


class Pool:
    """Pooled :class:`Connection`\\ s per endpoint: a thread takes one for a call (or a pipelined batch)
    and gives it back, so N threads use N connections. A call that fails on a reused connection before
    any answer byte arrived (the server closed the idle connection, e.g. after a restart) is retried
    once on a fresh connection, as ``BlockingConnectionPool`` does.

    Thread-safe. Owns its connections; :meth:`close` closes the idle ones at once and lent ones when they
    come back.
    """

    MAX_IDLE_PER_ENDPOINT = 32

    def __init__(self, settings: Settings, peer_id: str):
        self.settings = settings
        self.peer_id = peer_id
        self._idle: dict[str, list] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.opened = 0

    def acquire(self, endpoint: str, end: Optional[float] = None) -> Connection:
        """An idle connection to ``endpoint`` or a new one, connected no later than ``end`` (``time.monotonic()``;
        the end of the read lease it is taken for, None = within ``connect_timeout`` only: see
        :meth:`Connection.open`); give it back with :meth:`release`."""
        with self._lock:
            if self._closed:
                raise TiffinError("UNAVAILABLE_IN_CURRENT_STATUS", "the client is closed")
            stack = self._idle.get(endpoint)
            while stack:
                c = stack.pop()
                if c.is_open:
                    return c
        return self._open(endpoint, end)

    def acquire_idle(self, endpoint: str) -> Optional[Connection]:
        """An idle open connection to ``endpoint``, or None (never connects, so it never waits for a
        server that may be gone); give it back with :meth:`release`."""
        with self._lock:
            if self._closed:
                return None
            stack = self._idle.get(endpoint)
            while stack:
                c = stack.pop()
                if c.is_open:
                    return c
        return None

    def acquire_fresh(self, endpoint: str, end: Optional[float] = None) -> Connection:
        """A new connection (``end`` as for :meth:`acquire`), after closing the idle ones kept for ``endpoint``
        (one turned out dead)."""
        with self._lock:
            stack = self._idle.pop(endpoint, [])
        for c in stack:
            c.close()
        return self._open(endpoint, end)

    def _open(self, endpoint: str, end: Optional[float] = None) -> Connection:
        c = Connection.open(endpoint, self.settings, self.peer_id, end)
        with self._lock:
            self.opened += 1
        return c

    def release(self, c: Connection) -> None:
        """Gives ``c`` back: kept if healthy, else closed."""
        if c.is_open:
            with self._lock:
                if not self._closed:
                    stack = self._idle.setdefault(c.endpoint, [])
                    if len(stack) < self.MAX_IDLE_PER_ENDPOINT:
                        stack.append(c)
                        return
        c.close()

    def read_into(self, endpoint: str, opcode: int, frame: bytearray, into: memoryview, end: float) -> None:
        """:meth:`Connection.read_into` of an idempotent request on a pooled connection, sent again once on
        a fresh connection when a reused one was found dead before answering. A new connection must be
        open by ``end`` too."""
        for attempt in (0, 1):
            c = self.acquire(endpoint, end) if attempt == 0 else self.acquire_fresh(endpoint, end)
            reused = c.calls > 0
            try:
                c.read_into(opcode, frame, into, end)
            except TiffinError as e:
                stale = reused and not c.is_open and not c.answer_started and e.code == "RPC_FAIL"
                self.release(c)
                if not stale or attempt:
                    raise
                continue
            except BaseException:
                c.close()
                raise
            self.release(c)
            return

    def call(self, endpoint: str, opcode: int, request, reply_cls, bulk_out=None, bulk_in=None,
             resent: Optional[list] = None, end: Optional[float] = None, got: Optional[list] = None):
        """One call on a pooled connection, retried once on a fresh one when a reused connection was
        found dead before answering; then ``resent[0]`` (if given) is set: the server may have run the first
        one (a remove that then finds its key gone was that one). ``end`` (``time.monotonic()``; None = none): the
        end of the read lease the call serves, which bounds connecting and waiting (see :meth:`Connection.call`);
        ``got[0]`` (if given) is set to the number of bulk bytes the answer held."""
        for attempt in (0, 1):
            if attempt and resent is not None:
                resent[0] = True
            c = self.acquire(endpoint, end) if attempt == 0 else self.acquire_fresh(endpoint, end)
            reused = c.calls > 0
            try:
                reply = c.call(opcode, request, reply_cls, bulk_out, bulk_in, end)
                if got is not None:
                    got[0] = c._last_bulk
            except TiffinError as e:
                stale = reused and not c.is_open and not c.answer_started and e.code == "RPC_FAIL"
                self.release(c)
                if not stale or attempt:
                    raise
                continue
            except BaseException:
                c.close()
                raise
            self.release(c)
            return reply
        raise AssertionError("unreachable")

    def exchange(self, opcode: int, batches: dict, end: Optional[float] = None) -> dict:
        """Pipelined calls of an idempotent data-plane ``opcode`` to several servers: every batch's
        requests are written to its server before any answer is read, so the servers work in parallel
        while one thread drives them all. ``batches`` maps endpoint -> list of :class:`Request`.
        Returns endpoint -> list of (None | TiffinError), one per request. A batch whose reused
        connection was found dead before answering is sent again once on a fresh connection. ``end``
        (``time.monotonic()``, the end of the read leases) also bounds opening new connections."""
        out: dict = {}
        todo = list(batches)
        for attempt in (0, 1):
            sent = []
            for ep in todo:
                reqs = batches[ep]
                try:
                    c = self.acquire(ep, end) if attempt == 0 else self.acquire_fresh(ep, end)
                except TiffinError as e:
                    out[ep] = [e] * len(reqs)
                    continue
                reused = c.calls > 0
                try:
                    first = c.send(opcode, reqs)
                except TiffinError as e:
                    out[ep] = [e] * len(reqs)
                    stale = reused and not c.answer_started and e.code == "RPC_FAIL"
                    self.release(c)
                    if stale:
                        sent.append((ep, None, 0, True))
                    continue
                except BaseException:
                    c.close()
                    raise
                sent.append((ep, c, first, reused))
            again = []
            for ep, c, first, reused in sent:
                if c is None:
                    again.append(ep)
                    continue
                try:
                    res = c.receive(opcode, first, batches[ep], end)
                except BaseException:
                    c.close()  # interrupted mid-answer: the stream position is unknown
                    raise
                finally:
                    self.release(c)
                out[ep] = res
                if (attempt == 0 and reused and not c.is_open and not c.answer_started
                        and any(r is not None and r.code == "RPC_FAIL" for r in res)):
                    again.append(ep)
            if not again:
                break
            todo = again
        return out

    def close(self) -> None:
        """Closes the idle connections; lent ones close when given back. Idempotent."""
        with self._lock:
            self._closed = True
            stacks = list(self._idle.values())
            self._idle.clear()
        for stack in stacks:
            for c in stack:
                c.close()
