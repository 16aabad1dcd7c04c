// Token + position embedding, forward and backward, of the CUDA backend
// (cuda_kernels/cuda_ops_launch.hpp).
//
// The backward must sum the dout rows of each token into dwte[token] without float atomics (whose
// order, and so whose rounding, changes run to run). The rows are grouped by token with a stable
// radix sort (CUB's, from the CUDA toolkit) of (token, row) pairs: stable, so each token's rows
// come out in increasing row order. One warp per (token, 128 columns) then adds its rows in that
// order onto the existing dwte value, which is exactly the CPU reference's order (it walks the rows
// in order, te[j] += g): dwte and dwpe match the CPU backend bit for bit. bf16 gradients
// (PrecisionConfig::grads) take the same path: the old value widened, the rows added in fp32, one
// rounding on the single store, as the CPU backend does for them.
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "cuda_kernels/cuda_ops_launch.hpp"
#include "cuda_kernels/elementwise_access.cuh"  // bf16_bits, kThreads, load/store1/4, dispatch_type
#include "fp8lab/fp8_format.hpp"

namespace fp8lab::cuda_ops {
namespace {

constexpr int kMaxEmbeddingBlocks = 8192;
constexpr int kColsPerLane = 4;  // vector paths: 4 columns (16 bytes of f32) per lane

int embedding_blocks(std::int64_t threads) {
  const std::int64_t b = (threads + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxEmbeddingBlocks ? kMaxEmbeddingBlocks : b));
}

// *slot = min(*slot, value) where 0 means "none yet" (so plain atomicMin cannot be used).
__device__ void record_first_bad(int* slot, int value) {
  int old = atomicAdd(slot, 0);
  while (old == 0 || old > value) {
    const int prev = atomicCAS(slot, old, value);
    if (prev == old) return;
    old = prev;
  }
}

// ---- forward ----------------------------------------------------------------------------------
// One thread per (row, group of kCols columns); grid-stride over rows x groups.
template <typename O, int kCols>
__global__ void __launch_bounds__(kThreads)
    embedding_forward_kernel(const std::int32_t* __restrict__ tokens, const float* __restrict__ wte,
                             const float* __restrict__ wpe, O* __restrict__ out, std::int64_t rows,
                             int seq_len, int d, int vocab, int* bad_token) {
  const std::int64_t groups = d / kCols;
  const std::int64_t total = rows * groups;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       idx < total; idx += stride) {
    const std::int64_t m = idx / groups;
    const std::int64_t col = (idx - m * groups) * kCols;
    const std::int32_t tok = tokens[m];
    O* o = out + m * d + col;
    if (tok < 0 || tok >= vocab) {  // zeros, and the first bad row for the backend's error
      if constexpr (kCols == 4) {
        store4(o, make_float4(0.f, 0.f, 0.f, 0.f));
      } else {
        store1(o, 0.f);
      }
      if (col == 0) record_first_bad(bad_token, static_cast<int>(m + 1));
      continue;
    }
    const float* te = wte + static_cast<std::int64_t>(tok) * d + col;
    const float* pe = wpe + (m % seq_len) * d + col;
    if constexpr (kCols == 4) {
      const float4 a = load4(te), b = load4(pe);
      store4(o, make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
    } else {
      store1(o, *te + *pe);
    }
  }
}

// ---- backward ---------------------------------------------------------------------------------

using SortKey = std::uint32_t;  // token id; vocab for a token outside [0, vocab) (never summed)

int key_bits(int vocab) {  // bits that hold 0..vocab (the sentinel included)
  int bits = 1;
  while (bits < 31 && (std::int64_t{1} << bits) <= vocab) ++bits;
  return bits;
}

std::size_t align_up(std::size_t n) { return (n + 255) & ~std::size_t{255}; }

// The workspace, carved in this order from a 256-byte aligned base.
struct Layout {
  std::size_t keys[2], rows[2];    // the sort's double buffers: token keys, row indices
  std::size_t run_tokens;          // [vocab]: the tokens that occur, in no particular order
  std::size_t run_begin, run_end;  // [vocab]: each occurring token's range in the sorted rows
  std::size_t run_count;           // one int
  std::size_t cub_temp;
  std::size_t cub_bytes;
  std::size_t total;
};

std::size_t cub_temp_bytes(std::int64_t rows, int vocab) {
  std::size_t bytes = 0;
  cub::DoubleBuffer<SortKey> keys(nullptr, nullptr);
  cub::DoubleBuffer<std::int32_t> values(nullptr, nullptr);
  // Size query only (no launch); the size depends on rows and the bit count alone.
  const cudaError_t err = cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, keys, values, static_cast<int>(rows), 0, key_bits(vocab));
  // No device to ask (CUB reads the PTX version): a generous bound, checked again at launch.
  if (err != cudaSuccess) bytes = std::size_t{64} << 20;
  return bytes;
}

Layout layout(std::int64_t rows, int vocab) {
  Layout l{};
  const auto r = static_cast<std::size_t>(rows);
  const auto v = static_cast<std::size_t>(vocab);
  std::size_t at = 256;  // room to align the caller's base up to 256 bytes
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += align_up(bytes);
    return here;
  };
  l.keys[0] = take(r * sizeof(SortKey));
  l.keys[1] = take(r * sizeof(SortKey));
  l.rows[0] = take(r * sizeof(std::int32_t));
  l.rows[1] = take(r * sizeof(std::int32_t));
  l.run_tokens = take(v * sizeof(std::int32_t));
  l.run_begin = take(v * sizeof(std::int32_t));
  l.run_end = take(v * sizeof(std::int32_t));
  l.run_count = take(sizeof(int));
  l.cub_bytes = cub_temp_bytes(rows, vocab);
  l.cub_temp = take(l.cub_bytes);
  l.total = at;
  return l;
}

__global__ void __launch_bounds__(kThreads)
    sort_input_kernel(const std::int32_t* __restrict__ tokens, std::int64_t rows, int vocab,
                      SortKey* __restrict__ keys, std::int32_t* __restrict__ row_ids) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    const std::int32_t t = tokens[i];
    keys[i] = (t >= 0 && t < vocab) ? static_cast<SortKey>(t) : static_cast<SortKey>(vocab);
    row_ids[i] = static_cast<std::int32_t>(i);
  }
}

// Marks each token's range [begin, end) in the sorted keys and lists the tokens that occur.
__global__ void __launch_bounds__(kThreads)
    find_runs_kernel(const SortKey* __restrict__ keys, std::int64_t rows, int vocab,
                     std::int32_t* __restrict__ run_tokens, std::int32_t* __restrict__ run_begin,
                     std::int32_t* __restrict__ run_end, int* __restrict__ run_count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    const SortKey k = keys[i];
    if (k >= static_cast<SortKey>(vocab)) continue;  // bad tokens sort last and are skipped
    if (i == 0 || keys[i - 1] != k) {
      run_begin[k] = static_cast<std::int32_t>(i);
      // The list's order depends on the atomics, but each token is summed by one warp in a fixed
      // order wherever it sits in the list: the results do not depend on it.
      run_tokens[atomicAdd(run_count, 1)] = static_cast<std::int32_t>(k);
    }
    if (i + 1 == rows || keys[i + 1] != k) run_end[k] = static_cast<std::int32_t>(i + 1);
  }
}

// One warp per (occurring token, column block of 32 * kCols): acc = dwte[token, cols], then
// acc += dout[row, cols] for the token's rows in increasing row order, then store. G: dout's
// element type; W: the gradient's (float, or bf16_bits rounded once by the store).
template <typename G, typename W, int kCols>
__global__ void __launch_bounds__(kThreads)
    dwte_kernel(const G* __restrict__ dout, const std::int32_t* __restrict__ sorted_rows,
                const std::int32_t* __restrict__ run_tokens,
                const std::int32_t* __restrict__ run_begin,
                const std::int32_t* __restrict__ run_end, const int* __restrict__ run_count,
                W* __restrict__ dwte, int d) {
  const int lane = threadIdx.x & 31;
  const int col_blocks = (d + 32 * kCols - 1) / (32 * kCols);
  const std::int64_t work = static_cast<std::int64_t>(*run_count) * col_blocks;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t item =
           static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
       item < work; item += warps) {
    const std::int64_t run = item / col_blocks;
    const int col = static_cast<int>(item - run * col_blocks) * 32 * kCols + lane * kCols;
    if (col >= d) continue;
    const std::int32_t tok = run_tokens[run];
    const int begin = run_begin[tok], end = run_end[tok];
    W* dst = dwte + static_cast<std::int64_t>(tok) * d + col;
    if constexpr (kCols == 4) {
      float4 acc = load4(dst);
      int i = begin;
      // Four rows' loads in flight; the adds stay in row order.
      for (; i + 4 <= end; i += 4) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u)
          v[u] = load4(dout + static_cast<std::int64_t>(sorted_rows[i + u]) * d + col);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          acc.x += v[u].x, acc.y += v[u].y, acc.z += v[u].z, acc.w += v[u].w;
        }
      }
      for (; i < end; ++i) {
        const float4 v = load4(dout + static_cast<std::int64_t>(sorted_rows[i]) * d + col);
        acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
      }
      store4(dst, acc);
    } else {
      float acc = load1(dst);
      int i = begin;
      for (; i + 4 <= end; i += 4) {
        float v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u)
          v[u] = load1(dout + static_cast<std::int64_t>(sorted_rows[i + u]) * d + col);
#pragma unroll
        for (int u = 0; u < 4; ++u) acc += v[u];
      }
      for (; i < end; ++i) acc += load1(dout + static_cast<std::int64_t>(sorted_rows[i]) * d + col);
      store1(dst, acc);
    }
  }
}

// dwpe[t, j] += dout[t, j] + dout[T + t, j] + ... in batch order (the CPU's order): one thread per
// (t, j), consecutive threads on consecutive columns. W as in dwte_kernel.
template <typename G, typename W>
__global__ void __launch_bounds__(kThreads)
    dwpe_kernel(const G* __restrict__ dout, std::int64_t rows, int seq_len, int d,
                W* __restrict__ dwpe) {
  const std::int64_t total = static_cast<std::int64_t>(seq_len) * d;
  const std::int64_t batch = rows / seq_len;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t step = static_cast<std::int64_t>(seq_len) * d;  // one sequence further
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       idx < total; idx += stride) {
    float acc = load1(dwpe + idx);
    std::int64_t b = 0;
    for (; b + 4 <= batch; b += 4) {
      const float v0 = load1(dout + idx + b * step), v1 = load1(dout + idx + (b + 1) * step);
      const float v2 = load1(dout + idx + (b + 2) * step), v3 = load1(dout + idx + (b + 3) * step);
      acc += v0;
      acc += v1;
      acc += v2;
      acc += v3;
    }
    for (; b < batch; ++b) acc += load1(dout + idx + b * step);
    store1(dwpe + idx, acc);
  }
}

}  // namespace

void embedding_forward(const std::int32_t* tokens, const float* wte, const float* wpe, void* out,
                       ElemType out_type, std::int64_t rows, int seq_len, int d_model, int vocab,
                       int* bad_token, cudaStream_t stream) {
  if (rows <= 0 || d_model <= 0) return;
  const bool vec = d_model % 4 == 0 && aligned16(wte) && aligned16(wpe) && aligned16(out);
  const std::int64_t threads = vec ? rows * (d_model / 4) : rows * d_model;
  dispatch_type(out_type, [&](auto ot) {
    using O = decltype(ot);
    if (vec) {
      embedding_forward_kernel<O, 4><<<embedding_blocks(threads), kThreads, 0, stream>>>(
          tokens, wte, wpe, static_cast<O*>(out), rows, seq_len, d_model, vocab, bad_token);
    } else {
      embedding_forward_kernel<O, 1><<<embedding_blocks(threads), kThreads, 0, stream>>>(
          tokens, wte, wpe, static_cast<O*>(out), rows, seq_len, d_model, vocab, bad_token);
    }
  });
}

std::size_t embedding_backward_workspace_bytes(std::int64_t rows, int vocab) {
  return layout(rows, vocab).total;
}

void embedding_backward(const std::int32_t* tokens, const void* dout, ElemType dout_type,
                        void* dwte_accum, void* dwpe_accum, ElemType grad_type, std::int64_t rows,
                        int seq_len, int d_model, int vocab, void* workspace,
                        cudaStream_t stream) {
  if (rows <= 0 || d_model <= 0 || seq_len <= 0) return;
  const Layout l = layout(rows, vocab);
  char* base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(workspace) + 255) &
                                       ~std::uintptr_t{255});
  auto at = [&](std::size_t offset) { return base + offset - 256; };  // layout starts at 256
  auto* keys0 = reinterpret_cast<SortKey*>(at(l.keys[0]));
  auto* keys1 = reinterpret_cast<SortKey*>(at(l.keys[1]));
  auto* rows0 = reinterpret_cast<std::int32_t*>(at(l.rows[0]));
  auto* rows1 = reinterpret_cast<std::int32_t*>(at(l.rows[1]));
  auto* run_tokens = reinterpret_cast<std::int32_t*>(at(l.run_tokens));
  auto* run_begin = reinterpret_cast<std::int32_t*>(at(l.run_begin));
  auto* run_end = reinterpret_cast<std::int32_t*>(at(l.run_end));
  auto* run_count = reinterpret_cast<int*>(at(l.run_count));
  void* cub_temp = at(l.cub_temp);

  // dwpe needs no grouping: its sums run over the batch index.
  dispatch_type(dout_type, [&](auto gt) {
    dispatch_type(grad_type, [&](auto wt) {
      using G = decltype(gt);
      using W = decltype(wt);
      dwpe_kernel<G, W><<<embedding_blocks(static_cast<std::int64_t>(seq_len) * d_model), kThreads,
                          0, stream>>>(static_cast<const G*>(dout), rows, seq_len, d_model,
                                       static_cast<W*>(dwpe_accum));
    });
  });

  sort_input_kernel<<<embedding_blocks(rows), kThreads, 0, stream>>>(tokens, rows, vocab, keys0,
                                                                     rows0);
  cub::DoubleBuffer<SortKey> keys(keys0, keys1);
  cub::DoubleBuffer<std::int32_t> sorted(rows0, rows1);
  std::size_t cub_bytes = l.cub_bytes;
  // CUB fails only when the workspace is smaller than it asked for, which cannot happen: the
  // size comes from the same query (embedding_backward_workspace_bytes).
  if (cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, keys, sorted, static_cast<int>(rows), 0,
                                      key_bits(vocab), stream) != cudaSuccess) {
    return;
  }
  cudaMemsetAsync(run_count, 0, sizeof(int), stream);
  find_runs_kernel<<<embedding_blocks(rows), kThreads, 0, stream>>>(
      keys.Current(), rows, vocab, run_tokens, run_begin, run_end, run_count);

  // 4 columns a lane: 16 bytes of f32 (8 of bf16) at 4-element aligned offsets of aligned bases.
  const bool vec = d_model % 4 == 0 && aligned16(dout) && aligned16(dwte_accum);
  const int cols_per_warp = 32 * (vec ? kColsPerLane : 1);
  const std::int64_t col_blocks = (d_model + cols_per_warp - 1) / cols_per_warp;
  const std::int64_t max_runs = rows < vocab ? rows : vocab;
  const int warps_per_block = kThreads / 32;
  const std::int64_t blocks = (max_runs * col_blocks + warps_per_block - 1) / warps_per_block;
  const int grid = static_cast<int>(blocks > kMaxEmbeddingBlocks ? kMaxEmbeddingBlocks
                                                                 : (blocks < 1 ? 1 : blocks));
  dispatch_type(dout_type, [&](auto gt) {
    dispatch_type(grad_type, [&](auto wt) {
      using G = decltype(gt);
      using W = decltype(wt);
      auto* dwte = static_cast<W*>(dwte_accum);
      if (vec) {
        dwte_kernel<G, W, kColsPerLane>
            <<<grid, kThreads, 0, stream>>>(static_cast<const G*>(dout), sorted.Current(),
                                            run_tokens, run_begin, run_end, run_count, dwte,
                                            d_model);
      } else {
        dwte_kernel<G, W, 1><<<grid, kThreads, 0, stream>>>(static_cast<const G*>(dout),
                                                            sorted.Current(), run_tokens,
                                                            run_begin, run_end, run_count, dwte,
                                                            d_model);
      }
    });
  });
}

}  // namespace fp8lab::cuda_ops
