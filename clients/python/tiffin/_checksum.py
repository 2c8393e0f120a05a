"""CRC32C of an object's bytes, the checksum a writer sends with PUT_END and in its commit records (the Java
client's ``Checksums``): the master keeps it and hands it to readers with every location (``ObjectInfo.crc32c``),
and the Java reader verifies what it reads against it. 0 means "no checksum" (not verified).

Python's standard library has no CRC32C. With the ``crc32c`` module installed (Debian: ``python3-crc32c``; pip:
``crc32c``) puts carry one, computed in C; without it they send none (0), since a pure-Python CRC32C of a large
value would cost more than the put. :func:`crc32c_pure` is that pure-Python version (the reference the tests check
the module against, and usable for small values).

Reads verify what they received when the client is made with ``verify_checksums=True`` (or the environment's
``TIFFIN_CLIENT_VERIFY_CHECKSUMS``, as the Java processes' ``client.verify-checksums``); off by default, as its cost
here is a large share of a get (docs/PYTHON.md, "Checksums"). It needs the C implementation.

Thread-safe (stateless).
"""

from __future__ import annotations

import os

from .errors import InvalidArgument, TiffinError

try:  # the C implementation, when installed
    import crc32c as _fast
except ImportError:  # pragma: no cover - depends on the machine
    _fast = None

#: Whether a C implementation is installed: puts then carry a checksum.
FAST = _fast is not None


def _table() -> list:
    poly = 0x82F63B78  # CRC32C (Castagnoli), reflected
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _table()


def crc32c_pure(data, value: int = 0) -> int:
    """The CRC32C of ``data`` (bytes-like) continuing from ``value``, in pure Python (slow: small values only)."""
    crc = value ^ 0xFFFFFFFF
    table = _TABLE
    for b in memoryview(data).cast("B"):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def of_parts(parts) -> int:
    """The CRC32C of the byte views ``parts``, one after the other; 0 (none) without the C implementation."""
    if _fast is None:
        return 0
    crc = 0
    for p in parts:
        crc = _fast.crc32c(p, crc)
    return crc


_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off", "")


def verify_setting(value) -> bool:
    """Whether reads verify checksums: ``value`` (a bool), or when it is None the environment's
    ``TIFFIN_CLIENT_VERIFY_CHECKSUMS`` (default false). INVALID_PARAMS for anything else, and for true without the C
    implementation (a pure-Python CRC32C of a large value would cost far more than its read)."""
    if value is None:
        text = os.environ.get("TIFFIN_CLIENT_VERIFY_CHECKSUMS", "").strip().lower()
        if text not in _TRUE + _FALSE:
            raise TiffinError("INVALID_PARAMS", f"TIFFIN_CLIENT_VERIFY_CHECKSUMS = {text!r} (expected: true or false)")
        value = text in _TRUE
    elif not isinstance(value, bool):
        raise InvalidArgument("INVALID_PARAMS", f"verify_checksums = {value!r} (expected: True or False)")
    if value and _fast is None:
        raise TiffinError("INVALID_PARAMS", "verify_checksums needs the crc32c module (Debian: python3-crc32c; pip: "
                                            "crc32c), the C implementation of CRC32C; install it or leave reads "
                                            "unverified")
    return value


def mismatch(loc, replica, actual: int) -> TiffinError:
    """CHECKSUM_MISMATCH for the bytes of object ``loc`` read from ``replica`` (a ``Replica``), whose CRC32C is
    ``actual``: it names the copy, as the Java client's message does."""
    if replica.type == "MEMORY":
        where = (f"memory replica {replica.replica_id} on node {replica.node_id} ({replica.endpoint}), segment "
                 f"{replica.segment}, offset {replica.offset}")
    else:
        where = f"SSD copy on node {replica.node_id} ({replica.endpoint})"
    return TiffinError("CHECKSUM_MISMATCH", f"key {loc.key} (version {loc.version}, {loc.size} bytes): the bytes read "
                                            f"from {where} have CRC32C 0x{actual:08x}, the object's is "
                                            f"0x{loc.crc32c:08x}; that copy is corrupt")
