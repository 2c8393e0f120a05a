"""Roles against real processes: a master and a node that accept one token per role
(transport.client-token, transport.node-token, transport.admin-token), and what a Python client may do
with each token, with the errors it sees."""

import time

import pytest

import tiffin
from conftest import Proc, _require_dist, start_master

TOKENS = ["-D", "transport.client-token=client-secret", "-D", "transport.node-token=node-secret",
          "-D", "transport.admin-token=admin-secret"]


@pytest.fixture(scope="module")
def guarded():
    """A master and one node with role tokens; yields the master's address."""
    _require_dist()
    mp, master = start_master(*TOKENS)
    node = Proc("node", ["node", "--master", master, "--host", "127.0.0.1", "--segment-size", "64MiB"] + TOKENS,
                r"Tiffin node (\S+) segment (\S+) .* on ([^\s/,]+:\d+)")
    try:
        with tiffin.Client.connect(master, auth_token="client-secret") as c:
            deadline = time.monotonic() + 60
            while not c.stat()["segments"]:
                assert time.monotonic() < deadline, "the node did not mount: " + node.output()[-2000:]
                time.sleep(0.1)
        yield master
    finally:
        node.stop()
        mp.stop()


def test_a_client_token_puts_gets_and_forces_out_keys_but_cannot_remove_all(guarded, prefix):
    with tiffin.Client.connect(guarded, auth_token="client-secret", shared_memory=False) as c:
        c.put(prefix + "k", b"v" * 5000)
        assert c.get(prefix + "k") == b"v" * 5000
        with pytest.raises(tiffin.TiffinError) as e:
            c.remove_all()
        assert e.value.code == "ILLEGAL_CLIENT"
        assert "REMOVE_ALL needs the admin role" in str(e.value) and "transport.admin-token" in str(e.value)
        with pytest.raises(tiffin.TiffinError) as e:
            c.remove_by_regex("^" + prefix, force=True)
        assert e.value.code == "ILLEGAL_CLIENT" and "REMOVE_BY_REGEX with force" in str(e.value)
        assert c.exists(prefix + "k")
        # a key just read holds a lease; forcing out a named key is the client's, as replacing it is
        c.remove(prefix + "k", force=True)
        assert not c.exists(prefix + "k")


def test_no_token_or_a_wrong_one_is_refused_at_the_handshake(guarded):
    for token in ("", "guess"):
        with pytest.raises(tiffin.TiffinError) as e:
            tiffin.Client.connect(guarded, auth_token=token)
        assert e.value.code == "ILLEGAL_CLIENT" and "rejected the auth token" in str(e.value)


def test_the_token_may_come_from_the_environment_as_for_the_java_processes(guarded, prefix, monkeypatch):
    monkeypatch.setenv("TIFFIN_TRANSPORT_CLIENT_TOKEN", "client-secret")
    with tiffin.Client.connect(guarded, shared_memory=False) as c:
        c.put(prefix + "env", b"x")
        assert c.get(prefix + "env") == b"x"


def test_the_admin_token_removes_everything(guarded, prefix):
    with tiffin.Client.connect(guarded, auth_token="client-secret", shared_memory=False) as c:
        c.put(prefix + "a", b"1")
    with tiffin.Client.connect(guarded, auth_token="admin-secret", shared_memory=False) as admin:
        assert admin.remove_all(force=True) >= 1
        assert not admin.exists(prefix + "a")
