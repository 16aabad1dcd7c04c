// GELU (tanh form) forward and backward of the CUDA backend (cuda_kernels/cuda_ops_launch.hpp).
//
// 0.5 v (1 + tanh u) is evaluated as v * sigmoid(2u), u = sqrt(2/pi) (v + 0.044715 v^3): one
// exp2 and one reciprocal in hardware (MUFU.EX2, MUFU.RCP, ~2^-22 relative each). Mirroring the
// CPU reference's 1 - 2 / (exp(2u) + 1) with its unfused roundings (src/cpu_backend/cpu_gelu.cpp)
// took ~35 instructions per element and left the kernels compute-bound at ~3 TB/s; the values now
// differ from the CPU's by about the CPU's own rounding error (its 1 + tanh cancels for
// negative v), within the bounds tests/cuda/test_cuda_ops.cpp derives.
//
// Both kernels produce an FP8 linear's input in the GPT block (forward: mlp.proj's x; backward:
// mlp.fc's dY), so each can also reduce the amax of what it stores (AmaxOut).
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_kernels/cuda_ops_launch.hpp"
#include "cuda_kernels/elementwise_access.cuh"

namespace fp8lab::cuda_ops {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float rcp_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// sigmoid(2u) = 1 / (1 + exp(-2u)) = 0.5 (1 + tanh u). Large |v|: exp2 gives 0 or +inf and the
// reciprocal 1 or 0, so the value saturates as tanh does.
__device__ __forceinline__ float sigmoid_2u(float v) {
  constexpr float kMinus2UToLog2 = -2.f * 1.4426950408889634f * kSqrt2OverPi;  // -2u = k v (...)
  return rcp_approx(1.f + exp2_approx(kMinus2UToLog2 * v * fmaf(kCubic, v * v, 1.f)));
}

__device__ __forceinline__ float gelu_value(float v) { return v * sigmoid_2u(v); }

// d/dv [v s(2u)] = s + v s (1 - s) 2 du/dv, du/dv = sqrt(2/pi) (1 + 3 * 0.044715 v^2).
__device__ __forceinline__ float gelu_grad(float v) {
  const float s = sigmoid_2u(v);
  const float du2 = 2.f * kSqrt2OverPi * fmaf(3.f * kCubic, v * v, 1.f);
  return s * fmaf(v * (1.f - s), du2, 1.f);
}

// Each thread takes 16 elements a step as two 8-element vectors (two 16-byte bf16 loads per
// tensor in flight), and bf16 results are packed by the hardware's round-to-nearest-even
// conversion (one instruction per two elements; NaN becomes a canonical NaN, which the GELU
// contract allows) instead of float_to_bf16's integer sequence.
//
// A warp's step is 512 elements, lane l's vectors at 8 l and 256 + 8 l (for_each_lane_pair<kVec>):
// with them adjacent instead (16 l and 16 l + 8), ncu showed gelu_forward bound by L2
// throughput (94%) at 62% of DRAM bandwidth (docs/performance.md, "Pointwise kernels").
constexpr int kGeluSpan = 2 * kVec;

// W values from p (W == 1), or kVec from each of p and q (W == kGeluSpan).
template <int W, typename T>
__device__ __forceinline__ void load_span(const T* p, const T* q, float (&v)[W]) {
  if constexpr (W == kGeluSpan) {
    float a[kVec], b[kVec];  // both 16-byte loads issued before either is used
    load_n<kVec>(p, a);
    load_n<kVec>(q, b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = a[k], v[kVec + k] = b[k];
  } else {
    load_n<W>(p, v);
  }
}

// Stores W values as load_span reads them; returns the largest amax key of what was stored
// (the hardware-rounded bf16 bits where it rounds).
template <int W>
__device__ __forceinline__ std::uint32_t store_span(float* p, float* q, const float (&v)[W]) {
  if constexpr (W == kGeluSpan) {
    float a[kVec], b[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) a[k] = v[k], b[k] = v[kVec + k];
    return max(store_n<kVec>(p, a), store_n<kVec>(q, b));
  } else {
    return store_n<W>(p, v);
  }
}
template <int W>
__device__ __forceinline__ std::uint32_t store_span(bf16_bits* p, bf16_bits* q,
                                                    const float (&v)[W]) {
  if constexpr (W == kGeluSpan) {
    std::uint32_t w[kGeluSpan / 2];
#pragma unroll
    for (int i = 0; i < kGeluSpan / 2; ++i) {
      // cvt.rn.bf16x2.f32 d, hi, lo: the first operand goes to the upper half.
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[i]) : "f"(v[2 * i + 1]), "f"(v[2 * i]));
    }
    *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
    *reinterpret_cast<uint4*>(q) = make_uint4(w[4], w[5], w[6], w[7]);
    return detail::amax_key_bf16_words(w);
  } else {
    return store_n<W>(p, v);
  }
}

template <typename X, typename Y>
__global__ void __launch_bounds__(kThreads)
    gelu_forward_kernel(const X* x, Y* y, std::int64_t n, bool vec, AmaxOut amax) {
  std::uint32_t key = 0;
  for_each_lane_pair<kVec>(n, vec, [&](std::int64_t i, std::int64_t j, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load_span<W>(x + i, x + j, v);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = gelu_value(v[k]);
    key = max(key, store_span<W>(y + i, y + j, v));
  });
  finish_amax(key, amax);
}

template <typename X, typename G, typename D>
__global__ void __launch_bounds__(kThreads)
    gelu_backward_kernel(const X* x, const G* dy, D* dx, std::int64_t n, bool vec, AmaxOut amax) {
  std::uint32_t key = 0;
  for_each_lane_pair<kVec>(n, vec, [&](std::int64_t i, std::int64_t j, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W], g[W];
    load_span<W>(x + i, x + j, v);
    load_span<W>(dy + i, dy + j, g);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = __fmul_rn(gelu_grad(v[k]), g[k]);
    key = max(key, store_span<W>(dx + i, dx + j, v));
  });
  finish_amax(key, amax);
}

}  // namespace

void gelu_forward(const void* x, ElemType x_type, void* y, ElemType y_type, std::int64_t n,
                  cudaStream_t stream, AmaxOut amax) {
  if (n <= 0 && !amax.meta) return;  // an empty tensor's amax (0) still gets its scale
  const bool vec = aligned16(x) && aligned16(y);
  dispatch_type(x_type, [&](auto xt) {
    dispatch_type(y_type, [&](auto yt) {
      using X = decltype(xt);
      using Y = decltype(yt);
      gelu_forward_kernel<X, Y><<<lane_pair_blocks<kVec>(n, vec), kThreads, 0, stream>>>(
          static_cast<const X*>(x), static_cast<Y*>(y), n, vec, amax);
    });
  });
}

void gelu_backward(const void* x, ElemType x_type, const void* dy, ElemType dy_type, void* dx,
                   ElemType dx_type, std::int64_t n, cudaStream_t stream, AmaxOut amax) {
  if (n <= 0 && !amax.meta) return;
  const bool vec = aligned16(x) && aligned16(dy) && aligned16(dx);
  dispatch_type(x_type, [&](auto xt) {
    dispatch_type(dy_type, [&](auto gt) {
      dispatch_type(dx_type, [&](auto dt) {
        using X = decltype(xt);
        using G = decltype(gt);
        using D = decltype(dt);
        gelu_backward_kernel<X, G, D><<<lane_pair_blocks<kVec>(n, vec), kThreads, 0, stream>>>(
            static_cast<const X*>(x), static_cast<const G*>(dy), static_cast<D*>(dx), n, vec, amax);
      });
    });
  });
}

}  // namespace fp8lab::cuda_ops
