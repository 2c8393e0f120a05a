"""The single-slice read (``Connection.read_into``, ``Pool.read_into``): the common answer goes straight
into the destination, every other answer — a longer control part, an error status, a wrong bulk length,
a wrong request id, silence — gives the right bytes or a clear error and leaves the stream in step.
Answers a real node never sends come from a scripted data-plane server on loopback; a real node is in
test_client.py and test_location_cache.py. And 0-byte objects: the client reads and writes them without
a node."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

import tiffin
from tiffin import TiffinError, _buffers as B
from tiffin._frames import Op, frame_size, padding, request_frame
from tiffin._pool import Pool
from tiffin._proto import tiffin_pb2 as pb
from tiffin._types import ObjectInfo, Replica
from tiffin._wire import Settings

HEADER = struct.Struct(">iBBHqiii")


def pattern(offset: int, length: int) -> bytes:
    """The scripted segment's bytes: a function of the offset, so misplaced bytes show."""
    return bytes((offset + i) * 7 % 251 for i in range(length))


def answer(opcode, rid, status=0, control=b"", bulk=b"") -> bytes:
    c, b = len(control), len(bulk)
    size = frame_size(c, b)
    out = bytearray(size)
    HEADER.pack_into(out, 0, size - 4, 2, 1, opcode, rid, status, c, b)
    out[28:28 + c] = control
    if b:
        at = size - b - padding(b)
        out[at:at + b] = bulk
    return bytes(out)


class DataServer:
    """A loopback server speaking the frame protocol: HELLO, then DATA_READ answered by
    ``script(connection_number, request, rid)`` — bytes to send, None to stay silent, or "close" — by
    default the requested bytes of :func:`pattern`."""

    def __init__(self, script=None):
        self.script = script or (lambda n, req, rid: answer(Op.DATA_READ, rid, bulk=pattern(req.offset, req.length)))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.endpoint = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        self.requests = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn, self.connections), daemon=True).start()

    def _serve(self, conn, n):
        with conn:
            while True:
                head = conn.recv(28, socket.MSG_WAITALL)
                if len(head) < 28:
                    return
                length, _, _, op, rid, _, c, _ = HEADER.unpack(head)
                rest = conn.recv(length - 24, socket.MSG_WAITALL)
                control = rest[:c]
                if op == Op.HELLO:
                    conn.sendall(answer(op, rid, control=pb.HelloReply(protocol_version=2).SerializeToString()))
                    continue
                req = pb.DataRequest.FromString(control)
                self.requests.append(req)
                out = self.script(n, req, rid)
                if out == "close":
                    return
                if out is None:
                    time.sleep(10)
                    return
                conn.sendall(out)

    def close(self):
        self.sock.close()


@pytest.fixture()
def server_and_pool(request):
    servers, pools = [], []

    def make(script=None, timeout=5.0):
        srv = DataServer(script)
        pool = Pool(Settings(rpc_timeout=timeout, connect_timeout=5.0), "test")
        servers.append(srv)
        pools.append(pool)
        return srv, pool

    yield make
    for p in pools:
        p.close()
    for s in servers:
        s.close()


def read(pool, srv, offset, length, into=None, end=None):
    into = into if into is not None else memoryview(bytearray(length))
    frame = request_frame(Op.DATA_READ, pb.DataRequest(segment="seg", offset=offset, length=length, mount_epoch=1))
    pool.read_into(srv.endpoint, Op.DATA_READ, frame, into, end if end is not None else time.monotonic() + 5)
    return into


@pytest.mark.parametrize("size", [1, 63, 64, 65, 4095, 16 * 1024 - 1, 16 * 1024, 100_003, 1 << 20])
def test_common_answers_land_in_place_and_keep_the_stream_in_step(server_and_pool, size):
    srv, pool = server_and_pool()
    buf = bytearray(size + 16)
    buf[size:] = b"\xEE" * 16
    for offset in (0, 5, 1000):  # several reads on one pooled connection: padding consumed each time
        read(pool, srv, offset, size, memoryview(buf)[:size])
        assert bytes(buf[:size]) == pattern(offset, size)
        assert buf[size:] == b"\xEE" * 16, "bytes after the destination must be left alone"
    assert srv.connections == 1 and pool.opened == 1


def test_an_answer_with_a_longer_control_part_takes_the_general_path(server_and_pool):
    long_control = pb.ErrorReply(message="x" * 100).SerializeToString()  # > 36 bytes: the bulk starts at 128
    srv, pool = server_and_pool(lambda n, req, rid: answer(Op.DATA_READ, rid, control=long_control,
                                                          bulk=pattern(req.offset, req.length)))
    for size in (10, 70_000):
        assert bytes(read(pool, srv, 3, size)) == pattern(3, size)
    assert pool.opened == 1


def test_an_error_status_raises_it_and_the_connection_serves_the_next_read(server_and_pool):
    def script(n, req, rid):
        if req.offset == 666:
            return answer(Op.DATA_READ, rid, status=tiffin.CODES["REPLICA_IS_GONE"],
                          control=pb.ErrorReply(message="segment re-mounted").SerializeToString())
        return answer(Op.DATA_READ, rid, bulk=pattern(req.offset, req.length))

    srv, pool = server_and_pool(script)
    with pytest.raises(TiffinError) as e:
        read(pool, srv, 666, 50_000)
    assert e.value.code == "REPLICA_IS_GONE" and "re-mounted" in str(e.value)
    assert bytes(read(pool, srv, 1, 50_000)) == pattern(1, 50_000)
    assert pool.opened == 1


def test_a_wrong_bulk_length_is_transfer_fail(server_and_pool):
    def script(n, req, rid):
        if req.offset == 1:  # fewer bytes than asked: the stream stays in step
            return answer(Op.DATA_READ, rid, bulk=pattern(req.offset, req.length - 1))
        if req.offset == 2:  # more bytes than the destination holds: the connection is closed
            return answer(Op.DATA_READ, rid, bulk=pattern(req.offset, req.length + 64))
        return answer(Op.DATA_READ, rid, bulk=pattern(req.offset, req.length))

    srv, pool = server_and_pool(script)
    with pytest.raises(TiffinError) as e:
        read(pool, srv, 1, 20_000)
    assert e.value.code == "TRANSFER_FAIL" and "19999 bytes where 20000" in str(e.value)
    assert bytes(read(pool, srv, 0, 20_000)) == pattern(0, 20_000)
    assert pool.opened == 1
    with pytest.raises(TiffinError) as e:
        read(pool, srv, 2, 20_000)
    assert e.value.code == "TRANSFER_FAIL" and "closed the connection" in str(e.value)
    assert bytes(read(pool, srv, 0, 20_000)) == pattern(0, 20_000)
    assert pool.opened == 2


def test_an_answer_to_another_request_is_refused(server_and_pool):
    srv, pool = server_and_pool(lambda n, req, rid: answer(Op.DATA_READ, rid + 1, bulk=pattern(0, req.length)))
    with pytest.raises(TiffinError) as e:
        read(pool, srv, 0, 4096)
    assert e.value.code == "RPC_FAIL" and "not waiting" in str(e.value)


def test_silence_ends_at_the_lease(server_and_pool):
    srv, pool = server_and_pool(lambda n, req, rid: None, timeout=30.0)
    t = time.monotonic()
    with pytest.raises(TiffinError) as e:
        read(pool, srv, 0, 1 << 20, end=t + 0.5)
    waited = time.monotonic() - t
    assert e.value.code == "LEASE_EXPIRED"
    assert 0.4 <= waited < 5, f"waited {waited:.2f} s for a lease of 0.5 s (the RPC timeout is 30 s)"
    with pytest.raises(TiffinError) as e:
        read(pool, srv, 0, 10, end=time.monotonic() - 0.001)
    assert e.value.code == "LEASE_EXPIRED", "a lease that already ended sends nothing"


def test_a_connection_the_server_closed_is_replaced_once(server_and_pool):
    def script(n, req, rid):
        if n == 1 and req.offset == 7:
            return "close"  # as a server that closed the idle connection (a restart)
        return answer(Op.DATA_READ, rid, bulk=pattern(req.offset, req.length))

    srv, pool = server_and_pool(script)
    assert bytes(read(pool, srv, 0, 100)) == pattern(0, 100)
    assert bytes(read(pool, srv, 7, 100)) == pattern(7, 100)  # sent again on a fresh connection
    assert pool.opened == 2 and srv.connections == 2


def test_an_empty_read_needs_no_bulk(server_and_pool):
    srv, pool = server_and_pool()
    assert len(read(pool, srv, 0, 0)) == 0


# ---------------------------------------------------------------------------------- 0-byte objects

def test_zero_byte_objects_are_read_and_written_without_a_node(cluster, tcp_client, prefix):
    """Whether the master stores empty values is its decision; the client moves no bytes for them: a
    0-byte location (here one the client cached, naming a node that does not exist) reads as empty
    without a connection, and a write of 0-byte replicas contacts no node."""
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    nowhere = f"127.0.0.1:{dead.getsockname()[1]}"
    dead.close()
    key = f"{prefix}empty"
    loc = ObjectInfo(key, 0, 1, 10_000, (Replica(1, "MEMORY", "COMPLETE", "seg", "node", nowhere, 0, 0, 3),))
    cache = tcp_client._locations
    cache.put(key, loc, time.monotonic_ns(), cache.stamp(key))
    opened = tcp_client.connections_opened()
    assert tcp_client.get(key) == b""
    assert tcp_client.get_into(key, bytearray(0)) == 0
    assert tcp_client.get_into(key, bytearray(5)) == 0
    assert [r.value for r in tcp_client.batch_get([key])] == [b""]
    assert [r.value for r in tcp_client.batch_get_into([key], [bytearray(1)])] == [0]
    assert tcp_client.exists(key)
    assert tcp_client._io.write([[loc.replicas[0]]], [B.Chunks([memoryview(b"")])]) == [None]
    assert tcp_client.connections_opened() == opened, "no node was contacted"
    assert tcp_client.transfer_counts()["network_reads"] == 0


def test_an_empty_value_round_trips(tcp_client, prefix):
    """An empty value is stored (the master gives it one allocation unit and 0-byte replicas) and reads
    back empty through get, get_into and batch_get, without any node transfer."""
    key = f"{prefix}empty"
    tcp_client.put(key, b"")
    assert tcp_client.exists(key)
    assert tcp_client.get(key) == b""
    assert tcp_client.get_into(key, bytearray(3)) == 0
    assert [r.value for r in tcp_client.batch_get([key])] == [b""]
    tcp_client.remove(key, force=True)
