// CudaBackend::add, the fused residual add (out = a + b), against the unfused CPU ops it replaces:
// the same bits, on the vector path (n % 8 == 0, aligned) and the scalar one.
#if defined(FP8LAB_HAVE_CUDA)
#include "common/test_data.hpp"
#include "cuda/cuda_test_util.hpp"
#include "fp8lab/backend.hpp"

#include <gtest/gtest.h>

namespace fp8lab {
namespace {

TEST(CudaBackendAdd, FusedResidualAddIsBitIdenticalToCopyThenAdd) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto gpu = make_cuda_backend();
  auto cpu = make_cpu_backend();
  for (const std::int64_t n : {std::int64_t{8 * 4099}, std::int64_t{1}, std::int64_t{12347}}) {
    for (const DType bt : {DType::bf16, DType::f32}) {
      const HostTensor a = testing::random_normal(DType::f32, {n}, seed, 1);
      const HostTensor b = testing::random_normal(bt, {n}, seed, 2);
      HostTensor want(DType::f32, {n});
      cpu->convert(a, want);
      cpu->add_inplace(want, b);
      Buffer da = gpu->allocate(MemoryKind::activations, DType::f32, {n}, "a");
      Buffer db = gpu->allocate(MemoryKind::activations, bt, {n}, "b");
      Buffer dout = gpu->allocate(MemoryKind::activations, DType::f32, {n}, "out");
      gpu->upload(da, a.view().data);
      gpu->upload(db, b.view().data);
      gpu->add(da, db, dout);
      HostTensor got(DType::f32, {n});
      gpu->download(dout, got.view().data);
      const testing::ByteDiff d = testing::byte_diff(want, got);
      EXPECT_EQ(d.count, 0) << "n " << n << ", b " << dtype_name(bt) << ": first differing byte "
                            << d.first;
    }
  }
}

}  // namespace
}  // namespace fp8lab

#endif  // FP8LAB_HAVE_CUDA
