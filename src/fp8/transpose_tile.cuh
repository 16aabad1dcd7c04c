// The 128x128 byte tile shared by the FP8 transpose and the fused cast-transpose.
//
// Work split (256 threads, 1024 16-byte chunks per tile, 4 per thread in each phase):
// Phase 1: chunk c = t + 256 i is row c / 8, 16-byte column chunk c % 8; a warp covers 4 whole
// rows, so its global stores of q are whole 128-byte lines. Each chunk goes to shared memory at
// chunk position (c % 8) ^ ((row / 16) & 7).
// Phase 2: chunk c is output row (tile column) c / 8 and 16-row slab c % 8; a warp writes 4 whole
// 128-byte lines of qt, each gathered down one tile column.
//
// Banks (32 x 4 bytes): a 128-byte row is exactly 32 banks, so without the swizzle all 8 slabs
// of a column would sit in one bank (an 8-way conflict in phase 2). With it, slab s of a column
// lands in chunk position (col / 16) ^ s: 8 distinct 4-word groups, no conflict (the 4 threads
// of one column group share a word: broadcast). Phase 1: a quarter-warp stores one row's 8 chunks
// in a permuted order: 32 distinct banks.
#pragma once

#include <cstdint>

namespace fp8lab::detail {

constexpr int kTile = 128;
constexpr int kTileThreads = 256;
constexpr int kChunksPerRow = kTile / 16;                               // 8
constexpr int kChunksPerThread = kTile * kChunksPerRow / kTileThreads;  // 4

__device__ __forceinline__ int tile_swizzle(int row, int chunk) { return chunk ^ ((row >> 4) & 7); }

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
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int c = threadIdx.x + i * kTileThreads;
    const int col = c / kChunksPerRow, slab = c % kChunksPerRow;
    if (c0 + col >= cols || r0 + slab * 16 >= rows) continue;
    const int pos = tile_swizzle(slab * 16, col >> 4) * 16 + (col & 15);  // same for the slab
    std::uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      std::uint32_t word = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b)
        word |= static_cast<std::uint32_t>(tile[slab * 16 + j * 4 + b][pos]) << (8 * b);
      w[j] = word;
    }
    *reinterpret_cast<uint4*>(qt + (c0 + col) * rows + r0 + slab * 16) =
        make_uint4(w[0], w[1], w[2], w[3]);
  }
}

}  // namespace fp8lab::detail
