// Elementwise kernels, the two reductions and AdamW of the CUDA backend (nn/cuda_ops_launch.hpp).
//
// All of these are memory bound and run over tensors of 100M+ elements, so they move 16 bytes
// per load where every pointer is 16-byte aligned (8 elements a step: one uint4 of bf16, two
// float4 of f32), with grid-stride loops and a scalar loop for the tail.
//
// Matching the CPU reference bit for bit where possible: the CPU backend is built for baseline
// x86-64 (no FMA), so it rounds after every multiply and add. nvcc contracts a*b+c into one FMA
// by default, which rounds once; where the CPU result is reproducible exactly (GELU's polynomial,
// AdamW) the kernels spell each operation with the __f*_rn intrinsics, which nvcc never fuses.
// Division and sqrt are IEEE-rounded here (no fast-math in cmake/cuda.cmake).
#include <cuda_runtime.h>

#include <cstdint>

#include "fp8lab/fp8_format.hpp"
#include "nn/cuda_ops_launch.hpp"

namespace fp8lab::cuda_ops {
namespace {

using bf16_bits = std::uint16_t;  // bf16 storage: the upper half of an fp32

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;  // ~30 blocks per SM on an H200; grid-stride loops do the rest
constexpr int kVec = 8;           // elements per vector step (16 bytes of bf16, 32 of f32)

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

int blocks_for(std::int64_t units) {
  const std::int64_t b = (units + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

// Blocks for an elementwise pass over n elements, vectorised or not.
int elementwise_blocks(std::int64_t n, bool vec) { return blocks_for(vec ? n / kVec + 1 : n); }

// ---- element access ---------------------------------------------------------------------------

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

template <int W>
__device__ __forceinline__ void load_n(const bf16_bits* p, float (&v)[W]) {
  if constexpr (W == kVec) {
    const uint4 a = *reinterpret_cast<const uint4*>(p);
    const std::uint32_t w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[2 * i] = bits_float(w[i] << 16);
      v[2 * i + 1] = bits_float(w[i] & 0xFFFF0000u);
    }
  } else {
#pragma unroll
    for (int i = 0; i < W; ++i) v[i] = bf16_to_float(p[i]);
  }
}

template <int W>
__device__ __forceinline__ void store_n(float* p, const float (&v)[W]) {
  if constexpr (W == kVec) {
    reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else {
#pragma unroll
    for (int i = 0; i < W; ++i) p[i] = v[i];
  }
}

template <int W>
__device__ __forceinline__ void store_n(bf16_bits* p, const float (&v)[W]) {
  if constexpr (W == kVec) {
    std::uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      w[i] = static_cast<std::uint32_t>(float_to_bf16(v[2 * i])) |
             (static_cast<std::uint32_t>(float_to_bf16(v[2 * i + 1])) << 16);
    }
    *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
  } else {
#pragma unroll
    for (int i = 0; i < W; ++i) p[i] = float_to_bf16(v[i]);
  }
}

template <int W>
struct Width {
  static constexpr int value = W;
};

// Calls body(i, Width<kVec>{}) for elements [i, i + kVec) of every whole vector step when `vec`,
// then body(i, Width<1>{}) for each remaining element: grid-stride over both.
template <typename Body>
__device__ __forceinline__ void for_each_element(std::int64_t n, bool vec, Body&& body) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t done = 0;
  if (vec) {
    const std::int64_t steps = n / kVec;
    for (std::int64_t s = tid; s < steps; s += stride) body(s * kVec, Width<kVec>{});
    done = steps * kVec;
  }
  for (std::int64_t i = done + tid; i < n; i += stride) body(i, Width<1>{});
}

// f(T{}) with T the storage type of `type` (float or bf16 bits).
template <typename Fn>
void dispatch_type(ElemType type, Fn&& f) {
  if (type == ElemType::f32)
    f(float{});
  else
    f(bf16_bits{});
}

// ---- convert, add, scale ----------------------------------------------------------------------

template <typename S, typename D>
__global__ void __launch_bounds__(kThreads)
    convert_kernel(const S* src, D* dst, std::int64_t n, bool vec) {
  for_each_element(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load_n<W>(src + i, v);
    store_n<W>(dst + i, v);
  });
}

template <typename D, typename S>
__global__ void __launch_bounds__(kThreads)
    add_kernel(D* dst, const S* src, std::int64_t n, bool vec) {
  for_each_element(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float a[W], b[W];
    load_n<W>(dst + i, a);
    load_n<W>(src + i, b);
#pragma unroll
    for (int k = 0; k < W; ++k) a[k] = a[k] + b[k];
    store_n<W>(dst + i, a);
  });
}

__global__ void __launch_bounds__(kThreads)
    scale_kernel(float* t, float factor, std::int64_t n, bool vec) {
  for_each_element(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float a[W];
    load_n<W>(t + i, a);
#pragma unroll
    for (int k = 0; k < W; ++k) a[k] = a[k] * factor;
    store_n<W>(t + i, a);
  });
}

// ---- sum of squares ---------------------------------------------------------------------------
// The grid is a constant (kSosBlocks x kThreads), so which thread sums which element depends on
// n only: chunk c of 4 elements goes to thread c mod (grid size), each thread adds its chunks in
// increasing order, whether it loads them as a float4 (aligned input) or one by one. Block sums
// and the final sum of the block partials follow fixed trees: the same bits on every run.

constexpr int kSosBlocks = 1024;

// Sum over the block in a fixed order; the result is valid in thread 0.
template <int kBlock>
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double warp_sums[kBlock / 32];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  double total = 0.0;
  if (threadIdx.x == 0) {
    for (int w = 0; w < kBlock / 32; ++w) total += warp_sums[w];
  }
  return total;
}

__device__ __forceinline__ void load4(const float* p, bool vec, float (&v)[4]) {
  if (vec) {
    const float4 a = *reinterpret_cast<const float4*>(p);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
  } else {
    v[0] = p[0], v[1] = p[1], v[2] = p[2], v[3] = p[3];
  }
}

__global__ void __launch_bounds__(kThreads)
    sum_of_squares_partial_kernel(const float* __restrict__ t, std::int64_t n, bool vec,
                                  double* __restrict__ partial) {
  constexpr std::int64_t stride = static_cast<std::int64_t>(kSosBlocks) * kThreads;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::int64_t chunks = n / 4;
  double s = 0.0;
  std::int64_t c = tid;
  // Two chunks per iteration so two loads are in flight; the adds stay in chunk order.
  for (; c + stride < chunks; c += 2 * stride) {
    float a[4], b[4];
    load4(t + c * 4, vec, a);
    load4(t + (c + stride) * 4, vec, b);
#pragma unroll
    for (int k = 0; k < 4; ++k) s += static_cast<double>(a[k]) * a[k];
#pragma unroll
    for (int k = 0; k < 4; ++k) s += static_cast<double>(b[k]) * b[k];
  }
  if (c < chunks) {
    float a[4];
    load4(t + c * 4, vec, a);
#pragma unroll
    for (int k = 0; k < 4; ++k) s += static_cast<double>(a[k]) * a[k];
  }
  const std::int64_t tail = chunks * 4 + tid;  // the last n % 4 elements, one per thread
  if (tail < n) s += static_cast<double>(t[tail]) * t[tail];
  s = block_sum<kThreads>(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void __launch_bounds__(kSosBlocks)
    sum_of_squares_final_kernel(const double* __restrict__ partial, double* __restrict__ out) {
  const double s = block_sum<kSosBlocks>(partial[threadIdx.x]);
  if (threadIdx.x == 0) *out = s;
}

// ---- all_finite -------------------------------------------------------------------------------

__global__ void set_int_kernel(int* p, int value) { *p = value; }

template <typename T>
__global__ void __launch_bounds__(kThreads)
    all_finite_kernel(const T* __restrict__ t, std::int64_t n, bool vec, int* all_finite_out) {
  int bad = 0;
  for_each_element(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load_n<W>(t + i, v);
#pragma unroll
    for (int k = 0; k < W; ++k) bad |= isfinite(v[k]) ? 0 : 1;
  });
  // Every writer writes the same 0, so the race between blocks is harmless.
  if (__syncthreads_or(bad) != 0 && threadIdx.x == 0) *all_finite_out = 0;
}

// ---- GELU (tanh form), the CPU's arithmetic (src/nn/cpu_gelu.cpp) -----------------------------

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

// sqrt(2/pi) (v + 0.044715 v^3), rounded after each operation as the CPU does.
__device__ __forceinline__ float gelu_inner(float v) {
  const float cube = __fmul_rn(__fmul_rn(__fmul_rn(kCubic, v), v), v);
  return __fmul_rn(kSqrt2OverPi, __fadd_rn(v, cube));
}

// tanh(u) = 1 - 2 / (exp(2u) + 1), the CPU's fast_tanh. expf here is within 2 ulp (CUDA math
// guide), glibc's is correctly rounded: the only source of difference from the CPU.
// 2 / z is computed as 2 * (1 / z): scaling by 2 commutes with rounding, so both give the same
// float for z >= 1 (where 1 / z is subnormal, z > 2^126, the sum 1 - 2/z rounds to 1 either
// way), and the correctly rounded reciprocal is a few instructions shorter than the division.
__device__ __forceinline__ float tanh_as_cpu(float u) {
  const float z = __fadd_rn(expf(__fmul_rn(2.f, u)), 1.f);
  return __fsub_rn(1.f, __fmul_rn(2.f, __frcp_rn(z)));
}

__device__ __forceinline__ float gelu_value(float v) {
  const float t = tanh_as_cpu(gelu_inner(v));
  return __fmul_rn(__fmul_rn(0.5f, v), __fadd_rn(1.f, t));
}

__device__ __forceinline__ float gelu_grad(float v) {
  const float t = tanh_as_cpu(gelu_inner(v));
  constexpr float k3Cubic = 3.f * kCubic;  // folded at compile time by the CPU build as well
  const float du = __fmul_rn(kSqrt2OverPi, __fadd_rn(1.f, __fmul_rn(__fmul_rn(k3Cubic, v), v)));
  const float left = __fmul_rn(0.5f, __fadd_rn(1.f, t));
  const float right = __fmul_rn(__fmul_rn(__fmul_rn(0.5f, v), __fsub_rn(1.f, __fmul_rn(t, t))), du);
  return __fadd_rn(left, right);
}

// GELU runs ~35 instructions per element next to 4-6 bytes of traffic, so on an H200 issue
// slots matter as much as bandwidth: each thread takes 16 elements a step (two 16-byte bf16 loads
// per tensor in flight), and bf16 results are packed by the hardware's round-to-nearest-even
// conversion (one instruction per two elements; NaN becomes a canonical NaN, which the GELU
// contract allows) instead of float_to_bf16's integer sequence.
constexpr int kGeluSpan = 2 * kVec;

template <int W>
__device__ __forceinline__ void load_span(const float* p, float (&v)[W]) {
  if constexpr (W == kGeluSpan) {
    float a[kVec], b[kVec];  // both 16-byte loads issued before either is used
    load_n<kVec>(p, a);
    load_n<kVec>(p + kVec, b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = a[k], v[kVec + k] = b[k];
  } else {
    load_n<W>(p, v);
  }
}
template <int W>
__device__ __forceinline__ void load_span(const bf16_bits* p, float (&v)[W]) {
  if constexpr (W == kGeluSpan) {
    float a[kVec], b[kVec];  // both 16-byte loads issued before either is used
    load_n<kVec>(p, a);
    load_n<kVec>(p + kVec, b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = a[k], v[kVec + k] = b[k];
  } else {
    load_n<W>(p, v);
  }
}
template <int W>
__device__ __forceinline__ void store_span(float* p, const float (&v)[W]) {
  if constexpr (W == kGeluSpan) {
    float a[kVec], b[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) a[k] = v[k], b[k] = v[kVec + k];
    store_n<kVec>(p, a);
    store_n<kVec>(p + kVec, b);
  } else {
    store_n<W>(p, v);
  }
}
template <int W>
__device__ __forceinline__ void store_span(bf16_bits* p, const float (&v)[W]) {
  if constexpr (W == kGeluSpan) {
    std::uint32_t w[kGeluSpan / 2];
#pragma unroll
    for (int i = 0; i < kGeluSpan / 2; ++i) {
      // cvt.rn.bf16x2.f32 d, hi, lo: the first operand goes to the upper half.
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[i]) : "f"(v[2 * i + 1]), "f"(v[2 * i]));
    }
    reinterpret_cast<uint4*>(p)[0] = make_uint4(w[0], w[1], w[2], w[3]);
    reinterpret_cast<uint4*>(p)[1] = make_uint4(w[4], w[5], w[6], w[7]);
  } else {
    store_n<W>(p, v);
  }
}

// for_each_element with kGeluSpan-element vector steps (p 16-byte aligned at every step start).
template <typename Body>
__device__ __forceinline__ void for_each_span(std::int64_t n, bool vec, Body&& body) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t done = 0;
  if (vec) {
    const std::int64_t steps = n / kGeluSpan;
    for (std::int64_t s = tid; s < steps; s += stride) body(s * kGeluSpan, Width<kGeluSpan>{});
    done = steps * kGeluSpan;
  }
  for (std::int64_t i = done + tid; i < n; i += stride) body(i, Width<1>{});
}

template <typename X, typename Y>
__global__ void __launch_bounds__(kThreads)
    gelu_forward_kernel(const X* x, Y* y, std::int64_t n, bool vec) {
  for_each_span(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load_span<W>(x + i, v);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = gelu_value(v[k]);
    store_span<W>(y + i, v);
  });
}

template <typename X, typename G, typename D>
__global__ void __launch_bounds__(kThreads)
    gelu_backward_kernel(const X* x, const G* dy, D* dx, std::int64_t n, bool vec) {
  for_each_span(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W], g[W];
    load_span<W>(x + i, v);
    load_span<W>(dy + i, g);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = __fmul_rn(gelu_grad(v[k]), g[k]);
    store_span<W>(dx + i, v);
  });
}

// ---- AdamW, the CPU backend's arithmetic (CpuBackend::adamw_update) ---------------------------
//   m = b1 m + (1 - b1) g;  v = b2 v + ((1 - b2) g) g;
//   p -= lr (m / bc1 / (sqrt(v / bc2) + eps) + wd p)
// every operation rounded as on the CPU, so the two backends agree to the bit.

__device__ __forceinline__ void adamw_element(float& p, float g, float& m, float& v,
                                              const AdamWArgs& a) {
  m = __fadd_rn(__fmul_rn(a.beta1, m), __fmul_rn(__fsub_rn(1.f, a.beta1), g));
  v = __fadd_rn(__fmul_rn(a.beta2, v), __fmul_rn(__fmul_rn(__fsub_rn(1.f, a.beta2), g), g));
  const float m_hat = __fdiv_rn(m, a.bias_correction1);
  const float v_hat = __fdiv_rn(v, a.bias_correction2);
  const float step = __fdiv_rn(m_hat, __fadd_rn(__fsqrt_rn(v_hat), a.eps));
  p = __fsub_rn(p, __fmul_rn(a.lr, __fadd_rn(step, __fmul_rn(a.weight_decay, p))));
}

__global__ void __launch_bounds__(kThreads)
    adamw_kernel(float* __restrict__ param, const float* __restrict__ grad, float* __restrict__ m,
                 float* __restrict__ v, std::int64_t n, bool vec, AdamWArgs args) {
  for_each_element(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float p[W], g[W], mm[W], vv[W];
    load_n<W>(param + i, p);
    load_n<W>(grad + i, g);
    load_n<W>(m + i, mm);
    load_n<W>(v + i, vv);
#pragma unroll
    for (int k = 0; k < W; ++k) adamw_element(p[k], g[k], mm[k], vv[k], args);
    store_n<W>(param + i, p);
    store_n<W>(m + i, mm);
    store_n<W>(v + i, vv);
  });
}

}  // namespace

void convert(const void* src, ElemType src_type, void* dst, ElemType dst_type, std::int64_t n,
             cudaStream_t stream) {
  if (n <= 0) return;
  const bool vec = aligned16(src) && aligned16(dst);
  dispatch_type(src_type, [&](auto s) {
    dispatch_type(dst_type, [&](auto d) {
      using S = decltype(s);
      using D = decltype(d);
      convert_kernel<S, D><<<elementwise_blocks(n, vec), kThreads, 0, stream>>>(
          static_cast<const S*>(src), static_cast<D*>(dst), n, vec);
    });
  });
}

void add_inplace(void* dst, ElemType dst_type, const void* src, ElemType src_type, std::int64_t n,
                 cudaStream_t stream) {
  if (n <= 0) return;
  const bool vec = aligned16(src) && aligned16(dst);
  dispatch_type(dst_type, [&](auto d) {
    dispatch_type(src_type, [&](auto s) {
      using D = decltype(d);
      using S = decltype(s);
      add_kernel<D, S><<<elementwise_blocks(n, vec), kThreads, 0, stream>>>(
          static_cast<D*>(dst), static_cast<const S*>(src), n, vec);
    });
  });
}

void scale_inplace_f32(float* t, float factor, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const bool vec = aligned16(t);
  scale_kernel<<<elementwise_blocks(n, vec), kThreads, 0, stream>>>(t, factor, n, vec);
}

std::size_t sum_of_squares_workspace_bytes() { return kSosBlocks * sizeof(double); }

void sum_of_squares_f32(const float* t, std::int64_t n, double* out, void* workspace,
                        cudaStream_t stream) {
  auto* partial = static_cast<double*>(workspace);
  sum_of_squares_partial_kernel<<<kSosBlocks, kThreads, 0, stream>>>(t, n, aligned16(t), partial);
  sum_of_squares_final_kernel<<<1, kSosBlocks, 0, stream>>>(partial, out);
}

void all_finite(const void* t, ElemType type, std::int64_t n, int* all_finite_out,
                cudaStream_t stream) {
  set_int_kernel<<<1, 1, 0, stream>>>(all_finite_out, 1);
  if (n <= 0) return;
  const bool vec = aligned16(t);
  dispatch_type(type, [&](auto tag) {
    using T = decltype(tag);
    all_finite_kernel<T><<<elementwise_blocks(n, vec), kThreads, 0, stream>>>(
        static_cast<const T*>(t), n, vec, all_finite_out);
  });
}

void gelu_forward(const void* x, ElemType x_type, void* y, ElemType y_type, std::int64_t n,
                  cudaStream_t stream) {
  if (n <= 0) return;
  const bool vec = aligned16(x) && aligned16(y);
  dispatch_type(x_type, [&](auto xt) {
    dispatch_type(y_type, [&](auto yt) {
      using X = decltype(xt);
      using Y = decltype(yt);
      gelu_forward_kernel<X, Y><<<elementwise_blocks(n, vec), kThreads, 0, stream>>>(
          static_cast<const X*>(x), static_cast<Y*>(y), n, vec);
    });
  });
}

void gelu_backward(const void* x, ElemType x_type, const void* dy, ElemType dy_type, void* dx,
                   ElemType dx_type, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const bool vec = aligned16(x) && aligned16(dy) && aligned16(dx);
  dispatch_type(x_type, [&](auto xt) {
    dispatch_type(dy_type, [&](auto gt) {
      dispatch_type(dx_type, [&](auto dt) {
        using X = decltype(xt);
        using G = decltype(gt);
        using D = decltype(dt);
        gelu_backward_kernel<X, G, D><<<elementwise_blocks(n, vec), kThreads, 0, stream>>>(
            static_cast<const X*>(x), static_cast<const G*>(dy), static_cast<D*>(dx), n, vec);
      });
    });
  });
}

void adamw_update(float* param, const float* grad, float* m, float* v, std::int64_t n,
                  const AdamWArgs& args, cudaStream_t stream) {
  if (n <= 0) return;
  const bool vec = aligned16(param) && aligned16(grad) && aligned16(m) && aligned16(v);
  adamw_kernel<<<elementwise_blocks(n, vec), kThreads, 0, stream>>>(param, grad, m, v, n, vec,
                                                                    args);
}

}  // namespace fp8lab::cuda_ops
