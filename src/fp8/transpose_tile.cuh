// The 128x128 byte tile shared by the FP8 transpose and the fused cast-transpose.
//
// Work split (256 threads, 1024 16-byte chunks per tile, 4 per thread in each phase):
// Phase 1: chunk c = t + 256 i is row c / 8, 16-byte column chunk c % 8; a warp covers 4 whole
// rows, so its global stores of q are whole 128-byte lines. Each chunk goes to shared memory at
// chunk position (c % 8) ^ ((row / 16) & 7).
// Phase 2: thread t gathers four tile columns (t / 8) down one 16-row slab (t % 8) with word
// loads and byte permutes; a warp writes 4 whole 128-byte lines of qt per store.
//
// Banks (32 x 4 bytes): a 128-byte row is exactly 32 banks, so without the swizzle all 8 slabs
// of a column would sit in one bank (an 8-way conflict in phase 2). With it, slab s of a column
// lands in chunk position (col / 16) ^ s: 8 distinct 4-word groups, and a warp's 4 column groups
// are the 4 words of a group: 32 distinct banks. Phase 1: a quarter-warp stores one row's 8
// chunks in a permuted order: 32 distinct banks.
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

// The 4x4 byte transpose: a, b, c, d hold rows 0-3 of four columns (byte k = column k); word k of
// the result holds column k's four rows (byte j = row j). Eight byte permutes instead of sixteen
// byte loads and their shifts (docs/performance.md, "Casts and amax").
__device__ __forceinline__ void transpose4x4_bytes(std::uint32_t a, std::uint32_t b,
                                                   std::uint32_t c, std::uint32_t d,
                                                   std::uint32_t (&col)[4]) {
  const std::uint32_t ab_lo = __byte_perm(a, b, 0x5140), ab_hi = __byte_perm(a, b, 0x7362);
  const std::uint32_t cd_lo = __byte_perm(c, d, 0x5140), cd_hi = __byte_perm(c, d, 0x7362);
  col[0] = __byte_perm(ab_lo, cd_lo, 0x5410);
  col[1] = __byte_perm(ab_lo, cd_lo, 0x7632);
  col[2] = __byte_perm(ab_hi, cd_hi, 0x5410);
  col[3] = __byte_perm(ab_hi, cd_hi, 0x7632);
}

// Phase 2 for a tile at (r0, c0) of a [rows, cols] input: qt is [cols, rows]. rows and cols are
// multiples of 16 (the caller checked), so every 16-byte run is whole or wholly outside.
// Thread t takes four tile columns (group t / 8 of 32) and one 16-row slab (t % 8): 16 word loads
// down the slab, four 4x4 byte transposes, and one 16-byte store per column. A warp's slabs are
// its lanes' t % 8, so each store instruction writes four whole 128-byte lines of qt; its word
// loads hit 32 distinct banks (chunk position (col / 16) ^ slab differs by slab, the word within
// the chunk by column group).
__device__ __forceinline__ void tile_store_transposed(const std::uint8_t (*tile)[kTile],
                                                      std::int64_t r0, std::int64_t c0,
                                                      std::int64_t rows, std::int64_t cols,
                                                      std::uint8_t* qt) {
  static_assert(kTileThreads == (kTile / 4) * (kTile / 16), "one column group and slab a thread");
  const int col = static_cast<int>(threadIdx.x / 8) * 4, slab = static_cast<int>(threadIdx.x % 8);
  // cols is a multiple of 16, so the group's four columns are all inside or all outside.
  if (c0 + col >= cols || r0 + slab * 16 >= rows) return;
  const int pos = tile_swizzle(slab * 16, col >> 4) * 16 + (col & 15);  // same for the slab
  std::uint32_t out[4][4];  // [column][row quad]
#pragma unroll
  for (int quad = 0; quad < 4; ++quad) {
    std::uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      w[j] = *reinterpret_cast<const std::uint32_t*>(&tile[slab * 16 + quad * 4 + j][pos]);
    std::uint32_t cols4[4];
    transpose4x4_bytes(w[0], w[1], w[2], w[3], cols4);
#pragma unroll
    for (int k = 0; k < 4; ++k) out[k][quad] = cols4[k];
  }
#pragma unroll
  for (int k = 0; k < 4; ++k)
    *reinterpret_cast<uint4*>(qt + (c0 + col + k) * rows + r0 + slab * 16) =
        make_uint4(out[k][0], out[k][1], out[k][2], out[k][3]);
}

}  // namespace fp8lab::detail
