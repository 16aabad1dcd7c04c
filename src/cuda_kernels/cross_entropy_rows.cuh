// Pieces the two cross-entropy row kernels share (cuda_cross_entropy.cu, the
// streaming kernel; cuda_cross_entropy_smem.cu, the single pass through shared
// memory): 16-byte vector loads, how a row is cut into an unaligned head,
// aligned vectors and a tail, and the handling of ignored rows and bad targets.
// See cuda_cross_entropy.cu for the contract both kernels keep.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fp8/fp8_device.cuh"
#include "cuda_kernels/cuda_ops_launch.hpp"

namespace fp8lab::cuda_ops::ce_rows {

// 16-byte vectors: 4 f32 or 8 bf16 elements.
template <typename T>
struct Vec;

template <>
struct Vec<float> {
  static constexpr int kElems = 4;
  __device__ static void load(const float *p, float (&v)[kElems]) {
    const float4 f = *reinterpret_cast<const float4 *>(p);
    v[0] = f.x;
    v[1] = f.y;
    v[2] = f.z;
    v[3] = f.w;
  }
};

// Eight bf16 values packed in 16 bytes, as fp32.
__device__ __forceinline__ void unpack_bf16x8(const uint4 &a, float (&v)[8]) {
  const std::uint32_t w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    v[2 * i] = bits_float(w[i] << 16);
    v[2 * i + 1] = bits_float(w[i] & 0xFFFF0000u);
  }
}

template <>
struct Vec<std::uint16_t> {
  static constexpr int kElems = 8;
  __device__ static void load(const std::uint16_t *p, float (&v)[kElems]) {
    unpack_bf16x8(*reinterpret_cast<const uint4 *>(p), v);
  }
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(std::uint16_t x) { return bf16_to_float(x); }

// How a row is cut: `head` scalar elements up to the first 16-byte aligned
// address, `nvec` aligned vectors, then fewer than one vector's worth of scalar
// tail elements.
struct RowSplit {
  int head;
  std::int64_t nvec;
  std::int64_t tail_start;
};

template <typename T>
__device__ __forceinline__ RowSplit split_row(const T *row, int vocab) {
  constexpr int k = Vec<T>::kElems;
  const auto addr = reinterpret_cast<std::uintptr_t>(row);
  int head = static_cast<int>(((16u - (addr & 15u)) & 15u) / sizeof(T));
  if (head > vocab) head = vocab;
  const std::int64_t nvec = (vocab - head) / k;
  return {head, nvec, head + nvec * k};
}

// Running (max, sum of exp(x - max)). -inf elements add nothing; a NaN element
// makes the sum NaN *flag = min(*flag, value) where 0 means "none yet" (the
// contract's encoding), so plain atomicMin does not do it.
__device__ __forceinline__ void record_min_nonzero(int *flag, int value) {
  int cur = atomicAdd(flag, 0);
  while (cur == 0 || cur > value) {
    const int prev = atomicCAS(flag, cur, value);
    if (prev == cur) break;
    cur = prev;
  }
}

// Ignored rows (loss 0) and bad targets (NaN loss, recorded) get a zero
// gradient row and no further work: false tells the kernel to return. The
// branch is uniform across the block.
template <int THREADS>
__device__ __forceinline__ bool row_is_scored(std::int32_t target, int ignore_index, int vocab,
                                              std::int64_t row, float *loss, std::uint16_t *drow,
                                              int *bad_target) {
  const bool ignored = target == ignore_index;
  if (!ignored && target >= 0 && target < vocab) return true;
  if (threadIdx.x == 0) {
    loss[row] = ignored ? 0.0f : __int_as_float(0x7FC00000);
    if (!ignored) record_min_nonzero(bad_target, static_cast<int>(row) + 1);
  }
  if (drow != nullptr)
    for (int j = threadIdx.x; j < vocab; j += THREADS) drow[j] = 0;
  return false;
}

// The single-pass kernel for bf16 rows (cuda_cross_entropy_smem.cu). Returns
// false, launching nothing, when a row of `vocab` bf16 values does not fit in
// one block's shared memory here.
bool launch_cross_entropy_smem(const std::uint16_t *logits, const std::int32_t *targets,
                               int ignore_index, float grad_scale, std::uint16_t *dlogits,
                               float *loss, std::int64_t rows, int vocab, int *bad_target,
                               cudaStream_t stream);

}  // namespace fp8lab::cuda_ops::ce_rows
