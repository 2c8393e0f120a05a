"""The Tiffin wire protocol, client side: the HELLO handshake and blocking connections (pooled by
:mod:`tiffin._pool`) that send and receive frames (their format: :mod:`tiffin._frames`). It speaks exactly what
``io.tiffin.core.transport`` (``FrameCodec``, ``BlockingConnection``, ``BlockingConnectionPool``) speaks;
nothing here is Python-specific on the wire.

Thread-safety: a :class:`Connection` is used by one thread at a time (:class:`tiffin._pool.Pool` lends
it); :meth:`Connection.close` may be called from any thread.

Ownership: a connection holds the caller's buffers only for the duration of one call; it owns its
socket and its 64 KiB receive buffer.
"""

from __future__ import annotations

import os
import socket
import ssl
import struct
import sys
import time
from dataclasses import dataclass
from typing import Optional, Sequence

from .errors import TiffinError
from ._frames import (ALIGNMENT, DEFAULT_MAX_FRAME, HEADER, HEADER_SIZE, LENGTH_FIELD, MAX_CONTROL, PROTOCOL_VERSION,
                      Op, _HEAD_ROOM, _REQUEST_ID, _REQUEST_ID_AT, _parse, _status_error, bulk_offset, encode_frame,
                      frame_size, padding)
from ._tls import ReloadingContext, handshake_failure
from ._tokens import TokensFile
from ._proto import tiffin_pb2 as pb

#: This process's random peer key, presented in every HELLO: the master lets only this process's connections
#: write as this client's peer id while it has one open (the Java client's PeerKeys).
PEER_KEY = os.urandom(32)
#: The store version the master reports in SERVICE_READY; clients refuse another one, as the Java client.
STORE_VERSION = "0.1.0"

_RECEIVE_BUFFER = 64 * 1024
_DIRECT_READ_MIN = 16 * 1024
_IOV_MAX = 512
# On Linux the sockets block with kernel timeouts (SO_RCVTIMEO/SO_SNDTIMEO) rather than Python's (a
# poll() before every send and receive), and a receive of a known length waits for all of it in one
# system call (MSG_WAITALL): fewer system calls and wake-ups per answer. Elsewhere, Python's timeouts.
_KERNEL_TIMEOUTS = sys.platform.startswith("linux")
_WAITALL = socket.MSG_WAITALL if _KERNEL_TIMEOUTS else 0
_TIMEVAL = struct.Struct("@ll")


@dataclass(frozen=True)
class Settings:
    """How connections behave. Immutable, so thread-safe.

    rpc_timeout: longest wait for any one answer or for the socket to take more bytes (seconds).
    connect_timeout: bound on connecting plus the HELLO handshake (seconds; the HELLO's answer is also waited for
        no longer than rpc_timeout).
    auth_token: the token presented in HELLO (a role's, ``transport.client-token`` etc., or the shared
        ``transport.auth-token``); empty = none.
    max_frame_size: largest answer frame accepted (the servers' ``transport.max-frame-size``).
    tls: what connections are wrapped in (``tiffin._tls.ReloadingContext``, or any object with ``wrap_socket``);
        None = plaintext.
    tokens: where the token comes from when it may rotate (``tiffin._tokens.TokensFile``): its token of the moment
        is presented instead of ``auth_token`` when the file names one; None = ``auth_token`` alone.
    """

    rpc_timeout: float = 30.0
    connect_timeout: float = 10.0
    auth_token: str = ""
    max_frame_size: int = DEFAULT_MAX_FRAME
    tls: Optional[ReloadingContext] = None
    tokens: Optional[TokensFile] = None

    def token(self) -> str:
        """The token a new connection presents in its HELLO."""
        t = self.tokens.token() if self.tokens is not None else None
        return self.auth_token if t is None else t


def parse_endpoint(endpoint: str) -> tuple[str, int]:
    """``host:port`` (or ``[v6]:port``) as (host, port); ``INVALID_PARAMS`` when malformed."""
    if not isinstance(endpoint, str):
        raise TiffinError("INVALID_PARAMS", f"address {endpoint!r} is not a 'host:port' string")
    host, sep, port = endpoint.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        p = int(port)
    except ValueError:
        p = -1
    if not sep or not host or not 0 < p < 65536:
        raise TiffinError("INVALID_PARAMS", f"address {endpoint!r} is not 'host:port' (e.g. 127.0.0.1:50051)")
    return host, p


class _Expired(Exception):
    """The lease deadline of a receive passed. ``waited``: whether this connection was waited on until then
    (False: the deadline had passed before this call waited for its server at all, e.g. while the caller
    received another server's answers; its server is not to blame)."""

    def __init__(self, waited: bool = True):
        super().__init__()
        self.waited = waited


def lease_expired(message: str, node_waited: bool) -> TiffinError:
    """LEASE_EXPIRED of a read; ``node_waited`` (kept on the error as ``e.node_waited``) says whether the
    node named was waited on until the lease ended (it may be stalled) or the lease had ended before (the
    wait for other nodes used it up)."""
    e = TiffinError("LEASE_EXPIRED", message)
    e.node_waited = node_waited
    return e


class Request:
    """One pipelined request: its control message, the bulk bytes it sends (``out``: a list of
    byte-format memoryviews, or None) and where its answer's bulk bytes go (``into``: likewise).
    ``owner`` tags the object it serves. Not thread-safe; holds the caller's memory for one call."""

    __slots__ = ("msg", "out", "into", "owner", "out_len", "into_len")

    def __init__(self, msg, out=None, into=None, owner=0):
        self.msg = msg
        self.out = out
        self.into = into
        self.owner = owner
        self.out_len = sum(len(m) for m in out) if out else 0
        self.into_len = sum(len(m) for m in into) if into else 0


class Connection:
    """A blocking connection to one Tiffin server (master or node), driven by the calling thread.

    Not thread-safe: one thread uses it at a time (see :class:`tiffin._pool.Pool`); :meth:`close` may come from any
    thread. A call failing with the server's error status leaves it usable; any other failure (I/O,
    timeout, malformed answer) closes it.
    """

    def __init__(self, sock: socket.socket, endpoint: str, settings: Settings):
        self._sock = sock
        self.endpoint = endpoint
        self._settings = settings
        self._next_id = 1
        self._rbuf = bytearray(_RECEIVE_BUFFER)
        self._rmv = memoryview(self._rbuf)
        self._rpos = 0
        self._rend = 0
        self._large = False
        self._scratch = None
        self._timeout = settings.rpc_timeout
        # TLS sockets take neither receive flags nor sendmsg, and report a kernel timeout as an SSL error:
        # they use Python's timeouts and plain receives
        self._kernel = _KERNEL_TIMEOUTS and settings.tls is None
        self._waitall = _WAITALL if self._kernel else 0
        self.calls = 0
        self.answer_started = False
        self.closed = False

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, endpoint: str, settings: Settings, peer_id: str, end: Optional[float] = None) -> "Connection":
        """Connects and completes the HELLO handshake within ``settings.connect_timeout`` (its answer also within
        ``settings.rpc_timeout``, as every answer), and no later than
        ``end`` (``time.monotonic()``; the end of the read lease the connection is opened for, None = none):
        a connection that comes after the lease cannot serve the read.

        Raises TiffinError: RPC_FAIL (unreachable, no answer), INVALID_VERSION, ILLEGAL_CLIENT (token),
        LEASE_EXPIRED (``end`` came first: the server may be stalled).
        """
        host, port = parse_endpoint(endpoint)
        deadline = time.monotonic() + settings.connect_timeout
        if end is not None and end < deadline:
            deadline = end
            if end <= time.monotonic():
                raise lease_expired(f"the read lease ended before a connection to {endpoint} was opened: waits for "
                                    "other nodes used it up; retry (a fresh lookup grants a new lease)", False)
        try:
            sock = socket.create_connection((host, port), timeout=max(0.001, deadline - time.monotonic()))
        except OSError as e:
            if end is not None and isinstance(e, socket.timeout) and time.monotonic() >= end:
                raise lease_expired(f"cannot connect to {endpoint} before the read lease ended; the node may be "
                                    "stalled: retry (a fresh lookup may name another replica)", True) from e
            raise TiffinError("RPC_FAIL", f"cannot connect to {endpoint} ({e}); check the address and that "
                                          "the server is running") from e
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        except OSError:
            pass
        if settings.tls is not None:
            try:  # the TLS handshake, within what is left of the deadline
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                sock = settings.tls.wrap_socket(sock, server_hostname=host)
            except (OSError, ssl.SSLError) as e:
                sock.close()
                if end is not None and time.monotonic() >= end:
                    raise lease_expired(f"the TLS handshake with {endpoint} did not end before the read lease "
                                        "ended; the node may be stalled: retry (a fresh lookup may name another "
                                        "replica)", True) from e
                raise handshake_failure(endpoint, e) from e
        c = cls(sock, endpoint, settings)
        if c._kernel:
            sock.settimeout(None)  # blocking; the waits are bounded by the kernel timeouts _set_timeout sets
            c._timeout = None
        try:
            c._handshake(peer_id, deadline, end)
        except BaseException:
            c.close()
            raise
        return c

    def _handshake(self, peer_id: str, deadline: Optional[float] = None, end: Optional[float] = None) -> None:
        """HELLO, answered by ``deadline`` (``time.monotonic()``; None = ``connect_timeout`` from now) and within
        ``rpc_timeout``; ``end``: the read lease's end, if that is what the deadline is (then a timeout at it is
        LEASE_EXPIRED)."""
        hello = pb.Hello(protocol_version=PROTOCOL_VERSION, token=self._settings.token(), peer_id=peer_id,
                         peer_key=PEER_KEY)
        timeout = self._settings.connect_timeout if deadline is None else max(0.001, deadline - time.monotonic())
        timeout = min(timeout, self._settings.rpc_timeout)  # an answer, as any other: within the RPC timeout too
        try:
            reply = self._call(Op.HELLO, hello, pb.HelloReply, None, None, timeout)
        except TiffinError as e:
            if e.code == "RPC_TIMEOUT" and end is not None and time.monotonic() >= end:
                raise lease_expired(f"no answer to HELLO from {self.endpoint} before the read lease ended; the node "
                                    "may be stalled: retry (a fresh lookup may name another replica)", True) from e
            code = "RPC_FAIL" if e.code == "RPC_TIMEOUT" else e.code
            raise TiffinError(code, f"handshake with {self.endpoint} failed: {e}") from e
        if reply.protocol_version != PROTOCOL_VERSION:
            raise TiffinError("INVALID_VERSION", f"server {self.endpoint} speaks protocol version "
                              f"{reply.protocol_version}, this client {PROTOCOL_VERSION}; run the same Tiffin "
                              "version on clients and servers")

    @property
    def is_open(self) -> bool:
        return not self.closed

    def close(self) -> None:
        """Closes the socket; a call blocked on it fails. Idempotent, thread-safe."""
        self.closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass

    # ------------------------------------------------------------------ calls

    def call(self, opcode: int, request, reply_cls, bulk_out=None, bulk_in=None, end: Optional[float] = None):
        """Sends one request (bulk bytes from the memoryviews ``bulk_out``), waits for its answer and
        parses its control part with ``reply_cls`` (None = ignore). The answer's bulk bytes go into the
        memoryviews ``bulk_in``, in order. ``end`` (``time.monotonic()``; None = none): the end of the read lease
        the call serves, after which it waits no longer (each wait is also bounded by the RPC timeout).

        Raises TiffinError: the server's status; RPC_TIMEOUT; RPC_FAIL when the connection fails; LEASE_EXPIRED
        after ``end``.
        """
        return self._call(opcode, request, reply_cls, bulk_out, bulk_in, self._settings.rpc_timeout, end)

    def read_into(self, opcode: int, frame: bytearray, into: memoryview, end: float) -> None:
        """Sends ``frame`` (a request from :func:`tiffin._frames.request_frame`; its id is set here) and receives the
        answer's bulk into ``into``, which it must fill exactly (a DATA_READ of one slice), waiting no
        later than ``end`` (``time.monotonic()``: the end of the read lease). The common answer (status 0,
        a control part that fits the first 64 bytes, the bulk) goes from the socket straight into
        ``into`` with two receives; any other answer takes the general path.

        Raises TiffinError: the server's status; LEASE_EXPIRED after ``end``; RPC_TIMEOUT; RPC_FAIL when
        the connection fails; TRANSFER_FAIL when the answer holds another number of bytes.
        """
        if self.closed:
            self._check_open(opcode)
        self.calls += 1
        self.answer_started = False
        rid = self._next_id
        self._next_id = rid + 1
        _REQUEST_ID.pack_into(frame, _REQUEST_ID_AT, rid)
        n = len(into)
        try:
            left = end - time.monotonic()
            if left <= 0:
                raise _Expired(False)
            self._bound_timeout(left)
            self._sock.sendall(frame)
            self._large = n >= _DIRECT_READ_MIN  # then the answer's first receive stops at its 64-byte head
            if self._rend - self._rpos < ALIGNMENT:
                self._prefetch_frame_start(end)
            length, version, kind, op, got_id, status, clen, blen = HEADER.unpack_from(self._rbuf, self._rpos)
            if (status == 0 and blen == n and got_id == rid and op == opcode and kind == 1 and n
                    and version == PROTOCOL_VERSION and clen <= _HEAD_ROOM
                    and length == frame_size(clen, n) - LENGTH_FIELD <= self._settings.max_frame_size):
                self._rpos += ALIGNMENT
                self._last_bulk = n
                self._fill(into, end)
                if n & (ALIGNMENT - 1):
                    self._skip(padding(n), end)
                return
            status, control, err = self._read_answer(opcode, {rid: (into,)}, end)[1:]
        except (OSError, EOFError, _Expired) as e:
            raise self._io_failure(opcode, e, end) from e
        if err is not None:
            raise err
        if status != 0:
            raise _status_error(status, control)
        if self._last_bulk != n:
            raise TiffinError("TRANSFER_FAIL", f"{self.endpoint} answered {Op.NAMES.get(opcode)} with "
                                               f"{self._last_bulk} bytes where {n} were expected")

    def _call(self, opcode, request, reply_cls, bulk_out, bulk_in, timeout, end=None):
        self._check_open(opcode)
        self.calls += 1
        self.answer_started = False
        rid = self._next_id
        self._next_id += 1
        try:
            if end is None:
                self._set_timeout(timeout)
            else:
                left = end - time.monotonic()
                if left <= 0:
                    raise _Expired(False)
                self._bound_timeout(left)
            bufs = []
            encode_frame(bufs, opcode, rid, request, bulk_out)
            self._write_all(bufs)
            status, control, err = self._read_answer(opcode, {rid: bulk_in}, end)[1:]
        except (OSError, EOFError, _Expired) as e:
            raise self._io_failure(opcode, e, end) from e
        if err is not None:
            raise err
        if status != 0:
            raise _status_error(status, control)
        if reply_cls is None:
            return None
        return _parse(reply_cls, control, opcode)

    def send(self, opcode: int, requests: Sequence[Request]) -> int:
        """Pipelined calls, first half: writes every request (gathered into few system calls) without
        waiting for answers; returns the first request id. Collect the answers with :meth:`receive`.

        Raises TiffinError RPC_FAIL / RPC_TIMEOUT (the connection is then closed).
        """
        self._check_open(opcode)
        self.calls += 1
        self.answer_started = False
        self._set_timeout(self._settings.rpc_timeout)
        first = self._next_id
        self._next_id += len(requests)
        try:
            bufs = []
            for i, r in enumerate(requests):
                encode_frame(bufs, opcode, first + i, r.msg, r.out)
            self._write_all(bufs)
        except (OSError, EOFError) as e:
            raise self._io_failure(opcode, e, None) from e
        except BaseException:
            self.close()  # some requests may have been written: the stream no longer matches the ids
            raise
        return first

    def receive(self, opcode: int, first: int, requests: Sequence[Request], end: Optional[float] = None):
        """Pipelined calls, second half: reads the answers to ``requests`` (sent by :meth:`send` from id
        ``first`` on) in whatever order they come, each answer's bulk into its request's ``into``.
        ``end`` (``time.monotonic()``) bounds the waiting: the end of the read leases. Returns one entry
        per request: None or the TiffinError it failed with. A connection failure fails every request
        not yet answered (LEASE_EXPIRED after ``end``) and closes the connection.
        """
        n = len(requests)
        out: list = [None] * n
        pending = {first + i: i for i in range(n)}
        dests = {first + i: r.into for i, r in enumerate(requests)}
        try:
            if end is not None and time.monotonic() >= end:
                raise _Expired(False)  # not waited for at all: the caller's waits for other servers used the lease
            while pending:
                rid, status, control, err = self._read_answer(opcode, dests, end, pending)
                i = pending.pop(rid)
                if err is not None:
                    out[i] = err
                elif status != 0:
                    out[i] = _status_error(status, control)
                elif requests[i].into is not None and requests[i].into_len != self._last_bulk:
                    out[i] = TiffinError("TRANSFER_FAIL", f"{self.endpoint} answered {Op.NAMES.get(opcode)} with "
                                         f"{self._last_bulk} bytes where {requests[i].into_len} were expected")
        except (OSError, EOFError, _Expired) as e:
            failure = self._io_failure(opcode, e, end)
            for i in pending.values():
                out[i] = failure
        except TiffinError as e:  # malformed answer: the connection is closed
            for i in pending.values():
                out[i] = e
        return out

    # ------------------------------------------------------------------ encoding and I/O

    def _write_all(self, bufs: list) -> None:
        sock = self._sock
        i = 0
        n = len(bufs)
        try:
            if self._settings.tls is not None:
                # no sendmsg on TLS: small parts in one record, large ones as they are
                small = bytearray()
                for b in bufs:
                    if len(b) < 65536:
                        small += b
                        continue
                    if small:
                        sock.sendall(small)
                        small = bytearray()
                    sock.sendall(b)
                if small:
                    sock.sendall(small)
                return
            while i < n:
                sent = sock.sendmsg(bufs[i:i + _IOV_MAX])
                while sent > 0 and i < n:
                    size = len(bufs[i])
                    if sent >= size:
                        sent -= size
                        i += 1
                    else:
                        bufs[i] = memoryview(bufs[i])[sent:]
                        sent = 0
        finally:
            bufs.clear()  # no view of the caller's memory outlives the call (e.g. in a traceback)

    def _set_timeout(self, t: float) -> None:
        """Bounds each following send and receive by ``t`` seconds (> 0)."""
        if t != self._timeout:
            if self._kernel:
                sec = int(t)
                tv = _TIMEVAL.pack(sec, max(1 if sec == 0 else 0, int((t - sec) * 1e6)))  # 0 would mean "forever"
                self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
                self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
            else:
                self._sock.settimeout(t)
            self._timeout = t

    def _bound_timeout(self, left: float) -> None:
        """Waits of the next answer end no later than ``left`` seconds from now (within 0.25 s: each
        change of a socket's timeout costs system calls)."""
        want = min(self._settings.rpc_timeout, left)
        if self._timeout is None or want < self._timeout - 0.25 or want > self._timeout + 0.25:
            self._set_timeout(want)

    def _fill(self, mv: memoryview, end: Optional[float]) -> None:
        """Fills ``mv`` (format 'B'): from the receive buffer, then straight from the socket for 16 KiB
        or more, else through the receive buffer."""
        n = len(mv)
        got = 0
        avail = self._rend - self._rpos
        if avail:
            k = avail if avail < n else n
            mv[:k] = self._rmv[self._rpos:self._rpos + k]
            self._rpos += k
            got = k
        sock = self._sock
        while got < n:
            if end is not None and time.monotonic() >= end:
                raise _Expired()
            remaining = n - got
            if remaining >= _DIRECT_READ_MIN:
                r = sock.recv_into(mv[got:], remaining, self._waitall)
                if r == 0:
                    raise EOFError("the server closed the connection")
                self.answer_started = True
                got += r
            else:
                r = sock.recv_into(self._rmv, remaining if self._large else _RECEIVE_BUFFER)
                if r == 0:
                    raise EOFError("the server closed the connection")
                self.answer_started = True
                k = r if r < remaining else remaining
                mv[got:got + k] = self._rmv[:k]
                self._rpos = k
                self._rend = r
                got += k

    def _prefetch_frame_start(self, end: Optional[float]) -> None:
        """Makes the first 64 bytes of the next frame buffered (every frame is at least that long, so
        this never reads past it): the header, and for most answers the control part and padding, in one
        receive. After an answer with a large bulk exactly 64 bytes are asked for (the next answer's bulk
        then goes straight to its destination); else up to the buffer's size."""
        have = self._rend - self._rpos
        if have >= ALIGNMENT:
            return
        if have:
            self._rbuf[:have] = self._rmv[self._rpos:self._rend]
        self._rpos = 0
        self._rend = have
        sock = self._sock
        while self._rend < ALIGNMENT:
            if end is not None and time.monotonic() >= end:
                raise _Expired()
            if self._large:
                r = sock.recv_into(self._rmv[self._rend:], ALIGNMENT - self._rend, self._waitall)
            else:
                r = sock.recv_into(self._rmv[self._rend:], _RECEIVE_BUFFER - self._rend)
            if r == 0:
                raise EOFError("the server closed the connection")
            self.answer_started = True
            self._rend += r

    def _read(self, n: int, end: Optional[float]) -> memoryview:
        """The next ``n`` bytes, as a view valid until the next read."""
        if self._rend - self._rpos >= n:
            v = self._rmv[self._rpos:self._rpos + n]
            self._rpos += n
            return v
        out = memoryview(bytearray(n))
        self._fill(out, end)
        return out

    def _skip(self, n: int, end: Optional[float]) -> None:
        if self._scratch is None:
            self._scratch = memoryview(bytearray(256 * 1024))
        while n > 0:
            k = min(n, len(self._scratch))
            self._fill(self._scratch[:k], end)
            n -= k

    _last_bulk = 0

    def _read_answer(self, opcode: int, dests: dict, end: Optional[float], pending=None):
        """Reads one answer: (request id, status, control bytes, failure or None). Its bulk goes into
        ``dests[request id]`` (a list of memoryviews; None = none expected)."""
        if end is not None:
            left = end - time.monotonic()
            if left <= 0:
                raise _Expired()
            self._bound_timeout(left)
        self._prefetch_frame_start(end)
        h = self._read(LENGTH_FIELD + HEADER_SIZE, end)
        length, version, kind, op, rid, status, clen, blen = HEADER.unpack_from(h)
        if length < HEADER_SIZE or length > self._settings.max_frame_size:
            raise self._malformed(opcode, f"frame length {length} is outside {HEADER_SIZE}.."
                                          f"{self._settings.max_frame_size}")
        if version != PROTOCOL_VERSION:
            raise self._malformed(opcode, f"protocol version {version}, this side speaks {PROTOCOL_VERSION}; "
                                          "run the same Tiffin version on both sides")
        if kind != 1:
            raise self._malformed(opcode, "the server sent a request; servers may only answer")
        if op != opcode:
            raise self._malformed(opcode, f"an answer with opcode {op} to a {Op.NAMES.get(opcode)} request")
        if clen < 0 or clen > length - HEADER_SIZE or clen > MAX_CONTROL:
            raise self._malformed(opcode, f"control length {clen} does not fit a frame of {length}")
        if blen < 0 or frame_size(clen, blen) != LENGTH_FIELD + length:
            raise self._malformed(opcode, f"frame length {length} does not match control length {clen} and bulk "
                                          f"length {blen} with 64-byte padding")
        if pending is not None and rid not in pending:
            raise self._malformed(opcode, f"an answer to request {rid}, which is not waiting")
        if pending is None and rid not in dests:
            raise self._malformed(opcode, f"an answer to request {rid}, which is not waiting")
        self._large = blen >= _DIRECT_READ_MIN
        head = (length - HEADER_SIZE) if blen == 0 else bulk_offset(clen, blen) - LENGTH_FIELD - HEADER_SIZE
        control = bytes(self._read(head, end)[:clen]) if head else b""
        self._last_bulk = blen
        err = None
        if blen:
            into = dests.get(rid)
            if status != 0 or into is None:
                self._skip(blen + padding(blen), end)
                if status == 0:
                    err = TiffinError("TRANSFER_FAIL", f"{self.endpoint} answered {Op.NAMES.get(opcode)} with "
                                                       f"{blen} bulk bytes where none were expected")
            else:
                total = sum(len(m) for m in into)
                if blen > total:
                    self.close()
                    raise TiffinError("TRANSFER_FAIL", f"{self.endpoint} answered {Op.NAMES.get(opcode)} with {blen} "
                                                       f"bulk bytes where {total} were expected; closed the connection")
                left = blen
                for m in into:
                    if left <= 0:
                        break
                    k = len(m) if len(m) <= left else left
                    self._fill(m if k == len(m) else m[:k], end)
                    left -= k
                pad = padding(blen)
                if pad:
                    self._skip(pad, end)
        return rid, status, control, err

    # ------------------------------------------------------------------ failures

    def _check_open(self, opcode):
        if self.closed:
            raise TiffinError("RPC_FAIL", f"cannot send {Op.NAMES.get(opcode)}: the connection to {self.endpoint} "
                                          "is closed; take a new one from the pool")

    def _malformed(self, opcode, problem) -> TiffinError:
        self.close()
        return TiffinError("RPC_FAIL", f"malformed answer to {Op.NAMES.get(opcode)} from {self.endpoint}: "
                                       f"{problem}; closed the connection")

    def _io_failure(self, opcode, e, end) -> TiffinError:
        self.close()
        name = Op.NAMES.get(opcode, str(opcode))
        timed_out = isinstance(e, (socket.timeout, BlockingIOError))  # BlockingIOError: a kernel timeout
        if isinstance(e, _Expired) and not e.waited:
            return lease_expired(f"the read lease ended before {name} to {self.endpoint} was sent or its answer "
                                 "awaited: waits for other nodes used it up; retry (a fresh lookup grants a new "
                                 "lease)", False)
        # a wait that the lease bounded (its timeout below the RPC timeout: :meth:`_bound_timeout`) may end up to
        # 0.25 s before the lease: the node was silent for (nearly) all of it
        lease_bound = end is not None and self._timeout is not None and self._timeout < self._settings.rpc_timeout
        if isinstance(e, _Expired) or (timed_out and end is not None and (time.monotonic() >= end or lease_bound)):
            return lease_expired(f"no answer to {name} from {self.endpoint} before the read lease ended; the node "
                                 "may be stalled: retry (a fresh lookup may name another replica)", True)
        if timed_out:
            return TiffinError("RPC_TIMEOUT", f"no answer to {name} from {self.endpoint} within {self._timeout:g} s; "
                                              "check that the server is running and not overloaded, or raise "
                                              "the timeout")
        return TiffinError("RPC_FAIL", f"connection to {self.endpoint} failed during {name} ({e or type(e).__name__});"
                                       " check that the server is running and retry")

    def __repr__(self):
        return f"Connection[{self.endpoint}{', closed' if self.closed else ''}]"
