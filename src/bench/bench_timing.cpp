// CUDA-event timing (see bench_timing.hpp).
#if defined(FP8LAB_HAVE_CUDA)
#include "bench/bench_timing.hpp"

#include <algorithm>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/cuda_memory.hpp"

namespace fp8lab::bench {

TimingStats time_repeats(int warmup, int repeats, cudaStream_t stream,
                         const std::function<void(int)>& body) {
  FP8LAB_CHECK(repeats > 0, "time_repeats: repeats must be positive, got {}", repeats);
  for (int i = 0; i < warmup; ++i) body(i);
  std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(repeats));
  for (cudaEvent_t& e : events) FP8LAB_CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < repeats; ++i) {
    FP8LAB_CUDA_CHECK(cudaEventRecord(events[2 * i], stream));
    body(warmup + i);
    FP8LAB_CUDA_CHECK(cudaEventRecord(events[2 * i + 1], stream));
  }
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms(static_cast<std::size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    float t = 0;
    FP8LAB_CUDA_CHECK(cudaEventElapsedTime(&t, events[2 * i], events[2 * i + 1]));
    ms[static_cast<std::size_t>(i)] = t;
  }
  for (cudaEvent_t e : events) cudaEventDestroy(e);
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) { return ms[static_cast<std::size_t>(q * (repeats - 1) + 0.5)]; };
  return {at(0.5), at(0.1), at(0.9)};
}

double copy_bandwidth_gbps(DeviceArena& arena, std::size_t bytes, int repeats,
                           cudaStream_t stream) {
  const std::size_t mark = arena.mark();
  void* src = arena.allocate(bytes, "copy bandwidth source");
  void* dst = arena.allocate(bytes, "copy bandwidth destination");
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(src, 0x3C, bytes, stream));
  const TimingStats t = time_repeats(3, repeats, stream, [&](int) {
    FP8LAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  arena.release(mark);
  return 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e-3) / 1e9;
}

}  // namespace fp8lab::bench
#endif  // FP8LAB_HAVE_CUDA
