"""Tiffin's Python client.

* :class:`tiffin.Client` — the native API (``tiffin.Client.connect("127.0.0.1:50051")``).
* :mod:`tiffin.mooncake` — ``MooncakeDistributedStore`` and ``ReplicateConfig`` with Mooncake Store's
  Python API, so code written for Mooncake runs on Tiffin with one import changed.
* :mod:`tiffin.adapters.sglang`, :mod:`tiffin.adapters.lmcache` — plug-ins for SGLang HiCache and LMCache.
* ``python3 -m tiffin.bench`` — the benchmark against redis-py.

Pure Python; the one dependency is protobuf (3.20 or later, e.g. Debian's python3-protobuf 3.21).
See docs/PYTHON.md.
"""

from .errors import InvalidArgument, TiffinError, CODES
from .client import Client, KeyResult, KeyListing, ObjectInfo, Replica

__version__ = "0.1.0"

__all__ = ["Client", "TiffinError", "InvalidArgument", "KeyResult", "KeyListing", "ObjectInfo", "Replica", "CODES",
           "__version__"]
