// Edge cases of tensorwise scaling and the casts: non-finite inputs, amax 0, tiny amax, signed
// zeros, dequantize, and argument checks at the API boundary.
#include "common/test_data.hpp"
#include "fp8lab/fp8_scaling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace fp8lab {
namespace {

using testing::fresh_seed;
using testing::poisoned;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected an fp8lab::Error";
  return ErrorKind::internal;
}

TEST(Amax, PropagatesNaNOverInfAndInfOverFinite) {
  HostTensor x = testing::random_normal(DType::f32, {129, 257}, fresh_seed(), 3);
  const std::int64_t at = random_u32(fresh_seed(), 0, 0) % x.numel();
  x.as<float>()[at] = -kInf;
  EXPECT_EQ(amax_cpu(x), kInf);
  x.as<float>()[(at + 17) % x.numel()] = kNaN;
  EXPECT_TRUE(std::isnan(amax_cpu(x)));
}

TEST(CurrentScale, NonFiniteInputIsAnErrorNamingTheTensorAndElement) {
  for (const float bad : {kNaN, kInf, -kInf}) {
    HostTensor x = testing::random_normal(DType::bf16, {64, 48}, fresh_seed(), 4);
    x.as<std::uint16_t>()[1234] = float_to_bf16(bad);
    try {
      current_scale_cpu(x, Fp8Format::e4m3, "blocks.3.mlp.fc.x");
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::non_finite);
      EXPECT_NE(std::string(e.what()).find("blocks.3.mlp.fc.x"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("index 1234"), std::string::npos) << e.what();
    }
    EXPECT_EQ(kind_of([&] { check_finite_cpu(x, "t"); }), ErrorKind::non_finite);
  }
}

TEST(CurrentScale, ZeroAmaxGivesUnitScaleAndZeroCodes) {
  HostTensor x(DType::f32, {3, 5});
  x.as<float>()[7] = -0.0f;  // the rest are +0
  const Fp8Scale s = current_scale_cpu(x, Fp8Format::e5m2, "zeros");
  EXPECT_EQ(s.amax, 0.0f);
  EXPECT_EQ(s.scale, 1.0f);
  EXPECT_EQ(s.inv_scale, 1.0f);
  HostTensor q = poisoned(DType::e5m2, {3, 5});
  EXPECT_EQ(quantize_cpu(x, s.scale, Fp8Format::e5m2, q), (CastCounts{0, 0}));
  for (std::int64_t i = 0; i < 15; ++i) EXPECT_EQ(q.as<std::uint8_t>()[i], i == 7 ? 0x80 : 0x00);
}

TEST(CurrentScale, TinyAmaxClampsTheScaleToTheLargestFloat) {
  const Fp8Scale s = scale_from_amax(1e-38f, Fp8Format::e4m3);  // 448 / 1e-38 overflows fp32
  EXPECT_EQ(s.scale, std::numeric_limits<float>::max());
  EXPECT_GT(s.inv_scale, 0.0f);
  const Fp8Scale ok = scale_from_amax(0.5f, Fp8Format::e4m3);
  EXPECT_EQ(ok.scale, 896.0f);
  EXPECT_EQ(ok.inv_scale, 1.0f / 896.0f);
}

TEST(Quantize, NegativeUnderflowKeepsItsSignAndIsCounted) {
  HostTensor x(DType::f32, {1, 4});
  float* p = x.as<float>();
  p[0] = 448.0f;                  // sets the scale to 1
  p[1] = -std::ldexp(1.0f, -11);  // a quarter of e4m3's smallest subnormal
  p[2] = std::ldexp(1.0f, -10);   // exactly half the smallest subnormal: ties to 0
  p[3] = std::ldexp(1.0f, -9);    // the smallest subnormal: kept
  const Fp8Scale s = current_scale_cpu(x, Fp8Format::e4m3, "x");
  ASSERT_EQ(s.scale, 1.0f);
  HostTensor q = poisoned(DType::e4m3, {1, 4});
  HostTensor qt = poisoned(DType::e4m3, {4, 1});
  EXPECT_EQ(quantize_transpose_cpu(x, s.scale, Fp8Format::e4m3, q, qt), (CastCounts{0, 2}));
  const std::uint8_t expected[4] = {0x7E, 0x80, 0x00, 0x01};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(q.as<std::uint8_t>()[i], expected[i]) << i;
    EXPECT_EQ(qt.as<std::uint8_t>()[i], expected[i]) << i;
  }
}

TEST(Dequantize, ExactDecodeTimesInverseScaleForEveryCode) {
  for (const Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    HostTensor q(fp8_dtype(f), {16, 16});
    for (int c = 0; c < 256; ++c) q.as<std::uint8_t>()[c] = static_cast<std::uint8_t>(c);
    HostTensor out = poisoned(DType::f32, {16, 16});
    const float inv = scale_from_amax(3.7f, f).inv_scale;
    dequantize_cpu(q, inv, out);
    for (int c = 0; c < 256; ++c) {
      const float want = fp8_to_float(static_cast<std::uint8_t>(c), f) * inv;
      const float got = out.as<float>()[c];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << c;
      } else {
        EXPECT_EQ(got, want) << c;
      }
    }
  }
}

TEST(Dequantize, RoundTripErrorIsWithinHalfAnUlpOfTheFormat) {
  const HostTensor x = testing::random_normal(DType::f32, {96, 80}, fresh_seed(), 5, 7.0f);
  for (const Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    const Fp8Scale s = current_scale_cpu(x, f, "x");
    HostTensor q = poisoned(fp8_dtype(f), {96, 80});
    HostTensor back = poisoned(DType::f32, {96, 80});
    quantize_cpu(x, s.scale, f, q);
    dequantize_cpu(q, s.inv_scale, back);
    const double half_ulp_rel = std::ldexp(1.0, -fp8_spec(f).mantissa_bits - 1);
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      const double v = x.as<float>()[i], r = back.as<float>()[i];
      const double normal_floor = std::ldexp(1.0, 1 - fp8_spec(f).bias) * s.inv_scale;
      if (std::fabs(v) >= normal_floor) {  // normal range: relative bound
        ASSERT_LE(std::fabs(r - v), half_ulp_rel * std::fabs(v) * (1 + 1e-6)) << i;
      }
    }
  }
}

TEST(CastArguments, WrongDtypesShapesAndScalesAreTypedErrors) {
  const HostTensor x = testing::random_normal(DType::f32, {8, 12}, fresh_seed(), 6);
  HostTensor q4(DType::e4m3, {8, 12}), q5(DType::e5m2, {8, 12}), qt4(DType::e4m3, {12, 8});
  HostTensor wrong_t(DType::e4m3, {8, 12}), ints(DType::i32, {8, 12}), x1d(DType::f32, {96});
  EXPECT_EQ(kind_of([&] { quantize_cpu(x, 1.f, Fp8Format::e4m3, q5); }), ErrorKind::dtype);
  EXPECT_EQ(kind_of([&] { quantize_cpu(ints, 1.f, Fp8Format::e4m3, q4); }), ErrorKind::dtype);
  EXPECT_EQ(kind_of([&] { quantize_cpu(x, 1.f, Fp8Format::e4m3, qt4); }), ErrorKind::shape);
  EXPECT_EQ(kind_of([&] { quantize_cpu(x, kNaN, Fp8Format::e4m3, q4); }),
            ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of([&] { quantize_cpu(x, 0.f, Fp8Format::e4m3, q4); }),
            ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of([&] { quantize_transpose_cpu(x, 1.f, Fp8Format::e4m3, q4, wrong_t); }),
            ErrorKind::shape);
  EXPECT_EQ(kind_of([&] { quantize_transpose_cpu(x1d, 1.f, Fp8Format::e4m3, q4, qt4); }),
            ErrorKind::shape);
  EXPECT_EQ(kind_of([&] { transpose_fp8_cpu(q4, q5); }), ErrorKind::dtype);
  EXPECT_EQ(kind_of([&] { amax_cpu(ints); }), ErrorKind::dtype);
}

}  // namespace
}  // namespace fp8lab
