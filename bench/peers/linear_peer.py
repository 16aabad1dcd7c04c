#!/usr/bin/env python3
"""PyTorch peer of `fp8lab bench linear`: the same isolated linear layer, forward + backward.

Arms (docs/design.md section 6):
  torch_bf16: torch.compile(nn.Linear(bias=False)) in bf16, autograd backward (dX bf16, dW bf16).
  torch_fp8:  the tensorwise current-scaling FP8 recipe (design.md section 2) with
              torch._scaled_mm(use_fast_accum=False); the casts (amax, scale, saturating cast,
              transposed copy) under torch.compile; dX bf16, dW fp32 like fp8lab.
Timing matches fp8lab's: CUDA events around each fwd+bwd, warm-up, median of the repeats, inputs
rotating over several buffers. Writes JSON: {"torch_version", "shapes": [{"in", "out", "tokens",
"torch_bf16_ms", "torch_fp8_ms", ...}]}.
"""
import argparse
import json
import statistics
import sys

import torch

E4M3_MAX, E5M2_MAX = 448.0, 57344.0


def median_ms(step, warmup, repeats):
    for i in range(warmup):
        step(i)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for i in range(repeats):
        starts[i].record()
        step(warmup + i)
        stops[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, stops))


def make_cast(fmax, dtype):
    # amax -> scale (fmax / amax, 1 for amax == 0) -> saturating cast, plus the transposed copy
    # the K-major backward GEMMs need. Compiled: one fused kernel per output where inductor can.
    @torch.compile(dynamic=False)
    def cast(t):
        amax = t.abs().amax().float()
        scale = torch.where(amax > 0, fmax / amax, torch.ones_like(amax))
        q = (t.float() * scale).clamp(-fmax, fmax).to(dtype)
        return q, q.t().contiguous(), scale.reciprocal()
    return cast


cast_e4m3 = make_cast(E4M3_MAX, torch.float8_e4m3fn)
cast_e5m2 = make_cast(E5M2_MAX, torch.float8_e5m2)


class Fp8Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        xq, xq_t, inv_x = cast_e4m3(x)
        wq, wq_t, inv_w = cast_e4m3(w)
        y = torch._scaled_mm(xq, wq.t(), scale_a=inv_x, scale_b=inv_w, out_dtype=torch.bfloat16,
                             use_fast_accum=False)
        ctx.save_for_backward(xq_t, wq_t, inv_x, inv_w)
        return y

    @staticmethod
    def backward(ctx, dy):
        xq_t, wq_t, inv_x, inv_w = ctx.saved_tensors
        dyq, dyq_t, inv_dy = cast_e5m2(dy)
        dx = torch._scaled_mm(dyq, wq_t.t(), scale_a=inv_dy, scale_b=inv_w,
                              out_dtype=torch.bfloat16, use_fast_accum=False)
        dw = torch._scaled_mm(dyq_t, xq_t.t(), scale_a=inv_dy, scale_b=inv_x,
                              out_dtype=torch.float32, use_fast_accum=False)
        return dx, dw


def bench_shape(tokens, k, n, args):
    dev, bf16 = "cuda", torch.bfloat16
    xs = [torch.randn(tokens, k, device=dev, dtype=bf16).requires_grad_() for _ in range(args.rotations)]
    dys = [torch.randn(tokens, n, device=dev, dtype=bf16) * 1e-3 for _ in range(args.rotations)]
    result = {"in": k, "out": n, "tokens": tokens}

    lin = torch.nn.Linear(k, n, bias=False, device=dev, dtype=bf16)
    compiled = torch.compile(lin, dynamic=False)

    def bf16_step(i):
        x = xs[i % len(xs)]
        x.grad, lin.weight.grad = None, None
        compiled(x).backward(dys[i % len(dys)])

    w = (torch.randn(n, k, device=dev, dtype=bf16) / k ** 0.5).requires_grad_()

    def fp8_step(i):
        x = xs[i % len(xs)]
        x.grad, w.grad = None, None
        Fp8Linear.apply(x, w).backward(dys[i % len(dys)])

    for name, step in (("torch_bf16_ms", bf16_step), ("torch_fp8_ms", fp8_step)):
        try:
            result[name] = median_ms(step, args.warmup, args.repeats)
        except Exception as e:  # record the failure; the report prints n/a
            result[name] = None
            result[name.replace("_ms", "_error")] = f"{type(e).__name__}: {e}"
        print(f"[peer] {k}->{n} {name} = {result[name]}", file=sys.stderr, flush=True)
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=131072)
    p.add_argument("--shapes", nargs="+", default=["512x512", "512x2048", "2048x512", "512x8192"])
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--rotations", type=int, default=3)
    p.add_argument("--json", required=True)
    args = p.parse_args()
    torch._dynamo.config.cache_size_limit = 64
    out = {"torch_version": f"torch {torch.__version__}", "device": torch.cuda.get_device_name(),
           "statistic": "median", "repeats": args.repeats, "shapes": []}
    for spec in args.shapes:
        k, n = (int(v) for v in spec.split("x"))
        out["shapes"].append(bench_shape(args.tokens, k, n, args))
        with open(args.json, "w") as f:  # rewritten after each shape: partial results survive
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
