// The sampler and the generation loop (fp8lab/decoder.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "fp8lab/decoder.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/rng.hpp"

namespace fp8lab {

void SamplerConfig::validate() const {
  FP8LAB_CHECK(std::isfinite(temperature) && temperature >= 0.0,
               "--temperature {} must be a finite number >= 0 (0: greedy)", temperature);
  FP8LAB_CHECK(top_k >= 0, "--top-k {} must be >= 0 (0: no limit)", top_k);
  FP8LAB_CHECK(allowed_ids >= 0, "allowed_ids {} must be >= 0", allowed_ids);
}

std::int32_t sample_token(std::span<const float> logits, const SamplerConfig& config,
                          std::uint64_t step) {
  config.validate();
  const std::int64_t vocab = static_cast<std::int64_t>(logits.size());
  const std::int64_t n = config.allowed_ids > 0 ? std::min(config.allowed_ids, vocab) : vocab;
  FP8LAB_CHECK(n > 0, "sample_token: no candidate ids (vocabulary {}, allowed {})", vocab,
               config.allowed_ids);
  for (std::int64_t i = 0; i < n; ++i) {
    FP8LAB_CHECK_KIND(ErrorKind::non_finite, std::isfinite(logits[static_cast<std::size_t>(i)]),
                      "the logit of token {} at generation step {} is {}", i, step,
                      logits[static_cast<std::size_t>(i)]);
  }
  // Candidates from the most likely down; among equal logits the lower id first.
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  auto before = [&](std::int32_t a, std::int32_t b) {
    const float la = logits[static_cast<std::size_t>(a)], lb = logits[static_cast<std::size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  if (config.temperature == 0.0) return *std::min_element(order.begin(), order.end(), before);
  const std::size_t k =
      config.top_k > 0 ? static_cast<std::size_t>(std::min(config.top_k, n)) : order.size();
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    before);
  order.resize(k);
  const double top = logits[static_cast<std::size_t>(order.front())];
  std::vector<double> weight(k);
  for (std::size_t i = 0; i < k; ++i) {
    weight[i] = std::exp((logits[static_cast<std::size_t>(order[i])] - top) / config.temperature);
  }
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  const double u = random_uniform(config.seed, stream_id("fp8lab.sample"), step) * total;
  double below = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    below += weight[i];
    if (u < below) return order[i];
  }
  return order.back();  // u within rounding of the total
}

void check_generation_fits(std::int64_t prompt_tokens, std::int64_t max_new_tokens,
                           std::int64_t context) {
  FP8LAB_CHECK(max_new_tokens > 0, "--max-new-tokens {} must be at least 1", max_new_tokens);
  FP8LAB_CHECK(prompt_tokens > 0, "the prompt is empty: give at least one token to start from");
  FP8LAB_CHECK(prompt_tokens <= context,
               "the prompt is {} tokens long, longer than the model's context of {} tokens",
               prompt_tokens, context);
  FP8LAB_CHECK(prompt_tokens + max_new_tokens - 1 <= context,
               "--max-new-tokens {} after a prompt of {} tokens does not fit the model's context "
               "of {} tokens: at most {} new tokens fit",
               max_new_tokens, prompt_tokens, context, context - prompt_tokens + 1);
}

std::vector<std::int32_t> generate(GptDecoder& decoder, std::span<const std::int32_t> prompt,
                                   const GenerateOptions& options,
                                   const std::function<void(std::int32_t)>& on_token) {
  check_generation_fits(static_cast<std::int64_t>(prompt.size()), options.max_new_tokens,
                        decoder.context());
  options.sampler.validate();
  decoder.reset();
  std::vector<float> logits = decoder.feed(prompt);
  std::vector<std::int32_t> out;
  for (std::int64_t step = 0; step < options.max_new_tokens; ++step) {
    const std::int32_t id = sample_token(logits, options.sampler, static_cast<std::uint64_t>(step));
    if (options.stop_token && id == *options.stop_token) break;
    out.push_back(id);
    if (on_token) on_token(id);
    if (step + 1 < options.max_new_tokens) logits = decoder.feed(std::span(&out.back(), 1));
  }
  return out;
}

}  // namespace fp8lab
