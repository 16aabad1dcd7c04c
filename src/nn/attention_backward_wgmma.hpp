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

// The dQ pass alone, for the warp-specialised backward at head dims where it runs its own dK/dV
// pass but this dQ kernel (cuda_attention_backward_ws.cu's kWsDq says where). amax_blocks: the
// CTAs of every kernel that commits into the same amax, this pass's included (its own count is
// attention_backward_wgmma_dq_blocks), so that the amax is finalised once, after the last.
unsigned attention_backward_wgmma_dq_blocks(int batch, int seq_len, int n_heads, int head_dim);
void attention_backward_wgmma_dq(const void* qkv, const float* lse, const void* dout,
                                 const float* row_dot, void* dqkv, int batch, int seq_len,
                                 int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax,
                                 unsigned amax_blocks);

}  // namespace fp8lab::cuda_ops
