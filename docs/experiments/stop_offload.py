"""How fast a node with an SSD tier copies what only its memory holds when it is stopped gracefully
(node.stop-offload-timeout, docs/OPERATIONS.md): a master and a node of 2 GiB with an SSD tier in a fresh directory,
N objects of 1 MiB put with offload off (none on the SSD), then SIGTERM; prints the copy's time from the node's log.

    PYTEST_TIFFIN_DIST=<unpacked tarball> /usr/bin/python3 docs/experiments/stop_offload.py 1500 /tmp/stop-offload-ssd
"""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python", "tests"))
from conftest import start_master, start_node, wait_nodes  # noqa: E402

import tiffin  # noqa: E402

count, storage = int(sys.argv[1]), sys.argv[2]
shutil.rmtree(storage, ignore_errors=True)
mp, master = start_master()
node = start_node(master, "2GiB", None, "--storage-path", storage)
try:
    wait_nodes(master, 1)
    value = os.urandom(1 << 20)
    with tiffin.Client.connect(master, shared_memory=False) as c:
        for i in range(count):
            c.put(f"stop-offload/{i}", value)
    started = time.monotonic()
    node.stop()
    stopped = time.monotonic() - started
    copied = re.search(r"before stopping \((\d+) ms\)", node.output())
    ms = int(copied.group(1)) if copied else None
    print(f"{count} objects of 1 MiB: copied in {ms} ms ({count * (1 << 20) / ms / 1e3:.0f} MB/s), process stopped"
          f" in {stopped:.2f} s" if ms else "no copy logged:\n" + node.output()[-2000:])
finally:
    node.stop()
    mp.stop()
    shutil.rmtree(storage, ignore_errors=True)
