// The warp-specialised attention backward (cuda_attention_backward_ws.cu) as its caller,
// cuda_attention_backward.cu, sees it. Its workspace is the two-pass one (Di only).
#pragma once

#include <cuda_runtime_api.h>

#include "nn/cuda_ops_launch.hpp"  // AmaxOut

namespace fp8lab::cuda_ops {

// dqkv from qkv, lse, dout and Di (row_dot) with the same bits as attention_backward_wgmma;
// batch, seq_len, n_heads >= 1. False (nothing launched) where it is not built: head dims other
// than 64 and 128, or a driver without cuTensorMapEncodeTiled.
bool attention_backward_ws(const void* qkv, const float* lse, const void* dout,
                           const float* row_dot, void* dqkv, int batch, int seq_len, int n_heads,
                           int head_dim, cudaStream_t stream, AmaxOut amax);

}  // namespace fp8lab::cuda_ops
