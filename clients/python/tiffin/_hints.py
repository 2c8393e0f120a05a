"""Read hints (the Java client's ``ReadHints``): where this client last saw each key's bytes, so a get
of a key whose location is not cached can send the node read together with the master lookup and keep
the bytes only if the lookup names that very replica.

Thread-safety: :class:`ReadHints` is thread-safe (one lock over its entries; its confirmed/refuted
counters are approximate when threads race). :class:`Hint` is immutable.
"""

from __future__ import annotations

import threading
from typing import NamedTuple, Optional

from ._types import ObjectInfo, Replica


class Hint(NamedTuple):
    """The replica a key's bytes were last seen in (immutable)."""

    endpoint: str
    segment: str
    replica_id: int
    offset: int
    size: int
    mount_epoch: int
    grant: Optional[tuple] = None  # the replica's grant (Replica.grant), sent with the hinted read

    def names(self, r: Replica) -> bool:
        return (r.type == "MEMORY" and r.replica_id == self.replica_id and r.mount_epoch == self.mount_epoch
                and r.offset == self.offset and r.size == self.size and r.segment == self.segment
                and r.endpoint == self.endpoint)


class ReadHints:
    """Where this client last saw each key's bytes (the first memory replica its last lookup named or
    its last put wrote), so a get can send the node read together with the master lookup and keep the
    bytes only if the lookup names that very replica: same replica id, mount epoch, node, segment,
    offset and size (``ReadHints`` in the Java client, whose comment argues why a confirmed read is the
    object's bytes). Objects read through a same-host mapping get no hint. LRU, bounded (``max_entries``
    keys)."""

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
        """Keeps the first memory replica of ``replicas`` as the key's hint; none when ``direct(replica)``
        says a memory replica is mapped here, or the first one carries no mount epoch or no bytes."""
        first = None
        for r in replicas:
            if r.type == "MEMORY":
                if direct(r):
                    self.invalidate(key)
                    return
                if first is None:
                    first = r
        if first is None or first.mount_epoch == 0 or first.size == 0:
            self.invalidate(key)
            return
        h = Hint(first.endpoint, first.segment, first.replica_id, first.offset, first.size, first.mount_epoch,
                 first.grant)
        with self._lock:
            self._hints.pop(key, None)
            self._hints[key] = h
            if len(self._hints) > self._max:
                del self._hints[next(iter(self._hints))]

    def confirms(self, loc: ObjectInfo, hint: Hint) -> bool:
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
