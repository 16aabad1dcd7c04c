// The warp-specialised attention forward (cuda_attention_forward_ws.cu) as its caller,
// cuda_attention_forward.cu, sees it.
#pragma once

#include <cuda_runtime_api.h>

#include "nn/cuda_ops_launch.hpp"  // AmaxOut

namespace fp8lab::cuda_ops {

// out and lse from qkv, as attention_forward (cuda_ops_launch.hpp), with the same bits as the
// wgmma kernel; batch, seq_len, n_heads >= 1. False (nothing launched) where it is not built:
// head dims other than 128, or a driver without cuTensorMapEncodeTiled.
bool attention_forward_ws(const void* qkv, void* out, float* lse, int batch, int seq_len,
                          int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax);

}  // namespace fp8lab::cuda_ops
