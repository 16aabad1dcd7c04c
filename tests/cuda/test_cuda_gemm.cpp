// cuBLASLt GEMMs against the CPU reference GEMM (gemm_tn_cpu) with the same operands and scales.
//
// Bounds (relative Frobenius error against the CPU result, which accumulates in fp32): BF16 GEMMs
// differ only in summation order, so f32 outputs agree to ~1e-6 (bound 2e-5). Hopper's FP8 MMA
// adds products into partial sums with fewer than fp32's bits even with FAST_ACCUM off (measured
// on the H200: 1.0-1.2e-4 for f32 outputs at K = 400..4096, independent of K), bound 5e-4; fast
// accumulation, bound 5e-3. bf16 outputs add their own rounding (<= 2^-9 relative): 4e-3.
#if defined(FP8LAB_HAVE_CUDA)
#include <tuple>

#include "cuda_test_util.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "gemm/gemm.hpp"
#include "gemm/gemm_cuda.hpp"

namespace fp8lab {
namespace {

constexpr double kBoundF32 = 2e-5, kBoundFp8F32 = 5e-4, kBoundBf16 = 4e-3, kBoundFast = 5e-3;

struct Fp8Operand {
  HostTensor q;  // codes
  Fp8Scale scale;
};

Fp8Operand quantized(Shape shape, Fp8Format format, std::uint64_t seed, std::uint64_t stream) {
  const HostTensor x = testing::random_normal(DType::bf16, shape, seed, stream, 0.5f + stream);
  Fp8Operand op{HostTensor(fp8_dtype(format), shape), current_scale_cpu(x.view(), format, "x")};
  quantize_cpu(x.view(), op.scale.scale, format, op.q.view());
  return op;
}

// A device float holding a value (an inverse scale).
DeviceTensor device_scalar(float v) {
  HostTensor h(DType::f32, {1});
  h.as<float>()[0] = v;
  return to_device(h.view());
}

using Fp8GemmParam = std::tuple<std::int64_t, std::int64_t, std::int64_t, DType, DType, DType>;
class CudaFp8Gemm : public ::testing::TestWithParam<Fp8GemmParam> {};

TEST_P(CudaFp8Gemm, MatchesCpuReferenceWithinBounds) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [m, n, k, a_type, b_type, out_type] = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  const auto fmt_of = [](DType t) { return t == DType::e4m3 ? Fp8Format::e4m3 : Fp8Format::e5m2; };
  const Fp8Operand a = quantized({m, k}, fmt_of(a_type), seed, 1);
  const Fp8Operand b = quantized({n, k}, fmt_of(b_type), seed, 2);
  HostTensor want = testing::poisoned(out_type, {m, n});
  gemm_tn_cpu(a.q.view(), b.q.view(), want.view(), {a.scale.inv_scale, b.scale.inv_scale, false});

  CublasLtGemm gemm;
  const DeviceTensor da = to_device(a.q.view()), db = to_device(b.q.view());
  const DeviceTensor sa = device_scalar(a.scale.inv_scale), sb = device_scalar(b.scale.inv_scale);
  for (bool fast : {false, true}) {
    DeviceTensor out = testing::poisoned_device(out_type, {m, n});
    gemm.matmul({da.view(), true, sa.view().as<const float>()},
                {db.view(), true, sb.view().as<const float>()}, out.view(), {fast, false}, nullptr);
    const HostTensor got = to_host(out.view());
    const double err = testing::relative_frobenius(got.view(), want.view());
    const double bound = out_type == DType::bf16 ? kBoundBf16 : (fast ? kBoundFast : kBoundFp8F32);
    EXPECT_LT(err, bound) << (fast ? "fast" : "precise") << " accumulation, " << m << "x" << n
                          << "x" << k;
  }
  EXPECT_EQ(gemm.cached_plans(), 2u);  // one per accumulation mode
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaFp8Gemm,
    ::testing::Values(Fp8GemmParam{128, 256, 512, DType::e4m3, DType::e4m3, DType::bf16},
                      Fp8GemmParam{272, 144, 400, DType::e4m3, DType::e4m3, DType::f32},
                      Fp8GemmParam{16, 16, 16, DType::e4m3, DType::e4m3, DType::bf16},
                      Fp8GemmParam{512, 384, 1024, DType::e5m2, DType::e4m3, DType::bf16},
                      Fp8GemmParam{384, 512, 2048, DType::e5m2, DType::e4m3, DType::f32},
                      Fp8GemmParam{192, 96, 4096, DType::e4m3, DType::e5m2, DType::f32}));

TEST(CudaBf16Gemm, AllOperandLayoutsMatchCpuReference) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 200, n = 136, k = 328;
  const HostTensor a = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {n, k}, seed, 2);
  HostTensor a_t(DType::bf16, {k, m}), b_t(DType::bf16, {n, k});
  b_t = HostTensor(DType::bf16, {k, n});
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p)
      a_t.as<std::uint16_t>()[p * m + i] = a.as<std::uint16_t>()[i * k + p];
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t p = 0; p < k; ++p)
      b_t.as<std::uint16_t>()[p * n + j] = b.as<std::uint16_t>()[j * k + p];
  CublasLtGemm gemm;
  const DeviceTensor da = to_device(a.view()), db = to_device(b.view());
  const DeviceTensor dat = to_device(a_t.view()), dbt = to_device(b_t.view());
  for (DType out_type : {DType::bf16, DType::f32}) {
    HostTensor want = testing::poisoned(out_type, {m, n});
    gemm_tn_cpu(a.view(), b.view(), want.view());
    for (int layout = 0; layout < 4; ++layout) {
      const bool ak = layout & 1, bk = layout & 2;
      DeviceTensor out = testing::poisoned_device(out_type, {m, n});
      gemm.matmul({ak ? da.view() : dat.view(), ak}, {bk ? db.view() : dbt.view(), bk}, out.view(),
                  {}, nullptr);
      const double err = testing::relative_frobenius(to_host(out.view()).view(), want.view());
      EXPECT_LT(err, out_type == DType::bf16 ? kBoundBf16 : kBoundF32)
          << "layout a " << (ak ? "k-major" : "transposed") << ", b "
          << (bk ? "k-major" : "transposed");
    }
  }
}

TEST(CudaBf16Gemm, AccumulateAddsToF32Output) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 64, n = 48, k = 96;
  const HostTensor a = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {n, k}, seed, 2);
  const HostTensor c0 = testing::random_normal(DType::f32, {m, n}, seed, 3);
  HostTensor want(DType::f32, {m, n});
  std::memcpy(want.as<float>(), c0.as<float>(), c0.nbytes());
  gemm_tn_cpu(a.view(), b.view(), want.view(), {1.0f, 1.0f, true});
  CublasLtGemm gemm;
  const DeviceTensor da = to_device(a.view()), db = to_device(b.view());
  DeviceTensor out = to_device(c0.view());
  gemm.matmul({da.view(), true}, {db.view(), true}, out.view(), {.accumulate = true}, nullptr);
  EXPECT_LT(testing::relative_frobenius(to_host(out.view()).view(), want.view()), kBoundF32);
}

TEST(CudaGemmErrors, BadShapesDtypesLayoutsAndPointersAreNamed) {
  FP8LAB_SKIP_WITHOUT_GPU();
  DeviceArena arena(std::size_t{8} << 20);
  CublasLtGemm gemm;
  const float* s = static_cast<const float*>(arena.allocate(16, "scale"));
  const auto t = [&](DType d, std::int64_t r, std::int64_t c) {
    return arena.tensor(d, {r, c}, "t");
  };
  const auto expect_error = [](auto&& call, ErrorKind kind, const char* needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(
      [&] {
        gemm.matmul({t(DType::e4m3, 64, 24), true, s}, {t(DType::e4m3, 32, 24), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::shape, "K=24");
  expect_error(
      [&] {
        gemm.matmul({t(DType::e5m2, 64, 32), true, s}, {t(DType::e5m2, 32, 32), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::dtype, "e5m2 x e5m2");
  expect_error(
      [&] {
        gemm.matmul({t(DType::e4m3, 32, 64), false, s}, {t(DType::e4m3, 32, 32), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::shape, "K-major");
  expect_error(
      [&] {
        gemm.matmul({t(DType::e4m3, 64, 32), true, nullptr}, {t(DType::e4m3, 32, 32), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::invalid_argument, "inverse-scale");
  expect_error(
      [&] {
        gemm.matmul({t(DType::bf16, 64, 32), true}, {t(DType::e4m3, 32, 32), true, s},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::dtype, "both be bf16");
  expect_error(
      [&] {
        gemm.matmul({t(DType::bf16, 64, 32), true}, {t(DType::bf16, 32, 48), true},
                    t(DType::bf16, 64, 32), {}, nullptr);
      },
      ErrorKind::shape, "inner dimensions");
  const TensorView a = t(DType::e4m3, 64, 32);
  const TensorView misaligned{a.as<std::uint8_t>() + 8, DType::e4m3, {48, 32}, Device::cuda};
  expect_error(
      [&] {
        gemm.matmul({misaligned, true, s}, {t(DType::e4m3, 32, 32), true, s},
                    t(DType::bf16, 48, 32), {}, nullptr);
      },
      ErrorKind::invalid_argument, "16-byte aligned");
  EXPECT_EQ(gemm.cached_plans(), 0u);
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
