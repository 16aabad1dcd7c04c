// Small model configs and random token batches for the model and trainer tests.
#pragma once

#include "fp8lab/config.hpp"
#include "fp8lab/rng.hpp"

#include <cstdint>
#include <vector>

namespace fp8lab::testing {

// Small enough for finite differences over every tensor in fp32.
inline ModelConfig gradcheck_model() {
  ModelConfig c;
  c.vocab_size = 13, c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.seq_len = 6;
  c.init_std = 0.3f;  // large weights: gradients well above the fp32 noise floor of the FDs
  return c;
}

// FP8 GEMMs want every dimension a multiple of 16: d 32, 4d 128, M = B * T = 2 * 16.
inline ModelConfig fp8_model() {
  ModelConfig c;
  c.vocab_size = 64, c.d_model = 32, c.n_layers = 2, c.n_heads = 2, c.seq_len = 16;
  return c;
}

// What PrecisionConfig::pointwise_recompute rebuilds in each block's backward, from the policy
// alone: ln1 when qkv is bf16 (its dW reads it), ln2 when fc is bf16 or the MLP is recomputed
// (the recompute's input), gelu when mlp.proj is bf16 and the MLP is not recomputed (the MLP
// recompute rebuilds gelu itself). FP8 linears read their own FP8 copies instead.
struct PointwiseRebuilt {
  bool ln1 = false, ln2 = false, gelu = false;
};

inline PointwiseRebuilt pointwise_rebuilt(const PrecisionConfig& p) {
  const bool fp8_qkv = p.policy == PrecisionPolicy::fp8_linears;
  const bool fp8_mlp = p.policy != PrecisionPolicy::bf16;
  return {!fp8_qkv, !fp8_mlp || p.mlp_recompute, !fp8_mlp && !p.mlp_recompute};
}

// The activation bytes pointwise recompute saves on `batch` sequences: the per-block buffers it
// drops ([M, D] per ln, [M, 4D] per gelu), less the one shared [M, 4D] gelu buffer it needs when
// gelu is rebuilt (the rebuilt ln goes into memory the model already has).
inline std::int64_t pointwise_recompute_saving(const ModelConfig& c, const PrecisionConfig& p,
                                               std::int64_t batch) {
  const PointwiseRebuilt r = pointwise_rebuilt(p);
  const std::int64_t elem = p.compute == ComputeMode::fp32 ? 4 : 2;
  const std::int64_t md = batch * c.seq_len * c.d_model;
  const std::int64_t per_block = ((r.ln1 ? md : 0) + (r.ln2 ? md : 0) + (r.gelu ? 4 * md : 0));
  return (c.n_layers * per_block - (r.gelu ? 4 * md : 0)) * elem;
}

inline std::vector<std::int32_t> random_tokens(std::int64_t n, std::int64_t vocab,
                                               std::uint64_t seed, std::uint64_t stream) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    t[static_cast<std::size_t>(i)] =
        static_cast<std::int32_t>(random_u32(seed, stream, static_cast<std::uint64_t>(i)) % vocab);
  }
  return t;
}

}  // namespace fp8lab::testing
