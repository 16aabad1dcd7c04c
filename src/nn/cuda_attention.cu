// Causal flash attention (FlashAttention-2 style) in bf16 on tensor cores: mma.sync m16n8k16
// with fp32 accumulation, operands fed by ldmatrix from padded shared-memory tiles that cp.async
// fills. O(T) memory: the forward keeps only the row log-sum-exp; the backward recomputes the
// probabilities from it.
//
// Every warp owns whole rows of the (16-row) MMA tiles, so all row statistics stay within a
// warp: no cross-warp reductions, and the backward's dK/dV and dQ come from two separate
// kernels (each output row owned by exactly one warp), which keeps it deterministic without
// float atomics.
//
// Causality: a CTA visits only the tiles on or below the diagonal; a warp skips a tile that is
// entirely above its own rows, and applies the element mask only on tiles that straddle the
// diagonal or the sequence end. Rows past seq_len read zero-filled tiles and are never stored.
//
// Shared-memory tiles have rows of HD + 8 elements: the 16-byte pad shifts consecutive rows by
// 4 banks, so the eight 16-byte row segments of every ldmatrix phase hit distinct banks.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

#include "nn/cuda_ops_launch.hpp"

namespace fp8lab::cuda_ops {
namespace {

using bf16_bits = std::uint16_t;  // raw bf16 storage; the MMAs read pairs as 32-bit registers

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kMaxGridY = 65535;

// ---- PTX wrappers ----------------------------------------------------------------------------

// The shared-memory asm below carries "memory" clobbers: the epilogues reuse tiles that
// ldmatrix read, with plain stores the compiler must not hoist above those reads.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronous; zero-fills the destination when !valid (the source
// address is then not read).
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_4(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 4 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const bf16_bits* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const bf16_bits* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}

// d += a (16x16, row) * b (16x8, col); bf16 inputs, fp32 accumulators.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4],
                                         std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float fast_exp2(float x) {  // ex2.approx: 2^-22 relative; 2^-inf = 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Two floats -> one register of two bf16 (round to nearest even), lo in the low half.
__device__ __forceinline__ std::uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

// ---- fragment addressing -----------------------------------------------------------------
// Tiles are row-major [rows][HD + 8] in shared memory. In the m16n8k16 accumulator a lane holds
// rows g = lane / 4 and g + 8, columns 2 * (lane % 4) + {0, 1} of each 8-column block.

// A operand (16 rows x 16 k) at (row0, k0) of a row-major tile.
template <int S>
__device__ __forceinline__ const bf16_bits* a_frag_ptr(const bf16_bits* tile, int row0, int k0,
                                                       int lane) {
  return tile + (row0 + (lane & 15)) * S + k0 + (lane >> 4) * 8;
}
// B operands of two 8-wide n blocks (n0..n0+15) x 16 k, from a tile stored [n][k] (ldmatrix).
template <int S>
__device__ __forceinline__ const bf16_bits* b_frag_ptr_nk(const bf16_bits* tile, int n0, int k0,
                                                          int lane) {
  return tile + (n0 + (lane & 7) + (lane >> 4) * 8) * S + k0 + ((lane >> 3) & 1) * 8;
}
// The same from a tile stored [k][n] (ldmatrix.trans).
template <int S>
__device__ __forceinline__ const bf16_bits* b_frag_ptr_kn(const bf16_bits* tile, int k0, int n0,
                                                          int lane) {
  return tile + (k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * S + n0 + (lane >> 4) * 8;
}

// acc[16 x 8*NT] += A (16 x 16*KT from a_tile rows a_row0..) * B^T, B stored [n][k] in b_tile.
template <int S, int KT, int NT>
__device__ __forceinline__ void mma_a_smem_b_nk(float (&acc)[NT][4], const bf16_bits* a_tile,
                                                int a_row0, const bf16_bits* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < KT; ++kk) {
    std::uint32_t a[4];
    ldmatrix_x4(a, a_frag_ptr<S>(a_tile, a_row0, kk * 16, lane));
#pragma unroll
    for (int n2 = 0; n2 < NT / 2; ++n2) {
      std::uint32_t b[4];
      ldmatrix_x4(b, b_frag_ptr_nk<S>(b_tile, n2 * 16, kk * 16, lane));
      mma_bf16(acc[2 * n2], a, b[0], b[1]);
      mma_bf16(acc[2 * n2 + 1], a, b[2], b[3]);
    }
  }
}

// acc[16 x 8*NT] += P (16 x 8*KB, accumulator layout, rounded to bf16) * B, B stored [k][n].
template <int S, int KB, int NT>
__device__ __forceinline__ void mma_p_b_kn(float (&acc)[NT][4], const float (&p)[KB][4],
                                           const bf16_bits* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < KB / 2; ++kk) {
    // Two accumulator blocks of 8 columns form one A fragment of 16 k (FlashAttention-2's reuse).
    const std::uint32_t a[4] = {pack_bf16(p[2 * kk][0], p[2 * kk][1]),
                                pack_bf16(p[2 * kk][2], p[2 * kk][3]),
                                pack_bf16(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                                pack_bf16(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
    for (int n2 = 0; n2 < NT / 2; ++n2) {
      std::uint32_t b[4];
      ldmatrix_x4_trans(b, b_frag_ptr_kn<S>(b_tile, kk * 16, n2 * 16, lane));
      mma_bf16(acc[2 * n2], a, b[0], b[1]);
      mma_bf16(acc[2 * n2 + 1], a, b[2], b[3]);
    }
  }
}

// ---- tile movement -----------------------------------------------------------------------

// Rows row0.. of one head (row stride `stride` elements) -> tile [ROWS][S]; rows >= seq_len are
// zero-filled, so masked products never meet stale NaN bits.
template <int HD, int S, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile(bf16_bits* tile, const bf16_bits* head,
                                          std::int64_t stride, int row0, int seq_len) {
  constexpr int kChunksPerRow = HD / 8;
  constexpr int kChunks = ROWS * kChunksPerRow;
  static_assert(kChunks % THREADS == 0, "tile chunks must split evenly over the threads");
#pragma unroll
  for (int i = 0; i < kChunks / THREADS; ++i) {
    const int c = static_cast<int>(threadIdx.x) + i * THREADS;
    const int r = c / kChunksPerRow, col = (c % kChunksPerRow) * 8;
    const bool valid = row0 + r < seq_len;
    const bf16_bits* src = valid ? head + static_cast<std::int64_t>(row0 + r) * stride + col : head;
    cp_async_16(tile + r * S + col, src, valid);
  }
}

// f32 values [rows] at v[row0..], zero past seq_len.
template <int ROWS, int THREADS>
__device__ __forceinline__ void load_row_stats(float* dst, const float* v, int row0, int seq_len) {
  for (int r = static_cast<int>(threadIdx.x); r < ROWS; r += THREADS) {
    const bool valid = row0 + r < seq_len;
    cp_async_4(dst + r, valid ? v + row0 + r : v, valid);
  }
}

// A warp's 16 x HD accumulator (times `mul`) -> bf16 rows of its own tile region -> global rows
// row0.. (those < seq_len), with 16-byte stores. The staging rows belong to this warp alone.
template <int HD, int S, int NT>
__device__ __forceinline__ void store_warp_rows(const float (&acc)[NT][4], const float (&mul)[2],
                                                bf16_bits* stage, bf16_bits* head,
                                                std::int64_t stride, int row0, int seq_len,
                                                int lane) {
  static_assert(NT * 8 == HD, "accumulator must span the head");
  const int g = lane >> 2, c = lane & 3;
  __syncwarp();
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    *reinterpret_cast<std::uint32_t*>(stage + g * S + nt * 8 + 2 * c) =
        pack_bf16(acc[nt][0] * mul[0], acc[nt][1] * mul[0]);
    *reinterpret_cast<std::uint32_t*>(stage + (g + 8) * S + nt * 8 + 2 * c) =
        pack_bf16(acc[nt][2] * mul[1], acc[nt][3] * mul[1]);
  }
  __syncwarp();
  constexpr int kChunksPerRow = HD / 8;
#pragma unroll
  for (int i = 0; i < 16 * kChunksPerRow / 32; ++i) {
    const int ci = lane + i * 32;
    const int r = ci / kChunksPerRow, col = (ci % kChunksPerRow) * 8;
    if (row0 + r < seq_len)
      *reinterpret_cast<uint4*>(head + static_cast<std::int64_t>(row0 + r) * stride + col) =
          *reinterpret_cast<const uint4*>(stage + r * S + col);
  }
}

// (batch * head) index of this CTA: grid.y * grid.z covers it (grid.y is capped at 65535).
__device__ __forceinline__ int block_bh() {
  return static_cast<int>(blockIdx.y + blockIdx.z * gridDim.y);
}

struct HeadView {
  std::int64_t qkv_stride;  // 3 * H * hd elements between tokens
  std::int64_t qkv_head;    // offset of (batch b, token 0, head h) in qkv
  std::int64_t out_head;    // offset of (b, 0, h) in out / dout ([B*T, H*hd])
};

__device__ __forceinline__ HeadView head_view(int bh, int seq_len, int n_heads, int head_dim) {
  const int b = bh / n_heads, h = bh % n_heads;
  const std::int64_t d_model = static_cast<std::int64_t>(n_heads) * head_dim;
  const std::int64_t token0 = static_cast<std::int64_t>(b) * seq_len;
  return {3 * d_model, token0 * 3 * d_model + static_cast<std::int64_t>(h) * head_dim,
          token0 * d_model + static_cast<std::int64_t>(h) * head_dim};
}

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
    attention_forward_kernel(const bf16_bits* __restrict__ qkv, bf16_bits* __restrict__ out,
                             float* __restrict__ lse, int batch_heads, int seq_len, int n_heads,
                             float scale, float scale_log2) {
  using C = FwdTiles<HD>;
  constexpr int S = C::kS, Br = C::kBr, Bc = C::kBc, MT = C::kMT, RPW = C::kRowsPerWarp;
  extern __shared__ uint4 smem_raw[];
  bf16_bits* s_q = reinterpret_cast<bf16_bits*>(smem_raw);
  bf16_bits* s_k = s_q + Br * S;
  bf16_bits* s_v = s_k + 2 * Bc * S;

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const int q0 =
      (static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x)) * Br;  // long rows first
  const HeadView hv = head_view(bh, seq_len, n_heads, HD);
  const std::int64_t d_model = static_cast<std::int64_t>(n_heads) * HD;
  const bf16_bits* q_head = qkv + hv.qkv_head;
  const bf16_bits* k_head = q_head + d_model;
  const bf16_bits* v_head = q_head + 2 * d_model;
  const int n_tiles = (min(q0 + Br, seq_len) - 1) / Bc + 1;

  load_tile<HD, S, Br, C::kThreads>(s_q, q_head, hv.qkv_stride, q0, seq_len);
  load_tile<HD, S, Bc, C::kThreads>(s_k, k_head, hv.qkv_stride, 0, seq_len);
  load_tile<HD, S, Bc, C::kThreads>(s_v, v_head, hv.qkv_stride, 0, seq_len);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2, c = lane & 3;
  const int row_w0 = q0 + warp * RPW;  // this warp's first query row
  std::uint32_t q_frag[MT][HD / 16][4];
  float o[MT][HD / 8][4] = {};
  float row_max[MT][2], row_sum[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) row_max[mt][r] = -INFINITY, row_sum[mt][r] = 0.f;

  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait_all();
    __syncthreads();  // tile j landed; every warp is done with the buffer refilled below
    if (j + 1 < n_tiles) {
      const int nb = (j + 1) & 1;
      load_tile<HD, S, Bc, C::kThreads>(s_k + nb * Bc * S, k_head, hv.qkv_stride, (j + 1) * Bc,
                                        seq_len);
      load_tile<HD, S, Bc, C::kThreads>(s_v + nb * Bc * S, v_head, hv.qkv_stride, (j + 1) * Bc,
                                        seq_len);
      cp_async_commit();
    }
    if (j == 0) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk)
          ldmatrix_x4(q_frag[mt][kk], a_frag_ptr<S>(s_q, warp * RPW + mt * 16, kk * 16, lane));
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
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_bf16(s[mt][2 * n2], q_frag[mt][kk], b[0], b[1]);
          mma_bf16(s[mt][2 * n2 + 1], q_frag[mt][kk], b[2], b[3]);
        }
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

    // Online softmax: rescale the running sum and O by exp(old max - new max). Sums stay
    // per-thread partials (the rescale is linear) and are reduced over the quad once at the end.
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = row_max[mt][r];
#pragma unroll
        for (int nt = 0; nt < Bc / 8; ++nt)
          mx = fmaxf(mx, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
        const float correction = fast_exp2((row_max[mt][r] - mx) * scale_log2);  // 0 at first
        row_max[mt][r] = mx;
        const float bias = mx * scale_log2;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < Bc / 8; ++nt)
#pragma unroll
          for (int e = 2 * r; e < 2 * r + 2; ++e) {
            const float p = fast_exp2(fmaf(s[mt][nt][e], scale_log2, -bias));
            s[mt][nt][e] = p;
            sum += p;
          }
        row_sum[mt][r] = row_sum[mt][r] * correction + sum;
#pragma unroll
        for (int nt = 0; nt < HD / 8; ++nt) {
          o[mt][nt][2 * r] *= correction;
          o[mt][nt][2 * r + 1] *= correction;
        }
      }
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
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_bf16(o[mt][2 * n2], p_frag[mt], b[0], b[1]);
          mma_bf16(o[mt][2 * n2 + 1], p_frag[mt], b[2], b[3]);
        }
      }
    }
  }

  // Epilogue: O / rowsum -> out (staged through this warp's own Q rows), lse = max + log(sum).
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
    store_warp_rows<HD, S, HD / 8>(o[mt], inv, s_q + (warp * RPW + mt * 16) * S, out + hv.out_head,
                                   d_model, row0, seq_len, lane);
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
}

// ---- backward ----------------------------------------------------------------------------
// With P = exp(S * scale - lse) and Di = rowsum(dO_i * O_i):
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - Di),  dK = scale * dS^T Q,  dQ = scale * dS K.

// Di = sum_c dO[i, c] * O[i, c] in fp32; rows are (token, head) pairs, HD / 8 lanes per row.
template <int HD>
__global__ void attention_backward_rowdot_kernel(const bf16_bits* __restrict__ out,
                                                 const bf16_bits* __restrict__ dout,
                                                 float* __restrict__ row_dot, std::int64_t rows,
                                                 int seq_len, int n_heads) {
  constexpr int kLanes = HD / 8;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t r = tid / kLanes;
  const int part = static_cast<int>(tid % kLanes);
  float acc = 0.f;
  if (r < rows) {
    const uint4 ov = *reinterpret_cast<const uint4*>(out + r * HD + part * 8);
    const uint4 dv = *reinterpret_cast<const uint4*>(dout + r * HD + part * 8);
    const std::uint32_t o32[4] = {ov.x, ov.y, ov.z, ov.w};
    const std::uint32_t d32[4] = {dv.x, dv.y, dv.z, dv.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      acc = fmaf(__uint_as_float(o32[i] << 16), __uint_as_float(d32[i] << 16), acc);
      acc = fmaf(__uint_as_float(o32[i] & 0xFFFF0000u), __uint_as_float(d32[i] & 0xFFFF0000u), acc);
    }
  }
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset >>= 1)
    acc += __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  if (r < rows && part == 0) {
    const std::int64_t token = r / n_heads, h = r % n_heads;
    const std::int64_t b = token / seq_len, t = token % seq_len;
    row_dot[(b * n_heads + h) * seq_len + t] = acc;
  }
}

// dK, dV: one CTA per kBc keys (16 per warp), walking the query tiles from the diagonal down.
template <int HD>
struct BwdKvTiles {
  static constexpr int kWarps = 4;
  static constexpr int kBc = 16 * kWarps;         // keys per CTA
  static constexpr int kBr = HD <= 64 ? 64 : 32;  // query rows per step (hd 128: dK+dV = 128 regs)
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kS = HD + 8;
  static constexpr int kSmemBytes = (2 * kBc + 4 * kBr) * kS * 2 + 4 * kBr * 4;
};

template <int HD>
__global__ void __launch_bounds__(BwdKvTiles<HD>::kThreads)
    attention_backward_dkdv_kernel(const bf16_bits* __restrict__ qkv,
                                   const bf16_bits* __restrict__ dout,
                                   const float* __restrict__ lse, const float* __restrict__ row_dot,
                                   bf16_bits* __restrict__ dqkv, int batch_heads, int seq_len,
                                   int n_heads, float scale, float scale_log2) {
  using C = BwdKvTiles<HD>;
  constexpr int S = C::kS, Br = C::kBr, Bc = C::kBc;
  extern __shared__ uint4 smem_raw[];
  bf16_bits* s_k = reinterpret_cast<bf16_bits*>(smem_raw);
  bf16_bits* s_v = s_k + Bc * S;
  bf16_bits* s_q = s_v + Bc * S;                               // [2][Br][S]
  bf16_bits* s_do = s_q + 2 * Br * S;                          // [2][Br][S]
  float* s_lse = reinterpret_cast<float*>(s_do + 2 * Br * S);  // [2][Br]
  float* s_dot = s_lse + 2 * Br;                               // [2][Br]

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const int k0 = static_cast<int>(blockIdx.x) * Bc;  // low keys see the most queries: first
  const HeadView hv = head_view(bh, seq_len, n_heads, HD);
  const std::int64_t d_model = static_cast<std::int64_t>(n_heads) * HD;
  const bf16_bits* q_head = qkv + hv.qkv_head;
  const bf16_bits* do_head = dout + hv.out_head;
  const float* lse_head = lse + static_cast<std::int64_t>(bh) * seq_len;
  const float* dot_head = row_dot + static_cast<std::int64_t>(bh) * seq_len;
  const int i_begin = k0 / Br, i_end = (seq_len - 1) / Br + 1;

  auto load_query_tile = [&](int i, int buf) {
    load_tile<HD, S, Br, C::kThreads>(s_q + buf * Br * S, q_head, hv.qkv_stride, i * Br, seq_len);
    load_tile<HD, S, Br, C::kThreads>(s_do + buf * Br * S, do_head, d_model, i * Br, seq_len);
    load_row_stats<Br, C::kThreads>(s_lse + buf * Br, lse_head, i * Br, seq_len);
    load_row_stats<Br, C::kThreads>(s_dot + buf * Br, dot_head, i * Br, seq_len);
  };
  load_tile<HD, S, Bc, C::kThreads>(s_k, q_head + d_model, hv.qkv_stride, k0, seq_len);
  load_tile<HD, S, Bc, C::kThreads>(s_v, q_head + 2 * d_model, hv.qkv_stride, k0, seq_len);
  load_query_tile(i_begin, 0);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2, c = lane & 3;
  const int key_w0 = k0 + warp * 16;  // this warp's first key
  float dk[HD / 8][4] = {}, dv[HD / 8][4] = {};

  for (int i = i_begin; i < i_end; ++i) {
    const int buf = (i - i_begin) & 1;
    cp_async_wait_all();
    __syncthreads();  // tile i landed; every warp is done with the buffer refilled below
    if (i + 1 < i_end) {
      load_query_tile(i + 1, buf ^ 1);
      cp_async_commit();
    }
    const int q0 = i * Br;
    if (key_w0 >= seq_len || q0 + Br - 1 < key_w0) continue;  // every query precedes our keys
    const bf16_bits* q_tile = s_q + buf * Br * S;
    const bf16_bits* do_tile = s_do + buf * Br * S;
    const float* lse_tile = s_lse + buf * Br;
    const float* dot_tile = s_dot + buf * Br;
    const bool need_mask = q0 < key_w0 + 15 || q0 + Br > seq_len;

    float pt[Br / 8][4] = {};  // S^T, then P^T, then dS^T: [16 keys x Br queries]
    mma_a_smem_b_nk<S, HD / 16, Br / 8>(pt, s_k, warp * 16, q_tile, lane);
#pragma unroll
    for (int nt = 0; nt < Br / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int ql = nt * 8 + 2 * c + (e & 1);
        const int key = key_w0 + g + (e >> 1) * 8;
        const float p = fast_exp2(fmaf(pt[nt][e], scale_log2, -lse_tile[ql] * kLog2e));
        pt[nt][e] = need_mask && (q0 + ql < key || q0 + ql >= seq_len) ? 0.f : p;
      }
    mma_p_b_kn<S, Br / 8, HD / 8>(dv, pt, do_tile, lane);  // dV += P^T dO

    float dpt[Br / 8][4] = {};  // dP^T = V dO^T
    mma_a_smem_b_nk<S, HD / 16, Br / 8>(dpt, s_v, warp * 16, do_tile, lane);
#pragma unroll
    for (int nt = 0; nt < Br / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) pt[nt][e] *= dpt[nt][e] - dot_tile[nt * 8 + 2 * c + (e & 1)];
    mma_p_b_kn<S, Br / 8, HD / 8>(dk, pt, q_tile, lane);  // dK += dS^T Q (scaled on store)
  }

  // The staging rows are this warp's own K and V rows, which no other warp reads.
  const float k_mul[2] = {scale, scale}, v_mul[2] = {1.f, 1.f};
  store_warp_rows<HD, S, HD / 8>(dk, k_mul, s_k + warp * 16 * S, dqkv + hv.qkv_head + d_model,
                                 hv.qkv_stride, key_w0, seq_len, lane);
  store_warp_rows<HD, S, HD / 8>(dv, v_mul, s_v + warp * 16 * S, dqkv + hv.qkv_head + 2 * d_model,
                                 hv.qkv_stride, key_w0, seq_len, lane);
}

// dQ: one CTA per kBr queries (16 per warp), walking the key tiles up to the diagonal.
template <int HD>
struct BwdQTiles {
  static constexpr int kWarps = 4;
  static constexpr int kBr = 16 * kWarps;         // query rows per CTA
  static constexpr int kBc = HD <= 64 ? 64 : 32;  // keys per step
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kS = HD + 8;
  static constexpr int kSmemBytes = (2 * kBr + 4 * kBc) * kS * 2;
};

template <int HD>
__global__ void __launch_bounds__(BwdQTiles<HD>::kThreads)
    attention_backward_dq_kernel(const bf16_bits* __restrict__ qkv,
                                 const bf16_bits* __restrict__ dout, const float* __restrict__ lse,
                                 const float* __restrict__ row_dot, bf16_bits* __restrict__ dqkv,
                                 int batch_heads, int seq_len, int n_heads, float scale,
                                 float scale_log2) {
  using C = BwdQTiles<HD>;
  constexpr int S = C::kS, Br = C::kBr, Bc = C::kBc;
  extern __shared__ uint4 smem_raw[];
  bf16_bits* s_q = reinterpret_cast<bf16_bits*>(smem_raw);
  bf16_bits* s_do = s_q + Br * S;
  bf16_bits* s_k = s_do + Br * S;     // [2][Bc][S]
  bf16_bits* s_v = s_k + 2 * Bc * S;  // [2][Bc][S]

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const int q0 =
      (static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x)) * Br;  // long rows first
  const HeadView hv = head_view(bh, seq_len, n_heads, HD);
  const std::int64_t d_model = static_cast<std::int64_t>(n_heads) * HD;
  const bf16_bits* q_head = qkv + hv.qkv_head;
  const bf16_bits* k_head = q_head + d_model;
  const bf16_bits* v_head = q_head + 2 * d_model;
  const int n_tiles = (min(q0 + Br, seq_len) - 1) / Bc + 1;

  load_tile<HD, S, Br, C::kThreads>(s_q, q_head, hv.qkv_stride, q0, seq_len);
  load_tile<HD, S, Br, C::kThreads>(s_do, dout + hv.out_head, d_model, q0, seq_len);
  load_tile<HD, S, Bc, C::kThreads>(s_k, k_head, hv.qkv_stride, 0, seq_len);
  load_tile<HD, S, Bc, C::kThreads>(s_v, v_head, hv.qkv_stride, 0, seq_len);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2, c = lane & 3;
  const int row_w0 = q0 + warp * 16;
  float lse_log2[2], dot[2];  // this lane's rows g and g + 8
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row_w0 + g + 8 * r;
    const std::int64_t at = static_cast<std::int64_t>(bh) * seq_len + row;
    lse_log2[r] = row < seq_len ? lse[at] * kLog2e : 0.f;
    dot[r] = row < seq_len ? row_dot[at] : 0.f;
  }
  float dq[HD / 8][4] = {};

  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait_all();
    __syncthreads();  // tile j landed; every warp is done with the buffer refilled below
    if (j + 1 < n_tiles) {
      const int nb = (j + 1) & 1;
      load_tile<HD, S, Bc, C::kThreads>(s_k + nb * Bc * S, k_head, hv.qkv_stride, (j + 1) * Bc,
                                        seq_len);
      load_tile<HD, S, Bc, C::kThreads>(s_v + nb * Bc * S, v_head, hv.qkv_stride, (j + 1) * Bc,
                                        seq_len);
      cp_async_commit();
    }
    const int k0 = j * Bc;
    if (row_w0 >= seq_len || k0 > row_w0 + 15) continue;  // no row of this warp sees it
    const bf16_bits* k_tile = s_k + (j & 1) * Bc * S;
    const bf16_bits* v_tile = s_v + (j & 1) * Bc * S;
    const bool need_mask = k0 + Bc - 1 > row_w0;

    float p[Bc / 8][4] = {};  // S, then P, then dS: [16 queries x Bc keys]
    mma_a_smem_b_nk<S, HD / 16, Bc / 8>(p, s_q, warp * 16, k_tile, lane);
#pragma unroll
    for (int nt = 0; nt < Bc / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_w0 + g + (e >> 1) * 8;
        const int col = k0 + nt * 8 + 2 * c + (e & 1);
        const float v = fast_exp2(fmaf(p[nt][e], scale_log2, -lse_log2[e >> 1]));
        p[nt][e] = need_mask && col > row ? 0.f : v;
      }
    float dp[Bc / 8][4] = {};  // dP = dO V^T
    mma_a_smem_b_nk<S, HD / 16, Bc / 8>(dp, s_do, warp * 16, v_tile, lane);
#pragma unroll
    for (int nt = 0; nt < Bc / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) p[nt][e] *= dp[nt][e] - dot[e >> 1];
    mma_p_b_kn<S, Bc / 8, HD / 8>(dq, p, k_tile, lane);  // dQ += dS K (scaled on store)
  }

  const float q_mul[2] = {scale, scale};
  store_warp_rows<HD, S, HD / 8>(dq, q_mul, s_q + warp * 16 * S, dqkv + hv.qkv_head, hv.qkv_stride,
                                 row_w0, seq_len, lane);
}

// ---- launch helpers ----------------------------------------------------------------------

// Grid (tiles, batch*heads) with batch*heads split over y and z (y is capped at 65535).
dim3 attention_grid(int tiles, int batch_heads) {
  const int y = batch_heads < kMaxGridY ? batch_heads : kMaxGridY;
  return dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(y),
              static_cast<unsigned>((batch_heads + y - 1) / y));
}

template <typename Kernel>
void allow_dynamic_smem(Kernel kernel, int bytes) {
  // Above 48 KiB a kernel must opt in; per function and device, so set it at every launch (the
  // launch itself reports a failure here).
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

float softmax_scale(int head_dim) { return 1.f / std::sqrt(static_cast<float>(head_dim)); }

template <int HD>
void launch_forward(const void* qkv, void* out, float* lse, int batch, int seq_len, int n_heads,
                    cudaStream_t stream) {
  using C = FwdTiles<HD>;
  const int batch_heads = batch * n_heads;
  const float scale = softmax_scale(HD);
  allow_dynamic_smem(attention_forward_kernel<HD>, C::kSmemBytes);
  attention_forward_kernel<HD>
      <<<attention_grid((seq_len + C::kBr - 1) / C::kBr, batch_heads), C::kThreads, C::kSmemBytes,
         stream>>>(static_cast<const bf16_bits*>(qkv), static_cast<bf16_bits*>(out), lse,
                   batch_heads, seq_len, n_heads, scale, scale * kLog2e);
}

template <int HD>
void launch_backward(const void* qkv, const void* out, const float* lse, const void* dout,
                     void* dqkv, int batch, int seq_len, int n_heads, float* row_dot,
                     cudaStream_t stream) {
  const auto* qkv_b = static_cast<const bf16_bits*>(qkv);
  const auto* dout_b = static_cast<const bf16_bits*>(dout);
  auto* dqkv_b = static_cast<bf16_bits*>(dqkv);
  const int batch_heads = batch * n_heads;
  const float scale = softmax_scale(HD);

  const std::int64_t rows = static_cast<std::int64_t>(batch) * seq_len * n_heads;
  constexpr int kDotThreads = 256;
  const std::int64_t dot_blocks = (rows * (HD / 8) + kDotThreads - 1) / kDotThreads;
  attention_backward_rowdot_kernel<HD>
      <<<static_cast<unsigned>(dot_blocks), kDotThreads, 0, stream>>>(
          static_cast<const bf16_bits*>(out), dout_b, row_dot, rows, seq_len, n_heads);

  using Kv = BwdKvTiles<HD>;
  allow_dynamic_smem(attention_backward_dkdv_kernel<HD>, Kv::kSmemBytes);
  attention_backward_dkdv_kernel<HD>
      <<<attention_grid((seq_len + Kv::kBc - 1) / Kv::kBc, batch_heads), Kv::kThreads,
         Kv::kSmemBytes, stream>>>(qkv_b, dout_b, lse, row_dot, dqkv_b, batch_heads, seq_len,
                                   n_heads, scale, scale * kLog2e);

  using Q = BwdQTiles<HD>;
  allow_dynamic_smem(attention_backward_dq_kernel<HD>, Q::kSmemBytes);
  attention_backward_dq_kernel<HD><<<attention_grid((seq_len + Q::kBr - 1) / Q::kBr, batch_heads),
                                     Q::kThreads, Q::kSmemBytes, stream>>>(
      qkv_b, dout_b, lse, row_dot, dqkv_b, batch_heads, seq_len, n_heads, scale, scale * kLog2e);
}

}  // namespace

bool attention_supports_head_dim(int head_dim) {
  return head_dim == 32 || head_dim == 64 || head_dim == 128;
}

// Pointers must be 16-byte aligned (every row and head offset then is: hd is a multiple of 32).
// An unsupported head_dim launches nothing: CudaBackend checks attention_supports_head_dim.
void attention_forward(const void* qkv, void* out, float* lse, int batch, int seq_len, int n_heads,
                       int head_dim, cudaStream_t stream) {
  if (batch <= 0 || seq_len <= 0 || n_heads <= 0) return;
  switch (head_dim) {
    case 32:
      return launch_forward<32>(qkv, out, lse, batch, seq_len, n_heads, stream);
    case 64:
      return launch_forward<64>(qkv, out, lse, batch, seq_len, n_heads, stream);
    case 128:
      return launch_forward<128>(qkv, out, lse, batch, seq_len, n_heads, stream);
    default:
      return;
  }
}

// The workspace holds Di = rowsum(dO_i * O_i), [B, H, T] f32.
std::size_t attention_backward_workspace_bytes(int batch, int seq_len, int n_heads) {
  return static_cast<std::size_t>(batch) * static_cast<std::size_t>(seq_len) *
         static_cast<std::size_t>(n_heads) * sizeof(float);
}

void attention_backward(const void* qkv, const void* out, const float* lse, const void* dout,
                        void* dqkv, int batch, int seq_len, int n_heads, int head_dim,
                        void* workspace, cudaStream_t stream) {
  if (batch <= 0 || seq_len <= 0 || n_heads <= 0) return;
  auto* row_dot = static_cast<float*>(workspace);
  switch (head_dim) {
    case 32:
      return launch_backward<32>(qkv, out, lse, dout, dqkv, batch, seq_len, n_heads, row_dot,
                                 stream);
    case 64:
      return launch_backward<64>(qkv, out, lse, dout, dqkv, batch, seq_len, n_heads, row_dot,
                                 stream);
    case 128:
      return launch_backward<128>(qkv, out, lse, dout, dqkv, batch, seq_len, n_heads, row_dot,
                                  stream);
    default:
      return;
  }
}

}  // namespace fp8lab::cuda_ops
