// One arm of an A/B test of the whole GPT (a fusion switch or a memory option on and off, same
// weights and batches), on any backend, and the check that two arms computed the same bits.
// tests/model runs the arms on the CPU, tests/cuda/model_ab.hpp on the GPU.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fp8lab/model.hpp"

namespace fp8lab::testing {

struct ModelRun {
  double loss = 0, eval_loss = 0;
  std::vector<float> grads;
  std::int64_t peak_bytes = 0;  // the backend's peak after the run
};

// From `seed`'s weights: two micro-batches (the second accumulates onto the gradients and finds
// every amax slot, meta and shared buffer already used once), then an evaluation.
inline ModelRun run_two_batches_and_evaluate(GptModel& model, std::uint64_t seed,
                                             const std::vector<std::int32_t>& inputs,
                                             const std::vector<std::int32_t>& targets,
                                             int loss_chunk_rows) {
  const auto m = static_cast<float>(inputs.size());
  const int chunk = loss_chunk_rows;  // rows of logits per classifier call
  model.init_parameters(seed);
  model.zero_grads();
  ModelRun r;
  r.loss = model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, chunk).loss_sum;
  r.loss += model.forward_backward(targets.data(), inputs.data(), 1.f / m, -1, chunk).loss_sum;
  r.grads = model.get_gradients();
  r.eval_loss = model.evaluate(inputs.data(), targets.data(), -1, chunk).loss_sum;
  r.peak_bytes = model.backend().memory_stats().peak_bytes;
  return r;
}

inline void expect_bit_identical(const ModelRun& a, const ModelRun& b,
                                 const std::string& label = "") {
  EXPECT_EQ(std::memcmp(&a.loss, &b.loss, sizeof(double)), 0)
      << label << ": " << a.loss << " vs " << b.loss;
  EXPECT_EQ(std::memcmp(&a.eval_loss, &b.eval_loss, sizeof(double)), 0)
      << label << ": " << a.eval_loss << " vs " << b.eval_loss;
  ASSERT_EQ(a.grads.size(), b.grads.size()) << label;
  EXPECT_EQ(std::memcmp(a.grads.data(), b.grads.data(), a.grads.size() * sizeof(float)), 0)
      << label;
}

}  // namespace fp8lab::testing
