// Attention of new rows against a key/value cache (Backend::attention_cached_forward), bf16.
//
// One block per (head, new row). The scores and the output are accumulated in the order of the
// CPU reference (cpu_inference.cpp): each score a dot product over the head's columns in column
// order, the softmax sum over the keys in key order (one thread), each output column a sum over
// the keys in key order; products and sums are rounded separately (__fmul_rn, __fadd_rn: no
// fused multiply-add, as the CPU build has none). Only expf and the CPU's std::exp may differ, in
// the last bit. Generation feeds one row at a time, so the work is small and these sequential
// sums cost little next to the GEMMs; what matters is that both backends pick the same tokens.
#include <cuda_runtime.h>

#include <cstdint>

#include "fp8lab/fp8_format.hpp"
#include "cuda_kernels/cuda_inference_launch.hpp"

namespace fp8lab::cuda_ops {
namespace {

using bf16_bits = std::uint16_t;
constexpr int kThreads = 128;

__global__ void kv_cache_store_kernel(const bf16_bits* __restrict__ qkv,
                                      bf16_bits* __restrict__ k_cache,
                                      bf16_bits* __restrict__ v_cache, int rows, int d,
                                      std::int64_t pos) {
  const std::int64_t total = static_cast<std::int64_t>(rows) * d;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / d, c = i - r * d;
    const bf16_bits* src = qkv + r * 3 * d;
    k_cache[(pos + r) * d + c] = src[d + c];
    v_cache[(pos + r) * d + c] = src[2 * d + c];
  }
}

// Dynamic shared memory: q [head_dim], then one score per key (pos + row + 1 of them).
__global__ void __launch_bounds__(kThreads)
    attention_cached_kernel(const bf16_bits* __restrict__ qkv,
                            const bf16_bits* __restrict__ k_cache,
                            const bf16_bits* __restrict__ v_cache, bf16_bits* __restrict__ out,
                            int d, int head_dim, std::int64_t pos, float scale) {
  extern __shared__ float smem[];
  __shared__ float block_max[kThreads / 32];
  __shared__ float total;
  const int h = blockIdx.x, r = blockIdx.y;
  const std::int64_t keys = pos + r + 1;
  float* q = smem;
  float* s = smem + head_dim;
  const std::int64_t col = static_cast<std::int64_t>(h) * head_dim;
  for (int c = threadIdx.x; c < head_dim; c += blockDim.x)
    q[c] = bf16_to_float(qkv[static_cast<std::int64_t>(r) * 3 * d + col + c]);
  __syncthreads();
  float mx = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < keys; j += blockDim.x) {
    const bf16_bits* k = k_cache + j * d + col;
    float dot = 0.f;
    for (int c = 0; c < head_dim; ++c) dot = __fadd_rn(dot, __fmul_rn(q[c], bf16_to_float(k[c])));
    s[j] = __fmul_rn(dot, scale);
    mx = fmaxf(mx, s[j]);
  }
  for (int offset = 16; offset > 0; offset /= 2)
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, offset));
  if (threadIdx.x % 32 == 0) block_max[threadIdx.x / 32] = mx;
  __syncthreads();
  mx = block_max[0];
  for (int w = 1; w < kThreads / 32; ++w) mx = fmaxf(mx, block_max[w]);
  for (std::int64_t j = threadIdx.x; j < keys; j += blockDim.x) s[j] = expf(s[j] - mx);
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.f;
    for (std::int64_t j = 0; j < keys; ++j) sum = __fadd_rn(sum, s[j]);
    total = sum;
  }
  __syncthreads();
  for (int c = threadIdx.x; c < head_dim; c += blockDim.x) {
    float o = 0.f;
    for (std::int64_t j = 0; j < keys; ++j)
      o = __fadd_rn(o, __fmul_rn(s[j], bf16_to_float(v_cache[j * d + col + c])));
    out[static_cast<std::int64_t>(r) * d + col + c] = float_to_bf16(__fdiv_rn(o, total));
  }
}

}  // namespace

void attention_cached_forward(const void* qkv, void* k_cache, void* v_cache, void* out, int rows,
                              std::int64_t pos, int heads, int head_dim, cudaStream_t stream) {
  const int d = heads * head_dim;
  const auto* q = static_cast<const bf16_bits*>(qkv);
  auto* kc = static_cast<bf16_bits*>(k_cache);
  auto* vc = static_cast<bf16_bits*>(v_cache);
  const std::int64_t elems = static_cast<std::int64_t>(rows) * d;
  const int store_blocks =
      static_cast<int>((elems + 255) / 256 < 4096 ? (elems + 255) / 256 : 4096);
  kv_cache_store_kernel<<<store_blocks, 256, 0, stream>>>(q, kc, vc, rows, d, pos);
  const std::size_t smem = sizeof(float) * static_cast<std::size_t>(head_dim + pos + rows);
  if (smem > 48 * 1024) {  // a long context: ask for more than the default carve-out
    cudaFuncSetAttribute(attention_cached_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
  }
  const float scale = 1.f / sqrtf(static_cast<float>(head_dim));
  attention_cached_kernel<<<dim3(heads, rows), kThreads, smem, stream>>>(
      q, kc, vc, static_cast<bf16_bits*>(out), d, head_dim, pos, scale);
}

}  // namespace fp8lab::cuda_ops
