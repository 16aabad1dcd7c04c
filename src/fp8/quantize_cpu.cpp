// The CPU reference casts: quantize, quantize-transpose (both layouts from one pass), transpose
// and dequantize. Deterministic: every output byte depends only on its input element, and the
// counters are integer sums.
#include "fp8lab/fp8_scaling.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace fp8lab {
namespace {

// Tiles for the transposing loops: 64×64 bytes of output fit L1 in both layouts.
constexpr std::int64_t kTile = 64;

void check_cast_args(const TensorView& x, float scale, Fp8Format format, const TensorView& q,
                     const char* op) {
  check_device(x, Device::cpu, "cast input");
  check_device(q, Device::cpu, "cast output");
  FP8LAB_CHECK_KIND(ErrorKind::dtype, x.dtype == DType::f32 || x.dtype == DType::bf16,
                    "{}: input must be f32 or bf16, got {}", op, x.describe());
  check_dtype(q, fp8_dtype(format), "cast output");
  FP8LAB_CHECK(std::isfinite(scale) && scale > 0.0f,
               "{}: scale must be finite and positive, got {}", op, scale);
}

// One element of the cast, with its contribution to the counters.
struct CastElement {
  std::uint8_t code;
  bool saturated;
  bool underflow;
};

inline CastElement cast_element(float v, float scale, Fp8Format format) {
  const float y = v * scale;  // the single fp32 product of design.md §2
  const std::uint8_t code = float_to_fp8(y, format);
  return {code, fp8_saturates(y, format), v != 0.0f && (code & 0x7F) == 0};
}

// The one place a cast's input dtype and format are dispatched: `body(load, format)` gets a
// loader i -> float and the format as a compile-time constant, so the loop carries no branch on
// either and the format's constants fold into the conversion.
template <typename Body>
CastCounts dispatch_cast(const TensorView& x, Fp8Format format, Body body) {
  auto with_format = [&](auto load) {
    if (format == Fp8Format::e4m3)
      return body(load, std::integral_constant<Fp8Format, Fp8Format::e4m3>{});
    return body(load, std::integral_constant<Fp8Format, Fp8Format::e5m2>{});
  };
  if (x.dtype == DType::f32) {
    const float* p = x.as<const float>();
    return with_format([p](std::int64_t i) { return p[i]; });
  }
  const std::uint16_t* p = x.as<const std::uint16_t>();
  return with_format([p](std::int64_t i) { return bf16_to_float(p[i]); });
}

}  // namespace

CastCounts quantize_cpu(const TensorView& x, float scale, Fp8Format format, const TensorView& q) {
  check_cast_args(x, scale, format, q, "quantize_cpu");
  check_shape(q, x.shape, "quantize_cpu output");
  const std::int64_t n = x.numel();
  std::uint8_t* out = q.as<std::uint8_t>();
  return dispatch_cast(x, format, [&](auto load, auto fmt) {
    std::int64_t saturated = 0, underflow = 0;
#pragma omp parallel for schedule(static) reduction(+ : saturated, underflow) if (n > 32768)
    for (std::int64_t i = 0; i < n; ++i) {
      const CastElement e = cast_element(load(i), scale, fmt);
      out[i] = e.code;
      saturated += e.saturated;
      underflow += e.underflow;
    }
    return CastCounts{saturated, underflow};
  });
}

CastCounts quantize_transpose_cpu(const TensorView& x, float scale, Fp8Format format,
                                  const TensorView& q, const TensorView& qt) {
  check_cast_args(x, scale, format, q, "quantize_transpose_cpu");
  check_rank(x, 2, "quantize_transpose_cpu input");
  const std::int64_t rows = x.rows(), cols = x.cols();
  check_shape(q, Shape{rows, cols}, "quantize_transpose_cpu output q");
  check_shape(qt, Shape{cols, rows}, "quantize_transpose_cpu output qt");
  check_dtype(qt, fp8_dtype(format), "quantize_transpose_cpu output qt");
  check_device(qt, Device::cpu, "quantize_transpose_cpu output qt");
  std::uint8_t* out = q.as<std::uint8_t>();
  std::uint8_t* out_t = qt.as<std::uint8_t>();
  const std::int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  // One pass over x: each tile is cast once into a local buffer, which is then written out in
  // both layouts while it is hot.
  return dispatch_cast(x, format, [&](auto load, auto fmt) {
    std::int64_t saturated = 0, underflow = 0;
#pragma omp parallel for schedule(static) reduction(+ : saturated, underflow) \
    if (rows * cols > 32768)
    for (std::int64_t tile = 0; tile < row_tiles * col_tiles; ++tile) {
      const std::int64_t r0 = (tile / col_tiles) * kTile, c0 = (tile % col_tiles) * kTile;
      const std::int64_t r1 = std::min(r0 + kTile, rows), c1 = std::min(c0 + kTile, cols);
      std::array<std::uint8_t, kTile * kTile> codes;
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) {
          const CastElement e = cast_element(load(r * cols + c), scale, fmt);
          codes[static_cast<std::size_t>((r - r0) * kTile + (c - c0))] = e.code;
          out[r * cols + c] = e.code;
          saturated += e.saturated;
          underflow += e.underflow;
        }
      }
      for (std::int64_t c = c0; c < c1; ++c)
        for (std::int64_t r = r0; r < r1; ++r)
          out_t[c * rows + r] = codes[static_cast<std::size_t>((r - r0) * kTile + (c - c0))];
    }
    return CastCounts{saturated, underflow};
  });
}

void transpose_fp8_cpu(const TensorView& q, const TensorView& qt) {
  check_device(q, Device::cpu, "transpose_fp8_cpu input");
  check_device(qt, Device::cpu, "transpose_fp8_cpu output");
  FP8LAB_CHECK_KIND(ErrorKind::dtype, is_fp8(q.dtype) && qt.dtype == q.dtype,
                    "transpose_fp8_cpu: input and output must be the same fp8 dtype, got {} and {}",
                    q.describe(), qt.describe());
  check_rank(q, 2, "transpose_fp8_cpu input");
  const std::int64_t rows = q.rows(), cols = q.cols();
  check_shape(qt, Shape{cols, rows}, "transpose_fp8_cpu output");
  const std::uint8_t* in = q.as<const std::uint8_t>();
  std::uint8_t* out = qt.as<std::uint8_t>();
  const std::int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
#pragma omp parallel for schedule(static) if (rows * cols > 32768)
  for (std::int64_t tile = 0; tile < row_tiles * col_tiles; ++tile) {
    const std::int64_t r0 = (tile / col_tiles) * kTile, c0 = (tile % col_tiles) * kTile;
    const std::int64_t r1 = std::min(r0 + kTile, rows), c1 = std::min(c0 + kTile, cols);
    for (std::int64_t c = c0; c < c1; ++c)
      for (std::int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
  }
}

void dequantize_cpu(const TensorView& q, float inv_scale, const TensorView& out_f32) {
  check_device(q, Device::cpu, "dequantize_cpu input");
  check_device(out_f32, Device::cpu, "dequantize_cpu output");
  FP8LAB_CHECK_KIND(ErrorKind::dtype, is_fp8(q.dtype), "dequantize_cpu input must be fp8, got {}",
                    q.describe());
  check_dtype(out_f32, DType::f32, "dequantize_cpu output");
  check_shape(out_f32, q.shape, "dequantize_cpu output");
  const Fp8Format format = q.dtype == DType::e4m3 ? Fp8Format::e4m3 : Fp8Format::e5m2;
  std::array<float, 256> decoded;  // exact decode of every code, then one fp32 multiply each
  for (int c = 0; c < 256; ++c)
    decoded[static_cast<std::size_t>(c)] = fp8_to_float(static_cast<std::uint8_t>(c), format);
  const std::uint8_t* in = q.as<const std::uint8_t>();
  float* out = out_f32.as<float>();
  const std::int64_t n = q.numel();
#pragma omp parallel for schedule(static) if (n > 32768)
  for (std::int64_t i = 0; i < n; ++i) out[i] = decoded[in[i]] * inv_scale;
}

}  // namespace fp8lab
