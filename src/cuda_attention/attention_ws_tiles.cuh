// Pieces shared by the warp-specialised attention kernels (cuda_attention_forward_ws.cu,
// cuda_attention_backward_ws.cu): the CTA's mbarriers, and the TMA walk of a query-tile CTA
// over its key tiles, from the producer's side and from the consumers'. Those files say how
// the producer and the consumers hand the stages over.
#pragma once

#include "cuda_attention/attention_wgmma_tiles.cuh"
#include "cuda_attention/tma.cuh"

namespace fp8lab::cuda_ops {
namespace {

static_assert(kWgStep == kTmaBoxRows, "one step of keys or queries is one TMA box of rows");

// The mbarriers at a layout's kOffBars: `own` for the tiles the CTA loads once (one arrival and
// their bytes), then full[STAGES] and empty[STAGES] of the walked tiles' ring.
template <int STAGES>
struct WsBarriers {
  std::uint64_t* own;
  StageRing<STAGES> ring;
  __device__ __forceinline__ explicit WsBarriers(unsigned char* at)
      : own(reinterpret_cast<std::uint64_t*>(at)), ring{own + 1, own + 1 + STAGES} {}
  // By every thread (tid: its index), before any use: thread 0 initialises, the CTA barrier
  // publishes.
  __device__ __forceinline__ void init(int tid, unsigned full_arrivals,
                                       unsigned empty_arrivals) const {
    if (tid == 0) {
      mbarrier_init(own, 1);
      ring.init(full_arrivals, empty_arrivals);
      mbarrier_init_fence();
    }
    __syncthreads();
  }
};

// A warp-specialised CTA's thread past the (batch, head) check: its index and lane, with the
// CTA's barriers initialised (full[s] expects full_arrivals, empty[s] empty_arrivals), and the
// columns of one part of qkv (d_model).
struct WsThread {
  int tid, lane, d_model;
};

template <int HD, int STAGES>
__device__ __forceinline__ WsThread ws_thread(const WsBarriers<STAGES>& bars, int n_heads,
                                              unsigned full_arrivals, unsigned empty_arrivals) {
  // lane before the barrier: computed after it, ptxas schedules the kernels' set-up otherwise.
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32;
  bars.init(tid, full_arrivals, empty_arrivals);
  return {tid, lane, n_heads * HD};
}

// Producer (one thread): key tiles 0..n_tiles-1 of head h of batch b (the token map of qkv,
// d_model columns per part) into the ring's stages of K and V.
template <int HD, class C, int STAGES>
__device__ __forceinline__ void tma_key_tiles(const QueryCtaTiles<C>& tiles,
                                              const StageRing<STAGES>& ring,
                                              const CUtensorMap* qkv_map, int d_model, int h, int b,
                                              int n_tiles) {
  constexpr int Bc = C::kBc;
  for (int j = 0; j < n_tiles; ++j) {
    const int s = ring.stage(j);
    ring.wait_empty(j);
    mbarrier_arrive_expect_tx(ring.full_bar(j), 2 * C::kKeyTileBytes);
    tma_load_tile<HD, Bc>(tiles.k + s * Bc * HD, qkv_map, d_model + h * HD, j * Bc, b,
                          ring.full_bar(j));
    tma_load_tile<HD, Bc>(tiles.v + s * Bc * HD, qkv_map, 2 * d_model + h * HD, j * Bc, b,
                          ring.full_bar(j));
  }
}

// A warp-specialised query-tile CTA (the forward at hd 128, the dQ kernel) past the (batch,
// head) check, as one of its threads sees it: the tiles and barriers in shared memory, batch b
// and head h, the first query row q0 and the key tiles it walks, and the thread's index, lane
// and the columns of one part of qkv (d_model).
template <class C, int STAGES>
struct WsQueryCta {
  QueryCtaTiles<C> tiles;
  WsBarriers<STAGES> bars;
  int b, h, q0, n_tiles;
  int tid, lane, d_model;
};

// Such a CTA's run. Warpgroup 0 produces (handing its registers over first when PRODUCER_REGS is
// not 0, tma.cuh): its thread 0 loads the CTA's own tiles (Q, and dO where the layout holds it)
// onto `own`, then walks the key tiles into the ring. The other warpgroups (`consumers` threads)
// run consume(cta), which returns the amax key of what the thread stored; the producer's is 0.
template <int HD, class C, int STAGES, int PRODUCER_REGS, class Consume>
__device__ __forceinline__ std::uint32_t run_ws_query_cta(const CUtensorMap* qkv,
                                                          const CUtensorMap* dout, int bh,
                                                          int n_heads, int seq_len,
                                                          unsigned consumers, Consume&& consume) {
  constexpr int Br = C::kBr, Bc = C::kBc;
  unsigned char* smem = smem_aligned_1024();
  const QueryCtaTiles<C> tiles(smem);
  const WsBarriers<STAGES> bars(smem + C::kOffBars);
  const int b = bh / n_heads, h = bh % n_heads;
  // Long rows first: the last query tiles, which walk the most keys, start first.
  const int q0 = query_tile_row0<Br>(), n_tiles = key_tiles_to_diagonal<Br, Bc>(q0, seq_len);
  const auto [tid, lane, d_model] = ws_thread<HD>(bars, n_heads, 1, consumers);
  std::uint32_t key = 0;
  if (tid < 128) {
    // ---- producer: one thread issues every load ------------------------------------------
    if constexpr (PRODUCER_REGS > 0) warpgroup_release_registers<PRODUCER_REGS>();
    if (tid == 0) {
      mbarrier_arrive_expect_tx(bars.own, (C::kHoldsDo ? 2 : 1) * C::kQueryTileBytes);
      tma_load_tile<HD, Br>(tiles.q, qkv, h * HD, q0, b, bars.own);
      if constexpr (C::kHoldsDo) tma_load_tile<HD, Br>(tiles.dout, dout, h * HD, q0, b, bars.own);
      tma_key_tiles<HD>(tiles, bars.ring, qkv, d_model, h, b, n_tiles);
    }
  } else {
    key = consume(WsQueryCta<C, STAGES>{tiles, bars, b, h, q0, n_tiles, tid, lane, d_model});
  }
  return key;
}

// Consumer: the walk over the n_tiles key tiles of BC keys from the ring, handing step(s, k0)
// stage s when a row of this warpgroup (from row_wg0) sees its keys. Every stage is waited for
// and released, also the skipped ones: an early release could count towards the stage's
// previous use.
template <int BC, int STAGES, class Step>
__device__ __forceinline__ void consume_key_tiles(const StageRing<STAGES>& ring, int n_tiles,
                                                  int row_wg0, int seq_len, Step&& step) {
  for (int j = 0; j < n_tiles; ++j) {
    const int s = ring.stage(j);
    ring.wait_full(j);
    const int k0 = j * BC;
    if (row_wg0 < seq_len && k0 <= row_wg0 + kWgRows - 1) step(s, k0);  // some row of ours sees it
    ring.release(j);  // this thread's products that read stage s have retired
  }
}

}  // namespace
}  // namespace fp8lab::cuda_ops
