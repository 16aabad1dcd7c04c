// Element access shared by the CUDA backend's memory-bound kernels
// (src/cuda_kernels/cuda_elementwise.cu, cuda_gelu.cu, cuda_rmsnorm.cu): f32 or bf16 tensors loaded
// as fp32, 8 elements (16 bytes of bf16, 32 of f32) per vector step where pointers are 16-byte
// aligned, stores rounded once to nearest even. Every store returns the amax key of what it stored
// (src/fp8/amax_device.cuh), so a kernel that produces an FP8 linear's input can reduce its amax on
// the way (AmaxOut); kernels that do not want it ignore the value and the compiler drops the work.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_kernels/cuda_ops_launch.hpp"
#include "fp8/amax_device.cuh"
#include "fp8lab/fp8_format.hpp"

namespace fp8lab::cuda_ops {

using bf16_bits = std::uint16_t;  // bf16 storage: the upper half of an fp32

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;  // ~30 blocks per SM on an H200; grid-stride loops do the rest
constexpr int kVec = 8;           // elements per vector step (16 bytes of bf16, 32 of f32)

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

inline int blocks_for(std::int64_t units) {
  const std::int64_t b = (units + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

// Blocks for an elementwise pass over n elements, vectorised or not.
inline int elementwise_blocks(std::int64_t n, bool vec) {
  return blocks_for(vec ? n / kVec + 1 : n);
}

// f(T{}) with T the storage type of `type` (float or bf16 bits).
template <typename Fn>
void dispatch_type(ElemType type, Fn&& f) {
  if (type == ElemType::f32)
    f(float{});
  else
    f(bf16_bits{});
}

__device__ __forceinline__ float load1(const float* p) { return *p; }
__device__ __forceinline__ float load1(const bf16_bits* p) { return bf16_to_float(*p); }

// One store; returns the amax key of the stored value.
__device__ __forceinline__ std::uint32_t store1(float* p, float v) {
  *p = v;
  return detail::amax_key(v);
}
__device__ __forceinline__ std::uint32_t store1(bf16_bits* p, float v) {
  const bf16_bits b = float_to_bf16(v);
  *p = b;
  return detail::amax_key_bf16(b);
}

// 4 elements at an address aligned to 4 elements (16 bytes of f32, 8 of bf16), as fp32 (bf16
// widened exactly); store4 rounds each to bf16 once.
__device__ __forceinline__ float4 load4(const float* p) {
  return *reinterpret_cast<const float4*>(p);
}
__device__ __forceinline__ float4 load4(const bf16_bits* p) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  return make_float4(bits_float(u.x << 16), bits_float(u.x & 0xFFFF0000u), bits_float(u.y << 16),
                     bits_float(u.y & 0xFFFF0000u));
}
__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
__device__ __forceinline__ void store4(bf16_bits* p, float4 v) {
  const std::uint32_t lo = static_cast<std::uint32_t>(float_to_bf16(v.x)) |
                           (static_cast<std::uint32_t>(float_to_bf16(v.y)) << 16);
  const std::uint32_t hi = static_cast<std::uint32_t>(float_to_bf16(v.z)) |
                           (static_cast<std::uint32_t>(float_to_bf16(v.w)) << 16);
  *reinterpret_cast<uint2*>(p) = make_uint2(lo, hi);
}

// W consecutive elements as fp32. W == kVec: p is 16-byte aligned and loaded as 16-byte vectors.
template <int W>
__device__ __forceinline__ void load_n(const float* p, float (&v)[W]) {
  if constexpr (W == kVec) {
    const float4 a = reinterpret_cast<const float4*>(p)[0];
    const float4 b = reinterpret_cast<const float4*>(p)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
#pragma unroll
    for (int i = 0; i < W; ++i) v[i] = p[i];
  }
}

// Eight bf16 packed two to a word (the lower address in the low half) widened to fp32, exactly.
__device__ __forceinline__ void unpack_bf16x8(const std::uint32_t (&w)[4], float (&v)[kVec]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    v[2 * i] = bits_float(w[i] << 16);
    v[2 * i + 1] = bits_float(w[i] & 0xFFFF0000u);
  }
}

template <int W>
__device__ __forceinline__ void load_n(const bf16_bits* p, float (&v)[W]) {
  if constexpr (W == kVec) {
    const uint4 a = *reinterpret_cast<const uint4*>(p);
    const std::uint32_t w[4] = {a.x, a.y, a.z, a.w};
    unpack_bf16x8(w, v);
  } else {
#pragma unroll
    for (int i = 0; i < W; ++i) v[i] = bf16_to_float(p[i]);
  }
}

// Stores W values; returns the largest amax key among them.
template <int W>
__device__ __forceinline__ std::uint32_t store_n(float* p, const float (&v)[W]) {
  std::uint32_t key = 0;
#pragma unroll
  for (int i = 0; i < W; ++i) key = max(key, detail::amax_key(v[i]));
  if constexpr (W == kVec) {
    reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else {
#pragma unroll
    for (int i = 0; i < W; ++i) p[i] = v[i];
  }
  return key;
}

// kVec values as four words of bf16 bits, each value rounded by float_to_bf16, the first of each
// pair in the low half (memory order).
__device__ __forceinline__ void pack_bf16x8(const float (&v)[kVec], std::uint32_t (&w)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    w[i] = static_cast<std::uint32_t>(float_to_bf16(v[2 * i])) |
           (static_cast<std::uint32_t>(float_to_bf16(v[2 * i + 1])) << 16);
  }
}

template <int W>
__device__ __forceinline__ std::uint32_t store_n(bf16_bits* p, const float (&v)[W]) {
  std::uint32_t key = 0;
  if constexpr (W == kVec) {
    std::uint32_t w[4];
    pack_bf16x8(v, w);
    *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
    key = detail::amax_key_bf16_words(w);
  } else {
#pragma unroll
    for (int i = 0; i < W; ++i) key = max(key, store1(p + i, v[i]));
  }
  return key;
}

template <int W>
struct Width {
  static constexpr int value = W;
};

// Calls body(i, Width<kStep>{}) for elements [i, i + kStep) of every whole step when `vec`, then
// body(i, Width<1>{}) for each remaining element: grid-stride over both.
template <int kStep = kVec, typename Body>
__device__ __forceinline__ void for_each_element(std::int64_t n, bool vec, Body&& body) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t done = 0;
  if (vec) {
    const std::int64_t steps = n / kStep;
    for (std::int64_t s = tid; s < steps; s += stride) body(s * kStep, Width<kStep>{});
    done = steps * kStep;
  }
  for (std::int64_t i = done + tid; i < n; i += stride) body(i, Width<1>{});
}

// Calls body(i, j, Width<2 * kPart>{}) for the parts [i, i + kPart) and [j, j + kPart) of every
// whole warp step of 64 kPart elements when `vec`, then body(i, i, Width<1>{}) for each remaining
// element; grid-stride over both (warps over steps, threads over the rest). Lane l's parts start
// at kPart l and kPart (32 + l), so each of the warp's vector instructions covers one contiguous
// run of 32 parts, whole 32-byte sectors. With a thread's two parts adjacent instead (as in
// for_each_element's f32 steps), every store instruction writes half of each sector it touches,
// two L2 writes per sector: that bound GELU and AdamW (docs/performance.md, "Pointwise kernels").
template <int kPart, typename Body>
__device__ __forceinline__ void for_each_lane_pair(std::int64_t n, bool vec, Body&& body) {
  constexpr int kWarpStep = 64 * kPart;
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t done = 0;
  if (vec) {
    const std::int64_t steps = n / kWarpStep;
    const std::int64_t lane_at = (tid % 32) * kPart;
    for (std::int64_t s = tid / 32; s < steps; s += threads / 32) {
      const std::int64_t i = s * kWarpStep + lane_at;
      body(i, i + 32 * kPart, Width<2 * kPart>{});
    }
    done = steps * kWarpStep;
  }
  for (std::int64_t i = done + tid; i < n; i += threads) body(i, i, Width<1>{});
}

// The blocks of a for_each_lane_pair pass: one thread per 2 kPart elements.
template <int kPart>
inline int lane_pair_blocks(std::int64_t n, bool vec) {
  return blocks_for(vec ? n / (2 * kPart) + 1 : n);
}

// The end of a producer kernel: every thread hands in the largest key it stored (see
// detail::commit_block_amax and accumulate_block_amax; all threads of the block must get
// here). No meta: nothing.
__device__ __forceinline__ void finish_amax(std::uint32_t key, const AmaxOut& amax) {
  if (amax.meta == nullptr) return;
  detail::hand_in_block_amax(key, amax.meta, amax.format, gridDim.x * gridDim.y * gridDim.z,
                             amax.deferred);
}

}  // namespace fp8lab::cuda_ops
