// AdamW against a scalar double-precision reference, weight-decay exclusion, the schedule.
#include "common/test_data.hpp"
#include "fp8lab/optimizer.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace fp8lab
