#include "fp8lab/error.hpp"
#include "fp8lab/rng.hpp"
#include "core/carver.hpp"
#include "core/sha256.hpp"
#include "fp8lab/tensor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <vector>

namespace fp8lab {
namespace {

TEST(Error, CarriesExpressionFileLineAndMessage) {
  try {
    int rows = 3;
    FP8LAB_CHECK(rows % 16 == 0, "rows {} is not a multiple of 16", rows);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_EQ(e.message(), "rows 3 is not a multiple of 16");
    EXPECT_EQ(e.expression(), "rows % 16 == 0");
    EXPECT_NE(std::string(e.what()).find("test_core.cpp:"), std::string::npos);
  }
}

// A Carver without a base measures what the same carving takes from one with a base: every
// piece starts 256-byte aligned, in order, and tensorwise scales take nothing.
TEST(Carver, MeasuresWhatItLaterCarves) {
  const auto carve = [](Carver& c, TensorView& a, TensorView& b, TensorView& none, void*& raw) {
    a = c.tensor(DType::e4m3, {3, 5});  // 15 bytes
    none = c.scales(0);
    raw = c.take(300);
    b = c.tensor(DType::f32, {2, 64});  // 512 bytes
  };
  TensorView a, b, none;
  void* raw = nullptr;
  Carver measure(nullptr);
  carve(measure, a, b, none, raw);
  EXPECT_EQ(measure.used(), 256u + 512u + 512u);
  EXPECT_EQ(a.data, nullptr);
  EXPECT_EQ(Carver::size(0), 0u);
  EXPECT_EQ(Carver::size(257), 512u);
  std::vector<char> block(measure.used());
  Carver real(block.data());
  carve(real, a, b, none, raw);
  EXPECT_EQ(real.used(), measure.used());
  EXPECT_EQ(static_cast<char*>(a.data), block.data());
  EXPECT_EQ(static_cast<char*>(raw), block.data() + 256);
  EXPECT_EQ(static_cast<char*>(b.data), block.data() + 768);
  EXPECT_EQ(none.data, nullptr);
  EXPECT_EQ(b.device, Device::cuda);
  EXPECT_EQ(b.shape, (Shape{2, 64}));
}

TEST(Tensor, ShapeChecksNameTheShapes) {
  HostTensor t(DType::bf16, {1481, 677});
  EXPECT_EQ(t.numel(), 1481 * 677);
  EXPECT_EQ(t.nbytes(), 1481u * 677u * 2u);
  EXPECT_EQ(t.view().describe(), "bf16[1481, 677] on cpu");
  try {
    check_shape(t, {677, 1481}, "weight");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::shape);
    EXPECT_NE(e.message().find("[677, 1481]"), std::string::npos);
    EXPECT_NE(e.message().find("bf16[1481, 677]"), std::string::npos);
  }
  EXPECT_THROW(check_dtype(t, DType::f32, "x"), Error);
  EXPECT_THROW(parse_dtype("fp16"), Error);
  EXPECT_EQ(parse_dtype("e5m2"), DType::e5m2);
}

// Known-answer vector from the Random123 distribution (kat_vectors: philox4x32_10, pi digits).
TEST(Rng, Philox4x32_10KnownAnswer) {
  Philox4 ctr{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
  Philox4 out = philox4x32_10(ctr, 0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(out.v[0], 0xd16cfe09u);
  EXPECT_EQ(out.v[1], 0x94fdccebu);
  EXPECT_EQ(out.v[2], 0x5001e420u);
  EXPECT_EQ(out.v[3], 0x24126ea1u);
  Philox4 zero = philox4x32_10(Philox4{{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(zero.v[0], 0x6627e8d5u);
  EXPECT_EQ(zero.v[1], 0xe169c58du);
  EXPECT_EQ(zero.v[2], 0xbc57ac4cu);
  EXPECT_EQ(zero.v[3], 0x9b00dbd8u);
}

TEST(Rng, DependsOnlyOnSeedStreamIndex) {
  std::vector<float> a(1000), b(1000);
  fill_normal(a.data(), 1000, 42, stream_id("w"), 0.f, 1.f);
  for (int i = 999; i >= 0; --i) b[i] = random_normal(42, stream_id("w"), i);  // reverse order
  EXPECT_EQ(a, b);
  EXPECT_NE(random_normal(42, stream_id("w"), 0), random_normal(43, stream_id("w"), 0));
  EXPECT_NE(random_normal(42, stream_id("w"), 0), random_normal(42, stream_id("v"), 0));
}

TEST(Rng, NormalMomentsAndUniformRange) {
  const int n = 200000;
  std::vector<float> x(n);
  fill_normal(x.data(), n, 7, 1, 0.f, 1.f);
  double mean = 0, var = 0;
  for (float v : x) mean += v;
  mean /= n;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= n;
  EXPECT_NEAR(mean, 0.0, 0.01);  // 5 sigma of the sample mean is ~0.011
  EXPECT_NEAR(var, 1.0, 0.02);
  std::vector<float> u(n);
  fill_uniform(u.data(), n, 7, 2, -1.f, 1.f);
  for (float v : u) ASSERT_TRUE(v > -1.f && v < 1.f);
}

TEST(Sha256, KnownAnswersAndFiles) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto path = std::filesystem::temp_directory_path() / "fp8lab_sha_test.bin";
  { std::ofstream(path, std::ios::binary) << "abc"; }
  EXPECT_EQ(sha256_file(path), sha256_hex("abc"));
  std::filesystem::remove(path);
  EXPECT_THROW(sha256_file("/nonexistent/fp8lab"), Error);
  Sha256 inc;
  inc.update("a", 1);
  inc.update("bc", 2);
  EXPECT_EQ(inc.hex_digest(), sha256_hex("abc"));
}

}  // namespace
}  // namespace fp8lab
