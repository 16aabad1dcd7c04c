// The 64x64 byte tile shared by the FP8 transpose and the fused cast-transpose.
//
// Phase 1: thread t owns row t/4 and the 16-byte chunk t%4 of the tile; it stores its 16 bytes
// into shared memory at chunk (t%4) ^ ((row/16) & 3). Phase 2: thread t owns output row t/4 (a
// column of the tile) and the 16-row slab t%4; it gathers 16 bytes down that column and writes
// them as one 16-byte store, four threads covering a 64-byte run of the output row.
//
// Banks (32 x 4 bytes): in phase 1 a quarter-warp writes two whole 64-byte rows, 32 distinct
// banks. In phase 2 a warp reads, for each i, bytes (16*slab + i, col) for slabs 0..3 and cols
// 0..7; row pitch 64 would put the four slabs in one bank (16*64 bytes apart), and the XOR swizzle
// moves slab s to chunk s, i.e. 4*s words further: 8 distinct banks, the rest broadcasts.
#pragma once

#include <cstdint>

namespace fp8lab::detail {

constexpr int kTile = 64;
constexpr int kTileThreads = 256;

__device__ __forceinline__ int tile_swizzle(int row, int chunk) { return chunk ^ ((row >> 4) & 3); }

__device__ __forceinline__ void tile_put16(std::uint8_t (*tile)[kTile], int row, int chunk,
                                           uint4 bytes) {
  *reinterpret_cast<uint4*>(&tile[row][tile_swizzle(row, chunk) * 16]) = bytes;
}

// Phase 2 for a tile at (r0, c0) of a [rows, cols] input: qt is [cols, rows]. rows and cols are
// multiples of 16 (the caller checked), so every 16-byte run is whole or wholly outside.
__device__ __forceinline__ void tile_store_transposed(const std::uint8_t (*tile)[kTile],
                                                      std::int64_t r0, std::int64_t c0,
                                                      std::int64_t rows, std::int64_t cols,
                                                      std::uint8_t* qt) {
  const int col = threadIdx.x >> 2;
  const int slab = threadIdx.x & 3;
  if (c0 + col >= cols || r0 + slab * 16 >= rows) return;
  std::uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    std::uint32_t word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int row = slab * 16 + j * 4 + b;
      word |= static_cast<std::uint32_t>(tile[row][tile_swizzle(row, col >> 4) * 16 + (col & 15)])
              << (8 * b);
    }
    w[j] = word;
  }
  *reinterpret_cast<uint4*>(qt + (c0 + col) * rows + r0 + slab * 16) = make_uint4(w[0], w[1], w[2], w[3]);
}

}  // namespace fp8lab::detail
