// `fp8lab bench model` arms: the names parse into the configs they say, and an arm with and
// without the memory options ("+recompute", "+recompute-pointwise", "+recompute-residual",
// "+recompute-qkv", "+weights-from-master") computes the same loss on the same problem;
// the environment variables that pick kernels are recorded with the results.
#include "fp8lab/bench_model.hpp"
#include "fp8lab/error.hpp"
#include "common/error_of.hpp"
#include "model/bench_model_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab {
namespace {

TEST(BenchModelArms, NamesParseIntoTheirConfigs) {
  const ModelBenchArm plain = parse_model_bench_arm("fp8-mlp");
  EXPECT_EQ(plain.name, "fp8-mlp");
  EXPECT_EQ(plain.precision.policy, PrecisionPolicy::fp8_mlp);
  EXPECT_FALSE(plain.precision.mlp_recompute);
  EXPECT_FALSE(plain.precision.pointwise_recompute);
  EXPECT_EQ(plain.precision.fp8, Fp8Options{});
  const ModelBenchArm recompute = parse_model_bench_arm("bf16+recompute");
  EXPECT_EQ(recompute.precision.policy, PrecisionPolicy::bf16);
  EXPECT_TRUE(recompute.precision.mlp_recompute);
  const ModelBenchArm pointwise = parse_model_bench_arm("bf16+recompute-pointwise");
  EXPECT_EQ(pointwise.precision.policy, PrecisionPolicy::bf16);
  EXPECT_TRUE(pointwise.precision.pointwise_recompute);
  EXPECT_FALSE(pointwise.precision.mlp_recompute);
  // The example of `bench model --help`: every modifier, in its place.
  const ModelBenchArm every = parse_model_bench_arm(
      "fp8-linears+blockwise+bf16-wgrad+recompute+recompute-pointwise+recompute-residual+"
      "recompute-qkv+weights-from-master+bf16-grads+bf16-moments+cudnn-forward");
  EXPECT_TRUE(every.precision.qkv_recompute);
  EXPECT_FALSE(plain.precision.qkv_recompute);
  EXPECT_THROW(parse_model_bench_arm("bf16+recompute-qkv+recompute-residual"), Error);
  EXPECT_TRUE(every.precision.fp8_weights_from_master);
  EXPECT_TRUE(every.precision.residual_recompute);
  EXPECT_FALSE(plain.precision.residual_recompute);
  EXPECT_TRUE(parse_model_bench_arm("bf16+recompute-residual").precision.residual_recompute);
  EXPECT_THROW(parse_model_bench_arm("bf16+recompute-residual+recompute-pointwise"), Error);
  EXPECT_FALSE(plain.precision.fp8_weights_from_master);
  EXPECT_THROW(parse_model_bench_arm("bf16+weights-from-master"), Error);
  EXPECT_THROW(parse_model_bench_arm("fp8-mlp+bf16-moments+weights-from-master"), Error);
  EXPECT_EQ(every.moments, DType::bf16);
  EXPECT_EQ(every.precision.grads, DType::bf16);
  EXPECT_EQ(plain.precision.grads, DType::f32);
  EXPECT_THROW(parse_model_bench_arm("bf16+bf16-moments+bf16-grads"), Error);
  EXPECT_EQ(every.attention, AttentionKernels::cudnn_forward);
  EXPECT_FALSE(plain.attention.has_value());  // the bench's kernels.attention
  const ModelBenchArm cudnn = parse_model_bench_arm("bf16+cudnn");
  EXPECT_EQ(cudnn.attention, AttentionKernels::cudnn);
  EXPECT_EQ(cudnn.precision, PrecisionConfig{});
  EXPECT_THROW(parse_model_bench_arm("bf16+cudnn-forward+bf16-moments"), Error);
  EXPECT_THROW(parse_model_bench_arm("bf16+cudnn+cudnn-forward"), Error);
  EXPECT_EQ(plain.moments, DType::f32);
  EXPECT_THROW(parse_model_bench_arm("bf16+bf16-moments+recompute"), Error);
  EXPECT_EQ(every.precision.policy, PrecisionPolicy::fp8_linears);
  EXPECT_EQ(every.precision.fp8.recipe, Fp8Recipe::blockwise);
  EXPECT_TRUE(every.precision.fp8.bf16_wgrad);
  EXPECT_TRUE(every.precision.mlp_recompute);
  EXPECT_TRUE(every.precision.pointwise_recompute);
  EXPECT_EQ(parse_model_bench_arm("fp8-mlp+rowwise").precision.fp8.recipe, Fp8Recipe::rowwise);
  EXPECT_THROW(parse_model_bench_arm("fp8-mlp+rowwise+blockwise"), Error);
  EXPECT_THROW(parse_model_bench_arm("fp8-mlp+bf16-wgrad+rowwise"), Error);
  EXPECT_THROW(parse_model_bench_arm("bf16+rowwise"), Error);
  EXPECT_THROW(parse_model_bench_arm("bf16+recompute-pointwise+recompute"), Error);
  EXPECT_THROW(parse_model_bench_arm("fp8-mlp+recompute+bf16-wgrad"), Error);
  // A bad arm names what is left over and the order the options go in.
  const std::string twice =
      testing::error_of([] { parse_model_bench_arm("bf16+cudnn+cudnn-forward"); });
  EXPECT_NE(twice.find("'+cudnn' is not an option in its place"), std::string::npos) << twice;
  EXPECT_NE(twice.find("+bf16-moments, +cudnn or +cudnn-forward"), std::string::npos) << twice;
  const std::string typo =
      testing::error_of([] { parse_model_bench_arm("fp8-linears+cudnn-foo"); });
  EXPECT_NE(typo.find("'+cudnn-foo'"), std::string::npos) << typo;
  EXPECT_NE(testing::error_of([] { parse_model_bench_arm("fp16"); }).find("'fp16'"),
            std::string::npos);
  // One way to run each op: the fusions and the backend's choices take no suffix.
  for (const char* gone :
       {"fp8-mlp+unfused-amax", "fp8-mlp+unfused-attention-amax", "fp8-mlp+finalized-amax",
        "fp8-mlp+own-w-amax", "bf16+unfused-norm", "bf16+unfused-gelu", "bf16+dgelu",
        "fp8-mlp+serial-w-cast", "fp8-mlp+timed-gemm", "fp8-mlp+filled-grads"})
    EXPECT_THROW(parse_model_bench_arm(gone), Error) << gone;
}

using testing::tiny_cpu_bench;

// The kernel families (kernels.* sets) go into the results: they change what ran. Only
// model.* and kernels.* keys are taken.
TEST(BenchModelArms, RecordsTheKernelFamilies) {
  ModelBenchConfig c = tiny_cpu_bench({"bf16"});
  const ModelBenchResult plain = run_model_bench(c);
  EXPECT_NE(model_bench_report(plain).find("kernels: attention auto\n"), std::string::npos)
      << model_bench_report(plain);
  EXPECT_EQ(model_bench_json(plain)["kernels"]["attention"], "auto");

  c.sets.push_back("kernels.attention=wgmma");
  const ModelBenchResult chosen = run_model_bench(c);
  EXPECT_NE(model_bench_report(chosen).find("kernels: attention wgmma\n"), std::string::npos)
      << model_bench_report(chosen);
  EXPECT_EQ(model_bench_json(chosen)["kernels"]["attention"], "wgmma");
  EXPECT_EQ(chosen.arms.at(0).loss, plain.arms.at(0).loss);  // the CPU has one kernel per op
  EXPECT_EQ(model_bench_json(chosen)["arms"][0]["attention"], "wgmma");

  // An arm's own family takes the place of the bench's, for that arm alone.
  c.arms = {parse_model_bench_arm("bf16"), parse_model_bench_arm("bf16+cudnn-forward")};
  const nlohmann::json per_arm = model_bench_json(run_model_bench(c));
  EXPECT_EQ(per_arm["arms"][0]["attention"], "wgmma");
  EXPECT_EQ(per_arm["arms"][1]["attention"], "cudnn-forward");

  c.sets = {"optim.lr=1"};
  const std::string message = testing::error_of([&] { run_model_bench(c); });
  EXPECT_NE(message.find("model.* and kernels.* keys only"), std::string::npos) << message;
}

// The training state per parameter, from the backend's accounting by kind: fp32 master and
// bf16 working copy (6 bytes), fp32 gradients (4; bf16 2), two fp32 moments (8; bf16 4); FP8
// arms add their weights' amax slots (a few hundred bytes).
TEST(BenchModelArms, ReportsTheTrainingStateBytesPerParameter) {
  ModelBenchConfig c =
      tiny_cpu_bench({"bf16", "fp8-mlp", "bf16+bf16-moments", "bf16+bf16-grads+bf16-moments"});
  c.train_step = true;
  const ModelBenchResult r = run_model_bench(c);
  const std::int64_t n = r.parameters;
  ASSERT_GT(n, 0);
  for (const ModelBenchArmResult& a : r.arms) {
    const bool bf16_grads = a.arm.find("+bf16-grads") != std::string::npos;
    EXPECT_EQ(a.state.gradients, (bf16_grads ? 2 : 4) * n) << a.arm;
    EXPECT_EQ(a.state.optimizer, (a.arm.find("+bf16-moments") != std::string::npos ? 4 : 8) * n)
        << a.arm;
    EXPECT_GE(a.state.parameters, 6 * n) << a.arm;
    EXPECT_LT(a.state.parameters, 6 * n + 4096) << a.arm;
  }
  EXPECT_EQ(r.arms[0].state.parameters, 6 * n);  // bf16: no amax slots
  EXPECT_GT(r.arms[1].state.parameters, 6 * n);  // fp8-mlp: its weights' amax slots
  const nlohmann::json j = model_bench_json(r)["arms"][0]["state_bytes"];
  EXPECT_EQ(j["gradients"], 4 * n);
  EXPECT_DOUBLE_EQ(j["per_parameter"].get<double>(), 18.0);
  EXPECT_DOUBLE_EQ(model_bench_json(r)["arms"][2]["state_bytes"]["per_parameter"].get<double>(),
                   14.0);
  // bf16 gradients and moments: 6 + 2 + 4, PyTorch's 16 less a quarter.
  EXPECT_DOUBLE_EQ(model_bench_json(r)["arms"][3]["state_bytes"]["per_parameter"].get<double>(),
                   12.0);
  EXPECT_NE(model_bench_report(r).find("training state, bf16: 18.00 bytes/parameter (parameters "
                                       "6.00, gradients 4.00, optimizer 8.00)"),
            std::string::npos)
      << model_bench_report(r);
}

// Rounds: every arm runs once per round, the arms interleaved; each keeps one result whose
// statistics are over all rounds' repeats, with each round's median beside them.
TEST(BenchModelArms, RoundsInterleaveTheArmsAndPoolTheirRepeats) {
  ModelBenchConfig c = tiny_cpu_bench({"bf16", "fp8-mlp"});
  c.repeats = 3;
  c.rounds = 2;
  c.train_step = true;
  const ModelBenchResult r = run_model_bench(c);
  ASSERT_EQ(r.arms.size(), 2u);
  for (const ModelBenchArmResult& a : r.arms) {
    for (const ModelBenchTiming* t : {&a.frozen, &a.step}) {
      ASSERT_EQ(t->samples_ms.size(), 6u) << a.arm;
      ASSERT_EQ(t->round_medians_ms.size(), 2u) << a.arm;
      std::vector<double> sorted = t->samples_ms;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_DOUBLE_EQ(t->median_ms, 0.5 * (sorted[2] + sorted[3])) << a.arm;
      // Each round's median is the middle one of its own three repeats, in run order.
      for (int round = 0; round < 2; ++round) {
        std::vector<double> own(t->samples_ms.begin() + 3 * round,
                                t->samples_ms.begin() + 3 * round + 3);
        std::sort(own.begin(), own.end());
        EXPECT_DOUBLE_EQ(t->round_medians_ms[static_cast<std::size_t>(round)], own[1]) << a.arm;
      }
      EXPECT_GT(t->tokens_per_s, 0) << a.arm;
    }
  }
  const std::string report = model_bench_report(r);
  EXPECT_NE(report.find("2 rounds of 3 repeats, arms interleaved (median of all 6)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("Step medians by round (in run order):\n| arm | round 1 | round 2 |"),
            std::string::npos)
      << report;
  const nlohmann::json j = model_bench_json(r);
  EXPECT_EQ(j["rounds"], 2);
  EXPECT_EQ(j["arms"][1]["step"]["samples_ms"].size(), 6u);
  EXPECT_EQ(j["arms"][1]["step"]["round_medians_ms"].size(), 2u);
  c.rounds = 0;
  EXPECT_THROW(run_model_bench(c), Error);
  c.rounds = 1;
  c.seq_len = -5;  // was taken as "the preset's T"
  EXPECT_THROW(run_model_bench(c), Error);
}

// The train step updates the weights at every repeat on the same batch: its loss at the first
// call and at the last repeat are recorded, the loss falls, and a non-finite one is reported as
// a diverged model rather than passed off as a step time.
TEST(BenchModelArms, TheStepRecordsItsLossAndWarnsWhenItDiverges) {
  ModelBenchConfig c = tiny_cpu_bench({"bf16", "fp8-mlp"});
  c.repeats = 4;
  c.train_step = true;
  ModelBenchResult r = run_model_bench(c);
  ASSERT_EQ(r.arms.size(), 2u);
  for (const ModelBenchArmResult& a : r.arms) {
    EXPECT_TRUE(std::isfinite(a.step_loss_first)) << a.arm;
    EXPECT_LT(a.step_loss_last, a.step_loss_first) << a.arm;  // four updates on this batch
  }
  EXPECT_EQ(model_bench_report(r).find("warning"), std::string::npos) << model_bench_report(r);
  EXPECT_DOUBLE_EQ(model_bench_json(r)["arms"][1]["step_loss_last"].get<double>(),
                   r.arms[1].step_loss_last);
  r.arms[1].step_loss_last = std::numeric_limits<double>::quiet_NaN();
  const std::string report = model_bench_report(r);
  EXPECT_NE(report.find("warning: arm fp8-mlp's training-step loss is nan after its timed "
                        "repeats"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("warning: arm bf16"), std::string::npos) << report;
}

// The memory options change what is kept, not what is computed: the same loss on the same
// problem.
TEST(BenchModelArms, RecomputeArmsComputeTheSameLoss) {
  for (const auto& [kept, rebuilt] :
       {std::pair<std::string, std::string>{"bf16", "bf16+recompute-pointwise"},
        {"fp8-mlp", "fp8-mlp+recompute"},
        {"bf16", "bf16+recompute-residual+recompute-qkv"},
        {"fp8-linears",
         "fp8-linears+recompute+recompute-pointwise+recompute-residual+"
         "recompute-qkv+weights-from-master"}}) {
    const ModelBenchResult r = run_model_bench(tiny_cpu_bench({kept, rebuilt}));
    ASSERT_EQ(r.arms.size(), 2u) << rebuilt;
    EXPECT_EQ(r.arms[0].weights_sha256, r.arms[1].weights_sha256) << rebuilt;
    EXPECT_EQ(r.arms[0].loss, r.arms[1].loss) << rebuilt;
  }
}

}  // namespace
}  // namespace fp8lab
