// Timing helpers for the GPU benchmarks: CUDA events around each repeat, medians, copy bandwidth.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace fp8lab {
class DeviceArena;
}

namespace fp8lab::bench {

struct TimingStats {
  double median_ms = 0, p10_ms = 0, p90_ms = 0;
};

// Runs body(0 .. warmup-1) untimed, then body(warmup .. warmup+repeats-1), each between its own
// pair of events on `stream`; returns the order statistics of the per-repeat times.
TimingStats time_repeats(int warmup, int repeats, cudaStream_t stream,
                         const std::function<void(int)>& body);

// Device-to-device copy bandwidth in GB/s (bytes read + written), median of `repeats` copies of
// `bytes` each, from arena memory (released afterwards).
double copy_bandwidth_gbps(DeviceArena& arena, std::size_t bytes, int repeats, cudaStream_t stream);

}  // namespace fp8lab::bench
