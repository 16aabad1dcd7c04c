#!/usr/bin/env python3
"""What AdamW's moments in bf16 change in each update, on the CPU.

`optim.moments=bf16` keeps m and v in bf16: each update computes in fp32 from the stored
moments, takes its step from the new moments unrounded, then rounds them once to nearest even
for storage (CpuBackend::adamw_update; the CUDA kernel gives the same bits). This runs that
arithmetic in numpy beside the same update with fp32 moments, on the same gradient stream, and
reports how far the bf16 path's updates stray from the fp32 path's:

  rms         the rms of (u_bf16 - u_fp32) over the rms of u_fp32, u = m_hat / (sqrt(v_hat) + eps)
  bias        the mean of (u_bf16 - u_fp32) * sign(u_fp32) over the mean |u_fp32|: a systematic
              shrinking (< 0) or growing (> 0) of the steps, where rms is noise
  v ratio     the mean of v_bf16 / v_fp32 - 1 at the last step
  drift       |sum of the bf16 path's steps - the fp32 path's| over |the fp32 path's sum|,
              summed per element over the run (the weights' displacement without decay)
  own change  for scale: the rms of u_fp32's change from one step to the next over the rms of
              u_fp32, what the gradient's own noise does to the update every step

Gradients: per element g = mu + sigma * N(0, 1), sigma log-normal across elements (sd 2 in ln,
so the moments span many binades), mu = snr * sigma * |N(0, 1)|, for several signal-to-noise
ratios snr. The optimizer's betas and eps are fp8lab's defaults (include/fp8lab/config.hpp).

Usage: bench/probes/adamw_bf16_moments_error.py [--elements 50000 --steps 2300 --seed 1]
"""
import argparse

import numpy as np


def bf16(a):
    """Rounds float32 values to bf16 (nearest even) and returns them as float32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def step(m, v, g, t, beta1, beta2, eps):
    """One update's new moments (unrounded, fp32) and its step direction, as the backend does."""
    f = np.float32
    m_new = f(beta1) * m + f(1 - beta1) * g
    v_new = f(beta2) * v + f(1 - beta2) * g * g
    m_hat = m_new / f(1 - beta1**t)
    v_hat = v_new / f(1 - beta2**t)
    return m_new, v_new, m_hat / (np.sqrt(v_hat) + f(eps))


def run(snr, elements, steps, rng, beta1, beta2, eps):
    sigma = np.exp(2 * rng.standard_normal(elements)).astype(np.float32) * np.float32(1e-3)
    mu = (snr * sigma * np.abs(rng.standard_normal(elements))).astype(np.float32)
    m32 = np.zeros(elements, np.float32)
    v32 = np.zeros_like(m32)
    m16, v16 = m32.copy(), v32.copy()
    sum32 = np.zeros(elements, np.float64)
    sum16 = np.zeros_like(sum32)
    rms, bias, own = [], [], []
    u_prev = None
    for t in range(1, steps + 1):
        g = (mu + sigma * rng.standard_normal(elements)).astype(np.float32)
        m32, v32, u32 = step(m32, v32, g, t, beta1, beta2, eps)
        m16, v16, u16 = step(m16, v16, g, t, beta1, beta2, eps)
        m16, v16 = bf16(m16), bf16(v16)  # stored rounded; this step used them unrounded
        sum32 += u32
        sum16 += u16
        d = (u16 - u32).astype(np.float64)
        rms.append(np.sqrt(np.mean(d * d) / np.mean(u32.astype(np.float64) ** 2)))
        bias.append(np.mean(d * np.sign(u32)) / np.mean(np.abs(u32)))
        if u_prev is not None:
            c = (u32 - u_prev).astype(np.float64)
            own.append(np.sqrt(np.mean(c * c) / np.mean(u32.astype(np.float64) ** 2)))
        u_prev = u32
    drift = np.sum(np.abs(sum16 - sum32)) / np.sum(np.abs(sum32))
    return np.mean(rms), np.mean(bias), np.mean(v16 / v32) - 1, drift, np.mean(own)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--elements", type=int, default=50000)
    p.add_argument("--steps", type=int, default=2300, help="the long study's optimizer steps")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    beta1, beta2, eps = 0.9, 0.95, 1e-8
    print(f"AdamW updates with bf16 against fp32 moments: {a.elements} elements, {a.steps} steps, "
          f"betas ({beta1}, {beta2}), eps {eps}, seed {a.seed}\n")
    print("| snr | update rms error | update bias | v ratio - 1 | drift of the summed steps | "
          "own change a step |")
    print("|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(a.seed)
    for snr in (0.0, 0.1, 1.0, 10.0):
        rms, bias, vr, drift, own = run(snr, a.elements, a.steps, rng, beta1, beta2, eps)
        print(f"| {snr:g} | {100 * rms:.3f}% | {100 * bias:+.4f}% | {vr:+.2e} | {100 * drift:.3f}% | "
              f"{100 * own:.1f}% |")


if __name__ == "__main__":
    main()
