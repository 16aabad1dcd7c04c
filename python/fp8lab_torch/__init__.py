"""fp8lab checkpoints in PyTorch (any version from 1.13), pure Python.

    import fp8lab_torch
    model = fp8lab_torch.load("runs/tiny")           # a run, checkpoints/ or step_N directory
    logits = model(idx)                              # idx: [B, T] int64 -> [B, T, vocab]

fp8lab_torch.evaluate(model, "data/cache/kjv/byte") scores it as `fp8lab eval` does; with
load(..., mixed=True) the numbers are fp8lab's to summation order. docs/checkpoint-format.md
describes the files; safetensors are read with the `safetensors` package when it is installed,
else with a small reader of the format.

fp8lab_torch.Linear(in_features, out_features, recipe="tensorwise") is fp8lab's FP8 linear layer
as a drop-in for nn.Linear(bias=False), through libfp8lab_linear.so (linear.py says where it is
looked for).
"""
from .checkpoint import (CheckpointError, config_differences, load, load_checkpoint,
                         params_sha256, resolve_checkpoint)
from .evaluate import evaluate, excluded_token, list_shards, loss_sums, read_shard
from .linear import Linear
from .model import FpLabGPT, causal_attention, layout_names, parameter_shapes
from .safetensors_io import SafetensorsError, read_safetensors, using_safetensors_package

__all__ = ["CheckpointError", "FpLabGPT", "Linear", "SafetensorsError", "causal_attention",
           "config_differences", "evaluate", "excluded_token", "layout_names", "list_shards",
           "load", "load_checkpoint", "loss_sums", "parameter_shapes", "params_sha256",
           "read_safetensors", "read_shard", "resolve_checkpoint", "using_safetensors_package"]
