// The GPU's energy counter (bench/energy_counter.hpp, read by `fp8lab bench model`) on a real
// GPU: NVML loads, finds the device the CUDA runtime uses by its PCI bus id, and its counter
// climbs while the GPU works, at a power between the board's idle and its limit.
#if defined(FP8LAB_HAVE_CUDA)
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>

#include "bench/energy_counter.hpp"
#include "cuda/cuda_test_util.hpp"

namespace fp8lab {
namespace {

TEST(CudaEnergyCounter, CountsUpWhileTheGpuWorks) {
  FP8LAB_SKIP_WITHOUT_GPU();
  int device = 0;
  char bus_id[32] = {};
  FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
  FP8LAB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  const bench::GpuEnergyCounter counter(bus_id);
  ASSERT_TRUE(counter.available()) << counter.why_not();
  // ~0.5 s of memsets over 1 GiB: the counter's own update period is well below that.
  constexpr std::size_t kBytes = std::size_t{1} << 30;
  void* buffer = nullptr;
  FP8LAB_CUDA_CHECK(cudaMalloc(&buffer, kBytes));
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  const std::optional<double> before = counter.joules();
  const auto start = std::chrono::steady_clock::now();
  double seconds = 0;
  for (int i = 0; seconds < 0.5; ++i) {
    FP8LAB_CUDA_CHECK(cudaMemsetAsync(buffer, i & 0xFF, kBytes));
    if (i % 64 == 63) {
      FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  const std::optional<double> after = counter.joules();
  FP8LAB_CUDA_CHECK(cudaFree(buffer));
  ASSERT_TRUE(before && after);
  const double watts = (*after - *before) / seconds;
  // An H200 idles near 80 W and is capped at 700 W; a memset loop lies between.
  EXPECT_GT(watts, 30.0) << (*after - *before) << " J in " << seconds << " s";
  EXPECT_LT(watts, 1000.0) << (*after - *before) << " J in " << seconds << " s";
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
