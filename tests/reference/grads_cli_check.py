#!/usr/bin/env python3
"""`fp8lab grads` end to end on the CPU, checked with numpy only (CTest grads_cli_numpy).

Trains a tiny checkpoint (2 steps), writes grads files under several precisions, and checks:
  * the file: format metadata, every tensor present with its dtype and shape, tokens in
    [0, vocab), targets = the inputs shifted by one, the same seed -> the same batch (another
    seed -> another batch), the stored loss = the metadata loss;
  * the loss against an independent float64 numpy forward of the checkpoint (written from
    docs/checkpoint-format.md): relative error <= 1e-5 (compute fp32), 5e-3 (mixed bf16),
    3e-2 (mixed fp8-mlp / fp8-linears);
  * the fp32-compute gradients by central finite differences of that float64 loss, per tensor:
    along the gradient's own direction (|D_g L - ||g||| <= 1e-3 ||g||) and along two random
    unit directions r (|D_r L - <g, r>| <= 3e-2 ||g|| / sqrt(n) + 1e-9, i.e. a few percent of the
    typical size of <g, r>);
  * the mixed-precision gradients against the fp32-compute ones: per tensor relative Frobenius
    error <= 5e-2 (bf16), 3e-1 (fp8-mlp, fp8-linears);
  * --mlp-recompute gives the same gradient bits as keeping the MLP, --pointwise-recompute the
    same loss and gradient bits as keeping the RMSNorm and GELU outputs (bf16, fp8-mlp with MLP
    recompute), --residual-recompute the same as keeping the sums after attention (bf16, fp8-mlp
    with MLP and pointwise recompute), --qkv-recompute the same as keeping q, k and v (bf16,
    fp8-mlp with MLP recompute), --fp8-weights-from-master the same as the working copy
    (fp8-linears), and the metadata records the options;
  * --grads bf16 (bf16 and fp8-linears): the same loss, the metadata says so, every value is a
    bf16 widened, and each gradient is the fp32-gradient run's rounded once to nearest even, but
    for the tied wte, written twice (LM head, then embedding): relative Frobenius error <= 1e-2.
Usage: grads_cli_check.py --fp8lab BIN --workdir DIR
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)
        print("FAIL: " + msg, file=sys.stderr)


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    meta = header.pop("__metadata__", {})
    kinds = {"F32": "<f4", "I32": "<i4", "F64": "<f8", "U16": "<u2"}
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        out[name] = (e["dtype"], np.frombuffer(data[b:end], dtype=kinds[e["dtype"]]).reshape(e["shape"]))
    return meta, out


# ---- float64 model (docs/checkpoint-format.md) -----------------------------------------------


def layout_names(cfg):
    names = ["wte.weight", "wpe.weight"]
    for i in range(cfg["n_layers"]):
        p = f"blocks.{i}."
        names += [p + s for s in ("ln1.weight", "attn.qkv.weight", "attn.proj.weight",
                                  "ln2.weight", "mlp.fc.weight", "mlp.proj.weight")]
    return names + ["ln_f.weight"]


def loss64(cfg, w, inputs, targets):
    eps, D, H = cfg["norm_eps"], cfg["d_model"], cfg["n_heads"]
    hd = D // H
    B, T = inputs.shape

    def rms(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g

    def gelu(u):
        return 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))

    x = w["wte.weight"][inputs] + w["wpe.weight"][:T]
    mask = np.tril(np.ones((T, T), dtype=bool))
    for i in range(cfg["n_layers"]):
        p = f"blocks.{i}."
        qkv = rms(x, w[p + "ln1.weight"]) @ w[p + "attn.qkv.weight"].T
        q, k, v = (qkv[..., j * D:(j + 1) * D].reshape(B, T, H, hd).transpose(0, 2, 1, 3)
                   for j in range(3))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
        s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)) @ v
        x = x + a.transpose(0, 2, 1, 3).reshape(B, T, D) @ w[p + "attn.proj.weight"].T
        h = gelu(rms(x, w[p + "ln2.weight"]) @ w[p + "mlp.fc.weight"].T)
        x = x + h @ w[p + "mlp.proj.weight"].T
    logits = rms(x, w["ln_f.weight"]) @ w["wte.weight"].T
    m = logits.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))[..., 0]
    picked = np.take_along_axis(logits, targets[..., None], -1)[..., 0]
    return float((lse - picked).mean())


# ---- the checks ------------------------------------------------------------------------------


def round_to_bf16(x):
    """f32 -> bf16 (round to nearest, ties to even) -> f32, for finite x."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return r.astype(np.uint32).view(np.float32)


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(r.stdout, file=sys.stderr)
        sys.exit(f"command failed ({r.returncode}): {' '.join(cmd)}")
    return r.stdout


def check_file(path, cfg, batch):
    meta, t = read_safetensors(path)
    V, T = cfg["vocab_size"], cfg["seq_len"]
    check(meta.get("format") == "fp8lab-grads", f"{path}: format {meta.get('format')}")
    for key in ("policy", "compute", "backend", "seed", "params_sha256", "loss", "model_config"):
        check(key in meta, f"{path}: metadata lacks {key}")
    check(json.loads(meta.get("model_config", "{}")) == cfg, f"{path}: model_config differs")
    expected = {"inputs": ("I32", (batch, T)), "targets": ("I32", (batch, T)), "loss": ("F32", (1,))}
    shapes = {"wte.weight": (V, cfg["d_model"]), "wpe.weight": (T, cfg["d_model"])}
    D = cfg["d_model"]
    for name in layout_names(cfg):
        shape = shapes.get(name)
        if shape is None:
            shape = {"ln1.weight": (D,), "ln2.weight": (D,), "attn.qkv.weight": (3 * D, D),
                     "attn.proj.weight": (D, D), "mlp.fc.weight": (4 * D, D),
                     "mlp.proj.weight": (D, 4 * D)}.get(name.split(".", 2)[-1], (D,))
        expected["grad." + name] = ("F32", shape)
    check(set(t) == set(expected), f"{path}: tensors {sorted(set(t) ^ set(expected))} missing or extra")
    for name, (dtype, shape) in expected.items():
        if name in t:
            check(t[name][0] == dtype and t[name][1].shape == shape,
                  f"{path}: {name} is {t[name][0]} {t[name][1].shape}, want {dtype} {shape}")
    arrays = {k: v[1] for k, v in t.items()}
    inp, tgt = arrays["inputs"], arrays["targets"]
    check(inp.min() >= 0 and inp.max() < V and tgt.min() >= 0 and tgt.max() < V,
          f"{path}: tokens outside [0, {V})")
    check(np.array_equal(tgt[:, :-1], inp[:, 1:]), f"{path}: targets are not the next tokens")
    check(abs(float(arrays["loss"][0]) - float(np.float32(float(meta["loss"])))) == 0,
          f"{path}: loss tensor {arrays['loss'][0]} != metadata loss {meta['loss']}")
    for name in layout_names(cfg):
        g = arrays["grad." + name]
        check(np.isfinite(g).all() and np.abs(g).max() > 0, f"{path}: grad.{name} not finite or zero")
    return meta, arrays


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fp8lab", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    work = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fp8lab = args.fp8lab
    run([fp8lab, "train", "--preset", "tiny", "--steps", "2", "--set", "model.d_model=32",
         "--set", "model.n_layers=2", "--set", "model.n_heads=2", "--set", "model.seq_len=16",
         "--set", "model.vocab_size=97", "--set", "train.micro_batch=2", "--no-progress",
         "--out", os.path.join(work, "run")])
    batch, seed = 3, 5
    files = {}
    arms = {"fp32": ["--policy", "bf16", "--compute", "fp32"],
            "bf16": ["--policy", "bf16"],
            "fp8-mlp": ["--policy", "fp8-mlp"],
            "fp8-mlp-recompute": ["--policy", "fp8-mlp", "--mlp-recompute"],
            "fp8-linears": ["--policy", "fp8-linears"],
            "bf16-pointwise": ["--policy", "bf16", "--pointwise-recompute"],
            "fp8-mlp-recompute-pointwise": ["--policy", "fp8-mlp", "--mlp-recompute",
                                            "--pointwise-recompute"],
            "bf16-residual": ["--policy", "bf16", "--residual-recompute"],
            "fp8-mlp-recompute-pointwise-residual": ["--policy", "fp8-mlp", "--mlp-recompute",
                                                     "--pointwise-recompute",
                                                     "--residual-recompute"],
            "bf16-qkv": ["--policy", "bf16", "--qkv-recompute"],
            "fp8-mlp-recompute-qkv": ["--policy", "fp8-mlp", "--mlp-recompute", "--qkv-recompute"],
            "fp8-linears-from-master": ["--policy", "fp8-linears", "--fp8-weights-from-master"],
            "bf16-grads": ["--policy", "bf16", "--grads", "bf16"],
            "fp8-linears-grads": ["--policy", "fp8-linears", "--grads", "bf16"]}
    for arm, extra in arms.items():
        files[arm] = os.path.join(work, arm + ".safetensors")
        run([fp8lab, "grads", "--checkpoint", os.path.join(work, "run"), "--backend", "cpu",
             "--batch", str(batch), "--seed", str(seed), "--out", files[arm]] + extra)
    other = os.path.join(work, "seed6.safetensors")
    run([fp8lab, "grads", "--checkpoint", os.path.join(work, "run"), "--batch", str(batch),
         "--seed", "6", "--out", other])

    ckpt_dir = os.path.join(work, "run", "checkpoints")
    ckpt_dir = os.path.join(ckpt_dir, open(os.path.join(ckpt_dir, "latest")).read().strip())
    wmeta, wt = read_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    cfg = json.loads(wmeta["model_config"])
    w64 = {k: v[1].astype(np.float64) for k, v in wt.items()}

    got = {arm: check_file(path, cfg, batch) for arm, path in files.items()}
    _, other_arrays = check_file(other, cfg, batch)
    inputs, targets = got["fp32"][1]["inputs"], got["fp32"][1]["targets"]
    for arm in arms:
        check(np.array_equal(got[arm][1]["inputs"], inputs), f"{arm}: another batch for the same seed")
    check(not np.array_equal(other_arrays["inputs"], inputs), "seed 6 drew the same batch as seed 5")

    ref = loss64(cfg, w64, inputs.astype(np.int64), targets.astype(np.int64))
    loss_bounds = {"fp32": 1e-5, "bf16": 5e-3, "fp8-mlp": 3e-2, "fp8-mlp-recompute": 3e-2,
                   "fp8-linears": 3e-2}
    for arm, bound in loss_bounds.items():
        loss = float(got[arm][0]["loss"])
        rel = abs(loss - ref) / abs(ref)
        print(f"loss {arm:18s} fp8lab {loss:.9f} float64 {ref:.9f} rel {rel:.2e} (bound {bound:g})")
        check(rel <= bound, f"{arm}: loss relative error {rel:.3g} > {bound:g}")

    # fp32 compute: finite differences of the float64 loss.
    rng = np.random.default_rng(1234)
    g32 = got["fp32"][1]
    step = 1e-4
    idx, tgt = inputs.astype(np.int64), targets.astype(np.int64)

    def directional(name, direction):
        base = w64[name]
        w64[name] = base + step * direction
        up = loss64(cfg, w64, idx, tgt)
        w64[name] = base - step * direction
        down = loss64(cfg, w64, idx, tgt)
        w64[name] = base
        return (up - down) / (2 * step)

    for name in layout_names(cfg):
        g = g32["grad." + name].astype(np.float64)
        gn = np.linalg.norm(g)
        along = directional(name, g / gn)
        rel = abs(along - gn) / gn
        worst_r = 0.0
        for _ in range(2):
            r = rng.standard_normal(g.shape)
            r /= np.linalg.norm(r)
            tol = 3e-2 * gn / np.sqrt(g.size) + 1e-9
            err = abs(directional(name, r) - float((g * r).sum()))
            worst_r = max(worst_r, err / tol)
            check(err <= tol, f"fp32 grad.{name}: random-direction derivative off by {err:.3g} "
                              f"(bound {tol:.3g})")
        print(f"fd   grad.{name:28s} along-g rel {rel:.2e}  random err/bound {worst_r:.2e}")
        check(rel <= 1e-3, f"fp32 grad.{name}: derivative along g {along:.9g} vs |g| {gn:.9g}")

    grad_bounds = {"bf16": 5e-2, "fp8-mlp": 3e-1, "fp8-linears": 3e-1}
    for arm, bound in grad_bounds.items():
        worst = max((np.linalg.norm(got[arm][1]["grad." + n].astype(np.float64) - g32["grad." + n])
                     / np.linalg.norm(g32["grad." + n]), n) for n in layout_names(cfg))
        print(f"grad {arm:12s} worst relative error vs fp32 compute {worst[0]:.3e} ({worst[1]}), "
              f"bound {bound:g}")
        check(worst[0] <= bound, f"{arm}: grad.{worst[1]} relative error {worst[0]:.3g} > {bound:g}")
    for n in layout_names(cfg):
        check(np.array_equal(got["fp8-mlp"][1]["grad." + n], got["fp8-mlp-recompute"][1]["grad." + n]),
              f"--mlp-recompute changed grad.{n}")
    for key, kept, rebuilt in (
            ("pointwise_recompute", "bf16", "bf16-pointwise"),
            ("pointwise_recompute", "fp8-mlp-recompute", "fp8-mlp-recompute-pointwise"),
            ("residual_recompute", "bf16", "bf16-residual"),
            ("residual_recompute", "fp8-mlp-recompute-pointwise",
             "fp8-mlp-recompute-pointwise-residual"),
            ("qkv_recompute", "bf16", "bf16-qkv"),
            ("qkv_recompute", "fp8-mlp-recompute", "fp8-mlp-recompute-qkv"),
            ("fp8_weights_from_master", "fp8-linears", "fp8-linears-from-master")):
        check(got[kept][0]["loss"] == got[rebuilt][0]["loss"], f"{rebuilt}: the loss changed")
        check(got[kept][0].get(key) == "false" and got[rebuilt][0].get(key) == "true",
              f"{rebuilt}: metadata {key} {got[rebuilt][0].get(key)}")
        for n in layout_names(cfg):
            check(np.array_equal(got[kept][1]["grad." + n], got[rebuilt][1]["grad." + n]),
                  f"--{key.replace('_', '-')} changed grad.{n} ({kept})")
    check(got["fp8-mlp-recompute"][0].get("mlp_recompute") == "true", "metadata mlp_recompute")

    for f32_arm, bf16_arm in (("bf16", "bf16-grads"), ("fp8-linears", "fp8-linears-grads")):
        check(got[f32_arm][0]["loss"] == got[bf16_arm][0]["loss"], f"{bf16_arm}: the loss changed")
        check(got[f32_arm][0].get("grads") == "fp32" and got[bf16_arm][0].get("grads") == "bf16",
              f"{bf16_arm}: metadata grads {got[bf16_arm][0].get('grads')}")
        for n in layout_names(cfg):
            g = got[bf16_arm][1]["grad." + n]
            ref = got[f32_arm][1]["grad." + n]
            check(not (g.view(np.uint32) & 0xFFFF).any(), f"{bf16_arm}: grad.{n} holds non-bf16 values")
            if n == "wte.weight":
                rel = np.linalg.norm(g.astype(np.float64) - ref) / np.linalg.norm(ref)
                print(f"grad {bf16_arm}: wte relative error vs fp32 gradients {rel:.2e} (bound 1e-2)")
                check(rel <= 1e-2, f"{bf16_arm}: grad.wte.weight relative error {rel:.3g} > 1e-2")
            else:
                check(np.array_equal(g, round_to_bf16(ref)),
                      f"{bf16_arm}: grad.{n} is not the fp32 gradient rounded once")

    print(f"grads_cli_check: {'FAIL, ' + str(len(FAILURES)) + ' problems' if FAILURES else 'OK'}")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
