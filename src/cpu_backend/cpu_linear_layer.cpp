// The CPU reference linear layer, y = x Wᵀ, in the bf16 and fp8 policies (design.md §2).
// Every GEMM goes through gemm_tn_cpu, in the K-major layouts the cuBLASLt path uses.
#include "fp8lab/linear.hpp"

#include "gemm/gemm.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

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

namespace {

// The f32 inverse scales of a [rows, cols] operand cast with `mode` (none for tensor mode,
// whose scale lives in Fp8Scale).
HostTensor inverse_scales(ScaleMode mode, std::int64_t rows, std::int64_t cols) {
  if (mode == ScaleMode::tensor) return {};
  return HostTensor(DType::f32, {ScaleLayout{mode, rows, cols}.count()});
}

}  // namespace

LinearSavedHost::LinearSavedHost(LinearPrecision precision, std::int64_t m, std::int64_t k,
                                 std::int64_t n, const Fp8Options& fp8) {
  saved.precision = precision;
  saved.fp8 = fp8;
  if (precision != LinearPrecision::fp8) return;
  const OperandScaling xs = operand_scaling(fp8.recipe, Fp8Role::x);
  const OperandScaling ws = operand_scaling(fp8.recipe, Fp8Role::w);
  xq = HostTensor(DType::e4m3, {m, k});
  wq = HostTensor(DType::e4m3, {n, k});
  wq_t = HostTensor(DType::e4m3, {k, n});
  xq_inv = inverse_scales(xs.q, m, k);
  wq_inv = inverse_scales(ws.q, n, k);
  wq_t_inv = inverse_scales(ws.qt, k, n);
  if (!fp8.bf16_wgrad) {
    xq_t = HostTensor(DType::e4m3, {k, m});
    xq_t_inv = inverse_scales(xs.qt, k, m);
  }
  saved.xq = xq.view();
  saved.xq_t = xq_t.view();
  saved.wq = wq.view();
  saved.wq_t = wq_t.view();
  saved.xq_inv = xq_inv.view();
  saved.xq_t_inv = xq_t_inv.view();
  saved.wq_inv = wq_inv.view();
  saved.wq_t_inv = wq_t_inv.view();
}

LinearScratchHost::LinearScratchHost(LinearPrecision precision, std::int64_t m, std::int64_t n,
                                     const Fp8Options& fp8) {
  if (precision != LinearPrecision::fp8) return;
  const OperandScaling ds = operand_scaling(fp8.recipe, Fp8Role::dy);
  dyq = HostTensor(DType::e5m2, {m, n});
  dyq_inv = inverse_scales(ds.q, m, n);
  if (!fp8.bf16_wgrad) {
    dyq_t = HostTensor(DType::e5m2, {n, m});
    dyq_t_inv = inverse_scales(ds.qt, n, m);
  }
  scratch.dyq = dyq.view();
  scratch.dyq_t = dyq_t.view();
  scratch.dyq_inv = dyq_inv.view();
  scratch.dyq_t_inv = dyq_t_inv.view();
}

void check_fp8_linear_dims(const Fp8Options& fp8, std::int64_t m, std::int64_t k, std::int64_t n,
                           const std::string& name) {
  const std::int64_t a = fp8_recipe_alignment(fp8.recipe);
  const std::pair<const char*, std::int64_t> dims[] = {
      {"M (tokens)", m}, {"K (input features)", k}, {"N (output features)", n}};
  for (const auto& [what, v] : dims)
    FP8LAB_CHECK_KIND(ErrorKind::shape, v % a == 0,
                      "linear '{}': the {} FP8 recipe needs every GEMM dimension to be a multiple "
                      "of {}; {} is {}",
                      name, fp8_recipe_name(fp8.recipe), a, what, v);
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
  if (!s.fp8.bf16_wgrad) check_view(s.xq_t, DType::e4m3, {k, m}, name + " saved xq_t");
  check_view(s.wq, DType::e4m3, {n, k}, name + " saved wq");
  check_view(s.wq_t, DType::e4m3, {k, n}, name + " saved wq_t");
}

// A cast of the grouped recipes into one layout (transposed: of xᵀ), its scales into `inv`.
GroupedCastStats cast_grouped(const TensorView& x, Fp8Format format, ScaleMode mode,
                              bool transposed, const TensorView& q, const TensorView& inv,
                              const std::string& tensor) {
  return transposed ? quantize_grouped_transposed_cpu(x, format, mode, q, inv, tensor)
                    : quantize_grouped_cpu(x, format, mode, q, inv, tensor);
}

CastCounts operator+(CastCounts a, CastCounts b) {
  return {a.saturated + b.saturated, a.underflow + b.underflow};
}

// An FP8 GEMM operand's options: per-group inverse scales, or the tensor's one.
struct Scaled {
  ScaleMode mode;
  const TensorView& inv;
  float tensor_inv;
};

GemmOptions scaled_gemm(Scaled a, Scaled b, bool accumulate) {
  GemmOptions o{a.tensor_inv, b.tensor_inv, accumulate};
  o.scale_mode_a = a.mode;
  o.scale_mode_b = b.mode;
  if (a.mode != ScaleMode::tensor) o.inv_scales_a = a.inv.as<const float>();
  if (b.mode != ScaleMode::tensor) o.inv_scales_b = b.inv.as<const float>();
  return o;
}

// The forward of the grouped recipes: each of x and W cast into both layouts (x's transpose
// only for an FP8 wgrad), then y from the forward layouts.
void forward_grouped(const LinearConfig& config, const TensorView& x, const TensorView& w,
                     const TensorView& y, LinearSaved& s) {
  const std::string& name = config.name;
  const OperandScaling xs = operand_scaling(config.fp8.recipe, Fp8Role::x);
  const OperandScaling ws = operand_scaling(config.fp8.recipe, Fp8Role::w);
  const GroupedCastStats xq = cast_grouped(x, Fp8Format::e4m3, xs.q, false, s.xq, s.xq_inv,
                                           name + ".x");
  s.x_scale = {xq.amax, 1.0f, 1.0f};
  s.x_counts = xq.counts;
  if (!config.fp8.bf16_wgrad)
    s.x_counts = s.x_counts + cast_grouped(x, Fp8Format::e4m3, xs.qt, true, s.xq_t, s.xq_t_inv,
                                           name + ".x")
                                  .counts;
  const GroupedCastStats wq = cast_grouped(w, Fp8Format::e4m3, ws.q, false, s.wq, s.wq_inv,
                                           name + ".w");
  const GroupedCastStats wq_t = cast_grouped(w, Fp8Format::e4m3, ws.qt, true, s.wq_t, s.wq_t_inv,
                                             name + ".w");
  s.w_scale = {wq.amax, 1.0f, 1.0f};
  // Same groups in both layouts: one cast whose bytes were written twice, counted once.
  s.w_counts = ws.qt_is_transpose_of_q ? wq.counts : wq.counts + wq_t.counts;
  gemm_tn_cpu(s.xq, s.wq, y, scaled_gemm({xs.q, s.xq_inv, 1.0f}, {ws.q, s.wq_inv, 1.0f}, false));
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
  FP8LAB_CHECK(saved.fp8 == config.fp8,
               "{}: saved state was made for the {} recipe, the layer runs {}", name,
               fp8_recipe_name(saved.fp8.recipe), fp8_recipe_name(config.fp8.recipe));
  if (config.fp8.recipe != Fp8Recipe::tensorwise) check_fp8_linear_dims(config.fp8, m, k, n, name);
  check_fp8_saved_views(saved, m, k, n, name);
  if (config.fp8.bf16_wgrad) saved.x = x;  // the BF16 wgrad's operand
  if (config.fp8.recipe != Fp8Recipe::tensorwise) {
    forward_grouped(config, x, w, y, saved);
    return;
  }
  saved.x_scale = x_amax ? current_scale_from_amax_cpu(x, *x_amax, Fp8Format::e4m3, name + ".x")
                         : current_scale_cpu(x, Fp8Format::e4m3, name + ".x");
  saved.w_scale = w_amax ? current_scale_from_amax_cpu(w, *w_amax, Fp8Format::e4m3, name + ".w")
                         : current_scale_cpu(w, Fp8Format::e4m3, name + ".w");
  saved.x_counts =
      config.fp8.bf16_wgrad
          ? quantize_cpu(x, saved.x_scale.scale, Fp8Format::e4m3, saved.xq)
          : quantize_transpose_cpu(x, saved.x_scale.scale, Fp8Format::e4m3, saved.xq, saved.xq_t);
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
  FP8LAB_CHECK(saved.fp8 == config.fp8,
               "{}: saved state was made for the {} recipe, the layer runs {}", name,
               fp8_recipe_name(saved.fp8.recipe), fp8_recipe_name(config.fp8.recipe));
  check_fp8_saved_views(saved, m, k, n, name);
  const bool fp8_wgrad = !config.fp8.bf16_wgrad;
  check_view(scratch.dyq, DType::e5m2, {m, n}, name + " scratch dyq");
  if (fp8_wgrad) check_view(scratch.dyq_t, DType::e5m2, {n, m}, name + " scratch dyq_t");
  const OperandScaling ds = operand_scaling(config.fp8.recipe, Fp8Role::dy);
  const OperandScaling xs = operand_scaling(config.fp8.recipe, Fp8Role::x);
  const OperandScaling ws = operand_scaling(config.fp8.recipe, Fp8Role::w);
  if (config.fp8.recipe == Fp8Recipe::tensorwise) {
    stats.dy_scale = dy_amax
                         ? current_scale_from_amax_cpu(dy, *dy_amax, Fp8Format::e5m2, name + ".dy")
                         : current_scale_cpu(dy, Fp8Format::e5m2, name + ".dy");
    stats.dy_counts =
        fp8_wgrad ? quantize_transpose_cpu(dy, stats.dy_scale.scale, Fp8Format::e5m2, scratch.dyq,
                                           scratch.dyq_t)
                  : quantize_cpu(dy, stats.dy_scale.scale, Fp8Format::e5m2, scratch.dyq);
  } else {
    const GroupedCastStats q = cast_grouped(dy, Fp8Format::e5m2, ds.q, false, scratch.dyq,
                                            scratch.dyq_inv, name + ".dy");
    stats.dy_scale = {q.amax, 1.0f, 1.0f};
    stats.dy_counts = q.counts;
    if (fp8_wgrad)
      stats.dy_counts = stats.dy_counts + cast_grouped(dy, Fp8Format::e5m2, ds.qt, true,
                                                       scratch.dyq_t, scratch.dyq_t_inv,
                                                       name + ".dy")
                                              .counts;
  }
  // Only what forward saved is read: Wqᵀ for dgrad, Xqᵀ (or x) for wgrad, with their scales.
  gemm_tn_cpu(scratch.dyq, saved.wq_t, dx,
              scaled_gemm({ds.q, scratch.dyq_inv, stats.dy_scale.inv_scale},
                          {ws.qt, saved.wq_t_inv, saved.w_scale.inv_scale}, false));
  if (fp8_wgrad) {
    gemm_tn_cpu(scratch.dyq_t, saved.xq_t, dw,
                scaled_gemm({ds.qt, scratch.dyq_t_inv, stats.dy_scale.inv_scale},
                            {xs.qt, saved.xq_t_inv, saved.x_scale.inv_scale}, accumulate_dw));
  } else {
    check_view(saved.x, DType::bf16, {m, k}, name + " saved x (bf16 wgrad)");
    const HostTensor dy_t = transpose_bf16(dy), x_t = transpose_bf16(saved.x);
    gemm_tn_cpu(dy_t, x_t, dw, {1.0f, 1.0f, accumulate_dw});
  }
  return stats;
}

}  // namespace fp8lab
