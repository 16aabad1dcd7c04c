// Small bookkeeping kernels of the CUDA backend (see cuda_kernels/cuda_ops_launch.hpp).
#include "cuda_kernels/cuda_ops_launch.hpp"

#include <cstdint>
#include <type_traits>

namespace fp8lab::cuda_ops {
namespace {

// 8 elements per thread per iteration with 16-byte accesses (n % 8 == 0, aligned pointers);
// the general kernel below takes everything else.
template <typename B>
__global__ void add_f32_vec8_kernel(const float4* a, const B* b, float4* out, std::int64_t n8) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n8;
       i += stride) {
    const float4 a0 = a[2 * i], a1 = a[2 * i + 1];
    float bv[8];
    if constexpr (sizeof(B) == 16 && std::is_same_v<B, uint4>) {  // 8 bf16
      const uint4 raw = b[i];
      const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
      for (int k = 0; k < 4; ++k) {
        bv[2 * k] = __uint_as_float(words[k] << 16);
        bv[2 * k + 1] = __uint_as_float(words[k] & 0xFFFF0000u);
      }
    } else {  // 8 f32 as two float4
      const float4 b0 = b[2 * i], b1 = b[2 * i + 1];
      bv[0] = b0.x, bv[1] = b0.y, bv[2] = b0.z, bv[3] = b0.w;
      bv[4] = b1.x, bv[5] = b1.y, bv[6] = b1.z, bv[7] = b1.w;
    }
    out[2 * i] = make_float4(a0.x + bv[0], a0.y + bv[1], a0.z + bv[2], a0.w + bv[3]);
    out[2 * i + 1] = make_float4(a1.x + bv[4], a1.y + bv[5], a1.z + bv[6], a1.w + bv[7]);
  }
}

__global__ void add_f32_scalar_kernel(const float* a, const void* b, bool b_bf16, float* out,
                                      std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float bv =
        b_bf16 ? __uint_as_float(static_cast<unsigned>(static_cast<const unsigned short*>(b)[i])
                                 << 16)
               : static_cast<const float*>(b)[i];
    out[i] = a[i] + bv;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

void add_f32(const float* a, const void* b, ElemType b_type, float* out, std::int64_t n,
             cudaStream_t stream) {
  const int threads = 256;
  const int blocks = 132 * 8;  // a few waves of resident blocks on 132 SMs; grid-stride beyond
  if (n % 8 == 0 && aligned16(a) && aligned16(b) && aligned16(out)) {
    const auto* a4 = reinterpret_cast<const float4*>(a);
    auto* out4 = reinterpret_cast<float4*>(out);
    if (b_type == ElemType::bf16) {
      add_f32_vec8_kernel<uint4><<<blocks, threads, 0, stream>>>(
          a4, static_cast<const uint4*>(b), out4, n / 8);
    } else {
      add_f32_vec8_kernel<float4><<<blocks, threads, 0, stream>>>(
          a4, static_cast<const float4*>(b), out4, n / 8);
    }
    return;
  }
  add_f32_scalar_kernel<<<blocks, threads, 0, stream>>>(a, b, b_type == ElemType::bf16, out, n);
}

}  // namespace fp8lab::cuda_ops
