// The causal attention backward on Hopper's warpgroup MMA (wgmma), head dims 64 and 128: the
// two-pass structure of cuda_attention_backward.cu (a dK/dV kernel over key tiles and a dQ
// kernel over query tiles, each output row summed by one warp in a fixed order: deterministic
// without float atomics), with every tile product a wgmma on 64-row warpgroup tiles instead of
// mma.sync on 16-row warp tiles. With P = exp(S * scale - lse) and Di = rowsum(dO_i * O_i):
//   dK/dV kernel (CTA = 128 keys, a warpgroup per 64; steps of 64 queries from the diagonal):
//     S^T = K Q^T, dP^T = V dO^T        (A, B from shared memory, both K-major)
//     P^T, dS^T = P^T * (dP^T - Di)     (registers, accumulator layout)
//     dV += P^T dO, dK += dS^T Q        (A = P^T, dS^T from registers, B = dO, Q N-major)
//   dQ kernel (CTA = 128 queries, a warpgroup per 64; steps of 64 keys up to the diagonal):
//     S = Q K^T, dP = dO V^T; dS = P * (dP - Di); dQ += dS K (B = K N-major)
// Tiles live in shared memory in the 128-byte-swizzled panel layout (wgmma.cuh), filled by
// cp.async one step ahead, so one copy of Q, dO and K serves both as the K-major B of S / dP and
// as the N-major B of dK / dV / dQ.
//
// Why wgmma: the mma.sync kernels are latency-bound at 8-12 warps per SM, re-reading every B
// fragment from shared memory per 16-row warp tile (Nsight Compute); wgmma reads each B tile
// once per 64 rows and runs asynchronously to the softmax arithmetic (docs/performance.md,
// "Attention").
//
// The steps and the dK/dV epilogue are attention_backward_wgmma_step.cuh's, shared with the
// warp-specialised kernels (cuda_attention_backward_ws.cu), which say how the steps overlap.
#include "cuda_attention/attention_backward_step.cuh"
#include "cuda_attention/attention_kernels.hpp"
#include "cuda_attention/attention_backward_wgmma_step.cuh"

namespace fp8lab::cuda_ops {
namespace {

// ---- dK, dV ----------------------------------------------------------------------------------

template <int HD>
using WgKvShape = KeyCtaSmem<HD, kBuffers, 0>;

template <int HD>
__global__ void __launch_bounds__(kWgThreads, 1) attention_backward_dkdv_wgmma_kernel(
    FP8LAB_ATTENTION_BACKWARD_PARAMS(const bf16_bits* __restrict__)) {
  using C = WgKvShape<HD>;
  constexpr int Br = C::kBr, Bc = C::kBc;
  const KeyCtaTiles<C> tiles(smem_aligned_1024());

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const int k0 = static_cast<int>(blockIdx.x) * Bc;  // low keys see the most queries: first
  const auto [hv, d_model, qs] = key_tile_head<HD>(qkv, dout, lse, row_dot, bh, seq_len, n_heads);
  const int i_begin = k0 / Br, i_end = (seq_len - 1) / Br + 1;
  const auto load_queries = [&](int i, int buf) {
    load_tile_sw128<HD, Br>(tiles.q + buf * Br * HD, qs.q, qs.q_stride, i * Br, seq_len);
    load_tile_sw128<HD, Br>(tiles.dout + buf * Br * HD, qs.dout, qs.do_stride, i * Br, seq_len);
    load_row_stats<Br, kWgThreads>(tiles.lse + buf * Br, qs.lse, i * Br, seq_len);
    load_row_stats<Br, kWgThreads>(tiles.dot + buf * Br, qs.row_dot, i * Br, seq_len);
  };
  load_tile_sw128<HD, Bc>(tiles.k, qs.q + d_model, qs.q_stride, k0, seq_len);
  load_tile_sw128<HD, Bc>(tiles.v, qs.q + 2 * d_model, qs.q_stride, k0, seq_len);
  load_queries(i_begin, 0);
  cp_async_commit();

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32;
  // This warpgroup's keys from key_wg0, this warp's from key_w0.
  const auto [wg, warp, g, c, key_wg0, key_w0] = wg_rows(tid, lane, k0);
  const std::uint32_t a_k = smem_addr(tiles.k), a_v = smem_addr(tiles.v);
  const std::uint32_t a_q = smem_addr(tiles.q), a_do = smem_addr(tiles.dout);
  float dk[HD / 8][4] = {}, dv[HD / 8][4] = {};

  for (int i = i_begin; i < i_end; ++i) {
    const int buf = (i - i_begin) % kBuffers;
    cp_async_wait_all();
    fence_proxy_async_smem();
    __syncthreads();  // tile i landed; nobody reads the buffer refilled below any more
    if (i + 1 < i_end) {
      load_queries(i + 1, (buf + 1) % kBuffers);
      cp_async_commit();
    }
    const int q0 = i * Br;
    if (key_wg0 >= seq_len || q0 + Br - 1 < key_wg0) continue;  // all queries precede our keys
    wgmma_dkdv_step<HD, Bc>(a_k, a_v, wg, a_q + buf * C::kQueryTileBytes,
                            a_do + buf * C::kQueryTileBytes, tiles.lse + buf * Br,
                            tiles.dot + buf * Br, q0, key_wg0, key_w0, g, c, seq_len, scale_log2,
                            dk, dv);
  }
  wgmma_fence_operands(dk);
  wgmma_fence_operands(dv);

  __syncthreads();  // every warpgroup is done with the tiles: the epilogue stages over them
  dqkv_amax(wgmma_dkdv_epilogue<HD, C::kS>(dk, dv, tiles.stage(2 * warp),
                                           dqkv + hv.qkv_head + d_model, hv.qkv_stride, d_model,
                                           key_w0, seq_len, lane, scale));
}

// ---- dQ ------------------------------------------------------------------------------------

template <int HD>
struct WgQShape : QueryCtaSmem<HD, 2 * kWgRows, 2, kBuffers, 0, 8> {  // Q, dO own; K, V walked
  // hd 64: two CTAs (16 warps) per SM to hide the per-step waits, if 128 registers suffice.
  static constexpr int kMinBlocks = HD <= 64 ? 2 : 1;
};

template <int HD>
__global__ void __launch_bounds__(kWgThreads, WgQShape<HD>::kMinBlocks)
    attention_backward_dq_wgmma_kernel(
        FP8LAB_ATTENTION_BACKWARD_PARAMS(const bf16_bits* __restrict__)) {
  using C = WgQShape<HD>;
  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const auto [tiles, head, tid, lane, rows] =
      start_query_cta<HD, C>(qkv, dout, bh, seq_len, n_heads);
  const HeadView& hv = head.hv;
  const auto [wg, warp, g, c, row_wg0, row_w0] = rows;
  float lse_log2[2], dot[2];  // this lane's rows g and g + 8
  lane_row_stats(lse, row_dot, bh, seq_len, row_w0, g, lse_log2, dot);
  const std::uint32_t a_q = smem_addr(tiles.q), a_do = smem_addr(tiles.dout);
  const std::uint32_t a_k = smem_addr(tiles.k), a_v = smem_addr(tiles.v);
  float dq[HD / 8][4] = {};

  walk_key_tiles<HD>(tiles, head, row_wg0, seq_len, [&](int buf, int k0) {
    wgmma_dq_step<HD, C::kBr>(a_q, a_do, wg, a_k + buf * C::kKeyTileBytes,
                              a_v + buf * C::kKeyTileBytes, k0, row_wg0, row_w0, g, c, scale_log2,
                              lse_log2, dot, dq);
  });
  wgmma_fence_operands(dq);

  __syncthreads();  // every warpgroup is done with the tiles: the epilogue stages over them
  dqkv_amax(store_dq_rows<HD, C::kS>(dq, scale, tiles.stage(warp), dqkv + hv.qkv_head,
                                     hv.qkv_stride, row_w0, seq_len, lane));
}

template <int HD>
void launch_wgmma(const bf16_bits* qkv, const float* lse, const bf16_bits* dout,
                  const float* row_dot, bf16_bits* dqkv, int batch, int seq_len, int n_heads,
                  cudaStream_t stream, AmaxOut amax) {
  using Kv = WgKvShape<HD>;
  using Q = WgQShape<HD>;
  launch_attention_backward(
      TileLaunch{attention_backward_dkdv_wgmma_kernel<HD>, Kv::kBc, kWgThreads, Kv::kSmemBytes},
      TileLaunch{attention_backward_dq_wgmma_kernel<HD>, Q::kBr, kWgThreads, Q::kSmemBytes}, qkv,
      lse, dout, row_dot, dqkv, batch, seq_len, n_heads, HD, stream, amax);
}

}  // namespace

bool attention_backward_wgmma(const void* qkv, const float* lse, const void* dout,
                              const float* row_dot, void* dqkv, int batch, int seq_len, int n_heads,
                              int head_dim, cudaStream_t stream, AmaxOut amax) {
  const auto* qkv_b = static_cast<const bf16_bits*>(qkv);
  const auto* dout_b = static_cast<const bf16_bits*>(dout);
  auto* dqkv_b = static_cast<bf16_bits*>(dqkv);
  if (head_dim == 64) {
    launch_wgmma<64>(qkv_b, lse, dout_b, row_dot, dqkv_b, batch, seq_len, n_heads, stream, amax);
    return true;
  }
  if (head_dim == 128) {
    launch_wgmma<128>(qkv_b, lse, dout_b, row_dot, dqkv_b, batch, seq_len, n_heads, stream, amax);
    return true;
  }
  return false;
}

}  // namespace fp8lab::cuda_ops
