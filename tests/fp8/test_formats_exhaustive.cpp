// Every fp32 bit pattern (2^32 of them) through our E4M3, E5M2 and BF16 encoders, against the CUDA
// headers' host-side conversions: an independent implementation (it rounds through double).
#include "fp8lab/fp8_format.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#if FP8LAB_HAVE_CUDA_FP8_ORACLE
#include <cuda_bf16.h>
#include <cuda_fp8.h>

namespace fp8lab {
namespace {

std::uint8_t oracle_fp8(float x, Fp8Format f) {
  return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, f == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2);
}

float oracle_fp8_decode(std::uint8_t code, Fp8Format f) {
  __half_raw h = __nv_cvt_fp8_to_halfraw(code, f == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2);
  return __half2float(__half(h));
}

// Counts mismatches over all 2^32 inputs; reports the first one so a failure is actionable.
void expect_encoder_matches_oracle(Fp8Format f) {
  std::uint64_t mismatches = 0;
  std::uint32_t first_bad = 0;
#pragma omp parallel for schedule(static, 1 << 20) reduction(+ : mismatches)
  for (std::int64_t i = 0; i < (std::int64_t{1} << 32); ++i) {
    const float x = bits_float(static_cast<std::uint32_t>(i));
    if (float_to_fp8(x, f) != oracle_fp8(x, f)) {
      if (mismatches == 0) {
#pragma omp critical
        first_bad = static_cast<std::uint32_t>(i);
      }
      ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0u) << "e.g. fp32 bits 0x" << std::hex << first_bad << ": ours 0x"
                            << int(float_to_fp8(bits_float(first_bad), f)) << ", oracle 0x"
                            << int(oracle_fp8(bits_float(first_bad), f));
}

TEST(Fp8FormatExhaustive, E4M3EncodeMatchesCudaHeadersForAllFp32) {
  expect_encoder_matches_oracle(Fp8Format::e4m3);
}

TEST(Fp8FormatExhaustive, E5M2EncodeMatchesCudaHeadersForAllFp32) {
  expect_encoder_matches_oracle(Fp8Format::e5m2);
}

TEST(Fp8FormatExhaustive, DecodeMatchesCudaHeadersForAllCodes) {
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    for (int c = 0; c < 256; ++c) {
      const float ours = fp8_to_float(static_cast<std::uint8_t>(c), f);
      const float theirs = oracle_fp8_decode(static_cast<std::uint8_t>(c), f);
      if (std::isnan(theirs)) {
        EXPECT_TRUE(std::isnan(ours)) << "code " << c;
      } else {
        EXPECT_EQ(float_bits(ours), float_bits(theirs)) << "code " << c;
      }
    }
  }
}

TEST(Fp8FormatExhaustive, Bf16EncodeMatchesCudaHeadersForAllFp32) {
  std::uint64_t mismatches = 0;
#pragma omp parallel for schedule(static, 1 << 20) reduction(+ : mismatches)
  for (std::int64_t i = 0; i < (std::int64_t{1} << 32); ++i) {
    const float x = bits_float(static_cast<std::uint32_t>(i));
    const __nv_bfloat16 o = __float2bfloat16_rn(x);
    std::uint16_t theirs;
    std::memcpy(&theirs, &o, 2);
    mismatches += float_to_bf16(x) != theirs;
  }
  EXPECT_EQ(mismatches, 0u);
}

// Decoding then re-encoding every non-NaN, finite code is the identity.
TEST(Fp8FormatExhaustive, RoundTripOfEveryCode) {
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    for (int c = 0; c < 256; ++c) {
      const float v = fp8_to_float(static_cast<std::uint8_t>(c), f);
      if (std::isnan(v) || std::isinf(v)) continue;
      EXPECT_EQ(float_to_fp8(v, f), c) << "code " << c;
    }
  }
}

}  // namespace
}  // namespace fp8lab

#else
TEST(Fp8FormatExhaustive, NeedsCudaHeaders) {
  GTEST_SKIP() << "cuda_fp8.h not found: the exhaustive oracle comparison needs the CUDA headers";
}
#endif
