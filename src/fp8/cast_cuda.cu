// Plain FP8 cast (quantize_cuda): one read of x, one write of q, 16 elements per thread step.
#include <algorithm>

#include "fp8_device.cuh"

namespace fp8lab::detail {
namespace {

constexpr int kCastThreads = 256;

// Grid-stride over 16-element chunks (16-byte aligned x and q, numel % 16 == 0 for the vector
// body); any remainder is cast one element at a time by the same threads.
template <typename In, Fp8Format F, bool kHw>
__global__ void __launch_bounds__(kCastThreads)
    quantize_kernel(const In* x, std::int64_t n, bool vec, Fp8Meta* meta, CastMetaWork work,
                    std::uint8_t* q) {
  const float scale = cast_scale_and_meta_work<F>(meta, work);
  CastTally t;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t done = 0;
  if (vec) {
    const std::int64_t chunks = n / 16;
    for (std::int64_t c = tid; c < chunks; c += stride) {
      Raw16<In> raw;
      raw.load(x + c * 16);
      reinterpret_cast<uint4*>(q)[c] = cast16<In, F, kHw>(raw, scale, t);
    }
    done = chunks * 16;
  }
  for (std::int64_t i = done + tid; i < n; i += stride)
    q[i] = cast1<F, kHw>(load_elem(x + i), scale, t);
  flush_tally(t, meta);
}

template <typename In>
void quantize_typed(const In* x, std::int64_t n, Fp8Format format, bool hw, Fp8Meta* meta,
                    const CastMetaWork& work, std::uint8_t* q, int sm_count, cudaStream_t stream) {
  const bool vec = aligned16(x) && aligned16(q);
  const std::int64_t chunks =
      std::max<std::int64_t>(1, (n + 16 * kCastThreads - 1) / (16 * kCastThreads));
  const int grid = static_cast<int>(std::min<std::int64_t>(chunks, 16LL * sm_count));
  dispatch_cast(format, hw, [&]<Fp8Format F, bool kHw>() {
    quantize_kernel<In, F, kHw><<<grid, kCastThreads, 0, stream>>>(x, n, vec, meta, work, q);
  });
}

}  // namespace

void launch_quantize(const void* x, ElemType type, std::int64_t n, Fp8Format format, bool hw,
                     Fp8Meta* meta, const CastMetaWork& work, std::uint8_t* q, int sm_count,
                     cudaStream_t stream) {
  if (type == ElemType::bf16)
    quantize_typed(static_cast<const std::uint16_t*>(x), n, format, hw, meta, work, q, sm_count,
                   stream);
  else
    quantize_typed(static_cast<const float*>(x), n, format, hw, meta, work, q, sm_count, stream);
}

}  // namespace fp8lab::detail
