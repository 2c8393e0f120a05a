"""End-to-end checksums from Python: puts carry the value's CRC32C (when the C implementation is installed),
the master hands it back with the location, the same number the Java client computes and verifies; a client made
with ``verify_checksums`` checks what it reads, skips a corrupt copy for a whole one and names it when none is."""

from __future__ import annotations

import contextlib
import glob
import os
import time

import pytest

import tiffin
from tiffin import _buffers, _checksum, _transfers
from tiffin._types import ObjectInfo, Replica

needs_crc = pytest.mark.skipif(not _checksum.FAST, reason="the crc32c module (python3-crc32c) is not installed")


def test_the_pure_python_crc32c_is_the_castagnoli_checksum():
    assert _checksum.crc32c_pure(b"123456789") == 0xE3069283  # the standard check value of CRC-32C
    assert _checksum.crc32c_pure(b"") == 0
    assert _checksum.crc32c_pure(b"6789", _checksum.crc32c_pure(b"12345")) == 0xE3069283


@pytest.mark.skipif(not _checksum.FAST, reason="the crc32c module (python3-crc32c) is not installed")
def test_the_c_implementation_agrees_with_the_pure_one_across_parts():
    data = os.urandom(100_003)
    parts = [memoryview(data)[:7], memoryview(data)[7:65_536], memoryview(data)[65_536:]]
    assert _checksum.of_parts(parts) == _checksum.crc32c_pure(data)


def test_without_the_c_implementation_puts_carry_no_checksum(monkeypatch):
    monkeypatch.setattr(_checksum, "_fast", None)
    assert _checksum.of_parts([b"abc"]) == 0


@pytest.mark.skipif(not _checksum.FAST, reason="the crc32c module (python3-crc32c) is not installed")
def test_puts_carry_the_checksum_the_master_hands_to_readers(cluster, tcp_client, prefix):
    value = os.urandom(300_000)
    tcp_client.put(prefix + "one", value)
    tcp_client.put_parts(prefix + "parts", value[:1000], value[1000:])
    assert tcp_client.batch_put([prefix + "b1", prefix + "b2"], [value, value[:5]])[0].code == "OK"
    expected = {"one": value, "parts": value, "b1": value, "b2": value[:5]}
    with tiffin.Client.connect(cluster.master, shared_memory=False) as reader:
        for name, v in expected.items():
            info = reader.locate(prefix + name)
            assert info.crc32c == _checksum.of_parts([v]) != 0, name
            assert reader.get(prefix + name) == v


def test_verify_setting_reads_the_environment_and_refuses_what_it_cannot_honour(monkeypatch):
    monkeypatch.delenv("TIFFIN_CLIENT_VERIFY_CHECKSUMS", raising=False)
    monkeypatch.setattr(_checksum, "_fast", object())  # as if the C implementation were installed
    assert _checksum.verify_setting(None) is False  # off by default
    assert _checksum.verify_setting(True) is True
    for text, want in (("true", True), ("1", True), ("FALSE", False), ("0", False), ("", False)):
        monkeypatch.setenv("TIFFIN_CLIENT_VERIFY_CHECKSUMS", text)
        assert _checksum.verify_setting(None) is want, text
    assert _checksum.verify_setting(False) is False  # the argument wins over the environment
    monkeypatch.setenv("TIFFIN_CLIENT_VERIFY_CHECKSUMS", "maybe")
    with pytest.raises(tiffin.TiffinError, match="TIFFIN_CLIENT_VERIFY_CHECKSUMS = 'maybe'") as e:
        _checksum.verify_setting(None)
    assert e.value.code == "INVALID_PARAMS"
    with pytest.raises(tiffin.InvalidArgument, match="verify_checksums = 'yes'"):
        _checksum.verify_setting("yes")
    with pytest.raises(tiffin.InvalidArgument):
        tiffin.Client("127.0.0.1:1", verify_checksums=1)  # refused before anything connects
    monkeypatch.setattr(_checksum, "_fast", None)
    with pytest.raises(tiffin.TiffinError, match="python3-crc32c") as e:
        _checksum.verify_setting(True)
    assert e.value.code == "INVALID_PARAMS"
    # Mooncake's API reports a bad setting from the environment as its setup's code, before connecting
    from tiffin import mooncake
    monkeypatch.setattr(_checksum, "_fast", object())
    monkeypatch.setenv("TIFFIN_CLIENT_VERIFY_CHECKSUMS", "maybe")
    store = mooncake.MooncakeDistributedStore()
    assert store.setup("localhost", "P2PHANDSHAKE", 0, 0, "tcp", "", "127.0.0.1:1") == -600


@contextlib.contextmanager
def corrupted(cluster, replica):
    """Overwrites 16 bytes in the middle of ``replica`` (a copy on the shared-memory node) through its segment file,
    as a bit flip or a writer within its grant could change them in the node's memory; puts them back after."""
    path, = glob.glob(os.path.join(cluster.shm_dir, f"*-{replica.segment}.seg"))
    at = replica.offset + replica.size // 2
    with open(path, "r+b") as f:
        f.seek(at)
        whole = f.read(16)
        f.seek(at)
        f.write(bytes([whole[0] ^ 0xFF]) + b"\x5a" * 15)
    try:
        yield
    finally:
        with open(path, "r+b") as f:
            f.seek(at)
            f.write(whole)


def every_read(c, key: str, size: int) -> list:
    """The bytes of ``key`` through each whole-object read: get, get_into, batch_get, batch_get_into."""
    buf = bytearray(size)
    assert c.get_into(key, buf) == size
    bufs = [bytearray(size)]
    assert c.batch_get_into([key], bufs)[0].code == "OK"
    return [c.get(key), bytes(buf), c.batch_get([key])[0].unwrap(), bytes(bufs[0])]


@needs_crc
def test_a_verifying_reader_skips_a_corrupt_copy_for_a_whole_one(cluster, prefix):
    value = os.urandom(300_000)
    key = prefix + "k"
    with tiffin.Client.connect(cluster.master, shared_memory=False) as writer:
        writer.put(key, value, replicas=2, preferred_segment=cluster.shm_segment)
        loc = writer.locate(key)
    assert [r.segment for r in loc.replicas] == [cluster.shm_segment, cluster.tcp_segment], \
        "the preferred segment's copy is listed first"
    with corrupted(cluster, loc.replicas[0]):
        with tiffin.Client.connect(cluster.master, shared_memory=False) as trusting:
            assert trusting.get(key) != value, "without verification the corrupt first copy is read as it is"
        with tiffin.Client.connect(cluster.master, shared_memory=False, verify_checksums=True) as tcp, \
                tiffin.Client.connect(cluster.master, verify_checksums=True) as same_host:
            for c, name in ((tcp, "over the network"), (same_host, "beside a mapped corrupt copy")):
                for _ in range(2):  # the second time through the location cache and the read hint
                    assert every_read(c, key, len(value)) == [value] * 4, name
            counts = same_host.transfer_counts()
            assert counts["shared_reads"] == 0 and counts["network_reads"] >= 8, counts


@needs_crc
def test_a_verifying_reader_names_the_copy_when_none_is_whole(cluster, prefix, monkeypatch):
    value = os.urandom(200_000)
    key = prefix + "k"
    with tiffin.Client.connect(cluster.master, shared_memory=False) as writer:
        writer.put(key, value, preferred_segment=cluster.shm_segment)
        loc = writer.locate(key)
    r, = loc.replicas
    assert r.segment == cluster.shm_segment
    monkeypatch.setenv("TIFFIN_CLIENT_VERIFY_CHECKSUMS", "true")  # as a Mooncake-API or LMCache process sets it
    with tiffin.Client.connect(cluster.master, shared_memory=False) as tcp, \
            tiffin.Client.connect(cluster.master) as same_host:
        with corrupted(cluster, r):
            for c in (tcp, same_host):
                with pytest.raises(tiffin.TiffinError) as e:
                    c.get(key)
                assert e.value.code == "CHECKSUM_MISMATCH"
                for part in (f"key {key}", f"node {r.node_id} ({r.endpoint}), segment {r.segment}, offset {r.offset}",
                             "CRC32C", f"0x{loc.crc32c:08x}", "corrupt"):
                    assert part in str(e.value), (part, str(e.value))
                assert c.batch_get([key])[0].code == "CHECKSUM_MISMATCH"
                assert c.batch_get_into([key], [bytearray(len(value))])[0].code == "CHECKSUM_MISMATCH"
                with pytest.raises(tiffin.TiffinError, match="CHECKSUM_MISMATCH"):
                    c.get_into(key, bytearray(len(value)))
        for c in (tcp, same_host):  # the same reads once the bytes are whole again: it was the bytes
            assert every_read(c, key, len(value)) == [value] * 4


@needs_crc
def test_objects_written_without_a_checksum_are_read_unverified(cluster, prefix, monkeypatch):
    value = os.urandom(50_000)
    key = prefix + "k"
    with tiffin.Client.connect(cluster.master, shared_memory=False) as writer:
        monkeypatch.setattr(_checksum, "of_parts", lambda parts: 0)  # a writer that sends none
        writer.put(key, value, preferred_segment=cluster.shm_segment)
        monkeypatch.undo()
        loc = writer.locate(key)
    assert loc.crc32c == 0
    with tiffin.Client.connect(cluster.master, shared_memory=False, verify_checksums=True) as reader:
        assert reader.get(key) == value
        with corrupted(cluster, loc.replicas[0]):
            assert reader.get(key) != value, "nothing to verify against: read as it is"


class _SsdNode:
    """A pool of one node that answers DATA_READ_SSD with ``data``: what the SSD path of reads sees of a node."""

    def __init__(self, data: bytes):
        self.data = data

    def call(self, endpoint, op, request, reply_cls, out, into, resent=None, end=None, got=None):
        into[0][:len(self.data)] = self.data
        if got is not None:
            got[0] = len(self.data)
        return reply_cls(sizes=[len(self.data)])


@needs_crc
def test_an_ssd_copy_that_fails_its_checksum_is_named():
    value = os.urandom(10_000)
    bad = value[:5000] + bytes([value[5000] ^ 1]) + value[5001:]
    disk = Replica(1, "LOCAL_DISK", "COMPLETE", "", "node-a", "10.0.0.1:7000", 0, len(value), 0)
    loc = ObjectInfo("k", len(value), 3, 10_000, (disk,), _checksum.of_parts([value]))
    for verify, data, code in ((True, value, None), (True, bad, "CHECKSUM_MISMATCH"), (False, bad, None)):
        counts = {"ssd_reads": 0}
        io = _transfers.Transfers(_SsdNode(data), None, 16 << 20, counts, verify)
        dst = bytearray(len(value))
        err = io.read_many([loc], [_buffers.Chunks([memoryview(dst)])], time.monotonic())[0]
        assert (err.code if err else None) == code, (verify, err)
        assert counts["ssd_reads"] == 1
        if code:
            assert "the bytes read from SSD copy on node node-a (10.0.0.1:7000) have CRC32C" in str(err)
        else:
            assert bytes(dst) == data
