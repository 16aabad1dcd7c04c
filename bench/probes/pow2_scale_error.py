#!/usr/bin/env python3
"""Power-of-two against fp32 scales for the blockwise recipe, on the CPU.

fp8lab's grouped casts take each group's scale as fmax / amax in fp32 (docs/design.md §2);
Transformer Engine's block recipe rounds it down to a power of two. This models both casts in
numpy, checks the fp32 one code for code against `fp8lab quantize` on every input (so the model
is the cast fp8lab runs), and reports what the power of two changes: the cast error, the SQNR,
the share of non-zero inputs cast to zero, and how much of the format's top binade is used.

Inputs, bf16-rounded like the tensors the linears cast:
  x-gaussian      x, 1x128 groups, e4m3: N(0, 1)
  x-outliers      x, 1x128 groups, e4m3: N(0, 1) with 1% of the columns 30x (LLM activations)
  x-student3      x, 1x128 groups, e4m3: Student-t with 3 degrees of freedom (heavy tails)
  w-gaussian      w, 128x128 blocks, e4m3: N(0, 0.02^2), 10% of its rows 4x
  dy-rowscaled    dy, 1x128 groups, e5m2: N(0, 1) times a log-normal factor per row (sd 3 in ln)

Usage: bench/probes/pow2_scale_error.py --fp8lab build/fp8lab [--rows 2048 --cols 2048]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

FORMATS = {  # exponent bias, mantissa bits, largest finite value
    "e4m3": (7, 3, 448.0),
    "e5m2": (15, 2, 57344.0),
}


def bf16(a):
    """Rounds float32 values to bf16 (nearest even) and returns them as float32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def fp8_round(y, fmt):
    """y (float32) to the nearest FP8 value of `fmt`, ties to even, clamped to +-fmax."""
    bias, mbits, fmax = FORMATS[fmt]
    y = y.astype(np.float64)
    mag = np.abs(y)
    _, e = np.frexp(mag)  # mag = f * 2^e, f in [0.5, 1)
    e = np.maximum(e - 1, 1 - bias)  # the binade's exponent; subnormals share the lowest one
    spacing = np.ldexp(1.0, e - mbits)
    q = np.minimum(np.round(mag / spacing) * spacing, fmax)
    return np.copysign(q, y)


def decode(codes, fmt):
    """FP8 codes (uint8) to their float values."""
    bias, mbits, _ = FORMATS[fmt]
    c = codes.astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exp = (c >> mbits) & ((1 << (7 - mbits)) - 1)
    man = c & ((1 << mbits) - 1)
    val = np.where(exp == 0, np.ldexp(man.astype(np.float64), 1 - bias - mbits),
                   np.ldexp((man + (1 << mbits)).astype(np.float64), exp - bias - mbits))
    return sign * val


def group_amax(x, rows_per_group, cols_per_group):
    """Each element's group amax (float32), groups of rows_per_group x cols_per_group."""
    r, c = x.shape
    pr, pc = -r % rows_per_group, -c % cols_per_group
    a = np.pad(np.abs(x), ((0, pr), (0, pc)))
    g = a.reshape((r + pr) // rows_per_group, rows_per_group, (c + pc) // cols_per_group,
                  cols_per_group).max(axis=(1, 3))
    return np.repeat(np.repeat(g, rows_per_group, 0), cols_per_group, 1)[:r, :c]


def cast(x, fmt, groups, pow2):
    """The group cast: (q, dequantized x). fp32 scale = fmax / amax; pow2 rounds it down."""
    fmax = np.float32(FORMATS[fmt][2])
    amax = group_amax(x, *groups).astype(np.float32)
    safe = np.where(amax > 0, amax, np.float32(1))
    scale = np.where(amax > 0, fmax / safe, np.float32(1)).astype(np.float32)
    if pow2:
        scale = np.ldexp(np.float32(1), np.floor(np.log2(scale.astype(np.float64))).astype(np.int32))
        scale = scale.astype(np.float32)
    q = fp8_round((x * scale).astype(np.float32), fmt)
    inv = (np.float32(1) / scale).astype(np.float32)
    return q, q * inv.astype(np.float64)


def fp8lab_codes(binary, x, operand, fmt, tmp):
    src, out = os.path.join(tmp, "x.npy"), os.path.join(tmp, "q.npy")
    np.save(src, x)
    subprocess.run([binary, "quantize", "--recipe", "blockwise", "--operand", operand,
                    "--format", fmt, "--in", src, "--out", out, "--json"],
                   check=True, stdout=subprocess.DEVNULL)
    return np.load(out)


def inputs(rows, cols, rng):
    g = rng.standard_normal((rows, cols)).astype(np.float32)
    out = g.copy()
    out[:, rng.choice(cols, max(1, cols // 100), replace=False)] *= 30
    w = (0.02 * rng.standard_normal((rows, cols))).astype(np.float32)
    w[rng.choice(rows, rows // 10, replace=False)] *= 4
    dy = g * np.exp(3 * rng.standard_normal((rows, 1))).astype(np.float32)
    return [("x-gaussian", "x", "e4m3", (1, 128), g),
            ("x-outliers", "x", "e4m3", (1, 128), out),
            ("x-student3", "x", "e4m3", (1, 128), rng.standard_t(3, (rows, cols)).astype(np.float32)),
            ("w-gaussian", "w", "e4m3", (128, 128), w),
            ("dy-rowscaled", "dy", "e5m2", (1, 128), dy)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fp8lab", required=True, help="the fp8lab binary (checks the fp32 model)")
    p.add_argument("--rows", type=int, default=2048)
    p.add_argument("--cols", type=int, default=2048)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    print(f"blockwise casts of [{a.rows}, {a.cols}] bf16 tensors, seed {a.seed}; the fp32 model is "
          f"checked code for code against `fp8lab quantize --recipe blockwise`\n")
    print("| input | scales | rel. RMS error | SQNR dB | to zero | |q| in top binade |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, operand, fmt, groups, raw in inputs(a.rows, a.cols, rng):
            x = bf16(raw)
            codes = fp8lab_codes(a.fp8lab, x, operand, fmt, tmp)
            q32, _ = cast(x, fmt, groups, pow2=False)
            mismatch = int(np.count_nonzero(decode(codes, fmt) != q32))
            if mismatch:
                sys.exit(f"{name}: the fp32 model differs from fp8lab quantize in {mismatch} codes")
            fmax = FORMATS[fmt][2]
            for label, pow2 in (("fp32", False), ("power of 2", True)):
                q, deq = cast(x, fmt, groups, pow2)
                x64 = x.astype(np.float64)
                err = np.linalg.norm(x64 - deq) / np.linalg.norm(x64)
                zero = np.count_nonzero((q == 0) & (x != 0)) / max(1, np.count_nonzero(x))
                top = np.count_nonzero(np.abs(q) >= fmax / 2) / q.size
                print(f"| {name} ({fmt}) | {label} | {100 * err:.4f}% | {-20 * np.log10(err):.2f} | "
                      f"{100 * zero:.4f}% | {100 * top:.2f}% |")


if __name__ == "__main__":
    main()
