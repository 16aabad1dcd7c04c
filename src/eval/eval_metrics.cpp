#include "fp8lab/eval_metrics.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>

#include "fp8lab/error.hpp"

namespace fp8lab::eval {

EvalAccumulator::EvalAccumulator(std::optional<std::int32_t> excluded_token)
    : excluded_(excluded_token) {}

EvalAccumulator::Counts EvalAccumulator::count(std::span<const std::int32_t> targets,
                                               std::span<const std::uint8_t> bytes) const {
  FP8LAB_CHECK(targets.size() == bytes.size(),
               "eval: {} targets but {} byte lengths; they must match one to one", targets.size(),
               bytes.size());
  Counts c;
  c.total = static_cast<std::int64_t>(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (excluded_ && targets[i] == *excluded_) continue;
    // A counted target that stands for no bytes would make bits per byte meaningless: it means the
    // byte lengths do not belong to these targets.
    FP8LAB_CHECK(bytes[i] > 0, "eval: counted target {} (token {}) has byte length 0", i,
                 targets[i]);
    ++c.counted;
    c.bytes += bytes[i];
  }
  return c;
}

void EvalAccumulator::add_to_sum(double value) {
  const double t = loss_sum_ + value;
  loss_compensation_ +=
      std::abs(loss_sum_) >= std::abs(value) ? (loss_sum_ - t) + value : (value - t) + loss_sum_;
  loss_sum_ = t;
}

void EvalAccumulator::add_losses(std::span<const float> losses_nats,
                                 std::span<const std::int32_t> targets,
                                 std::span<const std::uint8_t> target_bytes) {
  FP8LAB_CHECK(losses_nats.size() == targets.size(), "eval: {} losses but {} targets",
               losses_nats.size(), targets.size());
  const Counts c = count(targets, target_bytes);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (excluded_ && targets[i] == *excluded_) continue;
    FP8LAB_CHECK_KIND(ErrorKind::non_finite, std::isfinite(losses_nats[i]),
                      "eval: loss of target {} (token {}) is {}", i, targets[i], losses_nats[i]);
    add_to_sum(losses_nats[i]);
  }
  total_ += c.total;
  counted_ += c.counted;
  bytes_ += c.bytes;
}

void EvalAccumulator::add_batch_sum(double counted_loss_sum_nats,
                                    std::span<const std::int32_t> targets,
                                    std::span<const std::uint8_t> target_bytes) {
  FP8LAB_CHECK_KIND(ErrorKind::non_finite, std::isfinite(counted_loss_sum_nats),
                    "eval: batch loss sum is {}", counted_loss_sum_nats);
  const Counts c = count(targets, target_bytes);
  add_to_sum(counted_loss_sum_nats);
  total_ += c.total;
  counted_ += c.counted;
  bytes_ += c.bytes;
}

EvalMetrics EvalAccumulator::result() const {
  FP8LAB_CHECK(counted_ > 0, "eval: no target was counted ({} seen, all excluded or none)", total_);
  EvalMetrics m;
  m.loss_sum_nats = loss_sum_ + loss_compensation_;
  m.targets_total = total_;
  m.targets_counted = counted_;
  m.targets_excluded = total_ - counted_;
  m.bytes_counted = bytes_;
  m.ce_nats = m.loss_sum_nats / static_cast<double>(counted_);
  m.perplexity = std::exp(m.ce_nats);
  m.bits_per_byte = m.loss_sum_nats / std::numbers::ln2 / static_cast<double>(bytes_);
  return m;
}

std::string EvalMetrics::to_json() const {
  nlohmann::ordered_json j;
  j["ce_nats"] = ce_nats;
  j["perplexity"] = perplexity;
  j["bits_per_byte"] = bits_per_byte;
  j["loss_sum_nats"] = loss_sum_nats;
  j["targets_total"] = targets_total;
  j["targets_counted"] = targets_counted;
  j["targets_excluded"] = targets_excluded;
  j["bytes_counted"] = bytes_counted;
  return j.dump();
}

void counted_target_mask(std::span<const std::int32_t> targets,
                         std::optional<std::int32_t> excluded_token, std::span<float> mask_out) {
  FP8LAB_CHECK(targets.size() == mask_out.size(), "eval: {} targets but a mask of {}",
               targets.size(), mask_out.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    mask_out[i] = excluded_token && targets[i] == *excluded_token ? 0.0f : 1.0f;
  }
}

}  // namespace fp8lab::eval
