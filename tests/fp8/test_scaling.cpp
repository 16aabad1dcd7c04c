// amax / quantize / quantize-transpose over format × shape (primes and a 4096² included), checked
// element by element against the exact converters of fp8_format.hpp (themselves held to the CUDA
// headers over all 2^32 inputs) and against counters computed independently here.
#include "common/test_data.hpp"
#include "fp8lab/fp8_scaling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

namespace fp8lab {
namespace {

using testing::fresh_seed;
using testing::poisoned;

// One Philox block per element (cheap enough for 4096²): a random sign and 24-bit significand
// over binades 2^-12 .. 2^3, so every FP8 binade and the subnormals are hit; ~4% exact zeros
// (never counted as underflow) and ~4% values 1e-12 times smaller (below half of either
// format's smallest subnormal after scaling: counted as underflow).
HostTensor mixed_input(DType dtype, Shape shape, std::uint64_t seed) {
  HostTensor x(dtype, shape);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const Philox4 r = philox_block(seed, 1, static_cast<std::uint64_t>(i));
    const float significand = 1.0f + static_cast<float>(r.v[0] >> 9) * (1.0f / 8388608.0f);
    const int exponent = static_cast<int>(r.v[1] % 16) - 12;
    float v = std::ldexp(significand, exponent) * ((r.v[2] & 1) ? -1.0f : 1.0f);
    const std::uint32_t kind = r.v[3] % 100;
    if (kind < 4)
      v = 0.0f;
    else if (kind < 8)
      v *= 1e-12f;
    if (dtype == DType::f32)
      x.as<float>()[i] = v;
    else
      x.as<std::uint16_t>()[i] = float_to_bf16(v);
  }
  return x;
}

float element(const TensorView& x, std::int64_t i) {
  return static_cast<float>(testing::element_as_double(x, i));
}

// Saturated, derived from the format's grid rather than from fp8_saturates(): y is saturated
// when round-to-nearest-even with an unbounded exponent would go past max. The next grid point
// above max is max + ulp(max); at that midpoint the tie goes to whichever code is even.
struct SaturationThreshold {
  double midpoint;
  bool tie_saturates;
  explicit SaturationThreshold(Fp8Format f) {
    const Fp8Spec s = fp8_spec(f);
    const double max = s.max_value;
    midpoint = max + std::ldexp(1.0, std::ilogb(max) - s.mantissa_bits) / 2;
    tie_saturates = (s.max_code & 1) != 0;  // max's code odd: the tie rounds up, past max
  }
  bool saturates(float y) const {
    const double a = std::fabs(static_cast<double>(y));
    return std::isfinite(a) && (a > midpoint || (a == midpoint && tie_saturates));
  }
};

CastCounts expected_counts(const TensorView& x, float scale, Fp8Format f) {
  const SaturationThreshold threshold(f);
  std::int64_t saturated = 0, underflow = 0;
#pragma omp parallel for schedule(static) reduction(+ : saturated, underflow)
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const float v = element(x, i), y = v * scale;
    saturated += threshold.saturates(y);
    underflow += v != 0.0f && fp8_to_float(float_to_fp8(y, f), f) == 0.0f;
  }
  return {saturated, underflow};
}

class ScalingOverShapes
    : public ::testing::TestWithParam<std::tuple<Fp8Format, std::int64_t, std::int64_t, DType>> {};

TEST_P(ScalingOverShapes, AmaxQuantizeAndQuantizeTransposeAgree) {
  // Plain variables, not a structured binding: the OpenMP loop below uses them, and clang
  // before 16 cannot capture a binding there.
  const Fp8Format format = std::get<0>(GetParam());
  const std::int64_t rows = std::get<1>(GetParam()), cols = std::get<2>(GetParam());
  const DType dtype = std::get<3>(GetParam());
  const std::uint64_t seed = fresh_seed();
  const HostTensor x = mixed_input(dtype, {rows, cols}, seed);

  double expected_amax = 0;
#pragma omp parallel for schedule(static) reduction(max : expected_amax)
  for (std::int64_t i = 0; i < x.numel(); ++i)
    expected_amax = std::max(expected_amax, std::fabs(static_cast<double>(element(x, i))));
  ASSERT_EQ(amax_cpu(x), static_cast<float>(expected_amax));
  const Fp8Scale s = current_scale_cpu(x, format, "x");
  const float expected_scale = s.amax == 0.0f ? 1.0f : fp8_spec(format).max_value / s.amax;
  ASSERT_EQ(s.scale, expected_scale);  // a 1x1 input may be an exact zero
  ASSERT_EQ(s.inv_scale, 1.0f / s.scale);

  // Current scale (nothing saturates by construction) and a scale 8x too large (many saturate).
  for (const float scale : {s.scale, 8.0f * s.scale}) {
    SCOPED_TRACE(::testing::Message() << "scale " << scale);
    HostTensor q = poisoned(fp8_dtype(format), {rows, cols});
    HostTensor q2 = poisoned(fp8_dtype(format), {rows, cols});
    HostTensor qt = poisoned(fp8_dtype(format), {cols, rows});
    HostTensor qt_plain = poisoned(fp8_dtype(format), {cols, rows});
    const CastCounts plain = quantize_cpu(x, scale, format, q);
    const CastCounts fused = quantize_transpose_cpu(x, scale, format, q2, qt);
    transpose_fp8_cpu(q, qt_plain);

    const CastCounts expected = expected_counts(x, scale, format);
    EXPECT_EQ(plain, expected) << "saturated/underflow of quantize_cpu";
    EXPECT_EQ(fused, expected) << "saturated/underflow of quantize_transpose_cpu";
    if (scale == s.scale) {
      EXPECT_EQ(plain.saturated, 0);
    }
    if (rows * cols >= 1000) {
      EXPECT_GT(plain.underflow, 0);  // the 1e-6 values
      EXPECT_TRUE(scale == s.scale || plain.saturated > 0);
    }

    std::int64_t mismatches = 0;
#pragma omp parallel for schedule(static) reduction(+ : mismatches)
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t i = r * cols + c;
        const std::uint8_t want = float_to_fp8(element(x, i) * scale, format);
        const std::uint8_t got = q.as<std::uint8_t>()[i];
        mismatches += got != want || q2.as<std::uint8_t>()[i] != want ||
                      qt.as<std::uint8_t>()[c * rows + r] != want;
      }
    }
    EXPECT_EQ(mismatches, 0);
    EXPECT_EQ(std::memcmp(qt.as<std::uint8_t>(), qt_plain.as<std::uint8_t>(), qt.nbytes()), 0)
        << "the one-pass transposed layout differs from transpose(quantize(x))";
  }
}

std::string shape_name(const ::testing::TestParamInfo<ScalingOverShapes::ParamType>& info) {
  const auto [format, rows, cols, dtype] = info.param;
  return std::string(format == Fp8Format::e4m3 ? "e4m3" : "e5m2") + "_" + std::to_string(rows) +
         "x" + std::to_string(cols) + "_from_" + std::string(dtype_name(dtype));
}

INSTANTIATE_TEST_SUITE_P(
    FormatByShape, ScalingOverShapes,
    ::testing::Combine(::testing::Values(Fp8Format::e4m3, Fp8Format::e5m2),
                       ::testing::Values(std::int64_t{1}, std::int64_t{37}, std::int64_t{1481}),
                       ::testing::Values(std::int64_t{1}, std::int64_t{61}, std::int64_t{3221},
                                         std::int64_t{677}),
                       ::testing::Values(DType::f32, DType::bf16)),
    shape_name);

INSTANTIATE_TEST_SUITE_P(Large, ScalingOverShapes,
                         ::testing::Combine(::testing::Values(Fp8Format::e4m3, Fp8Format::e5m2),
                                            ::testing::Values(std::int64_t{4096}),
                                            ::testing::Values(std::int64_t{4096}),
                                            ::testing::Values(DType::f32)),
                         shape_name);

}  // namespace
}  // namespace fp8lab
