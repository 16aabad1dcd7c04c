// Elementwise kernels, the two reductions and AdamW of the CUDA backend
// (cuda_kernels/cuda_ops_launch.hpp); GELU is in cuda_gelu.cu.
//
// All of these are memory bound and run over tensors of 100M+ elements, so they move 16 bytes
// per load where every pointer is 16-byte aligned (8 elements a step: one uint4 of bf16, two
// float4 of f32, cuda_kernels/elementwise_access.cuh), with grid-stride loops and a scalar loop for
// the tail.
//
// Matching the CPU reference bit for bit where possible: the CPU backend is built for baseline
// x86-64 (no FMA), so it rounds after every multiply and add. nvcc contracts a*b+c into one FMA
// by default, which rounds once; where the CPU result is reproducible exactly (AdamW) the kernels
// spell each operation with the __f*_rn intrinsics, which nvcc never fuses. Division and sqrt
// are IEEE-rounded here (no fast-math in cmake/cuda.cmake).
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_kernels/cuda_ops_launch.hpp"
#include "cuda_kernels/elementwise_access.cuh"

namespace fp8lab::cuda_ops {
namespace {

// ---- convert, add, scale ----------------------------------------------------------------------

// With amax.meta: also the producer-fused amax of dst (the backward's dY of a projection).
template <typename S, typename D>
__global__ void __launch_bounds__(kThreads)
    convert_kernel(const S* src, D* dst, std::int64_t n, bool vec, AmaxOut amax) {
  std::uint32_t key = 0;
  for_each_element(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load_n<W>(src + i, v);
    key = max(key, store_n<W>(dst + i, v));
  });
  finish_amax(key, amax);
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
// increasing order, whether it loads them as one vector (aligned input) or one by one. Block sums
// and the final sum of the block partials follow fixed trees: the same bits on every run. A bf16
// tensor (the bf16 gradients, PrecisionConfig::grads) is widened exactly to fp32 on load and then
// takes the f32 path's order: the sum of the same values stored as f32 would give the same bits.

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

// Four consecutive elements widened to fp32; vec: p is aligned to 4 elements, one vector load.
template <typename T>
__device__ __forceinline__ void load_chunk4(const T* p, bool vec, float (&v)[4]) {
  if (vec) {
    const float4 a = load4(p);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
  } else {
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = load1(p + k);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    sum_of_squares_partial_kernel(const T* __restrict__ t, std::int64_t n, bool vec,
                                  double* __restrict__ partial) {
  constexpr std::int64_t stride = static_cast<std::int64_t>(kSosBlocks) * kThreads;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::int64_t chunks = n / 4;
  double s = 0.0;
  std::int64_t c = tid;
  // Two chunks per iteration so two loads are in flight; the adds stay in chunk order.
  for (; c + stride < chunks; c += 2 * stride) {
    float a[4], b[4];
    load_chunk4(t + c * 4, vec, a);
    load_chunk4(t + (c + stride) * 4, vec, b);
#pragma unroll
    for (int k = 0; k < 4; ++k) s += static_cast<double>(a[k]) * a[k];
#pragma unroll
    for (int k = 0; k < 4; ++k) s += static_cast<double>(b[k]) * b[k];
  }
  if (c < chunks) {
    float a[4];
    load_chunk4(t + c * 4, vec, a);
#pragma unroll
    for (int k = 0; k < 4; ++k) s += static_cast<double>(a[k]) * a[k];
  }
  const std::int64_t tail = chunks * 4 + tid;  // the last n % 4 elements, one per thread
  if (tail < n) {
    const float v = load1(t + tail);
    s += static_cast<double>(v) * v;
  }
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

// ---- amax_only ---------------------------------------------------------------------------------
// The amax of a tensor another library wrote (cuDNN's attention), handed in as a producer would.

template <typename T>
__global__ void __launch_bounds__(kThreads)
    amax_only_kernel(const T* __restrict__ t, std::int64_t n, bool vec, AmaxOut amax) {
  std::uint32_t key = 0;
  for_each_element(n, vec, [&](std::int64_t i, auto width) {
    constexpr int W = decltype(width)::value;
    float v[W];
    load_n<W>(t + i, v);
#pragma unroll
    for (int k = 0; k < W; ++k) key = max(key, detail::amax_key(v[k]));
  });
  finish_amax(key, amax);
}

// ---- AdamW, the CPU backend's arithmetic (CpuBackend::adamw_update) ---------------------------
//   m = b1 m + (1 - b1) g;  v = b2 v + ((1 - b2) g) g;
//   p -= lr (m / bc1 / (sqrt(v / bc2) + eps) + wd p)
// every operation rounded as on the CPU, so the two backends agree to the bit.

__device__ __forceinline__ void adamw_element(float& p, float g, float& m, float& v,
                                              const AdamWArgs& a) {
  g = __fmul_rn(g, a.grad_scale);  // the clip; x * 1 == x exactly, so no clip changes nothing
  m = __fadd_rn(__fmul_rn(a.beta1, m), __fmul_rn(__fsub_rn(1.f, a.beta1), g));
  v = __fadd_rn(__fmul_rn(a.beta2, v), __fmul_rn(__fmul_rn(__fsub_rn(1.f, a.beta2), g), g));
  const float m_hat = __fdiv_rn(m, a.bias_correction1);
  const float v_hat = __fdiv_rn(v, a.bias_correction2);
  const float step = __fdiv_rn(m_hat, __fadd_rn(__fsqrt_rn(v_hat), a.eps));
  p = __fsub_rn(p, __fmul_rn(a.lr, __fadd_rn(step, __fmul_rn(a.weight_decay, p))));
}

// AdamW's f32 streams (three written, four read) a warp step of 256 elements at a time:
// lane l takes the quads [4 l, 4 l + 4) and [128 + 4 l, 128 + 4 l + 4) (for_each_lane_pair<kQuad>),
// so each 16-byte f32 instruction of the warp covers 512 contiguous bytes and each 8-byte store
// of the bf16 working copy 256. Which thread takes which element changes no element's
// arithmetic: the same bits as for_each_element's layout (docs/performance.md, "AdamW").
constexpr int kQuad = 4;
constexpr int kQuadPair = 2 * kQuad;  // elements per thread and warp step
static_assert(kQuadPair == kVec, "the working copy's store packs one kVec vector");

// W values: p[i..i+4) then p[j..j+4) (W == kQuadPair), or p[i] (W == 1).
template <int W>
__device__ __forceinline__ void load_quads(const float* p, std::int64_t i, std::int64_t j,
                                           float (&v)[W]) {
  if constexpr (W == kQuadPair) {
    const float4 a = *reinterpret_cast<const float4*>(p + i);  // both issued before either is used
    const float4 b = *reinterpret_cast<const float4*>(p + j);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
    v[0] = p[i];
  }
}

// The bf16 moments (OptimConfig::moments): W values widened to fp32, exactly.
template <int W>
__device__ __forceinline__ void load_quads(const bf16_bits* p, std::int64_t i, std::int64_t j,
                                           float (&v)[W]) {
  if constexpr (W == kQuadPair) {
    const uint2 a = *reinterpret_cast<const uint2*>(p + i);  // 4 bf16, little end first
    const uint2 b = *reinterpret_cast<const uint2*>(p + j);
    const std::uint32_t w[4] = {a.x, a.y, b.x, b.y};
    unpack_bf16x8(w, v);  // kQuadPair == kVec
  } else {
    v[0] = load1(p + i);
  }
}

template <int W>
__device__ __forceinline__ void store_quads(float* p, std::int64_t i, std::int64_t j,
                                            const float (&v)[W]) {
  if constexpr (W == kQuadPair) {
    *reinterpret_cast<float4*>(p + i) = make_float4(v[0], v[1], v[2], v[3]);
    *reinterpret_cast<float4*>(p + j) = make_float4(v[4], v[5], v[6], v[7]);
  } else {
    p[i] = v[0];
  }
}

// The bf16 working copy, rounded as store_n rounds (convert's rounding); returns the largest
// amax key of what it stored.
template <int W>
__device__ __forceinline__ std::uint32_t store_quads(bf16_bits* p, std::int64_t i, std::int64_t j,
                                                     const float (&v)[W]) {
  if constexpr (W == kQuadPair) {
    std::uint32_t w[4];
    pack_bf16x8(v, w);  // kQuadPair == kVec
    *reinterpret_cast<uint2*>(p + i) = make_uint2(w[0], w[1]);
    *reinterpret_cast<uint2*>(p + j) = make_uint2(w[2], w[3]);
    return detail::amax_key_bf16_words(w);
  } else {
    return store1(p + i, v[0]);
  }
}

// G: float or bf16_bits, the gradient's type (PrecisionConfig::grads), widened exactly before
// the same arithmetic. M: float or bf16_bits, the moments' type. The step is computed from the
// new moments before they are rounded to M (the CPU's order, CpuBackend::adamw_update).
template <typename G, typename M>
__global__ void __launch_bounds__(kThreads)
    adamw_kernel(float* __restrict__ param, const G* __restrict__ grad, M* __restrict__ m,
                 M* __restrict__ v, bf16_bits* __restrict__ working, std::int64_t n, bool vec,
                 AdamWArgs args, AmaxOut working_amax) {
  std::uint32_t key = 0;  // of the working copy's stored bf16 values (an FP8 linear's W amax)
  for_each_lane_pair<kQuad>(n, vec, [&](std::int64_t i, std::int64_t j, auto width) {
    constexpr int W = decltype(width)::value;
    float p[W], g[W], mm[W], vv[W];
    load_quads<W>(param, i, j, p);
    load_quads<W>(grad, i, j, g);
    load_quads<W>(m, i, j, mm);
    load_quads<W>(v, i, j, vv);
#pragma unroll
    for (int k = 0; k < W; ++k) adamw_element(p[k], g[k], mm[k], vv[k], args);
    store_quads<W>(param, i, j, p);
    store_quads<W>(m, i, j, mm);
    store_quads<W>(v, i, j, vv);
    if (working != nullptr) key = max(key, store_quads<W>(working, i, j, p));
  });
  finish_amax(key, working_amax);
}

}  // namespace

void convert(const void* src, ElemType src_type, void* dst, ElemType dst_type, std::int64_t n,
             cudaStream_t stream, AmaxOut amax) {
  if (n <= 0 && !amax.meta) return;  // an empty tensor's amax (0) still gets its scale
  const bool vec = aligned16(src) && aligned16(dst);
  dispatch_type(src_type, [&](auto s) {
    dispatch_type(dst_type, [&](auto d) {
      using S = decltype(s);
      using D = decltype(d);
      convert_kernel<S, D><<<elementwise_blocks(n, vec), kThreads, 0, stream>>>(
          static_cast<const S*>(src), static_cast<D*>(dst), n, vec, amax);
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

void sum_of_squares(const void* t, ElemType type, std::int64_t n, double* out, void* workspace,
                    cudaStream_t stream) {
  auto* partial = static_cast<double*>(workspace);
  dispatch_type(type, [&](auto tag) {
    using T = decltype(tag);
    // A chunk of 4 elements loads as one vector where the base is aligned to 4 elements (16
    // bytes of f32, 8 of bf16); the chunk order is the same either way.
    const bool vec = reinterpret_cast<std::uintptr_t>(t) % (4 * sizeof(T)) == 0;
    sum_of_squares_partial_kernel<T>
        <<<kSosBlocks, kThreads, 0, stream>>>(static_cast<const T*>(t), n, vec, partial);
  });
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

void amax_only(const void* t, ElemType type, std::int64_t n, cudaStream_t stream, AmaxOut amax) {
  if (amax.meta == nullptr) return;
  const std::int64_t count = n > 0 ? n : 0;
  const bool vec = aligned16(t);
  dispatch_type(type, [&](auto tag) {
    using T = decltype(tag);
    amax_only_kernel<T><<<elementwise_blocks(count, vec), kThreads, 0, stream>>>(
        static_cast<const T*>(t), count, vec, amax);
  });
}

void adamw_update(float* param, const void* grad, ElemType grad_type, void* m, void* v,
                  ElemType moments, std::uint16_t* working, std::int64_t n, const AdamWArgs& args,
                  cudaStream_t stream, AmaxOut working_amax) {
  if (n <= 0 && !working_amax.meta) return;
  const bool vec = aligned16(param) && aligned16(grad) && aligned16(m) && aligned16(v) &&
                   (working == nullptr || aligned16(working));
  dispatch_type(grad_type, [&](auto gtype) {
    dispatch_type(moments, [&](auto mtype) {
      using G = decltype(gtype);
      using M = decltype(mtype);
      adamw_kernel<G, M><<<lane_pair_blocks<kQuad>(n, vec), kThreads, 0, stream>>>(
          param, static_cast<const G*>(grad), static_cast<M*>(m), static_cast<M*>(v), working, n,
          vec, args, working_amax);
    });
  });
}

}  // namespace fp8lab::cuda_ops
