"""TLS for the client's connections: an ``ssl.SSLContext`` built from PEM files, with the options named after
the Java processes' keys (``transport.tls.enabled``, ``.ca``, ``.cert``, ``.key``, ``.verify-hostname``,
``.reload-interval``; docs/SECURITY.md), built again when the files change (``ReloadingContext``).
"""

from __future__ import annotations

import os
import logging
import re
import ssl
import threading
import time
from typing import Optional

from .errors import InvalidArgument, TiffinError

log = logging.getLogger("tiffin.tls")

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def env_flag(name: str, default: bool) -> bool:
    """A boolean from the environment (``true``/``false``, ...); ``default`` when unset."""
    v = os.environ.get(name)
    if v is None:
        return default
    if v.strip().lower() in _TRUE:
        return True
    if v.strip().lower() in _FALSE:
        return False
    raise InvalidArgument("INVALID_PARAMS", f"{name} = {v!r} (expected: true or false)")


def client_context(ca: Optional[str], cert: Optional[str], key: Optional[str],
                   verify_hostname: bool) -> ssl.SSLContext:
    """A TLS 1.2+ client context that checks servers against ``ca`` (PEM; None: the system's trust store), checks
    their names unless ``verify_hostname`` is false, and presents ``cert`` with ``key`` (PEM) when given (mutual
    TLS). Raises InvalidArgument naming the option of a file that cannot be used."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = bool(verify_hostname)
    ctx.verify_mode = ssl.CERT_REQUIRED
    try:
        if ca:
            ctx.load_verify_locations(cafile=ca)
        else:
            ctx.load_default_certs()
    except (OSError, ssl.SSLError) as e:
        raise InvalidArgument("INVALID_PARAMS", f"tls_ca = {ca}: {_why(e)} (expected: a PEM file of the "
                                                "certificates of the authorities to trust, as transport.tls.ca)") from e
    if cert or key:
        if not (cert and key):
            raise InvalidArgument("INVALID_PARAMS", "tls_cert and tls_key go together (the certificate chain this "
                                                    "client presents and its private key, as transport.tls.cert "
                                                    "and transport.tls.key)")
        try:
            ctx.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as e:
            raise InvalidArgument("INVALID_PARAMS", f"tls_cert = {cert}, tls_key = {key}: {_why(e)} (expected: a "
                                                    "PEM certificate chain, this client's certificate first, and "
                                                    "its unencrypted PEM private key)") from e
    return ctx


def reload_interval_of(value, name: str = "tls_reload_interval") -> float:
    """Seconds from ``value``: a number of seconds, or a string as the Java key ``transport.tls.reload-interval``
    takes (``"1m"``, ``"30s"``, ``"500ms"``, ``"1h"``; a plain number is seconds); 0 = never reload."""
    if isinstance(value, bool):
        raise InvalidArgument("INVALID_PARAMS", f"{name} = {value!r} (expected: seconds >= 0, or e.g. \"1m\")")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(value))
        if not m:
            raise InvalidArgument("INVALID_PARAMS", f"{name} = {value!r} (expected: seconds >= 0, or e.g. \"1m\")")
        seconds = float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]
    if not seconds >= 0:
        raise InvalidArgument("INVALID_PARAMS", f"{name} = {value!r} (expected: seconds >= 0)")
    return seconds


def _stamps(paths) -> tuple:
    """What identifies the files' contents without reading them: device, inode, size and modification time of
    each (links followed, so a link moved to a new file counts), or why it cannot be looked at."""
    out = []
    for p in paths:
        if p:
            try:
                st = os.stat(p)
                out.append((p, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError as e:
                out.append((p, repr(e)))
    return tuple(out)


class ReloadingContext:
    """A client context (``client_context``) built again when its files change, so that certificates are
    rotated without restarting the process. ``wrap_socket`` looks at the files' stamps at most every
    ``reload_interval`` seconds (0 = never); changed files that load replace the context for new connections
    (established ones keep theirs), and files that do not load are logged once per change (a warning of the
    ``tiffin.tls`` logger) while the context loaded before stays. ``reloads`` and ``failed_reloads`` count both.

    Thread-safe: one lock around the look at the files and the replacement; the contexts themselves are
    thread-safe for wrapping sockets."""

    def __init__(self, ca: Optional[str], cert: Optional[str], key: Optional[str], verify_hostname: bool,
                 reload_interval: float):
        self._args = (ca, cert, key, verify_hostname)
        self._interval = float(reload_interval)
        self._lock = threading.Lock()
        self._stamps = _stamps((cert, key, ca))
        self._context = client_context(ca, cert, key, verify_hostname)
        self._refused = None
        self._next = time.monotonic() + self._interval
        self.reloads = 0
        self.failed_reloads = 0

    def wrap_socket(self, sock, server_hostname=None):
        return self.current().wrap_socket(sock, server_hostname=server_hostname)

    def current(self) -> ssl.SSLContext:
        """The context to wrap a new connection in, after a look at the files if the interval has passed."""
        if self._interval > 0 and time.monotonic() >= self._next:
            with self._lock:
                if time.monotonic() >= self._next:
                    self._reload_if_changed()
                    self._next = time.monotonic() + self._interval
        return self._context

    def _reload_if_changed(self) -> None:
        ca, cert, key, verify_hostname = self._args
        now = _stamps((cert, key, ca))
        if now == self._stamps or now == self._refused:
            return
        try:
            self._context = client_context(ca, cert, key, verify_hostname)
        except InvalidArgument as e:
            self._refused = now
            self.failed_reloads += 1
            log.warning("the TLS files changed but do not load, so the ones loaded before stay in use until they "
                        "change again: %s", e)
            return
        self._stamps = now
        self._refused = None
        self.reloads += 1


def tls_from(enabled, ca, cert, key, verify_hostname, reload_interval):
    """The TLS context of the options (None: plaintext), each unset one taken from the environment as the Java
    processes take ``transport.tls.*`` (``TIFFIN_TRANSPORT_TLS_ENABLED`` ...)."""
    if enabled is None:
        enabled = env_flag("TIFFIN_TRANSPORT_TLS_ENABLED", False)
    if not enabled:
        return None
    ca = ca if ca is not None else os.environ.get("TIFFIN_TRANSPORT_TLS_CA") or None
    cert = cert if cert is not None else os.environ.get("TIFFIN_TRANSPORT_TLS_CERT") or None
    key = key if key is not None else os.environ.get("TIFFIN_TRANSPORT_TLS_KEY") or None
    if verify_hostname is None:
        verify_hostname = env_flag("TIFFIN_TRANSPORT_TLS_VERIFY_HOSTNAME", True)
    if reload_interval is None:
        reload_interval = os.environ.get("TIFFIN_TRANSPORT_TLS_RELOAD_INTERVAL") or 60.0
    return ReloadingContext(ca, cert, key, verify_hostname, reload_interval_of(reload_interval))


def handshake_failure(endpoint: str, e: BaseException) -> TiffinError:
    """The error of a TLS handshake that failed (an untrusted or misnamed certificate, a plaintext server)."""
    return TiffinError("RPC_FAIL", f"TLS handshake with {endpoint} failed ({_why(e)}); check that the server uses "
                                   "TLS (transport.tls.enabled), that tls_ca holds the authority of its certificate "
                                   "and that the certificate names the host dialled (or tls_verify_hostname=False)")


def _why(e: BaseException) -> str:
    if isinstance(e, ssl.SSLCertVerificationError) and e.verify_message:
        return f"certificate verify failed: {e.verify_message}"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__
