// The Hopper (wgmma) attention backward (cuda_attention_backward_wgmma.cu) as its caller,
// cuda_attention_backward.cu, sees it: the head dims it is built for and its entry point. Its
// workspace is the two-pass one (Di only, BackwardWorkspaceLayout with fused = false).
#pragma once

#include <cuda_runtime_api.h>

#include "nn/cuda_ops_launch.hpp"  // AmaxOut

namespace fp8lab::cuda_ops {

inline bool wgmma_backward_supports(int head_dim) { return head_dim == 64 || head_dim == 128; }

// dqkv (all three parts) from qkv, lse, dout and Di (row_dot, from the caller's Di kernel).
// Deterministic: every output row is summed by one warpgroup in a fixed order, no atomics.
// `amax`: the producer-fused amax of all of dqkv (AmaxOut in cuda_ops_launch.hpp).
void attention_backward_wgmma(const void* qkv, const float* lse, const void* dout,
                              const float* row_dot, void* dqkv, int batch, int seq_len, int n_heads,
                              int head_dim, cudaStream_t stream, AmaxOut amax);

}  // namespace fp8lab::cuda_ops
