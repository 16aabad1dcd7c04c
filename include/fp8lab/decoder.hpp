// Text generation: a GPT forward over a key/value cache, a deterministic sampler, and the loop
// that joins them (`fp8lab sample`, docs/sampling.md).
//
// GptDecoder runs the model of GptModel on new tokens only: each block stores the k and v of the
// rows it sees in its cache (Backend::attention_cached_forward), so generating token t costs one
// row through the model instead of t. It reads the weights of a GptModel (the fp32 master, and
// in mixed compute the bf16 working copy the linears read) and owns only the cache and the
// activations of `max_rows` new rows. The arithmetic is the model's forward with BF16 linears
// (mixed compute) or fp32 (compute fp32), whatever the model's FP8 policy: FP8 is a training
// recipe, and its GEMMs want row counts in multiples of 16. The MLP's GELU runs as its own op
// (not in fc's GEMM epilogue), so the CPU and CUDA backends round at the same points.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "fp8lab/backend.hpp"
#include "fp8lab/model.hpp"

namespace fp8lab {

class GptDecoder {
 public:
  // max_rows: the most rows one forward takes (a longer feed runs in pieces); 0: seq_len.
  explicit GptDecoder(GptModel& model, std::int64_t max_rows = 0);
  GptDecoder(const GptDecoder&) = delete;
  GptDecoder& operator=(const GptDecoder&) = delete;

  std::int64_t position() const { return position_; }  // tokens in the cache
  std::int64_t context() const { return model_.config().seq_len; }
  std::int64_t vocab_size() const { return model_.config().vocab_size; }
  void reset() { position_ = 0; }  // forget the cache (its rows are rewritten before use)

  // Runs `tokens` (host ids, at positions position() .. position() + n - 1) through the model
  // and appends them to the cache. Returns the next-token logits (f32): of the last token, or
  // with all_rows those of every token, [n, vocab] row-major. Throws naming the offending value
  // when a token is outside the vocabulary or the tokens do not fit the context.
  std::vector<float> feed(std::span<const std::int32_t> tokens, bool all_rows = false);

 private:
  // One forward of n <= max_rows rows at position_; logits of rows [first_row, n) into `out`.
  void forward_rows(std::span<const std::int32_t> tokens, std::int64_t first_row, float* out);
  TensorView linear_weight(const ParamInfo& p) const;
  TensorView rows(const Buffer& b, std::int64_t n) const;  // the first n rows of a 2-D buffer

  GptModel& model_;
  Backend& backend_;
  std::int64_t max_rows_;
  std::int64_t position_ = 0;
  LinearMode mode_;
  Buffer tokens_, cache_;
  Buffer x_, sum_, ln_, rstd_, qkv_, att_, branch_, fc_, gelu_, logits_;
};

// How the next token is picked from its logits.
struct SamplerConfig {
  double temperature = 1.0;  // 0: greedy (the largest logit; the lowest id among equals)
  std::int64_t top_k = 0;    // > 0: only the k largest logits compete; 0: all
  std::uint64_t seed = 1;
  // Ids >= this are never picked: a vocabulary padded beyond its tokenizer's (GPT-2's 50257 ids
  // in a 50304-row embedding). 0: every id.
  std::int64_t allowed_ids = 0;
  void validate() const;  // throws naming a negative or non-finite temperature or a negative k
};

// Token number `step` of a generation. Deterministic: softmax(logits / temperature) over the
// candidates in double, walked from the most likely down (lower id first among equals) against
// one uniform draw Philox(seed, stream "fp8lab.sample", step); the same logits, config and step
// give the same token on every machine. A non-finite logit is an error naming its id.
std::int32_t sample_token(std::span<const float> logits, const SamplerConfig& config,
                          std::uint64_t step);

struct GenerateOptions {
  std::int64_t max_new_tokens = 0;  // > 0
  SamplerConfig sampler;
  std::optional<std::int32_t> stop_token;  // generation ends when it is picked (not emitted)
};

// The prompt's length and max_new_tokens against the context, before any work: the prompt and
// every generated token but the last are fed, so prompt + max_new_tokens - 1 <= context.
// Throws naming the numbers (also an empty prompt or max_new_tokens <= 0).
void check_generation_fits(std::int64_t prompt_tokens, std::int64_t max_new_tokens,
                           std::int64_t context);

// Feeds `prompt` from an empty cache, then picks up to max_new_tokens tokens, feeding each back;
// on_token(id) is called as each is picked (streaming). Returns the generated ids.
std::vector<std::int32_t> generate(GptDecoder& decoder, std::span<const std::int32_t> prompt,
                                   const GenerateOptions& options,
                                   const std::function<void(std::int32_t)>& on_token);

}  // namespace fp8lab
