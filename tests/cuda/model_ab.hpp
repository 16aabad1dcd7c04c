// A/B runs of the whole GPT on the GPU for the model's fusion switches (GptModel::set_fuse_amax,
// set_fuse_norm_add) and memory options (PrecisionConfig::pointwise_recompute): the same small
// model, weights and batches on a fresh backend per arm, and the check that two arms computed the
// same loss bits and gradient bytes.
#pragma once

#include <functional>
#include <string>

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

// ab_model(layers) on a fresh CUDA backend; `configure` sets the arm's switches
// (run_two_batches_and_evaluate says what runs).
inline ModelRun run_gpu_model(const PrecisionConfig& precision, std::int64_t layers,
                              std::uint64_t seed, const std::function<void(GptModel&)>& configure) {
  const ModelConfig c = ab_model(layers);
  const std::int64_t m = kAbBatch * c.seq_len;
  auto gpu = make_cuda_backend();
  GptModel model(c, precision, kAbBatch, *gpu);
  configure(model);
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
