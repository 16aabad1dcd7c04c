// The attention kernel families' launchers, as the dispatch table (cuda_attention_dispatch.cu)
// sees them. Each launches one direction of one family for batch, seq_len, n_heads >= 1 and
// returns false, launching nothing, where the family is not built: a head dimension it has no
// kernel for, or (the TMA families) a tensor map the driver cannot encode. Arguments and
// outputs are attention_forward's and attention_backward's (cuda_ops_launch.hpp); all own
// families give the same bits (cuDNN's, at the end, other bits within the same bounds).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "cuda_kernels/cuda_ops_launch.hpp"  // AmaxOut

namespace fp8lab::cuda_ops {

// ---- forward: out and lse from qkv ----------------------------------------------------------
// mma.sync m16n8k16 from cp.async tiles (cuda_attention_forward.cu), hd 32, 64 and 128.
bool attention_forward_mma_sync(const void* qkv, void* out, float* lse, int batch, int seq_len,
                                int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax);
// Hopper warpgroup MMA from cp.async tiles (cuda_attention_forward_wgmma.cu), hd 64 and 128.
bool attention_forward_wgmma(const void* qkv, void* out, float* lse, int batch, int seq_len,
                             int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax);
// The wgmma kernel fed by TMA, warp-specialised (cuda_attention_forward_ws.cu), hd 128.
bool attention_forward_ws(const void* qkv, void* out, float* lse, int batch, int seq_len,
                          int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax);

// ---- backward: dqkv from qkv, lse, dout and Di ----------------------------------------------
// Di = rowsum(dO * O) into row_dot ([B, H, T] f32), which every family reads
// (cuda_attention_backward.cu); hd 32, 64 and 128.
void attention_backward_row_dot(const void* out, const void* dout, float* row_dot, int batch,
                                int seq_len, int n_heads, int head_dim, cudaStream_t stream);
// A dK/dV kernel and a dQ kernel on mma.sync (cuda_attention_backward.cu), hd 32, 64 and 128.
// Deterministic: every output row is summed by one warp in a fixed order, no atomics.
// `amax`: the producer-fused amax of all of dqkv, over both kernels' stores.
bool attention_backward_two_pass(const void* qkv, const float* lse, const void* dout,
                                 const float* row_dot, void* dqkv, int batch, int seq_len,
                                 int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax);
// The same two passes on wgmma (cuda_attention_backward_wgmma.cu), hd 64 and 128; every output
// row summed by one warpgroup in a fixed order.
bool attention_backward_wgmma(const void* qkv, const float* lse, const void* dout,
                              const float* row_dot, void* dqkv, int batch, int seq_len, int n_heads,
                              int head_dim, cudaStream_t stream, AmaxOut amax);
// wgmma's passes with TMA loads and warp-specialised stages (cuda_attention_backward_ws.cu), hd
// 64 and 128; wgmma's bits.
bool attention_backward_ws(const void* qkv, const float* lse, const void* dout,
                           const float* row_dot, void* dqkv, int batch, int seq_len, int n_heads,
                           int head_dim, cudaStream_t stream, AmaxOut amax);

// ---- cuDNN's fused attention (cudnn_attention.cpp), loaded at run time ---------------------
// Why the cudnn family cannot run in this process ("" when the library loaded).
const std::string& cudnn_attention_unavailable();
// The workspace cuDNN's graph for this call needs (building the graph on first use); 0 when
// cuDNN cannot run it (the launch then returns false).
std::size_t cudnn_attention_workspace_bytes(bool forward, int batch, int seq_len, int n_heads,
                                            int head_dim);
// Run the call through cuDNN; false (nothing written, the reason printed once) where the library
// is missing, cuDNN cannot build the graph, a pointer is not 16-byte aligned or the workspace is
// missing. No amax: the dispatch adds it.
bool attention_forward_cudnn(const void* qkv, void* out, float* lse, int batch, int seq_len,
                             int n_heads, int head_dim, void* workspace, cudaStream_t stream);
bool attention_backward_cudnn(const void* qkv, const void* out, const float* lse, const void* dout,
                              void* dqkv, int batch, int seq_len, int n_heads, int head_dim,
                              void* workspace, cudaStream_t stream);

}  // namespace fp8lab::cuda_ops
