// Matrix multiply in the operand layout of Hopper's FP8 GEMMs: both operands K-major ("TN").
//
//   C[M, N] = epilogue( A[M, K] · B[N, K]ᵀ )
//
// Semantics by operand dtype (dispatched in one place, gemm_cpu.cpp):
//   f32 × f32         fp32 GEMM (reference and finite-difference use)
//   bf16 × bf16       exact fp32 copies of the bf16 values, fp32 accumulation
//   fp8 × fp8         e4m3/e5m2 codes decoded exactly to fp32, fp32 accumulation, then the fp32
//                     accumulator is multiplied by (inv_scale_a * inv_scale_b) computed in fp32.
//                     e5m2 × e5m2 is rejected (cuBLASLt has no such kernel). M, N and K must be
//                     multiples of 16 (cuBLASLt's FP8 constraint), else ErrorKind::shape.
// C is f32 or bf16 (round to nearest even from the fp32 result). With `accumulate` (f32 C only)
// the result is added to C (fp32 add), otherwise C is overwritten.
// The CPU twin accumulates through OpenBLAS sgemm: deterministic for a fixed thread count.
#pragma once

#include "fp8lab/tensor.hpp"

namespace fp8lab {

struct GemmOptions {
  float inv_scale_a = 1.0f;  // fp8 operands only: 1/scale of A's cast
  float inv_scale_b = 1.0f;  // fp8 operands only: 1/scale of B's cast
  bool accumulate = false;   // C += A·Bᵀ (f32 C only)
};

// cuBLASLt's FP8 GEMM constraint: every dimension a multiple of 16.
inline constexpr std::int64_t kFp8GemmAlignment = 16;

// C[M, N] = A[M, K] · B[N, K]ᵀ with the semantics above. Throws on mismatched shapes, unsupported
// dtype pairs, misaligned FP8 shapes (ErrorKind::shape naming A, B and C) and non-CPU views.
void gemm_tn_cpu(const TensorView& a, const TensorView& b, const TensorView& c,
                 const GemmOptions& options = {});

// Checks shared by the CPU and CUDA GEMMs: ranks, matching K, C's shape, dtype pairs, FP8
// alignment. Returns normally only for a supported call.
void check_gemm_tn_args(const TensorView& a, const TensorView& b, const TensorView& c,
                        const GemmOptions& options);

}  // namespace fp8lab
