#!/usr/bin/env python3
"""An external float64 check of fp8lab's loss and gradients in PyTorch.

FpLabGPT (python/fp8lab_torch/model.py) is the model of docs/checkpoint-format.md, parameter for
parameter (its state_dict keys are the checkpoint's tensor names). bench/peers/gpt_peer.py imports
it from here (its SDPA attention, FP8 linears, MLP checkpointing).

The check (run on the GPU machine; needs torch, safetensors, numpy):

  fp8lab grads --checkpoint RUN --policy P [--compute fp32] --batch B --seed S --out g.safetensors
  python3 tests/reference/gpt_torch.py --checkpoint RUN --grads g.safetensors --out report.json

loads the checkpoint's fp32 weights (verifying their SHA-256 against meta.json and against the
grads file's params_sha256, so both sides saw the same bytes), promotes them to float64, runs the
batch stored in the grads file through FpLabGPT with explicit attention math (no SDPA, no autocast,
no TF32) and autograd, and compares:
  loss:  |fp8lab - ref| / |ref|
  grads: per tensor ||g_fp8lab - g_ref||_F / ||g_ref||_F (and the cosine, for diagnosis).
Exit 1 when any is above its bound, 0 otherwise; the JSON report lists every number.

Bounds (relative; the float64 reference is exact for this purpose). They depend on what fp8lab
rounds, given by the grads file's metadata (policy, compute):
  compute fp32          loss 1e-5   grads 1e-4   f32 end to end (a TF32 GEMM would exceed it)
  mixed, bf16           loss 5e-3   grads 5e-2   bf16 activations/weights (u = 2^-8) per op
  mixed, fp8-mlp        loss 2e-2   grads 2e-1   e4m3 X, W (3 mantissa bits) and e5m2 dY (2 bits)
  mixed, fp8-linears    loss 3e-2   grads 3e-1     in the FP8 linears; errors compound over layers
Measured with the CPU backend (tiny model D32 L2 T16 V97 after 2 steps, batch 3; torch 1.13
float64): loss rel 6e-10 / 5e-6 / 3e-5 / 8e-5 and worst tensor 4e-7 / 8e-3 / 9e-2 / 9e-2 for
fp32 / bf16 / fp8-mlp / fp8-linears. These are first settings, to be tightened from GPU runs
(the report prints every error; --loss-bound / --grad-bound override). --mlp-recompute does not
change the bounds: it recomputes the same bits. Nor do bf16 gradients (metadata grads): they
add one rounding of at most 2^-9 relative per element (the tied wte two).
"""
import argparse
import json
import math
import os
import sys

import torch

# The model and the checkpoint reader are python/fp8lab_torch's (bench/peers/gpt_peer.py imports
# FpLabGPT from here).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python"))
from fp8lab_torch.checkpoint import load_checkpoint, resolve_checkpoint  # noqa: E402
from fp8lab_torch.model import FpLabGPT, layout_names  # noqa: E402
from fp8lab_torch.safetensors_io import read_safetensors  # noqa: E402


# ---- reading fp8lab's files ------------------------------------------------------------------


def load_grads(path):
    tensors, metadata = read_safetensors(path)
    if metadata.get("format") != "fp8lab-grads":
        sys.exit(f"gpt_torch.py: {path} is not written by `fp8lab grads` (metadata {metadata})")
    return metadata, tensors


# ---- the check -------------------------------------------------------------------------------

BOUNDS = {  # (compute, policy) -> (loss relative error, per-tensor gradient relative error)
    ("fp32", None): (1e-5, 1e-4),
    ("mixed", "bf16"): (5e-3, 5e-2),
    ("mixed", "fp8-mlp"): (2e-2, 2e-1),
    ("mixed", "fp8-linears"): (3e-2, 3e-1),
}


def bounds_for(metadata):
    compute, policy = metadata.get("compute", "mixed"), metadata.get("policy", "bf16")
    return BOUNDS[("fp32", None)] if compute == "fp32" else BOUNDS[("mixed", policy)]


def reference_loss_and_grads(cfg, weights, inputs, targets, device):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = FpLabGPT(cfg, explicit_attention=True)
    model.load_state_dict(weights, strict=True)
    model = model.to(device=device, dtype=torch.float64)
    idx = inputs.to(device=device, dtype=torch.long)
    tgt = targets.to(device=device, dtype=torch.long)
    loss = model(idx, tgt)  # float64 throughout
    loss.backward()
    grads = {n: p.grad.detach().cpu() for n, p in model.named_parameters()}
    return float(loss.item()), grads


def relative_error(got, want):
    diff = (got - want).norm().item()
    ref = want.norm().item()
    return diff / ref if ref > 0 else (0.0 if diff == 0 else math.inf)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", help="fp8lab run, checkpoints/ or step_N directory "
                   "(default: the one the grads file names)")
    p.add_argument("--grads", required=True, help="the safetensors file of `fp8lab grads`")
    p.add_argument("--out", required=True, help="JSON report")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--loss-bound", type=float, help="override the policy's loss bound")
    p.add_argument("--grad-bound", type=float, help="override the policy's gradient bound")
    args = p.parse_args()

    metadata, g = load_grads(args.grads)
    ckpt = resolve_checkpoint(args.checkpoint or metadata["checkpoint"])
    cfg, weights, meta = load_checkpoint(ckpt)
    if metadata.get("params_sha256") != meta["params_sha256"]:
        sys.exit(f"gpt_torch.py: the grads file was made from weights "
                 f"{metadata.get('params_sha256')}, the checkpoint {ckpt} holds "
                 f"{meta['params_sha256']}")
    inputs, targets = g["inputs"], g["targets"]
    B, T = inputs.shape
    if T != cfg["seq_len"] or tuple(targets.shape) != (B, T):
        sys.exit(f"gpt_torch.py: inputs {tuple(inputs.shape)} / targets {tuple(targets.shape)} "
                 f"do not fit seq_len {cfg['seq_len']}")

    ref_loss, ref_grads = reference_loss_and_grads(cfg, weights, inputs, targets, args.device)
    loss_bound, grad_bound = bounds_for(metadata)
    loss_bound = args.loss_bound if args.loss_bound is not None else loss_bound
    grad_bound = args.grad_bound if args.grad_bound is not None else grad_bound

    fp8lab_loss = float(metadata.get("loss", g["loss"].item()))
    loss_rel = abs(fp8lab_loss - ref_loss) / abs(ref_loss)
    failures = []
    if not loss_rel <= loss_bound:
        failures.append(f"loss: fp8lab {fp8lab_loss:.9g} vs float64 {ref_loss:.9g}, relative "
                        f"error {loss_rel:.3g} > {loss_bound:g}")
    rows = []
    for name in layout_names(cfg):
        key = "grad." + name
        if key not in g:
            failures.append(f"{key} missing from {args.grads}")
            continue
        got = g[key].to(torch.float64)
        want = ref_grads[name]
        if tuple(got.shape) != tuple(want.shape):
            failures.append(f"{key}: shape {tuple(got.shape)}, the parameter is "
                            f"{tuple(want.shape)}")
            continue
        rel = relative_error(got, want)
        cos = torch.nn.functional.cosine_similarity(got.flatten(), want.flatten(), dim=0).item()
        ok = bool(rel <= grad_bound)  # NaN fails
        rows.append({"name": name, "rel_err": rel, "cosine": cos, "ref_norm": want.norm().item(),
                     "fp8lab_norm": got.norm().item(),
                     "max_abs_err": (got - want).abs().max().item(), "ok": ok})
        if not ok:
            failures.append(f"{key}: relative error {rel:.3g} > {grad_bound:g} (cosine {cos:.6f})")

    report = {
        "checkpoint": os.path.abspath(ckpt), "grads": os.path.abspath(args.grads),
        "torch": torch.__version__, "device": args.device,
        "fp8lab": {k: metadata.get(k) for k in ("policy", "compute", "mlp_recompute", "backend",
                                                 "seed", "batch", "step")},
        "batch": [B, T],
        "loss": {"fp8lab": fp8lab_loss, "reference": ref_loss, "rel_err": loss_rel,
                 "bound": loss_bound},
        "grad_bound": grad_bound,
        "max_grad_rel_err": max((r["rel_err"] for r in rows), default=None),
        "tensors": rows,
        "failures": failures,
        "pass": not failures,
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"gpt_torch: policy {metadata.get('policy')} compute {metadata.get('compute')} "
          f"backend {metadata.get('backend')}: loss fp8lab {fp8lab_loss:.9f} float64 "
          f"{ref_loss:.9f} (rel {loss_rel:.3g}, bound {loss_bound:g})")
    for r in rows:
        print(f"  {r['name']:32s} rel {r['rel_err']:.3e}  cos {r['cosine']:.6f}"
              f"{'' if r['ok'] else '  FAIL'}")
    print(f"gpt_torch: {'PASS' if not failures else 'FAIL'} (gradient bound {grad_bound:g}); "
          f"report {args.out}")
    for msg in failures:
        print("  " + msg, file=sys.stderr)
    sys.exit(0 if not failures else 1)


if __name__ == "__main__":
    main()
