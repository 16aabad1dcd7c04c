// The target checks of `fp8lab bench model` (model_bench_targets, bench_model.hpp): which of
// the project's goals (docs/performance.md, "Goals") a run's arms speak to, the ratios, the
// limits and the verdicts, on results built by hand (numbers of an H200 run).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fp8lab/bench_model.hpp"

namespace fp8lab {
namespace {

ModelBenchArmResult arm(const std::string& name, double step_ms, double peak_mib,
                        double tokens) {
  ModelBenchArmResult a;
  a.arm = name;
  a.step.median_ms = step_ms;
  a.step.peak_mib = peak_mib;
  a.step.tokens_per_s = tokens / (step_ms / 1000.0);
  return a;
}

ModelBenchResult result(const std::string& preset, std::vector<ModelBenchArmResult> arms) {
  ModelBenchResult r;
  r.config.preset = preset;
  r.arms = std::move(arms);
  return r;
}

const ModelBenchTargetCheck* find(const std::vector<ModelBenchTargetCheck>& checks,
                                  const std::string& target) {
  for (const auto& c : checks)
    if (c.target == target) return &c;
  return nullptr;
}

constexpr double kGpt50mTokens = 64.0 * 2048;

TEST(BenchModelTargets, Gpt50mChecksTheBf16PeerFp8MlpAndRecomputeGoals) {
  ModelBenchResult r = result("gpt50m", {arm("bf16", 107.78, 20808, kGpt50mTokens),
                                         arm("fp8-mlp", 106.94, 18264, kGpt50mTokens),
                                         arm("fp8-linears", 107.66, 18272, kGpt50mTokens),
                                         arm("bf16+recompute", 113.39, 13640, kGpt50mTokens)});
  r.peer = nlohmann::json::parse(R"({"preset": "gpt50m", "arms": {"bf16": {"train":
      {"median_ms": 118.10, "tokens_per_s": 1109813, "peak_mib": 32251}}}})");
  const auto checks = model_bench_targets(r);
  ASSERT_EQ(checks.size(), 6u);

  const auto* speed = find(checks, "bf16 step tokens/s vs PyTorch's");
  ASSERT_NE(speed, nullptr);
  EXPECT_NEAR(speed->value, kGpt50mTokens / 0.10778 / 1109813, 1e-9);
  EXPECT_EQ(speed->relation, ">=");
  EXPECT_DOUBLE_EQ(speed->limit, 1.10);
  EXPECT_FALSE(speed->met);  // 1.096x
  EXPECT_EQ(speed->detail, "ours 107.78 ms, PyTorch 118.10 ms");

  // The leanest BF16 arm is the recompute one; no FP8 arm of the peer, so no FP8 memory check.
  const auto* peak = find(checks, "leanest bf16 arm's peak vs PyTorch's bf16");
  ASSERT_NE(peak, nullptr);
  EXPECT_NEAR(peak->value, 13640.0 / 32251, 1e-12);
  EXPECT_DOUBLE_EQ(peak->limit, 0.85);
  EXPECT_TRUE(peak->met);
  EXPECT_EQ(peak->detail, "bf16+recompute 13640 MiB, PyTorch 32251 MiB");
  EXPECT_EQ(find(checks, "leanest fp8-mlp arm's peak vs PyTorch's fp8-mlp"), nullptr);

  const auto* mlp_time = find(checks, "fp8-mlp step time vs bf16's");
  ASSERT_NE(mlp_time, nullptr);
  EXPECT_TRUE(mlp_time->met);
  const auto* mlp_peak = find(checks, "fp8-mlp step peak vs bf16's");
  ASSERT_NE(mlp_peak, nullptr);
  EXPECT_NEAR(mlp_peak->value, 18264.0 / 20808, 1e-12);
  EXPECT_TRUE(mlp_peak->met);  // 12.2% less

  const auto* ckpt_time = find(checks, "bf16+recompute step time vs bf16's");
  ASSERT_NE(ckpt_time, nullptr);
  EXPECT_NEAR(ckpt_time->value, 113.39 / 107.78, 1e-12);
  EXPECT_FALSE(ckpt_time->met);  // +5.2%
  const auto* ckpt_peak = find(checks, "bf16+recompute step peak vs bf16's");
  ASSERT_NE(ckpt_peak, nullptr);
  EXPECT_TRUE(ckpt_peak->met);  // 34.4% less

  // The fp8-linears goals are stated for gpt1.3b: not checked at gpt50m.
  EXPECT_EQ(find(checks, "fp8-linears step tokens/s vs bf16's"), nullptr);

  const std::string report = model_bench_report(r);
  EXPECT_NE(report.find("| bf16+recompute step time vs bf16's | 1.052 | <= 1.05 | no |"),
            std::string::npos)
      << report;
  const nlohmann::json json = model_bench_json(r);
  ASSERT_EQ(json["targets"].size(), 6u);
  EXPECT_EQ(json["targets"][0]["target"], "bf16 step tokens/s vs PyTorch's");
  EXPECT_EQ(json["targets"][0]["met"], false);
}

TEST(BenchModelTargets, EachFp8MlpRecipeArmIsCheckedAndOptionArmsAreNot) {
  const ModelBenchResult r =
      result("gpt50m", {arm("bf16", 110.0, 21592, kGpt50mTokens),
                        arm("fp8-mlp+blockwise", 113.5, 18870, kGpt50mTokens),
                        arm("fp8-mlp+recompute", 115.0, 12000, kGpt50mTokens)});
  const auto checks = model_bench_targets(r);
  ASSERT_EQ(checks.size(), 2u);  // no peer: no PyTorch or memory-against-PyTorch checks
  EXPECT_EQ(checks[0].target, "fp8-mlp+blockwise step time vs bf16's");
  EXPECT_FALSE(checks[0].met);  // 3% slower
  EXPECT_EQ(checks[1].target, "fp8-mlp+blockwise step peak vs bf16's");
  EXPECT_TRUE(checks[1].met);  // 12.6% less
}

TEST(BenchModelTargets, Gpt13bChecksFp8LinearsAndTheLeanestArmsAgainstThePeer) {
  constexpr double kTokens = 8.0 * 2048;
  const ModelBenchResult slow = result(
      "gpt1.3b", {arm("bf16", 249.74, 51382, kTokens), arm("fp8-linears", 195.01, 48694, kTokens),
                  arm("fp8-mlp", 200.0, 40000, kTokens)});
  const auto checks = model_bench_targets(slow);
  ASSERT_EQ(checks.size(), 1u);  // no peer; fp8-mlp's speed goal is stated for gpt50m
  EXPECT_EQ(checks[0].target, "fp8-linears step tokens/s vs bf16's");
  EXPECT_NEAR(checks[0].value, 249.74 / 195.01, 1e-12);
  EXPECT_DOUBLE_EQ(checks[0].limit, 1.25);
  EXPECT_TRUE(checks[0].met);  // 1.281x

  ModelBenchResult r =
      result("gpt1.3b", {arm("bf16", 250.0, 51382, kTokens),
                         arm("bf16+recompute+recompute-pointwise", 262.0, 38000, kTokens),
                         arm("fp8-linears", 190.0, 48694, kTokens),
                         arm("fp8-linears+blockwise", 205.0, 49500, kTokens),
                         arm("fp8-linears+recompute+bf16-moments", 200.0, 33000, kTokens)});
  r.peer = nlohmann::json::parse(R"({"preset": "gpt1.3b", "arms": {
      "bf16": {"train": {"median_ms": 253.6, "tokens_per_s": 64603, "peak_mib": 47146}},
      "fp8-linears": {"train": {"median_ms": 238.8, "tokens_per_s": 68610, "peak_mib": 40232}}}})");
  const auto all = model_bench_targets(r);
  const auto* lean_bf16 = find(all, "leanest bf16 arm's peak vs PyTorch's bf16");
  ASSERT_NE(lean_bf16, nullptr);
  EXPECT_NEAR(lean_bf16->value, 38000.0 / 47146, 1e-12);
  EXPECT_TRUE(lean_bf16->met);
  EXPECT_EQ(lean_bf16->detail, "bf16+recompute+recompute-pointwise 38000 MiB, PyTorch 47146 MiB");
  const auto* lean_fp8 = find(all, "leanest fp8-linears arm's peak vs PyTorch's fp8-linears");
  ASSERT_NE(lean_fp8, nullptr);
  EXPECT_NEAR(lean_fp8->value, 33000.0 / 40232, 1e-12);
  EXPECT_TRUE(lean_fp8->met);
  const auto* blockwise = find(all, "fp8-linears+blockwise step tokens/s vs bf16's");
  ASSERT_NE(blockwise, nullptr);
  EXPECT_NEAR(blockwise->value, 250.0 / 205.0, 1e-12);
  EXPECT_FALSE(blockwise->met);  // 1.22x
  const auto* vs_peer = find(all, "fp8-linears step tokens/s vs PyTorch's bf16");
  ASSERT_NE(vs_peer, nullptr);
  EXPECT_NEAR(vs_peer->value, kTokens / 0.190 / 64603, 1e-9);
  EXPECT_DOUBLE_EQ(vs_peer->limit, 1.40);
  EXPECT_FALSE(vs_peer->met);  // 1.335x
  // An option arm's speed is not a goal: no check names it.
  for (const auto& c : all) EXPECT_EQ(c.target.find("bf16-moments step"), std::string::npos);
}

// An arm that differs only in its attention family is the same model on another kernel: it is
// held to its family's speed goals, bf16 against the peer and fp8-linears against both.
TEST(BenchModelTargets, AnAttentionFamilyArmIsHeldToItsFamilysSpeedGoals) {
  constexpr double kTokens = 8.0 * 2048;
  ModelBenchResult r = result("gpt1.3b", {arm("bf16", 250.0, 51382, kTokens),
                                          arm("bf16+cudnn-forward", 230.0, 51382, kTokens),
                                          arm("fp8-linears+cudnn-forward", 182.0, 48694, kTokens),
                                          arm("bf16+recompute+cudnn", 270.0, 40000, kTokens)});
  r.peer = nlohmann::json::parse(R"({"preset": "gpt1.3b", "arms": {
      "bf16": {"train": {"median_ms": 255.38, "tokens_per_s": 64155, "peak_mib": 47270}}}})");
  const auto all = model_bench_targets(r);
  const auto* bf16 = find(all, "bf16+cudnn-forward step tokens/s vs PyTorch's");
  ASSERT_NE(bf16, nullptr);
  EXPECT_NEAR(bf16->value, kTokens / 0.230 / 64155, 1e-9);
  EXPECT_DOUBLE_EQ(bf16->limit, 1.10);
  EXPECT_TRUE(bf16->met);  // 1.110x
  const auto* fp8 = find(all, "fp8-linears+cudnn-forward step tokens/s vs PyTorch's bf16");
  ASSERT_NE(fp8, nullptr);
  EXPECT_NEAR(fp8->value, kTokens / 0.182 / 64155, 1e-9);
  EXPECT_TRUE(fp8->met);  // 1.403x
  EXPECT_NE(find(all, "fp8-linears+cudnn-forward step tokens/s vs bf16's"), nullptr);
  // With recompute it is an option arm: no speed goal names it.
  for (const auto& c : all) EXPECT_EQ(c.target.find("recompute+cudnn step"), std::string::npos);
}

TEST(BenchModelTargets, NothingWithoutABf16ArmOrWithAnotherPresetsPeer) {
  EXPECT_TRUE(
      model_bench_targets(result("gpt50m", {arm("fp8-mlp", 106.94, 18264, kGpt50mTokens)}))
          .empty());
  ModelBenchResult r = result("gpt350m", {arm("bf16", 150.0, 30000, 16.0 * 2048)});
  r.peer = nlohmann::json::parse(R"({"preset": "gpt50m", "arms": {"bf16": {"train":
      {"median_ms": 118.10, "tokens_per_s": 1109813, "peak_mib": 32251}}}})");
  EXPECT_TRUE(model_bench_targets(r).empty());
  EXPECT_EQ(model_bench_report(r).find("Targets ("), std::string::npos);
  // A peer file of another shape (an array, a number as the preset) is no peer, not a crash.
  for (const char* odd : {R"([1, 2])", R"({"preset": 350, "arms": {}})", R"("gpt350m")"}) {
    r.peer = nlohmann::json::parse(odd);
    EXPECT_TRUE(model_bench_targets(r).empty()) << odd;
    EXPECT_NO_THROW(model_bench_report(r)) << odd;
  }
}

}  // namespace
}  // namespace fp8lab
