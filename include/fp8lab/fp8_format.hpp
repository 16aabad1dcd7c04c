// The OCP FP8 formats and BF16: exact conversions shared by the CPU reference and CUDA kernels.
//
// fp32 -> fp8: round to nearest, ties to even; finite values beyond the format's maximum and
// infinities saturate to ±max (satfinite); NaN becomes the canonical NaN 0x7F; subnormals are
// kept; a result that rounds to zero keeps the input's sign (-tiny -> 0x80), as IEEE rounding and
// our oracle, the CUDA headers' host conversion (__nv_cvt_float_to_fp8, __NV_SATFINITE), do.
// The exhaustive test over all 2^32 fp32 bit patterns holds these functions to that oracle.
#pragma once

#include "fp8lab/hostdevice.hpp"

#include <cstdint>
#include <cstring>

namespace fp8lab {

enum class Fp8Format : std::uint8_t { e4m3, e5m2 };

struct Fp8Spec {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  std::uint8_t max_code;  // the largest finite magnitude's code (0x7E for e4m3, 0x7B for e5m2)
  float max_value;        // 448 or 57344
};

FP8LAB_HD constexpr Fp8Spec fp8_spec(Fp8Format f) {
  return f == Fp8Format::e4m3 ? Fp8Spec{4, 3, 7, 0x7E, 448.0f} : Fp8Spec{5, 2, 15, 0x7B, 57344.0f};
}

FP8LAB_HD std::uint32_t float_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

FP8LAB_HD float bits_float(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// Keeps `shift` low bits out of m, rounding to nearest with ties to even. shift in [1, 31].
FP8LAB_HD std::uint32_t shift_right_rne(std::uint32_t m, int shift) {
  std::uint32_t q = m >> shift;
  std::uint32_t rem = m & ((1u << shift) - 1u);
  std::uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return q;
}

FP8LAB_HD std::uint8_t float_to_fp8(float x, Fp8Format format) {
  const Fp8Spec s = fp8_spec(format);
  const std::uint32_t bits = float_bits(x);
  const std::uint32_t abs_bits = bits & 0x7FFFFFFFu;
  const std::uint8_t sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  if (abs_bits > 0x7F800000u) return 0x7F;                            // NaN -> canonical NaN
  if (abs_bits == 0x7F800000u) return sign | s.max_code;               // inf -> ±max (satfinite)
  const int exponent = static_cast<int>(abs_bits >> 23) - 127;         // unbiased fp32 exponent
  const int min_normal_exp = 1 - s.bias;
  const int max_exp = (1 << s.exponent_bits) - 1 - s.bias;             // may hold NaN/inf codes
  if (exponent > max_exp) return sign | s.max_code;                    // far beyond the range
  // fp32 subnormals (exponent -127) are far below every fp8 subnormal: they round to zero.
  const std::uint32_t mantissa = (abs_bits & 0x7FFFFFu) | 0x800000u;   // with the implicit bit
  std::uint32_t code;
  if (exponent >= min_normal_exp) {
    // Adding the rounded significand (implicit bit included) to the exponent field carries a
    // mantissa overflow into the exponent, which is exactly the rounding we want.
    code = (static_cast<std::uint32_t>(exponent - min_normal_exp) << s.mantissa_bits) +
           shift_right_rne(mantissa, 23 - s.mantissa_bits);
  } else {
    const int shift = 23 - s.mantissa_bits + (min_normal_exp - exponent);
    code = shift > 25 ? 0u : shift_right_rne(mantissa, shift);  // >25: below half the min subnormal
  }
  if (code > s.max_code) code = s.max_code;                           // satfinite
  return static_cast<std::uint8_t>(sign | code);
}

FP8LAB_HD float fp8_to_float(std::uint8_t code, Fp8Format format) {
  const Fp8Spec s = fp8_spec(format);
  const std::uint32_t sign = (static_cast<std::uint32_t>(code) & 0x80u) << 24;
  const int exp_field = (code & 0x7F) >> s.mantissa_bits;
  const std::uint32_t man = code & ((1u << s.mantissa_bits) - 1u);
  const int all_ones = (1 << s.exponent_bits) - 1;
  if (format == Fp8Format::e4m3 && exp_field == all_ones && man == (1u << s.mantissa_bits) - 1u)
    return bits_float(sign | 0x7FC00000u);  // e4m3 has one NaN per sign and no infinity
  if (format == Fp8Format::e5m2 && exp_field == all_ones)
    return bits_float(sign | (man ? 0x7FC00000u : 0x7F800000u));
  if (exp_field == 0) {
    // subnormal: man * 2^(1 - bias - mantissa_bits), exact in fp32
    const float magnitude = static_cast<float>(man) *
        bits_float(static_cast<std::uint32_t>(127 + 1 - s.bias - s.mantissa_bits) << 23);
    return bits_float(sign | float_bits(magnitude));
  }
  const std::uint32_t f32_exp = static_cast<std::uint32_t>(exp_field - s.bias + 127);
  return bits_float(sign | (f32_exp << 23) | (man << (23 - s.mantissa_bits)));
}

// True when |y| is beyond what round-to-nearest-even can bring back to ±max, i.e. the satfinite
// clamp changed the result: e4m3 |y| > 464 (464 ties to the even code 448), e5m2 |y| >= 61440
// (61440 ties to the even code, which is infinity). NaN and inf inputs are not counted here.
FP8LAB_HD bool fp8_saturates(float y, Fp8Format format) {
  const float a = y < 0 ? -y : y;
  return format == Fp8Format::e4m3 ? (a > 464.0f && a <= 3.4028235e38f)
                                   : (a >= 61440.0f && a <= 3.4028235e38f);
}

// BF16 storage is the upper half of an fp32; conversion rounds to nearest even. NaN becomes the
// canonical 0x7FFF (as the CUDA headers' host conversion does); infinities stay infinite.
FP8LAB_HD std::uint16_t float_to_bf16(float x) {
  std::uint32_t bits = float_bits(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

FP8LAB_HD float bf16_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }

// The value fp32 -> bf16 -> fp32, used wherever the reference mimics a BF16 tensor.
FP8LAB_HD float round_to_bf16(float x) { return bf16_to_float(float_to_bf16(x)); }

}  // namespace fp8lab
