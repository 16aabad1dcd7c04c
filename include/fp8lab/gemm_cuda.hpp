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
// GELU computed from the fp32 product before either is rounded to bf16 (cuBLASLt's GELU_AUX);
// dgelu writes out = (A·B) · GELU'(aux), aux holding GELU's input (cuBLASLt's DGELU). aux is a
// bf16 tensor of out's shape that overlaps nothing. GELU is the tanh form (Backend::gelu_forward).
//
// Grouped scales (GemmArg::scale_mode): the pairs and multiples of fp8lab/gemm.hpp, mapped to
// cuBLASLt's OUTER_VEC_32F, VEC128_32F and BLK128x128_32F scale modes; precise accumulation only.
//
// One CublasLtGemm holds the handle, one shared workspace, and the plans (descriptors and the
// heuristic's candidate algorithms), built once per shape/type/option key and cached. A plan's
// algorithm is picked on its first call (GemmAlgoChoice) and kept.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

enum class GemmEpilogue : std::uint8_t { none, gelu_aux, dgelu };
const char* gemm_epilogue_name(GemmEpilogue e);  // "none", "gelu-aux", "dgelu"

// How a plan's algorithm is picked on its first call.
// - heuristic (default): the best-ranked of cuBLASLt's candidates that runs. The pick depends
//   only on the plan's key, so every run computes the same bits.
// - timed: every candidate that runs is timed on the call's own operands (one warm-up launch,
//   then the median of kTimedLaunches) and the fastest is kept. It costs a few launches per
//   candidate, once per plan. Two candidates within timing noise of each other can win in
//   different runs, and different algorithms sum in different orders, so bits can differ
//   between runs (never between the calls of one run once a plan is picked). out and aux are
//   written by every timed launch; an accumulating call's out is saved to the host first and
//   restored, so the call's result is the same as with one launch.
enum class GemmAlgoChoice : std::uint8_t { heuristic, timed };
const char* gemm_algo_choice_name(GemmAlgoChoice c);  // "heuristic", "timed"

// What the timed pick measured for one plan (CublasLtGemm::tuning_records).
struct GemmTuningRecord {
  std::string gemm;       // the GEMM's shapes, layouts, types and epilogue
  int candidates = 0;     // cuBLASLt's ranked candidates that ran
  int chosen = 0;         // the fastest one's rank (0: the heuristic's own pick)
  double first_ms = 0;    // median time of the best-ranked candidate that ran
  double chosen_ms = 0;   // median time of the chosen one
};

struct GemmCudaOptions {
  bool fast_accum = false;  // FP8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM (off: precise, default)
  bool accumulate = false;  // out += A·B (beta = 1)
  GemmEpilogue epilogue = GemmEpilogue::none;
  TensorView aux{};  // gelu_aux: written (A·B in bf16); dgelu: read (GELU's input)
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

  // Applies to plans picked from now on; already picked plans keep their algorithm.
  void set_algo_choice(GemmAlgoChoice choice) { choice_ = choice; }
  static constexpr int kTimedLaunches = 5;
  // One record per plan picked by timing, in the order they were picked.
  const std::vector<GemmTuningRecord>& tuning_records() const { return tuning_; }

  struct Plan;

 private:
  Plan& plan_for(const std::string& key, const GemmArg& a, const GemmArg& b, const TensorView& out,
                 const GemmCudaOptions& options);
  void* handle_ = nullptr;  // cublasLtHandle_t
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
  GemmAlgoChoice choice_ = GemmAlgoChoice::heuristic;
  std::vector<GemmTuningRecord> tuning_;
};

}  // namespace fp8lab
