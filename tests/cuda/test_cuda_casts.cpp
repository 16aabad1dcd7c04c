// CUDA casts against the CPU reference: amax/scale bits, cast bytes and counts, transposes,
// the fused cast-transpose, the non-finite flag, and the hardware conversion probe.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "cuda_test_util.hpp"
#include "fp8lab/fp8_cuda.hpp"

namespace fp8lab {
namespace {

using testing::expect_same_bytes;
using testing::poisoned_device;

// Random normal values with a sprinkling of tiny values (underflow), exact zeros and wide
// magnitudes, so the counts and the rounding paths are exercised.
HostTensor cast_input(DType dtype, Shape shape, std::uint64_t seed, float stddev) {
  HostTensor x = testing::random_normal(dtype, shape, seed, 1, stddev);
  const std::int64_t n = x.numel();
  for (std::int64_t i = 0; i < n; i += 7) {
    // 1e-7 relative lands in e4m3's subnormals; 1e-12 underflows e5m2 too (min subnormal 2^-16).
    const float rel = i % 3 == 0 ? 1e-12f : 1e-7f;
    const float tiny = stddev * rel * static_cast<float>((i % 5) + 1) * (i % 2 ? -1.f : 1.f);
    const float v = i % 91 == 0 ? 0.0f : tiny;
    if (dtype == DType::f32)
      x.as<float>()[i] = v;
    else
      x.as<std::uint16_t>()[i] = float_to_bf16(v);
  }
  return x;
}

void expect_scale_equal(const Fp8Scale& got, const Fp8Scale& want, const char* what) {
  EXPECT_EQ(float_bits(got.amax), float_bits(want.amax))
      << what << " amax " << got.amax << " vs " << want.amax;
  EXPECT_EQ(float_bits(got.scale), float_bits(want.scale)) << what << " scale";
  EXPECT_EQ(float_bits(got.inv_scale), float_bits(want.inv_scale)) << what << " inv_scale";
}

using CastParam = std::tuple<std::int64_t, std::int64_t, DType, Fp8Format>;

class CudaCasts : public ::testing::TestWithParam<CastParam> {};

TEST_P(CudaCasts, BitExactAgainstCpuReference) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [rows, cols, dtype, format] = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  const float stddev = std::ldexp(1.0f, static_cast<int>(seed % 24) - 12);
  const HostTensor x = cast_input(dtype, {rows, cols}, seed, stddev);
  const Fp8Scale want = current_scale_cpu(x.view(), format, "x");
  HostTensor q(fp8_dtype(format), {rows, cols}), qt(fp8_dtype(format), {cols, rows});
  const CastCounts want_counts = quantize_cpu(x.view(), want.scale, format, q.view());
  transpose_fp8_cpu(q.view(), qt.view());

  DeviceArena arena(std::size_t{64} << 20);
  Fp8Meta* meta = alloc_fp8_meta(arena, 2, nullptr);
  const DeviceTensor dx = to_device(x.view());
  DeviceTensor dq = poisoned_device(fp8_dtype(format), {rows, cols});
  DeviceTensor dqt = poisoned_device(fp8_dtype(format), {cols, rows});
  DeviceTensor fq = poisoned_device(fp8_dtype(format), {rows, cols});
  DeviceTensor fqt = poisoned_device(fp8_dtype(format), {cols, rows});

  amax_scale_cuda(dx.view(), format, meta, nullptr);  // plain: amax, cast, transpose
  quantize_cuda(dx.view(), format, meta, dq.view(), nullptr);
  transpose_fp8_cuda(dq.view(), dqt.view(), nullptr);
  amax_scale_cuda(dx.view(), format, meta + 1, nullptr);  // fused: amax, cast-transpose
  quantize_transpose_cuda(dx.view(), format, meta + 1, fq.view(), fqt.view(), nullptr);
  const auto metas = read_fp8_meta(meta, 2, nullptr);

  for (const Fp8MetaHost& m : metas) {
    expect_scale_equal(m.scale, want, "device scale");
    EXPECT_FALSE(m.nonfinite);
    EXPECT_EQ(m.counts, want_counts)
        << "saturated " << m.counts.saturated << " underflow " << m.counts.underflow << " vs "
        << want_counts.saturated << ", " << want_counts.underflow;
  }
  EXPECT_GT(want_counts.underflow, 0) << "the input was built to underflow somewhere";
  expect_same_bytes(q.view(), dq.view(), "quantize_cuda");
  expect_same_bytes(qt.view(), dqt.view(), "transpose_fp8_cuda");
  expect_same_bytes(q.view(), fq.view(), "quantize_transpose_cuda q");
  expect_same_bytes(qt.view(), fqt.view(), "quantize_transpose_cuda qt");
}

// Prime shapes take the generic kernels; multiples of 16 the tiled ones, with partial tiles.
INSTANTIATE_TEST_SUITE_P(Shapes, CudaCasts,
                         ::testing::Combine(::testing::Values(1, 17, 1481, 272, 1024),
                                            ::testing::Values(3221, 677, 400, 512),
                                            ::testing::Values(DType::bf16, DType::f32),
                                            ::testing::Values(Fp8Format::e4m3, Fp8Format::e5m2)));

TEST(CudaCastsCounts, SaturationCountedWithAnOversizedScale) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  for (Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    const HostTensor x = cast_input(DType::bf16, {96, 160}, seed, 3.0f);
    const float scale = 4.0f * current_scale_cpu(x.view(), format, "x").scale;  // saturates
    HostTensor q(fp8_dtype(format), {96, 160});
    const CastCounts want = quantize_cpu(x.view(), scale, format, q.view());
    ASSERT_GT(want.saturated, 0);
    DeviceArena arena(std::size_t{1} << 20);
    Fp8Meta* meta = alloc_fp8_meta(arena, 1, nullptr);
    FP8LAB_CUDA_CHECK(cudaMemcpy(&meta->scale, &scale, sizeof(float), cudaMemcpyHostToDevice));
    const DeviceTensor dx = to_device(x.view());
    DeviceTensor dq = poisoned_device(fp8_dtype(format), {96, 160});
    DeviceTensor dqt = poisoned_device(fp8_dtype(format), {160, 96});
    quantize_transpose_cuda(dx.view(), format, meta, dq.view(), dqt.view(), nullptr);
    const auto m = read_fp8_meta(meta, 1, nullptr);
    EXPECT_EQ(m[0].counts, want);
    expect_same_bytes(q.view(), dq.view(), "saturating cast-transpose");
  }
}

// The hardware cast's two paths: 16-element chunks with NaN, ±inf or a saturating value
// take the per-element path, the rest count underflow from words. At a given scale, chunks of
// each kind side by side (and ±0, tiny and subnormal-landing values), both formats, bf16 and f32,
// the plain and the fused kernels: the CPU's bytes and counts.
TEST(CudaCastsEdges, SpecialValuesAtAGivenScaleMatchTheCpu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 1e30f, -7e4f,
                            500.0f, 0.0f, -0.0f, 1e-30f, -3e-6f};
  const std::int64_t rows = 128, cols = 256;
  for (DType dtype : {DType::bf16, DType::f32}) {
    for (Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
      HostTensor x = cast_input(dtype, {rows, cols}, seed, 1.0f);
      // One special value in every third chunk of 16, at a varying place in it.
      for (std::int64_t chunk = 0; chunk < rows * cols / 16; chunk += 3) {
        const std::int64_t i = chunk * 16 + (chunk * 7 + static_cast<std::int64_t>(seed % 16)) % 16;
        const float v = specials[(chunk / 3) % std::size(specials)];
        if (dtype == DType::f32)
          x.as<float>()[i] = v;
        else
          x.as<std::uint16_t>()[i] = float_to_bf16(v);
      }
      const float scale = 64.0f;  // |x| ~ 1 lands near e4m3's top; 500 and 7e4 saturate
      HostTensor q(fp8_dtype(format), {rows, cols}), qt(fp8_dtype(format), {cols, rows});
      const CastCounts want = quantize_cpu(x.view(), scale, format, q.view());
      transpose_fp8_cpu(q.view(), qt.view());
      ASSERT_GT(want.saturated, 0);
      ASSERT_GT(want.underflow, 0);
      DeviceArena arena(std::size_t{1} << 20);
      Fp8Meta* meta = alloc_fp8_meta(arena, 2, nullptr);
      for (int m = 0; m < 2; ++m)
        FP8LAB_CUDA_CHECK(
            cudaMemcpy(&meta[m].scale, &scale, sizeof(float), cudaMemcpyHostToDevice));
      const DeviceTensor dx = to_device(x.view());
      DeviceTensor dq = poisoned_device(fp8_dtype(format), {rows, cols});
      DeviceTensor fq = poisoned_device(fp8_dtype(format), {rows, cols});
      DeviceTensor fqt = poisoned_device(fp8_dtype(format), {cols, rows});
      quantize_cuda(dx.view(), format, meta, dq.view(), nullptr);
      quantize_transpose_cuda(dx.view(), format, meta + 1, fq.view(), fqt.view(), nullptr);
      const auto metas = read_fp8_meta(meta, 2, nullptr);
      const std::string what = std::string(dtype_name(dtype)) +
                               (format == Fp8Format::e4m3 ? " e4m3" : " e5m2");
      for (const Fp8MetaHost& m : metas) EXPECT_EQ(m.counts, want) << what;
      expect_same_bytes(q.view(), dq.view(), ("quantize_cuda " + what).c_str());
      expect_same_bytes(q.view(), fq.view(), ("quantize_transpose_cuda q " + what).c_str());
      expect_same_bytes(qt.view(), fqt.view(), ("quantize_transpose_cuda qt " + what).c_str());
    }
  }
}

TEST(CudaCastsEdges, NonFiniteInputRaisesTheFlagNotAHostSync) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  for (float special : specials) {
    HostTensor x = testing::random_normal(DType::bf16, {64, 48}, seed, 2);
    x.as<std::uint16_t>()[seed % 3072] = float_to_bf16(special);
    const float want_amax = amax_cpu(x.view());
    DeviceArena arena(std::size_t{1} << 20);
    Fp8Meta* meta = alloc_fp8_meta(arena, 1, nullptr);
    const DeviceTensor dx = to_device(x.view());
    amax_scale_cuda(dx.view(), Fp8Format::e4m3, meta, nullptr);
    const auto m = read_fp8_meta(meta, 1, nullptr);
    EXPECT_TRUE(m[0].nonfinite);
    EXPECT_EQ(std::isnan(m[0].scale.amax), std::isnan(want_amax));
    if (!std::isnan(want_amax)) {
      EXPECT_EQ(m[0].scale.amax, want_amax);
    }
    try {
      check_fp8_meta_finite(meta, {"blocks.3.mlp.x"}, 17, nullptr);
      ADD_FAILURE() << "no error for a non-finite amax";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::non_finite);
      EXPECT_NE(e.message().find("blocks.3.mlp.x"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("step 17"), std::string::npos) << e.what();
    }
  }
}

TEST(CudaCastsEdges, TinyAndZeroAmaxScalesMatchTheCpu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  for (float magnitude : {1e-38f, 3e-39f, 0.0f}) {
    HostTensor x(DType::f32, {8, 40});
    for (std::int64_t i = 0; i < x.numel(); ++i)
      x.as<float>()[i] = magnitude * static_cast<float>((seed + i) % 13) / 13.0f;
    DeviceArena arena(std::size_t{1} << 20);
    Fp8Meta* meta = alloc_fp8_meta(arena, 1, nullptr);
    const DeviceTensor dx = to_device(x.view());
    for (Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
      amax_scale_cuda(dx.view(), format, meta, nullptr);
      const auto m = read_fp8_meta(meta, 1, nullptr);
      expect_scale_equal(m[0].scale, current_scale_cpu(x.view(), format, "x"), "tiny amax");
    }
  }
}

TEST(CudaCastsEdges, MisalignedViewsTakeTheGenericPathWithTheSameBytes) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const HostTensor x = cast_input(DType::bf16, {64, 96}, seed, 1.0f);
  const Fp8Scale s = current_scale_cpu(x.view(), Fp8Format::e4m3, "x");
  HostTensor q(DType::e4m3, {64, 96}), qt(DType::e4m3, {96, 64});
  quantize_transpose_cpu(x.view(), s.scale, Fp8Format::e4m3, q.view(), qt.view());
  DeviceArena arena(std::size_t{4} << 20);
  Fp8Meta* meta = alloc_fp8_meta(arena, 1, nullptr);
  const DeviceTensor dx = to_device(x.view());
  auto* raw = static_cast<std::uint8_t*>(arena.allocate(2 * q.nbytes() + 2, "misaligned"));
  const TensorView dq{raw + 1, DType::e4m3, {64, 96}, Device::cuda};
  const TensorView dqt{raw + q.nbytes() + 2, DType::e4m3, {96, 64}, Device::cuda};
  amax_scale_cuda(dx.view(), Fp8Format::e4m3, meta, nullptr);
  quantize_transpose_cuda(dx.view(), Fp8Format::e4m3, meta, dq, dqt, nullptr);
  expect_same_bytes(q.view(), dq, "misaligned q");
  expect_same_bytes(qt.view(), dqt, "misaligned qt");
}

// CastMetaWork: the cast takes its scale from a producer's meta (`given`) and copies it into its
// own, and flags a non-finite amax, all inside its launch. The given scale is that of 2·x, half
// x's own, so bytes cast with the cast meta's (zero) scale or with x's own cannot pass.
TEST(CudaCastsMetaWork, GivenScaleIsCastWithCopiedAndItsNonFiniteFlagged) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  // A tiled shape, a generic one, and empty ones (the meta work alone).
  const Shape shapes[] = {{272, 512}, {17, 677}, {0, 512}, {48, 0}};
  for (const Shape& shape : shapes) {
    for (Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
      SCOPED_TRACE(::testing::Message() << "[" << shape[0] << ", " << shape[1] << "] "
                                        << (format == Fp8Format::e4m3 ? "e4m3" : "e5m2"));
      const std::int64_t rows = shape[0], cols = shape[1];
      const HostTensor x = cast_input(DType::bf16, shape, seed, 1.5f);
      HostTensor x2(DType::bf16, shape);
      for (std::int64_t i = 0; i < x2.numel(); ++i)
        x2.as<std::uint16_t>()[i] = float_to_bf16(2.0f * bf16_to_float(x.as<std::uint16_t>()[i]));
      const Fp8Scale given = current_scale_cpu(x2.view(), format, "2x");
      HostTensor q(fp8_dtype(format), shape), qt(fp8_dtype(format), {cols, rows});
      const CastCounts want_counts = quantize_cpu(x.view(), given.scale, format, q.view());
      transpose_fp8_cpu(q.view(), qt.view());

      DeviceArena arena(std::size_t{16} << 20);
      Fp8Meta* meta = alloc_fp8_meta(arena, 3, nullptr);  // [0] given, [1] plain, [2] fused
      auto* flag = static_cast<int*>(arena.allocate(sizeof(int), "first_nonfinite"));
      const int none = std::numeric_limits<int>::max();
      FP8LAB_CUDA_CHECK(cudaMemcpy(flag, &none, sizeof(int), cudaMemcpyHostToDevice));
      const DeviceTensor dx = to_device(x.view()), dx2 = to_device(x2.view());
      amax_scale_cuda(dx2.view(), format, meta, nullptr);  // the producer's slot
      DeviceTensor dq = poisoned_device(fp8_dtype(format), shape);
      DeviceTensor fq = poisoned_device(fp8_dtype(format), shape);
      DeviceTensor fqt = poisoned_device(fp8_dtype(format), {cols, rows});
      const CastMetaWork work{.given = meta, .first_nonfinite = flag, .nonfinite_id = 7};
      quantize_cuda(dx.view(), format, meta + 1, dq.view(), nullptr, work);
      quantize_transpose_cuda(dx.view(), format, meta + 2, fq.view(), fqt.view(), nullptr, work);
      const auto metas = read_fp8_meta(meta, 3, nullptr);
      for (int i = 1; i < 3; ++i) {
        expect_scale_equal(metas[i].scale, given, i == 1 ? "plain cast's copy" : "fused copy");
        EXPECT_FALSE(metas[i].nonfinite);
        EXPECT_EQ(metas[i].counts, want_counts);
      }
      expect_same_bytes(q.view(), dq.view(), "quantize_cuda with a given scale");
      expect_same_bytes(q.view(), fq.view(), "quantize_transpose_cuda q with a given scale");
      expect_same_bytes(qt.view(), fqt.view(), "quantize_transpose_cuda qt with a given scale");
      int got = 0;
      FP8LAB_CUDA_CHECK(cudaMemcpy(&got, flag, sizeof(int), cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, none) << "a finite amax raised the flag";

      // A NaN in the producer's tensor: flagged with the smallest id of the casts that saw it.
      if (x2.numel() == 0) continue;  // an empty producer has a finite amax
      HostTensor bad(DType::bf16, shape);
      std::memcpy(bad.as<std::uint16_t>(), x2.as<std::uint16_t>(), x2.nbytes());
      bad.as<std::uint16_t>()[0] = float_to_bf16(std::numeric_limits<float>::quiet_NaN());
      const DeviceTensor dbad = to_device(bad.view());
      amax_scale_cuda(dbad.view(), format, meta, nullptr);
      quantize_transpose_cuda(dx.view(), format, meta + 2, fq.view(), fqt.view(), nullptr,
                              {.given = meta, .first_nonfinite = flag, .nonfinite_id = 9});
      quantize_cuda(dx.view(), format, meta + 1, dq.view(), nullptr,
                    {.given = meta, .first_nonfinite = flag, .nonfinite_id = 4});
      quantize_transpose_cuda(dx.view(), format, meta + 2, fq.view(), fqt.view(), nullptr,
                              {.given = meta, .first_nonfinite = flag, .nonfinite_id = 6});
      FP8LAB_CUDA_CHECK(cudaMemcpy(&got, flag, sizeof(int), cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, 4);
      const auto flagged = read_fp8_meta(meta, 3, nullptr);
      EXPECT_TRUE(flagged[1].nonfinite);
      EXPECT_TRUE(flagged[2].nonfinite);
      EXPECT_TRUE(std::isnan(flagged[2].scale.amax));
    }
  }
}

TEST(CudaCastsEdges, BadArgumentsNameTheTensors) {
  FP8LAB_SKIP_WITHOUT_GPU();
  DeviceArena arena(std::size_t{1} << 20);
  Fp8Meta* meta = alloc_fp8_meta(arena, 1, nullptr);
  const TensorView x = arena.tensor(DType::bf16, {32, 48}, "x");
  const TensorView q_wrong_dtype = arena.tensor(DType::e5m2, {32, 48}, "q");
  const TensorView q = arena.tensor(DType::e4m3, {32, 48}, "q");
  const TensorView qt_wrong_shape = arena.tensor(DType::e4m3, {32, 48}, "qt");
  const TensorView x_i32 = arena.tensor(DType::i32, {32, 48}, "x");
  EXPECT_THROW(quantize_cuda(x, Fp8Format::e4m3, meta, q_wrong_dtype, nullptr), Error);
  EXPECT_THROW(quantize_transpose_cuda(x, Fp8Format::e4m3, meta, q, qt_wrong_shape, nullptr),
               Error);
  EXPECT_THROW(amax_scale_cuda(x_i32, Fp8Format::e4m3, meta, nullptr), Error);
  try {
    transpose_fp8_cuda(q, qt_wrong_shape, nullptr);
    ADD_FAILURE() << "no error for a transpose into the wrong shape";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::shape);
    EXPECT_NE(e.message().find("[48, 32]"), std::string::npos) << e.what();
  }
}

TEST(CudaConversion, HardwareCvtMatchesFloatToFp8OnAll2To32Patterns) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const Fp8CvtProbe p = probe_fp8_hw_conversion();
  EXPECT_EQ(p.mismatches_e4m3, 0u)
      << "first mismatching fp32 bits 0x" << std::hex << p.first_mismatch_bits;
  EXPECT_EQ(p.mismatches_e5m2, 0u)
      << "first mismatching fp32 bits 0x" << std::hex << p.first_mismatch_bits;
  std::printf("[fp8lab] hardware cvt.rn.satfinite used by the casts: %s\n",
              fp8_hw_conversion_exact() ? "yes" : "no (software float_to_fp8 fallback)");
}

}  // namespace
}  // namespace fp8lab

#else  // no CUDA backend in this build
#include <gtest/gtest.h>
TEST(CudaCasts, SkippedWithoutCudaBackend) {
  GTEST_SKIP()
      << "no CUDA GPU: fp8lab was built without the CUDA backend (FP8LAB_CUDA=OFF or no nvcc)";
}
#endif
