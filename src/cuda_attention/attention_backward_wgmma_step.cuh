// The wgmma attention backward's per-warpgroup work, shared by its two pairs of kernels
// (cuda_attention_backward_wgmma.cu: cp.async tiles and a CTA barrier per step;
// cuda_attention_backward_ws.cu: TMA tiles through mbarrier stages). One body is what makes the
// two give the same bits: they differ only in how the tiles reach shared memory.
// With P = exp(S * scale - lse) and Di = rowsum(dO_i * O_i):
//   dK/dV step (a warpgroup's 64 keys against a step of 64 queries):
//     S^T = K Q^T, dP^T = V dO^T; P^T, dS^T = P^T * (dP^T - Di); dV += P^T dO, dK += dS^T Q
//   dQ step (a warpgroup's 64 queries against a step of 64 keys):
//     S = Q K^T, dP = dO V^T; dS = P * (dP - Di); dQ += dS K
// Overlap inside a warpgroup (wgmma groups complete in order): S and dP are committed as two
// groups, so the exponentials of P run while dP is still in the tensor cores, and (dK/dV) dS
// while dV is. Each step waits for all its products before returning: with a group still in
// flight over a loop's back edge, ptxas serialises every wgmma of the kernel (C7515, seen with
// -Xptxas -v), which costs more than that overlap would win.
#pragma once

#include "cuda_attention/attention_wgmma_tiles.cuh"

namespace fp8lab::cuda_ops {
namespace {

// The per-query statistic (lse or Di, a step's row in shared memory) of accumulator element e of
// block j in the dK/dV kernel's transposed tiles: queries 8j + 2c and 8j + 2c + 1 of this lane,
// read as one 8-byte pair (one shared load per block instead of two).
__device__ __forceinline__ float query_pair(const float* stat, int j, int c, int e) {
  const float2 pair = *reinterpret_cast<const float2*>(stat + j * 8 + 2 * c);
  return (e & 1) ? pair.y : pair.x;
}

// dS = P * (dP - Di) in place of dP, and its bf16 A fragments; dot(j, e) is the query's Di.
template <typename Dot>
__device__ __forceinline__ void dprobs(const float (&p)[8][4], float (&dp)[8][4],
                                       std::uint32_t (&a_ds)[4][4], Dot dot) {
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) dp[j][e] = p[j][e] * (dp[j][e] - dot(j, e));
  pack_a_fragments(dp, a_ds);
}

// This warpgroup's step of the dK/dV kernel: its 64 keys (from key_wg0; this warp's 16 from
// key_w0) of the CTA's [BC x HD] key and value tiles k_all, v_all, against the query step of
// kWgStep queries from q0 (q_tile, do_tile: sw128; lse_t, dot_t: the step's lse and Di rows).
template <int HD, int BC>
__device__ __forceinline__ void wgmma_dkdv_step(std::uint32_t k_all, std::uint32_t v_all, int wg,
                                                std::uint32_t q_tile, std::uint32_t do_tile,
                                                const float* lse_t, const float* dot_t, int q0,
                                                int key_wg0, int key_w0, int g, int c, int seq_len,
                                                float scale_log2, float (&dk)[HD / 8][4],
                                                float (&dv)[HD / 8][4]) {
  constexpr int Br = kWgStep;
  float st[8][4], dpt[8][4];  // S^T then P^T, dP^T then dS^T: [64 keys x 64 queries]
  wgmma_fence();
  wgmma_ss_n64_product<HD>(st, k_all, BC, wg * kWgRows, q_tile);
  wgmma_commit();
  wgmma_ss_n64_product<HD>(dpt, v_all, BC, wg * kWgRows, do_tile);
  wgmma_commit();
  wgmma_wait<1>();  // S^T done; dP^T may still run
  wgmma_fence_operands(st);

  // Masked: key > query (causal) or query >= seq_len.
  const bool need_mask = q0 < key_wg0 + kWgRows - 1 || q0 + Br > seq_len;
  float lse_log2[8][2];  // read once for both copies of the probabilities (masked, not)
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) lse_log2[j][e] = query_pair(lse_t, j, c, e) * kLog2e;
  probs(
      st, scale_log2, need_mask,
      [&](int j, int e) {
        const int query = q0 + j * 8 + 2 * c + (e & 1);
        const int key = key_w0 + g + (e >> 1) * 8;
        return query < key || query >= seq_len;
      },
      [&](int j, int e) { return lse_log2[j][e & 1]; });
  std::uint32_t a_p[4][4];
  pack_a_fragments(st, a_p);
  wgmma_rs_step_product<HD>(dv, a_p, do_tile);

  wgmma_wait<1>();  // dP^T done; dV may still run
  wgmma_fence_operands(dpt);
  std::uint32_t a_ds[4][4];
  dprobs(st, dpt, a_ds, [&](int j, int e) { return query_pair(dot_t, j, c, e); });
  wgmma_rs_step_product<HD>(dk, a_ds, q_tile);
  wgmma_wait<0>();            // nothing stays in flight over the loop's back edge (see the top)
  wgmma_keep_fragments(a_p);  // dV read them while dS^T was computed
  wgmma_keep_fragments(a_ds);
}

// This warpgroup's step of the dQ kernel: its 64 queries (from row_wg0; this warp's 16 from
// row_w0) of the CTA's [BR x HD] query and dO tiles q_all, do_all, against the key step of
// kWgStep keys from k0 (k_tile, v_tile: sw128). lse_log2 and dot: this lane's rows g and g + 8.
template <int HD, int BR>
__device__ __forceinline__ void wgmma_dq_step(std::uint32_t q_all, std::uint32_t do_all, int wg,
                                              std::uint32_t k_tile, std::uint32_t v_tile, int k0,
                                              int row_wg0, int row_w0, int g, int c,
                                              float scale_log2, const float (&lse_log2)[2],
                                              const float (&dot)[2], float (&dq)[HD / 8][4]) {
  constexpr int Bc = kWgStep;
  float s[8][4], dp[8][4];  // S then P, dP then dS: [64 queries x 64 keys]
  wgmma_fence();
  wgmma_ss_n64_product<HD>(s, q_all, BR, wg * kWgRows, k_tile);
  wgmma_commit();
  wgmma_ss_n64_product<HD>(dp, do_all, BR, wg * kWgRows, v_tile);
  wgmma_commit();
  wgmma_wait<1>();  // S done; dP may still run
  wgmma_fence_operands(s);

  const bool need_mask = k0 + Bc - 1 > row_wg0;  // the diagonal tile(s)
  probs(
      s, scale_log2, need_mask,
      [&](int jj, int e) {
        const int row = row_w0 + g + (e >> 1) * 8;
        const int key = k0 + jj * 8 + 2 * c + (e & 1);
        return key > row;
      },
      [&](int, int e) { return lse_log2[e >> 1]; });
  wgmma_wait<0>();  // dP done
  wgmma_fence_operands(dp);
  std::uint32_t a_ds[4][4];
  dprobs(s, dp, a_ds, [&](int, int e) { return dot[e >> 1]; });
  wgmma_rs_step_product<HD>(dq, a_ds, k_tile);
  wgmma_wait<0>();  // nothing stays in flight over the loop's back edge (see the top)
}

// The dK/dV epilogue, once every warpgroup of the CTA is done with the tiles (the caller's
// barrier): dK * scale and dV -> this warp's 16 key rows from key_w0 of dqkv's K and V parts
// (dk_head: the head's first K element), staged through `stage` (2 x 16 rows of S bf16 of this
// warp's own). Returns the amax key of what this lane stored.
template <int HD, int S>
__device__ __forceinline__ std::uint32_t wgmma_dkdv_epilogue(
    const float (&dk)[HD / 8][4], const float (&dv)[HD / 8][4], bf16_bits* stage,
    bf16_bits* dk_head, std::int64_t qkv_stride, std::int64_t d_model, int key_w0, int seq_len,
    int lane, float scale) {
  const float k_mul[2] = {scale, scale}, v_mul[2] = {1.f, 1.f};
  const std::uint32_t k_key =
      store_warp_rows<HD, S, HD / 8>(dk, k_mul, stage, dk_head, qkv_stride, key_w0, seq_len, lane);
  const std::uint32_t v_key = store_warp_rows<HD, S, HD / 8>(
      dv, v_mul, stage + 16 * S, dk_head + d_model, qkv_stride, key_w0, seq_len, lane);
  return max(k_key, v_key);
}

}  // namespace
}  // namespace fp8lab::cuda_ops
