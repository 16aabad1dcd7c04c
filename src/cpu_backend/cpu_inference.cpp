// CPU inference ops: attention of new rows against a key/value cache, and the LM head's logits.
//
// The cached attention does the arithmetic of attention_forward (cpu_attention.cpp) for each
// row, in the same order (scores, running maximum, exp, sum, weighted values, one division), so
// a sequence fed through the cache gives the attention outputs the full causal forward gives for
// the same q, k and v. The logits are cross_entropy's (cpu_loss.cpp): both operands in fp32, one
// sgemm.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_backend/cpu_backend.hpp"
#include "cpu_backend/cpu_rows.hpp"
#include "nn/inference_shapes.hpp"

namespace fp8lab::cpu {

void CpuBackend::attention_cached_forward(const TensorView& qkv, int n_heads, std::int64_t pos,
                                          const TensorView& k_cache, const TensorView& v_cache,
                                          const TensorView& out) {
  const nn::CachedAttentionShape g =
      nn::check_cached_attention(qkv, n_heads, pos, k_cache, v_cache, out);
  for (const TensorView* t : {&qkv, &k_cache, &v_cache, &out}) {
    check_activation(*t, "cached attention tensor");
    check_device(*t, Device::cpu, "cached attention tensor");
  }
  const std::int64_t d = g.d_model, hd = g.head_dim;
  const std::size_t elem = dtype_size(qkv.dtype);
  const auto row_bytes = static_cast<std::size_t>(d) * elem;
  for (std::int64_t r = 0; r < g.rows; ++r) {  // the new rows' k and v, bits as they are
    const char* src =
        static_cast<const char*>(qkv.data) + static_cast<std::size_t>(r * 3 * d) * elem;
    const auto dst = static_cast<std::size_t>(pos + r) * row_bytes;
    std::memcpy(static_cast<char*>(k_cache.data) + dst, src + row_bytes, row_bytes);
    std::memcpy(static_cast<char*>(v_cache.data) + dst, src + 2 * row_bytes, row_bytes);
  }
  const float scale = 1.f / std::sqrt(static_cast<float>(hd));
  const std::int64_t keys = pos + g.rows;
#pragma omp parallel
  {
    std::vector<float> q(static_cast<std::size_t>(hd)), o(static_cast<std::size_t>(hd));
    std::vector<float> kv(static_cast<std::size_t>(hd)), s(static_cast<std::size_t>(keys));
#pragma omp for schedule(static) collapse(2)
    for (std::int64_t r = 0; r < g.rows; ++r) {
      for (std::int64_t h = 0; h < g.heads; ++h) {
        load_span(qkv, r * 3 * d + h * hd, hd, q.data());
        const std::int64_t last = pos + r;  // causal: keys 0 .. last
        float mx = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = 0; j <= last; ++j) {
          load_span(k_cache, j * d + h * hd, hd, kv.data());
          float dot = 0.f;
          for (std::int64_t c = 0; c < hd; ++c)
            dot += q[static_cast<std::size_t>(c)] * kv[static_cast<std::size_t>(c)];
          s[static_cast<std::size_t>(j)] = dot * scale;
          mx = std::max(mx, s[static_cast<std::size_t>(j)]);
        }
        float sum = 0.f;
        std::fill(o.begin(), o.end(), 0.f);
        for (std::int64_t j = 0; j <= last; ++j) {
          const float p = std::exp(s[static_cast<std::size_t>(j)] - mx);
          sum += p;
          load_span(v_cache, j * d + h * hd, hd, kv.data());
          for (std::int64_t c = 0; c < hd; ++c)
            o[static_cast<std::size_t>(c)] += p * kv[static_cast<std::size_t>(c)];
        }
        for (float& x : o) x /= sum;
        store_span(out, r * d + h * hd, hd, o.data());
      }
    }
  }
}

void CpuBackend::lm_head_logits(const TensorView& x, const TensorView& w,
                                const TensorView& logits) {
  nn::check_lm_head_logits(x, w, logits);
  check_activation(x, "lm head x");
  check_activation(w, "lm head weight");
  for (const TensorView* t : {&x, &w, &logits}) check_device(*t, Device::cpu, "lm head tensor");
  const std::int64_t m = x.shape[0], d = x.shape[1], vocab = w.shape[0];
  Buffer w32 = allocate(MemoryKind::workspace, DType::f32, w.shape, "lm_head.w_f32");
  Buffer x32 = allocate(MemoryKind::workspace, DType::f32, x.shape, "lm_head.x_f32");
  convert(w, w32);
  convert(x, x32);
  sgemm_nt(static_cast<int>(m), static_cast<int>(vocab), static_cast<int>(d), 1.f,
           x32.view().as<const float>(), static_cast<int>(d), w32.view().as<const float>(),
           static_cast<int>(d), 0.f, logits.as<float>(), static_cast<int>(vocab));
}

}  // namespace fp8lab::cpu
