// RMSNorm forward and backward of the CUDA backend (nn/cuda_ops_launch.hpp); the arithmetic of
// the CPU reference, src/nn/cpu_rmsnorm.cpp:
//   rstd = 1 / sqrt(sum(x^2) / D + eps)   (sum in f64, rstd rounded to f32)
//   y    = x * (rstd * w)
//   dot  = sum_j dy_j w_j x_j              (f64)
//   dx  += (rstd w_j) dy_j - (dot rstd^3 / D) x_j
//   dw  += sum over rows of (dy_j x_j) rstd
// Products are spelled with __f*_rn intrinsics where nvcc would otherwise fuse a multiply and a
// subtraction into one FMA: the CPU build (baseline x86-64) rounds after each operation.
//
// Fast paths need D % 8 == 0 and 16-byte aligned pointers (8-element vectors); any other shape
// takes the scalar kernels, which compute the same values.
// The forward can also reduce the amax of the y it stores (AmaxOut): y is the input of the
// block's qkv or fc linear, which then need not read it again for its FP8 scale.
#include <cuda_runtime.h>

#include <cstdint>

#include "nn/cuda_ops_launch.hpp"
#include "nn/elementwise_access.cuh"  // load1/store1, load_n/store_n (kVec = 8), dispatch_type

namespace fp8lab::cuda_ops {
namespace {

constexpr int kWarpsPerBlock = 8;  // forward: one warp per row
constexpr int kBlockThreads = kWarpsPerBlock * 32;
// Backward: rows are split into at most kMaxChunks fixed chunks (a function of the row count
// only, so the dw sums do not depend on the GPU); each CTA writes one [D] partial of dw.
// 1024 chunks: many CTAs (short waves' tails) for a partial buffer of at most 32 KiB x 1024.
constexpr std::int64_t kMaxChunks = 1024;
// Forward: at most this many CTAs, their warps striding over the rows (each row's values do not
// depend on which warp computes it); it bounds the producer-fused amax's per-CTA atomics.
constexpr std::int64_t kMaxForwardBlocks = 4096;

// Butterfly sum over the warp: every lane ends with the same value (each step adds the same two
// numbers on both partners), in the same order every run.
__device__ __forceinline__ double warp_allsum(double v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}

// ---- forward: one warp per row ----------------------------------------------------------------

// One row by one warp; returns the largest amax key the lane stored.
template <bool kVectors, typename X, typename Y>
__device__ __forceinline__ std::uint32_t rmsnorm_row(const X* __restrict__ xr,
                                                     const float* __restrict__ w, float eps,
                                                     Y* __restrict__ yr, float* __restrict__ rstd,
                                                     int d, int lane) {
  double ss = 0.0;
  if constexpr (kVectors) {
    for (int g = lane; g < d / kVec; g += 32) {
      float v[kVec];
      load_n<kVec>(xr + g * kVec, v);
#pragma unroll
      for (int k = 0; k < kVec; ++k) ss += static_cast<double>(v[k]) * v[k];
    }
  } else {
    for (int j = lane; j < d; j += 32) {
      const float v = load1(xr + j);
      ss += static_cast<double>(v) * v;
    }
  }
  ss = warp_allsum(ss);
  const float r = static_cast<float>(1.0 / sqrt(ss / static_cast<double>(d) + eps));
  if (lane == 0) *rstd = r;

  // Second pass over the row (it is still in L1/L2): y = x * (r * w).
  std::uint32_t key = 0;
  if constexpr (kVectors) {
    for (int g = lane; g < d / kVec; g += 32) {
      float v[kVec], wv[kVec];
      load_n<kVec>(xr + g * kVec, v);
      load_n<kVec>(w + g * kVec, wv);
#pragma unroll
      for (int k = 0; k < kVec; ++k) v[k] = __fmul_rn(v[k], __fmul_rn(r, wv[k]));
      key = max(key, store_n<kVec>(yr + g * kVec, v));
    }
  } else {
    for (int j = lane; j < d; j += 32)
      key = max(key, store1(yr + j, __fmul_rn(load1(xr + j), __fmul_rn(r, w[j]))));
  }
  return key;
}

// Warps stride over the rows whole (the warp sums are never half-done), and every thread then
// reaches finish_amax, which synchronises the block.
template <typename X, typename Y, bool kVectors>
__global__ void __launch_bounds__(kBlockThreads)
    rmsnorm_forward_kernel(const X* __restrict__ x, const float* __restrict__ w, float eps,
                           Y* __restrict__ y, float* __restrict__ rstd, std::int64_t rows, int d,
                           AmaxOut amax) {
  const int lane = threadIdx.x & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  std::uint32_t key = 0;
  for (std::int64_t row =
           static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       row < rows; row += stride) {
    key = max(key, rmsnorm_row<kVectors>(x + row * d, w, eps, y + row * d, rstd + row, d, lane));
  }
  finish_amax(key, amax);
}

// ---- backward ---------------------------------------------------------------------------------

struct Chunking {
  std::int64_t rows_per_chunk;
  std::int64_t chunks;
};

// A function of the row count only: the partition, and so the dw sums, are the same on any GPU.
Chunking chunking(std::int64_t rows) {
  if (rows <= 0) return {1, 0};
  const std::int64_t n = rows < kMaxChunks ? rows : kMaxChunks;
  const std::int64_t per = (rows + n - 1) / n;
  return {per, (rows + per - 1) / per};
}

// dx element: (r w) dy - coef x, two roundings of products then one subtraction, as on the CPU.
__device__ __forceinline__ float dx_value(float r, float w, float g, float coef, float xv) {
  return __fsub_rn(__fmul_rn(__fmul_rn(r, w), g), __fmul_rn(coef, xv));
}

// coef = dot r^3 / D with the CPU's rounding order ((float(dot) r) r) r / D.
__device__ __forceinline__ float dx_coef(double dot, float r, int d) {
  return __fdiv_rn(__fmul_rn(__fmul_rn(__fmul_rn(static_cast<float>(dot), r), r), r),
                   static_cast<float>(d));
}

__device__ __forceinline__ float accumulate_value(float old, float add) { return __fadd_rn(old, add); }

// Sums kRows doubles per thread over the block; every thread gets the totals. Warp sums in a
// fixed butterfly, then the warps' sums added in warp order: the same bits every run.
template <int kRows>
__device__ __forceinline__ void block_allsum(double (&v)[kRows]) {
  __shared__ double warp_sums[kRows][kWarpsPerBlock];
#pragma unroll
  for (int r = 0; r < kRows; ++r) v[r] = warp_allsum(v[r]);
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) warp_sums[r][threadIdx.x >> 5] = v[r];
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    double s = 0.0;
    for (int wi = 0; wi < kWarpsPerBlock; ++wi) s += warp_sums[r][wi];
    v[r] = s;
  }
  __syncthreads();  // warp_sums is reused by the next call
}

// Fast path. CTA c handles chunk c, rows [c * per, min(rows, (c + 1) * per)). Its 8 warps form
// teams of `team_warps` warps (the fewest that cover the row with kGroups 8-column groups per
// thread: 1 warp for D <= 512, 2 for 1024, 4 for 2048); a team handles one row at a time, team i
// taking rows begin + i, begin + i + teams, ... (a fixed assignment). Thread t of a team owns the
// groups t, t + team_threads, ... (< D / 8), so a row lives in registers: x, dy and the old dx
// are loaded together (the whole row in flight at once: 5 KiB per warp for f32 x, bf16 dy, f32
// dx), the dot product is a warp butterfly plus, for multi-warp teams, a sum of the warps' values
// in warp order. Warps of one-warp teams never wait for each other. Each thread keeps the dw sums
// of its columns in registers over its rows; at the end the teams' sums are added in team order
// in shared memory and written once to partial[c, :]. ~128 registers: 2 CTAs (16 warps, up to
// 80 KiB of loads) per SM, about twice the bytes in flight that HBM3e needs at full bandwidth.
template <typename X, typename G, typename DX, int kGroups>
__global__ void __launch_bounds__(kBlockThreads, kGroups <= 2 ? 2 : 1)
    rmsnorm_backward_vec_kernel(const X* __restrict__ x, const float* __restrict__ w,
                                const float* __restrict__ rstd, const G* __restrict__ dy,
                                DX* __restrict__ dx, float* __restrict__ partial,
                                std::int64_t rows, int d, std::int64_t rows_per_chunk,
                                int team_warps) {
  // [d] w, then [d] the teams' dw sums. w is read from shared memory on every row rather than
  // kept in registers (with its f64 copies the compiler would hoist): fewer registers, more CTAs.
  extern __shared__ float smem[];
  float* w_s = smem;
  float* dw_sum = smem + d;
  __shared__ double team_dots[2][kWarpsPerBlock];  // double-buffered by step parity
  const int team_threads = team_warps * 32;
  const int teams = kWarpsPerBlock / team_warps;
  const int team = threadIdx.x / team_threads;
  const int t = threadIdx.x % team_threads;
  const int warp = threadIdx.x >> 5;
  const int groups = d / kVec;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * rows_per_chunk;
  const std::int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
  // The same for every thread of the CTA: all reach every __syncthreads below.
  const std::int64_t steps = (end - begin + teams - 1) / teams;

  for (int j = threadIdx.x; j < groups; j += kBlockThreads) {
    float v[kVec];
    load_n<kVec>(w + j * kVec, v);
    store_n<kVec>(w_s + j * kVec, v);
  }
  __syncthreads();

  bool has[kGroups];
  float dw[kGroups][kVec];
#pragma unroll
  for (int k = 0; k < kGroups; ++k) {
    has[k] = t + k * team_threads < groups;
#pragma unroll
    for (int e = 0; e < kVec; ++e) dw[k][e] = 0.f;
  }

  for (std::int64_t s = 0; s < steps; ++s) {
    const std::int64_t m = begin + s * teams + team;
    const bool live = m < end;
    const std::int64_t base = (live ? m : 0) * d;
    float xv[kGroups][kVec], gv[kGroups][kVec], old[kGroups][kVec], wv[kGroups][kVec];
#pragma unroll
    for (int k = 0; k < kGroups; ++k) {
      const std::int64_t at = base + static_cast<std::int64_t>(t + k * team_threads) * kVec;
      if (live && has[k]) {
        load_n<kVec>(x + at, xv[k]);
        load_n<kVec>(dy + at, gv[k]);
        load_n<kVec>(dx + at, old[k]);
        load_n<kVec>(w_s + (t + k * team_threads) * kVec, wv[k]);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e) xv[k][e] = gv[k][e] = old[k][e] = wv[k][e] = 0.f;
      }
    }
    const float rr = live ? rstd[m] : 0.f;

    double dot = 0.0;
#pragma unroll
    for (int k = 0; k < kGroups; ++k) {
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        dot = __dadd_rn(dot, __dmul_rn(__dmul_rn(gv[k][e], wv[k][e]), xv[k][e]));
      }
    }
    dot = warp_allsum(dot);
    if (team_warps > 1) {  // uniform over the CTA
      double* slot = team_dots[s & 1];
      if ((threadIdx.x & 31) == 0) slot[warp] = dot;
      __syncthreads();
      // Reading slot here and writing it again two steps later is safe: the next step's
      // __syncthreads lies between the two.
      dot = 0.0;
      for (int i = 0; i < team_warps; ++i) dot += slot[team * team_warps + i];
    }
    if (!live) continue;
    const float coef = dx_coef(dot, rr, d);
#pragma unroll
    for (int k = 0; k < kGroups; ++k) {
      if (!has[k]) continue;
      float out[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        out[e] = accumulate_value(old[k][e], dx_value(rr, wv[k][e], gv[k][e], coef, xv[k][e]));
        dw[k][e] = __fadd_rn(dw[k][e], __fmul_rn(__fmul_rn(gv[k][e], xv[k][e]), rr));
      }
      store_n<kVec>(dx + base + static_cast<std::int64_t>(t + k * team_threads) * kVec, out);
    }
  }

  // dw of the chunk: team 0's sums, plus team 1's, ... in team order.
  for (int i = 0; i < teams; ++i) {
    if (team == i) {
#pragma unroll
      for (int k = 0; k < kGroups; ++k) {
        if (!has[k]) continue;
        float* p = dw_sum + (t + k * team_threads) * kVec;
#pragma unroll
        for (int e = 0; e < kVec; ++e) p[e] = i == 0 ? dw[k][e] : __fadd_rn(p[e], dw[k][e]);
      }
    }
    __syncthreads();
  }
  float* out = partial + static_cast<std::int64_t>(blockIdx.x) * d;
  for (int j = threadIdx.x; j < groups; j += kBlockThreads) {
    const float* p = dw_sum + j * kVec;
    reinterpret_cast<float4*>(out + j * kVec)[0] = make_float4(p[0], p[1], p[2], p[3]);
    reinterpret_cast<float4*>(out + j * kVec)[1] = make_float4(p[4], p[5], p[6], p[7]);
  }
}

// Any D and alignment: the same chunks, one row at a time; thread t owns columns t, t + 256, ...
// and accumulates its dw columns directly in partial[c, :] (no other thread touches them).
template <typename X, typename G, typename DX>
__global__ void __launch_bounds__(kBlockThreads)
    rmsnorm_backward_scalar_kernel(const X* __restrict__ x, const float* __restrict__ w,
                                   const float* __restrict__ rstd, const G* __restrict__ dy,
                                   DX* __restrict__ dx, float* __restrict__ partial,
                                   std::int64_t rows, int d, std::int64_t rows_per_chunk) {
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * rows_per_chunk;
  const std::int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
  float* dw = partial + static_cast<std::int64_t>(blockIdx.x) * d;
  for (int j = threadIdx.x; j < d; j += kBlockThreads) dw[j] = 0.f;
  for (std::int64_t m = begin; m < end; ++m) {
    const X* xr = x + m * d;
    const G* gr = dy + m * d;
    double dot[1] = {0.0};
    for (int j = threadIdx.x; j < d; j += kBlockThreads) {
      dot[0] = __dadd_rn(dot[0], __dmul_rn(__dmul_rn(load1(gr + j), w[j]), load1(xr + j)));
    }
    block_allsum<1>(dot);
    const float rr = rstd[m];
    const float coef = dx_coef(dot[0], rr, d);
    DX* dxr = dx + m * d;
    for (int j = threadIdx.x; j < d; j += kBlockThreads) {
      const float xv = load1(xr + j), gv = load1(gr + j);
      store1(dxr + j, accumulate_value(load1(dxr + j), dx_value(rr, w[j], gv, coef, xv)));
      dw[j] = __fadd_rn(dw[j], __fmul_rn(__fmul_rn(gv, xv), rr));
    }
  }
}

// dw[j] += sum over chunks c of partial[c, j]. Block: 32 columns x 32 slices; slice s sums chunks
// s, s + 32, ... in order (8 loads in flight, the partials are fresh in L2), then the slice sums
// are added in slice order: a fixed tree.
constexpr int kReduceSlices = 32;
constexpr int kReduceLoads = 8;

__global__ void __launch_bounds__(32 * kReduceSlices)
    rmsnorm_dw_reduce_kernel(const float* __restrict__ partial, std::int64_t chunks, int d,
                             float* __restrict__ dw_accum) {
  __shared__ float slice_sums[kReduceSlices][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const int slice = threadIdx.y;
  float s = 0.f;
  if (col < d) {
    std::int64_t c = slice;
    for (; c + (kReduceLoads - 1) * kReduceSlices < chunks; c += kReduceLoads * kReduceSlices) {
      float v[kReduceLoads];
#pragma unroll
      for (int i = 0; i < kReduceLoads; ++i) v[i] = partial[(c + i * kReduceSlices) * d + col];
#pragma unroll
      for (int i = 0; i < kReduceLoads; ++i) s = __fadd_rn(s, v[i]);
    }
    for (; c < chunks; c += kReduceSlices) s = __fadd_rn(s, partial[c * d + col]);
  }
  slice_sums[slice][threadIdx.x] = s;
  __syncthreads();
  if (slice == 0 && col < d) {
    float total = 0.f;
    for (int i = 0; i < kReduceSlices; ++i) total = __fadd_rn(total, slice_sums[i][threadIdx.x]);
    dw_accum[col] = __fadd_rn(dw_accum[col], total);
  }
}

// Fast-path shape: kGroups 8-column groups per thread and team_warps warps per row, the fewest
// warps that cover the row (more rows in flight per CTA), then more groups per thread.
struct VecShape {
  int groups_per_thread;  // 2 or 4; 0: the row does not fit, take the scalar kernel
  int team_warps;
};

VecShape vec_shape(int d) {
  const int groups = d / kVec;
  for (int team_warps = 1; team_warps <= kWarpsPerBlock; team_warps *= 2) {
    if (groups <= 2 * 32 * team_warps) return {2, team_warps};
  }
  if (groups <= 4 * kBlockThreads) return {4, kWarpsPerBlock};
  return {0, 0};
}

template <typename X, typename G, typename DX, int kGroups>
void launch_backward_vec(const void* x, const float* w, const float* rstd, const void* dy,
                         void* dx, float* partial, std::int64_t rows, int d, Chunking ch,
                         int team_warps, cudaStream_t stream) {
  const std::size_t smem = 2 * static_cast<std::size_t>(d) * sizeof(float);  // <= 64 KiB
  if (smem > 48 * 1024) {  // past the default limit (D > 6144) the kernel must opt in
    cudaFuncSetAttribute(rmsnorm_backward_vec_kernel<X, G, DX, kGroups>,
                         cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  }
  rmsnorm_backward_vec_kernel<X, G, DX, kGroups>
      <<<static_cast<unsigned>(ch.chunks), kBlockThreads, smem, stream>>>(
          static_cast<const X*>(x), w, rstd, static_cast<const G*>(dy), static_cast<DX*>(dx),
          partial, rows, d, ch.rows_per_chunk, team_warps);
}

}  // namespace

void rmsnorm_forward(const void* x, ElemType x_type, const float* w, float eps, void* y,
                     ElemType y_type, float* rstd, std::int64_t rows, int d_model,
                     cudaStream_t stream, AmaxOut amax) {
  if (rows <= 0 || d_model <= 0) {
    if (!amax.meta) return;
    rows = 0;  // nothing to normalise, but the empty output's amax (0) still gets its scale
  }
  const bool vec = d_model % kVec == 0 && aligned16(x) && aligned16(y) && aligned16(w);
  const std::int64_t row_blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const auto blocks = static_cast<unsigned>(
      row_blocks < 1 ? 1 : (row_blocks > kMaxForwardBlocks ? kMaxForwardBlocks : row_blocks));
  dispatch_type(x_type, [&](auto xt) {
    dispatch_type(y_type, [&](auto yt) {
      using X = decltype(xt);
      using Y = decltype(yt);
      if (vec) {
        rmsnorm_forward_kernel<X, Y, true><<<blocks, kBlockThreads, 0, stream>>>(
            static_cast<const X*>(x), w, eps, static_cast<Y*>(y), rstd, rows, d_model, amax);
      } else {
        rmsnorm_forward_kernel<X, Y, false><<<blocks, kBlockThreads, 0, stream>>>(
            static_cast<const X*>(x), w, eps, static_cast<Y*>(y), rstd, rows, d_model, amax);
      }
    });
  });
}

std::size_t rmsnorm_backward_workspace_bytes(std::int64_t rows, int d_model) {
  const Chunking ch = chunking(rows);
  return static_cast<std::size_t>(ch.chunks) * static_cast<std::size_t>(d_model > 0 ? d_model : 0) *
         sizeof(float);
}

void rmsnorm_backward(const void* x, ElemType x_type, const float* w, const float* rstd,
                      const void* dy, ElemType dy_type, void* dx_accum, ElemType dx_type,
                      float* dw_accum, std::int64_t rows, int d_model, void* workspace,
                      cudaStream_t stream) {
  if (rows <= 0 || d_model <= 0) return;
  const Chunking ch = chunking(rows);
  auto* partial = static_cast<float*>(workspace);
  const VecShape shape = d_model % kVec == 0 ? vec_shape(d_model) : VecShape{0, 0};
  const bool vec = shape.groups_per_thread != 0 && aligned16(x) && aligned16(dy) &&
                   aligned16(dx_accum) && aligned16(w) && aligned16(workspace);
  dispatch_type(x_type, [&](auto xt) {
    dispatch_type(dy_type, [&](auto gt) {
      dispatch_type(dx_type, [&](auto dt) {
        using X = decltype(xt);
        using G = decltype(gt);
        using DX = decltype(dt);
        if (!vec) {
          rmsnorm_backward_scalar_kernel<X, G, DX>
              <<<static_cast<unsigned>(ch.chunks), kBlockThreads, 0, stream>>>(
                  static_cast<const X*>(x), w, rstd, static_cast<const G*>(dy),
                  static_cast<DX*>(dx_accum), partial, rows, d_model, ch.rows_per_chunk);
        } else if (shape.groups_per_thread == 2) {  // D <= 4096
          launch_backward_vec<X, G, DX, 2>(x, w, rstd, dy, dx_accum, partial, rows, d_model, ch,
                                           shape.team_warps, stream);
        } else {  // D <= 8192
          launch_backward_vec<X, G, DX, 4>(x, w, rstd, dy, dx_accum, partial, rows, d_model, ch,
                                           shape.team_warps, stream);
        }
      });
    });
  });
  const dim3 block(32, kReduceSlices);
  const auto col_blocks = static_cast<unsigned>((d_model + 31) / 32);
  rmsnorm_dw_reduce_kernel<<<col_blocks, block, 0, stream>>>(partial, ch.chunks, d_model,
                                                             dw_accum);
}

}  // namespace fp8lab::cuda_ops
