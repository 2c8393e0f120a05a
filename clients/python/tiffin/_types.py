"""The values the client hands out: where an object's replicas are (:class:`Replica`,
:class:`ObjectInfo`), the outcome of one key of a batch call (:class:`KeyResult`) and a key listing
(:class:`KeyListing`), and their construction from the master's protobuf answers.

Thread-safety: the named tuples are immutable, so thread-safe; a KeyListing is a plain list.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from ._proto import tiffin_pb2 as pb
from .errors import TiffinError

MEMORY = 0
LOCAL_DISK = 2
_REPLICA_TYPES = {MEMORY: "MEMORY", LOCAL_DISK: "LOCAL_DISK"}
_REPLICA_STATUS = ("UNDEFINED", "INITIALIZED", "PROCESSING", "COMPLETE", "REMOVED", "FAILED")


class Replica(NamedTuple):
    """Where one copy of an object lives (immutable)."""

    replica_id: int
    type: str          # "MEMORY" or "LOCAL_DISK"
    status: str        # "COMPLETE", ...
    segment: str
    node_id: str
    endpoint: str      # host:port of the node's data plane
    offset: int
    size: int
    mount_epoch: int
    # The master's signed permission to read or write this replica on its node: (ops, expires_ms, mac_high,
    # mac_low), or None. Sent with every DATA_READ / DATA_WRITE of it (grant_msg); nodes refuse requests without.
    grant: Optional[tuple] = None


def grant_msg(r) -> Optional["pb.DataGrant"]:
    """The grant of replica (or hint) ``r`` as a DataRequest carries it, with the replica's range; None if none."""
    g = r.grant
    if g is None:
        return None
    return pb.DataGrant(ops=g[0], expires_ms=g[1], mac_high=g[2], mac_low=g[3], offset=r.offset, length=r.size)


class ObjectInfo(NamedTuple):
    """An object's location as the master answered it (immutable); the lookup granted a read lease of
    ``lease_ttl_ms``."""

    key: str
    size: int
    version: int
    lease_ttl_ms: int
    replicas: tuple
    #: the object's CRC32C as its writer computed it (0 = none)
    crc32c: int = 0


class KeyResult(NamedTuple):
    """The outcome of one key of a batch call (immutable): ``code`` is ``"OK"`` or an error code name;
    ``value`` is the call's result for the key (bytes, bytes read, bool, ...) or None."""

    key: str
    value: Any
    code: str

    @property
    def ok(self) -> bool:
        return self.code == "OK"

    @property
    def error(self) -> Optional[TiffinError]:
        return None if self.code == "OK" else TiffinError(self.code, f"{self.code}: key {self.key!r}")

    def unwrap(self):
        """The value, or raises the key's TiffinError."""
        if self.code != "OK":
            raise TiffinError(self.code, f"{self.code}: key {self.key!r}")
        return self.value


class KeyListing(list):
    """``list()``'s answer: (key, size) pairs in key order; ``truncated`` says whether more keys match."""

    truncated: bool = False


def replica_from(r, segments=()) -> Replica:
    """A Replica from a ``ReplicaDescriptorMsg``; ``segments``: the (segment, node id, endpoint) names of a compact
    batch reply, which a replica with a ``segment_ref`` refers to (1-based)."""
    if r.segment_ref:
        if r.segment_ref > len(segments):
            raise TiffinError("DESERIALIZE_FAIL", f"a replica refers to segment {r.segment_ref} of the "
                                                  f"{len(segments)} its batch reply names")
        segment, node_id, endpoint = segments[r.segment_ref - 1]
    else:
        segment, node_id, endpoint = r.segment, r.node_id, r.endpoint
    return Replica(r.replica_id, _REPLICA_TYPES.get(r.type, str(r.type)),
                   _REPLICA_STATUS[r.status] if 0 <= r.status < len(_REPLICA_STATUS) else str(r.status),
                   segment, node_id, endpoint, r.offset, r.size, r.mount_epoch,
                   (r.grant.ops, r.grant.expires_ms, r.grant.mac_high, r.grant.mac_low) if r.HasField("grant") else None)


def info_from(m, key: Optional[str] = None, segments=()) -> ObjectInfo:
    """An ObjectInfo from an ``ObjectLocationMsg``; ``key`` and ``segments`` for one of a compact batch reply
    (``BatchKeysRequest.compact``), which leaves out the key (the request's) and names segments once."""
    return ObjectInfo(m.key if key is None else key, m.size, m.version, m.lease_ttl_ms,
                      tuple(replica_from(r, segments) for r in m.replicas), m.crc32c)
