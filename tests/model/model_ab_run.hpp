// One arm of an A/B test of the whole GPT (a fusion switch or a memory option on and off, same
// weights and batches), on any backend, and the check that two arms computed the same bits.
// tests/model runs the arms on the CPU, tests/cuda/model_ab.hpp on the GPU.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
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

// zero_grads no longer zeroes: the next backward writes the GEMM-written gradients
// (GradWrite::overwrite) and zeroes only those whose ops add. Against the explicit fill it
// replaced, on the same weights and two micro-batches (the second accumulates): the gradient
// buffer starts as NaN, so a gradient the writing backward missed stays NaN. Values must be
// equal; only the sign of a zero may differ (overwriting stores -0 where adding to +0 gave +0).
// Also: the gradients read as zero right after zero_grads.
inline void expect_zero_grads_writes_what_a_fill_would(GptModel& model, std::uint64_t seed,
                                                       const std::vector<std::int32_t>& inputs,
                                                       const std::vector<std::int32_t>& targets,
                                                       int loss_chunk_rows,
                                                       const std::string& label) {
  Backend& be = model.backend();
  const auto m = static_cast<float>(inputs.size());
  const int chunk = loss_chunk_rows;
  model.init_parameters(seed);
  auto two_batches = [&] {
    model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, chunk);
    model.forward_backward(targets.data(), inputs.data(), 1.f / m, -1, chunk);
    return model.get_gradients();
  };
  be.fill_zero(model.grads());  // the old zero_grads
  const std::vector<float> filled = two_batches();
  const std::vector<float> nan(filled.size(), std::numeric_limits<float>::quiet_NaN());
  be.upload(model.grads(), nan.data());
  model.zero_grads();
  const std::vector<float> written = two_batches();
  ASSERT_EQ(written.size(), filled.size()) << label;
  std::size_t differ = 0, first = 0, nonzero = 0;
  for (std::size_t i = 0; i < filled.size(); ++i) {
    nonzero += filled[i] != 0.f ? 1 : 0;
    if (written[i] == filled[i]) continue;  // NaN never compares equal
    if (differ++ == 0) first = i;
  }
  EXPECT_EQ(differ, 0u) << label << ": first at " << first << ": " << written[first]
                        << " written, " << filled[first] << " after a fill";
  EXPECT_GT(nonzero, filled.size() / 2) << label << ": the gradients are mostly zero";
  be.upload(model.grads(), nan.data());
  model.zero_grads();
  const std::vector<float> zeroed = model.get_gradients();
  std::size_t not_zero = 0;
  for (float g : zeroed) not_zero += g == 0.f ? 0 : 1;
  EXPECT_EQ(not_zero, 0u) << label << ": gradients read right after zero_grads";
}

}  // namespace fp8lab::testing
