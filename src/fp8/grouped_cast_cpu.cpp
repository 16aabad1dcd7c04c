// The CPU reference of the grouped casts (fp8lab/fp8_grouped.hpp). Deterministic: a group's amax
// is a max of integer keys (order-free), every output byte depends on its element and its
// group's scale only, and the counters are integer sums.
#include "fp8lab/fp8_grouped.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace fp8lab {
namespace {

// The magnitude bits of v: integer order is float order on finite values and inf, and every NaN
// lies above inf (the CUDA kernels use the same keys).
std::uint32_t amax_key(float v) { return float_bits(v) & 0x7FFFFFFFu; }

float amax_from_key(std::uint32_t key) {
  return key > 0x7F800000u ? std::numeric_limits<float>::quiet_NaN() : bits_float(key);
}

void check_args(const TensorView& x, Fp8Format format, const TensorView& q,
                const TensorView& inv_scales, const ScaleLayout& layout, const char* op) {
  check_device(x, Device::cpu, "grouped cast input");
  check_device(q, Device::cpu, "grouped cast output");
  check_device(inv_scales, Device::cpu, "grouped cast inverse scales");
  check_rank(x, 2, "grouped cast input");
  FP8LAB_CHECK_KIND(ErrorKind::dtype, x.dtype == DType::f32 || x.dtype == DType::bf16,
                    "{}: input must be f32 or bf16, got {}", op, x.describe());
  check_dtype(q, fp8_dtype(format), "grouped cast output");
  check_shape(q, x.shape, "grouped cast output");
  check_dtype(inv_scales, DType::f32, "grouped cast inverse scales");
  FP8LAB_CHECK_KIND(ErrorKind::shape, inv_scales.numel() == layout.count(),
                    "{}: inverse scales {} must hold {} floats for {} groups of {}", op,
                    inv_scales.describe(), layout.count(), scale_mode_name(layout.mode),
                    x.describe());
}

float load(const TensorView& x, std::int64_t i) {
  return x.dtype == DType::f32 ? x.as<const float>()[i]
                               : bf16_to_float(x.as<const std::uint16_t>()[i]);
}

}  // namespace

const char* scale_mode_name(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::tensor:
      return "tensor";
    case ScaleMode::row:
      return "row";
    case ScaleMode::vec128:
      return "vec128";
    case ScaleMode::block128:
      return "block128";
  }
  return "?";
}

ScaleLayout scale_layout(ScaleMode mode, const TensorView& x) {
  check_rank(x, 2, "scaled FP8 operand");
  return {mode, x.rows(), x.cols()};
}

GroupedCastStats quantize_grouped_cpu(const TensorView& x, Fp8Format format, ScaleMode mode,
                                      const TensorView& q, const TensorView& inv_scales,
                                      std::string_view tensor_name) {
  const ScaleLayout layout = scale_layout(mode, x);
  check_args(x, format, q, inv_scales, layout, "quantize_grouped_cpu");
  const std::int64_t rows = layout.rows, cols = layout.cols;
  const std::int64_t rg_count = layout.row_groups(), cg_count = layout.col_groups();
  const std::int64_t gr = layout.group_rows(), gc = layout.group_cols();
  // Each row's largest key per column group, then each group's over its rows.
  std::vector<std::uint32_t> row_keys(static_cast<std::size_t>(rows * cg_count), 0u);
#pragma omp parallel for schedule(static) if (rows * cols > 32768)
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      std::uint32_t& k = row_keys[static_cast<std::size_t>(r * cg_count + c / gc)];
      k = std::max(k, amax_key(load(x, r * cols + c)));
    }
  std::vector<std::uint32_t> group_keys(static_cast<std::size_t>(rg_count * cg_count), 0u);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t cg = 0; cg < cg_count; ++cg) {
      std::uint32_t& k = group_keys[static_cast<std::size_t>((r / gr) * cg_count + cg)];
      k = std::max(k, row_keys[static_cast<std::size_t>(r * cg_count + cg)]);
    }
  GroupedCastStats stats;
  stats.groups = rg_count * cg_count;
  std::vector<float> scales(group_keys.size());
  float* inv = inv_scales.as<float>();
  std::fill(inv, inv + layout.count(), 1.0f);
  std::uint32_t top = 0;
  for (std::int64_t rg = 0; rg < rg_count; ++rg)
    for (std::int64_t cg = 0; cg < cg_count; ++cg) {
      const std::size_t g = static_cast<std::size_t>(rg * cg_count + cg);
      const float amax = amax_from_key(group_keys[g]);
      FP8LAB_CHECK_KIND(ErrorKind::non_finite, std::isfinite(amax),
                        "tensor '{}' ({}) has a non-finite amax ({}) in its {} scale group "
                        "(row group {}, column group {})",
                        tensor_name, x.describe(), amax, scale_mode_name(mode), rg, cg);
      const Fp8Scale s = scale_from_amax(amax, format);
      scales[g] = s.scale;
      inv[layout.index(rg, cg)] = s.inv_scale;
      top = std::max(top, group_keys[g]);
    }
  stats.amax = amax_from_key(top);
  std::uint8_t* out = q.as<std::uint8_t>();
  std::int64_t saturated = 0, underflow = 0;
#pragma omp parallel for schedule(static) reduction(+ : saturated, underflow) if (rows * cols > 32768)
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const float v = load(x, r * cols + c);
      const float y = v * scales[static_cast<std::size_t>((r / gr) * cg_count + c / gc)];
      const std::uint8_t code = float_to_fp8(y, format);
      out[r * cols + c] = code;
      saturated += fp8_saturates(y, format) ? 1 : 0;
      underflow += (v != 0.0f && (code & 0x7F) == 0) ? 1 : 0;
    }
  stats.counts = {saturated, underflow};
  return stats;
}

GroupedCastStats quantize_grouped_transposed_cpu(const TensorView& x, Fp8Format format,
                                                 ScaleMode mode, const TensorView& qt,
                                                 const TensorView& inv_scales,
                                                 std::string_view tensor_name) {
  check_device(x, Device::cpu, "grouped cast input");
  check_rank(x, 2, "grouped cast input");
  FP8LAB_CHECK_KIND(ErrorKind::dtype, x.dtype == DType::f32 || x.dtype == DType::bf16,
                    "quantize_grouped_transposed_cpu: input must be f32 or bf16, got {}",
                    x.describe());
  const std::int64_t rows = x.rows(), cols = x.cols();
  HostTensor xt(x.dtype, {cols, rows});
  const std::size_t elem = dtype_size(x.dtype);
  const auto* src = x.as<const std::uint8_t>();
  auto* dst = xt.as<std::uint8_t>();
#pragma omp parallel for schedule(static) if (rows * cols > 32768)
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < rows; ++r)
      std::copy_n(src + static_cast<std::size_t>(r * cols + c) * elem, elem,
                  dst + static_cast<std::size_t>(c * rows + r) * elem);
  return quantize_grouped_cpu(xt.view(), format, mode, qt, inv_scales, tensor_name);
}

void dequantize_grouped_cpu(const TensorView& q, ScaleMode mode, const TensorView& inv_scales,
                            const TensorView& out) {
  check_device(q, Device::cpu, "grouped dequantize input");
  check_rank(q, 2, "grouped dequantize input");
  FP8LAB_CHECK_KIND(ErrorKind::dtype, is_fp8(q.dtype), "grouped dequantize input {} is not fp8",
                    q.describe());
  check_dtype(out, DType::f32, "grouped dequantize output");
  check_shape(out, q.shape, "grouped dequantize output");
  const ScaleLayout layout = scale_layout(mode, q);
  check_dtype(inv_scales, DType::f32, "grouped dequantize inverse scales");
  FP8LAB_CHECK_KIND(ErrorKind::shape, inv_scales.numel() == layout.count(),
                    "grouped dequantize: inverse scales {} must hold {} floats",
                    inv_scales.describe(), layout.count());
  const Fp8Format format = q.dtype == DType::e4m3 ? Fp8Format::e4m3 : Fp8Format::e5m2;
  const std::uint8_t* in = q.as<const std::uint8_t>();
  const float* inv = inv_scales.as<const float>();
  float* o = out.as<float>();
  const std::int64_t rows = q.rows(), cols = q.cols();
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      o[r * cols + c] = fp8_to_float(in[r * cols + c], format) * inv[layout.index_of(r, c)];
}

}  // namespace fp8lab
