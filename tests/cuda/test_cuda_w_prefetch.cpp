// The FP8 linears' W casts made ahead of their forwards (Backend::prepare_fp8_weights, the CUDA
// backend's cuda_linear_prepare.cpp; docs/perf-notes.md v28):
// - the whole model gives the same loss bits and gradient bytes with the casts made a block
//   ahead and with each made beside its own linear, and every FP8 forward of the training and
//   evaluation passes took its cast from a hint (none under bf16); the peak grows by at most
//   two blocks' casts (Wq and Wqᵀ of the FP8 linears, with their metas), held early: while
//   block l's attention runs, the casts of its own later linears and block l + 1's wait;
// - a hint only serves the W and the name it was given for: a linear of another name casts
//   its own W, with the same bytes; a hint no linear took is dropped by the next hint of the
//   same W, and a backend destroyed with hints pending waits for them.
#if defined(FP8LAB_HAVE_CUDA)
#include <cstring>
#include <utility>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "cuda/model_ab.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/model.hpp"
#include "nn/cuda_backend.hpp"

namespace fp8lab {
namespace {

struct PrefetchCase {
  PrecisionPolicy policy;
  bool recompute;
};

class CudaWPrefetchModel : public ::testing::TestWithParam<PrefetchCase> {};

TEST_P(CudaWPrefetchModel, IsBitIdenticalAndEveryForwardTakesItsCast) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const PrefetchCase pc = GetParam();
  PrecisionConfig p;
  p.policy = pc.policy;
  p.mlp_recompute = pc.recompute;
  const std::uint64_t seed = testing::fresh_seed();
  constexpr std::int64_t kLayers = 3;
  const ModelConfig c = testing::ab_model(kLayers);
  const std::int64_t m = testing::kAbBatch * c.seq_len;
  testing::ModelRun runs[2];
  std::int64_t taken[2] = {0, 0};
  for (int ahead = 0; ahead < 2; ++ahead) {
    auto backend = make_cuda_backend();
    auto* gpu = dynamic_cast<cuda::CudaBackend*>(backend.get());
    ASSERT_NE(gpu, nullptr);
    gpu->set_w_prefetch(ahead == 1);
    GptModel model(c, p, testing::kAbBatch, *backend);
    runs[ahead] = testing::run_two_batches_and_evaluate(
        model, seed, testing::random_tokens(m, c.vocab_size, seed, 1),
        testing::random_tokens(m, c.vocab_size, seed, 2), 64);
    taken[ahead] = gpu->w_casts_taken_ahead();
  }
  testing::expect_bit_identical(runs[0], runs[1]);
  EXPECT_EQ(taken[0], 0);
  // W [N, K] of qkv, attn.proj, fc, mlp.proj in units of D²; each cast is Wq and Wqᵀ (N·K
  // bytes each) and three 48-byte metas, every piece rounded up to 256 bytes.
  const std::pair<BlockLinear, std::int64_t> linears[] = {{BlockLinear::attn_qkv, 3},
                                                          {BlockLinear::attn_proj, 1},
                                                          {BlockLinear::mlp_fc, 4},
                                                          {BlockLinear::mlp_proj, 4}};
  int fp8_linears = 0;
  std::int64_t block_casts = 0;
  for (const auto& [which, units] : linears) {
    if (linear_mode_for(p, which) != LinearMode::fp8) continue;
    ++fp8_linears;
    block_casts += 2 * units * c.d_model * c.d_model + 3 * 256;
  }
  EXPECT_LE(runs[1].peak_bytes, runs[0].peak_bytes + 2 * block_casts)
      << "the casts made ahead hold more than two blocks'";
  // Two training forwards and one evaluation; the MLP recompute's forwards take none.
  EXPECT_EQ(taken[1], 3 * kLayers * fp8_linears);
}

INSTANTIATE_TEST_SUITE_P(Policies, CudaWPrefetchModel,
                         ::testing::Values(PrefetchCase{PrecisionPolicy::bf16, false},
                                           PrefetchCase{PrecisionPolicy::fp8_mlp, false},
                                           PrefetchCase{PrecisionPolicy::fp8_mlp, true},
                                           PrefetchCase{PrecisionPolicy::fp8_linears, false},
                                           PrefetchCase{PrecisionPolicy::fp8_linears, true}),
                         [](const auto& param_info) {
                           return testing::policy_case_name(param_info.param.policy,
                                                            param_info.param.recompute);
                         });

// One FP8 linear forward + backward on `backend`; its output, dX and dW on the host.
struct LinearOutputs {
  HostTensor y, dx, dw;
};
LinearOutputs run_linear(Backend& backend, const DeviceTensor& x, const DeviceTensor& w,
                         const DeviceTensor& dy, const char* name) {
  const std::int64_t m = x.view().shape[0], k = x.view().shape[1], n = w.view().shape[0];
  DeviceTensor y(DType::bf16, {m, n}), dx(DType::bf16, {m, k}), dw(DType::f32, {n, k});
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  backend.fill_zero(dw.view());
  auto ctx = backend.linear_forward(LinearMode::fp8, x.view(), w.view(), y.view(), name);
  backend.linear_backward(*ctx, dy.view(), dx.view(), dw.view());
  backend.synchronize();
  return {to_host(y.view()), to_host(dx.view()), to_host(dw.view())};
}

void expect_same_bytes(const HostTensor& a, const HostTensor& b, const char* what) {
  ASSERT_EQ(a.nbytes(), b.nbytes()) << what;
  EXPECT_EQ(std::memcmp(a.view().data, b.view().data, a.nbytes()), 0) << what;
}

TEST(CudaWPrefetch, AHintServesOnlyItsWeightAndNameAndStaleHintsAreDropped) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 256, k = 128, n = 192;
  const DeviceTensor x = to_device(testing::random_normal(DType::bf16, {m, k}, seed, 1));
  const DeviceTensor w = to_device(testing::random_normal(DType::bf16, {n, k}, seed, 2));
  const DeviceTensor dy = to_device(testing::random_normal(DType::bf16, {m, n}, seed, 3));
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());  // the copies land before the backend's stream
  auto plain_backend = make_cuda_backend();
  const LinearOutputs plain = run_linear(*plain_backend, x, w, dy, "lin");

  auto backend = make_cuda_backend();
  auto* gpu = dynamic_cast<cuda::CudaBackend*>(backend.get());
  ASSERT_NE(gpu, nullptr);
  const Backend::LinearWeight hint{w.view(), "lin"};
  // Another name: the hint is not taken, the linear casts W itself.
  backend->prepare_fp8_weights({&hint, 1});
  const LinearOutputs other = run_linear(*backend, x, w, dy, "other");
  EXPECT_EQ(gpu->w_casts_taken_ahead(), 0);
  // Hinted again (the first, untaken, is dropped), then taken by its linear.
  backend->prepare_fp8_weights({&hint, 1});
  const LinearOutputs ahead = run_linear(*backend, x, w, dy, "lin");
  EXPECT_EQ(gpu->w_casts_taken_ahead(), 1);
  for (const LinearOutputs* o : {&other, &ahead}) {
    expect_same_bytes(plain.y, o->y, "y");
    expect_same_bytes(plain.dx, o->dx, "dx");
    expect_same_bytes(plain.dw, o->dw, "dw");
  }
  // Nothing left over once taken: the memory in use is back where it was.
  const std::int64_t before = backend->memory_stats().current_bytes;
  backend->prepare_fp8_weights({&hint, 1});
  EXPECT_GT(backend->memory_stats().current_bytes, before);  // the pending cast's blocks
  backend->prepare_fp8_weights({&hint, 1});                  // drops it, holds a new one
  const std::int64_t pending = backend->memory_stats().current_bytes;
  run_linear(*backend, x, w, dy, "lin");
  EXPECT_EQ(gpu->w_casts_taken_ahead(), 2);
  EXPECT_LT(backend->memory_stats().current_bytes, pending);
  // A hint pending when the backend goes: its destructor waits for the cast.
  backend->prepare_fp8_weights({&hint, 1});
  backend.reset();
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
