"""Whether an address range is host memory this process may read and write, before the pointer API
(:func:`tiffin._buffers.from_pointer`) touches it through ctypes. A GPU pointer (CUDA device memory, which the
process sees as a reserved, inaccessible range of its address space, as vLLM's Mooncake connector registers its KV
caches) or an address nothing is mapped at would kill the process with SIGSEGV on the first read or write; such a
range is refused with INVALID_PARAMS instead. Mooncake moves device memory itself (GPUDirect RDMA, or its own CUDA
copies); Tiffin's Python client moves bytes through host memory only.

The check reads ``/proc/self/maps`` and keeps its readable-and-writable ranges; a range inside them is accepted
without reading the file again, one outside them makes it read the file once more (memory mapped since), and
``register_buffer`` always reads it. So a range that was host memory when the file was last read, and was unmapped
and mapped again as inaccessible since, is not caught by a pointer call on unregistered memory: that is a pointer
to freed memory, the caller's use after free, as in Mooncake. Where ``/proc/self/maps`` cannot be read (not Linux),
nothing is checked.

Thread-safe: the snapshot is one immutable tuple, replaced under a lock.
"""

from __future__ import annotations

import bisect
import threading

from .errors import TiffinError

_MAPS = "/proc/self/maps"


class HostMemory:
    """The process's readable and writable address ranges, as last read from ``/proc/self/maps``."""

    def __init__(self, maps_path: str = _MAPS):
        self._path = maps_path
        self._lock = threading.Lock()
        self._snapshot = None  # (starts, ends) of merged rw ranges; None = not read yet
        self._readable = True

    def _read(self):
        starts, ends = [], []
        try:
            with open(self._path, "rb") as f:
                for line in f:
                    span, perms = line.split(None, 2)[:2]
                    if perms[:2] != b"rw":
                        continue
                    lo, hi = (int(x, 16) for x in span.split(b"-"))
                    if ends and ends[-1] == lo:
                        ends[-1] = hi  # adjacent: one range
                    else:
                        starts.append(lo)
                        ends.append(hi)
        except OSError:
            self._readable = False
            return None
        return (tuple(starts), tuple(ends))

    @staticmethod
    def _covers(snapshot, ptr: int, size: int) -> bool:
        starts, ends = snapshot
        i = bisect.bisect_right(starts, ptr) - 1
        return i >= 0 and ptr + size <= ends[i]

    def check(self, ptr: int, size: int, what: str, fresh: bool = False) -> None:
        """Returns if ``size`` bytes at ``ptr`` are readable and writable host memory (or cannot be checked);
        raises TiffinError INVALID_PARAMS otherwise. ``fresh``: read the mappings now, whatever was read before."""
        snapshot = self._snapshot
        if not fresh and snapshot is not None and self._covers(snapshot, ptr, size):
            return
        with self._lock:
            if not self._readable:
                return
            snapshot = self._read()
            if snapshot is None:
                return
            self._snapshot = snapshot
        if not self._covers(snapshot, ptr, size):
            raise TiffinError("INVALID_PARAMS", f"{what}: {size} bytes at {ptr:#x} are not host memory this process "
                                                f"can read and write (GPU memory, or nothing mapped there): Tiffin's "
                                                f"Python client moves bytes through host memory only; pass host "
                                                f"buffers (e.g. the engine's pinned CPU pool)")


#: the process's one instance
HOST = HostMemory()
