"""Reads of the Python client never go back in time while another client rewrites the keys (in memory, and while
objects move to a node's SSD and back).

One client rewrites keys as fast as it can (forced replacement, remove then put, upsert, a batch put of two keys),
while threads of other clients (one with the same-host shared-memory path, one over sockets with its location
cache) read them through get, get_into, batch_get and batch_get_into. Every value carries its key and generation and
bytes only they give, so a read can tell a stale value (older than the last write that had returned before the read
started), a mixed one (bytes of two values, or of another key), and a wrong miss or generation while no write of the
key overlapped the read at all (the rules of the Java engine's ``ConcurrentRewrites``).
"""

from __future__ import annotations

import os
import random
import shutil
import struct
import tempfile
import threading
import time

import pytest

from conftest import LOG_ROOT, make_cluster

import tiffin
from tiffin import TiffinError

HEAD = struct.Struct(">QI")
#: what a read racing a write (or outliving its lease on a loaded machine) may answer instead of a value
TRANSIENT = {"OBJECT_NOT_FOUND", "LEASE_EXPIRED", "REPLICA_IS_GONE", "REPLICA_IS_NOT_READY"}


def retrying_busy(write):
    """Runs ``write`` again while it fails with OBJECT_HAS_REPLICATION_TASK (a node has been copying the object to
    SSD or back for longer than the client's own 0.6 s of asking again), as that code asks of callers; at most 10 s."""
    end = time.monotonic() + 10
    while True:
        try:
            return write()
        except TiffinError as e:
            if e.code != "OBJECT_HAS_REPLICATION_TASK" or time.monotonic() > end:
                raise
            time.sleep(0.01)


#: seconds a race goes on at least once its event has happened
AFTER_EVENT = 2.0


class Race:
    def __init__(self, prefix: str, keys: int = 10, size: int = 150_007, replicas: int = 1,
                 tolerate_failures: bool = False, fault_codes=frozenset(), writer_timeout: float = 30.0):
        self.prefix = prefix
        self.keys = keys
        self.size = size
        self.replicas = replicas
        #: whether a write may fail (a node killed during the race): the key's value is then uncertain (the old one,
        #: the new one, or none after a remove whose put failed) until a write of it succeeds
        self.tolerate_failures = tolerate_failures
        self.failed_writes = 0
        #: what a read of a key whose value is uncertain may also answer (its only node down)
        self.fault_codes = fault_codes
        #: the writer's ``timeout``: shorter, a write to a hung node fails (its key uncertain) and the writer goes on
        self.writer_timeout = writer_timeout
        # per key: the last generation whose write had returned, a count that is odd while a write runs, and whether
        # a failed write left its value uncertain
        self.completed = [1] * keys
        self.writes = [0] * keys
        self.uncertain = [False] * keys
        #: held by the writer through each write and its bookkeeping
        self.write_lock = threading.Lock()
        #: when ``run``'s event happened (monotonic seconds), and the values read since
        self.event_at = None
        self.values_after_event = 0
        #: whether ``run`` has an event that has not happened yet: the race goes on until it has, and then for at
        #: least ``AFTER_EVENT`` seconds (an event that takes long on a loaded machine, a node's restart, would
        #: otherwise leave no time to read through what it changed)
        self.event_pending = False
        self.violations: list = []
        self.reads = 0
        self.transient = 0
        self.rewrites = 0
        self.stop = False

    def key(self, k: int) -> str:
        return f"{self.prefix}{k}"

    def value(self, k: int, gen: int) -> bytes:
        return HEAD.pack(gen, k) + random.Random(gen * 1000 + k).randbytes(self.size - HEAD.size)

    def writer(self, c, seconds: float):
        gen = 1
        rnd = random.Random(42)
        end = time.monotonic() + seconds
        while time.monotonic() < end or self.event_pending or (
                self.event_at is not None and time.monotonic() < self.event_at + AFTER_EVENT):
            k = rnd.randrange(self.keys)
            other = (k + 1 + rnd.randrange(self.keys - 1)) % self.keys
            op = rnd.randrange(4)
            written = [k, other] if op == 3 else [k]
            gens = []
            for w in written:
                gen += 1
                gens.append(gen)
            with self.write_lock:
                self.write_and_note(c, op, k, written, gens)

    def write_and_note(self, c, op: int, k: int, written: list, gens: list):
        """One write of the writer, and its bookkeeping (under ``write_lock``, which a crash takes to mark what it
        may lose)."""
        for w in written:
            self.writes[w] += 1
        try:
            try:
                retrying_busy(lambda: self.write(c, op, k, written, gens))
            except TiffinError:
                if not self.tolerate_failures:
                    raise
                self.failed_writes += 1
                for w in written:
                    self.uncertain[w] = True
                return
            for w, g in zip(written, gens):
                self.completed[w] = g
                self.uncertain[w] = False
            self.rewrites += len(written)
        finally:
            for w in written:
                self.writes[w] += 1

    def write(self, c, op: int, k: int, written: list, gens: list):
        """Write ``op`` of the writer: generation ``gens[i]`` of key ``written[i]``."""
        n = self.replicas
        if op == 0:
            c.put(self.key(k), self.value(k, gens[0]), replicas=n, upsert=True, replace_leased=True)
        elif op == 1:
            try:
                c.remove(self.key(k), force=True)
            except TiffinError as e:
                if e.code != "OBJECT_NOT_FOUND":  # removed by an earlier attempt
                    raise
            c.put(self.key(k), self.value(k, gens[0]), replicas=n)
        elif op == 2:
            try:
                c.put(self.key(k), self.value(k, gens[0]), replicas=n, upsert=True)
            except TiffinError as e:
                if e.code != "OBJECT_HAS_LEASE":
                    raise
                c.put(self.key(k), self.value(k, gens[0]), replicas=n, upsert=True, replace_leased=True)
        else:
            values = {self.key(w): self.value(w, g) for w, g in zip(written, gens)}
            for r in c.batch_put(list(values), list(values.values()), replicas=n, upsert=True, replace_leased=True):
                if r.code == "OBJECT_HAS_REPLICATION_TASK":  # a node copies it to SSD or back: on its own
                    c.put(r.key, values[r.key], replicas=n, upsert=True, replace_leased=True)
                elif not r.ok:
                    raise TiffinError(r.code, f"batch put of {r.key} answered {r.code}")

    def reader(self, c, seed: int):
        rnd = random.Random(seed)
        buffers = [bytearray(self.size), bytearray(self.size)]
        while not self.stop:
            k = rnd.randrange(self.keys)
            j = (k + 1 + rnd.randrange(self.keys - 1)) % self.keys
            ks = [k, j]
            # the write counts first: when they show no write under way, the generations read next are current
            writes_before = [self.writes[x] for x in ks]
            certain_before = [not self.uncertain[x] for x in ks]
            before = [self.completed[x] for x in ks]
            api = rnd.randrange(4)
            answers = []
            try:
                if api == 0:
                    answers.append(("OK", c.get(self.key(k))))
                elif api == 1:
                    n = c.get_into(self.key(k), buffers[0])
                    answers.append(("OK", bytes(buffers[0][:n])))
                elif api == 2:
                    answers += [(r.code, r.value) for r in c.batch_get([self.key(k), self.key(j)])]
                else:
                    for i, r in enumerate(c.batch_get_into([self.key(k), self.key(j)], buffers)):
                        answers.append((r.code, bytes(buffers[i][:r.value]) if r.ok else None))
            except TiffinError as e:
                answers.append((e.code, None))
            for i, (code, v) in enumerate(answers):
                quiet = (writes_before[i] % 2 == 0 and self.writes[ks[i]] == writes_before[i] and certain_before[i]
                         and not self.uncertain[ks[i]])
                self.check(ks[i], before[i], quiet, code, v, api)

    def check(self, k, before, quiet, code, v, api):
        self.reads += 1
        what = f"{self.key(k)} (read API {api}): "
        if code != "OK":
            self.transient += 1
            if quiet and code in self.fault_codes:
                self.violations.append(what + code + " with no write under way and the key's value certain")
            elif code in self.fault_codes:
                pass
            elif code not in TRANSIENT or (quiet and code == "OBJECT_NOT_FOUND"):
                self.violations.append(what + code + (" with no write under way" if quiet else ""))
            return
        if self.event_at is not None:
            self.values_after_event += 1
        if len(v) != self.size:
            self.violations.append(what + f"{len(v)} bytes")
            return
        gen, owner = HEAD.unpack_from(v)
        if owner != k or gen > 10_000_000 or v != self.value(k, gen):
            self.violations.append(what + f"mixed or foreign bytes (header: key {owner}, generation {gen})")
        elif gen < before:
            self.violations.append(what + f"stale generation {gen} after {before} had returned")
        elif quiet and gen != before:
            self.violations.append(what + f"generation {gen} while {before} was the last written and no write was"
                                          " under way")


    def run(self, master: str, seconds: float = 4, event=None):
        """Writes generation 1 of every key, then races a writer against three readers for ``seconds`` and checks
        what they saw. The readers reuse lookups for 50 ms: a forced write returns once other clients' reuse of the
        old location has ended, so the default 2 s would leave the writer a few writes in the run. ``event``, a pair
        (seconds, function), calls the function that long into the race (a node killed); afterwards every key
        must still read as its last returned write (or, where a write failed, a later one or none)."""
        with tiffin.Client.connect(master, shared_memory=False, timeout=self.writer_timeout) as writer, \
                tiffin.Client.connect(master, location_cache_ttl=0.05) as same_host, \
                tiffin.Client.connect(master, shared_memory=False, location_cache_ttl=0.05) as remote:
            for k in range(self.keys):
                writer.put(self.key(k), self.value(k, 1), replicas=self.replicas)
            failures = []
            def happen():
                try:
                    event[1]()
                finally:
                    self.event_at = time.monotonic()
                    self.event_pending = False

            self.event_pending = event is not None

            timer = threading.Timer(event[0], happen) if event else None
            if timer:
                timer.start()

            def run(target, *args):
                try:
                    target(*args)
                except Exception as e:  # noqa: BLE001 - reported as the run's failure
                    failures.append(repr(e))
                    self.stop = True

            threads = [threading.Thread(target=run, args=(self.reader, c, seed))
                       for seed, c in enumerate([same_host, same_host, remote])]
            for t in threads:
                t.start()
            try:
                run(self.writer, writer, seconds)
            finally:
                self.stop = True
                for t in threads:
                    t.join()
                if timer:
                    timer.join()
            for k in range(self.keys):
                code, v = "OK", None
                try:
                    v = remote.get(self.key(k))
                except TiffinError as e:
                    code = e.code
                self.check(k, self.completed[k], not self.uncertain[k], code, v, "get after the race")
            writer.batch_remove([self.key(k) for k in range(self.keys)], force=True)
        assert not failures
        assert not self.violations, self.violations[:10] + [f"{len(self.violations)} in all"]
        assert self.rewrites > self.keys
        assert self.reads > 100
        # a failed remove-then-put leaves its key missing until a write of it succeeds: many misses where writes fail
        assert self.transient < self.reads // 2 or self.tolerate_failures


def test_reads_never_return_an_older_generation_than_the_last_returned_write_or_mixed_bytes(cluster, prefix):
    Race(prefix).run(cluster.master)


@pytest.fixture(scope="module")
def moving_cluster():
    """A 16 MiB node with an SSD tier behind it, a master that offloads on eviction above half of it and read leases
    of 200 ms (a read lease keeps its object in memory: with the default 10 s nothing read would move)."""
    storage = tempfile.mkdtemp(prefix="tiffin-ssd-race-", dir=LOG_ROOT)
    c = make_cluster(shm_size_mib=0, tcp_nodes=1, tcp_size_mib=16,
                     master_args=("-D", "offload.mode=on-evict", "-D", "master.eviction-high-watermark=0.5",
                                  "-D", "master.eviction-ratio=0.3", "-D", "master.lease-ttl=200ms"),
                     node_args=("--storage-path", storage))
    yield c
    c.stop()
    shutil.rmtree(storage, ignore_errors=True)


def test_reads_stay_in_time_while_objects_move_to_ssd_and_back(moving_cluster, prefix):
    """As above, with 30 keys of 300 KB on a node whose memory holds half of them: objects move to its SSD and back
    (read twice) all along; reads of them from SSD, through the node, must keep the same rules."""
    before = (moving_cluster.master_metric("tiffin_master_offloads_total"),
              moving_cluster.master_metric("tiffin_master_promotions_total"))
    Race(prefix, keys=30, size=300_007).run(moving_cluster.master, 5)
    assert moving_cluster.master_metric("tiffin_master_offloads_total") > before[0]
    assert moving_cluster.master_metric("tiffin_master_promotions_total") > before[1]


@pytest.fixture()
def two_replica_cluster():
    """A master, a node with its segment in shared memory and a socket node (this test kills the socket node)."""
    c = make_cluster(shm_size_mib=64, tcp_nodes=1, tcp_size_mib=64)
    yield c
    c.stop()


def test_reads_stay_in_time_when_a_node_holding_one_of_two_replicas_is_killed(two_replica_cluster, prefix):
    """As above with two replicas of every object, one on each node, and the socket node killed with SIGKILL 1.5 s
    into the race: the master still lists its replicas (until node-ttl), so reads find them dead and take the other;
    writes that place a replica on it fail, leaving their keys' values uncertain until a write of them succeeds. No
    read may return an older generation than the last returned write, bytes of two values, or a miss where a value
    stands, during the race or after it."""
    c = two_replica_cluster
    race = Race(prefix, keys=10, size=150_007, replicas=2, tolerate_failures=True)
    race.run(c.master, 4, event=(1.5, c.nodes[1].kill))
    assert c.nodes[1].proc.poll() is not None
    assert race.failed_writes > 0  # writes after the kill placed a replica on the dead node
    assert race.values_after_event > 100  # read from the surviving replicas


@pytest.mark.parametrize("pause", [0.6, 3.0], ids=["shorter-than-node-ttl", "longer-than-node-ttl"])
def test_reads_stay_in_time_when_a_node_holding_one_of_two_replicas_hangs(prefix, pause):
    """As above with two replicas on three socket nodes (every reader reads through the nodes' sockets), read leases
    of 1 s and a node TTL of 2 s, and one node frozen with SIGSTOP 1.5 s into a 7 s race, then let go with SIGCONT: a hang, not a death, so its connections stay open and the
    requests already sent to it are answered late. Frozen shorter than the node TTL, the master keeps it; longer,
    the master drops its replicas, and once let go it re-mounts empty. Either way the requests it answers late must
    not return bytes older than the last returned write: a read that outlives its lease fails, and the other replica
    serves the key. The writer gives up a write after 0.5 s (its key uncertain), so writes placed on the other nodes
    return while the frozen node still holds reads of older generations."""
    import signal

    c = make_cluster(shm_size_mib=0, tcp_nodes=3, tcp_size_mib=64,
                     master_args=("-D", "master.lease-ttl=1s", "-D", "master.node-ttl=2s"))
    hung = c.nodes[1]

    def hang():
        hung.freeze()
        threading.Timer(pause, hung.signal, args=(signal.SIGCONT,)).start()

    try:
        race = Race(prefix, keys=10, size=150_007, replicas=2, tolerate_failures=True, writer_timeout=0.5)
        race.run(c.master, 7, event=(1.5, hang))
        assert hung.proc.poll() is None  # alive: it was let go
        assert race.values_after_event > 100
        with tiffin.Client.connect(c.master, shared_memory=False) as check:
            deadline = time.monotonic() + 10
            while True:  # back in service: both nodes take replicas again
                try:
                    check.put(prefix + "after", b"z" * 1000, replicas=2)
                    if len(check.locate(prefix + "after").replicas) == 2:
                        break
                    check.remove(prefix + "after", force=True)
                except TiffinError:
                    pass
                assert time.monotonic() < deadline, "the node did not take replicas again after it was let go"
                time.sleep(0.2)
            check.remove(prefix + "after", force=True)
        with open(hung.log_path, errors="replace") as f:
            remounted = "re-mounted segment" in f.read()
        assert remounted == (pause > 2.0)  # the master dropped it only when frozen beyond the node TTL
    finally:
        c.stop()


def test_after_one_read_paid_the_wait_for_a_hung_node_later_reads_take_the_other_replica_at_once(prefix):
    """A master with read leases of 2 s (and a node TTL of 60 s, so it keeps the node) and two socket nodes; keys of
    two replicas whose first one is on the node then frozen with SIGSTOP. A client's first read waits for it until
    the lease ends, then reads the other replica; the client remembers the node, so its next reads of other such
    keys (get, get_into, batch_get) take the other replica at once. Let go with SIGCONT, the node answers a read of a
    key only it holds (suspected nodes are still read when they hold every replica), and the memory ends."""
    import signal

    lease = 2.0
    c = make_cluster(shm_size_mib=0, tcp_nodes=2, tcp_size_mib=64,
                     master_args=("-D", f"master.lease-ttl={lease:g}s", "-D", "master.node-ttl=60s"))
    hung = c.node_info(c.nodes[0])
    keys = [f"{prefix}k{i}" for i in range(4)]
    values = {k: os.urandom(100_003) for k in keys}
    only = prefix + "only-on-the-hung-node"
    try:
        with tiffin.Client.connect(c.master, shared_memory=False) as writer:
            for k, v in values.items():
                writer.put(k, v, replicas=2, preferred_segment=hung["segment"])
                assert [r.endpoint for r in writer.locate(k).replicas][0] == hung["endpoint"], k
            writer.put(only, b"o" * 5000, replicas=1, preferred_segment=hung["segment"])
        with tiffin.Client.connect(c.master, shared_memory=False) as reader:
            c.nodes[0].freeze()
            try:
                t = time.monotonic()
                assert reader.get(keys[0]) == values[keys[0]]
                first = time.monotonic() - t
                assert first > lease / 2, f"the first read took {first:.2f} s: did it not meet the hung node?"
                t = time.monotonic()
                assert reader.get(keys[1]) == values[keys[1]]
                second = time.monotonic() - t
                buf = bytearray(200_000)
                t = time.monotonic()
                assert reader.get_into(keys[2], buf) == len(values[keys[2]])
                third = time.monotonic() - t
                assert bytes(buf[:len(values[keys[2]])]) == values[keys[2]]
                t = time.monotonic()
                got = reader.batch_get([keys[3]])
                fourth = time.monotonic() - t
                assert got[0].ok and got[0].value == values[keys[3]]
                limit = lease / 4
                assert max(second, third, fourth) < limit, (
                    f"reads after the first took {second:.2f}, {third:.2f}, {fourth:.2f} s (first {first:.2f} s); "
                    f"expected each under {limit:g} s")
                assert reader._io.suspected(hung["endpoint"])
            finally:
                c.nodes[0].signal(signal.SIGCONT)
            assert reader.get(only) == b"o" * 5000  # its only replica is on the suspected node: read all the same
            assert not reader._io.suspected(hung["endpoint"])  # it answered: forgotten at once
    finally:
        c.stop()


def test_reads_stay_in_time_across_a_master_failover(tmp_path, prefix):
    """As above with two masters under a coordinator (a real ZooKeeper server) and the leader killed with SIGKILL
    1.5 s into an 8 s race: the clients' calls wait for the standby to lead and recover the objects from the nodes'
    commit records; a write whose outcome the failover hid leaves its keys uncertain. No read may return an older
    generation than the last returned write (a record the failed master had replaced or removed must not come back),
    bytes of two values, or a miss where a value stands, before, during or after the takeover."""
    from conftest import start_node, wait_nodes
    from test_failover import TwoMasters, leader_of

    with TwoMasters(tmp_path) as c:
        leader = leader_of(c.addresses)
        c.nodes += [start_node(c.listed, "64MiB", None, "-D", "node.ping-interval=250ms") for _ in range(2)]
        wait_nodes(leader, 2)
        race = Race(prefix, keys=10, size=150_007, tolerate_failures=True)
        race.run(c.listed, 8, event=(1.5, c.masters[leader].kill))
        assert c.masters[leader].proc.poll() is not None
        assert leader_of(c.addresses) != leader
        assert race.values_after_event > 100  # read through the new leader


def test_reads_stay_in_time_when_a_node_holding_one_of_two_replicas_restarts_on_its_address(prefix):
    """As above with two replicas, and the socket node killed with SIGKILL 1.5 s into the race and started again at
    once with the same node id on the same port: its new segment holds none of the old bytes, so a location of an
    old replica that reaches it (a reader's reused lookup, or one the master answered before the node's new mount)
    must be refused there (the mount epoch) and the other replica read; the master drops the old replicas at the
    new mount and places new ones on the node again."""
    from conftest import start_node
    from test_failover import free_port

    c = make_cluster(shm_size_mib=64, tcp_nodes=0)
    port = free_port()
    node_args = ("--port", str(port), "-D", f"node.id=race-restart-{os.getpid()}")
    c.nodes.append(start_node(c.master, "64MiB", None, *node_args))
    first = c.nodes[1]

    def restart():
        first.kill()
        c.nodes.append(start_node(c.master, "64MiB", None, *node_args))

    try:
        race = Race(prefix, keys=10, size=150_007, replicas=2, tolerate_failures=True)
        race.run(c.master, 6, event=(1.5, restart))
        assert first.proc.poll() is not None and c.nodes[2].proc.poll() is None
        assert race.failed_writes > 0  # writes placing a replica on the node while it was down
        assert race.values_after_event > 100
        with tiffin.Client.connect(c.master, shared_memory=False) as check:
            check.put(prefix + "after", b"z" * 1000, replicas=2)  # both nodes take replicas again
            assert len(check.locate(prefix + "after").replicas) == 2
            check.remove(prefix + "after", force=True)
    finally:
        c.stop()


def test_a_node_restarted_with_its_ssd_never_brings_back_an_older_generation(prefix):
    """The moving cluster's race (objects moving to the node's SSD and back), and the node killed with SIGKILL 2 s
    in and started again at once with its SSD tier, on its address. The objects held only in its memory are lost
    (one replica), so every key may be missing until its next write; but the copies its SSD kept are of the
    versions they were written for, and one a later write had replaced, or a remove had ended, must not serve
    reads again: no read may return an older generation than the last write that had returned before the crash."""
    from conftest import start_node
    from test_failover import free_port

    storage = tempfile.mkdtemp(prefix="tiffin-ssd-crash-", dir=LOG_ROOT)
    c = make_cluster(shm_size_mib=0, tcp_nodes=0,
                     master_args=("-D", "offload.mode=on-evict", "-D", "master.eviction-high-watermark=0.5",
                                  "-D", "master.eviction-ratio=0.3", "-D", "master.lease-ttl=200ms"))
    node_args = ("--port", str(free_port()), "--storage-path", storage)
    c.nodes.append(start_node(c.master, "16MiB", None, *node_args))
    first = c.nodes[0]
    race = Race(prefix, keys=30, size=300_007, tolerate_failures=True, fault_codes={"TRANSFER_FAIL", "SEGMENT_NOT_FOUND"})

    def crash():
        with race.write_lock:  # no write returns between the marking and the crash
            for k in range(race.keys):
                race.uncertain[k] = True
            first.kill()
            c.nodes.append(start_node(c.master, "16MiB", None, *node_args))

    try:
        race.run(c.master, 7, event=(2.0, crash))
        assert first.proc.poll() is not None and c.nodes[1].proc.poll() is None
        assert race.values_after_event > 0
        assert race.rewrites > race.keys
    finally:
        c.stop()
        shutil.rmtree(storage, ignore_errors=True)


def test_reads_stay_in_time_across_a_master_failover_while_objects_move_to_ssd(tmp_path, prefix):
    """The failover race with the moving cluster's SSD tier: a node with 16 MiB of memory and an SSD tier behind it,
    objects offloaded on eviction and promoted back all along, and the leader of two masters killed 2 s into an 8 s
    race. The new leader learns the objects from the node's commit records and its SSD scan; none of them may serve
    an older generation than the last returned write (a recovered object older than the node's SSD copy of its key
    gives way to it), and none may read as missing: the new leader's recovery lasts until the node's scan has
    reported the objects only its SSD holds (until then their reads answer "not ready")."""
    from conftest import start_node, wait_nodes
    from test_failover import TwoMasters, leader_of

    tiering = ("-D", "offload.mode=on-evict", "-D", "master.eviction-high-watermark=0.5",
               "-D", "master.eviction-ratio=0.3", "-D", "master.lease-ttl=200ms")
    with TwoMasters(tmp_path, *tiering) as c:
        leader = leader_of(c.addresses)
        c.nodes.append(start_node(c.listed, "16MiB", None, "-D", "node.ping-interval=250ms",
                                  "--storage-path", str(tmp_path / "ssd")))
        wait_nodes(leader, 1)
        race = Race(prefix, keys=30, size=300_007, tolerate_failures=True)
        race.run(c.listed, 8, event=(2.0, c.masters[leader].kill))
        assert c.masters[leader].proc.poll() is not None
        assert leader_of(c.addresses) != leader
        assert race.values_after_event > 100
