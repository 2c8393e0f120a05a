"""Error codes and the exception every Tiffin call raises.

The codes are Mooncake Store's (``ErrorCode`` in its ``include/types.h``), as in the Java engine's
``io.tiffin.api.ErrorCode``: the numbers travel on the wire and never change. ``tests/test_unit.py``
checks this table against the Java enum when the repository is present.

Thread-safety: everything here is immutable.
"""

from __future__ import annotations

__all__ = ["TiffinError", "InvalidArgument", "CODES", "code_value", "code_name", "code_hint"]

# (name, value, hint): the hint says what a user can do about it.
_TABLE = (
    ('OK', 0, 'success'),
    ('INTERNAL_ERROR', -1, 'an internal error occurred; check the server log'),
    ('BUFFER_OVERFLOW', -10, 'the destination buffer is too small for the object; pass a larger buffer'),
    ('SHARD_INDEX_OUT_OF_RANGE', -100, 'internal metadata shard index out of range; report a bug'),
    ('SEGMENT_NOT_FOUND', -101, 'the segment is not mounted; check that the node is alive'),
    ('SEGMENT_ALREADY_EXISTS', -102, 'the segment is already mounted'),
    ('CLIENT_NOT_FOUND', -103, 'the master does not know this client; it will re-register on its next ping'),
    ('NO_AVAILABLE_HANDLE', -200, 'no segment has room for the object; add nodes, free space or lower the replica count'),
    ('INVALID_VERSION', -300, 'client and master versions differ; run the same Tiffin version everywhere'),
    ('INVALID_KEY', -400, 'the key is empty, not valid Unicode, or longer than master.max-key-length (4096 UTF-8 bytes'
                          ' unless set otherwise)'),
    ('WRITE_FAIL', -500, 'writing the object failed; retry'),
    ('INVALID_PARAMS', -600, 'a parameter is invalid; check the request'),
    ('ILLEGAL_CLIENT', -601, 'this connection lacks the role or identity the request needs; the message names the'
                             ' token, certificate or peer id to present'),
    ('INVALID_WRITE', -700, 'the object is not being written; the put may have been revoked or completed'),
    ('INVALID_READ', -701, 'the read is invalid'),
    ('INVALID_REPLICA', -702, 'the replica is invalid'),
    ('REPLICA_IS_NOT_READY', -703, 'the object is still being written; retry shortly'),
    ('OBJECT_NOT_FOUND', -704, 'no object has this key; check the key or put it first'),
    ('OBJECT_ALREADY_EXISTS', -705, 'an object with this key exists or is being written'),
    ('OBJECT_HAS_LEASE', -706, 'the object is being read (it holds a read lease); retry after the lease or use force'),
    ('LEASE_EXPIRED', -707, 'the read lease expired before the read finished; retry the read'),
    ('OBJECT_HAS_REPLICATION_TASK', -708, 'the object has a replication task in progress; retry later'),
    ('OBJECT_NO_REPLICATION_TASK', -709, 'the object has no replication task'),
    ('REPLICA_NOT_FOUND', -710, 'the replica was not found'),
    ('REPLICA_ALREADY_EXISTS', -711, 'the replica already exists'),
    ('REPLICA_IS_GONE', -712, 'the replica is gone'),
    ('REPLICA_NOT_IN_LOCAL_MEMORY', -713, 'the replica is not in local memory'),
    ('OBJECT_REPLICA_BUSY', -714, 'a replica of the object is in use; retry later'),
    ('TRANSFER_FAIL', -800, 'moving bytes to or from a node failed; check that the nodes are reachable and retry'),
    ('CHECKSUM_MISMATCH', -801, 'the stored bytes failed their checksum; the copy is corrupt'),
    ('RPC_FAIL', -900, 'the request could not reach the server; check the address and that the server is running'),
    ('RPC_TIMEOUT', -901, 'the server did not answer in time; check that it is running and not overloaded'),
    ('ETCD_OPERATION_ERROR', -1000, 'the coordination service failed'),
    ('ETCD_KEY_NOT_EXIST', -1001, 'the coordination key does not exist'),
    ('ETCD_TRANSACTION_FAIL', -1002, 'a coordination transaction failed'),
    ('ETCD_CTX_CANCELLED', -1003, 'a coordination call was cancelled'),
    ('OPLOG_ENTRY_NOT_FOUND', -1004, 'the operation log entry was not found'),
    ('K8S_LEASE_OPERATION_ERROR', -1005, 'a Kubernetes lease operation failed'),
    ('K8S_LEASE_NOT_FOUND', -1006, 'the Kubernetes lease was not found'),
    ('INCOMPLETE_OPLOG_CATCH_UP', -1007, 'the standby did not catch up with the operation log'),
    ('UNAVAILABLE_IN_CURRENT_STATUS', -1010, 'the operation is not possible in the current state; retry later'),
    ('UNAVAILABLE_IN_CURRENT_MODE', -1011, 'the operation is not available in this configuration'),
    ('NOT_SUPPORTED', -1012, 'the operation is not supported'),
    ('FILE_NOT_FOUND', -1100, 'the file was not found'),
    ('FILE_OPEN_FAIL', -1101, 'a file could not be opened; check the path and permissions'),
    ('FILE_READ_FAIL', -1102, 'reading a file failed'),
    ('FILE_WRITE_FAIL', -1103, 'writing a file failed; check free disk space'),
    ('FILE_INVALID_BUFFER', -1104, 'the file buffer is invalid'),
    ('FILE_LOCK_FAIL', -1105, 'a file lock could not be taken; is another process using the directory?'),
    ('FILE_INVALID_HANDLE', -1106, 'the file handle is invalid'),
    ('BUCKET_NOT_FOUND', -1200, 'the storage bucket was not found'),
    ('BUCKET_ALREADY_EXISTS', -1201, 'the storage bucket already exists'),
    ('KEYS_EXCEED_BUCKET_LIMIT', -1202, 'too many keys for one storage bucket'),
    ('KEYS_ULTRA_LIMIT', -1203, 'too many keys'),
    ('UNABLE_OFFLOAD', -1300, 'offload to SSD is not enabled'),
    ('UNABLE_OFFLOADING', -1301, 'offload to SSD is not possible now'),
    ('TASK_NOT_FOUND', -1400, 'the task was not found'),
    ('TASK_PENDING_LIMIT_EXCEEDED', -1401, 'too many tasks are pending; retry later'),
    ('JOB_NOT_FOUND', -1402, 'the job was not found'),
    ('SERIALIZE_UNSUPPORTED', -1500, 'serialisation is not supported'),
    ('SERIALIZE_FAIL', -1501, 'serialisation failed'),
    ('DESERIALIZE_FAIL', -1502, 'a message could not be decoded; the peer may run another version'),
    ('PERSISTENT_FAIL', -1503, 'persisting state failed'),
    ('DFS_NETWORK_TIMEOUT', -1600, 'the distributed file system timed out'),
    ('DFS_SERVICE_UNAVAILABLE', -1601, 'the distributed file system is unavailable'),
    ('DFS_QUOTA_EXCEEDED', -1602, 'the distributed file system quota is exceeded'),
    ('DFS_PERMISSION_DENIED', -1603, 'the distributed file system denied access'),
    ('DFS_STALE_HANDLE', -1604, 'a distributed file system handle is stale'),
    ('DFS_PARTIAL_WRITE', -1605, 'a distributed file system write was partial'),
    ('TENANT_QUOTA_EXCEEDED', -1700, "the tenant's quota is exceeded"),
    ('TENANT_NOT_REGISTERED', -1701, 'the tenant is not registered'),
    ('TENANT_NOT_EMPTY', -1702, 'the tenant still holds objects'),
)

#: name -> value
CODES: dict[str, int] = {name: value for name, value, _ in _TABLE}
_BY_VALUE: dict[int, str] = {value: name for name, value, _ in _TABLE}
_HINTS: dict[str, str] = {name: hint for name, _, hint in _TABLE}


def code_value(name: str) -> int:
    """The wire value of the code called ``name`` (``INTERNAL_ERROR``'s for an unknown name)."""
    return CODES.get(name, CODES["INTERNAL_ERROR"])


def code_name(value: int) -> str:
    """The name of the code with wire value ``value``; ``INTERNAL_ERROR`` for a value this version
    does not know (a newer peer), as the Java client does."""
    return _BY_VALUE.get(value, "INTERNAL_ERROR")


def code_hint(name: str) -> str:
    """One sentence saying what the code means for a user and what to do."""
    return _HINTS.get(name, "")


class TiffinError(Exception):
    """A failed Tiffin operation.

    ``code`` is the error code's name (``"OBJECT_NOT_FOUND"``, ``"RPC_TIMEOUT"``, ...), ``value`` its
    Mooncake number (``-704``, ...); ``str(e)`` says what happened and what to do.
    """

    def __init__(self, code: str, message: str | None = None):
        if code not in CODES:
            code = "INTERNAL_ERROR"
        self.code = code
        self.value = CODES[code]
        self.message = message or f"{code}: {code_hint(code)}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message if self.message.startswith(self.code) else f"{self.code}: {self.message}"

    def __reduce__(self):
        return (type(self), (self.code, self.message))


class InvalidArgument(TiffinError, TypeError):
    """An argument of the wrong type or shape (not a buffer, a non-contiguous array, a key that is not
    text, ...): a :class:`TiffinError` with code ``INVALID_PARAMS`` or ``INVALID_KEY`` that is also a
    :class:`TypeError`, so code written against either keeps working."""
