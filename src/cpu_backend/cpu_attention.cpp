// CPU causal multi-head attention, forward and backward, flash-style: the forward saves only
// the row log-sum-exp, and the backward recomputes the probabilities from it (the CUDA backend
// saves the same lse, so both backends share one activation layout).
//
// Work is split over (batch, head) pairs; within a pair the loops run in a fixed order, so the
// results do not depend on the thread count. Plain loops (no BLAS) keep OpenMP and the BLAS
// thread pool from competing: per pair these are T x T x head_dim products, small for the CPU.
#include "cpu_backend/cpu_backend.hpp"
#include "cpu_backend/cpu_rows.hpp"
#include "nn/op_shapes.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace fp8lab::cpu {
namespace {

using HeadGeometry = nn::HeadShape;

HeadGeometry check_attention_args(const TensorView& qkv, int n_heads, int seq_len,
                                  const TensorView& lse) {
  const HeadGeometry g = nn::check_attention_shapes(qkv, n_heads, seq_len, lse);
  check_activation(qkv, "attention qkv");
  return g;
}

// Loads the q, k and v slices of head h of batch b into [T, hd] fp32 arrays.
void load_head(const TensorView& qkv, const HeadGeometry& g, std::int64_t b, std::int64_t h,
               float* q, float* k, float* v) {
  for (std::int64_t t = 0; t < g.seq; ++t) {
    const std::int64_t base = (b * g.seq + t) * 3 * g.d_model + h * g.head_dim;
    load_span(qkv, base, g.head_dim, q + t * g.head_dim);
    load_span(qkv, base + g.d_model, g.head_dim, k + t * g.head_dim);
    load_span(qkv, base + 2 * g.d_model, g.head_dim, v + t * g.head_dim);
  }
}

float dot(const float* a, const float* b, std::int64_t n) {
  float s = 0.f;
  for (std::int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

void CpuBackend::attention_forward(const TensorView& qkv, int n_heads, int seq_len,
                                   const TensorView& out, const TensorView& lse,
                                   AmaxSlot out_amax) {
  const HeadGeometry g = check_attention_args(qkv, n_heads, seq_len, lse);
  check_activation(out, "attention out");
  check_shape(out, {qkv.shape[0], g.d_model}, "attention out");
  const float scale = 1.f / std::sqrt(static_cast<float>(g.head_dim));
  const auto head_elems = static_cast<std::size_t>(g.seq * g.head_dim);
#pragma omp parallel
  {
    std::vector<float> q(head_elems), k(head_elems), v(head_elems),
        o(static_cast<std::size_t>(g.head_dim));
    std::vector<float> s(static_cast<std::size_t>(g.seq));
#pragma omp for schedule(static) collapse(2)
    for (std::int64_t b = 0; b < g.batch; ++b) {
      for (std::int64_t h = 0; h < g.heads; ++h) {
        load_head(qkv, g, b, h, q.data(), k.data(), v.data());
        for (std::int64_t i = 0; i < g.seq; ++i) {
          const float* qi = q.data() + i * g.head_dim;
          float mx = -std::numeric_limits<float>::infinity();
          for (std::int64_t j = 0; j <= i; ++j) {
            s[static_cast<std::size_t>(j)] = dot(qi, k.data() + j * g.head_dim, g.head_dim) * scale;
            mx = std::max(mx, s[static_cast<std::size_t>(j)]);
          }
          float sum = 0.f;
          std::fill(o.begin(), o.end(), 0.f);
          for (std::int64_t j = 0; j <= i; ++j) {
            const float p = std::exp(s[static_cast<std::size_t>(j)] - mx);
            sum += p;
            const float* vj = v.data() + j * g.head_dim;
            for (std::int64_t c = 0; c < g.head_dim; ++c)
              o[static_cast<std::size_t>(c)] += p * vj[c];
          }
          for (float& x : o) x /= sum;
          lse.as<float>()[(b * g.heads + h) * g.seq + i] = mx + std::log(sum);
          store_span(out, (b * g.seq + i) * g.d_model + h * g.head_dim, g.head_dim, o.data());
        }
      }
    }
  }
  store_output_amax(out, out_amax);
}

void CpuBackend::attention_backward(const TensorView& qkv, const TensorView& out,
                                    const TensorView& lse, const TensorView& dout, int n_heads,
                                    int seq_len, const TensorView& dqkv, AmaxSlot dqkv_amax) {
  // The reference recomputes each probability row from q, k and lse, so it does not read `out`.
  const HeadGeometry g = check_attention_args(qkv, n_heads, seq_len, lse);
  check_activation(out, "attention out");
  check_shape(out, {qkv.shape[0], g.d_model}, "attention out");
  check_activation(dout, "attention dout");
  check_activation(dqkv, "attention dqkv");
  check_shape(dout, {qkv.shape[0], g.d_model}, "attention dout");
  check_shape(dqkv, qkv.shape, "attention dqkv");
  const float scale = 1.f / std::sqrt(static_cast<float>(g.head_dim));
  const auto head_elems = static_cast<std::size_t>(g.seq * g.head_dim);
  const auto hd = static_cast<std::size_t>(g.head_dim);
#pragma omp parallel
  {
    std::vector<float> q(head_elems), k(head_elems), v(head_elems), dout_h(head_elems);
    std::vector<float> dq(head_elems), dk(head_elems), dv(head_elems);
    std::vector<float> p(static_cast<std::size_t>(g.seq)), dp(static_cast<std::size_t>(g.seq));
#pragma omp for schedule(static) collapse(2)
    for (std::int64_t b = 0; b < g.batch; ++b) {
      for (std::int64_t h = 0; h < g.heads; ++h) {
        load_head(qkv, g, b, h, q.data(), k.data(), v.data());
        for (std::int64_t t = 0; t < g.seq; ++t) {
          load_span(dout, (b * g.seq + t) * g.d_model + h * g.head_dim, g.head_dim,
                    dout_h.data() + t * g.head_dim);
        }
        std::fill(dq.begin(), dq.end(), 0.f);
        std::fill(dk.begin(), dk.end(), 0.f);
        std::fill(dv.begin(), dv.end(), 0.f);
        for (std::int64_t i = 0; i < g.seq; ++i) {
          const float* qi = q.data() + i * g.head_dim;
          const float* doi = dout_h.data() + i * g.head_dim;
          const float row_lse = lse.as<const float>()[(b * g.heads + h) * g.seq + i];
          float rowdot = 0.f;  // sum_j p_j dp_j
          for (std::int64_t j = 0; j <= i; ++j) {
            const auto jj = static_cast<std::size_t>(j);
            p[jj] = std::exp(dot(qi, k.data() + j * g.head_dim, g.head_dim) * scale - row_lse);
            dp[jj] = dot(doi, v.data() + j * g.head_dim, g.head_dim);
            rowdot += p[jj] * dp[jj];
          }
          float* dqi = dq.data() + i * g.head_dim;
          for (std::int64_t j = 0; j <= i; ++j) {
            const auto jj = static_cast<std::size_t>(j);
            const float ds = p[jj] * (dp[jj] - rowdot) * scale;
            const float* kj = k.data() + j * g.head_dim;
            float* dkj = dk.data() + j * g.head_dim;
            float* dvj = dv.data() + j * g.head_dim;
            for (std::size_t c = 0; c < hd; ++c) {
              dqi[c] += ds * kj[c];
              dkj[c] += ds * qi[c];
              dvj[c] += p[jj] * doi[c];
            }
          }
        }
        for (std::int64_t t = 0; t < g.seq; ++t) {
          const std::int64_t base = (b * g.seq + t) * 3 * g.d_model + h * g.head_dim;
          store_span(dqkv, base, g.head_dim, dq.data() + t * g.head_dim);
          store_span(dqkv, base + g.d_model, g.head_dim, dk.data() + t * g.head_dim);
          store_span(dqkv, base + 2 * g.d_model, g.head_dim, dv.data() + t * g.head_dim);
        }
      }
    }
  }
  store_output_amax(dqkv, dqkv_amax);
}

}  // namespace fp8lab::cpu
