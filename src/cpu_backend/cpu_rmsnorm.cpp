// CPU RMSNorm forward and backward (no bias, no mean subtraction), and the fused variants
// (Backend::add_rmsnorm_forward, rmsnorm_backward_and_convert): the same row arithmetic with the
// residual add in front of it or the dY copy after it, so they equal the unfused ops bit for bit.
#include "cpu_backend/cpu_backend.hpp"
#include "cpu_backend/cpu_rows.hpp"
#include "nn/op_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fp8lab::cpu {
namespace {

void check_norm_args(const TensorView& x, const TensorView& w, const TensorView& rstd,
                     const TensorView& other, const char* other_name) {
  nn::check_norm_shapes(x, w, rstd, other, other_name);
  check_activation(x, "rmsnorm x");
  check_activation(other, other_name);
}

constexpr std::int64_t kRowBlock = 64;  // rows per partial sum of dw (fixed: deterministic sums)

// Normalises one fp32 row in place (row *= rstd * w); returns rstd.
float normalize_row(float* row, std::int64_t d, const float* w, float eps) {
  double ss = 0.0;
  for (std::int64_t j = 0; j < d; ++j) ss += static_cast<double>(row[j]) * row[j];
  const float r = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(d) + eps));
  for (std::int64_t j = 0; j < d; ++j) row[j] *= r * w[j];
  return r;
}

// The backward of every row; with `copy`, each updated dx_accum row is also stored there, as
// convert(dx_accum, *copy) would store it (read back from dx_accum: the same rounding).
void norm_backward(const TensorView& x, const TensorView& w, const TensorView& rstd,
                   const TensorView& dy, const TensorView& dx_accum, const TensorView& dw_accum,
                   const TensorView* copy, GradWrite dw_write) {
  check_norm_args(x, w, rstd, dy, "rmsnorm dy");
  check_activation(dx_accum, "rmsnorm dx");
  nn::check_grad_dtype(dw_accum, "rmsnorm dw");
  FP8LAB_CHECK_KIND(ErrorKind::shape,
                    dx_accum.numel() == x.numel() && dw_accum.numel() == w.numel(),
                    "rmsnorm backward: dx {} or dw {} does not match x {} / weight {}",
                    dx_accum.describe(), dw_accum.describe(), x.describe(), w.describe());
  const std::int64_t rows = x.shape[0], d = x.shape[1];
  const std::int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  const float* wp = w.as<const float>();
  std::vector<float> dw_partial(static_cast<std::size_t>(blocks * d), 0.f);
#pragma omp parallel
  {
    std::vector<float> xr(static_cast<std::size_t>(d)), gr(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      float* dwp = dw_partial.data() + b * d;
      for (std::int64_t m = b * kRowBlock; m < std::min(rows, (b + 1) * kRowBlock); ++m) {
        load_span(x, m * d, d, xr.data());
        load_span(dy, m * d, d, gr.data());
        const float r = rstd.as<const float>()[m];
        double dot = 0.0;  // sum_j dy_j w_j x_j
        for (std::int64_t j = 0; j < d; ++j) {
          const auto jj = static_cast<std::size_t>(j);
          dot += static_cast<double>(gr[jj]) * wp[j] * xr[jj];
          dwp[j] += gr[jj] * xr[jj] * r;
        }
        // d/dx_i of x_i r w_i: r w_i dy_i - x_i r^3 / D * sum_j dy_j w_j x_j
        const float coef = static_cast<float>(dot) * r * r * r / static_cast<float>(d);
        for (std::int64_t j = 0; j < d; ++j) {
          const auto jj = static_cast<std::size_t>(j);
          gr[jj] = r * wp[j] * gr[jj] - coef * xr[jj];
        }
        accumulate_span(dx_accum, m * d, d, gr.data());
        if (copy != nullptr) {
          load_span(dx_accum, m * d, d, gr.data());
          store_span(*copy, m * d, d, gr.data());
        }
      }
    }
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < d; ++j) {
    float s = 0.f;
    for (std::int64_t b = 0; b < blocks; ++b) s += dw_partial[static_cast<std::size_t>(b * d + j)];
    store_at(dw_accum, j, dw_write == GradWrite::overwrite ? s : load_at(dw_accum, j) + s);
  }
}

}  // namespace

void CpuBackend::rmsnorm_forward(const TensorView& x, const TensorView& w, float eps,
                                 const TensorView& y, const TensorView& rstd, AmaxSlot amax) {
  check_norm_args(x, w, rstd, y, "rmsnorm y");
  const std::int64_t rows = x.shape[0], d = x.shape[1];
  const float* wp = w.as<const float>();
#pragma omp parallel
  {
    std::vector<float> row(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
    for (std::int64_t m = 0; m < rows; ++m) {
      load_span(x, m * d, d, row.data());
      rstd.as<float>()[m] = normalize_row(row.data(), d, wp, eps);
      store_span(y, m * d, d, row.data());
    }
  }
  store_output_amax(y, amax);
}

void CpuBackend::add_rmsnorm_forward(const TensorView& x, const TensorView& branch,
                                     const TensorView& sum_out, const TensorView& w, float eps,
                                     const TensorView& y, const TensorView& rstd, AmaxSlot amax) {
  nn::check_add_rmsnorm(x, branch, sum_out, y);
  check_norm_args(sum_out, w, rstd, y, "rmsnorm y");
  check_activation(x, "residual add x");
  check_activation(branch, "residual add branch");
  const std::int64_t rows = sum_out.shape[0], d = sum_out.shape[1];
  const float* wp = w.as<const float>();
  const float* xp = x.as<const float>();
  float* sp = sum_out.as<float>();
#pragma omp parallel
  {
    std::vector<float> row(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
    for (std::int64_t m = 0; m < rows; ++m) {
      load_span(branch, m * d, d, row.data());
      // x + branch in add's operand order: one fp32 add, stored exactly (sum_out is f32).
      for (std::int64_t j = 0; j < d; ++j) {
        const auto jj = static_cast<std::size_t>(j);
        row[jj] = xp[m * d + j] + row[jj];
        sp[m * d + j] = row[jj];
      }
      rstd.as<float>()[m] = normalize_row(row.data(), d, wp, eps);
      store_span(y, m * d, d, row.data());
    }
  }
  store_output_amax(y, amax);
}

void CpuBackend::rmsnorm_backward(const TensorView& x, const TensorView& w, const TensorView& rstd,
                                  const TensorView& dy, const TensorView& dx_accum,
                                  const TensorView& dw_accum, GradWrite dw_write) {
  norm_backward(x, w, rstd, dy, dx_accum, dw_accum, nullptr, dw_write);
}

void CpuBackend::rmsnorm_backward_and_convert(const TensorView& x, const TensorView& w,
                                              const TensorView& rstd, const TensorView& dy,
                                              const TensorView& dx_accum,
                                              const TensorView& dw_accum, const TensorView& dx_copy,
                                              AmaxSlot copy_amax, GradWrite dw_write) {
  nn::check_norm_copy(x, dy, dx_accum, dx_copy);
  check_activation(dx_copy, "rmsnorm dx copy");
  norm_backward(x, w, rstd, dy, dx_accum, dw_accum, &dx_copy, dw_write);
  store_output_amax(dx_copy, copy_amax);
}

}  // namespace fp8lab::cpu
