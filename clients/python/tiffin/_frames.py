"""The Tiffin frame format: the layout of every frame on the wire, the opcodes, and encoding and decoding of
the parts that need no connection (:mod:`tiffin._wire` does the I/O). It matches ``io.tiffin.core.transport``'s
``FrameCodec`` and ``Opcode`` exactly.

Frame layout (all integers big-endian)::

    offset size field
         0    4 int32  length         bytes after this field, padding included
         4    1 uint8  version        PROTOCOL_VERSION
         5    1 uint8  kind           0 = request, 1 = response
         6    2 uint16 opcode
         8    8 int64  requestId      chosen by the requester, echoed in the response
        16    4 int32  status         error code value; 0 in requests
        20    4 int32  controlLength  c: a protobuf message chosen by the opcode
        24    4 int32  bulkLength     b: raw object bytes
        28    c        control
      28+c    p        zero padding   only when b > 0: up to the next multiple of 64
         B    b        bulk           B = 28 + c + p
       B+b    q        zero padding   up to the next multiple of 64 (every frame is 64-byte units)

Thread-safety: thread-safe (constants and functions of their arguments only).
"""

from __future__ import annotations

import struct

from .errors import TiffinError, code_name
from ._proto import tiffin_pb2 as pb

#: the version byte of every frame (``TiffinVersion.PROTOCOL_VERSION``); HELLO carries it too
PROTOCOL_VERSION = 2

HEADER = struct.Struct(">iBBHqiii")
LENGTH_FIELD = 4
HEADER_SIZE = 24  # after the length field
ALIGNMENT = 64
DEFAULT_MAX_FRAME = 65 * 1024 * 1024
MAX_CONTROL = 16 * 1024 * 1024

# the names below that start with _ are for tiffin._wire alone
_ZEROS = bytes(ALIGNMENT)
_REQUEST_ID = struct.Struct(">q")
_REQUEST_ID_AT = 8  # the requestId field's offset
_HEAD_ROOM = ALIGNMENT - LENGTH_FIELD - HEADER_SIZE  # control bytes that fit an answer's first 64 bytes


class Op:
    """Opcodes (``io.tiffin.core.transport.Opcode``); the numbers are on the wire and never change."""

    HELLO = 1
    SERVICE_READY = 2
    PING = 3
    PUT_START = 10
    PUT_END = 11
    PUT_REVOKE = 12
    BATCH_PUT_START = 13
    BATCH_PUT_END = 14
    BATCH_PUT_REVOKE = 15
    GET_REPLICA_LIST = 20
    BATCH_GET_REPLICA_LIST = 21
    GET_REPLICA_LIST_BY_REGEX = 22
    EXIST_KEY = 23
    BATCH_EXIST_KEY = 24
    EXPIRE = 25
    REMOVE = 30
    BATCH_REMOVE = 31
    REMOVE_BY_REGEX = 32
    REMOVE_ALL = 33
    LIST_KEYS = 40
    STATS = 41
    DATA_READ = 100
    DATA_WRITE = 101
    DATA_READ_SSD = 102
    SEGMENT_INFO = 103

    NAMES = {}


Op.NAMES = {v: k for k, v in vars(Op).items() if isinstance(v, int)}


def padding(n: int) -> int:
    """Zero bytes after ``n`` bytes up to the next multiple of 64."""
    return -n & (ALIGNMENT - 1)


def bulk_offset(control_length: int, bulk_length: int) -> int:
    """Offset of the bulk part from the frame's first byte."""
    head = LENGTH_FIELD + HEADER_SIZE + control_length
    return head + padding(head) if bulk_length > 0 else head


def frame_size(control_length: int, bulk_length: int) -> int:
    """Bytes of a whole frame on the wire, length field and padding included."""
    end = bulk_offset(control_length, bulk_length) + bulk_length
    return end + padding(end)


def request_frame(opcode: int, msg) -> bytearray:
    """A whole request frame without bulk bytes, for :meth:`tiffin._wire.Connection.read_into` (which sets
    its id)."""
    control = msg.SerializeToString()
    c = len(control)
    size = (LENGTH_FIELD + HEADER_SIZE + c + ALIGNMENT - 1) & -ALIGNMENT  # frame_size(c, 0)
    frame = bytearray(size)
    HEADER.pack_into(frame, 0, size - LENGTH_FIELD, PROTOCOL_VERSION, 0, opcode, 0, 0, c, 0)
    frame[LENGTH_FIELD + HEADER_SIZE:LENGTH_FIELD + HEADER_SIZE + c] = control
    return frame


def encode_frame(bufs: list, opcode: int, rid: int, msg, bulk) -> None:
    """Appends to ``bufs`` the parts of a frame of request ``rid``: its head (header, control part and
    padding), then the bulk memoryviews ``bulk`` (None = none) as they are, then the padding after them.

    Raises TiffinError: INVALID_PARAMS for a frame longer than the length field holds (2 GiB)."""
    control = msg.SerializeToString() if msg is not None else b""
    c = len(control)
    b = sum(len(m) for m in bulk) if bulk else 0
    length = frame_size(c, b) - LENGTH_FIELD
    if length > 0x7FFFFFFF:
        raise TiffinError("INVALID_PARAMS", f"a {Op.NAMES.get(opcode)} frame of {length} bytes exceeds the "
                          "protocol's 2 GiB limit; use smaller slices")
    head_len = bulk_offset(c, b) if b else length + LENGTH_FIELD
    head = bytearray(head_len)
    HEADER.pack_into(head, 0, length, PROTOCOL_VERSION, 0, opcode, rid, 0, c, b)
    head[28:28 + c] = control
    bufs.append(head)
    if b:
        for m in bulk:
            if len(m):
                bufs.append(m)
        tail = padding(b)
        if tail:
            bufs.append(_ZEROS[:tail])


def _status_error(status: int, control: bytes) -> TiffinError:
    """The TiffinError of an answer with a non-zero ``status``: its code, and the message of its
    ``ErrorReply`` control part when there is one."""
    name = code_name(status)
    message = ""
    try:
        message = pb.ErrorReply.FromString(control).message
    except Exception:  # noqa: BLE001 - keep the status alone
        pass
    return TiffinError(name, message or None)


def _parse(cls, data: bytes, opcode: int):
    """The control part ``data`` of an answer to ``opcode`` as a ``cls`` message; DESERIALIZE_FAIL when it
    is not one."""
    try:
        return cls.FromString(data)
    except Exception as e:  # noqa: BLE001 - protobuf raises DecodeError and others
        raise TiffinError("DESERIALIZE_FAIL", f"cannot decode the control part of a {Op.NAMES.get(opcode)} "
                                              f"answer ({e}); the peer may run another Tiffin version") from e
