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
// Grouped FP8 scales (fp8lab/fp8_scale_layout.hpp): an operand may instead carry one inverse
// scale per group; then C[m, n] = sum over K blocks of (A_blk · B_blkᵀ)[m, n] · sa · sb, the
// block being 128 when either operand has 128-wide groups along K (vec128, block128) and all of
// K otherwise, sa and sb the inverse scales of the block's groups of row m of A and row n of B.
// Supported pairs (A, B), as on Hopper's cuBLASLt: (tensor, tensor), (row, row),
// (vec128, vec128), (vec128, block128); 128-wide groups need K (and block128's N) to be
// multiples of 128.
// C is f32 or bf16 (round to nearest even from the fp32 result). With `accumulate` the result is
// added to C (fp32 add; a bf16 C widened first and the sum rounded once, as cuBLASLt's beta = 1
// epilogue does), otherwise C is overwritten.
// The CPU twin accumulates through OpenBLAS sgemm: deterministic for a fixed thread count.
#pragma once

#include "fp8lab/fp8_scale_layout.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab {

struct GemmOptions {
  float inv_scale_a = 1.0f;  // fp8 operands only: 1/scale of A's cast
  float inv_scale_b = 1.0f;  // fp8 operands only: 1/scale of B's cast
  bool accumulate = false;   // C += A·Bᵀ
  // Grouped scales (fp8 operands only): the per-group inverse scales of A and B in the layout of
  // their ScaleMode. Mode tensor uses inv_scale_a / inv_scale_b above.
  ScaleMode scale_mode_a = ScaleMode::tensor, scale_mode_b = ScaleMode::tensor;
  const float* inv_scales_a = nullptr;
  const float* inv_scales_b = nullptr;
};

// Checks the scale modes of an FP8 GEMM A [M, k] · B [n, k]ᵀ (the pairs and multiples above);
// `what` names the GEMM in the error.
void check_gemm_scale_modes(ScaleMode a, ScaleMode b, std::int64_t n, std::int64_t k,
                            const std::string& what);

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
