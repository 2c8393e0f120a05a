"""Tokens from a file that may change while the process runs: the Python side of the Java processes'
``transport.tokens-file`` (docs/SECURITY.md, "Rotating tokens without a restart").

Each line is ``role=token``, the role one of ``auth`` (the shared token), ``client``, ``node`` or ``admin``; blank
lines and lines starting with ``#`` are skipped. A client presents the first token of its role (``client``, else the
shared ``auth``), so a rotation moves it to the new token when the file's first line changes.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Optional

from ._tls import reload_interval_of
from .errors import InvalidArgument

log = logging.getLogger("tiffin.tokens")

#: larger files are refused, as by the Java processes
MAX_BYTES = 64 * 1024
SLOTS = ("auth", "client", "node", "admin")


def _stamp(path: str):
    try:
        st = os.stat(path)
        return path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns
    except OSError as e:
        return path, repr(e)


def parse(path: str) -> dict:
    """The file's tokens: slot → tokens in order. Raises InvalidArgument (INVALID_PARAMS) naming the file and what
    is wrong with it."""
    def invalid(what: str) -> InvalidArgument:
        return InvalidArgument("INVALID_PARAMS", f"tokens_file = {path} is refused: {what}")
    try:
        if os.path.getsize(path) > MAX_BYTES:
            raise invalid(f"it is larger than {MAX_BYTES} bytes")
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise invalid(f"it cannot be read ({e})") from e
    tokens: dict = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        slot, eq, token = line.partition("=")
        slot, token = slot.strip(), token.strip()
        if not eq or slot not in SLOTS:
            raise invalid(f"line {number} is not role=token with a role of auth, client, node or admin")
        if not token:
            raise invalid(f"line {number} gives {slot} an empty token")
        tokens.setdefault(slot, []).append(token)
    return tokens


class TokensFile:
    """The token a client presents, read from ``path`` and looked at again (its device, inode, size and
    modification time) at most every ``reload_interval`` seconds (0 = never) when a connection is made. A changed
    file that does not parse, or no longer names a role it named, is logged once per change (a warning of the
    ``tiffin.tokens`` logger) and the tokens read before stay; ``reloads`` and ``failed_reloads`` count both.

    Thread-safe: one lock around the look at the file and the replacement."""

    def __init__(self, path: str, reload_interval: float, role: str = "client"):
        self.path = path
        self._role = role
        self._interval = float(reload_interval)
        self._lock = threading.Lock()
        self._stamp = _stamp(path)
        self._tokens = parse(path)
        self._refused = None
        self._next = time.monotonic() + self._interval
        self.reloads = 0
        self.failed_reloads = 0

    def token(self) -> Optional[str]:
        """The token to present now: the first of the role's lines, else of the shared ``auth`` lines; None when
        the file names neither."""
        if self._interval > 0 and time.monotonic() >= self._next:
            with self._lock:
                if time.monotonic() >= self._next:
                    self._reload_if_changed()
                    self._next = time.monotonic() + self._interval
        tokens = self._tokens
        own = tokens.get(self._role) or tokens.get("auth")
        return own[0] if own else None

    def _reload_if_changed(self) -> None:
        now = _stamp(self.path)
        if now == self._stamp or now == self._refused:
            return
        try:
            tokens = parse(self.path)
            dropped = [s for s in self._tokens if s not in tokens]
            if dropped:
                raise InvalidArgument("INVALID_PARAMS", f"tokens_file = {self.path} is refused: it no longer gives "
                                                        f"{dropped[0]} a token")
        except InvalidArgument as e:
            self._refused = now
            self.failed_reloads += 1
            log.warning("the tokens file changed but is refused, so the tokens read before stay in use until it "
                        "changes again: %s", e)
            return
        self._tokens = tokens
        self._stamp = now
        self._refused = None
        self.reloads += 1


def tokens_from(path, reload_interval, auth_token) -> Optional[TokensFile]:
    """The tokens file of the options (None: the token is ``auth_token``'s), each unset one taken from the
    environment as the Java processes take ``transport.tokens-file`` and ``transport.tokens-reload-interval``."""
    if path is not None and auth_token is not None:
        raise InvalidArgument("INVALID_PARAMS", "auth_token and tokens_file both give the token to present; pass one")
    if path is None:
        if auth_token is not None:
            return None  # a token given to the call wins over the environment's file
        path = os.environ.get("TIFFIN_TRANSPORT_TOKENS_FILE") or None
    if not path:
        return None
    if reload_interval is None:
        reload_interval = os.environ.get("TIFFIN_TRANSPORT_TOKENS_RELOAD_INTERVAL") or 60.0
    return TokensFile(path, reload_interval_of(reload_interval, "tokens_reload_interval"))
