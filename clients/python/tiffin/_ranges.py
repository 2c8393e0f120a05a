"""Ranged reads: byte ranges of objects, only the ranges' bytes moved (:meth:`tiffin.Client.get_range_into`,
Mooncake's ``get_into_ranges`` in :mod:`tiffin.mooncake`).

One master round trip for all keys (no location cache: a fresh lookup each; another for the keys whose lease a node
that did not answer used up), then ``Transfers.read_ranges``: a
same-host replica copied from range by range, else DATA_READs that start at each range, under the replica's grant
(which covers the whole replica). A range is not checked against the object's CRC32C, which covers the whole
object.

Thread-safety: thread-safe (functions of a :class:`tiffin.Client`, itself thread-safe).
"""

from __future__ import annotations

import time

from . import _buffers as B
from ._transfers import STALLED_LOOKUPS, spent
from ._types import KeyResult, ObjectInfo
from .errors import InvalidArgument, TiffinError


def read_ranges(client, keys: list, plan) -> list:
    """After one master round trip for all ``keys``, ``plan(i, location)`` gives key i's (source offset,
    destination view) pairs, each inside the object, or the name of the error that fails the key; then only the
    ranges' bytes are moved. One :class:`KeyResult` per key (value: the object's size). Keys whose lease a node
    that did not answer used up while another replica was left are looked up again and read from the others
    (:func:`tiffin._transfers.spent`), as whole-object reads are."""
    client._check_open()
    out: list = [None] * len(keys)
    stalled: dict = {}  # nodes that did not answer during this call: endpoint -> failure
    todo = list(range(len(keys)))
    for _ in range(1 + STALLED_LOOKUPS):
        if not todo:
            break
        start = time.monotonic()
        locs = client._batch_lookup([keys[i] for i in todo], None)
        idx, rl, rf = [], [], []
        for i, loc in zip(todo, locs):
            frags = plan(i, loc) if isinstance(loc, ObjectInfo) else loc
            if isinstance(frags, str):
                out[i] = KeyResult(keys[i], None, frags)
            else:
                idx.append(i)
                rl.append(loc)
                rf.append(frags)
        todo = []
        if idx:
            before = len(stalled)
            errs = client._io.read_ranges(rl, rf, start, stalled)
            for j, i in enumerate(idx):
                out[i] = KeyResult(keys[i], rl[j].size, "OK") if errs[j] is None else KeyResult(keys[i], None,
                                                                                                 errs[j].code)
                if errs[j] is not None and spent(errs[j], rl[j], stalled, before):
                    todo.append(i)
    return out


def get_range_into(client, key: str, offset: int, buffer) -> int:
    """:meth:`tiffin.Client.get_range_into`."""
    key = B.check_key(key)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise InvalidArgument("INVALID_PARAMS", f"offset must be an int >= 0, not {offset!r}")
    dst = B.Chunks([B.writable(buffer)])
    n = [0]

    def plan(_, loc):
        if offset > loc.size:
            return "INVALID_PARAMS"
        n[0] = min(dst.size, loc.size - offset)
        return [(offset, dst.slice(0, n[0])[0])] if n[0] else []

    try:
        r = read_ranges(client, [key], plan)[0]
    finally:
        dst.release()
    if r.code == "INVALID_PARAMS":
        raise TiffinError(r.code, f"get_range_into({key!r}, {offset}): the offset is past the object's end; "
                                  "locate() gives its size")
    if not r.ok:
        raise TiffinError(r.code, f"get_range_into({key!r}, {offset}): {r.code}")
    return n[0]
