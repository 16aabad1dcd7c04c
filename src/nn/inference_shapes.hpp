// Shape checks of the inference ops (Backend::attention_cached_forward, lm_head_logits), shared
// by the backends: what the arguments must look like whatever the device.
#pragma once

#include <cstdint>

#include "fp8lab/tensor.hpp"

namespace fp8lab::nn {

// qkv [n, 3D]; k_cache and v_cache [T, D] of qkv's dtype; out [n, D]; 0 <= pos, pos + n <= T;
// D divisible by n_heads. The caches overlap neither qkv nor out nor each other.
struct CachedAttentionShape {
  std::int64_t rows, pos, context, heads, head_dim, d_model;
};
CachedAttentionShape check_cached_attention(const TensorView& qkv, int n_heads, std::int64_t pos,
                                            const TensorView& k_cache, const TensorView& v_cache,
                                            const TensorView& out);

// x [M, D], w [V, D], logits f32 [M, V].
void check_lm_head_logits(const TensorView& x, const TensorView& w, const TensorView& logits);

}  // namespace fp8lab::nn
