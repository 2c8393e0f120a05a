"""Failover with real processes: this client's puts are recorded on the nodes (commit records), so a
master killed with SIGKILL loses none of them, whether it restarts with its ``--state-dir`` or a
standby master takes over (``tiffin coordinator`` runs a real ZooKeeper server); the client finds the
new leader among the listed masters by itself."""

from __future__ import annotations

import os
import random
import signal
import socket
import threading
import time

import pytest

import tiffin
from tiffin import TiffinError
from tiffin._frames import Op
from tiffin._proto import tiffin_pb2 as pb
from tiffin._wire import Connection, Settings

from conftest import Proc, _require_dist, shm_dir_for, start_node, wait_nodes

MiB = 1 << 20


def data(key: str) -> bytes:
    r = random.Random(key)
    return r.randbytes(100 + r.randrange(300_000))


def free_port() -> int:
    """A port free now, below the kernel's ephemeral range: a master is restarted on it, and a port of that
    range could meanwhile be handed to another process's connection."""
    for _ in range(200):
        port = random.randrange(10_000, 30_000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port found in 10000..29999")


def master_proc(port: int, *extra) -> Proc:
    return Proc("master", ["master", "--host", "127.0.0.1", "--port", str(port), "--admin-port", "0"] + list(extra),
                r"Tiffin master listening on ([^\s/]+:\d+)")


def leader_of(addresses: list) -> str:
    """The master that says it leads (SERVICE_READY), asked until one does."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for a in addresses:
            try:
                conn = Connection.open(a, Settings(2.0, 2.0), "failover-test")
                try:
                    if conn.call(Op.SERVICE_READY, pb.Empty(), pb.ServiceReadyReply).leader:
                        return a
                finally:
                    conn.close()
            except TiffinError:
                pass
        time.sleep(0.2)
    raise AssertionError(f"no master of {addresses} leads")


class TwoMasters:
    """A real ZooKeeper server (``tiffin coordinator``) and two masters electing through it, ``master_args`` added to
    both; ``nodes`` appended by the test are stopped with them when the ``with`` block ends."""

    def __init__(self, tmp_path, *master_args):
        _require_dist()
        self.zk = Proc("coordinator", ["coordinator", "--port", "0", "--data-dir", str(tmp_path / "zk")],
                       r"listening on [^\s]+:(\d+)")
        self.nodes = []
        self.masters = {}
        try:
            url = f"zk://127.0.0.1:{self.zk.match.group(1)}/py-{os.getpid()}-{time.monotonic_ns()}"
            ports = [free_port(), free_port()]
            self.addresses = [f"127.0.0.1:{p}" for p in ports]
            self.listed = ",".join(self.addresses)
            for a, p in zip(self.addresses, ports):
                self.masters[a] = master_proc(p, "--coordinator", url, *master_args)
        except BaseException:
            self.stop()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        for p in self.nodes + list(self.masters.values()) + [self.zk]:
            p.stop()


def put_some(c, prefix: str, n: int) -> dict:
    """Single puts (2 replicas; some hard-pinned) and a batch put; key -> version."""
    keys = [f"{prefix}{i}" for i in range(n)]
    for i, k in enumerate(keys[: n // 2]):
        c.put(k, data(k), replicas=2, hard_pin=i % 3 == 0)
    rest = keys[n // 2:]
    assert all(r.ok for r in c.batch_put(rest, [data(k) for k in rest], replicas=2))
    return {k: c.locate(k).version for k in keys}


def test_a_single_master_restarted_with_its_state_dir_keeps_this_clients_puts(tmp_path):
    _require_dist()
    port = free_port()
    state = str(tmp_path / "state")
    address = f"127.0.0.1:{port}"
    master = master_proc(port, "--state-dir", state)
    shm_dir = shm_dir_for(64 * MiB)
    nodes = [start_node(address, "64MiB", shm_dir), start_node(address, "64MiB")]
    try:
        wait_nodes(address, 2)
        # shared memory (the record travels as a write of no bytes) and sockets (on the last slice)
        with tiffin.Client.connect(address, slice_size=64 * 1024) as shm, \
                tiffin.Client.connect(address, shared_memory=False, slice_size=64 * 1024) as tcp:
            versions = put_some(shm, "shm/", 10)
            versions.update(put_some(tcp, "tcp/", 10))
            assert shm.transfer_counts()["shared_writes"] > 0
            tcp.remove("tcp/0", force=True)  # locate() above leased it
            del versions["tcp/0"]
        master.kill()
        master = master_proc(port, "--state-dir", state)
        with tiffin.Client.connect(address, shared_memory=False, failover_timeout=30) as c:
            deadline = time.monotonic() + 30
            while not c.exists("shm/1"):  # the nodes attach within a few pings
                assert time.monotonic() < deadline, "the nodes did not attach to the restarted master"
                time.sleep(0.1)
            for k, v in versions.items():
                assert c.get(k) == data(k), k
                assert c.locate(k).version == v, k
            assert not c.exists("tcp/0")
            c.put("after", b"x" * 1000)  # and it takes new puts
            assert c.get("after") == b"x" * 1000
    finally:
        for p in nodes + [master]:
            p.stop()


@pytest.mark.parametrize("read_wait", ["5s", "0"])
def test_reads_right_after_a_restart_wait_for_a_node_that_attaches_late(tmp_path, read_wait):
    """The node is frozen (SIGSTOP) while the master is killed and restarted with its state dir, so it cannot attach.
    Reads sent meanwhile need its objects: with ``master.recovery-read-wait`` the master refuses them for the client to
    retry, and once the node is let go (SIGCONT) and attaches they hit; a key nobody wrote then reads as missing.
    With the wait off they answer REPLICA_IS_NOT_READY at once (exists: false), as a miss."""
    _require_dist()
    port = free_port()
    state = str(tmp_path / "state")
    address = f"127.0.0.1:{port}"
    args = ("--state-dir", state, "-D", f"master.recovery-read-wait={read_wait}")
    master = master_proc(port, *args)
    node = start_node(address, "64MiB", None, "-D", "node.ping-interval=250ms")
    try:
        wait_nodes(address, 1)
        keys = [f"late/{i}" for i in range(4)]
        with tiffin.Client.connect(address, shared_memory=False) as c:
            for k in keys:
                c.put(k, data(k))
        node.freeze()
        master.kill()
        master = master_proc(port, *args)
        answers = {}
        with tiffin.Client.connect(address, shared_memory=False, location_cache_ttl=0) as c:
            def read(name, call):
                started = time.monotonic()
                try:
                    answers[name] = ("OK", call(), time.monotonic() - started)
                except TiffinError as e:
                    answers[name] = (e.code, None, time.monotonic() - started)

            readers = [threading.Thread(target=read, args=args) for args in (
                ("get", lambda: c.get(keys[0])),
                ("batch_get", lambda: [(r.code, r.value) for r in c.batch_get(keys[1:3])]),
                ("exists", lambda: c.exists(keys[3])))]
            for t in readers:
                t.start()
            time.sleep(0.6)
            answered_while_frozen = dict(answers)
            node.signal(signal.SIGCONT)
            for t in readers:
                t.join(30)
            if read_wait == "0":
                assert answered_while_frozen.keys() == {"get", "batch_get", "exists"}, answered_while_frozen
                assert answers["get"][0] == "REPLICA_IS_NOT_READY"
                assert [code for code, _ in answers["batch_get"][1]] == ["REPLICA_IS_NOT_READY"] * 2
                assert answers["exists"][1] is False
            else:
                assert not answered_while_frozen, answered_while_frozen
                assert answers["get"][:2] == ("OK", data(keys[0]))
                assert answers["batch_get"][:2] == ("OK", [("OK", data(k)) for k in keys[1:3]])
                assert answers["exists"][:2] == ("OK", True)
                assert all(0.6 <= waited < 5 for _, _, waited in answers.values()), answers
                with pytest.raises(TiffinError) as missing:
                    c.get("late/never-written")
                assert missing.value.code == "OBJECT_NOT_FOUND"
            deadline = time.monotonic() + 30
            while not c.exists(keys[0]):  # the node attaches
                assert time.monotonic() < deadline, "the node did not attach to the restarted master"
                time.sleep(0.1)
            assert c.get(keys[0]) == data(keys[0])
    finally:
        for p in (node, master):
            p.stop()


def test_the_client_follows_a_new_leader_after_the_leader_is_killed(tmp_path):
    with TwoMasters(tmp_path) as c:
        leader = leader_of(c.addresses)
        c.nodes += [start_node(c.listed, "64MiB", None, "-D", "node.ping-interval=250ms") for _ in range(2)]
        wait_nodes(leader, 2)
        with tiffin.Client.connect(c.listed, shared_memory=False, timeout=5, failover_timeout=40) as client:
            versions = put_some(client, "f/", 12)
            c.masters[leader].kill()
            t = time.monotonic()
            client.put("f/after", b"y" * 5000, replicas=2)  # waits for the standby to lead and recover
            took = time.monotonic() - t
            assert client._masters.leader != leader and client._masters.discoveries >= 1
            for k, v in versions.items():
                assert client.get(k) == data(k), k
                assert client.locate(k).version == v, k
            assert client.get("f/after") == b"y" * 5000
            assert took < 30, took
