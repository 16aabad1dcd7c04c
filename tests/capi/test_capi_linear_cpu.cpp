// The C ABI of libfp8lab_linear.so (fp8lab/linear_c.h) on the CPU backend: the same bits as the
// backend's linear op under every recipe at odd shapes, the cast statistics of the C++ layer,
// and every bad argument refused with a status and a message naming the value.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <tuple>

#include "capi/capi_test_util.hpp"
#include "fp8lab/linear.hpp"
#if defined(FP8LAB_HAVE_CUDA)
#include "core/cuda_check.hpp"
#endif

namespace fp8lab {
namespace {

using testing::expect_error;
using testing::last_error;
using testing::LinearHandle;
using testing::make_linear;
using testing::recipe_case;

TEST(CapiLinear, ReportsTheAbiVersionOfItsHeader) {
  EXPECT_EQ(fp8lab_linear_abi_version(), FP8LAB_LINEAR_ABI_VERSION);
}

// The statistics fp8lab/linear_c.h promises, from a direct call of the CPU layer.
testing::AbiStats expected_stats(const testing::RecipeCase& rc, const testing::LinearProblem& p) {
  testing::AbiStats want;
  want.scales.assign(FP8LAB_LINEAR_STATS_LEN, 0.f);
  want.counts.assign(FP8LAB_LINEAR_STATS_LEN, 0);
  if (rc.mode != LinearMode::fp8) return want;
  const std::int64_t m = p.x.shape()[0], k = p.x.shape()[1], n = p.w.shape()[0];
  const LinearConfig config{LinearPrecision::fp8, "linear", rc.fp8};
  LinearSavedHost saved(LinearPrecision::fp8, m, k, n, rc.fp8);
  LinearScratchHost scratch(LinearPrecision::fp8, m, n, rc.fp8);
  HostTensor y(DType::bf16, {m, n}), dx(DType::bf16, {m, k}), dw(DType::f32, {n, k});
  linear_forward_cpu(config, p.x, p.w, y, saved.saved);
  const LinearBackwardStats back =
      linear_backward_cpu(config, saved.saved, p.dy, dx, dw, scratch.scratch);
  const bool per_tensor = rc.fp8.recipe == Fp8Recipe::tensorwise;
  const Fp8Scale scales[] = {saved.saved.x_scale, saved.saved.w_scale, back.dy_scale};
  const CastCounts counts[] = {saved.saved.x_counts, saved.saved.w_counts, back.dy_counts};
  for (std::size_t t = 0; t < 3; ++t) {
    want.scales[3 * t] = scales[t].amax;
    want.scales[3 * t + 1] = per_tensor ? scales[t].scale : 0.f;
    want.scales[3 * t + 2] = per_tensor ? scales[t].inv_scale : 0.f;
    want.counts[3 * t] = counts[t].saturated;
    want.counts[3 * t + 1] = counts[t].underflow;
  }
  return want;
}

using testing::ShapeCase;
class CapiCpuRecipes : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(CapiCpuRecipes, GiveTheBackendsBitsAndTheLayersStatistics) {
  const auto [recipe, m, k, n] = GetParam();
  const testing::RecipeCase& rc = recipe_case(recipe);
  const testing::LinearProblem p(m, k, n, testing::fresh_seed());
  const testing::AbiStats got = testing::expect_abi_matches_backend("cpu", rc, p, nullptr, [] {});
  // The statistics, against a direct call of the layer, before and after the backward.
  const LinearHandle linear = make_linear("cpu", recipe, k, n);
  HostTensor y(DType::bf16, {m, n}), dx(DType::bf16, {m, k}), dw(DType::f32, {n, k});
  fp8lab_linear_saved* saved = nullptr;
  ASSERT_EQ(
      fp8lab_linear_forward(linear.get(), m, p.x.as<void>(), FP8LAB_LINEAR_BF16, p.w.as<void>(),
                            FP8LAB_LINEAR_BF16, y.as<void>(), FP8LAB_LINEAR_BF16, nullptr, &saved),
      FP8LAB_LINEAR_OK)
      << last_error();
  const testing::SavedHandle keep(saved);
  const testing::AbiStats before_backward = testing::read_stats(saved);
  ASSERT_EQ(fp8lab_linear_backward(linear.get(), saved, m, p.dy.as<void>(), FP8LAB_LINEAR_BF16,
                                   dx.as<void>(), FP8LAB_LINEAR_BF16, dw.as<void>(),
                                   FP8LAB_LINEAR_F32, 0, nullptr),
            FP8LAB_LINEAR_OK)
      << last_error();
  const testing::AbiStats want = expected_stats(rc, p);
  EXPECT_EQ(testing::read_stats(saved).scales, want.scales);
  EXPECT_EQ(testing::read_stats(saved).counts, want.counts);
  for (int i = 6; i < FP8LAB_LINEAR_STATS_LEN; ++i) {  // dY's entries wait for the backward
    EXPECT_EQ(before_backward.scales[static_cast<std::size_t>(i)], 0.f) << i;
    EXPECT_EQ(before_backward.counts[static_cast<std::size_t>(i)], 0) << i;
  }
  if (rc.mode == LinearMode::fp8) {
    EXPECT_GT(got.scales[0], 0.f) << "x's amax";
  }
  if (rc.fp8.recipe == Fp8Recipe::tensorwise && rc.mode == LinearMode::fp8) {
    // Rows 2^20 apart in magnitude: the small rows flush to zero under one scale.
    EXPECT_GT(want.counts[1], 0) << "x's underflow count";
  }
}

// The shapes of both backends, and odd ones the bf16 recipe takes (FP8 recipes: multiples of 16).
INSTANTIATE_TEST_SUITE_P(OddButLegalShapes, CapiCpuRecipes,
                         ::testing::ValuesIn(testing::legal_shape_cases(
                             {ShapeCase{"bf16", 37, 53, 29}, ShapeCase{"bf16", 1, 130, 7},
                              ShapeCase{"rowwise", 48, 80, 112}})),
                         testing::shape_case_test_name);

TEST(CapiLinearErrors, CreateNamesTheBadArgument) {
  fp8lab_linear* p = nullptr;
  expect_error(fp8lab_linear_create(nullptr, "bf16", 16, 16, &p), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"backend is NULL"});
  expect_error(fp8lab_linear_create("cpu", nullptr, 16, 16, &p), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"recipe is NULL"});
  expect_error(fp8lab_linear_create("cpu", "bf16", 16, 16, nullptr),
               FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"out is NULL"});
  expect_error(fp8lab_linear_create("tpu", "bf16", 16, 16, &p), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"unknown backend 'tpu'"});
  expect_error(fp8lab_linear_create("cpu", "mxfp8", 16, 16, &p), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"unknown recipe 'mxfp8'"});
  expect_error(fp8lab_linear_create("cpu", "bf16", 0, 16, &p), FP8LAB_LINEAR_E_SHAPE,
               {"in_features 0"});
  expect_error(fp8lab_linear_create("cpu", "bf16", 16, -3, &p), FP8LAB_LINEAR_E_SHAPE,
               {"out_features -3"});
  expect_error(fp8lab_linear_create("cpu", "blockwise", 200, 128, &p), FP8LAB_LINEAR_E_SHAPE,
               {"K (input features) is 200", "128"});
  expect_error(fp8lab_linear_create("cpu", "rowwise", 16, 40, &p), FP8LAB_LINEAR_E_SHAPE,
               {"N (output features) is 40", "16"});
  EXPECT_EQ(p, nullptr);
}

TEST(CapiLinearErrors, CudaBackendSaysWhyItCannotRun) {
#if defined(FP8LAB_HAVE_CUDA)
  if (cuda_available()) GTEST_SKIP() << "a usable GPU is present: the cuda backend starts";
#endif
  fp8lab_linear* p = nullptr;
  expect_error(fp8lab_linear_create("cuda", "tensorwise", 64, 64, &p), FP8LAB_LINEAR_E_CUDA,
               {"backend cuda"});
  EXPECT_EQ(p, nullptr);
}

// One linear and host buffers of a [48, 32] x [64, 32] problem for the error tests.
struct SmallCase {
  static constexpr std::int64_t m = 48, k = 32, n = 64;
  LinearHandle linear;
  testing::LinearProblem p{m, k, n, 7};
  HostTensor y{DType::bf16, {m, n}}, dx{DType::bf16, {m, k}}, dw{DType::f32, {n, k}};
  explicit SmallCase(const char* recipe) : linear(make_linear("cpu", recipe, k, n)) {}

  int forward(fp8lab_linear_saved** saved, std::int64_t rows = m, const void* x = nullptr,
              int x_dtype = FP8LAB_LINEAR_BF16) {
    return fp8lab_linear_forward(linear.get(), rows, x ? x : p.x.as<void>(), x_dtype,
                                 p.w.as<void>(), FP8LAB_LINEAR_BF16, y.as<void>(),
                                 FP8LAB_LINEAR_BF16, nullptr, saved);
  }
  testing::SavedHandle saved_forward() {
    fp8lab_linear_saved* s = nullptr;
    EXPECT_EQ(forward(&s), FP8LAB_LINEAR_OK) << last_error();
    return testing::SavedHandle(s);
  }
  int backward(fp8lab_linear* l, fp8lab_linear_saved* s, std::int64_t rows = m,
               const void* dy = nullptr, void* dx_ptr = nullptr, int dw_dtype = FP8LAB_LINEAR_F32,
               int accumulate = 0) {
    return fp8lab_linear_backward(l, s, rows, dy ? dy : p.dy.as<void>(), FP8LAB_LINEAR_BF16,
                                  dx_ptr ? dx_ptr : dx.as<void>(), FP8LAB_LINEAR_BF16,
                                  dw.as<void>(), dw_dtype, accumulate, nullptr);
  }
};

TEST(CapiLinearErrors, ForwardNamesTheBadArgument) {
  SmallCase c("tensorwise");
  fp8lab_linear_saved* saved = nullptr;
  const auto* x = static_cast<const char*>(c.p.x.as<void>());
  expect_error(fp8lab_linear_forward(nullptr, c.m, x, FP8LAB_LINEAR_BF16, c.p.w.as<void>(),
                                     FP8LAB_LINEAR_BF16, c.y.as<void>(), FP8LAB_LINEAR_BF16,
                                     nullptr, &saved),
               FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"linear is NULL"});
  expect_error(c.forward(nullptr), FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"saved is NULL"});
  expect_error(fp8lab_linear_forward(c.linear.get(), c.m, nullptr, FP8LAB_LINEAR_BF16,
                                     c.p.w.as<void>(), FP8LAB_LINEAR_BF16, c.y.as<void>(),
                                     FP8LAB_LINEAR_BF16, nullptr, &saved),
               FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"x is NULL"});
  expect_error(
      fp8lab_linear_forward(c.linear.get(), c.m, x, FP8LAB_LINEAR_BF16, nullptr, FP8LAB_LINEAR_BF16,
                            c.y.as<void>(), FP8LAB_LINEAR_BF16, nullptr, &saved),
      FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"w is NULL"});
  expect_error(c.forward(&saved, c.m, x + 1), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"x (", "not aligned to 2 bytes"});
  expect_error(c.forward(&saved, c.m, x, 7), FP8LAB_LINEAR_E_DTYPE,
               {"x_dtype 7 is not a dtype code"});
  expect_error(c.forward(&saved, c.m, x, FP8LAB_LINEAR_F32), FP8LAB_LINEAR_E_DTYPE,
               {"x_dtype 0 (f32)", "x must be bf16"});
  expect_error(
      fp8lab_linear_forward(c.linear.get(), c.m, x, FP8LAB_LINEAR_BF16, c.p.w.as<void>(),
                            FP8LAB_LINEAR_BF16, c.y.as<void>(), FP8LAB_LINEAR_F32, nullptr, &saved),
      FP8LAB_LINEAR_E_DTYPE, {"y_dtype 0 (f32)", "y must be bf16"});
  expect_error(c.forward(&saved, 0), FP8LAB_LINEAR_E_SHAPE, {"rows 0 must be positive"});
  EXPECT_EQ(saved, nullptr);
}

TEST(CapiLinearErrors, ForwardRefusesRowsTheRecipeCannotTile) {
  SmallCase c("rowwise");
  fp8lab_linear_saved* saved = nullptr;
  expect_error(c.forward(&saved, 20), FP8LAB_LINEAR_E_SHAPE, {"M (tokens) is 20", "16"});
  EXPECT_EQ(saved, nullptr);
}

TEST(CapiLinearErrors, NonFiniteInputNamesTheTensor) {
  for (const char* recipe : {"bf16", "tensorwise", "blockwise"}) {
    SCOPED_TRACE(recipe);
    const std::int64_t m = 128, k = 128, n = 128;
    const LinearHandle linear = make_linear("cpu", recipe, k, n);
    testing::LinearProblem p(m, k, n, 11);
    p.x.as<std::uint16_t>()[5 * k + 9] = float_to_bf16(std::numeric_limits<float>::quiet_NaN());
    HostTensor y(DType::bf16, {m, n});
    fp8lab_linear_saved* saved = nullptr;
    expect_error(fp8lab_linear_forward(linear.get(), m, p.x.as<void>(), FP8LAB_LINEAR_BF16,
                                       p.w.as<void>(), FP8LAB_LINEAR_BF16, y.as<void>(),
                                       FP8LAB_LINEAR_BF16, nullptr, &saved),
                 FP8LAB_LINEAR_E_NON_FINITE, {"linear.x"});
    EXPECT_EQ(saved, nullptr);
  }
}

TEST(CapiLinearErrors, BackwardNamesTheBadArgument) {
  SmallCase c("tensorwise"), other("tensorwise");
  const testing::SavedHandle saved = c.saved_forward();
  const auto* dy = static_cast<const char*>(c.p.dy.as<void>());
  expect_error(c.backward(nullptr, saved.get()), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"linear is NULL"});
  expect_error(c.backward(c.linear.get(), nullptr), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"saved is NULL"});
  expect_error(c.backward(other.linear.get(), saved.get()), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"made by another linear's forward"});
  expect_error(c.backward(c.linear.get(), saved.get(), 32), FP8LAB_LINEAR_E_SHAPE,
               {"rows 32 differs from the forward's 48 rows"});
  expect_error(c.backward(c.linear.get(), saved.get(), c.m, dy + 1),
               FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"dy (", "not aligned to 2 bytes"});
  expect_error(c.backward(c.linear.get(), saved.get(), c.m, dy, nullptr, 5), FP8LAB_LINEAR_E_DTYPE,
               {"dw_dtype 5 is not a dtype code"});
  expect_error(
      fp8lab_linear_backward(c.linear.get(), saved.get(), c.m, dy, FP8LAB_LINEAR_BF16, nullptr,
                             FP8LAB_LINEAR_BF16, c.dw.as<void>(), FP8LAB_LINEAR_F32, 0, nullptr),
      FP8LAB_LINEAR_E_INVALID_ARGUMENT, {"dx is NULL"});
  // Still usable after all that.
  EXPECT_EQ(c.backward(c.linear.get(), saved.get()), FP8LAB_LINEAR_OK) << last_error();
}

TEST(CapiLinearErrors, StatisticsNameTheBadArgument) {
  SmallCase c("tensorwise");
  const testing::SavedHandle saved = c.saved_forward();
  float scales[FP8LAB_LINEAR_STATS_LEN];
  std::int64_t counts[FP8LAB_LINEAR_STATS_LEN];
  expect_error(fp8lab_linear_scales(saved.get(), scales, 8), FP8LAB_LINEAR_E_SHAPE,
               {"n 8 is too small", "9 entries"});
  expect_error(fp8lab_linear_counts(saved.get(), nullptr, 9), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"out is NULL"});
  expect_error(fp8lab_linear_counts(nullptr, counts, 9), FP8LAB_LINEAR_E_INVALID_ARGUMENT,
               {"saved is NULL"});
}

TEST(CapiLinear, DestroyTakesNull) {
  EXPECT_EQ(fp8lab_linear_destroy(nullptr), FP8LAB_LINEAR_OK);
  EXPECT_EQ(fp8lab_linear_saved_destroy(nullptr), FP8LAB_LINEAR_OK);
}

TEST(CapiLinear, LastErrorIsPerThread) {
  fp8lab_linear* p = nullptr;
  ASSERT_NE(fp8lab_linear_create("cpu", "mxfp8", 16, 16, &p), FP8LAB_LINEAR_OK);
  std::string other_thread;
  std::thread([&] {
    EXPECT_NE(fp8lab_linear_create("tpu", "bf16", 16, 16, &p), FP8LAB_LINEAR_OK);
    other_thread = last_error();
  }).join();
  EXPECT_NE(other_thread.find("unknown backend 'tpu'"), std::string::npos) << other_thread;
  EXPECT_NE(last_error().find("unknown recipe 'mxfp8'"), std::string::npos) << last_error();
}

}  // namespace
}  // namespace fp8lab
