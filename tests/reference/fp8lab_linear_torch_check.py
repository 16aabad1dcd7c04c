#!/usr/bin/env python3
"""fp8lab_torch.Linear (python/fp8lab_torch/linear.py) over libfp8lab_linear.so:

  1. bits: forward and backward through the module and autograd equal a direct call of the C ABI
     on the same bf16 operands, bit for bit, for every recipe (tests/capi/ checks the ABI against
     the C++ layer of fp8lab's backends, so this closes the chain module -> ABI -> C++ layer);
  2. arithmetic: y, dX and dW are within `fp8lab linear-check`'s bounds of an fp32 product of the
     same bf16 values (bf16: 4e-3 y and dX, 1e-3 dW; FP8: 0.06 y, 0.09 dX and dW, relative
     Frobenius), and tensorwise scales are 448 / amax(x) and 448 / amax(W) in fp32, exactly;
  3. drop-in: output and gradient dtypes are nn.Linear's, also under torch.autocast, with the
     same bits as without autocast; on CUDA, a side stream gives the default stream's bits;
  4. bad input raises ValueError/TypeError naming the value; a missing library names its path;
  5. training: a small GPT (fp8lab_torch.FpLabGPT, d_model 128, 2 layers) whose MLP linears are
     fp8lab_torch.Linear tracks the same model with its own fp32 linears over 40 AdamW steps:
     every step's loss within 8% (FP8 recipes) or 3% (bf16) of the first loss of the
     reference, the mean of the last 10 losses within 20% (FP8) or 5% (bf16) of the
     reference's, and the loss falling by more than half. Measured on 30 seeds: at most 4.6% and
     8.9% (FP8), 0.9% and 1.5% (bf16); with the MLP weights frozen instead (a backward that gave
     no dW; 3 seeds) 14-22% and 42-105%, so the bounds tell a working layer from a broken one.

Run by CTest (fp8lab_linear_torch; exits 77, a skip, without torch) as
  python3 tests/reference/fp8lab_linear_torch_check.py --library build/libfp8lab_linear.so
and on the GPU machine with --device cuda.
"""
import argparse
import copy
import ctypes
import os
import random
import sys

try:
    import torch
except ImportError:
    print("fp8lab_linear_torch_check: skipped: no torch (Debian: python3-torch)")
    sys.exit(77)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import fp8lab_torch  # noqa: E402
from fp8lab_torch import linear as fl  # noqa: E402

failures = []
BOUNDS = {"bf16": (4e-3, 4e-3, 1e-3), "fp8": (0.06, 0.09, 0.09)}  # y, dX, dW (linear-check)
# M, K, N per recipe: multiples of 16 (128 for blockwise), all different; bf16 also odd ones,
# which only the CPU runs (the GPU's GEMMs take multiples of 8: check_bad_input).
SHAPES = {"bf16": [(37, 53, 29), (48, 80, 112)], "tensorwise": [(48, 80, 112), (208, 16, 48)],
          "rowwise": [(48, 80, 112), (208, 16, 48)], "blockwise": [(128, 384, 256)]}


def shapes_on(device, recipe):
    return [s for s in SHAPES[recipe] if device == "cpu" or all(d % 8 == 0 for d in s)]


def check(ok, message):
    print(f"  {'ok  ' if ok else 'FAIL'} {message}", flush=True)
    if not ok:
        failures.append(message)


def expect_raises(exc_type, fragments, fn, what):
    try:
        fn()
    except exc_type as e:
        check(all(f in str(e) for f in fragments),
              f"{what}: {exc_type.__name__} naming {fragments} ({e})")
        return
    except Exception as e:  # noqa: BLE001 - the wrong kind is a failure, said as such
        check(False, f"{what}: {type(e).__name__} instead of {exc_type.__name__}: {e}")
        return
    check(False, f"{what}: no {exc_type.__name__}")


def rel(got, want):
    return ((got.double() - want.double()).norm() / want.double().norm()).item()


def problem(m, k, n, device, gen):
    """x ~ N(0, 1), W ~ N(0, 1/K), dY ~ N(0, 1e-6): linear-check's data, bf16-representable."""
    def normal(shape, std):
        return (torch.randn(shape, generator=gen) * std).bfloat16().float().to(device)
    return normal((m, k), 1.0), normal((n, k), k ** -0.5), normal((m, n), 1e-3)


def abi_direct(lib, device, recipe, x, w, dy):
    """Forward and backward by a direct call of the C ABI (no module, no autograd)."""
    m, k = x.shape
    n = w.shape[0]
    xb, wb, dyb = (t.bfloat16().contiguous() for t in (x, w, dy))
    y = torch.empty(m, n, dtype=torch.bfloat16, device=device)
    dx = torch.empty(m, k, dtype=torch.bfloat16, device=device)
    dw = torch.empty(n, k, dtype=torch.float32, device=device)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream) if device == "cuda" else None
    p = lambda t: ctypes.c_void_p(t.data_ptr())  # noqa: E731
    handle, saved = ctypes.c_void_p(), ctypes.c_void_p()
    lib.call("fp8lab_linear_create", device.encode(), recipe.encode(), k, n, ctypes.byref(handle))
    try:
        lib.call("fp8lab_linear_forward", handle, m, p(xb), fl._BF16, p(wb), fl._BF16, p(y),
                 fl._BF16, stream, ctypes.byref(saved))
        lib.call("fp8lab_linear_backward", handle, saved, m, p(dyb), fl._BF16, p(dx), fl._BF16,
                 p(dw), fl._F32, 0, stream)
        if device == "cuda":
            torch.cuda.synchronize()
    finally:
        lib.lib.fp8lab_linear_saved_destroy(saved)
        lib.lib.fp8lab_linear_destroy(handle)
    return y, dx, dw


def through_module(layer, x, dy):
    """y, dX, dW through fp8lab_torch.Linear and autograd (fp32 x and W as a model holds them)."""
    xg = x.clone().requires_grad_()
    layer.weight.grad = None
    y = layer(xg)
    y.backward(dy)
    return y.detach(), xg.grad, layer.weight.grad


def check_bits_and_arithmetic(lib, device, gen):
    print("bits against the C ABI, arithmetic against fp32 products:")
    for recipe in SHAPES:
        for m, k, n in shapes_on(device, recipe):
            x, w, dy = problem(m, k, n, device, gen)
            layer = fp8lab_torch.Linear(k, n, recipe=recipe, device=device)
            with torch.no_grad():
                layer.weight.copy_(w)
            layer.track_stats = True
            y, dx, dw = through_module(layer, x, dy)
            ay, adx, adw = abi_direct(lib, device, recipe, x, w, dy)
            tag = f"{recipe} M={m} K={k} N={n}"
            check(torch.equal(y, ay.float()) and torch.equal(dx, adx.float())
                  and torch.equal(dw, adw), f"{tag}: y, dX, dW equal the direct ABI call's bits")
            by, bdx, bdw = BOUNDS["bf16" if recipe == "bf16" else "fp8"]
            errors = (rel(y, x @ w.t()), rel(dx, dy @ w), rel(dw, dy.t() @ x))
            check(errors[0] < by and errors[1] < bdx and errors[2] < bdw,
                  f"{tag}: relative errors y {errors[0]:.2e} dX {errors[1]:.2e} dW "
                  f"{errors[2]:.2e} within {by}, {bdx}, {bdw}")
            if recipe == "tensorwise":
                s = layer.last_stats()
                amax_x = x.abs().max().float()
                amax_w = w.abs().max().float()
                want = {"x": (amax_x, torch.tensor(448.0) / amax_x.cpu()),
                        "w": (amax_w, torch.tensor(448.0) / amax_w.cpu())}
                exact = all(s[t]["amax"] == a.item() and s[t]["scale"] == sc.item()
                            for t, (a, sc) in want.items())
                check(exact and s["dy"]["amax"] == dy.abs().max().item(),
                      f"{tag}: amax and scale 448/amax of x, W (and dY's amax) exactly: {s}")


def check_drop_in(device, gen):
    print("drop-in for nn.Linear(bias=False):")
    m, k, n = 48, 80, 112
    x, w, dy = problem(m, k, n, device, gen)
    layer = fp8lab_torch.Linear(k, n, recipe="tensorwise", device=device)
    ref = torch.nn.Linear(k, n, bias=False, device=device)
    with torch.no_grad():
        layer.weight.copy_(w)
        ref.weight.copy_(w)
    x3 = x.reshape(3, 16, k)
    y, dx, dw = through_module(layer, x3, dy.reshape(3, 16, n))
    check(y.shape == (3, 16, n) and y.dtype == torch.float32 and dx.dtype == torch.float32
          and dw.dtype == torch.float32, f"[3, 16, {k}] fp32 in: y {tuple(y.shape)} {y.dtype}, "
          f"dX {dx.dtype}, dW {dw.dtype}")
    autocast_dtype = torch.bfloat16
    with torch.autocast(device, dtype=autocast_dtype):
        xa = x3.clone().requires_grad_()
        layer.weight.grad = None
        ya = layer(xa)
        yr = ref(x3)
    ya.backward(dy.reshape(3, 16, n).to(ya.dtype))
    check(ya.dtype == yr.dtype == autocast_dtype,
          f"under autocast: y {ya.dtype}, nn.Linear's {yr.dtype}")
    check(torch.equal(ya.float(), y) and torch.equal(xa.grad, dx)
          and torch.equal(layer.weight.grad, dw) and layer.weight.grad.dtype == torch.float32,
          "under autocast: the same bits as without; dX fp32 like x, dW fp32 like the weight")
    layer_bf16 = fp8lab_torch.Linear(k, n, recipe="tensorwise", device=device,
                                     dtype=torch.bfloat16)
    with torch.no_grad():
        layer_bf16.weight.copy_(w)
    _, dxb, dwb = through_module(layer_bf16, x.bfloat16(), dy.bfloat16())
    check(dxb.dtype == torch.bfloat16 and dwb.dtype == torch.bfloat16,
          f"bf16 x and weight: dX {dxb.dtype}, dW {dwb.dtype} (the parameter's dtype)")
    twin = copy.deepcopy(layer)
    yt, dxt, dwt = through_module(twin, x3, dy.reshape(3, 16, n))
    check(twin._handles is not layer._handles and torch.equal(yt, y) and torch.equal(dxt, dx)
          and torch.equal(dwt, dw), "copy.deepcopy: a layer of its own, the same bits")
    if device == "cuda":
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            ys, dxs, dws = through_module(layer, x3, dy.reshape(3, 16, n))
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        check(torch.equal(ys, y) and torch.equal(dxs, dx) and torch.equal(dws, dw),
              "on a side stream: the default stream's bits")


def check_bad_input(device):
    print("bad input:")
    layer = fp8lab_torch.Linear(80, 112, recipe="rowwise", device=device)
    expect_raises(ValueError, ["'mxfp8'"], lambda: fp8lab_torch.Linear(16, 16, recipe="mxfp8"),
                  "unknown recipe")
    expect_raises(ValueError, ["bias=True"], lambda: fp8lab_torch.Linear(16, 16, bias=True),
                  "bias=True")
    expect_raises(ValueError, ["in_features", "0"], lambda: fp8lab_torch.Linear(0, 16),
                  "zero in_features")
    expect_raises(TypeError, ["torch.int64"],
                  lambda: layer(torch.ones(16, 80, dtype=torch.int64, device=device)),
                  "int64 x")
    expect_raises(ValueError, ["(2, 81)", "in_features=80"],
                  lambda: layer(torch.ones(2, 81, device=device)), "x of the wrong width")
    expect_raises(ValueError, ["meta"], lambda: layer(torch.ones(16, 80, device="meta")),
                  "x on the meta device")
    expect_raises(ValueError, ["M (tokens) is 20", "16"],
                  lambda: layer(torch.ones(20, 80, device=device)), "20 rows under rowwise")
    expect_raises(ValueError, ["K (input features) is 200", "128"],
                  lambda: fp8lab_torch.Linear(200, 128, recipe="blockwise", device=device)(
                      torch.ones(128, 200, device=device)), "blockwise with 200 inputs")
    if device == "cpu":
        nan_x = torch.ones(16, 80)
        nan_x[3, 7] = float("nan")
        expect_raises(FloatingPointError, ["linear.x"],
                      lambda: fp8lab_torch.Linear(80, 112)(nan_x), "NaN in x (cpu)")
    else:
        expect_raises(ValueError, ["cpu", "cuda"], lambda: layer(torch.ones(16, 80)),
                      "a cpu x for a cuda weight")
        expect_raises(ValueError, ["M=37", "multiples of 8"],
                      lambda: fp8lab_torch.Linear(53, 29, recipe="bf16", device=device)(
                          torch.ones(37, 53, device=device)), "odd bf16 shape on the GPU")
    y = fp8lab_torch.Linear(80, 112, device=device)(torch.ones(16, 80, device=device,
                                                               requires_grad=True))
    y.sum().backward(retain_graph=True)
    expect_raises(RuntimeError, ["second backward", "retain_graph"], lambda: y.sum().backward(),
                  "a second backward through one forward")
    missing = "/nonexistent/libfp8lab_linear.so"
    saved_env = os.environ.get("FP8LAB_LINEAR_LIBRARY")
    os.environ["FP8LAB_LINEAR_LIBRARY"] = missing
    try:
        expect_raises(fl.LibraryNotFoundError, ["FP8LAB_LINEAR_LIBRARY=" + missing],
                      fl.find_library, "FP8LAB_LINEAR_LIBRARY naming a missing file")
    finally:
        if saved_env is None:
            del os.environ["FP8LAB_LINEAR_LIBRARY"]
        else:
            os.environ["FP8LAB_LINEAR_LIBRARY"] = saved_env
    expect_raises(fl.LibraryNotFoundError, [missing], lambda: fl.Library(missing),
                  "loading a missing library")


def mlp_with(model, recipe):
    """Replaces the MLP linears of every block with fp8lab_torch.Linear, sharing the weights."""
    for block in model.blocks:
        for name in ("fc", "proj"):
            old = getattr(block.mlp, name)
            out_f, in_f = old.weight.shape
            new = fp8lab_torch.Linear(in_f, out_f, recipe=recipe, device=old.weight.device)
            new.weight = old.weight
            setattr(block.mlp, name, new)
    return model


def train(model, batches, steps):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    losses = []
    for step in range(steps):
        idx, targets = batches[step % len(batches)]
        loss = model(idx, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def check_training(device, seed):
    print("training a small GPT with fp8lab MLP linears:")
    cfg = {"vocab_size": 64, "d_model": 128, "n_layers": 2, "n_heads": 4, "seq_len": 32,
           "norm_eps": 1e-5}
    gen = torch.Generator().manual_seed(seed)
    # Sequences of a few arithmetic progressions mod 64: learnable, so the loss falls.
    batches = []
    for _ in range(4):
        start = torch.randint(0, 64, (4, 1), generator=gen)
        stride = torch.randint(1, 5, (4, 1), generator=gen)
        seq = (start + stride * torch.arange(33)) % 64
        batches.append((seq[:, :-1].to(device), seq[:, 1:].to(device)))
    steps = 40
    reference = fp8lab_torch.FpLabGPT(cfg).to(device)
    reference.init_weights(seed)
    ref_losses = train(reference, batches, steps)
    for recipe, (step_bound, tail_bound) in (("bf16", (0.03, 0.05)),
                                             ("tensorwise", (0.08, 0.20)),
                                             ("rowwise", (0.08, 0.20)),
                                             ("blockwise", (0.08, 0.20))):
        model = fp8lab_torch.FpLabGPT(cfg).to(device)
        model.init_weights(seed)
        losses = train(mlp_with(model, recipe), batches, steps)
        worst_step = max(abs(a - b) for a, b in zip(losses, ref_losses)) / ref_losses[0]
        tail = abs(sum(losses[-10:]) - sum(ref_losses[-10:])) / sum(ref_losses[-10:])
        check(worst_step < step_bound and tail < tail_bound and losses[-1] < 0.5 * losses[0],
              f"{recipe}: loss {losses[0]:.4f} -> {losses[-1]:.4f} (reference {ref_losses[0]:.4f}"
              f" -> {ref_losses[-1]:.4f}); largest step difference {worst_step:.2e} of the first "
              f"loss (< {step_bound}), last 10 steps {tail:.2e} (< {tail_bound})")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--library", help="libfp8lab_linear.so (default: FP8LAB_LINEAR_LIBRARY or "
                   "<repo>/build/libfp8lab_linear.so)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--seed", type=int, help="data and weights (default: fresh, printed)")
    args = p.parse_args()
    if args.library:
        os.environ["FP8LAB_LINEAR_LIBRARY"] = os.path.abspath(args.library)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("fp8lab_linear_torch_check: FAIL: --device cuda but torch sees no CUDA device")
        return 1
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    print(f"fp8lab_linear_torch_check: torch {torch.__version__}, device {args.device}, "
          f"seed {seed} (replay: --seed {seed}), library {fl.find_library()}", flush=True)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    lib = fl.library()
    check_bits_and_arithmetic(lib, args.device, gen)
    check_drop_in(args.device, gen)
    check_bad_input(args.device)
    check_training(args.device, seed)
    if failures:
        print(f"fp8lab_linear_torch_check: {len(failures)} FAILED")
        return 1
    print("fp8lab_linear_torch_check: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
