"""CRC32C of an object's bytes, the checksum a writer sends with PUT_END and in its commit records (the Java
client's ``Checksums``): the master keeps it and hands it to readers with every location (``ObjectInfo.crc32c``),
and the Java reader verifies what it reads against it. 0 means "no checksum" (not verified).

Python's standard library has no CRC32C. With the ``crc32c`` module installed (Debian: ``python3-crc32c``; pip:
``crc32c``) puts carry one, computed in C; without it they send none (0), since a pure-Python CRC32C of a large
value would cost more than the put. :func:`crc32c_pure` is that pure-Python version (the reference the tests check
the module against, and usable for small values). This client does not verify reads (see docs/PYTHON.md).

Thread-safe (stateless).
"""

from __future__ import annotations

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
