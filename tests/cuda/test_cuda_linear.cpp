// The CUDA linear layer: fp8-fused == fp8-plain to the bit, CUDA vs the CPU reference layer,
// backward reading only the forward's saved operands, and the step-boundary non-finite check.
//
// Bounds against the CPU layer (relative Frobenius): the FP8 casts are bit-identical (checked),
// so y, dX and dW differ only by the GEMMs' accumulation and the final rounding: 4e-3 for bf16
// outputs (y, dX); f32 dW 2e-5 in bf16 mode, 5e-4 in the fp8 modes (Hopper's FP8 MMA partial
// sums carry fewer bits than fp32: ~1e-4 measured, see test_cuda_gemm.cpp).
#if defined(FP8LAB_HAVE_CUDA)
#include <tuple>

#include "cuda_test_util.hpp"
#include "gemm/gemm_cuda.hpp"
#include "fp8lab/linear_cuda.hpp"

namespace fp8lab {
namespace {

using testing::expect_same_bytes;

constexpr double kBoundBf16 = 4e-3, kBoundF32 = 2e-5, kBoundFp8F32 = 5e-4;

struct LinearInputs {
  HostTensor x, w, dy;
  LinearInputs(std::int64_t m, std::int64_t k, std::int64_t n, std::uint64_t seed)
      : x(testing::random_normal(DType::bf16, {m, k}, seed, 1, 1.0f)),
        w(testing::random_normal(DType::bf16, {n, k}, seed, 2, 0.05f)),
        dy(testing::random_normal(DType::bf16, {m, n}, seed, 3, 1e-3f)) {}
};

struct LinearRunCuda {
  DeviceArena arena{std::size_t{1} << 30};
  CublasLtGemm gemm;
  LinearCudaConfig config;
  DeviceTensor x, w, dy, y, dx, dw;
  LinearSavedCuda saved;
  LinearScratch scratch;

  LinearRunCuda(LinearCudaMode mode, const LinearInputs& in)
      : x(to_device(in.x.view())), w(to_device(in.w.view())), dy(to_device(in.dy.view())) {
    config.mode = mode;
    config.name = "blocks.0.mlp.fc";
    const std::int64_t m = in.x.shape()[0], k = in.x.shape()[1], n = in.w.shape()[0];
    y = testing::poisoned_device(DType::bf16, {m, n});
    dx = testing::poisoned_device(DType::bf16, {m, k});
    dw = testing::poisoned_device(DType::f32, {n, k});
    saved = alloc_linear_saved_cuda(arena, mode, m, k, n, nullptr);
    scratch = alloc_linear_scratch_cuda(arena, mode, m, n);
  }
  void forward() {
    linear_forward_cuda(gemm, config, x.view(), w.view(), y.view(), saved, nullptr);
  }
  void backward() {
    linear_backward_cuda(gemm, config, saved, dy.view(), dx.view(), dw.view(), scratch, false,
                         nullptr);
  }
};

std::uint64_t mismatches(const DeviceTensor& a, const DeviceTensor& b) {
  return count_byte_mismatches_cuda(a.view(), b.view(), nullptr);
}

using Shape3 = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // M, K (in), N (out)
class CudaLinearBenchShapes : public ::testing::TestWithParam<Shape3> {};

// The four benchmark shapes (fewer tokens than the benchmark's 131072, same layer shapes).
TEST_P(CudaLinearBenchShapes, FusedAndPlainGiveIdenticalBytes) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [m, k, n] = GetParam();
  const LinearInputs in(m, k, n, testing::fresh_seed());
  LinearRunCuda plain(LinearCudaMode::fp8_plain, in), fused(LinearCudaMode::fp8_fused, in);
  LinearCudaOverlap overlap;
  fused.config.overlap = &overlap;  // W cast on a second stream: must not change a byte
  for (LinearRunCuda* run : {&plain, &fused}) {
    run->forward();
    run->backward();
    linear_check_finite_cuda(run->config, run->saved, 0, nullptr);
  }
  EXPECT_EQ(mismatches(plain.y, fused.y), 0u) << "y";
  EXPECT_EQ(mismatches(plain.dx, fused.dx), 0u) << "dX";
  EXPECT_EQ(mismatches(plain.dw, fused.dw), 0u) << "dW";
  EXPECT_EQ(count_byte_mismatches_cuda(plain.saved.xq_t, fused.saved.xq_t, nullptr), 0u);
  EXPECT_EQ(count_byte_mismatches_cuda(plain.scratch.dyq_t, fused.scratch.dyq_t, nullptr), 0u);
  const HostTensor y = to_host(fused.y.view());
  EXPECT_TRUE(testing::relative_frobenius(y.view(), y.view()) == 0.0) << "y holds NaN (unwritten?)";
}

INSTANTIATE_TEST_SUITE_P(Bench, CudaLinearBenchShapes,
                         ::testing::Values(Shape3{4096, 512, 512}, Shape3{4096, 512, 2048},
                                           Shape3{4096, 2048, 512}, Shape3{2048, 512, 8192}));

class CudaLinearVsCpu : public ::testing::TestWithParam<std::tuple<LinearCudaMode, Shape3>> {};

TEST_P(CudaLinearVsCpu, MatchesTheCpuLayerWithinBounds) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [mode, shape] = GetParam();
  const auto [m, k, n] = shape;
  const LinearInputs in(m, k, n, testing::fresh_seed());
  const LinearPrecision precision = linear_cuda_precision(mode);
  LinearConfig cpu_config;
  cpu_config.precision = precision;
  LinearSavedHost saved(precision, m, k, n);
  LinearScratchHost scratch(precision, m, n);
  HostTensor y = testing::poisoned(DType::bf16, {m, n}),
             dx = testing::poisoned(DType::bf16, {m, k});
  HostTensor dw = testing::poisoned(DType::f32, {n, k});
  linear_forward_cpu(cpu_config, in.x.view(), in.w.view(), y.view(), saved.saved);
  const LinearBackwardStats stats = linear_backward_cpu(cpu_config, saved.saved, in.dy.view(),
                                                        dx.view(), dw.view(), scratch.scratch);

  LinearRunCuda run(mode, in);
  run.forward();
  run.backward();
  EXPECT_LT(testing::relative_frobenius(to_host(run.y.view()).view(), y.view()), kBoundBf16) << "y";
  EXPECT_LT(testing::relative_frobenius(to_host(run.dx.view()).view(), dx.view()), kBoundBf16)
      << "dX";
  EXPECT_LT(testing::relative_frobenius(to_host(run.dw.view()).view(), dw.view()),
            precision == LinearPrecision::fp8 ? kBoundFp8F32 : kBoundF32)
      << "dW";
  if (precision != LinearPrecision::fp8) return;
  expect_same_bytes(saved.saved.xq, run.saved.xq, "saved xq");
  expect_same_bytes(saved.saved.xq_t, run.saved.xq_t, "saved xq_t");
  expect_same_bytes(saved.saved.wq, run.saved.wq, "saved wq");
  expect_same_bytes(saved.saved.wq_t, run.saved.wq_t, "saved wq_t");
  expect_same_bytes(scratch.scratch.dyq, run.scratch.dyq, "dyq");
  expect_same_bytes(scratch.scratch.dyq_t, run.scratch.dyq_t, "dyq_t");
  const LinearCastStatsCuda s = read_linear_stats_cuda(run.saved, nullptr);
  EXPECT_EQ(float_bits(s.x.scale.scale), float_bits(saved.saved.x_scale.scale));
  EXPECT_EQ(float_bits(s.w.scale.inv_scale), float_bits(saved.saved.w_scale.inv_scale));
  EXPECT_EQ(float_bits(s.dy.scale.scale), float_bits(stats.dy_scale.scale));
  EXPECT_EQ(s.x.counts, saved.saved.x_counts);
  EXPECT_EQ(s.w.counts, saved.saved.w_counts);
  EXPECT_EQ(s.dy.counts, stats.dy_counts);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, CudaLinearVsCpu,
    ::testing::Combine(::testing::Values(LinearCudaMode::bf16, LinearCudaMode::fp8_plain,
                                         LinearCudaMode::fp8_fused),
                       ::testing::Values(Shape3{512, 512, 256}, Shape3{256, 2048, 512},
                                         Shape3{160, 96, 272})));

// Backward must read only what forward saved: poisoning x and W (NaN bytes) after the forward
// changes nothing, and the saved operands are byte-identical before and after the backward.
TEST(CudaLinear, BackwardConsumesOnlyTheForwardOperands) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const LinearInputs in(1024, 512, 384, testing::fresh_seed());
  for (LinearCudaMode mode : {LinearCudaMode::fp8_plain, LinearCudaMode::fp8_fused}) {
    LinearRunCuda clean(mode, in), poisoned(mode, in);
    clean.forward();
    clean.backward();
    poisoned.forward();
    const HostTensor xq_t = to_host(poisoned.saved.xq_t), wq_t = to_host(poisoned.saved.wq_t);
    fill_bytes_cuda(poisoned.x.view(), 0xFF);
    fill_bytes_cuda(poisoned.w.view(), 0xFF);
    poisoned.backward();
    EXPECT_EQ(mismatches(clean.dx, poisoned.dx), 0u) << linear_cuda_mode_name(mode);
    EXPECT_EQ(mismatches(clean.dw, poisoned.dw), 0u) << linear_cuda_mode_name(mode);
    expect_same_bytes(xq_t.view(), poisoned.saved.xq_t, "xq_t after backward");
    expect_same_bytes(wq_t.view(), poisoned.saved.wq_t, "wq_t after backward");
  }
}

TEST(CudaLinear, NonFiniteInputIsReportedAtTheStepBoundary) {
  FP8LAB_SKIP_WITHOUT_GPU();
  LinearInputs in(64, 32, 48, testing::fresh_seed());
  in.dy.as<std::uint16_t>()[100] = 0x7F80;  // +inf in dY
  LinearRunCuda run(LinearCudaMode::fp8_fused, in);
  run.forward();
  run.backward();  // no throw, no host sync: the flag waits for the step boundary
  try {
    linear_check_finite_cuda(run.config, run.saved, 42, nullptr);
    ADD_FAILURE() << "no error for an inf in dY";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::non_finite);
    EXPECT_NE(e.message().find("blocks.0.mlp.fc.dy"), std::string::npos) << e.what();
  }
}

TEST(CudaLinear, BadShapesAreNamed) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const LinearInputs in(64, 40, 48, testing::fresh_seed());  // K = 40: not a multiple of 16
  LinearRunCuda run(LinearCudaMode::fp8_fused, in);
  try {
    run.forward();
    ADD_FAILURE() << "no error for K = 40 in an FP8 linear";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::shape);
    EXPECT_NE(std::string(e.what()).find("K=40"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
