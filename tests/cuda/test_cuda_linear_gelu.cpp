// The CUDA backend's MLP fc with the GELU carried by its GEMM (Backend::linear_gelu_forward)
// against the same backend's separate ops, and the whole model against the model run with the
// separate ops (SeparateGeluCudaBackend, cuda/model_ab.hpp).
//
// In bf16 the fused forward takes GELU of the fp32 product before the one rounding to bf16; the
// separate ops round the product first. So y differs by bf16 roundings: relative Frobenius
// within 4e-3 (test_cuda_gemm.cpp's bf16 bound), in about a third of the elements. What the
// linear saves is the separate ops' bits. FP8 linears (and an FP8 consumer's amax) take the
// separate ops: the same bits.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <string>
#include <vector>

#include "cuda/model_ab.hpp"
#include "cuda_test_util.hpp"
#include "fp8lab/backend.hpp"
#include "cuda_backend/cuda_backend.hpp"

namespace fp8lab {
namespace {

constexpr double kBf16Bound = 4e-3;

struct Differences {
  double relative_frobenius;
  std::int64_t differing;  // elements whose bits differ
};

Differences compare(const TensorView& got, const TensorView& want) {
  const HostTensor g = to_host(got), w = to_host(want);
  Differences d{testing::relative_frobenius(g.view(), w.view()), 0};
  const auto* a = g.as<const std::uint16_t>();
  const auto* b = w.as<const std::uint16_t>();
  for (std::int64_t i = 0; i < g.numel(); ++i) d.differing += a[i] != b[i] ? 1 : 0;
  return d;
}

// The ops the backend timed since timing was switched on (in order), and timing off again.
std::vector<std::string> timed_ops(cuda::CudaBackend& backend) {
  backend.set_op_timing(false);
  std::vector<std::string> names;
  for (const cuda::OpTime& t : backend.take_op_times()) names.push_back(t.name);
  return names;
}

// fc [m, k] -> [m, n] with GELU.
class CudaLinearGelu : public ::testing::TestWithParam<LinearMode> {
 protected:
  static constexpr std::int64_t m = 256, k = 128, n = 384;
};

TEST_P(CudaLinearGelu, MatchTheSeparateOps) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const LinearMode mode = GetParam();
  const bool bf16 = mode == LinearMode::bf16;
  const std::uint64_t seed = testing::fresh_seed();
  auto gpu = make_cuda_backend();
  auto* cuda = dynamic_cast<cuda::CudaBackend*>(gpu.get());
  ASSERT_NE(cuda, nullptr);
  const DeviceTensor x = to_device(testing::random_normal(DType::bf16, {m, k}, seed, 1).view());
  const DeviceTensor fc_w =
      to_device(testing::random_normal(DType::bf16, {n, k}, seed, 2, 0.15f).view());

  // Fused (f) and separate (s).
  DeviceTensor pre_f = testing::poisoned_device(DType::bf16, {m, n});
  DeviceTensor y_f = testing::poisoned_device(DType::bf16, {m, n});
  DeviceTensor pre_s = testing::poisoned_device(DType::bf16, {m, n});
  DeviceTensor y_s = testing::poisoned_device(DType::bf16, {m, n});
  cuda->set_op_timing(true);  // which ops each fused call ran
  auto fc_f = gpu->linear_gelu_forward(mode, x.view(), fc_w.view(), pre_f.view(), y_f.view(), "fc");
  const std::vector<std::string> forward_ops = timed_ops(*cuda);
  auto fc_s = gpu->linear_forward(mode, x.view(), fc_w.view(), pre_s.view(), "fc");
  gpu->gelu_forward(pre_s.view(), y_s.view());
  gpu->synchronize();

  const Differences pre = compare(pre_f.view(), pre_s.view());
  const Differences y = compare(y_f.view(), y_s.view());
  std::fprintf(stderr, "%s: pre %.3g (%lld differ), y %.3g (%lld differ) of %lld\n",
               bf16 ? "bf16" : "fp8", pre.relative_frobenius, static_cast<long long>(pre.differing),
               y.relative_frobenius, static_cast<long long>(y.differing),
               static_cast<long long>(m * n));
  using Ops = std::vector<std::string>;
  if (!bf16) {  // the Backend defaults: the separate ops and their bits
    // The FP8 linear's phases are timed as parts of its op (PhaseTimers, cuda_linear_op.cpp).
    EXPECT_EQ(forward_ops, (Ops{"linear_forward fp8: x cast", "linear_forward fp8: W wait",
                                "linear_forward fp8: GEMM", "linear_forward fp8", "gelu_forward"}));
    EXPECT_EQ(pre.differing + y.differing, 0);
    return;
  }
  EXPECT_EQ(forward_ops, (Ops{"linear_forward bf16 +gelu"}));
  EXPECT_LT(pre.relative_frobenius, kBf16Bound);  // bit-equal on the H200 (0 differ)
  EXPECT_LT(y.relative_frobenius, kBf16Bound);
  // GELU of the unrounded product lands on another bf16 value for a share of the elements
  // (about a third at these magnitudes; 35% on the H200).
  EXPECT_GT(y.differing, m * n / 20) << "the forward's GELU was not taken of the fp32 product";
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaLinearGelu,
                         ::testing::Values(LinearMode::bf16, LinearMode::fp8),
                         [](const auto& param_info) {
                           return std::string(param_info.param == LinearMode::bf16 ? "bf16"
                                                                                   : "fp8");
                         });

// The whole model, three blocks, two accumulated micro-batches and an evaluation, with the
// GELU in fc's GEMM: the bf16 loss and gradients stay within bf16 roundings of the separate
// ops' (and differ, so the fusion ran); the FP8 MLP takes the separate ops and gives the same
// bits.
TEST(CudaGeluEpilogueModel, StaysWithinRoundingsOfTheSeparateOps) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  struct Case {
    PrecisionPolicy policy;
    bool recompute;
  };
  for (const Case c : {Case{PrecisionPolicy::bf16, false}, Case{PrecisionPolicy::bf16, true},
                       Case{PrecisionPolicy::fp8_mlp, false}}) {
    PrecisionConfig p;
    p.policy = c.policy;
    p.mlp_recompute = c.recompute;
    const testing::ModelRun a = testing::run_gpu_model(p, 3, seed, /*separate_gelu=*/true);
    const testing::ModelRun b = testing::run_gpu_model(p, 3, seed);
    const std::string label = testing::policy_case_name(c.policy, c.recompute);
    if (c.policy != PrecisionPolicy::bf16) {
      testing::expect_bit_identical(a, b, label);
      continue;
    }
    const double grads =
        testing::relative_frobenius(std::vector<double>(b.grads.begin(), b.grads.end()),
                                    std::vector<double>(a.grads.begin(), a.grads.end()));
    std::fprintf(stderr, "%s: loss %.9g vs %.9g, gradients %.3g relative\n", label.c_str(),
                 b.loss, a.loss, grads);
    EXPECT_LT(std::fabs(b.loss - a.loss), 1e-3 * std::fabs(a.loss)) << label;
    EXPECT_LT(std::fabs(b.eval_loss - a.eval_loss), 1e-3 * std::fabs(a.eval_loss)) << label;
    EXPECT_LT(grads, 0.01) << label;  // bf16 against fp32 measures ~0.0035 (tests/model)
    EXPECT_GT(grads, 0.0) << label << ": the fused GELU changed no bit";
  }
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
