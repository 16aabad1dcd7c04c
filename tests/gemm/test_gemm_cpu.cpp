// The CPU reference GEMM: bf16 and fp8 semantics against fp64 with a rigorous fp32-accumulation
// bound, exact agreement between the fp8 epilogue and "sgemm on decoded codes, times the scales",
// bf16 output = round-to-nearest-even of the f32 output, and the argument checks.
#include "common/test_data.hpp"
#include "fp8lab/fp8_scaling.hpp"
#include "gemm/gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>

namespace fp8lab {
namespace {

using testing::error_of;

using testing::fresh_seed;
using testing::poisoned;
using testing::to_f64;

// |fl(sum a_i b_i) - sum a_i b_i| <= gamma_K * sum |a_i b_i|, gamma_K = K u / (1 - K u), u = 2^-24,
// for any summation order (Higham, Accuracy and Stability, §3.1): a bound, not a tolerance.
void expect_within_fp32_accumulation_bound(const TensorView& c, const std::vector<double>& a,
                                           const std::vector<double>& b, std::int64_t m,
                                           std::int64_t n, std::int64_t k, double alpha) {
  const double u = std::ldexp(1.0, -24), gamma = (k + 1) * u / (1 - (k + 1) * u);
  std::vector<double> abs_a(a.size()), abs_b(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) abs_a[i] = std::fabs(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) abs_b[i] = std::fabs(b[i]);
  const std::vector<double> exact = testing::gemm_tn_f64(a, b, m, n, k);
  const std::vector<double> magnitude = testing::gemm_tn_f64(abs_a, abs_b, m, n, k);
  const std::vector<double> got = to_f64(c);
  std::int64_t violations = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    // gamma covers the K products and sums plus the final multiply by alpha.
    violations +=
        !(std::fabs(got[i] - alpha * exact[i]) <= gamma * std::fabs(alpha) * magnitude[i]);
  }
  EXPECT_EQ(violations, 0);
}

class GemmShapes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(GemmShapes, Bf16SemanticsMatchFp64WithinTheFp32AccumulationBound) {
  const auto [m, n, k] = GetParam();
  const std::uint64_t seed = fresh_seed();
  const HostTensor a = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {n, k}, seed, 2);
  HostTensor c32 = poisoned(DType::f32, {m, n});
  HostTensor c16 = poisoned(DType::bf16, {m, n});
  gemm_tn_cpu(a, b, c32);
  gemm_tn_cpu(a, b, c16);
  expect_within_fp32_accumulation_bound(c32, to_f64(a), to_f64(b), m, n, k, 1.0);
  std::int64_t mismatches = 0;
  for (std::int64_t i = 0; i < std::int64_t{m} * n; ++i)
    mismatches += c16.as<std::uint16_t>()[i] != float_to_bf16(c32.as<float>()[i]);
  EXPECT_EQ(mismatches, 0) << "bf16 output must be the f32 result rounded to nearest even";
}

INSTANTIATE_TEST_SUITE_P(PrimesAndEdges, GemmShapes,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(37, 61, 53),
                                           std::make_tuple(1, 3221, 7),
                                           std::make_tuple(129, 67, 677),
                                           std::make_tuple(64, 48, 0)));

class Fp8GemmFormats : public ::testing::TestWithParam<std::tuple<Fp8Format, Fp8Format>> {};

TEST_P(Fp8GemmFormats, DecodedCodesTimesInverseScalesAccumulatedInFp32) {
  const auto [fa, fb] = GetParam();
  const std::int64_t m = 48, n = 80, k = 272;
  const std::uint64_t seed = fresh_seed();
  const HostTensor xa = testing::random_normal(DType::f32, {m, k}, seed, 1, 2.0f);
  const HostTensor xb = testing::random_normal(DType::f32, {n, k}, seed, 2, 0.02f);
  const Fp8Scale sa = current_scale_cpu(xa, fa, "a"), sb = current_scale_cpu(xb, fb, "b");
  HostTensor qa(fp8_dtype(fa), {m, k}), qb(fp8_dtype(fb), {n, k});
  quantize_cpu(xa, sa.scale, fa, qa);
  quantize_cpu(xb, sb.scale, fb, qb);
  const GemmOptions scales{sa.inv_scale, sb.inv_scale, false};
  HostTensor c32 = poisoned(DType::f32, {m, n}), c16 = poisoned(DType::bf16, {m, n});
  gemm_tn_cpu(qa, qb, c32, scales);
  gemm_tn_cpu(qa, qb, c16, scales);

  // The same accumulation on the exactly decoded (unscaled) codes, then the fp32 epilogue.
  HostTensor da(DType::f32, {m, k}), db(DType::f32, {n, k}), acc = poisoned(DType::f32, {m, n});
  dequantize_cpu(qa, 1.0f, da);
  dequantize_cpu(qb, 1.0f, db);
  gemm_tn_cpu(da, db, acc);
  const float alpha = sa.inv_scale * sb.inv_scale;
  std::int64_t mismatches = 0;
  for (std::int64_t i = 0; i < m * n; ++i) {
    const float want = acc.as<float>()[i] * alpha;
    mismatches += c32.as<float>()[i] != want || c16.as<std::uint16_t>()[i] != float_to_bf16(want);
  }
  EXPECT_EQ(mismatches, 0);
  expect_within_fp32_accumulation_bound(c32, to_f64(da), to_f64(db), m, n, k, alpha);
}

INSTANTIATE_TEST_SUITE_P(SupportedPairs, Fp8GemmFormats,
                         ::testing::Values(std::make_tuple(Fp8Format::e4m3, Fp8Format::e4m3),
                                           std::make_tuple(Fp8Format::e5m2, Fp8Format::e4m3),
                                           std::make_tuple(Fp8Format::e4m3, Fp8Format::e5m2)));

TEST(GemmAccumulate, AddsTheProductToAnExistingF32Result) {
  const std::uint64_t seed = fresh_seed();
  const HostTensor a = testing::random_normal(DType::bf16, {19, 33}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {23, 33}, seed, 2);
  const HostTensor c0 = testing::random_normal(DType::f32, {19, 23}, seed, 3);
  HostTensor product = poisoned(DType::f32, {19, 23}), c(DType::f32, {19, 23});
  std::memcpy(c.as<float>(), c0.as<float>(), c.nbytes());
  gemm_tn_cpu(a, b, product);
  gemm_tn_cpu(a, b, c, {1.0f, 1.0f, true});
  for (std::int64_t i = 0; i < c.numel(); ++i)
    ASSERT_EQ(c.as<float>()[i], c0.as<float>()[i] + product.as<float>()[i]) << i;
}

TEST(GemmArguments, Fp8ShapesNotMultiplesOf16AreRejectedNamingTheShapes) {
  for (const auto& [m, n, k] :
       {std::make_tuple(17, 16, 32), std::make_tuple(16, 40, 32), std::make_tuple(32, 16, 24)}) {
    HostTensor a(DType::e4m3, {m, k}), b(DType::e4m3, {n, k}), c(DType::bf16, {m, n});
    const Error e = error_of([&] { gemm_tn_cpu(a, b, c, {1.0f, 1.0f, false}); });
    EXPECT_EQ(e.kind(), ErrorKind::shape);
    const std::string what = e.what();
    EXPECT_NE(what.find(fmt::format("e4m3[{}, {}]", m, k)), std::string::npos) << what;
    EXPECT_NE(what.find(fmt::format("M={}, N={}, K={}", m, n, k)), std::string::npos) << what;
    EXPECT_NE(what.find("multiples of 16"), std::string::npos) << what;
  }
}

TEST(GemmArguments, MismatchedShapesAndUnsupportedDtypesAreTypedErrors) {
  HostTensor a(DType::bf16, {16, 32}), b(DType::bf16, {16, 48}), b_ok(DType::bf16, {16, 32});
  HostTensor c(DType::f32, {16, 16}), c_bad(DType::f32, {16, 17}), c16(DType::bf16, {16, 16});
  HostTensor f(DType::f32, {16, 32}), e5a(DType::e5m2, {16, 32}), e5b(DType::e5m2, {16, 32});
  HostTensor ints(DType::i32, {16, 16});
  EXPECT_EQ(error_of([&] { gemm_tn_cpu(a, b, c); }).kind(), ErrorKind::shape);
  EXPECT_EQ(error_of([&] { gemm_tn_cpu(a, b_ok, c_bad); }).kind(), ErrorKind::shape);
  EXPECT_EQ(error_of([&] { gemm_tn_cpu(a, f, c); }).kind(), ErrorKind::dtype);
  EXPECT_EQ(error_of([&] { gemm_tn_cpu(e5a, e5b, c); }).kind(), ErrorKind::dtype);
  EXPECT_EQ(error_of([&] { gemm_tn_cpu(a, b_ok, ints); }).kind(), ErrorKind::dtype);
}

// Accumulating into a bf16 C (a bf16 weight gradient) is cuBLASLt's beta = 1 epilogue: the old
// value widened, the fp32 product added, the sum rounded once.
TEST(GemmCpu, AccumulateIntoBf16RoundsTheSumOnce) {
  const std::uint64_t seed = testing::fresh_seed();
  const HostTensor a = testing::random_normal(DType::bf16, {16, 32}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {24, 32}, seed, 2);
  const HostTensor c0 = testing::random_normal(DType::bf16, {16, 24}, seed, 3);
  HostTensor product(DType::f32, {16, 24}), c16(DType::bf16, {16, 24});
  gemm_tn_cpu(a, b, product);
  std::memcpy(c16.as<std::uint16_t>(), c0.as<std::uint16_t>(), c0.nbytes());
  gemm_tn_cpu(a, b, c16, {1.0f, 1.0f, true});
  for (std::int64_t i = 0; i < c16.numel(); ++i)
    ASSERT_EQ(c16.as<std::uint16_t>()[i],
              float_to_bf16(bf16_to_float(c0.as<std::uint16_t>()[i]) + product.as<float>()[i]))
        << i;
}

}  // namespace
}  // namespace fp8lab
