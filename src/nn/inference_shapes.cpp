// Shape checks of the inference ops (see nn/inference_shapes.hpp).
#include "nn/inference_shapes.hpp"

#include <cstdint>

#include "fp8lab/error.hpp"

namespace fp8lab::nn {
namespace {

bool overlap(const TensorView& a, const TensorView& b) {
  const auto pa = reinterpret_cast<std::uintptr_t>(a.data);
  const auto pb = reinterpret_cast<std::uintptr_t>(b.data);
  return a.nbytes() > 0 && b.nbytes() > 0 && pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

}  // namespace

CachedAttentionShape check_cached_attention(const TensorView& qkv, int n_heads, std::int64_t pos,
                                            const TensorView& k_cache, const TensorView& v_cache,
                                            const TensorView& out) {
  check_rank(qkv, 2, "cached attention qkv");
  check_rank(k_cache, 2, "k_cache");
  check_rank(v_cache, 2, "v_cache");
  check_rank(out, 2, "cached attention out");
  const std::int64_t n = qkv.shape[0], d = qkv.shape[1] / 3, t = k_cache.shape[0];
  FP8LAB_CHECK_KIND(ErrorKind::shape, qkv.shape[1] % 3 == 0 && n_heads > 0 && d % n_heads == 0,
                    "cached attention: qkv {} is not [n, 3D] with D divisible by {} heads",
                    qkv.describe(), n_heads);
  FP8LAB_CHECK_KIND(ErrorKind::shape,
                    k_cache.shape == Shape({t, d}) && v_cache.shape == Shape({t, d}) &&
                        out.shape == Shape({n, d}),
                    "cached attention: qkv {}, k_cache {}, v_cache {}, out {} do not fit [n, 3D], "
                    "[T, D], [T, D], [n, D]",
                    qkv.describe(), k_cache.describe(), v_cache.describe(), out.describe());
  FP8LAB_CHECK_KIND(ErrorKind::shape, pos >= 0 && n >= 1 && pos + n <= t,
                    "cached attention: rows {} at position {} do not fit a cache of {} positions",
                    n, pos, t);
  FP8LAB_CHECK_KIND(ErrorKind::dtype, k_cache.dtype == qkv.dtype && v_cache.dtype == qkv.dtype,
                    "cached attention: k_cache {} and v_cache {} must have qkv's dtype ({})",
                    k_cache.describe(), v_cache.describe(), qkv.describe());
  for (const TensorView* other : {&qkv, &out, &v_cache}) {
    FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, !overlap(k_cache, *other),
                      "cached attention: k_cache {} overlaps {}", k_cache.describe(),
                      other->describe());
  }
  for (const TensorView* other : {&qkv, &out}) {
    FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, !overlap(v_cache, *other),
                      "cached attention: v_cache {} overlaps {}", v_cache.describe(),
                      other->describe());
  }
  return {n, pos, t, n_heads, d / n_heads, d};
}

void check_lm_head_logits(const TensorView& x, const TensorView& w, const TensorView& logits) {
  check_rank(x, 2, "lm head x");
  check_rank(w, 2, "lm head weight");
  check_rank(logits, 2, "logits");
  check_dtype(logits, DType::f32, "logits");
  FP8LAB_CHECK_KIND(ErrorKind::shape,
                    w.shape[1] == x.shape[1] && logits.shape == Shape({x.shape[0], w.shape[0]}),
                    "lm_head_logits: x {}, weight {}, logits {} do not fit [M, D], [V, D], [M, V]",
                    x.describe(), w.describe(), logits.describe());
}

}  // namespace fp8lab::nn
