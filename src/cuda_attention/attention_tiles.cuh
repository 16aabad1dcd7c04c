// Shared pieces of the causal flash attention (cuda_attention_forward.cu,
// cuda_attention_backward.cu): PTX wrappers, MMA fragment
// addressing, tile movement, the (batch, head) view of a CTA, the producer-fused amax of the
// outputs, and the launch helpers. cuda_attention_forward.cu describes the design.
#pragma once

#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

#include "core/cp_async.cuh"
#include "fp8/amax_device.cuh"
#include "cuda_kernels/cuda_ops_launch.hpp"

namespace fp8lab::cuda_ops {
namespace {

using bf16_bits = std::uint16_t;  // raw bf16 storage; the MMAs read pairs as 32-bit registers

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kMaxGridY = 65535;

// ---- PTX wrappers ----------------------------------------------------------------------------

// The shared-memory asm below carries "memory" clobbers: the epilogues reuse tiles that
// ldmatrix read, with plain stores the compiler must not hoist above those reads. smem_addr and
// the cp.async wrappers come from core/cp_async.cuh.

// GPU-scope acquire load and release add, for counters that order work between CTAs.
__device__ __forceinline__ unsigned ld_acquire_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void red_release_gpu_add(unsigned* p, unsigned v) {
  asm volatile("red.release.gpu.add.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
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
// The same A operand from a tile stored transposed, [k][m] (ldmatrix.trans): lanes 8-15 address
// rows m 8..15, lanes 16-31 k 8..15, matching the fragment's register order.
template <int S>
__device__ __forceinline__ const bf16_bits* a_frag_ptr_km(const bf16_bits* tile, int k0, int row0,
                                                          int lane) {
  return tile + (k0 + (lane & 7) + (lane >> 4) * 8) * S + row0 + ((lane >> 3) & 1) * 8;
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

// acc[16 x 8*NT] += a (one 16 x 16 A fragment, k columns k0..) * B^T, B stored [n][k] in b_tile.
template <int S, int NT>
__device__ __forceinline__ void mma_frag_b_nk(float (&acc)[NT][4], const std::uint32_t (&a)[4],
                                              const bf16_bits* b_tile, int k0, int lane) {
#pragma unroll
  for (int n2 = 0; n2 < NT / 2; ++n2) {
    std::uint32_t b[4];
    ldmatrix_x4(b, b_frag_ptr_nk<S>(b_tile, n2 * 16, k0, lane));
    mma_bf16(acc[2 * n2], a, b[0], b[1]);
    mma_bf16(acc[2 * n2 + 1], a, b[2], b[3]);
  }
}

// acc[16 x 8*NT] += A (16 x 16*KT from a_tile rows a_row0..) * B^T, B stored [n][k] in b_tile.
template <int S, int KT, int NT>
__device__ __forceinline__ void mma_a_smem_b_nk(float (&acc)[NT][4], const bf16_bits* a_tile,
                                                int a_row0, const bf16_bits* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < KT; ++kk) {
    std::uint32_t a[4];
    ldmatrix_x4(a, a_frag_ptr<S>(a_tile, a_row0, kk * 16, lane));
    mma_frag_b_nk<S, NT>(acc, a, b_tile, kk * 16, lane);
  }
}

// The same with A already in registers (KT fragments along k).
template <int S, int KT, int NT>
__device__ __forceinline__ void mma_a_regs_b_nk(float (&acc)[NT][4],
                                                const std::uint32_t (&a)[KT][4],
                                                const bf16_bits* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < KT; ++kk) mma_frag_b_nk<S, NT>(acc, a[kk], b_tile, kk * 16, lane);
}

// acc[16 x 8*NT] += a (one 16 x 16 A fragment, k rows k0..) * B (columns n0..), B stored [k][n].
template <int S, int NT>
__device__ __forceinline__ void mma_frag_b_kn(float (&acc)[NT][4], const std::uint32_t (&a)[4],
                                              const bf16_bits* b_tile, int k0, int n0, int lane) {
#pragma unroll
  for (int n2 = 0; n2 < NT / 2; ++n2) {
    std::uint32_t b[4];
    ldmatrix_x4_trans(b, b_frag_ptr_kn<S>(b_tile, k0, n0 + n2 * 16, lane));
    mma_bf16(acc[2 * n2], a, b[0], b[1]);
    mma_bf16(acc[2 * n2 + 1], a, b[2], b[3]);
  }
}

// For each of a warp's MT row tiles m: acc[m] blocks 2 n2 and 2 n2 + 1 += a[m] * the two 8-column
// B blocks of one ldmatrix_x4 (b), so that B fragments loaded once feed every row tile.
template <int MT, int NB>
__device__ __forceinline__ void mma_row_tiles(float (&acc)[MT][NB][4],
                                              const std::uint32_t (&a)[MT][4],
                                              const std::uint32_t (&b)[4], int n2) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    mma_bf16(acc[mt][2 * n2], a[mt], b[0], b[1]);
    mma_bf16(acc[mt][2 * n2 + 1], a[mt], b[2], b[3]);
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
    mma_frag_b_kn<S, NT>(acc, a, b_tile, kk * 16, 0, lane);
  }
}

// ---- tile movement -----------------------------------------------------------------------

// Rows row0.. of one head (row stride `stride` elements) -> a tile of ROWS x HD in shared memory,
// 16 bytes per cp.async; element (r, col) goes to tile + offset(r, col), the tile's layout.
// Rows >= seq_len are zero-filled (source size 0), so masked products never meet stale NaN
// bits; their address is clamped to the last row, inside the tensor, so no branch picks
// between two pointers per chunk (that select compiled to branches, constant reloads and moves
// around every copy: docs/performance.md, "Attention"). The caller commits.
template <int HD, int ROWS, int THREADS, typename Offset>
__device__ __forceinline__ void load_tile_chunks(bf16_bits* tile, const bf16_bits* head,
                                                 std::int64_t stride, int row0, int seq_len,
                                                 Offset offset) {
  constexpr int kChunksPerRow = HD / 8;
  constexpr int kChunks = ROWS * kChunksPerRow;
  static_assert(kChunks % THREADS == 0, "tile chunks must split evenly over the threads");
#pragma unroll
  for (int i = 0; i < kChunks / THREADS; ++i) {
    const int c = static_cast<int>(threadIdx.x) + i * THREADS;
    const int r = c / kChunksPerRow, col = (c % kChunksPerRow) * 8;
    const int row = row0 + r;
    const bf16_bits* src = head + static_cast<std::int64_t>(min(row, seq_len - 1)) * stride + col;
    cp_async_16(tile + offset(r, col), src, row < seq_len);
  }
}

// The row-major tile [ROWS][S] of the mma.sync kernels.
template <int HD, int S, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile(bf16_bits* tile, const bf16_bits* head,
                                          std::int64_t stride, int row0, int seq_len) {
  load_tile_chunks<HD, ROWS, THREADS>(tile, head, stride, row0, seq_len,
                                      [](int r, int col) { return r * S + col; });
}

// f32 values [rows] at v[row0..], zero past seq_len.
template <int ROWS, int THREADS>
__device__ __forceinline__ void load_row_stats(float* dst, const float* v, int row0, int seq_len) {
  // A trip count known at compile time: a loop over r < ROWS from threadIdx.x compiles to a
  // general loop with an unrolled remainder, ~60 instructions per call for one or two rows.
#pragma unroll
  for (int k = 0; k < (ROWS + THREADS - 1) / THREADS; ++k) {
    const int r = static_cast<int>(threadIdx.x) + k * THREADS;
    if (ROWS % THREADS != 0 && r >= ROWS) break;
    // Past the end: zero-filled, from an address clamped to the last row (no pointer select).
    cp_async_4(dst + r, v + min(row0 + r, seq_len - 1), row0 + r < seq_len);
  }
}

// The CTA barrier of a double-buffered cp.async walk, before a step reads its tile: this
// thread's copies have landed, and past the barrier every thread's have and no warp reads the
// other buffer any more, so the next tile's copies may refill it.
__device__ __forceinline__ void tile_walk_barrier() {
  cp_async_wait_all();
  __syncthreads();
}

// A warp's 16 x HD accumulator (times `mul`) -> bf16 rows of its own tile region -> global rows
// row0.. (those < seq_len), with 16-byte stores. The staging rows belong to this warp alone.
// Returns the largest amax key among the values this lane stored (detail::amax_key_bf16): the
// bits that reach memory, so rows past seq_len, computed but never stored, do not count.
template <int HD, int S, int NT>
__device__ __forceinline__ std::uint32_t store_warp_rows(const float (&acc)[NT][4],
                                                         const float (&mul)[2], bf16_bits* stage,
                                                         bf16_bits* head, std::int64_t stride,
                                                         int row0, int seq_len, int lane) {
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
  std::uint32_t key = 0;
#pragma unroll
  for (int i = 0; i < 16 * kChunksPerRow / 32; ++i) {
    const int ci = lane + i * 32;
    const int r = ci / kChunksPerRow, col = (ci % kChunksPerRow) * 8;
    if (row0 + r < seq_len) {
      const uint4 v = *reinterpret_cast<const uint4*>(stage + r * S + col);
      *reinterpret_cast<uint4*>(head + static_cast<std::int64_t>(row0 + r) * stride + col) = v;
      const std::uint32_t words[4] = {v.x, v.y, v.z, v.w};
      key = max(key, detail::amax_key_bf16_words(words));
    }
  }
  return key;
}

// dQ (times the softmax scale) of a warp's 16 query rows from row_w0 into dq_head
// (store_warp_rows).
template <int HD, int S>
__device__ __forceinline__ std::uint32_t store_dq_rows(const float (&dq)[HD / 8][4], float scale,
                                                       bf16_bits* stage, bf16_bits* dq_head,
                                                       std::int64_t stride, int row_w0, int seq_len,
                                                       int lane) {
  const float q_mul[2] = {scale, scale};
  return store_warp_rows<HD, S, HD / 8>(dq, q_mul, stage, dq_head, stride, row_w0, seq_len, lane);
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

// A query-tile CTA's view of its head (the forward kernels and the dQ kernels): its first query
// row q0 (long rows first: the last tiles, which walk the most keys, start first), the head's q,
// k and v rows, and how many key tiles of BC it walks (those up to its last row's diagonal).
struct QueryTileHead {
  HeadView hv;
  std::int64_t d_model;
  const bf16_bits* q;
  const bf16_bits* k;
  const bf16_bits* v;
  int q0, n_key_tiles;
};

// Its first query row, q0.
template <int BR>
__device__ __forceinline__ int query_tile_row0() {
  return (static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x)) * BR;
}

// How many key tiles of BC the query tile of BR rows from q0 walks.
template <int BR, int BC>
__device__ __forceinline__ int key_tiles_to_diagonal(int q0, int seq_len) {
  return (min(q0 + BR, seq_len) - 1) / BC + 1;
}

template <int HD, int BR, int BC>
__device__ __forceinline__ QueryTileHead query_tile_head(const bf16_bits* qkv, int bh, int seq_len,
                                                         int n_heads) {
  const int q0 = query_tile_row0<BR>();
  const HeadView hv = head_view(bh, seq_len, n_heads, HD);
  const std::int64_t d_model = static_cast<std::int64_t>(n_heads) * HD;
  const bf16_bits* q = qkv + hv.qkv_head;
  return {
      hv, d_model, q, q + d_model, q + 2 * d_model, q0, key_tiles_to_diagonal<BR, BC>(q0, seq_len)};
}

// Key and value rows row0.. of a query-tile CTA's head into buffer `buf` of its double-buffered
// row-major tiles k and v ([2][BC][S]; cp.async, the caller commits).
template <int HD, int S, int BC, int THREADS>
__device__ __forceinline__ void load_key_tiles(bf16_bits* k, bf16_bits* v,
                                               const QueryTileHead& head, int row0, int buf,
                                               int seq_len) {
  load_tile<HD, S, BC, THREADS>(k + buf * BC * S, head.k, head.hv.qkv_stride, row0, seq_len);
  load_tile<HD, S, BC, THREADS>(v + buf * BC * S, head.v, head.hv.qkv_stride, row0, seq_len);
}

// The statistics of this lane's two query rows in the dQ kernels (rows g and g + 8 of the warp's
// 16 from row_w0, head bh): lse in base 2 and Di, both 0 past the end of the sequence.
__device__ __forceinline__ void lane_row_stats(const float* lse, const float* row_dot, int bh,
                                               int seq_len, int row_w0, int g,
                                               float (&lse_log2)[2], float (&dot)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row_w0 + g + 8 * r;
    const std::int64_t at = static_cast<std::int64_t>(bh) * seq_len + row;
    lse_log2[r] = row < seq_len ? lse[at] * kLog2e : 0.f;
    dot[r] = row < seq_len ? row_dot[at] : 0.f;
  }
}

// P (or P^T) of one MMA accumulator tile (NB blocks of 8 columns) in place of S in registers.
// Per accumulator element e of block j: masked(j, e) (causal or past the end) gives P = 0;
// lse_log2(j, e) is its query's log-sum-exp in base 2.
template <int NB, typename Masked, typename LseLog2>
__device__ __forceinline__ void probs_tile(float (&s)[NB][4], float scale_log2, Masked masked,
                                           LseLog2 lse_log2) {
#pragma unroll
  for (int j = 0; j < NB; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float p = fast_exp2(fmaf(s[j][e], scale_log2, -lse_log2(j, e)));
      s[j][e] = masked(j, e) ? 0.f : p;
    }
}

// probs_tile with the mask tested only where the tile needs it (need_mask: the tile crosses
// the diagonal or the end; uniform over the warp or warpgroup). Folding need_mask into the
// per-element test instead compiles to a branch and ~8 integer instructions per element on
// every step, about a quarter of the wgmma dK/dV kernel's loop (docs/performance.md, "Attention").
template <int NB, typename Masked, typename LseLog2>
__device__ __forceinline__ void probs(float (&s)[NB][4], float scale_log2, bool need_mask,
                                      Masked masked, LseLog2 lse_log2) {
  if (need_mask)
    probs_tile(s, scale_log2, masked, lse_log2);
  else
    probs_tile(
        s, scale_log2, [](int, int) { return false; }, lse_log2);
}

// One key tile's step of the online softmax for a lane's two rows (g and g + 8 of its 16-row MMA
// tile): the raw scores s (masked ones -inf) become P = exp(s - new max) in place, the running
// max and this lane's partial row sums advance, and O is rescaled by exp(old max - new max)
// (where some row of the warp has a new max; elsewhere the factor is exactly 1).
// The sums stay per-thread partials (the rescale is linear), reduced over the quad at the end.
// Both forward kernels (mma.sync and wgmma) step through here, so they round alike.
template <int NB, int NO>
__device__ __forceinline__ void online_softmax_step(float (&s)[NB][4], float (&o)[NO][4],
                                                    float (&row_max)[2], float (&row_sum)[2],
                                                    float scale_log2) {
  float correction[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float mx = row_max[r];
#pragma unroll
    for (int nt = 0; nt < NB; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
    correction[r] = fast_exp2((row_max[r] - mx) * scale_log2);  // 0 at first
    row_max[r] = mx;
    const float bias = mx * scale_log2;
    float sum = 0.f;
#pragma unroll
    for (int nt = 0; nt < NB; ++nt)
#pragma unroll
      for (int e = 2 * r; e < 2 * r + 2; ++e) {
        const float p = fast_exp2(fmaf(s[nt][e], scale_log2, -bias));
        s[nt][e] = p;
        sum += p;
      }
    row_sum[r] = row_sum[r] * correction[r] + sum;
  }
  // O's rescale (NO x 4 multiplies per lane), skipped when no row of the warp has a new
  // maximum: every correction is then exactly 1, and o * 1 == o, so the skip changes no bit.
  if (__any_sync(0xFFFFFFFFu, correction[0] != 1.f || correction[1] != 1.f)) {
#pragma unroll
    for (int nt = 0; nt < NO; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[nt][e] *= correction[e >> 1];
  }
}

// ---- producer-fused amax ------------------------------------------------------------------
// The amax of an attention output (AmaxOut) as the kernels that store it commit it: every CTA
// that passes the (batch, head) check commits the largest key its threads stored, `blocks` of
// them in all over every kernel writing the tensor (the two-pass backward writes d_qkv from two
// kernels), and the last to commit finalises the meta (detail::commit_block_amax). One warp
// reduction, one atomicMax and one ticket per CTA: nothing next to the CTA's tile GEMMs.
// Deferred (AmaxOut::deferred): one atomicMax per warp (detail::accumulate_warp_amax), with no
// CTA round and no ticket, so a warp-specialised CTA's consumers need not wait for its producer.
struct AmaxCommit {
  Fp8Meta* meta = nullptr;  // null: no amax
  Fp8Format format = Fp8Format::e4m3;
  unsigned blocks = 0;
  bool deferred = false;
  // By every thread of the CTA, after its last store (the ticket's protocol contains
  // __syncthreads; the deferred one synchronises nothing beyond the warp).
  __device__ __forceinline__ void operator()(std::uint32_t key) const {
    if (meta == nullptr) return;
    if (deferred)
      detail::accumulate_warp_amax(key, meta);
    else
      detail::commit_block_amax(key, meta, format, blocks);
  }
};

// A producer's AmaxOut as the commit of `blocks` CTAs (over every kernel writing the tensor).
inline AmaxCommit amax_commit(const AmaxOut& amax, unsigned blocks) {
  return {amax.meta, amax.format, blocks, amax.deferred};
}

// ---- kernel parameters ---------------------------------------------------------------------
// Every attention kernel's parameters, in the order launch_attention_forward and
// launch_attention_backward pass them; `Input` declares qkv (the backward's also dout) as the
// kernel reads it: bf16 rows or a TMA tensor map. A list, not a struct: at the same parameter
// offsets a struct parameter still compiles to other code (loads through its pointers lose the
// form __restrict__ gives them; its fields are read differently).
#define FP8LAB_ATTENTION_FORWARD_PARAMS(Input)                                                   \
  Input qkv, bf16_bits *__restrict__ out, float *__restrict__ lse, int batch_heads, int seq_len, \
      int n_heads, float scale, float scale_log2, AmaxCommit out_amax
#define FP8LAB_ATTENTION_BACKWARD_PARAMS(Input)                                             \
  Input qkv, Input dout, const float *__restrict__ lse, const float *__restrict__ row_dot,  \
      bf16_bits *__restrict__ dqkv, int batch_heads, int seq_len, int n_heads, float scale, \
      float scale_log2, AmaxCommit dqkv_amax

// ---- launch helpers ----------------------------------------------------------------------

// Grid (tiles, batch*heads) with batch*heads split over y and z (y is capped at 65535).
inline dim3 attention_grid(int tiles, int batch_heads) {
  const int y = batch_heads < kMaxGridY ? batch_heads : kMaxGridY;
  return dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(y),
              static_cast<unsigned>((batch_heads + y - 1) / y));
}

// The CTAs of an attention_grid(tiles, batch_heads) launch that get past the (batch, head)
// check and so commit an amax: the grid's z rounding adds CTAs that return at once.
inline unsigned committing_blocks(int tiles, int batch_heads) {
  return static_cast<unsigned>(tiles) * static_cast<unsigned>(batch_heads);
}

// An attention call with no rows (batch 0) stores nothing, but a slot still gets the amax of
// nothing (0) and its scale: amax_scale's own pass over zero elements, the definition itself.
inline void amax_of_no_output(AmaxOut amax, cudaStream_t stream) {
  if (amax.meta != nullptr)
    detail::launch_amax_scale(nullptr, ElemType::bf16, 0, amax.format, amax.meta, 1, stream);
}

template <typename Kernel>
void allow_dynamic_smem(Kernel kernel, int bytes) {
  // Above 48 KiB a kernel must opt in; per function and device, so set it at every launch (the
  // launch itself reports a failure here).
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

inline float softmax_scale(int head_dim) { return 1.f / std::sqrt(static_cast<float>(head_dim)); }

// A kernel launched over tiles of `rows` query or key rows per CTA.
template <typename Kernel>
struct TileLaunch {
  Kernel kernel;
  int rows, threads, smem_bytes;
  int tiles(int seq_len) const { return (seq_len + rows - 1) / rows; }
};

// A forward kernel with FP8LAB_ATTENTION_FORWARD_PARAMS (qkv as the kernel takes it: bf16 rows
// or a tensor map), its amax committed by every CTA.
template <typename Kernel, typename Qkv>
void launch_attention_forward(const TileLaunch<Kernel>& fwd, Qkv qkv, void* out, float* lse,
                              int batch, int seq_len, int n_heads, int head_dim,
                              cudaStream_t stream, AmaxOut amax) {
  const int batch_heads = batch * n_heads;
  const float scale = softmax_scale(head_dim);
  const int tiles = fwd.tiles(seq_len);
  allow_dynamic_smem(fwd.kernel, fwd.smem_bytes);
  fwd.kernel<<<attention_grid(tiles, batch_heads), fwd.threads, fwd.smem_bytes, stream>>>(
      qkv, static_cast<bf16_bits*>(out), lse, batch_heads, seq_len, n_heads, scale, scale * kLog2e,
      amax_commit(amax, committing_blocks(tiles, batch_heads)));
}

// A backward's dK/dV kernel over key tiles and its dQ kernel over query tiles, both with
// FP8LAB_ATTENTION_BACKWARD_PARAMS (qkv and dout as the kernels take them). One amax over both
// kernels' stores: the tickets count the CTAs of both grids.
template <typename KvKernel, typename QKernel, typename Qkv, typename Dout>
void launch_attention_backward(const TileLaunch<KvKernel>& kv, const TileLaunch<QKernel>& q,
                               Qkv qkv, const float* lse, Dout dout, const float* row_dot,
                               void* dqkv, int batch, int seq_len, int n_heads, int head_dim,
                               cudaStream_t stream, AmaxOut amax) {
  auto* dqkv_b = static_cast<bf16_bits*>(dqkv);
  const int batch_heads = batch * n_heads;
  const float scale = softmax_scale(head_dim);
  const int kv_tiles = kv.tiles(seq_len), q_tiles = q.tiles(seq_len);
  const AmaxCommit dqkv_amax = amax_commit(
      amax, committing_blocks(kv_tiles, batch_heads) + committing_blocks(q_tiles, batch_heads));
  allow_dynamic_smem(kv.kernel, kv.smem_bytes);
  kv.kernel<<<attention_grid(kv_tiles, batch_heads), kv.threads, kv.smem_bytes, stream>>>(
      qkv, dout, lse, row_dot, dqkv_b, batch_heads, seq_len, n_heads, scale, scale * kLog2e,
      dqkv_amax);
  allow_dynamic_smem(q.kernel, q.smem_bytes);
  q.kernel<<<attention_grid(q_tiles, batch_heads), q.threads, q.smem_bytes, stream>>>(
      qkv, dout, lse, row_dot, dqkv_b, batch_heads, seq_len, n_heads, scale, scale * kLog2e,
      dqkv_amax);
}

}  // namespace
}  // namespace fp8lab::cuda_ops
