// Grouped FP8 casts (src/fp8/fp8_grouped_cuda.hpp): one 128x128 tile of bf16 x per CTA, cast
// into q and, transposed, qt with the recipe's groups; the same bytes, scales and counts as
// quantize_grouped_cpu and quantize_grouped_transposed_cpu.
//
// A tile is exactly one 128x128 block, and holds whole 1x128 groups of x (a row of the tile)
// and of xᵀ (a column of the tile): so vec128 and block128 find their amax inside the CTA and
// x is read once. A row's scale (ScaleMode::row) needs the whole row and a column's the whole
// column: those come from a first pass over x (launch_grouped_row_col_keys).
//
// Threads: 16 warps of 8 tile rows; lane l holds columns 4l..4l+3 of each of its rows (one
// 8-byte load per row, kept as the raw bf16 words), so a thread's 8 codes of one column are 8
// consecutive rows of qt and go to shared memory in one 8-byte store. Group amaxes are integer
// maxima of keys (amax_device.cuh), taken two bf16 at a time: order-free, so the result cannot
// depend on the schedule.
//
// The cast itself has two paths per thread (docs/performance.md, "FP8 scaling recipes"):
// - every key this thread's scales come from is finite (the usual case): then no y = x * scale
//   can pass the format's max (the scale is fmax / amax of a set holding x, or x and its amax are
//   0), so nothing saturates and no NaN code is made; only the underflows are counted, four codes
//   at a time from whole words;
// - otherwise every element is converted, checked and counted on its own (cast4_exact).
#include <algorithm>

#include "fp8_device.cuh"
#include "grouped_launch.hpp"

namespace fp8lab::detail {
namespace {

constexpr int kT = 128;
constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kRows = kT / kWarps;  // tile rows per warp

struct Tile {
  std::int64_t r0, c0;
  int rows, cols;  // the part of the tile inside x
  bool whole;      // a full tile with 4-byte aligned rows in q and qt: vector loads and stores
};

__device__ __forceinline__ Tile tile_of(const GroupedCastArgs& a) {
  Tile t;
  t.r0 = static_cast<std::int64_t>(blockIdx.y) * kT;
  t.c0 = static_cast<std::int64_t>(blockIdx.x) * kT;
  t.rows = static_cast<int>(a.rows - t.r0 < kT ? a.rows - t.r0 : kT);
  t.cols = static_cast<int>(a.cols - t.c0 < kT ? a.cols - t.c0 : kT);
  const auto addr = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  t.whole = t.rows == kT && t.cols == kT && a.rows % 4 == 0 && a.cols % 4 == 0 &&
            addr(a.x) % 8 == 0 && addr(a.q) % 4 == 0 && addr(a.qt) % 4 == 0;
  return t;
}

// This thread's elements of the tile as bf16 bits: rows warp*8+i, columns 4*lane+j (element j
// in half j%2 of word j/2); 0 outside x (a 0 leaves every amax as it is and casts to a code that
// is never stored).
__device__ __forceinline__ void load_tile(const GroupedCastArgs& a, const Tile& t,
                                          uint2 (&raw)[kRows]) {
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int rl = warp * kRows + i;
    const std::int64_t base = (t.r0 + rl) * a.cols + t.c0 + 4 * lane;
    if (t.whole) {
      raw[i] = *reinterpret_cast<const uint2*>(a.x + base);
    } else {
      std::uint32_t h[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) h[j] = rl < t.rows && 4 * lane + j < t.cols ? a.x[base + j] : 0u;
      raw[i] = make_uint2(h[0] | (h[1] << 16), h[2] | (h[3] << 16));
    }
  }
}

__device__ __forceinline__ float element(const uint2& w, int j) {
  const std::uint32_t word = j < 2 ? w.x : w.y;
  return bits_float(j % 2 == 0 ? word << 16 : word & 0xFFFF0000u);
}

// Each tile row's key (every lane of the warp gets its rows'), and each tile column's key into
// col_key[kT] (contains __syncthreads). Two keys per word: a bf16 magnitude compares as its key.
__device__ __forceinline__ void tile_keys(const uint2 (&raw)[kRows], std::uint32_t (&row_key)[kRows],
                                          std::uint32_t* col_key) {
  __shared__ std::uint32_t part[kWarps][kT];
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  std::uint32_t col01 = 0u, col23 = 0u;  // magnitudes of columns 0,1 and 2,3 as 16-bit lanes
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const std::uint32_t m01 = raw[i].x & 0x7FFF7FFFu, m23 = raw[i].y & 0x7FFF7FFFu;
    col01 = __vmaxu2(col01, m01);
    col23 = __vmaxu2(col23, m23);
    const std::uint32_t m = __vmaxu2(m01, m23);
    row_key[i] = __reduce_max_sync(0xFFFFFFFFu, max(m << 16, m & 0xFFFF0000u));
  }
  *reinterpret_cast<uint4*>(&part[warp][4 * lane]) =
      make_uint4(col01 << 16, col01 & 0xFFFF0000u, col23 << 16, col23 & 0xFFFF0000u);
  __syncthreads();
  if (threadIdx.x < kT) {
    std::uint32_t k = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) k = max(k, part[w][threadIdx.x]);
    col_key[threadIdx.x] = k;
  }
  __syncthreads();
}

// The tile of this CTA: its extent, this thread's elements and the tile's row and column keys.
struct TileValues {
  Tile t;
  uint2 raw[kRows];
  std::uint32_t row_key[kRows];
};

__device__ __forceinline__ void read_tile(const GroupedCastArgs& a, TileValues& tv,
                                          std::uint32_t* col_key) {
  tv.t = tile_of(a);
  load_tile(a, tv.t, tv.raw);
  tile_keys(tv.raw, tv.row_key, col_key);
}

__device__ __forceinline__ std::uint32_t key_at(const float* keys, std::int64_t i) {
  return reinterpret_cast<const std::uint32_t*>(keys)[i];
}

// Four elements cast with their own scales, each element converted, checked and counted alone
// (quantize_grouped_cpu's counts): for non-finite keys and the software conversion.
template <Fp8Format F, bool kHw>
__device__ __forceinline__ std::uint32_t cast4_exact(const uint2& w, const float (&scale)[4],
                                                     CastTally& t) {
  float v[4], y[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    v[j] = element(w, j);
    y[j] = v[j] * scale[j];
  }
  const std::uint32_t lo = cvt_pair<F, kHw>(y[0], y[1]), hi = cvt_pair<F, kHw>(y[2], y[3]);
  const std::uint32_t codes = lo | (hi << 16);
#pragma unroll
  for (int j = 0; j < 4; ++j) tally<F>(t, v[j], y[j], static_cast<std::uint8_t>(codes >> (8 * j)));
  return codes;
}

// Four elements cast with finite-key scales (hardware conversion): no saturation and no NaN can
// occur; the underflows (a code of magnitude 0 from x != 0) are counted from the words.
template <Fp8Format F>
__device__ __forceinline__ std::uint32_t cast4_finite(const uint2& w, std::uint32_t x_nonzero,
                                                      const float (&scale)[4], unsigned& underflow) {
  constexpr __nv_fp8_interpretation_t kind = F == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2;
  const std::uint32_t lo = __nv_cvt_float2_to_fp8x2(
      make_float2(element(w, 0) * scale[0], element(w, 1) * scale[1]), __NV_SATFINITE, kind);
  const std::uint32_t hi = __nv_cvt_float2_to_fp8x2(
      make_float2(element(w, 2) * scale[2], element(w, 3) * scale[3]), __NV_SATFINITE, kind);
  const std::uint32_t codes = __byte_perm(lo, hi, 0x5410);
  underflow += underflows4(code_nonzero_bytes(codes), x_nonzero);
  return codes;
}

// rows[r] holds the codes of columns 0..3 of one row (byte c = column c); returns in cols[c] the
// codes of column c of the four rows (byte r = row r): a 4 x 4 byte transpose.
__device__ __forceinline__ void transpose4x4(const std::uint32_t (&rows)[4], std::uint32_t (&cols)[4]) {
  const std::uint32_t a = __byte_perm(rows[0], rows[1], 0x5140);  // r0c0 r1c0 r0c1 r1c1
  const std::uint32_t b = __byte_perm(rows[0], rows[1], 0x7362);  // r0c2 r1c2 r0c3 r1c3
  const std::uint32_t c = __byte_perm(rows[2], rows[3], 0x5140);
  const std::uint32_t d = __byte_perm(rows[2], rows[3], 0x7362);
  cols[0] = __byte_perm(a, c, 0x5410);
  cols[1] = __byte_perm(a, c, 0x7632);
  cols[2] = __byte_perm(b, d, 0x5410);
  cols[3] = __byte_perm(b, d, 0x7632);
}

// Stores 4 codes of row `row` at column `col` of a [*, ld] fp8 tensor; `n` of them exist.
__device__ __forceinline__ void store4(std::uint8_t* out, std::int64_t row, std::int64_t ld,
                                       std::int64_t col, std::uint32_t codes, bool whole, int n) {
  std::uint8_t* p = out + row * ld + col;
  if (whole) {
    *reinterpret_cast<std::uint32_t*>(p) = codes;
    return;
  }
  for (int j = 0; j < n && j < 4; ++j) p[j] = static_cast<std::uint8_t>(codes >> (8 * j));
}

template <Fp8Format F, bool kHw, ScaleMode kMode, bool kQt>
__global__ void __launch_bounds__(kThreads, 2) grouped_cast_tile(GroupedCastArgs a) {
  __shared__ std::uint32_t col_key[kT];
  __shared__ alignas(16) std::uint8_t tile_t[kT][kT + 8];  // qt's codes, rows = x's columns
  __shared__ std::uint32_t warp_key[kWarps];
  TileValues tv;
  read_tile(a, tv, col_key);
  const Tile& t = tv.t;
  const auto& v = tv.raw;
  const auto& row_key = tv.row_key;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  std::uint32_t top = 0;
#pragma unroll
  for (int i = 0; i < kRows; ++i) top = max(top, row_key[i]);
  if (lane == 0) warp_key[warp] = top;
  __syncthreads();
  std::uint32_t block_key = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) block_key = max(block_key, warp_key[w]);

  // The amax key behind the scale of this thread's row i (q) and column j (qt).
  const auto row_scale_key = [&](int i) {
    const std::int64_t r = t.r0 + warp * kRows + i;
    std::uint32_t k = block_key;
    if constexpr (kMode == ScaleMode::vec128) k = row_key[i];
    if constexpr (kMode == ScaleMode::row) k = r < a.rows ? key_at(a.q_inv, r) : 0u;
    return k;
  };
  const auto col_scale_key = [&](int j) {
    const int cl = 4 * lane + j;
    std::uint32_t k = block_key;
    if constexpr (kMode == ScaleMode::vec128) k = col_key[cl];
    if constexpr (kMode == ScaleMode::row)
      k = kQt && t.c0 + cl < a.cols ? key_at(a.qt_inv, t.c0 + cl) : 0u;
    return k;
  };
  float s_row[kRows], s_col[4];
#pragma unroll
  for (int i = 0; i < kRows; ++i) s_row[i] = amax_values_from_bits(row_scale_key(i), F).scale;
#pragma unroll
  for (int j = 0; j < 4; ++j) s_col[j] = amax_values_from_bits(col_scale_key(j), F).scale;

  // The fast path needs every key behind this thread's scales finite (see the top of the file);
  // the keys are taken again rather than kept: at 64 registers a thread, keeping them spills.
  // The software conversion always takes the exact path.
  bool fast = kHw;
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const std::uint32_t k = row_scale_key(i);
    fast = fast && k < 0x7F800000u;
  }
  if constexpr (kQt) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t k = col_scale_key(j);
      fast = fast && k < 0x7F800000u;
    }
  }

  CastTally tally;
  unsigned underflow = 0;
  const int n_here = t.cols - 4 * lane;
  static_assert(kRows == 8, "a thread's column of qt codes packs into two words");
  std::uint32_t codes_t[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int rl = warp * kRows + i;
    const float s4[4] = {s_row[i], s_row[i], s_row[i], s_row[i]};
    const std::uint32_t x_nonzero = bf16x4_nonzero_bytes(v[i].x, v[i].y);
    const std::uint32_t codes = fast ? cast4_finite<F>(v[i], x_nonzero, s4, underflow)
                                     : cast4_exact<F, kHw>(v[i], s4, tally);
    if (rl < t.rows && n_here > 0) store4(a.q, t.r0 + rl, a.cols, t.c0 + 4 * lane, codes, t.whole, n_here);
    if constexpr (kQt) {
      // A 128x128 block has one scale in both layouts: qt's codes are q's.
      if constexpr (kMode == ScaleMode::block128)
        codes_t[i] = codes;
      else
        codes_t[i] = fast ? cast4_finite<F>(v[i], x_nonzero, s_col, underflow)
                          : cast4_exact<F, kHw>(v[i], s_col, tally);
    }
  }
  tally.underflow += underflow;
  if constexpr (kQt) {
    std::uint32_t lo[4], hi[4];
    transpose4x4({codes_t[0], codes_t[1], codes_t[2], codes_t[3]}, lo);
    transpose4x4({codes_t[4], codes_t[5], codes_t[6], codes_t[7]}, hi);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      *reinterpret_cast<uint2*>(&tile_t[4 * lane + j][warp * kRows]) = make_uint2(lo[j], hi[j]);
  }
  flush_tally(tally, a.meta);

  const AmaxValues block = amax_values_from_bits(block_key, F);
  if constexpr (kMode == ScaleMode::vec128) {
    if (lane == 0)
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        const int rl = warp * kRows + i;
        if (rl < t.rows)
          a.q_inv[a.q_layout.index(t.r0 + rl, t.c0 / kT)] =
              amax_values_from_bits(row_key[i], F).inv_scale;
      }
    if (kQt && threadIdx.x < static_cast<unsigned>(t.cols))
      a.qt_inv[a.qt_layout.index(t.c0 + threadIdx.x, t.r0 / kT)] =
          amax_values_from_bits(col_key[threadIdx.x], F).inv_scale;
  }
  if (kMode == ScaleMode::block128 && threadIdx.x == 0) {
    a.q_inv[a.q_layout.index(t.r0 / kT, t.c0 / kT)] = block.inv_scale;
    if (kQt) a.qt_inv[a.qt_layout.index(t.c0 / kT, t.r0 / kT)] = block.inv_scale;
    // The last tile of a row of blocks fills its row's padding (read by no valid block).
    if (blockIdx.x + 1 == gridDim.x)
      for (std::int64_t cg = gridDim.x; cg < a.q_layout.ld(); ++cg)
        a.q_inv[a.q_layout.index(t.r0 / kT, cg)] = 1.0f;
    if (kQt && blockIdx.y + 1 == gridDim.y)
      for (std::int64_t cg = gridDim.y; cg < a.qt_layout.ld(); ++cg)
        a.qt_inv[a.qt_layout.index(t.c0 / kT, cg)] = 1.0f;
  }
  if (threadIdx.x == 0 && block_key != 0) {
    atomicMax(reinterpret_cast<unsigned*>(&a.meta->amax), block_key);
    if (!block.finite) {
      a.meta->nonfinite = 1u;
      if (a.first_nonfinite != nullptr) atomicMin(a.first_nonfinite, a.nonfinite_id);
    }
  }
  if constexpr (kQt) {
    __syncthreads();
    const int m_here = t.rows - 4 * lane;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int cl = warp * kRows + i;
      if (cl >= t.cols || m_here <= 0) continue;
      const std::uint32_t codes = *reinterpret_cast<const std::uint32_t*>(&tile_t[cl][4 * lane]);
      store4(a.qt, t.c0 + cl, a.rows, t.r0 + 4 * lane, codes, t.whole, m_here);
    }
  }
}

template <bool kQt>
__global__ void __launch_bounds__(kThreads) grouped_row_col_keys(GroupedCastArgs a) {
  __shared__ std::uint32_t col_key[kT];
  TileValues tv;
  read_tile(a, tv, col_key);
  const Tile& t = tv.t;
  const auto& row_key = tv.row_key;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  auto* row_keys = reinterpret_cast<unsigned*>(a.q_inv);
  if (lane == 0)
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int rl = warp * kRows + i;
      if (rl < t.rows && row_key[i] != 0u) atomicMax(&row_keys[t.r0 + rl], row_key[i]);
    }
  if (kQt && threadIdx.x < static_cast<unsigned>(t.cols) && col_key[threadIdx.x] != 0u)
    atomicMax(reinterpret_cast<unsigned*>(a.qt_inv) + t.c0 + threadIdx.x, col_key[threadIdx.x]);
}

template <Fp8Format F>
__global__ void keys_to_inverse_scales(float* keys, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    keys[i] = amax_values_from_bits(reinterpret_cast<const std::uint32_t*>(keys)[i], F).inv_scale;
}

dim3 tile_grid(const GroupedCastArgs& a) {
  return dim3(static_cast<unsigned>((a.cols + kT - 1) / kT),
              static_cast<unsigned>((a.rows + kT - 1) / kT));
}

template <ScaleMode kMode>
void launch_mode(const GroupedCastArgs& a, Fp8Format format, bool hw, cudaStream_t s) {
  dispatch_cast(format, hw, [&]<Fp8Format F, bool kHw>() {
    if (a.qt != nullptr)
      grouped_cast_tile<F, kHw, kMode, true><<<tile_grid(a), kThreads, 0, s>>>(a);
    else
      grouped_cast_tile<F, kHw, kMode, false><<<tile_grid(a), kThreads, 0, s>>>(a);
  });
}

}  // namespace

void launch_grouped_row_col_keys(const GroupedCastArgs& args, cudaStream_t stream) {
  if (args.qt != nullptr)
    grouped_row_col_keys<true><<<tile_grid(args), kThreads, 0, stream>>>(args);
  else
    grouped_row_col_keys<false><<<tile_grid(args), kThreads, 0, stream>>>(args);
}

void launch_grouped_cast(const GroupedCastArgs& args, ScaleMode mode, Fp8Format format, bool hw,
                         cudaStream_t stream) {
  switch (mode) {
    case ScaleMode::row:
      launch_mode<ScaleMode::row>(args, format, hw, stream);
      break;
    case ScaleMode::vec128:
      launch_mode<ScaleMode::vec128>(args, format, hw, stream);
      break;
    default:
      launch_mode<ScaleMode::block128>(args, format, hw, stream);
      break;
  }
}

void launch_keys_to_inverse_scales(float* keys, std::int64_t n, Fp8Format format,
                                   cudaStream_t stream) {
  if (n == 0) return;
  const int grid = static_cast<int>(std::min<std::int64_t>((n + 255) / 256, 1024));
  if (format == Fp8Format::e4m3)
    keys_to_inverse_scales<Fp8Format::e4m3><<<grid, 256, 0, stream>>>(keys, n);
  else
    keys_to_inverse_scales<Fp8Format::e5m2><<<grid, 256, 0, stream>>>(keys, n);
}

}  // namespace fp8lab::detail
