// The model with its gradient buffer in bf16 (PrecisionConfig::grads): half the gradient bytes,
// the same forward and backward, and each gradient the f32 model's rounded once, except where
// the backward writes a gradient twice (the tied wte: the LM head, then the embedding) or a step
// accumulates micro-batches: there one more rounding each, within the bound that gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "common/test_data.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/model.hpp"
#include "model/model_fixtures.hpp"

namespace fp8lab {
namespace {

using testing::random_tokens;

// bf16's unit roundoff: one round to nearest even moves a value by at most 2^-8 of it.
constexpr double kBf16Roundoff = 0x1p-8;

// testing::relative_frobenius of elements [begin, end) of two flat gradient vectors.
double relative_error(const std::vector<float>& got, const std::vector<float>& ref,
                      std::int64_t begin, std::int64_t end) {
  auto range = [&](const std::vector<float>& v) {
    return TensorView{const_cast<float*>(v.data()) + begin, DType::f32, Shape{end - begin},
                      Device::cpu};
  };
  return testing::relative_frobenius(range(got), range(ref));
}

struct GradPair {
  std::vector<float> f32, bf16;
  double loss_f32 = 0, loss_bf16 = 0;
};

// The same weights and micro-batches through an f32-gradient and a bf16-gradient model.
GradPair run_pair(const ModelConfig& c, PrecisionConfig p, std::int64_t batch, std::uint64_t seed,
                  const std::vector<std::vector<std::int32_t>>& micro_batches,
                  const std::vector<std::int32_t>& targets, int loss_chunk_rows) {
  GradPair r;
  for (DType grads : {DType::f32, DType::bf16}) {
    p.grads = grads;
    auto be = make_cpu_backend();
    GptModel model(c, p, batch, *be);
    EXPECT_EQ(be->memory_stats().current(MemoryKind::gradients),
              static_cast<std::int64_t>(dtype_size(grads)) * model.parameter_count());
    EXPECT_EQ(model.grads().dtype, grads);
    model.init_parameters(seed);
    model.zero_grads();
    double loss = 0;
    const auto scale = 1.f / static_cast<float>(targets.size() * micro_batches.size());
    for (const auto& inputs : micro_batches)
      loss += model.forward_backward(inputs.data(), targets.data(), scale, -1, loss_chunk_rows)
                  .loss_sum;
    (grads == DType::f32 ? r.f32 : r.bf16) = model.get_gradients();
    (grads == DType::f32 ? r.loss_f32 : r.loss_bf16) = loss;
  }
  return r;
}

// One micro-batch: every gradient is written once (GradWrite::overwrite), so the bf16 model's is
// the f32 model's rounded once, bit for bit, except the wte rows of the tokens in the batch,
// which the embedding backward adds to after the LM head wrote them: two roundings, of the LM
// head's part and of the sum.
TEST(GptModelBf16Grads, OneMicroBatchRoundsEachGradientOnce) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t batch = 2, m = batch * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  const std::set<std::int32_t> in_batch(inputs.begin(), inputs.end());
  for (PrecisionPolicy policy : {PrecisionPolicy::bf16, PrecisionPolicy::fp8_linears}) {
    PrecisionConfig p;
    p.policy = policy;
    const std::string label = policy_name(policy);
    // Two loss chunks: the LM head sums them in fp32 before its one rounding.
    const GradPair r = run_pair(c, p, batch, seed, {inputs}, targets, static_cast<int>(m / 2));
    EXPECT_EQ(r.loss_f32, r.loss_bf16) << label;  // the forward does not read the gradients
    const ParameterLayout layout(c);
    const ParamInfo& wte = layout.find("wte.weight");
    std::int64_t exact = 0;
    for (std::int64_t i = 0; i < layout.total(); ++i) {
      const bool twice = i >= wte.offset && i < wte.offset + wte.numel() &&
                         in_batch.count(static_cast<std::int32_t>((i - wte.offset) / c.d_model));
      if (twice) continue;
      ASSERT_EQ(r.bf16[static_cast<std::size_t>(i)],
                round_to_bf16(r.f32[static_cast<std::size_t>(i)]))
          << label << " element " << i;
      ++exact;
    }
    EXPECT_GT(exact, layout.total() / 2) << label;
    // The rows written twice: each rounding at most 2^-8 relative, of the LM head's part and of
    // the sum. The LM head's part is not the whole gradient, so the bound is on the sum of the
    // two (a tied row's LM-head part is within a few times its total on these batches).
    for (std::int32_t t : in_batch) {
      const std::int64_t b = wte.offset + t * c.d_model;
      const double err = relative_error(r.bf16, r.f32, b, b + c.d_model);
      EXPECT_LT(err, 8 * kBf16Roundoff) << label << " wte row " << t;
    }
  }
}

// Two micro-batches: the second adds to the first's rounded gradient and rounds once more, so
// each tensor stays within a few roundings of the f32 model's, and the losses are identical.
TEST(GptModelBf16Grads, AccumulatedMicroBatchesRoundOnceEach) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t batch = 2, m = batch * c.seq_len;
  const auto first = random_tokens(m, c.vocab_size, seed, 1);
  const auto second = random_tokens(m, c.vocab_size, seed, 2);
  const auto targets = random_tokens(m, c.vocab_size, seed, 3);
  PrecisionConfig p;
  p.policy = PrecisionPolicy::fp8_mlp;
  const GradPair r = run_pair(c, p, batch, seed, {first, second}, targets, 16);
  EXPECT_EQ(r.loss_f32, r.loss_bf16);
  double worst = 0;
  const ParameterLayout layout(c);
  for (const ParamInfo& info : layout.params()) {
    const double err = relative_error(r.bf16, r.f32, info.offset, info.offset + info.numel());
    worst = std::max(worst, err);
    // Per element at most 2^-8 of the first micro-batch's part plus 2^-8 of the sum (wte: one
    // more of each); relative to the tensor's norm that is a few roundoffs.
    EXPECT_LT(err, 6 * kBf16Roundoff) << info.name;
    EXPECT_GT(err, 0.0) << info.name << ": bf16 gradients that were never rounded";
  }
  std::printf(
      "[measured] bf16 gradients, two micro-batches: worst tensor relative error %.3g "
      "(roundoff %.3g)\n",
      worst, kBf16Roundoff);
}

// The fp32 reference compute keeps fp32 gradients: the model refuses bf16 ones, naming the key.
TEST(GptModelBf16Grads, Fp32ComputeRefusesThem) {
  PrecisionConfig p;
  p.compute = ComputeMode::fp32;
  p.grads = DType::bf16;
  auto be = make_cpu_backend();
  const std::string message =
      testing::error_of([&] { GptModel model(testing::gradcheck_model(), p, 1, *be); }).what();
  EXPECT_NE(message.find("precision.grads=bf16"), std::string::npos) << message;
}

}  // namespace
}  // namespace fp8lab
