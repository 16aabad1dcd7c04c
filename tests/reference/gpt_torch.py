#!/usr/bin/env python3
"""The fp8lab GPT in PyTorch, and an external float64 check of fp8lab's loss and gradients.

FpLabGPT is the model of docs/checkpoint-format.md, parameter for parameter (its state_dict keys
are the checkpoint's tensor names): token + learned position embedding; pre-norm blocks of
RMSNorm (weight only, eps = norm_eps), causal multi-head attention with a fused qkv weight
[3D, D] (rows q | k | v, each split into n_heads heads of D / n_heads rows) and an output
projection, RMSNorm, MLP 4x with tanh-GELU; a final RMSNorm; the LM head tied to wte. No biases.
bench/peers/gpt_peer.py imports it (its SDPA attention, FP8 linears, MLP checkpointing).

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
change the bounds: it recomputes the same bits.
"""
import argparse
import hashlib
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

# ---- the model -------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    """y = x * rsqrt(mean(x^2) + eps) * weight (no bias, no mean subtraction)."""

    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Linear(nn.Module):
    """A bias-free linear y = x @ weight.T whose GEMM is pluggable: `fn(x, weight)`.

    F.linear by default; the peer plugs in its FP8 autograd function. Keeping the parameter here
    (and not in nn.Linear) leaves the state_dict names exactly the checkpoint's."""

    def __init__(self, in_features, out_features, fn=None):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.fn = fn

    def forward(self, x):
        return F.linear(x, self.weight) if self.fn is None else self.fn(x, self.weight)


class Attention(nn.Module):
    def __init__(self, d_model, n_heads, explicit, linear_fn=None):
        super().__init__()
        self.n_heads = n_heads
        self.explicit = explicit
        self.qkv = Linear(d_model, 3 * d_model, linear_fn)
        self.proj = Linear(d_model, d_model, linear_fn)

    def forward(self, x):
        B, T, D = x.shape
        H = self.n_heads
        q, k, v = self.qkv(x).split(D, dim=-1)
        q, k, v = (t.reshape(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        if self.explicit:
            # The reference: plain math, in whatever dtype the model runs (float64 for the check).
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(D // H)
            causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            scores = scores.masked_fill(~causal, float("-inf"))
            a = torch.softmax(scores, dim=-1) @ v
        else:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(a.transpose(1, 2).reshape(B, T, D))


class Mlp(nn.Module):
    def __init__(self, d_model, linear_fn=None):
        super().__init__()
        self.fc = Linear(d_model, 4 * d_model, linear_fn)
        self.proj = Linear(4 * d_model, d_model, linear_fn)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg, explicit, attn_linear, mlp_linear, mlp_checkpoint):
        super().__init__()
        self.ln1 = RMSNorm(cfg["d_model"], cfg["norm_eps"])
        self.attn = Attention(cfg["d_model"], cfg["n_heads"], explicit, attn_linear)
        self.ln2 = RMSNorm(cfg["d_model"], cfg["norm_eps"])
        self.mlp = Mlp(cfg["d_model"], mlp_linear)
        self.mlp_checkpoint = mlp_checkpoint

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        h = self.ln2(x)
        if self.mlp_checkpoint and torch.is_grad_enabled():
            # fp8lab's --mlp-recompute: keep the MLP's input, recompute fc/gelu/proj in backward.
            m = torch.utils.checkpoint.checkpoint(self.mlp, h, use_reentrant=False)
        else:
            m = self.mlp(h)
        return x + m


class FpLabGPT(nn.Module):
    """fp8lab's GPT. cfg: the checkpoint's model_config (vocab_size, d_model, n_layers, n_heads,
    seq_len, norm_eps). explicit_attention: softmax(q k^T / sqrt(hd) + causal mask) v written out
    (the reference) instead of F.scaled_dot_product_attention. attn_linear / mlp_linear: optional
    GEMM functions fn(x, w) for the attention and MLP linears (the LM head always uses F.linear).
    mlp_checkpoint: recompute the MLP in backward (torch.utils.checkpoint)."""

    def __init__(self, cfg, explicit_attention=False, attn_linear=None, mlp_linear=None,
                 mlp_checkpoint=False):
        super().__init__()
        self.cfg = dict(cfg)
        self.wte = nn.Embedding(cfg["vocab_size"], cfg["d_model"])
        self.wpe = nn.Embedding(cfg["seq_len"], cfg["d_model"])
        self.blocks = nn.ModuleList(
            Block(cfg, explicit_attention, attn_linear, mlp_linear, mlp_checkpoint)
            for _ in range(cfg["n_layers"]))
        self.ln_f = RMSNorm(cfg["d_model"], cfg["norm_eps"])

    def init_weights(self, seed, init_std=0.02):
        """GPT-2 style init (the peer's weights: values do not matter for speed)."""
        g = torch.Generator(device="cpu").manual_seed(seed)
        proj_std = init_std / math.sqrt(2 * self.cfg["n_layers"])
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith(("ln1.weight", "ln2.weight")) or name == "ln_f.weight":
                    p.fill_(1.0)
                    continue
                std = init_std
                if name == "wpe.weight":
                    std = 0.5 * init_std
                elif name.endswith(("attn.proj.weight", "mlp.proj.weight")):
                    std = proj_std
                p.copy_(torch.randn(p.shape, generator=g) * std)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)  # the tied LM head
        if targets is None:
            return logits
        if logits.dtype != torch.float64:
            logits = logits.float()  # the loss in fp32 from bf16 logits, as fp8lab computes it
        return F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))


def layout_names(cfg):
    """Parameter names in fp8lab's layout order (ParameterLayout): the order of the flat buffer
    that params_sha256 hashes."""
    names = ["wte.weight", "wpe.weight"]
    for i in range(cfg["n_layers"]):
        p = f"blocks.{i}."
        names += [p + s for s in ("ln1.weight", "attn.qkv.weight", "attn.proj.weight",
                                  "ln2.weight", "mlp.fc.weight", "mlp.proj.weight")]
    return names + ["ln_f.weight"]


# ---- reading fp8lab's files ------------------------------------------------------------------


def resolve_checkpoint(where):
    """A step_N directory, a checkpoints/ directory or a run directory -> the step_N directory
    (as fp8lab's resolve_checkpoint_dir)."""
    if os.path.exists(os.path.join(where, "meta.json")):
        return where
    for d in (where, os.path.join(where, "checkpoints")):
        latest = os.path.join(d, "latest")
        if os.path.exists(latest):
            with open(latest) as f:
                return os.path.join(d, f.read().strip())
    sys.exit(f"gpt_torch.py: '{where}' is neither a checkpoint (no meta.json) nor a run or "
             f"checkpoints directory with a 'latest' file")


def load_checkpoint(ckpt_dir):
    """(model_config dict, {name: float32 CPU tensor}, meta dict); checks the weights' SHA-256."""
    from safetensors import safe_open

    path = os.path.join(ckpt_dir, "model.safetensors")
    with safe_open(path, framework="pt") as f:
        metadata = f.metadata() or {}
        weights = {k: f.get_tensor(k) for k in f.keys()}
    if metadata.get("format") != "fp8lab-gpt":
        sys.exit(f"gpt_torch.py: {path} is not an fp8lab weights file (metadata {metadata})")
    cfg = json.loads(metadata["model_config"])
    with open(os.path.join(ckpt_dir, "meta.json")) as f:
        meta = json.load(f)
    digest = params_sha256(cfg, weights)
    if digest != meta["params_sha256"]:
        sys.exit(f"gpt_torch.py: weights in {path} hash to {digest}, meta.json records "
                 f"{meta['params_sha256']}")
    return cfg, weights, meta


def params_sha256(cfg, weights):
    h = hashlib.sha256()
    for name in layout_names(cfg):
        t = weights[name]
        assert t.dtype == torch.float32, (name, t.dtype)
        h.update(t.contiguous().numpy().astype("<f4", copy=False).tobytes())
    return h.hexdigest()


def load_grads(path):
    from safetensors import safe_open

    with safe_open(path, framework="pt") as f:
        metadata = f.metadata() or {}
        tensors = {k: f.get_tensor(k) for k in f.keys()}
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
