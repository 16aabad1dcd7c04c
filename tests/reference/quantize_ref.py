#!/usr/bin/env python3
"""An independent implementation of fp8lab's FP8 recipe (docs/design.md §2), and a check of
`fp8lab quantize` against it, byte for byte.

Nothing here calls fp8lab's code. Every rounding is done from first principles on exact rationals
(fractions.Fraction): a value is rounded to a binary format with p significand bits and minimum
normal exponent emin by finding its binade, dividing by the quantum 2^(e - p + 1) and rounding the
quotient to the nearest integer, ties to the even one. fp32 arithmetic (the scale fmax / amax, the
product x * scale, 1 / scale) is the exact rational result rounded that way to (p=24, emin=-126);
the FP8 cast rounds to (p=4, emin=-6) for E4M3 and (p=3, emin=-14) for E5M2 with an unbounded
exponent, and saturates to ±max when the rounded magnitude exceeds max (satfinite).

Usage:
  quantize_ref.py --fp8lab build/fp8lab --workdir DIR   # run the adversarial cases, exit 0 if all agree
  quantize_ref.py --reference X.npy --format e4m3       # print the reference result for one file
Needs numpy (Debian: python3-numpy, installed by scripts/setup).
"""

import argparse
import json
import math
import os
import struct
import subprocess
import sys
from fractions import Fraction

try:
    import numpy as np
except ImportError:  # pragma: no cover
    sys.exit("quantize_ref.py needs numpy: run scripts/setup (Debian package python3-numpy)")

# name: (significand bits incl. the implicit one, exponent bias, largest finite magnitude)
FORMATS = {
    "e4m3": dict(p=4, bias=7, fmax=Fraction(448)),
    "e5m2": dict(p=3, bias=15, fmax=Fraction(57344)),
}
F32_P, F32_EMIN = 24, -126
F32_MAX = Fraction((2 ** 24 - 1) * 2 ** 104)


def floor_log2(r):
    """The integer e with 2^e <= r < 2^(e+1), for a positive Fraction r."""
    e = r.numerator.bit_length() - r.denominator.bit_length()
    if Fraction(2) ** e > r:
        e -= 1
    elif Fraction(2) ** (e + 1) <= r:
        e += 1
    return e


def round_nearest_even(r, p, emin):
    """r (a Fraction, any sign) rounded to p significand bits, normals from 2^emin down to
    subnormals with quantum 2^(emin - p + 1); exponent unbounded above."""
    if r == 0:
        return Fraction(0)
    sign = -1 if r < 0 else 1
    a = abs(r)
    quantum = Fraction(2) ** (max(floor_log2(a), emin) - p + 1)
    q = a / quantum
    n = q.numerator // q.denominator
    rest = q - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return sign * n * quantum


def to_f32(r):
    """Exact rational -> fp32 value (as a Fraction), IEEE round to nearest even; overflow -> inf."""
    v = round_nearest_even(r, F32_P, F32_EMIN)
    return math.copysign(math.inf, v) if abs(v) > F32_MAX else v


def fp8_code(y, negative, fmt):
    """The FP8 code of the fp32 value y (a Fraction; `negative` carries the sign of a -0).
    Returns (code, saturated)."""
    spec = FORMATS[fmt]
    p, bias, fmax = spec["p"], spec["bias"], spec["fmax"]
    emin = 1 - bias
    v = abs(round_nearest_even(y, p, emin))
    saturated = v > fmax
    if saturated:
        v = fmax
    sign_bit = 0x80 if negative else 0
    if v == 0:
        return sign_bit, saturated
    e = floor_log2(v)
    if e < emin:  # subnormal: exponent field 0, mantissa counts quanta of 2^(emin - p + 1)
        mantissa = v / Fraction(2) ** (emin - p + 1)
        assert mantissa.denominator == 1
        return sign_bit | int(mantissa), saturated
    mantissa = (v / Fraction(2) ** e - 1) * 2 ** (p - 1)
    assert mantissa.denominator == 1
    return sign_bit | ((e + bias) << (p - 1)) | int(mantissa), saturated


def fp8_value(code, fmt):
    """Decode a finite FP8 code exactly."""
    p, bias = FORMATS[fmt]["p"], FORMATS[fmt]["bias"]
    m_bits = p - 1
    sign = -1 if code & 0x80 else 1
    exp_field, mantissa = (code & 0x7F) >> m_bits, code & ((1 << m_bits) - 1)
    if exp_field == 0:
        return sign * Fraction(mantissa) * Fraction(2) ** (1 - bias - m_bits)
    return sign * (1 + Fraction(mantissa, 2 ** m_bits)) * Fraction(2) ** (exp_field - bias)


def reference_quantize(x, fmt):
    """The recipe on a 2-D float32 array. Returns a dict like `fp8lab quantize --json` plus the
    codes. Raises ValueError on a non-finite input."""
    flat = x.reshape(-1)
    if not np.all(np.isfinite(flat)):
        raise ValueError("non-finite input")
    amax = max((abs(Fraction(float(v))) for v in flat), default=Fraction(0))
    scale = Fraction(1) if amax == 0 else to_f32(FORMATS[fmt]["fmax"] / amax)
    if scale == math.inf:
        scale = F32_MAX  # fp8lab clamps an overflowing scale to FLT_MAX
    inv_scale = to_f32(1 / scale)
    codes = np.empty(flat.shape, dtype=np.uint8)
    saturated = underflow = 0
    signal = noise = 0.0
    for i, v in enumerate(flat):
        xv = Fraction(float(v))
        y = to_f32(xv * scale)
        code, sat = fp8_code(y, bool(np.signbit(v)), fmt)
        codes[i] = code
        saturated += sat
        underflow += xv != 0 and (code & 0x7F) == 0
        back = float(to_f32(fp8_value(code, fmt) * inv_scale))
        signal += float(v) * float(v)
        noise += (float(v) - back) ** 2
    return dict(
        amax=float(amax), scale=float(scale), inv_scale=float(inv_scale),
        saturated=saturated, underflow=underflow,
        relative_error=math.sqrt(noise / signal) if signal > 0 else None,
        sqnr_db=10 * math.log10(signal / noise) if signal > 0 and noise > 0 else None,
        codes=codes.reshape(x.shape))


# ---------------------------------------------------------------------------------------------
# Adversarial inputs. Each case is (name, float32 2-D array); every case runs in both formats.

def all_finite_positive_values(fmt):
    """Every finite non-negative FP8 value, ascending."""
    max_code = 0x7E if fmt == "e4m3" else 0x7B
    return [fp8_value(c, fmt) for c in range(0, max_code + 1)]


def tie_row(fmt, shift):
    """Midpoints between neighbouring FP8 values (exact rounding ties, subnormal ties included),
    both signs, each divided by 2^shift, plus ±fmax / 2^shift so that the scale is exactly 2^shift."""
    vals = all_finite_positive_values(fmt)
    mids = [(a + b) / 2 for a, b in zip(vals, vals[1:])]
    row = [float(m / 2 ** shift) for m in mids] + [-float(m / 2 ** shift) for m in mids]
    fmax = float(FORMATS[fmt]["fmax"] / 2 ** shift)
    return np.array([row + [fmax, -fmax]], dtype=np.float32)


def near_ties(fmt, rng):
    """fp32 neighbours of every tie (one ulp above and below), scale 1."""
    t = tie_row(fmt, 0)
    up = np.nextafter(t, np.float32(np.inf))
    down = np.nextafter(t, np.float32(-np.inf))
    return np.concatenate([t, up, down], axis=0)  # fmax's neighbours: one above sets amax


def subnormal_range(fmt, rng):
    """Values around and below the FP8 subnormals at scale 1 (underflow to ±0, ties to zero)."""
    p, bias = FORMATS[fmt]["p"], FORMATS[fmt]["bias"]
    min_normal = 2.0 ** (1 - bias)
    min_sub = 2.0 ** (1 - bias - (p - 1))
    v = rng.uniform(-2 * min_normal, 2 * min_normal, size=(23, 29)).astype(np.float32)
    v[0, :8] = [min_sub / 2, -min_sub / 2, min_sub / 4, min_sub, 1.5 * min_sub, -3 * min_sub / 2,
                min_normal, 1e-45]  # 1e-45: an fp32 subnormal
    v[1, 0] = float(FORMATS[fmt]["fmax"])  # pins the scale at exactly 1
    return v


def maxima(fmt, rng):
    fmax = float(FORMATS[fmt]["fmax"])
    vals = all_finite_positive_values(fmt)
    below = float(vals[-2])
    row = [fmax, -fmax, below, -below, (fmax + below) / 2, -(fmax + below) / 2,
           np.nextafter(np.float32(fmax), np.float32(0)), fmax * 0.999, 0.0, -0.0]
    return np.array([row], dtype=np.float32)


def arbitrary_bit_patterns(rng, shape):
    """Uniformly random finite fp32 bit patterns: every exponent, huge dynamic range."""
    bits = rng.integers(0, 2 ** 32, size=shape, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    return np.where(np.isfinite(x), x, np.float32(1.0)).astype(np.float32)


def log_uniform(rng, shape, lo, hi):
    mags = np.exp(rng.uniform(math.log(lo), math.log(hi), size=shape))
    return (mags * rng.choice([-1.0, 1.0], size=shape)).astype(np.float32)


def cases(fmt, seed):
    rng = np.random.default_rng(seed)
    zeros_mixed = np.zeros((5, 7), dtype=np.float32)
    zeros_mixed[2, 3] = -0.0
    zeros_mixed[4, 6] = 3.5e-3
    return [
        ("ties_scale_1", tie_row(fmt, 0)),
        ("ties_scale_2^20", tie_row(fmt, 20)),
        ("ties_scale_2^-7", tie_row(fmt, -7)),
        ("near_ties", near_ties(fmt, rng)),
        ("subnormal_range", subnormal_range(fmt, rng)),
        ("maxima", maxima(fmt, rng)),
        ("all_zeros", np.zeros((3, 4), dtype=np.float32)),
        ("signed_zeros", np.array([[0.0, -0.0, -0.0, 0.0]], dtype=np.float32)),
        ("zeros_and_one_value", zeros_mixed),
        ("one_element", rng.standard_normal((1, 1)).astype(np.float32)),
        ("normals_1x3221", rng.standard_normal((1, 3221)).astype(np.float32)),
        ("normals_37x61", (rng.standard_normal((37, 61)) * 1e3).astype(np.float32)),
        ("normals_61x37_tiny", (rng.standard_normal((61, 37)) * 1e-30).astype(np.float32)),
        ("tiny_amax_clamped_scale", (rng.standard_normal((3, 5)) * 1e-38).astype(np.float32)),
        ("log_uniform_1e-30_1e30", log_uniform(rng, (17, 19), 1e-30, 1e30)),
        ("arbitrary_fp32_bits", arbitrary_bit_patterns(rng, (13, 31))),
    ]


# ---------------------------------------------------------------------------------------------
# The check against the CLI.

def run_cli(fp8lab, args):
    return subprocess.run([fp8lab, "quantize", *args], capture_output=True, text=True)


def same_float(a, b):
    return a == b or (a is None and b is None)


def close_or_both_none(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check_case(fp8lab, workdir, fmt, name, x):
    """Returns a list of problems (empty when fp8lab agrees with the reference)."""
    stem = os.path.join(workdir, f"{fmt}_{name.replace('^', '')}")
    np.save(stem + ".npy", x)
    r = run_cli(fp8lab, ["--format", fmt, "--in", stem + ".npy", "--out", stem + "_q.npy",
                         "--out-transposed", stem + "_qt.npy", "--json"])
    if r.returncode != 0:
        return [f"exit code {r.returncode}: {r.stderr.strip()}"]
    got = json.loads(r.stdout)
    ref = reference_quantize(x, fmt)
    problems = []
    for key in ("amax", "scale", "inv_scale", "saturated", "underflow"):
        if not same_float(got[key], ref[key]):
            problems.append(f"{key}: fp8lab {got[key]!r}, reference {ref[key]!r}")
    for key in ("sqnr_db", "relative_error"):
        if not close_or_both_none(got[key], ref[key]):
            problems.append(f"{key}: fp8lab {got[key]!r}, reference {ref[key]!r}")
    q, qt = np.load(stem + "_q.npy"), np.load(stem + "_qt.npy")
    for label, arr, want in (("Q", q, ref["codes"]), ("QT", qt, ref["codes"].T)):
        if arr.dtype != np.uint8 or arr.shape != want.shape:
            problems.append(f"{label}: {arr.dtype}{arr.shape}, expected uint8{want.shape}")
        elif not np.array_equal(arr, want):
            bad = np.argwhere(arr != want)
            i = tuple(bad[0])
            problems.append(f"{label}: {len(bad)} bytes differ, first at {i}: fp8lab "
                            f"0x{arr[i]:02x}, reference 0x{want[i]:02x}")
    return problems


def check_rejections(fp8lab, workdir):
    """Bad inputs: exit code 2 and one line on stderr naming the problem."""
    problems = []
    bad = {
        "nan": (np.array([[1.0, np.nan], [2.0, 3.0]], dtype=np.float32), "non-finite"),
        "inf": (np.array([[1.0, -np.inf]], dtype=np.float32), "non-finite"),
        "float64": (np.ones((2, 2), dtype=np.float64), "dtype"),
        "three_d": (np.ones((2, 2, 2), dtype=np.float32), "2-D"),
    }
    for name, (arr, words) in bad.items():
        np.save(os.path.join(workdir, f"bad_{name}.npy"), arr)
    full = open(os.path.join(workdir, "bad_nan.npy"), "rb").read()
    with open(os.path.join(workdir, "bad_truncated.npy"), "wb") as f:
        f.write(full[:-3])
    bad["truncated"] = (None, "truncated")
    with open(os.path.join(workdir, "bad_magic.npy"), "wb") as f:
        f.write(b"PK\x03\x04" + full[4:])
    bad["magic"] = (None, "magic")
    for name, (_, words) in bad.items():
        r = run_cli(fp8lab, ["--in", os.path.join(workdir, f"bad_{name}.npy")])
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or words not in lines[0]:
            problems.append(f"bad input '{name}': exit {r.returncode}, stderr {r.stderr!r} "
                            f"(expected exit 2 and one line mentioning '{words}')")
    return problems


# ---------------------------------------------------------------------------------------------
# The grouped recipes: every group cast by the tensorwise reference above on its own values.

GROUPED = [("rowwise", "x", "row"), ("blockwise", "x", "vec128"), ("blockwise", "w", "block128")]


def group_shape(mode, rows, cols):
    return {"row": (1, cols), "vec128": (1, 128), "block128": (128, 128)}[mode]


def scale_index(mode, rows, cols, rg, cg):
    """Where cuBLASLt reads group (rg, cg)'s inverse scale (fp8lab/fp8_scale_layout.hpp)."""
    if mode == "row":
        return rg
    if mode == "vec128":
        return cg * rows + rg
    ld = (-(-cols // 128) + 3) // 4 * 4
    return rg * ld + cg


def reference_grouped(x, fmt, mode):
    rows, cols = x.shape
    gr, gc = group_shape(mode, rows, cols)
    codes = np.empty(x.shape, dtype=np.uint8)
    scales, saturated, underflow = {}, 0, 0
    for r0 in range(0, rows, gr):
        for c0 in range(0, cols, gc):
            ref = reference_quantize(x[r0:r0 + gr, c0:c0 + gc], fmt)
            codes[r0:r0 + gr, c0:c0 + gc] = ref["codes"]
            scales[scale_index(mode, rows, cols, r0 // gr, c0 // gc)] = ref["inv_scale"]
            saturated += ref["saturated"]
            underflow += ref["underflow"]
    return codes, scales, saturated, underflow


def check_grouped(fp8lab, workdir, seed):
    """Q, QT, Q's inverse scales (padding included) and the counts, per grouped recipe."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((129, 257)).astype(np.float32)
    x *= np.exp2(rng.integers(-12, 12, size=(129, 1))).astype(np.float32)  # rows of every size
    x[5, :] = 0.0  # an all-zero group: scale 1
    path = os.path.join(workdir, "grouped.npy")
    np.save(path, x)
    problems = []
    for recipe, operand, mode in GROUPED:
        for fmt in (sorted(FORMATS) if operand == "x" else ["e4m3"]):
            stem = os.path.join(workdir, f"grouped_{recipe}_{operand}_{fmt}")
            r = run_cli(fp8lab, ["--format", fmt, "--recipe", recipe, "--operand", operand,
                                 "--in", path, "--out", stem + "_q.npy", "--out-transposed",
                                 stem + "_qt.npy", "--out-scales", stem + "_s.npy", "--json"])
            where = f"{recipe} {operand} {fmt}"
            if r.returncode != 0:
                problems.append(f"{where}: exit code {r.returncode}: {r.stderr.strip()}")
                continue
            got = json.loads(r.stdout)
            codes, scales, sat, und = reference_grouped(x, fmt, mode)
            codes_t = reference_grouped(np.ascontiguousarray(x.T), fmt, mode)[0]
            s = np.load(stem + "_s.npy")
            want = np.ones(s.shape, dtype=np.float64)
            for i, v in scales.items():
                want[i] = v
            if not np.array_equal(np.load(stem + "_q.npy"), codes):
                problems.append(f"{where}: Q differs")
            if not np.array_equal(np.load(stem + "_qt.npy"), codes_t):
                problems.append(f"{where}: QT differs")
            if s.dtype != np.float32 or not np.array_equal(s.astype(np.float64), want):
                problems.append(f"{where}: inverse scales differ")
            if (got["saturated"], got["underflow"]) != (sat, und):
                problems.append(f"{where}: counts {got['saturated']}/{got['underflow']}, "
                                f"reference {sat}/{und}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fp8lab", help="path to the fp8lab binary: run the adversarial check")
    ap.add_argument("--workdir", default="quantize_ref_work")
    ap.add_argument("--seed", type=int, default=None, help="input seed (default: fresh)")
    ap.add_argument("--reference", help="print the reference result for this .npy and exit")
    ap.add_argument("--format", default="e4m3", choices=sorted(FORMATS))
    a = ap.parse_args()
    if a.reference:
        ref = reference_quantize(np.load(a.reference), a.format)
        ref.pop("codes")
        print(json.dumps(ref))
        return 0
    if not a.fp8lab:
        ap.error("give --fp8lab BINARY or --reference FILE")
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"quantize_ref: seed {seed} (replay with --seed {seed})")
    os.makedirs(a.workdir, exist_ok=True)
    failures = 0
    for fmt in sorted(FORMATS):
        for name, x in cases(fmt, seed):
            problems = check_case(a.fp8lab, a.workdir, fmt, name, x)
            status = "ok" if not problems else "MISMATCH"
            print(f"  {fmt} {name:26s} {str(x.shape):12s} {status}")
            for p in problems:
                print(f"      {p}")
            failures += bool(problems)
    problems = check_grouped(a.fp8lab, a.workdir, seed)
    print(f"  grouped recipes (rowwise x, blockwise x and w; Q, QT, scales, counts): "
          f"{'ok' if not problems else 'FAILED'}")
    for p in problems:
        print(f"      {p}")
    failures += bool(problems)
    problems = check_rejections(a.fp8lab, a.workdir)
    print(f"  rejections (NaN, inf, float64, 3-D, truncated, bad magic): "
          f"{'ok' if not problems else 'FAILED'}")
    for p in problems:
        print(f"      {p}")
    failures += bool(problems)
    print("quantize_ref: " + ("all agree" if failures == 0 else f"{failures} failures"))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
