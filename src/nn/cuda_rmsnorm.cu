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
#include <cuda_runtime.h>

#include <cstdint>

#include "fp8lab/fp8_format.hpp"
#include "nn/cuda_ops_launch.hpp"

namespace fp8lab::cuda_ops {
namespace {

using bf16_bits = std::uint16_t;

constexpr int kVec = 8;
constexpr int kWarpsPerBlock = 8;  // forward: one warp per row
constexpr int kBlockThreads = kWarpsPerBlock * 32;
// Backward: rows are split into at most kMaxChunks fixed chunks (a function of the row count
// only, so the dw sums do not depend on the GPU); each CTA writes one [D] partial of dw.
constexpr std::int64_t kMaxChunks = 512;
constexpr int kMaxGroupsPerThread = 4;  // fast backward: D <= 8 * 256 * 4 = 8192

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

__device__ __forceinline__ float load1(const float* p) { return *p; }
__device__ __forceinline__ float load1(const bf16_bits* p) { return bf16_to_float(*p); }
__device__ __forceinline__ void store1(float* p, float v) { *p = v; }
__device__ __forceinline__ void store1(bf16_bits* p, float v) { *p = float_to_bf16(v); }

// 8 elements from a 16-byte aligned address, as fp32.
__device__ __forceinline__ void load8(const float* p, float (&v)[kVec]) {
  const float4 a = reinterpret_cast<const float4*>(p)[0];
  const float4 b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
  v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
__device__ __forceinline__ void load8(const bf16_bits* p, float (&v)[kVec]) {
  const uint4 a = *reinterpret_cast<const uint4*>(p);
  const std::uint32_t w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    v[2 * i] = bits_float(w[i] << 16);
    v[2 * i + 1] = bits_float(w[i] & 0xFFFF0000u);
  }
}
__device__ __forceinline__ void store8(float* p, const float (&v)[kVec]) {
  reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void store8(bf16_bits* p, const float (&v)[kVec]) {
  std::uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    w[i] = static_cast<std::uint32_t>(float_to_bf16(v[2 * i])) |
           (static_cast<std::uint32_t>(float_to_bf16(v[2 * i + 1])) << 16);
  }
  *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
}

// Butterfly sum over the warp: every lane ends with the same value (each step adds the same two
// numbers on both partners), in the same order every run.
__device__ __forceinline__ double warp_allsum(double v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}

template <typename Fn>
void dispatch_type(ElemType type, Fn&& f) {
  if (type == ElemType::f32)
    f(float{});
  else
    f(bf16_bits{});
}

// ---- forward: one warp per row ----------------------------------------------------------------

template <typename X, typename Y, bool kVectors>
__global__ void __launch_bounds__(kBlockThreads)
    rmsnorm_forward_kernel(const X* __restrict__ x, const float* __restrict__ w, float eps,
                           Y* __restrict__ y, float* __restrict__ rstd, std::int64_t rows, int d) {
  const int lane = threadIdx.x & 31;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= rows) return;  // whole warps leave together: no warp-level sync is left half-done
  const X* xr = x + row * d;
  Y* yr = y + row * d;

  double ss = 0.0;
  if constexpr (kVectors) {
    for (int g = lane; g < d / kVec; g += 32) {
      float v[kVec];
      load8(xr + g * kVec, v);
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
  if (lane == 0) rstd[row] = r;

  // Second pass over the row (it is still in L1/L2): y = x * (r * w).
  if constexpr (kVectors) {
    for (int g = lane; g < d / kVec; g += 32) {
      float v[kVec], wv[kVec];
      load8(xr + g * kVec, v);
      load8(w + g * kVec, wv);
#pragma unroll
      for (int k = 0; k < kVec; ++k) v[k] = __fmul_rn(v[k], __fmul_rn(r, wv[k]));
      store8(yr + g * kVec, v);
    }
  } else {
    for (int j = lane; j < d; j += 32) store1(yr + j, __fmul_rn(load1(xr + j), __fmul_rn(r, w[j])));
  }
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

// Fast path: CTA c handles rows [c * per, min(rows, (c + 1) * per)), kRows rows at a time (their
// loads in flight together). Thread t owns the 8-column groups t, t + 256, ... (< D / 8), keeps
// its dw columns in registers over the whole chunk and writes them to partial[c, :] at the end.
template <typename X, typename G, typename DX, int kGroups, int kRows>
__global__ void __launch_bounds__(kBlockThreads)
    rmsnorm_backward_vec_kernel(const X* __restrict__ x, const float* __restrict__ w,
                                const float* __restrict__ rstd, const G* __restrict__ dy,
                                DX* __restrict__ dx, float* __restrict__ partial,
                                std::int64_t rows, int d, std::int64_t rows_per_chunk) {
  const int groups = d / kVec;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * rows_per_chunk;
  const std::int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;

  float wv[kGroups][kVec], dw[kGroups][kVec];
#pragma unroll
  for (int k = 0; k < kGroups; ++k) {
    const int g = threadIdx.x + k * kBlockThreads;
#pragma unroll
    for (int e = 0; e < kVec; ++e) dw[k][e] = 0.f;
    if (g < groups) {
      load8(w + g * kVec, wv[k]);
    } else {
#pragma unroll
      for (int e = 0; e < kVec; ++e) wv[k][e] = 0.f;
    }
  }

  for (std::int64_t m0 = begin; m0 < end; m0 += kRows) {
    float xv[kRows][kGroups][kVec], gv[kRows][kGroups][kVec];
    double dot[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      dot[r] = 0.0;
      const std::int64_t m = m0 + r;
#pragma unroll
      for (int k = 0; k < kGroups; ++k) {
        const int g = threadIdx.x + k * kBlockThreads;
        if (m < end && g < groups) {
          load8(x + m * d + g * kVec, xv[r][k]);
          load8(dy + m * d + g * kVec, gv[r][k]);
        } else {
#pragma unroll
          for (int e = 0; e < kVec; ++e) xv[r][k][e] = gv[r][k][e] = 0.f;
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int k = 0; k < kGroups; ++k) {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          dot[r] = __dadd_rn(dot[r], __dmul_rn(__dmul_rn(gv[r][k][e], wv[k][e]), xv[r][k][e]));
        }
      }
    }
    block_allsum<kRows>(dot);  // every thread reaches this: no early exits above
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const std::int64_t m = m0 + r;
      if (m >= end) continue;
      const float rr = rstd[m];
      const float coef = dx_coef(dot[r], rr, d);
#pragma unroll
      for (int k = 0; k < kGroups; ++k) {
        const int g = threadIdx.x + k * kBlockThreads;
        if (g >= groups) continue;
        float out[kVec];
        load8(dx + m * d + g * kVec, out);
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          out[e] = accumulate_value(out[e], dx_value(rr, wv[k][e], gv[r][k][e], coef, xv[r][k][e]));
          dw[k][e] = __fadd_rn(dw[k][e], __fmul_rn(__fmul_rn(gv[r][k][e], xv[r][k][e]), rr));
        }
        store8(dx + m * d + g * kVec, out);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kGroups; ++k) {
    const int g = threadIdx.x + k * kBlockThreads;
    if (g < groups) {
      float* p = partial + static_cast<std::int64_t>(blockIdx.x) * d + g * kVec;
      reinterpret_cast<float4*>(p)[0] = make_float4(dw[k][0], dw[k][1], dw[k][2], dw[k][3]);
      reinterpret_cast<float4*>(p)[1] = make_float4(dw[k][4], dw[k][5], dw[k][6], dw[k][7]);
    }
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

// dw[j] += sum over chunks c of partial[c, j]. Block: 32 columns x 8 slices; slice s sums chunks
// s, s + 8, ... in order, then slice sums are added in slice order: a fixed tree.
constexpr int kReduceSlices = 8;

__global__ void __launch_bounds__(32 * kReduceSlices)
    rmsnorm_dw_reduce_kernel(const float* __restrict__ partial, std::int64_t chunks, int d,
                             float* __restrict__ dw_accum) {
  __shared__ float slice_sums[kReduceSlices][32];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const int slice = threadIdx.y;
  float s = 0.f;
  if (col < d) {
    std::int64_t c = slice;
    // Four loads in flight; adds stay in chunk order.
    for (; c + 3 * kReduceSlices < chunks; c += 4 * kReduceSlices) {
      const float a = partial[c * d + col];
      const float b = partial[(c + kReduceSlices) * d + col];
      const float e = partial[(c + 2 * kReduceSlices) * d + col];
      const float f = partial[(c + 3 * kReduceSlices) * d + col];
      s = __fadd_rn(__fadd_rn(__fadd_rn(__fadd_rn(s, a), b), e), f);
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

template <typename X, typename G, typename DX, int kGroups, int kRows>
void launch_backward_vec(const void* x, const float* w, const float* rstd, const void* dy,
                         void* dx, float* partial, std::int64_t rows, int d, Chunking ch,
                         cudaStream_t stream) {
  rmsnorm_backward_vec_kernel<X, G, DX, kGroups, kRows>
      <<<static_cast<unsigned>(ch.chunks), kBlockThreads, 0, stream>>>(
          static_cast<const X*>(x), w, rstd, static_cast<const G*>(dy), static_cast<DX*>(dx),
          partial, rows, d, ch.rows_per_chunk);
}

}  // namespace

void rmsnorm_forward(const void* x, ElemType x_type, const float* w, float eps, void* y,
                     ElemType y_type, float* rstd, std::int64_t rows, int d_model,
                     cudaStream_t stream) {
  if (rows <= 0 || d_model <= 0) return;
  const bool vec = d_model % kVec == 0 && aligned16(x) && aligned16(y) && aligned16(w);
  const auto blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  dispatch_type(x_type, [&](auto xt) {
    dispatch_type(y_type, [&](auto yt) {
      using X = decltype(xt);
      using Y = decltype(yt);
      if (vec) {
        rmsnorm_forward_kernel<X, Y, true><<<blocks, kBlockThreads, 0, stream>>>(
            static_cast<const X*>(x), w, eps, static_cast<Y*>(y), rstd, rows, d_model);
      } else {
        rmsnorm_forward_kernel<X, Y, false><<<blocks, kBlockThreads, 0, stream>>>(
            static_cast<const X*>(x), w, eps, static_cast<Y*>(y), rstd, rows, d_model);
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
  const int groups = d_model / kVec;
  const bool vec = d_model % kVec == 0 &&
                   groups <= kBlockThreads * kMaxGroupsPerThread && aligned16(x) &&
                   aligned16(dy) && aligned16(dx_accum) && aligned16(w) && aligned16(workspace);
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
        } else if (groups <= kBlockThreads) {  // D <= 2048: 4 rows in flight
          launch_backward_vec<X, G, DX, 1, 4>(x, w, rstd, dy, dx_accum, partial, rows, d_model,
                                              ch, stream);
        } else if (groups <= 2 * kBlockThreads) {  // D <= 4096
          launch_backward_vec<X, G, DX, 2, 2>(x, w, rstd, dy, dx_accum, partial, rows, d_model,
                                              ch, stream);
        } else {  // D <= 8192
          launch_backward_vec<X, G, DX, 4, 1>(x, w, rstd, dy, dx_accum, partial, rows, d_model,
                                              ch, stream);
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
