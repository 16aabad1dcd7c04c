// The wgmma attention forward's per-warpgroup work, shared by its two kernels
// (cuda_attention_forward_wgmma.cu: cp.async tiles and a CTA barrier per step;
// cuda_attention_forward_ws.cu: TMA tiles through mbarrier stages). One body is what makes the
// two give the same bits: they differ only in how the tiles reach shared memory.
#pragma once

#include "cuda_attention/attention_wgmma_tiles.cuh"

namespace fp8lab::cuda_ops {
namespace {

// This warpgroup's (64 query rows from row_wg0; this warp's 16 from row_w0) step over the key
// tile of kWgStep keys from k0: S = Q K^T, the causal mask where the tile crosses the diagonal,
// the online softmax, O += P V. q_tile is the CTA's [BR x HD] query tile (this warpgroup's rows
// from wg * kWgRows), k_tile and v_tile the key and value tiles (sw128, K-major and N-major).
// Waits for its products before returning (nothing stays in flight over a loop's back edge:
// cuda_attention_backward_wgmma.cu says why).
template <int HD, int BR>
__device__ __forceinline__ void wgmma_forward_step(std::uint32_t q_tile, int wg,
                                                   std::uint32_t k_tile, std::uint32_t v_tile,
                                                   int k0, int row_wg0, int row_w0, int g, int c,
                                                   float scale_log2, float (&o)[HD / 8][4],
                                                   float (&row_max)[2], float (&row_sum)[2]) {
  constexpr int Bc = kWgStep;
  float s[8][4];  // raw scores q . k, then P: [64 queries x 64 keys]
  wgmma_fence();
  wgmma_ss_n64_product<HD>(s, q_tile, BR, wg * kWgRows, k_tile);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operands(s);

  if (k0 + Bc - 1 > row_wg0) {  // the tile crosses the diagonal of some row of ours
#pragma unroll
    for (int jj = 0; jj < 8; ++jj)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_w0 + g + (e >> 1) * 8;
        const int col = k0 + jj * 8 + 2 * c + (e & 1);
        if (col > row) s[jj][e] = -INFINITY;
      }
  }

  online_softmax_step(s, o, row_max, row_sum, scale_log2);  // attention_tiles.cuh

  std::uint32_t a_p[4][4];  // P rounded to bf16 (as FlashAttention-2 does)
  pack_a_fragments(s, a_p);
  wgmma_rs_step_product<HD>(o, a_p, v_tile);
  wgmma_wait<0>();  // nothing stays in flight over the loop's back edge
  wgmma_fence_operands(o);
}

// The epilogue, once every warpgroup of the CTA is done with the tiles (the caller's barrier):
// O / rowsum -> out_head rows from row_w0 (staged through this warp's `stage` rows of S bf16),
// lse_head[row] = max * scale + log(sum). Returns the amax key of what this lane stored.
template <int HD, int S>
__device__ __forceinline__ std::uint32_t wgmma_forward_epilogue(
    const float (&o)[HD / 8][4], const float (&row_max)[2], float (&row_sum)[2],
    bf16_bits* stage, bf16_bits* out_head, std::int64_t d_model, float* lse_head, int row_w0,
    int seq_len, int lane, float scale) {
  const int g = lane >> 2, c = lane & 3;
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = row_sum[r];
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
    row_sum[r] = sum;
    inv[r] = 1.f / sum;
  }
  const std::uint32_t key =
      store_warp_rows<HD, S, HD / 8>(o, inv, stage, out_head, d_model, row_w0, seq_len, lane);
  if (c == 0) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = row_w0 + g + 8 * r;
      if (row < seq_len) lse_head[row] = row_max[r] * scale + logf(row_sum[r]);
    }
  }
  return key;
}

}  // namespace
}  // namespace fp8lab::cuda_ops
