// The CPU reference linear layer, y = x Wᵀ, in the bf16 and fp8 policies (design.md §2).
// Every GEMM goes through gemm_tn_cpu, in the K-major layouts the cuBLASLt path uses.
#include "fp8lab/linear.hpp"

#include "fp8lab/gemm.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace fp8lab {

const char* linear_precision_name(LinearPrecision p) {
  return p == LinearPrecision::bf16 ? "bf16" : "fp8";
}

LinearPrecision parse_linear_precision(std::string_view name) {
  if (name == "bf16") return LinearPrecision::bf16;
  if (name == "fp8") return LinearPrecision::fp8;
  FP8LAB_FAIL(ErrorKind::invalid_argument, "unknown linear precision '{}' (expected bf16 or fp8)",
              name);
}

LinearSavedHost::LinearSavedHost(LinearPrecision precision, std::int64_t m, std::int64_t k,
                                 std::int64_t n) {
  saved.precision = precision;
  if (precision != LinearPrecision::fp8) return;
  xq = HostTensor(DType::e4m3, {m, k});
  xq_t = HostTensor(DType::e4m3, {k, m});
  wq = HostTensor(DType::e4m3, {n, k});
  wq_t = HostTensor(DType::e4m3, {k, n});
  saved.xq = xq.view();
  saved.xq_t = xq_t.view();
  saved.wq = wq.view();
  saved.wq_t = wq_t.view();
}

LinearScratchHost::LinearScratchHost(LinearPrecision precision, std::int64_t m, std::int64_t n) {
  if (precision != LinearPrecision::fp8) return;
  dyq = HostTensor(DType::e5m2, {m, n});
  dyq_t = HostTensor(DType::e5m2, {n, m});
  scratch.dyq = dyq.view();
  scratch.dyq_t = dyq_t.view();
}

namespace {

// out [cols, rows] = transpose of in [rows, cols], for 2-byte elements (the bf16 policy's
// K-major operands; the fp8 policy gets its transposes from quantize-transpose instead).
HostTensor transpose_bf16(const TensorView& in) {
  const std::int64_t rows = in.rows(), cols = in.cols();
  HostTensor out(in.dtype, {cols, rows});
  const std::uint16_t* src = in.as<const std::uint16_t>();
  std::uint16_t* dst = out.as<std::uint16_t>();
  constexpr std::int64_t kTile = 64;
#pragma omp parallel for schedule(static) collapse(2) if (rows * cols > 32768)
  for (std::int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (std::int64_t c0 = 0; c0 < cols; c0 += kTile)
      for (std::int64_t c = c0; c < std::min(c0 + kTile, cols); ++c)
        for (std::int64_t r = r0; r < std::min(r0 + kTile, rows); ++r)
          dst[c * rows + r] = src[r * cols + c];
  return out;
}

void check_view(const TensorView& t, DType dtype, const Shape& shape, const std::string& what) {
  check_device(t, Device::cpu, what.c_str());
  check_dtype(t, dtype, what.c_str());
  check_shape(t, shape, what.c_str());
}

void check_fp8_saved_views(const LinearSaved& s, std::int64_t m, std::int64_t k, std::int64_t n,
                           const std::string& name) {
  check_view(s.xq, DType::e4m3, {m, k}, name + " saved xq");
  check_view(s.xq_t, DType::e4m3, {k, m}, name + " saved xq_t");
  check_view(s.wq, DType::e4m3, {n, k}, name + " saved wq");
  check_view(s.wq_t, DType::e4m3, {k, n}, name + " saved wq_t");
}

}  // namespace

void linear_forward_cpu(const LinearConfig& config, const TensorView& x, const TensorView& w,
                        const TensorView& y, LinearSaved& saved, std::optional<float> x_amax,
                        std::optional<float> w_amax) {
  const std::string& name = config.name;
  check_rank(x, 2, (name + ".x").c_str());
  check_rank(w, 2, (name + ".w").c_str());
  const std::int64_t m = x.rows(), k = x.cols(), n = w.rows();
  check_view(x, DType::bf16, {m, k}, name + ".x");
  check_view(w, DType::bf16, {n, k}, name + ".w (W is [N, K], K = x's columns)");
  check_view(y, DType::bf16, {m, n}, name + ".y");
  FP8LAB_CHECK(saved.precision == config.precision,
               "{}: saved state was made for the {} policy, the layer runs {}", name,
               linear_precision_name(saved.precision), linear_precision_name(config.precision));
  if (config.precision == LinearPrecision::bf16) {
    check_finite_cpu(x, name + ".x");
    check_finite_cpu(w, name + ".w");
    saved.x = x;
    saved.w = w;
    gemm_tn_cpu(x, w, y);
    return;
  }
  check_fp8_saved_views(saved, m, k, n, name);
  saved.x_scale = x_amax ? current_scale_from_amax_cpu(x, *x_amax, Fp8Format::e4m3, name + ".x")
                         : current_scale_cpu(x, Fp8Format::e4m3, name + ".x");
  saved.w_scale = w_amax ? current_scale_from_amax_cpu(w, *w_amax, Fp8Format::e4m3, name + ".w")
                         : current_scale_cpu(w, Fp8Format::e4m3, name + ".w");
  saved.x_counts =
      quantize_transpose_cpu(x, saved.x_scale.scale, Fp8Format::e4m3, saved.xq, saved.xq_t);
  saved.w_counts =
      quantize_transpose_cpu(w, saved.w_scale.scale, Fp8Format::e4m3, saved.wq, saved.wq_t);
  gemm_tn_cpu(saved.xq, saved.wq, y, {saved.x_scale.inv_scale, saved.w_scale.inv_scale, false});
}

LinearBackwardStats linear_backward_cpu(const LinearConfig& config, const LinearSaved& saved,
                                        const TensorView& dy, const TensorView& dx,
                                        const TensorView& dw, const LinearScratch& scratch,
                                        bool accumulate_dw, std::optional<float> dy_amax) {
  const std::string& name = config.name;
  FP8LAB_CHECK(saved.precision == config.precision,
               "{}: saved state was made for the {} policy, the layer runs {}", name,
               linear_precision_name(saved.precision), linear_precision_name(config.precision));
  const bool fp8 = config.precision == LinearPrecision::fp8;
  const TensorView& w_shape_source = fp8 ? saved.wq : saved.w;
  const TensorView& x_shape_source = fp8 ? saved.xq : saved.x;
  check_rank(x_shape_source, 2, (name + " saved x").c_str());
  check_rank(w_shape_source, 2, (name + " saved w").c_str());
  const std::int64_t m = x_shape_source.rows(), k = x_shape_source.cols(),
                     n = w_shape_source.rows();
  check_view(dy, DType::bf16, {m, n}, name + ".dy");
  check_view(dx, DType::bf16, {m, k}, name + ".dx");
  check_device(dw, Device::cpu, (name + ".dw").c_str());
  check_shape(dw, {n, k}, (name + ".dw").c_str());
  FP8LAB_CHECK_KIND(ErrorKind::dtype, dw.dtype == DType::f32 || dw.dtype == DType::bf16,
                    "{}.dw must be f32 or bf16, got {}", name, dw.describe());
  LinearBackwardStats stats;
  if (!fp8) {
    check_finite_cpu(dy, name + ".dy");
    const HostTensor w_t = transpose_bf16(saved.w), dy_t = transpose_bf16(dy),
                     x_t = transpose_bf16(saved.x);
    gemm_tn_cpu(dy, w_t, dx);                                 // dX[M,K] = dY[M,N] · (Wᵀ[K,N])ᵀ
    gemm_tn_cpu(dy_t, x_t, dw, {1.0f, 1.0f, accumulate_dw});  // dW[N,K] = dYᵀ[N,M] · (xᵀ[K,M])ᵀ
    return stats;
  }
  check_fp8_saved_views(saved, m, k, n, name);
  check_view(scratch.dyq, DType::e5m2, {m, n}, name + " scratch dyq");
  check_view(scratch.dyq_t, DType::e5m2, {n, m}, name + " scratch dyq_t");
  stats.dy_scale = dy_amax
                       ? current_scale_from_amax_cpu(dy, *dy_amax, Fp8Format::e5m2, name + ".dy")
                       : current_scale_cpu(dy, Fp8Format::e5m2, name + ".dy");
  stats.dy_counts =
      quantize_transpose_cpu(dy, stats.dy_scale.scale, Fp8Format::e5m2, scratch.dyq, scratch.dyq_t);
  // Only what forward saved is read: Wqᵀ for dgrad, Xqᵀ for wgrad, with the forward's scales.
  gemm_tn_cpu(scratch.dyq, saved.wq_t, dx,
              {stats.dy_scale.inv_scale, saved.w_scale.inv_scale, false});
  gemm_tn_cpu(scratch.dyq_t, saved.xq_t, dw,
              {stats.dy_scale.inv_scale, saved.x_scale.inv_scale, accumulate_dw});
  return stats;
}

}  // namespace fp8lab
