// Pieces shared by the wgmma attention kernels (cuda_attention_forward_wgmma.cu,
// cuda_attention_backward_wgmma.cu): the CTA shape (two warpgroups, each owning 64 rows of the
// tile products), tile loads into the sw128 layout of wgmma.cuh, and the repacking of an
// accumulator tile as register A fragments.
#pragma once

#include "cuda_attention/attention_tiles.cuh"
#include "cuda_attention/wgmma.cuh"

namespace fp8lab::cuda_ops {
namespace {

// Two warpgroups per CTA share the walked tiles (one load for both). One warpgroup per CTA, free
// of the CTA barrier that keeps the two in step, measured no faster (docs/performance.md,
// "Attention").
constexpr int kWgThreads = 256;  // two warpgroups
constexpr int kWgRows = 64;      // rows of one warpgroup's tile products
constexpr int kWgStep = 64;      // columns of S per step (queries | keys)
constexpr int kBuffers = 2;      // walked tiles: the one read, the one landing

// This thread's warpgroup, broadcast from lane 0 so that the compiler knows it is the same
// across the warp (CUTLASS does the same): the wgmma descriptors built from it can then live
// in uniform registers instead of being computed per thread and moved over (R2UR) for every
// wgmma.
__device__ __forceinline__ int warpgroup_index() {
  return __shfl_sync(0xFFFFFFFFu, static_cast<int>(threadIdx.x) / 128, 0);
}

// Rows row0.. of one head -> an sw128-panel tile of ROWS x HD (wgmma.cuh); rows >= seq_len
// are zero-filled (load_tile_chunks; the caller commits).
template <int HD, int ROWS>
__device__ __forceinline__ void load_tile_sw128(bf16_bits* tile, const bf16_bits* head,
                                                std::int64_t stride, int row0, int seq_len) {
  load_tile_chunks<HD, ROWS, kWgThreads>(tile, head, stride, row0, seq_len,
                                         [](int r, int col) { return sw128_offset(ROWS, r, col); });
}

// The dynamic shared memory rounded up to the 1024-byte alignment the swizzle needs (the
// launches ask for 1 KiB more than the layout).
__device__ __forceinline__ unsigned char* smem_aligned_1024(uint4* raw) {
  const std::uint32_t pad = (1024u - (smem_addr(raw) & 1023u)) & 1023u;
  return reinterpret_cast<unsigned char*>(raw) + pad;
}

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
