// The grouped casts of the scaling recipes (fp8lab/fp8_grouped.hpp) against a brute-force
// oracle written from design.md §2 alone: every group's amax found by a plain loop, every byte
// float_to_fp8(x * fmax / amax). Shapes include primes and partial 128-groups.
#include "common/test_data.hpp"
#include "fp8lab/fp8_grouped.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

namespace fp8lab {
namespace {

using testing::error_of;
using testing::fresh_seed;
using testing::poisoned;

struct Brute {
  std::vector<std::uint8_t> codes;
  std::vector<float> inv;  // per element: the inverse scale of its group
};

// The oracle: groups of gr x gc values, scale = fmax / amax (1 for amax 0).
Brute brute_cast(const TensorView& x, Fp8Format format, std::int64_t gr, std::int64_t gc) {
  const std::int64_t rows = x.rows(), cols = x.cols();
  Brute b{std::vector<std::uint8_t>(static_cast<std::size_t>(rows * cols)),
          std::vector<float>(static_cast<std::size_t>(rows * cols))};
  for (std::int64_t r0 = 0; r0 < rows; r0 += gr)
    for (std::int64_t c0 = 0; c0 < cols; c0 += gc) {
      float amax = 0.0f;
      for (std::int64_t r = r0; r < std::min(rows, r0 + gr); ++r)
        for (std::int64_t c = c0; c < std::min(cols, c0 + gc); ++c)
          amax = std::max(amax, std::fabs(bf16_to_float(x.as<const std::uint16_t>()[r * cols + c])));
      const float scale = amax == 0.0f ? 1.0f : fp8_spec(format).max_value / amax;
      for (std::int64_t r = r0; r < std::min(rows, r0 + gr); ++r)
        for (std::int64_t c = c0; c < std::min(cols, c0 + gc); ++c) {
          const float v = bf16_to_float(x.as<const std::uint16_t>()[r * cols + c]);
          b.codes[static_cast<std::size_t>(r * cols + c)] = float_to_fp8(v * scale, format);
          b.inv[static_cast<std::size_t>(r * cols + c)] = 1.0f / scale;
        }
    }
  return b;
}

std::int64_t group_rows(ScaleMode m, std::int64_t rows) {
  return m == ScaleMode::tensor ? rows : m == ScaleMode::block128 ? 128 : 1;
}
std::int64_t group_cols(ScaleMode m, std::int64_t cols) {
  return m == ScaleMode::vec128 || m == ScaleMode::block128 ? 128 : cols;
}

// Rows of very different magnitudes (2^-12 .. 2^12), so every grouping picks other scales.
HostTensor ragged(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  HostTensor x = testing::random_normal(DType::bf16, {rows, cols}, seed, 1);
  auto* p = x.as<std::uint16_t>();
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const float f = std::ldexp(1.0f, static_cast<int>((r * 7 + c / 50) % 25) - 12);
      p[r * cols + c] = float_to_bf16(bf16_to_float(p[r * cols + c]) * f);
    }
  return x;
}

class GroupedCast
    : public ::testing::TestWithParam<std::tuple<ScaleMode, Fp8Format, std::int64_t, std::int64_t>> {
};

TEST_P(GroupedCast, EveryGroupIsCastWithItsOwnAmaxScale) {
  const auto [mode, format, rows, cols] = GetParam();
  const HostTensor x = ragged(rows, cols, fresh_seed());
  const ScaleLayout layout = scale_layout(mode, x);
  HostTensor q = poisoned(fp8_dtype(format), {rows, cols});
  HostTensor inv = poisoned(DType::f32, {layout.count()});
  const GroupedCastStats stats = quantize_grouped_cpu(x, format, mode, q, inv, "x");
  const Brute want = brute_cast(x, format, group_rows(mode, rows), group_cols(mode, cols));
  std::int64_t bad_codes = 0, bad_scales = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * cols + c);
      bad_codes += q.as<std::uint8_t>()[i] != want.codes[i];
      bad_scales += float_bits(inv.as<float>()[layout.index_of(r, c)]) != float_bits(want.inv[i]);
    }
  EXPECT_EQ(bad_codes, 0);
  EXPECT_EQ(bad_scales, 0);
  EXPECT_EQ(stats.groups, layout.row_groups() * layout.col_groups());
  float amax = 0.0f;
  for (std::int64_t i = 0; i < rows * cols; ++i)
    amax = std::max(amax, std::fabs(bf16_to_float(x.as<std::uint16_t>()[i])));
  EXPECT_EQ(stats.amax, amax);
  // The transposed cast is the cast of the transpose.
  HostTensor xt(DType::bf16, {cols, rows});
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      xt.as<std::uint16_t>()[c * rows + r] = x.as<std::uint16_t>()[r * cols + c];
  const ScaleLayout layout_t = scale_layout(mode, xt);
  HostTensor qt = poisoned(fp8_dtype(format), {cols, rows}), qt2 = poisoned(fp8_dtype(format), {cols, rows});
  HostTensor inv_t(DType::f32, {layout_t.count()}), inv_t2(DType::f32, {layout_t.count()});
  quantize_grouped_transposed_cpu(x, format, mode, qt, inv_t, "x");
  quantize_grouped_cpu(xt, format, mode, qt2, inv_t2, "x");
  EXPECT_EQ(std::memcmp(qt.as<void>(), qt2.as<void>(), qt.nbytes()), 0);
  EXPECT_EQ(std::memcmp(inv_t.as<void>(), inv_t2.as<void>(), inv_t.nbytes()), 0);
}

INSTANTIATE_TEST_SUITE_P(
    ModesAndShapes, GroupedCast,
    ::testing::Combine(::testing::Values(ScaleMode::tensor, ScaleMode::row, ScaleMode::vec128,
                                         ScaleMode::block128),
                       ::testing::Values(Fp8Format::e4m3, Fp8Format::e5m2),
                       ::testing::Values(1, 131, 256), ::testing::Values(3, 257, 384)));

TEST(GroupedCast, TensorModeIsTheTensorwiseCast) {
  const HostTensor x = testing::random_normal(DType::bf16, {37, 203}, fresh_seed(), 1);
  HostTensor q(DType::e4m3, {37, 203}), want(DType::e4m3, {37, 203}), inv(DType::f32, {1});
  const GroupedCastStats stats = quantize_grouped_cpu(x, Fp8Format::e4m3, ScaleMode::tensor, q, inv, "x");
  const Fp8Scale s = current_scale_cpu(x, Fp8Format::e4m3, "x");
  EXPECT_EQ(quantize_cpu(x, s.scale, Fp8Format::e4m3, want), stats.counts);
  EXPECT_EQ(std::memcmp(q.as<void>(), want.as<void>(), q.nbytes()), 0);
  EXPECT_EQ(float_bits(inv.as<float>()[0]), float_bits(s.inv_scale));
}

TEST(GroupedCast, BlocksGiveTheSameBytesInBothLayouts) {
  const HostTensor w = ragged(256, 384, fresh_seed());
  HostTensor q(DType::e4m3, {256, 384}), qt(DType::e4m3, {384, 256});
  HostTensor inv(DType::f32, {scale_layout(ScaleMode::block128, w).count()});
  HostTensor inv_t(DType::f32, {ScaleLayout{ScaleMode::block128, 384, 256}.count()});
  quantize_grouped_cpu(w, Fp8Format::e4m3, ScaleMode::block128, q, inv, "w");
  quantize_grouped_transposed_cpu(w, Fp8Format::e4m3, ScaleMode::block128, qt, inv_t, "w");
  HostTensor back(DType::e4m3, {256, 384});
  transpose_fp8_cpu(qt, back);
  EXPECT_EQ(std::memcmp(q.as<void>(), back.as<void>(), q.nbytes()), 0);
}

TEST(ScaleLayout, StoresScalesInCublasLtOrder) {
  // vec128: the rows of one column group are contiguous.
  const ScaleLayout v{ScaleMode::vec128, 5, 300};
  EXPECT_EQ(v.col_groups(), 3);
  EXPECT_EQ(v.count(), 15);
  EXPECT_EQ(v.index_of(4, 0), 4);
  EXPECT_EQ(v.index_of(0, 128), 5);
  EXPECT_EQ(v.index_of(2, 299), 12);
  // block128: row groups of column groups, the leading dimension padded to 4 floats.
  const ScaleLayout b{ScaleMode::block128, 300, 300};
  EXPECT_EQ(b.ld(), 4);
  EXPECT_EQ(b.count(), 12);
  EXPECT_EQ(b.index_of(129, 257), 6);
  const ScaleLayout r{ScaleMode::row, 7, 9};
  EXPECT_EQ(r.count(), 7);
  EXPECT_EQ(r.index_of(6, 8), 6);
  // Padding entries hold 1.
  const HostTensor w = testing::random_normal(DType::bf16, {300, 300}, fresh_seed(), 1);
  HostTensor q(DType::e4m3, {300, 300}), inv = poisoned(DType::f32, {b.count()});
  quantize_grouped_cpu(w, Fp8Format::e4m3, ScaleMode::block128, q, inv, "w");
  for (std::int64_t rg = 0; rg < 3; ++rg) EXPECT_EQ(inv.as<float>()[b.index(rg, 3)], 1.0f);
}

TEST(GroupedCast, FinerGroupsReconstructRaggedRowsBetter) {
  const HostTensor x = ragged(256, 512, fresh_seed());
  double err[4] = {};
  const ScaleMode modes[4] = {ScaleMode::tensor, ScaleMode::row, ScaleMode::vec128,
                              ScaleMode::block128};
  for (int i = 0; i < 4; ++i) {
    const ScaleLayout layout = scale_layout(modes[i], x);
    HostTensor q(DType::e4m3, {256, 512}), inv(DType::f32, {layout.count()}),
        back(DType::f32, {256, 512});
    quantize_grouped_cpu(x, Fp8Format::e4m3, modes[i], q, inv, "x");
    dequantize_grouped_cpu(q, modes[i], inv, back);
    HostTensor x32(DType::f32, {256, 512});
    for (std::int64_t j = 0; j < x.numel(); ++j)
      x32.as<float>()[j] = bf16_to_float(x.as<std::uint16_t>()[j]);
    err[i] = testing::relative_frobenius(back, x32);
  }
  std::fprintf(stderr, "[measured] ragged rows: tensor %.4f, row %.4f, vec128 %.4f, block %.4f\n",
               err[0], err[1], err[2], err[3]);
  EXPECT_LT(err[1], err[0]);  // a row's scale fits its magnitude
  EXPECT_LE(err[2], err[1]);  // a 1x128 tile's fits at least as well
  EXPECT_LT(err[2], 0.05);
}

TEST(GroupedCast, ANonFiniteGroupIsAnErrorNamingTheTensorAndTheGroup) {
  HostTensor x = testing::random_normal(DType::bf16, {256, 256}, fresh_seed(), 1);
  x.as<std::uint16_t>()[130 * 256 + 7] = 0x7FC0;  // NaN in row group 1 (block128)
  HostTensor q(DType::e4m3, {256, 256}), inv(DType::f32, {scale_layout(ScaleMode::block128, x).count()});
  const Error e = error_of([&] {
    quantize_grouped_cpu(x, Fp8Format::e4m3, ScaleMode::block128, q, inv, "blocks.0.mlp.fc.x");
  });
  EXPECT_EQ(e.kind(), ErrorKind::non_finite);
  EXPECT_NE(e.message().find("blocks.0.mlp.fc.x"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("row group 1, column group 0"), std::string::npos) << e.message();
}

TEST(GroupedCast, WrongScaleCountIsAShapeError) {
  const HostTensor x = testing::random_normal(DType::bf16, {16, 256}, fresh_seed(), 1);
  HostTensor q(DType::e4m3, {16, 256}), inv(DType::f32, {16});
  const Error e = error_of(
      [&] { quantize_grouped_cpu(x, Fp8Format::e4m3, ScaleMode::vec128, q, inv, "x"); });
  EXPECT_EQ(e.kind(), ErrorKind::shape);
  EXPECT_NE(e.message().find("32 floats"), std::string::npos) << e.message();
}

}  // namespace
}  // namespace fp8lab
