// Run configuration: presets, JSON round trip, strict --set overrides, validation.
#include "fp8lab/config.hpp"
#include "fp8lab/error.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace fp8lab {
namespace {

TEST(RunConfig, PresetsMatchTheStudyShapes) {
  EXPECT_EQ(run_preset("gpt50m").backend, "auto");  // the GPU when there is one
  EXPECT_EQ(RunConfig{}.backend, "auto");
  const ModelConfig m = model_preset("gpt50m");
  EXPECT_EQ(m.d_model, 512);
  EXPECT_EQ(m.n_layers, 8);
  EXPECT_EQ(m.n_heads, 8);
  EXPECT_EQ(m.vocab_size, 50304);
  EXPECT_EQ(m.seq_len, 2048);
  EXPECT_EQ(model_preset("gpt350m").d_model, 1024);
  EXPECT_EQ(model_preset("gpt350m").n_layers, 24);
  EXPECT_EQ(model_preset("gpt1.3b").d_model, 2048);
  EXPECT_EQ(model_preset("gpt1.3b").n_heads, 16);
  try {
    model_preset("gpt7b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("gpt7b"), std::string::npos);
  }
}

TEST(RunConfig, JsonRoundTripIsExact) {
  RunConfig c = testing::small_run(77);
  c.precision.policy = PrecisionPolicy::fp8_linears;
  c.optim.decay = "linear";
  c.data.train = "some/where.bin";
  EXPECT_EQ(run_config_from_json(to_json(c)), c);
  EXPECT_EQ(to_json(c)["optim"]["lr"].dump(), "0.003");  // fp32 fields print shortest
  c.precision.pointwise_recompute = true;
  EXPECT_EQ(run_config_from_json(to_json(c)), c);
  // A config written before the option existed (a run to --resume) reads it as off.
  nlohmann::json old = to_json(c);
  old["precision"].erase("pointwise_recompute");
  EXPECT_FALSE(run_config_from_json(old).precision.pointwise_recompute);
}

TEST(RunConfig, OverridesAreTypedAndStrict) {
  RunConfig c = run_preset("tiny");
  apply_override(c, "optim.lr=3e-4");
  apply_override(c, "precision.policy=fp8-mlp");
  apply_override(c, "precision.mlp_recompute=true");
  apply_override(c, "precision.pointwise_recompute=true");
  apply_override(c, "train.steps=17");
  apply_override(c, "data.train=/tmp/x y.txt");  // strings are taken verbatim
  EXPECT_FLOAT_EQ(c.optim.lr, 3e-4f);
  EXPECT_EQ(c.precision.policy, PrecisionPolicy::fp8_mlp);
  EXPECT_TRUE(c.precision.mlp_recompute);
  EXPECT_TRUE(c.precision.pointwise_recompute);
  EXPECT_EQ(c.train.steps, 17);
  EXPECT_EQ(c.data.train, "/tmp/x y.txt");
  EXPECT_THROW(apply_override(c, "optim.lrr=1"), Error);           // unknown key
  EXPECT_THROW(apply_override(c, "train.steps=1.5"), Error);       // float for an integer
  EXPECT_THROW(apply_override(c, "train.steps=many"), Error);      // not a number
  EXPECT_THROW(apply_override(c, "precision.policy=fp4"), Error);  // unknown policy
  EXPECT_THROW(apply_override(c, "model.n_heads=5"), Error);       // 128 % 5 != 0
  EXPECT_THROW(apply_override(c, "optim"), Error);                 // no '='
  EXPECT_THROW(apply_override(c, "backend=gpu"), Error);           // auto, cpu or cuda
  apply_override(c, "backend=cuda");
  EXPECT_EQ(c.backend, "cuda");
  // An integer for a boolean key.
  EXPECT_THROW(apply_override(c, "precision.pointwise_recompute=1"), Error);
  try {
    apply_override(c, "train.nonfinte=skip");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("train.nonfinte"), std::string::npos) << e.message();
  }
}

TEST(RunConfig, FilesStartFromTheirPresetAndRejectUnknownKeys) {
  testing::TempDir dir;
  const auto path = dir.path() / "run.json";
  std::ofstream(path) << R"({"preset": "gpt50m", "train": {"steps": 5}, "optim": {"lr": 0.01}})";
  const RunConfig c = load_run_config(path);
  EXPECT_EQ(c.model, model_preset("gpt50m"));
  EXPECT_EQ(c.train.steps, 5);
  EXPECT_FLOAT_EQ(c.optim.lr, 0.01f);
  std::ofstream(path) << R"({"train": {"stepz": 5}})";
  EXPECT_THROW(load_run_config(path), Error);
  std::ofstream(path) << R"({"train": )";
  EXPECT_THROW(load_run_config(path), Error);
  EXPECT_THROW(load_run_config(dir.path() / "missing.json"), Error);
}

}  // namespace
}  // namespace fp8lab
