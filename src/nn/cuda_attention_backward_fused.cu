// FlashAttention-2-style causal attention backward for head dims 64 and 128: one CTA per 128 keys
// computes dK and dV and, for every query tile it visits, that key tile's share of dQ (dS K), so
// P and dS are computed once per (query tile, key tile) pair: 5 tile GEMMs per pair where the
// two-pass kernels (cuda_attention_backward.cu) need 7.
//
// A CTA (8 warps) owns key tile kt = keys 128 kt..128 kt + 127, 16 per warp, and walks the query
// tiles i of 64 rows from its diagonal (i = 2 kt) to the end. Per step:
//   1. each warp: S^T, P^T, dV, dP^T, dS^T, dK for its 16 keys (attention_backward_step.cuh),
//      then dS^T (rounded to bf16, as for the dK MMA) into shared memory;
//   2. each warp: its part of dQ_i(kt) = dS K over the CTA's 128 keys, a row-per-warp partition
//      (4 groups of 16 query rows x 2 halves of hd): A = dS from the staged dS^T (ldmatrix.trans),
//      B = the K tile;
//   3. dQ_i += dQ_i(kt) in an f32 accumulator in the workspace, in a fixed order (below).
//
// Deterministic dQ. Query tile i gets shares from key tiles kt = i/2, i/2 - 1, ..., 0, in that
// order, which is the order in which the CTAs reach tile i when all walk from their diagonal
// (CTA kt reaches it at its step i - 2 kt, two steps after CTA kt + 1). A counter per (b, h,
// query tile) in the workspace, zeroed by the Di kernel, counts the shares added; CTA kt adds its
// share once the counter reads i/2 - kt, by a plain load-add-store of f32 values (no float
// atomics), so dQ has the same bits run to run. The first share (kt = i/2) is stored without a
// load, so the accumulator needs no clearing; the last (kt = 0) is added in registers and written
// as bf16 times the softmax scale straight into dqkv, so no conversion pass runs.
//
// Synchronisation per step i. One thread (the sync thread) talks to the counters:
//   top barrier: Q/dO of tile i have landed and the sync thread has seen counter[i] ready, so
//     each thread starts cp.async of its own part of accumulator i (in flight during the step);
//     the sync thread reads counter[i + 1] (ld.acquire);
//   middle barrier (dS^T staged): the sync thread releases tile i - 1 (red.release; every
//     thread's stores precede it through the barriers), a step after those stores were issued;
//   end: each thread adds its part and stores it (or writes bf16); the sync thread spins until
//     counter[i + 1] is ready before the next top barrier.
// Visibility follows the cooperative-groups grid barrier's pattern: stores -> barrier ->
// red.release.gpu, and ld.acquire.gpu -> barrier -> loads; the accumulator is read and written
// through L2 only (cp.async.cg, st.global.cg).
//
// Dispatch order and progress. CTA kt waits only for CTAs of the same (b, h) with higher key
// tiles, so blockIdx.x = 0 is the highest key tile and (b, h) varies slowest: every CTA a CTA
// waits for has a smaller linear block index. We assume the hardware starts a grid's CTAs in
// increasing linear index order (FlashAttention-2/3's deterministic backward and single-pass
// scans assume the same; CUDA does not promise it). Then every CTA waited for is resident or
// finished, and the unfinished CTA with the smallest index waits for nobody unfinished, so it
// progresses; by induction all do, for any number of SMs or CTAs per SM.
//
// Budget (sm_90, 256 threads, one CTA per SM, up to 255 registers): the dK and dV accumulators
// take hd / 2 registers each (64 | 128 in all for hd 64 | 128), S^T..dS^T and dP^T 32 each
// (16 keys x 64 queries), the K and V A fragments kept in registers for hd 64 only (32), the dQ
// part hd / 4 (live after dS^T is staged, when dP^T is dead): peaks ~160 (hd 64) and ~192
// (hd 128) plus addressing. Shared memory: the accumulator tile 64 x hd f32, K and V
// [128][hd + 8], Q and dO [2][64][hd + 8], dS^T [128][72] bf16, lse and Di [2][64]: 107 KiB for
// hd 64, 187 KiB for hd 128.
//
// Producer-fused amax (AmaxCommit, attention_tiles.cuh): each thread keeps the largest key of
// the dQ words it stores (kt = 0 CTAs only) and of its dK and dV rows; every CTA commits once,
// at its end, and the last one finalises the meta.
#include <type_traits>

#include "nn/attention_backward_fused.hpp"
#include "nn/attention_backward_step.cuh"

namespace fp8lab::cuda_ops {
namespace {

template <int HD>
struct FusedBwdTiles {
  static constexpr int kWarps = 8;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kBc = 16 * kWarps;         // keys per CTA, 16 per warp
  static constexpr int kBr = kFusedBwdQueryTile;  // query rows per step
  static constexpr int kQueryTilesPerKeyTile = kBc / kBr;
  using Buffers = KeyTileBuffers<HD, kBr, kBc, kThreads>;  // K, V, Q, dO, lse, Di
  static constexpr int kSds = kBr + 8;                     // dS^T tile rows (bf16)
  static constexpr bool kKeysInRegs = HD <= 64;
  static constexpr int kDqRowGroups = kBr / 16;
  static constexpr int kDqCols = HD * kDqRowGroups / kWarps;  // columns of a warp's dQ part
  static constexpr int kDqNT = kDqCols / 8;
  static constexpr int kPartFloats = 16 * kDqCols;   // a warp's dQ part, float4 n of lane l at
                                                     // (n * 32 + l) * 4: coalesced, no conflicts
  static constexpr int kAccFloats = kBr * HD;        // one query tile's accumulator
  static constexpr int kSyncThread = kThreads - 32;  // lane 0 of the last warp, idle on diagonals
  static constexpr int kSmemBytes = kAccFloats * 4 + Buffers::kBytes + kBc * kSds * 2;
  static_assert(kBc % kBr == 0 && kWarps % kDqRowGroups == 0 && kDqNT % 2 == 0,
                "tiles must split evenly");
};

template <int HD>
__global__ void __launch_bounds__(FusedBwdTiles<HD>::kThreads, 1)
    attention_backward_fused_kernel(const bf16_bits* __restrict__ qkv,
                                    const bf16_bits* __restrict__ dout,
                                    const float* __restrict__ lse,
                                    const float* __restrict__ row_dot,
                                    unsigned* __restrict__ tiles_done, float* __restrict__ dq_accum,
                                    bf16_bits* __restrict__ dqkv, int batch_heads, int seq_len,
                                    int n_heads, float scale, float scale_log2,
                                    AmaxCommit dqkv_amax) {
  using C = FusedBwdTiles<HD>;
  constexpr int S = C::Buffers::S, Br = C::kBr, Bc = C::kBc, Sds = C::kSds;
  extern __shared__ uint4 smem_raw[];
  float* s_acc = reinterpret_cast<float*>(smem_raw);  // accumulator parts of query tile i
  typename C::Buffers tiles(s_acc + C::kAccFloats);
  bf16_bits* s_ds = reinterpret_cast<bf16_bits*>(s_acc + C::kAccFloats) +
                    C::Buffers::kBytes / 2;  // dS^T [Bc][Sds]

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const int kt = static_cast<int>(gridDim.x - 1 - blockIdx.x);  // highest key tile first
  const int k0 = kt * Bc;
  const HeadView hv = head_view(bh, seq_len, n_heads, HD);
  const std::int64_t d_model = static_cast<std::int64_t>(n_heads) * HD;
  const QuerySide qs = query_side(qkv, dout, lse, row_dot, hv, bh, seq_len, d_model);
  const int n_q_tiles = (seq_len - 1) / Br + 1;
  const int i_begin = kt * C::kQueryTilesPerKeyTile;
  unsigned* done = tiles_done + static_cast<std::int64_t>(bh) * n_q_tiles;
  float* acc_head = dq_accum + static_cast<std::int64_t>(bh) * n_q_tiles * C::kAccFloats;
  tiles.load_keys(qs, d_model, k0, seq_len);
  tiles.load_queries(qs, i_begin, 0, seq_len);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2, c = lane & 3;
  const int key_w0 = k0 + warp * 16;  // this warp's first key
  const bool sync_thread = static_cast<int>(threadIdx.x) == C::kSyncThread;
  // This warp's dQ part: query rows dq_row0.. of the tile, head columns dq_col0..
  const int dq_row0 = (warp % C::kDqRowGroups) * 16;
  const int dq_col0 = (warp / C::kDqRowGroups) * C::kDqCols;
  const int part = warp * C::kPartFloats + lane * 4;  // this lane's first accumulator float
  std::conditional_t<C::kKeysInRegs, KeyRowsInRegs<HD, S>, KeyRowsInSmem<HD, S>> keys;
  cp_async_wait_all();
  __syncthreads();  // K and V landed (the A fragments may be read into registers)
  keys.bind(tiles.k + warp * 16 * S, tiles.v + warp * 16 * S, lane);
  float dk[HD / 8][4] = {}, dv[HD / 8][4] = {};
  unsigned seen = 0;  // the sync thread's latest read of counter[i + 1]
  std::uint32_t dq_key = 0;  // the largest amax key of the dQ values this thread stored

  for (int i = i_begin; i < n_q_tiles; ++i) {
    const int buf = (i - i_begin) & 1;
    const int q0 = i * Br;
    const bool first_share = kt == i / C::kQueryTilesPerKeyTile, last_share = kt == 0;
    float* acc_tile = acc_head + static_cast<std::int64_t>(i) * C::kAccFloats;
    cp_async_wait_all();
    __syncthreads();  // tile i landed; step i - 1's buffers are free; counter[i] was seen ready
    if (!first_share) {
#pragma unroll
      for (int n = 0; n < C::kDqNT; ++n)
        cp_async_16(s_acc + part + n * 128, acc_tile + part + n * 128, true);
    }
    cp_async_commit();  // group: accumulator i (empty for the first share)
    if (i + 1 < n_q_tiles) tiles.load_queries(qs, i + 1, buf ^ 1, seq_len);
    cp_async_commit();  // group: query tile i + 1 (empty at the end)
    const int next_need = (i + 1) / C::kQueryTilesPerKeyTile - kt;  // shares before ours
    const bool wait_next = sync_thread && i + 1 < n_q_tiles && next_need > 0;
    if (wait_next) seen = ld_acquire_gpu(done + i + 1);

    // 1. dK, dV and dS^T for this warp's keys, unless every query of the tile precedes them.
    if (key_w0 < seq_len && key_w0 <= q0 + Br - 1) {
      float ds[Br / 8][4];
      tiles.key_rows_step(dk, dv, ds, keys, buf, q0, key_w0, seq_len, scale_log2, lane);
      bf16_bits* ds_rows = s_ds + warp * 16 * Sds;
#pragma unroll
      for (int nt = 0; nt < Br / 8; ++nt) {
        *reinterpret_cast<std::uint32_t*>(ds_rows + g * Sds + nt * 8 + 2 * c) =
            pack_bf16(ds[nt][0], ds[nt][1]);
        *reinterpret_cast<std::uint32_t*>(ds_rows + (g + 8) * Sds + nt * 8 + 2 * c) =
            pack_bf16(ds[nt][2], ds[nt][3]);
      }
    }
    __syncthreads();  // dS^T staged
    if (sync_thread && kt > 0 && i > i_begin) red_release_gpu_add(done + i - 1, 1);

    // 2. This warp's part of dS K. Keys at or past key_limit have dS = 0 for every query of the
    // tile, and skipped warps left their dS^T rows stale: those rows are never read.
    float dq[C::kDqNT][4] = {};
    const int key_limit = min(q0 + Br, seq_len) - k0;
    if (q0 + dq_row0 < seq_len) {
#pragma unroll
      for (int kk = 0; kk < Bc / 16; ++kk) {
        if (kk * 16 < key_limit) {
          std::uint32_t a[4];
          ldmatrix_x4_trans(a, a_frag_ptr_km<Sds>(s_ds, kk * 16, dq_row0, lane));
          mma_frag_b_kn<S, C::kDqNT>(dq, a, tiles.k, kk * 16, dq_col0, lane);
        }
      }
    }

    // 3. Add the earlier shares (this thread's own cp.async part) and pass the sum on.
    if (!first_share) {
      cp_async_wait_group<1>();  // accumulator i landed (query tile i + 1 may still be in flight)
#pragma unroll
      for (int n = 0; n < C::kDqNT; ++n) {
        const float4 a = *reinterpret_cast<const float4*>(s_acc + part + n * 128);
        dq[n][0] += a.x, dq[n][1] += a.y, dq[n][2] += a.z, dq[n][3] += a.w;
      }
    }
    if (last_share) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = q0 + dq_row0 + g + 8 * r;
        if (row >= seq_len) continue;
        bf16_bits* dst =
            dqkv + hv.qkv_head + static_cast<std::int64_t>(row) * hv.qkv_stride + dq_col0 + 2 * c;
        std::uint32_t words[C::kDqNT];
#pragma unroll
        for (int n = 0; n < C::kDqNT; ++n) {
          words[n] = pack_bf16(dq[n][2 * r] * scale, dq[n][2 * r + 1] * scale);
          *reinterpret_cast<std::uint32_t*>(dst + n * 8) = words[n];
        }
        dq_key = max(dq_key, detail::amax_key_bf16_words(words));
      }
    } else {
#pragma unroll
      for (int n = 0; n < C::kDqNT; ++n)
        __stcg(reinterpret_cast<float4*>(acc_tile + part + n * 128),
               make_float4(dq[n][0], dq[n][1], dq[n][2], dq[n][3]));
    }
    if (wait_next) {
      while (seen < static_cast<unsigned>(next_need)) {
        __nanosleep(32);
        seen = ld_acquire_gpu(done + i + 1);
      }
    }
  }

  __syncthreads();  // the last tile's stores are issued; no warp reads the K tile any more
  if (sync_thread && kt > 0) red_release_gpu_add(done + n_q_tiles - 1, 1);

  const std::uint32_t kv_key =
      tiles.store_key_grads(dk, dv, scale, dqkv + hv.qkv_head + d_model, d_model, hv.qkv_stride,
                            warp, key_w0, seq_len, lane);
  dqkv_amax(max(dq_key, kv_key));
}

template <int HD>
void launch_fused(const void* qkv, const float* lse, const void* dout, const float* row_dot,
                  unsigned* tiles_done, float* dq_accum, void* dqkv, int batch, int seq_len,
                  int n_heads, cudaStream_t stream, AmaxOut amax) {
  using C = FusedBwdTiles<HD>;
  const int batch_heads = batch * n_heads;
  const float scale = softmax_scale(HD);
  const int tiles = (seq_len + C::kBc - 1) / C::kBc;
  allow_dynamic_smem(attention_backward_fused_kernel<HD>, C::kSmemBytes);
  // x = key tiles (fastest in the linear block index), then (b, h): the order the counters need.
  attention_backward_fused_kernel<HD>
      <<<attention_grid(tiles, batch_heads), C::kThreads, C::kSmemBytes, stream>>>(
          static_cast<const bf16_bits*>(qkv), static_cast<const bf16_bits*>(dout), lse, row_dot,
          tiles_done, dq_accum, static_cast<bf16_bits*>(dqkv), batch_heads, seq_len, n_heads, scale,
          scale * kLog2e, amax_commit(amax, committing_blocks(tiles, batch_heads)));
}

}  // namespace

void attention_backward_fused(const void* qkv, const float* lse, const void* dout,
                              const float* row_dot, unsigned* tiles_done, float* dq_accum,
                              void* dqkv, int batch, int seq_len, int n_heads, int head_dim,
                              cudaStream_t stream, AmaxOut amax) {
  switch (head_dim) {
    case 64:
      return launch_fused<64>(qkv, lse, dout, row_dot, tiles_done, dq_accum, dqkv, batch, seq_len,
                              n_heads, stream, amax);
    case 128:
      return launch_fused<128>(qkv, lse, dout, row_dot, tiles_done, dq_accum, dqkv, batch, seq_len,
                               n_heads, stream, amax);
    default:
      return;
  }
}

}  // namespace fp8lab::cuda_ops
