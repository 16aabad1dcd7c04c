// AdamW against a scalar double-precision reference, weight-decay exclusion, the schedule; the
// FP8 linears' W amax taken from the update that writes the working weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/forwarding_backend.hpp"
#include "common/test_data.hpp"
#include "fp8lab/fp8_format.hpp"
#include "fp8lab/optimizer.hpp"
#include "model/model_fixtures.hpp"
#include "train/train_fixtures.hpp"

namespace fp8lab {
namespace {

TEST(LearningRate, WarmupThenDecayToTheFloor) {
  OptimConfig o;
  o.lr = 1.0f, o.min_lr = 0.1f, o.warmup_steps = 4, o.decay = "cosine";
  EXPECT_FLOAT_EQ(learning_rate(o, 104, 0), 0.25f);
  EXPECT_FLOAT_EQ(learning_rate(o, 104, 3), 1.0f);
  EXPECT_NEAR(learning_rate(o, 104, 54), 0.55f, 1e-6);  // halfway: the mean of lr and min_lr
  EXPECT_FLOAT_EQ(learning_rate(o, 104, 104), 0.1f);
  EXPECT_FLOAT_EQ(learning_rate(o, 104, 500), 0.1f);  // stays at the floor
  o.decay = "linear";
  EXPECT_NEAR(learning_rate(o, 104, 29), 1.0f - 0.9f * 0.25f, 1e-6);
  o.decay_steps = 54;  // floor reached early
  EXPECT_FLOAT_EQ(learning_rate(o, 104, 60), 0.1f);
  o.decay = "constant";
  EXPECT_FLOAT_EQ(learning_rate(o, 104, 90), 1.0f);
}

TEST(AdamW, MatchesTheScalarReferenceAndExcludesNormsAndEmbeddings) {
  const std::uint64_t seed = testing::fresh_seed();
  RunConfig c = testing::small_run(seed);
  c.optim.weight_decay = 0.2f;
  auto be = make_cpu_backend();
  GptModel model(c.model, c.precision, 1, *be);
  model.init_parameters(seed);
  AdamW adam(c.optim, model);
  const std::vector<float> initial = model.get_parameters();
  std::vector<double> p(initial.begin(), initial.end());
  std::vector<double> m(p.size(), 0.0), v(p.size(), 0.0);
  for (int t = 1; t <= 3; ++t) {
    const HostTensor g =
        testing::random_normal(DType::f32, {model.parameter_count()}, seed, 10 + t);
    be->upload(model.grads(), g.view().data);
    const float lr = 0.01f * static_cast<float>(t);
    adam.step(lr);
    for (const ParamInfo& info : model.layout().params()) {
      const double wd = info.role == ParamRole::matrix ? 0.2 : 0.0;
      for (std::int64_t i = info.offset; i < info.offset + info.numel(); ++i) {
        const double gi = g.as<float>()[i];
        m[i] = 0.9 * m[i] + 0.1 * gi;
        v[i] = 0.95 * v[i] + 0.05 * gi * gi;
        const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.95, t));
        p[i] -= lr * (mh / (std::sqrt(vh) + 1e-8) + wd * p[i]);
      }
    }
  }
  EXPECT_EQ(adam.updates(), 3);
  const std::vector<float> got = model.get_parameters();
  double max_err = 0;
  for (std::size_t i = 0; i < p.size(); ++i) max_err = std::max(max_err, std::fabs(got[i] - p[i]));
  EXPECT_LT(max_err, 2e-6);
  // The exclusions are configurable.
  OptimConfig o = c.optim;
  o.decay_norms = true;
  AdamW with_norms(o, model);
  EXPECT_TRUE(with_norms.decays(model.layout().find("ln_f.weight")));
  EXPECT_FALSE(with_norms.decays(model.layout().find("wte.weight")));
  EXPECT_FALSE(adam.decays(model.layout().find("blocks.0.ln1.weight")));
  EXPECT_TRUE(adam.decays(model.layout().find("blocks.0.attn.qkv.weight")));
}

// bf16 moments (OptimConfig::moments): each update computes in fp32 from the stored moments and
// rounds the new ones once. Against the double reference with exact moments, the weights stay
// within what the moments' rounding (2^-8 relative a step) can move them, every stored moment
// is a bf16 value within a rounding of the reference's, the state is half the bytes, and the
// host copies round-trip exactly.
TEST(AdamW, Bf16MomentsRoundOncePerUpdate) {
  const std::uint64_t seed = testing::fresh_seed();
  RunConfig c = testing::small_run(seed);
  c.optim.weight_decay = 0.f;
  c.optim.moments = DType::bf16;
  auto be = make_cpu_backend();
  GptModel model(c.model, c.precision, 1, *be);
  model.init_parameters(seed);
  const std::int64_t before = be->memory_stats().current(MemoryKind::optimizer);
  AdamW adam(c.optim, model);
  EXPECT_EQ(be->memory_stats().current(MemoryKind::optimizer) - before,
            4 * model.parameter_count());
  EXPECT_EQ(adam.m().dtype, DType::bf16);
  const std::vector<float> initial = model.get_parameters();
  std::vector<double> p(initial.begin(), initial.end());
  std::vector<double> m(p.size(), 0.0), v(p.size(), 0.0);
  std::vector<double> m_sizes(p.size(), 0.0);  // sum over the steps of |m|: what was rounded
  constexpr double lr = 0.01;
  for (int t = 1; t <= 3; ++t) {
    const HostTensor g =
        testing::random_normal(DType::f32, {model.parameter_count()}, seed, 10 + t);
    be->upload(model.grads(), g.view().data);
    adam.step(static_cast<float>(lr));
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double gi = g.as<float>()[i];
      m[i] = 0.9 * m[i] + 0.1 * gi;
      v[i] = 0.95 * v[i] + 0.05 * gi * gi;
      m_sizes[i] += std::fabs(m[i]);
      const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.95, t));
      p[i] -= lr * (mh / (std::sqrt(vh) + 1e-8));
    }
  }
  const std::vector<float> got = model.get_parameters(), mh = adam.m_host(), vh = adam.v_host();
  double max_err = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    max_err = std::max(max_err, std::fabs(got[i] - p[i]));
    ASSERT_EQ(round_to_bf16(mh[i]), mh[i]) << i;  // stored in bf16
    ASSERT_EQ(round_to_bf16(vh[i]), vh[i]) << i;
    // Each update rounds m once (<= 2^-8 of it); earlier roundings decay by beta1 < 1.
    ASSERT_LE(std::fabs(mh[i] - m[i]), 1.05 * std::ldexp(m_sizes[i], -8) + 1e-12) << i;
  }
  // Three updates of about lr each, their moments a few roundings off: a few percent of a step.
  EXPECT_LT(max_err, 3 * lr * 0.02);
  // The host copies go back exactly (what a checkpoint and its resume rely on).
  adam.set_moments(mh.data(), vh.data());
  EXPECT_EQ(adam.m_host(), mh);
  EXPECT_EQ(adam.v_host(), vh);
}

// The trainer folds the norm clip into the update and lets it write the bf16 working weights;
// that must be the same bits as the separate passes it replaces (scale the gradients, update,
// convert the master to the working copy), including the gradients that clip to 0 and a scale of
// exactly 1 (no clip).
TEST(AdamW, FoldedClipAndWorkingCopyWriteTheSeparatePassesBits) {
  const std::uint64_t seed = testing::fresh_seed();
  RunConfig c = testing::small_run(seed);
  c.optim.weight_decay = 0.1f;
  auto be = make_cpu_backend();
  GptModel separate(c.model, c.precision, 1, *be), folded(c.model, c.precision, 1, *be);
  separate.init_parameters(seed);
  folded.init_parameters(seed);
  AdamW adam_separate(c.optim, separate), adam_folded(c.optim, folded);
  ASSERT_TRUE(adam_folded.writes_working_copy());
  const float scales[] = {0.37f, 1.f, 1e-3f};
  for (int t = 0; t < 3; ++t) {
    HostTensor g = testing::random_normal(DType::f32, {separate.parameter_count()}, seed, 20 + t);
    g.as<float>()[5] = 0.f;
    be->upload(separate.grads(), g.view().data);
    be->upload(folded.grads(), g.view().data);
    be->scale_inplace(separate.grads(), scales[t]);
    adam_separate.step(1e-2f, 1.f);
    separate.refresh_working_weights();
    adam_folded.step(1e-2f, scales[t]);  // no refresh: the update wrote the working copy
    EXPECT_EQ(separate.get_parameters(), folded.get_parameters()) << "step " << t;
    for (const ParamInfo& info : separate.layout().params()) {
      const TensorView a = separate.working_copy(info), b = folded.working_copy(info);
      ASSERT_EQ(a.dtype, DType::bf16);
      ASSERT_EQ(std::memcmp(a.data, b.data, a.nbytes()), 0)
          << "working copy of " << info.name << " at step " << t;
    }
  }
  // A ZeRO-1 shard updates only its slice: the working copy is then refreshed after the gather.
  AdamW shard(c.optim, folded, Shard{0, folded.parameter_count() / 2});
  EXPECT_FALSE(shard.writes_working_copy());
  // fp32 compute has no working copy: the linears read the master.
  c.precision.compute = ComputeMode::fp32;
  GptModel fp32(c.model, c.precision, 1, *be);
  EXPECT_EQ(fp32.working_copy(fp32.layout().params()[0]).data, nullptr);
}

// Counts the W amax slots handed to the FP8 linears and to the working copy's update.
class WeightSlotCounter final : public testing::ForwardingBackend {
 public:
  int linear_slots = 0, update_slots = 0;
  std::unique_ptr<LinearContext> linear_forward(LinearMode m, const TensorView& x,
                                                const TensorView& w, const TensorView& y,
                                                std::string_view n, AmaxSlot a = {},
                                                AmaxSlot wa = {}) override {
    linear_slots += wa ? 1 : 0;
    return ForwardingBackend::linear_forward(m, x, w, y, n, a, wa);
  }
  void adamw_update(const TensorView& p, const TensorView& g, const TensorView& m,
                    const TensorView& v, const AdamWStep& s, const TensorView& w,
                    AmaxSlot wa) override {
    update_slots += wa ? 1 : 0;
    ForwardingBackend::adamw_update(p, g, m, v, s, w, wa);
  }
};

// W's amax from the update: after an update that wrote every working weight, each FP8 linear's
// W cast takes its amax from the update's slot, and nothing changes but where the amax was
// computed: losses, gradients and weights over two steps are the bits of a run whose working
// copy is refreshed after each update (a plain convert, the same bytes: the test above), so
// that every W cast reads W for its own amax. A refresh makes the slots stale.
// (The CUDA kernels' deferred slots: tests/cuda/test_cuda_fused_amax.cpp.)
TEST(AdamW, WeightAmaxFromTheUpdateGivesTheSameBits) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t m = 2 * c.seq_len;
  const auto inputs = testing::random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = testing::random_tokens(m, c.vocab_size, seed, 2);
  OptimConfig o;
  o.weight_decay = 0.1f;
  for (PrecisionPolicy policy : {PrecisionPolicy::fp8_mlp, PrecisionPolicy::fp8_linears}) {
    const std::string label = policy_name(policy);
    const int fp8_linears =
        static_cast<int>(c.n_layers) * (policy == PrecisionPolicy::fp8_linears ? 4 : 2);
    double losses[2];
    std::vector<float> grads[2], weights[2];
    for (int from_update = 0; from_update < 2; ++from_update) {
      WeightSlotCounter be;
      PrecisionConfig p;
      p.policy = policy;
      GptModel model(c, p, 2, be);
      model.init_parameters(seed);
      EXPECT_FALSE(model.weight_amax_current()) << label << ": no update has run";
      AdamW adam(o, model);
      losses[from_update] = 0;
      for (int step = 0; step < 2; ++step) {
        model.zero_grads();
        const auto& a = step == 0 ? inputs : targets;
        const auto& b = step == 0 ? targets : inputs;
        losses[from_update] += model.forward_backward(a.data(), b.data(), 1.f / m, -1, 16).loss_sum;
        adam.step(1e-2f, 0.5f);
        EXPECT_TRUE(model.weight_amax_current()) << label << " step " << step;
        if (from_update == 0) {
          model.refresh_working_weights();
          EXPECT_FALSE(model.weight_amax_current()) << label << ": refreshed by a plain convert";
        }
      }
      model.zero_grads();
      losses[from_update] +=
          model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, 16).loss_sum;
      grads[from_update] = model.get_gradients();
      weights[from_update] = model.get_parameters();
      // Two updates, each handed every FP8 weight's slot; after the first and second, one
      // forward each (the step's, the last one) takes them unless refreshed in between.
      EXPECT_EQ(be.update_slots, 2 * fp8_linears) << label;
      EXPECT_EQ(be.linear_slots, from_update ? 2 * fp8_linears : 0) << label;
      model.refresh_working_weights();
      EXPECT_FALSE(model.weight_amax_current()) << label;
      const int before = be.linear_slots;
      model.evaluate(inputs.data(), targets.data(), -1, 16);
      EXPECT_EQ(be.linear_slots, before) << label << ": a stale slot was handed on";
    }
    EXPECT_EQ(std::memcmp(&losses[0], &losses[1], sizeof(double)), 0) << label;
    EXPECT_EQ(std::memcmp(grads[0].data(), grads[1].data(), grads[0].size() * 4), 0) << label;
    EXPECT_EQ(weights[0], weights[1]) << label;
  }
  // Only an FP8 linear's weight has a slot: not the norms, embeddings or a bf16 linear's.
  auto be = make_cpu_backend();
  PrecisionConfig p;
  p.policy = PrecisionPolicy::fp8_mlp;
  GptModel model(c, p, 2, *be);
  for (const ParamInfo& info : model.layout().params()) {
    const bool fp8 = info.name.find(".mlp.") != std::string::npos;
    EXPECT_EQ(static_cast<bool>(model.weight_amax_slot(info)), fp8) << info.name;
  }
}

}  // namespace
}  // namespace fp8lab
