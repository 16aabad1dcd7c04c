"""Losses as `fp8lab eval` computes them: cross-entropy over next-token targets, excluding
<|endoftext|> for GPT-2 vocabularies, on held-out token shards read the way fp8lab reads them.

Shards are llm.c's .bin files (256 int32 header words [20240520, 1, N, ...], then N uint16
tokens), given as one file, a directory of <split>_*.bin or a manifest.json. Their tokens are
concatenated and cut into rows of seq_len + 1 consecutive tokens at stride seq_len (inputs the
first seq_len, targets the last), in order, in batches of batch_rows; the last batch may be
short. So every token but the first is a target exactly once.
"""
import json
import math
import os

import numpy as np
import torch

SHARD_MAGIC = 20240520
GPT2_END_OF_TEXT = 50256


def list_shards(data, split="val"):
    """The shard files of `split`: a .bin as it is, a manifest.json's listed files, or a
    directory's <split>_*.bin in name order (fp8lab's list_shards)."""
    data = os.fspath(data)
    if not os.path.exists(data):
        raise FileNotFoundError(f"data path {data} does not exist")
    if os.path.isfile(data):
        if not data.endswith(".json"):
            return [data]
        with open(data) as f:
            manifest = json.load(f)
        if split not in manifest.get("splits", {}):
            raise ValueError(f"manifest {data} has no split '{split}'")
        base = os.path.dirname(data)
        return [os.path.join(base, s["file"]) for s in manifest["splits"][split]["shards"]]
    found = sorted(n for n in os.listdir(data) if n.startswith(split + "_") and n.endswith(".bin"))
    if not found:
        raise FileNotFoundError(f"no {split}_*.bin shards in {data}")
    return [os.path.join(data, n) for n in found]


def read_shard(path):
    """The tokens of one llm.c .bin shard, as a numpy uint16 array."""
    raw = np.fromfile(path, dtype="<u2")
    header = raw[:512].view("<i4") if raw.size >= 512 else None
    if header is None or header[0] != SHARD_MAGIC or header[1] != 1:
        raise ValueError(f"{path} is not an llm.c token shard (magic {SHARD_MAGIC}, version 1)")
    count = int(header[2])
    if raw.size - 512 != count:
        raise ValueError(f"{path}: the header says {count} tokens, the file holds {raw.size - 512}")
    return raw[512:]


def excluded_token(spec, vocab_size):
    """fp8lab eval's --exclude-token: "auto" (<|endoftext|> for GPT-2-sized vocabularies, nothing
    for byte-level ones), "none" or an id."""
    if spec == "none" or spec is None:
        return None
    if spec == "auto":
        return GPT2_END_OF_TEXT if vocab_size > GPT2_END_OF_TEXT else None
    return int(spec)


def loss_sums(model, inputs, targets, ignore=None):
    """(sum of -ln p(target) over counted targets, count) for one batch: inputs and targets
    [B, T] int64. Targets equal to `ignore` are not counted. The sum is in float64 from the
    model's logits."""
    logits = model(inputs).double()
    nll = torch.logsumexp(logits, dim=-1) - logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    counted = torch.ones_like(targets, dtype=torch.bool) if ignore is None else targets != ignore
    return float(nll[counted].sum().item()), int(counted.sum().item())


@torch.no_grad()
def evaluate(model, data, split="val", batch_rows=8, max_batches=0, exclude_token="auto"):
    """fp8lab eval's cross-entropy (nats per counted target) and perplexity of `model` (an
    FpLabGPT) on held-out shards. Returns a dict: ce, perplexity, loss_sum, targets_counted,
    targets_total, batches, rows, excluded_token."""
    cfg = model.cfg
    T = cfg["seq_len"]
    tokens = np.concatenate([read_shard(p) for p in list_shards(data, split)])
    if tokens.size and int(tokens.max()) >= cfg["vocab_size"]:
        raise ValueError(f"{data}: token {int(tokens.max())} is outside the model's vocabulary "
                         f"of {cfg['vocab_size']}")
    rows = (tokens.size - 1) // T if tokens.size else 0
    if rows == 0:
        raise ValueError(f"the {split} split at {data} yields no full row of {T + 1} tokens")
    ignore = excluded_token(exclude_token, cfg["vocab_size"])
    device = next(model.parameters()).device
    total, counted, targets_total, batches = 0.0, 0, 0, 0
    for first in range(0, rows, batch_rows):
        if max_batches and batches >= max_batches:
            break
        n = min(batch_rows, rows - first)
        idx = np.stack([tokens[(first + r) * T:(first + r) * T + T + 1] for r in range(n)])
        batch = torch.from_numpy(idx.astype(np.int64)).to(device)
        s, c = loss_sums(model, batch[:, :-1], batch[:, 1:], ignore)
        total += s
        counted += c
        targets_total += n * T
        batches += 1
    ce = total / counted
    return {"ce": ce, "perplexity": math.exp(ce), "loss_sum": total, "targets_counted": counted,
            "targets_total": targets_total, "batches": batches,
            "rows": min(rows, batches * batch_rows), "excluded_token": ignore}
