// GemmAlgoChoice::timed: every candidate cuBLASLt accepts is launched several times on the call's
// own operands, so these tests check that the call's result is still one GEMM's (an accumulating
// out gains A·B once, not once per timed launch), that the pick is recorded, and that a picked
// plan is not timed again.
//
// Bounds as test_cuda_gemm.cpp's: f32 outputs differ from the CPU reference (fp32 accumulation)
// only in summation order, 2e-5 relative Frobenius; bf16 outputs add their rounding, 4e-3. An
// out accumulated twice would be ~1 off (A·B is the size of out's start here).
#if defined(FP8LAB_HAVE_CUDA)
#include <cstring>

#include "cuda_test_util.hpp"
#include "fp8lab/gemm.hpp"
#include "fp8lab/gemm_cuda.hpp"

namespace fp8lab {
namespace {

constexpr double kBoundF32 = 2e-5, kBoundBf16 = 4e-3;

TEST(CudaGemmTimed, AccumulatingCallAddsTheProductOnce) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 512, n = 384, k = 1024;
  const HostTensor a = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {n, k}, seed, 2);
  const HostTensor c0 = testing::random_normal(DType::f32, {m, n}, seed, 3, 30.0f);
  HostTensor want(DType::f32, {m, n});
  std::memcpy(want.as<float>(), c0.as<float>(), c0.nbytes());
  gemm_tn_cpu(a.view(), b.view(), want.view(), {1.0f, 1.0f, true});

  CublasLtGemm gemm;
  gemm.set_algo_choice(GemmAlgoChoice::timed);
  const DeviceTensor da = to_device(a.view()), db = to_device(b.view());
  DeviceTensor out = to_device(c0.view());
  gemm.matmul({da.view(), true}, {db.view(), true}, out.view(), {.accumulate = true}, nullptr);
  EXPECT_LT(testing::relative_frobenius(to_host(out.view()).view(), want.view()), kBoundF32);

  // cuBLASLt ranks several algorithms for a shape this size, so the pick was timed.
  ASSERT_EQ(gemm.tuning_records().size(), 1u);
  const GemmTuningRecord& rec = gemm.tuning_records()[0];
  EXPECT_GE(rec.candidates, 2);
  EXPECT_GE(rec.chosen, 0);
  EXPECT_GT(rec.first_ms, 0.0);
  EXPECT_GT(rec.chosen_ms, 0.0);
  EXPECT_LE(rec.chosen_ms, rec.first_ms);  // the heuristic's pick was one of the timed
  EXPECT_NE(rec.gemm.find("[512, 384]"), std::string::npos) << rec.gemm;

  // Second call of the same plan: the picked algorithm, no new timing, one more A·B.
  gemm_tn_cpu(a.view(), b.view(), want.view(), {1.0f, 1.0f, true});
  gemm.matmul({da.view(), true}, {db.view(), true}, out.view(), {.accumulate = true}, nullptr);
  EXPECT_LT(testing::relative_frobenius(to_host(out.view()).view(), want.view()), kBoundF32);
  EXPECT_EQ(gemm.tuning_records().size(), 1u);
  EXPECT_EQ(gemm.cached_plans(), 1u);
}

TEST(CudaGemmTimed, TimedAndHeuristicPicksBothMatchTheReference) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 1024, n = 768, k = 512;
  const HostTensor a = testing::random_normal(DType::bf16, {m, k}, seed, 1);
  const HostTensor b = testing::random_normal(DType::bf16, {n, k}, seed, 2);
  HostTensor want(DType::bf16, {m, n});
  gemm_tn_cpu(a.view(), b.view(), want.view());
  const DeviceTensor da = to_device(a.view()), db = to_device(b.view());
  for (GemmAlgoChoice choice : {GemmAlgoChoice::heuristic, GemmAlgoChoice::timed}) {
    CublasLtGemm gemm;
    gemm.set_algo_choice(choice);
    DeviceTensor out = testing::poisoned_device(DType::bf16, {m, n});
    gemm.matmul({da.view(), true}, {db.view(), true}, out.view(), {}, nullptr);
    EXPECT_LT(testing::relative_frobenius(to_host(out.view()).view(), want.view()), kBoundBf16)
        << gemm_algo_choice_name(choice);
    EXPECT_EQ(gemm.tuning_records().size(), choice == GemmAlgoChoice::timed ? 1u : 0u)
        << gemm_algo_choice_name(choice);
  }
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
