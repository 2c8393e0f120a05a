"""python3 -m tiffin.bench, briefly, against the test cluster (and a redis-server when installed)."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys

import pytest

from conftest import PKG_ROOT
from tiffin import TiffinError, _checksum, bench


def test_bench_writes_the_csv_columns(cluster, tmp_path, capsys):
    out = tmp_path / "bench.csv"
    redis = ["--redis", "auto"] if shutil.which("redis-server") and _has_redis_py() else []
    assert bench.main(["--master", cluster.master, "--value-size", "4KiB,1MiB", "--duration", "0.2",
                       "--threads", "1,2", "--keys", "2", "--csv", str(out)] + redis) == 0
    rows = list(csv.DictReader(open(out)))
    assert list(rows[0].keys()) == bench.COLUMNS
    seen = {(r["client"], r["operation"], int(r["value_size"]), int(r["threads"])) for r in rows}
    for client in ("tiffin", "tiffin-shm"):
        for op in ("put", "get", "get_into"):
            for size in (4096, 1 << 20):
                for t in (1, 2):
                    assert (client, op, size, t) in seen
    if redis:
        assert ("redis-py", "get", 1 << 20, 2) in seen and ("redis-py", "put", 4096, 1) in seen
    assert all(float(r["ops_per_sec"]) > 0 and float(r["p99_us"]) >= float(r["p50_us"]) > 0 for r in rows)
    assert "summary" in capsys.readouterr().out


@pytest.mark.skipif(not _checksum.FAST,
                    reason="the crc32c module (python3-crc32c) is not installed")
def test_bench_measures_the_verifying_client_beside_the_plain_one(cluster, tmp_path, capsys):
    out = tmp_path / "verify.csv"
    assert bench.main(["--master", cluster.master, "--value-size", "1MiB", "--duration", "0.2", "--keys", "2",
                       "--clients", "tiffin,tiffin-verify", "--operations", "get_into", "--csv", str(out)]) == 0
    rows = {(r["client"], r["operation"]): r for r in csv.DictReader(open(out))}
    assert set(rows) == {("tiffin", "get_into"), ("tiffin-verify", "get_into")}
    assert all(float(r["ops_per_sec"]) > 0 for r in rows.values())
    assert "tiffin-verify get_into / tiffin get_into = " in capsys.readouterr().out


def _has_redis_py():
    try:
        import redis  # noqa: F401
        return True
    except ImportError:
        return False


def test_bench_command_line_help_and_errors():
    r = subprocess.run([sys.executable, "-m", "tiffin.bench", "--help"], capture_output=True, text=True, cwd=PKG_ROOT)
    assert r.returncode == 0 and "--value-size" in r.stdout and "--redis" in r.stdout
    assert "--location-cache-ttl" in r.stdout
    r = subprocess.run([sys.executable, "-m", "tiffin.bench", "--master", "127.0.0.1:1", "--value-size", "4XB"],
                       capture_output=True, text=True, cwd=PKG_ROOT)
    assert r.returncode != 0 and "not a size" in r.stderr
    with pytest.raises(Exception) as e:
        bench.main(["--master", "127.0.0.1:1", "--duration", "0.1"])
    assert getattr(e.value, "code", None) == "RPC_FAIL"


def test_transient_failures_are_reported_and_others_end_the_run():
    def flaky(t, i):
        if i in (3, 5):  # two failures in the whole run
            raise TiffinError("LEASE_EXPIRED", "stalled")

    r = bench.run_interleaved({"flaky": flaky}, 1, 0.1, 10, slice_s=0.05)["flaky"]
    assert len(r["failures"]) == 2 and r["failures"][0].code == "LEASE_EXPIRED"
    assert r["ops_per_sec"] > 0

    def always(t, i):
        raise TiffinError("RPC_TIMEOUT", "stalled")

    with pytest.raises(TiffinError) as e:
        bench.run_interleaved({"always": always}, 2, 0.1, 10, slice_s=0.05)
    assert e.value.code == "RPC_TIMEOUT"

    def broken(t, i):
        raise TiffinError("OBJECT_NOT_FOUND", "gone")

    with pytest.raises(TiffinError) as e:
        bench.run_interleaved({"broken": broken}, 1, 0.1, 10)
    assert e.value.code == "OBJECT_NOT_FOUND"
