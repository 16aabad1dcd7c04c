// Scoring held-out text: cross-entropy, perplexity and bits per byte.
//
// Targets equal to the excluded special token (<|endoftext|>, 50256 for GPT-2) are not counted:
// predicting a document boundary is not part of the text. For the counted targets:
//   ce_nats       = sum(loss_i) / counted                     (mean natural-log loss)
//   perplexity    = exp(ce_nats)
//   bits_per_byte = sum(loss_i) / ln(2) / sum(bytes_i)         (bytes_i: UTF-8 length of target i)
// Sums are accumulated in double, so the result does not depend on how targets are batched
// beyond double rounding.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace fp8lab::eval {

inline constexpr std::int32_t kGpt2EndOfText = 50256;

struct EvalMetrics {
  double ce_nats = 0;                 // mean loss over counted targets (nats)
  double perplexity = 0;              // exp(ce_nats)
  double bits_per_byte = 0;           // total loss in bits / counted bytes
  double loss_sum_nats = 0;           // sum of counted losses
  std::int64_t targets_total = 0;     // all targets seen
  std::int64_t targets_counted = 0;   // targets that are not the excluded special token
  std::int64_t targets_excluded = 0;  // targets_total - targets_counted
  std::int64_t bytes_counted = 0;     // UTF-8 bytes of the counted targets
  std::string to_json() const;
};

class EvalAccumulator {
 public:
  // excluded_token: nullopt counts every target (byte tokenizer).
  explicit EvalAccumulator(std::optional<std::int32_t> excluded_token = kGpt2EndOfText);

  // Per-target losses (nats), their targets and byte lengths, all the same length. Losses of
  // excluded targets are ignored (their value does not matter); a non-finite counted loss or a
  // counted target with byte length 0 is an error.
  void add_losses(std::span<const float> losses_nats, std::span<const std::int32_t> targets,
                  std::span<const std::uint8_t> target_bytes);
  // A batch whose loss was already summed elsewhere (e.g. on the GPU) over the counted targets
  // only: the targets and byte lengths supply the counts.
  void add_batch_sum(double counted_loss_sum_nats, std::span<const std::int32_t> targets,
                     std::span<const std::uint8_t> target_bytes);

  EvalMetrics result() const;  // throws if no target was counted

 private:
  struct Counts {
    std::int64_t total = 0, counted = 0, bytes = 0;
  };
  Counts count(std::span<const std::int32_t> targets, std::span<const std::uint8_t> bytes) const;
  std::optional<std::int32_t> excluded_;
  double loss_sum_ = 0;
  double loss_compensation_ = 0;  // Neumaier summation: order-robust totals
  std::int64_t total_ = 0, counted_ = 0, bytes_ = 0;
  void add_to_sum(double value);
};

// The counted-target mask for a GPU loss kernel: 1 where targets[i] is counted, else 0.
void counted_target_mask(std::span<const std::int32_t> targets,
                         std::optional<std::int32_t> excluded_token, std::span<float> mask_out);

}  // namespace fp8lab::eval
