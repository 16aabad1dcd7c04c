// Device-side random fills for benchmark inputs (gigabytes: generating them on the host and
// copying would dominate the benchmark's run time). Not the Philox stream of rng.hpp: benchmark
// data only needs to be fresh, finite, non-zero and normally distributed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fp8lab::detail {

// bf16 values stddev * N(0, 1) (Box-Muller on a counter hash of (seed, index)).
void launch_fill_normal_bf16(std::uint16_t* out, std::int64_t n, std::uint64_t seed, float stddev,
                             int sm_count, cudaStream_t stream);

}  // namespace fp8lab::detail
