// One step of the two-pass dK/dV kernel (cuda_attention_backward.cu): one warp's 16 key rows
// against one query tile. With P = exp(S * scale - lse) and Di = rowsum(dO_i * O_i):
//   dV += P^T dO,  dP = dO V^T,  dS = P * (dP - Di),  dK += dS^T Q  (scale applied on store).
// The warp computes the transposed tiles S^T, P^T, dP^T, dS^T ([16 keys x Br queries], MMA
// accumulator layout), so P^T and dS^T feed the dV and dK MMAs straight from registers.
#pragma once

#include "cuda_attention/attention_tiles.cuh"

namespace fp8lab::cuda_ops {
namespace {

// The query side of one head as a key-tile CTA walks it: q and dO rows, lse and Di values.
struct QuerySide {
  const bf16_bits* q;
  const bf16_bits* dout;
  const float* lse;
  const float* row_dot;
  std::int64_t q_stride, do_stride;  // elements between tokens
};

__device__ __forceinline__ QuerySide query_side(const bf16_bits* qkv, const bf16_bits* dout,
                                                const float* lse, const float* row_dot,
                                                const HeadView& hv, int bh, int seq_len,
                                                std::int64_t d_model) {
  const std::int64_t stats = static_cast<std::int64_t>(bh) * seq_len;
  return {qkv + hv.qkv_head, dout + hv.out_head, lse + stats,
          row_dot + stats,   hv.qkv_stride,      d_model};
}

// The head of a key-tile CTA (the cp.async dK/dV kernels) and its query side.
struct KeyTileHead {
  HeadView hv;
  std::int64_t d_model;
  QuerySide qs;
};

template <int HD>
__device__ __forceinline__ KeyTileHead key_tile_head(const bf16_bits* qkv, const bf16_bits* dout,
                                                     const float* lse, const float* row_dot, int bh,
                                                     int seq_len, int n_heads) {
  const HeadView hv = head_view(bh, seq_len, n_heads, HD);
  const std::int64_t d_model = static_cast<std::int64_t>(n_heads) * HD;
  return {hv, d_model, query_side(qkv, dout, lse, row_dot, hv, bh, seq_len, d_model)};
}

// A operands of S^T = K Q^T and dP^T = V dO^T: the warp's 16 rows of the K and V tiles, read
// from shared memory at every use.
template <int HD, int S>
struct KeyRowsInSmem {
  const bf16_bits* k_rows;  // the warp's first row in the K tile
  const bf16_bits* v_rows;
  __device__ __forceinline__ void bind(const bf16_bits* k, const bf16_bits* v, int /*lane*/) {
    k_rows = k, v_rows = v;
  }
  template <int NT>
  __device__ __forceinline__ void scores_t(float (&acc)[NT][4], const bf16_bits* q_tile,
                                           int lane) const {
    mma_a_smem_b_nk<S, HD / 16, NT>(acc, k_rows, 0, q_tile, lane);
  }
  template <int NT>
  __device__ __forceinline__ void dprobs_t(float (&acc)[NT][4], const bf16_bits* do_tile,
                                           int lane) const {
    mma_a_smem_b_nk<S, HD / 16, NT>(acc, v_rows, 0, do_tile, lane);
  }
};

// The same operands held in registers (HD / 4 registers each for K and V), loaded once per CTA:
// saves a quarter of the shared-memory reads of S^T and dP^T where registers allow it.
template <int HD, int S>
struct KeyRowsInRegs {
  std::uint32_t k[HD / 16][4], v[HD / 16][4];
  // Reads the fragments: the K and V tiles must have landed.
  __device__ __forceinline__ void bind(const bf16_bits* k_rows, const bf16_bits* v_rows, int lane) {
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      ldmatrix_x4(k[kk], a_frag_ptr<S>(k_rows, 0, kk * 16, lane));
      ldmatrix_x4(v[kk], a_frag_ptr<S>(v_rows, 0, kk * 16, lane));
    }
  }
  template <int NT>
  __device__ __forceinline__ void scores_t(float (&acc)[NT][4], const bf16_bits* q_tile,
                                           int lane) const {
    mma_a_regs_b_nk<S, HD / 16, NT>(acc, k, q_tile, lane);
  }
  template <int NT>
  __device__ __forceinline__ void dprobs_t(float (&acc)[NT][4], const bf16_bits* do_tile,
                                           int lane) const {
    mma_a_regs_b_nk<S, HD / 16, NT>(acc, v, do_tile, lane);
  }
};

// Keys key_w0..key_w0+15 against queries q0..q0+Br-1 (tiles q, dO and the rows' lse and Di in
// shared memory): dv += P^T dO, dk += dS^T Q, and dS^T (fp32) left in `ds` for the caller.
// Masked entries (key > query, query >= seq_len) get P = 0, hence dS = 0.
template <int HD, int S, int Br, typename KeyRows>
__device__ __forceinline__ void backward_key_rows_step(
    float (&dk)[HD / 8][4], float (&dv)[HD / 8][4], float (&ds)[Br / 8][4], const KeyRows& keys,
    const bf16_bits* q_tile, const bf16_bits* do_tile, const float* lse_tile, const float* dot_tile,
    int q0, int key_w0, int seq_len, float scale_log2, int lane) {
  const int g = lane >> 2, c = lane & 3;
  const bool need_mask = q0 < key_w0 + 15 || q0 + Br > seq_len;
#pragma unroll
  for (int nt = 0; nt < Br / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) ds[nt][e] = 0.f;
  keys.template scores_t<Br / 8>(ds, q_tile, lane);  // S^T, then P^T in place
  probs(
      ds, scale_log2, need_mask,
      [&](int nt, int e) {
        const int query = q0 + nt * 8 + 2 * c + (e & 1);
        return query < key_w0 + g + (e >> 1) * 8 || query >= seq_len;
      },
      [&](int nt, int e) { return lse_tile[nt * 8 + 2 * c + (e & 1)] * kLog2e; });
  mma_p_b_kn<S, Br / 8, HD / 8>(dv, ds, do_tile, lane);  // dV += P^T dO

  float dpt[Br / 8][4] = {};  // dP^T = V dO^T
  keys.template dprobs_t<Br / 8>(dpt, do_tile, lane);
#pragma unroll
  for (int nt = 0; nt < Br / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) ds[nt][e] *= dpt[nt][e] - dot_tile[nt * 8 + 2 * c + (e & 1)];
  mma_p_b_kn<S, Br / 8, HD / 8>(dk, ds, q_tile, lane);  // dK += dS^T Q
}

// The shared-memory tiles of a key-tile CTA, carved from `smem` in this order: K and V [Bc][S],
// Q and dO double-buffered [2][Br][S] (bf16), lse and Di [2][Br] (f32).
template <int HD, int Br, int Bc, int THREADS>
struct KeyTileBuffers {
  static constexpr int S = HD + 8;
  static constexpr int kBytes = (2 * Bc + 4 * Br) * S * 2 + 4 * Br * 4;
  bf16_bits* k;
  bf16_bits* v;
  bf16_bits* q;
  bf16_bits* dout;
  float* lse;
  float* dot;

  __device__ __forceinline__ explicit KeyTileBuffers(void* smem)
      : k(static_cast<bf16_bits*>(smem)),
        v(k + Bc * S),
        q(v + Bc * S),
        dout(q + 2 * Br * S),
        lse(reinterpret_cast<float*>(dout + 2 * Br * S)),
        dot(lse + 2 * Br) {}

  // K and V rows k0.. of the head (cp.async; the caller commits).
  __device__ __forceinline__ void load_keys(const QuerySide& src, std::int64_t d_model, int k0,
                                            int seq_len) {
    load_tile<HD, S, Bc, THREADS>(k, src.q + d_model, src.q_stride, k0, seq_len);
    load_tile<HD, S, Bc, THREADS>(v, src.q + 2 * d_model, src.q_stride, k0, seq_len);
  }
  // Query tile i (rows i * Br..) into buffer `buf` (cp.async; the caller commits).
  __device__ __forceinline__ void load_queries(const QuerySide& src, int i, int buf, int seq_len) {
    load_tile<HD, S, Br, THREADS>(q + buf * Br * S, src.q, src.q_stride, i * Br, seq_len);
    load_tile<HD, S, Br, THREADS>(dout + buf * Br * S, src.dout, src.do_stride, i * Br, seq_len);
    load_row_stats<Br, THREADS>(lse + buf * Br, src.lse, i * Br, seq_len);
    load_row_stats<Br, THREADS>(dot + buf * Br, src.row_dot, i * Br, seq_len);
  }

  // dK (times the softmax scale) and dV of a warp's 16 keys (key_w0..) into the dK and dV rows
  // of dqkv, staged through the warp's own K and V rows, which no warp may read any more.
  // Returns the largest amax key this lane stored (store_warp_rows).
  __device__ __forceinline__ std::uint32_t store_key_grads(
      const float (&dk)[HD / 8][4], const float (&dv)[HD / 8][4], float scale, bf16_bits* dk_head,
      std::int64_t d_model, std::int64_t stride, int warp, int key_w0, int seq_len, int lane) {
    const float k_mul[2] = {scale, scale}, v_mul[2] = {1.f, 1.f};
    const std::uint32_t k_key = store_warp_rows<HD, S, HD / 8>(
        dk, k_mul, k + warp * 16 * S, dk_head, stride, key_w0, seq_len, lane);
    const std::uint32_t v_key = store_warp_rows<HD, S, HD / 8>(
        dv, v_mul, v + warp * 16 * S, dk_head + d_model, stride, key_w0, seq_len, lane);
    return max(k_key, v_key);
  }

  // dv += P^T dO and dk += dS^T Q for a warp's keys against the query tile in buffer `buf`;
  // dS^T left in ds (backward_key_rows_step).
  template <typename KeyRows>
  __device__ __forceinline__ void key_rows_step(float (&dk)[HD / 8][4], float (&dv)[HD / 8][4],
                                                float (&ds)[Br / 8][4], const KeyRows& keys,
                                                int buf, int q0, int key_w0, int seq_len,
                                                float scale_log2, int lane) const {
    backward_key_rows_step<HD, S, Br>(dk, dv, ds, keys, q + buf * Br * S, dout + buf * Br * S,
                                      lse + buf * Br, dot + buf * Br, q0, key_w0, seq_len,
                                      scale_log2, lane);
  }
};

}  // namespace
}  // namespace fp8lab::cuda_ops
