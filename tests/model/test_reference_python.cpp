// External check: tests/model/reference_gpt.py, a plain-Python float64 forward written from
// docs/checkpoint-format.md alone, reads the weights file fp8lab saves and must reproduce the
// model's fp32 loss. Skips when python3 is not installed.
#include "common/test_data.hpp"
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/model.hpp"
#include "model/model_fixtures.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace fp8lab {
namespace {

TEST(ReferencePython, DocumentedFormatReproducesTheLoss) {
  if (std::system("python3 -c 'import json, struct' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 not available";
  }
  const std::uint64_t seed = testing::fresh_seed();
  ModelConfig c;
  c.vocab_size = 61, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.seq_len = 12;
  c.init_std = 0.2f;
  PrecisionConfig p;
  p.compute = ComputeMode::fp32;
  auto be = make_cpu_backend();
  GptModel model(c, p, 2, *be);
  model.init_parameters(seed);
  const auto inputs = testing::random_tokens(24, c.vocab_size, seed, 1);
  const auto targets = testing::random_tokens(24, c.vocab_size, seed, 2);
  const LossSums s = model.evaluate(inputs.data(), targets.data(), -1, 0);
  testing::TempDir dir;
  save_weights(dir.path() / "model.safetensors", model);
  {
    std::ofstream f(dir.path() / "tokens.txt");
    for (int v : inputs) f << v << ' ';
    f << '\n';
    for (int v : targets) f << v << ' ';
    f << '\n';
  }
  const std::string cmd = "python3 " FP8LAB_SOURCE_DIR "/tests/model/reference_gpt.py " +
                          (dir.path() / "model.safetensors").string() + " " +
                          (dir.path() / "tokens.txt").string();
  std::FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[256] = {};
  double reference = -1;
  while (std::fgets(line, sizeof line, pipe))
    std::sscanf(line, "python reference mean loss %lf", &reference);
  ASSERT_EQ(::pclose(pipe), 0) << cmd;
  EXPECT_NEAR(s.loss_sum / static_cast<double>(s.counted), reference, 1e-5 * reference);
}

}  // namespace
}  // namespace fp8lab
