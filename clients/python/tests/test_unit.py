"""Pieces that need no cluster: frames, handshakes against fake servers, the same-host checks, the
tables shared with the Java engine, the generated protobuf code and the packaging."""

from __future__ import annotations

import glob
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import zipfile

import pytest

import tiffin
from tiffin import TiffinError, _frames, _wire
from tiffin._proto import tiffin_pb2 as pb
from tiffin._shm import SharedSegments, host_id, pid_namespace, process_start

from conftest import PKG_ROOT, REPO


# ---------------------------------------------------------------------------------- frames

def test_frame_layout_matches_the_java_codec():
    # the 28-byte header, control right after it; without bulk the frame is padded to 64 bytes
    assert _frames.HEADER.size == 28
    assert _frames.frame_size(0, 0) == 64 and _frames.frame_size(36, 0) == 64 and _frames.frame_size(37, 0) == 128
    # with bulk, the bulk starts on a 64-byte boundary and the frame ends on one
    assert _frames.bulk_offset(10, 1) == 64 and _frames.frame_size(10, 1) == 128
    assert _frames.bulk_offset(40, 100) == 128 and _frames.frame_size(40, 100) == 256
    assert _frames.padding(64) == 0 and _frames.padding(65) == 63


class FakeServer:
    """Answers the first request of each connection with ``answer(request_frame_bytes)``."""

    def __init__(self, answer):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.endpoint = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.answer = answer
        self.seen = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                head = b""
                while len(head) < 28:
                    part = conn.recv(28 - len(head))
                    if not part:
                        break
                    head += part
                if len(head) < 28:
                    continue
                length = struct.unpack(">i", head[:4])[0]
                rest = b""
                while len(rest) < length - 24:
                    rest += conn.recv(length - 24 - len(rest))
                self.seen.append(head + rest)
                out = self.answer(head + rest)
                if out is None:
                    time.sleep(5)
                    continue
                conn.sendall(out)
                time.sleep(0.2)

    def close(self):
        self.sock.close()


def response(opcode, rid, status, control: bytes) -> bytes:
    c = len(control)
    size = _frames.frame_size(c, 0)
    buf = bytearray(size)
    struct.pack_into(">iBBHqiii", buf, 0, size - 4, 2, 1, opcode, rid, status, c, 0)
    buf[28:28 + c] = control
    return bytes(buf)


def request_of(frame: bytes):
    length, version, kind, op, rid, status, c, b = struct.unpack_from(">iBBHqiii", frame)
    return op, rid, frame[28:28 + c]


def test_a_compact_batch_reply_is_read_with_the_requests_keys_and_its_segment_names():
    from tiffin._types import info_from
    names = [("seg-a", "node-a", "10.0.0.1:7000"), ("seg-b", "node-b", "10.0.0.2:7000")]
    m = pb.ObjectLocationMsg(size=4096, version=3, lease_ttl_ms=10000, crc32c=7, replicas=[
        pb.Replica(replica_id=1, type=1, status=2, offset=8192, size=4096, mount_epoch=9, segment_ref=2),
        pb.Replica(replica_id=2, type=1, status=2, segment="seg-c", node_id="node-c", endpoint="10.0.0.3:7000")])
    info = info_from(pb.ObjectLocationMsg.FromString(m.SerializeToString()), "the-key", names)
    assert info.key == "the-key" and info.size == 4096 and info.crc32c == 7
    assert [(r.segment, r.node_id, r.endpoint) for r in info.replicas] == [names[1], ("seg-c", "node-c",
                                                                                       "10.0.0.3:7000")]
    assert info.replicas[0].offset == 8192 and info.replicas[0].mount_epoch == 9
    m.replicas[0].segment_ref = 3
    with pytest.raises(TiffinError) as e:
        info_from(m, "the-key", names)
    assert e.value.code == "DESERIALIZE_FAIL" and "segment 3 of the 2" in str(e.value)


def test_handshake_sends_version_and_token_and_checks_the_answer():
    def answer(frame):
        op, rid, control = request_of(frame)
        hello = pb.Hello.FromString(control)
        assert op == 1 and hello.protocol_version == 2 and hello.token == "s3cret"
        return response(1, rid, 0, pb.HelloReply(protocol_version=3, server_version="9.9").SerializeToString())

    srv = FakeServer(answer)
    try:
        with pytest.raises(TiffinError) as e:
            tiffin.Client.connect(srv.endpoint, auth_token="s3cret")
        assert e.value.code == "INVALID_VERSION" and "protocol version 3" in str(e.value)
        assert srv.seen
    finally:
        srv.close()


def test_rejected_token_is_illegal_client():
    def answer(frame):
        _, rid, _ = request_of(frame)
        return response(1, rid, -601, pb.ErrorReply(message="rejected the auth token").SerializeToString())

    srv = FakeServer(answer)
    try:
        with pytest.raises(TiffinError) as e:
            tiffin.Client.connect(srv.endpoint)
        assert e.value.code == "ILLEGAL_CLIENT" and "auth token" in str(e.value)
    finally:
        srv.close()


def test_garbage_and_silence_fail_cleanly():
    srv = FakeServer(lambda frame: b"HTTP/1.1 400 Bad Request\r\n\r\n" + bytes(100))
    try:
        with pytest.raises(TiffinError) as e:
            tiffin.Client.connect(srv.endpoint)
        assert e.value.code == "RPC_FAIL" and "malformed" in str(e.value)
    finally:
        srv.close()
    silent = FakeServer(lambda frame: None)
    try:
        t = time.monotonic()
        with pytest.raises(TiffinError) as e:
            tiffin.Client.connect(silent.endpoint, connect_timeout=0.5)
        assert e.value.code == "RPC_FAIL" and time.monotonic() - t < 3
    finally:
        silent.close()


def test_master_of_another_store_version_is_refused():
    # a server that completes the handshake, then answers SERVICE_READY with another store version
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)

    def serve():
        conn, _ = lsock.accept()
        with conn:
            for _ in range(2):
                head = conn.recv(28, socket.MSG_WAITALL)
                length = struct.unpack(">i", head[:4])[0]
                rest = conn.recv(length - 24, socket.MSG_WAITALL)
                op, rid, _ = request_of(head + rest)
                if op == 1:
                    conn.sendall(response(1, rid, 0, pb.HelloReply(protocol_version=2).SerializeToString()))
                else:
                    conn.sendall(response(op, rid, 0, pb.ServiceReadyReply(version="0.2.0").SerializeToString()))
            time.sleep(0.2)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        with pytest.raises(TiffinError) as e:
            tiffin.Client.connect(f"127.0.0.1:{lsock.getsockname()[1]}")
        assert e.value.code == "INVALID_VERSION" and "0.2.0" in str(e.value)
    finally:
        lsock.close()


def test_bad_client_options():
    for kwargs in ({"timeout": 0}, {"timeout": "1"}, {"slice_size": 100}, {"slice_size": 65 << 20}):
        with pytest.raises(TiffinError) as e:
            tiffin.Client("127.0.0.1:1", **kwargs)
        assert e.value.code == "INVALID_PARAMS"


class FakeMaster:
    """A master that completes handshakes and answers SERVICE_READY as a leader (of ``term``) or a standby;
    a standby refuses every other call with UNAVAILABLE_IN_CURRENT_STATUS (-1010), a leader answers
    EXIST_KEY with ``exists`` True. Serves connections one after the other, many requests each."""

    def __init__(self, leader: bool, term: int):
        self.leader, self.term = leader, term
        self.calls = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.endpoint = f"127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._run, daemon=True).start()

    def _serve(self, conn):
        with conn:
            while True:
                head = conn.recv(28, socket.MSG_WAITALL)
                if len(head) < 28:
                    return
                rest = conn.recv(struct.unpack(">i", head[:4])[0] - 24, socket.MSG_WAITALL)
                op, rid, _ = request_of(head + rest)
                self.calls.append(op)
                out = self.answer(op, rid)
                if out is None:
                    return  # closed unanswered
                conn.sendall(out)

    def answer(self, op: int, rid: int):
        """The frame that answers request ``rid`` of ``op``; None closes the connection unanswered."""
        if op == 1:
            return response(1, rid, 0, pb.HelloReply(protocol_version=2).SerializeToString())
        if op == _frames.Op.SERVICE_READY:
            return response(op, rid, 0, pb.ServiceReadyReply(version=_wire.STORE_VERSION, leader=self.leader,
                                                             term=self.term).SerializeToString())
        if not self.leader:
            return response(op, rid, -1010, pb.ErrorReply(message="not the leader").SerializeToString())
        return response(op, rid, 0, pb.ExistReply(exists=True).SerializeToString())

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def close(self):
        self.sock.close()


def test_calls_find_the_leader_of_the_highest_term_among_the_listed_masters():
    standby, old, leader = FakeMaster(False, 3), FakeMaster(True, 2), FakeMaster(True, 4)
    try:
        with tiffin.Client.connect(f"{standby.endpoint}, {old.endpoint},{leader.endpoint}", timeout=2) as c:
            assert c.exists("k")  # the standby refuses; the client asks all three and follows the term-4 leader
            assert c._masters.leader == leader.endpoint and c._masters.discoveries == 1
            assert _frames.Op.EXIST_KEY in leader.calls and _frames.Op.EXIST_KEY not in old.calls
            assert c.exists("k") and c._masters.discoveries == 1  # stays with it
    finally:
        for m in (standby, old, leader):
            m.close()


class ScriptedRemoveMaster(FakeMaster):
    """A leader whose REMOVE answers follow ``script``: "lost" closes the connection unanswered (the answer
    is lost), a code name refuses with it, "OK" succeeds; the last answer repeats."""

    CODES = {"OBJECT_HAS_LEASE": -706, "OBJECT_NOT_FOUND": -704, "UNAVAILABLE_IN_CURRENT_STATUS": -1010,
             "OBJECT_HAS_REPLICATION_TASK": -708}

    def __init__(self, script):
        super().__init__(True, 1)
        self.script, self.removes = script, 0

    def answer(self, op: int, rid: int):
        if op in (1, _frames.Op.SERVICE_READY):
            return super().answer(op, rid)
        answer = self.script[min(self.removes, len(self.script) - 1)]
        self.removes += 1
        if answer == "lost":
            return None
        if answer == "OK":
            return response(op, rid, 0, b"")
        return response(op, rid, self.CODES[answer], pb.ErrorReply(message=answer).SerializeToString())


# "lost" twice: the pool repeats a call once on a fresh connection when a reused one closed unanswered
# (an idle connection the server dropped); a master that died refuses that one too
@pytest.mark.parametrize("script,outcome", [
    (["lost", "lost", "OBJECT_HAS_LEASE", "OBJECT_HAS_LEASE", "OK"], None),  # carried through the lease
    (["lost", "lost", "OBJECT_NOT_FOUND"], None),  # the lost attempt removed it
    (["OBJECT_HAS_LEASE"], "OBJECT_HAS_LEASE"),  # a first refusal is the answer
    (["UNAVAILABLE_IN_CURRENT_STATUS", "OBJECT_HAS_LEASE"], "OBJECT_HAS_LEASE"),  # refused, so it did not run
    (["UNAVAILABLE_IN_CURRENT_STATUS", "OBJECT_NOT_FOUND"], "OBJECT_NOT_FOUND"),
    # a node copies the object to SSD or back: asked again for about 0.6 s (five pauses), then the refusal
    (["OBJECT_HAS_REPLICATION_TASK", "OBJECT_HAS_REPLICATION_TASK", "OK"], None),
    (["OBJECT_HAS_REPLICATION_TASK"] * 6, "OBJECT_HAS_REPLICATION_TASK"),
])
def test_a_remove_whose_answer_was_lost_is_carried_through_a_lease_and_counts_a_gone_key_as_done(script, outcome):
    master, other = ScriptedRemoveMaster(script), FakeMaster(False, 0)
    try:
        with tiffin.Client.connect(f"{master.endpoint},{other.endpoint}", timeout=2, failover_timeout=5) as c:
            if outcome is None:
                c.remove("k")
            else:
                with pytest.raises(TiffinError) as e:
                    c.remove("k")
                assert e.value.code == outcome
            assert master.removes == len(script)
    finally:
        master.close()
        other.close()


def test_a_remove_the_pool_sent_again_after_its_connection_closed_unanswered_counts_a_gone_key_as_done():
    # one master: no failover; the master ran the first attempt and closed the reused connection before answering
    master = ScriptedRemoveMaster(["lost", "OBJECT_NOT_FOUND"])
    try:
        with tiffin.Client.connect(master.endpoint, timeout=2) as c:
            c.remove("k")
            assert master.removes == 2
    finally:
        master.close()


class ScriptedBatchRemoveMaster(FakeMaster):
    """A leader that closes the connection unanswered at its first BATCH_REMOVE and answers the later ones
    with ``codes`` (per key)."""

    def __init__(self, codes):
        super().__init__(True, 1)
        self.codes, self.batches = codes, 0

    def answer(self, op: int, rid: int):
        if op != _frames.Op.BATCH_REMOVE:
            return super().answer(op, rid)
        self.batches += 1
        if self.batches == 1:
            return None
        return response(op, rid, 0, pb.BatchCodesReply(codes=self.codes).SerializeToString())


def test_a_batch_remove_the_pool_sent_again_counts_the_keys_it_finds_gone_as_removed():
    master = ScriptedBatchRemoveMaster([-704, -706])  # OBJECT_NOT_FOUND, OBJECT_HAS_LEASE
    try:
        with tiffin.Client.connect(master.endpoint, timeout=2) as c:
            results = c.batch_remove(["gone", "leased"])
            assert [r.code for r in results] == ["OK", "OBJECT_HAS_LEASE"]
            assert master.batches == 2
    finally:
        master.close()


class ScriptedBatchCodesMaster(FakeMaster):
    """A leader whose BATCH_REMOVE answers are the code lists of ``script`` in turn (the last one repeats)."""

    def __init__(self, script):
        super().__init__(True, 1)
        self.script, self.requests = script, []

    def answer(self, op: int, rid: int):
        if op != _frames.Op.BATCH_REMOVE:
            return super().answer(op, rid)
        codes = self.script[min(len(self.requests), len(self.script) - 1)]
        self.requests.append(rid)
        return response(op, rid, 0, pb.BatchCodesReply(codes=codes).SerializeToString())


def test_a_batch_remove_asks_again_for_the_keys_a_node_was_copying_to_ssd_and_only_those():
    # -708 OBJECT_HAS_REPLICATION_TASK, -704 OBJECT_NOT_FOUND; the second answer is for the two keys asked again
    master = ScriptedBatchCodesMaster([[-708, -704, -708], [0, -708], [0]])
    try:
        with tiffin.Client.connect(master.endpoint, timeout=2) as c:
            results = c.batch_remove(["a", "missing", "b"])
            assert [r.code for r in results] == ["OK", "OBJECT_NOT_FOUND", "OK"]
            assert len(master.requests) == 3
    finally:
        master.close()


def test_a_remove_whose_answer_was_lost_and_whose_object_stays_leased_ends_refused_saying_so():
    master, other = ScriptedRemoveMaster(["lost", "lost", "OBJECT_HAS_LEASE"]), FakeMaster(False, 0)
    try:
        with tiffin.Client.connect(f"{master.endpoint},{other.endpoint}", timeout=2, failover_timeout=0.6) as c:
            with pytest.raises(TiffinError) as e:
                c.remove("k")
            assert e.value.code == "OBJECT_HAS_LEASE"
            assert "an earlier attempt of this remove, whose answer was lost, may have removed" in str(e.value)
            assert master.removes > 4  # repeated while the lease held
    finally:
        master.close()
        other.close()


def test_a_call_with_no_leader_gives_up_after_the_failover_timeout():
    standby = FakeMaster(False, 1)
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))  # bound, not listening: refused
        try:
            with tiffin.Client.connect(f"{standby.endpoint},127.0.0.1:{dead.getsockname()[1]}", timeout=1,
                                       failover_timeout=0.8) as c:
                t = time.monotonic()
                with pytest.raises(TiffinError) as e:
                    c.exists("k")
                assert e.value.code == "UNAVAILABLE_IN_CURRENT_STATUS" and 0.8 <= time.monotonic() - t < 5
        finally:
            standby.close()


def test_master_lists_are_checked():
    from tiffin._masters import parse_masters
    assert parse_masters(" a:1, b:2 ,a:1") == ["a:1", "b:2"]
    for bad in (" , ", "a:1,nope", "", None):
        with pytest.raises(TiffinError) as e:
            parse_masters(bad)
        assert e.value.code == "INVALID_PARAMS"
    with pytest.raises(TiffinError) as e:
        tiffin.Client("127.0.0.1:1", failover_timeout=0)
    assert e.value.code == "INVALID_PARAMS"


def test_put_ids_are_non_zero_64_bit_and_commit_records_follow_the_grant():
    from tiffin._transfers import commit_record as _commit, new_put_id as _new_put_id
    from tiffin.client import _options
    ids = {_new_put_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(0 < i < 1 << 64 for i in ids)
    opts = _options(2, None, True, False, False)
    assert _commit("k", 10, pb.PutStartReply(version=7, commit_on_nodes=False), 5, opts) is None
    rec = _commit("k", 10, pb.PutStartReply(version=7, commit_on_nodes=True), 5, opts)
    assert (rec.key, rec.size, rec.version, rec.put_id, rec.soft_pin, rec.hard_pin) == ("k", 10, 7, 5, True, False)
    assert not rec.yields
    during = _commit("k", 10, pb.PutStartResult(version=8, commit_on_nodes=True, yields=True), 5, opts)
    assert during.yields  # granted while the master recovered: at a takeover any other record of the key wins


# ---------------------------------------------------------------------------------- errors

def test_error_has_code_name_value_and_hint():
    e = TiffinError("OBJECT_NOT_FOUND")
    assert e.code == "OBJECT_NOT_FOUND" and e.value == -704 and "put it first" in str(e)
    assert TiffinError("NO_SUCH_CODE").code == "INTERNAL_ERROR"
    assert tiffin.errors.code_name(-12345) == "INTERNAL_ERROR"
    import pickle
    again = pickle.loads(pickle.dumps(TiffinError("RPC_FAIL", "x")))
    assert again.code == "RPC_FAIL" and again.message == "x"


def _java(path_glob):
    found = glob.glob(os.path.join(REPO, "**", path_glob), recursive=True)
    found = [f for f in found if "/target/" not in f]
    if not found:
        pytest.skip(f"{path_glob} not in this checkout")
    with open(found[0]) as f:
        return f.read()


def test_error_codes_match_the_java_enum():
    src = _java("io/tiffin/api/ErrorCode.java")
    java = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+([A-Z0-9_]+)\((-?\d+), \"", src, re.M)}
    assert java and java == tiffin.CODES


def test_versions_match_the_java_engine():
    src = _java("io/tiffin/core/transport/TiffinVersion.java")
    assert f'VERSION = "{_wire.STORE_VERSION}"' in src
    assert f"PROTOCOL_VERSION = {_frames.PROTOCOL_VERSION};" in src
    ops = _java("io/tiffin/core/transport/Opcode.java")
    java_ops = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+([A-Z_]+)\((\d+)\)", ops, re.M)}
    for value, name in _frames.Op.NAMES.items():
        assert java_ops[name] == value, name


def test_generated_protobuf_code_is_up_to_date(tmp_path):
    proto_dir = os.path.join(REPO, "engine-core", "src", "main", "proto")
    if not os.path.exists(os.path.join(proto_dir, "tiffin.proto")):
        pytest.skip("engine-core/src/main/proto/tiffin.proto not in this checkout")
    protoc = shutil.which("protoc")
    if protoc is None:
        pytest.skip("protoc not installed (Debian: protobuf-compiler)")
    out = subprocess.run([protoc, "--version"], capture_output=True, text=True).stdout
    if "3.21." not in out:
        pytest.skip(f"the committed file comes from protoc 3.21 (Debian 12); this is {out.strip()}")
    tmp = str(tmp_path)
    subprocess.run([protoc, "-I", proto_dir, f"--python_out={tmp}", os.path.join(proto_dir, "tiffin.proto")], check=True)
    with open(os.path.join(tmp, "tiffin_pb2.py")) as f, \
            open(os.path.join(PKG_ROOT, "tiffin", "_proto", "tiffin_pb2.py")) as g:
        assert f.read() == g.read(), ("tiffin/_proto/tiffin_pb2.py is stale: run clients/python/tools/gen_proto.sh "
                                      "after changing tiffin.proto")


# ---------------------------------------------------------------------------------- same-host checks

class Info:
    def __init__(self, **kw):
        self.shared_memory_path = ""
        self.host_id = host_id()
        self.pid_namespace = pid_namespace()
        self.pid = os.getpid()
        self.size = 0
        self.file_size = 0
        self.mount_epoch_offset = 0
        self.device = self.inode = 0
        self.__dict__.update(kw)


@pytest.fixture()
def segment_file(tmp_path):
    size = 8192
    path = tmp_path / "tiffin-test.seg"
    with open(path, "wb") as f:
        f.write(bytes(range(256)) * (size // 256) + struct.pack("=Q", 7) + bytes(4096 - 8))
    st = os.stat(path)
    return dict(shared_memory_path=str(path), size=size, file_size=size + 4096, mount_epoch_offset=size,
                device=st.st_dev, inode=st.st_ino)


def test_shared_segment_is_mapped_only_when_every_check_passes(segment_file):
    ok = SharedSegments(lambda ep, seg: Info(**segment_file))
    view = ok.slice("n:1", "seg", 256, 256, False)
    assert bytes(view) == bytes(range(256))
    assert ok.mount_epoch("seg") == 7 and ok.mapped() == ["seg"]
    assert ok.slice("n:1", "seg", 8000, 500, False) is None  # outside the segment
    del view
    ok.close()
    assert ok.slice("n:1", "seg", 0, 1, False) is None
    bad = [dict(host_id="another-boot-id"), dict(pid_namespace="pid:[1]"), dict(inode=segment_file["inode"] + 1),
           dict(file_size=segment_file["file_size"] + 1), dict(shared_memory_path=""), dict(pid=2 ** 22 + 12345),
           dict(mount_epoch_offset=12)]
    for change in bad:
        s = SharedSegments(lambda ep, seg, change=change: Info(**{**segment_file, **change}))
        assert s.slice("n:1", "seg", 0, 16, False) is None, change
        assert s.mapped() == []


def _silent_peer_connection(rpc_timeout: float):
    """(a Connection set up as :meth:`tiffin._wire.Connection.open` leaves it, its peer socket, which never
    answers)."""
    ours, theirs = socket.socketpair()
    c = _wire.Connection(ours, "127.0.0.1:9", _wire.Settings(rpc_timeout=rpc_timeout))
    if c._kernel:
        ours.settimeout(None)
        c._timeout = None
    c._set_timeout(rpc_timeout)
    return c, theirs


def test_a_wait_the_read_lease_bounded_ends_lease_expired_even_a_little_before_the_lease():
    """A connection keeps a socket timeout within 0.25 s of what a wait needs (fewer system calls), so a wait the
    lease bounds may time out a little before the lease ends: that is the lease's end (LEASE_EXPIRED, the node
    waited on), not RPC_TIMEOUT, as for a DATA_READ_SSD of a slow node under a 200 ms lease."""
    ssd = (_frames.Op.DATA_READ_SSD, pb.SsdReadRequest(keys=["k"]), pb.SsdReadReply, None, None)
    c, peer = _silent_peer_connection(30.0)
    try:
        c._set_timeout(0.05)  # left by an earlier wait near the end of its lease
        t = time.monotonic()
        with pytest.raises(TiffinError) as e:
            c.call(*ssd, time.monotonic() + 0.2)
        assert e.value.code == "LEASE_EXPIRED" and e.value.node_waited, e.value
        assert time.monotonic() - t < 1.0
    finally:
        c.close()
        peer.close()
    c, peer = _silent_peer_connection(0.1)
    try:
        with pytest.raises(TiffinError) as e:  # bounded by the RPC timeout, not the lease: RPC_TIMEOUT
            c.call(*ssd, time.monotonic() + 5)
        assert e.value.code == "RPC_TIMEOUT", e.value
    finally:
        c.close()
        peer.close()


def test_failed_segment_info_is_retried_after_a_pause(segment_file):
    calls = []

    def info(ep, seg):
        calls.append(seg)
        if len(calls) == 1:
            raise TiffinError("RPC_FAIL", "node down")
        return Info(**segment_file)

    s = SharedSegments(info, retry_s=0.2)
    assert s.slice("n:1", "seg", 0, 8, False) is None
    assert s.slice("n:1", "seg", 0, 8, False) is None and len(calls) == 1  # paused: not asked again
    time.sleep(0.25)
    assert s.slice("n:1", "seg", 0, 8, False) is not None and len(calls) == 2
    s.close()


def test_writes_need_a_live_owner_and_sweeps_drop_gone_files(segment_file):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        s = SharedSegments(lambda ep, seg: Info(**{**segment_file, "pid": child.pid}))
        assert s.slice("n:1", "seg", 0, 8, True) is not None
        child.kill()
        child.wait()
        time.sleep(0.03)
        assert s.slice("n:1", "seg", 0, 8, True) is None  # dead owner: no write through the mapping
        assert s.slice("n:1", "seg", 0, 8, False) is not None  # reads need no liveness
        assert s.sweep() == 1 and s.mapped() == []
    finally:
        child.kill()


def test_process_start_identifies_processes():
    assert process_start(os.getpid()) is not None
    assert process_start(2 ** 22 + 54321) is None


# ---------------------------------------------------------------------------------- packaging

def test_wheel_builds_offline_and_installs(tmp_path):
    sys.path.insert(0, PKG_ROOT)
    import _tiffin_build
    name = _tiffin_build.build_wheel(str(tmp_path))
    assert name == f"tiffin-{tiffin.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as z:
        names = z.namelist()
        meta = z.read(f"tiffin-{tiffin.__version__}.dist-info/METADATA").decode()
        record = z.read(f"tiffin-{tiffin.__version__}.dist-info/RECORD").decode()
    for f in ("tiffin/__init__.py", "tiffin/_proto/tiffin_pb2.py", "tiffin/mooncake.py", "tiffin/bench.py",
              "tiffin/adapters/sglang.py", "tiffin/adapters/lmcache.py"):
        assert f in names and f in record
    assert not any("__pycache__" in n or n.startswith("tests/") for n in names)
    assert "Requires-Dist: protobuf>=3.20" in meta and "Requires-Python: >=3.11" in meta
    try:
        import pip  # noqa: F401
    except ImportError:
        pytest.skip("pip not installed (python3-pip); the wheel was checked above")
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir",
                        "--disable-pip-version-check", "--target", str(target), PKG_ROOT],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-c", "import tiffin, tiffin.mooncake, tiffin.adapters.sglang; "
                        "print(tiffin.__file__)"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(target)}, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(target))


def test_distribution_ships_the_package():
    dist = os.environ.get("PYTEST_TIFFIN_DIST")
    if not dist:
        from conftest import DIST
        dist = DIST
    if not dist:
        pytest.skip("no built distribution")
    lib = os.path.join(dist, "lib", "python")
    if not os.path.isdir(lib) and not os.environ.get("PYTEST_TIFFIN_DIST"):
        pytest.skip(f"{lib} missing: this distribution was built before the Python client was added")
    assert os.path.isfile(os.path.join(lib, "tiffin", "_proto", "tiffin_pb2.py"))
    r = subprocess.run([sys.executable, "-c", "import tiffin, tiffin.mooncake; print(tiffin.__file__)"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": lib}, cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(lib)
