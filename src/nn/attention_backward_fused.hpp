// The FlashAttention-2-style attention backward (cuda_attention_backward_fused.cu) as its caller,
// cuda_attention_backward.cu, sees it: the head dims it is built for and the workspace layout
// both algorithms share.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "nn/cuda_ops_launch.hpp"  // AmaxOut

namespace fp8lab::cuda_ops {

// Query rows per step of the fused kernel: the unit in which dQ is accumulated and ordered.
constexpr int kFusedBwdQueryTile = 64;

inline bool fused_backward_supports(int head_dim) { return head_dim == 64 || head_dim == 128; }

// The backward's workspace, in 256-byte aligned parts (byte offsets; total = the size):
//   row_dot    [B, H, T] f32                 Di = rowsum(dO_i * O_i), both algorithms
//   tiles_done [B, H, query tiles] u32       per query tile: key tiles whose dQ share is added
//   dq_accum   [B, H, query tiles, 64 * hd] f32   running dQ sums (fused only)
// The fused parts are absent (zero bytes) when the two-pass kernels run.
struct BackwardWorkspaceLayout {
  std::size_t row_dot = 0, tiles_done = 0, dq_accum = 0, total = 0;
  std::int64_t n_tiles_done = 0;
};

inline BackwardWorkspaceLayout backward_workspace_layout(int batch, int seq_len, int n_heads,
                                                         int head_dim, bool fused) {
  const auto aligned = [](std::size_t bytes) { return (bytes + 255) / 256 * 256; };
  const auto batch_heads = static_cast<std::size_t>(batch) * static_cast<std::size_t>(n_heads);
  const auto q_tiles =
      static_cast<std::size_t>((seq_len + kFusedBwdQueryTile - 1) / kFusedBwdQueryTile);
  BackwardWorkspaceLayout l;
  l.total = aligned(batch_heads * static_cast<std::size_t>(seq_len) * sizeof(float));
  if (fused) {
    l.tiles_done = l.total;
    l.n_tiles_done = static_cast<std::int64_t>(batch_heads * q_tiles);
    l.total += aligned(batch_heads * q_tiles * sizeof(unsigned));
    l.dq_accum = l.total;
    l.total += aligned(batch_heads * q_tiles * kFusedBwdQueryTile *
                       static_cast<std::size_t>(head_dim) * sizeof(float));
  }
  return l;
}

// dqkv (all three parts) from qkv, lse, dout and Di. tiles_done must be zero on entry (the
// caller's Di kernel clears it); dq_accum needs no initialisation. `amax`: the producer-fused
// amax of all of dqkv (AmaxOut in cuda_ops_launch.hpp).
void attention_backward_fused(const void* qkv, const float* lse, const void* dout,
                              const float* row_dot, unsigned* tiles_done, float* dq_accum,
                              void* dqkv, int batch, int seq_len, int n_heads, int head_dim,
                              cudaStream_t stream, AmaxOut amax);

}  // namespace fp8lab::cuda_ops
