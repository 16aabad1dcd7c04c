"""fp8lab checkpoints (docs/checkpoint-format.md) read into PyTorch, checked as fp8lab checks them
on load: the weights file's hash against meta.json, its model config against meta.json's, every
tensor's name, dtype and shape, and the SHA-256 of the loaded weights."""
import hashlib
import json
import os

import torch

from .model import FpLabGPT, layout_names, parameter_shapes
from .safetensors_io import read_safetensors

MODEL_CONFIG_KEYS = ("vocab_size", "d_model", "n_layers", "n_heads", "seq_len", "norm_eps",
                     "init_std")


class CheckpointError(ValueError):
    """A checkpoint fp8lab_torch will not load; the message names the file and the problem."""


def resolve_checkpoint(where):
    """A step_N directory, a checkpoints/ directory or a run directory -> the step_N directory
    (as fp8lab's resolve_checkpoint_dir). A .safetensors file is returned as it is."""
    where = os.fspath(where)
    if not os.path.exists(where):
        raise CheckpointError(f"checkpoint path '{where}' does not exist")
    if os.path.isfile(where) or os.path.exists(os.path.join(where, "meta.json")):
        return where
    for d in (where, os.path.join(where, "checkpoints")):
        latest = os.path.join(d, "latest")
        if os.path.exists(latest):
            with open(latest) as f:
                return os.path.join(d, f.read().strip())
    raise CheckpointError(f"'{where}' is neither a checkpoint (no meta.json) nor a run or "
                          f"checkpoints directory with a 'latest' checkpoint")


def config_differences(got, want, want_label):
    """' key got (want_label: want);' for every model config field that differs, '' when none
    does."""
    return "".join(f" {k} {got.get(k)} ({want_label}: {want.get(k)});" for k in MODEL_CONFIG_KEYS
                   if got.get(k) != want.get(k))


def params_sha256(cfg, weights):
    """fp8lab's params_sha256: the fp32 weights in layout order, little-endian."""
    h = hashlib.sha256()
    for name in layout_names(cfg):
        h.update(weights[name].detach().to("cpu", torch.float32).contiguous().numpy()
                 .astype("<f4", copy=False).tobytes())
    return h.hexdigest()


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_weights(cfg, weights, source):
    """Every parameter of cfg present as float32 of its shape, and nothing else."""
    shapes = parameter_shapes(cfg)
    missing = [n for n in shapes if n not in weights]
    extra = [n for n in weights if n not in shapes]
    if missing or extra:
        raise CheckpointError(f"{source}: tensors missing {missing[:4]}, unexpected {extra[:4]}")
    for name, shape in shapes.items():
        t = weights[name]
        if t.dtype != torch.float32 or tuple(t.shape) != shape:
            raise CheckpointError(f"{source}: '{name}' is {t.dtype}{list(t.shape)}, the model "
                                  f"config wants torch.float32{list(shape)}")


def load_checkpoint(where, verify=True):
    """(model_config dict, {name: float32 CPU tensor}, meta dict or None) of a run, checkpoints/
    or step_N directory, or of a weights file (fp8lab's save_weights: no meta.json). verify: the
    file and weight hashes too (what fp8lab checks; costs one pass over the bytes)."""
    path = resolve_checkpoint(where)
    meta = None
    weights_file = path
    if os.path.isdir(path):
        weights_file = os.path.join(path, "model.safetensors")
        with open(os.path.join(path, "meta.json")) as f:
            meta = json.load(f)
        if meta.get("format") != "fp8lab-checkpoint":
            raise CheckpointError(f"{path}/meta.json is not an fp8lab checkpoint's "
                                  f"(format {meta.get('format')!r})")
        if verify and file_sha256(weights_file) != meta["files"]["model.safetensors"]:
            raise CheckpointError(f"{weights_file} does not hash to the SHA-256 meta.json "
                                  f"records: the file is corrupt or was replaced")
    weights, metadata = read_safetensors(weights_file)
    if metadata.get("format") != "fp8lab-gpt" or "model_config" not in metadata:
        raise CheckpointError(f"{weights_file} is not an fp8lab weights file "
                              f"(metadata {metadata})")
    cfg = json.loads(metadata["model_config"])
    if meta is not None:
        diff = config_differences(cfg, meta["config"]["model"], "meta.json")
        if diff:
            raise CheckpointError(f"{weights_file} holds a model of another config:{diff}")
    check_weights(cfg, weights, weights_file)
    if verify and meta is not None and params_sha256(cfg, weights) != meta["params_sha256"]:
        raise CheckpointError(f"{weights_file}: the weights do not hash to meta.json's "
                              f"params_sha256 {meta['params_sha256']}")
    return cfg, weights, meta


def load(run_or_checkpoint, *, device="cpu", dtype=torch.float32, mixed=False,
         explicit_attention=False, expect_config=None, verify=True):
    """An fp8lab run's model as a torch.nn.Module (FpLabGPT, in eval mode), with its weights.

    run_or_checkpoint: a run directory (its latest checkpoint), its checkpoints/ directory, one
    step_N checkpoint, or a weights .safetensors file. mixed: compute as fp8lab's mixed precision
    (FpLabGPT). expect_config: a model config (dict) the checkpoint must have; any differing field
    is a CheckpointError naming it. The model's .fp8lab holds the checkpoint path, step and run
    config."""
    if mixed and dtype != torch.float32:
        raise ValueError(f"mixed=True emulates fp8lab's float32 compute; dtype is {dtype}")
    cfg, weights, meta = load_checkpoint(run_or_checkpoint, verify)
    if expect_config is not None:
        diff = config_differences(cfg, dict(expect_config), "expected")
        if diff:
            raise CheckpointError(f"{resolve_checkpoint(run_or_checkpoint)} was made for another "
                                  f"model config:{diff}")
    model = FpLabGPT(cfg, explicit_attention=explicit_attention, mixed=mixed)
    model.load_state_dict(weights, strict=True)
    model = model.to(device=device, dtype=dtype).eval()
    model.fp8lab = {"checkpoint": resolve_checkpoint(run_or_checkpoint),
                    "step": meta["step"] if meta else None,
                    "config": meta["config"] if meta else {"model": cfg}}
    return model
