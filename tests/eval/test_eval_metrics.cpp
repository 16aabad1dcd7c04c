// Cross-entropy, perplexity and bits per byte: a hand-computed toy example, exclusion of the
// separator, batching invariance, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "fp8lab/error.hpp"
#include "fp8lab/eval_metrics.hpp"

namespace fp8lab::eval {
namespace {

TEST(EvalMetrics, HandComputedToyExample) {
  // Targets: <|endoftext|> (excluded, its loss ignored), then three counted targets of 1, 3 and 2
  // bytes with losses 0.5, 1.0 and 2.0 nats. By hand: loss sum 3.5 nats over 3 targets and
  // 6 bytes; CE = 3.5/3 = 1.1666...; perplexity = e^(7/6) = 3.2112705...;
  // BPB = 3.5 / ln 2 / 6 = 0.841572107...
  EvalAccumulator acc;
  const std::vector<float> losses = {9.0f, 0.5f, 1.0f, 2.0f};
  const std::vector<std::int32_t> targets = {50256, 11, 262, 1303};
  const std::vector<std::uint8_t> bytes = {0, 1, 3, 2};
  acc.add_losses(losses, targets, bytes);
  const EvalMetrics m = acc.result();
  EXPECT_EQ(m.targets_total, 4);
  EXPECT_EQ(m.targets_counted, 3);
  EXPECT_EQ(m.targets_excluded, 1);
  EXPECT_EQ(m.bytes_counted, 6);
  EXPECT_DOUBLE_EQ(m.loss_sum_nats, 3.5);
  EXPECT_NEAR(m.ce_nats, 1.1666666666666667, 1e-15);
  EXPECT_NEAR(m.perplexity, 3.2112705431535611, 1e-12);
  EXPECT_NEAR(m.bits_per_byte, 0.8415721071852288, 1e-15);
}

TEST(EvalMetrics, PowersOfTwoGiveExactBits) {
  // Losses k*ln2 are k bits: 1 + 2 + 3 = 6 bits over 6 bytes is exactly 1 bit per byte, and a
  // mean of 2 bits per token is perplexity 4.
  EvalAccumulator acc;
  const float ln2 = static_cast<float>(std::log(2.0));
  const std::vector<float> losses = {ln2, 2 * ln2, 3 * ln2};
  const std::vector<std::int32_t> targets = {5, 6, 7};
  const std::vector<std::uint8_t> bytes = {2, 2, 2};
  acc.add_losses(losses, targets, bytes);
  const EvalMetrics m = acc.result();
  EXPECT_NEAR(m.bits_per_byte, 1.0, 1e-6);
  EXPECT_NEAR(m.perplexity, 4.0, 1e-5);
}

TEST(EvalMetrics, BatchSumsEqualPerTargetLossesInAnyBatching) {
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::size_t n = 1000 + rng() % 5000;
  std::vector<float> losses(n);
  std::vector<std::int32_t> targets(n);
  std::vector<std::uint8_t> bytes(n);
  std::uniform_real_distribution<float> loss(0.01f, 12.0f);
  double expected_sum = 0;
  std::int64_t counted = 0, counted_bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    targets[i] = rng() % 7 == 0 ? 50256 : static_cast<std::int32_t>(rng() % 50256);
    const bool eot = targets[i] == 50256;
    losses[i] = eot ? std::numeric_limits<float>::quiet_NaN() : loss(rng);  // excluded: ignored
    bytes[i] = eot ? 0 : static_cast<std::uint8_t>(1 + rng() % 12);
    if (!eot) {
      expected_sum += losses[i];
      ++counted;
      counted_bytes += bytes[i];
    }
  }
  EvalAccumulator whole, by_sum;
  whole.add_losses(losses, targets, bytes);
  for (std::size_t start = 0; start < n;) {
    const std::size_t len = std::min<std::size_t>(1 + rng() % 300, n - start);
    double sum = 0;
    for (std::size_t i = start; i < start + len; ++i) {
      if (targets[i] != 50256) sum += losses[i];
    }
    by_sum.add_batch_sum(sum, std::span(targets).subspan(start, len),
                         std::span(bytes).subspan(start, len));
    start += len;
  }
  const EvalMetrics a = whole.result(), b = by_sum.result();
  EXPECT_EQ(a.targets_counted, counted);
  EXPECT_EQ(a.bytes_counted, counted_bytes);
  EXPECT_EQ(b.targets_counted, counted);
  EXPECT_EQ(b.bytes_counted, counted_bytes);
  EXPECT_NEAR(a.loss_sum_nats, expected_sum, 1e-9 * expected_sum);
  EXPECT_NEAR(b.bits_per_byte, a.bits_per_byte, 1e-12 * a.bits_per_byte);
  EXPECT_NEAR(b.ce_nats, expected_sum / static_cast<double>(counted), 1e-12);
  EXPECT_NE(a.to_json().find("\"bits_per_byte\""), std::string::npos);
}

TEST(EvalMetrics, NoExclusionCountsEveryTarget) {
  EvalAccumulator acc(std::nullopt);
  const std::vector<float> losses = {1.0f, 3.0f};
  const std::vector<std::int32_t> targets = {50256, 4};
  const std::vector<std::uint8_t> bytes = {1, 1};
  acc.add_losses(losses, targets, bytes);
  EXPECT_EQ(acc.result().targets_counted, 2);
  EXPECT_DOUBLE_EQ(acc.result().ce_nats, 2.0);
  std::vector<float> mask(2, -1.0f);
  counted_target_mask(targets, kGpt2EndOfText, mask);
  EXPECT_EQ(mask, (std::vector<float>{0.0f, 1.0f}));
}

TEST(EvalMetrics, InconsistentInputsAreErrors) {
  EvalAccumulator acc;
  const std::vector<float> losses = {1.0f, 2.0f};
  const std::vector<std::int32_t> targets = {1, 2};
  const std::vector<std::uint8_t> zero_len = {1, 0};
  const std::vector<std::uint8_t> short_bytes = {1};
  EXPECT_THROW(acc.add_losses(losses, targets, zero_len), Error);
  EXPECT_THROW(acc.add_losses(losses, targets, short_bytes), Error);
  const std::vector<float> nan = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  const std::vector<std::uint8_t> ok = {1, 1};
  EXPECT_THROW(acc.add_losses(nan, targets, ok), Error);
  EXPECT_THROW(acc.result(), Error);  // nothing counted yet
  const std::vector<std::int32_t> only_eot = {50256};
  const std::vector<std::uint8_t> zero = {0};
  acc.add_batch_sum(0.0, only_eot, zero);
  EXPECT_THROW(acc.result(), Error);
}

}  // namespace
}  // namespace fp8lab::eval
