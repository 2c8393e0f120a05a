"""Expiry deadlines for :class:`tiffin.client.Client`: a put's time to live, EXPIRE, PERSIST and TTL (the Python twin
of ``TiffinClient.expire``, ``persist`` and ``ttlMillis``; the master keeps the deadline, on its clock).

Thread-safety: :class:`Expiry` is thread-safe (it keeps no state of its own).
"""

from __future__ import annotations

from ._frames import Op
from ._proto import tiffin_pb2 as pb
from .errors import InvalidArgument, TiffinError

#: ``ttl_ms`` of a key that holds no object
MISSING = -2


def ttl_ms_of(seconds, what: str, allow_zero: bool) -> int:
    """``seconds`` (an int or float) as whole milliseconds, checked: > 0, or >= 0 with ``allow_zero``."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds != seconds:
        raise InvalidArgument("INVALID_PARAMS", f"{what} = {seconds!r} (expected: seconds, an int or float)")
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise TiffinError("INVALID_PARAMS", f"{what} = {seconds} (expected: seconds "
                                            f"{'>= 0' if allow_zero else '> 0'})")
    return max(1, round(seconds * 1000)) if seconds > 0 else 0


class Expiry:
    """The client's EXPIRE calls. ``rpc(op, request, reply_cls)`` is the client's master call, ``locator`` its
    location cache: a location cached before a new deadline must not outlive it."""

    def __init__(self, rpc, locator):
        self._rpc = rpc
        self._locator = locator

    def call(self, key: str, mode: int, ttl_ms: int) -> int:
        """EXPIRE of a checked key: mode 0 reads the time to live, 1 sets it to ``ttl_ms``, 2 drops it. Returns the
        time to live before (ms; -1 = none) or :data:`MISSING`."""
        if mode == 1:
            self._locator.forget_location(key)
        try:
            return self._rpc(Op.EXPIRE, pb.ExpireRequest(key=key, mode=mode, ttl_ms=ttl_ms), pb.ExpireReply).ttl_ms
        except TiffinError as e:
            if e.code == "OBJECT_NOT_FOUND":
                return MISSING
            raise
