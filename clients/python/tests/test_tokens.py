"""Tokens rotated without a restart, against real processes: a master, a node and the Redis gateway read their tokens
from one ``transport.tokens-file``, a Python client from its own ``tokens_file``, and the client token is rotated
while they run (the new token added on the servers, the client moved to it, the old one dropped). Nothing restarts;
the node stays mounted; a file that would break the cluster is refused and the tokens read before stay."""

import os
import re
import time
import urllib.request

import pytest
import redis

import tiffin
from conftest import Proc, _require_dist, start_master
from tiffin._tokens import TokensFile

RELOAD = ["-D", "transport.tokens-reload-interval=200ms"]
ROLES = "node=node-secret\nadmin=admin-secret\n"


def _write(path, text: str) -> None:
    """Replaces the file at once, as an operator's tool or a Kubernetes secret swap does."""
    tmp = str(path) + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _until(what: str, check, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            if result is not False:
                return result
        except (tiffin.TiffinError, redis.exceptions.RedisError):
            pass
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.1)


def _connects(master: str, token: str) -> bool:
    try:
        tiffin.Client.connect(master, auth_token=token, shared_memory=False).close()
        return True
    except tiffin.TiffinError as e:
        assert e.code == "ILLEGAL_CLIENT" and "rejected the auth token" in str(e)
        return False


def _master_metric(master_proc, series: str) -> float:
    url = re.search(r"\(admin (http://\S+/metrics)\)", master_proc.output()).group(1)
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=10) as r:
        m = re.search(r"^%s (\S+)$" % re.escape(series), r.read().decode(), re.M)
    return float(m.group(1)) if m else 0.0


def _auth_refused(port: int, password: str) -> bool:
    try:
        redis.Redis(port=port, password=password).ping()
        return False
    except (redis.exceptions.ResponseError, redis.exceptions.AuthenticationError) as e:  # redis-py 4.3: the first
        assert "WRONGPASS" in str(e) or "invalid username-password pair" in str(e), e
        return True


@pytest.fixture
def rotating(tmp_path):
    """Master, node and gateway sharing ``servers`` as their tokens file; yields (servers, master, redis port)."""
    _require_dist()
    servers = tmp_path / "servers.tokens"
    _write(servers, "client=old\n" + ROLES)
    mp, master = start_master("-D", f"transport.tokens-file={servers}", *RELOAD)
    procs = [mp]
    try:
        procs.append(Proc("node", ["node", "--master", master, "--host", "127.0.0.1", "--segment-size", "64MiB",
                                   "-D", f"transport.tokens-file={servers}"] + RELOAD,
                          r"Tiffin node (\S+) segment (\S+) .* on ([^\s/,]+:\d+)"))
        gw = Proc("gateway", ["gateway", "--master", master, "--host", "127.0.0.1", "--port", "0",
                              "-D", f"transport.tokens-file={servers}"] + RELOAD,
                  r"Tiffin Redis gateway listening on [^\s]+:(\d+)")
        procs.append(gw)
        with tiffin.Client.connect(master, auth_token="old") as c:
            _until("the node mounts", lambda: bool(c.stat()["segments"]), 60)
        yield servers, master, int(gw.match.group(1)), procs
    finally:
        for p in reversed(procs):
            p.stop()


def test_the_client_token_rotates_through_master_node_and_gateway_without_a_restart(rotating, tmp_path, prefix):
    servers, master, redis_port, procs = rotating
    mine = tmp_path / "client.tokens"
    _write(mine, "client=old\n")
    app = tiffin.Client.connect(master, tokens_file=str(mine), tokens_reload_interval=0.2, shared_memory=False)
    try:
        app.put(prefix + "before", b"b" * 70_000)
        r = redis.Redis(port=redis_port, password="old")
        r.set(prefix + "resp", b"r" * 5000)

        # 1. the servers accept the new token beside the old one
        _write(servers, "client=new\nclient=old\n" + ROLES)
        _until("the master accepts the new token", lambda: _connects(master, "new"))
        assert _connects(master, "old")
        assert _until("the gateway accepts the new password",
                      lambda: redis.Redis(port=redis_port, password="new").get(prefix + "resp")) == b"r" * 5000

        # 2. the client moves to it: its new connections present it
        _write(mine, "client=new\n")
        _until("the client's next connection presents the new token", lambda: app._pool.settings.token() == "new")
        assert app._pool.settings.tokens.reloads == 1
        with tiffin.Client.connect(master, tokens_file=str(mine), shared_memory=False) as fresh:
            fresh.put(prefix + "during", b"d" * 70_000)  # the node's data plane takes the new token too
            assert fresh.get(prefix + "before") == b"b" * 70_000

        # 3. the servers drop the old token: new connections with it are refused, the ones made are kept
        _write(servers, "client=new\n" + ROLES)
        _until("the master refuses the old token", lambda: not _connects(master, "old"))
        _until("the gateway refuses the old password", lambda: _auth_refused(redis_port, "old"))
        assert r.get(prefix + "resp") == b"r" * 5000, "a connection authenticated before goes on"
        assert app.get(prefix + "during") == b"d" * 70_000
        with tiffin.Client.connect(master, tokens_file=str(mine), shared_memory=False) as fresh:
            assert fresh.get(prefix + "before") == b"b" * 70_000
            assert fresh.stat()["segments"], "the node stayed mounted: its heartbeats present the node token"
        assert all(p.proc.poll() is None for p in procs), "nothing restarted"
        assert _master_metric(procs[0], "tiffin_master_tokens_reloads_total") == 2
        assert _master_metric(procs[0], "tiffin_master_tokens_reload_failures_total") == 0
    finally:
        app.close()


def test_a_changed_file_that_would_open_a_role_is_refused_and_the_old_tokens_stay(rotating):
    servers, master, _, procs = rotating
    _write(servers, "client=new\nnode=node-secret\n")  # no admin line: the admin role would be open to anyone
    _until("the master logs the refusal", lambda: "is refused: it no longer gives admin a token" in procs[0].output())
    assert _connects(master, "old") and not _connects(master, "new")
    assert _master_metric(procs[0], "tiffin_master_tokens_reload_failures_total") == 1, "an alert can catch it"
    assert _master_metric(procs[0], "tiffin_master_tokens_reloads_total") == 0
    with pytest.raises(tiffin.TiffinError) as e:
        tiffin.Client.connect(master, auth_token="guess")
    assert e.value.code == "ILLEGAL_CLIENT"


def test_a_process_does_not_start_with_a_tokens_file_it_cannot_use(tmp_path):
    _require_dist()
    bad = tmp_path / "bad.tokens"
    _write(bad, "client=x\nreader=y\n")
    p = Proc("master", ["master", "--host", "127.0.0.1", "--port", "0", "-D", f"transport.tokens-file={bad}"],
             r"(transport.tokens-file = \S+ is refused: line 2 is not role=token)")
    p.stop()
    both = tmp_path / "both.tokens"
    _write(both, "client=x\n")
    p = Proc("master", ["master", "--host", "127.0.0.1", "--port", "0", "-D", f"transport.tokens-file={both}",
                        "-D", "transport.client-token=y"],
             r"(whose key transport.client-token is set too)")
    p.stop()


def test_the_python_tokens_file_presents_the_first_client_token_and_refuses_what_it_cannot_use(tmp_path, caplog):
    f = tmp_path / "t"
    _write(f, "# rotation\nauth=shared\nclient = first\nclient=second\n")
    t = TokensFile(str(f), 0.05)
    assert t.token() == "first"
    _write(f, "auth=shared\n")  # drops client: refused, the tokens read before stay
    time.sleep(0.1)
    assert t.token() == "first" and t.failed_reloads == 1
    assert "no longer gives client a token" in caplog.text
    _write(f, "auth=shared\nclient=third\n")
    time.sleep(0.1)
    assert t.token() == "third" and t.reloads == 1
    _write(f, "auth=only\n")
    assert TokensFile(str(f), 0).token() == "only"
    for text, message in (("client\n", "line 1 is not role=token"), ("admin=\n", "line 1 gives admin an empty token")):
        _write(f, text)
        with pytest.raises(tiffin.InvalidArgument) as e:
            TokensFile(str(f), 0)
        assert e.value.code == "INVALID_PARAMS" and message in str(e.value) and str(f) in str(e.value)
    with pytest.raises(tiffin.InvalidArgument) as e:
        tiffin.Client("127.0.0.1:1", auth_token="x", tokens_file=str(f))
    assert "auth_token and tokens_file" in str(e.value)


def test_the_tokens_file_may_come_from_the_environment_and_a_token_given_to_the_call_wins(tmp_path, monkeypatch):
    f = tmp_path / "t"
    _write(f, "client=from-the-file\n")
    monkeypatch.setenv("TIFFIN_TRANSPORT_TOKENS_FILE", str(f))
    monkeypatch.setenv("TIFFIN_TRANSPORT_TOKENS_RELOAD_INTERVAL", "1m")
    c = tiffin.Client("127.0.0.1:1")
    assert c._pool.settings.token() == "from-the-file" and c._pool.settings.tokens._interval == 60
    c.close()
    c = tiffin.Client("127.0.0.1:1", auth_token="given")
    assert c._pool.settings.token() == "given"
    c.close()
