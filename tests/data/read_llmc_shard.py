#!/usr/bin/env python3
"""An independent reader of llm.c-layout token shards (numpy when present, else the array
module): prints `count sha256-of-the-uint16-payload first-token last-token` for a shard, after
checking the header as llm.c's loader does. Used by test_data's ShardFormat tests."""
import hashlib
import sys

HEADER_INTS = 256


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        import numpy as np
        header = np.frombuffer(data[: HEADER_INTS * 4], dtype="<i4")
        tokens = np.frombuffer(data[HEADER_INTS * 4:], dtype="<u2")
        payload, first, last = tokens.tobytes(), int(tokens[0]), int(tokens[-1])
        magic, version, count = int(header[0]), int(header[1]), int(header[2])
    except ImportError:
        import array
        header = array.array("i")
        header.frombytes(data[: HEADER_INTS * 4])
        tokens = array.array("H")
        tokens.frombytes(data[HEADER_INTS * 4:])
        if sys.byteorder != "little":
            header.byteswap()
            tokens.byteswap()
        payload, first, last = data[HEADER_INTS * 4:], tokens[0], tokens[-1]
        magic, version, count = header[0], header[1], header[2]
    assert magic == 20240520, f"bad magic {magic}"
    assert version == 1, f"bad version {version}"
    assert count == len(tokens), f"header says {count} tokens, file holds {len(tokens)}"
    print(count, hashlib.sha256(payload).hexdigest(), first, last)


if __name__ == "__main__":
    read(sys.argv[1])
