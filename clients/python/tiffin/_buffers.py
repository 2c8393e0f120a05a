"""Turning the caller's objects into byte views without copying them, and checking keys.

Every function returns a 1-D ``memoryview`` of format ``'B'`` over the caller's own memory; the view
is valid while the caller keeps the object alive (for raw pointers: while the memory stays allocated).

Thread-safety: stateless.
"""

from __future__ import annotations

import ctypes

from . import _hostmem
from .errors import InvalidArgument, TiffinError


def check_key(key, what: str = "the key") -> str:
    """``key`` if it is a non-empty ``str`` that UTF-8 can encode; INVALID_KEY otherwise (the master
    checks the length, ``master.max-key-length``)."""
    if not isinstance(key, str):
        raise InvalidArgument("INVALID_KEY", f"{what} must be a str, not {type(key).__name__}")
    if not key:
        raise TiffinError("INVALID_KEY", f"{what} is empty")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as e:
        raise TiffinError("INVALID_KEY", f"{what} has an unpaired surrogate at index {e.start}: it is not valid "
                                         "Unicode text and cannot be sent as UTF-8") from e
    return key


def sendable(key: str) -> bool:
    """Whether UTF-8 can encode the str ``key``: not when it holds an unpaired surrogate (e.g. bytes decoded with
    ``surrogateescape``), which no request can carry."""
    if key.isascii():
        return True
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_keys(keys, what: str = "keys") -> list:
    """A list of keys: ``keys`` that is a str or not a list, or a key that is not a str, refuses the whole batch
    (InvalidArgument, naming the index: a wrong argument type). A str key that cannot be used fails alone: an empty
    one goes to the master, which answers INVALID_KEY for it (as the Java client); one UTF-8 cannot encode (an
    unpaired surrogate, see :func:`sendable`) is never sent, and the batch call answers INVALID_KEY for it."""
    if isinstance(keys, (str, bytes)) or keys is None:
        raise InvalidArgument("INVALID_PARAMS", f"{what} must be a list of str keys, not {type(keys).__name__}")
    try:
        keys = list(keys)
    except TypeError as e:
        raise InvalidArgument("INVALID_PARAMS", f"{what} must be a list of str keys, not "
                                                f"{type(keys).__name__}") from e
    for i, k in enumerate(keys):
        if not isinstance(k, str):
            check_key(k, f"key {i} of the batch")  # raises InvalidArgument
    return keys


def _tensor_view(obj, writable: bool, what: str):
    """A CPU tensor (torch-like: data_ptr, numel, element_size) as a byte view, or None if ``obj`` is not
    one."""
    if not (hasattr(obj, "data_ptr") and hasattr(obj, "element_size") and hasattr(obj, "numel")):
        return None
    device = getattr(obj, "device", None)
    dtype_name = getattr(device, "type", device)
    if device is not None and str(dtype_name) != "cpu":
        raise InvalidArgument("INVALID_PARAMS", f"{what} is on device {device}; pass a CPU tensor (e.g. the "
                                                "pinned host pool), not GPU memory")
    contiguous = getattr(obj, "is_contiguous", None)
    if contiguous is not None and not contiguous():
        raise InvalidArgument("INVALID_PARAMS", f"{what} is not contiguous; pass .contiguous()")
    size = int(obj.numel()) * int(obj.element_size())
    return from_pointer(int(obj.data_ptr()), size, what)


def _view(obj, writable: bool, what: str) -> memoryview:
    try:
        mv = memoryview(obj)  # always a view of our own (released when the call ends), never the caller's
    except ValueError as e:  # a released memoryview
        raise InvalidArgument("INVALID_PARAMS", f"{what}: {e}") from None
    except TypeError:
        tv = _tensor_view(obj, writable, what)
        if tv is None:
            raise InvalidArgument("INVALID_PARAMS", f"{what} must support the buffer protocol (bytes, "
                                  f"bytearray, memoryview, numpy array, ...), not {type(obj).__name__}") from None
        return tv
    problem = None
    if writable and mv.readonly:
        problem = (f"{what} is read-only ({type(obj).__name__}); pass a writable buffer such as a bytearray or a "
                   "numpy array")
    elif not mv.c_contiguous:
        problem = f"{what} is not C-contiguous; pass a contiguous buffer (e.g. numpy.ascontiguousarray)"
    elif mv.format == "B" and mv.ndim == 1:
        return mv
    else:
        try:
            return mv.cast("B")
        except (TypeError, ValueError):
            pass
        view = getattr(obj, "view", None)  # numpy structured dtypes: reinterpret as bytes
        if view is not None:
            try:
                return memoryview(view("uint8")).cast("B")
            except Exception:  # noqa: BLE001
                pass
        problem = f"{what} (format {mv.format!r}) cannot be viewed as bytes"
    mv.release()  # the caller's buffer is not left exported by the traceback
    raise InvalidArgument("INVALID_PARAMS", problem)


def readable(obj, what: str = "the value") -> memoryview:
    """A byte view of any buffer-protocol object (or CPU tensor) to read from."""
    return _view(obj, False, what)


def writable(obj, what: str = "the destination") -> memoryview:
    """A byte view of a writable buffer-protocol object (or CPU tensor) to write into."""
    return _view(obj, True, what)


def from_pointer(ptr, size, what: str = "the buffer") -> memoryview:
    """A writable byte view of ``size`` bytes at address ``ptr`` (Mooncake's pointer API). The range must be host
    memory the process can read and write (:mod:`tiffin._hostmem`: GPU memory or an unmapped address is
    INVALID_PARAMS, not a crash) and stay allocated while the view is used (memory freed after the check crashes
    the process, as in Mooncake)."""
    if not isinstance(ptr, int) or isinstance(ptr, bool):
        raise InvalidArgument("INVALID_PARAMS", f"{what}: the address must be an int, not {type(ptr).__name__}")
    if not isinstance(size, int) or isinstance(size, bool):
        raise InvalidArgument("INVALID_PARAMS", f"{what}: the size must be an int, not {type(size).__name__}")
    if size < 0:
        raise TiffinError("INVALID_PARAMS", f"{what}: negative size {size}")
    if size == 0:
        return memoryview(bytearray(0))
    if ptr <= 0:
        raise TiffinError("INVALID_PARAMS", f"{what}: null or negative address {ptr:#x}")
    _hostmem.HOST.check(ptr, size, what)
    return memoryview((ctypes.c_char * size).from_address(ptr)).cast("B")


def address(mv: memoryview) -> int:
    """The address of a writable byte view's first byte."""
    return ctypes.addressof(ctypes.c_char.from_buffer(mv))


class Chunks:
    """An object's bytes as a sequence of byte views (parts of a put_parts, buffers of a multi-buffer
    call): ``slice(offset, length)`` gives the views covering that range, without copying.

    Ownership: it holds the caller's memory through its views until :meth:`release`, which the
    client calls when a call ends (also when it fails: a traceback would otherwise keep the caller's
    buffer exported, and e.g. ``mmap.close()`` would refuse). Not thread-safe.
    """

    __slots__ = ("parts", "size", "_starts", "_views")

    def __init__(self, parts, _views=None):
        self.parts = [p for p in parts if len(p)]
        self._views = _views if _views is not None else list(parts)
        self.size = 0
        self._starts = []
        for p in self.parts:
            self._starts.append(self.size)
            self.size += len(p)

    def slice(self, offset: int, length: int) -> list:
        if len(self.parts) == 1:
            out = [self.parts[0][offset:offset + length]]
        else:
            out = []
            end = offset + length
            for start, p in zip(self._starts, self.parts):
                stop = start + len(p)
                if stop <= offset:
                    continue
                if start >= end:
                    break
                out.append(p[max(offset, start) - start:min(end, stop) - start])
        self._views.extend(out)
        return out

    def prefix(self, length: int) -> "Chunks":
        """The first ``length`` bytes (released with this one)."""
        return Chunks(self.slice(0, length), self._views) if length < self.size else self

    def release(self) -> None:
        """Releases every view of the caller's memory this object made. Idempotent."""
        views, self._views = self._views, []
        for v in views:
            try:
                v.release()
            except (BufferError, AttributeError):
                pass

    def copy_from(self, src: memoryview) -> None:
        """Copies ``src`` (``len(src) <= size``) into the parts, in order."""
        at = 0
        for p in self.parts:
            if at >= len(src):
                break
            k = min(len(p), len(src) - at)
            p[:k] = src[at:at + k]
            at += k

    def copy_to(self, dst: memoryview) -> None:
        """Copies the parts, in order, into ``dst`` (``len(dst) >= size``)."""
        at = 0
        for p in self.parts:
            dst[at:at + len(p)] = p
            at += len(p)
