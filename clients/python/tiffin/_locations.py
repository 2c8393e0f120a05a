"""The location cache: object locations this client looked up, reused for later reads of the same key
while the read lease of the lookup still protects them, so a repeated get or exists costs no master
round trip. The Python twin of ``io.tiffin.core.client.LocationCache``, with the same rules:

* **Why a reuse is safe.** A lookup grants a read lease (``master.lease-ttl``); until it ends the master
  neither evicts the object nor lets an ordinary remove or an upsert replace it, and a forced remove or
  an offload keeps the replica's memory out of reach of new puts until the lease ends. So the bytes a
  cached location names stay the object's bytes for the whole lease. An entry is used only within
  ``min(ttl, lease / 2, 20 s)`` of the moment its lookup was *sent* (the master started the lease
  later), and a read through it must end within what is left of the lease (:meth:`LocationCache.get`
  hands out the location with that remainder as its ``lease_ttl_ms``).
* **Forced removes.** A forced remove ignores leases, so every lookup tells the master how long this
  cache may reuse its answer (``cache_for_ms``, :attr:`LocationCache.cache_for_ms`) and names this
  cache (``cache_owner``); the master reports a forced removal of the object only once that window has
  passed (unless only the remover's own cache asked for it) and refuses puts of the key until then. So
  a get that starts after a remove returned never finds the object, cached or not. This client drops
  its own entries around its puts and removes.
* **Re-mounts.** What the master forgets without asking (a master restart, a node that missed its
  heartbeats and re-mounted) is caught by the node: every descriptor carries the segment's mount epoch
  and the node refuses a stale one (REPLICA_IS_GONE); the client then drops the entry and looks the key
  up again, once. Only locations whose memory replicas carry a checkable mount epoch are kept (the
  client decides that, :meth:`tiffin._locator.Locator.reusable`).
* **Invalidation stamps.** Per stripe of keys, a count of the entries dropped. A lookup reads its key's
  stamp before it is sent; its answer is kept only if the stamp has not moved since, so a lookup that
  overlapped this client's own remove or put of the key cannot put back what they dropped.

Moments are ``time.monotonic_ns()`` values (the clock every read's lease deadline runs on).

Thread-safety: thread-safe (one lock over the entries, the stamps and the counters). Bounded: at most
``max_entries`` locations, least recently used ones dropped first.
"""

from __future__ import annotations

import threading
from typing import Callable, Optional

#: The longest any lookup's answer is reused, whatever the TTL and lease (``LookupReuse.MAX_MILLIS``):
#: the master holds a forced removal of a cached object up to this and a quarter, and applies the same bound.
MAX_REUSE_MS = 20_000
_STRIPES = 256
_MS = 1_000_000


class LocationCache:
    """See the module comment. ``ttl_ns``: longest reuse of one lookup (> 0); ``max_entries`` (> 0)."""

    def __init__(self, ttl_ns: int, max_entries: int):
        if ttl_ns <= 0 or max_entries <= 0:
            raise ValueError(f"a location cache needs ttl_ns > 0 and max_entries > 0, not {ttl_ns}, {max_entries}")
        self._ttl_ns = ttl_ns
        self._max = max_entries
        #: what lookups tell the master: the longest this cache reuses an answer, in whole ms rounded up
        self.cache_for_ms = min(0x7FFFFFFF, (ttl_ns + _MS - 1) // _MS)
        # key -> (location, lookup sent at ns, usable until ns); dict order is the LRU order (oldest first)
        self._entries: dict = {}
        self._stamps = [0] * _STRIPES
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.refused_reads = 0

    def get(self, key: str, now_ns: int):
        """The cached location of ``key`` to read now, or None. Its ``lease_ttl_ms`` is what is left of the
        lease at ``now_ns`` (rounded down to whole ms), so the caller's usual check — the read must end
        within the lease, counted from the call's start — keeps holding."""
        with self._lock:
            e = self._entries.pop(key, None)
            if e is None:
                self.misses += 1
                return None
            loc, sent, until = e
            if now_ns > until:
                self.misses += 1
                return None  # expired: stays dropped
            left = loc.lease_ttl_ms - (now_ns - sent + _MS - 1) // _MS
            if left <= 0:
                self.misses += 1
                return None
            self._entries[key] = e  # most recently used last
            self.hits += 1
        return loc._replace(lease_ttl_ms=left)  # loc with lease_ttl_ms=left

    def stamp(self, key: str) -> int:
        """The key's invalidation stamp; read it before sending a lookup and pass it to :meth:`put`."""
        return self._stamps[hash(key) & (_STRIPES - 1)]

    def put(self, key: str, loc, lookup_ns: int, stamp: int) -> None:
        """Keeps a location of ``key`` the master just answered; ``lookup_ns`` is when the lookup was sent
        and ``stamp`` the key's :meth:`stamp` read before that. Not kept if the key's entry was dropped
        since (the answer may predate a remove or put of this client)."""
        usable = min(self._ttl_ns, loc.lease_ttl_ms * _MS // 2, MAX_REUSE_MS * _MS)
        if usable <= 0:
            return
        with self._lock:
            if self._stamps[hash(key) & (_STRIPES - 1)] != stamp:
                return
            self._entries.pop(key, None)
            self._entries[key] = (loc, lookup_ns, lookup_ns + usable)
            if len(self._entries) > self._max:
                del self._entries[next(iter(self._entries))]

    def invalidate(self, key: str) -> None:
        """Drops the key's entry (this client removes or writes it)."""
        with self._lock:
            self._stamps[hash(key) & (_STRIPES - 1)] += 1
            self._entries.pop(key, None)

    def refused(self, key: str) -> None:
        """Drops the key's entry after a read through it failed (a node refused it or was unreachable)."""
        with self._lock:
            self.refused_reads += 1
            self._stamps[hash(key) & (_STRIPES - 1)] += 1
            self._entries.pop(key, None)

    def invalidate_matching(self, matches: Optional[Callable[[str], bool]] = None) -> None:
        """Drops the entries of the keys ``matches`` accepts (all of them when None)."""
        with self._lock:
            for i in range(_STRIPES):
                self._stamps[i] += 1
            if matches is None:
                self._entries.clear()
            else:
                for k in [k for k in self._entries if matches(k)]:
                    del self._entries[k]

    def stats(self) -> dict:
        """hits, misses, refused (reads through an entry that failed and were looked up again), size."""
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "refused": self.refused_reads,
                    "size": len(self._entries)}

    def __len__(self) -> int:
        return len(self._entries)
