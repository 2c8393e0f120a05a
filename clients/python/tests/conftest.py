"""Fixtures that run real Tiffin processes from the built distribution.

The distribution is ``$PYTEST_TIFFIN_DIST`` (the unpacked tarball: bin/, lib/, ...; the Maven build sets it)
or else ``distribution/target/tiffin-*/tiffin-*`` of this repository. Without either, the tests that
need a cluster are skipped with a message saying how to build it; with ``PYTEST_TIFFIN_DIST`` set to a
missing directory they fail.

Processes are started with ``bin/tiffin master|node``, found through the lines they print, and
stopped with real signals (SIGTERM, then SIGKILL) at the end; tests kill them with SIGKILL/SIGSTOP.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(PKG_ROOT))
sys.path.insert(0, PKG_ROOT)

import tiffin  # noqa: E402

MiB = 1 << 20


def find_dist():
    env = os.environ.get("PYTEST_TIFFIN_DIST")
    if env:
        if not os.path.isfile(os.path.join(env, "bin", "tiffin")):
            pytest.fail(f"PYTEST_TIFFIN_DIST={env} holds no bin/tiffin; build the distribution first")
        return env
    found = sorted(glob.glob(os.path.join(REPO, "distribution", "target", "tiffin-*", "tiffin-*", "bin", "tiffin")))
    return os.path.dirname(os.path.dirname(found[-1])) if found else None


DIST = find_dist()
LOG_ROOT = tempfile.mkdtemp(prefix="tiffin-pytest-")
_started: list = []


def _require_dist():
    if DIST is None:
        pytest.skip("no built distribution: run ./mvnw -B -ntp -DskipTests package (or set PYTEST_TIFFIN_DIST)")


class Proc:
    """One Tiffin process started from the distribution; its output goes to a log file."""

    def __init__(self, name: str, args: list, ready: str, env_extra=None, timeout: float = 90.0):
        self.name = name
        self.log_path = os.path.join(LOG_ROOT, f"{name}-{len(_started)}.log")
        # TIFFIN_* variables are configuration keys to the processes, which refuse unknown ones
        env = {k: v for k, v in os.environ.items() if k not in ("TIFFIN_MASTER_ADDRESS",)}
        env["TIFFIN_LOG_DIR"] = os.path.join(LOG_ROOT, "logs")
        # Client-compiler only and a small heap: the test JVMs share two loaded cores.
        env.setdefault("TIFFIN_OPTS", "-XX:TieredStopAtLevel=1 -Xmx384m -Xss512k")
        env.update(env_extra or {})
        self.log = open(self.log_path, "w+b")
        self.proc = subprocess.Popen([os.path.join(DIST, "bin", "tiffin")] + args, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env, start_new_session=True)
        _started.append(self)
        self.match = self._wait_for(ready, timeout)

    def output(self) -> str:
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def _wait_for(self, pattern: str, timeout: float):
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern, re.M)
        while time.monotonic() < deadline:
            m = rx.search(self.output())
            if m:
                return m
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        out = self.output()
        self.stop()
        raise RuntimeError(f"{self.name} did not print /{pattern}/ (exit {self.proc.poll()}); output:\n{out[-4000:]}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def signal(self, sig) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def freeze(self, timeout: float = 10.0) -> None:
        """SIGSTOP, then waits until every thread of the process is stopped (signals arrive
        asynchronously: a thread running on another core would otherwise still answer)."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = []
            for task in glob.glob(f"/proc/{self.proc.pid}/task/*/stat"):
                try:
                    with open(task) as f:
                        stat = f.read()
                    states.append(stat[stat.rfind(")") + 2])
                except OSError:
                    pass
            if states and all(st in "tT" for st in states):
                return
            time.sleep(0.01)
        raise RuntimeError(f"{self.name} did not stop after SIGSTOP")

    def kill(self) -> None:
        """SIGKILL, as a crash."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
                self.proc.terminate()
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        self.log.close()


def start_master(*extra) -> tuple:
    """(Proc, "host:port")."""
    p = Proc("master", ["master", "--host", "127.0.0.1", "--port", "0", "--admin-port", "0"] + list(extra),
             r"Tiffin master listening on ([^\s/]+:\d+)")
    return p, p.match.group(1)


def start_node(master: str, segment_size: str, shm_dir=None, *extra) -> Proc:
    args = ["node", "--master", master, "--host", "127.0.0.1", "--segment-size", segment_size]
    if shm_dir:
        args += ["--shared-memory-dir", shm_dir]
    return Proc("node", args + list(extra), r"Tiffin node (\S+) segment (\S+) .* on ([^\s/,]+:\d+)")


def wait_nodes(master: str, count: int, timeout: float = 60.0) -> list:
    """The master's segments once ``count`` are mounted."""
    deadline = time.monotonic() + timeout
    with tiffin.Client.connect(master) as c:
        while True:
            segs = c.stat()["segments"]
            if len(segs) >= count or time.monotonic() > deadline:
                assert len(segs) >= count, f"only {len(segs)} of {count} nodes mounted: {segs}"
                return segs
            time.sleep(0.1)


def shm_dir_for(size: int):
    """/dev/shm when it has room for ``size`` bytes and some to spare, else a directory under /tmp (the
    node warns that it is not a tmpfs; the same-host path works the same)."""
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize > size + 64 * MiB:
            return tempfile.mkdtemp(prefix="tiffin-shm-", dir="/dev/shm")
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="tiffin-shm-", dir=LOG_ROOT)


class Cluster:
    """A master and its nodes; ``shm_node`` keeps its segment in shared memory, ``tcp_node`` does not."""

    def __init__(self, master_proc, master, nodes, shm_dir=None):
        self.master_proc = master_proc
        self.master = master
        self.nodes = nodes
        self.shm_dir = shm_dir
        self.segments = wait_nodes(master, len(nodes))

    def admin_url(self) -> str:
        """The master's /metrics address, from the line it printed at start."""
        m = re.search(r"\(admin (http://\S+/metrics)\)", self.master_proc.output())
        assert m, "the master printed no admin address"
        return m.group(1)

    def master_metric(self, series: str) -> float:
        """The value of ``series`` (a metric's name and its labels, as printed, e.g. ``tiffin_master_offloads_total``)
        in the master's /metrics, 0 when the master has not counted any yet."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy
        with opener.open(self.admin_url(), timeout=10) as r:
            text = r.read().decode()
        m = re.search(r"^%s (\S+)$" % re.escape(series), text, re.M)
        return float(m.group(1)) if m else 0.0

    def master_requests(self, op: str) -> float:
        """``tiffin_master_requests_total{op="<op>"}`` (op in lower case, e.g. get_replica_list)."""
        return self.master_metric('tiffin_master_requests_total{op="%s"}' % op)

    def node_info(self, proc) -> dict:
        """node id, segment name and endpoint of a node process."""
        m = proc.match
        return {"node_id": m.group(1), "segment": m.group(2), "endpoint": m.group(3)}

    def stop(self):
        for p in self.nodes + [self.master_proc]:
            p.stop()
        if self.shm_dir:
            shutil.rmtree(self.shm_dir, ignore_errors=True)


def make_cluster(shm_size_mib: int = 0, tcp_nodes: int = 1, tcp_size_mib: int = 256, master_args=(),
                 node_args=()) -> Cluster:
    """A master (``master_args`` added to its command line) and its nodes: one with its segment in shared memory
    when ``shm_size_mib``, and ``tcp_nodes`` with anonymous segments (``node_args`` added to theirs)."""
    _require_dist()
    mp, master = start_master(*master_args)
    nodes = []
    shm_dir = None
    try:
        if shm_size_mib:
            shm_dir = shm_dir_for(shm_size_mib * MiB)
            nodes.append(start_node(master, f"{shm_size_mib}MiB", shm_dir))
        for _ in range(tcp_nodes):
            nodes.append(start_node(master, f"{tcp_size_mib}MiB", None, *node_args))
        return Cluster(mp, master, nodes, shm_dir)
    except BaseException:
        for p in nodes + [mp]:
            p.stop()
        raise


@pytest.fixture(scope="session")
def cluster():
    """The shared cluster: a master, a node with its 256 MiB segment in shared memory and a node with a
    256 MiB anonymous segment. Tests use their own key prefixes and must not remove others' keys."""
    c = make_cluster(shm_size_mib=256, tcp_nodes=1, tcp_size_mib=256)
    c.shm_node, c.tcp_node = c.nodes
    c.shm_segment = c.node_info(c.shm_node)["segment"]
    c.tcp_segment = c.node_info(c.tcp_node)["segment"]
    yield c
    c.stop()


@pytest.fixture()
def client(cluster):
    """A client with the same-host path on."""
    with tiffin.Client.connect(cluster.master) as c:
        yield c


@pytest.fixture()
def tcp_client(cluster):
    """A client that uses only sockets."""
    with tiffin.Client.connect(cluster.master, shared_memory=False) as c:
        yield c


@pytest.fixture()
def prefix(request):
    """A key prefix unique to the test."""
    return f"t/{request.node.name}/{os.getpid()}/{time.monotonic_ns()}/"


def pytest_sessionfinish(session, exitstatus):
    for p in reversed(_started):
        try:
            p.stop()
        except Exception:  # noqa: BLE001
            pass
    if exitstatus == 0:
        shutil.rmtree(LOG_ROOT, ignore_errors=True)
    else:
        print(f"\nTiffin process logs kept in {LOG_ROOT}")
