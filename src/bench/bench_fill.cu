// Device-side normal fills for the benchmarks (see bench_fill.hpp).
#include "bench_fill.hpp"

namespace fp8lab::detail {
namespace {

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ std::uint16_t to_bf16_rne(float x) {
  std::uint32_t bits = __float_as_uint(x);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

__global__ void fill_normal_bf16_kernel(std::uint16_t* out, std::int64_t n, std::uint64_t seed,
                                        float stddev) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x * 2;
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 2;
       i < n; i += stride) {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
    // Two uniforms in (0, 1]: 24 bits each, never 0 so the log is finite.
    const float u1 = (static_cast<float>(h & 0xFFFFFFu) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((h >> 32) & 0xFFFFFFu) * (1.0f / 16777216.0f);
    const float r = stddev * sqrtf(-2.0f * logf(u1));
    float s, c;
    sincospif(2.0f * u2, &s, &c);
    out[i] = to_bf16_rne(r * c);
    if (i + 1 < n) out[i + 1] = to_bf16_rne(r * s);
  }
}

}  // namespace

void launch_fill_normal_bf16(std::uint16_t* out, std::int64_t n, std::uint64_t seed, float stddev,
                             int sm_count, cudaStream_t stream) {
  fill_normal_bf16_kernel<<<8 * sm_count, 256, 0, stream>>>(out, n, seed, stddev);
}

}  // namespace fp8lab::detail
