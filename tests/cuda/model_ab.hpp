// A/B runs of the whole GPT on the GPU for the memory options (PrecisionConfig::
// pointwise_recompute) and the GELU in fc's GEMM: the same small model, weights and batches on a
// fresh backend per arm, and the check that two arms computed the same loss bits and gradient
// bytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/forwarding_backend.hpp"
#include "cuda/cuda_test_util.hpp"
#include "fp8lab/model.hpp"
#include "model/model_ab_run.hpp"
#include "model/model_fixtures.hpp"

namespace fp8lab::testing {

// `layers` blocks of d 128 (head_dim 64, every GEMM dimension a multiple of 16), run on
// kAbBatch sequences.
inline ModelConfig ab_model(std::int64_t layers) {
  ModelConfig c;
  c.vocab_size = 320, c.d_model = 128, c.n_layers = layers, c.n_heads = 2, c.seq_len = 96;
  return c;
}
constexpr std::int64_t kAbBatch = 2;

// The CUDA backend with the MLP's fc and GELU as separate ops (Backend::linear_gelu_forward's
// default, which the CPU backend and pointwise recompute run too) instead of the GELU in the bf16
// fc GEMM's epilogue: the oracle for that epilogue, and the GELU of an arm compared bit for bit
// with pointwise recompute. Everything else is the CUDA backend's own, memory loans included.
class SeparateGeluCudaBackend final : public ForwardingBackend {
 public:
  SeparateGeluCudaBackend() : ForwardingBackend(make_cuda_backend()) {}
  void lend_idle(const TensorView& region) override { inner().lend_idle(region); }
  std::unique_ptr<LinearContext> linear_gelu_forward(LinearMode m, const TensorView& x,
                                                     const TensorView& w, const TensorView& pre,
                                                     const TensorView& y, std::string_view n,
                                                     AmaxSlot xa = {}, AmaxSlot ya = {},
                                                     AmaxSlot wa = {}) override {
    return Backend::linear_gelu_forward(m, x, w, pre, y, n, xa, ya, wa);
  }
};

// ab_model(layers) on a fresh CUDA backend, or with `separate_gelu` a SeparateGeluCudaBackend
// (run_two_batches_and_evaluate says what runs).
inline ModelRun run_gpu_model(const PrecisionConfig& precision, std::int64_t layers,
                              std::uint64_t seed, bool separate_gelu = false) {
  const ModelConfig c = ab_model(layers);
  const std::int64_t m = kAbBatch * c.seq_len;
  std::unique_ptr<Backend> gpu =
      separate_gelu ? std::make_unique<SeparateGeluCudaBackend>() : make_cuda_backend();
  GptModel model(c, precision, kAbBatch, *gpu);
  return run_two_batches_and_evaluate(model, seed, random_tokens(m, c.vocab_size, seed, 1),
                                      random_tokens(m, c.vocab_size, seed, 2), 64);
}

// A parameterised test's name for a policy case: "fp8_mlp_recompute".
inline std::string policy_case_name(PrecisionPolicy policy, bool recompute) {
  std::string n = policy_name(policy);
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n + (recompute ? "_recompute" : "");
}

}  // namespace fp8lab::testing
