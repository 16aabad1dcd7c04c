// Hand-checked values of the formats: maxima, ties, subnormals, saturation, NaN.
#include "fp8lab/fp8_format.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace fp8lab {
namespace {

constexpr auto E4 = Fp8Format::e4m3;
constexpr auto E5 = Fp8Format::e5m2;

TEST(Fp8Format, MaximaAndSaturation) {
  EXPECT_EQ(float_to_fp8(448.f, E4), 0x7E);
  EXPECT_EQ(float_to_fp8(-448.f, E4), 0xFE);
  EXPECT_EQ(float_to_fp8(464.f, E4), 0x7E);   // tie between 448 and (unrepresentable) 480
  EXPECT_EQ(float_to_fp8(1e30f, E4), 0x7E);
  EXPECT_EQ(float_to_fp8(std::numeric_limits<float>::infinity(), E4), 0x7E);
  EXPECT_EQ(float_to_fp8(57344.f, E5), 0x7B);
  EXPECT_EQ(float_to_fp8(-std::numeric_limits<float>::infinity(), E5), 0xFB);
  EXPECT_EQ(fp8_to_float(0x7E, E4), 448.f);
  EXPECT_EQ(fp8_to_float(0x7B, E5), 57344.f);
  EXPECT_TRUE(std::isinf(fp8_to_float(0x7C, E5)));
}

TEST(Fp8Format, TiesRoundToEven) {
  // e4m3 near 1: spacing 1/8. 1 + 1/16 is a tie between 1 (even) and 1.125.
  EXPECT_EQ(fp8_to_float(float_to_fp8(1.0625f, E4), E4), 1.0f);
  EXPECT_EQ(fp8_to_float(float_to_fp8(1.1875f, E4), E4), 1.25f);  // tie 1.125|1.25 -> even 1.25
  EXPECT_EQ(fp8_to_float(float_to_fp8(1.0625001f, E4), E4), 1.125f);
}

TEST(Fp8Format, SubnormalsKeptAndUnderflowToSignedZero) {
  const float min_sub_e4 = std::ldexp(1.f, -9);
  EXPECT_EQ(float_to_fp8(min_sub_e4, E4), 0x01);
  EXPECT_EQ(float_to_fp8(min_sub_e4 * 0.5f, E4), 0x00);           // tie with 0 -> even (0)
  EXPECT_EQ(float_to_fp8(min_sub_e4 * 0.50001f, E4), 0x01);
  EXPECT_EQ(float_to_fp8(-min_sub_e4 * 0.25f, E4), 0x80);         // underflow keeps the sign
  EXPECT_EQ(float_to_fp8(std::ldexp(1.f, -16), E5), 0x01);
  EXPECT_EQ(fp8_to_float(0x07, E4), 7.f * min_sub_e4);
}

TEST(Fp8Format, NanIsCanonical) {
  EXPECT_EQ(float_to_fp8(std::nanf(""), E4), 0x7F);
  EXPECT_EQ(float_to_fp8(-std::nanf(""), E5), 0x7F);
  EXPECT_TRUE(std::isnan(fp8_to_float(0x7F, E4)));
  EXPECT_TRUE(std::isnan(fp8_to_float(0xFF, E4)));
  EXPECT_EQ(float_to_bf16(std::nanf("")), 0x7FFF);
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(bits_float(0x3F808000u)), 0x3F80);  // tie -> even
  EXPECT_EQ(float_to_bf16(bits_float(0x3F818000u)), 0x3F82);  // tie -> even (up)
  EXPECT_EQ(float_to_bf16(bits_float(0x3F808001u)), 0x3F81);
  EXPECT_EQ(round_to_bf16(3.0f), 3.0f);
}

}  // namespace
}  // namespace fp8lab
