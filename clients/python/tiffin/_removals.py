"""Removals for :class:`tiffin.client.Client`: REMOVE, BATCH_REMOVE, REMOVE_BY_REGEX and REMOVE_ALL, with the
client's location cache dropped around each call, a remove repeated after a lost answer (the Python twin of
``io.tiffin.core.client.MasterStub.remove``) and one refused while a node copies the object to SSD or back
(OBJECT_HAS_REPLICATION_TASK) asked again for about 0.6 s (``io.tiffin.core.client.Removals``).

Thread-safety: :class:`Removals` is thread-safe (it keeps no state of its own; the locator and the masters guard
themselves).
"""

from __future__ import annotations

import time

from ._frames import Op
from ._masters import backoff
from ._puts import PUT_RETRIES
from ._proto import tiffin_pb2 as pb
from ._types import KeyResult
from .errors import TiffinError, code_name


class Removals:
    """The client's removals. ``rpc(op, request, reply_cls, lost=None)`` is the client's master call
    (:meth:`tiffin._masters.Masters.call` after its open check), ``masters`` gives the failover timeout and
    ``locator`` the location cache to keep right."""

    def __init__(self, rpc, masters, locator):
        self._rpc = rpc
        self._masters = masters
        self._locator = locator

    def remove(self, key: str, force: bool) -> None:
        """:meth:`tiffin.client.Client.remove` of a checked key."""
        # dropped before and after: a lookup of another thread answered meanwhile, with a lease a forced
        # remove does not wait for, must not leave the removed object in the location cache
        self._locator.forget(key)
        lost = [False]
        deadline = time.monotonic() + self._masters.failover_timeout
        attempt = 0
        busy = 0  # attempts refused while a node copied the object to SSD or back
        try:
            while True:
                try:
                    self._rpc(Op.REMOVE, pb.KeyRequest(key=key, force=bool(force),
                                                       cache_owner=self._locator.cache_owner), pb.Empty, lost)
                    return
                except TiffinError as e:
                    if lost[0] and e.code == "OBJECT_NOT_FOUND":
                        return
                    if e.code == "OBJECT_HAS_REPLICATION_TASK" and busy < PUT_RETRIES:
                        time.sleep(0.020 * (1 << busy))  # a node copies it to SSD or back: that ends within moments
                        busy += 1
                        continue
                    if not lost[0] or e.code != "OBJECT_HAS_LEASE":
                        raise
                    if time.monotonic() > deadline:
                        raise TiffinError(e.code, f"{e.message}; an earlier attempt of this remove, whose answer was lost,"
                                                  " may have removed some of its replicas: remove it again (or with"
                                                  " force) once it is no longer read") from e
                time.sleep(backoff(attempt))
                attempt += 1
        finally:
            self._locator.forget_location(key)

    def batch_remove(self, keys: list, force: bool) -> list:
        """:meth:`tiffin.client.Client.batch_remove` of checked, non-empty ``keys``."""
        for k in keys:
            self._locator.forget(k)
        try:
            codes = self._batch_codes(keys, force)
            for busy in range(PUT_RETRIES):
                again = [i for i, c in enumerate(codes) if c == "OBJECT_HAS_REPLICATION_TASK"]
                if not again:
                    break
                time.sleep(0.020 * (1 << busy))  # a node copies them to SSD or back: that ends within moments
                for i, c in zip(again, self._batch_codes([keys[i] for i in again], force)):
                    codes[i] = c
        finally:
            for k in keys:
                self._locator.forget_location(k)
        return [KeyResult(k, None, codes[i]) for i, k in enumerate(keys)]

    def _batch_codes(self, keys: list, force: bool) -> list:
        """One BATCH_REMOVE of ``keys``: the code of each (after a lost answer, a key found gone was removed)."""
        lost = [False]
        reply = self._rpc(Op.BATCH_REMOVE, pb.BatchKeysRequest(keys=keys, force=bool(force),
                                                               cache_owner=self._locator.cache_owner),
                          pb.BatchCodesReply, lost)
        codes = [code_name(reply.codes[i]) if i < len(reply.codes) else "INTERNAL_ERROR" for i in range(len(keys))]
        if lost[0]:
            # an attempt whose answer was lost may have removed them: a key the repeat finds gone was removed
            codes = ["OK" if c == "OBJECT_NOT_FOUND" else c for c in codes]
        return codes

    def by_regex(self, regex: str, force: bool) -> int:
        """:meth:`tiffin.client.Client.remove_by_regex`: drops the whole location cache before and after."""
        self._locator.forget_all()
        try:
            return self._rpc(Op.REMOVE_BY_REGEX, pb.RegexRequest(regex=regex, force=bool(force),
                                                                 cache_owner=self._locator.cache_owner), pb.CountReply).count
        finally:
            self._locator.forget_all()

    def everything(self, force: bool) -> int:
        """:meth:`tiffin.client.Client.remove_all`: drops the whole location cache before and after."""
        self._locator.forget_all()
        try:
            return self._rpc(Op.REMOVE_ALL, pb.RemoveAllRequest(force=bool(force), cache_owner=self._locator.cache_owner),
                             pb.CountReply).count
        finally:
            self._locator.forget_all()
