// Kernel launchers of the CUDA backend's inference ops
// (src/cuda_attention/cuda_attention_cached.cu), called by CudaBackend
// (src/cuda_backend/cuda_inference_ops.cpp), which validates the views first and checks the launch.
// A plain header for the reason cuda_kernels/cuda_ops_launch.hpp gives (nvcc cannot compile fmt).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fp8lab::cuda_ops {

// Backend::attention_cached_forward on bf16 tensors: qkv [rows, 3 d], caches [T, d], out
// [rows, d], d = heads * head_dim. Stores the rows' k and v into the caches at rows pos ..
// pos + rows - 1, then each row attends to cache rows 0 .. pos + its index.
void attention_cached_forward(const void* qkv, void* k_cache, void* v_cache, void* out, int rows,
                              std::int64_t pos, int heads, int head_dim, cudaStream_t stream);

}  // namespace fp8lab::cuda_ops
