"""TLS between the Python client and real processes: a master and a node that serve TLS only and demand client
certificates (transport.tls.client-auth = require), with PEM files made by openssl as docs/SECURITY.md shows;
what a client with the right files does, and the errors of the wrong ones."""

import os
import shutil
import socket
import ssl
import subprocess
import time

import pytest

import tiffin
from conftest import LOG_ROOT, Proc, _require_dist, start_master


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _ca(d, name):
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
             "-subj", f"/CN={name}", "-keyout", f"{name}-key.pem", "-out", f"{name}.pem", cwd=d)


def _issue(d, ca, name, san):
    """A certificate of ``ca`` for CN=name naming ``san``, for servers and clients alike."""
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={name}",
             "-keyout", f"{name}-key.pem", "-out", f"{name}.csr", cwd=d)
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write(f"subjectAltName={san}\nextendedKeyUsage=serverAuth,clientAuth\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem", "-days", "2",
             "-out", f"{name}.pem", "-extfile", f"{name}.ext", cwd=d)
    return os.path.join(d, f"{name}.pem"), os.path.join(d, f"{name}-key.pem")


@pytest.fixture(scope="module")
def pki():
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make the test certificates")
    d = os.path.join(LOG_ROOT, "tls-pki")
    os.makedirs(d, exist_ok=True)
    _ca(d, "ca")
    _ca(d, "other-ca")
    files = {"ca": os.path.join(d, "ca.pem"), "other_ca": os.path.join(d, "other-ca.pem")}
    files["server"] = _issue(d, "ca", "server", "IP:127.0.0.1")
    files["client"] = _issue(d, "ca", "app-1", "DNS:app-1")
    files["stranger"] = _issue(d, "other-ca", "stranger", "DNS:stranger")
    return files


def _tls_cluster(pki, cert, key, *extra):
    """A master and a node serving TLS with ``cert`` and ``key``, mutual TLS required, ``extra`` flags added to
    both, once the node has mounted: (master Proc, node Proc, the master's address). The caller stops both."""
    _require_dist()
    tls = ["-D", "transport.tls.enabled=true", "-D", f"transport.tls.cert={cert}", "-D", f"transport.tls.key={key}",
           "-D", f"transport.tls.ca={pki['ca']}", "-D", "transport.tls.client-auth=require", *extra]
    mp, master = start_master(*tls)
    node = None
    try:
        node = Proc("node", ["node", "--master", master, "--host", "127.0.0.1", "--segment-size", "64MiB"] + tls,
                    r"Tiffin node (\S+) segment (\S+) .* on ([^\s/,]+:\d+)")
        with _client(master, pki) as c:
            deadline = time.monotonic() + 60
            while not c.stat()["segments"]:
                assert time.monotonic() < deadline, "the node did not mount: " + node.output()[-2000:]
                time.sleep(0.1)
        return mp, node, master
    except BaseException:
        for p in (node, mp):
            if p is not None:
                p.stop()
        raise


@pytest.fixture(scope="module")
def tls_master(pki):
    """A master and a node serving TLS with mutual TLS required; yields the master's address."""
    mp, node, master = _tls_cluster(pki, *pki["server"])
    try:
        yield master
    finally:
        node.stop()
        mp.stop()


def _client(master, pki, **options):
    cert, key = pki["client"]
    opts = dict(tls_enabled=True, tls_ca=pki["ca"], tls_cert=cert, tls_key=key, shared_memory=False)
    opts.update(options)
    return tiffin.Client.connect(master, **opts)


def test_a_client_with_the_cas_certificate_puts_and_gets_over_tls(tls_master, pki, prefix):
    small = os.urandom(5000)
    large = os.urandom(3 * 1024 * 1024 + 17)  # frames larger than a TLS record, sent in several pieces
    with _client(tls_master, pki, slice_size=1024 * 1024) as c:
        c.put(prefix + "small", small)
        c.put(prefix + "large", large)
        assert c.get(prefix + "small") == small
        assert c.get(prefix + "large") == large
        assert [r.unwrap() for r in c.batch_get([prefix + "small", prefix + "large"])] == [small, large]


def test_the_tls_settings_may_come_from_the_environment_as_for_the_java_processes(tls_master, pki, prefix,
                                                                                  monkeypatch):
    cert, key = pki["client"]
    for name, value in (("ENABLED", "true"), ("CA", pki["ca"]), ("CERT", cert), ("KEY", key)):
        monkeypatch.setenv("TIFFIN_TRANSPORT_TLS_" + name, value)
    with tiffin.Client.connect(tls_master, shared_memory=False) as c:
        c.put(prefix + "env", b"x" * 100)
        assert c.get(prefix + "env") == b"x" * 100


def test_a_plaintext_client_is_told_the_server_speaks_tls_only(tls_master):
    with pytest.raises(tiffin.TiffinError) as e:
        tiffin.Client.connect(tls_master, tls_enabled=False)
    assert e.value.code == "ILLEGAL_CLIENT"
    assert "accepts TLS connections only" in str(e.value)


def test_a_server_of_another_ca_is_not_trusted(tls_master, pki):
    with pytest.raises(tiffin.TiffinError) as e:
        _client(tls_master, pki, tls_ca=pki["other_ca"])
    assert e.value.code == "RPC_FAIL"
    assert f"TLS handshake with {tls_master} failed (certificate verify failed" in str(e.value)


def test_the_server_certificate_must_name_the_host_dialled(tls_master, pki, prefix):
    by_name = "localhost:" + tls_master.rsplit(":", 1)[1]  # the certificate names IP 127.0.0.1 only
    with pytest.raises(tiffin.TiffinError) as e:
        _client(by_name, pki)
    assert e.value.code == "RPC_FAIL" and "Hostname mismatch" in str(e.value)
    with _client(by_name, pki, tls_verify_hostname=False) as c:
        assert c.stat()["segments"]


def test_mutual_tls_refuses_a_client_without_a_certificate_of_the_ca(tls_master, pki):
    for options in (dict(tls_cert=None, tls_key=None), dict(tls_cert=pki["stranger"][0], tls_key=pki["stranger"][1])):
        with pytest.raises(tiffin.TiffinError) as e:
            c = _client(tls_master, pki, **options)
            c.stat()  # TLS 1.3: the server checks the certificate after the client's handshake ended
        assert e.value.code == "RPC_FAIL", str(e.value)


def test_unusable_tls_files_are_refused_naming_the_option(pki, tmp_path):
    with pytest.raises(tiffin.TiffinError) as e:
        tiffin.Client("127.0.0.1:1", tls_enabled=True, tls_ca=str(tmp_path / "missing.pem"))
    assert e.value.code == "INVALID_PARAMS" and "tls_ca = " in str(e.value) and "missing.pem" in str(e.value)
    with pytest.raises(tiffin.TiffinError) as e:
        tiffin.Client("127.0.0.1:1", tls_enabled=True, tls_ca=pki["ca"], tls_cert=pki["client"][0])
    assert e.value.code == "INVALID_PARAMS" and "tls_cert and tls_key go together" in str(e.value)
    with pytest.raises(tiffin.TiffinError) as e:
        tiffin.Client("127.0.0.1:1", tls_enabled=True, tls_ca=pki["ca"], tls_cert=pki["client"][0],
                      tls_key=pki["ca"])
    assert e.value.code == "INVALID_PARAMS" and "tls_key = " in str(e.value)


def _install(source, target):
    """Replaces ``target`` with a copy of ``source`` in one rename, as certificate tools do."""
    tmp = target + ".new"
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def _presented(address, pki) -> str:
    """The common name of the certificate the server at ``address`` presents to a new connection."""
    ctx = ssl.create_default_context(cafile=pki["ca"])
    ctx.load_cert_chain(*pki["client"])
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as raw, \
            ctx.wrap_socket(raw, server_hostname=host) as s:
        return dict(x[0] for x in s.getpeercert()["subject"])["commonName"]


def test_a_rotated_server_certificate_is_presented_to_new_connections_without_a_restart(pki, tmp_path, prefix):
    """The master and its node read their certificate from files that are replaced while they run (their
    transport.tls.reload-interval short for the test): new connections get the new certificate, the client's
    connections made before go on, and a new client works."""
    cert, key = str(tmp_path / "server.pem"), str(tmp_path / "server-key.pem")
    _install(pki["server"][0], cert)
    _install(pki["server"][1], key)
    mp, node, master = _tls_cluster(pki, cert, key, "-D", "transport.tls.reload-interval=200ms")
    try:
        with _client(master, pki) as before:
            before.put(prefix + "a", b"a" * 5000)
            assert _presented(master, pki) == "server"
            rotated = _issue(os.path.dirname(pki["ca"]), "ca", "server-rotated", "IP:127.0.0.1")
            _install(rotated[1], key)
            _install(rotated[0], cert)
            deadline = time.monotonic() + 15
            while _presented(master, pki) != "server-rotated":  # each new connection has the files looked at
                assert time.monotonic() < deadline, "the master kept its old certificate: " + mp.output()[-2000:]
                time.sleep(0.1)
            while "Reloaded the TLS files" not in mp.output():  # logged asynchronously
                assert time.monotonic() < deadline, "the reload was not logged: " + mp.output()[-2000:]
                time.sleep(0.1)
            assert before.get(prefix + "a") == b"a" * 5000  # the connections made before go on
            with _client(master, pki) as after:
                after.put(prefix + "b", b"b" * 5000)
                assert after.get(prefix + "b") == b"b" * 5000
    finally:
        node.stop()
        mp.stop()


def test_a_client_trusts_its_replaced_ca_file_without_a_restart(tls_master, pki, tmp_path):
    ca = str(tmp_path / "ca.pem")
    _install(pki["other_ca"], ca)
    cert, key = pki["client"]
    with tiffin.Client(tls_master, tls_enabled=True, tls_ca=ca, tls_cert=cert, tls_key=key, shared_memory=False,
                       tls_reload_interval=0.1) as c:
        with pytest.raises(tiffin.TiffinError) as e:
            c.stat()
        assert "certificate verify failed" in str(e.value)
        _install(pki["ca"], ca)
        time.sleep(0.2)
        assert c.stat()["segments"]


def test_tls_files_that_do_not_load_leave_the_context_loaded_before_in_use(pki, tmp_path, caplog):
    from tiffin._tls import ReloadingContext, reload_interval_of
    cert, key = str(tmp_path / "client.pem"), str(tmp_path / "client-key.pem")
    _install(pki["client"][0], cert)
    _install(pki["client"][1], key)
    ctx = ReloadingContext(pki["ca"], cert, key, True, 0.05)
    first = ctx.current()
    _install(pki["stranger"][1], key)  # a key of another certificate
    time.sleep(0.1)
    assert ctx.current() is first
    assert "the TLS files changed but do not load" in caplog.text
    time.sleep(0.1)
    assert ctx.current() is first and ctx.failed_reloads == 1  # reported once per change
    _install(pki["client"][1], key)
    time.sleep(0.1)
    assert ctx.current() is not first and ctx.reloads == 1
    never = ReloadingContext(pki["ca"], cert, key, True, 0)
    _install(pki["stranger"][1], key)
    time.sleep(0.1)
    assert never.current() is never.current() and never.reloads == 0 and never.failed_reloads == 0
    assert [reload_interval_of(v) for v in (60, "1m", "30s", "500ms", "2h", "0")] == [60, 60, 30, 0.5, 7200, 0]
    for bad in ("soon", -1, True):
        with pytest.raises(tiffin.TiffinError):
            reload_interval_of(bad)
