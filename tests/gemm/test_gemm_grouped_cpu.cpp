// The CPU GEMM with grouped FP8 scales (src/gemm/gemm.hpp) against fp64 on the dequantized
// operands: sum_k (qa * sa) (qb * sb) is what every supported pair of scale modes means.
#include "common/test_data.hpp"
#include "fp8lab/fp8_grouped.hpp"
#include "gemm/gemm.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <tuple>

namespace fp8lab {
namespace {

using testing::error_of;
using testing::fresh_seed;

struct Operand {
  HostTensor q, inv, deq;
};

Operand cast(const HostTensor& x, Fp8Format format, ScaleMode mode) {
  const ScaleLayout layout = scale_layout(mode, x);
  Operand o{HostTensor(fp8_dtype(format), x.shape()), HostTensor(DType::f32, {layout.count()}),
            HostTensor(DType::f32, x.shape())};
  quantize_grouped_cpu(x, format, mode, o.q, o.inv, "operand");
  dequantize_grouped_cpu(o.q, mode, o.inv, o.deq);
  return o;
}

GemmOptions grouped(ScaleMode ma, const Operand& a, ScaleMode mb, const Operand& b) {
  GemmOptions o;
  o.inv_scale_a = a.inv.as<float>()[0];
  o.inv_scale_b = b.inv.as<float>()[0];
  o.scale_mode_a = ma;
  o.scale_mode_b = mb;
  if (ma != ScaleMode::tensor) o.inv_scales_a = a.inv.as<const float>();
  if (mb != ScaleMode::tensor) o.inv_scales_b = b.inv.as<const float>();
  return o;
}

class GroupedGemm
    : public ::testing::TestWithParam<std::tuple<ScaleMode, ScaleMode, Fp8Format, int, int, int>> {};

TEST_P(GroupedGemm, EqualsTheProductOfTheDequantizedOperands) {
  const auto [ma, mb, fa, m, n, k] = GetParam();
  const std::uint64_t seed = fresh_seed();
  const HostTensor x = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor w = testing::random_normal(DType::bf16, {n, k}, seed, 2, 0.05f);
  const Operand a = cast(x, fa, ma), b = cast(w, Fp8Format::e4m3, mb);
  HostTensor c(DType::f32, {m, n});
  gemm_tn_cpu(a.q, b.q, c, grouped(ma, a, mb, b));
  const std::vector<double> want =
      testing::gemm_tn_f64(testing::to_f64(a.deq), testing::to_f64(b.deq), m, n, k);
  const double err = testing::relative_frobenius(testing::to_f64(c), want);
  std::fprintf(stderr, "[measured] grouped gemm %s x %s %dx%dx%d: %.2e\n", scale_mode_name(ma),
               scale_mode_name(mb), m, n, k, err);
  EXPECT_LT(err, 1e-5);  // fp32 accumulation of exact products; a wrong scale gives ~1
  // Accumulate adds to C.
  HostTensor twice(DType::f32, {m, n});
  GemmOptions o = grouped(ma, a, mb, b);
  gemm_tn_cpu(a.q, b.q, twice, o);
  o.accumulate = true;
  gemm_tn_cpu(a.q, b.q, twice, o);
  for (std::int64_t i = 0; i < m * n; ++i)
    ASSERT_EQ(twice.as<float>()[i], c.as<float>()[i] + c.as<float>()[i]);
}

INSTANTIATE_TEST_SUITE_P(
    SupportedPairs, GroupedGemm,
    ::testing::Values(
        std::make_tuple(ScaleMode::tensor, ScaleMode::tensor, Fp8Format::e4m3, 48, 32, 80),
        std::make_tuple(ScaleMode::row, ScaleMode::row, Fp8Format::e4m3, 48, 32, 80),
        std::make_tuple(ScaleMode::row, ScaleMode::row, Fp8Format::e5m2, 64, 112, 48),
        std::make_tuple(ScaleMode::vec128, ScaleMode::vec128, Fp8Format::e4m3, 32, 48, 384),
        std::make_tuple(ScaleMode::vec128, ScaleMode::vec128, Fp8Format::e5m2, 16, 64, 256),
        std::make_tuple(ScaleMode::vec128, ScaleMode::block128, Fp8Format::e4m3, 48, 256, 384),
        std::make_tuple(ScaleMode::vec128, ScaleMode::block128, Fp8Format::e5m2, 32, 128, 256)));

TEST(GroupedGemm, UnsupportedPairsAndPartialGroupsAreErrors) {
  const HostTensor x = testing::random_normal(DType::bf16, {32, 256}, fresh_seed(), 1);
  const HostTensor w = testing::random_normal(DType::bf16, {128, 256}, fresh_seed(), 2);
  const Operand a = cast(x, Fp8Format::e4m3, ScaleMode::row);
  const Operand b = cast(w, Fp8Format::e4m3, ScaleMode::block128);
  HostTensor c(DType::f32, {32, 128});
  Error e = error_of([&] { gemm_tn_cpu(a.q, b.q, c, grouped(ScaleMode::row, a, ScaleMode::block128, b)); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  EXPECT_NE(e.message().find("not a supported pair"), std::string::npos) << e.message();
  // 128-wide groups need whole groups along K.
  const HostTensor x2 = testing::random_normal(DType::bf16, {32, 208}, fresh_seed(), 3);
  const HostTensor w2 = testing::random_normal(DType::bf16, {32, 208}, fresh_seed(), 4);
  const Operand a2 = cast(x2, Fp8Format::e4m3, ScaleMode::vec128);
  const Operand b2 = cast(w2, Fp8Format::e4m3, ScaleMode::vec128);
  HostTensor c2(DType::f32, {32, 32});
  e = error_of([&] {
    gemm_tn_cpu(a2.q, b2.q, c2, grouped(ScaleMode::vec128, a2, ScaleMode::vec128, b2));
  });
  EXPECT_EQ(e.kind(), ErrorKind::shape);
  EXPECT_NE(e.message().find("K=208"), std::string::npos) << e.message();
  // A grouped mode without its scales.
  GemmOptions o;
  o.scale_mode_a = o.scale_mode_b = ScaleMode::row;
  e = error_of([&] { gemm_tn_cpu(a.q, a.q, HostTensor(DType::f32, {32, 32}), o); });
  EXPECT_NE(e.message().find("inverse-scale arrays"), std::string::npos) << e.message();
}

}  // namespace
}  // namespace fp8lab
