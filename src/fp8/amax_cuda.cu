// Tensorwise amax with the scale computed on the device; the conversion probe; byte comparison.
//
// Determinism and the block protocol of the amax: see amax_device.cuh.
#include <algorithm>

#include "amax_device.cuh"
#include "fp8_device.cuh"

namespace fp8lab::detail {
namespace {

constexpr int kAmaxThreads = 512;

template <typename In>
__device__ __forceinline__ std::uint32_t thread_amax_bits(const In* x, std::int64_t n, bool vec) {
  std::uint32_t m = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t done = 0;
  if (vec) {
    const std::int64_t chunks = n / 16;
    // Two 16-element chunks per iteration: both loads are issued before either is reduced.
    std::int64_t c = tid;
    for (; c + stride < chunks; c += 2 * stride) {
      float v[16], w[16];
      load16(x + c * 16, v);
      load16(x + (c + stride) * 16, w);
#pragma unroll
      for (int i = 0; i < 16; ++i) m = max(m, max(amax_key(v[i]), amax_key(w[i])));
    }
    if (c < chunks) {
      float v[16];
      load16(x + c * 16, v);
#pragma unroll
      for (int i = 0; i < 16; ++i) m = max(m, amax_key(v[i]));
    }
    done = chunks * 16;
  }
  for (std::int64_t i = done + tid; i < n; i += stride) m = max(m, amax_key(load_elem(x + i)));
  return m;
}

template <typename In>
__global__ void __launch_bounds__(kAmaxThreads)
    amax_scale_kernel(const In* x, std::int64_t n, bool vec, Fp8Format format, Fp8Meta* meta) {
  commit_block_amax(thread_amax_bits(x, n, vec), meta, format);
}

template <Fp8Format F>
__global__ void probe_kernel(unsigned long long* mismatches, std::uint32_t* example) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned count = 0;
  for (std::uint64_t u = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       u < (1ull << 32); u += 2 * stride) {
    const float a = bits_float(static_cast<std::uint32_t>(u));
    const float b = bits_float(static_cast<std::uint32_t>(u + stride));
    const std::uint16_t hw = cvt_pair_hw<F>(a, b);
    const bool bad_a = (hw & 0xFF) != float_to_fp8(a, F);
    const bool bad_b = u + stride < (1ull << 32) && (hw >> 8) != float_to_fp8(b, F);
    if (bad_a) *example = static_cast<std::uint32_t>(u);
    if (bad_b) *example = static_cast<std::uint32_t>(u + stride);
    count += bad_a + bad_b;
  }
  if (count) atomicAdd(mismatches, static_cast<unsigned long long>(count));
}

__global__ void byte_mismatch_kernel(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t n,
                                     unsigned long long* count) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long c = 0;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    c += a[i] != b[i];
  if (c) atomicAdd(count, c);
}

}  // namespace

void launch_amax_scale(const void* x, ElemType type, std::int64_t n, Fp8Format format,
                       Fp8Meta* meta, int sm_count, cudaStream_t stream) {
  const bool vec = aligned16(x);
  const std::int64_t chunks =
      std::max<std::int64_t>(1, (n + 16 * kAmaxThreads - 1) / (16 * kAmaxThreads));
  const int grid = static_cast<int>(std::min<std::int64_t>(chunks, 2LL * sm_count));
  if (type == ElemType::bf16)
    amax_scale_kernel<<<grid, kAmaxThreads, 0, stream>>>(static_cast<const std::uint16_t*>(x), n,
                                                         vec, format, meta);
  else
    amax_scale_kernel<<<grid, kAmaxThreads, 0, stream>>>(static_cast<const float*>(x), n, vec,
                                                         format, meta);
}

void launch_conversion_probe(unsigned long long* counts, std::uint32_t* example, int sm_count) {
  probe_kernel<Fp8Format::e4m3><<<8 * sm_count, 256>>>(counts, example);
  probe_kernel<Fp8Format::e5m2><<<8 * sm_count, 256>>>(counts + 1, example);
}

void launch_byte_mismatch(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t n,
                          unsigned long long* count, int sm_count, cudaStream_t stream) {
  byte_mismatch_kernel<<<4 * sm_count, 256, 0, stream>>>(a, b, n, count);
}

}  // namespace fp8lab::detail
