// The residual add fused into the RMSNorm that reads its sum (cuda_kernels/cuda_ops_launch.hpp,
// Backend::add_rmsnorm_forward): sum = x + branch (f32), y = RMSNorm(sum), one warp per row as
// the plain forward (cuda_kernels/rmsnorm_rows.cuh). The first pass over a row adds, stores the sum
// and sums its squares; the second reads the sum back (in L1/L2) for y. Per element that moves x (4
// bytes) + branch (2) in and sum (4) + y (2) out, against 16 bytes for add_f32 followed by
// rmsnorm_forward, which reads the sum back from memory.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda_kernels/cuda_ops_launch.hpp"
#include "cuda_kernels/elementwise_access.cuh"
#include "cuda_kernels/rmsnorm_rows.cuh"

namespace fp8lab::cuda_ops {
namespace {

using rmsnorm::kBlockThreads;

// As rmsnorm_forward_kernel, over the rows of x + branch. The sum is one fp32 add rounded to
// nearest (add_f32's), stored before the row's squares are summed; the second pass reads what
// this lane stored (no __restrict__ const view of sum: it is written in this kernel).
template <typename B, typename Y, bool kVectors>
__global__ void __launch_bounds__(kBlockThreads)
    add_rmsnorm_forward_kernel(const float* __restrict__ x, const B* __restrict__ branch,
                               float* sum, const float* __restrict__ w, float eps,
                               Y* __restrict__ y, float* __restrict__ rstd, std::int64_t rows,
                               int d, AmaxOut amax) {
  const std::uint32_t key = rmsnorm::for_warp_rows(rows, [&](std::int64_t row, int lane) {
    const std::int64_t at = row * d;
    const float r = rmsnorm::row_rstd<kVectors>(d, lane, eps, [&](int j, auto& v) {
      constexpr int W = std::extent_v<std::remove_reference_t<decltype(v)>>;
      float b[W];
      load_n(x + at + j, v);
      load_n(branch + at + j, b);
#pragma unroll
      for (int k = 0; k < W; ++k) v[k] = __fadd_rn(v[k], b[k]);
      store_n(sum + at + j, v);
    });
    if (lane == 0) rstd[row] = r;
    return rmsnorm::row_store_scaled<kVectors>(d, lane, r, w, y + at,
                                               [&](int j, auto& v) { load_n(sum + at + j, v); });
  });
  finish_amax(key, amax);
}

// Rows of up to 256 * kGroups elements on the vector split (lane l holds the groups l, l + 32,
// ... of 8): the sums stay in registers between the two passes instead of being read back from
// L2, and every load of a row is issued before the first add. The arithmetic and its order are
// row_rstd's and row_store_scaled's (same lanes, same groups, same f64 accumulation order), so
// sum, rstd and y are the bits of the kernel above.
template <typename B, typename Y, int kGroups>
__global__ void __launch_bounds__(kBlockThreads)
    add_rmsnorm_forward_registers_kernel(const float* __restrict__ x, const B* __restrict__ branch,
                                         float* __restrict__ sum, const float* __restrict__ w,
                                         float eps, Y* __restrict__ y, float* __restrict__ rstd,
                                         std::int64_t rows, int d, AmaxOut amax) {
  const std::uint32_t key = rmsnorm::for_warp_rows(rows, [&](std::int64_t row, int lane) {
    const std::int64_t at = row * d;
    float v[kGroups][kVec], b[kGroups][kVec];
#pragma unroll
    for (int i = 0; i < kGroups; ++i) {
      const int j = (lane + 32 * i) * kVec;
      if (j < d) {
        load_n(x + at + j, v[i]);
        load_n(branch + at + j, b[i]);
      }
    }
    double ss = 0.0;
#pragma unroll
    for (int i = 0; i < kGroups; ++i) {
      const int j = (lane + 32 * i) * kVec;
      if (j < d) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[i][k] = __fadd_rn(v[i][k], b[i][k]);
        store_n(sum + at + j, v[i]);
#pragma unroll
        for (int k = 0; k < kVec; ++k) ss += static_cast<double>(v[i][k]) * v[i][k];
      }
    }
    ss = rmsnorm::warp_allsum(ss);
    const float r = static_cast<float>(1.0 / sqrt(ss / static_cast<double>(d) + eps));
    if (lane == 0) rstd[row] = r;
    std::uint32_t row_key = 0;
#pragma unroll
    for (int i = 0; i < kGroups; ++i) {
      const int j = (lane + 32 * i) * kVec;
      if (j < d) {
        float wv[kVec];
        load_n<kVec>(w + j, wv);
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[i][k] = __fmul_rn(v[i][k], __fmul_rn(r, wv[k]));
        row_key = max(row_key, store_n<kVec>(y + at + j, v[i]));
      }
    }
    return row_key;
  });
  finish_amax(key, amax);
}

// The register kernel for rows of up to 2048 elements (256 per group count), else 0.
inline int register_groups(int d) {
  for (int g = 1; g <= 8; g *= 2) {
    if (d <= 256 * g) return g;
  }
  return 0;
}

}  // namespace

void add_rmsnorm_forward(const float* x, const void* branch, ElemType branch_type, float* sum,
                         const float* w, float eps, void* y, ElemType y_type, float* rstd,
                         std::int64_t rows, int d_model, cudaStream_t stream, AmaxOut amax) {
  // The split of each row over the lanes is the one rmsnorm_forward would take normalising
  // `sum`, so rstd gets the same bits. A vector split whose x or branch is unaligned (the fused
  // kernel would need scalar loads inside the vector groups) and empty tensors run the two
  // unfused launches instead.
  const bool vec = rmsnorm::forward_vectors(d_model, sum, y, w);
  if (rows <= 0 || d_model <= 0 || (vec && !(aligned16(x) && aligned16(branch)))) {
    if (rows > 0 && d_model > 0) add_f32(x, branch, branch_type, sum, rows * d_model, stream);
    rmsnorm_forward(sum, ElemType::f32, w, eps, y, y_type, rstd, rows, d_model, stream, amax);
    return;
  }
  const unsigned blocks = rmsnorm::forward_blocks(rows);
  dispatch_type(branch_type, [&](auto bt) {
    dispatch_type(y_type, [&](auto yt) {
      using B = decltype(bt);
      using Y = decltype(yt);
      const auto registers = [&](auto kernel) {
        kernel<<<blocks, kBlockThreads, 0, stream>>>(x, static_cast<const B*>(branch), sum, w, eps,
                                                     static_cast<Y*>(y), rstd, rows, d_model, amax);
      };
      const int groups = vec ? register_groups(d_model) : 0;
      if (groups == 1) {
        registers(add_rmsnorm_forward_registers_kernel<B, Y, 1>);
      } else if (groups == 2) {
        registers(add_rmsnorm_forward_registers_kernel<B, Y, 2>);
      } else if (groups == 4) {
        registers(add_rmsnorm_forward_registers_kernel<B, Y, 4>);
      } else if (groups == 8) {
        registers(add_rmsnorm_forward_registers_kernel<B, Y, 8>);
      } else if (vec) {
        add_rmsnorm_forward_kernel<B, Y, true>
            <<<blocks, kBlockThreads, 0, stream>>>(x, static_cast<const B*>(branch), sum, w, eps,
                                                   static_cast<Y*>(y), rstd, rows, d_model, amax);
      } else {
        add_rmsnorm_forward_kernel<B, Y, false>
            <<<blocks, kBlockThreads, 0, stream>>>(x, static_cast<const B*>(branch), sum, w, eps,
                                                   static_cast<Y*>(y), rstd, rows, d_model, amax);
      }
    });
  });
}

}  // namespace fp8lab::cuda_ops
