#!/usr/bin/env python3
"""fp8lab's linear layer from PyTorch (fp8lab_torch.Linear over libfp8lab_linear.so) against
PyTorch's own arms and against the C++ layer, forward + backward, at fp8lab's seed shapes.

Arms, timed interleaved (repeat i of every arm, then repeat i + 1: drift hits all alike), each
the median of the repeats between CUDA events, inputs rotating over several buffers:
  fp8lab_torch_<recipe>: fp8lab_torch.Linear(recipe) with an fp32 weight (cast to bf16 in its
                         forward, dW fp32) on bf16 x, through ctypes and the C ABI.
  torch_fp8:  PyTorch's tensorwise recipe, torch._scaled_mm with the casts under torch.compile
              (Fp8Linear of bench/peers/linear_peer.py).
  torch_bf16: torch.compile(nn.Linear(bias=False)) in bf16.
Each arm's <arm>_host_ms is the median time Python takes to queue one step without waiting for
the GPU: where it reaches <arm>_ms, the GPU waited for the host and the time is Python's.
The C++ layer: `fp8lab bench linear --json-file` run first, in the same call (bf16, fp8-fused
and the grouped recipes asked for); each fp8lab_torch arm is printed and recorded as a ratio
to the C++ layer of its recipe (what the Python binding costs), and to torch_fp8. The bench
casts W on a side stream (its default); the library casts it on the caller's stream, and the
arm also casts its fp32 weight to bf16: both are part of the ratio.

GPU only. Example, on the GPU machine:
  python3 bench/peers/linear_torch_peer.py --fp8lab build/fp8lab \\
      --library build/libfp8lab_linear.so --json linear_torch.json
Writes JSON: {"torch_version", "device", "cxx": <fp8lab bench linear's JSON>, "shapes":
[{"in", "out", "tokens", "<arm>_ms", "fp8lab_torch_<recipe>_over_cxx", ...}]}.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SEED_SHAPES = ["512x512", "512x2048", "2048x512", "512x8192"]  # LinearBenchConfig's
RECIPES = ["bf16", "tensorwise", "rowwise", "blockwise"]
# The C++ layer's number for each recipe in fp8lab bench linear's JSON (one shape's entry).
CXX_KEYS = {"bf16": ("bf16_ms",), "tensorwise": ("fp8_fused_ms",),
            "rowwise": ("recipes", "rowwise", "fused_ms"),
            "blockwise": ("recipes", "blockwise", "fused_ms")}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=131072, help="rows of x (M), as fp8lab's")
    p.add_argument("--shapes", nargs="+", default=SEED_SHAPES, help="layer shapes IxO")
    p.add_argument("--recipes", nargs="+", default=["tensorwise", "bf16"], choices=RECIPES,
                   help="fp8lab_torch.Linear recipes timed")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeats", type=int, default=30, help="timed repeats per arm (>= 20)")
    p.add_argument("--rotations", type=int, default=3, help="rotating input buffers")
    p.add_argument("--fp8lab", default=os.path.join(REPO, "build", "fp8lab"),
                   help="the fp8lab binary for the C++ layer's times ('none': skip)")
    p.add_argument("--library", help="libfp8lab_linear.so (default: FP8LAB_LINEAR_LIBRARY, "
                   "else <repo>/build/libfp8lab_linear.so)")
    p.add_argument("--json", required=True, help="where the results go")
    args = p.parse_args()
    if args.repeats < 20:
        p.error(f"--repeats {args.repeats}: at least 20, as fp8lab bench linear")
    return args


def cxx_layer(args):
    """fp8lab bench linear's JSON for the same shapes and recipes, or None when skipped."""
    if args.fp8lab == "none":
        return None
    grouped = [r for r in args.recipes if r in ("rowwise", "blockwise")] or ["none"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cxx_linear.json")
        cmd = [args.fp8lab, "bench", "linear", "--tokens", str(args.tokens), "--shapes",
               *args.shapes, "--modes", "bf16", "fp8-fused", "--recipes", *grouped,
               "--repeats", str(args.repeats), "--warmup", str(args.warmup), "--rotations",
               str(args.rotations), "--json-file", out]
        print("[torch peer] " + " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        with open(out) as f:
            return json.load(f)


def cxx_ms(cxx, k, n, recipe):
    if cxx is None:
        return None
    for shape in cxx.get("shapes", []):
        if shape.get("in") == k and shape.get("out") == n:
            v = shape
            for key in CXX_KEYS[recipe]:
                v = v.get(key) if isinstance(v, dict) else None
            return v if isinstance(v, (int, float)) else None
    return None


def interleaved_medians(torch, arms, warmup, repeats):
    """{name: median ms} of the steps in `arms` ({name: step(i)}), repeats interleaved; an arm
    that raises is recorded as its error instead."""
    errors, live = {}, {}
    for name, step in arms.items():
        try:
            for i in range(warmup):
                step(i)
            torch.cuda.synchronize()
            live[name] = step
        except Exception as e:  # noqa: BLE001 - recorded, the other arms go on
            errors[name] = f"{type(e).__name__}: {e}"
    events = {name: [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                     for _ in range(repeats)] for name in live}
    for i in range(repeats):
        for name, step in live.items():
            start, stop = events[name][i]
            start.record()
            step(warmup + i)
            stop.record()
    torch.cuda.synchronize()
    medians = {name: statistics.median(s.elapsed_time(e) for s, e in events[name])
               for name in live}
    return medians, host_medians(torch, live, warmup + repeats, repeats), errors


def host_medians(torch, live, first, repeats):
    """{name: median ms} the host takes to queue one step (no synchronisation inside the loop):
    where it reaches the GPU time, the GPU waits for Python and the arm is host-bound."""
    host = {}
    for name, step in live.items():
        torch.cuda.synchronize()
        times = []
        for i in range(repeats):
            t0 = time.perf_counter()
            step(first + i)
            times.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
        host[name] = statistics.median(times)
    return host


def bench_shape(torch, fp8lab_torch, Fp8Linear, tokens, k, n, cxx, args):
    dev, bf16 = "cuda", torch.bfloat16
    xs = [torch.randn(tokens, k, device=dev, dtype=bf16).requires_grad_()
          for _ in range(args.rotations)]
    dys = [torch.randn(tokens, n, device=dev, dtype=bf16) * 1e-3 for _ in range(args.rotations)]
    w_init = torch.randn(n, k, device=dev) / k ** 0.5

    def step_of(forward, params):
        def step(i):
            x = xs[i % len(xs)]
            x.grad = None
            for p in params:
                p.grad = None
            forward(x).backward(dys[i % len(dys)])
        return step

    arms = {}
    for recipe in args.recipes:
        layer = fp8lab_torch.Linear(k, n, recipe=recipe, device=dev)
        with torch.no_grad():
            layer.weight.copy_(w_init)
        arms[f"fp8lab_torch_{recipe}"] = step_of(layer, [layer.weight])
    w8 = w_init.to(bf16).requires_grad_()
    arms["torch_fp8"] = step_of(lambda x: Fp8Linear.apply(x, w8), [w8])
    lin = torch.nn.Linear(k, n, bias=False, device=dev, dtype=bf16)
    with torch.no_grad():
        lin.weight.copy_(w_init)
    arms["torch_bf16"] = step_of(torch.compile(lin, dynamic=False), [lin.weight])

    medians, host, errors = interleaved_medians(torch, arms, args.warmup, args.repeats)
    result = {"in": k, "out": n, "tokens": tokens}
    for name in arms:
        result[f"{name}_ms"] = medians.get(name)
        result[f"{name}_host_ms"] = host.get(name)
        if name in errors:
            result[f"{name}_error"] = errors[name]
    for recipe in args.recipes:
        mine, base = medians.get(f"fp8lab_torch_{recipe}"), cxx_ms(cxx, k, n, recipe)
        result[f"cxx_{recipe}_ms"] = base
        result[f"fp8lab_torch_{recipe}_over_cxx"] = mine / base if mine and base else None
        peer = medians.get("torch_fp8")
        result[f"fp8lab_torch_{recipe}_over_torch_fp8"] = mine / peer if mine and peer else None
    for name, v in result.items():
        print(f"[torch peer] {k}->{n} {name} = {v}", file=sys.stderr, flush=True)
    return result


def main():
    args = parse_args()
    import torch  # after --help, which needs neither torch nor a GPU
    if not torch.cuda.is_available():
        print("linear_torch_peer: needs a CUDA GPU (torch sees none)", file=sys.stderr)
        return 2
    if args.library:
        os.environ["FP8LAB_LINEAR_LIBRARY"] = os.path.abspath(args.library)
    sys.path.insert(0, os.path.join(REPO, "python"))
    sys.path.insert(0, HERE)
    import fp8lab_torch
    from linear_peer import Fp8Linear  # PyTorch's tensorwise recipe, as the other peer times it
    torch._dynamo.config.cache_size_limit = 64
    cxx = cxx_layer(args)
    out = {"torch_version": f"torch {torch.__version__}", "device": torch.cuda.get_device_name(),
           "statistic": "median", "repeats": args.repeats, "interleaved": True,
           "library": fp8lab_torch.linear.find_library(), "cxx": cxx, "shapes": []}
    for spec in args.shapes:
        k, n = (int(v) for v in spec.split("x"))
        out["shapes"].append(bench_shape(torch, fp8lab_torch, Fp8Linear, args.tokens, k, n, cxx,
                                         args))
        with open(args.json, "w") as f:  # rewritten after each shape: partial results survive
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
