// Causal flash attention (FlashAttention-2 style) in bf16 on tensor cores: mma.sync m16n8k16
// with fp32 accumulation, operands fed by ldmatrix from padded shared-memory tiles that cp.async
// fills. O(T) memory: the forward keeps only the row log-sum-exp; the backward recomputes the
// probabilities from it.
//
// Every warp owns whole rows of the (16-row) MMA tiles, so all row statistics stay within a
// warp: no cross-warp reductions. The backward stays deterministic without float atomics: dK/dV
// and dQ come from separate kernels, each output row owned by exactly one warp.
//
// Causality: a CTA visits only the tiles on or below the diagonal; a warp skips a tile that is
// entirely above its own rows, and applies the element mask only on tiles that straddle the
// diagonal or the sequence end. Rows past seq_len read zero-filled tiles and are never stored.
//
// Shared-memory tiles have rows of HD + 8 elements: the 16-byte pad shifts consecutive rows by
// 4 banks, so the eight 16-byte row segments of every ldmatrix phase hit distinct banks.
//
// Producer-fused amax (AmaxOut): out is attn.proj's x and d_qkv attn.qkv's dY, so the kernels
// that store them can also reduce max|stored bf16| into an Fp8Meta (AmaxCommit in
// attention_tiles.cuh); the FP8 linear then skips its own pass over the tensor.
#include "cuda_attention/attention_kernels.hpp"
#include "cuda_attention/attention_tiles.cuh"

namespace fp8lab::cuda_ops {
namespace {

// ---- forward -----------------------------------------------------------------------------

// Each warp owns kMT MMA row tiles (16 rows each): the K and V fragments it loads from shared
// memory then feed kMT MMAs, halving shared-memory traffic per MMA for the small head dims.
template <int HD>
struct FwdTiles {
  static constexpr int kWarps = 4;
  static constexpr int kMT = HD <= 64 ? 2 : 1;  // hd 128: the O accumulators alone take 64 regs
  static constexpr int kRowsPerWarp = 16 * kMT;
  static constexpr int kBr = kWarps * kRowsPerWarp;  // query rows per CTA
  static constexpr int kBc = 64;                     // keys per inner step
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kS = HD + 8;
  static constexpr int kSmemBytes = (kBr + 4 * kBc) * kS * 2;  // Q, K x2, V x2
  // A processed tile then starts at or before the warp's first row (both are multiples of
  // kRowsPerWarp), so every row sees at least one unmasked key and its max stays finite.
  static_assert(kBc % kRowsPerWarp == 0, "key tiles must align with the warp row tiles");
};

template <int HD>
__global__ void __launch_bounds__(FwdTiles<HD>::kThreads)
    attention_forward_kernel(FP8LAB_ATTENTION_FORWARD_PARAMS(const bf16_bits* __restrict__)) {
  using C = FwdTiles<HD>;
  constexpr int S = C::kS, Br = C::kBr, Bc = C::kBc, MT = C::kMT, RPW = C::kRowsPerWarp;
  extern __shared__ uint4 smem_raw[];
  bf16_bits* s_q = reinterpret_cast<bf16_bits*>(smem_raw);
  bf16_bits* s_k = s_q + Br * S;
  bf16_bits* s_v = s_k + 2 * Bc * S;

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const QueryTileHead head = query_tile_head<HD, Br, Bc>(qkv, bh, seq_len, n_heads);
  const auto& [hv, d_model, q_head, k_head, v_head, q0, n_tiles] = head;
  load_tile<HD, S, Br, C::kThreads>(s_q, q_head, hv.qkv_stride, q0, seq_len);
  load_key_tiles<HD, S, Bc, C::kThreads>(s_k, s_v, head, 0, 0, seq_len);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2, c = lane & 3;
  const int row_w0 = q0 + warp * RPW;  // this warp's first query row
  std::uint32_t q_frag[HD / 16][MT][4];  // [k step][row tile]
  float o[MT][HD / 8][4] = {};
  float row_max[MT][2], row_sum[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) row_max[mt][r] = -INFINITY, row_sum[mt][r] = 0.f;

  for (int j = 0; j < n_tiles; ++j) {
    tile_walk_barrier();  // tile j landed; every warp is done with the buffer refilled below
    if (j + 1 < n_tiles) {
      const int nb = (j + 1) & 1;
      load_key_tiles<HD, S, Bc, C::kThreads>(s_k, s_v, head, (j + 1) * Bc, nb, seq_len);
      cp_async_commit();
    }
    if (j == 0) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk)
          ldmatrix_x4(q_frag[kk][mt], a_frag_ptr<S>(s_q, warp * RPW + mt * 16, kk * 16, lane));
    }
    const int k0 = j * Bc;
    if (row_w0 >= seq_len || k0 > row_w0 + RPW - 1) continue;  // no row of this warp sees it
    const bf16_bits* k_tile = s_k + (j & 1) * Bc * S;
    const bf16_bits* v_tile = s_v + (j & 1) * Bc * S;

    float s[MT][Bc / 8][4] = {};  // raw scores q . k
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
#pragma unroll
      for (int n2 = 0; n2 < Bc / 16; ++n2) {
        std::uint32_t b[4];
        ldmatrix_x4(b, b_frag_ptr_nk<S>(k_tile, n2 * 16, kk * 16, lane));
        mma_row_tiles(s, q_frag[kk], b, n2);
      }
    }
    if (k0 + Bc - 1 > row_w0) {  // the tile crosses the diagonal (or the sequence end)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < Bc / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = row_w0 + mt * 16 + g + (e >> 1) * 8;
            const int col = k0 + nt * 8 + 2 * c + (e & 1);
            if (col > row) s[mt][nt][e] = -INFINITY;
          }
    }

    // Online softmax (attention_tiles.cuh), per row tile.
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      online_softmax_step(s[mt], o[mt], row_max[mt], row_sum[mt], scale_log2);
    }

    // O += P V, P rounded to bf16 (as FlashAttention-2 does); V fragments shared by the tiles.
#pragma unroll
    for (int kk = 0; kk < Bc / 16; ++kk) {
      std::uint32_t p_frag[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        p_frag[mt][0] = pack_bf16(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        p_frag[mt][1] = pack_bf16(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        p_frag[mt][2] = pack_bf16(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        p_frag[mt][3] = pack_bf16(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int n2 = 0; n2 < HD / 16; ++n2) {
        std::uint32_t b[4];
        ldmatrix_x4_trans(b, b_frag_ptr_kn<S>(v_tile, kk * 16, n2 * 16, lane));
        mma_row_tiles(o, p_frag, b, n2);
      }
    }
  }

  // Epilogue: O / rowsum -> out (staged through this warp's own Q rows), lse = max + log(sum).
  std::uint32_t key = 0;  // the largest amax key this thread stored into out
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = row_sum[mt][r];
      sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);
      sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
      row_sum[mt][r] = sum;
      inv[r] = 1.f / sum;
    }
    const int row0 = row_w0 + mt * 16;
    key = max(key, store_warp_rows<HD, S, HD / 8>(o[mt], inv, s_q + (warp * RPW + mt * 16) * S,
                                                  out + hv.out_head, d_model, row0, seq_len, lane));
    if (c == 0) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = row0 + g + 8 * r;
        if (row < seq_len)
          lse[static_cast<std::int64_t>(bh) * seq_len + row] =
              row_max[mt][r] * scale + logf(row_sum[mt][r]);
      }
    }
  }
  out_amax(key);
}

template <int HD>
void launch_forward(const void* qkv, void* out, float* lse, int batch, int seq_len, int n_heads,
                    cudaStream_t stream, AmaxOut amax) {
  using C = FwdTiles<HD>;
  launch_attention_forward(
      TileLaunch{attention_forward_kernel<HD>, C::kBr, C::kThreads, C::kSmemBytes},
      static_cast<const bf16_bits*>(qkv), out, lse, batch, seq_len, n_heads, HD, stream, amax);
}

}  // namespace

// Pointers must be 16-byte aligned (every row and head offset then is: hd is a multiple of 32).
bool attention_forward_mma_sync(const void* qkv, void* out, float* lse, int batch, int seq_len,
                                int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax) {
  switch (head_dim) {
    case 32:
      launch_forward<32>(qkv, out, lse, batch, seq_len, n_heads, stream, amax);
      return true;
    case 64:
      launch_forward<64>(qkv, out, lse, batch, seq_len, n_heads, stream, amax);
      return true;
    case 128:
      launch_forward<128>(qkv, out, lse, batch, seq_len, n_heads, stream, amax);
      return true;
    default:
      return false;
  }
}

}  // namespace fp8lab::cuda_ops
