"""The master calls of a client, made to the leader among the listed masters (as the Java client's
``MasterStub``): ``"h1:p1,h2:p2,h3:p3"`` names every master of a cluster with failover; the leader is
found by asking each one ``SERVICE_READY`` (leader? in which term?) and following the leader of the
highest term.

A call is repeated, for up to ``failover_timeout`` seconds, while the masters elect a leader or the
leader recovers its objects (``UNAVAILABLE_IN_CURRENT_STATUS``) and, with several masters listed, while
the leader cannot be reached (``RPC_FAIL``/``RPC_TIMEOUT``: it may have died). A single master that
cannot be reached fails at once, as before. Repeating a call is safe: a PutStart carries its put id (the
master answers a repeat with the same replicas), PutEnd and PutRevoke are idempotent, and after an
attempt whose answer was lost a remove that finds the key gone counts as done, and one refused for a
lease is repeated (the caller checks ``lost``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Optional

from ._frames import Op
from ._proto import tiffin_pb2 as pb
from ._pool import Pool
from ._wire import Connection, parse_endpoint
from .errors import TiffinError

#: How long a discovery waits for the masters' answers (a paused master must not hold the others up).
PROBE_TIMEOUT = 1.0
#: After a leader answered, how much longer a discovery waits for one of a higher term.
AFTER_LEADER = 0.05


def parse_masters(addresses: str) -> list:
    """``"h1:p1,h2:p2"`` (spaces allowed, duplicates dropped) as a list; ``INVALID_PARAMS`` when empty or
    when an entry is not ``host:port``."""
    if not isinstance(addresses, str):
        raise TiffinError("INVALID_PARAMS", f"master address {addresses!r} is not a 'host:port[,host:port...]' "
                                            "string")
    out = []
    for a in addresses.split(","):
        a = a.strip()
        if a:
            parse_endpoint(a)
            if a not in out:
                out.append(a)
    if not out:
        raise TiffinError("INVALID_PARAMS", f"master address {addresses!r} names no master (expected "
                                            "'host:port[,host:port...]')")
    return out


def backoff(attempt: int) -> float:
    """The pause, in seconds, before repeat ``attempt`` + 1 of a master call: 20 ms doubling to 0.2 s."""
    return min(0.2, 0.02 * (1 << min(attempt, 4)))


class Masters:
    """The listed masters and the one believed to lead.

    Thread-safe: the leader is one reference, replaced under a lock by one discovering thread at a time.
    Uses, but does not own, the client's connection pool.
    """

    def __init__(self, addresses: str, pool: Pool, failover_timeout: float, is_closed):
        self.all = parse_masters(addresses)
        self.leader = self.all[0]
        self._pool = pool
        self._failover_timeout = failover_timeout
        self._is_closed = is_closed
        self._discovery = threading.Lock()
        self.discoveries = 0

    @property
    def failover_timeout(self) -> float:
        """How long, in seconds, a call keeps looking for the leader or waits for one that recovers."""
        return self._failover_timeout

    def call(self, op: int, req, reply_cls, lost: Optional[list] = None):
        """One master call to the leader, repeated as the module says; ``lost[0]`` (if given) is set when
        an attempt's answer was lost (the leader gone or out of reach, or a reused connection closed
        unanswered and the pool sent it again: it may or may not have run), not when a recovering master
        refused it."""
        deadline = time.monotonic() + self._failover_timeout
        attempt = 0
        while True:
            target = self.leader
            try:
                return self._pool.call(target, op, req, reply_cls, resent=lost)
            except TiffinError as e:
                gone = len(self.all) > 1 and e.code in ("RPC_FAIL", "RPC_TIMEOUT")
                if not (gone or e.code == "UNAVAILABLE_IN_CURRENT_STATUS") or time.monotonic() > deadline \
                        or self._is_closed():
                    raise
                if lost is not None and gone:
                    lost[0] = True
                if len(self.all) > 1:
                    self.discover(target)
                # paces the retries while the masters elect a leader or it recovers
                time.sleep(backoff(attempt))
                attempt += 1

    def discover(self, failed: str) -> None:
        """Asks every listed master whether it leads (in parallel, at most ``PROBE_TIMEOUT``) and follows
        the leader of the highest term; unless another thread already moved on from ``failed``."""
        with self._discovery:
            if self.leader != failed:
                return
            self.discoveries += 1
            answers: dict = {}
            done = threading.Condition()
            probe = dataclasses.replace(self._pool.settings, rpc_timeout=PROBE_TIMEOUT, connect_timeout=PROBE_TIMEOUT)

            def ask(address: str) -> None:
                reply = None
                try:
                    c = Connection.open(address, probe, self._pool.peer_id)
                    try:
                        reply = c.call(Op.SERVICE_READY, pb.Empty(), pb.ServiceReadyReply)
                    finally:
                        c.close()
                except TiffinError:
                    pass
                with done:
                    answers[address] = reply
                    done.notify_all()

            for a in self.all:
                threading.Thread(target=ask, args=(a,), name=f"tiffin-probe-{a}", daemon=True).start()
            end = time.monotonic() + PROBE_TIMEOUT
            best_term, best = -1, None
            with done:
                while len(answers) < len(self.all):
                    for a, r in answers.items():
                        if r is not None and r.leader and r.term > best_term:
                            best_term, best = r.term, a
                            end = min(end, time.monotonic() + AFTER_LEADER)
                    left = end - time.monotonic()
                    if left <= 0:
                        break
                    done.wait(left)
                for a, r in answers.items():
                    if r is not None and r.leader and r.term > best_term:
                        best_term, best = r.term, a
            if best is not None:
                self.leader = best
