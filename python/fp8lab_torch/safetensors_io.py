"""Reading safetensors files: the `safetensors` package when it is installed, else a small reader
of the format (a little-endian u64 header length, a JSON header, the raw little-endian tensor
bytes) that trusts nothing in the file."""
import importlib.util
import json
import os
import struct

import torch

DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
          "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32, "I16": torch.int16,
          "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}


class SafetensorsError(ValueError):
    """A file that is not valid safetensors; the message names the file and the tensor."""


def read_header(path):
    """(header dict without __metadata__, metadata dict, data start offset), from the header
    alone."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise SafetensorsError(f"{path}: {size} bytes, too short for a safetensors header")
        (n,) = struct.unpack("<Q", head)
        if n > size - 8:
            raise SafetensorsError(f"{path}: header length {n} exceeds the file's {size} bytes")
        try:
            header = json.loads(f.read(n))
        except ValueError as e:
            raise SafetensorsError(f"{path}: the header is not JSON: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: the header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    return header, metadata, 8 + n


def _read_plain(path):
    header, metadata, start = read_header(path)
    data_size = os.path.getsize(path) - start
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    tensors = {}
    for name, entry in header.items():
        try:
            dtype = DTYPES[entry["dtype"]]
            shape = [int(d) for d in entry["shape"]]
            begin, end = (int(o) for o in entry["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise SafetensorsError(f"{path}: tensor '{name}' has a malformed entry {entry}") from None
        numel = 1
        for d in shape:
            numel *= d
        itemsize = torch.empty((), dtype=dtype).element_size()
        if any(d < 0 for d in shape) or not 0 <= begin <= end <= data_size or \
                end - begin != numel * itemsize:
            raise SafetensorsError(f"{path}: tensor '{name}' {entry['dtype']}{shape} does not fit "
                                   f"offsets [{begin}, {end}) of a {data_size}-byte data section")
        buf = bytearray(data[begin:end])
        flat = torch.frombuffer(buf, dtype=dtype) if numel else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(shape)
    return tensors, metadata


def read_safetensors(path):
    """({name: CPU tensor}, metadata dict) of a safetensors file."""
    try:
        from safetensors import safe_open
    except ImportError:
        return _read_plain(path)
    try:
        with safe_open(path, framework="pt") as f:
            return {k: f.get_tensor(k) for k in f.keys()}, dict(f.metadata() or {})
    except Exception as e:  # the package's own error types differ between versions
        raise SafetensorsError(f"{path}: {e}") from None


def using_safetensors_package():
    return importlib.util.find_spec("safetensors") is not None
