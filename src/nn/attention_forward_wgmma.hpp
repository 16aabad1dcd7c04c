// The Hopper (wgmma) attention forward (cuda_attention_forward_wgmma.cu) as its caller,
// cuda_attention_forward.cu, sees it: the head dims it is built for and its entry point.
#pragma once

#include <cuda_runtime_api.h>

#include "nn/cuda_ops_launch.hpp"  // AmaxOut

namespace fp8lab::cuda_ops {

inline bool wgmma_forward_supports(int head_dim) { return head_dim == 64 || head_dim == 128; }

// out and lse from qkv, as attention_forward (cuda_ops_launch.hpp); batch, seq_len, n_heads >= 1.
void attention_forward_wgmma(const void* qkv, void* out, float* lse, int batch, int seq_len,
                             int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax);

}  // namespace fp8lab::cuda_ops
