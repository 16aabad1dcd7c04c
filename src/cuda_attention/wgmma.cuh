// Hopper warpgroup MMA (wgmma) for bf16 tiles in shared memory: the 128-byte-swizzled tile layout,
// its matrix descriptors, the fences and the few instruction shapes the attention kernels use
// (cuda_attention_{forward,backward}_wgmma.cu). sm_90a only.
//
// Layout ("sw128 panels"). A tile of ROWS x COLS bf16 is stored as COLS / 64 panels of
// [ROWS][64]: 128 bytes per row, and the 16-byte chunk j of row r sits at chunk j ^ (r % 8) of
// that row. With the tile 1024-byte aligned this is exactly the hardware's 128-byte swizzle
// (address bits 4-6 XOR bits 7-9), so the same bytes serve two operand views:
// - K-major (the contraction runs along the row): rows are M or N, 8-row groups 1024 bytes
//   apart (SBO); the k-th 16-element slice starts 32 bytes further into the row.
// - N-major (B only, the contraction runs down the rows): rows are K, 16 rows = one k16 slice
//   start 2048 bytes apart; 8-row groups 1024 bytes apart (SBO) and panels along N (LBO).
// The descriptor (PTX ISA, "matrix descriptor"): start address >> 4 in bits 0-13, LBO >> 4 in
// 16-29, SBO >> 4 in 32-45, base offset 0 (aligned tiles), swizzle mode 1 (128 B) in 62-63.
//
// Accumulators: m64nN with f32 D gives each warp w of the warpgroup rows 16w + g and 16w + g + 8
// (g = lane / 4) and, per 8-column block j, columns 8j + 2(lane % 4) + {0, 1}: d[j][0..1] on
// row g, d[j][2..3] on row g + 8, the mma.sync m16n8 layout. A register A fragment (m64k16) is
// the m16n8k16 A fragment of the warp's 16 rows, so two accumulator blocks repack as one A
// fragment (FlashAttention-2's reuse, attention_tiles.cuh's mma_p_b_kn).
#pragma once

#include <cstdint>

namespace fp8lab::cuda_ops {
namespace {

constexpr int kSw128RowBytes = 128;
constexpr int kSw128GroupBytes = 1024;  // 8 rows: the swizzle's period and the SBO

// Element offset of (row, col) in an sw128-panel tile of `rows` rows (col < the tile's COLS).
__host__ __device__ constexpr int sw128_offset(int rows, int row, int col) {
  const int panel = col / 64, chunk = (col % 64) / 8;
  return panel * rows * 64 + row * 64 + ((chunk ^ (row % 8)) * 8) + col % 8;
}

// The descriptor of the operand starting `offset` bytes into the tile at smem byte address
// `tile` (both multiples of 16). Written as (tile >> 4) + (offset >> 4), without masking: the
// shared window's addresses are below 2^18, so the start field (14 bits) cannot overflow, and
// the compiler folds the constant offsets of a tile's slices into one add per wgmma instead of
// recomputing a masked, shifted 64-bit value each time.
__device__ __forceinline__ std::uint64_t sw128_desc(std::uint32_t tile, std::uint32_t offset,
                                                    std::uint32_t lbo_bytes) {
  const std::uint32_t lo = (tile >> 4) + (offset >> 4) + ((lbo_bytes >> 4) << 16);
  constexpr std::uint32_t hi = (kSw128GroupBytes >> 4) | (1u << 30);  // SBO, 128-byte swizzle
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// K-major operand: 64 rows from `row0` of an sw128 tile of `rows` rows at smem byte address
// `tile`, the k-th slice of 16 columns (k < COLS / 16).
__device__ __forceinline__ std::uint64_t sw128_desc_kmajor(std::uint32_t tile, int rows, int row0,
                                                           int k) {
  return sw128_desc(tile,
                    static_cast<std::uint32_t>((k / 4) * rows * kSw128RowBytes +
                                               row0 * kSw128RowBytes + (k % 4) * 32),
                    0);
}

// N-major B operand: rows 16k..16k+15 of an sw128 tile of `rows` rows (K down the rows), all its
// columns (N = COLS; panels `rows` * 128 bytes apart).
__device__ __forceinline__ std::uint64_t sw128_desc_nmajor(std::uint32_t tile, int rows, int k) {
  return sw128_desc(tile, static_cast<std::uint32_t>(k * 16 * kSw128RowBytes),
                    static_cast<std::uint32_t>(rows * kSw128RowBytes));
}

// Before the first wgmma of a batch whose registers (accumulators, A fragments) other code wrote.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Generic-proxy shared-memory writes (st.shared, cp.async) made visible to the async proxy that
// wgmma reads through: by every writing thread, before the barrier that publishes the tile.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Pins an accumulator array between wgmma_wait and the code that reads it: the compiler sees a
// new definition of every register after the wait and cannot hoist reads above it.
template <int NB>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[NB][4]) {
#pragma unroll
  for (int j = 0; j < NB; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[j][e])::"memory");
}

// Inline asm takes no arrays: every accumulator register is its own operand. These macros
// spell the operands out once: the registers of d[N / 8][4] with the constraint C ("+f"
// accumulates into d, "=f" overwrites it), and the matching {%0, ...} list of the PTX
// instruction (the accumulators are always the first operands).
#define FP8LAB_WGMMA_ACC4(C, r) C(r[0]), C(r[1]), C(r[2]), C(r[3])
#define FP8LAB_WGMMA_ACC_N64(C, d)                                                        \
  FP8LAB_WGMMA_ACC4(C, d[0]), FP8LAB_WGMMA_ACC4(C, d[1]), FP8LAB_WGMMA_ACC4(C, d[2]),     \
      FP8LAB_WGMMA_ACC4(C, d[3]), FP8LAB_WGMMA_ACC4(C, d[4]), FP8LAB_WGMMA_ACC4(C, d[5]), \
      FP8LAB_WGMMA_ACC4(C, d[6]), FP8LAB_WGMMA_ACC4(C, d[7])
#define FP8LAB_WGMMA_ACC_N128(C, d)                                                          \
  FP8LAB_WGMMA_ACC_N64(C, d), FP8LAB_WGMMA_ACC4(C, d[8]), FP8LAB_WGMMA_ACC4(C, d[9]),        \
      FP8LAB_WGMMA_ACC4(C, d[10]), FP8LAB_WGMMA_ACC4(C, d[11]), FP8LAB_WGMMA_ACC4(C, d[12]), \
      FP8LAB_WGMMA_ACC4(C, d[13]), FP8LAB_WGMMA_ACC4(C, d[14]), FP8LAB_WGMMA_ACC4(C, d[15])
#define FP8LAB_WGMMA_D_N64                                                  \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define FP8LAB_WGMMA_D_N128                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "          \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

// The two instruction shapes with their accumulator lists. Each asm below opens a scope that
// declares the predicate p from its scale-d operand (scale_d == 0 overwrites d instead of
// accumulating), and the instruction's text closes it.
#define FP8LAB_WGMMA_M64N64 \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " FP8LAB_WGMMA_D_N64
#define FP8LAB_WGMMA_M64N128 \
  "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " FP8LAB_WGMMA_D_N128

// d[64 x 64] (+)= A[64 x 16] * B[16 x 64], A and B from shared memory (descriptors), both
// K-major.
__device__ __forceinline__ void wgmma_ss_n64(float (&d)[8][4], std::uint64_t desc_a,
                                             std::uint64_t desc_b, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" FP8LAB_WGMMA_M64N64
               ", %32, %33, p, 1, 1, 0, 0;\n}\n"
               : FP8LAB_WGMMA_ACC_N64("+f", d)
               : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// d[64 x 64] = A[64 x 16] * B[16 x 64] (d's old values are not read), A and B from shared
// memory (descriptors), both K-major. Write-only outputs: the compiler need not define d
// beforehand, which would count as a non-wgmma write to an accumulator while earlier wgmmas are
// in flight and make ptxas serialize them (C7515).
__device__ __forceinline__ void wgmma_ss_n64_overwrite(float (&d)[8][4], std::uint64_t desc_a,
                                                       std::uint64_t desc_b) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" FP8LAB_WGMMA_M64N64
               ", %32, %33, p, 1, 1, 0, 0;\n}\n"
               : FP8LAB_WGMMA_ACC_N64("=f", d)
               : "l"(desc_a), "l"(desc_b), "r"(0));
}

// d = A B^T over K = HD, both operands K-major in shared memory: A the 64 rows from a_row0 of the
// sw128 tile of a_rows rows at a_tile, B the 64-row sw128 tile at b_tile. HD / 16 wgmma, the
// first overwriting d; the caller fences before and commits after (one group).
template <int HD>
__device__ __forceinline__ void wgmma_ss_n64_product(float (&d)[8][4], std::uint32_t a_tile,
                                                     int a_rows, int a_row0, std::uint32_t b_tile) {
  wgmma_ss_n64_overwrite(d, sw128_desc_kmajor(a_tile, a_rows, a_row0, 0),
                         sw128_desc_kmajor(b_tile, 64, 0, 0));
#pragma unroll
  for (int k = 1; k < HD / 16; ++k)
    wgmma_ss_n64(d, sw128_desc_kmajor(a_tile, a_rows, a_row0, k),
                 sw128_desc_kmajor(b_tile, 64, 0, k), 1);
}

// Keeps register A fragments alive up to this point: by every thread, after the wgmma_wait that
// retires the last wgmma reading them. The hardware reads them asynchronously until then, but to
// the compiler they are dead once the wgmma statement has issued, so without a later use it may
// give their registers to other values while the product still runs.
template <int KT>
__device__ __forceinline__ void wgmma_keep_fragments(const std::uint32_t (&a)[KT][4]) {
#pragma unroll
  for (int k = 0; k < KT; ++k)
    asm volatile("" ::"r"(a[k][0]), "r"(a[k][1]), "r"(a[k][2]), "r"(a[k][3]) : "memory");
}

// d[64 x N] (+)= A[64 x 16] * B[16 x N], N 64 or 128: A from registers (the m64k16 fragment:
// this warp's 16 rows, as mma.sync's m16n8k16 A), B from shared memory N-major (transposed).
template <int N>
__device__ __forceinline__ void wgmma_rs_bmn(float (&d)[N / 8][4], const std::uint32_t (&a)[4],
                                             std::uint64_t desc_b, int scale_d) {
  static_assert(N == 64 || N == 128, "wgmma_rs_bmn: N is 64 or 128");
  if constexpr (N == 64) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" FP8LAB_WGMMA_M64N64
                 ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
                 : FP8LAB_WGMMA_ACC_N64("+f", d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" FP8LAB_WGMMA_M64N128
                 ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
                 : FP8LAB_WGMMA_ACC_N128("+f", d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
  }
}

}  // namespace
}  // namespace fp8lab::cuda_ops
