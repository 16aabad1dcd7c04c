// TMA tensor maps over the attention's token-major bf16 matrices (qkv [B*T, 3*H*hd], out and
// dout [B*T, H*hd]), for the warp-specialised attention kernels (cuda_attention_forward_ws.cu,
// cuda_attention_backward_ws.cu). Host side; the loads are tma.cuh's.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace fp8lab::cuda_ops {

// Rows and bf16 columns of one TMA box: 64 x 128 bytes, one panel of the 128-byte swizzle,
// which is the sw128 layout the wgmma descriptors read (wgmma.cuh).
constexpr int kTmaBoxRows = 64;
constexpr int kTmaBoxCols = 64;

// Whether the driver has cuTensorMapEncodeTiled: the TMA kernel families need it.
bool tma_available();

// A 3-D map over base as [batch][seq_len][width] bf16 (width elements per token), box
// [1][kTmaBoxRows][kTmaBoxCols], 128-byte swizzle; rows past seq_len (within a batch) are
// zero-filled. The map holds the address, so it is encoded per call. False when the driver
// has no cuTensorMapEncodeTiled or rejects the map (the caller then runs a kernel without TMA).
bool encode_token_tile_map(CUtensorMap* map, const void* base, std::uint64_t width, int seq_len,
                           int batch);

}  // namespace fp8lab::cuda_ops
