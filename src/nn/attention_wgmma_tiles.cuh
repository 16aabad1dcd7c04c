// Pieces shared by the wgmma attention kernels (cuda_attention_forward_wgmma.cu,
// cuda_attention_backward_wgmma.cu): the CTA shape (two warpgroups, each owning 64 rows of the
// tile products), tile loads into the sw128 layout of wgmma.cuh, and the repacking of an
// accumulator tile as register A fragments.
#pragma once

#include "nn/attention_tiles.cuh"
#include "nn/wgmma.cuh"

namespace fp8lab::cuda_ops {
namespace {

constexpr int kWgThreads = 256;  // two warpgroups
constexpr int kWgRows = 64;      // rows of one warpgroup's tile products
constexpr int kWgStep = 64;      // columns of S per step (queries | keys)
constexpr int kBuffers = 2;      // walked tiles: the one read, the one landing

// Rows row0.. of one head -> an sw128-panel tile of ROWS x HD (wgmma.cuh); rows >= seq_len
// are zero-filled (cp.async; the caller commits).
template <int HD, int ROWS>
__device__ __forceinline__ void load_tile_sw128(bf16_bits* tile, const bf16_bits* head,
                                                std::int64_t stride, int row0, int seq_len) {
  constexpr int kChunksPerRow = HD / 8;
  constexpr int kChunks = ROWS * kChunksPerRow;
  static_assert(kChunks % kWgThreads == 0, "tile chunks must split evenly over the threads");
#pragma unroll
  for (int i = 0; i < kChunks / kWgThreads; ++i) {
    const int c = static_cast<int>(threadIdx.x) + i * kWgThreads;
    const int r = c / kChunksPerRow, col = (c % kChunksPerRow) * 8;
    const bool valid = row0 + r < seq_len;
    const bf16_bits* src = valid ? head + static_cast<std::int64_t>(row0 + r) * stride + col : head;
    cp_async_16(tile + sw128_offset(ROWS, r, col), src, valid);
  }
}

// The dynamic shared memory rounded up to the 1024-byte alignment the swizzle needs (the
// launches ask for 1 KiB more than the layout).
__device__ __forceinline__ unsigned char* smem_aligned_1024(uint4* raw) {
  const std::uint32_t pad = (1024u - (smem_addr(raw) & 1023u)) & 1023u;
  return reinterpret_cast<unsigned char*>(raw) + pad;
}

// This thread's m64k16 A fragments (wgmma.cuh) of the 64 rows row0.. of an sw128 tile of
// `rows` rows, all HD columns: for operands that stay fixed over a whole walk, read once from
// shared memory so that their wgmmas read only B there.
template <int HD>
__device__ __forceinline__ void load_a_fragments(std::uint32_t (&a)[HD / 16][4],
                                                 const bf16_bits* tile, int rows, int row0) {
  const int lane = static_cast<int>(threadIdx.x) % 32,
            warp_in_wg = (static_cast<int>(threadIdx.x) / 32) % 4;
  const int r = row0 + warp_in_wg * 16 + (lane >> 2), col0 = 2 * (lane & 3);
  const auto word = [&](int row, int col) {
    return *reinterpret_cast<const std::uint32_t*>(tile + sw128_offset(rows, row, col));
  };
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk) {
    const int col = kk * 16 + col0;
    a[kk][0] = word(r, col);
    a[kk][1] = word(r + 8, col);
    a[kk][2] = word(r, col + 8);
    a[kk][3] = word(r + 8, col + 8);
  }
}

// The A operand of a product repeated at every step of a walk (K or V of a key tile, Q or dO of a
// query tile): 64 rows of an sw128 tile in shared memory, times the K-major B tile of the step,
// over HD. With kInRegs the fragments are read into registers once (load_a_fragments) and the
// wgmmas read only B from shared memory: half the shared-memory bytes per product, for HD / 4
// registers.
template <int HD, bool kInRegs>
struct WalkOperand {
  std::uint32_t frag[kInRegs ? HD / 16 : 1][4];
  std::uint32_t tile;  // shared-memory byte address of the sw128 tile
  int rows, row0;

  // After the tile has landed (and, in registers, been read by every thread).
  __device__ __forceinline__ WalkOperand(const bf16_bits* t, int tile_rows, int first_row)
      : tile(smem_addr(t)), rows(tile_rows), row0(first_row) {
    if constexpr (kInRegs) load_a_fragments<HD>(frag, t, tile_rows, first_row);
  }
  // acc = A B^T, B = rows 0..63 of the sw128 tile at b_tile (b_rows rows). Issued, not waited for.
  __device__ __forceinline__ void product(float (&acc)[8][4], std::uint32_t b_tile,
                                          int b_rows) const {
    if constexpr (kInRegs) {
      wgmma_rs_n64_overwrite(acc, frag[0], sw128_desc_kmajor(b_tile, b_rows, 0, 0));
#pragma unroll
      for (int k = 1; k < HD / 16; ++k)
        wgmma_rs_n64(acc, frag[k], sw128_desc_kmajor(b_tile, b_rows, 0, k));
    } else {
      wgmma_ss_n64_overwrite(acc, sw128_desc_kmajor(tile, rows, row0, 0),
                             sw128_desc_kmajor(b_tile, b_rows, 0, 0));
#pragma unroll
      for (int k = 1; k < HD / 16; ++k)
        wgmma_ss_n64(acc, sw128_desc_kmajor(tile, rows, row0, k),
                     sw128_desc_kmajor(b_tile, b_rows, 0, k), 1);
    }
  }
};

// A [64 x 64] accumulator tile rounded to bf16 as four m64k16 A fragments: two accumulator blocks
// of 8 columns make one fragment of 16 k (wgmma.cuh).
__device__ __forceinline__ void pack_a_fragments(const float (&v)[8][4], std::uint32_t (&a)[4][4]) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    a[kk][0] = pack_bf16(v[2 * kk][0], v[2 * kk][1]);
    a[kk][1] = pack_bf16(v[2 * kk][2], v[2 * kk][3]);
    a[kk][2] = pack_bf16(v[2 * kk + 1][0], v[2 * kk + 1][1]);
    a[kk][3] = pack_bf16(v[2 * kk + 1][2], v[2 * kk + 1][3]);
  }
}

}  // namespace
}  // namespace fp8lab::cuda_ops
