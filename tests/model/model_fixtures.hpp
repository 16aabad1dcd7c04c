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
