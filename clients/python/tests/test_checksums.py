"""End-to-end checksums from Python: puts carry the value's CRC32C (when the C implementation is installed),
the master hands it back with the location, the same number the Java client computes and verifies."""

from __future__ import annotations

import os

import pytest

import tiffin
from tiffin import _checksum


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
