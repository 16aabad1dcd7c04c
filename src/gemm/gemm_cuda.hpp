// cuBLASLt GEMMs: BF16 (the control) and FP8 (E4M3 x E4M3, E5M2 x E4M3, E4M3 x E5M2).
//
//   out[M, N] = (A · B) · a_inv_scale · b_inv_scale  (+ out, with accumulate)
//   A is [M, K]: a.t holds [M, K] (k_major) or [K, M];  B is [K, N]: b.t holds [N, K] (k_major)
//   or [K, N]. All tensors row-major. Accumulation in fp32; out bf16 or f32.
//
// FP8 operands must be K-major (what Hopper's FP8 tensor cores take, "TN" in cuBLAS terms), with
// M, N, K multiples of 16 and 16-byte aligned pointers; the inverse scales are device pointers
// (e.g. &Fp8Meta::inv_scale), so no host sync is needed between the amax and the GEMM. Anything
// else is an fp8lab::Error naming the GEMM's shape, never a wrong answer.
//
// Epilogues (bf16 operands and output only): gelu_aux writes out = GELU(A·B) and aux = A·B, the
// GELU computed from the fp32 product before either is rounded to bf16 (cuBLASLt's GELU_AUX).
// aux is a bf16 tensor of out's shape that overlaps nothing. GELU is the tanh form (Backend::gelu_forward).
//
// Grouped scales (GemmArg::scale_mode): the pairs and multiples of src/gemm/gemm.hpp, mapped to
// cuBLASLt's OUTER_VEC_32F, VEC128_32F and BLK128x128_32F scale modes; precise accumulation only.
//
// One CublasLtGemm holds the handle, one shared workspace, and the plans (descriptors and the
// heuristic's candidate algorithms), built once per shape/type/option key and cached. A plan's
// algorithm is picked on its first call and kept: the best-ranked of cuBLASLt's candidates that
// runs. The pick depends only on the plan's key, so every run computes the same bits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "fp8lab/fp8_scale_layout.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab {

struct GemmArg {
  TensorView t;
  bool k_major = true;
  const float* inv_scale = nullptr;  // device pointer; FP8 operands only
  // FP8 operands: how inv_scale is laid out (fp8lab/fp8_scale_layout.hpp): one float (tensor),
  // or one per group in the layout of the mode, for the operand [rows, K] as stored.
  ScaleMode scale_mode = ScaleMode::tensor;
};

enum class GemmEpilogue : std::uint8_t { none, gelu_aux };
const char* gemm_epilogue_name(GemmEpilogue e);  // "none", "gelu-aux"

struct GemmCudaOptions {
  bool fast_accum = false;  // FP8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM (off: precise, default)
  bool accumulate = false;  // out += A·B (beta = 1)
  // A bf16 out rounded once per call (a bf16 weight gradient, PrecisionConfig::grads): the plan
  // keeps cuBLASLt's split-K parts in fp32, where it could otherwise add them in bf16.
  bool round_once = false;
  GemmEpilogue epilogue = GemmEpilogue::none;
  TensorView aux{};  // gelu_aux: written (A·B in bf16)
};

class CublasLtGemm {
 public:
  explicit CublasLtGemm(std::size_t workspace_bytes = std::size_t{32} << 20);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  void matmul(const GemmArg& a, const GemmArg& b, const TensorView& out,
              const GemmCudaOptions& options, cudaStream_t stream);

  std::size_t cached_plans() const;
  std::size_t workspace_bytes() const { return workspace_bytes_; }

  struct Plan;

 private:
  Plan& plan_for(const std::string& key, const GemmArg& a, const GemmArg& b, const TensorView& out,
                 const GemmCudaOptions& options);
  void* handle_ = nullptr;  // cublasLtHandle_t
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
};

}  // namespace fp8lab
