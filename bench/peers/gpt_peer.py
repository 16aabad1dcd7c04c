#!/usr/bin/env python3
"""PyTorch peer of `fp8lab bench model`: the same GPT, trained the way a PyTorch user would.

Model: FpLabGPT from tests/reference/gpt_torch.py (fp8lab's exact architecture and parameter
names), attention by F.scaled_dot_product_attention(is_causal=True), the whole model (and its
loss) under torch.compile.

Precision, as fp8lab: fp32 master weights (the nn.Parameters are fp32), bf16 compute through
torch.autocast("cuda", dtype=torch.bfloat16) (it casts the weights to bf16 once per forward, like
fp8lab's bf16 working copy), fp32 gradients (they take the parameters' dtype), the residual stream
in fp32 (fp32 + bf16 promotes), the loss in fp32 from bf16 logits.

Arms:
  bf16          every linear a bf16 GEMM (autocast)
  fp8-mlp       the two MLP linears of every block through linear_peer.Fp8Linear (tensorwise
                current scaling: e4m3 X and W, e5m2 dY, torch._scaled_mm without fast accumulation,
                dX bf16, dW fp32); the others bf16
  fp8-linears   all four block linears FP8; the tied LM head stays bf16 (as in fp8lab)
  bf16-ckpt     bf16 with the MLP under torch.utils.checkpoint (fp8lab's --mlp-recompute)
  fp8-mlp-ckpt  (optional) fp8-mlp with the MLP checkpointed
The FP8 linears get x cast to bf16 (what autocast would feed a bf16 GEMM) and the fp32 master
weight, quantized to e4m3 directly, so dW comes back in fp32 without a bf16 round trip.

Two measurements per arm, on one batch of seeded random tokens shared by every arm:
  frozen: forward + backward (grads set to None before each), CUDA events around each call,
          median of --reps after --warmup; the first call's wall time (compilation included) and
          the peak of torch.cuda.max_memory_allocated over the timed calls.
          Both are followed by as many calls again with NVML's energy counter sampled on a
          thread, interpolated at that window's ends (nvml_energy.py; never beside the timed
          calls): energy_j, energy_window_s (the window's wall time), joules_per_repeat,
          mean_watts (over the window), tokens_per_joule, and energy_slowdown (the window's
          median over the timed one; above 1.05 the energy is withheld, null without NVML).
  train:  the full step: zero_grad, forward, backward, global grad-norm clip at 1.0 (foreach),
          torch.optim.AdamW(fused=True) with fp8lab's hyper-parameters and groups (weight decay
          0.1 on the matrices only); median step time, tokens/s = B * T / median, peak memory.
  --profile: one more train step under torch.profiler after the timed ones, its kernels' GPU
          time split into GEMM, attention and other (kernel_split.py), with the largest kernels.
Presets (src/model/model_config.cpp): gpt50m B64, gpt350m B16, gpt1.3b B8, all T2048; tiny for a
quick run. Writes JSON (rewritten after each arm, so partial results survive a crash).

Usage: python3 bench/peers/gpt_peer.py --preset gpt50m [--batch 64] [--arms bf16 fp8-mlp ...]
                                       [--reps 25] [--warmup 3] --json OUT.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "reference"))
sys.path.insert(0, HERE)
from gpt_torch import FpLabGPT  # noqa: E402
from kernel_split import describe as describe_split, split as split_kernels  # noqa: E402
from linear_peer import Fp8Linear  # noqa: E402
from nvml_energy import (EnergyCounter, EnergySampler, run_until_counter_moves,  # noqa: E402
                         torch_pci_bus_id)

PRESETS = {  # model config, micro-batch (fp8lab's run_preset)
    "tiny": (dict(vocab_size=256, d_model=128, n_layers=4, n_heads=4, seq_len=128), 8),
    "gpt50m": (dict(vocab_size=50304, d_model=512, n_layers=8, n_heads=8, seq_len=2048), 64),
    "gpt350m": (dict(vocab_size=50304, d_model=1024, n_layers=24, n_heads=16, seq_len=2048), 16),
    "gpt1.3b": (dict(vocab_size=50304, d_model=2048, n_layers=24, n_heads=16, seq_len=2048), 8),
}
ARMS = ("bf16", "fp8-mlp", "fp8-linears", "bf16-ckpt")
OPTIONAL_ARMS = ("fp8-mlp-ckpt",)
MIB = 1024.0 * 1024.0


def fp8_linear(x, w):
    # Fp8Linear (and torch._scaled_mm) take 2-D operands: fold [B, T, K] into [B*T, K].
    y = Fp8Linear.apply(x.reshape(-1, x.shape[-1]).to(torch.bfloat16), w)
    return y.view(*x.shape[:-1], w.shape[0])


def build_model(arm, cfg, seed):
    fp8_mlp = arm.startswith("fp8-mlp") or arm == "fp8-linears"
    model = FpLabGPT(cfg, explicit_attention=False,
                     attn_linear=fp8_linear if arm == "fp8-linears" else None,
                     mlp_linear=fp8_linear if fp8_mlp else None,
                     mlp_checkpoint=arm.endswith("-ckpt"))
    model.init_weights(seed)
    return model.to("cuda")  # fp32 master weights


def make_optimizer(model):
    # fp8lab's defaults: AdamW(0.9, 0.95, eps 1e-8), weight decay 0.1 on the linear matrices,
    # none on norms and embeddings (optim.decay_norms / decay_embeddings false).
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (decay if p.dim() == 2 and not name.startswith(("wte.", "wpe.")) else no_decay).append(p)
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=6e-4, betas=(0.9, 0.95), eps=1e-8, fused=True)


# The energy window's calls may be this much slower than the timed ones (median over median)
# before its energy is withheld, as in fp8lab's bench model (ModelBenchConfig's
# energy_slowdown_limit).
ENERGY_SLOWDOWN_LIMIT = 1.05


def event_timed_calls(step, reps):
    """The GPU time of `reps` calls of `step` (ms each, CUDA events around each call)."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        step()
        stops[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, stops)]


def timed(step, warmup, reps, warmup_s, energy=None):
    """(first-call seconds, median ms, peak MiB over the timed calls, all ms, joules of `reps`
    calls or None, the wall seconds those joules cover or None, the energy window's slowdown or
    None). Warm-up: at least `warmup` calls after the first, and at least `warmup_s` seconds of
    them (the GPU ran the first 1-2 s of load 5-15% slow on the H200, fp8lab's bench model does
    the same). The timed calls run with no energy counter read meanwhile. `energy`: an
    nvml_energy.EnergyCounter; after the timed calls, as many calls again form an energy window
    of their own, with the counter sampled on a thread (nvml_energy.py says why) and untimed
    calls on both sides until it has moved, so the window's ends are interpolated with the same
    work on both sides. Its energy is kept only when its calls' median is within
    ENERGY_SLOWDOWN_LIMIT of the timed median (a poller thread can slow the calls beside it),
    as in fp8lab's bench model."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0

    def synchronized_step():
        step()
        torch.cuda.synchronize()

    warm_from = time.perf_counter()
    done = 0
    while done < warmup or time.perf_counter() - warm_from < warmup_s:
        synchronized_step()
        done += 1
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    ms = event_timed_calls(step, reps)
    peak = torch.cuda.max_memory_allocated() / MIB
    joules = window_s = slowdown = None
    if energy is not None and energy.available:
        sampling_from = time.perf_counter()
        sampler = EnergySampler(energy.joules)
        try:
            # the window's start needs a move before it
            run_until_counter_moves(sampler, sampling_from, synchronized_step)
            window_start = time.perf_counter()
            window_ms = event_timed_calls(step, reps)
            window_end = time.perf_counter()
            run_until_counter_moves(sampler, window_end, synchronized_step)
            slowdown = statistics.median(window_ms) / statistics.median(ms)
            if slowdown <= ENERGY_SLOWDOWN_LIMIT:
                joules = sampler.joules_between(window_start, window_end)
                window_s = window_end - window_start if joules is not None else None
        finally:
            sampler.close()
    return first_s, statistics.median(ms), peak, ms, joules, window_s, slowdown


def energy_fields(joules, window_s, ms, tokens, slowdown=None):
    """The energy entries of a measurement (None where not measured), as fp8lab's JSON names
    them: mean watts over the window's wall time, joules per repeat over its repeats (the
    window holds as many calls as `ms`), and the window's slowdown against the timed calls."""
    if joules is None or not window_s:
        return {"energy_j": None, "energy_window_s": None, "joules_per_repeat": None,
                "energy_slowdown": slowdown,
                "mean_watts": None, "tokens_per_joule": None}
    per = joules / len(ms)
    return {"energy_j": joules, "energy_window_s": window_s, "joules_per_repeat": per,
            "energy_slowdown": slowdown,
            "mean_watts": joules / window_s, "tokens_per_joule": tokens / per if per > 0 else None}


def profiled_split(step):
    """One more (warm) call of `step` under torch.profiler, its CUDA kernels split by kind
    (kernel_split.py): the peer's side of fp8lab's --op-times. After the timed calls, so the
    profiler's overhead touches no timing."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:  # torch before 2.4 named it for CUDA
            us = getattr(e, "self_cuda_time_total", 0.0)
        if us > 0:
            kernels.append((e.key, float(us), int(e.count)))
    if not kernels:
        raise RuntimeError("the profiler recorded no GPU kernel time")
    return split_kernels(kernels)


def run_arm(arm, cfg, batch, idx, tgt, args, compile_model, energy=None):
    torch._dynamo.reset()  # every arm compiles from scratch: first-call times are comparable
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    model = build_model(arm, cfg, args.seed)
    fwd = torch.compile(model) if compile_model else model
    tokens = batch * cfg["seq_len"]
    result = {"compiled": compile_model, "parameters": sum(p.numel() for p in model.parameters()),
              "weights_mib": torch.cuda.memory_allocated() / MIB}

    def loss_fn():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return fwd(idx, tgt)

    def frozen_step():
        model.zero_grad(set_to_none=True)
        loss_fn().backward()

    first_s, med, peak, ms, joules, window_s, slowdown = timed(frozen_step, args.warmup,
                                                               args.reps, args.warmup_s, energy)
    result["frozen"] = {"first_call_s": first_s, "median_ms": med, "min_ms": min(ms),
                        "max_ms": max(ms), "peak_mib": peak, "tokens_per_s": tokens / (med / 1e3),
                        **energy_fields(joules, window_s, ms, tokens, slowdown)}
    print(f"[gpt_peer] {arm} frozen fwd+bwd: median {med:.2f} ms, peak {peak:.0f} MiB, "
          f"first call {first_s:.1f} s", file=sys.stderr, flush=True)

    model.zero_grad(set_to_none=True)
    opt = make_optimizer(model)
    params = [p for p in model.parameters()]
    losses = []

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
        opt.step()
        losses.append(loss.detach())

    first_s, med, peak, ms, joules, window_s, slowdown = timed(train_step, args.warmup,
                                                               args.train_reps or args.reps,
                                                               args.warmup_s, energy)
    result["train"] = {"first_call_s": first_s, "median_ms": med, "min_ms": min(ms),
                       "max_ms": max(ms), "peak_mib": peak, "tokens_per_s": tokens / (med / 1e3),
                       "loss_first": float(losses[0]), "loss_last": float(losses[-1]),
                       **energy_fields(joules, window_s, ms, tokens, slowdown)}
    print(f"[gpt_peer] {arm} train step: median {med:.2f} ms, {tokens / (med / 1e3):.0f} tokens/s, "
          f"peak {peak:.0f} MiB (loss {float(losses[0]):.4f} -> {float(losses[-1]):.4f})",
          file=sys.stderr, flush=True)
    if args.profile:
        try:  # the timings above stand whatever the profiler does
            result["train"]["kernel_split"] = profiled_split(train_step)
            line = describe_split(result["train"]["kernel_split"])
        except Exception as e:
            result["train"]["kernel_split"] = {"error": f"{type(e).__name__}: {e}"}
            line = f"failed: {type(e).__name__}: {e}"
        print(f"[gpt_peer] {arm} train step, profiled: {line}", file=sys.stderr, flush=True)
    del opt, model, fwd, params, losses
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="gpt50m", choices=sorted(PRESETS))
    p.add_argument("--batch", type=int, default=0, help="micro-batch (0: the preset's)")
    p.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS + OPTIONAL_ARMS)
    p.add_argument("--reps", type=int, default=25, help="timed calls per measurement")
    p.add_argument("--train-reps", type=int, default=0, help="timed train steps (0: --reps)")
    p.add_argument("--warmup", type=int, default=3, help="untimed calls after the first")
    p.add_argument("--warmup-s", type=float, default=3.0,
                   help="and warm up for at least this many seconds (the GPU's power ramp)")
    p.add_argument("--seed", type=int, default=1234, help="weights and token batch")
    p.add_argument("--no-compile", action="store_true", help="eager (to debug an arm)")
    p.add_argument("--profile", action="store_true",
                   help="after each arm's timed steps, one more under torch.profiler: its GPU "
                        "time as GEMM, attention and other (kernel_split.py) in train.kernel_split")
    p.add_argument("--json", required=True)
    args = p.parse_args()

    cfg, default_batch = PRESETS[args.preset]
    cfg = dict(cfg, norm_eps=1e-5)
    batch = args.batch or default_batch
    T = cfg["seq_len"]
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    rows = torch.randint(0, cfg["vocab_size"], (batch, T + 1), generator=g)
    idx, tgt = rows[:, :-1].contiguous().cuda(), rows[:, 1:].contiguous().cuda()

    torch._dynamo.config.cache_size_limit = 64
    out = {"torch_version": f"torch {torch.__version__}", "device": torch.cuda.get_device_name(),
           "preset": args.preset, "model": cfg, "batch": batch, "seq_len": T,
           "tokens_per_step": batch * T, "compiled": not args.no_compile,
           "attention": "F.scaled_dot_product_attention(is_causal=True)",
           "precision": "fp32 master weights, bf16 autocast compute, fp32 grads",
           "optimizer": "torch.optim.AdamW(fused=True), clip_grad_norm_(1.0, foreach=True)",
           "statistic": "median", "reps": args.reps, "warmup": args.warmup,
           "warmup_s": args.warmup_s, "arms": {}}
    energy = EnergyCounter(torch_pci_bus_id(torch.cuda.current_device()))
    out["energy_source"] = (energy.describe() if energy.available
                            else f"not measured: {energy.why_not}")
    for arm in args.arms:
        try:
            out["arms"][arm] = run_arm(arm, cfg, batch, idx, tgt, args, not args.no_compile,
                                       energy)
        except Exception as e:  # record it (an OOM, a compile failure) and go on
            why = f"{type(e).__name__}: {e}"
            print(f"[gpt_peer] {arm} failed: {why}", file=sys.stderr, flush=True)
            out["arms"][arm] = {"error": why}
            if not args.no_compile and not isinstance(e, torch.cuda.OutOfMemoryError):
                # A compile failure should not cost the arm: measure it eager, and say so.
                torch.cuda.empty_cache()
                try:
                    out["arms"][arm] = run_arm(arm, cfg, batch, idx, tgt, args, False, energy)
                    out["arms"][arm]["compile_error"] = why
                except Exception as e2:
                    out["arms"][arm]["eager_error"] = f"{type(e2).__name__}: {e2}"
                    print(f"[gpt_peer] {arm} failed eager too: {e2}", file=sys.stderr, flush=True)
        torch.cuda.empty_cache()
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    ok = [a for a in out["arms"].values() if "error" not in a]
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
