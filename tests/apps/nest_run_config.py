"""Copies a uwaga checkpoint, replacing the model in its run configuration by arrays nested
DEPTH levels deep: a crafted file the programs must refuse with a message, not crash on.
    python3 tests/apps/nest_run_config.py CHECKPOINT OUT DEPTH
"""
import json
import struct
import sys

source, out, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(source, "rb").read()
length = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + length])
config = json.loads(header["__metadata__"]["config"])
config["model"] = "@nested@"
nested = "[" * depth + "]" * depth
header["__metadata__"]["config"] = json.dumps(config).replace('"@nested@"', nested)
# Its checksums would refuse the edit first: without them, it is as a checkpoint written before.
header["__metadata__"].pop("uwaga.metadata_crc32", None)
text = json.dumps(header).encode()
text += b" " * (-(8 + len(text)) % 8)  # the data section starts 8-byte aligned
open(out, "wb").write(struct.pack("<Q", len(text)) + text + data[8 + length:])
