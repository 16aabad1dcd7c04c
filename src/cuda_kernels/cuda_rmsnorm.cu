// RMSNorm forward and backward of the CUDA backend (cuda_kernels/cuda_ops_launch.hpp); the
// arithmetic of the CPU reference, src/cpu_backend/cpu_rmsnorm.cpp:
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
// block's qkv or fc linear, which then need not read it again for its FP8 scale. The backward can
// also store the bf16 copy of the new dx with its amax (rmsnorm_backward_and_convert): the next
// projection's dY, which then needs no convert pass. The forward with the residual add fused in
// front is in cuda_add_rmsnorm.cu; both forwards share cuda_kernels/rmsnorm_rows.cuh.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_kernels/cuda_ops_launch.hpp"
#include "cuda_kernels/elementwise_access.cuh"  // load/store (kVec = 8), dispatch_type
#include "cuda_kernels/rmsnorm_rows.cuh"

namespace fp8lab::cuda_ops {
namespace {

using rmsnorm::kBlockThreads;
using rmsnorm::kWarpsPerBlock;
using rmsnorm::warp_allsum;

// Backward: rows are split into at most kMaxChunks fixed chunks (a function of the row count
// only, so the dw sums do not depend on the GPU); each CTA writes one [D] partial of dw.
// 1024 chunks: many CTAs (short waves' tails) for a partial buffer of at most 32 KiB x 1024.
constexpr std::int64_t kMaxChunks = 1024;

// ---- forward: one warp per row (cuda_kernels/rmsnorm_rows.cuh) ----------------------------------

// Every thread reaches finish_amax, which synchronises the block.
template <typename X, typename Y, bool kVectors>
__global__ void __launch_bounds__(kBlockThreads)
    rmsnorm_forward_kernel(const X* __restrict__ x, const float* __restrict__ w, float eps,
                           Y* __restrict__ y, float* __restrict__ rstd, std::int64_t rows, int d,
                           AmaxOut amax) {
  const std::uint32_t key = rmsnorm::for_warp_rows(rows, [&](std::int64_t row, int lane) {
    const X* xr = x + row * d;
    auto from_x = [&](int j, auto& v) { load_n(xr + j, v); };
    const float r = rmsnorm::row_rstd<kVectors>(d, lane, eps, from_x);
    if (lane == 0) rstd[row] = r;
    return rmsnorm::row_store_scaled<kVectors>(d, lane, r, w, y + row * d, from_x);
  });
  finish_amax(key, amax);
}

// ---- backward ---------------------------------------------------------------------------------

// The backward's optional copy of the new dx rows (rmsnorm_backward_and_convert): bf16, with
// its producer-fused amax. Unused by the kernels instantiated without kCopy.
struct DxCopy {
  bf16_bits* out = nullptr;
  AmaxOut amax;
};

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

__device__ __forceinline__ float accumulate_value(float old, float add) {
  return __fadd_rn(old, add);
}

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
// kCopy: each new dx row is also stored to copy.out (the next linear's bf16 dY) from the same
// registers, and its amax reduced.
template <typename X, typename G, typename DX, int kGroups, bool kCopy>
__global__ void __launch_bounds__(kBlockThreads, kGroups <= 2 ? 2 : 1)
    rmsnorm_backward_vec_kernel(const X* __restrict__ x, const float* __restrict__ w,
                                const float* __restrict__ rstd, const G* __restrict__ dy,
                                DX* __restrict__ dx, float* __restrict__ partial, std::int64_t rows,
                                int d, std::int64_t rows_per_chunk, int team_warps, DxCopy copy) {
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
  std::uint32_t key = 0;  // the largest amax key of the copy this thread stored
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
      const std::int64_t at = base + static_cast<std::int64_t>(t + k * team_threads) * kVec;
      store_n<kVec>(dx + at, out);
      if constexpr (kCopy) key = max(key, store_n<kVec>(copy.out + at, out));
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
  if constexpr (kCopy) finish_amax(key, copy.amax);
}

// Any D and alignment: the same chunks, one row at a time; thread t owns columns t, t + 256, ...
// and accumulates its dw columns directly in partial[c, :] (no other thread touches them).
template <typename X, typename G, typename DX, bool kCopy>
__global__ void __launch_bounds__(kBlockThreads)
    rmsnorm_backward_scalar_kernel(const X* __restrict__ x, const float* __restrict__ w,
                                   const float* __restrict__ rstd, const G* __restrict__ dy,
                                   DX* __restrict__ dx, float* __restrict__ partial,
                                   std::int64_t rows, int d, std::int64_t rows_per_chunk,
                                   DxCopy copy) {
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * rows_per_chunk;
  const std::int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
  float* dw = partial + static_cast<std::int64_t>(blockIdx.x) * d;
  for (int j = threadIdx.x; j < d; j += kBlockThreads) dw[j] = 0.f;
  std::uint32_t key = 0;
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
      const float v = accumulate_value(load1(dxr + j), dx_value(rr, w[j], gv, coef, xv));
      store1(dxr + j, v);
      if constexpr (kCopy) key = max(key, store1(copy.out + m * d + j, v));
      dw[j] = __fadd_rn(dw[j], __fmul_rn(__fmul_rn(gv, xv), rr));
    }
  }
  if constexpr (kCopy) finish_amax(key, copy.amax);
}

// dw[j] += (or, without accumulate, =) sum over chunks c of partial[c, j]. Block: 32 columns x
// 32 slices; slice s sums chunks
// s, s + 32, ... in order (8 loads in flight, the partials are fresh in L2), then the slice sums
// are added in slice order: a fixed tree. W: the gradient's type (float, or bf16_bits: the old
// value widened, the fp32 sum rounded once by the store).
constexpr int kReduceSlices = 32;
constexpr int kReduceLoads = 8;

template <typename W>
__global__ void __launch_bounds__(32 * kReduceSlices)
    rmsnorm_dw_reduce_kernel(const float* __restrict__ partial, std::int64_t chunks, int d,
                             W* __restrict__ dw_accum, bool accumulate) {
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
    store1(dw_accum + col, accumulate ? __fadd_rn(load1(dw_accum + col), total) : total);
  }
}

// The reduction into dw_accum of `dw_type` (partial null with no chunks: stores zeros, or adds
// nothing).
void launch_dw_reduce(const float* partial, std::int64_t chunks, int d, void* dw_accum,
                      ElemType dw_type, bool accumulate, cudaStream_t stream) {
  const dim3 block(32, kReduceSlices);
  const auto col_blocks = static_cast<unsigned>((d + 31) / 32);
  dispatch_type(dw_type, [&](auto wt) {
    using W = decltype(wt);
    rmsnorm_dw_reduce_kernel<W><<<col_blocks, block, 0, stream>>>(
        partial, chunks, d, static_cast<W*>(dw_accum), accumulate);
  });
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

template <typename X, typename G, typename DX, int kGroups, bool kCopy>
void launch_backward_vec(const void* x, const float* w, const float* rstd, const void* dy, DX* dx,
                         float* partial, std::int64_t rows, int d, Chunking ch, int team_warps,
                         DxCopy copy, cudaStream_t stream) {
  const std::size_t smem = 2 * static_cast<std::size_t>(d) * sizeof(float);  // <= 64 KiB
  if (smem > 48 * 1024) {  // past the default limit (D > 6144) the kernel must opt in
    cudaFuncSetAttribute(rmsnorm_backward_vec_kernel<X, G, DX, kGroups, kCopy>,
                         cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  }
  rmsnorm_backward_vec_kernel<X, G, DX, kGroups, kCopy>
      <<<static_cast<unsigned>(ch.chunks), kBlockThreads, smem, stream>>>(
          static_cast<const X*>(x), w, rstd, static_cast<const G*>(dy), dx, partial, rows, d,
          ch.rows_per_chunk, team_warps, copy);
}

// Which backward kernel a shape and its pointers take: the vector kernel needs D % 8 == 0, a row
// that fits (vec_shape) and 16-byte aligned pointers.
VecShape backward_shape(int d, const void* x, const void* dy, const void* dx, const float* w,
                        const void* workspace) {
  const VecShape shape = d % kVec == 0 ? vec_shape(d) : VecShape{0, 0};
  const bool aligned =
      aligned16(x) && aligned16(dy) && aligned16(dx) && aligned16(w) && aligned16(workspace);
  return aligned ? shape : VecShape{0, 0};
}

// The row kernels of one backward (rows > 0, d > 0), then the dw reduction.
template <typename DX, bool kCopy>
void launch_backward(const void* x, ElemType x_type, const float* w, const float* rstd,
                     const void* dy, ElemType dy_type, DX* dx, void* dw_accum, ElemType dw_type,
                     bool accumulate_dw, std::int64_t rows, int d, VecShape shape, void* workspace,
                     DxCopy copy, cudaStream_t stream) {
  const Chunking ch = chunking(rows);
  auto* partial = static_cast<float*>(workspace);
  dispatch_type(x_type, [&](auto xt) {
    dispatch_type(dy_type, [&](auto gt) {
      using X = decltype(xt);
      using G = decltype(gt);
      if (shape.groups_per_thread == 0) {
        rmsnorm_backward_scalar_kernel<X, G, DX, kCopy>
            <<<static_cast<unsigned>(ch.chunks), kBlockThreads, 0, stream>>>(
                static_cast<const X*>(x), w, rstd, static_cast<const G*>(dy), dx, partial, rows, d,
                ch.rows_per_chunk, copy);
      } else if (shape.groups_per_thread == 2) {  // D <= 4096
        launch_backward_vec<X, G, DX, 2, kCopy>(x, w, rstd, dy, dx, partial, rows, d, ch,
                                                shape.team_warps, copy, stream);
      } else {  // D <= 8192
        launch_backward_vec<X, G, DX, 4, kCopy>(x, w, rstd, dy, dx, partial, rows, d, ch,
                                                shape.team_warps, copy, stream);
      }
    });
  });
  launch_dw_reduce(partial, ch.chunks, d, dw_accum, dw_type, accumulate_dw, stream);
}

}  // namespace

void rmsnorm_forward(const void* x, ElemType x_type, const float* w, float eps, void* y,
                     ElemType y_type, float* rstd, std::int64_t rows, int d_model,
                     cudaStream_t stream, AmaxOut amax) {
  if (rows <= 0 || d_model <= 0) {
    if (!amax.meta) return;
    rows = 0;  // nothing to normalise, but the empty output's amax (0) still gets its scale
  }
  const bool vec = rmsnorm::forward_vectors(d_model, x, y, w);
  const unsigned blocks = rmsnorm::forward_blocks(rows);
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
                      void* dw_accum, ElemType dw_type, bool accumulate_dw, std::int64_t rows,
                      int d_model, void* workspace, cudaStream_t stream) {
  if (rows <= 0 || d_model <= 0) {
    // No rows: the gain's gradient is zero, which a write must still store (the reduction over
    // no chunks stores 0).
    if (!accumulate_dw && d_model > 0)
      launch_dw_reduce(nullptr, 0, d_model, dw_accum, dw_type, false, stream);
    return;
  }
  const VecShape shape = backward_shape(d_model, x, dy, dx_accum, w, workspace);
  dispatch_type(dx_type, [&](auto dt) {
    using DX = decltype(dt);
    launch_backward<DX, false>(x, x_type, w, rstd, dy, dy_type, static_cast<DX*>(dx_accum),
                               dw_accum, dw_type, accumulate_dw, rows, d_model, shape, workspace,
                               DxCopy{}, stream);
  });
}

void rmsnorm_backward_and_convert(const void* x, ElemType x_type, const float* w, const float* rstd,
                                  const void* dy, ElemType dy_type, void* dx_accum,
                                  ElemType dx_type, void* dw_accum, ElemType dw_type,
                                  bool accumulate_dw, void* dx_copy, ElemType copy_type,
                                  std::int64_t rows, int d_model, void* workspace,
                                  cudaStream_t stream, AmaxOut copy_amax) {
  const VecShape shape = backward_shape(d_model, x, dy, dx_accum, w, workspace);
  // The fused kernels store the copy from the registers that hold the new dx: the f32 residual
  // gradient into a bf16 dY, the model's case. They must also take the kernel the unfused
  // backward takes (the dot products' order, and so dx, depend on it): a vector-path shape with
  // an unaligned copy, other dtypes and empty tensors run the two unfused launches instead.
  const bool fused = rows > 0 && d_model > 0 && dx_type == ElemType::f32 &&
                     copy_type == ElemType::bf16 &&
                     (shape.groups_per_thread == 0 || aligned16(dx_copy));
  if (!fused) {
    rmsnorm_backward(x, x_type, w, rstd, dy, dy_type, dx_accum, dx_type, dw_accum, dw_type,
                     accumulate_dw, rows, d_model, workspace, stream);
    convert(dx_accum, dx_type, dx_copy, copy_type, rows * d_model, stream, copy_amax);
    return;
  }
  launch_backward<float, true>(x, x_type, w, rstd, dy, dy_type, static_cast<float*>(dx_accum),
                               dw_accum, dw_type, accumulate_dw, rows, d_model, shape, workspace,
                               DxCopy{static_cast<bf16_bits*>(dx_copy), copy_amax}, stream);
}

}  // namespace fp8lab::cuda_ops
