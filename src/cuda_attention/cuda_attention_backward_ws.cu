// The causal attention backward with warp-specialised loads, head dims 64 and 128: the wgmma
// backward's two passes (a dK/dV kernel over key tiles, a dQ kernel over query tiles; every
// output row summed by one warpgroup in a fixed order, no atomics) with their steps and
// epilogues (attention_backward_wgmma_step.cuh, shared with cuda_attention_backward_wgmma.cu:
// the same bits), their tiles brought in by the TMA unit instead of every thread's cp.async,
// and handed over through mbarriers instead of a CTA barrier per step. The forward's
// cuda_attention_forward_ws.cu did the same for the forward and took 19% off it.
//
// A CTA is 3 or 4 warpgroups. Warpgroup 0 is the producer: it gives its registers to the others
// (setmaxnreg, tma.cuh), and in its first warp one thread issues every tile load as TMA boxes.
// The other warpgroups are the consumers, each owning 64 of the CTA's rows as in the wgmma
// kernels: two at 240 registers (the wgmma dK/dV kernel needs up to 255 at hd 128), or, in the
// dQ kernel at hd 64, three at 160 (WsQShape says why).
// The walked tiles go through a ring of kStages stages:
//   full[s]:  the producer's arrivals + the TMA bytes of the stage's tiles;
//   empty[s]: every consumer thread arrives once it is done with the stage (its products have
//             retired), and the producer waits for that before refilling the stage.
// Every consumer waits for every stage, also the ones it skips (its rows and the stage's do not
// meet): an early "empty" arrival could otherwise count towards the stage's previous use.
// dK/dV: each step also needs the 64 queries' lse and Di. The producer warp's 32 lanes copy
// them into the stage (rows past T as 0, as the cp.async kernel's zero fill) and each arrives on
// full[s] (32 arrivals, one of them with the expected TMA bytes), which publishes their stores.
#include "cuda_attention/attention_backward_wgmma_step.cuh"
#include "cuda_attention/attention_kernels.hpp"
#include "cuda_attention/attention_ws_tiles.cuh"
#include "cuda_attention/tensor_map.hpp"

namespace fp8lab::cuda_ops {
namespace {

constexpr int kWsThreads = 384;     // producer warpgroup + two consumer warpgroups (dK/dV)
constexpr int kStages = 4;          // walked-tile ring depth
constexpr int kProducerRegs = 24;   // setmaxnreg: 24 + 2 * 240 = 3 * 168
constexpr int kConsumerRegs = 240;

// ---- dK, dV ----------------------------------------------------------------------------------

// K, V own; Q, dO, lse, Di walked through the ring; the barriers of WsBarriers.
template <int HD>
using WsKvShape = KeyCtaSmem<HD, kStages, 1 + 2 * kStages>;

template <int HD>
__global__ void __launch_bounds__(kWsThreads, 1) attention_backward_dkdv_ws_kernel(
    FP8LAB_ATTENTION_BACKWARD_PARAMS(const __grid_constant__ CUtensorMap)) {
  using C = WsKvShape<HD>;
  constexpr int Br = C::kBr, Bc = C::kBc;
  unsigned char* smem = smem_aligned_1024();
  const KeyCtaTiles<C> tiles(smem);
  const WsBarriers<kStages> bars(smem + C::kOffBars);
  const StageRing<kStages>& ring = bars.ring;

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const int b = bh / n_heads, h = bh % n_heads;
  const int k0 = static_cast<int>(blockIdx.x) * Bc;  // low keys see the most queries: first
  const int i_begin = k0 / Br, i_end = (seq_len - 1) / Br + 1;
  const auto [tid, lane, d_model] = ws_thread<HD>(bars, n_heads, 32, 2 * 128);
  std::uint32_t key = 0;  // the amax key of what this thread stored
  if (tid < 128) {
    // ---- producer: warp 0 fills the stages, lane 0 issues the TMA ----------------------------
    warpgroup_release_registers<kProducerRegs>();
    if (tid < 32) {
      if (lane == 0) {
        mbarrier_arrive_expect_tx(bars.own, 2 * C::kKeyTileBytes);
        tma_load_tile<HD, Bc>(tiles.k, &qkv, d_model + h * HD, k0, b, bars.own);
        tma_load_tile<HD, Bc>(tiles.v, &qkv, 2 * d_model + h * HD, k0, b, bars.own);
      }
      const std::int64_t stats = static_cast<std::int64_t>(bh) * seq_len;
      for (int i = i_begin; i < i_end; ++i) {
        const int n = i - i_begin, s = ring.stage(n);
        ring.wait_empty(n);
#pragma unroll
        for (int r = lane; r < Br; r += 32) {
          const int row = i * Br + r;
          tiles.lse[s * Br + r] = row < seq_len ? lse[stats + row] : 0.f;
          tiles.dot[s * Br + r] = row < seq_len ? row_dot[stats + row] : 0.f;
        }
        if (lane == 0) {
          mbarrier_arrive_expect_tx(ring.full_bar(n), 2 * C::kQueryTileBytes);
          tma_load_tile<HD, Br>(tiles.q + s * Br * HD, &qkv, h * HD, i * Br, b, ring.full_bar(n));
          tma_load_tile<HD, Br>(tiles.dout + s * Br * HD, &dout, h * HD, i * Br, b,
                                ring.full_bar(n));
        } else {
          mbarrier_arrive(ring.full_bar(n));  // publishes this lane's lse and Di
        }
      }
    }
  } else {
    // ---- consumers: the wgmma kernel's step, query tiles from the ring ----------------------
    warpgroup_claim_registers<kConsumerRegs>();
    // This warpgroup's keys from key_wg0, this warp's from key_w0.
    const auto [wg, warp, g, c, key_wg0, key_w0] = wg_rows(tid - 128, lane, k0);
    const std::uint32_t a_k = smem_addr(tiles.k), a_v = smem_addr(tiles.v);
    const std::uint32_t a_q = smem_addr(tiles.q), a_do = smem_addr(tiles.dout);
    float dk[HD / 8][4] = {}, dv[HD / 8][4] = {};
    mbarrier_wait(bars.own, 0);

    for (int i = i_begin; i < i_end; ++i) {
      const int n = i - i_begin, s = ring.stage(n);
      ring.wait_full(n);
      const int q0 = i * Br;
      if (key_wg0 < seq_len && q0 + Br - 1 >= key_wg0) {  // some query of the step sees our keys
        wgmma_dkdv_step<HD, Bc>(a_k, a_v, wg, a_q + s * C::kQueryTileBytes,
                                a_do + s * C::kQueryTileBytes, tiles.lse + s * Br,
                                tiles.dot + s * Br, q0, key_wg0, key_w0, g, c, seq_len, scale_log2,
                                dk, dv);
      }
      ring.release(n);  // this thread's products that read stage s have retired
    }
    wgmma_fence_operands(dk);
    wgmma_fence_operands(dv);

    // The wgmma kernel's epilogue, once every consumer is done with the tiles.
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    const HeadView hv = head_view(bh, seq_len, n_heads, HD);
    key =
        wgmma_dkdv_epilogue<HD, C::kS>(dk, dv, tiles.stage(2 * warp), dqkv + hv.qkv_head + d_model,
                                       hv.qkv_stride, d_model, key_w0, seq_len, lane, scale);
  }
  dqkv_amax(key);  // every thread of the CTA (the ticket protocol: __syncthreads)
}

// ---- dQ ------------------------------------------------------------------------------------

// Consumer warpgroups of the dQ kernel, each owning 64 query rows. hd 64: three, at 160
// registers (the CTA of 512 threads gets 128 each at entry; 24 + 3 * 160 <= 4 * 128), so that
// the SM holds 12 consumer warps: the wgmma dQ kernel runs 16 there, in two CTAs of 128
// registers, and two CTAs of this kernel would leave 112 (ptxas then spills and serialises the
// wgmma, C7512). Measured at gpt50m: 1.00 ms per layer against the wgmma kernel's 1.05 (Nsight
// Compute). hd 128: two, at 240, as the dK/dV kernel.
template <int HD>
constexpr int kDqConsumers = HD <= 64 ? 3 : 2;

// Q, dO own; K, V walked through the ring; the barriers of WsBarriers; each consumer warp
// stages one 16-row tile of dQ.
template <int HD>
struct WsQShape : QueryCtaSmem<HD, kDqConsumers<HD> * kWgRows, 2, kStages, 1 + 2 * kStages,
                               4 * kDqConsumers<HD>> {
  static constexpr int kConsumers = kDqConsumers<HD>;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kRegs = HD <= 64 ? 160 : kConsumerRegs;  // per consumer thread
};

template <int HD>
__global__ void __launch_bounds__(WsQShape<HD>::kThreads, 1) attention_backward_dq_ws_kernel(
    FP8LAB_ATTENTION_BACKWARD_PARAMS(const __grid_constant__ CUtensorMap)) {
  using C = WsQShape<HD>;
  const int bh = block_bh();
  if (bh >= batch_heads) return;
  // The amax key of what this thread stored.
  const std::uint32_t key = run_ws_query_cta<HD, C, kStages, kProducerRegs>(
      &qkv, &dout, bh, n_heads, seq_len, C::kConsumers * 128,
      [&](const WsQueryCta<C, kStages>& cta) {
        // ---- consumers: the wgmma kernel's step, key tiles from the ring ------------------------
        warpgroup_claim_registers<C::kRegs>();
        const auto& [tiles, bars, b, h, q0, n_tiles, tid, lane, d_model] = cta;
        const auto [wg, warp, g, c, row_wg0, row_w0] = wg_rows(tid - 128, lane, q0);
        float lse_log2[2], dot[2];  // this lane's rows g and g + 8
        lane_row_stats(lse, row_dot, bh, seq_len, row_w0, g, lse_log2, dot);
        const std::uint32_t a_q = smem_addr(tiles.q), a_do = smem_addr(tiles.dout);
        const std::uint32_t a_k = smem_addr(tiles.k), a_v = smem_addr(tiles.v);
        float dq[HD / 8][4] = {};
        mbarrier_wait(bars.own, 0);
        consume_key_tiles<C::kBc>(bars.ring, n_tiles, row_wg0, seq_len, [&](int s, int k0) {
          wgmma_dq_step<HD, C::kBr>(a_q, a_do, wg, a_k + s * C::kKeyTileBytes,
                                    a_v + s * C::kKeyTileBytes, k0, row_wg0, row_w0, g, c,
                                    scale_log2, lse_log2, dot, dq);
        });
        wgmma_fence_operands(dq);

        asm volatile("bar.sync 1, %0;\n" ::"r"(C::kConsumers * 128) : "memory");
        const HeadView hv = head_view(bh, seq_len, n_heads, HD);
        return store_dq_rows<HD, C::kS>(dq, scale, tiles.stage(warp), dqkv + hv.qkv_head,
                                        hv.qkv_stride, row_w0, seq_len, lane);
      });
  dqkv_amax(key);  // every thread of the CTA (the ticket protocol: __syncthreads)
}

template <int HD>
bool launch_ws(const void* qkv, const float* lse, const void* dout, const float* row_dot,
               bf16_bits* dqkv, int batch, int seq_len, int n_heads, cudaStream_t stream,
               AmaxOut amax) {
  const auto d_model = static_cast<std::uint64_t>(n_heads) * HD;
  CUtensorMap qkv_map, dout_map;
  if (!encode_token_tile_map(&qkv_map, qkv, 3 * d_model, seq_len, batch) ||
      !encode_token_tile_map(&dout_map, dout, d_model, seq_len, batch))
    return false;
  using Kv = WsKvShape<HD>;
  using Q = WsQShape<HD>;
  launch_attention_backward(
      TileLaunch{attention_backward_dkdv_ws_kernel<HD>, Kv::kBc, kWsThreads, Kv::kSmemBytes},
      TileLaunch{attention_backward_dq_ws_kernel<HD>, Q::kBr, Q::kThreads, Q::kSmemBytes}, qkv_map,
      lse, dout_map, row_dot, dqkv, batch, seq_len, n_heads, HD, stream, amax);
  return true;
}

}  // namespace

bool attention_backward_ws(const void* qkv, const float* lse, const void* dout,
                           const float* row_dot, void* dqkv, int batch, int seq_len, int n_heads,
                           int head_dim, cudaStream_t stream, AmaxOut amax) {
  auto* dqkv_b = static_cast<bf16_bits*>(dqkv);
  if (head_dim == 64)
    return launch_ws<64>(qkv, lse, dout, row_dot, dqkv_b, batch, seq_len, n_heads, stream, amax);
  if (head_dim == 128)
    return launch_ws<128>(qkv, lse, dout, row_dot, dqkv_b, batch, seq_len, n_heads, stream, amax);
  return false;
}

}  // namespace fp8lab::cuda_ops
