"""TLS for the client's connections: an ``ssl.SSLContext`` built from PEM files, with the options named after
the Java processes' keys (``transport.tls.enabled``, ``.ca``, ``.cert``, ``.key``, ``.verify-hostname``;
docs/SECURITY.md). The context is immutable once built and thread-safe for wrapping sockets.
"""

from __future__ import annotations

import os
import ssl
from typing import Optional

from .errors import InvalidArgument, TiffinError

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
