// The row machinery of the RMSNorm forward kernels (cuda_rmsnorm.cu, and the residual add fused
// in front of it in cuda_add_rmsnorm.cu): one warp per row, warps striding over the rows of at
// most kMaxForwardBlocks CTAs, and the two passes over a row.
//
// Both kernels must give the same rstd bits for the same row values, and the f64 sum of squares
// depends on how the row is split over the lanes: vectors (lane l takes the 8-element groups l,
// l + 32, ...) or scalars (elements l, l + 32, ...). So the split is chosen by one function,
// forward_vectors, of the row being normalised, y and w, and the passes below take their values
// from a `source` the kernel supplies: the same lanes sum the same elements in the same order.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda_kernels/elementwise_access.cuh"

namespace fp8lab::cuda_ops::rmsnorm {

constexpr int kWarpsPerBlock = 8;  // forward: one warp per row
constexpr int kBlockThreads = kWarpsPerBlock * 32;
// Forward: at most this many CTAs, their warps striding over the rows (each row's values do not
// depend on which warp computes it); it bounds the producer-fused amax's per-CTA atomics.
constexpr std::int64_t kMaxForwardBlocks = 4096;

// Butterfly sum over the warp: every lane ends with the same value (each step adds the same two
// numbers on both partners), in the same order every run.
__device__ __forceinline__ double warp_allsum(double v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}

// The vector split needs D % 8 == 0 and 16-byte aligned pointers to the normalised rows, y and w.
inline bool forward_vectors(int d, const void* rows, const void* y, const float* w) {
  return d % kVec == 0 && aligned16(rows) && aligned16(y) && aligned16(w);
}

inline unsigned forward_blocks(std::int64_t rows) {
  const std::int64_t b = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > kMaxForwardBlocks ? kMaxForwardBlocks : b));
}

// The rows of this thread's warp, whole: warps stride over the rows (the warp sums are never
// half-done). row_fn(row, lane) handles one row and returns the largest amax key the lane
// stored; returns the largest over the warp's rows.
template <typename RowFn>
__device__ __forceinline__ std::uint32_t for_warp_rows(std::int64_t rows, RowFn&& row_fn) {
  const int lane = threadIdx.x & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  std::uint32_t key = 0;
  for (std::int64_t row =
           static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       row < rows; row += stride) {
    key = max(key, row_fn(row, lane));
  }
  return key;
}

// source(j, v) fills v (float[W], W = kVec on the vector split, else 1) with row elements
// [j, j + W).
template <bool kVectors, typename Source>
__device__ __forceinline__ void for_lane_values(int d, int lane, Source&& source) {
  if constexpr (kVectors) {
    for (int g = lane; g < d / kVec; g += 32) source(g * kVec, Width<kVec>{});
  } else {
    for (int j = lane; j < d; j += 32) source(j, Width<1>{});
  }
}

// Pass 1: rstd = 1 / sqrt(sum(v^2) / D + eps) of the values source(j, v) yields (sum in f64,
// rstd rounded to f32); every lane returns it.
template <bool kVectors, typename Source>
__device__ __forceinline__ float row_rstd(int d, int lane, float eps, Source&& source) {
  double ss = 0.0;
  for_lane_values<kVectors>(d, lane, [&](int j, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    source(j, v);
#pragma unroll
    for (int k = 0; k < W; ++k) ss += static_cast<double>(v[k]) * v[k];
  });
  ss = warp_allsum(ss);
  return static_cast<float>(1.0 / sqrt(ss / static_cast<double>(d) + eps));
}

// Pass 2: y = v * (r * w) over the values source(j, v) yields (the row read again: it is still
// in L1/L2); returns the largest amax key the lane stored.
template <bool kVectors, typename Y, typename Source>
__device__ __forceinline__ std::uint32_t row_store_scaled(int d, int lane, float r,
                                                          const float* __restrict__ w,
                                                          Y* __restrict__ yr, Source&& source) {
  std::uint32_t key = 0;
  for_lane_values<kVectors>(d, lane, [&](int j, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W], wv[W];
    source(j, v);
    load_n<W>(w + j, wv);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = __fmul_rn(v[k], __fmul_rn(r, wv[k]));
    key = max(key, store_n<W>(yr + j, v));
  });
  return key;
}

}  // namespace fp8lab::cuda_ops::rmsnorm
