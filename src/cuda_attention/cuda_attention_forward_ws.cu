// The causal attention forward at head dim 128 with warp-specialised loads: the wgmma kernel's
// step and epilogue (attention_forward_step.cuh, shared with cuda_attention_forward_wgmma.cu:
// the same bits), with its tiles brought in by the TMA unit instead of by every thread's
// cp.async, and handed over through mbarriers instead of a CTA barrier per step.
//
// Why (Nsight Compute; docs/performance.md, "Attention"): at hd 128 the wgmma forward holds 8
// warps per SM and waits; the CTA barrier of each step is its largest stall (1.43 of 5.55
// cycles per issued instruction), ahead of the softmax's dependent arithmetic, while the
// tensor pipe runs 36% of the time.
//
// The CTA: warpgroup 0 is the producer (one thread issues every load), warpgroups 1 and 2 are
// the consumers, each owning 64 of the CTA's 128 query rows as in the wgmma kernel. Key and
// value tiles of 64 rows go through a ring of kStages stages:
//   full[s]:  the producer's expect_tx arrival + the TMA bytes of K and V;
//   empty[s]: every consumer thread arrives once it is done with the stage (its products have
//             retired), and the producer waits for that before refilling the stage.
// Every consumer waits for every tile, also the ones it skips (its rows all precede the keys):
// an early "empty" arrival could otherwise count towards the stage's previous use.
// The tensor map is 3-D over qkv [B][T][3 H hd], box [1][64][64] with the 128-byte swizzle,
// which is exactly the sw128 panel layout of wgmma.cuh; rows past T are zero-filled.
#include "cuda_attention/attention_kernels.hpp"
#include "cuda_attention/attention_forward_step.cuh"
#include "cuda_attention/attention_ws_tiles.cuh"
#include "cuda_attention/tensor_map.hpp"

namespace fp8lab::cuda_ops {
namespace {

constexpr int kWsThreads = 384;  // producer warpgroup + two consumer warpgroups
constexpr int kStages = 3;       // K/V ring depth

// Q own; K, V walked through the ring; the barriers of WsBarriers.
template <int HD>
using WsShape = QueryCtaSmem<HD, 2 * kWgRows, 1, kStages, 1 + 2 * kStages, 8>;

template <int HD>
__global__ void __launch_bounds__(kWsThreads, 1) attention_forward_ws_kernel(
    FP8LAB_ATTENTION_FORWARD_PARAMS(const __grid_constant__ CUtensorMap)) {
  using C = WsShape<HD>;
  const int bh = block_bh();
  if (bh >= batch_heads) return;
  // The amax key of what this thread stored.
  const std::uint32_t key = run_ws_query_cta<HD, C, kStages, 0>(
      &qkv, nullptr, bh, n_heads, seq_len, 2 * 128, [&](const WsQueryCta<C, kStages>& cta) {
        // ---- consumers: the wgmma kernel's step, tiles from the ring -----------------------
        const auto& [tiles, bars, b, h, q0, n_tiles, tid, lane, d_model] = cta;
        const auto [wg, warp, g, c, row_wg0, row_w0] = wg_rows(tid - 128, lane, q0);
        const std::uint32_t a_q = smem_addr(tiles.q), a_k = smem_addr(tiles.k);
        const std::uint32_t a_v = smem_addr(tiles.v);
        float o[HD / 8][4] = {};
        float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
        mbarrier_wait(bars.own, 0);
        consume_key_tiles<C::kBc>(bars.ring, n_tiles, row_wg0, seq_len, [&](int s, int k0) {
          wgmma_forward_step<HD, C::kBr>(a_q, wg, a_k + s * C::kKeyTileBytes,
                                         a_v + s * C::kKeyTileBytes, k0, row_wg0, row_w0, g, c,
                                         scale_log2, o, row_max, row_sum);
        });

        // The wgmma kernel's epilogue, once every consumer is done with the tiles.
        asm volatile("bar.sync 1, 256;\n" ::: "memory");
        const HeadView hv = head_view(bh, seq_len, n_heads, HD);
        return wgmma_forward_epilogue<HD, C::kS>(
            o, row_max, row_sum, tiles.stage(warp), out + hv.out_head, d_model,
            lse + static_cast<std::int64_t>(bh) * seq_len, row_w0, seq_len, lane, scale);
      });
  out_amax(key);  // every thread of the CTA (the ticket protocol has a __syncthreads)
}

}  // namespace

bool attention_forward_ws(const void* qkv, void* out, float* lse, int batch, int seq_len,
                          int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax) {
  if (head_dim != 128) return false;
  constexpr int HD = 128;
  using C = WsShape<HD>;
  CUtensorMap map;
  if (!encode_token_tile_map(&map, qkv, 3ull * static_cast<std::uint64_t>(n_heads) * HD, seq_len,
                             batch))
    return false;
  launch_attention_forward(
      TileLaunch{attention_forward_ws_kernel<HD>, C::kBr, kWsThreads, C::kSmemBytes}, map, out, lse,
      batch, seq_len, n_heads, HD, stream, amax);
  return true;
}

}  // namespace fp8lab::cuda_ops
