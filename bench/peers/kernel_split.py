#!/usr/bin/env python3
"""The PyTorch peer's GPU time by kind of kernel: GEMM, attention, other.

Why: `fp8lab bench model --op-times` says how much of fp8lab's step is cuBLASLt GEMMs, attention
and the rest. Whether fp8lab can be some factor faster than the peer turns on the same split of
the peer's step: both run their GEMMs through cuBLAS(Lt) on the same GPU at the same power cap,
so only the other kinds can differ by much. gpt_peer.py --profile feeds one profiled training
step's kernels (name, device microseconds, calls) to split() and stores the result in its JSON.

Kinds, from the kernel's name (the first pattern that matches wins):
  attention  FlashAttention (pytorch_flash::flash_fwd/bwd...), the memory-efficient kernels
             (fmha_cutlassF/B), cuDNN's fused SDPA
  gemm       cuBLAS/cuBLASLt (nvjet_*, sm90_xmma_gemm_*, *gemm*, *gemv*, splitKreduce), CUTLASS
             tensor-op kernels, Triton matmul templates (triton_tem_*mm*)
  other      everything else: Triton's fused pointwise and reduction kernels, the fused AdamW,
             memsets and copies
Unknown names land in "other", and the split lists its largest kernels with their kinds, so a
misfiled kernel shows in the output.

Run as a script, it checks the classifier on real kernel names from torch 2.x profiles (no GPU or
torch needed; CTest runs it).
"""
import re
import sys

KINDS = (
    ("attention", re.compile(r"flash|fmha|sdpa|attention", re.IGNORECASE)),
    ("gemm", re.compile(r"nvjet|gemm|gemv|xmma|splitkreduce|cutlass.*(tensorop|wmma|s16816)"
                        r"|triton_tem_\w*mm", re.IGNORECASE)),
)


def kind_of(name):
    """'attention', 'gemm' or 'other' for a kernel name."""
    for kind, pattern in KINDS:
        if pattern.search(name):
            return kind
    return "other"


def split(kernels, top=12):
    """kernels: (name, device_us, calls) triples, one per distinct kernel. Returns the device
    milliseconds per kind, their total, and the `top` largest kernels (name cut to 120
    characters, kind, ms, calls), largest first."""
    ms = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    rows = []
    for name, us, calls in kernels:
        if us < 0 or calls < 0:
            raise ValueError(f"kernel {name!r}: negative time {us} us or calls {calls}")
        kind = kind_of(name)
        ms[kind] += us / 1e3
        rows.append({"name": name[:120], "kind": kind, "ms": us / 1e3, "calls": calls})
    rows.sort(key=lambda r: -r["ms"])
    total = sum(ms.values())
    return {"gemm_ms": ms["gemm"], "attention_ms": ms["attention"], "other_ms": ms["other"],
            "total_ms": total, "top": rows[:top]}


def describe(s):
    """One line for a log."""
    t = s["total_ms"] or 1.0
    return (f"{s['total_ms']:.2f} ms of kernels: GEMM {s['gemm_ms']:.2f} ms "
            f"({100 * s['gemm_ms'] / t:.1f}%), attention {s['attention_ms']:.2f} ms "
            f"({100 * s['attention_ms'] / t:.1f}%), other {s['other_ms']:.2f} ms "
            f"({100 * s['other_ms'] / t:.1f}%)")


def _self_check():
    named = {
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT": "gemm",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1": "gemm",
        "sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_cgasize1x2x1": "gemm",
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn>":
            "gemm",
        "void splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float>": "gemm",
        "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn": "gemm",
        "triton_tem_fused_addmm_0": "gemm",
        "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>": "attention",
        "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<...>": "attention",
        "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<...>>":
            "attention",
        "fmha_cutlassB_bf16_aligned_64x64_k64_sm80": "attention",
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64": "attention",
        "triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_0": "other",
        "triton_poi_fused_gelu_gelu_backward_3": "other",
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>":
            "other",
        "Memset (Device)": "other",
    }
    bad = [(n, kind_of(n), k) for n, k in named.items() if kind_of(n) != k]
    for n, got, want in bad:
        print(f"kernel_split: {n!r} classed {got}, want {want}", file=sys.stderr)
    s = split([(n, 1000.0 * (i + 1), i + 1) for i, n in enumerate(named)], top=3)
    want = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    for i, (n, k) in enumerate(named.items()):
        want[k] += i + 1.0
    sums_ok = all(abs(s[f"{k}_ms"] - v) < 1e-9 for k, v in want.items())
    sums_ok = sums_ok and abs(s["total_ms"] - sum(want.values())) < 1e-9
    top_ok = [r["ms"] for r in s["top"]] == [16.0, 15.0, 14.0]
    if not sums_ok or not top_ok:
        print(f"kernel_split: split gave {s}, want per-kind ms {want}", file=sys.stderr)
    try:
        split([("x", -1.0, 1)])
        raises = False
    except ValueError:
        raises = True
    if not raises:
        print("kernel_split: a negative time was accepted", file=sys.stderr)
    ok = not bad and sums_ok and top_ok and raises
    print(f"kernel_split self-check: {len(named)} names, {'ok' if ok else 'FAILED'}; "
          f"{describe(s)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(_self_check())
