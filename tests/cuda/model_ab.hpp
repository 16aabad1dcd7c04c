// A/B runs of the whole GPT on the GPU for the model's fusion switches (GptModel::set_fuse_amax,
// set_fuse_norm_add): the same small model, weights and batches on a fresh backend per arm, and
// the check that two arms computed the same loss bits and gradient bytes.
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "fp8lab/model.hpp"
#include "model/model_fixtures.hpp"

namespace fp8lab::testing {

struct ModelRun {
  double loss = 0, eval_loss = 0;
  std::vector<float> grads;
};

// `layers` blocks of d 128 (head_dim 64, every GEMM dimension a multiple of 16); `configure`
// sets the arm's switches. Two micro-batches (the second accumulates onto the gradients and
// finds every amax slot and meta already used once), then an evaluation.
inline ModelRun run_gpu_model(const PrecisionConfig& precision, std::int64_t layers,
                              std::uint64_t seed, const std::function<void(GptModel&)>& configure) {
  ModelConfig c;
  c.vocab_size = 320, c.d_model = 128, c.n_layers = layers, c.n_heads = 2, c.seq_len = 96;
  const std::int64_t batch = 2, m = batch * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  auto gpu = make_cuda_backend();
  GptModel model(c, precision, batch, *gpu);
  configure(model);
  model.init_parameters(seed);
  model.zero_grads();
  ModelRun r;
  r.loss = model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, 64).loss_sum;
  r.loss += model.forward_backward(targets.data(), inputs.data(), 1.f / m, -1, 64).loss_sum;
  r.grads = model.get_gradients();
  r.eval_loss = model.evaluate(inputs.data(), targets.data(), -1, 64).loss_sum;
  return r;
}

inline void expect_bit_identical(const ModelRun& a, const ModelRun& b) {
  EXPECT_EQ(std::memcmp(&a.loss, &b.loss, sizeof(double)), 0) << a.loss << " vs " << b.loss;
  EXPECT_EQ(std::memcmp(&a.eval_loss, &b.eval_loss, sizeof(double)), 0)
      << a.eval_loss << " vs " << b.eval_loss;
  ASSERT_EQ(a.grads.size(), b.grads.size());
  EXPECT_EQ(std::memcmp(a.grads.data(), b.grads.data(), a.grads.size() * sizeof(float)), 0);
}

// A parameterised test's name for a policy case: "fp8_mlp_recompute".
inline std::string policy_case_name(PrecisionPolicy policy, bool recompute) {
  std::string n = policy_name(policy);
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n + (recompute ? "_recompute" : "");
}

}  // namespace fp8lab::testing
