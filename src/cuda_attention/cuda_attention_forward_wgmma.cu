// The causal attention forward on Hopper's warpgroup MMA (wgmma), head dims 64 and 128: the
// FlashAttention-2 forward of cuda_attention_forward.cu (online softmax over key tiles, P
// rounded to bf16 for P V, lse kept for the backward) with both tile products as wgmma on
// 64-row warpgroup tiles:
//   S = Q K^T      (A = the warpgroup's 64 query rows, B = the key tile: both from shared
//                   memory, K-major)
//   O += P V       (A = P from registers, B = the value tile N-major)
// A CTA is two warpgroups (128 query rows); it walks key tiles of 64 from 0 to the diagonal,
// double-buffered by cp.async into the sw128 layout (attention_wgmma_tiles.cuh). Each step
// waits for its products before the loop's back edge (ptxas serialises every wgmma of a kernel
// that keeps a group in flight over it: cuda_attention_backward_wgmma.cu); the CTA's two
// warpgroups, and the two CTAs an SM holds, overlap one another's softmax with their MMAs.
// The step and the epilogue are attention_forward_step.cuh's, shared with the TMA-fed kernel
// (cuda_attention_forward_ws.cu).
#include "cuda_attention/attention_kernels.hpp"
#include "cuda_attention/attention_forward_step.cuh"

namespace fp8lab::cuda_ops {
namespace {

template <int HD>
struct WgFwdShape : QueryCtaSmem<HD, 2 * kWgRows, 1, kBuffers, 0, 8> {  // Q own; K, V walked
  // Two CTAs per SM where the registers allow it (hd 64: O and S take 64 of them).
  static constexpr int kMinBlocks = HD <= 64 ? 2 : 1;
};

template <int HD>
__global__ void __launch_bounds__(kWgThreads, WgFwdShape<HD>::kMinBlocks)
    attention_forward_wgmma_kernel(FP8LAB_ATTENTION_FORWARD_PARAMS(const bf16_bits* __restrict__)) {
  using C = WgFwdShape<HD>;
  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const auto [tiles, head, tid, lane, rows] =
      start_query_cta<HD, C>(qkv, nullptr, bh, seq_len, n_heads);
  const auto [wg, warp, g, c, row_wg0, row_w0] = rows;
  const std::uint32_t a_q = smem_addr(tiles.q), a_k = smem_addr(tiles.k);
  const std::uint32_t a_v = smem_addr(tiles.v);
  float o[HD / 8][4] = {};
  // Rows g and g + 8 of the warp. Every processed walk starts at key tile 0, whose key 0 no row
  // masks, so the running max is finite from the first step on.
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

  walk_key_tiles<HD>(tiles, head, row_wg0, seq_len, [&](int buf, int k0) {
    wgmma_forward_step<HD, C::kBr>(a_q, wg, a_k + buf * C::kKeyTileBytes,
                                   a_v + buf * C::kKeyTileBytes, k0, row_wg0, row_w0, g, c,
                                   scale_log2, o, row_max, row_sum);
  });

  // Epilogue: O / rowsum -> out (staged per warp over the tiles), lse = max + log(sum).
  __syncthreads();  // every warpgroup is done with the tiles
  const std::uint32_t key = wgmma_forward_epilogue<HD, C::kS>(
      o, row_max, row_sum, tiles.stage(warp), out + head.hv.out_head, head.d_model,
      lse + static_cast<std::int64_t>(bh) * seq_len, row_w0, seq_len, lane, scale);
  out_amax(key);
}

template <int HD>
void launch_forward_wgmma(const void* qkv, void* out, float* lse, int batch, int seq_len,
                          int n_heads, cudaStream_t stream, AmaxOut amax) {
  using C = WgFwdShape<HD>;
  launch_attention_forward(
      TileLaunch{attention_forward_wgmma_kernel<HD>, C::kBr, kWgThreads, C::kSmemBytes},
      static_cast<const bf16_bits*>(qkv), out, lse, batch, seq_len, n_heads, HD, stream, amax);
}

}  // namespace

bool attention_forward_wgmma(const void* qkv, void* out, float* lse, int batch, int seq_len,
                             int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax) {
  if (head_dim == 64) {
    launch_forward_wgmma<64>(qkv, out, lse, batch, seq_len, n_heads, stream, amax);
    return true;
  }
  if (head_dim == 128) {
    launch_forward_wgmma<128>(qkv, out, lse, batch, seq_len, n_heads, stream, amax);
    return true;
  }
  return false;
}

}  // namespace fp8lab::cuda_ops
