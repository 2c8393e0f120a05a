"""The same-host path: mappings of the segments that nodes on this host keep in shared memory
(``tiffin node --shared-memory-dir DIR``), so a replica there is read and written with one memory copy
instead of through the node's socket. The Python twin of ``io.tiffin.core.client.SharedSegments``,
with the same safety checks:

* a segment is mapped only when its node reports (SEGMENT_INFO) the same host (kernel boot id) and pid
  namespace as this process, its process runs, and the file opened here is the one the node created
  (device, inode and size);
* writes go through a mapping only while the node's process is alive (pid and start time, looked up in
  /proc at most every 20 ms): a write into the memory of a crashed node would "succeed" where the
  socket fails;
* after a copy, the caller compares the segment's current mount epoch (an 8-byte word in the page after
  the segment's bytes) with the replica's; a re-mounted segment's bytes are not trusted;
* the first replica seen in a segment costs one SEGMENT_INFO request; the answer (mapped or "not
  shareable") is remembered per segment name, which is unique per node run. A node that could not
  answer is asked again after 2 s at the earliest; mappings whose file is gone or replaced, or whose
  node died, are dropped on a sweep every 5 s.

Ownership: every mapping (an ``mmap`` and a memoryview of it) is owned by this object and closed once,
when its file is gone or at :meth:`SharedSegments.close`. CPython refuses to close an mmap while a view
of it is in use (``BufferError``); such a mapping is left to the garbage collector, so a copy racing
with a close never touches unmapped memory.

Thread-safety: thread-safe.
"""

from __future__ import annotations

import logging
import mmap
import os
import struct
import threading
import time

log = logging.getLogger("tiffin.shm")

SWEEP_S = 5.0
RETRY_S = 2.0
LIVENESS_S = 0.020
_EPOCH = struct.Struct("=Q")  # native order, as the node writes it


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def host_id() -> str:
    """This host's identity: the kernel's boot id (empty when unknown: nothing is shared)."""
    return _read("/proc/sys/kernel/random/boot_id")


def pid_namespace() -> str:
    """This process's pid namespace (``pid:[4026531836]``), empty when unknown."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def process_start(pid: int) -> int | None:
    """The start time (clock ticks after boot) of process ``pid``, or None when it does not run."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    # the command name (field 2) may hold spaces and parentheses: fields after the last ')'
    rest = stat[stat.rfind(")") + 2:].split()
    if len(rest) < 20 or rest[0] in ("Z", "X"):
        return None
    try:
        return int(rest[19])
    except ValueError:
        return None


class _Liveness:
    """Whether the node's process (pid and start time) still runs, asked of /proc at most every 20 ms."""

    def __init__(self, pid: int, start: int):
        self.pid = pid
        self.start = start
        self.checked = time.monotonic()
        self.alive = True

    def is_alive(self) -> bool:
        now = time.monotonic()
        if self.alive and now - self.checked < LIVENESS_S:
            return True
        return self.is_alive_now()

    def is_alive_now(self) -> bool:
        self.alive = process_start(self.pid) == self.start
        self.checked = time.monotonic()
        return self.alive


class _Mapping:
    __slots__ = ("path", "device", "inode", "owner", "mm", "view", "size", "epoch_at")

    def __init__(self, path, device, inode, owner, mm, size, epoch_at):
        self.path = path
        self.device = device
        self.inode = inode
        self.owner = owner
        self.mm = mm
        self.view = memoryview(mm) if mm is not None else None
        self.size = size
        self.epoch_at = epoch_at

    def close(self) -> bool:
        if self.mm is None:
            return True
        try:
            self.view.release()
            self.mm.close()
            return True
        except BufferError:
            log.warning("segment file %s is still in use by a copy; it stays mapped until that ends", self.path)
            return False


_NONE = _Mapping(None, 0, 0, None, None, 0, 0)


class SharedSegments:
    """A client's mappings of same-host nodes' shared-memory segments (see the module comment).

    ``segment_info(endpoint, segment)`` asks a node for a SegmentInfoReply and raises when it cannot.
    """

    def __init__(self, segment_info, retry_s: float = RETRY_S):
        self._segment_info = segment_info
        self._retry_s = retry_s
        self._by_segment: dict[str, _Mapping] = {}
        self._retry_at: dict[str, float] = {}
        self._lock = threading.Lock()
        self._host = host_id()
        self._pidns = pid_namespace()
        self._last_sweep = time.monotonic()
        self._closed = False

    def slice(self, endpoint: str, segment: str, offset: int, length: int, for_write: bool):
        """The bytes [offset, offset + length) of ``segment`` (on the node at ``endpoint``) mapped here,
        or None when that segment is not shared with this process (use the socket). With
        ``for_write``, also None when the node's process no longer runs."""
        if self._closed or not self._host:
            return None
        self._maybe_sweep()
        m = self._by_segment.get(segment)
        if m is None:
            retry = self._retry_at.get(segment)
            if retry is not None and time.monotonic() < retry:
                return None
            m = self._map(endpoint, segment)
            if m is None:
                # not remembered for good (the node may come back), but not asked on every read meanwhile
                self._retry_at[segment] = time.monotonic() + self._retry_s
                return None
            self._retry_at.pop(segment, None)
            with self._lock:
                raced = self._by_segment.get(segment)
                if raced is None and not self._closed:
                    self._by_segment[segment] = m
                else:
                    m.close()
                    m = raced if raced is not None else _NONE
        view = m.view
        if view is None or offset < 0 or length < 0 or offset > m.size - length:
            return None
        if for_write and not m.owner.is_alive():
            return None
        return view[offset:offset + length]

    def mount_epoch(self, segment: str) -> int:
        """The node's current mount epoch of a mapped segment, read from its file after a copy; -1 when
        the segment is not mapped or its node publishes no epoch."""
        m = self._by_segment.get(segment)
        if m is None or m.view is None or not m.epoch_at:
            return -1
        try:
            return _EPOCH.unpack_from(m.view, m.epoch_at)[0]
        except ValueError:  # released meanwhile
            return -1

    def mapped(self) -> list:
        """Names of the segments mapped now."""
        return [s for s, m in list(self._by_segment.items()) if m.view is not None]

    def _map(self, endpoint: str, segment: str):
        try:
            info = self._segment_info(endpoint, segment)
        except Exception as e:  # noqa: BLE001 - any failure: use the socket
            log.debug("segment info of %s from %s failed: %s", segment, endpoint, e)
            return None
        if (not info.shared_memory_path or info.host_id != self._host or not self._pidns
                or info.pid_namespace != self._pidns):
            return _NONE
        start = process_start(info.pid)
        if start is None:
            return _NONE
        path = info.shared_memory_path
        size = info.size
        file_size = info.file_size or size
        epoch_at = info.mount_epoch_offset
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError as e:
            log.debug("cannot open %s (%s); using the socket", path, e)
            return _NONE
        try:
            st = os.fstat(fd)
            if (st.st_dev != info.device or st.st_ino != info.inode or st.st_size != file_size
                    or file_size < size or (epoch_at and (epoch_at < size or epoch_at > file_size - 8
                                                         or epoch_at % 8))):
                log.debug("%s is not the file of segment %s (other device, inode or size); using the socket",
                          path, segment)
                return _NONE
            mm = mmap.mmap(fd, file_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except (OSError, ValueError) as e:
            log.debug("cannot map segment %s from %s (%s); using the socket", segment, path, e)
            return _NONE
        finally:
            os.close(fd)
        log.debug("mapped segment %s of %s from %s", segment, endpoint, path)
        return _Mapping(path, st.st_dev, st.st_ino, _Liveness(info.pid, start), mm, size, epoch_at)

    def _maybe_sweep(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < SWEEP_S:
            return
        self._last_sweep = now
        self.sweep()

    def sweep(self) -> int:
        """Unmaps the segments whose file is gone or replaced or whose node died, and forgets expired
        retry pauses; returns how many were unmapped."""
        now = time.monotonic()
        for s, at in list(self._retry_at.items()):
            if now >= at:
                self._retry_at.pop(s, None)
        gone = []
        for s, m in list(self._by_segment.items()):
            if m.view is None:
                continue
            try:
                st = os.stat(m.path)
                live = st.st_dev == m.device and st.st_ino == m.inode and m.owner.is_alive_now()
            except OSError:
                live = False
            if not live:
                gone.append((s, m))
        for s, m in gone:
            with self._lock:
                if self._by_segment.get(s) is m:
                    del self._by_segment[s]
            m.close()
        return len(gone)

    def close(self) -> None:
        """Unmaps everything; later slices return None. Idempotent."""
        with self._lock:
            self._closed = True
            maps = list(self._by_segment.values())
            self._by_segment.clear()
        for m in maps:
            m.close()
