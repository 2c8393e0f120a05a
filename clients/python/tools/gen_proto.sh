#!/usr/bin/env bash
# Regenerates tiffin/_proto/tiffin_pb2.py from the engine's tiffin.proto with protoc 3.21 (Debian 12's
# protobuf-compiler, matching its python3-protobuf runtime). tests/test_unit.py fails while the committed
# file differs from what this produces.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
proto="$here/../../engine-core/src/main/proto"
protoc --version | grep -q '3\.21\.' || { echo "gen_proto: needs protoc 3.21.x (apt-get install protobuf-compiler on Debian 12)" >&2; exit 1; }
protoc -I "$proto" --python_out="$here/tiffin/_proto" "$proto/tiffin.proto"
echo "wrote $here/tiffin/_proto/tiffin_pb2.py"
