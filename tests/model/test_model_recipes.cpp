// The GPT model under each FP8 scaling recipe on the CPU backend: close to the bf16 policy, MLP
// and pointwise recompute bit-identical, the BF16 wgrad keeping what it reads, and run configs a
// recipe cannot tile rejected before any training.
#include "common/test_data.hpp"
#include "fp8lab/config.hpp"
#include "fp8lab/model.hpp"
#include "model/model_fixtures.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

namespace fp8lab {
namespace {

using testing::error_of;
using testing::random_tokens;

// Every GEMM dimension a multiple of 128 (blockwise): d 128, d_ff 512, 2 x 64 tokens.
ModelConfig recipe_model() {
  ModelConfig c;
  c.vocab_size = 64, c.d_model = 128, c.n_layers = 1, c.n_heads = 2, c.seq_len = 64;
  return c;
}

struct Step {
  double loss = 0;
  std::vector<double> grads;
  std::vector<float> raw;
};

Step step(const PrecisionConfig& p, std::uint64_t seed) {
  const ModelConfig c = recipe_model();
  auto backend = make_cpu_backend();
  GptModel model(c, p, 2, *backend);
  model.init_parameters(seed);
  model.zero_grads();
  const std::int64_t m = 2 * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  Step s;
  s.loss = model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, 32).loss_sum / m;
  s.raw = model.get_gradients();
  s.grads.assign(s.raw.begin(), s.raw.end());
  return s;
}

class ModelRecipes : public ::testing::TestWithParam<std::tuple<Fp8Recipe, bool>> {};

TEST_P(ModelRecipes, TrackTheBf16PolicyAndRecomputeIsBitIdentical) {
  const auto [recipe, bf16_wgrad] = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  const Step ref = step({}, seed);
  PrecisionConfig p;
  p.policy = PrecisionPolicy::fp8_linears;
  p.fp8 = {recipe, bf16_wgrad};
  const Step got = step(p, seed);
  const double err = testing::relative_frobenius(got.grads, ref.grads);
  std::fprintf(stderr, "[measured] %s%s: loss %.6f (bf16 %.6f), grad rel err %.4f\n",
               fp8_recipe_name(recipe), bf16_wgrad ? " bf16-wgrad" : "", got.loss, ref.loss, err);
  EXPECT_NEAR(got.loss, ref.loss, 5e-3 * ref.loss);
  EXPECT_LT(err, 0.12);
  EXPECT_GT(err, 0.0);  // FP8 really ran
  for (const auto& [mlp, pointwise] : {std::pair{true, false}, std::pair{false, true}}) {
    PrecisionConfig r = p;
    r.mlp_recompute = mlp;
    r.pointwise_recompute = pointwise;
    const Step again = step(r, seed);
    EXPECT_EQ(again.loss, got.loss) << (mlp ? "mlp" : "pointwise") << " recompute";
    EXPECT_EQ(std::memcmp(again.raw.data(), got.raw.data(), got.raw.size() * 4), 0)
        << (mlp ? "mlp" : "pointwise") << " recompute";
  }
}

INSTANTIATE_TEST_SUITE_P(AllRecipes, ModelRecipes,
                         ::testing::Combine(::testing::Values(Fp8Recipe::tensorwise,
                                                              Fp8Recipe::rowwise,
                                                              Fp8Recipe::blockwise),
                                            ::testing::Bool()));

// Sizes no trainer could hold are refused when validated, not found out by a layer loop that
// runs for hours or a size that overflows (n_layers 99999999999999 used to hang).
TEST(ModelConfigLimits, HugeDimensionsAreRefusedNamingThem) {
  ModelConfig m;
  m.n_layers = 99999999999999;
  const Error layers = error_of([&] { m.validate(); });
  EXPECT_NE(layers.message().find("n_layers 99999999999999"), std::string::npos)
      << layers.message();
  m = ModelConfig{};
  m.d_model = 1 << 16;
  m.n_heads = 1;
  m.n_layers = 4096;
  const Error params = error_of([&] { m.validate(); });
  EXPECT_NE(params.message().find("more than 2^40"), std::string::npos) << params.message();
  m.n_layers = 8;  // 412G parameters: within the limits
  EXPECT_NO_THROW(m.validate());
}

TEST(ModelRecipes, RunConfigsARecipeCannotTileAreRejected) {
  RunConfig c = run_preset("tiny");
  c.precision.policy = PrecisionPolicy::fp8_mlp;
  apply_override(c, "precision.fp8_recipe=blockwise");
  c.model.d_model = 96;
  c.model.n_heads = 2;
  const Error e = error_of([&] { c.validate(); });
  EXPECT_NE(e.message().find("precision.fp8_recipe=blockwise"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("model.d_model (96)"), std::string::npos) << e.message();
  // The recipe and the wgrad precision round-trip through the run config's JSON.
  c.model.d_model = 128;
  apply_override(c, "precision.fp8_wgrad=bf16");
  const RunConfig back = run_config_from_json(to_json(c));
  EXPECT_EQ(back.precision.fp8.recipe, Fp8Recipe::blockwise);
  EXPECT_TRUE(back.precision.fp8.bf16_wgrad);
  const Error bad = error_of([&] { apply_override(c, "precision.fp8_recipe=columnwise"); });
  EXPECT_NE(bad.message().find("columnwise"), std::string::npos) << bad.message();
  const Error bad2 = error_of([&] { apply_override(c, "precision.fp8_wgrad=fp16"); });
  EXPECT_NE(bad2.message().find("fp16"), std::string::npos) << bad2.message();
}

}  // namespace
}  // namespace fp8lab
