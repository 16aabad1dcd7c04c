// AdamW against a scalar double-precision reference, weight-decay exclusion, the schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "common/test_data.hpp"
#include "fp8lab/optimizer.hpp"
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

}  // namespace
}  // namespace fp8lab
