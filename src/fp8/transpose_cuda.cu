// FP8 transpose and the fused cast-transpose (quantize_transpose_cuda).
//
// Fast path (both dims multiples of 16, 16-byte aligned pointers): 128x128 tiles, 16-byte loads
// and stores (see transpose_tile.cuh). The fused kernel reads each input element once, writes
// its fp8 byte to q directly from registers and to qt through the shared-memory tile. Any other
// shape takes the generic 32x32 kernels (one element per thread step), same bytes.
#include "fp8_device.cuh"
#include "transpose_tile.cuh"

namespace fp8lab::detail {
namespace {

// One tile of the fused cast-transpose. kFull: the tile lies wholly inside x (every tile of the
// model's shapes), so no chunk needs its bounds checked.
template <typename In, Fp8Format F, bool kHw, bool kFull>
__device__ __forceinline__ void cast_transpose_tile(const In* x, std::int64_t rows,
                                                    std::int64_t cols, Fp8Meta* meta, float scale,
                                                    std::int64_t r0, std::int64_t c0,
                                                    std::uint8_t (*tile)[kTile], std::uint8_t* q,
                                                    std::uint8_t* qt) {
  // A thread's chunks share their column chunk and lie kRowsPerPass rows apart: one base
  // pointer per tensor and a constant stride keep the registers to 4 CTAs per SM.
  constexpr int kRowsPerPass = kTileThreads / kChunksPerRow;  // 32
  const int chunk = static_cast<int>(threadIdx.x) % kChunksPerRow;
  const int row0 = static_cast<int>(threadIdx.x) / kChunksPerRow;
  const std::int64_t offset = (r0 + row0) * cols + c0 + chunk * 16;
  const std::int64_t step = kRowsPerPass * cols;
  // Chunk i exists when its row and column lie inside x.
  const std::int64_t rows_here = c0 + chunk * 16 < cols ? rows - r0 - row0 : 0;
  CastTally t;
  Raw16<In> raw[kChunksPerThread];
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i)
    if (kFull || i * kRowsPerPass < rows_here) raw[i].load(x + offset + i * step);
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    if (!kFull && i * kRowsPerPass >= rows_here) continue;
    const uint4 bytes = cast16<In, F, kHw>(raw[i], scale, t);
    *reinterpret_cast<uint4*>(q + offset + i * step) = bytes;
    tile_put16(tile, row0 + i * kRowsPerPass, chunk, bytes);
  }
  flush_tally(t, meta);
  __syncthreads();
  tile_store_transposed(tile, r0, c0, rows, cols, qt);
}

template <typename In, Fp8Format F, bool kHw>
__global__ void __launch_bounds__(kTileThreads, 4)
    cast_transpose_tiled(const In* x, std::int64_t rows, std::int64_t cols, Fp8Meta* meta,
                         CastMetaWork work, std::uint8_t* q, std::uint8_t* qt) {
  __shared__ alignas(16) std::uint8_t tile[kTile][kTile];
  const float scale = cast_scale_and_meta_work<F>(meta, work);
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  if (r0 + kTile <= rows && c0 + kTile <= cols)
    cast_transpose_tile<In, F, kHw, true>(x, rows, cols, meta, scale, r0, c0, tile, q, qt);
  else
    cast_transpose_tile<In, F, kHw, false>(x, rows, cols, meta, scale, r0, c0, tile, q, qt);
}

__global__ void __launch_bounds__(kTileThreads)
    transpose_tiled(const std::uint8_t* q, std::int64_t rows, std::int64_t cols, std::uint8_t* qt) {
  __shared__ alignas(16) std::uint8_t tile[kTile][kTile];
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  uint4 in[kChunksPerThread];
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int c = threadIdx.x + i * kTileThreads, row = c / kChunksPerRow,
              chunk = c % kChunksPerRow;
    if (r0 + row < rows && c0 + chunk * 16 < cols)
      in[i] = *reinterpret_cast<const uint4*>(q + (r0 + row) * cols + c0 + chunk * 16);
  }
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int c = threadIdx.x + i * kTileThreads, row = c / kChunksPerRow,
              chunk = c % kChunksPerRow;
    if (r0 + row < rows && c0 + chunk * 16 < cols) tile_put16(tile, row, chunk, in[i]);
  }
  __syncthreads();
  tile_store_transposed(tile, r0, c0, rows, cols, qt);
}

// Generic shapes: 32x32 tiles, 32x8 threads, rows padded to 33 bytes.
constexpr int kSmall = 32;

template <typename In, Fp8Format F, bool kHw, bool kCast>
__global__ void __launch_bounds__(kSmall * 8)
    transpose_generic(const In* x, std::int64_t rows, std::int64_t cols, Fp8Meta* meta,
                      CastMetaWork work, std::uint8_t* q, std::uint8_t* qt) {
  __shared__ std::uint8_t tile[kSmall][kSmall + 1];
  float scale = 1.0f;
  if constexpr (kCast) scale = cast_scale_and_meta_work<F>(meta, work);
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * kSmall;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kSmall;
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  CastTally t;
  for (int r = ty; r < kSmall; r += 8) {
    const std::int64_t gr = r0 + r, gc = c0 + tx;
    if (gr < rows && gc < cols) {
      std::uint8_t code;
      if constexpr (kCast) {
        code = cast1<F, kHw>(load_elem(x + gr * cols + gc), scale, t);
        q[gr * cols + gc] = code;
      } else {
        code = static_cast<std::uint8_t>(x[gr * cols + gc]);
      }
      tile[r][tx] = code;
    }
  }
  if constexpr (kCast) flush_tally(t, meta);
  __syncthreads();
  for (int c = ty; c < kSmall; c += 8) {
    const std::int64_t gc = c0 + c, gr = r0 + tx;
    if (gc < cols && gr < rows) qt[gc * rows + gr] = tile[tx][c];
  }
}

template <typename In>
void cast_transpose_typed(const In* x, std::int64_t rows, std::int64_t cols, Fp8Format format,
                          bool hw, bool tiled, Fp8Meta* meta, const CastMetaWork& work,
                          std::uint8_t* q, std::uint8_t* qt, cudaStream_t s) {
  const dim3 big(static_cast<unsigned>((cols + kTile - 1) / kTile),
                 static_cast<unsigned>((rows + kTile - 1) / kTile));
  const dim3 small(static_cast<unsigned>((cols + kSmall - 1) / kSmall),
                   static_cast<unsigned>((rows + kSmall - 1) / kSmall));
  dispatch_cast(format, hw, [&]<Fp8Format F, bool kHw>() {
    if (tiled)
      cast_transpose_tiled<In, F, kHw>
          <<<big, kTileThreads, 0, s>>>(x, rows, cols, meta, work, q, qt);
    else
      transpose_generic<In, F, kHw, true>
          <<<small, kSmall * 8, 0, s>>>(x, rows, cols, meta, work, q, qt);
  });
}

}  // namespace

void launch_cast_transpose(const void* x, ElemType type, std::int64_t rows, std::int64_t cols,
                           Fp8Format format, bool hw, bool tiled, Fp8Meta* meta,
                           const CastMetaWork& work, std::uint8_t* q, std::uint8_t* qt,
                           cudaStream_t stream) {
  if (type == ElemType::bf16)
    cast_transpose_typed(static_cast<const std::uint16_t*>(x), rows, cols, format, hw, tiled, meta,
                         work, q, qt, stream);
  else
    cast_transpose_typed(static_cast<const float*>(x), rows, cols, format, hw, tiled, meta, work,
                         q, qt, stream);
}

void launch_transpose_fp8(const std::uint8_t* q, std::int64_t rows, std::int64_t cols, bool tiled,
                          std::uint8_t* qt, cudaStream_t stream) {
  if (tiled) {
    const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile),
                    static_cast<unsigned>((rows + kTile - 1) / kTile));
    transpose_tiled<<<grid, kTileThreads, 0, stream>>>(q, rows, cols, qt);
  } else {
    const dim3 grid(static_cast<unsigned>((cols + kSmall - 1) / kSmall),
                    static_cast<unsigned>((rows + kSmall - 1) / kSmall));
    transpose_generic<std::uint8_t, Fp8Format::e4m3, false, false>
        <<<grid, kSmall * 8, 0, stream>>>(q, rows, cols, nullptr, {}, nullptr, qt);
  }
}

}  // namespace fp8lab::detail
