"""The client's memory of nodes that did not answer (:class:`tiffin._suspects.Suspects`), without a cluster: the
order it gives replicas, its expiry, its bound and its use from several threads. test_races.py checks it against a
node stopped with SIGSTOP."""

from __future__ import annotations

import threading

import pytest

import tiffin
from tiffin._suspects import Suspects
from tiffin._types import Replica


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def replica(endpoint: str, rid: int = 1, kind: str = "MEMORY") -> Replica:
    return Replica(rid, kind, "COMPLETE", "seg-" + endpoint, "node-" + endpoint, endpoint, 0, 10, 1)


def test_replicas_on_suspected_nodes_go_last_in_their_own_order():
    s = Suspects(ttl=5, clock=Clock())
    a, b, c, d = (replica(ep, i) for i, ep in enumerate(["a:1", "b:1", "c:1", "d:1"]))
    assert s.order((a, b, c, d)) is None  # nothing suspected: the master's order
    s.note("a:1")
    s.note("c:1")
    assert s.order((a, b, c, d)) == (b, d, a, c)
    assert s.order((c, b)) == (b, c)
    assert s.order((a, c)) is None  # all suspected: still read, in the master's order
    assert s.order((a,)) is None
    assert s.suspected("a:1") and not s.suspected("b:1")


def test_a_note_expires_and_a_node_that_answers_is_forgotten_at_once():
    clock = Clock()
    s = Suspects(ttl=5, clock=clock)
    a, b = replica("a:1"), replica("b:1")
    s.note("a:1")
    clock.now += 4.9
    assert s.order((a, b)) == (b, a)
    s.note("a:1")  # failed again: five more seconds
    clock.now += 4.9
    assert s.suspected("a:1")
    clock.now += 0.2
    assert not s.suspected("a:1") and s.order((a, b)) is None and s.snapshot() == {}
    s.note("b:1")
    s.answered("b:1")
    assert not s.suspected("b:1") and s.order((b, a)) is None
    s.answered("never-noted:1")


def test_the_memory_is_bounded_dropping_the_note_that_expires_first():
    clock = Clock()
    s = Suspects(ttl=10, max_nodes=3, clock=clock)
    for i in range(5):
        s.note(f"n{i}:1")
        clock.now += 1
    assert sorted(s.snapshot()) == ["n2:1", "n3:1", "n4:1"]
    s.note("n2:1")  # noted again: now the last to expire
    s.note("n5:1")
    assert sorted(s.snapshot()) == ["n2:1", "n4:1", "n5:1"]


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        Suspects(ttl=0)
    with pytest.raises(ValueError):
        Suspects(max_nodes=0)
    with pytest.raises(tiffin.InvalidArgument):
        tiffin.Client("127.0.0.1:1", suspect_ttl=-1)
    off = tiffin.Client("127.0.0.1:1", suspect_ttl=0)  # 0 = no memory (nothing is connected before connect())
    try:
        assert off._io.suspects is None and not off._io.suspected("a:1")
    finally:
        off.close()


def test_threads_noting_answering_and_ordering_at_once():
    s = Suspects(ttl=60, max_nodes=16)
    reps = tuple(replica(f"n{i}:1", i) for i in range(40))
    errors = []

    def work(t):
        try:
            for i in range(3000):
                ep = f"n{(t * 7 + i) % 40}:1"
                if i % 3 == 0:
                    s.answered(ep)
                else:
                    s.note(ep)
                order = s.order(reps)
                if order is not None:
                    assert sorted(order) == sorted(reps)  # reordered, never dropped or doubled
                s.suspected(ep)
                assert len(s.snapshot()) <= 16
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(s.snapshot()) <= 16
