// The C ABI of libfp8lab_linear.so (fp8lab/linear_c.h) on the CUDA backend: the same bits as the
// CUDA backend's linear op under every recipe, on a stream of the caller's; the cast statistics
// of the CPU ABI (the casts are the same bytes on both, tests/cuda/test_cuda_recipes.cpp); the
// pointer checks; the non-finite flags. Skipped, saying why, without a GPU.
#if defined(FP8LAB_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <limits>
#include <string>
#include <tuple>

#include "capi/capi_test_util.hpp"
#include "cuda/cuda_test_util.hpp"

namespace fp8lab {
namespace {

using testing::expect_error;
using testing::last_error;
using testing::LinearHandle;
using testing::make_linear;

// A non-blocking stream of the test's own, as a caller (PyTorch) would hand one in.
struct CallerStream {
  cudaStream_t stream = nullptr;
  CallerStream() { FP8LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~CallerStream() { (void)cudaStreamDestroy(stream); }
  CallerStream(const CallerStream&) = delete;
  CallerStream& operator=(const CallerStream&) = delete;
  void wait() const { FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream)); }
};

using testing::ShapeCase;
class CapiCudaRecipes : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(CapiCudaRecipes, GiveTheBackendsBitsAndTheCpuStatistics) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [recipe, m, k, n] = GetParam();
  const testing::RecipeCase& rc = testing::recipe_case(recipe);
  const testing::LinearProblem p(m, k, n, testing::fresh_seed());
  const CallerStream caller;
  const testing::AbiStats cuda =
      testing::expect_abi_matches_backend("cuda", rc, p, caller.stream, [&] { caller.wait(); });
  const testing::AbiStats cpu = testing::expect_abi_matches_backend("cpu", rc, p, nullptr, [] {});
  EXPECT_EQ(cuda.scales, cpu.scales) << "amax, scale, inv_scale of x, W, dY";
  // The grouped casts count over both layouts on the GPU: only tensorwise counts compare.
  if (rc.fp8.recipe == Fp8Recipe::tensorwise) {
    EXPECT_EQ(cuda.counts, cpu.counts);
  }
}

INSTANTIATE_TEST_SUITE_P(OddButLegalShapes, CapiCudaRecipes,
                         ::testing::ValuesIn(testing::legal_shape_cases()),
                         testing::shape_case_test_name);

TEST(CapiCudaErrors, PointersMustBeWhereTheBackendComputes) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::int64_t m = 32, k = 64, n = 48;
  const testing::LinearProblem p(m, k, n, 3);
  const DeviceTensor dx = to_device(p.x.view()), dw = to_device(p.w.view());
  const DeviceTensor dy(DType::bf16, {m, n});
  HostTensor hy(DType::bf16, {m, n});
  fp8lab_linear_saved* saved = nullptr;

  const LinearHandle on_gpu = make_linear("cuda", "tensorwise", k, n);
  expect_error(fp8lab_linear_forward(on_gpu.get(), m, p.x.as<void>(), FP8LAB_LINEAR_BF16,
                                     dw.view().data, FP8LAB_LINEAR_BF16, dy.view().data,
                                     FP8LAB_LINEAR_BF16, nullptr, &saved),
               FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"x (", "is host memory", "backend cuda"});
  // 8 bytes in: aligned for bf16, not for cuBLASLt.
  const void* x_off = static_cast<const char*>(dx.view().data) + 8;
  expect_error(fp8lab_linear_forward(on_gpu.get(), m - 16, x_off, FP8LAB_LINEAR_BF16,
                                     dw.view().data, FP8LAB_LINEAR_BF16, dy.view().data,
                                     FP8LAB_LINEAR_BF16, nullptr, &saved),
               FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"x (", "not aligned to 16 bytes"});
  expect_error(fp8lab_linear_forward(on_gpu.get(), 24, dx.view().data, FP8LAB_LINEAR_BF16,
                                     dw.view().data, FP8LAB_LINEAR_BF16, dy.view().data,
                                     FP8LAB_LINEAR_BF16, nullptr, &saved),
               FP8LAB_LINEAR_E_SHAPE, {"M (tokens) is 24", "16"});

  const LinearHandle on_cpu = make_linear("cpu", "tensorwise", k, n);
  expect_error(
      fp8lab_linear_forward(on_cpu.get(), m, p.x.as<void>(), FP8LAB_LINEAR_BF16, dw.view().data,
                            FP8LAB_LINEAR_BF16, hy.as<void>(), FP8LAB_LINEAR_BF16, nullptr, &saved),
      FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"w (", "is CUDA device memory", "backend cpu"});
  EXPECT_EQ(saved, nullptr);
}

TEST(CapiCudaErrors, NonFiniteInputRaisesTheFlagOfItsTensor) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::int64_t m = 64, k = 128, n = 96;
  testing::LinearProblem p(m, k, n, 5);
  p.dy.as<std::uint16_t>()[3 * n + 1] = float_to_bf16(std::numeric_limits<float>::infinity());
  const DeviceTensor x = to_device(p.x.view()), w = to_device(p.w.view()),
                     dy = to_device(p.dy.view());
  const DeviceTensor y(DType::bf16, {m, n}), dx(DType::bf16, {m, k}), dw(DType::f32, {n, k});
  const CallerStream caller;
  const LinearHandle linear = make_linear("cuda", "tensorwise", k, n);
  fp8lab_linear_saved* saved = nullptr;
  ASSERT_EQ(fp8lab_linear_forward(linear.get(), m, x.view().data, FP8LAB_LINEAR_BF16, w.view().data,
                                  FP8LAB_LINEAR_BF16, y.view().data, FP8LAB_LINEAR_BF16,
                                  caller.stream, &saved),
            FP8LAB_LINEAR_OK)
      << last_error();
  const testing::SavedHandle keep(saved);
  ASSERT_EQ(fp8lab_linear_backward(linear.get(), saved, m, dy.view().data, FP8LAB_LINEAR_BF16,
                                   dx.view().data, FP8LAB_LINEAR_BF16, dw.view().data,
                                   FP8LAB_LINEAR_F32, 0, caller.stream),
            FP8LAB_LINEAR_OK)
      << last_error();
  const testing::AbiStats s = testing::read_stats(saved);
  EXPECT_EQ(s.counts[2], 0) << "x's flag";
  EXPECT_EQ(s.counts[5], 0) << "W's flag";
  EXPECT_EQ(s.counts[8], 1) << "dY's flag";
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
