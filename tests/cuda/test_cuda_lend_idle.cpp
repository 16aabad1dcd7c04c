// Backend::lend_idle on the CUDA backend: an op's workspace placed in lent memory changes no bits
// of its results and takes nothing from the pool (the loss's logits chunk is the model's use of
// it); a region too small for the workspace is simply not used.
#if defined(FP8LAB_HAVE_CUDA)
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/test_data.hpp"
#include "cuda/cuda_test_util.hpp"
#include "fp8lab/backend.hpp"
#include "cuda_backend/cuda_backend.hpp"

namespace fp8lab {
namespace {

constexpr std::int64_t kRows = 512, kDim = 64, kVocab = 1000, kChunk = 128;

struct LossRun {
  LossSums sums;
  HostTensor dx{DType::bf16, {kRows, kDim}};
  HostTensor dw{DType::f32, {kVocab, kDim}};
  std::int64_t peak_growth = 0;  // bytes the run added to the backend's peak
};

class CudaLendIdle : public ::testing::Test {
 protected:
  void SetUp() override {
    FP8LAB_SKIP_WITHOUT_GPU();
    const std::uint64_t seed = testing::fresh_seed();
    gpu_ = make_cuda_backend();
    x_ = gpu_->allocate(MemoryKind::activations, DType::bf16, {kRows, kDim}, "x");
    w_ = gpu_->allocate(MemoryKind::parameters, DType::bf16, {kVocab, kDim}, "w");
    targets_ = gpu_->allocate(MemoryKind::activations, DType::i32, {kRows}, "targets");
    dx_ = gpu_->allocate(MemoryKind::activations, DType::bf16, {kRows, kDim}, "dx");
    dw_ = gpu_->allocate(MemoryKind::gradients, DType::f32, {kVocab, kDim}, "dw");
    // Exactly one bf16 logits chunk, and 256 bytes (one pool alignment unit) less.
    fits_ = gpu_->allocate(MemoryKind::activations, DType::bf16, {kChunk * kVocab}, "fits");
    small_ = gpu_->allocate(MemoryKind::activations, DType::bf16, {kChunk * kVocab - 128}, "small");
    const HostTensor x = testing::random_normal(DType::bf16, {kRows, kDim}, seed, 1);
    const HostTensor w = testing::random_normal(DType::bf16, {kVocab, kDim}, seed, 2, 0.5f);
    std::vector<std::int32_t> t(static_cast<std::size_t>(kRows));
    for (std::size_t i = 0; i < t.size(); ++i)
      t[i] = static_cast<std::int32_t>((i * 7919 + seed) % kVocab);
    t[5] = -1;  // one ignored row
    gpu_->upload(x_, x.view().data);
    gpu_->upload(w_, w.view().data);
    gpu_->upload(targets_, t.data());
  }

  void run(const TensorView& lent, LossRun& r) {
    gpu_->fill_zero(dw_);
    gpu_->synchronize();
    auto* cuda = dynamic_cast<cuda::CudaBackend*>(gpu_.get());
    ASSERT_NE(cuda, nullptr);
    cuda->reset_peak();
    const MemoryStats before = gpu_->memory_stats();
    gpu_->lend_idle(lent);
    r.sums =
        gpu_->cross_entropy(x_, w_, targets_, -1, static_cast<int>(kChunk), 1.0f / kRows, dx_, dw_);
    gpu_->lend_idle({});
    gpu_->synchronize();
    r.peak_growth = gpu_->memory_stats().peak_bytes - before.peak_bytes;
    gpu_->download(dx_, r.dx.view().data);
    gpu_->download(dw_, r.dw.view().data);
  }

  std::unique_ptr<Backend> gpu_;
  Buffer x_, w_, targets_, dx_, dw_, fits_, small_;
};

void expect_same(const LossRun& a, const LossRun& b, const char* what) {
  EXPECT_EQ(std::memcmp(&a.sums.loss_sum, &b.sums.loss_sum, sizeof(double)), 0) << what;
  EXPECT_EQ(a.sums.counted, b.sums.counted) << what;
  EXPECT_EQ(testing::byte_diff(a.dx, b.dx).count, 0) << what << ": dx";
  EXPECT_EQ(testing::byte_diff(a.dw, b.dw).count, 0) << what << ": dw";
}

TEST_F(CudaLendIdle, LogitsChunkInLentMemoryGivesTheSameBitsAndSkipsThePool) {
  FP8LAB_SKIP_WITHOUT_GPU();
  LossRun pooled, lent, too_small;
  run({}, pooled);
  run(fits_, lent);
  run(small_, too_small);
  // The loss rows and sums are small pool workspaces in every run (the lent region holds one
  // chunk exactly); the chunk itself is the difference.
  constexpr std::int64_t kChunkBytes = kChunk * kVocab * 2;  // a multiple of the 256-byte unit
  EXPECT_EQ(pooled.peak_growth - lent.peak_growth, kChunkBytes)
      << "the logits chunk must live in the lent region";
  // Too small for the chunk: the chunk is pooled (the row workspaces may fit the region).
  EXPECT_GE(too_small.peak_growth, kChunkBytes) << "a region too small for the chunk";
  expect_same(pooled, lent, "lent region");
  expect_same(pooled, too_small, "region too small (pool instead)");
  EXPECT_EQ(pooled.sums.counted, kRows - 1);
}

}  // namespace
}  // namespace fp8lab

#endif  // FP8LAB_HAVE_CUDA
