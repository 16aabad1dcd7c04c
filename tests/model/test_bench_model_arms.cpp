// `fp8lab bench model` arms: the names parse into the configs they say, and the v4 A/B pair
// (an FP8 arm with and without "+unfused-amax") computes the same loss on the same problem.
#include "fp8lab/bench_model.hpp"
#include "fp8lab/error.hpp"

#include <gtest/gtest.h>

namespace fp8lab {
namespace {

TEST(BenchModelArms, NamesParseIntoTheirConfigs) {
  const ModelBenchArm plain = parse_model_bench_arm("fp8-mlp");
  EXPECT_EQ(plain.precision.policy, PrecisionPolicy::fp8_mlp);
  EXPECT_FALSE(plain.precision.mlp_recompute);
  EXPECT_TRUE(plain.fuse_amax);
  const ModelBenchArm both = parse_model_bench_arm("fp8-linears+recompute+unfused-amax");
  EXPECT_EQ(both.precision.policy, PrecisionPolicy::fp8_linears);
  EXPECT_TRUE(both.precision.mlp_recompute);
  EXPECT_FALSE(both.fuse_amax);
  EXPECT_FALSE(parse_model_bench_arm("bf16+unfused-amax").fuse_amax);
  EXPECT_THROW(parse_model_bench_arm("fp8-mlp+unfused-amax+recompute"), Error);
}

TEST(BenchModelArms, UnfusedAmaxArmComputesTheSameLoss) {
  ModelBenchConfig c;
  c.backend = "cpu";
  c.preset = "tiny";
  c.batch = 2;
  c.seq_len = 32;
  c.warmup = 0;
  c.repeats = 1;
  c.train_step = false;
  c.loss_chunk_rows = 64;
  c.arms = {parse_model_bench_arm("fp8-mlp+recompute"),
            parse_model_bench_arm("fp8-mlp+recompute+unfused-amax")};
  const ModelBenchResult r = run_model_bench(c);
  ASSERT_EQ(r.arms.size(), 2u);
  EXPECT_EQ(r.arms[0].weights_sha256, r.arms[1].weights_sha256);
  EXPECT_EQ(r.arms[0].loss, r.arms[1].loss);
}

}  // namespace
}  // namespace fp8lab
