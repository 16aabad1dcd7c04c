// The residual add fused into the RMSNorm that reads its sum (nn/cuda_ops_launch.hpp,
// Backend::add_rmsnorm_forward): sum = x + branch (f32), y = RMSNorm(sum), one warp per row as
// the plain forward (nn/rmsnorm_rows.cuh). The first pass over a row adds, stores the sum and
// sums its squares; the second reads the sum back (in L1/L2) for y. Per element that moves
// x (4 bytes) + branch (2) in and sum (4) + y (2) out, against 16 bytes for add_f32 followed by
// rmsnorm_forward, which reads the sum back from memory.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "nn/cuda_ops_launch.hpp"
#include "nn/elementwise_access.cuh"
#include "nn/rmsnorm_rows.cuh"

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
      if (vec) {
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
