// Pieces shared by the wgmma attention kernels (cuda_attention_{forward,backward}_wgmma.cu) and
// their warp-specialised twins (*_ws.cu): the CTA shape (two warpgroups, each owning 64 rows of
// the tile products), the shared-memory layouts of query-tile and key-tile CTAs, tile loads
// into the sw128 layout of wgmma.cuh, and the repacking of an accumulator tile as register A
// fragments.
#pragma once

#include "cuda_attention/attention_tiles.cuh"
#include "cuda_attention/wgmma.cuh"

namespace fp8lab::cuda_ops {
namespace {

// Two warpgroups per CTA share the walked tiles (one load for both). One warpgroup per CTA, free
// of the CTA barrier that keeps the two in step, measured no faster (docs/performance.md,
// "Attention").
constexpr int kWgThreads = 256;  // two warpgroups
constexpr int kWgRows = 64;      // rows of one warpgroup's tile products
constexpr int kWgStep = 64;      // columns of S per step (queries | keys)
constexpr int kBuffers = 2;      // walked tiles: the one read, the one landing

// ---- shared-memory layouts ------------------------------------------------------------------
// A CTA's dynamic shared memory holds its own tiles, then `Slots` copies (the buffers of the
// cp.async kernels, the stages of the TMA ones) of each walked tile, per-row statistics where
// the step needs them, and the TMA kernels' mbarriers (8 bytes each). Once the walk is done, the
// epilogue stages `StagedTiles` 16-row tiles of output over it, rows padded to HD + 8 bf16
// against bank conflicts. The launch asks for the larger of the two plus 1 KiB, so that
// smem_aligned_1024 can align the base for the sw128 panels.
template <int HD, int Barriers, int StagedTiles, int LayoutEnd>
struct CtaSmemSize {
  static constexpr int kLayoutBytes = LayoutEnd + Barriers * 8;
  static constexpr int kS = HD + 8;
  static constexpr int kStageBytes = StagedTiles * 16 * kS * 2;
  static constexpr int kSmemBytes =
      (kLayoutBytes > kStageBytes ? kLayoutBytes : kStageBytes) + 1024;
  static_assert(Barriers == 0 || kStageBytes <= LayoutEnd,
                "the epilogue staging must not reach the barriers");
};

// A query-tile CTA (the forward; the backward's dQ): `Rows` queries of Q (and of dO when
// OwnTiles is 2), then K[Slots] and V[Slots], 64 keys a step.
template <int HD, int Rows, int OwnTiles, int Slots>
struct QueryCtaOffsets {
  static constexpr int kBr = Rows;     // queries per CTA
  static constexpr int kBc = kWgStep;  // keys per step
  static constexpr int kQueryTileBytes = kBr * HD * 2;
  static constexpr int kKeyTileBytes = kBc * HD * 2;
  static constexpr bool kHoldsDo = OwnTiles == 2;
  static constexpr int kOffDo = kQueryTileBytes;
  static constexpr int kOffK = OwnTiles * kQueryTileBytes;
  static constexpr int kOffV = kOffK + Slots * kKeyTileBytes;
  static constexpr int kOffBars = kOffV + Slots * kKeyTileBytes;
};
template <int HD, int Rows, int OwnTiles, int Slots, int Barriers, int StagedTiles>
struct QueryCtaSmem
    : QueryCtaOffsets<HD, Rows, OwnTiles, Slots>,
      CtaSmemSize<HD, Barriers, StagedTiles, QueryCtaOffsets<HD, Rows, OwnTiles, Slots>::kOffBars> {
};

// A key-tile CTA (the backward's dK/dV): 128 keys of K and V, then Q[Slots], dO[Slots] of 64
// queries a step and their lse[Slots][64] and Di[Slots][64] (f32); two 16-row output tiles (dK,
// dV) per warp in the epilogue.
template <int HD, int Slots>
struct KeyCtaOffsets {
  static constexpr int kSlots = Slots;
  static constexpr int kBc = 2 * kWgRows;  // keys per CTA
  static constexpr int kBr = kWgStep;      // queries per step
  static constexpr int kKeyTileBytes = kBc * HD * 2;
  static constexpr int kQueryTileBytes = kBr * HD * 2;
  static constexpr int kOffV = kKeyTileBytes;
  static constexpr int kOffQ = 2 * kKeyTileBytes;
  static constexpr int kOffDo = kOffQ + Slots * kQueryTileBytes;
  static constexpr int kOffStats = kOffDo + Slots * kQueryTileBytes;
  static constexpr int kOffBars = kOffStats + 2 * Slots * kBr * 4;
};
template <int HD, int Slots, int Barriers>
struct KeyCtaSmem : KeyCtaOffsets<HD, Slots>,
                    CtaSmemSize<HD, Barriers, 16, KeyCtaOffsets<HD, Slots>::kOffBars> {};

// The tiles of a key-tile CTA's shared memory (KeyCtaSmem C), as pointers.
template <class C>
struct KeyCtaTiles {
  bf16_bits *k, *v, *q, *dout;
  float *lse, *dot;
  __device__ __forceinline__ explicit KeyCtaTiles(unsigned char* smem)
      : k(reinterpret_cast<bf16_bits*>(smem)),
        v(reinterpret_cast<bf16_bits*>(smem + C::kOffV)),
        q(reinterpret_cast<bf16_bits*>(smem + C::kOffQ)),
        dout(reinterpret_cast<bf16_bits*>(smem + C::kOffDo)),
        lse(reinterpret_cast<float*>(smem + C::kOffStats)),
        dot(lse + C::kSlots * C::kBr) {}
  // The epilogue's 16-row staging tile `i` (rows of C::kS), over the tiles from K on.
  __device__ __forceinline__ bf16_bits* stage(int i) const { return k + i * 16 * C::kS; }
};

// The tiles of a query-tile CTA's shared memory (QueryCtaSmem C), as pointers; dout only where
// the CTA holds dO.
template <class C>
struct QueryCtaTiles {
  bf16_bits *q, *dout, *k, *v;
  __device__ __forceinline__ explicit QueryCtaTiles(unsigned char* smem)
      : q(reinterpret_cast<bf16_bits*>(smem)),
        dout(reinterpret_cast<bf16_bits*>(smem + C::kOffDo)),
        k(reinterpret_cast<bf16_bits*>(smem + C::kOffK)),
        v(reinterpret_cast<bf16_bits*>(smem + C::kOffV)) {}
  // The epilogue's 16-row staging tile `i` (rows of C::kS), over the tiles from Q on.
  __device__ __forceinline__ bf16_bits* stage(int i) const { return q + i * 16 * C::kS; }
};

// A thread's part of the tile products. The warpgroups own kWgRows rows each of the CTA's tile
// (rows row0.. of the head): warpgroup wg those from row_wg0, warp `warp` 16 of them from row_w0;
// the lane holds accumulator rows g and g + 8, column pair c (wgmma.cuh).
struct WgRows {
  int wg, warp, g, c, row_wg0, row_w0;
};

// Thread `t` of the threads that own rows (the whole CTA of the cp.async kernels, the consumers
// of the TMA ones), lane `lane`. wg is broadcast from lane 0 so that the compiler knows it is the
// same across the warp (CUTLASS does the same): the wgmma descriptors built from it can then
// live in uniform registers instead of being computed per thread and moved over (R2UR) for
// every wgmma.
__device__ __forceinline__ WgRows wg_rows(int t, int lane, int row0) {
  const int wg = __shfl_sync(0xFFFFFFFFu, t / 128, 0), warp = t / 32;
  const int row_wg0 = row0 + wg * kWgRows;
  return {wg, warp, lane >> 2, lane & 3, row_wg0, row_wg0 + (warp % 4) * 16};
}

// Rows row0.. of one head -> an sw128-panel tile of ROWS x HD (wgmma.cuh); rows >= seq_len
// are zero-filled (load_tile_chunks; the caller commits).
template <int HD, int ROWS>
__device__ __forceinline__ void load_tile_sw128(bf16_bits* tile, const bf16_bits* head,
                                                std::int64_t stride, int row0, int seq_len) {
  load_tile_chunks<HD, ROWS, kWgThreads>(tile, head, stride, row0, seq_len,
                                         [](int r, int col) { return sw128_offset(ROWS, r, col); });
}

// The CTA's dynamic shared memory rounded up to the 1024-byte alignment the swizzle needs (the
// launches ask for 1 KiB more than the layout).
__device__ __forceinline__ unsigned char* smem_aligned_1024() {
  extern __shared__ uint4 smem_raw[];
  const std::uint32_t pad = (1024u - (smem_addr(smem_raw) & 1023u)) & 1023u;
  return reinterpret_cast<unsigned char*>(smem_raw) + pad;
}

// ---- the cp.async walk of a query-tile CTA ----------------------------------------------------

// Key tile j of the head -> buffer `buf` of K and V (the caller commits).
template <int HD, class C>
__device__ __forceinline__ void load_key_tile(const QueryCtaTiles<C>& tiles,
                                              const QueryTileHead& head, int j, int buf,
                                              int seq_len) {
  constexpr int Bc = C::kBc;
  load_tile_sw128<HD, Bc>(tiles.k + buf * Bc * HD, head.k, head.hv.qkv_stride, j * Bc, seq_len);
  load_tile_sw128<HD, Bc>(tiles.v + buf * Bc * HD, head.v, head.hv.qkv_stride, j * Bc, seq_len);
}

// A cp.async query-tile CTA (the wgmma forward and dQ kernels) past the (batch, head) check: its
// tiles, its head, and this thread: its index, lane and rows (WgRows).
template <class C>
struct WgQueryCta {
  QueryCtaTiles<C> tiles;
  QueryTileHead head;
  int tid, lane;
  WgRows rows;
};

// The CTA's start: its query rows of q (and of dout where the layout holds dO; the forward
// passes nullptr) and key tile 0 loading as one cp.async group.
template <int HD, class C>
__device__ __forceinline__ WgQueryCta<C> start_query_cta(const bf16_bits* qkv,
                                                         const bf16_bits* dout, int bh, int seq_len,
                                                         int n_heads) {
  const QueryCtaTiles<C> tiles(smem_aligned_1024());
  const QueryTileHead head = query_tile_head<HD, C::kBr, C::kBc>(qkv, bh, seq_len, n_heads);
  load_tile_sw128<HD, C::kBr>(tiles.q, head.q, head.hv.qkv_stride, head.q0, seq_len);
  if constexpr (C::kHoldsDo)
    load_tile_sw128<HD, C::kBr>(tiles.dout, dout + head.hv.out_head, head.d_model, head.q0,
                                seq_len);
  load_key_tile<HD>(tiles, head, 0, 0, seq_len);
  cp_async_commit();
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32;
  return {tiles, head, tid, lane, wg_rows(tid, lane, head.q0)};
}

// The walk over the key tiles up to the diagonal, kBuffers deep (the caller has loaded tile 0
// into buffer 0): each step waits for tile j, starts tile j + 1 into the other buffer, and
// hands step(buf, k0) the tile when a row of this warpgroup (from row_wg0) sees its keys. The
// whole CTA walks every tile: the barrier keeps both warpgroups at the same buffer.
template <int HD, class C, class Step>
__device__ __forceinline__ void walk_key_tiles(const QueryCtaTiles<C>& tiles,
                                               const QueryTileHead& head, int row_wg0, int seq_len,
                                               Step&& step) {
  for (int j = 0; j < head.n_key_tiles; ++j) {
    const int buf = j % kBuffers;
    cp_async_wait_all();
    fence_proxy_async_smem();
    __syncthreads();  // tile j landed; nobody reads the buffer refilled below any more
    if (j + 1 < head.n_key_tiles) {
      load_key_tile<HD>(tiles, head, j + 1, (buf + 1) % kBuffers, seq_len);
      cp_async_commit();
    }
    const int k0 = j * C::kBc;
    if (row_wg0 >= seq_len || k0 > row_wg0 + kWgRows - 1) continue;  // no row of ours sees it
    step(buf, k0);
  }
}

// A [64 x 64] accumulator tile rounded to bf16 as four m64k16 A fragments: two accumulator blocks
// of 8 columns make one fragment of 16 k (wgmma.cuh).
__device__ __forceinline__ void pack_a_fragments(const float (&v)[8][4], std::uint32_t (&a)[4][4]) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    a[kk][0] = pack_bf16(v[2 * kk][0], v[2 * kk][1]);
    a[kk][1] = pack_bf16(v[2 * kk][2], v[2 * kk][3]);
    a[kk][2] = pack_bf16(v[2 * kk + 1][0], v[2 * kk + 1][1]);
    a[kk][3] = pack_bf16(v[2 * kk + 1][2], v[2 * kk + 1][3]);
  }
}

// d += A B over one step (K = kWgStep): A the four m64k16 fragments of pack_a_fragments, B the
// kWgStep-row sw128 tile at b_tile, N-major. Fenced and committed as one group; the caller waits.
template <int N>
__device__ __forceinline__ void wgmma_rs_step_product(float (&d)[N / 8][4],
                                                      const std::uint32_t (&a)[4][4],
                                                      std::uint32_t b_tile) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kWgStep / 16; ++kk)
    wgmma_rs_bmn<N>(d, a[kk], sw128_desc_nmajor(b_tile, kWgStep, kk), 1);
  wgmma_commit();
}

}  // namespace
}  // namespace fp8lab::cuda_ops
